// SPDX-License-Identifier: MIT
/*
 * arena_walk: the owner walk (arena/records.c) that the kernel's death
 * report, the library's death report and the snapshot share.
 *
 * One arena holds three owners that a careless walk would confuse:
 *   A = (pid 700, start 100), threads 701 and 702, a process record with
 *       annotations, a module;
 *   B = (pid 700, start 101): the same pid, a later process;
 *   C = (pid 800, start 100): another pid started in the same tick.
 * A's thread 701 refers to its own data (slot 0), to B's (slot 1) and to
 * C's (slot 2); A's thread 702 refers to thread 701's data (slot 0); C's
 * process record refers to A's annotations.  Only references to the
 * referrer's own data (and its own thread's, for an activity) may be
 * followed.  The arena sits between guard pages (guarded_arena.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "guarded_arena.h"
#include "test_harness.h"
#include "internal.h"

#define TEST_SIZE	(256U * 1024)

struct world {
	struct tarena t;
	__u32 ud_a1, ud_a_proc, ud_b, ud_c;	/* user data blocks */
	__u32 th_a1, th_a2, th_b, th_c;		/* trackers */
	__u32 pr_a, pr_b, pr_c, mod_a;		/* process, module records */
};

static void *owned(struct actrack_arena *a, __u32 type, __u32 size,
		   __u32 pid, __u64 st, __u32 tid, __u32 *ref)
{
	struct actrack_owner o = { .pid = pid, .tid = tid, .start_ticks = st };
	void *p = NULL;

	*ref = actrack_arena_alloc_owned(a, type, size, &o, &p);
	return p;
}

static void publish(struct actrack_arena *a, void *rec)
{
	struct actrack_owner *o = rec;

	at_store_release(&o->data_id, actrack_arena_new_data_id(a));
}

/* A user data block holding one unsigned field "v" = @v. */
static __u32 user_data(struct actrack_arena *a, __u32 pid, __u64 st,
		       __u32 tid, __u64 v)
{
	struct actrack_user_data *ud;
	struct actrack_field *f;
	__u32 ref;

	ud = owned(a, ACTRACK_TYPE_USER_DATA, sizeof(*ud) + 64, pid, st, tid,
		   &ref);
	if (!ud)
		return 0;
	ud->capacity = 64;
	f = (struct actrack_field *)(ud + 1);
	f->name_size = 1;
	f->value_size = 8;
	f->record_size = 24;
	((char *)(f + 1))[0] = 'v';
	memcpy((char *)f + 16, &v, 8);
	f->type = ACTRACK_VALUE_UNSIGNED;
	ud->used = 24;
	publish(a, ud);
	return ref;
}

/* A tracker of depth @n whose slot i refers to uds[i]. */
static __u32 tracker(struct actrack_arena *a, __u32 pid, __u64 st, __u32 tid,
		     const __u32 *uds, __u32 n)
{
	struct actrack_thread *th;
	__u32 ref, i;

	th = owned(a, ACTRACK_TYPE_THREAD, sizeof(*th) + 4 * 64, pid, st, tid,
		   &ref);
	if (!th)
		return 0;
	th->slot_count = 4;
	for (i = 0; i < n; i++) {
		ACTRACK_THREAD_SLOTS(th)[i].type = ACTRACK_ACT_TASK_RUN;
		ACTRACK_THREAD_SLOTS(th)[i].object = 1000 * tid + i;
		ACTRACK_THREAD_SLOTS(th)[i].user_data = uds[i];
	}
	th->depth = n;
	publish(a, th);
	return ref;
}

static __u32 process(struct actrack_arena *a, __u32 pid, __u64 st,
		     __u32 ud, __u32 phase)
{
	struct actrack_process *p;
	__u32 ref;

	p = owned(a, ACTRACK_TYPE_PROCESS, sizeof(*p), pid, st, 0, &ref);
	if (!p)
		return 0;
	p->user_data = ud;
	p->phase = phase;
	publish(a, p);
	return ref;
}

