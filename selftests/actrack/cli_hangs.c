// SPDX-License-Identifier: MIT
/*
 * `actrack hangs` on arenas written by the library in live processes:
 * a two-thread lock cycle, a cycle across two processes on process-shared
 * mutexes, cycles through a join and through a process wait; waits that
 * keep changing are not hangs; the verdict on a wait: owner unknown (an
 * event, a self-pipe), blocked on an owner that uses CPU, a hang on an
 * owner that shows no progress, stale (a thread not in its wait), dead
 * (the records of a killed process); --pid, --comm, --uid; the --for
 * threshold; and every arena-reading command given a corrupt or
 * truncated arena.
 *
 * The deadlocks are real: the writer threads block in pthread_mutex_lock()
 * after pushing their lock-acquire, and stay blocked until the test kills
 * their process.  Sync state lives in a MAP_SHARED page made before the
 * writers are forked, so that its mutexes have the same address in every
 * process, as pshared locks in a real program's shared mapping do.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "snapshot_helpers.h"
#include "test_harness.h"


struct shared {
	pthread_mutex_t m[2];
	int holds[2];		/* thread i holds m[i] */
	int blocked[2];		/* thread i is about to block */
	int tid[2];
	int pid_to_wait;	/* process-wait target */
};

/* Each deadlock thread: hold m[me], then want m[other]. */
struct role {
	struct shared *sh;
	int me;
	const char *name;
	int join_other;		/* wait by joining thread "other" instead */
	pthread_t other_thread;
	int wait_process;	/* hold m[me], then wait for pid_to_wait */
};

static struct shared *shared_new(void)
{
	pthread_mutexattr_t attr;
	struct shared *sh;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return NULL;
	memset(sh, 0, sizeof(*sh));
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&sh->m[0], &attr);
	pthread_mutex_init(&sh->m[1], &attr);
	pthread_mutexattr_destroy(&attr);
	return sh;
}

static int load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* Poll for *p == v for up to 10 s. */
static int wait_for(int *p, int v)
{
	for (int i = 0; i < 10000; i++) {
		if (load(p) == v)
			return 0;
		usleep(1000);
	}
	return -1;
}

static void *deadlock_thread(void *arg)
{
	struct role *r = arg;
	struct shared *sh = r->sh;
	int other = 1 - r->me;

	actrack_thread_init(r->name);
	store(&sh->tid[r->me], (int)syscall(SYS_gettid));
	pthread_mutex_lock(&sh->m[r->me]);
	actrack_push_lock_held(&sh->m[r->me]);
	store(&sh->holds[r->me], 1);
	if (r->wait_process) {
		actrack_push_process_wait(load(&sh->pid_to_wait));
		store(&sh->blocked[r->me], 1);
		for (;;)
			pause();
	}
	wait_for(&sh->holds[other], 1);
	if (r->join_other) {
		actrack_push_thread_join(load(&sh->tid[other]));
		store(&sh->blocked[r->me], 1);
		pthread_join(r->other_thread, NULL);
	} else {
		actrack_push_lock_acquire(&sh->m[other]);
		store(&sh->blocked[r->me], 1);
		pthread_mutex_lock(&sh->m[other]);	/* never returns */
	}
	return NULL;
}

/* Writer: both roles in one process, as two threads. */
static struct role roles[2];

static void two_threads(void *arg)
{
	struct shared *sh = arg;
	pthread_t t[2];

	roles[0] = (struct role){ .sh = sh, .me = 0, .name = "dl-ab" };
	roles[1] = (struct role){ .sh = sh, .me = 1, .name = "dl-ba" };
	pthread_create(&t[1], NULL, deadlock_thread, &roles[1]);
	pthread_create(&t[0], NULL, deadlock_thread, &roles[0]);
	wait_for(&sh->blocked[0], 1);
	wait_for(&sh->blocked[1], 1);
}

/* Writer: thread 0 joins thread 1, which wants the lock thread 0 holds. */
static void join_cycle(void *arg)
{
	struct shared *sh = arg;
	pthread_t t[2];

	roles[1] = (struct role){ .sh = sh, .me = 1, .name = "locker" };
	pthread_create(&t[1], NULL, deadlock_thread, &roles[1]);
	roles[0] = (struct role){ .sh = sh, .me = 0, .name = "joiner",
				  .join_other = 1, .other_thread = t[1] };
	pthread_create(&t[0], NULL, deadlock_thread, &roles[0]);
	wait_for(&sh->blocked[0], 1);
	wait_for(&sh->blocked[1], 1);
}

/* Writers of the cross-process cycle: one role each. */
static void role_a(void *arg)
{
	struct shared *sh = arg;
	pthread_t t;

	roles[0] = (struct role){ .sh = sh, .me = 0, .name = "xp-a" };
	pthread_create(&t, NULL, deadlock_thread, &roles[0]);
	wait_for(&sh->holds[0], 1);
}

static void role_b(void *arg)
{
	struct shared *sh = arg;
	pthread_t t;

	roles[1] = (struct role){ .sh = sh, .me = 1, .name = "xp-b" };
	pthread_create(&t, NULL, deadlock_thread, &roles[1]);
	wait_for(&sh->holds[1], 1);
}

