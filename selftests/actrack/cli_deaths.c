// SPDX-License-Identifier: MIT
/*
 * actrack deaths reads death reports back from the journal: entries with
 * actrack's MESSAGE_ID and the fields `actrack monitor --journal` writes.
 * The host has no journald to write to, so the entries are written as
 * Journal Export Format and turned into a journal file by
 * systemd-journal-remote (what a fleet collector runs:
 * journal_export_to_file() of journal_native.h); the booted-system
 * test (scripts/systemtest) checks the real monitor -> journald path.
 */
#include <stdint.h>
#include <sys/stat.h>

#include "journal_native.h"
#include "minidump_read.h"
#include "snapshot_helpers.h"
#include "test_harness.h"

#define JOURNAL_REMOTE	"/lib/systemd/systemd-journal-remote"
#define MESSAGE_ID	"5c4a1e0d3f7b4a6e9d2c8b1f0a3e6d47"
#define T0		1700000000ULL	/* 2023-11-14 22:13:20 UTC */
#define BOOT_ID_NOW	"0123456789abcdef0123456789abcdef"

/* A death report as the fields of its journal entry. */
struct death {
	uint64_t secs;
	const char *message_id;
	const char *pid, *uid, *comm, *cmdline, *phase;
	const char *signal, *signal_name, *core, *exit_code;
	const char *message, *report;
	const char *oom;		/* ACTRACK_OOM, or NULL */
	const char *killer_comm;	/* ACTRACK_KILLER_COMM, or NULL */
	const char *seq;		/* ACTRACK_SEQ, or NULL */
	const char *killer;		/* ACTRACK_KILLER, or NULL */
};

/* What monitor --journal-stacks adds to a death's entry. */
struct death_stacks {
	const char *kernel;		/* ACTRACK_KERNEL, or NULL */
	const uint8_t *stacks;		/* ACTRACK_STACKS (binary), or NULL */
	size_t stacks_len;
};

static const struct death listed_deaths[] = {
	{ T0, MESSAGE_ID, "100", "1000", "server", "/usr/bin/server --port 80",
	  "main-loop-started", "11", "SIGSEGV", "1", NULL,
	  "pid 100 (/usr/bin/server --port 80) killed by SIGSEGV [core dumped] "
	  "after phase main-loop-started\n  uid 1000, start tick 5",
	  "{\"pid\": 100, \"signal\": 11}", NULL, NULL, NULL, "kernel" },
	/* Someone else's entry: never listed. */
	{ T0 + 60, "00000000000000000000000000000000", "100", "0", "other",
	  "other", "none", NULL, NULL, NULL, "0", "unrelated", "{}", NULL,
	  NULL, NULL, NULL },
	/* systemd-oomd's SIGKILL: named by its command name. */
	{ T0 + 600, MESSAGE_ID, "310", "1000", "cache", "cache", "serving",
	  "9", "SIGKILL", "0", NULL, "pid 310 (cache) killed by SIGKILL",
	  "{\"pid\": 310, \"signal\": 9}", NULL, "systemd-oomd",
	  NULL, "process" },
	/* raise(SIGTERM); then a sender outside the monitor's pid ns. */
	{ T0 + 1200, MESSAGE_ID, "320", "1000", "quitter", "quitter", "done",
	  "15", "SIGTERM", "0", NULL, "pid 320 (quitter) killed by SIGTERM",
	  "{\"pid\": 320, \"signal\": 15}", NULL, NULL, NULL,
	  "self" },
	{ T0 + 1500, MESSAGE_ID, "330", "1000", "guest", "guest", "idle",
	  "9", "SIGKILL", "0", NULL, "pid 330 (guest) killed by SIGKILL",
	  "{\"pid\": 330, \"signal\": 9}", NULL, NULL, NULL,
	  "process" },
	{ T0 + 3600, MESSAGE_ID, "200", "0", "batch", "batch\x1b[2J -n 3",
	  "initialized", NULL, NULL, NULL, "3",
	  "pid 200 (batch\\x1b[2J -n 3) exited with code 3 after phase "
	  "initialized", "{\"pid\": 200, \"exit_code\": 3}", NULL, NULL,
	  NULL, NULL },
	/* pid 100 again (reused), later. */
	{ T0 + 7200, MESSAGE_ID, "100", "1000", "worker", "worker",
	  "starting", "9", "SIGKILL", "0", NULL,
	  "pid 100 (worker) killed by SIGKILL after phase starting\n"
	  "  uid 1000\n  thread 100 \"main\", depth 0: idle",
	  "{\"pid\": 100, \"signal\": 9}", "1", "grim-reaper", NULL,
	  "process" },
};

#define NR_LISTED	(sizeof(listed_deaths) / sizeof(listed_deaths[0]))

/*
 * The fields of @d's journal entry (after the times and the boot id) in
 * @e, with what monitor --journal-stacks adds (@x; may be NULL).
 * Return: 0, or -1 (@e full).
 */
