/* SPDX-License-Identifier: GPL-2.0 */
/*
 * actrack.ko internals shared between its files.  Nothing here is ABI; the
 * ABI is include/uapi/linux/actrack.h.
 *
 * Object lifetimes, in one place:
 * - struct actrack_karena (one per kuid) is created on first need and kept
 *   on actrack_arenas until module unload, or, while it is idle, until the
 *   table needs its slot (arenas.c says which may go).  Its kref is held
 *   by that list, by every fd that refers to it, by every vma that maps
 *   it, by every struct actrack_kproc of it until that is freed, and by
 *   its cleanup work while queued.  The arena memory is freed with the
 *   last reference.  Open fds and mappings pin the module (the file holds
 *   the fops owner), so in practice the list's reference is the last one
 *   only after every user is gone.
 * - struct actrack_kproc (one per attached thread group) lives in a hash
 *   keyed by the group's signal_struct from ATTACH until the group dies or
 *   execs; the probes put it on its arena's work list (thread exits too),
 *   and the arena's work reports, frees the records and drops it; it is
 *   freed after an RCU grace period (the probe looks entries up under
 *   RCU).  It holds its arena and one of its memory users.
 * - struct actrack_report is built by the cleanup work, sent to subscribers,
 *   then owned by its arena's bounded deaths ring.
 */
#ifndef ACTRACK_KMOD_H
#define ACTRACK_KMOD_H

#include <linux/types.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/atomic.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>
#include <linux/rcupdate.h>
#include <linux/mm_types.h>
#include <linux/sizes.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/xarray.h>
#include <linux/uuid.h>
#include "arena.h"

#define ACTRACK_DEFAULT_ARENA_SIZE	(4U << 20)
#define ACTRACK_DEFAULT_MAX_ARENAS	64U
#define ACTRACK_DEFAULT_MAX_ARENAS_PER_USER	8U
#define ACTRACK_MAX_ARENAS_LIMIT	4096U
#define ACTRACK_DEFAULT_DEATHS_KEPT	64U
#define ACTRACK_DEATHS_KEPT_LIMIT	4096U

/* Bounds of one death report: threads walked into it, activities kept
 * over all its threads, ELF objects.  Without user data a full report
 * stays under 96 KiB of netlink (about 64 KiB of threads and 22 KiB of
 * modules).
 */
#define ACTRACK_REPORT_MAX_THREADS	256U
#define ACTRACK_DEATH_MAX_ACTS		512U
/* ELF objects of the process, for symbolizing (22 KiB at most). */
#define ACTRACK_DEATH_MAX_MODULES	64U
/* User data of all activities of one report together (each one at most
 * ACTRACK_DEATH_ACT_DATA_MAX), plus the process's annotations (at most
 * ACTRACK_DEATH_PROCESS_DATA_MAX): a full report stays under 136 KiB.
 */
#define ACTRACK_DEATH_MAX_DATA		(32U * 1024)
/* Bytes of death reports one arena keeps for GET_DEATHS. */
#define ACTRACK_RING_MAX_BYTES		SZ_1M

/* Stacks at death (capture.c): defaults and limits of the parameters. */
#define ACTRACK_DEFAULT_STACK_BYTES	SZ_16K
#define ACTRACK_STACK_BYTES_LIMIT	SZ_32K	/* an attribute holds < 64 KiB */
#define ACTRACK_DEFAULT_STACK_SLOTS	32U
#define ACTRACK_STACK_SLOTS_LIMIT	64U
#define ACTRACK_DEFAULT_STACK_THREADS	16U

/* Most a GET_DEATHS dump skb asks for (an order-5 allocation). */
#define ACTRACK_DUMP_ALLOC_MAX		(128U << 10)

/* Subscribers per budget (struct actrack_budget). */
#define ACTRACK_MAX_SUBS_PER_BUDGET	64U

/* module parameters (main.c), read-only after init */
extern unsigned int actrack_arena_size;
extern unsigned int actrack_max_arenas;
extern unsigned int actrack_max_arenas_per_user;
extern unsigned int actrack_deaths_kept;
extern unsigned int actrack_stack_bytes;
extern unsigned int actrack_stack_slots;
extern unsigned int actrack_stack_threads;

/* Counters kept per arena; the global view is their sum. */
struct actrack_counters {
	atomic64_t cleanups;
	atomic64_t records_freed;
	atomic64_t corruption;
	atomic64_t reports_sent;
	atomic64_t reports_dropped;
};

struct actrack_report;
struct actrack_capture_pool;

