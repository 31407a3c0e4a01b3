// SPDX-License-Identifier: GPL-2.0
/*
 * Who killed it: the sender of the fatal signal, recorded as it is sent.
 *
 * Where: the signal_generate tracepoint, in the sender's context (current)
 * with the target's siglock held, for every signal sent in the system.  So
 * the probe does what the exit probe does: nothing while no process is
 * attached, one test of the signal's fatality (the target's action, read
 * under its siglock) and one RCU hash lookup otherwise, and only for an
 * attached target the raw proc lock, a few stores and one pid reference
 * (an atomic increment).  No allocation, no sleep.
 *
 * What: the first fatal signal sent to any thread of the group (the
 * siglock, shared by the group, orders the senders), or a SIGKILL sent
 * after a fatal signal that has not killed yet (blocked): the SIGKILL is
 * what kills.  Once the group is dying the kernel drops further signals
 * (only SIGKILL gets through a core dump, and the dump's signal is still
 * the one it dies of): they change nothing.  Under actrack_procs_lock
 * and only while the proc is ATTACHED: once the exit probe has made it
 * DEAD, the cleanup work owns the record and moves it into the report,
 * which names the sender only if its signal is the one the process died
 * of (actrack_killer_take()).
 *
 * Who is the sender: the kernel when the signal says so (SEND_SIG_PRIV,
 * si_code > 0 as a fault's or SI_KERNEL, SI_TIMER), or when current is a
 * kernel thread or no process at all (an interrupt); the process itself
 * when current is one of its threads (raise()); otherwise current's group.
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>
#include <linux/pid.h>
#include <linux/cred.h>
#include <linux/preempt.h>
#include <linux/string.h>
#include <trace/events/signal.h>
#include "internal.h"
#include "compat.h"

/* @info's si_code, SEND_SIG_NOINFO and SEND_SIG_PRIV decoded. */
static s32 actrack_si_code(const struct kernel_siginfo *info)
{
	if (info == SEND_SIG_NOINFO)
		return SI_USER;
	if (info == SEND_SIG_PRIV)
		return SI_KERNEL;
	return info->si_code;
}

static u32 actrack_killer_kind(s32 code, struct task_struct *task)
{
	if (code > 0 || code == SI_TIMER || in_interrupt() ||
	    (current->flags & PF_KTHREAD))
		return ACTRACK_KILLER_KERNEL;
	if (same_thread_group(current, task))
		return ACTRACK_KILLER_SELF;
	return ACTRACK_KILLER_PROCESS;
}

/* Should @sig, sent to @task, replace @k (none yet: kind 0)? */
static bool actrack_killer_wanted(const struct actrack_killer *k, int sig,
				  struct task_struct *task)
{
	if (!k->kind)
		return true;
	return sig == SIGKILL && k->sig != SIGKILL &&
	       !actrack_group_exit_begun(task->signal);
}

/*
 * Lock held, @p ATTACHED: record current as the sender.  Return the
 * previous sender's pid, for the caller to put outside the raw lock.
 */
static struct pid *actrack_killer_record(struct actrack_kproc *p, int sig,
					 s32 code, struct task_struct *task)
{
	struct actrack_killer *k = &p->killer;
	struct pid *old = k->tgid;

	memset(k, 0, sizeof(*k));
	k->kind = actrack_killer_kind(code, task);
	k->sig = sig;
	k->code = code;
	if (k->kind == ACTRACK_KILLER_KERNEL)
		return old;
	/* An atomic increment: current's own pid is alive. */
	k->tgid = get_pid(task_tgid(current));
	k->euid = current_euid();
	strscpy(k->comm, current->comm, sizeof(k->comm));
	return old;
}

void actrack_killer_probe(void *data, int sig, struct kernel_siginfo *info,
			  struct task_struct *task, int group, int result)
{
	struct sighand_struct *sighand;
	struct pid *old = NULL;
	struct actrack_kproc *p;

	if (likely(!actrack_procs_attached()))
		return;
	if (result != TRACE_SIGNAL_DELIVERED &&
	    result != TRACE_SIGNAL_LOSE_INFO)
		return;
	if (sig < 1 || sig > _NSIG)
		return;
	/* Its siglock is held (the tracepoint's caller): a stable sighand. */
	sighand = rcu_dereference_protected(task->sighand, true);
	if (!actrack_signal_is_fatal(task->signal, sig,
				     &sighand->action[sig - 1]))
		return;
	rcu_read_lock();
	p = actrack_proc_find_attached(task->signal);
	if (p) {
		raw_spin_lock(&actrack_procs_lock);
		if (READ_ONCE(p->state) == ACTRACK_PROC_ATTACHED &&
		    actrack_killer_wanted(&p->killer, sig, task))
			old = actrack_killer_record(p, sig,
						    actrack_si_code(info),
						    task);
		raw_spin_unlock(&actrack_procs_lock);
	}
	rcu_read_unlock();
	/* Not under the raw lock: the last reference frees (rare). */
	put_pid(old);
}

/*
 * The cleanup work, @p DEAD (no probe writes it any more): move the
 * sender into @d if it sent the signal @d's process died of; else drop it.
 */
void actrack_killer_take(struct actrack_kproc *p, struct actrack_report *d)
{
	u32 sig = d->wait_status & 0x7f;

	if (p->killer.kind && sig && sig != 0x7f && p->killer.sig == sig) {
		d->killer = p->killer;
		p->killer.tgid = NULL;
	}
	actrack_killer_put(&p->killer);
}

void actrack_killer_put(struct actrack_killer *k)
{
	put_pid(k->tgid);
	memset(k, 0, sizeof(*k));
}
