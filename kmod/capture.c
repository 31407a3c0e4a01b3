// SPDX-License-Identifier: GPL-2.0
/*
 * The user stack of each thread of an attached process, as it dies.
 *
 * Where: the signal_deliver tracepoint, in the dying thread's own context
 * while its memory is still mapped (sched_process_exit comes after
 * exit_mm()).  get_signal() traces there every signal it acts on, also
 * the SIGKILL that a group exit (fatal signal, exit_group(), the OOM
 * killer's kill, a core dump) makes every other thread take.  It holds
 * the siglock with interrupts off, and like every tracepoint probe it
 * runs with preemption disabled: so nothing here may fault, sleep or
 * allocate (PREEMPT_RT's allocator sleeps).  The copy is
 * copy_from_user_nofault(), page by page, into memory set aside earlier.
 *
 * That memory is a pool per arena (so per uid), allocated at the first
 * ATTACH of the uid and charged to it: stack_slots slots of stack_bytes
 * each.  A dying thread claims a free slot with one atomic bit operation;
 * a process takes at most stack_threads slots.  The cleanup work moves
 * the slots of a dead process into its death report and frees them, so a
 * slot is busy from a thread's death to its process's report: a uid that
 * kills many processes at once loses stacks (the report says so with
 * ACTRACK_DEATH_STACKS_CUT), never another uid's, and the kernel never
 * does more than stack_bytes of copying per dying thread.
 *
 * What is copied is what a core dump would hold: the mapping that holds
 * the sp, from the sp to its end, never one excluded from core dumps
 * (MADV_DONTDUMP, VM_IO, VM_PFNMAP), looked up under a trylock of the
 * memory map, retried for at most ACTRACK_CAPTURE_SPIN_US (no sleeping
 * here: a writer the kill did not make let go in time costs the copy).
 * Only deaths by a signal are captured: the other threads of a clean
 * exit() take the same SIGKILL, but their stacks are no one's business
 * unless the process asked (ACTRACK_STACKS_ON_EXIT).
 *
 * Who gets them is decided per reader when a report is rendered
 * (actrack_stacks_may_read()), by the ptrace rules of that moment: see
 * "Stacks at death" in the uapi header and docs/trust.md.
 *
 * Identity: a slot names its process by the proc's capture id, unique for
 * the module's lifetime, never by a pointer that could be reused.  A slot
 * whose process never collects it (a fatal signal that raced with exec or
 * module unload) is given back after ACTRACK_CAPTURE_STALE, unless its
 * process is still attached (a slow core dump): then it waits on.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/sched/coredump.h>
#include <linux/signal.h>
#include <linux/uaccess.h>
#include <linux/jiffies.h>
#include <linux/delay.h>
#include <linux/bitmap.h>
#include <linux/mmap_lock.h>
#include <linux/fs.h>
#include <linux/pid.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>
#include <asm/ptrace.h>
#include "internal.h"
#include "compat.h"

/* Kernel threads cloned from a user thread (vhost, 6.4+): no user stack. */
#ifdef PF_USER_WORKER
#define ACTRACK_PF_USER_WORKER	PF_USER_WORKER
#else
#define ACTRACK_PF_USER_WORKER	0
#endif

/* A slot nobody collected within this long is free again. */
#define ACTRACK_CAPTURE_STALE	(60 * HZ)

struct actrack_capture_slot {
	u64 owner;			/* capture id of the process */
	const void *key;		/* its signal_struct, never dereferenced */
	unsigned long when;		/* jiffies: captured, or last seen */
	u32 tid;
	u32 flags;			/* ACTRACK_STACK_* */
	u32 len;			/* bytes in @stack */
	u32 ready;			/* release: the fields above are set */
	u64 sp;
	u64 regs[ACTRACK_STACK_NR_REGS];
	u8 stack[];			/* actrack_stack_bytes */
};

struct actrack_capture_pool {
	u32 nr_slots;
	u32 slot_bytes;			/* stride of a slot */
	DECLARE_BITMAP(busy, ACTRACK_STACK_SLOTS_LIMIT);
	u8 slots[];
};

