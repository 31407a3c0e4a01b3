// SPDX-License-Identifier: GPL-2.0
/*
 * actrack.ko: always-on activity tracking for crash and hang forensics.
 *
 * Module parameters and the order in which the parts come up and go down.
 * Everything a later part uses is up before it: the device (the only way
 * in for userspace) comes last, so no process can attach before the exit
 * hook that must see its death is in place.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include "internal.h"
#include "test_fault.h"

unsigned int actrack_arena_size = ACTRACK_DEFAULT_ARENA_SIZE;
module_param_named(arena_size, actrack_arena_size, uint, 0444);
MODULE_PARM_DESC(arena_size, "bytes per arena (65536..268435456, rounded up to pages)");

unsigned int actrack_max_arenas = ACTRACK_DEFAULT_MAX_ARENAS;
module_param_named(max_arenas, actrack_max_arenas, uint, 0444);
MODULE_PARM_DESC(max_arenas, "most arenas (uids) at a time, host root's not counted (1..4096)");

unsigned int actrack_max_arenas_per_user = ACTRACK_DEFAULT_MAX_ARENAS_PER_USER;
module_param_named(max_arenas_per_user, actrack_max_arenas_per_user, uint, 0444);
MODULE_PARM_DESC(max_arenas_per_user, "most arenas charged to one budget: a host uid with the user namespaces it created, or a user namespace host root created with all below it (1..max_arenas)");

unsigned int actrack_deaths_kept = ACTRACK_DEFAULT_DEATHS_KEPT;
module_param_named(deaths_kept, actrack_deaths_kept, uint, 0444);
MODULE_PARM_DESC(deaths_kept, "death reports kept per arena for GET_DEATHS (1..4096)");

unsigned int actrack_stack_bytes = ACTRACK_DEFAULT_STACK_BYTES;
module_param_named(stack_bytes, actrack_stack_bytes, uint, 0444);
MODULE_PARM_DESC(stack_bytes, "bytes of user stack copied from each dying thread's stack pointer up, for its backtrace in the death report (0 disables; at most 32768)");

unsigned int actrack_stack_slots = ACTRACK_DEFAULT_STACK_SLOTS;
module_param_named(stack_slots, actrack_stack_slots, uint, 0444);
MODULE_PARM_DESC(stack_slots, "dying threads' stacks one uid can hold until their reports are built (stack_slots * stack_bytes of memory per uid that attached; at most 64)");

unsigned int actrack_stack_threads = ACTRACK_DEFAULT_STACK_THREADS;
module_param_named(stack_threads, actrack_stack_threads, uint, 0444);
MODULE_PARM_DESC(stack_threads, "threads whose stacks one death report carries, the first to die (at most stack_slots)");

static int __init actrack_check_params(void)
{
	if (actrack_arena_size < ACTRACK_ARENA_MIN_SIZE ||
	    actrack_arena_size > ACTRACK_ARENA_MAX_SIZE) {
		pr_err("arena_size %u outside %u..%u\n", actrack_arena_size,
		       ACTRACK_ARENA_MIN_SIZE, ACTRACK_ARENA_MAX_SIZE);
		return -EINVAL;
	}
	/* MAX_SIZE is a multiple of any page size, so this stays in range;
	 * pages are also multiples of ACTRACK_BLOCK_ALIGN.
	 */
	actrack_arena_size = PAGE_ALIGN(actrack_arena_size);
	if (actrack_max_arenas < 1 ||
	    actrack_max_arenas > ACTRACK_MAX_ARENAS_LIMIT) {
		pr_err("max_arenas %u outside 1..%u\n", actrack_max_arenas,
		       ACTRACK_MAX_ARENAS_LIMIT);
		return -EINVAL;
	}
	if (actrack_max_arenas_per_user < 1 ||
	    actrack_max_arenas_per_user > actrack_max_arenas) {
		pr_err("max_arenas_per_user %u outside 1..%u\n",
		       actrack_max_arenas_per_user, actrack_max_arenas);
		return -EINVAL;
	}
	if (actrack_stack_bytes > ACTRACK_STACK_BYTES_LIMIT ||
	    actrack_stack_slots > ACTRACK_STACK_SLOTS_LIMIT ||
	    actrack_stack_threads > actrack_stack_slots) {
		pr_err("stack_bytes %u, stack_slots %u, stack_threads %u: at most %u, %u and stack_slots\n",
		       actrack_stack_bytes, actrack_stack_slots,
		       actrack_stack_threads, ACTRACK_STACK_BYTES_LIMIT,
		       ACTRACK_STACK_SLOTS_LIMIT);
		return -EINVAL;
	}
	if (actrack_deaths_kept < 1 ||
	    actrack_deaths_kept > ACTRACK_DEATHS_KEPT_LIMIT) {
		pr_err("deaths_kept %u outside 1..%u\n", actrack_deaths_kept,
		       ACTRACK_DEATHS_KEPT_LIMIT);
		return -EINVAL;
	}
	return 0;
}

static int __init actrack_init(void)
{
	int ret;

	ret = actrack_check_params();
	if (ret)
		return ret;
	ret = actrack_clock_init();
	if (ret)
		goto err_clock;
	ret = actrack_arenas_init();
	if (ret)
		goto err_arenas;
	ret = actrack_netlink_init();
	if (ret)
		goto err_netlink;
	ret = actrack_cleanup_init();
	if (ret)
		goto err_cleanup;
	ret = actrack_exit_hook_init();
	if (ret)
		goto err_exit_hook;
	ret = actrack_device_init();
	if (ret)
		goto err_device;
#ifdef ACTRACK_TEST_FAULT_BUILD
	pr_warn("built with a deliberate fault (ACTRACK_FAULT): test only\n");
#endif
	pr_info("ABI %u.%u, arena %u bytes, up to %u arenas\n",
		ACTRACK_ABI_MAJOR, ACTRACK_ABI_MINOR, actrack_arena_size,
		actrack_max_arenas);
	return 0;

err_device:
	actrack_exit_hook_exit();
err_exit_hook:
	actrack_cleanup_exit();
err_cleanup:
	actrack_netlink_exit();
err_netlink:
	actrack_arenas_exit();
err_arenas:
	actrack_clock_exit();
err_clock:
	return ret;
}

/*
 * No fd and no mapping of /dev/actrack exists here (each pins the module),
 * but processes may still be attached: the exit hook goes first and drops
 * them, the cleanup queue drains (it may still send reports, so netlink
 * outlives it), and the arenas go last.
 */
static void __exit actrack_exit(void)
{
	actrack_device_exit();
	actrack_exit_hook_exit();
	actrack_cleanup_exit();
	actrack_netlink_exit();
	actrack_arenas_exit();
	actrack_clock_exit();
}

module_init(actrack_init);
module_exit(actrack_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("actrack authors");
MODULE_VERSION("0.2.0");
MODULE_DESCRIPTION("actrack: activity tracking arenas, death reports and cleanup");
