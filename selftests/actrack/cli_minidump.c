// SPDX-License-Identifier: MIT
/*
 * A death report as a minidump (cli/minidump.c), read back by a real
 * reader: Debian's lldb.
 *
 * The report is made the way actrack.ko makes one, from a real process:
 * a tracked child stops itself three calls deep; the test takes its
 * registers (ptrace) and the bytes of its stack from sp to the end of the
 * stack's mapping (/proc/PID/mem), as the module's capture does, and its
 * process record (threads, modules with build ids, command line) from
 * the arena, as the report carries it.  `lldb -c FILE` must then show the
 * child's three frames, by name and in order, unwound from the bytes in
 * the file and the binaries lldb finds by the modules' paths and build
 * ids.  lldb is not in the test VM, so this test runs on the host
 * (skipped where lldb is missing).
 *
 * Also checked, by reading the file back here: a corrupt report (a thread
 * count with no threads, a stack whose size exceeds the format) is refused
 * or cut, never written out of bounds.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include "actrack.h"
#include "test_harness.h"
#include "cli.h"
#include "death_json.h"
#include "json.h"
#include "minidump.h"
#include "minidump_read.h"
#include "journal.h"
#include "journal_native.h"
#include "render.h"
#include "snapshot_helpers.h"
#include "symbolize.h"

/* The CLI's global options live in its main.c, which is not linked. */
struct cli_globals cli;

#define STACK_MAX	(64 * 1024)

static volatile int depth_sink;

static __attribute__((noinline)) void minidump_leaf(int n)
{
	depth_sink = n;
	raise(SIGSTOP);
	depth_sink = n + 1;
}

static __attribute__((noinline)) void minidump_mid(int n)
{
	minidump_leaf(n + 1);
	depth_sink = n;
}

static __attribute__((noinline)) void minidump_outer(int n)
{
	minidump_mid(n + 1);
	depth_sink = n;
}

static void child(void)
{
	if (actrack_init(NULL) || !actrack_push_task(4711))
		_exit(2);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(3);
	minidump_outer(1);
	_exit(0);
}

/* The registers in the report's (DWARF) order, from ptrace's. */
static void dwarf_regs(const struct user_regs_struct *u, uint64_t *r)
{
	const unsigned long long v[ACTRACK_STACK_NR_REGS] = {
		u->rax, u->rdx, u->rcx, u->rbx, u->rsi, u->rdi, u->rbp,
		u->rsp, u->r8, u->r9, u->r10, u->r11, u->r12, u->r13,
		u->r14, u->r15, u->rip,
	};

	for (int i = 0; i < ACTRACK_STACK_NR_REGS; i++)
		r[i] = v[i];
}

/* The end of the mapping that holds @sp in /proc/@pid/maps, or 0. */
static uint64_t mapping_end(pid_t pid, uint64_t sp)
{
	unsigned long long lo, hi;
	uint64_t end = 0;
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
		    sp >= lo && sp < hi)
			end = hi;
	fclose(f);
	return end;
}

/* The child's stack at sp, as the module copies it. */
static int read_stack(pid_t pid, struct actrack_death_stack *s)
{
	uint64_t end = mapping_end(pid, s->sp);
	char path[64];
	ssize_t n;
	FILE *f;

	if (!end)
		return -1;
	s->size = end - s->sp > STACK_MAX ? STACK_MAX : end - s->sp;
	s->bytes = malloc(s->size);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	f = fopen(path, "r");
	if (!f || !s->bytes)
		return -1;
	n = pread(fileno(f), s->bytes, s->size, (off_t)s->sp);
	fclose(f);
	return n == (ssize_t)s->size ? 0 : -1;
}

FIXTURE(dump) {
	pid_t pid;
	struct actrack_snapshot *snap;
	struct actrack_death d;
	struct actrack_death_stack stack;
	char dir[64], file[256];
};

