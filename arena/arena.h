/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The arena core: one freestanding C file (arena/arena.c) compiled into both
 * actrack.ko and libactrack, so that the code that walks a hostile arena is
 * fuzzed once in userspace and trusted in the kernel.
 *
 * Trust: every byte of the arena may be written at any moment by any process
 * of the uid.  Each shared field is loaded once into a local and validated;
 * every loop is bounded; nothing is written outside [base, base + size).
 * The trusted size is the caller's (the kernel's own number or the mapped
 * file's length), never the header's.
 *
 * Return convention: 0 or a positive value on success, a negative errno:
 *   -EINVAL     bad argument from the caller
 *   -EBADMSG    not an arena (magic, header size)
 *   -EPROTONOSUPPORT  incompatible ABI major
 *   -EUCLEAN    the arena (or one record) is corrupt
 *   -ENOENT     the record is gone (freed or reused)
 *   -EAGAIN     no consistent copy within the retry bound (torn)
 *   -ENOSPC     the arena is full
 */
#ifndef ACTRACK_ARENA_H
#define ACTRACK_ARENA_H

#include "port.h"
#include <linux/actrack.h>

struct actrack_arena {
	void *base;		/* start of the mapping */
	__u32 size;		/* trusted size in bytes */
	bool writable;		/* false: never store anything */
	bool corrupt;		/* this reader's own corrupt flag */
};

/* Iteration bound: no arena can hold more blocks than this. */
static inline __u32 actrack_arena_max_blocks(const struct actrack_arena *a)
{
	return a->size / ACTRACK_BLOCK_ALIGN;
}

/**
 * actrack_arena_format() - write a fresh header into zero-filled memory.
 * @a:      arena with base/size set and writable; size within
 *          ACTRACK_ARENA_{MIN,MAX}_SIZE and a multiple of ACTRACK_BLOCK_ALIGN
 * @hdr:    template: uid, user_hz, create_*_ns, boot_time_ns, boot_id and
 *          flags are copied; everything else is computed.
 * Return: 0 or -EINVAL.  Not safe against concurrent users; call before the
 * arena is shared.
 */
int actrack_arena_format(struct actrack_arena *a,
			 const struct actrack_arena_header *hdr);

/**
 * actrack_arena_check() - validate the header of an arena being attached.
 * Return: 0, -EBADMSG, -EPROTONOSUPPORT, or -EUCLEAN (size disagrees with
 * the trusted size, pointers out of bounds); -EINVAL without a base.
 * Writes nothing, sets no flag.
 */
int actrack_arena_check(struct actrack_arena *a);

/** actrack_arena_set_corrupt() - set the shared and the reader's flag. */
void actrack_arena_set_corrupt(struct actrack_arena *a);

/**
 * actrack_arena_is_corrupt() - this reader's flag or the shared one (a set
 * shared flag is latched into the reader's: anyone may clear it later).
 */
bool actrack_arena_is_corrupt(struct actrack_arena *a);

/**
 * actrack_arena_block() - validated block header for @ref.
 * Checks bounds, alignment, cookie and size (block fits in the arena and in
 * the allocated part).  Return: header pointer or NULL (and corrupt flag).
 * Reference 0 ("none") gives NULL without setting the corrupt flag.
 */
struct actrack_block *actrack_arena_block(struct actrack_arena *a, __u32 ref);

/**
 * actrack_arena_get() - payload of @ref if its type is @type (or any type
 * for ACTRACK_TYPE_ANY) and it holds at least @min_size payload bytes.
 * Return: pointer to the payload or NULL.  A type mismatch is not
 * corruption (the block may have been freed); bad geometry is.
 */
void *actrack_arena_get(struct actrack_arena *a, __u32 ref, __u32 type,
			__u32 min_size);

/** actrack_arena_payload_size() - payload bytes of a validated block. */
__u32 actrack_arena_payload_size(struct actrack_arena *a, __u32 ref);

