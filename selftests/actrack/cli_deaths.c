// SPDX-License-Identifier: MIT
/*
 * actrack deaths reads death reports back from the journal: entries with
 * actrack's MESSAGE_ID and the fields `actrack monitor --journal` writes.
 * The host has no journald to write to, so the entries are written as
 * Journal Export Format and turned into a journal file by
 * systemd-journal-remote (what a fleet collector runs); the booted-system
 * test (scripts/systemtest) checks the real monitor -> journald path.
 */
#include <stdint.h>
#include <sys/stat.h>

#include "snapshot_helpers.h"
#include "test_harness.h"

#define JOURNAL_REMOTE	"/lib/systemd/systemd-journal-remote"
#define MESSAGE_ID	"5c4a1e0d3f7b4a6e9d2c8b1f0a3e6d47"
#define T0		1700000000ULL	/* 2023-11-14 22:13:20 UTC */

/* One field: NAME=value, or the binary form for values with newlines. */
static void put_field(FILE *f, const char *name, const char *val)
{
	if (strchr(val, '\n')) {
		uint64_t n = strlen(val);	/* little endian, as x86 */

		fprintf(f, "%s\n", name);
		fwrite(&n, sizeof(n), 1, f);
		fprintf(f, "%s\n", val);
	} else {
		fprintf(f, "%s=%s\n", name, val);
	}
}

struct entry {
	uint64_t secs;
	const char *message_id;
	const char *pid, *uid, *comm, *cmdline, *phase;
	const char *signal, *signal_name, *core, *exit_code;
	const char *message, *report;
	const char *oom;		/* ACTRACK_OOM, or NULL */
	const char *killer_comm;	/* ACTRACK_KILLER_COMM, or NULL */
	const char *killer;		/* ACTRACK_KILLER, or NULL */
};

static const struct entry entries[] = {
	{ T0, MESSAGE_ID, "100", "1000", "server", "/usr/bin/server --port 80",
	  "main-loop-started", "11", "SIGSEGV", "1", NULL,
	  "pid 100 (/usr/bin/server --port 80) killed by SIGSEGV [core dumped] "
	  "after phase main-loop-started\n  uid 1000, start tick 5",
	  "{\"pid\": 100, \"signal\": 11}", NULL, NULL, "kernel" },
	/* Someone else's entry: never listed. */
	{ T0 + 60, "00000000000000000000000000000000", "100", "0", "other",
	  "other", "none", NULL, NULL, NULL, "0", "unrelated", "{}", NULL,
	  NULL, NULL },
	/* systemd-oomd's SIGKILL: named by its command name. */
	{ T0 + 600, MESSAGE_ID, "310", "1000", "cache", "cache", "serving",
	  "9", "SIGKILL", "0", NULL, "pid 310 (cache) killed by SIGKILL",
	  "{\"pid\": 310, \"signal\": 9}", NULL, "systemd-oomd",
	  "process" },
	/* raise(SIGTERM); then a sender outside the monitor's pid ns. */
	{ T0 + 1200, MESSAGE_ID, "320", "1000", "quitter", "quitter", "done",
	  "15", "SIGTERM", "0", NULL, "pid 320 (quitter) killed by SIGTERM",
	  "{\"pid\": 320, \"signal\": 15}", NULL, NULL, "self" },
	{ T0 + 1500, MESSAGE_ID, "330", "1000", "guest", "guest", "idle",
	  "9", "SIGKILL", "0", NULL, "pid 330 (guest) killed by SIGKILL",
	  "{\"pid\": 330, \"signal\": 9}", NULL, NULL, "process" },
	{ T0 + 3600, MESSAGE_ID, "200", "0", "batch", "batch\x1b[2J -n 3",
	  "initialized", NULL, NULL, NULL, "3",
	  "pid 200 (batch\\x1b[2J -n 3) exited with code 3 after phase "
	  "initialized", "{\"pid\": 200, \"exit_code\": 3}", NULL, NULL,
	  NULL },
	/* pid 100 again (reused), later. */
	{ T0 + 7200, MESSAGE_ID, "100", "1000", "worker", "worker",
	  "starting", "9", "SIGKILL", "0", NULL,
	  "pid 100 (worker) killed by SIGKILL after phase starting\n"
	  "  uid 1000\n  thread 100 \"main\", depth 0: idle",
	  "{\"pid\": 100, \"signal\": 9}", "1", "grim-reaper", "process" },
};

#define NR_ENTRIES	(sizeof(entries) / sizeof(entries[0]))

