// SPDX-License-Identifier: MIT
/*
 * Shared printing helpers of the actrack CLI: error lines, durations and
 * ages, escaping of untrusted strings, activity objects and typed values.
 *
 * Everything printed from an arena is untrusted (any process of the uid,
 * or whoever made a file, could have written it), so strings are escaped
 * before they reach a terminal and every length is bounded.
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli.h"
#include "render.h"

void cli_error(const char *what, int err)
{
	if (err < 0)
		err = -err;
	fprintf(stderr, "actrack: %s: %s\n", what, strerror(err));
}

void cli_errorf(const char *fmt, ...)
{
	va_list ap;

	fputs("actrack: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("actrack: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (cmd)
		fprintf(stderr, " (see 'actrack %s --help')\n", cmd);
	else
		fputs(" (see 'actrack --help')\n", stderr);
	return EXIT_USAGE;
}

int cli_no_such_pid(uint32_t pid)
{
	cli_errorf("%s: no process %u in the arena", cli_arena_name(), pid);
	return 1;
}

const char *cli_arena_name(void)
{
	static char buf[PATH_MAX];

	if (cli.arena)
		return cli.arena;
	if (cli.previous_boot)
		return ACTRACK_DEVICE_PATH " (previous boot)";
	/* The arena the library reads when given none. */
	if (actrack_arena_path(NULL, buf, sizeof(buf)) < 0)
		return "$" ACTRACK_ENV_ARENA;	/* longer than any path */
	return buf;
}

const char *cli_arena_strerror(const char *path, int err, char *buf,
			       size_t len)
{
	struct actrack_arena_header h;
	struct stat st;
	ssize_t n = -1;
	int fd;

	if (err < 0)
		err = -err;
	/* Look at the file ourselves to say precisely what is wrong. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (fstat(fd, &st) == 0) {
			if (S_ISREG(st.st_mode))
				n = pread(fd, &h, sizeof(h), 0);
			else if (err == EINVAL)
				err = S_ISDIR(st.st_mode) ? EISDIR : ENODEV;
		}
		close(fd);
	}
	switch (err) {
	case EBADMSG:
		if (n >= 0 && n < (ssize_t)sizeof(h))
			snprintf(buf, len, "not an actrack arena (too short: "
				 "%zd bytes)", n);
		else if (n >= (ssize_t)sizeof(h) &&
			 h.magic == ACTRACK_ARENA_MAGIC)
			snprintf(buf, len, "not an actrack arena (bad header "
				 "size %u)", h.header_size);
		else
			snprintf(buf, len, "not an actrack arena (bad magic)");
		return buf;
	case EPROTONOSUPPORT:
		if (n == (ssize_t)sizeof(h))
			snprintf(buf, len, "unsupported arena ABI %u.%u (this "
				 "actrack reads %u.x)", h.abi_major,
				 h.abi_minor, ACTRACK_ABI_MAJOR);
		else
			snprintf(buf, len, "unsupported arena ABI");
		return buf;
	case EUCLEAN:
		/* A size no arena can have is a forged or damaged header,
		 * whatever the file's length: say so before "truncated". */
		if (n == (ssize_t)sizeof(h) &&
		    (h.size < ACTRACK_ARENA_MIN_SIZE ||
		     h.size > ACTRACK_ARENA_MAX_SIZE ||
		     h.size % ACTRACK_BLOCK_ALIGN))
			snprintf(buf, len, "arena size %u out of range (%u..%u "
				 "bytes, a multiple of %u)", h.size,
				 ACTRACK_ARENA_MIN_SIZE, ACTRACK_ARENA_MAX_SIZE,
				 ACTRACK_BLOCK_ALIGN);
		else if (n == (ssize_t)sizeof(h) && h.size > st.st_size)
			snprintf(buf, len, "truncated arena (%lld of %u bytes)",
				 (long long)st.st_size, h.size);
		else
			snprintf(buf, len, "corrupt arena header");
		return buf;
	case EFBIG:
		snprintf(buf, len, "not an actrack arena (larger than %u bytes)",
			 ACTRACK_ARENA_MAX_SIZE);
		return buf;
	case ENODEV:
		snprintf(buf, len, "not a regular file");
		return buf;
	case ENODATA:
		snprintf(buf, len, "no image of a previous boot (load "
			 "actrack.ko with persist=: see actrack-ps(1))");
		return buf;
	case ENOENT:
		if (cli.previous_boot) {
			if (access(ACTRACK_DEVICE_PATH, F_OK))
				snprintf(buf, len, "actrack.ko is not loaded");
			else
				snprintf(buf, len, "the previous boot left no "
					 "arena of uid %u",
					 (unsigned int)geteuid());
			return buf;
		}
		if (strcmp(path, ACTRACK_DEVICE_PATH)) {
			char def[PATH_MAX];
			const char *env = getenv(ACTRACK_ENV_ARENA);

			/* Only the default arena's absence is news: a
			 * named one is simply missing. */
			if (cli.arena || (env && *env) ||
			    actrack_arena_path(NULL, def, sizeof(def)) !=
			    ACTRACK_BACKEND_FILE || strcmp(def, path))
				break;
			snprintf(buf, len, "no arena yet: nothing has run "
				 "under actrack as uid %u since boot (start "
				 "one with `actrack run -- PROGRAM`, or load "
				 "actrack.ko)", (unsigned int)getuid());
			return buf;
		}
		/* The module makes an arena for a uid's first writer and
		 * takes its memory back when nothing uses it. */
		snprintf(buf, len, "no arena for this uid (no tracked process "
			 "is alive; `actrack monitor --recent` replays recent "
			 "deaths)");
		return buf;
	}
	snprintf(buf, len, "%s", strerror(err));
	return buf;
}

