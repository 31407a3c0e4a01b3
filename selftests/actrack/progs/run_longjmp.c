// SPDX-License-Identifier: MIT
/*
 * An unmodified program for run_preload: its main thread blocks in read()
 * on a pipe nobody writes; a signal handler siglongjmp()s out of it (a
 * helper thread sends the signal once /proc says the main thread is in
 * the read system call).  It then prints "jumped" with write(2), a
 * tracked call, and waits in a raw
 * system call that nothing tracks, until killed.  Prints "fd N" (the
 * pipe's read end) first.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

static sigjmp_buf env;
static pid_t main_tid;

static void on_usr1(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

/* Is thread @tid in system call @nr (/proc/self/task/TID/syscall)? */
static int in_syscall(pid_t tid, long nr)
{
	char path[64], buf[64];
	FILE *f;
	long got = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f))
		got = strtol(buf, NULL, 10);
	fclose(f);
	return got == nr;
}

static void *run_longjmp_kicker(void *arg)
{
	pthread_t main_thread = *(pthread_t *)arg;
	struct timespec ms = { 0, 1000 * 1000 };

	while (!in_syscall(main_tid, SYS_read))
		syscall(SYS_nanosleep, &ms, NULL);
	pthread_kill(main_thread, SIGUSR1);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t self = pthread_self(), t;
	int p[2];
	char c;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	if (pipe(p))
		return 1;
	printf("fd %d\n", p[0]);
	fflush(stdout);
	main_tid = (pid_t)syscall(SYS_gettid);
	if (!sigsetjmp(env, 1)) {
		if (pthread_create(&t, NULL, run_longjmp_kicker, &self))
			return 1;
		if (read(p[0], &c, 1) >= 0)
			return 2;
		return 3;
	}
	/* write(2), not stdio (whose writes the C library makes to itself):
	 * a tracked call, the first after the jump. */
	if (write(1, "jumped\n", 7) != 7)
		return 4;
	for (;;)
		syscall(SYS_ppoll, NULL, 0, NULL, NULL, 0);
}
