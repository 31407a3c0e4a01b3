/* SPDX-License-Identifier: MIT */
/*
 * What the tests that run real programs share: the unmodified programs
 * built beside the tests (build/selftests/progs/NAME, without actrack),
 * a loopback port for a server, and a started job (`actrack run`, its
 * stdin and stdout pipes).  Compiled once, in helpers/progs_util.c.
 */
#ifndef ACTRACK_PROGS_UTIL_H
#define ACTRACK_PROGS_UTIL_H

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

/*
 * progs/@name beside this test binary into @buf.
 * Return: NULL, or why it cannot be used (for a SKIP).
 */
const char *progs_path(char *buf, size_t len, const char *name);

/* A loopback port nothing listens on now (the kernel's pick for a bind
 * to 0), or -1. */
int free_port(void);

/*
 * Why `actrack run -- @prog...` is refused here (the CLI's exit 126 and
 * its message: a statically linked busybox /bin/sh in the VM, no preload
 * library beside the CLI in the kselftest layout), or NULL.  The CLI is
 * asked, so that its rules stay the only ones; the probe runs on an arena
 * that cannot exist, so it writes nothing anywhere.
 */
const char *run_refused(const char *prog, const char *arg);

/* A started program: its pid, our ends of its stdin and stdout. */
struct job {
	pid_t pid;
	int in, out;
};

/*
 * job_start() - run the CLI (cli_path(), snapshot_helpers.h) with @argv
 * (`actrack run -- PROG...`) in its own process group, so that
 * job_kill() gets its children too; stdin a pipe we hold, stdout and
 * stderr a pipe (or both the file @out_file); with @arena not NULL, that
 * is its $ACTRACK_ARENA.  Return: 0 or -1.
 */
int job_start(struct job *j, char *const argv[], const char *arena,
	      const char *out_file);

/*
 * job_read_until() - read @j's stdout until a whole line that starts with
 * @prefix has come; what was read is in @buf (@len bytes, NUL-ended; the
 * program's output from its start).  Return: it came (false: EOF, or
 * @len filled).
 */
bool job_read_until(struct job *j, const char *prefix, char *buf,
		    size_t len);

/* job_finish() - close our pipe ends and reap @j.  Return: its exit
 * status, 128 + the signal that killed it, or -1. */
int job_finish(struct job *j);

/* job_kill() - SIGKILL @j's process group and @j, and reap it (a zombie
 * would still look like a running process). */
void job_kill(struct job *j);

#endif /* ACTRACK_PROGS_UTIL_H */