static int world_make(struct world *w)
{
	struct actrack_arena *a = &w->t.a;
	struct actrack_module *m;
	__u32 uds[3];
	int ret;

	ret = tarena_format(&w->t, TEST_SIZE, NULL);
	if (ret)
		return ret;
	w->ud_a1 = user_data(a, 700, 100, 701, 11);
	w->ud_a_proc = user_data(a, 700, 100, 0, 10);
	w->ud_b = user_data(a, 700, 101, 701, 21);
	w->ud_c = user_data(a, 800, 100, 801, 31);
	uds[0] = w->ud_a1;
	uds[1] = w->ud_b;
	uds[2] = w->ud_c;
	w->th_a1 = tracker(a, 700, 100, 701, uds, 3);
	uds[0] = w->ud_a1;
	w->th_a2 = tracker(a, 700, 100, 702, uds, 1);
	uds[0] = w->ud_b;
	w->th_b = tracker(a, 700, 101, 701, uds, 1);
	uds[0] = w->ud_c;
	w->th_c = tracker(a, 800, 100, 801, uds, 1);
	w->pr_a = process(a, 700, 100, w->ud_a_proc, ACTRACK_PHASE_LAUNCHED);
	w->pr_b = process(a, 700, 101, 0, ACTRACK_PHASE_MAIN_LOOP_STARTED);
	w->pr_c = process(a, 800, 100, w->ud_a_proc,
			  ACTRACK_PHASE_SHUTDOWN_STARTED);
	m = owned(a, ACTRACK_TYPE_MODULE, sizeof(*m), 700, 100, 0, &w->mod_a);
	if (!m)
		return -ENOSPC;
	m->base = 0x400000;
	publish(a, m);
	if (!w->ud_c || !w->th_c || !w->pr_c)
		return -ENOSPC;
	return 0;
}

/* What a walk reported, in order. */
struct seen_log {
	__u32 n;
	__u32 ref[32], type[32], act[32], parent[32];
	__u64 value[32];	/* user data: its field's value */
	__u32 last;		/* the last record, parent of user data */
};

static int log_record(struct actrack_walk *w, const struct actrack_walk_rec *r)
{
	struct seen_log *l = w->ctx;
	__u64 v = 0;

	if (l->n == 32)
		return -E2BIG;
	if (r->type == ACTRACK_TYPE_USER_DATA)
		memcpy(&v, (const char *)(r->user_data + 1) + 16, 8);
	else
		l->last = r->ref;
	l->ref[l->n] = r->ref;
	l->type[l->n] = r->type;
	l->act[l->n] = r->act;
	l->parent[l->n] = r->type == ACTRACK_TYPE_USER_DATA ? l->last : 0;
	l->value[l->n] = v;
	l->n++;
	return 0;
}

static int walk(struct actrack_arena *a, __u32 pid, __u64 st,
		struct seen_log *l)
{
	struct actrack_owner_key k = { .pid = pid, .pid_ns = 0,
				       .start_ticks = st };
	static unsigned char ud[sizeof(struct actrack_user_data) + 256];
	struct actrack_walk *w;
	int ret;

	memset(l, 0, sizeof(*l));
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->seen = malloc(actrack_arena_seen_bytes(a));
	w->a = a;
	w->key = pid ? &k : NULL;
	w->types = ACTRACK_WALK_THREADS | ACTRACK_WALK_PROCESSES |
		   ACTRACK_WALK_MODULES | ACTRACK_WALK_USER_DATA;
	w->fn = log_record;
	w->ctx = l;
	w->ud_buf = ud;
	w->ud_size = sizeof(ud);
	ret = w->seen ? actrack_walk_records(w) : -ENOMEM;
	free(w->seen);
	free(w);
	return ret;
}

/* Owner A: its two threads, its process record, its module, and exactly
 * the data of its own (slot 0 of 701, the annotations), nothing else. */
TEST(owner_records_found)
{
	struct world w;
	struct seen_log l;

	ASSERT_EQ(0, world_make(&w));
	ASSERT_EQ(0, walk(&w.t.a, 700, 100, &l));
	ASSERT_EQ(6U, l.n);
	EXPECT_EQ(w.th_a1, l.ref[0]);
	EXPECT_EQ(ACTRACK_TYPE_THREAD, l.type[0]);
	EXPECT_EQ(w.ud_a1, l.ref[1]);		/* slot 0 only */
	EXPECT_EQ(ACTRACK_TYPE_USER_DATA, l.type[1]);
	EXPECT_EQ(0U, l.act[1]);
	EXPECT_EQ(w.th_a1, l.parent[1]);
	EXPECT_EQ(11U, l.value[1]);
	EXPECT_EQ(w.th_a2, l.ref[2]);		/* 701's data: not 702's */
	EXPECT_EQ(ACTRACK_TYPE_THREAD, l.type[2]);
	EXPECT_EQ(w.pr_a, l.ref[3]);
	EXPECT_EQ(w.ud_a_proc, l.ref[4]);
	EXPECT_EQ(ACTRACK_WALK_PROCESS_DATA, l.act[4]);
	EXPECT_EQ(10U, l.value[4]);
	EXPECT_EQ(w.mod_a, l.ref[5]);
	EXPECT_EQ(ACTRACK_TYPE_MODULE, l.type[5]);
	EXPECT_FALSE(w.t.a.corrupt);
}

