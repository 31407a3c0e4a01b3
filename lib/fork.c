// SPDX-License-Identifier: MIT
/*
 * fork(): the one place that knows the library's fork protocol.  Each file
 * that keeps process state a child must not inherit registers a hook here
 * (from a constructor, so a hook exists before any state it resets); this
 * file owns the pthread_atfork() handlers and runs the hooks in the order
 * they were registered.
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

static struct actrack_fork_hook *hooks;	/* newest first */

/* Oldest first; pthread_atfork() order for parent and child handlers. */
static void run_in_order(struct actrack_fork_hook *h, bool child)
{
	void (*fn)(void);

	if (!h)
		return;
	run_in_order(h->next, child);
	fn = child ? h->child : h->parent;
	if (fn)
		fn();
}

/* Newest first: the reverse of the parent's and child's order. */
static void atfork_prepare(void)
{
	for (struct actrack_fork_hook *h =
	     __atomic_load_n(&hooks, __ATOMIC_ACQUIRE); h; h = h->next)
		if (h->prepare)
			h->prepare();
}

static void atfork_parent(void)
{
	run_in_order(__atomic_load_n(&hooks, __ATOMIC_ACQUIRE), false);
}

static void atfork_child(void)
{
	run_in_order(__atomic_load_n(&hooks, __ATOMIC_ACQUIRE), true);
}

static pthread_once_t armed = PTHREAD_ONCE_INIT;

static void arm(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

void __actrack_fork_register(struct actrack_fork_hook *h)
{
	struct actrack_fork_hook *head = __atomic_load_n(&hooks,
							 __ATOMIC_RELAXED);

	do
		h->next = head;
	while (!__atomic_compare_exchange_n(&hooks, &head, h, true,
					    __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
	pthread_once(&armed, arm);
}