/* Holds m[0] and waits for process pid_to_wait. */
static void role_waiter(void *arg)
{
	struct shared *sh = arg;
	pthread_t t;

	roles[0] = (struct role){ .sh = sh, .me = 0, .name = "parent-wait",
				  .wait_process = 1 };
	pthread_create(&t, NULL, deadlock_thread, &roles[0]);
	wait_for(&sh->holds[0], 1);
}

FIXTURE(hangs) {
	char path[256];
	struct shared *sh;
	struct writer w[2];
	struct run r;
};

FIXTURE_SETUP(hangs)
{
	memset(self->w, 0, sizeof(self->w));
	memset(&self->r, 0, sizeof(self->r));
	test_path(self->path, sizeof(self->path), "cli-hangs");
	self->sh = shared_new();
	ASSERT_NE(NULL, self->sh);
}

FIXTURE_TEARDOWN(hangs)
{
	if (self->r.out)
		LOG_ON_FAILURE(&self->r);
	run_free(&self->r);
	writer_stop(&self->w[0]);
	writer_stop(&self->w[1]);
	munmap(self->sh, sizeof(*self->sh));
	unlink(self->path);
}

static int hangs(struct run *r, const char *path, const char *env,
		 const char *min_age, const char *interval, bool json)
{
	char *argv[] = { "actrack", "--arena", (char *)path, "hangs", "--for",
			 (char *)min_age, "--interval", (char *)interval,
			 json ? "--json" : NULL, NULL };

	run_free(r);
	return run_cli(r, env, argv);
}

/* The line of @out that starts with @prefix, copied to @buf. */
static char *line_with(const char *out, const char *prefix, char *buf,
		       size_t len)
{
	const char *p = out;

	while (p && *p) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (!strncmp(p, prefix, strlen(prefix))) {
			snprintf(buf, len, "%.*s", (int)n, p);
			return buf;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

TEST_F(hangs, two_thread_deadlock)
{
	char want[256], dl[512];

	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, two_threads,
				  self->sh));
	ASSERT_EQ(0, hangs(&self->r, self->path, NULL, "50ms", "100", false));
	EXPECT_EQ(3, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_NE(NULL, line_with(self->r.out, "DEADLOCK: ", dl, sizeof(dl))) {
		LOG_ON_FAILURE(&self->r);
		return;
	}
	/* The cycle starts at the hung thread with the lowest tid. */
	if (self->sh->tid[0] < self->sh->tid[1])
		snprintf(want, sizeof(want), "DEADLOCK: %d 'dl-ab' -> %d "
			 "'dl-ba' -> %d 'dl-ab'", self->sh->tid[0],
			 self->sh->tid[1], self->sh->tid[0]);
	else
		snprintf(want, sizeof(want), "DEADLOCK: %d 'dl-ba' -> %d "
			 "'dl-ab' -> %d 'dl-ba'", self->sh->tid[1],
			 self->sh->tid[0], self->sh->tid[1]);
	EXPECT_STREQ(want, dl);
	/* Each thread's diagnosis names the lock and its holder. */
	snprintf(want, sizeof(want), "thread %d 'dl-ab' in process %d",
		 self->sh->tid[0], self->w[0].pid);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	snprintf(want, sizeof(want), "for lock %p held by thread %d 'dl-ba' "
		 "in process %d\n", (void *)&self->sh->m[1], self->sh->tid[1],
		 self->w[0].pid);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	snprintf(want, sizeof(want), "for lock %p held by thread %d 'dl-ab' "
		 "in process %d\n", (void *)&self->sh->m[0], self->sh->tid[0],
		 self->w[0].pid);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	/* The origin is symbolized into this file. */
	EXPECT_NE(NULL, strstr(self->r.out, "    at deadlock_thread+0x"));
	EXPECT_NE(NULL, strstr(self->r.out, "cli_hangs.c:"));
	EXPECT_NE(NULL, strstr(self->r.out, "2 hung threads, 1 deadlock ("));
	/* Within one process: no cross-process caveat. */
	EXPECT_EQ(NULL, strstr(self->r.out, "process-shared"));
}

TEST_F(hangs, two_process_deadlock)
{
	char want[256], dl[512];

	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, role_a,
				  self->sh));
	ASSERT_EQ(0, writer_start(&self->w[1], self->path, 8, 0, role_b,
				  self->sh));
	ASSERT_EQ(0, wait_for(&self->sh->blocked[0], 1));
	ASSERT_EQ(0, wait_for(&self->sh->blocked[1], 1));
	ASSERT_EQ(0, hangs(&self->r, self->path, NULL, "50ms", "100", false));
	EXPECT_EQ(3, self->r.status);
	EXPECT_NE(NULL, line_with(self->r.out, "DEADLOCK: ", dl, sizeof(dl))) {
		LOG_ON_FAILURE(&self->r);
		return;
	}
	snprintf(want, sizeof(want), "%d 'xp-a'", self->sh->tid[0]);
	EXPECT_NE(NULL, strstr(dl, want));
	snprintf(want, sizeof(want), "%d 'xp-b'", self->sh->tid[1]);
	EXPECT_NE(NULL, strstr(dl, want));
	/* Edges name both processes and the lock each waits on. */
	snprintf(want, sizeof(want), "%d 'xp-a' (process %d) waits for lock "
		 "%p held by %d 'xp-b' (process %d) [cross-process]",
		 self->sh->tid[0], self->w[0].pid, (void *)&self->sh->m[1],
		 self->sh->tid[1], self->w[1].pid);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	snprintf(want, sizeof(want), "%d 'xp-b' (process %d) waits for lock "
		 "%p held by %d 'xp-a' (process %d) [cross-process]",
		 self->sh->tid[1], self->w[1].pid, (void *)&self->sh->m[0],
		 self->sh->tid[0], self->w[0].pid);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	/* The assumption behind cross-process lock edges is stated. */
	EXPECT_NE(NULL, strstr(self->r.out, "process-shared"));
	EXPECT_NE(NULL, strstr(self->r.out, "same address"));
}

