// SPDX-License-Identifier: MIT
/*
 * Stress of the single-writer protocol, meant for ThreadSanitizer (`make
 * check-tsan`) but run by every host build: writer threads push, change,
 * pop and set user data without pause; reader threads in this process
 * and a second process take snapshots all the while; a thread keeps
 * creating short-lived tracked threads (their trackers are freed at thread
 * exit, under the readers); a collector thread frees the records of dead
 * processes that the second process keeps leaving behind.
 *
 * Every stored value checks itself, so a copy mixed from two moments
 * cannot pass as consistent: a writer's activity at level k of round r
 * has object W<<48 | (8r + k) (the innermost one, when changed, 8r + 7),
 * info mix(object) and a type fixed by k; the outermost one's user data
 * "check" is the object of its round or of a later one in the same slot
 * (values are read after the stack copy, see lib/snapshot.c), never an
 * older one.  Each snapshot is either torn (no activities) or passes all
 * of that.  The run is bounded by counts, not time.
 */
#include <pthread.h>
#include <stdarg.h>
#include <sched.h>
#include <sys/mman.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

#define WRITERS		3
#define READERS		2
#define ROUNDS		300000	/* per writer */
#define SLOTS		4	/* level 5 is deeper than the slots */
#define MAX_LEVELS	5
#define CHURN_THREADS	200
#define MIN_DEAD	24	/* dead processes left for the collector */

struct counts {
	uint64_t snaps, consistent, torn, with_values, bad;
	char why[160];		/* the first bad copy */
};

/* Shared with the second process (MAP_SHARED). */
struct shared {
	uint32_t stop;		/* parent -> child */
	uint32_t dead_made;	/* child: processes left behind */
	uint64_t child_consistent; /* child: consistent copies of writers */
	struct counts child;
};

static const char *arena_path;
static struct shared *sh;
static uint32_t writers_done;
static uint64_t reader_consistent;	/* in-process readers, all */
static bool in_child;			/* the second process */

/*
 * Writers go on past ROUNDS until both kinds of reader have checked a
 * consistent copy of them: what the test proves does not depend on how
 * the scheduler happened to run it.
 */
static bool readers_saw_writers(void)
{
	return __atomic_load_n(&reader_consistent, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&sh->child_consistent, __ATOMIC_RELAXED);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x | 1;	/* never 0: a zeroed slot does not pass */
}

static uint8_t level_type(uint32_t k)
{
	return k & 1 ? ACTRACK_ACT_GENERIC_ACTION(k) : ACTRACK_ACT_IO_WAIT;
}

static uint32_t push_level(uint32_t k, uint64_t obj)
{
	if (k & 1)
		return actrack_push_generic(k, obj, mix(obj));
	return actrack_push_io_wait(obj, mix(obj));
}

/* ---- writers ---------------------------------------------------------- */

static void *writer(void *arg)
{
	uint32_t w = (uint32_t)(uintptr_t)arg, tok[MAX_LEVELS];
	char name[32];

	snprintf(name, sizeof(name), "stress-w%u", w);
	actrack_thread_init(name);
	for (uint64_t r = 0; r < ROUNDS || !readers_saw_writers(); r++) {
		uint64_t base = (uint64_t)w << 48 | r * 8;
		uint32_t depth = 1 + r % MAX_LEVELS;

		for (uint32_t k = 0; k < depth; k++)
			tok[k] = push_level(k, base + k);
		if (r % 4 == 0) {
			struct actrack_user_data *ud =
				actrack_activity_data(tok[0]);

			if (ud)
				actrack_set_uint(ud, "check", base);
		}
		if (depth > 1)
			actrack_change(tok[depth - 1], base + 7, mix(base + 7));
		for (uint32_t k = depth; k-- > 0;)
			actrack_pop(tok[k]);
	}
	__atomic_fetch_add(&writers_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Short-lived tracked threads: trackers allocated and freed under the
 * readers. */
static void *short_lived(void *arg)
{
	uint32_t t1, t2;

	actrack_thread_init("stress-short");
	t1 = actrack_push_task(1);
	t2 = actrack_push_lock_acquire(&t1);
	actrack_set_uint(actrack_activity_data(t2), "n", 2);
	actrack_pop(t2);
	actrack_pop(t1);
	return NULL;
}

static void *churn(void *arg)
{
	for (int i = 0; i < CHURN_THREADS; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, short_lived, NULL) == 0)
			pthread_join(th, NULL);
	}
	return NULL;
}

/* ---- verification ----------------------------------------------------- */

