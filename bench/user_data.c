// SPDX-License-Identifier: MIT
/*
 * User data: the cost of one setter call, per kind of set, on a file arena.
 *
 *   set_int_existing   rewrite an integer field in place
 *   set_string32       rewrite a 32-byte string in place
 *   new_key            append a new integer field
 *
 * on process data (names found through the library's hash index; in the
 * first release that index was liburcu's cds_lfht) and on an activity's
 * data (owner-only, found by scanning its few fields).  The baseline of
 * each line is the bare push+pop floor of push_pop.c measured here too: a
 * set is a slow path next to it, and the ratio says how slow.
 *
 * The index's share of a set is an instruction count, not a time: bench/run
 * runs `user_data --loop KIND N` under callgrind and sums the lines of the
 * index functions in lib/user_data.c.  Medians of 9 runs; never asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "actrack.h"
#include "bench.h"

#define N	2000000UL
#define RUNS	9
#define NEW_KEYS 16	/* per activity: its 448 bytes hold 18 int fields */

static const char str32[] = "0123456789abcdef0123456789abcdef";
static char key_names[NEW_KEYS][16];

static struct {
	uint32_t depth, version;
	struct actrack_activity slot;
} fake;

static __attribute__((noinline)) void floor_loop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		uint32_t d = __atomic_load_n(&fake.depth, __ATOMIC_RELAXED);

		fake.slot.time_ns = i;
		fake.slot.origin = ACTRACK_HERE();
		fake.slot.object = i;
		fake.slot.info = 0;
		fake.slot.user_data = 0;
		fake.slot.type = ACTRACK_ACT_TASK_RUN;
		__atomic_store_n(&fake.depth, d + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&fake.depth, d, __ATOMIC_RELAXED);
		__atomic_store_n(&fake.version, fake.version + 2,
				 __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__asm__ volatile("" ::: "memory");
	}
}

static __attribute__((noinline)) void set_int_loop(struct actrack_user_data *ud,
						   unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		actrack_set_int(ud, "requests", (int64_t)i);
}

static __attribute__((noinline)) void set_string_loop(
	struct actrack_user_data *ud, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		actrack_set_string(ud, "url", str32);
}

/* A fresh activity per round: NEW_KEYS appends into its empty data. */
static __attribute__((noinline)) double new_key_loop(unsigned long rounds)
{
	uint64_t spent = 0;

	for (unsigned long r = 0; r < rounds; r++) {
		uint32_t tok = actrack_push_task(r);
		struct actrack_user_data *ud = actrack_activity_data(tok);
		uint64_t t0 = bench_now_ns();

		for (int k = 0; k < NEW_KEYS; k++)
			actrack_set_int(ud, key_names[k], k);
		spent += bench_now_ns() - t0;
		actrack_pop(tok);
	}
	return (double)spent / (double)(rounds * NEW_KEYS);
}

static double time_loop(void (*fn)(struct actrack_user_data *, unsigned long),
			struct actrack_user_data *ud)
{
	double r[RUNS];

	for (int k = 0; k < RUNS; k++) {
		uint64_t t0 = bench_now_ns();

		fn(ud, N / 10);
		r[k] = (double)(bench_now_ns() - t0) / (double)(N / 10);
	}
	return bench_median(r, RUNS);
}

static double time_floor(void)
{
	double r[RUNS];

	for (int k = 0; k < RUNS; k++) {
		uint64_t t0 = bench_now_ns();

		floor_loop(N);
		r[k] = (double)(bench_now_ns() - t0) / (double)N;
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
	struct actrack_user_data *pd, *ad;
	double floor_ns, r[RUNS];
	uint32_t tok;
	int ret;

	for (int k = 0; k < NEW_KEYS; k++)
		snprintf(key_names[k], sizeof(key_names[k]), "key%02d", k);
	snprintf(path, sizeof(path), "/tmp/actrack-bench-ud-%d", (int)getpid());
	ret = actrack_init(&o);
	if (!ret)
		ret = actrack_thread_init("ud");
	if (ret) {
		fprintf(stderr, "attach: %s\n", strerror(-ret));
		return 1;
	}
	unlink(path);
	pd = actrack_process_data();
	tok = actrack_push_task(1);
	ad = actrack_activity_data(tok);
	if (!pd || !ad) {
		fprintf(stderr, "no user data\n");
		return 1;
	}
	/* A few fields before the measured ones, as a real program has. */
	for (int k = 0; k < 4; k++) {
		actrack_set_uint(pd, key_names[k], k);
		actrack_set_uint(ad, key_names[k], k);
	}
	actrack_set_int(pd, "requests", 0);
	actrack_set_int(ad, "requests", 0);
	actrack_set_string(pd, "url", str32);
	actrack_set_string(ad, "url", str32);

	if (argc == 4 && !strcmp(argv[1], "--loop")) {
		unsigned long n = strtoul(argv[3], NULL, 0);

		if (!strcmp(argv[2], "process_int"))
			set_int_loop(pd, n);
		else if (!strcmp(argv[2], "activity_int"))
			set_int_loop(ad, n);
		else
			return 2;
		return 0;
	}

	floor_ns = time_floor();
	bench_line("user_data_process_set_int_existing",
		   time_loop(set_int_loop, pd), "ns", floor_ns);
	bench_line("user_data_process_set_string32",
		   time_loop(set_string_loop, pd), "ns", floor_ns);
	bench_line("user_data_activity_set_int_existing",
		   time_loop(set_int_loop, ad), "ns", floor_ns);
	bench_line("user_data_activity_set_string32",
		   time_loop(set_string_loop, ad), "ns", floor_ns);
	actrack_pop(tok);
	for (int k = 0; k < RUNS; k++)
		r[k] = new_key_loop(20000);
	bench_line("user_data_activity_new_key", bench_median(r, RUNS), "ns",
		   floor_ns);
	/*
	 * New keys on process data: its 4096 bytes hold about 150 int
	 * fields, so one batch of 128 new names, timed as a whole (each also
	 * goes into the index: a malloc).
	 */
	{
		char name[16];
		uint64_t t0 = bench_now_ns();
		int added = 0;

		for (int k = 0; k < 128; k++) {
			snprintf(name, sizeof(name), "p%03d", k);
			added += !actrack_set_int(pd, name, k);
		}
		bench_line("user_data_process_new_key",
			   (double)(bench_now_ns() - t0) / (added ? added : 1),
			   "ns", floor_ns);
	}
	return 0;
}