/*
 * Who pays for an arena or a subscription (arenas.c).  A host uid, which
 * also pays for the user namespaces it created, or a user namespace that
 * host root created (a container's), with everything below it.
 */
struct actrack_budget {
	kuid_t uid;			/* a host uid, INVALID_UID ... */
	struct user_namespace *ns;	/* ... for this one (referenced) */
};

struct actrack_karena {
	struct kref kref;
	struct list_head node;		/* actrack_arenas (arenas.c) */
	kuid_t uid;
	unsigned long id;		/* creation order, a dump's cursor */
	struct actrack_budget budget;	/* its maker's */
	struct mutex mem_lock;		/* @mem, @pages, @mem_users, usage */
	void *mem;			/* vmap of @pages, NULL while idle */
	struct page **pages;		/* charged to the maker's memcg */
	int slot;			/* in the persist region, or -1 */
	unsigned int mem_users;		/* attached procs and vmas */
	u32 size;
	atomic_t attached;		/* processes attached to this arena */
	struct actrack_counters stats;
	atomic64_t death_seq;		/* last ACTRACK_A_SEQ handed out */

	/* Cleanup: one work per arena runs its processes' walks in order
	 * (a uid's backlog delays only that uid): urgent entries first, in
	 * the order they were queued, then the others, in theirs.  Under
	 * actrack_procs_lock; a queued work holds a reference.
	 */
	struct list_head work_list;	/* struct actrack_kproc.work_node */
	struct list_head *urgent_end;	/* its last urgent entry, or NULL */
	struct work_struct work;
	bool work_queued;

	/* The deaths ring: arenas.c's alone (actrack_karena_store_death(),
	 * actrack_karena_walk_deaths()).
	 */
	struct mutex ring_lock;
	struct actrack_report **ring;	/* actrack_deaths_kept slots */
	u32 ring_head;			/* next slot to fill */
	u32 ring_count;
	size_t ring_bytes;
	/* Set once at an ATTACH (capture.c), freed with the arena. */
	struct actrack_capture_pool *capture;
	u64 free_bytes;			/* [mem_lock] usage cache ... */
	unsigned long free_at;		/* ... computed then (jiffies, 0: never) */
};

/* A fresh view of the arena for one walk: its own corrupt flag. */
static inline void actrack_karena_view(const struct actrack_karena *ka,
				       struct actrack_arena *a)
{
	a->base = ka->mem;
	a->size = ka->size;
	a->writable = true;
	a->corrupt = false;
}

struct actrack_report_thread {
	u32 ref;			/* where it was found (not reported) */
	u32 tid;
	u32 depth;
	s32 fatal_signo;
	s32 fatal_code;
	u64 fatal_addr;
	u64 fatal_pc;
	u32 first_act;			/* index into actrack_report.acts */
	u32 nr_acts;
	bool torn;
	char name[32];			/* NUL-terminated */
};

/* Where one activity's user data is in actrack_report.data (len 0: none). */
struct actrack_report_data {
	u32 off;
	u32 len;
};

/* One thread's stack at death (capture.c); its bytes at data + @off. */
struct actrack_report_stack {
	u32 tid;
	u32 flags;			/* ACTRACK_STACK_* */
	u32 off;
	u32 len;
	u64 sp;
	u64 regs[ACTRACK_STACK_NR_REGS];
};

struct actrack_report_stacks {
	size_t bytes;			/* allocation size (ring budget) */
	u32 nr;
	u8 *data;			/* inside this allocation */
	/* Who may have them (actrack_stacks_may_read()), referenced: */
	struct user_namespace *user_ns;	/* the dying threads' */
	struct pid *reader;		/* named by ACTRACK_IOC_STACKS, or NULL */
	struct actrack_report_stack stacks[];
};

/* Whom a copy of a report is rendered for (the stack policy, capture.c). */
struct actrack_stack_reader {
	struct pid *tgid;		/* its thread group */
	struct user_namespace *user_ns;	/* of its credentials */
	kuid_t euid;
	bool ptrace;			/* it held CAP_SYS_PTRACE in @user_ns */
};

/*
 * Who sent the fatal signal (killer.c): recorded at send time in the
 * proc, moved into its report.  @tgid, @exe and @cgroup are referenced
 * (NULL: the kernel, or not known); the paths of the last two are
 * rendered per reader, only when the report is read.
 */
struct actrack_killer {
	struct pid *tgid;		/* the sender's group, or NULL */
	struct file *exe;		/* its mm's exe_file, or NULL */
	struct cgroup *cgroup;		/* its default-hierarchy cgroup */
	kuid_t euid;
	u32 kind;			/* ACTRACK_KILLER_*, 0: none */
	u32 sig;
	s32 code;			/* si_code */
	char comm[16];			/* TASK_COMM_LEN, NUL-terminated */
};