static void __attribute__((format(printf, 2, 3)))
bad(struct counts *c, const char *fmt, ...)
{
	va_list ap;

	if (c->bad++)
		return;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

static void check_thread(struct counts *c,
			 const struct actrack_snap_thread *t)
{
	uint32_t w, nr;
	uint64_t round;

	if (sscanf(t->name, "stress-w%u", &w) != 1)
		return;
	if (t->torn) {
		c->torn++;
		if (t->nr_activities || t->activities)
			bad(c, "w%u: torn with %u activities", w,
			    t->nr_activities);
		return;
	}
	c->consistent++;
	if (in_child)
		__atomic_fetch_add(&sh->child_consistent, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&reader_consistent, 1, __ATOMIC_RELAXED);
	nr = t->depth < SLOTS ? t->depth : SLOTS;
	if (t->depth > MAX_LEVELS || t->nr_activities != nr) {
		bad(c, "w%u: depth %u, %u stored", w, t->depth,
		    t->nr_activities);
		return;
	}
	if (!nr)
		return;
	round = t->activities[0].a.object & ((1ULL << 48) - 1);
	if (round % 8) {
		bad(c, "w%u: outermost object %llu", w,
		    (unsigned long long)round);
		return;
	}
	for (uint32_t k = 0; k < nr; k++) {
		const struct actrack_activity *a = &t->activities[k].a;
		uint64_t obj = a->object, seq = obj & ((1ULL << 48) - 1);

		if (obj >> 48 != w || a->info != mix(obj) ||
		    a->type != level_type(k))
			bad(c, "w%u: mixed slot %u, object %#llx info %#llx",
			    w, k, (unsigned long long)obj,
			    (unsigned long long)a->info);
		else if (seq != round + k &&
			 !(k && k == t->depth - 1 && seq == round + 7))
			bad(c, "w%u: slots of two rounds, %llu and %llu", w,
			    (unsigned long long)round,
			    (unsigned long long)seq);
	}
	if (t->activities[0].nr_values) {
		const struct actrack_value *v = &t->activities[0].values[0];

		c->with_values++;
		if (t->activities[0].nr_values != 1 || strcmp(v->name, "check") ||
		    v->type != ACTRACK_VALUE_UNSIGNED || v->u >> 48 != w ||
		    (v->u & ((1ULL << 48) - 1)) < round)
			bad(c, "w%u: user data %#llx older than round %llu",
			    w, (unsigned long long)v->u,
			    (unsigned long long)round);
	}
}

static int snapshot_once(struct counts *c)
{
	struct actrack_snapshot *s;
	int ret;

	ret = actrack_snapshot_take(arena_path, ACTRACK_SNAP_ARENA_FILE, &s);
	if (ret)
		return ret;
	c->snaps++;
	if (s->corrupt)
		bad(c, "snapshot marked corrupt");
	for (uint32_t i = 0; i < s->nr_processes; i++)
		for (uint32_t k = 0; k < s->processes[i].nr_threads; k++)
			check_thread(c, &s->processes[i].threads[k]);
	actrack_snapshot_free(s);
	return 0;
}

static void *reader(void *arg)
{
	struct counts *c = arg;

	while (__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE) < WRITERS)
		if (snapshot_once(c))
			bad(c, "snapshot failed");
	return NULL;
}

static uint64_t collected;

static void *collector(void *arg)
{
	for (;;) {
		/* One more pass after the last dead owner was made. */
		bool last = __atomic_load_n(&writers_done, __ATOMIC_ACQUIRE) ==
			    WRITERS &&
			    __atomic_load_n(&sh->dead_made, __ATOMIC_ACQUIRE) >=
			    MIN_DEAD;
		int n = actrack_collect_garbage();

		if (n > 0)
			collected += (uint64_t)n;
		if (last)
			return NULL;
		sched_yield();
	}
}

/* ---- the second process ----------------------------------------------- */

/* A process that attaches, pushes, annotates and exits without cleanup:
 * its records are the collector's to free. */
static void leave_dead_owner(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		uint32_t tok = actrack_push_task(7);

		actrack_set_uint(actrack_activity_data(tok), "dead", 1);
		actrack_set_string(actrack_process_data(), "role", "dead");
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void child_main(struct shared *sh)
{
	struct counts c;

	memset(&c, 0, sizeof(c));
	in_child = true;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		if (snapshot_once(&c))
			bad(&c, "snapshot failed in the other process");
		if (c.snaps % 4 == 0) {
			leave_dead_owner();
			__atomic_fetch_add(&sh->dead_made, 1, __ATOMIC_RELEASE);
		}
	}
	sh->child = c;
	_exit(0);
}

/* ---- the test --------------------------------------------------------- */

static void add(struct counts *to, const struct counts *c)
{
	if (c->bad && !to->bad)
		memcpy(to->why, c->why, sizeof(to->why));
	to->snaps += c->snaps;
	to->consistent += c->consistent;
	to->torn += c->torn;
	to->with_values += c->with_values;
	to->bad += c->bad;
}

