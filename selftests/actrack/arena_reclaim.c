// SPDX-License-Identifier: MIT
/*
 * arena_reclaim: how an allocation finds a free block to reuse.
 *
 * An allocation looks at a window of ACTRACK_ARENA_RECLAIM_WINDOW blocks
 * of the iterable list, going on from the header's reclaim_hint, before it
 * bumps the free pointer; only when the free pointer is used up does it
 * scan the whole list.  These tests pin the contract: the scan is bounded
 * (an allocation in a big arena never touches the blocks outside its
 * window: they are mapped PROT_NONE, so a whole-list walk kills the test),
 * freed blocks are reused, "full" still means no free block of the type
 * and size exists anywhere, and a hint that is wrong in any way (out of
 * range, misaligned, not a block, a block not yet linked, a forged block
 * whose links are bad or loop) only costs a scan from the head: the same
 * blocks are handed out and the arena is never flagged corrupt for it.
 *
 * While no block is free (the header's free_blocks count: an arena nobody
 * frees in, as a file arena without the module is until the records of
 * the dead are collected), an allocation skips the window and bumps: it
 * touches no page but the free pointer's and the list's tail.
 *
 * Everything runs on anonymous memory through arena/arena.h, each arena
 * between two PROT_NONE guard pages (guarded_arena.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guarded_arena.h"
#include "test_harness.h"

/* 48 payload bytes: one 64-byte block each. */
#define SMALL		48U
#define BLK		64U
#define TYPE		ACTRACK_TYPE_LOG

_Static_assert(ACTRACK_ARENA_RECLAIM_WINDOW >= 8 &&
	       ACTRACK_ARENA_RECLAIM_WINDOW <= 512, "window the tests assume");

/* Reference of the @i-th block allocated into a fresh arena of 64 B blocks. */
static __u32 nth(__u32 i)
{
	return ACTRACK_ARENA_HEADER_SIZE + i * BLK;
}

/* Allocate @n small blocks into a fresh arena; each must be the next one. */
static int fill(struct actrack_arena *a, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (actrack_arena_alloc(a, TYPE, SMALL) != nth(i))
			return -1;
	return 0;
}

/* Allocate until the arena is full; return how many blocks it took. */
static __u32 fill_up(struct actrack_arena *a)
{
	__u32 n = 0;

	while (actrack_arena_alloc(a, TYPE, SMALL))
		n++;
	return n;
}

static void set_hint(struct tarena *t, __u32 ref)
{
	at_store(&hdr_of(t)->reclaim_hint, ref);
}

static void clear_full(struct tarena *t)
{
	hdr_of(t)->flags &= ~ACTRACK_ARENA_FULL;
}

static int cmp_u32(const void *x, const void *y)
{
	__u32 a = *(const __u32 *)x, b = *(const __u32 *)y;

	return a < b ? -1 : a > b;
}

/*
 * An allocation in an arena of 4,096 blocks, the hint at block 2,000: the
 * pages of blocks 60..1,900 are PROT_NONE, so a walk from the head faults
 * (the whole-list walk of the allocator before the window did), and the
 * window after block 2,000 holds no free block, so the block is bumped.
 */
TEST(scan_is_bounded_by_the_window)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	__u32 ref, hint, fp, lo, hi;
	struct tarena t;

	ASSERT_EQ(0, tarena_format(&t, 1024 * 1024, NULL));
	ASSERT_EQ(0, fill(&t.a, 4096));
	/* a free block before the hint: reachable only by a long walk */
	ASSERT_TRUE(actrack_arena_free(&t.a, nth(100), TYPE));
	set_hint(&t, nth(2000));
	fp = hdr_of(&t)->freeptr;
	lo = (nth(60) + pg - 1) / pg * pg;
	hi = nth(1900) / pg * pg;
	ASSERT_EQ(0, mprotect((char *)t.a.base + lo, hi - lo, PROT_NONE));

	ref = actrack_arena_alloc(&t.a, TYPE, SMALL);
	EXPECT_EQ(fp, ref);
	/* The next scan goes on where this one stopped. */
	hint = hdr_of(&t)->reclaim_hint;
	EXPECT_EQ(nth(2000 + ACTRACK_ARENA_RECLAIM_WINDOW), hint);
	EXPECT_FALSE(actrack_arena_is_corrupt(&t.a));

	ASSERT_EQ(0, mprotect((char *)t.a.base + lo, hi - lo,
			      PROT_READ | PROT_WRITE));
	tarena_free(&t);
}