/*
 * A record a probe writes into a proc without a lock (the killer, the
 * OOM kill): claimed by one cmpxchg, EMPTY -> WRITING -> SET, and closed
 * (-> CLOSED) by whoever reports or frees the proc, who never waits: a
 * record still WRITING stays its writer's, whose publish then fails and
 * who drops what it wrote.  See killer.c for why that loses nothing.
 */
enum {
	ACTRACK_REC_EMPTY,		/* nothing yet: a probe may claim */
	ACTRACK_REC_WRITING,		/* a probe is writing it */
	ACTRACK_REC_SET,		/* written */
	ACTRACK_REC_CLOSED,		/* taken or dropped: no more writes */
};

/* Is the record the caller's to write? */
static inline bool actrack_rec_claim(atomic_t *st)
{
	return atomic_cmpxchg(st, ACTRACK_REC_EMPTY, ACTRACK_REC_WRITING) ==
	       ACTRACK_REC_EMPTY;
}

/* Written (release: its stores before SET).  False: closed meanwhile,
 * the writer drops what it wrote.
 */
static inline bool actrack_rec_publish(atomic_t *st)
{
	return atomic_cmpxchg_release(st, ACTRACK_REC_WRITING,
				      ACTRACK_REC_SET) == ACTRACK_REC_WRITING;
}

/* No more writes; fully ordered.  Return: is a record there, now the
 * caller's?
 */
static inline bool actrack_rec_close(atomic_t *st)
{
	return atomic_xchg(st, ACTRACK_REC_CLOSED) == ACTRACK_REC_SET;
}

/*
 * The OOM killer chose the process (oom.c): the victim's memory, and the
 * memory cgroup found at its limit, at that moment.  @memcg is
 * referenced (the cgroup of that memory cgroup), or NULL.
 */
struct actrack_oom {
	bool set;
	s16 score_adj;
	u64 anon, file, shmem;		/* RSS, bytes */
	struct cgroup *memcg;
	u64 limit, usage;		/* of @memcg, bytes */
};

/* One death report, in kernel memory: built once, rendered per reader. */
struct actrack_report {
	size_t bytes;			/* allocation size (ring budget) */
	kuid_t uid;
	struct pid *tgid;		/* reference: translated per reader */
	u32 pid;			/* in its own pid namespace ... */
	u32 pid_ns;			/* ... whose inode number this is */
	u64 start_ticks;
	u32 wait_status;
	u64 exit_time_ns;
	u64 seq;
	u32 phase;
	bool has_phase;
	u32 flags;			/* ACTRACK_DEATH_* */
	u32 cmdline_len;
	char cmdline[ACTRACK_CMDLINE_MAX];
	u32 nr_threads;
	u32 nr_acts;
	u32 nr_modules;
	u32 proc_data_len;		/* bytes at @proc_data */
	u32 data_len;			/* bytes at @data */
	/* inside this allocation: */
	struct actrack_report_thread *threads;
	struct actrack_activity *acts;
	struct actrack_report_data *act_data;	/* parallel to @acts */
	struct actrack_module *modules;
	u8 *proc_data;			/* arena bytes, unparsed */
	u8 *data;			/* arena bytes, unparsed */
	struct actrack_report_stacks *stacks;	/* own allocation, or NULL */
	struct actrack_killer killer;	/* kind 0: not known */
	struct cgroup *cgroup;		/* referenced, or NULL (cgroup.c) */
	struct actrack_oom oom;		/* .set: the OOM killer's victim */
};

/*
 * Thread exits remembered per process between two cleanup walks (the
 * probe may not allocate).  More exits than this before the walk turn the
 * batch into a sweep of every tracker whose thread is gone, unless the
 * group has begun to end (then they are its death report's).
 */
#define ACTRACK_PROC_TIDS	16

enum actrack_proc_state {
	ACTRACK_PROC_ATTACHED,	/* hashed, probes see it */
	ACTRACK_PROC_DEAD,	/* unhashed: report and free everything */
	ACTRACK_PROC_EXEC,	/* hashed for ATTACH waiters only: free */
	ACTRACK_PROC_GONE,	/* forgotten at unload: nothing to do */
};

/*
 * An attached thread group (exit_hook.c).  References (@ref): the hash
 * while hashed, the arena's work list while queued, the exiting thread
 * that cleans up its thread exits (@exit_walker), and an ATTACH that
 * waits for its exec cleanup.  The fields marked [L] are under
 * actrack_procs_lock.
 */
