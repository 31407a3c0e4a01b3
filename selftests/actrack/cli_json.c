// SPDX-License-Identifier: MIT
/*
 * The CLI's JSON documents on arenas written by the library: `dump --json`
 * and `hangs --json` must parse and validate against docs/json-schema.json,
 * untrusted strings (control characters, invalid UTF-8) must come out as
 * valid JSON with the bytes recoverable, and `dump --trace` must be a
 * Chrome trace with one named track per thread.
 *
 * Validation uses python3's jsonschema module (Debian python3-jsonschema,
 * installed by scripts/setup): a missing module is a failure on the host.
 * The test VM has no python at all; there the checks that need it are
 * skipped, the byte-level ones still run.
 *
 * The schema is compiled into this binary (.incbin, resolved from the top
 * of the source tree where make runs), so the test checks the schema of
 * the tree it was built from wherever it runs.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

#include "json_schema.h"

/*
 * Checks beyond the schema; argv: schema, document, kind, expectations.
 * Prints OK and exits 0, or raises.
 */
static const char checker[] =
"import json, sys\n"
"import jsonschema\n"
"schema = json.load(open(sys.argv[1]))\n"
"raw = open(sys.argv[2], 'rb').read()\n"
"raw.decode('utf-8')  # strict: the document must be valid UTF-8\n"
"doc = json.loads(raw)\n"
"kind = sys.argv[3]\n"
"if kind != 'trace':\n"
"    cls = jsonschema.validators.validator_for(schema)\n"
"    cls.check_schema(schema)\n"
"    cls(schema).validate(doc)\n"
"if kind == 'dump':\n"
"    pid = int(sys.argv[4])\n"
"    assert doc['schema'] == 'actrack-dump/3'\n"
"    procs = [p for p in doc['processes'] if p['pid'] == pid]\n"
"    assert len(procs) == 1, procs\n"
"    p = procs[0]\n"
"    assert p['has_record'] and p['phase'] == 'main-loop-started', p\n"
"    v = {x['name']: x for x in p['values']}\n"
"    assert v['motto']['value'] == 'say \"hi\"\\n\\tbye', v['motto']\n"
"    assert v['bytes']['value'] == '\\x01\\xff\\u20ac', v['bytes']\n"
"    assert v['raw']['value'] == 'de00ad' and v['raw']['size'] == 3\n"
"    assert v['yes']['value'] is True\n"
"    assert v['grade']['value'] == 'q'\n"
"    # Above 2^53 a double rounds: 64-bit integers are strings.\n"
"    assert v['delta']['value'] == '-42'\n"
"    assert v['max']['value'] == '18446744073709551615'\n"
"    assert v['ref']['value'] == {'address': 4096, 'size': 16}, v['ref']\n"
"    assert v['sref']['type'] == 'string-ref'\n"
"    t = p['threads'][0]\n"
"    assert t['name'] == 'j\\x01\\xff\\u20ac', repr(t['name'])\n"
"    assert t['depth'] == 3 and t['stored'] == 3 and not t['torn']\n"
"    assert t['fatal'] is None\n"
"    a = t['activities']\n"
"    assert [x['type'] for x in a] == ['task-run', 'lock-held', 'io-wait'], a\n"
"    assert [x['level'] for x in a] == [1, 2, 3]\n"
"    assert a[0]['object'] == '77' and a[2]['object'] == '5'\n"
"    assert a[2]['info'] == '1234' and a[2]['description'] == 'fd 5, 1234 bytes'\n"
"    assert a[0]['values'][0] == {'name': 'step', 'type': 'unsigned', 'value': '3'}\n"
"    for x in a:\n"
"        assert int(x['time_ns']) - int(doc['now_ns']) == -int(x['age_ns']), x\n"
"    assert isinstance(doc['arena']['create_real_ns'], str)\n"
"    assert int(doc['arena']['create_real_ns']) > 2**53\n"
"    assert a[0]['symbol']['function'] == 'json_writer', a[0]['symbol']\n"
"    assert [l['text'] for l in p['logs']] == ['line\\none', 'bad \\xfe byte']\n"
"    assert any(m['build_id'] for m in p['modules'])\n"
"    g = {x['name']: x for x in doc['global']}\n"
"    if sys.argv[5:] == ['pid-only']:\n"
"        assert g == {}, g\n"
"    else:\n"
"        assert g['fleet']['value'] == 'blue', doc['global']\n"
"    assert doc['arena']['size'] > 0 and doc['arena']['corrupt'] is False\n"
"elif kind == 'hangs':\n"
"    tids = sorted(int(x) for x in sys.argv[4:6])\n"
"    assert doc['schema'] == 'actrack-hangs/3'\n"
"    assert sorted(h['tid'] for h in doc['hung']) == tids, doc['hung']\n"
"    assert len(doc['deadlocks']) == 1, doc['deadlocks']\n"
"    e = doc['deadlocks'][0]['edges']\n"
"    assert len(e) == 2 and e[0]['to'] == e[1]['from'] and e[1]['to'] == e[0]['from']\n"
"    assert sorted(x['from']['tid'] for x in e) == tids\n"
"    assert all(x['type'] == 'lock-acquire' for x in e)\n"
"elif kind == 'trace':\n"
"    pid, tid, nb = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])\n"
"    ev = doc['traceEvents']\n"
"    names = [e for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name' and e['tid'] == tid]\n"
"    assert len(names) == 1 and names[0]['pid'] == pid, names\n"
"    assert names[0]['args']['name'] == 'j\\x01\\xff\\u20ac'\n"
"    b = [e for e in ev if e['ph'] == 'B' and e['tid'] == tid]\n"
"    assert len(b) == nb, b\n"
"    assert all(isinstance(e['ts'], (int, float)) and e['ts'] >= 0 for e in b)\n"
"    assert [e['ts'] for e in b] == sorted(e['ts'] for e in b)\n"
"    assert b[2]['name'] == 'io-wait fd 5, 1234 bytes' and b[2]['cat'] == 'io-wait'\n"
"    assert any(e['ph'] == 'M' and e['name'] == 'process_name' and e['pid'] == pid for e in ev)\n"
"    assert any(e['ph'] == 'i' and e['name'] == 'snapshot' for e in ev)\n"
"    assert any(e['ph'] == 'i' and e['name'] == 'line\\none' for e in ev)\n"
"else:\n"
"    raise SystemExit('unknown kind ' + kind)\n"
"print('OK')\n";

