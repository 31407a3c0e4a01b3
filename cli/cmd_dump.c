// SPDX-License-Identifier: MIT
/* actrack dump: everything the arena says, process by process. */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include "cli.h"
#include "json.h"
#include "stacks.h"
#include "symbolize.h"

static const char dump_help[] =
"NAME\n"
"    actrack dump - print what every tracked process and thread is doing\n"
"\n"
"SYNOPSIS\n"
"    actrack [--arena FILE] dump [--pid PID] [--stacks] [--json | --trace]\n"
"\n"
"DESCRIPTION\n"
"    Takes a read-only snapshot of the arena and prints, for each process\n"
"    (ordered by pid):\n"
"\n"
"    - a header line: pid, phase, start time in clock ticks since boot\n"
"      (field 22 of /proc/PID/stat), parent, age and command line;\n"
"    - its annotations (process user data);\n"
"    - its loaded modules: load address, size, build id and path, with\n"
"      which the origins below are symbolized (elfutils libdwfl):\n"
"      function+offset and file:line when the files and their debug\n"
"      info are on disk, module+offset when only the module is known;\n"
"    - its log, oldest message first: time relative to now, thread id,\n"
"      text;\n"
"    - each thread (by tid): name, stack depth, the fatal signal it got,\n"
"      and its activities, innermost first: type, object (lock address,\n"
"      tid, pid, fd, task id...), how long ago it started, the address\n"
"      of the code that pushed it, and its user data.\n"
"\n"
"    Then the arena-wide annotations (global data) and a summary line.\n"
"    Levels count from the outermost activity ([1]), as in 'actrack\n"
"    monitor'.  A thread deeper than its stored slots shows '+N not\n"
"    stored': its innermost activities are counted but not kept.  A\n"
"    thread that kept changing while it was read is shown as torn, without\n"
"    a stack, rather than as a mix of two moments.  Records that fail\n"
"    validation are skipped and the summary says 'corrupt yes'.  Strings\n"
"    from the arena are printed with C escapes for non-printable bytes.\n"
"\n"
"    Ages are measured from the moment of the snapshot; for an image made\n"
"    by 'actrack save', from the moment it was saved, and a note says so.\n"
"\n"
"OUTPUT\n"
"    process 4242 (main-loop-started) start_ticks 5123 parent 1 age 5m02s: srv\n"
"      thread 4242 'main' depth 2\n"
"        [2] lock-acquire lock 0x55d0c0ffee00, 12.3 s ago, origin 0x55d0c0a01234\n"
"            in serve+0x3c (server.c:88)\n"
"        [1] task-run task 17, 12.4 s ago, origin 0x55d0c0a00ff0\n"
"             request = \"GET /\"\n"
"    1 process, 1 thread, 21568/4194304 bytes used, corrupt no\n"
"\n"
"OPTIONS\n"
"    -p, --pid PID\n"
"        Only the process PID (all its generations, if the pid was\n"
"        reused).  Fails if the arena holds no such process.\n"
"    -s, --stacks\n"
"        Also stop each thread of the running processes shown for a\n"
"        moment with ptrace, unwind it (elfutils libdwfl, DWARF CFI) and\n"
"        print its real backtrace under its activities.  A thread that may\n"
"        not be traced (another uid, kernel.yama.ptrace_scope, already\n"
"        traced) is printed without one, and a line on stderr says why.\n"
"        Not with --trace.\n"
"    -j, --json\n"
"        Print the snapshot as one JSON document instead, with symbolized\n"
"        origins (schema \"actrack-dump/1\": docs/json-schema.json).\n"
"    -t, --trace\n"
"        Print it as Chrome trace-event JSON, one track per thread, for\n"
"        ui.perfetto.dev or chrome://tracing.\n"
"    -h, --help\n"
"        Print this help.\n"
"\n"
"EXIT STATUS\n"
"    0 on success, 1 if the arena cannot be read or PID is not in it,\n"
"    2 on a usage error.  A backtrace --stacks could not take does not\n"
"    change it.\n"
"\n"
"EXAMPLES\n"
"    actrack dump\n"
"    actrack dump --pid 1234\n"
"    actrack --arena /tmp/hang.arena dump | less\n";

struct dump_ctx {
	uint64_t now;
	struct symbolizer *sym;			/* NULL: raw addresses */
	struct stacks *stacks;			/* --stacks, else NULL */
	const struct actrack_snap_process *proc;	/* being printed */
};

/* " in lock_both+0x10e (demo.c:40)" after a raw pc, or nothing when only
 * the raw address is known. */
static void print_symbol(const struct dump_ctx *d, uint64_t pc)
{
	char buf[512];

	if (!d->sym || !pc)
		return;
	sym_format(d->sym, d->proc, pc, buf, sizeof(buf));
	if (strncmp(buf, "0x", 2))
		printf(" in %s", buf);
}

static void print_module(const struct actrack_snap_module *m)
{
	printf("    0x%016llx size 0x%llx build-id ",
	       (unsigned long long)m->base, (unsigned long long)m->size);
	if (!m->build_id_size)
		fputs("-", stdout);
	for (uint32_t i = 0; i < m->build_id_size; i++)
		printf("%02x", m->build_id[i]);
	fputc(' ', stdout);
	cli_print_escaped(stdout, m->path, sizeof(m->path));
	fputc('\n', stdout);
}

