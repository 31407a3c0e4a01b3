// SPDX-License-Identifier: MIT
/*
 * Death reports from actrack.ko: a tracked process is killed or exits, the
 * kernel reports how it died (signal or exit code, core dump, phase,
 * command line, every thread's stack, user data) and frees its records.
 * Measures how long that takes from kill() (printed in the VM log).
 */
#include "vm_util.h"

FIXTURE(death) {
	struct vm_watch w;
	char cmdline[ACTRACK_CMDLINE_MAX + 1];
};

FIXTURE_SETUP(death)
{
	memset(&self->w, 0, sizeof(self->w));
	VM_REQUIRE_MODULE();
	ASSERT_EQ(0, vm_watch_mine(&self->w));
	vm_own_cmdline(self->cmdline, sizeof(self->cmdline));
}

FIXTURE_TEARDOWN(death)
{
	vm_watch_close(&self->w);
}

/* The workers' stacks as vm_victim_worker() builds them. */
static void check_workers(struct __test_metadata *_metadata,
			  const struct actrack_death *d, int nr, bool busy)
{
	int i;

	for (i = 0; i < nr; i++) {
		const struct actrack_snap_thread *t;
		char name[32];

		snprintf(name, sizeof(name), "worker-%d", i);
		t = vm_death_thread(d, name);
		ASSERT_NE(NULL, t) TH_LOG("no thread %s in the report", name);
		EXPECT_FALSE(t->torn);
		EXPECT_NE(d->process.pid, t->tid);
		if (busy) {
			/* Killed between a push and its pop, or not. */
			EXPECT_TRUE(t->depth == 2 || t->depth == 3)
				TH_LOG("%s depth %u", name, t->depth);
		} else {
			EXPECT_EQ(2, t->depth);
		}
		ASSERT_EQ(t->depth, t->nr_activities);
		EXPECT_EQ(ACTRACK_ACT_TASK_RUN, t->activities[0].a.type);
		EXPECT_EQ(1000 + i, t->activities[0].a.object);
		EXPECT_NE(0, t->activities[0].a.origin);
		EXPECT_NE(0, t->activities[0].a.time_ns);
		EXPECT_LE(t->activities[0].a.time_ns, d->exit_time_ns);
		EXPECT_EQ(ACTRACK_ACT_LOCK_ACQUIRE, t->activities[1].a.type);
		EXPECT_EQ((uintptr_t)&vm_locks[i], t->activities[1].a.object);
		if (t->nr_activities == 3) {
			EXPECT_EQ(ACTRACK_ACT_GENERIC_ACTION(1),
				  t->activities[2].a.type);
			EXPECT_EQ(i, t->activities[2].a.info);
		}
	}
}

static const struct actrack_snap_thread *
main_thread(const struct actrack_death *d)
{
	for (uint32_t i = 0; i < d->process.nr_threads; i++)
		if (d->process.threads[i].tid == d->process.pid)
			return &d->process.threads[i];
	return NULL;
}

