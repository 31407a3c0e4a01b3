// SPDX-License-Identifier: MIT
/*
 * fork(): the one place that knows the library's fork protocol.  Each file
 * that keeps process state a child must not inherit declares its hook
 * with ACTRACK_FORK_HOOK: an entry in a table the linker gathers (section
 * actrack_fork_hooks), so nothing runs at start.  This file owns the
 * pthread_atfork() handlers, installed by the first __actrack_fork_arm(),
 * and runs the hooks in the table's order (link order).
 *
 * Armed late, not from constructors: an image a tracked shell or make
 * starts that never pushes (true, sed, cc's driver) never has state to
 * reset, and arming cost every such exec a pthread_once() (a futex wake)
 * and pthread_atfork() (two pages of the C library, one of them written).
 * So every path that would create such state arms first: an attach
 * (lib/attach.c, before its lock is ever taken), a launch record
 * (lib/lifecycle.c), and the preload's bookkeeping before it first raises
 * its guard (lib/preload/preload.c).  A child forked before that has
 * nothing to reset but what a refused first attach leaves (a push from
 * what may be a signal handler arms nothing): that thread's retry window
 * (lib/tracker.c), which the child then waits out as its parent would
 * (a second, looked at every 64th push).  The handlers, once installed,
 * stay for the life of the process and its forked children (they are the
 * C library's state).
 *
 * The rules every hook follows: the library runs no handler of anyone
 * else's (no urcu_*_before_fork(): the host may follow liburcu's fork
 * protocol itself, and a second call deadlocks), and never blocks in
 * fork(), which may be called from a signal handler that interrupted one
 * of our lock holders.  So a prepare hook may only try a lock, and a child
 * hook only forgets and re-initialises.
 */
#include <pthread.h>
#include "internal.h"

/* The table: weak, so that a link without any hook still links. */
extern const struct actrack_fork_hook *const __start_actrack_fork_hooks[]
	__attribute__((weak, visibility("hidden")));
extern const struct actrack_fork_hook *const __stop_actrack_fork_hooks[]
	__attribute__((weak, visibility("hidden")));

int __actrack_fork_armed;

/* Newest first: the reverse of the parent's and child's order. */
static __actrack_fork_path void atfork_prepare(void)
{
	size_t n = (size_t)(__stop_actrack_fork_hooks -
			    __start_actrack_fork_hooks);

	while (n--)
		if (__start_actrack_fork_hooks[n]->prepare)
			__start_actrack_fork_hooks[n]->prepare();
}

static __actrack_fork_path void atfork_parent(void)
{
	size_t n = (size_t)(__stop_actrack_fork_hooks -
			    __start_actrack_fork_hooks);

	for (size_t i = 0; i < n; i++)
		if (__start_actrack_fork_hooks[i]->parent)
			__start_actrack_fork_hooks[i]->parent();
}

static __actrack_fork_path void atfork_child(void)
{
	size_t n = (size_t)(__stop_actrack_fork_hooks -
			    __start_actrack_fork_hooks);

	for (size_t i = 0; i < n; i++)
		if (__start_actrack_fork_hooks[i]->child)
			__start_actrack_fork_hooks[i]->child();
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void arm(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	__atomic_store_n(&__actrack_fork_armed, 1, __ATOMIC_RELEASE);
}

void __actrack_fork_arm_slow(void)
{
	pthread_once(&once, arm);
}