TEST_F(hangs, cycle_through_join)
{
	char want[256], dl[512];

	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, join_cycle,
				  self->sh));
	ASSERT_EQ(0, hangs(&self->r, self->path, NULL, "50ms", "100", false));
	EXPECT_EQ(3, self->r.status);
	EXPECT_NE(NULL, line_with(self->r.out, "DEADLOCK: ", dl, sizeof(dl))) {
		LOG_ON_FAILURE(&self->r);
		return;
	}
	snprintf(want, sizeof(want), "%d 'joiner' waits to join %d 'locker'",
		 self->sh->tid[0], self->sh->tid[1]);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	snprintf(want, sizeof(want), "%d 'locker' waits for lock %p held by "
		 "%d 'joiner'", self->sh->tid[1], (void *)&self->sh->m[0],
		 self->sh->tid[0]);
	EXPECT_NE(NULL, strstr(self->r.out, want));
}

TEST_F(hangs, cycle_through_process_wait)
{
	char want[256];

	/* B's thread will want m[0], which A's thread holds while it waits
	 * for process B to exit: A -> (process B) -> B -> (lock) -> A. */
	ASSERT_EQ(0, writer_start(&self->w[1], self->path, 8, 0, role_b,
				  self->sh));
	self->sh->pid_to_wait = self->w[1].pid;
	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, role_waiter,
				  self->sh));
	ASSERT_EQ(0, wait_for(&self->sh->blocked[0], 1));
	ASSERT_EQ(0, wait_for(&self->sh->blocked[1], 1));
	ASSERT_EQ(0, hangs(&self->r, self->path, NULL, "50ms", "100", false));
	EXPECT_EQ(3, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "DEADLOCK: "));
	snprintf(want, sizeof(want), "waits for process %d to exit; its "
		 "thread %d 'xp-b'", self->w[1].pid, self->sh->tid[1]);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	snprintf(want, sizeof(want), "waits for lock %p held by %d "
		 "'parent-wait' (process %d) [cross-process]",
		 (void *)&self->sh->m[0], self->sh->tid[0], self->w[0].pid);
	EXPECT_NE(NULL, strstr(self->r.out, want));
}

/* ---- waits that change, waits that do not --------------------------- */

static int progress_tid;

static void *reader_making_progress(void *arg)
{
	uint32_t tok;
	uint64_t bytes = 0;

	actrack_thread_init("reader");
	tok = actrack_push_io_wait(7, 0);
	store(&progress_tid, 1);
	for (;;) {
		usleep(2000);
		/* One long read that keeps receiving data. */
		actrack_change(tok, 7, bytes += 512);
	}
	return NULL;
}

static void *poller_pushing_above(void *arg)
{
	static int event;

	actrack_thread_init("poller");
	actrack_push_event_wait(&event);
	store(&progress_tid, 2);
	for (uint64_t i = 0;; i++) {
		uint32_t t = actrack_push_task(i);

		usleep(3000);
		actrack_pop(t);
	}
	return NULL;
}

static void start_thread(void *(*fn)(void *), int want)
{
	pthread_t t;

	pthread_create(&t, NULL, fn, NULL);
	wait_for(&progress_tid, want);
}

static void progressing_reader(void *arg)
{
	start_thread(reader_making_progress, 1);
}

static void busy_poller(void *arg)
{
	start_thread(poller_pushing_above, 2);
}

TEST_F(hangs, long_wait_making_progress_is_not_hung)
{
	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0,
				  progressing_reader, NULL));
	ASSERT_EQ(0, writer_start(&self->w[1], self->path, 8, 0, busy_poller,
				  NULL));
	/* Both waits are older than --for at the second snapshot. */
	ASSERT_EQ(0, hangs(&self->r, self->path, NULL, "50ms", "150", false));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "no hung threads ("));
	EXPECT_EQ(NULL, strstr(self->r.out, "waiting"));
}

/* Reads a pipe that only its own process could write to (a self-pipe):
 * nothing outside can end the wait. */
static void stuck_reader(void *arg)
{
	int p[2];

	if (pipe(p) || dup2(p[0], 9) != 9)
		_exit(12);
	actrack_thread_init("stuck-reader");
	actrack_push_task(5);
	actrack_push_io_wait(9, 4096);
}

