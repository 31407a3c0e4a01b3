// SPDX-License-Identifier: MIT
/*
 * The hang verdicts, measured: real programs under `actrack run`, each on
 * a file arena of its own, and the verdicts `actrack hangs --all` gives
 * their waits, with its exit status.
 *
 * Not hangs (exit 0): an idle nginx (master and two workers), a program
 * sleeping in select(0, ...), an idle `python3 -m http.server`, a Python
 * program blocked in accept(), `sh -c 'sleep 60'`, a reaper in waitpid()
 * of a child that spins on the CPU, the records a SIGKILLed deadlock left
 * behind, a program in epoll_wait() on a listening socket, one in poll()
 * with a timeout on a pipe only it could write to.
 * Real hangs: an ABBA deadlock between two threads, a thread joining a
 * thread that wants the lock it holds, an ABBA deadlock between two
 * processes on process-shared mutexes, Python's two-threading.Lock
 * deadlock, a thread blocked on a lock whose holder sleeps forever.
 *
 * Each case asserts the exact set of verdicts and the exit status, with
 * and without --unknown-is-hang.  Every case appends its row to a file,
 * and the last test prints the table and the precision and recall
 * (TAP comments).  Polls, never timed assertions: a case is looked at
 * until its verdicts settle, with a long deadline; an alarm seen on the
 * way counts as one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "vm_util.h"	/* VM_UNDER_SANITIZER */
#include "snapshot_helpers.h"
#include "progs_util.h"

#define NGINX		"/usr/sbin/nginx"
#define PYTHON		"/usr/bin/python3"
#define TRIES		120
#define TRY_US		(250 * 1000)

enum {
	V_IDLE = 1 << 0, V_BLOCKED = 1 << 1, V_UNKNOWN = 1 << 2,
	V_HANG = 1 << 3, V_DEADLOCK = 1 << 4, V_DEAD = 1 << 5,
	V_STALE = 1 << 6,
};

static const char *const verdict_names[] = {
	"idle", "blocked", "owner-unknown", "hang", "deadlock", "dead",
	"stale-activity",
};

static char prog[PATH_MAX];
static char arena[256];

/* Where the rows go: one file per run of this binary (the harness's
 * process is every test's parent). */
static void rows_path(char *buf, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(buf, len, "%s/actrack-corpus-%d.rows",
		 tmp && *tmp ? tmp : "/tmp", (int)getppid());
}

static const char *setup(const char *tag)
{
	const char *tmp = getenv("TMPDIR"), *why;

#ifdef VM_UNDER_SANITIZER
	return "sanitizer build: its runtime cannot be preloaded into an "
	       "uninstrumented program";
#endif
	why = progs_path(prog, sizeof(prog), "hang_cases");
	if (why)
		return why;
	snprintf(arena, sizeof(arena), "%s/actrack-corpus-%s-%d",
		 tmp && *tmp ? tmp : "/tmp", tag, (int)getpid());
	unlink(arena);
	return NULL;
}

#define SETUP(tag)							\
	do {								\
		const char *why = setup(tag);				\
		if (why)						\
			SKIP(return, "%s", why);			\
	} while (0)

/* `actrack run -- ARGV` on our arena (progs_util.h). */
static int start(struct job *j, char *const argv[], const char *out_file)
{
	return job_start(j, argv, arena, out_file);
}

/* Read the job's output up to a line that starts with @prefix. */
static bool read_until(struct job *j, const char *prefix)
{
	char buf[4096];

	return job_read_until(j, prefix, buf, sizeof(buf));
}

/* The verdicts of one `hangs --all` and its exit status. */
struct look {
	unsigned int verdicts;
	int status;
	char out[8192];
};

