// SPDX-License-Identifier: MIT
/*
 * The one text and JSON rendering of "what a process was doing" (render.h),
 * for dump, hangs and monitor.
 *
 * Everything printed comes from an arena or from a report about a process
 * that chose its own strings: text goes through cli_print_escaped() and
 * JSON through cli/json.c's writer, which always writes valid UTF-8.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "json.h"
#include "render.h"
#include "unwind.h"
#include "stacks.h"
#include "symbolize.h"

/* ---- text ---------------------------------------------------------------- */

void render_symbol_text(const struct render *r, FILE *f,
			const struct actrack_snap_process *p, uint64_t pc)
{
	char buf[512];

	if (!r->sym || !pc)
		return;
	sym_format(r->sym, p->modules, p->nr_modules, pc, buf, sizeof(buf));
	if (strncmp(buf, "0x", 2))
		fprintf(f, " in %s", buf);
}

/*
 * ", for 12.0 s" (how long it had been going on at r->now: the snapshot or
 * the exit), ", 1.2 s later" for a timestamp after it (a writer's clock
 * ahead of ours, or a forged value), nothing when it has no time.
 */
static void print_duration(const struct render *r, FILE *f, uint64_t t)
{
	char buf[48];

	if (!t)
		return;
	if (r->now >= t)
		fprintf(f, ", for %s", cli_duration(buf, sizeof(buf),
						     r->now - t));
	else
		fprintf(f, ", %s", cli_age(buf, sizeof(buf), r->now, t));
}

static void print_activity(const struct render *r, FILE *f,
			   const struct actrack_snap_process *p,
			   const struct actrack_snap_activity *sa,
			   uint32_t level)
{
	char obj[96];

	fprintf(f, "    [%u] %s %s", level, actrack_activity_name(sa->a.type),
		cli_activity_object(obj, sizeof(obj), &sa->a));
	print_duration(r, f, sa->a.time_ns);
	fprintf(f, ", origin 0x%llx", (unsigned long long)sa->a.origin);
	render_symbol_text(r, f, p, sa->a.origin);
	fputc('\n', f);
	cli_print_values(f, "         ", sa->values, sa->nr_values);
}

/*
 * The backtrace of thread @tid from the stack the kernel copied as it died
 * (unwind.c): as text on @f, or as the value of "stack" with @j (null when
 * none was copied).
 */
static void death_backtrace(const struct render *r, FILE *f, struct json *j,
			    const struct actrack_snap_process *p,
			    uint32_t tid)
{
	const struct actrack_death_stack *st =
		unwind_find_stack(r->report, tid);
	struct bt_frame frames[BT_MAX_FRAMES];
	struct backtrace bt;
	char why[256];

	if (!st) {
		if (j)
			json_null(j);
		return;
	}
	unwind_death_stack(r->report, st, frames, &bt, why, sizeof(why));
	if (j)
		bt_json(&bt, r->sym, j, p->modules, p->nr_modules);
	else
		bt_print(&bt, r->sym, f, "    ", p->modules, p->nr_modules);
}

void render_thread_text(const struct render *r, FILE *f,
			const struct actrack_snap_process *p,
			const struct actrack_snap_thread *t)
{
	char sig[32];

	fprintf(f, "  thread %u '", t->tid);
	cli_print_escaped(f, t->name, sizeof(t->name));
	if (t->torn) {
		fprintf(f, "' depth %u (torn: changed while reading)\n",
			t->depth);
		return;
	}
	fprintf(f, "' depth %u", t->depth);
	if (t->depth > t->nr_activities)
		fprintf(f, " (+%u not stored)", t->depth - t->nr_activities);
	fputc('\n', f);
	if (t->fatal_signo) {
		fprintf(f, "    fatal signal %s (%d) code %d addr 0x%" PRIx64
			" pc 0x%" PRIx64,
			cli_signal_name(t->fatal_signo, sig, sizeof(sig)),
			t->fatal_signo, t->fatal_code, t->fatal_addr,
			t->fatal_pc);
		render_symbol_text(r, f, p, t->fatal_pc);
		fputc('\n', f);
	}
	/* Innermost first: that is where a hang is. */
	for (uint32_t i = t->nr_activities; t->activities && i-- > 0;)
		print_activity(r, f, p, &t->activities[i], i + 1);
	if (r->stacks)
		stacks_print(r->stacks, r->sym, f, "    ", p, t->tid);
	else if (r->report)
		death_backtrace(r, f, NULL, p, t->tid);
}

