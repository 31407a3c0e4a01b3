// SPDX-License-Identifier: MIT
/*
 * Torn-read detection: a thread pushes and pops in a tight loop while
 * another process takes snapshots.  Every copy is either marked torn (no
 * activities) or internally consistent: all stored slots from the same
 * iteration, each at its own level.  A mix of two moments must never be
 * returned as data.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

#define LEVELS		3
#define RUN_NS		1500000000ULL

/*
 * Reader and writer on different CPUs when there are two: on a shared
 * (busy) machine the scheduler may otherwise run them on one CPU in turn,
 * and a copy would never overlap a change.
 */
static void pin_to(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Set by the writer thread once its tracker exists. */
static volatile int tracker_ready;

static void wait_tracker(void)
{
	while (!__atomic_load_n(&tracker_ready, __ATOMIC_ACQUIRE))
		usleep(1000);
}

static void *spin(void *arg)
{
	pin_to(1);
	actrack_thread_init("spinner");
	__atomic_store_n(&tracker_ready, 1, __ATOMIC_RELEASE);
	for (uint64_t i = 1;; i++) {
		uint32_t tok[LEVELS];

		for (uint32_t k = 0; k < LEVELS; k++)
			tok[k] = actrack_push_generic(k + 1, i, k);
		if (i % 64 == 0) {
			/* Now and then, user data on the outermost slot:
			 * allocation, rewrite and reset under the reader. */
			struct actrack_user_data *ud =
				actrack_activity_data(tok[0]);

			if (ud)
				actrack_set_uint(ud, "iter", i);
		}
		for (uint32_t k = LEVELS; k-- > 0;)
			actrack_pop(tok[k]);
	}
	return NULL;
}

static void start_spinner(void *arg)
{
	pthread_t th;

	if (pthread_create(&th, NULL, spin, NULL))
		_exit(20);
	wait_tracker();
}

static void run(struct __test_metadata *_metadata, uint32_t slots)
{
	uint64_t end, snaps = 0, torn = 0, consistent = 0, with_values = 0;
	struct writer w;
	char path[256];

	pin_to(0);
	test_path(path, sizeof(path), "torn");
	ASSERT_EQ(0, writer_start(&w, path, slots, ACTRACK_INIT_NO_MODULES,
				  start_spinner, NULL));
	end = actrack_test_mono_ns() + RUN_NS;
	while (actrack_test_mono_ns() < end) {
		const struct actrack_snap_process *p;
		const struct actrack_snap_thread *t;
		struct actrack_snapshot *s;

		ASSERT_EQ(0, actrack_snapshot_take(path,
						   ACTRACK_SNAP_ARENA_FILE,
						   &s));
		snaps++;
		ASSERT_FALSE(s->corrupt);
		p = snap_find(s, (uint32_t)w.pid);
		ASSERT_NE(NULL, p);
		ASSERT_EQ(1u, p->nr_threads);
		t = &p->threads[0];
		EXPECT_STREQ("spinner", t->name);
		if (t->torn) {
			torn++;
			EXPECT_EQ(1u, s->nr_torn);
			EXPECT_EQ(0u, t->nr_activities);
			EXPECT_EQ(NULL, t->activities);
		} else {
			uint64_t id;

			consistent++;
			EXPECT_EQ(0u, s->nr_torn);
			ASSERT_GE(LEVELS, t->depth);
			ASSERT_EQ(t->depth < slots ? t->depth : slots,
				  t->nr_activities);
			id = t->nr_activities ? t->activities[0].a.object : 0;
			for (uint32_t k = 0; k < t->nr_activities; k++) {
				const struct actrack_snap_activity *sa =
					&t->activities[k];

				ASSERT_EQ(ACTRACK_ACT_GENERIC_ACTION(k + 1),
					  sa->a.type);
				ASSERT_EQ(k, sa->a.info);
				ASSERT_EQ(id, sa->a.object);
			}
			/* Values are read after the stack: same iteration
			 * or a later one in that slot, never an older one. */
			if (t->nr_activities && t->activities[0].nr_values) {
				const struct actrack_value *v =
					&t->activities[0].values[0];

				with_values++;
				ASSERT_STREQ("iter", v->name);
				ASSERT_LE(id, v->u);
			}
		}
		actrack_snapshot_free(s);
	}
	writer_stop(&w);
	unlink(path);
	TH_LOG("%llu snapshots: %llu consistent (%llu with values), %llu torn",
	       (unsigned long long)snaps, (unsigned long long)consistent,
	       (unsigned long long)with_values, (unsigned long long)torn);
	EXPECT_EQ(snaps, consistent + torn);
	EXPECT_LT(10u, snaps);
}

TEST(every_copy_consistent_or_torn)
{
	run(_metadata, 8);
}

TEST(every_copy_consistent_or_torn_depth_beyond_slots)
{
	run(_metadata, 2);
}

/*
 * A thread whose version never stops moving (as a hostile or very busy
 * writer's would) with a full 64-slot stack, so that each copy takes long
 * enough to overlap a change: the snapshot must say torn, not return data.
 */
static void *churn(void *arg)
{
	struct actrack_thread *t;

	pin_to(1);
	actrack_thread_init("churner");
	for (int i = 0; i < ACTRACK_THREAD_MAX_SLOTS; i++)
		actrack_push_task(i);
	t = actrack__tls.tracker;
	__atomic_store_n(&tracker_ready, 1, __ATOMIC_RELEASE);
	for (;;)
		__atomic_fetch_add(&t->version, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void start_churn(void *arg)
{
	pthread_t th;

	if (pthread_create(&th, NULL, churn, NULL))
		_exit(20);
	wait_tracker();
}

TEST(endless_changes_reported_torn)
{
	uint64_t end, snaps = 0, torn = 0;
	struct writer w;
	char path[256];

	pin_to(0);
	test_path(path, sizeof(path), "churn");
	ASSERT_EQ(0, writer_start(&w, path, ACTRACK_THREAD_MAX_SLOTS,
				  ACTRACK_INIT_NO_MODULES, start_churn, NULL));
	/* Until the first torn copy; each try is a fresh chance. */
	end = actrack_test_mono_ns() + 5 * RUN_NS;
	while (!torn && actrack_test_mono_ns() < end) {
		const struct actrack_snap_process *p;
		struct actrack_snapshot *s;

		ASSERT_EQ(0, actrack_snapshot_take(path,
						   ACTRACK_SNAP_ARENA_FILE,
						   &s));
		snaps++;
		p = snap_find(s, (uint32_t)w.pid);
		ASSERT_NE(NULL, p);
		ASSERT_EQ(1u, p->nr_threads);
		if (p->threads[0].torn) {
			torn++;
			EXPECT_EQ(1u, s->nr_torn);
			/* Identified, but no stack: it could be a mix. */
			EXPECT_NE((uint32_t)w.pid, p->threads[0].tid);
			EXPECT_EQ((uint32_t)w.pid, p->threads[0].pid);
			EXPECT_STREQ("churner", p->threads[0].name);
			EXPECT_EQ(ACTRACK_THREAD_MAX_SLOTS,
				  p->threads[0].depth);
			EXPECT_EQ(0u, p->threads[0].nr_activities);
		} else {
			EXPECT_EQ(ACTRACK_THREAD_MAX_SLOTS,
				  p->threads[0].nr_activities);
		}
		EXPECT_FALSE(s->corrupt);
		actrack_snapshot_free(s);
	}
	writer_stop(&w);
	unlink(path);
	/* Whether a copy ever overlaps a change is up to the scheduler; on
	 * a machine too busy to run both at once there is nothing to see. */
	if (!torn)
		SKIP(return, "no copy overlapped a change in %llu snapshots "
		     "(busy machine?)", (unsigned long long)snaps);
	TH_LOG("first torn copy after %llu snapshots",
	       (unsigned long long)snaps);
}

TEST_HARNESS_MAIN
