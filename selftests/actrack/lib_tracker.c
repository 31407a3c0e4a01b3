// SPDX-License-Identifier: MIT
/*
 * libactrack writer side on a file-backed arena: pushes and pops, depth
 * beyond the slots, fork isolation, thread exit and tracker reuse.  Each
 * TEST runs in its own forked process (kselftest harness), so each attaches
 * afresh to its own arena file.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "actrack.h"
#include "arena.h"
#include "test_harness.h"

/* The harness runs each TEST in a child: one arena file per test. */
static void attach_fresh(struct __test_metadata *_metadata, const char *tag,
			 uint32_t slots)
{
	static char path[256];
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path, .stack_slots = slots,
		.flags = ACTRACK_INIT_NO_MODULE,
	};

	snprintf(path, sizeof(path), "%s/actrack-test-%s-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag,
		 (int)getpid());
	unlink(path);
	/* In the VM (ACTRACK_IN_VM=1 and actrack.ko loaded) the same tests
	 * run against the kernel's arena. */
	if (getenv("ACTRACK_IN_VM") && !access(ACTRACK_DEVICE_PATH, F_OK)) {
		o.arena_path = NULL;
		o.flags &= ~ACTRACK_INIT_NO_MODULE;
		unsetenv(ACTRACK_ENV_ARENA);
		ASSERT_EQ(0, actrack_init(&o));
		ASSERT_EQ((int)ACTRACK_BACKEND_MODULE, (int)actrack_backend());
		return;
	}
	ASSERT_EQ(0, actrack_init(&o));
	ASSERT_EQ((int)ACTRACK_BACKEND_FILE, (int)actrack_backend());
}

static struct actrack_thread *my_tracker(void)
{
	return actrack__tls.tracker;
}

TEST(push_pop_every_type)
{
	static int lock, event;
	struct actrack_activity *s;
	uint32_t tok[8];

	attach_fresh(_metadata, "types", 8);
	tok[0] = actrack_push_task(41);
	tok[1] = actrack_push_lock_acquire(&lock);
	tok[2] = actrack_push_lock_held(&lock);
	tok[3] = actrack_push_event_wait(&event);
	tok[4] = actrack_push_thread_join(1234);
	tok[5] = actrack_push_process_wait(4321);
	tok[6] = actrack_push_io_wait(7, 4096);
	tok[7] = actrack_push_generic(5, 77, 88);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ((uint32_t)i + 1, tok[i]);
	ASSERT_EQ(8u, actrack_depth());
	s = ACTRACK_THREAD_SLOTS(my_tracker());
	EXPECT_EQ(ACTRACK_ACT_TASK_RUN, s[0].type);
	EXPECT_EQ(41u, s[0].object);
	EXPECT_EQ(ACTRACK_ACT_LOCK_ACQUIRE, s[1].type);
	EXPECT_EQ((uint64_t)(uintptr_t)&lock, s[1].object);
	EXPECT_EQ(ACTRACK_ACT_LOCK_HELD, s[2].type);
	EXPECT_EQ(ACTRACK_ACT_EVENT_WAIT, s[3].type);
	EXPECT_EQ((uint64_t)(uintptr_t)&event, s[3].object);
	EXPECT_EQ(ACTRACK_ACT_THREAD_JOIN, s[4].type);
	EXPECT_EQ(1234u, s[4].object);
	EXPECT_EQ(ACTRACK_ACT_PROCESS_WAIT, s[5].type);
	EXPECT_EQ(4321u, s[5].object);
	EXPECT_EQ(ACTRACK_ACT_IO_WAIT, s[6].type);
	EXPECT_EQ(7u, s[6].object);
	EXPECT_EQ(4096u, s[6].info);
	EXPECT_EQ(0xF5, s[7].type);
	EXPECT_EQ(77u, s[7].object);
	EXPECT_EQ(88u, s[7].info);
	/* Origins are pcs inside this function, all different. */
	for (int i = 0; i < 8; i++) {
		EXPECT_NE(0u, s[i].origin);
		EXPECT_NE(0u, s[i].time_ns);
	}
	EXPECT_NE(s[0].origin, s[1].origin);
	for (int i = 7; i >= 0; i--)
		actrack_pop(tok[i]);
	EXPECT_EQ(0u, actrack_depth());
}