static int write_journal(const char *dir, char *journal, size_t len)
{
	char export[300];
	struct run r = { 0 };
	FILE *f;
	int ret;

	snprintf(export, sizeof(export), "%s/deaths.export", dir);
	snprintf(journal, len, "%s/deaths.journal", dir);
	f = fopen(export, "w");
	if (!f)
		return -1;
	for (size_t i = 0; i < NR_ENTRIES; i++) {
		const struct entry *e = &entries[i];

		fprintf(f, "__REALTIME_TIMESTAMP=%llu\n",
			(unsigned long long)e->secs * 1000000ULL);
		fprintf(f, "__MONOTONIC_TIMESTAMP=%llu\n",
			(unsigned long long)(e->secs - T0 + 1) * 1000000ULL);
		put_field(f, "_BOOT_ID", "0123456789abcdef0123456789abcdef");
		put_field(f, "_HOSTNAME", "web-7");
		put_field(f, "MESSAGE_ID", e->message_id);
		put_field(f, "MESSAGE", e->message);
		put_field(f, "ACTRACK_PID", e->pid);
		put_field(f, "ACTRACK_UID", e->uid);
		put_field(f, "ACTRACK_COMM", e->comm);
		put_field(f, "ACTRACK_CMDLINE", e->cmdline);
		put_field(f, "ACTRACK_PHASE", e->phase);
		if (e->signal) {
			put_field(f, "ACTRACK_SIGNAL", e->signal);
			put_field(f, "ACTRACK_SIGNAL_NAME", e->signal_name);
			put_field(f, "ACTRACK_CORE_DUMPED", e->core);
		} else {
			put_field(f, "ACTRACK_EXIT_CODE", e->exit_code);
		}
		if (e->oom)
			put_field(f, "ACTRACK_OOM", e->oom);
		if (e->killer_comm)
			put_field(f, "ACTRACK_KILLER_COMM", e->killer_comm);
		if (e->killer)
			put_field(f, "ACTRACK_KILLER", e->killer);
		put_field(f, "ACTRACK_REPORT", e->report);
		fputc('\n', f);
	}
	if (fclose(f))
		return -1;
	{
		char out[320];
		char *argv[] = { JOURNAL_REMOTE, out, export, NULL };

		snprintf(out, sizeof(out), "--output=%s", journal);
		ret = run_program(&r, JOURNAL_REMOTE, NULL, argv);
	}
	if (!ret && r.status)
		ret = -1;
	run_free(&r);
	unlink(export);
	return ret;
}

FIXTURE(deaths) {
	char dir[256], journal[300], file_opt[320];
	struct run r;
};

FIXTURE_SETUP(deaths)
{
	memset(&self->r, 0, sizeof(self->r));
	self->dir[0] = '\0';
	if (access(JOURNAL_REMOTE, X_OK))
		SKIP(return, "no %s (systemd-journal-remote)",
		     JOURNAL_REMOTE);
	test_path(self->dir, sizeof(self->dir), "deaths");
	ASSERT_EQ(0, mkdir(self->dir, 0700));
	ASSERT_EQ(0, write_journal(self->dir, self->journal,
				   sizeof(self->journal)));
	snprintf(self->file_opt, sizeof(self->file_opt), "--file=%s",
		 self->journal);
}

FIXTURE_TEARDOWN(deaths)
{
	run_free(&self->r);
	if (self->dir[0]) {
		unlink(self->journal);
		rmdir(self->dir);
	}
}

/* The 6.1 harness runs the body even after a SKIP() in the setup. */
#define SETUP_SKIPPED()							\
	do {								\
		if (_metadata->skip)					\
			return;						\
	} while (0)

/* Times are printed in local time: UTC for the test. */
#define DEATHS(...)							\
	do {								\
		char *__argv[] = { "actrack", "deaths", __VA_ARGS__,	\
				   NULL };				\
		run_free(&self->r);					\
		ASSERT_EQ(0, run_cli(&self->r, "TZ=UTC", __argv));	\
	} while (0)

TEST_F(deaths, list_all_oldest_first)
{
	SETUP_SKIPPED();
	DEATHS(self->file_opt);
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_STREQ("", self->r.err);
	EXPECT_STREQ(
"TIME                     PID    UID  DEATH         KILLER          PHASE              COMMAND\n"
"2023-11-14 22:13:20.000  100    1000 SIGSEGV+core  kernel          main-loop-started  /usr/bin/server --port 80\n"
"2023-11-14 22:23:20.000  310    1000 SIGKILL       systemd-oomd    serving            cache\n"
"2023-11-14 22:33:20.000  320    1000 SIGTERM       itself          done               quitter\n"
"2023-11-14 22:38:20.000  330    1000 SIGKILL       outside-ns      idle               guest\n"
"2023-11-14 23:13:20.000  200    0    exit 3        -               initialized        batch\\x1b[2J -n 3\n"
"2023-11-15 00:13:20.000  100    1000 SIGKILL       OOM killer      starting           worker\n",
		     self->r.out);
	/* "list" is the default verb. */
	{
		char *first = strdup(self->r.out);

		DEATHS("list", self->file_opt);
		EXPECT_STREQ(first, self->r.out);
		free(first);
	}
}

