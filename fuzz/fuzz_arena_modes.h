/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz targets of the arena core (arena_fuzz, walk_fuzz):
 * how an input becomes an arena in memory.  Byte 0 of the input selects
 * the mode, byte 1 holds the target's flags, the rest is data:
 *   mode 0: the data is the arena (header included), as a hostile file;
 *   mode 1: a fresh header, the data is everything after it (claimed as
 *           allocated up to its end);
 *   mode 2: an arena the target populates, then patched with the data
 *           read as (offset u16, value u32) word patches.
 * The arena is a heap buffer of exactly FUZZ_SIZE bytes, so ASan reports
 * any access outside it.
 */
#ifndef ACTRACK_FUZZ_ARENA_MODES_H
#define ACTRACK_FUZZ_ARENA_MODES_H

#include <stdint.h>
#include <string.h>

#include "arena.h"

#define FUZZ_SIZE	ACTRACK_ARENA_MIN_SIZE

/* Mode 2's arena, before the patches; @flags is the input's byte 1. */
typedef void (*fuzz_populate_fn)(struct actrack_arena *a, int flags);

/*
 * Fill @mem (FUZZ_SIZE bytes) from the input @data/@size and set @a up
 * on it, writable (the caller decides the view the test takes).
 * Return: the input's flags byte, or -1 for an input too short to have one.
 */
static inline int fuzz_arena_from_input(struct actrack_arena *a,
					unsigned char *mem,
					const uint8_t *data, size_t size,
					fuzz_populate_fn populate)
{
	__u32 off, val;
	size_t i, n;
	int mode, flags;

	if (size < 2)
		return -1;
	mode = data[0] % 3;
	flags = data[1];
	data += 2;
	size -= 2;
	memset(mem, 0, FUZZ_SIZE);
	*a = (struct actrack_arena){ .base = mem, .size = FUZZ_SIZE,
				     .writable = true };
	switch (mode) {
	case 0:
		memcpy(mem, data, size < FUZZ_SIZE ? size : FUZZ_SIZE);
		break;
	case 1:
		actrack_arena_format(a, NULL);
		n = size < FUZZ_SIZE - 256 ? size : FUZZ_SIZE - 256;
		memcpy(mem + 256, data, n);
		((struct actrack_arena_header *)mem)->freeptr =
			256 + (__u32)((n + 63) & ~(size_t)63);
		break;
	default:
		actrack_arena_format(a, NULL);
		populate(a, flags);
		for (i = 0; i + 6 <= size; i += 6) {
			off = ((__u32)data[i] | (__u32)data[i + 1] << 8) & ~3U;
			memcpy(&val, data + i + 2, 4);
			if (off + 4 <= FUZZ_SIZE)
				memcpy(mem + off, &val, 4);
		}
		break;
	}
	a->corrupt = false;
	return flags;
}

#endif /* ACTRACK_FUZZ_ARENA_MODES_H */
