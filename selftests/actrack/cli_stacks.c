// SPDX-License-Identifier: MIT
/*
 * `actrack hangs --stacks` and `dump --stacks`: real backtraces of live
 * threads, taken with ptrace and unwound by libdwfl.
 *
 * The target is a writer child of this binary, which the Makefile builds
 * at -O2 without frame pointers, as distributions build their code: only
 * DWARF CFI unwinds it.  Its two threads deadlock on two mutexes three
 * noinline calls deep; the backtraces must name those functions and the
 * thread's start routine, in order, and the threads must be left running
 * and untraced.  Where this process may not ptrace its own child at all
 * (a seccomp filter, kernel.yama.ptrace_scope 3), the tests skip.
 *
 * When ptrace is refused the analysis goes on without backtraces: one line
 * on stderr says which thread and why (already traced, another uid), the
 * thread says "backtrace: none (...)", the exit status stays 3.
 */
#include <dirent.h>
#include <grp.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

#include "json_schema.h"

/* ---- the target: two threads deadlocked three calls deep ------------- */

/* In a MAP_SHARED page, made before the fork: the test reads it. */
struct shared {
	pthread_mutex_t m[2];
	int holds[2], blocked[2], tid[2];
};

static struct shared *sh;
/* Work after each call, so that no call is a tail call (a jump leaves no
 * frame to unwind). */
static volatile int sink;

static int load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

NOINLINE static int stacks_inner(int me)
{
	int other = 1 - me;
	uint32_t want;

	pthread_mutex_lock(&sh->m[me]);
	actrack_push_lock_held(&sh->m[me]);
	store(&sh->holds[me], 1);
	while (!load(&sh->holds[other]))
		usleep(1000);
	want = actrack_push_lock_acquire(&sh->m[other]);
	store(&sh->blocked[me], 1);
	pthread_mutex_lock(&sh->m[other]);	/* never returns */
	actrack_pop(want);
	return sink + me;
}

NOINLINE static int stacks_middle(int me)
{
	int r = stacks_inner(me);

	sink = r;
	return r + 1;
}

NOINLINE static int stacks_outer(int me)
{
	int r = stacks_middle(me);

	sink = r;
	return r * 2;
}

static void *stacks_thread_main(void *arg)
{
	int me = (int)(intptr_t)arg;

	actrack_thread_init(me ? "stk-1" : "stk-0");
	store(&sh->tid[me], (int)syscall(SYS_gettid));
	sink = stacks_outer(me);
	return NULL;
}

/* The writer child's work: start both threads, return once both are
 * about to block (the writer then pauses until killed). */
static void deadlock_writer(void *arg)
{
	pthread_t t[2];

	sh = arg;
	for (intptr_t i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, stacks_thread_main, (void *)i);
	for (int i = 0; i < 10000; i++) {
		if (load(&sh->blocked[0]) && load(&sh->blocked[1]))
			break;
		usleep(1000);
	}
}

/* The order the frames of each deadlocked thread must show, innermost
 * first, one after the other. */
static const char *const chain[] = {
	"stacks_inner", "stacks_middle", "stacks_outer", "stacks_thread_main",
};
#define CHAIN_LEN	(sizeof(chain) / sizeof(chain[0]))

/* ---- fixture ---------------------------------------------------------- */

FIXTURE(stacks) {
	char dir[64], path[128], doc[256], schema[256];
	struct shared *sh;
	struct writer w;
	struct run r, py;
	pid_t traced;		/* a tid this test seized, to let go */
};

FIXTURE_SETUP(stacks)
{
	pthread_mutexattr_t attr;

	memset(&self->w, 0, sizeof(self->w));
	memset(&self->r, 0, sizeof(self->r));
	memset(&self->py, 0, sizeof(self->py));
	self->traced = 0;
	/* A directory anyone may enter, for the test that reads the arena
	 * as another uid (run-tests' TMPDIR is private). */
	snprintf(self->dir, sizeof(self->dir), "/tmp/actrack-stacks-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, chmod(self->dir, 0755));
	snprintf(self->path, sizeof(self->path), "%s/arena", self->dir);
	test_path(self->doc, sizeof(self->doc), "cli-stacks-doc");
	test_path(self->schema, sizeof(self->schema), "cli-stacks-schema");
	ASSERT_EQ(0, write_file(self->schema, actrack_test_schema,
				strlen(actrack_test_schema)));
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, sizeof(*self->sh));
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&self->sh->m[0], &attr);
	pthread_mutex_init(&self->sh->m[1], &attr);
	pthread_mutexattr_destroy(&attr);
}

