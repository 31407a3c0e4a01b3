// SPDX-License-Identifier: MIT
/*
 * `actrack hangs --watch --journal`: one journal entry per hang episode
 * (a hung thread's wait), one more when it ends, none for an idle
 * program, at most --rate entries per window; `hangs --history` lists
 * them.  Real programs under `actrack run` on a file arena of their own.
 *
 * No journald is needed: in a mount namespace of its own the test mounts
 * a tmpfs on /run/systemd/journal and binds the datagram socket that
 * sd_journal_sendv() writes to (as monitor_journal.c does), reads the
 * entries, and for --history turns them into a journal file with
 * systemd-journal-remote (as cli_deaths.c does).
 *
 * Waits are polls for a condition with a long deadline.  "No further
 * entry" is checked over a stretch of several watch intervals: on a
 * loaded machine fewer rounds may run in it, which can only let a bug
 * through, never fail a correct watch.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "vm_util.h"	/* VM_UNDER_SANITIZER */
#include "snapshot_helpers.h"
#include "progs_util.h"
#include "journal_native.h"

#define JOURNAL_REMOTE	"/lib/systemd/systemd-journal-remote"
#define HANG_ID		"e73f0a2ca8714de883c2ccd49c3a6394"
#define END_ID		"8f7342c0e51541698eac2e95f7e640d0"
#define MAX_ENTRIES	16
#define DEADLINE_MS	(90 * 1000)
#define QUIET_MS	2500	/* "no further entry": > 5 rounds */
#define T0		1700000000ULL

FIXTURE(watch) {
	int sock;
	char prog[PATH_MAX], arena[256];
	pid_t job;		/* actrack run -- PROG */
	int job_out;
	pid_t watch;		/* actrack hangs --watch */
	uid_t job_uid;		/* not 0: the job runs as this uid, on the
				 * module's arena */
	struct entry *e[MAX_ENTRIES];
	int nr;
};

FIXTURE_SETUP(watch)
{
	const char *why;

	self->sock = -1;
	self->job = self->watch = 0;
	self->job_uid = 0;
	self->nr = 0;
	self->arena[0] = '\0';
#ifdef VM_UNDER_SANITIZER
	SKIP(return, "sanitizer build: its runtime cannot be preloaded into "
	     "an uninstrumented program");
#endif
	why = progs_path(self->prog, sizeof(self->prog), "abba");
	if (why)
		SKIP(return, "%s", why);
	if (geteuid() != 0)
		SKIP(return, "needs root (a mount namespace)");
	self->sock = journal_socket_bind();
	ASSERT_LE(0, self->sock);
	test_path(self->arena, sizeof(self->arena), "watch-arena");
}

static void stop_job(FIXTURE_DATA(watch) *self)
{
	if (self->job <= 0)
		return;
	kill(-self->job, SIGKILL);
	kill(self->job, SIGKILL);
	close(self->job_out);
	/* Reaped: a zombie would still look like a running process. */
	waitpid(self->job, NULL, 0);
	self->job = 0;
}

FIXTURE_TEARDOWN(watch)
{
	if (self->watch > 0) {
		kill(self->watch, SIGTERM);
		waitpid(self->watch, NULL, 0);
	}
	stop_job(self);
	if (self->sock >= 0)
		close(self->sock);
	for (int i = 0; i < self->nr; i++)
		free(self->e[i]);
	if (self->arena[0])
		unlink(self->arena);
}

#define SETUP_SKIPPED()							\
	do {								\
		if (_metadata->skip)					\
			return;						\
	} while (0)

/* `actrack run -- PROG MODE` on our arena, in its own process group;
 * return once it printed @line (before it blocks). */