static int the_lock;

static __attribute__((noinline)) void json_writer(void *arg)
{
	static const uint8_t raw[3] = { 0xde, 0x00, 0xad };
	static const char blob[] = "0123456789abcdef";
	struct actrack_user_data *ud = actrack_process_data();
	uint32_t tok;

	actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
	actrack_set_string(ud, "motto", "say \"hi\"\n\tbye");
	/* A control byte, a lone 0xff, then a valid euro sign. */
	actrack_set_string(ud, "bytes", "\x01\xff\xe2\x82\xac");
	actrack_set_raw(ud, "raw", raw, sizeof(raw));
	actrack_set_bool(ud, "yes", true);
	actrack_set_char(ud, "grade", 'q');
	actrack_set_int(ud, "delta", -42);
	actrack_set_uint(ud, "max", UINT64_MAX);
	actrack_set_raw_ref(ud, "ref", (const void *)(uintptr_t)4096, 16);
	actrack_set_string_ref(ud, "sref", blob);
	actrack_set_string(actrack_global_data(), "fleet", "blue");
	actrack_log("line\none");
	actrack_log("bad \xfe byte");
	actrack_thread_init("j\x01\xff\xe2\x82\xac");
	tok = actrack_push_task(77);
	actrack_set_uint(actrack_activity_data(tok), "step", 3);
	actrack_push_lock_held(&the_lock);
	actrack_push_io_wait(5, 1234);
}

/* Two threads in a lock cycle (for hangs --json). */
struct cycle {
	pthread_mutex_t m[2];
	int holds[2], blocked[2], tid[2];
};

static struct cycle *cycle_sh;

static void *cycle_thread(void *arg)
{
	int me = (int)(intptr_t)arg, other = 1 - me;

	actrack_thread_init(me ? "cyc-1" : "cyc-0");
	__atomic_store_n(&cycle_sh->tid[me], (int)syscall(SYS_gettid),
			 __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&cycle_sh->m[me]);
	actrack_push_lock_held(&cycle_sh->m[me]);
	__atomic_store_n(&cycle_sh->holds[me], 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&cycle_sh->holds[other], __ATOMIC_SEQ_CST))
		usleep(1000);
	actrack_push_lock_acquire(&cycle_sh->m[other]);
	__atomic_store_n(&cycle_sh->blocked[me], 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&cycle_sh->m[other]);
	return NULL;
}

