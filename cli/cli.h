/* SPDX-License-Identifier: MIT */
/* The actrack command-line tool: commands and shared helpers. */
#ifndef ACTRACK_CLI_H
#define ACTRACK_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "actrack.h"


/* Exit codes: 0 success, 1 failure, 2 bad usage, 3 hangs found. */
#define EXIT_USAGE	2
#define EXIT_HANGS	3	/* hangs: hung threads found */
#define EXIT_TIMEOUT	3	/* monitor: timed out before --count reports */

/* Options given before the command. */
struct cli_globals {
	const char *arena;	/* --arena FILE, or NULL: the default arena */
	bool previous_boot;	/* COMMAND --previous-boot: the module's
				 * image of the boot before (persist=) */
	bool have_now;		/* --now NS / $ACTRACK_NOW_NS (tests) */
	uint64_t now_ns;
};
extern struct cli_globals cli;

/* Commands: argv[0] is the command name; return the exit code. */
int cmd_dump(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_save(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_hangs(int argc, char **argv);	/* cli/cmd_hangs.c */
int cmd_top(int argc, char **argv);	/* cli/cmd_top.c */
int cmd_collect(int argc, char **argv);	/* cli/cmd_collect.c */
int cmd_run(int argc, char **argv);	/* cli/cmd_run.c */

/*
 * cli_help_page() - the --help text of command @name ("dump"), or of
 * actrack itself for "": the man page (man/actrack-dump.1, man/actrack.1)
 * as plain text, made at build time by cli/man2help.awk, so that each page
 * is written once.  NULL if there is no such page.
 */
const char *cli_help_page(const char *name);

/* ---- cli/format.c ---- */

/* "actrack: <what>: <reason of -err>" on stderr. */
void cli_error(const char *what, int err);
/* "actrack: <printf>" on stderr. */
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: the message, a hint, exit code EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "actrack: ARENA: no process PID in the arena" (dump --pid, top --pid):
 * returns exit code 1. */
int cli_no_such_pid(uint32_t pid);

/* Human description of the arena the command reads (for messages). */
const char *cli_arena_name(void);
/*
 * Take the snapshot of the selected arena; on failure print one line that
 * names the arena and the reason (bad magic, truncated, ...).
 * Return: 0 or -errno (already reported).
 */
int cli_snapshot(struct actrack_snapshot **out);
/* Explain a failure to read @path as an arena (reads a few header bytes
 * to tell "bad magic" from "truncated"). */
const char *cli_arena_strerror(const char *path, int err, char *buf,
			       size_t len);

/*
 * "Now" on the arena's clock (CLOCK_MONOTONIC): --now/$ACTRACK_NOW_NS, else
 * the snapshot's time, which for a saved image is when it was saved.  An
 * arena from another boot sets *@other_boot; if it is an image from before
 * images recorded their save time, its newest timestamp stands for now.
 */
uint64_t cli_now(const struct actrack_snapshot *s, bool *other_boot);
/* The arena was written during this boot (its boot id is ours and known):
 * only then do its pids and start times name processes of this machine. */
bool cli_same_boot(const struct actrack_snapshot *s);
/* Process @p (pid and start time) is still running (meaningful only when
 * cli_same_boot()). */
/* @p's pid is of another pid namespace than ours: /proc cannot tell
 * whether it runs, and the pid names someone else here. */
bool cli_process_foreign(const struct actrack_snap_process *p);
/* @p (pid, start time) still runs; never for a foreign process. */
bool cli_process_running(const struct actrack_snap_process *p);
/* @s is a saved image (actrack save) that says when it was saved: its ages
 * are measured from then, and it never changes. */
bool cli_saved_image(const struct actrack_snapshot *s);
/* The "note: ..." line that says what ages are relative to, for a saved
 * image or an arena of another boot (nothing for a live arena). */
void cli_print_time_note(FILE *f, const struct actrack_snapshot *s,
			 bool other_boot);
/* The "note: ..." line that says @s was corrupt: records that failed the
 * validating walk were skipped (nothing for a sound arena). */
void cli_print_corrupt_note(FILE *f, const struct actrack_snapshot *s);

/* Durations: "350 ms", "12.3 s", "5m07s", "3h05m", "2d04h". */
char *cli_duration(char *buf, size_t len, uint64_t ns);
/* "12.3 s ago", or "1.2 s later" for a time after @now. */
char *cli_age(char *buf, size_t len, uint64_t now, uint64_t t);
/* "-12.345 s" relative to @now, millisecond precision. */
char *cli_offset(char *buf, size_t len, uint64_t now, uint64_t t);

/* Print @s (at most @max bytes, stops at NUL) with C escapes for
 * anything that is not printable ASCII: arena strings are untrusted and
 * must not reach a terminal raw. */
void cli_print_escaped(FILE *f, const char *s, size_t max);
/* The same escapes into @buf (NUL-terminated), at most @width bytes of
 * output (0: as many as @len allows), never cutting an escape sequence.
 * Return: true if @s did not fit (cut). */
bool cli_escape(char *buf, size_t len, const char *s, size_t max,
		size_t width);
/* "lock 0x7ffd...", "tid 1234", "fd 3 (4096 bytes)", ... */
char *cli_activity_object(char *buf, size_t len,
			  const struct actrack_activity *a);
/* name = value, typed: "str", 0a0b (hex), true, 'c', -5, 7,
 * ref 0xADDR (N bytes). */
void cli_print_value(FILE *f, const struct actrack_value *v);
/* @nr values, one a line, each after @indent (dump, monitor). */
void cli_print_values(FILE *f, const char *indent,
		      const struct actrack_value *v, uint32_t nr);
/* "SIGSEGV" or "signal 77". */
const char *cli_signal_name(int sig, char *buf, size_t len);

/*
 * What @render writes to @f, as a string (malloc()ed, trailing newlines
 * cut; its length in *@len unless @len is NULL), for the journal's
 * fields.  NULL when out of memory.
 */
char *cli_render_string(void (*render)(FILE *f, const void *arg),
			const void *arg, size_t *len);
/*
 * The same, whole: nothing cut, byte for byte what a FILE would hold
 * (the text report a minidump of monitor --minidump-dir embeds).
 */
char *cli_render_whole(void (*render)(FILE *f, const void *arg),
		       const void *arg, size_t *len);

/*
 * The usage error of getopt_long()'s @opt ('?' or ':'; the option string
 * starts with ':', after a '+' if any, so that a missing argument is ':'):
 * "CMD: -x: missing argument" or "CMD: unknown option '-x'".  Return:
 * EXIT_USAGE.
 */
int cli_getopt_error(const char *cmd, int opt, char **argv);

/*
 * Options of a command (@cmd) that has none but --help, and
 * --previous-boot if @previous_boot (cli.previous_boot; not with --arena):
 * prints its help page for --help (returns 0), complains about anything
 * else (returns EXIT_USAGE), checks that min..max positional arguments
 * follow.  Return: -1 to go on (the arguments start at argv[optind]),
 * else the exit code.
 */
int cli_simple_args(int argc, char **argv, const char *cmd, int min_args,
		    int max_args, bool previous_boot);

/* Strict number parsing: whole string, no sign for unsigned.  0/-EINVAL. */
int cli_parse_u64(const char *s, uint64_t *out);
/* "500ms", "2s", "1.5m", "1h", "3" (seconds) -> ns.  Return 0/-EINVAL. */
int cli_parse_duration(const char *s, uint64_t *out);

#endif /* ACTRACK_CLI_H */
