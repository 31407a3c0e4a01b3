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
#include <stdlib.h>
#include <string.h>
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

ACTRACK_API void actrack_set_exit_callback(actrack_exit_fn fn, void *arg)
{
	pthread_mutex_lock(&launch_lock);
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
	pthread_mutex_lock(&launch_lock);
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

static bool forget_launched(pid_t pid, uint64_t *ticks)
{
	bool found = false;

	pthread_mutex_lock(&launch_lock);
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
	if (!forget_launched(pid, &ticks))
		return -ENOENT;
	pthread_mutex_lock(&launch_lock);
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

struct owner_key {
	uint32_t pid;
	uint64_t start_ticks;
};

static int cmp_owner(const void *x, const void *y)
{
	const struct owner_key *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start_ticks != b->start_ticks)
		return a->start_ticks < b->start_ticks ? -1 : 1;
	return 0;
}

ACTRACK_API int actrack_collect_garbage(void)
{
	struct actrack_arena *a = __actrack_arena();
	struct actrack_arena_iter it;
	struct owner_key *keys;
	uint32_t ref, type, max, n = 0;
	int freed = 0, ret;

	ret = __actrack_ensure_attached();
	if (ret)
		return ret;
	max = actrack_arena_max_blocks(a);	/* <= 4 Mi: no overflow */
	keys = malloc((max ? max : 1) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	actrack_arena_iter_init(&it, a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type)) &&
	       n < max) {
		struct actrack_owner *o;

		if (!actrack_arena_is_owned_type(type))
			continue;
		o = actrack_arena_get(a, ref, type, sizeof(*o));
		if (!o || !at_load(&o->data_id) || !o->pid)
			continue;
		keys[n].pid = o->pid;
		keys[n].start_ticks = o->start_ticks;
		n++;
	}
	qsort(keys, n, sizeof(*keys), cmp_owner);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t live;

		if (i && !cmp_owner(&keys[i], &keys[i - 1]))
			continue;
		/* Same pid, same start: alive.  Anything else: dead owner. */
		if (!actrack_read_start_ticks((pid_t)keys[i].pid, &live) &&
		    live == keys[i].start_ticks)
			continue;
		freed += actrack_arena_free_owner(a, keys[i].pid,
						  keys[i].start_ticks, 0);
	}
	free(keys);
	return freed;
}
