// SPDX-License-Identifier: MIT
/*
 * Who killed it: a death report names the sender of the signal the
 * process died of (issue 28, item 1).  A tracked victim is killed by a
 * helper that renamed itself, by `kill -9` from a shell, through
 * pidfd_send_signal(), by itself (raise()), by its parent's death
 * (PR_SET_PDEATHSIG), by the kernel (a NULL store, RLIMIT_CPU); the
 * sender of a signal that did not kill is not named; and a reader in a
 * child pid namespace is not told the pid of a sender outside it.  A
 * process sender is named with its executable's path and its cgroup
 * (item 1's ABI 1.8 part).
 */
#include <sys/prctl.h>
#include "vm_util.h"

FIXTURE(killer) {
	struct vm_watch w;
};

FIXTURE_SETUP(killer)
{
	memset(&self->w, 0, sizeof(self->w));
	VM_REQUIRE_MODULE();
	ASSERT_EQ(0, vm_watch_mine(&self->w));
}

FIXTURE_TEARDOWN(killer)
{
	vm_watch_close(&self->w);
}

/*
 * A tracked child that obeys one command byte: 't' raise(SIGTERM), 's'
 * store through NULL, 'c' spin under RLIMIT_CPU 1 s, 'b' block SIGTERM
 * (and say so), anything else: wait to be killed.
 */
static void victim_main(int ready, int go)
{
	struct actrack_opts o = { .sz = sizeof(o) };
	struct rlimit rl = { 1, 60 };	/* the hard limit SIGKILLs */
	sigset_t set;
	char cmd;

	unsetenv(ACTRACK_ENV_ARENA);
	if (actrack_init(&o) || actrack_backend() != ACTRACK_BACKEND_MODULE)
		_exit(113);
	actrack_push_task(4242);
	if (write(ready, "r", 1) != 1)
		_exit(114);
	while (read(go, &cmd, 1) == 1) {
		switch (cmd) {
		case 't':
			raise(SIGTERM);
			break;
		case 's':
			*(volatile int *)(uintptr_t)0 = 1;
			break;
		case 'c':
			if (setrlimit(RLIMIT_CPU, &rl))
				_exit(115);
			for (;;)
				;
		case 'b':
			sigemptyset(&set);
			sigaddset(&set, SIGTERM);
			if (sigprocmask(SIG_BLOCK, &set, NULL) ||
			    write(ready, "b", 1) != 1)
				_exit(116);
			break;
		}
	}
	for (;;)
		pause();
}

struct victim {
	pid_t pid;
	int ready, go;
};