FIXTURE_SETUP(dump)
{
	struct user_regs_struct u;
	int status;

	memset(&self->d, 0, sizeof(self->d));
	strcpy(self->dir, "/tmp/actrack-minidump-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (!self->pid)
		child();
	ASSERT_EQ(self->pid, waitpid(self->pid, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status)) TH_LOG("child status %#x", status);
	ASSERT_EQ(SIGSTOP, WSTOPSIG(status));
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, self->pid, NULL, &u));
	self->stack.tid = self->pid;
	self->stack.sp = u.rsp;
	dwarf_regs(&u, self->stack.regs);
	ASSERT_EQ(0, read_stack(self->pid, &self->stack));
	ASSERT_EQ(0, actrack_snapshot_take(NULL, 0, &self->snap));
	for (uint32_t i = 0; i < self->snap->nr_processes; i++)
		if (self->snap->processes[i].pid == (uint32_t)self->pid)
			self->d.process = self->snap->processes[i];
	ASSERT_EQ((uint32_t)self->pid, self->d.process.pid);
	ASSERT_LT(0, self->d.process.nr_modules);
	self->d.uid = getuid();
	self->d.seq = 7;
	self->d.signal = SIGSEGV;
	self->d.nr_stacks = 1;
	self->d.stacks = &self->stack;
}

FIXTURE_TEARDOWN(dump)
{
	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
	if (self->file[0])
		unlink(self->file);
	rmdir(self->dir);
	actrack_snapshot_free(self->snap);
	free(self->stack.bytes);
}

/* `lldb -b -c FILE -o 'bt all'`'s output in @out. */
static int lldb_backtrace(const char *file, char *out, size_t len)
{
	char cmd[512];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "lldb -b -c '%s' -o 'thread backtrace all'"
		 " 2>&1", file);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	return pclose(p);
}

/* lldb reads minidump @file: the child's three frames, by name, innermost
 * first, and the signal. */
static void expect_lldb_frames(struct __test_metadata *_metadata,
			       const char *file)
{
	static char out[65536];
	const char *leaf, *mid, *outer;

	ASSERT_EQ(0, lldb_backtrace(file, out, sizeof(out)))
		TH_LOG("%s", out);
	leaf = strstr(out, "minidump_leaf");
	mid = strstr(out, "minidump_mid");
	outer = strstr(out, "minidump_outer");
	ASSERT_NE(NULL, leaf) TH_LOG("%s", out);
	ASSERT_NE(NULL, mid) TH_LOG("%s", out);
	ASSERT_NE(NULL, outer) TH_LOG("%s", out);
	EXPECT_LT(leaf, mid);
	EXPECT_LT(mid, outer);
	EXPECT_NE(NULL, strstr(out, "stop reason = signal SIGSEGV"));
}

TEST_F(dump, lldb_shows_the_frames_by_name_in_order)
{
	if (system("command -v lldb >/dev/null 2>&1"))
		SKIP(return, "lldb is not installed (apt-get install lldb)");
	ASSERT_EQ(0, minidump_save(self->dir, &self->d, "a report",
				   self->file, sizeof(self->file)));
	expect_lldb_frames(_metadata, self->file);
}

/* The monitor's two renderings of a journal entry (cmd_monitor.c's). */
static void entry_text(FILE *f, const struct actrack_death *d,
		       const char *source)
{
	render_death_text(f, NULL, d, source);
}

static void entry_json(FILE *f, const struct actrack_death *d,
		       const char *source)
{
	struct json j;

	json_init(&j, f, 0);
	render_death_json(&j, NULL, d, source);
	json_finish(&j);
}

#define JOURNAL_REMOTE	"/lib/systemd/systemd-journal-remote"

/*
 * The journal path, with lldb at its end: the monitor's journal writer
 * (journal_send_death(), with the stacks: --journal-stacks) sends the
 * death to a journal socket bound here, systemd-journal-remote makes a
 * journal file of the entry, and the real `actrack deaths export
 * --minidump` writes the file lldb reads.  Only the module's capture is
 * replaced (by ptrace, as above): vm_minidump runs the real monitor on
 * a real death in the VM, which has no lldb.
 */