static int start_job(FIXTURE_DATA(watch) *self, const char *prog,
		     const char *mode, const char *line)
{
	char buf[4096] = "", *args[] = { "actrack", "run", "--",
					 (char *)prog, (char *)mode, NULL };
	size_t n = 0;
	int out[2];

	if (pipe2(out, O_CLOEXEC))
		return -1;
	self->job = fork();
	if (self->job < 0)
		return -1;
	if (!self->job) {
		dup2(out[1], 1);
		setpgid(0, 0);
		if (self->job_uid) {
			if (setgroups(0, NULL) || setgid(self->job_uid) ||
			    setuid(self->job_uid))
				_exit(126);
		} else {
			setenv(ACTRACK_ENV_ARENA, self->arena, 1);
		}
		execv(cli_path(), args);
		_exit(127);
	}
	close(out[1]);
	self->job_out = out[0];
	while (!strstr(buf, line) && n + 1 < sizeof(buf)) {
		ssize_t r = read(out[0], buf + n, sizeof(buf) - n - 1);

		if (r <= 0)
			return -1;
		n += (size_t)r;
		buf[n] = '\0';
	}
	return strstr(buf, line) ? 0 : -1;
}

/* `actrack --arena ARENA hangs --watch --journal --every 200ms ...`;
 * with a job of another uid, on the module's arenas (no --arena). */
static int start_watch(FIXTURE_DATA(watch) *self, const char *extra)
{
	self->watch = fork();
	if (self->watch < 0)
		return -1;
	if (!self->watch) {
		char *args[] = { "actrack", "--arena", self->arena, "hangs",
				 "--watch", "--journal", "--every", "200ms",
				 (char *)extra, NULL };

		execv(cli_path(), self->job_uid ? args + 2 : args);
		_exit(127);
	}
	return 0;
}

/* Receive entries until @want have come (0: none expected) or @ms
 * passed; return how many came. */
static int receive(FIXTURE_DATA(watch) *self, int want, int ms)
{
	struct entry *e = NULL;
	int got = 0;

	while (ms > 0 && (!want || got < want)) {
		ssize_t n;

		if (!e)
			e = calloc(1, sizeof(*e));
		if (!e)
			return -1;
		n = journal_entry_recv(self->sock, e, 100);
		if (!n) {
			ms -= 100;
			continue;
		}
		if (n < 0 || self->nr == MAX_ENTRIES) {
			free(e);
			/* An error, or far too many entries. */
			return n < 0 ? -1 : got + 1000;
		}
		self->e[self->nr++] = e;
		e = NULL;
		got++;
	}
	free(e);
	return got;
}

static char *val(const struct entry *e, const char *name)
{
	static char v[8][64 * 1024];
	static int k;

	k = (k + 1) % 8;
	if (!field(e, name, v[k], sizeof(v[k])))
		snprintf(v[k], sizeof(v[k]), "(none)");
	return v[k];
}

/*
 * The ABBA deadlock's three start entries (from @from): the two threads
 * in the cycle (deadlock, each with the cycle) and the main thread that
 * joins one of them (hang, the joined thread its owner).  Sets @tids:
 * main, then the two in the cycle in the cycle's order.
 */
