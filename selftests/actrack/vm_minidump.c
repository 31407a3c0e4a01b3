// SPDX-License-Identifier: MIT
/*
 * A death's minidump from the journal, end to end: actrack.ko copies each
 * dying thread's registers and stack, the real `actrack monitor
 * --journal-stacks` writes the report to the journal with them
 * (ACTRACK_STACKS), and the real `actrack deaths export --minidump` turns
 * the entry into a dump whose every thread has its context and its stack.
 *
 * The VM has no journald: the test binds the journal's socket itself
 * (journal_native.h), receives the monitor's entry (a large one comes as
 * a memfd, as libsystemd sends it), and turns it into a journal file with
 * systemd-journal-remote, as cli_deaths does on the host (scripts/vmtest
 * puts it in the VM when the host has it; skipped otherwise).
 *
 * The victim is a child of this binary: two threads blocked three calls
 * deep (a condition variable, a read) and the main thread, killed with
 * SIGKILL or crashing with SIGSEGV three calls deep.  The dump's thread
 * list must hold all three, each with CONTEXT_AMD64 | CONTROL | INTEGER,
 * its rsp equal to its stack's start and its stack bytes; the entry's
 * text (actrack's own unwinder, in the monitor) must name each thread's
 * three functions.  lldb is not in the VM: each dump is handed to the
 * host (ACTRACK_VM_EXPORT, scripts/vm-init) with the frames actrack
 * printed for each thread and the signal, and after the VM,
 * scripts/vmtest-host-vm_minidump runs lldb on it and asserts them.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include "vm_util.h"
#include "snapshot_helpers.h"	/* run_cli */
#include "journal_native.h"
#include "minidump_read.h"

#define JOURNAL_REMOTE	"/lib/systemd/systemd-journal-remote"
#define MD_THREADS	3		/* main and two */

struct md_shared {
	int tid[MD_THREADS];		/* [0]: main */
	int ready;
};

static struct md_shared *md_sh;
static int md_go[2], md_block[2];
static pthread_mutex_t md_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t md_c = PTHREAD_COND_INITIALIZER;
static volatile int md_sink;

static void md_ready(int slot)
{
	__atomic_store_n(&md_sh->tid[slot], (int)syscall(SYS_gettid),
			 __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&md_sh->ready, 1, __ATOMIC_SEQ_CST);
}

/* NAME_level2 and NAME_level1 above NAME_level3, no tail calls. */
#define MD_CALLERS(name)						\
	NOINLINE static int name##_level2(int x)			\
	{								\
		int r = name##_level3(x);				\
									\
		md_sink = r;						\
		return r + 1;						\
	}								\
									\
	NOINLINE static int name##_level1(int x)			\
	{								\
		int r = name##_level2(x);				\
									\
		md_sink = r;						\
		return r + 1;						\
	}								\
	NOINLINE static int name##_level1(int x)

NOINLINE static int mdcond_level3(int x)
{
	md_ready(1);
	pthread_mutex_lock(&md_m);
	for (;;)
		pthread_cond_wait(&md_c, &md_m);
	return x;
}

MD_CALLERS(mdcond);

NOINLINE static int mdread_level3(int x)
{
	char c = 0;

	md_ready(2);
	for (;;)
		if (read(md_block[0], &c, 1) == 0)
			break;
	return x + c;
}

MD_CALLERS(mdread);

NOINLINE static int mdmain_level3(int segv)
{
	volatile char *p = NULL;
	char c = 0;

	md_ready(0);
	if (read(md_go[0], &c, 1) != 1)
		_exit(3);
	if (segv)
		*p = 1;
	else
		pause();
	return c;
}

MD_CALLERS(mdmain);

static void *md_thread(void *arg)
{
	md_sink = arg ? mdread_level1(2) : mdcond_level1(1);
	return NULL;
}

static void md_victim(int segv)
{
	pthread_t t;

	setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
	if (actrack_init(NULL) || !actrack_push_task(4711))
		_exit(2);
	if (pthread_create(&t, NULL, md_thread, NULL) ||
	    pthread_create(&t, NULL, md_thread, (void *)1))
		_exit(2);
	md_sink = mdmain_level1(segv);
	_exit(0);
}

FIXTURE(md) {
	int sock;
	pid_t pid;
	char dir[64];
	struct entry *e;
	struct run r;
};

