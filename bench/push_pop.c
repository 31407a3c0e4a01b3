// SPDX-License-Identifier: MIT
/*
 * Cost of one push+pop, printed next to baselines measured in the same run:
 *
 *   bare stores      the same slot stores, depth release-store, pop and
 *                    version bump into a private struct: the floor.
 *   bare + coarse    the floor plus clock_gettime(CLOCK_MONOTONIC_COARSE).
 *   file arena       libactrack on a file-backed arena (vDSO coarse clock).
 *   clock word       libactrack with a clock word updated by another thread,
 *                    which is what a push costs on the module's arena (the
 *                    kernel keeps that word; see kmod/clock.c).
 *   unguarded pop    libactrack's push with the pop as it was before it
 *                    refused tokens above the depth (a copy below): the
 *                    guard's cost is the difference to "file arena".
 *   no arena         a push+pop when no arena is usable: $ACTRACK_ARENA
 *                    names a missing directory (attach failed), or the
 *                    arena is full and the thread has no tracker.  Both
 *                    are dropped pushes (token 0) that retry at most once
 *                    a second, so this is what a broken setup costs.
 *   precise clock    the floor plus clock_gettime(CLOCK_MONOTONIC):
 *                    Chromium's way (its ActivityTracker stamps each
 *                    push with base::TimeTicks::Now()), for comparison.
 *
 * Numbers are the median of 9 runs of N iterations each; these machines
 * are noisy, so no number here is ever an assertion.  Each is one line
 * "bench NAME value=... unit=ns baseline=FLOOR ratio=..." (bench.h).
 *
 * `push_pop --loop VARIANT N` runs only N pairs of one variant (floor,
 * chromium, file, word) in its loop function, for bench/run's callgrind
 * count of instructions per pair.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "actrack.h"
#include "bench.h"

#define N	20000000UL
#define RUNS	9

struct fake {
	uint32_t depth, version;
	struct actrack_activity slots[8];
};

static struct fake fake;

enum clock_kind { CLK_NONE, CLK_COARSE, CLK_PRECISE };

static __attribute__((noinline)) void bare(unsigned long n,
					    enum clock_kind ck)
{
	for (unsigned long i = 0; i < n; i++) {
		uint32_t d = __atomic_load_n(&fake.depth, __ATOMIC_RELAXED);
		struct actrack_activity *s = &fake.slots[d & 7];
		struct timespec ts = { 0, 0 };

		if (ck == CLK_COARSE)
			clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		else if (ck == CLK_PRECISE)
			clock_gettime(CLOCK_MONOTONIC, &ts);
		s->time_ns = (uint64_t)ts.tv_nsec;
		s->origin = ACTRACK_HERE();
		s->object = i;
		s->info = 0;
		s->user_data = 0;
		s->type = ACTRACK_ACT_TASK_RUN;
		__atomic_store_n(&fake.depth, d + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&fake.depth, d, __ATOMIC_RELAXED);
		__atomic_store_n(&fake.version, fake.version + 1,
				 __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__asm__ volatile("" ::: "memory");
	}
}

static __attribute__((noinline)) void lib_push_pop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		uint32_t tok = actrack_push_task(i);

		actrack_pop(tok);
		__asm__ volatile("" ::: "memory");
	}
}

/* actrack_pop() before the token guard (a token above the depth raised it). */
static inline __attribute__((always_inline)) void old_pop(uint32_t token)
{
	struct actrack_thread *t = actrack__tls.tracker;
	uint32_t v;

	if (__builtin_expect(token == 0 || t == NULL, 0))
		return;
	__atomic_store_n(&t->depth, token - 1, __ATOMIC_RELAXED);
	v = __atomic_load_n(&t->version, __ATOMIC_RELAXED);
	__atomic_store_n(&t->version, v + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static __attribute__((noinline)) void lib_push_old_pop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		uint32_t tok = actrack_push_task(i);

		old_pop(tok);
		__asm__ volatile("" ::: "memory");
	}
}

static double measure(void (*fn)(unsigned long, int), int arg)
{
	double r[RUNS];

	for (int k = 0; k < RUNS; k++) {
		uint64_t t0 = bench_now_ns();

		fn(N / 4, arg);
		r[k] = (double)(bench_now_ns() - t0) / (double)(N / 4);
	}
	return bench_median(r, RUNS);
}

static void run_bare(unsigned long n, int ck)
{
	bare(n, (enum clock_kind)ck);
}

static void run_lib(unsigned long n, int old)
{
	if (old)
		lib_push_old_pop(n);
	else
		lib_push_pop(n);
}

static volatile uint64_t clock_word;
static volatile int stop;

static void *ticker(void *arg)
{
	while (!stop) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		clock_word = (uint64_t)ts.tv_sec * 1000000000ULL +
			     (uint64_t)ts.tv_nsec;
		usleep(1000);
	}
	return NULL;
}

/* Threads that hold a tracker until released (they fill the arena). */
static pthread_mutex_t fill_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fill_cv = PTHREAD_COND_INITIALIZER;
static int fill_ready, fill_release;

static void *fill_one(void *arg)
{
	int *ret = arg;

	*ret = actrack_thread_init("filler");
	pthread_mutex_lock(&fill_mu);
	fill_ready++;
	pthread_cond_broadcast(&fill_cv);
	while (!fill_release)
		pthread_cond_wait(&fill_cv, &fill_mu);
	pthread_mutex_unlock(&fill_mu);
	return NULL;
}

static void *measure_in_thread(void *arg)
{
	double *out = arg;

	*out = measure(run_lib, 0);
	return NULL;
}

/*
 * In a child process (its own attach): a 64 KiB arena filled with 64-slot
 * trackers of threads that stay alive, then push+pop in a new thread that
 * cannot get one.  Return: ns per pair, or a negative number.
 */
