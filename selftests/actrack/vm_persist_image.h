/* SPDX-License-Identifier: MIT */
/*
 * Part of vm_persist.c (vm_persist.h), included by it alone: the checks
 * of the previous boot's image, by the library, by the CLI (stats, ps,
 * dump, hangs, save --previous-boot) and by the ioctls, one checker for
 * both ways to die.
 */
#ifndef ACTRACK_VM_PERSIST_IMAGE_H
#define ACTRACK_VM_PERSIST_IMAGE_H

#include "vm_persist.h"
#include "vm_persist_uids.h"

/*
 * `actrack stats` after the reset, nothing tracked yet: root is told
 * that the image of boot @boot is there; nobody is told nothing.
 */
static void check_stats_previous(struct __test_metadata *_metadata,
				 const uint8_t *b)
{
	char *stats[] = { "actrack", "stats", NULL };
	char want[160];
	struct run r;

	snprintf(want, sizeof(want), "\nprevious boot: image of boot %02x%02x"
		 "%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x"
		 " kept, read with --previous-boot\n", b[0], b[1], b[2], b[3],
		 b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
	ASSERT_EQ(0, run_cli(&r, NULL, stats));
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no '%s'", want + 1);
	EXPECT_NE(NULL, strstr(r.out, "\nprevious boot: its machine was last "
				      "alive at "));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	ASSERT_EQ(0, run_program_as(&r, cli_path(), NULL, NOBODY, stats));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(NULL, strstr(r.out, "previous boot"));
	LOG_ON_FAILURE(&r);
	run_free(&r);
}

static void check_cli(struct __test_metadata *_metadata, uint32_t pid,
		      uint64_t value, uint64_t end)
{
	char *ps[] = { "actrack", "ps", "--previous-boot", NULL };
	char *dump[] = { "actrack", "dump", "--previous-boot", NULL };
	char *hangs[] = { "actrack", "hangs", "--previous-boot", NULL };
	char path[PATH_MAX], want[256];
	char *save[] = { "actrack", "save", "--previous-boot", path, NULL };
	struct actrack_snapshot *s;
	struct run r;

	snprintf(path, sizeof(path), "%s/previous.arena",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");

	ASSERT_EQ(0, run_cli(&r, NULL, ps));
	EXPECT_EQ(0, r.status);
	snprintf(want, sizeof(want), "\n%7u  %-7s  %-17s  ", pid, "-",
		 actrack_phase_name(VICTIM_PHASE));
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no '%s'", want + 1);
	EXPECT_NE(NULL, strstr(r.out, "/vm_persist\n"));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	ASSERT_EQ(0, run_cli(&r, NULL, dump));
	EXPECT_EQ(0, r.status);
	snprintf(want, sizeof(want), "process %u (%s) ", pid,
		 actrack_phase_name(VICTIM_PHASE));
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "task %llu", VICTIM_TASK);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "persist = %llu",
		 (unsigned long long)value);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no '%s'", want);
	LOG_ON_FAILURE(&r);
	run_free(&r);

	/*
	 * Judged from the image, its ages measured to the machine's last
	 * heartbeat: who was blocked on whom when it died.  The two lockers
	 * in a cycle; the reader's wait and main's lock, held by nobody
	 * known, hangs (nothing of a dead boot can be checked).
	 */
	ASSERT_EQ(0, run_cli(&r, NULL, hangs));
	EXPECT_EQ(3, r.status);
	EXPECT_NE(NULL, strstr(r.out, "note: arena from another boot: ages "
				      "are relative to the last second its "
				      "machine was alive ("));
	EXPECT_NE(NULL, strstr(r.out, "DEADLOCK: "));
	snprintf(want, sizeof(want), "'%s'", VICTIM_AB);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no %s", want);
	snprintf(want, sizeof(want), "'%s'", VICTIM_BA);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no %s", want);
	snprintf(want, sizeof(want), "'%s'", VICTIM_IO);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("no %s", want);
	EXPECT_NE(NULL, strstr(r.out, "not a live arena: nothing can be "
				      "checked"));
	EXPECT_NE(NULL, strstr(r.out, "\n4 hung threads, 1 deadlock ("));
	LOG_ON_FAILURE(&r);
	run_free(&r);

	/* Kept in a file: the same victim, and as its save time no time of
	 * ours but its end, the machine's last heartbeat. */
	ASSERT_EQ(0, run_cli(&r, NULL, save));
	EXPECT_EQ(0, r.status);
	LOG_ON_FAILURE(&r);
	run_free(&r);
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	ASSERT_NE(NULL, find_victim(s));
	EXPECT_EQ(pid, find_victim(s)->pid);
	EXPECT_EQ(end, s->header.saved_mono_ns);
	actrack_snapshot_free(s);

	/* Not root: refused, by the ioctl and by the CLI. */
	ASSERT_EQ(0, run_program_as(&r, cli_path(), NULL, NOBODY, ps));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "Operation not permitted"));
	LOG_ON_FAILURE(&r);
	run_free(&r);
}

