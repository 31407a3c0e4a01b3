// SPDX-License-Identifier: MIT
/*
 * A file arena keeps the records of a process that died without a parent
 * to report it.  `actrack ps` said nothing about that (a dead process
 * looked like a live one) and the CLI could not free them.  Now ps has a
 * STATE column (running/exited, '-' when the arena is of another boot) and
 * `actrack collect` frees what belongs to exited processes, without
 * leaving a record of its own, and never touches a saved image.
 */
#include "snapshot_helpers.h"
#include "test_harness.h"

#define RUN(r, ...)							\
	do {								\
		char *__argv[] = { "actrack", __VA_ARGS__, NULL };	\
		run_free(r);						\
		ASSERT_EQ(0, run_cli(r, NULL, __argv));			\
	} while (0)

static void push_task(void *arg)
{
	actrack_push_task(42);
}

/* The ps line of @pid, from its STATE column on, or NULL. */
static const char *ps_line(const char *out, pid_t pid)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), "\n%7d  ", (int)pid);
	p = strstr(out, key);
	return p ? p + strlen(key) : NULL;
}

FIXTURE(collect) {
	struct run r;
	struct writer alive, dead;
	char path[256], image[256];
};

FIXTURE_SETUP(collect)
{
	memset(&self->r, 0, sizeof(self->r));
	test_path(self->path, sizeof(self->path), "cli-collect");
	test_path(self->image, sizeof(self->image), "cli-collect-image");
	ASSERT_EQ(0, writer_start(&self->alive, self->path, 8,
				  ACTRACK_INIT_NO_MODULES, push_task, NULL));
	ASSERT_EQ(0, writer_start(&self->dead, self->path, 8,
				  ACTRACK_INIT_NO_MODULES, push_task, NULL));
}

FIXTURE_TEARDOWN(collect)
{
	writer_stop(&self->alive);
	writer_stop(&self->dead);
	run_free(&self->r);
	unlink(self->path);
	unlink(self->image);
}

TEST_F(collect, ps_tells_exited_from_running_and_collect_frees_them)
{
	pid_t dead = self->dead.pid;
	const char *l;

	/* SIGKILLed: nobody reported it; its records stay. */
	writer_stop(&self->dead);
	RUN(&self->r, "--arena", self->path, "ps");
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(0, strncmp(self->r.out, "    PID  STATE    PHASE ", 24));
	l = ps_line(self->r.out, self->alive.pid);
	ASSERT_NE(NULL, l) TH_LOG("%s", self->r.out);
	EXPECT_EQ(0, strncmp(l, "running  launched ", 18)) TH_LOG("%s", l);
	l = ps_line(self->r.out, dead);
	ASSERT_NE(NULL, l) TH_LOG("%s", self->r.out);
	EXPECT_EQ(0, strncmp(l, "exited   launched ", 18)) TH_LOG("%s", l);

	/* A process record and a thread tracker. */
	RUN(&self->r, "--arena", self->path, "collect");
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_STREQ("collected 1 exited process (2 records); 1 running "
		     "process kept\n", self->r.out);

	RUN(&self->r, "--arena", self->path, "ps");
	EXPECT_NE(NULL, ps_line(self->r.out, self->alive.pid));
	EXPECT_EQ(NULL, ps_line(self->r.out, dead)) TH_LOG("%s", self->r.out);
	/* Nothing of the collector's own was left behind. */
	EXPECT_EQ(2, count_lines(self->r.out)) TH_LOG("%s", self->r.out);

	RUN(&self->r, "--arena", self->path, "collect");
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("collected 0 exited processes (0 records); 1 running "
		     "process kept\n", self->r.out);
}

TEST_F(collect, a_saved_image_is_never_changed)
{
	char want[512];
	size_t la, lb;
	char *a, *b;

	writer_stop(&self->dead);
	RUN(&self->r, "--arena", self->path, "save", self->image);
	ASSERT_EQ(0, self->r.status);
	a = read_file(self->image, &la);
	ASSERT_NE(NULL, a);
	RUN(&self->r, "--arena", self->image, "collect");
	snprintf(want, sizeof(want), "actrack: %s: is a saved image: refusing "
		 "to change it\n", self->image);
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("", self->r.out);
	EXPECT_STREQ(want, self->r.err);
	b = read_file(self->image, &lb);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(la, lb);
	EXPECT_EQ(0, memcmp(a, b, la));
	free(a);
	free(b);
}

TEST_F(collect, a_missing_arena_is_not_created)
{
	char missing[256], want[512];

	test_path(missing, sizeof(missing), "cli-collect-missing");
	RUN(&self->r, "--arena", missing, "collect");
	snprintf(want, sizeof(want), "actrack: %s: No such file or "
		 "directory\n", missing);
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ(want, self->r.err);
	EXPECT_EQ(-1, access(missing, F_OK));
}

TEST_HARNESS_MAIN
