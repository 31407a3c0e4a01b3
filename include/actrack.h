/* SPDX-License-Identifier: MIT */
/*
 * libactrack: always-on activity tracking for crash and hang forensics.
 *
 * Threads push what they are doing (a task, a lock, an event, a join, a
 * child process, I/O) onto a small per-thread stack that lives in a shared
 * arena: /dev/actrack when actrack.ko is loaded, else a file (default
 * /dev/shm/actrack-UID, or $ACTRACK_ARENA).  After a crash, hang or kill the
 * stack is still there for `actrack dump` and for the death report.
 *
 * Conventions: functions return 0 (or a count/handle) on success and a
 * negative errno on failure.  Calling context is given for each function;
 * "hot path" means no lock, no syscall, no allocation, async-signal-safe
 * once the thread has a tracker (see actrack_thread_init()).  A signal
 * handler that pushes while its thread was in the middle of a push may
 * leave that one interrupted slot with some fields of its own activity:
 * never a crash or a bad reference, and the depth stays right.
 *
 * A broken setup costs the host next to nothing.  When attaching fails
 * (no module and $ACTRACK_ARENA names a missing directory, a file that is
 * not an arena, a FIFO...) or the arena is full, pushes return token 0 and
 * are dropped (counted in actrack__tls.dropped, about as cheap as a normal
 * push); implicit attaches - pushes and every other call - try again at
 * most once a second, backing off to once a minute, while actrack_init()
 * and actrack_thread_init() try at once.  A push never blocks: in a signal
 * handler that interrupted this library on the same thread, or while
 * another thread holds the attach lock, it is dropped.  The first push of
 * a thread may attach the process (syscalls, dl_iterate_phdr()), so a
 * thread that pushes from signal handlers calls actrack_thread_init()
 * first; other calls made from a handler that interrupted the library
 * return -EDEADLK.
 *
 * Migrating from libactrack 1 (libactrack.so.1) to 2 (libactrack.so.2,
 * symbol version LIBACTRACK_2.0).  Only struct actrack_death changed; the
 * functions, the arena, the module's netlink attributes and the CLI's
 * JSON are the same.  A death report now holds its process in the shape
 * a snapshot gives a live one, so one piece of code reads both:
 *  - d->pid, start_ticks, phase, cmdline, nr_threads/threads,
 *    nr_modules/modules, nr_values/values are d->process.pid, ... ;
 *  - d->cmdline_size is gone: d->process.cmdline is NUL-terminated
 *    (empty when the process had no command line record);
 *  - a thread is a struct actrack_snap_thread (struct actrack_death_thread
 *    is gone): t->activities[i] is a struct actrack_snap_activity whose .a
 *    is the activity (t->activities[i].a.type), and the user data of
 *    activity i is t->activities[i].values/nr_values (was t->values[i],
 *    t->nr_values[i]); there are nr_activities of them, no fixed array;
 *  - threads known only by a stack at death (no tracker) are threads too,
 *    after the first d->nr_tracked_threads, with their tid alone.
 * Rebuild against this header and link with -lactrack (pkg-config
 * libactrack); the Debian package is libactrack2.
 */
#ifndef ACTRACK_H
#define ACTRACK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <linux/actrack.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACTRACK_API __attribute__((visibility("default")))

/*
 * The library's version (libactrack.pc and `actrack --version` say the
 * same); the ABI of the arena and the module is ACTRACK_ABI_MAJOR/MINOR.
 */
#define ACTRACK_VERSION_MAJOR	0
#define ACTRACK_VERSION_MINOR	2
#define ACTRACK_VERSION_PATCH	0
#define ACTRACK_VERSION		"0.2.0"

/** actrack_version() - the version of the library the program runs with
 * (may be newer than the ACTRACK_VERSION it was built with).  Any
 * context.  Return: "MAJOR.MINOR.PATCH", never NULL. */
ACTRACK_API const char *actrack_version(void);

/* ---------------------------------------------------------------------- */
/* Attaching                                                               */
/* ---------------------------------------------------------------------- */

/* Environment: ACTRACK_ARENA=path forces a file arena at path. */
#define ACTRACK_ENV_ARENA	"ACTRACK_ARENA"
/* Which process image attached last (ACTRACK_INIT_MARK_IMAGE). */
#define ACTRACK_ENV_IMAGE	"ACTRACK_IMAGE"
#define ACTRACK_FILE_DEFAULT_SIZE	(4U * 1024 * 1024)
#define ACTRACK_DEFAULT_SLOTS	8

enum actrack_backend {
	ACTRACK_BACKEND_NONE,
	ACTRACK_BACKEND_MODULE,		/* /dev/actrack */
	ACTRACK_BACKEND_FILE,		/* file-backed arena */
};

/*
 * Options for actrack_init(); set @sz = sizeof(struct actrack_opts).  The
 * struct may grow at its end: a library newer than the program reads the
 * fields it lacks as 0, and an older library accepts a newer program's
 * struct as long as every field it does not know is 0 (else -E2BIG).
 */
struct actrack_opts {
	size_t sz;
	const char *arena_path;	/* file arena; NULL: env, module, default */
	uint32_t file_size;	/* bytes for a new file arena, 0 = default */
	uint32_t stack_slots;	/* stored activities per thread, 0 = 8 */
	uint32_t flags;		/* ACTRACK_INIT_* */
};
#define ACTRACK_INIT_NO_MODULE	(1U << 0)	/* never use /dev/actrack */
#define ACTRACK_INIT_NO_MODULES	(1U << 1)	/* don't record ELF modules */
/*
 * The caller is single-threaded (a constructor, before main()): the
 * library may name this image in the environment ($ACTRACK_IMAGE, "pid
 * start_ticks"), so that a program it exec()s, which keeps the pid and
 * its start time, frees this image's records in a file arena (where no
 * module does) instead of leaving them beside its own.  The preload of
 * `actrack run` sets it.
 */
