// SPDX-License-Identifier: MIT
/*
 * The log ring lapped while a writer is in the middle of a message: its
 * other threads log a whole ring's worth meanwhile, so the message that
 * lands on the same entry would be written at the same time as the
 * stalled one.  Found by ThreadSanitizer (make check-tsan, snapshot_logs:
 * two threads storing into one entry at once): the last writer to finish
 * marked the entry complete over the other's half-written text, and a
 * snapshot returned the mix as a message.  Every message a snapshot
 * returns must be one that some thread logged, whole.
 *
 * The stalled writer is made exactly: the test does what actrack_log()
 * does up to the middle of a message (take a number, mark the entry odd,
 * write half the text), lets the library log a ring's worth, then
 * finishes the message as actrack_log() would.
 */
#include <stdio.h>
#include <string.h>
#include "snapshot_helpers.h"
#include "test_harness.h"
#include "internal.h"

static const char stalled_text[] = "stalled writer's message, whole";

static bool whole_message(const char *text)
{
	int k;
	char tail;

	if (!strcmp(text, stalled_text))
		return true;
	return sscanf(text, "library message %d%c", &k, &tail) == 1;
}

TEST(lapped_while_a_writer_is_mid_message)
{
	struct actrack_snapshot *s;
	const struct actrack_snap_process *p;
	struct actrack_process *rec;
	struct actrack_log_entry *e;
	struct actrack_log *log;
	uint32_t n, cap, half = sizeof(stalled_text) / 2;
	int busy = 0, ret;
	char path[256];

	test_path(path, sizeof(path), "loglap");
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path,
		.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
	};
	ASSERT_EQ(0, actrack_init(&o));
	ASSERT_EQ(0, actrack_log("library message %d", 0));
	rec = __actrack_process_record();
	ASSERT_NE(NULL, rec);
	log = actrack_arena_get(__actrack_arena(), rec->log, ACTRACK_TYPE_LOG,
				sizeof(*log));
	ASSERT_NE(NULL, log);
	cap = log->capacity;
	ASSERT_LT(1, cap);

	/* A writer takes message n and stops halfway through its text. */
	n = __atomic_fetch_add(&log->head, 1, __ATOMIC_ACQ_REL);
	e = &log->entries[n % cap];
	__atomic_store_n(&e->seq, 2 * n + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->tid = 4242;
	e->len = sizeof(stalled_text) - 1;
	memset(e->text, 0, sizeof(e->text));
	memcpy(e->text, stalled_text, half);

	/* The other threads log a whole ring's worth meanwhile. */
	for (uint32_t i = 1; i <= cap; i++) {
		ret = actrack_log("library message %u", i);
		if (ret == -EBUSY)
			busy++;
		else
			ASSERT_EQ(0, ret);
	}

	/* The stalled writer finishes its message. */
	memcpy(e->text + half, stalled_text + half,
	       sizeof(stalled_text) - half);
	__atomic_store_n(&e->seq, 2 * n + 2, __ATOMIC_RELEASE);

	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	p = snap_find(s, (uint32_t)getpid());
	ASSERT_NE(NULL, p);
	ASSERT_LT(0, p->nr_logs);
	for (uint32_t i = 0; i < p->nr_logs; i++) {
		if (!whole_message(p->logs[i].text))
			TH_LOG("log %u (seq %llu) is a mix: \"%s\"", i,
			       (unsigned long long)p->logs[i].seq,
			       p->logs[i].text);
		EXPECT_TRUE(whole_message(p->logs[i].text));
	}
	/* The one message that met the stalled entry was dropped. */
	EXPECT_EQ(1, busy);
	actrack_snapshot_free(s);
	unlink(path);
}

TEST_HARNESS_MAIN
