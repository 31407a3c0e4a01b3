// SPDX-License-Identifier: MIT
/*
 * Real backtraces of live threads, the way eu-stack takes them: stop the
 * thread with ptrace, let elfutils' libdwfl unwind it from its registers
 * and stack with the DWARF CFI of its modules (.eh_frame, .debug_frame),
 * which is what unwinds code built without frame pointers, most of a
 * distribution, then let it go.
 *
 * Stopping.  libdwfl can attach by itself (dwfl_linux_proc_attach(...,
 * false)), but it uses PTRACE_ATTACH, which sends the thread a SIGSTOP: if
 * actrack is killed between the attach and the detach, the kernel detaches
 * it with that SIGSTOP still to be delivered and the whole process stops,
 * for good.  So we stop the thread ourselves with PTRACE_SEIZE +
 * PTRACE_INTERRUPT, which inject nothing (a killed tracer leaves its
 * tracees running), and tell libdwfl the thread is already stopped (true).
 * A signal that arrives while we hold the thread is handed back to it at
 * the detach.  One thread is stopped at a time, for the time of one unwind
 * (bounded by STACKS_MAX_FRAMES), and the wait for it to stop is bounded:
 * a thread in uninterruptible sleep (D) that does not stop in time is left
 * seized, which does not stop it; the kernel detaches it when we exit.
 *
 * Whom.  The arena is untrusted: a record may name any pid.  A thread is
 * only stopped if its process is still the one the arena names (pid and
 * start time), it runs as the uid the arena belongs to, and the tid is one
 * of its threads (checked again once it is stopped, against pid reuse).
 * The files its maps name are chosen by that process, so they are opened
 * as symbolize.c opens files: O_NONBLOCK (a FIFO must not hang us) and
 * regular files only.
 *
 * Symbols.  The frames are symbolized by symbolize.c, like activity
 * origins, from module records made here out of the live process's own
 * view (libdwfl's report of /proc/PID/maps: path, load bias, extent,
 * build-id), so a process that recorded no modules is symbolized too.  A
 * return address is looked up at pc - 1, the call instruction, so that
 * the function and line are those of the call and not of whatever follows
 * it (a noreturn call may be the last instruction of its function).
 */
#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include "cli.h"
#include "json.h"
#include "render.h"
#include "stacks.h"
#include "backtrace.h"
#include "symbolize.h"

/* How long a thread may take to stop after PTRACE_INTERRUPT. */
#define STACKS_STOP_WAIT_MS	1000
/* Distinct modules per process that frames are symbolized with. */
#define STACKS_MAX_MODULES	128
#define CAP_SYS_PTRACE_BIT	19

struct stack_thread {
	uint32_t pid, tid;
	uint64_t start_ticks;
	uint32_t proc;		/* index in stacks->procs */
	uint32_t nr_frames;
	bool collected;		/* stopped and unwound */
	bool truncated;		/* deeper than STACKS_MAX_FRAMES */
	char *error;		/* why no (or no more) frames, or NULL */
	struct bt_frame *frames;
};

/* The objects a live process has mapped, as module records for
 * symbolize.c (the arena's may be stale: dlclose, a newer binary). */
struct stack_proc {
	struct actrack_snap_module *modules;
	uint32_t nr_modules;
};

struct stacks {
	const struct actrack_snapshot *snap;
	const char *cmd;
	uint32_t nr, cap;
	struct stack_thread *threads;	/* sorted by stacks_collect() */
	uint32_t nr_procs;
	struct stack_proc *procs;
	uint32_t stopped;		/* threads stopped so far */
	uint32_t nr_lingering;		/* seized, never stopped in time */
	pid_t *lingering;
	bool sorted;
};

struct stacks *stacks_new(const struct actrack_snapshot *s, const char *cmd)
{
	struct stacks *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->snap = s;
	st->cmd = cmd;
	return st;
}

void stacks_free(struct stacks *st)
{
	if (!st)
		return;
	for (uint32_t i = 0; i < st->nr; i++) {
		free(st->threads[i].error);
		free(st->threads[i].frames);
	}
	for (uint32_t i = 0; i < st->nr_procs; i++)
		free(st->procs[i].modules);
	free(st->threads);
	free(st->procs);
	free(st->lingering);
	free(st);
}

