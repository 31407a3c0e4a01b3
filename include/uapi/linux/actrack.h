/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * actrack: always-on activity tracking for crash and hang forensics.
 *
 * The one ABI shared by the kernel module (kmod/), the arena core (arena/)
 * and libactrack (lib/).  Everything here is fixed-width, explicitly padded
 * and laid out identically on 32- and 64-bit; each size is pinned by a static
 * assertion in arena/arena.c, which both builds compile.
 *
 * Legend used in field comments:
 *   writer:  K = kernel, O = owner thread/process, A = any process of the uid
 *   read:    plain, acquire, seq (read inside a version/seq-checked copy)
 *
 * All offsets inside an arena are 32-bit "references" from the start of the
 * arena; reference 0 means "none".  Every reader validates every reference
 * (bounds, alignment, block cookie, size, type) before using it.
 */
#ifndef _UAPI_LINUX_ACTRACK_H
#define _UAPI_LINUX_ACTRACK_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define ACTRACK_ABI_MAJOR	1
#define ACTRACK_ABI_MINOR	9

#define ACTRACK_DEVICE_NAME	"actrack"
#define ACTRACK_DEVICE_PATH	"/dev/actrack"

/* ------------------------------------------------------------------------ */
/* Arena                                                                    */
/* ------------------------------------------------------------------------ */

#define ACTRACK_ARENA_MAGIC	0x314b43415254434eULL /* "NCTRACK1" LE */
#define ACTRACK_ARENA_MIN_SIZE	(64U * 1024)
#define ACTRACK_ARENA_MAX_SIZE	(256U * 1024 * 1024)

/* Every block starts on this boundary and its size is a multiple of it, so
 * no two blocks (in particular no two thread trackers) share a cache line. */
#define ACTRACK_BLOCK_ALIGN	64U

/* arena_header.flags (atomic OR by anyone; sticky) */
#define ACTRACK_ARENA_CORRUPT	(1U << 0)	/* a reader found bad data */
#define ACTRACK_ARENA_FULL	(1U << 1)	/* an allocation failed */
#define ACTRACK_ARENA_KERNEL	(1U << 2)	/* owned by actrack.ko */

/*
 * struct actrack_block - header in front of every allocation.
 * @size:    W: allocator before publication; bytes incl. this header,
 *           multiple of ACTRACK_BLOCK_ALIGN.  Read plain, validated.
 * @cookie:  ACTRACK_BLOCK_COOKIE, written with @size.
 * @type_id: atomic (acquire/release, CAS).  ACTRACK_TYPE_* while in use,
 *           ~type when free, ACTRACK_TYPE_TRANSITIONING while changing.
 * @next:    atomic.  0 = not iterable; else the reference of the next
 *           iterable block, ACTRACK_REF_QUEUE at the end of the list.
 */
struct actrack_block {
	__u32 size;
	__u32 cookie;
	__u32 type_id;
	__u32 next;
};
#define ACTRACK_BLOCK_COOKIE	0x0ac7b10cU

/*
 * struct actrack_arena_header - at reference 0 of every arena.
 * Written once (K, or the creating process for file arenas) before the
 * arena is visible, except where marked atomic.
 */
struct actrack_arena_header {
	__u64 magic;		/* ACTRACK_ARENA_MAGIC */
	__u16 abi_major;	/* ACTRACK_ABI_MAJOR of the creator */
	__u16 abi_minor;
	__u32 header_size;	/* sizeof(struct actrack_arena_header) */
	__u32 size;		/* bytes of the whole arena */
	__u32 flags;		/* atomic, ACTRACK_ARENA_* */
	__u32 freeptr;		/* atomic (CAS): first unallocated byte */
	__u32 tailptr;		/* atomic (CAS): last iterable block */
	struct actrack_block queue; /* sentinel head of the iterable list */
	__u32 next_data_id;	/* atomic (fetch-add): owner data ids */
	__u32 global_data;	/* atomic (CAS 0->ref): global user data */
	__u32 uid;		/* uid the arena belongs to */
	__u32 user_hz;		/* start_ticks unit (ticks per second) */
	__u64 create_mono_ns;	/* CLOCK_MONOTONIC at creation ... */
	__u64 create_real_ns;	/* ... and CLOCK_REALTIME at the same moment */
	__u64 boot_time_ns;	/* CLOCK_REALTIME of boot (ns), for start_ticks */
	__u8  boot_id[16];	/* /proc/sys/kernel/random/boot_id */
	/*
	 * Written only into saved images (actrack save, lib/save.c), and by
	 * the module into a previous boot's arenas (persist=: its machine's
	 * last heartbeat, 0 if none), never into a live arena, where they
	 * stay zero: CLOCK_MONOTONIC (the clock of every *_time_ns) and
	 * CLOCK_REALTIME when the image was taken or ended, so that readers
	 * measure ages from then and not from their own clock.
	 */
	__u64 saved_mono_ns;
	__u64 saved_real_ns;
	/*
	 * Any process, atomic (fetch-add), ABI 1.4: what a full arena cost.
	 * @lost_records counts allocations that failed for want of space
	 * after the writer had reclaimed what it could (a thread, value or
	 * process that is then not tracked); @reclaimed_records counts the
	 * records of dead processes a writer freed to make room (file arenas:
	 * nobody else frees a dead process's records there).
	 */
	__u32 lost_records;
	__u32 reclaimed_records;
	__u32 reserved[30];	/* zero */
	/*
	 * Any process, atomic, a hint only: blocks freed and not reclaimed
	 * since, as counted by the writers that count them (ABI 1.4; a
	 * writer that frees without counting leaves it low).  While it is 0 an allocation does not
	 * scan its window of the list for a free block and bumps the free
	 * pointer at once: an arena nobody frees in (a file arena without
	 * the module, until records of the dead are collected) costs no
	 * scan.  The whole-list scan when the free pointer is used up never
	 * depends on it, so a low count costs compactness, never an
	 * allocation.
	 */
	__u32 free_blocks;
	/*
	 * Any process, atomic (relaxed), a hint only: a block of the iterable
	 * list where the last reclaim scan stopped, so that the next one goes
	 * on from there instead of from the head (0: none).  Validated before
	 * use; a bad value only costs a scan from the head.
	 */
	__u32 reclaim_hint;
};
#define ACTRACK_ARENA_HEADER_SIZE 256