TEST_F_TIMEOUT(death, sigkill_8_busy_threads, 120)
{
	struct vm_victim_cfg cfg = {
		.threads = 8, .phase = ACTRACK_PHASE_MAIN_LOOP_STARTED,
		.uid = -1, .busy = true,
	};
	const struct actrack_snap_thread *mt;
	struct actrack_kstats st0, st1;
	uint64_t t0, t_report = 0, t_freed = 0, end;
	struct actrack_death *d = NULL;
	struct vm_victim v;
	struct vm_map map;
	int before, status, recent;

	VM_SETUP_SKIPPED();

	ASSERT_EQ(0, actrack_monitor_stats(self->w.m, &st0));
	ASSERT_EQ(0, vm_victim_start(&cfg, &v));
	/* After the victim: a reader never creates the uid's arena. */
	ASSERT_EQ(0, vm_map_open(&map, -1, false));
	/* Let the workers spin. */
	usleep(50000);
	before = vm_count_owned(&map, v.pid, v.start_ticks, 0,
				ACTRACK_TYPE_ANY);
	EXPECT_EQ(9, vm_count_owned(&map, v.pid, v.start_ticks, 0,
				    ACTRACK_TYPE_THREAD));
	EXPECT_EQ(1, vm_count_owned(&map, v.pid, v.start_ticks, 0,
				    ACTRACK_TYPE_PROCESS));

	t0 = actrack_test_mono_ns();
	ASSERT_EQ(0, kill(v.pid, SIGKILL));
	end = t0 + 10000000000ULL;
	while ((!t_report || !t_freed) && actrack_test_mono_ns() < end) {
		actrack_monitor_dispatch(self->w.m, t_report ? 0 : 1,
					 vm_keep_death, self->w.ds);
		if (!t_report && (d = vm_find_death(self->w.ds, v.pid)))
			t_report = actrack_test_mono_ns();
		if (!t_freed && !vm_count_owned(&map, v.pid, v.start_ticks, 0,
						ACTRACK_TYPE_ANY))
			t_freed = actrack_test_mono_ns();
		if (t_report && !t_freed)
			usleep(200);
	}
	ASSERT_EQ(v.pid, waitpid(v.pid, &status, 0));
	close(v.go_fd);
	TH_LOG("pid %d, %d records: kill -> report %llu us, kill -> records "
	       "freed %llu us", v.pid, before,
	       t_report ? (unsigned long long)(t_report - t0) / 1000 : 0ULL,
	       t_freed ? (unsigned long long)(t_freed - t0) / 1000 : 0ULL);
	if (!t_report && !actrack_monitor_stats(self->w.m, &st1))
		TH_LOG("no report; module: reports sent %llu dropped %llu",
		       (unsigned long long)st1.reports_sent,
		       (unsigned long long)st1.reports_dropped);
	ASSERT_NE(0, t_report) TH_LOG("no death report within 10 s");
	ASSERT_NE(0, t_freed) TH_LOG("records not freed within 10 s");
	EXPECT_GE(before, 10);

	EXPECT_EQ(v.pid, d->process.pid);
	EXPECT_EQ(v.start_ticks, d->process.start_ticks);
	EXPECT_EQ(geteuid(), d->uid);
	EXPECT_EQ(SIGKILL, d->signal);
	EXPECT_EQ(0, d->exit_code);
	EXPECT_FALSE(d->core_dumped);
	EXPECT_EQ(status, d->wait_status);
	EXPECT_EQ(ACTRACK_PHASE_MAIN_LOOP_STARTED, d->process.phase);
	EXPECT_EQ(VM_DEATH_FLAGS, d->flags);
	EXPECT_NE(0, d->seq);
	EXPECT_GE(d->exit_time_ns, t0);
	EXPECT_LE(d->exit_time_ns, t_report);
	EXPECT_STREQ(self->cmdline, d->process.cmdline);
	ASSERT_EQ(9, d->process.nr_threads);
	check_workers(_metadata, d, 8, true);
	/* The module records came along, the test binary among them. */
	EXPECT_GT(d->process.nr_modules, 0);
	mt = main_thread(d);
	ASSERT_NE(NULL, mt);
	ASSERT_EQ(1, mt->nr_activities);
	EXPECT_EQ(ACTRACK_ACT_PROCESS_WAIT, mt->activities[0].a.type);
	EXPECT_EQ(getpid(), mt->activities[0].a.object);

	/* The kernel's ring has it too, with the same number. */
	{
		struct vm_deaths *ring = calloc(1, sizeof(*ring));
		struct actrack_death *r;

		ASSERT_NE(NULL, ring);
		recent = actrack_monitor_recent(self->w.m, vm_keep_death, ring);
		EXPECT_GE(recent, 1);
		r = vm_find_death(ring, v.pid);
		ASSERT_NE(NULL, r) TH_LOG("pid %d not in the recent ring", v.pid);
		EXPECT_EQ(d->seq, r->seq);
		EXPECT_EQ(d->wait_status, r->wait_status);
		EXPECT_EQ(d->process.nr_threads, r->process.nr_threads);
		vm_deaths_free(ring);
		free(ring);
	}

	ASSERT_EQ(0, actrack_monitor_stats(self->w.m, &st1));
	TH_LOG("module: cleanups %llu -> %llu, records freed %llu -> %llu, "
	       "reports sent %llu -> %llu, dropped %llu",
	       (unsigned long long)st0.cleanups,
	       (unsigned long long)st1.cleanups,
	       (unsigned long long)st0.records_freed,
	       (unsigned long long)st1.records_freed,
	       (unsigned long long)st0.reports_sent,
	       (unsigned long long)st1.reports_sent,
	       (unsigned long long)st1.reports_dropped);
	EXPECT_GT(st1.cleanups, st0.cleanups);
	EXPECT_GE(st1.records_freed - st0.records_freed, (uint64_t)before);
	EXPECT_GT(st1.reports_sent, st0.reports_sent);
	vm_map_close(&map);
}

