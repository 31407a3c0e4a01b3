// SPDX-License-Identifier: MIT
/*
 * actrack monitor: print death reports of actrack.ko as processes exit.
 *
 * Text output is for people: one headline per death, then the process as
 * dump prints one.  --json is for programs: one object per line (schema
 * "actrack-death/1", docs/json-schema.json), flushed per report so that a
 * pipe reader sees each death when it happens.  Both are rendered by
 * cli/render.c, which dump and hangs share.
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
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#include "actrack.h"
#include "cli.h"
#include "journal.h"
#include "json.h"
#include "minidump.h"
#include "previous_boot.h"
#include "render.h"
#include "symbolize.h"

struct mon_opts {
	bool json;
	bool all_uids;
	bool recent;
	bool journal;		/* --journal: cli/journal.c */
	bool journal_stacks;	/* --journal-stacks: and the stacks */
	const char *minidump_dir;	/* --minidump-dir: cli/minidump.c */
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

/* One report on @f, text or one JSON line, by the renderer dump shares. */
static void print_report(FILE *f, bool json, const struct actrack_death *d,
			 const char *source)
{
	struct json j;
	int ret;

	if (!monitor_sym)
		monitor_sym = sym_new();	/* NULL: raw addresses */
	if (json) {
		json_init(&j, f, 0);
		ret = render_death_json(&j, monitor_sym, d, source);
		/* Ends the line and flushes.  A write error is not fatal
		 * here, as for text output. */
		if (!ret)
			json_finish(&j);
	} else {
		ret = render_death_text(f, monitor_sym, d, source);
	}
	if (ret)
		cli_error("monitor: report", ret);
}

/* The two renderings a journal entry holds (cli/journal.c). */
static void report_text(FILE *f, const struct actrack_death *d,
			const char *source)
{
	print_report(f, false, d, source);
}

