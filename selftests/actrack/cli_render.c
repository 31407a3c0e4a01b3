// SPDX-License-Identifier: MIT
/*
 * The CLI's one report shape (cli/render.c), driven directly: linked with
 * the CLI's objects, it renders a hand-built death report, the kind that
 * otherwise only actrack.ko makes (monitor_cli checks the real ones in the
 * VM), and the same process as a snapshot process.
 *
 * - A death report renders its threads exactly as dump renders the same
 *   threads from a snapshot: one text renderer, one JSON writer.
 * - Its text is compared whole.
 * - Its JSON line validates against docs/json-schema.json ($defs/death,
 *   whose process is the dump's process object) and uses dump's dialect:
 *   "level" from 1, "type" a name with "type_id" beside it.
 *
 * The schema is compiled in (.incbin), as in cli_json; python3 with
 * jsonschema is needed on the host and absent in the test VM (skipped).
 */
#include <signal.h>
#include "snapshot_helpers.h"
#include "test_harness.h"
#include "cli.h"
#include "json.h"
#include "render.h"
#include "symbolize.h"

#include "json_schema.h"

/* The CLI's global options live in its main.c, which is not linked. */
struct cli_globals cli;

/* An exit time later than any CLOCK_MONOTONIC of this run: the wall
 * clock time is "unknown", so that the text is the same on every run. */
#define EXIT_NS		(1ULL << 62)
#define MS_BEFORE(ms)	(EXIT_NS - (uint64_t)(ms) * 1000000ULL)

struct fixture_data {
	struct actrack_value annotation, request;
	struct actrack_snap_module module;
	struct actrack_snap_thread threads[3];
	struct actrack_snap_activity acts[3];
	struct actrack_death d;
};

static struct actrack_activity act(uint8_t type, uint64_t object,
				   uint64_t ms_before, uint64_t origin)
{
	struct actrack_activity a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.object = object;
	a.time_ns = MS_BEFORE(ms_before);
	a.origin = origin;
	return a;
}

static void death_build(struct fixture_data *f)
{
	static uint8_t ledger[] = "ledger", get[] = "GET /";
	static const uint8_t id[4] = { 0x12, 0x34, 0xab, 0xcd };
	struct actrack_death *d = &f->d;
	struct actrack_snap_thread *t;

	memset(f, 0, sizeof(*f));
	strcpy(f->annotation.name, "role");
	f->annotation.type = ACTRACK_VALUE_STRING;
	f->annotation.size = 6;
	f->annotation.bytes = ledger;
	strcpy(f->request.name, "request");
	f->request.type = ACTRACK_VALUE_STRING;
	f->request.size = 5;
	f->request.bytes = get;
	f->module.base = 0x555555554000ULL;
	f->module.size = 0x5000;
	f->module.build_id_size = sizeof(id);
	memcpy(f->module.build_id, id, sizeof(id));
	strcpy(f->module.path, "/nonexistent/server");

	d->process.pid = 4242;
	d->uid = 1000;
	d->process.start_ticks = 51234;
	d->seq = 7;
	d->wait_status = SIGKILL;
	d->signal = SIGKILL;
	d->exit_time_ns = EXIT_NS;
	d->process.phase = ACTRACK_PHASE_MAIN_LOOP_STARTED;
	strcpy(d->process.cmdline, "server --port 80");
	d->process.nr_values = 1;
	d->process.values = &f->annotation;
	d->process.nr_modules = 1;
	d->process.modules = &f->module;
	d->process.nr_threads = 3;
	d->process.threads = f->threads;
	d->process.has_record = true;
	d->nr_tracked_threads = 3;

	/* 3 deep, 2 stored: a task with user data, a lock it waits for. */
	for (int i = 0; i < 3; i++)
		f->threads[i].pid = 4242;
	t = &f->threads[0];
	t->tid = 4242;
	strcpy(t->name, "main");
	t->depth = 3;
	t->nr_activities = 2;
	t->activities = f->acts;
	t->activities[0].a = act(ACTRACK_ACT_TASK_RUN, 17, 50000,
			       0x555555555100ULL);
	t->activities[1].a = act(ACTRACK_ACT_LOCK_ACQUIRE, 0x5000, 1200,
			       0x555555555200ULL);
	t->activities[0].nr_values = 1;
	t->activities[0].values = &f->request;
	/* Changed on every copy attempt: no activities. */
	t = &f->threads[1];
	t->tid = 4243;
	strcpy(t->name, "torn");
	t->depth = 1;
	t->torn = true;
	/* Crashed in an I/O wait. */
	t = &f->threads[2];
	t->tid = 4244;
	strcpy(t->name, "worker\x01");
	t->depth = 1;
	t->nr_activities = 1;
	t->activities = f->acts + 2;
	t->activities[0].a = act(ACTRACK_ACT_IO_WAIT, 3, 500,
				 0x555555555600ULL);
	t->activities[0].a.info = 4096;
	t->fatal_signo = SIGSEGV;
	t->fatal_code = 1;
	t->fatal_addr = 0x10;
	t->fatal_pc = 0x555555555610ULL;
}

