// SPDX-License-Identifier: MIT
/*
 * `actrack monitor` end to end.  On the host (no module): the exact
 * "not loaded" line and exit 1, usage errors exit 2, --help.  In the VM:
 * a killed process shows up in --recent and live, as text (innermost
 * activity first) and as JSON that a strict parser accepts (outermost
 * first, as dump --json); the monitor says READY=1 on NOTIFY_SOCKET once
 * subscribed, and only then; --minidump-dir writes the report as a
 * minidump whose threads, registers and stacks are the report's
 * (cli_minidump checks one with lldb on the host).
 */
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include "vm_util.h"
#include "snapshot_helpers.h"	/* cli_path, slurp_fd */
#include "minidump_read.h"

static bool in_vm(void)
{
	const char *v = getenv("ACTRACK_IN_VM");

	return v && !strcmp(v, "1");
}

struct proc {
	pid_t pid;
	int out, err;	/* read ends */
};

/* @notify: NOTIFY_SOCKET for the child alone (vm_notify_open()), or NULL. */
static int spawn_notify(struct proc *p, const char *notify,
			char *const argv[])
{
	int o[2], e[2];

	if (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC))
		return -errno;
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (p->pid == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		if (notify && setenv("NOTIFY_SOCKET", notify, 1))
			_exit(126);
		execv(cli_path(), argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	p->out = o[0];
	p->err = e[0];
	return 0;
}

static int spawn(struct proc *p, char *const argv[])
{
	return spawn_notify(p, NULL, argv);
}

/* Nothing (more) was sent to the notification socket @fd. */
static bool notify_silent(int fd)
{
	char buf[64];

	return recv(fd, buf, sizeof(buf), MSG_DONTWAIT) < 0 &&
	       errno == EAGAIN;
}

/* All of @fd, NUL-terminated, then closed. */
static char *slurp(int fd)
{
	char *buf = slurp_fd(fd);

	close(fd);
	return buf;
}

/* Wait for @p; its exit code (128 + signal if killed). */
static int finish(struct proc *p, char **out, char **err)
{
	int status;

	*out = slurp(p->out);
	*err = slurp(p->err);
	if (waitpid(p->pid, &status, 0) != p->pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) :
				   128 + WTERMSIG(status);
}

static int run(char **out, char **err, char *const argv[])
{
	struct proc p;

	if (spawn(&p, argv))
		return -1;
	return finish(&p, out, err);
}

/* ---- a strict JSON checker (RFC 8259 grammar, no extensions) --------- */

static const char *json_value(const char *s, int depth);

static const char *json_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

static const char *json_string(const char *s)
{
	if (*s++ != '"')
		return NULL;
	while (*s != '"') {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			s++;
			if (*s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF",
						    s[i]) || !s[i])
						return NULL;
				s += 5;
				continue;
			}
			if (!*s || !strchr("\"\\/bfnrt", *s))
				return NULL;
		}
		s++;
	}
	return s + 1;
}

static const char *json_number(const char *s)
{
	const char *start;

	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return NULL;
	if (*s == '.') {
		start = ++s;
		while (*s >= '0' && *s <= '9')
			s++;
		if (s == start)
			return NULL;
	}
	return s;
}

static const char *json_value(const char *s, int depth)
{
	if (depth > 64)
		return NULL;
	s = json_ws(s);
	switch (*s) {
	case '{':
		s = json_ws(s + 1);
		if (*s == '}')
			return s + 1;
		for (;;) {
			s = json_string(json_ws(s));
			if (!s)
				return NULL;
			s = json_ws(s);
			if (*s++ != ':')
				return NULL;
			s = json_value(s, depth + 1);
			if (!s)
				return NULL;
			s = json_ws(s);
			if (*s == '}')
				return s + 1;
			if (*s++ != ',')
				return NULL;
		}
	case '[':
		s = json_ws(s + 1);
		if (*s == ']')
			return s + 1;
		for (;;) {
			s = json_value(s, depth + 1);
			if (!s)
				return NULL;
			s = json_ws(s);
			if (*s == ']')
				return s + 1;
			if (*s++ != ',')
				return NULL;
		}
	case '"':
		return json_string(s);
	case 't':
		return strncmp(s, "true", 4) ? NULL : s + 4;
	case 'f':
		return strncmp(s, "false", 5) ? NULL : s + 5;
	case 'n':
		return strncmp(s, "null", 4) ? NULL : s + 4;
	default:
		return json_number(s);
	}
}