/* Reference of the sentinel; it terminates the iterable list. */
#define ACTRACK_REF_QUEUE	32U

/*
 * Type ids: 0x41Cnnnvv, nnn = kind, vv = layout version.  A reader skips
 * ids it does not know, so a new layout gets a new version.  A freed block
 * carries the bitwise complement of its type.
 */
#define ACTRACK_TYPE(kind, ver)		(0x41C00000U | ((kind) << 8) | (ver))
#define ACTRACK_TYPE_THREAD		ACTRACK_TYPE(1, 1)
#define ACTRACK_TYPE_USER_DATA		ACTRACK_TYPE(2, 1)
#define ACTRACK_TYPE_PROCESS		ACTRACK_TYPE(3, 1)
#define ACTRACK_TYPE_LOG		ACTRACK_TYPE(4, 1)
#define ACTRACK_TYPE_MODULE		ACTRACK_TYPE(5, 1)
#define ACTRACK_TYPE_FREE(type)		(~(__u32)(type))
#define ACTRACK_TYPE_TRANSITIONING	0xFFFFFFFFU
#define ACTRACK_TYPE_ANY		0U	/* for iteration filters only */

/*
 * struct actrack_owner - first bytes of every per-process record.
 * @data_id:     atomic; non-zero when the record is valid.  Written last,
 *               with release, by the creator; cleared first when freed.
 *               Readers load it (acquire) before and after a copy.
 *               0xFFFFFFFF is never handed out: a freer claims the record
 *               by CAS of its id to it, and readers treat it like 0.  The
 *               other owner fields are stored before the block's type is
 *               live (unpublished, data_id 0), so that whoever cleans up
 *               after a dead owner also frees what it never published.
 * @pid:         process (thread-group) id, as seen by the attaching process
 *               (in its own pid namespace).
 * @tid:         thread id for thread-owned records, 0 for process records,
 *               0 with pid 0 for global records; in the same namespace.
 * @pid_ns:      (ABI 1.1) the inode number of that pid namespace, as
 *               stat(2) of /proc/self/ns/pid gives it; with the module, the
 *               value ACTRACK_IOC_ATTACH returned.  One uid's processes in
 *               different pid namespaces share one arena, and two of them
 *               may have the same pid and start_ticks (two "pid 1"s started
 *               in one tick): @pid_ns tells them apart.  0 where unknown
 *               (file arenas written before ABI 1.1).
 * @start_ticks: process start in clock ticks since boot, field 22 of
 *               /proc/PID/stat as the process itself reads it (shifted by
 *               its time namespace's boottime offset, if any: a reader in
 *               another time namespace must not compare it with its own
 *               /proc).  Records are freed for an exited process only when
 *               pid, pid_ns and start_ticks all match.
 * All fields but @data_id are written by the creator before it publishes
 * @data_id and never change afterwards.
 */
struct actrack_owner {
	__u32 data_id;
	__u32 pid;
	__u32 tid;
	__u32 pid_ns;
	__u64 start_ticks;
};

/* ------------------------------------------------------------------------ */
/* Thread tracker and activities                                            */
/* ------------------------------------------------------------------------ */

/* Activity type: category in the high nibble, kind/action in the low one. */
#define ACTRACK_ACT_CATEGORY_MASK	0xF0
#define ACTRACK_ACT_TASK		0x10
#define ACTRACK_ACT_TASK_RUN		0x11	/* object: task id */
#define ACTRACK_ACT_LOCK		0x20
#define ACTRACK_ACT_LOCK_ACQUIRE	0x21	/* object: lock address */
#define ACTRACK_ACT_LOCK_HELD		0x22	/* object: lock address */
#define ACTRACK_ACT_EVENT		0x30
#define ACTRACK_ACT_EVENT_WAIT		0x31	/* object: event address */
#define ACTRACK_ACT_THREAD		0x40
#define ACTRACK_ACT_THREAD_JOIN		0x41	/* object: tid */
#define ACTRACK_ACT_PROCESS		0x50
#define ACTRACK_ACT_PROCESS_WAIT	0x51	/* object: pid */
#define ACTRACK_ACT_IO			0x60
#define ACTRACK_ACT_IO_WAIT		0x61	/* object: fd, info: bytes */
#define ACTRACK_ACT_GENERIC		0xF0	/* low nibble: action */
#define ACTRACK_ACT_GENERIC_ACTION(a)	(0xF0 | ((a) & 0x0F))

/*
 * struct actrack_activity - one stack slot, written by the owner thread
 * with plain stores before the release store of the tracker's depth.
 * Readers copy it inside the tracker's version check.
 */
struct actrack_activity {
	__u64 time_ns;		/* CLOCK_MONOTONIC, coarse (~ms) */
	__u64 origin;		/* pc of the code that pushed it */
	__u64 object;		/* see ACTRACK_ACT_* */
	__u64 info;		/* generic info, I/O bytes, ... */
	__u32 user_data;	/* reference of its user data, 0 = none */
	__u8  type;		/* ACTRACK_ACT_* */
	__u8  reserved0[3];
	/*
	 * The wait's relative timeout in ns, as the waiting call was given
	 * it; 0 = no timeout, or none recorded (a wait with a timeout that
	 * recurs is a timer, not a hang: actrack-hangs(1)).  Older writers
	 * left it 0.
	 */
	__u64 timeout_ns;
	__u64 reserved[2];
};

/*
 * struct actrack_thread - thread tracker, block type ACTRACK_TYPE_THREAD,
 * followed by @slot_count struct actrack_activity slots (see
 * ACTRACK_THREAD_SLOTS()).  The block header (16 bytes) plus this header is
 * 128 bytes, so slots start on a cache line.
 */
