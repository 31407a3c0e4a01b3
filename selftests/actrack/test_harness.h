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

/*
 * The harness defines, besides its static functions, global ones in some
 * kernels (6.1's __run_test, _fixture_global): it belongs to the test's
 * own object only.  The helpers' objects (helpers/, built with
 * -DACTRACK_TEST_HELPERS) see the rest of this file and no harness.
 */
#include <stdint.h>
#ifndef ACTRACK_TEST_HELPERS
#include <kselftest_harness.h>
#endif

#ifndef ACTRACK_TEST_TIMEOUT_DEFAULT
#define ACTRACK_TEST_TIMEOUT_DEFAULT	120
#endif
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	ACTRACK_TEST_TIMEOUT_DEFAULT

/*
 * Two generations of the harness: 6.1's counts _metadata->passed and
 * ->skip and leaves telling it which way constructors ran to
 * TEST_HARNESS_MAIN; 6.12's keeps one exit_code (KSFT_PASS/FAIL/SKIP) and
 * finds the order itself.  Only the old one defines
 * _CONSTRUCTOR_ORDER_FORWARD.  Tests use these instead of the fields:
 * ACTRACK_TEST_FAILED(): an EXPECT or ASSERT failed so far;
 * ACTRACK_TEST_SKIPPED(): SKIP() was called (in a fixture's setup);
 * ACTRACK_HARNESS_ORDER(): in a test file with a main() of its own.
 */
#ifdef _CONSTRUCTOR_ORDER_FORWARD
#define ACTRACK_TEST_FAILED(m)		(!(m)->passed)
#define ACTRACK_TEST_SKIPPED(m)		((m)->skip)
#define ACTRACK_HARNESS_ORDER()						\
	static void __attribute__((constructor))			\
	__constructor_order_last(void)					\
	{								\
		if (!__constructor_order)				\
			__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD; \
	}
#else
#define ACTRACK_TEST_FAILED(m)		((m)->exit_code == KSFT_FAIL)
#define ACTRACK_TEST_SKIPPED(m)		((m)->exit_code == KSFT_SKIP)
#define ACTRACK_HARNESS_ORDER()
#endif

/* ACTRACK_UNDER_TSAN: built with -fsanitize=thread (clang or gcc). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ACTRACK_UNDER_TSAN	1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(ACTRACK_UNDER_TSAN)
#define ACTRACK_UNDER_TSAN	1
#endif

/*
 * A function of a target whose frames a test names: a real call and frame
 * under its own name, no inlining, and (gcc) no clone such as
 * f.constprop.0.  clang has no noclone and clones nothing of the kind.
 */
#ifdef __clang__
#define NOINLINE	__attribute__((noinline))
#else
#define NOINLINE	__attribute__((noinline, noclone))
#endif

/*
 * A stress test's fixed count on a slow kernel.  The debug kernels (KASAN,
 * lockdep, kmemleak, UBSAN... under qemu TCG) run process creation, exit
 * and module loading 10-35 times slower than Debian's kernels, so 1,000
 * processes no longer fit the per-case limit that catches a hang.
 * scripts/vmtest tells /init that it booted such a kernel, and /init puts
 * ACTRACK_SLOW_KERNEL=<divisor> into every test's environment
 * (ACTRACK_VMTEST_DEBUG_DIVISOR, default 10).  A stress test then runs
 * @n / divisor iterations, never fewer than @min, asserts the exact outcome
 * of the count it ran, and logs that count.  Unset (Debian's kernels, the
 * host, make check): @n unchanged.  A value that is not an integer from 1
 * to 1000 is ignored (1) rather than guessed at.
 */
int actrack_test_slowness(void);
int actrack_test_scaled(int n, int min);

/* CLOCK_MONOTONIC in ns. */
uint64_t actrack_test_mono_ns(void);

#endif /* ACTRACK_TEST_HARNESS_H */