static int victim_start(struct victim *v)
{
	int ready[2], go[2];

	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC))
		return -errno;
	v->pid = fork();
	if (v->pid < 0)
		return -errno;
	if (v->pid == 0) {
		close(ready[0]);
		close(go[1]);
		victim_main(ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	v->ready = ready[0];
	v->go = go[1];
	return vm_read_n(v->ready, 1, 20000);
}

/* Reap @v: its wait status, or -errno. */
static int victim_reap(struct victim *v)
{
	int status;

	close(v->ready);
	close(v->go);
	if (waitpid(v->pid, &status, 0) != v->pid)
		return -errno;
	return status;
}

/* What a report must say of a process (or the process itself) as sender. */
struct sender {
	uint32_t kind;
	int sig, code;
	pid_t pid;
	const char *comm;		/* NULL: not checked */
	const char *exe;		/* "": not known */
	const char *cgroup;
};

static void expect_sender(struct __test_metadata *_metadata,
			  const struct actrack_death *d, const struct sender *s)
{
	ASSERT_TRUE(d->has_killer);
	EXPECT_EQ(s->kind, d->killer.kind);
	EXPECT_EQ(s->sig, d->killer.signal);
	EXPECT_EQ(s->code, d->killer.code);
	EXPECT_EQ((uint32_t)s->pid, d->killer.pid);
	EXPECT_EQ(getuid(), d->killer.uid);
	if (s->comm)
		EXPECT_STREQ(s->comm, d->killer.comm);
	EXPECT_STREQ(s->exe, d->killer.exe);
	EXPECT_STREQ(s->cgroup, d->killer.cgroup);
}

/*
 * Our own executable's path and cgroup, which a forked sender shares
 * (cgroup2 mounted first: /proc/PID/cgroup has no "0::" line before).
 */
struct self_id {
	char exe[PATH_MAX];
	char cgroup[PATH_MAX];
};

static int self_id(struct self_id *id)
{
	ssize_t n = readlink("/proc/self/exe", id->exe, sizeof(id->exe) - 1);

	if (n <= 0)
		return -errno;
	id->exe[n] = '\0';
	return vm_cg_mount() ?: vm_cg_of(getpid(), id->cgroup,
					  sizeof(id->cgroup));
}

/*
 * A helper renamed "grim-reaper", moved into its own cgroup
 * <root>/actrack-killer-PID.slice/cron.service, SIGKILLs the victim with
 * kill(): the report names it with our executable (it did not exec) and
 * that cgroup.
 */
TEST_F_TIMEOUT(killer, sigkill_from_helper, 120)
{
	char slice[128], unit[160];
	struct actrack_death *d;
	struct self_id id;
	struct victim v;
	pid_t helper;
	int status, ret;

	VM_SETUP_SKIPPED();
	ret = vm_cg_mount();
	if (ret)
		SKIP(return, "no cgroup2: %s", strerror(-ret));
	ASSERT_EQ(0, self_id(&id));
	snprintf(slice, sizeof(slice), VM_CG_ROOT "/actrack-killer-%d.slice",
		 (int)getpid());
	snprintf(unit, sizeof(unit), "%s/cron.service", slice);
	ASSERT_EQ(0, mkdir(slice, 0755));
	ASSERT_EQ(0, mkdir(unit, 0755));
	ASSERT_EQ(0, victim_start(&v));
	helper = fork();
	ASSERT_LE(0, helper);
	if (helper == 0) {
		if (prctl(PR_SET_NAME, "grim-reaper", 0, 0, 0))
			_exit(1);
		if (vm_cg_move(unit, 0))
			_exit(3);
		_exit(kill(v.pid, SIGKILL) ? 2 : 0);
	}
	ASSERT_EQ(helper, waitpid(helper, &status, 0));
	rmdir(unit);
	rmdir(slice);
	ASSERT_EQ(0, status);
	status = victim_reap(&v);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGKILL, WTERMSIG(status));
	d = vm_wait_death(self->w.m, self->w.ds, (uint32_t)v.pid, 10000);
	ASSERT_NE(NULL, d);
	expect_sender(_metadata, d, &(struct sender){
		ACTRACK_KILLER_PROCESS, SIGKILL, SI_USER, helper,
		"grim-reaper", id.exe, unit + strlen(VM_CG_ROOT) });
}

/* `kill -9 PID` from a shell: kill is the shell's builtin, so the shell
 * (its comm "sh", from /bin/sh) is the sender. */
TEST_F_TIMEOUT(killer, sigkill_from_a_shell, 120)
{
	char cmd[64], sh_exe[PATH_MAX];
	struct actrack_death *d;
	struct self_id id;
	struct victim v;
	pid_t sh;
	int status;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, self_id(&id));
	/* Its exe: /bin/sh with every symlink resolved, as /proc shows. */
	ASSERT_NE(NULL, realpath("/bin/sh", sh_exe));
	ASSERT_EQ(0, victim_start(&v));
	snprintf(cmd, sizeof(cmd), "kill -9 %d", v.pid);
	sh = fork();
	ASSERT_LE(0, sh);
	if (sh == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(sh, waitpid(sh, &status, 0));
	ASSERT_EQ(0, status);
	status = victim_reap(&v);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGKILL, WTERMSIG(status));
	d = vm_wait_death(self->w.m, self->w.ds, (uint32_t)v.pid, 10000);
	ASSERT_NE(NULL, d);
	expect_sender(_metadata, d, &(struct sender){
		ACTRACK_KILLER_PROCESS, SIGKILL, SI_USER, sh, "sh", sh_exe,
		id.cgroup });
}

/*
 * PR_SET_PDEATHSIG: when the victim's parent exits, the exiting parent
 * sends the signal (with no siginfo: SI_USER), so it is named, by the pid
 * it had, though it is gone by the time the report is read.  It has
 * already let go of its memory, and so of its executable: no exe.
 */