int stacks_want(struct stacks *st, const struct actrack_snap_process *p,
		uint32_t tid)
{
	struct stack_thread *t;

	if (st->nr == st->cap) {
		uint32_t cap = st->cap ? 2 * st->cap : 16;
		void *n = realloc(st->threads, cap * sizeof(*st->threads));

		if (!n)
			return -ENOMEM;
		st->threads = n;
		st->cap = cap;
	}
	t = &st->threads[st->nr++];
	memset(t, 0, sizeof(*t));
	t->pid = p->pid;
	t->start_ticks = p->start_ticks;
	t->tid = tid;
	st->sorted = false;
	return 0;
}

static int thread_cmp(const void *x, const void *y)
{
	const struct stack_thread *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start_ticks != b->start_ticks)
		return a->start_ticks < b->start_ticks ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return 0;
}

static void set_error(struct stack_thread *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_error(struct stack_thread *t, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	free(t->error);
	t->error = s;
}

/* ---- /proc ---------------------------------------------------------- */

/*
 * The first number after @key in /proc/@pid/task/@tid/status (@tid 0: the
 * process's), or, for "State:", its letter.  Return: true if found.
 */
static bool status_field(pid_t pid, pid_t tid, const char *key, long *out)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	bool found = false;
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid,
			 tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *end;

		if (strncmp(line, key, klen))
			continue;
		if (!strcmp(key, "State:")) {
			const char *c = line + klen;

			while (*c == ' ' || *c == '\t')
				c++;
			*out = *c;
			found = *c != 0;
		} else {
			errno = 0;
			*out = strtol(line + klen, &end, 10);
			found = !errno && end != line + klen;
		}
		break;
	}
	fclose(f);
	return found;
}

static bool have_cap_sys_ptrace(void)
{
	char line[256];
	bool has = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "CapEff:", 7)) {
			unsigned long long caps = strtoull(line + 7, NULL, 16);

			has = caps & (1ULL << CAP_SYS_PTRACE_BIT);
			break;
		}
	}
	fclose(f);
	return has;
}

static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &scope) != 1)
		scope = -1;
	fclose(f);
	return scope;
}

static bool thread_exists(pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
	return !access(path, F_OK);
}

/*
 * Why ptrace refused (@err from PTRACE_SEIZE) to let us stop @tid of
 * @pid, in words a user can act on.  *@per_thread: the reason is this
 * thread's (already traced, exiting), not one that holds for every thread
 * of the process.
 */
static void explain_refusal(pid_t pid, pid_t tid, int err, char *buf,
			    size_t len, bool *per_thread)
{
	long tracer = 0, state = 0, uid = -1;
	uid_t me = geteuid();
	bool cap = have_cap_sys_ptrace();
	struct stat sb;
	char path[64];
	int scope;

	*per_thread = true;
	if (err == ESRCH) {
		snprintf(buf, len, "it exited");
		return;
	}
	if (err != EPERM && err != EACCES) {
		snprintf(buf, len, "ptrace: %s", strerror(err));
		return;
	}
	if (status_field(pid, tid, "TracerPid:", &tracer) && tracer > 0) {
		snprintf(buf, len, "ptrace: %s (it is already traced by "
			 "process %ld, a debugger?)", strerror(err), tracer);
		return;
	}
	if (status_field(pid, tid, "State:", &state) &&
	    (state == 'Z' || state == 'X')) {
		snprintf(buf, len, "ptrace: %s (it is exiting)",
			 strerror(err));
		return;
	}
	*per_thread = false;
	status_field(pid, 0, "Uid:", &uid);
	if (uid >= 0 && (uid_t)uid != me && !cap) {
		snprintf(buf, len, "ptrace: %s (it runs as uid %ld and you "
			 "are uid %u: ptrace needs the same uid or "
			 "CAP_SYS_PTRACE)", strerror(err), uid, (unsigned)me);
		return;
	}
	scope = yama_scope();
	if (scope >= 1 && !cap) {
		snprintf(buf, len, "ptrace: %s (kernel.yama.ptrace_scope is "
			 "%d: %s)", strerror(err), scope,
			 scope == 1 ? "only its ancestors, or a process it "
			 "names with prctl(PR_SET_PTRACER), may trace it; run "
			 "as root or with CAP_SYS_PTRACE, or set it to 0" :
			 scope == 2 ? "only CAP_SYS_PTRACE may trace it" :
			 "ptrace is disabled until reboot");
		return;
	}
	/* /proc/PID belongs to root when the process is not dumpable. */
	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (!cap && uid > 0 && !stat(path, &sb) && sb.st_uid == 0) {
		snprintf(buf, len, "ptrace: %s (it is not dumpable: a "
			 "set-user-ID program, or prctl(PR_SET_DUMPABLE, 0); "
			 "only CAP_SYS_PTRACE may trace it)", strerror(err));
		return;
	}
	snprintf(buf, len, "ptrace: %s (denied by the system: a seccomp "
		 "filter, a container without CAP_SYS_PTRACE, or a security "
		 "module)", strerror(err));
}

