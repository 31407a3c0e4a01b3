// SPDX-License-Identifier: MIT
/*
 * The actrack CLI against a hand-built arena with fixed contents: the whole
 * output of dump, dump --pid, ps and stats compared as text.
 */
#include "cli_golden.h"
#include "test_harness.h"

#define NOW_ARG "--now=1060000000000"

static const char golden_dump_100[] =
"process 100 (main-loop-started) start_ticks 5000 parent 1 age 58.5 s: server --port 8080\n"
"  annotations:\n"
"    motto = \"say \\\"hi\\\"\\n\"\n"
"    key = raw dead01 (3 bytes)\n"
"    ready = true\n"
"    grade = 'q'\n"
"    delta = -42\n"
"    max = 18446744073709551615\n"
"    buffer = ref 0x7f0000001000 (4096 bytes)\n"
"    label = string ref 0x7f0000002000 (12 bytes)\n"
"  modules:\n"
"    0x0000555555554000 size 0x5000 build-id 1234abcd /usr/bin/server\n"
"    0x00007f1000000000 size 0x1e1000 build-id - /lib/libc.so.6\n"
"  log:\n"
"    -30.000 s tid 101: accepted 10.0.0.1\n"
"    -14.750 s tid 101: request \"GET /\"\n"
"    -10.000 s tid 100: tab\\there\n"
"    -0.001 s tid 101: stuck?\n"
"  thread 100 'main' depth 6 (+2 not stored)\n"
"    [4] thread-join tid 101, for 10 ms, origin 0x555555555400 in server+0x1400 (file not found)\n"
"    [3] event-wait event 0x6000, for 1.0 s, origin 0x555555555300 in server+0x1300 (file not found)\n"
"    [2] lock-acquire lock 0x5000, for 12.0 s, origin 0x555555555200 in server+0x1200 (file not found)\n"
"    [1] task-run task 17, for 50.0 s, origin 0x555555555100 in server+0x1100 (file not found)\n"
"         step = \"parse\"\n"
"         attempt = 18446744073709551615\n"
"  thread 101 'worker\\x01' depth 3\n"
"    fatal signal SIGSEGV (11) code 1 addr 0x10 pc 0x555555555710 in server+0x1710 (file not found)\n"
"    [3] generic action 5 id 77 info 88, for 1 ms, origin 0x555555555700 in server+0x1700 (file not found)\n"
"    [2] io-wait fd 3, 4096 bytes, for 500 ms, origin 0x555555555600 in server+0x1600 (file not found)\n"
"    [1] process-wait pid 200, for 40.0 s, origin 0x555555555500 in server+0x1500 (file not found)\n"
"process 100 (launched) start_ticks 9000 parent 1 age 1.0 s: server\n";

static const char golden_dump_rest[] =
"process 200 (no process record) start_ticks 7000\n"
"  thread 200 'orphan' depth 0\n"
"process 300 (exited-with-code) start_ticks 8000 parent 100 age 1m00s: helper\n"
"  thread 301 '' depth 1\n"
"    [1] lock-held lock 0xabc0, for 59.0 s, origin 0x1000\n"
"global data:\n"
"  build = \"1.2.3\"\n"
"  shards = 4\n";

static const char golden_summary[] =
"4 processes, 4 threads, 6656/262144 bytes used, corrupt no\n";

static const char want_ps[] =
"    PID  STATE    PHASE                    AGE  THREADS  COMMAND\n"
"    100  -        main-loop-started     58.5 s        2  server --port 8080\n"
"    100  -        launched               1.0 s        0  server\n"
"    200  -        -                          -        1  -\n"
"    300  -        exited-with-code       1m00s        1  helper\n";

FIXTURE(golden) {
	struct build b;
	char path[256];
	struct run r;
};

FIXTURE_SETUP(golden)
{
	ASSERT_EQ(0, golden_build(&self->b));
	test_path(self->path, sizeof(self->path), "golden");
	ASSERT_EQ(0, build_write(&self->b, self->path));
	memset(&self->r, 0, sizeof(self->r));
}

FIXTURE_TEARDOWN(golden)
{
	run_free(&self->r);
	build_free(&self->b);
	unlink(self->path);
}

TEST_F(golden, dump)
{
	char *argv[] = { "actrack", "--arena", self->path, NOW_ARG, "dump",
			 NULL };
	char want[8192];

	snprintf(want, sizeof(want), "%s%s%s", golden_dump_100,
		 golden_dump_rest, golden_summary);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_STREQ(want, self->r.out);
}

