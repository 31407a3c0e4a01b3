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

#include <stdint.h>
#include <string.h>

#define ENTRY_MAX	(1024 * 1024)

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

#endif /* ACTRACK_JOURNAL_NATIVE_H */
