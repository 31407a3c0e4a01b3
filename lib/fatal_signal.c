// SPDX-License-Identifier: MIT
/*
 * Opt-in fatal signal recorder: the faulting thread writes signal, code,
 * fault address and pc into its own tracker (plain stores, async-signal-
 * safe), then the previous disposition runs, normally the default action,
 * so core dumps and the exit status are exactly what they would have been.
 * The kernel's death report then carries both: how the process died and
 * what the thread was doing.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include "internal.h"

static const int fatal_signals[] = {
	SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS,
};
#define NR_FATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))

static struct sigaction previous[NR_FATAL];

static uint64_t context_pc(const void *uc_void)
{
	const ucontext_t *uc = uc_void;

	if (!uc)
		return 0;
#if defined(__x86_64__)
	return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
	return (uint64_t)uc->uc_mcontext.gregs[REG_EIP];
#elif defined(__aarch64__)
	return (uint64_t)uc->uc_mcontext.pc;
#else
	return 0;
#endif
}

static void on_fatal(int signo, siginfo_t *si, void *uc)
{
	struct actrack_thread *t = actrack__tls.tracker;
	int saved_errno = errno;

	if (t) {
		t->fatal_code = si ? si->si_code : 0;
		t->fatal_addr = si ? (uint64_t)(uintptr_t)si->si_addr : 0;
		t->fatal_pc = context_pc(uc);
		/* The signal number last: a reader that sees it sees the rest. */
		__atomic_store_n(&t->fatal_signo, signo, __ATOMIC_RELEASE);
	}
	for (size_t i = 0; i < NR_FATAL; i++) {
		if (fatal_signals[i] == signo) {
			sigaction(signo, &previous[i], NULL);
			break;
		}
	}
	/* Still blocked while we run: delivered with the restored
	 * disposition as soon as we return.  A fault re-faults anyway. */
	raise(signo);
	errno = saved_errno;
}

ACTRACK_API int actrack_record_fatal_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NR_FATAL; i++) {
		if (sigaction(fatal_signals[i], &sa, &previous[i]) < 0)
			return -errno;
		/* Never chain to ourselves after a second opt-in. */
		if (previous[i].sa_sigaction == on_fatal) {
			memset(&previous[i], 0, sizeof(previous[i]));
			previous[i].sa_handler = SIG_DFL;
		}
	}
	return 0;
}
