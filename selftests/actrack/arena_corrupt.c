// SPDX-License-Identifier: MIT
/*
 * arena_corrupt: the arena core on hostile arenas.
 *
 * The kernel runs arena/arena.c on memory that any process of the uid can
 * scribble on, so every walk must stay inside the arena, end, and report
 * corruption instead of crashing.  Each arena sits between PROT_NONE guard
 * pages (any stray access faults); read-only runs are mprotect()ed so that
 * any store faults too.  The random rounds are seeded and reproducible.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guarded_arena.h"
#include "test_harness.h"

#define SMALL		ACTRACK_ARENA_MIN_SIZE
#define ROUNDS		20000
#define RO_ROUNDS	5000

static struct actrack_block *blk(struct tarena *t, __u32 ref)
{
	return (struct actrack_block *)((char *)t->a.base + ref);
}

/* xorshift64*: small, seeded, reproducible */
static __u64 rng;

static __u64 rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static __u32 rnd_below(__u32 n)
{
	return n ? (__u32)(rnd() % n) : 0;
}

static __u32 new_owned(struct actrack_arena *a, __u32 type, __u32 size,
		       __u32 pid, __u64 st, __u32 tid)
{
	struct actrack_owner *o;
	__u32 ref = actrack_arena_alloc(a, type, size);

	if (!ref)
		return 0;
	o = actrack_arena_get(a, ref, type, sizeof(*o));
	if (!o)
		return 0;
	o->pid = pid;
	o->tid = tid;
	o->start_ticks = st;
	at_store_release(&o->data_id, actrack_arena_new_data_id(a));
	return ref;
}

static __u32 new_thread(struct actrack_arena *a, __u32 pid, __u64 st,
			__u32 tid, __u32 nslots, __u32 depth)
{
	struct actrack_thread *th;
	__u32 i, ref = actrack_arena_alloc(a, ACTRACK_TYPE_THREAD,
					sizeof(*th) + nslots *
					sizeof(struct actrack_activity));

	if (!ref)
		return 0;
	th = actrack_arena_get(a, ref, ACTRACK_TYPE_THREAD, sizeof(*th));
	if (!th)
		return 0;
	th->owner.pid = pid;
	th->owner.tid = tid;
	th->owner.start_ticks = st;
	th->slot_count = nslots;
	for (i = 0; i < nslots && i < depth; i++)
		ACTRACK_THREAD_SLOTS(th)[i].object = i;
	th->depth = depth;
	at_store_release(&th->owner.data_id, actrack_arena_new_data_id(a));
	return ref;
}

#define MAX_REFS	64

/* A realistic mix of records of three processes. */
static __u32 populate(struct actrack_arena *a, __u32 *refs)
{
	__u32 n = 0, pid, r;

	for (pid = 1; pid <= 3; pid++) {
		refs[n++] = new_owned(a, ACTRACK_TYPE_PROCESS,
				      sizeof(struct actrack_process), pid,
				      pid * 100, 0);
		refs[n++] = new_thread(a, pid, pid * 100, pid, 4, 2);
		refs[n++] = new_thread(a, pid, pid * 100, pid + 10, 8, 9);
		refs[n++] = new_owned(a, ACTRACK_TYPE_USER_DATA, 200, pid,
				      pid * 100, pid + 10);
		refs[n++] = new_owned(a, ACTRACK_TYPE_LOG,
				      sizeof(struct actrack_log) +
				      4 * sizeof(struct actrack_log_entry),
				      pid, pid * 100, 0);
		refs[n++] = new_owned(a, ACTRACK_TYPE_MODULE,
				      sizeof(struct actrack_module), pid,
				      pid * 100, 0);
		r = new_thread(a, pid, pid * 100, pid + 20, 2, 1);
		actrack_arena_free(a, r, ACTRACK_TYPE_THREAD);
		refs[n++] = r;
	}
	refs[n++] = new_owned(a, ACTRACK_TYPE_USER_DATA, 100, 0, 0, 0);
	return n;
}

static const __u32 owned_types[] = {
	ACTRACK_TYPE_THREAD, ACTRACK_TYPE_USER_DATA, ACTRACK_TYPE_PROCESS,
	ACTRACK_TYPE_LOG, ACTRACK_TYPE_MODULE,
};