TEST_F_TIMEOUT(death, exit_codes_and_phases, 120)
{
	static const struct { int code; uint32_t phase; } cases[] = {
		{ 3, ACTRACK_PHASE_SHUTDOWN_STARTED },
		{ 0, ACTRACK_PHASE_EXITED_CLEANLY },
		{ 1, ACTRACK_PHASE_EXITED_WITH_CODE },
		{ 255, ACTRACK_PHASE_MAIN_LOOP_STARTED },
		{ 42, ACTRACK_PHASE_LAUNCHED },
		{ 7, ACTRACK_PHASE_LAUNCH_FAILED },
	};
	unsigned int i;

	VM_SETUP_SKIPPED();

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vm_victim_cfg cfg = {
			.threads = 2, .phase = cases[i].phase, .uid = -1,
		};
		struct actrack_death *d;
		struct vm_victim v;
		int status;

		ASSERT_EQ(0, vm_victim_start(&cfg, &v));
		status = vm_victim_cmd(&v, 'x', cases[i].code);
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(cases[i].code, WEXITSTATUS(status));
		d = vm_wait_death(self->w.m, self->w.ds, v.pid, 10000);
		ASSERT_NE(NULL, d) TH_LOG("no report for exit(%d)",
					  cases[i].code);
		EXPECT_EQ(cases[i].code, d->exit_code);
		EXPECT_EQ(0, d->signal);
		EXPECT_FALSE(d->core_dumped);
		EXPECT_EQ(status, d->wait_status);
		EXPECT_EQ(cases[i].phase, d->process.phase);
		EXPECT_EQ(v.start_ticks, d->process.start_ticks);
		EXPECT_STREQ(self->cmdline, d->process.cmdline);
		/* exit() in main: the workers were still in their
		 * activities when the group went. */
		EXPECT_EQ(3, d->process.nr_threads);
		check_workers(_metadata, d, 2, false);
	}
}

TEST_F_TIMEOUT(death, abort_with_core, 120)
{
	struct vm_victim_cfg cfg = {
		.threads = 1, .phase = ACTRACK_PHASE_MAIN_LOOP_STARTED,
		.uid = -1, .core = true,
	};
	struct actrack_death *d;
	struct vm_victim v;
	int status;

	VM_SETUP_SKIPPED();

	ASSERT_EQ(0, vm_victim_start(&cfg, &v));
	status = vm_victim_cmd(&v, 'a', 0);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGABRT, WTERMSIG(status));
	d = vm_wait_death(self->w.m, self->w.ds, v.pid, 10000);
	ASSERT_NE(NULL, d);
	TH_LOG("SIGABRT, core %s", WCOREDUMP(status) ? "dumped" : "not dumped");
	EXPECT_EQ(status, d->wait_status);
	EXPECT_EQ(SIGABRT, d->signal);
	EXPECT_EQ(!!WCOREDUMP(status), d->core_dumped);
	EXPECT_EQ(ACTRACK_PHASE_MAIN_LOOP_STARTED, d->process.phase);
	check_workers(_metadata, d, 1, false);
	unlink("core");
}

/*
 * What one report said about a process's user data, copied inside the
 * callback (the library frees the report's values after it returns).
 */
struct ud_report {
	uint32_t pid;
	int found;
	uint32_t flags;
	uint32_t nr_acts;
	uint32_t nr_proc, nr_act[2];
	struct actrack_value proc[4], act[4];	/* bytes: NULL */
	char proc_str[4][64], act_str[4][64];
};

static void ud_copy(struct actrack_value *dst, char (*str)[64],
		    const struct actrack_value *src, uint32_t nr)
{
	for (uint32_t i = 0; i < nr && i < 4; i++) {
		dst[i] = src[i];
		dst[i].bytes = NULL;
		snprintf(str[i], sizeof(str[i]), "%s",
			 src[i].bytes ? (const char *)src[i].bytes : "");
	}
}

static void ud_keep(const struct actrack_death *d, void *arg)
{
	struct ud_report *r = arg;
	const struct actrack_snap_thread *t = NULL;

	if (d->process.pid != r->pid)
		return;
	r->found++;
	r->flags = d->flags;
	r->nr_proc = d->process.nr_values;
	ud_copy(r->proc, r->proc_str, d->process.values, d->process.nr_values);
	for (uint32_t i = 0; i < d->process.nr_threads; i++)
		if (d->process.threads[i].tid == d->process.pid)
			t = &d->process.threads[i];
	if (!t)
		return;
	r->nr_acts = t->nr_activities;
	for (uint32_t k = 0; k < 2 && k < t->nr_activities; k++)
		r->nr_act[k] = t->activities[k].nr_values;
	if (t->nr_activities == 2)
		ud_copy(r->act, r->act_str, t->activities[1].values,
			t->activities[1].nr_values);
}

