// SPDX-License-Identifier: MIT
/*
 * The actrack CLI on an arena written by the library in a live process:
 * the expected lines of dump and ps (values taken from the process we
 * started and from a snapshot), --pid, and `save` giving an image whose
 * dump is identical.
 */
#include "snapshot_helpers.h"
#include "test_harness.h"

static int the_lock;

static void serve(void *arg)
{
	uint32_t tok;

	actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
	actrack_set_string(actrack_process_data(), "role", "front \"end\"");
	actrack_set_int(actrack_process_data(), "port", 8080);
	actrack_log("listening on %d", 8080);
	actrack_thread_init("server");
	tok = actrack_push_task(12);
	actrack_set_uint(actrack_activity_data(tok), "request", 99);
	actrack_push_lock_acquire(&the_lock);
}

/* Latest timestamp of the writer's state, to fix "now" 10 s after it. */
static uint64_t newest(const struct actrack_snap_process *p)
{
	uint64_t max = p->launch_time_ns;

	for (uint32_t i = 0; i < p->nr_threads; i++)
		for (uint32_t j = 0; j < p->threads[i].nr_activities; j++)
			if (p->threads[i].activities[j].a.time_ns > max)
				max = p->threads[i].activities[j].a.time_ns;
	for (uint32_t i = 0; i < p->nr_logs; i++)
		if (p->logs[i].time_ns > max)
			max = p->logs[i].time_ns;
	return max;
}

FIXTURE(live) {
	struct writer w;
	char path[256], now[64];
	struct actrack_snapshot *s;
	const struct actrack_snap_process *p;
	struct run r;
};

