// SPDX-License-Identifier: MIT
/*
 * vm_persist's victim (vm_persist.h): the process whose machine dies
 * under it, in known waits, and how the image of its boot is searched
 * for it.  No harness here: it runs in the test's child, which must never
 * ASSERT (vm_util.h), and says what went wrong by its exit code.
 */
#include "vm_persist.h"

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

void victim(int ready_fd, uint64_t value)
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

const struct actrack_snap_process *
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