static int look(struct look *l, bool strict)
{
	char *argv[] = { "actrack", "--arena", arena, "hangs", "--all",
			 "--for", "1s", "-i", "200",
			 strict ? "--unknown-is-hang" : NULL, NULL };
	struct run r;
	const char *p;

	if (run_cli(&r, NULL, argv))
		return -1;
	l->verdicts = 0;
	l->status = r.status;
	snprintf(l->out, sizeof(l->out), "%s%s", r.out, r.err);
	for (p = r.out; (p = strstr(p, "    verdict: ")); p++) {
		p += 13;
		for (size_t i = 0; i < sizeof(verdict_names) /
		     sizeof(*verdict_names); i++) {
			size_t len = strlen(verdict_names[i]);

			if (!strncmp(p, verdict_names[i], len) && p[len] == ':')
				l->verdicts |= 1U << i;
		}
	}
	run_free(&r);
	return 0;
}

static void mask_text(unsigned int m, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(verdict_names) / sizeof(*verdict_names);
	     i++)
		if (m & (1U << i))
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      n ? "," : "", verdict_names[i]);
	if (!n)
		snprintf(buf, len, "-");
}

/*
 * Look until the verdicts are @want (at most TRIES times), then once more
 * with --unknown-is-hang; append the case's row.  @real: a real hang.
 * An exit 3 seen on the way for a case that is not a real hang is an
 * alarm, and is what the row says.
 */
static void measure(struct __test_metadata *_metadata, const char *name,
		    unsigned int want, int want_status, int want_strict,
		    bool real)
{
	struct look l, strict;
	char got[128], exp[128], rows[300];
	bool alarm = false;
	FILE *f;
	int i;

	for (i = 0; i < TRIES; i++) {
		ASSERT_EQ(0, look(&l, false));
		alarm |= l.status == 3;
		if (l.verdicts == want && l.status == want_status)
			break;
		usleep(TRY_US);
	}
	ASSERT_EQ(0, look(&strict, true));
	mask_text(l.verdicts, got, sizeof(got));
	mask_text(want, exp, sizeof(exp));
	EXPECT_EQ(want, l.verdicts) {
		TH_LOG("%s: verdicts %s, want %s:\n%s", name, got, exp,
		       l.out);
	}
	EXPECT_EQ(want_status, l.status) {
		TH_LOG("%s:\n%s", name, l.out);
	}
	EXPECT_EQ(want_strict, strict.status) {
		TH_LOG("%s --unknown-is-hang:\n%s", name, strict.out);
	}
	if (!real)
		EXPECT_FALSE(alarm);
	rows_path(rows, sizeof(rows));
	f = fopen(rows, "a");
	ASSERT_NE(NULL, f);
	fprintf(f, "%s|%d|%s|%s|%d|%d|%d\n", name, real, exp, got,
		alarm && !real ? 3 : l.status, strict.status,
		l.verdicts == want && l.status == want_status);
	fclose(f);
}

static void skip_row(const char *name, bool real)
{
	char rows[300];
	FILE *f;

	rows_path(rows, sizeof(rows));
	f = fopen(rows, "a");
	if (f) {
		fprintf(f, "%s|%d|skipped|-|-1|-1|1\n", name, real);
		fclose(f);
	}
}

/* ---- not hangs ---------------------------------------------------------- */

