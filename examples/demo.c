// SPDX-License-Identifier: MIT
/*
 * actrack demo: a parent and three workers, each a separate process.
 *
 *   deadlock  two threads take two mutexes in opposite orders and hang
 *   crash     dies of SIGSEGV in the middle of a task
 *   clean     does some work and exits 0
 *
 * The parent records the launches, waits for the workers and prints what
 * it is told about their deaths (on a file arena through the exit
 * callback; with actrack.ko the kernel reports them: `actrack monitor`).
 * While it runs, `actrack dump` and `actrack hangs` show every stack.
 *
 * usage: demo [--hold SECONDS]   (how long to leave the deadlock alive)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "actrack.h"

static pthread_mutex_t mutex_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mutex_b = PTHREAD_MUTEX_INITIALIZER;
static uint32_t transfer_tid;		/* what the main thread joins */

/* Take @first, then wait for @second: with two threads crossing, a cycle. */
static void lock_both(pthread_mutex_t *first, pthread_mutex_t *second)
{
	uint32_t held, want;

	want = actrack_push_lock_acquire(first);
	pthread_mutex_lock(first);
	actrack_pop(want);
	held = actrack_push_lock_held(first);
	usleep(200 * 1000);
	want = actrack_push_lock_acquire(second);
	pthread_mutex_lock(second);		/* never returns */
	actrack_pop(want);
	pthread_mutex_unlock(second);
	pthread_mutex_unlock(first);
	actrack_pop(held);
}

static void *transfer_thread(void *arg)
{
	bool forward = arg != NULL;

	actrack_thread_init(forward ? "transfer-ab" : "transfer-ba");
	if (forward)
		__atomic_store_n(&transfer_tid, (uint32_t)gettid(),
				 __ATOMIC_RELEASE);
	ACTRACK_SCOPE(task, forward ? 1001 : 1002);
	if (forward)
		lock_both(&mutex_a, &mutex_b);
	else
		lock_both(&mutex_b, &mutex_a);
	return NULL;
}

static int worker_deadlock(void)
{
	pthread_t t1, t2;

	actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
	actrack_set_string(actrack_process_data(), "role", "ledger");
	pthread_create(&t1, NULL, transfer_thread, (void *)1);
	pthread_create(&t2, NULL, transfer_thread, NULL);
	while (!__atomic_load_n(&transfer_tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	{
		ACTRACK_SCOPE(thread_join, transfer_tid);
		pthread_join(t1, NULL);
	}
	pthread_join(t2, NULL);
	return 0;
}

static __attribute__((noinline)) int parse_request(const char *req)
{
	volatile const char *p = NULL;

	actrack_log("parsing %s", req);
	return p[0];			/* SIGSEGV */
}

static int worker_crash(void)
{
	struct actrack_user_data *ud;
	uint32_t tok;

	actrack_record_fatal_signals();
	actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
	actrack_thread_init("http-main");
	usleep(300 * 1000);
	tok = actrack_push_task(4711);
	ud = actrack_activity_data(tok);
	actrack_set_string(ud, "request", "GET /index.html");
	actrack_set_uint(ud, "bytes", 512);
	return parse_request("GET /index.html");
}

static int worker_clean(void)
{
	actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
	for (int i = 0; i < 3; i++) {
		ACTRACK_SCOPE(task, 2000 + i);
		actrack_log("job %d done", i);
		usleep(50 * 1000);
	}
	actrack_set_phase(ACTRACK_PHASE_SHUTDOWN_STARTED);
	return 0;
}

static void on_death(const struct actrack_death *d, void *arg)
{
	printf("demo: pid %u (%s) ", d->process.pid, d->process.cmdline);
	if (d->signal)
		printf("killed by signal %d%s", d->signal,
		       d->core_dumped ? " (core dumped)" : "");
	else
		printf("exited with code %d", d->exit_code);
	printf(", phase %s, %u thread(s)\n",
	       actrack_phase_name(d->process.phase), d->process.nr_threads);
	for (uint32_t i = 0; i < d->process.nr_threads; i++) {
		const struct actrack_snap_thread *t = &d->process.threads[i];

		printf("demo:   thread %u '%s'", t->tid, t->name);
		if (t->fatal_signo)
			printf(" fault signal %d at 0x%llx", t->fatal_signo,
			       (unsigned long long)t->fatal_addr);
		printf("\n");
		for (uint32_t k = t->nr_activities; k-- > 0;)
			printf("demo:     %s 0x%llx\n",
			       actrack_activity_name(t->activities[k].a.type),
			       (unsigned long long)t->activities[k].a.object);
	}
	fflush(stdout);
}

static pid_t launch(const char *role)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl("/proc/self/exe", "demo", "worker", role, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		actrack_record_process_launch(pid);
	return pid;
}

static void reap(pid_t pid)
{
	uint32_t tok = actrack_push_process_wait((uint64_t)pid);
	int status;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	actrack_pop(tok);
	actrack_record_process_exit(pid, status);
}

int main(int argc, char **argv)
{
	pid_t deadlock, crash, clean;
	int hold = 2, ret;

	if (argc == 3 && !strcmp(argv[1], "worker")) {
		char comm[16];

		/* exec'd through /proc/self/exe: name the process by role */
		snprintf(comm, sizeof(comm), "demo-%s", argv[2]);
		prctl(PR_SET_NAME, comm, 0, 0, 0);
		if (!strcmp(argv[2], "deadlock"))
			return worker_deadlock();
		if (!strcmp(argv[2], "crash"))
			return worker_crash();
		if (!strcmp(argv[2], "clean"))
			return worker_clean();
		return 2;
	}
	if (argc == 3 && !strcmp(argv[1], "--hold"))
		hold = atoi(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: %s [--hold SECONDS]\n", argv[0]);
		return 2;
	}
	ret = actrack_init(NULL);
	if (ret) {
		fprintf(stderr, "demo: actrack_init: %s\n", strerror(-ret));
		return 1;
	}
	actrack_set_exit_callback(on_death, NULL);
	actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
	actrack_thread_init("launcher");
	printf("demo: arena %s\n", actrack_backend() == ACTRACK_BACKEND_MODULE ?
	       "/dev/actrack (kernel module)" : "file-backed");
	deadlock = launch("deadlock");
	crash = launch("crash");
	clean = launch("clean");
	printf("demo: launched deadlock=%d crash=%d clean=%d\n", deadlock,
	       crash, clean);
	fflush(stdout);
	reap(clean);
	reap(crash);
	/* Leave the deadlock for the analyzer to find, then end it. */
	sleep((unsigned int)hold);
	kill(deadlock, SIGKILL);
	reap(deadlock);
	actrack_set_phase(ACTRACK_PHASE_SHUTDOWN_STARTED);
	printf("demo: done\n");
	return 0;
}