/* One object per line, each valid on its own. */
static int json_lines(const char *text)
{
	int n = 0;

	while (*text) {
		const char *nl = strchr(text, '\n'), *end;
		char *line;

		if (!nl)
			return -1;
		line = strndup(text, (size_t)(nl - text));
		end = line && line[0] == '{' ? json_value(line, 0) : NULL;
		if (!end || *json_ws(end)) {
			free(line);
			return -1;
		}
		free(line);
		n++;
		text = nl + 1;
	}
	return n;
}

/* The line of @text that contains @needle, copied; NULL if none. */
static char *line_with(const char *text, const char *needle)
{
	const char *p = strstr(text, needle), *start, *end;

	if (!p)
		return NULL;
	for (start = p; start > text && start[-1] != '\n'; start--)
		;
	end = strchr(p, '\n');
	return strndup(start, end ? (size_t)(end - start) : strlen(start));
}

/* ---- host: no module ---------------------------------------------------- */

TEST(not_loaded)
{
	char *out, *err, notify[108];
	struct proc p;
	int rc, nfd;

	if (in_vm())
		SKIP(return, "the module is loaded in the VM");
	nfd = vm_notify_open(notify, sizeof(notify));
	ASSERT_LE(0, nfd) TH_LOG("notify socket: %s", strerror(-nfd));
	ASSERT_EQ(0, spawn_notify(&p, notify, (char *[]){ "actrack", "monitor",
		  NULL }));
	rc = finish(&p, &out, &err);
	EXPECT_EQ(1, rc);
	EXPECT_STREQ("", out);
	EXPECT_STREQ("actrack: monitor: actrack.ko is not loaded (no generic "
		     "netlink family \"actrack\")\n", err);
	/* Not subscribed, so never ready: systemd sees a failed start. */
	EXPECT_TRUE(notify_silent(nfd));
	close(nfd);
	unlink(notify);
	free(out);
	free(err);
}

