// SPDX-License-Identifier: MIT
/*
 * A thread that ends on its own without the library's destructor (a raw
 * SYS_exit) is freed by the kernel through the tracker it registered with
 * ACTRACK_IOC_THREAD, in O(slots), with no walk of the arena:
 *  - the ioctl's errors, exactly;
 *  - the proof that no walk runs: the arena's list is made to loop on its
 *    first block, so a walk would reach none of the thread's records and
 *    would count corruption; the thread's tracker and user data are freed
 *    all the same and the corruption counter does not move;
 *  - many threads at once (a batch that may overflow into a sweep of the
 *    registered threads), freed the same way;
 *  - a registration that lies (another thread's tracker, a data list that
 *    names someone else's blocks) frees nothing that is not the thread's;
 *  - a thread that takes its registration back keeps its records until
 *    its process ends;
 *  - a client that never registers (an older library) is walked, as
 *    before;
 *  - a sweep (of an overflowed batch) that runs while the process is
 *    being killed frees none of the threads the kill took: the death
 *    report holds every thread that was alive when the group began to
 *    exit (a traced thread held in its exit keeps the group from dying
 *    until the sweep has run).
 * Each test runs as a uid of its own, so that the looped list is in an
 * arena nobody else uses.
 */
#include <sys/ptrace.h>
#include "vm_util.h"

#define MAIN_TASK	444
#define THREAD_TASK	555
#define MANY		40
#define FREE_WAIT_NS	20000000000ULL

static void become(uid_t uid)
{
	if (setgid(uid) || setuid(uid)) {
		perror("setuid");
		_exit(1);
	}
}

static int thread_reg(int fd, uint32_t tracker, uint32_t flags,
		      uint64_t reserved)
{
	struct actrack_thread_reg reg = {
		.tracker = tracker, .flags = flags, .reserved = reserved,
	};

	return ioctl(fd, ACTRACK_IOC_THREAD, &reg) ? -errno : 0;
}

static struct actrack_block *block_at(struct vm_map *m, uint32_t ref)
{
	return (struct actrack_block *)((char *)m->a.base + ref);
}

static uint32_t type_at(struct vm_map *m, uint32_t ref)
{
	return at_load_acquire(&block_at(m, ref)->type_id);
}

/* The first live block of @type owned by (our pid, @tid), or 0. */
static uint32_t find_ref(struct vm_map *m, uint32_t tid, uint32_t type)
{
	struct actrack_arena_iter it;
	uint32_t ref, t;

	actrack_arena_iter_init(&it, &m->a);
	while ((ref = actrack_arena_iter_next(&it, type, &t))) {
		struct actrack_owner *o = actrack_arena_get(&m->a, ref, t,
							    sizeof(*o));

		if (o && at_load_acquire(&o->data_id) &&
		    at_load(&o->pid) == (uint32_t)getpid() &&
		    at_load(&o->tid) == tid)
			return ref;
	}
	return 0;
}

/*
 * Make the arena's list loop on its first block (one store, what any
 * process of the uid can do), so that a walk from the head meets nothing
 * else; undo it before the process ends, so that its death walk frees
 * everything.
 */
struct loop {
	struct vm_map *m;
	uint32_t first, next;
};

static void loop_make(struct loop *l, struct vm_map *m)
{
	struct actrack_arena_header *h = m->a.base;

	l->m = m;
	l->first = at_load(&h->queue.next);
	l->next = at_load(&block_at(m, l->first)->next);
	at_store(&block_at(m, l->first)->next, l->first);
}

static void loop_undo(struct loop *l)
{
	at_store(&block_at(l->m, l->first)->next, l->next);
}

/* Wait until each of @refs is no longer a block of its type in @types. */
static bool wait_freed(struct vm_map *m, const uint32_t *refs,
		       const uint32_t *types, int n)
{
	uint64_t t0 = actrack_test_mono_ns();
	int i;

	do {
		for (i = 0; i < n && type_at(m, refs[i]) != types[i]; i++)
			;
		if (i == n)
			return true;
		usleep(1000);
	} while (actrack_test_mono_ns() - t0 < FREE_WAIT_NS);
	return false;
}

