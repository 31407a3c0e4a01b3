// SPDX-License-Identifier: GPL-2.0
/*
 * Cleanup after processes: the death report, then freeing their records.
 *
 * Each arena has one work item that runs its processes' cleanups one at a
 * time, in the order the probes queued them (a group's end goes first:
 * deaths and exec cleanups are latency-sensitive, thread batches are not;
 * within each kind, first queued, first served, so that no entry starves).
 * One process is one entry however many events it had, so a uid's backlog
 * is at most one entry per attached process, and different uids' arenas
 * are cleaned in parallel on an unbound workqueue: a uid that churns
 * threads on a worst-case arena delays only itself.  The new image after
 * an exec waits for the old one's cleanup in ATTACH (exit_hook.c).
 *
 * A thread that ends on its own is cleaned up elsewhere: in the exit of a
 * thread of its own process (actrack_thread_exit_work()), so that the
 * walks a process causes by churning threads are its own CPU time, under
 * its cgroup's limits; the work item gets them only if that fails.
 *
 * The arena is hostile: what we read from it goes through the arena core's
 * validated, bounded walks and copies; every count we keep is bounded
 * here again; nothing from the kernel side (pointers, addresses) is ever
 * written to it.  Identity (pid, start_ticks, command line) comes from
 * kernel memory recorded at ATTACH, never from the arena.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/workqueue.h>
#include <linux/slab.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/overflow.h>
#include <linux/task_work.h>
#include <linux/wait_bit.h>
#include <linux/rcupdate.h>
#include "internal.h"

static struct workqueue_struct *actrack_wq;
/* Set at unload: start no walk, skip what is queued. */
static bool actrack_cleanup_stopping;
/* Thread-exit cleanups queued on or running in exiting threads. */
static atomic_t actrack_exit_walks = ATOMIC_INIT(0);

/* Scratch for building one report, allocated per report (reports of
 * different arenas are built in parallel).
 */
struct actrack_scratch {
	struct actrack_walk walk;	/* and its record copy */
	struct actrack_report_thread threads[ACTRACK_REPORT_MAX_THREADS];
	struct actrack_activity acts[ACTRACK_DEATH_MAX_ACTS];
	struct actrack_report_data act_data[ACTRACK_DEATH_MAX_ACTS];
	struct actrack_module modules[ACTRACK_DEATH_MAX_MODULES];
	u8 proc_data[ACTRACK_DEATH_PROCESS_DATA_MAX];
	u8 data[ACTRACK_DEATH_MAX_DATA];
	/* One user data block's copy: header then at most this many bytes. */
	u8 ud[sizeof(struct actrack_user_data) +
	      ACTRACK_DEATH_PROCESS_DATA_MAX] __aligned(8);
};

static struct actrack_report *actrack_report_alloc(u32 nr_threads,
						 u32 nr_acts, u32 nr_modules,
						 u32 proc_data_len,
						 u32 data_len)
{
	struct actrack_report *d;
	size_t threads_off, acts_off, act_data_off, modules_off;
	size_t proc_data_off, data_off, bytes;

	threads_off = ALIGN(sizeof(*d), 8);
	acts_off = ALIGN(threads_off + nr_threads * sizeof(*d->threads), 8);
	act_data_off = ALIGN(acts_off + nr_acts * sizeof(*d->acts), 8);
	modules_off = ALIGN(act_data_off + nr_acts * sizeof(*d->act_data), 8);
	proc_data_off = ALIGN(modules_off + nr_modules * sizeof(*d->modules),
			      8);
	data_off = ALIGN(proc_data_off + proc_data_len, 8);
	bytes = data_off + data_len;
	d = kvzalloc(bytes, GFP_KERNEL);
	if (!d)
		return NULL;
	d->bytes = bytes;
	d->threads = (void *)d + threads_off;
	d->acts = (void *)d + acts_off;
	d->act_data = (void *)d + act_data_off;
	d->modules = (void *)d + modules_off;
	d->proc_data = (void *)d + proc_data_off;
	d->data = (void *)d + data_off;
	d->nr_threads = nr_threads;
	d->nr_acts = nr_acts;
	d->nr_modules = nr_modules;
	d->proc_data_len = proc_data_len;
	d->data_len = data_len;
	return d;
}