FIXTURE_TEARDOWN(stacks)
{
	if (self->r.out)
		LOG_ON_FAILURE(&self->r);
	if (self->py.out && ACTRACK_TEST_FAILED(_metadata))
		TH_LOG("checker: exit %d\n%s%s", self->py.status,
		       self->py.out, self->py.err);
	run_free(&self->r);
	run_free(&self->py);
	/* A thread we trace, killed, would wait for us to reap it, and the
	 * writer's waitpid() for it: let it go first. */
	if (self->traced) {
		int status;

		if (!ptrace(PTRACE_INTERRUPT, self->traced, NULL, NULL) &&
		    waitpid(self->traced, &status, __WALL) == self->traced)
			ptrace(PTRACE_DETACH, self->traced, NULL, NULL);
	}
	writer_stop(&self->w);
	munmap(self->sh, sizeof(*self->sh));
	unlink(self->path);
	unlink(self->doc);
	unlink(self->schema);
	rmdir(self->dir);
}

static int start_target(struct __test_metadata *_metadata,
			FIXTURE_DATA(stacks) *self)
{
	int ret = writer_start(&self->w, self->path, 8, 0, deadlock_writer,
			       self->sh);

	if (ret || !load(&self->sh->blocked[0]) ||
	    !load(&self->sh->blocked[1]))
		return -1;
	return 0;
}

static int hangs(struct run *r, const char *path, bool json)
{
	char *argv[] = { "actrack", "--arena", (char *)path, "hangs",
			 "--stacks", "--for", "50ms", "--interval", "100",
			 json ? "--json" : NULL, NULL };

	run_free(r);
	return run_cli(r, NULL, argv);
}

/* ptrace of one's own child refused outright: nothing to test here. */
#define SKIP_IF_NO_PTRACE(r)						\
	do {								\
		if (strstr((r)->err, "denied by the system") ||		\
		    strstr((r)->err, "ptrace_scope is 3"))		\
			SKIP(return, "ptrace is not available: %s",	\
			     (r)->err);					\
	} while (0)

/*
 * The function names of the backtrace printed under the first line of
 * @out that starts with @head: one per frame, innermost first, "" for a
 * frame without one.  Return: the number of frames, or -1 without a
 * backtrace.
 */
static int frames_under(const char *out, const char *head, char names[][64],
			int max)
{
	const char *p = out, *nl;
	int n = 0;

	while (p && *p && strncmp(p, head, strlen(head))) {
		nl = strchr(p, '\n');
		p = nl ? nl + 1 : NULL;
	}
	if (!p || !*p)
		return -1;
	/* The header, then its indented lines up to the backtrace. */
	for (;;) {
		nl = strchr(p, '\n');
		if (!nl)
			return -1;
		p = nl + 1;
		if (strncmp(p, "    ", 4))
			return -1;
		if (!strncmp(p, "    backtrace:\n", 15))
			break;
	}
	p = strchr(p, '\n') + 1;
	/* "      #1  0x00005555deadbeef - 1 name+0x1c (file.c:42)" */
	while (n < max && !strncmp(p, "      #", 7)) {
		const char *sym = strstr(p, " 0x");
		size_t len;

		nl = strchr(p, '\n');
		if (!sym || !nl || sym > nl)
			return -1;
		/* 16 hex digits, then "     " or " - 1 " (a return
		 * address). */
		sym += 3 + 16 + 5;
		len = strcspn(sym, "+ \n");
		snprintf(names[n++], 64, "%.*s", (int)len, sym);
		p = nl + 1;
	}
	return n;
}

static int count_matches(const char *s, const char *what)
{
	int n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s += strlen(what);
	}
	return n;
}

/* Do @names[0..@n) hold the chain, one frame after the other? */
static bool has_chain(char names[][64], int n)
{
	for (int i = 0; i + (int)CHAIN_LEN <= n; i++) {
		size_t k = 0;

		while (k < CHAIN_LEN && !strcmp(names[i + k], chain[k]))
			k++;
		if (k == CHAIN_LEN)
			return true;
	}
	return false;
}

/* Every thread of @pid running (not stopped), traced by nobody, except
 * @traced, which @tracer traces. */
