// SPDX-License-Identifier: MIT
/*
 * The last boot's story: arenas in reserved RAM (the module's persist=
 * region, kmod/persist.c) outlive a kernel panic and are read back, after
 * the reset, by the next boot of the same machine.
 *
 * One VM, three boots, two ways to die: `scripts/vmtest --persist` boots
 * with reserve_mem=...:actrack_vmtest (6.12 on) or memmap=16M$0x20000000
 * (5.10, 6.1, or any kernel with --persist=memmap) and lets a panic or
 * its emulated watchdog (i6300esb) reset the VM (QEMU keeps its RAM)
 * instead of ending it.  Each boot reloads the module with
 * persist=actrack_vmtest or persist=16M@0x20000000.  When there is no
 * previous boot's image (the first boot), previous_boot starts a victim
 * that pushes known values into its arena, then crashes the kernel (sysrq
 * c).  In the next boot it must find that victim with those exact values,
 * through the library, `actrack ps --previous-boot` and `actrack dump
 * --previous-boot`, and nobody but root may read it; monitor_boot_entry
 * checks the journal entry the monitor writes about it; in a memmap= run,
 * corrupt_previous_boot scribbles on the region through /dev/mem (not
 * System RAM, and unclaimed while the module is loaded without persist=)
 * and rereads it; then hard_hang starts the same victim with another
 * value and hangs the machine hard (every CPU spinning with interrupts
 * off: the test fixture selftests/actrack/lockup), no panic, nothing
 * flushed, until the watchdog resets it.  In the third boot the same
 * checker must find the hang's victim.  The victim's value says which way
 * its boot died.  Anything else: a SKIP that says why.  In any run,
 * persist= naming no region, or a range that cannot be one, is refused
 * with an exact errno.
 */
#include <sys/utsname.h>
#include <linux/watchdog.h>
#include <termios.h>
#include "vm_util.h"
#include "snapshot_helpers.h"	/* run_cli */
#include "journal_native.h"

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

static bool kernel_has_reserve_mem(void);

/*
 * The persist= that names this boot's region, from /proc/cmdline: the
 * reserve_mem= label where the kernel has it, else the memmap= range;
 * NULL when there is none.
 */
static const char *persist_param(void)
{
	char buf[4096];
	ssize_t n;
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	if (strstr(buf, "reserve_mem=") && strstr(buf, ":" LABEL) &&
	    kernel_has_reserve_mem())
		return "persist=" LABEL;
	if (strstr(buf, MEMMAP_ARG " ") || strstr(buf, MEMMAP_ARG "\n"))
		return REGION_ARG;
	return NULL;
}

/* reserve_mem= came with 6.12 (kmod/compat.h). */
static bool kernel_has_reserve_mem(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 12);
}

/* Unload (waiting out closing fds) and load with @params. */
static int reload(const char *params)
{
	int ret = -EAGAIN;

	for (int i = 0; i < 200 * actrack_test_slowness() &&
	     (ret == -EAGAIN || ret == -EBUSY); i++) {
		ret = syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK) ?
		      -errno : 0;
		if (ret)
			usleep(10 * 1000);
	}
	if (ret && ret != -ENOENT)
		return ret;
	return vm_module_load(params);
}

/* /dev/kmsg from now on (non-blocking), or -1. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Did the kernel log @want since kmsg_open()?  Closes @fd. */
static bool kmsg_said(int fd, const char *want)
{
	char rec[8192];
	bool found = false;
	ssize_t n;

	if (fd < 0)
		return false;
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (strstr(rec, want))
			found = true;
	}
	close(fd);
	return found;
}

/* reload(@params), and the kernel's words about it must hold @want. */
static int reload_said(const char *params, const char *want, bool *said)
{
	int fd = kmsg_open(), ret = reload(params);

	*said = kmsg_said(fd, want);
	return ret;
}

