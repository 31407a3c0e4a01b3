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
 * disabled, so they do O(1) work and never allocate (PREEMPT_RT forbids
 * it there): an RCU hash lookup keyed by the group's signal_struct (shared
 * by all threads, kept across exec, unique while the group lives), a raw
 * spinlock only when the group is attached, then recording the event in
 * the proc entry itself (a thread's tid in a small array, or the group's
 * end) and queueing its arena's cleanup work if it is not queued yet.
 * A thread's exit is cleaned up by an exiting thread of its own process
 * (cleanup.c): through the tracker it registered (ACTRACK_IOC_THREAD)
 * with no walk; a process that never registers pays one walk per batch
 * itself, however fast it churns threads.
 *
 * Why the key is safe: an ATTACHED entry is inserted by a live thread of
 * the group (the caller of ATTACH), and leaves that state in the probe of
 * the group's last exit or its exec, both of which run after that
 * insertion.  So an ATTACHED entry never outlives its signal_struct and a
 * recycled pointer never matches one.  An EXEC entry stays hashed until
 * its cleanup is done, only so that the new image's ATTACH can wait for
 * it; the group may die meanwhile and its signal_struct be recycled, so
 * ATTACH matches an EXEC entry by the group's struct pid as well, which
 * the entry holds a reference to and which therefore is no other
 * process's: an ATTACH waits for its own previous image only, never for
 * a stranger's (or another uid's) cleanup backlog.
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
#include <linux/proc_ns.h>
#include <trace/events/sched.h>
#include <trace/events/signal.h>
#include "internal.h"
#include "compat.h"
#include "test_fault.h"

#define ACTRACK_PROC_HASH_BITS	10

static DEFINE_HASHTABLE(actrack_procs, ACTRACK_PROC_HASH_BITS);
DEFINE_RAW_SPINLOCK(actrack_procs_lock);
/*
 * Entries in the hash: ATTACHED ones and EXEC ones still being cleaned
 * up.  Zero is the probes' fast way out.
 */
static atomic_t actrack_nr_hashed = ATOMIC_INIT(0);
/* ATTACHED entries of every arena (the sum of the arenas' @attached). */
static atomic_t actrack_nr_attached = ATOMIC_INIT(0);

static struct tracepoint *actrack_tp_exit;
static struct tracepoint *actrack_tp_exec;
static struct tracepoint *actrack_tp_signal;
static struct tracepoint *actrack_tp_generate;
static bool actrack_exit_registered;
static bool actrack_exec_registered;
static bool actrack_signal_registered;
static bool actrack_generate_registered;

/* nsec_to_clock_t() is not exported; this is its arithmetic. */
static u64 actrack_ns_to_ticks(u64 ns)
{
#if (NSEC_PER_SEC % USER_HZ) == 0
	return div_u64(ns, NSEC_PER_SEC / USER_HZ);
#else
	return div_u64(ns * USER_HZ, NSEC_PER_SEC);
#endif
}

/*
 * RCU read side (or the lock) held.  The entry of @key in @state; an
 * ATTACHED and an EXEC entry of one group may both be hashed.
 */
static struct actrack_kproc *actrack_proc_find(const void *key,
					      enum actrack_proc_state state)
{
	struct actrack_kproc *p;

	hash_for_each_possible_rcu(actrack_procs, p, hnode, (unsigned long)key,
				   lockdep_is_held(&actrack_procs_lock))
		if (p->key == key && READ_ONCE(p->state) == state)
			return p;
	return NULL;
}

/*
 * Lock held.  The EXEC entry of the group whose struct pid is @tgid, keyed
 * by @key: only the group's own previous image (see "Why the key is safe").
 */
static struct actrack_kproc *actrack_proc_find_exec(const void *key,
						   const struct pid *tgid)
{
	struct actrack_kproc *p;

	hash_for_each_possible_rcu(actrack_procs, p, hnode, (unsigned long)key,
				   lockdep_is_held(&actrack_procs_lock))
		if (p->key == key && p->tgid == tgid &&
		    p->state == ACTRACK_PROC_EXEC)
			return p;
	return NULL;
}