static void expect_running(struct __test_metadata *_metadata, pid_t pid,
			   pid_t traced, pid_t tracer)
{
	char path[300], line[256];
	struct dirent *de;
	int seen = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		FILE *f;
		char state = '?';
		long tpid = -1;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", pid,
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "State:", 6))
				sscanf(line + 6, " %c", &state);
			else if (!strncmp(line, "TracerPid:", 10))
				tpid = strtol(line + 10, NULL, 10);
		}
		fclose(f);
		/* Left running: R, S or D, never stopped (T) or in a
		 * ptrace stop (t).  The deadlocked threads sleep in futex
		 * (S), but a runtime's thread (ThreadSanitizer's background
		 * thread wakes every 100 ms) may be caught on a CPU (R). */
		EXPECT_NE(NULL, strchr("RSD", state)) {
			TH_LOG("thread %s of %d is in state %c", de->d_name,
			       pid, state);
		}
		EXPECT_EQ(strtol(de->d_name, NULL, 10) == traced ? tracer : 0,
			  tpid);
		seen++;
	}
	closedir(d);
	/* the writer's main thread and ours, and under ThreadSanitizer its
	 * runtime's background thread: every one of them left running */
	EXPECT_LE(3, seen);
}

/* The names of the frames under thread @i's line in self->r.out. */
static int thread_frames(FIXTURE_DATA(stacks) *self, int i,
			 char names[][64], int max)
{
	char head[64];

	snprintf(head, sizeof(head), "thread %d 'stk-%d'", self->sh->tid[i],
		 i);
	return frames_under(self->r.out, head, names, max);
}

static void log_frames(struct __test_metadata *_metadata, char names[][64],
		       int n)
{
	for (int i = 0; i < n; i++)
		TH_LOG("frame %d: %s", i, names[i]);
}

TEST_F(stacks, hangs_unwinds_deadlocked_threads)
{
	char names[64][64];

	ASSERT_EQ(0, start_target(_metadata, self));
	ASSERT_EQ(0, hangs(&self->r, self->path, false));
	SKIP_IF_NO_PTRACE(&self->r);
	EXPECT_EQ(3, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "DEADLOCK: "));
	for (int i = 0; i < 2; i++) {
		int n = thread_frames(self, i, names, 64);

		/* Below the futex wait in libc: our three calls, then the
		 * start routine, each once. */
		EXPECT_LT(CHAIN_LEN, n);
		EXPECT_TRUE(has_chain(names, n)) {
			log_frames(_metadata, names, n);
		}
		/* Frame 0 is where it sleeps, in libc, not in our code. */
		EXPECT_NE(0, strncmp(names[0], "stacks_", 7));
	}
	/* The origin of the wait, as before, above its backtrace. */
	EXPECT_NE(NULL, strstr(self->r.out, "    at stacks_inner+0x"));
	EXPECT_NE(NULL, strstr(self->r.out, "cli_stacks.c:"));
	expect_running(_metadata, self->w.pid, 0, 0);
}

TEST_F(stacks, dump_unwinds_every_thread)
{
	char names[64][64], pid[16];
	char *argv[] = { "actrack", "--arena", self->path, "dump", "--stacks",
			 "--pid", pid, NULL };

	ASSERT_EQ(0, start_target(_metadata, self));
	snprintf(pid, sizeof(pid), "%d", self->w.pid);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	SKIP_IF_NO_PTRACE(&self->r);
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	for (int i = 0; i < 2; i++) {
		char head[64];
		int n;

		snprintf(head, sizeof(head), "  thread %d 'stk-%d'",
			 self->sh->tid[i], i);
		n = frames_under(self->r.out, head, names, 64);
		EXPECT_TRUE(has_chain(names, n)) {
			log_frames(_metadata, names, n);
		}
	}
	expect_running(_metadata, self->w.pid, 0, 0);
}

/*
 * Is python3 with jsonschema there?  On the host scripts/setup installs
 * it; the test VM has no python.  Return: 1 to check, 0 to skip (VM), -1
 * if the test has failed.
 */
static int have_checker(struct __test_metadata *_metadata, struct run *py)
{
	char *argv[] = { "/usr/bin/python3", "-c", "import jsonschema", NULL };

	if (run_program(py, argv[0], NULL, argv))
		return -1;
	if (py->status == 127 && getenv("ACTRACK_IN_VM")) {
		run_free(py);
		return 0;
	}
	EXPECT_EQ(0, py->status) {
		TH_LOG("python3 with the jsonschema module is needed "
		       "(Debian: python3-jsonschema, run scripts/setup): %s",
		       py->err);
	}
	run_free(py);
	return !ACTRACK_TEST_FAILED(_metadata) ? 1 : -1;
}

