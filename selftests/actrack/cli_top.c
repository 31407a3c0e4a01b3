// SPDX-License-Identifier: MIT
/*
 * actrack top agrees with dump: --pid of a process that is not there fails
 * the same way (exit 1, the same line), names are escaped by the same rule
 * (\t, \\, \xHH), and a long name is cut with "..." so that the columns
 * after it stay where the header puts them.
 */
#include "cli_golden.h"
#include "test_harness.h"

#define RUN(r, ...)							\
	do {								\
		char *__argv[] = { "actrack", __VA_ARGS__, NULL };	\
		run_free(r);						\
		ASSERT_EQ(0, run_cli(r, NULL, __argv));			\
	} while (0)

/* 31 bytes: a tab, a backslash, an escape and a long tail. */
#define LONG_NAME	"w\t\\\x1b" "abcdefghijklmnopqrstuvwxyz1"

FIXTURE(top) {
	struct run r;
	char path[256];
};

FIXTURE_SETUP(top)
{
	struct actrack_activity a[2];
	struct build b;

	memset(&self->r, 0, sizeof(self->r));
	test_path(self->path, sizeof(self->path), "cli-top");
	ASSERT_EQ(0, build_init(&b, 256 * 1024));
	ASSERT_NE(0u, build_process(&b, 100, 5000,
				    ACTRACK_PHASE_MAIN_LOOP_STARTED, 1,
				    GOLDEN_AT(0), "srv\0", 4));
	a[0] = golden_act(ACTRACK_ACT_LOCK_ACQUIRE, 0x1000, 0, 1000, 0);
	a[1] = golden_act(ACTRACK_ACT_TASK_RUN, 7, 0, 2000, 0);
	ASSERT_NE(0u, build_thread(&b, 100, 5000, 101, LONG_NAME, 8, 1, a));
	ASSERT_NE(0u, build_thread(&b, 100, 5000, 102, "t\tb", 8, 1, a + 1));
	ASSERT_EQ(0, build_write(&b, self->path));
	build_free(&b);
}

FIXTURE_TEARDOWN(top)
{
	run_free(&self->r);
	unlink(self->path);
}

TEST_F(top, missing_pid_fails_as_dump_does)
{
	char want[512], now[32];

	snprintf(want, sizeof(want), "actrack: %s: no process 4242 in the "
		 "arena\n", self->path);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)GOLDEN_NOW);
	RUN(&self->r, "--arena", self->path, "--now", now, "dump", "--pid",
	    "4242");
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("", self->r.out);
	EXPECT_STREQ(want, self->r.err);
	RUN(&self->r, "--arena", self->path, "--now", now, "top",
	    "--iterations", "1", "--pid", "4242");
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("", self->r.out);
	EXPECT_STREQ(want, self->r.err);
	/* A pid that is there is shown. */
	RUN(&self->r, "--arena", self->path, "--now", now, "top",
	    "--iterations", "1", "--pid", "100");
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
}

TEST_F(top, names_escaped_as_dump_does_and_cut_to_the_column)
{
	char now[32];
	const char *l1, *l2;

	snprintf(now, sizeof(now), "%llu", (unsigned long long)GOLDEN_NOW);
	RUN(&self->r, "--arena", self->path, "--now", now, "dump");
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "  thread 101 'w\\t\\\\\\x1b"
			       "abcdefghijklmnopqrstuvwxyz1' depth 1\n"));
	EXPECT_NE(NULL, strstr(self->r.out, "  thread 102 't\\tb' depth 1\n"));

	RUN(&self->r, "--arena", self->path, "--now", now, "top",
	    "--iterations", "1");
	EXPECT_EQ(0, self->r.status);
	/* The same escapes; 16 columns, an escape never cut in half. */
	l1 = strstr(self->r.out, "    100     101 w\\t\\\\\\x1babcd...    59.0 s "
		    "lock-acquire  lock 0x1000 ");
	l2 = strstr(self->r.out, "    100     102 t\\tb                58.0 s "
		    "task-run      task 7 ");
	EXPECT_NE(NULL, l1) TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, l2) TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "    PID     TID NAME                   "
			       "AGE ACTIVITY      OBJECT"));
}

TEST_HARNESS_MAIN
