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
#include "json.h"
#include "render.h"
#include "symbolize.h"

static const char monitor_usage[] =
"NAME\n"
"    actrack monitor - print a report for every tracked process that exits\n"
"\n"
"SYNOPSIS\n"
"    actrack monitor [--json] [--all-uids] [--recent] [--count N]\n"
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
"OPTIONS\n"
"    -j, --json\n"
"        One JSON object per line instead of text (see JSON OUTPUT).\n"
"    -a, --all-uids\n"
"        Report the deaths of every uid.  Needs CAP_SYS_PTRACE or\n"
"        CAP_SYS_ADMIN.\n"
"    -r, --recent\n"
"        First print the kernel's ring of recent deaths, oldest first,\n"
"        then keep monitoring.  A death in both is printed once.\n"
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
"      modules:\n"
"        0x000055d0c0a00000 size 0x5000 build-id 1234abcd /usr/bin/server\n"
"      thread 4242 'main' depth 2\n"
"        [2] lock-acquire lock 0x55d0c0ffee00, for 1.2 s, origin 0x55d0c0a0123c in serve+0x3c (server.c:88)\n"
"        [1] task-run task 17, for 1.2 s, origin 0x55d0c0a00ff0\n"
"             request = \"GET /\"\n"
"             bytes = 512\n"
"\n"
"    After the two headline lines, the process is printed exactly as\n"
"    'actrack dump' prints a process: annotations, modules, and each thread\n"
"    with its activities, innermost first; levels count from the outermost\n"
"    activity ([1]); \"for\" is how long the activity had been going on when\n"
"    the process died.  A thread deeper than its stored slots shows \"(+N not\n"
"    stored)\"; a torn thread changed on every attempt to copy it and has no\n"
"    stack.  Origins and fault pcs are symbolized with the ELF objects the\n"
"    report names (function+offset and file:line when debug info is on\n"
"    disk; object+offset, ready for addr2line -e OBJECT, when not; nothing\n"
"    after the raw address when no object holds it).\n"
"    Annotations and user data are printed as actrack dump prints them:\n"
"    strings quoted, raw bytes in hex, references as \"ref 0xADDR (N\n"
"    bytes)\"; the kernel keeps at most 4 KiB of annotations and 1 KiB per\n"
"    activity (32 KiB per report), cut after a whole field.\n"
"    Strings from the dead process are printed with C escapes.\n"
"\n"
"JSON OUTPUT\n"
"    One object per line, flushed when the report arrives, schema\n"
"    \"actrack-death/1\" (docs/json-schema.json, $defs/death).  A death report\n"
"    is a process plus its exit fields: \"process\" is the process object of\n"
"    dump --json (threads, activities, user data, modules and symbols\n"
"    alike), with what a report cannot know (parent pid, launch time, thread\n"
"    start times) null and no logs.  Integers are exact decimal numbers;\n"
"    times are CLOCK_MONOTONIC nanoseconds.  Those that can exceed 2^53\n"
"    (every *_ns, object, info, signed and unsigned values) are strings of\n"
"    decimal digits (\"D\" below), so that jq and JavaScript, which round\n"
"    larger numbers, keep them exact.\n"
"\n"
"    {\"schema\": \"actrack-death/1\", \"source\": \"live\" | \"recent\", \"seq\": N,\n"
"     \"uid\": N, \"exit_time_ns\": \"D\",\n"
"     \"exit_time\": \"2024-11-29T15:30:01.123Z\" | null,   (UTC, estimated)\n"
"     \"wait_status\": N, \"exit_code\": N | null, \"signal\": N | null,\n"
"     \"signal_name\": \"SIGKILL\" | null, \"core_dumped\": BOOL, \"flags\": N,\n"
"     \"arena_corrupt\": BOOL, \"truncated\": BOOL,\n"
"     \"process\": {\"pid\": N, \"start_ticks\": N, \"has_record\": true,\n"
"        \"phase\": S, \"phase_id\": N, \"parent_pid\": null, \"cmdline\": S,\n"
"        \"launch_time_ns\": null, \"age_ns\": null, \"values\": [VALUE, ...],\n"
"        \"modules\": [{\"path\", \"base\", \"size\", \"vaddr\", \"build_id\"}, ...],\n"
"        \"logs\": [],\n"
"        \"threads\": [{\"tid\": N, \"name\": S, \"start_time_ns\": null,\n"
"           \"depth\": N, \"stored\": N, \"torn\": BOOL,\n"
"           \"fatal\": {\"signo\", \"signal\", \"code\", \"addr\", \"pc\",\n"
"                     \"symbol\"} | null,\n"
"           \"activities\": [{\"level\": N, \"type\": S, \"type_id\": N,\n"
"              \"object\": \"D\", \"info\": \"D\", \"description\": S,\n"
"              \"time_ns\": \"D\", \"age_ns\": \"D\", \"origin\": N,\n"
"              \"symbol\": {\"text\", \"module\", \"module_offset\",\n"
"                         \"function\", ...} | null,\n"
"              \"values\": [VALUE, ...]}, ...]}, ...]}}\n"
"\n"
"    exit_code is set when the process exited, signal when it was killed;\n"
"    activities are outermost first (level 1 first), type is the activity's\n"
"    name and type_id its number, age_ns how long it had been going on at\n"
"    the exit, as in dump --json.  VALUE is a user data field as in dump\n"
"    --json: {\"name\": S, \"type\": S, \"value\": ..., \"size\": N (raw and string\n"
"    only)}; the process's values are its annotations.  Strings are valid\n"
"    UTF-8 whatever the process wrote: control characters are escaped, and\n"
"    each byte of an invalid UTF-8 sequence is written as \\u00XX (the code\n"
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

/* One symbolizer for the whole run: libdwfl sessions are cached. */
static struct symbolizer *monitor_sym;

/* One report, text or one JSON line, by the renderer dump shares. */
static void print_report(const struct mon_state *s,
			 const struct actrack_death *d)
{
	struct json j;
	int ret;

	if (!monitor_sym)
		monitor_sym = sym_new();	/* NULL: raw addresses */
	if (s->o->json) {
		json_init(&j, stdout, 0);
		ret = render_death_json(&j, monitor_sym, d, s->source);
		/* Ends the line and flushes.  A write error is not fatal
		 * here, as for text output. */
		if (!ret)
			json_finish(&j);
	} else {
		ret = render_death_text(stdout, monitor_sym, d, s->source);
	}
	if (ret)
		cli_error("monitor: report", ret);
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
	print_report(s, d);
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