/*
 * The ATTACHED entry of @key, for capture.c (its probe, its slots, its
 * policy) and killer.c's probe: RCU read side or the lock held.
 */
struct actrack_kproc *actrack_proc_find_attached(const void *key)
{
	return actrack_proc_find(key, ACTRACK_PROC_ATTACHED);
}

/* The probes' fast way out: zero while no process entry is hashed. */
int actrack_procs_hashed(void)
{
	return atomic_read(&actrack_nr_hashed);
}

/* Processes attached now, all arenas together (GET_STATS). */
long actrack_attached_count(void)
{
	return atomic_read(&actrack_nr_attached);
}

/* Context: process (it may drop the last arena reference). */
void actrack_proc_put(struct actrack_kproc *p)
{
	if (!refcount_dec_and_test(&p->ref))
		return;
	/* Stacks its report did not take (exec, unload, no report). */
	actrack_capture_drop(p);
	actrack_karena_mem_put(p->arena);
	actrack_karena_put(p->arena);
	xa_destroy(&p->trackers);
	put_pid_ns(p->pid_ns);
	put_pid(p->tgid);
	actrack_killer_drop(p);
	actrack_cgroup_put(&p->cgroup);
	actrack_oom_drop(p);
	/* A probe may still be looking at it under RCU. */
	kfree_rcu(p, rcu);
}

/* Lock held: take @p out of the hash (the caller owns the hash's ref). */
static void actrack_proc_unhash_locked(struct actrack_kproc *p)
{
	hash_del_rcu(&p->hnode);
	p->hashed = false;
	atomic_dec(&actrack_nr_hashed);
}

/* Lock held: ATTACHED -> @state.  False if it was not ATTACHED. */
static bool actrack_proc_end_locked(struct actrack_kproc *p,
				    enum actrack_proc_state state)
{
	if (p->state != ACTRACK_PROC_ATTACHED)
		return false;
	WRITE_ONCE(p->state, state);
	atomic_dec(&p->arena->attached);
	atomic_dec(&actrack_nr_attached);
	return true;
}

/*
 * The exec cleanup of @p is done (cleanup work, process context): let
 * ATTACH waiters go, and drop the hash's reference (unless unload took
 * the entry out first).
 */
void actrack_proc_exec_done(struct actrack_kproc *p)
{
	bool hashed;

	raw_spin_lock(&actrack_procs_lock);
	hashed = p->hashed;
	if (hashed)
		actrack_proc_unhash_locked(p);
	raw_spin_unlock(&actrack_procs_lock);
	complete_all(&p->done);
	if (hashed)
		actrack_proc_put(p);
}

/* * The command line as /proc/PID/cmdline shows it before any rewrite, read
 * from our own mm (we are the process), bounded.  Userspace may since have
 * rewritten argv; what we keep is the kernel's copy from now on.
 */
static void actrack_read_cmdline(struct actrack_kproc *p)
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
 * attached to @ka; -EEXIST if it is attached to another arena.  After an
 * exec, waits (killably: -EINTR) for the old image's cleanup only, which
 * would otherwise free what this image writes under the same identity.
 * Fills @at's pid, pid_ns and start_ticks.  Context: process, may sleep.
 */
