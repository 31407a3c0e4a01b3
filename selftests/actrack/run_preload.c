// SPDX-License-Identifier: MIT
/*
 * actrack run and libactrack-preload.so on an unmodified program
 * (build/selftests/progs/abba, built without actrack): its output and
 * exit status are its own; errno is kept through the wrappers; an ABBA
 * deadlock between two threads, and between two processes on
 * process-shared mutexes, is named by `actrack hangs` with the program's
 * function names; exec'd children are tracked unless --no-follow; with no
 * arena to attach to, the program runs as if untracked; programs the
 * dynamic linker would not preload into are refused.
 *
 * File arenas on the host ($ACTRACK_ARENA, one per test); in the VM with
 * actrack.ko loaded (ACTRACK_IN_VM=1), the module's arena.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "vm_util.h"	/* VM_UNDER_SANITIZER, vm_in_io_wait */
#include "snapshot_helpers.h"
#include "progs_util.h"

static char abba[PATH_MAX];
static char arena[256];

/*
 * The program beside this test (progs/abba), the arena for this test, or
 * a skip: sanitizer builds cannot preload into an uninstrumented program
 * (their runtime must come first).
 */
#define SETUP(tag)							\
	do {								\
		const char *why = setup(tag);				\
		if (why)						\
			SKIP(return, "%s", why);			\
	} while (0)

static const char *setup(const char *tag)
{
	const char *why;

#ifdef VM_UNDER_SANITIZER
	return "sanitizer build: its runtime cannot be preloaded into an "
	       "uninstrumented program";
#endif
	why = progs_path(abba, sizeof(abba), "abba");
	if (why)
		return why;
	if (getenv("ACTRACK_IN_VM") && !access(ACTRACK_DEVICE_PATH, F_OK)) {
		unsetenv(ACTRACK_ENV_ARENA);
		arena[0] = 0;
		return NULL;
	}
	snprintf(arena, sizeof(arena), "%s/actrack-run-%s-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag,
		 (int)getpid());
	unlink(arena);
	setenv(ACTRACK_ENV_ARENA, arena, 1);
	return NULL;
}

static void teardown(void)
{
	if (arena[0])
		unlink(arena);
}

TEST(output_and_status_are_the_programs)
{
	char *run_argv[] = { "actrack", "run", "--", abba, "echo", "one",
			     "two words", NULL };
	char *own_argv[] = { abba, "echo", "one", "two words", NULL };
	struct run r, own;

	SETUP("status");
	ASSERT_EQ(0, run_program(&own, abba, NULL, own_argv));
	ASSERT_EQ(0, run_cli(&r, NULL, run_argv));
	EXPECT_EQ(7, own.status);
	EXPECT_EQ(7, r.status);
	EXPECT_STREQ("one\ntwo words\n", r.out);
	EXPECT_STREQ(own.out, r.out);
	EXPECT_STREQ("", r.err);
	run_free(&r);
	run_free(&own);
	teardown();
}

TEST(errno_is_kept)
{
	char *argv[] = { "actrack", "run", abba, "errno", NULL };
	struct run r;

	SETUP("errno");
	ASSERT_EQ(0, run_cli(&r, NULL, argv));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("errno ok\n", r.out);
	run_free(&r);
	teardown();
}

TEST(not_found_and_usage)
{
	char *missing[] = { "actrack", "run", "--", "/nonexistent/prog", NULL };
	char *nopath[] = { "actrack", "run", "actrack-no-such-program", NULL };
	char *none[] = { "actrack", "run", NULL };
	char *badopt[] = { "actrack", "run", "--bogus", abba, NULL };
	struct run r;

	SETUP("usage");
	ASSERT_EQ(0, run_cli(&r, NULL, missing));
	EXPECT_EQ(127, r.status);
	EXPECT_STREQ("actrack: run: /nonexistent/prog: No such file or "
		     "directory\n", r.err);
	run_free(&r);
	ASSERT_EQ(0, run_cli(&r, NULL, nopath));
	EXPECT_EQ(127, r.status);
	EXPECT_STREQ("actrack: run: actrack-no-such-program: No such file or "
		     "directory\n", r.err);
	run_free(&r);
	ASSERT_EQ(0, run_cli(&r, NULL, none));
	EXPECT_EQ(2, r.status);
	run_free(&r);
	ASSERT_EQ(0, run_cli(&r, NULL, badopt));
	EXPECT_EQ(2, r.status);
	EXPECT_STREQ("", r.out);
	run_free(&r);
	teardown();
}

/* A program the preload cannot enter is refused, not run untracked. */
TEST(setuid_is_refused)
{
	static const char *const setuid_progs[] = {
		"/usr/bin/mount", "/bin/mount", "/usr/bin/su", "/bin/su",
	};
	char *argv[] = { "actrack", "run", NULL, "--help", NULL };
	struct stat st;
	struct run r;

	SETUP("setuid");
	for (size_t i = 0; i < sizeof(setuid_progs) / sizeof(*setuid_progs);
	     i++)
		if (!stat(setuid_progs[i], &st) && (st.st_mode & S_ISUID)) {
			argv[2] = (char *)setuid_progs[i];
			break;
		}
	if (!argv[2])
		SKIP(return, "no set-user-ID mount or su here");
	ASSERT_EQ(0, run_cli(&r, NULL, argv));
	EXPECT_EQ(126, r.status);
	EXPECT_STREQ("", r.out);
	EXPECT_NE(NULL, strstr(r.err, ": not tracked: set-user-ID"));
	run_free(&r);
	teardown();
}

