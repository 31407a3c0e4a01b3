/* SPDX-License-Identifier: MIT */
/* libactrack private declarations: never installed. */
#ifndef ACTRACK_LIB_INTERNAL_H
#define ACTRACK_LIB_INTERNAL_H

#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <pthread.h>
#include "actrack.h"
#include "arena.h"

#define __actrack_hidden __attribute__((visibility("hidden")))

/*
 * Decimal numbers by hand (lib/decimal.c).  __actrack_dec_parse(): the
 * digits at @p (at most 19) into @n; the first character after them, or
 * NULL if there is none.  __actrack_dec_put(): @n at @p, NUL-terminated
 * (room for 21 bytes); the position of the NUL.
 */
__attribute__((visibility("hidden")))
const char *__actrack_dec_parse(const char *p, unsigned long long *n);
__attribute__((visibility("hidden")))
char *__actrack_dec_put(char *p, unsigned long long n);

/* One mapped arena: the process's own (writable) or a reader's. */
struct actrack_map {
	struct actrack_arena arena;	/* base/size/writable/corrupt */
	enum actrack_backend backend;
	int fd;				/* /dev/actrack or the file, -1 */
	size_t map_len;
	void *clock_map;		/* module clock page, or NULL */
	size_t clock_len;
	const volatile uint64_t *clock;	/* the clock word, or NULL */
	uint32_t uid;
	char path[256];			/* file arenas */
};

/*
 * Mapping (lib/arena_map.c).  All return 0 or -errno and leave @m unmapped
 * (fd -1) on failure.
 *  __actrack_map_file:    a file arena; @create makes (O_CREAT|O_EXCL, sized,
 *                         formatted) one of @create_size bytes if missing.
 *                         Read-only maps use PROT_READ and never write.
 *  __actrack_map_module:  /dev/actrack (own uid's arena); read-only maps
 *                         open O_RDONLY; with @select_uid >= 0 selects that
 *                         uid's arena (privileged), with @select_flags
 *                         (ACTRACK_SELECT_*: the previous boot's).
 *  __actrack_map_default: the arena __actrack_select_arena() picks for
 *                         @forced (may be NULL) and @no_module.
 */
__actrack_hidden int __actrack_map_file(const char *path, bool writable,
					bool create, uint32_t create_size,
					struct actrack_map *m);
__actrack_hidden int __actrack_map_module(bool writable, long select_uid,
					  uint32_t select_flags,
					  struct actrack_map *m);
__actrack_hidden int __actrack_map_default(const char *forced, bool writable,
					   bool no_module, uint32_t create_size,
					   struct actrack_map *m);
/* __actrack_map_reader: read-only, as the snapshot API's (@path, @flags)
 * name it: a file with ACTRACK_SNAP_ARENA_FILE, our uid's arena of the
 * previous boot with ACTRACK_SNAP_PREVIOUS_BOOT, else the default arena. */
__actrack_hidden int __actrack_map_reader(const char *path, uint32_t flags,
					  struct actrack_map *m);
__actrack_hidden void __actrack_unmap(struct actrack_map *m);
/*
 * Which arena: @forced (an explicit file: actrack_opts.arena_path), else
 * $ACTRACK_ARENA, else the module if /dev/actrack exists (and !@no_module),
 * else the per-uid default file /dev/shm/actrack-UID, written into @def.
 * Return: the backend; *@path points at @forced, the environment,
 * ACTRACK_DEVICE_PATH or @def.  Opens nothing.
 */
#define ACTRACK__DEFAULT_PATH_LEN	32	/* "/dev/shm/actrack-4294967295" */
__actrack_hidden enum actrack_backend
__actrack_select_arena(const char *forced, bool no_module,
		       char def[ACTRACK__DEFAULT_PATH_LEN], const char **path);
/* @n bytes of /proc/sys/kernel/random/boot_id ("%pU", then at most a
 * newline) -> @id.  Return: 0, or -EBADMSG and zeros. */
__actrack_hidden int __actrack_parse_boot_id(const char *text, size_t n,
					     uint8_t id[16]);
/* Inode number of /proc/@who/ns/pid ("self" or a pid), 0 if unknown. */
__actrack_hidden uint32_t __actrack_pid_ns_of(const char *who);
/* Free the records of every dead owner of @a's (lib/collect.c: the rule). */
__actrack_hidden int __actrack_collect_dead(struct actrack_arena *a,
					    struct actrack_collect_stats *st);

/* Time (lib/clock.c). */
__actrack_hidden uint64_t __actrack_mono_ns(void);
/* CLOCK_MONOTONIC_COARSE: the push path's clock when there is no module. */
__actrack_hidden uint64_t __actrack_coarse_ns(void);
__actrack_hidden uint64_t __actrack_real_ns(void);