TEST_F_TIMEOUT(killer, parent_death_signal_names_the_parent, 120)
{
	int ready[2], go[2], pids[2], hold[2], status;
	struct actrack_death *d;
	struct self_id id;
	pid_t mid, victim;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, self_id(&id));
	/* The orphaned victim is reparented to us, and reaped here. */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(pids, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(hold, O_CLOEXEC));
	mid = fork();
	ASSERT_LE(0, mid);
	if (mid == 0) {
		pid_t parent = getpid(), c;
		char eof;

		if (prctl(PR_SET_NAME, "short-lived", 0, 0, 0))
			_exit(1);
		/* Only the test may hold the write end: EOF is its word. */
		close(hold[1]);
		close(pids[0]);
		c = fork();
		if (c == 0) {
			if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) ||
			    getppid() != parent)
				_exit(2);
			close(hold[0]);
			close(pids[1]);
			close(ready[0]);
			close(go[1]);
			victim_main(ready[1], go[0]);
		}
		if (c < 0 || write(pids[1], &c, sizeof(c)) != sizeof(c))
			_exit(3);
		/* Until the test closes its end: then exit, and kill c. */
		_exit(read(hold[0], &eof, 1) == 0 ? 0 : 4);
	}
	close(ready[1]);
	close(go[0]);
	close(pids[1]);
	close(hold[0]);
	ASSERT_EQ(sizeof(victim), read(pids[0], &victim, sizeof(victim)));
	close(pids[0]);
	/* Tracked, then its parent goes. */
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 20000));
	close(hold[1]);
	ASSERT_EQ(mid, waitpid(mid, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(victim, waitpid(victim, &status, 0));
	close(ready[0]);
	close(go[1]);
	EXPECT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGKILL, WTERMSIG(status));
	d = vm_wait_death(self->w.m, self->w.ds, (uint32_t)victim, 10000);
	ASSERT_NE(NULL, d);
	expect_sender(_metadata, d, &(struct sender){
		ACTRACK_KILLER_PROCESS, SIGKILL, SI_USER, mid, "short-lived",
		"", id.cgroup });
}

/* pidfd_send_signal() with no siginfo: SI_USER, as kill(). */
TEST_F_TIMEOUT(killer, sigkill_by_pidfd, 120)
{
	struct actrack_death *d;
	struct self_id id;
	struct victim v;
	char comm[16] = "";
	int pidfd, status, fd;
	ssize_t n;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, self_id(&id));
	fd = open("/proc/self/comm", O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	ASSERT_LT(0, n);
	comm[strcspn(comm, "\n")] = '\0';
	ASSERT_EQ(0, victim_start(&v));
	pidfd = (int)syscall(SYS_pidfd_open, v.pid, 0);
	if (pidfd < 0 && errno == ENOSYS) {
		kill(v.pid, SIGKILL);
		victim_reap(&v);
		SKIP(return, "no pidfd_open");
	}
	ASSERT_LE(0, pidfd);
	ASSERT_EQ(0, syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0));
	close(pidfd);
	status = victim_reap(&v);
	ASSERT_EQ(SIGKILL, WTERMSIG(status));
	d = vm_wait_death(self->w.m, self->w.ds, (uint32_t)v.pid, 10000);
	ASSERT_NE(NULL, d);
	expect_sender(_metadata, d, &(struct sender){
		ACTRACK_KILLER_PROCESS, SIGKILL, SI_USER, getpid(), comm,
		id.exe, id.cgroup });
}

/* raise(SIGTERM): the process itself, through tgkill() (SI_TKILL). */
TEST_F_TIMEOUT(killer, raise_sigterm_is_itself, 120)
{
	struct actrack_death *d;
	struct self_id id;
	struct victim v;
	int status;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, self_id(&id));
	ASSERT_EQ(0, victim_start(&v));
	ASSERT_EQ(1, write(v.go, "t", 1));
	status = victim_reap(&v);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGTERM, WTERMSIG(status));
	d = vm_wait_death(self->w.m, self->w.ds, (uint32_t)v.pid, 10000);
	ASSERT_NE(NULL, d);
	expect_sender(_metadata, d, &(struct sender){
		ACTRACK_KILLER_SELF, SIGTERM, SI_TKILL, v.pid, NULL, id.exe,
		id.cgroup });
}