TEST(static_is_refused)
{
	char *argv[] = { "actrack", "run", "/bin/busybox", "true", NULL };
	struct run r;

	SETUP("static");
	/* busybox-static (scripts/setup; the VM's /bin/busybox). */
	if (access("/bin/busybox", X_OK))
		SKIP(return, "no static /bin/busybox");
	ASSERT_EQ(0, run_cli(&r, NULL, argv));
	EXPECT_EQ(126, r.status);
	EXPECT_STREQ("", r.out);
	EXPECT_STREQ("actrack: run: /bin/busybox: not tracked: statically "
		     "linked: there is no dynamic linker to preload the "
		     "tracking library\n", r.err);
	run_free(&r);
	teardown();
}

/*
 * `actrack hangs` until it exits with @status (any if negative) and its
 * output holds @text and @also (NULL: nothing more), since the threads
 * may still be on their way into their waits when the program says they
 * are there: at most 50 tries, each one snapshot pair.
 * Return: 0 with @r to free, or -1.
 */
static int hangs_until2(struct run *r, int status, const char *text,
			const char *also)
{
	char *argv[] = { "actrack", "hangs", "--for", "300ms", "-i", "100",
			 NULL };

	for (int i = 0; i < 50; i++) {
		if (run_cli(r, NULL, argv))
			return -1;
		if ((status < 0 || r->status == status) &&
		    strstr(r->out, text) && (!also || strstr(r->out, also)))
			return 0;
		run_free(r);
		usleep(200 * 1000);
	}
	return -1;
}

static int hangs_until(struct run *r, int status, const char *text)
{
	return hangs_until2(r, status, text, NULL);
}

TEST(deadlock_between_threads_is_named)
{
	char *argv[] = { "actrack", "run", "--", abba, "threads", NULL };
	char buf[256], *dl;
	struct job j;
	struct run r;

	SETUP("threads");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "deadlocked", buf, sizeof(buf)));
	/* The main thread says "deadlocked" before it joins. */
	ASSERT_EQ(0, hangs_until2(&r, 3, "DEADLOCK:", "for tid "));
	job_kill(&j);
	dl = strstr(r.out, "DEADLOCK:");
	ASSERT_NE(NULL, dl);
	/* Two threads wait for the lock the other holds (its held set),
	 * each at its own code; the main thread joins the first. */
	EXPECT_NE(NULL, strstr(dl, "waits for lock"));
	EXPECT_NE(NULL, strstr(r.out, "abba_first+"));
	EXPECT_NE(NULL, strstr(r.out, "abba_second+"));
	EXPECT_NE(NULL, strstr(r.out, "1 deadlock"));
	EXPECT_NE(NULL, strstr(r.out, "for tid "));
	run_free(&r);
	teardown();
}

TEST(deadlock_between_processes_is_named)
{
	char *argv[] = { "actrack", "run", "--", abba, "procs", NULL };
	char buf[256], *dl, want[64];
	struct job j;
	struct run r;
	int child = 0;

	SETUP("procs");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "deadlocked", buf, sizeof(buf)));
	ASSERT_EQ(1, sscanf(buf, "child %d", &child));
	ASSERT_EQ(0, hangs_until(&r, 3, "DEADLOCK:"));
	job_kill(&j);
	dl = strstr(r.out, "DEADLOCK:");
	ASSERT_NE(NULL, dl);
	snprintf(want, sizeof(want), "in process %d ", child);
	EXPECT_NE(NULL, strstr(r.out, want));
	snprintf(want, sizeof(want), "in process %d ", j.pid);
	EXPECT_NE(NULL, strstr(r.out, want));
	EXPECT_NE(NULL, strstr(r.out, "at parent_side+"));
	EXPECT_NE(NULL, strstr(r.out, "at child_side+"));
	EXPECT_NE(NULL, strstr(r.out, "1 deadlock"));
	run_free(&r);
	teardown();
}

/*
 * CPython's threading.Lock is a semaphore (sem_clockwait): two threads
 * deadlocked on two of them, and the main thread joining one, all show as
 * long waits with owner unknown, in an event wait at the interpreter's
 * lock code.  (A semaphore has no owner, so no cycle is named, and they
 * are not certain hangs: exit 0.)
 */
