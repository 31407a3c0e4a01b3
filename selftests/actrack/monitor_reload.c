// SPDX-License-Identifier: MIT
/*
 * A monitor outlives a reload of actrack.ko (rmmod, then insmod: what a
 * DKMS upgrade does).  The subscription lives in the module and dies with
 * it; the monitor must notice the family going and coming through the
 * generic netlink controller's notifications, subscribe again (with the
 * same flags) and tell its caller when reports may have been lost.
 * Before that, a monitor kept across a reload heard nothing, with no error.
 *
 * Runs in the test VM only (module file /lib/modules/actrack.ko, or
 * $ACTRACK_KO); it leaves the module loaded, as it found it.
 */
#include "vm_util.h"

#define MODULE_NAME	"actrack"

/* Unload, waiting out references that are going away (exiting children). */
static int unload_settled(void)
{
	int ret = -EAGAIN;

	for (int i = 0; i < 200 && (ret == -EAGAIN || ret == -EBUSY); i++) {
		ret = syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK) ?
		      -errno : 0;
		if (ret)
			usleep(10 * 1000);
	}
	return ret;
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct gaps {
	int nr;
	struct actrack_monitor_gap g[8];
};

static void keep_gap(const struct actrack_monitor_gap *gap, void *arg)
{
	struct gaps *gs = arg;

	if (gs->nr < 8)
		gs->g[gs->nr] = *gap;
	gs->nr++;
}

FIXTURE(reload) {
	struct actrack_monitor *m;
	struct vm_deaths *ds;
	bool was_loaded;
};

FIXTURE_SETUP(reload)
{
	self->m = NULL;
	self->ds = NULL;
	self->was_loaded = !access(ACTRACK_DEVICE_PATH, F_OK);
	if (!getenv("ACTRACK_IN_VM") || access(vm_module_path(), R_OK))
		SKIP(return, "needs the test VM (ACTRACK_IN_VM, %s)",
		     vm_module_path());
	VM_REQUIRE_MODULE();
	self->ds = calloc(1, sizeof(*self->ds));
	ASSERT_NE(NULL, self->ds);
}

FIXTURE_TEARDOWN(reload)
{
	if (self->m)
		actrack_monitor_close(self->m);
	if (self->ds) {
		vm_deaths_free(self->ds);
		free(self->ds);
	}
	/* Leave it loaded for the tests that follow. */
	if (self->was_loaded && access(ACTRACK_DEVICE_PATH, F_OK))
		vm_module_load("");
}

/* Kill a tracked victim (as @uid, -1: ours) and wait for its report. */
static struct actrack_death *victim_report(struct __test_metadata *_metadata,
					   FIXTURE_DATA(reload) *self,
					   long uid, pid_t *pid)
{
	struct vm_victim_cfg cfg = {
		.threads = 1, .phase = ACTRACK_PHASE_MAIN_LOOP_STARTED,
		.uid = uid,
	};
	struct vm_victim v;
	int status;

	*pid = 0;
	if (vm_victim_start(&cfg, &v))
		return NULL;
	*pid = v.pid;
	status = vm_victim_kill(&v, SIGKILL);
	if (status < 0 || !WIFSIGNALED(status))
		return NULL;
	return vm_wait_death(self->m, self->ds, (uint32_t)v.pid, 10000);
}

/* The test that failed before: subscribed, rmmod, insmod, a death. */
TEST_F_TIMEOUT(reload, report_after_reload, 120)
{
	struct actrack_death *d;
	struct actrack_kstats st;
	pid_t pid;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, actrack_monitor_open(0, &self->m));
	/* Before the reload, reports come (the victim's set-up works). */
	d = victim_report(_metadata, self, -1, &pid);
	ASSERT_NE(NULL, d) TH_LOG("no report of pid %d before the reload",
				  pid);

	ASSERT_EQ(0, unload_settled());
	ASSERT_EQ(0, vm_module_load(""));
	/* The controller's notifications were queued by rmmod and insmod
	 * themselves: one non-blocking dispatch acts on both. */
	ASSERT_LE(0, actrack_monitor_dispatch(self->m, 0, vm_keep_death,
					      self->ds));
	d = victim_report(_metadata, self, -1, &pid);
	ASSERT_NE(NULL, d) TH_LOG("no report of pid %d after the reload",
				  pid);
	EXPECT_EQ(SIGKILL, d->signal);
	EXPECT_EQ(ACTRACK_PHASE_MAIN_LOOP_STARTED, d->process.phase);
	/* Queries go to the new instance. */
	ASSERT_EQ(0, actrack_monitor_stats(self->m, &st));
	EXPECT_LE(1, st.reports_sent);
}