static void check_ud(struct __test_metadata *_metadata,
		     const struct ud_report *r)
{
	ASSERT_EQ(1, r->found);
	EXPECT_EQ(VM_DEATH_FLAGS, r->flags);
	ASSERT_EQ(1, r->nr_proc);
	EXPECT_STREQ("role", r->proc[0].name);
	EXPECT_EQ(ACTRACK_VALUE_STRING, r->proc[0].type);
	EXPECT_STREQ("ledger", r->proc_str[0]);
	ASSERT_EQ(2, r->nr_acts);
	EXPECT_EQ(0, r->nr_act[0]);
	ASSERT_EQ(2, r->nr_act[1]);
	EXPECT_STREQ("request", r->act[0].name);
	EXPECT_EQ(ACTRACK_VALUE_STRING, r->act[0].type);
	EXPECT_STREQ("GET /ledger", r->act_str[0]);
	EXPECT_STREQ("bytes", r->act[1].name);
	EXPECT_EQ(ACTRACK_VALUE_UNSIGNED, r->act[1].type);
	EXPECT_EQ(4096, r->act[1].u);
}

/* Process annotations and the innermost activity's user data survive the
 * process, in the live report and in the kernel's ring. */
TEST_F_TIMEOUT(death, user_data, 120)
{
	struct ud_report r;
	int ready[2], status;
	uint64_t end;
	pid_t pid;
	char c;

	VM_SETUP_SKIPPED();

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct actrack_opts o = { .sz = sizeof(o) };
		uint32_t tok;

		close(ready[0]);
		if (actrack_init(&o) ||
		    actrack_backend() != ACTRACK_BACKEND_MODULE)
			_exit(120);
		if (actrack_set_string(actrack_process_data(), "role",
				       "ledger"))
			_exit(121);
		actrack_push_task(77);
		tok = actrack_push_lock_acquire(&vm_locks[0]);
		if (!tok ||
		    actrack_set_string(actrack_activity_data(tok), "request",
				       "GET /ledger") ||
		    actrack_set_uint(actrack_activity_data(tok), "bytes", 4096))
			_exit(122);
		if (write(ready[1], "r", 1) != 1)
			_exit(123);
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	close(ready[0]);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));

	memset(&r, 0, sizeof(r));
	r.pid = (uint32_t)pid;
	end = actrack_test_mono_ns() + 10000000000ULL;
	while (!r.found && actrack_test_mono_ns() < end)
		actrack_monitor_dispatch(self->w.m, 100, ud_keep, &r);
	check_ud(_metadata, &r);

	memset(&r, 0, sizeof(r));
	r.pid = (uint32_t)pid;
	EXPECT_GE(actrack_monitor_recent(self->w.m, ud_keep, &r), 1);
	check_ud(_metadata, &r);
}

/* Many deaths at once: each reported exactly once, in a burst. */
TEST_F_TIMEOUT(death, burst_of_32, 240)
{
	struct vm_victim_cfg cfg = { .threads = 1, .uid = -1 };
	struct vm_victim v[32];
	uint64_t t0, t1;
	int i, found = 0;

	VM_SETUP_SKIPPED();

	for (i = 0; i < 32; i++)
		ASSERT_EQ(0, vm_victim_start(&cfg, &v[i]));
	t0 = actrack_test_mono_ns();
	for (i = 0; i < 32; i++)
		kill(v[i].pid, SIGKILL);
	for (i = 0; i < 32; i++) {
		waitpid(v[i].pid, NULL, 0);
		close(v[i].go_fd);
	}
	for (i = 0; i < 32; i++)
		found += !!vm_wait_death(self->w.m, self->w.ds, v[i].pid, 10000);
	t1 = actrack_test_mono_ns();
	TH_LOG("32 processes killed together: %d reports in %llu ms", found,
	       (unsigned long long)(t1 - t0) / 1000000);
	EXPECT_EQ(32, found);
	for (i = 0; i < 32; i++) {
		unsigned int j, n = 0;

		for (j = 0; j < self->w.ds->nr; j++)
			n += self->w.ds->d[j].process.pid == (uint32_t)v[i].pid;
		EXPECT_EQ(1, n);
	}
}

TEST_HARNESS_MAIN
