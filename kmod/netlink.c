// SPDX-License-Identifier: GPL-2.0
/*
 * The "actrack" generic netlink family: death reports, recent deaths and
 * counters.
 *
 * Death reports name other users' command lines and what their threads
 * were doing, so they are not multicast: a genetlink multicast group
 * can be guarded by a capability only, and 6.1 has no per-listener
 * filter.  Each report
 * is unicast to every subscribed socket whose owner may see it: the same
 * uid as the dead process, or a subscriber that asked for all uids and was
 * privileged (CAP_SYS_PTRACE or CAP_SYS_ADMIN) in its user namespace when
 * it subscribed; it then sees the uids mapped into that namespace.
 * Sends never block: a full socket loses the report (counted).
 *
 * Identity is the socket's: every request acts as the credentials its
 * socket was opened with, and a request written by anyone else (a
 * privileged program writing into an inherited socket, the class that
 * netlink_capable() exists for) is refused with -EPERM.  Network
 * namespaces do not filter; pid namespaces do: a subscriber (or dumper)
 * sees a death only if the dead process is visible in its pid namespace,
 * with ACTRACK_A_PID translated into that namespace.  That namespace is
 * the request writer's (the kernel keeps none for a socket's opener; the
 * writer has the opener's uid and user namespace).  Thread ids, records
 * and start_ticks stay as the dead process saw them (ACTRACK_A_PID_NS
 * names its namespace).
 *
 * Every message renders a struct actrack_report from kernel memory; uids
 * as the reader's user namespace sees them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/user_namespace.h>
#include <linux/notifier.h>
#include <linux/netlink.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <linux/pid_namespace.h>
#include <linux/jiffies.h>
#include <linux/sort.h>
#include <linux/cgroup.h>
#include <linux/nsproxy.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include "internal.h"

/*
 * A subscription belongs to its socket (@sk, referenced), not to its
 * portid: a portid freed by close() can be bound by another user's socket
 * before NETLINK_URELEASE reaches us, and must not inherit the reports.
 */
struct actrack_sub {
	struct list_head node;
	struct net *net;			/* reference */
	struct sock *sk;			/* reference */
	u32 portid;
	kuid_t uid;
	struct actrack_budget budget;		/* who pays for it */
	struct user_namespace *user_ns;		/* reference */
	struct pid_namespace *pid_ns;		/* reference */
	struct cgroup_namespace *cgroup_ns;	/* reference */
	bool all_uids;
	/* For stacks at death (actrack_stacks_may_read()): */
	struct pid *tgid;			/* reference: the subscriber */
	bool ptrace;				/* CAP_SYS_PTRACE in @user_ns */
	/* Held by the list and by each report being sent to it. */
	refcount_t ref;
};

static LIST_HEAD(actrack_subs);
static DEFINE_MUTEX(actrack_subs_mutex);

/* Who sent a request: the opener of its socket, if that is also who
 * wrote it.
 */
struct actrack_nl_id {
	kuid_t uid;
	struct user_namespace *user_ns;
	struct pid_namespace *pid_ns;
	struct cgroup_namespace *cgroup_ns;	/* the writer's, as pid_ns */
	const struct cred *cred;	/* the opener's, for the request */
};

static int actrack_nl_identity(const struct sk_buff *skb,
			       struct actrack_nl_id *id)
{
	struct sock *sk = NETLINK_CB(skb).sk;
	const struct cred *opener;

	/* The sender is inside sendmsg() on this socket: its file lives. */
	if (!sk || !sk->sk_socket || !sk->sk_socket->file)
		return -EPERM;
	opener = sk->sk_socket->file->f_cred;
	if (!uid_eq(opener->euid, current_euid()) ||
	    opener->user_ns != current_user_ns())
		return -EPERM;
	id->uid = opener->euid;
	id->user_ns = opener->user_ns;
	/* The kernel keeps no pid namespace for a socket's opener: this
	 * is the writer's, who has the opener's uid and user namespace.
	 */
	id->pid_ns = task_active_pid_ns(current);
	id->cgroup_ns = current->nsproxy->cgroup_ns;
	id->cred = opener;
	return 0;
}

static struct genl_family actrack_genl_family;

/* The whole message format, for policy dumps and validation. */
static const struct nla_policy actrack_thread_policy[ACTRACK_T_MAX + 1] = {
	[ACTRACK_T_TID]		= { .type = NLA_U32 },
	[ACTRACK_T_NAME]	= { .type = NLA_NUL_STRING, .len = 31 },
	[ACTRACK_T_DEPTH]	= { .type = NLA_U32 },
	[ACTRACK_T_FATAL_SIGNO]	= { .type = NLA_U32 },
	[ACTRACK_T_FATAL_CODE]	= { .type = NLA_U32 },
	[ACTRACK_T_FATAL_ADDR]	= { .type = NLA_U64 },
	[ACTRACK_T_FATAL_PC]	= { .type = NLA_U64 },
	[ACTRACK_T_ACTIVITY]	= NLA_POLICY_EXACT_LEN(sizeof(struct actrack_activity)),
	[ACTRACK_T_TORN]	= { .type = NLA_FLAG },
	[ACTRACK_T_USER_DATA]	= { .type = NLA_BINARY,
				    .len = sizeof(u32) +
					   ACTRACK_DEATH_ACT_DATA_MAX },
};

static const struct nla_policy actrack_stack_policy[ACTRACK_K_MAX + 1] = {
	[ACTRACK_K_TID]		= { .type = NLA_U32 },
	[ACTRACK_K_FLAGS]	= { .type = NLA_U32 },
	[ACTRACK_K_SP]		= { .type = NLA_U64 },
	[ACTRACK_K_REGS]	= NLA_POLICY_EXACT_LEN(8 * ACTRACK_STACK_NR_REGS),
	[ACTRACK_K_BYTES]	= { .type = NLA_BINARY,
				    .len = ACTRACK_STACK_BYTES_LIMIT },
};

static const struct nla_policy actrack_stats_policy[ACTRACK_S_MAX + 1] = {
	[ACTRACK_S_ARENAS]		= { .type = NLA_U64 },
	[ACTRACK_S_BYTES_USED]		= { .type = NLA_U64 },
	[ACTRACK_S_ARENA_SIZE]		= { .type = NLA_U64 },
	[ACTRACK_S_ATTACHED]		= { .type = NLA_U64 },
	[ACTRACK_S_CLEANUPS]		= { .type = NLA_U64 },
	[ACTRACK_S_RECORDS_FREED]	= { .type = NLA_U64 },
	[ACTRACK_S_CORRUPTION]		= { .type = NLA_U64 },
	[ACTRACK_S_REPORTS_SENT]	= { .type = NLA_U64 },
	[ACTRACK_S_REPORTS_DROPPED]	= { .type = NLA_U64 },
	[ACTRACK_S_BYTES_FREE]		= { .type = NLA_U64 },
};

