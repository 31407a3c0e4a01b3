// SPDX-License-Identifier: GPL-2.0
/*
 * TEST FIXTURE, NOT PART OF ACTRACK: loading this module hangs the whole
 * machine, for good.  vm_persist's hard_hang case (selftests/actrack/
 * vm_persist.c) loads it in the test VM to die the way a real machine
 * does when its watchdog has to reset it: every CPU spinning with
 * interrupts off, no panic(), nothing flushed (one line is printed first,
 * for the log).  Only the emulated watchdog (QEMU's i6300esb, armed by the
 * test) ends it.
 *
 * stop_machine() makes every online CPU disable interrupts and wait for
 * the others; the one CPU that runs the function never returns, so the
 * others never see the state advance and spin on with interrupts off.
 *
 * Never installed, never in a package: scripts/vmtest builds it for the
 * VM only.  And it refuses to load unless told, by a parameter no one
 * types by accident, that hanging the machine is the point.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/stop_machine.h>
#include <linux/string.h>

#define ACTRACK_LOCKUP_CONFIRM	"hang-this-machine"

static char *confirm;
module_param(confirm, charp, 0);
MODULE_PARM_DESC(confirm, "must be \"" ACTRACK_LOCKUP_CONFIRM "\", else the load is refused");

/* Runs on one CPU with interrupts off, the others spinning: never ends. */
static int actrack_lockup_forever(void *unused)
{
	for (;;)
		cpu_relax();
	return 0;
}

static int __init actrack_lockup_init(void)
{
	if (!confirm || strcmp(confirm, ACTRACK_LOCKUP_CONFIRM)) {
		pr_err("refused: a test fixture that hangs the machine; load with confirm=%s only in a test VM\n",
		       ACTRACK_LOCKUP_CONFIRM);
		return -EPERM;
	}
	pr_emerg("hanging the machine on purpose (every CPU, interrupts off): only a watchdog resets it now\n");
	return stop_machine(actrack_lockup_forever, NULL, NULL);
}
module_init(actrack_lockup_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("actrack TEST FIXTURE: hangs the machine (stop_machine, every CPU spinning with interrupts off); for the test VM only, never load it elsewhere");
