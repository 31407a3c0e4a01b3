// SPDX-License-Identifier: MIT
/*
 * arena_basic: the arena core's contract on well-formed arenas.
 *
 * Everything runs directly on anonymous memory through arena/arena.h; no
 * library, no module.  Each arena sits between two PROT_NONE guard pages,
 * so any access outside [base, base + size) kills the test.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guarded_arena.h"
#include "test_harness.h"

#define TEST_SIZE	(256U * 1024)

/* Formatted from a template whose values the header test checks. */
static int tarena_new(struct tarena *t, __u32 size)
{
	struct actrack_arena_header tmpl;

	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.uid = 1000;
	tmpl.user_hz = 100;
	tmpl.create_mono_ns = 1111;
	tmpl.create_real_ns = 2222;
	tmpl.boot_time_ns = 3333;
	memset(tmpl.boot_id, 0xab, sizeof(tmpl.boot_id));
	return tarena_format(t, size, &tmpl);
}

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		if (*c++)
			return false;
	return true;
}

/* An owned record, published the way the library does: data_id last. */
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
			__u32 tid, __u32 nslots)
{
	struct actrack_thread *th;
	__u32 ref = actrack_arena_alloc(a, ACTRACK_TYPE_THREAD,
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
	strcpy(th->name, "worker");
	at_store_release(&th->owner.data_id, actrack_arena_new_data_id(a));
	return ref;
}

static __u32 count_type(struct actrack_arena *a, __u32 type)
{
	struct actrack_arena_iter it;
	__u32 n = 0;

	actrack_arena_iter_init(&it, a);
	while (actrack_arena_iter_next(&it, type, NULL))
		n++;
	return n;
}

static bool ref_live(struct actrack_arena *a, __u32 ref, __u32 type)
{
	return actrack_arena_get(a, ref, type, 0) != NULL;
}

TEST(format_and_check)
{
	struct tarena t;
	struct actrack_arena_header *h;
	unsigned char id[16];

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	h = hdr_of(&t);
	ASSERT_EQ(0, actrack_arena_check(&t.a));
	ASSERT_EQ(ACTRACK_ARENA_MAGIC, h->magic);
	ASSERT_EQ(ACTRACK_ABI_MAJOR, h->abi_major);
	ASSERT_EQ(ACTRACK_ABI_MINOR, h->abi_minor);
	ASSERT_EQ(256U, h->header_size);
	ASSERT_EQ(TEST_SIZE, h->size);
	ASSERT_EQ(256U, h->freeptr);
	ASSERT_EQ(ACTRACK_REF_QUEUE, h->tailptr);
	ASSERT_EQ(ACTRACK_REF_QUEUE, h->queue.next);
	ASSERT_EQ(ACTRACK_BLOCK_COOKIE, h->queue.cookie);
	ASSERT_EQ(0U, h->queue.size);
	ASSERT_EQ(1000U, h->uid);
	ASSERT_EQ(100U, h->user_hz);
	ASSERT_EQ(1111ULL, h->create_mono_ns);
	ASSERT_EQ(2222ULL, h->create_real_ns);
	ASSERT_EQ(3333ULL, h->boot_time_ns);
	memset(id, 0xab, sizeof(id));
	ASSERT_EQ(0, memcmp(id, h->boot_id, sizeof(id)));
	ASSERT_TRUE(all_zero(h->reserved, sizeof(h->reserved)));
	ASSERT_EQ(256U, actrack_arena_used(&t.a));
	ASSERT_EQ(TEST_SIZE - 256U, actrack_arena_free_bytes(&t.a));
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	ASSERT_EQ(0U, count_type(&t.a, ACTRACK_TYPE_ANY));
	ASSERT_EQ(TEST_SIZE / 64, actrack_arena_max_blocks(&t.a));
	tarena_free(&t);
}

TEST(format_rejects_bad_arguments)
{
	struct tarena t;
	struct actrack_arena bad;

	ASSERT_EQ(0, tarena_map(&t, 2 * ACTRACK_ARENA_MIN_SIZE));
	bad = t.a;
	bad.size = ACTRACK_ARENA_MIN_SIZE - 64;		/* too small */
	ASSERT_EQ(-EINVAL, actrack_arena_format(&bad, NULL));
	bad.size = ACTRACK_ARENA_MIN_SIZE + 32;		/* not 64-aligned */
	ASSERT_EQ(-EINVAL, actrack_arena_format(&bad, NULL));
	bad.size = ACTRACK_ARENA_MAX_SIZE + 64;		/* too big */
	ASSERT_EQ(-EINVAL, actrack_arena_format(&bad, NULL));
	bad = t.a;
	bad.writable = false;
	ASSERT_EQ(-EINVAL, actrack_arena_format(&bad, NULL));
	bad = t.a;
	bad.base = NULL;
	ASSERT_EQ(-EINVAL, actrack_arena_format(&bad, NULL));
	/* nothing was written by the failed calls */
	ASSERT_TRUE(all_zero(t.a.base, 256));
	/* a NULL template is fine */
	ASSERT_EQ(0, actrack_arena_format(&t.a, NULL));
	ASSERT_EQ(0, actrack_arena_check(&t.a));
	tarena_free(&t);
}

TEST(alloc_aligned_zeroed_iterable)
{
	static const __u32 sizes[] = { 1, 47, 48, 49, 100, 112, 1000, 4096 };
	struct tarena t;
	struct actrack_block *b;
	__u32 refs[8], i, ref, type;
	struct actrack_arena_iter it;
	unsigned char *p;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	/* dirty the never-allocated space: alloc must not trust it */
	memset((char *)t.a.base + 256, 0x5a, 16384);
	for (i = 0; i < 8; i++) {
		refs[i] = actrack_arena_alloc(&t.a, ACTRACK_TYPE_USER_DATA,
					      sizes[i]);
		ASSERT_NE(0U, refs[i]);
		ASSERT_EQ(0U, refs[i] % 64);
		ASSERT_LE(256U, refs[i]);
		b = actrack_arena_block(&t.a, refs[i]);
		ASSERT_NE(NULL, b);
		ASSERT_EQ(0U, b->size % 64);
		/* the smallest multiple of 64 holding header + payload */
		ASSERT_LE(sizes[i] + 16, b->size);
		ASSERT_GT(sizes[i] + 16 + 64, b->size);
		ASSERT_EQ(ACTRACK_BLOCK_COOKIE, b->cookie);
		ASSERT_EQ(ACTRACK_TYPE_USER_DATA, b->type_id);
		ASSERT_NE(0U, b->next);
		ASSERT_EQ(b->size - 16, actrack_arena_payload_size(&t.a, refs[i]));
		p = actrack_arena_get(&t.a, refs[i], ACTRACK_TYPE_USER_DATA,
				      sizes[i]);
		ASSERT_NE(NULL, p);
		ASSERT_EQ((unsigned char *)b + 16, p);
		ASSERT_TRUE(all_zero(p, b->size - 16));
		if (i)
			ASSERT_EQ(refs[i - 1] +
				  actrack_arena_block(&t.a, refs[i - 1])->size,
				  refs[i]);
	}
	ASSERT_EQ(refs[7], hdr_of(&t)->tailptr);
	ASSERT_EQ(ACTRACK_REF_QUEUE, actrack_arena_block(&t.a, refs[7])->next);
	/* in allocation order, each exactly once */
	actrack_arena_iter_init(&it, &t.a);
	for (i = 0; i < 8; i++) {
		ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type);
		ASSERT_EQ(refs[i], ref);
		ASSERT_EQ(ACTRACK_TYPE_USER_DATA, type);
	}
	ASSERT_EQ(0U, actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL));
	/* bad type ids are refused */
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_ANY, 64));
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_TRANSITIONING, 64));
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a,
				ACTRACK_TYPE_FREE(ACTRACK_TYPE_THREAD), 64));
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, 0x12345678, 64));
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_THREAD, TEST_SIZE));
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_THREAD, ~0U));
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	ASSERT_EQ(0U, hdr_of(&t)->flags);
	tarena_free(&t);
}