/* What one walk over the arena collects for a report. */
struct actrack_collect {
	struct actrack_kproc *p;
	struct actrack_scratch *s;
	struct actrack_arena a;
	u32 nr_threads;
	u32 nr_acts;
	u32 nr_modules;
	u32 proc_data_len;	/* in s->proc_data */
	u32 data_len;		/* in s->data */
	u32 flags;
	u32 phase;
	bool has_phase;
};

/*
 * The field records of a user data block that the walk copied and checked
 * to be the dead process's (and the thread's, for an activity's): at most
 * @max bytes into @out.  The records are not parsed here (userspace
 * validates them); when they must be cut, the cut is after the last whole
 * record, walking only their sizes, so that the prefix still parses.  A
 * cut sets TRUNCATED.  Return: bytes stored.
 */
static u32 actrack_collect_data(struct actrack_collect *c,
				const struct actrack_walk_rec *r, u32 max,
				u8 *out)
{
	const struct actrack_user_data *ud = r->user_data;
	const u8 *fields = (const u8 *)(ud + 1);
	u32 avail, used, off, rs;

	/* The copy is at most the block's payload: never beyond it. */
	avail = min_t(u32, r->len - sizeof(*ud), max);
	used = ud->used;
	if (used > avail) {
		/* Each record is at least a header, so this is bounded. */
		for (off = 0; off + sizeof(struct actrack_field) <= avail;
		     off += rs) {
			rs = ((const struct actrack_field *)(fields + off))->
				record_size;
			if (!rs || rs % ACTRACK_FIELD_ALIGN || rs > avail - off)
				break;
		}
		used = off;
		c->flags |= ACTRACK_DEATH_TRUNCATED;
	}
	memcpy(out, fields, used);
	return used;
}

static int actrack_collect_process(struct actrack_walk *w,
				   struct actrack_collect *c,
				   const struct actrack_walk_rec *r)
{
	u32 phase = r->process->phase;

	/* The first live one counts: copy no other (forged) ones. */
	w->types &= ~ACTRACK_WALK_PROCESSES;
	c->phase = phase <= ACTRACK_PHASE_MAX ? phase : ACTRACK_PHASE_UNKNOWN;
	c->has_phase = true;
	return 0;			/* and its annotations, next */
}

/* User data, right after the record that refers to it. */
static int actrack_collect_user_data(struct actrack_collect *c,
				     const struct actrack_walk_rec *r)
{
	struct actrack_report_thread *t;
	struct actrack_report_data *dd;
	u32 room;

	if (r->act == ACTRACK_WALK_PROCESS_DATA) {
		c->proc_data_len = actrack_collect_data(c, r,
					ACTRACK_DEATH_PROCESS_DATA_MAX,
					c->s->proc_data);
		return 0;
	}
	if (!c->nr_threads)
		return 0;
	t = &c->s->threads[c->nr_threads - 1];
	if (r->act >= t->nr_acts)
		return 0;		/* an activity cut from the report */
	dd = &c->s->act_data[t->first_act + r->act];
	dd->off = c->data_len;
	room = ACTRACK_DEATH_MAX_DATA - c->data_len;
	if (room < sizeof(struct actrack_field)) {
		c->flags |= ACTRACK_DEATH_TRUNCATED;
		return 0;
	}
	room = min(room, ACTRACK_DEATH_ACT_DATA_MAX);
	dd->len = actrack_collect_data(c, r, room, c->s->data + c->data_len);
	c->data_len += dd->len;
	return 0;
}

