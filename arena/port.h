/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The few primitives the arena core needs, mapped onto the kernel's own
 * (READ_ONCE, smp_load_acquire, cmpxchg) in actrack.ko and onto the
 * compiler's __atomic builtins in userspace.  Nothing else in arena/ may
 * depend on which side it is compiled for.
 */
#ifndef ACTRACK_ARENA_PORT_H
#define ACTRACK_ARENA_PORT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <asm/barrier.h>
#include <linux/atomic.h>	/* cmpxchg(), atomic_fetch_add() */
#include <linux/sched.h>	/* cond_resched() */

#define at_load(p)		READ_ONCE(*(p))
#define at_load_acquire(p)	smp_load_acquire(p)	/* pairing: at each use */
#define at_store(p, v)		WRITE_ONCE(*(p), (v))
#define at_store_release(p, v)	smp_store_release((p), (v)) /* pairing: at each use */
/* returns the value found; the exchange happened iff it equals @old */
#define at_cas(p, old, new)	cmpxchg((p), (old), (new))
#define at_fetch_add(p, v)	(atomic_fetch_add((v), (atomic_t *)(p)))
#define at_fence_acquire()	smp_rmb()	/* pairing: at each use */
#define at_fence_release()	smp_wmb()	/* pairing: at each use */
#define at_static_assert(c, m)	static_assert(c, m)
/* Long walks let others run (every kernel caller may sleep). */
#define at_yield()		cond_resched()
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <linux/types.h>

#define at_load(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define at_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define at_store(p, v)		__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define at_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define at_cas(p, old, new)						\
	({								\
		__typeof__(*(p)) __old = (old);				\
		__atomic_compare_exchange_n((p), &__old, (new), false,	\
					    __ATOMIC_ACQ_REL,		\
					    __ATOMIC_ACQUIRE);		\
		__old;							\
	})
#define at_fetch_add(p, v)	__atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define at_fence_acquire()	__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define at_fence_release()	__atomic_thread_fence(__ATOMIC_RELEASE)
#define at_static_assert(c, m)	_Static_assert(c, m)
#define at_yield()		do { } while (0)
#endif

#endif /* ACTRACK_ARENA_PORT_H */