TEST(thread_slots_on_cache_lines)
{
	struct tarena t;
	struct actrack_thread *th;
	__u32 ref, i;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	ASSERT_NE(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 5));
	for (i = 0; i < 4; i++) {
		ref = new_thread(&t.a, 10, 20, 11 + i, 8 + i);
		ASSERT_NE(0U, ref);
		th = actrack_arena_get(&t.a, ref, ACTRACK_TYPE_THREAD,
				       sizeof(*th) + (8 + i) * 64);
		ASSERT_NE(NULL, th);
		ASSERT_EQ(0U, ((char *)ACTRACK_THREAD_SLOTS(th) -
			       (char *)t.a.base) % 64);
		ASSERT_EQ(0U, (ref + actrack_arena_block(&t.a, ref)->size) % 64);
	}
	tarena_free(&t);
}

TEST(get_wrong_type_or_size)
{
	struct tarena t;
	__u32 ref, psize;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	ref = actrack_arena_alloc(&t.a, ACTRACK_TYPE_PROCESS,
				  sizeof(struct actrack_process));
	ASSERT_NE(0U, ref);
	psize = actrack_arena_payload_size(&t.a, ref);
	ASSERT_EQ(640U - 16, psize);
	ASSERT_NE(NULL, actrack_arena_get(&t.a, ref, ACTRACK_TYPE_PROCESS, psize));
	ASSERT_NE(NULL, actrack_arena_get(&t.a, ref, ACTRACK_TYPE_ANY, 0));
	ASSERT_EQ(NULL, actrack_arena_get(&t.a, ref, ACTRACK_TYPE_THREAD, 0));
	ASSERT_EQ(NULL, actrack_arena_get(&t.a, ref, ACTRACK_TYPE_PROCESS,
					  psize + 1));
	ASSERT_EQ(NULL, actrack_arena_get(&t.a, 0, ACTRACK_TYPE_ANY, 0));
	/* none of that is corruption */
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	/* a reference into the middle of a block is */
	ASSERT_EQ(NULL, actrack_arena_get(&t.a, ref + 64, ACTRACK_TYPE_ANY, 0));
	ASSERT_TRUE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST(iteration_order_and_filter)
{
	static const __u32 types[] = {
		ACTRACK_TYPE_THREAD, ACTRACK_TYPE_PROCESS, ACTRACK_TYPE_THREAD,
		ACTRACK_TYPE_LOG, ACTRACK_TYPE_MODULE, ACTRACK_TYPE_USER_DATA,
		ACTRACK_TYPE_THREAD, ACTRACK_TYPE_LOG,
	};
	struct tarena t;
	struct actrack_arena_iter it;
	__u32 refs[8], i, ref, type;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	for (i = 0; i < 8; i++) {
		refs[i] = actrack_arena_alloc(&t.a, types[i], 600);
		ASSERT_NE(0U, refs[i]);
	}
	ASSERT_EQ(3U, count_type(&t.a, ACTRACK_TYPE_THREAD));
	ASSERT_EQ(2U, count_type(&t.a, ACTRACK_TYPE_LOG));
	ASSERT_EQ(1U, count_type(&t.a, ACTRACK_TYPE_PROCESS));
	ASSERT_EQ(0U, count_type(&t.a, ACTRACK_TYPE(9, 1)));
	ASSERT_EQ(8U, count_type(&t.a, ACTRACK_TYPE_ANY));

	actrack_arena_iter_init(&it, &t.a);
	ASSERT_EQ(refs[0], actrack_arena_iter_next(&it, ACTRACK_TYPE_THREAD, &type));
	ASSERT_EQ(ACTRACK_TYPE_THREAD, type);
	ASSERT_EQ(refs[2], actrack_arena_iter_next(&it, ACTRACK_TYPE_THREAD, NULL));
	/* filters may change from call to call */
	ASSERT_EQ(refs[3], actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type));
	ASSERT_EQ(ACTRACK_TYPE_LOG, type);
	ASSERT_EQ(refs[6], actrack_arena_iter_next(&it, ACTRACK_TYPE_THREAD, NULL));
	ASSERT_EQ(0U, actrack_arena_iter_next(&it, ACTRACK_TYPE_THREAD, NULL));
	ASSERT_EQ(0U, actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL));

	/* freed blocks stay in the list under their free type */
	ASSERT_TRUE(actrack_arena_free(&t.a, refs[2], ACTRACK_TYPE_THREAD));
	ASSERT_EQ(2U, count_type(&t.a, ACTRACK_TYPE_THREAD));
	ASSERT_EQ(1U, count_type(&t.a, ACTRACK_TYPE_FREE(ACTRACK_TYPE_THREAD)));
	actrack_arena_iter_init(&it, &t.a);
	for (i = 0; i < 8; i++) {
		ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type);
		ASSERT_EQ(refs[i], ref);
		ASSERT_EQ(i == 2 ? ACTRACK_TYPE_FREE(types[i]) : types[i], type);
	}
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST(iterator_continues_after_appends)
{
	struct tarena t;
	struct actrack_arena_iter it;
	__u32 r1, r2, r3;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	actrack_arena_iter_init(&it, &t.a);
	ASSERT_EQ(0U, actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL));
	r1 = actrack_arena_alloc(&t.a, ACTRACK_TYPE_MODULE, 300);
	ASSERT_EQ(r1, actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL));
	ASSERT_EQ(0U, actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL));
	r2 = actrack_arena_alloc(&t.a, ACTRACK_TYPE_MODULE, 300);
	r3 = actrack_arena_alloc(&t.a, ACTRACK_TYPE_MODULE, 300);
	ASSERT_EQ(r2, actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL));
	ASSERT_EQ(r3, actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL));
	ASSERT_EQ(0U, actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL));
	tarena_free(&t);
}