/*
 * Blocks of the iterable list an allocation looks at for a free block to
 * reclaim before it bumps the free pointer, going on from the header's
 * reclaim_hint (where the previous scan stopped) and wrapping round at the
 * end of the list.  Only when the free pointer cannot fit the block is the
 * whole list scanned, so an allocation fails only when no free block of
 * the type and size exists.
 */
#define ACTRACK_ARENA_RECLAIM_WINDOW	128U

/**
 * actrack_arena_alloc() - lock-free allocation of a zeroed block of @type
 * with at least @size payload bytes, already in the iterable list.
 * First reclaims a free block of the same type (~@type) of suitable size by
 * CAS among the next ACTRACK_ARENA_RECLAIM_WINDOW blocks of the list, then
 * bumps the free pointer by CAS, and when that is full scans the whole
 * list.  @type must be an ACTRACK_TYPE() value (0x41Cnnnvv), so that ~@type
 * can never be a live type.
 * Return: reference, or 0 (read-only arena, bad type, corrupt, or full:
 * then ACTRACK_ARENA_FULL is set).
 */
__u32 actrack_arena_alloc(struct actrack_arena *a, __u32 type, __u32 size);

/**
 * actrack_arena_alloc_payload() - actrack_arena_alloc() that also hands back
 * the payload it zeroed in *@payload (NULL on failure).  Owners write their
 * new record through this pointer: a second typed lookup of a block just
 * allocated could only add ways to fail.
 */
__u32 actrack_arena_alloc_payload(struct actrack_arena *a, __u32 type,
				  __u32 size, void **payload);

/**
 * actrack_arena_alloc_owned() - actrack_arena_alloc_payload() of an owned
 * record that carries @owner's pid, tid, pid_ns and start_ticks (data_id
 * 0: unpublished) from the moment its type is live.  An owner killed
 * before it publishes leaves a record that actrack_arena_free_owned_by()
 * frees with the rest of its records.  Return: as alloc_payload; 0 also
 * for a type that is not owned or a size below its record.
 */
__u32 actrack_arena_alloc_owned(struct actrack_arena *a, __u32 type,
				__u32 size, const struct actrack_owner *owner,
				void **payload);

/**
 * actrack_arena_make_iterable() - append @ref to the iterable list
 * (Michael-Scott queue: CAS the tail's next, then swing the tail, helping a
 * stalled appender forward).  Idempotent.
 */
void actrack_arena_make_iterable(struct actrack_arena *a, __u32 ref);

/**
 * actrack_arena_change_type() - CAS the type of @ref from @from to @to.
 * With @clear, goes @from -> TRANSITIONING -> payload zeroed -> @to, so a
 * reader never sees a half-cleared block under either type.
 * Return: true if this caller made the change.
 */
bool actrack_arena_change_type(struct actrack_arena *a, __u32 ref, __u32 to,
			       __u32 from, bool clear);

/**
 * actrack_arena_free() - @type -> ~@type with clearing.  A published owned
 * record (data_id != 0) is claimed by its data id first, as
 * actrack_arena_free_owned() does with the id seen at the call.
 * Return: true if this caller freed it.
 */
bool actrack_arena_free(struct actrack_arena *a, __u32 ref, __u32 type);

/**
 * actrack_arena_free_owned() - free owned record @ref of @type only if its
 * data id is still @id: claim it (CAS @id -> 0xFFFFFFFF, a data id never
 * handed out, which readers see as a record about to go), then @type ->
 * TRANSITIONING -> cleared -> ~@type.  Owners pass the id they published, so a record
 * that was freed by a cleaner and reused by someone else is never touched.
 * Return: true if this caller freed it.
 */
bool actrack_arena_free_owned(struct actrack_arena *a, __u32 ref, __u32 type,
			      __u32 id);

/** actrack_arena_new_data_id() - next non-zero owner data id. */
__u32 actrack_arena_new_data_id(struct actrack_arena *a);

