// SPDX-License-Identifier: MIT
/*
 * An owner is (pid, pid namespace, start time): the kernel keeps the
 * records of "pid 7" of two containers of one uid apart, and so must the
 * readers.  The snapshot grouped by (pid, start_ticks) only, so two such
 * processes came out as one, with each other's threads and values; and a
 * collector judged a container's owners by its own /proc, where that pid
 * is nobody or somebody else, and freed the records of a live process.
 */
#include <sys/stat.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

#define SIZE	(256 * 1024)
#define NS_A	4026531836U
#define NS_B	4026532999U

static void set_ns(struct build *b, uint32_t ref, uint32_t type,
		   uint32_t pid_ns)
{
	struct actrack_owner *o = actrack_arena_get(&b->a, ref, type,
						    sizeof(*o));

	o->pid_ns = pid_ns;
}

static uint32_t self_pid_ns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) ? 0 : (uint32_t)st.st_ino;
}

/* A pid that names no process here right now: a reaped child's. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

FIXTURE(ns) {
	struct build b;
	char path[256];
	struct actrack_snapshot *s;
	struct run r;
};

FIXTURE_SETUP(ns)
{
	ASSERT_EQ(0, build_init(&self->b, SIZE));
	test_path(self->path, sizeof(self->path), "pid-ns");
	self->s = NULL;
	memset(&self->r, 0, sizeof(self->r));
}

FIXTURE_TEARDOWN(ns)
{
	actrack_snapshot_free(self->s);
	build_free(&self->b);
	run_free(&self->r);
	unlink(self->path);
}

/* pid 7, started at tick 100, in namespace @pid_ns: a process record with
 * one value, and one thread named @name. */
static void add_owner(struct __test_metadata *_metadata, struct build *b,
		      uint32_t pid, uint32_t pid_ns, const char *name,
		      int64_t value)
{
	uint32_t proc, th, ud;

	proc = build_process(b, pid, 100, ACTRACK_PHASE_MAIN_LOOP_STARTED, 1, 5,
			     name, (uint32_t)strlen(name) + 1);
	ASSERT_NE(0u, proc);
	set_ns(b, proc, ACTRACK_TYPE_PROCESS, pid_ns);
	ud = build_user_data(b, pid, 100, 0, 128);
	ASSERT_NE(0u, ud);
	set_ns(b, ud, ACTRACK_TYPE_USER_DATA, pid_ns);
	ASSERT_EQ(0, build_field(b, ud, ACTRACK_VALUE_SIGNED, "v", &value,
				 sizeof(value)));
	build_process_rec(b, proc)->user_data = ud;
	th = build_thread(b, pid, 100, pid, name, 4, 0, NULL);
	ASSERT_NE(0u, th);
	set_ns(b, th, ACTRACK_TYPE_THREAD, pid_ns);
}

TEST_F(ns, same_pid_and_start_in_two_namespaces_are_two_processes)
{
	const struct actrack_snap_process *p;

	add_owner(_metadata, &self->b, 7, NS_B, "bee", 2);
	add_owner(_metadata, &self->b, 7, NS_A, "ant", 1);
	ASSERT_EQ(0, write_file(self->path, self->b.a.base, SIZE));
	ASSERT_EQ(0, actrack_snapshot_take(self->path, ACTRACK_SNAP_ARENA_FILE,
					   &self->s));
	EXPECT_FALSE(self->s->corrupt);
	ASSERT_EQ(2u, self->s->nr_processes);
	/* sorted by pid, then namespace */
	for (int i = 0; i < 2; i++) {
		p = &self->s->processes[i];
		EXPECT_EQ(7u, p->pid);
		EXPECT_EQ(i ? NS_B : NS_A, p->pid_ns);
		EXPECT_EQ(100u, p->start_ticks);
		EXPECT_TRUE(p->has_record);
		EXPECT_STREQ(i ? "bee" : "ant", p->cmdline);
		ASSERT_EQ(1u, p->nr_threads);
		EXPECT_STREQ(i ? "bee" : "ant", p->threads[0].name);
		EXPECT_EQ(p->pid_ns, p->threads[0].pid_ns);
		ASSERT_EQ(1u, p->nr_values);
		EXPECT_EQ(i ? 2 : 1, p->values[0].s);
	}
}