/* A value a hostile writer would pick to confuse the walker. */
static __u32 plausible(struct actrack_arena *a, const __u32 *refs, __u32 n)
{
	__u32 r = refs[rnd_below(n)];

	switch (rnd_below(16)) {
	case 0: return 0;
	case 1: return ACTRACK_REF_QUEUE;
	case 2: return ACTRACK_ARENA_HEADER_SIZE;
	case 3: return rnd_below(a->size / 64) * 64;
	case 4: return a->size;
	case 5: return a->size - 64;
	case 6: return a->size + 64;
	case 7: return r;
	case 8: return r + 64;
	case 9: return r - 64;
	case 10: return 0xffffffffU;
	case 11: return ACTRACK_BLOCK_COOKIE;
	case 12: return owned_types[rnd_below(5)];
	case 13: return ~owned_types[rnd_below(5)];
	case 14: return rnd_below(70);
	default: return (__u32)rnd();
	}
}

static void scribble(struct actrack_arena *a, const __u32 *refs, __u32 n)
{
	unsigned char *p = a->base;
	__u32 *w = a->base;
	__u32 i, k, off, len;

	switch (rnd_below(5)) {
	case 0:		/* random bytes anywhere */
		k = 1 + rnd_below(64);
		for (i = 0; i < k; i++)
			p[rnd_below(a->size)] = (unsigned char)rnd();
		break;
	case 1:		/* plausible words anywhere */
		k = 1 + rnd_below(16);
		for (i = 0; i < k; i++)
			w[rnd_below(a->size / 4)] = plausible(a, refs, n);
		break;
	case 2:		/* block header fields */
		k = 1 + rnd_below(4);
		for (i = 0; i < k; i++)
			w[refs[rnd_below(n)] / 4 + rnd_below(4)] =
				plausible(a, refs, n);
		break;
	case 3:		/* arena header fields, owner fields, depths */
		k = 1 + rnd_below(4);
		for (i = 0; i < k; i++) {
			if (rnd_below(2))
				w[rnd_below(96 / 4)] = plausible(a, refs, n);
			else
				w[refs[rnd_below(n)] / 4 + 4 +
				  rnd_below(32)] = plausible(a, refs, n);
		}
		break;
	default:	/* a random run of random bytes */
		off = rnd_below(a->size);
		len = rnd_below(a->size - off < 512 ? a->size - off : 512);
		for (i = 0; i < len; i++)
			p[off + i] = (unsigned char)rnd();
		break;
	}
}

/* What the first walk of the last exercise() saw. */
static __u32 walk_steps, copies_ok;
static bool walk_corrupt;

/*
 * Every API on the damaged arena.  Returns the number of iteration steps
 * seen, which must stay bounded; *bad counts broken promises (a returned
 * reference outside the arena, an iteration longer than the bound).
 */
static __u32 exercise(struct actrack_arena *a, const __u32 *refs, __u32 n,
		      struct actrack_thread_copy *c, unsigned char *buf,
		      int *bad)
{
	struct actrack_arena_iter it;
	__u32 ref, type, steps = 0, i, k, max = actrack_arena_max_blocks(a);
	int ret;

	(void)actrack_arena_check(a);
	walk_steps = 0;
	copies_ok = 0;
	actrack_arena_iter_init(&it, a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type))) {
		if (ref < 256 || ref % 64 || ref >= a->size)
			(*bad)++;
		if (++steps > max + 1) {
			(*bad)++;
			break;
		}
		(void)actrack_arena_payload_size(a, ref);
		(void)actrack_arena_get(a, ref, type, 64);
		ret = actrack_arena_copy_thread(a, ref, c);
		copies_ok += ret == 0;
		if (ret == 0 && (c->nr_slots > ACTRACK_THREAD_MAX_SLOTS ||
				 c->nr_slots > c->hdr.slot_count))
			(*bad)++;
		for (k = 0; k < 5; k++) {
			ret = actrack_arena_copy_owned(a, ref, owned_types[k],
						       buf, 1024);
			if (ret > 1024)
				(*bad)++;
		}
	}
	walk_steps = steps;
	walk_corrupt = a->corrupt;
	for (k = 0; k < 5; k++) {
		actrack_arena_iter_init(&it, a);
		i = 0;
		while (actrack_arena_iter_next(&it, owned_types[k], NULL))
			if (++i > max + 1) {
				(*bad)++;
				break;
			}
	}
	for (i = 0; i < n; i++) {
		(void)actrack_arena_copy_thread(a, refs[i], c);
		(void)actrack_arena_copy_owned(a, refs[i], ACTRACK_TYPE_PROCESS,
					       buf, 1024);
	}
	(void)actrack_arena_copy_thread(a, plausible(a, refs, n), c);
	(void)actrack_arena_find_process(a, 1 + rnd_below(3), 100);
	(void)actrack_arena_free_owner(a, 1 + rnd_below(3),
				       100 * (1 + rnd_below(3)),
				       rnd_below(2) ? 0 : rnd_below(14));
	ref = actrack_arena_alloc(a, owned_types[rnd_below(5)],
				  rnd_below(2000));
	if (ref && (ref < 256 || ref % 64 || ref >= a->size))
		(*bad)++;
	actrack_arena_make_iterable(a, plausible(a, refs, n));
	(void)actrack_arena_change_type(a, plausible(a, refs, n),
					owned_types[rnd_below(5)],
					plausible(a, refs, n), rnd_below(2));
	(void)actrack_arena_free(a, refs[rnd_below(n)],
				 owned_types[rnd_below(5)]);
	if (actrack_arena_used(a) > a->size)
		(*bad)++;
	if (actrack_arena_free_bytes(a) > a->size)
		(*bad)++;
	(void)actrack_arena_is_corrupt(a);
	(void)actrack_arena_new_data_id(a);
	return steps;
}