static int actrack_collect_thread(struct actrack_walk *w,
				  struct actrack_collect *c,
				  const struct actrack_walk_rec *r)
{
	const struct actrack_thread_copy *copy = r->thread;
	struct actrack_report_thread *t;
	u32 i, n;

	if (c->nr_threads == ACTRACK_REPORT_MAX_THREADS) {
		/* Full: copy no more trackers, however many claim the pid. */
		c->flags |= ACTRACK_DEATH_TRUNCATED;
		w->types &= ~ACTRACK_WALK_THREADS;
		return ACTRACK_WALK_SKIP;
	}
	t = &c->s->threads[c->nr_threads++];
	memset(t, 0, sizeof(*t));
	t->ref = r->ref;
	t->tid = copy->hdr.owner.tid;
	if (r->torn) {
		/* Never stable within the retries: say so, don't guess. */
		t->torn = true;
		return ACTRACK_WALK_SKIP;
	}
	t->depth = copy->hdr.depth;
	t->fatal_signo = copy->hdr.fatal_signo;
	t->fatal_code = copy->hdr.fatal_code;
	t->fatal_addr = copy->hdr.fatal_addr;
	t->fatal_pc = copy->hdr.fatal_pc;
	memcpy(t->name, copy->hdr.name, sizeof(t->name));
	t->name[sizeof(t->name) - 1] = '\0';
	n = min_t(u32, copy->nr_slots, ACTRACK_THREAD_MAX_SLOTS);
	if (n > ACTRACK_DEATH_MAX_ACTS - c->nr_acts) {
		n = ACTRACK_DEATH_MAX_ACTS - c->nr_acts;
		c->flags |= ACTRACK_DEATH_TRUNCATED;
	}
	t->first_act = c->nr_acts;
	t->nr_acts = n;
	memcpy(&c->s->acts[c->nr_acts], copy->slots,
	       n * sizeof(*copy->slots));
	for (i = 0; i < n; i++) {
		c->s->act_data[c->nr_acts + i].off = c->data_len;
		c->s->act_data[c->nr_acts + i].len = 0;
	}
	c->nr_acts += n;
	/* And the activities' data, next, unless none of them fit. */
	return n ? 0 : ACTRACK_WALK_SKIP;
}

static int actrack_collect_module(struct actrack_walk *w,
				  struct actrack_collect *c,
				  const struct actrack_walk_rec *r)
{
	struct actrack_module *m;

	if (c->nr_modules == ACTRACK_DEATH_MAX_MODULES) {
		c->flags |= ACTRACK_DEATH_TRUNCATED;
		w->types &= ~ACTRACK_WALK_MODULES;
		return 0;
	}
	m = &c->s->modules[c->nr_modules++];
	*m = *r->module;
	/* Safe for naive readers: terminated (the walk checked the build
	 * id's size).
	 */
	m->path[sizeof(m->path) - 1] = '\0';
	return 0;
}

static int actrack_collect_record(struct actrack_walk *w,
				  const struct actrack_walk_rec *r)
{
	struct actrack_collect *c = w->ctx;

	switch (r->type) {
	case ACTRACK_TYPE_THREAD:
		return actrack_collect_thread(w, c, r);
	case ACTRACK_TYPE_PROCESS:
		return actrack_collect_process(w, c, r);
	case ACTRACK_TYPE_MODULE:
		return actrack_collect_module(w, c, r);
	default:
		return actrack_collect_user_data(c, r);
	}
}

/*
 * One owner walk (arena/records.c: at most actrack_arena_max_blocks()
 * blocks, each once) collects the process record's phase and
 * annotations, every live tracker and module record owned by (pid,
 * start_ticks) with its activities' data, in list order: one call into
 * the arena core per report.  Threads, activities, modules and data are
 * bounded again here; a full kind stops being copied.
 */
static struct actrack_report *actrack_build_death(struct actrack_kproc *p)
{
	struct actrack_collect c = { .p = p };
	struct actrack_report *d;
	struct actrack_walk *w;
	u8 *seen;

