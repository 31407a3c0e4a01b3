// SPDX-License-Identifier: MIT
/*
 * The actrack CLI's contract at its edges: usage errors exit 2 with one
 * line, unreadable arenas (missing, not an arena, truncated, newer ABI, a
 * directory) exit 1 with one precise line and never crash, --help is a
 * manual page for every command, --version names the ABI.
 */
#include "snapshot_helpers.h"
#include "test_harness.h"

/* Exactly one line, starting "actrack: ". */
static bool one_line(const char *s)
{
	return !strncmp(s, "actrack: ", 9) && count_lines(s) == 1 &&
	       s[strlen(s) - 1] == '\n';
}

#define RUN(r, env, ...)						\
	do {								\
		char *__argv[] = { "actrack", __VA_ARGS__, NULL };	\
		run_free(r);						\
		ASSERT_EQ(0, run_cli(r, env, __argv));			\
	} while (0)

FIXTURE(cli) {
	struct run r;
	char path[256];
};

FIXTURE_SETUP(cli)
{
	memset(&self->r, 0, sizeof(self->r));
	test_path(self->path, sizeof(self->path), "cli-err");
}

FIXTURE_TEARDOWN(cli)
{
	run_free(&self->r);
	unlink(self->path);
}

TEST_F(cli, version)
{
	char want[64];

	/* The library's version, which `pkg-config --modversion libactrack`
	 * also prints (the Makefile reads it from actrack.h). */
	snprintf(want, sizeof(want), "actrack %s (arena ABI %u.%u)\n",
		 ACTRACK_VERSION, ACTRACK_ABI_MAJOR, ACTRACK_ABI_MINOR);
	RUN(&self->r, NULL, "--version");
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ(want, self->r.out);
	RUN(&self->r, NULL, "-V");
	EXPECT_STREQ(want, self->r.out);
}