static const char want_text[] =
"pid 4242 (server --port 80) killed by SIGKILL after phase main-loop-started\n"
"  uid 1000, start tick 51234, died unknown, report #7\n"
"  annotations:\n"
"    role = \"ledger\"\n"
"  modules:\n"
"    0x0000555555554000 size 0x5000 build-id 1234abcd /nonexistent/server\n"
"  thread 4242 'main' depth 3 (+1 not stored)\n"
"    [2] lock-acquire lock 0x5000, for 1.2 s, origin 0x555555555200 in server+0x1200 (file not found)\n"
"    [1] task-run task 17, for 50.0 s, origin 0x555555555100 in server+0x1100 (file not found)\n"
"         request = \"GET /\"\n"
"  thread 4243 'torn' depth 1 (torn: changed while reading)\n"
"  thread 4244 'worker\\x01' depth 1\n"
"    fatal signal SIGSEGV (11) code 1 addr 0x10 pc 0x555555555610 in server+0x1610 (file not found)\n"
"    [1] io-wait fd 3, 4096 bytes, for 500 ms, origin 0x555555555600 in server+0x1600 (file not found)\n";

/* Checks beyond the schema; argv: schema, document. */
static const char checker[] =
"import json, sys\n"
"import jsonschema\n"
"schema = json.load(open(sys.argv[1]))\n"
"raw = open(sys.argv[2], 'rb').read()\n"
"assert raw.endswith(b'\\n') and raw.count(b'\\n') == 1, raw\n"
"doc = json.loads(raw)\n"
"cls = jsonschema.validators.validator_for(schema)\n"
"cls.check_schema(schema)\n"
"cls(schema).validate(doc)\n"
"jsonschema.validate(doc, {'$ref': '#/$defs/death', '$defs': schema['$defs']})\n"
"assert doc['schema'] == 'actrack-death/1'\n"
"assert doc['signal'] == 9 and doc['exit_code'] is None, doc\n"
"assert doc['exit_time'] is None and doc['seq'] == 7\n"
"p = doc['process']\n"
"assert p['pid'] == 4242 and p['phase'] == 'main-loop-started', p\n"
"assert p['phase_id'] == 6 and p['parent_pid'] is None, p\n"
"assert p['cmdline'] == 'server --port 80'\n"
"assert p['values'][0]['value'] == 'ledger'\n"
"t = p['threads']\n"
"assert [x['tid'] for x in t] == [4242, 4243, 4244]\n"
"assert t[0]['start_time_ns'] is None and t[0]['stored'] == 2\n"
"a = t[0]['activities']\n"
"assert [x['level'] for x in a] == [1, 2], a\n"
"assert [x['type'] for x in a] == ['task-run', 'lock-acquire'], a\n"
"assert [x['type_id'] for x in a] == [0x11, 0x21], a\n"
"assert a[0]['age_ns'] == '50000000000' and a[1]['age_ns'] == '1200000000'\n"
"assert a[0]['values'][0]['value'] == 'GET /'\n"
"assert a[0]['symbol']['module'] == '/nonexistent/server'\n"
"assert a[0]['symbol']['module_offset'] == 0x1100\n"
"assert t[1]['torn'] and t[1]['activities'] == [] and t[1]['stored'] == 0\n"
"assert t[2]['fatal']['signal'] == 'SIGSEGV' and t[2]['fatal']['pc'] == 0x555555555610\n"
"assert t[2]['name'] == 'worker\\x01'\n"
"print('OK')\n";

