/* SPDX-License-Identifier: MIT */
/*
 * The exit monitor's state, shared by its sockets (lib/monitor.c) and its
 * recovery from overflows (lib/monitor_replay.c).  Internal.
 */
#ifndef ACTRACK_LIB_MONITOR_H
#define ACTRACK_LIB_MONITOR_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/netlink.h>
#include <libmnl/libmnl.h>

#include "internal.h"

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