static void stats(struct actrack_kstats *st)
{
	struct actrack_monitor *mon;

	memset(st, 0, sizeof(*st));
	if (actrack_monitor_open(0, &mon))
		return;
	actrack_monitor_stats(mon, st);
	actrack_monitor_close(mon);
}

/*
 * The counters once records_freed has grown by @n from @before, or at the
 * deadline.  The work frees a batch's blocks one by one and counts them
 * after the batch: a reader that saw the blocks gone may still read the
 * old count, so wait for it; the callers assert the exact value.
 */
static void stats_after_freeing(const struct actrack_kstats *before, int n,
				struct actrack_kstats *after)
{
	uint64_t t0 = actrack_test_mono_ns();

	do {
		stats(after);
		if (after->records_freed >= before->records_freed + n)
			return;
		usleep(1000);
	} while (actrack_test_mono_ns() - t0 < FREE_WAIT_NS);
}

/* A thread that pushes, annotates, says its tid, waits, and SYS_exits. */
struct worker {
	pthread_t th;
	int go;			/* read end: EOF means exit */
	int ready;		/* write end */
	pid_t tid;
	bool unregister;	/* take its registration back first */
	int reg_fd;		/* for @unregister or @lie_tracker */
	uint32_t lie_tracker;	/* register this ref instead of its own */
	uint32_t lie_data[3];	/* data list entries to write */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct actrack_user_data *ud;
	uint32_t tok;
	char c;

	actrack_thread_init("reg-exit");
	tok = actrack_push_task(THREAD_TASK);
	ud = actrack_activity_data(tok);
	if (ud)
		actrack_set_string(ud, "step", "about to exit");
	if (w->unregister)
		thread_reg(w->reg_fd, 0, 0, 0);
	if (w->lie_tracker)
		thread_reg(w->reg_fd, w->lie_tracker, 0, 0);
	for (int i = 0; i < 3; i++)
		if (w->lie_data[i])
			ACTRACK_THREAD_DATA_REFS(actrack__tls.tracker)[i] =
				w->lie_data[i];
	w->tid = gettid();
	c = ud ? 'r' : 'e';
	if (write(w->ready, &c, 1) != 1)
		return NULL;
	while (read(w->go, &c, 1) < 0 && errno == EINTR)
		;
	/* No pthread_exit, no TLS destructors: only the kernel frees. */
	syscall(SYS_exit, 0);
	return NULL;
}

/* Start @n workers (as configured in @w) and wait until all are ready. */
static int start_workers(struct worker *w, int n, int go[2])
{
	int ready[2], i, got;
	char c;

	if (pipe(go) || pipe(ready))
		return -errno;
	for (i = 0; i < n; i++) {
		w[i].go = go[0];
		w[i].ready = ready[1];
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]))
			return -EAGAIN;
		pthread_detach(w[i].th);
	}
	for (got = 0; got < n; got++)
		if (read(ready[0], &c, 1) != 1 || c != 'r')
			break;
	close(ready[0]);
	close(ready[1]);
	return got == n ? 0 : -EIO;
}

static void attach_and_map(struct __test_metadata *_metadata,
			   struct vm_map *m)
{
	struct actrack_opts o = { .sz = sizeof(o) };
	struct actrack_user_data *ud;

	ASSERT_EQ(0, actrack_init(&o));
	ASSERT_EQ(ACTRACK_BACKEND_MODULE, actrack_backend());
	ud = actrack_activity_data(actrack_push_task(MAIN_TASK));
	ASSERT_NE(NULL, ud);
	ASSERT_EQ(0, actrack_set_string(ud, "who", "main"));
	ASSERT_EQ(0, vm_map_open(m, -1, true));
}

/* Each test's body sets its own uid: nothing to set up here. */
FIXTURE(uid) {
	int unused;
};

FIXTURE_SETUP(uid)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(uid)
{
}

