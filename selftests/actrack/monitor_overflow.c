// SPDX-License-Identifier: MIT
/*
 * A monitor that does not read fast enough: the kernel drops the reports
 * its socket has no room for, and recv() says ENOBUFS once.  Before, the
 * library handed that -ENOBUFS to the caller and went on: the dropped
 * reports were gone without saying which.  Now it reads what was queued,
 * then the kernel's ring of recent deaths, delivers the reports it had
 * not delivered (each once, in order), and tells the gap callback how many
 * it recovered and which report numbers were lost for good.
 *
 * The overflow is made by shrinking the monitor's receive buffer to the
 * minimum (one report fits) and letting tracked children die while the
 * test does not dispatch.  The kernel's counters say how many reports it
 * sent and dropped, which the gap must match.  Runs in the test VM only.
 */
#include "vm_util.h"

struct gaps {
	int nr;
	struct actrack_monitor_gap g[8];
	unsigned int nr_deaths[8];	/* reports delivered before the call */
	struct vm_deaths *ds;
};

static void keep_gap(const struct actrack_monitor_gap *gap, void *arg)
{
	struct gaps *gs = arg;

	if (gs->nr < 8) {
		gs->g[gs->nr] = *gap;
		gs->nr_deaths[gs->nr] = gs->ds->nr;
	}
	gs->nr++;
}

/* A tracked child that exits at once.  Return: its pid, or -1. */
static pid_t tracked_exit(int code)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		struct actrack_opts o = { .sz = sizeof(o) };

		if (actrack_init(&o) ||
		    actrack_backend() != ACTRACK_BACKEND_MODULE)
			_exit(113);
		_exit(code);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != code)
		return -1;
	return pid;
}

static long module_param(const char *name)
{
	char path[128], buf[32];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/actrack/parameters/%s",
		 name);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

struct ring_find {
	pid_t pid;
	bool found;
};

static void ring_find(const struct actrack_death *d, void *arg)
{
	struct ring_find *r = arg;

	if (d->process.pid == (uint32_t)r->pid)
		r->found = true;
}

FIXTURE(overflow) {
	struct actrack_monitor *m;
	struct vm_deaths *ds;
	struct gaps gs;
};

FIXTURE_SETUP(overflow)
{
	self->m = NULL;
	self->ds = NULL;
	VM_REQUIRE_MODULE();
	self->ds = calloc(1, sizeof(*self->ds));
	ASSERT_NE(NULL, self->ds);
	memset(&self->gs, 0, sizeof(self->gs));
	self->gs.ds = self->ds;
}

FIXTURE_TEARDOWN(overflow)
{
	if (self->m)
		actrack_monitor_close(self->m);
	if (self->ds) {
		vm_deaths_free(self->ds);
		free(self->ds);
	}
}

/*
 * @n children die while the monitor does not read; then it dispatches
 * until their reports stop coming.  Checks what every overflow must
 * satisfy and returns the gap in @gap, the baseline report number in
 * @base and the number the kernel sent (not dropped) in @sent.  Without
 * @gap_fn the monitor has no gap callback: the overflow must then be told
 * by one actrack_monitor_dispatch() returning -ENOBUFS (@gap stays 0).
 */
