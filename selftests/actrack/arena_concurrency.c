// SPDX-License-Identifier: MIT
/*
 * arena_concurrency: the arena core's lock-free paths under real races.
 *
 * Threads stand in for processes: each has its own struct actrack_arena
 * (its own corrupt flag) over the same memory.  Worker threads cannot use
 * ASSERT_*, so they count what went wrong and the test asserts the counts
 * after joining.  All loops are bounded.
 *
 * Real races on a loaded two-CPU machine hit the interesting windows only
 * by luck, so the interleave_* tests also inject one "other process"
 * action at every single access the code under test makes to the arena
 * (x86-64: the arena is PROT_NONE, each fault is counted, the access is
 * single-stepped with the trap flag, and at access k the action runs).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "guarded_arena.h"
#include "test_harness.h"

#define ARENA_SIZE	(4U * 1024 * 1024)

static __u64 xs(__u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static int cmp_u32(const void *x, const void *y)
{
	__u32 a = *(const __u32 *)x, b = *(const __u32 *)y;

	return a < b ? -1 : a > b;
}

static int start_threads(pthread_t *th, int n, void *(*fn)(void *),
			 void *args, size_t argsize)
{
	int i;

	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, fn, (char *)args + i * argsize))
			return -1;
	return 0;
}

static void join_threads(pthread_t *th, int n)
{
	int i;

	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* ------------------------------------------------------------------------ */
/* Allocation, freeing, reclaiming and appending from many threads          */
/* ------------------------------------------------------------------------ */

#define ALLOC_THREADS	4
#define ALLOC_OPS	15000
#define ALLOC_LIVE	48

static const __u32 class_type[3] = {
	ACTRACK_TYPE_USER_DATA, ACTRACK_TYPE_LOG, ACTRACK_TYPE_MODULE,
};
static const __u32 class_size[3] = { 40, 200, 600 };

struct alloc_worker {
	struct actrack_arena a;
	int idx;
	__u32 *got;		/* every reference handed out, with repeats */
	__u32 ngot;
	int errors;		/* wrong type, not zeroed, overwritten */
	int fails;		/* allocation or free failed */
};

static bool payload_is(const __u32 *p, __u32 words, __u32 v)
{
	__u32 i;

	for (i = 0; i < words; i++)
		if (p[i] != v)
			return false;
	return true;
}

static void *alloc_main(void *arg)
{
	struct alloc_worker *w = arg;
	struct { __u32 ref, type, words, pattern; } live[ALLOC_LIVE];
	__u64 seed = 0x1234567ULL * (w->idx + 1);
	__u32 nlive = 0, i, k, cls, ref, words, *p;

	for (i = 0; i < ALLOC_OPS; i++) {
		if (nlive == ALLOC_LIVE || (nlive && (xs(&seed) & 1))) {
			k = xs(&seed) % nlive;
			p = actrack_arena_get(&w->a, live[k].ref, live[k].type,
					      live[k].words * 4);
			/* nobody else may have touched our live block */
			if (!p || !payload_is(p, live[k].words, live[k].pattern))
				w->errors++;
			if (!actrack_arena_free(&w->a, live[k].ref, live[k].type))
				w->fails++;
			live[k] = live[--nlive];
			continue;
		}
		cls = xs(&seed) % 3;
		ref = actrack_arena_alloc(&w->a, class_type[cls], class_size[cls]);
		if (!ref) {
			w->fails++;
			continue;
		}
		w->got[w->ngot++] = ref;
		words = actrack_arena_payload_size(&w->a, ref) / 4;
		p = actrack_arena_get(&w->a, ref, class_type[cls],
				      class_size[cls]);
		if (!p || !payload_is(p, words, 0)) {
			w->errors++;
			continue;
		}
		live[nlive].ref = ref;
		live[nlive].type = class_type[cls];
		live[nlive].words = words;
		live[nlive].pattern = ((__u32)w->idx << 24) | i;
		for (k = 0; k < words; k++)
			p[k] = live[nlive].pattern;
		nlive++;
		if ((xs(&seed) & 3) == 0)
			actrack_arena_make_iterable(&w->a, ref);
	}
	return NULL;
}

TEST(alloc_free_reclaim_from_many_threads)
{
	struct alloc_worker w[ALLOC_THREADS];
	pthread_t th[ALLOC_THREADS];
	struct actrack_arena_iter it;
	struct tarena t;
	__u32 *list, *sorted, n = 0, i, ref, type, distinct, total = 0;
	__u32 *all;
	int errors = 0;

	ASSERT_EQ(0, tarena_format(&t, ARENA_SIZE, NULL));
	for (i = 0; i < ALLOC_THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].a = t.a;
		w[i].idx = (int)i;
		w[i].got = calloc(ALLOC_OPS, sizeof(__u32));
		ASSERT_NE(NULL, w[i].got);
	}
	ASSERT_EQ(0, start_threads(th, ALLOC_THREADS, alloc_main, w,
				   sizeof(w[0])));
	join_threads(th, ALLOC_THREADS);
	for (i = 0; i < ALLOC_THREADS; i++) {
		ASSERT_EQ(0, w[i].errors);
		ASSERT_EQ(0, w[i].fails);
		ASSERT_FALSE(w[i].a.corrupt);
		total += w[i].ngot;
	}
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	ASSERT_EQ(0U, ((struct actrack_arena_header *)t.a.base)->flags);

	/* the list, in order */
	list = calloc(actrack_arena_max_blocks(&t.a), sizeof(__u32));
	ASSERT_NE(NULL, list);
	actrack_arena_iter_init(&it, &t.a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type))) {
		bool known = false;

		for (i = 0; i < 3; i++)
			known |= type == class_type[i] ||
				 type == ACTRACK_TYPE_FREE(class_type[i]);
		ASSERT_TRUE(known);
		list[n++] = ref;
	}
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	ASSERT_EQ(list[n - 1],
		  ((struct actrack_arena_header *)t.a.base)->tailptr);

	/* each block once, none overlapping, all below the free pointer */
	sorted = calloc(n, sizeof(__u32));
	ASSERT_NE(NULL, sorted);
	memcpy(sorted, list, n * sizeof(__u32));
	qsort(sorted, n, sizeof(__u32), cmp_u32);
	for (i = 0; i + 1 < n; i++) {
		ASSERT_LT(sorted[i], sorted[i + 1]);
		ASSERT_LE(sorted[i] + actrack_arena_block(&t.a, sorted[i])->size,
			  sorted[i + 1]);
	}
	/* blocks tile the arena: nothing carved was lost */
	ASSERT_EQ(256U, sorted[0]);
	ASSERT_EQ(actrack_arena_used(&t.a),
		  sorted[n - 1] + actrack_arena_block(&t.a, sorted[n - 1])->size);

	/* every reference handed out is listed; nothing else is */
	all = calloc(total, sizeof(__u32));
	ASSERT_NE(NULL, all);
	total = 0;
	for (i = 0; i < ALLOC_THREADS; i++) {
		memcpy(all + total, w[i].got, w[i].ngot * sizeof(__u32));
		total += w[i].ngot;
	}
	qsort(all, total, sizeof(__u32), cmp_u32);
	distinct = 0;
	for (i = 0; i < total; i++) {
		if (i && all[i] == all[i - 1])
			continue;
		if (!bsearch(&all[i], sorted, n, sizeof(__u32), cmp_u32))
			errors++;
		distinct++;
	}
	ASSERT_EQ(0, errors);
	ASSERT_EQ(n, distinct);
	TH_LOG("%u allocations, %u distinct blocks (reclaim reused the rest)",
	       total, distinct);
	ASSERT_LT(distinct, total / 4);

	free(all);
	free(sorted);
	free(list);
	for (i = 0; i < ALLOC_THREADS; i++)
		free(w[i].got);
	tarena_free(&t);
}

