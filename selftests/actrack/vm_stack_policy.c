// SPDX-License-Identifier: MIT
/*
 * Stacks at death reach a reader only where it could have read them
 * itself, and only what a core dump would hold (docs/trust.md).
 *
 * The victim (uid 1000, dumpable) has three threads: main, blocked in a
 * read; "dd", whose stack is a mapping of its own with an MADV_DONTDUMP
 * page directly above it holding a secret; "sec", with a secret in a
 * buffer on its stack.  The subscriber is another uid-1000 process, a
 * sibling of the victim (not an ancestor), that Yama's ptrace_scope 1
 * keeps from reading the victim's memory.  The test process itself is
 * root, a reader holding CAP_SYS_PTRACE.
 */
#include <sys/prctl.h>
#include <sys/uio.h>
#include "vm_util.h"

#define USER_A		1000
#define DD_STACK_SIZE	(64 * 1024)
#define YAMA_SCOPE	"/proc/sys/kernel/yama/ptrace_scope"
#define WAIT_MS		60000

/* A 32-bit build (make m32) runs 32-bit threads: not captured, flagged. */
#ifdef __i386__
#define NATIVE_STACKS	0
#else
#define NATIVE_STACKS	1
#endif
#define REQUIRE_NATIVE()						\
	do {								\
		if (!NATIVE_STACKS)					\
			SKIP(return, "32-bit threads: no stacks to "	\
			     "deliver (thirty_two_bit_threads_are_flagged)"); \
	} while (0)

/* Built at run time, so that only the threads' memory holds them. */
static const char secret_stack[] = "sTaCk-SeCrEt-4e1d9a7c";
static const char secret_dd[] = "dOnTdUmP-SeCrEt-83b2f0";

/* What the victim tells the test once its stacks are in place. */
struct victim_info {
	int32_t err;		/* 0, or the step that failed */
	uint32_t pad;
	uint64_t dd_base;	/* the dd thread's stack mapping ... */
	uint64_t dd_top;	/* ... and where the DONTDUMP page starts */
};

/* What one reader saw in the victim's report. */
struct seen {
	int32_t err;		/* 0, or the step that failed (subscriber) */
	int32_t readv_errno;	/* process_vm_readv() of the victim */
	uint32_t got;		/* 1: the report arrived */
	uint32_t flags;		/* ACTRACK_DEATH_* */
	int32_t exit_code, signal;
	uint32_t nr_stacks;
	uint32_t stack_secrets;	/* stacks holding secret_stack */
	uint32_t dd_secrets;	/* stacks holding secret_dd */
	uint32_t dd_flags;	/* ACTRACK_STACK_* of the dd thread's stack */
	uint64_t dd_end;	/* sp + size of the dd thread's stack */
	/* The same report replayed from the kernel's ring (GET_DEATHS) */
	uint32_t rec_got, rec_flags, rec_nr_stacks, rec_secrets;
};

struct want {
	uint32_t pid;
	uint64_t dd_base, dd_top;
	struct seen s;
};

static void note_death(const struct actrack_death *d, void *arg)
{
	struct want *w = arg;
	uint32_t i;

	if (d->process.pid != w->pid || w->s.got)
		return;
	w->s.got = 1;
	w->s.flags = d->flags;
	w->s.exit_code = d->exit_code;
	w->s.signal = d->signal;
	w->s.nr_stacks = d->nr_stacks;
	for (i = 0; i < d->nr_stacks; i++) {
		const struct actrack_death_stack *st = &d->stacks[i];

		if (memmem(st->bytes, st->size, secret_stack,
			   sizeof(secret_stack) - 1))
			w->s.stack_secrets++;
		if (memmem(st->bytes, st->size, secret_dd,
			   sizeof(secret_dd) - 1))
			w->s.dd_secrets++;
		if (st->sp >= w->dd_base && st->sp < w->dd_top) {
			w->s.dd_flags = st->flags;
			w->s.dd_end = st->sp + st->size;
		}
	}
}