	/* Uncharged: the dead process's memcg may be gone, and the ring
	 * that keeps the report is bounded per arena.
	 */
	c.s = kvmalloc(sizeof(*c.s), GFP_KERNEL);
	if (!c.s)
		return NULL;
	actrack_karena_view(p->arena, &c.a);
	/* One bit per block: at most 512 KiB, for a 256 MiB arena. */
	seen = kvmalloc(actrack_arena_seen_bytes(&c.a), GFP_KERNEL);
	if (!seen) {
		kvfree(c.s);
		return NULL;
	}
	w = &c.s->walk;
	w->a = &c.a;
	w->key = &p->owner;
	w->types = ACTRACK_WALK_THREADS | ACTRACK_WALK_PROCESSES |
		   ACTRACK_WALK_MODULES | ACTRACK_WALK_USER_DATA;
	w->fn = actrack_collect_record;
	w->ctx = &c;
	w->seen = seen;
	w->ud_buf = c.s->ud;
	w->ud_size = sizeof(c.s->ud);
	w->ud_grow = NULL;
	actrack_walk_records(w);	/* our callbacks never fail */
	kvfree(seen);
	if (c.a.corrupt) {
		c.flags |= ACTRACK_DEATH_ARENA_CORRUPT;
		atomic64_inc(&p->arena->stats.corruption);
	}

	d = actrack_report_alloc(c.nr_threads, c.nr_acts, c.nr_modules,
				c.proc_data_len, c.data_len);
	if (!d) {
		kvfree(c.s);
		return NULL;
	}
	memcpy(d->threads, c.s->threads, c.nr_threads * sizeof(*d->threads));
	memcpy(d->acts, c.s->acts, c.nr_acts * sizeof(*d->acts));
	memcpy(d->act_data, c.s->act_data, c.nr_acts * sizeof(*d->act_data));
	memcpy(d->proc_data, c.s->proc_data, c.proc_data_len);
	memcpy(d->data, c.s->data, c.data_len);
	memcpy(d->modules, c.s->modules, c.nr_modules * sizeof(*d->modules));
	kvfree(c.s);
	d->uid = p->arena->uid;
	d->tgid = get_pid(p->tgid);
	d->pid = p->owner.pid;
	d->pid_ns = p->owner.pid_ns;
	d->start_ticks = p->owner.start_ticks;
	d->wait_status = p->wait_status;
	d->exit_time_ns = p->exit_time_ns;
	actrack_killer_take(p, d);
	actrack_cgroup_take(p, d);
	actrack_oom_take(p, d);
	d->phase = c.phase;
	d->has_phase = c.has_phase;
	d->flags = c.flags;
	d->cmdline_len = min_t(u32, p->cmdline_len, ACTRACK_CMDLINE_MAX);
	memcpy(d->cmdline, p->cmdline, d->cmdline_len);
	d->stacks = actrack_capture_take(p, &d->flags);
	if (d->stacks)
		d->bytes += d->stacks->bytes;
	d->seq = atomic64_inc_return(&p->arena->death_seq);
	return d;
}

/* Free @p's records (those of @filter's threads only, with one). */
static void actrack_free_records(struct actrack_kproc *p,
				 actrack_tid_filter filter, void *ctx)
{
	struct actrack_karena *ka = p->arena;
	struct actrack_arena a;
	int freed;

	actrack_karena_view(ka, &a);
	freed = actrack_arena_free_owned_by(&a, &p->owner, filter, ctx);
	if (freed > 0)
		atomic64_add(freed, &ka->stats.records_freed);
	if (a.corrupt)
		atomic64_inc(&ka->stats.corruption);
}

static void actrack_proc_death(struct actrack_kproc *p)
{
	struct actrack_karena *ka = p->arena;
	struct actrack_report *d;

	d = actrack_build_death(p);
	if (!d)
		atomic64_inc(&ka->stats.reports_dropped);
	/*
	 * The report is in kernel memory now: free the records, keep the
	 * report, and only then tell subscribers, so that whoever receives
	 * a report finds the records gone and the report in GET_DEATHS.
	 */
	actrack_free_records(p, NULL, NULL);
	atomic64_inc(&ka->stats.cleanups);
	if (d) {
		actrack_karena_store_death(ka, d);
		/* Still ours to read: only this arena's work evicts. */
		actrack_netlink_report(ka, d);
	}
}

/*
 * Is a live thread @tid of this very process (same tgid and start) there?
 * Then the tid was reused inside the process after the exit we handle,
 * and the tracker may already be the new thread's: leave it.
 */
