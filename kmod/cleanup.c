// SPDX-License-Identifier: GPL-2.0
/*
 * Cleanup after processes: the death report, then freeing their records.
 *
 * All of it runs on one ordered workqueue, in the order the probes queued
 * it.  That ordering is what makes the cleanup correct without locks:
 * a thread's own exit is handled before its group's death, the old
 * image's cleanup before anything a new image (after exec) attaches with
 * the same pid and start_ticks, and the scratch buffers below have a
 * single user.
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
#include "actrack.h"

static struct workqueue_struct *actrack_wq;
/* Exec cleanups queued and not yet done (see actrack_cleanup_flush()). */
static atomic_t actrack_exec_pending = ATOMIC_INIT(0);

/* Scratch for one report at a time (the queue is ordered). */
static struct actrack_thread_copy *actrack_copy;
static struct actrack_process *actrack_proc_copy;
static struct actrack_death_thread *actrack_threads_tmp;
static struct actrack_activity *actrack_acts_tmp;
static struct actrack_module *actrack_modules_tmp;
static u32 actrack_module_refs[ACTRACK_DEATH_MAX_MODULES];
/* User data: one block's copy, then the bytes kept for the report. */
static struct actrack_user_data *actrack_ud_copy;
static u8 *actrack_proc_data_tmp;	/* ACTRACK_DEATH_PROCESS_DATA_MAX */
static u8 *actrack_data_tmp;		/* ACTRACK_DEATH_MAX_DATA */
static struct actrack_death_data *actrack_act_data_tmp;

static struct actrack_death *actrack_death_alloc(u32 nr_threads,
						 u32 nr_acts, u32 nr_modules,
						 u32 proc_data_len,
						 u32 data_len)
{
	struct actrack_death *d;
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
	struct actrack_proc *p;
	struct actrack_arena a;
	u32 nr_threads;
	u32 nr_acts;
	u32 nr_modules;
	u32 proc_data_len;	/* in actrack_proc_data_tmp */
	u32 data_len;		/* in actrack_data_tmp */
	u32 flags;
	u32 phase;
	bool has_phase;
	bool stop;		/* a cycle was seen */
};

/*
 * Cheap filter before a full copy: is @ref a live record of @type owned by
 * our (pid, start_ticks)?  The copies re-check on consistent data.
 */
static bool actrack_owned_by(struct actrack_collect *c, u32 ref, u32 type,
			     u32 min_size)
{
	const struct actrack_owner *o;

	o = actrack_arena_get(&c->a, ref, type, min_size);
	return o && READ_ONCE(o->pid) == c->p->pid &&
	       READ_ONCE(o->start_ticks) == c->p->start_ticks;
}

static bool actrack_same_owner(const struct actrack_owner *o,
			       const struct actrack_proc *p)
{
	return o->pid == p->pid && o->start_ticks == p->start_ticks;
}

/*
 * The field records of user data block @ref, if the dead process owns it
 * (and thread @tid, for an activity's data; process annotations are not
 * checked for a tid): at most @max bytes into @out.  The records are not
 * parsed here (userspace validates them); when they must be cut, the cut
 * is after the last whole record, walking only their sizes, so that the
 * prefix still parses.  A cut sets TRUNCATED.  Return: bytes stored.
 */
