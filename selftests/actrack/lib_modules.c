// SPDX-License-Identifier: MIT
/*
 * Re-recording module records (actrack_record_modules(), after dlopen()):
 * the records of objects still loaded are kept as they are (same block,
 * same data id), a newly loaded object gets one, an unloaded object's
 * goes, and a forked child's recording never touches its parent's.  The
 * process finds its own records from what it wrote, not by walking the
 * arena (lib/modules.c), so this is also what a start costs: attach
 * records each loaded object once and frees nothing.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "actrack.h"
#include "arena.h"
#include "test_harness.h"

#define MAX_MODS	256

struct rec {
	__u32 ref, id;
	char path[ACTRACK_PATH_MAX];
};

struct recs {
	int n;
	struct rec r[MAX_MODS];
};

static char arena_path[256];

static void attach_fresh(struct __test_metadata *_metadata, const char *tag)
{
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = arena_path,
		.flags = ACTRACK_INIT_NO_MODULE,
	};

	snprintf(arena_path, sizeof(arena_path), "%s/actrack-test-%s-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag,
		 (int)getpid());
	unlink(arena_path);
	ASSERT_EQ(0, actrack_init(&o));
}

/* The MODULE records of @pid in a copy of the arena file, in list order. */
static int own_modules(pid_t pid, struct recs *out)
{
	struct actrack_arena a;
	struct actrack_arena_iter it;
	FILE *f = fopen(arena_path, "r");
	void *buf;
	long len;
	__u32 ref;

	out->n = 0;
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len);
	if (!buf || fread(buf, 1, len, f) != (size_t)len) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	a = (struct actrack_arena){ .base = buf, .size = (__u32)len };
	actrack_arena_iter_init(&it, &a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_MODULE,
					      NULL)) && out->n < MAX_MODS) {
		struct actrack_module *m = actrack_arena_get(&a, ref,
			ACTRACK_TYPE_MODULE, sizeof(*m));

		if (!m || !m->owner.data_id || m->owner.pid != (__u32)pid)
			continue;
		out->r[out->n].ref = ref;
		out->r[out->n].id = m->owner.data_id;
		memcpy(out->r[out->n].path, m->path, sizeof(m->path));
		out->r[out->n].path[sizeof(m->path) - 1] = 0;
		out->n++;
	}
	free(buf);
	return out->n;
}

/* Is record @r (same block, same data id) in @s? */
static bool has(const struct recs *s, const struct rec *r)
{
	for (int i = 0; i < s->n; i++)
		if (s->r[i].ref == r->ref && s->r[i].id == r->id)
			return true;
	return false;
}

/* A library of the C library's that a test binary does not load. */
static const char *unloaded_lib(void)
{
	static const char *const names[] = { "libanl.so.1", "libutil.so.1" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);

		if (h) {
			dlclose(h);
			continue;
		}
		return names[i];
	}
	return NULL;
}

TEST(rerecord_keeps_the_records_of_loaded_objects)
{
	static struct recs before, after;
	int n;

	attach_fresh(_metadata, "rerecord");
	ASSERT_LT(1, own_modules(getpid(), &before));
	n = actrack_record_modules();
	EXPECT_EQ(before.n, n);
	ASSERT_EQ(before.n, own_modules(getpid(), &after));
	for (int i = 0; i < before.n; i++) {
		if (!has(&after, &before.r[i]))
			TH_LOG("%s: record %u (data id %u) replaced",
			       before.r[i].path, before.r[i].ref,
			       before.r[i].id);
		EXPECT_TRUE(has(&after, &before.r[i]));
	}
	unlink(arena_path);
}

TEST(rerecord_follows_dlopen_and_dlclose)
{
	static struct recs before, opened, closed;
	const char *lib = unloaded_lib();
	const struct rec *added = NULL;
	void *h;

	if (!lib)
		SKIP(return, "libanl.so.1 and libutil.so.1 are both loaded");
	attach_fresh(_metadata, "dlopen");
	ASSERT_LT(1, own_modules(getpid(), &before));
	h = dlopen(lib, RTLD_NOW);
	if (!h)
		SKIP(return, "dlopen(%s): %s", lib, dlerror());
	EXPECT_EQ(before.n + 1, actrack_record_modules());
	ASSERT_EQ(before.n + 1, own_modules(getpid(), &opened));
	for (int i = 0; i < before.n; i++)
		EXPECT_TRUE(has(&opened, &before.r[i]));
	for (int i = 0; i < opened.n; i++)
		if (!has(&before, &opened.r[i]))
			added = &opened.r[i];
	ASSERT_NE(NULL, added);
	EXPECT_NE(NULL, strstr(added->path, lib));

	dlclose(h);
	h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	if (h) {
		dlclose(h);
		SKIP(return, "%s stayed loaded after dlclose()", lib);
	}
	EXPECT_EQ(before.n, actrack_record_modules());
	ASSERT_EQ(before.n, own_modules(getpid(), &closed));
	for (int i = 0; i < before.n; i++)
		EXPECT_TRUE(has(&closed, &before.r[i]));
	EXPECT_FALSE(has(&closed, added));
	unlink(arena_path);
}

TEST(child_rerecord_leaves_the_parent_records)
{
	static struct recs parent, child, after;
	int status;
	pid_t pid;

	attach_fresh(_metadata, "forkrec");
	ASSERT_LT(1, own_modules(getpid(), &parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* The child attaches as itself and records its own. */
		if (actrack_record_modules() != parent.n)
			_exit(1);
		if (actrack_record_modules() != parent.n)
			_exit(2);
		_exit(own_modules(getpid(), &child) == parent.n ? 0 : 3);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	ASSERT_EQ(parent.n, own_modules(getpid(), &after));
	for (int i = 0; i < parent.n; i++)
		EXPECT_TRUE(has(&after, &parent.r[i]));
	/* And the parent's own re-record still finds them. */
	EXPECT_EQ(parent.n, actrack_record_modules());
	ASSERT_EQ(parent.n, own_modules(getpid(), &after));
	for (int i = 0; i < parent.n; i++)
		EXPECT_TRUE(has(&after, &parent.r[i]));
	unlink(arena_path);
}

static void *rerecord_loop(void *arg)
{
	int *bad = arg;

	for (int i = 0; i < 200; i++)
		if (actrack_record_modules() < 0)
			(*bad)++;
	return NULL;
}

/* Recordings racing each other leave exactly one record per object. */
TEST(racing_rerecords_leave_one_record_per_object)
{
	static struct recs before, after;
	int bad[4] = { 0 };
	pthread_t th[4];

	attach_fresh(_metadata, "race");
	ASSERT_LT(1, own_modules(getpid(), &before));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, rerecord_loop,
					    &bad[i]));
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		EXPECT_EQ(0, bad[i]);
	}
	ASSERT_EQ(before.n, own_modules(getpid(), &after));
	for (int i = 0; i < before.n; i++)
		for (int j = 0; j < i; j++)
			EXPECT_STRNE(after.r[i].path, after.r[j].path);
	/* Whatever list won, the next re-record finds all of its records. */
	EXPECT_EQ(before.n, actrack_record_modules());
	unlink(arena_path);
}

TEST_HARNESS_MAIN