/* User data (lib/user_data.c): read all fields of a block (snapshot). */
__actrack_hidden int __actrack_read_values(struct actrack_arena *a,
					   uint32_t ref,
					   struct actrack_value **out,
					   uint32_t *nr);
__actrack_hidden void __actrack_free_values(struct actrack_value *v,
					    uint32_t nr);
/*
 * Parse @used bytes of field records (a USER_DATA block's field area, or a
 * copy of one from a death report) into a malloc'ed array.  Every record is
 * validated (sizes in bounds, 8-aligned, name and value sizes, type); a
 * record whose type is 0 ends the list (not yet published).  @buf needs
 * 2-byte alignment.  Return: 0 (*@out NULL when no fields), -EUCLEAN (bad
 * record: nothing is returned), -ENOMEM.
 */
__actrack_hidden int __actrack_parse_fields(const uint8_t *buf, uint32_t used,
					    struct actrack_value **out,
					    uint32_t *nr);

/*
 * __actrack_cgroup_unit() - the systemd unit of the cgroup v2 @path (the
 * last ".service" or ".scope" component, unescaped) into @unit, "" when
 * there is none or it does not fit @len.  Return: its length, or 0.
 * (lib/cgroup_path.c)
 */
__actrack_hidden uint32_t __actrack_cgroup_unit(const char *path, char *unit,
						size_t len);

/*
 * Copies of records into the public process shape, shared by the
 * snapshot, death reports and the monitor (lib/proc_copy.c); they read
 * only their arguments, never the arena.
 *  __actrack_join_cmdline: @n bytes of NUL-separated argv (at most
 *      ACTRACK_CMDLINE_MAX are used) -> "a b c" in @dst, which holds
 *      ACTRACK_CMDLINE_MAX + 1 bytes; trailing NULs dropped.  Return: its
 *      length.
 *  __actrack_snap_module: a copied module record -> @out (path terminated,
 *      build id clamped to ACTRACK_BUILD_ID_MAX; callers treat a larger
 *      size as corrupt before calling).
 *  __actrack_copy_thread: the walk's thread copy @r -> @t (activities
 *      calloc'ed; a torn one: identity only, t->torn).  Return: 0,
 *      -EUCLEAN (its stack does not fit its depth: skip it as corrupt,
 *      nothing to free), -ENOMEM.
 *  __actrack_copy_values: the walk's user data copy @r -> *@out, *@nr
 *      (replacing what was there).  Return: 0, -EUCLEAN (fields do not
 *      parse: none returned, the source is corrupt), -ENOMEM.
 *  __actrack_copy_act_values: the same into the activity r->act of @t
 *      (nothing if @t has no such activity).
 *  __actrack_free_thread/_process: what the copies allocated.
 */
__actrack_hidden uint32_t __actrack_join_cmdline(char *dst, const char *src,
						 uint32_t n);
__actrack_hidden void __actrack_snap_module(struct actrack_snap_module *out,
					    const struct actrack_module *m);
struct actrack_walk_rec;
__actrack_hidden int __actrack_copy_thread(struct actrack_snap_thread *t,
					   const struct actrack_walk_rec *r);
__actrack_hidden int __actrack_copy_values(const struct actrack_walk_rec *r,
					   struct actrack_value **out,
					   uint32_t *nr);
__actrack_hidden int
__actrack_copy_act_values(struct actrack_snap_thread *t,
			  const struct actrack_walk_rec *r);
__actrack_hidden void __actrack_free_thread(struct actrack_snap_thread *t);
__actrack_hidden void __actrack_free_process(struct actrack_snap_process *p);

/*
 * Snapshot of an arena that is already mapped (lib/snapshot.c), shared with
 * lib/save.c, which checks that a saved image parses before writing it.
 * @a must be read-only (a->writable false: nothing is ever stored into it).
 * Return: 0 and *@out, or the errnos of actrack_snapshot_take().
 */
__actrack_hidden int __actrack_snapshot_arena(struct actrack_arena *a,
					      struct actrack_snapshot **out);

/* Death reports from an arena (lib/death.c), used by the file-mode
 * launch/exit recording: fills @d (threads malloc'ed). */
__actrack_hidden int __actrack_build_death(struct actrack_arena *a,
					   uint32_t pid, uint64_t start_ticks,
					   int wait_status,
					   struct actrack_death *d);
__actrack_hidden void __actrack_free_death(struct actrack_death *d);

/*
 * The process's attachment (lib/attach.c).  Fields are written under @lock
 * by actrack_init() and read lock-free afterwards; after fork() the child
 * keeps the inherited mapping but must attach as itself.
 */
