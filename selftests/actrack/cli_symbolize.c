// SPDX-License-Identifier: MIT
/*
 * Symbolization of activity origins and fault pcs by the CLI (elfutils
 * libdwfl), on arenas written by the library from this very binary, which
 * the Makefile compiles with -g: the origin of a push names the function
 * and the line of the push, inlined functions are named as such, a fault
 * pc is symbolized after its process is gone, and the module records are
 * not trusted: another build of the file (build-id mismatch), a missing
 * file, a relative path or a FIFO give module+offset and a note, never
 * wrong symbols or a hang; without module records, the raw address.
 */
#include <sys/prctl.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

#define LOG_ON_FAILURE(r)						\
	do {								\
		if (!_metadata->passed)					\
			TH_LOG("exit %d\nstdout:\n%sstderr:\n%s",	\
			       (r)->status, (r)->out, (r)->err);	\
	} while (0)

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

TEST_HARNESS_MAIN