static u32 actrack_collect_data(struct actrack_collect *c, u32 ref, u32 tid,
				bool check_tid, u32 max, u8 *out)
{
	struct actrack_user_data *ud = actrack_ud_copy;
	const u8 *fields = (const u8 *)(ud + 1);
	u32 avail, used, off, rs;
	int n;

	if (!ref || !max)
		return 0;
	max = min(max, ACTRACK_DEATH_PROCESS_DATA_MAX);	/* the scratch */
	n = actrack_arena_copy_owned(&c->a, ref, ACTRACK_TYPE_USER_DATA, ud,
				     sizeof(*ud) + max);
	if (n < (int)sizeof(*ud) || !ud->owner.data_id ||
	    !actrack_same_owner(&ud->owner, c->p) ||
	    (check_tid && ud->owner.tid != tid))
		return 0;
	/* The copy is at most the block's payload: never beyond it. */
	avail = min_t(u32, n - sizeof(*ud), max);
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

static void actrack_collect_process(struct actrack_collect *c, u32 ref)
{
	struct actrack_process *rec = actrack_proc_copy;
	int n;

	if (c->has_phase)
		return;		/* the first live one counts */
	n = actrack_arena_copy_owned(&c->a, ref, ACTRACK_TYPE_PROCESS, rec,
				     sizeof(*rec));
	if (n < (int)offsetofend(struct actrack_process, phase) ||
	    !actrack_same_owner(&rec->owner, c->p))
		return;
	c->phase = rec->phase <= ACTRACK_PHASE_MAX ? rec->phase :
		   ACTRACK_PHASE_UNKNOWN;
	c->has_phase = true;
	if (n >= (int)offsetofend(struct actrack_process, user_data))
		c->proc_data_len = actrack_collect_data(c, rec->user_data, 0,
					false, ACTRACK_DEATH_PROCESS_DATA_MAX,
					actrack_proc_data_tmp);
}

/* The user data of the activities just copied for thread @tid. */
static void actrack_collect_act_data(struct actrack_collect *c, u32 first,
				     u32 n, u32 tid)
{
	struct actrack_death_data *dd;
	u32 i, room;

	for (i = first; i < first + n; i++) {
		dd = &actrack_act_data_tmp[i];
		dd->off = c->data_len;
		dd->len = 0;
		if (!actrack_acts_tmp[i].user_data)
			continue;
		room = ACTRACK_DEATH_MAX_DATA - c->data_len;
		if (room < sizeof(struct actrack_field)) {
			c->flags |= ACTRACK_DEATH_TRUNCATED;
			continue;
		}
		room = min(room, ACTRACK_DEATH_ACT_DATA_MAX);
		dd->len = actrack_collect_data(c, actrack_acts_tmp[i].user_data,
					       tid, true, room,
					       actrack_data_tmp + c->data_len);
		c->data_len += dd->len;
	}
}

static void actrack_collect_thread(struct actrack_collect *c, u32 ref)
{
	struct actrack_thread_copy *copy = actrack_copy;
	struct actrack_death_thread *t;
	const struct actrack_thread *th;
	u32 n;
	int err;

	if (c->nr_threads == ACTRACK_DEATH_MAX_THREADS) {
		c->flags |= ACTRACK_DEATH_TRUNCATED;
		return;
	}
	/*
	 * The iterator stops a cycle only after max_blocks steps; until then
	 * it would hand us the same trackers again.  Seeing one twice is
	 * the cycle: stop there rather than report duplicates.
	 */
	for (n = 0; n < c->nr_threads; n++) {
		if (actrack_threads_tmp[n].ref == ref) {
			actrack_arena_set_corrupt(&c->a);
			c->stop = true;
			return;
		}
	}
	err = actrack_arena_copy_thread(&c->a, ref, copy);
	t = &actrack_threads_tmp[c->nr_threads];
	memset(t, 0, sizeof(*t));
	t->ref = ref;
	if (err == -EAGAIN) {
		/* Never stable within the retries: say so, don't guess. */
		th = actrack_arena_get(&c->a, ref, ACTRACK_TYPE_THREAD,
				       sizeof(*th));
		if (!th)
			return;
		t->tid = READ_ONCE(th->owner.tid);
		t->torn = true;
		c->nr_threads++;
		return;
	}
	if (err || !actrack_same_owner(&copy->hdr.owner, c->p))
		return;		/* gone, reused, or bad (flag set) */
	t->tid = copy->hdr.owner.tid;
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
	memcpy(&actrack_acts_tmp[c->nr_acts], copy->slots,
	       n * sizeof(*copy->slots));
	actrack_collect_act_data(c, c->nr_acts, n, t->tid);
	c->nr_acts += n;
	c->nr_threads++;
}

static void actrack_collect_module(struct actrack_collect *c, u32 ref)
{
	struct actrack_module *m = &actrack_modules_tmp[c->nr_modules];
	u32 i;
	int n;

	if (c->nr_modules == ACTRACK_DEATH_MAX_MODULES) {
		c->flags |= ACTRACK_DEATH_TRUNCATED;
		return;
	}
	for (i = 0; i < c->nr_modules; i++) {
		if (actrack_module_refs[i] == ref) {	/* a cycle, as above */
			actrack_arena_set_corrupt(&c->a);
			c->stop = true;
			return;
		}
	}
	actrack_module_refs[c->nr_modules] = ref;
	n = actrack_arena_copy_owned(&c->a, ref, ACTRACK_TYPE_MODULE, m,
				     sizeof(*m));
	if (n != sizeof(*m) || !actrack_same_owner(&m->owner, c->p))
		return;
	/* Make it safe for naive readers: terminated, sizes in range. */
	m->path[sizeof(m->path) - 1] = '\0';
	if (m->build_id_size > ACTRACK_BUILD_ID_MAX)
		m->build_id_size = ACTRACK_BUILD_ID_MAX;
	c->nr_modules++;
}

/*
 * One bounded walk (actrack_arena_max_blocks() steps, in the iterator)
 * collects the process record's phase, every live tracker and module
 * record owned by (pid, start_ticks), in list order.  Threads, activities
 * and modules are bounded again here.
 */
static struct actrack_death *actrack_build_death(struct actrack_proc *p)
{
	struct actrack_collect c = { .p = p };
	struct actrack_arena_iter it;
	struct actrack_death *d;
	u32 ref, type;

	actrack_karena_view(p->arena, &c.a);
	actrack_arena_iter_init(&it, &c.a);
	while (!c.stop &&
	       (ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type))) {
		switch (type) {
		case ACTRACK_TYPE_THREAD:
			if (actrack_owned_by(&c, ref, type,
					     sizeof(struct actrack_thread)))
				actrack_collect_thread(&c, ref);
			break;
		case ACTRACK_TYPE_PROCESS:
			if (actrack_owned_by(&c, ref, type,
					     sizeof(struct actrack_process)))
				actrack_collect_process(&c, ref);
			break;
		case ACTRACK_TYPE_MODULE:
			if (actrack_owned_by(&c, ref, type,
					     sizeof(struct actrack_module)))
				actrack_collect_module(&c, ref);
			break;
		}
		/* Up to 4 Mi steps in a 256 MiB arena: let others run. */
		cond_resched();
	}
	if (c.a.corrupt) {
		c.flags |= ACTRACK_DEATH_ARENA_CORRUPT;
		atomic64_inc(&p->arena->stats.corruption);
	}

	d = actrack_death_alloc(c.nr_threads, c.nr_acts, c.nr_modules,
				c.proc_data_len, c.data_len);
	if (!d)
		return NULL;
	memcpy(d->threads, actrack_threads_tmp,
	       c.nr_threads * sizeof(*d->threads));
	memcpy(d->acts, actrack_acts_tmp, c.nr_acts * sizeof(*d->acts));
	memcpy(d->act_data, actrack_act_data_tmp,
	       c.nr_acts * sizeof(*d->act_data));
	memcpy(d->proc_data, actrack_proc_data_tmp, c.proc_data_len);
	memcpy(d->data, actrack_data_tmp, c.data_len);
	memcpy(d->modules, actrack_modules_tmp,
	       c.nr_modules * sizeof(*d->modules));
	d->uid = p->arena->uid;
	d->pid = p->pid;
	d->start_ticks = p->start_ticks;
	d->wait_status = p->wait_status;
	d->exit_time_ns = p->exit_time_ns;
	d->phase = c.phase;
	d->has_phase = c.has_phase;
	d->flags = c.flags;
	d->cmdline_len = min_t(u32, p->cmdline_len, ACTRACK_CMDLINE_MAX);
	memcpy(d->cmdline, p->cmdline, d->cmdline_len);
	d->seq = atomic64_inc_return(&p->arena->death_seq);
	return d;
}

