// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The arena core: a lock-free, persistent block allocator in a shared
 * mapping, after the design of Chromium's PersistentMemoryAllocator, plus
 * the record walks (owner cleanup, tracker snapshots) that the kernel and
 * the userspace analyzer share.
 *
 * Layout: a 256-byte header at reference 0, then 64-byte aligned blocks,
 * each starting with struct actrack_block.  Blocks are carved from the
 * free pointer by CAS and never returned to it; freeing only changes a
 * block's type to the complement of its old type, and a later allocation
 * of the same type may reclaim it.  Blocks meant to be found are appended
 * to a singly linked list (a Michael-Scott queue whose sentinel is the
 * block header embedded in the arena header), which is never unlinked, so
 * a reader holding a reference can always continue its walk.
 *
 * Trust: this file runs in the kernel on memory that every process of the
 * uid can write at any moment.  Each shared field is loaded once into a
 * local (at_load*) and validated before it is used; all geometry is checked
 * against the caller's trusted size, never the header's; every loop has a
 * bound derived from the trusted size; and no store ever leaves
 * [base, base + size).  A reader that meets bad data sets its own corrupt
 * flag and, if it may write, the shared one, then stops or skips.
 */
#include "arena.h"

/*
 * ABI pins.  The same assertions compile in the kernel and in userspace,
 * on 64- and 32-bit (i386 aligns __u64 to 4 inside structs, so every __u64
 * field of the ABI sits on a naturally aligned offset by construction and
 * these sizes come out identical).
 */
at_static_assert(sizeof(struct actrack_block) == 16, "actrack_block");
at_static_assert(sizeof(struct actrack_arena_header) == ACTRACK_ARENA_HEADER_SIZE,
		 "actrack_arena_header");
at_static_assert(ACTRACK_ARENA_HEADER_SIZE == 256, "header size");
at_static_assert(offsetof(struct actrack_arena_header, queue) == ACTRACK_REF_QUEUE,
		 "queue sentinel reference");
at_static_assert(offsetof(struct actrack_arena_header, create_mono_ns) == 64,
		 "arena header u64 alignment");
at_static_assert(sizeof(struct actrack_owner) == 24, "actrack_owner");
at_static_assert(offsetof(struct actrack_owner, start_ticks) == 16,
		 "actrack_owner.start_ticks");
at_static_assert(sizeof(struct actrack_activity) == 64, "actrack_activity");
at_static_assert(sizeof(struct actrack_thread) == 112, "actrack_thread");
at_static_assert(offsetof(struct actrack_thread, fatal_addr) == 88,
		 "actrack_thread.fatal_addr");
at_static_assert(sizeof(struct actrack_block) + sizeof(struct actrack_thread) == 128,
		 "thread slots start on a cache line");
at_static_assert(sizeof(struct actrack_user_data) == 48, "actrack_user_data");
at_static_assert(sizeof(struct actrack_field) == 8, "actrack_field");
at_static_assert(sizeof(struct actrack_value_ref) == 16, "actrack_value_ref");
at_static_assert(sizeof(struct actrack_process) == 584, "actrack_process");
at_static_assert(offsetof(struct actrack_process, launch_time_ns) == 40,
		 "actrack_process.launch_time_ns");
at_static_assert(sizeof(struct actrack_log_entry) == 128, "actrack_log_entry");
at_static_assert(sizeof(struct actrack_log) == 40, "actrack_log");
at_static_assert(sizeof(struct actrack_module) == 344, "actrack_module");
at_static_assert(sizeof(struct actrack_version) == 8, "actrack_version");
at_static_assert(sizeof(struct actrack_layout) == 56, "actrack_layout");
at_static_assert(offsetof(struct actrack_layout, arena_offset) == 8,
		 "actrack_layout.arena_offset");
at_static_assert(sizeof(struct actrack_attach) == 32, "actrack_attach");
at_static_assert(offsetof(struct actrack_attach, start_ticks) == 8,
		 "actrack_attach.start_ticks");
at_static_assert(sizeof(struct actrack_select) == 16, "actrack_select");
at_static_assert(sizeof(struct actrack_thread_reg) == 16, "actrack_thread_reg");
at_static_assert(ACTRACK_THREAD_DATA_OFFSET(1) == 112 + 64 + 128,
		 "thread data list after the held set");
/* Slots are copied whole into struct actrack_thread_copy. */
at_static_assert(ACTRACK_THREAD_MAX_SLOTS * sizeof(struct actrack_activity) <= 4096,
		 "thread copy size");

#define AT_BLOCK_HDR	((__u32)sizeof(struct actrack_block))

/*
 * The data id of an owned record being freed (see free_owned()): never
 * handed out by actrack_arena_new_data_id().
 */
#define AT_DATA_ID_CLAIMED	0xFFFFFFFFU

/* Live types have the ACTRACK_TYPE() shape; free types are complements. */
#define AT_TYPE_MASK	0xFFF00000U
#define AT_TYPE_BASE	0x41C00000U

/*
 * Legitimate writers only ever OR one of three bits into header.flags, so a
 * CAS that keeps failing more often than this is a hostile writer.
 */
#define AT_FLAG_RETRIES	64

static inline struct actrack_arena_header *
arena_hdr(const struct actrack_arena *a)
{
	return (struct actrack_arena_header *)a->base;
}

static inline __u32 at_min_u32(__u32 x, __u32 y)
{
	return x < y ? x : y;
}

static inline void *block_payload(struct actrack_block *b)
{
	return (char *)b + AT_BLOCK_HDR;
}

static inline bool type_is_live(__u32 type)
{
	return (type & AT_TYPE_MASK) == AT_TYPE_BASE;
}

static inline bool type_is_free(__u32 type)
{
	return type_is_live(~type);
}

static void arena_set_flag(struct actrack_arena *a, __u32 flag)
{
	struct actrack_arena_header *h = arena_hdr(a);
	__u32 old, seen;
	int i;

	if (!a->writable)
		return;
	old = at_load(&h->flags);
	for (i = 0; i < AT_FLAG_RETRIES; i++) {
		if (old & flag)
			return;
		seen = at_cas(&h->flags, old, old | flag);
		if (seen == old)
			return;
		old = seen;
	}
}

void actrack_arena_set_corrupt(struct actrack_arena *a)
{
	/* The private flag first: the shared one is anyone's to clear. */
	a->corrupt = true;
	arena_set_flag(a, ACTRACK_ARENA_CORRUPT);
}

bool actrack_arena_is_corrupt(struct actrack_arena *a)
{
	if (a->corrupt)
		return true;
	if (at_load(&arena_hdr(a)->flags) & ACTRACK_ARENA_CORRUPT) {
		/* Latch it: a later clear by another process proves nothing. */
		a->corrupt = true;
		return true;
	}
	return false;
}

