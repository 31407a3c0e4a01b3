// SPDX-License-Identifier: MIT
/*
 * actrack monitor's system side (cli/journal.h): module reloads, and the
 * death reports as journal entries; and the hang watch's entries.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <systemd/sd-journal.h>

#include "actrack.h"
#include "cli.h"
#include "death_stacks.h"
#include "journal.h"
#include "render.h"

/* Local wall-clock time of a CLOCK_REALTIME instant, or "unknown". */
static const char *real_time(uint64_t ns, char *buf, size_t len)
{
	render_real_time(ns, false, buf, len);
	return buf;
}

void journal_monitor_gap(const struct actrack_monitor_gap *gap, void *arg)
{
	const bool *journal = arg;
	char t1[64], t2[64], line[256];

	if (!gap->resubscribed_ns) {
		snprintf(line, sizeof(line), "actrack.ko unloaded at %s; "
			 "waiting for it to be loaded again",
			 real_time(gap->unloaded_ns, t1, sizeof(t1)));
	} else {
		/* From the unload if it was seen, else from the load: while
		 * no module was loaded, no death was tracked at all. */
		snprintf(line, sizeof(line), "module reloaded; reports "
			 "between %s and %s may be lost",
			 real_time(gap->unloaded_ns ? gap->unloaded_ns :
				   gap->loaded_ns, t1, sizeof(t1)),
			 real_time(gap->resubscribed_ns, t2, sizeof(t2)));
	}
	fprintf(stderr, "actrack: %s\n", line);
	if (journal && *journal)
		sd_journal_send("MESSAGE=actrack: %s", line,
				"MESSAGE_ID=%s", ACTRACK_JOURNAL_GAP_ID,
				"PRIORITY=4", "SYSLOG_IDENTIFIER=actrack",
				"ACTRACK_GAP_UNLOADED_NS=%" PRIu64,
				gap->unloaded_ns,
				"ACTRACK_GAP_LOADED_NS=%" PRIu64,
				gap->loaded_ns,
				"ACTRACK_GAP_RESUBSCRIBED_NS=%" PRIu64,
				gap->resubscribed_ns, NULL);
}

/* A report to render with cli_render_string(): @fn's arguments. */
struct death_render {
	journal_render_fn fn;
	const struct actrack_death *d;
	const char *source;
};

static void render_death(FILE *f, const void *arg)
{
	const struct death_render *r = arg;

	r->fn(f, r->d, r->source);
}

/* The command name: argv[0]'s last component, as the kernel's comm is
 * (15 bytes); "?" when the report has no command line. */
static void comm_of(const struct actrack_death *d, char *buf, size_t len)
{
	const char *p = d->process.cmdline, *end, *slash;
	size_t n;

	end = memchr(p, ' ', strnlen(p, sizeof(d->process.cmdline)));
	if (!end)
		end = p + strnlen(p, sizeof(d->process.cmdline));
	for (slash = p; slash < end; slash++)
		if (*slash == '/')
			p = slash + 1;
	n = (size_t)(end - p);
	if (n > 15)
		n = 15;
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (!n)
		snprintf(buf, len, "?");
}

#define NR_FIELDS	40

