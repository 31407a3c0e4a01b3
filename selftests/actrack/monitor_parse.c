// SPDX-License-Identifier: MIT
/*
 * The death report parser against well-formed, hostile and random netlink
 * messages: every malformed message is refused whole (-EBADMSG), nothing
 * out of bounds is read (run under SANITIZE=1 too), nothing leaks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <libmnl/libmnl.h>

/* The 6.1 harness passes formats through and compares int literals with
 * our unsigned fields: silence exactly that, for gcc and clang. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "test_harness.h"
#include "internal.h"

#define BUF_SIZE (1024 * 1024)

static char *new_msg(uint8_t cmd)
{
	char *buf = calloc(1, BUF_SIZE);
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = 0x20;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = ACTRACK_GENL_VERSION;
	return buf;
}

static struct actrack_activity act(uint8_t type, uint64_t object)
{
	struct actrack_activity a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.object = object;
	a.origin = 0x401000 + object;
	a.time_ns = 1000000000ULL + object;
	a.info = object * 2;
	return a;
}

static void put_thread(struct nlmsghdr *nlh, uint32_t tid, const char *name,
		       uint32_t depth, uint32_t nr_acts)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);
	uint32_t i;

	mnl_attr_put_u32(nlh, ACTRACK_T_TID, tid);
	mnl_attr_put_strz(nlh, ACTRACK_T_NAME, name);
	mnl_attr_put_u32(nlh, ACTRACK_T_DEPTH, depth);
	for (i = 0; i < nr_acts; i++) {
		struct actrack_activity a = act(ACTRACK_ACT_TASK_RUN, i + 1);

		mnl_attr_put(nlh, ACTRACK_T_ACTIVITY, sizeof(a), &a);
	}
	mnl_attr_nest_end(nlh, nest);
}

/* A complete, valid report; @threads with 3 activities each. */
static struct nlmsghdr *valid_msg(char *buf, uint32_t threads)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	static const char cmdline[] = "/usr/bin/server\0--port\0" "80\0";
	uint32_t i;

	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 4242);
	mnl_attr_put_u64(nlh, ACTRACK_A_START_TICKS, 123456);
	mnl_attr_put_u32(nlh, ACTRACK_A_UID, 1000);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, SIGKILL);
	mnl_attr_put_u32(nlh, ACTRACK_A_SIGNAL, SIGKILL);
	mnl_attr_put_u64(nlh, ACTRACK_A_EXIT_TIME_NS, 5000000000ULL);
	mnl_attr_put_u32(nlh, ACTRACK_A_PHASE, ACTRACK_PHASE_MAIN_LOOP_STARTED);
	mnl_attr_put(nlh, ACTRACK_A_CMDLINE, sizeof(cmdline) - 1, cmdline);
	mnl_attr_put_u64(nlh, ACTRACK_A_SEQ, 7);
	mnl_attr_put_u32(nlh, ACTRACK_A_FLAGS, 0);
	for (i = 0; i < threads; i++)
		put_thread(nlh, 4242 + i, "worker", 3, 3);
	return nlh;
}

static int parse(const struct nlmsghdr *nlh, struct actrack_death *d)
{
	return __actrack_parse_death(nlh, nlh->nlmsg_len, d);
}

TEST(valid_report)
{
	char *buf = new_msg(ACTRACK_CMD_DEATH);
	struct nlmsghdr *nlh = valid_msg(buf, 2);
	struct actrack_death d;
	uint32_t i, j;

	ASSERT_EQ(0, parse(nlh, &d));
	EXPECT_EQ(4242, d.process.pid);
	EXPECT_EQ(123456, d.process.start_ticks);
	EXPECT_EQ(1000, d.uid);
	EXPECT_EQ(SIGKILL, d.signal);
	EXPECT_EQ(0, d.exit_code);
	EXPECT_EQ(SIGKILL, d.wait_status);
	EXPECT_FALSE(d.core_dumped);
	EXPECT_EQ(5000000000ULL, d.exit_time_ns);
	EXPECT_EQ(ACTRACK_PHASE_MAIN_LOOP_STARTED, d.process.phase);
	EXPECT_EQ(7, d.seq);
	EXPECT_STREQ("/usr/bin/server --port 80", d.process.cmdline);
	ASSERT_EQ(2, d.process.nr_threads);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(4242 + i, d.process.threads[i].tid);
		EXPECT_STREQ("worker", d.process.threads[i].name);
		EXPECT_EQ(3, d.process.threads[i].depth);
		EXPECT_FALSE(d.process.threads[i].torn);
		ASSERT_EQ(3, d.process.threads[i].nr_activities);
		for (j = 0; j < 3; j++) {
			struct actrack_activity a = act(ACTRACK_ACT_TASK_RUN,
							j + 1);

			EXPECT_EQ(0, memcmp(&a,
					    &d.process.threads[i].activities[j].a,
					    sizeof(a)));
		}
	}
	__actrack_free_death(&d);
	EXPECT_EQ(NULL, d.process.threads);

	/* A GET_DEATHS dump entry parses the same way. */
	((struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->cmd =
		ACTRACK_CMD_GET_DEATHS;
	ASSERT_EQ(0, parse(nlh, &d));
	__actrack_free_death(&d);
	free(buf);
}

TEST(exit_code_and_core)
{
	char *buf = new_msg(ACTRACK_CMD_DEATH);
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct actrack_death d;

	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 77);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 3 << 8);
	mnl_attr_put_u32(nlh, ACTRACK_A_EXIT_CODE, 3);
	ASSERT_EQ(0, parse(nlh, &d));
	EXPECT_EQ(3, d.exit_code);
	EXPECT_EQ(0, d.signal);
	EXPECT_EQ(0, d.process.nr_threads);
	EXPECT_EQ(NULL, d.process.threads);
	EXPECT_STREQ("", d.process.cmdline);
	__actrack_free_death(&d);
	free(buf);

	/* SIGSEGV with the core bit in the status. */
	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = (struct nlmsghdr *)buf;
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 78);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, SIGSEGV | 0x80);
	ASSERT_EQ(0, parse(nlh, &d));
	EXPECT_EQ(SIGSEGV, d.signal);
	EXPECT_TRUE(d.core_dumped);
	free(buf);

	/* Without a status, from SIGNAL + CORE_DUMPED. */
	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = (struct nlmsghdr *)buf;
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 79);
	mnl_attr_put_u32(nlh, ACTRACK_A_SIGNAL, SIGABRT);
	mnl_attr_put(nlh, ACTRACK_A_CORE_DUMPED, 0, NULL);
	ASSERT_EQ(0, parse(nlh, &d));
	EXPECT_EQ(SIGABRT, d.signal);
	EXPECT_TRUE(d.core_dumped);
	EXPECT_TRUE(WIFSIGNALED(d.wait_status));
	EXPECT_EQ(SIGABRT, WTERMSIG(d.wait_status));
	EXPECT_TRUE(WCOREDUMP(d.wait_status));
	free(buf);

	/* Without a status, from EXIT_CODE. */
	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = (struct nlmsghdr *)buf;
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 80);
	mnl_attr_put_u32(nlh, ACTRACK_A_EXIT_CODE, 255);
	ASSERT_EQ(0, parse(nlh, &d));
	EXPECT_EQ(255, d.exit_code);
	EXPECT_TRUE(WIFEXITED(d.wait_status));
	EXPECT_EQ(255, WEXITSTATUS(d.wait_status));
	free(buf);
}

