/* SPDX-License-Identifier: MIT */
/*
 * Journal entries as libsystemd's sd_journal_sendv() sends them to
 * /run/systemd/journal/socket (the native protocol: NAME=value lines; NAME,
 * a 64-bit little-endian length and the bytes for values with newlines),
 * for tests that bind that socket themselves instead of a journald.  The
 * same syntax is the body of an entry in Journal Export Format.
 */
#ifndef ACTRACK_JOURNAL_NATIVE_H
#define ACTRACK_JOURNAL_NATIVE_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define ENTRY_MAX	(1024 * 1024)
#define JOURNAL_DIR	"/run/systemd/journal"
#define JOURNAL_SOCKET	JOURNAL_DIR "/socket"

struct entry {
	size_t len;
	char buf[ENTRY_MAX];
};

/* Value of field @name (NUL-terminated copy in @out), or NULL. */
static inline const char *field(const struct entry *e, const char *name,
				char *out, size_t out_len)
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

/*
 * journal_socket_bind() - the calling process in a mount namespace of its
 * own (the harness forks one per test), a tmpfs on JOURNAL_DIR and the
 * datagram socket sd_journal_sendv() writes to bound there, with an 8 MiB
 * receive buffer (root: SO_RCVBUFFORCE), so that what it and its
 * children send to the journal comes to us.  Needs root.
 * Return: the socket, or -errno.
 */
static inline int journal_socket_bind(void)
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

#endif /* ACTRACK_JOURNAL_NATIVE_H */