/* ---- stopping a thread ---------------------------------------------- */

static void sleep_1ms(void)
{
	struct timespec ts = { 0, 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Seize @tid and wait until it is in a ptrace stop.  *@deliver: the signal
 * it was about to take when it stopped (a signal-delivery stop), to be
 * given back at the detach.  Return: 0 when stopped; -ETIMEDOUT when it
 * did not stop in time (it stays seized, running: *@seized); -errno of
 * PTRACE_SEIZE (not traced), or -ESRCH when it exited.
 */
static int seize_stop(pid_t tid, int *deliver, bool *seized)
{
	int status;

	*deliver = 0;
	*seized = false;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL))
		return -errno;
	*seized = true;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL)) {
		*seized = false;	/* only fails if it is gone */
		return -ESRCH;
	}
	for (uint32_t ms = 0;; ms++) {
		pid_t r = waitpid(tid, &status, __WALL | WNOHANG);

		if (r == tid)
			break;
		if (r < 0 && errno != EINTR) {
			*seized = false;
			return -ESRCH;
		}
		if (ms >= STACKS_STOP_WAIT_MS)
			return -ETIMEDOUT;
		sleep_1ms();
	}
	if (!WIFSTOPPED(status)) {
		*seized = false;	/* exited: no longer traced */
		return -ESRCH;
	}
	/* Without options, the only event stop is PTRACE_EVENT_STOP (our
	 * interrupt, or a group stop): anything else is a signal. */
	if (!(status >> 16))
		*deliver = WSTOPSIG(status);
	return 0;
}

static void detach(pid_t tid, int deliver)
{
	/* ESRCH if it died meanwhile: nothing left to let go. */
	ptrace(PTRACE_DETACH, tid, NULL, (void *)(intptr_t)deliver);
}

static void linger(struct stacks *st, pid_t tid)
{
	pid_t *n = realloc(st->lingering,
			   (st->nr_lingering + 1) * sizeof(*n));

	if (!n)
		return;		/* released when we exit, as it is anyway */
	st->lingering = n;
	st->lingering[st->nr_lingering++] = tid;
}

/* Threads that did not stop in time: let go of those that stopped since. */
static void release_lingering(struct stacks *st)
{
	for (uint32_t i = 0; i < st->nr_lingering; i++) {
		int status;

		if (waitpid(st->lingering[i], &status, __WALL | WNOHANG) ==
		    st->lingering[i] && WIFSTOPPED(status))
			detach(st->lingering[i],
			       status >> 16 ? 0 : WSTOPSIG(status));
	}
	st->nr_lingering = 0;
}

/* ---- libdwfl -------------------------------------------------------- */