TEST(writers_readers_other_process_and_collector)
{
	pthread_t wr[WRITERS], rd[READERS], ch, co;
	struct counts rc[READERS], total;
	struct actrack_snapshot *s;
	char path[256];
	int status;
	pid_t child;

	test_path(path, sizeof(path), "stress");
	arena_path = path;
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path, .stack_slots = SLOTS,
		.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
	};
	ASSERT_EQ(0, actrack_init(&o));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));

	/* Forked before any thread exists: a clean single-threaded child. */
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0)
		child_main(sh);

	memset(rc, 0, sizeof(rc));
	for (uintptr_t i = 0; i < READERS; i++)
		ASSERT_EQ(0, pthread_create(&rd[i], NULL, reader, &rc[i]));
	ASSERT_EQ(0, pthread_create(&co, NULL, collector, NULL));
	ASSERT_EQ(0, pthread_create(&ch, NULL, churn, NULL));
	for (uintptr_t i = 0; i < WRITERS; i++)
		ASSERT_EQ(0, pthread_create(&wr[i], NULL, writer,
					    (void *)(i + 1)));
	for (int i = 0; i < WRITERS; i++)
		pthread_join(wr[i], NULL);
	pthread_join(ch, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(rd[i], NULL);
	pthread_join(co, NULL);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	memset(&total, 0, sizeof(total));
	for (int i = 0; i < READERS; i++)
		add(&total, &rc[i]);
	TH_LOG("in-process readers: %llu snapshots, %llu consistent copies "
	       "(%llu with user data), %llu torn",
	       (unsigned long long)total.snaps,
	       (unsigned long long)total.consistent,
	       (unsigned long long)total.with_values,
	       (unsigned long long)total.torn);
	TH_LOG("other process: %llu snapshots, %llu consistent, %llu torn, "
	       "%u dead processes left, %llu records collected",
	       (unsigned long long)sh->child.snaps,
	       (unsigned long long)sh->child.consistent,
	       (unsigned long long)sh->child.torn, sh->dead_made,
	       (unsigned long long)collected);
	add(&total, &sh->child);
	if (total.bad)
		TH_LOG("first bad copy: %s", total.why);
	EXPECT_EQ(0, total.bad);
	/* The run checked something: copies of the writers in both
	 * processes, and dead owners freed by the collector. */
	EXPECT_LT(0, total.consistent - sh->child.consistent);
	EXPECT_LT(0, sh->child.consistent);
	EXPECT_LT(0, collected);

	/* What the collector leaves: only this process and no other. */
	actrack_collect_garbage();
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	for (uint32_t i = 0; i < s->nr_processes; i++)
		EXPECT_EQ((uint32_t)getpid(), s->processes[i].pid);
	actrack_snapshot_free(s);
	munmap(sh, sizeof(*sh));
	unlink(path);
}

/*
 * A writer stopped inside actrack_change() (preempted, or SIGKILLed there)
 * between its two version bumps: the slot holds the new object and the
 * old info.  A snapshot must not return that as a consistent stack.  The
 * stop is made exactly here by doing what actrack_change() does up to
 * that point (lib/tracker.c: bump, release fence, store the object).
 * Found by the stress test above under TSan, whose slowdown widens the
 * window enough to hit it within a run.
 */
static const struct actrack_snap_thread *find_thread(
	const struct actrack_snapshot *s, const char *name)
{
	const struct actrack_snap_thread *t = NULL;

	for (uint32_t i = 0; !t && i < s->nr_processes; i++)
		t = snap_thread_named(&s->processes[i], name);
	return t;
}

TEST(change_in_progress_is_never_accepted)
{
	const struct actrack_snap_thread *t;
	struct actrack_snapshot *s;
	struct actrack_thread *th;
	struct actrack_activity *slot;
	uint32_t tok, v;
	char path[256];

	test_path(path, sizeof(path), "midchange");
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path, .stack_slots = SLOTS,
		.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
	};
	ASSERT_EQ(0, actrack_init(&o));
	ASSERT_EQ(0, actrack_thread_init("midchange"));
	/* A pop first, as in any real thread: the version has moved. */
	actrack_pop(actrack_push_task(1));
	push_level(0, 100);
	tok = push_level(1, 101);
	ASSERT_EQ(2, tok);
	th = actrack__tls.tracker;
	ASSERT_NE(NULL, th);
	slot = &ACTRACK_THREAD_SLOTS(th)[tok - 1];

	/* actrack_change(tok, 107, mix(107)), stopped after the object. */
	v = __atomic_load_n(&th->version, __ATOMIC_RELAXED);
	__atomic_store_n(&th->version, v + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	slot->object = 107;

	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	t = find_thread(s, "midchange");
	ASSERT_NE(NULL, t);
	if (!t->torn) {
		ASSERT_EQ(2, t->nr_activities);
		TH_LOG("accepted mid-change: object %llu, info %#llx",
		       (unsigned long long)t->activities[1].a.object,
		       (unsigned long long)t->activities[1].a.info);
	}
	EXPECT_TRUE(t->torn);
	EXPECT_EQ(1, s->nr_torn);
	actrack_snapshot_free(s);

	/* The change completes: the new values, consistent. */
	slot->info = mix(107);
	__atomic_store_n(&th->version, v + 2, __ATOMIC_RELEASE);
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	t = find_thread(s, "midchange");
	ASSERT_NE(NULL, t);
	ASSERT_FALSE(t->torn);
	ASSERT_EQ(2, t->nr_activities);
	EXPECT_EQ(100, t->activities[0].a.object);
	EXPECT_EQ(107, t->activities[1].a.object);
	EXPECT_EQ(mix(107), t->activities[1].a.info);
	actrack_snapshot_free(s);
	unlink(path);
}

TEST_HARNESS_MAIN