/*
 * Validate @ref and return its block header and (through @size_out) the
 * block size that was validated.  Callers must use that size, not reload
 * it: the field may change under us.  Reference 0 ("none") is invalid here;
 * the public wrappers filter it out before calling so that it is not
 * reported as corruption.
 */
static struct actrack_block *arena_block(struct actrack_arena *a, __u32 ref,
					 __u32 *size_out)
{
	struct actrack_arena_header *h = arena_hdr(a);
	struct actrack_block *b;
	__u32 size, cookie, freeptr, limit;

	if (ref < ACTRACK_ARENA_HEADER_SIZE || ref % ACTRACK_BLOCK_ALIGN ||
	    ref >= a->size || a->size - ref < AT_BLOCK_HDR)
		goto bad;
	b = (struct actrack_block *)((char *)a->base + ref);
	size = at_load(&b->size);
	cookie = at_load(&b->cookie);
	if (cookie != ACTRACK_BLOCK_COOKIE || size < ACTRACK_BLOCK_ALIGN ||
	    size % ACTRACK_BLOCK_ALIGN)
		goto bad;
	/*
	 * A block lies below the free pointer: it was carved out of it before
	 * any reference to it was published.  Read the pointer once and never
	 * trust it beyond our own size.
	 */
	freeptr = at_load(&h->freeptr);
	limit = at_min_u32(freeptr, a->size);
	if (ref >= limit || size > limit - ref)
		goto bad;
	if (size_out)
		*size_out = size;
	return b;
bad:
	actrack_arena_set_corrupt(a);
	return NULL;
}

/* A list link: the queue sentinel or a valid block. */
static struct actrack_block *arena_link(struct actrack_arena *a, __u32 ref)
{
	if (ref == ACTRACK_REF_QUEUE)
		return &arena_hdr(a)->queue;
	return arena_block(a, ref, NULL);
}

int actrack_arena_format(struct actrack_arena *a,
			 const struct actrack_arena_header *tmpl)
{
	struct actrack_arena_header *h;
	__u64 magic = ACTRACK_ARENA_MAGIC;

	if (!a || !a->base || !a->writable || a->size < ACTRACK_ARENA_MIN_SIZE ||
	    a->size > ACTRACK_ARENA_MAX_SIZE || a->size % ACTRACK_BLOCK_ALIGN)
		return -EINVAL;
	h = arena_hdr(a);
	memset(h, 0, sizeof(*h));
	if (tmpl) {
		h->uid = tmpl->uid;
		h->user_hz = tmpl->user_hz;
		h->create_mono_ns = tmpl->create_mono_ns;
		h->create_real_ns = tmpl->create_real_ns;
		h->boot_time_ns = tmpl->boot_time_ns;
		memcpy(h->boot_id, tmpl->boot_id, sizeof(h->boot_id));
		h->flags = tmpl->flags;
	}
	h->abi_major = ACTRACK_ABI_MAJOR;
	h->abi_minor = ACTRACK_ABI_MINOR;
	h->header_size = ACTRACK_ARENA_HEADER_SIZE;
	h->size = a->size;
	h->freeptr = ACTRACK_ARENA_HEADER_SIZE;
	h->tailptr = ACTRACK_REF_QUEUE;
	/* The sentinel: size 0 (special-cased), next == itself == empty. */
	h->queue.size = 0;
	h->queue.cookie = ACTRACK_BLOCK_COOKIE;
	h->queue.type_id = 0;
	h->queue.next = ACTRACK_REF_QUEUE;
	/*
	 * The magic goes last, after a barrier, so that a process that opens a
	 * file arena while it is being created sees either no magic or a
	 * complete header.  It is a plain copy because a 64-bit release store
	 * does not exist on every 32-bit architecture.
	 */
	at_fence_release();
	memcpy(&h->magic, &magic, sizeof(magic));
	a->corrupt = false;
	return 0;
}

int actrack_arena_check(struct actrack_arena *a)
{
	struct actrack_arena_header *h;
	__u32 freeptr, tailptr, qnext;
	__u64 magic;

	if (!a || !a->base)
		return -EINVAL;
	if (a->size < ACTRACK_ARENA_HEADER_SIZE)
		return -EBADMSG;	/* too short to hold even the header */
	h = arena_hdr(a);
	memcpy(&magic, &h->magic, sizeof(magic));
	if (magic != ACTRACK_ARENA_MAGIC)
		return -EBADMSG;
	if (at_load(&h->header_size) != ACTRACK_ARENA_HEADER_SIZE)
		return -EBADMSG;
	if (at_load(&h->abi_major) != ACTRACK_ABI_MAJOR)
		return -EPROTONOSUPPORT;
	/* The header's size must agree with ours (e.g. a truncated file). */
	if (at_load(&h->size) != a->size)
		return -EUCLEAN;
	if (a->size < ACTRACK_ARENA_MIN_SIZE || a->size > ACTRACK_ARENA_MAX_SIZE ||
	    a->size % ACTRACK_BLOCK_ALIGN)
		return -EUCLEAN;
	/*
	 * Other processes may be appending while we look: an append carves
	 * its block (freeptr) before it links it (queue.next, tailptr).  So
	 * read the links first, with acquire, and freeptr after them: it is
	 * then past every block they name.  Read the other way round, a
	 * healthy arena looks corrupt.
	 */
	qnext = at_load_acquire(&h->queue.next);
	tailptr = at_load_acquire(&h->tailptr);
	freeptr = at_load(&h->freeptr);
	if (freeptr < ACTRACK_ARENA_HEADER_SIZE || freeptr > a->size ||
	    freeptr % ACTRACK_BLOCK_ALIGN)
		return -EUCLEAN;
	if (tailptr != ACTRACK_REF_QUEUE &&
	    (tailptr < ACTRACK_ARENA_HEADER_SIZE || tailptr >= freeptr ||
	     tailptr % ACTRACK_BLOCK_ALIGN))
		return -EUCLEAN;
	if (at_load(&h->queue.cookie) != ACTRACK_BLOCK_COOKIE)
		return -EUCLEAN;
	if (qnext != ACTRACK_REF_QUEUE &&
	    (qnext < ACTRACK_ARENA_HEADER_SIZE || qnext >= freeptr ||
	     qnext % ACTRACK_BLOCK_ALIGN))
		return -EUCLEAN;
	return 0;
}

struct actrack_block *actrack_arena_block(struct actrack_arena *a, __u32 ref)
{
	if (!ref)
		return NULL;
	return arena_block(a, ref, NULL);
}

void *actrack_arena_get(struct actrack_arena *a, __u32 ref, __u32 type,
			__u32 min_size)
{
	struct actrack_block *b;
	__u32 size;

	if (!ref)
		return NULL;
	b = arena_block(a, ref, &size);
	if (!b)
		return NULL;
	/* Acquire: the payload was published by the release of the type. */
	if (type != ACTRACK_TYPE_ANY && at_load_acquire(&b->type_id) != type)
		return NULL;
	if (size - AT_BLOCK_HDR < min_size)
		return NULL;
	return block_payload(b);
}

