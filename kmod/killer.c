// SPDX-License-Identifier: GPL-2.0
/*
 * Who killed it: the sender of the fatal signal, recorded as it is sent.
 *
 * Where: the signal_generate tracepoint, in the sender's context (current)
 * with the target's siglock held, for every signal sent in the system.  So
 * the probe does what the exit probe does: nothing while no process is
 * attached, one test of the signal's fatality (the target's action, read
 * under its siglock) and one RCU hash lookup otherwise, and only for an
 * attached target one cmpxchg, a few stores and three references taken
 * with atomic increments: the sender's pid, its executable file (read
 * under RCU from its mm, as /proc/PID/exe does) and its cgroup.  Their
 * paths are rendered only when the report is read, per reader (netlink.c).
 * No lock, no allocation, no sleep.
 *
 * What: the first fatal signal sent to any thread of the group; later
 * ones change nothing.  The report names that sender only if its signal
 * is the one the process died of (actrack_killer_take()): a blocked
 * SIGTERM followed by the SIGKILL that killed names nobody, never the
 * wrong one.
 *
 * Not under actrack_procs_lock: signals are also sent from hard
 * interrupts (timers), where that lock, taken elsewhere with interrupts
 * on, could deadlock.  The record is claimed instead, by one cmpxchg of
 * @killer_state (EMPTY -> WRITING -> SET), and closed by whoever frees
 * or reports the proc (-> CLOSED, one xchg).  Nobody waits: a closer
 * that finds WRITING leaves the record to its writer, whose own
 * WRITING -> SET then fails and who drops what it wrote.  Losing that
 * record loses nothing, because a signal still being recorded when the
 * process is reported is not the one it died of: the victim acts on a
 * signal only under the siglock the sender holds around the probe, so
 * the fatal signal's probe had returned before the victim died.  A probe
 * that finds the record anything but EMPTY leaves.  The proc's memory
 * outlives the probe's RCU read side.
 *
 * Every path that ends a record drops its references: a report freed
 * (arenas.c, through actrack_killer_put()), a proc freed or reported
 * without it (actrack_killer_drop(), _take()), a probe whose record was
 * closed meanwhile, and module unload, which frees every proc and report
 * by those same paths.
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
#include <linux/string.h>
#include <linux/cgroup.h>
#include <linux/file.h>
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

/* @k claimed (WRITING): record current as the sender. */
static void actrack_killer_record(struct actrack_killer *k, int sig,
				  s32 code, struct task_struct *task)
{
	k->kind = actrack_killer_kind(code, task);
	k->sig = sig;
	k->code = code;
	if (k->kind == ACTRACK_KILLER_KERNEL)
		return;
	/* An atomic increment: current's own pid is alive. */
	k->tgid = get_pid(task_tgid(current));
	k->euid = current_euid();
	strscpy(k->comm, current->comm, sizeof(k->comm));
	/* Under the probe's RCU read side.  Only current changes its own
	 * mm; NULL past exit_mm() (a dying parent's PR_SET_PDEATHSIG).
	 */
	k->exe = current->mm ? actrack_exe_file_get_rcu(current->mm) : NULL;
	/*
	 * Read under RCU: if current is being moved meanwhile, this may
	 * be its old cgroup, already being removed; then none (no retry:
	 * the probe does not spin).
	 */
	k->cgroup = task_dfl_cgroup(current);
	if (!cgroup_tryget(k->cgroup))
		k->cgroup = NULL;
}

void actrack_killer_probe(void *data, int sig, struct kernel_siginfo *info,
			  struct task_struct *task, int group, int result)
{
	struct sighand_struct *sighand;
	struct actrack_kproc *p;

	if (likely(!actrack_procs_hashed()))
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
	if (p && actrack_rec_claim(&p->killer_state)) {
		actrack_killer_record(&p->killer, sig, actrack_si_code(info),
				      task);
		if (!actrack_rec_publish(&p->killer_state))
			/*
			 * Closed meanwhile: nobody else touches it.  Not
			 * the last reference to current's own pid.
			 */
			actrack_killer_put(&p->killer);
	}
	rcu_read_unlock();
}

/*
 * No probe claims @p's record from now on.  Return: whether a record is
 * there and now the caller's.  A probe still writing (WRITING) keeps its
 * record and drops it itself (see the top of this file for why that
 * record does not matter).  Context: process.
 */
static bool actrack_killer_close(struct actrack_kproc *p)
{
	return actrack_rec_close(&p->killer_state);
}

/*
 * The cleanup work, @p DEAD: move the sender into @d if it sent the
 * signal @d's process died of; else drop it.
 */
void actrack_killer_take(struct actrack_kproc *p, struct actrack_report *d)
{
	u32 sig = d->wait_status & 0x7f;

	if (!actrack_killer_close(p))
		return;
	if (sig && sig != 0x7f && p->killer.sig == sig) {
		/* Its references go with it. */
		d->killer = p->killer;
		memset(&p->killer, 0, sizeof(p->killer));
		return;
	}
	actrack_killer_put(&p->killer);
}

/* @p is being freed: its record, if any, goes too.  Context: process. */
void actrack_killer_drop(struct actrack_kproc *p)
{
	if (actrack_killer_close(p))
		actrack_killer_put(&p->killer);
}

/*
 * A report's (or a closed record's) sender.  Context: process, or the
 * probe (atomic, no hard interrupt: a sender in one is the kernel, with
 * no reference): fput() then defers the last close.
 */
void actrack_killer_put(struct actrack_killer *k)
{
	put_pid(k->tgid);
	if (k->exe)
		fput(k->exe);
	if (k->cgroup)
		cgroup_put(k->cgroup);
	memset(k, 0, sizeof(*k));
}