/* With @comm, a process sender; its @exe and @cgroup (ABI 1.8) when not
 * NULL.
 */
static void put_killer(struct nlmsghdr *nlh, uint32_t kind, uint32_t sig,
		       int32_t code, uint32_t pid, const char *comm,
		       const char *exe, const char *cgroup)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, ACTRACK_A_KILLER);

	mnl_attr_put_u32(nlh, ACTRACK_KL_KIND, kind);
	mnl_attr_put_u32(nlh, ACTRACK_KL_SIGNAL, sig);
	mnl_attr_put_u32(nlh, ACTRACK_KL_CODE, (uint32_t)code);
	if (comm) {
		mnl_attr_put_u32(nlh, ACTRACK_KL_PID, pid);
		mnl_attr_put_u32(nlh, ACTRACK_KL_UID, 0);
		mnl_attr_put_strz(nlh, ACTRACK_KL_COMM, comm);
	}
	if (exe)
		mnl_attr_put_strz(nlh, ACTRACK_KL_EXE, exe);
	if (cgroup)
		mnl_attr_put_strz(nlh, ACTRACK_KL_CGROUP, cgroup);
	mnl_attr_nest_end(nlh, nest);
}

static void put_oom(struct nlmsghdr *nlh, const char *memcg, bool rss)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, ACTRACK_A_OOM);

	if (rss) {
		mnl_attr_put_u64(nlh, ACTRACK_OOM_ANON, 522397696ULL);
		mnl_attr_put_u64(nlh, ACTRACK_OOM_FILE, 4096);
		mnl_attr_put_u64(nlh, ACTRACK_OOM_SHMEM, 0);
	}
	mnl_attr_put_u32(nlh, ACTRACK_OOM_SCORE_ADJ, (uint32_t)-500);
	if (memcg) {
		mnl_attr_put_strz(nlh, ACTRACK_OOM_MEMCG, memcg);
		mnl_attr_put_u64(nlh, ACTRACK_OOM_MEMCG_LIMIT, 536870912ULL);
		mnl_attr_put_u64(nlh, ACTRACK_OOM_MEMCG_USAGE, 536608768ULL);
	}
	mnl_attr_nest_end(nlh, nest);
}

/* Each adds its attributes to a valid report of a death by SIGKILL. */
static void w_none(struct nlmsghdr *nlh)
{
	(void)nlh;	/* an older module */
}

static void w_reaper(struct nlmsghdr *nlh)
{
	put_killer(nlh, ACTRACK_KILLER_PROCESS, SIGKILL, SI_USER, 812,
		   "grim-reaper", NULL, NULL);
}

static void w_reaper_where(struct nlmsghdr *nlh)
{
	put_killer(nlh, ACTRACK_KILLER_PROCESS, SIGKILL, SI_USER, 812,
		   "grim-reaper", "/usr/sbin/grim-reaper",
		   "/system.slice/cron.service");
}

static void w_exe_no_nul(struct nlmsghdr *nlh)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, ACTRACK_A_KILLER);

	mnl_attr_put_u32(nlh, ACTRACK_KL_KIND, ACTRACK_KILLER_PROCESS);
	mnl_attr_put_u32(nlh, ACTRACK_KL_SIGNAL, SIGKILL);
	mnl_attr_put(nlh, ACTRACK_KL_EXE, 4, "/bin");
	mnl_attr_nest_end(nlh, nest);
}

static void w_other_signal(struct nlmsghdr *nlh)
{
	put_killer(nlh, ACTRACK_KILLER_KERNEL, SIGSEGV, 1, 0, NULL, NULL,
		   NULL);
}

static void w_bad_kind(struct nlmsghdr *nlh)
{
	put_killer(nlh, 4, SIGKILL, SI_USER, 0, NULL, NULL, NULL);
}

static void w_oom_memcg(struct nlmsghdr *nlh)
{
	put_oom(nlh, "/system.slice/db.service", true);
}

static void w_oom_global(struct nlmsghdr *nlh)
{
	put_oom(nlh, NULL, true);
}

static void w_oom_no_rss(struct nlmsghdr *nlh)
{
	put_oom(nlh, NULL, false);
}

/*
 * ACTRACK_A_KILLER (ABI 1.6; its EXE and CGROUP, ABI 1.8) and
 * ACTRACK_A_OOM (ABI 1.7), added to a valid report of a death by SIGKILL:
 * parsed into has_killer/killer and has_oom/oom; absent (an older
 * module): false and all zeros.  A killer that names another signal than
 * the death's, or no kind, or a string without its NUL, and an OOM kill
 * without its RSS, are malformed.
 */
