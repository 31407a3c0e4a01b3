// SPDX-License-Identifier: MIT
/*
 * The exit monitor: death reports of actrack.ko over generic netlink.
 *
 * Two sockets: the subscribed one only ever carries ACTRACK_CMD_DEATH
 * unicasts (plus the SUBSCRIBE ack), so actrack_monitor_dispatch() never has
 * to sort replies from reports; GET_DEATHS and GET_STATS run on a short-lived
 * query socket.  Reports that the kernel queues between registering the
 * subscription and sending its ack are kept and delivered by the first
 * dispatch.
 *
 * Trust: a report is input from outside the process.  Only datagrams whose
 * sender is the kernel (nl_pid 0) are looked at -- root can unicast to any
 * netlink port -- and every attribute is validated (type, exact length)
 * before use.  A message that does not parse is skipped whole and counted;
 * a partial report is never delivered.
 *
 * Module reloads: a subscription lives in the module, and rmmod ends it
 * without a word to the subscriber.  The subscribed socket therefore also
 * joins the generic netlink controller's "notify" group: DELFAMILY of
 * "actrack" opens a gap, NEWFAMILY makes the monitor subscribe to the new
 * instance (whose family id may differ) and closes it, and the caller
 * hears of both through its gap callback, with the times the notices
 * were received (netlink datagrams carry no send time: SO_TIMESTAMP on a
 * netlink socket stamps them when they are read).
 *
 * Overflows: a caller that does not read fast enough fills the socket's
 * receive buffer; the kernel then drops reports (it counts them as
 * reports_dropped) and recv() fails once with ENOBUFS.  Every report was
 * also kept in its uid's ring (GET_DEATHS, the last deaths_kept deaths),
 * and reports carry a number, increasing per uid.  So the monitor first
 * reads what is still queued (older than anything dropped: the kernel
 * drops until the queue is empty), then dumps the ring and delivers the
 * reports of deaths since its subscription that it had not delivered, in
 * order.  A report is delivered once: a live one whose number and exit
 * time are both at most the last delivered for its uid was replayed
 * already (both, because a uid whose ring the module evicted numbers its
 * deaths from 1 again, later).  Numbers between the last delivered and
 * the ring's first replayed were lost for good: the gap callback says so.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <libmnl/libmnl.h>

#include "internal.h"

/* Receive buffer: one datagram.  Grown to the size the kernel reports for
 * the pending datagram (MSG_PEEK|MSG_TRUNC), up to the cap. */
#define MON_BUF_INITIAL		(64U * 1024)
#define MON_BUF_MAX		(16U * 1024 * 1024)
/* Socket receive buffer asked for: a burst of deaths (a crashing process
 * group) must not overflow it. */
#define MON_RCVBUF		(4 * 1024 * 1024)
/* How long a request may wait for the kernel's answer. */
#define MON_REPLY_TIMEOUT_MS	5000
/* Reports kept while waiting for the SUBSCRIBE ack. */
#define MON_STASH_MAX		256

struct mon_stash {
	struct mon_stash *next;
	uint64_t rx_ns;		/* when received, CLOCK_REALTIME */
	struct nlmsghdr nlh[];	/* nlh->nlmsg_len bytes */
};

struct actrack_monitor {
	struct mnl_socket *nl;		/* subscribed socket */
	uint32_t flags;			/* ACTRACK_MONITOR_* */
	uint16_t family;		/* generic netlink id of "actrack" */
	uint32_t seq;
	char *buf;
	size_t buf_len;
	struct mon_stash *stash, **stash_tail;
	uint32_t nr_stash;
	uint64_t malformed;		/* messages skipped */
	uint64_t rx_ns;			/* when the last datagram came */
	/* Module reloads (see the top of the file). */
	actrack_gap_fn gap_fn;
	void *gap_arg;
	struct actrack_monitor_gap gap;	/* the open one */
	bool down;			/* DELFAMILY seen, not resubscribed */
	bool resubscribe;		/* NEWFAMILY seen, not yet acted on */
	/* Overflows (see the top of the file). */
	uint64_t sub_mono_ns;		/* CLOCK_MONOTONIC, before SUBSCRIBE */
	uint64_t overflow_ns;		/* ENOBUFS read, not recovered: when */
	struct mon_seen *seen;		/* per uid: last report delivered */
	uint32_t nr_seen;
};

/* The last live report delivered for one uid. */
struct mon_seen {
	uint32_t uid;
	uint64_t seq;			/* its number */
	uint64_t exit_ns;		/* the latest exit time delivered */
};

/* ---------------------------------------------------------------------- */
/* Parsing                                                                 */
/* ---------------------------------------------------------------------- */

/*
 * Walk the attributes in [@start, @start + @len): like mnl_attr_for_each but
 * bytes left over after the last whole attribute (a truncated attribute)
 * make the set malformed instead of being silently ignored.  The last
 * attribute may lack its alignment padding.
 */
typedef int (*mon_attr_fn)(const struct nlattr *attr, void *data);

static int mon_walk(const void *start, size_t len, mon_attr_fn fn, void *data)
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

static int mon_check(const struct nlattr *attr, enum mnl_attr_data_type type,
		     size_t len)
{
	int ret = len ? mnl_attr_validate2(attr, type, len) :
			mnl_attr_validate(attr, type);

	return ret < 0 ? -EBADMSG : 0;
}

/*
 * Field records from a report (ACTRACK_A_PROCESS_DATA, ACTRACK_T_USER_DATA):
 * arena bytes that the kernel passed on unparsed.  A blob that is too big
 * or does not parse is skipped (no values), not the whole report.  It is
 * copied first: the attribute payload is only 4-byte aligned.
 */