struct actrack_proc {
	pthread_mutex_t lock;		/* slow paths only */
	bool mapped;			/* @map is valid */
	bool attached;			/* registered as @pid/@start_ticks */
	struct actrack_map map;
	uint32_t pid;
	uint32_t pid_ns;		/* inode of @pid's pid namespace */
	uint64_t start_ticks;
	uint32_t slots;			/* activity slots per thread */
	uint32_t process_ref;		/* our PROCESS record */
	uint32_t flags;			/* ACTRACK_INIT_* */
	/*
	 * A failed attach is remembered: implicit attaches (a push, any
	 * call but actrack_init()) return @attach_err without trying again
	 * before @retry_ns (CLOCK_MONOTONIC_COARSE), and each failure
	 * doubles the wait (ACTRACK__RETRY_MIN_NS .. _MAX_NS).  Written
	 * under @lock, read lock-free (relaxed: a stale value only means
	 * one attempt more or less).
	 */
	int attach_err;
	uint64_t retry_ns, backoff_ns;
	uint32_t attach_gen;		/* bumped by every successful attach */
	uint32_t trackers;		/* live trackers of our threads */
	/* Counters for tests and for whoever debugs a silent library. */
	uint32_t attach_attempts;	/* attach_locked() runs */
	uint32_t tracker_failures;	/* tracker allocations that failed */
	/* CLOCK_MONOTONIC_COARSE of the last collection a full file arena
	 * made us run (atomic, relaxed): at most one per
	 * ACTRACK__FULL_COLLECT_NS, so that an arena full of live processes
	 * does not make every failed allocation scan /proc. */
	uint64_t full_collect_ns;
};
extern struct actrack_proc __actrack_proc __actrack_hidden;

/*
 * The command line from the arguments a constructor was given (glibc
 * passes argc, argv and envp to every ELF constructor): the same bytes
 * as /proc/self/cmdline before the program could change them, without
 * opening it; copied now, for the first attach of this image, whenever
 * that comes.
 */
__actrack_hidden void __actrack_set_argv(char **argv);

/*
 * A preload's constructor (single-threaded, before the program runs):
 * read the exec-chain mark ($ACTRACK_ENV_IMAGE, lib/attach.c) that the
 * previous image of this process left, and put this image's own in its
 * place.  Return: true if this image must attach now (`actrack run`
 * started it, or an earlier image of this pid may have records to
 * replace); false if it may wait for its first push.
 */
__actrack_hidden bool __actrack_image_begin(void);

#define ACTRACK__RETRY_MIN_NS	1000000000ULL	/* 1 s */
#define ACTRACK__RETRY_MAX_NS	64000000000ULL	/* 64 s */
#define ACTRACK__FULL_COLLECT_NS 1000000000ULL	/* 1 s */

/*
 * Set while this thread runs a library slow path that must not be
 * re-entered (it holds the attach lock, or is half way through creating
 * its tracker).  A signal handler that interrupts it and pushes gets a
 * dropped push (token 0), never a deadlock; any other call returns
 * -EDEADLK.  Use __actrack_lock() for @lock.
 */
extern __thread unsigned int __actrack_nesting __actrack_hidden;
__actrack_hidden void __actrack_lock(void);
__actrack_hidden void __actrack_unlock(void);

/* Attach with defaults unless attached, honouring a remembered failure.
 * Blocks on the attach lock.  Return 0/-errno (-EDEADLK: nested). */
__actrack_hidden int __actrack_ensure_attached(void);
/* The same for a push: never blocks (-EAGAIN if the lock is busy). */
__actrack_hidden int __actrack_attach_for_push(void);
/* Our PROCESS record, validated; NULL if gone. */
__actrack_hidden struct actrack_process *__actrack_process_record(void);
/* Allocate an owned record of this process (thread @tid, or 0) that
 * carries its owner from the start (actrack_arena_alloc_owned()), so that
 * the kernel frees it even if we die before publishing it. */
__actrack_hidden uint32_t __actrack_alloc_owned(struct actrack_arena *a,
						uint32_t type, uint32_t size,
						uint32_t tid, void **payload);
/* Publish a record: owner fields, then data_id with release.  Return: the
 * data id, which the owner passes to actrack_arena_free_owned(). */
__actrack_hidden uint32_t __actrack_publish_owner(struct actrack_owner *o,
						  uint32_t tid);
/* Re-attach: free this thread's tracker in the arena being left and
 * forget it (lib/tracker.c). */
__actrack_hidden void __actrack_tracker_leave(void);
/* The held-lock set of a copied tracker (lib/tracker.c), for snapshots. */
__actrack_hidden void __actrack_read_held(struct actrack_arena *a,
					 uint32_t ref,
					 const struct actrack_thread *hdr,
					 struct actrack_snap_thread *t);
/*
 * Fork (lib/fork.c): a file whose process state a child must not inherit
 * declares its handlers once, with ACTRACK_FORK_HOOK (an entry in the
 * linker's table; nothing runs at start).  They are installed by the
 * first __actrack_fork_arm(), which every path that creates such state
 * calls before it does.  prepare may only try a lock, never block; child
 * may only forget and re-initialise.
 */