static const struct who_row {
	const char *what;
	void (*put)(struct nlmsghdr *nlh);
	int ret;			/* parse()'s */
	bool has_killer;
	struct actrack_death_killer k;
	bool has_oom;
	struct actrack_death_oom o;
} who_rows[] = {
	{ "neither", w_none, 0, false, { 0 }, false, { 0 } },
	{ "a sender, ABI 1.6", w_reaper, 0, true,
	  { .kind = ACTRACK_KILLER_PROCESS, .signal = SIGKILL,
	    .code = SI_USER, .pid = 812, .comm = "grim-reaper" },
	  false, { 0 } },
	{ "a sender with its exe and cgroup", w_reaper_where, 0, true,
	  { .kind = ACTRACK_KILLER_PROCESS, .signal = SIGKILL,
	    .code = SI_USER, .pid = 812, .comm = "grim-reaper",
	    .exe = "/usr/sbin/grim-reaper",
	    .cgroup = "/system.slice/cron.service" }, false, { 0 } },
	{ .what = "an exe without its NUL", .put = w_exe_no_nul,
	  .ret = -EBADMSG },
	{ .what = "another signal than the death's", .put = w_other_signal,
	  .ret = -EBADMSG },
	{ .what = "no such kind", .put = w_bad_kind, .ret = -EBADMSG },
	{ "an OOM kill in a memory cgroup", w_oom_memcg, 0, false, { 0 }, true,
	  { 522397696ULL, 4096, 0, -500, "/system.slice/db.service",
	    536870912ULL, 536608768ULL } },
	{ "a global OOM kill", w_oom_global, 0, false, { 0 }, true,
	  { 522397696ULL, 4096, 0, -500, "", 0, 0 } },
	{ .what = "an OOM kill without its RSS", .put = w_oom_no_rss,
	  .ret = -EBADMSG },
};

TEST(killer_and_oom)
{
	const struct who_row *r;
	struct actrack_death d;
	struct nlmsghdr *nlh;
	char *buf;

	for (size_t i = 0; i < sizeof(who_rows) / sizeof(who_rows[0]); i++) {
		r = &who_rows[i];
		TH_LOG("%s", r->what);
		buf = new_msg(ACTRACK_CMD_DEATH);
		nlh = valid_msg(buf, 0);
		r->put(nlh);
		ASSERT_EQ(r->ret, parse(nlh, &d));
		free(buf);
		if (r->ret)
			continue;
		EXPECT_EQ(r->has_killer, d.has_killer);
		EXPECT_EQ(r->k.kind, d.killer.kind);
		EXPECT_EQ(r->k.signal, d.killer.signal);
		EXPECT_EQ(r->k.code, d.killer.code);
		EXPECT_EQ(r->k.pid, d.killer.pid);
		EXPECT_EQ(r->k.uid, d.killer.uid);
		EXPECT_STREQ(r->k.comm, d.killer.comm);
		EXPECT_STREQ(r->k.exe, d.killer.exe);
		EXPECT_STREQ(r->k.cgroup, d.killer.cgroup);
		EXPECT_EQ(r->has_oom, d.has_oom);
		EXPECT_EQ(r->o.anon, d.oom.anon);
		EXPECT_EQ(r->o.file, d.oom.file);
		EXPECT_EQ(r->o.shmem, d.oom.shmem);
		EXPECT_EQ(r->o.score_adj, d.oom.score_adj);
		EXPECT_STREQ(r->o.memcg, d.oom.memcg);
		EXPECT_EQ(r->o.memcg_limit, d.oom.memcg_limit);
		EXPECT_EQ(r->o.memcg_usage, d.oom.memcg_usage);
		__actrack_free_death(&d);
	}
}

/* The OOM killer kills with SIGKILL: an OOM kill of another death is
 * malformed.
 */
TEST(oom_only_with_sigkill)
{
	char *buf = new_msg(ACTRACK_CMD_DEATH);
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct actrack_death d;

	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 4243);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, SIGTERM);
	put_oom(nlh, NULL, true);
	EXPECT_EQ(-EBADMSG, parse(nlh, &d));
	free(buf);
}

/*
 * ACTRACK_A_CGROUP (ABI 1.7): the path as sent, and the systemd unit the
 * library derives from it as systemd does (the first component below the
 * slices, if it is a .service or .scope, unescaped; what a host's
 * `journalctl -u` matches); without it (an older module) both are "".
 * One that is not a string is malformed.
 */
TEST(cgroup)
{
	static const struct {
		const char *path, *unit;
	} cases[] = {
		{ "/system.slice/db.service", "db.service" },
		{ "/init.scope", "init.scope" },
		/* A user manager's units are below its user@.service. */
		{ "/user.slice/user-1000.slice/user@1000.service/app.slice/"
		  "app-gnome-term-4242.scope", "user@1000.service" },
		/* A delegated subtree; a container's own units. */
		{ "/system.slice/db.service/worker", "db.service" },
		{ "/machine.slice/machine-web.scope/payload/system.slice/"
		  "nginx.service", "machine-web.scope" },
		{ "/../../system.slice/cron.service", "cron.service" },
		{ "/machine.slice/_cpu.service", "cpu.service" },
		{ "/_x.slice/y.scope", "y.scope" },
		{ "/system.slice", "" },
		{ "/a/.service/.scope", "" },
		{ "/a/b.service", "" },
		{ "/", "" },
		{ "", "" },
		{ "/x.services/y.scoped", "" },
	};
	struct actrack_death d;
	char *buf;
	struct nlmsghdr *nlh;

	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = valid_msg(buf, 0);
	ASSERT_EQ(0, parse(nlh, &d));
	EXPECT_STREQ("", d.cgroup);
	EXPECT_STREQ("", d.unit);
	__actrack_free_death(&d);
	free(buf);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf = new_msg(ACTRACK_CMD_DEATH);
		nlh = valid_msg(buf, 0);
		mnl_attr_put_strz(nlh, ACTRACK_A_CGROUP, cases[i].path);
		ASSERT_EQ(0, parse(nlh, &d));
		EXPECT_STREQ(cases[i].path, d.cgroup);
		EXPECT_STREQ(cases[i].unit, d.unit) TH_LOG("%s", cases[i].path);
		__actrack_free_death(&d);
		free(buf);
	}

	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = valid_msg(buf, 0);
	mnl_attr_put(nlh, ACTRACK_A_CGROUP, 4, "/abc");	/* no NUL */
	EXPECT_EQ(-EBADMSG, parse(nlh, &d));
	free(buf);
}

/* Build a valid report, then let @mutate break it; it must be refused. */
typedef void (*mutate_fn)(struct nlmsghdr *nlh);

