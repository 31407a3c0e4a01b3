// SPDX-License-Identifier: MIT
/*
 * The held-lock set (ABI 1.2): a thread's locks as a set in its tracker,
 * released in any order, as snapshots show it; its overflow count; no set
 * without a tracker; a snapshot never trusts the set's geometry; and
 * `actrack hangs` names a deadlock whose holders are known only from the
 * held sets (no lock-held activity on any stack).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "actrack.h"
#include "arena.h"
#include "test_harness.h"
#include "snapshot_helpers.h"

static char path[256];

static void attach_fresh(struct __test_metadata *_metadata, const char *tag)
{
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path,
		.flags = ACTRACK_INIT_NO_MODULE,
	};

	snprintf(path, sizeof(path), "%s/actrack-held-%s-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag,
		 (int)getpid());
	unlink(path);
	ASSERT_EQ(0, actrack_init(&o));
	ASSERT_EQ(0, actrack_thread_init("held"));
}

/* This thread in a fresh snapshot of the test's arena (caller frees). */
static const struct actrack_snap_thread *
me_in(struct actrack_snapshot *s)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid);

	for (uint32_t p = 0; p < s->nr_processes; p++)
		for (uint32_t t = 0; t < s->processes[p].nr_threads; t++)
			if (s->processes[p].threads[t].tid == tid)
				return &s->processes[p].threads[t];
	return NULL;
}

static bool has(const struct actrack_snap_thread *t, uint64_t v)
{
	for (uint32_t i = 0; i < t->nr_held; i++)
		if (t->held[i] == v)
			return true;
	return false;
}

TEST(out_of_order_release)
{
	static int a, b, c;
	struct actrack_snapshot *s;
	const struct actrack_snap_thread *t;

	attach_fresh(_metadata, "order");
	ASSERT_EQ(ACTRACK_THREAD_HELD,
		  actrack__tls.tracker->flags & ACTRACK_THREAD_HELD);
	actrack_held_add(&a, false);
	actrack_held_add(&b, true);
	actrack_held_add(&c, false);
	/* Released in the order taken: not a stack. */
	ASSERT_TRUE(actrack_held_remove(&a));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	t = me_in(s);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(2u, t->nr_held);
	EXPECT_EQ(0u, t->held_overflow);
	EXPECT_FALSE(has(t, (uintptr_t)&a));
	EXPECT_TRUE(has(t, (uintptr_t)&b | ACTRACK_HELD_SHARED));
	EXPECT_TRUE(has(t, (uintptr_t)&c));
	actrack_snapshot_free(s);

	EXPECT_FALSE(actrack_held_remove(&a));	/* not held (any more) */
	EXPECT_TRUE(actrack_held_remove(&b));
	EXPECT_TRUE(actrack_held_remove(&c));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	t = me_in(s);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0u, t->nr_held);
	actrack_snapshot_free(s);
}

TEST(overflow_is_counted)
{
	static uint64_t locks[ACTRACK_HELD_SLOTS + 3];
	struct actrack_snapshot *s;
	const struct actrack_snap_thread *t;

	attach_fresh(_metadata, "overflow");
	for (int i = 0; i < ACTRACK_HELD_SLOTS + 3; i++)
		actrack_held_add(&locks[i], false);
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	t = me_in(s);
	ASSERT_NE(NULL, t);
	EXPECT_EQ((uint32_t)ACTRACK_HELD_SLOTS, t->nr_held);
	EXPECT_EQ(3u, t->held_overflow);
	actrack_snapshot_free(s);
	/* A lock that did not fit is released: the overflow goes down. */
	EXPECT_TRUE(actrack_held_remove(&locks[ACTRACK_HELD_SLOTS + 2]));
	EXPECT_EQ(2u, actrack__held_tls.held->overflow);
	EXPECT_EQ((uint32_t)ACTRACK_HELD_SLOTS, actrack__held_tls.nr);
}

static void *no_tracker(void *arg)
{
	static int lock;

	/* Never attaches with a lock taken: nothing is recorded. */
	actrack_held_add(&lock, false);
	*(bool *)arg = actrack__tls.tracker == NULL &&
		       actrack__held_tls.held == NULL &&
		       !actrack_held_remove(&lock);
	return NULL;
}

TEST(no_tracker_no_set)
{
	pthread_t th;
	bool ok = false;

	attach_fresh(_metadata, "none");
	ASSERT_EQ(0, pthread_create(&th, NULL, no_tracker, &ok));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_TRUE(ok);
}

TEST(lying_capacity_is_bounded)
{
	static int a;
	struct actrack_snapshot *s;
	const struct actrack_snap_thread *t;

	attach_fresh(_metadata, "lying");
	actrack_held_add(&a, false);
	/* Another process of the uid may write anything there. */
	actrack__held_tls.held->capacity = 0xffffffffu;
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	t = me_in(s);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(1u, t->nr_held);
	EXPECT_EQ((uint64_t)(uintptr_t)&a, t->held[0]);
	actrack_snapshot_free(s);
	/*
	 * A slot count that still fits the block but puts the set past its
	 * end (the set is two slots long): the stack is read, the set not.
	 */
	actrack__tls.tracker->slot_count = ACTRACK_DEFAULT_SLOTS + 2;
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	t = me_in(s);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0u, t->nr_held);
	actrack_snapshot_free(s);
	actrack__tls.tracker->slot_count = ACTRACK_DEFAULT_SLOTS;
}

static int lock_a, lock_b;
static pthread_barrier_t both_hold;

static void *abba(void *arg)
{
	bool first = arg != NULL;

	actrack_thread_init(first ? "first" : "second");
	actrack_held_add(first ? &lock_a : &lock_b, false);
	pthread_barrier_wait(&both_hold);
	actrack_push_lock_acquire(first ? &lock_b : &lock_a);
	for (;;)
		pause();
	return NULL;
}

TEST(hangs_names_a_cycle_of_held_sets)
{
	char *argv[] = { "actrack", "--arena", path, "hangs", "--for", "1ms",
			 "-i", "10", NULL };
	pthread_t t1, t2;
	struct run r;
	char *dl;

	attach_fresh(_metadata, "cycle");
	ASSERT_EQ(0, pthread_barrier_init(&both_hold, NULL, 3));
	ASSERT_EQ(0, pthread_create(&t1, NULL, abba, &lock_a));
	ASSERT_EQ(0, pthread_create(&t2, NULL, abba, NULL));
	pthread_barrier_wait(&both_hold);
	/* Both push right after the barrier; a first look may be early. */
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ(0, run_cli(&r, NULL, argv));
		if (strstr(r.out, "DEADLOCK:"))
			break;
		run_free(&r);
		usleep(20 * 1000);
	}
	EXPECT_EQ(3, r.status);
	dl = strstr(r.out, "DEADLOCK: ");
	ASSERT_NE(NULL, dl);
	EXPECT_NE(NULL, strstr(dl, "'first' -> "));
	EXPECT_NE(NULL, strstr(dl, "'second' -> "));
	EXPECT_NE(NULL, strstr(r.out, "1 deadlock"));
	run_free(&r);
}

TEST_HARNESS_MAIN
