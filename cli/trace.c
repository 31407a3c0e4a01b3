// SPDX-License-Identifier: MIT
/*
 * `actrack dump --trace`: the snapshot as Chrome trace-event JSON, the
 * format ui.perfetto.dev and chrome://tracing open directly.
 *
 * Each thread becomes one track (pid/tid, named by "M" metadata events)
 * and each activity on its stack one "B" (begin) event at the time it was
 * pushed.  There are no "E" events: every activity in a snapshot is still
 * going on, and Perfetto shows a slice without an end as "did not end",
 * which is exactly the state of a hung or crashed thread.  An instant
 * event marks the moment of the snapshot so that the timeline reaches it,
 * and log messages appear as instant events on their threads.
 *
 * Timestamps are microseconds since the arena was created (its
 * create_mono_ns), so they stay small and the first process starts near 0;
 * pushes stamp with a coarse clock that may lag the creation stamp by a
 * tick, so the origin is moved back to the earliest timestamp shown if
 * that is earlier (otherData.ts_base_ns says where it is).
 * A stack's inner activities never start before outer ones; forged or
 * skewed times that say otherwise are clamped so the slices still nest.
 */
#include <string.h>
#include "cli.h"
#include "json.h"
#include "symbolize.h"

struct trace {
	struct json j;
	struct symbolizer *sym;
	uint64_t base_ns;		/* ts 0 */
};

static int64_t rel_ns(const struct trace *t, uint64_t ns)
{
	return (int64_t)(ns - t->base_ns);
}

static void event_head(struct trace *t, const char *name, size_t max,
		       const char *ph, uint32_t pid, uint32_t tid)
{
	struct json *j = &t->j;

	json_object_begin(j);
	json_kv_string(j, "name", name, max);
	json_kv_string(j, "ph", ph, 2);
	json_kv_u64(j, "pid", pid);
	json_kv_u64(j, "tid", tid);
}

static void metadata(struct trace *t, const char *what, uint32_t pid,
		     uint32_t tid, const char *name, size_t max)
{
	struct json *j = &t->j;

	event_head(t, what, strlen(what), "M", pid, tid);
	json_key(j, "args");
	json_object_begin(j);
	json_kv_string(j, "name", name, max);
	json_object_end(j);
	json_object_end(j);
}

static void activity_event(struct trace *t,
			   const struct actrack_snap_process *p,
			   const struct actrack_snap_thread *th,
			   const struct actrack_snap_activity *sa,
			   int64_t ts_ns)
{
	struct json *j = &t->j;
	char name[160], obj[128], sym[512];

	snprintf(name, sizeof(name), "%s %s", actrack_activity_name(sa->a.type),
		 cli_activity_object(obj, sizeof(obj), &sa->a));
	event_head(t, name, sizeof(name), "B", p->pid, th->tid);
	json_kv_string(j, "cat", actrack_activity_name(sa->a.type), 32);
	json_key(j, "ts");
	json_ns_as_us(j, ts_ns);
	json_key(j, "args");
	json_object_begin(j);
	json_kv_u64_str(j, "object", sa->a.object);
	json_kv_u64_str(j, "info", sa->a.info);
	json_kv_u64(j, "origin", sa->a.origin);
	json_kv_string(j, "symbol",
		       sym_format(t->sym, p->modules, p->nr_modules,
				  sa->a.origin, sym, sizeof(sym)),
		       sizeof(sym));
	json_key(j, "values");
	json_array_begin(j);
	for (uint32_t i = 0; sa->values && i < sa->nr_values; i++)
		json_value(j, &sa->values[i]);
	json_array_end(j);
	json_object_end(j);
	json_object_end(j);
}

static void thread_events(struct trace *t,
			  const struct actrack_snap_process *p,
			  const struct actrack_snap_thread *th)
{
	int64_t last = INT64_MIN;

	metadata(t, "thread_name", p->pid, th->tid, th->name, sizeof(th->name));
	for (uint32_t i = 0; th->activities && i < th->nr_activities; i++) {
		const struct actrack_snap_activity *sa = &th->activities[i];
		int64_t ts = rel_ns(t, sa->a.time_ns);

		if (ts < last)
			ts = last;
		last = ts;
		activity_event(t, p, th, sa, ts);
	}
}