/* Dispatch until @w's report came or the deadline passed. */
static void wait_report(struct actrack_monitor *m, struct want *w)
{
	uint64_t end = actrack_test_mono_ns() + (uint64_t)WAIT_MS * 1000000ULL;

	while (!w->s.got) {
		uint64_t now = actrack_test_mono_ns();
		int ret;

		if (now >= end)
			return;
		ret = actrack_monitor_dispatch(m, (int)((end - now) / 1000000)
					       + 1, note_death, w);
		if (ret < 0 && ret != -EINTR && ret != -ENOBUFS)
			return;
	}
}

/* The report of @w->pid replayed from the ring: its stacks and flags. */
static void note_recent(struct actrack_monitor *m, struct want *w)
{
	struct want r = { .pid = w->pid, .dd_base = w->dd_base,
			  .dd_top = w->dd_top };

	if (actrack_monitor_recent(m, note_death, &r) < 0)
		return;
	w->s.rec_got = r.s.got;
	w->s.rec_flags = r.s.flags;
	w->s.rec_nr_stacks = r.s.nr_stacks;
	w->s.rec_secrets = r.s.stack_secrets + r.s.dd_secrets;
}

/* Read exactly @n bytes within the deadline.  Return 0 or -errno. */
static int read_all(int fd, void *buf, size_t n)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char *b = buf;

	while (n) {
		ssize_t r;

		if (poll(&p, 1, WAIT_MS) <= 0)
			return -ETIMEDOUT;
		r = read(fd, b, n);
		if (r <= 0)
			return r ? -errno : -EPIPE;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int become_user(void)
{
	if (setgid(USER_A) || setuid(USER_A))
		return -1;
	/* Changing credentials made us non-dumpable: a plain process is. */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* ---------------------------------------------------------------------- */
/* The victim                                                              */
/* ---------------------------------------------------------------------- */

static int victim_ready = -1;

static void *dd_thread(void *arg)
{
	char *page = arg;
	size_t i;

	for (i = 0; i < sizeof(secret_dd); i++)
		((volatile char *)page)[i] = secret_dd[i];
	if (write(victim_ready, "a", 1) != 1)
		_exit(120);
	for (;;)
		pause();
	return NULL;
}

static void *sec_thread(void *arg)
{
	volatile char buf[64];
	size_t i;

	(void)arg;
	for (i = 0; i < sizeof(secret_stack); i++)
		buf[i] = secret_stack[i];
	/* The buffer escapes: its bytes stay on the stack. */
	__asm__ volatile("" : : "r"(buf) : "memory");
	if (write(victim_ready, "b", 1) != 1)
		_exit(121);
	for (;;)
		pause();
	return NULL;
}

struct victim_cfg {
	bool set_policy;
	uint32_t policy;	/* ACTRACK_STACKS_* */
	pid_t reader;
};

static void victim_main(const struct victim_cfg *cfg, int info_fd, int go)
{
	struct actrack_opts o = { .sz = sizeof(o) };
	struct victim_info vi = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	pthread_attr_t attr;
	unsigned char cmd;
	pthread_t t;
	char c, *base;
	int ready[2];

	unsetenv(ACTRACK_ENV_ARENA);
	if (become_user())
		vi.err = 1;
	else if (actrack_init(&o) ||
		 actrack_backend() != ACTRACK_BACKEND_MODULE)
		vi.err = 2;
	else if (cfg->set_policy &&
		 actrack_stack_policy(cfg->policy, cfg->reader))
		vi.err = 3;
	if (vi.err || pipe(ready))
		goto out;
	victim_ready = ready[1];
	base = mmap(NULL, DD_STACK_SIZE + page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED ||
	    madvise(base + DD_STACK_SIZE, page, MADV_DONTDUMP)) {
		vi.err = 4;
		goto out;
	}
	vi.dd_base = (uintptr_t)base;
	vi.dd_top = (uintptr_t)base + DD_STACK_SIZE;
	if (pthread_attr_init(&attr) ||
	    pthread_attr_setstack(&attr, base, DD_STACK_SIZE) ||
	    pthread_create(&t, &attr, dd_thread, base + DD_STACK_SIZE) ||
	    pthread_create(&t, NULL, sec_thread, NULL) ||
	    read(ready[0], &c, 1) != 1 || read(ready[0], &c, 1) != 1)
		vi.err = 5;
out:
	if (write(info_fd, &vi, sizeof(vi)) != sizeof(vi) || vi.err)
		_exit(122);
	if (read(go, &cmd, 1) == 1 && cmd == 'x')
		exit(0);
	for (;;)
		pause();
}

/* ---------------------------------------------------------------------- */
/* The subscriber: same uid, the victim's sibling                          */
/* ---------------------------------------------------------------------- */

static void subscriber_main(int ready_fd, int cmd_fd, int out_fd)
{
	struct actrack_monitor *m = NULL;
	struct victim_info vi;
	struct want w = { 0 };
	struct iovec local, remote;
	char buf[8];

	if (become_user())
		w.s.err = 1;
	else if (actrack_monitor_open(0, &m))
		w.s.err = 2;
	if (write(ready_fd, "r", 1) != 1)
		_exit(130);
	if (read_all(cmd_fd, &w.pid, sizeof(w.pid)) ||
	    read_all(cmd_fd, &vi, sizeof(vi))) {
		w.s.err = 3;
		goto out;
	}
	w.dd_base = vi.dd_base;
	w.dd_top = vi.dd_top;
	/* What the kernel lets us read of the victim ourselves. */
	local = (struct iovec){ buf, sizeof(buf) };
	remote = (struct iovec){ (void *)(uintptr_t)vi.dd_base, sizeof(buf) };
	w.s.readv_errno = process_vm_readv((pid_t)w.pid, &local, 1, &remote,
					   1, 0) < 0 ? errno : 0;
	if (write(ready_fd, "p", 1) != 1)
		_exit(131);
	if (m) {
		wait_report(m, &w);
		note_recent(m, &w);
	}
out:
	if (write(out_fd, &w.s, sizeof(w.s)) != sizeof(w.s))
		_exit(132);
	_exit(0);
}

/* ---------------------------------------------------------------------- */

FIXTURE(stacks) {
	struct actrack_monitor *m;
	char old_scope[16];
};

static int write_scope(const char *v)
{
	int fd = open(YAMA_SCOPE, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		ret = -errno;
	close(fd);
	return ret;
}

FIXTURE_SETUP(stacks)
{
	int fd;
	ssize_t n;

	self->m = NULL;
	self->old_scope[0] = 0;
	VM_REQUIRE_MODULE();
	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids and set ptrace_scope");
	fd = open(YAMA_SCOPE, O_RDONLY);
	if (fd < 0)
		SKIP(return, "%s: %s: Yama is not active in this kernel",
		     YAMA_SCOPE, strerror(errno));
	n = read(fd, self->old_scope, sizeof(self->old_scope) - 1);
	close(fd);
	ASSERT_LT(0, n);
	self->old_scope[n] = 0;
	ASSERT_EQ(0, actrack_monitor_open(ACTRACK_MONITOR_ALL_UIDS, &self->m));
}

FIXTURE_TEARDOWN(stacks)
{
	if (self->m)
		actrack_monitor_close(self->m);
	if (self->old_scope[0])
		write_scope(self->old_scope);
}

struct run {
	const char *scope;	/* Yama's ptrace_scope for the run */
	struct victim_cfg cfg;
	bool name_subscriber;	/* the victim names the subscriber */
	bool clean_exit;	/* exit(0) instead of SIGKILL */
	struct victim_info vi;
	struct seen sub;	/* what the sibling saw */
	struct seen root;	/* what root (CAP_SYS_PTRACE) saw */
};

static int wait_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Start the subscriber, then the victim, kill it (or let it exit) and
 * collect what both readers saw.  Return 0, or the failed step (then no
 * child is left behind).
 */
static int run_case(struct actrack_monitor *m, struct run *r)
{
	int sub_ready[2], sub_cmd[2], sub_out[2], v_info[2], v_go[2];
	pid_t sub = -1, victim = -1;
	struct want w = { 0 };
	int step = 0;
	char c;

	if (write_scope(r->scope))
		return 1;
	if (pipe2(sub_ready, O_CLOEXEC) || pipe2(sub_cmd, O_CLOEXEC) ||
	    pipe2(sub_out, O_CLOEXEC) || pipe2(v_info, O_CLOEXEC) ||
	    pipe2(v_go, O_CLOEXEC))
		return 2;
	sub = fork();
	if (sub == 0)
		subscriber_main(sub_ready[1], sub_cmd[0], sub_out[1]);
	if (sub < 0 || read_all(sub_ready[0], &c, 1)) {
		step = 3;
		goto out;
	}
	if (r->name_subscriber)
		r->cfg.reader = sub;
	victim = fork();
	if (victim == 0)
		victim_main(&r->cfg, v_info[1], v_go[0]);
	if (victim < 0 || read_all(v_info[0], &r->vi, sizeof(r->vi))) {
		step = 4;
		goto out;
	}
	if (r->vi.err) {
		step = 10 + r->vi.err;
		goto out;
	}
	w.pid = (uint32_t)victim;
	w.dd_base = r->vi.dd_base;
	w.dd_top = r->vi.dd_top;
	if (write(sub_cmd[1], &w.pid, sizeof(w.pid)) != sizeof(w.pid) ||
	    write(sub_cmd[1], &r->vi, sizeof(r->vi)) != sizeof(r->vi) ||
	    read_all(sub_ready[0], &c, 1)) {
		step = 5;
		goto out;
	}
	if (r->clean_exit) {
		if (write(v_go[1], "x", 1) != 1 || wait_exit(victim) != 0)
			step = 6;
	} else if (kill(victim, SIGKILL) ||
		   wait_exit(victim) != 128 + SIGKILL) {
		step = 7;
	}
	victim = -1;
	if (step)
		goto out;
	if (read_all(sub_out[0], &r->sub, sizeof(r->sub)) || wait_exit(sub))
		step = 8;
	sub = -1;
	if (!step) {
		wait_report(m, &w);
		note_recent(m, &w);
		r->root = w.s;
	}
out:
	if (victim > 0) {
		kill(victim, SIGKILL);
		waitpid(victim, NULL, 0);
	}
	if (sub > 0) {
		kill(sub, SIGKILL);
		waitpid(sub, NULL, 0);
	}
	close(sub_ready[0]);
	close(sub_ready[1]);
	close(sub_cmd[0]);
	close(sub_cmd[1]);
	close(sub_out[0]);
	close(sub_out[1]);
	close(v_info[0]);
	close(v_info[1]);
	close(v_go[0]);
	close(v_go[1]);
	return step;
}

/* Yama scope 1: a same-uid sibling gets neither secret, and is told why. */
TEST_F_TIMEOUT(stacks, sibling_gets_no_stacks_under_yama, 180)
{
	struct run r = { .scope = "1" };

	VM_SETUP_SKIPPED();
	REQUIRE_NATIVE();
	ASSERT_EQ(0, run_case(self->m, &r));
	/* The kernel refuses it the victim's memory everywhere else ... */
	ASSERT_EQ(0, r.sub.err);
	ASSERT_EQ(EPERM, r.sub.readv_errno);
	/* ... and so does its report. */
	ASSERT_EQ(1, r.sub.got);
	ASSERT_EQ(SIGKILL, r.sub.signal);
	ASSERT_EQ(0, r.sub.nr_stacks);
	ASSERT_EQ(0, r.sub.stack_secrets);
	ASSERT_EQ(0, r.sub.dd_secrets);
	ASSERT_EQ(ACTRACK_DEATH_STACKS_WITHHELD,
		  r.sub.flags & ACTRACK_DEATH_STACKS_WITHHELD);
	/* Nor when it asks the kernel's ring of recent deaths. */
	ASSERT_EQ(1, r.sub.rec_got);
	ASSERT_EQ(0, r.sub.rec_nr_stacks);
	ASSERT_EQ(0, r.sub.rec_secrets);
	ASSERT_EQ(ACTRACK_DEATH_STACKS_WITHHELD,
		  r.sub.rec_flags & ACTRACK_DEATH_STACKS_WITHHELD);
	/* Root holds CAP_SYS_PTRACE: all three threads, not the DONTDUMP
	 * page, and the dd thread's copy ends exactly at its mapping's end. */
	ASSERT_EQ(1, r.root.got);
	ASSERT_EQ(3, r.root.nr_stacks);
	ASSERT_EQ(0, r.root.flags & ACTRACK_DEATH_STACKS_WITHHELD);
	ASSERT_EQ(1, r.root.stack_secrets);
	ASSERT_EQ(0, r.root.dd_secrets);
	ASSERT_EQ(0, r.root.dd_flags);
	ASSERT_EQ(r.vi.dd_top, r.root.dd_end);
	ASSERT_EQ(1, r.root.rec_got);
	ASSERT_EQ(3, r.root.rec_nr_stacks);
	ASSERT_EQ(1, r.root.rec_secrets);
	ASSERT_EQ(0, r.root.rec_flags & ACTRACK_DEATH_STACKS_WITHHELD);
}

/* Yama scope 1: the process named the subscriber, as PR_SET_PTRACER. */
TEST_F_TIMEOUT(stacks, named_reader_gets_stacks_but_not_dontdump, 180)
{
	struct run r = { .scope = "1", .name_subscriber = true,
			 .cfg = { .set_policy = true } };

	VM_SETUP_SKIPPED();
	REQUIRE_NATIVE();
	ASSERT_EQ(0, run_case(self->m, &r));
	ASSERT_EQ(0, r.sub.err);
	ASSERT_EQ(1, r.sub.got);
	ASSERT_EQ(3, r.sub.nr_stacks);
	ASSERT_EQ(0, r.sub.flags & ACTRACK_DEATH_STACKS_WITHHELD);
	ASSERT_EQ(1, r.sub.stack_secrets);
	ASSERT_EQ(0, r.sub.dd_secrets);
	ASSERT_EQ(0, r.sub.dd_flags);
	ASSERT_EQ(r.vi.dd_top, r.sub.dd_end);
	ASSERT_EQ(1, r.sub.rec_got);
	ASSERT_EQ(3, r.sub.rec_nr_stacks);
	ASSERT_EQ(1, r.sub.rec_secrets);
	ASSERT_EQ(3, r.root.nr_stacks);
	ASSERT_EQ(0, r.root.dd_secrets);
}

/* Scope 0: the classic ptrace rule (same uid, dumpable) lets the sibling
 * have the stacks; still never the DONTDUMP page. */
TEST_F_TIMEOUT(stacks, sibling_gets_stacks_with_classic_ptrace, 180)
{
	struct run r = { .scope = "0" };

	VM_SETUP_SKIPPED();
	REQUIRE_NATIVE();
	ASSERT_EQ(0, run_case(self->m, &r));
	ASSERT_EQ(0, r.sub.err);
	ASSERT_EQ(0, r.sub.readv_errno);
	ASSERT_EQ(1, r.sub.got);
	ASSERT_EQ(3, r.sub.nr_stacks);
	ASSERT_EQ(0, r.sub.flags & ACTRACK_DEATH_STACKS_WITHHELD);
	ASSERT_EQ(1, r.sub.stack_secrets);
	ASSERT_EQ(0, r.sub.dd_secrets);
	ASSERT_EQ(r.vi.dd_top, r.sub.dd_end);
}

/* A clean exit() ships no stacks of the threads it ends ... */
TEST_F_TIMEOUT(stacks, clean_exit_carries_no_stacks, 180)
{
	struct run r = { .scope = "1", .clean_exit = true };

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, run_case(self->m, &r));
	ASSERT_EQ(1, r.root.got);
	ASSERT_EQ(0, r.root.signal);
	ASSERT_EQ(0, r.root.exit_code);
	ASSERT_EQ(0, r.root.nr_stacks);
	ASSERT_EQ(0, r.root.flags & ACTRACK_DEATH_STACKS_WITHHELD);
	ASSERT_EQ(1, r.sub.got);
	ASSERT_EQ(0, r.sub.nr_stacks);
	ASSERT_EQ(0, r.sub.flags & ACTRACK_DEATH_STACKS_WITHHELD);
}

/* ... unless the process asked for them: its two other threads'. */
TEST_F_TIMEOUT(stacks, clean_exit_with_opt_in_carries_stacks, 180)
{
	struct run r = { .scope = "1", .clean_exit = true,
			 .cfg = { .set_policy = true,
				  .policy = ACTRACK_STACKS_ON_EXIT } };

	VM_SETUP_SKIPPED();
	REQUIRE_NATIVE();
	ASSERT_EQ(0, run_case(self->m, &r));
	ASSERT_EQ(1, r.root.got);
	ASSERT_EQ(0, r.root.exit_code);
	ASSERT_EQ(2, r.root.nr_stacks);
	ASSERT_EQ(1, r.root.stack_secrets);
	ASSERT_EQ(0, r.root.dd_secrets);
	ASSERT_EQ(r.vi.dd_top, r.root.dd_end);
	/* The unnamed sibling still gets none under scope 1. */
	ASSERT_EQ(0, r.sub.nr_stacks);
	ASSERT_EQ(ACTRACK_DEATH_STACKS_WITHHELD,
		  r.sub.flags & ACTRACK_DEATH_STACKS_WITHHELD);
}

/* 32-bit threads get no stack, and the report says so. */
TEST_F_TIMEOUT(stacks, thirty_two_bit_threads_are_flagged, 180)
{
	struct run r = { .scope = "0" };

	VM_SETUP_SKIPPED();
	if (NATIVE_STACKS)
		SKIP(return, "64-bit threads: only a 32-bit build (make m32) "
		     "runs this case");
	ASSERT_EQ(0, run_case(self->m, &r));
	ASSERT_EQ(1, r.root.got);
	ASSERT_EQ(0, r.root.nr_stacks);
	ASSERT_EQ(ACTRACK_DEATH_STACKS_UNSUPPORTED,
		  r.root.flags & ACTRACK_DEATH_STACKS_UNSUPPORTED);
	ASSERT_EQ(0, r.root.flags & ACTRACK_DEATH_STACKS_WITHHELD);
}

/* A policy naming nobody that exists, or with unknown flags, is refused. */
TEST_F(stacks, policy_arguments_are_checked)
{
	pid_t pid;

	VM_SETUP_SKIPPED();
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct actrack_opts o = { .sz = sizeof(o) };

		unsetenv(ACTRACK_ENV_ARENA);
		if (actrack_init(&o))
			_exit(1);
		if (actrack_stack_policy(1U << 31, 0) != -EINVAL)
			_exit(2);
		if (actrack_stack_policy(0, -1) != -EINVAL)
			_exit(3);
		/* pid_max is at most 4M: this pid never exists. */
		if (actrack_stack_policy(0, 0x7ffffff0) != -ESRCH)
			_exit(4);
		if (actrack_stack_policy(ACTRACK_STACKS_ON_EXIT, getppid()))
			_exit(5);
		if (actrack_stack_policy(0, 0))
			_exit(6);
		_exit(0);
	}
	ASSERT_EQ(0, wait_exit(pid));
}

TEST_HARNESS_MAIN
