// SPDX-License-Identifier: MIT
/*
 * JSON output of the actrack CLI: a streaming writer and the `dump --json`
 * document ("actrack-dump/1", documented in docs/json-schema.json).
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
#include "stacks.h"
#include "symbolize.h"

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

void json_symbol(struct json *j, struct symbolizer *sym,
		 const struct actrack_snap_process *p, uint64_t pc)
{
	struct sym_info info;
	char text[512];
	bool found;

	if (!pc) {
		json_null(j);
		return;
	}
	found = sym_lookup(sym, p, pc, &info);
	sym_format_info(found ? &info : NULL, pc, text, sizeof(text));
	json_object_begin(j);
	json_kv_string(j, "text", text, sizeof(text));
	json_kv_string(j, "module", info.module, ACTRACK_PATH_MAX);
	json_key(j, "module_offset");
	if (info.module)
		json_u64(j, info.module_offset);
	else
		json_null(j);
	json_kv_string(j, "function", info.function, 1024);
	json_key(j, "function_offset");
	if (info.function)
		json_u64(j, info.function_offset);
	else
		json_null(j);
	json_kv_string(j, "inlined_into", info.inlined_in, 1024);
	json_kv_string(j, "file", info.file, 4096);
	json_key(j, "line");
	if (info.line > 0)
		json_u64(j, (uint64_t)info.line);
	else
		json_null(j);
	json_kv_string(j, "note", info.note, 128);
	json_object_end(j);
}

/* ---- the dump document ------------------------------------------------ */

struct dump_json {
	struct json j;
	struct symbolizer *sym;
	const struct stacks *stacks;	/* --stacks, else NULL */
	uint64_t now;
};

static int64_t age_ns(uint64_t now, uint64_t t)
{
	/* Negative for a timestamp ahead of now (clock skew or forgery). */
	return (int64_t)(now - t);
}

static void json_activity(struct dump_json *d,
			  const struct actrack_snap_process *p,
			  const struct actrack_snap_activity *sa,
			  uint32_t index)
{
	struct json *j = &d->j;
	char desc[128];

	json_object_begin(j);
	json_kv_u64(j, "index", index);
	json_kv_string(j, "type", actrack_activity_name(sa->a.type), 32);
	json_kv_u64(j, "type_id", sa->a.type);
	json_kv_u64_str(j, "object", sa->a.object);
	json_kv_u64_str(j, "info", sa->a.info);
	json_kv_string(j, "description",
		       cli_activity_object(desc, sizeof(desc), &sa->a),
		       sizeof(desc));
	json_kv_u64_str(j, "time_ns", sa->a.time_ns);
	json_kv_i64_str(j, "age_ns", age_ns(d->now, sa->a.time_ns));
	json_kv_u64(j, "origin", sa->a.origin);
	json_key(j, "symbol");
	json_symbol(j, d->sym, p, sa->a.origin);
	json_values(j, "values", sa->values, sa->nr_values);
	json_object_end(j);
}

static void json_thread(struct dump_json *d,
			const struct actrack_snap_process *p,
			const struct actrack_snap_thread *t)
{
	struct json *j = &d->j;
	char sig[32];

	json_object_begin(j);
	json_kv_u64(j, "tid", t->tid);
	json_kv_string(j, "name", t->name, sizeof(t->name));
	json_kv_u64_str(j, "start_time_ns", t->start_time_ns);
	json_kv_u64(j, "depth", t->depth);
	json_kv_u64(j, "stored", t->nr_activities);
	json_kv_bool(j, "torn", t->torn);
	json_key(j, "fatal");
	if (t->fatal_signo) {
		json_object_begin(j);
		json_kv_i64(j, "signo", t->fatal_signo);
		json_kv_string(j, "signal",
			       cli_signal_name(t->fatal_signo, sig,
					       sizeof(sig)), sizeof(sig));
		json_kv_i64(j, "code", t->fatal_code);
		json_kv_u64(j, "addr", t->fatal_addr);
		json_kv_u64(j, "pc", t->fatal_pc);
		json_key(j, "symbol");
		json_symbol(j, d->sym, p, t->fatal_pc);
		json_object_end(j);
	} else {
		json_null(j);
	}
	json_key(j, "activities");
	json_array_begin(j);
	for (uint32_t i = 0; t->activities && i < t->nr_activities; i++)
		json_activity(d, p, &t->activities[i], i);
	json_array_end(j);
	if (d->stacks) {
		json_key(j, "stack");
		stacks_json(d->stacks, d->sym, j, p, t->tid);
	}
	json_object_end(j);
}

static void json_module(struct json *j, const struct actrack_snap_module *m)
{
	json_object_begin(j);
	json_kv_string(j, "path", m->path, sizeof(m->path));
	json_kv_u64(j, "base", m->base);
	json_kv_u64(j, "size", m->size);
	json_kv_u64(j, "vaddr", m->vaddr);
	json_key(j, "build_id");
	json_hex_bytes(j, m->build_id,
		       m->build_id_size <= ACTRACK_BUILD_ID_MAX ?
		       m->build_id_size : 0);
	json_object_end(j);
}

