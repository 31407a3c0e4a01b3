/* SPDX-License-Identifier: MIT */
/*
 * An arena on anonymous memory between two PROT_NONE guard pages, for the
 * arena-core tests (arena_basic, arena_corrupt, arena_concurrency): any
 * access outside [base, base + size) faults.  The arena ends exactly at
 * the trailing guard page.  Compiled once, in helpers/guarded_arena.c.
 */
#ifndef ACTRACK_TEST_GUARDED_ARENA_H
#define ACTRACK_TEST_GUARDED_ARENA_H

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "arena.h"

struct tarena {
	struct actrack_arena a;
	char *map;
	size_t map_len;
	size_t body;		/* the mapped pages between the guards */
};

/* Map @size bytes between the guards, unformatted.  Return 0 or -errno. */
int tarena_map(struct tarena *t, __u32 size);

/* Map and format, from header template @tmpl (may be NULL). */
int tarena_format(struct tarena *t, __u32 size,
		  const struct actrack_arena_header *tmpl);

/* Read-only protection makes any store by the code under test fault. */
void tarena_protect(struct tarena *t, bool writable);

void tarena_free(struct tarena *t);

static inline struct actrack_arena_header *hdr_of(struct tarena *t)
{
	return t->a.base;
}

#endif /* ACTRACK_TEST_GUARDED_ARENA_H */