static atomic64_t actrack_capture_ids = ATOMIC64_INIT(0);

u64 actrack_capture_new_id(void)
{
	return atomic64_inc_return(&actrack_capture_ids);
}

static struct actrack_capture_slot *
actrack_slot(struct actrack_capture_pool *pool, u32 i)
{
	return (void *)(pool->slots + (size_t)i * pool->slot_bytes);
}

/*
 * Give @ka its pool if it has none (ATTACH, process context).  Failing to
 * allocate is not an error: that uid's reports carry no stacks.
 */
void actrack_capture_pool_ensure(struct actrack_karena *ka)
{
	struct actrack_capture_pool *pool;
	size_t slot_bytes;

	if (!actrack_stack_bytes || !actrack_stack_slots ||
	    !actrack_stack_threads || READ_ONCE(ka->capture))
		return;
	slot_bytes = ALIGN(sizeof(struct actrack_capture_slot) +
			   actrack_stack_bytes, 64);
	pool = kvzalloc(sizeof(*pool) + slot_bytes * actrack_stack_slots,
			GFP_KERNEL_ACCOUNT);
	if (!pool)
		return;
	pool->nr_slots = actrack_stack_slots;
	pool->slot_bytes = slot_bytes;
	/* Two ATTACHes of one uid may race: the first pool stays. */
	if (cmpxchg_release(&ka->capture, NULL, pool))
		kvfree(pool);
}

/* The arena is being freed: nothing can capture into it any more. */
void actrack_capture_pool_free(struct actrack_karena *ka)
{
	kvfree(ka->capture);
	ka->capture = NULL;
}

/*
 * The arena's pool, or NULL.  Pairs with the cmpxchg_release() that
 * published it: its slot geometry is seen initialized.
 */
static struct actrack_capture_pool *actrack_pool(struct actrack_kproc *p)
{
	/* acquire: pairs with actrack_capture_pool_ensure()'s release */
	return smp_load_acquire(&p->arena->capture);
}

/*
 * Is @s's copy complete?  Pairs with the smp_store_release() at the end
 * of actrack_capture_thread(): the registers and bytes are seen written.
 */
static bool actrack_slot_ready(struct actrack_capture_slot *s)
{
	/* acquire: pairs with smp_store_release() in actrack_capture_thread() */
	return smp_load_acquire(&s->ready);
}

/*
 * Would get_signal() kill the group of @signal for @sig, acted on with
 * @act?  It traces the signal before it decides; this is its decision.
 * Also asked as a signal is sent (killer.c), with the target's siglock.
 */
bool actrack_signal_is_fatal(struct signal_struct *signal, int sig,
			     const struct k_sigaction *act)
{
	/* exec() kills the other threads the same way: not a death. */
	if (actrack_group_exec_running(signal))
		return false;
	if (sig == SIGKILL)
		return true;
	if (!act || act->sa.sa_handler != SIG_DFL)
		return false;
	if (sig < 1 || sig > SIGRTMAX)
		return false;
	if (sig_kernel_ignore(sig) || sig_kernel_stop(sig))
		return false;
	if ((READ_ONCE(signal->flags) & SIGNAL_UNKILLABLE) &&
	    !sig_kernel_only(sig))
		return false;
	return true;
}

/* A free slot of @pool, or NULL.  Lock-free: one bit per slot. */
static struct actrack_capture_slot *
actrack_slot_claim(struct actrack_capture_pool *pool)
{
	u32 i;

	for (i = 0; i < pool->nr_slots; i++)
		if (!test_and_set_bit_lock(i, pool->busy))
			return actrack_slot(pool, i);
	return NULL;
}

static void actrack_slot_release(struct actrack_capture_pool *pool,
				 struct actrack_capture_slot *s)
{
	u32 i = ((u8 *)s - pool->slots) / pool->slot_bytes;

	WRITE_ONCE(s->ready, 0);
	WRITE_ONCE(s->owner, 0);
	clear_bit_unlock(i, pool->busy);
}

#ifdef CONFIG_X86_64
/* Does the dying thread run code whose stack we can capture? */
static bool actrack_user_regs_supported(void)
{
	return user_64bit_mode(task_pt_regs(current));
}