/* ------------------------------------------------------------------------ */
/* Readers walk the list while appenders grow it                            */
/* ------------------------------------------------------------------------ */

#define APPENDERS	2
#define WALKERS		2
#define APPENDS		3000

struct walk_ctx {
	struct actrack_arena a;
	int *done;
	int errors;
	__u32 walks, last;
};

static void *append_main(void *arg)
{
	struct walk_ctx *c = arg;
	int i;

	for (i = 0; i < APPENDS; i++)
		if (!actrack_arena_alloc(&c->a, ACTRACK_TYPE_LOG, 100))
			c->errors++;
	__atomic_fetch_add(c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *walk_main(void *arg)
{
	struct walk_ctx *c = arg;
	struct actrack_arena_iter it;
	__u32 n, ref, type;
	bool last = false;

	while (!last) {
		last = __atomic_load_n(c->done, __ATOMIC_ACQUIRE) == APPENDERS;
		n = 0;
		actrack_arena_iter_init(&it, &c->a);
		while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY,
						      &type))) {
			if (type != ACTRACK_TYPE_LOG)
				c->errors++;
			n++;
		}
		/* append-only: a walk never sees fewer blocks than before */
		if (n < c->last || c->a.corrupt)
			c->errors++;
		c->last = n;
		c->walks++;
	}
	return NULL;
}

TEST(walk_while_appending)
{
	struct walk_ctx c[APPENDERS + WALKERS];
	pthread_t th[APPENDERS + WALKERS];
	struct tarena t;
	int done = 0, i;

	ASSERT_EQ(0, tarena_format(&t, ARENA_SIZE, NULL));
	for (i = 0; i < APPENDERS + WALKERS; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].a = t.a;
		c[i].done = &done;
	}
	ASSERT_EQ(0, start_threads(th + APPENDERS, WALKERS, walk_main,
				   c + APPENDERS, sizeof(c[0])));
	ASSERT_EQ(0, start_threads(th, APPENDERS, append_main, c,
				   sizeof(c[0])));
	join_threads(th, APPENDERS + WALKERS);
	for (i = 0; i < APPENDERS + WALKERS; i++)
		ASSERT_EQ(0, c[i].errors);
	for (i = APPENDERS; i < APPENDERS + WALKERS; i++) {
		ASSERT_EQ((__u32)(APPENDERS * APPENDS), c[i].last);
		TH_LOG("walker %d: %u walks", i - APPENDERS, c[i].walks);
	}
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

/* ------------------------------------------------------------------------ */
/* Snapshots of a tracker while its owner pushes and pops                   */
/* ------------------------------------------------------------------------ */

/*
 * The writer runs at least WRITER_OPS operations and until the reader has
 * made READER_MIN attempts (so that they overlap even when another load
 * leaves the two threads one CPU to share), never more than WRITER_MAX.
 */
#define WRITER_OPS	400000
#define WRITER_MAX	40000000
#define READER_MIN	50000
#define READER_OK_MIN	1000

/*
 * A writer that never pauses can tear every copy of a reader running on
 * another CPU; real owners pause all the time.  Give the reader a quiet
 * window now and then so that consistent copies happen on any machine.
 */
static void quiet_window(void)
{
	volatile int spin;

	for (spin = 0; spin < 2000; spin++)
		;
}

static bool reader_done(__u64 *attempts, __u64 *ok)
{
	return __atomic_load_n(attempts, __ATOMIC_RELAXED) >= READER_MIN &&
	       __atomic_load_n(ok, __ATOMIC_RELAXED) >= READER_OK_MIN;
}
#define SLOTS		16
#define MAX_DEPTH	20
#define TIME_XOR	0x5555aaaa5555aaaaULL

struct tracker_ctx {
	struct actrack_arena a;
	__u32 ref;
	int done;
	__u64 attempts;		/* reader progress, atomic */
	/* reader results */
	__u64 ok, torn, gone, bad, euclean;
	__u32 max_depth_seen;
};

/*
 * The owner side, exactly as the design prescribes: push fills the slot
 * with plain stores, then releases depth+1; pop stores depth-1, then bumps
 * the version by 2 (it stays even) with release, then a release fence keeps the next push's
 * slot stores after the version bump.
 */
static void push(struct actrack_thread *th, __u64 gen)
{
	__u32 d = at_load(&th->depth);
	struct actrack_activity *s;
	__u64 v;

	if (d < th->slot_count) {
		s = &ACTRACK_THREAD_SLOTS(th)[d];
		v = (gen << 8) | d;
		s->object = v;
		s->origin = v;
		s->info = ~v;
		s->time_ns = v ^ TIME_XOR;
		s->type = (__u8)d;
	}
	at_store_release(&th->depth, d + 1);
}

static void pop(struct actrack_thread *th)
{
	__u32 d = at_load(&th->depth);

	at_store(&th->depth, d - 1);
	at_store_release(&th->version, at_load(&th->version) + 2);
	at_fence_release();
}

