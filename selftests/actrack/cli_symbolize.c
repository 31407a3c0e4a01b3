// SPDX-License-Identifier: MIT
/*
 * Symbolization of activity origins and fault pcs by the CLI (elfutils
 * libdwfl), on arenas written by the library from this very binary, which
 * the Makefile compiles with -g: the origin of a push names the function
 * and the line of the push, inlined functions are named as such, a fault
 * pc is symbolized after its process is gone, and the module records are
 * not trusted: another build of the file (build-id mismatch), a missing
 * file, a relative path or a FIFO give module+offset and a note, never
 * wrong symbols or a hang; without module records, the raw address.  The
 * symbolizer's cache (per file and address in the file) keeps processes
 * with different load biases apart and stays right past its size.
 */
#include <sys/prctl.h>
#include "snapshot_helpers.h"
#include "test_harness.h"
#include "../../cli/symbolize.h"	/* SYM_CACHE_MAX */

/* The push and its line number, on adjacent lines on purpose. */
static __attribute__((noinline)) void symbolize_me_please(void) { actrack_push_task(4242); }
static const int push_line = __LINE__ - 1;

static inline __attribute__((always_inline)) void pushes_inline(void)
{
	actrack_push_task(4343);
}
static const int inline_line = __LINE__ - 2;

static __attribute__((noinline)) void outer_caller(void)
{
	pushes_inline();
	__asm__ volatile("" ::: "memory");	/* no tail merging */
}

static void writer(void *arg)
{
	actrack_thread_init("sym");
	symbolize_me_please();
	outer_caller();
}

/* Opaque to the compiler, so it cannot see (and warn about) the store. */
static volatile uintptr_t bad_address = 16;

static __attribute__((noinline)) void crash_here(void)
{
	*(volatile int *)bad_address = 1;
}

FIXTURE(sym) {
	char path[256], extra[256];
	struct writer w;
	struct run r;
};

FIXTURE_SETUP(sym)
{
	memset(&self->w, 0, sizeof(self->w));
	memset(&self->r, 0, sizeof(self->r));
	test_path(self->path, sizeof(self->path), "cli-sym");
	test_path(self->extra, sizeof(self->extra), "cli-sym-extra");
}

FIXTURE_TEARDOWN(sym)
{
	if (self->r.out)
		LOG_ON_FAILURE(&self->r);
	run_free(&self->r);
	writer_stop(&self->w);
	unlink(self->path);
	unlink(self->extra);
}

static int dump_json(struct run *r, const char *path)
{
	char *argv[] = { "actrack", "--arena", (char *)path, "dump", "--json",
			 NULL };

	run_free(r);
	return run_cli(r, NULL, argv);
}

/* The "text" of the first symbol of @out that contains @needle. */
static char *symbol_text(const char *out, const char *needle, char *buf,
			 size_t len)
{
	const char *p = out;

	while ((p = strstr(p, "\"text\": \""))) {
		const char *s = p + 9, *e = strchr(s, '"');

		p = s;
		if (!e)
			break;
		snprintf(buf, len, "%.*s", (int)(e - s), s);
		if (strstr(buf, needle))
			return buf;
	}
	buf[0] = 0;
	return NULL;
}

TEST_F(sym, origin_names_function_file_and_line)
{
	char want[128], text[512];
	char pid[16];
	char *top[] = { "actrack", "--arena", self->path, "top",
			"--iterations", "1", "--pid", pid, NULL };

	ASSERT_EQ(0, writer_start(&self->w, self->path, 8, 0, writer, NULL));
	ASSERT_EQ(0, dump_json(&self->r, self->path));
	ASSERT_EQ(0, self->r.status);
	EXPECT_NE(NULL, symbol_text(self->r.out, "symbolize_me_please+0x",
				    text, sizeof(text)));
	snprintf(want, sizeof(want), " (cli_symbolize.c:%d)", push_line);
	EXPECT_NE(NULL, strstr(text, want)) {
		TH_LOG("symbol '%s', expected '%s'", text, want);
	}
	EXPECT_NE(NULL, strstr(self->r.out,
			       "\"function\": \"symbolize_me_please\""));
	snprintf(want, sizeof(want), "\"line\": %d,", push_line);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	EXPECT_NE(NULL, strstr(self->r.out, "cli_symbolize.c\",\n"));

	/* top shows the same origin. */
	snprintf(pid, sizeof(pid), "%d", self->w.pid);
	run_free(&self->r);
	ASSERT_EQ(0, run_cli(&self->r, NULL, top));
	EXPECT_EQ(0, self->r.status);
	snprintf(want, sizeof(want), "(cli_symbolize.c:%d)", inline_line);
	EXPECT_NE(NULL, strstr(self->r.out, want));
	EXPECT_NE(NULL, strstr(self->r.out, " task-run      task 4343 "));
}

