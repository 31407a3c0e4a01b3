// SPDX-License-Identifier: MIT
/*
 * Snapshots of user data: every value type written by the library in one
 * process (activity, process and global data) reads back exactly in
 * another process; the process record (phase, cmdline, parent) too.
 */
#include "snapshot_helpers.h"
#include "test_harness.h"

static const uint8_t raw_value[5] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
static const char ref_string[] = "referenced string";
static uint64_t ref_raw[4] = { 1, 2, 3, 4 };

/* The same eight fields, with a per-block suffix in the string value. */
static void set_all(struct actrack_user_data *ud, const char *tag)
{
	char s[64];

	snprintf(s, sizeof(s), "value of %s", tag);
	if (actrack_set_raw(ud, "raw", raw_value, sizeof(raw_value)) ||
	    actrack_set_string(ud, "string", s) ||
	    actrack_set_bool(ud, "bool", true) ||
	    actrack_set_char(ud, "char", 'Q') ||
	    actrack_set_int(ud, "signed", -1234567890123LL) ||
	    actrack_set_uint(ud, "unsigned", 0xfedcba9876543210ULL) ||
	    actrack_set_raw_ref(ud, "raw_ref", ref_raw, sizeof(ref_raw)) ||
	    actrack_set_string_ref(ud, "string_ref", ref_string))
		_exit(20);
}

static void write_all_types(void *arg)
{
	uint32_t tok;

	actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
	set_all(actrack_process_data(), "process");
	set_all(actrack_global_data(), "global");
	if (actrack_thread_init("valuer"))
		_exit(21);
	tok = actrack_push_task(77);
	set_all(actrack_activity_data(tok), "activity");
}

static void check_all(struct __test_metadata *_metadata,
		      const struct actrack_value *v, uint32_t nr,
		      const char *tag)
{
	const struct actrack_value *f;
	char s[64];

	snprintf(s, sizeof(s), "value of %s", tag);
	ASSERT_EQ(8u, nr);
	/* In the order they were first set. */
	EXPECT_STREQ("raw", v[0].name);
	EXPECT_STREQ("string", v[1].name);
	EXPECT_STREQ("bool", v[2].name);
	EXPECT_STREQ("char", v[3].name);
	EXPECT_STREQ("signed", v[4].name);
	EXPECT_STREQ("unsigned", v[5].name);
	EXPECT_STREQ("raw_ref", v[6].name);
	EXPECT_STREQ("string_ref", v[7].name);

	f = &v[0];
	EXPECT_EQ(ACTRACK_VALUE_RAW, f->type);
	ASSERT_EQ(sizeof(raw_value), f->size);
	EXPECT_EQ(0, memcmp(f->bytes, raw_value, sizeof(raw_value)));
	f = &v[1];
	EXPECT_EQ(ACTRACK_VALUE_STRING, f->type);
	EXPECT_EQ(strlen(s), f->size);
	EXPECT_STREQ(s, (const char *)f->bytes);
	f = &v[2];
	EXPECT_EQ(ACTRACK_VALUE_BOOL, f->type);
	EXPECT_EQ(true, f->b);
	f = &v[3];
	EXPECT_EQ(ACTRACK_VALUE_CHAR, f->type);
	EXPECT_EQ('Q', f->c);
	f = &v[4];
	EXPECT_EQ(ACTRACK_VALUE_SIGNED, f->type);
	EXPECT_EQ(-1234567890123LL, f->s);
	f = &v[5];
	EXPECT_EQ(ACTRACK_VALUE_UNSIGNED, f->type);
	EXPECT_EQ(0xfedcba9876543210ULL, f->u);
	/* fork() keeps the layout: the child's addresses are ours. */
	f = &v[6];
	EXPECT_EQ(ACTRACK_VALUE_RAW_REF, f->type);
	EXPECT_EQ((uint64_t)(uintptr_t)ref_raw, f->ref.address);
	EXPECT_EQ(sizeof(ref_raw), f->ref.size);
	f = &v[7];
	EXPECT_EQ(ACTRACK_VALUE_STRING_REF, f->type);
	EXPECT_EQ((uint64_t)(uintptr_t)ref_string, f->ref.address);
	EXPECT_EQ(strlen(ref_string), f->ref.size);
}

