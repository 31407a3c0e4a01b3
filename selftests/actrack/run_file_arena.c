// SPDX-License-Identifier: MIT
/*
 * `actrack run` and linked programs on a file arena, where no module
 * frees anything and the filesystem may be full: the program is a host
 * and we are its guest.
 *
 * - A full tmpfs (mounted by the test in its own mount namespace): the
 *   program runs untracked with its own exit status, `actrack run` says so
 *   in one line, a linked program's attach fails with -ENOSPC and its
 *   pushes are dropped, no child dies of SIGBUS, and no temporary file is
 *   left behind.  An arena made sparse (holes in its blocks) is refused
 *   for writing on a full filesystem rather than faulting later.
 * - 1,500 short-lived processes that each push once: the dead ones'
 *   records are reclaimed when the arena fills, nothing is lost, and a
 *   program started afterwards is tracked.
 * - A process attaches at its first push: one that never pushes leaves no
 *   record; the program `actrack run` starts is listed before it pushes.
 * - An exec chain (a shell that execs the program, also a shell that
 *   attached only at its first wait): one set of records for the pid,
 *   with the new image's command line.
 * - The messages of a fresh machine and of bad arguments.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "vm_util.h"	/* VM_UNDER_SANITIZER */
#include "snapshot_helpers.h"
#include "progs_util.h"

/*
 * Why the programs these tests run under `actrack run` cannot be tracked
 * here, or NULL: sanitizer builds cannot preload into an uninstrumented
 * program, the kselftest layout has no preload beside the CLI, and the
 * VM's /bin/sh, /bin/true and /bin/sleep are one static busybox.
 */
static const char *preload_missing(void)
{
#ifdef VM_UNDER_SANITIZER
	return "sanitizer build: its runtime cannot be preloaded into an "
	       "uninstrumented program";
#else
	const char *why = run_refused("/bin/sh", "-c");

	if (!why)
		why = run_refused("/bin/true", NULL);
	if (!why)
		why = run_refused("/bin/sleep", "0");
	return why;
#endif
}

#define NEEDS_PRELOAD()							\
	do {								\
		const char *why_ = preload_missing();			\
		if (why_)						\
			SKIP(return, "%s", why_);			\
	} while (0)

/* ---- a small tmpfs of our own, filled up ------------------------------- */

/*
 * Mount a @mib MiB tmpfs on a new directory in a private mount namespace
 * (this test process's: the programs it starts inherit it).  Return NULL
 * or why it cannot be done here.
 */
static const char *mount_tmpfs(char *dir, size_t len, unsigned int mib)
{
	char opts[32];

	snprintf(dir, len, "%s/actrack-fs-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return "mkdtemp failed";
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		rmdir(dir);
		return "no mount namespace here (needs CAP_SYS_ADMIN)";
	}
	snprintf(opts, sizeof(opts), "size=%um,mode=0755", mib);
	if (mount("actrack-test", dir, "tmpfs", 0, opts)) {
		rmdir(dir);
		return "cannot mount a tmpfs here";
	}
	return NULL;
}

static void umount_tmpfs(const char *dir)
{
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

/* Fill @dir's filesystem up to its last few KiB with "filler". */
static int fill_fs(const char *dir)
{
	static char buf[64 * 1024];
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/filler", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	memset(buf, 'x', sizeof(buf));
	for (size_t chunk = sizeof(buf); chunk >= 512; chunk /= 2)
		while (write(fd, buf, chunk) == (ssize_t)chunk)
			;
	close(fd);
	return 0;
}

/* Names in @dir other than "filler" (a temporary left behind). */
static int stray_files(const char *dir, char *first, size_t len)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, "filler"))
			continue;
		if (!n++)
			snprintf(first, len, "%s", e->d_name);
	}
	closedir(d);
	return n;
}

FIXTURE(fullfs) {
	char dir[256];
	char arena[PATH_MAX];
	struct run r;
};

FIXTURE_SETUP(fullfs)
{
	const char *why = mount_tmpfs(self->dir, sizeof(self->dir), 1);

	memset(&self->r, 0, sizeof(self->r));
	self->arena[0] = 0;
	if (why)
		SKIP(return, "%s", why);
	snprintf(self->arena, sizeof(self->arena), "%s/arena", self->dir);
	setenv(ACTRACK_ENV_ARENA, self->arena, 1);
	ASSERT_EQ(0, fill_fs(self->dir));
}

FIXTURE_TEARDOWN(fullfs)
{
	run_free(&self->r);
	if (self->arena[0])
		umount_tmpfs(self->dir);
	unsetenv(ACTRACK_ENV_ARENA);
}