/* Free (pid, start_ticks[, tid]) records and account for it. */
static void actrack_free_records(struct actrack_karena *ka, u32 pid,
				 u64 start_ticks, u32 tid)
{
	struct actrack_arena a;
	int freed;

	actrack_karena_view(ka, &a);
	freed = actrack_arena_free_owner(&a, pid, start_ticks, tid);
	if (freed > 0)
		atomic64_add(freed, &ka->stats.records_freed);
	if (a.corrupt)
		atomic64_inc(&ka->stats.corruption);
}

static void actrack_proc_work(struct work_struct *work)
{
	struct actrack_proc *p = container_of(work, struct actrack_proc, work);
	struct actrack_karena *ka = p->arena;
	struct actrack_death *d = NULL;

	if (p->report) {
		d = actrack_build_death(p);
		if (!d)
			atomic64_inc(&ka->stats.reports_dropped);
	}
	/*
	 * The report is in kernel memory now: free the records, keep the
	 * report, and only then tell subscribers, so that whoever receives
	 * a report finds the records gone and the report in GET_DEATHS.
	 */
	actrack_free_records(ka, p->pid, p->start_ticks, 0);
	atomic64_inc(&ka->stats.cleanups);
	if (d) {
		actrack_arena_store_death(ka, d);
		/* Still ours to read: only this (ordered) queue evicts. */
		actrack_netlink_report(ka, d);
	}
	if (!p->report) {
		/* The frees above happen before a reader sees the count drop. */
		smp_mb__before_atomic();
		atomic_dec(&actrack_exec_pending);
	}
	actrack_proc_free(p);
}

/*
 * Is a live thread @tid of this very process (same tgid and start) there?
 * Then the tid was reused inside the process after the exit we handle,
 * and the tracker may already be the new thread's: leave it.
 */