/* The user registers in DWARF order (see ACTRACK_K_REGS). */
static void actrack_user_regs(struct actrack_capture_slot *s)
{
	struct pt_regs *r = task_pt_regs(current);

	s->regs[0] = r->ax;
	s->regs[1] = r->dx;
	s->regs[2] = r->cx;
	s->regs[3] = r->bx;
	s->regs[4] = r->si;
	s->regs[5] = r->di;
	s->regs[6] = r->bp;
	s->regs[7] = r->sp;
	s->regs[8] = r->r8;
	s->regs[9] = r->r9;
	s->regs[10] = r->r10;
	s->regs[11] = r->r11;
	s->regs[12] = r->r12;
	s->regs[13] = r->r13;
	s->regs[14] = r->r14;
	s->regs[15] = r->r15;
	s->regs[16] = r->ip;
	s->sp = r->sp;
}
#else
static bool actrack_user_regs_supported(void)
{
	return false;
}

static void actrack_user_regs(struct actrack_capture_slot *s)
{
}
#endif

/*
 * The memory map read-locked, for a dying thread: siglock held, IRQs off,
 * so never a sleep.  A writer that holds it as the group is killed lets go
 * within microseconds: a core dump stopping the threads (before 5.16 it
 * did so with the map locked), a thread whose mmap() the kill interrupted
 * (an OOM kill charged inside mmap()).  Wait for that, a bounded time.
 */
#define ACTRACK_CAPTURE_SPIN_US	2000

static bool actrack_mmap_read_lock_dying(struct mm_struct *mm)
{
	unsigned int us;

	for (us = 0; us < ACTRACK_CAPTURE_SPIN_US; us++) {
		if (mmap_read_trylock(mm))
			return true;
		udelay(1);
	}
	return false;
}

/*
 * Copy the stack from the sp up, a page at a time, without faulting, and
 * only what a core dump would hold: stops at the end of the mapping that
 * holds the sp, at the first page that is not there, or at the cap.  The
 * memory map is held (read) across the copy, so the mapping checked is
 * the one read; the copy never faults, so it never needs the lock again.
 */
static void actrack_copy_stack(struct actrack_capture_slot *s)
{
	unsigned long addr = s->sp, room = actrack_stack_bytes;
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool capped = true;
	u32 len = 0;

	if (!actrack_mmap_read_lock_dying(mm)) {
		s->flags |= ACTRACK_STACK_UNREADABLE;
		return;
	}
	vma = find_vma(mm, addr);
	if (!vma || vma->vm_start > addr || !(vma->vm_flags & VM_READ)) {
		s->flags |= ACTRACK_STACK_UNREADABLE;
		goto out;
	}
	if (vma->vm_flags & (VM_DONTDUMP | VM_IO | VM_PFNMAP)) {
		s->flags |= ACTRACK_STACK_EXCLUDED;
		goto out;
	}
	if (vma->vm_end - addr <= room) {
		room = vma->vm_end - addr;
		capped = false;
	}
	while (room) {
		unsigned long chunk = min(room, PAGE_SIZE - (addr & ~PAGE_MASK));

		if (addr + chunk < addr ||
		    copy_from_user_nofault(s->stack + len,
					   (const void __user *)addr, chunk))
			break;
		len += chunk;
		addr += chunk;
		room -= chunk;
	}
	s->len = len;
	if (!len)
		s->flags |= ACTRACK_STACK_UNREADABLE;
	else if (!room && capped)
		s->flags |= ACTRACK_STACK_CAPPED;
out:
	mmap_read_unlock(mm);
}

/*
 * Was the group's exit a clean exit() / exit_group() (an exit code, no
 * signal)?  Its other threads take SIGKILL like a killed process's.
 * Siglock held (the signal_deliver tracepoint): the group exit's fields
 * are stable.
 */
static bool actrack_exit_is_clean(void)
{
	struct signal_struct *signal = current->signal;

	return (signal->flags & SIGNAL_GROUP_EXIT) &&
	       !(signal->group_exit_code & 0x7f);
}