/** actrack_arena_used() - bytes allocated so far (bounded by size). */
__u32 actrack_arena_used(struct actrack_arena *a);

/** actrack_arena_free_bytes() - bytes in free blocks + never allocated. */
__u32 actrack_arena_free_bytes(struct actrack_arena *a);

struct actrack_arena_iter {
	struct actrack_arena *a;
	__u32 last;		/* reference of the last block returned */
	__u32 count;		/* blocks visited, bounded */
	__u8 *seen;		/* NULL, or one bit per block: see _once() */
};

void actrack_arena_iter_init(struct actrack_arena_iter *it,
			     struct actrack_arena *a);

/* Bytes of the bitmap actrack_arena_iter_init_once() needs. */
static inline __u32 actrack_arena_seen_bytes(const struct actrack_arena *a)
{
	return actrack_arena_max_blocks(a) / 8 + 1;
}

/**
 * actrack_arena_iter_init_once() - an iterator that never returns a block
 * twice: @seen (actrack_arena_seen_bytes() bytes, cleared here) marks each
 * block it steps on, and the first block met again is a cycle (corrupt
 * flag, end of the walk).  The plain iterator only notices a cycle after
 * actrack_arena_max_blocks() steps and would hand out the blocks of the
 * loop again and again until then; this one stops at the first repeat in
 * O(1) per step.
 */
void actrack_arena_iter_init_once(struct actrack_arena_iter *it,
				  struct actrack_arena *a, __u8 *seen);

/**
 * actrack_arena_iter_next() - next iterable block whose type is @type
 * (ACTRACK_TYPE_ANY: every block, free ones included).
 * Return: reference or 0 at the end.  A bad link or more than
 * actrack_arena_max_blocks() steps (a cycle) sets the corrupt flag and ends
 * the walk for good.  After a normal end, a later call returns the blocks
 * appended since.  *@type_out (may be NULL) receives the type seen.
 */
__u32 actrack_arena_iter_next(struct actrack_arena_iter *it, __u32 type,
			      __u32 *type_out);

/** actrack_arena_is_owned_type() - types that start with actrack_owner. */
bool actrack_arena_is_owned_type(__u32 type);

/**
 * actrack_arena_free_owner() - free every record owned by (@pid,
 * @start_ticks); with @tid != 0 only records of that thread (its tracker
 * and its activities' user data).  Each owner field is read once; records
 * of another start_ticks (a reused pid) are never touched, and neither is
 * a block that was freed and reclaimed by another owner while we looked
 * (each record is claimed by its data id, see actrack_arena_free_owned()).
 * Return: number of records freed (>= 0; 0 for pid 0 or a read-only
 * arena).  Bad data sets the corrupt flag.
 */
int actrack_arena_free_owner(struct actrack_arena *a, __u32 pid,
			     __u64 start_ticks, __u32 tid);

/*
 * Who owns a record: the kernel's view of an attached process.  With
 * @pid_ns ACTRACK_PID_NS_ANY the namespace is not compared (file arenas,
 * whose collector sees one pid namespace).
 */
struct actrack_owner_key {
	__u32 pid;
	__u32 pid_ns;
	__u64 start_ticks;
};
#define ACTRACK_PID_NS_ANY	0xffffffffU

/** actrack_owner_matches() - @o (read once per field) belongs to @k. */
bool actrack_owner_matches(const struct actrack_owner *o,
			   const struct actrack_owner_key *k);

/* Which thread-owned records to free: true frees @tid's. */
typedef bool (*actrack_tid_filter)(void *ctx, __u32 tid);

/**
 * actrack_arena_free_owned_by() - one walk that frees the records of @k:
 * all of them without @filter; with it, only thread-owned records (tid
 * != 0) whose tid @filter accepts (the kernel frees a batch of exited
 * threads this way).  Unpublished records (data_id 0) of @k count too:
 * call it only for an owner that is gone, which can never publish them.
 * Same guarantees as actrack_arena_free_owner().
 * Return: records freed.
 */
