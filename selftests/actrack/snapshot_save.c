// SPDX-License-Identifier: MIT
/*
 * actrack_arena_save(): the image is a valid file arena that reads back
 * like the original; written atomically with mode 0600; bad sources and
 * destinations fail with exact errnos and leave nothing behind; an image
 * taken while a thread churns holds a consistent stack.
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <libgen.h>
#include <time.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

static int the_lock;

static void busy_state(void *arg)
{
	uint32_t tok;

	actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
	actrack_set_string(actrack_process_data(), "role", "saver");
	actrack_set_uint(actrack_global_data(), "generation", 3);
	actrack_log("about to block");
	actrack_thread_init("main");
	tok = actrack_push_task(5);
	actrack_set_int(actrack_activity_data(tok), "step", -2);
	actrack_push_lock_acquire(&the_lock);
}

static void expect_same_values(struct __test_metadata *_metadata,
			       const struct actrack_value *a, uint32_t na,
			       const struct actrack_value *b, uint32_t nb)
{
	ASSERT_EQ(na, nb);
	for (uint32_t i = 0; i < na; i++) {
		EXPECT_STREQ(a[i].name, b[i].name);
		EXPECT_EQ(a[i].type, b[i].type);
		EXPECT_EQ(a[i].size, b[i].size);
		EXPECT_EQ(a[i].u, b[i].u);
		if (a[i].bytes)
			EXPECT_EQ(0, memcmp(a[i].bytes, b[i].bytes, a[i].size));
	}
}

/* Everything but the moment of the snapshot. */
static void expect_same(struct __test_metadata *_metadata,
			const struct actrack_snapshot *a,
			const struct actrack_snapshot *b)
{
	struct actrack_arena_header ha = a->header, hb = b->header;

	/* Only an image says when it was saved. */
	ha.saved_mono_ns = hb.saved_mono_ns = 0;
	ha.saved_real_ns = hb.saved_real_ns = 0;
	EXPECT_EQ(0, memcmp(&ha, &hb, sizeof(ha)));
	EXPECT_EQ(a->used_bytes, b->used_bytes);
	EXPECT_EQ(a->free_bytes, b->free_bytes);
	EXPECT_EQ(a->corrupt, b->corrupt);
	ASSERT_EQ(a->nr_processes, b->nr_processes);
	expect_same_values(_metadata, a->global_values, a->nr_global_values,
			   b->global_values, b->nr_global_values);
	for (uint32_t i = 0; i < a->nr_processes; i++) {
		const struct actrack_snap_process *p = &a->processes[i];
		const struct actrack_snap_process *q = &b->processes[i];

		EXPECT_EQ(p->pid, q->pid);
		EXPECT_EQ(p->start_ticks, q->start_ticks);
		EXPECT_EQ(p->phase, q->phase);
		EXPECT_STREQ(p->cmdline, q->cmdline);
		expect_same_values(_metadata, p->values, p->nr_values,
				   q->values, q->nr_values);
		ASSERT_EQ(p->nr_logs, q->nr_logs);
		EXPECT_EQ(0, memcmp(p->logs, q->logs,
				    p->nr_logs * sizeof(*p->logs)));
		ASSERT_EQ(p->nr_modules, q->nr_modules);
		EXPECT_EQ(0, memcmp(p->modules, q->modules,
				    p->nr_modules * sizeof(*p->modules)));
		ASSERT_EQ(p->nr_threads, q->nr_threads);
		for (uint32_t j = 0; j < p->nr_threads; j++) {
			const struct actrack_snap_thread *t = &p->threads[j];
			const struct actrack_snap_thread *u = &q->threads[j];

			EXPECT_EQ(t->tid, u->tid);
			EXPECT_STREQ(t->name, u->name);
			EXPECT_EQ(t->depth, u->depth);
			ASSERT_EQ(t->nr_activities, u->nr_activities);
			for (uint32_t k = 0; k < t->nr_activities; k++) {
				EXPECT_EQ(0, memcmp(&t->activities[k].a,
						    &u->activities[k].a,
						    sizeof(struct actrack_activity)));
				expect_same_values(_metadata,
						   t->activities[k].values,
						   t->activities[k].nr_values,
						   u->activities[k].values,
						   u->activities[k].nr_values);
			}
		}
	}
}

/* Files in @path's directory whose names start with its base name. */
static int count_siblings(const char *path)
{
	char dir[256], base[256];
	struct dirent *d;
	int n = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	dp = opendir(dirname(dir));
	if (!dp)
		return -1;
	while ((d = readdir(dp)))
		if (!strncmp(d->d_name, basename(base), strlen(basename(base))))
			n++;
	closedir(dp);
	return n;
}