/* SELECT of @uid's previous-boot arena on a fresh fd: 0 or -errno. */
static int select_previous(uint32_t uid)
{
	struct actrack_select sel = {
		.uid = uid, .flags = ACTRACK_SELECT_PREVIOUS_BOOT,
	};
	int fd = open(ACTRACK_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = ioctl(fd, ACTRACK_IOC_SELECT, &sel) ? -errno : 0;
	close(fd);
	return ret;
}

/* ACTRACK_IOC_PREVIOUS_UIDS with @q on a fresh fd: 0 or -errno. */
static int previous_uids(struct actrack_previous_uids *q)
{
	int fd = open(ACTRACK_DEVICE_PATH, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = ioctl(fd, ACTRACK_IOC_PREVIOUS_UIDS, q) ? -errno : 0;
	close(fd);
	return ret;
}

/* SELECT of @uid's previous-boot arena by a process of nobody's: 0 or
 * -errno (-ECHILD: the child could not become nobody). */
static int nobody_selects(uint32_t uid)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(ECHILD);
		_exit(-select_previous(uid));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return -WEXITSTATUS(status);
}

/*
 * The victim's threads, each in a known wait when its machine dies: two in
 * a deadlock (each holds one lock and waits for the other's) and one in a
 * read that never returns.  Named before their first push, which names
 * their records.
 */
struct victim_locks {
	pthread_mutex_t a, b;
	pthread_barrier_t both_hold;	/* the two lockers */
	pthread_barrier_t ready;	/* the three threads and main */
	int io_fd;			/* a pipe nobody writes */
};

static struct victim_locks vl = {
	.a = PTHREAD_MUTEX_INITIALIZER,
	.b = PTHREAD_MUTEX_INITIALIZER,
};

/* Hold @mine, then wait for @other, which the other locker holds: each
 * recorded as an instrumented program does (the held set is the
 * tracker's, there from the thread's first push). */
static void abba(const char *name, pthread_mutex_t *mine,
		 pthread_mutex_t *other)
{
	uint32_t token;

	pthread_setname_np(pthread_self(), name);
	token = actrack_push_lock_acquire(mine);
	if (!token)
		_exit(24);
	pthread_mutex_lock(mine);
	actrack_pop(token);
	actrack_held_add(mine, false);
	pthread_barrier_wait(&vl.both_hold);
	if (!actrack_push_lock_acquire(other))
		_exit(24);
	pthread_barrier_wait(&vl.ready);
	pthread_mutex_lock(other);
}

static void *victim_ab(void *arg)
{
	abba(VICTIM_AB, &vl.a, &vl.b);
	return arg;
}

static void *victim_ba(void *arg)
{
	abba(VICTIM_BA, &vl.b, &vl.a);
	return arg;
}

static void *victim_io(void *arg)
{
	char c;

	pthread_setname_np(pthread_self(), VICTIM_IO);
	if (!actrack_push_io_wait(vl.io_fd, VICTIM_IO_BYTES))
		_exit(25);
	pthread_barrier_wait(&vl.ready);
	if (read(vl.io_fd, &c, 1) >= 0)
		_exit(26);
	return arg;
}

/*
 * The victim: attach, say it all (a task with an annotation, a wait for a
 * lock nobody is known to hold, the threads above), tell the parent, wait
 * for the end.
 */
static void victim(int ready_fd, uint64_t value)
{
	static pthread_mutex_t never_given = PTHREAD_MUTEX_INITIALIZER;
	void *(*fn[])(void *) = { victim_ab, victim_ba, victim_io };
	int io[2];
	uint32_t task;
	pthread_t t;
	char c = 'r';

	if (actrack_init(NULL) || actrack_set_phase(VICTIM_PHASE) ||
	    actrack_set_uint(actrack_process_data(), "persist", value))
		_exit(20);
	task = actrack_push_task(VICTIM_TASK);
	if (!task || actrack_set_string(actrack_activity_data(task), "step",
					VICTIM_STEP))
		_exit(21);
	/* What `hangs --previous-boot` finds it waiting for, owner unknown. */
	if (!actrack_push_lock_acquire(&never_given))
		_exit(23);
	if (pipe(io))
		_exit(27);
	vl.io_fd = io[0];
	pthread_barrier_init(&vl.both_hold, NULL, 2);
	pthread_barrier_init(&vl.ready, NULL, 4);
	for (size_t i = 0; i < sizeof(fn) / sizeof(fn[0]); i++)
		if (pthread_create(&t, NULL, fn[i], NULL))
			_exit(28);
	pthread_barrier_wait(&vl.ready);
	if (write(ready_fd, &c, 1) != 1)
		_exit(22);
	for (;;)
		pause();
}

/* Is @t in one activity, of @type on @object (0: any)? */
static bool waits(const struct actrack_snap_thread *t, uint8_t type,
		  uint64_t object)
{
	return t && t->nr_activities == 1 &&
	       t->activities[0].a.type == type &&
	       (!object || t->activities[0].a.object == object);
}

/*
 * The victim of this boot in @s (by phase, task and lock wait, and its
 * three threads in their waits), or NULL.
 */
static const struct actrack_snap_process *
find_victim(const struct actrack_snapshot *s)
{
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];
		const struct actrack_snap_activity *a;

		if (!p->has_record || p->phase != VICTIM_PHASE ||
		    p->nr_threads != 4 || p->threads[0].tid != p->pid ||
		    p->threads[0].nr_activities != 2)
			continue;
		a = p->threads[0].activities;
		if (a[0].a.object == VICTIM_TASK &&
		    a[1].a.type == ACTRACK_ACT_LOCK_ACQUIRE &&
		    waits(snap_thread_named(p, VICTIM_AB),
			  ACTRACK_ACT_LOCK_ACQUIRE, 0) &&
		    waits(snap_thread_named(p, VICTIM_BA),
			  ACTRACK_ACT_LOCK_ACQUIRE, 0) &&
		    waits(snap_thread_named(p, VICTIM_IO), ACTRACK_ACT_IO_WAIT, 0))
			return p;
	}
	return NULL;
}

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

/*
 * `actrack stats` after the reset, nothing tracked yet: root is told
 * that the image of boot @boot is there; nobody is told nothing.
 */