static void check_abba_starts(struct __test_metadata *_metadata,
			      FIXTURE_DATA(watch) *self, int from,
			      uint32_t tids[3])
{
	char want[256], pid[16];
	int nr_dead = 0;

	snprintf(pid, sizeof(pid), "%d", self->job);
	tids[0] = tids[1] = tids[2] = 0;
	for (int i = from; i < from + 3; i++) {
		const struct entry *e = self->e[i];

		EXPECT_STREQ(HANG_ID, val(e, "MESSAGE_ID"));
		EXPECT_STREQ("3", val(e, "PRIORITY"));
		EXPECT_STREQ("actrack", val(e, "SYSLOG_IDENTIFIER"));
		EXPECT_STREQ(pid, val(e, "ACTRACK_PID"));
		EXPECT_STREQ("abba", val(e, "ACTRACK_COMM"));
		EXPECT_STREQ("(none)", val(e, "ACTRACK_HANG_END"));
		/* The text of `actrack hangs`, the JSON of --json. */
		snprintf(want, sizeof(want), "thread %s 'abba' in process %s "
			 "(", val(e, "ACTRACK_TID"), pid);
		EXPECT_EQ(0, strncmp(val(e, "MESSAGE"), want, strlen(want)))
			TH_LOG("%s", val(e, "MESSAGE"));
		snprintf(want, sizeof(want), "{\"pid\":%s,\"start_ticks\":",
			 pid);
		EXPECT_EQ(0, strncmp(val(e, "ACTRACK_REPORT"), want,
				     strlen(want)))
			TH_LOG("%s", val(e, "ACTRACK_REPORT"));
		EXPECT_EQ(NULL, strchr(val(e, "ACTRACK_REPORT"), '\n'));
		if (!strcmp(val(e, "ACTRACK_VERDICT"), "hang")) {
			EXPECT_STREQ(pid, val(e, "ACTRACK_TID"));
			EXPECT_EQ(0, strncmp(val(e, "ACTRACK_WAIT"), "tid ",
					     4));
			EXPECT_STREQ("(none)", val(e, "ACTRACK_CYCLE"));
			tids[0] = (uint32_t)atoi(val(e, "ACTRACK_TID"));
			continue;
		}
		EXPECT_STREQ("deadlock", val(e, "ACTRACK_VERDICT"));
		EXPECT_EQ(0, strncmp(val(e, "ACTRACK_WAIT"), "lock 0x", 7));
		EXPECT_NE(NULL, strstr(val(e, "MESSAGE"), "\nDEADLOCK: "));
		if (!nr_dead++)
			sscanf(val(e, "ACTRACK_CYCLE"), "%u 'abba' -> %u",
			       &tids[1], &tids[2]);
	}
	EXPECT_EQ(2, nr_dead);
	EXPECT_EQ((uint32_t)self->job, tids[0]);
	ASSERT_NE(0, tids[1]);
	ASSERT_NE(0, tids[2]);
	snprintf(want, sizeof(want), "%u 'abba' -> %u 'abba' -> %u 'abba'",
		 tids[1], tids[2], tids[1]);
	for (int i = from; i < from + 3; i++) {
		const struct entry *e = self->e[i];
		uint32_t tid = (uint32_t)atoi(val(e, "ACTRACK_TID"));
		char owner[64];

		if (tid == tids[0])
			continue;
		EXPECT_TRUE(tid == tids[1] || tid == tids[2]);
		EXPECT_STREQ(want, val(e, "ACTRACK_CYCLE"));
		/* Each waits for the lock the other holds. */
		snprintf(owner, sizeof(owner), "%u 'abba' (process %d)",
			 tid == tids[1] ? tids[2] : tids[1], self->job);
		EXPECT_STREQ(owner, val(e, "ACTRACK_OWNER"));
	}
}

/* Entries @from.. are the ends of episodes @tids (@nr of them), in any
 * order: the process died. */
static void check_ends(struct __test_metadata *_metadata,
		       FIXTURE_DATA(watch) *self, int from, int nr,
		       const uint32_t *tids)
{
	char pid[16], want[128];
	unsigned int seen = 0;

	snprintf(pid, sizeof(pid), "%d", self->job);
	for (int i = from; i < from + nr; i++) {
		const struct entry *e = self->e[i];
		uint32_t tid = (uint32_t)atoi(val(e, "ACTRACK_TID"));

		EXPECT_STREQ(END_ID, val(e, "MESSAGE_ID"));
		EXPECT_STREQ("6", val(e, "PRIORITY"));
		EXPECT_STREQ(pid, val(e, "ACTRACK_PID"));
		EXPECT_STREQ("died", val(e, "ACTRACK_HANG_END"));
		EXPECT_STREQ("(none)", val(e, "ACTRACK_REPORT"));
		for (int k = 0; k < nr; k++)
			if (tid == tids[k])
				seen |= 1U << k;
		snprintf(want, sizeof(want), "thread %u 'abba' in process %s "
			 "(abba): the %s ended: the process no longer runs "
			 "(actrack deaths %s)", tid, pid,
			 val(e, "ACTRACK_VERDICT"), pid);
		if (i > from || strcmp(val(e, "ACTRACK_SUPPRESSED"), "1"))
			EXPECT_STREQ(want, val(e, "MESSAGE"));
	}
	EXPECT_EQ((1U << nr) - 1, seen);
}

