// SPDX-License-Identifier: MIT
/*
 * A JSON document walked value by value (see json_read.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

#define JR_MAX_DEPTH	64
#define JR_PATH_MAX	256

struct jr {
	const char *p, *end;
	jr_fn fn;
	void *arg;
	char path[JR_PATH_MAX];
	size_t plen;
	char *buf;			/* the current string or number */
	size_t n, cap;
	int depth;
};

static void jr_ws(struct jr *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' ||
				 *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

/* One byte more in the buffer, room for a NUL kept. */
static int jr_put(struct jr *r, char c)
{
	if (r->n + 2 > r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		char *b = realloc(r->buf, cap);

		if (!b)
			return -ENOMEM;
		r->buf = b;
		r->cap = cap;
	}
	r->buf[r->n++] = c;
	r->buf[r->n] = '\0';
	return 0;
}

static int jr_put_cp(struct jr *r, uint32_t cp)
{
	char u[4];
	int n, ret = 0;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	for (int i = 0; i < n && !ret; i++)
		ret = jr_put(r, u[i]);
	return ret;
}

/* Four hex digits of a \u escape. */
static int jr_hex4(struct jr *r, uint32_t *out)
{
	uint32_t v = 0;

	if (r->end - r->p < 4)
		return -EBADMSG;
	for (int i = 0; i < 4; i++) {
		char c = *r->p++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (uint32_t)((c | 0x20) - 'a' + 10);
		else
			return -EBADMSG;
	}
	*out = v;
	return 0;
}

/* The code point of a \u escape (r->p after the "u"); a surrogate
 * without its pair becomes U+FFFD. */
static int jr_unicode(struct jr *r, uint32_t *cp)
{
	uint32_t lo;

	if (jr_hex4(r, cp))
		return -EBADMSG;
	if (*cp < 0xd800 || *cp >= 0xe000)
		return 0;
	if (*cp >= 0xdc00 || r->end - r->p < 6 || r->p[0] != '\\' ||
	    r->p[1] != 'u') {
		*cp = 0xfffd;
		return 0;
	}
	r->p += 2;
	if (jr_hex4(r, &lo))
		return -EBADMSG;
	if (lo < 0xdc00 || lo >= 0xe000) {
		*cp = 0xfffd;
		return 0;
	}
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	return 0;
}

/* The string at r->p (its opening quote) decoded into r->buf. */
static int jr_string(struct jr *r)
{
	static const char esc[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
	uint32_t cp;
	int ret = 0;

	r->n = 0;
	ret = jr_put(r, 0);		/* the buffer exists, "" */
	r->n = 0;
	r->p++;
	while (!ret) {
		const char *e;

		if (r->p >= r->end || (unsigned char)*r->p < 0x20)
			return -EBADMSG;
		if (*r->p == '"') {
			r->p++;
			return 0;
		}
		if (*r->p != '\\') {
			ret = jr_put(r, *r->p++);
			continue;
		}
		if (++r->p >= r->end)
			return -EBADMSG;
		if (*r->p == 'u') {
			r->p++;
			ret = jr_unicode(r, &cp) ?: jr_put_cp(r, cp);
			continue;
		}
		for (e = esc; *e && *e != *r->p; e += 2)
			;
		if (!*e)
			return -EBADMSG;
		r->p++;
		ret = jr_put(r, e[1]);
	}
	return ret;
}

static bool jr_digits(struct jr *r)
{
	const char *s = r->p;

	while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
		r->p++;
	return r->p > s;
}

/* A number (RFC 8259's grammar), its text copied into r->buf. */
static int jr_number(struct jr *r)
{
	const char *s = r->p;
	int ret = 0;

	if (r->p < r->end && *r->p == '-')
		r->p++;
	if (r->p < r->end && *r->p == '0')
		r->p++;
	else if (!jr_digits(r))
		return -EBADMSG;
	if (r->p < r->end && *r->p == '.') {
		r->p++;
		if (!jr_digits(r))
			return -EBADMSG;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (!jr_digits(r))
			return -EBADMSG;
	}
	r->n = 0;
	for (; s < r->p && !ret; s++)
		ret = jr_put(r, *s);
	return ret;
}

static int jr_value(struct jr *r);

/* @add appended to the path, for the walk of one member or element. */
static int jr_member(struct jr *r, const char *add, size_t len)
{
	size_t saved = r->plen;
	int ret;

	if (memchr(add, '\0', len) || r->plen + len >= sizeof(r->path))
		return -EBADMSG;
	memcpy(r->path + r->plen, add, len);
	r->plen += len;
	r->path[r->plen] = '\0';
	ret = jr_value(r);
	r->plen = saved;
	r->path[saved] = '\0';
	return ret;
}

/* An object's or an array's members, r->p after its opening bracket. */
static int jr_container(struct jr *r, bool object)
{
	char close = object ? '}' : ']';
	char key[JR_PATH_MAX + 1];
	int ret;

	jr_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return 0;
	}
	for (;;) {
		size_t klen = 2;

		if (object) {
			if (r->p >= r->end || *r->p != '"')
				return -EBADMSG;
			ret = jr_string(r);
			if (ret)
				return ret;
			if (r->n >= sizeof(key) - 1)
				return -EBADMSG;
			klen = (size_t)snprintf(key, sizeof(key), "%s%.*s",
						r->plen ? "." : "",
						(int)r->n, r->buf);
			jr_ws(r);
			if (r->p >= r->end || *r->p++ != ':')
				return -EBADMSG;
		}
		ret = jr_member(r, object ? key : "[]", klen);
		if (ret)
			return ret;
		jr_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			jr_ws(r);
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			return 0;
		}
		return -EBADMSG;
	}
}

static int jr_literal(struct jr *r, const char *word, enum jr_kind kind)
{
	size_t n = strlen(word);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n))
		return -EBADMSG;
	r->p += n;
	return r->fn(r->arg, r->path, kind, NULL, 0);
}

static int jr_value(struct jr *r)
{
	int ret;

	jr_ws(r);
	if (r->p >= r->end)
		return -EBADMSG;
	switch (*r->p) {
	case '{':
	case '[':
		if (r->depth >= JR_MAX_DEPTH)
			return -EBADMSG;
		ret = r->fn(r->arg, r->path, *r->p == '{' ? JR_OBJECT :
			    JR_ARRAY, NULL, 0);
		if (ret)
			return ret;
		r->depth++;
		ret = jr_container(r, *r->p++ == '{');
		r->depth--;
		return ret;
	case '"':
		ret = jr_string(r);
		return ret ?: r->fn(r->arg, r->path, JR_STRING, r->buf, r->n);
	case 't':
		return jr_literal(r, "true", JR_TRUE);
	case 'f':
		return jr_literal(r, "false", JR_FALSE);
	case 'n':
		return jr_literal(r, "null", JR_NULL);
	default:
		ret = jr_number(r);
		return ret ?: r->fn(r->arg, r->path, JR_NUMBER, r->buf, r->n);
	}
}

int json_read(const char *s, size_t len, jr_fn fn, void *arg)
{
	struct jr r = { .p = s, .end = s + len, .fn = fn, .arg = arg };
	int ret;

	ret = jr_value(&r);
	jr_ws(&r);
	if (!ret && r.p != r.end)
		ret = -EBADMSG;
	free(r.buf);
	return ret;
}