static const struct nla_policy actrack_killer_policy[ACTRACK_KL_MAX + 1] = {
	[ACTRACK_KL_KIND]	= NLA_POLICY_RANGE(NLA_U32, ACTRACK_KILLER_PROCESS,
						   ACTRACK_KILLER_KERNEL),
	[ACTRACK_KL_SIGNAL]	= { .type = NLA_U32 },
	[ACTRACK_KL_CODE]	= { .type = NLA_U32 },
	[ACTRACK_KL_PID]	= { .type = NLA_U32 },
	[ACTRACK_KL_UID]	= { .type = NLA_U32 },
	[ACTRACK_KL_COMM]	= { .type = NLA_NUL_STRING, .len = 15 },
	[ACTRACK_KL_EXE]	= { .type = NLA_NUL_STRING,
				    .len = ACTRACK_EXE_MAX - 1 },
	[ACTRACK_KL_CGROUP]	= { .type = NLA_NUL_STRING,
				    .len = ACTRACK_CGROUP_MAX - 1 },
};

static const struct nla_policy actrack_oom_policy[ACTRACK_OOM_MAX + 1] = {
	[ACTRACK_OOM_ANON]		= { .type = NLA_U64 },
	[ACTRACK_OOM_FILE]		= { .type = NLA_U64 },
	[ACTRACK_OOM_SHMEM]		= { .type = NLA_U64 },
	[ACTRACK_OOM_SCORE_ADJ]		= { .type = NLA_U32 },
	[ACTRACK_OOM_MEMCG]		= { .type = NLA_NUL_STRING,
					    .len = ACTRACK_CGROUP_MAX - 1 },
	[ACTRACK_OOM_MEMCG_LIMIT]	= { .type = NLA_U64 },
	[ACTRACK_OOM_MEMCG_USAGE]	= { .type = NLA_U64 },
};

static const struct nla_policy actrack_policy[ACTRACK_A_MAX + 1] = {
	[ACTRACK_A_PID]		= { .type = NLA_U32 },
	[ACTRACK_A_START_TICKS]	= { .type = NLA_U64 },
	[ACTRACK_A_UID]		= { .type = NLA_U32 },
	[ACTRACK_A_WAIT_STATUS]	= { .type = NLA_U32 },
	[ACTRACK_A_EXIT_CODE]	= { .type = NLA_U32 },
	[ACTRACK_A_SIGNAL]	= { .type = NLA_U32 },
	[ACTRACK_A_CORE_DUMPED]	= { .type = NLA_FLAG },
	[ACTRACK_A_EXIT_TIME_NS] = { .type = NLA_U64 },
	[ACTRACK_A_PHASE]	= NLA_POLICY_MAX(NLA_U32, ACTRACK_PHASE_MAX),
	[ACTRACK_A_CMDLINE]	= { .type = NLA_BINARY, .len = ACTRACK_CMDLINE_MAX },
	[ACTRACK_A_THREAD]	= NLA_POLICY_NESTED(actrack_thread_policy),
	[ACTRACK_A_SEQ]		= { .type = NLA_U64 },
	[ACTRACK_A_FLAGS]	= { .type = NLA_U32 },
	[ACTRACK_A_STATS]	= NLA_POLICY_NESTED(actrack_stats_policy),
	[ACTRACK_A_ALL_UIDS]	= { .type = NLA_FLAG },
	[ACTRACK_A_MODULE]	= NLA_POLICY_EXACT_LEN(sizeof(struct actrack_module)),
	[ACTRACK_A_PROCESS_DATA] = { .type = NLA_BINARY,
				     .len = ACTRACK_DEATH_PROCESS_DATA_MAX },
	[ACTRACK_A_PID_NS]	= { .type = NLA_U32 },
	[ACTRACK_A_STACK]	= NLA_POLICY_NESTED(actrack_stack_policy),
	[ACTRACK_A_KILLER]	= NLA_POLICY_NESTED(actrack_killer_policy),
	[ACTRACK_A_CGROUP]	= { .type = NLA_NUL_STRING,
				    .len = ACTRACK_CGROUP_MAX - 1 },
	[ACTRACK_A_OOM]		= NLA_POLICY_NESTED(actrack_oom_policy),
};

/* Requests: SUBSCRIBE and GET_DEATHS take ALL_UIDS, nothing else does.
 * Strict validation rejects any attribute left NLA_UNSPEC here.
 */
static const struct nla_policy actrack_req_policy[ACTRACK_A_MAX + 1] = {
	[ACTRACK_A_ALL_UIDS]	= { .type = NLA_FLAG },
};

static const struct nla_policy actrack_none_policy[ACTRACK_A_MAX + 1] = {
};

/*
 * Privileged for ALL_UIDS: like GENL_UNS_ADMIN_PERM, both the socket's
 * opener and the sender must hold the capability, here in the sender's
 * own user namespace (the uids it will see are the ones mapped there).
 */
static bool actrack_nl_privileged(const struct sk_buff *skb)
{
	struct user_namespace *ns = current_user_ns();

	return netlink_ns_capable(skb, ns, CAP_SYS_PTRACE) ||
	       netlink_ns_capable(skb, ns, CAP_SYS_ADMIN);
}

static bool actrack_may_see(kuid_t reader, struct user_namespace *ns,
			    bool all_uids, kuid_t uid)
{
	if (uid_eq(reader, uid))
		return true;
	return all_uids && kuid_has_mapping(ns, uid);
}

static void actrack_sub_put(struct actrack_sub *s)
{
	if (!refcount_dec_and_test(&s->ref))
		return;
	actrack_budget_put(&s->budget);
	put_pid(s->tgid);
	put_pid_ns(s->pid_ns);
	put_cgroup_ns(s->cgroup_ns);
	put_user_ns(s->user_ns);
	if (s->sk)		/* NULL: refused before it was listed */
		sock_put(s->sk);
	if (s->net)
		put_net(s->net);
	kfree(s);
}

/* Closed: only URELEASE and report delivery still find it. */
static bool actrack_sub_dead(const struct actrack_sub *s)
{
	return sock_flag(s->sk, SOCK_DEAD);
}

/* ---------------------------------------------------------------------- */
/* Rendering a death report                                                */
/* ---------------------------------------------------------------------- */

static size_t actrack_thread_msg_size(void)
{
	return nla_total_size(0) +		/* the nest */
	       nla_total_size(4) * 4 +		/* tid, depth, signo, code */
	       nla_total_size(32) +		/* name */
	       nla_total_size_64bit(8) * 2 +	/* fatal addr, pc */
	       nla_total_size(0);		/* torn */
}

