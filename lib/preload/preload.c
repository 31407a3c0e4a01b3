// SPDX-License-Identifier: MIT
/*
 * libactrack-preload.so: activity tracking for a program nobody changed.
 * `actrack run -- PROGRAM` puts it in LD_PRELOAD; it interposes the calls
 * where programs block and records each as an activity, and it keeps
 * every thread's held-lock set (struct actrack_held) up to date.  The
 * library's code it uses is linked into it (Makefile: PRELOAD_LIB_SRCS),
 * private: an exec'd image loads this one file besides the C library.
 *
 * It is a guest in someone else's process, so:
 * - Each wrapper calls the next definition (dlsym(RTLD_NEXT)), resolved on
 *   first use: a process that never calls most of them never looks them
 *   up.  The locks' (a malloc may take them, and a lookup may malloc)
 *   and read's and write's (a signal handler's self-pipe: a lookup is not
 *   async-signal-safe) are resolved in the constructor.  Until the
 *   constructor has run, and in any wrapper entered from inside our own
 *   bookkeeping (a per-thread guard: the library's attach reads files,
 *   takes its lock, allocates), a wrapper only passes the call through.
 * - Uncontended locks stay cheap: a trylock first, and the lock-acquire
 *   activity is pushed only when that would block; a successful lock is a
 *   few stores into the held set.  In a process that has never had a
 *   second thread, a private mutex whose lock word reads free is locked
 *   with the real lock at once (mutex_surely_free(): nobody else can take
 *   it in between, and glibc's lock then skips its atomic, which the
 *   trylock never does); a held one still goes the trylock's way, so a
 *   self-deadlock is shown.  Other blocking calls push and pop one
 *   activity around the real call (a few ns beside a system call).
 * - errno is the real call's: it is saved around everything we do.  The
 *   real call is made exactly once with the caller's arguments, so its
 *   results, signal and cancellation behaviour are unchanged.  A wrapper
 *   never blocks on its own account and never allocates in its fast path.
 * - If the arena cannot be attached, pushes are dropped by libactrack
 *   (token 0, a retry at most once a second) and the held set is absent:
 *   every wrapper is then the real call plus a few loads.
 * - A thread gets its tracker (the attach, if needed) before it acquires
 *   anything, never while it holds the program's lock: that lock may be
 *   one the attach path needs.
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "actrack.h"
#include "internal.h"	/* __actrack_set_argv() */

/* glibc >= 2.32 says whether the process has ever had a second thread. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
#include <sys/single_threaded.h>
#define ACTRACK_HAVE_SINGLE_THREADED	1
#else
#define ACTRACK_HAVE_SINGLE_THREADED	0
#endif

#define EXPORT	__attribute__((visibility("default")))

/* Generic action of a sleep (nanosleep, clock_nanosleep, sleep, usleep):
 * a wait for nothing but time, so not one `actrack hangs` reports. */
#define ACT_SLEEP	ACTRACK_ACT_GENERIC_ACTION(1)

/* The environment variable `actrack run --no-follow` sets: the process it
 * starts removes us from LD_PRELOAD, so its children run untracked. */
#define ENV_NO_FOLLOW	"ACTRACK_RUN_NO_FOLLOW"
/* Set by `actrack run`: say once on stderr when tracking cannot start. */
#define ENV_NOTICE	"ACTRACK_RUN_NOTICE"
#define PRELOAD_NAME	"libactrack-preload.so"

/*
 * Inside our own bookkeeping?  volatile: the compiler must not drop the
 * increment around a call it believes cannot reach us (it did around
 * malloc(), which a program may define and which a signal may interrupt).
 */
static __thread volatile unsigned int guard
	__attribute__((tls_model("initial-exec")));
static int ready;

/*
 * Leave our bookkeeping.  Never below 0: a child forked from a signal
 * handler that interrupted our bookkeeping starts with the guard cleared
 * (child_after_fork), and if it returns into that bookkeeping its
 * decrement must not wrap around to "inside" for ever.
 */
static inline void guard_leave(void)
{
	if (__builtin_expect(guard != 0, 1))
		guard--;
}

/* ---- the next definitions -------------------------------------------- */

#define REAL_LIST(X)							\
	X(pthread_mutex_lock) X(pthread_mutex_trylock)			\
	X(pthread_mutex_timedlock) X(pthread_mutex_clocklock)		\
	X(pthread_mutex_unlock)						\
	X(pthread_rwlock_rdlock) X(pthread_rwlock_tryrdlock)		\
	X(pthread_rwlock_timedrdlock) X(pthread_rwlock_clockrdlock)	\
	X(pthread_rwlock_wrlock) X(pthread_rwlock_trywrlock)		\
	X(pthread_rwlock_timedwrlock) X(pthread_rwlock_clockwrlock)	\
	X(pthread_rwlock_unlock)					\
	X(pthread_cond_wait) X(pthread_cond_timedwait)			\
	X(pthread_cond_clockwait)					\
	X(pthread_create) X(pthread_join) X(pthread_tryjoin_np)	\
	X(pthread_clockjoin_np)						\
	X(pthread_setname_np)						\
	X(sem_wait) X(sem_trywait) X(sem_timedwait) X(sem_clockwait)	\
	X(wait) X(waitpid) X(wait3) X(wait4) X(waitid)			\
	X(poll) X(ppoll) X(select) X(pselect)				\
	X(epoll_wait) X(epoll_pwait)					\
	X(read) X(readv) X(pread) X(pread64)				\
	X(write) X(writev) X(pwrite) X(pwrite64)			\
	X(recv) X(recvfrom) X(recvmsg)					\
	X(send) X(sendto) X(sendmsg)					\
	X(accept) X(accept4) X(connect)					\
	X(nanosleep) X(clock_nanosleep) X(sleep) X(usleep)		\
	X(flock) X(fcntl) X(fcntl64) X(prctl)				\
	X(__read_chk) X(__pread_chk) X(__pread64_chk)			\
	X(__recv_chk) X(__recvfrom_chk) X(__poll_chk) X(__ppoll_chk)	\
	X(fsync) X(fdatasync) X(syncfs) X(sync_file_range)		\
	X(preadv) X(pwritev) X(preadv64) X(pwritev64)			\
	X(preadv2) X(pwritev2) X(preadv64v2) X(pwritev64v2)		\
	X(posix_fallocate) X(posix_fallocate64)				\
	X(fallocate) X(fallocate64) X(dlclose)

/* The fortified calls' prototypes, which <unistd.h> and friends give
 * only to fortified includers (their glibc ABI). */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off,
		      size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
		       struct sockaddr *addr, socklen_t *addrlen);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *t,
		const sigset_t *mask, size_t fdslen);

#define X(name) static __typeof__(&name) real_##name;
REAL_LIST(X)
#undef X

static void *next_symbol(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, p, __ATOMIC_RELAXED);
	}
	return p;
}

