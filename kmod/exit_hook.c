// SPDX-License-Identifier: GPL-2.0
/*
 * Which thread groups are attached, and noticing when they die or exec.
 *
 * ATTACH records the group in kernel memory (never in the arena, which its
 * uid can rewrite): its tgid as seen in its own pid namespace, its start
 * time and its command line.  The sched_process_exit and
 * sched_process_exec tracepoints (not exported: found by name) tell us
 * when to report and clean up.
 *
 * The probes run for every exit and exec in the system, with preemption
 * disabled, so they do O(1) work: an RCU hash lookup keyed by the group's
 * signal_struct (shared by all threads, kept across exec, unique while the
 * group lives), a raw spinlock only when the group is attached, and
 * queueing work.  Everything that touches the arena runs later in the
 * cleanup workqueue.
 *
 * Why the key is safe: an entry is inserted by a live thread of the group
 * (the caller of ATTACH), and removed by the probe of the group's last
 * exit or its exec, both of which run after that insertion.  So an entry
 * never outlives its signal_struct and a recycled pointer never matches.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/mm.h>
#include <linux/pid_namespace.h>
#include <linux/time_namespace.h>
#include <linux/tracepoint.h>
#include <linux/spinlock.h>
#include <linux/mm.h>
#include <linux/binfmts.h>
#include <linux/timekeeping.h>
#include <trace/events/sched.h>
#include "actrack.h"

#define ACTRACK_PROC_HASH_BITS	10

static DEFINE_HASHTABLE(actrack_procs, ACTRACK_PROC_HASH_BITS);
/* Raw: taken with preemption disabled in the probes, also on PREEMPT_RT. */
static DEFINE_RAW_SPINLOCK(actrack_procs_lock);
static atomic_t actrack_nr_procs = ATOMIC_INIT(0);
static atomic64_t actrack_thread_alloc_failures = ATOMIC64_INIT(0);

static struct tracepoint *actrack_tp_exit;
static struct tracepoint *actrack_tp_exec;
static bool actrack_exit_registered;
static bool actrack_exec_registered;

/* nsec_to_clock_t() is not exported; this is its arithmetic. */
static u64 actrack_ns_to_ticks(u64 ns)
{
#if (NSEC_PER_SEC % USER_HZ) == 0
	return div_u64(ns, NSEC_PER_SEC / USER_HZ);
#else
	return div_u64(ns * USER_HZ, NSEC_PER_SEC);
#endif
}

/* RCU read side (or the lock) held. */
static struct actrack_proc *actrack_proc_find(const void *key)
{
	struct actrack_proc *p;

	hash_for_each_possible_rcu(actrack_procs, p, hnode, (unsigned long)key,
				   lockdep_is_held(&actrack_procs_lock))
		if (p->key == key)
			return p;
	return NULL;
}

void actrack_proc_free(struct actrack_proc *p)
{
	actrack_karena_put(p->arena);
	put_pid_ns(p->pid_ns);
	/* A probe may still be looking at it under RCU. */
	kfree_rcu(p, rcu);
}

/*
 * The command line as /proc/PID/cmdline shows it before any rewrite, read
 * from our own mm (we are the process), bounded.  Userspace may since have
 * rewritten argv; what we keep is the kernel's copy from now on.
 */
static void actrack_read_cmdline(struct actrack_proc *p)
{
	struct mm_struct *mm = current->mm;
	unsigned long start, end;
	int n;

	if (!mm)
		return;
	spin_lock(&mm->arg_lock);
	start = mm->arg_start;
	end = mm->arg_end;
	spin_unlock(&mm->arg_lock);
	if (end <= start)
		return;
	n = min_t(unsigned long, end - start, ACTRACK_CMDLINE_MAX);
	n = access_process_vm(current, start, p->cmdline, n, FOLL_FORCE);
	if (n > 0)
		p->cmdline_len = n;
}

/*
 * Register the calling process with @ka.  Idempotent for a process already
 * attached to @ka (same pid and start_ticks); -EEXIST if it is attached to
 * another arena.  Context: process, may sleep.
 */
