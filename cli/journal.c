// SPDX-License-Identifier: MIT
/*
 * actrack monitor's system side (cli/journal.h): module reloads.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "actrack.h"
#include "cli.h"
#include "journal.h"

/* Local wall-clock time of a CLOCK_REALTIME instant, ms precision. */
static const char *real_time(uint64_t ns, char *buf, size_t len)
{
	time_t secs = (time_t)(ns / 1000000000ULL);
	struct tm tm;
	size_t n;

	if (!ns || !localtime_r(&secs, &tm)) {
		snprintf(buf, len, "unknown");
		return buf;
	}
	n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03u",
		 (unsigned int)(ns % 1000000000ULL / 1000000));
	return buf;
}

void journal_monitor_gap(const struct actrack_monitor_gap *gap, void *arg)
{
	char t1[64], t2[64];

	if (!gap->resubscribed_ns) {
		fprintf(stderr, "actrack: actrack.ko unloaded at %s; waiting "
			"for it to be loaded again\n",
			real_time(gap->unloaded_ns, t1, sizeof(t1)));
		return;
	}
	/* From the unload if it was seen, else from the load: while no
	 * module was loaded, no death was tracked at all. */
	fprintf(stderr, "actrack: module reloaded; reports between %s and %s "
		"may be lost\n",
		real_time(gap->unloaded_ns ? gap->unloaded_ns :
			  gap->loaded_ns, t1, sizeof(t1)),
		real_time(gap->resubscribed_ns, t2, sizeof(t2)));
}
