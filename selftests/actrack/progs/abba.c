// SPDX-License-Identifier: MIT
/*
 * An unmodified program for the run_preload test: built without actrack
 * (no header, no library), it only uses the C library.
 *
 *   abba threads   two threads take two mutexes in opposite orders and
 *                  deadlock; prints "deadlocked" when both are about to
 *                  block, then hangs until killed.
 *   abba procs     the same with two processes and two process-shared
 *                  mutexes in a shared mapping made before fork().
 *   abba echo ARGS prints its arguments, one per line, and exits 7.
 *   abba errno     checks that errno is what the C library says after
 *                  calls that fail, and that a successful call leaves it;
 *                  prints "errno ok", exits 0 (1 and a message if not).
 *   abba child PROG ARGS  runs PROG ARGS (fork+exec), waits, and exits
 *                  with its status.
 *   abba wait      prints "waiting" and reads stdin until it is closed.
 *   abba join      joins a thread that never makes a tracked call (it
 *                  waits in a raw pause system call); prints "joining".
 *   abba names     names a thread with pthread_setname_np() and the main
 *                  thread with prctl(PR_SET_NAME), both after they made
 *                  calls, prints "named", reads stdin until it is closed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static pthread_mutex_t *lock_a, *lock_b;
static pthread_barrier_t both_hold;

/* Each blocks in a call of its own (returning arg after it, so that the
 * call is no tail call): its origin names it, whatever the compiler. */
static void *abba_first(void *arg)
{
	pthread_mutex_lock(lock_a);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(lock_b);
	return arg;
}

static void *abba_second(void *arg)
{
	pthread_mutex_lock(lock_b);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(lock_a);
	return arg;
}

static int run_threads(void)
{
	static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
	static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
	pthread_t t1, t2;

	lock_a = &a;
	lock_b = &b;
	pthread_barrier_init(&both_hold, NULL, 3);
	pthread_create(&t1, NULL, abba_first, NULL);
	pthread_create(&t2, NULL, abba_second, NULL);
	pthread_barrier_wait(&both_hold);
	printf("deadlocked\n");
	fflush(stdout);
	pthread_join(t1, NULL);
	return 1;
}

struct shared {
	pthread_mutex_t a, b;
	pthread_barrier_t both_hold;
};

/* As abba_first/abba_second, one per process. */
static int __attribute__((noinline)) parent_side(struct shared *s)
{
	pthread_mutex_lock(&s->a);
	pthread_barrier_wait(&s->both_hold);
	printf("deadlocked\n");
	fflush(stdout);
	pthread_mutex_lock(&s->b);
	return 1;
}

static int __attribute__((noinline)) child_side(struct shared *s)
{
	pthread_mutex_lock(&s->b);
	pthread_barrier_wait(&s->both_hold);
	pthread_mutex_lock(&s->a);
	return 1;
}

static int run_procs(void)
{
	pthread_mutexattr_t ma;
	pthread_barrierattr_t ba;
	struct shared *s;
	pid_t pid;

	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return 1;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&s->a, &ma);
	pthread_mutex_init(&s->b, &ma);
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&s->both_hold, &ba, 2);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		_exit(child_side(s));
	printf("child %d\n", (int)pid);
	return parent_side(s);
}

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf(__VA_ARGS__);				\
			return 1;					\
		}							\
	} while (0)

static int run_errno(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	char c;
	int p[2];

	errno = 0;
	CHECK(read(-1, &c, 1) == -1 && errno == EBADF, "read: %d\n", errno);
	errno = 0;
	CHECK(write(12345, &c, 1) == -1 && errno == EBADF, "write: %d\n",
	      errno);
	errno = 0;
	CHECK(waitpid(-1, NULL, 0) == -1 && errno == ECHILD, "waitpid: %d\n",
	      errno);
	CHECK(pipe(p) == 0, "pipe\n");
	errno = 1234;
	CHECK(write(p[1], "x", 1) == 1 && errno == 1234, "write ok: %d\n",
	      errno);
	CHECK(read(p[0], &c, 1) == 1 && errno == 1234, "read ok: %d\n", errno);
	CHECK(pthread_mutex_lock(&m) == 0 && errno == 1234, "lock: %d\n",
	      errno);
	CHECK(pthread_mutex_trylock(&m) == EBUSY && errno == 1234,
	      "trylock: %d\n", errno);
	CHECK(pthread_mutex_unlock(&m) == 0 && errno == 1234, "unlock: %d\n",
	      errno);
	errno = 0;
	CHECK(fcntl(p[0], F_GETFD) == 0 && fcntl(-1, F_GETFD) == -1 &&
	      errno == EBADF, "fcntl: %d\n", errno);
	printf("errno ok\n");
	return 0;
}

static int started;

static void *pauser(void *arg)
{
	__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
	syscall(SYS_pause);
	return arg;
}

static int run_join(void)
{
	pthread_t th;

	pthread_create(&th, NULL, pauser, NULL);
	/* It runs its own code (no library call on either side). */
	while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		syscall(SYS_sched_yield);
	printf("joining\n");
	fflush(stdout);
	pthread_join(th, NULL);
	return 1;
}

static void *named(void *arg)
{
	int *p = arg;
	char c;

	write(p[3], "x", 1);	/* its first calls are made */
	read(p[0], &c, 1);
	pthread_setname_np(pthread_self(), "by-setname");
	write(p[3], "x", 1);
	read(p[0], &c, 1);	/* until the pipe is closed */
	return NULL;
}

static int run_names(void)
{
	pthread_t th;
	char buf[64];
	int p[4];

	if (pipe(p) || pipe(p + 2))
		return 1;
	pthread_create(&th, NULL, named, p);
	read(p[2], buf, 1);	/* its first calls were made */
	write(p[1], "x", 1);
	read(p[2], buf, 1);	/* it renamed itself */
	prctl(PR_SET_NAME, "by-prctl", 0, 0, 0);
	printf("named\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	close(p[1]);
	pthread_join(th, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "threads"))
		return run_threads();
	if (argc >= 2 && !strcmp(argv[1], "procs"))
		return run_procs();
	if (argc >= 2 && !strcmp(argv[1], "errno"))
		return run_errno();
	if (argc >= 2 && !strcmp(argv[1], "echo")) {
		for (int i = 2; i < argc; i++)
			printf("%s\n", argv[i]);
		return 7;
	}
	if (argc >= 3 && !strcmp(argv[1], "child")) {
		int st;
		pid_t pid = fork();

		if (pid == 0) {
			execv(argv[2], argv + 2);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 125;
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	if (argc >= 2 && !strcmp(argv[1], "wait")) {
		char buf[64];

		printf("waiting\n");
		fflush(stdout);
		while (read(0, buf, sizeof(buf)) > 0)
			;
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "names"))
		return run_names();
	if (argc >= 2 && !strcmp(argv[1], "join"))
		return run_join();
	fprintf(stderr, "usage: abba threads|procs|errno|echo|child|wait|"
		"names|join\n");
	return 2;
}
