// SPDX-License-Identifier: MIT
/*
 * One uid, one trust domain: a process of another uid gets its own arena,
 * sees none of uid 0's records and none of its deaths; only a privileged
 * reader may look at another uid's arena, and then read-only.
 */
#include "vm_util.h"

#define OTHER_UID 1000

FIXTURE(uid) {
	struct actrack_monitor *m;
	struct vm_deaths *ds;
};

FIXTURE_SETUP(uid)
{
	self->m = NULL;
	self->ds = NULL;
	VM_REQUIRE_MODULE();
	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	self->ds = calloc(1, sizeof(*self->ds));
	ASSERT_NE(NULL, self->ds);
}

FIXTURE_TEARDOWN(uid)
{
	if (self->m)
		actrack_monitor_close(self->m);
	if (self->ds) {
		vm_deaths_free(self->ds);
		free(self->ds);
	}
}

TEST_F_TIMEOUT(uid, own_arena, 60)
{
	struct vm_victim_cfg cfg = { .threads = 1, .uid = -1 };
	struct vm_victim v0;
	int status;
	pid_t pid;

	VM_SETUP_SKIPPED();

	/* Records of uid 0 that must stay invisible to the other uid. */
	ASSERT_EQ(0, vm_victim_start(&cfg, &v0));

	/* Not attached ourselves: the child starts clean (an inherited
	 * attachment would keep the opener's arena, by design). */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct actrack_opts o = { .sz = sizeof(o) };
		struct actrack_layout lay;
		struct vm_map map;
		int fd, n;

		if (setgid(OTHER_UID) || setuid(OTHER_UID))
			_exit(10);
		fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, ACTRACK_IOC_LAYOUT, &lay))
			_exit(11);
		if (lay.uid != OTHER_UID || lay.flags)
			_exit(12);
		close(fd);
		if (actrack_init(&o) ||
		    actrack_backend() != ACTRACK_BACKEND_MODULE)
			_exit(13);
		actrack_push_task(1001);
		if (vm_map_open(&map, -1, false))
			_exit(14);
		if (((struct actrack_arena_header *)map.a.base)->uid !=
		    OTHER_UID)
			_exit(15);
		/* Nothing of uid 0's process, under any start time. */
		if (vm_count_owned(&map, (uint32_t)v0.pid, ~0ULL, 0,
				   ACTRACK_TYPE_ANY))
			_exit(16);
		/* Our own records are there. */
		n = vm_count_owned(&map, (uint32_t)getpid(), ~0ULL, 0,
				   ACTRACK_TYPE_THREAD);
		if (n != 1)
			_exit(17);
		vm_map_close(&map);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child step %d failed",
						 WEXITSTATUS(status));

	/* And uid 0's arena does not hold the child's records. */
	{
		struct vm_map map;

		ASSERT_EQ(0, vm_map_open(&map, -1, false));
		EXPECT_EQ(0, vm_count_owned(&map, (uint32_t)pid, ~0ULL, 0,
					    ACTRACK_TYPE_ANY));
		EXPECT_EQ(2, vm_count_owned(&map, v0.pid, v0.start_ticks, 0,
					    ACTRACK_TYPE_THREAD));
		vm_map_close(&map);
	}
	vm_victim_kill(&v0, SIGKILL);
}

TEST_F_TIMEOUT(uid, deaths_stay_with_their_uid, 120)
{
	struct vm_victim_cfg root_cfg = { .threads = 1, .uid = -1 };
	struct vm_victim_cfg other_cfg = { .threads = 1, .uid = OTHER_UID };
	struct actrack_monitor *all = NULL;
	struct vm_deaths *all_ds;
	struct vm_victim v0, v1;
	struct actrack_death *d;
	int ready[2], result[2], status;
	char c;
	pid_t pid;

	VM_SETUP_SKIPPED();

	ASSERT_EQ(0, actrack_monitor_open(0, &self->m));
	ASSERT_EQ(0, actrack_monitor_open(ACTRACK_MONITOR_ALL_UIDS, &all));
	all_ds = calloc(1, sizeof(*all_ds));
	ASSERT_NE(NULL, all_ds);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(result));

	/* The other uid's monitor, in a child. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct actrack_monitor *m = NULL, *m2 = NULL;
		struct vm_deaths *ds = calloc(1, sizeof(*ds));
		uint32_t want[2];
		char verdict = 'o';

		close(ready[0]);
		close(result[1]);
		if (!ds || setgid(OTHER_UID) || setuid(OTHER_UID))
			_exit(10);
		if (actrack_monitor_open(ACTRACK_MONITOR_ALL_UIDS, &m2) !=
		    -EPERM)
			_exit(11);
		if (actrack_monitor_open(0, &m))
			_exit(12);
		if (write(ready[1], "r", 1) != 1)
			_exit(13);
		/* The parent sends the two pids: uid 0's, then ours. */
		if (read(result[0], want, sizeof(want)) != sizeof(want))
			_exit(14);
		if (!vm_wait_death(m, ds, want[1], 15000))
			verdict = 'n';	/* ours never came */
		else if (vm_find_death(ds, want[0]))
			verdict = 'x';	/* saw uid 0's */
		else if (vm_find_death(ds, want[1])->uid != OTHER_UID)
			verdict = 'u';
		if (write(ready[1], &verdict, 1) != 1)
			_exit(15);
		_exit(0);
	}
	close(ready[1]);
	close(result[0]);
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 10000));

	ASSERT_EQ(0, vm_victim_start(&root_cfg, &v0));
	ASSERT_EQ(0, vm_victim_start(&other_cfg, &v1));
	{
		uint32_t pids[2] = { (uint32_t)v0.pid, (uint32_t)v1.pid };

		ASSERT_EQ(sizeof(pids), write(result[1], pids, sizeof(pids)));
	}
	/* uid 0's death first, and seen sent, so that it would have
	 * reached the other uid before its own did. */
	vm_victim_kill(&v0, SIGKILL);
	ASSERT_NE(NULL, vm_wait_death(self->m, self->ds, v0.pid, 10000));
	vm_victim_kill(&v1, SIGKILL);
	d = vm_wait_death(all, all_ds, v1.pid, 10000);
	ASSERT_NE(NULL, d) TH_LOG("ALL_UIDS monitor missed uid %d's death",
				  OTHER_UID);
	EXPECT_EQ(OTHER_UID, d->uid);
	EXPECT_NE(NULL, vm_wait_death(all, all_ds, v0.pid, 1000));

	ASSERT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ('o', c) TH_LOG("other uid's monitor: %c (n: missed its own, "
				 "x: saw uid 0's, u: wrong uid)", c);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* Our own-uid monitor did not get the other uid's death. */
	actrack_monitor_dispatch(self->m, 200, vm_keep_death, self->ds);
	EXPECT_EQ(NULL, vm_find_death(self->ds, v1.pid));

	actrack_monitor_close(all);
	vm_deaths_free(all_ds);
	free(all_ds);
}

