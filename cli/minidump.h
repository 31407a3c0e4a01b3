/* SPDX-License-Identifier: MIT */
/*
 * A death report as a minidump: the file format of Breakpad and Crashpad
 * (Microsoft's MINIDUMP layout with Breakpad's Linux streams), which
 * lldb opens with `lldb -c FILE` and crash servers (Sentry, Socorro)
 * ingest.  docs/minidump.md lists every stream written and where each
 * field comes from.
 */
#ifndef ACTRACK_CLI_MINIDUMP_H
#define ACTRACK_CLI_MINIDUMP_H

#include <stddef.h>
#include <stdio.h>
#include "actrack.h"

/* Facts about the machine, and about where the report was kept, that a
 * death report does not carry. */
struct minidump_host {
	const char *release;		/* uname -r, NULL: unknown */
	unsigned int nr_cpus;
	uint32_t time;			/* the file's time stamp, s */
	/* Why no thread has a stack, when the report was kept somewhere
	 * that keeps none (the journal); NULL: the report's flags say. */
	const char *no_stack;
};

/* minidump_host_now() - this machine, now (the monitor writes a report on
 * the machine where the process died). */
void minidump_host_now(struct minidump_host *h);

/*
 * minidump_build() - @d as a minidump in a new buffer (*@out, *@len; free
 * it).  The report is not trusted: a field that does not fit the format is
 * cut or left out, never written out of bounds.  @text is what a crash
 * server shows beside the stack (the CLI's text report); may be NULL.
 * Return: 0, -ENOMEM, -EINVAL (a report of no thread).
 */
int minidump_build(const struct actrack_death *d,
		   const struct minidump_host *h, const char *text,
		   uint8_t **out, size_t *len);

/*
 * minidump_save() - write @d's minidump as DIR/actrack-UID-SEQ-PID.dmp,
 * created under a temporary name and renamed, so that a watcher (an
 * uploader) never sees half a file.  @path receives the name.
 * Return: 0 or -errno.
 */
int minidump_save(const char *dir, const struct actrack_death *d,
		  const char *text, char *path, size_t path_len);

/* minidump_write() - the same, with @h's facts instead of this machine's
 * now (deaths export: a report read back later). */
int minidump_write(const char *dir, const struct actrack_death *d,
		   const struct minidump_host *h, const char *text,
		   char *path, size_t path_len);

#endif /* ACTRACK_CLI_MINIDUMP_H */