static void mon_fields(const uint8_t *p, size_t len, size_t max,
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

/* ACTRACK_T_USER_DATA: __u32 activity index, then its field records. */
static void mon_act_data(const struct nlattr *attr,
			 struct actrack_death_thread *t)
{
	const uint8_t *p = mnl_attr_get_payload(attr);
	size_t len = mnl_attr_get_payload_len(attr);
	uint32_t idx;

	if (len < sizeof(idx))
		return;
	memcpy(&idx, p, sizeof(idx));
	/* Out of range or a second blob for the same activity: skipped. */
	if (idx >= ACTRACK_THREAD_MAX_SLOTS || t->values[idx])
		return;
	mon_fields(p + sizeof(idx), len - sizeof(idx),
		   ACTRACK_DEATH_ACT_DATA_MAX, &t->values[idx],
		   &t->nr_values[idx]);
}

/* One ACTRACK_A_STACK: its bytes are copied out of the message. */
static int mon_stack_attr(const struct nlattr *attr, void *data)
{
	struct actrack_death_stack *st = data;
	uint16_t type = mnl_attr_get_type(attr);
	uint32_t len;
	int ret;

	switch (type) {
	case ACTRACK_K_TID:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (!ret)
			st->tid = mnl_attr_get_u32(attr);
		return ret;
	case ACTRACK_K_FLAGS:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (!ret)
			st->flags = mnl_attr_get_u32(attr);
		return ret;
	case ACTRACK_K_SP:
		ret = mon_check(attr, MNL_TYPE_U64, 0);
		if (!ret)
			st->sp = mnl_attr_get_u64(attr);
		return ret;
	case ACTRACK_K_REGS:
		ret = mon_check(attr, MNL_TYPE_BINARY, sizeof(st->regs));
		if (!ret)
			memcpy(st->regs, mnl_attr_get_payload(attr),
			       sizeof(st->regs));
		return ret;
	case ACTRACK_K_BYTES:
		ret = mon_check(attr, MNL_TYPE_BINARY, 0);
		if (ret || st->bytes)
			return ret ? ret : -EBADMSG;
		len = mnl_attr_get_payload_len(attr);
		if (!len)
			return 0;
		st->bytes = malloc(len);
		if (!st->bytes)
			return -ENOMEM;
		memcpy(st->bytes, mnl_attr_get_payload(attr), len);
		st->size = len;
		return 0;
	default:
		return 0;	/* newer than us: skipped */
	}
}

struct thread_ctx {
	struct actrack_death_thread *t;
	uint32_t seen;			/* bitmap of T_* attributes met */
};

static int mon_thread_attr(const struct nlattr *attr, void *data)
{
	struct thread_ctx *c = data;
	struct actrack_death_thread *t = c->t;
	uint16_t type = mnl_attr_get_type(attr);
	size_t n;
	int ret;

	/* Newer kernel: unknown attribute.  PAD (alignment of u64s on some
	 * architectures) may appear any number of times. */
	if (type > ACTRACK_T_MAX || type == ACTRACK_T_UNSPEC ||
	    type == ACTRACK_T_PAD)
		return 0;
	/* Every attribute but ACTIVITY and USER_DATA appears at most once. */
	if (type != ACTRACK_T_ACTIVITY && type != ACTRACK_T_USER_DATA) {
		if (c->seen & (1U << type))
			return -EBADMSG;
		c->seen |= 1U << type;
	}
	switch (type) {
	case ACTRACK_T_TID:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (!ret)
			t->tid = mnl_attr_get_u32(attr);
		return ret;
	case ACTRACK_T_NAME:
		ret = mon_check(attr, MNL_TYPE_STRING, 0);
		if (ret)
			return ret;
		n = strnlen(mnl_attr_get_payload(attr),
			    mnl_attr_get_payload_len(attr));
		if (n >= sizeof(t->name))
			n = sizeof(t->name) - 1;
		memcpy(t->name, mnl_attr_get_payload(attr), n);
		t->name[n] = '\0';
		return 0;
	case ACTRACK_T_DEPTH:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (!ret)
			t->depth = mnl_attr_get_u32(attr);
		return ret;
	case ACTRACK_T_FATAL_SIGNO:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (!ret)
			t->fatal_signo = (int32_t)mnl_attr_get_u32(attr);
		return ret;
	case ACTRACK_T_FATAL_CODE:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (!ret)
			t->fatal_code = (int32_t)mnl_attr_get_u32(attr);
		return ret;
	case ACTRACK_T_FATAL_ADDR:
		ret = mon_check(attr, MNL_TYPE_U64, 0);
		if (!ret)
			t->fatal_addr = mnl_attr_get_u64(attr);
		return ret;
	case ACTRACK_T_FATAL_PC:
		ret = mon_check(attr, MNL_TYPE_U64, 0);
		if (!ret)
			t->fatal_pc = mnl_attr_get_u64(attr);
		return ret;
	case ACTRACK_T_ACTIVITY:
		ret = mon_check(attr, MNL_TYPE_BINARY,
				sizeof(struct actrack_activity));
		if (ret)
			return ret;
		/* The kernel stores at most that many per thread. */
		if (t->nr_activities >= ACTRACK_THREAD_MAX_SLOTS)
			return -EBADMSG;
		/* Payload is only 4-byte aligned: copy, never cast. */
		memcpy(&t->activities[t->nr_activities++],
		       mnl_attr_get_payload(attr),
		       sizeof(struct actrack_activity));
		return 0;
	case ACTRACK_T_TORN:
		ret = mon_check(attr, MNL_TYPE_FLAG, 0);
		if (!ret)
			t->torn = true;
		return ret;
	case ACTRACK_T_USER_DATA:
		mon_act_data(attr, t);
		return 0;
	default:
		return 0;
	}
}

/* One ELF object of the dead process, from its arena record: the owner
 * header is the kernel's business, the rest is bounded here. */
static int mon_module(const void *payload, struct actrack_snap_module *out)
{
	struct actrack_module m;

	memcpy(&m, payload, sizeof(m));	/* 4-byte aligned payload */
	if (m.build_id_size > ACTRACK_BUILD_ID_MAX)
		return -EBADMSG;
	__actrack_snap_module(out, &m);
	return 0;
}

struct death_ctx {
	struct actrack_death *d;
	uint32_t seen;			/* bitmap of A_* attributes met */
	uint32_t nr_threads;		/* pass 1: count; pass 2: filled */
	uint32_t max_threads;
	uint32_t nr_modules;		/* likewise */
	uint32_t max_modules;
	uint32_t nr_stacks, max_stacks;
	bool has_status, has_exit_code, has_signal;
	bool pass2;			/* PROCESS_DATA: done in pass 1 */
	uint32_t exit_code, signal;
};

static int mon_death_attr(const struct nlattr *attr, void *data)
{
	struct death_ctx *c = data;
	struct actrack_death *d = c->d;
	uint16_t type = mnl_attr_get_type(attr);
	int ret;

	if (type > ACTRACK_A_MAX || type == ACTRACK_A_UNSPEC ||
	    type == ACTRACK_A_PAD)
		return 0;
	if (type != ACTRACK_A_THREAD && type != ACTRACK_A_MODULE &&
	    type != ACTRACK_A_STACK) {
		if (c->seen & (1U << type))
			return -EBADMSG;
		c->seen |= 1U << type;
	}
	switch (type) {
	case ACTRACK_A_PID:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (!ret)
			d->pid = mnl_attr_get_u32(attr);
		return ret;
	case ACTRACK_A_START_TICKS:
		ret = mon_check(attr, MNL_TYPE_U64, 0);
		if (!ret)
			d->start_ticks = mnl_attr_get_u64(attr);
		return ret;
	case ACTRACK_A_UID:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (!ret)
			d->uid = mnl_attr_get_u32(attr);
		return ret;
	case ACTRACK_A_WAIT_STATUS:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (!ret) {
			d->wait_status = (int)mnl_attr_get_u32(attr);
			c->has_status = true;
		}
		return ret;
	case ACTRACK_A_EXIT_CODE:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (ret)
			return ret;
		c->exit_code = mnl_attr_get_u32(attr);
		c->has_exit_code = true;
		return c->exit_code > 255 ? -EBADMSG : 0;
	case ACTRACK_A_SIGNAL:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (ret)
			return ret;
		c->signal = mnl_attr_get_u32(attr);
		c->has_signal = true;
		/* A wait status has 7 bits for the signal, and 0x7f there
		 * means "stopped": no signal a death can carry. */
		return c->signal == 0 || c->signal >= 0x7f ? -EBADMSG : 0;
	case ACTRACK_A_CORE_DUMPED:
		ret = mon_check(attr, MNL_TYPE_FLAG, 0);
		if (!ret)
			d->core_dumped = true;
		return ret;
	case ACTRACK_A_EXIT_TIME_NS:
		ret = mon_check(attr, MNL_TYPE_U64, 0);
		if (!ret)
			d->exit_time_ns = mnl_attr_get_u64(attr);
		return ret;
	case ACTRACK_A_PHASE:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (!ret)
			d->phase = mnl_attr_get_u32(attr);
		return ret;
	case ACTRACK_A_SEQ:
		ret = mon_check(attr, MNL_TYPE_U64, 0);
		if (!ret)
			d->seq = mnl_attr_get_u64(attr);
		return ret;
	case ACTRACK_A_FLAGS:
		ret = mon_check(attr, MNL_TYPE_U32, 0);
		if (!ret)
			d->flags |= mnl_attr_get_u32(attr);
		return ret;
	case ACTRACK_A_CMDLINE:
		ret = mon_check(attr, MNL_TYPE_BINARY, 0);
		if (ret)
			return ret;
		/* argv is NUL-separated, as in the arena record. */
		d->cmdline_size = __actrack_join_cmdline(d->cmdline,
				mnl_attr_get_payload(attr),
				mnl_attr_get_payload_len(attr));
		return 0;
	case ACTRACK_A_PROCESS_DATA:
		ret = mon_check(attr, MNL_TYPE_BINARY, 0);
		if (ret || c->pass2)
			return ret;
		mon_fields(mnl_attr_get_payload(attr),
			   mnl_attr_get_payload_len(attr),
			   ACTRACK_DEATH_PROCESS_DATA_MAX, &d->values,
			   &d->nr_values);
		return 0;
	case ACTRACK_A_THREAD:
		ret = mon_check(attr, MNL_TYPE_NESTED, 0);
		if (ret)
			return ret;
		if (c->nr_threads >= c->max_threads) {
			d->flags |= ACTRACK_DEATH_TRUNCATED;
			return 0;
		}
		if (d->threads) {
			struct thread_ctx tc = {
				.t = &d->threads[c->nr_threads],
			};

			ret = mon_walk(mnl_attr_get_payload(attr),
				       mnl_attr_get_payload_len(attr),
				       mon_thread_attr, &tc);
			if (ret)
				return ret;
			/* Values only for activities the report holds. */
			for (uint32_t k = tc.t->torn ? 0 :
					  tc.t->nr_activities;
			     k < ACTRACK_THREAD_MAX_SLOTS; k++) {
				__actrack_free_values(tc.t->values[k],
						      tc.t->nr_values[k]);
				tc.t->values[k] = NULL;
				tc.t->nr_values[k] = 0;
			}
		}
		c->nr_threads++;
		return 0;
	case ACTRACK_A_MODULE:
		ret = mon_check(attr, MNL_TYPE_BINARY,
				sizeof(struct actrack_module));
		if (ret)
			return ret;
		if (c->nr_modules >= c->max_modules) {
			d->flags |= ACTRACK_DEATH_TRUNCATED;
			return 0;
		}
		if (d->modules) {
			ret = mon_module(mnl_attr_get_payload(attr),
					 &d->modules[c->nr_modules]);
			if (ret)
				return ret;
		}
		c->nr_modules++;
		return 0;
	case ACTRACK_A_STACK:
		ret = mon_check(attr, MNL_TYPE_NESTED, 0);
		if (ret)
			return ret;
		if (c->nr_stacks >= c->max_stacks) {
			d->flags |= ACTRACK_DEATH_TRUNCATED;
			return 0;
		}
		if (d->stacks) {
			struct actrack_death_stack *st =
				&d->stacks[c->nr_stacks];

			/* Counted now, so that a failure frees its bytes. */
			d->nr_stacks = c->nr_stacks + 1;
			ret = mon_walk(mnl_attr_get_payload(attr),
				       mnl_attr_get_payload_len(attr),
				       mon_stack_attr, st);
			if (ret)
				return ret;
		}
		c->nr_stacks++;
		return 0;
	default:
		return 0;	/* STATS, ALL_UIDS: not part of a report */
	}
}

/*
 * The wait status is the primary truth; EXIT_CODE/SIGNAL/CORE_DUMPED are
 * conveniences that must agree with it when both are present, so that a
 * consumer reading either gets the same answer.
 */
static int mon_fill_status(struct death_ctx *c)
{
	struct actrack_death *d = c->d;
	int ws = d->wait_status;

	if (c->has_status) {
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
		if (c->has_signal && (uint32_t)d->signal != c->signal)
			return -EBADMSG;
		if (c->has_exit_code &&
		    (d->signal || (uint32_t)d->exit_code != c->exit_code))
			return -EBADMSG;
		return 0;
	}
	if (c->has_signal && c->has_exit_code && c->exit_code)
		return -EBADMSG;
	if (c->has_signal) {
		d->signal = (int)c->signal;
		d->wait_status = d->signal | (d->core_dumped ? 0x80 : 0);
	} else if (c->has_exit_code) {
		d->exit_code = (int)c->exit_code;
		d->wait_status = d->exit_code << 8;
	} else {
		return -EBADMSG;	/* no way to tell how it died */
	}
	return 0;
}

int __actrack_parse_death(const struct nlmsghdr *nlh, size_t len,
			  struct actrack_death *d)
{
	const struct genlmsghdr *g;
	struct death_ctx c;
	const void *attrs;
	size_t alen;
	int ret;

	memset(d, 0, sizeof(*d));
	if (len < NLMSG_HDRLEN + GENL_HDRLEN || nlh->nlmsg_len > len ||
	    nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return -EBADMSG;
	g = mnl_nlmsg_get_payload(nlh);
	if (g->cmd != ACTRACK_CMD_DEATH && g->cmd != ACTRACK_CMD_GET_DEATHS)
		return -EBADMSG;
	attrs = mnl_nlmsg_get_payload_offset(nlh, GENL_HDRLEN);
	alen = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

	/* Pass 1 validates everything but the contents of threads and
	 * modules and counts them, so that pass 2 allocates once, bounded. */
	memset(&c, 0, sizeof(c));
	c.d = d;
	c.max_threads = ACTRACK_DEATH_MAX_THREADS;
	c.max_modules = ACTRACK_DEATH_MAX_MODULES;
	c.max_stacks = ACTRACK_DEATH_MAX_STACKS;
	ret = mon_walk(attrs, alen, mon_death_attr, &c);
	if (ret)
		goto bad;
	if (!(c.seen & (1U << ACTRACK_A_PID)))
		goto bad;
	ret = mon_fill_status(&c);
	if (ret)
		goto bad;
	if (c.nr_threads || c.nr_modules || c.nr_stacks) {
		uint32_t nr = c.nr_threads, nr_mod = c.nr_modules;
		uint32_t nr_st = c.nr_stacks;

		if (nr)
			d->threads = calloc(nr, sizeof(*d->threads));
		if (nr_mod)
			d->modules = calloc(nr_mod, sizeof(*d->modules));
		if (nr_st)
			d->stacks = calloc(nr_st, sizeof(*d->stacks));
		if ((nr && !d->threads) || (nr_mod && !d->modules) ||
		    (nr_st && !d->stacks)) {
			__actrack_free_death(d);
			memset(d, 0, sizeof(*d));
			return -ENOMEM;
		}
		/* Now, so that a failure below frees the threads' values. */
		d->nr_threads = nr;
		memset(&c, 0, sizeof(c));
		c.d = d;
		c.pass2 = true;
		c.max_threads = nr;
		c.max_modules = nr_mod;
		c.max_stacks = nr_st;
		ret = mon_walk(attrs, alen, mon_death_attr, &c);
		if (ret || c.nr_threads != nr || c.nr_modules != nr_mod ||
		    c.nr_stacks != nr_st || mon_fill_status(&c))
			goto bad;
		d->nr_threads = nr;
		d->nr_modules = nr_mod;
	}
	return 0;
bad:
	__actrack_free_death(d);
	memset(d, 0, sizeof(*d));
	return -EBADMSG;
}

struct stats_ctx {
	struct actrack_kstats *st;
	bool found;
};

static int mon_stats_attr(const struct nlattr *attr, void *data)
{
	struct stats_ctx *c = data;
	struct actrack_kstats *st = c->st;
	uint16_t type = mnl_attr_get_type(attr);
	uint64_t v;

	if (type > ACTRACK_S_MAX || type == ACTRACK_S_UNSPEC ||
	    type == ACTRACK_S_PAD)
		return 0;
	if (mon_check(attr, MNL_TYPE_U64, 0))
		return -EBADMSG;
	v = mnl_attr_get_u64(attr);
	switch (type) {
	case ACTRACK_S_ARENAS:		st->arenas = v; break;
	case ACTRACK_S_BYTES_USED:	st->bytes_used = v; break;
	case ACTRACK_S_ARENA_SIZE:	st->arena_size = v; break;
	case ACTRACK_S_ATTACHED:	st->attached = v; break;
	case ACTRACK_S_CLEANUPS:	st->cleanups = v; break;
	case ACTRACK_S_RECORDS_FREED:	st->records_freed = v; break;
	case ACTRACK_S_CORRUPTION:	st->corruption = v; break;
	case ACTRACK_S_REPORTS_SENT:	st->reports_sent = v; break;
	case ACTRACK_S_REPORTS_DROPPED:	st->reports_dropped = v; break;
	case ACTRACK_S_BYTES_FREE:	st->bytes_free = v; break;
	}
	return 0;
}

static int mon_stats_top(const struct nlattr *attr, void *data)
{
	struct stats_ctx *c = data;

	if (mnl_attr_get_type(attr) != ACTRACK_A_STATS)
		return 0;
	if (c->found || mon_check(attr, MNL_TYPE_NESTED, 0))
		return -EBADMSG;
	c->found = true;
	return mon_walk(mnl_attr_get_payload(attr),
			mnl_attr_get_payload_len(attr), mon_stats_attr, c);
}

int __actrack_parse_stats(const struct nlmsghdr *nlh, size_t len,
			  struct actrack_kstats *st)
{
	struct actrack_kstats tmp = { 0 };
	struct stats_ctx c = { .st = &tmp };
	int ret;

	if (len < NLMSG_HDRLEN + GENL_HDRLEN || nlh->nlmsg_len > len ||
	    nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return -EBADMSG;
	ret = mon_walk(mnl_nlmsg_get_payload_offset(nlh, GENL_HDRLEN),
		       nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN,
		       mon_stats_top, &c);
	if (ret || !c.found)
		return -EBADMSG;
	*st = tmp;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Sockets                                                                 */
/* ---------------------------------------------------------------------- */

static struct mnl_socket *mon_socket(size_t rcvbuf)
{
	struct mnl_socket *nl;
	int one = 1, sz = (int)rcvbuf;

	nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = errno;

		mnl_socket_close(nl);
		errno = err;
		return NULL;
	}
	/* Acks without the echoed request: we never look at it. */
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (rcvbuf) {
		/* FORCE ignores rmem_max but needs CAP_NET_ADMIN; the plain
		 * request is capped by rmem_max.  Either is fine. */
		if (setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET,
			       SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
			setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET,
				   SO_RCVBUF, &sz, sizeof(sz));
	}
	return nl;
}

static uint64_t mon_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t mon_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int mon_grow(struct actrack_monitor *m, size_t want)
{
	char *p;

	if (want <= m->buf_len)
		return 0;
	if (want > MON_BUF_MAX)
		return -EMSGSIZE;
	p = realloc(m->buf, want);
	if (!p)
		return -ENOMEM;
	m->buf = p;
	m->buf_len = want;
	return 0;
}

/*
 * Receive one datagram from the kernel into m->buf.  @timeout_ms as for
 * poll(); 0 = only what is pending.  Return: bytes, -EAGAIN (nothing within
 * the timeout), -ENOBUFS (the socket overflowed: datagrams were dropped),
 * -errno.  Datagrams not from the kernel and oversize ones are consumed and
 * skipped.
 */
static ssize_t mon_recv(struct actrack_monitor *m, struct mnl_socket *nl,
			int timeout_ms)
{
	int fd = mnl_socket_get_fd(nl);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct sockaddr_nl sa;
	struct iovec iov;
	struct msghdr msg;
	ssize_t n;
	int ret;

	for (;;) {
		ret = poll(&pfd, 1, timeout_ms);
		if (ret < 0)
			return -errno;
		if (ret == 0)
			return -EAGAIN;
		n = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		ret = mon_grow(m, (size_t)n);
		iov.iov_base = m->buf;
		iov.iov_len = m->buf_len;
		memset(&msg, 0, sizeof(msg));
		msg.msg_name = &sa;
		msg.msg_namelen = sizeof(sa);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		m->rx_ns = mon_realtime_ns();
		if (ret || (msg.msg_flags & MSG_TRUNC) ||
		    msg.msg_namelen != sizeof(sa) || sa.nl_family != AF_NETLINK ||
		    sa.nl_pid != 0) {
			/* Too big to keep, or not from the kernel. */
			m->malformed++;
			continue;
		}
		return n;
	}
}

static void mon_put_req(struct actrack_monitor *m, char *buf, uint8_t cmd,
			uint16_t flags, bool all_uids)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = m->family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++m->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = ACTRACK_GENL_VERSION;
	if (all_uids)
		mnl_attr_put(nlh, ACTRACK_A_ALL_UIDS, 0, NULL);
}

/*
 * Keep an unsolicited report received while waiting for an answer.  One
 * that cannot be kept (the stash is full, no memory) is a report lost as
 * surely as one the kernel dropped: the same recovery through the ring,
 * and the same gap said, as after ENOBUFS.
 */
static void mon_stash(struct actrack_monitor *m, const struct nlmsghdr *nlh)
{
	struct mon_stash *s = NULL;

	if (m->nr_stash < MON_STASH_MAX)
		s = malloc(sizeof(*s) + nlh->nlmsg_len);
	if (!s) {
		if (!m->overflow_ns)
			m->overflow_ns = mon_realtime_ns();
		return;
	}
	s->next = NULL;
	s->rx_ns = m->rx_ns;
	memcpy(s->nlh, nlh, nlh->nlmsg_len);
	*m->stash_tail = s;
	m->stash_tail = &s->next;
	m->nr_stash++;
}

typedef int (*mon_reply_fn)(struct actrack_monitor *m,
			    const struct nlmsghdr *nlh, void *arg);

/*
 * Send the request in @req and read until its ack (doit) or NLMSG_DONE
 * (dump), handing each family message of our sequence to @fn.  Messages of
 * another sequence are deaths (seq 0): stashed when @stash, else dropped.
 * Return: 0 or the first negative error (kernel errno as is, -ETIMEDOUT).
 */
static int mon_transact(struct actrack_monitor *m, struct mnl_socket *nl,
			struct nlmsghdr *req, bool dump, mon_reply_fn fn,
			void *arg, bool stash)
{
	uint32_t seq = req->nlmsg_seq;
	uint32_t portid = mnl_socket_get_portid(nl);
	int err = 0;

	if (mnl_socket_sendto(nl, req, req->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		const struct nlmsghdr *nlh;
		ssize_t n;
		int rem;

		n = mon_recv(m, nl, MON_REPLY_TIMEOUT_MS);
		if (n == -EAGAIN)
			return -ETIMEDOUT;
		/* Reports dropped on the subscribed socket (the SUBSCRIBE of
		 * a reload): recovered by the next dispatch. */
		if (n == -ENOBUFS && stash) {
			if (!m->overflow_ns)
				m->overflow_ns = mon_realtime_ns();
			continue;
		}
		if (n < 0)
			return (int)n;
		rem = (int)n;
		for (nlh = (const struct nlmsghdr *)m->buf;
		     mnl_nlmsg_ok(nlh, rem); nlh = mnl_nlmsg_next(nlh, &rem)) {
			if (nlh->nlmsg_seq != seq ||
			    (nlh->nlmsg_pid && nlh->nlmsg_pid != portid)) {
				/* Reports, and the controller's notices
				 * (a reload in the middle of a request). */
				if (stash && (nlh->nlmsg_type == m->family ||
					      nlh->nlmsg_type == GENL_ID_CTRL))
					mon_stash(m, nlh);
				continue;
			}
			switch (nlh->nlmsg_type) {
			case NLMSG_ERROR: {
				const struct nlmsgerr *e;

				if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
					return -EBADMSG;
				e = mnl_nlmsg_get_payload(nlh);
				/* error 0 is the ack; a kernel errno is
				 * passed through as is (-EPERM, ...). */
				if (e->error > 0 || e->error < -4095)
					return -EBADMSG;
				return e->error ? e->error : err;
			}
			case NLMSG_DONE:
				if (!dump)
					continue;
				/* The dump's own return value, if any. */
				if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int)) {
					int v;

					memcpy(&v, mnl_nlmsg_get_payload(nlh),
					       sizeof(v));
					if (v < 0 && v >= -4095)
						return v;
				}
				return err;
			case NLMSG_NOOP:
			case NLMSG_OVERRUN:
				continue;
			default:
				if (fn) {
					int r = fn(m, nlh, arg);

					if (r < 0 && !err)
						err = r;
				}
			}
		}
	}
}

static int mon_family_reply(struct actrack_monitor *m,
			    const struct nlmsghdr *nlh, void *arg)
{
	uint16_t *id = arg;
	const struct nlattr *attr;

	if (nlh->nlmsg_type != GENL_ID_CTRL ||
	    nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return -EBADMSG;
	mnl_attr_for_each(attr, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(attr) != CTRL_ATTR_FAMILY_ID)
			continue;
		if (mnl_attr_validate(attr, MNL_TYPE_U16) < 0)
			return -EBADMSG;
		*id = mnl_attr_get_u16(attr);
	}
	return 0;
}

/* Ask the controller about family @name on @nl; its answer goes to @fn. */
static int mon_get_family(struct actrack_monitor *m, struct mnl_socket *nl,
			  const char *name, mon_reply_fn fn, void *arg)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct genlmsghdr *g;

	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++m->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	return mon_transact(m, nl, nlh, false, fn, arg, false);
}