TEST(idle_nginx)
{
	char prefix[300], conf[4096], conf_path[400], elog[400], out[400];
	char *argv[] = { "actrack", "run", "--", NGINX, "-p", prefix, "-c",
			 conf_path, "-e", elog, NULL };
	struct job j;
	int port;

	SETUP("nginx");
	if (sizeof(void *) != 8 || access(NGINX, X_OK)) {
		skip_row("idle nginx", false);
		SKIP(return, "no " NGINX " (Debian's nginx) for this build");
	}
	snprintf(prefix, sizeof(prefix), "%s.nginx", arena);
	snprintf(conf_path, sizeof(conf_path), "%s/nginx.conf", prefix);
	snprintf(elog, sizeof(elog), "%s/error.log", prefix);
	snprintf(out, sizeof(out), "%s/nginx.out", prefix);
	ASSERT_TRUE(!mkdir(prefix, 0755) || errno == EEXIST);
	port = free_port();
	ASSERT_LT(0, port);
	snprintf(conf, sizeof(conf),
		 "%3$s"
		 "worker_processes 2;\n"
		 "daemon off;\n"
		 "master_process on;\n"
		 "pid %1$s/nginx.pid;\n"
		 "lock_file %1$s/nginx.lock;\n"
		 "error_log %1$s/error.log notice;\n"
		 "events { worker_connections 64; }\n"
		 "http {\n"
		 "  access_log off;\n"
		 "  client_body_temp_path %1$s/body;\n"
		 "  proxy_temp_path %1$s/proxy;\n"
		 "  fastcgi_temp_path %1$s/fastcgi;\n"
		 "  uwsgi_temp_path %1$s/uwsgi;\n"
		 "  scgi_temp_path %1$s/scgi;\n"
		 "  server { listen 127.0.0.1:%2$d; root %1$s; }\n"
		 "}\n", prefix, port, geteuid() ? "" : "user root root;\n");
	ASSERT_EQ(0, write_file(conf_path, conf, strlen(conf)));
	ASSERT_EQ(0, start(&j, argv, out));
	/* The master in sigsuspend() (not a tracked call), the workers in
	 * epoll_wait() on the listening socket: idle. */
	measure(_metadata, "idle nginx", V_IDLE, 0, 0, false);
	job_kill(&j);
	unlink(arena);
}

TEST(select_sleeper)
{
	char *argv[] = { "actrack", "run", "--", prog, "select", NULL };
	struct job j;

	SETUP("select");
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "ready"));
	measure(_metadata, "select(0, ...) sleeper", V_IDLE, 0, 0, false);
	job_kill(&j);
	unlink(arena);
}

/* Its event loop polls with a 0.5 s timeout: each wait is younger than
 * --for, so no verdict at all, and no alarm. */
TEST(idle_python_http_server)
{
	char *argv[] = { "actrack", "run", "--", PYTHON, "-u", "-m",
			 "http.server", "0", "--bind", "127.0.0.1", NULL };
	struct job j;

	SETUP("http");
	if (access(PYTHON, X_OK) || sizeof(void *) != 8) {
		skip_row("idle python3 -m http.server", false);
		SKIP(return, "no " PYTHON " (Debian's) for this build");
	}
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "Serving HTTP"));
	measure(_metadata, "idle python3 -m http.server", 0, 0, 0, false);
	job_kill(&j);
	unlink(arena);
}

TEST(python_in_accept)
{
	char *argv[] = { "actrack", "run", "--", PYTHON, "-c",
			 "import socket\n"
			 "s = socket.socket()\n"
			 "s.bind(('127.0.0.1', 0))\n"
			 "s.listen()\n"
			 "print('ready', flush=True)\n"
			 "s.accept()\n", NULL };
	struct job j;

	SETUP("accept");
	if (access(PYTHON, X_OK) || sizeof(void *) != 8) {
		skip_row("python3 in accept()", false);
		SKIP(return, "no " PYTHON " (Debian's) for this build");
	}
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "ready"));
	measure(_metadata, "python3 in accept()", V_IDLE, 0, 0, false);
	job_kill(&j);
	unlink(arena);
}

TEST(shell_waiting_for_sleep)
{
	char *argv[] = { "actrack", "run", "--", "/bin/sh", "-c",
			 "echo ready; sleep 60; true", NULL };
	const char *why;
	struct job j;

	SETUP("sh");
	why = run_refused("/bin/sh", "-c");
	if (why) {
		skip_row("sh -c 'sleep 60'", false);
		SKIP(return, "%s", why);
	}
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "ready"));
	measure(_metadata, "sh -c 'sleep 60'", V_IDLE, 0, 0, false);
	job_kill(&j);
	unlink(arena);
}