#define REAL(name)							\
	((__typeof__(&name))next_symbol((void **)&real_##name, #name))

/*
 * A call the C library lacks (an older glibc without the *clock* calls)
 * can only come from a program built elsewhere: fail it as the missing
 * symbol would have been reported, never crash.
 */
#define CHECK_REAL(name, fail)						\
	do {								\
		if (!REAL(name)) {					\
			errno = ENOSYS;					\
			return fail;					\
		}							\
	} while (0)

/* ---- bookkeeping ------------------------------------------------------ */

static inline bool tracking(void)
{
	return __atomic_load_n(&ready, __ATOMIC_RELAXED) && !guard;
}

/*
 * The fork handlers (lib/fork.c; ours is child_after_fork) are installed
 * before the first bookkeeping that leaves state a child must not inherit
 * (a raised guard, a pending activity, a tid, a thread starting), not at
 * start: most images never get there.  Not from what may be a signal
 * handler (pthread_once() and pthread_atfork() are not async-signal-safe),
 * which is also where an image's first attach is refused: such a thread
 * can only be interrupted by a handler nested in its own, and a push
 * there attaches nothing.  One load once installed.
 */
static __attribute__((noinline, cold)) void arm_fork_slow(void)
{
	if (!__actrack_maybe_in_signal_handler())
		__actrack_fork_arm_slow();
}

static inline void arm_fork(void)
{
	if (__builtin_expect(!__atomic_load_n(&__actrack_fork_armed,
					      __ATOMIC_ACQUIRE), 0))
		arm_fork_slow();
}

/* The call instruction in the caller (its return address - 1, which is
 * still inside the call): symbolizes to the line that made the call, also
 * when the call is the last instruction of an inlined function. */
#define ORIGIN()	((uint64_t)(uintptr_t)__builtin_return_address(0) - 1)

/*
 * The activities this thread's wrappers pushed and have not seen popped,
 * each with the wrapper's frame address and call site.  A thread can
 * leave a wrapper without returning through it: a signal handler that
 * siglongjmp()s out of read() leaves read's io-wait pushed.  The next
 * push proves it stale when it comes from a frame at or above the
 * recorded one: two live frames cannot share an address, and a wrapper
 * legitimately nested in that one (a signal handler's, on the same
 * stack) runs below it.  A handler on an alternate signal stack proves
 * nothing (its frames are anywhere): sigaltstack() tells, a system call
 * made only in that rare case.  Until that next push the stale activity
 * stays on the stack (readers cross-check it, actrack-run(1)).
 */
#define PENDING_MAX	8
struct pending {
	uint32_t tok;
	uintptr_t frame;
	uint64_t origin;
};
static __thread struct pending pending[PENDING_MAX]
	__attribute__((tls_model("initial-exec")));

/*
 * The work a push may have to do first, in one word that the push tests
 * once: activities that may have gone stale (nr_pending), and a dlopen()
 * or dlclose() since the module list was recorded (dl_changed; the
 * dlopen entry below stores it at offset 4).
 */
static __thread union push_work {
	struct {
		unsigned int nr_pending;
		unsigned int dl_changed;
	};
	uint64_t any;
} push_work __attribute__((tls_model("initial-exec")));
_Static_assert(offsetof(union push_work, dl_changed) == 4,
	       "the dlopen entry stores at offset 4");
#define nr_pending	(push_work.nr_pending)
#define dl_changed	(push_work.dl_changed)

static void dl_flush(void);

/* Is @p (still) the activity at its depth, below the current depth? */
static bool pending_live(const struct actrack_thread *t,
			 const struct pending *p)
{
	uint32_t depth = __atomic_load_n(&t->depth, __ATOMIC_RELAXED);

	return p->tok <= depth && p->tok <= actrack__tls.slot_count &&
	       ACTRACK_THREAD_SLOTS(t)[p->tok - 1].origin == p->origin;
}

static __attribute__((noinline)) void drop_stale(uintptr_t frame)
{
	struct actrack_thread *t = actrack__tls.tracker;
	bool alt_checked = false;
	stack_t ss;

	while (nr_pending) {
		struct pending *p = &pending[nr_pending - 1];

		if (!t || !pending_live(t, p)) {
			nr_pending--;	/* popped already */
			continue;
		}
		if (frame < p->frame)
			return;		/* nested below it: it is live */
		if (!alt_checked) {
			alt_checked = true;
			if (!sigaltstack(NULL, &ss) &&
			    (ss.ss_flags & SS_ONSTACK))
				return;
		}
		actrack_pop(p->tok);
		nr_pending--;
	}
}

/* Out of line: almost no push has any. */
static __attribute__((noinline, cold)) void push_work_first(uintptr_t frame)
{
	if (nr_pending)
		drop_stale(frame);
	if (dl_changed)
		dl_flush();
}

/* Push a wait with its relative timeout (0: none; the readiness calls). */
static inline uint32_t push_at(uintptr_t frame, uint64_t origin,
			       uint8_t type, uint64_t object, uint64_t info,
			       uint64_t timeout_ns)
{
	int e = errno;
	uint32_t tok;

	arm_fork();
	guard++;
	if (__builtin_expect(push_work.any != 0, 0))
		push_work_first(frame);
	tok = actrack__push_timed(origin, type, object, info, timeout_ns);
	if (tok && nr_pending < PENDING_MAX)
		pending[nr_pending++] = (struct pending){ tok, frame, origin };
	guard_leave();
	errno = e;
	return tok;
}

/* The frame of the wrapper that expands it. */
#define push_timed(origin, type, object, info, timeout_ns)		\
	push_at((uintptr_t)__builtin_frame_address(0), (origin), (type),\
		(object), (info), (timeout_ns))
#define push(origin, type, object, info)				\
	push_timed((origin), (type), (object), (info), 0)

/* End a wrapper's activity (and forget it: it did not go stale). */
static inline void pop(uint32_t tok)
{
	actrack_pop(tok);
	if (nr_pending && pending[nr_pending - 1].tok == tok)
		nr_pending--;
}

/*
 * Give the thread its tracker before it takes a lock (see the top).  A
 * thread whose tracker cannot be made retries only as often as libactrack
 * lets it (it counts such calls and backs off).
 */
static __attribute__((noinline, cold)) void make_tracker(void)
{
	int e = errno;

	arm_fork();
	guard++;
	actrack__thread_slow();
	guard_leave();
	errno = e;
}

static inline void need_tracker(void)
{
	if (__builtin_expect(actrack__held_tls.held == NULL, 0))
		make_tracker();
}

/* Process-shared?  glibc keeps it in the lock itself (its public layout). */
static inline bool mutex_shared(const pthread_mutex_t *m)
{
#if defined(__GLIBC__)
	return (m->__data.__kind & 128) != 0;	/* PTHREAD_MUTEX_PSHARED_BIT */
#else
	return false;
#endif
}

static inline bool rwlock_shared(const pthread_rwlock_t *rw)
{
#if defined(__GLIBC__) && defined(__x86_64__)
	return rw->__data.__shared != 0;
#else
	return false;
#endif
}

/*
 * A timed wait's absolute deadline on @clk as the relative timeout it
 * leaves at the push (struct actrack_activity's timeout_ns); at least
 * 1 ns, for the wait has one even when it is already due.  None: 0.
 */
static uint64_t deadline_ns(clockid_t clk, const struct timespec *abs)
{
	struct timespec now;
	int64_t d;
	int e = errno;

	if (!abs || clock_gettime(clk, &now)) {
		errno = e;
		return 0;
	}
	d = ((int64_t)abs->tv_sec - (int64_t)now.tv_sec) * 1000000000LL +
	    ((int64_t)abs->tv_nsec - (int64_t)now.tv_nsec);
	return d > 0 ? (uint64_t)d : 1;
}

/* The clock a condition variable's timed waits use (glibc keeps it in
 * __wrefs: bit 1 set, CLOCK_MONOTONIC; pthread_condattr_setclock()). */
static clockid_t cond_clock(const pthread_cond_t *c)
{
#if defined(__GLIBC__)
	return __atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) & 2 ?
	       CLOCK_MONOTONIC : CLOCK_REALTIME;
#else
	return CLOCK_REALTIME;
#endif
}

/* ---- mutexes ---------------------------------------------------------- */

/* Did the call leave the lock held (EOWNERDEAD: yes, inconsistent)? */
static inline bool locked(int ret)
{
	return ret == 0 || ret == EOWNERDEAD;
}

/* The contended path out of line: the uncontended one stays short. */
static __attribute__((noinline)) int mutex_lock_wait(pthread_mutex_t *m,
						     uint64_t origin)
{
	uint32_t tok;
	int ret;

	tok = push(origin, ACTRACK_ACT_LOCK_ACQUIRE, (uintptr_t)m,
		   mutex_shared(m));
	ret = REAL(pthread_mutex_lock)(m);
	pop(tok);
	return ret;
}

/*
 * Can this lock not block?  In a process of one thread (glibc's
 * __libc_single_threaded: set until the first pthread_create(), never
 * set again) nobody but this thread can take a private mutex, so one
 * whose lock word reads free is ours: the real lock, which then takes
 * glibc's own single-thread path (a plain store, no atomic), cannot
 * block, and the trylock (an atomic, always) is not needed.  A held
 * word (a self-deadlock, or a lock a signal handler holds) still goes
 * the way that pushes the lock-acquire first, and so does a
 * process-shared mutex (another process may take it in between) and
 * every mutex of a process with threads: one could take the lock after
 * we looked and our lock would block with nothing pushed.  Left out: a
 * signal handler that takes this very lock between our look and our
 * lock and returns still holding it (a lock in a handler is not
 * async-signal-safe to begin with).
 */
static inline bool mutex_surely_free(const pthread_mutex_t *m)
{
#if defined(__GLIBC__) && ACTRACK_HAVE_SINGLE_THREADED
	return __libc_single_threaded && !mutex_shared(m) &&
	       __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) == 0;
#else
	(void)m;
	return false;
#endif
}

EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	int ret;

	if (!tracking())
		return REAL(pthread_mutex_lock)(m);
	need_tracker();
	if (mutex_surely_free(m)) {
		ret = REAL(pthread_mutex_lock)(m);
	} else {
		ret = REAL(pthread_mutex_trylock)(m);
		if (__builtin_expect(ret == EBUSY, 0))
			ret = mutex_lock_wait(m, ORIGIN());
	}
	if (locked(ret))
		actrack_held_add(m, mutex_shared(m));
	return ret;
}

EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	int ret;

	if (!tracking())
		return REAL(pthread_mutex_trylock)(m);
	need_tracker();
	ret = REAL(pthread_mutex_trylock)(m);
	if (locked(ret))
		actrack_held_add(m, mutex_shared(m));
	return ret;
}

EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m,
				   const struct timespec *abstime)
{
	uint32_t tok;
	int ret;

	if (!tracking())
		return REAL(pthread_mutex_timedlock)(m, abstime);
	need_tracker();
	ret = REAL(pthread_mutex_trylock)(m);
	if (ret == EBUSY) {
		tok = push_timed(ORIGIN(), ACTRACK_ACT_LOCK_ACQUIRE,
				 (uintptr_t)m, mutex_shared(m),
				 deadline_ns(CLOCK_REALTIME, abstime));
		ret = REAL(pthread_mutex_timedlock)(m, abstime);
		pop(tok);
	}
	if (locked(ret))
		actrack_held_add(m, mutex_shared(m));
	return ret;
}

EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clk,
				   const struct timespec *abstime)
{
	uint32_t tok;
	int ret;

	if (!REAL(pthread_mutex_clocklock))
		return ENOSYS;
	if (!tracking())
		return REAL(pthread_mutex_clocklock)(m, clk, abstime);
	need_tracker();
	ret = REAL(pthread_mutex_trylock)(m);
	if (ret == EBUSY) {
		tok = push_timed(ORIGIN(), ACTRACK_ACT_LOCK_ACQUIRE,
				 (uintptr_t)m, mutex_shared(m),
				 deadline_ns(clk, abstime));
		ret = REAL(pthread_mutex_clocklock)(m, clk, abstime);
		pop(tok);
	}
	if (locked(ret))
		actrack_held_add(m, mutex_shared(m));
	return ret;
}

EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	/* Our own bookkeeping's locks were never added (guard). */
	if (tracking())
		actrack_held_remove(m);
	return REAL(pthread_mutex_unlock)(m);
}

/* ---- rwlocks ---------------------------------------------------------- */

#define RWLOCK_WRAPPER(name, tryname, PARAMS, ARGS, tmo)		\
EXPORT int name PARAMS							\
{									\
	uint32_t tok;							\
	int ret;							\
									\
	if (!REAL(name))						\
		return ENOSYS;						\
	if (!tracking())						\
		return REAL(name) ARGS;					\
	need_tracker();							\
	ret = REAL(tryname)(rw);					\
	if (ret == EBUSY) {						\
		tok = push_timed(ORIGIN(), ACTRACK_ACT_LOCK_ACQUIRE,	\
				 (uintptr_t)rw, rwlock_shared(rw), (tmo));\
		ret = REAL(name) ARGS;					\
		pop(tok);						\
	}								\
	if (ret == 0)							\
		actrack_held_add(rw, rwlock_shared(rw));		\
	return ret;							\
}

RWLOCK_WRAPPER(pthread_rwlock_rdlock, pthread_rwlock_tryrdlock,
	       (pthread_rwlock_t *rw), (rw), 0)
RWLOCK_WRAPPER(pthread_rwlock_wrlock, pthread_rwlock_trywrlock,
	       (pthread_rwlock_t *rw), (rw), 0)
RWLOCK_WRAPPER(pthread_rwlock_timedrdlock, pthread_rwlock_tryrdlock,
	       (pthread_rwlock_t *rw, const struct timespec *t), (rw, t),
	       deadline_ns(CLOCK_REALTIME, t))
RWLOCK_WRAPPER(pthread_rwlock_timedwrlock, pthread_rwlock_trywrlock,
	       (pthread_rwlock_t *rw, const struct timespec *t), (rw, t),
	       deadline_ns(CLOCK_REALTIME, t))
RWLOCK_WRAPPER(pthread_rwlock_clockrdlock, pthread_rwlock_tryrdlock,
	       (pthread_rwlock_t *rw, clockid_t c, const struct timespec *t),
	       (rw, c, t), deadline_ns(c, t))
RWLOCK_WRAPPER(pthread_rwlock_clockwrlock, pthread_rwlock_trywrlock,
	       (pthread_rwlock_t *rw, clockid_t c, const struct timespec *t),
	       (rw, c, t), deadline_ns(c, t))

EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
	int ret;

	if (!tracking())
		return REAL(pthread_rwlock_tryrdlock)(rw);
	need_tracker();
	ret = REAL(pthread_rwlock_tryrdlock)(rw);
	if (ret == 0)
		actrack_held_add(rw, rwlock_shared(rw));
	return ret;
}

EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *rw)
{
	int ret;

	if (!tracking())
		return REAL(pthread_rwlock_trywrlock)(rw);
	need_tracker();
	ret = REAL(pthread_rwlock_trywrlock)(rw);
	if (ret == 0)
		actrack_held_add(rw, rwlock_shared(rw));
	return ret;
}

EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	if (tracking())
		actrack_held_remove(rw);
	return REAL(pthread_rwlock_unlock)(rw);
}

/* ---- condition variables: the mutex is not held during the wait ------ */

#define COND_WRAPPER(name, PARAMS, ARGS, tmo)				\
EXPORT int name PARAMS							\
{									\
	uint32_t tok;							\
	bool had;							\
	int ret;							\
									\
	if (!REAL(name))						\
		return ENOSYS;						\
	if (!tracking())						\
		return REAL(name) ARGS;					\
	had = actrack_held_remove(m);					\
	tok = push_timed(ORIGIN(), ACTRACK_ACT_EVENT_WAIT,		\
			 (uintptr_t)c, 0, (tmo));			\
	ret = REAL(name) ARGS;						\
	pop(tok);							\
	/* Every return, timeouts and errors included, holds it again. */ \
	if (had)							\
		actrack_held_add(m, mutex_shared(m));			\
	return ret;							\
}

COND_WRAPPER(pthread_cond_wait, (pthread_cond_t *c, pthread_mutex_t *m),
	     (c, m), 0)
COND_WRAPPER(pthread_cond_timedwait, (pthread_cond_t *c, pthread_mutex_t *m,
				      const struct timespec *t), (c, m, t),
	     deadline_ns(cond_clock(c), t))