int actrack_proc_attach(struct actrack_karena *ka, struct actrack_attach *at)
{
	struct task_struct *leader = current->group_leader;
	const void *key = current->signal;
	struct actrack_kproc *p, *old;
	u64 boot_ns;
	int ret;

	/* Its records need memory: a memory user from now on. */
	ret = actrack_karena_mem_get(ka, true);
	if (ret)
		return ret;
	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p) {
		actrack_karena_mem_put(ka);
		return -ENOMEM;
	}
	refcount_set(&p->ref, 1);		/* the hash's */
	init_completion(&p->done);
	INIT_LIST_HEAD(&p->work_node);
	xa_init(&p->trackers);
	p->key = key;
	p->pid_ns = get_pid_ns(task_active_pid_ns(current));
	p->tgid = get_pid(task_tgid(current));
	p->owner.pid = task_tgid_nr_ns(current, p->pid_ns);
	p->owner.pid_ns = p->pid_ns->ns.inum;
	p->start_boottime = leader->start_boottime;
	p->capture_id = actrack_capture_new_id();
	actrack_capture_pool_ensure(ka);
	/*
	 * Exactly field 22 of /proc/self/stat as this process reads it: the
	 * leader's start (exec keeps it), shifted into our time namespace.
	 */
	boot_ns = actrack_timens_add_boottime_ns(p->start_boottime);
	p->owner.start_ticks = actrack_ns_to_ticks(boot_ns);
	actrack_read_cmdline(p);

	for (;;) {
		raw_spin_lock(&actrack_procs_lock);
		old = actrack_proc_find(key, ACTRACK_PROC_ATTACHED);
		if (old) {
			ret = old->arena == ka ? 0 : -EEXIST;
			if (!ret)
				p->owner = old->owner;	/* what we said before */
			raw_spin_unlock(&actrack_procs_lock);
			goto out_free;
		}
		old = actrack_proc_find_exec(key, p->tgid);
		if (!old)
			break;
		refcount_inc(&old->ref);
		raw_spin_unlock(&actrack_procs_lock);
		ret = wait_for_completion_killable(&old->done);
		actrack_proc_put(old);
		if (ret) {
			ret = -EINTR;
			goto out_free;
		}
	}
	actrack_karena_get(ka);
	p->arena = ka;
	p->state = ACTRACK_PROC_ATTACHED;
	atomic_inc(&ka->attached);
	atomic_inc(&actrack_nr_hashed);
	hash_add_rcu(actrack_procs, &p->hnode, (unsigned long)key);
	p->hashed = true;
	at->pid = p->owner.pid;
	at->pid_ns = p->owner.pid_ns;
	at->start_ticks = p->owner.start_ticks;
	atomic_inc(&actrack_nr_attached);
	raw_spin_unlock(&actrack_procs_lock);
	return 0;

out_free:
	if (!ret) {
		at->pid = p->owner.pid;
		at->pid_ns = p->owner.pid_ns;
		at->start_ticks = p->owner.start_ticks;
	}
	put_pid_ns(p->pid_ns);
	put_pid(p->tgid);
	kfree(p);
	actrack_karena_mem_put(ka);
	return ret;
}

/*
 * ACTRACK_IOC_THREAD: the calling thread's tracker is block @tracker of
 * @ka (0: none).  Only the reference is kept, one per thread of the
 * caller's own process, charged to the caller; what is there is checked
 * when the thread has exited (actrack_arena_free_thread()), never here.
 * Context: process, may sleep.
 */
int actrack_proc_register_thread(struct actrack_karena *ka, u32 tracker)
{
	struct actrack_kproc *p;
	unsigned long tid;
	int ret = 0;

	if (tracker && (tracker < ACTRACK_ARENA_HEADER_SIZE ||
			tracker % ACTRACK_BLOCK_ALIGN || tracker >= ka->size))
		return -EINVAL;
	rcu_read_lock();
	p = actrack_proc_find(current->signal, ACTRACK_PROC_ATTACHED);
	if (p && (p->arena != ka || !refcount_inc_not_zero(&p->ref)))
		p = NULL;
	rcu_read_unlock();
	if (!p)
		return -ENOENT;
	/*
	 * Once a registration failed, every exit of this process is walked
	 * (cleanup.c) and the registry is never read again: keep nothing in
	 * it, or a thread-churning process would grow it without bound.
	 */
	if (READ_ONCE(p->trackers_lost))
		goto out;
	tid = task_pid_nr_ns(current, p->pid_ns);
	if (tracker)
		ret = xa_err(xa_store(&p->trackers, tid, xa_mk_value(tracker),
				      GFP_KERNEL_ACCOUNT));
	else
		xa_erase(&p->trackers, tid);
	/* Without this thread's entry only a walk finds its records. */
	if (ret) {
		WRITE_ONCE(p->trackers_lost, true);
		/*
		 * A store racing with this one may still add an entry: the
		 * last reference frees it (actrack_proc_put()).
		 */
		xa_destroy(&p->trackers);
	} else if (tracker) {
		WRITE_ONCE(p->registers, true);
	}
out:
	actrack_proc_put(p);
	return ret;
}