static int parse_mutated(mutate_fn fn, bool with_valid)
{
	char *buf = new_msg(ACTRACK_CMD_DEATH);
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct actrack_death d;
	int ret;

	if (with_valid)
		valid_msg(buf, 1);
	fn(nlh);
	memset(&d, 0x5a, sizeof(d));
	ret = parse(nlh, &d);
	if (ret == 0)
		__actrack_free_death(&d);
	else if (d.process.threads != NULL || d.process.nr_threads != 0 ||
		 d.process.pid != 0)
		ret = -1000;	/* a refused report must come back empty */
	free(buf);
	return ret;
}

static void m_pid_u16(struct nlmsghdr *nlh)
{
	mnl_attr_put_u16(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 0);
}

static void m_pid_u64(struct nlmsghdr *nlh)
{
	mnl_attr_put_u64(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 0);
}

static void m_ticks_u32(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_START_TICKS, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 0);
}

static void m_no_pid(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 0);
}

static void m_no_status(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
}

static void m_dup_pid(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 6);
}

static void m_stopped(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 0x137f);
}

static void m_signal_mismatch(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, SIGKILL);
	mnl_attr_put_u32(nlh, ACTRACK_A_SIGNAL, SIGTERM);
}

static void m_signal_range(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_SIGNAL, 200);
}

/* 0x7f in a wait status's signal bits means "stopped", not a signal. */
static void m_signal_stopped_marker(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_SIGNAL, 0x7f);
}

static void m_exit_range(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_EXIT_CODE, 256);
}

static void m_exit_and_signal(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_EXIT_CODE, 1);
	mnl_attr_put_u32(nlh, ACTRACK_A_SIGNAL, 9);
}

static void m_core_payload(struct nlmsghdr *nlh)
{
	uint32_t one = 1;

	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_SIGNAL, 11);
	mnl_attr_put(nlh, ACTRACK_A_CORE_DUMPED, sizeof(one), &one);
}

static void m_activity_short(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);
	struct actrack_activity a = act(1, 1);

	mnl_attr_put(nlh, ACTRACK_T_ACTIVITY, sizeof(a) - 1, &a);
	mnl_attr_nest_end(nlh, n);
}

static void m_activity_long(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);
	char big[sizeof(struct actrack_activity) + 8] = { 0 };

	mnl_attr_put(nlh, ACTRACK_T_ACTIVITY, sizeof(big), big);
	mnl_attr_nest_end(nlh, n);
}

static void m_too_many_activities(struct nlmsghdr *nlh)
{
	put_thread(nlh, 1, "x", ACTRACK_THREAD_MAX_SLOTS + 1,
		   ACTRACK_THREAD_MAX_SLOTS + 1);
}

static void m_tid_u8(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);

	mnl_attr_put_u8(nlh, ACTRACK_T_TID, 1);
	mnl_attr_nest_end(nlh, n);
}

static void m_torn_payload(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);

	mnl_attr_put_u32(nlh, ACTRACK_T_TORN, 1);
	mnl_attr_nest_end(nlh, n);
}

static void m_empty_name(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);

	mnl_attr_put(nlh, ACTRACK_T_NAME, 0, NULL);
	mnl_attr_nest_end(nlh, n);
}

static void m_dup_tid(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);

	mnl_attr_put_u32(nlh, ACTRACK_T_TID, 1);
	mnl_attr_put_u32(nlh, ACTRACK_T_TID, 2);
	mnl_attr_nest_end(nlh, n);
}

static void m_thread_tiny(struct nlmsghdr *nlh)
{
	uint16_t two = 2;

	/* A "nested" attribute of 2 bytes cannot hold an attribute. */
	mnl_attr_put(nlh, ACTRACK_A_THREAD, sizeof(two), &two);
}

static void m_thread_garbage(struct nlmsghdr *nlh)
{
	char junk[7] = { 1, 2, 3, 4, 5, 6, 7 };

	/* Looks like a nest header but its inner attribute overruns. */
	struct nlattr *n = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);
	struct nlattr *inner = mnl_nlmsg_get_payload_tail(nlh);

	mnl_attr_put(nlh, ACTRACK_T_NAME, sizeof(junk), junk);
	inner->nla_len = 200;
	mnl_attr_nest_end(nlh, n);
}

static void m_trailing_bytes(struct nlmsghdr *nlh)
{
	/* Two stray bytes after the last attribute. */
	nlh->nlmsg_len += 2;
}

static void m_attr_len_short(struct nlmsghdr *nlh)
{
	struct nlattr *a = mnl_nlmsg_get_payload_tail(nlh);

	a->nla_len = 2;	/* shorter than its own header */
	a->nla_type = ACTRACK_A_PID;
	nlh->nlmsg_len += 4;
}

static void m_attr_overrun(struct nlmsghdr *nlh)
{
	struct nlattr *a = mnl_nlmsg_get_payload_tail(nlh);

	mnl_attr_put_u32(nlh, ACTRACK_A_PHASE, 1);
	a->nla_len = 64;	/* beyond the message */
}

static void m_cmdline_string_type(struct nlmsghdr *nlh)
{
	/* A flag where a u32 belongs. */
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put(nlh, ACTRACK_A_PHASE, 0, NULL);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 0);
}

static void base(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 0);
}

static void m_flags_u16(struct nlmsghdr *nlh)
{
	base(nlh);
	mnl_attr_put_u16(nlh, ACTRACK_A_FLAGS, 1);
}

static void m_seq_u32(struct nlmsghdr *nlh)
{
	base(nlh);
	mnl_attr_put_u32(nlh, ACTRACK_A_SEQ, 1);
}

static void m_uid_u64(struct nlmsghdr *nlh)
{
	base(nlh);
	mnl_attr_put_u64(nlh, ACTRACK_A_UID, 1);
}

static void m_phase_empty(struct nlmsghdr *nlh)
{
	base(nlh);
	mnl_attr_put(nlh, ACTRACK_A_PHASE, 0, NULL);
}

