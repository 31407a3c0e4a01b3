// SPDX-License-Identifier: MIT
/*
 * Journal entries in the native protocol (journal_native.h), for the
 * tests that bind the journal's socket themselves, and journal files made
 * of such entries.
 */
#include <endian.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include "journal_native.h"
#include "snapshot_helpers.h"	/* run_program */

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

int entry_add(struct entry *e, const char *name, const void *val,
	      size_t len)
{
	size_t nl = strlen(name);
	bool binary = memchr(val, '\n', len);
	size_t need = nl + (binary ? 1 + 8 : 1) + len + 1;
	char *p = e->buf + e->len;

	if (need > sizeof(e->buf) - e->len)
		return -1;
	memcpy(p, name, nl);
	p += nl;
	if (binary) {
		uint64_t n = htole64(len);

		*p++ = '\n';
		memcpy(p, &n, sizeof(n));
		p += sizeof(n);
	} else {
		*p++ = '=';
	}
	memcpy(p, val, len);
	p[len] = '\n';
	e->len += need;
	return 0;
}

int entry_add_str(struct entry *e, const char *name, const char *val)
{
	return entry_add(e, name, val, strlen(val));
}

/* The export file @exp of the @nr entries of @list. */
static int write_export(const char *exp, const struct export_entry *list,
			size_t nr)
{
	FILE *f = fopen(exp, "w");

	if (!f)
		return -1;
	for (size_t i = 0; i < nr; i++) {
		const struct export_entry *x = &list[i];

		fprintf(f, "__REALTIME_TIMESTAMP=%llu\n"
			"__MONOTONIC_TIMESTAMP=%llu\n_BOOT_ID=%s\n",
			(unsigned long long)x->realtime_us,
			(unsigned long long)x->monotonic_us, x->boot_id);
		fwrite(x->body->buf, 1, x->body->len, f);
		fputc('\n', f);
	}
	return fclose(f) ? -1 : 0;
}

int journal_export_to_file(const struct export_entry *list, size_t nr,
			   const char *remote, const char *journal)
{
	char exp[4096], opt[4200];
	char *argv[] = { (char *)remote, opt, exp, NULL };
	struct run r;
	int ret;

	snprintf(exp, sizeof(exp), "%s.export", journal);
	snprintf(opt, sizeof(opt), "--output=%s", journal);
	ret = write_export(exp, list, nr);
	if (!ret) {
		ret = run_program(&r, remote, NULL, argv);
		if (!ret && r.status) {
			fprintf(stderr, "%s failed (exit %d): %s", remote,
				r.status, r.err);
			ret = -1;
		}
		run_free(&r);
	}
	unlink(exp);
	return ret;
}

int journal_entry_to_file(const struct entry *e, uint64_t realtime_us,
			  const char *remote, const char *journal)
{
	const struct export_entry x = {
		.realtime_us = realtime_us,
		.monotonic_us = 1,
		.boot_id = "0123456789abcdef0123456789abcdef",
		.body = e,
	};

	return journal_export_to_file(&x, 1, remote, journal);
}