TEST_F(sym, inlined_push_names_both_functions)
{
	char want[128], text[512];

	ASSERT_EQ(0, writer_start(&self->w, self->path, 8, 0, writer, NULL));
	ASSERT_EQ(0, dump_json(&self->r, self->path));
	ASSERT_EQ(0, self->r.status);
	EXPECT_NE(NULL, symbol_text(self->r.out, "pushes_inline", text,
				    sizeof(text)));
#ifdef __clang__
	/* clang never inlines a function that takes a label's address. */
	EXPECT_EQ(0, strncmp(text, "pushes_inline+0x", 16)) {
		TH_LOG("symbol '%s'", text);
	}
#else
	EXPECT_EQ(0, strncmp(text, "pushes_inline [inlined into outer_caller+0x",
			     43)) {
		TH_LOG("symbol '%s'", text);
	}
	EXPECT_NE(NULL, strstr(self->r.out,
			       "\"inlined_into\": \"outer_caller\""));
#endif
	snprintf(want, sizeof(want), " (cli_symbolize.c:%d)", inline_line);
	EXPECT_NE(NULL, strstr(text, want));
}

TEST_F(sym, fault_pc_after_the_process_is_gone)
{
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = self->path,
		.flags = ACTRACK_INIT_NO_MODULE,
	};
	char text[512];
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_DUMPABLE, 0);	/* no core file */
		if (actrack_init(&o) || actrack_record_fatal_signals() ||
		    actrack_thread_init("crasher"))
			_exit(10);
		actrack_push_task(1);
		crash_here();
		_exit(11);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGSEGV, WTERMSIG(status));

	/* Its records stay in a file arena: only the files are needed. */
	ASSERT_EQ(0, dump_json(&self->r, self->path));
	ASSERT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "\"signal\": \"SIGSEGV\""));
	EXPECT_NE(NULL, strstr(self->r.out, "\"addr\": 16,"));
	EXPECT_NE(NULL, symbol_text(self->r.out, "crash_here+0x", text,
				    sizeof(text)));
	EXPECT_NE(NULL, strstr(text, " (cli_symbolize.c:"));
	EXPECT_NE(NULL, strstr(self->r.out, "\"function\": \"crash_here\""));
}

/*
 * Rewrite the module record at load bias @base of process @pid in the
 * arena file (as a rebuilt, moved or forged binary would look).
 */
static int edit_own_module(const char *path, pid_t pid, uint64_t base,
			   void (*fn)(struct actrack_module *, void *),
			   void *arg)
{
	struct actrack_arena a = { 0 };
	struct actrack_arena_iter it;
	size_t len;
	char *img = read_file(path, &len);
	uint32_t ref;
	int found = 0;

	if (!img)
		return -1;
	a.base = img;
	a.size = (uint32_t)len;
	a.writable = true;
	actrack_arena_iter_init(&it, &a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_MODULE,
					      NULL))) {
		struct actrack_module *m = actrack_arena_get(&a, ref,
			ACTRACK_TYPE_MODULE, sizeof(*m));

		if (m && m->owner.pid == (uint32_t)pid && m->base == base) {
			fn(m, arg);
			found++;
		}
	}
	if (found == 1 && write_file(path, img, len))
		found = -1;
	free(img);
	return found == 1 ? 0 : -1;
}

