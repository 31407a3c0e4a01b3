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
 * before use, by the parser of lib/report_parse.c.  A message that does
 * not parse is skipped whole and counted; a partial report is never
 * delivered.
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
 * Requests and their answers: lib/monitor_socket.c.  Overflows of the
 * socket: lib/monitor_replay.c.
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
#include "monitor.h"
#include "report_parse.h"


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

	ret = __actrack_mon_get_family(m, nl, "nlctrl", mon_ctrl_reply, &grp);
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
	if (__actrack_rp_walk(mnl_nlmsg_get_payload_offset(nlh, GENL_HDRLEN),
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
	m->sub_mono_ns = __actrack_mono_ns();
	free(m->seen);
	m->seen = NULL;
	m->nr_seen = 0;
	__actrack_mon_put_req(m, req, ACTRACK_CMD_SUBSCRIBE, NLM_F_ACK,
			      m->flags & ACTRACK_MONITOR_ALL_UIDS);
	ret = __actrack_mon_transact(m, m->nl, (struct nlmsghdr *)req, false, NULL,
				     NULL, true);
	/* Gone again already: its DELFAMILY is queued behind (or stashed),
	 * and the next NEWFAMILY brings us back here. */
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	m->down = false;
	m->gap.resubscribed_ns = __actrack_real_ns();
	if (m->gap_fn)
		m->gap_fn(&m->gap, m->gap_arg);
	memset(&m->gap, 0, sizeof(m->gap));
	return 0;
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
	ret = __actrack_mon_grow(m, MON_BUF_INITIAL);
	if (ret)
		goto err_free;
	m->nl = __actrack_mon_socket(MON_RCVBUF);
	if (!m->nl) {
		ret = -errno;
		goto err_free;
	}
	/* Watching first: a reload from here on is seen. */
	ret = mon_watch_ctrl(m, m->nl);
	if (ret)
		goto err_close;
	ret = __actrack_mon_resolve(m, m->nl);
	if (ret)
		goto err_close;
	m->sub_mono_ns = __actrack_mono_ns();
	__actrack_mon_put_req(m, req, ACTRACK_CMD_SUBSCRIBE, NLM_F_ACK,
			      flags & ACTRACK_MONITOR_ALL_UIDS);
	ret = __actrack_mon_transact(m, m->nl, (struct nlmsghdr *)req, false, NULL,
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
	if (live && __actrack_mon_seen_before(m, &d)) {
		/* Replayed from the ring after an overflow. */
		__actrack_free_death(&d);
		return 0;
	}
	if (live)
		__actrack_mon_seen_note(m, &d);
	if (fn)
		fn(&d, arg);
	__actrack_free_death(&d);
	return 1;
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
		n = __actrack_mon_recv(m, m->nl, count || m->overflow_ns ? 0 :
				       timeout_ms);
		if (n == -ENOBUFS) {
			/* Reports were dropped: read those queued before
			 * them first, then the ring (lib/monitor_replay.c). */
			if (!m->overflow_ns)
				m->overflow_ns = __actrack_real_ns();
			continue;
		}
		if (n == -EAGAIN && m->overflow_ns) {
			__actrack_mon_recover(m, fn, arg, &count);
			if (m->resubscribe) {
				ret = mon_resubscribe(m);
				if (ret)
					return ret;
			}
			/* No gap callback: a loss is never silent, so the
			 * overflow is told as it was before the recovery. */
			if (!m->gap_fn)
				return -ENOBUFS;
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
	ret = __actrack_mon_query(m, ACTRACK_CMD_GET_DEATHS, true,
				  mon_recent_reply, &c);
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
	if (w->done || d->process.pid != w->pid ||
	    d->process.start_ticks != w->start_ticks)
		return;
	w->done = true;
	w->fn(d, w->arg);
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
	uint64_t end = __actrack_mono_ns() / 1000000 + (uint64_t)timeout_ms;
	int ret;

	ret = actrack_monitor_open(0, &m);
	if (ret)
		return ret;
	ret = actrack_monitor_recent(m, exit_wait_one, &w);
	while (!w.done) {
		uint64_t now = __actrack_mono_ns() / 1000000;

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
	ret = __actrack_mon_query(m, ACTRACK_CMD_GET_STATS, false,
				  mon_stats_reply, &r);
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
			__actrack_mon_put_req(m, req, ACTRACK_CMD_UNSUBSCRIBE, 0, false);
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
