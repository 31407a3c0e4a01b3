/* SPDX-License-Identifier: MIT */
/*
 * A thread's real backtrace, whichever way it was obtained: a live thread
 * stopped with ptrace (stacks.c) or a stack the kernel copied as the
 * thread died (unwind.c).  One shape, one text and one JSON renderer.
 */
#ifndef ACTRACK_CLI_BACKTRACE_H
#define ACTRACK_CLI_BACKTRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "actrack.h"

/* Frames kept per thread; deeper stacks are cut and marked truncated. */
#define BT_MAX_FRAMES	64

struct symbolizer;
struct json;

struct bt_frame {
	uint64_t pc;
	bool activation;	/* pc is where it is, not a return address */
};

struct backtrace {
	uint32_t nr_frames;
	bool truncated;		/* deeper than BT_MAX_FRAMES */
	const char *error;	/* why no (or no more) frames, or NULL */
	const struct bt_frame *frames;
};

/* The address to symbolize: a return address is looked up at its call. */
uint64_t bt_lookup_pc(const struct bt_frame *f);

/*
 * bt_print() - "backtrace:" then "#0  0x... func+0x1c (file.c:42)" lines,
 * each after @indent, or one "backtrace: none (reason)" line.  The frames
 * are symbolized with the ELF objects @mods[0..@nr_mods).
 */
void bt_print(const struct backtrace *bt, struct symbolizer *sym, FILE *f,
	      const char *indent, const struct actrack_snap_module *mods,
	      uint32_t nr_mods);

/*
 * bt_json() - the value of a "stack" member: {"frames": [{"pc",
 * "activation", "symbol"}...], "truncated", "error"}
 * (docs/json-schema.json, $defs/stack).
 */
void bt_json(const struct backtrace *bt, struct symbolizer *sym,
	     struct json *j, const struct actrack_snap_module *mods,
	     uint32_t nr_mods);

#endif /* ACTRACK_CLI_BACKTRACE_H */
