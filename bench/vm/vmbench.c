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
 *   monitor at ~1,000 deaths/s: short-lived tracked processes forked by
 *       two threads at up to 1,000 a second for MON_SECONDS, a monitor
 *       thread receiving and a waiter thread in waitpid(); the rate
 *       reached (TCG may not reach 1,000), the reports received, lost and
 *       dropped (the kernel's counter), each against the deaths, and the
 *       exit-to-report latency (median, p99) against the exit-to-waitpid
 *       latency of the same deaths
 *   a thread's exit as the arena fills: thread create/exit tracked vs
 *       untracked, and thread exit-to-records-freed, in an empty 4 MiB
 *       arena and a 64 MiB one holding 0, 1,000, 2,000 and 4,000 parked
 *       trackers
 *
 *   idle wakeups: local timer interrupts (/proc/interrupts LOC, all
 *       CPUs) over IDLE_SECONDS of an idle machine, with the module loaded
 *       and one tracked process attached and asleep (pause()), against
 *       the module unloaded; per second.  The module must not wake an
 *       idle CPU.  6.12 VM, medians of 5: 136.4/s against 16.8/s with the
 *       clock word's timer every jiffy (ABI <= 1.7, 8.1x); 16.0/s against
 *       16.2/s since ABI 1.8 retired the word (kmod/clock.c).
 *
 *   the signal_generate probe (kmod/killer.c), paid by every signal sent
 *       on the machine: kill() of SIGRTMIN to an untracked process that
 *       blocks it at SIG_DFL (so the probe finds it fatal and looks the
 *       target up; real-time signals are never "already pending", past
 *       RLIMIT_SIGPENDING they are still generated, as LOSE_INFO), per
 *       kill() in ns, with the module loaded and no process tracked (the
 *       probe's first test returns), loaded with one tracked process (the
 *       whole untracked path: the fatality test and the hash lookup), and
 *       unloaded, alternating in one boot.  Goal: within noise.
 *
 *   push+pop on a persistent arena: a forked child attaches and times
 *       PP_OPS push+pop pairs, with the module loaded with persist= (its
 *       arena in the reserve_mem= region of scripts/vmtest --persist,
 *       mapped with remap_pfn_range) against loaded without it (vmalloc),
 *       the same arena_size, alternating reloads, medians of RUNS; in ns
 *       per pair.  Both are plain stores to mapped RAM: goal, the same.
 *       Without the region (a boot without --persist): a SKIP line.
 *
 * usage: vmbench [cost] [latency] [monitor] [threadexit] [stacks] [idle]
 * [signals] [persist] (default: all eight).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
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

/* The two lines of a latency: "@prefix_median" and "@prefix_p99", in us. */
static void bench_med_p99(const char *prefix, double med, double med_base,
			  double p99, double p99_base)
{
	char name[192];

	snprintf(name, sizeof(name), "%s_median", prefix);
	bench_line(name, med, "us", med_base);
	snprintf(name, sizeof(name), "%s_p99", prefix);
	bench_line(name, p99, "us", p99_base);
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

	if (d->process.pid == (uint32_t)w->pid) {
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

/*
 * The parent's side of a child @pid that writes one byte on pipe @p when
 * it is ready: @pid, or -1 (the child, killed and reaped, never was).
 */
static pid_t await_ready(pid_t pid, int p[2])
{
	char c;

	close(p[1]);
	if (pid > 0 && read(p[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(p[0]);
	return pid;
}

/* A child "vmbench MODE N FD" that says on FD when it is ready. */
static pid_t start_parked(const char *mode, int n)
{
	char arg[16], fdarg[16];
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	snprintf(arg, sizeof(arg), "%d", n);
	snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		execl("/proc/self/exe", "vmbench", mode, arg, fdarg,
		      (char *)NULL);
		_exit(127);
	}
	return await_ready(pid, p);
}

static pid_t start_holder(void)
{
	return start_parked("child-threads", HOLDER_THREADS);
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
				 "vm_exit_to_report_%s_%dthreads", arena,
				 threads[t]);
			bench_med_p99(name, med_r, *base_rep, p99_r, *base_rep);
			snprintf(name, sizeof(name),
				 "vm_exit_to_freed_%s_%dthreads", arena,
				 threads[t]);
			bench_med_p99(name, med_f, *base_freed, p99_f,
				      *base_freed);
		}
	}
	stop_holder(holder);
	actrack_monitor_close(m);
}

/* ---- the monitor at ~1,000 deaths a second --------------------------- */

/*
 * Short-lived tracked processes forked by MON_SPAWNERS threads, paced to
 * MON_RATE a second in all, for MON_SECONDS.  Two more threads listen:
 * one receives the reports (actrack_monitor_dispatch), one waits for the
 * children (a blocking waitpid(-1), the notification every parent already
 * has).  Each stamps the arrival of its notification; both latencies are
 * taken from the exit time the kernel put in the report, so the waitpid()
 * figure is the same deaths' baseline in the same run.
 */
#define MON_SPAWNERS	2
#define MON_BURST	400	/* children exiting at once */
#define MON_STALL_S	30	/* drain: nothing moved for this long */
#define MON_DRAIN_S	600	/* drain: at most */
#define MON_MAX		(MON_RATE * MON_SECONDS + 256)

struct mon_event {
	pid_t pid;
	uint64_t exit_ns;	/* reports only */
	uint64_t at_ns;		/* when this thread had it */
};

struct mon_run {
	struct actrack_monitor *m;
	pid_t holder;
	uint64_t t0, end;
	volatile int stop_mon, stop_wait;
	long spawned;		/* atomic: __atomic builtins */
	long nr_reports, nr_waits, enobufs;
	struct mon_event reports[MON_MAX], waits[MON_MAX];
};

static void mon_report_cb(const struct actrack_death *d, void *arg)
{
	struct mon_run *r = arg;

	long n = r->nr_reports;

	if (n < MON_MAX) {
		r->reports[n] = (struct mon_event){
			.pid = (pid_t)d->process.pid, .exit_ns = d->exit_time_ns,
			.at_ns = bench_now_ns(),
		};
		__atomic_store_n(&r->nr_reports, n + 1, __ATOMIC_RELEASE);
	}
}

static void *mon_listener(void *arg)
{
	struct mon_run *r = arg;

	while (!r->stop_mon)
		if (actrack_monitor_dispatch(r->m, 50, mon_report_cb, r) ==
		    -ENOBUFS)
			r->enobufs++;
	return NULL;
}

static void *mon_waiter(void *arg)
{
	struct mon_run *r = arg;
	int status;

	for (;;) {
		pid_t pid = waitpid(-1, &status, 0);

		if (pid > 0) {
			long n = r->nr_waits;

			if (pid != r->holder && n < MON_MAX) {
				r->waits[n] = (struct mon_event){
					.pid = pid, .at_ns = bench_now_ns(),
				};
				__atomic_store_n(&r->nr_waits, n + 1,
						 __ATOMIC_RELEASE);
			}
			continue;
		}
		if (errno == EINTR)
			continue;
		if (r->stop_wait)	/* ECHILD and nothing more to come */
			break;
		usleep(1000);
	}
	return NULL;
}

static void *mon_spawner(void *arg)
{
	struct mon_run *r = arg;
	double share = (double)MON_RATE / MON_SPAWNERS / 1e9;
	long mine = 0;
	uint64_t now;

	while ((now = bench_now_ns()) < r->end) {
		pid_t pid;

		if ((double)mine >= (double)(now - r->t0) * share) {
			usleep(200);
			continue;
		}
		pid = fork();
		if (pid == 0) {
			actrack_pop(actrack_push_task(1));
			_exit(0);
		}
		if (pid > 0) {
			mine++;
			__atomic_fetch_add(&r->spawned, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static int mon_cmp_pid(const void *a, const void *b)
{
	const struct mon_event *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->at_ns < y->at_ns ? -1 : x->at_ns > y->at_ns;
}

/* The value below which 99% of @n sorted values lie (nearest rank). */
static double bench_p99(double *v, int n)
{
	int k = (99 * n + 99) / 100;

	qsort(v, (size_t)n, sizeof(v[0]), bench_cmp_double);
	return v[k > 0 ? k - 1 : 0];
}

/*
 * A burst: @n tracked children forked and attached beforehand, each
 * blocked reading a pipe, all released at once by closing it.  The rate
 * TCG cannot reach by forking is reached by the exits themselves.
 * Return: the write end to close, or -1 (children reaped).
 */
static int burst_prepare(struct mon_run *r, int n)
{
	int go[2], ready[2];
	char c;

	if (pipe(go) || pipe(ready))
		return -1;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			uint32_t tok;

			close(go[1]);
			close(ready[0]);
			tok = actrack_push_task(1);
			c = actrack_backend() == ACTRACK_BACKEND_MODULE;
			if (write(ready[1], &c, 1) != 1 ||
			    read(go[0], &c, 1) < 0)
				_exit(2);
			actrack_pop(tok);
			_exit(0);
		}
		if (pid < 0)
			break;
		r->spawned++;
	}
	close(go[0]);
	close(ready[1]);
	for (long i = 0; i < r->spawned; i++)
		if (read(ready[0], &c, 1) != 1 || !c) {
			close(ready[0]);
			close(go[1]);
			while (wait(NULL) > 0)
				;
			return -1;
		}
	close(ready[0]);
	return go[1];
}

static void monitor_rate(const char *arena, int burst)
{
	struct actrack_kstats st0, st;
	pthread_t sp[MON_SPAWNERS], lis, wai;
	uint64_t first_exit = UINT64_MAX, last_exit = 0;
	uint64_t last_rep = 0, last_wait = 0;
	struct actrack_monitor *m2 = NULL;
	double *rep, *wt;
	long matched = 0;
	struct mon_run *r;
	char name[160], what[64];
	int go = -1;

	r = calloc(1, sizeof(*r));
	rep = calloc(MON_MAX, sizeof(*rep));
	wt = calloc(MON_MAX, sizeof(*wt));
	if (!r || !rep || !wt || actrack_monitor_open(0, &r->m) ||
	    actrack_monitor_stats(r->m, &st0)) {
		printf("bench vm_monitor SKIP monitor_open failed\n");
		goto out;
	}
	if (actrack_monitor_open(0, &m2))
		m2 = NULL;	/* then only reaps and reports show progress */
	if (burst)
		snprintf(what, sizeof(what), "%s_burst%d", arena, burst);
	else
		snprintf(what, sizeof(what), "%s", arena);
	r->holder = start_holder();
	if (burst) {
		go = burst_prepare(r, burst);
		if (go < 0) {
			printf("bench vm_monitor_%s SKIP %ld of %d children attached\n",
			       what, r->spawned, burst);
			stop_holder(r->holder);
			goto out;
		}
	}
	if (pthread_create(&lis, NULL, mon_listener, r) ||
	    pthread_create(&wai, NULL, mon_waiter, r)) {
		printf("bench vm_monitor SKIP pthread_create failed\n");
		exit(1);
	}
	r->t0 = bench_now_ns();
	if (burst) {
		close(go);	/* all of them exit now */
	} else {
		r->end = r->t0 + MON_SECONDS * 1000000000ULL;
		for (int i = 0; i < MON_SPAWNERS; i++)
			if (pthread_create(&sp[i], NULL, mon_spawner, r))
				exit(1);
		for (int i = 0; i < MON_SPAWNERS; i++)
			pthread_join(sp[i], NULL);
	}
	r->end = bench_now_ns();
	/*
	 * Every child reaped and reported, as long as something still moves:
	 * a burst of exits can starve the module's cleanup worker for tens
	 * of seconds under TCG, and the exits themselves take that long at
	 * 64 MiB.  Progress is a reap, a report, or the kernel's cleanups
	 * counter (read on a second handle: the listener owns the first);
	 * the drain ends after MON_STALL_S without any, or MON_DRAIN_S in
	 * all.  Waiting here also keeps the next section from measuring
	 * this one's backlog.
	 */
	{
		uint64_t last_move = r->end, next_stats = 0, cleanups = 0;
		long waits = -1, reports = -1;

		for (;;) {
			uint64_t now = bench_now_ns();
			long w = __atomic_load_n(&r->nr_waits, __ATOMIC_ACQUIRE);
			long rp = __atomic_load_n(&r->nr_reports,
						  __ATOMIC_ACQUIRE);

			if (w >= r->spawned && rp >= r->spawned)
				break;
			if (w != waits || rp != reports) {
				waits = w;
				reports = rp;
				last_move = now;
			}
			if (m2 && now >= next_stats &&
			    !actrack_monitor_stats(m2, &st)) {
				if (st.cleanups != cleanups)
					last_move = now;
				cleanups = st.cleanups;
				next_stats = now + 1000000000ULL;
			}
			if (now - last_move > MON_STALL_S * 1000000000ULL ||
			    now - r->end > MON_DRAIN_S * 1000000000ULL)
				break;
			usleep(10000);
		}
	}
	r->stop_mon = 1;
	pthread_join(lis, NULL);
	r->stop_wait = 1;
	stop_holder(r->holder);	/* the waiter may reap it: either is fine */
	pthread_join(wai, NULL);
	if (actrack_monitor_stats(r->m, &st)) {
		printf("bench vm_monitor SKIP stats failed\n");
		goto out;
	}
	/* each report with the waitpid() of the same child */
	qsort(r->waits, (size_t)r->nr_waits, sizeof(r->waits[0]), mon_cmp_pid);
	for (long i = 0; i < r->nr_reports; i++) {
		pid_t pid = r->reports[i].pid;
		struct mon_event *w = NULL;
		long lo = 0, hi = r->nr_waits;

		/* the first wait of this pid after the exit (pids recycle) */
		while (lo < hi) {
			long mid = (lo + hi) / 2;

			if (r->waits[mid].pid < pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < r->nr_waits && r->waits[lo].pid == pid; lo++)
			if (r->waits[lo].at_ns >= r->reports[i].exit_ns) {
				w = &r->waits[lo];
				break;
			}
		if (!w)
			continue;
		if (r->reports[i].exit_ns < first_exit)
			first_exit = r->reports[i].exit_ns;
		if (r->reports[i].exit_ns > last_exit)
			last_exit = r->reports[i].exit_ns;
		if (r->reports[i].at_ns > last_rep)
			last_rep = r->reports[i].at_ns;
		if (w->at_ns > last_wait)
			last_wait = w->at_ns;
		rep[matched] = (double)(r->reports[i].at_ns -
					r->reports[i].exit_ns) / 1e3;
		wt[matched] = (double)(w->at_ns - r->reports[i].exit_ns) / 1e3;
		matched++;
	}
	if (!burst) {
		snprintf(name, sizeof(name), "vm_monitor_%s_deaths_per_s", what);
		bench_line(name, r->spawned / ((double)(r->end - r->t0) / 1e9),
			   "deaths/s", MON_RATE);
	}
	snprintf(name, sizeof(name), "vm_monitor_%s_reports_received", what);
	bench_line(name, (double)matched, "reports", (double)r->spawned);
	snprintf(name, sizeof(name), "vm_monitor_%s_reports_lost", what);
	bench_line(name, (double)(r->spawned - matched), "reports",
		   (double)r->spawned);
	snprintf(name, sizeof(name), "vm_monitor_%s_reports_dropped", what);
	bench_line(name, (double)(st.reports_dropped - st0.reports_dropped),
		   "reports", (double)r->spawned);
	snprintf(name, sizeof(name), "vm_monitor_%s_waitpid_received", what);
	bench_line(name, (double)r->nr_waits, "exits", (double)r->spawned);
	/* lost ones: never built (cleanups), or sent and not received? */
	snprintf(name, sizeof(name), "vm_monitor_%s_kernel_cleanups", what);
	bench_line(name, (double)(st.cleanups - st0.cleanups), "deaths",
		   (double)r->spawned);
	/*
	 * Per subscriber: the stats handle is subscribed too (opening one
	 * subscribes), so two per death.  Its reports are never read: the
	 * library stashes those that arrive during its stats queries (256
	 * at most, the rest discarded), which keeps its socket from
	 * filling; should it fill anyway, the drop counter above counts
	 * that handle's drops too.  The listener's own handle is never
	 * queried during the run: a query there could discard reports
	 * beyond the stash.
	 */
	snprintf(name, sizeof(name), "vm_monitor_%s_kernel_reports_sent", what);
	bench_line(name, (double)(st.reports_sent - st0.reports_sent),
		   "reports", (double)r->spawned * (m2 ? 2 : 1));
	printf("# %s: drained %.1f s after the last spawn; %ld reports in all\n",
	       what, (double)(bench_now_ns() - r->end) / 1e9, r->nr_reports);
	if (matched >= 3) {
		double rep_med = bench_median(rep, (int)matched);
		double wt_med = bench_median(wt, (int)matched);

		if (burst) {
			/* the exits as the kernel stamped them: the death
			 * rate the burst reached */
			double exits = (double)(last_exit - first_exit) / 1e9;
			double reps = (double)(last_rep - first_exit) / 1e9;
			double waits = (double)(last_wait - first_exit) / 1e9;

			snprintf(name, sizeof(name),
				 "vm_monitor_%s_deaths_per_s", what);
			bench_line(name, exits > 0 ? matched / exits : 0,
				   "deaths/s", MON_RATE);
			/* all reports in, against all waitpid()s in */
			snprintf(name, sizeof(name),
				 "vm_monitor_%s_reports_per_s", what);
			bench_line(name, matched / reps, "reports/s",
				   matched / waits);
		}
		snprintf(name, sizeof(name), "vm_monitor_%s_exit_to_report",
			 what);
		bench_med_p99(name, rep_med, wt_med,
			      bench_p99(rep, (int)matched),
			      bench_p99(wt, (int)matched));
	} else {
		printf("bench vm_monitor_%s_exit_to_report SKIP %ld reports matched a waitpid()\n",
		       what, matched);
	}
	printf("# %s: baseline of the latencies: waitpid() of the same deaths; %ld dispatch calls saw ENOBUFS\n",
	       what, r->enobufs);
out:
	if (m2)
		actrack_monitor_close(m2);
	if (r && r->m)
		actrack_monitor_close(r->m);
	free(r);
	free(rep);
	free(wt);
}

/* ---- a thread's exit as the arena fills ------------------------------ */

/*
 * The exit probe of a thread only notes its tid and queues its arena's
 * cleanup (O(1)); the cleanup then frees the thread's records.  Measured
 * in a forked child attached to the module (the parent must stay
 * detached to reload it), with FILL parked tracked threads of filler
 * processes in the arena meanwhile:
 *
 *   thread create/exit of a tracked process  vs  the same loop of threads
 *       without a tracker, alternating, medians of RUNS
 *   thread exit-to-records-freed of a thread the kernel cleans up after
 *       (it leaves by SYS_exit, see exiting_thread()): pthread_join()
 *       returning to the module's records_freed counter moving (GET_STATS
 *       polled: one netlink round trip), median and p99 of LAT_RUNS;
 *       baseline: the empty 4 MiB arena's figure of the same boot
 *
 * A thread that returns normally frees its own tracker (the library's
 * key destructor); the kernel's batch for it then finds nothing to free,
 * so records_freed cannot time it.
 */
#define FILL_PER_PROC	1000
#define FILL_STACK	(64 * 1024)

static long filler_ready;

static void *filler_thread(void *arg)
{
	actrack_push_task(2);
	__atomic_fetch_add(&filler_ready, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return arg;
}

/* Child: @n parked threads with a tracker each (small stacks). */
static int filler_child(int n, int fd)
{
	pthread_attr_t at;
	pthread_t th;
	char c = 1;

	actrack_push_task(1);
	if (pthread_attr_init(&at) || pthread_attr_setstacksize(&at, FILL_STACK))
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&th, &at, filler_thread, NULL))
			return 3;
	while (__atomic_load_n(&filler_ready, __ATOMIC_ACQUIRE) < n)
		usleep(1000);
	if (write(fd, &c, 1) != 1)
		return 4;
	for (;;)
		pause();
}

/*
 * A thread that leaves by the exit system call, as a thread of a runtime
 * that does not run pthread key destructors would: the library's
 * destructor, which gives a tracker back when a thread returns, does not
 * run, so the kernel's cleanup frees it (pthread_join() still works: the
 * kernel clears and wakes the tid word at exit).
 */
static void *exiting_thread(void *arg)
{
	actrack_push_task(1);
	syscall(SYS_exit, 0);
	return arg;
}

struct texit_result {
	int ok;			/* 0: failed; else exit-to-freed samples */
	double on, off;		/* create/exit us, tracked / untracked */
	double freed_med, freed_p99;
	uint64_t bytes_used, arena_size;
};

/* Poll GET_STATS until records_freed stops moving (earlier exits done). */
static int stats_settle(struct actrack_monitor *m, struct actrack_kstats *st)
{
	struct actrack_kstats prev;

	if (actrack_monitor_stats(m, &prev))
		return -1;
	for (int i = 0; i < 500; i++) {
		usleep(20000);
		if (actrack_monitor_stats(m, st))
			return -1;
		if (st->records_freed == prev.records_freed &&
		    st->cleanups == prev.cleanups)
			return 0;
		prev = *st;
	}
	return -1;
}

static void thread_exit_child(int fd)
{
	struct texit_result res = { 0 };
	double on[RUNS], off[RUNS], lat[LAT_RUNS];
	struct actrack_monitor *m;
	struct actrack_kstats st0, st;
	int n = 0;

	if (actrack_thread_init("vmbench") ||
	    actrack_backend() != ACTRACK_BACKEND_MODULE ||
	    actrack_monitor_open(0, &m))
		goto out;
	for (int k = 0; k < RUNS; k++) {
		off[k] = thread_loop(false);
		on[k] = thread_loop(true);
	}
	res.off = bench_median(off, RUNS);
	res.on = bench_median(on, RUNS);
	for (int k = 0; k < LAT_RUNS; k++) {
		uint64_t t_join, deadline;
		pthread_t th;

		if (stats_settle(m, &st0) ||
		    pthread_create(&th, NULL, exiting_thread, NULL))
			continue;
		pthread_join(th, NULL);
		t_join = bench_now_ns();
		deadline = t_join + 10000000000ULL;
		while (bench_now_ns() < deadline) {
			if (!actrack_monitor_stats(m, &st) &&
			    st.records_freed > st0.records_freed) {
				lat[n++] = (double)(bench_now_ns() - t_join) / 1e3;
				break;
			}
		}
	}
	if (n >= 3) {
		res.freed_med = bench_median(lat, n);
		res.freed_p99 = bench_p99(lat, n);
		res.ok = n;
	}
	if (!actrack_monitor_stats(m, &st)) {
		res.bytes_used = st.bytes_used;
		res.arena_size = st.arena_size;
	}
	actrack_monitor_close(m);
out:
	if (write(fd, &res, sizeof(res)) != sizeof(res))
		_exit(1);
	_exit(0);
}

static void thread_exit(const char *arena, int fill, double *base_med,
			double *base_p99)
{
	pid_t fillers[16], pid;
	struct texit_result res = { 0 };
	int nf = 0, p[2], status;
	char name[128];

	for (int left = fill; left > 0 && nf < 16; left -= FILL_PER_PROC) {
		fillers[nf] = start_parked("child-filler",
					   left < FILL_PER_PROC ? left :
					   FILL_PER_PROC);
		if (fillers[nf] < 0)
			break;
		nf++;
	}
	if (nf * FILL_PER_PROC < fill) {
		printf("bench vm_thread_exit_%s_%d_filled SKIP filler processes failed\n",
		       arena, fill);
		goto out;
	}
	if (pipe(p))
		goto out;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		thread_exit_child(p[1]);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &res, sizeof(res)) != sizeof(res))
		res.ok = -1;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (res.ok < 0 || !res.on) {
		printf("bench vm_thread_exit_%s_%d_filled SKIP not attached to /dev/actrack\n",
		       arena, fill);
		goto out;
	}
	snprintf(name, sizeof(name), "vm_thread_exit_%s_%d_filled_arena_used",
		 arena, fill);
	bench_line(name, (double)res.bytes_used, "bytes",
		   (double)res.arena_size);
	snprintf(name, sizeof(name), "vm_thread_create_exit_tracked_%s_%d_filled",
		 arena, fill);
	bench_line(name, res.on, "us", res.off);
	if (!res.ok) {
		printf("bench vm_thread_exit_to_freed_%s_%d_filled SKIP records_freed did not move\n",
		       arena, fill);
		goto out;
	}
	if (!*base_med) {
		*base_med = res.freed_med;
		*base_p99 = res.freed_p99;
	}
	snprintf(name, sizeof(name), "vm_thread_exit_to_freed_%s_%d_filled",
		 arena, fill);
	bench_med_p99(name, res.freed_med, *base_med, res.freed_p99,
		      *base_p99);
out:
	while (nf > 0)
		stop_holder(fillers[--nf]);
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

/* ---- idle wakeups ------------------------------------------------------ */

#define IDLE_SECONDS	5

/* Local timer interrupts so far, summed over the CPUs (the LOC line). */
static long long loc_interrupts(void)
{
	char line[4096];
	long long sum = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		while (*p == ' ')
			p++;
		if (strncmp(p, "LOC:", 4))
			continue;
		sum = 0;
		for (p += 4;; p = end) {
			long long v = strtoll(p, &end, 10);

			if (end == p)
				break;
			sum += v;
		}
		break;
	}
	if (f)
		fclose(f);
	return sum;
}

/* LOC interrupts per second over IDLE_SECONDS of sleep. */
static double idle_rate(void)
{
	long long a = loc_interrupts(), b;

	sleep(IDLE_SECONDS);
	b = loc_interrupts();
	return a < 0 || b < 0 ? -1 : (double)(b - a) / IDLE_SECONDS;
}

static void idle_wakeups(void)
{
	double on[RUNS], off[RUNS];
	int ready[2];
	char c;

	for (int k = 0; k < RUNS; k++) {
		pid_t pid;

		if (pipe(ready))
			return;
		pid = fork();
		if (pid == 0) {
			/* A tracked server waiting for work: attached, idle. */
			actrack_push_task(1);
			if (actrack_backend() != ACTRACK_BACKEND_MODULE ||
			    write(ready[1], "r", 1) != 1)
				_exit(3);
			for (;;)
				pause();
		}
		close(ready[1]);
		if (pid < 0 || read(ready[0], &c, 1) != 1) {
			printf("bench vm_idle SKIP tracked sleeper failed\n");
			return;
		}
		close(ready[0]);
		sleep(1);	/* the fork's own activity settles */
		on[k] = idle_rate();
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (sh("rmmod actrack")) {
			printf("bench vm_idle SKIP rmmod failed\n");
			return;
		}
		sleep(1);
		off[k] = idle_rate();
		if (sh("insmod " KO)) {
			printf("bench vm SKIP insmod failed\n");
			return;
		}
		printf("# idle run %d: %.1f LOC/s tracked sleeper, %.1f LOC/s "
		       "unloaded\n", k, on[k], off[k]);
		fflush(stdout);
		if (on[k] < 0 || off[k] < 0) {
			printf("bench vm_idle SKIP no LOC line in /proc/interrupts\n");
			return;
		}
	}
	bench_line("vm_idle_wakeups_tracked_sleeper", bench_median(on, RUNS),
		   "/s", bench_median(off, RUNS));
}

/* ---- the signal_generate probe ----------------------------------------- */

#define SIG_SENDS	20000

/* ns per kill() of SIGRTMIN to @pid, over SIG_SENDS sends. */
static double kill_loop(pid_t pid)
{
	uint64_t t0 = bench_now_ns();

	for (int i = 0; i < SIG_SENDS; i++)
		if (kill(pid, SIGRTMIN))
			return -1;
	return (double)(bench_now_ns() - t0) / SIG_SENDS;
}

/* An untracked child blocking SIGRTMIN at SIG_DFL, asleep; or -1. */
static pid_t start_sig_target(void)
{
	sigset_t set;
	pid_t pid;
	int p[2];
	char c = 1;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		sigemptyset(&set);
		sigaddset(&set, SIGRTMIN);
		if (sigprocmask(SIG_BLOCK, &set, NULL) ||
		    write(p[1], &c, 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	return await_ready(pid, p);
}

static void signals_cost(void)
{
	double idle[RUNS], busy[RUNS], off[RUNS];
	pid_t target = start_sig_target(), holder;

	if (target < 0) {
		printf("bench vm_kill SKIP no target\n");
		return;
	}
	for (int k = 0; k < RUNS; k++) {
		idle[k] = kill_loop(target);
		holder = start_parked("child-threads", 1);
		busy[k] = holder > 0 ? kill_loop(target) : -1;
		stop_holder(holder);
		if (sh("rmmod actrack")) {
			printf("bench vm_kill SKIP rmmod failed\n");
			break;
		}
		off[k] = kill_loop(target);
		if (sh("insmod " KO)) {
			printf("bench vm_kill SKIP insmod failed\n");
			break;
		}
		if (idle[k] < 0 || busy[k] < 0 || off[k] < 0) {
			printf("bench vm_kill FAIL a kill() failed (run %d)\n",
			       k);
			break;
		}
		printf("# signals run %d: loaded %.0f ns, loaded+tracked %.0f "
		       "ns, unloaded %.0f ns\n", k, idle[k], busy[k], off[k]);
		fflush(stdout);
		if (k == RUNS - 1) {
			double base = bench_median(off, RUNS);

			bench_line("vm_kill_untracked_module_loaded",
				   bench_median(idle, RUNS), "ns", base);
			bench_line("vm_kill_untracked_one_tracked",
				   bench_median(busy, RUNS), "ns", base);
		}
	}
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
}

/* ---- push+pop on a persistent arena ----------------------------------- */

#define PP_OPS		2000000
#define PERSIST_LABEL	"actrack_vmtest"	/* scripts/vmtest --persist */

/* rmmod (waiting out the last fds' release), then insmod with @params. */
static int reload_ko(const char *params)
{
	char cmd[256];

	for (int i = 0; i < 200 && sh("rmmod actrack 2>/dev/null"); i++)
		usleep(50 * 1000);
	snprintf(cmd, sizeof(cmd), "insmod " KO " %s", params);
	return sh(cmd);
}

struct pp_result {
	double ns;		/* per push+pop pair */
	int persistent;		/* ACTRACK_LAYOUT_PERSISTENT of its arena */
};

/*
 * A forked child attaches to the module's arena and times PP_OPS pairs.
 * Return: its figures, ns < 0 when it could not.
 */
static struct pp_result push_pop_child(void)
{
	struct pp_result r = { .ns = -1 };
	int p[2];
	pid_t pid;

	if (pipe(p))
		return r;
	pid = fork();
	if (pid == 0) {
		struct actrack_layout lay;
		uint64_t t0;
		int fd;

		close(p[0]);
		if (actrack_thread_init("pushpop") ||
		    actrack_backend() != ACTRACK_BACKEND_MODULE)
			_exit(2);
		fd = open("/dev/actrack", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, ACTRACK_IOC_LAYOUT, &lay))
			_exit(3);
		close(fd);
		r.persistent = !!(lay.flags & ACTRACK_LAYOUT_PERSISTENT);
		for (int i = 0; i < PP_OPS / 10; i++)	/* warm up */
			actrack_pop(actrack_push_task(1));
		t0 = bench_now_ns();
		for (int i = 0; i < PP_OPS; i++)
			actrack_pop(actrack_push_task((uint64_t)i));
		r.ns = (double)(bench_now_ns() - t0) / PP_OPS;
		_exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 4);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &r, sizeof(r)) != sizeof(r))
		r.ns = -1;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return r;
}

static void persist_cost(void)
{
	double vm[RUNS], pe[RUNS];
	struct pp_result r;

	for (int k = 0; k < RUNS; k++) {
		if (reload_ko("persist=" PERSIST_LABEL)) {
			printf("bench vm_push_pop_persistent SKIP no reserve_mem= "
			       "region " PERSIST_LABEL " (scripts/vmtest "
			       "--persist, Linux 6.12+)\n");
			reload_ko("");
			return;
		}
		r = push_pop_child();
		if (r.ns < 0 || !r.persistent) {
			printf("bench vm_push_pop_persistent FAIL %s\n",
			       r.ns < 0 ? "the child could not push" :
			       "its arena is not in the region");
			reload_ko("");
			return;
		}
		pe[k] = r.ns;
		r = (reload_ko("") ? (struct pp_result){ .ns = -1 } :
		     push_pop_child());
		if (r.ns < 0 || r.persistent) {
			printf("bench vm_push_pop_vmalloc FAIL %s\n",
			       r.ns < 0 ? "the child could not push" :
			       "its arena is in the region");
			return;
		}
		vm[k] = r.ns;
		printf("# run %d: push+pop persistent %.1f ns, vmalloc %.1f ns\n",
		       k, pe[k], vm[k]);
		fflush(stdout);
	}
	bench_line("vm_push_pop_vmalloc", bench_median(vm, RUNS), "ns",
		   bench_median(vm, RUNS));
	bench_line("vm_push_pop_persistent", bench_median(pe, RUNS), "ns",
		   bench_median(vm, RUNS));
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
	double base_rep = 0, base_freed = 0, te_med = 0, te_p99 = 0;

	if (want(argc, argv, "stacks"))
		stacks_cost();	/* leaves the module loaded as at boot */
	if (want(argc, argv, "latency"))
		latency("4mib", &base_rep, &base_freed);
	if (want(argc, argv, "monitor")) {
		monitor_rate("4mib", 0);
		/* a quarter of the burst too: is a report's cost per death
		 * flat, or does it grow with the attached processes? */
		monitor_rate("4mib", MON_BURST / 4);
		monitor_rate("4mib", MON_BURST);
	}
	if (want(argc, argv, "threadexit"))
		thread_exit("4mib", 0, &te_med, &te_p99);
	if (sh("rmmod actrack") ||
	    sh("insmod " KO " arena_size=67108864")) {
		printf("bench vm_64mib SKIP reload with arena_size failed\n");
		return;
	}
	if (want(argc, argv, "latency"))
		latency("64mib", &base_rep, &base_freed);
	if (want(argc, argv, "monitor")) {
		monitor_rate("64mib", 0);
		monitor_rate("64mib", MON_BURST);
	}
	if (want(argc, argv, "threadexit"))
		for (int f = 0; f <= 4000; f = f ? f * 2 : 1000)
			thread_exit("64mib", f, &te_med, &te_p99);
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
	if (argc == 4 && !strcmp(argv[1], "child-filler"))
		return filler_child(atoi(argv[2]), atoi(argv[3]));
	if (access("/dev/actrack", F_OK)) {
		printf("bench vm SKIP actrack.ko is not loaded\n");
		return 0;
	}
	/* Before this process attaches: the module is reloaded here. */
	if (want(argc, argv, "idle"))
		idle_wakeups();
	if (want(argc, argv, "signals"))
		signals_cost();
	if (want(argc, argv, "persist"))
		persist_cost();
	if (want(argc, argv, "latency") || want(argc, argv, "monitor") ||
	    want(argc, argv, "stacks") || want(argc, argv, "threadexit"))
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