TEST_F(dump, lldb_reads_the_export_of_the_journal_entry)
{
	struct entry *e = calloc(1, sizeof(*e));
	char jf[128], opt[160], pid[16], file[256];
	char *argv[] = { "actrack", "deaths", "export", "--minidump", "-o",
			 self->dir, opt, pid, NULL };
	struct run r = { 0 };
	int sock;

	ASSERT_NE(NULL, e);
	if (system("command -v lldb >/dev/null 2>&1"))
		SKIP(return, "lldb is not installed (apt-get install lldb)");
	if (access(JOURNAL_REMOTE, X_OK))
		SKIP(return, "no %s", JOURNAL_REMOTE);
	if (geteuid())
		SKIP(return, "needs root (a mount namespace)");
	sock = journal_socket_bind();
	ASSERT_LE(0, sock) TH_LOG("%s", strerror(-sock));
	ASSERT_EQ(0, journal_send_death(&self->d, "live", entry_text,
					entry_json, NULL, true));
	ASSERT_LT(0, journal_entry_recv(sock, e, 10000));
	close(sock);
	snprintf(jf, sizeof(jf), "%s/e.journal", self->dir);
	ASSERT_EQ(0, journal_entry_to_file(e, 1700000000000000ULL,
					   JOURNAL_REMOTE, jf));
	snprintf(opt, sizeof(opt), "--file=%s", jf);
	snprintf(pid, sizeof(pid), "%d", self->pid);
	ASSERT_EQ(0, run_cli(&r, NULL, argv));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	snprintf(file, sizeof(file), "%.*s", (int)strcspn(r.out, "\n"),
		 r.out);
	run_free(&r);
	free(e);
	expect_lldb_frames(_metadata, file);
	unlink(file);
	unlink(jf);
	strcat(jf, ".export");
	unlink(jf);
}

/*
 * Breakpad's minidump_stackwalk, from the npm package "minidump" that
 * scripts/setup installs (prebuilt, into ~/.cache/actrack/npm; or
 * $ACTRACK_MINIDUMP_STACKWALK): the path of the binary, or NULL.
 */
static const char *stackwalk_path(char *buf, size_t len)
{
	const char *env = getenv("ACTRACK_MINIDUMP_STACKWALK");
	const char *home = getenv("HOME");

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else if (home)
		snprintf(buf, len, "%s/.cache/actrack/npm/node_modules/"
			 "minidump/bin/linux-x64/minidump_stackwalk", home);
	else
		return NULL;
	return access(buf, X_OK) ? NULL : buf;
}

/*
 * A Breakpad symbol store in @dir for the modules of @p, made by the
 * package's dump_syms next to @tool (CFI and function names, as a crash
 * server's store holds them): DIR/NAME/ID/NAME.sym, ID and NAME from
 * the file's MODULE line.  Return: how many modules it holds.
 */
static int symbol_store(const char *tool, const char *dir,
			const struct actrack_snap_process *p)
{
	char cmd[8800];
	int n = 0;

	for (uint32_t i = 0; i < p->nr_modules; i++) {
		snprintf(cmd, sizeof(cmd), "f=$(mktemp) && '%.*sdump_syms' "
			 "'%s' >\"$f\" 2>/dev/null && set -- $(head -n1 "
			 "\"$f\") && mkdir -p '%s'/\"$5/$4\" && mv \"$f\" "
			 "'%s'/\"$5/$4/$5.sym\" || { rm -f \"$f\"; exit 1; }",
			 (int)(strrchr(tool, '/') + 1 - tool), tool,
			 p->modules[i].path, dir, dir);
		n += !system(cmd);
	}
	return n;
}

/*
 * How many of minidump_leaf, _mid, _outer, in that order and one after
 * the other, Breakpad named in thread 0's frames of `minidump_stackwalk
 * -m` @out ("0|FRAME|MODULE|FUNCTION|...").
 */
static int three_calls_in_order(const char *out)
{
	static const char *const fn[] = { "minidump_leaf", "minidump_mid",
					  "minidump_outer" };
	const char *l = out;
	int found = 0;

	for (; l && *l && found < 3; l = strchr(l, '\n'), l = l ? l + 1 : l) {
		char mod[300], name[300];
		unsigned int frame;

		if (sscanf(l, "0|%u|%299[^|]|%299[^|]|", &frame, mod,
			   name) != 3)
			continue;
		if (!strcmp(name, fn[found]))
			found++;
		else if (found)
			break;		/* not one after the other */
	}
	return found;
}

/* What the crash servers' processor makes of the file: `-m` prints one
 * '|'-separated line per fact ("Crash|SIGSEGV|...", "Module|...",
 * "0|FRAME|..."). */