TEST(make_iterable_idempotent)
{
	struct tarena t;
	__u32 r1, r2;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	r1 = actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 100);
	r2 = actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 100);
	actrack_arena_make_iterable(&t.a, r1);
	actrack_arena_make_iterable(&t.a, r2);
	actrack_arena_make_iterable(&t.a, r1);
	actrack_arena_make_iterable(&t.a, 0);
	ASSERT_EQ(2U, count_type(&t.a, ACTRACK_TYPE_ANY));
	ASSERT_EQ(r2, hdr_of(&t)->tailptr);
	ASSERT_EQ(r2, actrack_arena_block(&t.a, r1)->next);
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST(free_and_reclaim)
{
	struct tarena t;
	struct actrack_thread *th;
	__u32 r1, r2, r3, r4, used;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	r1 = new_thread(&t.a, 5, 50, 6, 16);
	r2 = new_thread(&t.a, 5, 50, 7, 16);
	ASSERT_NE(0U, r1);
	ASSERT_NE(0U, r2);
	used = actrack_arena_used(&t.a);
	th = actrack_arena_get(&t.a, r1, ACTRACK_TYPE_THREAD, sizeof(*th));
	th->depth = 3;
	ACTRACK_THREAD_SLOTS(th)[2].object = 99;

	ASSERT_TRUE(actrack_arena_free(&t.a, r1, ACTRACK_TYPE_THREAD));
	ASSERT_FALSE(actrack_arena_free(&t.a, r1, ACTRACK_TYPE_THREAD));
	ASSERT_EQ(ACTRACK_TYPE_FREE(ACTRACK_TYPE_THREAD),
		  actrack_arena_block(&t.a, r1)->type_id);
	/* the payload, data_id included, is cleared */
	ASSERT_TRUE(all_zero(th, actrack_arena_payload_size(&t.a, r1)));
	ASSERT_EQ(NULL, actrack_arena_get(&t.a, r1, ACTRACK_TYPE_THREAD, 0));

	/* another type never reuses it */
	r3 = actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 16 * 64 + 112);
	ASSERT_NE(r1, r3);
	ASSERT_NE(0U, r3);
	/* the same type (and a fitting size) does, zeroed even if scribbled */
	memset(th, 0x77, 64);
	used = actrack_arena_used(&t.a);
	r4 = actrack_arena_alloc(&t.a, ACTRACK_TYPE_THREAD, 16 * 64 + 112);
	ASSERT_EQ(r1, r4);
	ASSERT_EQ(used, actrack_arena_used(&t.a));
	ASSERT_EQ(ACTRACK_TYPE_THREAD, actrack_arena_block(&t.a, r4)->type_id);
	ASSERT_TRUE(all_zero(th, actrack_arena_payload_size(&t.a, r4)));
	/* still listed once */
	ASSERT_EQ(2U, count_type(&t.a, ACTRACK_TYPE_THREAD));
	ASSERT_EQ(3U, count_type(&t.a, ACTRACK_TYPE_ANY));
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST(reclaim_size_window)
{
	struct tarena t;
	__u32 big, small, r;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	big = actrack_arena_alloc(&t.a, ACTRACK_TYPE_MODULE, 1024 - 16);
	small = actrack_arena_alloc(&t.a, ACTRACK_TYPE_MODULE, 64 - 16);
	ASSERT_TRUE(actrack_arena_free(&t.a, big, ACTRACK_TYPE_MODULE));
	ASSERT_TRUE(actrack_arena_free(&t.a, small, ACTRACK_TYPE_MODULE));
	/* needs 128: the 64 block is too small, the 1024 one too wasteful */
	r = actrack_arena_alloc(&t.a, ACTRACK_TYPE_MODULE, 100);
	ASSERT_NE(big, r);
	ASSERT_NE(small, r);
	/* needs 512: 1024 <= 2 * 512, reused */
	r = actrack_arena_alloc(&t.a, ACTRACK_TYPE_MODULE, 512 - 16);
	ASSERT_EQ(big, r);
	ASSERT_EQ(1024U - 16, actrack_arena_payload_size(&t.a, r));
	/* needs 64: exact fit */
	r = actrack_arena_alloc(&t.a, ACTRACK_TYPE_MODULE, 1);
	ASSERT_EQ(small, r);
	tarena_free(&t);
}

