/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the vm_*.c kselftests, which run inside the test VM
 * with actrack.ko loaded (scripts/vmtest) and skip elsewhere.
 *
 * The tests drive the real library (actrack_init, pushes, phases) in child
 * processes and look at the result from the outside: the death reports
 * (actrack_monitor_*) and the arena itself, mapped read-only through its
 * own /dev/actrack fd and walked with the arena core, so that what the
 * kernel freed or kept is seen as any reader would see it.
 *
 * Children never use ASSERT_* (it longjmps into the harness of the parent's
 * copy); they exit with a distinct code on failure instead.
 *
 * The `actrack run` tests (run_preload, run_nginx) use a few of them too.
 * They are compiled once, in helpers/vm_util.c, and linked into each test
 * that calls them.
 */
#ifndef ACTRACK_VM_UTIL_H
#define ACTRACK_VM_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The 6.1 harness passes formats through and compares int literals with
 * our unsigned fields. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "test_harness.h"
#include "actrack.h"
#include "arena.h"

#define VM_UNUSED __attribute__((unused))

/*
 * VM_UNDER_SANITIZER: an ASan or TSan build.  Its runtime must come first
 * in a process, so `actrack run` cannot preload it into an uninstrumented
 * program: the run_* tests skip.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(ACTRACK_UNDER_TSAN)
#define VM_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VM_UNDER_SANITIZER 1
#endif
#endif

/*
 * The flags of a clean death report of this build's own processes: the
 * module copies the stacks of 64-bit threads only, so a 32-bit build's
 * reports say ACTRACK_DEATH_STACKS_UNSUPPORTED.
 */
#ifdef __x86_64__
#define VM_DEATH_FLAGS 0U
#else
#define VM_DEATH_FLAGS ACTRACK_DEATH_STACKS_UNSUPPORTED
#endif

/* Skip (never pass) where the module is not there, e.g. on the host. */
#define VM_REQUIRE_MODULE()						\
	do {								\
		if (access(ACTRACK_DEVICE_PATH, F_OK))			\
			SKIP(return, "%s absent: actrack.ko not loaded",\
			     ACTRACK_DEVICE_PATH);			\
		/* The runner points ACTRACK_ARENA at a file for the	\
		 * host tests; these are about the module. */		\
		unsetenv(ACTRACK_ENV_ARENA);				\
	} while (0)

/*
 * The 6.1 harness runs the test body even after a SKIP() in the fixture
 * setup: each body starts with this.
 */
#define VM_SETUP_SKIPPED()						\
	do {								\
		if (ACTRACK_TEST_SKIPPED(_metadata))					\
			return;						\
	} while (0)

/* The module file in the test VM (vm-init loads it; $ACTRACK_KO overrides). */
const char *vm_module_path(void);

/* Load the module with @params.  Return: 0 or -errno of finit_module. */
int vm_module_load(const char *params);

/* Field 22 of /proc/PID/stat, parsed after the last ')' of the comm. */
int vm_start_ticks(pid_t pid, uint64_t *ticks);

/*
 * systemd's readiness protocol, the receiving side: a datagram socket bound
 * to a fresh path under $TMPDIR, written to @path (size @n), to be passed
 * as NOTIFY_SOCKET to a child only.  Return: the fd, or -errno.
 */
int vm_notify_open(char *path, size_t n);

/*
 * Wait up to @timeout_ms for one datagram on @fd (vm_notify_open()).
 * The bound is a failure detector, not a measurement: callers pass tens of
 * seconds.  Return: 0 when it is exactly "READY=1", -EBADMSG for any other
 * message (the monitor sends nothing else), -ETIMEDOUT when none came.
 */
int vm_notify_wait_ready(int fd, int timeout_ms);

/* /proc/self/cmdline with spaces: what the kernel reports for our forks. */
void vm_own_cmdline(char *buf, size_t len);

/*
 * Is process @pid's first thread in an io-wait on @fd, as a snapshot of
 * the module's arena shows it now?  With @sole, only if the process has
 * its record and that thread is its only one.
 */
bool vm_in_io_wait(pid_t pid, int fd, bool sole);

/* ---------------------------------------------------------------------- */
/* A reader's mapping of an arena                                          */
/* ---------------------------------------------------------------------- */

struct vm_map {
	int fd;
	struct actrack_layout lay;
	struct actrack_arena a;
};

/*
 * Map the arena of our uid (@select_uid < 0) or of @select_uid (SELECT,
 * read-only), read-only unless @writable.  Return 0 or -errno.
 */
int vm_map_open(struct vm_map *v, long select_uid, bool writable);

void vm_map_close(struct vm_map *v);

/*
 * Live records owned by (@pid, @start_ticks), of thread @tid only if
 * non-zero, of @type only if not ACTRACK_TYPE_ANY.  @start_ticks ~0ULL
 * matches any start time.
 */
int vm_count_owned(struct vm_map *v, uint32_t pid, uint64_t start_ticks,
		   uint32_t tid, uint32_t type);

