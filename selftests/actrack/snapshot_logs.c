// SPDX-License-Identifier: MIT
/*
 * Snapshots of the per-process log ring: messages in order, oldest first;
 * a recycled ring keeps exactly its newest `capacity` messages; concurrent
 * writers give consecutive sequence numbers; long messages are truncated.
 */
#include <pthread.h>
#include <sys/mman.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

static int nr_messages;

static void log_n(void *arg)
{
	for (int i = 0; i < nr_messages; i++)
		if (actrack_log("message %d", i))
			_exit(20);
}

/* The ring's capacity as the arena says, read with the arena core. */
static uint32_t log_capacity(const char *path)
{
	struct actrack_arena_iter it;
	struct actrack_arena a;
	struct actrack_log *l;
	struct stat st;
	uint32_t ref, cap = 0;
	void *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return 0;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	a = (struct actrack_arena){ .base = p, .size = (uint32_t)st.st_size };
	actrack_arena_iter_init(&it, &a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_LOG, NULL))) {
		l = actrack_arena_get(&a, ref, ACTRACK_TYPE_LOG, sizeof(*l));
		if (l)
			cap = l->capacity;
	}
	munmap(p, (size_t)st.st_size);
	return cap;
}

static void check_log(struct __test_metadata *_metadata, int n,
		      uint32_t *cap_out)
{
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s;
	struct writer w;
	char path[256], text[64];
	uint32_t cap, first;

	nr_messages = n;
	test_path(path, sizeof(path), "log");
	ASSERT_EQ(0, writer_start(&w, path, 8, ACTRACK_INIT_NO_MODULES,
				  log_n, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	cap = log_capacity(path);
	ASSERT_LT(0u, cap);
	p = snap_find(s, (uint32_t)w.pid);
	ASSERT_NE(NULL, p);
	ASSERT_EQ((uint32_t)n < cap ? (uint32_t)n : cap, p->nr_logs);
	first = (uint32_t)n - p->nr_logs;
	for (uint32_t i = 0; i < p->nr_logs; i++) {
		const struct actrack_snap_log *l = &p->logs[i];

		snprintf(text, sizeof(text), "message %u", first + i);
		EXPECT_STREQ(text, l->text);
		EXPECT_EQ(first + i, l->seq);
		EXPECT_EQ((uint32_t)w.pid, l->tid);
		EXPECT_GE(s->taken_mono_ns, l->time_ns);
		if (i)
			EXPECT_LE(p->logs[i - 1].time_ns, l->time_ns);
	}
	EXPECT_FALSE(s->corrupt);
	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
	if (cap_out)
		*cap_out = cap;
}

TEST(few_messages_in_order)
{
	check_log(_metadata, 10, NULL);
}

TEST(recycled_ring_keeps_the_newest_capacity_messages)
{
	uint32_t cap;

	check_log(_metadata, 1000, &cap);
	/* The ring really was recycled many times over. */
	EXPECT_GT(1000u, cap);
}

TEST(exactly_capacity_and_one_more)
{
	uint32_t cap;

	check_log(_metadata, 1, &cap);
	check_log(_metadata, (int)cap, NULL);
	check_log(_metadata, (int)cap + 1, NULL);
}

#define PER_THREAD 300

/* Messages dropped because the ring lapped a writer still in its entry. */
static int dropped;

static void *logger(void *arg)
{
	for (int i = 0; i < PER_THREAD; i++)
		if (actrack_log("thread %u message %d",
				(unsigned int)(uintptr_t)arg, i) == -EBUSY)
			__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void two_loggers(void *arg)
{
	pthread_t a, b;

	pthread_create(&a, NULL, logger, (void *)1);
	pthread_create(&b, NULL, logger, (void *)2);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	actrack_set_int(actrack_process_data(), "dropped", dropped);
}

TEST(concurrent_writers_consecutive_sequence)
{
	const struct actrack_snap_process *p;
	const struct actrack_value *v;
	struct actrack_snapshot *s;
	struct writer w;
	char path[256];
	int last[3] = { -1, -1, -1 };
	int64_t drops;

	test_path(path, sizeof(path), "log2");
	ASSERT_EQ(0, writer_start(&w, path, 8, ACTRACK_INIT_NO_MODULES,
				  two_loggers, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	p = snap_find(s, (uint32_t)w.pid);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(log_capacity(path), p->nr_logs);
	v = value_find(p->values, p->nr_values, "dropped");
	ASSERT_NE(NULL, v);
	drops = v->s;
	/*
	 * A writer preempted inside its entry while the other one laps the
	 * ring makes the other drop its message there (-EBUSY), never mix
	 * the two: then the entry keeps its older complete message.  With no
	 * drop, the ring holds exactly the newest messages.
	 */
	TH_LOG("%lld of %d messages dropped", (long long)drops, 2 * PER_THREAD);
	for (uint32_t i = 0; i < p->nr_logs; i++) {
		unsigned int th;
		int msg;

		if (!drops) {
			EXPECT_EQ(2u * PER_THREAD - p->nr_logs + i,
				  p->logs[i].seq);
		} else if (i) {
			EXPECT_LT(p->logs[i - 1].seq, p->logs[i].seq);
		}
		EXPECT_GT(2u * PER_THREAD, p->logs[i].seq);
		ASSERT_EQ(2, sscanf(p->logs[i].text, "thread %u message %d",
				    &th, &msg));
		ASSERT_TRUE(th == 1 || th == 2);
		/* Each thread's messages in its own order. */
		EXPECT_LT(last[th], msg);
		last[th] = msg;
		EXPECT_NE((uint32_t)w.pid, p->logs[i].tid);
	}
	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
}

static void log_long(void *arg)
{
	char big[300];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	actrack_log("%s", big);
	actrack_log("tab\there, newline\nthere");
}

TEST(long_messages_truncated_and_bytes_kept)
{
	const struct actrack_snap_process *p;
	struct actrack_snapshot *s;
	struct writer w;
	char path[256];

	test_path(path, sizeof(path), "log3");
	ASSERT_EQ(0, writer_start(&w, path, 8, ACTRACK_INIT_NO_MODULES,
				  log_long, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	p = snap_find(s, (uint32_t)w.pid);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(2u, p->nr_logs);
	EXPECT_EQ(ACTRACK_LOG_TEXT_MAX - 1, strlen(p->logs[0].text));
	EXPECT_EQ(strspn(p->logs[0].text, "x"), strlen(p->logs[0].text));
	EXPECT_STREQ("tab\there, newline\nthere", p->logs[1].text);
	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
}

TEST_HARNESS_MAIN
