/* SPDX-License-Identifier: MIT */
/*
 * actrack monitor's system side: module reloads reported on stderr.
 */
#ifndef ACTRACK_CLI_JOURNAL_H
#define ACTRACK_CLI_JOURNAL_H

#include "actrack.h"

/*
 * actrack_monitor_set_gap_fn() callback: one line on stderr when the
 * module goes away and when the monitor is subscribed again.
 */
void journal_monitor_gap(const struct actrack_monitor_gap *gap, void *arg);

#endif /* ACTRACK_CLI_JOURNAL_H */
