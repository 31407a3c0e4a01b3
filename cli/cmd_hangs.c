// SPDX-License-Identifier: MIT
/*
 * actrack hangs: threads stuck in a wait, and the deadlocks among them.
 *
 * A wait that is merely long is not a hang: a thread reading a slow pipe
 * may sit in one io-wait for minutes while it keeps making progress.  So
 * we take two snapshots an interval apart and look only at threads whose
 * innermost activity is a wait older than the threshold that did not move
 * in between: same depth and the same innermost activity (time, origin,
 * object, info), so a thread that updates its wait (actrack_change():
 * bytes read so far) or pushes and pops above it is left alone.
 *
 * Each such wait then gets a verdict (verdict.c for one wait on its own:
 * idle, owner unknown, dead, stale), and a wait for tracked owners (a
 * lock's holders, a joined thread, a child) the verdict of its owners in
 * the wait-for graph (waitgraph.c): a deadlock when it is in a cycle, a
 * hang when an owner is hung or shows no progress (its activity stack and
 * its CPU time did not change between the snapshots), blocked when an
 * owner progresses; a join or process wait for an idle owner is idle.
 * Only hangs and deadlocks are hangs (exit 3); long waits whose owner
 * cannot be seen are listed apart.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include "cli.h"
#include "hangs.h"
#include "journal.h"
#include "json.h"
#include "render.h"
#include "stacks.h"
#include "symbolize.h"
#include "verdict.h"
#include "waitgraph.h"

#define NO_NODE		UINT32_MAX
#define MAX_HOPS	16
#define MAX_PIDS	64

/* A node's verdict and the owner that decided it. */
struct judged {
	enum verdict v;
	uint8_t state;		/* 0 new, 1 on the stack, 2 done */
	bool in_scope;
	uint32_t next;		/* the owner that decided, or NO_NODE */
	bool follow;		/* why is that owner's own verdict: its
				 * chain goes on */
	char why[192];		/* of the wait alone; or, with next, what
				 * decided about that owner */
};

struct scope {
	uint32_t nr_pids;
	uint32_t pids[MAX_PIDS];
	const char *comm;		/* NULL: any */
	bool have_uid;
	uint32_t uid;
};

struct hangs {
	const struct actrack_snapshot *prev, *cur;
	uint64_t now, min_age_ns;
	uint32_t interval_ms;
	bool other_boot;
	bool saved_image;		/* one moment: no progress check */
	bool live;			/* /proc shows its processes */
	bool all;			/* --all: every judged wait */
	bool unknown_is_hang;		/* --unknown-is-hang */
	bool watching;			/* --watch: snapshot errors once */
	bool all_users;			/* --all-users: every uid's arena */
	bool selected;			/* read @uid's arena (the module) */
	uint32_t uid;
	int snap_err;			/* the last one said, or 0 */
	int snap_ret;			/* the last snapshot's: 0, -errno */
	struct scope scope;
	struct symbolizer *sym;
	struct stacks *stacks;		/* --stacks, else NULL */
	struct waitgraph g;
	struct verdict_env env;
	struct judged *nodes;		/* [g.nr_threads] */
	uint64_t *prev_cpu;		/* CPU ticks of prev's threads, by
					 * prev_first[process] + thread */
	uint32_t *prev_first;
	uint32_t nr_hung, nr_unknown, nr_other;
};

/* Process @p of one snapshot in @s, another: the same pid, start time
 * and pid namespace (two containers may each have a pid 7 started in the
 * same tick). */
static const struct actrack_snap_process *
find_process(const struct actrack_snapshot *s,
	     const struct actrack_snap_process *p)
{
	uint32_t lo = 0, hi = s->nr_processes;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct actrack_snap_process *q = &s->processes[mid];

		if (q->pid < p->pid ||
		    (q->pid == p->pid && q->start_ticks < p->start_ticks))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < s->nr_processes; lo++) {
		const struct actrack_snap_process *q = &s->processes[lo];

		if (q->pid != p->pid || q->start_ticks != p->start_ticks)
			break;
		if (q->pid_ns == p->pid_ns)
			return q;
	}
	return NULL;
}

static const struct actrack_snap_thread *
find_thread(const struct actrack_snap_process *p, uint32_t tid)
{
	uint32_t lo = 0, hi = p->nr_threads;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->threads[mid].tid == tid)
			return &p->threads[mid];
		if (p->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool same_activity(const struct actrack_activity *x,
			  const struct actrack_activity *y)
{
	return x->type == y->type && x->time_ns == y->time_ns &&
	       x->origin == y->origin && x->object == y->object &&
	       x->info == y->info;
}


/* The same thread in the first snapshot, or NULL. */
static const struct actrack_snap_thread *
prev_thread(const struct hangs *h, const struct actrack_snap_process *p,
	    const struct actrack_snap_thread *t,
	    const struct actrack_snap_process **opp)
{
	const struct actrack_snap_process *op;

	op = find_process(h->prev, p);
	if (opp)
		*opp = op;
	return op ? find_thread(op, t->tid) : NULL;
}

/* Its stack did not move between the snapshots. */
static bool unmoved(const struct hangs *h,
		    const struct actrack_snap_process *p,
		    const struct actrack_snap_thread *t)
{
	const struct actrack_snap_thread *ot = prev_thread(h, p, t, NULL);

	/* New since the first snapshot, or unreadable then: not proven. */
	if (!ot || ot->torn || t->torn || ot->depth != t->depth ||
	    ot->version != t->version ||
	    ot->nr_activities != t->nr_activities)
		return false;
	if (!t->nr_activities)
		return true;
	return same_activity(&ot->activities[ot->nr_activities - 1].a,
			     &t->activities[t->nr_activities - 1].a);
}

static bool old_enough(const struct hangs *h, const struct actrack_activity *a)
{
	return a->time_ns <= h->now && h->now - a->time_ns >= h->min_age_ns;
}

/* ---- scope: --pid, --comm, --uid ----------------------------------------- */

/* The process's name as the kernel's comm: its main thread's name, else
 * its command's base name (15 bytes at most; the snapshot joins argv
 * with spaces, so argv[0] ends at the first one). */
static void process_comm(const struct actrack_snap_process *p, char *buf,
			 size_t size)
{
	size_t len, base = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; p->threads && i < p->nr_threads; i++) {
		if (p->threads[i].tid == p->pid) {
			snprintf(buf, size, "%.*s",
				 (int)sizeof(p->threads[i].name),
				 p->threads[i].name);
			return;
		}
	}
	if (!p->has_record)
		return;
	len = strcspn(p->cmdline, " ");
	for (size_t i = 0; i < len; i++)
		if (p->cmdline[i] == '/')
			base = i + 1;
	len -= base;
	snprintf(buf, size, "%.*s", (int)(len > 15 ? 15 : len),
		 p->cmdline + base);
}

static bool comm_is(const struct actrack_snap_process *p, const char *comm)
{
	char buf[40];

	process_comm(p, buf, sizeof(buf));
	return buf[0] && !strcmp(buf, comm);
}

static bool uid_is(const struct hangs *h, const struct actrack_snap_process *p,
		   uint32_t uid)
{
	char path[32];
	struct stat st;

	if (h->live && !cli_process_foreign(p)) {
		snprintf(path, sizeof(path), "/proc/%u", p->pid);
		if (!stat(path, &st))
			return st.st_uid == uid;
	}
	/* Gone, or not ours to see: the arena's uid wrote it. */
	return h->cur->header.uid == uid;
}

static bool in_scope(const struct hangs *h,
		     const struct actrack_snap_process *p)
{
	const struct scope *sc = &h->scope;
	bool pid_ok = !sc->nr_pids;

	for (uint32_t i = 0; i < sc->nr_pids; i++)
		pid_ok |= sc->pids[i] == p->pid;
	return pid_ok && (!sc->comm || comm_is(p, sc->comm)) &&
	       (!sc->have_uid || uid_is(h, p, sc->uid));
}

/* ---- verdicts ------------------------------------------------------------ */

/*
 * The wait-graph filter, for threads of the second snapshot: a wait (or a
 * sleep) older than the threshold that did not move gets its verdict on
 * its own; only a wait for tracked owners gets the graph's edges.
 */
static enum wg_use judge_wait(const struct actrack_snap_process *p,
			      const struct actrack_snap_thread *t,
			      uint32_t node, void *arg)
{
	struct hangs *h = arg;
	struct judged *n = &h->nodes[node];
	const struct actrack_activity *a;

	a = &t->activities[t->nr_activities - 1].a;
	n->next = NO_NODE;
	if (!verdict_is_wait(a->type) || !old_enough(h, a) ||
	    (!h->saved_image && !unmoved(h, p, t)))
		return WG_SKIP;
	n->in_scope = in_scope(h, p);
	n->v = verdict_of_wait(&h->env, p, t, a, n->why, sizeof(n->why));
	if (n->v == VERDICT_NONE)
		return WG_SKIP;
	return n->v == VERDICT_OWNED ? WG_EDGES : WG_LIST;
}

/* Did thread @i do anything between the snapshots (or within the
 * threshold): move its stack, start its innermost activity, use CPU? */
