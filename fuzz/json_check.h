/* SPDX-License-Identifier: MIT */
/*
 * A strict validator for the CLI's JSON output (RFC 8259 grammar, UTF-8
 * per RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF), so that a fuzz target can assert what cli/json.h promises:
 * valid JSON and valid UTF-8 whatever bytes the arena held.  Recursion is
 * bounded by the writer's own JSON_MAX_DEPTH plus slack.
 */
#ifndef ACTRACK_FUZZ_JSON_CHECK_H
#define ACTRACK_FUZZ_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jc {
	const uint8_t *p, *end;
};

static inline void jc_ws(struct jc *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' ||
				 *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static inline bool jc_lit(struct jc *c, const char *s)
{
	for (; *s; s++, c->p++)
		if (c->p >= c->end || *c->p != (uint8_t)*s)
			return false;
	return true;
}

/* One UTF-8 sequence at c->p. */
static inline bool jc_utf8(struct jc *c)
{
	uint8_t b = *c->p;
	uint32_t cp, min;
	int n;

	if (b < 0x80) {
		c->p++;
		return true;
	}
	if ((b & 0xe0) == 0xc0) {
		n = 1; cp = b & 0x1f; min = 0x80;
	} else if ((b & 0xf0) == 0xe0) {
		n = 2; cp = b & 0x0f; min = 0x800;
	} else if ((b & 0xf8) == 0xf0) {
		n = 3; cp = b & 0x07; min = 0x10000;
	} else {
		return false;
	}
	if (c->end - c->p <= n)
		return false;
	for (int i = 1; i <= n; i++) {
		if ((c->p[i] & 0xc0) != 0x80)
			return false;
		cp = cp << 6 | (c->p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return false;
	c->p += n + 1;
	return true;
}

static inline bool jc_string(struct jc *c)
{
	if (c->p >= c->end || *c->p != '"')
		return false;
	c->p++;
	while (c->p < c->end) {
		uint8_t b = *c->p;

		if (b == '"') {
			c->p++;
			return true;
		}
		if (b < 0x20)
			return false;	/* control characters must be escaped */
		if (b == '\\') {
			c->p++;
			if (c->p >= c->end)
				return false;
			switch (*c->p) {
			case '"': case '\\': case '/': case 'b': case 'f':
			case 'n': case 'r': case 't':
				c->p++;
				break;
			case 'u':
				c->p++;
				for (int i = 0; i < 4; i++, c->p++)
					if (c->p >= c->end ||
					    !((*c->p >= '0' && *c->p <= '9') ||
					      (*c->p >= 'a' && *c->p <= 'f') ||
					      (*c->p >= 'A' && *c->p <= 'F')))
						return false;
				break;
			default:
				return false;
			}
			continue;
		}
		if (!jc_utf8(c))
			return false;
	}
	return false;
}

static inline bool jc_digits(struct jc *c)
{
	const uint8_t *s = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	return c->p > s;
}

static inline bool jc_number(struct jc *c)
{
	if (c->p < c->end && *c->p == '-')
		c->p++;
	if (c->p < c->end && *c->p == '0')
		c->p++;
	else if (!jc_digits(c))
		return false;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		if (!jc_digits(c))
			return false;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!jc_digits(c))
			return false;
	}
	return true;
}

static inline bool jc_value(struct jc *c, int depth)
{
	if (depth > 64)
		return false;
	jc_ws(c);
	if (c->p >= c->end)
		return false;
	switch (*c->p) {
	case '{':
		c->p++;
		jc_ws(c);
		if (c->p < c->end && *c->p == '}') {
			c->p++;
			return true;
		}
		for (;;) {
			jc_ws(c);
			if (!jc_string(c))
				return false;
			jc_ws(c);
			if (c->p >= c->end || *c->p++ != ':')
				return false;
			if (!jc_value(c, depth + 1))
				return false;
			jc_ws(c);
			if (c->p >= c->end)
				return false;
			if (*c->p == '}') {
				c->p++;
				return true;
			}
			if (*c->p++ != ',')
				return false;
		}
	case '[':
		c->p++;
		jc_ws(c);
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			return true;
		}
		for (;;) {
			if (!jc_value(c, depth + 1))
				return false;
			jc_ws(c);
			if (c->p >= c->end)
				return false;
			if (*c->p == ']') {
				c->p++;
				return true;
			}
			if (*c->p++ != ',')
				return false;
		}
	case '"':
		return jc_string(c);
	case 't':
		return jc_lit(c, "true");
	case 'f':
		return jc_lit(c, "false");
	case 'n':
		return jc_lit(c, "null");
	default:
		return jc_number(c);
	}
}

/* True if @buf (@len bytes) is exactly one JSON document. */
static inline bool json_check(const char *buf, size_t len)
{
	struct jc c = { (const uint8_t *)buf, (const uint8_t *)buf + len };

	if (!jc_value(&c, 0))
		return false;
	jc_ws(&c);
	return c.p == c.end;
}

#endif /* ACTRACK_FUZZ_JSON_CHECK_H */