/* The user data attributes of a report (bounded by ACTRACK_DEATH_MAX_*). */
static size_t actrack_data_msg_size(const struct actrack_report *d)
{
	size_t size = 0;
	u32 i;

	if (d->proc_data_len)
		size += nla_total_size(d->proc_data_len);
	for (i = 0; i < d->nr_acts; i++)
		if (d->act_data[i].len)
			size += nla_total_size(sizeof(u32) +
					       d->act_data[i].len);
	return size;
}

/* The ACTRACK_A_STACK attributes of a report. */
static size_t actrack_stacks_msg_size(const struct actrack_report *d)
{
	size_t size = 0;
	u32 i;

	for (i = 0; d->stacks && i < d->stacks->nr; i++)
		size += nla_total_size(0) +		/* the nest */
			nla_total_size(4) * 2 +		/* tid, flags */
			nla_total_size_64bit(8) +	/* sp */
			nla_total_size(8 * ACTRACK_STACK_NR_REGS) +
			nla_total_size(d->stacks->stacks[i].len);
	return size;
}

static size_t actrack_report_msg_size(const struct actrack_report *d)
{
	return actrack_data_msg_size(d) + actrack_stacks_msg_size(d) +
	       nla_total_size(4) * 7 +		/* pid uid status code/sig
						 * phase flags pid_ns
						 */
	       nla_total_size(0) +		/* core dumped */
	       nla_total_size(0) + nla_total_size(4) * 5 +	/* killer */
	       nla_total_size(sizeof(d->killer.comm)) +
	       (d->killer.exe ? nla_total_size(ACTRACK_EXE_MAX) : 0) +
	       (d->killer.cgroup ? nla_total_size(ACTRACK_CGROUP_MAX) : 0) +
	       (d->cgroup ? nla_total_size(ACTRACK_CGROUP_MAX) : 0) +
	       (d->oom.set ? nla_total_size(0) + nla_total_size(4) +
			     nla_total_size_64bit(8) * 5 +
			     nla_total_size(ACTRACK_CGROUP_MAX) : 0) +
	       nla_total_size_64bit(8) * 3 +	/* start, exit time, seq */
	       nla_total_size(d->cmdline_len) +
	       d->nr_threads * actrack_thread_msg_size() +
	       d->nr_acts * nla_total_size(sizeof(struct actrack_activity)) +
	       d->nr_modules * nla_total_size(sizeof(struct actrack_module));
}

/* One activity's user data: its index in the thread, then its records. */
static int actrack_put_act_data(struct sk_buff *skb,
				const struct actrack_report *d, u32 act, u32 idx)
{
	const struct actrack_report_data *dd = &d->act_data[act];
	struct nlattr *attr;

	attr = nla_reserve(skb, ACTRACK_T_USER_DATA, sizeof(u32) + dd->len);
	if (!attr)
		return -EMSGSIZE;
	memcpy(nla_data(attr), &idx, sizeof(idx));
	memcpy(nla_data(attr) + sizeof(idx), d->data + dd->off, dd->len);
	return 0;
}

/*
 * One ACTRACK_A_THREAD with its first @max_acts activities, and their user
 * data if @with_data.
 */
static int actrack_put_thread(struct sk_buff *skb, const struct actrack_report *d,
			      const struct actrack_report_thread *t,
			      u32 max_acts, bool with_data)
{
	u32 i, n = min(t->nr_acts, max_acts);
	struct nlattr *nest;

	nest = nla_nest_start(skb, ACTRACK_A_THREAD);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, ACTRACK_T_TID, t->tid))
		goto cancel;
	if (t->torn) {
		/* Nothing of it was stable: only who it was. */
		if (nla_put_flag(skb, ACTRACK_T_TORN))
			goto cancel;
		goto end;
	}
	if (nla_put_string(skb, ACTRACK_T_NAME, t->name) ||
	    nla_put_u32(skb, ACTRACK_T_DEPTH, t->depth) ||
	    nla_put_u32(skb, ACTRACK_T_FATAL_SIGNO, (u32)t->fatal_signo) ||
	    nla_put_u32(skb, ACTRACK_T_FATAL_CODE, (u32)t->fatal_code) ||
	    nla_put_u64_64bit(skb, ACTRACK_T_FATAL_ADDR, t->fatal_addr,
			      ACTRACK_T_PAD) ||
	    nla_put_u64_64bit(skb, ACTRACK_T_FATAL_PC, t->fatal_pc,
			      ACTRACK_T_PAD))
		goto cancel;
	/* Slot 0 is the first push: outermost first. */
	for (i = 0; i < n; i++)
		if (nla_put(skb, ACTRACK_T_ACTIVITY,
			    sizeof(struct actrack_activity),
			    &d->acts[t->first_act + i]))
			goto cancel;
	for (i = 0; with_data && i < n; i++)
		if (d->act_data[t->first_act + i].len &&
		    actrack_put_act_data(skb, d, t->first_act + i, i))
			goto cancel;
end:
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/* One ACTRACK_A_STACK. */
static int actrack_put_stack(struct sk_buff *skb, const struct actrack_report *d,
			     const struct actrack_report_stack *st)
{
	struct nlattr *nest;

	nest = nla_nest_start(skb, ACTRACK_A_STACK);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, ACTRACK_K_TID, st->tid) ||
	    nla_put_u32(skb, ACTRACK_K_FLAGS, st->flags) ||
	    nla_put_u64_64bit(skb, ACTRACK_K_SP, st->sp, ACTRACK_K_PAD) ||
	    nla_put(skb, ACTRACK_K_REGS, sizeof(st->regs), st->regs) ||
	    nla_put(skb, ACTRACK_K_BYTES, st->len,
		    d->stacks->data + st->off)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* The sender of the fatal signal in the pid namespace @pid_ns, or 0. */
static u32 actrack_killer_pid(const struct actrack_report *d,
			      struct pid_namespace *pid_ns)
{
	return d->killer.tgid ? pid_nr_ns(d->killer.tgid, pid_ns) : 0;
}

/*
 * @type, nested, filled by @fill from @arg; on failure nothing of it is
 * left in @skb.
 */