/* actrack run on a full filesystem: untracked, alive, told once. */
TEST_F(fullfs, run_survives_and_says_so)
{
	char *t[] = { "actrack", "run", "--", "/bin/true", NULL };
	char *sh[] = { "actrack", "run", "--", "/bin/sh", "-c",
		       "/bin/true; /bin/true; exit 7", NULL };
	char stray[256] = "";

	NEEDS_PRELOAD();
	ASSERT_EQ(0, run_cli(&self->r, NULL, t));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.out);
	EXPECT_EQ(1, count_lines(self->r.err));
	EXPECT_NE(NULL, strstr(self->r.err, "runs untracked"));
	EXPECT_NE(NULL, strstr(self->r.err, "No space left on device"));
	EXPECT_NE(NULL, strstr(self->r.err, self->arena));
	LOG_ON_FAILURE(&self->r);
	run_free(&self->r);

	/* A shell and its children: the shell's status, still one line. */
	ASSERT_EQ(0, run_cli(&self->r, NULL, sh));
	EXPECT_EQ(7, self->r.status);
	EXPECT_EQ(1, count_lines(self->r.err));
	LOG_ON_FAILURE(&self->r);

	EXPECT_EQ(0, stray_files(self->dir, stray, sizeof(stray)))
		TH_LOG("left behind: %s", stray);
	EXPECT_EQ(-1, access(self->arena, F_OK));
}

/* A linked program: -ENOSPC from actrack_init(), pushes dropped, and 100
 * forked children that push all exit normally (none of SIGBUS). */
TEST_F(fullfs, linked_program_never_faults)
{
	int sigbus = 0, other = 0;
	char stray[256] = "";

	for (int i = 0; i < 100; i++) {
		pid_t pid = fork();
		int st;

		ASSERT_LE(0, pid);
		if (!pid) {
			uint32_t tok;
			int ret = actrack_init(NULL);

			tok = actrack_push_task(42);
			actrack_pop(tok);
			_exit(ret == -ENOSPC && tok == 0 ? 0 : 3);
		}
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS)
			sigbus++;
		else if (!WIFEXITED(st) || WEXITSTATUS(st))
			other++;
	}
	EXPECT_EQ(0, sigbus);
	EXPECT_EQ(0, other);
	EXPECT_EQ(0, stray_files(self->dir, stray, sizeof(stray)))
		TH_LOG("left behind: %s", stray);
}

/*
 * An arena whose blocks are not all there (made sparse by hand, or by an
 * actrack older than the reservation): a writer on a full filesystem is
 * refused with -ENOSPC at attach instead of dying in a store later; a
 * reader still reads it.
 */
TEST_F(fullfs, sparse_arena_refused_for_writing)
{
	struct actrack_opts o = { .sz = sizeof(o), .file_size = 256 * 1024,
				  .flags = ACTRACK_INIT_NO_MODULES };
	struct actrack_snapshot *s = NULL;
	char filler[PATH_MAX + 16];
	pid_t pid;
	int st, fd;

	/* Room for the arena first: the filler gives back 1 MiB... */
	snprintf(filler, sizeof(filler), "%s/filler", self->dir);
	ASSERT_EQ(0, unlink(filler));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(actrack_init(&o) ? 1 : 0);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, st);
	/* ... then holes in its tail, and the filesystem full again. */
	fd = open(self->arena, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       128 * 1024, 128 * 1024));
	close(fd);
	ASSERT_EQ(0, fill_fs(self->dir));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int ret = actrack_init(&o);

		/* Were it mapped, these would touch the holes. */
		for (int i = 0; i < 2000; i++)
			actrack_pop(actrack_push_task((uint64_t)i));
		_exit(ret == -ENOSPC ? 0 : 100 + (ret < 0 ? -ret : ret) % 100);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st)) TH_LOG("killed by signal %d",
					  WTERMSIG(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ(0, actrack_snapshot_take(self->arena,
					   ACTRACK_SNAP_ARENA_FILE, &s));
	actrack_snapshot_free(s);
}

/* ---- an arena that fills with the dead ---------------------------------- */

FIXTURE(run) {
	char arena[256];
	struct run r;
	pid_t job;
};

FIXTURE_SETUP(run)
{
	memset(&self->r, 0, sizeof(self->r));
	self->job = 0;
	test_path(self->arena, sizeof(self->arena), "run-file-arena");
	unlink(self->arena);
	setenv(ACTRACK_ENV_ARENA, self->arena, 1);
}

FIXTURE_TEARDOWN(run)
{
	if (self->job > 0) {
		kill(-self->job, SIGKILL);	/* its group, if it has one */
		kill(self->job, SIGKILL);
		waitpid(self->job, NULL, 0);
	}
	run_free(&self->r);
	unlink(self->arena);
	unsetenv(ACTRACK_ENV_ARENA);
}

/* `actrack run -- ARGV...` in the background, its output discarded. */
static pid_t start_run(char *const argv[])
{
	pid_t pid = fork();

	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		/* Its own group, which the teardown kills whole: a shell's
		 * child (sh -c "bash -c '... exec sleep'; :") must not
		 * outlive the test, holding the runner's output pipe. */
		setpgid(0, 0);
		dup2(null, 1);
		execv(cli_path(), argv);
		_exit(127);
	}
	return pid;
}

