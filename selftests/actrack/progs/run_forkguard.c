// SPDX-License-Identifier: MIT
/*
 * An unmodified program for run_preload: a signal handler that
 * interrupted the tracking library's own bookkeeping forks (as a server's
 * master does from its signal handlers).  To land the signal there every
 * time, the program defines malloc(), which the library's pthread_create()
 * wrapper calls inside its bookkeeping: armed, it raises SIGUSR1 first.
 * The handler forks; the child prints "child PID" and "forked", then reads
 * stdin until it is closed; the parent carries on, then waits for the
 * child.  `run_forkguard unblock`: the child first unblocks SIGUSR1, as a
 * server's child that lives on in the handler does (PostgreSQL's
 * backends), so that nothing says it runs in a handler any more.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

extern void *__libc_malloc(size_t n);

static volatile sig_atomic_t armed;
static pid_t child;
static int unblock;

void *malloc(size_t n)
{
	if (armed) {
		armed = 0;
		raise(SIGUSR1);
	}
	return __libc_malloc(n);
}

static void on_usr1(int sig)
{
	char line[64], c;
	int len;

	(void)sig;
	child = fork();
	if (child)
		return;
	if (unblock) {
		sigset_t s;

		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
	}
	len = snprintf(line, sizeof(line), "child %d\nforked\n",
		       (int)getpid());
	if (write(1, line, (size_t)len) != len)
		_exit(1);
	while (read(0, &c, 1) > 0)
		;
	_exit(0);
}

static void *run_forkguard_thread(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t t;
	int st;

	unblock = argc > 1 && !strcmp(argv[1], "unblock");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	armed = 1;
	if (pthread_create(&t, NULL, run_forkguard_thread, NULL))
		return 1;
	pthread_join(t, NULL);
	if (child <= 0 || waitpid(child, &st, 0) != child)
		return 2;
	return 0;
}
