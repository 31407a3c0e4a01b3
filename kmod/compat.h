/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place where actrack.ko deals with kernel-version differences.
 * Supported: 5.10 (Debian bullseye) to 7.2 (sid); built and tested on
 * 5.10, 6.1 (bookworm), 6.12 (bookworm-backports) and 7.2 by
 * `make module-all` and `scripts/vmtest --kernel 5.10,6.1,6.12,7.2`.
 * Each entry says what changed and in which release.
 */
#ifndef ACTRACK_KMOD_COMPAT_H
#define ACTRACK_KMOD_COMPAT_H

#include <linux/version.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/time_namespace.h>

/* From 6.3 on vma->vm_flags is read-only and changes go through helpers
 * that also take care of the vma lock.
 */
static inline void actrack_vm_flags_clear(struct vm_area_struct *vma,
					  vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/* Has the group begun to die: exit_group(), a fatal signal, a core dump?
 * Before 5.16 a core dump set SIGNAL_GROUP_COREDUMP alone (not
 * SIGNAL_GROUP_EXIT) until the dump was written; 7.x dropped that flag.
 */
static inline bool actrack_group_exit_begun(struct signal_struct *sig)
{
	unsigned int flags = READ_ONCE(sig->flags);

#ifdef SIGNAL_GROUP_COREDUMP
	return flags & (SIGNAL_GROUP_EXIT | SIGNAL_GROUP_COREDUMP);
#else
	return flags & SIGNAL_GROUP_EXIT;
#endif
}

/* Is an exec() of this group killing its other threads?  5.17 gave exec
 * its own field, group_exec_task; before, de_thread() and a core dump's
 * zap_threads() both set group_exit_task, and only the dump also set
 * SIGNAL_GROUP_COREDUMP.
 */
static inline bool actrack_group_exec_running(struct signal_struct *sig)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 17, 0)
	return READ_ONCE(sig->group_exec_task);
#else
	return READ_ONCE(sig->group_exit_task) &&
	       !actrack_group_exit_begun(sig);
#endif
}

/* Pages that will be mapped into user space, charged to the caller's
 * memory cgroup where the kernel can map charged pages.  Until 5.11 a
 * charged page carried the PageKmemcg type, which vm_insert_page()
 * refuses (EINVAL): there they go uncharged, bounded by the budgets alone.
 */
#ifdef PG_kmemcg
#define ACTRACK_GFP_USER_PAGES	GFP_KERNEL
#else
#define ACTRACK_GFP_USER_PAGES	GFP_KERNEL_ACCOUNT
#endif

/* CLOCK_BOOTTIME nanoseconds as @current's time namespace sees them.
 * timens_add_boottime_ns() came in 5.11; the timespec64 form is in all.
 */
static inline u64 actrack_timens_add_boottime_ns(u64 ns)
{
	struct timespec64 ts = ns_to_timespec64(ns);

	timens_add_boottime(&ts);
	return timespec64_to_ns(&ts);
}

/* The sched_process_exit probe's arguments after its data pointer: 7.x
 * added group_dead (feature test in Kbuild).
 */
#ifdef ACTRACK_HAVE_EXIT_GROUP_DEAD
#define ACTRACK_PROBE_EXIT_ARGS struct task_struct *task, bool group_dead
#else
#define ACTRACK_PROBE_EXIT_ARGS struct task_struct *task
#endif

/* The oom:mark_victim probe's arguments after its data pointer: 5.10
 * passes the victim's pid (in the initial pid namespace), 6.1 on the
 * victim and its uid (feature test in Kbuild).  actrack_oom_victim()
 * gives the victim either way.  Context: the OOM killer, the victim's
 * task_lock held, or the victim is current.
 */
#ifdef ACTRACK_HAVE_MARK_VICTIM_TASK
#define ACTRACK_PROBE_MARK_VICTIM_ARGS struct task_struct *task, uid_t uid
static inline struct task_struct *actrack_oom_victim(struct task_struct *task)
{
	return task;
}
#else
#include <linux/pid_namespace.h>
#define ACTRACK_PROBE_MARK_VICTIM_ARGS int task
/* Under RCU: the victim is alive (its task_lock is held). */
static inline struct task_struct *actrack_oom_victim(int pid)
{
	return pid_task(find_pid_ns(pid, &init_pid_ns), PIDTYPE_PID);
}
#endif

/* May @current's own uid have its memory, as a core dump or ptrace would?
 * (Not if it made itself non-dumpable or changed credentials.)  7.x moved
 * dumpability from mm->flags to task->exec_state (feature test in Kbuild);
 * its getter is not exported, the field is read under RCU.
 */
#ifdef ACTRACK_HAVE_TASK_EXEC_STATE
#include <linux/sched/exec_state.h>
static inline bool actrack_current_dumpable(void)
{
	struct task_exec_state *es;
	bool ok;

	rcu_read_lock();
	es = rcu_dereference(current->exec_state);
	ok = current->mm && es &&
	     READ_ONCE(es->dumpable) == TASK_DUMPABLE_OWNER;
	rcu_read_unlock();
	return ok;
}
#else
#include <linux/sched/coredump.h>
static inline bool actrack_current_dumpable(void)
{
	return current->mm && get_dumpable(current->mm) == SUID_DUMP_USER;
}
#endif

/* How many references @ns has.  5.11 moved the count into ns_common;
 * 7.x renamed it and gave it a reader (feature test in Kbuild).
 */
#include <linux/user_namespace.h>
static inline unsigned int actrack_user_ns_refs(struct user_namespace *ns)
{
#if defined(ACTRACK_HAVE_NS_REF_READ)
	return __ns_ref_read(&ns->ns);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(5, 11, 0)
	return refcount_read(&ns->ns.count);
#else
	return atomic_read(&ns->count);
#endif
}

#include <linux/fs.h>
/* A reference to @mm's executable file, or NULL; caller in an RCU read
 * side.  Since 6.7 files are SLAB_TYPESAFE_BY_RCU and get_file_rcu()
 * takes the pointer's address, to recheck it after taking the count.
 */
static inline struct file *actrack_exe_file_get_rcu(struct mm_struct *mm)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	return get_file_rcu(&mm->exe_file);
#else
	struct file *f = rcu_dereference(mm->exe_file);

	return f && get_file_rcu(f) ? f : NULL;
#endif
}

/* A region set aside by reserve_mem=SIZE:ALIGN:LABEL, found by its label
 * (as ramoops' mem_name= does): 6.12.  Before, -EOPNOTSUPP.
 */
static inline int actrack_reserve_mem_find(const char *label,
					   phys_addr_t *start,
					   phys_addr_t *size)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	return reserve_mem_find_by_name(label, start, size) ? 0 : -ENOENT;
#else
	return -EOPNOTSUPP;
#endif
}

#endif /* ACTRACK_KMOD_COMPAT_H */