int cli_snapshot(struct actrack_snapshot **out)
{
	char reason[128];
	int ret;

	ret = actrack_snapshot_take(cli.arena,
				    (cli.arena ? ACTRACK_SNAP_ARENA_FILE : 0) |
				    (cli.previous_boot ?
				     ACTRACK_SNAP_PREVIOUS_BOOT : 0), out);
	if (ret) {
		const char *name = cli_arena_name();

		cli_errorf("%s: %s", name,
			   cli_arena_strerror(name, ret, reason,
					      sizeof(reason)));
	}
	return ret;
}

static void newest(uint64_t *max, uint64_t t)
{
	if (t > *max)
		*max = t;
}

bool cli_same_boot(const struct actrack_snapshot *s)
{
	static const uint8_t zero[16];
	uint8_t id[16];

	return !actrack_boot_id(id) && memcmp(id, zero, sizeof(zero)) &&
	       !memcmp(s->header.boot_id, id, sizeof(id));
}

/* The inode of our pid namespace, 0 where /proc does not say. */
static uint32_t own_pid_ns(void)
{
	static uint32_t ns;
	static bool known;
	struct stat st;

	if (!known) {
		ns = stat("/proc/self/ns/pid", &st) ? 0 : (uint32_t)st.st_ino;
		known = true;
	}
	return ns;
}

bool cli_process_foreign(const struct actrack_snap_process *p)
{
	uint32_t ns = own_pid_ns();

	return p->pid_ns && ns && p->pid_ns != ns;
}

bool cli_process_running(const struct actrack_snap_process *p)
{
	uint64_t ticks;

	/* Our /proc says nothing about another namespace's pid. */
	if (cli_process_foreign(p))
		return false;
	return !actrack_read_start_ticks((pid_t)p->pid, &ticks) &&
	       ticks == p->start_ticks;
}

bool cli_saved_image(const struct actrack_snapshot *s)
{
	/* The library reports an image's save time as the snapshot's time
	 * (and only for files): then, and only then, they are equal. */
	return s->header.saved_mono_ns &&
	       s->taken_mono_ns == s->header.saved_mono_ns;
}