TEST_F(uid, ioctl_errors)
{
	struct actrack_layout lay;
	struct vm_map m;
	uint32_t tracker;
	int fd, ro;

	VM_REQUIRE_MODULE();
	become(52100);
	fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, thread_reg(fd, 4096, 1, 0));
	EXPECT_EQ(-EINVAL, thread_reg(fd, 4096, 0, 1));
	/* No arena behind this fd yet: registering never makes one. */
	EXPECT_EQ(-ENOENT, thread_reg(fd, 4096, 0, 0));
	ASSERT_EQ(0, ioctl(fd, ACTRACK_IOC_LAYOUT, &lay));
	/* An arena, but this process is not attached. */
	EXPECT_EQ(-ENOENT, thread_reg(fd, 4096, 0, 0));
	ro = open(ACTRACK_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ro);
	EXPECT_EQ(-EPERM, thread_reg(ro, 4096, 0, 0));
	close(ro);

	attach_and_map(_metadata, &m);
	tracker = find_ref(&m, gettid(), ACTRACK_TYPE_THREAD);
	ASSERT_NE(0, tracker);
	EXPECT_EQ(-EINVAL, thread_reg(fd, tracker + 1, 0, 0));
	EXPECT_EQ(-EINVAL, thread_reg(fd, ACTRACK_BLOCK_ALIGN, 0, 0));
	EXPECT_EQ(-EINVAL, thread_reg(fd, lay.arena_size, 0, 0));
	EXPECT_EQ(-EINVAL, thread_reg(fd, UINT32_MAX & ~63U, 0, 0));
	EXPECT_EQ(0, thread_reg(fd, tracker, 0, 0));
	EXPECT_EQ(0, thread_reg(fd, 0, 0, 0));
	EXPECT_EQ(0, thread_reg(fd, tracker, 0, 0));
	/* The library's own tracker came with the ABI 1.3 data list. */
	EXPECT_EQ(ACTRACK_THREAD_HELD | ACTRACK_THREAD_DATA,
		  actrack__tls.tracker->flags);
	close(fd);
	vm_map_close(&m);
}

TEST_F_TIMEOUT(uid, raw_exit_frees_thread_without_walk, 120)
{
	struct actrack_kstats before, after;
	uint32_t refs[2], types[2];
	struct worker w = { 0 };
	struct loop l;
	struct vm_map m;
	int go[2];

	VM_REQUIRE_MODULE();
	become(52101);
	attach_and_map(_metadata, &m);
	ASSERT_EQ(0, start_workers(&w, 1, go));
	types[0] = ACTRACK_TYPE_THREAD;
	types[1] = ACTRACK_TYPE_USER_DATA;
	refs[0] = find_ref(&m, w.tid, types[0]);
	refs[1] = find_ref(&m, w.tid, types[1]);
	ASSERT_NE(0, refs[0]);
	ASSERT_NE(0, refs[1]);
	/* The data block is listed in the tracker for the kernel. */
	EXPECT_EQ(refs[1], ACTRACK_THREAD_DATA_REFS(
		(struct actrack_thread *)actrack_arena_get(&m.a, refs[0],
			ACTRACK_TYPE_THREAD, ACTRACK_THREAD_DATA_END(1)))[0]);

	stats(&before);
	loop_make(&l, &m);
	close(go[1]);
	EXPECT_TRUE(wait_freed(&m, refs, types, 2));
	loop_undo(&l);
	stats_after_freeing(&before, 2, &after);
	TH_LOG("records freed %llu -> %llu, corruption %llu -> %llu",
	       (unsigned long long)before.records_freed,
	       (unsigned long long)after.records_freed,
	       (unsigned long long)before.corruption,
	       (unsigned long long)after.corruption);
	EXPECT_EQ(before.records_freed + 2, after.records_freed);
	EXPECT_EQ(before.corruption, after.corruption);
	/* The process and its main thread go on, untouched. */
	EXPECT_NE(0, find_ref(&m, gettid(), ACTRACK_TYPE_THREAD));
	EXPECT_NE(0, find_ref(&m, gettid(), ACTRACK_TYPE_USER_DATA));
	EXPECT_NE(0, find_ref(&m, 0, ACTRACK_TYPE_PROCESS));
	close(go[0]);
	vm_map_close(&m);
}

