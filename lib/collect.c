// SPDX-License-Identifier: MIT
/*
 * Garbage collection of a file arena by a process that is not attached to
 * it: `actrack collect`.  actrack_collect_garbage() works on the caller's
 * own arena and attaches the caller first, which would leave the
 * collector's own process record behind as the next piece of garbage (an
 * `actrack ps` right after would list a dead "actrack collect").  This maps
 * the named arena writable without registering anything in it.
 *
 * The rule is actrack_collect_garbage()'s: an owner (pid, start_ticks)
 * whose pid no longer exists, or now has another start time, is dead and
 * its records are freed; the same pid with the same start time is alive,
 * however long ago it started.  The walk duplicates the one in
 * lib/lifecycle.c (another branch's file when this was written):
 * actrack_collect_garbage() should call collect_arena() once both are in.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "internal.h"

struct owner_key {
	uint32_t pid;
	uint64_t start_ticks;
};

static int cmp_owner(const void *x, const void *y)
{
	const struct owner_key *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start_ticks != b->start_ticks)
		return a->start_ticks < b->start_ticks ? -1 : 1;
	return 0;
}

static int collect_arena(struct actrack_arena *a,
			 struct actrack_collect_stats *st)
{
	struct actrack_arena_iter it;
	struct owner_key *keys;
	uint32_t ref, type, max, n = 0;

	max = actrack_arena_max_blocks(a);	/* <= 4 Mi: no overflow */
	keys = malloc((max ? max : 1) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	actrack_arena_iter_init(&it, a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type)) &&
	       n < max) {
		struct actrack_owner *o;

		if (!actrack_arena_is_owned_type(type))
			continue;
		o = actrack_arena_get(a, ref, type, sizeof(*o));
		if (!o || !at_load(&o->data_id) || !o->pid)
			continue;
		keys[n].pid = o->pid;
		keys[n].start_ticks = o->start_ticks;
		n++;
	}
	qsort(keys, n, sizeof(*keys), cmp_owner);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t live;
		int freed;

		if (i && !cmp_owner(&keys[i], &keys[i - 1]))
			continue;
		if (!actrack_read_start_ticks((pid_t)keys[i].pid, &live) &&
		    live == keys[i].start_ticks) {
			st->alive++;
			continue;
		}
		freed = actrack_arena_free_owner(a, keys[i].pid,
						 keys[i].start_ticks, 0);
		if (freed > 0) {
			st->dead++;
			st->records_freed += (uint32_t)freed;
		}
	}
	free(keys);
	return 0;
}

ACTRACK_API int actrack_arena_collect(const char *path, uint32_t flags,
				      struct actrack_collect_stats *st)
{
	struct actrack_collect_stats local = { 0 };
	char def[ACTRACK__DEFAULT_PATH_LEN];
	struct actrack_map m;
	int ret;

	if (flags & ~ACTRACK_SNAP_ARENA_FILE)
		return -EINVAL;
	if ((flags & ACTRACK_SNAP_ARENA_FILE) && !path)
		return -EINVAL;
	if (!(flags & ACTRACK_SNAP_ARENA_FILE) && path)
		return -EINVAL;
	/* The library's arena, but never creating a file: collecting in an
	 * arena nobody made is a mistake.  The kernel frees its arena's
	 * records itself, at each exit. */
	if (!path &&
	    __actrack_select_arena(NULL, false, def, &path) ==
	    ACTRACK_BACKEND_MODULE)
		return -EOPNOTSUPP;
	ret = __actrack_map_file(path, true, false, 0, &m);
	if (ret)
		return ret;
	/* An image is evidence of one moment: never rewrite it. */
	if (((struct actrack_arena_header *)m.arena.base)->saved_mono_ns) {
		ret = -EROFS;
		goto out;
	}
	ret = collect_arena(&m.arena, &local);
	if (!ret && st)
		*st = local;
out:
	__actrack_unmap(&m);
	return ret;
}
