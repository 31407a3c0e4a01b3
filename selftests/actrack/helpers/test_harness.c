// SPDX-License-Identifier: MIT
/*
 * A stress test's fixed count on a slow kernel (test_harness.h).
 */
#include <stdlib.h>
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
