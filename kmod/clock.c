// SPDX-License-Identifier: GPL-2.0
/*
 * The clock page: one page, mapped read-only by every process that wants
 * it, holding CLOCK_MONOTONIC (coarse) in nanoseconds at offset 0.  A push
 * then pays one load for its timestamp instead of a vDSO call.
 *
 * The word only needs to be fresh where a process can read it: on a CPU
 * that runs something.  So, while some process is attached:
 * - each CPU has a deferrable timer that refreshes the word every jiffy
 *   while that CPU is awake anyway (a busy CPU's tick runs it), and never
 *   wakes an idle CPU;
 * - a CPU that leaves idle to run a task refreshes it before the task runs
 *   (the cpu_idle tracepoint), since the timers did not while all CPUs
 *   slept.
 * An idle machine with tracked idle processes thus takes no interrupt for
 * it, and a reader still finds the word at most about a jiffy behind
 * CLOCK_MONOTONIC.  A CPU brought online after the first ATTACH gets no
 * timer of its own until the number of attached processes drops to zero
 * and rises again; it is refreshed by its idle exits and the other CPUs'
 * timers meanwhile.  The word is a naturally aligned __u64 written
 * atomically, so a 64-bit reader never sees it torn; its value only ever
 * grows.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/vmalloc.h>
#include <linux/mutex.h>
#include <linux/timer.h>
#include <linux/timekeeping.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/sched.h>
#include <linux/tracepoint.h>
#include <trace/events/power.h>
#include "internal.h"
#include "compat.h"

static u64 *actrack_clock_word;		/* start of a vmalloc_user page */
static DEFINE_PER_CPU(struct timer_list, actrack_clock_timer);
static atomic_t actrack_clock_users = ATOMIC_INIT(0);
static bool actrack_clock_stopping;
static bool actrack_clock_idle_probe;
/* Serializes arming the timers (0 -> 1 users) with itself. */
static DEFINE_MUTEX(actrack_clock_arm_lock);

/*
 * Called from the timer and from process context (attach, mmap), possibly
 * at once on two CPUs: a writer that read the time and was then preempted
 * must not store its older value over a newer one, so only move forward.
 * Only the kernel writes the word (the page is mapped read-only), so every
 * failed exchange means another writer stored a value and the loop ends as
 * soon as the word is at least @now.
 */
static void actrack_clock_update(void)
{
	u64 now = ktime_get_coarse_ns();
	u64 old = READ_ONCE(*actrack_clock_word);
	u64 seen;

	while (old < now) {
		seen = cmpxchg64(actrack_clock_word, old, now);
		if (seen == old)
			break;
		old = seen;
	}
}

static bool actrack_clock_running(void)
{
	return atomic_read(&actrack_clock_users) > 0 &&
	       !READ_ONCE(actrack_clock_stopping);
}

/* Deferrable and pinned: it runs on its own CPU's tick, if that ticks. */
static void actrack_clock_tick(struct timer_list *t)
{
	actrack_clock_update();
	/*
	 * Re-arm while anyone is attached.  A process that attaches after
	 * this read saw zero arms the timers itself (0 -> 1 below), so no
	 * timer is left stopped with users.
	 */
	if (actrack_clock_running())
		mod_timer(t, jiffies + 1);
}

/*
 * A CPU leaves idle (state PWR_EVENT_EXIT): about to run a task if it
 * must reschedule.  Called on every idle exit of every CPU: O(1).
 */
static void actrack_clock_idle_exit(void *data, unsigned int state,
				    unsigned int cpu)
{
	if (state == (unsigned int)PWR_EVENT_EXIT &&
	    atomic_read(&actrack_clock_users) > 0 && need_resched())
		actrack_clock_update();
}

void actrack_clock_attach(void)
{
	int cpu;

	actrack_clock_update();
	if (atomic_inc_return(&actrack_clock_users) != 1 ||
	    READ_ONCE(actrack_clock_stopping))
		return;
	mutex_lock(&actrack_clock_arm_lock);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct timer_list *t = per_cpu_ptr(&actrack_clock_timer, cpu);

		/* One that still runs (or re-arms) from before the last
		 * detach is stopped first: add_timer_on() wants it idle.
		 */
		actrack_timer_delete_sync(t);
		t->expires = jiffies + 1;
		add_timer_on(t, cpu);
	}
	cpus_read_unlock();
	mutex_unlock(&actrack_clock_arm_lock);
}

/* Any context (the exit probe calls it); the timer stops on its own. */
void actrack_clock_detach(void)
{
	atomic_dec(&actrack_clock_users);
}

long actrack_attached_count(void)
{
	return atomic_read(&actrack_clock_users);
}

/* Caller checked: shared, one page, not writable, VM_MAYWRITE cleared. */
int actrack_clock_mmap(struct vm_area_struct *vma)
{
	/* A reader that maps before attaching still sees a recent value. */
	actrack_clock_update();
	return remap_vmalloc_range(vma, actrack_clock_word, 0);
}

int actrack_clock_init(void)
{
	int cpu;

	actrack_clock_word = vmalloc_user(PAGE_SIZE);
	if (!actrack_clock_word)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct timer_list *t = per_cpu_ptr(&actrack_clock_timer, cpu);

		timer_setup(t, actrack_clock_tick,
			    TIMER_DEFERRABLE | TIMER_PINNED);
	}
	actrack_clock_update();
	/* Without it the word may be a sleep behind after an idle period. */
	if (!register_trace_cpu_idle(actrack_clock_idle_exit, NULL))
		actrack_clock_idle_probe = true;
	else
		pr_warn("cpu_idle tracepoint not available: the clock word may lag after idle periods\n");
	return 0;
}

/* No mapping exists any more (each pins the module). */
void actrack_clock_exit(void)
{
	int cpu;

	if (actrack_clock_idle_probe)
		unregister_trace_cpu_idle(actrack_clock_idle_exit, NULL);
	actrack_clock_idle_probe = false;
	tracepoint_synchronize_unregister();
	WRITE_ONCE(actrack_clock_stopping, true);
	for_each_possible_cpu(cpu)
		actrack_timer_delete_sync(per_cpu_ptr(&actrack_clock_timer,
						      cpu));
	vfree(actrack_clock_word);
	actrack_clock_word = NULL;
}
