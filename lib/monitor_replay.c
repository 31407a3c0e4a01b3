// SPDX-License-Identifier: MIT
/*
 * The exit monitor's recovery from overflows of its socket.
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
#include <stdlib.h>
#include <string.h>

#include "monitor.h"

static struct mon_seen *mon_seen_find(struct actrack_monitor *m, uint32_t uid)
{
	for (uint32_t i = 0; i < m->nr_seen; i++)
		if (m->seen[i].uid == uid)
			return &m->seen[i];
	return NULL;
}

/* Delivered already (live or replayed after an overflow)?  A uid's
 * reports come in the order of their numbers. */
bool __actrack_mon_seen_before(struct actrack_monitor *m,
			       const struct actrack_death *d)
{
	const struct mon_seen *s = mon_seen_find(m, d->uid);

	return s && d->seq && d->seq <= s->seq && d->exit_time_ns <= s->exit_ns;
}

void __actrack_mon_seen_note(struct actrack_monitor *m,
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
	} else if (__actrack_mon_seen_before(m, &d) || d.exit_time_ns < m->sub_mono_ns) {
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
		__actrack_mon_seen_note(m, &d);
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
void __actrack_mon_recover(struct actrack_monitor *m, actrack_exit_fn fn,
			   void *arg, int *count)
{
	struct mon_replay r = { .fn = fn, .arg = arg };
	uint16_t family = m->family;
	bool told = false;
	int ret;

	ret = __actrack_mon_query(m, ACTRACK_CMD_GET_DEATHS, true, mon_replay_reply, &r);
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