/* * The status wait() will return for the group: its leader's, exactly as
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

static void actrack_probe_exit(void *data, ACTRACK_PROBE_EXIT_ARGS)
{
	struct signal_struct *sig = task->signal;
	struct actrack_kproc *p;

	if (likely(!atomic_read(&actrack_nr_hashed)))
		return;
	rcu_read_lock();
	p = actrack_proc_find(sig, ACTRACK_PROC_ATTACHED);
	if (!p)
		goto out;
	actrack_test_fault_in_probe();
	raw_spin_lock(&actrack_procs_lock);
	if (atomic_read(&sig->live) == 0) {
		/*
		 * The group is dead.  Two threads exiting together may both
		 * see live == 0; only the one that ends the entry reports.
		 */
		if (actrack_proc_end_locked(p, ACTRACK_PROC_DEAD)) {
			p->wait_status = actrack_wait_status(task);
			p->exit_time_ns = ktime_get_ns();
			actrack_cgroup_capture(p);
			actrack_cleanup_queue_locked(p, true);
			actrack_proc_unhash_locked(p);
			/* The queue holds it now: never the last reference. */
			refcount_dec(&p->ref);
		}
	} else if (p->state == ACTRACK_PROC_ATTACHED &&
		   !actrack_group_exit_begun(sig) &&
		   !actrack_group_exec_running(sig)) {
		/*
		 * Only a thread that leaves on its own.  When the whole group
		 * is going (fatal signal, exit_group, exec) every tracker must
		 * survive until the death report (or exec cleanup) reads them.
		 */
		actrack_cleanup_thread_exit_locked(p, task);
	}
	raw_spin_unlock(&actrack_procs_lock);
out:
	rcu_read_unlock();
}

/*
 * Has @p's group begun to end (a fatal signal, exit_group(), an exec's
 * killing of the other threads, or its last thread's exit), or ended?
 * The cleanup work asks, after seeing a thread gone or exiting, whether
 * that thread left on its own: a thread that the group's end kills only
 * begins to exit after actrack_group_exit_begun() or an exec is seen (under
 * the siglock that it then takes to dequeue its SIGKILL), so a thread
 * seen exiting before this returns false left before the group began to
 * end.  Context: any; takes the RCU read lock.
 */
bool actrack_proc_group_ending(struct actrack_kproc *p)
{
	struct signal_struct *sig;
	struct task_struct *task;
	bool ending = true;

	rcu_read_lock();
	/* The leader stays (a zombie if need be) until the group is gone. */
	task = pid_task(p->tgid, PIDTYPE_TGID);
	if (task) {
		sig = task->signal;
		ending = actrack_group_exit_begun(sig) ||
			 actrack_group_exec_running(sig) ||
			 !atomic_read(&sig->live);
	}
	rcu_read_unlock();
	return ending;
}

/*
 * After exec the image that attached is gone but pid and start_ticks stay:
 * free the old image's records now (no death report).  The entry stays
 * hashed as EXEC until that is done, for the new image's ATTACH to wait on.
 */