static void random_rounds(struct __test_metadata *_metadata, __u64 seed,
			  int rounds, bool readonly)
{
	struct actrack_thread_copy *c = malloc(sizeof(*c));
	unsigned char *buf = malloc(1024), *pristine;
	__u32 refs[MAX_REFS], n, i;
	struct tarena t;
	int bad = 0, corrupt = 0, r;
	unsigned long long steps = 0, copies = 0;

	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, tarena_format(&t, SMALL, NULL));
	n = populate(&t.a, refs);
	ASSERT_EQ(22U, n);
	for (i = 0; i < n; i++)
		ASSERT_NE(0U, refs[i]);
	pristine = malloc(SMALL);
	ASSERT_NE(NULL, pristine);
	memcpy(pristine, t.a.base, SMALL);

	rng = seed;
	for (r = 0; r < rounds; r++) {
		if (readonly)
			tarena_protect(&t, true);
		memcpy(t.a.base, pristine, SMALL);
		t.a.corrupt = false;
		scribble(&t.a, refs, n);
		if (rnd_below(8) == 0)	/* sometimes a second wave */
			scribble(&t.a, refs, n);
		if (readonly)
			tarena_protect(&t, false);
		exercise(&t.a, refs, n, c, buf, &bad);
		if (bad) {
			TH_LOG("seed %llu round %d broke a promise",
			       (unsigned long long)seed, r);
			break;
		}
		corrupt += walk_corrupt;
		steps += walk_steps;
		copies += copies_ok;
	}
	ASSERT_EQ(0, bad);
	/* the scribbles were real: many first walks found something ... */
	ASSERT_LT(rounds / 10, corrupt);
	/* ... and the walks did real work */
	ASSERT_LT((unsigned long long)rounds * 10, steps);
	ASSERT_LT((unsigned long long)rounds, copies);
	TH_LOG("%d rounds: first walk flagged %d, %llu steps, %llu tracker copies",
	       rounds, corrupt, steps, copies);
	if (readonly)
		tarena_protect(&t, true);
	free(pristine);
	free(buf);
	free(c);
	tarena_free(&t);
}

TEST(random_scribbles_writable)
{
	random_rounds(_metadata, 0x5eed0001ULL, ROUNDS, false);
}

TEST(random_scribbles_readonly)
{
	random_rounds(_metadata, 0x5eed0002ULL, RO_ROUNDS, true);
}