TEST_F(hangs, internal_io_wait_is_a_long_wait_owner_unknown)
{
	char want[256];
	char *strict[] = { "actrack", "--arena", self->path, "hangs", "--for",
			   "50ms", "--interval", "100", "--unknown-is-hang",
			   NULL };

	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, stuck_reader,
				  NULL));
	ASSERT_EQ(0, hangs(&self->r, self->path, NULL, "50ms", "100", false));
	EXPECT_EQ(0, self->r.status);
	snprintf(want, sizeof(want), "long waits, owner unknown:\nthread %d "
		 "'stuck-reader' in process %d", self->w[0].pid,
		 self->w[0].pid);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	EXPECT_NE(NULL, strstr(self->r.out, " for fd 9, 4096 bytes\n"));
	EXPECT_NE(NULL, strstr(self->r.out, ", depth 2\n"));
	EXPECT_NE(NULL, strstr(self->r.out, "    verdict: owner-unknown: only "
			       "internal sources can end it: a pipe between "
			       "tracked processes (fd 9)\n"));
	EXPECT_EQ(NULL, strstr(self->r.out, "DEADLOCK"));
	EXPECT_NE(NULL, strstr(self->r.out, "no hung threads, 1 long wait "
			       "with owner unknown ("));
	/* Counted as a hang only when asked. */
	run_free(&self->r);
	ASSERT_EQ(0, run_cli(&self->r, NULL, strict));
	EXPECT_EQ(3, self->r.status);
}

/* poll() and select() on a self-pipe (fd 41) and a socket (fd 40): the
 * shim records one descriptor (poll's first, the pipe; select's highest,
 * the pipe too), but the socket can end the wait: idle. */
static int set_kind;

static void *set_waiter(void *arg)
{
	struct pollfd pf[2] = { { .fd = 41, .events = POLLIN },
				{ .fd = 40, .events = POLLIN } };
	fd_set rd;

	actrack_thread_init("set-waiter");
	actrack_push_io_wait(41, 0);
	store(&progress_tid, 4);
	FD_ZERO(&rd);
	FD_SET(40, &rd);
	FD_SET(41, &rd);
	if (set_kind)
		select(42, &rd, NULL, NULL, NULL);
	else
		poll(pf, 2, -1);
	return arg;
}

static void set_waiter_start(void *arg)
{
	int p[2], sv[2];

	/* Above every descriptor the process has: dup2() closes none. */
	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ||
	    dup2(p[0], 41) != 41 || dup2(sv[0], 40) != 40)
		_exit(12);
	set_kind = arg != NULL;
	start_thread(set_waiter, 4);
}

/* Some thread of @pid is in system call @nr or @alt (the C library may
 * make select() a pselect6, poll() a ppoll); waits up to 60 s. */
static bool in_syscall(pid_t pid, long nr, long alt)
{
	for (int i = 0; i < 600; i++) {
		char path[64], buf[256];
		struct dirent *d;
		DIR *dir;
		bool found = false;

		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		dir = opendir(path);
		while (dir && !found && (d = readdir(dir))) {
			FILE *f;

			if (d->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%.16s/"
				 "syscall", pid, d->d_name);
			f = fopen(path, "r");
			if (f && fgets(buf, sizeof(buf), f))
				found = strtol(buf, NULL, 10) == nr ||
					strtol(buf, NULL, 10) == alt;
			if (f)
				fclose(f);
		}
		if (dir)
			closedir(dir);
		if (found)
			return true;
		usleep(100 * 1000);
	}
	return false;
}

static void set_wait_is_idle(struct __test_metadata *_metadata,
			     FIXTURE_DATA(hangs) *self, bool select_)
{
	char *strict[] = { "actrack", "--arena", self->path, "hangs", "--for",
			   "50ms", "--interval", "100", "--all",
			   "--unknown-is-hang", NULL };
	char mem[64];

	progress_tid = 0;
	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0,
				  set_waiter_start,
				  select_ ? (void *)1 : NULL));
	ASSERT_TRUE(select_ ?
		    in_syscall(self->w[0].pid, SYS_select, SYS_pselect6) :
		    in_syscall(self->w[0].pid, SYS_poll, SYS_ppoll));
	snprintf(mem, sizeof(mem), "/proc/%d/mem", self->w[0].pid);
	if (access(mem, R_OK))
		SKIP(return, "%s is not readable here (ptrace rules)", mem);
	ASSERT_EQ(0, run_cli(&self->r, NULL, strict));
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "    verdict: idle: outside "
			       "input: a socket (fd 40), of 2 descriptors can "
			       "end it\n"));
	EXPECT_EQ(NULL, strstr(self->r.out, "owner-unknown"));
}

TEST_F(hangs, poll_with_a_socket_after_a_self_pipe_is_idle)
{
	set_wait_is_idle(_metadata, self, false);
}

TEST_F(hangs, select_with_a_socket_below_a_self_pipe_is_idle)
{
	set_wait_is_idle(_metadata, self, true);
}

static int the_event;

static void event_waiter(void *arg)
{
	actrack_thread_init("waiter");
	actrack_push_event_wait(&the_event);
}