struct actrack_thread {
	struct actrack_owner owner;	/* O, data_id last (release) */
	char  name[32];			/* O, plain, NUL-terminated */
	__u64 start_time_ns;		/* O, CLOCK_MONOTONIC of creation */
	__u32 slot_count;		/* O, before publication */
	__u32 depth;			/* O, atomic (release); may exceed slots */
	__u32 version;			/* O, atomic; +2 on pop, odd while
					 * a slot is rewritten (change) */
	__u32 flags;			/* O, ACTRACK_THREAD_* */
	__s32 fatal_signo;		/* O (signal handler), 0 = none */
	__s32 fatal_code;		/* si_code */
	__u64 fatal_addr;		/* si_addr */
	__u64 fatal_pc;			/* pc at the fault */
	__u64 reserved;
};
#define ACTRACK_THREAD_MAX_SLOTS	64
/* actrack_thread.flags, set only in saved images (actrack save): no
 * consistent copy of the live tracker could be taken, so readers must
 * report it torn rather than trust the stack. */
#define ACTRACK_THREAD_IMAGE_TORN	(1U << 0)
/* actrack_thread.flags (ABI 1.2), O, before publication: a struct
 * actrack_held follows the @slot_count slots (ACTRACK_THREAD_HELD_SET()).
 * Readers that do not know it see a block a little bigger than its slots
 * and skip the rest, as they always did. */
#define ACTRACK_THREAD_HELD		(1U << 1)
#define ACTRACK_THREAD_SLOTS(t)	((struct actrack_activity *)((t) + 1))

/*
 * Activity info of ACTRACK_ACT_LOCK_ACQUIRE and ACTRACK_ACT_LOCK_HELD
 * (ABI 1.2; older writers leave it 0): the lock is process-shared, so a
 * thread of another process that holds the same address (a mapping
 * shared before fork()) may be the one it waits for.
 */
#define ACTRACK_LOCK_INFO_SHARED	(1ULL << 0)

/*
 * struct actrack_held - (ABI 1.2) the locks a thread holds right now, in
 * the tracker block after its slots when ACTRACK_THREAD_HELD is set.
 *
 * A set, not a stack: programs release locks in any order, so the
 * activity stack cannot say what is held.  Writer: the owner thread only,
 * on every successful lock (add) and unlock (remove), with relaxed
 * (plain, untorn 64-bit) stores and no version bump.  Readers load each
 * word relaxed, outside any version check: the set of a thread that is
 * running may be read half-updated (a lock just taken missed, one just
 * released still shown), the set of a blocked thread - the one a hang
 * analysis needs - is exact.
 * @capacity: O, before publication: entries in @locks
 *            (<= ACTRACK_HELD_SLOTS; readers bound it by the block).
 * @overflow: O, relaxed: locks held beyond the @capacity recorded ones;
 *            the set is incomplete while it is not 0.
 * @locks:    O, relaxed: 0 = empty; else the lock's address, with
 *            ACTRACK_HELD_SHARED or-ed in for a process-shared lock.
 *            Entries are unordered; a lock held twice (recursive, read
 *            locks) may appear twice.
 */
#define ACTRACK_HELD_SLOTS	15
#define ACTRACK_HELD_SHARED	1ULL	/* locks are at least 4-aligned */
struct actrack_held {
	__u32 capacity;
	__u32 overflow;
	__u64 locks[ACTRACK_HELD_SLOTS];
};
#define ACTRACK_THREAD_HELD_SET(t)					\
	((struct actrack_held *)(ACTRACK_THREAD_SLOTS(t) + (t)->slot_count))

/*
 * actrack_thread.flags (ABI 1.3), O, before publication, only with
 * ACTRACK_THREAD_HELD: after the held set, @slot_count __u32 references
 * (O, relaxed; 0 = none) name the thread's per-slot user data blocks, which
 * outlive the activities that use them.  With the tracker's reference
 * registered (ACTRACK_IOC_THREAD), the kernel frees a thread that exits
 * without the library's help (its own exit, not its group's) in O(slots):
 * the tracker and the blocks listed here, each only if it is still this
 * thread's, with no walk of the arena.
 */
#define ACTRACK_THREAD_DATA		(1U << 2)
#define ACTRACK_THREAD_DATA_OFFSET(slots)				\
	(sizeof(struct actrack_thread) +				\
	 (slots) * sizeof(struct actrack_activity) +			\
	 sizeof(struct actrack_held))
#define ACTRACK_THREAD_DATA_END(slots)					\
	(ACTRACK_THREAD_DATA_OFFSET(slots) + (slots) * sizeof(__u32))
#define ACTRACK_THREAD_DATA_REFS(t)					\
	((__u32 *)((char *)(t) + ACTRACK_THREAD_DATA_OFFSET((t)->slot_count)))

/* ------------------------------------------------------------------------ */
/* User data (Chromium ActivityUserData)                                    */
/* ------------------------------------------------------------------------ */

#define ACTRACK_VALUE_RAW		1
#define ACTRACK_VALUE_STRING		2
#define ACTRACK_VALUE_BOOL		3	/* __u8 0/1 */
#define ACTRACK_VALUE_CHAR		4	/* one char */
#define ACTRACK_VALUE_SIGNED		5	/* __s64 */
#define ACTRACK_VALUE_UNSIGNED		6	/* __u64 */
#define ACTRACK_VALUE_RAW_REF		7	/* struct actrack_value_ref */
#define ACTRACK_VALUE_STRING_REF	8	/* struct actrack_value_ref */
#define ACTRACK_VALUE_MAX		8

#define ACTRACK_FIELD_NAME_MAX		63
#define ACTRACK_FIELD_ALIGN		8

/*
 * struct actrack_user_data - block type ACTRACK_TYPE_USER_DATA.  Fields
 * follow, each a struct actrack_field + name + value (at the next 8-byte
 * boundary), record_size bytes in all.
 */