/* argv: schema, document, kind (hangs or dump), tid0, tid1. */
static const char checker[] =
"import json, sys\n"
"import jsonschema\n"
"schema = json.load(open(sys.argv[1]))\n"
"doc = json.load(open(sys.argv[2]))\n"
"cls = jsonschema.validators.validator_for(schema)\n"
"cls(schema).validate(doc)\n"
"tids = [int(x) for x in sys.argv[4:6]]\n"
"if sys.argv[3] == 'hangs':\n"
"    threads = {h['tid']: h for h in doc['hung']}\n"
"else:\n"
"    threads = {t['tid']: t for p in doc['processes'] for t in p['threads']}\n"
"chain = ['stacks_inner', 'stacks_middle', 'stacks_outer', 'stacks_thread_main']\n"
"for tid in tids:\n"
"    st = threads[tid]['stack']\n"
"    assert st['error'] is None and not st['truncated'], st\n"
"    f = st['frames']\n"
"    assert f[0]['activation'] and not any(x['activation'] for x in f[1:]), f\n"
"    names = [x['symbol']['function'] for x in f]\n"
"    k = names.index('stacks_inner')\n"
"    assert names[k:k + 4] == chain, names\n"
"    for x in f[k:k + 4]:\n"
"        s = x['symbol']\n"
"        assert s['file'].endswith('cli_stacks.c') and s['line'] > 0, s\n"
"        assert s['text'].startswith(s['function'] + '+0x'), s\n"
"print('OK')\n";

static void check_json(struct __test_metadata *_metadata,
		       FIXTURE_DATA(stacks) *self, const char *kind)
{
	char t0[16], t1[16];
	char *argv[] = { "/usr/bin/python3", "-c", (char *)checker,
			 self->schema, self->doc, (char *)kind, t0, t1, NULL };
	int c = have_checker(_metadata, &self->py);

	if (c <= 0)
		return;		/* failed, or the VM: byte checks only */
	snprintf(t0, sizeof(t0), "%d", self->sh->tid[0]);
	snprintf(t1, sizeof(t1), "%d", self->sh->tid[1]);
	ASSERT_EQ(0, write_file(self->doc, self->r.out, strlen(self->r.out)));
	ASSERT_EQ(0, run_program(&self->py, argv[0], NULL, argv));
	EXPECT_EQ(0, self->py.status);
	EXPECT_STREQ("OK\n", self->py.out);
}

TEST_F(stacks, hangs_json_carries_the_frames)
{
	ASSERT_EQ(0, start_target(_metadata, self));
	ASSERT_EQ(0, hangs(&self->r, self->path, true));
	SKIP_IF_NO_PTRACE(&self->r);
	EXPECT_EQ(3, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out, "\"stack\": {"));
	EXPECT_NE(NULL, strstr(self->r.out,
			       "\"function\": \"stacks_middle\""));
	check_json(_metadata, self, "hangs");
	expect_running(_metadata, self->w.pid, 0, 0);
}

TEST_F(stacks, dump_json_carries_the_frames)
{
	char pid[16];
	char *argv[] = { "actrack", "--arena", self->path, "dump", "--stacks",
			 "--json", "--pid", pid, NULL };

	ASSERT_EQ(0, start_target(_metadata, self));
	snprintf(pid, sizeof(pid), "%d", self->w.pid);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	SKIP_IF_NO_PTRACE(&self->r);
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_NE(NULL, strstr(self->r.out,
			       "\"function\": \"stacks_outer\""));
	check_json(_metadata, self, "dump");
}

/* A trace has no place for frames: a usage error, before anything is
 * stopped. */
TEST_F(stacks, dump_trace_refuses_stacks)
{
	char *argv[] = { "actrack", "--arena", self->path, "dump", "--stacks",
			 "--trace", NULL };

	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(2, self->r.status);
	EXPECT_STREQ("actrack: dump: --stacks does not apply to --trace (see "
		     "'actrack dump --help')\n", self->r.err);
	EXPECT_STREQ("", self->r.out);
}

/* ---- when ptrace says no ------------------------------------------------ */