TEST_F(hangs, threshold_on_a_fixed_clock)
{
	struct actrack_snapshot *s;
	const struct actrack_snap_process *p;
	char env[64], want[128];
	uint64_t t;

	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, event_waiter,
				  NULL));
	ASSERT_EQ(0, actrack_snapshot_take(self->path, ACTRACK_SNAP_ARENA_FILE,
					   &s));
	p = snap_find(s, (uint32_t)self->w[0].pid);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(1u, p->threads[0].nr_activities);
	t = p->threads[0].activities[0].a.time_ns;
	actrack_snapshot_free(s);

	/* 5 s old, threshold 10 s: not yet. */
	snprintf(env, sizeof(env), "ACTRACK_NOW_NS=%llu",
		 (unsigned long long)(t + 5000000000ULL));
	ASSERT_EQ(0, hangs(&self->r, self->path, env, "10s", "20", false));
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "no hung threads (1 thread in 1 "
			       "process; waits older than 10.0 s, unchanged "
			       "over 20 ms)\n"));
	/* 20 s old: a long wait (an event has no owner), its exact age. */
	snprintf(env, sizeof(env), "ACTRACK_NOW_NS=%llu",
		 (unsigned long long)(t + 20000000000ULL));
	ASSERT_EQ(0, hangs(&self->r, self->path, env, "0.25m", "20", false));
	EXPECT_EQ(0, self->r.status);
	snprintf(want, sizeof(want), ": waiting 20.0 s for event %p\n",
		 (void *)&the_event);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	EXPECT_NE(NULL, strstr(self->r.out, "    verdict: owner-unknown: an "
			       "event (semaphore, condition variable): no "
			       "owner is recorded\n"));
	EXPECT_NE(NULL, strstr(self->r.out, "waits older than 15.0 s"));
}

/* ---- owners: progress, none, gone; a thread not in its wait ---------- */

static int count_of(const char *s, const char *what)
{
	int n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s += strlen(what);
	}
	return n;
}

struct owner_sh {
	pthread_mutex_t m;
	int holds, blocked, holder_tid, waiter_tid;
	int spin;		/* the holder uses CPU */
};

static void *holder_thread(void *arg)
{
	struct owner_sh *o = arg;

	actrack_thread_init("holder");
	store(&o->holder_tid, (int)syscall(SYS_gettid));
	pthread_mutex_lock(&o->m);
	actrack_held_add(&o->m, false);
	store(&o->holds, 1);
	for (volatile unsigned long n = 0; load(&o->spin); n++)
		;
	for (;;)
		pause();
	return NULL;
}

static void *lock_waiter(void *arg)
{
	struct owner_sh *o = arg;

	actrack_thread_init("lock-waiter");
	store(&o->waiter_tid, (int)syscall(SYS_gettid));
	wait_for(&o->holds, 1);
	actrack_push_lock_acquire(&o->m);
	store(&o->blocked, 1);
	pthread_mutex_lock(&o->m);	/* never returns */
	return NULL;
}

static void holder_and_waiter(void *arg)
{
	struct owner_sh *o = arg;
	pthread_t t;

	pthread_create(&t, NULL, holder_thread, o);
	pthread_create(&t, NULL, lock_waiter, o);
	wait_for(&o->blocked, 1);
}

static struct owner_sh *owner_sh_new(int spin)
{
	struct owner_sh *o;

	o = mmap(NULL, sizeof(*o), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (o == MAP_FAILED)
		return NULL;
	memset(o, 0, sizeof(*o));
	pthread_mutex_init(&o->m, NULL);
	o->spin = spin;
	return o;
}

TEST_F(hangs, owner_that_uses_cpu_is_progress)
{
	struct owner_sh *o = owner_sh_new(1);
	char *argv[] = { "actrack", "--arena", self->path, "hangs", "--for",
			 "50ms", "--interval", "300", "--all", NULL };
	char want[256];

	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0,
				  holder_and_waiter, o));
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	/* Its CPU time grew over the interval, or (a loaded machine, less
	 * than a tick) it is on a CPU now. */
	snprintf(want, sizeof(want), "    verdict: blocked: waits for lock %p "
		 "held by %d 'holder', which makes progress: it is ",
		 (void *)&o->m, o->holder_tid);
	EXPECT_TRUE(strstr(self->r.out, want) &&
		    (strstr(self->r.out, "it is using CPU\n") ||
		     strstr(self->r.out, "it is running\n")));
	EXPECT_NE(NULL, strstr(self->r.out, "no hung threads ("));
	writer_stop(&self->w[0]);
	munmap(o, sizeof(*o));
}

TEST_F(hangs, owner_without_progress_is_a_hang)
{
	struct owner_sh *o = owner_sh_new(0);
	char want[256];

	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0,
				  holder_and_waiter, o));
	ASSERT_EQ(0, hangs(&self->r, self->path, NULL, "50ms", "100", false));
	EXPECT_EQ(3, self->r.status);
	snprintf(want, sizeof(want), "    verdict: hang: waits for lock %p "
		 "held by %d 'holder', which shows no progress (its activity "
		 "stack and CPU time did not change over 100 ms)\n",
		 (void *)&o->m, o->holder_tid);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	EXPECT_NE(NULL, strstr(self->r.out, "1 hung thread, 0 deadlocks ("));
	/* JSON: the verdict and its chain. */
	ASSERT_EQ(0, hangs(&self->r, self->path, NULL, "50ms", "100", true));
	EXPECT_EQ(3, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "\"verdict\": \"hang\""));
	EXPECT_NE(NULL, strstr(self->r.out, "\"chain\": [\n        {\n"));
	writer_stop(&self->w[0]);
	munmap(o, sizeof(*o));
}

/* Pushed a wait, then left it without popping (a siglongjmp out of the
 * call would), and computes. */
static void left_its_wait(void *arg)
{
	pthread_t t;

	pthread_create(&t, NULL, (void *(*)(void *))arg, NULL);
	wait_for(&progress_tid, 3);
}

static void *computing(void *arg)
{
	actrack_thread_init("computing");
	actrack_push_io_wait(0, 64);
	store(&progress_tid, 3);
	for (volatile unsigned long n = 0;; n++)
		;
	return arg;
}

