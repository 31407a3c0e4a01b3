// SPDX-License-Identifier: MIT
/*
 * JSON output of the actrack CLI: a streaming writer, and the typed user
 * data values every document shares.  The documents are built with it in
 * render.c (processes, threads, death reports), cmd_dump.c, cmd_hangs.c
 * and trace.c; docs/json-schema.json describes them.
 *
 * The writer never trusts a string: arena bytes are written as valid UTF-8
 * (well-formed multi-byte sequences pass through; every byte of an
 * ill-formed one, including overlong forms, surrogates and code points
 * above U+10FFFF, is written as \u00XX so that no information is lost and
 * no consumer ever sees invalid UTF-8), and control characters are escaped.
 *
 * Numbers: integers are written exactly, in decimal.  jq and JavaScript
 * parse numbers as doubles and round anything above 2^53, so integers that
 * can be that large are written as strings of decimal digits instead:
 * every nanosecond count (*_ns: a monotonic time passes 2^53 after 104 days
 * of uptime, a wall time always), activity objects and infos, and signed
 * and unsigned user data.  Addresses inside a process (origins, module
 * bases) are below 2^47 on x86-64 and stay numbers.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "cli.h"
#include "json.h"

void json_init(struct json *j, FILE *f, uint32_t pretty_depth)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty_depth = pretty_depth;
}

static void json_str_bytes(struct json *j, const uint8_t *s, size_t len,
			   bool stop_at_nul);

/* Separator and indentation before a value or a key. */
static void json_sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->depth)
		return;
	if (j->has_items[j->depth - 1])
		fputc(',', j->f);
	j->has_items[j->depth - 1] = true;
	if (j->depth <= j->pretty_depth) {
		fputc('\n', j->f);
		for (uint32_t i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
}

static void json_open(struct json *j, char c)
{
	json_sep(j);
	fputc(c, j->f);
	if (j->depth >= JSON_MAX_DEPTH) {
		j->overflow = true;
		return;
	}
	j->has_items[j->depth++] = false;
}

static void json_close(struct json *j, char c)
{
	if (!j->depth || j->overflow) {
		j->overflow = true;
		return;
	}
	j->depth--;
	if (j->has_items[j->depth] && j->depth < j->pretty_depth) {
		fputc('\n', j->f);
		for (uint32_t i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(c, j->f);
}

void json_object_begin(struct json *j)
{
	json_open(j, '{');
}

void json_object_end(struct json *j)
{
	json_close(j, '}');
}

void json_array_begin(struct json *j)
{
	json_open(j, '[');
}

void json_array_end(struct json *j)
{
	json_close(j, ']');
}

void json_key(struct json *j, const char *key)
{
	json_sep(j);
	json_str_bytes(j, (const uint8_t *)key, strlen(key), true);
	fputs(j->depth <= j->pretty_depth ? ": " : ":", j->f);
	/* The value that follows takes no separator. */
	j->after_key = true;
}

/*
 * Length of the well-formed UTF-8 sequence at @s (at most @n bytes), or 0.
 * Well-formed as in Unicode table 3-7: no overlong forms, no surrogates,
 * nothing above U+10FFFF.
 */
static size_t utf8_len(const uint8_t *s, size_t n)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* @len bytes, or up to a NUL if @stop_at_nul. */
static void json_str_bytes(struct json *j, const uint8_t *s, size_t len,
			   bool stop_at_nul)
{
	FILE *f = j->f;

	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		uint8_t c = s[i];
		size_t n;

		if (!c && stop_at_nul)
			break;
		switch (c) {
		case '"':
			fputs("\\\"", f);
			continue;
		case '\\':
			fputs("\\\\", f);
			continue;
		case '\n':
			fputs("\\n", f);
			continue;
		case '\r':
			fputs("\\r", f);
			continue;
		case '\t':
			fputs("\\t", f);
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			continue;
		}
		if (c < 0x80) {
			fputc(c, f);
			continue;
		}
		n = utf8_len(s + i, len - i);
		if (stop_at_nul) {
			/* A NUL inside the sequence ends the string first. */
			for (size_t k = 1; k < n; k++)
				if (!s[i + k])
					n = 0;
		}
		if (!n) {
			fprintf(f, "\\u%04x", c);
			continue;
		}
		fwrite(s + i, 1, n, f);
		i += n - 1;
	}
	fputc('"', f);
}

void json_string(struct json *j, const char *s, size_t max)
{
	json_sep(j);
	if (!s) {
		fputs("null", j->f);
		return;
	}
	json_str_bytes(j, (const uint8_t *)s, max, true);
}

void json_bytes(struct json *j, const uint8_t *b, size_t len)
{
	json_sep(j);
	json_str_bytes(j, b ? b : (const uint8_t *)"", b ? len : 0, false);
}

void json_hex_bytes(struct json *j, const uint8_t *b, size_t len)
{
	json_sep(j);
	fputc('"', j->f);
	for (size_t i = 0; b && i < len; i++)
		fprintf(j->f, "%02x", b[i]);
	fputc('"', j->f);
}

void json_u64(struct json *j, uint64_t v)
{
	json_sep(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, int64_t v)
{
	json_sep(j);
	fprintf(j->f, "%" PRId64, v);
}

void json_u64_str(struct json *j, uint64_t v)
{
	json_sep(j);
	fprintf(j->f, "\"%" PRIu64 "\"", v);
}

void json_i64_str(struct json *j, int64_t v)
{
	json_sep(j);
	fprintf(j->f, "\"%" PRId64 "\"", v);
}

void json_ns_as_us(struct json *j, int64_t ns)
{
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	json_sep(j);
	fprintf(j->f, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "",
		a / 1000, a % 1000);
}

void json_bool(struct json *j, bool v)
{
	json_sep(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	json_sep(j);
	fputs("null", j->f);
}

void json_kv_string(struct json *j, const char *key, const char *s,
		    size_t max)
{
	json_key(j, key);
	json_string(j, s, max);
}

void json_kv_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

void json_kv_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_i64(j, v);
}

void json_kv_u64_str(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64_str(j, v);
}

void json_kv_i64_str(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_i64_str(j, v);
}

void json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

void json_kv_null(struct json *j, const char *key)
{
	json_key(j, key);
	json_null(j);
}

int json_finish(struct json *j)
{
	fputc('\n', j->f);
	if (fflush(j->f) || ferror(j->f) || j->depth || j->overflow)
		return -EIO;
	return 0;
}

void json_value(struct json *j, const struct actrack_value *v)
{
	json_object_begin(j);
	json_kv_string(j, "name", v->name, sizeof(v->name));
	json_kv_string(j, "type", actrack_value_type_name(v->type), 32);
	json_key(j, "value");
	switch (v->type) {
	case ACTRACK_VALUE_RAW:
		json_hex_bytes(j, v->bytes, v->size);
		break;
	case ACTRACK_VALUE_STRING:
		json_bytes(j, v->bytes, v->size);
		break;
	case ACTRACK_VALUE_BOOL:
		json_bool(j, v->b);
		break;
	case ACTRACK_VALUE_CHAR:
		json_bytes(j, (const uint8_t *)&v->c, 1);
		break;
	case ACTRACK_VALUE_SIGNED:
		json_i64_str(j, v->s);
		break;
	case ACTRACK_VALUE_UNSIGNED:
		json_u64_str(j, v->u);
		break;
	case ACTRACK_VALUE_RAW_REF:
	case ACTRACK_VALUE_STRING_REF:
		json_object_begin(j);
		json_kv_u64(j, "address", v->ref.address);
		json_kv_u64(j, "size", v->ref.size);
		json_object_end(j);
		break;
	default:
		/* A newer writer's type: its bytes mean nothing to us. */
		json_null(j);
		break;
	}
	if (v->type == ACTRACK_VALUE_RAW || v->type == ACTRACK_VALUE_STRING)
		json_kv_u64(j, "size", v->size);
	json_object_end(j);
}

void json_values(struct json *j, const char *key,
		 const struct actrack_value *v, uint32_t nr)
{
	json_key(j, key);
	json_array_begin(j);
	for (uint32_t i = 0; v && i < nr; i++)
		json_value(j, &v[i]);
	json_array_end(j);
}
