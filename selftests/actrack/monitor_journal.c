// SPDX-License-Identifier: MIT
/*
 * `actrack monitor --journal` writes each death report as one journal
 * entry with its fields (cli/journal.c).  The test VM has no journald: in
 * a mount namespace of its own the test mounts a tmpfs on
 * /run/systemd/journal and binds the datagram socket that libsystemd's
 * sd_journal_sendv() writes to, then reads the entry in the journal's
 * native protocol (NAME=value lines; NAME, a 64-bit little-endian length
 * and the bytes for values with newlines).  The booted-system test
 * (scripts/systemtest) checks the same path through a real journald.
 */
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "vm_util.h"
#include "snapshot_helpers.h"	/* cli_path */
#include "journal_native.h"

#define MESSAGE_ID	"5c4a1e0d3f7b4a6e9d2c8b1f0a3e6d47"
FIXTURE(journal) {
	int sock;
	pid_t mon;
	int mon_err;		/* its stderr */
	struct entry *e;
};

FIXTURE_SETUP(journal)
{

	self->sock = -1;
	self->mon = 0;
	self->e = NULL;
	VM_REQUIRE_MODULE();
	if (geteuid() != 0)
		SKIP(return, "needs root (a mount namespace)");
	self->sock = journal_socket_bind();
	ASSERT_LE(0, self->sock);
	self->e = calloc(1, sizeof(*self->e));
	ASSERT_NE(NULL, self->e);
}

FIXTURE_TEARDOWN(journal)
{
	if (self->mon > 0) {
		kill(self->mon, SIGTERM);
		waitpid(self->mon, NULL, 0);
		close(self->mon_err);
	}
	if (self->sock >= 0)
		close(self->sock);
	free(self->e);
}

/* @dumps: --minidump-dir, or NULL. */
static int start_monitor(FIXTURE_DATA(journal) *self, const char *dumps)
{
	int e[2];

	if (pipe2(e, O_CLOEXEC))
		return -errno;
	self->mon = fork();
	if (self->mon < 0)
		return -errno;
	if (!self->mon) {
		char *argv[] = { "actrack", "monitor", "--journal", "--count",
				 "1", "--timeout", "60", NULL, NULL, NULL };

		if (dumps) {
			argv[7] = "--minidump-dir";
			argv[8] = (char *)dumps;
		}

		dup2(e[1], 2);
		execv(cli_path(), argv);
		_exit(127);
	}
	close(e[1]);
	self->mon_err = e[0];
	return 0;
}

/*
 * @v is SIGKILLed by a helper that calls itself "systemd-oomd" (as a
 * renamed process may).  Return the helper's pid, or -errno.
 */
static pid_t kill_as_oomd(struct vm_victim *v)
{
	pid_t h;
	int st;

	h = fork();
	if (h < 0)
		return -errno;
	if (!h) {
		if (prctl(PR_SET_NAME, "systemd-oomd", 0, 0, 0))
			_exit(1);
		_exit(kill(v->pid, SIGKILL) ? 2 : 0);
	}
	if (waitpid(h, &st, 0) != h || st)
		return -ECHILD;
	/* Already dead: signal 0 finds the zombie, then it is reaped. */
	return vm_victim_kill(v, 0) < 0 ? -ECHILD : h;
}

/*
 * Tracked victims die (@cmd: 'x' exit 7, 'a' abort, 'o' SIGKILLed by
 * kill_as_oomd()) one after another until the monitor's entry arrives:
 * no guess of when it has subscribed.  Return the pid the entry is about
 * (one of ours), its sender's into *@killer for 'o', or -1.
 */
static pid_t kill_until_entry(FIXTURE_DATA(journal) *self, char cmd,
			      pid_t *killer)
{
	pid_t helpers[200];
	struct vm_victim_cfg cfg = {
		.phase = ACTRACK_PHASE_MAIN_LOOP_STARTED, .uid = -1,
	};
	pid_t pids[200];
	char buf[32];
	int nr = 0;

	while (nr < 200) {
		struct pollfd p = { .fd = self->sock, .events = POLLIN };
		struct vm_victim v = { 0 };
		ssize_t n;

		if (vm_victim_start(&cfg, &v))
			return -1;
		pids[nr] = v.pid;
		helpers[nr] = cmd == 'o' ? kill_as_oomd(&v) : 0;
		if (helpers[nr] < 0 ||
		    (cmd != 'o' && vm_victim_cmd(&v, cmd, 7) < 0))
			return -1;
		nr++;
		if (poll(&p, 1, 200) <= 0)
			continue;
		n = recv(self->sock, self->e->buf, sizeof(self->e->buf), 0);
		if (n <= 0)
			return -1;
		self->e->len = (size_t)n;
		if (!field(self->e, "ACTRACK_PID", buf, sizeof(buf)))
			return -1;
		for (int i = 0; i < nr; i++)
			if (pids[i] == atoi(buf)) {
				if (killer)
					*killer = helpers[i];
				return pids[i];
			}
		return -1;
	}
	return -1;
}