/*
 * Wait (up to 60 s, a loaded machine) for @pid (0: any process) to be in
 * the arena with a record whose command line starts with @cmd (the
 * record's: a live view's, from /proc, shows an exec()ed image's at once,
 * before that image wrote anything).  Return its snapshot, or NULL.
 */
static const struct actrack_snap_process *
find_cmd(const struct actrack_snapshot *s, uint32_t pid, const char *cmd)
{
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		if ((!pid || p->pid == pid) && p->has_record &&
		    !strncmp(p->cmdline, cmd, strlen(cmd)))
			return p;
	}
	return NULL;
}

static struct actrack_snapshot *wait_tracked(const char *arena, pid_t pid,
					     const char *cmd)
{
	for (int i = 0; i < 6000; i++) {
		struct actrack_snapshot *s;

		if (!actrack_snapshot_take(arena, ACTRACK_SNAP_ARENA_FILE |
					   ACTRACK_SNAP_NO_CMDLINES, &s)) {
			if (find_cmd(s, (uint32_t)pid, cmd))
				return s;
			actrack_snapshot_free(s);
		}
		usleep(10000);
	}
	return NULL;
}

/* A value of `actrack stats` ("lost:      N records ..."). */
static long stat_value(const char *out, const char *key)
{
	const char *p = strstr(out, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

TEST_F(run, dead_processes_reclaimed_when_full)
{
	/* sleep pushes (nanosleep), so each one attaches. */
	char *loop[] = { "actrack", "run", "--", "/bin/sh", "-c",
			 "i=0; while [ $i -lt 1500 ]; do /bin/sleep 0; "
			 "i=$((i + 1)); done", NULL };
	char *sleeper[] = { "actrack", "run", "--", "/bin/sleep", "300",
			    NULL };
	char *stats[] = { "actrack", "stats", NULL };
	struct actrack_snapshot *s;

	NEEDS_PRELOAD();
	ASSERT_EQ(0, run_cli(&self->r, NULL, loop));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	LOG_ON_FAILURE(&self->r);
	run_free(&self->r);

	/* A program started afterwards is tracked. */
	self->job = start_run(sleeper);
	ASSERT_LT(0, self->job);
	s = wait_tracked(self->arena, self->job, "/bin/sleep");
	EXPECT_NE(NULL, s);
	actrack_snapshot_free(s);

	/* The arena did fill (else this proves nothing): the dead were
	 * reclaimed, and nothing was lost. */
	ASSERT_EQ(0, run_cli(&self->r, NULL, stats));
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(0, stat_value(self->r.out, "lost:"));
	EXPECT_LT(0, stat_value(self->r.out, "reclaimed:"));
	EXPECT_NE(NULL, strstr(self->r.out, "flags:     full\n"));
	LOG_ON_FAILURE(&self->r);
}

/* A full arena of the living: the loss is counted and said, not silent. */
TEST_F(run, lost_records_are_said)
{
	struct actrack_opts o = { .sz = sizeof(o), .file_size = 64 * 1024,
				  .flags = ACTRACK_INIT_NO_MODULES };
	char *ps[] = { "actrack", "ps", NULL };
	char *stats[] = { "actrack", "stats", NULL };
	int pipefd[2];
	pid_t pid;
	char c;

	/* One live process that takes threads until the arena is full. */
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* A process group of its own: the teardown kills them all. */
		setpgid(0, 0);
		close(pipefd[0]);
		if (actrack_init(&o))
			_exit(1);
		for (int i = 0; i < 200; i++) {
			pid_t t = fork();

			if (!t) {
				/* Each child one process and thread record;
				 * alive until the parent is killed. */
				actrack_pop(actrack_push_task(1));
				pause();
				_exit(0);
			}
		}
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	self->job = pid;
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	close(pipefd[0]);

	/* Its children push at their own pace: wait for the loss. */
	for (int i = 0; i < 3000; i++) {
		run_free(&self->r);
		ASSERT_EQ(0, run_cli(&self->r, NULL, stats));
		if (stat_value(self->r.out, "lost:") > 0)
			break;
		usleep(20000);
	}
	EXPECT_LT(0, stat_value(self->r.out, "lost:"));
	EXPECT_EQ(0, stat_value(self->r.out, "reclaimed:"));
	LOG_ON_FAILURE(&self->r);
	run_free(&self->r);
	ASSERT_EQ(0, run_cli(&self->r, NULL, ps));
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "records were not written, the "
			       "arena was full"));
	EXPECT_EQ(1, count_lines(self->r.err));
	LOG_ON_FAILURE(&self->r);
}