static int actrack_put_nested(struct sk_buff *skb, int type,
			      int (*fill)(struct sk_buff *, const void *),
			      const void *arg)
{
	struct nlattr *nest = nla_nest_start(skb, type);
	int ret;

	if (!nest)
		return -EMSGSIZE;
	ret = fill(skb, arg);
	if (ret) {
		nla_nest_cancel(skb, nest);
		return ret;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * @cgrp's path as the cgroup namespace @ns shows it, as attribute @type;
 * none when it is not known, too long, or there is no memory to render
 * it.
 */
static int actrack_put_cgroup(struct sk_buff *skb, int type,
			      struct cgroup *cgrp, struct cgroup_namespace *ns)
{
	char *buf;
	int n;

	if (!cgrp)
		return 0;
	buf = kmalloc(ACTRACK_CGROUP_MAX, GFP_KERNEL);
	if (!buf)
		return 0;
	n = actrack_cgroup_path(cgrp, ns, buf, ACTRACK_CGROUP_MAX);
	if (n >= 0)
		n = nla_put_string(skb, type, buf);
	else
		n = 0;
	kfree(buf);
	return n;
}

/*
 * @file's path as attribute @type, as /proc/PID/exe's link reads to the
 * caller (d_path(): from its root, " (deleted)" when unlinked); none when
 * too long or there is no memory to render it.
 */
static int actrack_put_file_path(struct sk_buff *skb, int type,
				 struct file *file)
{
	char *buf, *path;
	int ret = 0;

	if (!file)
		return 0;
	buf = kmalloc(ACTRACK_EXE_MAX, GFP_KERNEL);
	if (!buf)
		return 0;
	path = d_path(&file->f_path, buf, ACTRACK_EXE_MAX);
	if (!IS_ERR(path))
		ret = nla_put_string(skb, type, path);
	kfree(buf);
	return ret;
}

/*
 * May a reader of @euid see the sender's executable, as it may readlink
 * /proc/PID/exe: the sender's own euid, or CAP_SYS_PTRACE (@ptrace in
 * @ns) in the initial user namespace.
 */
static bool actrack_killer_exe_ok(const struct actrack_report *d,
				  kuid_t euid, struct user_namespace *ns,
				  bool ptrace)
{
	return uid_eq(d->killer.euid, euid) ||
	       (ptrace && ns == &init_user_ns);
}

/* A sender as one reader sees it. */
struct actrack_killer_view {
	const struct actrack_killer *k;
	u32 pid;			/* 0: not in its pid namespace */
	struct user_namespace *user_ns;
	struct cgroup_namespace *cgroup_ns;
	bool exe;			/* may it see the executable */
};

/*
 * ACTRACK_A_KILLER's attributes for a reader that sees the sender as
 * @v->pid (0: not in its pid namespace, then nothing else of it either),
 * its uid in @v->user_ns and its cgroup in @v->cgroup_ns.
 */
static int actrack_fill_killer(struct sk_buff *skb, const void *arg)
{
	const struct actrack_killer_view *v = arg;
	const struct actrack_killer *k = v->k;

	if (nla_put_u32(skb, ACTRACK_KL_KIND, k->kind) ||
	    nla_put_u32(skb, ACTRACK_KL_SIGNAL, k->sig) ||
	    nla_put_u32(skb, ACTRACK_KL_CODE, (u32)k->code))
		return -EMSGSIZE;
	if (k->kind == ACTRACK_KILLER_KERNEL)
		return 0;
	if (nla_put_u32(skb, ACTRACK_KL_PID, v->pid))
		return -EMSGSIZE;
	if (!v->pid)
		return 0;
	if (nla_put_u32(skb, ACTRACK_KL_UID,
			from_kuid_munged(v->user_ns, k->euid)) ||
	    nla_put_string(skb, ACTRACK_KL_COMM, k->comm) ||
	    (v->exe && actrack_put_file_path(skb, ACTRACK_KL_EXE, k->exe)) ||
	    actrack_put_cgroup(skb, ACTRACK_KL_CGROUP, k->cgroup,
			       v->cgroup_ns))
		return -EMSGSIZE;
	return 0;
}

static int actrack_put_killer(struct sk_buff *skb,
			      const struct actrack_killer_view *v)
{
	if (!v->k->kind)
		return 0;
	return actrack_put_nested(skb, ACTRACK_A_KILLER, actrack_fill_killer,
				  v);
}

/* The OOM kill as one reader sees it. */
struct actrack_oom_view {
	const struct actrack_oom *o;
	struct cgroup_namespace *cgroup_ns;
};

/* ACTRACK_A_OOM's attributes, its memory cgroup as @v->cgroup_ns shows
 * it.
 */
static int actrack_fill_oom(struct sk_buff *skb, const void *arg)
{
	const struct actrack_oom_view *v = arg;
	const struct actrack_oom *o = v->o;

	if (nla_put_u64_64bit(skb, ACTRACK_OOM_ANON, o->anon,
			      ACTRACK_OOM_PAD) ||
	    nla_put_u64_64bit(skb, ACTRACK_OOM_FILE, o->file,
			      ACTRACK_OOM_PAD) ||
	    nla_put_u64_64bit(skb, ACTRACK_OOM_SHMEM, o->shmem,
			      ACTRACK_OOM_PAD) ||
	    nla_put_u32(skb, ACTRACK_OOM_SCORE_ADJ, (u32)(s32)o->score_adj))
		return -EMSGSIZE;
	if (o->memcg &&
	    (actrack_put_cgroup(skb, ACTRACK_OOM_MEMCG, o->memcg,
				v->cgroup_ns) ||
	     nla_put_u64_64bit(skb, ACTRACK_OOM_MEMCG_LIMIT, o->limit,
			       ACTRACK_OOM_PAD) ||
	     nla_put_u64_64bit(skb, ACTRACK_OOM_MEMCG_USAGE, o->usage,
			       ACTRACK_OOM_PAD)))
		return -EMSGSIZE;
	return 0;
}

static int actrack_put_oom(struct sk_buff *skb, const struct actrack_report *d,
			   struct cgroup_namespace *ns)
{
	struct actrack_oom_view v = { .o = &d->oom, .cgroup_ns = ns };

	if (!d->oom.set)
		return 0;
	return actrack_put_nested(skb, ACTRACK_A_OOM, actrack_fill_oom, &v);
}

/*
 * One ACTRACK_CMD_DEATH message.  With @may_truncate, threads that do not
 * fit are left out and ACTRACK_DEATH_TRUNCATED is set (a dump skb can be
 * smaller than a whole report); otherwise the message is all or nothing.
 * Without @stacks, its stacks are left out and ACTRACK_DEATH_STACKS_
 * WITHHELD says so.
 */
static int actrack_put_death(struct sk_buff *skb, const struct actrack_report *d,
			     u32 pid, u32 killer_pid, bool killer_exe,
			     struct user_namespace *ns,
			     struct cgroup_namespace *cgroup_ns, u32 portid,
			     u32 seq, int nlflags, bool may_truncate,
			     bool stacks)
{
	u32 status = d->wait_status, sig = status & 0x7f, flags = d->flags;
	struct actrack_killer_view kv;
	struct nlattr *flags_attr;
	void *hdr;
	u32 i;

	hdr = genlmsg_put(skb, portid, seq, &actrack_genl_family, nlflags,
			  ACTRACK_CMD_DEATH);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, ACTRACK_A_PID, pid) ||
	    nla_put_u32(skb, ACTRACK_A_PID_NS, d->pid_ns) ||
	    nla_put_u64_64bit(skb, ACTRACK_A_START_TICKS, d->start_ticks,
			      ACTRACK_A_PAD) ||
	    nla_put_u32(skb, ACTRACK_A_UID, from_kuid_munged(ns, d->uid)) ||
	    nla_put_u32(skb, ACTRACK_A_WAIT_STATUS, status) ||
	    nla_put_u64_64bit(skb, ACTRACK_A_EXIT_TIME_NS, d->exit_time_ns,
			      ACTRACK_A_PAD) ||
	    nla_put_u64_64bit(skb, ACTRACK_A_SEQ, d->seq, ACTRACK_A_PAD))
		goto cancel;
	/* Decoded as WIFEXITED / WIFSIGNALED would. */
	if (sig == 0) {
		if (nla_put_u32(skb, ACTRACK_A_EXIT_CODE, (status >> 8) & 0xff))
			goto cancel;
	} else if (sig != 0x7f) {
		if (nla_put_u32(skb, ACTRACK_A_SIGNAL, sig))
			goto cancel;
		if ((status & 0x80) && nla_put_flag(skb, ACTRACK_A_CORE_DUMPED))
			goto cancel;
	}
	if (d->has_phase && nla_put_u32(skb, ACTRACK_A_PHASE, d->phase))
		goto cancel;
	kv = (struct actrack_killer_view){
		.k = &d->killer, .pid = killer_pid, .user_ns = ns,
		.cgroup_ns = cgroup_ns, .exe = killer_exe,
	};
	if (actrack_put_killer(skb, &kv))
		goto cancel;
	if (actrack_put_cgroup(skb, ACTRACK_A_CGROUP, d->cgroup, cgroup_ns) ||
	    actrack_put_oom(skb, d, cgroup_ns))
		goto cancel;
	if (d->cmdline_len &&
	    nla_put(skb, ACTRACK_A_CMDLINE, d->cmdline_len, d->cmdline))
		goto cancel;
	/* Filled in last: truncation is only known at the end. */
	flags_attr = nla_reserve(skb, ACTRACK_A_FLAGS, sizeof(u32));
	if (!flags_attr)
		goto cancel;
	/* Before the threads: what the process said about itself.  In a
	 * small skb it may not fit (up to 4 KiB): then it is left out.
	 */
	if (d->proc_data_len &&
	    nla_put(skb, ACTRACK_A_PROCESS_DATA, d->proc_data_len,
		    d->proc_data)) {
		if (!may_truncate)
			goto cancel;
		flags |= ACTRACK_DEATH_TRUNCATED;
	}
	for (i = 0; i < d->nr_threads; i++) {
		const struct actrack_report_thread *t = &d->threads[i];
		size_t room, head = actrack_thread_msg_size();

		if (!actrack_put_thread(skb, d, t, t->nr_acts, true))
			continue;
		if (!may_truncate)
			goto cancel;
		flags |= ACTRACK_DEATH_TRUNCATED;
		/*
		 * Keep what fits of this thread: its outermost activities
		 * (a prefix, so their depth stays their index), without
		 * their user data.
		 */
		room = skb_tailroom(skb);
		if (room > head)
			actrack_put_thread(skb, d, t, (room - head) /
				nla_total_size(sizeof(struct actrack_activity)),
				false);
		goto done;
	}
	/* After the threads: if something must be cut, it is these. */
	for (i = 0; i < d->nr_modules; i++) {
		if (!nla_put(skb, ACTRACK_A_MODULE, sizeof(d->modules[i]),
			     &d->modules[i]))
			continue;
		if (!may_truncate)
			goto cancel;
		flags |= ACTRACK_DEATH_TRUNCATED;
		goto done;
	}
	if (d->stacks && d->stacks->nr && !stacks)
		flags |= ACTRACK_DEATH_STACKS_WITHHELD;
	/* Last: the biggest and the first to go when it must be cut. */
	for (i = 0; stacks && d->stacks && i < d->stacks->nr; i++) {
		if (!actrack_put_stack(skb, d, &d->stacks->stacks[i]))
			continue;
		if (!may_truncate)
			goto cancel;
		flags |= ACTRACK_DEATH_TRUNCATED;
		break;
	}
done:
	*(u32 *)nla_data(flags_attr) = flags;
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/*
 * One reader of a report and what its copy says: the dead process's pid
 * in the reader's pid namespace, its uid as the reader's user namespace
 * maps it.  Readers with the same rendering share one message.
 */
struct actrack_fan {
	struct actrack_sub *sub;	/* reference */
	u32 pid;
	u32 killer_pid;			/* the sender's, in its pid namespace */
	bool killer_exe;		/* may it see the sender's exe */
	struct user_namespace *user_ns;	/* the sub's */
	struct cgroup_namespace *cgroup_ns;	/* the sub's */
	bool stacks;			/* may it read the stacks at death */
};

static int actrack_fan_cmp(const void *a, const void *b)
{
	const struct actrack_fan *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->killer_pid != y->killer_pid)
		return x->killer_pid < y->killer_pid ? -1 : 1;
	if (x->killer_exe != y->killer_exe)
		return (int)x->killer_exe - (int)y->killer_exe;
	if (x->user_ns != y->user_ns)
		return x->user_ns < y->user_ns ? -1 : 1;
	if (x->cgroup_ns != y->cgroup_ns)
		return x->cgroup_ns < y->cgroup_ns ? -1 : 1;
	return (int)x->stacks - (int)y->stacks;
}