TEST(depth_beyond_slots_is_counted_not_stored)
{
	uint32_t tok[12];
	struct actrack_activity *s;

	attach_fresh(_metadata, "overflow", 4);
	for (int i = 0; i < 12; i++)
		tok[i] = actrack_push_task(100 + i);
	EXPECT_EQ(12u, actrack_depth());
	EXPECT_EQ(4u, my_tracker()->slot_count);
	s = ACTRACK_THREAD_SLOTS(my_tracker());
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(100u + i, s[i].object);
	for (int i = 11; i >= 0; i--) {
		actrack_pop(tok[i]);
		EXPECT_EQ((uint32_t)i, actrack_depth());
	}
}

TEST(pop_bumps_version_and_unwinds_missed_pops)
{
	uint32_t v0, a, b, c;

	attach_fresh(_metadata, "version", 8);
	a = actrack_push_task(1);
	v0 = my_tracker()->version;
	b = actrack_push_task(2);
	c = actrack_push_task(3);
	(void)c;
	/* Popping b also ends c, which was never popped. */
	actrack_pop(b);
	EXPECT_EQ(1u, actrack_depth());
	/* +2 per pop: an odd version means a change is under way. */
	EXPECT_EQ(v0 + 2, my_tracker()->version);
	actrack_pop(a);
	EXPECT_EQ(0u, actrack_depth());
	EXPECT_EQ(v0 + 4, my_tracker()->version);
	/* Token 0 (an untracked push) is a no-op. */
	actrack_pop(0);
	EXPECT_EQ(0u, actrack_depth());
}

/* A foreign token, from another thread. */
static void *pop_foreign(void *arg)
{
	uint32_t *tokens = arg;

	tokens[1] = actrack_push_task(7);	/* depth 1 here */
	actrack_pop(tokens[0]);			/* the main thread's token 3 */
	tokens[2] = actrack_depth();
	actrack_pop(tokens[1]);
	return NULL;
}

TEST(token_above_depth_never_raises_it)
{
	uint32_t a, b, c, v0, tokens[3];
	pthread_t th;

	attach_fresh(_metadata, "token", 8);
	a = actrack_push_task(1);
	b = actrack_push_task(2);
	v0 = my_tracker()->version;
	/* A wrong token above the depth: ignored, nothing changes. */
	actrack_pop(a + 40);
	EXPECT_EQ(2u, actrack_depth());
	actrack_pop(9999);
	EXPECT_EQ(2u, actrack_depth());
	actrack_pop(UINT32_MAX);
	EXPECT_EQ(2u, actrack_depth());
	actrack_pop(b + 1);
	EXPECT_EQ(2u, actrack_depth());
	EXPECT_EQ(v0, my_tracker()->version);
	/* A stale token (popped already) above the depth: ignored. */
	c = actrack_push_task(3);
	actrack_pop(c);
	actrack_pop(c);
	EXPECT_EQ(2u, actrack_depth());
	/* Another thread's token above that thread's depth: ignored there. */
	c = actrack_push_task(3);
	tokens[0] = c;
	ASSERT_EQ(0, pthread_create(&th, NULL, pop_foreign, tokens));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(1u, tokens[1]);
	EXPECT_EQ(1u, tokens[2]);
	EXPECT_EQ(3u, actrack_depth());
	/* A stale token at or below the depth pops to token - 1 (documented). */
	actrack_pop(b);
	EXPECT_EQ(1u, actrack_depth());
	EXPECT_EQ(1u, ACTRACK_THREAD_SLOTS(my_tracker())[0].object);
	actrack_pop(a);
	EXPECT_EQ(0u, actrack_depth());
}

TEST(change_rewrites_live_activity)
{
	uint32_t tok, v0;

	attach_fresh(_metadata, "change", 8);
	tok = actrack_push_generic(1, 10, 20);
	v0 = my_tracker()->version;
	actrack_change(tok, 11, 21);
	EXPECT_EQ(11u, ACTRACK_THREAD_SLOTS(my_tracker())[0].object);
	EXPECT_EQ(21u, ACTRACK_THREAD_SLOTS(my_tracker())[0].info);
	EXPECT_EQ(v0 + 2, my_tracker()->version);
	actrack_pop(tok);
	/* Not on the stack any more: ignored. */
	actrack_change(tok, 99, 99);
	EXPECT_EQ(11u, ACTRACK_THREAD_SLOTS(my_tracker())[0].object);
}

/* Depth seen inside a nested scope, and after it ended. */
static uint32_t inner_scope(uint32_t *after)
{
	uint32_t inside;

	{
		ACTRACK_SCOPE(task, 5);
		inside = actrack_depth();
	}
	*after = actrack_depth();
	return inside;
}

static uint32_t outer_scope(uint32_t *inside, uint32_t *after_inner)
{
	static int mu;
	ACTRACK_SCOPE(lock_acquire, &mu);

	*inside = inner_scope(after_inner);
	return actrack_depth();
}