/* The dying threads' user namespace, for the policy at report time. */
static void actrack_capture_user_ns(struct actrack_kproc *p)
{
	struct user_namespace *ns;

	if (READ_ONCE(p->stack_user_ns))
		return;
	/* An atomic increment: current's credentials hold another. */
	ns = get_user_ns(current_user_ns());
	if (cmpxchg(&p->stack_user_ns, NULL, ns))
		put_user_ns(ns);
}

/*
 * signal_deliver probe: RCU read side held, @p found ATTACHED.  Bounded:
 * at most stack_slots bit operations, ACTRACK_CAPTURE_SPIN_US waiting for
 * the memory map and stack_bytes copied.
 */
static void actrack_capture_thread(struct actrack_kproc *p)
{
	struct actrack_capture_pool *pool = actrack_pool(p);
	struct actrack_capture_slot *s;

	if (!pool)
		return;
	/*
	 * What ptrace and core dumps are refused, a report does not hand
	 * out: a process that made itself non-dumpable (ssh-agent, gpg) or
	 * changed credentials keeps its memory from its own uid too.
	 */
	if (!actrack_current_dumpable()) {
		WRITE_ONCE(p->captures_private, true);
		return;
	}
	if (!actrack_user_regs_supported()) {
		WRITE_ONCE(p->captures_unsupported, true);
		return;
	}
	actrack_capture_user_ns(p);
	if (atomic_inc_return(&p->captures) > actrack_stack_threads) {
		WRITE_ONCE(p->captures_cut, true);
		return;
	}
	s = actrack_slot_claim(pool);
	if (!s) {
		WRITE_ONCE(p->captures_cut, true);
		return;
	}
	s->owner = p->capture_id;
	s->key = p->key;
	s->when = jiffies;
	s->tid = task_pid_nr_ns(current, p->pid_ns);
	s->flags = 0;
	s->len = 0;
	actrack_user_regs(s);
	actrack_copy_stack(s);
	/* release: the copy before ready; pairs with actrack_slot_ready() */
	smp_store_release(&s->ready, 1);
}

void actrack_capture_probe(void *data, int sig, struct kernel_siginfo *info,
			   struct k_sigaction *act)
{
	struct actrack_kproc *p;

	if (likely(!actrack_procs_hashed()))
		return;
	/* io_uring's (and vhost's) workers have no user stack. */
	if (current->flags & (PF_IO_WORKER | ACTRACK_PF_USER_WORKER))
		return;
	if (!actrack_signal_is_fatal(current->signal, sig, act))
		return;
	rcu_read_lock();
	p = actrack_proc_find_attached(current->signal);
	if (p && (!actrack_exit_is_clean() ||
		  (READ_ONCE(p->stack_opts) & ACTRACK_STACKS_ON_EXIT)))
		actrack_capture_thread(p);
	rcu_read_unlock();
}

/*
 * Is the process that owns @s still attached (a slow core dump, which
 * reports only once the dump is written)?  Process context.
 */
static bool actrack_slot_owner_attached(struct actrack_capture_slot *s)
{
	struct actrack_kproc *q;
	bool attached;

	rcu_read_lock();
	q = actrack_proc_find_attached(READ_ONCE(s->key));
	attached = q && q->capture_id == READ_ONCE(s->owner);
	rcu_read_unlock();
	return attached;
}

/*
 * Move @p's captured stacks into a new allocation for its report, and give
 * their slots back (process context).  Also frees stale slots of anyone.
 * Return: NULL when there are none (or no memory: then ACTRACK_DEATH_
 * STACKS_CUT is set in *@flags).
 */
