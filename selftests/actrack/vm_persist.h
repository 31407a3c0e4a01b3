/* SPDX-License-Identifier: MIT */
/*
 * What the parts of vm_persist share: the layout of its runs (the victim,
 * the region scripts/vmtest --persist makes, the test modules it packs)
 * and its helpers.  vm_persist.c is the test, one binary: its cases in
 * their order, which is the story of the boots.  The rest by concept:
 *
 *   helpers/vm_persist.c         the region, the module reloaded with it,
 *                                the ioctls, the watchdog (no harness)
 *   helpers/vm_persist_victim.c  the victim that dies: its threads, their
 *                                deadlock, its reader; found in an image
 *   vm_persist_death.h           a boot's death: the victim started and
 *                                checked live, then the panic or the hang
 *   vm_persist_image.h           the checks of the previous boot's image
 *   vm_persist_uids.h            the ioctls on it: its uids, who may select
 *   vm_persist_monitor.h         the monitor's journal entry about it
 *   vm_persist_corrupt.h         the image scribbled on through /dev/mem
 *
 * The vm_persist_*.h parts use the harness (ASSERT, EXPECT), which belongs
 * to one object (test_harness.h): they are static code that vm_persist.c
 * includes, and nothing else may.
 */
#ifndef ACTRACK_VM_PERSIST_H
#define ACTRACK_VM_PERSIST_H

#include "vm_util.h"
#include "snapshot_helpers.h"	/* run_cli, snap_thread_named */

#define MODULE_NAME	"actrack"
#define LABEL		"actrack_vmtest"
#define VICTIM_PHASE	ACTRACK_PHASE_MAIN_LOOP_STARTED
#define VICTIM_TASK	424242ULL
#define VICTIM_VALUE	4242ULL		/* its boot died of a panic */
#define VICTIM_VALUE_HANG 4243ULL	/* of a hard hang */
#define VICTIM_STEP	"checkout"	/* its task's annotation */
#define VICTIM_AB	"abba-1"	/* its threads' names */
#define VICTIM_BA	"abba-2"
#define VICTIM_IO	"reader"
#define VICTIM_IO_BYTES	4096
/* How long its waits last before its machine dies: over hangs' 1 s. */
#define VICTIM_WAIT_SECS 3
#define NOBODY		65534
/* scripts/vmtest's --persist=memmap region, and persist= naming it. */
#define MEMMAP_ARG	"memmap=16M$0x20000000"
#define REGION_ARG	"persist=16M@0x20000000"
#define REGION_START	0x20000000ULL
#define REGION_HALF	(8ULL << 20)

#define CHECKED_FILE	"previous-boot-checked"
#define TEST_MODULES	"/lib/modules/test/"
#define LOCKUP_KO	TEST_MODULES "actrack_test_lockup.ko"
#define LOCKUP_CONFIRM	"confirm=hang-this-machine"

/* ---- helpers/vm_persist.c ---------------------------------------------- */

/*
 * The persist= that names this boot's region, from /proc/cmdline: the
 * reserve_mem= label where the kernel has it, else the memmap= range;
 * NULL when there is none.
 */
const char *persist_param(void);

/* reserve_mem= came with 6.12 (kmod/compat.h). */
bool kernel_has_reserve_mem(void);

/* Unload (waiting out closing fds) and load with @params. */
int reload(const char *params);

/* reload(@params), and the kernel's words about it must hold @want. */
int reload_said(const char *params, const char *want, bool *said);

/* SELECT of @uid's previous-boot arena on a fresh fd: 0 or -errno. */
int select_previous(uint32_t uid);

/* ACTRACK_IOC_PREVIOUS_UIDS with @q on a fresh fd: 0 or -errno. */
int previous_uids(struct actrack_previous_uids *q);

/* SELECT of @uid's previous-boot arena by a process of nobody's: 0 or
 * -errno (-ECHILD: the child could not become nobody). */
int nobody_selects(uint32_t uid);

/*
 * What previous_boot found and checked in this boot, for hard_hang: the
 * victim's value, in a file of this boot's $TMPDIR (tmpfs: gone with the
 * boot).  0 when it checked nothing, or failed.
 */
void checked_write(uint64_t value);
uint64_t checked_read(void);

/* Load module file @path with @params: 0 (or already loaded) or -errno. */
int load_ko(const char *path, const char *params);

/* The emulated watchdog's driver loaded and its /dev/watchdog there. */
int watchdog_ready(void);

/* Does /proc/iomem list @line (e.g. a device's claim)? */
bool iomem_has(const char *line);

/* ---- helpers/vm_persist_victim.c --------------------------------------- */

/*
 * The victim, in a child: attach, say it all (a task with an annotation
 * whose value says which way its boot died, a wait for a lock nobody is
 * known to hold, and three threads, each in a known wait when its machine
 * dies: VICTIM_AB and VICTIM_BA in a deadlock, VICTIM_IO in a read that
 * never returns), write a byte to @ready_fd, wait for the end.  Exits
 * 20-28 on a failure.
 */
void victim(int ready_fd, uint64_t value) __attribute__((noreturn));

/*
 * The victim of this boot in @s (by phase, task and lock wait, and its
 * three threads in their waits), or NULL.
 */
const struct actrack_snap_process *
find_victim(const struct actrack_snapshot *s);

#endif /* ACTRACK_VM_PERSIST_H */