TEST(python_threads_show_waiting)
{
	static const char prog[] =
		"import threading\n"
		"a = threading.Lock()\n"
		"b = threading.Lock()\n"
		"bar = threading.Barrier(3)\n"
		"def run(x, y):\n"
		"    with x:\n"
		"        bar.wait()\n"
		"        y.acquire()\n"
		"t = threading.Thread(target=run, args=(a, b), daemon=True)\n"
		"u = threading.Thread(target=run, args=(b, a), daemon=True)\n"
		"t.start(); u.start(); bar.wait()\n"
		"print('deadlocked', flush=True)\n"
		"t.join()\n";
	char *argv[] = { "actrack", "run", "--", "/usr/bin/python3", "-c",
			 (char *)prog, NULL };
	char buf[256];
	struct job j;
	struct run r;
	int ret, n = 0;

	SETUP("python");
	if (access("/usr/bin/python3", X_OK))
		SKIP(return, "no /usr/bin/python3 (Debian's python3)");
	if (sizeof(void *) != 8)
		SKIP(return, "this build's preload is 32-bit, python3 is not");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "deadlocked", buf, sizeof(buf)));
	ret = hangs_until(&r, -1, "3 long waits with owner unknown");
	job_kill(&j);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, r.status);
	for (const char *p = r.out; (p = strstr(p, "waiting ")); p++)
		n += !strncmp(strstr(p, " for ") ?: "", " for event 0x", 13);
	EXPECT_EQ(3, n);
	EXPECT_NE(NULL, strstr(r.out, "at PyThread_acquire_lock_timed+"));
	run_free(&r);
	teardown();
}

/* Is there a process whose command line starts with @cmd in the arena? */
static bool tracked(const char *cmd)
{
	struct actrack_snapshot *s;
	bool found = false;

	if (actrack_snapshot_take(arena[0] ? arena : NULL,
				  arena[0] ? ACTRACK_SNAP_ARENA_FILE : 0, &s))
		return false;
	for (uint32_t i = 0; i < s->nr_processes; i++)
		if (s->processes[i].has_record &&
		    !strncmp(s->processes[i].cmdline, cmd, strlen(cmd)))
			found = true;
	actrack_snapshot_free(s);
	return found;
}

static void children(struct __test_metadata *_metadata, bool follow)
{
	char *followed[] = { "actrack", "run", "--", abba, "child", abba,
			     "wait", NULL };
	char *alone[] = { "actrack", "run", "--no-follow", "--", abba,
			  "child", abba, "wait", NULL };
	char buf[256], parent[PATH_MAX + 16], child[PATH_MAX + 16];
	struct job j;

	snprintf(parent, sizeof(parent), "%s child", abba);
	snprintf(child, sizeof(child), "%s wait", abba);
	ASSERT_EQ(0, job_start(&j, follow ? followed : alone, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "waiting", buf, sizeof(buf)));
	/* The parent attached in its constructor (the program actrack run
	 * started); the child attaches at its first push, the read() after
	 * it printed: wait for it (10 s at most). */
	EXPECT_TRUE(tracked(parent));
	for (int i = 0; follow && i < 1000 && !tracked(child); i++)
		usleep(10 * 1000);
	EXPECT_EQ(follow, tracked(child));
	EXPECT_EQ(0, job_finish(&j));
}

TEST(exec_children_are_followed)
{
	SETUP("follow");
	children(_metadata, true);
	teardown();
}

TEST(no_follow_leaves_children_alone)
{
	SETUP("nofollow");
	children(_metadata, false);
	teardown();
}

/*
 * With the module, an unmodified program killed while it waits leaves a
 * death report that says what it was doing, at its own code.
 */
TEST(death_report_names_the_wait)
{
	char *argv[] = { "actrack", "run", "--", abba, "wait", NULL };
	char *mon[] = { "actrack", "monitor", "--recent", "--count", "0",
			NULL };
	char buf[256], want[64], *rep, *end;
	struct job j;
	struct run r;
	int i;

	SETUP("death");
	if (arena[0])
		SKIP(return, "death reports come from actrack.ko (the VM)");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "waiting", buf, sizeof(buf)));
	/* It prints, then reads: wait for the read to be on its stack. */
	for (i = 0; i < 500 && !vm_in_io_wait(j.pid, 0, false); i++)
		usleep(10 * 1000);
	ASSERT_LT(i, 500);
	kill(j.pid, SIGKILL);
	ASSERT_EQ(128 + SIGKILL, job_finish(&j));
	snprintf(want, sizeof(want), "pid %d (", j.pid);
	/* The kernel reports from a workqueue: give it a moment. */
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, run_cli(&r, NULL, mon));
		if (strstr(r.out, want))
			break;
		run_free(&r);
		usleep(50 * 1000);
	}
	ASSERT_LT(i, 100);
	rep = strstr(r.out, want);
	end = strstr(rep + 1, "\npid ");
	if (end)
		*end = 0;
	EXPECT_NE(NULL, strstr(rep, "killed by SIGKILL"));
	EXPECT_NE(NULL, strstr(rep, "io-wait fd 0, 64 bytes"));
	EXPECT_NE(NULL, strstr(rep, " in main+"));
	run_free(&r);
	teardown();
}

/*
 * A thread that never blocks in a tracked call is still known (it gets
 * its tracker as it starts), so a join of it names it.
 */
