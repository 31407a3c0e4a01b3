// SPDX-License-Identifier: MIT
/*
 * Thread trackers: one per thread, allocated in the arena on the thread's
 * first push, released (type changed to free, contents cleared) when the
 * thread exits so that the next thread reuses the block.  The push/pop fast
 * path is inline in actrack.h; this file holds the slow paths.
 *
 * Single writer: only the owner thread stores into its tracker, so the
 * fast path needs no atomic read-modify-write.  Readers in any process use
 * the version-checked copy of arena/arena.c.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "internal.h"

#define ACTIVITY_DATA_CAPACITY	448	/* field bytes per activity */

/* The held set follows the slots, so its size is ABI too. */
_Static_assert(sizeof(struct actrack_held) == 128, "actrack_held");

ACTRACK_API __thread struct actrack__tls actrack__tls
	__attribute__((tls_model("initial-exec")));
ACTRACK_API __thread struct actrack__held_tls actrack__held_tls
	__attribute__((tls_model("initial-exec")));

/*
 * Private per-thread state, off the fast path.  The owner keeps the
 * pointers and data ids of its blocks: it never looks its own blocks up
 * again, and it frees each only while it still holds the id it published
 * (a cleaner that wrongly freed it and a new owner that reused it keep
 * theirs).
 */
struct thread_state {
	uint64_t retry_ns;	/* a push tries to get a tracker again after */
	uint32_t retry_gen;	/* ... unless the process attached since */
	uint32_t skips;		/* pushes dropped while waiting */
	uint32_t tid_slot;	/* tid_table index + 1, or 0 */
	uint32_t ref, id;			/* our tracker block */
	uint32_t data_refs[ACTRACK_THREAD_MAX_SLOTS]; /* per-slot user data */
	uint32_t data_ids[ACTRACK_THREAD_MAX_SLOTS];
	struct actrack_user_data *data[ACTRACK_THREAD_MAX_SLOTS];
};
static __thread struct thread_state tstate;

/*
 * pthread_t -> tid for actrack_pthread_tid(): one entry per thread with a
 * tracker.  Lock-free (a thread claims a free entry by CAS of its tid and
 * clears it at exit), so the push slow path and signal handlers never
 * wait for it; a reader re-checks the tid around its read of the handle.
 *
 * Mapped by the first thread that gets a tracker, not in .bss: there its
 * 64 KiB cost every image the preload is loaded into an anonymous mmap,
 * and every child a tracked shell forks the 16 page faults of clearing
 * it.  A forked child sets its copy aside instead (tracker_child: an
 * munmap() there would be bound by the dynamic linker in every child),
 * and unmaps it when its thread maps a fresh one for its next tracker.
 */
#define TID_ENTRIES	4096
struct tid_entry {
	uint32_t tid;		/* 0: free */
	pthread_t th;
};
#define TID_TABLE_LEN	(TID_ENTRIES * sizeof(struct tid_entry))
static struct tid_entry *tid_table;
static struct tid_entry *tid_table_parent;	/* a forked child's copy */

/* The table, mapped on first use (mmap() is async-signal-safe); NULL if
 * it cannot be: the thread's tid is then not known to
 * actrack_pthread_tid(), and nothing else is lost. */
static struct tid_entry *tid_table_get(void)
{
	struct tid_entry *t = __atomic_load_n(&tid_table, __ATOMIC_ACQUIRE);
	struct tid_entry *none = NULL;

