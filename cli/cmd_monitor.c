// SPDX-License-Identifier: MIT
/*
 * actrack monitor: print death reports of actrack.ko as processes exit.
 *
 * Text output is for people: one headline per death, then what each thread
 * was doing, innermost activity first.  --json is for programs: one object
 * per line (schema in monitor_usage below), flushed per report so that a
 * pipe reader sees each death when it happens; it follows dump --json's
 * conventions (cli/json.c's writer, activities outermost first).
 *
 * Everything printed comes from a report that was validated by the library,
 * but its strings (command line, thread names) were chosen by the dead
 * process: control characters are never written to the terminal raw and
 * JSON strings are always valid UTF-8.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actrack.h"
#include "cli.h"
#include "journal.h"
#include "json.h"
#include "symbolize.h"

static const char monitor_usage[] =
"NAME\n"
"    actrack monitor - print a report for every tracked process that exits\n"
"\n"
"SYNOPSIS\n"
"    actrack monitor [--json|--journal] [--all-uids] [--recent] [--count N]\n"
"                    [--timeout DURATION]\n"
"\n"
"DESCRIPTION\n"
"    actrack.ko sees every exit of a process attached to /dev/actrack and\n"
"    reports how it died (exit code, or signal and core dump), the phase it\n"
"    had reached (actrack_set_phase()), its command line, its annotations\n"
"    (actrack_process_data()) and, for each of its threads, the stack of\n"
"    activities it was in (task, lock, event, join, process wait, I/O)\n"
"    with each activity's user data.  The process's records in the arena are\n"
"    freed when the report is made; the report is what is left.  monitor\n"
"    subscribes to these reports over generic netlink and prints each one\n"
"    as it arrives.\n"
"\n"
"    Only deaths of processes of your own uid are reported, unless\n"
"    --all-uids is given.  Needs the module: on a file arena, deaths are\n"
"    reported to the launching parent instead (actrack_set_exit_callback()),\n"
"    so the global --arena option is refused.\n"
"\n"
"    A monitor outlives a reload of actrack.ko (rmmod and insmod, a DKMS\n"
"    upgrade): it subscribes to the new instance by itself and says on\n"
"    stderr \"actrack: module reloaded; reports between T1 and T2 may be\n"
"    lost\" (local times).\n"
"\n"
"OPTIONS\n"
"    -j, --json\n"
"        One JSON object per line instead of text (see JSON OUTPUT).\n"
"    -a, --all-uids\n"
"        Report the deaths of every uid.  Needs CAP_SYS_PTRACE or\n"
"        CAP_SYS_ADMIN.\n"
"    -r, --recent\n"
"        First print the kernel's ring of recent deaths, oldest first,\n"
"        then keep monitoring.  A death in both is printed once.\n"
"    --journal\n"
"        Write each report to the systemd journal as one entry instead of\n"
"        printing it (see actrack-deaths(1) for its fields); what\n"
"        actrack-monitor.service runs.\n"
"    -n, --count N\n"
"        Exit after N live reports.  With --recent, --count 0 prints the\n"
"        ring and exits.\n"
"    -t, --timeout DURATION\n"
"        Exit after DURATION: 500ms, 30s, 1.5m, 1h; a bare number is\n"
"        seconds (decimals allowed), as in 'actrack hangs --for'.\n"
"    -h, --help\n"
"        Print this help.\n"
"\n"
"TEXT OUTPUT\n"
"    pid 4242 (server --port 80) killed by SIGKILL after phase main-loop-started\n"
"      uid 1000, start tick 51234, died 2024-11-29 15:30:01.123, report #7\n"
"      annotations:\n"
"        role = \"ledger\"\n"
"      thread 4242 \"main\", depth 2:\n"
"        [2] lock-acquire lock 0x55d0c0ffee00 for 1.2 s, in serve+0x3c (server.c:88)\n"
"        [1] task-run task 17 for 1.2 s, in 0x55d0c0a00ff0\n"
"             request = \"GET /\"\n"
"             bytes = 512\n"
"\n"
"    Activities are listed innermost first; levels count from the\n"
"    outermost activity (1); \"for\" is how long the activity had been\n"
"    going on when the process died.  A thread deeper than its stored\n"
"    slots says how many inner activities were not stored; a torn thread\n"
"    changed on every attempt to copy it and has no stack.  Origins and\n"
"    fault pcs are symbolized with the ELF objects the report names\n"
"    (function+offset and file:line when debug info is on disk;\n"
"    object+offset, ready for addr2line -e OBJECT, when not; the raw\n"
"    address when no object holds it).\n"
"    Annotations and user data are printed as actrack dump prints them:\n"
"    strings quoted, raw bytes in hex, references as \"ref 0xADDR (N\n"
"    bytes)\"; the kernel keeps at most 4 KiB of annotations and 1 KiB per\n"
"    activity (32 KiB per report), cut after a whole field.\n"
"    Strings from the dead process are printed with C escapes.\n"
"\n"
"JSON OUTPUT\n"
"    One object per line, flushed when the report arrives.  Integers are\n"
"    exact decimal numbers; times are CLOCK_MONOTONIC nanoseconds.  Those\n"
"    that can exceed 2^53 (every *_ns, object, info, signed and unsigned\n"
"    values) are strings of decimal digits (\"D\" below), so that jq and\n"
"    JavaScript, which round larger numbers, keep them exact.\n"
"\n"
"    {\"source\": \"live\" | \"recent\", \"seq\": N, \"pid\": N, \"uid\": N,\n"
"     \"start_ticks\": N, \"exit_time_ns\": \"D\",\n"
"     \"exit_time\": \"2024-11-29T15:30:01.123Z\" | null,   (UTC, estimated)\n"
"     \"wait_status\": N, \"exit_code\": N | null, \"signal\": N | null,\n"
"     \"signal_name\": \"SIGKILL\" | null, \"core_dumped\": BOOL,\n"
"     \"phase\": N, \"phase_name\": S, \"flags\": N, \"arena_corrupt\": BOOL,\n"
"     \"truncated\": BOOL, \"cmdline\": S, \"values\": [VALUE, ...],\n"
"     \"threads\": [{\"tid\": N, \"name\": S, \"depth\": N, \"torn\": BOOL,\n"
"        \"fatal_signo\": N, \"fatal_code\": N, \"fatal_addr\": N,\n"
"        \"fatal_pc\": N,\n"
"        \"activities\": [{\"level\": N, \"type\": N, \"type_name\": S,\n"
"           \"time_ns\": \"D\", \"age_ns\": \"D\" | null, \"origin\": N,\n"
"           \"object\": \"D\", \"info\": \"D\", \"user_data\": N,\n"
"           \"module\": N | null, \"module_offset\": N | null,\n"
"           \"values\": [VALUE, ...]}, ...]},\n"
"        ...],\n"
"     \"modules\": [{\"path\": S, \"base\": N, \"vaddr\": N, \"size\": N,\n"
"        \"build_id\": \"hex\"}, ...]}\n"
"\n"
"    exit_code is set when the process exited, signal when it was killed;\n"
"    activities are outermost first (level 1 first), as in dump --json;\n"
"    module is an index into modules, module_offset the origin minus that\n"
"    module's base (its address in the ELF file).  VALUE is a user data\n"
"    field as in dump --json: {\"name\": S, \"type\": S, \"value\": ...,\n"
"    \"size\": N (raw and string only)}; the top-level values are the\n"
"    process's annotations.  Strings are valid UTF-8\n"
"    whatever the process wrote: control characters are escaped, and each\n"
"    byte of an invalid UTF-8 sequence is written as \\u00XX (the code\n"
"    point of the same value), as in dump --json.\n"
"\n"
"EXIT STATUS\n"
"    0 on success, also when --timeout ends a run without --count, and on\n"
"    SIGINT or SIGTERM; 1 on failure (e.g. actrack.ko is not loaded);\n"
"    2 on a usage error; 3 if --timeout ended the run before --count\n"
"    reports arrived.\n"
"\n"
"EXAMPLES\n"
"    actrack monitor\n"
"    actrack monitor --recent --count 0          # what died lately\n"
"    actrack monitor --json --count 1 --timeout 30\n"
"    sudo actrack monitor --all-uids --json >>deaths.jsonl\n";


struct mon_opts {
	bool json;
	bool all_uids;
	bool recent;
	bool journal;		/* --journal: cli/journal.c */
	long count;		/* -1: unlimited */
	double timeout;		/* seconds, < 0: none */
};