/* B shares A's pid: only its own thread and process, no data of A's. */
TEST(same_pid_other_start_not_found)
{
	struct world w;
	struct seen_log l;

	ASSERT_EQ(0, world_make(&w));
	ASSERT_EQ(0, walk(&w.t.a, 700, 101, &l));
	ASSERT_EQ(3U, l.n);
	EXPECT_EQ(w.th_b, l.ref[0]);
	EXPECT_EQ(w.ud_b, l.ref[1]);
	EXPECT_EQ(21U, l.value[1]);
	EXPECT_EQ(w.pr_b, l.ref[2]);
	/* and nobody's start time 99 */
	ASSERT_EQ(0, walk(&w.t.a, 700, 99, &l));
	EXPECT_EQ(0U, l.n);
}

/* C shares A's start time: its records; its process record's reference
 * to A's annotations is not followed. */
TEST(other_pid_same_start_not_found)
{
	struct world w;
	struct seen_log l;

	ASSERT_EQ(0, world_make(&w));
	ASSERT_EQ(0, walk(&w.t.a, 800, 100, &l));
	ASSERT_EQ(3U, l.n);
	EXPECT_EQ(w.th_c, l.ref[0]);
	EXPECT_EQ(w.ud_c, l.ref[1]);
	EXPECT_EQ(31U, l.value[1]);
	EXPECT_EQ(w.pr_c, l.ref[2]);		/* and no user data after it */
	EXPECT_FALSE(w.t.a.corrupt);
}

/*
 * A record whose owner's pid_ns holds the key's wildcard (arena bytes say
 * anything) refers to data of the same pid and start time in another
 * namespace: not followed.  The fuzz target `walk` found it.
 */
TEST(wildcard_namespace_in_arena_is_no_wildcard)
{
	struct actrack_owner *o;
	struct world w;
	struct seen_log l;

	ASSERT_EQ(0, world_make(&w));
	o = (struct actrack_owner *)((char *)w.t.a.base + w.th_a1 +
				     sizeof(struct actrack_block));
	at_store(&o->pid_ns, ACTRACK_PID_NS_ANY);
	ASSERT_EQ(0, walk(&w.t.a, 0, 0, &l));
	/* 700/100's first tracker is reported, its slot 0 data (pid_ns 0)
	 * is not: the next record is the second tracker. */
	ASSERT_GE(l.n, 2U);
	EXPECT_EQ(w.th_a1, l.ref[0]);
	EXPECT_EQ(w.th_a2, l.ref[1]);
}

/* A cycle in the list: every record once, then the corrupt flag. */
TEST(reference_cycle_stops)
{
	struct actrack_arena_header *h;
	struct actrack_block *tail;
	struct world w;
	struct seen_log l;

	ASSERT_EQ(0, world_make(&w));
	h = w.t.a.base;
	tail = (struct actrack_block *)((char *)w.t.a.base + h->tailptr);
	/* The module (the tail) links back to A's first tracker. */
	ASSERT_EQ(w.mod_a, h->tailptr);
	tail->next = w.th_a1;
	ASSERT_EQ(0, walk(&w.t.a, 700, 100, &l));
	ASSERT_EQ(6U, l.n);
	EXPECT_EQ(w.mod_a, l.ref[5]);
	EXPECT_TRUE(w.t.a.corrupt);
	/* The walk over every owner reports each record once too. */
	w.t.a.corrupt = false;
	ASSERT_EQ(0, walk(&w.t.a, 0, 0, &l));
	/* 4 threads with 3 data (not 702's, not B's in A's slot 1), 3
	 * processes with A's annotations only, 1 module. */
	EXPECT_EQ(12U, l.n);
	EXPECT_TRUE(w.t.a.corrupt);
}

/* The snapshot shows the same: slot 0 of thread 702 refers to thread
 * 701's data, which is not 702's to show. */