int actrack_proc_attach(struct actrack_karena *ka, u32 *pid, u64 *ticks)
{
	struct task_struct *leader = current->group_leader;
	const void *key = current->signal;
	struct actrack_proc *p, *old;
	u64 boot_ns;
	int ret = 0;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->key = key;
	p->pid_ns = get_pid_ns(task_active_pid_ns(current));
	p->pid = task_tgid_nr_ns(current, p->pid_ns);
	p->start_boottime = leader->start_boottime;
	/*
	 * Exactly field 22 of /proc/self/stat as this process reads it: the
	 * leader's start (exec keeps it), shifted into our time namespace.
	 */
	boot_ns = timens_add_boottime_ns(p->start_boottime);
	p->start_ticks = actrack_ns_to_ticks(boot_ns);
	actrack_read_cmdline(p);

	raw_spin_lock(&actrack_procs_lock);
	old = actrack_proc_find(key);
	if (old) {
		if (old->arena != ka) {
			ret = -EEXIST;
		} else {
			*pid = old->pid;
			*ticks = old->start_ticks;
		}
	} else {
		actrack_karena_get(ka);
		p->arena = ka;
		atomic_inc(&ka->attached);
		atomic_inc(&actrack_nr_procs);
		hash_add_rcu(actrack_procs, &p->hnode, (unsigned long)key);
		*pid = p->pid;
		*ticks = p->start_ticks;
	}
	raw_spin_unlock(&actrack_procs_lock);

	if (old) {
		put_pid_ns(p->pid_ns);
		kfree(p);
		return ret;
	}
	actrack_clock_attach();
	return 0;
}

/* Lock held: take @p out; the caller queues its work.  False if lost. */
static bool actrack_proc_unhash_locked(struct actrack_proc *p)
{
	if (hlist_unhashed(&p->hnode))
		return false;
	hash_del_rcu(&p->hnode);
	atomic_dec(&p->arena->attached);
	atomic_dec(&actrack_nr_procs);
	actrack_clock_detach();
	return true;
}

/*
 * The status wait() will return for the group: its leader's, exactly as
 * wait_task_zombie() computes it (a group exit or fatal signal sets
 * group_exit_code; otherwise the leader's own exit code counts, even if
 * the leader exited before the other threads).  The leader's task_struct
 * lives until the whole group is reaped, so it is safe to read here.
 */
static u32 actrack_wait_status(struct task_struct *task)
{
	struct signal_struct *sig = task->signal;

	if (READ_ONCE(sig->flags) & SIGNAL_GROUP_EXIT)
		return READ_ONCE(sig->group_exit_code);
	return READ_ONCE(task->group_leader->exit_code);
}

/* A single thread leaves a group that goes on: free just its tracker. */
static void actrack_thread_exited(struct task_struct *task,
				  struct actrack_proc *p)
{
	struct actrack_thread_exit *te;

	/* Atomic context; a failure only delays the free to group death. */
	te = kmalloc(sizeof(*te), GFP_ATOMIC | __GFP_NOWARN);
	if (!te) {
		atomic64_inc(&actrack_thread_alloc_failures);
		return;
	}
	raw_spin_lock(&actrack_procs_lock);
	if (hlist_unhashed(&p->hnode)) {
		/* Group already gone: its cleanup frees everything. */
		raw_spin_unlock(&actrack_procs_lock);
		kfree(te);
		return;
	}
	/* Under the lock, p's references cannot be dropped under us. */
	actrack_karena_get(p->arena);
	te->arena = p->arena;
	te->pid_ns = get_pid_ns(p->pid_ns);
	te->pid = p->pid;
	te->start_ticks = p->start_ticks;
	te->start_boottime = p->start_boottime;
	te->tid = task_pid_nr_ns(task, p->pid_ns);
	raw_spin_unlock(&actrack_procs_lock);
	actrack_cleanup_queue_thread(te);
}

static void actrack_probe_exit(void *data, struct task_struct *task)
{
	struct signal_struct *sig = task->signal;
	struct actrack_proc *p;
	bool won;

	if (likely(!atomic_read(&actrack_nr_procs)))
		return;
	rcu_read_lock();
	p = actrack_proc_find(sig);
	if (!p)
		goto out;
	if (atomic_read(&sig->live) == 0) {
		/*
		 * The group is dead.  Two threads exiting together may both
		 * see live == 0; only the one that unhashes reports.
		 */
		raw_spin_lock(&actrack_procs_lock);
		won = actrack_proc_unhash_locked(p);
		raw_spin_unlock(&actrack_procs_lock);
		if (won) {
			p->report = true;
			p->wait_status = actrack_wait_status(task);
			p->exit_time_ns = ktime_get_ns();
			actrack_cleanup_queue_proc(p);
		}
	} else if (!(READ_ONCE(sig->flags) & SIGNAL_GROUP_EXIT) &&
		   !READ_ONCE(sig->group_exec_task)) {
		/*
		 * Only a thread that leaves on its own.  When the whole group
		 * is going (fatal signal, exit_group, exec) every tracker must
		 * survive until the death report (or exec cleanup) reads them.
		 */
		actrack_thread_exited(task, p);
	}
out:
	rcu_read_unlock();
}