static void m_cmd_wrong(struct nlmsghdr *nlh)
{
	((struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->cmd =
		ACTRACK_CMD_GET_STATS;
}

static void m_exit_time_u32(struct nlmsghdr *nlh)
{
	base(nlh);
	mnl_attr_put_u32(nlh, ACTRACK_A_EXIT_TIME_NS, 1);
}

TEST(hostile_attribute_sets)
{
	static const struct {
		const char *name;
		mutate_fn fn;
		bool with_valid;
	} cases[] = {
		{ "pid as u16", m_pid_u16, false },
		{ "pid as u64", m_pid_u64, false },
		{ "start_ticks as u32", m_ticks_u32, false },
		{ "no pid", m_no_pid, false },
		{ "no exit status at all", m_no_status, false },
		{ "pid twice", m_dup_pid, true },
		{ "stopped, not dead", m_stopped, false },
		{ "signal disagrees with status", m_signal_mismatch, false },
		{ "signal 200", m_signal_range, false },
		{ "signal 127", m_signal_stopped_marker, false },
		{ "exit code 256", m_exit_range, false },
		{ "exit code and signal", m_exit_and_signal, false },
		{ "core flag with payload", m_core_payload, false },
		{ "activity 1 byte short", m_activity_short, true },
		{ "activity 8 bytes long", m_activity_long, true },
		{ "65 activities", m_too_many_activities, true },
		{ "tid as u8", m_tid_u8, true },
		{ "torn flag with payload", m_torn_payload, true },
		{ "empty thread name", m_empty_name, true },
		{ "tid twice", m_dup_tid, true },
		{ "2-byte nest", m_thread_tiny, true },
		{ "nest overruns", m_thread_garbage, true },
		{ "trailing bytes", m_trailing_bytes, true },
		{ "attribute shorter than header", m_attr_len_short, true },
		{ "attribute beyond message", m_attr_overrun, true },
		{ "flag where u32", m_cmdline_string_type, false },
		{ "flags as u16", m_flags_u16, false },
		{ "seq as u32", m_seq_u32, false },
		{ "uid as u64", m_uid_u64, false },
		{ "empty phase", m_phase_empty, false },
		{ "exit_time as u32", m_exit_time_u32, false },
		{ "wrong command", m_cmd_wrong, true },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = parse_mutated(cases[i].fn, cases[i].with_valid);

		if (ret != -EBADMSG)
			TH_LOG("case '%s': %d", cases[i].name, ret);
		EXPECT_EQ(-EBADMSG, ret);
	}
}

TEST(bad_headers)
{
	char *buf = new_msg(ACTRACK_CMD_DEATH);
	struct nlmsghdr *nlh = valid_msg(buf, 1);
	struct actrack_death d;
	uint32_t len = nlh->nlmsg_len;

	/* Message longer than the bytes we hold. */
	EXPECT_EQ(-EBADMSG, __actrack_parse_death(nlh, len - 1, &d));
	/* Header lies about its length. */
	nlh->nlmsg_len = NLMSG_HDRLEN + 2;
	EXPECT_EQ(-EBADMSG, __actrack_parse_death(nlh, len, &d));
	nlh->nlmsg_len = 0;
	EXPECT_EQ(-EBADMSG, __actrack_parse_death(nlh, len, &d));
	nlh->nlmsg_len = UINT32_MAX;
	EXPECT_EQ(-EBADMSG, __actrack_parse_death(nlh, len, &d));
	/* Less than a header in the buffer. */
	nlh->nlmsg_len = len;
	EXPECT_EQ(-EBADMSG, __actrack_parse_death(nlh, 8, &d));
	EXPECT_EQ(0, __actrack_parse_death(nlh, len, &d));
	__actrack_free_death(&d);
	free(buf);
}

TEST(lenient_where_harmless)
{
	char *buf = new_msg(ACTRACK_CMD_DEATH);
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct actrack_death d;
	char name[100], cmd[ACTRACK_CMDLINE_MAX + 100];
	struct nlattr *n;

	/* Unknown attributes (a newer kernel) are ignored; so is
	 * NLA_F_NESTED on the thread nest; a name without NUL is cut. */
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 0);
	mnl_attr_put_u64(nlh, ACTRACK_A_MAX + 3, 1);
	mnl_attr_put(nlh, ACTRACK_A_MAX + 4, 3, "abc");
	/* u64 alignment padding, as many as the kernel needs */
	mnl_attr_put(nlh, ACTRACK_A_PAD, 0, NULL);
	mnl_attr_put(nlh, ACTRACK_A_PAD, 0, NULL);
	memset(cmd, 'c', sizeof(cmd));
	mnl_attr_put(nlh, ACTRACK_A_CMDLINE, sizeof(cmd), cmd);
	n = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);
	n->nla_type |= NLA_F_NESTED;
	memset(name, 'n', sizeof(name));
	mnl_attr_put(nlh, ACTRACK_T_NAME, sizeof(name), name);
	mnl_attr_put_u32(nlh, ACTRACK_T_MAX + 1, 9);
	mnl_attr_put(nlh, ACTRACK_T_PAD, 0, NULL);
	mnl_attr_put(nlh, ACTRACK_T_PAD, 0, NULL);
	mnl_attr_put(nlh, ACTRACK_T_TORN, 0, NULL);
	mnl_attr_nest_end(nlh, n);
	ASSERT_EQ(0, parse(nlh, &d));
	EXPECT_EQ(ACTRACK_CMDLINE_MAX, strlen(d.process.cmdline));
	EXPECT_EQ(ACTRACK_CMDLINE_MAX, strlen(d.process.cmdline));
	ASSERT_EQ(1, d.process.nr_threads);
	EXPECT_EQ(31, strlen(d.process.threads[0].name));
	EXPECT_TRUE(d.process.threads[0].torn);
	EXPECT_EQ(0, d.process.threads[0].nr_activities);
	__actrack_free_death(&d);
	free(buf);

	/* An unpadded last attribute (3-byte cmdline) is accepted. */
	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = (struct nlmsghdr *)buf;
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 0);
	mnl_attr_put(nlh, ACTRACK_A_CMDLINE, 3, "a\0b");
	nlh->nlmsg_len -= 1;
	ASSERT_EQ(0, parse(nlh, &d));
	EXPECT_STREQ("a b", d.process.cmdline);
	free(buf);

	/* An empty thread nest is a thread with nothing known. */
	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = (struct nlmsghdr *)buf;
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 0);
	mnl_attr_put(nlh, ACTRACK_A_THREAD, 0, NULL);
	ASSERT_EQ(0, parse(nlh, &d));
	EXPECT_EQ(1, d.process.nr_threads);
	__actrack_free_death(&d);
	free(buf);
}