static bool actrack_fan_same(const struct actrack_fan *x,
			     const struct actrack_fan *y)
{
	return !actrack_fan_cmp(x, y);
}

/*
 * The subscribers that may see @d, the first @max of them into @fan with
 * a reference each.  Return: how many there are.
 */
static unsigned int actrack_fan_collect(const struct actrack_report *d,
					int scope, struct actrack_fan *fan,
					unsigned int max)
{
	struct actrack_stack_reader r;
	struct actrack_sub *s;
	unsigned int n = 0;
	u32 pid;

	mutex_lock(&actrack_subs_mutex);
	list_for_each_entry(s, &actrack_subs, node) {
		if (!actrack_may_see(s->uid, s->user_ns, s->all_uids, d->uid))
			continue;
		/* Not in its pid namespace: not its business. */
		pid = pid_nr_ns(d->tgid, s->pid_ns);
		if (!pid || actrack_sub_dead(s))
			continue;
		if (n < max) {
			refcount_inc(&s->ref);
			fan[n].sub = s;
			fan[n].pid = pid;
			fan[n].killer_pid = actrack_killer_pid(d, s->pid_ns);
			fan[n].killer_exe = actrack_killer_exe_ok(d, s->uid,
						s->user_ns, s->ptrace);
			fan[n].user_ns = s->user_ns;
			fan[n].cgroup_ns = s->cgroup_ns;
			r = (struct actrack_stack_reader){
				.tgid = s->tgid, .user_ns = s->user_ns,
				.euid = s->uid, .ptrace = s->ptrace,
			};
			fan[n].stacks = !d->stacks ||
				actrack_stacks_may_read(d->stacks, scope, &r);
		}
		n++;
	}
	mutex_unlock(&actrack_subs_mutex);
	return n;
}