/*
 * The kernel is the sender: a victim's command byte, the signal it dies
 * of and the si_code the kernel sends it with.
 */
static const struct kernel_kill {
	const char *what;
	char cmd;
	int sig, code;
} kernel_kills[] = {
	/* A NULL store: the kernel's SIGSEGV, not the victim's. */
	{ "NULL store", 's', SIGSEGV, SEGV_MAPERR },
	/* RLIMIT_CPU: SIGXCPU sent with SEND_SIG_PRIV. */
	{ "RLIMIT_CPU", 'c', SIGXCPU, SI_KERNEL },
};

static void expect_kernel_kill(struct __test_metadata *_metadata,
			       struct vm_watch *w, const struct kernel_kill *k)
{
	struct actrack_death *d;
	struct victim v;
	int status;

	TH_LOG("%s", k->what);
	ASSERT_EQ(0, victim_start(&v));
	ASSERT_EQ(1, write(v.go, &k->cmd, 1));
	status = victim_reap(&v);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(k->sig, WTERMSIG(status));
	d = vm_wait_death(w->m, w->ds, (uint32_t)v.pid, 10000);
	ASSERT_NE(NULL, d);
	ASSERT_TRUE(d->has_killer);
	EXPECT_EQ(ACTRACK_KILLER_KERNEL, d->killer.kind);
	EXPECT_EQ(k->sig, d->killer.signal);
	EXPECT_EQ(k->code, d->killer.code);
	/* Nobody's pid, uid or name, not even the victim's. */
	EXPECT_EQ(0U, d->killer.pid);
	EXPECT_EQ(0U, d->killer.uid);
	EXPECT_STREQ("", d->killer.comm);
	EXPECT_STREQ("", d->killer.exe);
	EXPECT_STREQ("", d->killer.cgroup);
}

TEST_F_TIMEOUT(killer, kernel_is_the_sender, 300)
{
	VM_SETUP_SKIPPED();
	for (size_t i = 0; i < ARRAY_SIZE(kernel_kills); i++)
		expect_kernel_kill(_metadata, &self->w, &kernel_kills[i]);
}

/*
 * A blocked SIGTERM from a helper is recorded first, but the process dies
 * of our SIGKILL: the report names no sender rather than a wrong one.
 */