static void print_module(FILE *f, const struct actrack_snap_module *m)
{
	fprintf(f, "    0x%016" PRIx64 " size 0x%" PRIx64 " build-id ",
		m->base, m->size);
	if (!m->build_id_size || m->build_id_size > ACTRACK_BUILD_ID_MAX)
		fputc('-', f);
	for (uint32_t i = 0; m->build_id_size <= ACTRACK_BUILD_ID_MAX &&
	     i < m->build_id_size; i++)
		fprintf(f, "%02x", m->build_id[i]);
	fputc(' ', f);
	cli_print_escaped(f, m->path, sizeof(m->path));
	fputc('\n', f);
}

void render_process_text(const struct render *r, FILE *f,
			 const struct actrack_snap_process *p)
{
	char buf[48];

	if (p->nr_values) {
		fputs("  annotations:\n", f);
		cli_print_values(f, "    ", p->values, p->nr_values);
	}
	if (p->nr_modules) {
		fputs("  modules:\n", f);
		for (uint32_t i = 0; p->modules && i < p->nr_modules; i++)
			print_module(f, &p->modules[i]);
	}
	if (p->nr_logs) {
		fputs("  log:\n", f);
		for (uint32_t i = 0; p->logs && i < p->nr_logs; i++) {
			const struct actrack_snap_log *l = &p->logs[i];

			fprintf(f, "    %s tid %u: ",
				cli_offset(buf, sizeof(buf), r->now,
					   l->time_ns), l->tid);
			cli_print_escaped(f, l->text, sizeof(l->text));
			fputc('\n', f);
		}
	}
	for (uint32_t i = 0; p->threads && i < p->nr_threads; i++)
		render_thread_text(r, f, p, &p->threads[i]);
}

/* ---- JSON ---------------------------------------------------------------- */

void json_symbol(struct json *j, struct symbolizer *sym,
		 const struct actrack_snap_module *mods, uint32_t nr_mods,
		 uint64_t pc)
{
	struct sym_info info;
	char text[512];
	bool found;

	if (!pc) {
		json_null(j);
		return;
	}
	found = sym_lookup(sym, mods, nr_mods, pc, &info);
	sym_format_info(found ? &info : NULL, pc, text, sizeof(text));
	json_object_begin(j);
	json_kv_string(j, "text", text, sizeof(text));
	json_kv_string(j, "module", info.module, ACTRACK_PATH_MAX);
	json_key(j, "module_offset");
	if (info.module)
		json_u64(j, info.module_offset);
	else
		json_null(j);
	json_kv_string(j, "function", info.function, 1024);
	json_key(j, "function_offset");
	if (info.function)
		json_u64(j, info.function_offset);
	else
		json_null(j);
	json_kv_string(j, "inlined_into", info.inlined_in, 1024);
	json_kv_string(j, "file", info.file, 4096);
	json_key(j, "line");
	if (info.line > 0)
		json_u64(j, (uint64_t)info.line);
	else
		json_null(j);
	json_kv_string(j, "note", info.note, 128);
	json_object_end(j);
}

static int64_t age_ns(const struct render *r, uint64_t t)
{
	/* Negative for a timestamp ahead of now (clock skew or forgery). */
	return (int64_t)(r->now - t);
}

