// SPDX-License-Identifier: MIT
/*
 * The death report and the counters of actrack.ko, from their generic
 * netlink messages (ACTRACK_CMD_DEATH or a GET_DEATHS dump entry, and
 * GET_STATS): no socket here, only bytes in and structures out, so that
 * the fuzzer and the tests drive it directly.
 *
 * Trust: a report is input from outside the process.  Every attribute is
 * validated by its policy (type, exact length, range) before use; one
 * that fails makes the whole message malformed, and a partial report is
 * never returned.  Attributes of a newer kernel are skipped.  The policy
 * tables below are the whole grammar: adding an attribute is one table
 * line (and one field for it to go to).
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <libmnl/libmnl.h>

#include "internal.h"
#include "report_parse.h"

/* ---------------------------------------------------------------------- */
/* The policy walk                                                         */
/* ---------------------------------------------------------------------- */

/*
 * Like mnl_attr_for_each, but bytes left over after the last whole
 * attribute (a truncated attribute) make the set malformed instead of
 * being silently ignored.  The last attribute may lack its padding.
 */
int __actrack_rp_walk(const void *start, size_t len,
		      int (*fn)(const struct nlattr *attr, void *data),
		      void *data)
{
	const struct nlattr *attr = start;
	long rem = (long)len;
	int ret;

	while (mnl_attr_ok(attr, (int)rem)) {
		ret = fn ? fn(attr, data) : 0;
		if (ret)
			return ret;
		rem -= MNL_ALIGN(attr->nla_len);
		attr = mnl_attr_next(attr);
	}
	/* rem in (-MNL_ALIGNTO, 0]: the last attribute was unpadded. */
	if (rem > 0)
		return -EBADMSG;
	return 0;
}

struct rp_walk_ctx {
	const struct rp_policy *pol;
	uint16_t max;
	void *obj, *ctx;
	uint64_t seen;
};

static int rp_store_int(const struct rp_policy *p, const struct nlattr *attr,
			char *dst)
{
	uint64_t v = p->mnl == MNL_TYPE_U64 ? mnl_attr_get_u64(attr) :
					      mnl_attr_get_u32(attr);
	uint32_t v32 = (uint32_t)v;

	if (p->max && (v < p->min || v > p->max))
		return -EBADMSG;
	if (p->store == RP_OR) {
		uint32_t old;

		memcpy(&old, dst, sizeof(old));
		v32 |= old;
	}
	if (p->size == sizeof(uint64_t))
		memcpy(dst, &v, sizeof(v));
	else
		memcpy(dst, &v32, sizeof(v32));
	return 0;
}

static int rp_attr(const struct nlattr *attr, void *data)
{
	struct rp_walk_ctx *w = data;
	uint16_t type = mnl_attr_get_type(attr);
	const struct rp_policy *p;
	char *dst;
	size_t n;
	int ret;

	if (type > w->max || w->pol[type].store == RP_SKIP)
		return 0;	/* UNSPEC, PAD, or newer than us */
	p = &w->pol[type];
	if (!p->multi && type < 64) {
		if (w->seen & (1ULL << type))
			return -EBADMSG;
		w->seen |= 1ULL << type;
	}
	ret = p->len ? mnl_attr_validate2(attr, p->mnl, p->len) :
		       mnl_attr_validate(attr, p->mnl);
	if (ret < 0)
		return -EBADMSG;
	dst = (char *)(p->ctx ? w->ctx : w->obj) + p->off;
	switch (p->store) {
	case RP_INT:
	case RP_OR:
		return rp_store_int(p, attr, dst);
	case RP_TRUE:
		*(bool *)dst = true;
		return 0;
	case RP_STRING:
		n = strnlen(mnl_attr_get_payload(attr),
			    mnl_attr_get_payload_len(attr));
		if (n >= p->size)
			n = p->size - 1U;
		memcpy(dst, mnl_attr_get_payload(attr), n);
		dst[n] = '\0';
		return 0;
	case RP_BYTES:
		memcpy(dst, mnl_attr_get_payload(attr), p->len);
		return 0;
	case RP_NEST:
		return __actrack_rp_nest(p->nest, p->nest_max, p->need, attr,
					 dst);
	default:
		return p->fn(attr, w->obj, w->ctx);
	}
}