static void flood_with(struct __test_metadata *_metadata,
		       FIXTURE_DATA(overflow) *self, int n, bool gap_fn,
		       struct actrack_monitor_gap *gap, uint64_t *base,
		       uint64_t *sent)
{
	struct actrack_kstats st0, st1;
	struct actrack_death *d;
	struct ring_find rf = { 0 };
	pid_t *pids, first;
	int one = 1, i, seen, nobufs = 0;
	uint64_t end, want;

	memset(gap, 0, sizeof(*gap));
	ASSERT_EQ(0, actrack_monitor_open(0, &self->m));
	if (gap_fn)
		ASSERT_EQ(0, actrack_monitor_set_gap_fn(self->m, keep_gap,
							&self->gs));
	/* The kernel's minimum (about 2 KiB): one report fits. */
	ASSERT_EQ(0, setsockopt(actrack_monitor_fd(self->m), SOL_SOCKET,
				SO_RCVBUF, &one, sizeof(one)));

	/*
	 * The counters are read before the report that starts the count:
	 * the kernel counts a report as sent after genlmsg_unicast()
	 * returns, so a reader can hold a report the counters do not show
	 * yet (once in CI: 81 reports counted for 80 deaths).  That first
	 * report is counted out below: it reached us, so it was sent.
	 */
	ASSERT_EQ(0, actrack_monitor_stats(self->m, &st0));
	/* A report heard before the flood: the number to count from. */
	first = tracked_exit(3);
	ASSERT_LT(0, first);
	d = vm_wait_death(self->m, self->ds, (uint32_t)first, 10000);
	ASSERT_NE(NULL, d) TH_LOG("no report of pid %d", first);
	ASSERT_LT(0, d->seq);
	*base = d->seq;
	ASSERT_EQ(1, self->ds->nr);

	pids = calloc((size_t)n, sizeof(*pids));
	ASSERT_NE(NULL, pids);
	for (i = 0; i < n; i++) {
		pids[i] = tracked_exit(i % 100);
		ASSERT_LT(0, pids[i]) TH_LOG("child %d", i);
	}
	/* The kernel is done with the last one once it is in the ring;
	 * its report to us follows (or was dropped) right after. */
	rf.pid = pids[n - 1];
	end = actrack_test_mono_ns() + 20000000000ULL;
	while (!rf.found && actrack_test_mono_ns() < end) {
		ASSERT_LE(0, actrack_monitor_recent(self->m, ring_find, &rf));
		if (!rf.found)
			usleep(20000);
	}
	ASSERT_TRUE(rf.found);
	end = actrack_test_mono_ns() + 20000000000ULL;
	for (;;) {
		ASSERT_EQ(0, actrack_monitor_stats(self->m, &st1));
		want = st1.reports_sent + st1.reports_dropped -
		       st0.reports_sent - st0.reports_dropped - 1;
		if (want >= (uint64_t)n || actrack_test_mono_ns() >= end)
			break;
		usleep(10000);
	}
	/* We are the only subscriber: one report per death. */
	ASSERT_EQ((uint64_t)n, want);
	*sent = st1.reports_sent - st0.reports_sent - 1;
	/* Some were dropped, or there is nothing to test. */
	ASSERT_LT(0, st1.reports_dropped - st0.reports_dropped);

	/* Now read: the queued ones, then what the ring still has. */
	end = actrack_test_mono_ns() + 10000000000ULL;
	for (;;) {
		int ret = actrack_monitor_dispatch(self->m, 200, vm_keep_death,
						   self->ds);

		if (!gap_fn && ret == -ENOBUFS) {
			/* Told once, after the recovered reports. */
			nobufs++;
			continue;
		}
		ASSERT_LE(0, ret) TH_LOG("dispatch: %s", strerror(-ret));
		if (ret == 0 && (self->gs.nr || nobufs))
			break;
		ASSERT_LT(actrack_test_mono_ns(), end) TH_LOG("no gap reported");
	}
	if (!gap_fn) {
		/* Nothing else says it: the overflow is not silent. */
		ASSERT_EQ(1, nobufs);
		ASSERT_EQ(0, self->gs.nr);
		goto reports;
	}
	ASSERT_EQ(1, self->gs.nr);
	*gap = self->gs.g[0];
	TH_LOG("%d deaths: %llu sent, %llu dropped; gap: %u recovered, "
	       "lost #%llu..#%llu (base #%llu)", n,
	       (unsigned long long)*sent,
	       (unsigned long long)(st1.reports_dropped - st0.reports_dropped),
	       gap->recovered, (unsigned long long)gap->first_lost,
	       (unsigned long long)gap->last_lost, (unsigned long long)*base);
	EXPECT_EQ(ACTRACK_GAP_OVERFLOW, gap->reason);
	EXPECT_EQ(getuid(), gap->uid);
	EXPECT_NE(0, gap->overflow_ns);
	EXPECT_EQ(0, gap->unloaded_ns);
	EXPECT_EQ(0, gap->loaded_ns);
	EXPECT_EQ(0, gap->resubscribed_ns);
	/* Called after the reports it recovered. */
	EXPECT_EQ(self->ds->nr, self->gs.nr_deaths[0]);

reports:
	/* Each child at most once, numbered in order, with its exit code. */
	seen = 0;
	for (unsigned int k = 1; k < self->ds->nr; k++) {
		d = &self->ds->d[k];
		EXPECT_LT(self->ds->d[k - 1].seq, d->seq)
			TH_LOG("report %u out of order", k);
		for (i = 0; i < n && pids[i] != (pid_t)d->process.pid; i++)
			;
		EXPECT_LT(i, n) TH_LOG("report of unknown pid %u",
				       d->process.pid);
		if (i < n) {
			EXPECT_EQ(i % 100, d->exit_code);
			pids[i] = 0;	/* a second one would be unknown */
			seen++;
		}
	}
	EXPECT_EQ(self->ds->nr - 1, seen);
	free(pids);
}