TEST(random_whole_arena)
{
	struct actrack_thread_copy *c = malloc(sizeof(*c));
	unsigned char *buf = malloc(1024), *p;
	__u32 refs[MAX_REFS], n, i;
	struct tarena t;
	int bad = 0, r;

	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, tarena_format(&t, SMALL, NULL));
	n = populate(&t.a, refs);
	p = t.a.base;
	rng = 0x5eed0003ULL;
	/* everything random but a valid header: the worst case for walks */
	for (r = 0; r < 200; r++) {
		for (i = 256; i < SMALL; i++)
			p[i] = (unsigned char)rnd();
		/* plant a few almost-valid blocks */
		for (i = 0; i < 8; i++) {
			struct actrack_block *b = (void *)(p + refs[i]);

			b->cookie = ACTRACK_BLOCK_COOKIE;
			b->size = 64 * (1 + rnd_below(20));
			b->type_id = owned_types[rnd_below(5)];
			b->next = refs[rnd_below(n)];
		}
		ASSERT_EQ(0, actrack_arena_format(&t.a, NULL));
		hdr_of(&t)->freeptr = SMALL;
		hdr_of(&t)->queue.next = refs[rnd_below(n)];
		hdr_of(&t)->tailptr = refs[rnd_below(n)];
		t.a.corrupt = false;
		exercise(&t.a, refs, n, c, buf, &bad);
		ASSERT_EQ(0, bad);
	}
	free(buf);
	free(c);
	tarena_free(&t);
}

/* Four blocks A..D, then a hostile link; returns their refs. */
static void four_blocks(struct __test_metadata *_metadata, struct tarena *t,
			__u32 *r)
{
	int i;

	ASSERT_EQ(0, tarena_format(t, SMALL, NULL));
	for (i = 0; i < 4; i++) {
		r[i] = new_thread(&t->a, 9, 9, 9 + i, 2, 1);
		ASSERT_NE(0U, r[i]);
	}
}

static __u32 walk_len(struct actrack_arena *a, __u32 type)
{
	struct actrack_arena_iter it;
	__u32 n = 0;

	actrack_arena_iter_init(&it, a);
	while (actrack_arena_iter_next(&it, type, NULL) && n < 1000000)
		n++;
	return n;
}

TEST(cycle_backwards)
{
	struct actrack_arena_iter it;
	struct tarena t;
	__u32 r[4], n;

	four_blocks(_metadata, &t, r);
	blk(&t, r[3])->next = r[1];	/* D -> B */
	n = walk_len(&t.a, ACTRACK_TYPE_ANY);
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	ASSERT_EQ(ACTRACK_ARENA_CORRUPT, hdr_of(&t)->flags & ACTRACK_ARENA_CORRUPT);
	ASSERT_LE(n, actrack_arena_max_blocks(&t.a));
	ASSERT_LE(4U, n);
	/* a filter that never matches is bounded the same way */
	t.a.corrupt = false;
	ASSERT_EQ(0U, walk_len(&t.a, ACTRACK_TYPE_MODULE));
	ASSERT_TRUE(t.a.corrupt);
	/* an iterator that ended stays ended */
	actrack_arena_iter_init(&it, &t.a);
	while (actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL))
		;
	ASSERT_EQ(0U, actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL));
	/* all the walkers terminate */
	ASSERT_EQ(0, actrack_arena_free_owner(&t.a, 1, 1, 0));
	ASSERT_EQ(4, actrack_arena_free_owner(&t.a, 9, 9, 0));
	ASSERT_EQ(0U, actrack_arena_find_process(&t.a, 9, 9));
	ASSERT_LE(actrack_arena_free_bytes(&t.a), SMALL);
	/* reclaim walks it, then the append meets the hostile tail */
	ASSERT_NE(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 100));
	tarena_free(&t);
}