void render_activity_json(const struct render *r, struct json *j,
			  const struct actrack_snap_process *p,
			  const struct actrack_snap_thread *t, uint32_t i)
{
	const struct actrack_snap_activity *sa = &t->activities[i];
	char desc[128];

	json_object_begin(j);
	json_kv_u64(j, "level", (uint64_t)i + 1);
	json_kv_string(j, "type", actrack_activity_name(sa->a.type), 32);
	json_kv_u64(j, "type_id", sa->a.type);
	json_kv_u64_str(j, "object", sa->a.object);
	json_kv_u64_str(j, "info", sa->a.info);
	json_kv_string(j, "description",
		       cli_activity_object(desc, sizeof(desc), &sa->a),
		       sizeof(desc));
	json_kv_u64_str(j, "time_ns", sa->a.time_ns);
	json_kv_i64_str(j, "age_ns", age_ns(r, sa->a.time_ns));
	json_kv_u64(j, "origin", sa->a.origin);
	json_key(j, "symbol");
	json_symbol(j, r->sym, p->modules, p->nr_modules, sa->a.origin);
	json_values(j, "values", sa->values, sa->nr_values);
	json_object_end(j);
}

void render_thread_json(const struct render *r, struct json *j,
			const struct actrack_snap_process *p,
			const struct actrack_snap_thread *t)
{
	char sig[32];

	json_object_begin(j);
	json_kv_u64(j, "tid", t->tid);
	json_kv_string(j, "name", t->name, sizeof(t->name));
	/* A death report does not say when the thread's tracker began. */
	if (r->death)
		json_kv_null(j, "start_time_ns");
	else
		json_kv_u64_str(j, "start_time_ns", t->start_time_ns);
	json_kv_u64(j, "depth", t->depth);
	json_kv_u64(j, "stored", t->torn ? 0 : t->nr_activities);
	json_kv_bool(j, "torn", t->torn);
	json_key(j, "fatal");
	if (t->fatal_signo) {
		json_object_begin(j);
		json_kv_i64(j, "signo", t->fatal_signo);
		json_kv_string(j, "signal",
			       cli_signal_name(t->fatal_signo, sig,
					       sizeof(sig)), sizeof(sig));
		json_kv_i64(j, "code", t->fatal_code);
		json_kv_u64(j, "addr", t->fatal_addr);
		json_kv_u64(j, "pc", t->fatal_pc);
		json_key(j, "symbol");
		json_symbol(j, r->sym, p->modules, p->nr_modules,
			    t->fatal_pc);
		json_object_end(j);
	} else {
		json_null(j);
	}
	json_key(j, "activities");
	json_array_begin(j);
	for (uint32_t i = 0; !t->torn && t->activities &&
	     i < t->nr_activities; i++)
		render_activity_json(r, j, p, t, i);
	json_array_end(j);
	if (r->stacks) {
		json_key(j, "stack");
		stacks_json(r->stacks, r->sym, j, p, t->tid);
	} else if (r->report && r->report->nr_stacks) {
		/* Like --stacks: the member is there when stacks are. */
		json_key(j, "stack");
		death_backtrace(r, NULL, j, p, t->tid);
	}
	json_object_end(j);
}

void render_module_json(struct json *j, const struct actrack_snap_module *m)
{
	json_object_begin(j);
	json_kv_string(j, "path", m->path, sizeof(m->path));
	json_kv_u64(j, "base", m->base);
	json_kv_u64(j, "size", m->size);
	json_kv_u64(j, "vaddr", m->vaddr);
	json_key(j, "build_id");
	json_hex_bytes(j, m->build_id,
		       m->build_id_size <= ACTRACK_BUILD_ID_MAX ?
		       m->build_id_size : 0);
	json_object_end(j);
}

