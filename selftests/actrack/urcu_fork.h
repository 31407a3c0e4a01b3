/* SPDX-License-Identifier: MIT */
/*
 * The body of lib_urcu_{memb,bp,qsbr}_fork: a liburcu client of one
 * flavour (each flavour's header maps the same rcu_* names, so one test
 * file per flavour) that uses libactrack from several threads and forks
 * with reader threads, a call_rcu worker and pushing threads alive.
 *
 *   documented: liburcu's fork protocol (README "Interaction with fork()"):
 *               call_rcu_before_fork(), for urcu-bp also
 *               urcu_bp_before_fork(); fork(); the matching after_fork
 *               calls in parent and child.
 *   naive:      a bare fork().
 *
 * Either way the child must push an activity of its own and exit 0, and
 * the parent must go on pushing.  A library that runs urcu fork handlers
 * of its own deadlocks in the documented case (urcu_bp_before_fork()
 * twice: the second call blocks on the grace-period lock the first took,
 * with every signal blocked), which the harness reports as a timeout.
 *
 * The including file defines, for its flavour:
 *   FLAVOUR                       a name for arena files
 *   URCU_REGISTER/UNREGISTER()    reader thread registration (bp: no-op)
 *   URCU_QS()                     a quiescent state (qsbr; others: no-op)
 *   URCU_QS_SLEEP()               wait a little, quiescent (qsbr: offline)
 *   URCU_BEFORE_FORK() etc.       the documented protocol
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "actrack.h"
#include "test_harness.h"

#define READERS	2

struct client {
	pthread_t th[READERS];
	int stop;
	int started;
	unsigned long reads;
};

struct cb {
	struct rcu_head head;
	int *count;
};

static void cb_done(struct rcu_head *head)
{
	struct cb *c = caa_container_of(head, struct cb, head);

	__atomic_fetch_add(c->count, 1, __ATOMIC_RELAXED);
	free(c);
}

static int callbacks;

/* A reader thread of the client: RCU read sections around tracked work. */
static void *reader(void *arg)
{
	struct client *c = arg;
	static int mu;

	URCU_REGISTER();
	actrack_thread_init("urcu-reader");
	__atomic_fetch_add(&c->started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		uint32_t tok;

		rcu_read_lock();
		tok = actrack_push_lock_acquire(&mu);
		__atomic_fetch_add(&c->reads, 1, __ATOMIC_RELAXED);
		actrack_pop(tok);
		rcu_read_unlock();
		URCU_QS();
	}
	URCU_UNREGISTER();
	return NULL;
}

static void attach_fresh(struct __test_metadata *_metadata, const char *tag)
{
	static char path[256];
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path,
		.flags = ACTRACK_INIT_NO_MODULE,
	};

	snprintf(path, sizeof(path), "%s/actrack-urcu-%s-%s-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", FLAVOUR, tag,
		 (int)getpid());
	unlink(path);
	if (getenv("ACTRACK_IN_VM") && !access(ACTRACK_DEVICE_PATH, F_OK)) {
		o.arena_path = NULL;
		o.flags &= ~ACTRACK_INIT_NO_MODULE;
		unsetenv(ACTRACK_ENV_ARENA);
	}
	ASSERT_EQ(0, actrack_init(&o));
}

static void client_start(struct __test_metadata *_metadata, struct client *c)
{
	struct cb *cb;

	memset(c, 0, sizeof(*c));
	URCU_REGISTER();
	for (int i = 0; i < READERS; i++)
		ASSERT_EQ(0, pthread_create(&c->th[i], NULL, reader, c));
	/* call_rcu starts the flavour's worker thread */
	cb = calloc(1, sizeof(*cb));
	ASSERT_NE(NULL, cb);
	cb->count = &callbacks;
	call_rcu(&cb->head, cb_done);
	while (__atomic_load_n(&c->started, __ATOMIC_ACQUIRE) < READERS ||
	       __atomic_load_n(&c->reads, __ATOMIC_RELAXED) < 1000)
		URCU_QS_SLEEP();
}

static void client_stop(struct client *c)
{
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < READERS; i++)
		pthread_join(c->th[i], NULL);
	URCU_UNREGISTER();
}

/* The child: an activity of its own, in a tracker of its own. */
static void child_pushes_and_exits(bool documented)
{
	uint32_t tok;
	int ok;

	/* The protocol gives the child a working read side (the forking
	 * thread's registration is its own): use it. */
	if (documented)
		rcu_read_lock();
	tok = actrack_push_task(4711);
	ok = tok == 1 && actrack_depth() == 1 && actrack__tls.tracker &&
	     actrack__tls.tracker->owner.pid == (uint32_t)getpid() &&
	     ACTRACK_THREAD_SLOTS(actrack__tls.tracker)[0].object == 4711;
	actrack_pop(tok);
	if (documented)
		rcu_read_unlock();
	/* _exit: the child holds a copy of the parent's call_rcu queue
	 * whose worker thread did not survive the fork, so a callback the
	 * worker had dequeued is unreachable here. LeakSanitizer's exit
	 * scan would call that a leak of the child; it is the parent's. */
	_exit(ok && actrack_depth() == 0 ? 0 : 3);
}

static void fork_while_busy(struct __test_metadata *_metadata, bool documented)
{
	struct client c;
	uint32_t tok, outer;
	int status;
	pid_t pid;

#ifdef ACTRACK_UNDER_TSAN
	/* Its runtime refuses to start threads in the child of a
	 * multi-threaded fork, which is what this test is about. */
	SKIP(return, "ThreadSanitizer cannot run threads after a multi-threaded fork");
#endif
	attach_fresh(_metadata, documented ? "doc" : "naive");
	outer = actrack_push_task(1);
	ASSERT_EQ(1U, outer);
	client_start(_metadata, &c);

	tok = actrack_push_process_wait(0);
	if (documented) {
		URCU_BEFORE_FORK();
		pid = fork();
		if (pid == 0) {
			URCU_AFTER_FORK_CHILD();
			child_pushes_and_exits(true);
		}
		URCU_AFTER_FORK_PARENT();
	} else {
		pid = fork();
		if (pid == 0)
			child_pushes_and_exits(false);
	}
	ASSERT_LT(0, pid);
	actrack_change(tok, (uint64_t)pid, 0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	actrack_pop(tok);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	/* The parent goes on: pushes, RCU, the library's slow paths. */
	ASSERT_EQ(2U, actrack_push_task(2));
	ASSERT_EQ(0, actrack_set_int(actrack_process_data(), "forked", pid));
	actrack_pop(2);
	client_stop(&c);
	synchronize_rcu();
	ASSERT_EQ(1U, actrack_depth());
	actrack_pop(outer);
}

TEST(documented_fork_with_threads_alive)
{
	fork_while_busy(_metadata, true);
}

TEST(naive_fork_with_threads_alive)
{
	fork_while_busy(_metadata, false);
}

TEST_HARNESS_MAIN
