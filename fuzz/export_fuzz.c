// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for `actrack deaths export`'s input side: a journal
 * entry's ACTRACK_REPORT, MESSAGE and ACTRACK_STACKS are bytes anyone who
 * can log with actrack's MESSAGE_ID wrote.  The input is the JSON report,
 * then, after a NUL, the text report, and after another NUL the stacks'
 * binary value (a part missing: none, and the JSON is the text).  The
 * JSON is read by cli/death_json.c (through cli/json_read.c), the stacks
 * by cli/death_stacks.c, which must keep a value whole or not at all: one
 * it accepts is encoded back to the same bytes.  What is accepted is
 * written as a minidump (cli/minidump.c) with the text report (whose
 * thread blocks become annotations), which must be whole: every
 * stream inside the file, as many threads as the death has (read back by
 * the tests' reader, minidump_read.h).  A report or a value it refuses is
 * -EBADMSG or -ENOMEM, nothing else, and leaks nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "death_json.h"
#include "death_stacks.h"
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

static void check_minidump(const struct actrack_death *d, const char *text)
{
	struct minidump_host h = { "6.1.0-fuzz", 2, 0, "fuzz" };
	uint32_t rva, len32;
	uint8_t *buf;
	size_t len;

	if (minidump_build(d, &h, text, &buf, &len))
		abort();
	if (!md_check(buf, len) || !md_stream(buf, len, 3, &rva, &len32) ||
	    len32 < 4 || md_u32(buf + rva) != d->process.nr_threads)
		abort();
	free(buf);
}

/* ACTRACK_STACKS read into @d: whole, or nothing. */
static void check_stacks(const uint8_t *data, size_t size,
			 struct actrack_death *d)
{
	int ret = death_stacks_decode(data, size, d);
	uint8_t *again;
	size_t len;

	if (ret) {
		if ((ret != -EBADMSG && ret != -ENOMEM) || d->stacks ||
		    d->nr_stacks)
			abort();
		return;
	}
	for (uint32_t i = 0; i < d->nr_stacks; i++)
		if (!d->stacks[i].bytes != !d->stacks[i].size ||
		    d->stacks[i].size > DEATH_STACKS_MAX_BYTES)
			abort();
	if (death_stacks_encode(d, &again, &len))
		return;
	if (len != size || memcmp(again, data, size))
		abort();
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct actrack_snap_thread main_thread = { 0 };
	const uint8_t *nul = memchr(data, '\0', size), *msg = data, *nul2;
	size_t json = nul ? (size_t)(nul - data) : size, text = json;
	struct actrack_death d;
	char *copy;
	int ret = death_from_json((const char *)data, json, &d);

	nul2 = nul ? memchr(nul + 1, '\0', size - json - 1) : NULL;
	if (nul) {
		msg = nul + 1;
		text = nul2 ? (size_t)(nul2 - msg) : size - json - 1;
	}
	if (ret == 0) {
		check_death(&d);
		if (nul2)
			check_stacks(nul2 + 1, size - (size_t)(nul2 + 1 - data),
				     &d);
		/* As the export does: a report of no thread, its main one. */
		if (!d.process.nr_threads) {
			main_thread.tid = d.process.pid;
			d.process.threads = &main_thread;
			d.process.nr_threads = 1;
		}
		copy = strndup((const char *)msg, text);
		if (!copy)
			abort();
		check_minidump(&d, copy);
		free(copy);
		if (d.process.threads == &main_thread) {
			d.process.threads = NULL;
			d.process.nr_threads = 0;
		}
	} else if (ret != -EBADMSG && ret != -ENOMEM) {
		abort();
	}
	death_stacks_free(&d);
	death_json_free(&d);
	return 0;
}