static void cycle_writer(void *arg)
{
	pthread_t t[2];

	cycle_sh = arg;
	pthread_create(&t[0], NULL, cycle_thread, (void *)0);
	pthread_create(&t[1], NULL, cycle_thread, (void *)1);
	for (int i = 0; i < 10000; i++) {
		if (__atomic_load_n(&cycle_sh->blocked[0], __ATOMIC_SEQ_CST) &&
		    __atomic_load_n(&cycle_sh->blocked[1], __ATOMIC_SEQ_CST))
			break;
		usleep(1000);
	}
}

FIXTURE(json) {
	char path[256], doc[256], schema[256];
	struct writer w;
	struct run r, py;
};

FIXTURE_SETUP(json)
{
	memset(&self->w, 0, sizeof(self->w));
	memset(&self->r, 0, sizeof(self->r));
	memset(&self->py, 0, sizeof(self->py));
	test_path(self->path, sizeof(self->path), "cli-json");
	test_path(self->doc, sizeof(self->doc), "cli-json-doc");
	test_path(self->schema, sizeof(self->schema), "cli-json-schema");
	ASSERT_EQ(0, write_file(self->schema, actrack_test_schema,
				strlen(actrack_test_schema)));
}

FIXTURE_TEARDOWN(json)
{
	if (self->r.out)
		LOG_ON_FAILURE(&self->r);
	if (self->py.out && ACTRACK_TEST_FAILED(_metadata))
		TH_LOG("checker: exit %d\n%s%s", self->py.status,
		       self->py.out, self->py.err);
	run_free(&self->r);
	run_free(&self->py);
	writer_stop(&self->w);
	unlink(self->path);
	unlink(self->doc);
	unlink(self->schema);
}

/*
 * Is python3 with jsonschema there?  On the host scripts/setup installs
 * it, so its absence is a failure; the test VM has no python at all.
 * Return: 1 to go on with the python checks, 0 to skip them (VM), -1 if
 * the test has failed.
 */
static int have_checker(struct __test_metadata *_metadata, struct run *py)
{
	char *argv[] = { "/usr/bin/python3", "-c", "import jsonschema", NULL };

	if (run_program(py, argv[0], NULL, argv))
		return -1;
	if (py->status == 127 && getenv("ACTRACK_IN_VM")) {
		run_free(py);
		return 0;
	}
	EXPECT_EQ(0, py->status) {
		TH_LOG("python3 with the jsonschema module is needed "
		       "(Debian: python3-jsonschema, run scripts/setup): %s",
		       py->err);
	}
	run_free(py);
	return !ACTRACK_TEST_FAILED(_metadata) ? 1 : -1;
}

/* The python checks, or a skip in the VM (a macro: it returns). */
#define CHECKER_OR_SKIP()						\
	do {								\
		int __c = have_checker(_metadata, &self->py);		\
									\
		if (__c < 0)						\
			return;						\
		if (!__c)						\
			SKIP(return, "no python3 in the test VM");	\
	} while (0)

static void check(struct __test_metadata *_metadata, struct run *py,
		  char *const args[])
{
	char *argv[16] = { "/usr/bin/python3", "-c", (char *)checker };
	int n = 3;

	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	ASSERT_EQ(0, run_program(py, argv[0], NULL, argv));
	EXPECT_EQ(0, py->status);
	EXPECT_STREQ("OK\n", py->out);
}

TEST_F(json, dump_validates_and_keeps_every_byte)
{
	char *argv[] = { "actrack", "--arena", self->path, "dump", "--json",
			 NULL };
	char pid[16];

	ASSERT_EQ(0, writer_start(&self->w, self->path, 8, 0, json_writer,
				  NULL));
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	/* Byte-level, without python: schema tag, escapes of bad bytes. */
	EXPECT_EQ(0, strncmp(self->r.out, "{\n  \"schema\": \"actrack-dump/3\",",
			     31));
	EXPECT_NE(NULL, strstr(self->r.out,
			       "\"name\": \"j\\u0001\\u00ff\xe2\x82\xac\""));
	EXPECT_NE(NULL, strstr(self->r.out,
			       "\"value\": \"say \\\"hi\\\"\\n\\tbye\""));
	EXPECT_NE(NULL, strstr(self->r.out, "\"text\": \"bad \\u00fe byte\""));
	ASSERT_EQ(0, write_file(self->doc, self->r.out, strlen(self->r.out)));

	CHECKER_OR_SKIP();
	snprintf(pid, sizeof(pid), "%d", self->w.pid);
	check(_metadata, &self->py, (char *[]){ self->schema, self->doc,
						"dump", pid, NULL });
}