/*
 * Live records of every process (any owner but pid 0, the arena's own):
 * published, and not claimed by a free under way (0xFFFFFFFF, which a
 * census of the blocks counts apart).
 */
int vm_count_live(struct vm_map *v);

/* ---------------------------------------------------------------------- */
/* Death reports                                                           */
/* ---------------------------------------------------------------------- */

#define VM_MAX_DEATHS	4096

/* Every report received, deep-copied. */
struct vm_deaths {
	unsigned int nr;
	struct actrack_death d[VM_MAX_DEATHS];
};

/* An actrack_monitor_dispatch() callback: @d appended to the vm_deaths
 * @arg (threads, activities, modules and stack sizes; no user data, no
 * stack bytes). */
void vm_keep_death(const struct actrack_death *d, void *arg);

void vm_deaths_free(struct vm_deaths *ds);

/*
 * A subscription to death reports and the deaths it collects (large: on
 * the heap): the fixture of the tests that watch their own processes
 * die (vm_watch_mine()), and of those that kill many processes of many
 * uids and count their reports (vm_watch_open()).
 */
struct vm_watch {
	struct actrack_monitor *m;
	struct vm_deaths *ds;
};

void vm_watch_close(struct vm_watch *w);

/* @flags: actrack_monitor_open()'s.  Return: 0, or -errno with nothing
 * left open. */
int vm_watch_open_flags(struct vm_watch *w, uint32_t flags);

/* Every uid's reports. */
int vm_watch_open(struct vm_watch *w);

/* The reports of our own uid's processes. */
int vm_watch_mine(struct vm_watch *w);

struct actrack_death *vm_find_death(struct vm_deaths *ds, uint32_t pid);

/* Dispatch until the report of @pid is in @ds or @timeout_ms passed.
 * Return: the report, or NULL. */
struct actrack_death *vm_wait_death(struct actrack_monitor *m,
				    struct vm_deaths *ds, uint32_t pid,
				    int timeout_ms);

const struct actrack_snap_thread *vm_death_thread(const struct actrack_death *d,
						  const char *name);

/* ---------------------------------------------------------------------- */
/* Victims: tracked child processes with known stacks                      */
/* ---------------------------------------------------------------------- */

/* The victims' workers' locks (lock_acquire &vm_locks[i]): same addresses
 * in every fork of the test binary. */
extern int vm_locks[64];

struct vm_victim_cfg {
	int threads;		/* workers, at most 64 */
	uint32_t phase;		/* set after attaching; 0 = leave it */
	long uid;		/* >= 0: setgid/setuid to it first */
	bool busy;		/* workers push/pop without pause */
	bool core;		/* RLIMIT_CORE unlimited */
};

struct vm_victim {
	pid_t pid;
	uint64_t start_ticks;
	int go_fd;		/* write a command byte to the victim */
};

/* Wait up to @ms for @n bytes on @fd.  Return 0 or -errno. */
int vm_read_n(int fd, int n, int ms);

/*
 * Start a victim and wait until its stacks are in place: @cfg->threads
 * workers, each with task 1000+i and lock_acquire &vm_locks[i] (busy
 * workers then push and pop a generic activity forever, so that a kill
 * lands in the middle of pushes), and a main thread that attached, set
 * the phase, pushed a "process wait" on its parent and obeys one command
 * byte (vm_victim_cmd()).  With @want_pid,
 * only a child that got that pid becomes the victim (-EAGAIN otherwise:
 * the child just exits), for forcing pid reuse.  Return 0 or -errno.
 */
int vm_victim_start_pid(const struct vm_victim_cfg *cfg,
			struct vm_victim *v, pid_t want_pid);

int vm_victim_start(const struct vm_victim_cfg *cfg, struct vm_victim *v);

/* Send a command ('x' with an exit code: exit(code); 'a': abort()); then
 * reap.  Return the
 * wait status or -errno. */
int vm_victim_cmd(struct vm_victim *v, char cmd, int code);

int vm_victim_kill(struct vm_victim *v, int sig);

/* ---------------------------------------------------------------------- */
/* cgroup v2                                                               */

#define VM_CG_ROOT	"/sys/fs/cgroup"

/* cgroup2 at VM_CG_ROOT, mounted if it is not.  Return: 0 or -errno. */
int vm_cg_mount(void);

/*
 * Write @val to the cgroup file @dir/@file.  Return: 0, -errno when it
 * does not open, -EIO when the write fails or falls short.
 */
int vm_cg_write(const char *dir, const char *file, const char *val);

/* Move @pid into the cgroup @dir.  Return: 0 or -errno. */
int vm_cg_move(const char *dir, pid_t pid);

/*
 * The "0::" line of /proc/@pid/cgroup (the cgroup v2 path as the
 * caller's cgroup namespace shows it) into @buf.  Return: 0 or -errno.
 */
int vm_cg_of(pid_t pid, char *buf, size_t len);

#endif /* ACTRACK_VM_UTIL_H */