#define ACTRACK_INIT_MARK_IMAGE	(1U << 2)

/**
 * actrack_init() - attach this process to its arena.  Optional: the first
 * push attaches with defaults.  Creates the file arena if needed, registers
 * the process (module: ACTRACK_IOC_ATTACH), writes the process record
 * (cmdline, phase LAUNCHED) and the loaded modules.  Idempotent; in a
 * forked child it re-attaches.  Context: any thread, not a signal handler.
 * Return: 0, -EEXIST (already attached with other options), -EINVAL (bad
 * option, @sz smaller than any version of the struct), -E2BIG (non-zero
 * bytes beyond the fields this library knows), -errno.
 */
ACTRACK_API int actrack_init(const struct actrack_opts *opts);

/**
 * actrack_arena_path() - name the arena actrack_init(@opts) would attach
 * to; with @opts NULL, the one actrack_snapshot_take(NULL, 0),
 * actrack_arena_save(NULL, 0, ...) and actrack_arena_collect(NULL, 0, ...)
 * read: @opts->arena_path, else $ACTRACK_ARENA (through secure_getenv()),
 * else /dev/actrack if it exists (unless ACTRACK_INIT_NO_MODULE), else
 * /dev/shm/actrack-UID.  The library itself chooses through this same
 * order.  Opens and creates nothing, so the arena may not exist (yet).
 * Context: any thread, not a signal handler.
 * Return: ACTRACK_BACKEND_MODULE or ACTRACK_BACKEND_FILE with the path in
 * @buf (NUL-terminated), -EINVAL (@buf NULL, bad options as for
 * actrack_init(), an empty @opts->arena_path), -E2BIG (as for
 * actrack_init()), -ENAMETOOLONG (the path needs more than @len bytes
 * with its NUL).
 */
ACTRACK_API int actrack_arena_path(const struct actrack_opts *opts,
				   char *buf, size_t len);

/**
 * actrack_reattach() - leave the arena and attach again, as the process's
 * current uid and environment name it.  A process that drops privileges
 * (setuid(), setresuid()) keeps the old uid's writable arena mapped until
 * it calls this: call it right after the change, while no other thread
 * has a tracker (they would point into the unmapped arena).  This
 * thread's tracker and the process's records in the old arena are freed;
 * the next push makes a new tracker.  $ACTRACK_ARENA is read with
 * secure_getenv(): a setuid or setgid program ignores it.
 * Context: any thread, not a signal handler.
 * Return: 0, -EBUSY (another thread has a tracker: nothing changed),
 * -EDEADLK (called from inside the library), or actrack_init()'s errors
 * (then the process is not attached; pushes are dropped).
 */
ACTRACK_API int actrack_reattach(void);

/**
 * actrack_stack_policy() - (LIBACTRACK_2.0, ABI 1.5) this process's say
 * over the stacks actrack.ko copies as it dies (docs/trust.md): @reader
 * (a pid; 0: none) names the one monitor process that may receive them
 * where kernel.yama.ptrace_scope is 1, as PR_SET_PTRACER names a
 * ptracer; @flags ACTRACK_STACKS_ON_EXIT also captures the other threads'
 * stacks at a clean exit() (by default only a death by a signal does).
 * Each call replaces the previous policy; exec() and fork() start without
 * one.  Attaches first if needed.
 * Context: any thread, not a signal handler.
 * Return: 0, -EOPNOTSUPP (a file arena: nothing is captured there),
 * -ENOTTY (a module older than ABI 1.5), -EINVAL (unknown @flags, @reader
 * negative), -ESRCH (@reader does not exist), actrack_init()'s errors.
 */
ACTRACK_API int actrack_stack_policy(uint32_t flags, pid_t reader);

/** actrack_backend() - where this process is attached. */
ACTRACK_API enum actrack_backend actrack_backend(void);

/** actrack_thread_init() - create this thread's tracker now (so that a
 * later push from a signal handler needs nothing).  Return: 0 or -errno. */
ACTRACK_API int actrack_thread_init(const char *name);

/** actrack_set_thread_name() - name shown by the analyzer (<= 31 bytes). */
ACTRACK_API int actrack_set_thread_name(const char *name);

/* ---------------------------------------------------------------------- */
/* Activities: the hot path                                               */
/* ---------------------------------------------------------------------- */

/* Private to the inline fast path; do not use directly. */
struct actrack__tls {
	struct actrack_thread *tracker;
	uint32_t slot_count;
	uint32_t dropped;		/* pushes without a tracker */
	const volatile uint64_t *clock;	/* kernel clock word, or NULL */
};
extern __thread struct actrack__tls actrack__tls
	__attribute__((tls_model("initial-exec")));

/*
 * Private to the inline held-set functions (LIBACTRACK_1.2: a program
 * that uses them refuses to run with an older library, which would not
 * keep them): the tracker's held-lock set, NULL without a tracker, and
 * how many of its entries are in use (the owner's own count, never read
 * back from the arena).
 */
struct actrack__held_tls {
	struct actrack_held *held;
	uint32_t nr;
};
extern __thread struct actrack__held_tls actrack__held_tls
	__attribute__((tls_model("initial-exec")));
ACTRACK_API struct actrack_thread *actrack__thread_slow(void);

/* The pc of the code that expands this macro. */
#define ACTRACK_HERE()							\
	__extension__({ __label__ __actrack_here; __actrack_here:	\
			(uint64_t)(uintptr_t)&&__actrack_here; })