TEST(change_type_with_and_without_clear)
{
	struct tarena t;
	__u32 ref;
	__u64 *p;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	ref = actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 200);
	p = actrack_arena_get(&t.a, ref, ACTRACK_TYPE_LOG, 8);
	*p = 42;
	/* wrong from: no change */
	ASSERT_FALSE(actrack_arena_change_type(&t.a, ref, ACTRACK_TYPE_MODULE,
					       ACTRACK_TYPE_THREAD, false));
	ASSERT_EQ(ACTRACK_TYPE_LOG, actrack_arena_block(&t.a, ref)->type_id);
	ASSERT_TRUE(actrack_arena_change_type(&t.a, ref, ACTRACK_TYPE_MODULE,
					      ACTRACK_TYPE_LOG, false));
	ASSERT_EQ(42ULL, *p);
	ASSERT_TRUE(actrack_arena_change_type(&t.a, ref, ACTRACK_TYPE_LOG,
					      ACTRACK_TYPE_MODULE, true));
	ASSERT_EQ(0ULL, *p);
	ASSERT_EQ(ACTRACK_TYPE_LOG, actrack_arena_block(&t.a, ref)->type_id);
	/* TRANSITIONING is internal */
	ASSERT_FALSE(actrack_arena_change_type(&t.a, ref,
			ACTRACK_TYPE_TRANSITIONING, ACTRACK_TYPE_LOG, false));
	ASSERT_FALSE(actrack_arena_change_type(&t.a, ref, ACTRACK_TYPE_LOG,
			ACTRACK_TYPE_TRANSITIONING, false));
	ASSERT_FALSE(actrack_arena_change_type(&t.a, 0, ACTRACK_TYPE_LOG,
					       ACTRACK_TYPE_MODULE, false));
	tarena_free(&t);
}

TEST(full_arena)
{
	struct tarena t;
	__u32 ref, n = 0, last = 0;

	ASSERT_EQ(0, tarena_new(&t, ACTRACK_ARENA_MIN_SIZE));
	while ((ref = actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 1000)) != 0) {
		ASSERT_GT(ref, last);
		last = ref;
		n++;
		ASSERT_LT(n, 1000U);
	}
	/* (65536 - 256) / 1024 blocks of 1024 bytes */
	ASSERT_EQ(63U, n);
	ASSERT_EQ(ACTRACK_ARENA_FULL, hdr_of(&t)->flags & ACTRACK_ARENA_FULL);
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	ASSERT_EQ(256U + 63 * 1024, actrack_arena_used(&t.a));
	ASSERT_EQ(ACTRACK_ARENA_MIN_SIZE - 256 - 63 * 1024,
		  actrack_arena_free_bytes(&t.a));
	/* a small block still fits in the rest */
	ASSERT_NE(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 100));
	/* and a freed block can still be reclaimed */
	ASSERT_TRUE(actrack_arena_free(&t.a, last, ACTRACK_TYPE_LOG));
	ASSERT_EQ(last, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 1000));
	ASSERT_EQ(63U + 1, count_type(&t.a, ACTRACK_TYPE_LOG));
	tarena_free(&t);
}