struct actrack_kproc {
	struct hlist_node hnode;	/* [L] actrack_procs */
	struct rcu_head rcu;
	refcount_t ref;
	const void *key;		/* its signal_struct; never dereferenced */
	struct actrack_karena *arena;	/* reference (and a memory user) */
	struct pid_namespace *pid_ns;	/* reference: the attacher's */
	struct pid *tgid;		/* reference: the group's struct pid */
	struct actrack_owner_key owner;	/* pid in pid_ns, its inum, ticks */
	u64 start_boottime;		/* the leader's, ns, for comparisons */
	enum actrack_proc_state state;	/* [L] */
	bool hashed;			/* [L] */
	bool queued;			/* [L] on arena->work_list */
	bool urgent;			/* [L] queued among the urgent ones */
	bool tids_overflow;		/* [L] */
	u32 nr_tids;			/* [L] */
	u32 tids[ACTRACK_PROC_TIDS];	/* [L] exited threads, in pid_ns */
	/*
	 * ACTRACK_IOC_THREAD: tid (in pid_ns) -> its tracker's reference,
	 * as xa_mk_value().  While @registers is set and @trackers_lost is
	 * not, exited threads are freed through it instead of a walk.
	 */
	struct xarray trackers;
	bool registers;			/* some thread registered */
	bool trackers_lost;		/* a registration failed (ENOMEM) */
	struct list_head work_node;	/* [L] arena->work_list */
	/*
	 * Thread exits are cleaned up by an exiting thread of the process
	 * itself (cleanup.c), one at a time: @exit_walker [L] is set while
	 * @exit_work is queued on, or runs in, such a thread.
	 */
	struct callback_head exit_work;
	bool exit_walker;		/* [L] */
	struct completion done;		/* EXEC: its cleanup finished */
	/* Stacks at death (capture.c): whose slots, how many taken. */
	u64 capture_id;
	atomic_t captures;
	bool captures_cut;
	bool captures_private;		/* not dumpable when it died */
	bool captures_unsupported;	/* a thread ran 32-bit code */
	u32 stack_opts;			/* [L] ACTRACK_STACKS_* */
	struct pid *stack_reader;	/* [L] ACTRACK_IOC_STACKS, referenced */
	struct user_namespace *stack_user_ns;	/* first capture's, ref */
	/* The first fatal signal's sender, claimed through @killer_state
	 * (ACTRACK_REC_EMPTY ...; killer.c), not under the lock; the OOM
	 * kill likewise (oom.c).
	 */
	atomic_t killer_state;
	struct actrack_killer killer;
	atomic_t oom_state;
	struct actrack_oom oom;
	/* written by the probe that ends it, read by the work after */
	struct cgroup *cgroup;		/* referenced, or NULL (cgroup.c) */
	u32 wait_status;
	u64 exit_time_ns;
	u32 cmdline_len;
	char cmdline[ACTRACK_CMDLINE_MAX];
};

/* Guards the proc hash, every proc's [L] fields and arenas' work lists.
 * Raw: taken with preemption disabled in the probes, also on PREEMPT_RT.
 */
extern raw_spinlock_t actrack_procs_lock;

/* arenas.c */
int actrack_arenas_init(void);
void actrack_arenas_exit(void);
struct actrack_karena *actrack_karena_get_or_create(const struct cred *cred);
void actrack_budget_get(const struct cred *cred, struct actrack_budget *b);
void actrack_budget_put(struct actrack_budget *b);
bool actrack_budget_eq(const struct actrack_budget *a,
		       const struct actrack_budget *b);
void actrack_karena_usage(struct actrack_karena *ka, u64 *used, u64 *free);
int actrack_karena_mem_get(struct actrack_karena *ka, bool create);
void actrack_karena_mem_put(struct actrack_karena *ka);
struct actrack_karena *actrack_karena_lookup(kuid_t uid);
struct actrack_karena *actrack_karena_next(unsigned long id);
unsigned int actrack_arenas_count(void);
int actrack_karena_remap(struct actrack_karena *ka, struct vm_area_struct *vma);
bool actrack_karena_persistent(struct actrack_karena *ka);
/*
 * The values of struct actrack_counters as GET_STATS reports them, of one
 * arena or summed.
 */
struct actrack_counter_values {
	u64 cleanups, records_freed, corruption;
	u64 reports_sent, reports_dropped;
};
void actrack_karena_add_counters(struct actrack_karena *ka,
				 struct actrack_counter_values *c);