TEST(join_names_an_untracked_thread)
{
	char *argv[] = { "actrack", "run", "--", abba, "join", NULL };
	char buf[256], *w;
	struct job j;
	struct run r;
	int ret;

	SETUP("join");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "joining", buf, sizeof(buf)));
	ret = hangs_until(&r, 3, "");
	job_kill(&j);
	ASSERT_EQ(0, ret);
	EXPECT_NE(NULL, strstr(r.out, "1 hung thread"));
	w = strstr(r.out, " for tid ");
	ASSERT_NE(NULL, w);
	EXPECT_NE(NULL, strstr(w, ": thread "));
	EXPECT_EQ(NULL, strstr(w, " for tid 0"));
	EXPECT_NE(NULL, strstr(r.out, "at run_join"));
	run_free(&r);
	teardown();
}

/* Does process @pid have a thread named @name in the arena? */
static bool has_thread_named(pid_t pid, const char *name)
{
	struct actrack_snapshot *s;
	bool found = false;

	if (actrack_snapshot_take(arena[0] ? arena : NULL,
				  arena[0] ? ACTRACK_SNAP_ARENA_FILE : 0, &s))
		return false;
	for (uint32_t i = 0; i < s->nr_processes; i++)
		if (s->processes[i].pid == (uint32_t)pid &&
		    snap_thread_named(&s->processes[i], name))
			found = true;
	actrack_snapshot_free(s);
	return found;
}

/* Names the program gives its threads after they were tracked. */
TEST(thread_names_follow_the_program)
{
	char *argv[] = { "actrack", "run", "--", abba, "names", NULL };
	char buf[256];
	struct job j;

	SETUP("names");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "named", buf, sizeof(buf)));
	EXPECT_TRUE(has_thread_named(j.pid, "by-setname"));
	EXPECT_TRUE(has_thread_named(j.pid, "by-prctl"));
	EXPECT_FALSE(has_thread_named(j.pid, "abba"));
	EXPECT_EQ(0, job_finish(&j));
	teardown();
}

/* Nothing to attach to: the wrappers pass everything through. */
TEST(without_an_arena_the_program_runs)
{
	char *echo[] = { "actrack", "run", abba, "echo", "x", NULL };
	char *err[] = { "actrack", "run", abba, "errno", NULL };
	char *threads[] = { "actrack", "run", abba, "child", abba, "echo",
			    "y", NULL };
	struct run r;

	SETUP("noarena");
	setenv(ACTRACK_ENV_ARENA, "/nonexistent/actrack/arena", 1);
	ASSERT_EQ(0, run_cli(&r, NULL, echo));
	EXPECT_EQ(7, r.status);
	EXPECT_STREQ("x\n", r.out);
	/* Said once, on stderr; the program's output is its own. */
	EXPECT_EQ(1, count_lines(r.err));
	EXPECT_NE(NULL, strstr(r.err, "runs untracked: arena "
			       "/nonexistent/actrack/arena: No such file or "
			       "directory"));
	run_free(&r);
	ASSERT_EQ(0, run_cli(&r, NULL, err));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("errno ok\n", r.out);
	run_free(&r);
	ASSERT_EQ(0, run_cli(&r, NULL, threads));
	EXPECT_EQ(7, r.status);
	EXPECT_STREQ("y\n", r.out);
	run_free(&r);
	EXPECT_EQ(-1, access("/nonexistent/actrack/arena", F_OK));
	teardown();
}

/* ---- issue 23: what real programs do -------------------------------- */

/* The unmodified program progs/@name beside abba (setup found it). */
static const char *prog(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%.*s/%s",
		 (int)(strrchr(abba, '/') - abba), abba, name);
	return path;
}

/*
 * In the arena now: how many activities of @type on @object the threads
 * of process @pid have (all of them if @type is 0), or -1 if the process
 * has no thread there.
 */
static int activities(pid_t pid, uint8_t type, uint64_t object)
{
	struct actrack_snapshot *s;
	int n = -1;

	if (actrack_snapshot_take(arena[0] ? arena : NULL,
				  arena[0] ? ACTRACK_SNAP_ARENA_FILE : 0, &s))
		return -1;
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		if (p->pid != (uint32_t)pid || !p->nr_threads)
			continue;
		n = n < 0 ? 0 : n;
		for (uint32_t k = 0; k < p->nr_threads; k++)
			for (uint32_t a = 0; a < p->threads[k].nr_activities;
			     a++) {
				const struct actrack_activity *act =
					&p->threads[k].activities[a].a;

				if (!type || (act->type == type &&
					      act->object == object))
					n++;
			}
	}
	actrack_snapshot_free(s);
	return n;
}

