/* SPDX-License-Identifier: MIT */
/*
 * Part of vm_persist.c (vm_persist.h), included by it alone: a boot's
 * death.  The victim started in the persistent arena and checked live,
 * then the kernel crashed (sysrq c) or every CPU hung until the watchdog
 * resets the machine, each announced to scripts/vmtest first.
 */
#ifndef ACTRACK_VM_PERSIST_DEATH_H
#define ACTRACK_VM_PERSIST_DEATH_H

#include <linux/watchdog.h>
#include <termios.h>
#include "vm_persist.h"

/* `actrack stats` on the live arena in the region says it persists. */
static void check_stats_live(struct __test_metadata *_metadata)
{
	char *stats[] = { "actrack", "stats", NULL };
	struct run r;

	ASSERT_EQ(0, run_cli(&r, NULL, stats));
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "\npersist:   yes (in the module's "
				      "persist= region: kept across a crash "
				      "or reset of the machine)\n"));
	LOG_ON_FAILURE(&r);
	run_free(&r);
}

/* A victim of @value in the persistent arena, checked live: *@pid. */
static void start_victim(struct __test_metadata *_metadata, uint64_t value,
			 pid_t *pid)
{
	struct actrack_layout lay;
	struct actrack_snapshot *s;
	int ready[2], fd;

	ASSERT_EQ(0, pipe(ready));
	*pid = fork();
	ASSERT_LE(0, *pid);
	if (!*pid) {
		close(ready[0]);
		victim(ready[1], value);
	}
	close(ready[1]);
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 60000));
	close(ready[0]);

	/* Its arena is in the region (the flag of ABI 1.8). */
	fd = open(ACTRACK_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, ACTRACK_IOC_LAYOUT, &lay));
	ASSERT_EQ(ACTRACK_LAYOUT_READONLY | ACTRACK_LAYOUT_PERSISTENT,
		  lay.flags);
	close(fd);
	ASSERT_EQ(0, actrack_snapshot_take(NULL, 0, &s));
	ASSERT_NE(NULL, find_victim(s));
	ASSERT_EQ((uint32_t)*pid, find_victim(s)->pid);
	actrack_snapshot_free(s);
	check_stats_live(_metadata);
	/* Its waits grow older than hangs' threshold while the machine
	 * lives (the module's heartbeat says until when). */
	sleep(VICTIM_WAIT_SECS);
}

/*
 * scripts/vmtest counts on this line: the death that follows is the plan.
 * Out on the console before it (tcdrain), and in the kernel's log too,
 * which a panic flushes to the console whatever the tty still holds.
 */
static void announce_crash(pid_t victim_pid, const char *how)
{
	int fd;

	printf("@@vmtest: crash-planned vm_persist %s, victim %d\n", how,
	       (int)victim_pid);
	fflush(stdout);
	tcdrain(STDOUT_FILENO);
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		dprintf(fd, "<2>@@vmtest: crash-planned vm_persist %s\n", how);
		close(fd);
	}
	sync();
}

/*
 * The watchdog's timeout.  Under TCG on the shared 2-core machine (6.12,
 * 2026-12-03) the reset came 5.1 s after the hang and the next boot's
 * /init ran 12.4 s after the reset (a panic: 2.6 s, then 9.9 s); the three
 * boots of vm_persist take 35-45 s of VM time in all.
 */
#define WATCHDOG_SECS	5

/*
 * Arm the watchdog and hang every CPU (the fixture): never returns if it
 * works.  If the fixture is refused, the watchdog is stopped again (magic
 * close) so that no reset follows a failure.
 */
static void hang_machine(struct __test_metadata *_metadata, pid_t pid)
{
	int secs = WATCHDOG_SECS, wd, ret;

	wd = open("/dev/watchdog", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, wd);
	ASSERT_EQ(0, ioctl(wd, WDIOC_SETTIMEOUT, &secs));
	ASSERT_EQ(0, ioctl(wd, WDIOC_KEEPALIVE, 0));
	announce_crash(pid, "hang");
	ret = load_ko(LOCKUP_KO, LOCKUP_CONFIRM);
	EXPECT_EQ(1, write(wd, "V", 1));
	close(wd);
	ASSERT_TRUE(false) TH_LOG("still running after loading the lockup "
				  "fixture: %s", strerror(-ret));
}

/* The first boot: a victim in the persistent arena, then the crash. */
static void first_boot(struct __test_metadata *_metadata)
{
	pid_t pid;
	int fd;

	start_victim(_metadata, VICTIM_VALUE, &pid);
	if (ACTRACK_TEST_FAILED(_metadata))
		return;
	announce_crash(pid, "panic");
	fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, write(fd, "c", 1));
	ASSERT_TRUE(false) TH_LOG("still running after sysrq c");
}

#endif /* ACTRACK_VM_PERSIST_DEATH_H */