TEST(snapshot_shows_only_own_thread_data)
{
	struct actrack_snapshot *s;
	struct actrack_snap_process *p = NULL;
	struct world w;

	ASSERT_EQ(0, world_make(&w));
	tarena_protect(&w.t, false);
	ASSERT_EQ(0, __actrack_snapshot_arena(&w.t.a, &s));
	for (__u32 i = 0; i < s->nr_processes; i++)
		if (s->processes[i].pid == 700 &&
		    s->processes[i].start_ticks == 100)
			p = &s->processes[i];
	ASSERT_NE(NULL, p);
	ASSERT_EQ(2U, p->nr_threads);
	ASSERT_EQ(701U, p->threads[0].tid);
	ASSERT_EQ(3U, p->threads[0].nr_activities);
	EXPECT_EQ(1U, p->threads[0].activities[0].nr_values);
	EXPECT_EQ(11U, p->threads[0].activities[0].values[0].u);
	EXPECT_EQ(0U, p->threads[0].activities[1].nr_values);	/* B's */
	EXPECT_EQ(0U, p->threads[0].activities[2].nr_values);	/* C's */
	ASSERT_EQ(702U, p->threads[1].tid);
	ASSERT_EQ(1U, p->threads[1].nr_activities);
	EXPECT_EQ(0U, p->threads[1].activities[0].nr_values);	/* 701's */
	ASSERT_EQ(1U, p->nr_values);
	EXPECT_EQ(10U, p->values[0].u);
	EXPECT_FALSE(s->corrupt);
	actrack_snapshot_free(s);
}

/* And the library's death report of A. */
TEST(death_report_has_only_the_owners_records)
{
	struct actrack_death d;
	struct world w;

	ASSERT_EQ(0, world_make(&w));
	tarena_protect(&w.t, false);
	ASSERT_EQ(0, __actrack_build_death(&w.t.a, 700, 100, 9, &d));
	EXPECT_EQ(ACTRACK_PHASE_LAUNCHED, d.process.phase);
	ASSERT_EQ(2U, d.process.nr_threads);
	EXPECT_EQ(701U, d.process.threads[0].tid);
	EXPECT_EQ(3U, d.process.threads[0].nr_activities);
	EXPECT_EQ(1U, d.process.threads[0].activities[0].nr_values);
	EXPECT_EQ(0U, d.process.threads[0].activities[1].nr_values);
	EXPECT_EQ(0U, d.process.threads[0].activities[2].nr_values);
	EXPECT_EQ(702U, d.process.threads[1].tid);
	EXPECT_EQ(0U, d.process.threads[1].activities[0].nr_values);
	EXPECT_EQ(1U, d.process.nr_modules);
	ASSERT_EQ(1U, d.process.nr_values);
	EXPECT_EQ(10U, d.process.values[0].u);
	EXPECT_EQ(0U, d.flags);
	__actrack_free_death(&d);
}

/*
 * The one thread copy that the snapshot and both death reports use: a
 * copy whose stored stack is deeper than its depth (the core never makes
 * one; a hostile arena could) is refused as corrupt, whoever reads it.
 * Before libactrack 2 the snapshot refused it and the death report took
 * it.
 */
TEST(thread_copy_refuses_stack_deeper_than_depth)
{
	static struct actrack_thread_copy tc;
	struct actrack_walk_rec r = { .type = ACTRACK_TYPE_THREAD };
	struct actrack_snap_thread t;

	tc.hdr.owner.pid = 700;
	tc.hdr.owner.tid = 701;
	tc.hdr.depth = 1;
	tc.nr_slots = 2;
	tc.slots[0].type = ACTRACK_ACT_TASK_RUN;
	tc.slots[1].type = ACTRACK_ACT_LOCK_ACQUIRE;
	r.thread = &tc;
	EXPECT_EQ(-EUCLEAN, __actrack_copy_thread(&t, &r));
	tc.nr_slots = ACTRACK_THREAD_MAX_SLOTS + 1;
	tc.hdr.depth = ACTRACK_THREAD_MAX_SLOTS + 1;
	EXPECT_EQ(-EUCLEAN, __actrack_copy_thread(&t, &r));
	/* As deep as its depth: copied. */
	tc.nr_slots = 2;
	tc.hdr.depth = 2;
	ASSERT_EQ(0, __actrack_copy_thread(&t, &r));
	EXPECT_EQ(701U, t.tid);
	ASSERT_EQ(2U, t.nr_activities);
	EXPECT_EQ(ACTRACK_ACT_LOCK_ACQUIRE, t.activities[1].a.type);
	__actrack_free_thread(&t);
	EXPECT_EQ(NULL, t.activities);
}

TEST_HARNESS_MAIN