TEST_F_TIMEOUT(uid, many_threads_at_once_without_walk, 180)
{
	static struct worker w[MANY];
	static uint32_t refs[2 * MANY], types[2 * MANY];
	struct actrack_kstats before, after;
	struct loop l;
	struct vm_map m;
	int go[2], i;

	VM_REQUIRE_MODULE();
	become(52102);
	attach_and_map(_metadata, &m);
	ASSERT_EQ(0, start_workers(w, MANY, go));
	for (i = 0; i < MANY; i++) {
		types[2 * i] = ACTRACK_TYPE_THREAD;
		types[2 * i + 1] = ACTRACK_TYPE_USER_DATA;
		refs[2 * i] = find_ref(&m, w[i].tid, ACTRACK_TYPE_THREAD);
		refs[2 * i + 1] = find_ref(&m, w[i].tid,
					   ACTRACK_TYPE_USER_DATA);
		ASSERT_NE(0, refs[2 * i]);
		ASSERT_NE(0, refs[2 * i + 1]);
	}
	stats(&before);
	loop_make(&l, &m);
	close(go[1]);	/* all of them at once */
	EXPECT_TRUE(wait_freed(&m, refs, types, 2 * MANY));
	loop_undo(&l);
	stats_after_freeing(&before, 2 * MANY, &after);
	EXPECT_EQ(before.records_freed + 2 * MANY, after.records_freed);
	EXPECT_EQ(before.corruption, after.corruption);
	EXPECT_NE(0, find_ref(&m, gettid(), ACTRACK_TYPE_THREAD));
	close(go[0]);
	vm_map_close(&m);
}

/*
 * A sentinel: a plain registered worker that exits after the ones under
 * test.  Its records gone means the kernel has handled the earlier exits
 * (one process's thread exits are handled in order, in one entry).
 */
static bool sentinel_done(struct __test_metadata *_metadata,
			  struct vm_map *m)
{
	struct worker s = { 0 };
	uint32_t refs[1], types[1] = { ACTRACK_TYPE_THREAD };
	int go[2];
	bool done;

	if (start_workers(&s, 1, go))
		return false;
	refs[0] = find_ref(m, s.tid, ACTRACK_TYPE_THREAD);
	if (!refs[0])
		return false;
	close(go[1]);
	done = wait_freed(m, refs, types, 1);
	close(go[0]);
	return done;
}