/* Poll (10 s at most) until process @pid has an io-wait on @fd. */
static bool io_wait_shows(pid_t pid, int fd)
{
	for (int i = 0; i < 1000; i++) {
		if (activities(pid, ACTRACK_ACT_IO_WAIT, (uint64_t)fd) > 0)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

/*
 * A thread joined right after its creation while it blocks on a mutex its
 * joiner holds: the join names the thread's tid, so the cycle is found,
 * every time (the thread may not have run when the join starts).
 */
TEST(join_right_after_create_is_a_deadlock)
{
	char *argv[] = { "actrack", "run", "--", NULL, NULL };
	char buf[256];
	struct job j;
	struct run r;
	int ret;

	SETUP("joinrace");
	argv[3] = (char *)prog("run_join");
	for (int i = 0; i < 20; i++) {
		unlink(arena);
		ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
		ASSERT_TRUE(job_read_until(&j, "joining", buf, sizeof(buf)));
		ret = hangs_until(&r, 3, "1 deadlock");
		job_kill(&j);
		ASSERT_EQ(0, ret) TH_LOG("run %d", i);
		EXPECT_NE(NULL, strstr(r.out, "DEADLOCK:"));
		EXPECT_NE(NULL, strstr(r.out, " for tid "));
		EXPECT_EQ(NULL, strstr(r.out, " for tid 0"));
		EXPECT_NE(NULL, strstr(r.out, "at run_join_locker+"));
		run_free(&r);
	}
	teardown();
}

/*
 * A process that never had a second thread locks a normal mutex it
 * holds: the preload takes a free lock of such a process without a
 * trylock (nobody else can take it), but a held one must still push its
 * lock-acquire, and the first lock, taken that quicker way, must be in
 * the held set: `actrack hangs` shows the thread waiting for a lock it
 * holds itself, a deadlock, at the call that blocks.  (A process-shared
 * mutex in single-threaded processes: deadlock_between_processes_is_named.)
 */
TEST(self_deadlock_of_a_single_thread_is_named)
{
	char *argv[] = { "actrack", "run", "--", NULL, NULL };
	char buf[256], want[96];
	struct job j;
	struct run r;
	int ret;

	SETUP("selflock");
	argv[3] = (char *)prog("run_selflock");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "relocking", buf, sizeof(buf)));
	ret = hangs_until(&r, 3, "1 deadlock");
	job_kill(&j);
	ASSERT_EQ(0, ret);
	snprintf(want, sizeof(want), "DEADLOCK: %d 'run_selflock' -> %d "
		 "'run_selflock'", j.pid, j.pid);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("%s", r.out);
	snprintf(want, sizeof(want), "held by thread %d 'run_selflock'",
		 j.pid);
	EXPECT_NE(NULL, strstr(r.out, want));
	EXPECT_NE(NULL, strstr(r.out, "at run_selflock_again+"));
	EXPECT_NE(NULL, strstr(r.out, "1 hung thread, 1 deadlock"));
	run_free(&r);
	teardown();
}

/*
 * siglongjmp() from a signal handler out of read(): the io-wait the
 * wrapper pushed is popped by the thread's next tracked call, which
 * comes from a frame the read's frame was below.
 */
TEST(siglongjmp_out_of_read_leaves_no_wait)
{
	char *argv[] = { "actrack", "run", "--", NULL, NULL };
	char buf[256];
	struct job j;
	int fd = -1;

	SETUP("longjmp");
	argv[3] = (char *)prog("run_longjmp");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "jumped", buf, sizeof(buf)));
	ASSERT_EQ(1, sscanf(buf, "fd %d", &fd));
	/* Once the write that printed "jumped" has returned, nothing is on
	 * the thread's stack, least of all the read it jumped out of. */
	for (int i = 0; i < 1000 &&
	     activities(j.pid, ACTRACK_ACT_IO_WAIT, 1) != 0; i++)
		usleep(10 * 1000);
	EXPECT_EQ(0, activities(j.pid, ACTRACK_ACT_IO_WAIT, 1));
	EXPECT_EQ(0, activities(j.pid, ACTRACK_ACT_IO_WAIT, (uint64_t)fd));
	EXPECT_EQ(0, activities(j.pid, 0, 0));
	job_kill(&j);
	teardown();
}

/* Built -O2 -D_FORTIFY_SOURCE=2, read() is __read_chk: still an io-wait. */
TEST(fortified_read_is_an_io_wait)
{
	char *argv[] = { "actrack", "run", "--", NULL, NULL };
	char buf[256];
	struct job j;

	SETUP("fortify");
	argv[3] = (char *)prog("run_fortify");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "reading", buf, sizeof(buf)));
	EXPECT_TRUE(io_wait_shows(j.pid, 0));
	EXPECT_EQ(0, job_finish(&j));
	teardown();
}

/*
 * The timeout (timeout_ns) of the first activity of @type in process
 * @pid; -1 while it has none.
 */
static int64_t timeout_of(pid_t pid, uint8_t type)
{
	struct actrack_snapshot *s;
	int64_t tmo = -1;

	if (actrack_snapshot_take(arena[0] ? arena : NULL,
				  arena[0] ? ACTRACK_SNAP_ARENA_FILE : 0, &s))
		return -1;
	for (uint32_t i = 0; i < s->nr_processes && tmo < 0; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		if (p->pid != (uint32_t)pid)
			continue;
		for (uint32_t k = 0; k < p->nr_threads && tmo < 0; k++)
			for (uint32_t a = 0; a < p->threads[k].nr_activities;
			     a++) {
				const struct actrack_activity *act =
					&p->threads[k].activities[a].a;

				if (act->type == type) {
					tmo = (int64_t)act->timeout_ns;
					break;
				}
			}
	}
	actrack_snapshot_free(s);
	return tmo;
}