/* The coarse clock out of line, for includers without POSIX time. */
ACTRACK_API uint64_t actrack__coarse_now(void);

/*
 * The vDSO's coarse clock, inline: an extra call layer costs as much as
 * the rest of a push.  A strict -std=c99/c11 includer without feature
 * macros gets no clock_gettime() from <time.h>; it calls the library.
 */
static inline __attribute__((always_inline)) uint64_t actrack__now(void)
{
	const volatile uint64_t *clock = actrack__tls.clock;

	if (clock)
		return *clock;
#ifdef CLOCK_MONOTONIC_COARSE
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		return (uint64_t)ts.tv_sec * 1000000000ULL +
		       (uint64_t)ts.tv_nsec;
	}
#else
	return actrack__coarse_now();
#endif
}

static inline __attribute__((always_inline)) uint32_t
actrack__push_timed(uint64_t origin, uint8_t type, uint64_t object,
		    uint64_t info, uint64_t timeout_ns)
{
	struct actrack_thread *t = actrack__tls.tracker;
	uint32_t depth;

	if (__builtin_expect(t == NULL, 0)) {
		t = actrack__thread_slow();
		if (!t)
			return 0;
	}
	depth = __atomic_load_n(&t->depth, __ATOMIC_RELAXED);
	if (__builtin_expect(depth < actrack__tls.slot_count, 1)) {
		uint64_t now = actrack__now();
		struct actrack_activity *s = &ACTRACK_THREAD_SLOTS(t)[depth];

		s->time_ns = now;
		s->origin = origin;
		s->object = object;
		s->info = info;
		s->user_data = 0;
		s->type = type;
		s->timeout_ns = timeout_ns;
	}
	/* Publish: a reader that sees depth+1 sees the filled slot. */
	__atomic_store_n(&t->depth, depth + 1, __ATOMIC_RELEASE);
	return depth + 1;
}

/*
 * A wait without a timeout, or anything else.  A macro, not a second
 * inline layer: the ACTRACK_HERE() origin of the caller must stay one
 * inline level from its code, or clang attributes it to this header.
 */
#define actrack__push(origin, type, object, info)			\
	actrack__push_timed((origin), (type), (object), (info), 0)

/**
 * actrack_pop() - end the activity that returned @token.  Also pops any
 * deeper activity that was never popped.  Hot path.
 *
 * A token is this thread's depth just after its push, nothing more, so the
 * library cannot tell a right token from a wrong one of the same value:
 * - 0 (an untracked push) and any token above the current depth (an
 *   activity already popped, a token of another thread, garbage) are
 *   ignored: the depth never rises through a pop.
 * - A stale or foreign token at or below the current depth pops to
 *   @token - 1, ending whatever activities are there now.
 * Pop each token once, on the thread that pushed it.
 */