/* A consistent copy: each slot whole, pushed in stack order. */
static bool copy_consistent(const struct actrack_thread_copy *c, __u32 id)
{
	__u64 prev = 0, v;
	__u32 i;

	if (c->nr_slots != (c->hdr.depth < SLOTS ? c->hdr.depth : SLOTS))
		return false;
	if (id && c->hdr.owner.data_id != id)
		return false;
	for (i = 0; i < c->nr_slots; i++) {
		v = c->slots[i].object;
		if ((v & 0xff) != i || c->slots[i].origin != v ||
		    c->slots[i].info != ~v || c->slots[i].time_ns != (v ^ TIME_XOR) ||
		    c->slots[i].type != i)
			return false;
		if (i && (v >> 8) <= prev)
			return false;
		prev = v >> 8;
	}
	return true;
}

static void *tracker_writer(void *arg)
{
	struct tracker_ctx *x = arg;
	struct actrack_thread *th = actrack_arena_get(&x->a, x->ref,
						      ACTRACK_TYPE_THREAD, 0);
	__u64 seed = 42, gen = 0;
	__u32 d;
	int i;

	for (i = 0; i < WRITER_MAX; i++) {
		if ((i & 1023) == 0) {
			if (i >= WRITER_OPS && reader_done(&x->attempts, &x->ok))
				break;
			quiet_window();
		}
		d = at_load(&th->depth);
		/* random walk of the depth, biased to stay mid-stack */
		if (d == 0 || (d < MAX_DEPTH && (xs(&seed) % 16) < 8 + (d < 8)))
			push(th, ++gen);
		else
			pop(th);
	}
	__atomic_store_n(&x->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *tracker_reader(void *arg)
{
	struct tracker_ctx *x = arg;
	struct actrack_thread_copy *c = malloc(sizeof(*c));
	__u32 last_version = 0;
	int ret;

	if (!c) {
		x->bad++;
		return NULL;
	}
	while (!__atomic_load_n(&x->done, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&x->attempts, 1, __ATOMIC_RELAXED);
		ret = actrack_arena_copy_thread(&x->a, x->ref, c);
		if (ret == -EAGAIN) {
			x->torn++;
			continue;
		}
		if (ret == -ENOENT) {
			x->gone++;
			continue;
		}
		if (ret) {
			x->euclean++;
			continue;
		}
		/* versions only grow, and copies are taken in order */
		if (!copy_consistent(c, 0) || c->hdr.version < last_version)
			x->bad++;
		last_version = c->hdr.version;
		if (c->hdr.depth > x->max_depth_seen)
			x->max_depth_seen = c->hdr.depth;
		__atomic_fetch_add(&x->ok, 1, __ATOMIC_RELAXED);
	}
	free(c);
	return NULL;
}

TEST(copy_thread_while_owner_pushes_and_pops)
{
	struct tracker_ctx x;
	struct actrack_thread *th;
	pthread_t w, r;
	struct tarena t;

	ASSERT_EQ(0, tarena_format(&t, ARENA_SIZE, NULL));
	memset(&x, 0, sizeof(x));
	x.a = t.a;
	x.ref = actrack_arena_alloc(&t.a, ACTRACK_TYPE_THREAD,
				    sizeof(*th) + SLOTS * 64);
	ASSERT_NE(0U, x.ref);
	th = actrack_arena_get(&t.a, x.ref, ACTRACK_TYPE_THREAD, 0);
	th->owner.pid = 1;
	th->owner.tid = 1;
	th->slot_count = SLOTS;
	at_store_release(&th->owner.data_id, actrack_arena_new_data_id(&t.a));

	ASSERT_EQ(0, pthread_create(&r, NULL, tracker_reader, &x));
	ASSERT_EQ(0, pthread_create(&w, NULL, tracker_writer, &x));
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	TH_LOG("copies: %llu consistent, %llu torn (-EAGAIN), max depth %u",
	       (unsigned long long)x.ok, (unsigned long long)x.torn,
	       x.max_depth_seen);
	ASSERT_EQ(0ULL, x.bad);
	ASSERT_EQ(0ULL, x.gone);
	ASSERT_EQ(0ULL, x.euclean);
	ASSERT_LT(0ULL, x.ok);
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

/* ------------------------------------------------------------------------ */
/* Snapshots of a tracker that is freed and reused under the reader         */
/* ------------------------------------------------------------------------ */

/* at least REUSE_ROUNDS, and until the reader saw live copies too */
#define REUSE_ROUNDS	20000
#define REUSE_MAX	2000000
#define REUSE_LIVE_OPS	64

static void *reuse_writer(void *arg)
{
	struct tracker_ctx *x = arg;
	struct actrack_thread *th;
	__u32 ref, id, i, sz = sizeof(*th) + SLOTS * 64;
	int r;

	for (r = 0; r < REUSE_MAX; r++) {
		if (r >= REUSE_ROUNDS && reader_done(&x->attempts, &x->ok))
			break;
		if ((r & 63) == 0)
			quiet_window();
		ref = actrack_arena_alloc(&x->a, ACTRACK_TYPE_THREAD, sz);
		if (ref != x->ref) {	/* reclaim must hand back the same block */
			x->bad++;
			break;
		}
		th = actrack_arena_get(&x->a, ref, ACTRACK_TYPE_THREAD, sz);
		id = actrack_arena_new_data_id(&x->a);
		th->owner.pid = 1;
		th->slot_count = SLOTS;
		/* this owner's slots carry its data id in their generation */
		for (i = 0; i < 1 + (__u32)r % SLOTS; i++)
			push(th, id);
		at_store_release(&th->owner.data_id, id);
		/* pushes and pops while live */
		for (i = 0; i < REUSE_LIVE_OPS; i++) {
			if (i & 1)
				pop(th);
			else
				push(th, ((__u64)id << 20) + i);
		}
		if (!actrack_arena_free(&x->a, ref, ACTRACK_TYPE_THREAD))
			x->bad++;
	}
	__atomic_store_n(&x->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *reuse_reader(void *arg)
{
	struct tracker_ctx *x = arg;
	struct actrack_thread_copy *c = malloc(sizeof(*c));
	__u32 i, id;
	__u64 g;
	int ret;

	if (!c) {
		x->euclean++;
		return NULL;
	}
	while (!__atomic_load_n(&x->done, __ATOMIC_ACQUIRE)) {
		/* only live copies count as progress */
		ret = actrack_arena_copy_thread(&x->a, x->ref, c);
		if (ret == -EAGAIN) {
			x->torn++;
			continue;
		}
		if (ret == -ENOENT) {
			x->gone++;
			continue;
		}
		if (ret) {
			x->euclean++;
			continue;
		}
		__atomic_fetch_add(&x->attempts, 100, __ATOMIC_RELAXED);
		__atomic_fetch_add(&x->ok, 1, __ATOMIC_RELAXED);
		/* never a mix of two owners: every slot is this data id's */
		id = c->hdr.owner.data_id;
		for (i = 0; i < c->nr_slots; i++) {
			g = c->slots[i].object >> 8;
			if (g != id && (g >> 20) != id)
				x->bad++;
		}
		if (c->nr_slots != (c->hdr.depth < SLOTS ? c->hdr.depth : SLOTS))
			x->bad++;
	}
	free(c);
	return NULL;
}

TEST(copy_thread_while_tracker_is_freed_and_reused)
{
	struct tracker_ctx x;
	pthread_t w, r;
	struct tarena t;

	ASSERT_EQ(0, tarena_format(&t, ARENA_SIZE, NULL));
	memset(&x, 0, sizeof(x));
	x.a = t.a;
	/* create and free once, so the writer's allocations all reclaim it */
	x.ref = actrack_arena_alloc(&t.a, ACTRACK_TYPE_THREAD,
				    sizeof(struct actrack_thread) + SLOTS * 64);
	ASSERT_NE(0U, x.ref);
	ASSERT_TRUE(actrack_arena_free(&t.a, x.ref, ACTRACK_TYPE_THREAD));

	ASSERT_EQ(0, pthread_create(&r, NULL, reuse_reader, &x));
	ASSERT_EQ(0, pthread_create(&w, NULL, reuse_writer, &x));
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	TH_LOG("copies: %llu consistent, %llu torn, %llu gone",
	       (unsigned long long)x.ok, (unsigned long long)x.torn,
	       (unsigned long long)x.gone);
	ASSERT_EQ(0ULL, x.bad);
	ASSERT_EQ(0ULL, x.bad);
	ASSERT_EQ(0ULL, x.euclean);
	ASSERT_LT(0ULL, x.ok);
	ASSERT_LT(0ULL, x.gone);
	ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
	tarena_free(&t);
}

/* ------------------------------------------------------------------------ */
/* Cleanup of a dead owner racing with block reuse by a live one            */
/* ------------------------------------------------------------------------ */

#ifdef ACTRACK_UNDER_TSAN
#define ABA_ROUNDS	5000	/* each round waits for a walk: slow there */
#else
#define ABA_ROUNDS	20000
#endif
#define ABA_RUNS	10

struct aba_ctx {
	struct actrack_arena a;
	int *done;
	pthread_mutex_t *creating;
	__u64 damaged, lost, unfreed, created, cleaned;
};

/*
 * A published tracker, allocated owner-first as the library does (a
 * cleaner may read the owner fields from the moment the type is live) and
 * written through the pointer the allocator gave.
 */
static __u32 aba_thread(struct actrack_arena *a, __u32 pid, __u32 *id,
			struct actrack_thread **out)
{
	const struct actrack_owner owner = {
		.pid = pid, .tid = pid, .start_ticks = pid,
	};
	struct actrack_thread *th;
	void *p;
	__u32 ref = actrack_arena_alloc_owned(a, ACTRACK_TYPE_THREAD,
					      sizeof(*th) + 2 * 64, &owner, &p);

	if (!ref)
		return 0;
	th = p;
	th->slot_count = 2;
	memset(th->name, 'a' + pid, sizeof(th->name) - 1);
	*id = actrack_arena_new_data_id(a);
	at_store_release(&th->owner.data_id, *id);
	*out = th;
	return ref;
}

/* pid 1 is "dead": it keeps creating records that the cleaner frees */
static void *aba_dead(void *arg)
{
	struct aba_ctx *x = arg;
	struct actrack_thread *th;
	__u32 id, ref;
	int i;

	for (i = 0; i < ABA_ROUNDS; i++) {
		/*
		 * A dead process writes nothing: the cleaner must not see
		 * pid 1 half-made, or it frees the record under this thread's
		 * remaining stores, which then land in whoever reuses the
		 * block (pid 2): damage of the test's making, which a real
		 * dead owner cannot cause.
		 */
		pthread_mutex_lock(x->creating);
		ref = aba_thread(&x->a, 1, &id, &th);
		pthread_mutex_unlock(x->creating);
		if (ref && (i & 1))
			actrack_arena_free_owned(&x->a, ref,
						 ACTRACK_TYPE_THREAD, id);
		x->created++;
	}
	__atomic_fetch_add(x->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * pid 2 is alive: its records must never be touched by the cleaner, its
 * own lookups of them never fail and its own frees succeed at once, since
 * a cleaner that looked at a stale copy of the block must leave it alone.
 */
static void *aba_live(void *arg)
{
	struct aba_ctx *x = arg;
	struct actrack_thread *th;
	__u32 id, ref, k;
	int i;

	for (i = 0; i < ABA_ROUNDS; i++) {
		ref = aba_thread(&x->a, 2, &id, &th);
		if (!ref)
			continue;
		x->created++;
		for (k = 0; k < 16; k++) {
			if (actrack_arena_get(&x->a, ref, ACTRACK_TYPE_THREAD,
					      sizeof(*th)) != th) {
				x->lost++;
				break;
			}
			if (at_load(&th->owner.data_id) != id ||
			    at_load(&th->owner.pid) != 2 ||
			    th->name[0] != 'c' || th->name[30] != 'c') {
				x->damaged++;
				break;
			}
		}
		if (!actrack_arena_free_owned(&x->a, ref, ACTRACK_TYPE_THREAD,
					      id))
			x->unfreed++;
	}
	__atomic_fetch_add(x->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *aba_cleaner(void *arg)
{
	struct aba_ctx *x = arg;

	while (__atomic_load_n(x->done, __ATOMIC_ACQUIRE) < 2) {
		pthread_mutex_lock(x->creating);
		x->cleaned += actrack_arena_free_owner(&x->a, 1, 1, 0);
		pthread_mutex_unlock(x->creating);
		/* Let pid 1 have the lock: an unlock-relock loop starves a
		 * woken waiter (under TSan, past the test's time limit). */
		usleep(200);
	}
	x->cleaned += actrack_arena_free_owner(&x->a, 1, 1, 0);
	return NULL;
}

TEST(free_owner_races_with_reuse_by_live_owner)
{
	__u64 cleaned = 0, created = 0;
	pthread_mutex_t creating = PTHREAD_MUTEX_INITIALIZER;
	struct aba_ctx x[3];
	pthread_t th[3];
	struct tarena t;
	int done, i, run;

	for (run = 0; run < ABA_RUNS; run++) {
		ASSERT_EQ(0, tarena_format(&t, ARENA_SIZE, NULL));
		done = 0;
		for (i = 0; i < 3; i++) {
			memset(&x[i], 0, sizeof(x[i]));
			x[i].a = t.a;
			x[i].done = &done;
			x[i].creating = &creating;
		}
		ASSERT_EQ(0, pthread_create(&th[2], NULL, aba_cleaner, &x[2]));
		ASSERT_EQ(0, pthread_create(&th[0], NULL, aba_dead, &x[0]));
		ASSERT_EQ(0, pthread_create(&th[1], NULL, aba_live, &x[1]));
		join_threads(th, 3);
		/* nothing less than correct, in every round of every run */
		ASSERT_EQ(0ULL, x[1].damaged);
		ASSERT_EQ(0ULL, x[1].lost);
		ASSERT_EQ(0ULL, x[1].unfreed);
		ASSERT_LT(0ULL, x[2].cleaned);
		/* nothing of the dead pid is left, everything of the live
		 * one was freed by its owner */
		ASSERT_EQ(0, actrack_arena_free_owner(&t.a, 1, 1, 0));
		ASSERT_EQ(0, actrack_arena_free_owner(&t.a, 2, 2, 0));
		ASSERT_FALSE(actrack_arena_is_corrupt(&t.a));
		cleaned += x[2].cleaned;
		created += x[0].created + x[1].created;
		tarena_free(&t);
	}
	TH_LOG("%d runs: %llu records created, cleaner freed %llu of the dead pid",
	       ABA_RUNS, (unsigned long long)created,
	       (unsigned long long)cleaned);
}

/* ------------------------------------------------------------------------ */
/* Seq-checked copies of user data while values are rewritten               */
/* ------------------------------------------------------------------------ */

#define UD_WORDS	16
#define UD_WRITES	300000
#define UD_MAX		30000000

struct ud_ctx {
	struct actrack_arena a;
	__u32 ref;
	int done;
	__u64 attempts, ok, torn, bad;
};

static void *ud_writer(void *arg)
{
	struct ud_ctx *x = arg;
	struct actrack_user_data *ud = actrack_arena_get(&x->a, x->ref,
						ACTRACK_TYPE_USER_DATA, 0);
	__u64 *val = (__u64 *)(ud + 1);
	__u32 s, i;
	int k;

	for (k = 1; k <= UD_MAX; k++) {
		if ((k & 255) == 0) {
			if (k >= UD_WRITES && reader_done(&x->attempts, &x->ok))
				break;
			quiet_window();
		}
		s = at_load(&ud->seq);
		at_store(&ud->seq, s + 1);	/* odd: rewriting */
		at_fence_release();
		for (i = 0; i < UD_WORDS; i++)
			val[i] = (__u64)k;
		at_store_release(&ud->seq, s + 2);
	}
	__atomic_store_n(&x->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *ud_reader(void *arg)
{
	struct ud_ctx *x = arg;
	struct {
		struct actrack_user_data h;
		__u64 val[UD_WORDS];
	} c;
	__u32 i;
	int ret;

	while (!__atomic_load_n(&x->done, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&x->attempts, 1, __ATOMIC_RELAXED);
		ret = actrack_arena_copy_owned(&x->a, x->ref,
					       ACTRACK_TYPE_USER_DATA, &c,
					       sizeof(c));
		if (ret == -EAGAIN) {
			x->torn++;
			continue;
		}
		if (ret != (int)sizeof(c) || c.h.seq & 1) {
			x->bad++;
			continue;
		}
		for (i = 1; i < UD_WORDS; i++)
			if (c.val[i] != c.val[0])
				x->bad++;
		__atomic_fetch_add(&x->ok, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

TEST(copy_user_data_while_values_change)
{
	struct actrack_user_data *ud;
	struct ud_ctx x;
	pthread_t w, r;
	struct tarena t;

	ASSERT_EQ(0, tarena_format(&t, ARENA_SIZE, NULL));
	memset(&x, 0, sizeof(x));
	x.a = t.a;
	x.ref = actrack_arena_alloc(&t.a, ACTRACK_TYPE_USER_DATA,
				    sizeof(*ud) + UD_WORDS * 8);
	ASSERT_NE(0U, x.ref);
	ASSERT_EQ(sizeof(*ud) + UD_WORDS * 8,
		  actrack_arena_payload_size(&t.a, x.ref));
	ud = actrack_arena_get(&t.a, x.ref, ACTRACK_TYPE_USER_DATA, 0);
	ud->owner.pid = 1;
	ud->capacity = UD_WORDS * 8;
	at_store_release(&ud->owner.data_id, actrack_arena_new_data_id(&t.a));

	ASSERT_EQ(0, pthread_create(&r, NULL, ud_reader, &x));
	ASSERT_EQ(0, pthread_create(&w, NULL, ud_writer, &x));
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	TH_LOG("copies: %llu consistent, %llu torn",
	       (unsigned long long)x.ok, (unsigned long long)x.torn);
	ASSERT_EQ(0ULL, x.bad);
	ASSERT_LT(0ULL, x.ok);
	tarena_free(&t);
}

/* ------------------------------------------------------------------------ */
/* Deterministic interleavings: an action injected at every arena access    */
/* ------------------------------------------------------------------------ */

/*
 * Not under ThreadSanitizer: its runtime runs inside our SIGSEGV handler
 * with the trap flag set and touches the protected pages itself.
 */
#if defined(__x86_64__) && !defined(ACTRACK_UNDER_TSAN)
#define HAVE_WATCH	1
#define TRAP_FLAG	0x100

static struct {
	char *lo;
	size_t len;
	volatile int armed;
	int hits, at, injected;
	void (*fn)(void *);
	void *arg;
} watch;

static void watch_segv(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	char *addr = si->si_addr;

	if (!watch.armed || addr < watch.lo || addr >= watch.lo + watch.len) {
		/* a real fault: die of it */
		signal(SIGSEGV, SIG_DFL);
		return;
	}
	mprotect(watch.lo, watch.len, PROT_READ | PROT_WRITE);
	if (++watch.hits == watch.at) {
		/* the other process acts, then the access goes ahead */
		watch.armed = 0;
		watch.fn(watch.arg);
		watch.injected = 1;
		/* the action asked to run again at a later access */
		if (watch.armed)
			uc->uc_mcontext.gregs[REG_EFL] |= TRAP_FLAG;
		return;
	}
	/* let this one access through, then protect again */
	uc->uc_mcontext.gregs[REG_EFL] |= TRAP_FLAG;
}

static void watch_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	uc->uc_mcontext.gregs[REG_EFL] &= ~TRAP_FLAG;
	if (watch.armed)
		mprotect(watch.lo, watch.len, PROT_NONE);
}

static int watch_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sa.sa_sigaction = watch_segv;
	if (sigaction(SIGSEGV, &sa, NULL))
		return -1;
	sa.sa_sigaction = watch_trap;
	return sigaction(SIGTRAP, &sa, NULL);
}

static void watch_begin(struct tarena *t, int k, void (*fn)(void *), void *arg)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	watch.lo = t->map + pg;
	watch.len = t->map_len - 2 * pg;
	watch.hits = 0;
	watch.at = k;
	watch.fn = fn;
	watch.arg = arg;
	watch.injected = 0;
	watch.armed = 1;
	mprotect(watch.lo, watch.len, PROT_NONE);
}

/* Returns whether the action ran (k was within the accesses made). */
static int watch_end(void)
{
	watch.armed = 0;
	mprotect(watch.lo, watch.len, PROT_READ | PROT_WRITE);
	return watch.injected;
}
#else
#define HAVE_WATCH	0
/* Only what the (skipped) tests' actions name, so that they compile. */
static struct {
	int hits, at, armed;
	void (*fn)(void *);
} watch;
static int watch_install(void) { return -1; }
static void watch_begin(struct tarena *t, int k, void (*fn)(void *), void *arg) { }
static int watch_end(void) { return 0; }
#endif

#define MAX_K		5000
#define ISLOTS		4
#define ISIZE		(sizeof(struct actrack_thread) + ISLOTS * 64)

struct inter {
	struct tarena t;
	struct actrack_arena other;	/* the other process's view */
	__u32 ref, ref2, id_old, id_new, new_ref;
	int action_ret;
};

static struct actrack_thread *ithread(struct actrack_arena *a, __u32 ref)
{
	return actrack_arena_get(a, ref, ACTRACK_TYPE_THREAD, ISIZE);
}

/* A published tracker whose 3 slots carry generations base+1..base+3. */
static __u32 itracker(struct actrack_arena *a, __u32 pid, __u64 base,
		      const char *name, __u32 *id)
{
	struct actrack_thread *th;
	__u32 ref = actrack_arena_alloc(a, ACTRACK_TYPE_THREAD, ISIZE);
	int i;

	if (!ref)
		return 0;
	th = ithread(a, ref);
	th->owner.pid = pid;
	th->owner.tid = pid;
	th->owner.start_ticks = pid;
	th->slot_count = ISLOTS;
	strcpy(th->name, name);
	for (i = 1; i <= 3; i++)
		push(th, base + i);
	*id = actrack_arena_new_data_id(a);
	at_store_release(&th->owner.data_id, *id);
	return ref;
}

static int inter_setup(struct inter *x)
{
	int ret = tarena_format(&x->t, ACTRACK_ARENA_MIN_SIZE, NULL);

	if (ret)
		return ret;
	x->other = x->t.a;
	x->action_ret = -1;
	x->ref = itracker(&x->t.a, 1, 0, "old", &x->id_old);
	return x->ref ? 0 : -1;
}

static __u64 slot_gen(const struct actrack_thread_copy *c, int i)
{
	return c->slots[i].object >> 8;
}

#define FOR_EACH_K(x, k, injected)					\
	for (k = 1, injected = 1; injected && k < MAX_K; k++)

/* --- copy_thread vs. the owner popping and pushing ---------------------- */

static void act_pop_push(void *arg)
{
	struct inter *x = arg;
	struct actrack_thread *th = ithread(&x->other, x->ref);

	pop(th);
	pop(th);
	push(th, 100);
	push(th, 101);
}

TEST(interleave_copy_thread_with_pop_push)
{
	struct actrack_thread_copy *c = malloc(sizeof(*c));
	struct inter x;
	int k, injected, ret, olds = 0, news = 0;

	if (!HAVE_WATCH || watch_install())
		SKIP(return, "needs x86-64 single-stepping, not under TSan");
	ASSERT_NE(NULL, c);
	FOR_EACH_K(x, k, injected) {
		ASSERT_EQ(0, inter_setup(&x));
		watch_begin(&x.t, k, act_pop_push, &x);
		ret = actrack_arena_copy_thread(&x.t.a, x.ref, c);
		injected = watch_end();
		ASSERT_EQ(0, ret);
		ASSERT_TRUE(copy_consistent(c, x.id_old));
		ASSERT_EQ(3U, c->nr_slots);
		/* either entirely before the action or entirely after it */
		if (slot_gen(c, 1) == 2 && slot_gen(c, 2) == 3 &&
		    c->hdr.version == 0) {
			olds++;
		} else {
			ASSERT_EQ(100ULL, slot_gen(c, 1));
			ASSERT_EQ(101ULL, slot_gen(c, 2));
			ASSERT_EQ(4U, c->hdr.version);	/* two pops */
			news++;
		}
		ASSERT_EQ(1ULL, slot_gen(c, 0));
		ASSERT_FALSE(x.t.a.corrupt);
		tarena_free(&x.t);
	}
	TH_LOG("%d injection points: %d copies before, %d after the action",
	       k - 2, olds, news);
	ASSERT_LT(10, k);
	ASSERT_LT(0, news);
	free(c);
}

/* --- copy_thread vs. the tracker being freed and reused ------------------- */

static void act_reuse(void *arg)
{
	struct inter *x = arg;

	if (!actrack_arena_free(&x->other, x->ref, ACTRACK_TYPE_THREAD))
		return;
	/* same version (0) and depth (3): only the data id tells them apart */
	x->new_ref = itracker(&x->other, 2, 1000, "new", &x->id_new);
}

TEST(interleave_copy_thread_with_reuse)
{
	struct actrack_thread_copy *c = malloc(sizeof(*c));
	struct inter x;
	int k, injected, ret, olds = 0, gone = 0, news = 0;

	if (!HAVE_WATCH || watch_install())
		SKIP(return, "needs x86-64 single-stepping, not under TSan");
	ASSERT_NE(NULL, c);
	FOR_EACH_K(x, k, injected) {
		ASSERT_EQ(0, inter_setup(&x));
		x.new_ref = 0;
		watch_begin(&x.t, k, act_reuse, &x);
		ret = actrack_arena_copy_thread(&x.t.a, x.ref, c);
		injected = watch_end();
		if (injected)
			ASSERT_EQ(x.ref, x.new_ref);	/* reclaimed in place */
		if (ret == -ENOENT) {
			gone++;
		} else {
			ASSERT_EQ(0, ret);
			ASSERT_TRUE(copy_consistent(c, 0));
			if (c->hdr.owner.data_id == x.id_old) {
				ASSERT_STREQ("old", c->hdr.name);
				ASSERT_EQ(1ULL, c->hdr.owner.pid);
				ASSERT_EQ(3ULL, slot_gen(c, 2));
				olds++;
			} else {
				ASSERT_EQ(x.id_new, c->hdr.owner.data_id);
				ASSERT_STREQ("new", c->hdr.name);
				ASSERT_EQ(2ULL, c->hdr.owner.pid);
				ASSERT_EQ(1001ULL, slot_gen(c, 0));
				ASSERT_EQ(1003ULL, slot_gen(c, 2));
				news++;
			}
		}
		ASSERT_FALSE(x.t.a.corrupt);
		tarena_free(&x.t);
	}
	TH_LOG("%d injection points: %d old, %d gone, %d new",
	       k - 2, olds, gone, news);
	ASSERT_LT(0, gone);
	ASSERT_LT(0, news);
	free(c);
}

/* --- free_owner vs. the dead owner's block being reused by a live one ---- */

static void act_free_and_reclaim(void *arg)
{
	struct inter *x = arg;

	/* fails when the cleaner got there first or holds it right now */
	x->action_ret = actrack_arena_free(&x->other, x->ref,
					   ACTRACK_TYPE_THREAD);
	x->new_ref = itracker(&x->other, 2, 1000, "live", &x->id_new);
}

TEST(interleave_free_owner_with_reuse)
{
	struct inter x;
	struct actrack_thread *th;
	int k, injected, ret, reused = 0;
	__u32 bystander, bid;

	if (!HAVE_WATCH || watch_install())
		SKIP(return, "needs x86-64 single-stepping, not under TSan");
	FOR_EACH_K(x, k, injected) {
		ASSERT_EQ(0, inter_setup(&x));
		bystander = itracker(&x.t.a, 3, 0, "other", &bid);
		x.new_ref = 0;
		watch_begin(&x.t, k, act_free_and_reclaim, &x);
		ret = actrack_arena_free_owner(&x.t.a, 1, 1, 0);
		injected = watch_end();
		/* exactly one of the cleaner and the owner freed pid 1's block */
		ASSERT_EQ(1, ret + (injected ? x.action_ret : 0));
		/* the live owner's new record is untouched, wherever it is */
		if (injected) {
			ASSERT_NE(0U, x.new_ref);
			th = ithread(&x.t.a, x.new_ref);
			ASSERT_NE(NULL, th);
			ASSERT_EQ(x.id_new, th->owner.data_id);
			ASSERT_EQ(2U, th->owner.pid);
			ASSERT_STREQ("live", th->name);
			reused += x.new_ref == x.ref;
			if (x.new_ref != x.ref)
				ASSERT_NE(NULL, actrack_arena_get(&x.t.a, x.ref,
					ACTRACK_TYPE_FREE(ACTRACK_TYPE_THREAD), 0));
		}
		th = ithread(&x.t.a, bystander);
		ASSERT_NE(NULL, th);
		ASSERT_EQ(bid, th->owner.data_id);
		ASSERT_FALSE(x.t.a.corrupt);
		tarena_free(&x.t);
	}
	TH_LOG("%d injection points, block reused in place %d times",
	       k - 2, reused);
	ASSERT_LT(0, reused);
}

/*
 * --- the live owner uses its new block while a cleaner looks at the old one
 *
 * At access k the dead owner's block is freed and reclaimed by a live owner
 * (as in interleave_free_owner_with_reuse); from then on, at every further
 * access the cleaner makes, the live owner looks its block up.  A cleaner
 * that parks the reused block in TRANSITIONING to re-check a stale data id
 * makes that lookup fail (a real thread would lose its tracker); and the
 * owner's own free right after the cleanup must succeed at once.
 */
static int live_lookups, live_misses;

static void act_live_lookup(void *arg)
{
	struct inter *x = arg;
	struct actrack_thread *th = ithread(&x->other, x->new_ref);

	live_lookups++;
	if (!th || at_load(&th->owner.data_id) != x->id_new)
		live_misses++;
	/* again at the cleaner's next access */
	watch.at = watch.hits + 1;
	watch.armed = 1;
}

static void act_reuse_then_look(void *arg)
{
	struct inter *x = arg;

	act_free_and_reclaim(x);
	if (!x->new_ref)
		return;
	watch.fn = act_live_lookup;
	watch.at = watch.hits + 1;
	watch.armed = 1;
}

TEST(interleave_live_owner_lookup_during_cleanup)
{
	struct inter x;
	int k, injected, ret, in_place = 0;

	if (!HAVE_WATCH || watch_install())
		SKIP(return, "needs x86-64 single-stepping");
	live_lookups = live_misses = 0;
	FOR_EACH_K(x, k, injected) {
		ASSERT_EQ(0, inter_setup(&x));
		x.new_ref = 0;
		watch_begin(&x.t, k, act_reuse_then_look, &x);
		ret = actrack_arena_free_owner(&x.t.a, 1, 1, 0);
		injected = watch_end();
		ASSERT_EQ(1, ret + (injected ? x.action_ret : 0));
		ASSERT_EQ(0, live_misses);
		if (injected) {
			ASSERT_NE(0U, x.new_ref);
			in_place += x.new_ref == x.ref;
			/* the owner's own free works the first time */
			ASSERT_TRUE(actrack_arena_free_owned(&x.other,
				x.new_ref, ACTRACK_TYPE_THREAD, x.id_new));
		}
		ASSERT_FALSE(x.t.a.corrupt);
		tarena_free(&x.t);
	}
	TH_LOG("%d injection points, %d reused in place, %d lookups by the live owner",
	       k - 2, in_place, live_lookups);
	ASSERT_LT(0, in_place);
	ASSERT_LT(0, live_lookups);
}

/* --- copy_owned vs. a value rewrite inside the user data seqcount ------- */

#define IUD_WORDS	8

static void act_rewrite(void *arg)
{
	struct inter *x = arg;
	struct actrack_user_data *ud = actrack_arena_get(&x->other, x->ref2,
						ACTRACK_TYPE_USER_DATA, 0);
	__u64 *val = (__u64 *)(ud + 1);
	int i;

	at_store(&ud->seq, ud->seq + 1);
	at_fence_release();
	for (i = 0; i < IUD_WORDS; i++)
		val[i] = 2;
	at_store_release(&ud->seq, ud->seq + 1);
}

TEST(interleave_copy_owned_with_rewrite)
{
	struct {
		struct actrack_user_data h;
		__u64 val[IUD_WORDS];
	} c;
	struct actrack_user_data *ud;
	struct inter x;
	int k, injected, ret, i, olds = 0, news = 0;

	if (!HAVE_WATCH || watch_install())
		SKIP(return, "needs x86-64 single-stepping, not under TSan");
	FOR_EACH_K(x, k, injected) {
		ASSERT_EQ(0, inter_setup(&x));
		x.ref2 = actrack_arena_alloc(&x.t.a, ACTRACK_TYPE_USER_DATA,
					     sizeof(c));
		ud = actrack_arena_get(&x.t.a, x.ref2, ACTRACK_TYPE_USER_DATA,
				       sizeof(c));
		ASSERT_NE(NULL, ud);
		for (i = 0; i < IUD_WORDS; i++)
			((__u64 *)(ud + 1))[i] = 1;
		ud->owner.pid = 1;
		ud->owner.data_id = actrack_arena_new_data_id(&x.t.a);
		watch_begin(&x.t, k, act_rewrite, &x);
		ret = actrack_arena_copy_owned(&x.t.a, x.ref2,
					       ACTRACK_TYPE_USER_DATA, &c,
					       sizeof(c));
		injected = watch_end();
		ASSERT_EQ((int)sizeof(c), ret);
		for (i = 1; i < IUD_WORDS; i++)
			ASSERT_EQ(c.val[0], c.val[i]);
		if (c.val[0] == 1) {
			ASSERT_EQ(0U, c.h.seq);
			olds++;
		} else {
			ASSERT_EQ(2ULL, c.val[0]);
			ASSERT_EQ(2U, c.h.seq);
			news++;
		}
		tarena_free(&x.t);
	}
	TH_LOG("%d injection points: %d before, %d after", k - 2, olds, news);
	ASSERT_LT(0, news);
}

/* --- two allocators reclaiming the same free block ---------------------- */

static void act_alloc(void *arg)
{
	struct inter *x = arg;

	x->new_ref = actrack_arena_alloc(&x->other, ACTRACK_TYPE_THREAD, ISIZE);
}

static int list_check(struct __test_metadata *_metadata, struct actrack_arena *a,
		      __u32 expect)
{
	struct actrack_arena_iter it;
	__u32 refs[16], n = 0, ref, i, j;

	actrack_arena_iter_init(&it, a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL)) &&
	       n < 16)
		refs[n++] = ref;
	EXPECT_EQ(expect, n);
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			EXPECT_NE(refs[i], refs[j]);
	if (n)
		EXPECT_EQ(refs[n - 1],
			  ((struct actrack_arena_header *)a->base)->tailptr);
	EXPECT_FALSE(actrack_arena_is_corrupt(a));
	return 0;
}

TEST(interleave_two_reclaims)
{
	struct inter x;
	int k, injected;
	__u32 mine;

	if (!HAVE_WATCH || watch_install())
		SKIP(return, "needs x86-64 single-stepping, not under TSan");
	FOR_EACH_K(x, k, injected) {
		ASSERT_EQ(0, inter_setup(&x));
		ASSERT_TRUE(actrack_arena_free(&x.t.a, x.ref, ACTRACK_TYPE_THREAD));
		x.new_ref = 0;
		watch_begin(&x.t, k, act_alloc, &x);
		mine = actrack_arena_alloc(&x.t.a, ACTRACK_TYPE_THREAD, ISIZE);
		injected = watch_end();
		ASSERT_NE(0U, mine);
		ASSERT_NE(NULL, ithread(&x.t.a, mine));
		if (injected) {
			/* one of us reclaimed the free block, the other bumped */
			ASSERT_NE(0U, x.new_ref);
			ASSERT_NE(mine, x.new_ref);
			ASSERT_TRUE(mine == x.ref || x.new_ref == x.ref);
			ASSERT_NE(NULL, ithread(&x.t.a, x.new_ref));
			list_check(_metadata, &x.t.a, 2);
		} else {
			ASSERT_EQ(x.ref, mine);
			list_check(_metadata, &x.t.a, 1);
		}
		tarena_free(&x.t);
	}
	TH_LOG("%d injection points", k - 2);
	ASSERT_LT(10, k);
}

/* --- two appenders: the second one must help the stalled first ---------- */

static void act_append(void *arg)
{
	struct inter *x = arg;

	x->new_ref = actrack_arena_alloc(&x->other, ACTRACK_TYPE_LOG, 100);
}

TEST(interleave_two_appends)
{
	struct inter x;
	int k, injected;
	__u32 mine;

	if (!HAVE_WATCH || watch_install())
		SKIP(return, "needs x86-64 single-stepping, not under TSan");
	FOR_EACH_K(x, k, injected) {
		ASSERT_EQ(0, inter_setup(&x));
		x.new_ref = 0;
		watch_begin(&x.t, k, act_append, &x);
		mine = actrack_arena_alloc(&x.t.a, ACTRACK_TYPE_LOG, 100);
		injected = watch_end();
		ASSERT_NE(0U, mine);
		if (injected) {
			ASSERT_NE(0U, x.new_ref);
			ASSERT_NE(mine, x.new_ref);
			ASSERT_FALSE(x.other.corrupt);
			list_check(_metadata, &x.t.a, 3);
		} else {
			list_check(_metadata, &x.t.a, 2);
		}
		tarena_free(&x.t);
	}
	TH_LOG("%d injection points", k - 2);
	ASSERT_LT(10, k);
}

/* --- a process attaching while another appends --------------------------- */

/*
 * actrack_arena_check() runs in every process that maps an arena others
 * are already using (four children of one parent attaching at once, or
 * `actrack dump` on a busy arena).  An append in the middle of it moves
 * freeptr, then the list's head and tail: a check that read freeptr
 * before them saw a tail past its end and called a healthy arena corrupt
 * (-EUCLEAN; the 6.1 VM's vm_reload, 2026-12-02).  From an empty arena
 * the append moves all three.
 */
TEST(interleave_check_with_append)
{
	struct inter x;
	int k, injected, after = 0;

	if (!HAVE_WATCH || watch_install())
		SKIP(return, "needs x86-64 single-stepping, not under TSan");
	FOR_EACH_K(x, k, injected) {
		ASSERT_EQ(0, tarena_format(&x.t, ACTRACK_ARENA_MIN_SIZE, NULL));
		x.other = x.t.a;
		x.new_ref = 0;
		watch_begin(&x.t, k, act_append, &x);
		ASSERT_EQ(0, actrack_arena_check(&x.t.a)) {
			TH_LOG("injection point %d", k);
		}
		injected = watch_end();
		if (injected) {
			ASSERT_NE(0U, x.new_ref);
			after++;
		}
		tarena_free(&x.t);
	}
	TH_LOG("%d injection points, an append at each", after);
	ASSERT_LT(3, after);
}

TEST_HARNESS_MAIN