FIXTURE_SETUP(live)
{
	memset(&self->r, 0, sizeof(self->r));
	test_path(self->path, sizeof(self->path), "cli-live");
	ASSERT_EQ(0, writer_start(&self->w, self->path, 8, 0, serve, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(self->path,
					   ACTRACK_SNAP_ARENA_FILE, &self->s));
	self->p = snap_find(self->s, (uint32_t)self->w.pid);
	ASSERT_NE(NULL, self->p);
	ASSERT_EQ(1u, self->p->nr_threads);
	ASSERT_EQ(2u, self->p->threads[0].nr_activities);
	/* "Now" is 10 s after the newest write: activities print as 10.0 s
	 * old; the launch, a little earlier, is checked by its own age. */
	snprintf(self->now, sizeof(self->now), "--now=%llu",
		 (unsigned long long)(newest(self->p) + 10000000000ULL));
}

FIXTURE_TEARDOWN(live)
{
	run_free(&self->r);
	actrack_snapshot_free(self->s);
	writer_stop(&self->w);
	unlink(self->path);
}

static bool has_line(const char *out, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = out; (p = strstr(p, line)); p++)
		if ((p == out || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

TEST_F(live, dump_shows_the_process_as_written)
{
	const struct actrack_snap_thread *t = &self->p->threads[0];
	char *argv[] = { "actrack", "--arena", self->path, self->now, "dump",
			 NULL };
	unsigned long long ms, age_ms;
	char line[1024];

	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);

	/* However long the launch took on a loaded machine (under 50 s). */
	age_ms = (newest(self->p) + 10000000000ULL - self->p->launch_time_ns) /
		 1000000;
	ASSERT_LT(age_ms, 60000ULL);
	snprintf(line, sizeof(line), "process %d (main-loop-started) "
		 "start_ticks %llu parent %d age %llu.%llu s: %s", self->w.pid,
		 (unsigned long long)self->w.start_ticks, (int)getpid(),
		 age_ms / 1000, age_ms % 1000 / 100, self->p->cmdline);
	EXPECT_EQ(0, strncmp(self->r.out, line, strlen(line)))
		TH_LOG("first line: %.200s", self->r.out);
	EXPECT_TRUE(has_line(self->r.out, "  annotations:"));
	EXPECT_TRUE(has_line(self->r.out, "    role = \"front \\\"end\\\"\""));
	EXPECT_TRUE(has_line(self->r.out, "    port = 8080"));
	EXPECT_TRUE(has_line(self->r.out, "  modules:"));
	ASSERT_EQ(1u, self->p->nr_logs);
	ms = (newest(self->p) + 10000000000ULL - self->p->logs[0].time_ns) /
	     1000000;
	snprintf(line, sizeof(line), "    -%llu.%03llu s tid %d: listening on "
		 "8080", ms / 1000, ms % 1000, self->w.pid);
	EXPECT_TRUE(has_line(self->r.out, line)) TH_LOG("%s", self->r.out);
	snprintf(line, sizeof(line), "  thread %d 'server' depth 2",
		 self->w.pid);
	EXPECT_TRUE(has_line(self->r.out, line));
	/* Origins are symbolized: this file, in the worker's function. */
	snprintf(line, sizeof(line), "\n    [2] lock-acquire lock %p, for "
		 "10.0 s, origin 0x%llx in ", (void *)&the_lock,
		 (unsigned long long)t->activities[1].a.origin);
	EXPECT_NE(NULL, strstr(self->r.out, line)) TH_LOG("%s", line);
	snprintf(line, sizeof(line), "\n    [1] task-run task 12, for 10.0 s, "
		 "origin 0x%llx in ",
		 (unsigned long long)t->activities[0].a.origin);
	EXPECT_NE(NULL, strstr(self->r.out, line)) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(self->r.out, "(cli_live.c:"));
	EXPECT_TRUE(has_line(self->r.out, "         request = 99"));
	/* The lock line comes before the task line: innermost first. */
	EXPECT_LT(strstr(self->r.out, "lock-acquire"),
		  strstr(self->r.out, "task-run"));
	snprintf(line, sizeof(line), "1 process, 1 thread, %u/%u bytes used, "
		 "corrupt no", self->s->used_bytes, self->s->header.size);
	EXPECT_TRUE(has_line(self->r.out, line)) TH_LOG("%s", line);
}

TEST_F(live, ps_lists_the_process)
{
	char *argv[] = { "actrack", "--arena", self->path, self->now, "ps",
			 NULL };
	char want[1024];
	unsigned long long age_ms;

	/* The age is the launch's (see dump_shows_the_process_as_written). */
	age_ms = (newest(self->p) + 10000000000ULL - self->p->launch_time_ns) /
		 1000000;
	ASSERT_LT(age_ms, 60000ULL);
	snprintf(want, sizeof(want),
		 "    PID  STATE    PHASE                    AGE  THREADS  "
		 "COMMAND\n"
		 "%7d  running  main-loop-started     %llu.%llu s        1  %s\n",
		 self->w.pid, age_ms / 1000, age_ms % 1000 / 100,
		 self->p->cmdline);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ(want, self->r.out);
}

TEST_F(live, environment_selects_the_arena)
{
	char *argv[] = { "actrack", self->now, "ps", NULL };
	char env[300];

	snprintf(env, sizeof(env), "ACTRACK_ARENA=%s", self->path);
	ASSERT_EQ(0, run_cli(&self->r, env, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(2, count_lines(self->r.out));
}

TEST_F(live, saved_image_dumps_identically)
{
	char out[256];
	char *save[] = { "actrack", "--arena", self->path, "save", out, NULL };
	char *dump_live[] = { "actrack", "--arena", self->path, self->now,
			      "dump", NULL };
	char *dump_saved[] = { "actrack", "--arena", out, self->now, "dump",
			       NULL };
	struct run saved = { 0 };
	struct stat st;

	test_path(out, sizeof(out), "cli-live-saved");
	ASSERT_EQ(0, run_cli(&self->r, NULL, save));
	ASSERT_EQ(0, self->r.status);
	ASSERT_EQ(0, stat(out, &st));
	EXPECT_EQ(0600, st.st_mode & 0777);
	run_free(&self->r);
	/* The writer is idle: the live arena and its image say the same. */
	ASSERT_EQ(0, run_cli(&self->r, NULL, dump_live));
	ASSERT_EQ(0, run_cli(&saved, NULL, dump_saved));
	EXPECT_EQ(0, saved.status);
	EXPECT_STREQ(self->r.out, saved.out);
	run_free(&saved);
	/* And after the process is gone. */
	writer_stop(&self->w);
	ASSERT_EQ(0, run_cli(&saved, NULL, dump_saved));
	EXPECT_STREQ(self->r.out, saved.out);
	run_free(&saved);
	unlink(out);
}

TEST_HARNESS_MAIN
