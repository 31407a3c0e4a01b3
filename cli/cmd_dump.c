// SPDX-License-Identifier: MIT
/* actrack dump: everything the arena says, process by process. */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include "cli.h"
#include "json.h"
#include "render.h"
#include "stacks.h"
#include "symbolize.h"
#include "verdict.h"

/* Records that are stale, in the words of `actrack hangs` (verdict.c):
 * the process's, once, else each thread's. */
static void print_stale(struct verdict_env *e,
			const struct actrack_snap_process *p)
{
	char why[192];
	enum verdict v = verdict_stale(e, p, NULL, why, sizeof(why));

	if (v != VERDICT_NONE) {
		printf("  verdict: %s: %s\n", verdict_name(v), why);
		return;
	}
	for (uint32_t i = 0; p->threads && i < p->nr_threads; i++) {
		v = verdict_stale(e, p, &p->threads[i], why, sizeof(why));
		if (v != VERDICT_NONE)
			printf("  thread %u: verdict: %s: %s\n",
			       p->threads[i].tid, verdict_name(v), why);
	}
}

static void print_process(const struct render *r, struct verdict_env *e,
			  const struct actrack_snap_process *p)
{
	char buf[48];

	if (p->has_record) {
		printf("process %u (%s) start_ticks %llu parent %u age %s: ",
		       p->pid, actrack_phase_name(p->phase),
		       (unsigned long long)p->start_ticks, p->parent_pid,
		       cli_duration(buf, sizeof(buf),
				    r->now > p->launch_time_ns ?
				    r->now - p->launch_time_ns : 0));
		cli_print_escaped(stdout, p->cmdline, sizeof(p->cmdline));
		fputc('\n', stdout);
	} else {
		printf("process %u (no process record) start_ticks %llu\n",
		       p->pid, (unsigned long long)p->start_ticks);
	}
	print_stale(e, p);
	render_process_text(r, stdout, p);
}

/* ---- dump --json: the "actrack-dump" document ---------------------------- */

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
	struct render r = { .stacks = stacks, .now = now };
	struct json j;
	int ret;

	if (have_pid && !has_pid(s, pid))
		return cli_no_such_pid(pid);
	r.sym = sym_new();	/* NULL: raw addresses */
	json_init(&j, stdout, JSON_MAX_DEPTH);
	json_object_begin(&j);
	json_kv_string(&j, "schema", RENDER_DUMP_SCHEMA, 32);
	json_kv_string(&j, "generator", "actrack " ACTRACK_VERSION, 32);
	json_kv_u64_str(&j, "taken_mono_ns", s->taken_mono_ns);
	json_kv_u64_str(&j, "now_ns", now);
	json_kv_bool(&j, "other_boot", other_boot);
	json_key(&j, "arena");
	json_arena(&j, s);
	json_key(&j, "processes");
	json_array_begin(&j);
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		if (have_pid && s->processes[i].pid != pid)
			continue;
		render_process_json(&r, &j, &s->processes[i]);
	}
	json_array_end(&j);
	json_key(&j, "global");
	json_array_begin(&j);
	/* Global data belongs to no process: left out of a --pid dump. */
	for (uint32_t i = 0; !have_pid && s->global_values &&
	     i < s->nr_global_values; i++)
		json_value(&j, &s->global_values[i]);
	json_array_end(&j);
	json_object_end(&j);
	ret = json_finish(&j);
	sym_free(r.sym);
	if (ret) {
		cli_error("stdout", ret);
		return 1;
	}
	return 0;
}

/* --stacks: the real backtraces of the threads to be shown, taken now. */
static struct stacks *collect_stacks(const struct actrack_snapshot *s,
				     bool have_pid, uint32_t pid)
{
	struct stacks *st = stacks_new(s, "dump");

	for (uint32_t i = 0; st && i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		if (have_pid && p->pid != pid)
			continue;
		for (uint32_t k = 0; st && k < p->nr_threads; k++) {
			if (stacks_want(st, p, p->threads[k].tid)) {
				stacks_free(st);
				st = NULL;
			}
		}
	}
	if (!st) {
		cli_error("dump: --stacks", -ENOMEM);
		return NULL;
	}
	stacks_collect(st);
	return st;
}