static int64_t clock_ns(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/*
 * Each timed wait records the timeout its absolute deadline leaves at the
 * push, on the wait's clock: between the deadline less the time after we
 * saw it and the deadline less the time before the program started.
 */
TEST(timed_waits_record_their_timeout)
{
	static const struct {
		const char *how;
		uint8_t type;
	} cases[] = {
		{ "mutex_timedlock", ACTRACK_ACT_LOCK_ACQUIRE },
		{ "mutex_clocklock", ACTRACK_ACT_LOCK_ACQUIRE },
		{ "rwlock_timedwrlock", ACTRACK_ACT_LOCK_ACQUIRE },
		{ "rwlock_timedrdlock", ACTRACK_ACT_LOCK_ACQUIRE },
		{ "cond_timedwait", ACTRACK_ACT_EVENT_WAIT },
		{ "cond_timedwait_monotonic", ACTRACK_ACT_EVENT_WAIT },
		{ "cond_clockwait", ACTRACK_ACT_EVENT_WAIT },
		{ "sem_timedwait", ACTRACK_ACT_EVENT_WAIT },
		{ "sem_clockwait", ACTRACK_ACT_EVENT_WAIT },
	};
	char *argv[] = { "actrack", "run", "--", NULL, NULL, NULL };

	SETUP("timed");
	argv[3] = (char *)prog("run_timed");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t before[2], tmo = -1, after, dl;
		long long sec;
		char buf[256] = "";
		struct job j;
		long nsec;
		int clk;

		if (arena[0])
			unlink(arena);
		argv[4] = (char *)cases[i].how;
		before[0] = clock_ns(CLOCK_REALTIME);
		before[1] = clock_ns(CLOCK_MONOTONIC);
		ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
		if (!job_read_until(&j, "", buf, sizeof(buf)) ||
		    sscanf(buf, "deadline %d %lld %ld", &clk, &sec,
			   &nsec) != 3 ||
		    (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC)) {
			job_kill(&j);
			ASSERT_TRUE(false) TH_LOG("%s: %s", cases[i].how, buf);
		}
		dl = sec * 1000000000LL + nsec;
		for (int k = 0; k < 1000 && tmo < 0; k++) {
			tmo = timeout_of(j.pid, cases[i].type);
			if (tmo < 0)
				usleep(10 * 1000);
		}
		after = clock_ns((clockid_t)clk);
		job_kill(&j);
		ASSERT_LE(0, tmo) TH_LOG("%s: no wait", cases[i].how);
		EXPECT_LE(dl - after, tmo) TH_LOG("%s", cases[i].how);
		EXPECT_GE(dl - before[clk == CLOCK_MONOTONIC], tmo)
			TH_LOG("%s", cases[i].how);
	}
	teardown();
}

/*
 * The preload is self-contained: an exec'd image loads it and the C
 * library, not libactrack.so, libmnl or liburcu besides.  Its DT_NEEDED
 * list, read from its dynamic section.
 */
static int needed(const char *path, char *out, size_t len)
{
	const ElfW(Phdr) *ph, *dyn = NULL;
	const ElfW(Ehdr) *eh;
	const ElfW(Dyn) *d;
	uint64_t strtab = 0;
	const char *strs = NULL;
	struct stat st;
	void *map;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		return -1;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	eh = map;
	ph = (const ElfW(Phdr) *)((const char *)map + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = &ph[i];
	if (!dyn)
		return -1;
	d = (const ElfW(Dyn) *)((const char *)map + dyn->p_offset);
	for (const ElfW(Dyn) *e = d; e->d_tag != DT_NULL; e++)
		if (e->d_tag == DT_STRTAB)
			strtab = e->d_un.d_ptr;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && strtab >= ph[i].p_vaddr &&
		    strtab < ph[i].p_vaddr + ph[i].p_filesz)
			strs = (const char *)map + ph[i].p_offset +
			       (strtab - ph[i].p_vaddr);
	if (!strs)
		return -1;
	out[0] = 0;
	for (const ElfW(Dyn) *e = d; e->d_tag != DT_NULL; e++)
		if (e->d_tag == DT_NEEDED)
			snprintf(out + strlen(out), len - strlen(out), "%s%s",
				 out[0] ? " " : "", strs + e->d_un.d_val);
	munmap(map, (size_t)st.st_size);
	return 0;
}