__u32 actrack_arena_payload_size(struct actrack_arena *a, __u32 ref)
{
	__u32 size;

	if (!ref || !arena_block(a, ref, &size))
		return 0;
	return size - AT_BLOCK_HDR;
}

void actrack_arena_make_iterable(struct actrack_arena *a, __u32 ref)
{
	struct actrack_arena_header *h = arena_hdr(a);
	struct actrack_block *b, *tb;
	__u32 tail, seen, i, bound;

	if (!a->writable || !ref)
		return;
	b = arena_block(a, ref, NULL);
	if (!b)
		return;
	/*
	 * Claim the block for appending: 0 -> end marker.  Whoever wins the
	 * claim appends; anyone else finds it iterable (or about to be).
	 */
	if (at_cas(&b->next, 0, ACTRACK_REF_QUEUE) != 0)
		return;
	/*
	 * Every failed round means another block was appended or the tail
	 * was helped forward; at most max_blocks of each can happen in an
	 * honest arena, so more rounds than that is a hostile tail.
	 */
	bound = 2 * actrack_arena_max_blocks(a) + 2;
	for (i = 0; i < bound; i++) {
		tail = at_load_acquire(&h->tailptr);
		if (tail == ref) {
			/* Our own block cannot be the tail yet: no self-loop. */
			actrack_arena_set_corrupt(a);
			return;
		}
		tb = arena_link(a, tail);
		if (!tb)
			return;
		seen = at_cas(&tb->next, ACTRACK_REF_QUEUE, ref);
		if (seen == ACTRACK_REF_QUEUE || seen == ref) {
			/* Linked; swing the tail (someone may have helped). */
			at_cas(&h->tailptr, tail, ref);
			return;
		}
		/*
		 * The tail is stale: an appender linked its block but has not
		 * swung the tail yet.  Help it, but only to a valid block, so
		 * a hostile link is not propagated into tailptr.
		 */
		if (seen == 0 || seen == tail || !arena_link(a, seen)) {
			actrack_arena_set_corrupt(a);
			return;
		}
		at_cas(&h->tailptr, tail, seen);
	}
	actrack_arena_set_corrupt(a);
}

static __u32 owned_min_size(__u32 type);

/*
 * An owned record's owner fields, unpublished (data_id 0), stored before
 * its type: from the moment the block is live, whoever cleans up after a
 * dead owner can tell whose it is, however early the owner died.
 */
static void arena_set_owner(void *payload, const struct actrack_owner *owner)
{
	struct actrack_owner *o = payload;

	at_store(&o->data_id, 0);
	at_store(&o->pid, owner->pid);
	at_store(&o->tid, owner->tid);
	at_store(&o->pid_ns, owner->pid_ns);
	memcpy(&o->start_ticks, &owner->start_ticks, sizeof(o->start_ticks));
}

/*
 * The one clear of a block that readers may be copying: the writer side of
 * the arena's seqlocks.  Every caller either holds the block TRANSITIONING
 * and publishes its new type with release afterwards, or holds an owned
 * record that is not yet published (data_id 0, which readers skip).  Every
 * reader re-checks the type, and for owned records the data_id, after an
 * acquire fence and drops what it copied.  Plain memset on purpose: in the
 * kernel it clears up to 64 KiB.  ThreadSanitizer's suppression
 * (selftests/actrack/tsan.supp) names this function, inlined or not (its
 * reports name inlined frames), and no other.
 */
static void arena_wipe(void *p, __u32 len)
{
	memset(p, 0, len);
}

/*
 * Zero the payload of a block of @size bytes; with @owner, everything but
 * the owner fields stored by arena_set_owner().
 */
static void arena_clear_payload(struct actrack_block *b, __u32 size,
				const struct actrack_owner *owner)
{
	__u32 skip = owner ? (__u32)sizeof(*owner) : 0;

	arena_wipe((char *)block_payload(b) + skip, size - AT_BLOCK_HDR - skip);
}

/*
 * How many blocks an allocation scans for a free block before it bumps.
 * 0 scans the whole list from its head before every bump and neither reads
 * nor writes the hint: the algorithm before the window, which
 * bench/fullwalk builds as the baseline of bench/alloc.
 */
#ifndef AT_RECLAIM_WINDOW
#define AT_RECLAIM_WINDOW	ACTRACK_ARENA_RECLAIM_WINDOW
#endif

#define AT_SCAN_ALL	0xFFFFFFFFU

/*
 * The checks of arena_block() without the corrupt flag, for blocks reached
 * through the reclaim hint: a hint that names no block is ignored, not
 * reported, because it is only a hint.
 */
static struct actrack_block *reclaim_peek(struct actrack_arena *a, __u32 ref,
					  __u32 *size_out)
{
	struct actrack_block *b;
	__u32 size, limit;

	if (ref < ACTRACK_ARENA_HEADER_SIZE || ref % ACTRACK_BLOCK_ALIGN ||
	    ref >= a->size || a->size - ref < AT_BLOCK_HDR)
		return NULL;
	b = (struct actrack_block *)((char *)a->base + ref);
	size = at_load(&b->size);
	if (at_load(&b->cookie) != ACTRACK_BLOCK_COOKIE ||
	    size < ACTRACK_BLOCK_ALIGN || size % ACTRACK_BLOCK_ALIGN)
		return NULL;
	limit = at_min_u32(at_load(&arena_hdr(a)->freeptr), a->size);
	if (ref >= limit || size > limit - ref)
		return NULL;
	if (size_out)
		*size_out = size;
	return b;
}

/*
 * The free_blocks hint (see its header field): one more after a block was
 * freed, one less (never below 0) after one was reclaimed.
 */
static void note_freed(struct actrack_arena *a)
{
	at_fetch_add(&arena_hdr(a)->free_blocks, 1);
}

static void note_reclaimed(struct actrack_arena *a)
{
	__u32 *n = &arena_hdr(a)->free_blocks;
	__u32 cur = at_load(n);

	while (cur && at_cas(n, cur, cur - 1) != cur)
		cur = at_load(n);
}

/*
 * Where to start scanning: the hint if it names a linked block (a block
 * carved but not yet linked has next 0, which a walk would take for a
 * broken list), else the head.  In an honest arena every value ever stored
 * there stays a linked block: blocks are never unlinked or resized.
 */
static __u32 reclaim_start(struct actrack_arena *a)
{
	__u32 ref = at_load(&arena_hdr(a)->reclaim_hint);
	struct actrack_block *b = reclaim_peek(a, ref, NULL);

	if (!b || !at_load(&b->next))
		return ACTRACK_REF_QUEUE;
	return ref;
}

/*
 * Take the free block @b that we just moved to TRANSITIONING: clear it
 * again and give it @type.
 */