TEST(used_and_free_bytes)
{
	struct tarena t;
	__u32 r1, r2;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	r1 = actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 1000);	/* 1024 */
	r2 = actrack_arena_alloc(&t.a, ACTRACK_TYPE_MODULE, 40);	/* 64 */
	ASSERT_EQ(256U + 1024 + 64, actrack_arena_used(&t.a));
	ASSERT_EQ(TEST_SIZE - 256 - 1024 - 64, actrack_arena_free_bytes(&t.a));
	ASSERT_TRUE(actrack_arena_free(&t.a, r1, ACTRACK_TYPE_LOG));
	ASSERT_EQ(TEST_SIZE - 256 - 64, actrack_arena_free_bytes(&t.a));
	ASSERT_TRUE(actrack_arena_free(&t.a, r2, ACTRACK_TYPE_MODULE));
	ASSERT_EQ(TEST_SIZE - 256, actrack_arena_free_bytes(&t.a));
	ASSERT_EQ(256U + 1024 + 64, actrack_arena_used(&t.a));
	tarena_free(&t);
}

TEST(free_owner_exact_match)
{
	struct tarena t;
	__u32 p1a, p1b, p1c, p1d, other_st, other_pid, glob, r;
	struct actrack_owner *o;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	p1a = new_owned(&t.a, ACTRACK_TYPE_PROCESS,
			sizeof(struct actrack_process), 100, 5000, 0);
	p1b = new_thread(&t.a, 100, 5000, 101, 4);
	p1c = new_owned(&t.a, ACTRACK_TYPE_USER_DATA, 256, 100, 5000, 101);
	p1d = new_owned(&t.a, ACTRACK_TYPE_MODULE,
			sizeof(struct actrack_module), 100, 5000, 0);
	/* same pid, another start time: a reused pid, must survive */
	other_st = new_thread(&t.a, 100, 5001, 100, 4);
	/* same start time, another pid */
	other_pid = new_owned(&t.a, ACTRACK_TYPE_LOG, 512, 200, 5000, 0);
	/* global user data: pid 0 */
	glob = new_owned(&t.a, ACTRACK_TYPE_USER_DATA, 256, 0, 0, 0);
	ASSERT_NE(0U, glob);

	/* a non-owned type with owner-like contents is never touched */
	r = actrack_arena_alloc(&t.a, ACTRACK_TYPE(7, 1), 64);
	o = actrack_arena_get(&t.a, r, ACTRACK_TYPE(7, 1), 24);
	o->data_id = 1;
	o->pid = 100;
	o->start_ticks = 5000;
	ASSERT_EQ(4, actrack_arena_free_owner(&t.a, 100, 5000, 0));
	ASSERT_TRUE(ref_live(&t.a, r, ACTRACK_TYPE(7, 1)));
	ASSERT_FALSE(ref_live(&t.a, p1a, ACTRACK_TYPE_PROCESS));
	ASSERT_FALSE(ref_live(&t.a, p1b, ACTRACK_TYPE_THREAD));
	ASSERT_FALSE(ref_live(&t.a, p1c, ACTRACK_TYPE_USER_DATA));
	ASSERT_FALSE(ref_live(&t.a, p1d, ACTRACK_TYPE_MODULE));
	ASSERT_TRUE(ref_live(&t.a, p1d, ACTRACK_TYPE_FREE(ACTRACK_TYPE_MODULE)));
	ASSERT_TRUE(ref_live(&t.a, other_st, ACTRACK_TYPE_THREAD));
	ASSERT_TRUE(ref_live(&t.a, other_pid, ACTRACK_TYPE_LOG));
	ASSERT_TRUE(ref_live(&t.a, glob, ACTRACK_TYPE_USER_DATA));
	/* idempotent */
	ASSERT_EQ(0, actrack_arena_free_owner(&t.a, 100, 5000, 0));
	/* pid 0 never matches, not even the global records */
	ASSERT_EQ(0, actrack_arena_free_owner(&t.a, 0, 0, 0));
	ASSERT_TRUE(ref_live(&t.a, glob, ACTRACK_TYPE_USER_DATA));
	ASSERT_EQ(1, actrack_arena_free_owner(&t.a, 100, 5001, 0));
	ASSERT_FALSE(ref_live(&t.a, other_st, ACTRACK_TYPE_THREAD));
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST(free_owner_tid_filter)
{
	struct tarena t;
	__u32 t1, t1ud, t2, t2ud, proc;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	proc = new_owned(&t.a, ACTRACK_TYPE_PROCESS,
			 sizeof(struct actrack_process), 300, 7, 0);
	t1 = new_thread(&t.a, 300, 7, 301, 4);
	t1ud = new_owned(&t.a, ACTRACK_TYPE_USER_DATA, 128, 300, 7, 301);
	t2 = new_thread(&t.a, 300, 7, 302, 4);
	t2ud = new_owned(&t.a, ACTRACK_TYPE_USER_DATA, 128, 300, 7, 302);
	ASSERT_EQ(2, actrack_arena_free_owner(&t.a, 300, 7, 301));
	ASSERT_FALSE(ref_live(&t.a, t1, ACTRACK_TYPE_THREAD));
	ASSERT_FALSE(ref_live(&t.a, t1ud, ACTRACK_TYPE_USER_DATA));
	ASSERT_TRUE(ref_live(&t.a, t2, ACTRACK_TYPE_THREAD));
	ASSERT_TRUE(ref_live(&t.a, t2ud, ACTRACK_TYPE_USER_DATA));
	ASSERT_TRUE(ref_live(&t.a, proc, ACTRACK_TYPE_PROCESS));
	/* tid filter with the wrong start time frees nothing */
	ASSERT_EQ(0, actrack_arena_free_owner(&t.a, 300, 8, 302));
	ASSERT_EQ(3, actrack_arena_free_owner(&t.a, 300, 7, 0));
	tarena_free(&t);
}

/*
 * An owner that died between allocating a record and publishing it: the
 * record carries its owner from the allocation on (alloc_owned), and the
 * cleanup after that owner frees it; nobody else's unpublished record is
 * touched.
 */
TEST(free_owner_takes_unpublished_records_of_the_dead)
{
	struct actrack_owner dead = { .pid = 400, .tid = 401,
				      .start_ticks = 1 };
	struct actrack_owner other = { .pid = 400, .tid = 402,
				       .start_ticks = 2 };
	struct actrack_owner *o;
	struct tarena t;
	__u32 ref, ref2;
	void *p;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	ref = actrack_arena_alloc_owned(&t.a, ACTRACK_TYPE_USER_DATA, 64,
					&dead, &p);
	ASSERT_NE(0U, ref);
	o = p;
	EXPECT_EQ(0U, o->data_id);
	EXPECT_EQ(400U, o->pid);
	EXPECT_EQ(401U, o->tid);
	EXPECT_EQ(1ULL, o->start_ticks);
	ref2 = actrack_arena_alloc_owned(&t.a, ACTRACK_TYPE_USER_DATA, 64,
					 &other, &p);
	ASSERT_NE(0U, ref2);
	/* Not an owned type, or too small for its record: refused. */
	EXPECT_EQ(0U, actrack_arena_alloc_owned(&t.a, ACTRACK_TYPE(0x7e, 1),
						64, &dead, &p));
	EXPECT_EQ(0U, actrack_arena_alloc_owned(&t.a, ACTRACK_TYPE_THREAD, 8,
						&dead, &p));
	/* Another thread's batch leaves it alone; its own thread's takes it. */
	ASSERT_EQ(0, actrack_arena_free_owner(&t.a, 400, 1, 999));
	ASSERT_TRUE(ref_live(&t.a, ref, ACTRACK_TYPE_USER_DATA));
	ASSERT_EQ(1, actrack_arena_free_owner(&t.a, 400, 1, 401));
	ASSERT_FALSE(ref_live(&t.a, ref, ACTRACK_TYPE_USER_DATA));
	/* The other start time's record is still there. */
	ASSERT_TRUE(ref_live(&t.a, ref2, ACTRACK_TYPE_USER_DATA));
	ASSERT_EQ(1, actrack_arena_free_owner(&t.a, 400, 2, 0));
	tarena_free(&t);
}

TEST(find_process)
{
	struct tarena t;
	__u32 a1, a2, b1;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	ASSERT_EQ(0U, actrack_arena_find_process(&t.a, 1, 1));
	a1 = new_owned(&t.a, ACTRACK_TYPE_PROCESS,
		       sizeof(struct actrack_process), 500, 10, 0);
	b1 = new_owned(&t.a, ACTRACK_TYPE_PROCESS,
		       sizeof(struct actrack_process), 501, 10, 0);
	a2 = new_owned(&t.a, ACTRACK_TYPE_PROCESS,
		       sizeof(struct actrack_process), 500, 11, 0);
	/* a thread of the same owner is not a process record */
	ASSERT_NE(0U, new_thread(&t.a, 500, 12, 500, 1));
	ASSERT_EQ(a1, actrack_arena_find_process(&t.a, 500, 10));
	ASSERT_EQ(a2, actrack_arena_find_process(&t.a, 500, 11));
	ASSERT_EQ(b1, actrack_arena_find_process(&t.a, 501, 10));
	ASSERT_EQ(0U, actrack_arena_find_process(&t.a, 500, 12));
	ASSERT_EQ(0U, actrack_arena_find_process(&t.a, 0, 0));
	ASSERT_EQ(1, actrack_arena_free_owner(&t.a, 500, 10, 0));
	ASSERT_EQ(0U, actrack_arena_find_process(&t.a, 500, 10));
	tarena_free(&t);
}

TEST(copy_thread)
{
	struct tarena t;
	struct actrack_thread_copy *c;
	struct actrack_thread *th;
	__u32 ref, i, log;

	c = malloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	ref = new_thread(&t.a, 600, 60, 601, 4);
	th = actrack_arena_get(&t.a, ref, ACTRACK_TYPE_THREAD, sizeof(*th));
	for (i = 0; i < 4; i++) {
		ACTRACK_THREAD_SLOTS(th)[i].object = 1000 + i;
		ACTRACK_THREAD_SLOTS(th)[i].type = ACTRACK_ACT_LOCK_ACQUIRE;
	}
	at_store_release(&th->depth, 3);
	th->version = 10;	/* even: no change under way */

	memset(c, 0xff, sizeof(*c));
	ASSERT_EQ(0, actrack_arena_copy_thread(&t.a, ref, c));
	ASSERT_EQ(ref, c->ref);
	ASSERT_EQ(3U, c->nr_slots);
	ASSERT_EQ(3U, c->hdr.depth);
	ASSERT_EQ(4U, c->hdr.slot_count);
	ASSERT_EQ(10U, c->hdr.version);
	ASSERT_EQ(600U, c->hdr.owner.pid);
	ASSERT_EQ(601U, c->hdr.owner.tid);
	ASSERT_EQ(60ULL, c->hdr.owner.start_ticks);
	ASSERT_EQ(th->owner.data_id, c->hdr.owner.data_id);
	ASSERT_STREQ("worker", c->hdr.name);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(1000ULL + i, c->slots[i].object);

	/* deeper than the slots: only the stored ones are copied */
	at_store_release(&th->depth, 70);
	ASSERT_EQ(0, actrack_arena_copy_thread(&t.a, ref, c));
	ASSERT_EQ(4U, c->nr_slots);
	ASSERT_EQ(70U, c->hdr.depth);

	/* wrong type, bad args */
	ASSERT_EQ(-EINVAL, actrack_arena_copy_thread(&t.a, 0, c));
	ASSERT_EQ(-EINVAL, actrack_arena_copy_thread(&t.a, ref, NULL));
	log = actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 500);
	ASSERT_EQ(-ENOENT, actrack_arena_copy_thread(&t.a, log, c));
	/* freed */
	ASSERT_TRUE(actrack_arena_free(&t.a, ref, ACTRACK_TYPE_THREAD));
	ASSERT_EQ(-ENOENT, actrack_arena_copy_thread(&t.a, ref, c));
	/* reclaimed but not published yet */
	ASSERT_EQ(ref, actrack_arena_alloc(&t.a, ACTRACK_TYPE_THREAD,
					   sizeof(*th) + 4 * 64));
	ASSERT_EQ(-ENOENT, actrack_arena_copy_thread(&t.a, ref, c));
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
	free(c);
}