/*
 * The caller hears of the gap twice: when the module goes, and when the
 * monitor is subscribed again, with the times the notices were read.
 * Subscribed for every uid: the renewed subscription keeps that.
 */
TEST_F_TIMEOUT(reload, gap_reported_all_uids_kept, 120)
{
	struct gaps gs = { 0 };
	struct actrack_death *d;
	uint64_t t0, t1, t2, t3;
	pid_t pid;

	VM_SETUP_SKIPPED();
	if (geteuid() != 0)
		SKIP(return, "needs root in the VM (--all-uids, uid 1000)");
	ASSERT_EQ(0, actrack_monitor_open(ACTRACK_MONITOR_ALL_UIDS,
					  &self->m));
	ASSERT_EQ(0, actrack_monitor_set_gap_fn(self->m, keep_gap, &gs));

	t0 = real_ns();
	ASSERT_EQ(0, unload_settled());
	ASSERT_EQ(0, actrack_monitor_dispatch(self->m, 0, vm_keep_death,
					      self->ds));
	/* Times of receipt: within the calls that unloaded and read. */
	t1 = real_ns();
	ASSERT_EQ(1, gs.nr);
	EXPECT_LE(t0, gs.g[0].unloaded_ns);
	EXPECT_GE(t1, gs.g[0].unloaded_ns);
	EXPECT_EQ(0, gs.g[0].loaded_ns);
	EXPECT_EQ(0, gs.g[0].resubscribed_ns);
	/* Still unloaded: nothing more to say. */
	ASSERT_EQ(0, actrack_monitor_dispatch(self->m, 0, vm_keep_death,
					      self->ds));
	ASSERT_EQ(1, gs.nr);

	t2 = real_ns();
	ASSERT_EQ(0, vm_module_load(""));
	ASSERT_EQ(0, actrack_monitor_dispatch(self->m, 0, vm_keep_death,
					      self->ds));
	t3 = real_ns();
	ASSERT_EQ(2, gs.nr);
	EXPECT_EQ(gs.g[0].unloaded_ns, gs.g[1].unloaded_ns);
	EXPECT_LE(t2, gs.g[1].loaded_ns);
	EXPECT_LE(gs.g[1].loaded_ns, gs.g[1].resubscribed_ns);
	EXPECT_GE(t3, gs.g[1].resubscribed_ns);

	/* Another uid's death: only an all-uids subscription hears it. */
	d = victim_report(_metadata, self, 1000, &pid);
	ASSERT_NE(NULL, d) TH_LOG("no report of uid 1000's pid %d", pid);
	EXPECT_EQ(1000, d->uid);
	EXPECT_EQ(2, gs.nr);
}

/* No callback set: the reload is still handled. */
TEST_F_TIMEOUT(reload, two_reloads_no_callback, 120)
{
	struct actrack_death *d;
	pid_t pid;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, actrack_monitor_open(0, &self->m));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, unload_settled());
		ASSERT_EQ(0, vm_module_load(""));
	}
	ASSERT_LE(0, actrack_monitor_dispatch(self->m, 0, vm_keep_death,
					      self->ds));
	d = victim_report(_metadata, self, -1, &pid);
	ASSERT_NE(NULL, d) TH_LOG("no report of pid %d after two reloads",
				  pid);
	EXPECT_EQ(-EINVAL, actrack_monitor_set_gap_fn(NULL, NULL, NULL));
}

TEST_HARNESS_MAIN
