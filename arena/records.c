// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The owner walk: everything an arena holds for one owner (pid, pid_ns,
 * start_ticks), or for every owner, as consistent, owner-checked copies.
 * The kernel builds its death reports with it, the library its file-mode
 * death reports and its snapshots, so the rules for trusting a record are
 * written once, here, and fuzzed once (fuzz/walk_fuzz.c) as the kernel
 * compiles them.
 *
 * Trust: as arena.c.  The walk reads the arena only through the core's
 * validated iterator and its seq/version-checked copies; the owner is
 * decided on the copy, never on the live bytes (which a reused block or a
 * hostile writer may change between a look and a copy).  A reference to
 * user data is only a hint: the block it names is copied and must carry
 * the referring record's owner, or it is someone else's and not shown.
 * Every loop is bounded: the iterator by the number of blocks (and it
 * never returns a block twice), the user data of a thread by its slots.
 */
#include "arena.h"

static __u32 walk_kind(__u32 type)
{
	switch (type) {
	case ACTRACK_TYPE_THREAD:
		return ACTRACK_WALK_THREADS;
	case ACTRACK_TYPE_PROCESS:
		return ACTRACK_WALK_PROCESSES;
	case ACTRACK_TYPE_MODULE:
		return ACTRACK_WALK_MODULES;
	case ACTRACK_TYPE_LOG:
		return ACTRACK_WALK_LOGS;
	default:
		/* User data is reached through references; free,
		 * transitioning and unknown (newer) types are not ours.
		 */
		return 0;
	}
}

/*
 * Is the copy @o of a record of @type one the walk reports?  Its owner
 * must be the walk's, and it must be a record an honest writer makes;
 * anything else is a forgery or damage and is flagged.
 */
static bool walk_accepts(struct actrack_walk *w, __u32 type,
			 const struct actrack_owner *o)
{
	__u32 pid = at_load(&o->pid), tid = at_load(&o->tid);

	if (w->key && !actrack_owner_matches(o, w->key))
		return false;	/* a reused block: someone else's now */
	if (!pid || (type == ACTRACK_TYPE_THREAD && !tid) ||
	    (type == ACTRACK_TYPE_PROCESS && tid)) {
		actrack_arena_set_corrupt(w->a);
		return false;
	}
	return true;
}

int actrack_walk_user_data(struct actrack_walk *w, __u32 ref,
			   const struct actrack_owner *owner, __u32 tid,
			   __u32 act)
{
	struct actrack_walk_rec r;
	struct actrack_owner_key k;
	struct actrack_user_data *ud;
	__u32 payload, need;
	void *buf;
	int n;

	if (!ref)
		return 0;
	payload = actrack_arena_payload_size(w->a, ref);
	if (!payload)
		return 0;	/* bad reference: flagged by the core */
	need = payload > sizeof(*ud) ? payload : (__u32)sizeof(*ud);
	if (need > w->ud_size && w->ud_grow) {
		buf = w->ud_grow(w, need);
		if (!buf)
			return -ENOMEM;
		w->ud_buf = buf;
		w->ud_size = need;
	}
	if (!w->ud_buf || w->ud_size < sizeof(*ud))
		return -EINVAL;
	n = actrack_arena_copy_owned(w->a, ref, ACTRACK_TYPE_USER_DATA,
				     w->ud_buf, w->ud_size);
	if (n < (int)sizeof(*ud))
		return 0;	/* gone, torn, or bad (flagged) */
	ud = w->ud_buf;
	k.pid = at_load(&owner->pid);
	k.pid_ns = at_load(&owner->pid_ns);
	memcpy(&k.start_ticks, &owner->start_ticks, sizeof(k.start_ticks));
	/*
	 * Exactly the referrer's owner: its pid_ns is a value, never the
	 * wildcard a key may hold, even where the arena's bytes say so.
	 */
	if (!actrack_owner_matches(&ud->owner, &k) ||
	    at_load(&ud->owner.pid_ns) != k.pid_ns ||
	    (tid && at_load(&ud->owner.tid) != tid))
		return 0;	/* a stale or forged reference */
	memset(&r, 0, sizeof(r));
	r.ref = ref;
	r.type = ACTRACK_TYPE_USER_DATA;
	r.len = (__u32)n;
	r.payload = payload;
	r.act = act;
	r.owner = &ud->owner;
	r.user_data = ud;
	n = w->fn(w, &r);
	return n < 0 ? n : 0;
}

