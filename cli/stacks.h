/* SPDX-License-Identifier: MIT */
/*
 * Real backtraces of live threads (hangs --stacks, dump --stacks): each
 * wanted thread is stopped with ptrace, unwound with elfutils' libdwfl
 * (DWARF CFI, so code built without frame pointers unwinds), and let go,
 * the way eu-stack does it.  The frames are symbolized by symbolize.c, the
 * one symbolizer of the CLI, from the modules the live process has mapped.
 */
#ifndef ACTRACK_CLI_STACKS_H
#define ACTRACK_CLI_STACKS_H

#include <stdint.h>
#include <stdio.h>
#include "actrack.h"

#include "backtrace.h"

#define STACKS_MAX_FRAMES	BT_MAX_FRAMES
/* Threads stopped per command; the rest are reported as not collected. */
#define STACKS_MAX_THREADS	1024

struct stacks;
struct symbolizer;
struct json;

/*
 * stacks_new() - a collection for the processes of snapshot @s (which
 * must outlive it); @cmd prefixes the messages on stderr ("hangs").
 * Return: NULL on ENOMEM.
 */
struct stacks *stacks_new(const struct actrack_snapshot *s, const char *cmd);
void stacks_free(struct stacks *st);

/*
 * stacks_want() - ask for the backtrace of thread @tid of process @p (a
 * process of the snapshot).  Return: 0 or -ENOMEM.
 */
int stacks_want(struct stacks *st, const struct actrack_snap_process *p,
		uint32_t tid);

/*
 * stacks_collect() - stop, unwind and resume every wanted thread, one at
 * a time.  A thread that cannot be stopped (ptrace not permitted, gone,
 * not the process the arena names) gets no frames and a reason, and one
 * line on stderr says why; nothing here is fatal.  Every stopped thread is
 * let go before this returns, and nothing is ever injected into it, so a
 * killed actrack leaves it running too (PTRACE_SEIZE, not ATTACH).
 */
void stacks_collect(struct stacks *st);

/*
 * stacks_print() - the backtrace of thread @tid of @p as text lines, each
 * after @indent: "backtrace:" then "#0  0x... func+0x1c (file.c:42)", or
 * one "backtrace: none (reason)" line.  Nothing if it was not wanted.
 */
void stacks_print(const struct stacks *st, struct symbolizer *sym, FILE *f,
		  const char *indent, const struct actrack_snap_process *p,
		  uint32_t tid);

/*
 * stacks_json() - the same as the value of a "stack" member:
 * {"frames": [{"pc", "activation", "symbol"}...], "truncated", "error"}
 * (docs/json-schema.json, $defs/stack).
 */
void stacks_json(const struct stacks *st, struct symbolizer *sym,
		 struct json *j, const struct actrack_snap_process *p,
		 uint32_t tid);

#endif /* ACTRACK_CLI_STACKS_H */
