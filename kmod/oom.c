// SPDX-License-Identifier: GPL-2.0
/*
 * The OOM kill: when the OOM killer (global or a memory cgroup's) chooses
 * an attached process, what it saw.
 *
 * Where: the oom:mark_victim tracepoint, which the OOM killer hits right
 * after it sent the victim its SIGKILL, with the victim's task_lock held
 * (its mm cannot go) and under oom_lock (one OOM kill at a time).  5.10
 * passes the victim's pid, 6.1 on the victim itself (kmod/compat.h).
 * The probe does nothing while no process is attached, one RCU hash
 * lookup otherwise, and for an attached victim: its RSS counters and
 * oom_score_adj, and the nearest memory cgroup, from the victim's up,
 * whose usage is within one charge batch of its limit (the one whose
 * charge failed: the OOM killer passes its oom_control to no tracepoint,
 * so this is how it is found), with one cgroup reference.  No lock, no
 * allocation, no sleep.  The numbers are those of that moment, read once:
 * RSS and usage move on as the victim and others fault and free.
 *
 * The record is claimed as the killer's is (actrack_rec_*) and kept only
 * if the process died of SIGKILL (a victim that was already exiting,
 * which the OOM killer marks without killing, reports how it ended).
 * Other processes sharing the victim's mm get the OOM killer's SIGKILL
 * without a mark: their reports name the kernel as the sender only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/mm.h>
#include <linux/memcontrol.h>
#include <linux/page_counter.h>
#include <linux/cgroup.h>
#include <linux/tracepoint.h>
#include <trace/events/oom.h>
#include "compat.h"
#include "internal.h"

static struct tracepoint *actrack_tp_victim;
static bool actrack_victim_registered;

/*
 * The memory cgroup at its limit, from @memcg up: its cgroup referenced
 * into @o with its limit and usage.  None (a global OOM, or no limit
 * near): @o->memcg stays NULL.  Context: RCU.
 */
static void actrack_oom_memcg(struct mem_cgroup *memcg, struct actrack_oom *o)
{
	/* The root's limit is PAGE_COUNTER_MAX: never the one. */
	for (; memcg; memcg = parent_mem_cgroup(memcg)) {
		unsigned long max = READ_ONCE(memcg->memory.max);
		unsigned long usage = page_counter_read(&memcg->memory);

		if (max == PAGE_COUNTER_MAX ||
		    usage + MEMCG_CHARGE_BATCH < max)
			continue;
		o->memcg = memcg->css.cgroup;
		cgroup_get(o->memcg);
		o->limit = (u64)max << PAGE_SHIFT;
		o->usage = (u64)usage << PAGE_SHIFT;
		return;
	}
}

/* @o claimed: @victim as the OOM killer chose it.  Context: RCU. */
static void actrack_oom_record(struct actrack_oom *o,
			       struct task_struct *victim)
{
	struct mm_struct *mm = victim->mm;

	o->set = true;
	o->score_adj = READ_ONCE(victim->signal->oom_score_adj);
	if (mm) {
		o->anon = (u64)get_mm_counter(mm, MM_ANONPAGES) << PAGE_SHIFT;
		o->file = (u64)get_mm_counter(mm, MM_FILEPAGES) << PAGE_SHIFT;
		o->shmem = (u64)get_mm_counter(mm, MM_SHMEMPAGES) << PAGE_SHIFT;
	}
	actrack_oom_memcg(mem_cgroup_from_task(victim), o);
}

static void actrack_oom_probe(void *data, ACTRACK_PROBE_MARK_VICTIM_ARGS)
{
	struct task_struct *victim;
	struct actrack_kproc *p;

	if (likely(!actrack_procs_hashed()))
		return;
	rcu_read_lock();
	victim = actrack_oom_victim(task);
	p = victim ? actrack_proc_find_attached(victim->signal) : NULL;
	if (p && actrack_rec_claim(&p->oom_state)) {
		actrack_oom_record(&p->oom, victim);
		if (!actrack_rec_publish(&p->oom_state))
			/* Closed meanwhile; a put that frees nothing yet
			 * (the cgroup is alive: its task is in it).
			 */
			actrack_oom_put(&p->oom);
	}
	rcu_read_unlock();
}

/*
 * The cleanup work, @p DEAD: the OOM kill goes into @d if @d's process
 * died of SIGKILL.
 */
void actrack_oom_take(struct actrack_kproc *p, struct actrack_report *d)
{
	if (!actrack_rec_close(&p->oom_state))
		return;
	if ((d->wait_status & 0x7f) == SIGKILL) {
		d->oom = p->oom;
		p->oom.memcg = NULL;
	}
	actrack_oom_put(&p->oom);
}

/* @p is being freed.  Context: process. */
void actrack_oom_drop(struct actrack_kproc *p)
{
	if (actrack_rec_close(&p->oom_state))
		actrack_oom_put(&p->oom);
}

void actrack_oom_put(struct actrack_oom *o)
{
	if (o->memcg)
		cgroup_put(o->memcg);
	memset(o, 0, sizeof(*o));
}

/* Type-checked against the tracepoint's prototype; never called. */
static void __maybe_unused actrack_oom_check_probe_type(void)
{
	if (0)
		register_trace_mark_victim(actrack_oom_probe, NULL);
}

static void actrack_oom_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "mark_victim"))
		actrack_tp_victim = tp;
}

/* Without the tracepoint, reports do not tell an OOM kill; nothing else
 * changes.
 */
void actrack_oom_init(void)
{
	for_each_kernel_tracepoint(actrack_oom_find, NULL);
	if (actrack_tp_victim &&
	    !tracepoint_probe_register(actrack_tp_victim, actrack_oom_probe,
				       NULL))
		actrack_victim_registered = true;
	else
		pr_warn("oom:mark_victim tracepoint not available: death reports will not tell an OOM kill\n");
}

/* Before the other probes' tracepoint_synchronize_unregister(). */
void actrack_oom_exit(void)
{
	if (actrack_victim_registered)
		tracepoint_probe_unregister(actrack_tp_victim,
					    actrack_oom_probe, NULL);
	actrack_victim_registered = false;
}