TEST(image_reads_back_like_the_arena)
{
	struct actrack_snapshot *live, *saved;
	struct actrack_arena_header *hb;
	uint64_t before, after;
	struct writer w;
	char path[256], out[256];
	struct stat st;
	size_t la, lb;
	char *a, *b;

	test_path(path, sizeof(path), "save-src");
	test_path(out, sizeof(out), "save-out");
	ASSERT_EQ(0, writer_start(&w, path, 8, 0, busy_state, NULL));
	before = actrack_test_mono_ns();
	ASSERT_EQ(0, actrack_arena_save(path, ACTRACK_SNAP_ARENA_FILE, out));
	after = actrack_test_mono_ns();

	ASSERT_EQ(0, stat(out, &st));
	EXPECT_EQ(0600, st.st_mode & 0777);
	EXPECT_EQ(ACTRACK_FILE_DEFAULT_SIZE, st.st_size);
	EXPECT_EQ(1, count_siblings(out));	/* no temporary left over */
	/* Nothing changed while we saved: the image is byte for byte it. */
	a = read_file(path, &la);
	b = read_file(out, &lb);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(la, lb);
	/* ...but for the moment of the save, in the header's saved_*_ns,
	 * which the live arena leaves zero. */
	hb = (struct actrack_arena_header *)b;
	EXPECT_EQ(0u, ((struct actrack_arena_header *)a)->saved_mono_ns);
	EXPECT_LE(before, hb->saved_mono_ns);
	EXPECT_GE(after, hb->saved_mono_ns);
	EXPECT_NE(0u, hb->saved_real_ns);
	hb->saved_mono_ns = hb->saved_real_ns = 0;
	EXPECT_EQ(0, memcmp(a, b, la));
	free(a);
	free(b);

	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE,
					   &live));
	ASSERT_EQ(0, actrack_snapshot_take(out, ACTRACK_SNAP_ARENA_FILE,
					   &saved));
	ASSERT_EQ(1u, saved->nr_processes);
	EXPECT_EQ((uint32_t)w.pid, saved->processes[0].pid);
	ASSERT_EQ(1u, saved->processes[0].nr_threads);
	EXPECT_EQ(2u, saved->processes[0].threads[0].depth);
	expect_same(_metadata, live, saved);
	actrack_snapshot_free(live);
	actrack_snapshot_free(saved);

	/* The image survives the process and the original arena. */
	writer_stop(&w);
	unlink(path);
	ASSERT_EQ(0, actrack_snapshot_take(out, ACTRACK_SNAP_ARENA_FILE,
					   &saved));
	EXPECT_EQ(1u, saved->nr_processes);
	actrack_snapshot_free(saved);
	unlink(out);
}

TEST(replaces_an_existing_file_atomically)
{
	struct writer w;
	char path[256], out[256];
	struct stat before, after;

	test_path(path, sizeof(path), "save-src2");
	test_path(out, sizeof(out), "save-out2");
	ASSERT_EQ(0, write_file(out, "old contents", 12));
	ASSERT_EQ(0, chmod(out, 0644));
	ASSERT_EQ(0, stat(out, &before));
	ASSERT_EQ(0, writer_start(&w, path, 8, ACTRACK_INIT_NO_MODULES, NULL,
				  NULL));
	ASSERT_EQ(0, actrack_arena_save(path, ACTRACK_SNAP_ARENA_FILE, out));
	ASSERT_EQ(0, stat(out, &after));
	/* A new inode renamed over the old one, never a rewrite in place. */
	EXPECT_NE(before.st_ino, after.st_ino);
	EXPECT_EQ(0600, after.st_mode & 0777);
	EXPECT_EQ(ACTRACK_FILE_DEFAULT_SIZE, after.st_size);
	EXPECT_EQ(1, count_siblings(out));
	writer_stop(&w);
	unlink(path);
	unlink(out);
}

