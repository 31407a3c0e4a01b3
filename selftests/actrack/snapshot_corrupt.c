// SPDX-License-Identifier: MIT
/*
 * Snapshots of bad input: files that are not arenas, truncated or
 * inconsistent headers (exact errnos), corrupt records inside a valid
 * arena (skipped, flagged, never returned as data), a cycle in the list,
 * random mutations (never a crash or a hang), and a reader that never
 * writes to what it reads.
 */
#include "snapshot_helpers.h"
#include "test_harness.h"

#define SIZE	ACTRACK_ARENA_MIN_SIZE
#define PID	4242
#define TICKS	777ULL

struct refs {
	uint32_t proc, thread, ud, log, module;
};

/* A small valid arena with one of each record. */
static void build_sample(struct __test_metadata *_metadata, struct build *b,
			 struct refs *r)
{
	struct actrack_activity act[2];
	uint8_t id[4] = { 1, 2, 3, 4 };
	int64_t v = -3;

	ASSERT_EQ(0, build_init(b, SIZE));
	r->proc = build_process(b, PID, TICKS, ACTRACK_PHASE_LAUNCHED, 1,
				BUILD_CREATE_MONO, "prog\0-x\0", 8);
	ASSERT_NE(0u, r->proc);
	r->ud = build_user_data(b, PID, TICKS, 0, 256);
	ASSERT_NE(0u, r->ud);
	ASSERT_EQ(0, build_field(b, r->ud, ACTRACK_VALUE_SIGNED, "v", &v, 8));
	build_process_rec(b, r->proc)->user_data = r->ud;
	memset(act, 0, sizeof(act));
	act[0].type = ACTRACK_ACT_TASK_RUN;
	act[0].object = 1;
	act[1].type = ACTRACK_ACT_LOCK_ACQUIRE;
	act[1].object = 0x1000;
	r->thread = build_thread(b, PID, TICKS, PID, "main", 4, 2, act);
	ASSERT_NE(0u, r->thread);
	r->log = build_log(b, PID, TICKS, 4);
	ASSERT_NE(0u, r->log);
	build_log_msg(b, r->log, PID, BUILD_CREATE_MONO, "hello");
	r->module = build_module(b, PID, TICKS, 0x400000, 0x1000, id, 4,
				 "/bin/prog");
	ASSERT_NE(0u, r->module);
}

static int snap_file(const char *path, const void *buf, size_t len,
		     struct actrack_snapshot **s)
{
	int ret = write_file(path, buf, len);

	if (ret)
		return ret;
	return actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, s);
}

FIXTURE(bad) {
	struct build b;
	struct refs r;
	char path[256];
	struct actrack_snapshot *s;
};

FIXTURE_SETUP(bad)
{
	build_sample(_metadata, &self->b, &self->r);
	test_path(self->path, sizeof(self->path), "corrupt");
	self->s = NULL;
}

FIXTURE_TEARDOWN(bad)
{
	actrack_snapshot_free(self->s);
	build_free(&self->b);
	unlink(self->path);
}

static struct actrack_arena_header *hdr(struct build *b)
{
	return b->a.base;
}

TEST_F(bad, sample_is_valid)
{
	const struct actrack_snap_process *p;

	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_FALSE(self->s->corrupt);
	ASSERT_EQ(1u, self->s->nr_processes);
	p = &self->s->processes[0];
	EXPECT_TRUE(p->has_record);
	EXPECT_STREQ("prog -x", p->cmdline);
	EXPECT_EQ(1u, p->nr_values);
	EXPECT_EQ(1u, p->nr_threads);
	EXPECT_EQ(2u, p->threads[0].nr_activities);
	EXPECT_EQ(1u, p->nr_logs);
	EXPECT_EQ(1u, p->nr_modules);
}

TEST_F(bad, missing_file)
{
	EXPECT_EQ(-ENOENT, actrack_snapshot_take(self->path,
						 ACTRACK_SNAP_ARENA_FILE,
						 &self->s));
	EXPECT_EQ(NULL, self->s);
}

TEST_F(bad, empty_and_short_files)
{
	EXPECT_EQ(-EBADMSG, snap_file(self->path, "", 0, &self->s));
	EXPECT_EQ(-EBADMSG, snap_file(self->path, self->b.a.base, 100,
				      &self->s));
	EXPECT_EQ(-EBADMSG, snap_file(self->path, self->b.a.base,
				      ACTRACK_ARENA_HEADER_SIZE - 1, &self->s));
	EXPECT_EQ(NULL, self->s);
}

TEST_F(bad, bad_magic)
{
	hdr(&self->b)->magic ^= 1;
	EXPECT_EQ(-EBADMSG, snap_file(self->path, self->b.a.base, SIZE,
				      &self->s));
}

TEST_F(bad, bad_header_size)
{
	hdr(&self->b)->header_size = 128;
	EXPECT_EQ(-EBADMSG, snap_file(self->path, self->b.a.base, SIZE,
				      &self->s));
}

