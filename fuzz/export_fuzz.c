// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for `actrack deaths export`'s input side: a journal
 * entry's ACTRACK_REPORT is text anyone who can log with actrack's
 * MESSAGE_ID wrote.  The input is that text, read by cli/death_json.c
 * (through cli/json_read.c); what it accepts is written as a minidump
 * (cli/minidump.c), which must be whole: every stream inside the file,
 * as many threads as the death has (read back by the tests' reader,
 * minidump_read.h).  A report it refuses is -EBADMSG or -ENOMEM, nothing
 * else, and leaks nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "death_json.h"
#include "minidump.h"
#include "minidump_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the reader stored is bounded and terminated. */
static void check_death(const struct actrack_death *d)
{
	const struct actrack_snap_process *p = &d->process;

	if (strnlen(p->cmdline, sizeof(p->cmdline)) == sizeof(p->cmdline))
		abort();
	for (uint32_t i = 0; i < p->nr_threads; i++)
		if (strnlen(p->threads[i].name, sizeof(p->threads[i].name)) ==
		    sizeof(p->threads[i].name))
			abort();
	for (uint32_t i = 0; i < p->nr_modules; i++)
		if (strnlen(p->modules[i].path, sizeof(p->modules[i].path)) ==
		    sizeof(p->modules[i].path) ||
		    p->modules[i].build_id_size > ACTRACK_BUILD_ID_MAX)
			abort();
}

static void check_minidump(const struct actrack_death *d)
{
	struct minidump_host h = { "6.1.0-fuzz", 2, 0, "fuzz" };
	uint32_t rva, len32;
	uint8_t *buf;
	size_t len;

	if (minidump_build(d, &h, "report", &buf, &len))
		abort();
	if (!md_check(buf, len) || !md_stream(buf, len, 3, &rva, &len32) ||
	    len32 < 4 || md_u32(buf + rva) != d->process.nr_threads)
		abort();
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct actrack_snap_thread main_thread = { 0 };
	struct actrack_death d;
	int ret = death_from_json((const char *)data, size, &d);

	if (ret == 0) {
		check_death(&d);
		/* As the export does: a report of no thread, its main one. */
		if (!d.process.nr_threads) {
			main_thread.tid = d.process.pid;
			d.process.threads = &main_thread;
			d.process.nr_threads = 1;
		}
		check_minidump(&d);
		if (d.process.threads == &main_thread) {
			d.process.threads = NULL;
			d.process.nr_threads = 0;
		}
	} else if (ret != -EBADMSG && ret != -ENOMEM) {
		abort();
	}
	death_json_free(&d);
	return 0;
}