static void flip_build_id(struct actrack_module *m, void *arg)
{
	m->build_id[0] ^= 0xff;
}

static void set_path(struct actrack_module *m, void *arg)
{
	snprintf(m->path, sizeof(m->path), "%s", (const char *)arg);
}

/* Origin of the activity with @object of process @pid, and the load bias
 * of the test binary in it (0 if it has no module record). */
static int find_origin(const char *path, pid_t pid, uint64_t object,
		       uint64_t *origin, uint64_t *base)
{
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s;
	char exe[ACTRACK_PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int ret = -1;

	if (n <= 0 || actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s))
		return -1;
	exe[n] = 0;
	*base = 0;
	p = snap_find(s, (uint32_t)pid);
	for (uint32_t i = 0; p && i < p->nr_modules; i++)
		if (!strcmp(p->modules[i].path, exe))
			*base = p->modules[i].base;
	for (uint32_t i = 0; p && i < p->nr_threads; i++)
		for (uint32_t k = 0; k < p->threads[i].nr_activities; k++)
			if (p->threads[i].activities[k].a.object == object) {
				*origin = p->threads[i].activities[k].a.origin;
				ret = 0;
			}
	actrack_snapshot_free(s);
	return ret;
}

TEST_F(sym, build_id_mismatch_gives_module_offset)
{
	uint64_t origin, base;
	char want[512], text[512];

	ASSERT_EQ(0, writer_start(&self->w, self->path, 8, 0, writer, NULL));
	ASSERT_EQ(0, find_origin(self->path, self->w.pid, 4242, &origin,
				 &base));
	ASSERT_NE(0, base);
	/* The same path, another build: its symbols would be wrong. */
	ASSERT_EQ(0, edit_own_module(self->path, self->w.pid, base,
				     flip_build_id, NULL));
	ASSERT_EQ(0, dump_json(&self->r, self->path));
	ASSERT_EQ(0, self->r.status);
	snprintf(want, sizeof(want), "cli_symbolize+0x%llx (build-id mismatch)",
		 (unsigned long long)(origin - base));
	EXPECT_NE(NULL, symbol_text(self->r.out, "mismatch", text,
				    sizeof(text)));
	EXPECT_STREQ(want, text);
	EXPECT_EQ(NULL, strstr(self->r.out, "symbolize_me_please"));
	EXPECT_NE(NULL, strstr(self->r.out, "\"note\": \"build-id mismatch\""));
}

TEST_F(sym, untrusted_paths_give_module_offset)
{
	static const struct {
		const char *path, *note;
	} cases[] = {
		{ "/nonexistent/dir/cli_symbolize", "file not found" },
		{ "relative/cli_symbolize", "not an absolute path" },
		{ NULL, "not a regular file" },		/* a FIFO */
	};
	char fifo[300], want[512], text[512];
	uint64_t origin, base;

	ASSERT_EQ(0, writer_start(&self->w, self->path, 8, 0, writer, NULL));
	ASSERT_EQ(0, find_origin(self->path, self->w.pid, 4242, &origin,
				 &base));
	ASSERT_NE(0, base);
	/* Opening a FIFO for reading would block forever without care. */
	snprintf(fifo, sizeof(fifo), "%s/cli_symbolize", self->extra);
	ASSERT_EQ(0, mkdir(self->extra, 0700));
	ASSERT_EQ(0, mkfifo(fifo, 0600));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = cases[i].path ? cases[i].path : fifo;

		ASSERT_EQ(0, edit_own_module(self->path, self->w.pid, base,
					     set_path, (void *)path));
		ASSERT_EQ(0, dump_json(&self->r, self->path));
		ASSERT_EQ(0, self->r.status);
		snprintf(want, sizeof(want), "cli_symbolize+0x%llx (%s)",
			 (unsigned long long)(origin - base), cases[i].note);
		EXPECT_NE(NULL, symbol_text(self->r.out, cases[i].note, text,
					    sizeof(text)));
		EXPECT_STREQ(want, text);
	}
	unlink(fifo);
	rmdir(self->extra);
}

