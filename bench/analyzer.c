// SPDX-License-Identifier: MIT
/*
 * The analyzer at scale, on file arenas (host):
 *
 * 1. 1,000 threads in 100 live processes: 100 children attach to one file
 *    arena (modules recorded, as by default), each runs 10 threads that
 *    push a task, a held lock, a lock wait and annotate them, then block.
 *    Timed: actrack_snapshot_take() of that arena (goal <= 5 ms), `actrack
 *    dump` and `actrack hangs` of it.  Baseline: one memcpy of the
 *    arena's used bytes, the floor of any reader.
 * 2. A full 64 MiB arena: written with the arena core as libactrack
 *    writes records (process record, 10 trackers of 64 slots per process,
 *    fake owners that never ran), until an allocation fails.  64 slots,
 *    the figures of docs/benchmarks.md (when every allocation walked the
 *    whole list, 8-slot trackers took minutes to fill; bench/alloc times
 *    the allocator now).  The failing allocation at full still scans the
 *    whole list, to be sure nothing is free: its cost is printed
 *    (analyzer_full64m_alloc_walk).  Every
 *    process is a 10-thread lock cycle, so `hangs` has a deadlock per
 *    process to find.  Timed: snapshot, `actrack dump`, `actrack hangs`
 *    (each command capped at CLI_TIMEOUT s); baseline: the memcpy again.
 *
 * usage: analyzer ACTRACK_CLI.  Medians (snapshot: 9 runs; commands: 3
 * on the small arena, 1 on the full one); never an assertion.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "actrack.h"
#include "arena.h"
#include "bench.h"

#define PROCS		100
#define THREADS		10
#define CLI_TIMEOUT	120

static const char *cli_path;
static int release_fd = -1;	/* children block reading it */

struct tharg {
	int idx;
	pthread_mutex_t *locks;
};

static pthread_barrier_t ready_bar;

static void annotate_and_wait(int idx, pthread_mutex_t *locks)
{
	char c;
	uint32_t t1 = actrack_push_task(1000 + idx);
	uint32_t t2 = actrack_push_lock_held(&locks[idx]);
	uint32_t t3 = actrack_push_lock_acquire(&locks[(idx + 1) % THREADS]);

	actrack_set_uint(actrack_activity_data(t1), "request", idx);
	actrack_set_string(actrack_activity_data(t1), "url",
			   "GET /index.html HTTP/1.1");
	pthread_barrier_wait(&ready_bar);
	/* Stay in the activities until the parent lets go. */
	if (read(release_fd, &c, 1) < 0)
		c = 0;
	actrack_pop(t3);
	actrack_pop(t2);
	actrack_pop(t1);
}

static void *thread_main(void *arg)
{
	struct tharg *a = arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%d", a->idx);
	actrack_thread_init(name);
	annotate_and_wait(a->idx, a->locks);
	return NULL;
}

static void child(const char *path, int ready_w)
{
	static pthread_mutex_t locks[THREADS];
	struct tharg args[THREADS];
	pthread_t th[THREADS];
	pthread_attr_t attr;
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path,
		.flags = ACTRACK_INIT_NO_MODULE,
	};

	if (actrack_init(&o) || actrack_thread_init("main"))
		_exit(1);
	actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
	actrack_set_string(actrack_process_data(), "role", "bench");
	pthread_barrier_init(&ready_bar, NULL, THREADS);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 1; i < THREADS; i++) {
		args[i] = (struct tharg){ i, locks };
		pthread_create(&th[i], &attr, thread_main, &args[i]);
	}
	/* The barrier lets all threads, main included, finish pushing. */
	{
		char c = 1;
		uint32_t t1 = actrack_push_task(1000);
		uint32_t t2 = actrack_push_lock_held(&locks[0]);
		uint32_t t3 = actrack_push_lock_acquire(&locks[1]);

		pthread_barrier_wait(&ready_bar);
		if (write(ready_w, &c, 1) != 1)
			_exit(1);
		if (read(release_fd, &c, 1) < 0)
			c = 0;
		actrack_pop(t3);
		actrack_pop(t2);
		actrack_pop(t1);
	}
	for (int i = 1; i < THREADS; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

/* Median of @runs runs of actrack_snapshot_take(@path); *@used its size. */
static double time_snapshot(const char *path, int runs, uint32_t *used,
			    uint32_t *threads)
{
	double r[16];

	for (int k = 0; k < runs; k++) {
		struct actrack_snapshot *s;
		uint64_t t0 = bench_now_ns();
		int ret = actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE,
						&s);

		r[k] = (double)(bench_now_ns() - t0) / 1e6;
		if (ret) {
			fprintf(stderr, "snapshot: %s\n", strerror(-ret));
			return -1;
		}
		*used = s->used_bytes;
		*threads = 0;
		for (uint32_t i = 0; i < s->nr_processes; i++)
			*threads += s->processes[i].nr_threads;
		actrack_snapshot_free(s);
	}
	return bench_median(r, runs);
}

