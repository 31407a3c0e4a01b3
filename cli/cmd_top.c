// SPDX-License-Identifier: MIT
/*
 * actrack top: a refreshing view of what every tracked thread is doing,
 * the longest-running innermost activity first, so that whatever is stuck
 * floats to the top.
 *
 * The screen is cleared with ANSI escapes only when stdout is a terminal;
 * into a pipe or file each frame is simply printed after the previous one
 * (like top -b), and --iterations bounds the run.  Every string from the
 * arena is escaped, so a thread name cannot move the cursor.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "cli.h"
#include "symbolize.h"

/* Set by SIGINT/SIGTERM: finish the frame, exit 0. */
static volatile sig_atomic_t top_stop;

static void top_signal(int sig)
{
	top_stop = 1;
}

struct top_row {
	const struct actrack_snap_process *p;
	const struct actrack_snap_thread *t;
	const struct actrack_snap_activity *inner;	/* NULL: idle/torn */
	uint64_t age_ns;
};

struct top {
	uint64_t interval_ms, iterations;
	bool have_pid;
	uint32_t pid;
	bool tty;
	unsigned int rows, cols;
	struct symbolizer *sym;
};

static int row_cmp(const void *x, const void *y)
{
	const struct top_row *a = x, *b = y;

	/* Threads in an activity first, the oldest on top. */
	if (!a->inner != !b->inner)
		return a->inner ? -1 : 1;
	if (a->inner && a->age_ns != b->age_ns)
		return a->age_ns > b->age_ns ? -1 : 1;
	if (a->p->pid != b->p->pid)
		return a->p->pid < b->p->pid ? -1 : 1;
	if (a->t->tid != b->t->tid)
		return a->t->tid < b->t->tid ? -1 : 1;
	return 0;
}

/* Width of the NAME column: longer (escaped) names end in "..." so that
 * the columns after it stay in place. */
#define TOP_NAME_WIDTH	16

static void format_name(char *buf, size_t len, const char *name, size_t max)
{
	if (!cli_escape(buf, len, name, max, TOP_NAME_WIDTH))
		return;
	cli_escape(buf, len, name, max, TOP_NAME_WIDTH - 3);
	strcat(buf, "...");
}

/* One line, cut to the terminal's width when there is one. */
static void put_line(const struct top *tp, const char *line)
{
	size_t n = strlen(line);

	if (tp->tty && tp->cols && n > tp->cols)
		n = tp->cols;
	fwrite(line, 1, n, stdout);
	fputc('\n', stdout);
}

static void terminal_size(struct top *tp)
{
	struct winsize ws;

	tp->rows = tp->cols = 0;
	if (tp->tty && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws)) {
		tp->rows = ws.ws_row;
		tp->cols = ws.ws_col;
	}
}

static void format_row(struct top *tp, const struct top_row *r, char *line,
		       size_t len)
{
	char name[160], age[32], obj[128], origin[512];
	const char *act;

	format_name(name, sizeof(name), r->t->name, sizeof(r->t->name));
	if (r->t->torn) {
		act = "torn";
		snprintf(age, sizeof(age), "-");
		snprintf(obj, sizeof(obj), "depth %u", r->t->depth);
		snprintf(origin, sizeof(origin), "-");
	} else if (!r->inner) {
		act = "idle";
		snprintf(age, sizeof(age), "-");
		/* Deeper than 0 with nothing stored: slots set to 0. */
		if (r->t->depth)
			snprintf(obj, sizeof(obj), "(+%u)", r->t->depth);
		else
			snprintf(obj, sizeof(obj), "-");
		snprintf(origin, sizeof(origin), "-");
	} else {
		size_t n;

		act = actrack_activity_name(r->inner->a.type);
		cli_duration(age, sizeof(age), r->age_ns);
		cli_activity_object(obj, sizeof(obj), &r->inner->a);
		n = strlen(obj);
		if (r->t->depth > r->t->nr_activities)
			snprintf(obj + n, sizeof(obj) - n, " (+%u)",
				 r->t->depth - r->t->nr_activities);
		sym_format(tp->sym, r->p->modules, r->p->nr_modules,
			   r->inner->a.origin, origin, sizeof(origin));
	}
	snprintf(line, len, "%7u %7u %-16s %9s %-13s %-24s %s", r->p->pid,
		 r->t->tid, name, age, act, obj, origin);
}

