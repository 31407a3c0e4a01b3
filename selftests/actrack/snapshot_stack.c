// SPDX-License-Identifier: MIT
/*
 * Snapshots of activity stacks written by the library in another process:
 * exact types, objects and order; depth beyond the stored slots; several
 * threads sorted by tid; a fatal signal recorded by the dying thread.
 */
#include <pthread.h>
#include <time.h>
#include <sys/syscall.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

static int the_lock, the_event;

static void push_every_type(void *arg)
{
	if (actrack_thread_init("pusher"))
		_exit(20);
	actrack_push_task(41);
	actrack_push_lock_acquire(&the_lock);
	actrack_push_lock_held(&the_lock);
	actrack_push_event_wait(&the_event);
	actrack_push_thread_join(1234);
	actrack_push_process_wait(4321);
	actrack_push_io_wait(7, 4096);
	actrack_push_generic(5, 77, 88);
}

/* Is @pc inside the text of the module that holds this function? */
static bool in_test_binary(const struct actrack_snap_process *p, uint64_t pc)
{
	for (uint32_t i = 0; i < p->nr_modules; i++) {
		const struct actrack_snap_module *m = &p->modules[i];

		if (strstr(m->path, "snapshot_stack") &&
		    pc >= m->base + m->vaddr && pc < m->base + m->vaddr + m->size)
			return true;
	}
	return false;
}

