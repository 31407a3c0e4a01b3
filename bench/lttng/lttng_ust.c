// SPDX-License-Identifier: MIT
/*
 * One LTTng-UST 2.13 event recorded into a snapshot-mode (flight-recorder)
 * session, next to an actrack push+pop on the module's clock word measured
 * in the same process.  bench/run starts the session daemon, creates the
 * session (lttng create --snapshot), enables actrack_bench:push and starts
 * it before running this program, which waits for its registration
 * (LTTNG_UST_REGISTER_TIMEOUT) and refuses to measure a disabled
 * tracepoint: a number for an event nobody records would flatter LTTng.
 *
 * `lttng_ust --loop N` records N events and nothing else, for bench/run's
 * callgrind count of instructions per event.
 *
 * Built only by `make bench` when pkg-config finds lttng-ust.
 * Medians of 9 runs; never an assertion.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACEPOINT_DEFINE
#define TRACEPOINT_CREATE_PROBES
#include "tp.h"

#include "actrack.h"
#include "bench.h"

#define N	2000000UL
#define RUNS	9

static volatile uint64_t clock_word = 1;

static __attribute__((noinline)) void lttng_loop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		tracepoint(actrack_bench, push, ACTRACK_ACT_TASK_RUN, i,
			   (unsigned long)ACTRACK_HERE());
		__asm__ volatile("" ::: "memory");
	}
}

static __attribute__((noinline)) void actrack_loop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		uint32_t tok = actrack_push_task(i);

		actrack_pop(tok);
		__asm__ volatile("" ::: "memory");
	}
}

static double measure(void (*fn)(unsigned long), unsigned long n)
{
	double r[RUNS];

	for (int k = 0; k < RUNS; k++) {
		uint64_t t0 = bench_now_ns();

		fn(n);
		r[k] = (double)(bench_now_ns() - t0) / (double)n;
	}
	return bench_median(r, RUNS);
}

int main(int argc, char **argv)
{
	char path[128];
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path,
		.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
	};
	double lttng_ns, word_ns;

	bool loop = argc == 3 && !strcmp(argv[1], "--loop");

	if (!tracepoint_enabled(actrack_bench, push)) {
		if (loop)
			return 3;
		printf("bench lttng_ust SKIP the tracepoint is not enabled "
		       "(no session daemon registered this process)\n");
		return 0;
	}
	/* --loop N: N events only, for callgrind (toggle-collect lttng_loop) */
	if (loop) {
		lttng_loop(strtoul(argv[1 + 1], NULL, 0));
		return 0;
	}
	snprintf(path, sizeof(path), "/tmp/actrack-bench-lttng-%d",
		 (int)getpid());
	if (actrack_init(&o) || actrack_thread_init("lttng")) {
		fprintf(stderr, "actrack: cannot attach\n");
		return 1;
	}
	unlink(path);
	actrack__tls.clock = &clock_word;

	word_ns = measure(actrack_loop, N * 10);
	lttng_ns = measure(lttng_loop, N);
	bench_line("lttng_ust_module_clock_word", word_ns, "ns", word_ns);
	bench_line("lttng_ust_snapshot_event", lttng_ns, "ns", word_ns);
	return 0;
}