static __u32 reclaim_take(struct actrack_block *b, __u32 ref, __u32 size,
			  __u32 type, const struct actrack_owner *owner,
			  void **payload)
{
	/*
	 * Order the type change before the clearing stores, then clear
	 * again: free() did, but any process may have scribbled on a
	 * free block since.  The release of the type publishes zeros.
	 * An owned record gets its owner first and its type right
	 * after, so that an owner killed while clearing leaves a
	 * record its cleanup finds (unpublished: readers skip it).
	 */
	at_fence_release();
	if (owner) {
		arena_set_owner(block_payload(b), owner);
		at_store_release(&b->type_id, type);
		arena_clear_payload(b, size, owner);
	} else {
		arena_clear_payload(b, size, NULL);
		at_store_release(&b->type_id, type);
	}
	*payload = block_payload(b);
	return ref;
}

/*
 * Scan at most @budget blocks of the iterable list (AT_SCAN_ALL: the whole
 * list) for a free block of @type and a size that fits @need without
 * wasting more than half of it, and take it.  The scan starts after the
 * hint and wraps round at the end of the list until it is back at the
 * hint, so that successive allocations visit every block in turn and each
 * one costs at most @budget steps.
 *
 * The hint is shared and anyone's to write, so the part of the walk
 * reached through it (before the wrap) flags nothing: a bad link there
 * starts the scan again from the head, as if there were no hint.  From the
 * head on, a bad link is what the whole-list walk always reported:
 * corruption.  *@covered says whether every block of the list was seen.
 */
static __u32 arena_reclaim(struct actrack_arena *a, __u32 type, __u32 need,
			   const struct actrack_owner *owner, void **payload,
			   __u32 budget, bool *covered)
{
	struct actrack_arena_header *h = arena_hdr(a);
	__u32 max = actrack_arena_max_blocks(a);
	__u32 free_type = ACTRACK_TYPE_FREE(type);
	__u32 start, cur, next, size, steps;
	struct actrack_block *cb, *b;
	bool wrapped;

	*covered = false;
	start = AT_RECLAIM_WINDOW ? reclaim_start(a) : ACTRACK_REF_QUEUE;
restart:
	cur = start;
	wrapped = false;
	steps = 0;
	for (;;) {
		if (wrapped && cur == start) {
			*covered = true;	/* round the whole list */
			break;
		}
		/* cur is the sentinel or a block validated when we moved. */
		cb = cur == ACTRACK_REF_QUEUE ? &h->queue :
		     (struct actrack_block *)((char *)a->base + cur);
		/* Acquire pairs with the appender's CAS of this link. */
		next = at_load_acquire(&cb->next);
		if (next == ACTRACK_REF_QUEUE) {
			if (start == ACTRACK_REF_QUEUE || wrapped) {
				*covered = true;
				break;
			}
			wrapped = true;
			cur = ACTRACK_REF_QUEUE;
			continue;
		}
		if (steps >= budget)
			break;
		/* More steps than blocks fit in the arena is a cycle. */
		if (++steps > max)
			goto bad;
		if (!(steps & 255))
			at_yield();
		b = reclaim_peek(a, next, &size);
		if (!b)
			goto bad;
		cur = next;
		if (at_load(&b->type_id) != free_type)
			continue;
		/* Not too small, and not wasting more than half of it. */
		if (size < need || size / 2 > need)
			continue;
		if (at_cas(&b->type_id, free_type, ACTRACK_TYPE_TRANSITIONING) !=
		    free_type)
			continue;	/* another allocator won it */
		if (AT_RECLAIM_WINDOW)
			at_store(&h->reclaim_hint, cur);
		/*
		 * Found by the whole-list scan while the count said none:
		 * blocks freed by a writer that does not count them.  Leave
		 * it at 1, so that the windows look again.
		 */
		if (budget != AT_SCAN_ALL || at_cas(&h->free_blocks, 0, 1))
			note_reclaimed(a);
		return reclaim_take(b, cur, size, type, owner, payload);
	}
	/*
	 * Where the next scan goes on: a block we reached through a link, or
	 * the head (0) when we stopped right at the end of the list.
	 */
	if (AT_RECLAIM_WINDOW && cur != start)
		at_store(&h->reclaim_hint,
			 cur == ACTRACK_REF_QUEUE ? 0 : cur);
	return 0;
bad:
	if (start != ACTRACK_REF_QUEUE && !wrapped) {
		/* Reached through the hint only: forget the hint. */
		start = ACTRACK_REF_QUEUE;
		goto restart;
	}
	actrack_arena_set_corrupt(a);
	return 0;
}

/* Carve a new block from the free pointer; *@full when it cannot fit. */
static __u32 arena_bump(struct actrack_arena *a, __u32 type, __u32 need,
			const struct actrack_owner *owner, void **payload,
			bool *full)
{
	struct actrack_arena_header *h = arena_hdr(a);
	struct actrack_block *b;
	__u32 old, seen, i, bound;

	/*
	 * Each failed CAS means someone else carved at least 64 bytes, so an
	 * honest arena cannot fail more than max_blocks times.
	 */
	bound = actrack_arena_max_blocks(a) + 1;
	old = at_load(&h->freeptr);
	for (i = 0; i < bound; i++) {
		if (old < ACTRACK_ARENA_HEADER_SIZE || old > a->size ||
		    old % ACTRACK_BLOCK_ALIGN) {
			actrack_arena_set_corrupt(a);
			return 0;
		}
		if (need > a->size - old) {
			*full = true;
			return 0;
		}
		seen = at_cas(&h->freeptr, old, old + need);
		if (seen == old)
			break;
		old = seen;
	}
	if (i == bound) {
		actrack_arena_set_corrupt(a);
		return 0;
	}
	/*
	 * [old, old + need) is ours and inside the trusted size.  Nobody can
	 * hold a reference to it yet, but unallocated memory is writable by
	 * every process of the uid, so write the whole header and clear the
	 * payload instead of assuming zeros.
	 */
	b = (struct actrack_block *)((char *)a->base + old);
	at_store(&b->size, need);
	at_store(&b->cookie, ACTRACK_BLOCK_COOKIE);
	at_store(&b->next, 0);
	if (owner) {
		/* As in arena_reclaim(): owner, type and link first, so that
		 * a kill while clearing leaves a record cleanup can find.
		 */
		arena_set_owner(block_payload(b), owner);
		at_store_release(&b->type_id, type);
		actrack_arena_make_iterable(a, old);
		arena_clear_payload(b, need, owner);
	} else {
		arena_clear_payload(b, need, NULL);
		at_store_release(&b->type_id, type);
		actrack_arena_make_iterable(a, old);
	}
	*payload = block_payload(b);
	return old;
}

