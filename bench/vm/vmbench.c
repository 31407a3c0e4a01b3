// SPDX-License-Identifier: MIT
/*
 * The kernel's cost, inside the VM (make bench-vm: scripts/vmtest --run
 * boots one kernel with actrack.ko loaded and runs this).  Under TCG
 * absolute times mean nothing, so every figure is a ratio of two loops
 * measured in the same boot:
 *
 *   untracked fork/exec/exit/wait, module loaded  vs  the module unloaded
 *       (rmmod, measured, insmod again: every process on the machine pays
 *       the exit/exec hooks; goal <= 1.02)
 *   tracked fork/exec/exit/wait (the child pushes, so it attaches to
 *       /dev/actrack and the kernel cleans up after it)  vs  untracked
 *   thread create/exit of a tracked process (each thread makes a tracker)
 *       vs  the same threads without a tracker
 *
 * Loaded and unloaded loops alternate (loaded, unloaded, loaded, ...) so
 * that drift hits both; medians of RUNS.  Never an assertion.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "actrack.h"
#include "bench.h"

#define LOOPS	60
#define RUNS	5	/* about 3 minutes under TCG */
#define KO	"/lib/modules/actrack.ko"

static double fork_exec_loop(const char *mode)
{
	uint64_t t0 = bench_now_ns();

	for (int i = 0; i < LOOPS; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			execl("/proc/self/exe", "vmbench", mode, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			return -1;
	}
	return (double)(bench_now_ns() - t0) / LOOPS / 1000.0;	/* us */
}

static void *thread_body(void *arg)
{
	if (arg)
		actrack_pop(actrack_push_task(1));
	return NULL;
}

static double thread_loop(bool tracked)
{
	uint64_t t0 = bench_now_ns();

	for (int i = 0; i < LOOPS; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, thread_body, tracked ? "" : NULL))
			return -1;
		pthread_join(th, NULL);
	}
	return (double)(bench_now_ns() - t0) / LOOPS / 1000.0;	/* us */
}

static int sh(const char *cmd)
{
	int r = system(cmd);

	return r == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	double loaded[RUNS], unloaded[RUNS], tracked[RUNS], untracked[RUNS];
	double th_on[RUNS], th_off[RUNS];

	if (argc == 2 && !strcmp(argv[1], "child-untracked"))
		return 0;
	if (argc == 2 && !strcmp(argv[1], "child-tracked")) {
		actrack_pop(actrack_push_task(1));
		return actrack_backend() == ACTRACK_BACKEND_MODULE ? 0 : 3;
	}
	if (access("/dev/actrack", F_OK)) {
		printf("bench vm SKIP actrack.ko is not loaded\n");
		return 0;
	}
	for (int k = 0; k < RUNS; k++) {
		loaded[k] = fork_exec_loop("child-untracked");
		tracked[k] = fork_exec_loop("child-tracked");
		if (sh("rmmod actrack")) {
			printf("bench vm_fork_exec_module_loaded SKIP rmmod failed\n");
			return 1;
		}
		unloaded[k] = fork_exec_loop("child-untracked");
		if (sh("insmod " KO)) {
			printf("bench vm SKIP insmod failed\n");
			return 1;
		}
		/* progress: TCG is slow, and a timeout should leave numbers */
		printf("# run %d: loaded %.0f us, tracked %.0f us, unloaded %.0f us\n",
		       k, loaded[k], tracked[k], unloaded[k]);
		fflush(stdout);
	}
	for (int k = 0; k < RUNS; k++) {
		if (loaded[k] < 0 || unloaded[k] < 0 || tracked[k] < 0) {
			printf("bench vm FAIL a child failed (run %d)\n", k);
			return 1;
		}
		untracked[k] = loaded[k];
	}
	/* Threads of this process, attached to the module's arena. */
	if (actrack_thread_init("vmbench") ||
	    actrack_backend() != ACTRACK_BACKEND_MODULE) {
		printf("bench vm_thread SKIP not attached to /dev/actrack\n");
		return 1;
	}
	for (int k = 0; k < RUNS; k++) {
		th_off[k] = thread_loop(false);
		th_on[k] = thread_loop(true);
	}
	{
		double off = bench_median(unloaded, RUNS);
		double on = bench_median(loaded, RUNS);
		double un = bench_median(untracked, RUNS);
		double tr = bench_median(tracked, RUNS);
		double t_off = bench_median(th_off, RUNS);
		double t_on = bench_median(th_on, RUNS);

		bench_line("vm_fork_exec_untracked_module_loaded", on, "us", off);
		bench_line("vm_fork_exec_tracked", tr, "us", un);
		bench_line("vm_thread_create_exit_tracked", t_on, "us", t_off);
	}
	return 0;
}