static bool progressed(const struct hangs *h, uint32_t i, char *why,
		       size_t len)
{
	const struct wg_thread *w = &h->g.threads[i];
	const struct actrack_snap_process *op;
	const struct actrack_snap_thread *ot;
	uint64_t now_ticks;
	char dur[32];

	ot = prev_thread(h, w->proc, w->thread, &op);
	if (!unmoved(h, w->proc, w->thread)) {
		snprintf(why, len, "its activity stack moved");
		return true;
	}
	if (w->thread->nr_activities &&
	    !old_enough(h, &w->thread->activities[
				w->thread->nr_activities - 1].a)) {
		snprintf(why, len, "it started its current activity less "
			 "than %s ago", cli_duration(dur, sizeof(dur),
						     h->min_age_ns));
		return true;
	}
	if (op && ot && verdict_cpu_ticks(w->proc->pid, w->thread->tid,
					  &now_ticks) &&
	    now_ticks != h->prev_cpu[h->prev_first[op - h->prev->processes] +
				     (uint32_t)(ot - op->threads)]) {
		snprintf(why, len, "it is using CPU");
		return true;
	}
	/* Less CPU than a clock tick over the interval, yet on a CPU now
	 * (a loaded machine): running is progress too. */
	if (verdict_thread_runs(w->proc->pid, w->thread->tid)) {
		snprintf(why, len, "it is running");
		return true;
	}
	snprintf(why, len, "shows no progress (its activity stack and CPU "
		 "time did not change over %u ms)", h->interval_ms);
	return false;
}

/* What a waiter makes of one owner, best first. */
enum owner_state {
	OWNER_PROGRESS,
	OWNER_IDLE,
	OWNER_UNKNOWN,
	OWNER_STUCK,		/* hung, deadlocked, or no progress */
	OWNER_GONE,		/* its process no longer runs */
};

static enum owner_state owner_state(struct hangs *h, uint32_t from,
				    uint32_t to, char *why, size_t len,
				    bool *follow)
{
	const struct wg_thread *w = &h->g.threads[to];
	const struct judged *o = &h->nodes[to];
	bool lock = h->g.threads[from].wait->a.type ==
		    ACTRACK_ACT_LOCK_ACQUIRE;
	const struct actrack_activity *inner;
	char p[160];

	*follow = false;
	if (!h->live) {
		snprintf(why, len, "cannot be checked");
		return OWNER_STUCK;
	}
	if (cli_process_foreign(w->proc)) {
		snprintf(why, len, "is in another pid namespace: its progress "
			 "cannot be checked");
		return OWNER_UNKNOWN;
	}
	if (!cli_process_running(w->proc))
		return OWNER_GONE;
	if (w->wait && o->v != VERDICT_NONE) {
		*follow = o->next != NO_NODE;
		switch (o->v) {
		case VERDICT_DEADLOCK:
			snprintf(why, len, "is in a deadlock");
			return OWNER_STUCK;
		case VERDICT_HANG:
			snprintf(why, len, "is hung");
			return OWNER_STUCK;
		case VERDICT_BLOCKED:
			snprintf(why, len, "is blocked on an owner that "
				 "progresses");
			return OWNER_PROGRESS;
		case VERDICT_UNKNOWN:
			if (o->next == NO_NODE)
				snprintf(why, len, "waits, owner unknown: "
					 "%.160s", o->why);
			else
				snprintf(why, len, "waits, owner unknown");
			return OWNER_UNKNOWN;
		case VERDICT_DEAD:
			return OWNER_GONE;
		case VERDICT_IDLE:
			/* A child or thread waiting for outside input is
			 * what its parent or joiner waits for too; a lock
			 * held across an idle wait is still held. */
			if (!lock) {
				if (o->next == NO_NODE)
					snprintf(why, len, "is idle (%.160s)",
						 o->why);
				else
					snprintf(why, len, "is idle");
				return OWNER_IDLE;
			}
			break;
		default:
			break;
		}
		*follow = false;
	}
	if (progressed(h, to, p, sizeof(p))) {
		snprintf(why, len, "makes progress: %s", p);
		return OWNER_PROGRESS;
	}
	inner = w->thread->nr_activities && !w->thread->torn &&
		w->thread->depth == w->thread->nr_activities ?
		&w->thread->activities[w->thread->nr_activities - 1].a : NULL;
	if (!lock && inner && inner->type == VERDICT_ACT_SLEEP) {
		snprintf(why, len, "is idle (a sleep)");
		return OWNER_IDLE;
	}
	if (lock && inner && inner->type == VERDICT_ACT_SLEEP)
		snprintf(why, len, "sleeps holding it, and %s", p);
	else
		snprintf(why, len, "%s", p);
	return OWNER_STUCK;
}

/* A wait for tracked owners, once the owners that are waits are done. */
static void judge_owned(struct hangs *h, uint32_t i)
{
	struct judged *n = &h->nodes[i];
	const struct wg_thread *w = &h->g.threads[i];
	uint32_t b = wg_out_begin(&h->g, i), e = wg_out_end(&h->g, i);
	enum owner_state best = OWNER_GONE;
	char why[192];
	bool follow;

	n->next = NO_NODE;
	if (w->in_cycle) {
		n->v = VERDICT_DEADLOCK;
		for (uint32_t k = b; k < e && n->next == NO_NODE; k++)
			if (h->g.threads[h->g.edges[k].to].in_cycle)
				n->next = h->g.edges[k].to;
		snprintf(n->why, sizeof(n->why), "a cycle: deadlock");
		n->follow = true;
		return;
	}
	for (uint32_t k = b; k < e; k++) {
		uint32_t to = h->g.edges[k].to;
		enum owner_state st = owner_state(h, i, to, why, sizeof(why),
						  &follow);

		if (st < best || (st == best && n->next == NO_NODE &&
				  st != OWNER_GONE)) {
			best = st;
			n->next = to;
			n->follow = follow;
			snprintf(n->why, sizeof(n->why), "%s", why);
		}
	}
	switch (best) {
	case OWNER_PROGRESS:
		n->v = VERDICT_BLOCKED;
		return;
	case OWNER_IDLE:
		n->v = VERDICT_IDLE;
		return;
	case OWNER_UNKNOWN:
		n->v = VERDICT_UNKNOWN;
		return;
	case OWNER_STUCK:
		n->v = VERDICT_HANG;
		return;
	case OWNER_GONE:
		break;
	}
	n->next = NO_NODE;
	/* No owner to look at: none is tracked, or all have exited. */
	if (!h->live) {
		n->v = VERDICT_HANG;
		snprintf(n->why, sizeof(n->why), "nothing can be checked");
		return;
	}
	/* No live tracked process to wait for (the records of the
	 * children a shell ran before stay in a file arena): one that is
	 * not tracked may be working. */
	if (w->wait->a.type == ACTRACK_ACT_PROCESS_WAIT &&
	    !cli_process_foreign(w->proc) &&
	    verdict_untracked_runs(w->proc->pid, w->wait->a.object, n->why,
				   sizeof(n->why))) {
		n->v = VERDICT_BLOCKED;
		return;
	}
	n->v = VERDICT_UNKNOWN;
	switch (w->wait->a.type) {
	case ACTRACK_ACT_LOCK_ACQUIRE:
		snprintf(n->why, sizeof(n->why), "%s", b == e ?
			 "no tracked thread holds the lock" :
			 "its holders no longer run");
		break;
	case ACTRACK_ACT_THREAD_JOIN:
		snprintf(n->why, sizeof(n->why), "%s", b == e ?
			 "the thread is not tracked" :
			 "the thread no longer runs");
		break;
	default:
		snprintf(n->why, sizeof(n->why), "%s", b == e ?
			 (w->wait->a.object ? "the process is not tracked" :
			  "no tracked child") :
			 "its tracked children no longer run");
		break;
	}
}

/* Every owned wait, owners first (an explicit stack: no recursion; the
 * waits outside cycles form a DAG). */
static int judge_all(struct hangs *h)
{
	uint32_t n = h->g.nr_threads, sp = 0;
	uint32_t *stack = malloc(((size_t)n + 1) * sizeof(*stack));

	if (!stack)
		return -ENOMEM;
	for (uint32_t r = 0; r < n; r++) {
		if (h->nodes[r].v != VERDICT_OWNED || h->nodes[r].state)
			continue;
		stack[sp++] = r;
		h->nodes[r].state = 1;
		while (sp) {
			uint32_t v = stack[sp - 1];
			bool pushed = false;

			for (uint32_t k = wg_out_begin(&h->g, v);
			     !h->g.threads[v].in_cycle &&
			     k < wg_out_end(&h->g, v); k++) {
				uint32_t to = h->g.edges[k].to;

				if (h->nodes[to].v == VERDICT_OWNED &&
				    !h->nodes[to].state) {
					h->nodes[to].state = 1;
					stack[sp++] = to;
					pushed = true;
					break;
				}
			}
			if (pushed)
				continue;
			judge_owned(h, v);
			h->nodes[v].state = 2;
			sp--;
		}
	}
	free(stack);
	for (uint32_t i = 0; i < n; i++) {
		const struct judged *j = &h->nodes[i];

		if (!h->g.threads[i].wait || !j->in_scope)
			continue;
		if (j->v == VERDICT_HANG || j->v == VERDICT_DEADLOCK)
			h->nr_hung++;
		else if (j->v == VERDICT_UNKNOWN)
			h->nr_unknown++;
		else
			h->nr_other++;
	}
	return 0;
}

static bool is_hung_node(const struct hangs *h, uint32_t i)
{
	const struct judged *j = &h->nodes[i];

	return h->g.threads[i].wait && j->in_scope &&
	       (j->v == VERDICT_HANG || j->v == VERDICT_DEADLOCK);
}

static bool cycle_in_scope(const struct hangs *h, const struct wg_cycle *c)
{
	for (uint32_t k = 0; k < c->nr; k++)
		if (h->nodes[h->g.edges[c->edges[k]].from].in_scope)
			return true;
	return false;
}