TEST_F(bad, newer_abi_major)
{
	hdr(&self->b)->abi_major = ACTRACK_ABI_MAJOR + 1;
	EXPECT_EQ(-EPROTONOSUPPORT, snap_file(self->path, self->b.a.base,
					      SIZE, &self->s));
}

TEST_F(bad, newer_abi_minor_is_fine)
{
	hdr(&self->b)->abi_minor = ACTRACK_ABI_MINOR + 1;
	EXPECT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
}

TEST_F(bad, truncated)
{
	EXPECT_EQ(-EUCLEAN, snap_file(self->path, self->b.a.base, SIZE / 2,
				      &self->s));
	EXPECT_EQ(-EUCLEAN, snap_file(self->path, self->b.a.base, SIZE - 64,
				      &self->s));
}

TEST_F(bad, size_field_disagrees)
{
	hdr(&self->b)->size = SIZE * 2;
	EXPECT_EQ(-EUCLEAN, snap_file(self->path, self->b.a.base, SIZE,
				      &self->s));
}

TEST_F(bad, free_pointer_out_of_bounds)
{
	hdr(&self->b)->freeptr = SIZE + 64;
	EXPECT_EQ(-EUCLEAN, snap_file(self->path, self->b.a.base, SIZE,
				      &self->s));
}

TEST_F(bad, random_bytes)
{
	unsigned char *p = self->b.a.base;

	srand(1);
	for (uint32_t i = 0; i < SIZE; i++)
		p[i] = (unsigned char)rand();
	EXPECT_EQ(-EBADMSG, snap_file(self->path, p, SIZE, &self->s));
}

TEST_F(bad, directory_and_bad_arguments)
{
	EXPECT_EQ(-EINVAL, actrack_snapshot_take("/", ACTRACK_SNAP_ARENA_FILE,
						 &self->s));
	EXPECT_EQ(-EINVAL, actrack_snapshot_take(NULL,
						 ACTRACK_SNAP_ARENA_FILE,
						 &self->s));
	EXPECT_EQ(-EINVAL, actrack_snapshot_take(self->path, 0, &self->s));
	EXPECT_EQ(-EINVAL, actrack_snapshot_take(self->path, 0x80000000U |
						 ACTRACK_SNAP_ARENA_FILE,
						 &self->s));
	EXPECT_EQ(-EINVAL, actrack_snapshot_take(self->path,
						 ACTRACK_SNAP_ARENA_FILE,
						 NULL));
	EXPECT_EQ(NULL, self->s);
}

TEST_F(bad, cycle_in_the_list_ends_the_walk)
{
	struct actrack_block *blk = actrack_arena_block(&self->b.a,
							self->r.thread);

	ASSERT_NE(NULL, blk);
	blk->next = self->r.proc;	/* back to the first block */
	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_TRUE(self->s->corrupt);
	/* What was met before the cycle was detected is still reported,
	 * once: records are grouped, never duplicated by the loop. */
	ASSERT_EQ(1u, self->s->nr_processes);
	EXPECT_TRUE(self->s->processes[0].has_record);
	EXPECT_EQ(1u, self->s->processes[0].nr_threads);
}

TEST_F(bad, dangling_user_data_reference)
{
	const struct actrack_snap_process *p;

	/* Not a block boundary, and then a block of another type. */
	build_process_rec(&self->b, self->r.proc)->user_data =
		self->r.ud + 8;
	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_TRUE(self->s->corrupt);
	p = &self->s->processes[0];
	EXPECT_TRUE(p->has_record);
	EXPECT_EQ(0u, p->nr_values);
	EXPECT_EQ(1u, p->nr_threads);
	actrack_snapshot_free(self->s);
	self->s = NULL;

	build_process_rec(&self->b, self->r.proc)->user_data = self->r.log;
	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_EQ(0u, self->s->processes[0].nr_values);
}

TEST_F(bad, user_data_of_another_process_not_shown)
{
	uint32_t other = build_user_data(&self->b, PID + 1, TICKS, 0, 64);
	uint64_t v = 5;

	ASSERT_NE(0u, other);
	ASSERT_EQ(0, build_field(&self->b, other, ACTRACK_VALUE_UNSIGNED,
				 "theirs", &v, 8));
	build_process_rec(&self->b, self->r.proc)->user_data = other;
	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_EQ(0u, self->s->processes[0].nr_values);
}

TEST_F(bad, bad_field_makes_values_unavailable)
{
	struct actrack_user_data *ud = actrack_arena_get(
		&self->b.a, self->r.ud, ACTRACK_TYPE_USER_DATA, sizeof(*ud));
	struct actrack_field *f = (struct actrack_field *)(ud + 1);

	f->record_size = 4000;	/* beyond the block */
	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_TRUE(self->s->corrupt);
	EXPECT_EQ(0u, self->s->processes[0].nr_values);
	EXPECT_EQ(1u, self->s->processes[0].nr_threads);
}

TEST_F(bad, thread_claiming_more_slots_than_fit)
{
	build_thread_rec(&self->b, self->r.thread)->slot_count = 60;
	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_TRUE(self->s->corrupt);
	ASSERT_EQ(1u, self->s->nr_processes);
	EXPECT_EQ(0u, self->s->processes[0].nr_threads);
}

