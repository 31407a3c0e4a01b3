// SPDX-License-Identifier: MIT
/*
 * 1,000 tracked processes started and killed: the kernel frees all their
 * records, and the arena's used and free bytes come back to what they
 * were after a warm-up batch of the same shape (freed blocks are reused,
 * nothing leaks, nothing fragments).  A uid of its own keeps the numbers
 * free of the other tests' processes.  On a debug kernel the number of
 * batches is divided by ACTRACK_SLOW_KERNEL (test_harness.h), at least 2
 * batches after the warm-up.
 */
#include "vm_util.h"

#define CHURN_UID	31000
#define BATCH		20
#define BATCHES		50	/* 1,000 processes (fewer on a debug kernel) */

FIXTURE(churn) {
	struct vm_watch w;
};

FIXTURE_SETUP(churn)
{
	memset(&self->w, 0, sizeof(self->w));
	VM_REQUIRE_MODULE();
	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	ASSERT_EQ(0, vm_watch_open(&self->w));
}

FIXTURE_TEARDOWN(churn)
{
	vm_watch_close(&self->w);
}

/* Start BATCH victims, kill them all, wait for every report.
 * Return: reports received. */
static int batch(struct actrack_monitor *m, struct vm_deaths *ds,
		 int *start_failures)
{
	struct vm_victim v[BATCH];
	bool up[BATCH];
	int i, got = 0;

	for (i = 0; i < BATCH; i++) {
		struct vm_victim_cfg cfg = {
			.threads = 2,
			.phase = ACTRACK_PHASE_MAIN_LOOP_STARTED,
			.uid = CHURN_UID,
		};

		up[i] = !vm_victim_start(&cfg, &v[i]);
		*start_failures += !up[i];
	}
	for (i = 0; i < BATCH; i++)
		if (up[i])
			kill(v[i].pid, SIGKILL);
	for (i = 0; i < BATCH; i++) {
		if (!up[i])
			continue;
		waitpid(v[i].pid, NULL, 0);
		close(v[i].go_fd);
	}
	for (i = 0; i < BATCH; i++)
		if (up[i])
			got += !!vm_wait_death(m, ds, v[i].pid, 10000);
	/* Only the reports of this batch are needed from here on. */
	vm_deaths_free(ds);
	return got;
}

TEST_F_TIMEOUT(churn, thousand_processes, 290)
{
	uint32_t used0, free0, used1, free1;
	int b, got = 0, failures = 0, live0, live1;
	int batches = actrack_test_scaled(BATCHES, 2);
	struct vm_map map;
	uint64_t t0, t1;

	VM_SETUP_SKIPPED();

	/* Warm-up: creates the uid's arena (a reader never does). */
	ASSERT_EQ(BATCH, batch(self->w.m, self->w.ds, &failures));
	ASSERT_EQ(0, failures);
	/*
	 * Our read-only mapping keeps the arena's memory between batches
	 * (without it, an arena nobody uses gives its memory back); a
	 * second warm-up sets the high-water mark in that memory.
	 */
	ASSERT_EQ(0, vm_map_open(&map, CHURN_UID, false));
	ASSERT_EQ(BATCH, batch(self->w.m, self->w.ds, &failures));
	ASSERT_EQ(0, failures);
	live0 = vm_count_live(&map);
	used0 = actrack_arena_used(&map.a);
	free0 = actrack_arena_free_bytes(&map.a);

	t0 = actrack_test_mono_ns();
	for (b = 0; b < batches; b++)
		got += batch(self->w.m, self->w.ds, &failures);
	t1 = actrack_test_mono_ns();
	live1 = vm_count_live(&map);
	used1 = actrack_arena_used(&map.a);
	free1 = actrack_arena_free_bytes(&map.a);

	TH_LOG("%d processes in %llu ms (%llu us each): %d reports, %d start "
	       "failures", BATCH * batches,
	       (unsigned long long)(t1 - t0) / 1000000,
	       (unsigned long long)(t1 - t0) / 1000 / (BATCH * batches), got,
	       failures);
	TH_LOG("arena of %u bytes: after warm-up used %u free %u live records "
	       "%d; after %d used %u free %u live records %d",
	       map.a.size, used0, free0, live0, BATCH * batches, used1, free1,
	       live1);
	EXPECT_EQ(0, failures);
	EXPECT_EQ(BATCH * batches, got);
	EXPECT_EQ(0, live0);
	EXPECT_EQ(0, live1);
	EXPECT_EQ(used0, used1);
	EXPECT_EQ(free0, free1);
	EXPECT_FALSE(actrack_arena_is_corrupt(&map.a));
	vm_map_close(&map);
}

TEST_HARNESS_MAIN
