// SPDX-License-Identifier: MIT
/*
 * An arena between two guard pages (guarded_arena.h), for the arena_*
 * tests.
 */
#include <stdbool.h>
#include "guarded_arena.h"

int tarena_map(struct tarena *t, __u32 size)
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

int tarena_format(struct tarena *t, __u32 size,
		  const struct actrack_arena_header *tmpl)
{
	int ret = tarena_map(t, size);

	return ret ? ret : actrack_arena_format(&t->a, tmpl);
}

void tarena_protect(struct tarena *t, bool writable)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	mprotect(t->map + pg, t->body,
		 PROT_READ | (writable ? PROT_WRITE : 0));
	t->a.writable = writable;
}

void tarena_free(struct tarena *t)
{
	munmap(t->map, t->map_len);
}