TEST(every_type_in_activity_process_and_global_data)
{
	const struct actrack_snap_process *p;
	const struct actrack_snap_thread *t;
	struct actrack_snapshot *s;
	struct writer w;
	char path[256];

	test_path(path, sizeof(path), "values");
	ASSERT_EQ(0, writer_start(&w, path, 8, 0, write_all_types, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));

	EXPECT_FALSE(s->corrupt);
	EXPECT_EQ(0u, s->nr_torn);
	EXPECT_EQ(1u, s->nr_processes);
	p = snap_find(s, (uint32_t)w.pid);
	ASSERT_NE(NULL, p);
	EXPECT_TRUE(p->has_record);
	EXPECT_EQ(w.start_ticks, p->start_ticks);
	EXPECT_EQ(ACTRACK_PHASE_MAIN_LOOP_STARTED, p->phase);
	EXPECT_EQ((uint32_t)getpid(), p->parent_pid);
	/* The child runs this binary, forked without exec: our argv. */
	EXPECT_NE(NULL, strstr(p->cmdline, "snapshot_values"));
	check_all(_metadata, p->values, p->nr_values, "process");
	check_all(_metadata, s->global_values, s->nr_global_values, "global");

	ASSERT_EQ(1u, p->nr_threads);
	t = &p->threads[0];
	EXPECT_EQ((uint32_t)w.pid, t->tid);
	EXPECT_STREQ("valuer", t->name);
	ASSERT_EQ(1u, t->nr_activities);
	EXPECT_EQ(ACTRACK_ACT_TASK_RUN, t->activities[0].a.type);
	EXPECT_EQ(77u, t->activities[0].a.object);
	check_all(_metadata, t->activities[0].values,
		  t->activities[0].nr_values, "activity");

	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
}

static void rewrite(void *arg)
{
	struct actrack_user_data *ud = actrack_process_data();

	/* Rewrites in place keep one field per name; the last value wins. */
	for (int i = 0; i < 100; i++)
		if (actrack_set_int(ud, "counter", i) ||
		    actrack_set_string(ud, "state", i % 2 ? "odd" : "even"))
			_exit(20);
	if (actrack_set_string(ud, "state", "longer than any before") &&
	    actrack_set_string(ud, "state", "done"))
		_exit(21);
}

TEST(rewritten_values_read_back_last)
{
	const struct actrack_snap_process *p;
	const struct actrack_value *v;
	struct actrack_snapshot *s;
	struct writer w;
	char path[256];

	test_path(path, sizeof(path), "rewrite");
	ASSERT_EQ(0, writer_start(&w, path, 8, 0, rewrite, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	p = snap_find(s, (uint32_t)w.pid);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(2u, p->nr_values);
	v = value_find(p->values, p->nr_values, "counter");
	ASSERT_NE(NULL, v);
	EXPECT_EQ(99, v->s);
	v = value_find(p->values, p->nr_values, "state");
	ASSERT_NE(NULL, v);
	/* Either the longer string fit its record or "done" replaced it. */
	if (strcmp((const char *)v->bytes, "done"))
		EXPECT_STREQ("longer than any before", (const char *)v->bytes);
	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
}

static void nothing(void *arg)
{
}

TEST(process_without_threads_or_data)
{
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s;
	struct writer w;
	char path[256];

	test_path(path, sizeof(path), "bare");
	ASSERT_EQ(0, writer_start(&w, path, 8, ACTRACK_INIT_NO_MODULES,
				  nothing, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	ASSERT_EQ(1u, s->nr_processes);
	p = &s->processes[0];
	EXPECT_EQ((uint32_t)w.pid, p->pid);
	EXPECT_TRUE(p->has_record);
	EXPECT_EQ(ACTRACK_PHASE_LAUNCHED, p->phase);
	EXPECT_EQ(0u, p->nr_threads);
	EXPECT_EQ(0u, p->nr_values);
	EXPECT_EQ(0u, p->nr_logs);
	EXPECT_EQ(0u, p->nr_modules);
	EXPECT_EQ(NULL, p->threads);
	EXPECT_EQ(0u, s->nr_global_values);
	EXPECT_EQ(ACTRACK_ARENA_MAGIC, s->header.magic);
	EXPECT_EQ(ACTRACK_FILE_DEFAULT_SIZE, s->header.size);
	EXPECT_LT(0u, s->used_bytes);
	EXPECT_EQ(s->header.size, s->used_bytes + s->free_bytes);
	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
}

TEST_HARNESS_MAIN
