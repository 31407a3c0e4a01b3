/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deliberate bugs, compiled in only by a test build:
 *
 *	make module ACTRACK_FAULT=sleep_in_probe
 *	ACTRACK_FAULT=double_free scripts/vmtest --kernel debug
 *	ACTRACK_FAULT='ubsan_shift rcu_unlocked leak lock_inversion' ...
 *
 * (Kbuild turns each name in ACTRACK_FAULT into -DACTRACK_TEST_FAULT_NAME.)
 * They exist to show that the debug kernel (scripts/debug-kernel) catches
 * each class of bug the module could have; in a normal build every hook is
 * an empty inline function, so the hooks cost nothing and change no
 * behaviour.
 */
#ifndef ACTRACK_KMOD_TEST_FAULT_H
#define ACTRACK_KMOD_TEST_FAULT_H

#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

/*
 * Called in the sched_process_exit probe for an attached group, where
 * preemption is disabled and the RCU read lock held: a function that may
 * sleep there is what DEBUG_ATOMIC_SLEEP reports as "sleeping function
 * called from invalid context".
 */
static inline void actrack_test_fault_in_probe(void)
{
#ifdef ACTRACK_TEST_FAULT_SLEEP_IN_PROBE
	might_sleep();
#endif
}

/*
 * Called right after the last kfree() of an object, in process context
 * (the device's release), with no lock held:
 *  - double_free frees it again, which KASAN reports as "double-free";
 *  - rcu_unlocked reads an RCU pointer outside any read-side section,
 *    which PROVE_RCU reports as "suspicious rcu_dereference_check()
 *    usage" (first, because a lockdep report turns these checks off);
 *  - ubsan_shift shifts by the width of the type, which UBSAN reports
 *    as "shift-out-of-bounds" (READ_ONCE() hides the count from the
 *    compiler);
 *  - leak allocates and drops the pointer, which kmemleak reports as an
 *    "unreferenced object" once the module is gone;
 *  - lock_inversion takes two locks in one order and then in the other,
 *    which lockdep reports as a "possible circular locking dependency"
 *    (an outer lock keeps two closers from really deadlocking; lockdep
 *    reports the cycle all the same).
 */
static inline void actrack_test_fault_freed(const void *ptr)
{
#ifdef ACTRACK_TEST_FAULT_DOUBLE_FREE
	kfree(ptr);
#endif
#ifdef ACTRACK_TEST_FAULT_RCU_UNLOCKED
	{
		static int __rcu *actrack_test_fault_rcu_ptr;

		(void)rcu_dereference(actrack_test_fault_rcu_ptr);
	}
#endif
#ifdef ACTRACK_TEST_FAULT_UBSAN_SHIFT
	{
		unsigned int count = 32, v;

		v = 1U << READ_ONCE(count);
		WRITE_ONCE(count, v);
	}
#endif
#ifdef ACTRACK_TEST_FAULT_LEAK
	(void)kmalloc(64, GFP_KERNEL);
#endif
#ifdef ACTRACK_TEST_FAULT_LOCK_INVERSION
	{
		static DEFINE_MUTEX(outer);
		static DEFINE_MUTEX(a);
		static DEFINE_MUTEX(b);

		mutex_lock(&outer);
		mutex_lock(&a);
		mutex_lock(&b);
		mutex_unlock(&b);
		mutex_unlock(&a);
		mutex_lock(&b);
		mutex_lock(&a);
		mutex_unlock(&a);
		mutex_unlock(&b);
		mutex_unlock(&outer);
	}
#endif
}

#if defined(ACTRACK_TEST_FAULT_SLEEP_IN_PROBE) || \
	defined(ACTRACK_TEST_FAULT_DOUBLE_FREE) || \
	defined(ACTRACK_TEST_FAULT_UBSAN_SHIFT) || \
	defined(ACTRACK_TEST_FAULT_RCU_UNLOCKED) || \
	defined(ACTRACK_TEST_FAULT_LEAK) || \
	defined(ACTRACK_TEST_FAULT_LOCK_INVERSION)
#define ACTRACK_TEST_FAULT_BUILD	1
#endif

#endif /* ACTRACK_KMOD_TEST_FAULT_H */