COND_WRAPPER(pthread_cond_clockwait, (pthread_cond_t *c, pthread_mutex_t *m,
				      clockid_t k, const struct timespec *t),
	     (c, m, k, t), deadline_ns(k, t))

/* ---- threads ---------------------------------------------------------- */

/*
 * pthread_t -> tid of the threads pthread_create() started, filled in by
 * each thread as the first thing it does (before its tracker: that takes
 * an allocation in the arena, which can wait) and emptied as it ends.
 * Lock-free: a thread claims an entry with a CAS of its handle.  @starting
 * counts the threads created and not yet in the table: a join of a thread
 * not found while it is nonzero may be of one that has not run yet, and
 * learns its tid when it starts, without pthread_create() ever waiting.
 */
#define TID_ENTRIES	1024
struct tid_entry {
	uintptr_t th;		/* 0: free */
	pid_t tid;		/* 0: being filled in */
};
/*
 * Mapped by the first tracked pthread_create(), not in .bss: there its
 * 16 KiB pushed the variables every start writes (the next definitions,
 * the mark, the command line) onto a page of their own, one more page
 * fault in every image, most of which never start a thread.  NULL also
 * tells a forked child that there is nothing to clear (a single-threaded
 * shell forks without touching it).
 */
static struct tid_entry *tids;
static unsigned int starting;

static bool tids_map(void)
{
	struct tid_entry *t = __atomic_load_n(&tids, __ATOMIC_ACQUIRE);
	struct tid_entry *none = NULL;
	size_t len = TID_ENTRIES * sizeof(*t);

	if (t)
		return true;
	t = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return false;
	if (!__atomic_compare_exchange_n(&tids, &none, t, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		munmap(t, len);		/* another thread's won */
	return true;
}
static __thread unsigned int my_tid_entry	/* index + 1, 0: none */
	__attribute__((tls_model("initial-exec")));

static unsigned int tid_hash(uintptr_t th)
{
	return (unsigned int)((th >> 12) ^ (th >> 22)) % TID_ENTRIES;
}

static void tid_publish(void)
{
	uintptr_t self = (uintptr_t)pthread_self();
	unsigned int h = tid_hash(self);

	if (!tids)
		return;		/* not started by a tracked pthread_create() */
	for (unsigned int i = 0; i < TID_ENTRIES; i++) {
		unsigned int k = (h + i) % TID_ENTRIES;
		uintptr_t none = 0;

		if (__atomic_compare_exchange_n(&tids[k].th, &none, self,
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&tids[k].tid, gettid(),
					 __ATOMIC_RELEASE);
			my_tid_entry = k + 1;
			return;
		}
	}
}

static void tid_forget(void *unused)
{
	unsigned int k = my_tid_entry;

	(void)unused;
	if (!k)
		return;
	my_tid_entry = 0;
	__atomic_store_n(&tids[k - 1].tid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tids[k - 1].th, 0, __ATOMIC_RELEASE);
}

/* The tid of @th: this table, else the library's (threads it tracked
 * that we did not start), else 0. */
static pid_t thread_tid(pthread_t th)
{
	struct tid_entry *t = __atomic_load_n(&tids, __ATOMIC_ACQUIRE);
	uintptr_t want = (uintptr_t)th;
	unsigned int h = tid_hash(want);
	pid_t tid;

	for (unsigned int i = 0; t && i < TID_ENTRIES; i++) {
		unsigned int k = (h + i) % TID_ENTRIES;

		if (__atomic_load_n(&t[k].th, __ATOMIC_ACQUIRE) != want)
			continue;
		tid = __atomic_load_n(&t[k].tid, __ATOMIC_ACQUIRE);
		/* Still its entry after the read (not reused under us)? */
		if (tid > 0 &&
		    __atomic_load_n(&t[k].th, __ATOMIC_ACQUIRE) == want)
			return tid;
	}
	tid = actrack_pthread_tid(th);
	return tid > 0 ? tid : 0;
}

/* How long a join of a thread not started yet waits between looks. */
#define JOIN_LOOK_NS	(10 * 1000 * 1000)

EXPORT int pthread_join(pthread_t th, void **retval)
{
	struct timespec t;
	uint32_t tok;
	pid_t tid;
	int ret;

	if (!tracking() || !REAL(pthread_tryjoin_np))
		return REAL(pthread_join)(th, retval);
	/* Already finished (or an error join would give too): no wait. */
	ret = REAL(pthread_tryjoin_np)(th, retval);
	if (ret != EBUSY)
		return ret;
	tid = thread_tid(th);
	tok = push(ORIGIN(), ACTRACK_ACT_THREAD_JOIN, tid, 0);
	/*
	 * Joined right after its creation, the thread may not have run yet:
	 * wait in short timed joins until it has published its tid, then
	 * name it in the activity (never while no thread is starting: the
	 * thread is one we did not start, whose tid we cannot learn).
	 */
	while (!tid && tok && REAL(pthread_clockjoin_np)) {
		/* A thread publishes its tid before it leaves @starting:
		 * read in the other order, none is missed. */
		bool more = __atomic_load_n(&starting, __ATOMIC_ACQUIRE);

		tid = thread_tid(th);
		if (tid) {
			actrack_change(tok, (uint64_t)tid, 0);
			break;
		}
		if (!more)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_nsec += JOIN_LOOK_NS;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		ret = REAL(pthread_clockjoin_np)(th, retval, CLOCK_MONOTONIC,
						 &t);
		if (ret != ETIMEDOUT)
			goto out;
	}
	ret = REAL(pthread_join)(th, retval);
out:
	pop(tok);
	return ret;
}

/*
 * A new thread publishes its tid, then gets its tracker before it runs
 * the program's code, so that a thread which never blocks in a tracked
 * call is still known by its tid (pthread_join's thread-join activity
 * names it).  The start record is the one allocation made for it, in
 * pthread_create(), never in a fast path; without memory the thread
 * simply starts untracked.
 */
struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *tracked_start(void *p)
{
	struct start st = *(struct start *)p;
	void *ret;

	tid_publish();
	__atomic_sub_fetch(&starting, 1, __ATOMIC_RELEASE);
	free(p);
	make_tracker();
	/* Forgotten however the thread ends: return, pthread_exit(),
	 * cancellation. */
	pthread_cleanup_push(tid_forget, NULL);
	ret = st.fn(st.arg);
	pthread_cleanup_pop(1);
	return ret;
}

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	struct start *st;
	int e = errno, ret;

	if (!tracking())
		return REAL(pthread_create)(th, attr, fn, arg);
	/* Never from a signal handler: installed whatever the mask says
	 * (@starting and the tid table are the whole process's). */
	__actrack_fork_arm();
	guard++;
	st = tids_map() ? malloc(sizeof(*st)) : NULL;
	guard_leave();
	errno = e;
	if (!st)
		return REAL(pthread_create)(th, attr, fn, arg);
	st->fn = fn;
	st->arg = arg;
	__atomic_add_fetch(&starting, 1, __ATOMIC_ACQ_REL);
	ret = REAL(pthread_create)(th, attr, tracked_start, st);
	if (ret) {
		__atomic_sub_fetch(&starting, 1, __ATOMIC_RELEASE);
		free(st);
	}
	errno = e;
	return ret;
}

/* The thread's name as the program sets it, for the analyzer too. */
EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	int ret = REAL(pthread_setname_np)(th, name);

	if (ret == 0 && tracking() && actrack__tls.tracker &&
	    pthread_equal(th, pthread_self())) {
		int e = errno;

		guard++;
		actrack_set_thread_name(name);
		guard_leave();
		errno = e;
	}
	return ret;
}