/* Generic netlink id of "actrack": -ENOENT when the module is not loaded. */
static int mon_resolve(struct actrack_monitor *m, struct mnl_socket *nl)
{
	uint16_t id = 0;
	int ret;

	ret = mon_get_family(m, nl, ACTRACK_GENL_NAME, mon_family_reply, &id);
	if (ret)
		return ret;
	if (id < NLMSG_MIN_TYPE)
		return -EBADMSG;
	m->family = id;
	return 0;
}

/* The controller's "notify" multicast group, from its GETFAMILY answer. */
static int mon_notify_grp(const struct nlattr *grp, uint32_t *id)
{
	const struct nlattr *a;
	uint32_t gid = 0;
	bool notify = false;

	if (mnl_attr_validate(grp, MNL_TYPE_NESTED) < 0)
		return -EBADMSG;
	mnl_attr_for_each_nested(a, grp) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_MCAST_GRP_ID:
			if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
				return -EBADMSG;
			gid = mnl_attr_get_u32(a);
			break;
		case CTRL_ATTR_MCAST_GRP_NAME:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
				return -EBADMSG;
			notify = !strcmp(mnl_attr_get_str(a), "notify");
			break;
		}
	}
	if (notify && gid)
		*id = gid;
	return 0;
}

static int mon_ctrl_reply(struct actrack_monitor *m,
			  const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *attr, *grp;
	int ret;

	if (nlh->nlmsg_type != GENL_ID_CTRL ||
	    nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return -EBADMSG;
	mnl_attr_for_each(attr, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(attr) != CTRL_ATTR_MCAST_GROUPS)
			continue;
		if (mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0)
			return -EBADMSG;
		mnl_attr_for_each_nested(grp, attr) {
			ret = mon_notify_grp(grp, arg);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Join nlctrl's "notify" group on @nl: family registrations and removals,
 * sent to every network namespace, open to unprivileged sockets.
 */
static int mon_watch_ctrl(struct actrack_monitor *m, struct mnl_socket *nl)
{
	uint32_t grp = 0;
	int ret;

	ret = mon_get_family(m, nl, "nlctrl", mon_ctrl_reply, &grp);
	if (ret)
		return ret;
	if (!grp)
		return -EBADMSG;
	if (mnl_socket_setsockopt(nl, NETLINK_ADD_MEMBERSHIP, &grp,
				  sizeof(grp)) < 0)
		return -errno;
	return 0;
}

/*
 * A notification of the controller, received at @rx_ns: only "actrack"
 * coming and going matters.  NEWFAMILY only marks the subscription to be
 * renewed: the caller is walking m->buf, which a request would reuse.
 */
static void mon_ctrl_notice(struct actrack_monitor *m,
			    const struct nlmsghdr *nlh, uint64_t rx_ns)
{
	const struct genlmsghdr *g;
	const struct nlattr *attr;
	const char *name = NULL;
	uint16_t id = 0;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		goto bad;
	g = mnl_nlmsg_get_payload(nlh);
	if (g->cmd != CTRL_CMD_NEWFAMILY && g->cmd != CTRL_CMD_DELFAMILY)
		return;		/* groups, ops: not ours to care */
	if (mon_walk(mnl_nlmsg_get_payload_offset(nlh, GENL_HDRLEN),
		     nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN,
		     NULL, NULL))
		goto bad;
	mnl_attr_for_each(attr, nlh, GENL_HDRLEN) {
		switch (mnl_attr_get_type(attr)) {
		case CTRL_ATTR_FAMILY_ID:
			if (mnl_attr_validate(attr, MNL_TYPE_U16) < 0)
				goto bad;
			id = mnl_attr_get_u16(attr);
			break;
		case CTRL_ATTR_FAMILY_NAME:
			if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
				goto bad;
			name = mnl_attr_get_str(attr);
			break;
		}
	}
	if (!name || strcmp(name, ACTRACK_GENL_NAME))
		return;
	if (g->cmd == CTRL_CMD_DELFAMILY) {
		m->resubscribe = false;
		if (m->down)
			return;
		m->down = true;
		memset(&m->gap, 0, sizeof(m->gap));
		m->gap.unloaded_ns = rx_ns;
		if (m->gap_fn)
			m->gap_fn(&m->gap, m->gap_arg);
		return;
	}
	if (id < NLMSG_MIN_TYPE)
		goto bad;
	/* An unload not seen (the socket overflowed) is still a gap. */
	if (!m->down)
		memset(&m->gap, 0, sizeof(m->gap));
	m->down = true;
	m->family = id;
	m->gap.loaded_ns = rx_ns;
	m->resubscribe = true;
	return;
bad:
	m->malformed++;
}

/* After NEWFAMILY: subscribe to the new instance, then close the gap. */
static int mon_resubscribe(struct actrack_monitor *m)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	int ret;

	m->resubscribe = false;
	/* A new instance numbers its reports afresh, in new rings. */
	m->sub_mono_ns = mon_mono_ns();
	free(m->seen);
	m->seen = NULL;
	m->nr_seen = 0;
	mon_put_req(m, req, ACTRACK_CMD_SUBSCRIBE, NLM_F_ACK,
		    m->flags & ACTRACK_MONITOR_ALL_UIDS);
	ret = mon_transact(m, m->nl, (struct nlmsghdr *)req, false, NULL,
			   NULL, true);
	/* Gone again already: its DELFAMILY is queued behind (or stashed),
	 * and the next NEWFAMILY brings us back here. */
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	m->down = false;
	m->gap.resubscribed_ns = mon_realtime_ns();
	if (m->gap_fn)
		m->gap_fn(&m->gap, m->gap_arg);
	memset(&m->gap, 0, sizeof(m->gap));
	return 0;
}

/* A socket for one request/answer, so that answers never mix with reports. */
static int mon_query(struct actrack_monitor *m, uint8_t cmd, bool dump,
		     mon_reply_fn fn, void *arg)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	int ret;

	nl = mon_socket(dump ? MON_RCVBUF : 0);
	if (!nl)
		return -errno;
	/*
	 * The kernel sizes each skb of a dump from the largest recvmsg()
	 * this socket has done, and fills the first one while handling the
	 * request: on a fresh socket that is a page, and a report alone in
	 * a page-sized skb is cut and marked truncated although it is
	 * whole in the ring.  One answered request (the family lookup,
	 * received into our 64 KiB buffer) first lets the dump use skbs of
	 * up to 32 KiB, the most a dump gets.
	 */
	if (dump) {
		ret = mon_resolve(m, nl);
		if (ret) {
			mnl_socket_close(nl);
			return ret;
		}
	}
	/* The kernel validates requests strictly: ALL_UIDS only where the
	 * command takes it. */
	mon_put_req(m, req, cmd, dump ? NLM_F_DUMP : NLM_F_ACK,
		    cmd == ACTRACK_CMD_GET_DEATHS &&
		    (m->flags & ACTRACK_MONITOR_ALL_UIDS));
	ret = mon_transact(m, nl, (struct nlmsghdr *)req, dump, fn, arg,
			   false);
	mnl_socket_close(nl);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* API                                                                     */
/* ---------------------------------------------------------------------- */

int actrack_monitor_open(uint32_t flags, struct actrack_monitor **out)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct actrack_monitor *m;
	int ret;

	if (!out || (flags & ~ACTRACK_MONITOR_ALL_UIDS))
		return -EINVAL;
	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->flags = flags;
	m->stash_tail = &m->stash;
	m->seq = (uint32_t)time(NULL);
	ret = mon_grow(m, MON_BUF_INITIAL);
	if (ret)
		goto err_free;
	m->nl = mon_socket(MON_RCVBUF);
	if (!m->nl) {
		ret = -errno;
		goto err_free;
	}
	/* Watching first: a reload from here on is seen. */
	ret = mon_watch_ctrl(m, m->nl);
	if (ret)
		goto err_close;
	ret = mon_resolve(m, m->nl);
	if (ret)
		goto err_close;
	m->sub_mono_ns = mon_mono_ns();
	mon_put_req(m, req, ACTRACK_CMD_SUBSCRIBE, NLM_F_ACK,
		    flags & ACTRACK_MONITOR_ALL_UIDS);
	ret = mon_transact(m, m->nl, (struct nlmsghdr *)req, false, NULL,
			   NULL, true);
	if (ret)
		goto err_close;
	*out = m;
	return 0;

err_close:
	actrack_monitor_close(m);
	return ret;
err_free:
	free(m->buf);
	free(m);
	return ret;
}

int actrack_monitor_fd(struct actrack_monitor *m)
{
	if (!m)
		return -EINVAL;
	return mnl_socket_get_fd(m->nl);
}

static struct mon_seen *mon_seen_find(struct actrack_monitor *m, uint32_t uid)
{
	for (uint32_t i = 0; i < m->nr_seen; i++)
		if (m->seen[i].uid == uid)
			return &m->seen[i];
	return NULL;
}

/* Delivered already (live or replayed after an overflow)?  A uid's
 * reports come in the order of their numbers. */
static bool mon_seen_before(struct actrack_monitor *m,
			    const struct actrack_death *d)
{
	const struct mon_seen *s = mon_seen_find(m, d->uid);

	return s && d->seq && d->seq <= s->seq && d->exit_time_ns <= s->exit_ns;
}

static void mon_seen_note(struct actrack_monitor *m,
			  const struct actrack_death *d)
{
	struct mon_seen *s = mon_seen_find(m, d->uid);

	if (!d->seq)
		return;		/* a module without numbers: nothing to do */
	if (!s) {
		s = realloc(m->seen, (m->nr_seen + 1) * sizeof(*s));
		if (!s)
			return;	/* at worst, a report replayed twice */
		m->seen = s;
		s = &m->seen[m->nr_seen++];
		s->uid = d->uid;
		s->exit_ns = 0;
	}
	s->seq = d->seq;
	if (d->exit_time_ns > s->exit_ns)
		s->exit_ns = d->exit_time_ns;
}

/*
 * Parse and deliver one report; @live: from the subscription (counted for
 * the overflow recovery, never delivered twice), else from the ring at the
 * caller's request.  Return 1 if delivered, 0 if skipped.
 */
static int mon_deliver(struct actrack_monitor *m, const struct nlmsghdr *nlh,
		       bool live, actrack_exit_fn fn, void *arg)
{
	struct actrack_death d;

	if (nlh->nlmsg_type != m->family) {
		m->malformed++;
		return 0;
	}
	if (__actrack_parse_death(nlh, nlh->nlmsg_len, &d)) {
		m->malformed++;
		return 0;
	}
	if (live && mon_seen_before(m, &d)) {
		/* Replayed from the ring after an overflow. */
		__actrack_free_death(&d);
		return 0;
	}
	if (live)
		mon_seen_note(m, &d);
	if (fn)
		fn(&d, arg);
	__actrack_free_death(&d);
	return 1;
}

/* One uid's part of a ring replay after an overflow. */
struct mon_replay_uid {
	uint32_t uid;
	bool known;		/* base_seq: the last report delivered */
	bool covered;		/* the ring reaches back to it (or before us) */
	bool unnumbered;	/* reports without numbers: cannot tell */
	uint64_t base_seq;
	uint64_t first_new;	/* first replayed report's number, 0: none */
	uint32_t recovered;
};

struct mon_replay {
	actrack_exit_fn fn;
	void *arg;
	int count;
	int err;
	struct mon_replay_uid *u;
	uint32_t nr_u;
};

static struct mon_replay_uid *mon_replay_uid(struct actrack_monitor *m,
					     struct mon_replay *r, uint32_t uid)
{
	const struct mon_seen *s;
	struct mon_replay_uid *u;

	for (uint32_t i = 0; i < r->nr_u; i++)
		if (r->u[i].uid == uid)
			return &r->u[i];
	u = realloc(r->u, (r->nr_u + 1) * sizeof(*u));
	if (!u)
		return NULL;
	r->u = u;
	u = &r->u[r->nr_u++];
	memset(u, 0, sizeof(*u));
	u->uid = uid;
	s = mon_seen_find(m, uid);
	if (s) {
		u->known = true;
		u->base_seq = s->seq;
	}
	return u;
}

/* A report of the ring (oldest first per uid): replay it if it was missed. */
static int mon_replay_reply(struct actrack_monitor *m,
			    const struct nlmsghdr *nlh, void *arg)
{
	struct mon_replay *r = arg;
	struct mon_replay_uid *u;
	struct actrack_death d;

	if (nlh->nlmsg_type != m->family ||
	    __actrack_parse_death(nlh, nlh->nlmsg_len, &d)) {
		m->malformed++;
		return 0;
	}
	u = mon_replay_uid(m, r, d.uid);
	if (!u) {
		r->err = -ENOMEM;
	} else if (!d.seq) {
		u->unnumbered = true;
	} else if (mon_seen_before(m, &d) || d.exit_time_ns < m->sub_mono_ns) {
		/* Delivered, or died before we subscribed: nothing missed
		 * from here back. */
		u->covered = true;
	} else {
		/* Numbered afresh (the ring was evicted): the base says
		 * nothing about what came before. */
		if (u->known && d.seq <= u->base_seq)
			u->known = false;
		if (!u->first_new)
			u->first_new = d.seq;
		u->recovered++;
		r->count++;
		mon_seen_note(m, &d);
		if (r->fn)
			r->fn(&d, r->arg);
	}
	__actrack_free_death(&d);
	return 0;
}

static void mon_overflow_gap(struct actrack_monitor *m, uint32_t uid,
			     uint64_t first, uint64_t last, uint32_t recovered)
{
	struct actrack_monitor_gap g = {
		.reason = ACTRACK_GAP_OVERFLOW, .uid = uid,
		.overflow_ns = m->overflow_ns, .first_lost = first,
		.last_lost = last, .recovered = recovered,
	};

	if (m->gap_fn)
		m->gap_fn(&g, m->gap_arg);
}

/*
 * After ENOBUFS, once what was queued is read: deliver what the ring still
 * has of the dropped reports, then tell the gap callback per uid.
 */
static void mon_recover(struct actrack_monitor *m, actrack_exit_fn fn,
			void *arg, int *count)
{
	struct mon_replay r = { .fn = fn, .arg = arg };
	uint16_t family = m->family;
	bool told = false;
	int ret;

	ret = mon_query(m, ACTRACK_CMD_GET_DEATHS, true, mon_replay_reply, &r);
	*count += r.count;
	if (!ret && m->family != family && !m->down) {
		/* Reloaded, and both notices were among the dropped: our
		 * subscription went with the old instance. */
		memset(&m->gap, 0, sizeof(m->gap));
		m->gap.loaded_ns = m->overflow_ns;
		m->down = true;
		m->resubscribe = true;
	}
	if (ret || r.err) {
		mon_overflow_gap(m, ACTRACK_GAP_ANY_UID, 0, UINT64_MAX,
				 (uint32_t)r.count);
		goto out;
	}
	for (uint32_t i = 0; i < r.nr_u; i++) {
		const struct mon_replay_uid *u = &r.u[i];
		uint64_t first = 0, last = 0;

		if (u->unnumbered) {
			last = UINT64_MAX;
		} else if (!u->covered && u->first_new) {
			if (u->known && u->first_new > u->base_seq + 1) {
				first = u->base_seq + 1;
				last = u->first_new - 1;
			} else if (!u->known && u->first_new > 1) {
				last = u->first_new - 1;
			}
		}
		if (!u->recovered && !last)
			continue;
		mon_overflow_gap(m, u->uid, first, last, u->recovered);
		told = true;
	}
	/* Nothing the ring knows of was missed; the overflow is still said. */
	if (!told)
		mon_overflow_gap(m, ACTRACK_GAP_ANY_UID, 0, 0, 0);
out:
	free(r.u);
	m->overflow_ns = 0;
}

/* One message of the subscribed socket: a report or a controller notice. */
static void mon_handle(struct actrack_monitor *m, const struct nlmsghdr *nlh,
		       uint64_t rx_ns, actrack_exit_fn fn, void *arg,
		       int *count)
{
	if (nlh->nlmsg_type < NLMSG_MIN_TYPE)
		return;			/* late ack, noop */
	if (nlh->nlmsg_type == GENL_ID_CTRL)
		mon_ctrl_notice(m, nlh, rx_ns);
	else
		*count += mon_deliver(m, nlh, true, fn, arg);
}

int actrack_monitor_dispatch(struct actrack_monitor *m, int timeout_ms,
			     actrack_exit_fn fn, void *arg)
{
	int count = 0, ret;
	ssize_t n;

	if (!m)
		return -EINVAL;
	/* Wait only if nothing was delivered yet; then drain what is pending
	 * without blocking. */
	for (;;) {
		const struct nlmsghdr *nlh;
		int rem;

		/* What a request stashed (the SUBSCRIBE of open or of a
		 * reload), in the order it came. */
		while (m->stash) {
			struct mon_stash *s = m->stash;

			m->stash = s->next;
			if (!m->stash)
				m->stash_tail = &m->stash;
			m->nr_stash--;
			mon_handle(m, s->nlh, s->rx_ns, fn, arg, &count);
			free(s);
			if (m->resubscribe) {
				ret = mon_resubscribe(m);
				if (ret)
					return ret;
			}
		}
		n = mon_recv(m, m->nl, count || m->overflow_ns ? 0 :
					timeout_ms);
		if (n == -ENOBUFS) {
			/* Reports were dropped: read those queued before
			 * them first, then the ring (top of the file). */
			if (!m->overflow_ns)
				m->overflow_ns = mon_realtime_ns();
			continue;
		}
		if (n == -EAGAIN && m->overflow_ns) {
			mon_recover(m, fn, arg, &count);
			if (m->resubscribe) {
				ret = mon_resubscribe(m);
				if (ret)
					return ret;
			}
			continue;
		}
		if (n == -EAGAIN)
			return count;
		if (n < 0)
			return (int)n;
		rem = (int)n;
		for (nlh = (const struct nlmsghdr *)m->buf;
		     mnl_nlmsg_ok(nlh, rem); nlh = mnl_nlmsg_next(nlh, &rem))
			mon_handle(m, nlh, m->rx_ns, fn, arg, &count);
		if (m->resubscribe) {
			ret = mon_resubscribe(m);
			if (ret)
				return ret;
		}
		if (!count && timeout_ms > 0) {
			/* Only skipped messages: keep waiting, but do not
			 * restart the full timeout forever. */
			timeout_ms = 0;
		}
	}
}

int actrack_monitor_set_gap_fn(struct actrack_monitor *m, actrack_gap_fn fn,
			       void *arg)
{
	if (!m)
		return -EINVAL;
	m->gap_fn = fn;
	m->gap_arg = arg;
	return 0;
}

struct recent_ctx {
	actrack_exit_fn fn;
	void *arg;
	int count;
};

static int mon_recent_reply(struct actrack_monitor *m,
			    const struct nlmsghdr *nlh, void *arg)
{
	struct recent_ctx *c = arg;

	c->count += mon_deliver(m, nlh, false, c->fn, c->arg);
	return 0;
}

int actrack_monitor_recent(struct actrack_monitor *m, actrack_exit_fn fn,
			   void *arg)
{
	struct recent_ctx c = { .fn = fn, .arg = arg };
	int ret;

	if (!m)
		return -EINVAL;
	ret = mon_query(m, ACTRACK_CMD_GET_DEATHS, true, mon_recent_reply, &c);
	return ret ? ret : c.count;
}

/* ---------------------------------------------------------------------- */
/* The exit callback on the module                                         */
/* ---------------------------------------------------------------------- */

struct exit_wait {
	uint32_t pid;
	uint64_t start_ticks;
	actrack_exit_fn fn;
	void *arg;
	bool done;
};

static void exit_wait_one(const struct actrack_death *d, void *arg)
{
	struct exit_wait *w = arg;

	/* (pid, start time): a reused pid's report is not this child's. */
	if (w->done || d->pid != w->pid || d->start_ticks != w->start_ticks)
		return;
	w->done = true;
	w->fn(d, w->arg);
}

static uint64_t exit_wait_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * With the module, the kernel builds the report (from its own copy of the
 * child's records, which it frees) in a work item after the exit, so after
 * waitpid() it may be in the ring already or still to come.  Subscribed
 * first and the ring read second, no moment is missed; the wait is bounded.
 */
int __actrack_monitor_exit_report(uint32_t pid, uint64_t start_ticks,
				  int timeout_ms, actrack_exit_fn fn,
				  void *arg)
{
	struct exit_wait w = {
		.pid = pid, .start_ticks = start_ticks, .fn = fn, .arg = arg,
	};
	struct actrack_monitor *m;
	uint64_t end = exit_wait_now_ms() + (uint64_t)timeout_ms;
	int ret;

	ret = actrack_monitor_open(0, &m);
	if (ret)
		return ret;
	ret = actrack_monitor_recent(m, exit_wait_one, &w);
	while (!w.done) {
		uint64_t now = exit_wait_now_ms();

		if (now >= end)
			break;
		ret = actrack_monitor_dispatch(m, (int)(end - now),
					       exit_wait_one, &w);
		if (ret < 0 && ret != -EINTR && ret != -ENOBUFS)
			break;
	}
	actrack_monitor_close(m);
	if (w.done)
		return 0;
	return ret < 0 && ret != -EINTR && ret != -ENOBUFS ? ret : -ETIMEDOUT;
}

struct stats_reply {
	struct actrack_kstats st;
	bool got;
};

static int mon_stats_reply(struct actrack_monitor *m,
			   const struct nlmsghdr *nlh, void *arg)
{
	struct stats_reply *r = arg;
	int ret;

	if (nlh->nlmsg_type != m->family)
		return 0;
	ret = __actrack_parse_stats(nlh, nlh->nlmsg_len, &r->st);
	if (!ret)
		r->got = true;
	return ret;
}

int actrack_monitor_stats(struct actrack_monitor *m, struct actrack_kstats *st)
{
	struct stats_reply r = { .got = false };
	int ret;

	if (!m || !st)
		return -EINVAL;
	ret = mon_query(m, ACTRACK_CMD_GET_STATS, false, mon_stats_reply, &r);
	if (ret)
		return ret;
	if (!r.got)
		return -EBADMSG;	/* acked without an answer */
	*st = r.st;
	return 0;
}

void actrack_monitor_close(struct actrack_monitor *m)
{
	char req[MNL_SOCKET_BUFFER_SIZE];

	if (!m)
		return;
	if (m->nl) {
		/* Best effort: closing the socket ends the subscription in
		 * the kernel anyway. */
		if (m->family) {
			mon_put_req(m, req, ACTRACK_CMD_UNSUBSCRIBE, 0, false);
			mnl_socket_sendto(m->nl, req,
					  ((struct nlmsghdr *)req)->nlmsg_len);
		}
		mnl_socket_close(m->nl);
	}
	while (m->stash) {
		struct mon_stash *s = m->stash;

		m->stash = s->next;
		free(s);
	}
	free(m->seen);
	free(m->buf);
	free(m);
}