static struct actrack_module module_rec(uint64_t base, const char *path)
{
	struct actrack_module m;

	memset(&m, 0, sizeof(m));
	m.owner.data_id = 1;
	m.owner.pid = 4242;
	m.base = base;
	m.size = 0x5000;
	m.vaddr = 0x1000;
	m.build_id_size = 20;
	memset(m.build_id, 0xab, 20);
	strcpy(m.path, path);
	return m;
}

TEST(modules)
{
	char *buf = new_msg(ACTRACK_CMD_DEATH);
	struct nlmsghdr *nlh = valid_msg(buf, 1);
	struct actrack_module m = module_rec(0x7f0000000000, "/usr/lib/libc.so.6");
	struct actrack_death d;

	mnl_attr_put(nlh, ACTRACK_A_MODULE, sizeof(m), &m);
	m = module_rec(0x555500000000, "/usr/bin/server");
	memset(m.path, 'p', sizeof(m.path));	/* no NUL */
	mnl_attr_put(nlh, ACTRACK_A_MODULE, sizeof(m), &m);
	ASSERT_EQ(0, parse(nlh, &d));
	ASSERT_EQ(2, d.process.nr_modules);
	EXPECT_EQ(1, d.process.nr_threads);
	EXPECT_EQ(0x7f0000000000, d.process.modules[0].base);
	EXPECT_EQ(0x5000, d.process.modules[0].size);
	EXPECT_EQ(0x1000, d.process.modules[0].vaddr);
	EXPECT_EQ(20, d.process.modules[0].build_id_size);
	EXPECT_EQ(0xab, d.process.modules[0].build_id[19]);
	EXPECT_STREQ("/usr/lib/libc.so.6", d.process.modules[0].path);
	EXPECT_EQ(sizeof(d.process.modules[1].path) - 1,
		  strlen(d.process.modules[1].path));
	__actrack_free_death(&d);
	EXPECT_EQ(NULL, d.process.modules);
	EXPECT_EQ(0, d.process.nr_modules);
	free(buf);

	/* A module record of the wrong size. */
	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = valid_msg(buf, 1);
	mnl_attr_put(nlh, ACTRACK_A_MODULE, sizeof(m) - 4, &m);
	EXPECT_EQ(-EBADMSG, parse(nlh, &d));
	free(buf);

	/* A build id longer than the field. */
	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = valid_msg(buf, 0);
	m = module_rec(1, "x");
	m.build_id_size = ACTRACK_BUILD_ID_MAX + 1;
	mnl_attr_put(nlh, ACTRACK_A_MODULE, sizeof(m), &m);
	EXPECT_EQ(-EBADMSG, parse(nlh, &d));
	EXPECT_EQ(NULL, d.process.modules);
	free(buf);

	/* Bounded: the excess is dropped and the report says so. */
	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = valid_msg(buf, 0);
	m = module_rec(1, "x");
	for (int i = 0; i < ACTRACK_LIB_MAX_MODULES + 3; i++)
		mnl_attr_put(nlh, ACTRACK_A_MODULE, sizeof(m), &m);
	ASSERT_LT(nlh->nlmsg_len, BUF_SIZE);
	ASSERT_EQ(0, parse(nlh, &d));
	EXPECT_EQ(ACTRACK_LIB_MAX_MODULES, d.process.nr_modules);
	EXPECT_TRUE(d.flags & ACTRACK_DEATH_TRUNCATED);
	__actrack_free_death(&d);
	free(buf);
}

/* One field record (struct actrack_field + name + value) at @off of @buf;
 * returns the offset after it. */
static uint32_t put_field(uint8_t *buf, uint32_t off, uint8_t type,
			  const char *name, const void *val, uint16_t vs)
{
	struct actrack_field f = { .type = type };
	uint32_t voff = (sizeof(f) + strlen(name) + 7) & ~7U;

	f.name_size = (uint8_t)strlen(name);
	f.value_size = vs;
	f.record_size = (uint16_t)((voff + vs + 7) & ~7U);
	memcpy(buf + off, &f, sizeof(f));
	memcpy(buf + off + sizeof(f), name, f.name_size);
	memcpy(buf + off + voff, val, vs);
	return off + f.record_size;
}

/* ACTRACK_T_USER_DATA: the activity index, then @len bytes of records. */
static void put_act_data(struct nlmsghdr *nlh, uint32_t idx,
			 const uint8_t *recs, uint32_t len)
{
	uint8_t *blob = calloc(1, sizeof(idx) + len);

	memcpy(blob, &idx, sizeof(idx));
	memcpy(blob + sizeof(idx), recs, len);
	mnl_attr_put(nlh, ACTRACK_T_USER_DATA, sizeof(idx) + len, blob);
	free(blob);
}

