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

/*
 * Why `actrack run -- @prog...` is refused here (the CLI's exit 126 and
 * its message: a statically linked busybox /bin/sh in the VM, no preload
 * library beside the CLI in the kselftest layout), or NULL.  The CLI is
 * asked, so that its rules stay the only ones; the probe runs on an arena
 * that cannot exist, so it writes nothing anywhere.  Needs run_cli()
 * (snapshot_helpers.h).
 */
static inline const char *run_refused(const char *prog, const char *arg)
{
	char *argv[] = { "actrack", "run", "--", (char *)prog, (char *)arg,
			 arg ? "true" : NULL, NULL };
	static char why[256];
	struct run r;

	why[0] = 0;
	if (run_cli(&r, "ACTRACK_ARENA=/nonexistent/actrack-probe", argv))
		return "cannot run the CLI";
	if (r.status == 126)
		snprintf(why, sizeof(why), "%.*s", (int)strcspn(r.err, "\n"),
			 r.err);
	run_free(&r);
	return why[0] ? why : NULL;
}

#endif /* ACTRACK_PROGS_UTIL_H */