/* What every entry carries, for @pid. */
static void common_fields(struct __test_metadata *_metadata,
			  const struct entry *e, pid_t pid)
{
	static char v[64 * 1024];
	char want[64];

	ASSERT_NE(NULL, field(e, "MESSAGE_ID", v, sizeof(v)));
	EXPECT_STREQ(MESSAGE_ID, v);
	ASSERT_NE(NULL, field(e, "SYSLOG_IDENTIFIER", v, sizeof(v)));
	EXPECT_STREQ("actrack", v);
	ASSERT_NE(NULL, field(e, "ACTRACK_UID", v, sizeof(v)));
	EXPECT_STREQ("0", v);
	/* The test binary is the victim: argv[0]'s last component. */
	ASSERT_NE(NULL, field(e, "ACTRACK_COMM", v, sizeof(v)));
	EXPECT_STREQ("monitor_journal", v);
	ASSERT_NE(NULL, field(e, "ACTRACK_CMDLINE", v, sizeof(v)));
	EXPECT_NE(NULL, strstr(v, "monitor_journal"));
	ASSERT_NE(NULL, field(e, "ACTRACK_PHASE", v, sizeof(v)));
	EXPECT_STREQ("main-loop-started", v);
	ASSERT_NE(NULL, field(e, "ACTRACK_SOURCE", v, sizeof(v)));
	EXPECT_STREQ("live", v);
	/* The text of `actrack monitor`, several lines. */
	ASSERT_NE(NULL, field(e, "MESSAGE", v, sizeof(v)));
	snprintf(want, sizeof(want), "pid %d (", pid);
	EXPECT_EQ(0, strncmp(v, want, strlen(want))) TH_LOG("%s", v);
	EXPECT_NE(NULL, strchr(v, '\n'));
	EXPECT_NE('\n', v[strlen(v) - 1]);
	/* The JSON of `actrack monitor --json`, one line. */
	ASSERT_NE(NULL, field(e, "ACTRACK_REPORT", v, sizeof(v)));
	EXPECT_EQ('{', v[0]);
	EXPECT_EQ(NULL, strchr(v, '\n'));
	snprintf(want, sizeof(want), "\"pid\":%d,", pid);
	EXPECT_NE(NULL, strstr(v, want)) TH_LOG("%s", v);
}

TEST_F_TIMEOUT(journal, exit_code_entry, 120)
{
	static char v[64 * 1024];
	pid_t pid;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, start_monitor(self, NULL));
	pid = kill_until_entry(self, 'x', NULL);
	ASSERT_LT(0, pid) TH_LOG("no journal entry for a victim");
	common_fields(_metadata, self->e, pid);
	ASSERT_NE(NULL, field(self->e, "ACTRACK_EXIT_CODE", v, sizeof(v)));
	EXPECT_STREQ("7", v);
	EXPECT_EQ(NULL, field(self->e, "ACTRACK_SIGNAL", v, sizeof(v)));
	/* No --minidump-dir, no minidump named. */
	EXPECT_EQ(NULL, field(self->e, "ACTRACK_MINIDUMP", v, sizeof(v)));
	ASSERT_NE(NULL, field(self->e, "PRIORITY", v, sizeof(v)));
	EXPECT_STREQ("5", v);
	ASSERT_NE(NULL, field(self->e, "MESSAGE", v, sizeof(v)));
	EXPECT_NE(NULL, strstr(v, ") exited with code 7 after phase "
				  "main-loop-started\n"));
}

