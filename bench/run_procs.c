// SPDX-License-Identifier: MIT
/*
 * What `actrack run` costs process-heavy work, without the module (a file
 * arena in /dev/shm, fresh for every round, as a new user runs it), next
 * to the same work run without it, in alternating rounds of one run:
 *
 *   run_exec_loop_400      `sh -c` running /bin/true 400 times in a loop
 *                          (the shell's builtins only: 400 execs)
 *   run_make_j2_small_tree `make -j2` of a generated tree of 30 small C
 *                          files and one link (cc, cc1, as, ld: about 120
 *                          processes)
 *   run_fork_loop_400      `sh -c` running the subshell `( : )` 400
 *                          times: 400 forks, no exec (a tracked shell
 *                          or make forks with the library's fork
 *                          handlers installed)
 *   run_exec_loop_400_empty_preload  the same loop with an empty
 *                          shared object in LD_PRELOAD instead (given as
 *                          $RUN_PROCS_EMPTY_SO; bench/run builds one): the
 *                          floor of any preload library, not a goal
 *   run_start_true         one fork + exec + exit + wait of /bin/true
 *                          with libactrack-preload.so in LD_PRELOAD, as a
 *                          tracked shell or make starts every image: the
 *                          preload loaded, no attach (an image attaches
 *                          at its first push), against the same exec
 *                          without it
 *   run_start_true_attached  the same, attached at start ($ACTRACK_IMAGE
 *                          names its pid, as `actrack run` starts its
 *                          program): map, process record, command line,
 *                          modules, the main thread's tracker, the work
 *                          of any image's first push
 *
 * Each prints wall time (value tracked, baseline untracked, medians of
 * the rounds), the paired ratio (median of each round's tracked/untracked:
 * slow drifts in the machine's load cancel), the CPU time (user +
 * system of the process and all it waited for, from wait4()), which the
 * other jobs of a shared machine disturb less than the wall clock, and
 * the minor page faults of the same processes, which no load disturbs
 * (in a guest without nested paging a fault costs more than anything
 * else a start or a fork does).
 * A round alternates which side runs first.  No figure is an assertion.
 *
 *   run_procs ACTRACK [loop|fork|make|start]...   (default: all four)
 *
 * ACTRACK is the actrack executable; its preload is beside it (the build
 * tree).  RUN_PROCS_ROUNDS (default 7) sets the rounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "bench.h"

#define MAX_ROUNDS	31
#define TREE_FILES	30
#define START_EXECS	100

static char actrack[PATH_MAX];
static char preload[PATH_MAX];
static char arena[PATH_MAX];
static char tree[PATH_MAX];
static const char *empty_so;	/* $RUN_PROCS_EMPTY_SO */
static bool attach_at_start;	/* the exec'd image's pid in ACTRACK_IMAGE */

struct cost {
	double wall_ns;
	double cpu_ns;
	double faults;
};

static double tv_ns(const struct timeval *tv)
{
	return (double)tv->tv_sec * 1e9 + (double)tv->tv_usec * 1e3;
}

/*
 * The environment of one run, made before the fork: the child only
 * writes its pid into it, so that both sides pay the same for it and
 * nothing of the bench's own setenv() (a malloc() in the child, the C
 * library's pages it touches) is counted against the tracked side.
 * ACTRACK_IMAGE is always there: naming the child (attach_at_start), as
 * `actrack run` names its program, else as a tracked shell leaves it
 * for the images it starts (its own pid: another process's mark).
 */
#define MAX_ENV		1024
static char *run_env[MAX_ENV + 3];
static char env_ld_preload[PATH_MAX + 16];
static char env_image[64];

static void run_env_make(const char *env_preload)
{
	size_t n = 0;

	for (char **e = environ; *e && n < MAX_ENV; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) &&
		    strncmp(*e, "ACTRACK_IMAGE=", 14))
			run_env[n++] = *e;
	if (env_preload) {
		snprintf(env_ld_preload, sizeof(env_ld_preload),
			 "LD_PRELOAD=%s", env_preload);
		run_env[n++] = env_ld_preload;
	}
	snprintf(env_image, sizeof(env_image), "ACTRACK_IMAGE=%d 1",
		 (int)getpid());
	run_env[n++] = env_image;
	run_env[n] = NULL;
}

/* The child's own pid, in place: no allocation, no library call but one
 * system call. */
static void run_env_name_self(void)
{
	char *p = env_image + strlen("ACTRACK_IMAGE="), d[16];
	long v = syscall(SYS_getpid);
	int k = 0;

	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (k)
		*p++ = d[--k];
	*p = 0;
}

/* Run @argv (with @env_preload in LD_PRELOAD if set) in @dir; wait. */
static int run(char *const argv[], const char *dir, const char *env_preload,
	       struct cost *c)
{
	struct rusage ru;
	uint64_t t0;
	int status;
	pid_t pid;

