// SPDX-License-Identifier: MIT
/*
 * Real backtraces at death: actrack.ko copies each dying thread's
 * registers and user stack (kmod/capture.c), the report carries them
 * (ACTRACK_A_STACK) and `actrack monitor` unwinds them with DWARF CFI.
 *
 * The victim is a child of this binary, built at -O2 without frame
 * pointers (Makefile): four threads, three of them blocked or spinning
 * three calls deep in code nobody annotated (pthread_cond_wait, read, a
 * loop) and the main thread, which is killed with SIGKILL, crashes with
 * SIGSEGV, calls abort() or is killed by the OOM killer in a small memory
 * cgroup.  Every thread's backtrace must go through its own functions to
 * its start routine, checked by name in the CLI's output.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "vm_util.h"
#include "snapshot_helpers.h"	/* run_cli */

enum bt_mode { BT_KILL, BT_SEGV, BT_ABORT, BT_OOM };

#define BT_THREADS	3	/* besides main */

/* MAP_SHARED, made before the fork: the test reads the tids. */
struct bt_shared {
	int tid[BT_THREADS + 1];	/* [BT_THREADS]: main */
	int ready;
};

static struct bt_shared *bt_sh;
static int bt_go[2], bt_block[2];
static pthread_mutex_t bt_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bt_c = PTHREAD_COND_INITIALIZER;
/* Work after each call, so that no call is a tail call. */
static volatile int bt_sink;

/* A parameter of the loaded module, or -1. */
static long bt_param(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/actrack/parameters/%s",
		 name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static void bt_ready(int slot)
{
	__atomic_store_n(&bt_sh->tid[slot], (int)syscall(SYS_gettid),
			 __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&bt_sh->ready, 1, __ATOMIC_SEQ_CST);
}

/*
 * Poll every @poll_us until @n threads are ready or @seconds passed.
 * Return: how many are.
 */
static int bt_wait_ready(int n, int seconds, useconds_t poll_us)
{
	uint64_t end = actrack_test_mono_ns() + (uint64_t)seconds * 1000000000ULL;

	while (__atomic_load_n(&bt_sh->ready, __ATOMIC_SEQ_CST) < n &&
	       actrack_test_mono_ns() < end)
		usleep(poll_us);
	return __atomic_load_n(&bt_sh->ready, __ATOMIC_SEQ_CST);
}

/*
 * NAME_level2 and NAME_level1: the two frames above NAME_level3 in one
 * thread's backtrace.  Each thread needs its own (the test finds them by
 * name); each does work after its call, so that neither is a tail call.
 * It ends in a declaration, so that a use ends in a semicolon.
 */
#define BT_CALLERS(name, type)						\
	NOINLINE static int name##_level2(type x)			\
	{								\
		int r = name##_level3(x);				\
									\
		bt_sink = r;						\
		return r + 1;						\
	}								\
									\
	NOINLINE static int name##_level1(type x)			\
	{								\
		int r = name##_level2(x);				\
									\
		bt_sink = r;						\
		return r + 1;						\
	}								\
	NOINLINE static int name##_level1(type x)

NOINLINE static int cond_level3(int x)
{
	bt_ready(0);
	pthread_mutex_lock(&bt_m);
	for (;;)
		pthread_cond_wait(&bt_c, &bt_m);
	return x;
}

BT_CALLERS(cond, int);

NOINLINE static int read_level3(int x)
{
	char c;

	bt_ready(1);
	for (;;)
		if (read(bt_block[0], &c, 1) == 0)
			break;
	return x + c;
}

BT_CALLERS(read, int);

NOINLINE static int spin_level3(int x)
{
	bt_ready(2);
	for (;;)
		bt_sink += x;
	return x;
}

BT_CALLERS(spin, int);

NOINLINE static void *bt_thread_main(void *arg)
{
	int which = (int)(intptr_t)arg;
	uint32_t t = actrack_push_task(100 + which);

	switch (which) {
	case 0:
		bt_sink = cond_level1(which);
		break;
	case 1:
		bt_sink = read_level1(which);
		break;
	default:
		bt_sink = spin_level1(which);
		break;
	}
	actrack_pop(t);
	return NULL;
}

NOINLINE static int main_level3(enum bt_mode mode)
{
	volatile char *p = NULL;
	char c;

	bt_ready(BT_THREADS);
	if (read(bt_go[0], &c, 1) != 1)
		_exit(3);
	switch (mode) {
	case BT_SEGV:
		*p = 1;
		break;
	case BT_ABORT:
		abort();
	case BT_OOM: {
		/*
		 * Touch memory until the cgroup's OOM killer ends us, in page
		 * faults of one mapping made beforehand.  Not malloc()'s
		 * mmap() per MiB: an OOM kill charged inside mmap() holds the
		 * memory map for writing while the killer prints its report
		 * (a serial console: milliseconds), and a thread that dies
		 * meanwhile has its stack marked unreadable (docs/trust.md).
		 */
		size_t len = (size_t)256 << 20;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);

		if (m == MAP_FAILED)
			_exit(4);
		for (size_t off = 0; off < len; off += 4096)
			m[off] = 1;
		_exit(4);
	}
	case BT_KILL:
		pause();
		break;
	}
	return c;
}