TEST(reaper_of_a_busy_child)
{
	char *argv[] = { "actrack", "run", "--", prog, "reaper", NULL };
	struct job j;

	SETUP("reaper");
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "ready"));
	measure(_metadata, "reaper of a busy child", V_BLOCKED, 0, 0, false);
	job_kill(&j);
	unlink(arena);
}

TEST(sigkilled_deadlock)
{
	char abba[PATH_MAX + 16];
	char *argv[] = { "actrack", "run", "--", abba, "threads", NULL };
	struct job j;

	SETUP("killed");
	snprintf(abba, sizeof(abba), "%s", prog);
	strcpy(strrchr(abba, '/'), "/abba");
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "deadlocked"));
	/* It prints before its threads block: first the deadlock seen. */
	for (int i = 0; i < TRIES; i++) {
		struct look l;

		ASSERT_EQ(0, look(&l, false));
		if (l.verdicts == (V_DEADLOCK | V_HANG))
			break;
		usleep(TRY_US);
	}
	/* `actrack run` execs the program: the same pid. */
	kill(j.pid, SIGKILL);
	job_kill(&j);
	measure(_metadata, "SIGKILLed waiters (records left)", V_DEAD, 0, 0,
		false);
	unlink(arena);
}

TEST(epoll_on_a_listening_socket)
{
	char *argv[] = { "actrack", "run", "--", prog, "epoll", NULL };
	struct job j;

	SETUP("epoll");
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "ready"));
	measure(_metadata, "epoll_wait() on a listening socket", V_IDLE, 0, 0,
		false);
	job_kill(&j);
	unlink(arena);
}

/* Only its own pipe could end the wait, but it has a timeout: a timer.
 * (Without the timeout recorded it would be a wait owner unknown.) */
TEST(poll_with_a_timeout)
{
	char *argv[] = { "actrack", "run", "--", prog, "timer", NULL };
	struct job j;

	SETUP("timer");
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "ready"));
	measure(_metadata, "poll() with a timeout, own pipe", V_IDLE, 0, 0,
		false);
	job_kill(&j);
	unlink(arena);
}

/* ---- real hangs --------------------------------------------------------- */

TEST(abba_threads)
{
	char abba[PATH_MAX + 16];
	char *argv[] = { "actrack", "run", "--", abba, "threads", NULL };
	struct job j;

	SETUP("abba");
	snprintf(abba, sizeof(abba), "%s", prog);
	strcpy(strrchr(abba, '/'), "/abba");
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "deadlocked"));
	/* The two threads in the cycle; the main thread joins one: hung
	 * behind the deadlock. */
	measure(_metadata, "ABBA deadlock, two threads", V_DEADLOCK | V_HANG,
		3, 3, true);
	job_kill(&j);
	unlink(arena);
}

TEST(join_of_a_lock_waiter)
{
	char *argv[] = { "actrack", "run", "--", prog, "joinlock", NULL };
	struct job j;

	SETUP("joinlock");
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "ready"));
	measure(_metadata, "join of a thread that wants our lock", V_DEADLOCK,
		3, 3, true);
	job_kill(&j);
	unlink(arena);
}

TEST(abba_processes)
{
	char abba[PATH_MAX + 16];
	char *argv[] = { "actrack", "run", "--", abba, "procs", NULL };
	struct job j;

	SETUP("procs");
	snprintf(abba, sizeof(abba), "%s", prog);
	strcpy(strrchr(abba, '/'), "/abba");
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "deadlocked"));
	measure(_metadata, "ABBA deadlock, two processes", V_DEADLOCK, 3, 3,
		true);
	job_kill(&j);
	unlink(arena);
}

/* Its locks are semaphores: no owner is recorded, so owner unknown, a
 * hang only with --unknown-is-hang. */