TEST_F(cli, usage_errors_exit_2_with_one_line)
{
	static const char *const cases[][4] = {
		{ "actrack: missing command (see 'actrack --help')\n" },
		{ "actrack: unknown command 'frobnicate' (see 'actrack "
		  "--help')\n", "frobnicate" },
		{ "actrack: unknown option '--bogus' (see 'actrack --help')\n",
		  "--bogus", "ps" },
		{ "actrack: --arena: missing argument (see 'actrack --help')\n",
		  "--arena" },
		{ "actrack: --now: not a number of nanoseconds: '12x' (see "
		  "'actrack --help')\n", "--now=12x", "ps" },
		{ "actrack: dump: unknown option '--bogus' (see 'actrack dump "
		  "--help')\n", "dump", "--bogus" },
		{ "actrack: dump: --pid: not a pid: 'abc' (see 'actrack dump "
		  "--help')\n", "dump", "--pid", "abc" },
		{ "actrack: dump: --pid: not a pid: '-1' (see 'actrack dump "
		  "--help')\n", "dump", "--pid", "-1" },
		{ "actrack: dump: unexpected argument 'x' (see 'actrack dump "
		  "--help')\n", "dump", "x" },
		{ "actrack: ps: unexpected argument 'x' (see 'actrack ps "
		  "--help')\n", "ps", "x" },
		{ "actrack: save: missing argument (see 'actrack save "
		  "--help')\n", "save" },
		{ "actrack: save: unexpected argument 'b' (see 'actrack save "
		  "--help')\n", "save", "a", "b" },
		{ "actrack: stats: unknown option '-q' (see 'actrack stats "
		  "--help')\n", "stats", "-q" },
		{ "actrack: unknown command 'nope' (see 'actrack --help')\n",
		  "help", "nope" },
		/* Death reports come from the module, never from a file. */
		{ "actrack: monitor: --arena: death reports come from "
		  "actrack.ko, not from an arena file (see 'actrack monitor "
		  "--help')\n", "--arena", "/tmp/x", "monitor" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[5] = { "actrack" };
		int n = 1;

		for (int j = 1; j < 4 && cases[i][j]; j++)
			argv[n++] = (char *)cases[i][j];
		argv[n] = NULL;
		run_free(&self->r);
		ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
		EXPECT_EQ(2, self->r.status) TH_LOG("case %zu", i);
		EXPECT_STREQ("", self->r.out);
		EXPECT_STREQ(cases[i][0], self->r.err);
	}
}

TEST_F(cli, help_lists_every_exit_status)
{
	RUN(&self->r, NULL, "--help");
	EXPECT_EQ(0, self->r.status);
	/* actrack(1)'s list, as --help prints a man page's tagged list. */
	EXPECT_NE(NULL, strstr(self->r.out,
			       "EXIT STATUS\n"
			       "    0\n"
			       "        Success.\n"
			       "    1\n"
			       "        The arena cannot be read (missing, not an "
			       "arena, truncated,\n"));
	EXPECT_NE(NULL, strstr(self->r.out,
			       "    2\n"
			       "        Usage error.\n"
			       "    3\n"
			       "        hangs found hung threads; monitor timed "
			       "out before its count of\n"
			       "        reports.\n"));
}

TEST_F(cli, bad_now_in_the_environment)
{
	RUN(&self->r, "ACTRACK_NOW_NS=soon", "ps");
	EXPECT_EQ(2, self->r.status);
	EXPECT_TRUE(one_line(self->r.err));
}

/* The sections of every man page, which --help prints (SEE ALSO only the
 * man pages had while the help texts were written apart from them). */
static const char *const sections[] = {
	"NAME\n", "SYNOPSIS\n", "DESCRIPTION\n", "OPTIONS\n",
	"EXIT STATUS\n", "EXAMPLES\n", "\nSEE ALSO\n",
};

static const char *const commands[] = { "dump", "ps", "save", "stats",
					 "collect", "monitor", "hangs", "top",
					 "run", "deaths" };

TEST_F(cli, every_command_has_a_manual_page)
{
	struct run via_help = { 0 };

	RUN(&self->r, NULL, "--help");
	EXPECT_EQ(0, self->r.status);
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		EXPECT_NE(NULL, strstr(self->r.out, sections[i]));
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char line[64];

		/* Listed in the main page... */
		snprintf(line, sizeof(line), "\n    %s\n        ", commands[i]);
		EXPECT_NE(NULL, strstr(self->r.out, line))
			TH_LOG("%s not listed", commands[i]);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char name[64];
		char *argv[] = { "actrack", "help", (char *)commands[i], NULL };

		/* ...and with a page of its own. */
		RUN(&self->r, NULL, (char *)commands[i], "--help");
		EXPECT_EQ(0, self->r.status);
		EXPECT_STREQ("", self->r.err);
		snprintf(name, sizeof(name), "NAME\n    actrack %s - ",
			 commands[i]);
		EXPECT_EQ(0, strncmp(self->r.out, name, strlen(name)))
			TH_LOG("%s: page starts %.40s", commands[i],
			       self->r.out);
		for (size_t j = 0; j < sizeof(sections) / sizeof(sections[0]);
		     j++) {
			EXPECT_NE(NULL, strstr(self->r.out, sections[j]))
				TH_LOG("%s --help lacks %s", commands[i],
				       sections[j]);
		}
		/* `actrack help CMD` is the same page. */
		ASSERT_EQ(0, run_cli(&via_help, NULL, argv));
		EXPECT_EQ(0, via_help.status);
		EXPECT_STREQ(self->r.out, via_help.out);
		run_free(&via_help);
	}
}

/*
 * Every reading command, on every kind of bad file: exit 1, nothing on
 * stdout, one line naming the file and what is wrong with it.
 */
static void expect_error(struct __test_metadata *_metadata, struct run *r,
			 const char *path, const char *reason)
{
	static const char *const readers[] = { "dump", "ps", "stats" };
	char want[512], out[300];

	snprintf(want, sizeof(want), "actrack: %s: %s\n", path, reason);
	for (size_t i = 0; i < 3; i++) {
		RUN(r, NULL, "--arena", (char *)path, (char *)readers[i]);
		EXPECT_EQ(1, r->status) TH_LOG("%s", readers[i]);
		EXPECT_STREQ("", r->out);
		EXPECT_STREQ(want, r->err);
	}
	test_path(out, sizeof(out), "cli-err-out");
	RUN(r, NULL, "--arena", (char *)path, "save", out);
	EXPECT_EQ(1, r->status);
	EXPECT_STREQ(want, r->err);
	EXPECT_EQ(-1, access(out, F_OK));
}

TEST_F(cli, missing_file)
{
	expect_error(_metadata, &self->r, self->path,
		     "No such file or directory");
}

TEST_F(cli, directory)
{
	expect_error(_metadata, &self->r, "/", "Is a directory");
}

TEST_F(cli, empty_and_short_files)
{
	ASSERT_EQ(0, write_file(self->path, "", 0));
	expect_error(_metadata, &self->r, self->path,
		     "not an actrack arena (too short: 0 bytes)");
	ASSERT_EQ(0, write_file(self->path, "#!/bin/sh\n", 10));
	expect_error(_metadata, &self->r, self->path,
		     "not an actrack arena (too short: 10 bytes)");
}

