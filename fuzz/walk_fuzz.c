// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the owner walk (arena/records.c), built as the
 * kernel builds it: arena.c and records.c alone, nothing from lib/.
 * Whatever the arena's bytes, a walk must stay in bounds, terminate,
 * report each record at most once, report only records (and user data)
 * of the owner it was asked for, never a thread without a tid, never
 * slots for a torn thread, never more user data than the records refer
 * to, and never write to a read-only arena (nor anything but the
 * header's flags to a writable one).
 *
 * Input: the modes of fuzz_arena_modes.h (arena_fuzz's seeds fit); mode
 * 2 populates owners that share a pid or a start time, user data
 * references across owners and a reference cycle.
 * flags bit 0: writable (the kernel's view); bit 1: the user data buffer
 * grows (the library's way) instead of cutting at a fixed size (the
 * kernel's); bits 2-3: which owner the keyed walk asks for; bit 4 (mode
 * 2): the list's tail links back into it (a cycle).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_arena_modes.h"

#define FUZZ_BLOCKS	(FUZZ_SIZE / ACTRACK_BLOCK_ALIGN)
#define FIXED_UD	(sizeof(struct actrack_user_data) + 256)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct check {
	const struct actrack_owner_key *key;
	__u8 reported[FUZZ_BLOCKS / 8];
	__u32 records;
	__u32 uds;		/* user data handed out */
	__u32 ud_budget;	/* references the records held */
	struct actrack_owner parent;	/* last record that may refer */
	__u32 parent_tid;
	bool fixed;
};

static __u32 fuzz_ud_size;
static unsigned char *fuzz_ud;

static void *grow(struct actrack_walk *w, __u32 size)
{
	unsigned char *p;

	if (size > FUZZ_SIZE)
		abort();	/* a block is never bigger than the arena */
	p = realloc(fuzz_ud, size);
	if (p) {
		fuzz_ud = p;
		fuzz_ud_size = size;
	}
	return p;
}

static void check_owner(const struct check *c, const struct actrack_owner *o)
{
	if (!o->pid || !o->data_id)
		abort();
	if (c->key && (o->pid != c->key->pid ||
		       o->start_ticks != c->key->start_ticks ||
		       (c->key->pid_ns != ACTRACK_PID_NS_ANY &&
			o->pid_ns != c->key->pid_ns)))
		abort();
}

static int on_record(struct actrack_walk *w, const struct actrack_walk_rec *r)
{
	struct check *c = w->ctx;
	const struct actrack_thread_copy *tc;
	const struct actrack_user_data *ud;
	__u32 bit = r->ref / ACTRACK_BLOCK_ALIGN, i;

	if (r->ref < ACTRACK_ARENA_HEADER_SIZE || r->ref % 64 ||
	    r->ref >= FUZZ_SIZE || r->owner == NULL)
		abort();
	if (r->type == ACTRACK_TYPE_USER_DATA) {
		ud = r->user_data;
		if (++c->uds > c->ud_budget || r->len < sizeof(*ud) ||
		    (c->fixed && r->len > FIXED_UD) || r->len > r->payload)
			abort();
		if (ud->owner.pid != c->parent.pid ||
		    ud->owner.start_ticks != c->parent.start_ticks ||
		    ud->owner.pid_ns != c->parent.pid_ns ||
		    (c->parent_tid && ud->owner.tid != c->parent_tid) ||
		    !ud->owner.data_id)
			abort();
		return 0;
	}
	if (c->reported[bit / 8] & (1U << (bit % 8)))
		abort();	/* reported twice: the cycle guard failed */
	c->reported[bit / 8] |= (__u8)(1U << (bit % 8));
	if (++c->records > FUZZ_BLOCKS)
		abort();
	check_owner(c, r->owner);
	c->parent = *r->owner;
	c->parent_tid = 0;
	switch (r->type) {
	case ACTRACK_TYPE_THREAD:
		tc = r->thread;
		if (!tc->hdr.owner.tid || tc->nr_slots > ACTRACK_THREAD_MAX_SLOTS ||
		    tc->nr_slots > tc->hdr.slot_count ||
		    (r->torn && tc->nr_slots))
			abort();
		c->parent_tid = tc->hdr.owner.tid;
		for (i = 0; i < tc->nr_slots; i++)
			c->ud_budget += !!tc->slots[i].user_data;
		break;
	case ACTRACK_TYPE_PROCESS:
		if (r->owner->tid)
			abort();
		c->ud_budget += !!r->process->user_data;
		break;
	case ACTRACK_TYPE_MODULE:
		if (r->module->build_id_size > ACTRACK_BUILD_ID_MAX)
			abort();
		break;
	case ACTRACK_TYPE_LOG:
		break;
	default:
		abort();
	}
	return 0;
}

static __u32 publish(struct actrack_arena *a, __u32 type, __u32 size,
		     __u32 pid, __u64 start, __u32 tid, void **out)
{
	struct actrack_owner owner = { .pid = pid, .tid = tid,
				       .start_ticks = start };
	struct actrack_owner *o;
	__u32 ref;

	ref = actrack_arena_alloc_owned(a, type, size, &owner, (void **)&o);
	if (!ref)
		return 0;
	if (type == ACTRACK_TYPE_THREAD)
		((struct actrack_thread *)o)->slot_count = 4;
	if (out)
		*out = o;
	at_store_release(&o->data_id, actrack_arena_new_data_id(a));
	return ref;
}

/* A user data block with one field, for @pid/@start/@tid. */
static __u32 user_data(struct actrack_arena *a, __u32 pid, __u64 start,
		       __u32 tid)
{
	struct actrack_user_data *ud;
	struct actrack_field *f;
	__u32 ref;

	ref = publish(a, ACTRACK_TYPE_USER_DATA, sizeof(*ud) + 64, pid, start,
		      tid, (void **)&ud);
	if (!ref)
		return 0;
	ud->capacity = 64;
	f = (struct actrack_field *)(ud + 1);
	f->name_size = 1;
	f->value_size = 1;
	f->record_size = 16;
	((char *)(f + 1))[0] = 'k';
	((char *)(f + 1))[8] = 1;
	f->type = ACTRACK_VALUE_BOOL;
	ud->used = 16;
	return ref;
}

static void thread(struct actrack_arena *a, __u32 pid, __u64 start, __u32 tid,
		   __u32 ud0, __u32 ud1)
{
	struct actrack_thread *t;

	if (!publish(a, ACTRACK_TYPE_THREAD, sizeof(*t) + 4 * 64, pid, start,
		     tid, (void **)&t))
		return;
	ACTRACK_THREAD_SLOTS(t)[0].type = ACTRACK_ACT_TASK_RUN;
	ACTRACK_THREAD_SLOTS(t)[0].user_data = ud0;
	ACTRACK_THREAD_SLOTS(t)[1].type = ACTRACK_ACT_LOCK_ACQUIRE;
	ACTRACK_THREAD_SLOTS(t)[1].user_data = ud1;
	at_store_release(&t->depth, 2);
}

/*
 * Owners 7/100 (the one asked for), 7/101 (same pid, another start),
 * 8/100 (another pid, same start); references into each other's data.
 */
static void populate(struct actrack_arena *a, int flags)
{
	struct actrack_arena_header *h;
	struct actrack_process *p;
	__u32 mine, theirs, other;

	mine = user_data(a, 7, 100, 70);
	theirs = user_data(a, 7, 101, 70);
	other = user_data(a, 8, 100, 80);
	thread(a, 7, 100, 70, mine, theirs);
	thread(a, 7, 101, 70, theirs, mine);
	thread(a, 8, 100, 80, other, mine);
	if (publish(a, ACTRACK_TYPE_PROCESS, sizeof(*p), 7, 100, 0,
		    (void **)&p))
		p->user_data = user_data(a, 7, 100, 0);
	if (publish(a, ACTRACK_TYPE_PROCESS, sizeof(*p), 8, 100, 0,
		    (void **)&p))
		p->user_data = mine;
	publish(a, ACTRACK_TYPE_MODULE, sizeof(struct actrack_module), 7, 100,
		0, NULL);
	publish(a, ACTRACK_TYPE_LOG, sizeof(struct actrack_log) + 128, 7, 100,
		0, NULL);
	/* flags bit 4: the list's tail links back to its third block */
	h = (struct actrack_arena_header *)a->base;
	if ((flags & 16) && h->tailptr != ACTRACK_REF_QUEUE)
		((struct actrack_block *)((char *)a->base + h->tailptr))->next =
			ACTRACK_ARENA_HEADER_SIZE + 2 * 128;
}

static void walk(struct actrack_arena *a, const struct actrack_owner_key *k,
		 bool fixed, __u8 *seen)
{
	static struct actrack_walk w;
	static struct check c;
	static unsigned char fixed_buf[FIXED_UD];

	memset(&c, 0, sizeof(c));
	c.key = k;
	c.fixed = fixed;
	memset(&w, 0, sizeof(w));
	w.a = a;
	w.key = k;
	w.types = ACTRACK_WALK_THREADS | ACTRACK_WALK_PROCESSES |
		  ACTRACK_WALK_MODULES | ACTRACK_WALK_LOGS |
		  ACTRACK_WALK_USER_DATA;
	w.fn = on_record;
	w.ctx = &c;
	w.seen = seen;
	if (fixed) {
		w.ud_buf = fixed_buf;
		w.ud_size = sizeof(fixed_buf);
	} else {
		w.ud_buf = fuzz_ud;
		w.ud_size = fuzz_ud_size;
		w.ud_grow = grow;
	}
	if (actrack_walk_records(&w))
		abort();	/* our callback never fails, nor does grow */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct actrack_owner_key keys[4] = {
		{ .pid = 7, .pid_ns = ACTRACK_PID_NS_ANY, .start_ticks = 100 },
		{ .pid = 7, .pid_ns = 0, .start_ticks = 101 },
		{ .pid = 8, .pid_ns = ACTRACK_PID_NS_ANY, .start_ticks = 100 },
		{ .pid = 1, .pid_ns = ACTRACK_PID_NS_ANY, .start_ticks = 1 },
	};
	static unsigned char *mem, *before;
	static __u8 seen[FUZZ_BLOCKS / 8 + 1];
	struct actrack_arena_header *h;
	struct actrack_arena a;
	__u32 flags_word;
	int flags;

	if (!mem) {
		mem = malloc(FUZZ_SIZE);
		before = malloc(FUZZ_SIZE);
		if (!mem || !before)
			abort();
	}
	flags = fuzz_arena_from_input(&a, mem, data, size, populate);
	if (flags < 0)
		return 0;
	a.writable = flags & 1;
	h = (struct actrack_arena_header *)mem;
	memcpy(before, mem, FUZZ_SIZE);
	walk(&a, &keys[(flags >> 2) & 3], !(flags & 2), seen);
	walk(&a, NULL, flags & 2, seen);
	/* A walk only ever ORs flags into the header, and only if it may. */
	flags_word = h->flags;
	h->flags = ((struct actrack_arena_header *)before)->flags;
	if (memcmp(before, mem, FUZZ_SIZE))
		abort();
	if (!a.writable && flags_word != h->flags)
		abort();
	return 0;
}