TEST(user_data)
{
	char *buf = new_msg(ACTRACK_CMD_DEATH);
	struct nlmsghdr *nlh = valid_msg(buf, 0);
	uint8_t recs[2048], garbage[64], big[1500];
	uint64_t n = 7;
	uint32_t len, len1, rawlen, biglen = 0;
	const struct actrack_snap_activity *acts;
	struct actrack_death d;
	struct nlattr *nest;

	memset(recs, 0, sizeof(recs));
	len = put_field(recs, 0, ACTRACK_VALUE_STRING, "role", "ledger", 6);
	mnl_attr_put(nlh, ACTRACK_A_PROCESS_DATA, len, recs);

	nest = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);
	mnl_attr_put_u32(nlh, ACTRACK_T_TID, 4242);
	mnl_attr_put_u32(nlh, ACTRACK_T_DEPTH, 3);
	for (uint32_t i = 0; i < 3; i++) {
		struct actrack_activity a = act(ACTRACK_ACT_TASK_RUN, i + 1);

		mnl_attr_put(nlh, ACTRACK_T_ACTIVITY, sizeof(a), &a);
	}
	/* Innermost (index 2): a string and an unsigned. */
	len1 = put_field(recs, 0, ACTRACK_VALUE_STRING, "op", "commit", 6);
	len1 = put_field(recs, len1, ACTRACK_VALUE_UNSIGNED, "n", &n, 8);
	put_act_data(nlh, 2, recs, len1);
	/* Outermost: raw bytes. */
	rawlen = put_field(recs, 0, ACTRACK_VALUE_RAW, "blob", "\x01\x02", 2);
	put_act_data(nlh, 0, recs, rawlen);
	/* Skipped, each alone: garbage, a second blob for index 2, an
	 * index out of range, an index past the stored activities, a blob
	 * too short for its index, a record cut short, an oversized blob. */
	memset(garbage, 0xff, sizeof(garbage));
	put_act_data(nlh, 1, garbage, sizeof(garbage));
	put_act_data(nlh, 2, recs, rawlen);
	put_act_data(nlh, 999, recs, rawlen);
	put_act_data(nlh, 5, recs, rawlen);
	mnl_attr_put(nlh, ACTRACK_T_USER_DATA, 2, "\x01\x00");
	len = put_field(recs, 0, ACTRACK_VALUE_STRING, "s", "0123456789", 10);
	put_act_data(nlh, 1, recs, len - 8);
	while (biglen + 40 < sizeof(big))
		biglen = put_field(big, biglen, ACTRACK_VALUE_UNSIGNED, "x",
				   &n, 8);
	put_act_data(nlh, 1, big, biglen);
	mnl_attr_nest_end(nlh, nest);

	ASSERT_EQ(0, parse(nlh, &d));
	ASSERT_EQ(1, d.process.nr_values);
	EXPECT_STREQ("role", d.process.values[0].name);
	EXPECT_EQ(ACTRACK_VALUE_STRING, d.process.values[0].type);
	EXPECT_STREQ("ledger", (char *)d.process.values[0].bytes);
	ASSERT_EQ(1, d.process.nr_threads);
	ASSERT_EQ(3, d.process.threads[0].nr_activities);
	acts = d.process.threads[0].activities;
	ASSERT_EQ(1, acts[0].nr_values);
	EXPECT_STREQ("blob", acts[0].values[0].name);
	EXPECT_EQ(ACTRACK_VALUE_RAW, acts[0].values[0].type);
	EXPECT_EQ(2, acts[0].values[0].size);
	EXPECT_EQ(0, acts[1].nr_values);
	EXPECT_EQ(NULL, acts[1].values);
	ASSERT_EQ(2, acts[2].nr_values);
	EXPECT_STREQ("op", acts[2].values[0].name);
	EXPECT_STREQ("commit", (char *)acts[2].values[0].bytes);
	EXPECT_STREQ("n", acts[2].values[1].name);
	EXPECT_EQ(ACTRACK_VALUE_UNSIGNED, acts[2].values[1].type);
	EXPECT_EQ(7, acts[2].values[1].u);
	/* The blob for index 5 went nowhere: there is no activity 5. */
	__actrack_free_death(&d);
	EXPECT_EQ(NULL, d.process.values);
	EXPECT_EQ(0, d.process.nr_values);
	free(buf);

	/* Process data: oversized, garbage, cut short: skipped, the report
	 * still parses. */
	for (int t = 0; t < 3; t++) {
		static uint8_t huge[ACTRACK_DEATH_PROCESS_DATA_MAX + 64];

		buf = new_msg(ACTRACK_CMD_DEATH);
		nlh = valid_msg(buf, 1);
		if (t == 0) {
			len = 0;
			while (len + 40 < sizeof(huge))
				len = put_field(huge, len,
						ACTRACK_VALUE_UNSIGNED, "x",
						&n, 8);
			mnl_attr_put(nlh, ACTRACK_A_PROCESS_DATA, len, huge);
		} else if (t == 1) {
			mnl_attr_put(nlh, ACTRACK_A_PROCESS_DATA,
				     sizeof(garbage), garbage);
		} else {
			len = put_field(recs, 0, ACTRACK_VALUE_STRING, "s",
					"0123456789", 10);
			mnl_attr_put(nlh, ACTRACK_A_PROCESS_DATA, len - 1,
				     recs);
		}
		ASSERT_EQ(0, parse(nlh, &d));
		EXPECT_EQ(0, d.process.nr_values);
		EXPECT_EQ(NULL, d.process.values);
		EXPECT_EQ(1, d.process.nr_threads);
		__actrack_free_death(&d);
		free(buf);
	}

	/* Twice is a malformed message, as for any single attribute; the
	 * values parsed so far are not leaked. */
	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = valid_msg(buf, 1);
	len = put_field(recs, 0, ACTRACK_VALUE_STRING, "role", "ledger", 6);
	mnl_attr_put(nlh, ACTRACK_A_PROCESS_DATA, len, recs);
	mnl_attr_put(nlh, ACTRACK_A_PROCESS_DATA, len, recs);
	EXPECT_EQ(-EBADMSG, parse(nlh, &d));
	EXPECT_EQ(NULL, d.process.values);
	free(buf);

	/* A thread with values and then a bad attribute: refused whole,
	 * the values already parsed are freed (ASan/LSan would tell). */
	buf = new_msg(ACTRACK_CMD_DEATH);
	nlh = valid_msg(buf, 0);
	nest = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);
	mnl_attr_put_u32(nlh, ACTRACK_T_TID, 1);
	{
		struct actrack_activity a = act(ACTRACK_ACT_TASK_RUN, 1);

		mnl_attr_put(nlh, ACTRACK_T_ACTIVITY, sizeof(a), &a);
	}
	put_act_data(nlh, 0, recs, len);
	mnl_attr_put_u16(nlh, ACTRACK_T_DEPTH, 1);	/* wrong size */
	mnl_attr_nest_end(nlh, nest);
	EXPECT_EQ(-EBADMSG, parse(nlh, &d));
	EXPECT_EQ(0, d.process.nr_threads);
	free(buf);
}

TEST(thread_count_bounded)
{
	char *buf = new_msg(ACTRACK_CMD_DEATH);
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct actrack_death d;
	uint32_t i;

	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 5);
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 0);
	for (i = 0; i < ACTRACK_LIB_MAX_THREADS + 50; i++) {
		struct nlattr *n = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);

		mnl_attr_put_u32(nlh, ACTRACK_T_TID, i + 1);
		mnl_attr_nest_end(nlh, n);
	}
	ASSERT_LT(nlh->nlmsg_len, BUF_SIZE);
	ASSERT_EQ(0, parse(nlh, &d));
	EXPECT_EQ(ACTRACK_LIB_MAX_THREADS, d.process.nr_threads);
	EXPECT_TRUE(d.flags & ACTRACK_DEATH_TRUNCATED);
	EXPECT_EQ(ACTRACK_LIB_MAX_THREADS,
		  d.process.threads[d.process.nr_threads - 1].tid);
	__actrack_free_death(&d);
	free(buf);
}