BT_CALLERS(main, enum bt_mode);

NOINLINE static void bt_victim_main(enum bt_mode mode)
{
	pthread_t t[BT_THREADS];
	uint32_t top;

	/* No core files: abort and SIGSEGV leave only the report. */
	setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
	actrack_thread_init("bt-main");
	top = actrack_push_task(99);
	for (intptr_t i = 0; i < BT_THREADS; i++)
		if (pthread_create(&t[i], NULL, bt_thread_main, (void *)i))
			_exit(2);
	bt_sink = main_level1(mode);
	actrack_pop(top);
	_exit(0);
}

FIXTURE(bt) {
	struct actrack_monitor *m;
	struct vm_deaths *ds;
	pid_t pid;
	char cg[64];
};

FIXTURE_SETUP(bt)
{
	self->m = NULL;
	self->ds = NULL;
	self->pid = -1;
	self->cg[0] = 0;
	VM_REQUIRE_MODULE();
	ASSERT_EQ(0, actrack_monitor_open(0, &self->m));
	self->ds = calloc(1, sizeof(*self->ds));
	ASSERT_NE(NULL, self->ds);
	bt_sh = mmap(NULL, sizeof(*bt_sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bt_sh);
	ASSERT_EQ(0, pipe(bt_go));
	ASSERT_EQ(0, pipe(bt_block));
}

FIXTURE_TEARDOWN(bt)
{
	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
	if (self->cg[0])
		rmdir(self->cg);
	if (self->m)
		actrack_monitor_close(self->m);
	if (self->ds) {
		vm_deaths_free(self->ds);
		free(self->ds);
	}
	if (bt_sh && bt_sh != MAP_FAILED)
		munmap(bt_sh, sizeof(*bt_sh));
}

/*
 * Write @val to the cgroup file @dir/@file.  Return: 0, -errno when it
 * does not open, -EIO when the write fails or falls short.
 */
static int bt_cg_write(const char *dir, const char *file, const char *val)
{
	size_t n = strlen(val);
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, val, n) == (ssize_t)n ? 0 : -EIO;
	close(fd);
	return ret;
}

/*
 * A memory cgroup of 48 MiB without swap, at @dir.  Return: 0, or -errno
 * (no cgroup2 or no memory controller: the caller skips).
 */
static int bt_memcg(char *dir, size_t len)
{
	const char *root = "/sys/fs/cgroup";
	struct stat st;
	int ret;

	if (stat("/sys/fs/cgroup/cgroup.controllers", &st) &&
	    mount("none", root, "cgroup2", 0, NULL))
		return -errno;
	ret = bt_cg_write(root, "cgroup.subtree_control", "+memory");
	if (ret)
		return ret == -EIO ? -ENOTSUP : ret;
	snprintf(dir, len, "%s/actrack-bt-%d", root, getpid());
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	ret = bt_cg_write(dir, "memory.max", "50331648");
	if (ret)
		return ret;
	/* Best effort: without swap accounting there is no swap to limit. */
	bt_cg_write(dir, "memory.swap.max", "0");
	return 0;
}