static void report_json(FILE *f, const struct actrack_death *d,
			const char *source)
{
	print_report(f, true, d, source);
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

/* A report to render with cli_render_whole(): print_report()'s text. */
struct report_ref {
	const struct actrack_death *d;
	const char *source;
};

static void render_report_text(FILE *f, const void *arg)
{
	const struct report_ref *r = arg;

	report_text(f, r->d, r->source);
}

/*
 * --minidump-dir: the report as a minidump, its text report among the
 * annotations that crash servers show: whole, as monitor prints it (with
 * its last newline; NULL, no text, when out of memory).
 */
static bool save_minidump(const char *dir, const struct actrack_death *d,
			  const char *source, char *path, size_t path_len)
{
	const struct report_ref ref = { d, source };
	char *text = cli_render_whole(render_report_text, &ref, NULL);
	int ret;

	ret = minidump_save(dir, d, text, path, path_len);
	free(text);
	if (ret)
		fprintf(stderr, "actrack: monitor: cannot write pid %u's "
			"minidump in %s: %s\n", d->process.pid, dir,
			strerror(-ret));
	return !ret;
}

static void on_death(const struct actrack_death *d, void *arg)
{
	struct mon_state *s = arg;
	char dump[4096];
	bool dumped = false;

	if (s->dedupe && seen_before(s, d))
		return;
	if (!s->dedupe)
		remember_seq(s, d);
	/* --count bounds the live reports; a burst may bring more in one
	 * dispatch than are still wanted. */
	if (s->dedupe && s->o->count >= 0 && s->printed >= s->o->count)
		return;
	/* First, so that the journal entry can name it. */
	if (s->o->minidump_dir)
		dumped = save_minidump(s->o->minidump_dir, d, s->source, dump,
				       sizeof(dump));
	if (s->o->journal) {
		int ret = journal_send_death(d, s->source, report_text,
					     report_json,
					     dumped ? dump : NULL,
					     s->o->journal_stacks);

		if (ret)
			fprintf(stderr, "actrack: monitor: cannot write pid "
				"%u's report to the journal: %s\n",
				d->process.pid,
				strerror(-ret));
	} else {
		print_report(stdout, s->o->json, d, s->source);
	}
	fflush(stdout);
	if (s->dedupe)
		s->printed++;
}

/* An overflow of the monitor's socket, in words (lib/monitor.c). */
static void overflow_text(const struct actrack_monitor_gap *g, char *buf,
			  size_t len)
{
	int n = 0;

	if (g->uid != ACTRACK_GAP_ANY_UID)
		n = snprintf(buf, len, "uid %u: ", g->uid);
	if (n < 0 || (size_t)n >= len)
		n = 0;
	if (g->last_lost == UINT64_MAX)
		snprintf(buf + n, len - n, "the ring of recent deaths could "
			 "not be read back: any report may be lost (%u "
			 "recovered)", g->recovered);
	else if (g->first_lost)
		snprintf(buf + n, len - n, "%u reports recovered from the "
			 "ring, %" PRIu64 " lost (#%" PRIu64 " to #%" PRIu64
			 ")", g->recovered, g->last_lost - g->first_lost + 1,
			 g->first_lost, g->last_lost);
	else if (g->last_lost)
		snprintf(buf + n, len - n, "%u reports recovered from the "
			 "ring; those before #%" PRIu64 " may be lost",
			 g->recovered, g->last_lost + 1);
	else
		snprintf(buf + n, len - n, "%u reports recovered from the "
			 "ring, none lost", g->recovered);
}

/*
 * Gaps in what the monitor heard: module reloads (cli/journal.c) and
 * overflows of its socket, which the library has filled from the ring as
 * far as it could; both on stderr, and to the journal with --journal.
 */
static void monitor_gap(const struct actrack_monitor_gap *gap, void *arg)
{
	const struct mon_opts *o = arg;
	char line[256];

	if (gap->reason != ACTRACK_GAP_OVERFLOW) {
		journal_monitor_gap(gap, (void *)&o->journal);
		return;
	}
	overflow_text(gap, line, sizeof(line));
	fprintf(stderr, "actrack: monitor: receive buffer overflowed: %s\n",
		line);
	if (o->journal)
		sd_journal_send("MESSAGE=actrack: receive buffer overflowed: %s",
				line, "MESSAGE_ID=%s", ACTRACK_JOURNAL_GAP_ID,
				"PRIORITY=4", "SYSLOG_IDENTIFIER=actrack",
				"ACTRACK_GAP_REASON=overflow",
				"ACTRACK_GAP_OVERFLOW_NS=%" PRIu64,
				gap->overflow_ns,
				"ACTRACK_UID=%u", gap->uid,
				"ACTRACK_GAP_RECOVERED=%u", gap->recovered,
				"ACTRACK_GAP_FIRST_LOST=%" PRIu64,
				gap->first_lost,
				"ACTRACK_GAP_LAST_LOST=%" PRIu64,
				gap->last_lost, NULL);
}

/* Return: -1 to go on, else the exit code. */
static int parse_opts(int argc, char **argv, struct mon_opts *o)
{
	static const struct option longopts[] = {
		{ "json",	no_argument,		NULL, 'j' },
		{ "all-uids",	no_argument,		NULL, 'a' },
		{ "recent",	no_argument,		NULL, 'r' },
		{ "journal",	no_argument,		NULL, 'J' },
		{ "journal-stacks", no_argument,	NULL, 'K' },
		{ "minidump-dir", required_argument,	NULL, 'M' },
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
	while ((c = getopt_long(argc, argv, "+:jarn:t:h", longopts, NULL)) != -1) {
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
		case 'K':
			/* Opt-in: the journal's readers read them too. */
			o->journal = o->journal_stacks = true;
			break;
		case 'M':
			/* Checked now: a typo must not lose every dump. */
			if (access(optarg, W_OK | X_OK))
				return cli_usage_error("monitor", "monitor: "
						       "--minidump-dir: %s: "
						       "%s", optarg,
						       strerror(errno));
			o->minidump_dir = optarg;
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
			fputs(cli_help_page("monitor"), stdout);
			return 0;
		default:
			return cli_getopt_error("monitor", c, argv);
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
	/* Survives rmmod/insmod (a DKMS upgrade) and overflows, saying what
	 * was missed. */
	actrack_monitor_set_gap_fn(m, monitor_gap, &o);
	/* The service's start: what the machine was running when the
	 * previous boot ended, once per image (cli/previous_boot.c). */
	if (o.journal)
		previous_boot_log();

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

	/*
	 * Subscribed and the ring replayed: from here on every death is
	 * reported.  Say so to whoever started us (systemd's Type=notify, a
	 * test), so that they need not guess with a sleep.  A no-op without
	 * NOTIFY_SOCKET; a failure to notify must not stop the monitor.
	 * --count 0 never waits, so it is never ready.
	 */
	if (o.count)
		sd_notify(0, "READY=1");

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