TEST_F_TIMEOUT(uid, privileged_reader_is_read_only, 60)
{
	struct vm_victim_cfg cfg = { .threads = 2, .uid = OTHER_UID };
	struct actrack_select sel = { .uid = OTHER_UID };
	struct vm_victim v;
	struct vm_map map;
	int fd;
	void *p;

	VM_SETUP_SKIPPED();

	/* A live process of that uid keeps its arena around. */
	ASSERT_EQ(0, vm_victim_start(&cfg, &v));

	ASSERT_EQ(0, vm_map_open(&map, OTHER_UID, false));
	EXPECT_EQ(OTHER_UID, map.lay.uid);
	EXPECT_TRUE(map.lay.flags & ACTRACK_LAYOUT_READONLY);
	EXPECT_EQ(OTHER_UID,
		  ((struct actrack_arena_header *)map.a.base)->uid);
	EXPECT_EQ(3, vm_count_owned(&map, v.pid, v.start_ticks, 0,
				    ACTRACK_TYPE_THREAD));
	EXPECT_EQ(-1, mprotect(map.a.base, map.a.size,
			       PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);

	/* Even on an fd opened for writing, a selected arena maps only
	 * read-only; and a reader cannot register. */
	fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ioctl(fd, ACTRACK_IOC_SELECT, &sel));
	p = mmap(NULL, map.a.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	{
		struct actrack_attach at = { 0 };

		EXPECT_EQ(-1, ioctl(fd, ACTRACK_IOC_ATTACH, &at));
		EXPECT_EQ(EPERM, errno);
	}
	p = mmap(NULL, map.a.size, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	munmap(p, map.a.size);
	close(fd);

	/* The dead victim's records are freed in its own arena. */
	vm_victim_kill(&v, SIGKILL);
	for (int i = 0; i < 1000 && vm_count_owned(&map, v.pid, v.start_ticks,
						   0, ACTRACK_TYPE_ANY); i++)
		usleep(10000);
	EXPECT_EQ(0, vm_count_owned(&map, v.pid, v.start_ticks, 0,
				    ACTRACK_TYPE_ANY));
	vm_map_close(&map);
}

/*
 * Counters are per trust domain too: an unprivileged uid sees its own
 * arena's, root (CAP_SYS_ADMIN) the module-wide sums.
 */
TEST_F_TIMEOUT(uid, stats_are_per_uid, 60)
{
	struct actrack_kstats root = { 0 };
	int status;
	pid_t pid;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, actrack_monitor_open(0, &self->m));
	ASSERT_EQ(0, actrack_monitor_stats(self->m, &root));
	/* Earlier tests ran as uid 0 and died: there is history. */
	ASSERT_LT(0, root.cleanups);

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct actrack_monitor *m;
		struct actrack_kstats st;
		const uid_t fresh = OTHER_UID + 7;	/* no arena yet */

		if (setgid(fresh) || setuid(fresh))
			_exit(10);
		if (actrack_monitor_open(0, &m) || actrack_monitor_stats(m, &st))
			_exit(11);
		/* Nothing of uid 0's: no arena, no cleanups, no reports. */
		if (st.arenas || st.attached || st.cleanups ||
		    st.records_freed || st.reports_sent || st.arena_size)
			_exit(12);
		if (actrack_init(NULL) || actrack_push_task(1) != 1)
			_exit(13);
		if (actrack_monitor_stats(m, &st))
			_exit(14);
		/* Its own arena now, with itself attached. */
		if (st.arenas != 1 || st.attached != 1 || st.cleanups ||
		    st.arena_size == 0 || st.bytes_used == 0)
			_exit(15);
		actrack_monitor_close(m);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
