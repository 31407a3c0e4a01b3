// SPDX-License-Identifier: MIT
/*
 * A stress test's fixed count on a slow kernel, and the tests' clock
 * (test_harness.h).
 */
#include <stdlib.h>
#include <time.h>
#include "test_harness.h"

int actrack_test_slowness(void)
{
	const char *s = getenv("ACTRACK_SLOW_KERNEL");
	char *end;
	long d;

	if (!s || !*s)
		return 1;
	d = strtol(s, &end, 10);
	return *end || d < 1 || d > 1000 ? 1 : (int)d;
}

int actrack_test_scaled(int n, int min)
{
	int d = actrack_test_slowness();

	return n / d >= min ? n / d : (min < n ? min : n);
}

uint64_t actrack_test_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