FIXTURE_SETUP(md)
{
	self->sock = -1;
	self->pid = -1;
	self->dir[0] = '\0';
	self->e = NULL;
	memset(&self->r, 0, sizeof(self->r));
	VM_REQUIRE_MODULE();
	if (geteuid() != 0)
		SKIP(return, "needs root (a mount namespace)");
	if (access(JOURNAL_REMOTE, X_OK))
		SKIP(return, "no %s (systemd-journal-remote) in this VM",
		     JOURNAL_REMOTE);
	self->sock = journal_socket_bind();
	ASSERT_LE(0, self->sock);
	self->e = calloc(1, sizeof(*self->e));
	ASSERT_NE(NULL, self->e);
	md_sh = mmap(NULL, sizeof(*md_sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, md_sh);
#ifndef __x86_64__
	/* ACTRACK_DEATH_STACKS_UNSUPPORTED: nothing to export.  (After the
	 * mapping: a skip before it leaves md_sh NULL in every path that
	 * gcc -m32 can see, and it warns of each use.) */
	SKIP(return, "the module captures no stacks of a 32-bit process");
#endif
	ASSERT_EQ(0, pipe(md_go));
	ASSERT_EQ(0, pipe(md_block));
	snprintf(self->dir, sizeof(self->dir), "/tmp/actrack-vmmd-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(md)
{
	char cmd[128];

	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
	if (self->sock >= 0)
		close(self->sock);
	if (self->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", self->dir);
	}
	free(self->e);
	run_free(&self->r);
	if (md_sh && md_sh != MAP_FAILED)
		munmap(md_sh, sizeof(*md_sh));
}

/*
 * `actrack monitor --journal-stacks`, subscribed (READY=1) and writing to
 * our socket: *@mon, or -1.  Live, not --recent: the ring of recent
 * deaths holds the whole suite's, and rendering each of them (their
 * backtraces) takes minutes under TCG.
 */
static int md_monitor_start(pid_t *mon)
{
	char notify[108];
	int nfd, ret;

	nfd = vm_notify_open(notify, sizeof(notify));
	if (nfd < 0)
		return -1;
	*mon = fork();
	if (*mon < 0) {
		close(nfd);
		return -1;
	}
	if (!*mon) {
		char *argv[] = { "actrack", "monitor", "--journal-stacks",
				 "--timeout", "600", NULL };
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		if (setenv("NOTIFY_SOCKET", notify, 1))
			_exit(126);
		execv(cli_path(), argv);
		_exit(127);
	}
	ret = vm_notify_wait_ready(nfd, 60000 * actrack_test_slowness());
	close(nfd);
	unlink(notify);
	return ret ? -1 : 0;
}

/*
 * The victim dies (@segv: SIGSEGV, else SIGKILL) while a monitor writes
 * every death to our socket; the victim's entry is kept in self->e.
 * Return 0 or -1.
 */
static int md_die_and_log(FIXTURE_DATA(md) *self, int segv)
{
	uint64_t end = actrack_test_mono_ns() +
		       60000000000ULL * actrack_test_slowness();
	char buf[32];
	pid_t mon = -1;
	int st, ret = -1;

	self->pid = fork();
	if (self->pid < 0)
		return -1;
	if (!self->pid)
		md_victim(segv);
	while (__atomic_load_n(&md_sh->ready, __ATOMIC_SEQ_CST) < MD_THREADS)
		usleep(10000);
	if (md_monitor_start(&mon))
		goto out;
	if (segv) {
		if (write(md_go[1], "g", 1) != 1)
			goto out;
	} else {
		kill(self->pid, SIGKILL);
	}
	if (waitpid(self->pid, &st, 0) != self->pid)
		goto out;
	self->pid = -1;
	while (ret && actrack_test_mono_ns() < end)
		if (journal_entry_recv(self->sock, self->e, 2000) > 0 &&
		    field(self->e, "ACTRACK_PID", buf, sizeof(buf)) &&
		    atoi(buf) == md_sh->tid[0])
			ret = 0;
out:
	if (mon > 0) {
		kill(mon, SIGTERM);
		waitpid(mon, &st, 0);
	}
	return ret;
}

/* The entry as Journal Export Format, a journal file made of it, and
 * the export of its death.  Return the dump (free it) and its length. */
static uint8_t *md_export(FIXTURE_DATA(md) *self, size_t *len)
{
	char jf[128], opt[160], dump[160], pid[16];
	uint8_t *buf = NULL;
	struct stat st;
	int fd;

	snprintf(jf, sizeof(jf), "%s/e.journal", self->dir);
	if (journal_entry_to_file(self->e, (uint64_t)time(NULL) * 1000000ULL,
				  JOURNAL_REMOTE, jf))
		return NULL;
	snprintf(opt, sizeof(opt), "--file=%s", jf);
	snprintf(pid, sizeof(pid), "%d", md_sh->tid[0]);
	{
		char *argv[] = { "actrack", "deaths", "export", "--minidump",
				 "-o", self->dir, opt, pid, NULL };

		run_free(&self->r);
		if (run_cli(&self->r, NULL, argv) || self->r.status) {
			fprintf(stderr, "export: %s\n",
				self->r.err ? self->r.err : "");
			return NULL;
		}
	}
	snprintf(dump, sizeof(dump), "%.*s", (int)strcspn(self->r.out, "\n"),
		 self->r.out);
	fd = open(dump, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		return NULL;
	buf = malloc(st.st_size);
	if (buf && pread(fd, buf, st.st_size, 0) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	*len = st.st_size;
	return buf;
}

/* The lines of thread @tid's block of the text report @msg. */
static char *md_block_of(const char *msg, int tid)
{
	char head[48];
	const char *t, *end;

	snprintf(head, sizeof(head), "\n  thread %d ", tid);
	t = strstr(msg, head);
	if (!t)
		return NULL;
	end = strstr(t + 1, "\n  thread ");
	return strndup(t, end ? (size_t)(end - t) : strlen(t));
}

static const char *const md_names[MD_THREADS] = {
	"mdmain", "mdcond", "mdread",
};

/*
 * For the host (scripts/vm-init's ACTRACK_VM_EXPORT, when set): the dump
 * as @name.dmp and, as @name.expect, what lldb must show in it: the
 * thread of the exception and its signal, then each thread's three
 * functions, innermost first, as actrack's text named them.
 */
static int md_hand_to_host(const char *name, const uint8_t *buf, size_t len,
			   const char *sig)
{
	const char *dir = getenv("ACTRACK_VM_EXPORT");
	char path[256];
	FILE *f;
	int bad;

	if (!dir)
		return 0;
	snprintf(path, sizeof(path), "%s/%s.dmp", dir, name);
	f = fopen(path, "we");
	if (!f)
		return -1;
	bad = fwrite(buf, 1, len, f) != len;
	if (fclose(f) || bad)
		return -1;
	snprintf(path, sizeof(path), "%s/%s.expect", dir, name);
	f = fopen(path, "we");
	if (!f)
		return -1;
	fprintf(f, "signal %d %s\n", md_sh->tid[0], sig);
	for (int k = 0; k < MD_THREADS; k++)
		fprintf(f, "thread %d %s_level3 %s_level2 %s_level1\n",
			md_sh->tid[k], md_names[k], md_names[k], md_names[k]);
	return fclose(f);
}

static void md_verify(struct __test_metadata *_metadata,
		     FIXTURE_DATA(md) *self, int sig, const char *name)
{
	static char msg[ENTRY_MAX];
	uint32_t rva, size, list;
	uint8_t *buf;
	size_t len = 0;

	ASSERT_NE(NULL, field(self->e, "ACTRACK_STACKS", msg, sizeof(msg)));
	ASSERT_NE(NULL, field(self->e, "ACTRACK_KERNEL", msg, sizeof(msg)));
	buf = md_export(self, &len);
	ASSERT_NE(NULL, buf);
	ASSERT_TRUE(md_check(buf, len));
	ASSERT_TRUE(md_stream(buf, len, 6, &rva, &size));
	EXPECT_EQ((uint32_t)sig, md_u32(buf + rva + 8));
	if (sig == SIGSEGV)
		EXPECT_EQ((uint32_t)md_sh->tid[0], md_u32(buf + rva));
	ASSERT_TRUE(md_stream(buf, len, 3, &list, &size));
	ASSERT_EQ(MD_THREADS, md_u32(buf + list));
	ASSERT_EQ(4 + MD_THREADS * 48, size);
	ASSERT_NE(NULL, field(self->e, "MESSAGE", msg, sizeof(msg)));
	for (int k = 0; k < MD_THREADS; k++) {
		const uint8_t *t = NULL;
		uint32_t ctx, ssz, srva;
		uint64_t sp, rsp;
		char fn[48], *blk;

		for (uint32_t i = 0; i < MD_THREADS; i++)
			if (md_u32(buf + list + 4 + 48 * i) ==
			    (uint32_t)md_sh->tid[k])
				t = buf + list + 4 + 48 * i;
		ASSERT_NE(NULL, t) TH_LOG("tid %d not listed", md_sh->tid[k]);
		memcpy(&sp, t + 24, 8);
		ssz = md_u32(t + 32);
		srva = md_u32(t + 36);
		ctx = md_u32(t + 44);
		ASSERT_LE((size_t)ctx + 1232, len);
		EXPECT_EQ(0x00100003U, md_u32(buf + ctx + 0x30));
		memcpy(&rsp, buf + ctx + 0x98, 8);
		EXPECT_EQ(sp, rsp);
		EXPECT_LT(0, ssz) TH_LOG("tid %d: no stack", md_sh->tid[k]);
		EXPECT_LE((size_t)srva + ssz, len);
		/* actrack's own unwinder named its three functions. */
		blk = md_block_of(msg, md_sh->tid[k]);
		ASSERT_NE(NULL, blk) TH_LOG("%s", msg);
		for (int l = 3; l >= 1; l--) {
			snprintf(fn, sizeof(fn), " %s_level%d", md_names[k],
				 l);
			EXPECT_NE(NULL, strstr(blk, fn)) TH_LOG("%s", blk);
		}
		free(blk);
	}
	EXPECT_EQ(0, md_hand_to_host(name, buf, len,
				     sig == SIGSEGV ? "SIGSEGV" : "SIGKILL"))
		TH_LOG("%s: %s", getenv("ACTRACK_VM_EXPORT"), strerror(errno));
	free(buf);
}

TEST_F_TIMEOUT(md, sigkill_threads_blocked_in_nested_calls, 120)
{
	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, md_die_and_log(self, 0)) TH_LOG("no entry");
	md_verify(_metadata, self, SIGKILL, "sigkill");
}

TEST_F_TIMEOUT(md, sigsegv_three_calls_deep, 120)
{
	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, md_die_and_log(self, 1)) TH_LOG("no entry");
	md_verify(_metadata, self, SIGSEGV, "sigsegv");
}

TEST_HARNESS_MAIN
