// SPDX-License-Identifier: MIT
/*
 * Budgets of arenas and subscriptions, per user namespace.
 *
 * A container whose user namespace host root created (LXD, Docker with
 * userns-remap, systemd-nspawn -U, PrivateUsers=) is its own budget, not
 * root's: it uses up max_arenas_per_user arenas and 64 subscriptions and
 * gets ENOSPC for more, while host root still subscribes, gets its arena
 * and attaches, and its idle arena keeps its death history.  The module is
 * reloaded with max_arenas=8, so the container also fills the whole table:
 * host root is outside max_arenas, and another host user, refused while
 * every arena is in use or holds someone's history, gets one of the
 * container's arenas once they are idle and hold none.
 */
#include <sched.h>
#include "vm_util.h"

#define MODULE_NAME	"actrack"
#define PARAMS		"max_arenas=8 max_arenas_per_user=8"
#define NS_BASE		300000	/* the container's uid 0 on the host */
#define HOST_USER	1000
#define ARENA_UIDS	10	/* inner uids 1..10 each want an arena */
#define SUB_UIDS	8	/* inner uids 1..8 open ... */
#define SUBS_EACH	9	/* ... 9 subscriptions each: 72 > 64 */

/* What the container's processes report (a shared mapping). */
struct shared {
	int layout_err[ARENA_UIDS];	/* errno of LAYOUT (+ mmap), 0: ok */
	int attach_err[ARENA_UIDS];	/* errno of ATTACH where LAYOUT failed */
	int subs_ok, subs_nospc, subs_other;
	int ready[2];			/* a byte per holder in place */
	int done[2];			/* a byte: every holder in place */
	int release[2];			/* EOF: holders exit */
};

static int unload_settled(void)
{
	int ret = -EAGAIN, tries = 200 * actrack_test_slowness();

	for (int i = 0; i < tries && (ret == -EAGAIN || ret == -EBUSY); i++) {
		ret = syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK) ?
		      -errno : 0;
		if (ret)
			usleep(10 * 1000);
	}
	return ret;
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Hold until the test closes its end of the release pipe. */
static void hold(struct shared *sh)
{
	char c;

	if (write(sh->ready[1], "r", 1) != 1)
		_exit(72);
	if (read(sh->release[0], &c, 1) < 0)
		_exit(73);
	_exit(0);
}

/* Inner uid 1 + @i: its arena, mapped (in use) while it holds. */
static void arena_holder(struct shared *sh, int i)
{
	struct actrack_layout lay;
	struct actrack_attach at;
	int fd;

	if (setgid(1 + i) || setuid(1 + i))
		_exit(70);
	fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		_exit(71);
	sh->layout_err[i] = ioctl(fd, ACTRACK_IOC_LAYOUT, &lay) ? errno : 0;
	if (!sh->layout_err[i] &&
	    mmap(NULL, lay.arena_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)lay.arena_offset) == MAP_FAILED)
		sh->layout_err[i] = 1000 + errno;
	if (sh->layout_err[i]) {
		memset(&at, 0, sizeof(at));
		sh->attach_err[i] = ioctl(fd, ACTRACK_IOC_ATTACH, &at) ?
				    errno : 0;
	}
	hold(sh);
}

/* Inner uid 1 + @i: SUBS_EACH subscriptions, held. */
static void sub_holder(struct shared *sh, int i)
{
	struct actrack_monitor *m;
	int j, r;

	if (setgid(1 + i) || setuid(1 + i))
		_exit(80);
	for (j = 0; j < SUBS_EACH; j++) {
		r = actrack_monitor_open(0, &m);
		if (!r)
			__atomic_fetch_add(&sh->subs_ok, 1, __ATOMIC_SEQ_CST);
		else if (r == -ENOSPC)
			__atomic_fetch_add(&sh->subs_nospc, 1,
					   __ATOMIC_SEQ_CST);
		else
			__atomic_fetch_add(&sh->subs_other, 1,
					   __ATOMIC_SEQ_CST);
	}
	hold(sh);
}

/* Container root: start the holders one at a time, then reap them. */
static int container_main(struct shared *sh)
{
	char c;
	int i;

	if (setgid(0) || setuid(0))
		return 63;
	for (i = 0; i < ARENA_UIDS + SUB_UIDS; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			close(sh->release[1]);
			if (i < ARENA_UIDS)
				arena_holder(sh, i);
			sub_holder(sh, i - ARENA_UIDS);
		}
		if (pid < 0 || read(sh->ready[0], &c, 1) != 1)
			return 64;
	}
	/* Every holder in place: tell the test. */
	if (write(sh->done[1], "c", 1) != 1)
		return 65;
	close(sh->release[1]);
	while (wait(NULL) > 0)
		;
	return 0;
}