TEST_F(json, dump_pid_filter)
{
	char pid[16];
	char *argv[] = { "actrack", "--arena", self->path, "dump", "--json",
			 "--pid", pid, NULL };
	char *missing[] = { "actrack", "--arena", self->path, "dump", "--json",
			    "--pid", "4000000", NULL };

	ASSERT_EQ(0, writer_start(&self->w, self->path, 8, 0, json_writer,
				  NULL));
	snprintf(pid, sizeof(pid), "%d", self->w.pid);
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	/* Global data belongs to no process: not in a --pid document. */
	EXPECT_NE(NULL, strstr(self->r.out, "\"global\": []"));
	EXPECT_EQ(NULL, strstr(self->r.out, "\"fleet\""));
	ASSERT_EQ(0, write_file(self->doc, self->r.out, strlen(self->r.out)));
	run_free(&self->r);
	ASSERT_EQ(0, run_cli(&self->r, NULL, missing));
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("", self->r.out);
	EXPECT_EQ(1, count_lines(self->r.err));
	EXPECT_NE(NULL, strstr(self->r.err, "no process 4000000"));

	CHECKER_OR_SKIP();
	check(_metadata, &self->py, (char *[]){ self->schema, self->doc,
						"dump", pid, "pid-only",
						NULL });
}

TEST_F(json, hangs_validates)
{
	char *argv[] = { "actrack", "--arena", self->path, "hangs", "--for",
			 "50ms", "--interval", "100", "--json", NULL };
	char t0[16], t1[16];
	struct cycle *sh;
	pthread_mutexattr_t attr;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&sh->m[0], &attr);
	pthread_mutex_init(&sh->m[1], &attr);
	ASSERT_EQ(0, writer_start(&self->w, self->path, 8, 0, cycle_writer,
				  sh));
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(3, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_EQ(0, strncmp(self->r.out,
			     "{\n  \"schema\": \"actrack-hangs/3\",", 32));
	ASSERT_EQ(0, write_file(self->doc, self->r.out, strlen(self->r.out)));
	snprintf(t0, sizeof(t0), "%d", sh->tid[0]);
	snprintf(t1, sizeof(t1), "%d", sh->tid[1]);

	CHECKER_OR_SKIP();
	check(_metadata, &self->py, (char *[]){ self->schema, self->doc,
						"hangs", t0, t1, NULL });
}

TEST_F(json, chrome_trace_has_a_track_per_thread)
{
	char *argv[] = { "actrack", "--arena", self->path, "dump", "--trace",
			 NULL };
	char pid[16];

	ASSERT_EQ(0, writer_start(&self->w, self->path, 8, 0, json_writer,
				  NULL));
	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	EXPECT_EQ(0, strncmp(self->r.out, "{\n  \"traceEvents\": [\n", 21));
	EXPECT_NE(NULL, strstr(self->r.out, "\"ph\":\"B\""));
	ASSERT_EQ(0, write_file(self->doc, self->r.out, strlen(self->r.out)));

	CHECKER_OR_SKIP();
	/* The writer's main thread is tid == pid, with 3 activities. */
	snprintf(pid, sizeof(pid), "%d", self->w.pid);
	check(_metadata, &self->py, (char *[]){ self->schema, self->doc,
						"trace", pid, pid, "3", NULL });
}

TEST_F(json, dump_and_trace_exclude_each_other)
{
	char *argv[] = { "actrack", "--arena", self->path, "dump", "--json",
			 "--trace", NULL };

	ASSERT_EQ(0, run_cli(&self->r, NULL, argv));
	EXPECT_EQ(2, self->r.status);
	EXPECT_EQ(1, count_lines(self->r.err));
	EXPECT_STREQ("", self->r.out);
}

TEST_HARNESS_MAIN