/*
 * find_elf for the modules of /proc/PID/maps: a path there is chosen by
 * the target, so it is opened as symbolize.c opens files.  Everything else
 * (the vDSO, deleted files) is read from the process by libdwfl.
 */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct stat sb;
	size_t len = strlen(name);
	int fd;

	if (name[0] != '/' ||
	    (len > 10 && !strcmp(name + len - 10, " (deleted)")))
		return dwfl_linux_proc_find_elf(mod, userdata, name, base,
						file_name, elfp);
	fd = open(name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -1;
	}
	*file_name = strdup(name);
	if (!*file_name) {
		close(fd);
		return -1;
	}
	return fd;
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = find_elf,
	/* Separate debug files by build-id or .gnu_debuglink. */
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct stack_thread *t = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	if (t->nr_frames == STACKS_MAX_FRAMES) {
		t->truncated = true;
		return DWARF_CB_ABORT;
	}
	t->frames[t->nr_frames++] = (struct bt_frame){ pc, activation };
	return DWARF_CB_OK;
}

/* A module record (symbolize.c's input) for @mod; false if unusable. */
static bool module_record(Dwfl_Module *mod, struct actrack_snap_module *r)
{
	const unsigned char *id;
	const char *name;
	Dwarf_Addr start, end, bias;
	GElf_Addr id_vaddr;
	int n;

	name = dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL,
				NULL);
	if (!name || name[0] != '/' || strlen(name) >= sizeof(r->path) ||
	    !dwfl_module_getelf(mod, &bias) || start < bias || end <= start)
		return false;
	memset(r, 0, sizeof(*r));
	r->base = bias;
	r->vaddr = start - bias;
	r->size = end - start;
	strcpy(r->path, name);
	n = dwfl_module_build_id(mod, &id, &id_vaddr);
	if (n > 0 && n <= ACTRACK_BUILD_ID_MAX) {
		memcpy(r->build_id, id, (size_t)n);
		r->build_id_size = (uint8_t)n;
	}
	return true;
}

/* The modules the frames of @t[0..@n) are in, as records of @sp. */
static void live_modules(Dwfl *dwfl, struct stack_proc *sp,
			 const struct stack_thread *t, uint32_t n)
{
	Dwfl_Module *seen[STACKS_MAX_MODULES];
	uint32_t nr = 0;

	sp->modules = calloc(STACKS_MAX_MODULES, sizeof(*sp->modules));
	if (!sp->modules)
		return;
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t k = 0; k < t[i].nr_frames; k++) {
			Dwfl_Module *mod = dwfl_addrmodule(dwfl,
					bt_lookup_pc(&t[i].frames[k]));
			uint32_t m;

			if (!mod)
				continue;
			for (m = 0; m < nr && seen[m] != mod; m++)
				;
			if (m < nr || nr == STACKS_MAX_MODULES)
				continue;
			seen[nr] = mod;
			if (module_record(mod, &sp->modules[sp->nr_modules]))
				sp->nr_modules++;
			nr++;
		}
	}
}

/* ---- collecting --------------------------------------------------------- */

/* Every thread of @t[0..@n) that has no reason yet gets this one. */
static void fail_rest(struct stack_thread *t, uint32_t n, const char *why)
{
	for (uint32_t i = 0; i < n; i++)
		if (!t[i].collected && !t[i].error)
			set_error(&t[i], "%s", why);
}

/*
 * libdwfl's view of process @pid: its modules from /proc/PID/maps, and
 * its threads, which the caller stops (true: libdwfl does not attach).
 * Return: the session, or NULL and @why.
 */