/*
 * An arena nobody freed a block in (free_blocks 0: a file arena without
 * the module) costs an allocation no scan at all: blocks 60..1,900 are
 * PROT_NONE and the hint points among them, so a window would fault; the
 * block is bumped and the hint stays where it was.
 */
TEST(nothing_freed_means_no_scan)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct tarena t;
	__u32 fp, lo, hi;

	ASSERT_EQ(0, tarena_format(&t, 1024 * 1024, NULL));
	ASSERT_EQ(0, fill(&t.a, 4096));
	EXPECT_EQ(0u, hdr_of(&t)->free_blocks);
	EXPECT_EQ(0u, hdr_of(&t)->reclaim_hint);
	set_hint(&t, nth(100));
	fp = hdr_of(&t)->freeptr;
	lo = (nth(60) + pg - 1) / pg * pg;
	hi = nth(1900) / pg * pg;
	ASSERT_EQ(0, mprotect((char *)t.a.base + lo, hi - lo, PROT_NONE));

	EXPECT_EQ(fp, actrack_arena_alloc(&t.a, TYPE, SMALL));
	EXPECT_EQ(nth(100), hdr_of(&t)->reclaim_hint);
	EXPECT_FALSE(actrack_arena_is_corrupt(&t.a));

	ASSERT_EQ(0, mprotect((char *)t.a.base + lo, hi - lo,
			      PROT_READ | PROT_WRITE));
	tarena_free(&t);
}

/* Each free counts one, each reclaim takes one off, never below 0. */
TEST(free_blocks_counts_frees_and_reclaims)
{
	struct tarena t;
	__u32 ref;

	ASSERT_EQ(0, tarena_format(&t, 1024 * 1024, NULL));
	ASSERT_EQ(0, fill(&t.a, 4096));
	ASSERT_TRUE(actrack_arena_free(&t.a, nth(3010), TYPE));
	ASSERT_TRUE(actrack_arena_free(&t.a, nth(3020), TYPE));
	EXPECT_EQ(2u, hdr_of(&t)->free_blocks);
	set_hint(&t, nth(3000));
	EXPECT_EQ(nth(3010), actrack_arena_alloc(&t.a, TYPE, SMALL));
	EXPECT_EQ(1u, hdr_of(&t)->free_blocks);
	EXPECT_EQ(nth(3020), actrack_arena_alloc(&t.a, TYPE, SMALL));
	EXPECT_EQ(0u, hdr_of(&t)->free_blocks);
	/* Counted low (a writer that frees without counting): stays 0. */
	ASSERT_TRUE(actrack_arena_free(&t.a, nth(3030), TYPE));
	at_store(&hdr_of(&t)->free_blocks, 0);
	ref = actrack_arena_alloc(&t.a, TYPE, SMALL);
	EXPECT_EQ(nth(4096), ref);
	EXPECT_EQ(0u, hdr_of(&t)->free_blocks);
	tarena_free(&t);
}

/*
 * A block freed by a writer that does not count (free_blocks left at 0)
 * is still found once the free pointer is used up, and then the count is
 * set to 1 so that the windows look for the others again.
 */
