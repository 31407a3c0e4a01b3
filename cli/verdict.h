/* SPDX-License-Identifier: MIT */
/*
 * The verdict on one wait: what `actrack hangs` makes of a thread's
 * innermost activity, from what the arena recorded and, when the arena is
 * live, from what /proc says of the thread now.  The verdicts that depend
 * on another thread (a lock's holder, a joined thread, a child) are left
 * VERDICT_OWNED here, for the wait-for graph to decide (cmd_hangs.c).
 */
#ifndef ACTRACK_CLI_VERDICT_H
#define ACTRACK_CLI_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "actrack.h"

enum verdict {
	VERDICT_NONE,		/* not judged: young, moving, not a wait */
	VERDICT_IDLE,		/* waits for outside input or for time */
	VERDICT_BLOCKED,	/* for a tracked owner that makes progress */
	VERDICT_UNKNOWN,	/* a long wait whose owner cannot be seen */
	VERDICT_HANG,
	VERDICT_DEADLOCK,
	VERDICT_DEAD,		/* its process is gone: stale records */
	VERDICT_STALE,		/* the thread is not in its wait */
	VERDICT_OWNED,		/* for tracked owners: graph decides */
};

/* "idle", "blocked", "owner-unknown", "hang", "deadlock", "dead",
 * "stale-activity" (the JSON and text names). */
const char *verdict_name(enum verdict v);

/* Generic action 1: a sleep, as the preload library records nanosleep,
 * sleep, usleep and a poll or select without descriptors. */
#define VERDICT_ACT_SLEEP	ACTRACK_ACT_GENERIC_ACTION(1)

struct verdict_env {
	const struct actrack_snapshot *s;
	/* /proc describes the arena's processes as they are now (a live
	 * arena of this boot, not a saved image). */
	bool live;
	/* Live tracked processes, listed on first need (pipe ends). */
	uint32_t nr_pids;
	uint32_t *pids;
	bool pids_listed;
};

void verdict_env_init(struct verdict_env *e, const struct actrack_snapshot *s,
		      bool live);
void verdict_env_free(struct verdict_env *e);

/*
 * verdict_of_wait() - the verdict on activity @a, the innermost of thread
 * @t of @p, a wait (or a sleep) old enough that did not move; @why gets
 * its reason in a few words ("sleep", "a socket can end it (fd 8)").
 * Live: dead if the process no longer runs (or its pid was reused),
 * stale if the thread is gone or running (not in a system call), idle
 * for a sleep, a wait with a timeout, or one a socket, a terminal or a
 * pipe from outside the tracked processes can end, owner unknown for an
 * event wait and a wait that only internal sources (eventfd, signalfd, a
 * pipe between tracked processes, a file) can end, owned for a lock,
 * join or process wait.  A process of another pid namespace: idle for
 * sleeps and timeouts, owned, else owner unknown.  Not live (a saved
 * image, another boot): idle for sleeps and timeouts, owned for what the
 * graph can explain, else hang (nothing can be checked, as before
 * verdicts).
 */
enum verdict verdict_of_wait(struct verdict_env *e,
			     const struct actrack_snap_process *p,
			     const struct actrack_snap_thread *t,
			     const struct actrack_activity *a,
			     char *why, size_t len);

/* A sleep (VERDICT_ACT_SLEEP) or a wait (wg_is_wait()): what a verdict
 * is about. */
bool verdict_is_wait(uint8_t type);

/*
 * verdict_stale() - what `actrack dump` says of records: VERDICT_DEAD if
 * process @p no longer runs (@t NULL: the process alone), VERDICT_STALE if
 * thread @t's innermost activity is a wait or a sleep and the thread is
 * gone or running (not in it), else VERDICT_NONE; only for a live arena
 * and a process of our pid namespace; @why as for verdict_of_wait().
 */
enum verdict verdict_stale(struct verdict_env *e,
			   const struct actrack_snap_process *p,
			   const struct actrack_snap_thread *t,
			   char *why, size_t len);

/* utime + stime of thread @tid of @pid, in clock ticks, from
 * /proc/PID/task/TID/stat.  Return: false if it cannot be read. */
bool verdict_cpu_ticks(uint32_t pid, uint32_t tid, uint64_t *ticks);

/* Thread @tid of @pid runs now (it is not in a system call, or its state
 * is R): one look. */
bool verdict_thread_runs(uint32_t pid, uint32_t tid);

/*
 * verdict_untracked_runs() - a process wait whose process the arena does
 * not track (a child that never made a tracked call, say): does process
 * @pid, or for @pid 0 any child of process @waiter (its tasks' children
 * in /proc), use CPU (three looks, 50 ms apart)?  @why then names it.
 */
bool verdict_untracked_runs(uint32_t waiter, uint64_t pid, char *why,
			    size_t len);

#endif /* ACTRACK_CLI_VERDICT_H */