static int death_fields(struct entry *e, const struct death *d,
			const struct death_stacks *x)
{
	int ret = 0;

	e->len = 0;
	ret |= entry_add_str(e, "_HOSTNAME", "web-7");
	ret |= entry_add_str(e, "MESSAGE_ID", d->message_id);
	ret |= entry_add_str(e, "MESSAGE", d->message);
	ret |= entry_add_str(e, "ACTRACK_PID", d->pid);
	ret |= entry_add_str(e, "ACTRACK_UID", d->uid);
	ret |= entry_add_str(e, "ACTRACK_COMM", d->comm);
	ret |= entry_add_str(e, "ACTRACK_CMDLINE", d->cmdline);
	ret |= entry_add_str(e, "ACTRACK_PHASE", d->phase);
	if (d->signal) {
		ret |= entry_add_str(e, "ACTRACK_SIGNAL", d->signal);
		ret |= entry_add_str(e, "ACTRACK_SIGNAL_NAME", d->signal_name);
		ret |= entry_add_str(e, "ACTRACK_CORE_DUMPED", d->core);
	} else {
		ret |= entry_add_str(e, "ACTRACK_EXIT_CODE", d->exit_code);
	}
	if (d->oom)
		ret |= entry_add_str(e, "ACTRACK_OOM", d->oom);
	if (d->killer_comm)
		ret |= entry_add_str(e, "ACTRACK_KILLER_COMM", d->killer_comm);
	if (d->seq)
		ret |= entry_add_str(e, "ACTRACK_SEQ", d->seq);
	if (d->killer)
		ret |= entry_add_str(e, "ACTRACK_KILLER", d->killer);
	if (d->report)
		ret |= entry_add_str(e, "ACTRACK_REPORT", d->report);
	if (x && x->kernel)
		ret |= entry_add_str(e, "ACTRACK_KERNEL", x->kernel);
	if (x && x->stacks)
		ret |= entry_add(e, "ACTRACK_STACKS", x->stacks,
				 x->stacks_len);
	return ret;
}

/*
 * The @nr deaths of @list (@extra: NULL, or one per death) as the journal
 * file deaths.journal of @dir, its path in @journal.  Return: 0 or -1.
 */
static int write_journal(const char *dir, const struct death *list,
			 const struct death_stacks *extra, size_t nr,
			 char *journal, size_t len)
{
	struct export_entry *x = calloc(nr, sizeof(*x));
	struct entry *e = calloc(nr, sizeof(*e));
	int ret = x && e ? 0 : -1;

	snprintf(journal, len, "%s/deaths.journal", dir);
	for (size_t i = 0; !ret && i < nr; i++) {
		x[i] = (struct export_entry){
			.realtime_us = list[i].secs * 1000000ULL,
			.monotonic_us = (list[i].secs - T0 + 1) * 1000000ULL,
			.boot_id = BOOT_ID_NOW,
			.body = &e[i],
		};
		ret = death_fields(&e[i], &list[i], extra ? &extra[i] : NULL);
	}
	if (!ret)
		ret = journal_export_to_file(x, nr, JOURNAL_REMOTE, journal);
	free(x);
	free(e);
	return ret;
}