static int frame(struct top *tp, const struct actrack_snapshot *s,
		 bool first)
{
	struct top_row *rows;
	uint32_t n = 0, total = 0, nr_procs = 0, shown, room;
	char line[1024], when[64];
	uint64_t now = cli_now(s, NULL);
	time_t wall = time(NULL);
	struct tm tm;

	for (uint32_t i = 0; i < s->nr_processes; i++) {
		if (tp->have_pid && s->processes[i].pid != tp->pid)
			continue;
		total += s->processes[i].nr_threads;
		nr_procs++;
	}
	/* As dump --pid: a pid that is not there is an error, not an empty
	 * screen; one that goes away later is shown gone. */
	if (tp->have_pid && !nr_procs && first)
		return cli_no_such_pid(tp->pid);
	rows = calloc(total + 1, sizeof(*rows));
	if (!rows) {
		cli_error("top", -ENOMEM);
		return 1;
	}
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		if (tp->have_pid && p->pid != tp->pid)
			continue;
		for (uint32_t k = 0; p->threads && k < p->nr_threads; k++) {
			const struct actrack_snap_thread *t = &p->threads[k];
			struct top_row *r = &rows[n++];

			r->p = p;
			r->t = t;
			if (t->torn || !t->nr_activities)
				continue;
			r->inner = &t->activities[t->nr_activities - 1];
			r->age_ns = now > r->inner->a.time_ns ?
				    now - r->inner->a.time_ns : 0;
		}
	}
	qsort(rows, n, sizeof(*rows), row_cmp);

	terminal_size(tp);
	if (tp->tty)
		fputs("\033[H\033[2J", stdout);
	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&wall, &tm));
	snprintf(line, sizeof(line), "actrack top - %s - %u process%s, %u "
		 "thread%s, arena %u/%u KiB used%s", when, nr_procs,
		 nr_procs == 1 ? "" : "es", n, n == 1 ? "" : "s",
		 s->used_bytes / 1024, s->header.size / 1024,
		 s->corrupt ? ", CORRUPT data skipped" : "");
	put_line(tp, line);
	snprintf(line, sizeof(line), "%7s %7s %-16s %9s %-13s %-24s %s", "PID",
		 "TID", "NAME", "AGE", "ACTIVITY", "OBJECT", "ORIGIN");
	put_line(tp, line);
	/* Header, column titles and a "more" line must fit. */
	room = tp->tty && tp->rows > 3 ? tp->rows - 3 : n;
	shown = n <= room + 1 ? n : room;
	for (uint32_t i = 0; i < shown; i++) {
		format_row(tp, &rows[i], line, sizeof(line));
		put_line(tp, line);
	}
	if (shown < n) {
		snprintf(line, sizeof(line), "... %u more threads", n - shown);
		put_line(tp, line);
	}
	free(rows);
	fflush(stdout);
	return ferror(stdout) ? 1 : 0;
}

int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct top tp = { .interval_ms = 1000 };
	uint64_t v;
	int opt, ret = 0;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":i:n:p:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (cli_parse_u64(optarg, &v) || v < 10 ||
			    v > 3600000)
				return cli_usage_error("top", "top: --interval: "
						       "not 10..3600000 ms: "
						       "'%s'", optarg);
			tp.interval_ms = v;
			break;
		case 'n':
			if (cli_parse_u64(optarg, &v) || !v)
				return cli_usage_error("top", "top: "
						       "--iterations: not a "
						       "positive number: '%s'",
						       optarg);
			tp.iterations = v;
			break;
		case 'p':
			if (cli_parse_u64(optarg, &v) || !v || v > UINT32_MAX)
				return cli_usage_error("top", "top: --pid: not "
						       "a pid: '%s'", optarg);
			tp.have_pid = true;
			tp.pid = (uint32_t)v;
			break;
		case 'h':
			fputs(cli_help_page("top"), stdout);
			return 0;
		default:
			return cli_getopt_error("top", opt, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("top", "top: unexpected argument '%s'",
				       argv[optind]);
	tp.tty = isatty(STDOUT_FILENO);
	tp.sym = sym_new();
	/* No SA_RESTART: the signal ends the sleep between frames. */
	{
		struct sigaction sa = { .sa_handler = top_signal };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	for (uint64_t it = 0; !tp.iterations || it < tp.iterations; it++) {
		struct actrack_snapshot *s;
		struct timespec ts;

		if (it) {
			ts.tv_sec = (time_t)(tp.interval_ms / 1000);
			ts.tv_nsec = (long)(tp.interval_ms % 1000) * 1000000L;
			while (!top_stop && nanosleep(&ts, &ts) &&
			       errno == EINTR)
				;
			if (top_stop)
				break;
			if (!tp.tty)
				putchar('\n');
		}
		if (cli_snapshot(&s)) {
			ret = 1;
			break;
		}
		ret = frame(&tp, s, !it);
		actrack_snapshot_free(s);
		if (ret)
			break;
	}
	sym_free(tp.sym);
	return ret;
}
