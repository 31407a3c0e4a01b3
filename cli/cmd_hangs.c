// SPDX-License-Identifier: MIT
/*
 * actrack hangs: threads stuck in a wait, and the deadlocks among them.
 *
 * A wait that is merely long is not a hang: a thread reading a slow pipe
 * may sit in one io-wait for minutes while it keeps making progress.  So
 * we take two snapshots an interval apart and call a thread hung only if
 * its innermost activity is a wait older than the threshold AND its stack
 * did not move in between: same depth and the same innermost activity
 * (time, origin, object, info), so a thread that updates its wait
 * (actrack_change(): bytes read so far) or pushes and pops above it is
 * left alone.  The wait-for graph of the hung threads (waitgraph.c) then
 * names who holds what they wait for, and its cycles are deadlocks.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "json.h"
#include "render.h"
#include "stacks.h"
#include "symbolize.h"
#include "waitgraph.h"

struct hangs {
	const struct actrack_snapshot *prev, *cur;
	uint64_t now, min_age_ns;
	uint32_t interval_ms;
	bool other_boot;
	bool saved_image;		/* one moment: no progress check */
	struct symbolizer *sym;
	struct stacks *stacks;		/* --stacks, else NULL */
	struct waitgraph g;
	uint32_t nr_hung;
};