int __actrack_rp_parse(const struct rp_policy *pol, uint16_t max,
		       const void *start, size_t len, void *obj, void *ctx,
		       uint64_t *seen)
{
	struct rp_walk_ctx w = {
		.pol = pol, .max = max, .obj = obj, .ctx = ctx,
	};
	int ret = __actrack_rp_walk(start, len, rp_attr, &w);

	if (seen)
		*seen = w.seen;
	return ret;
}

int __actrack_rp_nest(const struct rp_policy *pol, uint16_t max,
		      uint64_t need, const struct nlattr *attr, void *obj)
{
	uint64_t seen;
	int ret = __actrack_rp_parse(pol, max, mnl_attr_get_payload(attr),
				     mnl_attr_get_payload_len(attr), obj,
				     NULL, &seen);

	if (!ret && (seen & need) != need)
		return -EBADMSG;
	return ret;
}

/* Policy lines: the field @f of the object type @T, or of the context. */
#define RP_U32(T, f)	{ .store = RP_INT, .mnl = MNL_TYPE_U32,		\
			  .off = offsetof(T, f), .size = sizeof(uint32_t) }
#define RP_U64(T, f)	{ .store = RP_INT, .mnl = MNL_TYPE_U64,		\
			  .off = offsetof(T, f), .size = sizeof(uint64_t) }
#define RP_FLAG(T, f)	{ .store = RP_TRUE, .mnl = MNL_TYPE_FLAG,	\
			  .off = offsetof(T, f) }
#define RP_NEST(T, f, pol, pmax, mask)					\
			{ .store = RP_NEST, .mnl = MNL_TYPE_NESTED,	\
			  .off = offsetof(T, f), .nest = (pol),		\
			  .nest_max = (pmax), .need = (mask) }
#define RP_BIT(a)	(1ULL << (a))
#define RP_CALL(type, fun, ...)						\
			{ .store = RP_FN, .mnl = (type), .fn = (fun),	\
			  __VA_ARGS__ }

/* ---------------------------------------------------------------------- */
/* Death reports                                                           */
/* ---------------------------------------------------------------------- */

/* Pass 1 validates everything but the contents of threads, modules and
 * stacks and counts them; pass 2 allocates once, bounded, and fills. */
struct death_ctx {
	struct actrack_death *d;
	uint64_t seen;			/* A_* met */
	uint32_t nr_threads;		/* pass 1: count; pass 2: filled */
	uint32_t max_threads;
	uint32_t nr_modules;		/* likewise */
	uint32_t max_modules;
	uint32_t nr_stacks, max_stacks;
	bool pass2;			/* PROCESS_DATA: done in pass 1 */
	uint32_t exit_code, signal;	/* to check against the status */
};

/*
 * Field records from a report (ACTRACK_A_PROCESS_DATA, ACTRACK_T_USER_DATA):
 * arena bytes that the kernel passed on unparsed.  A blob that is too big
 * or does not parse is skipped (no values), not the whole report.  It is
 * copied first: the attribute payload is only 4-byte aligned.
 */
static void rp_fields(const uint8_t *p, size_t len, size_t max,
		      struct actrack_value **out, uint32_t *nr)
{
	uint64_t buf[ACTRACK_DEATH_PROCESS_DATA_MAX / sizeof(uint64_t)];

	*out = NULL;
	*nr = 0;
	if (!len || len > max || len > sizeof(buf))
		return;
	memcpy(buf, p, len);
	if (__actrack_parse_fields((const uint8_t *)buf, (uint32_t)len, out,
				   nr)) {
		*out = NULL;
		*nr = 0;
	}
}

