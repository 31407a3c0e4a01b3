// SPDX-License-Identifier: MIT
/*
 * What libactrack-preload.so costs an unmodified program: run as
 * `actrack run -- build/bench/preload` (bench/run does), it times the
 * wrapped calls the program binds to against the C library's own, taken
 * from libc.so.6 by dlsym(), in the same process and the same run:
 *
 *   preload_mutex_pair  uncontended pthread_mutex_lock + unlock (a trylock
 *                       and a held-set add, then a held-set remove)
 *   preload_mutex_pair_delta  the same as wrapped minus unwrapped, the
 *                       median of each round's difference (goal: 3 ns)
 *   preload_mutex_pair_threaded[_delta]  the same with a second thread
 *                       alive (blocked in a read): glibc's lock and
 *                       unlock skip their atomic while a process has
 *                       only ever had one thread, and so does the
 *                       wrapper; with two, both sides pay it
 *   preload_read        a 1-byte read() of /dev/zero: a system call that
 *                       returns at once (one io-wait push + pop)
 *   preload_pipe_rtt    a round trip through two pipes between two
 *                       threads, each read blocking until the other
 *                       writes (2 reads + 2 writes wrapped)
 *
 * The first two count the thread's CPU time (CLOCK_THREAD_CPUTIME_ID):
 * on these shared machines a wall clock mostly measures who else runs;
 * the round trip, which sleeps by design, counts wall time.
 * This file calls no actrack function: it is the unmodified program.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"

#define REPS	11

typedef int (*lock_fn)(pthread_mutex_t *);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);

struct calls {
	lock_fn lock, unlock;
	read_fn rd;
	write_fn wr;
};

static struct calls wrapped, real;

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double mutex_pair_ns(const struct calls *c, long n)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	uint64_t t0 = cpu_ns();

	for (long i = 0; i < n; i++) {
		c->lock(&m);
		c->unlock(&m);
	}
	return (double)(cpu_ns() - t0) / (double)n;
}

static double read_ns(const struct calls *c, int fd, long n)
{
	uint64_t t0 = cpu_ns();
	char b;

	for (long i = 0; i < n; i++)
		c->rd(fd, &b, 1);
	return (double)(cpu_ns() - t0) / (double)n;
}

struct pingpong {
	const struct calls *c;
	int to_peer[2], from_peer[2];
	long n;
};

static void *echo(void *arg)
{
	struct pingpong *p = arg;
	char b;

	for (long i = 0; i < p->n; i++) {
		p->c->rd(p->to_peer[0], &b, 1);
		p->c->wr(p->from_peer[1], &b, 1);
	}
	return NULL;
}

static double rtt_ns(const struct calls *c, long n)
{
	struct pingpong p = { .c = c, .n = n };
	pthread_t th;
	uint64_t t0;
	char b = 'x';

	if (pipe(p.to_peer) || pipe(p.from_peer))
		return 0;
	pthread_create(&th, NULL, echo, &p);
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		c->wr(p.to_peer[1], &b, 1);
		c->rd(p.from_peer[0], &b, 1);
	}
	t0 = bench_now_ns() - t0;
	pthread_join(th, NULL);
	close(p.to_peer[0]);
	close(p.to_peer[1]);
	close(p.from_peer[0]);
	close(p.from_peer[1]);
	return (double)t0 / (double)n;
}

/*
 * Medians of REPS alternating runs: load changes hit both sides.  With
 * @delta, also the median of the rounds' differences, against the
 * unwrapped median (what the wrapper adds, in ns).
 */
static void compare(const char *name, double (*f)(const struct calls *, long),
		    long n, bool delta)
{
	double w[REPS], r[REPS], d[REPS];
	char line[64];

	for (int i = 0; i < REPS; i++) {
		w[i] = f(&wrapped, n);
		r[i] = f(&real, n);
		d[i] = w[i] - r[i];
	}
	bench_line(name, bench_median(w, REPS), "ns", bench_median(r, REPS));
	if (!delta)
		return;
	snprintf(line, sizeof(line), "%s_delta", name);
	bench_line(line, bench_median(d, REPS), "ns", bench_median(r, REPS));
}

static int zero_fd = -1;

/* A second thread that only waits, so that the process is threaded. */
static void *idle(void *fd)
{
	char b;

	real.rd(*(int *)fd, &b, 1);
	return NULL;
}

static double read_zero(const struct calls *c, long n)
{
	return read_ns(c, zero_fd, n);
}

int main(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	int idle_pipe[2];
	pthread_t idler;

	/* Under actrack run the preload (self-contained: it exports only
	 * the calls it wraps) defines these before the C library. */
	if (!libc || dlsym(RTLD_DEFAULT, "pthread_mutex_lock") ==
	    dlsym(libc, "pthread_mutex_lock")) {
		printf("bench preload_mutex_pair SKIP not run under "
		       "`actrack run`\n");
		return 0;
	}
	wrapped = (struct calls){ pthread_mutex_lock, pthread_mutex_unlock,
				  read, write };
	real.lock = (lock_fn)dlsym(libc, "pthread_mutex_lock");
	real.unlock = (lock_fn)dlsym(libc, "pthread_mutex_unlock");
	real.rd = (read_fn)dlsym(libc, "read");
	real.wr = (write_fn)dlsym(libc, "write");
	if (!real.lock || !real.unlock || !real.rd || !real.wr ||
	    real.lock == wrapped.lock) {
		printf("bench preload_mutex_pair SKIP the C library's calls "
		       "are not found apart from the wrappers\n");
		return 0;
	}
	zero_fd = open("/dev/zero", O_RDONLY);
	compare("preload_mutex_pair", mutex_pair_ns, 2000000, true);
	if (pipe(idle_pipe) || pthread_create(&idler, NULL, idle,
					      &idle_pipe[0])) {
		printf("bench preload_mutex_pair_threaded SKIP no thread\n");
	} else {
		compare("preload_mutex_pair_threaded", mutex_pair_ns, 2000000,
			true);
		close(idle_pipe[1]);
		pthread_join(idler, NULL);
		close(idle_pipe[0]);
	}
	compare("preload_read", read_zero, 200000, false);
	compare("preload_pipe_rtt", rtt_ns, 5000, false);
	return 0;
}
