// SPDX-License-Identifier: MIT
/*
 * The arena belongs to its uid, so any process of the uid can scribble
 * over it while the kernel walks it to clean up after exiting processes.
 * Rounds of random corruption race processes that are killed or exit;
 * the module must keep reporting every death, never crash, warn or hang
 * (the runner checks dmesg).  Uids of their own keep the damage away from
 * the other tests' arena; each uid gets a few rounds of damage to block
 * contents and, in its last round, to the arena header too (after which
 * new processes of that uid can no longer attach).  On a slow kernel
 * (ACTRACK_SLOW_KERNEL, test_harness.h) the rounds are divided by its
 * divisor, never fewer than one uid's worth, so that the header damage is
 * still done.
 */
#include "vm_util.h"

#define CORRUPT_UID	23456	/* first of rounds / ROUNDS_PER_UID uids */
#define ROUNDS		20
#define ROUNDS_PER_UID	5
#define VICTIMS		4

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * The corrupter: a process of the uid with a writable mapping, as any
 * buggy or hostile program of that uid could have.  Writes @writes random
 * values at random places of the used part, headers of blocks included,
 * and in some rounds the arena header's pointers and list links.
 */
static void corrupter(uid_t uid, uint64_t seed, int writes, bool header,
		      int done_fd)
{
	struct actrack_arena_header *h;
	struct vm_map map;
	uint32_t used;
	int i;

	rng_state = seed | 1;
	if (setgid(uid) || setuid(uid))
		_exit(20);
	if (vm_map_open(&map, -1, true))
		_exit(21);
	h = map.a.base;
	for (i = 0; i < writes; i++) {
		uint32_t *w;

		used = __atomic_load_n(&h->freeptr, __ATOMIC_RELAXED);
		if (used <= ACTRACK_ARENA_HEADER_SIZE || used > map.a.size)
			used = map.a.size;
		w = (uint32_t *)((char *)map.a.base + ACTRACK_ARENA_HEADER_SIZE +
				 (rnd() % (used - ACTRACK_ARENA_HEADER_SIZE) &
				  ~3U));
		switch (rnd() % 4) {
		case 0:
			*w = (uint32_t)rnd();
			break;
		case 1:
			*w ^= 1U << (rnd() % 32);
			break;
		case 2:	/* plausible references: aligned, in range */
			*w = (uint32_t)(rnd() % map.a.size) & ~63U;
			break;
		default:
			*w = 0;
		}
		if (header && i % 16 == 0) {
			switch (rnd() % 4) {
			case 0:
				h->tailptr = (uint32_t)rnd() % map.a.size;
				break;
			case 1:
				h->queue.next = (uint32_t)rnd() % map.a.size &
						~63U;
				break;
			case 2:
				h->freeptr = (uint32_t)rnd();
				break;
			default:
				h->flags = (uint32_t)rnd();
			}
		}
		if (i % 64 == 0)
			usleep(500);
	}
	if (write(done_fd, "d", 1) != 1)
		_exit(22);
	_exit(0);
}

FIXTURE(corrupt) {
	struct vm_watch w;
};

FIXTURE_SETUP(corrupt)
{
	memset(&self->w, 0, sizeof(self->w));
	VM_REQUIRE_MODULE();
	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	ASSERT_EQ(0, vm_watch_open(&self->w));
}

FIXTURE_TEARDOWN(corrupt)
{
	vm_watch_close(&self->w);
}

TEST_F_TIMEOUT(corrupt, rounds_while_exiting, 280)
{
	unsigned int started = 0, refused = 0, reported = 0, flagged = 0;
	unsigned int torn = 0, signalled = 0, round, i;
	unsigned int rounds = actrack_test_scaled(ROUNDS, ROUNDS_PER_UID);
	struct actrack_kstats st0, st1;
	int status;

	VM_SETUP_SKIPPED();

	ASSERT_EQ(0, actrack_monitor_stats(self->w.m, &st0));
	for (round = 0; round < rounds; round++) {
		struct vm_victim v[VICTIMS];
		int vstatus[VICTIMS];
		bool up[VICTIMS];
		uid_t uid = CORRUPT_UID + round / ROUNDS_PER_UID;
		bool header = round % ROUNDS_PER_UID == ROUNDS_PER_UID - 1;
		int done[2];
		pid_t cpid;

		for (i = 0; i < VICTIMS; i++) {
			struct vm_victim_cfg cfg = {
				.threads = 1 + (int)(i % 3),
				.phase = ACTRACK_PHASE_MAIN_LOOP_STARTED,
				.uid = uid,
				.busy = i & 1,
			};

			up[i] = !vm_victim_start(&cfg, &v[i]);
			started += up[i];
			refused += !up[i];
		}
		ASSERT_EQ(0, pipe(done));
		cpid = fork();
		ASSERT_GE(cpid, 0);
		if (cpid == 0) {
			close(done[0]);
			corrupter(uid, round * 7919ULL + 17, 256, header,
				  done[1]);
		}
		close(done[1]);
		/* Die while the corrupter writes. */
		usleep(2000);
		for (i = 0; i < VICTIMS; i++) {
			if (!up[i])
				continue;
			if (i % 2)
				vstatus[i] = vm_victim_kill(&v[i], SIGKILL);
			else
				vstatus[i] = vm_victim_cmd(&v[i], 'x', (int)i);
		}
		vm_read_n(done[0], 1, 30000);
		close(done[0]);
		ASSERT_EQ(cpid, waitpid(cpid, &status, 0));

		for (i = 0; i < VICTIMS; i++) {
			struct actrack_death *d;

			if (!up[i])
				continue;
			d = vm_wait_death(self->w.m, self->w.ds, v[i].pid, 10000);
			EXPECT_NE(NULL, d) TH_LOG("round %u: no report for pid "
						  "%d", round, v[i].pid);
			if (!d)
				continue;
			reported++;
			flagged += !!(d->flags & ACTRACK_DEATH_ARENA_CORRUPT);
			signalled += WIFSIGNALED(vstatus[i]) &&
				     WTERMSIG(vstatus[i]) != SIGKILL;
			for (uint32_t t = 0; t < d->process.nr_threads; t++)
				torn += d->process.threads[t].torn;
			/* The kernel's own facts never come from the arena. */
			EXPECT_EQ(vstatus[i], d->wait_status);
			EXPECT_EQ(uid, d->uid);
			EXPECT_EQ(v[i].start_ticks, d->process.start_ticks);
			for (uint32_t t = 0; t < d->process.nr_threads; t++)
				EXPECT_LE(d->process.threads[t].nr_activities,
					  ACTRACK_THREAD_MAX_SLOTS);
		}
	}
	ASSERT_EQ(0, actrack_monitor_stats(self->w.m, &st1));
	TH_LOG("%u rounds: %u victims started (%u refused by a broken arena), "
	       "%u reported, %u flagged corrupt, %u torn threads, %u died of "
	       "their own signal; module corruption counter %llu -> %llu",
	       rounds, started, refused, reported, flagged, torn, signalled,
	       (unsigned long long)st0.corruption,
	       (unsigned long long)st1.corruption);
	EXPECT_GT(started, 0);
	EXPECT_EQ(started, reported);
}

TEST_HARNESS_MAIN