static double measure_full_arena(void)
{
	enum { MAX_FILL = 64 };
	double ns = -1;
	int pfd[2], status;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		char path[128];
		struct actrack_opts o = {
			.sz = sizeof(o), .arena_path = path,
			.file_size = ACTRACK_ARENA_MIN_SIZE,
			.stack_slots = ACTRACK_THREAD_MAX_SLOTS,
			.flags = ACTRACK_INIT_NO_MODULE |
				 ACTRACK_INIT_NO_MODULES,
		};
		pthread_t th[MAX_FILL], m;
		int ret[MAX_FILL], n, k;

		snprintf(path, sizeof(path), "/tmp/actrack-bench-full-%d",
			 (int)getpid());
		if (actrack_init(&o))
			_exit(1);
		/* one at a time, until a thread finds no room for its tracker */
		for (n = 0; n < MAX_FILL; n++) {
			if (pthread_create(&th[n], NULL, fill_one, &ret[n]))
				break;
			pthread_mutex_lock(&fill_mu);
			while (fill_ready < n + 1)
				pthread_cond_wait(&fill_cv, &fill_mu);
			pthread_mutex_unlock(&fill_mu);
			if (ret[n]) {
				n++;
				break;
			}
		}
		if (!n || !ret[n - 1])
			_exit(1);	/* never full */
		pthread_create(&m, NULL, measure_in_thread, &ns);
		pthread_join(m, NULL);
		pthread_mutex_lock(&fill_mu);
		fill_release = 1;
		pthread_cond_broadcast(&fill_cv);
		pthread_mutex_unlock(&fill_mu);
		for (k = 0; k < n; k++)
			pthread_join(th[k], NULL);
		unlink(path);
		if (write(pfd[1], &ns, sizeof(ns)) != sizeof(ns))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return ns;
}

/*
 * One variant only, for callgrind (--toggle-collect on bare or
 * lib_push_pop): no timing, no ticker (the clock word is a plain
 * variable: its load is the same instruction).
 */
static int loop_only(const char *variant, unsigned long n)
{
	char path[128];
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path,
		.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
	};

	if (!strcmp(variant, "floor")) {
		bare(n, CLK_NONE);
		return 0;
	}
	if (!strcmp(variant, "chromium")) {
		bare(n, CLK_PRECISE);
		return 0;
	}
	snprintf(path, sizeof(path), "/tmp/actrack-bench-loop-%d",
		 (int)getpid());
	if (actrack_init(&o) || actrack_thread_init("loop"))
		return 1;
	unlink(path);
	if (!strcmp(variant, "word"))
		actrack__tls.clock = &clock_word;
	else if (strcmp(variant, "file"))
		return 2;
	lib_push_pop(n);
	return 0;
}

int main(int argc, char **argv)
{
	char path[128];
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path,
		.flags = ACTRACK_INIT_NO_MODULE,
	};
	const volatile uint64_t *saved;
	double floor_ns, coarse_ns, precise_ns, file_ns, word_ns, old_ns;
	double old_word_ns, noarena_ns, full_ns;
	pthread_t th;
	int ret;

	if (argc == 4 && !strcmp(argv[1], "--loop"))
		return loop_only(argv[2], strtoul(argv[3], NULL, 0));
	if (argc != 1) {
		fprintf(stderr, "usage: push_pop [--loop floor|chromium|file|word N]\n");
		return 2;
	}

	/* Before anything attaches: a full arena in a child of its own, then
	 * an environment that names no usable arena. */
	full_ns = measure_full_arena();
	setenv(ACTRACK_ENV_ARENA, "/nonexistent-actrack-dir/arena", 1);
	noarena_ns = measure(run_lib, 0);
	unsetenv(ACTRACK_ENV_ARENA);

	snprintf(path, sizeof(path), "/tmp/actrack-bench-%d", (int)getpid());
	ret = actrack_init(&o);
	if (ret) {
		fprintf(stderr, "actrack_init: %s\n", strerror(-ret));
		return 1;
	}
	if (actrack_thread_init("bench")) {
		fprintf(stderr, "no tracker\n");
		return 1;
	}
	floor_ns = measure(run_bare, CLK_NONE);
	coarse_ns = measure(run_bare, CLK_COARSE);
	precise_ns = measure(run_bare, CLK_PRECISE);
	file_ns = measure(run_lib, 0);
	old_ns = measure(run_lib, 1);

	/* The module's arena: a clock word another agent keeps current. */
	pthread_create(&th, NULL, ticker, NULL);
	saved = actrack__tls.clock;
	actrack__tls.clock = &clock_word;
	word_ns = measure(run_lib, 0);
	old_word_ns = measure(run_lib, 1);
	actrack__tls.clock = saved;
	stop = 1;
	pthread_join(th, NULL);
	unlink(path);

	/* Baseline of every line: the bare stores of the same run. */
	bench_line("push_pop_floor", floor_ns, "ns", floor_ns);
	bench_line("push_pop_module_clock_word", word_ns, "ns", floor_ns);
	bench_line("push_pop_file_arena", file_ns, "ns", floor_ns);
	bench_line("push_pop_floor_coarse_clock", coarse_ns, "ns", floor_ns);
	bench_line("push_pop_chromium_monotonic", precise_ns, "ns", floor_ns);
	bench_line("push_pop_file_unguarded_pop", old_ns, "ns", floor_ns);
	bench_line("push_pop_word_unguarded_pop", old_word_ns, "ns", floor_ns);
	bench_line("push_pop_no_arena_attach_failed", noarena_ns, "ns",
		   floor_ns);
	bench_line("push_pop_no_arena_full", full_ns, "ns", floor_ns);
	return 0;
}