/* The text of dump: every process (or @pid's), the global data, the
 * summary. */
static void print_text(const struct render *r,
		       const struct actrack_snapshot *s, bool other_boot,
		       bool have_pid, uint32_t pid)
{
	struct verdict_env env;
	uint32_t nr_threads = 0;

	/* Stale records are told apart where /proc shows the processes: a
	 * live arena of this boot. */
	verdict_env_init(&env, s, cli_same_boot(s) && !cli_saved_image(s));
	cli_print_time_note(stdout, s, other_boot);
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		nr_threads += s->processes[i].nr_threads;
		if (have_pid && s->processes[i].pid != pid)
			continue;
		print_process(r, &env, &s->processes[i]);
	}
	verdict_env_free(&env);
	if (!have_pid && s->nr_global_values) {
		puts("global data:");
		cli_print_values(stdout, "  ", s->global_values,
				 s->nr_global_values);
	}
	printf("%u process%s, %u thread%s", s->nr_processes,
	       s->nr_processes == 1 ? "" : "es", nr_threads,
	       nr_threads == 1 ? "" : "s");
	if (s->nr_torn)
		printf(" (%u torn)", s->nr_torn);
	printf(", %u/%u bytes used, corrupt %s\n", s->used_bytes,
	       s->header.size, s->corrupt ? "yes" : "no");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "trace", no_argument, NULL, 't' },
		{ "stacks", no_argument, NULL, 's' },
		{ "previous-boot", no_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct render r = { 0 };
	struct actrack_snapshot *s;
	struct stacks *st;
	uint64_t pid = 0;
	bool have_pid = false, other_boot, json = false, trace = false;
	bool stacks = false;
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":p:jtsh", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (cli_parse_u64(optarg, &pid) || !pid ||
			    pid > UINT32_MAX)
				return cli_usage_error("dump", "dump: --pid: "
						       "not a pid: '%s'",
						       optarg);
			have_pid = true;
			break;
		case 'j':
			json = true;
			break;
		case 't':
			trace = true;
			break;
		case 's':
			stacks = true;
			break;
		case 'B':
			cli.previous_boot = true;
			break;
		case 'h':
			fputs(cli_help_page("dump"), stdout);
			return 0;
		default:
			return cli_getopt_error("dump", opt, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("dump", "dump: unexpected argument '%s'",
				       argv[optind]);
	if (json && trace)
		return cli_usage_error("dump", "dump: --json and --trace "
				       "exclude each other");
	if (cli.previous_boot && cli.arena)
		return cli_usage_error("dump", "dump: --previous-boot reads "
				       "the module's image, not --arena");
	if (stacks && trace)
		return cli_usage_error("dump", "dump: --stacks does not apply "
				       "to --trace");
	if (cli_snapshot(&s))
		return 1;
	r.now = cli_now(s, &other_boot);
	if (have_pid && !has_pid(s, (uint32_t)pid)) {
		actrack_snapshot_free(s);
		return cli_no_such_pid((uint32_t)pid);
	}
	if (trace) {
		ret = cli_dump_trace(s, r.now, other_boot, have_pid,
				     (uint32_t)pid);
		actrack_snapshot_free(s);
		return ret;
	}
	st = stacks ? collect_stacks(s, have_pid, (uint32_t)pid) : NULL;
	if (json) {
		ret = cli_dump_json(s, r.now, other_boot, have_pid,
				    (uint32_t)pid, st);
		stacks_free(st);
		actrack_snapshot_free(s);
		return ret;
	}
	r.stacks = st;
	r.sym = sym_new();
	print_text(&r, s, other_boot, have_pid, (uint32_t)pid);
	ret = ferror(stdout) ? 1 : 0;
	sym_free(r.sym);
	stacks_free(st);
	actrack_snapshot_free(s);
	return ret;
}