void render_process_json(const struct render *r, struct json *j,
			 const struct actrack_snap_process *p)
{
	json_object_begin(j);
	json_kv_u64(j, "pid", p->pid);
	json_kv_u64(j, "start_ticks", p->start_ticks);
	json_kv_bool(j, "has_record", p->has_record);
	if (p->has_record) {
		json_kv_string(j, "phase", actrack_phase_name(p->phase), 32);
		json_kv_u64(j, "phase_id", p->phase);
	} else {
		json_kv_null(j, "phase");
		json_kv_null(j, "phase_id");
	}
	/* A death report has no parent or launch time: null, as for a
	 * process without a record. */
	if (p->has_record && !r->death) {
		json_kv_u64(j, "parent_pid", p->parent_pid);
		json_kv_string(j, "cmdline", p->cmdline, sizeof(p->cmdline));
		json_kv_u64_str(j, "launch_time_ns", p->launch_time_ns);
		json_kv_i64_str(j, "age_ns", age_ns(r, p->launch_time_ns));
	} else {
		json_kv_null(j, "parent_pid");
		if (p->has_record)
			json_kv_string(j, "cmdline", p->cmdline,
				       sizeof(p->cmdline));
		else
			json_kv_null(j, "cmdline");
		json_kv_null(j, "launch_time_ns");
		json_kv_null(j, "age_ns");
	}
	json_values(j, "values", p->values, p->nr_values);
	json_key(j, "modules");
	json_array_begin(j);
	for (uint32_t i = 0; p->modules && i < p->nr_modules; i++)
		render_module_json(j, &p->modules[i]);
	json_array_end(j);
	json_key(j, "logs");
	json_array_begin(j);
	for (uint32_t i = 0; p->logs && i < p->nr_logs; i++) {
		const struct actrack_snap_log *l = &p->logs[i];

		json_object_begin(j);
		json_kv_u64(j, "seq", l->seq);
		json_kv_u64(j, "tid", l->tid);
		json_kv_u64_str(j, "time_ns", l->time_ns);
		json_kv_i64_str(j, "age_ns", age_ns(r, l->time_ns));
		json_kv_string(j, "text", l->text, sizeof(l->text));
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "threads");
	json_array_begin(j);
	for (uint32_t i = 0; p->threads && i < p->nr_threads; i++)
		render_thread_json(r, j, p, &p->threads[i]);
	json_array_end(j);
	json_object_end(j);
}

/* ---- death reports ------------------------------------------------------- */

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

bool render_real_time(uint64_t real_ns, bool utc_iso, char *buf, size_t len)
{
	time_t secs = (time_t)(real_ns / 1000000000ULL);
	struct tm tm;
	size_t n;

	if (!real_ns ||
	    (utc_iso ? !gmtime_r(&secs, &tm) : !localtime_r(&secs, &tm))) {
		snprintf(buf, len, "unknown");
		return false;
	}
	n = strftime(buf, len, utc_iso ? "%Y-%m-%dT%H:%M:%S" :
			       "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03u%s",
		 (unsigned int)(real_ns % 1000000000ULL / 1000000),
		 utc_iso ? "Z" : "");
	return true;
}

/* Wall clock of a CLOCK_MONOTONIC instant, via the offset between the
 * clocks now (close enough for a report; NTP steps are not undone).
 * Return: false (and "unknown") when it cannot be told. */
static bool format_time(uint64_t mono_ns, bool utc_iso, char *buf,
			size_t len)
{
	uint64_t mono_now = clock_ns(CLOCK_MONOTONIC);
	uint64_t real_now = clock_ns(CLOCK_REALTIME);

	if (!mono_ns || mono_ns > mono_now || mono_now - mono_ns > real_now) {
		snprintf(buf, len, "unknown");
		return false;
	}
	return render_real_time(real_now - (mono_now - mono_ns), utc_iso, buf,
				len);
}

const char *render_killer_kind(uint32_t kind)
{
	switch (kind) {
	case ACTRACK_KILLER_PROCESS:
		return "process";
	case ACTRACK_KILLER_SELF:
		return "self";
	case ACTRACK_KILLER_KERNEL:
		return "kernel";
	default:
		return "unknown";
	}
}

/* How a sender's signal was sent, from its si_code (NULL: not said). */
static const char *killer_via(const struct actrack_death_killer *k)
{
	switch (k->code) {
	case SI_USER:
		return "kill()";
	case SI_TKILL:
		return k->kind == ACTRACK_KILLER_SELF ? "raise()" : "tgkill()";
	case SI_QUEUE:
		return "sigqueue()";
	case SI_TIMER:
		return "a timer";
	case SI_MESGQ:
		return "a message queue";
	case SI_ASYNCIO:
		return "asynchronous I/O";
	case SI_SIGIO:
		return "SIGIO";
	default:
		return NULL;
	}
}

/*
 * "  killed by SIGKILL from pid 812 (grim-reaper, /usr/bin/grim-reaper,
 * uid 0, /system.slice/cron.service) via kill()": the executable and the
 * cgroup (ABI 1.8) when the report tells them.
 */
