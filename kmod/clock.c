// SPDX-License-Identifier: GPL-2.0
/*
 * The clock page: one page, mapped read-only by every process that wants
 * it, holding CLOCK_MONOTONIC (coarse) in nanoseconds at offset 0.  A push
 * then pays one load for its timestamp instead of a vDSO call.
 *
 * A timer refreshes the word every jiffy, but only while some process is
 * attached; an idle system with the module loaded takes no interrupts for
 * it.  The word is a naturally aligned __u64 written atomically, so a
 * 64-bit reader never sees it torn; its value only ever grows.
 */
#include <linux/vmalloc.h>
#include <linux/timer.h>
#include <linux/timekeeping.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include "internal.h"
#include "compat.h"

static u64 *actrack_clock_word;		/* start of a vmalloc_user page */
static struct timer_list actrack_clock_timer;
static atomic_t actrack_clock_users = ATOMIC_INIT(0);
static bool actrack_clock_stopping;

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

static void actrack_clock_tick(struct timer_list *t)
{
	actrack_clock_update();
	/*
	 * Re-arm while anyone is attached.  A process that attaches after
	 * this read saw zero arms the timer itself (0 -> 1 below), so the
	 * timer is never left stopped with users.
	 */
	if (atomic_read(&actrack_clock_users) > 0 &&
	    !READ_ONCE(actrack_clock_stopping))
		mod_timer(t, jiffies + 1);
}

void actrack_clock_attach(void)
{
	actrack_clock_update();
	if (atomic_inc_return(&actrack_clock_users) == 1 &&
	    !READ_ONCE(actrack_clock_stopping))
		mod_timer(&actrack_clock_timer, jiffies + 1);
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
	actrack_clock_word = vmalloc_user(PAGE_SIZE);
	if (!actrack_clock_word)
		return -ENOMEM;
	timer_setup(&actrack_clock_timer, actrack_clock_tick, 0);
	actrack_clock_update();
	return 0;
}

/* No mapping exists any more (each pins the module). */
void actrack_clock_exit(void)
{
	WRITE_ONCE(actrack_clock_stopping, true);
	actrack_timer_delete_sync(&actrack_clock_timer);
	vfree(actrack_clock_word);
	actrack_clock_word = NULL;
}