/* A fixture's end: @dir and all in it removed ("": none made). */
static void remove_dir(const char *dir)
{
	char cmd[600];

	if (!dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

/*
 * Every fixture's start: skipped without systemd-journal-remote; else
 * @dir, the test's directory @name, made, with @journal in it, the
 * journal file of the @nr entries of @list (@extra: write_journal()'s).
 */
static void setup_journal(struct __test_metadata *_metadata,
			  const char *name, char *dir, size_t dir_len,
			  const struct death *list,
			  const struct death_stacks *extra, size_t nr,
			  char *journal, size_t len)
{
	if (access(JOURNAL_REMOTE, X_OK))
		SKIP(return, "no %s (systemd-journal-remote)",
		     JOURNAL_REMOTE);
	test_path(dir, dir_len, name);
	ASSERT_EQ(0, mkdir(dir, 0700));
	ASSERT_EQ(0, write_journal(dir, list, extra, nr, journal, len));
}

FIXTURE(deaths) {
	char dir[256], journal[300], file_opt[320];
	struct run r;
};

FIXTURE_SETUP(deaths)
{
	memset(&self->r, 0, sizeof(self->r));
	self->dir[0] = '\0';
	setup_journal(_metadata, "deaths", self->dir, sizeof(self->dir),
		      listed_deaths, NULL, NR_LISTED, self->journal,
		      sizeof(self->journal));
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

/* ---- deaths export --minidump ------------------------------------------- */

/* A report as monitor --json writes it (the members export reads). */
#define REPORT_300							\
	"{\"schema\": \"actrack-death/1\", \"source\": \"live\", "	\
	"\"seq\": 42, \"uid\": 1000, \"exit_code\": null, "		\
	"\"signal\": 11, \"signal_name\": \"SIGSEGV\", "		\
	"\"core_dumped\": false, \"flags\": 0, \"process\": {"		\
	"\"pid\": 300, \"start_ticks\": 5, \"cmdline\": "		\
	"\"/usr/bin/server --port 80\", \"values\": [], \"modules\": [" \
	"{\"path\": \"/usr/bin/server\", \"base\": 93824992231424, "	\
	"\"size\": 6144, \"vaddr\": 4096, \"build_id\": "		\
	"\"0123456789abcdef0123456789abcdef01234567\"}], "		\
	"\"logs\": [], \"threads\": ["					\
	"{\"tid\": 300, \"name\": \"server\", \"depth\": 1, "		\
	"\"fatal\": {\"signo\": 11, \"signal\": \"SIGSEGV\", "		\
	"\"code\": 1, \"addr\": 16, \"pc\": 93824992235520, "		\
	"\"symbol\": null}, \"activities\": [{\"type\": \"task\", "	\
	"\"values\": [{\"k\": [1, {\"x\": \"y\\u00e9\"}]}]}], "	\
	"\"stack\": {\"frames\": [{\"pc\": 1}], \"error\": \"\"}}, "	\
	"{\"tid\": 301, \"name\": \"w\\\"orker\", \"depth\": 0, "	\
	"\"fatal\": null, \"activities\": []}]}}"

static const struct death exported_deaths[] = {
	{ T0, MESSAGE_ID, "300", "1000", "server", "/usr/bin/server --port 80",
	  "serving", "11", "SIGSEGV", "0", NULL,
	  "pid 300 (/usr/bin/server --port 80) killed by SIGSEGV",
	  REPORT_300, NULL, NULL, "42", NULL },
	/* A report of no thread record: its main thread is listed. */
	{ T0 + 60, MESSAGE_ID, "301", "0", "batch", "batch -n 3", "none", "9",
	  "SIGKILL", "0", NULL, "pid 301 (batch -n 3) killed by SIGKILL",
	  "{\"seq\": 7, \"uid\": 0, \"signal\": 9, \"flags\": 0, "
	  "\"process\": {\"pid\": 301, \"modules\": [], \"threads\": []}}",
	  NULL, NULL, "7", NULL },
	/* Not a report: skipped, said, and the exit status is 1. */
	{ T0 + 120, MESSAGE_ID, "302", "0", "bad", "bad", "none", NULL, NULL,
	  NULL, "1", "pid 302 (bad) exited with code 1", "{\"process\": [",
	  NULL, NULL, "8", NULL },
	/* No report at all: the same. */
	{ T0 + 180, MESSAGE_ID, "303", "0", "bare", "bare", "none", NULL, NULL,
	  NULL, "1", "pid 303 (bare) exited with code 1", NULL, NULL, NULL,
	  "9", NULL },
};

#define NR_EXPORTED	(sizeof(exported_deaths) / sizeof(exported_deaths[0]))
#define THREADLESS_WHY	"the journal entry keeps no registers or stack " \
			"bytes (monitor --journal-stacks keeps them)"

FIXTURE(export) {
	char dir[256], journal[300], file_opt[320], out[300];
	struct run r;
};

FIXTURE_SETUP(export)
{
	memset(&self->r, 0, sizeof(self->r));
	self->dir[0] = '\0';
	setup_journal(_metadata, "export", self->dir, sizeof(self->dir),
		      exported_deaths, NULL, NR_EXPORTED, self->journal,
		      sizeof(self->journal));
	if (_metadata->skip)
		return;
	snprintf(self->file_opt, sizeof(self->file_opt), "--file=%s",
		 self->journal);
	snprintf(self->out, sizeof(self->out), "%s/dumps", self->dir);
	ASSERT_EQ(0, mkdir(self->out, 0700));
}

FIXTURE_TEARDOWN(export)
{
	run_free(&self->r);
	remove_dir(self->dir);
}

/* File @name of the output directory, whole, in *@buf (free it). */
static size_t read_dump(const char *dir, const char *name, uint8_t **buf,
			struct stat *st)
{
	char path[400];
	size_t n = 0;
	FILE *f;

	*buf = NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (stat(path, st))
		return 0;
	f = fopen(path, "r");
	if (!f)
		return 0;
	*buf = malloc(st->st_size + 1);
	if (*buf)
		n = fread(*buf, 1, st->st_size, f);
	fclose(f);
	return n;
}

/* The names in @dir, sorted, one a line. */
static void list_dir(const char *dir, char *out, size_t len)
{
	char cmd[400];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "ls -A '%s'", dir);
	p = popen(cmd, "r");
	n = p ? fread(out, 1, len - 1, p) : 0;
	out[n] = '\0';
	if (p)
		pclose(p);
}

TEST_F(export, one_death_by_pid_holds_its_threads_modules_and_signal)
{
	char want[400], names[400], val[256];
	uint32_t rva, size, ctx;
	struct stat st;
	uint8_t *buf;
	size_t len;

	SETUP_SKIPPED();
	DEATHS("export", "--minidump", "-o", self->out, self->file_opt,
	       "300");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_STREQ("", self->r.err);
	snprintf(want, sizeof(want), "%s/actrack-1000-42-300.dmp\n",
		 self->out);
	EXPECT_STREQ(want, self->r.out);
	/* Only the file: no temporary left behind. */
	list_dir(self->out, names, sizeof(names));
	EXPECT_STREQ("actrack-1000-42-300.dmp\n", names);

	len = read_dump(self->out, "actrack-1000-42-300.dmp", &buf, &st);
	ASSERT_NE(NULL, buf);
	EXPECT_EQ(0640, st.st_mode & 07777);
	EXPECT_EQ(T0, md_u32(buf + 20));	/* the entry's time */
	/* Both threads, without registers or stack: the journal has none. */
	ASSERT_TRUE(md_stream(buf, len, 3, &rva, &size));
	ASSERT_EQ(4 + 2 * 48, size);
	EXPECT_EQ(2, md_u32(buf + rva));
	EXPECT_EQ(300, md_u32(buf + rva + 4));
	EXPECT_EQ(301, md_u32(buf + rva + 4 + 48));
	EXPECT_EQ(0, md_u32(buf + rva + 4 + 32));	/* no stack bytes */
	ctx = md_u32(buf + rva + 4 + 44);
	ASSERT_LT(ctx + 0x34, len);
	EXPECT_EQ(0x00100000, md_u32(buf + ctx + 0x30));
	/* The module: first page, size, and its build id as code id. */
	ASSERT_TRUE(md_stream(buf, len, 4, &rva, &size));
	EXPECT_EQ(1, md_u32(buf + rva));
	EXPECT_EQ(0x55555000, md_u32(buf + rva + 4));
	EXPECT_EQ(0x5555, md_u32(buf + rva + 8));
	EXPECT_EQ(0x1800, md_u32(buf + rva + 12));
	EXPECT_EQ(24, md_u32(buf + rva + 4 + 76));
	rva = md_u32(buf + rva + 4 + 80);
	ASSERT_LT(rva + 24, len);
	EXPECT_EQ(0, memcmp(buf + rva, "LEpB\x01\x23\x45\x67\x89\xab", 10));
	/* SIGSEGV, SEGV_MAPERR at 0x10 in thread 300. */
	ASSERT_TRUE(md_stream(buf, len, 6, &rva, &size));
	EXPECT_EQ(300, md_u32(buf + rva));
	EXPECT_EQ(11, md_u32(buf + rva + 8));
	EXPECT_EQ(1, md_u32(buf + rva + 12));
	EXPECT_EQ(16, md_u32(buf + rva + 24));
	/* The maps, from the module list. */
	ASSERT_TRUE(md_stream(buf, len, 0x47670009U, &rva, &size));
	snprintf(want, sizeof(want), "555555555000-555555557000 r-xp "
		 "00000000 00:00 0 /usr/bin/server\n");
	EXPECT_EQ(strlen(want), size);
	EXPECT_EQ(0, memcmp(buf + rva, want, size));
	ASSERT_TRUE(md_stream(buf, len, 0x47670006U, &rva, &size));
	EXPECT_EQ(0, memcmp(buf + rva, "/usr/bin/server --port 80", size));
	/* The annotations: the text report, why no thread has a stack. */
	ASSERT_TRUE(md_annotation(buf, len, "actrack.report", val,
				  sizeof(val)));
	EXPECT_STREQ("pid 300 (/usr/bin/server --port 80) killed by SIGSEGV",
		     val);
	ASSERT_TRUE(md_annotation(buf, len, "actrack.thread.301.no_stack", val,
				  sizeof(val)));
	EXPECT_STREQ(THREADLESS_WHY, val);
	ASSERT_TRUE(md_annotation(buf, len, "actrack.pid", val, sizeof(val)));
	EXPECT_STREQ("300", val);
	free(buf);
}

TEST_F(export, every_death_of_the_range_and_a_bad_entry_said)
{
	char want[400], names[400], val[256];
	uint32_t rva, size;
	struct stat st;
	uint8_t *buf;
	size_t len;

	SETUP_SKIPPED();
	DEATHS("export", "--minidump", "--output", self->out, self->file_opt,
	       "--since", "@1700000060");
	EXPECT_EQ(1, self->r.status);
	snprintf(want, sizeof(want), "%s/actrack-0-7-301.dmp\n", self->out);
	EXPECT_STREQ(want, self->r.out);
	EXPECT_STREQ("actrack: deaths: export: pid 302: ACTRACK_REPORT is "
		     "not a death report: skipped\n"
		     "actrack: deaths: export: pid 303: ACTRACK_REPORT is "
		     "not a death report: skipped\n", self->r.err);
	list_dir(self->out, names, sizeof(names));
	EXPECT_STREQ("actrack-0-7-301.dmp\n", names);
	/* No thread record: the main thread, alone, without a stack. */
	len = read_dump(self->out, "actrack-0-7-301.dmp", &buf, &st);
	ASSERT_NE(NULL, buf);
	ASSERT_TRUE(md_stream(buf, len, 3, &rva, &size));
	EXPECT_EQ(1, md_u32(buf + rva));
	EXPECT_EQ(301, md_u32(buf + rva + 4));
	ASSERT_TRUE(md_stream(buf, len, 6, &rva, &size));
	EXPECT_EQ(9, md_u32(buf + rva + 8));
	ASSERT_TRUE(md_annotation(buf, len, "actrack.thread.301.no_stack", val,
				  sizeof(val)));
	EXPECT_STREQ(THREADLESS_WHY, val);
	free(buf);
}

/* ---- export of an entry with its stacks (monitor --journal-stacks) ---- */

/* The little-endian word of @bytes bytes at @p. */
static void le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

#define STACK_SP	0x7ffc12345000ULL
#define STACK_BYTES	"frame bytes \x00\x01\x02\xff"	/* 16 with the NUL */

/*
 * ACTRACK_STACKS as actrack-deaths(1) lays it out, written here by hand
 * (not by the CLI's encoder): version 1, 17 registers, one thread (300),
 * register r = 0x1000 + r, its 16 stack bytes from STACK_SP.  Returns
 * its length.
 */
static size_t stacks_blob(uint8_t *p)
{
	size_t at = 12;

	le(p, 1, 4);
	le(p + 4, 17, 4);
	le(p + 8, 1, 4);
	le(p + at, 300, 4);
	le(p + at + 4, 0, 4);
	le(p + at + 8, STACK_SP, 8);
	for (int r = 0; r < 17; r++)
		le(p + at + 16 + 8 * r, 0x1000 + r, 8);
	le(p + at + 152, 16, 4);
	memcpy(p + at + 156, STACK_BYTES, 16);
	return at + 156 + 16;
}

/* The text report of pid 300 as the monitor renders it: thread blocks
 * (one of a thread the report does not have), activities innermost
 * first, an activity's values, a backtrace. */
#define MESSAGE_300							\
	"pid 300 (/usr/bin/server --port 80) killed by SIGSEGV\n"	\
	"  modules:\n"							\
	"    [1] not an activity: a module line\n"			\
	"  thread 300 'server' depth 2\n"				\
	"    fatal signal SIGSEGV (11) code 1 addr 0x10 pc 0x1\n"	\
	"    [2] lock-acquire lock 0x5000, for 2.0 s, origin 0x1 in "	\
	"f+0x3c (a.c:40)\n"						\
	"         path = \"/index.html\"\n"				\
	"         n = 7\n"						\
	"    [1] task-run task 4711, for 3.0 s, origin 0x2\n"		\
	"    backtrace:\n"						\
	"         x = not a value: after the backtrace\n"		\
	"  thread 999 'ghost' depth 1\n"				\
	"    [1] task-run task 1, origin 0x3\n"			\
	"  thread 301 'w\"orker' depth 0"

FIXTURE(export_stacks) {
	char dir[256], journal[300], file_opt[320], out[300];
	struct run r;
};

FIXTURE_SETUP(export_stacks)
{
	static uint8_t blob[256], bad[256];
	struct death e[2] = {
		{ T0, MESSAGE_ID, "300", "1000", "server",
		  "/usr/bin/server --port 80", "serving", "11", "SIGSEGV", "0",
		  NULL, MESSAGE_300, REPORT_300, NULL, NULL, "42", NULL },
		/* The same with its last stack byte missing: refused. */
		{ T0 + 60, MESSAGE_ID, "300", "1000", "server",
		  "/usr/bin/server --port 80", "serving", "11", "SIGSEGV", "0",
		  NULL, "pid 300 killed by SIGSEGV", REPORT_300, NULL, NULL,
		  "43", NULL },
	};
	struct death_stacks x[2] = {
		{ "6.12.9-actrack-test", blob, 0 }, { NULL, bad, 0 },
	};

	memset(&self->r, 0, sizeof(self->r));
	self->dir[0] = '\0';
	x[0].stacks_len = stacks_blob(blob);
	x[1].stacks_len = stacks_blob(bad) - 1;
	setup_journal(_metadata, "export_stacks", self->dir,
		      sizeof(self->dir), e, x, 2, self->journal,
		      sizeof(self->journal));
	if (_metadata->skip)
		return;
	snprintf(self->file_opt, sizeof(self->file_opt), "--file=%s",
		 self->journal);
	snprintf(self->out, sizeof(self->out), "%s/dumps", self->dir);
	ASSERT_EQ(0, mkdir(self->out, 0700));
}

FIXTURE_TEARDOWN(export_stacks)
{
	run_free(&self->r);
	remove_dir(self->dir);
}

/* The UTF-16LE MINIDUMP_STRING at @rva of @buf as ASCII in @out. */
static bool md_ascii(const uint8_t *buf, size_t len, uint32_t rva, char *out,
		     size_t out_len)
{
	uint32_t n;

	if (rva > len || len - rva < 4)
		return false;
	n = md_u32(buf + rva) / 2;
	if (n >= out_len || (len - rva - 4) / 2 < n)
		return false;
	for (uint32_t i = 0; i < n; i++)
		out[i] = (char)buf[rva + 4 + 2 * i];
	out[n] = '\0';
	return true;
}

TEST_F(export_stacks, registers_stack_bytes_and_kernel_release)
{
	char want[400], val[256];
	uint32_t rva, size, ctx, mem;
	struct stat st;
	uint8_t *buf;
	size_t len;

	SETUP_SKIPPED();
	DEATHS("export", "--minidump", "-o", self->out, self->file_opt,
	       "--until", "@1700000060");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_STREQ("", self->r.err);
	snprintf(want, sizeof(want), "%s/actrack-1000-42-300.dmp\n",
		 self->out);
	EXPECT_STREQ(want, self->r.out);
	len = read_dump(self->out, "actrack-1000-42-300.dmp", &buf, &st);
	ASSERT_NE(NULL, buf);
	ASSERT_TRUE(md_check(buf, len));
	/* Thread 300: its registers and its 16 bytes from its sp. */
	ASSERT_TRUE(md_stream(buf, len, 3, &rva, &size));
	ASSERT_EQ(2, md_u32(buf + rva));
	EXPECT_EQ(300, md_u32(buf + rva + 4));
	EXPECT_EQ((uint32_t)STACK_SP, md_u32(buf + rva + 4 + 24));
	EXPECT_EQ(STACK_SP >> 32, md_u32(buf + rva + 4 + 28));
	EXPECT_EQ(16, md_u32(buf + rva + 4 + 32));
	mem = md_u32(buf + rva + 4 + 36);
	ASSERT_LE(mem + 16, len);
	EXPECT_EQ(0, memcmp(buf + mem, STACK_BYTES, 16));
	ctx = md_u32(buf + rva + 4 + 44);
	ASSERT_LE(ctx + 0x100, len);
	EXPECT_EQ(0x00100003, md_u32(buf + ctx + 0x30));
	EXPECT_EQ(0x1000, md_u32(buf + ctx + 0x78));	/* rax */
	EXPECT_EQ(0x1003, md_u32(buf + ctx + 0x90));	/* rbx */
	EXPECT_EQ(0x1007, md_u32(buf + ctx + 0x98));	/* rsp */
	EXPECT_EQ(0x100f, md_u32(buf + ctx + 0xf0));	/* r15 */
	EXPECT_EQ(0x1010, md_u32(buf + ctx + 0xf8));	/* rip */
	/* Thread 301 has no stack in the entry: the report's reason. */
	EXPECT_EQ(301, md_u32(buf + rva + 4 + 48));
	EXPECT_EQ(0, md_u32(buf + rva + 4 + 48 + 32));
	ASSERT_TRUE(md_annotation(buf, len, "actrack.thread.301.no_stack", val,
				  sizeof(val)));
	EXPECT_STREQ("not captured: the report holds no stack of this "
		     "thread", val);
	EXPECT_FALSE(md_annotation(buf, len, "actrack.thread.300.no_stack",
				   val, sizeof(val)));
	/* The memory list holds the same range. */
	ASSERT_TRUE(md_stream(buf, len, 5, &rva, &size));
	ASSERT_EQ(4 + 16, size);
	EXPECT_EQ(1, md_u32(buf + rva));
	EXPECT_EQ((uint32_t)STACK_SP, md_u32(buf + rva + 4));
	EXPECT_EQ(16, md_u32(buf + rva + 12));
	EXPECT_EQ(mem, md_u32(buf + rva + 16));
	/* The kernel it died on, from ACTRACK_KERNEL. */
	ASSERT_TRUE(md_stream(buf, len, 7, &rva, &size));
	EXPECT_EQ(6, md_u32(buf + rva + 8));
	EXPECT_EQ(12, md_u32(buf + rva + 12));
	EXPECT_EQ(9, md_u32(buf + rva + 16));
	ASSERT_TRUE(md_ascii(buf, len, md_u32(buf + rva + 24), val,
			     sizeof(val)));
	EXPECT_STREQ("6.12.9-actrack-test", val);
	free(buf);
}

/* Each thread's activities and their values, as annotations of their
 * own, read back from the text report. */
TEST_F(export_stacks, thread_activities_as_annotations)
{
	static const char *const none[] = {
		"actrack.thread.300.activity.3",
		"actrack.thread.300.activity.1.x",
		"actrack.thread.999.activity.1",
		"actrack.thread.301.activity.1",
	};
	char val[256];
	struct stat st;
	uint8_t *buf;
	size_t len;

	SETUP_SKIPPED();
	DEATHS("export", "--minidump", "-o", self->out, self->file_opt,
	       "--until", "@1700000060");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	len = read_dump(self->out, "actrack-1000-42-300.dmp", &buf, &st);
	ASSERT_NE(NULL, buf);
	ASSERT_TRUE(md_annotation(buf, len, "actrack.thread.300.activity.2",
				  val, sizeof(val)));
	EXPECT_STREQ("lock-acquire lock 0x5000, for 2.0 s, origin 0x1 in "
		     "f+0x3c (a.c:40)", val);
	ASSERT_TRUE(md_annotation(buf, len,
				  "actrack.thread.300.activity.2.path", val,
				  sizeof(val)));
	EXPECT_STREQ("\"/index.html\"", val);
	ASSERT_TRUE(md_annotation(buf, len, "actrack.thread.300.activity.2.n",
				  val, sizeof(val)));
	EXPECT_STREQ("7", val);
	ASSERT_TRUE(md_annotation(buf, len, "actrack.thread.300.activity.1",
				  val, sizeof(val)));
	EXPECT_STREQ("task-run task 4711, for 3.0 s, origin 0x2", val);
	for (size_t k = 0; k < sizeof(none) / sizeof(none[0]); k++) {
		const char *key = none[k];

		EXPECT_FALSE(md_annotation(buf, len, key, val, sizeof(val)))
			TH_LOG("%s", key);
	}
	/* The whole report is still there. */
	ASSERT_TRUE(md_annotation(buf, len, "actrack.report", val,
				  sizeof(val)));
	EXPECT_EQ(0, strncmp(val, "pid 300 (", 9));
	free(buf);
}

TEST_F(export_stacks, a_malformed_field_is_refused_and_said)
{
	char want[400], val[256];
	uint32_t rva, size;
	struct stat st;
	uint8_t *buf;
	size_t len;

	SETUP_SKIPPED();
	DEATHS("export", "--minidump", "-o", self->out, self->file_opt,
	       "--since", "@1700000060");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_STREQ("actrack: deaths: export: pid 300: ACTRACK_STACKS is "
		     "malformed: written without stacks\n", self->r.err);
	snprintf(want, sizeof(want), "%s/actrack-1000-43-300.dmp\n",
		 self->out);
	EXPECT_STREQ(want, self->r.out);
	len = read_dump(self->out, "actrack-1000-43-300.dmp", &buf, &st);
	ASSERT_NE(NULL, buf);
	ASSERT_TRUE(md_check(buf, len));
	ASSERT_TRUE(md_stream(buf, len, 3, &rva, &size));
	ASSERT_EQ(2, md_u32(buf + rva));
	EXPECT_EQ(0, md_u32(buf + rva + 4 + 32));
	ASSERT_TRUE(md_stream(buf, len, 5, &rva, &size));
	EXPECT_EQ(0, md_u32(buf + rva));
	ASSERT_TRUE(md_annotation(buf, len, "actrack.thread.300.no_stack", val,
				  sizeof(val)));
	EXPECT_STREQ("the journal entry's ACTRACK_STACKS is malformed: "
		     "ignored", val);
	/* No ACTRACK_KERNEL: the release is empty. */
	ASSERT_TRUE(md_stream(buf, len, 7, &rva, &size));
	ASSERT_TRUE(md_ascii(buf, len, md_u32(buf + rva + 24), val,
			     sizeof(val)));
	EXPECT_STREQ("", val);
	free(buf);
}

TEST_F(export, usage_errors)
{
	SETUP_SKIPPED();
	/* The format is said: one exists today, others may come. */
	DEATHS("export", "-o", self->out, self->file_opt);
	EXPECT_EQ(2, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "export: which format? "
			       "--minidump")) TH_LOG("%s", self->r.err);
	DEATHS("export", "--minidump", "-o", "/nonexistent-actrack-dir",
	       self->file_opt, "300");
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.err, "cannot write pid 300's minidump "
			       "in /nonexistent-actrack-dir"));
	DEATHS("export", "--minidump", "-o", self->out, self->file_opt,
	       "nosuch");
	EXPECT_EQ(1, self->r.status);
	/* Options of the list only. */
	DEATHS("--minidump", self->file_opt);
	EXPECT_EQ(2, self->r.status);
}

