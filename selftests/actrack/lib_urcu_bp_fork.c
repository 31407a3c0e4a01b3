// SPDX-License-Identifier: MIT
/*
 * lib_urcu_bp_fork: a urcu-bp client ("bulletproof": readers register
 * themselves, and fork is handled by urcu_bp_before_fork() and friends)
 * that uses libactrack and forks, the documented way and the naive way,
 * with reader threads and the call_rcu worker alive.  See urcu_fork.h.
 */
#include <urcu-bp.h>

#define FLAVOUR			"bp"
#define URCU_REGISTER()		do { } while (0)
#define URCU_UNREGISTER()	do { } while (0)
#define URCU_QS()		do { } while (0)
#define URCU_QS_SLEEP()		usleep(1000)
#define URCU_BEFORE_FORK()					\
	do {							\
		urcu_bp_call_rcu_before_fork();			\
		urcu_bp_before_fork();				\
	} while (0)
#define URCU_AFTER_FORK_PARENT()				\
	do {							\
		urcu_bp_after_fork_parent();			\
		urcu_bp_call_rcu_after_fork_parent();		\
	} while (0)
#define URCU_AFTER_FORK_CHILD()					\
	do {							\
		urcu_bp_after_fork_child();			\
		urcu_bp_call_rcu_after_fork_child();		\
	} while (0)

#include "urcu_fork.h"