FIXTURE(shape) {
	struct fixture_data f;
	struct symbolizer *sym;
	char *text;
	size_t len;
	FILE *out;
};

FIXTURE_SETUP(shape)
{
	death_build(&self->f);
	self->sym = sym_new();
	ASSERT_NE(NULL, self->sym);
	self->text = NULL;
	self->out = open_memstream(&self->text, &self->len);
	ASSERT_NE(NULL, self->out);
}

FIXTURE_TEARDOWN(shape)
{
	if (self->out)
		fclose(self->out);
	free(self->text);
	sym_free(self->sym);
}

TEST_F(shape, death_text)
{
	ASSERT_EQ(0, render_death_text(self->out, self->sym, &self->f.d,
				       "live"));
	ASSERT_EQ(0, fflush(self->out));
	EXPECT_STREQ(want_text, self->text);
}

/*
 * Who ended it and where it lived, in the lines right after the headline:
 * the sender of the fatal signal, or the OOM kill instead of the kernel's
 * SIGKILL; then the cgroup, with its unit when known.  One row per case.
 */
#define KERNEL_SIGKILL	{ .kind = ACTRACK_KILLER_KERNEL, .signal = SIGKILL, \
			  .code = SI_KERNEL }
#define REAPER	.kind = ACTRACK_KILLER_PROCESS, .signal = SIGKILL, \
		.code = SI_USER, .pid = 812, .comm = "grim-reaper"

static const struct who_case {
	bool has_killer;
	struct actrack_death_killer k;
	bool has_oom;
	struct actrack_death_oom o;
	const char *cgroup, *unit;
	const char *lines;		/* right after the headline */
	const char *absent;		/* NULL, or text not in the report */
} who_cases[] = {
	/* The sender; its executable and cgroup (ABI 1.8) when told. */
	{ true, { REAPER, .exe = "/usr/bin/grim-reaper",
		  .cgroup = "/system.slice/cron.service" }, false, { 0 }, "",
	  "", "  killed by SIGKILL from pid 812 (grim-reaper, "
	  "/usr/bin/grim-reaper, uid 0, /system.slice/cron.service) via "
	  "kill()\n", NULL },
	/* The exe not the reader's to see: the line. */
	{ true, { REAPER, .cgroup = "/system.slice/cron.service" }, false,
	  { 0 }, "", "", "  killed by SIGKILL from pid 812 (grim-reaper, "
	  "uid 0, /system.slice/cron.service) via kill()\n", NULL },
	/* An older module: neither. */
	{ true, { REAPER }, false, { 0 }, "", "",
	  "  killed by SIGKILL from pid 812 (grim-reaper, uid 0) via "
	  "kill()\n", NULL },
	{ true, { .kind = ACTRACK_KILLER_PROCESS, .signal = SIGKILL,
		  .code = SI_USER }, false, { 0 }, "", "",
	  "  killed by SIGKILL from a process outside your pid namespace "
	  "via kill()\n", NULL },
	{ true, { .kind = ACTRACK_KILLER_SELF, .signal = SIGKILL,
		  .code = SI_TKILL, .pid = 4242, .uid = 1000,
		  .comm = "server", .exe = "/usr/bin/server",
		  .cgroup = "/system.slice/db.service" }, false, { 0 }, "", "",
	  "  killed by SIGKILL by itself via raise()\n", NULL },
	{ true, KERNEL_SIGKILL, false, { 0 }, "", "",
	  "  killed by SIGKILL from the kernel (si_code 128, SI_KERNEL)\n",
	  NULL },
	/* The OOM kill: one line instead of the kernel's SIGKILL. */
	{ true, KERNEL_SIGKILL, true,
	  { 522397696ULL, 0, 0, 0, "/system.slice/db.service", 536870912ULL,
	    536608768ULL }, "", "",
	  "  killed by the OOM killer: memory cgroup /system.slice/db.service "
	  "at its limit 512.0 MiB, rss 498.2 MiB anon\n", "from the kernel" },
	{ true, KERNEL_SIGKILL, true,
	  { 1073741824ULL, 812, 3ULL << 30, -500, "", 8ULL << 30,
	    8ULL << 30 }, "", "",
	  "  killed by the OOM killer: memory cgroup (path not told) at its "
	  "limit 8.0 GiB, rss 1.0 GiB anon, 812 B file, 3.0 GiB shmem, "
	  "oom_score_adj -500\n", "from the kernel" },
	{ true, KERNEL_SIGKILL, true, { 0, 0, 0, 1000, "", 0, 0 }, "", "",
	  "  killed by the OOM killer: no memory cgroup at its limit, rss "
	  "0 B, oom_score_adj 1000\n", "from the kernel" },
	/* Where it lived: after the killer's line, the unit when known. */
	{ true, KERNEL_SIGKILL, false, { 0 }, "/system.slice/db.service",
	  "db.service", "  killed by SIGKILL from the kernel (si_code 128, "
	  "SI_KERNEL)\n  cgroup /system.slice/db.service (unit "
	  "db.service)\n", NULL },
	{ false, { 0 }, false, { 0 }, "/../outside/x", "",
	  "  cgroup /../outside/x\n", NULL },
	/* Neither: no line (the next is the uid line). */
	{ false, { 0 }, false, { 0 }, "", "", "  uid ", NULL },
};

