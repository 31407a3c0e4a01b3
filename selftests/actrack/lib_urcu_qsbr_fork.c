// SPDX-License-Identifier: MIT
/*
 * lib_urcu_qsbr_fork: a urcu-qsbr client (threads announce quiescent
 * states) that uses libactrack and forks, the documented way and the naive
 * way, with reader threads and the call_rcu worker alive.  See urcu_fork.h.
 */
#include <urcu-qsbr.h>

#define FLAVOUR			"qsbr"
#define URCU_REGISTER()		urcu_qsbr_register_thread()
#define URCU_UNREGISTER()	urcu_qsbr_unregister_thread()
#define URCU_QS()		urcu_qsbr_quiescent_state()
#define URCU_QS_SLEEP()						\
	do {							\
		urcu_qsbr_thread_offline();			\
		usleep(1000);					\
		urcu_qsbr_thread_online();			\
	} while (0)
/*
 * QSBR: a registered thread that waits must be offline, or the call_rcu
 * worker's grace period waits for it while it waits for the worker to
 * pause (a deadlock of the client, not of the library; seen under load).
 */
#define URCU_BEFORE_FORK()					\
	do {							\
		urcu_qsbr_thread_offline();			\
		urcu_qsbr_call_rcu_before_fork();		\
	} while (0)
#define URCU_AFTER_FORK_PARENT()				\
	do {							\
		urcu_qsbr_call_rcu_after_fork_parent();		\
		urcu_qsbr_thread_online();			\
	} while (0)
#define URCU_AFTER_FORK_CHILD()					\
	do {							\
		urcu_qsbr_call_rcu_after_fork_child();		\
		urcu_qsbr_thread_online();			\
	} while (0)

#include "urcu_fork.h"