TEST(preload_needs_only_the_c_library)
{
	char *argv[] = { "actrack", "run", "--", "/bin/cat", "/proc/self/maps",
			 NULL };
	char path[PATH_MAX] = "", list[512];
	const char *line, *end;
	struct run r;

	SETUP("needed");
	/* The preload `actrack run` loads, wherever it found it. */
	ASSERT_EQ(0, run_cli(&r, NULL, argv));
	if (r.status && strstr(r.err, "statically linked")) {
		run_free(&r);	/* the VM's busybox */
		SKIP(return, "/bin/cat is statically linked: no preload");
	}
	line = strstr(r.out, "/libactrack-preload.so\n");
	if (line) {
		end = strchr(line, '\n');
		while (line > r.out && line[-1] != ' ')
			line--;
		snprintf(path, sizeof(path), "%.*s", (int)(end - line), line);
	}
	run_free(&r);
	ASSERT_EQ(0, needed(path, list, sizeof(list))) TH_LOG("'%s'", path);
	EXPECT_STREQ("libc.so.6", list);
	teardown();
}

/*
 * A program linked with libactrack.so under `actrack run`: its own copy of
 * the library attaches it, and the preload's (linked into the preload)
 * stays out: one process record, one tracker for its one thread, its own
 * task activity on it.  Two copies would attach twice, and the second
 * would free the first's records as an earlier image's.
 */
/* Is process @pid (its main thread) in a read() system call now? */
static bool in_read(pid_t pid)
{
	char path[64], buf[64] = "", want[16];
	int fd;

	snprintf(want, sizeof(want), "%d ", __NR_read);
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return !strncmp(buf, want, strlen(want));
}

TEST(linked_program_is_tracked_once)
{
	char *argv[] = { "actrack", "run", "--", NULL, NULL };
	struct actrack_snapshot *s = NULL;
	uint32_t procs = 0, threads = 0;
	char buf[256];
	struct job j;

	SETUP("linked");
	argv[3] = (char *)prog("run_linked");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	if (!job_read_until(&j, "pushed", buf, sizeof(buf))) {
		job_kill(&j);
		ASSERT_TRUE(false) TH_LOG("%s", buf);
	}
	for (int i = 0; i < 1000 &&
	     activities(j.pid, ACTRACK_ACT_TASK_RUN, 42) != 1; i++)
		usleep(10 * 1000);
	EXPECT_EQ(1, activities(j.pid, ACTRACK_ACT_TASK_RUN, 42));
	/* Once it blocks in read(), its stack is its task alone: nothing
	 * of a second copy's in the tracker it sees. */
	for (int i = 0; i < 1000 && !in_read(j.pid); i++)
		usleep(10 * 1000);
	EXPECT_TRUE(in_read(j.pid));
	EXPECT_EQ(1, activities(j.pid, 0, 0));
	ASSERT_EQ(0, actrack_snapshot_take(arena[0] ? arena : NULL,
					   arena[0] ? ACTRACK_SNAP_ARENA_FILE :
					   0, &s));
	for (uint32_t i = 0; i < s->nr_processes; i++)
		if (s->processes[i].pid == (uint32_t)j.pid) {
			procs++;
			threads += s->processes[i].nr_threads;
		}
	actrack_snapshot_free(s);
	EXPECT_EQ(1, procs);
	EXPECT_EQ(1, threads);
	EXPECT_EQ(0, job_finish(&j));
	teardown();
}

/*
 * Run @argv, whose slot @at gets progs/run_forkguard: it forks from a
 * signal handler and says the child's pid; the child's read() of fd 0
 * must show as an io-wait, so its calls are tracked.
 */
static void forked_child_is_tracked(struct __test_metadata *_metadata,
				    char *argv[], int at)
{
	char buf[256];
	struct job j;
	int child = 0;

	argv[at] = (char *)prog("run_forkguard");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "forked", buf, sizeof(buf)));
	ASSERT_EQ(1, sscanf(buf, "child %d", &child));
	EXPECT_TRUE(io_wait_shows(child, 0));
	job_kill(&j);
}

/*
 * fork() from a signal handler that interrupted the preload's own
 * bookkeeping (inside its pthread_create, in the program's malloc): the
 * child does not inherit the preload's guard, so its calls are tracked.
 */
TEST(fork_from_handler_inside_bookkeeping_is_tracked)
{
	char *argv[] = { "actrack", "run", "--", NULL, NULL };

	SETUP("forkguard");
	forked_child_is_tracked(_metadata, argv, 3);
	teardown();
}

/*
 * The same fork from a handler in an image that has not attached yet (a
 * tracked process's exec'd child, here abba's: its first push attaches
 * it): the preload installs the fork handlers before that first
 * bookkeeping, not at start, and the child still starts with the guard
 * cleared.  The child unblocks the signal (an image's first attach is
 * refused in what may be a handler) and attaches at its read.
 */
TEST(fork_from_handler_before_attach_is_tracked)
{
	char *argv[] = { "actrack", "run", "--", abba, "child", NULL,
			 "unblock", NULL };

	SETUP("forkguard2");
	forked_child_is_tracked(_metadata, argv, 5);
	teardown();
}

/*
 * An image a tracked process starts and that never pushes makes no
 * futex() call at start: the fork handlers (a pthread_once(), whose first
 * run wakes with futex()) wait for the first push (progs/run_nofutex).
 */