__u32 actrack_arena_alloc_owned(struct actrack_arena *a, __u32 type,
				__u32 size, const struct actrack_owner *owner,
				void **payload)
{
	bool covered, full = false;
	void *p = NULL;
	__u32 need, ref;

	if (payload)
		*payload = NULL;
	/*
	 * Only ACTRACK_TYPE()-shaped types: reclaiming looks for ~type, which
	 * must never be the type of a live record.
	 */
	if (!a->writable || !type_is_live(type))
		return 0;
	if (size > a->size - ACTRACK_ARENA_HEADER_SIZE)
		return 0;
	if (owner && (!actrack_arena_is_owned_type(type) ||
		      size < owned_min_size(type)))
		return 0;
	need = (size + AT_BLOCK_HDR + ACTRACK_BLOCK_ALIGN - 1) &
	       ~(ACTRACK_BLOCK_ALIGN - 1);
	/*
	 * A window of the list first, so that an allocation costs O(window)
	 * however many blocks the arena holds; the whole list only when the
	 * free pointer is used up, so that "full" still means that no free
	 * block of this type and size exists.
	 */
	covered = false;
	ref = 0;
	if (!AT_RECLAIM_WINDOW || at_load(&arena_hdr(a)->free_blocks))
		ref = arena_reclaim(a, type, need, owner, &p,
				    AT_RECLAIM_WINDOW ? AT_RECLAIM_WINDOW :
							AT_SCAN_ALL,
				    &covered);
	if (!ref)
		ref = arena_bump(a, type, need, owner, &p, &full);
	if (!ref && full && !covered)
		ref = arena_reclaim(a, type, need, owner, &p, AT_SCAN_ALL,
				    &covered);
	if (!ref && full)
		arena_set_flag(a, ACTRACK_ARENA_FULL);
	/*
	 * The pointer we wrote through, not a second typed lookup: the block
	 * is ours from the moment its type was stored, and a lookup could
	 * only add ways to fail.
	 */
	if (ref && payload)
		*payload = p;
	return ref;
}

__u32 actrack_arena_alloc_payload(struct actrack_arena *a, __u32 type,
				  __u32 size, void **payload)
{
	return actrack_arena_alloc_owned(a, type, size, NULL, payload);
}

__u32 actrack_arena_alloc(struct actrack_arena *a, __u32 type, __u32 size)
{
	return actrack_arena_alloc_owned(a, type, size, NULL, NULL);
}

bool actrack_arena_change_type(struct actrack_arena *a, __u32 ref, __u32 to,
			       __u32 from, bool clear)
{
	struct actrack_block *b;
	__u32 size;

	if (!a->writable || !ref || to == ACTRACK_TYPE_TRANSITIONING ||
	    from == ACTRACK_TYPE_TRANSITIONING)
		return false;
	b = arena_block(a, ref, &size);
	if (!b)
		return false;
	if (!clear)
		return at_cas(&b->type_id, from, to) == from;
	if (at_cas(&b->type_id, from, ACTRACK_TYPE_TRANSITIONING) != from)
		return false;
	/*
	 * While TRANSITIONING, the block is nobody's: a reader that copied
	 * any cleared byte re-reads the type after its acquire fence and sees
	 * that it changed.  The barrier keeps the clearing after the CAS.
	 */
	at_fence_release();
	arena_wipe(block_payload(b), size - AT_BLOCK_HDR);
	at_store_release(&b->type_id, to);
	if (type_is_free(to))
		note_freed(a);
	return true;
}

__u32 actrack_arena_new_data_id(struct actrack_arena *a)
{
	struct actrack_arena_header *h = arena_hdr(a);
	__u32 id;
	int i;

	if (!a->writable)
		return 0;
	/*
	 * 0 means "not valid" and AT_DATA_ID_CLAIMED "being freed": skip
	 * both when the counter wraps (two steps at most, unless a hostile
	 * writer keeps resetting the counter: then any valid id will do).
	 */
	for (i = 0; i < 3; i++) {
		id = (__u32)at_fetch_add(&h->next_data_id, 1) + 1;
		if (id && id != AT_DATA_ID_CLAIMED)
			return id;
	}
	return 1;
}

__u32 actrack_arena_used(struct actrack_arena *a)
{
	return at_min_u32(at_load(&arena_hdr(a)->freeptr), a->size);
}

__u32 actrack_arena_free_bytes(struct actrack_arena *a)
{
	struct actrack_arena_iter it;
	__u32 ref, type, size;
	__u64 total;

	total = a->size - actrack_arena_used(a);
	actrack_arena_iter_init(&it, a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type))) {
		if (type_is_free(type) && arena_block(a, ref, &size))
			total += size;
	}
	/* Lying blocks could add up to more than the arena. */
	return total > a->size ? a->size : (__u32)total;
}

void actrack_arena_iter_init(struct actrack_arena_iter *it,
			     struct actrack_arena *a)
{
	it->a = a;
	it->last = 0;
	it->count = 0;
	it->seen = NULL;
}

void actrack_arena_iter_init_once(struct actrack_arena_iter *it,
				  struct actrack_arena *a, __u8 *seen)
{
	actrack_arena_iter_init(it, a);
	memset(seen, 0, actrack_arena_seen_bytes(a));
	it->seen = seen;
}

/* Mark @ref seen; true if it was already (a cycle). */
static bool iter_seen(struct actrack_arena_iter *it, __u32 ref)
{
	/* A validated block: ref < size, so bit < max_blocks. */
	__u32 bit = ref / ACTRACK_BLOCK_ALIGN;
	__u8 mask = (__u8)(1U << (bit % 8));

	if (it->seen[bit / 8] & mask)
		return true;
	it->seen[bit / 8] |= mask;
	return false;
}

__u32 actrack_arena_iter_next(struct actrack_arena_iter *it, __u32 type,
			      __u32 *type_out)
{
	struct actrack_arena *a = it->a;
	__u32 max = actrack_arena_max_blocks(a);
	struct actrack_block *cur, *b;
	__u32 next, t;

	/* Each round either returns or counts one step: bounded by max. */
	for (;;) {
		if (it->count > max)
			return 0;
		if (!it->last) {
			cur = &arena_hdr(a)->queue;
		} else {
			cur = arena_block(a, it->last, NULL);
			if (!cur)
				goto stop;
		}
		/*
		 * Acquire pairs with the appender's CAS of this link, which
		 * follows its release of the new block's header and type.
		 */
		next = at_load_acquire(&cur->next);
		if (next == ACTRACK_REF_QUEUE)
			return 0;	/* the end, for now: appends continue */
		/*
		 * More steps than blocks fit in the arena is a cycle.  (An
		 * honest list holds at most (size - 256) / 64 blocks.)
		 */
		if (++it->count > max) {
			actrack_arena_set_corrupt(a);
			goto stop;
		}
		/* Up to 4 Mi steps in a 256 MiB arena. */
		if (!(it->count & 255))
			at_yield();
		/* Anything else must be a valid block; 0 included is not. */
		b = arena_block(a, next, NULL);
		if (!b)
			goto stop;
		if (it->seen && iter_seen(it, next)) {
			actrack_arena_set_corrupt(a);
			goto stop;
		}
		it->last = next;
		t = at_load_acquire(&b->type_id);
		if (type == ACTRACK_TYPE_ANY || t == type) {
			if (type_out)
				*type_out = t;
			return next;
		}
	}
stop:
	it->count = max + 1;
	return 0;
}

