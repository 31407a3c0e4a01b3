/* SPDX-License-Identifier: MIT */
/*
 * Part of vm_persist.c (vm_persist.h), included by it alone: the previous
 * boot's image scribbled on through /dev/mem (a memmap= region only) and
 * what the library and the CLI make of it.
 */
#ifndef ACTRACK_VM_PERSIST_CORRUPT_H
#define ACTRACK_VM_PERSIST_CORRUPT_H

#include "vm_persist.h"

/*
 * The module's header of one half of the region, as kmod/persist.c
 * writes it (version 3): what the corruption case scribbles on.
 */
struct persist_header {
	uint64_t magic;
	uint32_t version;
	uint32_t arena_size;
	uint64_t generation;
	uint64_t half_size;
	uint8_t boot_id[16];
	uint32_t nr_slots;
	uint32_t crc;
	uint64_t alive_mono_ns;
	uint64_t alive_real_ns;
	struct {
		uint32_t flags;
		uint32_t uid;
	} slots[1];
};
#define PERSIST_MAGIC	0x3154534942434b41ULL
#define SLOT0_UID	offsetof(struct persist_header, slots[0].uid)

/* The physical address of the previous boot's half, or 0. */
static uint64_t previous_half(int mem)
{
	struct persist_header h;
	uint8_t boot[16];

	if (actrack_boot_id(boot))
		return 0;
	for (int i = 0; i < 2; i++) {
		uint64_t at = REGION_START + i * REGION_HALF;

		if (pread(mem, &h, sizeof(h), (off_t)at) != sizeof(h))
			return 0;
		if (h.magic == PERSIST_MAGIC && h.version == 3 &&
		    memcmp(h.boot_id, boot, sizeof(boot)))
			return at;
	}
	return 0;
}

/* ps, dump and hangs --previous-boot: each exits @status, says @err. */
static void check_cli_refused(struct __test_metadata *_metadata, int status,
			      const char *err)
{
	static const char *const cmds[] = { "ps", "dump", "hangs" };

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *argv[] = { "actrack", (char *)cmds[i], "--previous-boot",
				 NULL };
		struct run r;

		ASSERT_EQ(0, run_cli(&r, NULL, argv));
		EXPECT_EQ(status, r.status) TH_LOG("%s", cmds[i]);
		EXPECT_NE(NULL, strstr(r.err, err))
			TH_LOG("%s: no '%s'", cmds[i], err);
		LOG_ON_FAILURE(&r);
		run_free(&r);
	}
}

/* Run `actrack @cmd --previous-boot`: its output in @r. */
static void run_previous(struct __test_metadata *_metadata, struct run *r,
			 const char *cmd)
{
	char *argv[] = { "actrack", (char *)cmd, "--previous-boot", NULL };

	ASSERT_EQ(0, run_cli(r, NULL, argv));
}

/*
 * The records after @arena's header overwritten (through @mem, the
 * module unloaded): the image is read, what failed validation is
 * skipped (here: all of the victim, whose records begin there) and
 * said, by each command, which exits 0.  Put back after.
 */
static void scribble_records(struct __test_metadata *_metadata, int mem,
			     uint64_t arena, const char *param)
{
	static const char note[] = "note: the arena is corrupt: records "
				   "that failed validation were skipped";
	char saved[256], junk[256];
	struct actrack_snapshot *s;
	off_t at = (off_t)(arena + ACTRACK_ARENA_HEADER_SIZE);
	struct run r;

	memset(junk, 0xa5, sizeof(junk));
	ASSERT_EQ(sizeof(saved), pread(mem, saved, sizeof(saved), at));
	ASSERT_EQ(sizeof(junk), pwrite(mem, junk, sizeof(junk), at));
	ASSERT_EQ(0, reload(param));
	ASSERT_EQ(0, actrack_snapshot_take(NULL, ACTRACK_SNAP_PREVIOUS_BOOT,
					   &s));
	EXPECT_TRUE(s->corrupt);
	EXPECT_EQ(0, s->nr_processes);
	actrack_snapshot_free(s);

	/* ps: the bare table, the note on stderr. */
	run_previous(_metadata, &r, "ps");
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0, strncmp(r.out, "    PID  STATE", 14));
	EXPECT_TRUE(strchr(r.out, '\n') && !strchr(r.out, '\n')[1]);
	EXPECT_NE(NULL, strstr(r.err, note));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	run_previous(_metadata, &r, "dump");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "\n0 processes, 0 threads, "));
	EXPECT_NE(NULL, strstr(r.out, " bytes used, corrupt yes\n"));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	/* hangs: no verdict is believed silently. */
	run_previous(_metadata, &r, "hangs");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, note));
	EXPECT_NE(NULL, strstr(r.out, "no hung threads (0 threads in 0 "
				      "processes;"));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	ASSERT_EQ(0, reload(""));
	ASSERT_EQ(sizeof(saved), pwrite(mem, saved, sizeof(saved), at));
}

#endif /* ACTRACK_VM_PERSIST_CORRUPT_H */
