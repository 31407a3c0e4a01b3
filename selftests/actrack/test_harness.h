/* SPDX-License-Identifier: MIT */
/*
 * What every test includes instead of the kernel's kselftest_harness.h
 * (fetched at set-up, never copied here): that harness with a longer
 * per-test timeout.  The harness's 30 s is a hang detector, and some tests
 * run fixed counts of operations (random mutations, concurrency rounds)
 * that take several times longer under the VM's emulation on a loaded
 * machine, on the debug kernel, or under ThreadSanitizer (5-15 times
 * slower: make check-tsan sets 900).  No assertion depends on how long
 * anything takes; the runners' per-binary timeouts still end a hang.
 */
#ifndef ACTRACK_TEST_HARNESS_H
#define ACTRACK_TEST_HARNESS_H

#include <kselftest_harness.h>

#ifndef ACTRACK_TEST_TIMEOUT_DEFAULT
#define ACTRACK_TEST_TIMEOUT_DEFAULT	120
#endif
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	ACTRACK_TEST_TIMEOUT_DEFAULT

/* ACTRACK_UNDER_TSAN: built with -fsanitize=thread (clang or gcc). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ACTRACK_UNDER_TSAN	1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(ACTRACK_UNDER_TSAN)
#define ACTRACK_UNDER_TSAN	1
#endif

#endif /* ACTRACK_TEST_HARNESS_H */