TEST(uncounted_free_block_is_found_when_full)
{
	struct tarena t;
	__u32 n;

	ASSERT_EQ(0, tarena_format(&t, ACTRACK_ARENA_MIN_SIZE, NULL));
	n = fill_up(&t.a);
	ASSERT_LT(20u, n);
	clear_full(&t);
	ASSERT_TRUE(actrack_arena_free(&t.a, nth(5), TYPE));
	ASSERT_TRUE(actrack_arena_free(&t.a, nth(15), TYPE));
	at_store(&hdr_of(&t)->free_blocks, 0);
	EXPECT_EQ(nth(5), actrack_arena_alloc(&t.a, TYPE, SMALL));
	EXPECT_EQ(1u, hdr_of(&t)->free_blocks);
	set_hint(&t, 0);
	EXPECT_EQ(nth(15), actrack_arena_alloc(&t.a, TYPE, SMALL));
	EXPECT_EQ(0u, hdr_of(&t)->free_blocks);
	EXPECT_FALSE(hdr_of(&t)->flags & ACTRACK_ARENA_FULL);
	EXPECT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

/* A block freed inside the window is the one handed out, cleared. */
TEST(freed_block_in_window_is_reused)
{
	struct tarena t;
	char *p;
	__u32 ref, fp;

	ASSERT_EQ(0, tarena_format(&t, 1024 * 1024, NULL));
	ASSERT_EQ(0, fill(&t.a, 4096));
	p = actrack_arena_get(&t.a, nth(3010), TYPE, SMALL);
	ASSERT_NE(NULL, p);
	memset(p, 0x5a, SMALL);
	ASSERT_TRUE(actrack_arena_free(&t.a, nth(3010), TYPE));
	set_hint(&t, nth(3000));
	fp = hdr_of(&t)->freeptr;

	ref = actrack_arena_alloc(&t.a, TYPE, SMALL);
	EXPECT_EQ(nth(3010), ref);
	EXPECT_EQ(fp, hdr_of(&t)->freeptr);
	EXPECT_EQ(nth(3010), hdr_of(&t)->reclaim_hint);
	p = actrack_arena_get(&t.a, ref, TYPE, SMALL);
	ASSERT_NE(NULL, p);
	for (int i = 0; i < (int)SMALL; i++)
		ASSERT_EQ(0, p[i]);
	tarena_free(&t);
}

/*
 * A free block wraps round: the window from the hint near the end of the
 * list goes on at its head.
 */
TEST(window_wraps_to_the_head)
{
	struct tarena t;
	__u32 fp;

	ASSERT_EQ(0, tarena_format(&t, 1024 * 1024, NULL));
	ASSERT_EQ(0, fill(&t.a, 4096));
	ASSERT_TRUE(actrack_arena_free(&t.a, nth(5), TYPE));
	set_hint(&t, nth(4090));
	fp = hdr_of(&t)->freeptr;
	EXPECT_EQ(nth(5), actrack_arena_alloc(&t.a, TYPE, SMALL));
	EXPECT_EQ(fp, hdr_of(&t)->freeptr);
	tarena_free(&t);
}

/*
 * Full means full: with the free pointer used up, the blocks freed
 * anywhere in the list (outside the window too) are all handed out, and
 * only then does allocation fail and set ACTRACK_ARENA_FULL.
 */
TEST(full_arena_finds_every_free_block)
{
	__u32 n, got[3], want[3], i;
	struct tarena t;

	ASSERT_EQ(0, tarena_format(&t, ACTRACK_ARENA_MIN_SIZE, NULL));
	n = fill_up(&t.a);
	ASSERT_EQ((ACTRACK_ARENA_MIN_SIZE - ACTRACK_ARENA_HEADER_SIZE) / BLK, n);
	ASSERT_GT(n, 2 * ACTRACK_ARENA_RECLAIM_WINDOW + 20);
	ASSERT_TRUE(hdr_of(&t)->flags & ACTRACK_ARENA_FULL);
	clear_full(&t);
	want[0] = nth(5);
	want[1] = nth(n / 2);
	want[2] = nth(n - 3);
	for (i = 0; i < 3; i++)
		ASSERT_TRUE(actrack_arena_free(&t.a, want[i], TYPE));
	/* The window after the hint holds none of them. */
	set_hint(&t, nth(n / 2 + 10));
	for (i = 0; i < 3; i++)
		got[i] = actrack_arena_alloc(&t.a, TYPE, SMALL);
	qsort(got, 3, sizeof(got[0]), cmp_u32);
	EXPECT_EQ(want[0], got[0]);
	EXPECT_EQ(want[1], got[1]);
	EXPECT_EQ(want[2], got[2]);
	EXPECT_FALSE(hdr_of(&t)->flags & ACTRACK_ARENA_FULL);
	EXPECT_EQ(0, actrack_arena_alloc(&t.a, TYPE, SMALL));
	EXPECT_TRUE(hdr_of(&t)->flags & ACTRACK_ARENA_FULL);
	EXPECT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

/*
 * Churn in a big arena: free a random block, allocate one, 20,000 times.
 * Freed blocks are found as the window goes round, so the arena grows by
 * a few windows' worth at most, never by one block per round.
 */
TEST(churn_reuses_freed_blocks)
{
	__u32 *live, n = 4096, i, k, ref, fp0, grown;
	struct tarena t;
	unsigned int seed = 1;

	ASSERT_EQ(0, tarena_format(&t, 4 * 1024 * 1024, NULL));
	live = calloc(n, sizeof(*live));
	ASSERT_NE(NULL, live);
	ASSERT_EQ(0, fill(&t.a, n));
	for (i = 0; i < n; i++)
		live[i] = nth(i);
	fp0 = hdr_of(&t)->freeptr;
	for (i = 0; i < 20000; i++) {
		k = (__u32)rand_r(&seed) % n;
		ASSERT_TRUE(actrack_arena_free(&t.a, live[k], TYPE));
		ref = actrack_arena_alloc(&t.a, TYPE, SMALL);
		ASSERT_NE(0, ref);
		live[k] = ref;
	}
	grown = (hdr_of(&t)->freeptr - fp0) / BLK;
	TH_LOG("grew by %u blocks over 20000 rounds", grown);
	EXPECT_LE(grown, 8 * n / ACTRACK_ARENA_RECLAIM_WINDOW);
	EXPECT_FALSE(actrack_arena_is_corrupt(&t.a));
	free(live);
	tarena_free(&t);
}

/*
 * Every kind of bad hint in a full arena with two freed blocks far from
 * it: both blocks are handed out, then "full", and the arena is not
 * flagged corrupt.  The forged hints name block n - 2 after the real list
 * was made to skip it (n - 3 links straight to n - 1), with its link
 * rewritten as any process of the uid could.
 */
enum forged { F_NONE, F_BAD_NEXT, F_LOOP, F_UNLINKED };

static void bad_hint_case(struct __test_metadata *_metadata, __u32 hint,
			  enum forged kind, const char *what)
{
	__u32 n, got[2], want[2];
	struct tarena t;

	TH_LOG("hint: %s", what);
	ASSERT_EQ(0, tarena_format(&t, ACTRACK_ARENA_MIN_SIZE, NULL));
	n = fill_up(&t.a);
	ASSERT_GT(n, 2 * ACTRACK_ARENA_RECLAIM_WINDOW + 20);
	clear_full(&t);
	want[0] = nth(200);
	want[1] = nth(n - 1);
	ASSERT_TRUE(actrack_arena_free(&t.a, want[0], TYPE));
	ASSERT_TRUE(actrack_arena_free(&t.a, want[1], TYPE));
	if (kind != F_NONE) {
		struct actrack_block *prev = (void *)((char *)t.a.base +
						      nth(n - 3));
		struct actrack_block *b = (void *)((char *)t.a.base +
						   nth(n - 2));

		prev->next = nth(n - 1);
		b->next = kind == F_BAD_NEXT ? 0x12345 :
			  kind == F_LOOP ? nth(n - 2) : 0;
		hint = nth(n - 2);
	}
	set_hint(&t, hint);
	got[0] = actrack_arena_alloc(&t.a, TYPE, SMALL);
	got[1] = actrack_arena_alloc(&t.a, TYPE, SMALL);
	qsort(got, 2, sizeof(got[0]), cmp_u32);
	EXPECT_EQ(want[0], got[0]);
	EXPECT_EQ(want[1], got[1]);
	EXPECT_EQ(0, actrack_arena_alloc(&t.a, TYPE, SMALL));
	EXPECT_TRUE(hdr_of(&t)->flags & ACTRACK_ARENA_FULL);
	EXPECT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST(bad_hints_are_ignored_with_exact_results)
{
	size_t i;
	const struct {
		__u32 hint;
		const char *what;
	} plain[] = {
		{ 0, "none" },
		{ 1, "inside the header" },
		{ ACTRACK_REF_QUEUE, "the sentinel" },
		{ nth(300) + 8, "misaligned" },
		{ ACTRACK_ARENA_MIN_SIZE, "the arena's end" },
		{ 0xFFFFFFC0U, "far out of range" },
	};

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		bad_hint_case(_metadata, plain[i].hint, F_NONE, plain[i].what);
	bad_hint_case(_metadata, 0, F_BAD_NEXT, "forged block, bad link");
	bad_hint_case(_metadata, 0, F_LOOP, "forged block linked to itself");
	bad_hint_case(_metadata, 0, F_UNLINKED, "block never linked (next 0)");
}

/* A hint past the free pointer (memory not carved yet) is not a block. */
TEST(hint_beyond_free_pointer_is_ignored)
{
	struct tarena t;
	__u32 fp;

	ASSERT_EQ(0, tarena_format(&t, 1024 * 1024, NULL));
	ASSERT_EQ(0, fill(&t.a, 1000));
	ASSERT_TRUE(actrack_arena_free(&t.a, nth(7), TYPE));
	fp = hdr_of(&t)->freeptr;
	/* something block-shaped beyond the free pointer */
	((struct actrack_block *)((char *)t.a.base + fp))->cookie =
		ACTRACK_BLOCK_COOKIE;
	((struct actrack_block *)((char *)t.a.base + fp))->size = BLK;
	((struct actrack_block *)((char *)t.a.base + fp))->next =
		ACTRACK_REF_QUEUE;
	((struct actrack_block *)((char *)t.a.base + fp))->type_id =
		ACTRACK_TYPE_FREE(TYPE);
	set_hint(&t, fp);
	/* the scan starts at the head: block 7 is in its window */
	EXPECT_EQ(nth(7), actrack_arena_alloc(&t.a, TYPE, SMALL));
	EXPECT_EQ(fp, hdr_of(&t)->freeptr);
	EXPECT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

/*
 * Threads allocating and freeing in an arena of many blocks, so that the
 * hint moves under them: no block is ever handed to two threads at once
 * (each writes its id over the whole payload and checks it before
 * freeing), and every allocation succeeds.
 */
#define CHURN_THREADS	3
#define CHURN_HELD	64
#define CHURN_ROUNDS	3000

struct churner {
	struct tarena *t;
	int id;
	int bad;
};

static void *churn_main(void *arg)
{
	struct churner *c = arg;
	__u32 held[CHURN_HELD] = { 0 };
	unsigned int seed = (unsigned int)c->id + 1;
	int r, k, i;

	for (r = 0; r < CHURN_ROUNDS; r++) {
		unsigned char *p;

		k = rand_r(&seed) % CHURN_HELD;
		if (held[k]) {
			p = actrack_arena_get(&c->t->a, held[k], TYPE, SMALL);
			if (!p) {
				c->bad++;
				continue;
			}
			for (i = 0; i < (int)SMALL; i++)
				if (__atomic_load_n(&p[i], __ATOMIC_RELAXED) !=
				    (unsigned char)c->id)
					c->bad++;
			if (!actrack_arena_free(&c->t->a, held[k], TYPE))
				c->bad++;
		}
		held[k] = actrack_arena_alloc(&c->t->a, TYPE, SMALL);
		if (!held[k]) {
			c->bad++;
			continue;
		}
		p = actrack_arena_get(&c->t->a, held[k], TYPE, SMALL);
		if (!p) {
			c->bad++;
			continue;
		}
		for (i = 0; i < (int)SMALL; i++)
			__atomic_store_n(&p[i], (unsigned char)c->id,
					 __ATOMIC_RELAXED);
	}
	return NULL;
}

TEST(threads_churn_through_the_window)
{
	struct churner c[CHURN_THREADS];
	pthread_t th[CHURN_THREADS];
	struct tarena t;
	__u32 i;
	int j;

	ASSERT_EQ(0, tarena_format(&t, 4 * 1024 * 1024, NULL));
	/* many live blocks of another type between the free ones */
	for (i = 0; i < 4 * ACTRACK_ARENA_RECLAIM_WINDOW; i++)
		ASSERT_NE(0, actrack_arena_alloc(&t.a, ACTRACK_TYPE_MODULE,
						 SMALL));
	for (j = 0; j < CHURN_THREADS; j++) {
		c[j] = (struct churner){ .t = &t, .id = j + 1 };
		ASSERT_EQ(0, pthread_create(&th[j], NULL, churn_main, &c[j]));
	}
	for (j = 0; j < CHURN_THREADS; j++)
		ASSERT_EQ(0, pthread_join(th[j], NULL));
	for (j = 0; j < CHURN_THREADS; j++)
		EXPECT_EQ(0, c[j].bad);
	EXPECT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST_HARNESS_MAIN