/*
 * The victim's threads in image @s: each locker holds the lock the other
 * waits for, the reader waits for its bytes, and the image ends at its
 * machine's last heartbeat, which came at least a second after each wait
 * began (they began VICTIM_WAIT_SECS before the death; a beat a second).
 */
static void check_threads(struct __test_metadata *_metadata,
			  const struct actrack_snapshot *s,
			  const struct actrack_snap_process *p)
{
	const struct actrack_snap_thread *ab = snap_thread_named(p, VICTIM_AB);
	const struct actrack_snap_thread *ba = snap_thread_named(p, VICTIM_BA);
	const struct actrack_snap_thread *io = snap_thread_named(p, VICTIM_IO);
	uint64_t end = s->header.saved_mono_ns;

	ASSERT_EQ(1, ab->nr_held);
	ASSERT_EQ(1, ba->nr_held);
	EXPECT_EQ(ab->held[0], ba->activities[0].a.object);
	EXPECT_EQ(ba->held[0], ab->activities[0].a.object);
	EXPECT_NE(ab->held[0], ba->held[0]);
	EXPECT_EQ(VICTIM_IO_BYTES, io->activities[0].a.info);
	EXPECT_EQ(0, io->nr_held);

	EXPECT_NE(0, end);
	EXPECT_EQ(end, s->taken_mono_ns);
	EXPECT_NE(0, s->header.saved_real_ns);
	for (uint32_t i = 0; i < p->nr_threads; i++) {
		const struct actrack_snap_thread *t = &p->threads[i];
		uint64_t began = t->activities[t->nr_activities - 1].a.time_ns;

		EXPECT_LE(began + 1000000000ULL, end)
			TH_LOG("thread %u: its wait began at %llu ns, the "
			       "image ends at %llu", t->tid,
			       (unsigned long long)began,
			       (unsigned long long)end);
	}
}

/*
 * The boot after a death: the victim of the boot before, exactly, in
 * *@value which way it died (VICTIM_VALUE: a panic, VICTIM_VALUE_HANG: a
 * hard hang).  The one checker of both ways.
 */
static void second_boot(struct __test_metadata *_metadata, uint64_t *value)
{
	const struct actrack_snap_process *p;
	const struct actrack_snap_activity *act;
	struct actrack_snapshot *s;
	uint8_t boot[16];

	ASSERT_EQ(0, actrack_snapshot_take(NULL, ACTRACK_SNAP_PREVIOUS_BOOT,
					   &s));
	EXPECT_FALSE(s->corrupt);
	EXPECT_EQ(0, s->nr_torn);
	ASSERT_EQ(0, actrack_boot_id(boot));
	EXPECT_NE(0, memcmp(boot, s->header.boot_id, sizeof(boot)));
	EXPECT_EQ(0, s->header.uid);
	p = find_victim(s);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(p->pid, p->threads[0].tid);
	ASSERT_EQ(1, p->nr_values);
	EXPECT_STREQ("persist", p->values[0].name);
	EXPECT_EQ(ACTRACK_VALUE_UNSIGNED, p->values[0].type);
	*value = p->values[0].u;
	EXPECT_TRUE(*value == VICTIM_VALUE || *value == VICTIM_VALUE_HANG)
		TH_LOG("persist = %llu", (unsigned long long)*value);
	act = &p->threads[0].activities[0];
	EXPECT_EQ(ACTRACK_ACT_TASK_RUN, act->a.type);
	ASSERT_EQ(1, act->nr_values);
	EXPECT_STREQ("step", act->values[0].name);
	EXPECT_EQ(ACTRACK_VALUE_STRING, act->values[0].type);
	EXPECT_STREQ(VICTIM_STEP, (const char *)act->values[0].bytes);
	check_threads(_metadata, s, p);
	check_image_uids(_metadata);
	check_stats_previous(_metadata, s->header.boot_id);
	check_cli(_metadata, p->pid, *value, s->header.saved_mono_ns);
	actrack_snapshot_free(s);

	check_nobody_selects(_metadata);
}

#endif /* ACTRACK_VM_PERSIST_IMAGE_H */