TEST(cycle_self_and_through_sentinel)
{
	struct tarena t;
	__u32 r[4];

	four_blocks(_metadata, &t, r);
	blk(&t, r[2])->next = r[2];
	ASSERT_LE(walk_len(&t.a, ACTRACK_TYPE_ANY), actrack_arena_max_blocks(&t.a));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);

	/*
	 * A head that skips blocks is indistinguishable from a shorter list:
	 * fewer blocks, but nothing out of bounds and nothing to flag.
	 */
	four_blocks(_metadata, &t, r);
	hdr_of(&t)->queue.next = r[3];
	ASSERT_EQ(1U, walk_len(&t.a, ACTRACK_TYPE_ANY));
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST(bad_next_links)
{
	static const __u32 links[] = {
		0, 1, 36, 64, 128, 200, 255, 260, SMALL, SMALL - 16,
		SMALL - 64, 0xffffffc0U, 0x80000000U,
	};
	struct tarena t;
	__u32 r[4], i;

	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		four_blocks(_metadata, &t, r);
		blk(&t, r[1])->next = links[i];
		/* A and B are returned, then the walk stops */
		ASSERT_EQ(2U, walk_len(&t.a, ACTRACK_TYPE_ANY));
		ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
		tarena_free(&t);
	}
	/* a link to an allocated block's middle */
	four_blocks(_metadata, &t, r);
	blk(&t, r[0])->next = r[2] + 64;
	ASSERT_EQ(1U, walk_len(&t.a, ACTRACK_TYPE_ANY));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST(lying_block_sizes)
{
	struct tarena t;
	__u32 r[4], i, sizes[8];
	struct actrack_thread_copy *c = malloc(sizeof(*c));

	ASSERT_NE(NULL, c);
	sizes[0] = 0;
	sizes[1] = 32;			/* below the minimum */
	sizes[2] = 100;			/* unaligned */
	sizes[3] = SMALL * 2;		/* bigger than the arena */
	sizes[4] = 0xffffffc0U;		/* wraps */
	sizes[5] = SMALL - 256;		/* beyond the free pointer */
	sizes[6] = 0x80000000U;
	sizes[7] = 64 * 1000;		/* in the arena, beyond freeptr */
	for (i = 0; i < 8; i++) {
		four_blocks(_metadata, &t, r);
		blk(&t, r[1])->size = sizes[i];
		ASSERT_EQ(NULL, actrack_arena_get(&t.a, r[1], ACTRACK_TYPE_ANY, 0));
		ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
		ASSERT_EQ(0U, actrack_arena_payload_size(&t.a, r[1]));
		ASSERT_EQ(-EUCLEAN, actrack_arena_copy_thread(&t.a, r[1], c));
		ASSERT_EQ(-EUCLEAN, actrack_arena_copy_owned(&t.a, r[1],
				ACTRACK_TYPE_THREAD, c, sizeof(*c)));
		ASSERT_EQ(1U, walk_len(&t.a, ACTRACK_TYPE_ANY));
		ASSERT_FALSE(actrack_arena_free(&t.a, r[1], ACTRACK_TYPE_THREAD));
		/* the others are still fine */
		ASSERT_EQ(0, actrack_arena_copy_thread(&t.a, r[0], c));
		tarena_free(&t);
	}
	/* a bad cookie is as bad */
	four_blocks(_metadata, &t, r);
	blk(&t, r[1])->cookie ^= 0x100;
	ASSERT_EQ(NULL, actrack_arena_block(&t.a, r[1]));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
	/* references that are not block starts */
	four_blocks(_metadata, &t, r);
	ASSERT_EQ(NULL, actrack_arena_block(&t.a, r[1] + 16));
	ASSERT_EQ(NULL, actrack_arena_block(&t.a, 64));
	ASSERT_EQ(NULL, actrack_arena_block(&t.a, SMALL));
	ASSERT_EQ(NULL, actrack_arena_block(&t.a, SMALL - 8));
	ASSERT_EQ(NULL, actrack_arena_block(&t.a, 0xffffffc0U));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
	free(c);
}

TEST(truncated_arena)
{
	struct actrack_thread_copy *c = malloc(sizeof(*c));
	struct tarena t;
	__u32 refs[200], n = 0, i, ref;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, tarena_format(&t, 2 * SMALL, NULL));
	while (n < 200 && (ref = new_thread(&t.a, 5, 5, 5, 8, 3)))
		refs[n++] = ref;
	ASSERT_LT(100U, n);
	/* the file shrank: only the first half is still mapped */
	ASSERT_EQ(0, mprotect(t.map + pg + SMALL, SMALL, PROT_NONE));
	t.a.size = SMALL;
	ASSERT_EQ(-EUCLEAN, actrack_arena_check(&t.a));
	ASSERT_LT(walk_len(&t.a, ACTRACK_TYPE_ANY), n);
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	for (i = 0; i < n; i++) {
		/* 640-byte trackers: those that still fit are readable */
		int want = refs[i] + 640 > SMALL ? -EUCLEAN : 0;

		ASSERT_EQ(want, actrack_arena_copy_thread(&t.a, refs[i], c));
	}
	/* freeptr is beyond the trusted size: nothing more is carved */
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_MODULE, 64));
	ASSERT_LE(actrack_arena_used(&t.a), SMALL);
	ASSERT_LE(0, actrack_arena_free_owner(&t.a, 5, 5, 0));
	ASSERT_LE(actrack_arena_free_bytes(&t.a), SMALL);
	free(c);
	tarena_free(&t);
}