TEST(python_two_lock_deadlock)
{
	char *argv[] = { "actrack", "run", "--", PYTHON, "-c",
			 "import threading\n"
			 "a = threading.Lock()\n"
			 "b = threading.Lock()\n"
			 "bar = threading.Barrier(3)\n"
			 "def run(x, y):\n"
			 "    with x:\n"
			 "        bar.wait()\n"
			 "        y.acquire()\n"
			 "t = threading.Thread(target=run, args=(a, b), "
			 "daemon=True)\n"
			 "u = threading.Thread(target=run, args=(b, a), "
			 "daemon=True)\n"
			 "t.start(); u.start(); bar.wait()\n"
			 "print('deadlocked', flush=True)\n"
			 "t.join()\n", NULL };
	struct job j;

	SETUP("pydl");
	if (access(PYTHON, X_OK) || sizeof(void *) != 8) {
		skip_row("python two-Lock deadlock", true);
		SKIP(return, "no " PYTHON " (Debian's) for this build");
	}
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "deadlocked"));
	measure(_metadata, "python two-Lock deadlock", V_UNKNOWN, 0, 3, true);
	job_kill(&j);
	unlink(arena);
}

TEST(lock_held_by_a_sleeper)
{
	char *argv[] = { "actrack", "run", "--", prog, "sleeper", NULL };
	struct job j;

	SETUP("sleeper");
	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "ready"));
	/* The holder's sleep is idle; the thread behind it is hung. */
	measure(_metadata, "lock held by a thread that sleeps",
		V_HANG | V_IDLE, 3, 3, true);
	job_kill(&j);
	unlink(arena);
}

/* ---- looking does not change what is seen ------------------------------- */

/* The start time of the innermost activity of process @pid's thread
 * that is in an activity of @type, or 0. */
static uint64_t wait_start(pid_t pid, uint8_t type)
{
	struct actrack_snapshot *s;
	uint64_t t = 0;

	if (actrack_snapshot_take(arena, ACTRACK_SNAP_ARENA_FILE, &s))
		return 0;
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		for (uint32_t k = 0; p->pid == (uint32_t)pid &&
		     k < p->nr_threads; k++) {
			const struct actrack_snap_thread *th = &p->threads[k];

			if (th->nr_activities && th->activities[
				th->nr_activities - 1].a.type == type)
				t = th->activities[th->nr_activities - 1]
					.a.time_ns;
		}
	}
	actrack_snapshot_free(s);
	return t;
}

/*
 * `hangs --stacks` stops each thread it reports (a hang, or a wait only
 * an insider can end: owner unknown) with PTRACE_INTERRUPT.  Linux makes
 * epoll_wait() fail with EINTR after such a stop (signal(7)): the program
 * calls it again, and the wait must keep its start time, or every look
 * would make it young again; poll(), read() and a futex (a mutex) are
 * restarted by the kernel.  Three looks with --stacks, then the wait's
 * start time is the one it had.
 */
static void stacks_keep_start(struct __test_metadata *_metadata,
			      const char *mode, unsigned int verdict,
			      uint8_t type)
{
	char *argv[] = { "actrack", "run", "--", prog, (char *)mode, NULL };
	char *look_argv[] = { "actrack", "--arena", arena, "hangs", "--all",
			      "--stacks", "--for", "1ms", "-i", "1", NULL };
	uint64_t before, after;
	struct job j;
	struct run r;

	ASSERT_EQ(0, start(&j, argv, NULL));
	ASSERT_TRUE(read_until(&j, "ready"));
	/* Until its wait is on its stack (the print comes first). */
	for (int i = 0; i < TRIES; i++) {
		struct look l;

		ASSERT_EQ(0, look(&l, false));
		if (l.verdicts & verdict)
			break;
		usleep(TRY_US);
	}
	before = wait_start(j.pid, type);
	ASSERT_NE(0, before);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, run_cli(&r, NULL, look_argv));
		if (strstr(r.err, "ptrace")) {
			char why[256];

			snprintf(why, sizeof(why), "%s", r.err);
			run_free(&r);
			job_kill(&j);
			SKIP(return, "no ptrace here: %s", why);
		}
		/* Reported, so its backtrace was taken. */
		EXPECT_NE(NULL, strstr(r.out, "\n    backtrace:\n      #0 ")) {
			TH_LOG("%s: %s", mode, r.out);
		}
		run_free(&r);
	}
	after = wait_start(j.pid, type);
	EXPECT_EQ(before, after) {
		TH_LOG("%s: the wait started again %.3f s later", mode,
		       (double)(after - before) / 1e9);
	}
	job_kill(&j);
	unlink(arena);
}

