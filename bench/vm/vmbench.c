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
 *
 * Then, with the module's arena at 4 MiB and again at 64 MiB (rmmod,
 * insmod arena_size=):
 *
 *   exit-to-report: a process of 1, 8 or 64 threads (each with a tracker
 *       and one activity) is SIGKILLed; the time from the exit the kernel
 *       records (death->exit_time_ns) to the report reaching a monitor,
 *       and to the module's cleanup counter moving (records freed),
 *       median and p99 (the largest of LAT_RUNS); baseline: the 1-thread
 *       figure of the 4 MiB arena.  A holder process of 128 tracked
 *       threads keeps the arena mapped (and its list 130 blocks long)
 *       meanwhile, as other tracked processes would.
 *   monitor at ~1,000 deaths/s: short-lived tracked processes forked at
 *       up to 1,000 a second for MON_SECONDS, a monitor receiving; the
 *       rate reached (TCG may not reach 1,000), the reports received and
 *       the kernel's drop counter, each against the deaths
 *
 * usage: vmbench [cost] [latency] [monitor] [stacks] (default: all four).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
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

/* ---- exit-to-report latency ------------------------------------------- */

#define LAT_RUNS	21
#define MON_SECONDS	3
#define MON_RATE	1000

static void *parked_thread(void *arg)
{
	actrack_push_task(2);
	for (;;)
		pause();
	return arg;
}

/* Child: @n threads with a tracker and an activity, then tell the parent. */
static int threads_child(int n, int fd)
{
	pthread_t th;
	char c = 1;

	actrack_push_task(1);
	for (int i = 1; i < n; i++)
		if (pthread_create(&th, NULL, parked_thread, NULL))
			return 2;
	/* a thread's tracker exists once it has pushed: wait for all */
	for (int i = 0; i < 10000; i++) {
		struct actrack_snapshot *s;
		uint32_t have = 0;

		if (!actrack_snapshot_take(NULL, 0, &s)) {
			for (uint32_t k = 0; k < s->nr_processes; k++)
				if (s->processes[k].pid == (uint32_t)getpid())
					have = s->processes[k].nr_threads;
			actrack_snapshot_free(s);
		}
		if (have >= (uint32_t)n)
			break;
		usleep(1000);
	}
	if (write(fd, &c, 1) != 1)
		return 3;
	for (;;)
		pause();
}

struct lat_wait {
	pid_t pid;
	uint64_t exit_ns;
	int got;
};

static void lat_cb(const struct actrack_death *d, void *arg)
{
	struct lat_wait *w = arg;

	if (d->pid == (uint32_t)w->pid) {
		w->exit_ns = d->exit_time_ns;
		w->got = 1;
	}
}