static Dwfl *open_process(pid_t pid, char *why, size_t len)
{
	Dwfl *dwfl = dwfl_begin(&proc_callbacks);
	int ret;

	if (!dwfl) {
		snprintf(why, len, "libdwfl: %s", dwfl_errmsg(-1));
		return NULL;
	}
	dwfl_report_begin(dwfl);
	ret = dwfl_linux_proc_report(dwfl, pid);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!ret)
		ret = dwfl_linux_proc_attach(dwfl, pid, true);
	if (ret) {
		if (ret > 0)
			snprintf(why, len, "reading /proc/%d: %s", pid,
				 strerror(ret));
		else
			snprintf(why, len, "libdwfl: %s", dwfl_errmsg(-1));
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

enum unwind_result {
	UNWIND_DONE,		/* frames, or this thread's reason */
	UNWIND_GIVE_UP,		/* a reason that holds for all its threads */
};

/*
 * Stop, unwind and let go of @t.  libdwfl's session of its process is made
 * (*@dwfl) once a first thread is stopped: ptrace decides who may look,
 * and a process none of whose threads can be stopped costs nothing more.
 */
static enum unwind_result unwind_one(struct stacks *st, Dwfl **dwfl,
				     struct stack_thread *t,
				     const struct actrack_snap_process *p)
{
	char why[512];
	bool seized, per_thread;
	int deliver, ret;

	if (st->stopped >= STACKS_MAX_THREADS) {
		set_error(t, "not collected: more than %u threads",
			  STACKS_MAX_THREADS);
		return UNWIND_DONE;
	}
	if (!thread_exists((pid_t)t->pid, (pid_t)t->tid)) {
		set_error(t, "thread no longer running");
		return UNWIND_DONE;
	}
	ret = seize_stop((pid_t)t->tid, &deliver, &seized);
	if (ret == -ETIMEDOUT) {
		linger(st, (pid_t)t->tid);
		set_error(t, "it did not stop within %u ms (uninterruptible "
			  "sleep?)", STACKS_STOP_WAIT_MS);
		return UNWIND_DONE;
	}
	if (ret) {
		explain_refusal((pid_t)t->pid, (pid_t)t->tid, -ret, why,
				sizeof(why), &per_thread);
		set_error(t, "%s", why);
		cli_errorf("%s: no backtrace of thread %u of process %u: %s",
			   st->cmd, t->tid, t->pid, why);
		return per_thread ? UNWIND_DONE : UNWIND_GIVE_UP;
	}
	st->stopped++;
	/* Stopped now: is it still a thread of the process the arena
	 * names, not a reused pid or tid? */
	if (!thread_exists((pid_t)t->pid, (pid_t)t->tid) ||
	    !cli_process_running(p)) {
		detach((pid_t)t->tid, deliver);
		set_error(t, "thread no longer running");
		return UNWIND_DONE;
	}
	if (!*dwfl) {
		*dwfl = open_process((pid_t)t->pid, why, sizeof(why));
		if (!*dwfl) {
			detach((pid_t)t->tid, deliver);
			set_error(t, "%s", why);
			cli_errorf("%s: no backtraces of process %u: %s",
				   st->cmd, t->pid, why);
			return UNWIND_GIVE_UP;
		}
	}
	t->frames = calloc(STACKS_MAX_FRAMES, sizeof(*t->frames));
	if (!t->frames) {
		detach((pid_t)t->tid, deliver);
		set_error(t, "out of memory");
		return UNWIND_DONE;
	}
	ret = dwfl_getthread_frames(*dwfl, (pid_t)t->tid, frame_cb, t);
	/* dwfl_errmsg() is libdwfl's static buffer: copied before anything
	 * else can fail. */
	if (ret < 0 && !t->truncated)
		set_error(t, "unwinding stopped: %s", dwfl_errmsg(-1));
	detach((pid_t)t->tid, deliver);
	t->collected = true;
	return UNWIND_DONE;
}

static void collect_process(struct stacks *st, struct stack_thread *t,
			    uint32_t n, struct stack_proc *sp)
{
	const struct actrack_snap_process *p = NULL;
	Dwfl *dwfl = NULL;
	char why[512];
	long uid = -1;

	for (uint32_t i = 0; i < st->snap->nr_processes; i++)
		if (st->snap->processes[i].pid == t[0].pid &&
		    st->snap->processes[i].start_ticks == t[0].start_ticks)
			p = &st->snap->processes[i];
	if (p && cli_process_foreign(p)) {
		fail_rest(t, n, "process of another pid namespace: not "
			  "stopped");
		return;
	}
	if (!p || !cli_process_running(p)) {
		fail_rest(t, n, "process no longer running");
		return;
	}
	if (t[0].pid == (uint32_t)getpid()) {
		fail_rest(t, n, "this is actrack itself");
		return;
	}
	/* A forged record may name anybody's process: only the arena
	 * owner's are stopped. */
	if (!status_field((pid_t)t[0].pid, 0, "Uid:", &uid) ||
	    uid != (long)st->snap->header.uid) {
		snprintf(why, sizeof(why), "process runs as uid %ld, the "
			 "arena belongs to uid %u: not stopped", uid,
			 st->snap->header.uid);
		cli_errorf("%s: no backtraces of process %u: %s", st->cmd,
			   t[0].pid, why);
		fail_rest(t, n, why);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		/* The others would be refused too, with the same message. */
		if (unwind_one(st, &dwfl, &t[i], p) == UNWIND_GIVE_UP) {
			fail_rest(t + i + 1, n - i - 1, t[i].error);
			break;
		}
	}
	if (dwfl) {
		live_modules(dwfl, sp, t, n);
		dwfl_end(dwfl);
	}
}

void stacks_collect(struct stacks *st)
{
	const char *why = NULL;
	uint32_t i = 0;

	qsort(st->threads, st->nr, sizeof(*st->threads), thread_cmp);
	st->sorted = true;
	if (!st->nr)
		return;
	free(st->procs);
	st->nr_procs = 0;
	st->procs = calloc(st->nr ? st->nr : 1, sizeof(*st->procs));
	if (!st->procs) {
		for (uint32_t k = 0; k < st->nr; k++)
			set_error(&st->threads[k], "out of memory");
		return;
	}
	/* Only processes of this machine, now, can be stopped. */
	if (cli_saved_image(st->snap))
		why = "a saved image: its processes are not stopped";
	else if (!cli_same_boot(st->snap))
		why = "the arena is from another boot";
	if (why) {
		cli_errorf("%s: no backtraces: %s", st->cmd, why);
		for (uint32_t k = 0; k < st->nr; k++)
			set_error(&st->threads[k], "%s", why);
		return;
	}
	while (i < st->nr) {
		uint32_t k = i + 1;

		while (k < st->nr && st->threads[k].pid == st->threads[i].pid &&
		       st->threads[k].start_ticks == st->threads[i].start_ticks)
			k++;
		for (uint32_t m = i; m < k; m++)
			st->threads[m].proc = st->nr_procs;
		collect_process(st, &st->threads[i], k - i,
				&st->procs[st->nr_procs++]);
		i = k;
	}
	release_lingering(st);
}

/* ---- output ------------------------------------------------------------- */

static const struct stack_thread *find(const struct stacks *st,
				       const struct actrack_snap_process *p,
				       uint32_t tid)
{
	struct stack_thread key = { .pid = p->pid,
				    .start_ticks = p->start_ticks,
				    .tid = tid };

	if (!st || !st->sorted || !st->nr)
		return NULL;
	return bsearch(&key, st->threads, st->nr, sizeof(*st->threads),
		       thread_cmp);
}

/* @t as the one backtrace shape (backtrace.h). */
static struct backtrace as_backtrace(const struct stack_thread *t)
{
	return (struct backtrace){
		.nr_frames = t->nr_frames, .truncated = t->truncated,
		.error = t->error, .frames = t->frames,
	};
}

void stacks_print(const struct stacks *st, struct symbolizer *sym, FILE *f,
		  const char *indent, const struct actrack_snap_process *p,
		  uint32_t tid)
{
	const struct stack_thread *t = find(st, p, tid);
	const struct stack_proc *live;
	struct backtrace bt;

	if (!t)
		return;
	live = &st->procs[t->proc];
	bt = as_backtrace(t);
	bt_print(&bt, sym, f, indent, live->modules, live->nr_modules);
}

void stacks_json(const struct stacks *st, struct symbolizer *sym,
		 struct json *j, const struct actrack_snap_process *p,
		 uint32_t tid)
{
	const struct stack_thread *t = find(st, p, tid);
	struct backtrace bt;

	if (!t) {
		json_null(j);
		return;
	}
	bt = as_backtrace(t);
	bt_json(&bt, sym, j, st->procs[t->proc].modules,
		st->procs[t->proc].nr_modules);
}