/* CPU ticks of every thread of the first snapshot (live arenas). */
static int sample_prev_cpu(struct hangs *h)
{
	const struct actrack_snapshot *s = h->prev;
	uint64_t total = 0;

	h->prev_first = calloc(s->nr_processes + 1, sizeof(*h->prev_first));
	for (uint32_t k = 0; k < s->nr_processes; k++)
		total += s->processes[k].nr_threads;
	if (total >= UINT32_MAX)
		return -ENOMEM;
	h->prev_cpu = calloc(total + 1, sizeof(*h->prev_cpu));
	if (!h->prev_first || !h->prev_cpu)
		return -ENOMEM;
	total = 0;
	for (uint32_t k = 0; k < s->nr_processes; k++) {
		const struct actrack_snap_process *p = &s->processes[k];
		bool mine = h->live && !cli_process_foreign(p);

		h->prev_first[k] = (uint32_t)total;
		for (uint32_t i = 0; p->threads && i < p->nr_threads; i++) {
			/* UINT64_MAX: unreadable, never equal to a reading */
			if (!mine || !verdict_cpu_ticks(p->pid,
							p->threads[i].tid,
							&h->prev_cpu[total]))
				h->prev_cpu[total] = UINT64_MAX;
			total++;
		}
	}
	return 0;
}

/* ---- text output --------------------------------------------------------- */

static void fprint_thread_id(FILE *f, const struct wg_thread *w,
			     bool with_process)
{
	fprintf(f, "%u '", w->thread->tid);
	cli_print_escaped(f, w->thread->name, sizeof(w->thread->name));
	fputc('\'', f);
	if (with_process)
		fprintf(f, " (process %u)", w->proc->pid);
}

static void print_thread_id(const struct wg_thread *w, bool with_process)
{
	fprint_thread_id(stdout, w, with_process);
}

static void fprint_cmdline(FILE *f, const struct actrack_snap_process *p)
{
	if (!p->has_record || !p->cmdline[0])
		return;
	fputs(" (", f);
	/* Long command lines would drown the diagnosis. */
	cli_print_escaped(f, p->cmdline, 64);
	if (strnlen(p->cmdline, sizeof(p->cmdline)) > 64)
		fputs("...", f);
	fputc(')', f);
}

static void print_cmdline(const struct actrack_snap_process *p)
{
	fprint_cmdline(stdout, p);
}

/* "thread 4244 'transfer-ba' in process 4240 (cmd)" */
static void print_thread_full(const struct wg_thread *w)
{
	printf("thread %u '", w->thread->tid);
	cli_print_escaped(stdout, w->thread->name, sizeof(w->thread->name));
	printf("' in process %u", w->proc->pid);
}

static bool process_gone(const struct hangs *h,
			 const struct actrack_snap_process *p)
{
	uint64_t ticks;

	/* Only meaningful on the boot the arena comes from, for a process
	 * our /proc can show. */
	if (h->other_boot || cli_process_foreign(p))
		return false;
	return actrack_read_start_ticks((pid_t)p->pid, &ticks) ||
	       ticks != p->start_ticks;
}

#define SHOWN_TARGETS	4

static void print_targets(const struct hangs *h, uint32_t i)
{
	const struct waitgraph *g = &h->g;
	const struct wg_thread *w = &g->threads[i];
	uint32_t b = wg_out_begin(g, i), e = wg_out_end(g, i);
	uint8_t type = w->wait->a.type;
	bool cross = false;

	if (type == ACTRACK_ACT_LOCK_ACQUIRE) {
		if (b == e) {
			fputs(" held by no tracked thread", stdout);
			return;
		}
		fputs(" held by ", stdout);
	} else if (type == ACTRACK_ACT_THREAD_JOIN) {
		if (b == e) {
			fputs(" (not tracked)", stdout);
			return;
		}
		fputs(": ", stdout);
	} else if (type == ACTRACK_ACT_PROCESS_WAIT) {
		if (b == e) {
			fputs(w->wait->a.object ? " (not tracked, or no "
			      "tracked threads)" : " (no tracked child)",
			      stdout);
			return;
		}
		print_cmdline(g->threads[g->edges[b].to].proc);
		fputs(" with ", stdout);
	} else {
		return;
	}
	for (uint32_t k = b; k < e && k - b < SHOWN_TARGETS; k++) {
		const struct wg_thread *t = &g->threads[g->edges[k].to];

		if (k > b)
			fputs(", ", stdout);
		print_thread_full(t);
		if (t->proc != w->proc)
			print_cmdline(t->proc);
		cross |= g->edges[k].cross_process;
	}
	if (e - b > SHOWN_TARGETS)
		printf(" and %u more", e - b - SHOWN_TARGETS);
	if (cross)
		fputs(" [another process: assumes a process-shared lock at "
		      "the same address]", stdout);
}

/* One hop of a chain: "waits for lock L held by 124 'x'". */
static void print_hop(FILE *f, const struct hangs *h, uint32_t from,
		      uint32_t to)
{
	const struct wg_thread *w = &h->g.threads[from];
	const struct wg_thread *t = &h->g.threads[to];
	const struct actrack_activity *a = &w->wait->a;
	bool other = w->proc != t->proc;
	char obj[96];

	switch (a->type) {
	case ACTRACK_ACT_LOCK_ACQUIRE:
		fprintf(f, "waits for %s held by ",
			cli_activity_object(obj, sizeof(obj), a));
		break;
	case ACTRACK_ACT_THREAD_JOIN:
		fputs("waits for the join of ", f);
		break;
	default:
		fprintf(f, "waits for %s %u", a->object ? "process" :
			"its child", t->proc->pid);
		fprint_cmdline(f, t->proc);
		fputs(", thread ", f);
		other = false;
		break;
	}
	fprint_thread_id(f, t, other);
}

/*
 * The chain that justifies a verdict, from the waiter to the owner that
 * decided: "waits for lock L held by 124 'b', which waits for the join of
 * 123 'a': a cycle, deadlock"; or the wait's own reason.
 */
static void print_reason(FILE *f, const struct hangs *h, uint32_t i)
{
	uint32_t seen[MAX_HOPS], nr = 0, cur = i;

	if (h->nodes[i].next == NO_NODE) {
		fputs(h->nodes[i].why, f);
		return;
	}
	for (;;) {
		const struct judged *c = &h->nodes[cur];
		uint32_t next = c->next;
		bool loop = false;

		seen[nr++] = cur;
		print_hop(f, h, cur, next);
		for (uint32_t k = 0; k < nr; k++)
			loop |= seen[k] == next;
		if (loop) {
			fputs(": a cycle, deadlock", f);
			break;
		}
		if (!c->follow || h->nodes[next].next == NO_NODE ||
		    nr == MAX_HOPS) {
			fprintf(f, ", which %s", c->why);
			break;
		}
		fputs(", which ", f);
		cur = next;
	}
}

static void print_verdict(const struct hangs *h, uint32_t i)
{
	printf("    verdict: %s: ", verdict_name(h->nodes[i].v));
	print_reason(stdout, h, i);
	putchar('\n');
}

static void print_hung(const struct hangs *h, uint32_t i)
{
	const struct wg_thread *w = &h->g.threads[i];
	const struct actrack_activity *a = &w->wait->a;
	char dur[32], obj[96], sym[512];

	print_thread_full(w);
	print_cmdline(w->proc);
	printf(": waiting %s for %s",
	       cli_duration(dur, sizeof(dur), h->now - a->time_ns),
	       cli_activity_object(obj, sizeof(obj), a));
	print_targets(h, i);
	putchar('\n');
	printf("    at %s", sym_format(h->sym, w->proc->modules,
					w->proc->nr_modules, a->origin, sym,
					sizeof(sym)));
	if (w->thread->depth > 1)
		printf(", depth %u", w->thread->depth);
	if (process_gone(h, w->proc))
		fputs(", process no longer running", stdout);
	putchar('\n');
	print_verdict(h, i);
	stacks_print(h->stacks, h->sym, stdout, "    ", w->proc, w->thread->tid);
}

/* --all: a wait that is not a hang, in one line and its verdict. */
static void print_other(const struct hangs *h, uint32_t i)
{
	const struct wg_thread *w = &h->g.threads[i];
	const struct actrack_activity *a = &w->wait->a;
	char dur[32], obj[96];

	print_thread_full(w);
	print_cmdline(w->proc);
	if (a->type == VERDICT_ACT_SLEEP)
		printf(": sleeping %s\n",
		       cli_duration(dur, sizeof(dur), h->now - a->time_ns));
	else
		printf(": waiting %s for %s\n",
		       cli_duration(dur, sizeof(dur), h->now - a->time_ns),
		       cli_activity_object(obj, sizeof(obj), a));
	print_verdict(h, i);
}

static void print_edge(const struct hangs *h, const struct wg_edge *e,
		       bool with_process)
{
	const struct wg_thread *from = &h->g.threads[e->from];
	const struct wg_thread *to = &h->g.threads[e->to];
	const struct actrack_activity *a = &from->wait->a;
	char obj[96];

	fputs("    ", stdout);
	print_thread_id(from, with_process);
	switch (a->type) {
	case ACTRACK_ACT_LOCK_ACQUIRE:
		printf(" waits for %s held by ",
		       cli_activity_object(obj, sizeof(obj), a));
		break;
	case ACTRACK_ACT_THREAD_JOIN:
		fputs(" waits to join ", stdout);
		break;
	case ACTRACK_ACT_PROCESS_WAIT:
		printf(" waits for process %u to exit; its thread ",
		       to->proc->pid);
		break;
	}
	print_thread_id(to, with_process);
	if (e->cross_process)
		fputs(" [cross-process]", stdout);
	putchar('\n');
}

