/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the snapshot_* and cli_* tests:
 *  - writer children: a forked process that attaches to a file arena with
 *    the library's writer API, builds some state, reports ready and then
 *    stays alive (so its records are live) until the test kills it;
 *  - a hand-built arena (arena core API, fixed pids, times, addresses) for
 *    output that must compare byte for byte;
 *  - running the actrack CLI and capturing its output.
 * Compiled once, in helpers/snapshot_helpers.c, and linked into each test
 * that calls them.
 */
#ifndef ACTRACK_SNAPSHOT_HELPERS_H
#define ACTRACK_SNAPSHOT_HELPERS_H

#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "actrack.h"
#include "arena.h"

/* ---- paths ----------------------------------------------------------- */

/* $TMPDIR/actrack-@tag-PID (default /tmp) into @buf, unlinked. */
void test_path(char *buf, size_t len, const char *tag);

/* ---- writer children -------------------------------------------------- */

struct writer {
	pid_t pid;
	uint64_t start_ticks;
};

typedef void (*writer_fn)(void *arg);

/*
 * Fork a child that attaches to the file arena @path (@slots activity
 * slots, @flags ACTRACK_INIT_*), runs @fn and then sleeps until killed.
 * Returns 0 when the child has finished @fn, -1 if it died first.
 */
int writer_start(struct writer *w, const char *path, uint32_t slots,
		 uint32_t flags, writer_fn fn, void *arg);

/* SIGKILL the child and reap it. */
void writer_stop(struct writer *w);

const struct actrack_snap_process *
snap_find(const struct actrack_snapshot *s, uint32_t pid);

/* Thread @name of @p (its first, if several have it), or NULL. */
const struct actrack_snap_thread *
snap_thread_named(const struct actrack_snap_process *p, const char *name);

const struct actrack_value *
value_find(const struct actrack_value *v, uint32_t nr, const char *name);

/* ---- hand-built arenas ------------------------------------------------ */

struct build {
	struct actrack_arena a;
};

#define BUILD_CREATE_MONO	1000000000000ULL	/* 1000 s after boot */

/* A formatted arena of @size bytes on the heap (uid 1000, 100 Hz,
 * created at BUILD_CREATE_MONO).  Return 0 or -errno. */
int build_init(struct build *b, uint32_t size);
void build_free(struct build *b);

void *build_alloc(struct build *b, uint32_t type, uint32_t size,
		  uint32_t *ref);
void build_owner(struct build *b, struct actrack_owner *o, uint32_t pid,
		 uint64_t start_ticks, uint32_t tid);

/* @argv: NUL-separated, @argv_len bytes (e.g. "a\0b\0"). */
uint32_t build_process(struct build *b, uint32_t pid, uint64_t start_ticks,
		       uint32_t phase, uint32_t parent, uint64_t launch_ns,
		       const char *argv, uint32_t argv_len);
struct actrack_process *build_process_rec(struct build *b, uint32_t ref);

uint32_t build_thread(struct build *b, uint32_t pid, uint64_t start_ticks,
		      uint32_t tid, const char *name, uint32_t slots,
		      uint32_t depth, const struct actrack_activity *acts);
struct actrack_thread *build_thread_rec(struct build *b, uint32_t ref);

uint32_t build_user_data(struct build *b, uint32_t pid, uint64_t start_ticks,
			 uint32_t tid, uint32_t capacity);

/* Append one field in the layout of the ABI (header, name, value at the
 * next 8-byte boundary).  Return 0 or -ENOSPC. */
int build_field(struct build *b, uint32_t ref, uint8_t type,
		const char *name, const void *value, uint16_t size);

uint32_t build_log(struct build *b, uint32_t pid, uint64_t start_ticks,
		   uint32_t capacity);

/* Message number head++ into slot n % capacity, as the library does. */
void build_log_msg(struct build *b, uint32_t ref, uint32_t tid,
		   uint64_t time_ns, const char *text);

uint32_t build_module(struct build *b, uint32_t pid, uint64_t start_ticks,
		      uint64_t base, uint64_t size, const uint8_t *build_id,
		      uint8_t build_id_size, const char *path);

/* Return 0 or -errno (-EIO for a short write). */
int write_file(const char *path, const void *buf, size_t len);
int build_write(struct build *b, const char *path);

/* Whole file into a malloc'ed buffer (NUL-terminated); NULL on error. */
char *read_file(const char *path, size_t *len);

/* ---- running the CLI ---------------------------------------------------- */

/* $ACTRACK_CLI, else ../actrack next to this test binary (build/selftests/),
 * else actrack beside it: the kselftest layout, where the tests' own
 * directory is the one called actrack (selftests/actrack/Makefile). */
const char *cli_path(void);

struct run {
	int status;		/* exit code, or 128 + signal */
	char *out, *err;	/* NUL-terminated */
};

/* In a test: show the CLI's output @r when a check has failed. */
#define LOG_ON_FAILURE(r)						\
	do {								\
		if (ACTRACK_TEST_FAILED(_metadata))					\
			TH_LOG("exit %d\nstdout:\n%sstderr:\n%s",	\
			       (r)->status, (r)->out, (r)->err);	\
	} while (0)

/* Everything up to EOF into a malloc'ed NUL-terminated buffer, or NULL. */
char *slurp_fd(int fd);

/*
 * Run the program at @path with @argv (NULL-terminated) and optional extra
 * environment "NAME=value" (@env, may be NULL).  Outputs go to temporary
 * files so that a big dump cannot deadlock a pipe.  Return 0 or -1;
 * run_free() @r after either.
 */
int run_program(struct run *r, const char *path, const char *env,
		char *const argv[]);

/* run_program() as @uid (groups dropped; (uid_t)-1: as we are; the child
 * exits 126 if it cannot change). */
int run_program_as(struct run *r, const char *path, const char *env,
		   uid_t uid, char *const argv[]);

/* The CLI (argv[0] ignored). */
int run_cli(struct run *r, const char *env, char *const argv[]);

void run_free(struct run *r);

int count_lines(const char *s);

#endif /* ACTRACK_SNAPSHOT_HELPERS_H */