bool actrack_arena_is_owned_type(__u32 type)
{
	switch (type) {
	case ACTRACK_TYPE_THREAD:
	case ACTRACK_TYPE_USER_DATA:
	case ACTRACK_TYPE_PROCESS:
	case ACTRACK_TYPE_LOG:
	case ACTRACK_TYPE_MODULE:
		return true;
	default:
		return false;
	}
}

/* Smallest honest payload of an owned record type. */
static __u32 owned_min_size(__u32 type)
{
	switch (type) {
	case ACTRACK_TYPE_THREAD:
		return sizeof(struct actrack_thread);
	case ACTRACK_TYPE_USER_DATA:
		return sizeof(struct actrack_user_data);
	case ACTRACK_TYPE_PROCESS:
		return sizeof(struct actrack_process);
	case ACTRACK_TYPE_LOG:
		return sizeof(struct actrack_log);
	case ACTRACK_TYPE_MODULE:
		return sizeof(struct actrack_module);
	default:
		return sizeof(struct actrack_owner);
	}
}

/*
 * Owner header of @ref if it is a block of owned @type big enough for its
 * record; a too small record is a lie (corrupt).  Also returns the
 * validated payload size.
 */
static struct actrack_owner *owned_record(struct actrack_arena *a, __u32 ref,
					  __u32 type, struct actrack_block **bp,
					  __u32 *payload)
{
	struct actrack_block *b;
	__u32 size;

	b = arena_block(a, ref, &size);
	if (!b)
		return NULL;
	if (size - AT_BLOCK_HDR < owned_min_size(type)) {
		actrack_arena_set_corrupt(a);
		return NULL;
	}
	if (bp)
		*bp = b;
	if (payload)
		*payload = size - AT_BLOCK_HDR;
	return block_payload(b);
}

/*
 * start_ticks is a __u64 that no honest writer changes after publication,
 * so a plain copy into a local is enough: it is read once, and a torn value
 * (only possible from a hostile writer, who could write any value anyway)
 * merely fails to match.  memcpy also avoids a 64-bit READ_ONCE on 32-bit.
 */
static __u64 owner_start_ticks(const struct actrack_owner *o)
{
	__u64 v;

	memcpy(&v, &o->start_ticks, sizeof(v));
	return v;
}

/*
 * Bound on waiting for a block that someone else holds in TRANSITIONING
 * after we claimed its data id: only a library older than the data-id
 * protocol below does that, for a few instructions.
 */
#define AT_TRANSIT_SPINS	1024

/*
 * Free one owned record, but only if it still holds the record we matched:
 * data @id.  The data id is the record's identity (unique per arena, never
 * reused short of 2^32 allocations), and every freer of a published record
 * - its owner, a cleaner in another process, the kernel - claims it first
 * by CAS (@id -> AT_DATA_ID_CLAIMED).  Exactly one claim wins.  A block
 * that was freed and reclaimed by a new owner meanwhile holds 0 or a new
 * id, so the CAS fails and nothing of the new owner's is touched: its type
 * never passes through TRANSITIONING, so its owner's lookups and frees
 * never fail because a cleaner was looking at a stale copy.  The claim is
 * a value of its own, not 0, because 0 also means "allocated, not yet
 * published", which actrack_arena_free() frees by type alone.
 */
static bool free_owned(struct actrack_arena *a, __u32 ref, __u32 type,
		       __u32 id)
{
	struct actrack_owner *o;
	struct actrack_block *b;
	__u32 payload, t;
	int i;

	if (!a->writable || !ref || !id || id == AT_DATA_ID_CLAIMED)
		return false;
	o = owned_record(a, ref, type, &b, &payload);
	if (!o)
		return false;
	if (at_cas(&o->data_id, id, AT_DATA_ID_CLAIMED) != id)
		return false;
	for (i = 0; i < AT_TRANSIT_SPINS; i++) {
		t = at_cas(&b->type_id, type, ACTRACK_TYPE_TRANSITIONING);
		if (t == type)
			break;
		/* Freed by type alone (an older library): not ours now. */
		if (t != ACTRACK_TYPE_TRANSITIONING)
			return false;
	}
	if (i == AT_TRANSIT_SPINS)
		return false;
	/*
	 * Someone that ignores claims freed and reclaimed the block between
	 * our two CAS: give the new record back untouched.
	 */
	if (at_load(&o->data_id) != AT_DATA_ID_CLAIMED) {
		at_store_release(&b->type_id, type);
		return false;
	}
	/* Invalidate first, so seq-checking readers fail fast. */
	at_store(&o->data_id, 0);
	at_fence_release();
	arena_wipe(o, payload);
	at_store_release(&b->type_id, ACTRACK_TYPE_FREE(type));
	note_freed(a);
	return true;
}

bool actrack_arena_free_owned(struct actrack_arena *a, __u32 ref, __u32 type,
			      __u32 id)
{
	if (!actrack_arena_is_owned_type(type))
		return false;
	return free_owned(a, ref, type, id);
}

bool actrack_arena_free(struct actrack_arena *a, __u32 ref, __u32 type)
{
	struct actrack_owner *o;
	struct actrack_block *b;
	__u32 size, id;

	if (!a->writable || !ref)
		return false;
	b = arena_block(a, ref, &size);
	if (!b)
		return false;
	/* Too small for its record type: never published, plain path. */
	if (actrack_arena_is_owned_type(type) &&
	    size - AT_BLOCK_HDR >= owned_min_size(type)) {
		o = block_payload(b);
		/*
		 * The id first, then the type (both acquire): a type seen
		 * after the id belongs to the same or a later incarnation,
		 * and a later one no longer holds this id, so the claim fails.
		 */
		id = at_load_acquire(&o->data_id);
		if (at_load_acquire(&b->type_id) != type)
			return false;
		if (id == AT_DATA_ID_CLAIMED)
			return false;	/* someone else is freeing it */
		if (id)
			return free_owned(a, ref, type, id);
		/* Never published: nobody else may claim it. */
	}
	return actrack_arena_change_type(a, ref, ACTRACK_TYPE_FREE(type), type,
					 true);
}