TEST_F(hangs, thread_not_in_its_wait_is_stale)
{
	char *argv[] = { "actrack", "--arena", self->path, "hangs", "--for",
			 "50ms", "--interval", "100", "--all", NULL };

	progress_tid = 0;
	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0,
				  left_its_wait, (void *)computing));
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "'computing' in process "));
	EXPECT_NE(NULL, strstr(self->r.out, "    verdict: stale-activity: "
			       "stale: the thread is running, not in this "
			       "wait\n"));
	EXPECT_NE(NULL, strstr(self->r.out, "no hung threads ("));
}

TEST_F(hangs, records_of_a_killed_deadlock_are_dead)
{
	char want[128];
	char *argv[] = { "actrack", "--arena", self->path, "hangs", "--for",
			 "50ms", "--interval", "100", "--all", NULL };

	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, two_threads,
				  self->sh));
	snprintf(want, sizeof(want), "stale: process %d no longer runs\n",
		 self->w[0].pid);
	/* SIGKILL: nobody frees a file arena's records. */
	writer_stop(&self->w[0]);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(2, count_of(self->r.out, want));
	EXPECT_EQ(2, count_of(self->r.out, "    verdict: dead: "));
	EXPECT_EQ(NULL, strstr(self->r.out, "DEADLOCK"));
	EXPECT_NE(NULL, strstr(self->r.out, "no hung threads ("));
}

/* dump says what hangs says of records that are stale: the same words,
 * from the same code (verdict.c). */
TEST_F(hangs, dump_says_stale_for_a_thread_not_in_its_wait)
{
	char want[160];
	char *argv[] = { "actrack", "--arena", self->path, "dump", NULL };
	const char *t;
	unsigned int tid = 0;

	progress_tid = 0;
	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0,
				  left_its_wait, (void *)computing));
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	t = strstr(self->r.out, "' depth 1\n");
	while (t && t > self->r.out && strncmp(t, "  thread ", 9))
		t--;
	ASSERT_NE(NULL, t);
	ASSERT_EQ(1, sscanf(t, "  thread %u 'computing'", &tid));
	snprintf(want, sizeof(want), "  thread %u: verdict: stale-activity: "
		 "stale: the thread is running, not in this wait\n", tid);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	EXPECT_EQ(1, count_of(self->r.out, "verdict: "));
}

TEST_F(hangs, dump_says_dead_for_the_records_of_a_killed_process)
{
	char want[128];
	char *argv[] = { "actrack", "--arena", self->path, "dump", NULL };

	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, two_threads,
				  self->sh));
	snprintf(want, sizeof(want), "  verdict: dead: stale: process %d no "
		 "longer runs\n", self->w[0].pid);
	writer_stop(&self->w[0]);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	/* Once for the process, not per thread. */
	EXPECT_EQ(1, count_of(self->r.out, want));
	EXPECT_EQ(1, count_of(self->r.out, "verdict: "));
}

/* A live waiter in a young wait has no verdict in dump: only records
 * that are stale are said to be. */
TEST_F(hangs, dump_says_nothing_of_live_waits)
{
	char *argv[] = { "actrack", "--arena", self->path, "dump", NULL };

	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, two_threads,
				  self->sh));
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(0, count_of(self->r.out, "verdict: "));
	EXPECT_NE(NULL, strstr(self->r.out, "lock-acquire"));
}

/* Its tracker says it lives in another pid namespace (a container of the
 * same uid sharing the arena): our /proc cannot show it. */
static void foreign_waiter(void *arg)
{
	actrack_thread_init("contained");
	actrack_push_io_wait(9, 64);
	actrack__tls.tracker->owner.pid_ns ^= 0x5a5a5a;
}

TEST_F(hangs, wait_in_another_pid_namespace_is_not_a_certain_hang)
{
	char *argv[] = { "actrack", "--arena", self->path, "hangs", "--for",
			 "50ms", "--interval", "100", NULL };

	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0,
				  foreign_waiter, NULL));
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "'contained' in process "));
	/* Our /proc says nothing of it: not "no longer running". */
	EXPECT_EQ(NULL, strstr(self->r.out, "no longer running"));
	EXPECT_NE(NULL, strstr(self->r.out, "    verdict: owner-unknown: in "
			       "another pid namespace: its /proc cannot be "
			       "read\n"));
	EXPECT_NE(NULL, strstr(self->r.out, "no hung threads, 1 long wait "
			       "with owner unknown ("));
}

/* ---- scope -------------------------------------------------------------- */

