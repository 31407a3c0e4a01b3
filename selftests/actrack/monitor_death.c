// SPDX-License-Identifier: MIT
/*
 * Death reports built in userspace from a file-backed arena
 * (__actrack_build_death), the way actrack_record_process_exit() builds
 * them for a launching parent: the process is created and killed for real,
 * its records written by the real library.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "test_harness.h"
#include "internal.h"
#include "snapshot_helpers.h"

#define NR_WORKERS 3

/* Same addresses in parent and forked child. */
static int locks[NR_WORKERS];
static int ready_fd = -1;

static void arena_path(char *buf, size_t len, const char *tag)
{
	const char *dir = getenv("TMPDIR");
	static int n;

	snprintf(buf, len, "%s/monitor_death-%d-%s-%d", dir && *dir ? dir : "/tmp",
		 (int)getpid(), tag, n++);
	unlink(buf);
}

static void *worker(void *arg)
{
	long i = (long)arg;
	char name[32];
	uint32_t tok;

	snprintf(name, sizeof(name), "worker-%ld", i);
	if (actrack_thread_init(name))
		_exit(101);
	actrack_push_task(100 + i);
	tok = actrack_push_lock_acquire(&locks[i]);
	/* Worker 1's innermost activity carries user data. */
	if (i == 1 &&
	    (actrack_set_string(actrack_activity_data(tok), "op", "commit") ||
	     actrack_set_uint(actrack_activity_data(tok), "n", 7)))
		_exit(106);
	if (i == 2)
		actrack_push_io_wait(7, 4096);
	if (write(ready_fd, "w", 1) != 1)
		_exit(102);
	for (;;)
		pause();
	return NULL;
}

/* Child: attach to @path, 3 workers with stacks, main waits on pid 1234. */
static pid_t spawn_victim(const char *path, uint32_t phase, int exit_code)
{
	int fds[2];
	pid_t pid;
	char c;
	int i;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct actrack_opts o = {
			.sz = sizeof(o),
			.arena_path = path,
			.flags = ACTRACK_INIT_NO_MODULE,
		};
		pthread_t t;

		close(fds[0]);
		ready_fd = fds[1];
		if (actrack_init(&o))
			_exit(100);
		if (actrack_set_phase(phase))
			_exit(103);
		if (actrack_set_string(actrack_process_data(), "role",
				       "ledger"))
			_exit(107);
		if (exit_code >= 0)
			exit(exit_code);
		for (i = 0; i < NR_WORKERS; i++)
			if (pthread_create(&t, NULL, worker, (void *)(long)i))
				_exit(104);
		actrack_push_process_wait(1234);
		if (write(ready_fd, "m", 1) != 1)
			_exit(105);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (exit_code < 0) {
		for (i = 0; i < NR_WORKERS + 1; i++) {
			if (read(fds[0], &c, 1) != 1) {
				close(fds[0]);
				return -1;
			}
		}
	}
	close(fds[0]);
	return pid;
}

/* /proc/self/cmdline joined by spaces: what a child of ours reports. */
static void own_cmdline(char *buf, size_t len)
{
	ssize_t n;
	int fd = open("/proc/self/cmdline", O_RDONLY);

	buf[0] = '\0';
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	while (n && buf[n - 1] == '\0')
		n--;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
}

FIXTURE(victim) {
	char path[256];
	pid_t pid;
	uint64_t start_ticks;
	int status;
	struct actrack_map map;
};

FIXTURE_SETUP(victim)
{
	arena_path(self->path, sizeof(self->path), "v");
	self->pid = spawn_victim(self->path, ACTRACK_PHASE_MAIN_LOOP_STARTED,
				 -1);
	ASSERT_GT(self->pid, 0);
	ASSERT_EQ(0, actrack_read_start_ticks(self->pid, &self->start_ticks));
	ASSERT_EQ(0, kill(self->pid, SIGKILL));
	ASSERT_EQ(self->pid, waitpid(self->pid, &self->status, 0));
	ASSERT_TRUE(WIFSIGNALED(self->status));
	self->map.fd = -1;
	ASSERT_EQ(0, __actrack_map_file(self->path, false, false, 0,
					&self->map));
}

FIXTURE_TEARDOWN(victim)
{
	if (self->map.fd >= 0)
		__actrack_unmap(&self->map);
	unlink(self->path);
}