TEST(copy_owned)
{
	struct tarena t;
	struct actrack_user_data *ud, udc;
	struct actrack_process *p, pc;
	unsigned char buf[64], big[256];
	__u32 uref, pref;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	pref = new_owned(&t.a, ACTRACK_TYPE_PROCESS, sizeof(*p), 700, 70, 0);
	p = actrack_arena_get(&t.a, pref, ACTRACK_TYPE_PROCESS, sizeof(*p));
	p->phase = ACTRACK_PHASE_MAIN_LOOP_STARTED;
	strcpy(p->cmdline, "prog");
	ASSERT_EQ((int)sizeof(pc), actrack_arena_copy_owned(&t.a, pref,
				ACTRACK_TYPE_PROCESS, &pc, sizeof(pc)));
	ASSERT_EQ((__u32)ACTRACK_PHASE_MAIN_LOOP_STARTED, pc.phase);
	ASSERT_STREQ("prog", pc.cmdline);
	/* truncated to the buffer */
	ASSERT_EQ(64, actrack_arena_copy_owned(&t.a, pref, ACTRACK_TYPE_PROCESS,
					       buf, sizeof(buf)));
	/* truncated to the payload */
	uref = new_owned(&t.a, ACTRACK_TYPE_USER_DATA, 48, 700, 70, 0);
	ud = actrack_arena_get(&t.a, uref, ACTRACK_TYPE_USER_DATA, sizeof(*ud));
	ud->capacity = 0;
	ud->seq = 4;
	ASSERT_EQ(48, actrack_arena_copy_owned(&t.a, uref,
			ACTRACK_TYPE_USER_DATA, big, sizeof(big)));
	/* odd seq: a rewrite in progress that never ends -> torn */
	ud->seq = 5;
	ASSERT_EQ(-EAGAIN, actrack_arena_copy_owned(&t.a, uref,
				ACTRACK_TYPE_USER_DATA, &udc, sizeof(udc)));
	ud->seq = 6;
	ASSERT_EQ(48, actrack_arena_copy_owned(&t.a, uref,
				ACTRACK_TYPE_USER_DATA, &udc, sizeof(udc)));
	ASSERT_EQ(6U, udc.seq);
	/* errors */
	ASSERT_EQ(-ENOENT, actrack_arena_copy_owned(&t.a, uref,
				ACTRACK_TYPE_PROCESS, &pc, sizeof(pc)));
	ASSERT_EQ(-EINVAL, actrack_arena_copy_owned(&t.a, uref,
				ACTRACK_TYPE(9, 1), &pc, sizeof(pc)));
	ASSERT_EQ(-EINVAL, actrack_arena_copy_owned(&t.a, uref,
				ACTRACK_TYPE_USER_DATA, &pc, 8));
	ASSERT_EQ(-EINVAL, actrack_arena_copy_owned(&t.a, 0,
				ACTRACK_TYPE_USER_DATA, &pc, sizeof(pc)));
	ASSERT_TRUE(actrack_arena_free(&t.a, pref, ACTRACK_TYPE_PROCESS));
	ASSERT_EQ(-ENOENT, actrack_arena_copy_owned(&t.a, pref,
				ACTRACK_TYPE_PROCESS, &pc, sizeof(pc)));
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

TEST(data_ids_unique_nonzero)
{
	struct tarena t;
	__u32 *ids, i, j;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	ids = calloc(1000, sizeof(*ids));
	ASSERT_NE(NULL, ids);
	for (i = 0; i < 1000; i++) {
		ids[i] = actrack_arena_new_data_id(&t.a);
		ASSERT_NE(0U, ids[i]);
		for (j = 0; j < i; j++)
			ASSERT_NE(ids[j], ids[i]);
	}
	/* wrapping skips 0 and 0xffffffff (a record being freed) */
	hdr_of(&t)->next_data_id = 0xfffffffd;
	ASSERT_EQ(0xfffffffeU, actrack_arena_new_data_id(&t.a));
	ASSERT_EQ(1U, actrack_arena_new_data_id(&t.a));
	ASSERT_EQ(2U, actrack_arena_new_data_id(&t.a));
	free(ids);
	tarena_free(&t);
}

TEST(check_errnos)
{
	struct tarena t;
	struct actrack_arena_header *h, saved;
	struct actrack_arena small;

	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	h = hdr_of(&t);
	ASSERT_NE(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 100));
	saved = *h;
	ASSERT_EQ(0, actrack_arena_check(&t.a));

#define RESTORE() do { *h = saved; ASSERT_EQ(0, actrack_arena_check(&t.a)); } while (0)
	h->magic ^= 1;
	ASSERT_EQ(-EBADMSG, actrack_arena_check(&t.a));
	RESTORE();
	h->header_size = 128;
	ASSERT_EQ(-EBADMSG, actrack_arena_check(&t.a));
	RESTORE();
	h->abi_major = ACTRACK_ABI_MAJOR + 1;
	ASSERT_EQ(-EPROTONOSUPPORT, actrack_arena_check(&t.a));
	RESTORE();
	/* a newer minor is compatible */
	h->abi_minor = ACTRACK_ABI_MINOR + 5;
	ASSERT_EQ(0, actrack_arena_check(&t.a));
	RESTORE();
	h->size = TEST_SIZE * 2;
	ASSERT_EQ(-EUCLEAN, actrack_arena_check(&t.a));
	RESTORE();
	h->freeptr = TEST_SIZE + 64;
	ASSERT_EQ(-EUCLEAN, actrack_arena_check(&t.a));
	RESTORE();
	h->freeptr = 300;
	ASSERT_EQ(-EUCLEAN, actrack_arena_check(&t.a));
	RESTORE();
	h->freeptr = 128;
	ASSERT_EQ(-EUCLEAN, actrack_arena_check(&t.a));
	RESTORE();
	h->tailptr = 384;	/* aligned, but == freeptr (256 + 128) */
	ASSERT_EQ(-EUCLEAN, actrack_arena_check(&t.a));
	RESTORE();
	h->tailptr = 260;
	ASSERT_EQ(-EUCLEAN, actrack_arena_check(&t.a));
	RESTORE();
	h->queue.cookie = 0;
	ASSERT_EQ(-EUCLEAN, actrack_arena_check(&t.a));
	RESTORE();
	h->queue.next = 64;
	ASSERT_EQ(-EUCLEAN, actrack_arena_check(&t.a));
	RESTORE();
	/* the magic is checked before anything else */
	h->magic = 0;
	h->abi_major = 7;
	ASSERT_EQ(-EBADMSG, actrack_arena_check(&t.a));
	RESTORE();
	/* too short to hold a header, or no memory at all */
	small = t.a;
	small.size = 100;
	ASSERT_EQ(-EBADMSG, actrack_arena_check(&small));
	small.base = NULL;
	ASSERT_EQ(-EINVAL, actrack_arena_check(&small));
	/* check() itself never marks anything */
	ASSERT_EQ(0U, h->flags & ACTRACK_ARENA_CORRUPT);
#undef RESTORE
	tarena_free(&t);
}