static void check_stats_previous(struct __test_metadata *_metadata,
				 const uint8_t *b)
{
	char *stats[] = { "actrack", "stats", NULL };
	char want[160];
	struct run r;

	snprintf(want, sizeof(want), "\nprevious boot: image of boot %02x%02x"
		 "%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x"
		 " kept, read with --previous-boot\n", b[0], b[1], b[2], b[3],
		 b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
	ASSERT_EQ(0, run_cli(&r, NULL, stats));
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no '%s'", want + 1);
	EXPECT_NE(NULL, strstr(r.out, "\nprevious boot: its machine was last "
				      "alive at "));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	ASSERT_EQ(0, run_program_as(&r, cli_path(), NULL, NOBODY, stats));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(NULL, strstr(r.out, "previous boot"));
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

#define CHECKED_FILE	"previous-boot-checked"
#define TEST_MODULES	"/lib/modules/test/"
#define LOCKUP_KO	TEST_MODULES "actrack_test_lockup.ko"
#define LOCKUP_CONFIRM	"confirm=hang-this-machine"
/*
 * The watchdog's timeout.  Under TCG on the shared 2-core machine (6.12,
 * 2026-12-03) the reset came 5.1 s after the hang and the next boot's
 * /init ran 12.4 s after the reset (a panic: 2.6 s, then 9.9 s); the three
 * boots of vm_persist take 35-45 s of VM time in all.
 */
#define WATCHDOG_SECS	5

/*
 * What previous_boot found and checked in this boot, for hard_hang: the
 * victim's value, in a file of this boot's $TMPDIR (tmpfs: gone with the
 * boot).  0 when it checked nothing, or failed.
 */
static void checked_write(uint64_t value)
{
	FILE *f = fopen(CHECKED_FILE, "we");

	if (f) {
		fprintf(f, "%llu\n", (unsigned long long)value);
		fclose(f);
	}
}

static uint64_t checked_read(void)
{
	unsigned long long v = 0;
	FILE *f = fopen(CHECKED_FILE, "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* Load module file @path with @params: 0 (or already loaded) or -errno. */
static int load_ko(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret == -EEXIST ? 0 : ret;
}

/* The emulated watchdog's driver loaded and its /dev/watchdog there. */
static int watchdog_ready(void)
{
	int ret;

	/* Built into the kernel (the debug kernels), or its modules. */
	if (access("/dev/watchdog", W_OK)) {
		ret = load_ko(TEST_MODULES "watchdog.ko", "");
		if (!ret)
			ret = load_ko(TEST_MODULES "i6300esb.ko", "");
		if (ret)
			return ret;
	}
	/* Bound to the device (if qemu has one): devtmpfs shows it. */
	for (int i = 0; i < 600 * actrack_test_slowness(); i++) {
		if (!access("/dev/watchdog", W_OK))
			return 0;
		usleep(50 * 1000);
	}
	return -ENODEV;
}

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

static void check_cli(struct __test_metadata *_metadata, uint32_t pid,
		      uint64_t value, uint64_t end)
{
	char *ps[] = { "actrack", "ps", "--previous-boot", NULL };
	char *dump[] = { "actrack", "dump", "--previous-boot", NULL };
	char *hangs[] = { "actrack", "hangs", "--previous-boot", NULL };
	char path[PATH_MAX], want[256];
	char *save[] = { "actrack", "save", "--previous-boot", path, NULL };
	struct actrack_snapshot *s;
	struct run r;

	snprintf(path, sizeof(path), "%s/previous.arena",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");

	ASSERT_EQ(0, run_cli(&r, NULL, ps));
	EXPECT_EQ(0, r.status);
	snprintf(want, sizeof(want), "\n%7u  %-7s  %-17s  ", pid, "-",
		 actrack_phase_name(VICTIM_PHASE));
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no '%s'", want + 1);
	EXPECT_NE(NULL, strstr(r.out, "/vm_persist\n"));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	ASSERT_EQ(0, run_cli(&r, NULL, dump));
	EXPECT_EQ(0, r.status);
	snprintf(want, sizeof(want), "process %u (%s) ", pid,
		 actrack_phase_name(VICTIM_PHASE));
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "task %llu", VICTIM_TASK);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "persist = %llu",
		 (unsigned long long)value);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no '%s'", want);
	LOG_ON_FAILURE(&r);
	run_free(&r);

	/*
	 * Judged from the image, its ages measured to the machine's last
	 * heartbeat: who was blocked on whom when it died.  The two lockers
	 * in a cycle; the reader's wait and main's lock, held by nobody
	 * known, hangs (nothing of a dead boot can be checked).
	 */
	ASSERT_EQ(0, run_cli(&r, NULL, hangs));
	EXPECT_EQ(3, r.status);
	EXPECT_NE(NULL, strstr(r.out, "note: arena from another boot: ages "
				      "are relative to the last second its "
				      "machine was alive ("));
	EXPECT_NE(NULL, strstr(r.out, "DEADLOCK: "));
	snprintf(want, sizeof(want), "'%s'", VICTIM_AB);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no %s", want);
	snprintf(want, sizeof(want), "'%s'", VICTIM_BA);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no %s", want);
	snprintf(want, sizeof(want), "'%s'", VICTIM_IO);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no %s", want);
	EXPECT_NE(NULL, strstr(r.out, "not a live arena: nothing can be "
				      "checked"));
	EXPECT_NE(NULL, strstr(r.out, "\n4 hung threads, 1 deadlock ("));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	/* Kept in a file: the same victim, and as its save time no time of
	 * ours but its end, the machine's last heartbeat. */
	ASSERT_EQ(0, run_cli(&r, NULL, save));
	EXPECT_EQ(0, r.status);
	LOG_ON_FAILURE(&r);
	run_free(&r);
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	ASSERT_NE(NULL, find_victim(s));
	EXPECT_EQ(pid, find_victim(s)->pid);
	EXPECT_EQ(end, s->header.saved_mono_ns);
	actrack_snapshot_free(s);

	/* Not root: refused, by the ioctl and by the CLI. */
	ASSERT_EQ(0, run_program_as(&r, cli_path(), NULL, NOBODY, ps));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "Operation not permitted"));
	LOG_ON_FAILURE(&r);
	run_free(&r);
}

/*
 * The victim's threads in image @s: each locker holds the lock the other
 * waits for, the reader waits for its bytes, and the image ends at its
 * machine's last heartbeat, which came at least a second after each wait
 * began (they began VICTIM_WAIT_SECS before the death; a beat a second).
 */
static void check_threads(struct __test_metadata *_metadata,
			  const struct actrack_snapshot *s,
			  const struct actrack_snap_process *p)
{
	const struct actrack_snap_thread *ab = snap_thread_named(p, VICTIM_AB);
	const struct actrack_snap_thread *ba = snap_thread_named(p, VICTIM_BA);
	const struct actrack_snap_thread *io = snap_thread_named(p, VICTIM_IO);
	uint64_t end = s->header.saved_mono_ns;

	ASSERT_EQ(1, ab->nr_held);
	ASSERT_EQ(1, ba->nr_held);
	EXPECT_EQ(ab->held[0], ba->activities[0].a.object);
	EXPECT_EQ(ba->held[0], ab->activities[0].a.object);
	EXPECT_NE(ab->held[0], ba->held[0]);
	EXPECT_EQ(VICTIM_IO_BYTES, io->activities[0].a.info);
	EXPECT_EQ(0, io->nr_held);

	EXPECT_NE(0, end);
	EXPECT_EQ(end, s->taken_mono_ns);
	EXPECT_NE(0, s->header.saved_real_ns);
	for (uint32_t i = 0; i < p->nr_threads; i++) {
		const struct actrack_snap_thread *t = &p->threads[i];
		uint64_t began = t->activities[t->nr_activities - 1].a.time_ns;

		EXPECT_LE(began + 1000000000ULL, end)
			TH_LOG("thread %u: its wait began at %llu ns, the "
			       "image ends at %llu", t->tid,
			       (unsigned long long)began,
			       (unsigned long long)end);
	}
}

/*
 * The uids of the image, as the module lists them to root: uid 0 only
 * (every arena of the boot before was root's), counted without room,
 * written into room to spare and nothing beyond; hostile arguments and
 * nobody refused.
 */
static void check_image_uids(struct __test_metadata *_metadata)
{
	uint32_t uids[4] = { 7, 7, 7, 7 };
	struct actrack_previous_uids q = { 0 };
	pid_t pid;
	int status;

	ASSERT_EQ(0, previous_uids(&q));
	EXPECT_EQ(1, q.nr);
	q = (struct actrack_previous_uids){ .nr = 4, .uids = (uintptr_t)uids };
	ASSERT_EQ(0, previous_uids(&q));
	EXPECT_EQ(1, q.nr);
	EXPECT_EQ(0, uids[0]);
	EXPECT_EQ(7, uids[1]);

	q = (struct actrack_previous_uids){ .flags = 1 };
	EXPECT_EQ(-EINVAL, previous_uids(&q));
	q = (struct actrack_previous_uids){ .reserved = 1 };
	EXPECT_EQ(-EINVAL, previous_uids(&q));
	q = (struct actrack_previous_uids){ .nr = 1, .uids = 8 };
	EXPECT_EQ(-EFAULT, previous_uids(&q));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		q = (struct actrack_previous_uids){ 0 };
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(ECHILD);
		_exit(-previous_uids(&q));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(EPERM, WEXITSTATUS(status));
}

/*
 * The boot after a death: the victim of the boot before, exactly, in
 * *@value which way it died (VICTIM_VALUE: a panic, VICTIM_VALUE_HANG: a
 * hard hang).  The one checker of both ways.
 */
static void second_boot(struct __test_metadata *_metadata, uint64_t *value)
{
	const struct actrack_snap_process *p;
	const struct actrack_snap_activity *act;
	struct actrack_snapshot *s;
	char params[128];
	uint8_t boot[16];

	ASSERT_EQ(0, actrack_snapshot_take(NULL, ACTRACK_SNAP_PREVIOUS_BOOT,
					   &s));
	EXPECT_FALSE(s->corrupt);
	EXPECT_EQ(0, s->nr_torn);
	ASSERT_EQ(0, actrack_boot_id(boot));
	EXPECT_NE(0, memcmp(boot, s->header.boot_id, sizeof(boot)));
	EXPECT_EQ(0, s->header.uid);
	p = find_victim(s);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(p->pid, p->threads[0].tid);
	ASSERT_EQ(1, p->nr_values);
	EXPECT_STREQ("persist", p->values[0].name);
	EXPECT_EQ(ACTRACK_VALUE_UNSIGNED, p->values[0].type);
	*value = p->values[0].u;
	EXPECT_TRUE(*value == VICTIM_VALUE || *value == VICTIM_VALUE_HANG)
		TH_LOG("persist = %llu", (unsigned long long)*value);
	act = &p->threads[0].activities[0];
	EXPECT_EQ(ACTRACK_ACT_TASK_RUN, act->a.type);
	ASSERT_EQ(1, act->nr_values);
	EXPECT_STREQ("step", act->values[0].name);
	EXPECT_EQ(ACTRACK_VALUE_STRING, act->values[0].type);
	EXPECT_STREQ(VICTIM_STEP, (const char *)act->values[0].bytes);
	check_threads(_metadata, s, p);
	check_image_uids(_metadata);
	check_stats_previous(_metadata, s->header.boot_id);
	check_cli(_metadata, p->pid, *value, s->header.saved_mono_ns);
	actrack_snapshot_free(s);

	/* The ioctl itself, as nobody: EPERM for any uid, its own too,
	 * before telling anything. */
	EXPECT_EQ(-EPERM, nobody_selects(0));
	EXPECT_EQ(-EPERM, nobody_selects(NOBODY));

	/* An administrator who says uids are stable lets each user read
	 * their own (nobody has none there: ENOENT), still no other's. */
	snprintf(params, sizeof(params), "%s persist_uids_stable=1",
		 persist_param());
	ASSERT_EQ(0, reload(params));
	EXPECT_EQ(-EPERM, nobody_selects(0));
	EXPECT_EQ(-ENOENT, nobody_selects(NOBODY));
	ASSERT_EQ(0, reload(persist_param()));
}

FIXTURE(persist) {
	int unused;
};

FIXTURE_SETUP(persist)
{
}

FIXTURE_TEARDOWN(persist)
{
}

/*
 * Without its region the parameter is refused, with the errno that says
 * why: no such region (6.12+), or no reserve_mem= at all (before).  The
 * module is left loaded without it.
 */
TEST_F_TIMEOUT(persist, refused_without_region, 120)
{
	int want = kernel_has_reserve_mem() ? -ENOENT : -EINVAL;

	VM_REQUIRE_MODULE();
	EXPECT_EQ(want, reload("persist=actrack_no_such_region"));
	ASSERT_EQ(0, reload(""));
}

/*
 * A range that cannot be a region, each refused with its errno and its
 * dmesg line: malformed, empty, unaligned, wrapping past the physical
 * address space (EINVAL), the kernel's own RAM (EADDRNOTAVAIL).
 */
TEST_F_TIMEOUT(persist, hostile_range, 120)
{
	static const struct {
		const char *param;
		int err;
		const char *said;
	} cases[] = {
		{ "persist=16M@", -EINVAL, "neither a label" },
		{ "persist=16Q@0x20000000", -EINVAL, "neither a label" },
		{ "persist=@0x20000000", -EINVAL, "neither a label" },
		{ "persist=16M@0x20000000x", -EINVAL, "neither a label" },
		{ "persist=0@0x20000000", -EINVAL, "must be non-zero" },
		{ "persist=16M@0x20000800", -EINVAL, "must be non-zero" },
		{ "persist=16385@0x20000000", -EINVAL, "must be non-zero" },
		{ "persist=16M@0xfffffffffffff000", -EINVAL,
		  "overflows the physical address space" },
		{ "persist=4G@0xfffffffff0000000", -EINVAL,
		  "overflows the physical address space" },
		/* The kernel's own memory: 64 MiB on is RAM under QEMU. */
		{ "persist=16M@0x4000000", -EADDRNOTAVAIL,
		  "is (partly) System RAM" },
	};
	bool said;

	VM_REQUIRE_MODULE();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_EQ(cases[i].err, reload_said(cases[i].param,
						    cases[i].said, &said))
			TH_LOG("%s", cases[i].param);
		EXPECT_TRUE(said) TH_LOG("%s: no '%s' in dmesg",
					 cases[i].param, cases[i].said);
	}
	ASSERT_EQ(0, reload(""));
}

