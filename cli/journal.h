/* SPDX-License-Identifier: MIT */
/*
 * actrack monitor's system side: module reloads reported on stderr, and
 * death reports written to the systemd journal (--journal).  Kept apart
 * from the renderers of cmd_monitor.c, which it calls through two
 * function pointers.
 */
#ifndef ACTRACK_CLI_JOURNAL_H
#define ACTRACK_CLI_JOURNAL_H

#include <stdio.h>
#include "actrack.h"

/* MESSAGE_ID of every death report actrack writes to the journal
 * (journalctl MESSAGE_ID=...; documented in actrack-deaths(1)). */
#define ACTRACK_JOURNAL_MESSAGE_ID	"5c4a1e0d3f7b4a6e9d2c8b1f0a3e6d47"
/* MESSAGE_ID of the "module reloaded, reports may be lost" entries. */
#define ACTRACK_JOURNAL_GAP_ID		"a8f26c1b9e0d47c3b5d41e7f2c9a6b30"

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
 * from @json, and the ACTRACK_* fields.  Return 0 or -errno.
 */
int journal_send_death(const struct actrack_death *d, const char *source,
		       journal_render_fn text, journal_render_fn json);

/* actrack deaths (cli/cmd_deaths.c): the entries read back. */
int cmd_deaths(int argc, char **argv);

#endif /* ACTRACK_CLI_JOURNAL_H */