void cli_print_time_note(FILE *f, const struct actrack_snapshot *s,
			 bool other_boot)
{
	char when[72] = "", t[64];

	if (cli.have_now)
		return;
	if (cli_saved_image(s)) {
		if (render_real_time(s->header.saved_real_ns, false, t,
				     sizeof(t)))
			snprintf(when, sizeof(when), " (%s)", t);
		/* The module wrote the previous boot's end: its heartbeat. */
		if (cli.previous_boot)
			fprintf(f, "note: arena from another boot: ages are "
				"relative to the last second its machine was "
				"alive%s\n", when);
		else
			fprintf(f, "note: saved image: ages are relative to "
				"when it was saved%s\n", when);
	} else if (other_boot) {
		fputs("note: arena from another boot: ages are relative to its "
		      "newest timestamp\n", f);
	}
}

void cli_print_corrupt_note(FILE *f, const struct actrack_snapshot *s)
{
	if (s->corrupt)
		fputs("note: the arena is corrupt: records that failed "
		      "validation were skipped, processes or threads may be "
		      "missing\n", f);
}

uint64_t cli_now(const struct actrack_snapshot *s, bool *other_boot)
{
	static const uint8_t zero[16];
	uint8_t id[16];
	uint64_t max;

	if (other_boot)
		*other_boot = false;
	if (cli.have_now)
		return cli.now_ns;
	if (!memcmp(s->header.boot_id, zero, sizeof(zero)) ||
	    actrack_boot_id(id) ||
	    !memcmp(s->header.boot_id, id, sizeof(id)))
		return s->taken_mono_ns;

	/* Another boot's monotonic clock: our "now" means nothing to it. */
	if (other_boot)
		*other_boot = true;
	if (cli_saved_image(s))
		return s->taken_mono_ns;
	/* An image from before saves recorded their time: the newest
	 * timestamp is the best guess. */
	max = s->header.create_mono_ns;
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		newest(&max, p->launch_time_ns);
		for (uint32_t j = 0; j < p->nr_logs; j++)
			newest(&max, p->logs[j].time_ns);
		for (uint32_t j = 0; j < p->nr_threads; j++) {
			const struct actrack_snap_thread *t = &p->threads[j];

			newest(&max, t->start_time_ns);
			for (uint32_t k = 0; k < t->nr_activities; k++)
				newest(&max, t->activities[k].a.time_ns);
		}
	}
	return max;
}

char *cli_duration(char *buf, size_t len, uint64_t ns)
{
	uint64_t ms = ns / 1000000, s = ns / 1000000000ULL;

	if (s < 1)
		snprintf(buf, len, "%llu ms", (unsigned long long)ms);
	else if (s < 60)
		snprintf(buf, len, "%llu.%llu s", (unsigned long long)s,
			 (unsigned long long)(ms % 1000 / 100));
	else if (s < 3600)
		snprintf(buf, len, "%llum%02llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, len, "%lluh%02llum",
			 (unsigned long long)(s / 3600),
			 (unsigned long long)(s % 3600 / 60));
	else
		snprintf(buf, len, "%llud%02lluh",
			 (unsigned long long)(s / 86400),
			 (unsigned long long)(s % 86400 / 3600));
	return buf;
}

char *cli_age(char *buf, size_t len, uint64_t now, uint64_t t)
{
	char d[32];

	/* Coarse clocks lag the precise one; "later" means a writer's clock
	 * or a forged timestamp is ahead of ours. */
	if (t > now)
		snprintf(buf, len, "%s later", cli_duration(d, sizeof(d),
							     t - now));
	else
		snprintf(buf, len, "%s ago", cli_duration(d, sizeof(d),
							   now - t));
	return buf;
}

char *cli_offset(char *buf, size_t len, uint64_t now, uint64_t t)
{
	uint64_t d = t > now ? t - now : now - t;
	uint64_t ms = d / 1000000;

	snprintf(buf, len, "%c%llu.%03llu s", t > now ? '+' : '-',
		 (unsigned long long)(ms / 1000),
		 (unsigned long long)(ms % 1000));
	return buf;
}