/* Does /proc/iomem list @line (e.g. a device's claim)? */
static bool iomem_has(const char *line)
{
	char buf[256];
	bool found = false;
	FILE *f = fopen("/proc/iomem", "re");

	if (!f)
		return false;
	while (!found && fgets(buf, sizeof(buf), f))
		found = strstr(buf, line) != NULL;
	fclose(f);
	return found;
}

/* A range another driver holds (QEMU's I/O APIC): EBUSY. */
TEST_F_TIMEOUT(persist, range_held_by_a_driver, 120)
{
	bool said;

	VM_REQUIRE_MODULE();
	if (!iomem_has("fec00000-fec003ff : IOAPIC 0"))
		SKIP(return, "no 'fec00000-fec003ff : IOAPIC 0' in /proc/iomem "
		     "(a kernel without X86_IO_APIC, or not QEMU's PC "
		     "machine)");
	EXPECT_EQ(-EBUSY, reload_said("persist=4M@0xfec00000",
				      "held by another driver", &said));
	EXPECT_TRUE(said);
	ASSERT_EQ(0, reload(""));
}

/*
 * The memmap= region within one boot, where nothing crashes (a kernel
 * without sysrq, or one run of many): claimed at load (/proc/iomem), an
 * arena carved from it and mapped, released at unload.
 */