TEST_F(victim, killed_process)
{
	const struct actrack_snap_thread *t;
	const struct actrack_value *v;
	struct actrack_death d;
	char cmdline[ACTRACK_CMDLINE_MAX + 1];
	uint64_t before = actrack_test_mono_ns();
	int i;

	ASSERT_EQ(0, __actrack_build_death(&self->map.arena, self->pid,
					   self->start_ticks, self->status,
					   &d));
	EXPECT_EQ(self->pid, d.process.pid);
	EXPECT_EQ(self->start_ticks, d.process.start_ticks);
	EXPECT_EQ(getuid(), d.uid);
	EXPECT_EQ(self->status, d.wait_status);
	EXPECT_EQ(SIGKILL, d.signal);
	EXPECT_EQ(0, d.exit_code);
	EXPECT_FALSE(d.core_dumped);
	EXPECT_EQ(ACTRACK_PHASE_MAIN_LOOP_STARTED, d.process.phase);
	EXPECT_EQ(0, d.flags);
	EXPECT_GE(d.exit_time_ns, before);
	EXPECT_LE(d.exit_time_ns, actrack_test_mono_ns());
	own_cmdline(cmdline, sizeof(cmdline));
	EXPECT_STREQ(cmdline, d.process.cmdline);

	/* Main thread + 3 workers, each with its stack, outermost first. */
	ASSERT_EQ(NR_WORKERS + 1, d.process.nr_threads);
	for (i = 0; i < NR_WORKERS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "worker-%d", i);
		t = snap_thread_named(&d.process, name);
		ASSERT_NE(NULL, t) TH_LOG("no thread %s", name);
		EXPECT_FALSE(t->torn);
		EXPECT_NE(0, t->tid);
		EXPECT_NE(self->pid, t->tid);
		ASSERT_EQ(i == 2 ? 3 : 2, t->depth);
		ASSERT_EQ(t->depth, t->nr_activities);
		EXPECT_EQ(ACTRACK_ACT_TASK_RUN, t->activities[0].a.type);
		EXPECT_EQ(100 + i, t->activities[0].a.object);
		EXPECT_EQ(ACTRACK_ACT_LOCK_ACQUIRE, t->activities[1].a.type);
		EXPECT_EQ((uintptr_t)&locks[i], t->activities[1].a.object);
		EXPECT_NE(0, t->activities[0].a.origin);
		EXPECT_NE(0, t->activities[0].a.time_ns);
		if (i == 2) {
			EXPECT_EQ(ACTRACK_ACT_IO_WAIT, t->activities[2].a.type);
			EXPECT_EQ(7, t->activities[2].a.object);
			EXPECT_EQ(4096, t->activities[2].a.info);
		}
		/* User data: exactly worker 1's innermost activity's. */
		EXPECT_EQ(0, t->activities[0].nr_values);
		if (i != 1) {
			EXPECT_EQ(0, t->activities[1].nr_values);
			continue;
		}
		ASSERT_EQ(2, t->activities[1].nr_values);
		v = t->activities[1].values;
		EXPECT_STREQ("op", v[0].name);
		EXPECT_EQ(ACTRACK_VALUE_STRING, v[0].type);
		EXPECT_STREQ("commit", (char *)v[0].bytes);
		EXPECT_STREQ("n", v[1].name);
		EXPECT_EQ(ACTRACK_VALUE_UNSIGNED, v[1].type);
		EXPECT_EQ(7, v[1].u);
	}
	/* The process's annotations. */
	ASSERT_EQ(1, d.process.nr_values);
	EXPECT_STREQ("role", d.process.values[0].name);
	EXPECT_EQ(ACTRACK_VALUE_STRING, d.process.values[0].type);
	EXPECT_STREQ("ledger", (char *)d.process.values[0].bytes);
	for (i = 0; i < (int)d.process.nr_threads; i++)
		if (d.process.threads[i].tid == self->pid)
			break;
	ASSERT_LT(i, (int)d.process.nr_threads) TH_LOG("no main thread");
	t = &d.process.threads[i];
	ASSERT_EQ(1, t->nr_activities);
	EXPECT_EQ(ACTRACK_ACT_PROCESS_WAIT, t->activities[0].a.type);
	EXPECT_EQ(1234, t->activities[0].a.object);
	/* Its ELF objects came along, for symbolizing the origins. */
	EXPECT_GT(d.process.nr_modules, 0);
	for (i = 0; i < (int)d.process.nr_modules; i++) {
		EXPECT_NE(0, d.process.modules[i].size);
		EXPECT_LT(strlen(d.process.modules[i].path),
			  sizeof(d.process.modules[i].path));
	}
	__actrack_free_death(&d);
	EXPECT_EQ(NULL, d.process.threads);
	EXPECT_EQ(0, d.process.nr_threads);
	EXPECT_EQ(NULL, d.process.modules);
	EXPECT_EQ(NULL, d.process.values);
}

/* A reused pid: same pid, other start time -> none of these records. */
TEST_F(victim, other_start_ticks)
{
	struct actrack_death d;

	ASSERT_EQ(0, __actrack_build_death(&self->map.arena, self->pid,
					   self->start_ticks + 1, 9, &d));
	EXPECT_EQ(0, d.process.nr_threads);
	EXPECT_EQ(NULL, d.process.threads);
	EXPECT_EQ(ACTRACK_PHASE_UNKNOWN, d.process.phase);
	EXPECT_STREQ("", d.process.cmdline);
	EXPECT_EQ(SIGKILL, d.signal);
	__actrack_free_death(&d);
}

