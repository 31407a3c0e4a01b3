// SPDX-License-Identifier: MIT
/*
 * actrack deaths: the death reports that `actrack monitor --journal`
 * (actrack-monitor.service) wrote to the systemd journal, listed or shown
 * whole -- what coredumpctl is to systemd-coredump.
 *
 * Entries are found by their MESSAGE_ID (cli/journal.h) and read through
 * sd_journal.  Their fields were written by whoever could log to the
 * journal with that MESSAGE_ID, so they are treated as text from outside:
 * printed with escapes, never trusted to be NUL-free or short.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-journal.h>

#include "actrack.h"
#include "cli.h"
#include "death_json.h"
#include "death_stacks.h"
#include "journal.h"
#include "minidump.h"
#include "render.h"

struct deaths_opts {
	bool info;
	bool json;
	uint64_t since_us, until_us;	/* 0: no bound */
	const char *directory, *file;
	const char *match;		/* PID or COMM */
	bool oom;			/* OOM kills only */
	const char *killed_by;		/* the sender's comm, or NULL */
	bool export, minidump;		/* export --minidump */
	const char *output;		/* export -o DIR */
};

static uint64_t real_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL +
	       (uint64_t)ts.tv_nsec / 1000;
}

/* Local midnight @days_back days ago, in µs. */
static int midnight_us(int days_back, uint64_t *out)
{
	time_t now = time(NULL);
	struct tm tm;
	time_t t;

	if (!localtime_r(&now, &tm))
		return -EINVAL;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_mday -= days_back;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out = (uint64_t)t * 1000000ULL;
	return 0;
}

/* TIME of --since/--until (see actrack-deaths(1)) -> CLOCK_REALTIME µs. */
int journal_parse_time(const char *s, uint64_t *out)
{
	static const char *const fmts[] = {
		"%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d",
		"%H:%M:%S", "%H:%M",
	};
	char buf[64];
	uint64_t v, ns;
	size_t n = strlen(s);

	if (!strcmp(s, "today"))
		return midnight_us(0, out);
	if (!strcmp(s, "yesterday"))
		return midnight_us(1, out);
	if (s[0] == '@') {
		if (cli_parse_u64(s + 1, &v) || v > UINT64_MAX / 1000000)
			return -EINVAL;
		*out = v * 1000000ULL;
		return 0;
	}
	/* "-1h" or "1h ago". */
	if (n >= sizeof(buf))
		return -EINVAL;
	if (s[0] == '-' || (n > 4 && !strcmp(s + n - 4, " ago"))) {
		if (s[0] == '-') {
			snprintf(buf, sizeof(buf), "%s", s + 1);
		} else {
			memcpy(buf, s, n - 4);
			buf[n - 4] = '\0';
		}
		if (cli_parse_duration(buf, &ns) || ns / 1000 > real_us())
			return -EINVAL;
		*out = real_us() - ns / 1000;
		return 0;
	}
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		struct tm tm;
		const char *end;
		time_t t, now = time(NULL);

		memset(&tm, 0, sizeof(tm));
		if (fmts[i][1] == 'H' && !localtime_r(&now, &tm))
			return -EINVAL;
		end = strptime(s, fmts[i], &tm);
		if (!end || *end)
			continue;
		tm.tm_isdst = -1;
		t = mktime(&tm);
		if (t == (time_t)-1 || t < 0)
			return -EINVAL;
		*out = (uint64_t)t * 1000000ULL;
		return 0;
	}
	return -EINVAL;
}

/* export without its format (or with --json), or its options without
 * it: a usage error. */
static int export_usage(const struct deaths_opts *o)
{
	if (!o->export)
		return cli_usage_error("deaths", "deaths: --minidump and "
				       "--output are export's");
	return cli_usage_error("deaths", "deaths: export: which format? "
			       "--minidump (the only one)");
}

