/* SPDX-License-Identifier: MIT */
/*
 * A small streaming JSON writer for the actrack CLI.  The documents built
 * with it: processes, threads and death reports (render.h), `actrack dump
 * --json` and `hangs --json` (described field by field in
 * docs/json-schema.json), and `actrack dump --trace` (Chrome trace-event
 * JSON, cli/trace.c).
 *
 * Every string written comes from an arena or a file named by one, so it is
 * untrusted: the writer always produces valid JSON and valid UTF-8 whatever
 * the bytes are (control characters escaped, each byte of an invalid UTF-8
 * sequence written as \u00XX).
 */
#ifndef ACTRACK_CLI_JSON_H
#define ACTRACK_CLI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "actrack.h"

/* Nesting the writer tracks; deeper containers are a caller bug. */
#define JSON_MAX_DEPTH	16

struct json {
	FILE *f;
	uint32_t depth;
	/* Containers nested deeper than this are written on one line. */
	uint32_t pretty_depth;
	bool after_key;			/* a key was written, value next */
	bool has_items[JSON_MAX_DEPTH];	/* per open container */
	bool overflow;			/* nesting too deep: output invalid */
};

/* @pretty_depth: 0 = everything on one line, else indent (two spaces per
 * level) the members of containers nested at most that deep. */
void json_init(struct json *j, FILE *f, uint32_t pretty_depth);
/* Ends the document with a newline.  Return: 0, or -EIO on a write error
 * or a nesting bug. */
int json_finish(struct json *j);

void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
/* The key of the next member (a trusted, plain ASCII literal). */
void json_key(struct json *j, const char *key);

/* Untrusted text: stops at NUL or after @max bytes. */
void json_string(struct json *j, const char *s, size_t max);
/* Exactly @len bytes; a NUL becomes \u0000. */
void json_bytes(struct json *j, const uint8_t *b, size_t len);
/* Bytes as lowercase hex digits in a string ("0a0b"). */
void json_hex_bytes(struct json *j, const uint8_t *b, size_t len);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
/* As a string of decimal digits ("-" first if negative): for integers that
 * may exceed 2^53, which jq and JavaScript would round (see json.c). */
void json_u64_str(struct json *j, uint64_t v);
void json_i64_str(struct json *j, int64_t v);
/* Nanoseconds as microseconds with three decimals (trace timestamps). */
void json_ns_as_us(struct json *j, int64_t ns);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* Shorthands: key and value. */
void json_kv_string(struct json *j, const char *key, const char *s,
		    size_t max);
void json_kv_u64(struct json *j, const char *key, uint64_t v);
void json_kv_i64(struct json *j, const char *key, int64_t v);
void json_kv_u64_str(struct json *j, const char *key, uint64_t v);
void json_kv_i64_str(struct json *j, const char *key, int64_t v);
void json_kv_bool(struct json *j, const char *key, bool v);
void json_kv_null(struct json *j, const char *key);

/* One typed user-data value: {"name", "type", "value"[, "size"]}. */
void json_value(struct json *j, const struct actrack_value *v);
/* "@key": [values...] (an empty array when there are none). */
void json_values(struct json *j, const char *key,
		 const struct actrack_value *v, uint32_t nr);

/*
 * cli_dump_json() - `actrack dump --json` (cli/cmd_dump.c): the whole
 * snapshot @s (only process @pid when @have_pid) as one JSON document on
 * stdout, schema "actrack-dump/3" (docs/json-schema.json).  @now and
 * @other_boot as from cli_now().  With @stacks (dump --stacks,
 * cli/stacks.c) each thread also gets its "stack".  Return: exit code (1,
 * with an error line, if @pid is not in @s).
 */
struct stacks;
int cli_dump_json(const struct actrack_snapshot *s, uint64_t now,
		  bool other_boot, bool have_pid, uint32_t pid,
		  const struct stacks *stacks);

/*
 * cli_dump_trace() - `actrack dump --trace`: Chrome trace-event JSON on
 * stdout (cli/trace.c), for ui.perfetto.dev or chrome://tracing.
 * Return: exit code (1, with an error line, if @pid is not in @s).
 */
int cli_dump_trace(const struct actrack_snapshot *s, uint64_t now,
		   bool other_boot, bool have_pid, uint32_t pid);

#endif /* ACTRACK_CLI_JSON_H */
