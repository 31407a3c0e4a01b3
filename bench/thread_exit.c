// SPDX-License-Identifier: MIT
/*
 * A thread's exit as the arena fills, on the host: the work the module
 * does for it, without the VM's noise.  The module's exit probe only
 * notes the tid and queues its arena's cleanup; the cleanup worker then
 * frees the thread's records (kmod/cleanup.c) with the same arena/arena.c
 * compiled in here: through the tracker the thread registered
 * (actrack_arena_free_thread(), ABI 1.3), or, for a process that never
 * registers, with a tid-filtered walk (actrack_arena_free_owned_by()).
 * Each is timed in a 64 MiB arena holding N live 8-slot trackers of other
 * processes (N = 0, 1,000, 4,000, 16,000, 64,000) plus the exiting
 * thread's own:
 *
 *   thread_exit_registered_N  the registered free, median of RUNS,
 *                           against the same call with N = 0
 *   thread_exit_walk_N      one tid-filtered free, median of RUNS,
 *                           against the same call with N = 0
 *   thread_exit_by_ref_N    the library's own path when a thread returns
 *                           (its key destructor frees its tracker by
 *                           reference: actrack_arena_free_owned()), the
 *                           O(1) baseline, in the same arena
 *
 * `thread_exit --loop walk|registered N COUNT` runs COUNT frees of that
 * kind at fill N for callgrind (bench/run), which counts kernel_free()
 * alone (not the allocation before it): instructions,
 * which the load cannot move.
 * Never an assertion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "actrack.h"
#include "arena.h"
#include "bench.h"

#define ARENA_SIZE	(64U << 20)
#define RUNS		15
#define PAYLOAD		((__u32)(sizeof(struct actrack_thread) + \
			 ACTRACK_DEFAULT_SLOTS * sizeof(struct actrack_activity)))
#define EXIT_PID	1000U
#define EXIT_TID	1001U
#define START_TICKS	77U

static const struct actrack_owner_key exiting = {
	.pid = EXIT_PID, .pid_ns = 1, .start_ticks = START_TICKS,
};

/* The batch of one exited thread, as kmod/cleanup.c filters it. */
static bool one_tid(void *ctx, __u32 tid)
{
	return tid == *(const __u32 *)ctx;
}

/* A published tracker of (@pid, @tid); its data id in *@id. */
static __u32 add_tracker(struct actrack_arena *a, __u32 pid, __u32 tid,
			 __u32 *id)
{
	struct actrack_owner o = {
		.pid = pid, .tid = tid, .pid_ns = 1, .start_ticks = START_TICKS,
	};
	struct actrack_thread *t;
	__u32 ref;

	ref = actrack_arena_alloc_owned(a, ACTRACK_TYPE_THREAD, PAYLOAD, &o,
					(void **)&t);
	if (!ref)
		return 0;
	t->slot_count = ACTRACK_DEFAULT_SLOTS;
	*id = actrack_arena_new_data_id(a);
	__atomic_store_n(&t->owner.data_id, *id, __ATOMIC_RELEASE);
	return ref;
}

/* A 64 MiB arena: the exiting process's main thread, then @n others. */
static int make_arena(struct actrack_arena *a, int n)
{
	struct actrack_arena_header h = { .user_hz = 100 };
	__u32 id;

	memset(a, 0, sizeof(*a));
	a->size = ARENA_SIZE;
	a->writable = true;
	a->base = calloc(1, ARENA_SIZE);
	if (!a->base || actrack_arena_format(a, &h) ||
	    !add_tracker(a, EXIT_PID, EXIT_PID, &id))
		return -1;
	for (int i = 0; i < n; i++)
		if (!add_tracker(a, 2000U + (__u32)i / 8, 2000U + (__u32)i, &id))
			return -1;
	return 0;
}

/* The kernel's free of exited thread EXIT_TID whose tracker is @ref. */
static int __attribute__((noinline)) kernel_free(struct actrack_arena *a,
						 __u32 ref, bool registered)
{
	__u32 tid = EXIT_TID;

	if (registered)
		return actrack_arena_free_thread(a, &exiting, tid, ref);
	return actrack_arena_free_owned_by(a, &exiting, one_tid, &tid);
}

static int __attribute__((noinline)) exit_loop(struct actrack_arena *a,
					      bool registered, long count)
{
	int freed = 0;
	__u32 ref, id;

	for (long i = 0; i < count; i++) {
		ref = add_tracker(a, EXIT_PID, EXIT_TID, &id);
		if (!ref)
			return -1;
		freed += kernel_free(a, ref, registered);
	}
	return freed;
}

/* Median ns of the kernel's free (the allocation before it not timed). */
static double time_kernel_free(struct actrack_arena *a, bool registered)
{
	double v[RUNS];

	for (int k = 0; k < RUNS; k++) {
		uint64_t t0;
		__u32 ref, id;

		ref = add_tracker(a, EXIT_PID, EXIT_TID, &id);
		if (!ref)
			return -1;
		t0 = bench_now_ns();
		if (kernel_free(a, ref, registered) != 1)
			return -1;
		v[k] = (double)(bench_now_ns() - t0);
	}
	return bench_median(v, RUNS);
}

/* Median ns of the library's free by reference, in the same arena. */
static double time_by_ref(struct actrack_arena *a)
{
	double v[RUNS];

	for (int k = 0; k < RUNS; k++) {
		uint64_t t0;
		__u32 ref, id;

		ref = add_tracker(a, EXIT_PID, EXIT_TID, &id);
		if (!ref)
			return -1;
		t0 = bench_now_ns();
		if (!actrack_arena_free_owned(a, ref, ACTRACK_TYPE_THREAD, id))
			return -1;
		v[k] = (double)(bench_now_ns() - t0);
	}
	return bench_median(v, RUNS);
}

int main(int argc, char **argv)
{
	static const int fills[] = { 0, 1000, 4000, 16000, 64000 };
	double base_walk = 0, base_ref = 0, base_reg = 0;
	struct actrack_arena a;
	char name[64];

	if (argc == 5 && !strcmp(argv[1], "--loop")) {
		bool registered = !strcmp(argv[2], "registered");
		long count = atol(argv[4]);
		int freed;

		if (make_arena(&a, atoi(argv[3])))
			return 1;
		freed = exit_loop(&a, registered, count);
		free(a.base);
		return freed == count ? 0 : 1;
	}
	for (size_t i = 0; i < sizeof(fills) / sizeof(fills[0]); i++) {
		double walk, ref, reg;

		snprintf(name, sizeof(name), "thread_exit_walk_%d", fills[i]);
		if (make_arena(&a, fills[i])) {
			printf("bench %s SKIP cannot fill the arena\n", name);
			free(a.base);
			continue;
		}
		reg = time_kernel_free(&a, true);
		walk = time_kernel_free(&a, false);
		ref = time_by_ref(&a);
		free(a.base);
		if (walk < 0 || ref < 0 || reg < 0) {
			printf("bench %s FAIL a free did not free the tracker\n",
			       name);
			return 1;
		}
		if (!fills[i]) {
			base_walk = walk;
			base_ref = ref;
			base_reg = reg;
		}
		snprintf(name, sizeof(name), "thread_exit_registered_%d",
			 fills[i]);
		bench_line(name, reg, "ns", base_reg);
		snprintf(name, sizeof(name), "thread_exit_walk_%d", fills[i]);
		bench_line(name, walk / 1e3, "us", base_walk / 1e3);
		snprintf(name, sizeof(name), "thread_exit_by_ref_%d", fills[i]);
		bench_line(name, ref, "ns", base_ref);
	}
	return 0;
}
