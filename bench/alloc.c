// SPDX-License-Identifier: MIT
/*
 * The arena core's allocator: what a new thread's first push pays for its
 * tracker, and what filling an arena costs, against the allocator before
 * the reclaim window (every allocation scanned the whole iterable list
 * from its head before it bumped: bench/fullwalk, the same arena.c built
 * with the window off, linked next to the library's core).
 *
 *   fill             allocate 4,096 8-slot trackers (640-byte blocks) into
 *                    a fresh arena: the window against the whole-list walk
 *                    (O(n) against O(n^2) in all)
 *   fill 64 MiB      a whole 64 MiB arena of 8-slot trackers (~104,000
 *                    blocks) with the window; baseline: the 4,096-block
 *                    fill scaled by the block count (ratio 1: linear).  The
 *                    whole-list walk would take minutes: not run.
 *   one allocation   in a 64 MiB arena filled to 98% with 8-slot or with
 *                    64-slot trackers (then freed again, medians): the
 *                    window against the whole-list walk, on the same
 *                    memory, alternating
 *   full arena       an allocation that fails in a full 64 MiB arena:
 *                    both scan the whole list (the window's answer must
 *                    stay exact), so the ratio is about 1
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "arena.h"
#include "bench.h"
#include "fullwalk.h"

#define MIB		(1024U * 1024)
#define TRACKER(slots)	((__u32)(sizeof(struct actrack_thread) + \
				 (slots) * sizeof(struct actrack_activity)))
#define TYPE		ACTRACK_TYPE_THREAD

static const struct bench_arena_ops window_ops = {
	.format = actrack_arena_format,
	.alloc = actrack_arena_alloc,
	.free = actrack_arena_free,
};

static int arena_new(struct actrack_arena *a, __u32 size,
		     const struct bench_arena_ops *ops)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	memset(a, 0, sizeof(*a));
	a->base = p;
	a->size = size;
	a->writable = true;
	return ops->format(a, NULL);
}

static void arena_del(struct actrack_arena *a)
{
	munmap(a->base, a->size);
}

/* Seconds to allocate @n blocks of @payload into a fresh arena of @size. */
static double fill_time(const struct bench_arena_ops *ops, __u32 size,
			__u32 payload, __u32 n)
{
	struct actrack_arena a;
	uint64_t t0;
	__u32 i;
	double s;

	if (arena_new(&a, size, ops))
		return -1;
	t0 = bench_now_ns();
	for (i = 0; i < n; i++)
		if (!ops->alloc(&a, TYPE, payload))
			break;
	s = (double)(bench_now_ns() - t0) / 1e9;
	arena_del(&a);
	return i == n ? s : -1;
}

static double fill_median(const struct bench_arena_ops *ops, __u32 size,
			  __u32 payload, __u32 n, int runs)
{
	double v[9];
	int i;

	for (i = 0; i < runs; i++)
		if ((v[i] = fill_time(ops, size, payload, n)) < 0)
			return -1;
	return bench_median(v, runs);
}

/* Blocks of @payload until the free pointer passes @fill of the size. */
static __u32 fill_to(struct actrack_arena *a, __u32 payload, double fill)
{
	__u32 n = 0;

	while (actrack_arena_used(a) < fill * a->size &&
	       actrack_arena_alloc(a, TYPE, payload))
		n++;
	return n;
}

#define REPS	41

/*
 * One allocation (then freed again) in @a by each allocator, alternating;
 * medians in microseconds.
 */
static void one_alloc(struct actrack_arena *a, __u32 payload, double *win,
		      double *full)
{
	double w[REPS], f[REPS];
	uint64_t t0;
	__u32 ref;
	int i;

	for (i = 0; i < REPS; i++) {
		t0 = bench_now_ns();
		ref = window_ops.alloc(a, TYPE, payload);
		w[i] = (double)(bench_now_ns() - t0) / 1e3;
		if (ref)
			window_ops.free(a, ref, TYPE);
		t0 = bench_now_ns();
		ref = bench_fullwalk.alloc(a, TYPE, payload);
		f[i] = (double)(bench_now_ns() - t0) / 1e3;
		if (ref)
			bench_fullwalk.free(a, ref, TYPE);
	}
	*win = bench_median(w, REPS);
	*full = bench_median(f, REPS);
}

int main(void)
{
	struct actrack_arena a;
	double w, f, w64;
	__u32 n;
	char name[96];
	int slots[] = { 8, 64 };
	size_t i;

	/* Filling: 4,096 8-slot trackers, 640-byte blocks. */
	w = fill_median(&window_ops, 4 * MIB, TRACKER(8), 4096, 5);
	f = fill_median(&bench_fullwalk, 4 * MIB, TRACKER(8), 4096, 3);
	if (w < 0 || f < 0)
		printf("bench alloc_fill_4096_trackers SKIP fill failed\n");
	else
		bench_line("alloc_fill_4096_trackers", w * 1e3, "ms", f * 1e3);

	/* A whole 64 MiB arena: only the window (the walk: minutes). */
	n = (64 * MIB - ACTRACK_ARENA_HEADER_SIZE) / 640;
	w64 = fill_median(&window_ops, 64 * MIB, TRACKER(8), n, 3);
	if (w64 < 0 || w < 0)
		printf("bench alloc_fill_64mib_trackers SKIP fill failed\n");
	else
		bench_line("alloc_fill_64mib_trackers", w64 * 1e3, "ms",
			   w * 1e3 * n / 4096);

	/* One allocation in a 64 MiB arena filled to 98%. */
	for (i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		if (arena_new(&a, 64 * MIB, &window_ops)) {
			printf("bench alloc_one SKIP no memory\n");
			return 1;
		}
		n = fill_to(&a, TRACKER(slots[i]), 0.98);
		one_alloc(&a, TRACKER(slots[i]), &w, &f);
		snprintf(name, sizeof(name),
			 "alloc_one_98pct_64mib_%dslot_trackers", slots[i]);
		printf("# %u blocks of %u bytes\n", n,
		       (TRACKER(slots[i]) + 16 + 63) / 64 * 64);
		bench_line(name, w, "us", f);
		arena_del(&a);
	}

	/* A failing allocation in a full arena: both walk everything. */
	if (arena_new(&a, 64 * MIB, &window_ops)) {
		printf("bench alloc_one_full SKIP no memory\n");
		return 1;
	}
	n = fill_to(&a, TRACKER(8), 1.0);
	one_alloc(&a, TRACKER(8), &w, &f);
	printf("# %u blocks, full\n", n);
	bench_line("alloc_one_full_64mib_fails", w, "us", f);
	arena_del(&a);
	return 0;
}
