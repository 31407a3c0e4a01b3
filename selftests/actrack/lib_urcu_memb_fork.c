// SPDX-License-Identifier: MIT
/*
 * lib_urcu_memb_fork: a urcu-memb client (liburcu's default flavour) that
 * uses libactrack and forks, the documented way and the naive way, with
 * reader threads and the call_rcu worker alive.  See urcu_fork.h.
 */
#include <urcu.h>		/* the memb flavour, rcu_* names */

#define FLAVOUR			"memb"
#define URCU_REGISTER()		urcu_memb_register_thread()
#define URCU_UNREGISTER()	urcu_memb_unregister_thread()
#define URCU_QS()		do { } while (0)
#define URCU_QS_SLEEP()		usleep(1000)
#define URCU_BEFORE_FORK()	urcu_memb_call_rcu_before_fork()
#define URCU_AFTER_FORK_PARENT() urcu_memb_call_rcu_after_fork_parent()
#define URCU_AFTER_FORK_CHILD()	urcu_memb_call_rcu_after_fork_child()

#include "urcu_fork.h"
