/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the benchmarks (header only: each bench/NAME.c is one
 * program).  Every figure is printed as one line
 *
 *   bench NAME value=V unit=U baseline=B ratio=V/B
 *
 * where the baseline is measured in the same run (or, for sizes, is the
 * raw payload the figure is compared with).  These machines are noisy:
 * no figure is ever an assertion, and times are medians.
 */
#ifndef ACTRACK_BENCH_H
#define ACTRACK_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of @n values (sorts @v). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Whole numbers (bytes, counts) exactly, others to 4 digits. */
static inline int bench_digits(double v)
{
	return v == (double)(long long)v ? 15 : 4;
}

static inline void bench_line(const char *name, double value,
			      const char *unit, double baseline)
{
	printf("bench %s value=%.*g unit=%s baseline=%.*g ratio=%.3g\n", name,
	       bench_digits(value), value, unit, bench_digits(baseline),
	       baseline, baseline ? value / baseline : 0.0);
	fflush(stdout);
}

#endif /* ACTRACK_BENCH_H */