TEST_F_TIMEOUT(persist, memmap_region_live, 240)
{
	const char *param = persist_param();
	bool said;
	pid_t pid;
	int status;

	VM_REQUIRE_MODULE();
	if (!param || strcmp(param, REGION_ARG))
		SKIP(return, "needs the " MEMMAP_ARG " region on the kernel "
		     "command line (scripts/vmtest --persist=memmap)");
	ASSERT_EQ(0, reload_said(param, "persist: region 16M@0x20000000, "
				 "16777216 bytes, half ", &said));
	EXPECT_TRUE(said);
	EXPECT_TRUE(iomem_has("20000000-20ffffff : actrack persist"));

	start_victim(_metadata, VICTIM_VALUE, &pid);
	if (ACTRACK_TEST_FAILED(_metadata))
		return;
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	ASSERT_EQ(0, reload(""));
	EXPECT_FALSE(iomem_has(": actrack persist"));
}

TEST_F_TIMEOUT(persist, previous_boot, 240)
{
	const char *param = persist_param();
	uint64_t value;
	int ret;

	VM_REQUIRE_MODULE();
	if (!param)
		SKIP(return, "not a two-boot run: neither reserve_mem=SIZE:"
		     "ALIGN:" LABEL " (6.12+) nor " MEMMAP_ARG " on the "
		     "kernel command line (scripts/vmtest --persist)");
	if (access("/proc/sysrq-trigger", W_OK))
		SKIP(return, "no /proc/sysrq-trigger (CONFIG_MAGIC_SYSRQ): "
		     "the kernel cannot be crashed on purpose");
	TH_LOG("region: %s", param);
	ASSERT_EQ(0, reload(param));
	ret = select_previous(0);
	if (ret == -ENODATA) {
		first_boot(_metadata);
		return;
	}
	ASSERT_EQ(0, ret);
	second_boot(_metadata, &value);
	if (!ACTRACK_TEST_FAILED(_metadata))
		checked_write(value);
	/* As the tests after it expect: without persist=. */
	ASSERT_EQ(0, reload(""));
}

/* ---- the monitor's entry at boot (cli/previous_boot.c) ------------------ */

#define BOOT_MESSAGE_ID	"394b5103d5bc4b64b69977612ca71fb5"
#define MARK_DIR	"/run/actrack"

struct boot_monitor {
	pid_t pid;
	int err;		/* its stderr */
};

/* `actrack monitor --journal`, with its NOTIFY_SOCKET: 0 once ready
 * (its boot entry, if any, is sent before), or -errno. */
static int boot_monitor_start(struct boot_monitor *m)
{
	char notify[108];
	int e[2], nfd, ret;

	nfd = vm_notify_open(notify, sizeof(notify));
	if (nfd < 0)
		return nfd;
	if (pipe2(e, O_CLOEXEC)) {
		close(nfd);
		return -errno;
	}
	m->pid = fork();
	if (m->pid < 0)
		return -errno;
	if (!m->pid) {
		char *argv[] = { "actrack", "monitor", "--journal",
				 "--timeout", "600", NULL };

		dup2(e[1], 2);
		if (setenv("NOTIFY_SOCKET", notify, 1))
			_exit(126);
		execv(cli_path(), argv);
		_exit(127);
	}
	close(e[1]);
	m->err = e[0];
	ret = vm_notify_wait_ready(nfd, 120000 * actrack_test_slowness());
	close(nfd);
	unlink(notify);
	return ret;
}

/* Stopped; its stderr, whole (free it). */
static char *boot_monitor_stop(struct boot_monitor *m)
{
	char *err;

	kill(m->pid, SIGTERM);
	waitpid(m->pid, NULL, 0);
	err = slurp_fd(m->err);
	return err;
}

/* The entries queued on @sock with our MESSAGE_ID: how many, the last in
 * @e.  Sent before the monitor was ready, so all there already. */