static void death_killer_text(FILE *f, const struct actrack_death *d)
{
	const struct actrack_death_killer *k = &d->killer;
	const char *via = killer_via(k);
	char sig[32];

	if (!d->has_killer)
		return;
	fprintf(f, "  killed by %s ",
		cli_signal_name(k->signal, sig, sizeof(sig)));
	if (k->kind == ACTRACK_KILLER_KERNEL) {
		fputs("from the kernel", f);
		if (!via)
			fprintf(f, " (si_code %d%s)", k->code,
				k->code == SI_KERNEL ? ", SI_KERNEL" : "");
	} else if (k->kind == ACTRACK_KILLER_SELF) {
		fputs("by itself", f);
	} else if (!k->pid) {
		fputs("from a process outside your pid namespace", f);
	} else {
		fprintf(f, "from pid %u (", k->pid);
		cli_print_escaped(f, k->comm, sizeof(k->comm));
		if (k->exe[0]) {
			fputs(", ", f);
			cli_print_escaped(f, k->exe, sizeof(k->exe));
		}
		fprintf(f, ", uid %u", k->uid);
		if (k->cgroup[0]) {
			fputs(", ", f);
			cli_print_escaped(f, k->cgroup, sizeof(k->cgroup));
		}
		fputc(')', f);
	}
	if (via)
		fprintf(f, " via %s", via);
	fputc('\n', f);
}

/* @b bytes as "512.0 MiB" (binary units; "812 B" below 1 KiB). */
static void format_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	size_t u = 0;

	if (b < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", b);
		return;
	}
	v /= 1024;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
}

/*
 * "  killed by the OOM killer: memory cgroup /system.slice/db.service at
 * its limit 512.0 MiB, rss 498.2 MiB anon" (kinds of RSS that are 0 are
 * left out; oom_score_adj when not 0).
 */
static void death_oom_text(FILE *f, const struct actrack_death *d)
{
	const struct actrack_death_oom *o = &d->oom;
	const struct {
		uint64_t v;
		const char *kind;
	} rss[] = { { o->anon, "anon" }, { o->file, "file" },
		    { o->shmem, "shmem" } };
	const char *sep = " ";
	char b[32];

	fputs("  killed by the OOM killer", f);
	if (o->memcg_limit) {
		fputs(": memory cgroup ", f);
		if (o->memcg[0])
			cli_print_escaped(f, o->memcg, sizeof(o->memcg));
		else
			fputs("(path not told)", f);
		format_bytes(o->memcg_limit, b, sizeof(b));
		fprintf(f, " at its limit %s", b);
	} else {
		fputs(": no memory cgroup at its limit", f);
	}
	fputs(", rss", f);
	for (size_t i = 0; i < sizeof(rss) / sizeof(rss[0]); i++) {
		if (!rss[i].v)
			continue;
		format_bytes(rss[i].v, b, sizeof(b));
		fprintf(f, "%s%s %s", sep, b, rss[i].kind);
		sep = ", ";
	}
	if (!o->anon && !o->file && !o->shmem)
		fputs(" 0 B", f);
	if (o->score_adj)
		fprintf(f, ", oom_score_adj %d", (int)o->score_adj);
	fputc('\n', f);
}

/* "  cgroup /system.slice/db.service (unit db.service)" */
static void death_cgroup_text(FILE *f, const struct actrack_death *d)
{
	if (!d->cgroup[0])
		return;
	fputs("  cgroup ", f);
	cli_print_escaped(f, d->cgroup, sizeof(d->cgroup));
	if (d->unit[0]) {
		fputs(" (unit ", f);
		cli_print_escaped(f, d->unit, sizeof(d->unit));
		fputc(')', f);
	}
	fputc('\n', f);
}