/* PR_SET_NAME, the other way programs name their threads. */
EXPORT int prctl(int option, ...)
{
	unsigned long a2, a3, a4, a5;
	va_list ap;
	int ret;

	va_start(ap, option);
	a2 = va_arg(ap, unsigned long);
	a3 = va_arg(ap, unsigned long);
	a4 = va_arg(ap, unsigned long);
	a5 = va_arg(ap, unsigned long);
	va_end(ap);
	CHECK_REAL(prctl, -1);
	ret = REAL(prctl)(option, a2, a3, a4, a5);
	if (ret == 0 && option == PR_SET_NAME && tracking() && a2 &&
	    actrack__tls.tracker) {
		char name[16];
		int e = errno;

		/* As the kernel took it: at most 15 bytes (no read past
		 * a shorter string's end). */
		size_t n = strnlen((const char *)a2, sizeof(name) - 1);

		memcpy(name, (const char *)a2, n);
		name[n] = 0;
		guard++;
		actrack_set_thread_name(name);
		guard_leave();
		errno = e;
	}
	return ret;
}

/* ---- semaphores: no owner, so an event wait ---------------------------- */

#define SEM_WRAPPER(name, PARAMS, ARGS, tmo)				\
EXPORT int name PARAMS							\
{									\
	uint32_t tok;							\
	int e = errno, ret;						\
									\
	CHECK_REAL(name, -1);						\
	if (!tracking())						\
		return REAL(name) ARGS;					\
	if (REAL(sem_trywait)(s) == 0)					\
		return 0;						\
	if (errno != EAGAIN)						\
		return REAL(name) ARGS;					\
	errno = e;							\
	tok = push_timed(ORIGIN(), ACTRACK_ACT_EVENT_WAIT,		\
			 (uintptr_t)s, 0, (tmo));			\
	ret = REAL(name) ARGS;						\
	pop(tok);							\
	return ret;							\
}

SEM_WRAPPER(sem_wait, (sem_t *s), (s), 0)
SEM_WRAPPER(sem_timedwait, (sem_t *s, const struct timespec *t), (s, t),
	    deadline_ns(CLOCK_REALTIME, t))
SEM_WRAPPER(sem_clockwait, (sem_t *s, clockid_t c, const struct timespec *t),
	    (s, c, t), deadline_ns(c, t))

/* ---- child processes --------------------------------------------------- */

#define WAIT_WRAPPER(name, PARAMS, ARGS, nohang, object)		\
EXPORT pid_t name PARAMS						\
{									\
	uint32_t tok;							\
	pid_t ret;							\
									\
	if (!tracking() || (nohang))					\
		return REAL(name) ARGS;					\
	tok = push(ORIGIN(), ACTRACK_ACT_PROCESS_WAIT, (object), 0);	\
	ret = REAL(name) ARGS;						\
	pop(tok);							\
	return ret;							\
}

WAIT_WRAPPER(wait, (int *st), (st), false, 0)
WAIT_WRAPPER(waitpid, (pid_t pid, int *st, int opt), (pid, st, opt),
	     opt & WNOHANG, pid > 0 ? (uint64_t)pid : 0)
WAIT_WRAPPER(wait3, (int *st, int opt, struct rusage *ru), (st, opt, ru),
	     opt & WNOHANG, 0)
WAIT_WRAPPER(wait4, (pid_t pid, int *st, int opt, struct rusage *ru),
	     (pid, st, opt, ru), opt & WNOHANG, pid > 0 ? (uint64_t)pid : 0)

EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int opt)
{
	uint32_t tok;
	int ret;

	if (!tracking() || (opt & WNOHANG))
		return REAL(waitid)(type, id, info, opt);
	tok = push(ORIGIN(), ACTRACK_ACT_PROCESS_WAIT,
		   type == P_PID ? (uint64_t)id : 0, 0);
	ret = REAL(waitid)(type, id, info, opt);
	pop(tok);
	return ret;
}

/* ---- descriptors: one io-wait (fd, bytes asked) around the call -------- */

/*
 * Every call pushes, blocking descriptor or not: telling them apart would
 * cost a system call, a push costs a few ns, and a wait that ends at once
 * never looks hung.
 */
#define IO_WRAPPER(type, name, PARAMS, ARGS, fd, bytes)			\
EXPORT type name PARAMS							\
{									\
	uint32_t tok;							\
	type ret;							\
									\
	if (!tracking())						\
		return REAL(name) ARGS;					\
	tok = push(ORIGIN(), ACTRACK_ACT_IO_WAIT, (uint64_t)(fd),	\
		   (uint64_t)(bytes));					\
	ret = REAL(name) ARGS;						\
	pop(tok);							\
	return ret;							\
}

static size_t iov_bytes(const struct iovec *iov, int n)
{
	size_t sum = 0;

	for (int i = 0; iov && i < n && i < 1024; i++)
		sum += iov[i].iov_len;
	return sum;
}

IO_WRAPPER(ssize_t, read, (int fd, void *b, size_t n), (fd, b, n), fd, n)
IO_WRAPPER(ssize_t, write, (int fd, const void *b, size_t n), (fd, b, n),
	   fd, n)
IO_WRAPPER(ssize_t, readv, (int fd, const struct iovec *v, int n),
	   (fd, v, n), fd, iov_bytes(v, n))
IO_WRAPPER(ssize_t, writev, (int fd, const struct iovec *v, int n),
	   (fd, v, n), fd, iov_bytes(v, n))
IO_WRAPPER(ssize_t, pread, (int fd, void *b, size_t n, off_t o),
	   (fd, b, n, o), fd, n)
IO_WRAPPER(ssize_t, pwrite, (int fd, const void *b, size_t n, off_t o),
	   (fd, b, n, o), fd, n)
IO_WRAPPER(ssize_t, pread64, (int fd, void *b, size_t n, off64_t o),
	   (fd, b, n, o), fd, n)
IO_WRAPPER(ssize_t, pwrite64, (int fd, const void *b, size_t n, off64_t o),
	   (fd, b, n, o), fd, n)
IO_WRAPPER(ssize_t, recv, (int fd, void *b, size_t n, int f), (fd, b, n, f),
	   fd, n)
IO_WRAPPER(ssize_t, recvfrom, (int fd, void *b, size_t n, int f,
			       struct sockaddr *a, socklen_t *l),
	   (fd, b, n, f, a, l), fd, n)
IO_WRAPPER(ssize_t, recvmsg, (int fd, struct msghdr *m, int f), (fd, m, f),
	   fd, m ? iov_bytes(m->msg_iov, (int)m->msg_iovlen) : 0)
IO_WRAPPER(ssize_t, send, (int fd, const void *b, size_t n, int f),
	   (fd, b, n, f), fd, n)
IO_WRAPPER(ssize_t, sendto, (int fd, const void *b, size_t n, int f,
			     const struct sockaddr *a, socklen_t l),
	   (fd, b, n, f, a, l), fd, n)
IO_WRAPPER(ssize_t, sendmsg, (int fd, const struct msghdr *m, int f),
	   (fd, m, f), fd, m ? iov_bytes(m->msg_iov, (int)m->msg_iovlen) : 0)
IO_WRAPPER(int, accept, (int fd, struct sockaddr *a, socklen_t *l),
	   (fd, a, l), fd, 0)
IO_WRAPPER(int, accept4, (int fd, struct sockaddr *a, socklen_t *l, int f),
	   (fd, a, l, f), fd, 0)
IO_WRAPPER(int, connect, (int fd, const struct sockaddr *a, socklen_t l),
	   (fd, a, l), fd, 0)
/* File locks wait on a descriptor too: an io-wait on it (no owner). */
IO_WRAPPER(int, flock, (int fd, int op), (fd, op), fd, 0)

/*
 * The fortified variants (-D_FORTIFY_SOURCE, which distributions build
 * with) that block: the program calls these instead of read(), pread(),
 * recv(), recvfrom() when the buffer's size is known.  The real call makes
 * the check (and aborts on an overflow, as without us).
 */
IO_WRAPPER(ssize_t, __read_chk, (int fd, void *b, size_t n, size_t bl),
	   (fd, b, n, bl), fd, n)