/* Checked before anything is opened: the same with or without module. */
TEST(usage_errors)
{
	char *out, *err;
	int rc;
	static const char *const bad[][3] = {
		{ "--count", "x" }, { "--count", "-1" }, { "--timeout", "-1" },
		{ "--timeout", "1x" }, { "--bogus" }, { "extra" },
		{ "--count" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[5] = { "actrack", "monitor", (char *)bad[i][0],
				  (char *)bad[i][1], NULL };

		rc = run(&out, &err, argv);
		EXPECT_EQ(2, rc) TH_LOG("monitor %s %s", bad[i][0],
					bad[i][1] ? bad[i][1] : "");
		EXPECT_STREQ("", out);
		EXPECT_EQ(0, strncmp(err, "actrack: monitor: ", 18));
		EXPECT_NE(NULL, strstr(err, "(see 'actrack monitor --help')\n"));
		free(out);
		free(err);
	}
}

TEST(help)
{
	char *out, *err;
	int rc;

	rc = run(&out, &err, (char *[]){ "actrack", "monitor", "--help", NULL });
	EXPECT_EQ(0, rc);
	EXPECT_EQ(0, strncmp(out, "NAME\n    actrack monitor - ", 26));
	EXPECT_NE(NULL, strstr(out, "\nJSON OUTPUT\n"));
	EXPECT_NE(NULL, strstr(out, "\nEXIT STATUS\n"));
	EXPECT_STREQ("", err);
	free(out);
	free(err);
	rc = run(&out, &err, (char *[]){ "actrack", "help", "monitor", NULL });
	EXPECT_EQ(0, rc);
	EXPECT_EQ(0, strncmp(out, "NAME\n    actrack monitor - ", 26));
	free(out);
	free(err);
}

/* ---- VM: real reports ---------------------------------------------------- */

FIXTURE(live) {
	struct vm_victim v;
	int status;
	char head[ACTRACK_CMDLINE_MAX + 128];
	char cmdline[ACTRACK_CMDLINE_MAX + 1];
};

FIXTURE_SETUP(live)
{
	struct vm_victim_cfg cfg = {
		.threads = 1, .phase = ACTRACK_PHASE_MAIN_LOOP_STARTED,
		.uid = -1,
	};

	self->v.pid = 0;
	VM_REQUIRE_MODULE();
	vm_own_cmdline(self->cmdline, sizeof(self->cmdline));
	ASSERT_EQ(0, vm_victim_start(&cfg, &self->v));
	snprintf(self->head, sizeof(self->head), "pid %d (%s) killed by "
		 "SIGKILL after phase main-loop-started", self->v.pid,
		 self->cmdline);
}

FIXTURE_TEARDOWN(live)
{
	if (self->v.pid > 0 && kill(self->v.pid, 0) == 0)
		vm_victim_kill(&self->v, SIGKILL);
}

TEST_F_TIMEOUT(live, recent_text_and_json, 60)
{
	char *out, *err, pidkey[32], *line;
	int rc, tries;

	VM_SETUP_SKIPPED();
	self->status = vm_victim_kill(&self->v, SIGKILL);
	/* The report is in the ring once the kernel is done with it. */
	for (tries = 0; tries < 100; tries++) {
		rc = run(&out, &err, (char *[]){ "actrack", "monitor",
			 "--recent", "--count", "0", NULL });
		if (rc == 0 && strstr(out, self->head))
			break;
		free(out);
		free(err);
		usleep(50000);
	}
	ASSERT_LT(tries, 100) TH_LOG("'%s' never in --recent", self->head);
	EXPECT_STREQ("", err);
	TH_LOG("%s", strstr(out, self->head));
	line = line_with(out, self->head);
	ASSERT_NE(NULL, line);
	EXPECT_STREQ(self->head, line);
	free(line);
	/* Innermost first: the worker's lock is printed before its task. */
	{
		const char *lock = strstr(out, "[2] lock-acquire lock 0x");
		const char *task = strstr(out, "[1] task-run task 1000");

		EXPECT_NE(NULL, lock);
		EXPECT_NE(NULL, task);
		EXPECT_LT(lock, task);
		EXPECT_NE(NULL, strstr(out, "process-wait pid "));
	}
	free(out);
	free(err);

	rc = run(&out, &err, (char *[]){ "actrack", "monitor", "--recent",
		 "--json", "--count", "0", NULL });
	EXPECT_EQ(0, rc);
	EXPECT_GE(json_lines(out), 1) TH_LOG("not JSON lines: %s", out);
	snprintf(pidkey, sizeof(pidkey), "\"process\":{\"pid\":%d,",
		 self->v.pid);
	line = line_with(out, pidkey);
	ASSERT_NE(NULL, line);
	EXPECT_EQ(0, strncmp(line, "{\"schema\":\"actrack-death/1\",", 28));
	EXPECT_NE(NULL, strstr(line, "\"source\":\"recent\""));
	EXPECT_NE(NULL, strstr(line, "\"signal\":9,\"signal_name\":\"SIGKILL\""));
	EXPECT_NE(NULL, strstr(line, "\"exit_code\":null"));
	/* dump's dialect: names, with the numbers beside them. */
	EXPECT_NE(NULL, strstr(line, "\"phase\":\"main-loop-started\","
			       "\"phase_id\":"));
	EXPECT_NE(NULL, strstr(line, "\"name\":\"worker-0\""));
	/* Outermost first, as in dump --json: the worker's task (level 1)
	 * is listed before its lock (level 2). */
	{
		const char *task = strstr(line, "{\"level\":1,\"type\":"
					  "\"task-run\",\"type_id\":17,");
		const char *lock = strstr(line, "{\"level\":2,\"type\":"
					  "\"lock-acquire\",\"type_id\":");

		EXPECT_NE(NULL, task);
		EXPECT_NE(NULL, lock);
		EXPECT_LT(task, lock);
	}
	EXPECT_NE(NULL, strstr(line, "\"modules\":[{\"path\":"));
	free(line);
	free(out);
	free(err);
}

TEST_F_TIMEOUT(live, live_json, 60)
{
	char *out, *err, pidkey[32], *line, notify[108];
	struct proc p;
	char limit[16];
	int rc, nfd;

	VM_SETUP_SKIPPED();
	/* Only a lost report's bound: it grows on a slow (debug) kernel. */
	snprintf(limit, sizeof(limit), "%d", 30 * actrack_test_slowness());
	nfd = vm_notify_open(notify, sizeof(notify));
	ASSERT_LE(0, nfd) TH_LOG("notify socket: %s", strerror(-nfd));
	ASSERT_EQ(0, spawn_notify(&p, notify, (char *[]){ "actrack", "monitor",
		  "--json", "--count", "1", "--timeout", limit, NULL }));
	/* READY=1 means subscribed: the death that follows is reported. */
	rc = vm_notify_wait_ready(nfd, 20000 * actrack_test_slowness());
	EXPECT_EQ(0, rc) TH_LOG("no READY=1 from the monitor: %s",
				strerror(-rc));
	self->status = vm_victim_cmd(&self->v, 'x', 7);
	rc = finish(&p, &out, &err);
	EXPECT_EQ(0, rc) TH_LOG("stderr: %s", err);
	/* READY=1 was the one and only notification. */
	EXPECT_TRUE(notify_silent(nfd));
	close(nfd);
	unlink(notify);
	EXPECT_EQ(1, json_lines(out)) TH_LOG("output: %s", out);
	snprintf(pidkey, sizeof(pidkey), "\"process\":{\"pid\":%d,",
		 self->v.pid);
	line = line_with(out, pidkey);
	ASSERT_NE(NULL, line) TH_LOG("output: %s", out);
	EXPECT_NE(NULL, strstr(line, "\"source\":\"live\""));
	EXPECT_NE(NULL, strstr(line, "\"exit_code\":7,\"signal\":null"));
	free(line);
	free(out);
	free(err);

	/* --timeout without a report: exit 3, nothing printed. */
	rc = run(&out, &err, (char *[]){ "actrack", "monitor", "--count", "1",
		 "--timeout", "0.2", NULL });
	EXPECT_EQ(3, rc);
	EXPECT_STREQ("", out);
	free(out);
	free(err);
}

/* The file @dir holds for @pid (actrack-UID-SEQ-PID.dmp), read whole. */
static uint8_t *dump_of(const char *dir, pid_t pid, size_t *len)
{
	char suffix[32], path[PATH_MAX];
	struct dirent *e;
	struct stat st;
	uint8_t *buf = NULL;
	DIR *d = opendir(dir);
	size_t n;

	if (!d)
		return NULL;
	n = snprintf(suffix, sizeof(suffix), "-%d.dmp", pid);
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		int fd;

		if (l < n || strcmp(e->d_name + l - n, suffix))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, &st) && st.st_size > 0) {
			buf = malloc(st.st_size);
			if (buf && pread(fd, buf, st.st_size, 0) !=
			    st.st_size) {
				free(buf);
				buf = NULL;
			}
			*len = st.st_size;
		}
		if (fd >= 0)
			close(fd);
		unlink(path);
	}
	closedir(d);
	return buf;
}