TEST_F(dump, breakpad_stackwalk_reads_signal_modules_and_frames)
{
	static char out[1 << 17];
	char tool[4096], cmd[8300], want[300], syms[128];
	const char *exe;
	size_t n;
	FILE *p;

	if (!stackwalk_path(tool, sizeof(tool)))
		SKIP(return, "Breakpad's minidump_stackwalk is not installed "
		     "(scripts/setup puts npm's minidump package in "
		     "~/.cache/actrack/npm)");
	ASSERT_EQ(0, minidump_save(self->dir, &self->d, "a report",
				   self->file, sizeof(self->file)));
	/* The test binary's and libc's symbols at least: the frames'. */
	snprintf(syms, sizeof(syms), "%s/symbols", self->dir);
	EXPECT_LE(2, symbol_store(tool, syms, &self->d.process));
	snprintf(cmd, sizeof(cmd), "'%s' -m '%s' '%s' 2>/dev/null", tool,
		 self->file, syms);
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	ASSERT_EQ(0, pclose(p)) TH_LOG("%s", out);
	/* The signal, the faulting thread (0), the OS. */
	EXPECT_NE(NULL, strstr(out, "OS|Linux|")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "CPU|amd64|"));
	EXPECT_NE(NULL, strstr(out, "Crash|SIGSEGV"));
	/* The test binary among the modules, with its build id's code. */
	exe = strrchr(self->d.process.modules[0].path, '/');
	exe = exe ? exe + 1 : self->d.process.modules[0].path;
	snprintf(want, sizeof(want), "Module|%s|", exe);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	/* Thread 0's frames, unwound from the file's stack by Breakpad's
	 * stack walker with the store's CFI, and named by it: the three
	 * calls, innermost first, as actrack names them. */
	EXPECT_EQ(3, three_calls_in_order(out)) TH_LOG("%s", out);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", syms);
	EXPECT_EQ(0, system(cmd));
}

/* actrack's own unwinder names the same frames from the same report. */
TEST_F(dump, actrack_names_the_same_frames)
{
	struct symbolizer *sym = sym_new();
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const char *leaf, *mid, *outer;

	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, render_death_text(f, sym, &self->d, "live"));
	fclose(f);
	sym_free(sym);
	leaf = strstr(text, "minidump_leaf");
	mid = strstr(text, "minidump_mid");
	outer = strstr(text, "minidump_outer");
	EXPECT_NE(NULL, leaf) TH_LOG("%s", text);
	EXPECT_NE(NULL, mid);
	EXPECT_NE(NULL, outer);
	EXPECT_LT(leaf, mid);
	EXPECT_LT(mid, outer);
	free(text);
}

TEST_F(dump, name_says_uid_report_and_pid)
{
	char want[256];

	ASSERT_EQ(0, minidump_save(self->dir, &self->d, NULL, self->file,
				   sizeof(self->file)));
	snprintf(want, sizeof(want), "%s/actrack-%u-7-%d.dmp", self->dir,
		 getuid(), self->pid);
	EXPECT_STREQ(want, self->file);
	EXPECT_EQ(0, access(self->file, R_OK));
}

TEST_F(dump, report_without_threads_is_refused)
{
	struct minidump_host h = { "6.1.0", 2, 0, NULL };
	uint8_t *buf = NULL;
	size_t len = 0;

	self->d.process.nr_threads = 0;
	EXPECT_EQ(-EINVAL, minidump_build(&self->d, &h, NULL, &buf, &len));
	EXPECT_EQ(NULL, buf);
}

TEST_F(dump, exception_and_command_line_are_where_the_format_says)
{
	struct minidump_host h = { "6.1.0-42-amd64", 2, 1234, NULL };
	uint32_t rva, size;
	uint8_t *buf;
	size_t len;

	ASSERT_EQ(0, minidump_build(&self->d, &h, "t", &buf, &len));
	EXPECT_EQ(9, md_u32(buf + 8));		/* streams */
	EXPECT_EQ(1234, md_u32(buf + 20));	/* time stamp */
	/* The exception: SIGSEGV, in our thread. */
	ASSERT_TRUE(md_stream(buf, len, 6, &rva, &size));
	EXPECT_EQ(168, size);
	EXPECT_EQ((uint32_t)self->pid, md_u32(buf + rva));
	EXPECT_EQ(SIGSEGV, md_u32(buf + rva + 8));
	/* The command line, byte for byte. */
	ASSERT_TRUE(md_stream(buf, len, 0x47670006U, &rva, &size));
	EXPECT_EQ(strlen(self->d.process.cmdline), size);
	EXPECT_EQ(0, memcmp(buf + rva, self->d.process.cmdline, size));
	/* The system: x86-64 (9), Linux (0x8201), 6.1.0. */
	ASSERT_TRUE(md_stream(buf, len, 7, &rva, &size));
	EXPECT_EQ(9, buf[rva] | buf[rva + 1] << 8);
	EXPECT_EQ(0x8201, md_u32(buf + rva + 20));
	EXPECT_EQ(6, md_u32(buf + rva + 8));
	EXPECT_EQ(1, md_u32(buf + rva + 12));
	free(buf);
}

