// SPDX-License-Identifier: MIT
/*
 * The exit monitor's netlink transactions: its sockets, the receive
 * buffer, a request and the reading of its answer, the family lookup, and
 * the short-lived query socket of GET_DEATHS and GET_STATS.  Used by the
 * subscription and dispatch (lib/monitor.c) and by the overflow recovery
 * (lib/monitor_replay.c); it calls neither.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <libmnl/libmnl.h>

#include "internal.h"
#include "monitor.h"

struct mnl_socket *__actrack_mon_socket(size_t rcvbuf)
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

int __actrack_mon_grow(struct actrack_monitor *m, size_t want)
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

ssize_t __actrack_mon_recv(struct actrack_monitor *m, struct mnl_socket *nl,
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
		ret = __actrack_mon_grow(m, (size_t)n);
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
		m->rx_ns = __actrack_real_ns();
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

void __actrack_mon_put_req(struct actrack_monitor *m, char *buf, uint8_t cmd,
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
			m->overflow_ns = __actrack_real_ns();
		return;
	}
	s->next = NULL;
	s->rx_ns = m->rx_ns;
	memcpy(s->nlh, nlh, nlh->nlmsg_len);
	*m->stash_tail = s;
	m->stash_tail = &s->next;
	m->nr_stash++;
}

int __actrack_mon_transact(struct actrack_monitor *m, struct mnl_socket *nl,
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

		n = __actrack_mon_recv(m, nl, MON_REPLY_TIMEOUT_MS);
		if (n == -EAGAIN)
			return -ETIMEDOUT;
		/* Reports dropped on the subscribed socket (the SUBSCRIBE of
		 * a reload): recovered by the next dispatch. */
		if (n == -ENOBUFS && stash) {
			if (!m->overflow_ns)
				m->overflow_ns = __actrack_real_ns();
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

int __actrack_mon_get_family(struct actrack_monitor *m, struct mnl_socket *nl,
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
	return __actrack_mon_transact(m, nl, nlh, false, fn, arg, false);
}

int __actrack_mon_resolve(struct actrack_monitor *m, struct mnl_socket *nl)
{
	uint16_t id = 0;
	int ret;

	ret = __actrack_mon_get_family(m, nl, ACTRACK_GENL_NAME,
				       mon_family_reply, &id);
	if (ret)
		return ret;
	if (id < NLMSG_MIN_TYPE)
		return -EBADMSG;
	m->family = id;
	return 0;
}

int __actrack_mon_query(struct actrack_monitor *m, uint8_t cmd, bool dump,
			mon_reply_fn fn, void *arg)
{
	char req[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	int ret;

	nl = __actrack_mon_socket(dump ? MON_RCVBUF : 0);
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
		ret = __actrack_mon_resolve(m, nl);
		if (ret) {
			mnl_socket_close(nl);
			return ret;
		}
	}
	/* The kernel validates requests strictly: ALL_UIDS only where the
	 * command takes it. */
	__actrack_mon_put_req(m, req, cmd, dump ? NLM_F_DUMP : NLM_F_ACK,
			      cmd == ACTRACK_CMD_GET_DEATHS &&
			      (m->flags & ACTRACK_MONITOR_ALL_UIDS));
	ret = __actrack_mon_transact(m, nl, (struct nlmsghdr *)req, dump, fn, arg,
				     false);
	mnl_socket_close(nl);
	return ret;
}