TEST(every_type_in_push_order)
{
	static const struct {
		uint8_t type;
		uint64_t object, info;
	} want[] = {
		{ ACTRACK_ACT_TASK_RUN, 41, 0 },
		{ ACTRACK_ACT_LOCK_ACQUIRE, 0, 0 },	/* &the_lock */
		{ ACTRACK_ACT_LOCK_HELD, 0, 0 },	/* &the_lock */
		{ ACTRACK_ACT_EVENT_WAIT, 0, 0 },	/* &the_event */
		{ ACTRACK_ACT_THREAD_JOIN, 1234, 0 },
		{ ACTRACK_ACT_PROCESS_WAIT, 4321, 0 },
		{ ACTRACK_ACT_IO_WAIT, 7, 4096 },
		{ ACTRACK_ACT_GENERIC_ACTION(5), 77, 88 },
	};
	const struct actrack_snap_process *p;
	const struct actrack_snap_thread *t;
	struct actrack_snapshot *s;
	struct writer w;
	char path[256];
	uint64_t t0 = actrack_test_mono_ns() - 20000000ULL; /* coarse clock: ~ms behind */

	test_path(path, sizeof(path), "types");
	ASSERT_EQ(0, writer_start(&w, path, 8, 0, push_every_type, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	p = snap_find(s, (uint32_t)w.pid);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(1u, p->nr_threads);
	t = &p->threads[0];
	EXPECT_EQ((uint32_t)w.pid, t->pid);
	EXPECT_EQ((uint32_t)w.pid, t->tid);
	EXPECT_EQ(w.start_ticks, t->start_ticks);
	EXPECT_STREQ("pusher", t->name);
	EXPECT_FALSE(t->torn);
	EXPECT_EQ(0, t->fatal_signo);
	ASSERT_EQ(8u, t->depth);
	ASSERT_EQ(8u, t->nr_activities);
	for (uint32_t i = 0; i < 8; i++) {
		const struct actrack_activity *a = &t->activities[i].a;
		uint64_t obj = want[i].object;

		if (i == 1 || i == 2)
			obj = (uint64_t)(uintptr_t)&the_lock;
		if (i == 3)
			obj = (uint64_t)(uintptr_t)&the_event;
		EXPECT_EQ(want[i].type, a->type);
		EXPECT_EQ(obj, a->object);
		EXPECT_EQ(want[i].info, a->info);
		EXPECT_EQ(0u, a->user_data);
		EXPECT_EQ(0u, t->activities[i].nr_values);
		/* Pushed after t0, before the snapshot. */
		EXPECT_LE(t0, a->time_ns);
		EXPECT_GE(s->taken_mono_ns, a->time_ns);
		/* Origins point into the code of this test binary, which the
		 * module records locate: they can be symbolized offline. */
		EXPECT_TRUE(in_test_binary(p, a->origin));
		if (i)
			EXPECT_NE(t->activities[i - 1].a.origin, a->origin);
	}
	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
}

static void push_deep(void *arg)
{
	for (int i = 0; i < 11; i++)
		actrack_push_task(100 + i);
}

TEST(depth_beyond_slots_counted_not_stored)
{
	const struct actrack_snap_thread *t;
	struct actrack_snapshot *s;
	struct writer w;
	char path[256];

	test_path(path, sizeof(path), "deep");
	ASSERT_EQ(0, writer_start(&w, path, 4, ACTRACK_INIT_NO_MODULES,
				  push_deep, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	ASSERT_EQ(1u, s->nr_processes);
	ASSERT_EQ(1u, s->processes[0].nr_threads);
	t = &s->processes[0].threads[0];
	EXPECT_EQ(11u, t->depth);
	ASSERT_EQ(4u, t->nr_activities);
	for (uint32_t i = 0; i < 4; i++)
		EXPECT_EQ(100u + i, t->activities[i].a.object);
	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
}

static void push_pop(void *arg)
{
	uint32_t a, b;

	a = actrack_push_task(1);
	b = actrack_push_task(2);
	actrack_push_task(3);
	actrack_pop(b);		/* also ends 3 */
	actrack_push_lock_acquire(&the_lock);
	(void)a;
}

TEST(pops_are_visible)
{
	const struct actrack_snap_thread *t;
	struct actrack_snapshot *s;
	struct writer w;
	char path[256];

	test_path(path, sizeof(path), "pops");
	ASSERT_EQ(0, writer_start(&w, path, 8, ACTRACK_INIT_NO_MODULES,
				  push_pop, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	t = &s->processes[0].threads[0];
	ASSERT_EQ(2u, t->depth);
	ASSERT_EQ(2u, t->nr_activities);
	EXPECT_EQ(ACTRACK_ACT_TASK_RUN, t->activities[0].a.type);
	EXPECT_EQ(1u, t->activities[0].a.object);
	EXPECT_EQ(ACTRACK_ACT_LOCK_ACQUIRE, t->activities[1].a.type);
	EXPECT_EQ((uint64_t)(uintptr_t)&the_lock, t->activities[1].a.object);
	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
}

#define NR_WORKERS 4

static pthread_barrier_t started;

static void *worker(void *arg)
{
	uintptr_t i = (uintptr_t)arg;
	char name[32];

	snprintf(name, sizeof(name), "worker-%u", (unsigned int)i);
	actrack_thread_init(name);
	/* Each thread's own stack: i + 1 activities with its index. */
	for (uintptr_t d = 0; d <= i; d++)
		actrack_push_generic(i, i, d);
	pthread_barrier_wait(&started);
	for (;;)
		pause();
	return NULL;
}

static void start_workers(void *arg)
{
	pthread_t th;

	pthread_barrier_init(&started, NULL, NR_WORKERS + 1);
	actrack_thread_init("main");
	actrack_push_thread_join(0);
	for (uintptr_t i = 0; i < NR_WORKERS; i++)
		if (pthread_create(&th, NULL, worker, (void *)i))
			_exit(20);
	pthread_barrier_wait(&started);
}

TEST(threads_sorted_by_tid_each_with_its_stack)
{
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s;
	struct writer w;
	char path[256];
	bool seen[NR_WORKERS] = { false };

	test_path(path, sizeof(path), "threads");
	ASSERT_EQ(0, writer_start(&w, path, 8, ACTRACK_INIT_NO_MODULES,
				  start_workers, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	p = snap_find(s, (uint32_t)w.pid);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(NR_WORKERS + 1u, p->nr_threads);
	/* The main thread has the lowest tid: the pid itself. */
	EXPECT_EQ((uint32_t)w.pid, p->threads[0].tid);
	EXPECT_STREQ("main", p->threads[0].name);
	EXPECT_EQ(1u, p->threads[0].depth);
	for (uint32_t i = 1; i < p->nr_threads; i++) {
		const struct actrack_snap_thread *t = &p->threads[i];
		uint32_t idx;
		char name[32];

		EXPECT_LT(p->threads[i - 1].tid, t->tid);
		EXPECT_EQ((uint32_t)w.pid, t->pid);
		ASSERT_LE(1u, t->nr_activities);
		idx = (uint32_t)t->activities[0].a.object;
		ASSERT_GT(NR_WORKERS, idx);
		EXPECT_FALSE(seen[idx]);
		seen[idx] = true;
		snprintf(name, sizeof(name), "worker-%u", idx);
		EXPECT_STREQ(name, t->name);
		ASSERT_EQ(idx + 1, t->depth);
		ASSERT_EQ(idx + 1, t->nr_activities);
		for (uint32_t d = 0; d <= idx; d++) {
			EXPECT_EQ(ACTRACK_ACT_GENERIC_ACTION(idx),
				  t->activities[d].a.type);
			EXPECT_EQ(idx, t->activities[d].a.object);
			EXPECT_EQ(d, t->activities[d].a.info);
		}
	}
	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
}

static void crash(void *arg)
{
	/* The default action after ours, not a sanitizer's report. */
	signal(SIGSEGV, SIG_DFL);
	if (actrack_record_fatal_signals())
		_exit(20);
	actrack_thread_init("crasher");
	actrack_push_task(9);
	actrack_push_io_wait(5, 10);
	/* A write to address 8: SIGSEGV, SEGV_MAPERR, si_addr 8.  The
	 * address goes through a volatile so the compiler cannot see it. */
	volatile uintptr_t bad = 8;

	*(volatile int *)bad = 1;
}

TEST(fatal_signal_and_last_stack_survive_the_crash)
{
	const struct actrack_snap_thread *t;
	struct actrack_snapshot *s;
	struct writer w = { 0 };
	char path[256];
	int status;
	pid_t pid;

	test_path(path, sizeof(path), "crash");
	/* The writer never gets to say it is ready: it dies in crash(). */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct actrack_opts o = {
			.sz = sizeof(o), .arena_path = path,
			.flags = ACTRACK_INIT_NO_MODULE |
				 ACTRACK_INIT_NO_MODULES,
		};

		if (actrack_init(&o))
			_exit(10);
		crash(NULL);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGSEGV, WTERMSIG(status));

	/* Nobody cleaned up (no module, no launching parent): it's all
	 * still there. */
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	ASSERT_EQ(1u, s->nr_processes);
	EXPECT_EQ((uint32_t)pid, s->processes[0].pid);
	ASSERT_EQ(1u, s->processes[0].nr_threads);
	t = &s->processes[0].threads[0];
	EXPECT_STREQ("crasher", t->name);
	EXPECT_EQ(SIGSEGV, t->fatal_signo);
	EXPECT_EQ(SEGV_MAPERR, t->fatal_code);
	EXPECT_EQ(8u, t->fatal_addr);
	EXPECT_NE(0u, t->fatal_pc);
	ASSERT_EQ(2u, t->nr_activities);
	EXPECT_EQ(9u, t->activities[0].a.object);
	EXPECT_EQ(ACTRACK_ACT_IO_WAIT, t->activities[1].a.type);
	EXPECT_EQ(5u, t->activities[1].a.object);
	EXPECT_EQ(10u, t->activities[1].a.info);
	actrack_snapshot_free(s);
	(void)w;
	unlink(path);
}

TEST_HARNESS_MAIN
