// SPDX-License-Identifier: MIT
/*
 * Cleanup without the module, on a file-backed arena: a launching parent's
 * RecordProcessLaunch/RecordProcessExit with the exit callback, and the
 * garbage collector, which must free a dead process's records and never a
 * live process's, even one that has the same pid.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "actrack.h"
#include "arena.h"
#include "test_harness.h"

static char arena_path[256];

static void attach_fresh(struct __test_metadata *_metadata, const char *tag)
{
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = arena_path,
		.flags = ACTRACK_INIT_NO_MODULE,
	};

	snprintf(arena_path, sizeof(arena_path), "%s/actrack-test-%s-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag,
		 (int)getpid());
	unlink(arena_path);
	ASSERT_EQ(0, actrack_init(&o));
}

/* Our own read-only view of the arena file, as an analyzer has it. */
static struct actrack_arena *view(void)
{
	static struct actrack_arena a;
	FILE *f = fopen(arena_path, "r");
	static void *buf;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	free(buf);
	buf = malloc(len);
	if (!buf || fread(buf, 1, len, f) != (size_t)len) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	a = (struct actrack_arena){ .base = buf, .size = (__u32)len };
	return &a;
}

/* Records owned by @pid (any start) of each type. */
static int count_owned(pid_t pid, uint64_t start_ticks, __u32 type)
{
	struct actrack_arena *a = view();
	struct actrack_arena_iter it;
	__u32 ref, seen;
	int n = 0;

	if (!a)
		return -1;
	actrack_arena_iter_init(&it, a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &seen))) {
		struct actrack_owner *o;

		if (!actrack_arena_is_owned_type(seen) ||
		    (type != ACTRACK_TYPE_ANY && seen != type))
			continue;
		o = actrack_arena_get(a, ref, seen, sizeof(*o));
		if (o && o->data_id && o->pid == (__u32)pid &&
		    o->start_ticks == start_ticks)
			n++;
	}
	return n;
}

/* A child that attaches, pushes, and reports readiness through a pipe. */
static pid_t spawn_worker(int exit_code, bool wait_for_kill)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		static int lock;

		actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
		actrack_push_task(11);
		actrack_push_lock_acquire(&lock);
		actrack_log("worker %d ready", (int)getpid());
		if (write(pfd[1], "r", 1) != 1)
			_exit(99);
		if (wait_for_kill)
			pause();
		_exit(exit_code);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1)
		pid = -1;
	close(pfd[0]);
	return pid;
}

struct seen_death {
	int calls;
	struct actrack_death d;
	struct actrack_snap_thread t0;	/* activities in acts[] */
	struct actrack_snap_activity acts[ACTRACK_THREAD_MAX_SLOTS];
};

static void on_exit_cb(const struct actrack_death *d, void *arg)
{
	struct seen_death *s = arg;

	s->calls++;
	s->d = *d;
	s->d.process.threads = NULL;
	if (!d->process.nr_threads)
		return;
	/* The report is freed after the call: keep its first thread's
	 * activities (without their values). */
	s->t0 = d->process.threads[0];
	s->t0.activities = s->acts;
	for (uint32_t i = 0; i < s->t0.nr_activities &&
	     i < ACTRACK_THREAD_MAX_SLOTS; i++) {
		s->acts[i].a = d->process.threads[0].activities[i].a;
		s->acts[i].nr_values = 0;
		s->acts[i].values = NULL;
	}
}

TEST(record_exit_reports_and_frees)
{
	struct seen_death seen = { 0 };
	uint64_t ticks;
	int status, modules;
	pid_t pid;

	attach_fresh(_metadata, "exit");
	modules = actrack_record_modules();
	ASSERT_LT(0, modules);
	actrack_set_exit_callback(on_exit_cb, &seen);
	pid = spawn_worker(3, false);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, actrack_record_process_launch(pid));
	ASSERT_EQ(0, actrack_read_start_ticks(pid, &ticks));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* process + thread + log ring + one record per module */
	EXPECT_EQ(3 + modules, count_owned(pid, ticks, ACTRACK_TYPE_ANY));
	EXPECT_EQ(3 + modules, actrack_record_process_exit(pid, status));
	EXPECT_EQ(0, count_owned(pid, ticks, ACTRACK_TYPE_ANY));
	ASSERT_EQ(1, seen.calls);
	EXPECT_EQ((uint32_t)pid, seen.d.process.pid);
	EXPECT_EQ(ticks, seen.d.process.start_ticks);
	EXPECT_EQ(3, seen.d.exit_code);
	EXPECT_EQ(0, seen.d.signal);
	EXPECT_EQ(ACTRACK_PHASE_MAIN_LOOP_STARTED, seen.d.process.phase);
	ASSERT_EQ(1u, seen.d.process.nr_threads);
	EXPECT_EQ(2u, seen.t0.depth);
	ASSERT_EQ(2u, seen.t0.nr_activities);
	EXPECT_EQ(ACTRACK_ACT_TASK_RUN, seen.t0.activities[0].a.type);
	EXPECT_EQ(11u, seen.t0.activities[0].a.object);
	EXPECT_EQ(ACTRACK_ACT_LOCK_ACQUIRE, seen.t0.activities[1].a.type);
	/* Reported once: a second exit for the same pid is unknown. */
	EXPECT_EQ(-ENOENT, actrack_record_process_exit(pid, status));
}