/* xorshift: reproducible without libc's rand state */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * The parser is plain userspace code, the same in the VM as here: under
 * the VM's emulation a tenth of the rounds keeps it far from the
 * harness timeout (make fuzz goes much further).
 */
TEST(random_mutations)
{
	char *buf = new_msg(ACTRACK_CMD_DEATH);
	struct nlmsghdr *nlh = valid_msg(buf, 4);
	uint32_t len = nlh->nlmsg_len;
	char *work = malloc(len);
	unsigned int ok = 0, bad = 0, i, k;
	unsigned int rounds = getenv("ACTRACK_IN_VM") ? 20000 : 200000;

	ASSERT_NE(NULL, work);
	for (i = 0; i < rounds; i++) {
		struct nlmsghdr *w = (struct nlmsghdr *)work;
		struct actrack_death d;
		unsigned int flips = 1 + rnd() % 8;

		memcpy(work, buf, len);
		for (k = 0; k < flips; k++) {
			uint32_t off = NLMSG_HDRLEN + rnd() % (len - NLMSG_HDRLEN);

			if (rnd() & 1)
				work[off] ^= (char)(1U << (rnd() % 8));
			else
				work[off] = (char)rnd();
		}
		/* Exact copies leave nothing after the message, so any
		 * overread would be caught by ASan. */
		if (__actrack_parse_death(w, len, &d) == 0) {
			ok++;
			/* A flipped type can make more nests, never more
			 * than the attributes there are. */
			ASSERT_LE(d.process.nr_threads, 32);
			for (k = 0; k < d.process.nr_threads; k++)
				ASSERT_LE(d.process.threads[k].nr_activities,
					  ACTRACK_THREAD_MAX_SLOTS);
			ASSERT_LE(strlen(d.process.cmdline),
			  ACTRACK_CMDLINE_MAX);
			__actrack_free_death(&d);
		} else {
			bad++;
		}
	}
	TH_LOG("%u mutated reports: %u parsed, %u refused", rounds, ok,
	       bad);
	EXPECT_GT(bad, 0);
	free(work);
	free(buf);
}

TEST(random_attribute_streams)
{
	char *buf = malloc(4096);
	unsigned int i, k, ok = 0;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < 100000; i++) {
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
		struct genlmsghdr *g;
		struct actrack_death d;
		unsigned int nr = rnd() % 12;

		g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
		g->cmd = ACTRACK_CMD_DEATH;
		/* Half of them start valid, so that the rest is what decides. */
		if (rnd() & 1) {
			mnl_attr_put_u32(nlh, ACTRACK_A_PID, 1);
			mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, 9);
		}
		for (k = 0; k < nr; k++) {
			char payload[96];
			uint16_t type = rnd() % (ACTRACK_A_MAX + 3);
			size_t plen = rnd() % 3 ? (1U << (rnd() % 4)) :
						  rnd() % sizeof(payload);

			for (size_t j = 0; j < sizeof(payload); j++)
				payload[j] = (char)rnd();
			if (type == ACTRACK_A_THREAD && (rnd() & 1)) {
				struct nlattr *n;

				n = mnl_attr_nest_start(nlh, type);
				for (unsigned int j = rnd() % 6; j; j--)
					mnl_attr_put(nlh, rnd() % (ACTRACK_T_MAX + 2),
						     rnd() % 3 ? 4 : rnd() % 72,
						     payload);
				mnl_attr_nest_end(nlh, n);
			} else {
				mnl_attr_put(nlh, type, plen, payload);
			}
		}
		if (__actrack_parse_death(nlh, nlh->nlmsg_len, &d) == 0) {
			ok++;
			__actrack_free_death(&d);
		}
	}
	TH_LOG("100000 random attribute streams: %u parsed", ok);
	free(buf);
}

TEST(stats)
{
	char *buf = new_msg(ACTRACK_CMD_GET_STATS);
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct actrack_kstats st;
	struct nlattr *n;

	n = mnl_attr_nest_start(nlh, ACTRACK_A_STATS);
	mnl_attr_put_u64(nlh, ACTRACK_S_ARENAS, 2);
	mnl_attr_put_u64(nlh, ACTRACK_S_BYTES_USED, 4096);
	mnl_attr_put_u64(nlh, ACTRACK_S_ARENA_SIZE, 1 << 22);
	mnl_attr_put_u64(nlh, ACTRACK_S_BYTES_FREE, 1000);
	mnl_attr_put_u64(nlh, ACTRACK_S_REPORTS_DROPPED, 3);
	mnl_attr_put_u64(nlh, ACTRACK_S_MAX + 1, 3);
	mnl_attr_nest_end(nlh, n);
	ASSERT_EQ(0, __actrack_parse_stats(nlh, nlh->nlmsg_len, &st));
	EXPECT_EQ(2, st.arenas);
	EXPECT_EQ(4096, st.bytes_used);
	EXPECT_EQ(1 << 22, st.arena_size);
	EXPECT_EQ(1000, st.bytes_free);
	EXPECT_EQ(3, st.reports_dropped);
	EXPECT_EQ(0, st.cleanups);

	/* A u32 counter is refused and leaves @st alone. */
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 1);
	n = mnl_attr_nest_start(nlh, ACTRACK_A_STATS);
	mnl_attr_put_u32(nlh, ACTRACK_S_CLEANUPS, 2);
	mnl_attr_nest_end(nlh, n);
	st.cleanups = 77;
	EXPECT_EQ(-EBADMSG, __actrack_parse_stats(nlh, nlh->nlmsg_len, &st));
	EXPECT_EQ(77, st.cleanups);
	free(buf);

	/* No stats nest at all. */
	buf = new_msg(ACTRACK_CMD_GET_STATS);
	nlh = (struct nlmsghdr *)buf;
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, 1);
	EXPECT_EQ(-EBADMSG, __actrack_parse_stats(nlh, nlh->nlmsg_len, &st));
	free(buf);
}

TEST_HARNESS_MAIN