TEST(slot_count_lies)
{
	struct actrack_thread_copy *c = malloc(sizeof(*c));
	struct actrack_thread *th;
	struct tarena t;
	__u32 ref, tiny;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, tarena_format(&t, SMALL, NULL));
	ref = new_thread(&t.a, 5, 5, 5, 4, 2);
	th = actrack_arena_get(&t.a, ref, ACTRACK_TYPE_THREAD, sizeof(*th));
	ASSERT_EQ(0, actrack_arena_copy_thread(&t.a, ref, c));
	th->slot_count = 5;		/* one more than the payload holds */
	ASSERT_EQ(-EUCLEAN, actrack_arena_copy_thread(&t.a, ref, c));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	th->slot_count = 0xffffffffU;
	ASSERT_EQ(-EUCLEAN, actrack_arena_copy_thread(&t.a, ref, c));
	th->slot_count = 4;
	th->depth = 0xffffffffU;	/* depth may lie: only slots are copied */
	ASSERT_EQ(0, actrack_arena_copy_thread(&t.a, ref, c));
	ASSERT_EQ(4U, c->nr_slots);
	tarena_free(&t);

	/* more than ACTRACK_THREAD_MAX_SLOTS in a block big enough for them */
	ASSERT_EQ(0, tarena_format(&t, SMALL, NULL));
	ref = new_thread(&t.a, 5, 5, 5, 100, 2);
	th = actrack_arena_get(&t.a, ref, ACTRACK_TYPE_THREAD, sizeof(*th));
	ASSERT_EQ(-EUCLEAN, actrack_arena_copy_thread(&t.a, ref, c));
	th->slot_count = ACTRACK_THREAD_MAX_SLOTS;
	ASSERT_EQ(0, actrack_arena_copy_thread(&t.a, ref, c));
	th->slot_count = ACTRACK_THREAD_MAX_SLOTS + 1;
	ASSERT_EQ(-EUCLEAN, actrack_arena_copy_thread(&t.a, ref, c));
	/* a "thread" block smaller than a tracker header */
	tiny = actrack_arena_alloc(&t.a, ACTRACK_TYPE_THREAD, 40);
	ASSERT_EQ(-EUCLEAN, actrack_arena_copy_thread(&t.a, tiny, c));
	tarena_free(&t);
	free(c);
}

TEST(owned_record_too_small)
{
	struct tarena t;
	struct actrack_process pc;
	__u32 ref;

	ASSERT_EQ(0, tarena_format(&t, SMALL, NULL));
	/* a PROCESS block too small for struct actrack_process */
	ref = new_owned(&t.a, ACTRACK_TYPE_PROCESS, 100, 5, 5, 0);
	ASSERT_NE(0U, ref);
	ASSERT_EQ(0U, actrack_arena_find_process(&t.a, 5, 5));
	ASSERT_EQ(0, actrack_arena_free_owner(&t.a, 5, 5, 0));
	ASSERT_EQ(-EUCLEAN, actrack_arena_copy_owned(&t.a, ref,
				ACTRACK_TYPE_PROCESS, &pc, sizeof(pc)));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST(shared_flag_cleared_by_attacker)
{
	struct actrack_arena other;
	struct tarena t;
	__u32 r[4];

	four_blocks(_metadata, &t, r);
	other = t.a;
	actrack_arena_set_corrupt(&t.a);
	ASSERT_EQ(ACTRACK_ARENA_CORRUPT, hdr_of(&t)->flags & ACTRACK_ARENA_CORRUPT);
	/* another reader sees the shared flag and keeps it */
	ASSERT_TRUE(actrack_arena_is_corrupt(&other));
	hdr_of(&t)->flags = 0;	/* the attacker */
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	ASSERT_TRUE(actrack_arena_is_corrupt(&other));
	/* a fresh reader has only the shared word to go by */
	other.corrupt = false;
	ASSERT_FALSE(actrack_arena_is_corrupt(&other));
	/* flags are ORed, not overwritten */
	hdr_of(&t)->flags = ACTRACK_ARENA_KERNEL;
	actrack_arena_set_corrupt(&other);
	ASSERT_EQ(ACTRACK_ARENA_KERNEL | ACTRACK_ARENA_CORRUPT, hdr_of(&t)->flags);
	tarena_free(&t);
}

TEST(hostile_tailptr)
{
	static const __u32 tails[] = {
		0, 36, 100, 0xfffffff0U, SMALL, SMALL - 64,
	};
	struct tarena t;
	__u32 r[4], i, ref;

	/* a stale tail (behind the real end) is normal: helping fixes it */
	four_blocks(_metadata, &t, r);
	hdr_of(&t)->tailptr = r[0];
	ref = actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 10);
	ASSERT_NE(0U, ref);
	ASSERT_EQ(ref, hdr_of(&t)->tailptr);
	ASSERT_EQ(ref, blk(&t, r[3])->next);
	ASSERT_EQ(5U, walk_len(&t.a, ACTRACK_TYPE_ANY));
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);

	for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		four_blocks(_metadata, &t, r);
		hdr_of(&t)->tailptr = tails[i];
		ref = actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 10);
		/* the block is still handed out, but never linked */
		ASSERT_NE(0U, ref);
		ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
		ASSERT_EQ(4U, walk_len(&t.a, ACTRACK_TYPE_ANY));
		tarena_free(&t);
	}

	/* a tail whose successors loop: helping is bounded */
	four_blocks(_metadata, &t, r);
	blk(&t, r[3])->next = r[2];
	hdr_of(&t)->tailptr = r[2];
	ASSERT_NE(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 10));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);

	/* a tail pointing at the block being appended: no self-loop */
	four_blocks(_metadata, &t, r);
	hdr_of(&t)->tailptr = hdr_of(&t)->freeptr;
	ref = actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 10);
	ASSERT_NE(0U, ref);
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	ASSERT_EQ(ACTRACK_REF_QUEUE, blk(&t, ref)->next);
	ASSERT_EQ(4U, walk_len(&t.a, ACTRACK_TYPE_ANY));
	tarena_free(&t);
}