/* The headline, when and whose, and warnings of a death report. */
static void death_head_text(FILE *f, const struct actrack_death *d,
			    const char *source)
{
	const struct actrack_snap_process *p = &d->process;
	char sig[32], when[64];

	fprintf(f, "pid %u (", p->pid);
	if (p->cmdline[0])
		cli_print_escaped(f, p->cmdline, sizeof(p->cmdline));
	else
		fputc('?', f);
	fputc(')', f);
	if (d->signal)
		fprintf(f, " killed by %s%s",
			cli_signal_name(d->signal, sig, sizeof(sig)),
			d->core_dumped ? " [core dumped]" : "");
	else
		fprintf(f, " exited with code %d", d->exit_code);
	fprintf(f, " after phase %s", actrack_phase_name(p->phase));
	if (p->phase > ACTRACK_PHASE_MAX)
		fprintf(f, " (%u)", p->phase);
	fputc('\n', f);
	/* The OOM kill says who sent its SIGKILL, and why. */
	if (d->has_oom)
		death_oom_text(f, d);
	else
		death_killer_text(f, d);
	death_cgroup_text(f, d);

	format_time(d->exit_time_ns, false, when, sizeof(when));
	fprintf(f, "  uid %u, start tick %" PRIu64 ", died %s", d->uid,
		p->start_ticks, when);
	if (d->seq)
		fprintf(f, ", report #%" PRIu64, d->seq);
	if (strcmp(source, "live"))
		fprintf(f, " (%s)", source);
	fputc('\n', f);
	if (d->flags & ACTRACK_DEATH_ARENA_CORRUPT)
		fputs("  warning: the arena was corrupt; records may be "
		      "missing\n", f);
	if (d->flags & ACTRACK_DEATH_TRUNCATED)
		fputs("  warning: the report is truncated (too many threads, "
		      "activities or user data)\n", f);
	if (d->flags & ACTRACK_DEATH_STACKS_CUT)
		fputs("  warning: not every thread's stack was kept (module "
		      "parameters stack_threads, stack_slots)\n", f);
	if (d->flags & ACTRACK_DEATH_STACKS_PRIVATE)
		fputs("  no backtraces: the process was not dumpable, its "
		      "memory is private\n", f);
	if (d->flags & ACTRACK_DEATH_STACKS_WITHHELD)
		fputs("  stacks withheld: Yama's ptrace_scope keeps this reader "
		      "from the process's memory\n", f);
	if (d->flags & ACTRACK_DEATH_STACKS_UNSUPPORTED)
		fputs("  warning: some threads ran 32-bit code: no stack "
		      "captured for them\n", f);
}

/* @key: @s, or null when it is "" (not known). */
static void death_opt_string(struct json *j, const char *key, const char *s,
			     size_t max)
{
	if (s[0])
		json_kv_string(j, key, s, max);
	else
		json_kv_null(j, key);
}

/* "killer": the sender of the fatal signal, when the report names it. */
static void death_killer_json(struct json *j, const struct actrack_death *d)
{
	const struct actrack_death_killer *k = &d->killer;
	char sig[32];

	if (!d->has_killer)
		return;
	json_key(j, "killer");
	json_object_begin(j);
	json_kv_string(j, "kind", render_killer_kind(k->kind), 16);
	json_kv_i64(j, "signal", k->signal);
	json_kv_string(j, "signal_name",
		       cli_signal_name(k->signal, sig, sizeof(sig)),
		       sizeof(sig));
	json_kv_i64(j, "si_code", k->code);
	if (k->kind == ACTRACK_KILLER_KERNEL || !k->pid) {
		json_kv_null(j, "pid");
		json_kv_null(j, "comm");
		json_kv_null(j, "uid");
		json_kv_null(j, "exe");
		json_kv_null(j, "cgroup");
	} else {
		json_kv_u64(j, "pid", k->pid);
		json_kv_string(j, "comm", k->comm, sizeof(k->comm));
		json_kv_u64(j, "uid", k->uid);
		death_opt_string(j, "exe", k->exe, sizeof(k->exe));
		death_opt_string(j, "cgroup", k->cgroup, sizeof(k->cgroup));
	}
	json_object_end(j);
}