TEST_F_TIMEOUT(watch, deadlock_one_entry_per_episode_and_its_end, 240)
{
	uint32_t tids[3];
	pid_t job;

	SETUP_SKIPPED();
	ASSERT_EQ(0, start_job(self, self->prog, "threads", "deadlocked"));
	ASSERT_EQ(0, start_watch(self, NULL));
	ASSERT_EQ(3, receive(self, 3, DEADLINE_MS));
	check_abba_starts(_metadata, self, 0, tids);
	/* Several rounds later: the same episodes, no new entry. */
	EXPECT_EQ(0, receive(self, 0, QUIET_MS));

	job = self->job;
	stop_job(self);
	self->job = job;	/* for the checks: the pid it had */
	ASSERT_EQ(3, receive(self, 3, DEADLINE_MS));
	check_ends(_metadata, self, 3, 3, tids);
	EXPECT_STREQ("(none)", val(self->e[3], "ACTRACK_SUPPRESSED"));
	EXPECT_EQ(0, receive(self, 0, QUIET_MS));
	self->job = 0;
}

/* --stacks: each start entry carries the thread's backtrace, and taking
 * it (a ptrace stop) neither restarts the waits nor starts new episodes
 * in the rounds after. */
TEST_F_TIMEOUT(watch, stacks_in_the_entries_and_no_new_episode, 240)
{
	uint32_t tids[3];

	SETUP_SKIPPED();
	ASSERT_EQ(0, start_job(self, self->prog, "threads", "deadlocked"));
	ASSERT_EQ(0, start_watch(self, "--stacks"));
	ASSERT_EQ(3, receive(self, 3, DEADLINE_MS));
	check_abba_starts(_metadata, self, 0, tids);
	for (int i = 0; i < 3; i++) {
		const char *msg = val(self->e[i], "MESSAGE");

		EXPECT_NE(NULL, strstr(msg, "\n    backtrace:\n      #0  0x"))
			TH_LOG("%s", msg);
		EXPECT_EQ(NULL, strstr(msg, "backtrace: none"));
		/* The lock or the join it is stuck in. */
		EXPECT_TRUE(strstr(msg, "pthread_mutex_lock") ||
			    strstr(msg, "pthread_join") ||
			    strstr(msg, "__pthread_clockjoin"))
			TH_LOG("%s", msg);
	}
	/* Several rounds later (the stacks were taken in the first): the
	 * same episodes, no new entry. */
	EXPECT_EQ(0, receive(self, 0, QUIET_MS));
}

/* With the module, the service's --all-users: a deadlock of uid 65534
 * (its own arena) is seen by root's watch only with it. */
TEST_F_TIMEOUT(watch, all_users_sees_another_uids_deadlock, 240)
{
	char *mine[] = { "actrack", "hangs", "--watch", "--journal", "--every",
			 "200ms", "--rounds", "10", NULL };
	uint32_t tids[3];
	struct run r;

	SETUP_SKIPPED();
	if (access("/dev/actrack", R_OK))
		SKIP(return, "no /dev/actrack (actrack.ko not loaded)");
	if (access(self->prog, X_OK) || access(cli_path(), X_OK))
		SKIP(return, "no programs to run");
	/* The module's arenas: not the file arena vmtest gives host
	 * tests (this process is the test's own: its children inherit). */
	unsetenv(ACTRACK_ENV_ARENA);
	self->job_uid = 65534;
	ASSERT_EQ(0, start_job(self, self->prog, "threads", "deadlocked"));
	/* Root's own arena only (it may have none: said on stderr):
	 * nothing, in 10 rounds. */
	ASSERT_EQ(0, run_cli(&r, NULL, mine));
	EXPECT_EQ(0, r.status);
	run_free(&r);
	EXPECT_EQ(0, receive(self, 0, 300));
	/* Every uid's: its three episodes. */
	ASSERT_EQ(0, start_watch(self, "--all-users"));
	ASSERT_EQ(3, receive(self, 3, DEADLINE_MS));
	check_abba_starts(_metadata, self, 0, tids);
	EXPECT_EQ(0, receive(self, 0, QUIET_MS));
}