/* Processes with a record whose command line starts with @cmd. */
static uint32_t count_cmd(const struct actrack_snapshot *s, const char *cmd)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->nr_processes; i++)
		n += s->processes[i].has_record &&
		     !strncmp(s->processes[i].cmdline, cmd, strlen(cmd));
	return n;
}

/*
 * A child that never pushes (/bin/true) never attaches: no record; one
 * that pushes once (sleep's nanosleep) is listed, with its command line.
 */
TEST_F(run, attach_at_first_push)
{
	char *cmd[] = { "actrack", "run", "--", "/bin/sh", "-c",
			"/bin/sleep 0; /bin/true; /bin/true; "
			"exec /bin/sleep 300", NULL };
	struct actrack_snapshot *s;
	uint32_t records = 0;

	NEEDS_PRELOAD();
	self->job = start_run(cmd);
	ASSERT_LT(0, self->job);
	s = wait_tracked(self->arena, self->job, "/bin/sleep 300");
	ASSERT_NE(NULL, s);
	for (uint32_t i = 0; i < s->nr_processes; i++)
		records += s->processes[i].has_record;
	EXPECT_EQ(2u, records);
	EXPECT_EQ(1u, count_cmd(s, "/bin/sleep 0"));
	EXPECT_EQ(0u, count_cmd(s, "/bin/true"));
	actrack_snapshot_free(s);
}

/* The program `actrack run` starts is listed before it ever pushes (a
 * shell's loop of builtins never does). */
TEST_F(run, run_program_listed_before_it_pushes)
{
	char *cmd[] = { "actrack", "run", "--", "/bin/sh", "-c",
			"while :; do :; done", NULL };
	struct actrack_snapshot *s;

	NEEDS_PRELOAD();
	self->job = start_run(cmd);
	ASSERT_LT(0, self->job);
	s = wait_tracked(self->arena, self->job, "/bin/sh -c while");
	EXPECT_NE(NULL, s);
	actrack_snapshot_free(s);
}

/*
 * A forked bash attaches at its first push (the read builtin), after it
 * copied the environment into its own variables (so the exec-chain mark
 * it passes on says only "may have attached": dash would pass on the
 * mark rewritten in place), then execs the program: that image replaces
 * the shell's records, its tracker included.
 */
TEST_F(run, exec_chain_after_first_push_attach)
{
	char *cmd[] = { "actrack", "run", "--", "/bin/sh", "-c",
			"/bin/bash -c 'read v < /proc/version; "
			"exec /bin/sleep 300'; :", NULL };
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s;
	uint32_t n = 0;

	NEEDS_PRELOAD();
	if (access("/bin/bash", X_OK))
		SKIP(return, "no /bin/bash");
	self->job = start_run(cmd);
	ASSERT_LT(0, self->job);
	s = wait_tracked(self->arena, 0, "/bin/sleep 300");
	ASSERT_NE(NULL, s);
	p = find_cmd(s, 0, "/bin/sleep 300");
	ASSERT_NE(NULL, p);
	EXPECT_NE((uint32_t)self->job, p->pid);
	for (uint32_t i = 0; i < s->nr_processes; i++)
		n += s->processes[i].pid == p->pid;
	EXPECT_EQ(1u, n);
	/* bash's main thread went with its image. */
	EXPECT_EQ(1u, p->nr_threads);
	actrack_snapshot_free(s);
}

/* A wrapper that execs the program: one record set, the new command. */
TEST_F(run, exec_chain_keeps_one_record)
{
	char *wrap[] = { "actrack", "run", "--", "/bin/sh", "-c",
			 "/bin/true; exec /bin/sleep 300", NULL };
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s;
	uint32_t n = 0;

	NEEDS_PRELOAD();
	self->job = start_run(wrap);
	ASSERT_LT(0, self->job);
	s = wait_tracked(self->arena, self->job, "/bin/sleep");
	ASSERT_NE(NULL, s);
	for (uint32_t i = 0; i < s->nr_processes; i++)
		n += s->processes[i].pid == (uint32_t)self->job;
	EXPECT_EQ(1u, n);
	p = snap_find(s, (uint32_t)self->job);
	EXPECT_STREQ("/bin/sleep 300", p->cmdline);
	/* sleep has one thread; the shell's tracker went with its image. */
	EXPECT_EQ(1u, p->nr_threads);
	actrack_snapshot_free(s);
}