/*
 * Free an owned record of @k that was never published, claiming it from 0
 * as free_owned() claims a published id, so that two cleaners (or a
 * cleaner and a reclaiming allocator) never both clear it.
 *
 * A data_id of 0 names no incarnation: between the walker's look and our
 * claim the block may have been published, freed and taken by a live
 * owner that has not published yet, whose data_id is 0 again.  So the
 * owner is checked after the claim (a block freed since has zero owner
 * fields until its new owner's are stored, and pid 0 matches nobody), and
 * the claim is checked again after the block is ours: an allocator that
 * took the block in between stored data_id 0 over our claim.  A live
 * record is never made TRANSITIONING here, so its owner's lookups never
 * fail.
 */
static bool free_unpublished(struct actrack_arena *a, __u32 ref, __u32 type,
			     const struct actrack_owner_key *k,
			     actrack_tid_filter filter, void *ctx)
{
	struct actrack_owner *o;
	struct actrack_block *b;
	__u32 payload, tid;

	o = owned_record(a, ref, type, &b, &payload);
	if (!o)
		return false;
	if (at_cas(&o->data_id, 0, AT_DATA_ID_CLAIMED) != 0)
		return false;
	at_fence_acquire();
	tid = filter ? at_load(&o->tid) : 0;
	if (!actrack_owner_matches(o, k) ||
	    (filter && (!tid || !filter(ctx, tid)))) {
		/* Someone else's now; it may publish over our claim. */
		at_cas(&o->data_id, AT_DATA_ID_CLAIMED, 0);
		return false;
	}
	if (at_cas(&b->type_id, type, ACTRACK_TYPE_TRANSITIONING) != type) {
		at_cas(&o->data_id, AT_DATA_ID_CLAIMED, 0);
		return false;
	}
	if (at_load(&o->data_id) != AT_DATA_ID_CLAIMED) {
		at_store_release(&b->type_id, type);
		return false;
	}
	at_store(&o->data_id, 0);
	at_fence_release();
	arena_wipe(o, payload);
	at_store_release(&b->type_id, ACTRACK_TYPE_FREE(type));
	note_freed(a);
	return true;
}

bool actrack_owner_matches(const struct actrack_owner *o,
			   const struct actrack_owner_key *k)
{
	__u32 ns;

	if (at_load(&o->pid) != k->pid ||
	    owner_start_ticks(o) != k->start_ticks)
		return false;
	ns = at_load(&o->pid_ns);
	return k->pid_ns == ACTRACK_PID_NS_ANY || ns == k->pid_ns;
}

/*
 * One owned block of @type at @ref, as a walk or a direct lookup found it:
 * free it if it is @k's (and, with @filter, of a thread @filter accepts).
 */
static bool free_if_owned_by(struct actrack_arena *a, __u32 ref, __u32 type,
			     const struct actrack_owner_key *k,
			     actrack_tid_filter filter, void *ctx)
{
	struct actrack_owner *o;
	__u32 id, tid;

	o = owned_record(a, ref, type, NULL, NULL);
	if (!o)
		return false;
	/* Each field once; data_id first, with acquire. */
	id = at_load_acquire(&o->data_id);
	if (id == AT_DATA_ID_CLAIMED)
		return false;	/* being freed */
	if (!actrack_owner_matches(o, k))
		return false;	/* a reused pid: not ours to free */
	if (filter) {
		tid = at_load(&o->tid);
		if (!tid || !filter(ctx, tid))
			return false;
	}
	/*
	 * Unpublished: its owner died (or its thread exited) between
	 * allocating it and publishing it.  Nobody else will ever publish
	 * it, so it is ours to free like a published one.
	 */
	return !id ? free_unpublished(a, ref, type, k, filter, ctx) :
		     free_owned(a, ref, type, id);
}

int actrack_arena_free_owned_by(struct actrack_arena *a,
				const struct actrack_owner_key *k,
				actrack_tid_filter filter, void *ctx)
{
	struct actrack_arena_iter it;
	__u32 ref, type;
	int freed = 0;

	/* pid 0 marks global records, which belong to no process. */
	if (!a->writable || !k->pid)
		return 0;
	actrack_arena_iter_init(&it, a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type))) {
		if (actrack_arena_is_owned_type(type) &&
		    free_if_owned_by(a, ref, type, k, filter, ctx))
			freed++;
	}
	return freed;
}

static bool one_tid(void *ctx, __u32 tid)
{
	return tid == *(const __u32 *)ctx;
}

int actrack_arena_free_owner(struct actrack_arena *a, __u32 pid,
			     __u64 start_ticks, __u32 tid)
{
	struct actrack_owner_key k = {
		.pid = pid,
		.pid_ns = ACTRACK_PID_NS_ANY,
		.start_ticks = start_ticks,
	};

	return actrack_arena_free_owned_by(a, &k, tid ? one_tid : NULL, &tid);
}

/* The type of block @ref (0 if @ref is no block), read with acquire. */
static __u32 block_type(struct actrack_arena *a, __u32 ref)
{
	struct actrack_block *b = arena_block(a, ref, NULL);

	return b ? at_load_acquire(&b->type_id) : 0;
}

int actrack_arena_free_thread(struct actrack_arena *a,
			      const struct actrack_owner_key *k, __u32 tid,
			      __u32 ref)
{
	const struct actrack_thread *t;
	const __u32 *refs;
	__u32 payload, slots, flags, dref, i;
	int freed = 0;

	if (!a->writable || !k->pid || !tid)
		return 0;
	if (block_type(a, ref) != ACTRACK_TYPE_THREAD)
		return 0;
	t = (const struct actrack_thread *)
		owned_record(a, ref, ACTRACK_TYPE_THREAD, NULL, &payload);
	if (!t || !actrack_owner_matches(&t->owner, k) ||
	    at_load(&t->owner.tid) != tid)
		return 0;
	/*
	 * The list of its user data blocks, if it has one and it fits in
	 * the block: every entry is checked like a block met in a walk, so
	 * a lying list frees nothing that is not this thread's.
	 */
	slots = at_load(&t->slot_count);
	flags = at_load(&t->flags);
	if ((flags & ACTRACK_THREAD_DATA) && (flags & ACTRACK_THREAD_HELD) &&
	    slots <= ACTRACK_THREAD_MAX_SLOTS &&
	    payload >= ACTRACK_THREAD_DATA_END(slots)) {
		refs = (const __u32 *)((const char *)t +
				       ACTRACK_THREAD_DATA_OFFSET(slots));
		for (i = 0; i < slots; i++) {
			dref = at_load(&refs[i]);
			if (dref && dref != ref &&
			    block_type(a, dref) == ACTRACK_TYPE_USER_DATA &&
			    free_if_owned_by(a, dref, ACTRACK_TYPE_USER_DATA, k,
					     one_tid, &tid))
				freed++;
		}
	}
	if (free_if_owned_by(a, ref, ACTRACK_TYPE_THREAD, k, one_tid, &tid))
		freed++;
	return freed;
}