TEST_F(cli, not_an_arena)
{
	char junk[ACTRACK_ARENA_MIN_SIZE];

	srand(7);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)rand();
	ASSERT_EQ(0, write_file(self->path, junk, sizeof(junk)));
	expect_error(_metadata, &self->r, self->path,
		     "not an actrack arena (bad magic)");
}

TEST_F(cli, truncated_newer_and_inconsistent_arenas)
{
	struct actrack_arena_header *h;
	struct build b;
	char why[128];

	ASSERT_EQ(0, build_init(&b, ACTRACK_ARENA_MIN_SIZE));
	ASSERT_NE(0u, build_process(&b, 10, 1, 1, 1, 1, "x", 1));
	h = b.a.base;

	ASSERT_EQ(0, write_file(self->path, b.a.base, b.a.size / 2));
	snprintf(why, sizeof(why), "truncated arena (%u of %u bytes)",
		 b.a.size / 2, b.a.size);
	expect_error(_metadata, &self->r, self->path, why);

	h->abi_major = ACTRACK_ABI_MAJOR + 1;
	h->abi_minor = 3;
	ASSERT_EQ(0, build_write(&b, self->path));
	snprintf(why, sizeof(why),
		 "unsupported arena ABI %u.3 (this actrack reads %u.x)",
		 ACTRACK_ABI_MAJOR + 1, ACTRACK_ABI_MAJOR);
	expect_error(_metadata, &self->r, self->path, why);
	h->abi_major = ACTRACK_ABI_MAJOR;

	h->header_size = 512;
	ASSERT_EQ(0, build_write(&b, self->path));
	expect_error(_metadata, &self->r, self->path,
		     "not an actrack arena (bad header size 512)");
	h->header_size = ACTRACK_ARENA_HEADER_SIZE;

	h->tailptr = 12345;
	ASSERT_EQ(0, build_write(&b, self->path));
	expect_error(_metadata, &self->r, self->path, "corrupt arena header");
	build_free(&b);
}

/* A size no arena can have is out of range, not "truncated", whatever
 * the file's length (its own test: each case runs the CLI four times,
 * slow under emulation). */
TEST_F(cli, forged_sizes_are_out_of_range)
{
	struct actrack_arena_header *h;
	struct build b;
	char why[128];

	ASSERT_EQ(0, build_init(&b, ACTRACK_ARENA_MIN_SIZE));
	ASSERT_NE(0u, build_process(&b, 10, 1, 1, 1, 1, "x", 1));
	h = b.a.base;
	h->size = 0xfffff000;
	ASSERT_EQ(0, build_write(&b, self->path));
	snprintf(why, sizeof(why), "arena size 4294963200 out of range "
		 "(%u..%u bytes, a multiple of %u)", ACTRACK_ARENA_MIN_SIZE,
		 ACTRACK_ARENA_MAX_SIZE, ACTRACK_BLOCK_ALIGN);
	expect_error(_metadata, &self->r, self->path, why);
	h->size = ACTRACK_ARENA_MIN_SIZE + 1;
	ASSERT_EQ(0, build_write(&b, self->path));
	snprintf(why, sizeof(why), "arena size %u out of range (%u..%u "
		 "bytes, a multiple of %u)", ACTRACK_ARENA_MIN_SIZE + 1,
		 ACTRACK_ARENA_MIN_SIZE, ACTRACK_ARENA_MAX_SIZE,
		 ACTRACK_BLOCK_ALIGN);
	expect_error(_metadata, &self->r, self->path, why);
	build_free(&b);
}

TEST_F(cli, environment_names_the_arena)
{
	char env[300];

	snprintf(env, sizeof(env), "ACTRACK_ARENA=%s", self->path);
	RUN(&self->r, env, "ps");
	EXPECT_EQ(1, self->r.status);
	EXPECT_TRUE(one_line(self->r.err));
	EXPECT_NE(NULL, strstr(self->r.err, self->path));
	EXPECT_NE(NULL, strstr(self->r.err, "No such file or directory"));
}

TEST_F(cli, save_to_an_unwritable_place)
{
	struct build b;

	ASSERT_EQ(0, build_init(&b, ACTRACK_ARENA_MIN_SIZE));
	ASSERT_EQ(0, build_write(&b, self->path));
	build_free(&b);
	RUN(&self->r, NULL, "--arena", self->path, "save",
	    "/nonexistent-dir/out.arena");
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("actrack: /nonexistent-dir/out.arena: No such file or "
		     "directory\n", self->r.err);
}

TEST_HARNESS_MAIN