/* "123 'a' -> 124 'b' -> 123 'a'" */
static void fprint_cycle_ids(FILE *f, const struct hangs *h,
			     const struct wg_cycle *c)
{
	const struct waitgraph *g = &h->g;

	for (uint32_t k = 0; k < c->nr; k++) {
		fprint_thread_id(f, &g->threads[g->edges[c->edges[k]].from],
				 false);
		fputs(" -> ", f);
	}
	fprint_thread_id(f, &g->threads[g->edges[c->edges[0]].from], false);
}

static void print_cycle(const struct hangs *h, const struct wg_cycle *c)
{
	const struct waitgraph *g = &h->g;

	fputs("DEADLOCK: ", stdout);
	fprint_cycle_ids(stdout, h, c);
	putchar('\n');
	for (uint32_t k = 0; k < c->nr; k++)
		print_edge(h, &g->edges[c->edges[k]], c->cross_process);
	if (c->cross_process)
		fputs("    note: this cycle spans processes; each cross-process "
		      "lock edge assumes a process-shared lock\n"
		      "    (PTHREAD_PROCESS_SHARED) mapped at the same address "
		      "in both processes\n", stdout);
	if (c->component > c->nr)
		printf("    note: %u threads are in this knot; one shortest "
		       "cycle is shown\n", c->component);
}

static int exit_status(const struct hangs *h)
{
	return h->nr_hung || (h->unknown_is_hang && h->nr_unknown) ?
	       EXIT_HANGS : 0;
}

static int print_text(struct hangs *h)
{
	const struct waitgraph *g = &h->g;
	uint32_t nr_cycles = 0;
	char dur[32];

	cli_print_time_note(stdout, h->cur, h->other_boot);
	cli_print_corrupt_note(stdout, h->cur);
	for (uint32_t i = 0; i < g->nr_threads; i++)
		if (is_hung_node(h, i))
			print_hung(h, i);
	if (h->nr_unknown) {
		if (h->nr_hung)
			putchar('\n');
		puts("long waits, owner unknown:");
		for (uint32_t i = 0; i < g->nr_threads; i++)
			if (g->threads[i].wait && h->nodes[i].in_scope &&
			    h->nodes[i].v == VERDICT_UNKNOWN)
				print_hung(h, i);
	}
	if (h->all && h->nr_other) {
		if (h->nr_hung || h->nr_unknown)
			putchar('\n');
		puts("not hung:");
		for (uint32_t i = 0; i < g->nr_threads; i++) {
			const struct judged *j = &h->nodes[i];

			if (g->threads[i].wait && j->in_scope &&
			    j->v != VERDICT_HANG && j->v != VERDICT_DEADLOCK &&
			    j->v != VERDICT_UNKNOWN)
				print_other(h, i);
		}
	}
	for (uint32_t k = 0; k < g->nr_cycles; k++) {
		if (!cycle_in_scope(h, &g->cycles[k]))
			continue;
		if (!nr_cycles++ && (h->nr_hung || h->nr_unknown ||
				     (h->all && h->nr_other)))
			putchar('\n');
		print_cycle(h, &g->cycles[k]);
	}
	if (g->truncated)
		puts("note: too many wait edges; the graph was truncated");
	if (h->nr_hung)
		printf("%u hung thread%s, %u deadlock%s", h->nr_hung,
		       h->nr_hung == 1 ? "" : "s", nr_cycles,
		       nr_cycles == 1 ? "" : "s");
	else
		fputs("no hung threads", stdout);
	if (h->nr_unknown)
		printf(", %u long wait%s with owner unknown", h->nr_unknown,
		       h->nr_unknown == 1 ? "" : "s");
	printf(" (%u thread%s in %u process%s; waits older than %s, ",
	       g->nr_threads, g->nr_threads == 1 ? "" : "s",
	       h->cur->nr_processes, h->cur->nr_processes == 1 ? "" : "es",
	       cli_duration(dur, sizeof(dur), h->min_age_ns));
	/* An image never changes: "unchanged" would prove nothing. */
	if (h->saved_image)
		puts("when saved; a saved image cannot show progress, so a "
		     "long wait there may still have been moving)");
	else
		printf("unchanged over %u ms)\n", h->interval_ms);
	return ferror(stdout) ? 1 : exit_status(h);
}

/* ---- JSON output ---------------------------------------------------------- */

static void json_thread_ref(struct json *j, const struct wg_thread *w)
{
	json_object_begin(j);
	json_kv_u64(j, "pid", w->proc->pid);
	json_kv_u64(j, "start_ticks", w->proc->start_ticks);
	json_kv_u64(j, "tid", w->thread->tid);
	json_kv_string(j, "name", w->thread->name, sizeof(w->thread->name));
	json_object_end(j);
}

struct reason_of {
	const struct hangs *h;
	uint32_t i;
};

static void render_reason(FILE *f, const void *arg)
{
	const struct reason_of *r = arg;

	print_reason(f, r->h, r->i);
}

/* The reason of node @i, as the text line says it: a string to free, or
 * NULL when out of memory. */
static char *reason_string(const struct hangs *h, uint32_t i)
{
	const struct reason_of r = { h, i };

	return cli_render_string(render_reason, &r, NULL);
}

/* "reason": the text line's reason; "chain": its hops, waiter first. */
static void json_reason(struct json *j, const struct hangs *h, uint32_t i)
{
	uint32_t seen[MAX_HOPS], nr = 0, cur = i;
	char *text = reason_string(h, i), desc[96];

	json_kv_string(j, "reason", text ? text : "",
		       text ? strlen(text) + 1 : 1);
	free(text);
	json_key(j, "chain");
	json_array_begin(j);
	while (h->nodes[cur].next != NO_NODE && nr < MAX_HOPS) {
		const struct judged *c = &h->nodes[cur];
		const struct actrack_activity *a = &h->g.threads[cur].wait->a;
		bool loop = false;

		seen[nr++] = cur;
		json_object_begin(j);
		json_key(j, "from");
		json_thread_ref(j, &h->g.threads[cur]);
		json_key(j, "to");
		json_thread_ref(j, &h->g.threads[c->next]);
		json_kv_string(j, "type", actrack_activity_name(a->type), 32);
		json_kv_string(j, "description",
			       cli_activity_object(desc, sizeof(desc), a),
			       sizeof(desc));
		json_object_end(j);
		for (uint32_t k = 0; k < nr; k++)
			loop |= seen[k] == c->next;
		if (loop || !c->follow)
			break;
		cur = c->next;
	}
	json_array_end(j);
}

static void json_hung(struct json *j, const struct hangs *h, uint32_t i)
{
	const struct waitgraph *g = &h->g;
	const struct wg_thread *w = &g->threads[i];
	const struct render r = { .sym = h->sym, .now = h->now };

	json_object_begin(j);
	json_kv_u64(j, "pid", w->proc->pid);
	json_kv_u64(j, "start_ticks", w->proc->start_ticks);
	json_kv_u64(j, "tid", w->thread->tid);
	json_kv_string(j, "name", w->thread->name, sizeof(w->thread->name));
	json_key(j, "cmdline");
	if (w->proc->has_record)
		json_string(j, w->proc->cmdline, sizeof(w->proc->cmdline));
	else
		json_null(j);
	json_key(j, "process_running");
	if (h->other_boot || cli_process_foreign(w->proc))
		json_null(j);
	else
		json_bool(j, !process_gone(h, w->proc));
	json_kv_u64(j, "depth", w->thread->depth);
	json_key(j, "activity");
	/* The wait is the innermost stored activity (waitgraph.c). */
	render_activity_json(&r, j, w->proc, w->thread,
			     (uint32_t)(w->wait - w->thread->activities));
	json_kv_string(j, "verdict", verdict_name(h->nodes[i].v), 32);
	json_reason(j, h, i);
	json_key(j, "waits_for");
	json_array_begin(j);
	for (uint32_t k = wg_out_begin(g, i); k < wg_out_end(g, i); k++) {
		const struct wg_thread *t = &g->threads[g->edges[k].to];

		json_object_begin(j);
		json_kv_u64(j, "pid", t->proc->pid);
		json_kv_u64(j, "start_ticks", t->proc->start_ticks);
		json_kv_u64(j, "tid", t->thread->tid);
		json_kv_string(j, "name", t->thread->name,
			       sizeof(t->thread->name));
		json_kv_bool(j, "cross_process", g->edges[k].cross_process);
		json_object_end(j);
	}
	json_array_end(j);
	if (h->stacks && (is_hung_node(h, i) ||
			  h->nodes[i].v == VERDICT_UNKNOWN)) {
		json_key(j, "stack");
		stacks_json(h->stacks, h->sym, j, w->proc, w->thread->tid);
	}
	json_object_end(j);
}

