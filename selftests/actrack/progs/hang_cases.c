// SPDX-License-Identifier: MIT
/*
 * An unmodified program for the hangs_corpus test (built without
 * actrack): waits that are not hangs, and hangs, one per mode.  Each
 * prints "ready" when it is about to enter its wait, then never returns
 * from it (the test kills it).
 *
 *   hang_cases select    sleeps in select(0, NULL, NULL, NULL, timeout),
 *                        as PostgreSQL's pg_usleep() does.
 *   hang_cases reaper    waitpid(-1) for a child that spins on the CPU
 *                        (and never makes a tracked call), after an
 *                        earlier child that did has exited.
 *   hang_cases epoll     epoll_wait() with no timeout on a listening
 *                        socket, as an idle server's event loop.
 *   hang_cases timer     poll() with a 10 minute timeout on a pipe only
 *                        it could write to: a timer, not a hang.
 *   hang_cases eventfd   epoll_wait() with no timeout on an eventfd
 *                        nobody writes: a wait only an insider can end.
 *   hang_cases pollpipe  poll() with no timeout on a pipe only it could
 *                        write to.
 *   hang_cases readpipe  read() of a pipe only it could write to.
 *   hang_cases joinlock  the main thread holds a mutex and joins a
 *                        thread that wants it: a deadlock through a join.
 *   hang_cases sleeper   a thread sleeps forever holding a mutex that
 *                        another thread waits for.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>

static void ready(void)
{
	printf("ready\n");
	fflush(stdout);
}

static int run_select(void)
{
	ready();
	for (;;) {
		struct timeval tv = { 600, 0 };

		select(0, NULL, NULL, NULL, &tv);
	}
	return 1;
}

static int run_reaper(void)
{
	volatile unsigned long n = 0;
	pid_t pid = fork();

	/* First a child that makes a tracked call and leaves without the
	 * library's exit handlers: its records stay, as those of the
	 * commands a shell ran before. */
	if (pid == 0) {
		usleep(1);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		for (;;)
			n++;
	ready();
	waitpid(-1, NULL, 0);
	return 1;
}

/* epoll_wait() with no timeout, forever, on a set of @fd alone. */
static int epoll_forever(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	struct epoll_event out;
	int ep = epoll_create1(0);

	if (fd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		return 1;
	ready();
	for (;;)
		epoll_wait(ep, &out, 1, -1);
	return 1;
}

static int run_epoll(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(s, 8))
		return 1;
	return epoll_forever(s);
}

static int run_eventfd(void)
{
	return epoll_forever(eventfd(0, 0));
}

/* poll() of a pipe only it could write to, forever, each call with
 * @timeout_ms (-1: none). */
static int poll_own_pipe(int timeout_ms)
{
	struct pollfd p = { .events = POLLIN };
	int fds[2];

	if (pipe(fds))
		return 1;
	p.fd = fds[0];
	ready();
	for (;;)
		poll(&p, 1, timeout_ms);
	return 1;
}

static int run_timer(void)
{
	return poll_own_pipe(600 * 1000);
}

static int run_pollpipe(void)
{
	return poll_own_pipe(-1);
}

static int run_readpipe(void)
{
	int fds[2];
	char c;

	if (pipe(fds))
		return 1;
	ready();
	for (;;)
		if (read(fds[0], &c, 1) < 0)
			continue;
	return 1;
}

static pthread_mutex_t the_lock = PTHREAD_MUTEX_INITIALIZER;

static void *want_lock(void *arg)
{
	pthread_mutex_lock(&the_lock);
	pthread_mutex_unlock(&the_lock);
	return arg;
}

static int run_joinlock(void)
{
	pthread_t t;

	pthread_mutex_lock(&the_lock);
	pthread_create(&t, NULL, want_lock, NULL);
	ready();
	pthread_join(t, NULL);
	return 1;
}

static pthread_barrier_t held;

static void *hold_and_sleep(void *arg)
{
	pthread_mutex_lock(&the_lock);
	pthread_barrier_wait(&held);
	for (;;)
		sleep(3600);
	return arg;
}

static int run_sleeper(void)
{
	pthread_t t;

	pthread_barrier_init(&held, NULL, 2);
	pthread_create(&t, NULL, hold_and_sleep, NULL);
	pthread_barrier_wait(&held);
	ready();
	pthread_mutex_lock(&the_lock);
	return 1;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(void);
	} modes[] = {
		{ "select", run_select }, { "reaper", run_reaper },
		{ "epoll", run_epoll }, { "timer", run_timer },
		{ "eventfd", run_eventfd }, { "pollpipe", run_pollpipe },
		{ "readpipe", run_readpipe },
		{ "joinlock", run_joinlock },
		{ "sleeper", run_sleeper },
	};

	for (size_t i = 0; argc == 2 && i < sizeof(modes) / sizeof(*modes);
	     i++)
		if (!strcmp(argv[1], modes[i].name))
			return modes[i].run();
	fprintf(stderr, "usage: hang_cases select|reaper|epoll|timer|"
		"eventfd|pollpipe|readpipe|joinlock|sleeper\n");
	return 2;
}
