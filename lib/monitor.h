/* SPDX-License-Identifier: MIT */
/*
 * The exit monitor's state, shared by its subscription and dispatch
 * (lib/monitor.c), its netlink transactions (lib/monitor_socket.c) and its
 * recovery from overflows (lib/monitor_replay.c).  Internal.
 */
#ifndef ACTRACK_LIB_MONITOR_H
#define ACTRACK_LIB_MONITOR_H

#include <stdbool.h>
#include <stdint.h>
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
	/* Module reloads (see the top of lib/monitor.c). */
	actrack_gap_fn gap_fn;
	void *gap_arg;
	struct actrack_monitor_gap gap;	/* the open one */
	bool down;			/* DELFAMILY seen, not resubscribed */
	bool resubscribe;		/* NEWFAMILY seen, not yet acted on */
	/* Overflows (see lib/monitor_replay.c). */
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

typedef int (*mon_reply_fn)(struct actrack_monitor *m,
			    const struct nlmsghdr *nlh, void *arg);

/* Transactions (lib/monitor_socket.c). */

/* A netlink socket for generic netlink, SO_TIMESTAMP on, its receive
 * buffer @rcvbuf bytes (0: the default).  NULL with errno set. */
__actrack_hidden struct mnl_socket *__actrack_mon_socket(size_t rcvbuf);

/* m->buf at least @want bytes, at most MON_BUF_MAX.  Return 0 or -errno. */
__actrack_hidden int __actrack_mon_grow(struct actrack_monitor *m,
					size_t want);

/*
 * Receive one datagram from the kernel into m->buf.  @timeout_ms as for
 * poll(); 0 = only what is pending.  Return: bytes, -EAGAIN (nothing within
 * the timeout), -ENOBUFS (the socket overflowed: datagrams were dropped),
 * -errno.  Datagrams not from the kernel and oversize ones are consumed and
 * skipped.
 */
__actrack_hidden ssize_t __actrack_mon_recv(struct actrack_monitor *m,
					    struct mnl_socket *nl,
					    int timeout_ms);

/* An actrack request @cmd in @buf (MNL_SOCKET_BUFFER_SIZE bytes), with
 * the next sequence number, ACTRACK_A_ALL_UIDS when @all_uids. */
__actrack_hidden void __actrack_mon_put_req(struct actrack_monitor *m,
					    char *buf, uint8_t cmd,
					    uint16_t flags, bool all_uids);

/*
 * Send the request in @req and read until its ack (doit) or NLMSG_DONE
 * (dump), handing each family message of our sequence to @fn.  Messages of
 * another sequence are deaths (seq 0): stashed when @stash, else dropped.
 * Return: 0 or the first negative error (kernel errno as is, -ETIMEDOUT).
 */
__actrack_hidden int __actrack_mon_transact(struct actrack_monitor *m,
					    struct mnl_socket *nl,
					    struct nlmsghdr *req, bool dump,
					    mon_reply_fn fn, void *arg,
					    bool stash);

/* Ask the controller about family @name on @nl; its answer goes to @fn. */
__actrack_hidden int __actrack_mon_get_family(struct actrack_monitor *m,
					      struct mnl_socket *nl,
					      const char *name,
					      mon_reply_fn fn, void *arg);

/* m->family: the generic netlink id of "actrack".  -ENOENT when the
 * module is not loaded. */
__actrack_hidden int __actrack_mon_resolve(struct actrack_monitor *m,
					   struct mnl_socket *nl);

/* A socket for one request/answer (GET_DEATHS, GET_STATS), so that
 * answers never mix with reports.  Return: 0 or -errno. */
__actrack_hidden int __actrack_mon_query(struct actrack_monitor *m,
					 uint8_t cmd, bool dump,
					 mon_reply_fn fn, void *arg);

/* Overflow recovery (lib/monitor_replay.c). */
__actrack_hidden bool __actrack_mon_seen_before(struct actrack_monitor *m,
					const struct actrack_death *d);
__actrack_hidden void __actrack_mon_seen_note(struct actrack_monitor *m,
					const struct actrack_death *d);
__actrack_hidden void __actrack_mon_recover(struct actrack_monitor *m,
					    actrack_exit_fn fn, void *arg,
					    int *count);

#endif /* ACTRACK_LIB_MONITOR_H */