/* /proc/PID/maps from the module list: the first module's pages. */
TEST_F(dump, maps_are_the_modules_pages)
{
	const struct actrack_snap_module *m = &self->d.process.modules[0];
	struct minidump_host h = { "6.1.0", 2, 0, NULL };
	uint64_t lo = (m->base + m->vaddr) & ~4095ULL;
	uint64_t hi = (m->base + m->vaddr + m->size + 4095) & ~4095ULL;
	char want[4200];
	uint32_t rva, size;
	uint8_t *buf;
	size_t len;
	int n;

	ASSERT_EQ(0, minidump_build(&self->d, &h, NULL, &buf, &len));
	ASSERT_TRUE(md_stream(buf, len, 0x47670009U, &rva, &size));
	n = snprintf(want, sizeof(want), "%08llx-%08llx r-xp 00000000 "
		     "00:00 0 %s\n", (unsigned long long)lo,
		     (unsigned long long)hi, m->path);
	ASSERT_LE((uint32_t)n, size);
	EXPECT_EQ(0, memcmp(buf + rva, want, n)) TH_LOG("%.*s", n, buf + rva);
	EXPECT_EQ('\n', buf[rva + size - 1]);
	free(buf);
}

/* A thread listed without a stack says why: the report's flags, else
 * the source's reason. */
TEST_F(dump, a_thread_without_stack_says_why)
{
	struct actrack_snap_thread *t = self->d.process.threads;
	uint32_t nr = self->d.process.nr_threads;
	struct minidump_host h = { "6.1.0", 2, 0, NULL };
	char key[64], val[256];
	uint8_t *buf;
	size_t len;

	ASSERT_EQ(1, nr);
	self->d.process.threads = calloc(2, sizeof(*t));
	ASSERT_NE(NULL, self->d.process.threads);
	self->d.process.threads[0] = t[0];
	self->d.process.threads[1].tid = self->pid + 1000000;
	self->d.process.nr_threads = 2;
	snprintf(key, sizeof(key), "actrack.thread.%d.no_stack",
		 self->pid + 1000000);

	ASSERT_EQ(0, minidump_build(&self->d, &h, NULL, &buf, &len));
	ASSERT_TRUE(md_annotation(buf, len, key, val, sizeof(val)));
	EXPECT_STREQ("not captured: the report holds no stack of this "
		     "thread", val);
	/* The thread with a stack has no such annotation. */
	snprintf(key, sizeof(key), "actrack.thread.%d.no_stack", self->pid);
	EXPECT_FALSE(md_annotation(buf, len, key, val, sizeof(val)));
	free(buf);

	self->d.flags = ACTRACK_DEATH_STACKS_CUT;
	snprintf(key, sizeof(key), "actrack.thread.%d.no_stack",
		 self->pid + 1000000);
	ASSERT_EQ(0, minidump_build(&self->d, &h, NULL, &buf, &len));
	ASSERT_TRUE(md_annotation(buf, len, key, val, sizeof(val)));
	EXPECT_STREQ("cut: over the module's stack_threads or stack_slots",
		     val);
	free(buf);

	h.no_stack = "the journal keeps no registers or stack bytes";
	ASSERT_EQ(0, minidump_build(&self->d, &h, NULL, &buf, &len));
	ASSERT_TRUE(md_annotation(buf, len, key, val, sizeof(val)));
	EXPECT_STREQ(h.no_stack, val);
	free(buf);
	free(self->d.process.threads);
	self->d.process.threads = t;
	self->d.process.nr_threads = nr;
}

/*
 * deaths export reads back the JSON report monitor --json wrote (and the
 * journal keeps): the same process, threads, modules and build ids, the
 * fatal record, but no stack.
 */