static int walk_thread(struct actrack_walk *w, struct actrack_walk_rec *r)
{
	struct actrack_thread_copy *tc = &w->copy.thread;
	__u32 i;
	int ret;

	ret = actrack_arena_copy_thread(w->a, r->ref, tc);
	if (ret == -EAGAIN)
		r->torn = true;	/* tc->hdr holds its identity */
	else if (ret)
		return 0;	/* gone, or bad (flagged by the core) */
	if (!walk_accepts(w, ACTRACK_TYPE_THREAD, &tc->hdr.owner))
		return 0;
	/* A saved image whose saver never got a consistent copy. */
	if (tc->hdr.flags & ACTRACK_THREAD_IMAGE_TORN)
		r->torn = true;
	if (r->torn)
		tc->nr_slots = 0;
	r->len = sizeof(*tc);
	r->owner = &tc->hdr.owner;
	r->thread = tc;
	ret = w->fn(w, r);
	if (ret)
		return ret < 0 ? ret : 0;
	if (!(w->types & ACTRACK_WALK_USER_DATA))
		return 0;
	/* The core bounds nr_slots by the slots it holds. */
	for (i = 0; i < tc->nr_slots && i < ACTRACK_THREAD_MAX_SLOTS; i++) {
		ret = actrack_walk_user_data(w, tc->slots[i].user_data,
					     &tc->hdr.owner,
					     tc->hdr.owner.tid, i);
		if (ret)
			return ret;
	}
	return 0;
}

static int walk_record(struct actrack_walk *w, struct actrack_walk_rec *r)
{
	__u32 size;
	int n;

	switch (r->type) {
	case ACTRACK_TYPE_PROCESS:
		size = sizeof(w->copy.process);
		break;
	case ACTRACK_TYPE_MODULE:
		size = sizeof(w->copy.module);
		break;
	default:
		/* A log's header; its entries have seqcounts of their own. */
		size = sizeof(w->copy.log);
		break;
	}
	n = actrack_arena_copy_owned(w->a, r->ref, r->type, &w->copy, size);
	if (n < 0)
		return 0;	/* gone, torn, or bad (flagged by the core) */
	if (!walk_accepts(w, r->type, &w->copy.process.owner))
		return 0;
	if (r->type == ACTRACK_TYPE_MODULE &&
	    w->copy.module.build_id_size > ACTRACK_BUILD_ID_MAX) {
		actrack_arena_set_corrupt(w->a);
		return 0;
	}
	r->len = (__u32)n;
	r->owner = &w->copy.process.owner;
	r->process = &w->copy.process;	/* any member: same address */
	n = w->fn(w, r);
	if (n)
		return n < 0 ? n : 0;
	if (r->type != ACTRACK_TYPE_PROCESS ||
	    !(w->types & ACTRACK_WALK_USER_DATA))
		return 0;
	return actrack_walk_user_data(w, w->copy.process.user_data,
				      &w->copy.process.owner, 0,
				      ACTRACK_WALK_PROCESS_DATA);
}

int actrack_walk_records(struct actrack_walk *w)
{
	struct actrack_walk_rec r;
	struct actrack_arena_iter it;
	const struct actrack_owner *o;
	__u32 ref, type;
	int ret;

	if (!w || !w->a || !w->fn || !w->seen)
		return -EINVAL;
	if ((w->types & ACTRACK_WALK_USER_DATA) && !w->ud_grow &&
	    (!w->ud_buf || w->ud_size < sizeof(struct actrack_user_data)))
		return -EINVAL;
	actrack_arena_iter_init_once(&it, w->a, w->seen);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type))) {
		if (!(w->types & walk_kind(type)))
			continue;
		/*
		 * A cheap look at the live owner first, so that a keyed walk
		 * copies only its own records; the copy's owner decides.
		 */
		if (w->key) {
			o = actrack_arena_get(w->a, ref, type, sizeof(*o));
			if (!o || !actrack_owner_matches(o, w->key))
				continue;
		}
		memset(&r, 0, sizeof(r));
		r.ref = ref;
		r.type = type;
		r.payload = actrack_arena_payload_size(w->a, ref);
		if (type == ACTRACK_TYPE_THREAD)
			ret = walk_thread(w, &r);
		else
			ret = walk_record(w, &r);
		if (ret < 0)
			return ret;
		/* A record may have cost 65 copies: let others run. */
		at_yield();
	}
	return 0;
}