TEST_F_TIMEOUT(journal, signal_entry, 120)
{
	static char v[64 * 1024];
	pid_t pid;

	char dumps[] = "/tmp/actrack-jdumps-XXXXXX", want[128], magic[4];
	int fd;

	VM_SETUP_SKIPPED();
	ASSERT_NE(NULL, mkdtemp(dumps));
	ASSERT_EQ(0, start_monitor(self, dumps));
	pid = kill_until_entry(self, 'a', NULL);
	ASSERT_LT(0, pid) TH_LOG("no journal entry for a victim");
	common_fields(_metadata, self->e, pid);
	/* The entry names the minidump written before it, by its path. */
	ASSERT_NE(NULL, field(self->e, "ACTRACK_MINIDUMP", v, sizeof(v)));
	snprintf(want, sizeof(want), "-%d.dmp", pid);
	EXPECT_EQ(0, strncmp(v, dumps, strlen(dumps))) TH_LOG("%s", v);
	ASSERT_LT(strlen(want), strlen(v));
	EXPECT_STREQ(want, v + strlen(v) - strlen(want));
	fd = open(v, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", v, strerror(errno));
	EXPECT_EQ(4, read(fd, magic, 4));
	EXPECT_EQ(0, memcmp(magic, "MDMP", 4));
	close(fd);
	unlink(v);
	rmdir(dumps);
	ASSERT_NE(NULL, field(self->e, "ACTRACK_SIGNAL", v, sizeof(v)));
	EXPECT_STREQ("6", v);
	ASSERT_NE(NULL, field(self->e, "ACTRACK_SIGNAL_NAME", v, sizeof(v)));
	EXPECT_STREQ("SIGABRT", v);
	ASSERT_NE(NULL, field(self->e, "ACTRACK_CORE_DUMPED", v, sizeof(v)));
	EXPECT_EQ(NULL, field(self->e, "ACTRACK_EXIT_CODE", v, sizeof(v)));
	ASSERT_NE(NULL, field(self->e, "PRIORITY", v, sizeof(v)));
	EXPECT_STREQ("3", v);
}

/*
 * A SIGKILL from a process named systemd-oomd: the entry names it with
 * its pid, comm, executable (our own: the helper did not exec) and cgroup
 * (ours), and the text says so on its killer line.
 */
TEST_F_TIMEOUT(journal, killer_entry, 120)
{
	static char v[64 * 1024];
	char exe[PATH_MAX], cg[PATH_MAX], want[3 * PATH_MAX];
	pid_t pid, killer = 0;
	ssize_t n;
	int ret;

	VM_SETUP_SKIPPED();
	/* /proc/PID/cgroup has its "0::" line once cgroup2 is mounted. */
	ret = vm_cg_mount();
	if (ret)
		SKIP(return, "no cgroup2: %s", strerror(-ret));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = '\0';
	ASSERT_EQ(0, vm_cg_of(getpid(), cg, sizeof(cg)));
	ASSERT_EQ(0, start_monitor(self, NULL));
	pid = kill_until_entry(self, 'o', &killer);
	ASSERT_LT(0, pid) TH_LOG("no journal entry for a victim");
	common_fields(_metadata, self->e, pid);
	ASSERT_NE(NULL, field(self->e, "ACTRACK_KILLER", v, sizeof(v)));
	EXPECT_STREQ("process", v);
	ASSERT_NE(NULL, field(self->e, "ACTRACK_KILLER_PID", v, sizeof(v)));
	EXPECT_EQ(killer, atoi(v));
	ASSERT_NE(NULL, field(self->e, "ACTRACK_KILLER_COMM", v, sizeof(v)));
	EXPECT_STREQ("systemd-oomd", v);
	ASSERT_NE(NULL, field(self->e, "ACTRACK_KILLER_EXE", v, sizeof(v)));
	EXPECT_STREQ(exe, v);
	ASSERT_NE(NULL, field(self->e, "ACTRACK_KILLER_CGROUP", v,
			      sizeof(v)));
	EXPECT_STREQ(cg, v);
	ASSERT_NE(NULL, field(self->e, "MESSAGE", v, sizeof(v)));
	snprintf(want, sizeof(want), "\n  killed by SIGKILL from pid %d "
		 "(systemd-oomd, %s, uid 0, %s) via kill()\n", killer, exe, cg);
	EXPECT_NE(NULL, strstr(v, want)) TH_LOG("%s", v);
}

TEST_HARNESS_MAIN