/*
 * The one escaping rule for arena strings (dump, top, hangs, ps, monitor):
 * \n \t \r \\ as in C, @quote (if any) backslashed, anything else that
 * is not printable ASCII as \xHH.  Writes the escape of @c to @out (at
 * most 5 bytes, NUL-terminated) and returns its length.
 */
static size_t escape_char(unsigned char c, char quote, char out[5])
{
	switch (c) {
	case '\n':
		return (size_t)snprintf(out, 5, "\\n");
	case '\t':
		return (size_t)snprintf(out, 5, "\\t");
	case '\r':
		return (size_t)snprintf(out, 5, "\\r");
	case '\\':
		return (size_t)snprintf(out, 5, "\\\\");
	}
	if (quote && c == (unsigned char)quote)
		return (size_t)snprintf(out, 5, "\\%c", quote);
	if (c < 0x20 || c >= 0x7f)
		return (size_t)snprintf(out, 5, "\\x%02x", c);
	out[0] = (char)c;
	out[1] = 0;
	return 1;
}

static void escape(FILE *f, const char *s, size_t max, char quote)
{
	char e[5];

	for (size_t i = 0; i < max && s[i]; i++) {
		escape_char((unsigned char)s[i], quote, e);
		fputs(e, f);
	}
}

void cli_print_escaped(FILE *f, const char *s, size_t max)
{
	escape(f, s, max, 0);
}

bool cli_escape(char *buf, size_t len, const char *s, size_t max,
		size_t width)
{
	size_t pos = 0, i;
	char e[5];

	if (!len)
		return false;
	if (!width || width > len - 1)
		width = len - 1;
	for (i = 0; i < max && s[i]; i++) {
		size_t n = escape_char((unsigned char)s[i], 0, e);

		/* Never half an escape: "\x1" would read as another byte. */
		if (pos + n > width)
			break;
		memcpy(buf + pos, e, n);
		pos += n;
	}
	buf[pos] = 0;
	return i < max && s[i];
}

char *cli_activity_object(char *buf, size_t len,
			  const struct actrack_activity *a)
{
	unsigned long long obj = a->object, info = a->info;

	switch (a->type) {
	case ACTRACK_ACT_TASK_RUN:
		snprintf(buf, len, "task %llu", obj);
		break;
	case ACTRACK_ACT_LOCK_ACQUIRE:
	case ACTRACK_ACT_LOCK_HELD:
		snprintf(buf, len, "lock 0x%llx", obj);
		break;
	case ACTRACK_ACT_EVENT_WAIT:
		snprintf(buf, len, "event 0x%llx", obj);
		break;
	case ACTRACK_ACT_THREAD_JOIN:
		snprintf(buf, len, "tid %llu", obj);
		break;
	case ACTRACK_ACT_PROCESS_WAIT:
		/* 0: waitpid(-1), wait(): whichever child ends first */
		if (obj)
			snprintf(buf, len, "pid %llu", obj);
		else
			snprintf(buf, len, "any child");
		break;
	case ACTRACK_ACT_IO_WAIT:
		snprintf(buf, len, "fd %lld, %llu bytes", (long long)obj, info);
		break;
	default:
		if ((a->type & ACTRACK_ACT_CATEGORY_MASK) == ACTRACK_ACT_GENERIC)
			snprintf(buf, len, "action %u id %llu info %llu",
				 a->type & 0x0f, obj, info);
		else
			snprintf(buf, len, "type 0x%02x object 0x%llx info "
				 "0x%llx", a->type, obj, info);
		break;
	}
	return buf;
}

#define RAW_SHOWN	64	/* bytes of a raw value printed in hex */