/* ---- the previous boot's entry (monitor --journal at boot) -------------- */

#define BOOT_MESSAGE_ID	"394b5103d5bc4b64b69977612ca71fb5"
#define BOOT_ID		"5d41402abc4b2a76b9719d911017c592"
#define BOOT_MESSAGE							\
	"previous boot " BOOT_ID " ended while 2 processes were "	\
	"running: 4242 server (4242 'server' lock-acquire lock 0x5000, "\
	"deadlock: waits for lock 0x5000 held by 4243 'peer'; 4243 "	\
	"'peer' lock-acquire lock 0x6000), 77 cron (77 'cron' no "	\
	"activity)"
#define BOOT_REPORT							\
	"{\"schema\":\"actrack-previous-boot/1\",\"boot_id\":\""	\
	BOOT_ID "\",\"processes\":2}"

/* The entry monitor --journal writes at boot, at T0 + 1300 s, as the
 * journal file boot.journal of @dir. */
static int write_boot_journal(const char *dir)
{
	struct entry *e = calloc(1, sizeof(*e));
	const struct export_entry x = {
		.realtime_us = (T0 + 1300) * 1000000ULL,
		.monotonic_us = 5000000ULL,
		.boot_id = "fedcba9876543210fedcba9876543210",
		.body = e,
	};
	char journal[300];
	int ret;

	if (!e)
		return -1;
	snprintf(journal, sizeof(journal), "%s/boot.journal", dir);
	ret = entry_add_str(e, "_HOSTNAME", "web-7");
	ret |= entry_add_str(e, "PRIORITY", "3");
	ret |= entry_add_str(e, "MESSAGE_ID", BOOT_MESSAGE_ID);
	ret |= entry_add_str(e, "SYSLOG_IDENTIFIER", "actrack");
	ret |= entry_add_str(e, "MESSAGE", BOOT_MESSAGE);
	ret |= entry_add_str(e, "ACTRACK_PREVIOUS_BOOT_ID", BOOT_ID);
	ret |= entry_add_str(e, "ACTRACK_PROCESSES", "2");
	ret |= entry_add_str(e, "ACTRACK_ARENAS", "1");
	ret |= entry_add_str(e, "ACTRACK_UNREADABLE_ARENAS", "0");
	ret |= entry_add_str(e, "ACTRACK_CORRUPT_ARENAS", "0");
	ret |= entry_add_str(e, "ACTRACK_TORN_THREADS", "0");
	ret |= entry_add_str(e, "ACTRACK_LOST_RECORDS", "0");
	ret |= entry_add_str(e, "ACTRACK_REPORT", BOOT_REPORT);
	if (!ret)
		ret = journal_export_to_file(&x, 1, JOURNAL_REMOTE, journal);
	free(e);
	return ret;
}