static void json_cycle(struct json *j, const struct hangs *h,
		       const struct wg_cycle *c)
{
	const struct waitgraph *g = &h->g;
	char desc[96];

	json_object_begin(j);
	json_kv_bool(j, "cross_process", c->cross_process);
	json_kv_u64(j, "component", c->component);
	json_key(j, "edges");
	json_array_begin(j);
	for (uint32_t k = 0; k < c->nr; k++) {
		const struct wg_edge *e = &g->edges[c->edges[k]];
		const struct actrack_activity *a = &g->threads[e->from].wait->a;

		json_object_begin(j);
		json_key(j, "from");
		json_thread_ref(j, &g->threads[e->from]);
		json_key(j, "to");
		json_thread_ref(j, &g->threads[e->to]);
		json_kv_string(j, "type", actrack_activity_name(a->type), 32);
		json_kv_u64_str(j, "object", a->object);
		json_kv_string(j, "description",
			       cli_activity_object(desc, sizeof(desc), a),
			       sizeof(desc));
		json_kv_bool(j, "cross_process", e->cross_process);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

static int print_json(struct hangs *h)
{
	const struct waitgraph *g = &h->g;
	struct json j;

	json_init(&j, stdout, JSON_MAX_DEPTH);
	json_object_begin(&j);
	json_kv_string(&j, "schema", RENDER_HANGS_SCHEMA, 32);
	json_kv_string(&j, "generator", "actrack " ACTRACK_VERSION, 32);
	json_kv_string(&j, "arena", cli_arena_name(), 4096);
	json_kv_u64_str(&j, "now_ns", h->now);
	json_kv_bool(&j, "other_boot", h->other_boot);
	json_kv_u64_str(&j, "min_age_ns", h->min_age_ns);
	json_key(&j, "interval_ms");
	if (h->saved_image)
		json_null(&j);
	else
		json_u64(&j, h->interval_ms);
	json_kv_bool(&j, "saved_image", h->saved_image);
	json_kv_u64(&j, "threads", g->nr_threads);
	json_kv_u64(&j, "processes", h->cur->nr_processes);
	json_kv_bool(&j, "truncated", g->truncated);
	json_key(&j, "hung");
	json_array_begin(&j);
	for (uint32_t i = 0; i < g->nr_threads; i++)
		if (is_hung_node(h, i))
			json_hung(&j, h, i);
	json_array_end(&j);
	json_key(&j, "owner_unknown");
	json_array_begin(&j);
	for (uint32_t i = 0; i < g->nr_threads; i++)
		if (g->threads[i].wait && h->nodes[i].in_scope &&
		    h->nodes[i].v == VERDICT_UNKNOWN)
			json_hung(&j, h, i);
	json_array_end(&j);
	json_key(&j, "not_hung");
	json_array_begin(&j);
	for (uint32_t i = 0; i < g->nr_threads; i++) {
		const struct judged *n = &h->nodes[i];

		if (g->threads[i].wait && n->in_scope &&
		    n->v != VERDICT_UNKNOWN && !is_hung_node(h, i))
			json_hung(&j, h, i);
	}
	json_array_end(&j);
	json_key(&j, "deadlocks");
	json_array_begin(&j);
	for (uint32_t k = 0; k < g->nr_cycles; k++)
		if (cycle_in_scope(h, &g->cycles[k]))
			json_cycle(&j, h, &g->cycles[k]);
	json_array_end(&j);
	json_object_end(&j);
	if (json_finish(&j)) {
		cli_error("stdout", -EIO);
		return 1;
	}
	return exit_status(h);
}

static void sleep_ms(uint32_t ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* --stacks: the real backtraces of the hung threads, taken now. */
static void collect_stacks(struct hangs *h)
{
	h->stacks = stacks_new(h->cur, "hangs");
	for (uint32_t i = 0; h->stacks && i < h->g.nr_threads; i++) {
		const struct wg_thread *w = &h->g.threads[i];

		if (w->wait && h->nodes[i].in_scope &&
		    (is_hung_node(h, i) || h->nodes[i].v == VERDICT_UNKNOWN) &&
		    stacks_want(h->stacks, w->proc, w->thread->tid)) {
			stacks_free(h->stacks);
			h->stacks = NULL;
		}
	}
	if (!h->stacks) {
		cli_error("hangs: --stacks", -ENOMEM);
		return;
	}
	stacks_collect(h->stacks);
}

static int parse_scope(struct scope *sc, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'p':
		if (cli_parse_u64(arg, &v) || !v || v > INT32_MAX)
			return cli_usage_error("hangs", "hangs: --pid: not a "
					       "pid: '%s'", arg);
		if (sc->nr_pids == MAX_PIDS)
			return cli_usage_error("hangs", "hangs: --pid: more "
					       "than %u pids", MAX_PIDS);
		sc->pids[sc->nr_pids++] = (uint32_t)v;
		return 0;
	case 'c':
		if (!*arg || strlen(arg) > 15)
			return cli_usage_error("hangs", "hangs: --comm: not a "
					       "command name (1 to 15 bytes): "
					       "'%s'", arg);
		sc->comm = arg;
		return 0;
	default:
		if (cli_parse_u64(arg, &v) || v >= UINT32_MAX)
			return cli_usage_error("hangs", "hangs: --uid: not a "
					       "uid: '%s'", arg);
		sc->have_uid = true;
		sc->uid = (uint32_t)v;
		return 0;
	}
}

static uint32_t nr_threads(const struct actrack_snapshot *s)
{
	uint64_t n = 0;

	for (uint32_t k = 0; k < s->nr_processes; k++)
		n += s->processes[k].nr_threads;
	return n >= UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)n;
}

static int analyze(struct hangs *h)
{
	uint32_t n;
	int ret;

	verdict_env_init(&h->env, h->cur, h->live);
	n = nr_threads(h->cur);
	h->nodes = calloc((size_t)n + 1, sizeof(*h->nodes));
	if (!h->nodes)
		return -ENOMEM;
	for (uint32_t i = 0; i <= n; i++)
		h->nodes[i].next = NO_NODE;
	ret = wg_build(&h->g, h->cur, judge_wait, h);
	if (!ret)
		ret = judge_all(h);
	return ret;
}

/*
 * One look, what both `hangs` and every round of `hangs --watch` do: two
 * snapshots @h->interval_ms apart (one of a saved image), every wait
 * judged.  Return: 0, 1 (a snapshot failed, already said) or -errno.
 */
static int snapshot(struct hangs *h, struct actrack_snapshot **s,
		    uint32_t flags)
{
	char reason[128];
	int ret;

	if (cli.previous_boot)
		flags |= ACTRACK_SNAP_PREVIOUS_BOOT;
	if (h->selected) {
		ret = actrack_snapshot_take_uid(h->uid, flags, s);
		/* No arena for the uid (nothing of it was ever tracked) is
		 * nothing to say. */
		if (ret == -ENOENT)
			return h->snap_ret = ret;
	} else {
		ret = actrack_snapshot_take(cli.arena, flags | (cli.arena ?
					    ACTRACK_SNAP_ARENA_FILE : 0), s);
	}
	/* Round after round (--watch), an arena not there yet (nothing
	 * tracked has started) is said once, until it is readable. */
	if (ret && (!h->watching || ret != h->snap_err)) {
		if (h->selected)
			cli_errorf("the arena of uid %u: %s", h->uid,
				   strerror(-ret));
		else
			cli_errorf("%s: %s", cli_arena_name(),
				   cli_arena_strerror(cli_arena_name(), ret,
						      reason, sizeof(reason)));
	}
	h->snap_err = ret;
	return h->snap_ret = ret;
}

static int look(struct hangs *h, struct actrack_snapshot **s1,
		struct actrack_snapshot **s2)
{
	/* Only what is printed needs the command lines of /proc: the first
	 * of two looks is for comparing. */
	if (snapshot(h, s1, ACTRACK_SNAP_NO_CMDLINES))
		return 1;
	h->saved_image = cli_saved_image(*s1);
	h->prev = *s1;
	h->now = cli_now(*s1, &h->other_boot);
	h->live = !h->saved_image && !h->other_boot;
	/* A second look at an image (a saved one, the previous boot's)
	 * would see the same bytes: skip it. */
	if (!h->saved_image && !cli.previous_boot) {
		/* CPU times as of the first look (progress of owners). */
		if (h->live && sample_prev_cpu(h))
			return -ENOMEM;
		sleep_ms(h->interval_ms);
		if (snapshot(h, s2, 0))
			return 1;
	}
	h->cur = *s2 ? *s2 : *s1;
	h->now = cli_now(h->cur, &h->other_boot);
	if (!h->sym)
		h->sym = sym_new();
	return analyze(h);
}

/* What look() made, freed; @h ready for the next look (its options and
 * its symbolizer kept). */
static void forget(struct hangs *h, struct actrack_snapshot **s1,
		   struct actrack_snapshot **s2)
{
	wg_free(&h->g);
	verdict_env_free(&h->env);
	free(h->nodes);
	free(h->prev_cpu);
	free(h->prev_first);
	stacks_free(h->stacks);
	actrack_snapshot_free(*s1);
	actrack_snapshot_free(*s2);
	*s1 = *s2 = NULL;
	h->nodes = NULL;
	h->prev_cpu = NULL;
	h->prev_first = NULL;
	h->stacks = NULL;
	h->prev = h->cur = NULL;
	h->nr_hung = h->nr_unknown = h->nr_other = 0;
}

/* ---- --watch: hang episodes, to the journal ------------------------------ */

/*
 * An episode is one hung thread's blocking wait: the process (pid, start
 * time, pid namespace), the thread and the wait's start time.  It gets one
 * entry when it is first judged a hang and one when it ends: its wait is
 * no longer on the thread's stack, or its process no longer runs.  A
 * verdict that changes while the wait goes on (blocked for a round, then
 * hung again) is the same episode.
 */
struct episode {
	uint32_t arena;		/* the uid of its arena (--all-users) */
	uint32_t pid, pid_ns, tid;
	uint64_t start_ticks, wait_ns;
	uint8_t type;
	bool written;		/* its first entry was written */
	bool seen;		/* hung in this round */
	char verdict[16], comm[40], name[33], wait[96];
};

struct watch {
	uint64_t every_ns;
	uint64_t rounds;		/* 0: until stopped */
	bool journal;
	bool stacks;
	/* At most @rate entries in any @window_ns: the times of the last
	 * ones, a ring. */
	uint32_t rate, nr_sent, next_sent;
	uint64_t window_ns, *sent;
	uint64_t suppressed;		/* since the last entry written */
	struct episode *eps;
	size_t nr_eps;
};

static volatile sig_atomic_t watch_stop;

static void watch_on_signal(int sig)
{
	watch_stop = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Under the rate bound, write @e (the journal, or its MESSAGE on stdout);
 * else count it.  Return: it was written. */
static bool emit(struct watch *w, struct journal_hang *e)
{
	uint64_t now = mono_ns();
	char *msg = NULL, dur[32];
	int ret;

	if (w->nr_sent == w->rate &&
	    now - w->sent[w->next_sent] < w->window_ns) {
		w->suppressed++;
		return false;
	}
	e->suppressed = w->suppressed;
	if (w->suppressed &&
	    asprintf(&msg, "%s\n(%" PRIu64 " earlier entr%s not written: more "
		     "than %u in %s)", e->message, w->suppressed,
		     w->suppressed == 1 ? "y" : "ies", w->rate,
		     cli_duration(dur, sizeof(dur), w->window_ns)) > 0)
		e->message = msg;
	if (w->journal) {
		ret = journal_send_hang(e);
		if (ret)
			fprintf(stderr, "actrack: hangs: cannot write to the "
				"journal: %s\n", strerror(-ret));
	} else {
		printf("%s\n\n", e->message);
		fflush(stdout);
	}
	free(msg);
	w->suppressed = 0;
	w->sent[w->next_sent] = now;
	w->next_sent = (w->next_sent + 1) % w->rate;
	if (w->nr_sent < w->rate)
		w->nr_sent++;
	return true;
}

/* The shortest cycle thread @i is on, or NULL. */
static const struct wg_cycle *cycle_of(const struct hangs *h, uint32_t i)
{
	for (uint32_t k = 0; k < h->g.nr_cycles; k++)
		for (uint32_t e = 0; e < h->g.cycles[k].nr; e++)
			if (h->g.edges[h->g.cycles[k].edges[e]].from == i)
				return &h->g.cycles[k];
	return NULL;
}

/* Hung thread @i of @h: what an entry's renderers (cli_render_string()'s
 * @arg) read. */
struct hung_ref {
	const struct hangs *h;
	uint32_t i;
};

/* The text `hangs` prints for hung thread @i, and its cycle: print_hung()
 * and print_cycle() print to stdout, which is @f for the call. */
static void render_text(FILE *f, const void *arg)
{
	const struct hung_ref *r = arg;
	const struct wg_cycle *c = cycle_of(r->h, r->i);
	FILE *out = stdout;

	fflush(stdout);
	stdout = f;
	print_hung(r->h, r->i);
	if (c && r->h->nodes[r->i].v == VERDICT_DEADLOCK)
		print_cycle(r->h, c);
	stdout = out;
}

/* Its entry of `hangs --json`, one line. */
static void render_json(FILE *f, const void *arg)
{
	const struct hung_ref *r = arg;
	struct json j;

	json_init(&j, f, 0);
	json_hung(&j, r->h, r->i);
	json_finish(&j);
}

static void render_cycle(FILE *f, const void *arg)
{
	const struct hung_ref *r = arg;

	fprint_cycle_ids(f, r->h, cycle_of(r->h, r->i));
}

static void render_owner(FILE *f, const void *arg)
{
	const struct hung_ref *r = arg;

	fprint_thread_id(f, &r->h->g.threads[r->h->nodes[r->i].next], true);
}

static bool same_episode(const struct episode *e, const struct wg_thread *w)
{
	return e->pid == w->proc->pid && e->start_ticks ==
	       w->proc->start_ticks && e->pid_ns == w->proc->pid_ns &&
	       e->tid == w->thread->tid && e->wait_ns == w->wait->a.time_ns;
}

/* The arena looked at: its uid with --all-users, else one for all. */
static uint32_t arena_of(const struct hangs *h)
{
	return h->selected ? h->uid : UINT32_MAX;
}

static bool is_watched(const struct hangs *h, uint32_t i)
{
	return is_hung_node(h, i) ||
	       (h->unknown_is_hang && h->g.threads[i].wait &&
		h->nodes[i].in_scope && h->nodes[i].v == VERDICT_UNKNOWN);
}

/* Hung thread @i starts an episode: remember it, write its entry. */
static int episode_start(struct hangs *h, struct watch *w, uint32_t i)
{
	const struct wg_thread *t = &h->g.threads[i];
	const struct hung_ref ref = { h, i };
	char *msg, *report, *cycle = NULL, *owner = NULL;
	struct journal_hang e = { 0 };
	struct episode *ep, *n;

	n = realloc(w->eps, (w->nr_eps + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	w->eps = n;
	ep = &w->eps[w->nr_eps++];
	memset(ep, 0, sizeof(*ep));
	ep->arena = arena_of(h);
	ep->pid = t->proc->pid;
	ep->pid_ns = t->proc->pid_ns;
	ep->start_ticks = t->proc->start_ticks;
	ep->tid = t->thread->tid;
	ep->wait_ns = t->wait->a.time_ns;
	ep->type = t->wait->a.type;
	ep->seen = true;
	snprintf(ep->verdict, sizeof(ep->verdict), "%s",
		 verdict_name(h->nodes[i].v));
	process_comm(t->proc, ep->comm, sizeof(ep->comm));
	cli_escape(ep->name, sizeof(ep->name), t->thread->name,
		   sizeof(t->thread->name), 32);
	cli_activity_object(ep->wait, sizeof(ep->wait), &t->wait->a);

	msg = cli_render_string(render_text, &ref, NULL);
	report = cli_render_string(render_json, &ref, NULL);
	if (h->nodes[i].v == VERDICT_DEADLOCK && cycle_of(h, i))
		cycle = cli_render_string(render_cycle, &ref, NULL);
	if (h->nodes[i].next != NO_NODE)
		owner = cli_render_string(render_owner, &ref, NULL);
	if (!msg || !report) {
		free(msg);
		free(report);
		free(cycle);
		free(owner);
		return -ENOMEM;
	}
	e = (struct journal_hang){
		.message = msg, .report = report, .pid = ep->pid,
		.tid = ep->tid, .start_ticks = ep->start_ticks,
		.wait_start_ns = ep->wait_ns, .comm = ep->comm,
		.verdict = ep->verdict, .wait = ep->wait, .owner = owner,
		.cycle = cycle,
	};
	ep->written = emit(w, &e);
	free(msg);
	free(report);
	free(cycle);
	free(owner);
	return 0;
}

/* Has episode @e ended: "died", "completed", or NULL (it goes on, or
 * cannot be told). */
static const char *episode_ended(const struct hangs *h,
				 const struct episode *e)
{
	const struct actrack_snap_process key = {
		.pid = e->pid, .start_ticks = e->start_ticks,
		.pid_ns = e->pid_ns,
	};
	const struct actrack_snap_process *p = find_process(h->cur, &key);
	const struct actrack_snap_thread *t;

	/* Its records freed (the module does at exit), or left behind by a
	 * process that no longer runs (a file arena after SIGKILL). */
	if (!p || (h->live && !cli_process_foreign(p) &&
		   !cli_process_running(p)))
		return "died";
	t = find_thread(p, e->tid);
	if (!t)
		return "completed";
	if (t->torn || t->depth > t->nr_activities)
		return NULL;
	for (uint32_t k = 0; k < t->nr_activities; k++)
		if (t->activities[k].a.time_ns == e->wait_ns &&
		    t->activities[k].a.type == e->type)
			return NULL;
	return "completed";
}

static void episode_end(const struct hangs *h, struct watch *w,
			const struct episode *e, const char *how)
{
	struct journal_hang j = {
		.ended = how, .pid = e->pid, .tid = e->tid,
		.start_ticks = e->start_ticks, .wait_start_ns = e->wait_ns,
		.comm = e->comm, .verdict = e->verdict, .wait = e->wait,
	};
	/* "the deadlock ended", "the hang ended", "the long wait ended" */
	const char *what = strcmp(e->verdict, "owner-unknown") ? e->verdict :
			   "long wait";
	char *msg = NULL;

	if (!e->written)
		return;		/* its start was never said */
	if (!strcmp(how, "died")) {
		if (asprintf(&msg, "thread %u '%s' in process %u (%s): the "
			     "%s ended: the process no longer runs "
			     "(actrack deaths %u)", e->tid, e->name, e->pid,
			     e->comm, what, e->pid) < 0)
			msg = NULL;
	} else {
		char dur[32];

		if (asprintf(&msg, "thread %u '%s' in process %u (%s): the "
			     "%s ended: its wait for %s completed (after at "
			     "most %s)", e->tid, e->name, e->pid, e->comm,
			     what, e->wait,
			     cli_duration(dur, sizeof(dur),
					  h->now - e->wait_ns)) < 0)
			msg = NULL;
	}
	if (!msg)
		return;
	j.message = msg;
	emit(w, &j);
	free(msg);
}

/* One round: new episodes written, ended ones said and forgotten. */
static int watch_round(struct hangs *h, struct watch *w)
{
	bool fresh = false;
	size_t k;
	int ret;

	/* Another arena's episodes are judged when it is looked at. */
	for (k = 0; k < w->nr_eps; k++)
		w->eps[k].seen = w->eps[k].arena != arena_of(h);
	for (uint32_t i = 0; i < h->g.nr_threads; i++) {
		if (!is_watched(h, i))
			continue;
		for (k = 0; k < w->nr_eps; k++)
			if (same_episode(&w->eps[k], &h->g.threads[i]))
				break;
		if (k < w->nr_eps)
			w->eps[k].seen = true;
		else
			fresh = true;
	}
	/* Stacks stop the threads: only when there is something new. */
	if (fresh && w->stacks)
		collect_stacks(h);
	for (uint32_t i = 0; fresh && i < h->g.nr_threads; i++) {
		if (!is_watched(h, i))
			continue;
		for (k = 0; k < w->nr_eps; k++)
			if (same_episode(&w->eps[k], &h->g.threads[i]))
				break;
		if (k == w->nr_eps) {
			ret = episode_start(h, w, i);
			if (ret)
				return ret;
		}
	}
	for (k = 0; k < w->nr_eps;) {
		const char *how = w->eps[k].seen ? NULL :
				  episode_ended(h, &w->eps[k]);

		if (!how) {
			k++;
			continue;
		}
		episode_end(h, w, &w->eps[k], how);
		w->eps[k] = w->eps[--w->nr_eps];
	}
	return 0;
}

/* Until @ns of CLOCK_MONOTONIC, or a signal to stop. */
static void sleep_until(uint64_t ns)
{
	while (!watch_stop) {
		uint64_t now = mono_ns();
		struct timespec ts;

		if (now >= ns)
			return;
		ts.tv_sec = (time_t)((ns - now) / 1000000000ULL);
		ts.tv_nsec = (long)((ns - now) % 1000000000ULL);
		nanosleep(&ts, NULL);
	}
}

/* One look at one arena, its episodes written.  Return: 0 (also for an
 * arena not there: a round with nothing in it) or -errno. */
static int watch_arena(struct hangs *h, struct watch *w)
{
	struct actrack_snapshot *s1 = NULL, *s2 = NULL;
	int ret = look(h, &s1, &s2);

	if (!ret)
		ret = watch_round(h, w);
	forget(h, &s1, &s2);
	return ret == 1 ? 0 : ret;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The uids --all-users looks at: 0 and the owner of every process in
 * /proc (its effective uid), sorted, each once; *@out malloc()ed. */
static uint32_t list_uids(uint32_t **out)
{
	uint32_t n = 1, cap = 64, k = 1, *u = malloc(cap * sizeof(*u));
	struct dirent *d;
	struct stat st;
	char path[32];
	DIR *dir;

	*out = u;
	if (!u)
		return 0;
	u[0] = 0;
	dir = opendir("/proc");
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s", d->d_name);
		if (stat(path, &st))
			continue;
		if (n == cap) {
			uint32_t *m = realloc(u, 2 * cap * sizeof(*u));

			if (!m)
				break;
			u = *out = m;
			cap *= 2;
		}
		u[n++] = (uint32_t)st.st_uid;
	}
	if (dir)
		closedir(dir);
	qsort(u, n, sizeof(*u), cmp_u32);
	for (uint32_t i = 1; i < n; i++)
		if (u[i] != u[k - 1])
			u[k++] = u[i];
	return k;
}

/*
 * --all-users: every uid's arena in turn.  The episodes of an arena that
 * is gone (its uid has no process left, or the module freed it) ended:
 * their processes died.
 */
static int watch_users(struct hangs *h, struct watch *w)
{
	uint32_t *uids, n = list_uids(&uids), nr_seen = 0;
	int ret = 0;

	if (!uids)
		return -ENOMEM;
	h->selected = true;
	for (uint32_t i = 0; i < n && !ret; i++) {
		h->uid = uids[i];
		ret = watch_arena(h, w);
		if (h->snap_ret != -ENOENT)
			uids[nr_seen++] = uids[i];
	}
	for (size_t k = 0; !ret && k < w->nr_eps;) {
		if (bsearch(&w->eps[k].arena, uids, nr_seen, sizeof(*uids),
			    cmp_u32)) {
			k++;
			continue;
		}
		episode_end(h, w, &w->eps[k], "died");
		w->eps[k] = w->eps[--w->nr_eps];
	}
	free(uids);
	return ret;
}

/* --all-users with the module: each uid's arena; else ($ACTRACK_ARENA,
 * file arenas) the one arena, as without it. */
static bool all_users(const struct hangs *h)
{
	char path[256];

	return h->all_users && actrack_arena_path(NULL, path, sizeof(path)) ==
			       ACTRACK_BACKEND_MODULE;
}

static int watch(struct hangs *h, struct watch *w)
{
	struct sigaction sa;
	uint64_t next = mono_ns();
	int ret = 0;

	w->sent = calloc(w->rate, sizeof(*w->sent));
	if (!w->sent) {
		cli_error("hangs", -ENOMEM);
		return 1;
	}
	/* No SA_RESTART: a signal ends the sleep between rounds. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watch_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (uint64_t r = 0; !watch_stop && (!w->rounds || r < w->rounds);
	     r++) {
		if (r)
			sleep_until(next);
		if (watch_stop)
			break;
		next = mono_ns() + w->every_ns;
		ret = all_users(h) ? watch_users(h, w) : watch_arena(h, w);
		if (ret) {
			cli_error("hangs: --watch", ret);
			break;
		}
		/* The first round is done: hangs are being watched. */
		if (!r)
			sd_notify(0, "READY=1");
	}
	free(w->sent);
	free(w->eps);
	return ret ? 1 : 0;
}

/* ---- --history: the entries read back ------------------------------------ */

struct history_opts {
	uint64_t since_us, until_us;	/* 0: no bound */
	const char *directory, *file;
};

static int history(const struct history_opts *o)
{
	sd_journal *j = NULL;
	int ret, found = 0;

	if (o->directory) {
		ret = sd_journal_open_directory(&j, o->directory, 0);
	} else if (o->file) {
		const char *files[] = { o->file, NULL };

		ret = sd_journal_open_files(&j, files, 0);
	} else {
		ret = sd_journal_open(&j, 0);
	}
	if (ret < 0) {
		fprintf(stderr, "actrack: hangs: cannot open the journal%s%s: "
			"%s\n", o->directory || o->file ? " " : "",
			o->directory ? o->directory : o->file ? o->file : "",
			strerror(-ret));
		return 1;
	}
	/* Two values of one field: either. */
	ret = sd_journal_add_match(j, "MESSAGE_ID=" ACTRACK_JOURNAL_HANG_ID,
				   0);
	if (ret >= 0)
		ret = sd_journal_add_match(j, "MESSAGE_ID="
					   ACTRACK_JOURNAL_HANG_END_ID, 0);
	if (ret >= 0)
		ret = o->since_us ?
		      sd_journal_seek_realtime_usec(j, o->since_us) :
		      sd_journal_seek_head(j);
	if (ret < 0)
		goto fail;
	printf("%-23s  %-9s %-7s %-7s %-14s %-15s %s\n", "TIME", "EVENT",
	       "PID", "TID", "VERDICT", "COMM", "WAIT");
	while ((ret = sd_journal_next(j)) > 0) {
		char when[48], ev[24], verdict[40], comm[64], wait[200];
		char pid_s[24] = "?", tid_s[24] = "?";
		int64_t pid = journal_field_num(j, "ACTRACK_PID");
		int64_t tid = journal_field_num(j, "ACTRACK_TID");
		uint64_t us;

		if (sd_journal_get_realtime_usec(j, &us) < 0)
			continue;
		if (o->since_us && us < o->since_us)
			continue;
		if (o->until_us && us >= o->until_us)
			break;
		journal_field_str(j, "ACTRACK_HANG_END", ev, sizeof(ev), 9);
		if (!strcmp(ev, "?"))
			snprintf(ev, sizeof(ev), "hang");
		if (pid >= 0)
			snprintf(pid_s, sizeof(pid_s), "%" PRId64, pid);
		if (tid >= 0)
			snprintf(tid_s, sizeof(tid_s), "%" PRId64, tid);
		printf("%-23s  %-9s %-7s %-7s %-14s %-15s %s\n",
		       journal_entry_time(j, when, sizeof(when)), ev, pid_s,
		       tid_s, journal_field_str(j, "ACTRACK_VERDICT", verdict,
						sizeof(verdict), 14),
		       journal_field_str(j, "ACTRACK_COMM", comm, sizeof(comm),
					 15),
		       journal_field_str(j, "ACTRACK_WAIT", wait, sizeof(wait),
					 96));
		found++;
	}
	if (ret < 0)
		goto fail;
	sd_journal_close(j);
	if (!found) {
		fprintf(stderr, "actrack: hangs: no hang entries in the "
			"journal\n");
		return 1;
	}
	return 0;
fail:
	fprintf(stderr, "actrack: hangs: reading the journal: %s\n",
		strerror(-ret));
	sd_journal_close(j);
	return 1;
}

/* "N" or "N/DURATION" of --rate. */
static int parse_rate(const char *arg, struct watch *w)
{
	char buf[32];
	const char *slash = strchr(arg, '/');
	uint64_t v;

	snprintf(buf, sizeof(buf), "%.*s", slash ? (int)(slash - arg) :
		 (int)strlen(arg), arg);
	if (cli_parse_u64(buf, &v) || !v || v > 100000)
		return -EINVAL;
	w->rate = (uint32_t)v;
	w->window_ns = 60 * 1000000000ULL;
	if (slash && (cli_parse_duration(slash + 1, &w->window_ns) ||
		      !w->window_ns))
		return -EINVAL;
	return 0;
}

/* What the command line asks. */
struct args {
	struct hangs h;
	struct watch w;
	struct history_opts ho;
	bool json, stacks, watching, hist, watch_opt, hist_opt;
};

enum { OPT_FOR = 0x100, OPT_UNKNOWN, OPT_UID, OPT_WATCH, OPT_EVERY,
       OPT_ROUNDS, OPT_RATE, OPT_JOURNAL, OPT_HISTORY, OPT_SINCE,
       OPT_UNTIL, OPT_DIRECTORY, OPT_FILE, OPT_ALL_USERS, OPT_PREVIOUS };

/* The options of --watch. */
static int parse_watch_opt(struct args *a, int opt, const char *arg)
{
	struct watch *w = &a->w;

	a->watch_opt = true;
	switch (opt) {
	case OPT_EVERY:
		if (cli_parse_duration(arg, &w->every_ns) || !w->every_ns ||
		    w->every_ns > 86400000000000ULL)
			return cli_usage_error("hangs", "hangs: --every: not "
					       "a duration: '%s'", arg);
		break;
	case OPT_ROUNDS:
		if (cli_parse_u64(arg, &w->rounds) || !w->rounds)
			return cli_usage_error("hangs", "hangs: --rounds: not "
					       "a number of rounds: '%s'",
					       arg);
		break;
	case OPT_RATE:
		if (parse_rate(arg, w))
			return cli_usage_error("hangs", "hangs: --rate: not N "
					       "or N/DURATION: '%s'", arg);
		break;
	case OPT_JOURNAL:
		w->journal = true;
		break;
	case OPT_ALL_USERS:
		a->h.all_users = true;
		break;
	}
	return 0;
}

/* The options of --history. */
static int parse_history_opt(struct args *a, int opt, const char *arg,
			     const char *name)
{
	a->hist_opt = true;
	switch (opt) {
	case OPT_SINCE:
	case OPT_UNTIL:
		if (journal_parse_time(arg, opt == OPT_SINCE ?
				       &a->ho.since_us : &a->ho.until_us))
			return cli_usage_error("hangs", "hangs: %s: not a "
					       "time: '%s'", name, arg);
		break;
	case OPT_DIRECTORY:
		a->ho.directory = arg;
		break;
	case OPT_FILE:
		a->ho.file = arg;
		break;
	}
	return 0;
}

/* One option of the look itself.  Return: 0, or the exit status. */
static int parse_look_opt(struct args *a, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case OPT_FOR:
		if (cli_parse_duration(arg, &a->h.min_age_ns))
			return cli_usage_error("hangs", "hangs: --for: not a "
					       "duration: '%s'", arg);
		break;
	case 'i':
		if (cli_parse_u64(arg, &v) || v < 1 || v > 600000)
			return cli_usage_error("hangs", "hangs: --interval: "
					       "not 1..600000 ms: '%s'", arg);
		a->h.interval_ms = (uint32_t)v;
		break;
	case 'p':
	case 'c':
	case OPT_UID:
		return parse_scope(&a->h.scope, opt, arg);
	case 'a':
		a->h.all = true;
		break;
	case OPT_UNKNOWN:
		a->h.unknown_is_hang = true;
		break;
	case 'j':
		a->json = true;
		break;
	case 's':
		a->stacks = true;
		break;
	}
	return 0;
}

static int parse_args(struct args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "for", required_argument, NULL, OPT_FOR },
		{ "interval", required_argument, NULL, 'i' },
		{ "pid", required_argument, NULL, 'p' },
		{ "comm", required_argument, NULL, 'c' },
		{ "uid", required_argument, NULL, OPT_UID },
		{ "all", no_argument, NULL, 'a' },
		{ "unknown-is-hang", no_argument, NULL, OPT_UNKNOWN },
		{ "json", no_argument, NULL, 'j' },
		{ "stacks", no_argument, NULL, 's' },
		{ "watch", no_argument, NULL, OPT_WATCH },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "rounds", required_argument, NULL, OPT_ROUNDS },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "journal", no_argument, NULL, OPT_JOURNAL },
		{ "all-users", no_argument, NULL, OPT_ALL_USERS },
		{ "history", no_argument, NULL, OPT_HISTORY },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "directory", required_argument, NULL, OPT_DIRECTORY },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "previous-boot", no_argument, NULL, OPT_PREVIOUS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, ret = 0;

	opterr = 0;
	while (!ret && (opt = getopt_long(argc, argv, ":i:p:c:ajsh", opts,
					  NULL)) != -1) {
		switch (opt) {
		case OPT_WATCH:
			a->watching = true;
			break;
		case OPT_EVERY:
		case OPT_ROUNDS:
		case OPT_RATE:
		case OPT_JOURNAL:
		case OPT_ALL_USERS:
			ret = parse_watch_opt(a, opt, optarg);
			break;
		case OPT_HISTORY:
			a->hist = true;
			break;
		case OPT_PREVIOUS:
			cli.previous_boot = true;
			break;
		case OPT_SINCE:
		case OPT_UNTIL:
		case OPT_DIRECTORY:
		case OPT_FILE:
			ret = parse_history_opt(a, opt, optarg,
						argv[optind - 1]);
			break;
		case 'h':
			fputs(cli_help_page("hangs"), stdout);
			return -1;
		case '?':
		case ':':
			return cli_getopt_error("hangs", opt, argv);
		default:
			ret = parse_look_opt(a, opt, optarg);
			break;
		}
	}
	if (!ret && optind < argc)
		return cli_usage_error("hangs", "hangs: unexpected argument "
				       "'%s'", argv[optind]);
	return ret;
}