static int boot_entries(int sock, struct entry *e)
{
	static struct entry tmp;
	char id[64];
	int nr = 0;
	ssize_t n;

	while ((n = recv(sock, tmp.buf, sizeof(tmp.buf), MSG_DONTWAIT)) > 0) {
		tmp.len = (size_t)n;
		if (field(&tmp, "MESSAGE_ID", id, sizeof(id)) &&
		    !strcmp(id, BOOT_MESSAGE_ID)) {
			memcpy(e->buf, tmp.buf, tmp.len);
			e->len = tmp.len;
			nr++;
		}
	}
	return nr;
}

/* The fields of the entry about the image of @s (uid 0's arena, the only
 * one boot 1 filled) and its victim @p. */
static void check_boot_entry(struct __test_metadata *_metadata,
			     const struct entry *e,
			     const struct actrack_snapshot *s,
			     const struct actrack_snap_process *p,
			     const char *boot)
{
	static char v[256 * 1024];
	const struct actrack_snap_thread *t = &p->threads[0];
	char want[512], n[16];

	snprintf(n, sizeof(n), "%u", s->nr_processes);
	ASSERT_NE(NULL, field(e, "PRIORITY", v, sizeof(v)));
	EXPECT_STREQ("3", v);
	ASSERT_NE(NULL, field(e, "SYSLOG_IDENTIFIER", v, sizeof(v)));
	EXPECT_STREQ("actrack", v);
	ASSERT_NE(NULL, field(e, "ACTRACK_PREVIOUS_BOOT_ID", v, sizeof(v)));
	EXPECT_STREQ(boot, v);
	ASSERT_NE(NULL, field(e, "ACTRACK_PROCESSES", v, sizeof(v)));
	EXPECT_STREQ(n, v);
	ASSERT_NE(NULL, field(e, "ACTRACK_ARENAS", v, sizeof(v)));
	EXPECT_STREQ("1", v);
	ASSERT_NE(NULL, field(e, "ACTRACK_UNREADABLE_ARENAS", v, sizeof(v)));
	EXPECT_STREQ("0", v);
	ASSERT_NE(NULL, field(e, "ACTRACK_CORRUPT_ARENAS", v, sizeof(v)));
	EXPECT_STREQ("0", v);
	ASSERT_NE(NULL, field(e, "ACTRACK_TORN_THREADS", v, sizeof(v)));
	EXPECT_STREQ("0", v);

	ASSERT_NE(NULL, field(e, "MESSAGE", v, sizeof(v)));
	snprintf(want, sizeof(want), "previous boot %s ended while %u "
		 "process%s %s running: ", boot, s->nr_processes,
		 s->nr_processes == 1 ? "" : "es",
		 s->nr_processes == 1 ? "was" : "were");
	EXPECT_EQ(0, strncmp(v, want, strlen(want))) TH_LOG("%s", v);
	/* The victim: main in its lock wait, then its threads, each with
	 * the verdict hangs --previous-boot gives it. */
	snprintf(want, sizeof(want), "%u %.*s (%u '%.*s' %s lock 0x%llx, "
		 "hang: nothing can be checked; ",
		 p->pid, (int)sizeof(t->name), t->name, t->tid,
		 (int)sizeof(t->name), t->name,
		 actrack_activity_name(ACTRACK_ACT_LOCK_ACQUIRE),
		 (unsigned long long)t->activities[1].a.object);
	EXPECT_NE(NULL, strstr(v, want)) TH_LOG("no '%s' in '%s'", want, v);
	EXPECT_STREQ("vm_persist", t->name);
	for (uint32_t k = 1; k < p->nr_threads; k++) {
		const struct actrack_snap_thread *o = &p->threads[k];
		bool io = o->activities[0].a.type == ACTRACK_ACT_IO_WAIT;
		char *text, *end;

		snprintf(want, sizeof(want), "%u '%.*s' %s ", o->tid,
			 (int)sizeof(o->name), o->name,
			 actrack_activity_name(o->activities[0].a.type));
		text = strstr(v, want);
		ASSERT_NE(NULL, text) TH_LOG("no '%s' in '%s'", want, v);
		end = text + strcspn(text, ";)");
		snprintf(want, sizeof(want), ", %s: ",
			 io ? "hang" : "deadlock");
		text = strstr(text, want);
		EXPECT_TRUE(text && text < end)
			TH_LOG("thread %u: no '%s' in '%s'", o->tid, want, v);
	}

	ASSERT_NE(NULL, field(e, "ACTRACK_REPORT", v, sizeof(v)));
	snprintf(want, sizeof(want), "{\"schema\":\"actrack-previous-boot/1\","
		 "\"boot_id\":\"%s\",\"processes\":%u,\"unreadable_arenas\":0,"
		 "\"corrupt_arenas\":0,\"torn_threads\":0,", boot,
		 s->nr_processes);
	EXPECT_EQ(0, strncmp(v, want, strlen(want))) TH_LOG("%s", v);
	EXPECT_EQ(NULL, strchr(v, '\n'));
}

/*
 * The service at the second boot: `actrack monitor --journal` writes one
 * entry about the image (the boot id `ps --previous-boot` reads, its
 * processes, the victim with what it was doing); started again in the
 * same boot, none.
 */