static inline __attribute__((always_inline)) void actrack_pop(uint32_t token)
{
	struct actrack_thread *t = actrack__tls.tracker;
	uint32_t v;

	if (__builtin_expect(t == NULL, 0))
		return;
	/* One unsigned compare refuses both 0 and tokens above the depth. */
	if (__builtin_expect(token - 1 >=
			     __atomic_load_n(&t->depth, __ATOMIC_RELAXED), 0))
		return;
	__atomic_store_n(&t->depth, token - 1, __ATOMIC_RELAXED);
	v = __atomic_load_n(&t->version, __ATOMIC_RELAXED);
	/* +2: the version stays even; odd means a slot is being rewritten
	 * (actrack_change), which readers must not copy. */
	__atomic_store_n(&t->version, v + 2, __ATOMIC_RELAXED);
	/* Order the version bump before the next push's slot stores: a
	 * reader that sees a reused slot's new contents sees the new version. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* Push helpers: each returns a token for actrack_pop(), 0 if untracked. */
#define actrack_push_task(task_id)					\
	actrack__push(ACTRACK_HERE(), ACTRACK_ACT_TASK_RUN, (task_id), 0)
#define actrack_push_lock_acquire(lock)					\
	actrack__push(ACTRACK_HERE(), ACTRACK_ACT_LOCK_ACQUIRE,		\
		      (uint64_t)(uintptr_t)(lock), 0)
#define actrack_push_lock_held(lock)					\
	actrack__push(ACTRACK_HERE(), ACTRACK_ACT_LOCK_HELD,		\
		      (uint64_t)(uintptr_t)(lock), 0)
#define actrack_push_event_wait(event)					\
	actrack__push(ACTRACK_HERE(), ACTRACK_ACT_EVENT_WAIT,		\
		      (uint64_t)(uintptr_t)(event), 0)
/**
 * actrack_held_add() - record that this thread now holds @lock (after it
 * was acquired: a mutex, a write or read lock), so that the analyzer can
 * name the holder of a lock another thread waits for, whatever order
 * locks are released in.  @shared: the lock is process-shared (threads
 * of other processes may wait for it at the same address).  A thread
 * keeps ACTRACK_HELD_SLOTS locks in its set; more are only counted.
 * Hot path.  Records nothing in a thread without a tracker: it never
 * attaches, since it runs with the lock already taken, which may be one
 * that attaching needs (call actrack_thread_init() before locking).
 */
static inline __attribute__((always_inline)) void
actrack_held_add(const void *lock, bool shared)
{
	struct actrack_held *h = actrack__held_tls.held;
	uint32_t n;

	if (__builtin_expect(h == NULL, 0))
		return;
	n = actrack__held_tls.nr;
	if (__builtin_expect(n < ACTRACK_HELD_SLOTS, 1)) {
		__atomic_store_n(&h->locks[n], (uint64_t)(uintptr_t)lock |
				 (shared ? ACTRACK_HELD_SHARED : 0),
				 __ATOMIC_RELAXED);
		actrack__held_tls.nr = n + 1;
	} else {
		__atomic_store_n(&h->overflow, h->overflow + 1,
				 __ATOMIC_RELAXED);
	}
}

/**
 * actrack_held_remove() - @lock was released by this thread: drop one
 * entry of it from the set (the newest first).  Hot path.
 * Return: true if it was in the set (or counted in its overflow).
 */
static inline __attribute__((always_inline)) bool
actrack_held_remove(const void *lock)
{
	struct actrack_held *h = actrack__held_tls.held;
	uint64_t v = (uint64_t)(uintptr_t)lock;
	uint32_t n, i;

	if (__builtin_expect(h == NULL, 0))
		return false;
	n = actrack__held_tls.nr;
	for (i = n; i-- > 0;) {
		if ((h->locks[i] & ~ACTRACK_HELD_SHARED) != v)
			continue;
		/* Keep the set dense: the last entry moves into the hole
		 * before its old place is cleared, so it is never absent. */
		if (i != n - 1)
			__atomic_store_n(&h->locks[i], h->locks[n - 1],
					 __ATOMIC_RELAXED);
		__atomic_store_n(&h->locks[n - 1], 0, __ATOMIC_RELAXED);
		actrack__held_tls.nr = n - 1;
		return true;
	}
	if (h->overflow) {
		__atomic_store_n(&h->overflow, h->overflow - 1,
				 __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

/**
 * actrack_pthread_tid() - the kernel thread id of @th, for
 * actrack_push_thread_join(): the analyzer links a join to the thread it
 * waits for by tid.  Known only for threads of this process that have a
 * tracker (they pushed, or called actrack_thread_init()), and forgotten
 * when the thread exits; so look it up before pthread_join(), or have the
 * thread call actrack_thread_init() first.  At most 4096 threads at once.
 * Lock-free; any context.  Return: the tid, or -ESRCH.
 */
ACTRACK_API pid_t actrack_pthread_tid(pthread_t th);

#define actrack_push_thread_join(tid)					\
	actrack__push(ACTRACK_HERE(), ACTRACK_ACT_THREAD_JOIN, (tid), 0)
#define actrack_push_process_wait(pid)					\
	actrack__push(ACTRACK_HERE(), ACTRACK_ACT_PROCESS_WAIT, (pid), 0)
#define actrack_push_io_wait(fd, bytes)					\
	actrack__push(ACTRACK_HERE(), ACTRACK_ACT_IO_WAIT, (fd), (bytes))
#define actrack_push_generic(action, id, info)				\
	actrack__push(ACTRACK_HERE(), ACTRACK_ACT_GENERIC_ACTION(action),	\
		      (id), (info))

/*
 * Scoped activities: popped when the enclosing block is left, however it
 * is left.  ACTRACK_SCOPE(lock_acquire, &mu); ... ;
 */
static inline void actrack__scope_end(uint32_t *token)
{
	actrack_pop(*token);
}
#define ACTRACK__CAT2(a, b) a##b
#define ACTRACK__CAT(a, b) ACTRACK__CAT2(a, b)
#define ACTRACK_SCOPE(kind, ...)					\
	uint32_t ACTRACK__CAT(__actrack_scope_, __LINE__)		\
		__attribute__((cleanup(actrack__scope_end), unused)) =	\
		actrack_push_##kind(__VA_ARGS__)

/*
 * The same with its token in variable @tok of the enclosing block, to
 * annotate the scoped activity: ACTRACK_SCOPE_TOKEN(t, task, id);
 * actrack_set_uint(actrack_activity_data(t), "bytes", n);
 * Only activities that sit in a slot take user data: the first
 * stack_slots of a thread's stack (8 unless actrack_init() asked for up to
 * ACTRACK_THREAD_MAX_SLOTS).  Deeper ones count in the depth only, and
 * actrack_activity_data() returns NULL for them: to annotate activities
 * nested deeper than 8, raise stack_slots.
 */
#define ACTRACK_SCOPE_TOKEN(tok, kind, ...)				\
	uint32_t tok __attribute__((cleanup(actrack__scope_end))) =	\
		actrack_push_##kind(__VA_ARGS__)

/**
 * actrack_change() - update object/info of the activity of @token while it
 * is on the stack (e.g. a task moving to its next step).  Hot path.
 */
ACTRACK_API void actrack_change(uint32_t token, uint64_t object,
				uint64_t info);

/** actrack_depth() - current depth of this thread (0 without tracker). */
ACTRACK_API uint32_t actrack_depth(void);

/* ---------------------------------------------------------------------- */
/* User data                                                               */
/* ---------------------------------------------------------------------- */

struct actrack_user_data;

/**
 * actrack_activity_data() - user data of the activity of @token, created on
 * first use, emptied when its slot is reused.  Owner thread only; may
 * allocate in the arena (lock-free).  Return: handle or NULL.
 */
ACTRACK_API struct actrack_user_data *actrack_activity_data(uint32_t token);

/** actrack_process_data() - this process's annotations; any thread. */
ACTRACK_API struct actrack_user_data *actrack_process_data(void);

/** actrack_global_data() - the arena-wide annotations; any thread of any
 * process of the uid. */
ACTRACK_API struct actrack_user_data *actrack_global_data(void);

/*
 * Setters: add the field or rewrite it in place (same type, value fits its
 * record).  Names are at most ACTRACK_FIELD_NAME_MAX bytes.  Process and
 * global sets are safe from any thread; activity sets from the owner.
 * Return: 0, -EINVAL, -ENOSPC (set full), -E2BIG (value too big), -EEXIST
 * (name exists with another type).
 */
ACTRACK_API int actrack_set_raw(struct actrack_user_data *ud, const char *name,
				const void *data, size_t size);
ACTRACK_API int actrack_set_string(struct actrack_user_data *ud,
				   const char *name, const char *value);
ACTRACK_API int actrack_set_bool(struct actrack_user_data *ud,
				 const char *name, bool value);
ACTRACK_API int actrack_set_char(struct actrack_user_data *ud,
				 const char *name, char value);
ACTRACK_API int actrack_set_int(struct actrack_user_data *ud, const char *name,
				int64_t value);
ACTRACK_API int actrack_set_uint(struct actrack_user_data *ud,
				 const char *name, uint64_t value);
ACTRACK_API int actrack_set_raw_ref(struct actrack_user_data *ud,
				    const char *name, const void *data,
				    size_t size);
ACTRACK_API int actrack_set_string_ref(struct actrack_user_data *ud,
				       const char *name, const char *value);

/* ---------------------------------------------------------------------- */
/* Process: phase, log, modules, fatal signals, launch/exit, collector     */
/* ---------------------------------------------------------------------- */

/** actrack_set_phase() - ACTRACK_PHASE_*; any thread.  Return 0/-errno. */
ACTRACK_API int actrack_set_phase(uint32_t phase);

/** actrack_log() - append to this process's recycled log ring (truncated to
 * ACTRACK_LOG_TEXT_MAX - 1 bytes); any thread.  Return: 0/-errno. */
ACTRACK_API int actrack_log(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/** actrack_record_modules() - (re)record loaded ELF objects with their
 * build-ids (dl_iterate_phdr).  Return: number recorded or -errno. */
ACTRACK_API int actrack_record_modules(void);

/**
 * actrack_record_fatal_signals() - opt in: on SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE, SIGABRT, SIGTRAP, SIGSYS store signal, code, fault address and pc
 * in the thread's tracker, then take the default action.
 * Return: 0/-errno.
 */
ACTRACK_API int actrack_record_fatal_signals(void);

/**
 * actrack_record_process_launch() - a launching parent records a child
 * (Chromium RecordProcessLaunch): remembers its (pid, start_ticks) so that
 * actrack_record_process_exit() can report and clean up after it on a file
 * arena.  Return: 0/-errno (-ESRCH: no such process).
 */
ACTRACK_API int actrack_record_process_launch(pid_t pid);

struct actrack_death;
typedef void (*actrack_exit_fn)(const struct actrack_death *death, void *arg);

/** actrack_set_exit_callback() - called by actrack_record_process_exit()
 * with the death report, before the records are freed (on a file arena);
 * with the module, with the kernel's report of that child (received
 * through the monitor, up to 2 s after its exit; -ETIMEDOUT otherwise). */
ACTRACK_API void actrack_set_exit_callback(actrack_exit_fn fn, void *arg);

/**
 * actrack_record_process_exit() - after waitpid(): build the death report of
 * a launched child, call the exit callback, free its records (Chromium
 * RecordProcessExit + CleanupAfterProcess).  With the module this is done
 * by the kernel; the call then only forgets the child.  A zombie counts
 * as exited.
 * Return: records freed, or -ENOENT (not launched by us), -EBUSY (the
 * child still runs: nothing freed, call again after waitpid()), -errno.
 */
ACTRACK_API int actrack_record_process_exit(pid_t pid, int wait_status);

/**
 * actrack_collect_garbage() - free records of every (pid, start_ticks) that
 * no longer names a live process (file arenas).  Owners of another pid
 * namespace are kept: this one's /proc cannot tell whether they live.
 * Return: records freed or -errno.
 */
ACTRACK_API int actrack_collect_garbage(void);

/** actrack_read_start_ticks() - field 22 of /proc/PID/stat. */
ACTRACK_API int actrack_read_start_ticks(pid_t pid, uint64_t *ticks);

/**
 * actrack_boot_id() - this boot's id, /proc/sys/kernel/random/boot_id, as
 * the 16 bytes an arena header's boot_id holds.  An arena or image whose
 * boot_id differs (or is zero: unknown) was written during another boot:
 * its pids, start ticks and CLOCK_MONOTONIC times name nothing here.
 * Context: any thread, not a signal handler.
 * Return: 0, -EINVAL (@id NULL), -EBADMSG (the file holds no UUID), or the
 * -errno of opening or reading it (-ENOENT without /proc); on failure
 * @id is all zeros.
 */
ACTRACK_API int actrack_boot_id(uint8_t id[16]);

/* ---------------------------------------------------------------------- */
/* Snapshots (read-only analysis, any process)                             */
/* ---------------------------------------------------------------------- */

struct actrack_value {
	char name[ACTRACK_FIELD_NAME_MAX + 1];
	uint8_t type;			/* ACTRACK_VALUE_* */
	uint32_t size;			/* bytes in bytes[] (raw/string) */
	union {
		int64_t s;
		uint64_t u;
		bool b;
		char c;
		struct actrack_value_ref ref;
	};
	uint8_t *bytes;			/* raw/string, NUL-terminated */
};

struct actrack_snap_activity {
	struct actrack_activity a;
	uint32_t nr_values;
	struct actrack_value *values;
};

struct actrack_snap_thread {
	uint32_t pid, tid;
	uint32_t pid_ns;		/* pid namespace inode (0: unknown) */
	uint64_t start_ticks;
	char name[32];
	uint64_t start_time_ns;
	uint32_t depth;			/* may exceed nr_activities */
	uint32_t version;		/* +2 by every pop and change */
	uint32_t nr_activities;
	bool torn;			/* no consistent copy: no activities */
	int32_t fatal_signo, fatal_code;
	uint64_t fatal_addr, fatal_pc;
	struct actrack_snap_activity *activities; /* outermost first */
	/* ABI 1.2: the locks it holds (struct actrack_held): addresses with
	 * ACTRACK_HELD_SHARED or-ed in for process-shared ones; more than
	 * nr_held are held if held_overflow is not 0. */
	uint32_t nr_held;
	uint32_t held_overflow;
	uint64_t held[ACTRACK_HELD_SLOTS];
};

struct actrack_snap_log {
	uint64_t seq;
	uint32_t tid;
	uint64_t time_ns;
	char text[ACTRACK_LOG_TEXT_MAX];
};

struct actrack_snap_module {
	uint64_t base, size, vaddr;
	uint8_t build_id_size;
	uint8_t build_id[ACTRACK_BUILD_ID_MAX];
	char path[ACTRACK_PATH_MAX];
};

struct actrack_snap_process {
	uint32_t pid;
	uint32_t pid_ns;		/* pid namespace inode (0: unknown) */
	uint64_t start_ticks;
	bool has_record;		/* false: threads only, no process record */
	uint32_t phase, parent_pid;
	uint64_t launch_time_ns;
	char cmdline[ACTRACK_CMDLINE_MAX + 1];	/* argv joined by spaces */
	uint32_t nr_values, nr_threads, nr_logs, nr_modules;
	struct actrack_value *values;
	struct actrack_snap_thread *threads;
	struct actrack_snap_log *logs;		/* oldest first */
	struct actrack_snap_module *modules;
};

struct actrack_snapshot {
	struct actrack_arena_header header;	/* copied, validated */
	uint64_t taken_mono_ns;			/* when the snapshot was taken */
	uint32_t used_bytes, free_bytes;
	bool corrupt;				/* bad data met and skipped */
	uint32_t nr_torn;			/* threads with no consistent copy */
	uint32_t nr_processes, nr_global_values;
	struct actrack_snap_process *processes;	/* by pid */
	struct actrack_value *global_values;
};

#define ACTRACK_SNAP_ARENA_FILE	(1U << 0)	/* @path is a file/saved image */
/* The command lines as the records hold them: /proc/PID/cmdline is not
 * read (a title a program set later, nginx's "worker process", is not
 * seen); for a look that prints nothing (LIBACTRACK_2.0). */
#define ACTRACK_SNAP_NO_CMDLINES	(1U << 1)
/* The arena our uid (actrack_snapshot_take(), @path NULL) or @uid
 * (actrack_snapshot_take_uid()) had when the previous boot ended, as the
 * module's persist= region kept it: host root only (-EPERM), -ENODATA
 * when there is no such image, -ENOENT when it holds none of that uid.
 * Read with the same validating walk as a live arena (ABI 1.8). */
#define ACTRACK_SNAP_PREVIOUS_BOOT	(1U << 2)

/**
 * actrack_snapshot_take() - read an arena without writing to it: @path is a
 * file arena or saved image with ACTRACK_SNAP_ARENA_FILE; else NULL means
 * the arena this process would attach to.  Torn threads are marked, bad
 * records skipped and counted (corrupt), never returned as data.
 * Return: 0 and *@out, -EBADMSG (not an arena), -EPROTONOSUPPORT,
 * -EUCLEAN (header corrupt), -ENOENT, -errno.
 */
ACTRACK_API int actrack_snapshot_take(const char *path, uint32_t flags,
				      struct actrack_snapshot **out);
/**
 * actrack_snapshot_take_uid() - as actrack_snapshot_take(NULL, @flags) on
 * the module's arena of @uid instead of the caller's own (ACTRACK_IOC_SELECT;
 * another uid's needs CAP_SYS_PTRACE or CAP_SYS_ADMIN).  @flags: only
 * ACTRACK_SNAP_NO_CMDLINES and ACTRACK_SNAP_PREVIOUS_BOOT.  LIBACTRACK_2.0.
 * Return: 0 and *@out, -ENOENT (no module, or no arena for @uid: nothing
 * of @uid was ever tracked), -EPERM, -EINVAL, -errno.
 */
ACTRACK_API int actrack_snapshot_take_uid(uint32_t uid, uint32_t flags,
					  struct actrack_snapshot **out);
ACTRACK_API void actrack_snapshot_free(struct actrack_snapshot *snap);

/** actrack_arena_save() - write a consistent image of the arena (the one
 * actrack_snapshot_take() would read) to @file.  Return: 0/-errno. */
ACTRACK_API int actrack_arena_save(const char *path, uint32_t flags,
				   const char *file);

/*
 * actrack_arena_save() writes @file according to what it names: a new
 * path or a regular file is replaced atomically by the complete image
 * (through a symbolic link, its target is replaced, never the link); a
 * fifo is written through; anything else is refused with -EISDIR (a
 * directory) or -EINVAL (a device, a socket), never replaced.
 *
 * actrack_arena_save_fd() - the same image, streamed to the open
 * descriptor @fd (standard output, a pipe); not atomic.  The image's
 * header records when it was taken (saved_mono_ns, saved_real_ns), and a
 * snapshot of an image reports that moment as its taken_mono_ns.
 * Context: any thread.  Return: 0/-errno (-EBADF for a negative @fd).
 */
ACTRACK_API int actrack_arena_save_fd(const char *path, uint32_t flags,
				      int fd);

/* What actrack_arena_collect() found. */
struct actrack_collect_stats {
	uint32_t alive;		/* processes still running: kept */
	uint32_t dead;		/* exited processes whose records were freed */
	uint32_t records_freed;
	uint32_t foreign;	/* of another pid namespace: kept, not judged */
};

/*
 * actrack_arena_collect() - actrack_collect_garbage() for an arena this
 * process is not attached to (and does not attach to): frees the records
 * of every (pid, start_ticks) that no longer names a live process.  @path
 * with ACTRACK_SNAP_ARENA_FILE is a file arena; NULL and 0 mean the arena
 * a process would attach to.  Never creates a file.  @st (may be NULL)
 * gets the counts.  Context: any thread; needs write access to the file.
 * Return: 0, -EOPNOTSUPP (the module's arena: the kernel frees records at
 * each exit), -EROFS (a saved image, which is never rewritten), -EINVAL,
 * -ENOENT, -EBADMSG/-EUCLEAN (not an arena), -errno.
 */
ACTRACK_API int actrack_arena_collect(const char *path, uint32_t flags,
				      struct actrack_collect_stats *st);

/* ---------------------------------------------------------------------- */
/* Death reports and the exit monitor                                      */
/* ---------------------------------------------------------------------- */

/*
 * (LIBACTRACK_1.2, ABI 1.2) A thread's registers and the bytes of its user
 * stack from the stack pointer up, copied by actrack.ko as it died (see
 * "Stacks at death" in <linux/actrack.h>): what an unwinder needs for its
 * backtrace.  The bytes are the dead process's: unwind them defensively.
 */
struct actrack_death_stack {
	uint32_t tid;
	uint32_t flags;			/* ACTRACK_STACK_* */
	uint64_t sp;
	uint64_t regs[ACTRACK_STACK_NR_REGS];	/* DWARF order */
	uint32_t size;
	uint8_t *bytes;			/* memory [sp, sp + size) */
};

/* The longest systemd unit name, with its NUL (systemd's UNIT_NAME_MAX). */
#define ACTRACK_UNIT_MAX	256

/*
 * Who sent the signal the process died of (ABI 1.6, actrack.ko only; see
 * "The sender of the fatal signal" in <linux/actrack.h>).  @kind is
 * ACTRACK_KILLER_PROCESS, _SELF or _KERNEL.  @pid is the sender's in the
 * reader's pid namespace, 0 when it is outside it (then @uid, @comm,
 * @exe and @cgroup are unknown: 0 and "").  For the kernel only @signal
 * and @code are given.  @exe (ABI 1.8) is the path of its executable, ""
 * when not known or not the reader's to see (as /proc/PID/exe); @cgroup
 * (ABI 1.8) its cgroup v2 path as the reader's cgroup namespace shows it,
 * "" when not known.
 */
struct actrack_death_killer {
	uint32_t kind;			/* ACTRACK_KILLER_* */
	int signal;
	int code;			/* si_code */
	uint32_t pid;
	uint32_t uid;
	char comm[16];
	char exe[ACTRACK_EXE_MAX];
	char cgroup[ACTRACK_CGROUP_MAX];
};

/*
 * The OOM killer chose the process (ABI 1.7, actrack.ko only; see "The
 * OOM kill" in <linux/actrack.h>): its RSS by kind and oom_score_adj as
 * it was chosen, and the memory cgroup found at its limit (its path as
 * the reader's cgroup namespace shows it, its memory.max and usage);
 * @memcg_limit is 0 when none was (a global OOM), @memcg "" when its
 * path is not told.
 */
struct actrack_death_oom {
	uint64_t anon, file, shmem;	/* bytes */
	int32_t score_adj;
	char memcg[ACTRACK_CGROUP_MAX];
	uint64_t memcg_limit, memcg_usage;	/* bytes */
};

/*
 * A death report: the process as it died, in the shape a snapshot gives a
 * live one (its threads with their activities, values and fatal signal;
 * its modules, to symbolize them; its annotations), plus what only a
 * death has.  A death report does not know a thread's start time, version
 * or held locks, nor the parent, launch time or log of the process: those
 * are 0.  has_record is true.  Threads that died with a stack at death
 * but never had a tracker come last, with their tid alone: the first
 * nr_tracked_threads of process.threads had a record.
 */
struct actrack_death {
	struct actrack_snap_process process;
	uint32_t uid;
	uint64_t seq;			/* report number, per uid */
	int wait_status;		/* as from waitpid() */
	int exit_code;			/* valid if !signal */
	int signal;			/* 0: exited normally */
	bool core_dumped;
	uint64_t exit_time_ns;		/* CLOCK_MONOTONIC */
	uint32_t flags;			/* ACTRACK_DEATH_* */
	uint32_t nr_tracked_threads;
	/* Stacks at death (reports from actrack.ko only) */
	uint32_t nr_stacks;
	struct actrack_death_stack *stacks;
	/* The sender of the fatal signal: only when @has_killer (a module
	 * older than ABI 1.6, or a signal whose sender is not known) */
	bool has_killer;
	struct actrack_death_killer killer;
	/* Where it lived (ABI 1.7, actrack.ko only): its cgroup v2 path as
	 * it died, as the reader's cgroup namespace shows it (the "0::"
	 * line of /proc/PID/cgroup; "" when not known), and the systemd
	 * unit that path names, as systemd reads it (the first component
	 * below the slices, if a ".service" or ".scope"; "" when none). */
	char cgroup[ACTRACK_CGROUP_MAX];
	char unit[ACTRACK_UNIT_MAX];
	/* The OOM killer chose it: only when @has_oom (then it died of
	 * SIGKILL) */
	bool has_oom;
	struct actrack_death_oom oom;
};

struct actrack_monitor;

#define ACTRACK_MONITOR_ALL_UIDS	(1U << 0)	/* privileged only */

/**
 * actrack_monitor_open() - subscribe to death reports of actrack.ko over
 * generic netlink (libmnl).  Return: 0 and *@out, -ENOENT (module not
 * loaded: no "actrack" family), -EPERM, -errno.
 */
ACTRACK_API int actrack_monitor_open(uint32_t flags,
				     struct actrack_monitor **out);
/** actrack_monitor_fd() - pollable descriptor. */
ACTRACK_API int actrack_monitor_fd(struct actrack_monitor *m);
/**
 * actrack_monitor_dispatch() - receive what is pending (blocking if
 * @timeout_ms < 0, up to @timeout_ms otherwise) and call @fn per report.
 * Return: reports delivered (0 on timeout), -errno.  Reports the kernel
 * dropped because the socket overflowed are read back from its ring and
 * delivered, and the gap is told to the gap callback
 * (actrack_monitor_set_gap_fn(), ACTRACK_GAP_OVERFLOW); without a gap
 * callback the call that recovered them returns -ENOBUFS (the recovered
 * reports were delivered before it returns; the next call goes on).
 */
ACTRACK_API int actrack_monitor_dispatch(struct actrack_monitor *m,
					 int timeout_ms, actrack_exit_fn fn,
					 void *arg);
/** actrack_monitor_recent() - the kernel's ring of recent deaths, oldest
 * first.  Return: reports delivered or -errno. */
ACTRACK_API int actrack_monitor_recent(struct actrack_monitor *m,
				       actrack_exit_fn fn, void *arg);

struct actrack_kstats {
	uint64_t arenas, bytes_used, arena_size, bytes_free, attached;
	uint64_t cleanups, records_freed, corruption;
	uint64_t reports_sent, reports_dropped;
};
/** actrack_monitor_stats() - the module's counters (ACTRACK_CMD_GET_STATS). */
ACTRACK_API int actrack_monitor_stats(struct actrack_monitor *m,
				      struct actrack_kstats *st);
ACTRACK_API void actrack_monitor_close(struct actrack_monitor *m);

/*
 * Module reloads (LIBACTRACK_1.2).  A subscription lives in actrack.ko:
 * rmmod (or a DKMS upgrade) ends it.  The monitor watches the generic
 * netlink controller's notifications and subscribes again by itself when
 * the "actrack" family comes back; reports of deaths in between may be
 * lost, and this says when.  Times are CLOCK_REALTIME ns, taken when the
 * controller's notifications were received: for a caller waiting in
 * actrack_monitor_dispatch(), when they were sent; later for one that
 * dispatches late.
 */
#define ACTRACK_GAP_RELOAD	0	/* the module went away (and came back) */
#define ACTRACK_GAP_OVERFLOW	1	/* the socket overflowed (ENOBUFS) */
#define ACTRACK_GAP_ANY_UID	0xffffffffU

struct actrack_monitor_gap {
	/* ACTRACK_GAP_RELOAD (the overflow fields are 0): */
	uint64_t unloaded_ns;		/* 0: the unload was not seen */
	uint64_t loaded_ns;		/* 0: still unloaded */
	uint64_t resubscribed_ns;	/* 0: still unloaded */
	uint32_t reason;		/* ACTRACK_GAP_* */
	/*
	 * ACTRACK_GAP_OVERFLOW (the times above are 0).  The kernel dropped
	 * reports because the caller did not read fast enough.  The monitor
	 * reads what was queued, then the kernel's ring of recent deaths
	 * (deaths_kept per uid), and delivers the reports of deaths after
	 * its subscription that it had not delivered, oldest first, before
	 * this call; a report is never delivered twice.  One call per uid
	 * with reports recovered or lost, after them.  Reports are numbered
	 * per uid (struct actrack_death.seq): [first_lost, last_lost] were
	 * dropped and had left the ring (deaths the monitor may not see,
	 * e.g. in another pid namespace, are numbered too: the range bounds
	 * the loss).  0, 0: nothing lost.  first_lost 0, last_lost N: no
	 * report of @uid had been heard to start from, so those before N
	 * may be lost.  uid ACTRACK_GAP_ANY_UID, last_lost UINT64_MAX: the
	 * ring could not be read, any report may be lost.
	 */
	uint32_t uid;			/* whose reports */
	uint64_t overflow_ns;		/* CLOCK_REALTIME when ENOBUFS came */
	uint64_t first_lost, last_lost;	/* report numbers (seq) */
	uint32_t recovered;		/* reports read back from the ring */
};
typedef void (*actrack_gap_fn)(const struct actrack_monitor_gap *gap,
			       void *arg);
/**
 * actrack_monitor_set_gap_fn() - call @fn from actrack_monitor_dispatch()
 * when the module goes away (loaded_ns 0) and again once subscribed to
 * its new instance (ACTRACK_GAP_RELOAD), and after recovering from an
 * overflow of the socket (ACTRACK_GAP_OVERFLOW).  NULL @fn: no calls, the
 * recovery is done all the same, and actrack_monitor_dispatch() returns
 * -ENOBUFS after an overflow.  Return: 0, -EINVAL.
 */
ACTRACK_API int actrack_monitor_set_gap_fn(struct actrack_monitor *m,
					   actrack_gap_fn fn, void *arg);

/* Names for printing. */
ACTRACK_API const char *actrack_activity_name(uint8_t type);
ACTRACK_API const char *actrack_phase_name(uint32_t phase);
ACTRACK_API const char *actrack_value_type_name(uint8_t type);

#ifdef __cplusplus
}
#endif
#endif /* ACTRACK_H */