static const char *const no_element[] = {
	"{\"process.modules[].path\": \"/x\"}",
	"{\"process.threads[].tid\": 7}",
	"{\"process\": {\"modules[].base\": 1}}",
	"{\"process\": {\"threads[].name\": \"t\"}}",
};

TEST_F(dump, the_json_report_reads_back_as_the_same_death)
{
	const struct actrack_snap_process *p = &self->d.process, *q;
	struct symbolizer *sym = sym_new();
	struct actrack_death back;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct json j;

	ASSERT_NE(NULL, f);
	self->d.process.threads[0].fatal_signo = SIGSEGV;
	self->d.process.threads[0].fatal_code = -6;
	self->d.process.threads[0].fatal_addr = 0xdeadbeef;
	self->d.flags = ACTRACK_DEATH_STACKS_CUT;
	json_init(&j, f, 0);
	EXPECT_EQ(0, render_death_json(&j, sym, &self->d, "live"));
	EXPECT_EQ(0, json_finish(&j));
	fclose(f);
	sym_free(sym);
	ASSERT_EQ(0, death_from_json(text, len, &back)) TH_LOG("%s", text);
	q = &back.process;
	EXPECT_EQ(7, back.seq);
	EXPECT_EQ(getuid(), back.uid);
	EXPECT_EQ(SIGSEGV, back.signal);
	EXPECT_EQ(ACTRACK_DEATH_STACKS_CUT, back.flags);
	EXPECT_EQ(0, back.nr_stacks);
	EXPECT_EQ(p->pid, q->pid);
	EXPECT_STREQ(p->cmdline, q->cmdline);
	ASSERT_EQ(p->nr_threads, q->nr_threads);
	for (uint32_t i = 0; i < p->nr_threads; i++) {
		EXPECT_EQ(p->threads[i].tid, q->threads[i].tid);
		EXPECT_STREQ(p->threads[i].name, q->threads[i].name);
		EXPECT_EQ(p->threads[i].fatal_signo, q->threads[i].fatal_signo);
		EXPECT_EQ(p->threads[i].fatal_code, q->threads[i].fatal_code);
		EXPECT_EQ(p->threads[i].fatal_addr, q->threads[i].fatal_addr);
	}
	ASSERT_EQ(p->nr_modules, q->nr_modules);
	for (uint32_t i = 0; i < p->nr_modules; i++) {
		const struct actrack_snap_module *a = &p->modules[i];
		const struct actrack_snap_module *b = &q->modules[i];

		EXPECT_STREQ(a->path, b->path);
		EXPECT_EQ(a->base, b->base);
		EXPECT_EQ(a->size, b->size);
		EXPECT_EQ(a->vaddr, b->vaddr);
		ASSERT_EQ(a->build_id_size, b->build_id_size);
		EXPECT_EQ(0, memcmp(a->build_id, b->build_id,
				    a->build_id_size));
	}
	/* Not JSON, or no process: refused. */
	death_json_free(&back);
	EXPECT_EQ(-EBADMSG, death_from_json("{\"seq\": 1}", 11, &back));
	death_json_free(&back);
	EXPECT_EQ(-EBADMSG, death_from_json(text, len - 2, &back));
	death_json_free(&back);
	EXPECT_EQ(-EBADMSG, death_from_json("{\"process\": {\"threads\": "
					    "[1]}}", 28, &back));
	death_json_free(&back);
	/* Keys that spell a member of an element none of which exists (the
	 * export fuzzer's find: an element before the first, read). */
	for (size_t i = 0; i < sizeof(no_element) / sizeof(no_element[0]);
	     i++) {
		EXPECT_EQ(-EBADMSG, death_from_json(no_element[i],
						    strlen(no_element[i]),
						    &back)) TH_LOG("%s",
								   no_element[i]);
		death_json_free(&back);
	}
	free(text);
}

/* A thread known only by a stack bigger than the format can hold. */
TEST_F(dump, stack_beyond_the_format_is_refused_not_overrun)
{
	struct minidump_host h = { NULL, 0, 0, NULL };
	uint8_t *buf = NULL;
	size_t len = 0;

	self->stack.size = UINT32_MAX;
	EXPECT_EQ(-EFBIG, minidump_build(&self->d, &h, NULL, &buf, &len));
	EXPECT_EQ(NULL, buf);
}

TEST_HARNESS_MAIN