/* Highest report number printed from the ring, per uid, so that a death
 * both in the ring and delivered live is printed once. */
struct seen_seq {
	uint32_t uid;
	uint64_t seq;
};

struct mon_state {
	const struct mon_opts *o;
	const char *source;
	long printed;
	struct seen_seq *seen;
	size_t nr_seen;
	bool dedupe;		/* live reports: skip those seen in the ring */
};

static volatile sig_atomic_t mon_stop;

static void mon_on_signal(int sig)
{
	mon_stop = 1;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Wall clock of a CLOCK_MONOTONIC instant, via the offset between the
 * clocks now (close enough for a report; NTP steps are not undone). */
static void format_time(uint64_t mono_ns, bool utc_iso, char *buf, size_t len)
{
	uint64_t mono_now = now_ns(CLOCK_MONOTONIC);
	uint64_t real_now = now_ns(CLOCK_REALTIME);
	uint64_t real;
	struct tm tm;
	time_t secs;
	size_t n;

	if (!mono_ns || mono_ns > mono_now || mono_now - mono_ns > real_now) {
		snprintf(buf, len, "unknown");
		return;
	}
	real = real_now - (mono_now - mono_ns);
	secs = (time_t)(real / 1000000000ULL);
	if (utc_iso ? !gmtime_r(&secs, &tm) : !localtime_r(&secs, &tm)) {
		snprintf(buf, len, "unknown");
		return;
	}
	n = strftime(buf, len, utc_iso ? "%Y-%m-%dT%H:%M:%S" :
			       "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03u%s",
		 (unsigned int)(real % 1000000000ULL / 1000000),
		 utc_iso ? "Z" : "");
}

/*
 * The module whose PT_LOAD span holds @pc, from the report's own module
 * records (the process and its records are gone; these are what is left
 * to symbolize with).  Return its index or -1.
 */
static int find_module(const struct actrack_death *d, uint64_t pc)
{
	for (uint32_t i = 0; i < d->nr_modules; i++) {
		const struct actrack_snap_module *m = &d->modules[i];
		uint64_t start = m->base + m->vaddr;

		if (pc >= start && pc - start < m->size)
			return (int)i;
	}
	return -1;
}

/* One symbolizer for the whole run: libdwfl sessions are cached. */
static struct symbolizer *monitor_sym;

/*
 * "lock_both+0x3c (demo.c:38)" for @pc, from the report's own module
 * records: the process and its records are gone, these are what is left.
 */
static const char *death_symbol(const struct actrack_death *d, uint64_t pc,
				char *buf, size_t len)
{
	struct actrack_snap_process p = {
		.pid = d->pid, .start_ticks = d->start_ticks,
		.nr_modules = d->nr_modules, .modules = d->modules,
	};

	if (!monitor_sym)
		monitor_sym = sym_new();
	if (!monitor_sym) {
		snprintf(buf, len, "0x%" PRIx64, pc);
		return buf;
	}
	return sym_format(monitor_sym, &p, pc, buf, len);
}

static void put_activity_text(const struct actrack_death *d,
			      const struct actrack_activity *a)
{
	uint64_t exit_ns = d->exit_time_ns;
	char obj[96], dur[32], sym[512];

	printf("%s %s", actrack_activity_name(a->type),
	       cli_activity_object(obj, sizeof(obj), a));
	if (a->time_ns && exit_ns >= a->time_ns)
		printf(" for %s", cli_duration(dur, sizeof(dur),
					       exit_ns - a->time_ns));
	if (a->origin)
		printf(", in %s", death_symbol(d, a->origin, sym, sizeof(sym)));
	putchar('\n');
}

static void print_text(const struct actrack_death *d, const char *source)
{
	char sig[32], when[64];
	uint32_t i, j;

	printf("pid %u (", d->pid);
	if (d->cmdline_size)
		cli_print_escaped(stdout, d->cmdline, sizeof(d->cmdline));
	else
		putchar('?');
	putchar(')');
	if (d->signal)
		printf(" killed by %s%s", cli_signal_name(d->signal, sig,
							sizeof(sig)),
		       d->core_dumped ? " [core dumped]" : "");
	else
		printf(" exited with code %d", d->exit_code);
	printf(" after phase %s", actrack_phase_name(d->phase));
	if (d->phase > ACTRACK_PHASE_MAX)
		printf(" (%u)", d->phase);
	putchar('\n');

	format_time(d->exit_time_ns, false, when, sizeof(when));
	printf("  uid %u, start tick %" PRIu64 ", died %s", d->uid,
	       d->start_ticks, when);
	if (d->seq)
		printf(", report #%" PRIu64, d->seq);
	if (strcmp(source, "live"))
		printf(" (%s)", source);
	putchar('\n');
	if (d->flags & ACTRACK_DEATH_ARENA_CORRUPT)
		printf("  warning: the arena was corrupt; records may be missing\n");
	if (d->flags & ACTRACK_DEATH_TRUNCATED)
		printf("  warning: the report is truncated (too many threads, "
		       "activities or user data)\n");
	if (d->nr_values) {
		printf("  annotations:\n");
		cli_print_values(stdout, "    ", d->values, d->nr_values);
	}
	if (!d->nr_threads)
		printf("  no thread records\n");

	for (i = 0; i < d->nr_threads; i++) {
		const struct actrack_death_thread *t = &d->threads[i];
		uint32_t nr = t->nr_activities;

		printf("  thread %u \"", t->tid);
		cli_print_escaped(stdout, t->name, sizeof(t->name));
		printf("\", depth %u", t->depth);
		if (t->torn) {
			printf(": torn (changed on every copy attempt)\n");
		} else if (!t->depth) {
			printf(": idle\n");
		} else if (t->depth > nr) {
			printf(" (%u inner activities not stored):\n",
			       t->depth - nr);
		} else {
			printf(":\n");
		}
		if (t->fatal_signo) {
			char where[512];

			printf("    fatal %s (code %d) at address 0x%" PRIx64
			       ", in %s\n",
			       cli_signal_name(t->fatal_signo, sig, sizeof(sig)),
			       t->fatal_code, t->fatal_addr,
			       death_symbol(d, t->fatal_pc, where,
					    sizeof(where)));
		}
		if (t->torn)
			continue;
		for (j = nr; j-- > 0;) {
			printf("    [%u] ", j + 1);
			put_activity_text(d, &t->activities[j]);
			cli_print_values(stdout, "         ", t->values[j],
					 t->nr_values[j]);
		}
	}
}

/* Activity @k of thread @t (level k + 1, counting from the outermost). */
static void json_death_activity(struct json *j, const struct actrack_death *d,
				const struct actrack_death_thread *t,
				uint32_t k)
{
	const struct actrack_activity *a = &t->activities[k];
	uint32_t level = k + 1;
	int mod = a->origin ? find_module(d, a->origin) : -1;

	json_object_begin(j);
	json_kv_u64(j, "level", level);
	json_kv_u64(j, "type", a->type);
	json_kv_string(j, "type_name", actrack_activity_name(a->type), 32);
	json_kv_u64_str(j, "time_ns", a->time_ns);
	json_key(j, "age_ns");
	if (a->time_ns && d->exit_time_ns >= a->time_ns)
		json_u64_str(j, d->exit_time_ns - a->time_ns);
	else
		json_null(j);
	json_kv_u64(j, "origin", a->origin);
	json_kv_u64_str(j, "object", a->object);
	json_kv_u64_str(j, "info", a->info);
	json_kv_u64(j, "user_data", a->user_data);
	json_key(j, "module");
	if (mod >= 0) {
		json_u64(j, (uint64_t)mod);
		json_kv_u64(j, "module_offset",
			    a->origin - d->modules[mod].base);
	} else {
		json_null(j);
		json_kv_null(j, "module_offset");
	}
	json_values(j, "values", t->values[k], t->nr_values[k]);
	json_object_end(j);
}

/* One line, with cli/json.c's writer: the same string rules as dump --json. */
static void print_json(const struct actrack_death *d, const char *source)
{
	char sig[32], when[64];
	struct json j;
	uint32_t i, k;

	json_init(&j, stdout, 0);
	json_object_begin(&j);
	json_kv_string(&j, "source", source, 16);
	json_kv_u64(&j, "seq", d->seq);
	json_kv_u64(&j, "pid", d->pid);
	json_kv_u64(&j, "uid", d->uid);
	json_kv_u64(&j, "start_ticks", d->start_ticks);
	json_kv_u64_str(&j, "exit_time_ns", d->exit_time_ns);
	format_time(d->exit_time_ns, true, when, sizeof(when));
	json_key(&j, "exit_time");
	if (strcmp(when, "unknown"))
		json_string(&j, when, sizeof(when));
	else
		json_null(&j);
	json_kv_i64(&j, "wait_status", d->wait_status);
	if (d->signal) {
		json_kv_null(&j, "exit_code");
		json_kv_i64(&j, "signal", d->signal);
		json_kv_string(&j, "signal_name",
			       cli_signal_name(d->signal, sig, sizeof(sig)),
			       sizeof(sig));
	} else {
		json_kv_i64(&j, "exit_code", d->exit_code);
		json_kv_null(&j, "signal");
		json_kv_null(&j, "signal_name");
	}
	json_kv_bool(&j, "core_dumped", d->core_dumped);
	json_kv_u64(&j, "phase", d->phase);
	json_kv_string(&j, "phase_name", actrack_phase_name(d->phase), 32);
	json_kv_u64(&j, "flags", d->flags);
	json_kv_bool(&j, "arena_corrupt",
		     d->flags & ACTRACK_DEATH_ARENA_CORRUPT);
	json_kv_bool(&j, "truncated", d->flags & ACTRACK_DEATH_TRUNCATED);
	json_kv_string(&j, "cmdline", d->cmdline, sizeof(d->cmdline));
	json_values(&j, "values", d->values, d->nr_values);
	json_key(&j, "threads");
	json_array_begin(&j);
	for (i = 0; i < d->nr_threads; i++) {
		const struct actrack_death_thread *t = &d->threads[i];

		json_object_begin(&j);
		json_kv_u64(&j, "tid", t->tid);
		json_kv_string(&j, "name", t->name, sizeof(t->name));
		json_kv_u64(&j, "depth", t->depth);
		json_kv_bool(&j, "torn", t->torn);
		json_kv_i64(&j, "fatal_signo", t->fatal_signo);
		json_kv_i64(&j, "fatal_code", t->fatal_code);
		json_kv_u64(&j, "fatal_addr", t->fatal_addr);
		json_kv_u64(&j, "fatal_pc", t->fatal_pc);
		json_key(&j, "activities");
		json_array_begin(&j);
		/* Outermost first, as in dump --json. */
		for (k = 0; !t->torn && k < t->nr_activities; k++)
			json_death_activity(&j, d, t, k);
		json_array_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "modules");
	json_array_begin(&j);
	for (i = 0; i < d->nr_modules; i++) {
		const struct actrack_snap_module *m = &d->modules[i];

		json_object_begin(&j);
		json_kv_string(&j, "path", m->path, sizeof(m->path));
		json_kv_u64(&j, "base", m->base);
		json_kv_u64(&j, "vaddr", m->vaddr);
		json_kv_u64(&j, "size", m->size);
		json_key(&j, "build_id");
		json_hex_bytes(&j, m->build_id,
			       m->build_id_size <= ACTRACK_BUILD_ID_MAX ?
			       m->build_id_size : ACTRACK_BUILD_ID_MAX);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	/* Ends the line and flushes.  A write error is not fatal here, as
	 * for text output. */
	json_finish(&j);
}

static bool seen_before(struct mon_state *s, const struct actrack_death *d)
{
	size_t i;

	if (!d->seq)
		return false;
	for (i = 0; i < s->nr_seen; i++)
		if (s->seen[i].uid == d->uid)
			return d->seq <= s->seen[i].seq;
	return false;
}

static void remember_seq(struct mon_state *s, const struct actrack_death *d)
{
	struct seen_seq *n;
	size_t i;

	if (!d->seq)
		return;
	for (i = 0; i < s->nr_seen; i++) {
		if (s->seen[i].uid == d->uid) {
			if (d->seq > s->seen[i].seq)
				s->seen[i].seq = d->seq;
			return;
		}
	}
	n = realloc(s->seen, (s->nr_seen + 1) * sizeof(*n));
	if (!n)
		return;		/* at worst a duplicate line */
	s->seen = n;
	s->seen[s->nr_seen++] = (struct seen_seq){ d->uid, d->seq };
}

static void on_death(const struct actrack_death *d, void *arg)
{
	struct mon_state *s = arg;

	if (s->dedupe && seen_before(s, d))
		return;
	if (!s->dedupe)
		remember_seq(s, d);
	/* --count bounds the live reports; a burst may bring more in one
	 * dispatch than are still wanted. */
	if (s->dedupe && s->o->count >= 0 && s->printed >= s->o->count)
		return;
	if (s->o->journal) {
		int ret = journal_send_death(d, s->source, print_text,
					     print_json);

		if (ret)
			fprintf(stderr, "actrack: monitor: cannot write pid "
				"%u's report to the journal: %s\n", d->pid,
				strerror(-ret));
	} else if (s->o->json)
		print_json(d, s->source);
	else
		print_text(d, s->source);
	fflush(stdout);
	if (s->dedupe)
		s->printed++;
}

/* Return: -1 to go on, else the exit code. */
static int parse_opts(int argc, char **argv, struct mon_opts *o)
{
	static const struct option longopts[] = {
		{ "json",	no_argument,		NULL, 'j' },
		{ "all-uids",	no_argument,		NULL, 'a' },
		{ "recent",	no_argument,		NULL, 'r' },
		{ "journal",	no_argument,		NULL, 'J' },
		{ "count",	required_argument,	NULL, 'n' },
		{ "timeout",	required_argument,	NULL, 't' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t count;
	int c;

	o->count = -1;
	o->timeout = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jarn:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = true;
			break;
		case 'a':
			o->all_uids = true;
			break;
		case 'r':
			o->recent = true;
			break;
		case 'J':
			o->journal = true;
			break;
		case 'n':
			if (cli_parse_u64(optarg, &count) || count > LONG_MAX)
				return cli_usage_error("monitor", "monitor: "
						       "--count: not a number "
						       "of reports: '%s'",
						       optarg);
			o->count = (long)count;
			break;
		case 't': {
			uint64_t ns;

			/* Same syntax as hangs --for; a bare number is s. */
			if (cli_parse_duration(optarg, &ns) || ns > 1e18)
				return cli_usage_error("monitor", "monitor: "
						       "--timeout: not a "
						       "duration: '%s'",
						       optarg);
			o->timeout = (double)ns / 1e9;
			break;
		}
		case 'h':
			fputs(monitor_usage, stdout);
			return 0;
		default:
			if (optopt == 'n' || optopt == 't')
				return cli_usage_error("monitor", "monitor: "
						       "%s: missing argument",
						       argv[optind - 1]);
			return cli_usage_error("monitor", "monitor: unknown "
					       "option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("monitor", "monitor: unexpected "
				       "argument '%s'", argv[optind]);
	return -1;
}

static void report_open_error(int err, bool all_uids)
{
	if (err == -ENOENT)
		fprintf(stderr, "actrack: monitor: actrack.ko is not loaded "
			"(no generic netlink family \"%s\")\n",
			ACTRACK_GENL_NAME);
	else if (err == -EPERM && all_uids)
		fprintf(stderr, "actrack: monitor: --all-uids needs "
			"CAP_SYS_PTRACE or CAP_SYS_ADMIN\n");
	else
		fprintf(stderr, "actrack: monitor: cannot subscribe to death "
			"reports: %s\n", strerror(-err));
}

int cmd_monitor(int argc, char **argv)
{
	struct mon_opts o = { 0 };
	struct mon_state s = { .o = &o };
	struct actrack_monitor *m = NULL;
	struct sigaction sa;
	uint64_t deadline = 0;
	int ret, status = 0;

	ret = parse_opts(argc, argv, &o);
	if (ret >= 0)
		return ret;
	/* Death reports come from the module over netlink; an arena file
	 * has none, and silently watching the module instead would mislead. */
	if (cli.arena)
		return cli_usage_error("monitor", "monitor: --arena: death "
				       "reports come from actrack.ko, not from "
				       "an arena file");

	ret = actrack_monitor_open(o.all_uids ? ACTRACK_MONITOR_ALL_UIDS : 0,
				   &m);
	if (ret) {
		report_open_error(ret, o.all_uids);
		return 1;
	}
	/* Survives rmmod/insmod (a DKMS upgrade), saying what was missed. */
	actrack_monitor_set_gap_fn(m, journal_monitor_gap, &o.journal);

	/* No SA_RESTART: the signal must interrupt the wait in poll(). */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = mon_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (o.timeout >= 0)
		deadline = now_ns(CLOCK_MONOTONIC) +
			   (uint64_t)(o.timeout * 1e9);

	/* Subscribed first, then the ring: a death in between is in both
	 * and printed once (by its report number). */
	if (o.recent) {
		s.source = "recent";
		ret = actrack_monitor_recent(m, on_death, &s);
		if (ret < 0) {
			fprintf(stderr, "actrack: monitor: cannot read recent "
				"deaths: %s\n", strerror(-ret));
			status = 1;
			goto out;
		}
	}
	s.source = "live";
	s.dedupe = true;

	while (!mon_stop && (o.count < 0 || s.printed < o.count)) {
		int timeout_ms = -1;

		if (deadline) {
			uint64_t now = now_ns(CLOCK_MONOTONIC);

			if (now >= deadline)
				break;
			/* Round up so the last wait reaches the deadline;
			 * wake at least hourly to stay within an int. */
			timeout_ms = (deadline - now) / 1000000 >= 3600000 ?
				     3600000 :
				     (int)((deadline - now + 999999) / 1000000);
		}
		ret = actrack_monitor_dispatch(m, timeout_ms, on_death, &s);
		if (ret == -EINTR)
			continue;
		if (ret == -ENOBUFS) {
			fprintf(stderr, "actrack: monitor: receive buffer "
				"overflow: some reports were lost (counted by "
				"the kernel as reports_dropped)\n");
			continue;
		}
		if (ret < 0) {
			fprintf(stderr, "actrack: monitor: receiving reports "
				"failed: %s\n", strerror(-ret));
			status = 1;
			goto out;
		}
	}
	if (!mon_stop && o.count >= 0 && s.printed < o.count)
		status = EXIT_TIMEOUT;
out:
	actrack_monitor_close(m);
	sym_free(monitor_sym);
	monitor_sym = NULL;
	free(s.seen);
	return status;
}