TEST_F_TIMEOUT(persist, monitor_boot_entry, 600)
{
	const char *param = persist_param();
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s;
	struct boot_monitor m;
	char boot[33], mark[128], *err;
	struct entry *e;
	uint8_t now[16];
	int sock, ret;

	VM_REQUIRE_MODULE();
	if (!param)
		SKIP(return, "not a two-boot run: no persist= region on the "
		     "kernel command line (scripts/vmtest --persist)");
	ASSERT_EQ(0, reload(param));
	ret = select_previous(0);
	if (ret == -ENODATA)
		SKIP(return, "the first boot (no image yet): its crash comes "
		     "in persist.previous_boot");
	ASSERT_EQ(0, ret);

	/* What ps --previous-boot reads: the walk the monitor uses. */
	ASSERT_EQ(0, actrack_snapshot_take(NULL, ACTRACK_SNAP_PREVIOUS_BOOT,
					   &s));
	p = find_victim(s);
	ASSERT_NE(NULL, p);
	for (int i = 0; i < 16; i++)
		snprintf(boot + 2 * i, 3, "%02x", s->header.boot_id[i]);
	ASSERT_EQ(0, actrack_boot_id(now));
	EXPECT_NE(0, memcmp(now, s->header.boot_id, sizeof(now)));

	sock = journal_socket_bind();
	ASSERT_LE(0, sock) TH_LOG("journal socket: %s", strerror(-sock));
	e = calloc(1, sizeof(*e));
	ASSERT_NE(NULL, e);
	/* A monitor of another test of this boot may have logged it. */
	snprintf(mark, sizeof(mark), MARK_DIR "/previous-boot.%s", boot);
	unlink(mark);

	ASSERT_EQ(0, boot_monitor_start(&m));
	EXPECT_EQ(1, boot_entries(sock, e));
	err = boot_monitor_stop(&m);
	EXPECT_STREQ("", err ? err : "?");
	free(err);
	check_boot_entry(_metadata, e, s, p, boot);
	EXPECT_EQ(0, access(mark, F_OK));

	/* Restarted in the same boot: the image was logged. */
	ASSERT_EQ(0, boot_monitor_start(&m));
	EXPECT_EQ(0, boot_entries(sock, e));
	err = boot_monitor_stop(&m);
	EXPECT_STREQ("", err ? err : "?");
	free(err);

	free(e);
	close(sock);
	actrack_snapshot_free(s);
	ASSERT_EQ(0, reload(""));
}

/*
 * The module's header of one half of the region, as kmod/persist.c
 * writes it (version 3): what the corruption case scribbles on.
 */
struct persist_header {
	uint64_t magic;
	uint32_t version;
	uint32_t arena_size;
	uint64_t generation;
	uint64_t half_size;
	uint8_t boot_id[16];
	uint32_t nr_slots;
	uint32_t crc;
	uint64_t alive_mono_ns;
	uint64_t alive_real_ns;
	struct {
		uint32_t flags;
		uint32_t uid;
	} slots[1];
};
#define PERSIST_MAGIC	0x3154534942434b41ULL
#define SLOT0_UID	offsetof(struct persist_header, slots[0].uid)

/* The physical address of the previous boot's half, or 0. */
static uint64_t previous_half(int mem)
{
	struct persist_header h;
	uint8_t boot[16];

	if (actrack_boot_id(boot))
		return 0;
	for (int i = 0; i < 2; i++) {
		uint64_t at = REGION_START + i * REGION_HALF;

		if (pread(mem, &h, sizeof(h), (off_t)at) != sizeof(h))
			return 0;
		if (h.magic == PERSIST_MAGIC && h.version == 3 &&
		    memcmp(h.boot_id, boot, sizeof(boot)))
			return at;
	}
	return 0;
}

/* ps, dump and hangs --previous-boot: each exits @status, says @err. */
static void check_cli_refused(struct __test_metadata *_metadata, int status,
			      const char *err)
{
	static const char *const cmds[] = { "ps", "dump", "hangs" };

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *argv[] = { "actrack", (char *)cmds[i], "--previous-boot",
				 NULL };
		struct run r;

		ASSERT_EQ(0, run_cli(&r, NULL, argv));
		EXPECT_EQ(status, r.status) TH_LOG("%s", cmds[i]);
		EXPECT_NE(NULL, strstr(r.err, err))
			TH_LOG("%s: no '%s'", cmds[i], err);
		LOG_ON_FAILURE(&r);
		run_free(&r);
	}
}

/* Run `actrack @cmd --previous-boot`: its output in @r. */
static void run_previous(struct __test_metadata *_metadata, struct run *r,
			 const char *cmd)
{
	char *argv[] = { "actrack", (char *)cmd, "--previous-boot", NULL };

	ASSERT_EQ(0, run_cli(r, NULL, argv));
}

/*
 * The records after @arena's header overwritten (through @mem, the
 * module unloaded): the image is read, what failed validation is
 * skipped (here: all of the victim, whose records begin there) and
 * said, by each command, which exits 0.  Put back after.
 */
static void scribble_records(struct __test_metadata *_metadata, int mem,
			     uint64_t arena, const char *param)
{
	static const char note[] = "note: the arena is corrupt: records "
				   "that failed validation were skipped";
	char saved[256], junk[256];
	struct actrack_snapshot *s;
	off_t at = (off_t)(arena + ACTRACK_ARENA_HEADER_SIZE);
	struct run r;

	memset(junk, 0xa5, sizeof(junk));
	ASSERT_EQ(sizeof(saved), pread(mem, saved, sizeof(saved), at));
	ASSERT_EQ(sizeof(junk), pwrite(mem, junk, sizeof(junk), at));
	ASSERT_EQ(0, reload(param));
	ASSERT_EQ(0, actrack_snapshot_take(NULL, ACTRACK_SNAP_PREVIOUS_BOOT,
					   &s));
	EXPECT_TRUE(s->corrupt);
	EXPECT_EQ(0, s->nr_processes);
	actrack_snapshot_free(s);

	/* ps: the bare table, the note on stderr. */
	run_previous(_metadata, &r, "ps");
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0, strncmp(r.out, "    PID  STATE", 14));
	EXPECT_TRUE(strchr(r.out, '\n') && !strchr(r.out, '\n')[1]);
	EXPECT_NE(NULL, strstr(r.err, note));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	run_previous(_metadata, &r, "dump");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "\n0 processes, 0 threads, "));
	EXPECT_NE(NULL, strstr(r.out, " bytes used, corrupt yes\n"));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	/* hangs: no verdict is believed silently. */
	run_previous(_metadata, &r, "hangs");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, note));
	EXPECT_NE(NULL, strstr(r.out, "no hung threads (0 threads in 0 "
				      "processes;"));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	ASSERT_EQ(0, reload(""));
	ASSERT_EQ(sizeof(saved), pwrite(mem, saved, sizeof(saved), at));
}

