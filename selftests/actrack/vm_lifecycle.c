// SPDX-License-Identifier: MIT
/*
 * What the kernel frees, and what it must not:
 *  - a reused pid (forced with a small pid_max) never frees the records of
 *    the new process that got it;
 *  - exec frees the old image's records, and the new image's survive;
 *  - a thread that leaves with SYS_exit, with no library destructor to
 *    clean up after it, has its tracker freed while the process lives on.
 */
#include "vm_util.h"

#define EXEC_ENV	"ACTRACK_VM_EXEC_CHILD"

static uint32_t new_image_task_id = 777;

/* ---------------------------------------------------------------------- */
/* PID reuse                                                               */
/* ---------------------------------------------------------------------- */

static int read_long(const char *path, long *v)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	*v = strtol(buf, NULL, 10);
	return 0;
}

static int write_long(const char *path, long v)
{
	char buf[64];
	int fd = open(path, O_WRONLY | O_CLOEXEC), n, ret = 0;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%ld\n", v);
	if (write(fd, buf, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

#define PID_MAX_PATH "/proc/sys/kernel/pid_max"

FIXTURE(reuse) {
	long saved_pid_max;
	struct actrack_monitor *m;
	struct vm_deaths *ds;
};

FIXTURE_SETUP(reuse)
{
	self->saved_pid_max = 0;
	self->m = NULL;
	self->ds = NULL;
	VM_REQUIRE_MODULE();
	if (geteuid() != 0)
		SKIP(return, "writing pid_max needs root");
	ASSERT_EQ(0, read_long(PID_MAX_PATH, &self->saved_pid_max));
	ASSERT_EQ(0, actrack_monitor_open(0, &self->m));
	self->ds = calloc(1, sizeof(*self->ds));
	ASSERT_NE(NULL, self->ds);
}

FIXTURE_TEARDOWN(reuse)
{
	if (self->saved_pid_max)
		write_long(PID_MAX_PATH, self->saved_pid_max);
	if (self->m)
		actrack_monitor_close(self->m);
	if (self->ds) {
		vm_deaths_free(self->ds);
		free(self->ds);
	}
}

/* Fork until a child gets @want; that one becomes the victim. */
static int victim_with_pid(pid_t want, const struct vm_victim_cfg *cfg,
			   struct vm_victim *v, int *forks)
{
	for (*forks = 1; *forks <= 5000; (*forks)++) {
		/* -EAGAIN: another pid, or fork found the pids all taken. */
		int ret = vm_victim_start_pid(cfg, v, want);

		if (ret != -EAGAIN)
			return ret;
	}
	return -EAGAIN;
}

/*
 * The report of this very process (pid and start time).  Here a pid comes
 * back on purpose, so the report of an earlier process with the same pid
 * is already in @ds: vm_wait_death() would return that one at once, and
 * what the case then reads of the arena would race this process's
 * cleanup (on the debug kernel it lost: 9 records of b still there).
 */
static struct actrack_death *wait_death_of(struct actrack_monitor *m,
					   struct vm_deaths *ds, pid_t pid,
					   uint64_t start_ticks)
{
	uint64_t end = actrack_test_mono_ns() + 10000000000ULL;

	for (;;) {
		uint64_t now = actrack_test_mono_ns();
		int ret;

		for (unsigned int i = 0; i < ds->nr; i++)
			if (ds->d[i].process.pid == (uint32_t)pid &&
			    ds->d[i].process.start_ticks == start_ticks)
				return &ds->d[i];
		if (now >= end)
			return NULL;
		ret = actrack_monitor_dispatch(m, (int)((end - now) / 1000000) +
					       1, vm_keep_death, ds);
		if (ret < 0 && ret != -EINTR && ret != -ENOBUFS)
			return NULL;
	}
}

TEST_F_TIMEOUT(reuse, new_process_keeps_records, 240)
{
	struct vm_victim_cfg cfg = { .threads = 2, .uid = -1 };
	struct vm_map map;
	long pid_max;
	int round, reused = 0;

	VM_SETUP_SKIPPED();

	ASSERT_EQ(0, vm_map_open(&map, -1, false));
	/*
	 * A tiny pid space, so that a pid comes back within a few forks,
	 * milliseconds after its process died, while the kernel's cleanup
	 * for it may still be queued: new pids cycle through [300, pid_max)
	 * (300 is RESERVED_PIDS); pids in use above pid_max stay valid.
	 * Room for two victims of three tasks each and some kernel threads.
	 */
	pid_max = 316;
	ASSERT_EQ(0, write_long(PID_MAX_PATH, pid_max));
	/* Move the allocator into that window first (below 300 a pid only
	 * comes back after a wrap, which skips it). */
	for (int i = 0; i < 1000; i++) {
		pid_t p = fork();

		ASSERT_GE(p, 0);
		if (p == 0)
			_exit(0);
		waitpid(p, NULL, 0);
		if (p >= 300)
			break;
	}

	for (round = 0; round < 10; round++) {
		struct vm_victim a, b;
		struct actrack_death *da;
		int forks, status, kept, left;

		ASSERT_EQ(0, vm_victim_start(&cfg, &a));
		/* Distinct start times need a clock tick (10 ms) between. */
		usleep(30000);
		status = vm_victim_kill(&a, SIGKILL);
		ASSERT_TRUE(WIFSIGNALED(status));
		/*
		 * Get a's pid for b as soon as possible, so that the kernel's
		 * cleanup for a (deferred to a workqueue) races b's attach.
		 */
		if (victim_with_pid(a.pid, &cfg, &b, &forks)) {
			TH_LOG("round %d: pid %d did not come back", round,
			       a.pid);
			continue;
		}
		reused++;
		ASSERT_NE(a.start_ticks, b.start_ticks);
		da = wait_death_of(self->m, self->ds, a.pid, a.start_ticks);
		ASSERT_NE(NULL, da);
		/* Let any late cleanup run before looking. */
		usleep(100000);
		left = vm_count_owned(&map, a.pid, a.start_ticks, 0,
				      ACTRACK_TYPE_ANY);
		kept = vm_count_owned(&map, b.pid, b.start_ticks, 0,
				      ACTRACK_TYPE_THREAD);
		TH_LOG("round %d: pid %d reused after %d forks; old image "
		       "records left %d, new process trackers %d", round,
		       a.pid, forks, left, kept);
		EXPECT_EQ(0, left);
		EXPECT_EQ(3, kept);
		EXPECT_EQ(1, vm_count_owned(&map, b.pid, b.start_ticks, 0,
					    ACTRACK_TYPE_PROCESS));
		/* Its own death frees its own records. */
		status = vm_victim_kill(&b, SIGKILL);
		ASSERT_NE(NULL, wait_death_of(self->m, self->ds, b.pid,
					      b.start_ticks));
		usleep(100000);
		EXPECT_EQ(0, vm_count_owned(&map, b.pid, b.start_ticks, 0,
					    ACTRACK_TYPE_ANY));
	}
	ASSERT_GT(reused, 0) TH_LOG("no pid was reused in 10 rounds");
	vm_map_close(&map);
}

/* ---------------------------------------------------------------------- */
/* exec                                                                    */
/* ---------------------------------------------------------------------- */

static void *exec_worker(void *arg)
{
	actrack_thread_init("old-worker");
	actrack_push_task(111);
	for (;;)
		pause();
	return NULL;
}

/* The new image: attach again, push task 777, report, wait to be killed. */
static int exec_child_main(int ready)
{
	struct actrack_opts o = { .sz = sizeof(o) };

	unsetenv(EXEC_ENV);
	if (actrack_init(&o))
		return 120;
	if (actrack_thread_init("new-main"))
		return 121;
	actrack_push_task(new_image_task_id);
	if (write(ready, "n", 1) != 1)
		return 122;
	for (;;)
		pause();
}

FIXTURE(proc) {
	struct actrack_monitor *m;
	struct vm_deaths *ds;
	struct vm_map map;
};

FIXTURE_SETUP(proc)
{
	self->m = NULL;
	self->ds = NULL;
	self->map.fd = -1;
	VM_REQUIRE_MODULE();
	ASSERT_EQ(0, actrack_monitor_open(0, &self->m));
	self->ds = calloc(1, sizeof(*self->ds));
	ASSERT_NE(NULL, self->ds);
	ASSERT_EQ(0, vm_map_open(&self->map, -1, false));
}

FIXTURE_TEARDOWN(proc)
{
	if (self->map.fd >= 0)
		vm_map_close(&self->map);
	if (self->m)
		actrack_monitor_close(self->m);
	if (self->ds) {
		vm_deaths_free(self->ds);
		free(self->ds);
	}
}

/* Records of (pid, ticks) whose thread has pushed task @task_id. */
static int count_task(struct vm_map *v, uint32_t pid, uint64_t ticks,
		      uint64_t task_id)
{
	struct actrack_thread_copy *tc = malloc(sizeof(*tc));
	struct actrack_arena_iter it;
	uint32_t ref;
	int n = 0;

	if (!tc)
		return -1;
	actrack_arena_iter_init(&it, &v->a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_THREAD, NULL))) {
		if (actrack_arena_copy_thread(&v->a, ref, tc))
			continue;
		if (tc->hdr.owner.pid != pid ||
		    tc->hdr.owner.start_ticks != ticks)
			continue;
		for (uint32_t i = 0; i < tc->nr_slots; i++)
			if (tc->slots[i].type == ACTRACK_ACT_TASK_RUN &&
			    tc->slots[i].object == task_id)
				n++;
	}
	free(tc);
	return n;
}

TEST_F_TIMEOUT(proc, exec_frees_old_image_only, 120)
{
	int ready[2], go[2], status;
	uint64_t ticks;
	pid_t pid;
	char c;

	VM_SETUP_SKIPPED();

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct actrack_opts o = { .sz = sizeof(o) };
		char fd[16];
		pthread_t t;

		close(ready[0]);
		close(go[1]);
		if (actrack_init(&o) || actrack_set_phase(
				ACTRACK_PHASE_MAIN_LOOP_STARTED))
			_exit(100);
		actrack_push_task(111);
		if (pthread_create(&t, NULL, exec_worker, NULL))
			_exit(101);
		usleep(20000);
		if (write(ready[1], "o", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(102);
		snprintf(fd, sizeof(fd), "%d", ready[1]);
		setenv(EXEC_ENV, fd, 1);
		execl("/proc/self/exe", "vm_lifecycle-exec", (char *)NULL);
		_exit(103);
	}
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 20000));
	ASSERT_EQ(0, vm_start_ticks(pid, &ticks));
	ASSERT_EQ(2, count_task(&self->map, pid, ticks, 111));
	ASSERT_EQ(1, vm_count_owned(&self->map, pid, ticks, 0,
				    ACTRACK_TYPE_PROCESS));

	/* exec keeps pid and start time: only the image changes. */
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 20000));
	usleep(100000);
	EXPECT_EQ(0, count_task(&self->map, pid, ticks, 111));
	EXPECT_EQ(1, count_task(&self->map, pid, ticks, new_image_task_id));
	EXPECT_EQ(1, vm_count_owned(&self->map, pid, ticks, 0,
				    ACTRACK_TYPE_THREAD));
	EXPECT_EQ(1, vm_count_owned(&self->map, pid, ticks, 0,
				    ACTRACK_TYPE_PROCESS));
	/* No death was reported for the old image. */
	actrack_monitor_dispatch(self->m, 100, vm_keep_death, self->ds);
	EXPECT_EQ(NULL, vm_find_death(self->ds, pid));

	/* The new image's death is reported, with its own stack. */
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	{
		struct actrack_death *d = vm_wait_death(self->m, self->ds, pid,
							10000);
		const struct actrack_snap_thread *t;

		ASSERT_NE(NULL, d);
		EXPECT_EQ(SIGKILL, d->signal);
		EXPECT_STREQ("vm_lifecycle-exec", d->process.cmdline);
		EXPECT_EQ(ACTRACK_PHASE_LAUNCHED, d->process.phase);
		ASSERT_EQ(1, d->process.nr_threads);
		t = vm_death_thread(d, "new-main");
		ASSERT_NE(NULL, t);
		ASSERT_EQ(1, t->nr_activities);
		EXPECT_EQ(new_image_task_id, t->activities[0].a.object);
	}
	close(ready[0]);
	close(go[1]);
}