__u32 actrack_arena_find_process(struct actrack_arena *a, __u32 pid,
				 __u64 start_ticks)
{
	const struct actrack_owner_key k = {
		.pid = pid,
		.pid_ns = ACTRACK_PID_NS_ANY,
		.start_ticks = start_ticks,
	};
	struct actrack_arena_iter it;
	struct actrack_owner *o;
	__u32 ref;

	if (!pid)
		return 0;
	actrack_arena_iter_init(&it, a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_PROCESS, NULL))) {
		o = owned_record(a, ref, ACTRACK_TYPE_PROCESS, NULL, NULL);
		if (!o)
			continue;
		if (!at_load_acquire(&o->data_id))
			continue;
		if (actrack_owner_matches(o, &k))
			return ref;
	}
	return 0;
}

/*
 * The one torn-thread reader: a tracker that changed under every copy is
 * still reported, by identity only.  Each field is read once; the data id
 * is the same before and after (acquire fence between), so the identity
 * is this incarnation's, never a mix with the next owner's.
 */
static int copy_thread_torn(struct actrack_block *b, struct actrack_thread *th,
			    __u32 ref, struct actrack_thread_copy *out)
{
	__u32 id, i;

	memset(&out->hdr, 0, sizeof(out->hdr));
	out->ref = ref;
	out->nr_slots = 0;
	id = at_load_acquire(&th->owner.data_id);
	if (!id || id == AT_DATA_ID_CLAIMED)
		return -ENOENT;
	out->hdr.owner.data_id = id;
	out->hdr.owner.pid = at_load(&th->owner.pid);
	out->hdr.owner.tid = at_load(&th->owner.tid);
	out->hdr.owner.pid_ns = at_load(&th->owner.pid_ns);
	out->hdr.owner.start_ticks = owner_start_ticks(&th->owner);
	for (i = 0; i < sizeof(th->name) - 1; i++)
		out->hdr.name[i] = at_load(&th->name[i]);
	memcpy(&out->hdr.start_time_ns, &th->start_time_ns,
	       sizeof(out->hdr.start_time_ns));
	out->hdr.depth = at_load(&th->depth);
	at_fence_acquire();
	if (at_load(&b->type_id) != ACTRACK_TYPE_THREAD ||
	    at_load(&th->owner.data_id) != id)
		return -ENOENT;	/* freed or reused while we looked */
	return -EAGAIN;
}

int actrack_arena_copy_thread(struct actrack_arena *a, __u32 ref,
			      struct actrack_thread_copy *out)
{
	struct actrack_thread *th;
	struct actrack_block *b;
	__u32 size, payload, max_slots, id1, id2, v1, v2, d1, d2, sc, n, t;
	int i;

	if (!ref || !out)
		return -EINVAL;
	b = arena_block(a, ref, &size);
	if (!b)
		return -EUCLEAN;
	if (at_load_acquire(&b->type_id) != ACTRACK_TYPE_THREAD)
		return -ENOENT;
	payload = size - AT_BLOCK_HDR;
	if (payload < sizeof(*th)) {
		actrack_arena_set_corrupt(a);
		return -EUCLEAN;
	}
	max_slots = at_min_u32((payload - sizeof(*th)) / sizeof(struct actrack_activity),
			       ACTRACK_THREAD_MAX_SLOTS);
	th = block_payload(b);

	for (i = 0; i < ACTRACK_COPY_RETRIES; i++) {
		/* Acquire pairs with the owner's release of data_id ... */
		id1 = at_load_acquire(&th->owner.data_id);
		if (!id1 || id1 == AT_DATA_ID_CLAIMED)
			return -ENOENT;	/* not published, or being freed */
		/* ... and with its release stores of version and depth. */
		v1 = at_load_acquire(&th->version);
		d1 = at_load_acquire(&th->depth);
		/*
		 * Written before publication and zero while cleared, so an
		 * honest tracker never shows a count that does not fit.
		 */
		sc = at_load(&th->slot_count);
		if (sc > max_slots) {
			actrack_arena_set_corrupt(a);
			return -EUCLEAN;
		}
		n = at_min_u32(d1, sc);
		memcpy(&out->hdr, th, sizeof(out->hdr));
		memcpy(out->slots, ACTRACK_THREAD_SLOTS(th), (size_t)n * sizeof(out->slots[0]));
		/* Order the copies before the re-reads (seqlock style). */
		at_fence_acquire();
		v2 = at_load(&th->version);
		d2 = at_load(&th->depth);
		id2 = at_load(&th->owner.data_id);
		t = at_load(&b->type_id);
		if (t != ACTRACK_TYPE_THREAD || id2 != id1)
			return -ENOENT;	/* freed, or reused by another thread */
		/* A push or pop raced with us, or a slot was being rewritten
		 * (odd version: actrack_change() between its two bumps).
		 */
		if (v1 != v2 || d1 != d2 || (v1 & 1))
			continue;
		/* Report the values the check was made against. */
		out->ref = ref;
		out->nr_slots = n;
		out->hdr.owner.data_id = id1;
		out->hdr.version = v1;
		out->hdr.depth = d1;
		out->hdr.slot_count = sc;
		return 0;
	}
	return copy_thread_torn(b, th, ref, out);
}

int actrack_arena_copy_owned(struct actrack_arena *a, __u32 ref, __u32 type,
			     void *buf, __u32 size)
{
	struct actrack_user_data *ud;
	struct actrack_owner *o;
	struct actrack_block *b;
	__u32 payload, n, id1, id2, s1 = 0, s2 = 0, t;
	bool seq = type == ACTRACK_TYPE_USER_DATA;
	int i;

	if (!ref || !buf || size < sizeof(struct actrack_owner) ||
	    !actrack_arena_is_owned_type(type))
		return -EINVAL;
	b = arena_block(a, ref, &payload);
	if (!b)
		return -EUCLEAN;
	if (at_load_acquire(&b->type_id) != type)
		return -ENOENT;
	payload -= AT_BLOCK_HDR;
	if (payload < owned_min_size(type)) {
		actrack_arena_set_corrupt(a);
		return -EUCLEAN;
	}
	o = block_payload(b);
	ud = (struct actrack_user_data *)o;
	n = at_min_u32(size, payload);

	for (i = 0; i < ACTRACK_COPY_RETRIES; i++) {
		id1 = at_load_acquire(&o->data_id);
		if (!id1 || id1 == AT_DATA_ID_CLAIMED)
			return -ENOENT;	/* not published, or being freed */
		if (seq) {
			/* Odd: a value is being rewritten right now. */
			s1 = at_load_acquire(&ud->seq);
			if (s1 & 1)
				continue;
		}
		memcpy(buf, o, n);
		at_fence_acquire();
		if (seq)
			s2 = at_load(&ud->seq);
		id2 = at_load(&o->data_id);
		t = at_load(&b->type_id);
		if (t != type || id2 != id1)
			return -ENOENT;
		if (s1 != s2)
			continue;
		return (int)n;
	}
	return -EAGAIN;
}
