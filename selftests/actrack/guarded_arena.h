/* SPDX-License-Identifier: MIT */
/*
 * An arena on anonymous memory between two PROT_NONE guard pages, for the
 * arena-core tests (arena_basic, arena_corrupt, arena_concurrency): any
 * access outside [base, base + size) faults.  The arena ends exactly at
 * the trailing guard page.
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

static inline int tarena_map(struct tarena *t, __u32 size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	memset(t, 0, sizeof(*t));
	t->body = (size + pg - 1) / pg * pg;
	t->map_len = t->body + 2 * pg;
	t->map = mmap(NULL, t->map_len, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->map == MAP_FAILED)
		return -errno;
	if (mprotect(t->map + pg, t->body, PROT_READ | PROT_WRITE))
		return -errno;
	t->a.base = t->map + pg + (t->body - size);
	t->a.size = size;
	t->a.writable = true;
	return 0;
}

/* Map and format, from header template @tmpl (may be NULL). */
static inline int tarena_format(struct tarena *t, __u32 size,
				const struct actrack_arena_header *tmpl)
{
	int ret = tarena_map(t, size);

	return ret ? ret : actrack_arena_format(&t->a, tmpl);
}

/* Read-only protection makes any store by the code under test fault. */
static inline void tarena_protect(struct tarena *t, bool writable)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	mprotect(t->map + pg, t->body,
		 PROT_READ | (writable ? PROT_WRITE : 0));
	t->a.writable = writable;
}

static inline void tarena_free(struct tarena *t)
{
	munmap(t->map, t->map_len);
}

static inline struct actrack_arena_header *hdr_of(struct tarena *t)
{
	return t->a.base;
}

#endif /* ACTRACK_TEST_GUARDED_ARENA_H */