static void json_process(struct dump_json *d,
			 const struct actrack_snap_process *p)
{
	struct json *j = &d->j;

	json_object_begin(j);
	json_kv_u64(j, "pid", p->pid);
	json_kv_u64(j, "start_ticks", p->start_ticks);
	json_kv_bool(j, "has_record", p->has_record);
	if (p->has_record) {
		json_kv_string(j, "phase", actrack_phase_name(p->phase), 32);
		json_kv_u64(j, "phase_id", p->phase);
		json_kv_u64(j, "parent_pid", p->parent_pid);
		json_kv_string(j, "cmdline", p->cmdline, sizeof(p->cmdline));
		json_kv_u64_str(j, "launch_time_ns", p->launch_time_ns);
		json_kv_i64_str(j, "age_ns", age_ns(d->now, p->launch_time_ns));
	} else {
		json_kv_null(j, "phase");
		json_kv_null(j, "phase_id");
		json_kv_null(j, "parent_pid");
		json_kv_null(j, "cmdline");
		json_kv_null(j, "launch_time_ns");
		json_kv_null(j, "age_ns");
	}
	json_values(j, "values", p->values, p->nr_values);
	json_key(j, "modules");
	json_array_begin(j);
	for (uint32_t i = 0; p->modules && i < p->nr_modules; i++)
		json_module(j, &p->modules[i]);
	json_array_end(j);
	json_key(j, "logs");
	json_array_begin(j);
	for (uint32_t i = 0; p->logs && i < p->nr_logs; i++) {
		const struct actrack_snap_log *l = &p->logs[i];

		json_object_begin(j);
		json_kv_u64(j, "seq", l->seq);
		json_kv_u64(j, "tid", l->tid);
		json_kv_u64_str(j, "time_ns", l->time_ns);
		json_kv_i64_str(j, "age_ns", age_ns(d->now, l->time_ns));
		json_kv_string(j, "text", l->text, sizeof(l->text));
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "threads");
	json_array_begin(j);
	for (uint32_t i = 0; p->threads && i < p->nr_threads; i++)
		json_thread(d, p, &p->threads[i]);
	json_array_end(j);
	json_object_end(j);
}

static void json_arena(struct json *j, const struct actrack_snapshot *s)
{
	const struct actrack_arena_header *h = &s->header;
	char abi[16];

	snprintf(abi, sizeof(abi), "%u.%u", h->abi_major, h->abi_minor);
	json_object_begin(j);
	json_kv_string(j, "source", cli_arena_name(), 4096);
	json_kv_string(j, "abi", abi, sizeof(abi));
	json_kv_u64(j, "size", h->size);
	json_kv_u64(j, "used", s->used_bytes);
	json_kv_u64(j, "free", s->free_bytes);
	json_kv_bool(j, "corrupt", s->corrupt);
	json_kv_bool(j, "full", h->flags & ACTRACK_ARENA_FULL);
	json_kv_bool(j, "kernel", h->flags & ACTRACK_ARENA_KERNEL);
	json_kv_u64(j, "flags", h->flags);
	json_kv_u64(j, "uid", h->uid);
	json_kv_u64(j, "user_hz", h->user_hz);
	json_kv_u64_str(j, "create_mono_ns", h->create_mono_ns);
	json_kv_u64_str(j, "create_real_ns", h->create_real_ns);
	json_kv_u64_str(j, "boot_time_ns", h->boot_time_ns);
	json_key(j, "boot_id");
	json_hex_bytes(j, h->boot_id, sizeof(h->boot_id));
	json_key(j, "saved_mono_ns");
	if (h->saved_mono_ns)
		json_u64_str(j, h->saved_mono_ns);
	else
		json_null(j);
	json_key(j, "saved_real_ns");
	if (h->saved_mono_ns)
		json_u64_str(j, h->saved_real_ns);
	else
		json_null(j);
	json_kv_u64(j, "torn_threads", s->nr_torn);
	json_object_end(j);
}

static bool has_pid(const struct actrack_snapshot *s, uint32_t pid)
{
	for (uint32_t i = 0; i < s->nr_processes; i++)
		if (s->processes[i].pid == pid)
			return true;
	return false;
}

int cli_dump_json(const struct actrack_snapshot *s, uint64_t now,
		  bool other_boot, bool have_pid, uint32_t pid,
		  const struct stacks *stacks)
{
	struct dump_json d;
	struct json *j = &d.j;
	int ret;

	if (have_pid && !has_pid(s, pid))
		return cli_no_such_pid(pid);
	d.sym = sym_new();
	d.stacks = stacks;
	d.now = now;
	json_init(j, stdout, JSON_MAX_DEPTH);
	json_object_begin(j);
	json_kv_string(j, "schema", JSON_DUMP_SCHEMA, 32);
	json_kv_string(j, "generator", "actrack " ACTRACK_VERSION, 32);
	json_kv_u64_str(j, "taken_mono_ns", s->taken_mono_ns);
	json_kv_u64_str(j, "now_ns", now);
	json_kv_bool(j, "other_boot", other_boot);
	json_key(j, "arena");
	json_arena(j, s);
	json_key(j, "processes");
	json_array_begin(j);
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		if (have_pid && s->processes[i].pid != pid)
			continue;
		json_process(&d, &s->processes[i]);
	}
	json_array_end(j);
	json_key(j, "global");
	json_array_begin(j);
	/* Global data belongs to no process: left out of a --pid dump. */
	for (uint32_t i = 0; !have_pid && s->global_values &&
	     i < s->nr_global_values; i++)
		json_value(j, &s->global_values[i]);
	json_array_end(j);
	json_object_end(j);
	ret = json_finish(j);
	sym_free(d.sym);
	if (ret) {
		cli_error("stdout", ret);
		return 1;
	}
	return 0;
}