TEST_F_TIMEOUT(watch, idle_program_has_no_entry, 240)
{
	char cases[PATH_MAX + 16];
	char *args[] = { "actrack", "--arena", self->arena, "hangs", "--watch",
			 "--journal", "--every", "200ms", "--rounds", "12",
			 NULL };
	struct run r;

	SETUP_SKIPPED();
	snprintf(cases, sizeof(cases), "%s", self->prog);
	strcpy(strrchr(cases, '/'), "/hang_cases");
	ASSERT_EQ(0, start_job(self, cases, "select", "ready"));
	/* 12 rounds, at least 200 ms apart: its sleep is past the 1 s
	 * threshold in the last ones. */
	ASSERT_EQ(0, run_cli(&r, NULL, args));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_STREQ("", r.out);
	run_free(&r);
	EXPECT_EQ(0, receive(self, 0, 300));
}

TEST_F_TIMEOUT(watch, rate_bound_counts_what_it_drops, 240)
{
	uint32_t tids[3], written[2];
	char *msg;
	pid_t job;

	SETUP_SKIPPED();
	ASSERT_EQ(0, start_job(self, self->prog, "threads", "deadlocked"));
	ASSERT_EQ(0, start_watch(self, "--rate=2/3s"));
	ASSERT_EQ(2, receive(self, 2, DEADLINE_MS));
	/* The third is dropped, not delayed: nothing in more than the
	 * window (the 3 s are measured from its entries, written before we
	 * received them). */
	EXPECT_EQ(0, receive(self, 0, 4000));
	for (int i = 0; i < 2; i++) {
		EXPECT_STREQ(HANG_ID, val(self->e[i], "MESSAGE_ID"));
		EXPECT_STREQ("(none)", val(self->e[i], "ACTRACK_SUPPRESSED"));
		written[i] = (uint32_t)atoi(val(self->e[i], "ACTRACK_TID"));
	}
	(void)tids;

	job = self->job;
	stop_job(self);
	self->job = job;
	/* The ends of the two written episodes; the first says what was
	 * dropped. */
	ASSERT_EQ(2, receive(self, 2, DEADLINE_MS));
	check_ends(_metadata, self, 2, 2, written);
	EXPECT_STREQ("1", val(self->e[2], "ACTRACK_SUPPRESSED"));
	EXPECT_STREQ("(none)", val(self->e[3], "ACTRACK_SUPPRESSED"));
	msg = val(self->e[2], "MESSAGE");
	EXPECT_NE(NULL, strstr(msg, " (actrack deaths "));
	EXPECT_NE(NULL, strstr(msg, ")\n(1 earlier entry not written: more "
				    "than 2 in 3.0 s)"))
		TH_LOG("%s", msg);
	EXPECT_EQ(0, receive(self, 0, QUIET_MS));
	self->job = 0;
}

/*
 * A read of a pipe only the program could write to: a long wait with owner
 * unknown, an episode with --unknown-is-hang.  A byte written through
 * /proc/PID/fd ends the read; the program reads again: the first episode
 * completed, and the new wait (a new start time) is a new episode.
 */