static bool actrack_tid_alive(struct actrack_kproc *p, u32 tid)
{
	struct task_struct *task;
	bool alive = false;
	struct pid *pid;

	rcu_read_lock();
	pid = find_pid_ns(tid, p->pid_ns);
	task = pid ? pid_task(pid, PIDTYPE_PID) : NULL;
	if (task && !(READ_ONCE(task->flags) & PF_EXITING) &&
	    task_tgid_nr_ns(task, p->pid_ns) == p->owner.pid &&
	    task->group_leader->start_boottime == p->start_boottime)
		alive = true;
	rcu_read_unlock();
	return alive;
}

/*
 * May the tracker of thread @tid go as a thread that left?  Not while a
 * live thread has the tid (actrack_tid_alive()), nor if the thread may
 * have been taken by the group's end (a fatal signal overlapping the
 * sweep of an overflowed batch, say): that one is the death report's,
 * which must hold every thread alive when the group began to end.  Asked
 * after the thread was seen gone, "has the group begun to end?" tells
 * them apart (actrack_proc_group_ending()); once it has, the report (or
 * the exec cleanup) frees whatever is left.
 */
static bool actrack_tid_left(struct actrack_kproc *p, u32 tid)
{
	if (actrack_tid_alive(p, tid))
		return false;
	/* The group's state after the thread's (see that function). */
	smp_rmb();
	return !actrack_proc_group_ending(p);
}

/* One batch of a process's exited threads. */
struct actrack_tid_batch {
	struct actrack_kproc *p;
	bool sweep;		/* every thread that is gone */
	u32 n;
	u32 tids[ACTRACK_PROC_TIDS];
};

static bool actrack_batch_filter(void *ctx, u32 tid)
{
	struct actrack_tid_batch *b = ctx;
	u32 i;

	if (!b->sweep) {
		for (i = 0; i < b->n && b->tids[i] != tid; i++)
			;
		if (i == b->n)
			return false;
	}
	return actrack_tid_left(b->p, tid);
}

/*
 * Free exited thread @tid through its registration (ACTRACK_IOC_THREAD),
 * if it has one and the tid was not reused in the process since.  Only
 * the entry read is taken out: a newer one is a new thread's.
 */
static int actrack_free_registered(struct actrack_tid_batch *b,
				   struct actrack_arena *a, u32 tid)
{
	struct actrack_kproc *p = b->p;
	void *entry = xa_load(&p->trackers, tid);

	if (!entry || !actrack_tid_left(p, tid))
		return 0;
	if (xa_cmpxchg(&p->trackers, tid, entry, NULL, 0) != entry)
		return 0;
	return actrack_arena_free_thread(a, &p->owner, tid,
					 xa_to_value(entry));
}

/*
 * Free @b's exited threads.  A process that registers its trackers has
 * each freed in O(slots) with no walk (a batch that overflowed looks at
 * its registered threads only, however big the arena); its threads that
 * never registered keep their records until the process ends.  Otherwise
 * one walk frees the whole batch.
 */
static void actrack_free_threads(struct actrack_kproc *p,
				 struct actrack_tid_batch *b)
{
	struct actrack_karena *ka = p->arena;
	struct actrack_arena a;
	unsigned long tid;
	void *entry;
	int freed = 0;
	u32 i;

	if (!READ_ONCE(p->registers) || READ_ONCE(p->trackers_lost)) {
		actrack_free_records(p, actrack_batch_filter, b);
		return;
	}
	actrack_karena_view(ka, &a);
	if (b->sweep) {
		xa_for_each(&p->trackers, tid, entry) {
			freed += actrack_free_registered(b, &a, tid);
			cond_resched();
		}
	} else {
		for (i = 0; i < b->n; i++)
			freed += actrack_free_registered(b, &a, b->tids[i]);
	}
	if (freed > 0)
		atomic64_add(freed, &ka->stats.records_freed);
	if (a.corrupt)
		atomic64_inc(&ka->stats.corruption);
}