/* An fd of our own arena, as the library's (LAYOUT gives it the arena). */
static int open_registering_fd(void)
{
	struct actrack_layout lay;
	int fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd >= 0 && ioctl(fd, ACTRACK_IOC_LAYOUT, &lay)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Wait until thread @tid is gone (its /proc entry, after its exit probe). */
static bool thread_gone(pid_t tid)
{
	char path[64];
	uint64_t t0 = actrack_test_mono_ns();

	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	while (!access(path, F_OK)) {
		if (actrack_test_mono_ns() - t0 > FREE_WAIT_NS)
			return false;
		usleep(1000);
	}
	return true;
}

TEST_F_TIMEOUT(uid, lying_registration_frees_nothing_of_others, 120)
{
	struct actrack_kstats before, after;
	uint32_t main_tracker, main_data, process, own[2];
	struct worker liar = { 0 }, lister = { 0 };
	uint32_t types[2] = { ACTRACK_TYPE_THREAD, ACTRACK_TYPE_USER_DATA };
	struct vm_map m;
	int fd, go[2], go2[2];

	VM_REQUIRE_MODULE();
	become(52104);
	attach_and_map(_metadata, &m);
	fd = open_registering_fd();
	ASSERT_LE(0, fd);
	main_tracker = find_ref(&m, gettid(), ACTRACK_TYPE_THREAD);
	main_data = find_ref(&m, gettid(), ACTRACK_TYPE_USER_DATA);
	process = find_ref(&m, 0, ACTRACK_TYPE_PROCESS);
	ASSERT_NE(0, main_tracker);
	ASSERT_NE(0, main_data);
	ASSERT_NE(0, process);

	/* One registers the main thread's tracker as its own. */
	liar.reg_fd = fd;
	liar.lie_tracker = main_tracker;
	/* One lists the main thread's data and the process record. */
	lister.lie_data[1] = main_data;
	lister.lie_data[2] = process;
	ASSERT_EQ(0, start_workers(&liar, 1, go));
	ASSERT_EQ(0, start_workers(&lister, 1, go2));
	own[0] = find_ref(&m, lister.tid, ACTRACK_TYPE_THREAD);
	own[1] = find_ref(&m, lister.tid, ACTRACK_TYPE_USER_DATA);
	ASSERT_NE(0, own[0]);
	ASSERT_NE(0, own[1]);
	stats(&before);
	close(go[1]);
	close(go2[1]);
	ASSERT_TRUE(thread_gone(liar.tid));
	ASSERT_TRUE(thread_gone(lister.tid));
	/* The lister's own tracker goes, and its own data block, listed in
	 * slot 0, with it (checked before the sentinel may reuse them)... */
	EXPECT_TRUE(wait_freed(&m, own, types, 2));
	ASSERT_TRUE(sentinel_done(_metadata, &m));
	stats_after_freeing(&before, 4, &after);
	/* ... and nothing it named besides. */
	EXPECT_EQ(main_tracker, find_ref(&m, gettid(), ACTRACK_TYPE_THREAD));
	EXPECT_EQ(main_data, find_ref(&m, gettid(), ACTRACK_TYPE_USER_DATA));
	EXPECT_EQ(process, find_ref(&m, 0, ACTRACK_TYPE_PROCESS));
	/* The liar's own records stay until the process ends. */
	EXPECT_NE(0, find_ref(&m, liar.tid, ACTRACK_TYPE_THREAD));
	/* lister: 2, sentinel: 2. */
	EXPECT_EQ(before.records_freed + 4, after.records_freed);
	EXPECT_EQ(before.corruption, after.corruption);
	close(go[0]);
	close(go2[0]);
	close(fd);
	vm_map_close(&m);
}

TEST_F_TIMEOUT(uid, unregistered_thread_waits_for_process_end, 120)
{
	struct worker w = { 0 };
	struct vm_map m;
	int fd, go[2];

	VM_REQUIRE_MODULE();
	become(52103);
	attach_and_map(_metadata, &m);
	fd = open_registering_fd();
	ASSERT_LE(0, fd);
	w.reg_fd = fd;
	w.unregister = true;
	ASSERT_EQ(0, start_workers(&w, 1, go));
	close(go[1]);
	ASSERT_TRUE(thread_gone(w.tid));
	ASSERT_TRUE(sentinel_done(_metadata, &m));
	/* Nothing told the kernel where they are: they wait for our end. */
	EXPECT_NE(0, find_ref(&m, w.tid, ACTRACK_TYPE_THREAD));
	EXPECT_NE(0, find_ref(&m, w.tid, ACTRACK_TYPE_USER_DATA));
	close(go[0]);
	close(fd);
	vm_map_close(&m);
}

/*
 * A client that never registers (a library older than ABI 1.3, or none):
 * its thread's records are found by the walk, as before.
 */
struct raw_client {
	struct vm_map m;
	struct actrack_attach at;
	uint32_t ref;
	pid_t tid;
};

static void *raw_thread(void *arg)
{
	struct raw_client *c = arg;
	struct actrack_owner o = {
		.pid = c->at.pid, .tid = (uint32_t)gettid(),
		.pid_ns = c->at.pid_ns, .start_ticks = c->at.start_ticks,
	};
	struct actrack_thread *t;
	void *payload;

	c->ref = actrack_arena_alloc_owned(&c->m.a, ACTRACK_TYPE_THREAD,
					   sizeof(*t), &o, &payload);
	if (c->ref) {
		t = payload;
		at_store_release(&t->owner.data_id,
				 actrack_arena_new_data_id(&c->m.a));
	}
	__atomic_store_n(&c->tid, gettid(), __ATOMIC_RELEASE);
	syscall(SYS_exit, 0);
	return NULL;
}

TEST_F_TIMEOUT(uid, unregistering_client_is_walked, 120)
{
	static struct raw_client c;
	uint32_t types[1] = { ACTRACK_TYPE_THREAD };
	pthread_t th;
	pid_t tid;

	VM_REQUIRE_MODULE();
	become(52105);
	ASSERT_EQ(0, vm_map_open(&c.m, -1, true));
	ASSERT_EQ(0, ioctl(c.m.fd, ACTRACK_IOC_ATTACH, &c.at));
	ASSERT_EQ(0, pthread_create(&th, NULL, raw_thread, &c));
	pthread_detach(th);
	while (!(tid = __atomic_load_n(&c.tid, __ATOMIC_ACQUIRE)))
		usleep(100);
	ASSERT_TRUE(thread_gone(tid));
	ASSERT_NE(0, c.ref);
	EXPECT_TRUE(wait_freed(&c.m, &c.ref, types, 1));
	vm_map_close(&c.m);
}

/* ---------------------------------------------------------------------- */
/* A sweep that overlaps a group exit                                      */
/* ---------------------------------------------------------------------- */

#define SWEEP_UID	52106
#define SWEEP_LIVE	4
#define SWEEP_CHURN	24	/* more than a batch holds: a sweep */
#define SWEEP_BALLAST	24
#define SWEEP_TRIALS	20
#define SWEEP_MAX_TRIES	60

struct sweep_msg {
	char role;		/* 'l'ive, 'h'older, 'c'hurn, 's'entinel, 'm'ain */
	pid_t tid;
};

static int sweep_ready = -1, sweep_go = -1;

static void sweep_say(char role)
{
	struct sweep_msg msg = { .role = role, .tid = gettid() };

	if (write(sweep_ready, &msg, sizeof(msg)) != sizeof(msg))
		_exit(70);
}

/* A victim thread: named, one activity, then waits (or exits raw). */
static void *sweep_thread(void *arg)
{
	long role = (long)arg;
	char c, name[16];

	snprintf(name, sizeof(name), "%s", role == 'l' ? "live" :
		 role == 'h' ? "holder" : role == 'c' ? "churn" : "sentinel");
	if (actrack_thread_init(name))
		_exit(71);
	actrack_push_task(THREAD_TASK);
	sweep_say((char)role);
	if (role == 'l' || role == 'h')
		for (;;)
			pause();
	while (read(sweep_go, &c, 1) < 0 && errno == EINTR)
		;
	syscall(SYS_exit, 0);
	return NULL;
}

static void sweep_init(int ready, int go)
{
	struct actrack_opts o = { .sz = sizeof(o) };

	become(SWEEP_UID);
	sweep_ready = ready;
	sweep_go = go;
	if (actrack_init(&o) || actrack_backend() != ACTRACK_BACKEND_MODULE)
		_exit(72);
	actrack_push_task(MAIN_TASK);
}

static void sweep_spawn(long role, int n)
{
	pthread_t th;

	for (int i = 0; i < n; i++) {
		if (pthread_create(&th, NULL, sweep_thread, (void *)role))
			_exit(73);
		pthread_detach(th);
	}
}

/* The victim: live threads, a holder, churn threads that exit on EOF. */
static void sweep_victim(int ready, int go)
{
	sweep_init(ready, go);
	sweep_spawn('l', SWEEP_LIVE);
	sweep_spawn('h', 1);
	sweep_spawn('c', SWEEP_CHURN);
	sweep_say('m');
	for (;;)
		pause();
}

/*
 * Another process of the uid, on command bytes: 's' start a sentinel
 * thread (it says its tid), 'x' make it exit, 'l' make the arena's list
 * loop on its first block (every walk then takes the most steps there
 * are), 'u' undo that.  Every command but 's' is answered on @ready.
 */
static void sweep_helper(int ready, int cmd)
{
	int sp[2] = { -1, -1 };
	struct vm_map m;
	struct loop l;
	char c;

	sweep_init(ready, -1);
	if (vm_map_open(&m, -1, true))
		_exit(74);
	sweep_say('r');
	while (read(cmd, &c, 1) == 1) {
		if (c == 's') {
			if (sp[0] >= 0)
				close(sp[0]);
			if (pipe2(sp, O_CLOEXEC))
				_exit(75);
			sweep_go = sp[0];
			sweep_spawn('s', 1);
			continue;
		}
		if (c == 'x')
			close(sp[1]);
		if (c == 'l')
			loop_make(&l, &m);
		if (c == 'u')
			loop_undo(&l);
		sweep_say(c);
	}
	_exit(0);
}

/* Processes of the uid that attach and wait to be killed. */
static void sweep_ballast(int ready)
{
	struct actrack_attach at = { 0 };
	int fd;

	become(SWEEP_UID);
	fd = open(ACTRACK_DEVICE_PATH, O_RDWR);
	if (fd < 0 || ioctl(fd, ACTRACK_IOC_ATTACH, &at))
		_exit(75);
	if (write(ready, "b", 1) != 1)
		_exit(76);
	for (;;)
		pause();
}

static int sweep_read(int fd, struct sweep_msg *msg)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 60000) != 1)
		return -ETIMEDOUT;
	return read(fd, msg, sizeof(*msg)) == sizeof(*msg) ? 0 : -EIO;
}