static void flood(struct __test_metadata *_metadata,
		  FIXTURE_DATA(overflow) *self, int n,
		  struct actrack_monitor_gap *gap, uint64_t *base,
		  uint64_t *sent)
{
	flood_with(_metadata, self, n, true, gap, base, sent);
}

/* Everything dropped is still in the ring: all recovered, none lost. */
TEST_F_TIMEOUT(overflow, ring_fills_the_gap, 120)
{
	struct actrack_monitor_gap gap;
	uint64_t base, sent;
	long kept = module_param("deaths_kept");
	int n;

	VM_SETUP_SKIPPED();
	ASSERT_LT(8, kept);
	n = kept / 2;
	flood(_metadata, self, n, &gap, &base, &sent);
	EXPECT_EQ(0, gap.first_lost);
	EXPECT_EQ(0, gap.last_lost);
	EXPECT_EQ((uint64_t)n - sent, gap.recovered);
	/* All n, numbered base+1 .. base+n. */
	ASSERT_EQ(1 + n, self->ds->nr);
	EXPECT_EQ(base + n, self->ds->d[n].seq);
}

/*
 * More were dropped than the ring keeps: the oldest dropped are lost,
 * and the gap names them by number.  Later deaths are still heard.
 */
TEST_F_TIMEOUT(overflow, lost_range_then_live_again, 180)
{
	struct actrack_monitor_gap gap;
	struct actrack_death *d;
	uint64_t base, sent;
	long kept = module_param("deaths_kept");
	pid_t pid;
	int n;

	VM_SETUP_SKIPPED();
	ASSERT_LT(8, kept);
	n = kept + 16;
	flood(_metadata, self, n, &gap, &base, &sent);
	/* Heard: base, the sent ones (base+1 ..), then the ring's last. */
	EXPECT_EQ((uint64_t)kept, gap.recovered);
	EXPECT_EQ(base + sent + 1, gap.first_lost);
	EXPECT_EQ(base + n - kept, gap.last_lost);
	ASSERT_EQ(1 + sent + kept, self->ds->nr);
	EXPECT_EQ(base + sent, self->ds->d[sent].seq);
	EXPECT_EQ(base + n - kept + 1, self->ds->d[sent + 1].seq);
	EXPECT_EQ(base + n, self->ds->d[self->ds->nr - 1].seq);

	/* The socket is usable again, and nothing is replayed twice. */
	pid = tracked_exit(5);
	ASSERT_LT(0, pid);
	d = vm_wait_death(self->m, self->ds, (uint32_t)pid, 10000);
	ASSERT_NE(NULL, d) TH_LOG("no report of pid %d after the gap", pid);
	EXPECT_EQ(base + n + 1, d->seq);
	EXPECT_EQ(5, d->exit_code);
	EXPECT_EQ(1, self->gs.nr);
	EXPECT_EQ(2 + sent + kept, self->ds->nr);
}

/*
 * A caller that set no gap callback (as every caller before ABI 1.3):
 * the overflow is recovered all the same, and told by -ENOBUFS from
 * actrack_monitor_dispatch(), as it was before the recovery existed.
 * Before this was fixed, such a caller was never told at all.
 */
TEST_F_TIMEOUT(overflow, no_gap_fn_gets_enobufs, 180)
{
	struct actrack_monitor_gap gap;
	uint64_t base, sent;
	long kept = module_param("deaths_kept");
	int n;

	VM_SETUP_SKIPPED();
	ASSERT_LT(8, kept);
	n = kept + 16;
	flood_with(_metadata, self, n, false, &gap, &base, &sent);
	/* Recovered as with a callback: the ring's last kept reports. */
	ASSERT_EQ(1 + sent + kept, self->ds->nr);
	EXPECT_EQ(base + n, self->ds->d[self->ds->nr - 1].seq);
}

TEST_HARNESS_MAIN