TEST_F(shape, death_who_lines)
{
	const struct who_case *c;
	const char *line;

	for (size_t i = 0; i < sizeof(who_cases) / sizeof(who_cases[0]); i++) {
		c = &who_cases[i];
		self->f.d.has_killer = c->has_killer;
		self->f.d.killer = c->k;
		self->f.d.has_oom = c->has_oom;
		self->f.d.oom = c->o;
		snprintf(self->f.d.cgroup, sizeof(self->f.d.cgroup), "%s",
			 c->cgroup);
		snprintf(self->f.d.unit, sizeof(self->f.d.unit), "%s",
			 c->unit);
		rewind(self->out);
		ASSERT_EQ(0, render_death_text(self->out, self->sym,
					       &self->f.d, "live"));
		ASSERT_EQ(0, fflush(self->out));
		line = strchr(self->text, '\n');
		ASSERT_NE(NULL, line);
		EXPECT_EQ(0, strncmp(line + 1, c->lines, strlen(c->lines)))
			TH_LOG("case %zu: %s", i, self->text);
		if (c->absent)
			EXPECT_EQ(NULL, strstr(self->text, c->absent))
				TH_LOG("case %zu: %s", i, self->text);
	}
}

/*
 * One renderer: the process of the report, given to the renderer as a
 * snapshot process (what dump has), comes out line for line as the body
 * of the death report, in text and in JSON.
 */