static bool task_gone(pid_t pid, pid_t tid)
{
	char path[64];
	uint64_t t0 = actrack_test_mono_ns();

	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
	while (!access(path, F_OK)) {
		if (actrack_test_mono_ns() - t0 > FREE_WAIT_NS)
			return false;
		usleep(1000);
	}
	return true;
}

/* Wait until (@pid, @tid) owns no tracker in @m. */
static bool tracker_freed(struct vm_map *m, pid_t pid, pid_t tid)
{
	uint64_t t0 = actrack_test_mono_ns();

	while (vm_count_owned(m, pid, ~0ULL, tid, ACTRACK_TYPE_THREAD)) {
		if (actrack_test_mono_ns() - t0 > FREE_WAIT_NS)
			return false;
		usleep(1000);
	}
	return true;
}

struct sweep_victim {
	pid_t pid, holder;
	pid_t live[SWEEP_LIVE], churn[SWEEP_CHURN];
	int go;			/* EOF: the churn threads exit */
};

static int sweep_victim_start(struct sweep_victim *v, int ready, int ready_w)
{
	struct sweep_msg msg;
	int go[2], nl = 0, nc = 0, n;

	memset(v, 0, sizeof(*v));
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	v->pid = fork();
	if (v->pid < 0)
		return -errno;
	if (!v->pid) {
		close(go[1]);
		sweep_victim(ready_w, go[0]);
	}
	close(go[0]);
	v->go = go[1];
	for (n = 0; n < SWEEP_LIVE + 1 + SWEEP_CHURN + 1; n++) {
		if (sweep_read(ready, &msg))
			return -ETIMEDOUT;
		if (msg.role == 'l')
			v->live[nl++] = msg.tid;
		else if (msg.role == 'h')
			v->holder = msg.tid;
		else if (msg.role == 'c')
			v->churn[nc++] = msg.tid;
	}
	return nl == SWEEP_LIVE && nc == SWEEP_CHURN && v->holder ? 0 : -EIO;
}