TEST(readonly_arena_is_never_written)
{
	struct tarena t;
	struct actrack_thread_copy *c = malloc(sizeof(*c));
	__u32 thr, proc, ref;
	struct actrack_process pc;
	struct actrack_arena_iter it;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, tarena_new(&t, TEST_SIZE));
	thr = new_thread(&t.a, 800, 80, 801, 4);
	proc = new_owned(&t.a, ACTRACK_TYPE_PROCESS, sizeof(pc), 800, 80, 0);
	tarena_protect(&t, false);	/* any store now faults */
	ASSERT_EQ(0, actrack_arena_check(&t.a));
	ASSERT_EQ(0U, actrack_arena_alloc(&t.a, ACTRACK_TYPE_LOG, 10));
	ASSERT_FALSE(actrack_arena_free(&t.a, thr, ACTRACK_TYPE_THREAD));
	ASSERT_FALSE(actrack_arena_change_type(&t.a, thr, ACTRACK_TYPE_LOG,
					       ACTRACK_TYPE_THREAD, false));
	ASSERT_EQ(0, actrack_arena_free_owner(&t.a, 800, 80, 0));
	ASSERT_EQ(0U, actrack_arena_new_data_id(&t.a));
	actrack_arena_make_iterable(&t.a, thr);
	ASSERT_EQ(-EINVAL, actrack_arena_format(&t.a, NULL));
	ASSERT_EQ(0, actrack_arena_copy_thread(&t.a, thr, c));
	ASSERT_EQ((int)sizeof(pc), actrack_arena_copy_owned(&t.a, proc,
				ACTRACK_TYPE_PROCESS, &pc, sizeof(pc)));
	ASSERT_EQ(proc, actrack_arena_find_process(&t.a, 800, 80));
	/* a corrupt finding only sets this reader's flag */
	ASSERT_EQ(NULL, actrack_arena_get(&t.a, thr + 64, ACTRACK_TYPE_ANY, 0));
	ASSERT_TRUE(t.a.corrupt);
	ASSERT_EQ(0U, hdr_of(&t)->flags & ACTRACK_ARENA_CORRUPT);
	actrack_arena_iter_init(&it, &t.a);
	ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL);
	ASSERT_EQ(thr, ref);
	free(c);
	tarena_free(&t);
}

TEST_HARNESS_MAIN
