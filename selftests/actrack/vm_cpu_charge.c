// SPDX-License-Identifier: MIT
/*
 * The kernel CPU a process causes is charged to it (issue 25, item 5).
 *
 * A uid that never registers its trackers (ACTRACK_IOC_THREAD) and makes
 * its arena's list loop on a block of its own churns threads from a cgroup
 * capped at 5% of a CPU (cpu.max "5000 100000") on a 64 MiB arena: every
 * batch of its thread exits is then the longest walk there is.  The walks
 * must be paid by the churner (run in its exiting threads, under its
 * cgroup's cap), not by the kernel's workers: over CHURN_SECONDS the
 * kworkers' CPU (utime + stime of every kworker thread in /proc, before
 * and after) stays within the churner's own allowance (5% of the time)
 * plus SLACK_MS for everything else the VM does.
 *
 * The module is reloaded with arena_size=64 MiB for the test and reloaded
 * with its defaults afterwards (as vm_reload leaves it).  Runs in the test
 * VM only, as root; SKIP where there is no cgroup v2 cpu controller.
 */
#include <dirent.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include "vm_util.h"

#define MODULE_NAME	"actrack"
#define CPU_UID		31500
#define ARENA_64M	"arena_size=67108864"
#define CG_ROOT		"/sys/fs/cgroup"
#define CG_DIR		CG_ROOT "/actrack-cpu-charge"
#define CPU_MAX		"5000 100000"
#define CHURN_SECONDS	8
#define ALLOWANCE_MS	(CHURN_SECONDS * 1000 * 5000 / 100000)	/* 400 */
#define SLACK_MS	500
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC	0x63677270
#endif

static int unload_settled(void)
{
	int ret = -EAGAIN, tries = 3000 * actrack_test_slowness();

	/* Up to 30 s (more on a slow kernel): the churner's exit is slow. */
	for (int i = 0; i < tries && (ret == -EAGAIN || ret == -EBUSY); i++) {
		ret = syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK) ?
		      -errno : 0;
		if (ret)
			usleep(10 * 1000);
	}
	return ret;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	n = n == (ssize_t)strlen(s) ? 0 : (n < 0 ? -errno : -EIO);
	close(fd);
	return (int)n;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* Is @word a whole space-separated word of @list? */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/*
 * A cgroup v2 directory capped at CPU_MAX.  Return: NULL, or why not
 * (for the SKIP).
 */
static const char *cgroup_make(void)
{
	static char why[160];
	char buf[512];
	struct statfs sf;
	int ret;

	if (statfs(CG_ROOT, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		if (mount("none", CG_ROOT, "cgroup2", 0, NULL)) {
			snprintf(why, sizeof(why), "cannot mount cgroup2 on "
				 CG_ROOT ": %s", strerror(errno));
			return why;
		}
	}
	if (read_file(CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) ||
	    !has_word(buf, "cpu"))
		return "no cpu controller in " CG_ROOT "/cgroup.controllers";
	ret = write_file(CG_ROOT "/cgroup.subtree_control", "+cpu");
	if (ret) {
		snprintf(why, sizeof(why), "cannot enable +cpu: %s",
			 strerror(-ret));
		return why;
	}
	rmdir(CG_DIR);
	if (mkdir(CG_DIR, 0755)) {
		snprintf(why, sizeof(why), "mkdir " CG_DIR ": %s",
			 strerror(errno));
		return why;
	}
	ret = write_file(CG_DIR "/cpu.max", CPU_MAX);
	if (ret) {
		snprintf(why, sizeof(why), "cpu.max: %s", strerror(-ret));
		return why;
	}
	return NULL;
}

/* utime + stime (clock ticks) of thread @tid if it is a kworker, else 0. */
static uint64_t kworker_ticks(const char *tid)
{
	char path[64], buf[1024], *p, *comm;
	unsigned long long ut = 0, st = 0;
	int field;

	snprintf(path, sizeof(path), "/proc/%s/stat", tid);
	if (read_file(path, buf, sizeof(buf)))
		return 0;
	comm = strchr(buf, '(');
	p = strrchr(buf, ')');
	if (!comm || !p || strncmp(comm + 1, "kworker", 7))
		return 0;
	/* ") S ..." : field 3 is the state; utime and stime are 14, 15. */
	for (field = 2; field < 14 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu %llu", &ut, &st) != 2)
		return 0;
	return ut + st;
}

/*
 * CPU time of every kworker, per pid (kworkers are processes of their
 * own), into @ticks indexed by pid; returns their sum.  A kworker that
 * appears later counts from zero, so a difference of two calls counts
 * every kworker that ran between them.
 */
#define MAX_PID	(1 << 22)

static uint64_t kworkers_sum(uint64_t *ticks)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	uint64_t sum = 0;

	while (d && (e = readdir(d))) {
		long pid = strtol(e->d_name, NULL, 10);
		uint64_t t;

		if (pid <= 0 || pid >= MAX_PID)
			continue;
		t = kworker_ticks(e->d_name);
		ticks[pid] = t;
		sum += t;
	}
	if (d)
		closedir(d);
	return sum;
}

/* The kworkers' CPU since @before was filled, in ms. */
static uint64_t kworkers_ms_since(const uint64_t *before, uint64_t *now)
{
	uint64_t delta = 0;

	kworkers_sum(now);
	for (long pid = 1; pid < MAX_PID; pid++)
		if (now[pid] > before[pid])
			delta += now[pid] - before[pid];
	return delta * 1000 / (uint64_t)sysconf(_SC_CLK_TCK);
}

static void *short_thread(void *arg)
{
	return arg;
}

/*
 * The churner: attaches with the bare ioctl and never registers a
 * tracker, makes its arena's last block link to itself, says so on
 * @ready, waits for the go on @go (the parent moves it into the cgroup
 * first), then starts and joins threads until killed, counting them in
 * *@count (shared memory).
 */
static void churner(int ready, int go, uint64_t *count)
{
	struct actrack_attach at = { 0 };
	struct actrack_arena_iter it;
	struct vm_map map;
	uint32_t ref, last = 0;
	char c;

	if (setgid(CPU_UID) || setuid(CPU_UID))
		_exit(90);
	if (vm_map_open(&map, -1, true) ||
	    ioctl(map.fd, ACTRACK_IOC_ATTACH, &at))
		_exit(91);
	if (map.a.size != 64U << 20)
		_exit(92);
	if (!actrack_arena_alloc(&map.a, ACTRACK_TYPE_LOG, 64))
		_exit(93);
	actrack_arena_iter_init(&it, &map.a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL)))
		last = ref;
	if (!last)
		_exit(94);
	((struct actrack_block *)((char *)map.a.base + last))->next = last;
	if (write(ready, "c", 1) != 1 || read(go, &c, 1) != 1)
		_exit(95);
	for (;;) {
		pthread_t t;

		if (pthread_create(&t, NULL, short_thread, NULL) == 0) {
			pthread_join(t, NULL);
			__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
		}
	}
}