struct actrack_user_data {
	struct actrack_owner owner;
	__u32 used;		/* A, atomic (CAS): field bytes reserved */
	__u32 capacity;		/* creator, before publication */
	__u32 seq;		/* A, seqcount: odd while a value is rewritten */
	__u32 reserved[3];
};

/*
 * struct actrack_field - publication rule: the writer fills name and value,
 * then release-stores @type (new field) or @value_size (rewrite inside the
 * user data seqcount).  Readers load @type with acquire; 0 = not yet there.
 */
struct actrack_field {
	__u8  type;		/* atomic, ACTRACK_VALUE_* */
	__u8  name_size;	/* bytes, no NUL */
	__u16 value_size;	/* atomic, bytes in use */
	__u16 record_size;	/* header + name + value capacity, 8-aligned */
	__u16 reserved;
};

struct actrack_value_ref {
	__u64 address;		/* in the owner process */
	__u64 size;
};

/* ------------------------------------------------------------------------ */
/* Process, log and module records                                          */
/* ------------------------------------------------------------------------ */

/* Process phases: Chromium's values. */
#define ACTRACK_PHASE_UNKNOWN			0
#define ACTRACK_PHASE_LAUNCHED			1
#define ACTRACK_PHASE_LAUNCH_FAILED		2
#define ACTRACK_PHASE_EXITED_CLEANLY		3
#define ACTRACK_PHASE_EXITED_WITH_CODE		4
#define ACTRACK_PHASE_SHUTDOWN_STARTED		5
#define ACTRACK_PHASE_MAIN_LOOP_STARTED		6
#define ACTRACK_PHASE_MAX			6

#define ACTRACK_CMDLINE_MAX	512

/* struct actrack_process - block type ACTRACK_TYPE_PROCESS, one per process. */
struct actrack_process {
	struct actrack_owner owner;	/* tid = 0 */
	__u32 phase;			/* A of the owner, atomic (release) */
	__u32 user_data;		/* O, ref of the annotations block */
	__u32 log;			/* O, atomic (CAS): ref of the log ring */
	__u32 parent_pid;		/* O */
	__u64 launch_time_ns;		/* O, CLOCK_MONOTONIC */
	__u32 cmdline_size;		/* O, bytes in @cmdline */
	__u32 reserved[5];
	char  cmdline[ACTRACK_CMDLINE_MAX]; /* NUL-separated argv */
};

#define ACTRACK_LOG_TEXT_MAX	104

/*
 * struct actrack_log_entry - one message of a log ring.  @seq is a per-entry
 * seqcount: 2n+1 while message n is written, 2n+2 when it is complete.
 */
struct actrack_log_entry {
	__u32 seq;
	__u32 tid;
	__u64 time_ns;
	__u16 len;
	__u16 reserved[3];
	char  text[ACTRACK_LOG_TEXT_MAX];
};

/* struct actrack_log - block type ACTRACK_TYPE_LOG: a recycled ring. */
struct actrack_log {
	struct actrack_owner owner;	/* tid = 0 */
	__u32 capacity;			/* entries, before publication */
	__u32 head;			/* A, atomic fetch-add: next message n */
	__u64 reserved;
	struct actrack_log_entry entries[];
};

#define ACTRACK_BUILD_ID_MAX	32
#define ACTRACK_PATH_MAX	256

/* struct actrack_module - block type ACTRACK_TYPE_MODULE: a loaded ELF. */
struct actrack_module {
	struct actrack_owner owner;	/* tid = 0 */
	__u64 base;			/* load bias (dlpi_addr) */
	__u64 size;			/* bytes spanned by PT_LOAD segments */
	__u64 vaddr;			/* lowest PT_LOAD p_vaddr */
	__u8  build_id_size;
	__u8  reserved0[7];
	__u8  build_id[ACTRACK_BUILD_ID_MAX];
	char  path[ACTRACK_PATH_MAX];
};

/* ------------------------------------------------------------------------ */
/* /dev/actrack ioctls and mmap                                             */
/* ------------------------------------------------------------------------ */

#define ACTRACK_IOC_MAGIC	0xAC

struct actrack_version {
	__u16 major;
	__u16 minor;
	__u32 reserved;		/* out: zero */
};

#define ACTRACK_LAYOUT_READONLY	(1U << 0)	/* fd may only map read-only */
/* ABI 1.8: the arena's memory is in the reserved region of the module's
 * persist= parameter: it outlives a crash of the machine. */
#define ACTRACK_LAYOUT_PERSISTENT	(1U << 1)
/* ABI 1.8: the fd refers to the previous boot's arena (SELECT). */
#define ACTRACK_LAYOUT_PREVIOUS_BOOT	(1U << 2)

/*
 * struct actrack_layout - how to map the fd's arena.  The arena is mapped
 * MAP_SHARED at @arena_offset for @arena_size bytes.  The clock page at
 * @clock_offset (PROT_READ only) for @clock_size bytes holds a __u64
 * CLOCK_MONOTONIC (coarse) nanosecond count at byte @clock_word if that
 * word lies inside the page; ABI 1.8 modules keep no such word and say
 * ACTRACK_CLOCK_WORD_NONE: a writer then takes its timestamps from
 * clock_gettime(CLOCK_MONOTONIC_COARSE), the same clock.  The page can
 * still be mapped (it reads zero), for writers that map it first.
 */
#define ACTRACK_CLOCK_WORD_NONE	0xffffffffU	/* (ABI 1.8) no clock word */

struct actrack_layout {
	__u32 arena_size;
	__u32 flags;		/* ACTRACK_LAYOUT_* */
	__u64 arena_offset;
	__u64 clock_offset;
	__u32 clock_size;
	__u32 clock_word;
	__u32 uid;		/* whose arena this fd refers to */
	__u32 reserved[5];
};

/*
 * struct actrack_attach - register the calling process: the kernel records
 * its tgid, start_ticks and command line in kernel memory and will report
 * its death and free its records.  @flags and @reserved must be zero.
 */