static bool actrack_tid_alive(struct actrack_thread_exit *te)
{
	struct task_struct *task;
	bool alive = false;
	struct pid *pid;

	rcu_read_lock();
	pid = find_pid_ns(te->tid, te->pid_ns);
	task = pid ? pid_task(pid, PIDTYPE_PID) : NULL;
	if (task && !(READ_ONCE(task->flags) & PF_EXITING) &&
	    task_tgid_nr_ns(task, te->pid_ns) == te->pid &&
	    task->group_leader->start_boottime == te->start_boottime)
		alive = true;
	rcu_read_unlock();
	return alive;
}

static void actrack_thread_work(struct work_struct *work)
{
	struct actrack_thread_exit *te =
		container_of(work, struct actrack_thread_exit, work);

	/* tid 0 would mean "every record of the process". */
	if (te->tid && !actrack_tid_alive(te))
		actrack_free_records(te->arena, te->pid, te->start_ticks,
				     te->tid);
	actrack_karena_put(te->arena);
	put_pid_ns(te->pid_ns);
	kfree(te);
}

/* Any context (called from the probes). */
void actrack_cleanup_queue_proc(struct actrack_proc *p)
{
	if (!p->report)
		atomic_inc(&actrack_exec_pending);
	INIT_WORK(&p->work, actrack_proc_work);
	queue_work(actrack_wq, &p->work);
}

void actrack_cleanup_queue_thread(struct actrack_thread_exit *te)
{
	INIT_WORK(&te->work, actrack_thread_work);
	queue_work(actrack_wq, &te->work);
}

/*
 * ATTACH after exec: wait until the old image's cleanup (queued by the
 * exec probe before this image ran) is done.  Only an exec cleanup can
 * match the caller's pid and start_ticks, so without one pending there is
 * nothing to wait for, and an ATTACH does not queue behind other users'
 * (possibly slow, hostile) arena walks.
 */
void actrack_cleanup_flush(void)
{
	if (atomic_read_acquire(&actrack_exec_pending))
		flush_workqueue(actrack_wq);
}

int actrack_cleanup_init(void)
{
	actrack_copy = kmalloc(sizeof(*actrack_copy), GFP_KERNEL);
	actrack_proc_copy = kmalloc(sizeof(*actrack_proc_copy), GFP_KERNEL);
	actrack_threads_tmp = kvmalloc_array(ACTRACK_DEATH_MAX_THREADS,
					     sizeof(*actrack_threads_tmp),
					     GFP_KERNEL);
	actrack_acts_tmp = kvmalloc_array(ACTRACK_DEATH_MAX_ACTS,
					  sizeof(*actrack_acts_tmp), GFP_KERNEL);
	actrack_modules_tmp = kvmalloc_array(ACTRACK_DEATH_MAX_MODULES,
					     sizeof(*actrack_modules_tmp),
					     GFP_KERNEL);
	actrack_ud_copy = kmalloc(sizeof(*actrack_ud_copy) +
				  ACTRACK_DEATH_PROCESS_DATA_MAX, GFP_KERNEL);
	actrack_proc_data_tmp = kmalloc(ACTRACK_DEATH_PROCESS_DATA_MAX,
					GFP_KERNEL);
	actrack_data_tmp = kvmalloc(ACTRACK_DEATH_MAX_DATA, GFP_KERNEL);
	actrack_act_data_tmp = kvmalloc_array(ACTRACK_DEATH_MAX_ACTS,
					      sizeof(*actrack_act_data_tmp),
					      GFP_KERNEL);
	if (!actrack_copy || !actrack_proc_copy || !actrack_threads_tmp ||
	    !actrack_acts_tmp || !actrack_modules_tmp || !actrack_ud_copy ||
	    !actrack_proc_data_tmp || !actrack_data_tmp ||
	    !actrack_act_data_tmp)
		goto err;
	actrack_wq = alloc_ordered_workqueue("actrack", 0);
	if (!actrack_wq)
		goto err;
	return 0;
err:
	kvfree(actrack_act_data_tmp);
	kvfree(actrack_data_tmp);
	kfree(actrack_proc_data_tmp);
	kfree(actrack_ud_copy);
	kvfree(actrack_modules_tmp);
	kvfree(actrack_acts_tmp);
	kvfree(actrack_threads_tmp);
	kfree(actrack_proc_copy);
	kfree(actrack_copy);
	return -ENOMEM;
}

/* The probes are gone: drain what they queued, then free the scratch. */
void actrack_cleanup_exit(void)
{
	destroy_workqueue(actrack_wq);
	kvfree(actrack_act_data_tmp);
	kvfree(actrack_data_tmp);
	kfree(actrack_proc_data_tmp);
	kfree(actrack_ud_copy);
	kvfree(actrack_modules_tmp);
	kvfree(actrack_acts_tmp);
	kvfree(actrack_threads_tmp);
	kfree(actrack_proc_copy);
	kfree(actrack_copy);
}
