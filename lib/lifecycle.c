// SPDX-License-Identifier: MIT
/*
 * Cleanup after processes on arenas without the module (Chromium's
 * RecordProcessLaunch / RecordProcessExit / CleanupAfterProcess and its
 * process-exit callback), plus a garbage collector for records whose
 * process died without a parent that reported it.
 *
 * The identity of a process is (pid, start_ticks): a pid alone can be
 * reused at any moment, and freeing a reused pid's records would destroy a
 * live process's evidence.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

struct launched {
	uint32_t pid;
	uint64_t start_ticks;
};

static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct launched *launched;
static size_t nr_launched, cap_launched;

static actrack_exit_fn exit_fn;
static void *exit_arg;

/*
 * In a forked child (called from the fork handler, without blocking): the
 * parent's children are not the child's, and another thread may have held
 * the lock at fork time.
 */
static __actrack_fork_path void lifecycle_child(void)
{
	launch_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	nr_launched = 0;
}
ACTRACK_FORK_HOOK(lifecycle_fork, .child = lifecycle_child)

/* The lock, with the fork handlers installed before it is first held. */
static void launch_lock_take(void)
{
	__actrack_fork_arm();
	pthread_mutex_lock(&launch_lock);
}

ACTRACK_API void actrack_set_exit_callback(actrack_exit_fn fn, void *arg)
{
	launch_lock_take();
	exit_fn = fn;
	exit_arg = arg;
	pthread_mutex_unlock(&launch_lock);
}

ACTRACK_API int actrack_record_process_launch(pid_t pid)
{
	uint64_t ticks;
	int ret;

	if (pid <= 0)
		return -EINVAL;
	ret = actrack_read_start_ticks(pid, &ticks);
	if (ret)
		return ret;
	launch_lock_take();
	for (size_t i = 0; i < nr_launched; i++) {
		if (launched[i].pid == (uint32_t)pid) {
			launched[i].start_ticks = ticks;	/* pid reused */
			goto out;
		}
	}
	if (nr_launched == cap_launched) {
		size_t cap = cap_launched ? 2 * cap_launched : 16;
		struct launched *n = realloc(launched, cap * sizeof(*n));

		if (!n) {
			ret = -ENOMEM;
			goto out;
		}
		launched = n;
		cap_launched = cap;
	}
	launched[nr_launched++] = (struct launched){ (uint32_t)pid, ticks };
out:
	pthread_mutex_unlock(&launch_lock);
	return ret;
}

/*
 * Whether (@pid, @ticks) names a process that still runs: same start time
 * and not a zombie (a zombie has exited; only its parent's wait is due).
 */
static bool still_running(pid_t pid, uint64_t ticks)
{
	char path[64], buf[512], *p;
	uint64_t now;
	ssize_t n;
	int fd;

	if (actrack_read_start_ticks(pid, &now) || now != ticks)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	/* The state follows the last ')' of the command name. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return false;
	return p[2] != 'Z' && p[2] != 'X' && p[2] != 'x';
}

static bool find_launched(pid_t pid, uint64_t *ticks)
{
	bool found = false;

	launch_lock_take();
	for (size_t i = 0; i < nr_launched; i++) {
		if (launched[i].pid == (uint32_t)pid) {
			*ticks = launched[i].start_ticks;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&launch_lock);
	return found;
}

static bool forget_launched(pid_t pid, uint64_t *ticks)
{
	bool found = false;

	launch_lock_take();
	for (size_t i = 0; i < nr_launched; i++) {
		if (launched[i].pid == (uint32_t)pid) {
			*ticks = launched[i].start_ticks;
			launched[i] = launched[--nr_launched];
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&launch_lock);
	return found;
}

ACTRACK_API int actrack_record_process_exit(pid_t pid, int wait_status)
{
	struct actrack_arena *a = __actrack_arena();
	struct actrack_death death;
	actrack_exit_fn fn;
	uint64_t ticks;
	void *arg;
	int ret;

	if (pid <= 0)
		return -EINVAL;
	/* Attach first: a failure must not lose the child's entry. */
	ret = __actrack_ensure_attached();
	if (ret)
		return ret;
	if (!find_launched(pid, &ticks))
		return -ENOENT;
	/*
	 * Called before the child exited (or for a pid the caller never
	 * waited for): its records are live, and freeing them would make
	 * its later writes land in blocks that someone else reuses.  Keep
	 * the entry so that the call after waitpid() works.
	 */
	if (still_running(pid, ticks))
		return -EBUSY;
	if (!forget_launched(pid, &ticks))
		return -ENOENT;
	launch_lock_take();
	fn = exit_fn;
	arg = exit_arg;
	pthread_mutex_unlock(&launch_lock);
	/* With the module the kernel reports and cleans up by itself: the
	 * callback gets its report, through the monitor (lib/monitor.c). */
	if (__actrack_proc.map.backend == ACTRACK_BACKEND_MODULE)
		return fn ? __actrack_monitor_exit_report((uint32_t)pid, ticks,
				ACTRACK_EXIT_REPORT_TIMEOUT_MS, fn, arg) : 0;
	if (fn && !__actrack_build_death(a, (uint32_t)pid, ticks, wait_status,
					 &death)) {
		fn(&death, arg);
		__actrack_free_death(&death);
	}
	return actrack_arena_free_owner(a, (uint32_t)pid, ticks, 0);
}

ACTRACK_API int actrack_collect_garbage(void)
{
	struct actrack_collect_stats st;
	int ret;

	ret = __actrack_ensure_attached();
	if (ret)
		return ret;
	ret = __actrack_collect_dead(__actrack_arena(), &st);
	return ret ? ret : (int)st.records_freed;
}