	if (t)
		return t;
	t = __atomic_exchange_n(&tid_table_parent, NULL, __ATOMIC_ACQ_REL);
	if (t)
		munmap(t, TID_TABLE_LEN);
	t = mmap(NULL, TID_TABLE_LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return NULL;
	if (!__atomic_compare_exchange_n(&tid_table, &none, t, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(t, TID_TABLE_LEN);	/* another thread's won */
		t = none;
	}
	return t;
}

static void tid_register(uint32_t tid)
{
	struct tid_entry *t = tid_table_get();

	if (!t)
		return;
	for (uint32_t i = 0; i < TID_ENTRIES; i++) {
		struct tid_entry *e = &t[(tid + i) % TID_ENTRIES];
		uint32_t free_tid = 0;

		if (__atomic_compare_exchange_n(&e->tid, &free_tid, UINT32_MAX,
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			e->th = pthread_self();
			__atomic_store_n(&e->tid, tid, __ATOMIC_RELEASE);
			tstate.tid_slot = (tid + i) % TID_ENTRIES + 1;
			return;
		}
	}
}

static void tid_unregister(void)
{
	/* A slot is only ever set in a table that stays mapped. */
	if (tstate.tid_slot)
		__atomic_store_n(&tid_table[tstate.tid_slot - 1].tid, 0,
				 __ATOMIC_RELEASE);
}

ACTRACK_API pid_t actrack_pthread_tid(pthread_t th)
{
	struct tid_entry *t = __atomic_load_n(&tid_table, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; t && i < TID_ENTRIES; i++) {
		struct tid_entry *e = &t[i];
		uint32_t tid = __atomic_load_n(&e->tid, __ATOMIC_ACQUIRE);
		pthread_t seen;

		if (!tid || tid == UINT32_MAX)
			continue;
		seen = e->th;
		/* The entry may be reused under us: same tid before, after. */
		if (__atomic_load_n(&e->tid, __ATOMIC_ACQUIRE) != tid)
			continue;
		if (pthread_equal(seen, th))
			return (pid_t)tid;
	}
	return -ESRCH;
}

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static uint32_t current_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* Thread exit: give the tracker and its user data back to the arena. */
static void thread_exit(void *unused)
{
	struct actrack_arena *a = __actrack_arena();

	if (actrack__tls.tracker)
		__atomic_fetch_sub(&__actrack_proc.trackers, 1,
				   __ATOMIC_RELAXED);
	tid_unregister();
	actrack__tls.tracker = NULL;
	actrack__held_tls.held = NULL;
	actrack__held_tls.nr = 0;
	for (uint32_t i = 0; i < ACTRACK_THREAD_MAX_SLOTS; i++) {
		if (tstate.data_refs[i])
			actrack_arena_free_owned(a, tstate.data_refs[i],
						 ACTRACK_TYPE_USER_DATA,
						 tstate.data_ids[i]);
	}
	if (tstate.ref)
		actrack_arena_free_owned(a, tstate.ref, ACTRACK_TYPE_THREAD,
					 tstate.id);
	memset(&tstate, 0, sizeof(tstate));
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

void __actrack_tracker_leave(void)
{
	thread_exit(NULL);
	actrack__tls.slot_count = 0;
	actrack__tls.clock = NULL;
}

/* In a forked child: the parent's threads and trackers are not ours. */
static __actrack_fork_path void tracker_child(void)
{
	__actrack_proc.trackers = 0;
	if (tid_table) {		/* the parent's threads */
		tid_table_parent = tid_table;
		tid_table = NULL;
	}
	/* The surviving thread's tracker belongs to the parent. */
	memset(&actrack__tls, 0, sizeof(actrack__tls));
	memset(&actrack__held_tls, 0, sizeof(actrack__held_tls));
	memset(&tstate, 0, sizeof(tstate));
}
ACTRACK_FORK_HOOK(tracker_fork, .child = tracker_child)

static void set_name(struct actrack_thread *t, const char *name)
{
	char buf[sizeof(t->name)] = { 0 };

	if (name)
		strncpy(buf, name, sizeof(buf) - 1);
	else
		prctl(PR_GET_NAME, buf, 0, 0, 0);	/* 16 bytes max */
	memcpy(t->name, buf, sizeof(buf));
}

/*
 * Tell the module where this thread's tracker is, so that if the thread
 * ends without thread_exit() (a raw exit) the kernel frees its records
 * without walking the arena.  A module older than ABI 1.3 says ENOTTY and
 * walks instead; any other failure also leaves it walking, so nothing is
 * lost either way and the push path never sees an error.
 */
static void register_with_kernel(uint32_t ref)
{
	struct actrack_proc *p = &__actrack_proc;
	struct actrack_thread_reg reg = { .tracker = ref };

	if (p->map.backend == ACTRACK_BACKEND_MODULE)
		(void)ioctl(p->map.fd, ACTRACK_IOC_THREAD, &reg);
}

/* Allocate and publish this thread's tracker; the process is attached. */
static int tracker_create(const char *name)
{
	struct actrack_proc *p = &__actrack_proc;
	struct actrack_thread *t;
	uint32_t ref, size, tid = current_tid();
	void *blk;

	pthread_once(&exit_key_once, make_exit_key);
	size = ACTRACK_THREAD_DATA_END(p->slots);
	ref = __actrack_alloc_owned(__actrack_arena(), ACTRACK_TYPE_THREAD,
				    size, tid, &blk);
	if (!ref) {
		__atomic_fetch_add(&p->tracker_failures, 1, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	t = blk;
	set_name(t, name);
	t->start_time_ns = __actrack_mono_ns();
	t->slot_count = p->slots;
	t->flags = ACTRACK_THREAD_HELD | ACTRACK_THREAD_DATA;
	ACTRACK_THREAD_HELD_SET(t)->capacity = ACTRACK_HELD_SLOTS;
	tstate.id = __actrack_publish_owner(&t->owner, tid);
	tid_register(t->owner.tid);
	tstate.ref = ref;
	register_with_kernel(ref);
	actrack__tls.slot_count = p->slots;
	actrack__tls.clock = p->map.clock;
	actrack__held_tls.held = ACTRACK_THREAD_HELD_SET(t);
	actrack__held_tls.nr = 0;
	actrack__tls.tracker = t;
	__atomic_fetch_add(&p->trackers, 1, __ATOMIC_RELAXED);
	pthread_setspecific(exit_key, &tstate);
	return 0;
}

static int tracker_create_nested(const char *name)
{
	int ret;

	/* A signal handler that pushes now must not make a second one. */
	__actrack_nesting++;
	ret = tracker_create(name);
	__actrack_nesting--;
	return ret;
}

ACTRACK_API int actrack_thread_init(const char *name)
{
	int ret;

	if (actrack__tls.tracker) {
		if (name)
			set_name(actrack__tls.tracker, name);
		return 0;
	}
	ret = __actrack_ensure_attached();
	if (ret)
		return ret;
	if (__actrack_nesting)
		return -EDEADLK;
	return tracker_create_nested(name);
}

/*
 * The first push of a thread without a tracker.  Whatever goes wrong, the
 * push is dropped (token 0) and costs little: a failed attach or a failed
 * allocation (a full or corrupt arena) is remembered, and until the retry
 * time this is a counter, and every 64th time a clock read.  Never blocks: inside the
 * library on this thread (a signal handler interrupted it) the push is
 * dropped, and a busy attach lock drops it too (the next push tries
 * again).
 */
ACTRACK_API struct actrack_thread *actrack__thread_slow(void)
{
	uint32_t gen;
	uint64_t now;
	int ret;

	if (__actrack_nesting)
		goto drop;
	/*
	 * Waiting out a failure (unless the process attached since): look
	 * at the clock every 64th push only.
	 */
	gen = __atomic_load_n(&__actrack_proc.attach_gen, __ATOMIC_RELAXED);
	if (tstate.retry_ns && tstate.retry_gen == gen) {
		if (++tstate.skips & 63)
			goto drop;
		now = __actrack_coarse_ns();
		if (now < tstate.retry_ns)
			goto drop;
	}
	now = __actrack_coarse_ns();
	ret = __actrack_attach_for_push();
	if (!ret)
		ret = tracker_create_nested(NULL);
	if (!ret) {
		tstate.retry_ns = 0;
		return actrack__tls.tracker;
	}
	if (ret != -EAGAIN && ret != -EDEADLK) {
		tstate.retry_ns = now + ACTRACK__RETRY_MIN_NS;
		tstate.retry_gen = gen;
	}
drop:
	actrack__tls.dropped++;
	return NULL;
}

ACTRACK_API int actrack_set_thread_name(const char *name)
{
	if (!name)
		return -EINVAL;
	return actrack_thread_init(name);
}

/*
 * Rewriting a live slot: bump the version before and after, so that a
 * reader whose copy overlaps the stores sees two different versions, and
 * one that starts while they are under way sees an odd version (pops add
 * 2) and does not take the copy: comparing versions alone would accept a
 * copy made entirely inside the change (new object, old info) whenever it
 * starts after the first bump and ends before the second, e.g. while the
 * writer is preempted there or is killed there.
 */
static void slot_change_begin(struct actrack_thread *t)
{
	uint32_t v = __atomic_load_n(&t->version, __ATOMIC_RELAXED);

	__atomic_store_n(&t->version, v + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void slot_change_end(struct actrack_thread *t)
{
	uint32_t v = __atomic_load_n(&t->version, __ATOMIC_RELAXED);

	__atomic_store_n(&t->version, v + 1, __ATOMIC_RELEASE);
}

static struct actrack_activity *live_slot(uint32_t token)
{
	struct actrack_thread *t = actrack__tls.tracker;

	if (!t || token == 0 || token > actrack__tls.slot_count ||
	    __atomic_load_n(&t->depth, __ATOMIC_RELAXED) < token)
		return NULL;
	return &ACTRACK_THREAD_SLOTS(t)[token - 1];
}

ACTRACK_API void actrack_change(uint32_t token, uint64_t object, uint64_t info)
{
	struct actrack_activity *s = live_slot(token);

	if (!s)
		return;
	slot_change_begin(actrack__tls.tracker);
	s->object = object;
	s->info = info;
	slot_change_end(actrack__tls.tracker);
}

ACTRACK_API uint32_t actrack_depth(void)
{
	struct actrack_thread *t = actrack__tls.tracker;

	return t ? __atomic_load_n(&t->depth, __ATOMIC_RELAXED) : 0;
}

ACTRACK_API struct actrack_user_data *actrack_activity_data(uint32_t token)
{
	struct actrack_activity *s = live_slot(token);
	struct actrack_user_data *ud;
	uint32_t *ref, i;

	if (!s)
		return NULL;
	i = token - 1;
	ref = &tstate.data_refs[i];
	if (!*ref) {
		*ref = __actrack_user_data_new(current_tid(),
					       ACTIVITY_DATA_CAPACITY,
					       &tstate.data[i],
					       &tstate.data_ids[i]);
		if (!*ref)
			return NULL;
		/* Listed for the kernel, which frees it if we cannot. */
		__atomic_store_n(&ACTRACK_THREAD_DATA_REFS(actrack__tls.tracker)[i],
				 *ref, __ATOMIC_RELAXED);
	}
	ud = tstate.data[i];
	/* A push clears user_data: a new activity gets an emptied block. */
	if (s->user_data != *ref) {
		__actrack_user_data_reset(ud);
		slot_change_begin(actrack__tls.tracker);
		s->user_data = *ref;
		slot_change_end(actrack__tls.tracker);
	}
	return ud;
}

/*
 * The held set of tracker @ref, whose version-checked header copy is @hdr,
 * into @t.  The set is read word by word outside the version check (see
 * struct actrack_held); it is kept only if the tracker still belongs to
 * the thread of @hdr afterwards.  Geometry comes from the copy and is
 * bounded by the block: a lying tracker gets no set, never a read outside
 * its block.
 */
void __actrack_read_held(struct actrack_arena *a, uint32_t ref,
			 const struct actrack_thread *hdr,
			 struct actrack_snap_thread *t)
{
	const struct actrack_held *h;
	struct actrack_thread *th;
	uint32_t off, cap, n = 0;

	t->nr_held = 0;
	t->held_overflow = 0;
	if (!(hdr->flags & ACTRACK_THREAD_HELD) ||
	    hdr->slot_count > ACTRACK_THREAD_MAX_SLOTS)
		return;
	off = sizeof(*th) + hdr->slot_count * sizeof(struct actrack_activity);
	th = actrack_arena_get(a, ref, ACTRACK_TYPE_THREAD,
			       off + sizeof(*h));
	if (!th)
		return;
	h = (const struct actrack_held *)((const char *)th + off);
	cap = at_load(&h->capacity);
	if (cap > ACTRACK_HELD_SLOTS)
		cap = ACTRACK_HELD_SLOTS;
	for (uint32_t i = 0; i < cap; i++) {
		uint64_t v = at_load(&h->locks[i]);

		if (v)
			t->held[n++] = v;
	}
	t->held_overflow = at_load(&h->overflow);
	at_fence_acquire();
	if (at_load(&th->owner.data_id) != hdr->owner.data_id) {
		t->held_overflow = 0;
		return;
	}
	t->nr_held = n;
}