/*
 * After exec the image that attached is gone but pid and start_ticks stay:
 * free the old image's records now (no death report), and let the new
 * image attach again (its ATTACH flushes this work first).
 */
static void actrack_probe_exec(void *data, struct task_struct *task,
			       pid_t old_pid, struct linux_binprm *bprm)
{
	struct actrack_proc *p;
	bool won = false;

	if (likely(!atomic_read(&actrack_nr_procs)))
		return;
	rcu_read_lock();
	p = actrack_proc_find(task->signal);
	if (p) {
		raw_spin_lock(&actrack_procs_lock);
		won = actrack_proc_unhash_locked(p);
		raw_spin_unlock(&actrack_procs_lock);
	}
	if (won) {
		p->report = false;
		actrack_cleanup_queue_proc(p);
	}
	rcu_read_unlock();
}

/*
 * The tracepoints are not exported, so the typed register_trace_*()
 * helpers cannot be called; but they can be type-checked against our
 * probes, so that a kernel that changes a prototype fails to build
 * instead of calling a probe with the wrong arguments.  Never called.
 */
static void __maybe_unused actrack_check_probe_types(void)
{
	if (0) {
		register_trace_sched_process_exit(actrack_probe_exit, NULL);
		register_trace_sched_process_exec(actrack_probe_exec, NULL);
	}
}

static void actrack_find_tracepoint(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		actrack_tp_exit = tp;
	else if (!strcmp(tp->name, "sched_process_exec"))
		actrack_tp_exec = tp;
}

int actrack_exit_hook_init(void)
{
	int ret;

	for_each_kernel_tracepoint(actrack_find_tracepoint, NULL);
	if (!actrack_tp_exit || !actrack_tp_exec) {
		pr_err("sched_process_exit/exec tracepoints not found\n");
		return -ENOENT;
	}
	ret = tracepoint_probe_register(actrack_tp_exit, actrack_probe_exit,
					NULL);
	if (ret)
		goto err_exit;
	actrack_exit_registered = true;
	ret = tracepoint_probe_register(actrack_tp_exec, actrack_probe_exec,
					NULL);
	if (ret)
		goto err_exec;
	actrack_exec_registered = true;
	return 0;

err_exec:
	tracepoint_probe_unregister(actrack_tp_exit, actrack_probe_exit, NULL);
	actrack_exit_registered = false;
	tracepoint_synchronize_unregister();
err_exit:
	pr_err("cannot register tracepoint probes: %d\n", ret);
	return ret;
}

/*
 * After this no probe runs and none will: processes still attached are
 * forgotten (their records stay in the arena for readers).  Entries that
 * were already queued belong to the cleanup work, drained later.
 */
void actrack_exit_hook_exit(void)
{
	struct actrack_proc *p;
	HLIST_HEAD(gone);
	struct hlist_node *tmp;
	unsigned int bkt;
	u64 failures;

	if (actrack_exec_registered)
		tracepoint_probe_unregister(actrack_tp_exec,
					    actrack_probe_exec, NULL);
	if (actrack_exit_registered)
		tracepoint_probe_unregister(actrack_tp_exit,
					    actrack_probe_exit, NULL);
	actrack_exec_registered = false;
	actrack_exit_registered = false;
	tracepoint_synchronize_unregister();

	raw_spin_lock(&actrack_procs_lock);
	hash_for_each_safe(actrack_procs, bkt, tmp, p, hnode) {
		actrack_proc_unhash_locked(p);
		/* No reader is left: reuse the node for a private list. */
		hlist_add_head(&p->hnode, &gone);
	}
	raw_spin_unlock(&actrack_procs_lock);
	/* Outside the raw lock: dropping an arena may vfree it. */
	hlist_for_each_entry_safe(p, tmp, &gone, hnode)
		actrack_proc_free(p);
	failures = atomic64_read(&actrack_thread_alloc_failures);
	if (failures)
		pr_info("%llu thread exits left to group cleanup (no memory)\n",
			failures);
}