static int write_map(pid_t pid, const char *file)
{
	char path[64], map[64];
	int fd, ret;

	snprintf(map, sizeof(map), "0 %d 65536\n", NS_BASE);
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = write(fd, map, strlen(map)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * A user namespace created by host root (so owned by kuid 0), uid 0
 * inside mapped to NS_BASE.  Return: the pid of its first process, which
 * runs container_main() once mapped, or -errno.
 */
static pid_t start_container(struct shared *sh)
{
	int go[2], done[2];
	pid_t pid;
	char c;

	if (pipe2(go, O_CLOEXEC) || pipe2(done, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER))
			_exit(61);
		if (write(done[1], "u", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(62);
		_exit(container_main(sh));
	}
	if (pid < 0)
		return -errno;
	if (read(done[0], &c, 1) != 1 || write_map(pid, "uid_map") ||
	    write_map(pid, "gid_map") || write(go[1], "g", 1) != 1) {
		kill(pid, SIGKILL);
		wait_child(pid);
		return -EIO;
	}
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	return pid;
}

/* LAYOUT of HOST_USER's arena, in a child.  Return: 0 or its errno. */
static int host_user_layout(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct actrack_layout lay;
		int fd;

		if (setgid(HOST_USER) || setuid(HOST_USER))
			_exit(90);
		fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(91);
		_exit(ioctl(fd, ACTRACK_IOC_LAYOUT, &lay) ? errno : 0);
	}
	return pid < 0 ? -1 : wait_child(pid);
}

FIXTURE(budget) {
	bool reloaded;
	struct shared *sh;
};

FIXTURE_SETUP(budget)
{
	self->reloaded = false;
	self->sh = NULL;
	VM_REQUIRE_MODULE();
	if (geteuid() != 0)
		SKIP(return, "needs root to reload the module and map uids");
	/* A fresh table with known limits. */
	ASSERT_EQ(0, unload_settled());
	self->reloaded = true;
	ASSERT_EQ(0, vm_module_load(PARAMS));
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0xff, sizeof(*self->sh));
	self->sh->subs_ok = self->sh->subs_nospc = self->sh->subs_other = 0;
	ASSERT_EQ(0, pipe2(self->sh->ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(self->sh->done, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(self->sh->release, O_CLOEXEC));
}

FIXTURE_TEARDOWN(budget)
{
	if (self->sh && self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
	/* Leave the module as the runner loaded it. */
	if (self->reloaded && !unload_settled())
		vm_module_load("");
	else if (self->reloaded && access(ACTRACK_DEVICE_PATH, F_OK))
		vm_module_load("");
}

TEST_F_TIMEOUT(budget, root_created_namespace_is_its_own_budget, 120)
{
	struct vm_victim_cfg cfg = { .threads = 0, .uid = -1 };
	struct actrack_monitor *m, *m2;
	struct actrack_layout lay;
	struct shared *sh = self->sh;
	struct vm_victim v, v2;
	struct vm_deaths *ds;
	struct actrack_death *d;
	uint64_t end;
	pid_t box;
	char c;
	int i, fd, ret;

	VM_SETUP_SKIPPED();
	ds = calloc(1, sizeof(*ds));
	ASSERT_NE(NULL, ds);
	/* Host root's history: one death in its arena, which then idles. */
	ASSERT_EQ(0, actrack_monitor_open(0, &m));
	ASSERT_EQ(0, vm_victim_start(&cfg, &v));
	ASSERT_EQ(SIGKILL, WTERMSIG(vm_victim_kill(&v, SIGKILL)));
	d = vm_wait_death(m, ds, (uint32_t)v.pid, 60000);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(SIGKILL, d->signal);

	/* The container takes its whole budget, and the whole table. */
	box = start_container(sh);
	ASSERT_LT(0, box);
	ASSERT_EQ(1, read(sh->done[0], &c, 1));
	ASSERT_EQ('c', c);
	for (i = 0; i < ARENA_UIDS; i++) {
		if (i < 8) {
			EXPECT_EQ(0, sh->layout_err[i]) TH_LOG("inner uid %d",
							       1 + i);
		} else {
			EXPECT_EQ(ENOSPC, sh->layout_err[i])
				TH_LOG("inner uid %d", 1 + i);
			EXPECT_EQ(ENOSPC, sh->attach_err[i])
				TH_LOG("inner uid %d", 1 + i);
		}
	}
	EXPECT_EQ(64, sh->subs_ok);
	EXPECT_EQ(SUB_UIDS * SUBS_EACH - 64, sh->subs_nospc);
	EXPECT_EQ(0, sh->subs_other);

	/* Host root: SUBSCRIBE, LAYOUT, its history, ATTACH. */
	ASSERT_EQ(0, actrack_monitor_open(0, &m2));
	fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, ACTRACK_IOC_LAYOUT, &lay));
	EXPECT_EQ(0, lay.uid);
	vm_deaths_free(ds);
	ASSERT_LE(1, actrack_monitor_recent(m2, vm_keep_death, ds));
	d = vm_find_death(ds, (uint32_t)v.pid);
	ASSERT_NE(NULL, d) TH_LOG("host root's death history was evicted");
	EXPECT_EQ(v.start_ticks, d->process.start_ticks);
	EXPECT_EQ(SIGKILL, d->signal);
	ASSERT_EQ(0, vm_victim_start(&cfg, &v2));
	EXPECT_EQ(SIGKILL, WTERMSIG(vm_victim_kill(&v2, SIGKILL)));

	/*
	 * Another host user: every arena is in use, and host root's idle
	 * one holds its history, so nothing may go to make room.
	 */
	EXPECT_EQ(ENOSPC, host_user_layout());

	/* The holders go: their arenas idle with no history, one goes. */
	close(sh->release[1]);
	EXPECT_EQ(0, wait_child(box));
	end = actrack_test_mono_ns() + 60ULL * 1000000000ULL * actrack_test_slowness();
	while ((ret = host_user_layout()) == ENOSPC && actrack_test_mono_ns() < end)
		usleep(20 * 1000);
	EXPECT_EQ(0, ret);
	/* Host root's history is still there. */
	vm_deaths_free(ds);
	ASSERT_LE(1, actrack_monitor_recent(m2, vm_keep_death, ds));
	EXPECT_NE(NULL, vm_find_death(ds, (uint32_t)v.pid));

	close(fd);
	actrack_monitor_close(m2);
	actrack_monitor_close(m);
	vm_deaths_free(ds);
	free(ds);
}

TEST_HARNESS_MAIN
