// SPDX-License-Identifier: MIT
/*
 * Snapshots, save and the CLI on the module's arena (/dev/actrack): the
 * reader maps it read-only, sees a live process attached through the
 * module, reports the kernel's counters in `actrack stats`, saves an image
 * that reads back as a file, and no longer sees the process once the
 * kernel has cleaned up after its death.  SKIP without the module.
 */
#include <time.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

static int the_lock;

/* The 6.1 harness still runs the body after a SKIP in the setup. */
#define SKIPPED_IN_SETUP() do { if (ACTRACK_TEST_SKIPPED(_metadata)) return; } while (0)

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

FIXTURE(kmod) {
	pid_t pid;
	uint64_t start_ticks;
	struct run r;
};

/* A child attached through the module with a known stack. */
FIXTURE_SETUP(kmod)
{
	int ready[2];
	char c;

	memset(&self->r, 0, sizeof(self->r));
	self->pid = 0;
	if (access(ACTRACK_DEVICE_PATH, F_OK))
		SKIP(return, "no %s (module not loaded)", ACTRACK_DEVICE_PATH);
	/* The test runners point ACTRACK_ARENA at a file: not here. */
	unsetenv(ACTRACK_ENV_ARENA);
	ASSERT_EQ(0, pipe(ready));
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (!self->pid) {
		uint32_t tok;

		close(ready[0]);
		if (actrack_init(NULL) ||
		    actrack_backend() != ACTRACK_BACKEND_MODULE)
			_exit(10);
		actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
		actrack_set_string(actrack_process_data(), "via", "module");
		actrack_thread_init("kmain");
		tok = actrack_push_task(31);
		actrack_set_int(actrack_activity_data(tok), "n", -7);
		actrack_push_lock_acquire(&the_lock);
		if (write(ready[1], "r", 1) != 1)
			_exit(11);
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	ASSERT_EQ(0, actrack_read_start_ticks(self->pid, &self->start_ticks));
}

FIXTURE_TEARDOWN(kmod)
{
	run_free(&self->r);
	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
}

TEST_F(kmod, snapshot_of_the_module_arena)
{
	const struct actrack_snap_process *p;
	const struct actrack_snap_thread *t;
	struct actrack_snapshot *s;

	SKIPPED_IN_SETUP();

	ASSERT_EQ(0, actrack_snapshot_take(NULL, 0, &s));
	EXPECT_TRUE(s->header.flags & ACTRACK_ARENA_KERNEL);
	EXPECT_EQ(getuid(), s->header.uid);
	p = snap_find(s, (uint32_t)self->pid);
	ASSERT_NE(NULL, p);
	EXPECT_TRUE(p->has_record);
	EXPECT_EQ(self->start_ticks, p->start_ticks);
	EXPECT_EQ(ACTRACK_PHASE_MAIN_LOOP_STARTED, p->phase);
	ASSERT_EQ(1u, p->nr_values);
	EXPECT_STREQ("module", (const char *)p->values[0].bytes);
	ASSERT_EQ(1u, p->nr_threads);
	t = &p->threads[0];
	EXPECT_STREQ("kmain", t->name);
	ASSERT_EQ(2u, t->nr_activities);
	EXPECT_EQ(31u, t->activities[0].a.object);
	ASSERT_EQ(1u, t->activities[0].nr_values);
	EXPECT_EQ(-7, t->activities[0].values[0].s);
	EXPECT_EQ((uint64_t)(uintptr_t)&the_lock, t->activities[1].a.object);
	/* The kernel's clock word stamps them: not after our snapshot. */
	EXPECT_GE(s->taken_mono_ns, t->activities[1].a.time_ns);
	EXPECT_NE(0u, t->activities[1].a.time_ns);
	actrack_snapshot_free(s);
}

TEST_F(kmod, records_gone_after_the_kernel_cleans_up)
{
	struct actrack_snapshot *s;
	uint64_t deadline;
	bool gone = false;

	SKIPPED_IN_SETUP();

	kill(self->pid, SIGKILL);
	ASSERT_EQ(self->pid, waitpid(self->pid, NULL, 0));
	/* The cleanup runs from a workqueue after the exit: poll. */
	deadline = mono_ms() + 5000;
	while (!gone && mono_ms() < deadline) {
		ASSERT_EQ(0, actrack_snapshot_take(NULL, 0, &s));
		gone = !snap_find(s, (uint32_t)self->pid);
		EXPECT_FALSE(s->corrupt);
		actrack_snapshot_free(s);
		if (!gone)
			usleep(20000);
	}
	self->pid = 0;
	EXPECT_TRUE(gone);
}

TEST_F(kmod, cli_dump_stats_and_save)
{
	char pid[16], out[256], line[128];
	char *dump[] = { "actrack", "dump", "--pid", pid, NULL };
	char *stats[] = { "actrack", "stats", NULL };
	char *save[] = { "actrack", "save", out, NULL };
	char *dump_saved[] = { "actrack", "--arena", out, "dump", "--pid",
			       pid, NULL };

	SKIPPED_IN_SETUP();

	snprintf(pid, sizeof(pid), "%d", self->pid);
	ASSERT_EQ(0, run_cli(&self->r, NULL, dump));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	snprintf(line, sizeof(line), "process %d (main-loop-started)",
		 self->pid);
	EXPECT_EQ(0, strncmp(self->r.out, line, strlen(line)));
	snprintf(line, sizeof(line), "  thread %d 'kmain' depth 2\n",
		 self->pid);
	EXPECT_NE(NULL, strstr(self->r.out, line));
	EXPECT_NE(NULL, strstr(self->r.out, "         n = -7\n"));
	run_free(&self->r);

	ASSERT_EQ(0, run_cli(&self->r, NULL, stats));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "arena:     /dev/actrack\n"));
	EXPECT_NE(NULL, strstr(self->r.out, "flags:     kernel\n"));
	EXPECT_NE(NULL, strstr(self->r.out,
			       "persist:   no (actrack.ko without persist=)\n"));
	/* The module's own counters follow. */
	EXPECT_NE(NULL, strstr(self->r.out, "\nmodule:\n"))
		TH_LOG("%s", self->r.out);
	EXPECT_NE(NULL, strstr(self->r.out, "  attached:         "));
	run_free(&self->r);

	test_path(out, sizeof(out), "kmod-saved");
	ASSERT_EQ(0, run_cli(&self->r, NULL, save));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	run_free(&self->r);
	/* The image outlives the process and the module's cleanup. */
	kill(self->pid, SIGKILL);
	waitpid(self->pid, NULL, 0);
	ASSERT_EQ(0, run_cli(&self->r, NULL, dump_saved));
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "'kmain' depth 2\n"));
	self->pid = 0;
	unlink(out);
}

TEST_HARNESS_MAIN