static bool has_thread(const struct actrack_snap_process *p, uint32_t tid)
{
	for (uint32_t i = 0; p->threads && i < p->nr_threads; i++)
		if (p->threads[i].tid == tid)
			return true;
	return false;
}

static void process_events(struct trace *t,
			   const struct actrack_snap_process *p)
{
	struct json *j = &t->j;
	char name[ACTRACK_CMDLINE_MAX + 64];

	if (p->has_record && p->cmdline[0])
		snprintf(name, sizeof(name), "%s", p->cmdline);
	else
		snprintf(name, sizeof(name), "pid %u", p->pid);
	metadata(t, "process_name", p->pid, 0, name, sizeof(name));
	for (uint32_t i = 0; p->threads && i < p->nr_threads; i++)
		thread_events(t, p, &p->threads[i]);
	for (uint32_t i = 0; p->logs && i < p->nr_logs; i++) {
		const struct actrack_snap_log *l = &p->logs[i];

		/* A message from a thread without a tracker goes on the
		 * process's track rather than on an unnamed one. */
		event_head(t, l->text, sizeof(l->text), "i", p->pid,
			   has_thread(p, l->tid) ? l->tid : p->pid);
		json_kv_string(j, "cat", "log", 4);
		json_kv_string(j, "s", has_thread(p, l->tid) ? "t" : "p", 2);
		json_key(j, "ts");
		json_ns_as_us(j, rel_ns(t, l->time_ns));
		json_key(j, "args");
		json_object_begin(j);
		json_kv_u64(j, "tid", l->tid);
		json_kv_u64(j, "seq", l->seq);
		json_object_end(j);
		json_object_end(j);
	}
}

/* Arena creation, or the earliest timestamp shown if that is earlier. */
static uint64_t trace_base(const struct actrack_snapshot *s, bool have_pid,
			   uint32_t pid)
{
	uint64_t base = s->header.create_mono_ns;

	for (uint32_t i = 0; i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		if (have_pid && p->pid != pid)
			continue;
		for (uint32_t k = 0; p->logs && k < p->nr_logs; k++)
			if (p->logs[k].time_ns < base)
				base = p->logs[k].time_ns;
		for (uint32_t k = 0; p->threads && k < p->nr_threads; k++) {
			const struct actrack_snap_thread *th = &p->threads[k];

			for (uint32_t a = 0; th->activities &&
			     a < th->nr_activities; a++)
				if (th->activities[a].a.time_ns < base)
					base = th->activities[a].a.time_ns;
		}
	}
	return base;
}

int cli_dump_trace(const struct actrack_snapshot *s, uint64_t now,
		   bool other_boot, bool have_pid, uint32_t pid)
{
	struct trace t;
	struct json *j = &t.j;
	bool found = false;
	int ret;

	for (uint32_t i = 0; i < s->nr_processes; i++)
		found |= s->processes[i].pid == pid;
	if (have_pid && !found)
		return cli_no_such_pid(pid);
	t.sym = sym_new();
	t.base_ns = trace_base(s, have_pid, pid);
	/* One event per line: big traces stay readable and diffable. */
	json_init(j, stdout, 2);
	json_object_begin(j);
	json_key(j, "traceEvents");
	json_array_begin(j);
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		if (have_pid && s->processes[i].pid != pid)
			continue;
		process_events(&t, &s->processes[i]);
	}
	event_head(&t, "snapshot", 8, "i", 0, 0);
	json_kv_string(j, "s", "g", 2);
	json_key(j, "ts");
	json_ns_as_us(j, rel_ns(&t, now));
	json_object_end(j);
	json_array_end(j);
	json_kv_string(j, "displayTimeUnit", "ms", 2);
	json_key(j, "otherData");
	json_object_begin(j);
	json_kv_string(j, "schema", "actrack-trace/1", 32);
	json_kv_string(j, "arena", cli_arena_name(), 4096);
	json_kv_u64_str(j, "create_mono_ns", s->header.create_mono_ns);
	json_kv_u64_str(j, "create_real_ns", s->header.create_real_ns);
	json_kv_u64_str(j, "ts_base_ns", t.base_ns);
	json_kv_u64_str(j, "now_ns", now);
	json_kv_bool(j, "other_boot", other_boot);
	json_object_end(j);
	json_object_end(j);
	ret = json_finish(j);
	sym_free(t.sym);
	if (ret) {
		cli_error("stdout", ret);
		return 1;
	}
	return 0;
}