IO_WRAPPER(ssize_t, __pread_chk, (int fd, void *b, size_t n, off_t o,
				  size_t bl), (fd, b, n, o, bl), fd, n)
IO_WRAPPER(ssize_t, __pread64_chk, (int fd, void *b, size_t n, off64_t o,
				    size_t bl), (fd, b, n, o, bl), fd, n)
IO_WRAPPER(ssize_t, __recv_chk, (int fd, void *b, size_t n, size_t bl,
				 int f), (fd, b, n, bl, f), fd, n)
IO_WRAPPER(ssize_t, __recvfrom_chk, (int fd, void *b, size_t n, size_t bl,
				     int f, struct sockaddr *a,
				     socklen_t *l), (fd, b, n, bl, f, a, l),
	   fd, n)

/* Where storage makes a program wait: writeback, vectored and
 * positioned transfers, block allocation.  The byte count is the range's
 * (0 for "the whole file"). */
IO_WRAPPER(int, fsync, (int fd), (fd), fd, 0)
IO_WRAPPER(int, fdatasync, (int fd), (fd), fd, 0)
IO_WRAPPER(int, syncfs, (int fd), (fd), fd, 0)
IO_WRAPPER(int, sync_file_range, (int fd, off64_t o, off64_t n,
				  unsigned int f), (fd, o, n, f), fd, n)
IO_WRAPPER(ssize_t, preadv, (int fd, const struct iovec *v, int n, off_t o),
	   (fd, v, n, o), fd, iov_bytes(v, n))
IO_WRAPPER(ssize_t, pwritev, (int fd, const struct iovec *v, int n,
			      off_t o), (fd, v, n, o), fd, iov_bytes(v, n))
IO_WRAPPER(ssize_t, preadv64, (int fd, const struct iovec *v, int n,
			       off64_t o), (fd, v, n, o), fd, iov_bytes(v, n))
IO_WRAPPER(ssize_t, pwritev64, (int fd, const struct iovec *v, int n,
				off64_t o), (fd, v, n, o), fd,
	   iov_bytes(v, n))
IO_WRAPPER(ssize_t, preadv2, (int fd, const struct iovec *v, int n, off_t o,
			      int f), (fd, v, n, o, f), fd, iov_bytes(v, n))
IO_WRAPPER(ssize_t, pwritev2, (int fd, const struct iovec *v, int n,
			       off_t o, int f), (fd, v, n, o, f), fd,
	   iov_bytes(v, n))
IO_WRAPPER(ssize_t, preadv64v2, (int fd, const struct iovec *v, int n,
				 off64_t o, int f), (fd, v, n, o, f), fd,
	   iov_bytes(v, n))
IO_WRAPPER(ssize_t, pwritev64v2, (int fd, const struct iovec *v, int n,
				  off64_t o, int f), (fd, v, n, o, f), fd,
	   iov_bytes(v, n))
/* posix_fallocate returns an error number, not -1 and errno: kept. */
IO_WRAPPER(int, posix_fallocate, (int fd, off_t o, off_t n), (fd, o, n),
	   fd, n)
IO_WRAPPER(int, posix_fallocate64, (int fd, off64_t o, off64_t n),
	   (fd, o, n), fd, n)
IO_WRAPPER(int, fallocate, (int fd, int m, off_t o, off_t n), (fd, m, o, n),
	   fd, n)
IO_WRAPPER(int, fallocate64, (int fd, int m, off64_t o, off64_t n),
	   (fd, m, o, n), fd, n)

/* ---- readiness: an io-wait on the first (poll) or highest (select) fd,
 * or the epoll descriptor, with its timeout; a zero timeout does not wait
 * at all, and a call with no descriptors is a sleep (pg_usleep() is
 * select(0, NULL, NULL, NULL, &tv)) ------------------------------------ */

static uint64_t ts_ns(const struct timespec *t)
{
	if (!t || t->tv_sec < 0 || t->tv_nsec < 0)
		return 0;
	return (uint64_t)t->tv_sec * 1000000000ULL + (uint64_t)t->tv_nsec;
}

/* poll()'s and epoll_wait()'s milliseconds; negative: none (0). */
static uint64_t ms_ns(int ms)
{
	return ms > 0 ? (uint64_t)ms * 1000000ULL : 0;
}

static uint64_t tv_ns(const struct timeval *t)
{
	if (!t || t->tv_sec < 0 || t->tv_usec < 0)
		return 0;
	return (uint64_t)t->tv_sec * 1000000000ULL +
	       (uint64_t)t->tv_usec * 1000ULL;
}

/*
 * Linux makes epoll_wait() fail with EINTR after its thread was stopped
 * and let go (signal(7)): by a debugger, by SIGSTOP and SIGCONT, by the
 * PTRACE_INTERRUPT of `actrack hangs --stacks`.  The program calls it
 * again at once, and that is the same wait: it keeps the start time it
 * had, or every look at a stuck wait would make it young again.  "The
 * same": the same call site and descriptor, at the same depth, with no
 * pop in between (the tracker's version has not moved since).
 */
struct resumed {
	uint64_t origin, object, time_ns;
	uint32_t depth, version;
	bool set;
};

static __thread struct resumed resumed
	__attribute__((tls_model("initial-exec")));

static inline struct actrack_activity *own_slot(uint32_t tok)
{
	struct actrack_thread *t = actrack__tls.tracker;

	return t && tok && tok <= actrack__tls.slot_count ?
	       &ACTRACK_THREAD_SLOTS(t)[tok - 1] : NULL;
}

/* After the push: the same wait again keeps its start time. */
static inline void resume_start(uint32_t tok, uint64_t origin, uint64_t obj)
{
	struct actrack_activity *a = own_slot(tok);
	struct resumed *r = &resumed;

	if (r->set && a && r->origin == origin && r->object == obj &&
	    r->depth == tok && r->version ==
	    __atomic_load_n(&actrack__tls.tracker->version, __ATOMIC_RELAXED))
		__atomic_store_n(&a->time_ns, r->time_ns, __ATOMIC_RELAXED);
	r->set = false;
}

/* Around the pop: an EINTR is remembered, with the version it leaves. */
static inline void resume_note(uint32_t tok, uint64_t origin, uint64_t obj,
			       bool eintr)
{
	struct actrack_activity *a = own_slot(tok);
	struct resumed *r = &resumed;

	r->set = eintr && a;
	if (r->set) {
		r->origin = origin;
		r->object = obj;
		r->depth = tok;
		r->time_ns = a->time_ns;
	}
	pop(tok);
	if (r->set)
		r->version = __atomic_load_n(&actrack__tls.tracker->version,
					     __ATOMIC_RELAXED);
}

#define POLL_WRAPPER(type, name, PARAMS, ARGS, nowait, nofds, fd, tmo,	\
		     resumes)						\
EXPORT type name PARAMS							\
{									\
	uint64_t tmo_ns, origin = ORIGIN();				\
	uint32_t tok;							\
	type ret;							\
									\
	if (!tracking() || (nowait))					\
		return REAL(name) ARGS;					\
	tmo_ns = (tmo);							\
	if (nofds)							\
		tok = push_timed(origin, ACT_SLEEP, CLOCK_MONOTONIC,	\
				 tmo_ns, tmo_ns);			\
	else								\
		tok = push_timed(origin, ACTRACK_ACT_IO_WAIT,		\
				 (uint64_t)(fd), 0, tmo_ns);		\
	if (resumes)							\
		resume_start(tok, origin, (uint64_t)(fd));		\
	ret = REAL(name) ARGS;						\
	if (resumes)							\
		resume_note(tok, origin, (uint64_t)(fd),		\
			    ret < 0 && errno == EINTR);			\
	else								\
		pop(tok);					\
	return ret;							\
}

static uint32_t first_fd(const struct pollfd *f, nfds_t n)
{
	return n && f ? (uint32_t)f->fd : 0;
}

static bool ts_zero(const struct timespec *t)
{
	return t && !t->tv_sec && !t->tv_nsec;
}