/* The floor of any reader: copy @used bytes of @path once, in ms. */
static double time_memcpy(const char *path, uint32_t used)
{
	int fd = open(path, O_RDONLY);
	void *m, *buf = malloc(used);
	double r[9];

	if (fd < 0 || !buf)
		return -1;
	m = mmap(NULL, used, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	for (int k = 0; k < 9; k++) {
		uint64_t t0 = bench_now_ns();

		memcpy(buf, m, used);
		__asm__ volatile("" :: "r"(buf) : "memory");
		r[k] = (double)(bench_now_ns() - t0) / 1e6;
	}
	munmap(m, used);
	free(buf);
	return bench_median(r, 9);
}

/* `actrack --arena @path ARGS...` with output to /dev/null: ms, or -1. */
static double time_cli(const char *path, const char *const *args, int runs)
{
	double r[8];

	for (int k = 0; k < runs; k++) {
		const char *argv[12] = { cli_path, "--arena", path };
		uint64_t t0 = bench_now_ns();
		int status, n = 3;
		pid_t pid;

		for (int i = 0; args[i]; i++)
			argv[n++] = args[i];
		pid = fork();
		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);

			dup2(null, 1);
			alarm(CLI_TIMEOUT);
			execv(cli_path, (char **)argv);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return -1;
		r[k] = (double)(bench_now_ns() - t0) / 1e6;
		/* dump: 0; hangs: 3 (hangs found) */
		if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 &&
					   WEXITSTATUS(status) != 3)) {
			fprintf(stderr, "actrack %s: %s %d\n", args[0],
				WIFEXITED(status) ? "exit" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status) :
				WTERMSIG(status));
			return -1;
		}
	}
	return bench_median(r, runs);
}

static const char *const dump_args[] = { "dump", NULL };
static const char *const hangs_args[] = { "hangs", "--for", "1s",
					  "--interval", "1", NULL };

static void print_cli(const char *name, double ms, double base, double sub)
{
	if (ms < 0)
		printf("bench %s FAIL (exit status above, or over %d s)\n",
		       name, CLI_TIMEOUT);
	else
		bench_line(name, ms - sub, "ms", base);
}

static int live_processes(const char *path)
{
	int ready[2], rel[2], status, got = 0;
	pid_t pids[PROCS];
	uint32_t used = 0, threads = 0;
	double snap, copy;
	char c;

	if (pipe(ready) || pipe(rel))
		return 1;
	release_fd = rel[0];
	for (int i = 0; i < PROCS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			close(ready[0]);
			close(rel[1]);
			child(path, ready[1]);
		}
	}
	close(ready[1]);
	close(rel[0]);
	while (got < PROCS && read(ready[0], &c, 1) == 1)
		got++;
	if (got < PROCS) {
		fprintf(stderr, "only %d of %d processes ready\n", got, PROCS);
	} else {
		snap = time_snapshot(path, 9, &used, &threads);
		copy = time_memcpy(path, used);
		bench_line("analyzer_snapshot_1000_threads", snap, "ms", copy);
		bench_line("analyzer_snapshot_threads_seen", threads,
			   "threads", PROCS * THREADS);
		print_cli("analyzer_dump_1000_threads",
			  time_cli(path, dump_args, 3), copy, 0);
		/* minus the 1 ms between its two snapshots */
		print_cli("analyzer_hangs_1000_threads",
			  time_cli(path, hangs_args, 3), copy, 1);
	}
	close(rel[1]);		/* every blocked read returns 0 */
	for (int i = 0; i < PROCS; i++)
		if (pids[i] > 0)
			waitpid(pids[i], &status, 0);
	close(ready[0]);
	return got < PROCS;
}

/* ---- a full 64 MiB arena ------------------------------------------------ */

static uint32_t publish(struct actrack_arena *a, struct actrack_owner *o)
{
	uint32_t id = actrack_arena_new_data_id(a);

	__atomic_store_n(&o->data_id, id, __ATOMIC_RELEASE);
	return id;
}

