// SPDX-License-Identifier: MIT
/*
 * Where it lived (issue 28, item 3): a death report names the process's
 * cgroup v2 path as it died, as /proc/PID/cgroup's "0::" line shows it to
 * the reader (the host's cgroup namespace, and a reader's own child
 * namespace rooted beside the process's cgroup), and the systemd unit
 * that path names.  And the OOM kill (item 2): a process alone in a memory
 * cgroup with memory.max is killed by that cgroup's OOM killer, and its
 * report says so with the cgroup, its limit and usage, and its RSS.
 */
#include <sched.h>
#include "vm_util.h"

FIXTURE(cg) {
	struct vm_watch w;
	char slice[128];		/* our cgroup tree, "" if none */
};

/* rmdir @dir's children named in @names (deepest first), then @dir. */
static void cg_remove(const char *dir, const char *const *names, int n)
{
	char path[PATH_MAX];

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		rmdir(path);
	}
	rmdir(dir);
}

/* Children before their parents. */
static const char *const cg_dirs[] = {
	"db.service/worker", "reader", "db.service",
};

FIXTURE_SETUP(cg)
{
	char path[PATH_MAX];
	int ret;

	memset(&self->w, 0, sizeof(self->w));
	self->slice[0] = '\0';
	VM_REQUIRE_MODULE();
	ret = vm_cg_mount();
	if (ret)
		SKIP(return, "no cgroup2: %s", strerror(-ret));
	ASSERT_EQ(0, vm_watch_mine(&self->w));
	snprintf(self->slice, sizeof(self->slice),
		 VM_CG_ROOT "/actrack-cg-%d.slice", (int)getpid());
	ASSERT_EQ(0, mkdir(self->slice, 0755));
	/* Parents first: the reverse of cg_dirs. */
	for (int i = 2; i >= 0; i--) {
		snprintf(path, sizeof(path), "%s/%s", self->slice,
			 cg_dirs[i]);
		ASSERT_EQ(0, mkdir(path, 0755));
	}
}

FIXTURE_TEARDOWN(cg)
{
	vm_watch_close(&self->w);
	if (self->slice[0])
		cg_remove(self->slice, cg_dirs, 3);
}

/*
 * A tracked victim, moved after it attached into the nested cgroup
 * <slice>/db.service/worker, is SIGKILLed: the report names the cgroup it
 * died in, exactly as /proc/PID/cgroup named it just before, and the unit
 * db.service.
 */
TEST_F_TIMEOUT(cg, nested_cgroup_and_unit, 120)
{
	const struct vm_victim_cfg cfg = { .threads = 1, .uid = -1 };
	char dir[PATH_MAX], want[PATH_MAX], proc[PATH_MAX];
	struct actrack_death *d;
	struct vm_victim v;
	int status;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, vm_victim_start(&cfg, &v));
	snprintf(dir, sizeof(dir), "%s/db.service/worker", self->slice);
	ASSERT_EQ(0, vm_cg_move(dir, v.pid));
	/* The host's cgroup namespace: the path below its root. */
	snprintf(want, sizeof(want), "%s", dir + strlen(VM_CG_ROOT));
	ASSERT_EQ(0, vm_cg_of(v.pid, proc, sizeof(proc)));
	ASSERT_STREQ(want, proc);
	status = vm_victim_kill(&v, SIGKILL);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGKILL, WTERMSIG(status));
	d = vm_wait_death(self->w.m, self->w.ds, (uint32_t)v.pid, 10000);
	ASSERT_NE(NULL, d);
	EXPECT_STREQ(want, d->cgroup);
	EXPECT_STREQ("db.service", d->unit);
}

/*
 * A reader in its own cgroup namespace, rooted at <slice>/reader, beside
 * the victim's <slice>/db.service/worker: its report says
 * "/../db.service/worker", as its /proc/PID/cgroup does, and nothing of
 * the path above its root.  Exit codes name the step that failed.
 */
static int ns_reader(const char slice[128], pid_t victim, int ready, int go)
{
	char dir[PATH_MAX], proc[PATH_MAX];
	struct actrack_death *d;
	struct vm_watch w;

	snprintf(dir, sizeof(dir), "%s/reader", slice);
	if (vm_cg_move(dir, 0))
		return 40;
	if (unshare(CLONE_NEWCGROUP))
		return 41;
	if (vm_watch_mine(&w))
		return 42;
	if (vm_cg_of(victim, proc, sizeof(proc)) ||
	    strcmp(proc, "/../db.service/worker"))
		return 43;
	if (write(ready, "r", 1) != 1 || vm_read_n(go, 1, 60000))
		return 44;
	d = vm_wait_death(w.m, w.ds, (uint32_t)victim, 10000);
	if (!d)
		return 45;
	if (strcmp(d->cgroup, proc))
		return 46;
	if (strcmp(d->unit, "db.service"))
		return 47;
	vm_watch_close(&w);
	return 0;
}

