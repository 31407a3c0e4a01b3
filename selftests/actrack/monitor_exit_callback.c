// SPDX-License-Identifier: MIT
/*
 * The exit callback (actrack_set_exit_callback()) on the module.  On a
 * file arena actrack_record_process_exit() builds the report itself; with
 * the module it only forgot the child and the callback never ran.  Now the
 * kernel's own report is fetched through the monitor (ring or live) and
 * handed to the callback, once, matched by pid and start time.  Needs the
 * module.
 */
#include "vm_util.h"

#define CHILD_TASK	4242

static struct {
	int calls;
	uint32_t pid;
	uint64_t start_ticks;
	int signal;
	bool found_task;
	char name[32];
} got;

static void on_exit_report(const struct actrack_death *d, void *arg)
{
	got.calls++;
	got.pid = d->process.pid;
	got.start_ticks = d->process.start_ticks;
	got.signal = d->signal;
	for (uint32_t i = 0; i < d->process.nr_threads; i++) {
		const struct actrack_snap_thread *t = &d->process.threads[i];

		for (uint32_t k = 0; k < t->nr_activities; k++) {
			if (t->activities[k].a.type == ACTRACK_ACT_TASK_RUN &&
			    t->activities[k].a.object == CHILD_TASK) {
				got.found_task = true;
				memcpy(got.name, t->name, sizeof(got.name));
			}
		}
	}
}

TEST(callback_gets_the_kernel_report)
{
	struct actrack_opts o = { .sz = sizeof(o) };
	uint64_t ticks;
	int ready[2], status;
	pid_t pid;
	char c;

	VM_REQUIRE_MODULE();
	ASSERT_EQ(0, actrack_init(&o));
	ASSERT_EQ(ACTRACK_BACKEND_MODULE, actrack_backend());
	actrack_set_exit_callback(on_exit_report, NULL);
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(ready[0]);
		if (actrack_init(&o) || actrack_set_thread_name("cb-child"))
			_exit(10);
		actrack_push_task(CHILD_TASK);
		if (write(ready[1], "r", 1) != 1)
			_exit(11);
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	ASSERT_EQ(0, actrack_read_start_ticks(pid, &ticks));
	ASSERT_EQ(0, actrack_record_process_launch(pid));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	EXPECT_EQ(0, actrack_record_process_exit(pid, status));
	EXPECT_EQ(1, got.calls);
	EXPECT_EQ((uint32_t)pid, got.pid);
	EXPECT_EQ(ticks, got.start_ticks);
	EXPECT_EQ(SIGKILL, got.signal);
	EXPECT_TRUE(got.found_task);
	EXPECT_STREQ("cb-child", got.name);
	/* Forgotten: a second exit is not ours to report. */
	EXPECT_EQ(-ENOENT, actrack_record_process_exit(pid, status));
	EXPECT_EQ(1, got.calls);
}

TEST_HARNESS_MAIN