struct actrack_attach {
	__u32 flags;		/* in */
	__u32 pid;		/* out: tgid in the caller's pid namespace */
	__u64 start_ticks;	/* out */
	__u32 pid_ns;		/* out (ABI 1.1): that namespace's inode
				 * number, for actrack_owner.pid_ns */
	__u32 reserved0;	/* in: zero */
	__u64 reserved1;	/* in: zero */
};

/*
 * struct actrack_select - make this fd refer to another uid's arena, read
 * only.  Needs CAP_SYS_PTRACE or CAP_SYS_ADMIN; must precede any mmap.
 * With ACTRACK_SELECT_PREVIOUS_BOOT (ABI 1.8), the arena @uid had when the
 * previous boot ended, as the module's persist= region kept it; needs
 * CAP_SYS_ADMIN (host root: uids need not mean the same across boots),
 * or, if the module was loaded with persist_uids_stable=1, @uid being the
 * caller's effective uid.
 * -ENODATA: no previous boot's image; -ENOENT: none of @uid in it.  The
 * image is whatever the memory held: read it with the validating walk.
 */
#define ACTRACK_SELECT_PREVIOUS_BOOT	(1U << 0)

struct actrack_select {
	__u32 uid;
	__u32 flags;		/* ACTRACK_SELECT_* */
	__u64 reserved;		/* zero */
};

/*
 * struct actrack_thread_reg (ABI 1.3) - ACTRACK_IOC_THREAD: the calling
 * thread's tracker is block @tracker of the arena its process attached to
 * (0: it has none now).  The kernel keeps one reference per thread, in
 * kernel memory charged to the caller, and when the thread exits on its
 * own frees that tracker and its ACTRACK_THREAD_DATA blocks without walking
 * the arena.  Once a process has registered a tracker, its threads that
 * exit unregistered leave their records to the process's own end (death
 * or exec), which walks the arena as always.  Errors: EINVAL (@flags or
 * @reserved not zero, @tracker not a block boundary inside the arena),
 * EPERM (a read-only fd), ENOENT (the process is not attached through this
 * fd's arena), ENOMEM.
 */
struct actrack_thread_reg {
	__u32 tracker;		/* in */
	__u32 flags;		/* in: zero */
	__u64 reserved;		/* in: zero */
};

/*
 * struct actrack_stacks (ABI 1.5) - ACTRACK_IOC_STACKS: the calling
 * process's say over its stacks at death (see "Stacks at death"), until
 * it exits or execs (a new image starts with none of it, like a fork).
 * @reader: a process (its pid in the caller's pid namespace; 0: none)
 * allowed to receive the stacks where Yama's ptrace_scope is 1, as
 * PR_SET_PTRACER allows a ptracer: the one process that subscribed, or
 * asked for recent deaths, with that thread group id; it must still be
 * allowed to see the report at all (same uid, or ACTRACK_A_ALL_UIDS).
 * Naming a process replaces the previous one.
 * @flags: ACTRACK_STACKS_ON_EXIT captures the stacks of the other
 * threads at a clean exit() / exit_group() too (by default only deaths
 * by a signal carry stacks).
 * Errors: EINVAL (unknown @flags, @reserved not zero), EPERM (a read-only
 * fd), ENOENT (the process is not attached through this fd's arena),
 * ESRCH (@reader is not a running process).
 */
struct actrack_stacks {
	__u32 flags;		/* in: ACTRACK_STACKS_* */
	__u32 reader;		/* in: pid, 0 = none */
	__u64 reserved;		/* in: zero */
};
#define ACTRACK_STACKS_ON_EXIT	(1U << 0)

/*
 * struct actrack_previous_uids - (ABI 1.9) the uids that have an arena in
 * the previous boot's image (ACTRACK_SELECT_PREVIOUS_BOOT reads each), as
 * seen from the caller's user namespace (overflowuid for one not mapped
 * there), in slot order.  Host root only (CAP_SYS_ADMIN): which users ran
 * tracked programs is not every user's to know.
 * @nr: in, how many @uids has room for; out, how many the image holds
 * (more than were written when the room was short: call again).
 * @uids: in, a user pointer to @nr __u32s (ignored when @nr is 0).
 * Errors: EPERM, ENODATA (no previous boot's image), EINVAL (@flags or
 * @reserved not zero), EFAULT.
 */
struct actrack_previous_uids {
	__u32 nr;		/* in: room; out: uids in the image */
	__u32 flags;		/* in: zero */
	__u64 uids;		/* in: user pointer to __u32[nr] */
	__u64 reserved;		/* in: zero */
};

#define ACTRACK_IOC_VERSION	_IOR(ACTRACK_IOC_MAGIC, 0, struct actrack_version)
#define ACTRACK_IOC_LAYOUT	_IOR(ACTRACK_IOC_MAGIC, 1, struct actrack_layout)
#define ACTRACK_IOC_ATTACH	_IOWR(ACTRACK_IOC_MAGIC, 2, struct actrack_attach)
#define ACTRACK_IOC_SELECT	_IOW(ACTRACK_IOC_MAGIC, 3, struct actrack_select)
#define ACTRACK_IOC_THREAD	_IOW(ACTRACK_IOC_MAGIC, 4, struct actrack_thread_reg)
#define ACTRACK_IOC_STACKS	_IOW(ACTRACK_IOC_MAGIC, 5, struct actrack_stacks)
#define ACTRACK_IOC_PREVIOUS_UIDS _IOWR(ACTRACK_IOC_MAGIC, 6, struct actrack_previous_uids)

#define ACTRACK_MMAP_ARENA	0ULL
#define ACTRACK_MMAP_CLOCK	0x40000000ULL

/* ------------------------------------------------------------------------ */
/* Generic netlink family                                                    */
/* ------------------------------------------------------------------------ */

#define ACTRACK_GENL_NAME	"actrack"
#define ACTRACK_GENL_VERSION	1

