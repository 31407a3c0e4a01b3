// SPDX-License-Identifier: MIT
/*
 * Scaling: 1, 2 and (where the machine has them) 4 threads pushing and
 * popping at once on one file arena, each on its own tracker.  Throughput
 * (pairs per second, all threads together) is compared with one thread's
 * of the same run: with no cache line shared between trackers it should
 * double at 2 threads.  The false-sharing check is structural: the lines
 * spanned by the trackers (block header to last slot) are compared, and
 * the number of lines two trackers share is printed (goal 0).
 *
 * A shared machine may not give us the cores: the CPU time of each thread
 * is measured too, so that three more lines hold whatever the load: CPU
 * ns per pair at n threads against one thread's (goal 1.0: a shared line
 * would make each pair dearer while the other thread runs), and how much
 * the threads actually overlapped (their CPU time over n x wall time;
 * below 1 the wall-clock ratio measures the machine's other load).
 *
 * n threads are run only where this process may use n cpus (its
 * affinity mask, what nproc(1) prints); otherwise the figure is one line
 * "bench NAME SKIP skipped: C cores (nproc), N threads need N", never
 * silently left out.
 *
 * Two clocks: the file arena's coarse vDSO clock and the module's clock
 * word (a variable another thread keeps current, as in push_pop.c).
 * Medians of 5 runs; never an assertion.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "actrack.h"
#include "bench.h"

#define PAIRS	(8UL * 1000 * 1000)	/* per thread per run */
#define RUNS	5
#define MAX_THREADS 4

static volatile uint64_t clock_word = 1;
static int use_word;
static pthread_barrier_t start_bar, end_bar;
static uintptr_t tracker_lo[MAX_THREADS], tracker_hi[MAX_THREADS];
static double cpu_ns[MAX_THREADS];	/* this run's CPU time per thread */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct worker {
	int idx;
	int runs;
};

static __attribute__((noinline)) void pairs(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		uint32_t tok = actrack_push_task(i);

		actrack_pop(tok);
		__asm__ volatile("" ::: "memory");
	}
}

static void *worker(void *arg)
{
	struct worker *w = arg;

	actrack_thread_init("scaler");
	if (use_word)
		actrack__tls.clock = &clock_word;
	/* The tracker's block: 16-byte header before the tracker, slots after. */
	tracker_lo[w->idx] = (uintptr_t)actrack__tls.tracker -
			     sizeof(struct actrack_block);
	tracker_hi[w->idx] = (uintptr_t)(ACTRACK_THREAD_SLOTS(
		actrack__tls.tracker) + actrack__tls.slot_count) - 1;
	for (int r = 0; r < w->runs; r++) {
		uint64_t c0;

		pthread_barrier_wait(&start_bar);
		c0 = thread_cpu_ns();
		pairs(PAIRS);
		cpu_ns[w->idx] = (double)(thread_cpu_ns() - c0);
		pthread_barrier_wait(&end_bar);
	}
	return NULL;
}

struct result {
	double pairs_per_s;	/* all threads together, wall clock */
	double cpu_ns_per_pair;	/* mean over the threads */
	double overlap;		/* sum of CPU times / (n * wall) */
};

/* Medians of RUNS runs of @n threads. */
static struct result throughput(int n)
{
	pthread_t th[MAX_THREADS];
	struct worker w[MAX_THREADS];
	double r[RUNS], c[RUNS], ov[RUNS];

	pthread_barrier_init(&start_bar, NULL, (unsigned)n + 1);
	pthread_barrier_init(&end_bar, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		w[i] = (struct worker){ .idx = i, .runs = RUNS };
		pthread_create(&th[i], NULL, worker, &w[i]);
	}
	for (int k = 0; k < RUNS; k++) {
		uint64_t t0;

		pthread_barrier_wait(&start_bar);
		t0 = bench_now_ns();
		pthread_barrier_wait(&end_bar);
		double wall = (double)(bench_now_ns() - t0), sum = 0;

		for (int i = 0; i < n; i++)
			sum += cpu_ns[i];
		r[k] = (double)PAIRS * n * 1e9 / wall;
		c[k] = sum / n / (double)PAIRS;
		ov[k] = sum / (n * wall);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start_bar);
	pthread_barrier_destroy(&end_bar);
	return (struct result){ bench_median(r, RUNS), bench_median(c, RUNS),
				bench_median(ov, RUNS) };
}

/* Cache lines shared by any two of the last run's @n trackers. */
static int shared_lines(int n)
{
	int shared = 0;

	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			uintptr_t lo = tracker_lo[i] > tracker_lo[j] ?
				       tracker_lo[i] : tracker_lo[j];
			uintptr_t hi = tracker_hi[i] < tracker_hi[j] ?
				       tracker_hi[i] : tracker_hi[j];

			if (lo / 64 <= hi / 64)
				shared += (int)(hi / 64 - lo / 64 + 1);
		}
	return shared;
}

static volatile int stop;

static void *ticker(void *arg)
{
	while (!stop) {
		clock_word = bench_now_ns();
		usleep(1000);
	}
	return NULL;
}

/* The cpus this process may run on (nproc(1)), else the online count. */
static long usable_cpus(void)
{
	cpu_set_t set;

	if (!sched_getaffinity(0, sizeof(set), &set))
		return CPU_COUNT(&set);
	return sysconf(_SC_NPROCESSORS_ONLN);
}

int main(void)
{
	char path[128];
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path,
		.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
	};
	long cpus = usable_cpus();
	static const char *const clk[] = { "file", "word" };
	pthread_t tk;
	int ret;

	snprintf(path, sizeof(path), "/tmp/actrack-bench-scaling-%d",
		 (int)getpid());
	ret = actrack_init(&o);
	if (ret) {
		fprintf(stderr, "actrack_init: %s\n", strerror(-ret));
		return 1;
	}
	pthread_create(&tk, NULL, ticker, NULL);
	for (use_word = 0; use_word < 2; use_word++) {
		struct result one = throughput(1), t;
		char name[64];

		snprintf(name, sizeof(name), "scaling_%s_1_thread", clk[use_word]);
		bench_line(name, one.pairs_per_s / 1e6, "Mpairs/s",
			   one.pairs_per_s / 1e6);
		for (int n = 2; n <= MAX_THREADS; n *= 2) {
			snprintf(name, sizeof(name), "scaling_%s_%d_threads",
				 clk[use_word], n);
			if (cpus < n) {
				printf("bench %s SKIP skipped: %ld cores (nproc), %d threads need %d\n",
				       name, cpus, n, n);
				continue;
			}
			t = throughput(n);
			bench_line(name, t.pairs_per_s / 1e6, "Mpairs/s",
				   one.pairs_per_s / 1e6);
			snprintf(name, sizeof(name),
				 "scaling_%s_%d_threads_cpu_per_pair",
				 clk[use_word], n);
			bench_line(name, t.cpu_ns_per_pair, "ns",
				   one.cpu_ns_per_pair);
			snprintf(name, sizeof(name),
				 "scaling_%s_%d_threads_overlap", clk[use_word],
				 n);
			bench_line(name, t.overlap, "fraction", 1.0);
			if (n == 2) {
				snprintf(name, sizeof(name),
					 "scaling_%s_shared_cache_lines",
					 clk[use_word]);
				bench_line(name, shared_lines(2), "lines", 0);
			}
		}
	}
	stop = 1;
	pthread_join(tk, NULL);
	unlink(path);
	return 0;
}