TEST_F(ns, a_value_block_of_the_other_namespace_is_not_shown)
{
	const struct actrack_snap_process *p;
	struct actrack_process *rec;
	uint32_t proc, ud;
	int64_t v = 9;

	/* The process record of NS_A points at a block owned by NS_B's
	 * pid 7: a reused block, or a forgery. */
	proc = build_process(&self->b, 7, 100, 0, 1, 5, "ant", 4);
	set_ns(&self->b, proc, ACTRACK_TYPE_PROCESS, NS_A);
	ud = build_user_data(&self->b, 7, 100, 0, 128);
	set_ns(&self->b, ud, ACTRACK_TYPE_USER_DATA, NS_B);
	ASSERT_EQ(0, build_field(&self->b, ud, ACTRACK_VALUE_SIGNED, "v", &v,
				 sizeof(v)));
	rec = build_process_rec(&self->b, proc);
	rec->user_data = ud;
	ASSERT_EQ(0, write_file(self->path, self->b.a.base, SIZE));
	ASSERT_EQ(0, actrack_snapshot_take(self->path, ACTRACK_SNAP_ARENA_FILE,
					   &self->s));
	ASSERT_EQ(1u, self->s->nr_processes);
	p = &self->s->processes[0];
	EXPECT_EQ(NS_A, p->pid_ns);
	EXPECT_EQ(0u, p->nr_values);
}

TEST_F(ns, collect_keeps_owners_of_another_pid_namespace)
{
	struct actrack_collect_stats st;
	uint32_t here = self_pid_ns();
	pid_t gone = dead_pid();

	if (!here)
		SKIP(return, "no /proc/self/ns/pid");
	/* The same dead-here pid: once ours, once a container's. */
	add_owner(_metadata, &self->b, (uint32_t)gone, here, "ours", 1);
	add_owner(_metadata, &self->b, (uint32_t)gone, here + 1, "theirs", 2);
	ASSERT_EQ(0, write_file(self->path, self->b.a.base, SIZE));
	memset(&st, 0xff, sizeof(st));
	ASSERT_EQ(0, actrack_arena_collect(self->path, ACTRACK_SNAP_ARENA_FILE,
					   &st));
	EXPECT_EQ(1u, st.dead);
	EXPECT_EQ(3u, st.records_freed);	/* process, values, thread */
	EXPECT_EQ(0u, st.alive);
	EXPECT_EQ(1u, st.foreign);
	ASSERT_EQ(0, actrack_snapshot_take(self->path, ACTRACK_SNAP_ARENA_FILE,
					   &self->s));
	ASSERT_EQ(1u, self->s->nr_processes);
	EXPECT_EQ(here + 1, self->s->processes[0].pid_ns);
	EXPECT_STREQ("theirs", self->s->processes[0].cmdline);
	EXPECT_EQ(1u, self->s->processes[0].nr_threads);
}

TEST_F(ns, cli_collect_says_what_it_kept_and_why)
{
	char *argv[] = { "actrack", "--arena", self->path, "collect", NULL };
	uint32_t here = self_pid_ns();
	pid_t gone = dead_pid();

	if (!here)
		SKIP(return, "no /proc/self/ns/pid");
	add_owner(_metadata, &self->b, (uint32_t)gone, here + 1, "theirs", 2);
	ASSERT_EQ(0, write_file(self->path, self->b.a.base, SIZE));
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("collected 0 exited processes (0 records); 0 running "
		     "processes kept; 1 process of another pid namespace "
		     "kept\n", self->r.out);
}

/* Our own pid and start time, claimed by a process of another namespace:
 * ps must not call it running (nor exited): it cannot tell. */
TEST_F(ns, ps_does_not_judge_a_process_of_another_namespace)
{
	char *argv[] = { "actrack", "--arena", self->path, "ps", NULL };
	struct actrack_arena_header *h = self->b.a.base;
	uint32_t here = self_pid_ns();
	uint64_t ticks;
	char line[128];
	uint32_t ref;

	if (!here)
		SKIP(return, "no /proc/self/ns/pid");
	ASSERT_EQ(0, actrack_read_start_ticks(getpid(), &ticks));
	/* this boot's arena, or ps says '-' for everything */
	ASSERT_EQ(0, actrack_boot_id(h->boot_id));
	ref = build_process(&self->b, (uint32_t)getpid(), ticks, 0, 1, 5,
			    "theirs", 7);
	ASSERT_NE(0u, ref);
	set_ns(&self->b, ref, ACTRACK_TYPE_PROCESS, here + 1);
	ref = build_process(&self->b, (uint32_t)getpid(), ticks, 0, 1, 5,
			    "ours", 5);
	ASSERT_NE(0u, ref);
	set_ns(&self->b, ref, ACTRACK_TYPE_PROCESS, here);
	ASSERT_EQ(0, write_file(self->path, self->b.a.base, SIZE));
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	snprintf(line, sizeof(line), "%7d  running", (int)getpid());
	EXPECT_NE(NULL, strstr(self->r.out, line));
	snprintf(line, sizeof(line), "%7d  -      ", (int)getpid());
	EXPECT_NE(NULL, strstr(self->r.out, line)) {
		TH_LOG("ps said:\n%s", self->r.out);
	}
}

TEST_HARNESS_MAIN