/* ACTRACK_T_ACTIVITY: one more stored activity, outermost first. */
static int rp_activity(const struct nlattr *attr, void *obj, void *ctx)
{
	struct actrack_snap_thread *t = obj;
	struct actrack_snap_activity *n;
	uint32_t nr = t->nr_activities;

	(void)ctx;
	/* The kernel stores at most that many per thread. */
	if (nr >= ACTRACK_THREAD_MAX_SLOTS)
		return -EBADMSG;
	/* Doubling: 1, 2, 4 ... ACTRACK_THREAD_MAX_SLOTS. */
	if (!(nr & (nr - 1))) {
		n = realloc(t->activities, (nr ? 2 * nr : 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->activities = n;
	}
	memset(&t->activities[nr], 0, sizeof(t->activities[nr]));
	/* Payload is only 4-byte aligned: copy, never cast. */
	memcpy(&t->activities[nr].a, mnl_attr_get_payload(attr),
	       sizeof(struct actrack_activity));
	t->nr_activities = nr + 1;
	return 0;
}

/* ACTRACK_T_USER_DATA: __u32 activity index, then its field records. */
static int rp_act_data(const struct nlattr *attr, void *obj, void *ctx)
{
	struct actrack_snap_thread *t = obj;
	const uint8_t *p = mnl_attr_get_payload(attr);
	size_t len = mnl_attr_get_payload_len(attr);
	struct actrack_snap_activity *act;
	uint32_t idx;

	(void)ctx;
	if (len < sizeof(idx))
		return 0;
	memcpy(&idx, p, sizeof(idx));
	/* It follows the thread's activities: one it does not hold, or a
	 * second blob for the same activity, is skipped. */
	if (t->torn || idx >= t->nr_activities)
		return 0;
	act = &t->activities[idx];
	if (act->values)
		return 0;
	rp_fields(p + sizeof(idx), len - sizeof(idx),
		  ACTRACK_DEATH_ACT_DATA_MAX, &act->values, &act->nr_values);
	return 0;
}

#define T_	struct actrack_snap_thread
static const struct rp_policy thread_policy[ACTRACK_T_MAX + 1] = {
	[ACTRACK_T_TID]		= RP_U32(T_, tid),
	[ACTRACK_T_NAME]	= { .store = RP_STRING, .mnl = MNL_TYPE_STRING,
				    .off = offsetof(T_, name),
				    .size = sizeof(((T_ *)0)->name) },
	[ACTRACK_T_DEPTH]	= RP_U32(T_, depth),
	[ACTRACK_T_FATAL_SIGNO]	= RP_U32(T_, fatal_signo),
	[ACTRACK_T_FATAL_CODE]	= RP_U32(T_, fatal_code),
	[ACTRACK_T_FATAL_ADDR]	= RP_U64(T_, fatal_addr),
	[ACTRACK_T_FATAL_PC]	= RP_U64(T_, fatal_pc),
	[ACTRACK_T_ACTIVITY]	= RP_CALL(MNL_TYPE_BINARY, rp_activity,
					  .multi = 1,
					  .len = sizeof(struct actrack_activity)),
	[ACTRACK_T_TORN]	= RP_FLAG(T_, torn),
	[ACTRACK_T_USER_DATA]	= RP_CALL(MNL_TYPE_BINARY, rp_act_data,
					  .multi = 1),
};
#undef T_

static int rp_bytes(const struct nlattr *attr, void *obj, void *ctx)
{
	struct actrack_death_stack *st = obj;
	uint32_t len = mnl_attr_get_payload_len(attr);

	(void)ctx;
	if (!len)
		return 0;
	st->bytes = malloc(len);
	if (!st->bytes)
		return -ENOMEM;
	memcpy(st->bytes, mnl_attr_get_payload(attr), len);
	st->size = len;
	return 0;
}

#define K_	struct actrack_death_stack
static const struct rp_policy stack_policy[ACTRACK_K_MAX + 1] = {
	[ACTRACK_K_TID]		= RP_U32(K_, tid),
	[ACTRACK_K_FLAGS]	= RP_U32(K_, flags),
	[ACTRACK_K_SP]		= RP_U64(K_, sp),
	[ACTRACK_K_REGS]	= { .store = RP_BYTES, .mnl = MNL_TYPE_BINARY,
				    .off = offsetof(K_, regs),
				    .len = sizeof(((K_ *)0)->regs) },
	[ACTRACK_K_BYTES]	= RP_CALL(MNL_TYPE_BINARY, rp_bytes),
};
#undef K_

/* One more of what pass 1 counted and pass 2 fills: @i its index, or
 * false when past the bound (the report is then marked truncated). */
static bool rp_room(struct death_ctx *c, uint32_t *nr, uint32_t max,
		    uint32_t *i)
{
	if (*nr >= max) {
		c->d->flags |= ACTRACK_DEATH_TRUNCATED;
		return false;
	}
	*i = (*nr)++;
	return true;
}

static int rp_thread(const struct nlattr *attr, void *obj, void *ctx)
{
	struct death_ctx *c = ctx;
	struct actrack_snap_process *p = &c->d->process;
	struct actrack_snap_thread *t;
	uint32_t i;
	int ret;

	(void)obj;
	if (!rp_room(c, &c->nr_threads, c->max_threads, &i) || !c->pass2)
		return 0;
	t = &p->threads[i];
	t->pid = p->pid;
	t->start_ticks = p->start_ticks;
	ret = __actrack_rp_nest(thread_policy, ACTRACK_T_MAX, 0, attr, t);
	if (ret)
		return ret;
	/* A torn thread is who it was, nothing more. */
	if (t->torn)
		__actrack_free_thread(t);
	return 0;
}

/* One ELF object of the dead process, from its arena record: the owner
 * header is the kernel's business, the rest is bounded here. */
static int rp_module(const struct nlattr *attr, void *obj, void *ctx)
{
	struct death_ctx *c = ctx;
	struct actrack_module m;
	uint32_t i;

	(void)obj;
	if (!rp_room(c, &c->nr_modules, c->max_modules, &i) || !c->pass2)
		return 0;
	memcpy(&m, mnl_attr_get_payload(attr), sizeof(m));
	if (m.build_id_size > ACTRACK_BUILD_ID_MAX)
		return -EBADMSG;
	__actrack_snap_module(&c->d->process.modules[i], &m);
	return 0;
}

/* One ACTRACK_A_STACK: its bytes are copied out of the message. */
static int rp_stack(const struct nlattr *attr, void *obj, void *ctx)
{
	struct death_ctx *c = ctx;
	uint32_t i;

	(void)obj;
	if (!rp_room(c, &c->nr_stacks, c->max_stacks, &i) || !c->pass2)
		return 0;
	/* Counted now, so that a failure frees its bytes. */
	c->d->nr_stacks = i + 1;
	return __actrack_rp_nest(stack_policy, ACTRACK_K_MAX, 0, attr,
				 &c->d->stacks[i]);
}

#define KL_	struct actrack_death_killer
static const struct rp_policy killer_policy[ACTRACK_KL_MAX + 1] = {
	[ACTRACK_KL_KIND]	= { .store = RP_INT, .mnl = MNL_TYPE_U32,
				    .off = offsetof(KL_, kind),
				    .size = sizeof(uint32_t),
				    .min = ACTRACK_KILLER_PROCESS,
				    .max = ACTRACK_KILLER_KERNEL },
	[ACTRACK_KL_SIGNAL]	= { .store = RP_INT, .mnl = MNL_TYPE_U32,
				    .off = offsetof(KL_, signal),
				    .size = sizeof(uint32_t),
				    .min = 1, .max = 0x7e },
	[ACTRACK_KL_CODE]	= RP_U32(KL_, code),
	[ACTRACK_KL_PID]	= RP_U32(KL_, pid),
	[ACTRACK_KL_UID]	= RP_U32(KL_, uid),
	[ACTRACK_KL_COMM]	= { .store = RP_STRING, .mnl = MNL_TYPE_STRING,
				    .off = offsetof(KL_, comm),
				    .size = sizeof(((KL_ *)0)->comm) },
	[ACTRACK_KL_EXE]	= { .store = RP_STRING,
				    .mnl = MNL_TYPE_NUL_STRING,
				    .off = offsetof(KL_, exe),
				    .size = sizeof(((KL_ *)0)->exe) },
	[ACTRACK_KL_CGROUP]	= { .store = RP_STRING,
				    .mnl = MNL_TYPE_NUL_STRING,
				    .off = offsetof(KL_, cgroup),
				    .size = sizeof(((KL_ *)0)->cgroup) },
};
#undef KL_

static int rp_cmdline(const struct nlattr *attr, void *obj, void *ctx)
{
	struct actrack_death *d = obj;

	(void)ctx;
	/* argv is NUL-separated, as in the arena record. */
	__actrack_join_cmdline(d->process.cmdline, mnl_attr_get_payload(attr),
			       mnl_attr_get_payload_len(attr));
	return 0;
}

static int rp_process_data(const struct nlattr *attr, void *obj, void *ctx)
{
	struct actrack_death *d = obj;
	struct death_ctx *c = ctx;

	if (c->pass2)
		return 0;
	rp_fields(mnl_attr_get_payload(attr), mnl_attr_get_payload_len(attr),
		  ACTRACK_DEATH_PROCESS_DATA_MAX, &d->process.values,
		  &d->process.nr_values);
	return 0;
}

#define O_	struct actrack_death_oom
static const struct rp_policy oom_policy[ACTRACK_OOM_MAX + 1] = {
	[ACTRACK_OOM_ANON]		= RP_U64(O_, anon),
	[ACTRACK_OOM_FILE]		= RP_U64(O_, file),
	[ACTRACK_OOM_SHMEM]		= RP_U64(O_, shmem),
	[ACTRACK_OOM_SCORE_ADJ]		= RP_U32(O_, score_adj),
	[ACTRACK_OOM_MEMCG]		= { .store = RP_STRING,
					    .mnl = MNL_TYPE_NUL_STRING,
					    .off = offsetof(O_, memcg),
					    .size = sizeof(((O_ *)0)->memcg) },
	[ACTRACK_OOM_MEMCG_LIMIT]	= RP_U64(O_, memcg_limit),
	[ACTRACK_OOM_MEMCG_USAGE]	= RP_U64(O_, memcg_usage),
};
#undef O_

#define D_	struct actrack_death
#define C_	struct death_ctx
static const struct rp_policy death_policy[ACTRACK_A_MAX + 1] = {
	[ACTRACK_A_PID]		= RP_U32(D_, process.pid),
	[ACTRACK_A_START_TICKS]	= RP_U64(D_, process.start_ticks),
	[ACTRACK_A_UID]		= RP_U32(D_, uid),
	[ACTRACK_A_WAIT_STATUS]	= RP_U32(D_, wait_status),
	/* Checked against the wait status (death_status()). */
	[ACTRACK_A_EXIT_CODE]	= { .store = RP_INT, .mnl = MNL_TYPE_U32,
				    .ctx = 1, .off = offsetof(C_, exit_code),
				    .size = sizeof(uint32_t), .max = 255 },
	/* A wait status has 7 bits for the signal, and 0x7f there means
	 * "stopped": no signal a death can carry. */
	[ACTRACK_A_SIGNAL]	= { .store = RP_INT, .mnl = MNL_TYPE_U32,
				    .ctx = 1, .off = offsetof(C_, signal),
				    .size = sizeof(uint32_t),
				    .min = 1, .max = 0x7e },
	[ACTRACK_A_CORE_DUMPED]	= RP_FLAG(D_, core_dumped),
	[ACTRACK_A_EXIT_TIME_NS] = RP_U64(D_, exit_time_ns),
	[ACTRACK_A_PHASE]	= RP_U32(D_, process.phase),
	[ACTRACK_A_CMDLINE]	= RP_CALL(MNL_TYPE_BINARY, rp_cmdline),
	[ACTRACK_A_SEQ]		= RP_U64(D_, seq),
	[ACTRACK_A_FLAGS]	= { .store = RP_OR, .mnl = MNL_TYPE_U32,
				    .off = offsetof(D_, flags),
				    .size = sizeof(uint32_t) },
	[ACTRACK_A_MODULE]	= RP_CALL(MNL_TYPE_BINARY, rp_module,
					  .multi = 1,
					  .len = sizeof(struct actrack_module)),
	[ACTRACK_A_PROCESS_DATA] = RP_CALL(MNL_TYPE_BINARY, rp_process_data),
	[ACTRACK_A_THREAD]	= RP_CALL(MNL_TYPE_NESTED, rp_thread,
					  .multi = 1),
	[ACTRACK_A_STACK]	= RP_CALL(MNL_TYPE_NESTED, rp_stack,
					  .multi = 1),
	/* Kept only if it names the signal the process died of (checked
	 * in death_pass()), with a kind. */
	[ACTRACK_A_KILLER]	= RP_NEST(D_, killer, killer_policy,
					  ACTRACK_KL_MAX,
					  RP_BIT(ACTRACK_KL_KIND) |
					  RP_BIT(ACTRACK_KL_SIGNAL)),
	[ACTRACK_A_CGROUP]	= { .store = RP_STRING,
				    .mnl = MNL_TYPE_NUL_STRING,
				    .off = offsetof(D_, cgroup),
				    .size = sizeof(((D_ *)0)->cgroup) },
	/* Only with a death by SIGKILL (checked in death_pass()). */
	[ACTRACK_A_OOM]		= RP_NEST(D_, oom, oom_policy, ACTRACK_OOM_MAX,
					  RP_BIT(ACTRACK_OOM_ANON) |
					  RP_BIT(ACTRACK_OOM_FILE) |
					  RP_BIT(ACTRACK_OOM_SHMEM) |
					  RP_BIT(ACTRACK_OOM_SCORE_ADJ)),
	/* STATS, ALL_UIDS, PID_NS: not part of a report we keep. */
};
#undef C_
#undef D_

#define HAS(c, a)	(((c)->seen >> (a)) & 1)

/*
 * The wait status is the primary truth; EXIT_CODE/SIGNAL/CORE_DUMPED are
 * conveniences that must agree with it when both are present, so that a
 * consumer reading either gets the same answer.
 */
static int death_status(struct death_ctx *c)
{
	struct actrack_death *d = c->d;
	bool has_signal = HAS(c, ACTRACK_A_SIGNAL);
	bool has_exit_code = HAS(c, ACTRACK_A_EXIT_CODE);
	int ws = d->wait_status;

	if (HAS(c, ACTRACK_A_WAIT_STATUS)) {
		if (WIFEXITED(ws)) {
			d->exit_code = WEXITSTATUS(ws);
			d->signal = 0;
		} else if (WIFSIGNALED(ws)) {
			d->signal = WTERMSIG(ws);
			d->exit_code = 0;
			if (WCOREDUMP(ws))
				d->core_dumped = true;
		} else {
			return -EBADMSG;	/* stopped/continued: no death */
		}
		if (has_signal && (uint32_t)d->signal != c->signal)
			return -EBADMSG;
		if (has_exit_code &&
		    (d->signal || (uint32_t)d->exit_code != c->exit_code))
			return -EBADMSG;
		return 0;
	}
	if (has_signal && has_exit_code && c->exit_code)
		return -EBADMSG;
	if (has_signal) {
		d->signal = (int)c->signal;
		d->wait_status = d->signal | (d->core_dumped ? 0x80 : 0);
	} else if (has_exit_code) {
		d->exit_code = (int)c->exit_code;
		d->wait_status = d->exit_code << 8;
	} else {
		return -EBADMSG;	/* no way to tell how it died */
	}
	return 0;
}

/* The attributes of a generic netlink message of @len bytes, or NULL. */
static const void *rp_genl_attrs(const struct nlmsghdr *nlh, size_t len,
				 size_t *alen)
{
	if (len < NLMSG_HDRLEN + GENL_HDRLEN || nlh->nlmsg_len > len ||
	    nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return NULL;
	*alen = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	return mnl_nlmsg_get_payload_offset(nlh, GENL_HDRLEN);
}

static int death_pass(struct death_ctx *c, const void *attrs, size_t alen)
{
	int ret = __actrack_rp_parse(death_policy, ACTRACK_A_MAX, attrs, alen,
				     c->d, c, &c->seen);

	if (ret)
		return ret;
	if (!HAS(c, ACTRACK_A_PID))
		return -EBADMSG;
	ret = death_status(c);
	c->d->has_killer = HAS(c, ACTRACK_A_KILLER);
	__actrack_cgroup_unit(c->d->cgroup, c->d->unit, sizeof(c->d->unit));
	/* A sender of another signal than the fatal one is none. */
	if (!ret && c->d->has_killer && c->d->killer.signal != c->d->signal)
		return -EBADMSG;
	/* The OOM killer kills with SIGKILL. */
	c->d->has_oom = HAS(c, ACTRACK_A_OOM);
	if (!ret && c->d->has_oom && c->d->signal != SIGKILL)
		return -EBADMSG;
	return ret;
}

/* Threads known only by a stack at death come after the others. */
static uint32_t death_stack_only(const struct actrack_death *d,
				 bool fill)
{
	const struct actrack_snap_process *p = &d->process;
	uint32_t n = 0, k;

	for (uint32_t i = 0; i < d->nr_stacks; i++) {
		for (k = 0; k < d->nr_tracked_threads; k++)
			if (p->threads[k].tid == d->stacks[i].tid)
				break;
		if (k < d->nr_tracked_threads)
			continue;
		if (fill) {
			struct actrack_snap_thread *t =
				&p->threads[d->nr_tracked_threads + n];

			t->pid = p->pid;
			t->tid = d->stacks[i].tid;
			t->start_ticks = p->start_ticks;
		}
		n++;
	}
	return n;
}

static int death_alloc(struct actrack_death *d, const struct death_ctx *c)
{
	struct actrack_snap_process *p = &d->process;
	uint32_t nr = c->nr_threads + c->nr_stacks;

	if (nr)
		p->threads = calloc(nr, sizeof(*p->threads));
	if (c->nr_modules)
		p->modules = calloc(c->nr_modules, sizeof(*p->modules));
	if (c->nr_stacks)
		d->stacks = calloc(c->nr_stacks, sizeof(*d->stacks));
	if ((nr && !p->threads) || (c->nr_modules && !p->modules) ||
	    (c->nr_stacks && !d->stacks))
		return -ENOMEM;
	/* Now, so that a failure in pass 2 frees the threads' values (a
	 * thread not yet filled is all zeros). */
	p->nr_threads = nr;
	return 0;
}

int __actrack_parse_death(const struct nlmsghdr *nlh, size_t len,
			  struct actrack_death *d)
{
	const struct genlmsghdr *g;
	struct death_ctx c = { .d = d };
	const void *attrs;
	size_t alen;
	int ret;

	memset(d, 0, sizeof(*d));
	attrs = rp_genl_attrs(nlh, len, &alen);
	if (!attrs)
		return -EBADMSG;
	g = mnl_nlmsg_get_payload(nlh);
	if (g->cmd != ACTRACK_CMD_DEATH && g->cmd != ACTRACK_CMD_GET_DEATHS)
		return -EBADMSG;
	c.max_threads = ACTRACK_LIB_MAX_THREADS;
	c.max_modules = ACTRACK_LIB_MAX_MODULES;
	c.max_stacks = ACTRACK_LIB_MAX_STACKS;
	ret = death_pass(&c, attrs, alen);
	if (ret)
		goto bad;
	if (c.nr_threads || c.nr_modules || c.nr_stacks) {
		struct death_ctx c2 = {
			.d = d, .pass2 = true, .max_threads = c.nr_threads,
			.max_modules = c.nr_modules, .max_stacks = c.nr_stacks,
		};

		if (death_alloc(d, &c)) {
			__actrack_free_death(d);
			memset(d, 0, sizeof(*d));
			return -ENOMEM;
		}
		ret = death_pass(&c2, attrs, alen);
		if (ret || c2.nr_threads != c.nr_threads ||
		    c2.nr_modules != c.nr_modules ||
		    c2.nr_stacks != c.nr_stacks)
			goto bad;
		d->process.nr_modules = c.nr_modules;
		d->nr_tracked_threads = c.nr_threads;
		d->process.nr_threads = c.nr_threads +
					death_stack_only(d, true);
	}
	d->process.has_record = true;
	return 0;
bad:
	__actrack_free_death(d);
	memset(d, 0, sizeof(*d));
	return ret == -ENOMEM ? -ENOMEM : -EBADMSG;
}

/* ---------------------------------------------------------------------- */
/* Counters                                                                */
/* ---------------------------------------------------------------------- */

#define S_	struct actrack_kstats
static const struct rp_policy stats_policy[ACTRACK_S_MAX + 1] = {
	[ACTRACK_S_ARENAS]		= RP_U64(S_, arenas),
	[ACTRACK_S_BYTES_USED]		= RP_U64(S_, bytes_used),
	[ACTRACK_S_ARENA_SIZE]		= RP_U64(S_, arena_size),
	[ACTRACK_S_ATTACHED]		= RP_U64(S_, attached),
	[ACTRACK_S_CLEANUPS]		= RP_U64(S_, cleanups),
	[ACTRACK_S_RECORDS_FREED]	= RP_U64(S_, records_freed),
	[ACTRACK_S_CORRUPTION]		= RP_U64(S_, corruption),
	[ACTRACK_S_REPORTS_SENT]	= RP_U64(S_, reports_sent),
	[ACTRACK_S_REPORTS_DROPPED]	= RP_U64(S_, reports_dropped),
	[ACTRACK_S_BYTES_FREE]		= RP_U64(S_, bytes_free),
};
#undef S_

static const struct rp_policy stats_top_policy[ACTRACK_A_MAX + 1] = {
	[ACTRACK_A_STATS]	= { .store = RP_NEST, .mnl = MNL_TYPE_NESTED,
				    .nest = stats_policy,
				    .nest_max = ACTRACK_S_MAX },
};

int __actrack_parse_stats(const struct nlmsghdr *nlh, size_t len,
			  struct actrack_kstats *st)
{
	struct actrack_kstats tmp = { 0 };
	const void *attrs;
	uint64_t seen;
	size_t alen;

	attrs = rp_genl_attrs(nlh, len, &alen);
	if (!attrs ||
	    __actrack_rp_parse(stats_top_policy, ACTRACK_A_MAX, attrs, alen,
			       &tmp, NULL, &seen) ||
	    !(seen & (1ULL << ACTRACK_A_STATS)))
		return -EBADMSG;
	*st = tmp;
	return 0;
}