TEST(record_exit_of_killed_child_has_signal)
{
	struct seen_death seen = { 0 };
	int status;
	pid_t pid;

	attach_fresh(_metadata, "kill");
	actrack_set_exit_callback(on_exit_cb, &seen);
	pid = spawn_worker(0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, actrack_record_process_launch(pid));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_LT(0, actrack_record_process_exit(pid, status));
	ASSERT_EQ(1, seen.calls);
	EXPECT_EQ(SIGKILL, seen.d.signal);
	EXPECT_FALSE(seen.d.core_dumped);
}

TEST(record_exit_of_running_child_is_refused)
{
	struct seen_death seen = { 0 };
	uint64_t ticks;
	siginfo_t si;
	int status, live;
	pid_t pid;

	attach_fresh(_metadata, "busy");
	actrack_set_exit_callback(on_exit_cb, &seen);
	pid = spawn_worker(0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, actrack_record_process_launch(pid));
	ASSERT_EQ(0, actrack_read_start_ticks(pid, &ticks));
	live = count_owned(pid, ticks, ACTRACK_TYPE_ANY);
	ASSERT_LT(0, live);
	/* Still running: nothing reported, nothing freed, entry kept. */
	EXPECT_EQ(-EBUSY, actrack_record_process_exit(pid, 0));
	EXPECT_EQ(live, count_owned(pid, ticks, ACTRACK_TYPE_ANY));
	EXPECT_EQ(0, seen.calls);
	/* A zombie has exited: its parent may report it before reaping. */
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(0, waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	EXPECT_EQ(live, actrack_record_process_exit(pid, 0));
	EXPECT_EQ(0, count_owned(pid, ticks, ACTRACK_TYPE_ANY));
	EXPECT_EQ(1, seen.calls);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(-ENOENT, actrack_record_process_exit(pid, status));
}

TEST(launch_and_exit_reject_bad_pids)
{
	attach_fresh(_metadata, "badpid");
	EXPECT_EQ(-EINVAL, actrack_record_process_launch(0));
	EXPECT_EQ(-EINVAL, actrack_record_process_launch(-5));
	EXPECT_EQ(-ESRCH, actrack_record_process_launch(0x3ffffff0));
	EXPECT_EQ(-EINVAL, actrack_record_process_exit(0, 0));
	EXPECT_EQ(-ENOENT, actrack_record_process_exit(getpid(), 0));
}

TEST(gc_frees_dead_process_records)
{
	uint64_t ticks;
	int status, modules, before;
	pid_t pid;

	attach_fresh(_metadata, "gcdead");
	modules = actrack_record_modules();
	pid = spawn_worker(0, false);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, actrack_read_start_ticks(pid, &ticks));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	before = count_owned(pid, ticks, ACTRACK_TYPE_ANY);
	EXPECT_EQ(3 + modules, before);
	/* Only the dead child's records go; ours (alive) stay. */
	EXPECT_EQ(before, actrack_collect_garbage());
	EXPECT_EQ(0, count_owned(pid, ticks, ACTRACK_TYPE_ANY));
	ASSERT_EQ(0, actrack_read_start_ticks(getpid(), &ticks));
	EXPECT_EQ(1, count_owned(getpid(), ticks, ACTRACK_TYPE_PROCESS));
	EXPECT_EQ(0, actrack_collect_garbage());
}

/* A second, writable mapping of the arena file, for forging records. */
static int map_writable(struct actrack_arena *a)
{
	struct stat st;
	int fd = open(arena_path, O_RDWR);
	void *p;

	if (fd < 0 || fstat(fd, &st))
		return -1;
	p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	*a = (struct actrack_arena){
		.base = p, .size = (__u32)st.st_size, .writable = true,
	};
	return 0;
}

