/* SPDX-License-Identifier: MIT */
/*
 * What the tests that run real programs share: the unmodified programs
 * built beside the tests (build/selftests/progs/NAME, without actrack),
 * and a loopback port for a server.
 */
#ifndef ACTRACK_PROGS_UTIL_H
#define ACTRACK_PROGS_UTIL_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/*
 * progs/@name beside this test binary into @buf.
 * Return: NULL, or why it cannot be used (for a SKIP).
 */
static inline const char *progs_path(char *buf, size_t len, const char *name)
{
	char *slash;
	ssize_t n;

	n = readlink("/proc/self/exe", buf, len);
	if (n <= 0 || (size_t)n >= len)
		return "no /proc/self/exe";
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash || snprintf(slash, len - (size_t)(slash - buf),
			       "/progs/%s", name) >=
	    (int)(len - (size_t)(slash - buf)))
		return "path too long";
	if (access(buf, X_OK))
		return "the program is not built beside the test (progs/)";
	return NULL;
}

/* A loopback port nothing listens on now (the kernel's pick for a bind
 * to 0), or -1. */
static inline int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int s, port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	if (!bind(s, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(s, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(s);
	return port;
}

#endif /* ACTRACK_PROGS_UTIL_H */
