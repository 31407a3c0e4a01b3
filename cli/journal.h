/* SPDX-License-Identifier: MIT */
/*
 * actrack monitor's system side: module reloads reported on stderr, and
 * death reports written to the systemd journal (--journal).  Kept apart
 * from the renderers of cmd_monitor.c, which it calls through two
 * function pointers.  Also the hang watch's entries (hangs --watch
 * --journal), in the same field style, and the readers that deaths and
 * hangs --history share.
 */
#ifndef ACTRACK_CLI_JOURNAL_H
#define ACTRACK_CLI_JOURNAL_H

#include <stdbool.h>
#include <stdio.h>
#include <systemd/sd-journal.h>
#include "actrack.h"

/* MESSAGE_ID of every death report actrack writes to the journal
 * (journalctl MESSAGE_ID=...; documented in actrack-deaths(1)). */
#define ACTRACK_JOURNAL_MESSAGE_ID	"5c4a1e0d3f7b4a6e9d2c8b1f0a3e6d47"
/* MESSAGE_ID of the "module reloaded, reports may be lost" entries. */
#define ACTRACK_JOURNAL_GAP_ID		"a8f26c1b9e0d47c3b5d41e7f2c9a6b30"
/* MESSAGE_IDs of a hang episode's first entry and of the one that says it
 * ended (actrack hangs --watch --journal; documented in actrack-hangs(1)). */
#define ACTRACK_JOURNAL_HANG_ID	"e73f0a2ca8714de883c2ccd49c3a6394"
#define ACTRACK_JOURNAL_HANG_END_ID	"8f7342c0e51541698eac2e95f7e640d0"
/* MESSAGE_ID of the entry monitor --journal writes once per previous
 * boot's image (cli/previous_boot.c; documented in actrack-deaths(1)). */
#define ACTRACK_JOURNAL_PREVIOUS_BOOT_ID	"394b5103d5bc4b64b69977612ca71fb5"

/* A renderer of cmd_monitor.c: writes one report to @f. */
typedef void (*journal_render_fn)(FILE *f, const struct actrack_death *d,
				  const char *source);

/*
 * actrack_monitor_set_gap_fn() callback: one line on stderr when the
 * module goes away and when the monitor is subscribed again.  @arg: a
 * bool *, true when the lines also go to the journal.
 */
void journal_monitor_gap(const struct actrack_monitor_gap *gap, void *arg);

/*
 * Write @d to the journal as one entry: MESSAGE from @text, ACTRACK_REPORT
 * from @json, the ACTRACK_* fields (ACTRACK_KERNEL: this machine's
 * release), and ACTRACK_MINIDUMP=@minidump, the file monitor
 * --minidump-dir wrote (NULL: none).  @stacks (monitor --journal-stacks):
 * also ACTRACK_STACKS, every thread's registers and stack bytes
 * (cli/death_stacks.h), which readers of the journal then read: opt-in
 * (docs/trust.md).  Return 0 or -errno.
 */
int journal_send_death(const struct actrack_death *d, const char *source,
		       journal_render_fn text, journal_render_fn json,
		       const char *minidump, bool stacks);

/*
 * One entry of a hang episode (cli/cmd_hangs.c): its start (@ended NULL,
 * with @report, the JSON of hangs --json) or its end (@ended "completed"
 * or "died").  @owner and @cycle NULL: not written.  @suppressed: entries
 * the rate bound dropped since the last one written.
 */
struct journal_hang {
	const char *message, *report;
	const char *ended;
	uint32_t pid, tid;
	uint64_t start_ticks, wait_start_ns;
	const char *comm, *verdict, *wait, *owner, *cycle;
	uint64_t suppressed;
};

/* Write @e to the journal as one entry.  Return 0 or -errno. */
int journal_send_hang(const struct journal_hang *e);

/*
 * The previous boot's entry: @message and @report (its JSON) made by
 * cli/previous_boot.c, @boot_id the image's (32 hex digits), the counts
 * of what was read and of what was not.
 */
struct journal_boot {
	const char *message, *report, *boot_id;
	uint32_t processes, arenas;
	uint32_t unreadable, corrupt, torn, lost;
};

/* Write @e to the journal as one entry.  Return 0 or -errno. */
int journal_send_previous_boot(const struct journal_boot *e);

/* actrack deaths (cli/cmd_deaths.c): the entries read back. */
int cmd_deaths(int argc, char **argv);

/*
 * Reading actrack's entries back (cli/cmd_deaths.c; hangs --history too).
 * journal_parse_time(): a TIME of --since/--until (actrack-deaths(1)) in
 * CLOCK_REALTIME µs.  journal_field_str(): field @name of the current
 * entry escaped into @buf, at most @width bytes ("?" when absent).
 * journal_field_num(): an unsigned decimal field, -1 when absent or not a
 * number.  journal_entry_time(): the entry's local time, ms precision.
 */
int journal_parse_time(const char *s, uint64_t *out);
const char *journal_field_str(sd_journal *j, const char *name, char *buf,
			      size_t len, size_t width);
int64_t journal_field_num(sd_journal *j, const char *name);
const char *journal_entry_time(sd_journal *j, char *buf, size_t len);

#endif /* ACTRACK_CLI_JOURNAL_H */