TEST_F(deaths, select_by_pid_comm_and_time)
{
	SETUP_SKIPPED();
	DEATHS(self->file_opt, "100");
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(3, count_lines(self->r.out));
	EXPECT_EQ(NULL, strstr(self->r.out, "batch"));

	DEATHS(self->file_opt, "batch");
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(2, count_lines(self->r.out));
	EXPECT_NE(NULL, strstr(self->r.out, "  200  "));

	DEATHS(self->file_opt, "--since", "@1700001800");
	EXPECT_EQ(3, count_lines(self->r.out));
	EXPECT_EQ(NULL, strstr(self->r.out, "server"));
	DEATHS(self->file_opt, "--since", "2023-11-14 23:13:20", "--until",
	       "2023-11-15 00:00");
	EXPECT_EQ(2, count_lines(self->r.out));
	EXPECT_NE(NULL, strstr(self->r.out, "batch"));

	/* Nothing matches: exit 1, one line. */
	DEATHS(self->file_opt, "nosuch");
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("actrack: deaths: no death reports of nosuch in the "
		     "journal\n", self->r.err);
	DEATHS(self->file_opt, "300");
	EXPECT_EQ(1, self->r.status);
}

/* --oom: the OOM killer's victims only, with the other selections. */
TEST_F(deaths, select_oom_kills)
{
	SETUP_SKIPPED();
	DEATHS(self->file_opt, "--oom");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_STREQ(
"TIME                     PID    UID  DEATH         KILLER          PHASE              COMMAND\n"
"2023-11-15 00:13:20.000  100    1000 SIGKILL       OOM killer      starting           worker\n",
		     self->r.out);
	DEATHS(self->file_opt, "--oom", "100");
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(2, count_lines(self->r.out));
	DEATHS(self->file_opt, "--oom", "server");
	EXPECT_EQ(1, self->r.status);
}

TEST_F(deaths, select_by_sender)
{
	SETUP_SKIPPED();
	DEATHS(self->file_opt, "--killed-by", "grim-reaper");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_STREQ(
"TIME                     PID    UID  DEATH         KILLER          PHASE              COMMAND\n"
"2023-11-15 00:13:20.000  100    1000 SIGKILL       OOM killer      starting           worker\n",
		     self->r.out);
	/* A field match, not a prefix: "grim" names no sender. */
	DEATHS(self->file_opt, "--killed-by", "grim");
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("actrack: deaths: no death reports in the journal\n",
		     self->r.err);
	DEATHS(self->file_opt, "--killed-by", "sixteen-bytes-xx");
	EXPECT_EQ(2, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "--killed-by: not a command "
			       "name (1 to 15 bytes): 'sixteen-bytes-xx'"));
}

TEST_F(deaths, info_is_the_newest_report_whole)
{
	SETUP_SKIPPED();
	DEATHS("info", self->file_opt, "100");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_STREQ("logged 2023-11-15 00:13:20.000 on web-7\n"
		     "pid 100 (worker) killed by SIGKILL after phase starting\n"
		     "  uid 1000\n"
		     "  thread 100 \"main\", depth 0: idle\n", self->r.out);
	DEATHS("info", "--json", self->file_opt, "100");
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("{\"pid\": 100, \"signal\": 9}\n", self->r.out);
	DEATHS("info", self->file_opt, "--until", "@1700003600", "100");
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "SIGSEGV"));
	DEATHS("info", self->file_opt, "7");
	EXPECT_EQ(1, self->r.status);
}

TEST_F(deaths, json_list_and_directory)
{
	SETUP_SKIPPED();
	DEATHS("--json", "--directory", self->dir);
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_STREQ("{\"pid\": 100, \"signal\": 11}\n"
		     "{\"pid\": 310, \"signal\": 9}\n"
		     "{\"pid\": 320, \"signal\": 15}\n"
		     "{\"pid\": 330, \"signal\": 9}\n"
		     "{\"pid\": 200, \"exit_code\": 3}\n"
		     "{\"pid\": 100, \"signal\": 9}\n", self->r.out);
}

TEST_F(deaths, usage_errors)
{
	SETUP_SKIPPED();
	DEATHS("--since", "yesterday-ish");
	EXPECT_EQ(2, self->r.status);
	EXPECT_EQ(1, count_lines(self->r.err));
	DEATHS("--directory", self->dir, self->file_opt);
	EXPECT_EQ(2, self->r.status);
	DEATHS(self->file_opt, "1", "2");
	EXPECT_EQ(2, self->r.status);
	DEATHS(self->file_opt, "PID=1");
	EXPECT_EQ(2, self->r.status);
	DEATHS("--directory", "/nonexistent-actrack-dir");
	EXPECT_EQ(1, self->r.status);
}

TEST_HARNESS_MAIN