TEST_F(bad, log_claiming_more_entries_than_fit)
{
	struct actrack_log *l = actrack_arena_get(&self->b.a, self->r.log,
						  ACTRACK_TYPE_LOG, sizeof(*l));

	l->capacity = 1000;
	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_TRUE(self->s->corrupt);
	EXPECT_EQ(0u, self->s->processes[0].nr_logs);
}

TEST_F(bad, log_entry_longer_than_its_text)
{
	struct actrack_log *l = actrack_arena_get(&self->b.a, self->r.log,
						  ACTRACK_TYPE_LOG, sizeof(*l));

	l->entries[0].len = ACTRACK_LOG_TEXT_MAX + 10;
	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_TRUE(self->s->corrupt);
	EXPECT_EQ(0u, self->s->processes[0].nr_logs);
}

TEST_F(bad, log_entry_being_written_is_skipped)
{
	struct actrack_log *l = actrack_arena_get(&self->b.a, self->r.log,
						  ACTRACK_TYPE_LOG, sizeof(*l));

	build_log_msg(&self->b, self->r.log, PID, BUILD_CREATE_MONO, "second");
	l->entries[1].seq--;	/* odd: a writer is in the middle of it */
	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_FALSE(self->s->corrupt);
	ASSERT_EQ(1u, self->s->processes[0].nr_logs);
	EXPECT_STREQ("hello", self->s->processes[0].logs[0].text);
}

TEST_F(bad, module_with_oversized_build_id)
{
	struct actrack_module *m = actrack_arena_get(
		&self->b.a, self->r.module, ACTRACK_TYPE_MODULE, sizeof(*m));

	m->build_id_size = ACTRACK_BUILD_ID_MAX + 1;
	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_TRUE(self->s->corrupt);
	EXPECT_EQ(0u, self->s->processes[0].nr_modules);
}

TEST_F(bad, unpublished_records_are_not_data)
{
	build_thread_rec(&self->b, self->r.thread)->owner.data_id = 0;
	build_process_rec(&self->b, self->r.proc)->owner.data_id = 0;
	ASSERT_EQ(0, snap_file(self->path, self->b.a.base, SIZE, &self->s));
	EXPECT_FALSE(self->s->corrupt);
	/* Log and module still name the process; it has no record. */
	ASSERT_EQ(1u, self->s->nr_processes);
	EXPECT_FALSE(self->s->processes[0].has_record);
	EXPECT_EQ(0u, self->s->processes[0].nr_threads);
}

TEST_F(bad, reader_never_writes)
{
	size_t len;
	char *after;

	/* Corrupt enough that a writable reader would set the shared flag. */
	build_thread_rec(&self->b, self->r.thread)->slot_count = 60;
	ASSERT_EQ(0, write_file(self->path, self->b.a.base, SIZE));
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, actrack_snapshot_take(self->path,
						   ACTRACK_SNAP_ARENA_FILE,
						   &self->s));
		EXPECT_TRUE(self->s->corrupt);
		actrack_snapshot_free(self->s);
		self->s = NULL;
	}
	after = read_file(self->path, &len);
	ASSERT_NE(NULL, after);
	ASSERT_EQ(SIZE, len);
	EXPECT_EQ(0, memcmp(after, self->b.a.base, SIZE));
	free(after);
}

/*
 * Random damage to a valid arena: a few bytes at random offsets, biased
 * towards the header and the records.  Whatever happens, the reader
 * returns (0 or a documented errno) without crashing or hanging; run under
 * SANITIZE=1 this also proves it never reads out of bounds.
 */
TEST_F(bad, random_mutations)
{
	unsigned char *orig, *p = self->b.a.base;
	uint32_t used = hdr(&self->b)->freeptr;
	int ok = 0, bad = 0;

	orig = malloc(SIZE);
	ASSERT_NE(NULL, orig);
	memcpy(orig, p, SIZE);
	srand(42);
	for (int round = 0; round < 2000; round++) {
		int n = 1 + rand() % 8, ret;

		memcpy(p, orig, SIZE);
		for (int i = 0; i < n; i++) {
			uint32_t off = (uint32_t)rand() %
				       (rand() % 4 ? used : SIZE);

			if (rand() % 2)
				p[off] = (unsigned char)rand();
			else
				p[off] ^= (unsigned char)(1u << (rand() % 8));
		}
		ret = snap_file(self->path, p, SIZE, &self->s);
		if (!ret) {
			ok++;
			actrack_snapshot_free(self->s);
			self->s = NULL;
		} else {
			bad++;
			ASSERT_TRUE(ret == -EBADMSG || ret == -EUCLEAN ||
				    ret == -EPROTONOSUPPORT)
				TH_LOG("round %d: unexpected %d", round, ret);
		}
	}
	free(orig);
	TH_LOG("2000 mutated arenas: %d read, %d refused", ok, bad);
}

TEST_HARNESS_MAIN