TEST_F(sym, no_module_records_give_the_raw_address)
{
	uint64_t origin, base;
	char want[64], text[512];

	ASSERT_EQ(0, writer_start(&self->w, self->path, 8,
				  ACTRACK_INIT_NO_MODULES, writer, NULL));
	ASSERT_EQ(0, find_origin(self->path, self->w.pid, 4242, &origin,
				 &base));
	EXPECT_EQ(0, base);
	ASSERT_EQ(0, dump_json(&self->r, self->path));
	ASSERT_EQ(0, self->r.status);
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)origin);
	EXPECT_NE(NULL, symbol_text(self->r.out, want, text, sizeof(text)));
	EXPECT_STREQ(want, text);
	EXPECT_NE(NULL, strstr(self->r.out, "\"module\": null"));
	EXPECT_EQ(NULL, strstr(self->r.out, "symbolize_me_please"));
}

/* ---- the symbolizer's cache ------------------------------------------ */

/* One activity of a dump: its object and its "symbol" object, verbatim. */
struct act_sym {
	uint64_t object;
	char *symbol;
};

/* Every activity of a `dump --json` document @out, in document order. */
static struct act_sym *parse_activities(const char *out, uint32_t *nr)
{
	struct act_sym *v = NULL;
	const char *p = out;
	uint32_t n = 0, cap = 0;

	while ((p = strstr(p, "\"object\": "))) {
		const char *sym, *end;
		uint64_t object;

		p += 10;
		object = strtoull(p + (*p == '"'), NULL, 10);
		sym = strstr(p, "\"symbol\": ");
		if (!sym)
			break;
		sym += 10;
		/* A symbol object has no nested object; null if no origin. */
		end = *sym == '{' ? strchr(sym, '}') : sym + 3;
		if (!end)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				return NULL;
		}
		v[n].object = object;
		v[n].symbol = strndup(sym, (size_t)(end - sym + 1));
		n++;
		p = end;
	}
	*nr = n;
	return v;
}

static void free_activities(struct act_sym *v, uint32_t nr)
{
	for (uint32_t i = 0; v && i < nr; i++)
		free(v[i].symbol);
	free(v);
}

static const char *symbol_of(const struct act_sym *v, uint32_t nr,
			     uint64_t object)
{
	for (uint32_t i = 0; i < nr; i++)
		if (v[i].object == object)
			return v[i].symbol;
	return NULL;
}

static int str_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The writer's module record of this binary and its two origins. */
static int own_module(const char *path, pid_t pid,
		      struct actrack_snap_module *rec, uint64_t *o1,
		      uint64_t *o2)
{
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s;
	uint64_t base;
	int ret = -1;

	if (find_origin(path, pid, 4242, o1, &base) ||
	    find_origin(path, pid, 4343, o2, &base) || !base ||
	    actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s))
		return -1;
	p = snap_find(s, (uint32_t)pid);
	for (uint32_t i = 0; p && i < p->nr_modules; i++)
		if (p->modules[i].base == base) {
			*rec = p->modules[i];
			ret = 0;
		}
	actrack_snapshot_free(s);
	return ret;
}

#define BIAS_THREADS	4
#define FLOOD		(2 * SYM_CACHE_MAX)	/* past the table's slots too */
#define FLOOD_OBJECT	100000
#define REPEAT_OBJECT	200000

/* Threads of @pid whose activities have @origins and @objects. */
static int build_acts(struct build *b, uint32_t pid, uint32_t *tid,
		      const uint64_t *origins, const uint64_t *objects,
		      uint32_t n)
{
	struct actrack_activity acts[ACTRACK_THREAD_MAX_SLOTS];

	for (uint32_t i = 0; i < n; i += ACTRACK_THREAD_MAX_SLOTS) {
		uint32_t k, depth = n - i < ACTRACK_THREAD_MAX_SLOTS ?
				    n - i : ACTRACK_THREAD_MAX_SLOTS;

		memset(acts, 0, sizeof(acts));
		for (k = 0; k < depth; k++)
			acts[k] = (struct actrack_activity){
				.time_ns = BUILD_CREATE_MONO,
				.type = ACTRACK_ACT_TASK_RUN,
				.origin = origins[i + k],
				.object = objects[i + k],
			};
		if (!build_thread(b, pid, 5000 + pid, (*tid)++, "t",
				  ACTRACK_THREAD_MAX_SLOTS, depth, acts))
			return -1;
	}
	return 0;
}

