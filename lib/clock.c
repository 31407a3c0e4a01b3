// SPDX-License-Identifier: MIT
/*
 * Timestamps.  Activities carry CLOCK_MONOTONIC nanoseconds at a coarse
 * (~ms) resolution: the stack gives the order, and a hang is measured in
 * seconds, so a push must not pay for a precise clock: it reads the vDSO's
 * CLOCK_MONOTONIC_COARSE, or one load of the clock word that modules of
 * ABI 1.7 and older keep (ABI 1.8 retired it: kmod/clock.c says why).
 */
#include <time.h>
#include "internal.h"

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

uint64_t __actrack_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts_ns(&ts);
}

ACTRACK_API uint64_t actrack__coarse_now(void)
{
	return __actrack_coarse_ns();
}

uint64_t __actrack_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_ns(&ts);
}

uint64_t __actrack_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts_ns(&ts);
}