TEST_F(golden, now_from_the_environment)
{
	char *argv[] = { "actrack", "--arena", self->path, "dump", NULL };
	char want[8192];

	snprintf(want, sizeof(want), "%s%s%s", golden_dump_100,
		 golden_dump_rest, golden_summary);
	ASSERT_EQ(0, run_cli(&self->r, "ACTRACK_NOW_NS=1060000000000", argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ(want, self->r.out);
}

TEST_F(golden, dump_one_pid_with_both_generations)
{
	char *argv[] = { "actrack", "--arena", self->path, NOW_ARG, "dump",
			 "--pid", "100", NULL };
	char want[8192];

	snprintf(want, sizeof(want), "%s%s", golden_dump_100, golden_summary);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ(want, self->r.out);
}

TEST_F(golden, dump_pid_without_record)
{
	char *argv[] = { "actrack", "--arena", self->path, NOW_ARG, "dump",
			 "-p", "200", NULL };
	char want[1024];

	snprintf(want, sizeof(want),
		 "process 200 (no process record) start_ticks 7000\n"
		 "  thread 200 'orphan' depth 0\n%s", golden_summary);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ(want, self->r.out);
}

TEST_F(golden, dump_unknown_pid)
{
	char *argv[] = { "actrack", "--arena", self->path, "dump", "--pid",
			 "999", NULL };
	char want[512];

	snprintf(want, sizeof(want),
		 "actrack: %s: no process 999 in the arena\n", self->path);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("", self->r.out);
	EXPECT_STREQ(want, self->r.err);
}

TEST_F(golden, ps)
{
	char *argv[] = { "actrack", "--arena", self->path, NOW_ARG, "ps",
			 NULL };

	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_STREQ(want_ps, self->r.out);
}

TEST_F(golden, stats)
{
	char *argv[] = { "actrack", "--arena", self->path, "stats", NULL };
	char want[1024];

	snprintf(want, sizeof(want),
		 "arena:     %s\n"
		 "size:      262144 bytes\n"
		 "used:      6656 bytes (2.5%%)\n"
		 "free:      255488 bytes\n"
		 "processes: 4\n"
		 "threads:   4 (0 torn)\n"
		 "corrupt:   no\n"
		 "flags:     -\n"
		 "lost:      0 records (the arena was full)\n"
		 "reclaimed: 0 records of dead processes\n"
		 "abi:       %u.%u\n"
		 "persist:   no (a file arena)\n", self->path,
		 ACTRACK_ABI_MAJOR, ACTRACK_ABI_MINOR);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_STREQ(want, self->r.out);
}

/* Damage found inside a readable arena: reported, not fatal. */
TEST_F(golden, corrupt_records_flagged_in_summary)
{
	char *argv[] = { "actrack", "--arena", self->path, NOW_ARG, "dump",
			 "--pid", "300", NULL };
	struct actrack_arena_iter it;
	uint32_t ref;

	/* Break the tracker of pid 300's thread (the last thread built). */
	actrack_arena_iter_init(&it, &self->b.a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_THREAD, NULL)))
		if (build_thread_rec(&self->b, ref)->owner.pid == 300)
			build_thread_rec(&self->b, ref)->slot_count = 1000;
	ASSERT_EQ(0, build_write(&self->b, self->path));
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("process 300 (exited-with-code) start_ticks 8000 parent "
		     "100 age 1m00s: helper\n"
		     "4 processes, 3 threads, 6656/262144 bytes used, "
		     "corrupt yes\n", self->r.out);
}

TEST_F(golden, saved_image_dumps_the_same)
{
	char out[256];
	char *save[] = { "actrack", "--arena", self->path, "save", out, NULL };
	char *dump[] = { "actrack", "--arena", out, NOW_ARG, "dump", NULL };
	char want[8192];

	test_path(out, sizeof(out), "golden-saved");
	ASSERT_EQ(0, run_cli(&self->r, NULL, save));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.out);
	EXPECT_STREQ("", self->r.err);
	run_free(&self->r);
	snprintf(want, sizeof(want), "%s%s%s", golden_dump_100,
		 golden_dump_rest, golden_summary);
	ASSERT_EQ(0, run_cli(&self->r, NULL, dump));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ(want, self->r.out);
	unlink(out);
}

TEST_HARNESS_MAIN