/*
 * Second boot of a memmap= run: the previous boot's image, scribbled on
 * between loads through /dev/mem.  Its arena's magic: the image is still
 * there but the arena is refused as such (EBADMSG, "bad magic", status
 * 1), by the library and the CLI.  A slot of its table: the checksum
 * fails, dmesg says so and no image is kept (ENODATA).  Put back, both
 * read as before.
 */
TEST_F_TIMEOUT(persist, corrupt_previous_boot, 240)
{
	const char *param = persist_param();
	static const char garbage[8] = "GARBAGE!";
	char magic[8];
	struct actrack_snapshot *s;
	uint64_t half, arena;
	uint32_t uid, bad_uid = 4242;
	bool said;
	int mem;

	VM_REQUIRE_MODULE();
	if (!param || strcmp(param, REGION_ARG))
		SKIP(return, "needs the " MEMMAP_ARG " region (scripts/vmtest "
		     "--persist on 6.1, --persist=memmap on any kernel): "
		     "/dev/mem cannot write System RAM");
	mem = open("/dev/mem", O_RDWR | O_SYNC | O_CLOEXEC);
	if (mem < 0)
		SKIP(return, "no /dev/mem (CONFIG_DEVMEM): %s", strerror(errno));
	ASSERT_EQ(0, reload(param));
	if (select_previous(0) == -ENODATA) {
		close(mem);
		SKIP(return, "no previous boot's image in the region (the "
		     "first boot, or previous_boot did not run)");
	}
	/* Claimed by the module: closed to /dev/mem. */
	EXPECT_EQ(-1, pread(mem, magic, sizeof(magic), (off_t)REGION_START));
	EXPECT_EQ(EPERM, errno);
	ASSERT_EQ(0, reload(""));

	half = previous_half(mem);
	ASSERT_NE(0, half);
	ASSERT_EQ(sizeof(uid), pread(mem, &uid, sizeof(uid),
				     (off_t)(half + SLOT0_UID)));
	ASSERT_EQ(0, uid);
	arena = half + 4096;	/* slot 0's arena */
	ASSERT_EQ(sizeof(magic), pread(mem, magic, sizeof(magic),
				       (off_t)arena));

	/* The arena's magic: the image stays, its arena is refused. */
	ASSERT_EQ(sizeof(garbage), pwrite(mem, garbage, sizeof(garbage),
					  (off_t)arena));
	ASSERT_EQ(0, reload(param));
	EXPECT_EQ(0, select_previous(0));
	EXPECT_EQ(-EBADMSG, actrack_snapshot_take(NULL,
						  ACTRACK_SNAP_PREVIOUS_BOOT,
						  &s));
	check_cli_refused(_metadata, 1, ACTRACK_DEVICE_PATH
			  " (previous boot): not an actrack arena (bad magic)");
	ASSERT_EQ(0, reload(""));
	ASSERT_EQ(sizeof(magic), pwrite(mem, magic, sizeof(magic),
					(off_t)arena));

	/* Its first records: read, and the damage said. */
	scribble_records(_metadata, mem, arena, param);

	/* Its slot table: the checksum fails, no image is kept. */
	ASSERT_EQ(sizeof(bad_uid), pwrite(mem, &bad_uid, sizeof(bad_uid),
					  (off_t)(half + SLOT0_UID)));
	EXPECT_EQ(0, reload_said(param, "header or slot table fails its "
				 "checksum: its image is not kept", &said));
	EXPECT_TRUE(said);
	EXPECT_EQ(-ENODATA, select_previous(0));
	check_cli_refused(_metadata, 1, "no image of a previous boot");
	ASSERT_EQ(0, reload(""));

	/* Put back: the image is whole again, and read as before. */
	ASSERT_EQ(sizeof(uid), pwrite(mem, &uid, sizeof(uid),
				      (off_t)(half + SLOT0_UID)));
	ASSERT_EQ(0, reload(param));
	EXPECT_EQ(0, select_previous(0));
	ASSERT_EQ(0, actrack_snapshot_take(NULL, ACTRACK_SNAP_PREVIOUS_BOOT,
					   &s));
	EXPECT_FALSE(s->corrupt);
	EXPECT_NE(NULL, find_victim(s));
	actrack_snapshot_free(s);
	close(mem);
	ASSERT_EQ(0, reload(""));
}

/*
 * The second way to die, after previous_boot checked the panic's image:
 * a victim again (another value), the watchdog armed, and the machine
 * hung with interrupts off on every CPU.  No panic, no reboot by the
 * kernel: only the watchdog's reset, and the next boot's previous_boot
 * checks what the hang left with the same checker; here then, that it
 * did so.
 */
TEST_F_TIMEOUT(persist, hard_hang, 240)
{
	const char *param = persist_param();
	uint64_t checked;
	pid_t pid;
	int ret;

	VM_REQUIRE_MODULE();
	if (!param)
		SKIP(return, "not a persist run: no persist= region on the "
		     "kernel command line (scripts/vmtest --persist)");
	checked = checked_read();
	if (checked == VICTIM_VALUE_HANG)
		return;	/* the hang's image, checked by previous_boot */
	if (checked != VICTIM_VALUE)
		SKIP(return, "previous_boot checked no panic's image in this "
		     "boot: no hang on top of it");
	ret = watchdog_ready();
	if (ret)
		SKIP(return, "no watchdog to reset a hung VM (%s): vmtest "
		     "--persist gives qemu an i6300esb and packs this "
		     "kernel's watchdog.ko and i6300esb.ko", strerror(-ret));
	if (access(LOCKUP_KO, R_OK))
		SKIP(return, "no %s: the test fixture is built by "
		     "scripts/vmtest for --persist", LOCKUP_KO);
	ASSERT_EQ(0, reload(param));
	start_victim(_metadata, VICTIM_VALUE_HANG, &pid);
	if (ACTRACK_TEST_FAILED(_metadata))
		return;
	hang_machine(_metadata, pid);
}

TEST_HARNESS_MAIN
