// SPDX-License-Identifier: MIT
/*
 * actrack_monitor_open() against the real kernel: on a host without
 * actrack.ko the generic netlink family does not exist and the answer is
 * exactly -ENOENT; inside the test VM (ACTRACK_IN_VM=1, module loaded) it
 * must succeed, and so must the queries.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "test_harness.h"
#include "actrack.h"

static bool in_vm(void)
{
	const char *v = getenv("ACTRACK_IN_VM");

	return v && !strcmp(v, "1");
}

static void count_fn(const struct actrack_death *d, void *arg)
{
	(*(int *)arg)++;
}

TEST(open)
{
	struct actrack_monitor *m = (struct actrack_monitor *)&m;
	struct actrack_kstats st;
	int ret, n = 0;

	ret = actrack_monitor_open(0, &m);
	if (!in_vm()) {
		/* No module on the host: the family lookup says so. */
		ASSERT_EQ(-ENOENT, ret);
		ASSERT_EQ(NULL, m);
		return;
	}
	ASSERT_EQ(0, ret);
	ASSERT_NE(NULL, m);
	ASSERT_GE(actrack_monitor_fd(m), 0);
	/* Nothing pending for us: a short wait times out with 0. */
	EXPECT_GE(actrack_monitor_dispatch(m, 10, count_fn, &n), 0);
	ret = actrack_monitor_recent(m, count_fn, &n);
	EXPECT_GE(ret, 0);
	TH_LOG("recent deaths in the kernel ring: %d", ret);
	memset(&st, 0xa5, sizeof(st));
	ASSERT_EQ(0, actrack_monitor_stats(m, &st));
	TH_LOG("arenas %llu, attached %llu, cleanups %llu, records freed "
	       "%llu, reports sent %llu dropped %llu, arena %llu bytes: "
	       "%llu used %llu free",
	       (unsigned long long)st.arenas,
	       (unsigned long long)st.attached,
	       (unsigned long long)st.cleanups,
	       (unsigned long long)st.records_freed,
	       (unsigned long long)st.reports_sent,
	       (unsigned long long)st.reports_dropped,
	       (unsigned long long)st.arena_size,
	       (unsigned long long)st.bytes_used,
	       (unsigned long long)st.bytes_free);
	EXPECT_LE(st.reports_dropped, st.reports_sent + st.reports_dropped);
	actrack_monitor_close(m);
}

TEST(open_all_uids)
{
	struct actrack_monitor *m = NULL;
	int ret = actrack_monitor_open(ACTRACK_MONITOR_ALL_UIDS, &m);

	if (!in_vm()) {
		ASSERT_EQ(-ENOENT, ret);
		return;
	}
	/* The VM runs the tests as root. */
	if (geteuid() != 0)
		SKIP(return, "needs root in the VM");
	ASSERT_EQ(0, ret);
	actrack_monitor_close(m);
}

TEST(many_monitors)
{
	struct actrack_monitor *m[8];
	int i, ret;

	for (i = 0; i < 8; i++) {
		ret = actrack_monitor_open(0, &m[i]);
		if (!in_vm()) {
			ASSERT_EQ(-ENOENT, ret);
			return;
		}
		ASSERT_EQ(0, ret);
	}
	for (i = 0; i < 8; i++)
		actrack_monitor_close(m[i]);
}

TEST(bad_arguments)
{
	struct actrack_monitor *m = NULL;

	EXPECT_EQ(-EINVAL, actrack_monitor_open(0, NULL));
	EXPECT_EQ(-EINVAL, actrack_monitor_open(1U << 7, &m));
	EXPECT_EQ(NULL, m);
	EXPECT_EQ(-EINVAL, actrack_monitor_fd(NULL));
	EXPECT_EQ(-EINVAL, actrack_monitor_dispatch(NULL, 0, count_fn, NULL));
	EXPECT_EQ(-EINVAL, actrack_monitor_recent(NULL, count_fn, NULL));
	EXPECT_EQ(-EINVAL, actrack_monitor_stats(NULL, NULL));
	actrack_monitor_close(NULL);
}

TEST_HARNESS_MAIN