FIXTURE(boot) {
	char dir[256], journal[300], dir_opt[320];
	struct run r;
};

FIXTURE_SETUP(boot)
{
	memset(&self->r, 0, sizeof(self->r));
	self->dir[0] = '\0';
	setup_journal(_metadata, "boot", self->dir, sizeof(self->dir),
		      listed_deaths, NULL, NR_LISTED, self->journal,
		      sizeof(self->journal));
	if (_metadata->skip)
		return;
	ASSERT_EQ(0, write_boot_journal(self->dir));
	snprintf(self->dir_opt, sizeof(self->dir_opt), "--directory=%s",
		 self->dir);
}

FIXTURE_TEARDOWN(boot)
{
	run_free(&self->r);
	remove_dir(self->dir);
}

/* Listed among the deaths, in time order, in one line of its own. */
TEST_F(boot, listed_among_the_deaths)
{
	SETUP_SKIPPED();
	DEATHS(self->dir_opt);
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_STREQ("", self->r.err);
	EXPECT_STREQ(
"TIME                     PID    UID  DEATH         KILLER          PHASE              COMMAND\n"
"2023-11-14 22:13:20.000  100    1000 SIGSEGV+core  kernel          main-loop-started  /usr/bin/server --port 80\n"
"2023-11-14 22:23:20.000  310    1000 SIGKILL       systemd-oomd    serving            cache\n"
"2023-11-14 22:33:20.000  320    1000 SIGTERM       itself          done               quitter\n"
"2023-11-14 22:35:00.000  -      -    previous boot -               -                  2 processes running, boot " BOOT_ID "\n"
"2023-11-14 22:38:20.000  330    1000 SIGKILL       outside-ns      idle               guest\n"
"2023-11-14 23:13:20.000  200    0    exit 3        -               initialized        batch\\x1b[2J -n 3\n"
"2023-11-15 00:13:20.000  100    1000 SIGKILL       OOM killer      starting           worker\n",
		     self->r.out);
	/* As JSON: its report, where the deaths have theirs. */
	DEATHS("--json", self->dir_opt, "--since", "@1700001200", "--until",
	       "@1700001501");
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("{\"pid\": 320, \"signal\": 15}\n" BOOT_REPORT "\n"
		     "{\"pid\": 330, \"signal\": 9}\n", self->r.out);
	/* A process's deaths (by pid, by command) are not about it. */
	DEATHS(self->dir_opt, "100");
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(3, count_lines(self->r.out));
	EXPECT_EQ(NULL, strstr(self->r.out, "previous boot"));
	DEATHS(self->dir_opt, "--oom");
	EXPECT_EQ(2, count_lines(self->r.out));
}

/* info shows it whole: its MESSAGE, or with --json its report. */
TEST_F(boot, info_shows_it_whole)
{
	SETUP_SKIPPED();
	DEATHS("info", self->dir_opt, "--until", "@1700001400");
	EXPECT_EQ(0, self->r.status) TH_LOG("%s", self->r.err);
	EXPECT_STREQ("logged 2023-11-14 22:35:00.000 on web-7\n"
		     BOOT_MESSAGE "\n", self->r.out);
	DEATHS("info", "--json", self->dir_opt, "--until", "@1700001400");
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ(BOOT_REPORT "\n", self->r.out);
}

/* No death to export: export leaves it out. */
TEST_F(boot, never_exported)
{
	char out[300];

	SETUP_SKIPPED();
	snprintf(out, sizeof(out), "%s/dumps", self->dir);
	ASSERT_EQ(0, mkdir(out, 0700));
	DEATHS("export", "--minidump", "-o", out, self->dir_opt, "--since",
	       "@1700001300", "--until", "@1700001301");
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("", self->r.out);
	EXPECT_STREQ("actrack: deaths: no death reports in the journal\n",
		     self->r.err);
}

TEST_HARNESS_MAIN