int actrack_arena_free_owned_by(struct actrack_arena *a,
				const struct actrack_owner_key *k,
				actrack_tid_filter filter, void *ctx);

/**
 * actrack_arena_free_thread() - free thread @tid of @k without a walk:
 * its tracker at @ref and the user data blocks its ACTRACK_THREAD_DATA
 * list names.  Each block is freed only if it is still a record of @k and
 * @tid, exactly as actrack_arena_free_owned_by() decides for a block it
 * meets, so a stale or lying @ref or list frees nothing of anyone else.
 * Call it only for a thread that is gone.  O(ACTRACK_THREAD_MAX_SLOTS).
 * Return: records freed.
 */
int actrack_arena_free_thread(struct actrack_arena *a,
			      const struct actrack_owner_key *k, __u32 tid,
			      __u32 ref);

/** actrack_arena_find_process() - reference of the live process record. */
__u32 actrack_arena_find_process(struct actrack_arena *a, __u32 pid,
				 __u64 start_ticks);

#define ACTRACK_COPY_RETRIES	16

/* A consistent copy of one thread tracker. */
struct actrack_thread_copy {
	__u32 ref;
	__u32 nr_slots;		/* activities copied: min(depth, slot_count) */
	struct actrack_thread hdr;
	struct actrack_activity slots[ACTRACK_THREAD_MAX_SLOTS];
};

/**
 * actrack_arena_copy_thread() - version-checked copy of tracker @ref:
 * data_id (acquire) and version, then depth and slots, then version, depth
 * and data_id again; up to ACTRACK_COPY_RETRIES tries.
 * Torn (-EAGAIN): @out->hdr still names the thread - owner, name,
 * start_time_ns and depth, each field read once, the data id the same
 * before and after - with no slots (@out->nr_slots 0, version 0), so that
 * every reader reports a busy thread the same way.
 * Return: 0, -ENOENT (not a live tracker), -EAGAIN (torn), -EUCLEAN (bad
 * block or slot_count), -EINVAL (@ref 0 or @out NULL).
 */
int actrack_arena_copy_thread(struct actrack_arena *a, __u32 ref,
			      struct actrack_thread_copy *out);

/**
 * actrack_arena_copy_owned() - seq-checked copy of any owned record (process,
 * log, module, user data) into @buf of @size bytes (truncated to the
 * payload).  User data uses its seqcount; log entries carry their own.
 * Return: bytes copied, -ENOENT, -EAGAIN, -EUCLEAN, -EINVAL (@ref 0, no
 * @buf, @size below sizeof(struct actrack_owner), @type not owned).
 */
int actrack_arena_copy_owned(struct actrack_arena *a, __u32 ref, __u32 type,
			     void *buf, __u32 size);

/*
 * The owner walk (arena/records.c): the one walk over "everything owned by
 * (pid, start time)" that the kernel's death report, the library's death
 * report and the snapshot share.  One bounded pass over the iterable list
 * (each block at most once: actrack_arena_iter_init_once()); for each
 * record of a wanted type: a cheap owner filter on the live bytes, then the
 * core's consistent copy, then the owner check again on that copy, which
 * is what decides; torn threads by actrack_arena_copy_thread()'s identity;
 * then, if asked, the user data the record refers to (the process's
 * annotations, each stored activity's data), copied and checked to have the
 * record's owner (and the thread's tid, for an activity's).  The callback
 * sees only checked copies, never the arena.
 *
 * One "owned by" predicate, actrack_owner_matches(), reads every owner
 * field once with at_load() (start_ticks by memcpy), on the live record
 * and on the copy alike.  Records that no honest writer makes are flagged
 * corrupt and skipped: pid 0 (only global user data is nobody's), a
 * thread with tid 0, a process record with a tid, a module whose build id
 * size is out of range.
 */