static void print_activity(const struct dump_ctx *d, uint32_t index,
			   const struct actrack_snap_activity *sa)
{
	char obj[96], age[48];

	printf("    [%u] %s %s, %s, origin 0x%llx", index + 1,
	       actrack_activity_name(sa->a.type),
	       cli_activity_object(obj, sizeof(obj), &sa->a),
	       cli_age(age, sizeof(age), d->now, sa->a.time_ns),
	       (unsigned long long)sa->a.origin);
	print_symbol(d, sa->a.origin);
	fputc('\n', stdout);
	cli_print_values(stdout, "         ", sa->values, sa->nr_values);
}

static void print_thread(const struct dump_ctx *d,
			 const struct actrack_snap_thread *t)
{
	char sig[32];

	printf("  thread %u '", t->tid);
	cli_print_escaped(stdout, t->name, sizeof(t->name));
	if (t->torn) {
		printf("' depth %u (torn: changed while reading)\n", t->depth);
		return;
	}
	printf("' depth %u", t->depth);
	if (t->depth > t->nr_activities)
		printf(" (+%u not stored)", t->depth - t->nr_activities);
	fputc('\n', stdout);
	if (t->fatal_signo) {
		printf("    fatal signal %s (%d) code %d addr 0x%llx pc 0x%llx",
		       cli_signal_name(t->fatal_signo, sig, sizeof(sig)),
		       t->fatal_signo, t->fatal_code,
		       (unsigned long long)t->fatal_addr,
		       (unsigned long long)t->fatal_pc);
		print_symbol(d, t->fatal_pc);
		fputc('\n', stdout);
	}
	/* Innermost first: that is where a hang is. */
	for (uint32_t i = t->nr_activities; i-- > 0;)
		print_activity(d, i, &t->activities[i]);
	stacks_print(d->stacks, d->sym, stdout, "    ", d->proc, t->tid);
}

static void print_process(struct dump_ctx *d,
			  const struct actrack_snap_process *p)
{
	char buf[48];

	d->proc = p;
	if (p->has_record) {
		printf("process %u (%s) start_ticks %llu parent %u age %s: ",
		       p->pid, actrack_phase_name(p->phase),
		       (unsigned long long)p->start_ticks, p->parent_pid,
		       cli_duration(buf, sizeof(buf),
				    d->now > p->launch_time_ns ?
				    d->now - p->launch_time_ns : 0));
		cli_print_escaped(stdout, p->cmdline, sizeof(p->cmdline));
		fputc('\n', stdout);
	} else {
		printf("process %u (no process record) start_ticks %llu\n",
		       p->pid, (unsigned long long)p->start_ticks);
	}
	if (p->nr_values) {
		puts("  annotations:");
		cli_print_values(stdout, "    ", p->values, p->nr_values);
	}
	if (p->nr_modules) {
		puts("  modules:");
		for (uint32_t i = 0; i < p->nr_modules; i++)
			print_module(&p->modules[i]);
	}
	if (p->nr_logs) {
		puts("  log:");
		for (uint32_t i = 0; i < p->nr_logs; i++) {
			const struct actrack_snap_log *l = &p->logs[i];

			printf("    %s tid %u: ",
			       cli_offset(buf, sizeof(buf), d->now, l->time_ns),
			       l->tid);
			cli_print_escaped(stdout, l->text, sizeof(l->text));
			fputc('\n', stdout);
		}
	}
	for (uint32_t i = 0; i < p->nr_threads; i++)
		print_thread(d, &p->threads[i]);
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

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "trace", no_argument, NULL, 't' },
		{ "stacks", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct actrack_snapshot *s;
	struct dump_ctx d;
	uint64_t pid = 0;
	uint32_t nr_threads = 0, shown = 0;
	bool have_pid = false, other_boot, json = false, trace = false;
	bool stacks = false;
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "p:jtsh", opts, NULL)) != -1) {
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
		case 'h':
			fputs(dump_help, stdout);
			return 0;
		default:
			if (optopt == 'p')
				return cli_usage_error("dump", "dump: %s: "
						       "missing argument",
						       argv[optind - 1]);
			return cli_usage_error("dump", "dump: unknown option "
					       "'%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("dump", "dump: unexpected argument '%s'",
				       argv[optind]);
	if (json && trace)
		return cli_usage_error("dump", "dump: --json and --trace "
				       "exclude each other");
	if (stacks && trace)
		return cli_usage_error("dump", "dump: --stacks does not apply "
				       "to --trace");
	if (cli_snapshot(&s))
		return 1;
	d.now = cli_now(s, &other_boot);
	d.stacks = stacks ? collect_stacks(s, have_pid, (uint32_t)pid) : NULL;
	if (json || trace) {
		if (json)
			ret = cli_dump_json(s, d.now, other_boot, have_pid,
					    (uint32_t)pid, d.stacks);
		else
			ret = cli_dump_trace(s, d.now, other_boot, have_pid,
					     (uint32_t)pid);
		stacks_free(d.stacks);
		actrack_snapshot_free(s);
		return ret;
	}
	cli_print_time_note(stdout, s, other_boot);
	d.sym = sym_new();
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		nr_threads += s->processes[i].nr_threads;
		if (have_pid && s->processes[i].pid != pid)
			continue;
		print_process(&d, &s->processes[i]);
		shown++;
	}
	sym_free(d.sym);
	stacks_free(d.stacks);
	if (have_pid && !shown) {
		actrack_snapshot_free(s);
		return cli_no_such_pid((uint32_t)pid);
	}
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
	actrack_snapshot_free(s);
	return ferror(stdout) ? 1 : 0;
}