/*
 * Death reports are unicast to subscribed sockets whose owner may see the
 * dead process (same uid, or CAP_SYS_PTRACE/CAP_SYS_ADMIN), and rendered
 * for each reader (ACTRACK_A_PID in its pid namespace, ACTRACK_A_UID in
 * its user namespace): a multicast group can be guarded by a capability
 * only, not by uid or namespace, and 6.1 has no per-listener filter.
 */
enum actrack_genl_cmd {
	ACTRACK_CMD_UNSPEC,
	ACTRACK_CMD_SUBSCRIBE,		/* start receiving ACTRACK_CMD_DEATH */
	ACTRACK_CMD_UNSUBSCRIBE,
	ACTRACK_CMD_DEATH,		/* kernel -> user: one death report */
	ACTRACK_CMD_GET_DEATHS,		/* dump: recent deaths (bounded ring) */
	ACTRACK_CMD_GET_STATS,		/* doit: counters */
	__ACTRACK_CMD_MAX,
};
#define ACTRACK_CMD_MAX (__ACTRACK_CMD_MAX - 1)

/* wait-status style exit information, as waitpid() would have seen it */
enum actrack_genl_attr {
	ACTRACK_A_UNSPEC,
	ACTRACK_A_PAD,
	ACTRACK_A_PID,			/* u32 */
	ACTRACK_A_START_TICKS,		/* u64 */
	ACTRACK_A_UID,			/* u32 */
	ACTRACK_A_WAIT_STATUS,		/* u32, as from waitpid() */
	ACTRACK_A_EXIT_CODE,		/* u32, when exited normally */
	ACTRACK_A_SIGNAL,		/* u32, when killed by a signal */
	ACTRACK_A_CORE_DUMPED,		/* flag */
	ACTRACK_A_EXIT_TIME_NS,		/* u64, CLOCK_MONOTONIC */
	ACTRACK_A_PHASE,		/* u32, ACTRACK_PHASE_* */
	ACTRACK_A_CMDLINE,		/* binary, NUL-separated argv */
	ACTRACK_A_THREAD,		/* nested, ACTRACK_T_*; repeated */
	ACTRACK_A_SEQ,			/* u64, report number in its arena */
	ACTRACK_A_FLAGS,		/* u32, ACTRACK_DEATH_* */
	ACTRACK_A_STATS,		/* nested, ACTRACK_S_* */
	ACTRACK_A_ALL_UIDS,		/* flag, in SUBSCRIBE/GET_DEATHS: all
					 * uids (privileged callers only) */
	ACTRACK_A_MODULE,		/* binary struct actrack_module, repeated:
					 * the dead process's ELF objects, so its
					 * pcs can be symbolized afterwards */
	ACTRACK_A_PROCESS_DATA,		/* binary, at most
					 * ACTRACK_DEATH_PROCESS_DATA_MAX bytes:
					 * see "User data in death reports" */
	ACTRACK_A_PID_NS,		/* u32 (ABI 1.1): inode number of the
					 * dead process's own pid namespace.
					 * ACTRACK_A_PID is translated into the
					 * receiver's pid namespace; thread ids
					 * and records stay as the process saw
					 * them, in this namespace */
	ACTRACK_A_STACK,		/* nested, ACTRACK_K_* (ABI 1.2);
					 * repeated, one per thread whose
					 * user stack was captured as it
					 * died: see "Stacks at death" */
	ACTRACK_A_KILLER,		/* nested, ACTRACK_KL_* (ABI 1.6): who
					 * sent the signal it died of; see
					 * "The sender of the fatal signal" */
	ACTRACK_A_CGROUP,		/* string (ABI 1.7): the process's
					 * cgroup v2 path as it died, as the
					 * reader's cgroup namespace shows it
					 * (the "0::" line of /proc/PID/
					 * cgroup); absent when unknown or
					 * longer than ACTRACK_CGROUP_MAX - 1 */
	ACTRACK_A_OOM,			/* nested, ACTRACK_OOM_* (ABI 1.7): the
					 * OOM killer chose it; see "The OOM
					 * kill" */
	__ACTRACK_A_MAX,
};
#define ACTRACK_A_MAX (__ACTRACK_A_MAX - 1)

/* (ABI 1.7) The longest ACTRACK_A_CGROUP, with its NUL. */
#define ACTRACK_CGROUP_MAX		1024
/* (ABI 1.8) The longest ACTRACK_KL_EXE, with its NUL (PATH_MAX). */
#define ACTRACK_EXE_MAX			4096

#define ACTRACK_DEATH_ARENA_CORRUPT	(1U << 0)	/* walk met bad data */
/* too many threads or activities, or user data was cut */
#define ACTRACK_DEATH_TRUNCATED		(1U << 1)
/* (ABI 1.2) some dying threads' stacks were not captured: the per-report
 * cap (module parameter stack_threads) or the uid's capture slots
 * (stack_slots) were used up */
#define ACTRACK_DEATH_STACKS_CUT	(1U << 2)
/* (ABI 1.2) no stack was copied: the process was not dumpable (it set
 * PR_SET_DUMPABLE 0 or changed credentials), so its memory is not handed
 * out, as ptrace and core dumps would not */
#define ACTRACK_DEATH_STACKS_PRIVATE	(1U << 3)
/* (ABI 1.5) stacks were captured but are not in this copy of the report:
 * Yama's kernel.yama.ptrace_scope was 1 or more when it was rendered and
 * this reader neither held CAP_SYS_PTRACE over the process's user
 * namespace nor was the process named by ACTRACK_IOC_STACKS (scope 1
 * only); see docs/trust.md */
#define ACTRACK_DEATH_STACKS_WITHHELD	(1U << 4)
/* (ABI 1.5) some dying threads ran code whose stacks are not captured
 * (32-bit code, or an architecture other than x86-64): no stack for them */
#define ACTRACK_DEATH_STACKS_UNSUPPORTED	(1U << 5)