TEST(scope_pops_on_block_exit)
{
	uint32_t outer, inside, after_inner;

	attach_fresh(_metadata, "scope", 8);
	outer = outer_scope(&inside, &after_inner);
	EXPECT_EQ(1u, outer);
	EXPECT_EQ(2u, inside);
	EXPECT_EQ(1u, after_inner);
	EXPECT_EQ(0u, actrack_depth());
}

TEST(tracker_owner_and_name)
{
	struct actrack_thread *t;
	uint64_t ticks;

	attach_fresh(_metadata, "owner", 8);
	ASSERT_EQ(0, actrack_thread_init("main-thread"));
	t = my_tracker();
	ASSERT_NE(NULL, t);
	EXPECT_EQ((uint32_t)getpid(), t->owner.pid);
	EXPECT_EQ((uint32_t)syscall(SYS_gettid), t->owner.tid);
	ASSERT_EQ(0, actrack_read_start_ticks(getpid(), &ticks));
	EXPECT_EQ(ticks, t->owner.start_ticks);
	EXPECT_NE(0u, t->owner.data_id);
	EXPECT_STREQ("main-thread", t->name);
	EXPECT_EQ(0, actrack_set_thread_name("renamed"));
	EXPECT_STREQ("renamed", t->name);
	EXPECT_EQ(-EINVAL, actrack_set_thread_name(NULL));
}

static void *thread_body(void *arg)
{
	struct actrack_thread **out = arg;
	uint32_t tok = actrack_push_task(7);

	*out = actrack__tls.tracker;
	actrack_pop(tok);
	return NULL;
}

TEST(thread_exit_releases_tracker_for_reuse)
{
	struct actrack_thread *first = NULL, *second = NULL;
	pthread_t th;

	attach_fresh(_metadata, "reuse", 8);
	ASSERT_EQ(0, pthread_create(&th, NULL, thread_body, &first));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_NE(NULL, first);
	/* Released at exit: freed type, cleared owner. */
	EXPECT_EQ(0u, first->owner.data_id);
	EXPECT_EQ(0u, first->owner.pid);
	ASSERT_EQ(0, pthread_create(&th, NULL, thread_body, &second));
	ASSERT_EQ(0, pthread_join(th, NULL));
	/* The second thread got the same block back. */
	EXPECT_EQ(first, second);
}