static int bt_join_cg(const char *dir)
{
	return bt_cg_write(dir, "cgroup.procs", "0") ? -1 : 0;
}

/* The lines of thread @tid's part of the report of @pid in @out. */
static char *bt_thread_block(const char *out, pid_t pid, int tid)
{
	char head[64], thead[64];
	const char *p, *t, *end;

	snprintf(head, sizeof(head), "pid %d (", pid);
	for (p = out; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, head, strlen(head)))
			break;
	if (!p)
		return NULL;
	snprintf(thead, sizeof(thead), "\n  thread %d ", tid);
	t = strstr(p, thead);
	if (!t)
		return NULL;
	/* Up to the next thread or report. */
	for (end = t + 1; (end = strchr(end, '\n'));) {
		if (!strncmp(end, "\n  thread ", 10) ||
		    !strncmp(end, "\npid ", 5))
			break;
		end++;
	}
	return strndup(t + 1, end ? (size_t)(end - t - 1) : strlen(t + 1));
}

/*
 * `actrack monitor --count 1` in the background, its output to a file;
 * returns once it said READY=1 on NOTIFY_SOCKET (subscribed), or -1.
 */
static pid_t bt_monitor_start(int *out)
{
	char path[256], notify[108], limit[16];
	pid_t pid;
	int nfd;

	test_path(path, sizeof(path), "bt-monitor-out");
	*out = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	unlink(path);
	if (*out < 0)
		return -1;
	nfd = vm_notify_open(notify, sizeof(notify));
	if (nfd < 0)
		return -1;
	/*
	 * The monitor's own limit only keeps a lost report from hanging the
	 * case; on a slow kernel (ACTRACK_SLOW_KERNEL, test_harness.h) an
	 * OOM kill alone took longer than 60 s (PREEMPT_RT debug kernel), so
	 * the limit grows with the slowness and the case's own limit, not
	 * the monitor's, is what catches a hang there.
	 */
	snprintf(limit, sizeof(limit), "%ds", 60 * actrack_test_slowness());
	pid = fork();
	if (pid < 0)
		goto out;
	if (!pid) {
		char *argv[] = { "actrack", "monitor", "--count", "1",
				 "--timeout", limit, NULL };

		dup2(*out, 1);
		setenv("NOTIFY_SOCKET", notify, 1);
		execv(cli_path(), argv);
		_exit(127);
	}
	/* READY=1: subscribed, so the death the caller causes is reported. */
	if (vm_notify_wait_ready(nfd, 20000 * actrack_test_slowness())) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
out:
	close(nfd);
	unlink(notify);
	return pid;
}

/* Every thread's backtrace in @out (report of @pid) goes through its own
 * functions, innermost first, down to its start routine. */
static void bt_check_output(struct __test_metadata *_metadata, const char *out,
			    pid_t pid, bool log_main)
{
	static const char *const names[BT_THREADS + 1][4] = {
		{ "cond_level3", "cond_level2", "cond_level1", "bt_thread_main" },
		{ "read_level3", "read_level2", "read_level1", "bt_thread_main" },
		{ "spin_level3", "spin_level2", "spin_level1", "bt_thread_main" },
		{ "main_level3", "main_level2", "main_level1", "bt_victim_main" },
	};

	for (int k = 0; k <= BT_THREADS; k++) {
		char *block = bt_thread_block(out, pid, bt_sh->tid[k]);
		const char *at;

		ASSERT_NE(NULL, block) TH_LOG("no thread %d in:\n%s",
					      bt_sh->tid[k], out);
		if (log_main && k == BT_THREADS)
			TH_LOG("the main thread, as monitor printed it:\n%s",
			       block);
		at = strstr(block, "backtrace:");
		EXPECT_NE(NULL, at) TH_LOG("no backtrace in:\n%s", block);
		/* Innermost first, each below the one before. */
		for (int f = 0; at && f < 4; f++) {
			const char *hit = strstr(at, names[k][f]);

			EXPECT_NE(NULL, hit) TH_LOG("no %s after the %s in:\n%s",
						    names[k][f],
						    f ? names[k][f - 1] :
						    "backtrace", block);
			at = hit;
		}
		free(block);
	}
}