/* Options that exclude each other.  Return: 0, or the exit status. */
static int check_args(const struct args *a)
{
	const struct hangs *h = &a->h;

	if (a->watch_opt && !a->watching)
		return cli_usage_error("hangs", "hangs: --every, --rounds, "
				       "--rate, --journal and --all-users "
				       "need --watch");
	if (a->hist_opt && !a->hist)
		return cli_usage_error("hangs", "hangs: --since, --until, "
				       "--directory and --file need --history");
	if (a->watching && (a->hist || a->json || h->all))
		return cli_usage_error("hangs", "hangs: --watch: not with "
				       "--history, --json or --all");
	if (a->hist && (a->json || h->all || a->stacks || h->scope.nr_pids ||
			h->scope.comm || h->scope.have_uid))
		return cli_usage_error("hangs", "hangs: --history takes only "
				       "--since, --until, --directory and "
				       "--file");
	if (cli.previous_boot && (a->watching || a->hist || cli.arena))
		return cli_usage_error("hangs", "hangs: --previous-boot: not "
				       "with --watch, --history or --arena");
	if (a->ho.directory && a->ho.file)
		return cli_usage_error("hangs", "hangs: --directory and --file "
				       "exclude each other");
	if (h->all_users && cli.arena)
		return cli_usage_error("hangs", "hangs: --all-users: not with "
				       "--arena (it reads the module's "
				       "arenas)");
	return 0;
}