TEST_F(hangs, scope_by_pid_comm_and_uid)
{
	char pid0[16], pid1[16], uid[16], other[16], want[64];
	char *by_pid[] = { "actrack", "--arena", self->path, "hangs", "--for",
			   "50ms", "-i", "100", "--pid", pid1, NULL };
	char *both[] = { "actrack", "--arena", self->path, "hangs", "--for",
			 "50ms", "-i", "100", "--pid", pid0, "--pid", pid1,
			 NULL };
	char *by_comm[] = { "actrack", "--arena", self->path, "hangs",
			    "--for", "50ms", "-i", "100", "--comm",
			    "no-such-comm", NULL };
	char *by_our_comm[] = { "actrack", "--arena", self->path, "hangs",
				"--for", "50ms", "-i", "100", "--comm",
				"cli_hangs", NULL };
	char *by_uid[] = { "actrack", "--arena", self->path, "hangs", "--for",
			   "50ms", "-i", "100", "--uid", uid, NULL };
	char *by_other_uid[] = { "actrack", "--arena", self->path, "hangs",
				 "--for", "50ms", "-i", "100", "--uid", other,
				 NULL };

	/* Two processes, each with its own two-thread deadlock. */
	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, two_threads,
				  self->sh));
	ASSERT_EQ(0, writer_start(&self->w[1], self->path, 8, 0, join_cycle,
				  shared_new()));
	snprintf(pid0, sizeof(pid0), "%d", self->w[0].pid);
	snprintf(pid1, sizeof(pid1), "%d", self->w[1].pid);
	snprintf(uid, sizeof(uid), "%u", (unsigned)geteuid());
	snprintf(other, sizeof(other), "%u", (unsigned)geteuid() + 1);
	ASSERT_EQ(0, run_cli(&self->r, NULL, by_pid));
	EXPECT_EQ(3, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "2 hung threads, 1 deadlock ("));
	snprintf(want, sizeof(want), "in process %d", self->w[0].pid);
	EXPECT_EQ(NULL, strstr(self->r.out, want));
	run_free(&self->r);
	ASSERT_EQ(0, run_cli(&self->r, NULL, both));
	EXPECT_NE(NULL, strstr(self->r.out, "4 hung threads, 2 deadlocks ("));
	run_free(&self->r);
	ASSERT_EQ(0, run_cli(&self->r, NULL, by_comm));
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "no hung threads ("));
	run_free(&self->r);
	/* The writers are this program, forked: its comm. */
	ASSERT_EQ(0, run_cli(&self->r, NULL, by_our_comm));
	EXPECT_EQ(3, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "4 hung threads, 2 deadlocks ("));
	run_free(&self->r);
	ASSERT_EQ(0, run_cli(&self->r, NULL, by_uid));
	EXPECT_EQ(3, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "4 hung threads, 2 deadlocks ("));
	run_free(&self->r);
	ASSERT_EQ(0, run_cli(&self->r, NULL, by_other_uid));
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "no hung threads ("));
}

static void usage_error(struct __test_metadata *_metadata, struct run *r,
			const char *path, const char *opt, const char *val,
			const char *msg)
{
	char *argv[] = { "actrack", "--arena", (char *)path, "hangs",
			 (char *)opt, (char *)val, NULL };
	char want[256];

	snprintf(want, sizeof(want), "%s (see 'actrack hangs --help')\n",
		 msg);
	run_free(r);
	ASSERT_EQ(0, run_cli(r, NULL, argv));
	EXPECT_EQ(2, r->status);
	EXPECT_STREQ(want, r->err) {
		TH_LOG("%s %s: %s", opt, val ? val : "", r->err);
	}
}

TEST_F(hangs, scope_usage_errors)
{
	usage_error(_metadata, &self->r, self->path, "--pid", "abc",
		    "actrack: hangs: --pid: not a pid: 'abc'");
	usage_error(_metadata, &self->r, self->path, "--pid", "0",
		    "actrack: hangs: --pid: not a pid: '0'");
	usage_error(_metadata, &self->r, self->path, "--pid", "-3",
		    "actrack: hangs: --pid: not a pid: '-3'");
	usage_error(_metadata, &self->r, self->path, "--uid", "x1",
		    "actrack: hangs: --uid: not a uid: 'x1'");
	usage_error(_metadata, &self->r, self->path, "--uid", "4294967295",
		    "actrack: hangs: --uid: not a uid: '4294967295'");
	usage_error(_metadata, &self->r, self->path, "--comm", "",
		    "actrack: hangs: --comm: not a command name (1 to 15 "
		    "bytes): ''");
	usage_error(_metadata, &self->r, self->path, "--comm",
		    "sixteen-bytes-xx", "actrack: hangs: --comm: not a command "
		    "name (1 to 15 bytes): 'sixteen-bytes-xx'");
	usage_error(_metadata, &self->r, self->path, "--pid", NULL,
		    "actrack: hangs: --pid: missing argument");
}

/* Sets a title over its argv (as nginx does): /proc/PID/cmdline then
 * differs from the command line its record holds. */
static void retitled(void *arg)
{
	memset(program_invocation_name, 'X',
	       strlen(program_invocation_name));
}

static const struct actrack_snap_process *
process_of(const struct actrack_snapshot *s, pid_t pid)
{
	for (uint32_t i = 0; i < s->nr_processes; i++)
		if (s->processes[i].pid == (uint32_t)pid)
			return &s->processes[i];
	return NULL;
}

/* The first of hangs' two looks reads no /proc/PID/cmdline: the library's
 * ACTRACK_SNAP_NO_CMDLINES leaves the records' command lines. */
