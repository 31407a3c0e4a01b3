// SPDX-License-Identifier: MIT
/*
 * Which arena and which boot, as the public API names them for analyzers
 * that link only the installed library (the CLI among them):
 * actrack_arena_path() reports the library's own choice (opts, then
 * $ACTRACK_ARENA, then the module, then the per-uid file) and
 * actrack_boot_id() the 16 bytes a file arena's header records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "snapshot_helpers.h"
#include "test_harness.h"

#define BOOT_ID_FILE	"/proc/sys/kernel/random/boot_id"

/* The boot id as the test reads it itself: 0 or -1 (unreadable). */
static int proc_boot_id(uint8_t id[16])
{
	char text[40] = "";
	FILE *f = fopen(BOOT_ID_FILE, "r");
	int k = 0;

	if (!f)
		return -1;
	if (!fgets(text, sizeof(text), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	for (const char *p = text; *p && *p != '\n'; ) {
		if (*p == '-') {
			p++;
			continue;
		}
		if (k == 16 || sscanf(p, "%2hhx", &id[k]) != 1)
			return -1;
		k++;
		p += 2;
	}
	return k == 16 ? 0 : -1;
}

TEST(boot_id_is_the_kernels)
{
	static const uint8_t zero[16];
	uint8_t want[16], id[16];

	if (proc_boot_id(want))
		SKIP(return, "no readable " BOOT_ID_FILE);
	memset(id, 0xff, sizeof(id));
	ASSERT_EQ(0, actrack_boot_id(id));
	EXPECT_EQ(0, memcmp(want, id, sizeof(id)));
	EXPECT_NE(0, memcmp(zero, id, sizeof(id)));
	EXPECT_EQ(-EINVAL, actrack_boot_id(NULL));
}

TEST(boot_id_parses_exactly_a_uuid)
{
	static const uint8_t want[16] = {
		0x01, 0x23, 0xab, 0xcd, 0x45, 0x67, 0x89, 0xef,
		0x0a, 0x1b, 0xc2, 0xd3, 0xe4, 0xf5, 0xa6, 0xb7,
	};
	static const char good[] = "0123abcd-4567-89ef-0a1B-c2d3e4f5a6b7\n";
	static const char *const bad[] = {
		"",
		"\n",
		"0123abcd-4567-89ef-0a1b-c2d3e4f5a6b\n",	/* short */
		"0123abcd-4567-89ef-0a1b-c2d3e4f5a6b7a\n",	/* long */
		"0123abcd-4567-89ef-0a1b-c2d3e4f5a6b7\n\n",
		"0123abcd-4567-89ef-0a1b-c2d3e4f5a6b7 ",
		"0123abcd04567-89ef-0a1b-c2d3e4f5a6b7\n",	/* no dash */
		"0123abcd-4567-89ef-0a1b-c2d3e4f5a6b-7\n",	/* moved */
		"0123abcg-4567-89ef-0a1b-c2d3e4f5a6b7\n",	/* not hex */
		"{123abcd-4567-89ef-0a1b-c2d3e4f5a6b7}",
	};
	static const uint8_t zero[16];
	uint8_t id[16];

	memset(id, 0xff, sizeof(id));
	ASSERT_EQ(0, __actrack_parse_boot_id(good, strlen(good), id));
	EXPECT_EQ(0, memcmp(want, id, sizeof(id)));
	/* Without its newline too. */
	memset(id, 0xff, sizeof(id));
	ASSERT_EQ(0, __actrack_parse_boot_id(good, strlen(good) - 1, id));
	EXPECT_EQ(0, memcmp(want, id, sizeof(id)));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(id, 0xff, sizeof(id));
		EXPECT_EQ(-EBADMSG, __actrack_parse_boot_id(bad[i],
							    strlen(bad[i]),
							    id))
			TH_LOG("accepted \"%s\"", bad[i]);
		EXPECT_EQ(0, memcmp(zero, id, sizeof(id)));
	}
}

/* What a new file arena records is what actrack_boot_id() says: the CLI
 * compares the two to tell this boot's arenas from older ones. */
TEST(new_file_arena_records_this_boot)
{
	char path[256];
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path,
		.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
	};
	struct actrack_snapshot *s;
	uint8_t id[16];

	if (actrack_boot_id(id))
		SKIP(return, "no readable " BOOT_ID_FILE);
	test_path(path, sizeof(path), "boot-id");
	ASSERT_EQ(0, actrack_init(&o));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	EXPECT_EQ(0, memcmp(id, s->header.boot_id, sizeof(id)));
	actrack_snapshot_free(s);
	unlink(path);
}