#define ACTRACK_WALK_THREADS	(1U << 0)
#define ACTRACK_WALK_PROCESSES	(1U << 1)
#define ACTRACK_WALK_MODULES	(1U << 2)
#define ACTRACK_WALK_LOGS	(1U << 3)
#define ACTRACK_WALK_USER_DATA	(1U << 4)	/* follow references */

/* Callback return: go on, but do not follow this record's user data. */
#define ACTRACK_WALK_SKIP	1
/* actrack_walk_rec.act of a process record's annotations. */
#define ACTRACK_WALK_PROCESS_DATA	0xffffffffU

/* One record the walk found, as a checked copy. */
struct actrack_walk_rec {
	__u32 ref;
	__u32 type;		/* ACTRACK_TYPE_* */
	__u32 len;		/* bytes copied (user data: header + fields) */
	__u32 payload;		/* the block's validated payload bytes */
	/* user data: the referring activity's slot in the thread copy,
	 * or ACTRACK_WALK_PROCESS_DATA
	 */
	__u32 act;
	/* thread: identity only, no slots (also a saved image's
	 * ACTRACK_THREAD_IMAGE_TORN)
	 */
	bool torn;
	const struct actrack_owner *owner;	/* of the copy: checked */
	union {
		const struct actrack_thread_copy *thread;
		const struct actrack_process *process;
		const struct actrack_module *module;
		const struct actrack_log *log;	/* header; entries are live */
		const struct actrack_user_data *user_data; /* + fields */
	};
};

struct actrack_walk;
/* Return: 0, ACTRACK_WALK_SKIP, or a negative errno that ends the walk. */
typedef int (*actrack_walk_fn)(struct actrack_walk *w,
			       const struct actrack_walk_rec *r);

struct actrack_walk {
	/* Set by the caller. */
	struct actrack_arena *a;
	const struct actrack_owner_key *key;	/* NULL: every owner */
	/* ACTRACK_WALK_*; the callback may clear bits to stop a kind. */
	__u32 types;
	actrack_walk_fn fn;
	void *ctx;
	__u8 *seen;			/* actrack_arena_seen_bytes(a) bytes */
	void *ud_buf;			/* user data copies: at least */
	__u32 ud_size;			/* sizeof(struct actrack_user_data) */
	/* Optional: a buffer of @size bytes for a bigger block (it replaces
	 * ud_buf/ud_size, the old one is the caller's); NULL: -ENOMEM.
	 * Without it, user data copies are cut at ud_size.
	 */
	void *(*ud_grow)(struct actrack_walk *w, __u32 size);
	/* The walker's: the copy a record points into. */
	union {
		struct actrack_thread_copy thread;
		struct actrack_process process;
		struct actrack_module module;
		struct actrack_log log;
	} copy;
};

/**
 * actrack_walk_records() - one walk, see above.  Records come in list
 * order; a thread's user data right after the thread, in slot order, a
 * process's right after the process.  Bounded: at most
 * actrack_arena_max_blocks() records, each with at most
 * ACTRACK_THREAD_MAX_SLOTS user data copies of at most ud_size bytes
 * (more only through ud_grow).  Bad data sets the reader's corrupt flag.
 * Return: 0, -EINVAL (missing @w->a, fn, seen, or a too small ud_buf with
 * ACTRACK_WALK_USER_DATA), or the callback's or ud_grow's negative errno.
 */
int actrack_walk_records(struct actrack_walk *w);

/**
 * actrack_walk_user_data() - the walk's user data step alone: copy block
 * @ref and hand it to the callback (with @act) if it is owned by @owner's
 * (pid, pid_ns, start_ticks) and, with @tid != 0, by thread @tid.  The
 * snapshot uses it for the global block (owner all zero).
 * Return: 0 (also when the block is gone, torn or someone else's), or the
 * callback's or ud_grow's negative errno.
 */
int actrack_walk_user_data(struct actrack_walk *w, __u32 ref,
			   const struct actrack_owner *owner, __u32 tid,
			   __u32 act);

#endif /* ACTRACK_ARENA_H */