/* One fake process and its threads; false when the arena is full. */
static bool fake_process(struct actrack_arena *a, uint32_t pid,
			 uint32_t pid_ns, uint64_t then)
{
	struct actrack_owner own = {
		.pid = pid, .pid_ns = pid_ns, .start_ticks = 100000 + pid,
	};
	struct actrack_process *p;
	void *payload;
	const uint32_t slots = ACTRACK_THREAD_MAX_SLOTS;

	if (!actrack_arena_alloc_owned(a, ACTRACK_TYPE_PROCESS, sizeof(*p),
				       &own, &payload))
		return false;
	p = payload;
	p->phase = ACTRACK_PHASE_MAIN_LOOP_STARTED;
	p->launch_time_ns = then;
	p->cmdline_size = (uint32_t)snprintf(p->cmdline, sizeof(p->cmdline),
					     "bench-fake %u", pid) + 1;
	publish(a, &p->owner);
	for (uint32_t t = 0; t < THREADS; t++) {
		struct actrack_thread *th;
		struct actrack_activity *s;

		own.tid = pid + t;
		if (!actrack_arena_alloc_owned(a, ACTRACK_TYPE_THREAD,
				sizeof(*th) + slots * sizeof(*s), &own,
				&payload))
			return false;
		th = payload;
		snprintf(th->name, sizeof(th->name), "worker-%u", t);
		th->start_time_ns = then;
		th->slot_count = slots;
		s = ACTRACK_THREAD_SLOTS(th);
		/* task, holds lock t, waits for lock t+1: a cycle per process */
		s[0] = (struct actrack_activity){ .time_ns = then,
			.type = ACTRACK_ACT_TASK_RUN, .object = 1000 + t };
		s[1] = (struct actrack_activity){ .time_ns = then,
			.type = ACTRACK_ACT_LOCK_HELD,
			.object = 0x10000000ULL * pid + 64 * t };
		s[2] = (struct actrack_activity){ .time_ns = then,
			.type = ACTRACK_ACT_LOCK_ACQUIRE,
			.object = 0x10000000ULL * pid + 64 * ((t + 1) % THREADS) };
		th->depth = 3;
		publish(a, &th->owner);
	}
	return true;
}

static int full_arena(const char *path)
{
	const uint32_t size = 64U << 20;
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path, .file_size = size,
		.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
	};
	struct actrack_arena a = { .size = size, .writable = true };
	struct stat st;
	uint32_t pid = 100000, procs = 0, used = 0, threads = 0;
	uint64_t then = bench_now_ns() - 10ULL * 1000000000ULL;
	double snap, copy, fill_ms, walk_ms;
	uint64_t t0;
	pid_t c;
	int fd, status;

	/* A child creates and formats the arena, as any first process would. */
	c = fork();
	if (c == 0)
		_exit(actrack_init(&o) ? 1 : 0);
	if (c < 0 || waitpid(c, &status, 0) != c || status)
		return 1;
	fd = open(path, O_RDWR);
	if (fd < 0 || fstat(fd, &st) || st.st_size != size)
		return 1;
	a.base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (a.base == MAP_FAILED)
		return 1;
	if (stat("/proc/self/ns/pid", &st))
		st.st_ino = 0;
	t0 = bench_now_ns();
	while (fake_process(&a, pid, (uint32_t)st.st_ino, then)) {
		pid += THREADS + 1;
		procs++;
	}
	fill_ms = (double)(bench_now_ns() - t0) / 1e6;
	/* One more allocation at full: a walk of every block, then -ENOSPC. */
	t0 = bench_now_ns();
	actrack_arena_alloc(&a, ACTRACK_TYPE_THREAD, 640);
	walk_ms = (double)(bench_now_ns() - t0) / 1e6;
	munmap(a.base, size);

	snap = time_snapshot(path, 3, &used, &threads);
	copy = time_memcpy(path, used);
	bench_line("analyzer_full64m_threads", threads, "threads",
		   procs * THREADS);
	bench_line("analyzer_full64m_snapshot", snap, "ms", copy);
	bench_line("analyzer_full64m_fill", fill_ms, "ms", copy);
	bench_line("analyzer_full64m_alloc_walk", walk_ms, "ms", copy);
	print_cli("analyzer_full64m_dump", time_cli(path, dump_args, 1), copy,
		  0);
	print_cli("analyzer_full64m_hangs", time_cli(path, hangs_args, 1),
		  copy, 1);
	return 0;
}

int main(int argc, char **argv)
{
	char path[128];
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: analyzer ACTRACK_CLI\n");
		return 2;
	}
	cli_path = argv[1];
	signal(SIGPIPE, SIG_IGN);
	snprintf(path, sizeof(path), "/tmp/actrack-bench-an-%d", (int)getpid());
	{
		/* 1,000 threads with modules and user data fit in 8 MiB. */
		struct actrack_opts o = {
			.sz = sizeof(o), .arena_path = path,
			.file_size = 8U << 20,
			.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
		};
		pid_t c = fork();
		int status;

		if (c == 0)
			_exit(actrack_init(&o) ? 1 : 0);
		if (c < 0 || waitpid(c, &status, 0) != c || status)
			return 1;
	}
	ret = live_processes(path);
	unlink(path);
	snprintf(path, sizeof(path), "/tmp/actrack-bench-full-%d",
		 (int)getpid());
	ret |= full_arena(path);
	unlink(path);
	return ret;
}