static void bt_run(struct __test_metadata *_metadata,
		   FIXTURE_DATA(bt) *self, enum bt_mode mode, int signo)
{
	struct actrack_death *d = NULL;
	int status, mon_out;
	char *out;
	pid_t mon;

	mon = bt_monitor_start(&mon_out);
	ASSERT_LT(0, mon);
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (!self->pid) {
		close(bt_go[1]);
		if (mode == BT_OOM && bt_join_cg(self->cg))
			_exit(5);
		bt_victim_main(mode);
	}
	close(bt_go[0]);
	ASSERT_EQ(BT_THREADS + 1, bt_wait_ready(BT_THREADS + 1, 20, 1000));
	/* Each is now in (or about to enter) its innermost function. */
	usleep(100000);
	if (mode == BT_KILL) {
		ASSERT_EQ(0, kill(self->pid, SIGKILL));
	} else {
		ASSERT_EQ(1, write(bt_go[1], "g", 1));
	}
	ASSERT_EQ(self->pid, waitpid(self->pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(signo, WTERMSIG(status));
	d = vm_wait_death(self->m, self->ds, self->pid, 10000);
	if (!d) {
		struct actrack_kstats st;

		if (!actrack_monitor_stats(self->m, &st))
			TH_LOG("module: reports sent %llu dropped %llu",
			       (unsigned long long)st.reports_sent,
			       (unsigned long long)st.reports_dropped);
	}
	ASSERT_NE(NULL, d) TH_LOG("no death report for %d", self->pid);
	self->pid = -1;
	EXPECT_EQ(signo, d->signal);
	EXPECT_EQ(0, d->flags & ACTRACK_DEATH_STACKS_CUT);
	ASSERT_EQ(BT_THREADS + 1, d->nr_stacks);
	for (uint32_t i = 0; i < d->nr_stacks; i++) {
		const struct actrack_death_stack *st = &d->stacks[i];
		int k;

		for (k = 0; k <= BT_THREADS; k++)
			if (bt_sh->tid[k] == (int)st->tid)
				break;
		EXPECT_LE(k, BT_THREADS) TH_LOG("stack of unknown tid %u",
						st->tid);
		EXPECT_EQ(0, st->flags & ACTRACK_STACK_UNREADABLE);
		EXPECT_EQ(st->sp, st->regs[7]);
		EXPECT_GT(st->size, 0);
		EXPECT_LE(st->size, bt_param("stack_bytes"));
	}

	/* The live report, as the monitor printed it. */
	ASSERT_EQ(mon, waitpid(mon, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	lseek(mon_out, 0, SEEK_SET);
	out = slurp_fd(mon_out);
	close(mon_out);
	ASSERT_NE(NULL, out);
	bt_check_output(_metadata, out, d->process.pid, mode == BT_SEGV);
	free(out);

	/* The kernel's ring has the same stacks for `monitor --recent`. */
	{
		char *argv[] = { "actrack", "monitor", "--recent", "--count",
				 "0", NULL };
		struct run r;

		ASSERT_EQ(0, run_cli(&r, NULL, argv));
		EXPECT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
		bt_check_output(_metadata, r.out, d->process.pid, false);
		run_free(&r);
	}
}

TEST_F_TIMEOUT(bt, sigkill, 120)
{
	VM_SETUP_SKIPPED();
	bt_run(_metadata, self, BT_KILL, SIGKILL);
}

TEST_F_TIMEOUT(bt, sigsegv, 120)
{
	VM_SETUP_SKIPPED();
	bt_run(_metadata, self, BT_SEGV, SIGSEGV);
}

TEST_F_TIMEOUT(bt, abort, 120)
{
	VM_SETUP_SKIPPED();
	bt_run(_metadata, self, BT_ABORT, SIGABRT);
}

TEST_F_TIMEOUT(bt, oom_kill, 180)
{
	int ret;

	VM_SETUP_SKIPPED();
	ret = bt_memcg(self->cg, sizeof(self->cg));
	if (ret)
		SKIP(return, "no memory cgroup: %s", strerror(-ret));
	bt_run(_metadata, self, BT_OOM, SIGKILL);
}

/* ---- the edges: a wild stack pointer, a small stack, 1,000 threads ---- */

static void *bt_small_main(void *arg)
{
	uint32_t t = actrack_push_task(200);

	bt_sink = read_level1(0);	/* bt_ready(1) */
	actrack_pop(t);
	return NULL;
}

/* Jumps away with the stack pointer at an unmapped page: SIGILL kills. */
static void *bt_wild_main(void *arg)
{
	char c;

	bt_ready(0);
	if (read(bt_go[0], &c, 1) != 1)
		_exit(3);
#ifdef __x86_64__
	__asm__ volatile("mov $0x1000, %%rsp\n\tud2" ::: "memory");
#endif
	abort();
}

/* A thread on a 5-page stack (PTHREAD_STACK_MIN is 4) under a PROT_NONE
 * page, and a wild one. */
NOINLINE static void bt_edges_main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	pthread_attr_t attr;
	pthread_t a, b;
	char *mem;

	setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
	actrack_thread_init("bt-edges");
	mem = mmap(NULL, 6 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || mprotect(mem + 5 * page, page, PROT_NONE))
		_exit(2);
	/* Nothing mapped right above it either: the copy must stop there. */
	pthread_attr_init(&attr);
	if (pthread_attr_setstack(&attr, mem, 5 * page) ||
	    pthread_create(&a, &attr, bt_small_main, NULL) ||
	    pthread_create(&b, NULL, bt_wild_main, NULL))
		_exit(2);
	bt_ready(BT_THREADS);
	pause();
	_exit(0);
}

TEST_F_TIMEOUT(bt, wild_sp_and_small_stack, 120)
{
	const struct actrack_death_stack *small = NULL, *wild = NULL;
	char *argv[] = { "actrack", "monitor", "--recent", "--count", "0",
			 NULL };
	long page = sysconf(_SC_PAGESIZE);
	struct actrack_death *d = NULL;
	char *block;
	struct run r;
	int status;

	VM_SETUP_SKIPPED();
#ifndef __x86_64__
	SKIP(return, "stacks are captured on x86-64 only");
#endif
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (!self->pid) {
		close(bt_go[1]);
		bt_edges_main();
	}
	close(bt_go[0]);
	ASSERT_EQ(3, bt_wait_ready(3, 20, 1000));
	usleep(100000);
	ASSERT_EQ(1, write(bt_go[1], "g", 1));
	ASSERT_EQ(self->pid, waitpid(self->pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGILL, WTERMSIG(status));
	d = vm_wait_death(self->m, self->ds, self->pid, 10000);
	ASSERT_NE(NULL, d);
	self->pid = -1;
	ASSERT_EQ(3, d->nr_stacks);
	for (uint32_t i = 0; i < d->nr_stacks; i++) {
		if (d->stacks[i].tid == (uint32_t)bt_sh->tid[0])
			wild = &d->stacks[i];
		if (d->stacks[i].tid == (uint32_t)bt_sh->tid[1])
			small = &d->stacks[i];
	}
	ASSERT_NE(NULL, wild);
	ASSERT_NE(NULL, small);
	/* Nothing readable at the sp: said, nothing copied. */
	EXPECT_EQ(0x1000, wild->sp);
	EXPECT_EQ(ACTRACK_STACK_UNREADABLE, wild->flags);
	EXPECT_EQ(0, wild->size);
	/* The copy ends at the PROT_NONE page, short of the cap. */
	EXPECT_EQ(0, small->flags);
	EXPECT_GT(small->size, 0);
	EXPECT_LT(small->size, 5 * page);
	EXPECT_EQ(0, (small->sp + small->size) % page);

	ASSERT_EQ(0, run_cli(&r, NULL, argv));
	EXPECT_EQ(0, r.status);
	block = bt_thread_block(r.out, d->process.pid, bt_sh->tid[0]);
	ASSERT_NE(NULL, block) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(block, "backtrace: none (the stack pointer "
				      "0x1000 was not readable)"))
		TH_LOG("%s", block);
	free(block);
	block = bt_thread_block(r.out, d->process.pid, bt_sh->tid[1]);
	ASSERT_NE(NULL, block);
	EXPECT_NE(NULL, strstr(block, "read_level3")) TH_LOG("%s", block);
	EXPECT_NE(NULL, strstr(block, "bt_small_main")) TH_LOG("%s", block);
	free(block);
	run_free(&r);
}

/* A process that made itself non-dumpable keeps its memory: no stack
 * copied, and the report says so. */
TEST_F_TIMEOUT(bt, not_dumpable_keeps_its_stack, 120)
{
	struct actrack_death *d = NULL;
	int status;

	VM_SETUP_SKIPPED();
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (!self->pid) {
		pthread_t t;

		if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
			_exit(2);
		actrack_thread_init("bt-private");
		actrack_push_task(400);
		if (pthread_create(&t, NULL, bt_thread_main, (void *)1))
			_exit(2);
		while (__atomic_load_n(&bt_sh->ready, __ATOMIC_SEQ_CST) < 1)
			usleep(1000);
		bt_ready(BT_THREADS);
		pause();
		_exit(0);
	}
	ASSERT_EQ(2, bt_wait_ready(2, 20, 1000));
	ASSERT_EQ(0, kill(self->pid, SIGKILL));
	ASSERT_EQ(self->pid, waitpid(self->pid, &status, 0));
	d = vm_wait_death(self->m, self->ds, self->pid, 10000);
	ASSERT_NE(NULL, d);
	self->pid = -1;
	EXPECT_EQ(SIGKILL, d->signal);
	EXPECT_EQ(0, d->nr_stacks);
	EXPECT_EQ(ACTRACK_DEATH_STACKS_PRIVATE, d->flags);
	/* The activities are still there: the process wrote them for us. */
	EXPECT_EQ(2, d->process.nr_threads);
}

#define BT_MANY		1000

static void *bt_many_main(void *arg)
{
	char c;

	actrack_push_task(300);
	__atomic_fetch_add(&bt_sh->ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		if (read(bt_block[0], &c, 1) == 0)
			break;
	return NULL;
}


/* 1,000 threads die at once: the report carries the first stack_threads
 * (16 by default) and says that the rest were cut.  On a slow kernel
 * (ACTRACK_SLOW_KERNEL, test_harness.h) the threads are divided by its
 * divisor, never fewer than four times the cap: on the PREEMPT_RT debug
 * kernel only 590 of 1,000 had started after two minutes. */
TEST_F_TIMEOUT(bt, thousand_threads_die_at_once, 300)
{
	long cap = bt_param("stack_threads"), bytes = bt_param("stack_bytes");
	struct actrack_death *d = NULL;
	int status, many;

	VM_SETUP_SKIPPED();
	ASSERT_LT(0, cap);
	ASSERT_LT(0, bytes);
	many = actrack_test_scaled(BT_MANY, 4 * (int)cap);
	ASSERT_LT(cap, many);
	TH_LOG("%d threads, stack_threads %ld", many, cap);
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (!self->pid) {
		pthread_attr_t attr;
		pthread_t t;

		actrack_thread_init("bt-many");
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 << 10);
		for (int i = 0; i < many; i++)
			if (pthread_create(&t, &attr, bt_many_main, NULL))
				_exit(2);
		pause();
		_exit(0);
	}
	ASSERT_EQ(many, bt_wait_ready(many, 120, 10000));
	ASSERT_EQ(0, kill(self->pid, SIGKILL));
	ASSERT_EQ(self->pid, waitpid(self->pid, &status, 0));
	d = vm_wait_death(self->m, self->ds, self->pid, 60000);
	ASSERT_NE(NULL, d);
	self->pid = -1;
	EXPECT_EQ(SIGKILL, d->signal);
	EXPECT_EQ(cap, d->nr_stacks);
	EXPECT_EQ(ACTRACK_DEATH_STACKS_CUT, d->flags & ACTRACK_DEATH_STACKS_CUT);
	for (uint32_t i = 0; i < d->nr_stacks; i++) {
		EXPECT_EQ(0, d->stacks[i].flags & ACTRACK_STACK_UNREADABLE);
		EXPECT_LE(d->stacks[i].size, bytes);
	}
}

TEST_HARNESS_MAIN
