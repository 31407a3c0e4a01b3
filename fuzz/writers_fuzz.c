// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the CLI's document writers, `actrack dump --json`
 * (cli_dump_json) and `actrack dump --trace` (cli_dump_trace), on
 * arbitrary snapshots: the input is an arena file (fuzz_arena_input.h),
 * the library turns it into whatever snapshot it yields, and both writers
 * print it.  cli/json.h promises valid JSON and valid UTF-8 whatever the
 * arena's bytes are; json_check.h holds them to it.  Built from the CLI's
 * objects without cli/main.c (this file defines the globals main.c has).
 *
 * How the writers are called (pid filter, "now", other boot) comes from
 * header bytes the arena core ignores (reserved[0]): fuzzed like the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "cli.h"
#include "json.h"
#include "fuzz_arena_input.h"
#include "json_check.h"

struct cli_globals cli;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef int (*writer_fn)(const struct actrack_snapshot *s, uint64_t now,
			 bool other_boot, bool have_pid, uint32_t pid);

/* The JSON writer without live backtraces: an arena image has no threads
 * to stop. */
static int dump_json(const struct actrack_snapshot *s, uint64_t now,
		     bool other_boot, bool have_pid, uint32_t pid)
{
	return cli_dump_json(s, now, other_boot, have_pid, pid, NULL);
}

static void run(writer_fn fn, const struct actrack_snapshot *s, uint64_t now,
		bool other_boot, bool have_pid, uint32_t pid)
{
	FILE *saved = stdout, *mem;
	char *out = NULL;
	size_t len = 0;
	int ret;

	mem = open_memstream(&out, &len);
	if (!mem)
		abort();
	stdout = mem;		/* glibc: stdout is assignable */
	ret = fn(s, now, other_boot, have_pid, pid);
	stdout = saved;
	if (fclose(mem))
		abort();
	/* The pid is always one of the snapshot's: the writer must succeed
	 * and its document must parse. */
	if (ret != 0 || !json_check(out, len)) {
		fwrite(out, 1, len, stderr);
		abort();
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct actrack_snapshot *s = NULL;
	struct actrack_arena a;
	bool other_boot = false, have_pid;
	uint32_t ctl, pid = 0;
	uint64_t now;
	uint8_t *img;
	size_t len;

	img = fuzz_arena_image(data, size, &len);
	cli.arena = "/fuzz/arena \xff\x01\"name\"";
	if (len < ACTRACK_ARENA_HEADER_SIZE || len > ACTRACK_ARENA_MAX_SIZE)
		goto out;
	a = (struct actrack_arena){ .base = img, .size = (__u32)len,
				    .writable = false };
	if (__actrack_snapshot_arena(&a, &s))
		goto out;
	ctl = ((const struct actrack_arena_header *)img)->reserved[0];
	have_pid = (ctl & 1) && s->nr_processes;
	if (have_pid)
		pid = s->processes[(ctl >> 8) % s->nr_processes].pid;
	switch ((ctl >> 1) & 3) {
	case 0:
		now = cli_now(s, &other_boot);	/* what the CLI does */
		break;
	case 1:
		now = 0;			/* everything is in the future */
		other_boot = ctl & 8;
		break;
	case 2:
		now = UINT64_MAX;
		other_boot = ctl & 8;
		break;
	default:
		now = s->header.create_mono_ns + (ctl >> 16);
		other_boot = ctl & 8;
		break;
	}
	run(dump_json, s, now, other_boot, have_pid, pid);
	run(cli_dump_trace, s, now, other_boot, have_pid, pid);
out:
	actrack_snapshot_free(s);
	free(img);
	return 0;
}