TEST_F(hangs, snapshot_without_cmdlines_keeps_the_records)
{
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s = NULL;

	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, retitled,
				  NULL));
	ASSERT_EQ(0, actrack_snapshot_take(self->path,
					   ACTRACK_SNAP_ARENA_FILE, &s));
	p = process_of(s, self->w[0].pid);
	ASSERT_NE(NULL, p);
	EXPECT_EQ('X', p->cmdline[0]) TH_LOG("%s", p->cmdline);
	actrack_snapshot_free(s);
	ASSERT_EQ(0, actrack_snapshot_take(self->path,
					   ACTRACK_SNAP_ARENA_FILE |
					   ACTRACK_SNAP_NO_CMDLINES, &s));
	p = process_of(s, self->w[0].pid);
	ASSERT_NE(NULL, p);
	EXPECT_NE('X', p->cmdline[0]) TH_LOG("%s", p->cmdline);
	EXPECT_NE(NULL, strstr(p->cmdline, "cli_hangs")) TH_LOG("%s",
							      p->cmdline);
	actrack_snapshot_free(s);
	/* Unknown flags are still refused. */
	EXPECT_EQ(-EINVAL, actrack_snapshot_take(self->path,
						 ACTRACK_SNAP_ARENA_FILE |
						 (1U << 7), &s));
}

/* actrack_snapshot_take_uid(): the module's arena of a uid; its errors
 * without one (the host). */
TEST_F(hangs, snapshot_take_uid_errors)
{
	struct actrack_snapshot *s = NULL;

	EXPECT_EQ(-EINVAL, actrack_snapshot_take_uid(0, 0, NULL));
	EXPECT_EQ(-EINVAL, actrack_snapshot_take_uid(0,
						     ACTRACK_SNAP_ARENA_FILE,
						     &s));
	EXPECT_EQ(NULL, s);
	if (!access("/dev/actrack", F_OK))
		SKIP(return, "actrack.ko is loaded (hangs_watch tests it)");
	EXPECT_EQ(-ENOENT, actrack_snapshot_take_uid(0, 0, &s));
	EXPECT_EQ(NULL, s);
}

TEST_F(hangs, usage_errors)
{
	char *bad_for[] = { "actrack", "--arena", self->path, "hangs",
			    "--for", "soon", NULL };
	char *bad_interval[] = { "actrack", "--arena", self->path, "hangs",
				 "--interval", "0", NULL };

	ASSERT_EQ(0, run_cli(&self->r, NULL, bad_for));
	EXPECT_EQ(2, self->r.status);
	EXPECT_EQ(1, count_lines(self->r.err));
	EXPECT_NE(NULL, strstr(self->r.err, "--for: not a duration: 'soon'"));
	run_free(&self->r);
	ASSERT_EQ(0, run_cli(&self->r, NULL, bad_interval));
	EXPECT_EQ(2, self->r.status);
	EXPECT_EQ(1, count_lines(self->r.err));
}

/* ---- bad arenas ------------------------------------------------------ */

static void nothing(void *arg)
{
	actrack_thread_init("idle");
	actrack_push_task(1);
}

/* Every command that reads an arena: one line on stderr, non-zero. */
static void every_command_fails(struct __test_metadata *_metadata,
				const char *path, const char *what)
{
	char out[300];
	char *cmds[][6] = {
		{ "dump" }, { "dump", "--json" }, { "dump", "--trace" },
		{ "ps" }, { "stats" }, { "save", out },
		{ "hangs", "--interval", "1" }, { "top", "--iterations", "1" },
	};

	test_path(out, sizeof(out), "cli-hangs-save-out");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *argv[10] = { "actrack", "--arena", (char *)path };
		struct run r;
		int n = 3;

		for (int k = 0; k < 6 && cmds[i][k]; k++)
			argv[n++] = cmds[i][k];
		ASSERT_EQ(0, run_cli(&r, NULL, argv));
		if (r.status == 0 || r.status >= 100 ||
		    count_lines(r.err) != 1 || !strstr(r.err, path) || *r.out)
			TH_LOG("%s: %s %s: exit %d, stdout '%s', stderr '%s'",
			       what, cmds[i][0], cmds[i][1] ? cmds[i][1] : "",
			       r.status, r.out, r.err);
		EXPECT_NE(0, r.status);
		EXPECT_GT(100, r.status);	/* an exit, not a crash */
		EXPECT_EQ(1, count_lines(r.err));
		EXPECT_NE(NULL, strstr(r.err, path));
		EXPECT_STREQ("", r.out);
		run_free(&r);
		EXPECT_NE(0, access(out, F_OK));
	}
}

TEST_F(hangs, corrupt_and_truncated_arenas)
{
	char bad[300];
	size_t len;
	char *img;

	ASSERT_EQ(0, writer_start(&self->w[0], self->path, 8, 0, nothing,
				  NULL));
	img = read_file(self->path, &len);
	ASSERT_NE(NULL, img);
	ASSERT_LT(4096, len);
	test_path(bad, sizeof(bad), "cli-hangs-bad");

	/* Truncated to half its size. */
	ASSERT_EQ(0, write_file(bad, img, len / 2));
	every_command_fails(_metadata, bad, "truncated");
	/* Bad magic. */
	img[0] ^= 0x55;
	ASSERT_EQ(0, write_file(bad, img, len));
	every_command_fails(_metadata, bad, "bad magic");
	img[0] ^= 0x55;
	/* Header says the arena is bigger than the file. */
	((struct actrack_arena_header *)img)->size = (uint32_t)len * 2;
	ASSERT_EQ(0, write_file(bad, img, len));
	every_command_fails(_metadata, bad, "bad size");
	/* Too short for a header at all. */
	ASSERT_EQ(0, write_file(bad, img, 10));
	every_command_fails(_metadata, bad, "10 bytes");
	free(img);
	unlink(bad);
}

TEST_HARNESS_MAIN