FIXTURE(cpu) {
	bool reloaded;
	bool cgroup;
};

FIXTURE_SETUP(cpu)
{
	const char *why;

	self->reloaded = false;
	self->cgroup = false;
	VM_REQUIRE_MODULE();
	if (!getenv("ACTRACK_IN_VM") || access(vm_module_path(), R_OK))
		SKIP(return, "needs the test VM (ACTRACK_IN_VM, %s)",
		     vm_module_path());
	if (geteuid() != 0)
		SKIP(return, "needs root (cgroups, uids, module reload)");
	why = cgroup_make();
	if (why)
		SKIP(return, "%s", why);
	self->cgroup = true;
	ASSERT_EQ(0, unload_settled());
	self->reloaded = true;
	ASSERT_EQ(0, vm_module_load(ARENA_64M));
}

FIXTURE_TEARDOWN(cpu)
{
	if (self->cgroup)
		rmdir(CG_DIR);
	if (self->reloaded && !unload_settled())
		vm_module_load("");
}

TEST_F_TIMEOUT(cpu, thread_churn_walks_are_charged_to_the_churner, 240)
{
	uint64_t *before, *after, *count, kw_ms, n0, n1, usage = 0;
	int ready[2], go[2], status;
	char buf[512], pidbuf[32], *u;
	pid_t pid;

	VM_SETUP_SKIPPED();
	before = calloc(MAX_PID, sizeof(*before));
	after = calloc(MAX_PID, sizeof(*after));
	ASSERT_NE(NULL, before);
	ASSERT_NE(NULL, after);
	count = mmap(NULL, sizeof(*count), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, count);
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		churner(ready[1], go[0], count);
	}
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 60000));
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	ASSERT_EQ(0, write_file(CG_DIR "/cgroup.procs", pidbuf));

	kworkers_sum(before);
	n0 = __atomic_load_n(count, __ATOMIC_RELAXED);
	ASSERT_EQ(1, write(go[1], "g", 1));
	sleep(CHURN_SECONDS);
	kw_ms = kworkers_ms_since(before, after);
	n1 = __atomic_load_n(count, __ATOMIC_RELAXED);
	if (!read_file(CG_DIR "/cpu.stat", buf, sizeof(buf)) &&
	    (u = strstr(buf, "usage_usec ")))
		usage = strtoull(u + 11, NULL, 10);

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(ready[0]);
	close(go[1]);
	TH_LOG("%d s of churn at 64 MiB from a cgroup at cpu.max %s: %llu "
	       "threads, churner cgroup %llu ms CPU (allowance %d ms); "
	       "kworkers %llu ms CPU (bound %d ms)", CHURN_SECONDS, CPU_MAX,
	       (unsigned long long)(n1 - n0),
	       (unsigned long long)usage / 1000, ALLOWANCE_MS,
	       (unsigned long long)kw_ms, ALLOWANCE_MS + SLACK_MS);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* It churned at all: the walks are what it pays for. */
	EXPECT_LT(0, n1 - n0);
	EXPECT_LE(kw_ms, ALLOWANCE_MS + SLACK_MS);
	munmap(count, sizeof(*count));
	free(before);
	free(after);
}

TEST_HARNESS_MAIN