/*
 * The record's command line, taken from the arguments the preload's
 * constructor was given: byte for byte what /proc/PID/cmdline held at
 * exec, empty arguments and the cut at ACTRACK_CMDLINE_MAX included.
 */
TEST_F(run, command_line_recorded_as_exec_gave_it)
{
	char longarg[700], want[ACTRACK_CMDLINE_MAX + 1];
	char *cmd[] = { "actrack", "run", "--", "/bin/sleep", "300", "",
			"a b", longarg, NULL };
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s;
	size_t n = 0;

	NEEDS_PRELOAD();
	memset(longarg, 'x', sizeof(longarg) - 1);
	longarg[sizeof(longarg) - 1] = 0;
	/* The NUL-separated arguments, cut, NULs shown as spaces. */
	for (int i = 3; cmd[i] && n < ACTRACK_CMDLINE_MAX; i++) {
		size_t len = strlen(cmd[i]);

		for (size_t k = 0; k <= len && n < ACTRACK_CMDLINE_MAX; k++)
			want[n++] = k < len ? cmd[i][k] : ' ';
	}
	want[n] = 0;
	ASSERT_EQ(ACTRACK_CMDLINE_MAX, n);
	self->job = start_run(cmd);
	ASSERT_LT(0, self->job);
	s = wait_tracked(self->arena, self->job, "/bin/sleep");
	ASSERT_NE(NULL, s);
	actrack_snapshot_free(s);
	/* The record's, not /proc's (which live views show). */
	ASSERT_EQ(0, actrack_snapshot_take(self->arena,
					   ACTRACK_SNAP_ARENA_FILE |
					   ACTRACK_SNAP_NO_CMDLINES, &s));
	p = snap_find(s, (uint32_t)self->job);
	ASSERT_NE(NULL, p);
	EXPECT_STREQ(want, p->cmdline);
	actrack_snapshot_free(s);
}

/* ---- what a new user reads ------------------------------------------------ */

/* The default arena that does not exist yet: what to do about it. */
TEST_F(run, fresh_machine_ps_says_what_to_do)
{
	char *ps[] = { "actrack", "ps", NULL };
	char path[64];
	uid_t uid = 65533;

	unsetenv(ACTRACK_ENV_ARENA);
	snprintf(path, sizeof(path), "/dev/shm/actrack-%u", uid);
	if (getuid() != 0 || !access(ACTRACK_DEVICE_PATH, F_OK))
		SKIP(return, "needs root (to be a new uid) and no module");
	unlink(path);
	ASSERT_EQ(0, run_program_as(&self->r, cli_path(), NULL, uid, ps));
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("", self->r.out);
	EXPECT_EQ(1, count_lines(self->r.err));
	EXPECT_NE(NULL, strstr(self->r.err, path));
	EXPECT_NE(NULL, strstr(self->r.err, "no arena yet"));
	EXPECT_NE(NULL, strstr(self->r.err, "actrack run -- PROGRAM"));
	LOG_ON_FAILURE(&self->r);
}

TEST_F(run, save_to_empty_name)
{
	char *save[] = { "actrack", "save", "", NULL };

	ASSERT_EQ(0, run_cli(&self->r, NULL, save));
	EXPECT_EQ(2, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.err, "actrack: save: OUTPUT is an "
			       "empty file name"));
	LOG_ON_FAILURE(&self->r);
}

/* An unusable $ACTRACK_ARENA (a directory): run anyway, and say so. */
TEST_F(run, unusable_arena_is_said)
{
	char *sh[] = { "actrack", "run", "--", "/bin/sh", "-c", "exit 3",
		       NULL };

	NEEDS_PRELOAD();
	setenv(ACTRACK_ENV_ARENA, "/", 1);
	ASSERT_EQ(0, run_cli(&self->r, NULL, sh));
	EXPECT_EQ(3, self->r.status);
	EXPECT_EQ(1, count_lines(self->r.err));
	EXPECT_NE(NULL, strstr(self->r.err, "runs untracked: arena /: "));
	LOG_ON_FAILURE(&self->r);
}

TEST_HARNESS_MAIN