struct actrack_report_stacks *actrack_capture_take(struct actrack_kproc *p,
						  u32 *flags)
{
	struct actrack_capture_pool *pool = actrack_pool(p);
	struct actrack_report_stacks *ds = NULL;
	struct actrack_capture_slot *s;
	u32 i, n = 0, bytes = 0;
	size_t size;

	if (READ_ONCE(p->captures_cut))
		*flags |= ACTRACK_DEATH_STACKS_CUT;
	if (READ_ONCE(p->captures_private))
		*flags |= ACTRACK_DEATH_STACKS_PRIVATE;
	if (READ_ONCE(p->captures_unsupported))
		*flags |= ACTRACK_DEATH_STACKS_UNSUPPORTED;
	if (!pool)
		return NULL;
	for (i = 0; i < pool->nr_slots; i++) {
		s = actrack_slot(pool, i);
		if (!test_bit(i, pool->busy) || !actrack_slot_ready(s))
			continue;
		if (READ_ONCE(s->owner) == p->capture_id) {
			n++;
			bytes += s->len;
		} else if (time_after(jiffies,
				      s->when + ACTRACK_CAPTURE_STALE)) {
			if (actrack_slot_owner_attached(s))
				s->when = jiffies;	/* ask again later */
			else
				actrack_slot_release(pool, s);
		}
	}
	if (!n)
		return NULL;
	size = sizeof(*ds) + n * sizeof(ds->stacks[0]) + bytes;
	ds = kvmalloc(size, GFP_KERNEL);
	if (ds) {
		ds->bytes = size;
		ds->nr = 0;
		ds->data = (u8 *)&ds->stacks[n];
		ds->user_ns = p->stack_user_ns ?
			      get_user_ns(p->stack_user_ns) : NULL;
		raw_spin_lock(&actrack_procs_lock);
		ds->reader = get_pid(p->stack_reader);
		raw_spin_unlock(&actrack_procs_lock);
	} else {
		*flags |= ACTRACK_DEATH_STACKS_CUT;
	}
	bytes = 0;
	for (i = 0; i < pool->nr_slots; i++) {
		struct actrack_report_stack *out;

		s = actrack_slot(pool, i);
		if (!test_bit(i, pool->busy) || !actrack_slot_ready(s) ||
		    READ_ONCE(s->owner) != p->capture_id)
			continue;
		if (ds && ds->nr < n) {
			out = &ds->stacks[ds->nr++];
			out->tid = s->tid;
			out->flags = s->flags;
			out->sp = s->sp;
			memcpy(out->regs, s->regs, sizeof(out->regs));
			out->off = bytes;
			out->len = s->len;
			memcpy(ds->data + bytes, s->stack, s->len);
			bytes += s->len;
		}
		actrack_slot_release(pool, s);
	}
	return ds;
}

/*
 * @p is being freed: without a report (exec, unload), or after its report
 * took what it had.  Its slots are free again, its policy gone.
 * Allocates nothing.
 */
void actrack_capture_drop(struct actrack_kproc *p)
{
	struct actrack_capture_pool *pool = actrack_pool(p);
	struct actrack_capture_slot *s;
	u32 i;

	for (i = 0; pool && i < pool->nr_slots; i++) {
		s = actrack_slot(pool, i);
		if (test_bit(i, pool->busy) && actrack_slot_ready(s) &&
		    READ_ONCE(s->owner) == p->capture_id)
			actrack_slot_release(pool, s);
	}
	put_pid(p->stack_reader);
	p->stack_reader = NULL;
	if (p->stack_user_ns)
		put_user_ns(p->stack_user_ns);
	p->stack_user_ns = NULL;
}

/* A report's stacks go with the report (arenas.c). */
void actrack_capture_stacks_free(struct actrack_report_stacks *ds)
{
	if (!ds)
		return;
	put_pid(ds->reader);
	if (ds->user_ns)
		put_user_ns(ds->user_ns);
	kvfree(ds);
}

/*
 * ACTRACK_IOC_STACKS: the calling process's say over its stacks, as
 * PR_SET_PTRACER is over ptrace.  Context: process.
 */