TEST(fork_child_never_writes_parent_records)
{
	struct actrack_thread *parent_t;
	uint32_t tok, parent_depth;
	int status;
	pid_t pid;
	int pfd[2];

	attach_fresh(_metadata, "fork", 8);
	tok = actrack_push_task(1);
	parent_t = my_tracker();
	parent_depth = parent_t->depth;
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t t2 = actrack_push_task(2);
		struct actrack_thread *c = actrack__tls.tracker;
		char ok = c && c != parent_t && c->owner.pid == (uint32_t)getpid()
			  && t2 == 1 ? 'y' : 'n';

		if (write(pfd[1], &ok, 1) != 1)
			_exit(1);
		_exit(0);
	}
	char ok = 0;

	ASSERT_EQ(1, read(pfd[0], &ok, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ('y', ok);
	EXPECT_EQ(parent_depth, parent_t->depth);
	EXPECT_EQ(1u, ACTRACK_THREAD_SLOTS(parent_t)[0].object);
	EXPECT_EQ((uint32_t)getpid(), parent_t->owner.pid);
	actrack_pop(tok);
}

/*
 * A process forks before it ever attached (the library installs its fork
 * handlers at the first attach, not at start): that child attaches as
 * itself; the parent attaches later, and a child it forks then still
 * starts with its own tracker, not the parent's.
 */
static char fork_probe(uint32_t depth_before)
{
	uint32_t t = actrack_push_task(2);
	struct actrack_thread *c = actrack__tls.tracker;

	return c && c->owner.pid == (uint32_t)getpid() &&
	       t == depth_before + 1 ? 'y' : 'n';
}

TEST(fork_before_attach_then_after)
{
	struct actrack_thread *parent_t;
	char path[256], ok = 0, c;
	int status, pfd[2];
	uint32_t tok;
	pid_t pid;

	/* The child's implicit attach: this test's file (not the default
	 * arena), or the module's in the VM. */
	snprintf(path, sizeof(path), "%s/actrack-test-prefork-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	unlink(path);
	if (!getenv("ACTRACK_IN_VM") || access(ACTRACK_DEVICE_PATH, F_OK))
		setenv(ACTRACK_ENV_ARENA, path, 1);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Not attached: the push attaches this child. */
		c = fork_probe(0);
		_exit(write(pfd[1], &c, 1) == 1 ? 0 : 1);
	}
	ASSERT_EQ(1, read(pfd[0], &ok, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ('y', ok);
	unlink(path);
	attach_fresh(_metadata, "latefork", 8);
	tok = actrack_push_task(1);
	parent_t = my_tracker();
	ASSERT_NE(NULL, parent_t);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		c = actrack__tls.tracker == NULL ? fork_probe(0) : 'n';
		_exit(write(pfd[1], &c, 1) == 1 ? 0 : 1);
	}
	ok = 0;
	ASSERT_EQ(1, read(pfd[0], &ok, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ('y', ok);
	EXPECT_EQ(1u, parent_t->depth);
	EXPECT_EQ((uint32_t)getpid(), parent_t->owner.pid);
	actrack_pop(tok);
}

TEST(init_rejects_bad_options)
{
	struct actrack_opts o = { .sz = sizeof(o) };

	o.sz = 3;
	EXPECT_EQ(-EINVAL, actrack_init(&o));
	o.sz = sizeof(o);
	o.stack_slots = ACTRACK_THREAD_MAX_SLOTS + 1;
	EXPECT_EQ(-EINVAL, actrack_init(&o));
	o.stack_slots = 0;
	o.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, actrack_init(&o));
	o.flags = 0;
	o.arena_path = "/nonexistent-dir/arena";
	EXPECT_EQ(-ENOENT, actrack_init(&o));
	o.arena_path = "/tmp";			/* a directory */
	EXPECT_EQ(-EISDIR, actrack_init(&o));
}

/* libbpf-style sizes: older smaller structs, newer larger ones. */
TEST(init_opts_are_size_prefixed)
{
	static char path[256];
	struct {
		struct actrack_opts o;
		uint64_t future[2];
	} big;
	struct actrack_opts small;

	snprintf(path, sizeof(path), "%s/actrack-test-sz-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	unlink(path);
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.o.arena_path = path;
	big.o.flags = ACTRACK_INIT_NO_MODULE;
	big.future[1] = 1;
	EXPECT_EQ(-E2BIG, actrack_init(&big.o));
	/* an older program: only sz and arena_path, the rest is garbage */
	memset(&small, 0x7f, sizeof(small));
	small.sz = offsetof(struct actrack_opts, arena_path) + sizeof(char *);
	small.arena_path = path;
	EXPECT_EQ(0, actrack_init(&small));
	EXPECT_EQ((int)ACTRACK_BACKEND_FILE, (int)actrack_backend());
	EXPECT_EQ(1U, actrack_push_task(1));
	EXPECT_EQ((uint32_t)ACTRACK_DEFAULT_SLOTS, my_tracker()->slot_count);
	actrack_pop(1);
	/* a newer program whose extra fields are zero */
	big.future[1] = 0;
	EXPECT_EQ(0, actrack_init(&big.o));
	unlink(path);
}

TEST(init_is_idempotent_and_detects_conflicts)
{
	struct actrack_opts o = { .sz = sizeof(o), .arena_path = "/tmp/x" };

	attach_fresh(_metadata, "idem", 8);
	EXPECT_EQ(0, actrack_init(NULL));
	EXPECT_EQ(-EEXIST, actrack_init(&o));
}

TEST(untracked_when_arena_is_not_an_arena)
{
	char path[] = "/tmp/actrack-test-garbage-XXXXXX";
	struct actrack_opts o = { .sz = sizeof(o), .arena_path = path };
	char junk[4096];
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	memset(junk, 0x5a, sizeof(junk));
	ASSERT_EQ((ssize_t)sizeof(junk), write(fd, junk, sizeof(junk)));
	close(fd);
	EXPECT_EQ(-EBADMSG, actrack_init(&o));
	/* Pushes are dropped (token 0), never a crash. */
	setenv(ACTRACK_ENV_ARENA, path, 1);
	EXPECT_EQ(0u, actrack_push_task(1));
	EXPECT_EQ(0u, actrack_depth());
	unlink(path);
}

/* Nested scopes, @n deep; the innermost is annotated. */
static int annotate_at_depth(int n, uint32_t *depth_seen)
{
	ACTRACK_SCOPE_TOKEN(tok, task, 1000 + n);
	struct actrack_user_data *ud;

	if (n > 1)
		return annotate_at_depth(n - 1, depth_seen);
	*depth_seen = tok;
	ud = actrack_activity_data(tok);
	if (!ud)
		return -1;
	if (actrack_set_uint(ud, "depth", tok))
		return -2;
	return ACTRACK_THREAD_SLOTS(my_tracker())[tok - 1].user_data ? 0 : -3;
}

TEST(scoped_activity_annotated_deeper_than_8)
{
	uint32_t depth = 0;

	attach_fresh(_metadata, "deep", 16);
	EXPECT_EQ(0, annotate_at_depth(12, &depth));
	EXPECT_EQ(12u, depth);
	EXPECT_EQ(0u, actrack_depth());		/* every scope popped */
	/* beyond the slots: counted, not stored, so no user data */
	EXPECT_EQ(-1, annotate_at_depth(17, &depth));
	EXPECT_EQ(17u, depth);
	EXPECT_EQ(0u, actrack_depth());
}

static void *tid_thread(void *arg)
{
	uint32_t *tid = arg;

	actrack_thread_init("joined");
	__atomic_store_n(tid, (uint32_t)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	while (__atomic_load_n(tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

TEST(pthread_tid_for_thread_join)
{
	uint32_t tid = 0, tok;
	pthread_t th;

	attach_fresh(_metadata, "tid", 8);
	ASSERT_EQ(0, actrack_thread_init("main"));
	EXPECT_EQ((pid_t)syscall(SYS_gettid), actrack_pthread_tid(pthread_self()));
	ASSERT_EQ(0, pthread_create(&th, NULL, tid_thread, &tid));
	for (int i = 0; i < 20000 && !__atomic_load_n(&tid, __ATOMIC_ACQUIRE);
	     i++)
		usleep(1000);
	ASSERT_NE(0u, tid);
	EXPECT_EQ((pid_t)tid, actrack_pthread_tid(th));
	tok = actrack_push_thread_join(actrack_pthread_tid(th));
	EXPECT_EQ(tid, ACTRACK_THREAD_SLOTS(my_tracker())[tok - 1].object);
	__atomic_store_n(&tid, 0, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(th, NULL));
	actrack_pop(tok);
	/* gone with its thread */
	EXPECT_EQ(-ESRCH, actrack_pthread_tid(th));
}

/*
 * A forked child knows none of its parent's threads, and its own once it
 * has a tracker, in a table of its own (the parent's copy is set aside at
 * fork: nothing done there but a store).
 */
TEST(fork_child_knows_its_own_tids_only)
{
	uint32_t tid = 0;
	int status, pfd[2];
	char ok[4] = "";
	pthread_t th;
	pid_t pid;

	attach_fresh(_metadata, "tidfork", 8);
	ASSERT_EQ(0, actrack_thread_init("main"));
	ASSERT_EQ(0, pthread_create(&th, NULL, tid_thread, &tid));
	for (int i = 0; i < 20000 && !__atomic_load_n(&tid, __ATOMIC_ACQUIRE);
	     i++)
		usleep(1000);
	ASSERT_NE(0u, tid);
	ASSERT_EQ((pid_t)tid, actrack_pthread_tid(th));
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		ok[0] = actrack_pthread_tid(th) == -ESRCH ? 'y' : 'n';
		ok[1] = actrack_pthread_tid(pthread_self()) == -ESRCH ?
			'y' : 'n';
		ok[2] = actrack_thread_init("child") == 0 ? 'y' : 'n';
		ok[3] = actrack_pthread_tid(pthread_self()) == getpid() ?
			'y' : 'n';
		_exit(write(pfd[1], ok, 4) == 4 ? 0 : 1);
	}
	ASSERT_EQ(4, read(pfd[0], ok, 4));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ('y', ok[0]);	/* the parent's thread: not the child's */
	EXPECT_EQ('y', ok[1]);	/* no tracker yet: not known */
	EXPECT_EQ('y', ok[2]);
	EXPECT_EQ('y', ok[3]);	/* its own, once it has a tracker */
	/* The parent's table is untouched. */
	EXPECT_EQ((pid_t)tid, actrack_pthread_tid(th));
	__atomic_store_n(&tid, 0, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(th, NULL));
}

TEST(version_macros_and_function_agree)
{
	char v[32];

	snprintf(v, sizeof(v), "%d.%d.%d", ACTRACK_VERSION_MAJOR,
		 ACTRACK_VERSION_MINOR, ACTRACK_VERSION_PATCH);
	EXPECT_STREQ(ACTRACK_VERSION, v);
	ASSERT_NE(NULL, actrack_version());
	EXPECT_STREQ(ACTRACK_VERSION, actrack_version());
}

TEST_HARNESS_MAIN