/* Return: -1 to go on, else the exit code. */
static int parse_opts(int argc, char **argv, struct deaths_opts *o)
{
	static const struct option longopts[] = {
		{ "since",	required_argument,	NULL, 'S' },
		{ "until",	required_argument,	NULL, 'U' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "directory",	required_argument,	NULL, 'D' },
		{ "file",	required_argument,	NULL, 'F' },
		{ "oom",	no_argument,		NULL, 'O' },
		{ "killed-by",	required_argument,	NULL, 'K' },
		{ "minidump",	no_argument,		NULL, 'M' },
		{ "output",	required_argument,	NULL, 'o' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	/* "list", "info" and "export" are verbs before the options. */
	if (argc > 1 && !strcmp(argv[1], "info")) {
		o->info = true;
		argc--;
		argv++;
	} else if (argc > 1 && !strcmp(argv[1], "export")) {
		o->export = true;
		argc--;
		argv++;
	} else if (argc > 1 && !strcmp(argv[1], "list")) {
		argc--;
		argv++;
	}
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":S:U:jD:o:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'S':
		case 'U':
			if (journal_parse_time(optarg, c == 'S' ? &o->since_us :
						     &o->until_us))
				return cli_usage_error("deaths", "deaths: %s: "
						       "not a time: '%s'",
						       c == 'S' ? "--since" :
						       "--until", optarg);
			break;
		case 'j':
			o->json = true;
			break;
		case 'D':
			o->directory = optarg;
			break;
		case 'F':
			o->file = optarg;
			break;
		case 'O':
			o->oom = true;
			break;
		case 'K':
			/* A comm: what the kernel keeps, never empty. */
			if (!*optarg || strlen(optarg) > 15)
				return cli_usage_error("deaths", "deaths: "
						       "--killed-by: not a "
						       "command name (1 to 15 "
						       "bytes): '%s'", optarg);
			o->killed_by = optarg;
			break;
		case 'M':
			o->minidump = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			fputs(cli_help_page("deaths"), stdout);
			return 0;
		default:
			return cli_getopt_error("deaths", c, argv);
		}
	}
	if (o->directory && o->file)
		return cli_usage_error("deaths", "deaths: --directory and "
				       "--file exclude each other");
	if (o->export ? o->json || !o->minidump : o->minidump || o->output)
		return export_usage(o);
	if (optind < argc)
		o->match = argv[optind++];
	if (optind < argc)
		return cli_usage_error("deaths", "deaths: unexpected argument "
				       "'%s'", argv[optind]);
	if (o->match && (!*o->match || strchr(o->match, '=')))
		return cli_usage_error("deaths", "deaths: not a PID or a "
				       "command name: '%s'", o->match);
	return -1;
}

/*
 * Field @name of the current entry: its value (not NUL-terminated, may
 * hold NULs) and length.  Return 0, -ENOENT or -errno.
 */
static int get_field(sd_journal *j, const char *name, const char **val,
		     size_t *len)
{
	size_t nl = strlen(name), n;
	const void *data;
	int ret;

	ret = sd_journal_get_data(j, name, &data, &n);
	if (ret < 0)
		return ret;
	if (n < nl + 1)
		return -EBADMSG;
	*val = (const char *)data + nl + 1;
	*len = n - nl - 1;
	return 0;
}

/* Field @name escaped into @buf ("?" when absent), at most @width. */
const char *journal_field_str(sd_journal *j, const char *name, char *buf,
			      size_t len, size_t width)
{
	const char *v;
	size_t n;

	if (get_field(j, name, &v, &n)) {
		snprintf(buf, len, "?");
		return buf;
	}
	cli_escape(buf, len, v, n, width);
	return buf;
}

/* An unsigned decimal field; -1 when absent or not a number. */
int64_t journal_field_num(sd_journal *j, const char *name)
{
	char buf[24];
	uint64_t v;
	const char *p;
	size_t n;

	if (get_field(j, name, &p, &n) || !n || n >= sizeof(buf))
		return -1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (cli_parse_u64(buf, &v) || v > INT64_MAX)
		return -1;
	return (int64_t)v;
}