/*
 * One trial.  Return: 1 if the sweep ran while the group was exiting
 * (it could not have run before: a death queued ahead of it was still
 * not cleaned up when the kill had taken the live threads), 0 if it may
 * have run before, -1 on a failed assertion.
 */
#define SWEEP_FAIL()							\
	do {								\
		TH_LOG("trial %d failed at line %d: errno %d", trial,	\
		       __LINE__, errno);				\
		return -1;						\
	} while (0)

static int sweep_trial(struct __test_metadata *_metadata, struct vm_watch *w,
		       struct vm_map *m, pid_t helper, int cmd, int ready,
		       int ready_w, int trial)
{
	static pid_t ballast[SWEEP_BALLAST];
	const struct actrack_death *d;
	struct sweep_victim v;
	struct sweep_msg msg;
	int i, st, live = 0, holder = 0, main_thread = 0, overlapped;
	struct actrack_kstats st0, st1;
	pid_t sentinel;

	if (sweep_victim_start(&v, ready, ready_w))
		SWEEP_FAIL();
	/* A sentinel thread in the helper, made before the list loops. */
	if (write(cmd, "s", 1) != 1 || sweep_read(ready, &msg) ||
	    msg.role != 's')
		SWEEP_FAIL();
	sentinel = msg.tid;
	for (i = 0; i < SWEEP_BALLAST; i++) {
		ballast[i] = fork();
		if (!ballast[i])
			sweep_ballast(ready_w);
	}
	if (vm_read_n(ready, SWEEP_BALLAST, 60000))
		SWEEP_FAIL();
	if (ptrace(PTRACE_SEIZE, v.holder, 0, PTRACE_O_TRACEEXIT))
		SWEEP_FAIL();
	/* Every walk of the uid's arena now takes the most steps. */
	if (write(cmd, "l", 1) != 1 || sweep_read(ready, &msg) ||
	    msg.role != 'l')
		SWEEP_FAIL();
	/* A backlog of walks ahead of the sweep ... */
	stats(&st0);
	for (i = 0; i < SWEEP_BALLAST; i++)
		kill(ballast[i], SIGKILL);
	/* ... which the churn threads' exits queue behind it, ... */
	close(v.go);
	for (i = 0; i < SWEEP_CHURN; i++)
		if (!task_gone(v.pid, v.churn[i]))
			SWEEP_FAIL();
	/* ... then the kill: the holder stops in its exit (traced), the
	 * other threads are gone or exiting. */
	kill(v.pid, SIGKILL);
	if (waitpid(v.holder, &st, __WALL) != v.holder ||
	    !WIFSTOPPED(st) || st >> 8 != (SIGTRAP | (PTRACE_EVENT_EXIT << 8)))
		SWEEP_FAIL();
	for (i = 0; i < SWEEP_LIVE; i++)
		if (!task_gone(v.pid, v.live[i]))
			SWEEP_FAIL();
	/* A ballast death still queued: the sweep, behind it, runs now. */
	stats(&st1);
	overlapped = st1.cleanups - st0.cleanups < SWEEP_BALLAST;
	/* The sentinel exits after the churn: its tracker freed, the
	 * victim's sweep has run (one arena's batches run in order). */
	if (write(cmd, "x", 1) != 1 || sweep_read(ready, &msg) ||
	    msg.role != 'x' || !tracker_freed(m, helper, sentinel))
		SWEEP_FAIL();
	if (write(cmd, "u", 1) != 1 || sweep_read(ready, &msg) ||
	    msg.role != 'u')
		SWEEP_FAIL();
	/* Let the group die. */
	if (ptrace(PTRACE_DETACH, v.holder, 0, 0))
		SWEEP_FAIL();
	waitpid(v.pid, &st, 0);
	for (i = 0; i < SWEEP_BALLAST; i++)
		waitpid(ballast[i], NULL, 0);
	d = vm_wait_death(w->m, w->ds, (uint32_t)v.pid, 60000);
	if (!d)
		SWEEP_FAIL();
	for (i = 0; i < (int)d->process.nr_threads; i++) {
		const char *name = d->process.threads[i].name;

		live += !strcmp(name, "live");
		holder += !strcmp(name, "holder");
		main_thread += d->process.threads[i].tid == (uint32_t)v.pid;
	}
	TH_LOG("trial %d: %s; report: %u threads, %d of %d live, holder %d, "
	       "main %d", trial, overlapped ? "overlapped" : "sweep first",
	       d->process.nr_threads, live, SWEEP_LIVE, holder, main_thread);
	EXPECT_EQ(SWEEP_LIVE, live);
	EXPECT_EQ(1, holder);
	EXPECT_EQ(1, main_thread);
	return live == SWEEP_LIVE && holder == 1 && main_thread == 1 ?
	       overlapped : -1;
}