TEST_F_TIMEOUT(watch, completed_wait_ends_its_episode, 240)
{
	char cases[PATH_MAX + 16], path[64], want[256], pid[16];
	const struct entry *e;
	int fd;

	SETUP_SKIPPED();
	snprintf(cases, sizeof(cases), "%s", self->prog);
	strcpy(strrchr(cases, '/'), "/hang_cases");
	ASSERT_EQ(0, start_job(self, cases, "readpipe", "ready"));
	snprintf(pid, sizeof(pid), "%d", self->job);
	ASSERT_EQ(0, start_watch(self, "--unknown-is-hang"));
	ASSERT_EQ(1, receive(self, 1, DEADLINE_MS));
	e = self->e[0];
	EXPECT_STREQ(HANG_ID, val(e, "MESSAGE_ID"));
	EXPECT_STREQ(pid, val(e, "ACTRACK_PID"));
	EXPECT_STREQ(pid, val(e, "ACTRACK_TID"));
	EXPECT_STREQ("hang_cases", val(e, "ACTRACK_COMM"));
	EXPECT_STREQ("owner-unknown", val(e, "ACTRACK_VERDICT"));
	EXPECT_STREQ("(none)", val(e, "ACTRACK_OWNER"));
	EXPECT_STREQ("(none)", val(e, "ACTRACK_CYCLE"));
	EXPECT_EQ(0, receive(self, 0, QUIET_MS));

	/* pipe() gave it fds 4 and 5 (3 is the arena). */
	snprintf(path, sizeof(path), "/proc/%d/fd/5", self->job);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, write(fd, "x", 1));
	close(fd);
	ASSERT_EQ(2, receive(self, 2, DEADLINE_MS));
	e = self->e[1];
	EXPECT_STREQ(END_ID, val(e, "MESSAGE_ID"));
	EXPECT_STREQ("completed", val(e, "ACTRACK_HANG_END"));
	EXPECT_STREQ(val(self->e[0], "ACTRACK_WAIT_START_NS"),
		     val(e, "ACTRACK_WAIT_START_NS"));
	snprintf(want, sizeof(want), "thread %s 'hang_cases' in process %s "
		 "(hang_cases): the long wait ended: its wait for %s "
		 "completed (after at most ", pid, pid,
		 val(self->e[0], "ACTRACK_WAIT"));
	EXPECT_EQ(0, strncmp(val(e, "MESSAGE"), want, strlen(want)))
		TH_LOG("%s", val(e, "MESSAGE"));
	/* The next read, a new episode. */
	e = self->e[2];
	EXPECT_STREQ(HANG_ID, val(e, "MESSAGE_ID"));
	EXPECT_STREQ(pid, val(e, "ACTRACK_TID"));
	EXPECT_STRNE(val(self->e[0], "ACTRACK_WAIT_START_NS"),
		     val(e, "ACTRACK_WAIT_START_NS"));
	EXPECT_EQ(0, receive(self, 0, QUIET_MS));
}

/* The entries received, as Journal Export Format, made a journal file. */
static int write_journal(FIXTURE_DATA(watch) *self, const char journal[300])
{
	char export[320], out[320];
	char *args[] = { JOURNAL_REMOTE, out, export, NULL };
	struct run r = { 0 };
	FILE *f;
	int ret;

	snprintf(export, sizeof(export), "%s.export", journal);
	snprintf(out, sizeof(out), "--output=%s", journal);
	f = fopen(export, "w");
	if (!f)
		return -1;
	for (int i = 0; i < self->nr; i++) {
		fprintf(f, "__REALTIME_TIMESTAMP=%llu\n"
			"__MONOTONIC_TIMESTAMP=%d000000\n"
			"_BOOT_ID=0123456789abcdef0123456789abcdef\n",
			(T0 + 60 * (unsigned long long)i) * 1000000ULL, i + 1);
		fwrite(self->e[i]->buf, 1, self->e[i]->len, f);
		fputc('\n', f);
	}
	if (fclose(f))
		return -1;
	ret = run_program(&r, JOURNAL_REMOTE, NULL, args);
	if (!ret && r.status)
		ret = -1;
	run_free(&r);
	unlink(export);
	return ret;
}