enum actrack_genl_thread_attr {
	ACTRACK_T_UNSPEC,
	ACTRACK_T_PAD,
	ACTRACK_T_TID,			/* u32 */
	ACTRACK_T_NAME,			/* string */
	ACTRACK_T_DEPTH,		/* u32, may exceed stored activities */
	ACTRACK_T_FATAL_SIGNO,		/* u32 */
	ACTRACK_T_FATAL_CODE,		/* u32 (s32 bits) */
	ACTRACK_T_FATAL_ADDR,		/* u64 */
	ACTRACK_T_FATAL_PC,		/* u64 */
	ACTRACK_T_ACTIVITY,		/* binary struct actrack_activity,
					 * repeated, outermost first */
	ACTRACK_T_TORN,			/* flag: no consistent copy */
	ACTRACK_T_USER_DATA,		/* binary, repeated: __u32 activity
					 * index then field records, at
					 * most 4 + ACTRACK_DEATH_ACT_DATA_MAX
					 * bytes */
	__ACTRACK_T_MAX,
};
#define ACTRACK_T_MAX (__ACTRACK_T_MAX - 1)

/*
 * User data in death reports.  Writer: K, from a seq-checked copy of the
 * USER_DATA block whose owner (pid, start_ticks, and tid for an activity's)
 * is the dead process; reader: libactrack (__actrack_parse_fields()).
 *
 * ACTRACK_A_PROCESS_DATA is the field area of the process record's
 * annotations block: struct actrack_field + name + value records exactly as
 * the arena held them, the first `used` bytes, cut after the last whole
 * record that fits in ACTRACK_DEATH_PROCESS_DATA_MAX bytes.
 * ACTRACK_T_USER_DATA (inside a thread nest, after its activities) is a
 * __u32 activity index (0 = outermost, the order of ACTRACK_T_ACTIVITY)
 * followed by that activity's field records, cut likewise at
 * ACTRACK_DEATH_ACT_DATA_MAX bytes.  Absent when there is no data.
 *
 * The bytes were written by the dead process (or any process of its uid)
 * and are passed through unparsed: readers must validate every record
 * (sizes, types, bounds) and skip a blob that does not parse.
 */
#define ACTRACK_DEATH_PROCESS_DATA_MAX	4096U
#define ACTRACK_DEATH_ACT_DATA_MAX	1024U

/*
 * Stacks at death (ABI 1.2).  Writer: K, in the dying thread's own context
 * (the signal_deliver tracepoint of a fatal signal, SIGKILL of a group
 * exit included), from that thread's user registers and a non-faulting
 * copy of its user stack; reader: an unwinder (actrack monitor unwinds
 * with libdwfl's DWARF CFI, symbolizing with the report's ACTRACK_A_MODULE
 * records).  One ACTRACK_A_STACK per captured thread, after the modules;
 * a report that must be cut loses these first (ACTRACK_DEATH_TRUNCATED).
 *
 * ACTRACK_K_REGS holds ACTRACK_STACK_NR_REGS __u64 in the order of the
 * DWARF register numbers of the thread's architecture (x86-64: rax, rdx,
 * rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, rip); only 64-bit x86 threads are
 * captured today (others set ACTRACK_DEATH_STACKS_UNSUPPORTED).
 * ACTRACK_K_BYTES is the memory [sp, sp + length), only what a core dump
 * would hold: the copy stops at the end of the mapping that holds the sp,
 * at the first page that cannot be read without faulting (a page swapped
 * out) or at the cap (module parameter stack_bytes), whichever comes
 * first; a mapping excluded from core dumps (MADV_DONTDUMP, VM_IO,
 * VM_PFNMAP) is never read (ACTRACK_STACK_EXCLUDED).  The bytes are the
 * dead process's: hostile to whoever unwinds them.
 *
 * (ABI 1.5) Who gets them.  Only deaths by a signal are captured (SIGKILL
 * of another thread's fatal signal included), not the other threads of a
 * clean exit() / exit_group(), unless the process asked for it
 * (ACTRACK_STACKS_ON_EXIT).  Each reader's copy of a report carries the
 * stacks only if that reader could have read them with ptrace when the
 * copy is rendered: with Yama's ptrace_scope 0 (or no Yama), any reader
 * of the report (which is already its uid's, or privileged); with scope
 * 1, a reader holding CAP_SYS_PTRACE over the process's user namespace
 * (when it subscribed or asked), or the process the dead process named
 * (ACTRACK_IOC_STACKS); with scope 2, the former only; with scope 3,
 * nobody.  Otherwise ACTRACK_DEATH_STACKS_WITHHELD is set instead.
 */
enum actrack_genl_stack_attr {
	ACTRACK_K_UNSPEC,
	ACTRACK_K_PAD,
	ACTRACK_K_TID,			/* u32, in the process's pid namespace */
	ACTRACK_K_FLAGS,		/* u32, ACTRACK_STACK_* */
	ACTRACK_K_SP,			/* u64, the stack pointer */
	ACTRACK_K_REGS,			/* binary, ACTRACK_STACK_NR_REGS __u64 */
	ACTRACK_K_BYTES,		/* binary, memory from the sp upwards */
	__ACTRACK_K_MAX,
};
#define ACTRACK_K_MAX (__ACTRACK_K_MAX - 1)

#define ACTRACK_STACK_NR_REGS		17
/* The copy stopped at the cap: the stack goes on above what is here. */
#define ACTRACK_STACK_CAPPED		(1U << 0)
/* Not one byte at the sp could be read (a wild sp, swapped out, or the
 * memory map was being changed by another thread as it died). */
#define ACTRACK_STACK_UNREADABLE	(1U << 1)
/* (ABI 1.5) Nothing copied: the sp is in a mapping excluded from core
 * dumps (MADV_DONTDUMP, VM_IO, VM_PFNMAP). */
#define ACTRACK_STACK_EXCLUDED		(1U << 2)