struct actrack_fork_hook {
	void (*prepare)(void);
	void (*parent)(void);
	void (*child)(void);
};
/*
 * The code a forked child runs before it can do anything else: cold, so
 * that the linker gathers it (.text.unlikely) onto as few pages as it can.
 * A child refaults every page of a file mapping it touches (fork() copies
 * no page table entries of those), one fault per page for every fork of a
 * tracked shell or make.  For the same reason a child hook calls nothing
 * through the PLT that its parent may never have called (the child would
 * bind it, in the dynamic linker's pages, on every fork) and no C library
 * function it can do without (a mutex is re-initialised by assignment).
 */
#define __actrack_fork_path __attribute__((cold))
#define ACTRACK_FORK_HOOK(name, ...)					\
	static const struct actrack_fork_hook name = { __VA_ARGS__ };	\
	static const struct actrack_fork_hook *const name##_entry	\
		__attribute__((section("actrack_fork_hooks"), used,	\
			       aligned(sizeof(void *)))) = &name;
/* Are the handlers installed?  Set once, never cleared. */
extern __actrack_hidden int __actrack_fork_armed;
__actrack_hidden void __actrack_fork_arm_slow(void);
/* Install the handlers if not yet (not async-signal-safe the first time:
 * pthread_once(), pthread_atfork()). */
static inline void __actrack_fork_arm(void)
{
	if (__builtin_expect(!__atomic_load_n(&__actrack_fork_armed,
					      __ATOMIC_ACQUIRE), 0))
		__actrack_fork_arm_slow();
}
/* May this thread be running a signal handler (lib/attach.c)?  Errs
 * towards yes; async-signal-safe. */
__actrack_hidden bool __actrack_maybe_in_signal_handler(void);
/* Forget cached user data handles (lib/user_data.c); also on re-attach. */
__actrack_hidden void __actrack_user_data_forget(void);
/* Allocate and publish an empty user data block of @capacity field bytes.
 * Return: its reference (0: none) and, through @ud and @id, the block
 * and its data id. */
__actrack_hidden uint32_t __actrack_user_data_new(uint32_t tid,
						  uint32_t capacity,
						  struct actrack_user_data **ud,
						  uint32_t *id);
/* Reset a thread-owned user data block (slot reuse). */
__actrack_hidden void __actrack_user_data_reset(struct actrack_user_data *ud);

static inline struct actrack_arena *__actrack_arena(void)
{
	return &__actrack_proc.map.arena;
}

/*
 * The library's bounds of one death report, whether it reads one from
 * actrack.ko or builds one from a file arena: threads, modules and stacks
 * past them are left out and the report says ACTRACK_DEATH_TRUNCATED.
 * (actrack.ko has bounds of its own, lower, for what it sends.)
 */
#define ACTRACK_LIB_MAX_THREADS		4096
#define ACTRACK_LIB_MAX_MODULES		1024
#define ACTRACK_LIB_MAX_STACKS		64
/*
 * Death report parser (lib/report_parse.c).  Parsers of one generic
 * netlink message of @len bytes (the buffer holding it); every attribute
 * is validated.
 *  __actrack_parse_death: ACTRACK_CMD_DEATH (or a GET_DEATHS dump entry)
 *      -> @d (threads and modules calloc'ed, at most
 *      ACTRACK_LIB_MAX_THREADS/_MODULES, more set ACTRACK_DEATH_TRUNCATED;
 *      free with __actrack_free_death).
 *      Return: 0, -EBADMSG (malformed: skip it), -ENOMEM.
 *  __actrack_parse_stats: GET_STATS answer -> @st.  Return 0 or -EBADMSG.
 */
struct nlmsghdr;
__actrack_hidden int __actrack_parse_death(const struct nlmsghdr *nlh,
					   size_t len,
					   struct actrack_death *d);
__actrack_hidden int __actrack_parse_stats(const struct nlmsghdr *nlh,
					   size_t len,
					   struct actrack_kstats *st);
/*
 * The kernel's death report of (@pid, @start_ticks), for the exit callback
 * on the module (lib/lifecycle.c): calls @fn once with it, from the ring of
 * recent deaths or as it arrives, waiting at most @timeout_ms.
 * Return: 0, -ETIMEDOUT (never came: another uid's child, or the ring
 * overflowed), or actrack_monitor_open()'s errors.
 */
#define ACTRACK_EXIT_REPORT_TIMEOUT_MS	2000
__actrack_hidden int __actrack_monitor_exit_report(uint32_t pid,
						   uint64_t start_ticks,
						   int timeout_ms,
						   actrack_exit_fn fn,
						   void *arg);

#endif /* ACTRACK_LIB_INTERNAL_H */