TEST_F_TIMEOUT(uid, sweep_overlapping_group_exit_keeps_live_threads, 280)
{
	int ready[2], cmd[2], overlapped = 0, tries, r, failed = 0;
	int trials = actrack_test_scaled(SWEEP_TRIALS, 4);
	struct vm_watch w = { 0 };
	struct sweep_msg msg;
	struct vm_map m;
	pid_t helper;

	VM_REQUIRE_MODULE();
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe2(cmd, O_CLOEXEC));
	ASSERT_EQ(0, vm_watch_open(&w));
	helper = fork();
	ASSERT_LE(0, helper);
	if (!helper) {
		close(cmd[1]);
		sweep_helper(ready[1], cmd[0]);
	}
	close(cmd[0]);
	ASSERT_EQ(0, sweep_read(ready[0], &msg));
	ASSERT_EQ('r', msg.role);
	ASSERT_EQ(0, vm_map_open(&m, SWEEP_UID, false));
	for (tries = 0; overlapped < trials && tries < SWEEP_MAX_TRIES;
	     tries++) {
		r = sweep_trial(_metadata, &w, &m, helper, cmd[1], ready[0],
				ready[1], tries);
		if (r < 0) {
			failed++;
			break;
		}
		overlapped += r;
	}
	TH_LOG("%d trials, %d overlapped, %d failed", tries, overlapped,
	       failed);
	EXPECT_EQ(0, failed);
	EXPECT_EQ(trials, overlapped);
	close(cmd[1]);
	kill(helper, SIGKILL);
	waitpid(helper, NULL, 0);
	vm_map_close(&m);
	vm_watch_close(&w);
}

TEST_HARNESS_MAIN