/* ---- for other commands (cli/hangs.h) ---------------------------------- */

void hangs_process_comm(const struct actrack_snap_process *p, char *buf,
			size_t size)
{
	process_comm(p, buf, size);
}

uint32_t hangs_list_uids(uint32_t **out)
{
	return list_uids(out);
}

/* @fn for hung node @i: its verdict and why, as print_verdict() says. */
static int image_verdict(const struct hangs *h, uint32_t i, hangs_image_fn fn,
			 void *arg)
{
	const struct wg_thread *w = &h->g.threads[i];
	char *why = reason_string(h, i);
	int ret;

	if (!why)
		return -ENOMEM;
	ret = fn(w->proc, w->thread->tid, verdict_name(h->nodes[i].v), why,
		 arg);
	free(why);
	return ret;
}

int hangs_image(const struct actrack_snapshot *s, hangs_image_fn fn,
		void *arg)
{
	struct hangs h = { .min_age_ns = 1000000000ULL, .interval_ms = 200 };
	int ret;

	/* What look() makes of an image: one snapshot, no progress. */
	h.prev = h.cur = s;
	h.saved_image = cli_saved_image(s);
	h.now = cli_now(s, &h.other_boot);
	ret = analyze(&h);
	for (uint32_t i = 0; !ret && i < h.g.nr_threads; i++)
		if (is_hung_node(&h, i))
			ret = image_verdict(&h, i, fn, arg);
	wg_free(&h.g);
	verdict_env_free(&h.env);
	free(h.nodes);
	return ret;
}

int cmd_hangs(int argc, char **argv)
{
	struct actrack_snapshot *s1 = NULL, *s2 = NULL;
	struct args a = {
		.w = { .every_ns = 10000000000ULL, .rate = 30,
		       .window_ns = 60000000000ULL },
	};
	struct hangs *h = &a.h;
	int ret;

	h->min_age_ns = 1000000000ULL;
	h->interval_ms = 200;
	ret = parse_args(&a, argc, argv);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = check_args(&a);
	if (ret)
		return ret;
	if (a.hist)
		return history(&a.ho);
	if (a.watching) {
		a.w.stacks = a.stacks;
		h->watching = true;
		ret = watch(h, &a.w);
		sym_free(h->sym);
		return ret;
	}

	ret = look(h, &s1, &s2);
	if (ret == 1)
		goto out;
	if (ret)
		goto fail;
	if (a.stacks && (h->nr_hung || h->nr_unknown))
		collect_stacks(h);
	ret = a.json ? print_json(h) : print_text(h);
	goto out;
fail:
	cli_error("hangs", ret);
	ret = 1;
out:
	forget(h, &s1, &s2);
	sym_free(h->sym);
	return ret;
}