static void actrack_probe_exec(void *data, struct task_struct *task,
			       pid_t old_pid, struct linux_binprm *bprm)
{
	struct actrack_kproc *p;

	if (likely(!atomic_read(&actrack_nr_hashed)))
		return;
	rcu_read_lock();
	p = actrack_proc_find(task->signal, ACTRACK_PROC_ATTACHED);
	if (p) {
		raw_spin_lock(&actrack_procs_lock);
		if (actrack_proc_end_locked(p, ACTRACK_PROC_EXEC))
			actrack_cleanup_queue_locked(p, true);
		raw_spin_unlock(&actrack_procs_lock);
	}
	rcu_read_unlock();
}

/* * The tracepoints are not exported, so the typed register_trace_*()
 * helpers cannot be called; but they can be type-checked against our
 * probes, so that a kernel that changes a prototype fails to build
 * instead of calling a probe with the wrong arguments.  Never called.
 */
static void __maybe_unused actrack_check_probe_types(void)
{
	if (0) {
		register_trace_sched_process_exit(actrack_probe_exit, NULL);
		register_trace_sched_process_exec(actrack_probe_exec, NULL);
		register_trace_signal_deliver(actrack_capture_probe, NULL);
		register_trace_signal_generate(actrack_killer_probe, NULL);
	}
}

static void actrack_find_tracepoint(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		actrack_tp_exit = tp;
	else if (!strcmp(tp->name, "sched_process_exec"))
		actrack_tp_exec = tp;
	else if (!strcmp(tp->name, "signal_deliver"))
		actrack_tp_signal = tp;
	else if (!strcmp(tp->name, "signal_generate"))
		actrack_tp_generate = tp;
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
	/* Without it, reports carry no stacks; nothing else changes. */
	if (actrack_tp_signal && actrack_stack_bytes &&
	    !tracepoint_probe_register(actrack_tp_signal,
				       actrack_capture_probe, NULL))
		actrack_signal_registered = true;
	else if (actrack_stack_bytes)
		pr_warn("signal_deliver tracepoint not available: death reports will carry no stacks\n");
	/* Without it, reports name no sender; nothing else changes. */
	if (actrack_tp_generate &&
	    !tracepoint_probe_register(actrack_tp_generate,
				       actrack_killer_probe, NULL))
		actrack_generate_registered = true;
	else
		pr_warn("signal_generate tracepoint not available: death reports will name no sender\n");
	actrack_oom_init();
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
	struct actrack_kproc *p;
	unsigned int bkt;

	actrack_oom_exit();
	if (actrack_signal_registered)
		tracepoint_probe_unregister(actrack_tp_signal,
					    actrack_capture_probe, NULL);
	actrack_signal_registered = false;
	if (actrack_generate_registered)
		tracepoint_probe_unregister(actrack_tp_generate,
					    actrack_killer_probe, NULL);
	actrack_generate_registered = false;
	if (actrack_exec_registered)
		tracepoint_probe_unregister(actrack_tp_exec,
					    actrack_probe_exec, NULL);
	if (actrack_exit_registered)
		tracepoint_probe_unregister(actrack_tp_exit,
					    actrack_probe_exit, NULL);
	actrack_exec_registered = false;
	actrack_exit_registered = false;
	tracepoint_synchronize_unregister();

	/* One at a time: the cleanup work may take EXEC entries out too. */
	for (;;) {
		p = NULL;
		raw_spin_lock(&actrack_procs_lock);
		hash_for_each(actrack_procs, bkt, p, hnode)
			break;
		if (p) {
			/* A queued work now leaves it alone. */
			if (p->state == ACTRACK_PROC_ATTACHED)
				actrack_proc_end_locked(p, ACTRACK_PROC_GONE);
			actrack_proc_unhash_locked(p);
		}
		raw_spin_unlock(&actrack_procs_lock);
		if (!p)
			break;
		complete_all(&p->done);
		/* Outside the raw lock: dropping an arena may free it. */
		actrack_proc_put(p);
	}
}