/*
 * One message for the readers that render @d as @f does.  A big report
 * needs a high-order allocation; rather than lose it, fall back to a
 * page-sized, truncated one.  Return: the message or NULL.
 */
static struct sk_buff *actrack_fan_build(const struct actrack_report *d,
					 const struct actrack_fan *f)
{
	struct sk_buff *skb;
	bool trunc = false;

	skb = genlmsg_new(actrack_report_msg_size(d), GFP_KERNEL |
			  __GFP_NOWARN);
	if (!skb) {
		trunc = true;
		skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	}
	if (!skb)
		return NULL;
	if (actrack_put_death(skb, d, f->pid, f->killer_pid, f->killer_exe,
			      f->user_ns,
			      f->cgroup_ns, 0, 0, 0, trunc,
			      f->stacks)) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

/*
 * Send @skb (consumed) to its subscriber.  The check for a closed socket
 * is the last thing before the send: a portid freed by close() and bound
 * again by another socket is taken only in the few instructions between
 * the two, not during the allocation and the rendering.
 */
static void actrack_fan_send(struct actrack_karena *ka, struct sk_buff *skb,
			     const struct actrack_sub *s)
{
	if (!skb || actrack_sub_dead(s)) {
		kfree_skb(skb);
		atomic64_inc(&ka->stats.reports_dropped);
		return;
	}
	if (genlmsg_unicast(s->net, skb, s->portid))
		atomic64_inc(&ka->stats.reports_dropped);
	else
		atomic64_inc(&ka->stats.reports_sent);
}

/*
 * Context: the cleanup work (process context, may sleep).  The list of
 * subscribers is copied under its mutex (which every NETLINK_GENERIC
 * close() in the system takes, in URELEASE); messages are built and sent
 * outside it, one per distinct rendering, cloned for each reader.
 */
void actrack_netlink_report(struct actrack_karena *ka,
			    const struct actrack_report *d)
{
	int scope = d->stacks ? actrack_yama_scope() : 0;
	struct actrack_fan *fan;
	struct sk_buff *skb;
	unsigned int n, i, j;

	n = actrack_fan_collect(d, scope, NULL, 0);
	if (!n)
		return;
	/* Room for some who subscribe meanwhile (they come last). */
	fan = kvmalloc_array(n + 8, sizeof(*fan), GFP_KERNEL);
	if (!fan) {
		atomic64_add(n, &ka->stats.reports_dropped);
		return;
	}
	n = min(actrack_fan_collect(d, scope, fan, n + 8), n + 8);
	sort(fan, n, sizeof(*fan), actrack_fan_cmp, NULL);
	for (i = 0; i < n; i = j) {
		skb = actrack_fan_build(d, &fan[i]);
		for (j = i + 1; j < n && actrack_fan_same(&fan[i], &fan[j]);
		     j++)
			actrack_fan_send(ka, skb ? skb_clone(skb, GFP_KERNEL) :
					 NULL, fan[j].sub);
		actrack_fan_send(ka, skb, fan[i].sub);
	}
	for (i = 0; i < n; i++)
		actrack_sub_put(fan[i].sub);
	kvfree(fan);
}

/* ---------------------------------------------------------------------- */
/* Subscriptions                                                           */
/* ---------------------------------------------------------------------- */

static struct actrack_sub *actrack_sub_find(const struct sock *sk)
{
	struct actrack_sub *s;

	list_for_each_entry(s, &actrack_subs, node)
		if (s->sk == sk)
			return s;
	return NULL;
}

static int actrack_nl_subscribe(struct sk_buff *skb, struct genl_info *info)
{
	bool all = info->attrs[ACTRACK_A_ALL_UIDS];
	struct sock *sk = NETLINK_CB(skb).sk;
	struct actrack_sub *s, *it;
	struct actrack_nl_id id;
	unsigned int same = 0;
	int ret;

	ret = actrack_nl_identity(skb, &id);
	if (ret)
		return ret;
	if (all && !actrack_nl_privileged(skb))
		return -EPERM;
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	s->uid = id.uid;
	actrack_budget_get(id.cred, &s->budget);
	s->all_uids = all;
	refcount_set(&s->ref, 1);
	s->user_ns = get_user_ns(id.user_ns);
	s->pid_ns = get_pid_ns(id.pid_ns);
	get_cgroup_ns(id.cgroup_ns);
	s->cgroup_ns = id.cgroup_ns;
	s->tgid = get_pid(task_tgid(current));
	s->ptrace = netlink_ns_capable(skb, id.user_ns, CAP_SYS_PTRACE);

	mutex_lock(&actrack_subs_mutex);
	it = actrack_sub_find(sk);
	if (it) {
		/* Subscribing again updates the subscription in place. */
		swap(it->user_ns, s->user_ns);
		swap(it->pid_ns, s->pid_ns);
		swap(it->tgid, s->tgid);
		swap(it->budget, s->budget);
		it->uid = s->uid;
		it->all_uids = all;
		it->ptrace = s->ptrace;
		mutex_unlock(&actrack_subs_mutex);
		actrack_sub_put(s);
		return 0;
	}
	/*
	 * Each costs a message per death: bounded per budget (arenas.c: a
	 * rootless container's uids count as its owner's, a container of
	 * host root's as itself), so that nobody crowds out the others
	 * (there is no global table to fill).
	 */
	list_for_each_entry(it, &actrack_subs, node)
		if (actrack_budget_eq(&it->budget, &s->budget))
			same++;
	if (same >= ACTRACK_MAX_SUBS_PER_BUDGET) {
		mutex_unlock(&actrack_subs_mutex);
		actrack_sub_put(s);
		return -ENOSPC;
	}
	sock_hold(sk);
	s->sk = sk;
	s->net = get_net(genl_info_net(info));
	s->portid = info->snd_portid;
	list_add_tail(&s->node, &actrack_subs);
	mutex_unlock(&actrack_subs_mutex);
	return 0;
}

static int actrack_nl_unsubscribe(struct sk_buff *skb, struct genl_info *info)
{
	struct actrack_nl_id id;
	struct actrack_sub *s;
	int ret;

	ret = actrack_nl_identity(skb, &id);
	if (ret)
		return ret;
	mutex_lock(&actrack_subs_mutex);
	s = actrack_sub_find(NETLINK_CB(skb).sk);
	if (s)
		list_del(&s->node);
	mutex_unlock(&actrack_subs_mutex);
	if (!s)
		return -ENOENT;
	actrack_sub_put(s);
	return 0;
}

/*
 * A socket that goes away takes its subscription with it.  URELEASE names
 * a portid that another socket may already have bound and subscribed
 * with: only the closed socket's subscription goes.
 */
static int actrack_nl_notify(struct notifier_block *nb, unsigned long state,
			     void *ptr)
{
	struct netlink_notify *n = ptr;
	struct actrack_sub *s, *tmp;
	LIST_HEAD(gone);

	if (state != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC)
		return NOTIFY_DONE;
	mutex_lock(&actrack_subs_mutex);
	list_for_each_entry_safe(s, tmp, &actrack_subs, node)
		if (net_eq(s->net, n->net) && s->portid == n->portid &&
		    actrack_sub_dead(s))
			list_move(&s->node, &gone);
	mutex_unlock(&actrack_subs_mutex);
	list_for_each_entry_safe(s, tmp, &gone, node)
		actrack_sub_put(s);
	return NOTIFY_DONE;
}

static struct notifier_block actrack_nl_notifier = {
	.notifier_call = actrack_nl_notify,
};

/* ---------------------------------------------------------------------- */
/* GET_DEATHS (dump) and GET_STATS                                         */
/* ---------------------------------------------------------------------- */

/* cb->args: the dump's identity is fixed at start (the sender's). */
enum {
	ACTRACK_CB_ALL,		/* 1: own uid, 2: all uids; | ACTRACK_CB_PTRACE */
	ACTRACK_CB_UID,		/* the sender's euid (kuid value) */
	ACTRACK_CB_ARENA,	/* id of the arena being dumped */
	ACTRACK_CB_SEQ,		/* last seq sent from that arena */
	ACTRACK_CB_USERNS,	/* struct user_namespace *, referenced */
	ACTRACK_CB_PIDNS,	/* struct pid_namespace *, referenced */
};
/* In cb->args[ACTRACK_CB_ALL]: the sender had CAP_SYS_PTRACE (stacks). */
#define ACTRACK_CB_PTRACE	4

static int actrack_nl_deaths_start(struct netlink_callback *cb)
{
	struct nlattr *tb[ACTRACK_A_MAX + 1];
	struct actrack_nl_id id;
	bool all;
	int err;

	err = actrack_nl_identity(cb->skb, &id);
	if (err)
		return err;
	err = nlmsg_parse(cb->nlh, GENL_HDRLEN, tb, ACTRACK_A_MAX,
			  actrack_req_policy, NULL);
	if (err)
		return err;
	all = tb[ACTRACK_A_ALL_UIDS];
	if (all && !actrack_nl_privileged(cb->skb))
		return -EPERM;
	cb->args[ACTRACK_CB_ALL] = (all ? 2 : 1) |
		(netlink_ns_capable(cb->skb, id.user_ns, CAP_SYS_PTRACE) ?
		 ACTRACK_CB_PTRACE : 0);
	cb->args[ACTRACK_CB_UID] = __kuid_val(id.uid);
	cb->args[ACTRACK_CB_ARENA] = 0;
	cb->args[ACTRACK_CB_SEQ] = 0;
	cb->args[ACTRACK_CB_USERNS] = (long)get_user_ns(id.user_ns);
	cb->args[ACTRACK_CB_PIDNS] = (long)get_pid_ns(id.pid_ns);
	/*
	 * Dump skbs are otherwise at most about 32 KiB (the reader's last
	 * recvmsg() size, capped): too small for the stacks of a report,
	 * which would all be cut.  Ask for room for the threads' stacks of
	 * one report besides its other parts, bounded.
	 */
	cb->min_dump_alloc = min_t(u32, ACTRACK_DUMP_ALLOC_MAX, SZ_32K +
				   actrack_stack_threads *
				   (actrack_stack_bytes + 256));
	return 0;
}

static int actrack_nl_deaths_done(struct netlink_callback *cb)
{
	struct user_namespace *ns = (void *)cb->args[ACTRACK_CB_USERNS];
	struct pid_namespace *pid_ns = (void *)cb->args[ACTRACK_CB_PIDNS];

	if (ns)
		put_user_ns(ns);
	if (pid_ns)
		put_pid_ns(pid_ns);
	return 0;
}

/* One GET_DEATHS dump step: the skb being filled, and for whom. */
struct actrack_dump {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	const struct actrack_stack_reader *r;
	int scope;
};

/* Return: 0 for the next death, -EMSGSIZE when the skb is full. */
static int actrack_dump_death(const struct actrack_report *d, void *arg)
{
	struct actrack_dump *dump = arg;
	struct sk_buff *skb = dump->skb;
	struct netlink_callback *cb = dump->cb;
	struct pid_namespace *pid_ns = (void *)cb->args[ACTRACK_CB_PIDNS];
	u32 pid;

	if (d->seq <= (u64)cb->args[ACTRACK_CB_SEQ])
		return 0;
	pid = pid_nr_ns(d->tgid, pid_ns);
	if (!pid) {
		cb->args[ACTRACK_CB_SEQ] = d->seq;
		return 0;	/* not in the reader's pid namespace */
	}
	/* Alone in a fresh skb a report may be cut; else retry it in the
	 * next skb.
	 */
	if (actrack_put_death(skb, d, pid, actrack_killer_pid(d, pid_ns),
			      actrack_killer_exe_ok(d, dump->r->euid,
						    dump->r->user_ns,
						    dump->r->ptrace),
			      dump->r->user_ns, current->nsproxy->cgroup_ns,
			      NETLINK_CB(cb->skb).portid,
			      cb->nlh->nlmsg_seq, NLM_F_MULTI, skb->len == 0,
			      !d->stacks ||
			      actrack_stacks_may_read(d->stacks, dump->scope,
						      dump->r)) &&
	    skb->len)
		return -EMSGSIZE;
	cb->args[ACTRACK_CB_SEQ] = d->seq;
	return 0;
}

static int actrack_nl_deaths_dump(struct sk_buff *skb,
				  struct netlink_callback *cb)
{
	struct user_namespace *ns = (void *)cb->args[ACTRACK_CB_USERNS];
	bool all = (cb->args[ACTRACK_CB_ALL] & 3) == 2;
	kuid_t uid = KUIDT_INIT((uid_t)cb->args[ACTRACK_CB_UID]);
	/* The reader is whoever reads the dump: its socket's holder. */
	struct actrack_stack_reader r = {
		.tgid = task_tgid(current), .user_ns = ns, .euid = uid,
		.ptrace = cb->args[ACTRACK_CB_ALL] & ACTRACK_CB_PTRACE,
	};
	struct actrack_dump dump = {
		.skb = skb, .cb = cb, .r = &r, .scope = actrack_yama_scope(),
	};
	struct actrack_karena *ka;
	int err = 0;

	/* Bounded: max_arenas arenas, each ring deaths_kept long. */
	while ((ka = actrack_karena_next(cb->args[ACTRACK_CB_ARENA]))) {
		/* The one being dumped went: its successor from the start. */
		if (ka->id != cb->args[ACTRACK_CB_ARENA]) {
			cb->args[ACTRACK_CB_ARENA] = ka->id;
			cb->args[ACTRACK_CB_SEQ] = 0;
		}
		if (actrack_may_see(uid, ns, all, ka->uid))
			err = actrack_karena_walk_deaths(ka, actrack_dump_death,
							 &dump);
		actrack_karena_put(ka);
		if (err)
			break;
		cb->args[ACTRACK_CB_ARENA]++;
		cb->args[ACTRACK_CB_SEQ] = 0;
	}
	return skb->len;
}

static int actrack_put_stat(struct sk_buff *skb, int type, u64 v)
{
	return nla_put_u64_64bit(skb, type, v, ACTRACK_S_PAD);
}

/*
 * Counters.  A uid is a trust domain: an unprivileged caller learns about
 * its own arena only (its counters, its attached processes); the
 * module-wide sums need CAP_SYS_PTRACE or CAP_SYS_ADMIN in the initial
 * user namespace, since they add up every uid's activity.
 */
static int actrack_nl_stats(struct sk_buff *skb, struct genl_info *info)
{
	bool global = netlink_capable(skb, CAP_SYS_PTRACE) ||
		      netlink_capable(skb, CAP_SYS_ADMIN);
	struct actrack_karena *ka;
	struct actrack_nl_id id;
	struct nlattr *nest;
	struct sk_buff *msg;
	struct actrack_counter_values sum = { 0 };
	u64 arenas, attached = 0;
	void *hdr;
	int err;

	err = actrack_nl_identity(skb, &id);
	if (err)
		return err;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &actrack_genl_family, 0,
				ACTRACK_CMD_GET_STATS);
	if (!hdr)
		goto nospace;
	nest = nla_nest_start(msg, ACTRACK_A_STATS);
	if (!nest)
		goto nospace;
	/* The caller's own arena, if it has one (never created here). */
	ka = actrack_karena_lookup(id.uid);
	if (global) {
		actrack_karena_sum_counters(&sum);
		arenas = actrack_arenas_count();
		attached = actrack_attached_count();
	} else {
		arenas = ka ? 1 : 0;
		if (ka) {
			actrack_karena_add_counters(ka, &sum);
			attached = atomic_read(&ka->attached);
		}
	}
	err = actrack_put_stat(msg, ACTRACK_S_ARENAS, arenas) ||
	      actrack_put_stat(msg, ACTRACK_S_ATTACHED, attached) ||
	      actrack_put_stat(msg, ACTRACK_S_CLEANUPS, sum.cleanups) ||
	      actrack_put_stat(msg, ACTRACK_S_RECORDS_FREED,
			       sum.records_freed) ||
	      actrack_put_stat(msg, ACTRACK_S_CORRUPTION, sum.corruption) ||
	      actrack_put_stat(msg, ACTRACK_S_REPORTS_SENT,
			       sum.reports_sent) ||
	      actrack_put_stat(msg, ACTRACK_S_REPORTS_DROPPED,
			       sum.reports_dropped);
	if (!err && ka) {
		u64 used, free;

		actrack_karena_usage(ka, &used, &free);
		err = actrack_put_stat(msg, ACTRACK_S_ARENA_SIZE, ka->size) ||
		      actrack_put_stat(msg, ACTRACK_S_BYTES_USED, used) ||
		      actrack_put_stat(msg, ACTRACK_S_BYTES_FREE, free);
	}
	if (ka)
		actrack_karena_put(ka);
	if (err)
		goto nospace;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static const struct genl_ops actrack_genl_ops[] = {
	{
		.cmd = ACTRACK_CMD_SUBSCRIBE,
		.doit = actrack_nl_subscribe,
		.policy = actrack_req_policy,
		.maxattr = ACTRACK_A_MAX,
	},
	{
		.cmd = ACTRACK_CMD_UNSUBSCRIBE,
		.doit = actrack_nl_unsubscribe,
		.policy = actrack_none_policy,
		.maxattr = ACTRACK_A_MAX,
	},
	{
		.cmd = ACTRACK_CMD_GET_DEATHS,
		.start = actrack_nl_deaths_start,
		.dumpit = actrack_nl_deaths_dump,
		.done = actrack_nl_deaths_done,
		.policy = actrack_req_policy,
		.maxattr = ACTRACK_A_MAX,
	},
	{
		.cmd = ACTRACK_CMD_GET_STATS,
		.doit = actrack_nl_stats,
		.policy = actrack_none_policy,
		.maxattr = ACTRACK_A_MAX,
	},
};

static struct genl_family actrack_genl_family = {
	.name = ACTRACK_GENL_NAME,
	.version = ACTRACK_GENL_VERSION,
	.maxattr = ACTRACK_A_MAX,
	.policy = actrack_policy,
	.netnsok = true,
	/* No genl_mutex: every handler takes only its own locks, so one
	 * user's requests never wait behind another's.
	 */
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = actrack_genl_ops,
	.n_ops = ARRAY_SIZE(actrack_genl_ops),
	/* resv_start_op stays 0: every command is strictly validated. */
};

int actrack_netlink_init(void)
{
	int ret;

	ret = genl_register_family(&actrack_genl_family);
	if (ret) {
		pr_err("cannot register genetlink family: %d\n", ret);
		return ret;
	}
	ret = netlink_register_notifier(&actrack_nl_notifier);
	if (ret) {
		genl_unregister_family(&actrack_genl_family);
		return ret;
	}
	return 0;
}

void actrack_netlink_exit(void)
{
	struct actrack_sub *s, *tmp;

	netlink_unregister_notifier(&actrack_nl_notifier);
	genl_unregister_family(&actrack_genl_family);
	mutex_lock(&actrack_subs_mutex);
	list_for_each_entry_safe(s, tmp, &actrack_subs, node) {
		list_del(&s->node);
		actrack_sub_put(s);
	}
	mutex_unlock(&actrack_subs_mutex);
}