/* select() with no descriptor in any set waits for time alone. */
static bool no_sets(int n, const fd_set *r, const fd_set *w, const fd_set *e)
{
	return n <= 0 || (!r && !w && !e);
}

/* glibc declares poll()'s array write-only (an access attribute), yet
 * the caller filled in its descriptors: gcc's warning is wrong here. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
POLL_WRAPPER(int, poll, (struct pollfd *f, nfds_t n, int tmo), (f, n, tmo),
	     tmo == 0, !n || !f, first_fd(f, n), ms_ns(tmo), false)
POLL_WRAPPER(int, ppoll, (struct pollfd *f, nfds_t n,
			  const struct timespec *t, const sigset_t *m),
	     (f, n, t, m), ts_zero(t), !n || !f, first_fd(f, n), ts_ns(t),
	     false)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
POLL_WRAPPER(int, select, (int n, fd_set *r, fd_set *w, fd_set *e,
			   struct timeval *t),
	     (n, r, w, e, t), t && !t->tv_sec && !t->tv_usec,
	     no_sets(n, r, w, e), n > 0 ? n - 1 : 0, tv_ns(t), false)
POLL_WRAPPER(int, pselect, (int n, fd_set *r, fd_set *w, fd_set *e,
			    const struct timespec *t, const sigset_t *m),
	     (n, r, w, e, t, m), ts_zero(t), no_sets(n, r, w, e),
	     n > 0 ? n - 1 : 0, ts_ns(t), false)
POLL_WRAPPER(int, epoll_wait, (int ep, struct epoll_event *ev, int n,
			       int tmo), (ep, ev, n, tmo), tmo == 0, false, ep,
	     ms_ns(tmo), true)
POLL_WRAPPER(int, epoll_pwait, (int ep, struct epoll_event *ev, int n,
				int tmo, const sigset_t *m),
	     (ep, ev, n, tmo, m), tmo == 0, false, ep, ms_ns(tmo), true)

/* The fortified poll and ppoll (-D_FORTIFY_SOURCE, the array's size
 * known): as poll and ppoll; the real call checks the size. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
POLL_WRAPPER(int, __poll_chk, (struct pollfd *f, nfds_t n, int tmo,
			       size_t l), (f, n, tmo, l), tmo == 0,
	     !n || !f, first_fd(f, n), ms_ns(tmo), false)
POLL_WRAPPER(int, __ppoll_chk, (struct pollfd *f, nfds_t n,
				const struct timespec *t, const sigset_t *m,
				size_t l), (f, n, t, m, l), ts_zero(t),
	     !n || !f, first_fd(f, n), ts_ns(t), false)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* ---- sleeps: a generic activity (action 1), info = nanoseconds --------- */

EXPORT int nanosleep(const struct timespec *r, struct timespec *m)
{
	uint32_t tok;
	int ret;

	if (!tracking())
		return REAL(nanosleep)(r, m);
	tok = push(ORIGIN(), ACT_SLEEP, CLOCK_MONOTONIC, ts_ns(r));
	ret = REAL(nanosleep)(r, m);
	pop(tok);
	return ret;
}

EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *r,
			   struct timespec *m)
{
	uint32_t tok;
	int ret;

	if (!tracking())
		return REAL(clock_nanosleep)(clk, flags, r, m);
	tok = push(ORIGIN(), ACT_SLEEP, clk, flags & TIMER_ABSTIME ? 0 :
		   ts_ns(r));
	ret = REAL(clock_nanosleep)(clk, flags, r, m);
	pop(tok);
	return ret;
}

EXPORT unsigned int sleep(unsigned int s)
{
	unsigned int ret;
	uint32_t tok;

	if (!tracking())
		return REAL(sleep)(s);
	tok = push(ORIGIN(), ACT_SLEEP, CLOCK_REALTIME,
		   (uint64_t)s * 1000000000ULL);
	ret = REAL(sleep)(s);
	pop(tok);
	return ret;
}

EXPORT int usleep(useconds_t us)
{
	uint32_t tok;
	int ret;

	if (!tracking())
		return REAL(usleep)(us);
	tok = push(ORIGIN(), ACT_SLEEP, CLOCK_REALTIME, (uint64_t)us * 1000);
	ret = REAL(usleep)(us);
	pop(tok);
	return ret;
}

/* ---- fcntl: only F_SETLKW waits (an io-wait on the descriptor) --------- */

static bool fcntl_waits(int cmd)
{
	switch (cmd) {
	case F_SETLKW:
#if defined(F_SETLKW64) && F_SETLKW64 != F_SETLKW
	case F_SETLKW64:
#endif
#ifdef F_OFD_SETLKW
	case F_OFD_SETLKW:
#endif
		return true;
	}
	return false;
}

/*
 * The third argument is an int or a pointer, as cmd says; every cmd's
 * argument fits a pointer-sized register, and the C library reads it back
 * the same way (glibc's own fcntl takes it as void *).
 */
#define FCNTL_WRAPPER(name)						\
EXPORT int name(int fd, int cmd, ...)					\
{									\
	uint32_t tok;							\
	va_list ap;							\
	void *arg;							\
	int ret;							\
									\
	va_start(ap, cmd);						\
	arg = va_arg(ap, void *);					\
	va_end(ap);							\
	CHECK_REAL(name, -1);						\
	if (!tracking() || !fcntl_waits(cmd))				\
		return REAL(name)(fd, cmd, arg);			\
	tok = push(ORIGIN(), ACTRACK_ACT_IO_WAIT, (uint64_t)fd, 0);	\
	ret = REAL(name)(fd, cmd, arg);					\
	pop(tok);							\
	return ret;							\
}

FCNTL_WRAPPER(fcntl)
FCNTL_WRAPPER(fcntl64)

/* ---- libraries loaded at run time -------------------------------------- */

/*
 * A library dlopen()ed after attach must be in the process's module list
 * before the process dies, or its frames in a death report are bare
 * addresses.  dlopen() and dlsym() find objects and symbols relative to
 * their caller (the caller's RUNPATH, $ORIGIN, RTLD_NEXT), which a C
 * wrapper would replace with this library: they are entered through
 * jumps that keep the caller's return address.  dlopen() marks the
 * thread's list stale; its next dlsym() (how a program reaches the code
 * it loaded) or tracked call records the modules again, after the load.
 * dlclose() is caller-independent: a plain wrapper.  Other architectures:
 * not interposed (actrack-run(1)).
 */
static void dl_flush(void)
{
	dl_changed = 0;
	actrack_record_modules();
}

EXPORT int dlclose(void *h)
{
	int ret;

	CHECK_REAL(dlclose, -1);
	ret = REAL(dlclose)(h);
	if (ret == 0 && tracking())
		dl_changed = 1;
	return ret;
}

#if defined(__x86_64__)
static void *real_dlopen_p __attribute__((used));
static void *real_dlsym_p __attribute__((used));

/* Called from the jumps below (hence not static); never through dlsym
 * itself, which would enter our own. */
__attribute__((used)) void *preload_dl_slow(int which);
__attribute__((used)) void *preload_dl_slow(int which)
{
	void **slot = which ? &real_dlsym_p : &real_dlopen_p;
	const char *name = which ? "dlsym" : "dlopen";
	void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (!p)
		p = dlvsym(RTLD_NEXT, name, "GLIBC_2.34");
	if (!p)
		p = dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
	__atomic_store_n(slot, p, __ATOMIC_RELAXED);
	if (which && dl_changed && tracking()) {
		int e = errno;

		arm_fork();
		guard++;
		dl_flush();
		guard_leave();
		errno = e;
	}
	return p;
}

/* Argument registers kept around the slow call (rdi, rsi, rdx, rcx;
 * 4 pushes + 8 keep the call 16-byte aligned). */