void actrack_karena_sum_counters(struct actrack_counter_values *c);
int actrack_karena_walk_deaths(struct actrack_karena *ka,
			       int (*fn)(const struct actrack_report *d,
					 void *arg),
			       void *arg);

static inline void actrack_karena_get(struct actrack_karena *ka)
{
	kref_get(&ka->kref);
}

void actrack_karena_put(struct actrack_karena *ka);
void actrack_karena_store_death(struct actrack_karena *ka,
			       struct actrack_report *d);
void actrack_report_free(struct actrack_report *d);

/* clock.c */
int actrack_clock_init(void);
void actrack_clock_exit(void);
int actrack_clock_mmap(struct vm_area_struct *vma);

/* device.c */
int actrack_device_init(void);
void actrack_device_exit(void);

/* exit_hook.c */
int actrack_exit_hook_init(void);
void actrack_exit_hook_exit(void);
int actrack_proc_attach(struct actrack_karena *ka, struct actrack_attach *at);
int actrack_proc_register_thread(struct actrack_karena *ka, u32 tracker);
void actrack_proc_put(struct actrack_kproc *p);
void actrack_proc_exec_done(struct actrack_kproc *p);

bool actrack_proc_group_ending(struct actrack_kproc *p);
struct actrack_kproc *actrack_proc_find_attached(const void *key);
int actrack_procs_hashed(void);
long actrack_attached_count(void);

/* capture.c */
u64 actrack_capture_new_id(void);
void actrack_capture_pool_ensure(struct actrack_karena *ka);
void actrack_capture_pool_free(struct actrack_karena *ka);
struct kernel_siginfo;
struct k_sigaction;
struct signal_struct;
struct task_struct;
void actrack_capture_probe(void *data, int sig, struct kernel_siginfo *info,
			   struct k_sigaction *act);
struct actrack_report_stacks *actrack_capture_take(struct actrack_kproc *p,
						  u32 *flags);
void actrack_capture_drop(struct actrack_kproc *p);
void actrack_capture_stacks_free(struct actrack_report_stacks *ds);
int actrack_capture_policy(struct actrack_karena *ka,
			   const struct actrack_stacks *st);
int actrack_yama_scope(void);
bool actrack_signal_is_fatal(struct signal_struct *signal, int sig,
			     const struct k_sigaction *act);
bool actrack_stacks_may_read(const struct actrack_report_stacks *ds,
			     int scope, const struct actrack_stack_reader *r);

/* cgroup.c */
struct cgroup_namespace;
void actrack_cgroup_capture(struct actrack_kproc *p);
void actrack_cgroup_take(struct actrack_kproc *p, struct actrack_report *d);
void actrack_cgroup_put(struct cgroup **cgrp);
int actrack_cgroup_path(struct cgroup *cgrp, struct cgroup_namespace *ns,
			char *buf, size_t len);

/* oom.c */
void actrack_oom_init(void);
void actrack_oom_exit(void);
void actrack_oom_take(struct actrack_kproc *p, struct actrack_report *d);
void actrack_oom_drop(struct actrack_kproc *p);
void actrack_oom_put(struct actrack_oom *o);

/* killer.c */
void actrack_killer_probe(void *data, int sig, struct kernel_siginfo *info,
			  struct task_struct *task, int group, int result);
void actrack_killer_take(struct actrack_kproc *p, struct actrack_report *d);
void actrack_killer_drop(struct actrack_kproc *p);
void actrack_killer_put(struct actrack_killer *k);

/* cleanup.c */
int actrack_cleanup_init(void);
void actrack_cleanup_exit(void);
void actrack_cleanup_queue_locked(struct actrack_kproc *p, bool urgent);
struct task_struct;
void actrack_cleanup_thread_exit_locked(struct actrack_kproc *p,
					struct task_struct *task);
void actrack_karena_work(struct work_struct *work);

/* persist.c */
int actrack_persist_init(const uuid_t *boot_id);
void actrack_persist_exit(void);
bool actrack_persist_enabled(void);
bool actrack_persist_prev_readable(kuid_t uid);
int actrack_persist_slot_get(kuid_t uid, u32 size, void **mem);
void actrack_persist_slot_put(int slot);
int actrack_persist_remap(struct vm_area_struct *vma, void *mem);
int actrack_persist_prev_find(kuid_t uid, void **mem, u32 *size);
int actrack_persist_prev_uids(u32 *out, u32 room);

/* netlink.c */
int actrack_netlink_init(void);
void actrack_netlink_exit(void);
void actrack_netlink_report(struct actrack_karena *ka,
			    const struct actrack_report *d);

#endif /* ACTRACK_KMOD_H */