/* "NAME=value" into @iov[*@n] (the journal takes any bytes after '='). */
static int field(struct iovec *iov, int *n, char **owned, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int field(struct iovec *iov, int *n, char **owned, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (len < 0)
		return -ENOMEM;
	owned[*n] = s;
	iov[*n].iov_base = s;
	iov[(*n)++].iov_len = (size_t)len;
	return 0;
}

/* A field whose value is @len bytes of @val (the text, the JSON). */
static int field_bytes(struct iovec *iov, int *n, char **owned,
		       const char *name, const char *val, size_t len)
{
	size_t nl = strlen(name);
	char *s = malloc(nl + 1 + len);

	if (!s)
		return -ENOMEM;
	memcpy(s, name, nl);
	s[nl] = '=';
	memcpy(s + nl + 1, val, len);
	owned[*n] = s;
	iov[*n].iov_base = s;
	iov[(*n)++].iov_len = nl + 1 + len;
	return 0;
}

/*
 * ACTRACK_MINIDUMP=@minidump (if any), ACTRACK_KERNEL, the release the
 * process died on (the monitor runs on its machine), and with @stacks
 * ACTRACK_STACKS: its stacks at death as death_stacks.h lays them out (a
 * binary value: sd_journal_sendv() sends a value with newlines in the
 * native protocol's binary form).
 */
static int death_extra(struct iovec *iov, int *n, char **owned,
		       const struct actrack_death *d, const char *minidump,
		       bool stacks)
{
	struct utsname u;
	uint8_t *buf;
	size_t len;
	int ret;

	if (minidump) {
		ret = field(iov, n, owned, "ACTRACK_MINIDUMP=%s", minidump);
		if (ret)
			return ret;
	}
	if (!uname(&u)) {
		ret = field(iov, n, owned, "ACTRACK_KERNEL=%s", u.release);
		if (ret)
			return ret;
	}
	if (!stacks || !d->nr_stacks)
		return 0;
	ret = death_stacks_encode(d, &buf, &len);
	if (ret)
		return ret;
	ret = field_bytes(iov, n, owned, "ACTRACK_STACKS", (const char *)buf,
			  len);
	free(buf);
	return ret;
}

int journal_send_death(const struct actrack_death *d, const char *source,
		       journal_render_fn text, journal_render_fn json,
		       const char *minidump, bool stacks)
{
	const struct death_render as_text = { text, d, source };
	const struct death_render as_json = { json, d, source };
	struct iovec iov[NR_FIELDS];
	char *owned[NR_FIELDS] = { NULL };
	char *msg, *report, comm[16], sig[32];
	size_t msg_len = 0, report_len = 0;
	int n = 0, ret;

	msg = cli_render_string(render_death, &as_text, &msg_len);
	report = cli_render_string(render_death, &as_json, &report_len);
	if (!msg || !report) {
		ret = -ENOMEM;
		goto out;
	}
	comm_of(d, comm, sizeof(comm));
	/* Killed: an error, as systemd-coredump's are; a failing exit code
	 * is a notice, a clean exit information. */
	ret = field(iov, &n, owned, "PRIORITY=%d",
		    d->signal ? 3 : d->exit_code ? 5 : 6) ?:
	      field(iov, &n, owned, "MESSAGE_ID=%s",
		    ACTRACK_JOURNAL_MESSAGE_ID) ?:
	      field(iov, &n, owned, "SYSLOG_IDENTIFIER=actrack") ?:
	      field_bytes(iov, &n, owned, "MESSAGE", msg, msg_len) ?:
	      field(iov, &n, owned, "ACTRACK_PID=%u", d->process.pid) ?:
	      field(iov, &n, owned, "ACTRACK_UID=%u", d->uid) ?:
	      field(iov, &n, owned, "ACTRACK_COMM=%s", comm) ?:
	      field_bytes(iov, &n, owned, "ACTRACK_CMDLINE", d->process.cmdline,
			  strnlen(d->process.cmdline,
				  sizeof(d->process.cmdline))) ?:
	      field(iov, &n, owned, "ACTRACK_PHASE=%s",
		    actrack_phase_name(d->process.phase)) ?:
	      field(iov, &n, owned, "ACTRACK_START_TICKS=%" PRIu64,
		    d->process.start_ticks) ?:
	      field(iov, &n, owned, "ACTRACK_SEQ=%" PRIu64, d->seq) ?:
	      field(iov, &n, owned, "ACTRACK_SOURCE=%s", source) ?:
	      field_bytes(iov, &n, owned, "ACTRACK_REPORT", report,
			  report_len);
	if (ret)
		goto out;
	if (d->signal)
		ret = field(iov, &n, owned, "ACTRACK_SIGNAL=%d", d->signal) ?:
		      field(iov, &n, owned, "ACTRACK_SIGNAL_NAME=%s",
			    cli_signal_name(d->signal, sig, sizeof(sig))) ?:
		      field(iov, &n, owned, "ACTRACK_CORE_DUMPED=%d",
			    d->core_dumped);
	else
		ret = field(iov, &n, owned, "ACTRACK_EXIT_CODE=%d",
			    d->exit_code);
	if (!ret && d->has_killer)
		ret = field(iov, &n, owned, "ACTRACK_KILLER=%s",
			    render_killer_kind(d->killer.kind));
	/* A sender as the monitor's pid namespace shows it, if at all. */
	if (!ret && d->has_killer && d->killer.pid &&
	    d->killer.kind != ACTRACK_KILLER_KERNEL)
		ret = field(iov, &n, owned, "ACTRACK_KILLER_PID=%u",
			    d->killer.pid) ?:
		      field(iov, &n, owned, "ACTRACK_KILLER_COMM=%s",
			    d->killer.comm) ?:
		      field(iov, &n, owned, "ACTRACK_KILLER_UID=%u",
			    d->killer.uid);
	if (!ret && d->has_killer && d->killer.pid && d->killer.exe[0] &&
	    d->killer.kind != ACTRACK_KILLER_KERNEL)
		ret = field(iov, &n, owned, "ACTRACK_KILLER_EXE=%s",
			    d->killer.exe);
	if (!ret && d->has_killer && d->killer.pid && d->killer.cgroup[0] &&
	    d->killer.kind != ACTRACK_KILLER_KERNEL)
		ret = field(iov, &n, owned, "ACTRACK_KILLER_CGROUP=%s",
			    d->killer.cgroup);
	/*
	 * As the monitor's cgroup namespace shows it.  journalctl -u UNIT
	 * lists, besides the unit's own messages, those of uid 0 that
	 * carry OBJECT_SYSTEMD_UNIT=UNIT: "messages from authorized
	 * daemons about this service".
	 */
	if (!ret && d->cgroup[0])
		ret = field(iov, &n, owned, "ACTRACK_CGROUP=%s", d->cgroup);
	if (!ret && d->unit[0])
		ret = field(iov, &n, owned, "ACTRACK_UNIT=%s", d->unit) ?:
		      field(iov, &n, owned, "OBJECT_SYSTEMD_UNIT=%s", d->unit);
	/* The OOM killer chose it (actrack deaths --oom matches this). */
	if (!ret && d->has_oom)
		ret = field(iov, &n, owned, "ACTRACK_OOM=1");
	if (!ret && d->has_oom && d->oom.memcg_limit)
		ret = field(iov, &n, owned, "ACTRACK_OOM_MEMCG=%s",
			    d->oom.memcg) ?:
		      field(iov, &n, owned, "ACTRACK_OOM_MEMCG_LIMIT=%" PRIu64,
			    d->oom.memcg_limit);
	if (!ret)
		ret = death_extra(iov, &n, owned, d, minidump, stacks);
	if (ret)
		goto out;
	ret = sd_journal_sendv(iov, n);
out:
	for (int i = 0; i < n; i++)
		free(owned[i]);
	free(msg);
	free(report);
	return ret;
}

int journal_send_hang(const struct journal_hang *e)
{
	struct iovec iov[NR_FIELDS];
	char *owned[NR_FIELDS] = { NULL };
	int n = 0, ret;

	/* A hang is an error, as a death by a signal; its end is news. */
	ret = field(iov, &n, owned, "PRIORITY=%d", e->ended ? 6 : 3) ?:
	      field(iov, &n, owned, "MESSAGE_ID=%s", e->ended ?
		    ACTRACK_JOURNAL_HANG_END_ID : ACTRACK_JOURNAL_HANG_ID) ?:
	      field(iov, &n, owned, "SYSLOG_IDENTIFIER=actrack") ?:
	      field_bytes(iov, &n, owned, "MESSAGE", e->message,
			  strlen(e->message)) ?:
	      field(iov, &n, owned, "ACTRACK_PID=%u", e->pid) ?:
	      field(iov, &n, owned, "ACTRACK_START_TICKS=%" PRIu64,
		    e->start_ticks) ?:
	      field(iov, &n, owned, "ACTRACK_TID=%u", e->tid) ?:
	      field(iov, &n, owned, "ACTRACK_COMM=%s", e->comm) ?:
	      field(iov, &n, owned, "ACTRACK_VERDICT=%s", e->verdict) ?:
	      field(iov, &n, owned, "ACTRACK_WAIT=%s", e->wait) ?:
	      field(iov, &n, owned, "ACTRACK_WAIT_START_NS=%" PRIu64,
		    e->wait_start_ns);
	if (!ret && e->owner)
		ret = field(iov, &n, owned, "ACTRACK_OWNER=%s", e->owner);
	if (!ret && e->cycle)
		ret = field(iov, &n, owned, "ACTRACK_CYCLE=%s", e->cycle);
	if (!ret && e->report)
		ret = field_bytes(iov, &n, owned, "ACTRACK_REPORT", e->report,
				  strlen(e->report));
	if (!ret && e->ended)
		ret = field(iov, &n, owned, "ACTRACK_HANG_END=%s", e->ended);
	if (!ret && e->suppressed)
		ret = field(iov, &n, owned, "ACTRACK_SUPPRESSED=%" PRIu64,
			    e->suppressed);
	if (!ret)
		ret = sd_journal_sendv(iov, n);
	for (int i = 0; i < n; i++)
		free(owned[i]);
	return ret;
}

int journal_send_previous_boot(const struct journal_boot *e)
{
	struct iovec iov[NR_FIELDS];
	char *owned[NR_FIELDS] = { NULL };
	int n = 0, ret;

	/* The machine died under running processes: an error, as a death
	 * by a signal is. */
	ret = field(iov, &n, owned, "PRIORITY=3") ?:
	      field(iov, &n, owned, "MESSAGE_ID=%s",
		    ACTRACK_JOURNAL_PREVIOUS_BOOT_ID) ?:
	      field(iov, &n, owned, "SYSLOG_IDENTIFIER=actrack") ?:
	      field_bytes(iov, &n, owned, "MESSAGE", e->message,
			  strlen(e->message)) ?:
	      field(iov, &n, owned, "ACTRACK_PREVIOUS_BOOT_ID=%s",
		    e->boot_id) ?:
	      field(iov, &n, owned, "ACTRACK_PROCESSES=%u", e->processes) ?:
	      field(iov, &n, owned, "ACTRACK_ARENAS=%u", e->arenas) ?:
	      field(iov, &n, owned, "ACTRACK_UNREADABLE_ARENAS=%u",
		    e->unreadable) ?:
	      field(iov, &n, owned, "ACTRACK_CORRUPT_ARENAS=%u", e->corrupt) ?:
	      field(iov, &n, owned, "ACTRACK_TORN_THREADS=%u", e->torn) ?:
	      field(iov, &n, owned, "ACTRACK_LOST_RECORDS=%u", e->lost) ?:
	      field_bytes(iov, &n, owned, "ACTRACK_REPORT", e->report,
			  strlen(e->report));
	if (!ret)
		ret = sd_journal_sendv(iov, n);
	for (int i = 0; i < n; i++)
		free(owned[i]);
	return ret;
}