static int build_proc(struct build *b, uint32_t pid,
		      const struct actrack_snap_module *rec, uint64_t base)
{
	struct actrack_module *m;
	uint32_t ref;

	if (!build_process(b, pid, 5000 + pid, ACTRACK_PHASE_MAIN_LOOP_STARTED,
			   1, BUILD_CREATE_MONO, "p\0", 2))
		return -1;
	ref = build_module(b, pid, 5000 + pid, base, rec->size, rec->build_id,
			   rec->build_id_size, rec->path);
	m = ref ? actrack_arena_get(&b->a, ref, ACTRACK_TYPE_MODULE,
				    sizeof(*m)) : NULL;
	if (!m)
		return -1;
	m->vaddr = rec->vaddr;
	return 0;
}

/*
 * Process 2001 maps this binary at the writer's load bias b, process 2002
 * at b + (o1 - o2): there the address o1 is the file address of o2.  Each
 * has BIAS_THREADS threads at the same two pushes (objects 1, 2 and 11,
 * 12), so the second thread on hits the cache.  With @flood, process 1000
 * (symbolized first: by pid) comes before them with FLOOD distinct
 * addresses (objects FLOOD_OBJECT + i), then its first and last again
 * (REPEAT_OBJECT, REPEAT_OBJECT + 1).
 */
static int build_cache_arena(const char *path,
			     const struct actrack_snap_module *rec,
			     uint64_t o1, uint64_t o2, bool flood)
{
	uint64_t b2 = rec->base + (o1 - o2);
	uint64_t orig[FLOOD + 2], obj[FLOOD + 2];
	struct build b;
	uint32_t tid = 1;
	int ret = -1;

	if (build_init(&b, 2U << 20))
		return -1;
	if (flood) {
		if (build_proc(&b, 1000, rec, rec->base))
			goto out;
		for (uint32_t i = 0; i < FLOOD; i++) {
			/* Every byte from the push on: in the text. */
			orig[i] = o1 + 1 + i;
			obj[i] = FLOOD_OBJECT + i;
		}
		orig[FLOOD] = orig[0];
		obj[FLOOD] = REPEAT_OBJECT;
		orig[FLOOD + 1] = orig[FLOOD - 1];
		obj[FLOOD + 1] = REPEAT_OBJECT + 1;
		if (build_acts(&b, 1000, &tid, orig, obj, FLOOD + 2))
			goto out;
	}
	if (build_proc(&b, 2001, rec, rec->base) ||
	    build_proc(&b, 2002, rec, b2))
		goto out;
	for (uint32_t t = 0; t < BIAS_THREADS; t++) {
		const uint64_t o_a[] = { o1, o2 }, obj_a[] = { 1, 2 };
		/* In 2002: the file address of o1, then o1 itself. */
		const uint64_t o_b[] = { b2 + (o1 - rec->base), o1 };
		const uint64_t obj_b[] = { 11, 12 };

		if (build_acts(&b, 2001, &tid, o_a, obj_a, 2) ||
		    build_acts(&b, 2002, &tid, o_b, obj_b, 2))
			goto out;
	}
	ret = build_write(&b, path);
out:
	build_free(&b);
	return ret;
}

/* Each of the bias processes' activities: the writer's @r1 or @r2. */
static void check_biases(struct __test_metadata *_metadata,
			 const struct act_sym *v, uint32_t nr,
			 const char *r1, const char *r2)
{
	uint32_t seen = 0;

	for (uint32_t i = 0; i < nr; i++) {
		const char *want;

		switch (v[i].object) {
		case 1: case 11: want = r1; break;
		case 2: case 12: want = r2; break;
		default: continue;
		}
		seen++;
		EXPECT_STREQ(want, v[i].symbol) {
			TH_LOG("object %llu", (unsigned long long)v[i].object);
		}
	}
	EXPECT_EQ(4 * BIAS_THREADS, seen);
}