/* A thread block with a broken header: skipped and flagged, no crash. */
TEST_F(victim, corrupt_thread_block)
{
	struct actrack_map rw = { .fd = -1 };
	struct actrack_arena_iter it;
	struct actrack_death d;
	struct actrack_block *b;
	uint32_t ref, victim_ref = 0;

	ASSERT_EQ(0, __actrack_map_file(self->path, true, false, 0, &rw));
	actrack_arena_iter_init(&it, &rw.arena);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_THREAD, NULL))) {
		struct actrack_thread *t = actrack_arena_get(&rw.arena, ref,
			ACTRACK_TYPE_THREAD, sizeof(*t));

		if (t && t->owner.pid == (uint32_t)self->pid &&
		    t->owner.tid != (uint32_t)self->pid) {
			victim_ref = ref;
			break;
		}
	}
	ASSERT_NE(0, victim_ref);
	b = (struct actrack_block *)((char *)rw.arena.base + victim_ref);
	b->size = 0xfffffff0;	/* runs past the end of the arena */

	ASSERT_EQ(0, __actrack_build_death(&self->map.arena, self->pid,
					   self->start_ticks, self->status,
					   &d));
	EXPECT_LT(d.process.nr_threads, NR_WORKERS + 1);
	EXPECT_TRUE(d.flags & ACTRACK_DEATH_ARENA_CORRUPT);
	EXPECT_EQ(ACTRACK_PHASE_MAIN_LOOP_STARTED, d.process.phase);
	__actrack_free_death(&d);
	__actrack_unmap(&rw);
}

static uint64_t rng = 0x2545F4914F6CDD1DULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Random bytes anywhere but the header: every report is still bounded. */
TEST_F(victim, random_corruption)
{
	uint32_t size = self->map.arena.size;
	uint32_t used = actrack_arena_used(&self->map.arena);
	char *copy = malloc(size);
	unsigned int round, k, corrupt = 0, threads = 0;

	ASSERT_NE(NULL, copy);
	ASSERT_GT(used, ACTRACK_ARENA_HEADER_SIZE);
	for (round = 0; round < 2000; round++) {
		struct actrack_arena a = {
			.base = copy, .size = size, .writable = false,
		};
		struct actrack_death d;

		memcpy(copy, self->map.arena.base, size);
		for (k = 0; k < 1 + rnd() % 16; k++) {
			uint32_t off = ACTRACK_ARENA_HEADER_SIZE +
				       rnd() % (used - ACTRACK_ARENA_HEADER_SIZE);

			if (rnd() & 1)
				copy[off] ^= (char)(1U << (rnd() % 8));
			else
				memset(copy + (off & ~3U), (int)rnd(), 4);
		}
		ASSERT_EQ(0, __actrack_build_death(&a, self->pid,
						   self->start_ticks,
						   self->status, &d));
		/* A flipped type id can turn another record of the victim
		 * (a module record, say) into a "thread": bounded by the
		 * blocks there are, not by the threads there were. */
		ASSERT_LE(d.process.nr_threads, used / ACTRACK_BLOCK_ALIGN);
		for (k = 0; k < d.process.nr_threads; k++)
			ASSERT_LE(d.process.threads[k].nr_activities,
				  ACTRACK_THREAD_MAX_SLOTS);
		ASSERT_LE(strlen(d.process.cmdline), ACTRACK_CMDLINE_MAX);
		for (k = 0; k < d.process.nr_modules; k++) {
			ASSERT_LE(d.process.modules[k].build_id_size,
				  ACTRACK_BUILD_ID_MAX);
			ASSERT_LT(strnlen(d.process.modules[k].path,
					  sizeof(d.process.modules[k].path)),
				  sizeof(d.process.modules[k].path));
		}
		corrupt += !!(d.flags & ACTRACK_DEATH_ARENA_CORRUPT);
		threads += d.process.nr_threads;
		__actrack_free_death(&d);
	}
	TH_LOG("2000 corrupted copies: %u flagged corrupt, %u threads found",
	       corrupt, threads);
	free(copy);
}