TEST_F_TIMEOUT(killer, other_signal_names_nobody, 120)
{
	struct actrack_death *d;
	struct victim v;
	pid_t helper;
	int status;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, victim_start(&v));
	ASSERT_EQ(1, write(v.go, "b", 1));
	ASSERT_EQ(0, vm_read_n(v.ready, 1, 20000));
	helper = fork();
	ASSERT_LE(0, helper);
	if (helper == 0)
		_exit(kill(v.pid, SIGTERM) ? 2 : 0);
	ASSERT_EQ(helper, waitpid(helper, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(0, kill(v.pid, SIGKILL));
	status = victim_reap(&v);
	ASSERT_EQ(SIGKILL, WTERMSIG(status));
	d = vm_wait_death(self->w.m, self->w.ds, (uint32_t)v.pid, 10000);
	ASSERT_NE(NULL, d);
	EXPECT_FALSE(d->has_killer);
	EXPECT_EQ(0U, d->killer.kind);
	EXPECT_EQ(0U, d->killer.pid);
}

/*
 * The sender's executable is told only to a reader who could readlink
 * its /proc/PID/exe: a reader of uid 1000 (watching its own victim, which
 * we, root, SIGKILL) is told our pid, uid and cgroup, but not our
 * executable.  (A reader of the sender's own uid is told it: the tests
 * above.)  Exit codes name the step that failed.
 */
static int uid_reader(int ready, int pids, const struct self_id *id)
{
	struct vm_deaths *ds = calloc(1, sizeof(*ds));
	struct actrack_monitor *m;
	struct actrack_death *d;
	pid_t victim;

	if (!ds || setgid(1000) || setuid(1000))
		return 50;
	if (actrack_monitor_open(0, &m))
		return 51;
	if (write(ready, "r", 1) != 1)
		return 52;
	if (read(pids, &victim, sizeof(victim)) != sizeof(victim))
		return 53;
	d = vm_wait_death(m, ds, (uint32_t)victim, 10000);
	if (!d)
		return 54;
	if (!d->has_killer || d->killer.kind != ACTRACK_KILLER_PROCESS ||
	    d->killer.pid != (uint32_t)getppid() || d->killer.uid != 0)
		return 55;
	if (strcmp(d->killer.cgroup, id->cgroup))
		return 56;
	if (d->killer.exe[0])
		return 57;	/* not its to see */
	return 0;
}

TEST_F_TIMEOUT(killer, exe_only_for_its_uid, 120)
{
	struct vm_victim_cfg cfg = { .uid = 1000 };
	int ready[2], pids[2], status;
	struct vm_victim v;
	struct self_id id;
	pid_t reader;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, self_id(&id));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(pids));
	reader = fork();
	ASSERT_LE(0, reader);
	if (reader == 0)
		_exit(uid_reader(ready[1], pids[0], &id));
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 20000));
	ASSERT_EQ(0, vm_victim_start(&cfg, &v));
	ASSERT_EQ(sizeof(v.pid), write(pids[1], &v.pid, sizeof(v.pid)));
	status = vm_victim_kill(&v, SIGKILL);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(reader, waitpid(reader, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("uid 1000 reader step");
	close(ready[0]);
	close(ready[1]);
	close(pids[0]);
	close(pids[1]);
}

/*
 * The reader in a child pid namespace (pid 1 there, with its victim as
 * pid 2) is told that a sender outside it sent the SIGKILL, not its host
 * pid nor its name; a host reader gets both.
 */
static int inner_reader(int ready, int go)
{
	struct actrack_monitor *m;
	struct vm_deaths *ds = calloc(1, sizeof(*ds));
	struct actrack_death *d;
	struct victim v;

	if (!ds || actrack_monitor_open(0, &m))
		return 40;
	if (victim_start(&v) || v.pid != 2)
		return 41;
	if (write(ready, "r", 1) != 1)
		return 42;
	if (vm_read_n(go, 1, 60000))
		return 43;
	if (victim_reap(&v) < 0)
		return 44;
	d = vm_wait_death(m, ds, 2, 10000);
	if (!d)
		return 45;
	if (!d->has_killer || d->killer.kind != ACTRACK_KILLER_PROCESS ||
	    d->killer.signal != SIGKILL || d->killer.code != SI_USER)
		return 46;
	if (d->killer.pid || d->killer.uid || d->killer.comm[0] ||
	    d->killer.exe[0] || d->killer.cgroup[0])
		return 47;
	return 0;
}

TEST_F_TIMEOUT(killer, sender_outside_reader_pid_ns, 120)
{
	int ready[2], go[2], status;
	struct actrack_death *d;
	pid_t mid, victim;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	mid = fork();
	ASSERT_LE(0, mid);
	if (mid == 0) {
		pid_t inner;

		if (unshare(CLONE_NEWPID))
			_exit(30);
		inner = fork();
		if (inner == 0)
			_exit(inner_reader(ready[1], go[0]));
		if (inner < 0 || waitpid(inner, &status, 0) != inner)
			_exit(31);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 32);
	}
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 20000));
	/* The inner victim is the grandchild's child: find its host pid. */
	victim = 0;
	for (pid_t p = mid + 1; p < mid + 64 && !victim; p++) {
		char path[64], buf[256];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", p);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "NSpid:", 6) &&
			    strstr(buf, "\t2\n"))
				victim = p;
		fclose(f);
	}
	ASSERT_NE(0, victim);
	ASSERT_EQ(0, kill(victim, SIGKILL));
	ASSERT_EQ(1, write(go[1], "k", 1));
	ASSERT_EQ(mid, waitpid(mid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("inner reader step failed");
	d = vm_wait_death(self->w.m, self->w.ds, (uint32_t)victim, 10000);
	ASSERT_NE(NULL, d);
	ASSERT_TRUE(d->has_killer);
	EXPECT_EQ((uint32_t)getpid(), d->killer.pid);
	close(ready[0]);
	close(go[1]);
}

TEST_HARNESS_MAIN