/* ---------------------------------------------------------------------- */
/* A thread that leaves with SYS_exit                                      */
/* ---------------------------------------------------------------------- */

static volatile pid_t raw_tid;

static void *raw_exit_thread(void *arg)
{
	actrack_thread_init("raw-exit");
	actrack_push_task(555);
	actrack_push_io_wait(3, 10);
	__atomic_store_n(&raw_tid, gettid(), __ATOMIC_RELEASE);
	/* No pthread_exit, no TLS destructors: the kernel must notice. */
	syscall(SYS_exit, 0);
	return NULL;
}

TEST_F_TIMEOUT(proc, thread_exit_frees_its_tracker, 60)
{
	struct actrack_opts o = { .sz = sizeof(o) };
	uint64_t ticks, t0, t_freed = 0;
	pthread_t t;
	pid_t tid;

	VM_SETUP_SKIPPED();

	ASSERT_EQ(0, actrack_init(&o));
	ASSERT_EQ(ACTRACK_BACKEND_MODULE, actrack_backend());
	ASSERT_EQ(0, vm_start_ticks(getpid(), &ticks));
	actrack_push_task(444);

	t0 = actrack_test_mono_ns();
	ASSERT_EQ(0, pthread_create(&t, NULL, raw_exit_thread, NULL));
	while (!(tid = __atomic_load_n(&raw_tid, __ATOMIC_ACQUIRE)))
		usleep(100);
	/* Gone when the tracker of that tid is gone. */
	while (actrack_test_mono_ns() - t0 < 10000000000ULL) {
		if (!vm_count_owned(&self->map, getpid(), ticks, tid,
				    ACTRACK_TYPE_ANY)) {
			t_freed = actrack_test_mono_ns();
			break;
		}
		usleep(500);
	}
	TH_LOG("thread %d: SYS_exit -> tracker freed in %llu us", tid,
	       t_freed ? (unsigned long long)(t_freed - t0) / 1000 : 0ULL);
	ASSERT_NE(0, t_freed);
	/* The process and its main thread go on. */
	EXPECT_EQ(1, count_task(&self->map, getpid(), ticks, 444));
	EXPECT_EQ(1, vm_count_owned(&self->map, getpid(), ticks, 0,
				    ACTRACK_TYPE_PROCESS));
	EXPECT_EQ(1, vm_count_owned(&self->map, getpid(), ticks, 0,
				    ACTRACK_TYPE_THREAD));
	/* No death report for a thread. */
	actrack_monitor_dispatch(self->m, 100, vm_keep_death, self->ds);
	EXPECT_EQ(NULL, vm_find_death(self->ds, getpid()));
}

/* The exec'ed image lands in main() again: run the child part. */
ACTRACK_HARNESS_ORDER()

int main(int argc, char **argv)
{
	const char *fd = getenv(EXEC_ENV);

	if (fd)
		return exec_child_main(atoi(fd));
	return test_harness_run(argc, argv);
}