/* Lock held: put @p after the urgent entries already queued. */
static void actrack_queue_urgent_locked(struct actrack_karena *ka,
					struct actrack_kproc *p)
{
	list_add(&p->work_node, ka->urgent_end ?: &ka->work_list);
	ka->urgent_end = &p->work_node;
	p->urgent = true;
}

/*
 * Lock held: queue @p's cleanup on its arena's list (once: an entry
 * already queued takes the new events with it), @urgent ones before the
 * others, each kind in the order queued, and make sure the arena's work
 * runs.  Any context; allocates nothing.
 */
void actrack_cleanup_queue_locked(struct actrack_kproc *p, bool urgent)
{
	struct actrack_karena *ka = p->arena;

	lockdep_assert_held(&actrack_procs_lock);
	if (!p->queued) {
		refcount_inc(&p->ref);
		p->queued = true;
		if (urgent)
			actrack_queue_urgent_locked(ka, p);
		else
			list_add_tail(&p->work_node, &ka->work_list);
	} else if (urgent && !p->urgent) {
		list_del(&p->work_node);
		actrack_queue_urgent_locked(ka, p);
	}
	if (!ka->work_queued) {
		/* @p holds @ka: this reference can never be the last. */
		ka->work_queued = true;
		actrack_karena_get(ka);
		queue_work(actrack_wq, &ka->work);
	}
}

/* Lock held: move @p's recorded thread exits into @b. */
static void actrack_batch_take_locked(struct actrack_kproc *p,
				      struct actrack_tid_batch *b)
{
	b->p = p;
	b->sweep = p->tids_overflow;
	b->n = p->nr_tids;
	memcpy(b->tids, p->tids, b->n * sizeof(b->tids[0]));
	p->nr_tids = 0;
	p->tids_overflow = false;
}

/*
 * The thread exits of @p, cleaned up in the exit of one of its threads
 * (task_work, process context, after the thread's mm and files are gone):
 * the walk is paid by the process that caused it, under its cgroup's CPU
 * limits, never by a kernel worker that serves everyone.  Exits recorded
 * meanwhile by its other threads are taken here too, until none is left,
 * the group ends (its death or exec cleanup frees everything) or the
 * module goes.  The last thing it touches is actrack_exit_walks: unload
 * waits for that, then for this function's last instructions
 * (synchronize_rcu_tasks()).
 */
static void actrack_thread_exit_work(struct callback_head *cb)
{
	struct actrack_kproc *p = container_of(cb, struct actrack_kproc,
					       exit_work);
	struct actrack_tid_batch b;

	for (;;) {
		raw_spin_lock(&actrack_procs_lock);
		if (p->state != ACTRACK_PROC_ATTACHED ||
		    READ_ONCE(actrack_cleanup_stopping) ||
		    (!p->nr_tids && !p->tids_overflow)) {
			/* From here on the next exit starts a new walker. */
			p->exit_walker = false;
			raw_spin_unlock(&actrack_procs_lock);
			break;
		}
		actrack_batch_take_locked(p, &b);
		raw_spin_unlock(&actrack_procs_lock);
		actrack_free_threads(p, &b);
		cond_resched();
	}
	actrack_proc_put(p);
	if (atomic_dec_and_test(&actrack_exit_walks))
		wake_up_var(&actrack_exit_walks);
}

/*
 * Lock held, from the exit probe (preemption disabled, no allocation), in
 * @task, a thread of @p that leaves on its own: record its exit (a tid, or
 * an overflow that turns the batch into a sweep) and make sure a thread
 * of @p will clean it up.  The first such thread while none is at it
 * becomes that thread (task_work_add() runs its work later in its exit,
 * with preemption enabled); the kernel worker does it only if that fails.
 */
