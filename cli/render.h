/* SPDX-License-Identifier: MIT */
/*
 * One report shape for the CLI: what a process and its threads were doing,
 * rendered as text and as JSON by one set of functions, whether it comes
 * from a snapshot of the arena (dump, hangs) or from a death report of
 * actrack.ko (monitor).
 *
 * The shape is the library's snapshot process (struct actrack_snap_process
 * with its threads, activities and user data).  A death report is that
 * process plus exit fields (struct actrack_death embeds it), so that the
 * renderers below never know which source they print.  What a death
 * report cannot know (parent pid, launch
 * time, thread start times, logs) is marked by struct render's @death and
 * rendered as null/left out.
 *
 * The JSON dialect (docs/json-schema.json): activities outermost first,
 * "level" counting from 1 at the outermost, as the text's "[1]"; "type" is
 * the activity's name and "type_id" its raw byte; "phase" a name and
 * "phase_id" the number; integers that can exceed 2^53 are strings.
 */
#ifndef ACTRACK_CLI_RENDER_H
#define ACTRACK_CLI_RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "actrack.h"

struct json;
struct stacks;
struct symbolizer;

/* How to render: shared by every call for one document. */
struct render {
	struct symbolizer *sym;		/* NULL: addresses stay raw */
	const struct stacks *stacks;	/* --stacks backtraces, else NULL */
	/* The moment the report describes (snapshot time, --now, save time,
	 * or the exit): activity and process ages end here. */
	uint64_t now;
	bool death;			/* the process came from a death report */
	/* That report: its threads' stacks at death give their backtraces
	 * (unwind.c), where --stacks gives live ones. */
	const struct actrack_death *report;
};

/* Schema names of the JSON documents (docs/json-schema.json). */
#define RENDER_DUMP_SCHEMA	"actrack-dump/3"
#define RENDER_HANGS_SCHEMA	"actrack-hangs/3"
#define RENDER_DEATH_SCHEMA	"actrack-death/1"

/* ---- text ---------------------------------------------------------------- */

/*
 * render_thread_text() - thread @t of process @p:
 *   "  thread 100 'main' depth 6 (+2 not stored)"
 *   "    fatal signal SIGSEGV (11) code 1 addr 0x10 pc 0x... in f+0x10"
 *   "    [2] lock-acquire lock 0x5000, for 12.0 s, origin 0x... in f+0x3c"
 *   "         name = value"            (its user data)
 *   "    backtrace: ..."               (r->stacks, or its stack at death)
 * Activities innermost first, levels counted from the outermost (1).
 */
void render_thread_text(const struct render *r, FILE *f,
			const struct actrack_snap_process *p,
			const struct actrack_snap_thread *t);

/*
 * render_process_text() - everything below a process's header line: its
 * annotations, modules, log and threads (render_thread_text()).
 */
void render_process_text(const struct render *r, FILE *f,
			 const struct actrack_snap_process *p);

/* " in lock_both+0x10e (demo.c:40)" after a raw @pc, or nothing when only
 * the raw address is known (or r->sym is NULL). */
void render_symbol_text(const struct render *r, FILE *f,
			const struct actrack_snap_process *p, uint64_t pc);

/* ---- JSON ---------------------------------------------------------------- */

/*
 * json_symbol() - the "symbol" object of @pc among the objects
 * @mods[0..@nr_mods) ({"text", "function", ...}), or null when @pc is 0.
 */
void json_symbol(struct json *j, struct symbolizer *sym,
		 const struct actrack_snap_module *mods, uint32_t nr_mods,
		 uint64_t pc);

/* Activity @i (outermost 0) of @t: {"level": i + 1, "type", "type_id",
 * ..., "symbol", "values"} ($defs/activity). */
void render_activity_json(const struct render *r, struct json *j,
			  const struct actrack_snap_process *p,
			  const struct actrack_snap_thread *t, uint32_t i);
/* Thread @t: {"tid", "name", ..., "activities"[, "stack"]} ($defs/thread);
 * "stack" with r->stacks, or for a death report (null: none copied). */
void render_thread_json(const struct render *r, struct json *j,
			const struct actrack_snap_process *p,
			const struct actrack_snap_thread *t);
/* {"path", "base", "size", "vaddr", "build_id"} ($defs/module). */
void render_module_json(struct json *j, const struct actrack_snap_module *m);
/* Process @p with its threads ($defs/process). */
void render_process_json(const struct render *r, struct json *j,
			 const struct actrack_snap_process *p);

/* ---- death reports ------------------------------------------------------- */

/*
 * render_death_text() - a death report as text: a headline ("pid 4242
 * (server) killed by SIGKILL after phase ..."), when and whose, warnings,
 * then render_process_text().  @source is "live" or "recent" (said when
 * not live).  @sym may be NULL.  Return: 0.
 */
int render_death_text(FILE *f, struct symbolizer *sym,
		      const struct actrack_death *d, const char *source);

/*
 * render_death_json() - a death report as one JSON object
 * ($defs/death, schema "actrack-death/1"): the exit fields and the process
 * ($defs/process), written with @j, which the caller set up and finishes.
 */
int render_death_json(struct json *j, struct symbolizer *sym,
		      const struct actrack_death *d, const char *source);

/*
 * render_real_time() - CLOCK_REALTIME instant @real_ns as the one way
 * every command writes a wall-clock time: "2026-12-03 18:00:01.250" in
 * local time, or with @utc_iso "2026-12-03T18:00:01.250Z".  Return:
 * false (and "unknown" in @buf) for 0 or a time that cannot be told.
 */
bool render_real_time(uint64_t real_ns, bool utc_iso, char *buf, size_t len);

/*
 * render_killer_kind() - the name of a death's sender kind
 * (ACTRACK_KILLER_*): "process", "self" or "kernel", as in the JSON.
 */
const char *render_killer_kind(uint32_t kind);

#endif /* ACTRACK_CLI_RENDER_H */
