// SPDX-License-Identifier: MIT
/*
 * arena/arena.c with the reclaim window off: the whole-list walk before
 * every bump, bench/alloc's baseline (see fullwalk.h).
 */
#define AT_RECLAIM_WINDOW	0
#include "../../arena/arena.c"
#include "fullwalk.h"

const struct bench_arena_ops bench_fullwalk = {
	.format = actrack_arena_format,
	.alloc = actrack_arena_alloc,
	.free = actrack_arena_free,
};