TEST(exit_code_and_phase)
{
	struct actrack_map map = { .fd = -1 };
	struct actrack_death d;
	char path[256];
	uint64_t ticks;
	pid_t pid;
	int status;

	arena_path(path, sizeof(path), "e");
	pid = spawn_victim(path, ACTRACK_PHASE_SHUTDOWN_STARTED, 3);
	ASSERT_GT(pid, 0);
	/* Racy only if the child has already gone: it waits for nothing,
	 * so read its start time from the record instead. */
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(3, WEXITSTATUS(status));
	ASSERT_EQ(0, __actrack_map_file(path, false, false, 0, &map));
	{
		struct actrack_arena_iter it;
		uint32_t ref;

		ticks = 0;
		actrack_arena_iter_init(&it, &map.arena);
		while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_PROCESS,
						      NULL))) {
			struct actrack_process *p = actrack_arena_get(
				&map.arena, ref, ACTRACK_TYPE_PROCESS,
				sizeof(*p));

			if (p && p->owner.pid == (uint32_t)pid)
				ticks = p->owner.start_ticks;
		}
	}
	ASSERT_NE(0, ticks) TH_LOG("the exited child left no process record");
	ASSERT_EQ(0, __actrack_build_death(&map.arena, pid, ticks, status,
					   &d));
	EXPECT_EQ(3, d.exit_code);
	EXPECT_EQ(0, d.signal);
	EXPECT_FALSE(d.core_dumped);
	EXPECT_EQ(3 << 8, d.wait_status);
	EXPECT_EQ(ACTRACK_PHASE_SHUTDOWN_STARTED, d.process.phase);
	__actrack_free_death(&d);
	__actrack_unmap(&map);
	unlink(path);
}

TEST(bad_arguments)
{
	struct actrack_arena a = { 0 };
	struct actrack_death d;
	char buf[ACTRACK_ARENA_MIN_SIZE];

	EXPECT_EQ(-EINVAL, __actrack_build_death(NULL, 1, 1, 0, &d));
	EXPECT_EQ(-EINVAL, __actrack_build_death(&a, 1, 1, 0, &d));
	EXPECT_EQ(-EINVAL, __actrack_build_death(&a, 1, 1, 0, NULL));
	a.base = buf;
	a.size = sizeof(buf);
	EXPECT_EQ(-EINVAL, __actrack_build_death(&a, 0, 1, 0, &d));
	/* Zeroes are not an arena: nothing found, nothing crashes. */
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(0, __actrack_build_death(&a, 5, 1, 0, &d));
	EXPECT_EQ(0, d.process.nr_threads);
	__actrack_free_death(&d);
	__actrack_free_death(NULL);
}

/* The launching parent's path (lib/lifecycle.c) delivers the same report
 * through the exit callback, then frees the records. */
struct got {
	int calls;
	struct actrack_death d;
	uint32_t workers_with_stack;
};

static void on_exit_cb(const struct actrack_death *d, void *arg)
{
	struct got *g = arg;

	g->calls++;
	g->d = *d;
	g->d.process.threads = NULL;
	for (uint32_t i = 0; i < d->process.nr_threads; i++)
		if (!strncmp(d->process.threads[i].name, "worker-", 7) &&
		    d->process.threads[i].nr_activities >= 2)
			g->workers_with_stack++;
}

TEST(record_process_exit_callback)
{
	struct actrack_opts o = {
		.sz = sizeof(o),
		.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
	};
	struct got g = { 0 };
	struct actrack_death d;
	char path[256];
	uint64_t ticks;
	pid_t pid;
	int status, freed;

	arena_path(path, sizeof(path), "cb");
	o.arena_path = path;
	ASSERT_EQ(0, actrack_init(&o));
	pid = spawn_victim(path, ACTRACK_PHASE_MAIN_LOOP_STARTED, -1);
	ASSERT_GT(pid, 0);
	ASSERT_EQ(0, actrack_record_process_launch(pid));
	ASSERT_EQ(0, actrack_read_start_ticks(pid, &ticks));
	actrack_set_exit_callback(on_exit_cb, &g);
	ASSERT_EQ(0, kill(pid, SIGTERM));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	freed = actrack_record_process_exit(pid, status);
	TH_LOG("actrack_record_process_exit freed %d records", freed);
	/* process record + 4 trackers at least */
	EXPECT_GE(freed, NR_WORKERS + 2);
	ASSERT_EQ(1, g.calls);
	EXPECT_EQ(SIGTERM, g.d.signal);
	EXPECT_EQ(ACTRACK_PHASE_MAIN_LOOP_STARTED, g.d.process.phase);
	EXPECT_EQ(NR_WORKERS + 1, g.d.process.nr_threads);
	EXPECT_EQ(NR_WORKERS, g.workers_with_stack);
	EXPECT_EQ(-ENOENT, actrack_record_process_exit(pid, status));

	/* Nothing of it is left to report. */
	ASSERT_EQ(0, __actrack_build_death(__actrack_arena(), pid, ticks,
					   status, &d));
	EXPECT_EQ(0, d.process.nr_threads);
	EXPECT_EQ(ACTRACK_PHASE_UNKNOWN, d.process.phase);
	__actrack_free_death(&d);
	unlink(path);
}

TEST_HARNESS_MAIN