	run_env_make(env_preload);
	t0 = bench_now_ns();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, 1);
			close(null);
		}
		if (dir && chdir(dir))
			_exit(126);
		if (attach_at_start)
			run_env_name_self();
		execve(argv[0], argv, run_env);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return -errno;
	c->wall_ns += (double)(bench_now_ns() - t0);
	c->cpu_ns += tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime);
	c->faults += (double)ru.ru_minflt;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "run_procs: %s: status %#x\n", argv[0], status);
		return -ECHILD;
	}
	return 0;
}

/* One side of a workload: @tracked under a fresh arena. */
typedef int (*side_fn)(bool tracked, struct cost *c);

static int fresh_arena(void)
{
	if (unlink(arena) && errno != ENOENT)
		return -errno;
	return 0;
}

#define EXEC_LOOP "i=0; while [ $i -lt 400 ]; do /bin/true; i=$((i + 1)); done"
#define FORK_LOOP "i=0; while [ $i -lt 400 ]; do ( : ); i=$((i + 1)); done"

/* `sh -c @script`, under `actrack run` (a fresh arena) when @tracked. */
static int sh_loop(const char *script, bool tracked, struct cost *c)
{
	char *plain[] = { "/bin/sh", "-c", (char *)script, NULL };
	char *under[] = { actrack, "run", "--", plain[0], plain[1],
			  plain[2], NULL };

	if (!tracked)
		return run(plain, NULL, NULL, c);
	return fresh_arena() ?: run(under, NULL, NULL, c);
}

static int exec_loop(bool tracked, struct cost *c)
{
	return sh_loop(EXEC_LOOP, tracked, c);
}

static int fork_loop(bool tracked, struct cost *c)
{
	return sh_loop(FORK_LOOP, tracked, c);
}

/* The loop with an empty preload (the floor) as its tracked side. */
static int exec_loop_floor(bool preloaded, struct cost *c)
{
	char *plain[] = { "/bin/sh", "-c", EXEC_LOOP, NULL };

	return run(plain, NULL, preloaded ? empty_so : NULL, c);
}

static int make_tree(bool tracked, struct cost *c)
{
	char *clean[] = { "/usr/bin/make", "-s", "clean", NULL };
	char *plain[] = { "/usr/bin/make", "-s", "-j2", NULL };
	char *under[] = { actrack, "run", "--", plain[0], plain[1],
			  plain[2], NULL };
	struct cost ignored = { 0, 0, 0 };
	int ret;

	ret = run(clean, tree, NULL, &ignored);
	if (ret)
		return ret;
	if (!tracked)
		return run(plain, tree, NULL, c);
	return fresh_arena() ?: run(under, tree, NULL, c);
}

static int start_true(bool tracked, struct cost *c)
{
	char *argv[] = { "/bin/true", NULL };
	struct cost sum = { 0, 0, 0 };
	int ret;

	if (tracked && (ret = fresh_arena()))
		return ret;
	for (int i = 0; i < START_EXECS; i++) {
		ret = run(argv, NULL, tracked ? preload : NULL, &sum);
		if (ret)
			return ret;
	}
	c->wall_ns += sum.wall_ns / START_EXECS;
	c->cpu_ns += sum.cpu_ns / START_EXECS;
	c->faults += sum.faults / START_EXECS;
	return 0;
}

/* A small C tree: TREE_FILES files of a few functions, one program. */
static int write_tree(void)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(tree, sizeof(tree), "/tmp/actrack-bench-procs.XXXXXX");
	if (!mkdtemp(tree))
		return -errno;
	snprintf(path, sizeof(path), "%s/Makefile", tree);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "OBJS := $(patsubst %%.c,%%.o,$(wildcard *.c))\n"
		   "prog: $(OBJS)\n\t$(CC) -o $@ $^\n"
		   "%%.o: %%.c\n\t$(CC) -O1 -c -o $@ $<\n"
		   "clean:\n\trm -f prog $(OBJS)\n");
	fclose(f);
	for (int i = 0; i < TREE_FILES; i++) {
		snprintf(path, sizeof(path), "%s/f%02d.c", tree, i);
		f = fopen(path, "w");
		if (!f)
			return -errno;
		fprintf(f, "#include <stdio.h>\n#include <string.h>\n");
		for (int j = 0; j < 8; j++)
			fprintf(f, "int f%d_%d(const char *s, int n)\n{\n"
				   "\tint h = %d;\n"
				   "\tfor (int k = 0; k < n; k++)\n"
				   "\t\th = h * 31 + s[k %% (strlen(s) + 1)];\n"
				   "\treturn h;\n}\n", i, j, j);
		if (!i)
			fprintf(f, "int main(void)\n{\n\tprintf(\"%%d\\n\", "
				   "f0_0(\"x\", 1));\n\treturn 0;\n}\n");
		fclose(f);
	}
	return 0;
}