void cli_print_value(FILE *f, const struct actrack_value *v)
{
	escape(f, v->name, sizeof(v->name), 0);
	fputs(" = ", f);
	switch (v->type) {
	case ACTRACK_VALUE_RAW:
		fputs("raw ", f);
		for (uint32_t i = 0; v->bytes && i < v->size && i < RAW_SHOWN;
		     i++)
			fprintf(f, "%02x", v->bytes[i]);
		fprintf(f, "%s(%u bytes)", v->size > RAW_SHOWN ? "... " : " ",
			v->size);
		break;
	case ACTRACK_VALUE_STRING:
		fputc('"', f);
		if (v->bytes)
			escape(f, (const char *)v->bytes, v->size, '"');
		fputc('"', f);
		break;
	case ACTRACK_VALUE_BOOL:
		fputs(v->b ? "true" : "false", f);
		break;
	case ACTRACK_VALUE_CHAR:
		fputc('\'', f);
		if (v->c)
			escape(f, &v->c, 1, '\'');
		else
			fputs("\\0", f);
		fputc('\'', f);
		break;
	case ACTRACK_VALUE_SIGNED:
		fprintf(f, "%lld", (long long)v->s);
		break;
	case ACTRACK_VALUE_UNSIGNED:
		fprintf(f, "%llu", (unsigned long long)v->u);
		break;
	case ACTRACK_VALUE_RAW_REF:
		fprintf(f, "ref 0x%llx (%llu bytes)",
			(unsigned long long)v->ref.address,
			(unsigned long long)v->ref.size);
		break;
	case ACTRACK_VALUE_STRING_REF:
		fprintf(f, "string ref 0x%llx (%llu bytes)",
			(unsigned long long)v->ref.address,
			(unsigned long long)v->ref.size);
		break;
	default:
		fprintf(f, "(unknown type %u, %u bytes)", v->type, v->size);
		break;
	}
}

void cli_print_values(FILE *f, const char *indent,
		      const struct actrack_value *v, uint32_t nr)
{
	for (uint32_t i = 0; v && i < nr; i++) {
		fputs(indent, f);
		cli_print_value(f, &v[i]);
		fputc('\n', f);
	}
}

const char *cli_signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

char *cli_render_whole(void (*render)(FILE *f, const void *arg),
		       const void *arg, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *mem = open_memstream(&buf, &n);

	if (!mem)
		return NULL;
	render(mem, arg);
	if (fclose(mem)) {
		free(buf);
		return NULL;
	}
	if (len)
		*len = n;
	return buf;
}

char *cli_render_string(void (*render)(FILE *f, const void *arg),
			const void *arg, size_t *len)
{
	size_t n;
	char *buf = cli_render_whole(render, arg, &n);

	if (!buf)
		return NULL;
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/*
 * "500ms", "2s", "1.5m", "1h", "3" (seconds) -> nanoseconds.
 * Return: 0 or -EINVAL.
 */
int cli_parse_duration(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {
		{ "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 }, { "m", 60e9 },
		{ "h", 3600e9 },
	};
	char *end;
	double v;

	if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (v * units[i].ns >= 1.8e19)
			return -EINVAL;
		*out = (uint64_t)(v * units[i].ns);
		return 0;
	}
	return -EINVAL;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_getopt_error(const char *cmd, int opt, char **argv)
{
	if (opt == ':')
		return cli_usage_error(cmd, "%s: %s: missing argument", cmd,
				       argv[optind - 1]);
	return cli_usage_error(cmd, "%s: unknown option '%s'", cmd,
			       argv[optind - 1]);
}

int cli_simple_args(int argc, char **argv, const char *cmd, int min_args,
		    int max_args, bool previous_boot)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "previous-boot", no_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, n;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'h') {
			fputs(cli_help_page(cmd), stdout);
			return 0;
		}
		if (opt != 'B' || !previous_boot)
			return cli_getopt_error(cmd, opt, argv);
		cli.previous_boot = true;
	}
	n = argc - optind;
	if (n < min_args)
		return cli_usage_error(cmd, "%s: missing argument", cmd);
	if (n > max_args)
		return cli_usage_error(cmd, "%s: unexpected argument '%s'",
				       cmd, argv[optind + max_args]);
	if (cli.previous_boot && cli.arena)
		return cli_usage_error(cmd, "%s: --previous-boot reads the "
				       "module's image, not --arena", cmd);
	return -1;
}
