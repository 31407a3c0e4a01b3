/* SPDX-License-Identifier: MIT */
/*
 * Found before the real harness in the TSan build only (make check-tsan
 * adds -Iselftests/actrack/tsan): the same harness with a longer per-test
 * timeout.  ThreadSanitizer makes memory-heavy loops 5-15 times slower, so
 * the tests that run fixed counts of operations (arena_concurrency,
 * arena_corrupt) need more than the harness's 30 s; no assertion depends
 * on how long anything takes.
 */
#include_next <kselftest_harness.h>

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	900
