// SPDX-License-Identifier: GPL-2.0
/*
 * The clock page, retired (ABI 1.8).  Up to ABI 1.7 the module kept
 * CLOCK_MONOTONIC (coarse) in a word of this page, refreshed by a timer
 * every jiffy while anything was attached, so that a push paid one load
 * for its timestamp.  That timer woke an idle machine 250 times a second
 * for a tracked idle server; a deferrable one leaves the word stale by a
 * whole idle period right after a wake-up (a hang aged by it), and a
 * refresh on leaving idle needs a probe on every context switch.
 *
 * The kernel already keeps that clock fresh on every wake-up, for free:
 * the vDSO's CLOCK_MONOTONIC_COARSE, updated by timekeeping before a task
 * that leaves idle runs.  So the library reads the vDSO (a few ns more
 * per push), and the layout says that no word exists
 * (ACTRACK_CLOCK_WORD_NONE): every library since 1.0 checks that the word
 * lies inside the page and uses the vDSO otherwise.  The page itself is
 * still mapped (read-only, zero), so that those libraries, which map it
 * before they look at the word, keep attaching.
 */
#include <linux/vmalloc.h>
#include <linux/mm.h>
#include "internal.h"

static void *actrack_clock_page;	/* a zeroed vmalloc_user page */

/* Caller checked: shared, one page, not writable, VM_MAYWRITE cleared. */
int actrack_clock_mmap(struct vm_area_struct *vma)
{
	return remap_vmalloc_range(vma, actrack_clock_page, 0);
}

int actrack_clock_init(void)
{
	actrack_clock_page = vmalloc_user(PAGE_SIZE);
	return actrack_clock_page ? 0 : -ENOMEM;
}

/* No mapping exists any more (each pins the module). */
void actrack_clock_exit(void)
{
	vfree(actrack_clock_page);
	actrack_clock_page = NULL;
}