TEST_F(shape, death_and_snapshot_render_alike)
{
	struct render r = { .sym = self->sym, .now = EXIT_NS,
			    .death = true };
	struct actrack_snap_activity acts[3];
	struct actrack_snap_thread t[3];
	struct actrack_snap_process p;
	const char *body;
	char *json = NULL, *json2 = NULL;
	size_t n;
	struct json j;
	FILE *f;

	/* The snapshot process, built by hand as the library fills one. */
	memset(&p, 0, sizeof(p));
	memset(t, 0, sizeof(t));
	memset(acts, 0, sizeof(acts));
	p.pid = 4242;
	p.start_ticks = 51234;
	p.has_record = true;
	p.phase = ACTRACK_PHASE_MAIN_LOOP_STARTED;
	strcpy(p.cmdline, "server --port 80");
	p.nr_values = 1;
	p.values = &self->f.annotation;
	p.nr_modules = 1;
	p.modules = &self->f.module;
	p.nr_threads = 3;
	p.threads = t;
	for (int i = 0; i < 3; i++) {
		const struct actrack_snap_thread *dt = &self->f.threads[i];

		t[i].pid = 4242;
		t[i].tid = dt->tid;
		memcpy(t[i].name, dt->name, sizeof(t[i].name));
		t[i].depth = dt->depth;
		t[i].torn = dt->torn;
		t[i].fatal_signo = dt->fatal_signo;
		t[i].fatal_code = dt->fatal_code;
		t[i].fatal_addr = dt->fatal_addr;
		t[i].fatal_pc = dt->fatal_pc;
	}
	acts[0].a = self->f.threads[0].activities[0].a;
	acts[0].nr_values = 1;
	acts[0].values = &self->f.request;
	acts[1].a = self->f.threads[0].activities[1].a;
	acts[2].a = self->f.threads[2].activities[0].a;
	t[0].activities = acts;
	t[0].nr_activities = 2;
	t[2].activities = acts + 2;
	t[2].nr_activities = 1;

	render_process_text(&r, self->out, &p);
	ASSERT_EQ(0, fflush(self->out));
	/* The death report's text after its two headline lines. */
	body = strstr(want_text, "  annotations:\n");
	ASSERT_NE(NULL, body);
	EXPECT_STREQ(body, self->text);

	f = open_memstream(&json, &n);
	ASSERT_NE(NULL, f);
	json_init(&j, f, 0);
	render_process_json(&r, &j, &p);
	EXPECT_EQ(0, json_finish(&j));
	fclose(f);
	f = open_memstream(&json2, &n);
	ASSERT_NE(NULL, f);
	json_init(&j, f, 0);
	EXPECT_EQ(0, render_death_json(&j, self->sym, &self->f.d, "live"));
	EXPECT_EQ(0, json_finish(&j));
	fclose(f);
	/* The death line ends with "process": <that object>. */
	ASSERT_NE(NULL, strstr(json2, ",\"process\":{"));
	json[strlen(json) - 1] = 0;	/* the newline */
	body = strstr(json2, ",\"process\":{") + 11;
	EXPECT_EQ(0, strncmp(json, body, strlen(json))) TH_LOG("%s", body);
	EXPECT_STREQ("}\n", body + strlen(json));
	free(json);
	free(json2);
}

TEST_F(shape, death_json_validates)
{
	char doc[256], schema[256];
	char *argv[] = { "/usr/bin/python3", "-c", (char *)checker, schema,
			 doc, NULL };
	struct run py;
	struct json j;
	FILE *f;

	test_path(doc, sizeof(doc), "cli-render-doc");
	test_path(schema, sizeof(schema), "cli-render-schema");
	ASSERT_EQ(0, write_file(schema, actrack_test_schema,
				strlen(actrack_test_schema)));
	f = fopen(doc, "w");
	ASSERT_NE(NULL, f);
	json_init(&j, f, 0);
	/* With a killer object, which the schema must know. */
	self->f.d.has_killer = true;
	self->f.d.killer = (struct actrack_death_killer){
		ACTRACK_KILLER_PROCESS, SIGKILL, SI_USER, 812, 0, "grim-reaper",
		"/usr/bin/grim-reaper", "/system.slice/cron.service",
	};
	/* And where it lived. */
	snprintf(self->f.d.cgroup, sizeof(self->f.d.cgroup),
		 "/system.slice/db.service");
	snprintf(self->f.d.unit, sizeof(self->f.d.unit), "db.service");
	/* And the OOM kill. */
	self->f.d.has_oom = true;
	self->f.d.oom = (struct actrack_death_oom){
		522397696ULL, 0, 0, -500, "/system.slice/db.service",
		536870912ULL, 536608768ULL,
	};
	EXPECT_EQ(0, render_death_json(&j, self->sym, &self->f.d, "recent"));
	EXPECT_EQ(0, json_finish(&j));
	fclose(f);

	ASSERT_EQ(0, run_program(&py, argv[0], NULL, argv));
	if (py.status == 127 && getenv("ACTRACK_IN_VM")) {
		run_free(&py);
		unlink(doc);
		unlink(schema);
		SKIP(return, "no python3 in the test VM");
	}
	EXPECT_EQ(0, py.status) TH_LOG("%s", py.err);
	EXPECT_STREQ("OK\n", py.out);
	run_free(&py);
	unlink(doc);
	unlink(schema);
}

TEST_HARNESS_MAIN