#define DL_SLOW(which)							\
	"	pushq %rdi\n	.cfi_adjust_cfa_offset 8\n"		\
	"	pushq %rsi\n	.cfi_adjust_cfa_offset 8\n"		\
	"	pushq %rdx\n	.cfi_adjust_cfa_offset 8\n"		\
	"	pushq %rcx\n	.cfi_adjust_cfa_offset 8\n"		\
	"	subq $8, %rsp\n	.cfi_adjust_cfa_offset 8\n"		\
	"	movl $" #which ", %edi\n"				\
	"	call preload_dl_slow\n"					\
	"	addq $8, %rsp\n	.cfi_adjust_cfa_offset -8\n"		\
	"	popq %rcx\n	.cfi_adjust_cfa_offset -8\n"		\
	"	popq %rdx\n	.cfi_adjust_cfa_offset -8\n"		\
	"	popq %rsi\n	.cfi_adjust_cfa_offset -8\n"		\
	"	popq %rdi\n	.cfi_adjust_cfa_offset -8\n"		\
	"	jmp *%rax\n"

__asm__(
"	.text\n"
"	.globl dlopen\n"
"	.type dlopen, @function\n"
"	.p2align 4\n"
"dlopen:\n"
"	.cfi_startproc\n"
"	movq push_work@gottpoff(%rip), %rax\n"
"	movl $1, %fs:4(%rax)\n"
"	movq real_dlopen_p(%rip), %rax\n"
"	testq %rax, %rax\n"
"	jz 1f\n"
"	jmp *%rax\n"
"1:\n"
	DL_SLOW(0)
"	.cfi_endproc\n"
"	.size dlopen, .-dlopen\n"
"	.globl dlsym\n"
"	.type dlsym, @function\n"
"	.p2align 4\n"
"dlsym:\n"
"	.cfi_startproc\n"
"	movq push_work@gottpoff(%rip), %rax\n"
"	cmpl $0, %fs:4(%rax)\n"
"	jne 1f\n"
"	movq real_dlsym_p(%rip), %rax\n"
"	testq %rax, %rax\n"
"	jz 1f\n"
"	jmp *%rax\n"
"1:\n"
	DL_SLOW(1)
"	.cfi_endproc\n"
"	.size dlsym, .-dlsym\n"
);
#endif

/* ---- fork ---------------------------------------------------------------- */

/*
 * The child of a fork() made by a signal handler that interrupted our
 * bookkeeping (a server's master forks that way) inherits the guard set:
 * it would stay untracked for ever.  The child's single thread is in no
 * bookkeeping of ours that it can see (the interrupted one is below the
 * handler it runs), so it starts afresh: no guard, no pending activities
 * (its tracker is a new one), no other threads' tids, none starting.
 */
static __actrack_fork_path void child_after_fork(void)
{
	guard = 0;
	nr_pending = 0;
	__atomic_store_n(&starting, 0, __ATOMIC_RELAXED);
	/* 16 KiB never touched: clearing them would fault in four pages
	 * in every child of a shell. */
	if (!tids)
		return;
	for (unsigned int k = 0; k < TID_ENTRIES; k++)
		if (k + 1 != my_tid_entry) {
			tids[k].tid = 0;
			tids[k].th = 0;
		}
}
ACTRACK_FORK_HOOK(preload_fork, .child = child_after_fork)

/* ---- start-up ---------------------------------------------------------- */

/* `actrack run --no-follow`: leave our entry out of LD_PRELOAD, so that
 * the programs this one starts run as they would without actrack. */
static void drop_from_ld_preload(void)
{
	const char *cur = getenv("LD_PRELOAD");
	char *copy, *out, *tok, *save = NULL;
	size_t len;

	unsetenv(ENV_NO_FOLLOW);
	if (!cur)
		return;
	len = strlen(cur);
	copy = malloc(len + 1);
	out = malloc(len + 1);
	if (!copy || !out)
		goto out;
	memcpy(copy, cur, len + 1);
	out[0] = 0;
	for (tok = strtok_r(copy, ": ", &save); tok;
	     tok = strtok_r(NULL, ": ", &save)) {
		const char *base = strrchr(tok, '/');

		if (!strcmp(base ? base + 1 : tok, PRELOAD_NAME))
			continue;
		if (out[0])
			strcat(out, ":");
		strcat(out, tok);
	}
	if (out[0])
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
out:
	free(copy);
	free(out);
}

/*
 * `actrack run` asks (ENV_NOTICE) to be told once when tracking cannot
 * start: one line on stderr, then the variable is gone, so that neither
 * this program's children nor a second failure repeat it.  A program
 * that preloads us by hand hears nothing: a guest does not write into its
 * host's stderr unasked.
 */
static void notice_untracked(int err)
{
	const char *want = getenv(ENV_NOTICE);
	char path[256], comm[16] = "";
	int fd;

	if (!want || !*want)
		return;
	unsetenv(ENV_NOTICE);
	if (actrack_arena_path(NULL, path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "(unnamed)");
	fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, comm, sizeof(comm) - 1);

		comm[n > 0 ? n - 1 : 0] = 0;
		close(fd);
	}
	dprintf(STDERR_FILENO, "actrack: %s (pid %d) runs untracked: arena "
		"%s: %s (actrack-run(1): ARENA)\n", comm, (int)getpid(), path,
		strerror(-err));
}

/*
 * A program linked with libactrack has its own copy, which attaches by
 * itself: two copies in one process would be two process records for one
 * pid, and the second attach would free the first one's records as an
 * earlier image's (lib/attach.c).  Such a program tracks itself; we stay
 * out of its way.
 */
static int find_libactrack(struct dl_phdr_info *info, size_t size,
			   void *unused)
{
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	(void)unused;
	base = base ? base + 1 : info->dlpi_name;
	return !strncmp(base, "libactrack.so.", strlen("libactrack.so."));
}

static bool libactrack_loaded(void)
{
	return dl_iterate_phdr(find_libactrack, NULL) != 0;
}

__attribute__((constructor)) static void preload_init(int argc, char **argv,
						    char **envp)
{
	int e = errno, ret;
	const char *nf;

	guard++;
	/* The rest on first use: most programs call few of them. */
	REAL(pthread_mutex_lock);
	REAL(pthread_mutex_trylock);
	REAL(pthread_mutex_unlock);
	/* ...and those a signal handler most often calls (a self-pipe's
	 * write): a lookup is not async-signal-safe. */
	REAL(read);
	REAL(write);
#if defined(__x86_64__)
	preload_dl_slow(0);
	real_dlsym_p = preload_dl_slow(1);
#endif
	if (libactrack_loaded()) {
		/* Every wrapper passes the call through (ready stays 0). */
		guard_leave();
		errno = e;
		return;
	}
	nf = getenv(ENV_NO_FOLLOW);
	if (nf && *nf)
		drop_from_ld_preload();
	/*
	 * Attach at the first push (or lock, or thread created): most
	 * images a shell or make starts (true, sed, cc's driver before it
	 * waits) never block, and attaching (the arena's open and mmap,
	 * the start time from /proc, the process record, the modules, the
	 * main thread's tracker) was most of what this library cost them.
	 * Such an image is in no record, hence not in `actrack ps`.  Now
	 * only when `actrack run` started us (the program the user named
	 * is listed at once, and told when it runs untracked) or an image
	 * of this pid before exec() may have attached (its records are
	 * replaced now: they must not stand for us).  The command line is
	 * copied now, as exec() gave it, for whenever we attach.
	 */
	(void)argc;
	(void)envp;
	if (argv)
		__actrack_set_argv(argv);
	if (__actrack_image_begin()) {
		ret = actrack_init(&(struct actrack_opts){
			.sz = sizeof(struct actrack_opts),
		});
		if (!ret)
			ret = actrack_thread_init(NULL);
		if (ret)
			notice_untracked(ret);
	}
	guard_leave();
	__atomic_store_n(&ready, 1, __ATOMIC_RELAXED);
	errno = e;
}