/* "oom": the OOM killer chose it, when the report says so. */
static void death_oom_json(struct json *j, const struct actrack_death *d)
{
	const struct actrack_death_oom *o = &d->oom;

	if (!d->has_oom)
		return;
	json_key(j, "oom");
	json_object_begin(j);
	json_kv_u64(j, "rss_anon", o->anon);
	json_kv_u64(j, "rss_file", o->file);
	json_kv_u64(j, "rss_shmem", o->shmem);
	json_kv_i64(j, "oom_score_adj", o->score_adj);
	if (o->memcg_limit) {
		if (o->memcg[0])
			json_kv_string(j, "memcg", o->memcg,
				       sizeof(o->memcg));
		else
			json_kv_null(j, "memcg");
		json_kv_u64(j, "memcg_limit", o->memcg_limit);
		json_kv_u64(j, "memcg_usage", o->memcg_usage);
	} else {
		json_kv_null(j, "memcg");
		json_kv_null(j, "memcg_limit");
		json_kv_null(j, "memcg_usage");
	}
	json_object_end(j);
}

/* The exit fields of a death report: members of the open object. */
static void death_head_json(struct json *j, const struct actrack_death *d,
			    const char *source)
{
	char sig[32], when[64];

	json_kv_string(j, "schema", RENDER_DEATH_SCHEMA, 32);
	json_kv_string(j, "source", source, 16);
	json_kv_u64(j, "seq", d->seq);
	json_kv_u64(j, "uid", d->uid);
	json_kv_u64_str(j, "exit_time_ns", d->exit_time_ns);
	json_key(j, "exit_time");
	if (format_time(d->exit_time_ns, true, when, sizeof(when)))
		json_string(j, when, sizeof(when));
	else
		json_null(j);
	json_kv_i64(j, "wait_status", d->wait_status);
	if (d->signal) {
		json_kv_null(j, "exit_code");
		json_kv_i64(j, "signal", d->signal);
		json_kv_string(j, "signal_name",
			       cli_signal_name(d->signal, sig, sizeof(sig)),
			       sizeof(sig));
	} else {
		json_kv_i64(j, "exit_code", d->exit_code);
		json_kv_null(j, "signal");
		json_kv_null(j, "signal_name");
	}
	json_kv_bool(j, "core_dumped", d->core_dumped);
	json_kv_u64(j, "flags", d->flags);
	json_kv_bool(j, "arena_corrupt",
		     d->flags & ACTRACK_DEATH_ARENA_CORRUPT);
	json_kv_bool(j, "truncated", d->flags & ACTRACK_DEATH_TRUNCATED);
	json_kv_bool(j, "stacks_cut", d->flags & ACTRACK_DEATH_STACKS_CUT);
	json_kv_bool(j, "stacks_private",
		     d->flags & ACTRACK_DEATH_STACKS_PRIVATE);
	json_kv_bool(j, "stacks_withheld",
		     d->flags & ACTRACK_DEATH_STACKS_WITHHELD);
	json_kv_bool(j, "stacks_unsupported",
		     d->flags & ACTRACK_DEATH_STACKS_UNSUPPORTED);
	death_killer_json(j, d);
	death_oom_json(j, d);
	if (d->cgroup[0])
		json_kv_string(j, "cgroup", d->cgroup, sizeof(d->cgroup));
	if (d->unit[0])
		json_kv_string(j, "unit", d->unit, sizeof(d->unit));
}

/* A death report: the exit fields, then its process by the renderers
 * every command uses. */
int render_death_text(FILE *f, struct symbolizer *sym,
		      const struct actrack_death *d, const char *source)
{
	const struct render r = { .sym = sym, .now = d->exit_time_ns,
				  .death = true, .report = d };

	death_head_text(f, d, source);
	render_process_text(&r, f, &d->process);
	if (!d->nr_tracked_threads)
		fputs("  no thread records\n", f);
	return 0;
}

int render_death_json(struct json *j, struct symbolizer *sym,
		      const struct actrack_death *d, const char *source)
{
	const struct render r = { .sym = sym, .now = d->exit_time_ns,
				  .death = true, .report = d };

	json_object_begin(j);
	death_head_json(j, d, source);
	json_key(j, "process");
	render_process_json(&r, j, &d->process);
	json_object_end(j);
	return 0;
}