/* A saved image is one past moment: nothing is stopped. */
TEST_F(stacks, saved_image_is_not_live)
{
	char img[160], want[128];
	char *save[] = { "actrack", "--arena", self->path, "save", img, NULL };
	/* --for 0: every wait in the image, however young when saved. */
	char *argv[] = { "actrack", "--arena", img, "hangs", "--stacks",
			 "--for", "0", NULL };

	snprintf(img, sizeof(img), "%s/image", self->dir);
	ASSERT_EQ(0, start_target(_metadata, self));
	ASSERT_EQ(0, run_cli(&self->r, NULL, save));
	ASSERT_EQ(0, self->r.status);
	run_free(&self->r);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	unlink(img);
	EXPECT_EQ(3, self->r.status);
	EXPECT_STREQ("actrack: hangs: no backtraces: a saved image: its "
		     "processes are not stopped\n", self->r.err);
	snprintf(want, sizeof(want), "    backtrace: none (a saved image: its "
		 "processes are not stopped)\n");
	EXPECT_NE(NULL, strstr(self->r.out, want));
	EXPECT_NE(NULL, strstr(self->r.out, "DEADLOCK: "));
}

TEST_F(stacks, already_traced_thread_is_reported)
{
	char want[256], names[64][64];
	pid_t me = getpid();
	int n;

	ASSERT_EQ(0, start_target(_metadata, self));
	/* We hold thread 0 as a debugger would (seized, still running). */
	if (ptrace(PTRACE_SEIZE, self->sh->tid[0], NULL, NULL))
		SKIP(return, "ptrace of our own child: %s", strerror(errno));
	self->traced = self->sh->tid[0];
	ASSERT_EQ(0, hangs(&self->r, self->path, false));
	/* Documented: the analysis goes on, the exit status is the same. */
	EXPECT_EQ(3, self->r.status);
	snprintf(want, sizeof(want), "actrack: hangs: no backtrace of thread "
		 "%d of process %d: ptrace: Operation not permitted (it is "
		 "already traced by process %d, a debugger?)\n",
		 self->sh->tid[0], self->w.pid, me);
	EXPECT_STREQ(want, self->r.err);
	snprintf(want, sizeof(want), "    backtrace: none (ptrace: Operation "
		 "not permitted (it is already traced by process %d, a "
		 "debugger?))\n", me);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	EXPECT_EQ(-1, thread_frames(self, 0, names, 64));
	/* Only that thread: the other one still has its backtrace. */
	n = thread_frames(self, 1, names, 64);
	EXPECT_TRUE(has_chain(names, n)) {
		log_frames(_metadata, names, n);
	}
	EXPECT_NE(NULL, strstr(self->r.out, "DEADLOCK: "));
	expect_running(_metadata, self->w.pid, self->traced, me);
}

TEST_F(stacks, other_uid_is_reported_once)
{
	char want[512];
	char *argv[] = { "actrack", "--arena", self->path, "hangs", "--stacks",
			 "--for", "50ms", "--interval", "100", NULL };
	const uid_t nobody = 65534;

	if (geteuid() != 0)
		SKIP(return, "needs root, to run the CLI as another uid");
	ASSERT_EQ(0, start_target(_metadata, self));
	ASSERT_EQ(0, chmod(self->path, 0644));
	/* the CLI as nobody, on our arena and our process */
	ASSERT_EQ(0, run_program_as(&self->r, cli_path(), NULL, nobody, argv));
	EXPECT_EQ(3, self->r.status);
	/* One line for the process: the reason holds for all its threads
	 * (the lower tid is tried first). */
	snprintf(want, sizeof(want), "actrack: hangs: no backtrace of thread "
		 "%d of process %d: ptrace: Operation not permitted (it runs "
		 "as uid 0 and you are uid %u: ptrace needs the same uid or "
		 "CAP_SYS_PTRACE)\n",
		 self->sh->tid[0] < self->sh->tid[1] ? self->sh->tid[0] :
		 self->sh->tid[1], self->w.pid, (unsigned)nobody);
	EXPECT_STREQ(want, self->r.err);
	EXPECT_EQ(2, count_matches(self->r.out, "    backtrace: none (ptrace: "
				   "Operation not permitted (it runs as uid 0 "
				   "and you are uid 65534"));
	EXPECT_NE(NULL, strstr(self->r.out, "DEADLOCK: "));
	expect_running(_metadata, self->w.pid, 0, 0);
}

TEST_HARNESS_MAIN