TEST_F_TIMEOUT(live, minidump_holds_the_reports_threads_and_stacks, 60)
{
	char dir[] = "/tmp/actrack-dumps-XXXXXX", *out, *err;
	uint32_t rva, size, list, main_ctx = 0, main_stack = 0, main_size = 0;
	uint64_t main_sp = 0;
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc, tries;

	VM_SETUP_SKIPPED();
	ASSERT_NE(NULL, mkdtemp(dir));
	self->status = vm_victim_kill(&self->v, SIGKILL);
	for (tries = 0; tries < 100 && !buf; tries++) {
		rc = run(&out, &err, (char *[]){ "actrack", "monitor",
			 "--recent", "--count", "0", "--minidump-dir", dir,
			 NULL });
		EXPECT_EQ(0, rc) TH_LOG("stderr: %s", err);
		free(out);
		free(err);
		buf = dump_of(dir, self->v.pid, &len);
		if (!buf)
			usleep(50000);
	}
	rmdir(dir);
	ASSERT_NE(NULL, buf) TH_LOG("no minidump of pid %d", self->v.pid);
	/* The fatal signal, SIGKILL. */
	ASSERT_TRUE(md_stream(buf, len, 6, &rva, &size));
	EXPECT_EQ(9, md_u32(buf + rva + 8));
	/* Both threads, the main one with its registers and its stack from
	 * its sp on (a 64-bit victim). */
	ASSERT_TRUE(md_stream(buf, len, 3, &list, &size));
	ASSERT_EQ(2, md_u32(buf + list));
	ASSERT_EQ(4 + 2 * 48, size);
	for (uint32_t i = 0; i < 2; i++) {
		const uint8_t *t = buf + list + 4 + 48 * i;

		if (md_u32(t) != (uint32_t)self->v.pid)
			continue;
		memcpy(&main_sp, t + 24, 8);
		main_size = md_u32(t + 32);
		main_stack = md_u32(t + 36);
		main_ctx = md_u32(t + 44);
	}
	ASSERT_NE(0, main_ctx) TH_LOG("pid %d not among the threads",
				      self->v.pid);
	ASSERT_LE((size_t)main_ctx + 1232, len);
#if defined(__x86_64__)
	EXPECT_EQ(0x00100003U, md_u32(buf + main_ctx + 0x30));
	EXPECT_EQ(0, memcmp(&main_sp, buf + main_ctx + 0x98, 8));
	EXPECT_LT(0, main_size);
	EXPECT_LE((size_t)main_stack + main_size, len);
#else
	/* A 32-bit victim: the module captures no stack for it
	 * (ACTRACK_DEATH_STACKS_UNSUPPORTED), so the thread is listed with
	 * the architecture alone and no memory. */
	EXPECT_EQ(0x00100000U, md_u32(buf + main_ctx + 0x30));
	EXPECT_EQ(0, main_size);
	EXPECT_EQ(0, main_stack);
#endif
	free(buf);
}

TEST_HARNESS_MAIN