TEST(image_that_never_pushes_makes_no_futex_call)
{
	char *argv[] = { "actrack", "run", "--", NULL, NULL };
	struct run r;

	SETUP("nofutex");
	argv[3] = (char *)prog("run_nofutex");
	ASSERT_EQ(0, run_cli(&r, NULL, argv));
	if (!strncmp(r.out, "skip ", 5)) {
		char why[128];

		snprintf(why, sizeof(why), "%.*s", (int)strcspn(r.out, "\n"),
			 r.out + 5);
		run_free(&r);
		teardown();
		SKIP(return, "%s", why);
	}
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_STREQ("exit 0\n", r.out);
	run_free(&r);
	teardown();
}

/* Run `cc ARGS...` quietly.  Return: its exit status, or -1. */
static int cc(char *const argv[])
{
	struct run r;
	int st;

	if (run_program(&r, "/usr/bin/cc", NULL, argv))
		return -1;
	st = r.status;
	run_free(&r);
	return st;
}

/* A library loaded with dlopen() after attach is in the module list. */
TEST(dlopened_library_is_a_module)
{
	static const char src[] =
		"#include <stdio.h>\n"
		"#include <unistd.h>\n"
		"void run_plugin(void)\n"
		"{\n"
		"	char c;\n"
		"	puts(\"loaded\");\n"
		"	fflush(stdout);\n"
		"	while (read(0, &c, 1) > 0)\n"
		"		;\n"
		"}\n";
	char dir[] = "/tmp/actrack-run-dlopen-XXXXXX";
	char c_path[64], so_path[64], buf[256];
	char *ccv[] = { "cc", "-shared", "-fPIC", "-o", so_path, c_path,
			NULL };
	char *argv[] = { "actrack", "run", "--", NULL, so_path, NULL };
	struct actrack_snapshot *s;
	struct job j;
	int fd, found = 0;

	SETUP("dlopen");
#if !defined(__x86_64__)
	SKIP(return, "dlopen() is interposed on x86-64 only");
#endif
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(c_path, sizeof(c_path), "%s/plugin.c", dir);
	snprintf(so_path, sizeof(so_path), "%s/librun_plugin.so", dir);
	fd = open(c_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(src), write(fd, src, strlen(src)));
	close(fd);
	if (access("/usr/bin/cc", X_OK) || cc(ccv)) {
		unlink(c_path);
		rmdir(dir);
		SKIP(return, "no C compiler to build the library");
	}
	argv[3] = (char *)prog("run_dlopen");
	ASSERT_EQ(0, job_start(&j, argv, NULL, NULL));
	ASSERT_TRUE(job_read_until(&j, "loaded", buf, sizeof(buf)));
	ASSERT_EQ(0, actrack_snapshot_take(arena[0] ? arena : NULL,
					   arena[0] ? ACTRACK_SNAP_ARENA_FILE :
					   0, &s));
	for (uint32_t i = 0; i < s->nr_processes; i++)
		for (uint32_t k = 0; s->processes[i].pid == (uint32_t)j.pid &&
		     k < s->processes[i].nr_modules; k++)
			found += !strcmp(s->processes[i].modules[k].path,
					 so_path);
	actrack_snapshot_free(s);
	EXPECT_EQ(1, found);
	EXPECT_EQ(0, job_finish(&j));
	unlink(so_path);
	unlink(c_path);
	rmdir(dir);
	teardown();
}

/*
 * A program built with -fsanitize=address runs under `actrack run` (its
 * runtime goes first in LD_PRELOAD) and is tracked.
 */
TEST(asan_program_runs_tracked)
{
	static const char src[] =
		"#include <stdio.h>\n"
		"int main(void)\n"
		"{\n"
		"	puts(\"asan ok\");\n"
		"	return 0;\n"
		"}\n";
	char dir[] = "/tmp/actrack-run-asan-XXXXXX";
	char c_path[64], exe[64];
	char *ccv[] = { "cc", "-fsanitize=address", "-g", "-o", exe, c_path,
			NULL };
	char *argv[] = { "actrack", "run", "--", exe, NULL };
	struct run r;
	int fd;

	SETUP("asan");
	if (sizeof(void *) != 8)
		SKIP(return, "this build's preload is 32-bit, cc's programs "
		     "are not");
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(c_path, sizeof(c_path), "%s/asan.c", dir);
	snprintf(exe, sizeof(exe), "%s/asan", dir);
	fd = open(c_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(src), write(fd, src, strlen(src)));
	close(fd);
	if (access("/usr/bin/cc", X_OK) || cc(ccv)) {
		unlink(c_path);
		rmdir(dir);
		SKIP(return, "no compiler or ASan runtime (libasan)");
	}
	ASSERT_EQ(0, run_cli(&r, NULL, argv));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("asan ok\n", r.out);
	EXPECT_STREQ("", r.err);
	EXPECT_TRUE(tracked(exe));
	run_free(&r);
	unlink(exe);
	unlink(c_path);
	rmdir(dir);
	teardown();
}

TEST_HARNESS_MAIN
