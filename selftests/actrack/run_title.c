// SPDX-License-Identifier: MIT
/*
 * Issue 23 item 9a: a program that sets its process title after it
 * started (PostgreSQL's "postgres: 15/main: checkpointer", nginx's
 * "nginx: worker process") is shown with that title by the live views.
 *
 * The tracking library copies the command line into the process record
 * once, at attach, before the program sets its title; there is no call to
 * interpose when a program rewrites its argument memory.  This test
 * fails until the readers show /proc/PID/cmdline for a live process (same
 * pid, same start time) instead of the record's copy.
 *
 * File arena on the host ($ACTRACK_ARENA).
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "vm_util.h"	/* the harness, VM_UNDER_SANITIZER */
#include "snapshot_helpers.h"
#include "progs_util.h"

#define TITLE	"run_title: worker ready"

TEST(ps_shows_the_current_title)
{
	char prog[PATH_MAX], arena[256], path[64], buf[256];
	const char *why;
	char *argv[] = { "actrack", "run", "--", prog,
			 "a-long-enough-argument-for-the-title", NULL };
	char *ps[] = { "actrack", "ps", NULL };
	int in[2], out[2], fd;
	struct run r;
	ssize_t n;
	pid_t pid;

#ifdef VM_UNDER_SANITIZER
	SKIP(return, "sanitizer build: its runtime cannot be preloaded into "
	     "an uninstrumented program");
#endif
	why = progs_path(prog, sizeof(prog), "run_title");
	if (why)
		SKIP(return, "progs/run_title: %s", why);
	snprintf(arena, sizeof(arena), "%s/actrack-run-title-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	unlink(arena);
	setenv(ACTRACK_ENV_ARENA, arena, 1);
	ASSERT_EQ(0, pipe2(in, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(out, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(cli_path(), argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	n = read(out[0], buf, sizeof(buf) - 1);
	ASSERT_EQ(7, n);
	buf[n] = 0;
	ASSERT_STREQ("titled\n", buf);
	/* The program did set it: the kernel shows it. */
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_LT(0, n);
	buf[n] = 0;
	ASSERT_STREQ(TITLE, buf);
	ASSERT_EQ(0, run_cli(&r, NULL, ps));
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, TITLE)) TH_LOG("actrack ps:\n%s", r.out);
	run_free(&r);
	close(in[1]);
	close(out[0]);
	EXPECT_EQ(pid, waitpid(pid, NULL, 0));
	unlink(arena);
}

TEST_HARNESS_MAIN