int actrack_capture_policy(struct actrack_karena *ka,
			   const struct actrack_stacks *st)
{
	struct pid *reader = NULL, *old;
	struct actrack_kproc *p;

	if ((st->flags & ~ACTRACK_STACKS_ON_EXIT) || st->reserved)
		return -EINVAL;
	if (st->reader) {
		/* In the caller's pid namespace; a process, not a thread. */
		reader = find_get_pid(st->reader);
		if (!reader || !pid_has_task(reader, PIDTYPE_TGID)) {
			put_pid(reader);
			return -ESRCH;
		}
	}
	raw_spin_lock(&actrack_procs_lock);
	p = actrack_proc_find_attached(current->signal);
	if (!p || p->arena != ka) {
		raw_spin_unlock(&actrack_procs_lock);
		put_pid(reader);
		return -ENOENT;
	}
	old = p->stack_reader;
	p->stack_reader = reader;
	WRITE_ONCE(p->stack_opts, st->flags);
	raw_spin_unlock(&actrack_procs_lock);
	put_pid(old);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Who may have them                                                       */
/* ---------------------------------------------------------------------- */

#define ACTRACK_YAMA_SCOPE	"/proc/sys/kernel/yama/ptrace_scope"
/* Always there where /proc/sys is: tells "no Yama" from "no /proc". */
#define ACTRACK_SYSCTL_PROBE	"/proc/sys/kernel/pid_max"
/*
 * The scope assumed when it cannot be read: the common distribution
 * default, which still lets privileged and named readers have them.
 */
#define ACTRACK_YAMA_UNKNOWN	1

static int actrack_read_int(const char *path, int *val)
{
	char buf[16] = { 0 };
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n <= 0)
		return n ? n : -EIO;
	return kstrtoint(strim(buf), 10, val);
}

/*
 * Yama's ptrace_scope, read by path: the module cannot see its variable.
 * Context: a kernel thread, whose root is init's (a reader's own mount
 * namespace could put anything at that path).
 */
static int actrack_yama_scope_kthread(void)
{
	struct file *f;
	int scope, err;

	err = actrack_read_int(ACTRACK_YAMA_SCOPE, &scope);
	if (!err)
		return scope;
	if (err != -ENOENT)
		return ACTRACK_YAMA_UNKNOWN;
	f = filp_open(ACTRACK_SYSCTL_PROBE, O_RDONLY, 0);
	if (IS_ERR(f))
		return ACTRACK_YAMA_UNKNOWN;
	filp_close(f, NULL);
	return 0;			/* no Yama: classic ptrace rules */
}

struct actrack_yama_read {
	struct work_struct work;
	int scope;
};

static void actrack_yama_work(struct work_struct *work)
{
	struct actrack_yama_read *r =
		container_of(work, struct actrack_yama_read, work);

	r->scope = actrack_yama_scope_kthread();
}

/*
 * Yama's ptrace_scope now (0 without Yama).  Context: process, may sleep;
 * from a user's context it is read on a kworker.
 */
int actrack_yama_scope(void)
{
	struct actrack_yama_read r;

	if (current->flags & PF_KTHREAD)
		return actrack_yama_scope_kthread();
	INIT_WORK_ONSTACK(&r.work, actrack_yama_work);
	queue_work(system_unbound_wq, &r.work);
	flush_work(&r.work);
	destroy_work_on_stack(&r.work);
	return r.scope;
}

/*
 * Would @r hold CAP_SYS_PTRACE over @ns, by the rule of ns_capable(): the
 * capability in @ns or an ancestor of it, or being the owner of a
 * namespace created in the reader's own.
 */
static bool actrack_reader_ptrace(const struct actrack_stack_reader *r,
				  const struct user_namespace *ns)
{
	while (ns) {
		if (ns == r->user_ns)
			return r->ptrace;
		if (ns->level <= r->user_ns->level)
			return false;
		if (ns->parent == r->user_ns && uid_eq(ns->owner, r->euid))
			return true;
		ns = ns->parent;
	}
	return false;
}

/*
 * May @r have the stacks @ds, Yama's ptrace_scope being @scope?  The
 * report itself already reached only a reader that may see it (the same
 * uid, or privileged for all uids): this adds what ptrace adds on top.
 */
bool actrack_stacks_may_read(const struct actrack_report_stacks *ds,
			     int scope, const struct actrack_stack_reader *r)
{
	if (scope <= 0)
		return true;
	if (scope >= 3)
		return false;		/* Yama: no attaching at all */
	if (actrack_reader_ptrace(r, ds->user_ns))
		return true;
	return scope == 1 && ds->reader && ds->reader == r->tgid;
}