TEST_F_TIMEOUT(watch, history_lists_the_entries, 240)
{
	char base[256], journal[300], file_opt[320], want[4096], line[256];
	char *args[] = { "actrack", "hangs", "--history", file_opt, NULL };
	char *since[] = { "actrack", "hangs", "--history", file_opt,
			  "--since", "@1700000120", NULL };
	uint32_t tids[3];
	struct run r;
	pid_t job;

	SETUP_SKIPPED();
	if (access(JOURNAL_REMOTE, X_OK))
		SKIP(return, "no %s", JOURNAL_REMOTE);
	ASSERT_EQ(0, start_job(self, self->prog, "threads", "deadlocked"));
	ASSERT_EQ(0, start_watch(self, NULL));
	ASSERT_EQ(3, receive(self, 3, DEADLINE_MS));
	check_abba_starts(_metadata, self, 0, tids);
	job = self->job;
	stop_job(self);
	self->job = job;
	ASSERT_EQ(3, receive(self, 3, DEADLINE_MS));
	self->job = 0;

	/* journal-remote wants a name that ends in .journal */
	test_path(base, sizeof(base), "watch");
	snprintf(journal, sizeof(journal), "%s.journal", base);
	ASSERT_EQ(0, write_journal(self, journal));
	snprintf(file_opt, sizeof(file_opt), "--file=%s", journal);
	snprintf(want, sizeof(want), "%-23s  %-9s %-7s %-7s %-14s %-15s %s\n",
		 "TIME", "EVENT", "PID", "TID", "VERDICT", "COMM", "WAIT");
	for (int i = 0; i < 6; i++) {
		const struct entry *e = self->e[i];
		time_t t = (time_t)(T0 + 60 * (unsigned int)i);
		struct tm tm;
		char when[32];

		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S.000", &tm);
		snprintf(line, sizeof(line),
			 "%-23s  %-9s %-7s %-7s %-14s %-15s %s\n", when,
			 i < 3 ? "hang" : "died", val(e, "ACTRACK_PID"),
			 val(e, "ACTRACK_TID"), val(e, "ACTRACK_VERDICT"),
			 "abba", val(e, "ACTRACK_WAIT"));
		strcat(want, line);
	}
	ASSERT_EQ(0, run_cli(&r, "TZ=UTC", args));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_STREQ("", r.err);
	EXPECT_STREQ(want, r.out);
	run_free(&r);

	/* --since: the last four (from the third minute). */
	ASSERT_EQ(0, run_cli(&r, "TZ=UTC", since));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(5, count_lines(r.out));
	run_free(&r);
	unlink(journal);
}

/* Before anything tracked has started there is no arena: said once, and
 * the watch goes on. */
TEST(missing_arena_said_once)
{
	char arena[256], want[320];
	char *args[] = { "actrack", "--arena", arena, "hangs", "--watch",
			 "--every", "100ms", "--rounds", "5", NULL };
	struct run r;

	test_path(arena, sizeof(arena), "watch-none");
	ASSERT_EQ(0, run_cli(&r, NULL, args));
	EXPECT_EQ(0, r.status);
	snprintf(want, sizeof(want), "actrack: %s: No such file or "
		 "directory\n", arena);
	EXPECT_STREQ(want, r.err);
	EXPECT_STREQ("", r.out);
	run_free(&r);
}

TEST(usage_errors)
{
	char *a[] = { "actrack", "hangs", "--every", "1s", NULL };
	char *b[] = { "actrack", "hangs", "--watch", "--rate", "0", NULL };
	char *c[] = { "actrack", "hangs", "--since", "today", NULL };
	char *d[] = { "actrack", "hangs", "--watch", "--json", NULL };
	char *e[] = { "actrack", "hangs", "--history", "--pid", "1", NULL };
	char *f[] = { "actrack", "hangs", "--all-users", NULL };
	char *g[] = { "actrack", "--arena", "/nonexistent", "hangs", "--watch",
		      "--all-users", NULL };
	char **all[] = { a, b, c, d, e, f, g };
	struct run r;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		ASSERT_EQ(0, run_cli(&r, NULL, all[i]));
		EXPECT_EQ(2, r.status) TH_LOG("%s", all[i][2]);
		EXPECT_STREQ("", r.out);
		run_free(&r);
	}
}

TEST_HARNESS_MAIN