/*
 * The cache is keyed by (file, address in the file): the same pc in two
 * processes that map the file at different biases is two answers, and the
 * same file address at two biases one.  And an arena naming more distinct
 * addresses than the cache holds is symbolized all the same.
 */
TEST_F(sym, cache_keeps_biases_apart_and_survives_a_flood)
{
	struct actrack_snap_module rec;
	struct act_sym *ref, *v;
	uint32_t nr_ref, nr;
	char r1[1024], r2[1024];
	uint64_t o1, o2;
	char *texts[FLOOD];
	uint32_t nr_texts = 0;

	ASSERT_EQ(0, writer_start(&self->w, self->path, 8, 0, writer, NULL));
	ASSERT_EQ(0, own_module(self->path, self->w.pid, &rec, &o1, &o2));
	ASSERT_NE(o1, o2);
	/* The two pushes as a fresh symbolizer sees them. */
	ASSERT_EQ(0, dump_json(&self->r, self->path));
	ASSERT_EQ(0, self->r.status);
	ref = parse_activities(self->r.out, &nr_ref);
	ASSERT_NE(NULL, ref);
	ASSERT_NE(NULL, symbol_of(ref, nr_ref, 4242));
	ASSERT_NE(NULL, symbol_of(ref, nr_ref, 4343));
	snprintf(r1, sizeof(r1), "%s", symbol_of(ref, nr_ref, 4242));
	snprintf(r2, sizeof(r2), "%s", symbol_of(ref, nr_ref, 4343));
	free_activities(ref, nr_ref);
	ASSERT_NE(NULL, strstr(r1, "symbolize_me_please+0x"));
	ASSERT_NE(NULL, strstr(r2, "pushes_inline"));

	/* Two biases, answers cached. */
	ASSERT_EQ(0, build_cache_arena(self->extra, &rec, o1, o2, false));
	ASSERT_EQ(0, dump_json(&self->r, self->extra));
	ASSERT_EQ(0, self->r.status);
	v = parse_activities(self->r.out, &nr);
	ASSERT_NE(NULL, v);
	check_biases(_metadata, v, nr, r1, r2);
	free_activities(v, nr);

	/* The same after a flood has filled the cache. */
	ASSERT_EQ(0, build_cache_arena(self->extra, &rec, o1, o2, true));
	ASSERT_EQ(0, dump_json(&self->r, self->extra));
	ASSERT_EQ(0, self->r.status);
	v = parse_activities(self->r.out, &nr);
	ASSERT_NE(NULL, v);
	check_biases(_metadata, v, nr, r1, r2);
	for (uint32_t i = 0; i < nr; i++) {
		if (v[i].object < FLOOD_OBJECT ||
		    v[i].object >= FLOOD_OBJECT + FLOOD)
			continue;
		/* Symbolized in the file, not a raw address. */
		EXPECT_EQ(NULL, strstr(v[i].symbol, "\"module\": null"));
		if (nr_texts < FLOOD)
			texts[nr_texts++] = v[i].symbol;
	}
	EXPECT_EQ(FLOOD, nr_texts);
	/* Distinct addresses, distinct answers (module_offset at least). */
	qsort(texts, nr_texts, sizeof(texts[0]), str_cmp);
	for (uint32_t i = 1; i < nr_texts; i++)
		EXPECT_STRNE(texts[i - 1], texts[i]);
	/* The first (cached) and the last (not) look the same again. */
	ASSERT_NE(NULL, symbol_of(v, nr, REPEAT_OBJECT));
	ASSERT_NE(NULL, symbol_of(v, nr, REPEAT_OBJECT + 1));
	EXPECT_STREQ(symbol_of(v, nr, FLOOD_OBJECT),
		     symbol_of(v, nr, REPEAT_OBJECT));
	EXPECT_STREQ(symbol_of(v, nr, FLOOD_OBJECT + FLOOD - 1),
		     symbol_of(v, nr, REPEAT_OBJECT + 1));
	free_activities(v, nr);
}

TEST_HARNESS_MAIN
