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
 * Identity: a slot names its process by the proc's capture id, unique for
 * the module's lifetime, never by a pointer that could be reused.  A slot
 * whose process never collects it (a fatal signal that raced with exec or
 * module unload) is given back after ACTRACK_CAPTURE_STALE.
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
#include <linux/bitmap.h>
#include <asm/ptrace.h>
#include "internal.h"
#include "compat.h"

/* A slot nobody collected within this long is free again. */
#define ACTRACK_CAPTURE_STALE	(60 * HZ)

struct actrack_capture_slot {
	u64 owner;			/* capture id of the process */
	unsigned long when;		/* jiffies at the capture */
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
void actrack_capture_pool_get(struct actrack_karena *ka)
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
	/* acquire: pairs with cmpxchg_release() in actrack_capture_pool_get() */
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
 * Would get_signal() kill the group for @sig?  It traces the signal
 * before it decides; this is its decision, for a signal it acts on.
 */
static bool actrack_signal_is_fatal(int sig, const struct k_sigaction *ka)
{
	struct signal_struct *signal = current->signal;

	/* exec() kills the other threads the same way: not a death. */
	if (actrack_group_exec_running(signal))
		return false;
	if (sig == SIGKILL)
		return true;
	if (!ka || ka->sa.sa_handler != SIG_DFL)
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
/* The user registers in DWARF order (see ACTRACK_K_REGS). */
static bool actrack_user_regs(struct actrack_capture_slot *s)
{
	struct pt_regs *r = task_pt_regs(current);

	if (!user_64bit_mode(r))
		return false;
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
	return true;
}
#else
static bool actrack_user_regs(struct actrack_capture_slot *s)
{
	return false;
}
#endif

/*
 * Copy the stack from the sp up, a page at a time, without faulting:
 * stops at the first page that is not there (the top of the stack) or
 * at the cap.
 */
static void actrack_copy_stack(struct actrack_capture_slot *s)
{
	unsigned long addr = s->sp, room = actrack_stack_bytes;
	u32 len = 0;

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
	else if (!room)
		s->flags |= ACTRACK_STACK_CAPPED;
}

/*
 * signal_deliver probe: RCU read side held, @p found ATTACHED.  Bounded:
 * at most stack_slots bit operations and stack_bytes copied.
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
	s->when = jiffies;
	s->tid = task_pid_nr_ns(current, p->pid_ns);
	s->flags = 0;
	s->len = 0;
	if (!actrack_user_regs(s)) {
		actrack_slot_release(pool, s);
		return;
	}
	actrack_copy_stack(s);
	/* release: the copy before ready; pairs with actrack_slot_ready() */
	smp_store_release(&s->ready, 1);
}

void actrack_capture_probe(void *data, int sig, struct kernel_siginfo *info,
			   struct k_sigaction *ka)
{
	struct actrack_kproc *p;

	if (likely(!actrack_procs_attached()))
		return;
	if (!actrack_signal_is_fatal(sig, ka))
		return;
	rcu_read_lock();
	p = actrack_proc_find_attached(current->signal);
	if (p)
		actrack_capture_thread(p);
	rcu_read_unlock();
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
 * @p ends without a report (exec, unload), or after its report took what
 * it had: its slots are free again.  Allocates nothing.
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
}
