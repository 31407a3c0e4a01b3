/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deliberate bugs, compiled in only by a test build:
 *
 *	make module ACTRACK_FAULT=sleep_in_probe
 *	ACTRACK_FAULT=double_free scripts/vmtest --kernel debug
 *
 * (Kbuild turns ACTRACK_FAULT=name into -DACTRACK_TEST_FAULT_NAME.)  They
 * exist to show that the debug kernel (scripts/debug-kernel) catches each
 * class of bug the module could have; a normal build defines every hook as
 * nothing, so the hooks cost nothing and change no behaviour.
 */
#ifndef ACTRACK_KMOD_TEST_FAULT_H
#define ACTRACK_KMOD_TEST_FAULT_H

#include <linux/kernel.h>
#include <linux/slab.h>

/*
 * Called in the sched_process_exit probe for an attached group, where
 * preemption is disabled and the RCU read lock held: a function that may
 * sleep there is what DEBUG_ATOMIC_SLEEP reports as "sleeping function
 * called from invalid context".
 */
#ifdef ACTRACK_TEST_FAULT_SLEEP_IN_PROBE
#define actrack_test_fault_in_probe()	might_sleep()
#else
#define actrack_test_fault_in_probe()	do { } while (0)
#endif

/*
 * Called right after the last kfree() of an object: frees it again, which
 * KASAN reports as "double-free".
 */
#ifdef ACTRACK_TEST_FAULT_DOUBLE_FREE
#define actrack_test_fault_freed(ptr)	kfree(ptr)
#else
#define actrack_test_fault_freed(ptr)	do { } while (0)
#endif

#if defined(ACTRACK_TEST_FAULT_SLEEP_IN_PROBE) || \
	defined(ACTRACK_TEST_FAULT_DOUBLE_FREE)
#define ACTRACK_TEST_FAULT_BUILD	1
#endif

#endif /* ACTRACK_KMOD_TEST_FAULT_H */