/* One kill: exit-to-report and exit-to-cleanup in us; -1 on failure. */
static int one_latency(struct actrack_monitor *m, int n, double *rep,
		       double *freed)
{
	struct actrack_kstats st0, st;
	struct lat_wait w = { 0 };
	uint64_t t_rep = 0, t_freed = 0, deadline;
	int p[2], status;
	char arg[16], fdarg[16], c;

	if (pipe(p))
		return -1;
	snprintf(arg, sizeof(arg), "%d", n);
	snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
	w.pid = fork();
	if (w.pid == 0) {
		close(p[0]);
		execl("/proc/self/exe", "vmbench", "child-threads", arg, fdarg,
		      (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (w.pid < 0 || read(p[0], &c, 1) != 1) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	if (actrack_monitor_stats(m, &st0))
		return -1;
	kill(w.pid, SIGKILL);
	deadline = bench_now_ns() + 30000000000ULL;
	while ((!t_rep || !t_freed) && bench_now_ns() < deadline) {
		if (!t_rep && actrack_monitor_dispatch(m, 1, lat_cb, &w) > 0 &&
		    w.got)
			t_rep = bench_now_ns();
		if (!t_freed && !actrack_monitor_stats(m, &st) &&
		    st.cleanups > st0.cleanups)
			t_freed = bench_now_ns();
	}
	waitpid(w.pid, &status, 0);
	if (!t_rep || !t_freed)
		return -1;
	*rep = (double)(t_rep - w.exit_ns) / 1e3;
	*freed = t_freed > w.exit_ns ? (double)(t_freed - w.exit_ns) / 1e3 : 0;
	return 0;
}

/*
 * A process of HOLDER_THREADS parked tracked threads for the time of the
 * measurements: an arena nobody maps is given back by the module, so
 * without it every kill would also free the arena and every new child
 * allocate and zero it again (64 MiB under TCG: a tenth of a second),
 * which is not what a machine with tracked processes running sees.
 */
#define HOLDER_THREADS	128

static pid_t start_holder(void)
{
	char arg[16], fdarg[16], c;
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	snprintf(arg, sizeof(arg), "%d", HOLDER_THREADS);
	snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		execl("/proc/self/exe", "vmbench", "child-threads", arg, fdarg,
		      (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid > 0 && read(p[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(p[0]);
	return pid;
}

static void stop_holder(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static void latency(const char *arena, double *base_rep, double *base_freed)
{
	static const int threads[] = { 1, 8, 64 };
	struct actrack_monitor *m;
	double rep[LAT_RUNS], freed[LAT_RUNS];
	char name[96];
	pid_t holder;

	if (actrack_monitor_open(0, &m)) {
		printf("bench vm_exit_to_report SKIP monitor_open failed\n");
		return;
	}
	holder = start_holder();
	if (holder < 0)
		printf("# %s: no holder process: the arena is freed between kills\n",
		       arena);
	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		int k, ok = 0;

		for (k = 0; k < LAT_RUNS; k++)
			ok += !one_latency(m, threads[t], &rep[ok], &freed[ok]);
		if (ok < 3) {
			printf("bench vm_exit_to_report_%s_%dthreads SKIP %d of %d kills reported\n",
			       arena, threads[t], ok, LAT_RUNS);
			continue;
		}
		{
			double med_r = bench_median(rep, ok);
			double p99_r = rep[ok - 1];	/* sorted: the largest */
			double med_f = bench_median(freed, ok);
			double p99_f = freed[ok - 1];

			if (!*base_rep) {
				*base_rep = med_r;
				*base_freed = med_f;
			}
			snprintf(name, sizeof(name),
				 "vm_exit_to_report_%s_%dthreads_median", arena,
				 threads[t]);
			bench_line(name, med_r, "us", *base_rep);
			snprintf(name, sizeof(name),
				 "vm_exit_to_report_%s_%dthreads_p99", arena,
				 threads[t]);
			bench_line(name, p99_r, "us", *base_rep);
			snprintf(name, sizeof(name),
				 "vm_exit_to_freed_%s_%dthreads_median", arena,
				 threads[t]);
			bench_line(name, med_f, "us", *base_freed);
			snprintf(name, sizeof(name),
				 "vm_exit_to_freed_%s_%dthreads_p99", arena,
				 threads[t]);
			bench_line(name, p99_f, "us", *base_freed);
		}
	}
	stop_holder(holder);
	actrack_monitor_close(m);
}

/* ---- the monitor at ~1,000 deaths a second --------------------------- */

static void count_cb(const struct actrack_death *d, void *arg)
{
	(*(long *)arg)++;
	(void)d;
}

static void monitor_rate(const char *arena)
{
	struct actrack_monitor *m;
	struct actrack_kstats st0, st;
	long received = 0, spawned = 0, lost_calls = 0;
	uint64_t t0, now, end, drain;
	char name[96];
	int r, status;

	pid_t holder;

	if (actrack_monitor_open(0, &m) || actrack_monitor_stats(m, &st0)) {
		printf("bench vm_monitor SKIP monitor_open failed\n");
		return;
	}
	holder = start_holder();
	t0 = bench_now_ns();
	end = t0 + MON_SECONDS * 1000000000ULL;
	while ((now = bench_now_ns()) < end) {
		/* pace: no more than MON_RATE a second since t0 */
		if ((double)spawned < (double)(now - t0) * MON_RATE / 1e9) {
			pid_t pid = fork();

			if (pid == 0) {
				actrack_pop(actrack_push_task(1));
				_exit(0);
			}
			if (pid > 0)
				spawned++;
		}
		while (waitpid(-1, &status, WNOHANG) > 0)
			;
		r = actrack_monitor_dispatch(m, 0, count_cb, &received);
		if (r == -ENOBUFS)
			lost_calls++;
	}
	end = bench_now_ns();
	drain = end + 10000000000ULL;
	while (received < spawned && bench_now_ns() < drain) {
		while (waitpid(-1, &status, WNOHANG) > 0)
			;
		r = actrack_monitor_dispatch(m, 100, count_cb, &received);
		if (r == -ENOBUFS)
			lost_calls++;
	}
	stop_holder(holder);
	while (waitpid(-1, &status, 0) > 0)
		;
	if (actrack_monitor_stats(m, &st)) {
		printf("bench vm_monitor SKIP stats failed\n");
		actrack_monitor_close(m);
		return;
	}
	snprintf(name, sizeof(name), "vm_monitor_%s_deaths_per_s", arena);
	bench_line(name, spawned / ((double)(end - t0) / 1e9), "deaths/s",
		   MON_RATE);
	snprintf(name, sizeof(name), "vm_monitor_%s_reports_received", arena);
	bench_line(name, (double)received, "reports", (double)spawned);
	snprintf(name, sizeof(name), "vm_monitor_%s_reports_dropped", arena);
	bench_line(name, (double)(st.reports_dropped - st0.reports_dropped),
		   "reports", (double)spawned);
	printf("# %s: %ld dispatch calls saw ENOBUFS\n", arena, lost_calls);
	actrack_monitor_close(m);
}

/*
 * What the stacks at death cost the exit path: the same kill of an
 * 8-thread process with stack capture (the default: 8 stacks copied in
 * the threads' signal delivery, carried and sent) and with stack_bytes=0
 * (the module as it was before), the module reloaded between the two.
 */
static void stacks_cost(void)
{
	static const char *const load[2] = { KO " stack_bytes=0", KO };
	double lat[2][LAT_RUNS], freed;
	int n[2] = { 0, 0 };

	for (int pass = 0; pass < 2; pass++) {
		struct actrack_monitor *m;
		pid_t holder;
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "insmod %s", load[pass]);
		if (sh("rmmod actrack") || sh(cmd) ||
		    actrack_monitor_open(0, &m)) {
			printf("bench vm_exit_stacks SKIP reload failed\n");
			return;
		}
		holder = start_holder();
		for (int k = 0; k < LAT_RUNS; k++)
			n[pass] += !one_latency(m, 8, &lat[pass][n[pass]],
						&freed);
		stop_holder(holder);
		actrack_monitor_close(m);
	}
	if (n[0] < 3 || n[1] < 3) {
		printf("bench vm_exit_stacks SKIP %d and %d of %d kills reported\n",
		       n[0], n[1], LAT_RUNS);
		return;
	}
	bench_line("vm_exit_to_report_8threads_with_stacks_median",
		   bench_median(lat[1], n[1]), "us",
		   bench_median(lat[0], n[0]));
}

static bool want(int argc, char **argv, const char *what)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], what))
			return true;
	return false;
}

static void sized_runs(int argc, char **argv)
{
	double base_rep = 0, base_freed = 0;

	if (want(argc, argv, "stacks"))
		stacks_cost();	/* leaves the module loaded as at boot */
	if (want(argc, argv, "latency"))
		latency("4mib", &base_rep, &base_freed);
	if (want(argc, argv, "monitor"))
		monitor_rate("4mib");
	if (sh("rmmod actrack") ||
	    sh("insmod " KO " arena_size=67108864")) {
		printf("bench vm_64mib SKIP reload with arena_size failed\n");
		return;
	}
	if (want(argc, argv, "latency"))
		latency("64mib", &base_rep, &base_freed);
	if (want(argc, argv, "monitor"))
		monitor_rate("64mib");
	if (sh("rmmod actrack") || sh("insmod " KO))
		printf("bench vm SKIP reload failed\n");
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
	if (argc == 4 && !strcmp(argv[1], "child-threads"))
		return threads_child(atoi(argv[2]), atoi(argv[3]));
	if (access("/dev/actrack", F_OK)) {
		printf("bench vm SKIP actrack.ko is not loaded\n");
		return 0;
	}
	/* Before this process attaches: the module is reloaded here. */
	if (want(argc, argv, "latency") || want(argc, argv, "monitor") ||
	    want(argc, argv, "stacks"))
		sized_runs(argc, argv);
	if (!want(argc, argv, "cost"))
		return 0;
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