void actrack_cleanup_thread_exit_locked(struct actrack_kproc *p,
					struct task_struct *task)
{
	lockdep_assert_held(&actrack_procs_lock);
	if (p->nr_tids < ACTRACK_PROC_TIDS)
		p->tids[p->nr_tids++] = task_pid_nr_ns(task, p->pid_ns);
	else
		p->tids_overflow = true;
	if (p->exit_walker)
		return;			/* it takes this exit with the rest */
	if (!READ_ONCE(actrack_cleanup_stopping)) {
		/* The hash's reference is held: this is never the last. */
		refcount_inc(&p->ref);
		atomic_inc(&actrack_exit_walks);
		init_task_work(&p->exit_work, actrack_thread_exit_work);
		if (!task_work_add(task, &p->exit_work, TWA_NONE)) {
			p->exit_walker = true;
			return;
		}
		atomic_dec(&actrack_exit_walks);
		refcount_dec(&p->ref);
	}
	actrack_cleanup_queue_locked(p, false);
}

/* Entries one run handles before it yields the worker to other arenas. */
#define ACTRACK_WORK_BATCH	16

void actrack_karena_work(struct work_struct *work)
{
	struct actrack_karena *ka = container_of(work, struct actrack_karena,
						 work);
	struct actrack_tid_batch b = { .p = NULL };
	enum actrack_proc_state state;
	struct actrack_kproc *p;
	unsigned int done;

	for (done = 0; ; done++) {
		raw_spin_lock(&actrack_procs_lock);
		p = list_first_entry_or_null(&ka->work_list,
					     struct actrack_kproc, work_node);
		if (!p) {
			ka->work_queued = false;
			raw_spin_unlock(&actrack_procs_lock);
			break;
		}
		if (done == ACTRACK_WORK_BATCH) {
			/* Keep the reference for the run queued here. */
			queue_work(actrack_wq, &ka->work);
			raw_spin_unlock(&actrack_procs_lock);
			return;
		}
		/* The urgent ones come first: the last of them goes last. */
		if (ka->urgent_end == &p->work_node)
			ka->urgent_end = NULL;
		list_del_init(&p->work_node);
		p->queued = false;
		p->urgent = false;
		state = p->state;
		actrack_batch_take_locked(p, &b);
		raw_spin_unlock(&actrack_procs_lock);

		/*
		 * Unloading: nothing can map the arena any more and its
		 * memory goes with the module, so no walk is worth waiting
		 * for; a death's report is dropped (counted).
		 */
		if (READ_ONCE(actrack_cleanup_stopping) &&
		    state != ACTRACK_PROC_GONE) {
			if (state == ACTRACK_PROC_DEAD)
				atomic64_inc(&ka->stats.reports_dropped);
			if (state == ACTRACK_PROC_EXEC)
				actrack_proc_exec_done(p);
			state = ACTRACK_PROC_GONE;
		}
		switch (state) {
		case ACTRACK_PROC_ATTACHED:
			if (b.n || b.sweep)
				actrack_free_threads(p, &b);
			break;
		case ACTRACK_PROC_DEAD:
			actrack_proc_death(p);
			break;
		case ACTRACK_PROC_EXEC:
			actrack_free_records(p, NULL, NULL);
			atomic64_inc(&ka->stats.cleanups);
			actrack_proc_exec_done(p);
			break;
		case ACTRACK_PROC_GONE:
			break;
		}
		actrack_proc_put(p);	/* the list's; never @ka's last */
		cond_resched();
	}
	/* The queued run's reference: the last thing this run touches. */
	actrack_karena_put(ka);
}

int actrack_cleanup_init(void)
{
	/*
	 * Unbound and not ordered: each arena's work is one item, so its
	 * entries stay in order while arenas proceed side by side.
	 */
	actrack_wq = alloc_workqueue("actrack", WQ_UNBOUND, 0);
	return actrack_wq ? 0 : -ENOMEM;
}

/*
 * The probes are gone and every process entry is ended: no walk starts
 * from here on.  Wait for the thread-exit walks under way in exiting
 * threads (each ends after its current batch, at most one walk of its
 * arena) and for them to have left this module's code; then drain the
 * work queue without walking what it holds (actrack_karena_work()).
 */
void actrack_cleanup_exit(void)
{
	WRITE_ONCE(actrack_cleanup_stopping, true);
	wait_var_event(&actrack_exit_walks, !atomic_read(&actrack_exit_walks));
	synchronize_rcu_tasks();
	destroy_workqueue(actrack_wq);
}