/*
 * The sender of the fatal signal (ABI 1.6).  Writer: K, in the
 * signal_generate tracepoint, as the first fatal signal (SIGKILL, or one
 * whose action is SIG_DFL and whose default ends the process) is sent to
 * any thread of the process: the sender is the process sending it
 * (current), its command name and effective uid at that moment.  Present
 * only when that signal is the one the process died of (the wait status's
 * signal): a report never names the sender of a signal that did not kill.
 *
 * ACTRACK_KL_KIND says who it was: another process, the process itself
 * (raise(), kill(getpid())), or the kernel (a fault, an rlimit, seccomp,
 * a timer, the OOM killer: si_code > 0 or SI_TIMER, SEND_SIG_PRIV, or
 * a kernel thread); for the kernel no pid, comm or uid is given.
 * ACTRACK_KL_PID is the sender's tgid in the READER's pid namespace, as
 * ACTRACK_A_PID is (the number it had, also after it exited); 0 when
 * the sender is not in that namespace: then comm and uid are left out
 * too, as /proc would show that reader nothing of it.  ACTRACK_KL_UID is
 * mapped into the reader's user namespace.
 *
 * (ABI 1.8) Of a sender the reader sees (ACTRACK_KL_PID not 0), and not
 * the kernel: ACTRACK_KL_CGROUP, its cgroup v2 path as it sent, as the
 * reader's cgroup namespace shows it (as ACTRACK_A_CGROUP is); and
 * ACTRACK_KL_EXE, the path of its executable as it sent, only to a
 * reader of the sender's effective uid or one with CAP_SYS_PTRACE in
 * the initial user namespace (who may readlink /proc/PID/exe).  Each is
 * absent when not known (EXE: a sender past its exit_mm(), as a dying
 * parent's PR_SET_PDEATHSIG) or too long.  The kernel names both at
 * send time and renders them as text only when the report is read.
 */
enum actrack_genl_killer_attr {
	ACTRACK_KL_UNSPEC,
	ACTRACK_KL_KIND,		/* u32, ACTRACK_KILLER_* */
	ACTRACK_KL_SIGNAL,		/* u32, the signal sent */
	ACTRACK_KL_CODE,		/* u32 (s32 bits), its si_code */
	ACTRACK_KL_PID,			/* u32, in the reader's pid namespace */
	ACTRACK_KL_UID,			/* u32, in the reader's user namespace */
	ACTRACK_KL_COMM,		/* string, its comm (TASK_COMM_LEN) */
	ACTRACK_KL_EXE,			/* string (ABI 1.8), its executable */
	ACTRACK_KL_CGROUP,		/* string (ABI 1.8), its cgroup v2 */
	__ACTRACK_KL_MAX,
};
#define ACTRACK_KL_MAX (__ACTRACK_KL_MAX - 1)

#define ACTRACK_KILLER_PROCESS	1	/* another process */
#define ACTRACK_KILLER_SELF	2	/* the process itself */
#define ACTRACK_KILLER_KERNEL	3	/* the kernel */

/*
 * The OOM kill (ABI 1.7).  Writer: K, in the oom:mark_victim tracepoint,
 * as the OOM killer (global or a memory cgroup's) marks the process its
 * victim, right after sending it SIGKILL: the victim's RSS by kind and
 * its oom_score_adj at that moment, and the nearest memory cgroup from
 * the victim's up whose usage was within one charge batch of its
 * memory.max (the one at its limit), with that limit and usage.
 * Present only when the process died of SIGKILL.  ACTRACK_OOM_MEMCG is
 * that cgroup's path as the reader's cgroup namespace shows it (as
 * ACTRACK_A_CGROUP); the three MEMCG attributes are absent for a global
 * OOM (no memory cgroup near its limit), MEMCG alone also when too long.
 */
enum actrack_genl_oom_attr {
	ACTRACK_OOM_UNSPEC,
	ACTRACK_OOM_PAD,
	ACTRACK_OOM_ANON,		/* u64, bytes of anonymous RSS */
	ACTRACK_OOM_FILE,		/* u64, bytes of file RSS */
	ACTRACK_OOM_SHMEM,		/* u64, bytes of shmem RSS */
	ACTRACK_OOM_SCORE_ADJ,		/* u32 (s32 bits), -1000..1000 */
	ACTRACK_OOM_MEMCG,		/* string, a cgroup path */
	ACTRACK_OOM_MEMCG_LIMIT,	/* u64, bytes: its memory.max */
	ACTRACK_OOM_MEMCG_USAGE,	/* u64, bytes: its memory.current */
	__ACTRACK_OOM_MAX,
};
#define ACTRACK_OOM_MAX (__ACTRACK_OOM_MAX - 1)

/*
 * GET_STATS: counters of the caller's own arena (its uid), or module-wide
 * sums for callers with CAP_SYS_PTRACE/CAP_SYS_ADMIN in the initial user
 * namespace; ARENA_SIZE/BYTES_* only when the caller's arena exists.
 */
enum actrack_genl_stats_attr {
	ACTRACK_S_UNSPEC,
	ACTRACK_S_PAD,
	ACTRACK_S_ARENAS,		/* u64 */
	ACTRACK_S_BYTES_USED,		/* u64: in the caller's arena */
	ACTRACK_S_ARENA_SIZE,		/* u64: of the caller's arena */
	ACTRACK_S_ATTACHED,		/* u64: attached processes */
	ACTRACK_S_CLEANUPS,		/* u64: process cleanups run */
	ACTRACK_S_RECORDS_FREED,	/* u64 */
	ACTRACK_S_CORRUPTION,		/* u64: bad data seen by walks */
	ACTRACK_S_REPORTS_SENT,		/* u64 */
	ACTRACK_S_REPORTS_DROPPED,	/* u64: subscriber full or gone */
	ACTRACK_S_BYTES_FREE,		/* u64: reclaimable + unallocated */
	__ACTRACK_S_MAX,
};
#define ACTRACK_S_MAX (__ACTRACK_S_MAX - 1)

#endif /* _UAPI_LINUX_ACTRACK_H */