const char *journal_entry_time(sd_journal *j, char *buf, size_t len)
{
	uint64_t us;

	if (sd_journal_get_realtime_usec(j, &us) < 0 ||
	    !render_real_time(us * 1000, false, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/* The list's columns (its header and each line). */
#define LIST_FORMAT	"%-23s  %-6s %-4s %-13s %-15s %-18s %s\n"

/*
 * The KILLER column: "OOM killer" for the kernel's OOM kill; "itself";
 * "kernel"; another process by its command name (so systemd-oomd's kills
 * read "systemd-oomd"), "outside-ns" when it was outside the monitor's
 * pid namespace; "-" when the entry names no sender.
 */
static const char *killer_cell(sd_journal *j, char *buf, size_t len)
{
	const char *v;
	size_t n;

	if (journal_field_num(j, "ACTRACK_OOM") == 1)
		return "OOM killer";
	if (get_field(j, "ACTRACK_KILLER", &v, &n))
		return "-";
	if (n == 4 && !memcmp(v, "self", 4))
		return "itself";
	if (n == 6 && !memcmp(v, "kernel", 6))
		return "kernel";
	if (get_field(j, "ACTRACK_KILLER_COMM", &v, &n))
		return "outside-ns";
	cli_escape(buf, len, v, n, 15);
	return buf;
}

/* An entry of monitor --journal about the previous boot's image? */
static bool is_boot_entry(sd_journal *j)
{
	static const char id[] = ACTRACK_JOURNAL_PREVIOUS_BOOT_ID;
	const char *v;
	size_t n;

	return !get_field(j, "MESSAGE_ID", &v, &n) && n == sizeof(id) - 1 &&
	       !memcmp(v, id, n);
}

/* The previous boot's entry: "previous boot" in DEATH, its processes and
 * its boot id in COMMAND. */
static void print_boot_line(sd_journal *j)
{
	char when[48], boot[40], what[128];
	int64_t n = journal_field_num(j, "ACTRACK_PROCESSES");
	int64_t bad = journal_field_num(j, "ACTRACK_UNREADABLE_ARENAS");

	journal_field_str(j, "ACTRACK_PREVIOUS_BOOT_ID", boot, sizeof(boot),
			  32);
	if (n >= 0)
		snprintf(what, sizeof(what), "%" PRId64 " process%s "
			 "running, boot %s%s", n, n == 1 ? "" : "es", boot,
			 bad > 0 ? ", unreadable arenas" : "");
	else
		snprintf(what, sizeof(what), "? processes running, boot %s",
			 boot);
	printf(LIST_FORMAT, journal_entry_time(j, when, sizeof(when)), "-",
	       "-", "previous boot", "-", "-", what);
}

static void print_line(sd_journal *j)
{
	char when[48], death[48], phase[40], cmd[512], sig[40], killer[64];
	char pid_s[24] = "?", uid_s[24] = "?";
	int64_t pid = journal_field_num(j, "ACTRACK_PID");
	int64_t uid = journal_field_num(j, "ACTRACK_UID");
	int64_t code = journal_field_num(j, "ACTRACK_EXIT_CODE");
	int64_t core = journal_field_num(j, "ACTRACK_CORE_DUMPED");

	if (is_boot_entry(j)) {
		print_boot_line(j);
		return;
	}
	if (journal_field_num(j, "ACTRACK_SIGNAL") > 0) {
		journal_field_str(j, "ACTRACK_SIGNAL_NAME", sig, sizeof(sig),
				  24);
		snprintf(death, sizeof(death), "%s%s", sig,
			 core == 1 ? "+core" : "");
	} else if (code >= 0) {
		snprintf(death, sizeof(death), "exit %" PRId64, code);
	} else {
		snprintf(death, sizeof(death), "?");
	}
	if (pid >= 0)
		snprintf(pid_s, sizeof(pid_s), "%" PRId64, pid);
	if (uid >= 0)
		snprintf(uid_s, sizeof(uid_s), "%" PRId64, uid);
	printf(LIST_FORMAT,
	       journal_entry_time(j, when, sizeof(when)), pid_s, uid_s, death,
	       killer_cell(j, killer, sizeof(killer)),
	       journal_field_str(j, "ACTRACK_PHASE", phase, sizeof(phase), 32),
	       journal_field_str(j, "ACTRACK_CMDLINE", cmd, sizeof(cmd), 200));
}

/* The JSON report as it was logged: a line of 'monitor --json'. */
static int print_report_json(sd_journal *j)
{
	const char *v;
	size_t n;

	if (get_field(j, "ACTRACK_REPORT", &v, &n) || !n || v[0] != '{' ||
	    memchr(v, '\n', n) || memchr(v, '\0', n))
		return -EBADMSG;
	fwrite(v, 1, n, stdout);
	putchar('\n');
	return 0;
}

static int print_info(sd_journal *j, bool json)
{
	char when[48], host[256];
	const char *v;
	size_t n;

	if (json)
		return print_report_json(j);
	if (get_field(j, "MESSAGE", &v, &n))
		return -EBADMSG;
	printf("logged %s on %s\n", journal_entry_time(j, when, sizeof(when)),
	       journal_field_str(j, "_HOSTNAME", host, sizeof(host), 64));
	/* Already escaped by the monitor; a hostile entry is escaped here
	 * once more, but newlines stay lines. */
	while (n) {
		const char *nl = memchr(v, '\n', n);
		size_t len = nl ? (size_t)(nl - v) : n;
		char line[1024];

		cli_escape(line, sizeof(line), v, len, 0);
		printf("%s\n", line);
		if (!nl)
			break;
		n -= len + 1;
		v = nl + 1;
	}
	return 0;
}

static int open_journal(const struct deaths_opts *o, sd_journal **j)
{
	int ret;

	if (o->directory) {
		ret = sd_journal_open_directory(j, o->directory, 0);
	} else if (o->file) {
		const char *files[] = { o->file, NULL };

		ret = sd_journal_open_files(j, files, 0);
	} else {
		ret = sd_journal_open(j, 0);
	}
	if (ret < 0)
		fprintf(stderr, "actrack: deaths: cannot open the journal%s%s: "
			"%s\n", o->directory || o->file ? " " : "",
			o->directory ? o->directory : o->file ? o->file : "",
			strerror(-ret));
	return ret;
}

static int add_matches(sd_journal *j, const struct deaths_opts *o)
{
	char buf[128];
	bool digits = true;
	int ret;

	ret = sd_journal_add_match(j, "MESSAGE_ID=" ACTRACK_JOURNAL_MESSAGE_ID,
				   0);
	/* The previous boot's entry is listed among the deaths (another
	 * value of the same field: either matches), never exported. */
	if (ret >= 0 && !o->export)
		ret = sd_journal_add_match(j, "MESSAGE_ID="
				ACTRACK_JOURNAL_PREVIOUS_BOOT_ID, 0);
	/* Matches of different fields must all hold. */
	if (ret >= 0 && o->oom)
		ret = sd_journal_add_match(j, "ACTRACK_OOM=1", 0);
	if (ret >= 0 && o->killed_by) {
		snprintf(buf, sizeof(buf), "ACTRACK_KILLER_COMM=%s",
			 o->killed_by);
		ret = sd_journal_add_match(j, buf, 0);
	}
	if (ret < 0 || !o->match)
		return ret;
	for (const char *p = o->match; *p; p++)
		if (!isdigit((unsigned char)*p))
			digits = false;
	snprintf(buf, sizeof(buf), "%s=%s",
		 digits ? "ACTRACK_PID" : "ACTRACK_COMM", o->match);
	return sd_journal_add_match(j, buf, 0);
}

/* ---- export --------------------------------------------------------------- */

/* Why an exported thread has no stack, when the entry says nothing of
 * its stacks (no ACTRACK_STACKS) or what it says is not whole. */
#define EXPORT_NO_STACK	"the journal entry keeps no registers or stack " \
			"bytes (monitor --journal-stacks keeps them)"
static const char export_bad_stacks[] =
	"the journal entry's ACTRACK_STACKS is malformed: ignored";

/* Field @name as a C string (cut at a NUL), "" when absent; free it. */
static char *field_dup(sd_journal *j, const char *name)
{
	const char *v = "";
	size_t n = 0;

	get_field(j, name, &v, &n);
	return strndup(v, n);
}

/*
 * The current entry's death: its JSON report's process, threads and
 * modules, with the entry's own fields (what the list shows and the
 * selection matched) over the report's.  A report of no thread record
 * lists its main thread.
 */
static int export_death(sd_journal *j, struct actrack_death *d,
			struct actrack_snap_thread *main)
{
	int64_t pid = journal_field_num(j, "ACTRACK_PID");
	int64_t uid = journal_field_num(j, "ACTRACK_UID");
	int64_t seq = journal_field_num(j, "ACTRACK_SEQ");
	int64_t sig = journal_field_num(j, "ACTRACK_SIGNAL");
	char *cmd;
	const char *v;
	size_t n;
	int ret;

	memset(d, 0, sizeof(*d));	/* freed by the caller, whatever */
	if (get_field(j, "ACTRACK_REPORT", &v, &n))
		return -EBADMSG;
	ret = death_from_json(v, n, d);
	if (ret)
		return ret;
	if (pid >= 0 && pid <= UINT32_MAX)
		d->process.pid = (uint32_t)pid;
	if (uid >= 0 && uid <= UINT32_MAX)
		d->uid = (uint32_t)uid;
	if (seq >= 0)
		d->seq = (uint64_t)seq;
	if (sig > 0 && sig <= 64)
		d->signal = (int)sig;
	cmd = field_dup(j, "ACTRACK_CMDLINE");
	if (cmd && *cmd)
		snprintf(d->process.cmdline, sizeof(d->process.cmdline), "%s",
			 cmd);
	free(cmd);
	if (!d->process.nr_threads) {
		memset(main, 0, sizeof(*main));
		main->pid = main->tid = d->process.pid;
		journal_field_str(j, "ACTRACK_COMM", main->name,
				  sizeof(main->name), sizeof(main->name) - 1);
		d->process.threads = main;
		d->process.nr_threads = 1;
	}
	return 0;
}

/*
 * The entry's stacks at death (ACTRACK_STACKS, monitor --journal-stacks)
 * into @d, and in @h why a thread has none: NULL when the entry has them
 * (then the report's flags say), else the journal's reason.  Return 0,
 * -ENOMEM.
 */
static int export_stacks(sd_journal *j, struct actrack_death *d,
			 struct minidump_host *h)
{
	const char *v;
	size_t n;
	int ret;

	h->no_stack = EXPORT_NO_STACK;
	if (get_field(j, "ACTRACK_STACKS", &v, &n))
		return 0;
	ret = death_stacks_decode((const uint8_t *)v, n, d);
	if (ret == -ENOMEM)
		return ret;
	h->no_stack = ret ? export_bad_stacks : NULL;
	return 0;
}

static void export_free(struct actrack_death *d,
			const struct actrack_snap_thread *main)
{
	if (d->process.threads == main)
		d->process.threads = NULL;
	death_stacks_free(d);
	death_json_free(d);
}

/* The current entry as a minidump in @dir.  Return 0, or 1 (said). */
static int export_entry(sd_journal *j, const char *dir, uint64_t us)
{
	struct minidump_host h = { .time = (uint32_t)(us / 1000000) };
	struct actrack_snap_thread main_thread;
	struct actrack_death d;
	char path[4096], pid[24];
	char *text, *kernel;
	int ret;

	if (export_death(j, &d, &main_thread)) {
		export_free(&d, &main_thread);
		fprintf(stderr, "actrack: deaths: export: pid %s: "
			"ACTRACK_REPORT is not a death report: skipped\n",
			journal_field_str(j, "ACTRACK_PID", pid, sizeof(pid),
					  20));
		return 1;
	}
	ret = export_stacks(j, &d, &h);
	text = field_dup(j, "MESSAGE");
	kernel = field_dup(j, "ACTRACK_KERNEL");
	h.release = kernel;
	if (!ret)
		ret = minidump_write(dir, &d, &h, text, path, sizeof(path));
	free(text);
	free(kernel);
	export_free(&d, &main_thread);
	if (ret) {
		fprintf(stderr, "actrack: deaths: export: cannot write pid "
			"%u's minidump in %s: %s\n", d.process.pid, dir,
			strerror(-ret));
		return 1;
	}
	if (h.no_stack == export_bad_stacks)
		fprintf(stderr, "actrack: deaths: export: pid %u: "
			"ACTRACK_STACKS is malformed: written without "
			"stacks\n", d.process.pid);
	printf("%s\n", path);
	return 0;
}

/* Every selected entry in range, oldest first, as a minidump. */
static int export_deaths(sd_journal *j, const struct deaths_opts *o,
			 int *found)
{
	const char *dir = o->output ? o->output : ".";
	int ret, status = 0;
	uint64_t us;

	ret = o->since_us ? sd_journal_seek_realtime_usec(j, o->since_us) :
			    sd_journal_seek_head(j);
	while (ret >= 0 && (ret = sd_journal_next(j)) > 0) {
		if (sd_journal_get_realtime_usec(j, &us) < 0 ||
		    (o->since_us && us < o->since_us))
			continue;
		if (o->until_us && us >= o->until_us)
			break;
		status |= export_entry(j, dir, us);
		(*found)++;
	}
	return ret < 0 ? ret : status;
}

int cmd_deaths(int argc, char **argv)
{
	struct deaths_opts o = { 0 };
	sd_journal *j = NULL;
	int ret, found = 0, status = 0;

	ret = parse_opts(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (open_journal(&o, &j) < 0)
		return 1;
	ret = add_matches(j, &o);
	if (ret < 0)
		goto fail;
	if (o.export) {
		ret = export_deaths(j, &o, &found);
		if (ret < 0)
			goto fail;
		status = ret;
	} else if (o.info) {
		/* The newest match that is in range. */
		ret = sd_journal_seek_tail(j);
		if (ret < 0)
			goto fail;
		while ((ret = sd_journal_previous(j)) > 0) {
			uint64_t us;

			if (sd_journal_get_realtime_usec(j, &us) < 0)
				continue;
			if (o.until_us && us >= o.until_us)
				continue;
			if (o.since_us && us < o.since_us)
				break;
			if (print_info(j, o.json)) {
				fprintf(stderr, "actrack: deaths: the newest "
					"matching entry is malformed\n");
				status = 1;
			}
			found = 1;
			break;
		}
	} else {
		ret = o.since_us ? sd_journal_seek_realtime_usec(j, o.since_us) :
				   sd_journal_seek_head(j);
		if (ret < 0)
			goto fail;
		if (!o.json)
			printf(LIST_FORMAT, "TIME", "PID", "UID", "DEATH",
			       "KILLER", "PHASE", "COMMAND");
		while ((ret = sd_journal_next(j)) > 0) {
			uint64_t us;

			if (sd_journal_get_realtime_usec(j, &us) < 0)
				continue;
			if (o.since_us && us < o.since_us)
				continue;
			if (o.until_us && us >= o.until_us)
				break;
			if (o.json) {
				if (print_report_json(j)) {
					fprintf(stderr, "actrack: deaths: an "
						"entry without a valid "
						"ACTRACK_REPORT skipped\n");
					continue;
				}
			} else {
				print_line(j);
			}
			found++;
		}
	}
	if (ret < 0)
		goto fail;
	sd_journal_close(j);
	if (!found) {
		fprintf(stderr, "actrack: deaths: no death reports%s%s in the "
			"journal\n", o.match ? " of " : "",
			o.match ? o.match : "");
		return 1;
	}
	return status;
fail:
	fprintf(stderr, "actrack: deaths: reading the journal: %s\n",
		strerror(-ret));
	sd_journal_close(j);
	return 1;
}
