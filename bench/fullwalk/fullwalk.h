/* SPDX-License-Identifier: MIT */
/*
 * The arena core's allocator as it was before the reclaim window, for
 * bench/alloc's in-run baseline: arena/arena.c built again with
 * AT_RECLAIM_WINDOW 0 (every allocation scans the whole iterable list from
 * its head before it bumps), into one object whose only global symbol is
 * this table (objcopy --keep-global-symbol, see the Makefile), so that it
 * links next to the library's own arena core.
 */
#ifndef ACTRACK_BENCH_FULLWALK_H
#define ACTRACK_BENCH_FULLWALK_H

#include "arena.h"

struct bench_arena_ops {
	int (*format)(struct actrack_arena *a,
		      const struct actrack_arena_header *hdr);
	__u32 (*alloc)(struct actrack_arena *a, __u32 type, __u32 size);
	bool (*free)(struct actrack_arena *a, __u32 ref, __u32 type);
};

extern const struct bench_arena_ops bench_fullwalk;

#endif /* ACTRACK_BENCH_FULLWALK_H */