TEST(gc_keeps_live_pid_frees_its_previous_incarnation)
{
	struct actrack_arena a;
	struct actrack_thread *t;
	uint64_t ticks;
	__u32 ref;
	pid_t pid;
	int status;

	attach_fresh(_metadata, "gcreuse");
	pid = spawn_worker(0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, actrack_read_start_ticks(pid, &ticks));
	ASSERT_LT(0, ticks);
	/*
	 * Forge what a previous process with the same pid would have left:
	 * the same pid, an earlier start.  Written through a second mapping
	 * of the same file with the arena core directly.
	 */
	ASSERT_EQ(0, map_writable(&a));
	ref = actrack_arena_alloc(&a, ACTRACK_TYPE_THREAD, sizeof(*t) + 64);
	ASSERT_NE(0u, ref);
	t = actrack_arena_get(&a, ref, ACTRACK_TYPE_THREAD, sizeof(*t));
	ASSERT_NE(NULL, t);
	t->owner.pid = (__u32)pid;
	t->owner.tid = (__u32)pid;
	t->owner.start_ticks = ticks - 1;
	t->slot_count = 1;
	at_store_release(&t->owner.data_id, actrack_arena_new_data_id(&a));

	EXPECT_EQ(1, count_owned(pid, ticks - 1, ACTRACK_TYPE_THREAD));
	EXPECT_EQ(1, count_owned(pid, ticks, ACTRACK_TYPE_THREAD));
	/* Exactly the forged record goes; the live child's stay. */
	EXPECT_EQ(1, actrack_collect_garbage());
	EXPECT_EQ(0, count_owned(pid, ticks - 1, ACTRACK_TYPE_THREAD));
	EXPECT_EQ(1, count_owned(pid, ticks, ACTRACK_TYPE_THREAD));
	EXPECT_EQ(1, count_owned(pid, ticks, ACTRACK_TYPE_PROCESS));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

TEST(report_from_a_cyclic_list_names_each_thread_once)
{
	struct seen_death seen = { 0 };
	struct actrack_arena_header *h;
	struct actrack_block *tail;
	struct actrack_arena a;
	int status;
	pid_t pid;

	attach_fresh(_metadata, "cycle");
	actrack_set_exit_callback(on_exit_cb, &seen);
	pid = spawn_worker(0, false);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, actrack_record_process_launch(pid));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* A hostile process turns the list into a loop: tail -> first. */
	ASSERT_EQ(0, map_writable(&a));
	h = a.base;
	tail = (struct actrack_block *)((char *)a.base + h->tailptr);
	tail->next = h->queue.next;
	EXPECT_LT(0, actrack_record_process_exit(pid, status));
	ASSERT_EQ(1, seen.calls);
	EXPECT_EQ(1u, seen.d.process.nr_threads);
	EXPECT_NE(0u, seen.d.flags & ACTRACK_DEATH_ARENA_CORRUPT);
}

TEST(phase_values)
{
	attach_fresh(_metadata, "phase");
	for (uint32_t p = 0; p <= ACTRACK_PHASE_MAX; p++)
		EXPECT_EQ(0, actrack_set_phase(p));
	EXPECT_EQ(-EINVAL, actrack_set_phase(ACTRACK_PHASE_MAX + 1));
}

TEST(log_rejects_null_format)
{
	attach_fresh(_metadata, "lognull");
	EXPECT_EQ(-EINVAL, actrack_log(NULL));
	EXPECT_EQ(0, actrack_log("%s", "ok"));
}

static volatile uint32_t handler_token = 1;
static volatile int handler_backend = -1;

static void push_in_handler(int sig)
{
	handler_token = actrack_push_task(7);
	handler_backend = (int)actrack_backend();
	if (handler_token)
		actrack_pop(handler_token);
}

/*
 * A process's first push attaches it (files, allocations, the loader's
 * lock), which is not async-signal-safe: a first push made in a signal
 * handler is dropped and attaches nothing; a push outside attaches, once
 * the thread's retry time (a second) has passed.
 */
TEST(first_push_in_a_signal_handler_does_not_attach)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		uint32_t tok = 0;

		snprintf(arena_path, sizeof(arena_path),
			 "%s/actrack-test-handler-%d",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			 (int)getpid());
		unlink(arena_path);
		setenv("ACTRACK_ARENA", arena_path, 1);
		signal(SIGUSR1, push_in_handler);
		raise(SIGUSR1);
		if (handler_token != 0 ||
		    handler_backend != ACTRACK_BACKEND_NONE)
			_exit(1);
		if (actrack_backend() != ACTRACK_BACKEND_NONE)
			_exit(2);
		/* Not timed: up to 10 s for the 1 s retry. */
		for (int i = 0; i < 500 && !tok; i++) {
			tok = actrack_push_task(8);
			if (!tok)
				usleep(20000);
		}
		if (!tok || actrack_backend() == ACTRACK_BACKEND_NONE)
			_exit(3);
		actrack_pop(tok);
		unlink(arena_path);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("1: the handler's push "
		"attached (token %u); 2: attached after it; 3: never attached",
		handler_token);
}

TEST_HARNESS_MAIN