TEST(hostile_freeptr)
{
	struct tarena t;
	__u32 r[4];

	four_blocks(_metadata, &t, r);
	hdr_of(&t)->freeptr = SMALL + 64;
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 10));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	ASSERT_EQ(SMALL, actrack_arena_used(&t.a));
	tarena_free(&t);

	four_blocks(_metadata, &t, r);
	hdr_of(&t)->freeptr = 0xffffffc0U;
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 10));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);

	four_blocks(_metadata, &t, r);
	hdr_of(&t)->freeptr += 8;	/* unaligned */
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 10));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);

	four_blocks(_metadata, &t, r);
	hdr_of(&t)->freeptr = 0;
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 10));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);

	/* exactly full is not corruption */
	four_blocks(_metadata, &t, r);
	hdr_of(&t)->freeptr = SMALL;
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 10));
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	ASSERT_EQ(ACTRACK_ARENA_FULL, hdr_of(&t)->flags);
	tarena_free(&t);

	/* lowered below live blocks: those blocks are now out of bounds */
	four_blocks(_metadata, &t, r);
	hdr_of(&t)->freeptr = r[2];
	ASSERT_EQ(2U, walk_len(&t.a, ACTRACK_TYPE_ANY));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST(free_owner_ignores_lying_owner_fields)
{
	struct tarena t;
	struct actrack_owner *o;
	__u32 r[4];

	four_blocks(_metadata, &t, r);
	/* same pid, start_ticks differing only in the high half */
	o = actrack_arena_get(&t.a, r[1], ACTRACK_TYPE_THREAD, sizeof(*o));
	o->start_ticks = 9 | (1ULL << 32);
	o = actrack_arena_get(&t.a, r[2], ACTRACK_TYPE_THREAD, sizeof(*o));
	o->pid = 0;
	ASSERT_EQ(2, actrack_arena_free_owner(&t.a, 9, 9, 0));
	ASSERT_NE(NULL, actrack_arena_get(&t.a, r[1], ACTRACK_TYPE_THREAD, 0));
	ASSERT_NE(NULL, actrack_arena_get(&t.a, r[2], ACTRACK_TYPE_THREAD, 0));
	ASSERT_EQ(1, actrack_arena_free_owner(&t.a, 9, 9 | (1ULL << 32), 0));
	ASSERT_EQ(0, actrack_arena_free_owner(&t.a, 0, 9, 0));
	tarena_free(&t);
}

TEST_HARNESS_MAIN
