// SPDX-License-Identifier: MIT
/*
 * Journal entries in the native protocol (journal_native.h), for the
 * tests that bind the journal's socket themselves.
 */
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "journal_native.h"

const char *field(const struct entry *e, const char *name, char *out,
		  size_t out_len)
{
	size_t nl = strlen(name), i = 0;

	while (i < e->len) {
		const char *line = e->buf + i;
		const char *end = memchr(line, '\n', e->len - i);
		const char *eq;
		size_t vlen;
		uint64_t n;

		if (!end)
			return NULL;
		eq = memchr(line, '=', (size_t)(end - line));
		if (eq) {
			vlen = (size_t)(end - eq - 1);
			if ((size_t)(eq - line) == nl &&
			    !memcmp(line, name, nl)) {
				if (vlen >= out_len)
					return NULL;
				memcpy(out, eq + 1, vlen);
				out[vlen] = '\0';
				return out;
			}
			i = (size_t)(end - e->buf) + 1;
			continue;
		}
		/* NAME\n, le64 length, bytes, \n */
		i = (size_t)(end - e->buf) + 1;
		if (i + 8 > e->len)
			return NULL;
		memcpy(&n, e->buf + i, 8);
		i += 8;
		if (n > e->len - i)
			return NULL;
		if ((size_t)(end - line) == nl && !memcmp(line, name, nl)) {
			if (n >= out_len)
				return NULL;
			memcpy(out, e->buf + i, n);
			out[n] = '\0';
			return out;
		}
		i += n + 1;
	}
	return NULL;
}

int journal_socket_bind(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sz = 8 * 1024 * 1024, s;

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	mkdir("/run", 0755);
	mkdir("/run/systemd", 0755);
	mkdir(JOURNAL_DIR, 0755);
	if (mount("tmpfs", JOURNAL_DIR, "tmpfs", 0, "mode=0755"))
		return -errno;
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", JOURNAL_SOCKET);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(s);
		return err;
	}
	return s;
}

ssize_t journal_entry_recv(int sock, struct entry *e, int ms)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { e->buf, sizeof(e->buf) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct pollfd p = { .fd = sock, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t n;
	int fd = -1;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	if (fd >= 0) {
		n = pread(fd, e->buf, sizeof(e->buf), 0);
		if (n < 0)
			n = -errno;
		close(fd);
	}
	e->len = n > 0 ? (size_t)n : 0;
	return n;
}

int journal_entry_to_file(const struct entry *e, uint64_t realtime_us,
			  const char *remote, const char *journal)
{
	char exp[4096], opt[4200];
	pid_t pid;
	FILE *f;
	int st;

	snprintf(exp, sizeof(exp), "%s.export", journal);
	snprintf(opt, sizeof(opt), "--output=%s", journal);
	f = fopen(exp, "w");
	if (!f)
		return -1;
	fprintf(f, "__REALTIME_TIMESTAMP=%llu\n__MONOTONIC_TIMESTAMP=1\n"
		"_BOOT_ID=0123456789abcdef0123456789abcdef\n",
		(unsigned long long)realtime_us);
	fwrite(e->buf, 1, e->len, f);
	fputc('\n', f);
	if (fclose(f))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		execl(remote, remote, opt, exp, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return -1;
	return 0;
}