TEST(bad_source_or_destination)
{
	char src[256], out[256];
	char junk[ACTRACK_ARENA_MIN_SIZE];

	test_path(src, sizeof(src), "save-bad");
	test_path(out, sizeof(out), "save-bad-out");
	EXPECT_EQ(-ENOENT, actrack_arena_save(src, ACTRACK_SNAP_ARENA_FILE,
					      out));
	memset(junk, 'j', sizeof(junk));
	ASSERT_EQ(0, write_file(src, junk, sizeof(junk)));
	EXPECT_EQ(-EBADMSG, actrack_arena_save(src, ACTRACK_SNAP_ARENA_FILE,
					       out));
	EXPECT_EQ(-1, access(out, F_OK));
	EXPECT_EQ(0, count_siblings(out));
	EXPECT_EQ(-EINVAL, actrack_arena_save(src, ACTRACK_SNAP_ARENA_FILE,
					      NULL));
	EXPECT_EQ(-EINVAL, actrack_arena_save(src, ACTRACK_SNAP_ARENA_FILE,
					      ""));
	EXPECT_EQ(-EINVAL, actrack_arena_save(src, 0, out));
	EXPECT_EQ(-EINVAL, actrack_arena_save(NULL, ACTRACK_SNAP_ARENA_FILE,
					      out));
	unlink(src);
}

TEST(missing_destination_directory)
{
	struct writer w;
	char path[256];

	test_path(path, sizeof(path), "save-src3");
	ASSERT_EQ(0, writer_start(&w, path, 8, ACTRACK_INIT_NO_MODULES, NULL,
				  NULL));
	EXPECT_EQ(-ENOENT, actrack_arena_save(path, ACTRACK_SNAP_ARENA_FILE,
					      "/nonexistent-dir/x.arena"));
	writer_stop(&w);
	unlink(path);
}

#define LEVELS 3

static void pin_to(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static volatile int tracker_ready;

static void *spin(void *arg)
{
	pin_to(1);
	actrack_thread_init("spinner");
	__atomic_store_n(&tracker_ready, 1, __ATOMIC_RELEASE);
	for (uint64_t i = 1;; i++) {
		uint32_t tok[LEVELS];

		for (uint32_t k = 0; k < LEVELS; k++)
			tok[k] = actrack_push_generic(k + 1, i, k);
		for (uint32_t k = LEVELS; k-- > 0;)
			actrack_pop(tok[k]);
	}
	return NULL;
}

static void start_spinner(void *arg)
{
	pthread_t th;

	if (pthread_create(&th, NULL, spin, NULL))
		_exit(20);
	while (!__atomic_load_n(&tracker_ready, __ATOMIC_ACQUIRE))
		usleep(1000);
}

/*
 * A memcpy of an arena in use can catch a stack half old, half new, and a
 * static image would hide that (its version never moves again).  Every
 * stack in an image must be one moment of the thread.  300 images; on a
 * debug kernel divided by ACTRACK_SLOW_KERNEL (test_harness.h), at least 20.
 */
TEST(images_of_a_busy_thread_hold_consistent_stacks)
{
	struct writer w;
	char path[256], out[256];
	int consistent = 0, torn = 0, rounds = actrack_test_scaled(300, 20);

	pin_to(0);
	test_path(path, sizeof(path), "save-busy");
	test_path(out, sizeof(out), "save-busy-out");
	ASSERT_EQ(0, writer_start(&w, path, 8, ACTRACK_INIT_NO_MODULES,
				  start_spinner, NULL));
	for (int round = 0; round < rounds; round++) {
		const struct actrack_snap_thread *t;
		struct actrack_snapshot *s;

		ASSERT_EQ(0, actrack_arena_save(path, ACTRACK_SNAP_ARENA_FILE,
						out));
		ASSERT_EQ(0, actrack_snapshot_take(out,
						   ACTRACK_SNAP_ARENA_FILE,
						   &s));
		ASSERT_EQ(1u, s->nr_processes);
		ASSERT_EQ(1u, s->processes[0].nr_threads);
		t = &s->processes[0].threads[0];
		/* The saver could not copy it: the image says so... */
		if (t->torn) {
			torn++;
			actrack_snapshot_free(s);
			continue;
		}
		ASSERT_GE(LEVELS, t->depth);
		ASSERT_EQ(t->depth, t->nr_activities);
		/* ...else it had better be consistent. */
		for (uint32_t k = 0; k < t->nr_activities; k++) {
			ASSERT_EQ(ACTRACK_ACT_GENERIC_ACTION(k + 1),
				  t->activities[k].a.type);
			ASSERT_EQ(k, t->activities[k].a.info);
			ASSERT_EQ(t->activities[0].a.object,
				  t->activities[k].a.object);
		}
		consistent++;
		actrack_snapshot_free(s);
	}
	TH_LOG("%d images: %d consistent, %d torn", rounds, consistent, torn);
	EXPECT_EQ(rounds, consistent + torn);
	EXPECT_LT(0, consistent);
	writer_stop(&w);
	unlink(path);
	unlink(out);
}

TEST_HARNESS_MAIN
