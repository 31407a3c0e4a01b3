// SPDX-License-Identifier: MIT
/*
 * Garbage collection of a file arena by a process that is not attached to
 * it: `actrack collect`.  actrack_collect_garbage() works on the caller's
 * own arena and attaches the caller first, which would leave the
 * collector's own process record behind as the next piece of garbage (an
 * `actrack ps` right after would list a dead "actrack collect").  This maps
 * the named arena writable without registering anything in it.
 *
 * The rule, shared with actrack_collect_garbage() (which calls
 * __actrack_collect_dead() on the caller's own arena): an owner
 * (pid, start_ticks) whose pid no longer exists, or now has another start
 * time, is dead and its records are freed; the same pid with the same
 * start time is alive, however long ago it started.  Only owners of the
 * collector's own pid namespace can be judged that way: /proc here says
 * nothing about pid 7 of a container, so those are kept and counted as
 * foreign.  Owners that recorded no namespace (0) are judged as local.
 *
 * The same collection runs inside an allocation that found a file arena
 * full (__actrack_alloc_owned()), which may be a push from a signal
 * handler that interrupted malloc(): so nothing here allocates from the
 * heap (the owner list is an anonymous mapping, sorted in place) and
 * nothing takes a lock; open() and read() of /proc are all it calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "internal.h"

static int cmp_owner(const void *x, const void *y)
{
	const struct actrack_owner_key *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->pid_ns != b->pid_ns)
		return a->pid_ns < b->pid_ns ? -1 : 1;
	if (a->start_ticks != b->start_ticks)
		return a->start_ticks < b->start_ticks ? -1 : 1;
	return 0;
}

static void sift_down(struct actrack_owner_key *k, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		struct actrack_owner_key t;

		if (child >= n)
			return;
		if (child + 1 < n && cmp_owner(&k[child], &k[child + 1]) < 0)
			child++;
		if (cmp_owner(&k[root], &k[child]) >= 0)
			return;
		t = k[root];
		k[root] = k[child];
		k[child] = t;
		root = child;
	}
}

/* Heapsort: in place and O(n log n) always (qsort() may call malloc()). */
static void sort_owners(struct actrack_owner_key *k, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(k, i, n);
	for (size_t end = n; end-- > 1;) {
		struct actrack_owner_key t = k[0];

		k[0] = k[end];
		k[end] = t;
		sift_down(k, 0, end);
	}
}

/*
 * The owners of @a's published records, sorted, duplicates included.
 * Acquire pairs with __actrack_publish_owner()'s release: the owner fields
 * read next are the published ones.  The block may be freed or reused by
 * another thread meanwhile: single loads, and a changed data_id means skip.
 */
static uint32_t list_owners(struct actrack_arena *a,
			    struct actrack_owner_key *keys, uint32_t max)
{
	struct actrack_arena_iter it;
	uint32_t ref, type, id, n = 0;

	actrack_arena_iter_init(&it, a);
	while (n < max &&
	       (ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type))) {
		struct actrack_owner *o;

		if (!actrack_arena_is_owned_type(type))
			continue;
		o = actrack_arena_get(a, ref, type, sizeof(*o));
		if (!o || !(id = at_load_acquire(&o->data_id)))
			continue;
		keys[n].pid = at_load(&o->pid);
		keys[n].pid_ns = at_load(&o->pid_ns);
		keys[n].start_ticks = at_load(&o->start_ticks);
		at_fence_acquire();
		if (!keys[n].pid || at_load(&o->data_id) != id)
			continue;
		n++;
	}
	sort_owners(keys, n);
	return n;
}

int __actrack_collect_dead(struct actrack_arena *a,
			   struct actrack_collect_stats *st)
{
	uint32_t self_ns = __actrack_pid_ns_of("self"), max, n;
	struct actrack_owner_key *keys;
	size_t len;

	memset(st, 0, sizeof(*st));
	max = actrack_arena_max_blocks(a);	/* <= 4 Mi: no overflow */
	len = (size_t)(max ? max : 1) * sizeof(*keys);
	keys = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (keys == MAP_FAILED)
		return -ENOMEM;
	n = list_owners(a, keys, max);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t live;
		int freed;

		if (i && !cmp_owner(&keys[i], &keys[i - 1]))
			continue;
		if (keys[i].pid_ns && self_ns && keys[i].pid_ns != self_ns) {
			st->foreign++;
			continue;
		}
		if (!actrack_read_start_ticks((pid_t)keys[i].pid, &live) &&
		    live == keys[i].start_ticks) {
			st->alive++;
			continue;
		}
		freed = actrack_arena_free_owned_by(a, &keys[i], NULL, NULL);
		if (freed > 0) {
			st->dead++;
			st->records_freed += (uint32_t)freed;
		}
	}
	munmap(keys, len);
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
	ret = __actrack_collect_dead(&m.arena, &local);
	if (!ret && st)
		*st = local;
out:
	__actrack_unmap(&m);
	return ret;
}
