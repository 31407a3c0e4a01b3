/* SPDX-License-Identifier: MIT */
/*
 * Found before the real harness (the Makefile puts -Iselftests/actrack/
 * harness ahead of the kselftest headers): the same harness with a longer
 * per-test timeout.  The harness's 30 s is a hang detector, and some tests
 * run fixed counts of operations (random mutations, concurrency rounds)
 * that take several times longer under the VM's emulation on a loaded
 * machine, on the debug kernel, or under ThreadSanitizer (5-15 times
 * slower: make check-tsan sets 900).  No assertion depends on how long
 * anything takes; the runners' per-binary timeouts still end a hang.
 */
#include_next <kselftest_harness.h>

#ifndef ACTRACK_TEST_TIMEOUT_DEFAULT
#define ACTRACK_TEST_TIMEOUT_DEFAULT	120
#endif
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	ACTRACK_TEST_TIMEOUT_DEFAULT