TEST(arena_path_follows_the_librarys_order)
{
	struct actrack_opts o = { .sz = sizeof(o) };
	char buf[256], def[64];
	bool module = access(ACTRACK_DEVICE_PATH, F_OK) == 0;

	snprintf(def, sizeof(def), "/dev/shm/actrack-%u",
		 (unsigned int)getuid());

	/* An explicit file first, whatever the environment says. */
	ASSERT_EQ(0, setenv(ACTRACK_ENV_ARENA, "/tmp/from-env", 1));
	o.arena_path = "/tmp/from-opts";
	EXPECT_EQ(ACTRACK_BACKEND_FILE, actrack_arena_path(&o, buf,
							   sizeof(buf)));
	EXPECT_STREQ("/tmp/from-opts", buf);

	/* Then $ACTRACK_ARENA, before the module. */
	o.arena_path = NULL;
	EXPECT_EQ(ACTRACK_BACKEND_FILE, actrack_arena_path(&o, buf,
							   sizeof(buf)));
	EXPECT_STREQ("/tmp/from-env", buf);
	EXPECT_EQ(ACTRACK_BACKEND_FILE, actrack_arena_path(NULL, buf,
							   sizeof(buf)));
	EXPECT_STREQ("/tmp/from-env", buf);

	/* An empty variable is no variable. */
	ASSERT_EQ(0, setenv(ACTRACK_ENV_ARENA, "", 1));
	o.flags = ACTRACK_INIT_NO_MODULE;
	EXPECT_EQ(ACTRACK_BACKEND_FILE, actrack_arena_path(&o, buf,
							   sizeof(buf)));
	EXPECT_STREQ(def, buf);

	/* Then the module if there is one, else the per-uid file. */
	ASSERT_EQ(0, unsetenv(ACTRACK_ENV_ARENA));
	EXPECT_EQ(ACTRACK_BACKEND_FILE, actrack_arena_path(&o, buf,
							   sizeof(buf)));
	EXPECT_STREQ(def, buf);
	EXPECT_EQ(module ? ACTRACK_BACKEND_MODULE : ACTRACK_BACKEND_FILE,
		  actrack_arena_path(NULL, buf, sizeof(buf)));
	EXPECT_STREQ(module ? ACTRACK_DEVICE_PATH : def, buf);
}

TEST(arena_path_errors)
{
	struct actrack_opts o = { .sz = sizeof(o) };
	struct {
		struct actrack_opts o;
		uint64_t tail;
	} big = { .o = { .sz = sizeof(big) } };
	char buf[64];
	size_t n = strlen("/tmp/exact");

	ASSERT_EQ(0, setenv(ACTRACK_ENV_ARENA, "/tmp/exact", 1));
	EXPECT_EQ(-EINVAL, actrack_arena_path(NULL, NULL, 64));
	/* The NUL must fit too; nothing is written when it does not. */
	memset(buf, 'x', sizeof(buf));
	EXPECT_EQ(-ENAMETOOLONG, actrack_arena_path(NULL, buf, n));
	EXPECT_EQ('x', buf[0]);
	EXPECT_EQ(-ENAMETOOLONG, actrack_arena_path(NULL, buf, 0));
	EXPECT_EQ(ACTRACK_BACKEND_FILE, actrack_arena_path(NULL, buf, n + 1));
	EXPECT_STREQ("/tmp/exact", buf);

	/* Options are checked as actrack_init() checks them. */
	o.flags = 1U << 7;
	EXPECT_EQ(-EINVAL, actrack_arena_path(&o, buf, sizeof(buf)));
	EXPECT_EQ(-EINVAL, actrack_init(&o));
	o.flags = 0;
	o.sz = sizeof(size_t);
	EXPECT_EQ(-EINVAL, actrack_arena_path(&o, buf, sizeof(buf)));
	o.sz = sizeof(o);
	o.arena_path = "";
	EXPECT_EQ(-EINVAL, actrack_arena_path(&o, buf, sizeof(buf)));
	EXPECT_EQ(-EINVAL, actrack_init(&o));
	big.tail = 1;
	EXPECT_EQ(-E2BIG, actrack_arena_path(&big.o, buf, sizeof(buf)));
	big.tail = 0;
	EXPECT_EQ(ACTRACK_BACKEND_FILE,
		  actrack_arena_path(&big.o, buf, sizeof(buf)));
	EXPECT_STREQ("/tmp/exact", buf);
}

/* The named arena is the one the library then uses: attaching creates
 * that file, and the default snapshot and collection read it. */
TEST(arena_path_is_where_the_library_goes)
{
	struct actrack_collect_stats st;
	struct actrack_snapshot *s;
	char path[256], named[256];

	test_path(path, sizeof(path), "named");
	ASSERT_EQ(0, setenv(ACTRACK_ENV_ARENA, path, 1));
	ASSERT_EQ(ACTRACK_BACKEND_FILE,
		  actrack_arena_path(NULL, named, sizeof(named)));
	EXPECT_STREQ(path, named);
	EXPECT_EQ(-ENOENT, access(named, F_OK) ? -errno : 0);
	EXPECT_EQ(-ENOENT, actrack_snapshot_take(NULL, 0, &s));
	EXPECT_EQ(-ENOENT, actrack_arena_collect(NULL, 0, &st));

	ASSERT_EQ(0, actrack_init(NULL));
	EXPECT_EQ(ACTRACK_BACKEND_FILE, actrack_backend());
	EXPECT_EQ(0, access(named, F_OK));
	ASSERT_EQ(0, actrack_snapshot_take(NULL, 0, &s));
	EXPECT_EQ(1, s->nr_processes);
	EXPECT_EQ((uint32_t)getpid(), s->processes[0].pid);
	actrack_snapshot_free(s);
	ASSERT_EQ(0, actrack_arena_collect(NULL, 0, &st));
	EXPECT_EQ(1, st.alive);
	EXPECT_EQ(0, st.dead);
	unlink(path);
}

TEST_HARNESS_MAIN