static const struct actrack_snap_process *
find_process(const struct actrack_snapshot *s, uint32_t pid,
	     uint64_t start_ticks)
{
	uint32_t lo = 0, hi = s->nr_processes;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct actrack_snap_process *p = &s->processes[mid];

		if (p->pid == pid && p->start_ticks == start_ticks)
			return p;
		if (p->pid < pid ||
		    (p->pid == pid && p->start_ticks < start_ticks))
			lo = mid + 1;
		else
			hi = mid;
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

/* The wait-graph filter: is this thread of the second snapshot hung? */
static bool is_hung(const struct actrack_snap_process *p,
		    const struct actrack_snap_thread *t, void *arg)
{
	struct hangs *h = arg;
	const struct actrack_snap_process *op;
	const struct actrack_snap_thread *ot;
	const struct actrack_activity *a;

	/* wg_build() only asks about stored, innermost waits. */
	a = &t->activities[t->nr_activities - 1].a;
	if (a->time_ns > h->now || h->now - a->time_ns < h->min_age_ns)
		return false;
	op = find_process(h->prev, p->pid, p->start_ticks);
	ot = op ? find_thread(op, t->tid) : NULL;
	/* New since the first snapshot, or unreadable then: not proven. */
	if (!ot || ot->torn || ot->depth != t->depth ||
	    ot->version != t->version ||
	    ot->nr_activities != t->nr_activities)
		return false;
	return same_activity(&ot->activities[ot->nr_activities - 1].a, a);
}

/* ---- text output --------------------------------------------------------- */

static void print_thread_id(const struct wg_thread *w, bool with_process)
{
	printf("%u '", w->thread->tid);
	cli_print_escaped(stdout, w->thread->name, sizeof(w->thread->name));
	putchar('\'');
	if (with_process)
		printf(" (process %u)", w->proc->pid);
}

static void print_cmdline(const struct actrack_snap_process *p)
{
	if (!p->has_record || !p->cmdline[0])
		return;
	fputs(" (", stdout);
	/* Long command lines would drown the diagnosis. */
	cli_print_escaped(stdout, p->cmdline, 64);
	if (strnlen(p->cmdline, sizeof(p->cmdline)) > 64)
		fputs("...", stdout);
	putchar(')');
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

	/* Only meaningful on the boot the arena comes from. */
	if (h->other_boot)
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
			fputs(" (not tracked, or no tracked threads)", stdout);
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
	stacks_print(h->stacks, h->sym, stdout, "    ", w->proc, w->thread->tid);
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

static void print_cycle(const struct hangs *h, const struct wg_cycle *c)
{
	const struct waitgraph *g = &h->g;

	fputs("DEADLOCK: ", stdout);
	for (uint32_t k = 0; k < c->nr; k++) {
		print_thread_id(&g->threads[g->edges[c->edges[k]].from], false);
		fputs(" -> ", stdout);
	}
	print_thread_id(&g->threads[g->edges[c->edges[0]].from], false);
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

static int print_text(struct hangs *h)
{
	const struct waitgraph *g = &h->g;
	char dur[32];

	cli_print_time_note(stdout, h->cur, h->other_boot);
	for (uint32_t i = 0; i < g->nr_threads; i++)
		if (g->threads[i].wait)
			print_hung(h, i);
	if (h->nr_hung && g->nr_cycles)
		putchar('\n');
	for (uint32_t k = 0; k < g->nr_cycles; k++)
		print_cycle(h, &g->cycles[k]);
	if (g->truncated)
		puts("note: too many wait edges; the graph was truncated");
	if (h->nr_hung)
		printf("%u hung thread%s, %u deadlock%s", h->nr_hung,
		       h->nr_hung == 1 ? "" : "s", g->nr_cycles,
		       g->nr_cycles == 1 ? "" : "s");
	else
		fputs("no hung threads", stdout);
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
	return ferror(stdout) ? 1 : h->nr_hung ? EXIT_HANGS : 0;
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
	if (h->other_boot)
		json_null(j);
	else
		json_bool(j, !process_gone(h, w->proc));
	json_kv_u64(j, "depth", w->thread->depth);
	json_key(j, "activity");
	/* The wait is the innermost stored activity (waitgraph.c). */
	render_activity_json(&r, j, w->proc, w->thread,
			     (uint32_t)(w->wait - w->thread->activities));
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
	if (h->stacks) {
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
		if (g->threads[i].wait)
			json_hung(&j, h, i);
	json_array_end(&j);
	json_key(&j, "deadlocks");
	json_array_begin(&j);
	for (uint32_t k = 0; k < g->nr_cycles; k++)
		json_cycle(&j, h, &g->cycles[k]);
	json_array_end(&j);
	json_object_end(&j);
	if (json_finish(&j)) {
		cli_error("stdout", -EIO);
		return 1;
	}
	return h->nr_hung ? EXIT_HANGS : 0;
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

		if (w->wait && stacks_want(h->stacks, w->proc, w->thread->tid)) {
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

int cmd_hangs(int argc, char **argv)
{
	enum { OPT_FOR = 0x100 };
	static const struct option opts[] = {
		{ "for", required_argument, NULL, OPT_FOR },
		{ "interval", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "stacks", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct actrack_snapshot *s1 = NULL, *s2 = NULL;
	struct hangs h;
	bool json = false, stacks = false;
	uint64_t v;
	int opt, ret;

	memset(&h, 0, sizeof(h));
	h.min_age_ns = 1000000000ULL;
	h.interval_ms = 200;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "i:jsh", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_FOR:
			if (cli_parse_duration(optarg, &h.min_age_ns))
				return cli_usage_error("hangs", "hangs: --for: "
						       "not a duration: '%s'",
						       optarg);
			break;
		case 'i':
			if (cli_parse_u64(optarg, &v) || v < 1 || v > 600000)
				return cli_usage_error("hangs", "hangs: "
						       "--interval: not 1..600000"
						       " ms: '%s'", optarg);
			h.interval_ms = (uint32_t)v;
			break;
		case 'j':
			json = true;
			break;
		case 's':
			stacks = true;
			break;
		case 'h':
			fputs(cli_help_page("hangs"), stdout);
			return 0;
		default:
			if (optopt == 'i' || optopt == OPT_FOR)
				return cli_usage_error("hangs", "hangs: %s: "
						       "missing argument",
						       argv[optind - 1]);
			return cli_usage_error("hangs", "hangs: unknown "
					       "option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("hangs", "hangs: unexpected argument "
				       "'%s'", argv[optind]);

	if (cli_snapshot(&s1))
		return 1;
	h.saved_image = cli_saved_image(s1);
	/* A second look at an image would see the same bytes: skip it. */
	if (!h.saved_image) {
		sleep_ms(h.interval_ms);
		if (cli_snapshot(&s2)) {
			actrack_snapshot_free(s1);
			return 1;
		}
	}
	h.prev = s1;
	h.cur = s2 ? s2 : s1;
	h.now = cli_now(h.cur, &h.other_boot);
	h.sym = sym_new();
	ret = wg_build(&h.g, h.cur, is_hung, &h);
	if (ret) {
		cli_error("hangs", ret);
		ret = 1;
		goto out;
	}
	for (uint32_t i = 0; i < h.g.nr_threads; i++)
		h.nr_hung += h.g.threads[i].wait != NULL;
	if (stacks && h.nr_hung)
		collect_stacks(&h);
	ret = json ? print_json(&h) : print_text(&h);
	wg_free(&h.g);
out:
	stacks_free(h.stacks);
	sym_free(h.sym);
	actrack_snapshot_free(s1);
	actrack_snapshot_free(s2);
	return ret;
}