static void remove_tree(void)
{
	char *argv[] = { "/bin/rm", "-rf", tree, NULL };
	struct cost ignored = { 0, 0, 0 };

	if (tree[0])
		run(argv, NULL, NULL, &ignored);
}

static int measure(const char *name, side_fn f, int rounds)
{
	double tw[MAX_ROUNDS], uw[MAX_ROUNDS], tc[MAX_ROUNDS], uc[MAX_ROUNDS];
	double pw[MAX_ROUNDS], pc[MAX_ROUNDS], tf[MAX_ROUNDS], uf[MAX_ROUNDS];
	char line[128];
	int ret = 0;

	for (int r = 0; r < rounds && !ret; r++) {
		struct cost t = { 0, 0, 0 }, u = { 0, 0, 0 };

		if (r % 2) {
			ret = f(true, &t) ?: f(false, &u);
		} else {
			ret = f(false, &u) ?: f(true, &t);
		}
		tw[r] = t.wall_ns / 1e6;
		uw[r] = u.wall_ns / 1e6;
		tc[r] = t.cpu_ns / 1e6;
		uc[r] = u.cpu_ns / 1e6;
		pw[r] = tw[r] / uw[r];
		pc[r] = tc[r] / uc[r];
		tf[r] = t.faults;
		uf[r] = u.faults;
	}
	if (ret) {
		printf("bench %s FAIL %s\n", name, strerror(-ret));
		return ret;
	}
	bench_line(name, bench_median(tw, rounds), "ms",
		   bench_median(uw, rounds));
	snprintf(line, sizeof(line), "%s_paired", name);
	bench_line(line, bench_median(pw, rounds), "ratio", 1);
	snprintf(line, sizeof(line), "%s_cpu", name);
	bench_line(line, bench_median(tc, rounds), "ms",
		   bench_median(uc, rounds));
	snprintf(line, sizeof(line), "%s_cpu_paired", name);
	bench_line(line, bench_median(pc, rounds), "ratio", 1);
	snprintf(line, sizeof(line), "%s_faults", name);
	bench_line(line, bench_median(tf, rounds), "faults",
		   bench_median(uf, rounds));
	return 0;
}

static bool want(int argc, char **argv, const char *what)
{
	if (argc <= 2)
		return true;
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], what))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *env = getenv("RUN_PROCS_ROUNDS");
	int rounds = env ? atoi(env) : 7, ret = 0;
	const char *slash;
	struct stat st;

	if (argc < 2) {
		fprintf(stderr,
			"usage: run_procs ACTRACK [loop|fork|make|start]...\n");
		return 2;
	}
	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 7;
	/* absolute: the make rounds run in the tree */
	if (!realpath(argv[1], actrack)) {
		fprintf(stderr, "run_procs: %s: %s\n", argv[1],
			strerror(errno));
		return 2;
	}
	slash = strrchr(actrack, '/');
	snprintf(preload, sizeof(preload), "%.*slibactrack-preload.so",
		 slash ? (int)(slash - actrack + 1) : 0, actrack);
	if (stat(preload, &st)) {
		printf("bench run_exec_loop_400 SKIP %s: %s\n", preload,
		       strerror(errno));
		return 0;
	}
	/* actrack run passes ACTRACK_ARENA on to the program: the file
	 * arena, as without the module. */
	snprintf(arena, sizeof(arena), "/dev/shm/actrack-bench-procs.%d",
		 (int)getpid());
	setenv("ACTRACK_ARENA", arena, 1);
	if (want(argc, argv, "loop")) {
		ret = measure("run_exec_loop_400", exec_loop, rounds) ?: ret;
		empty_so = getenv("RUN_PROCS_EMPTY_SO");
		if (!empty_so || access(empty_so, R_OK))
			printf("bench run_exec_loop_400_empty_preload SKIP no "
			       "$RUN_PROCS_EMPTY_SO\n");
		else
			ret = measure("run_exec_loop_400_empty_preload",
				      exec_loop_floor, rounds) ?: ret;
	}
	if (want(argc, argv, "fork"))
		ret = measure("run_fork_loop_400", fork_loop, rounds) ?: ret;
	if (want(argc, argv, "make")) {
		if (access("/usr/bin/make", X_OK) || write_tree()) {
			printf("bench run_make_j2_small_tree SKIP no make, or "
			       "no tree in /tmp\n");
		} else {
			ret = measure("run_make_j2_small_tree", make_tree,
				      rounds) ?: ret;
		}
		remove_tree();
	}
	if (want(argc, argv, "start")) {
		ret = measure("run_start_true", start_true, rounds) ?: ret;
		attach_at_start = true;
		ret = measure("run_start_true_attached", start_true, rounds) ?:
		      ret;
		attach_at_start = false;
	}
	unlink(arena);
	return ret ? 1 : 0;
}