TEST(stacks_keep_an_epoll_wait_start)
{
	SETUP("st-epoll");
	stacks_keep_start(_metadata, "eventfd", V_UNKNOWN,
			  ACTRACK_ACT_IO_WAIT);
}

TEST(stacks_keep_a_poll_start)
{
	SETUP("st-poll");
	stacks_keep_start(_metadata, "pollpipe", V_UNKNOWN,
			  ACTRACK_ACT_IO_WAIT);
}

TEST(stacks_keep_a_read_start)
{
	SETUP("st-read");
	stacks_keep_start(_metadata, "readpipe", V_UNKNOWN,
			  ACTRACK_ACT_IO_WAIT);
}

TEST(stacks_keep_a_futex_start)
{
	SETUP("st-futex");
	stacks_keep_start(_metadata, "sleeper", V_HANG,
			  ACTRACK_ACT_LOCK_ACQUIRE);
}

/* ---- the table ---------------------------------------------------------- */

TEST(precision_and_recall)
{
	int real = 0, found = 0, found_strict = 0, alarms = 0;
	int alarms_strict = 0, right = 0, cases = 0, skipped = 0;
	char rows[300], line[512];
	FILE *f;

	rows_path(rows, sizeof(rows));
	f = fopen(rows, "r");
	if (!f)
		SKIP(return, "no rows: run the whole file");
	printf("# %-38s %-15s %-22s %4s %6s\n", "case", "expected",
	       "verdicts", "exit", "strict");
	while (fgets(line, sizeof(line), f)) {
		char name[128], exp[64], got[64];
		int is_real, st, st_strict, ok;

		if (sscanf(line, "%127[^|]|%d|%63[^|]|%63[^|]|%d|%d|%d",
			   name, &is_real, exp, got, &st, &st_strict,
			   &ok) != 7)
			continue;
		printf("# %-38s %-15s %-22s %4d %6d%s\n", name, exp, got, st,
		       st_strict, st < 0 ? " (skipped)" : ok ? "" :
		       " WRONG");
		if (st < 0) {
			skipped++;
			continue;
		}
		cases++;
		right += ok;
		if (is_real) {
			real++;
			found += st == 3;
			found_strict += st_strict == 3;
		} else {
			alarms += st == 3;
			alarms_strict += st_strict == 3;
		}
	}
	fclose(f);
	unlink(rows);
	printf("# %d cases (%d skipped), %d with the exact verdicts\n",
	       cases, skipped, right);
	printf("# real hangs found (exit 3): %d of %d; with "
	       "--unknown-is-hang: %d of %d\n", found, real, found_strict,
	       real);
	printf("# false alarms (exit 3 on a program that is not hung): %d "
	       "of %d; with --unknown-is-hang: %d\n", alarms, cases - real,
	       alarms_strict);
	printf("# precision %d/%d, recall %d/%d (with --unknown-is-hang: "
	       "precision %d/%d, recall %d/%d)\n", found, found + alarms,
	       found, real, found_strict, found_strict + alarms_strict,
	       found_strict, real);
	fflush(stdout);
	EXPECT_EQ(cases, right);
	EXPECT_EQ(0, alarms);
	EXPECT_EQ(0, alarms_strict);
	EXPECT_EQ(real, found_strict);
}

TEST_HARNESS_MAIN