TEST_F_TIMEOUT(cg, reader_cgroup_namespace, 120)
{
	const struct vm_victim_cfg cfg = { .threads = 0, .uid = -1 };
	int ready[2], go[2], status;
	char dir[PATH_MAX];
	struct actrack_death *d;
	struct vm_victim v;
	pid_t reader;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, vm_victim_start(&cfg, &v));
	snprintf(dir, sizeof(dir), "%s/db.service/worker", self->slice);
	ASSERT_EQ(0, vm_cg_move(dir, v.pid));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	reader = fork();
	ASSERT_LE(0, reader);
	if (reader == 0)
		_exit(ns_reader(self->slice, v.pid, ready[1], go[0]));
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 20000));
	status = vm_victim_kill(&v, SIGKILL);
	ASSERT_EQ(SIGKILL, WTERMSIG(status));
	ASSERT_EQ(1, write(go[1], "k", 1));
	ASSERT_EQ(reader, waitpid(reader, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("reader step failed");
	/* The host reader, in the same report fan-out, sees it all. */
	d = vm_wait_death(self->w.m, self->w.ds, (uint32_t)v.pid, 10000);
	ASSERT_NE(NULL, d);
	EXPECT_STREQ(dir + strlen(VM_CG_ROOT), d->cgroup);
	close(ready[0]);
	close(go[1]);
}

#define OOM_LIMIT	(48ULL << 20)

/*
 * The OOM victim: into @dir, oom_score_adj 500, attached, then fault in
 * one big mapping (made beforehand: see vm_backtrace's OOM victim) until
 * the cgroup's OOM killer ends it.  Exit codes name the step that failed.
 */
static int oom_victim(const char *dir, int ready)
{
	struct actrack_opts o = { .sz = sizeof(o) };
	size_t len = (size_t)256 << 20;
	int fd;
	char *m;

	if (vm_cg_move(dir, 0))
		return 50;
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "500", 3) != 3)
		return 51;
	close(fd);
	if (actrack_init(&o) || actrack_backend() != ACTRACK_BACKEND_MODULE)
		return 52;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return 53;
	if (write(ready, "r", 1) != 1)
		return 54;
	for (size_t off = 0; off < len; off += 4096)
		m[off] = 1;
	return 55;		/* not killed */
}

TEST_F_TIMEOUT(cg, oom_kill_in_memcg, 300)
{
	const uint64_t batch = 64 * 4096;	/* MEMCG_CHARGE_BATCH pages */
	char dir[PATH_MAX], want[PATH_MAX], limit[32];
	struct actrack_death *d;
	int ready[2], status, ret;
	pid_t pid;

	VM_SETUP_SKIPPED();
	ret = vm_cg_write(VM_CG_ROOT, "cgroup.subtree_control", "+memory");
	if (ret)
		SKIP(return, "no memory controller: %s", strerror(-ret));
	ASSERT_EQ(0, vm_cg_write(self->slice, "cgroup.subtree_control",
				 "+memory"));
	snprintf(dir, sizeof(dir), "%s/db.service", self->slice);
	snprintf(limit, sizeof(limit), "%llu", OOM_LIMIT);
	ASSERT_EQ(0, vm_cg_write(dir, "memory.max", limit));
	/* Best effort: without swap accounting there is no swap to use. */
	vm_cg_write(dir, "memory.swap.max", "0");
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(ready[0]);
		_exit(oom_victim(dir, ready[1]));
	}
	close(ready[1]);
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 60000));
	close(ready[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status)) TH_LOG("exit %d", WEXITSTATUS(status));
	ASSERT_EQ(SIGKILL, WTERMSIG(status));
	d = vm_wait_death(self->w.m, self->w.ds, (uint32_t)pid, 60000);
	ASSERT_NE(NULL, d);
	snprintf(want, sizeof(want), "%s", dir + strlen(VM_CG_ROOT));
	ASSERT_TRUE(d->has_oom);
	EXPECT_STREQ(want, d->oom.memcg);
	EXPECT_EQ(OOM_LIMIT, d->oom.memcg_limit);
	/* At its limit: its charge failed within one batch of it. */
	EXPECT_LE(d->oom.memcg_usage, OOM_LIMIT);
	EXPECT_GE(d->oom.memcg_usage + batch, OOM_LIMIT);
	/* Most of what it was charged is the mapping it faulted in. */
	EXPECT_LE(d->oom.anon, OOM_LIMIT);
	EXPECT_GE(d->oom.anon, OOM_LIMIT / 2);
	/* Its shmem is the mapped arena (about 1 MiB), as the kernel's
	 * own OOM message says: less than what it faulted in. */
	EXPECT_LT(d->oom.shmem, d->oom.anon);
	EXPECT_EQ(500, d->oom.score_adj);
	/* The kernel sent its SIGKILL; it lived in that cgroup. */
	ASSERT_TRUE(d->has_killer);
	EXPECT_EQ(ACTRACK_KILLER_KERNEL, d->killer.kind);
	EXPECT_EQ(SIGKILL, d->killer.signal);
	EXPECT_STREQ(want, d->cgroup);
	EXPECT_STREQ("db.service", d->unit);
}

/* A SIGKILL that is not the OOM killer's is not called an OOM kill. */
TEST_F_TIMEOUT(cg, plain_sigkill_is_no_oom, 120)
{
	const struct vm_victim_cfg cfg = { .threads = 0, .uid = -1 };
	struct actrack_death *d;
	struct vm_victim v;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, vm_victim_start(&cfg, &v));
	ASSERT_EQ(SIGKILL, WTERMSIG(vm_victim_kill(&v, SIGKILL)));
	d = vm_wait_death(self->w.m, self->w.ds, (uint32_t)v.pid, 10000);
	ASSERT_NE(NULL, d);
	EXPECT_FALSE(d->has_oom);
	EXPECT_EQ(0ULL, d->oom.memcg_limit);
}

TEST_HARNESS_MAIN
