// SPDX-License-Identifier: MIT
/*
 * Attaching a process to its arena: map it, register with the kernel (which
 * then reports our death and frees our records), and write our PROCESS
 * record.  fork() is handled here: a child keeps the inherited shared
 * mapping but must never write into its parent's records, so it forgets
 * them and attaches as itself on its next use.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "internal.h"

struct actrack_proc __actrack_proc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

__thread unsigned int __actrack_nesting;

void __actrack_lock(void)
{
	__actrack_fork_arm();	/* before our lock is ever held */
	__actrack_nesting++;
	pthread_mutex_lock(&__actrack_proc.lock);
}

void __actrack_unlock(void)
{
	pthread_mutex_unlock(&__actrack_proc.lock);
	__actrack_nesting--;
}

/*
 * fork() (lib/fork.c has the rules): if our lock is busy, the child cannot
 * trust what its holder was writing and maps the arena afresh.
 */
static __thread bool fork_locked;
static int image_prev;

static __actrack_fork_path void atfork_prepare(void)
{
	fork_locked = pthread_mutex_trylock(&__actrack_proc.lock) == 0;
}

static __actrack_fork_path void atfork_parent(void)
{
	if (fork_locked)
		pthread_mutex_unlock(&__actrack_proc.lock);
}

static __actrack_fork_path void atfork_child(void)
{
	struct actrack_proc *p = &__actrack_proc;

	p->lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	if (!fork_locked)
		p->mapped = false;	/* the inherited mapping stays unused */
	/* Keep the mapping (shared with the parent, same arena); drop the
	 * identity: the next push or actrack_init() attaches as the child,
	 * which gets one try of its own. */
	p->attached = false;
	p->attach_err = 0;
	p->retry_ns = 0;
	p->backoff_ns = 0;
	p->pid = 0;
	p->pid_ns = 0;
	p->start_ticks = 0;
	p->process_ref = 0;
	image_prev = 0;		/* IMAGE_NONE: the child has another pid */
}
ACTRACK_FORK_HOOK(attach_fork, .prepare = atfork_prepare,
		  .parent = atfork_parent, .child = atfork_child)

ACTRACK_API int actrack_read_start_ticks(pid_t pid, uint64_t *ticks)
{
	char path[64], buf[1024], *p;
	unsigned long long v;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return -ESRCH;
	memcpy(path, "/proc/", 6);
	memcpy(__actrack_dec_put(path + 6, (unsigned int)pid), "/stat", 6);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	/* comm may hold spaces and ')': fields restart after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EBADMSG;
	p++;
	/* After ") " come fields 3..; start_ticks is field 22. */
	for (int field = 2; field < 21; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EBADMSG;
	}
	if (!__actrack_dec_parse(p + 1, &v))
		return -EBADMSG;
	*ticks = v;
	return 0;
}

uint32_t __actrack_pid_ns_of(const char *who)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/pid", who);
	if (stat(path, &st))
		return 0;
	return (uint32_t)st.st_ino;
}

/*
 * A file arena that an allocation found full: nobody frees a dead
 * process's records there but its readers and writers, so free those of
 * every provably dead owner (the rule of `actrack collect`) and say
 * whether that made room worth a second try.  At most once a second per
 * process: an arena full of live processes stays full.
 */
static bool reclaim_dead(struct actrack_arena *a)
{
	struct actrack_proc *p = &__actrack_proc;
	struct actrack_arena_header *h = a->base;
	struct actrack_collect_stats st;
	uint64_t now = __actrack_coarse_ns();
	uint64_t last = __atomic_load_n(&p->full_collect_ns, __ATOMIC_RELAXED);

	if (p->map.backend != ACTRACK_BACKEND_FILE ||
	    (last && now - last < ACTRACK__FULL_COLLECT_NS) ||
	    !__atomic_compare_exchange_n(&p->full_collect_ns, &last, now,
					 false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return false;
	if (__actrack_collect_dead(a, &st) || !st.records_freed)
		return false;
	__atomic_fetch_add(&h->reclaimed_records, st.records_freed,
			   __ATOMIC_RELAXED);
	return true;
}

uint32_t __actrack_alloc_owned(struct actrack_arena *a, uint32_t type,
			       uint32_t size, uint32_t tid, void **payload)
{
	struct actrack_proc *p = &__actrack_proc;
	struct actrack_arena_header *h = a->base;
	struct actrack_owner o = {
		.pid = p->pid,
		.tid = tid,
		.pid_ns = p->pid_ns,
		.start_ticks = p->start_ticks,
	};
	uint32_t ref, flags;

	ref = actrack_arena_alloc_owned(a, type, size, &o, payload);
	if (ref || !a->writable)
		return ref;
	flags = __atomic_load_n(&h->flags, __ATOMIC_RELAXED);
	if (!(flags & ACTRACK_ARENA_FULL) || (flags & ACTRACK_ARENA_CORRUPT))
		return 0;
	if (reclaim_dead(a))
		ref = actrack_arena_alloc_owned(a, type, size, &o, payload);
	/* Said in `actrack stats` and `actrack ps`: never lost silently. */
	if (!ref)
		__atomic_fetch_add(&h->lost_records, 1, __ATOMIC_RELAXED);
	return ref;
}

uint32_t __actrack_publish_owner(struct actrack_owner *o, uint32_t tid)
{
	struct actrack_proc *p = &__actrack_proc;
	uint32_t id = actrack_arena_new_data_id(__actrack_arena());

	/* Atomic (plain moves on x86): a collector or snapshot in another
	 * thread may read a recycled block's owner while it is rewritten. */
	at_store(&o->pid, p->pid);
	at_store(&o->tid, tid);
	at_store(&o->pid_ns, p->pid_ns);
	at_store(&o->start_ticks, p->start_ticks);
	/* Readers treat data_id != 0 as "owner fields and contents valid". */
	at_store_release(&o->data_id, id);
	return id;
}

struct actrack_process *__actrack_process_record(void)
{
	struct actrack_proc *p = &__actrack_proc;

	if (!p->process_ref)
		return NULL;
	return actrack_arena_get(__actrack_arena(), p->process_ref,
				 ACTRACK_TYPE_PROCESS,
				 sizeof(struct actrack_process));
}

/*
 * The arguments exec() gave this image, joined NUL-separated as
 * /proc/self/cmdline holds them and cut where its read into the record
 * would be: copied at once, since the attach that uses them may come
 * much later (at the first push), after the program has permuted argv
 * (getopt) or written its title over it.  Taken by the first attach only.
 */
static char argv_bytes[sizeof(((struct actrack_process *)0)->cmdline)];
static uint32_t argv_len;
static bool argv_set;

void __actrack_set_argv(char **argv)
{
	size_t len = 0, room = sizeof(argv_bytes);

	for (; *argv && len < room; argv++) {
		size_t n = strlen(*argv) + 1;

		if (n > room - len)
			n = room - len;
		memcpy(argv_bytes + len, *argv, n);
		len += n;
	}
	argv_len = (uint32_t)len;
	argv_set = true;
}

static void read_cmdline(struct actrack_process *rec)
{
	ssize_t n;
	int fd;

	if (argv_set) {
		memcpy(rec->cmdline, argv_bytes, argv_len);
		rec->cmdline_size = argv_len;
		argv_set = false;	/* a later attach sees what it is now */
		return;
	}
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, rec->cmdline, sizeof(rec->cmdline));
	close(fd);
	if (n > 0)
		rec->cmdline_size = (__u32)n;
}

static int create_process_record(void)
{
	struct actrack_proc *p = &__actrack_proc;
	struct actrack_process *rec;
	uint32_t ref;
	void *blk;

	ref = __actrack_alloc_owned(__actrack_arena(), ACTRACK_TYPE_PROCESS,
				    sizeof(*rec), 0, &blk);
	if (!ref)
		return -ENOSPC;
	rec = blk;
	rec->phase = ACTRACK_PHASE_LAUNCHED;
	rec->parent_pid = (__u32)getppid();
	rec->launch_time_ns = __actrack_mono_ns();
	read_cmdline(rec);
	__actrack_publish_owner(&rec->owner, 0);
	p->process_ref = ref;
	return 0;
}

/*
 * The exec-chain mark.  exec() keeps the pid and its start time, so
 * records with our identity that we did not write are an earlier image's
 * (a wrapper script that exec()ed us), which no module frees in a file
 * arena: ours replace them, at the cost of a walk of the arena, so only
 * when the image before us says it may have attached.  It says so in
 * ACTRACK_ENV_IMAGE:
 *   "PID"        `actrack run`, not tracked itself, exec()s PID's first
 *                tracked image: attach at once, nothing to replace;
 *   "PID ?"      an image of PID that had not attached when this
 *                environment was copied (a shell copies it at its start,
 *                so it may have attached since);
 *   "PID START"  an image of PID that attached.
 * Another pid is another process's mark (we are a child): nothing of ours.
 */
enum image_prev { IMAGE_NONE, IMAGE_RUN, IMAGE_TRACKED };

/*
 * The mark, in a buffer that lives as long as the process: putenv() of
 * it replaces the variable the environment already has without
 * allocating (setenv() would be the first malloc() of many a small
 * program), and later attaches (a push in any thread, a forked child)
 * rewrite it in place, where setenv() would not be thread-safe.
 */
static char image_var[sizeof(ACTRACK_ENV_IMAGE) + 48];
static bool image_var_put;		/* the environment holds image_var */
/* From __actrack_image_begin(), for the first attach; -1: ask getenv(). */
static int image_prev = -1;

/* @v about pid @pid, whose start time is @start (0: not known yet). */
static enum image_prev image_parse(const char *v, uint32_t pid,
				   uint64_t start)
{
	unsigned long long n;

	if (!v)
		return IMAGE_NONE;
	v = __actrack_dec_parse(v, &n);
	if (!v || n != pid)
		return IMAGE_NONE;
	if (!*v)
		return IMAGE_RUN;
	if (*v != ' ')
		return IMAGE_NONE;
	if (!strcmp(v + 1, "?") || !start)
		return IMAGE_TRACKED;
	v = __actrack_dec_parse(v + 1, &n);
	return v && !*v && n == start ? IMAGE_TRACKED : IMAGE_NONE;
}

/* Our mark: "PID START" once attached, else "PID ?". */
static void image_write(uint32_t pid, uint64_t start)
{
	char *p = image_var;

	memcpy(p, ACTRACK_ENV_IMAGE "=", sizeof(ACTRACK_ENV_IMAGE));
	p = __actrack_dec_put(p + sizeof(ACTRACK_ENV_IMAGE), pid);
	*p++ = ' ';
	if (start)
		p = __actrack_dec_put(p, start);
	else
		*p++ = '?';
	*p = 0;
}

/*
 * The environment's entry of the mark, found by hand: a program may define
 * getenv() and putenv() itself (bash does, and its putenv() does nothing
 * before its main() ran), and the entry replaced in the array is what
 * such a program imports from main()'s envp.
 */
static char **image_slot(void)
{
	size_t len = strlen(ACTRACK_ENV_IMAGE);

	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, ACTRACK_ENV_IMAGE, len) && (*e)[len] == '=')
			return e;
	return NULL;
}

/*
 * The mark's pid, asked of the kernel directly where we know how: getpid()
 * is a page of the C library of its own, which most images a tracked
 * shell starts (true, sed) never touch otherwise (a fault each).
 */
static pid_t mark_pid(void)
{
#if defined(__x86_64__) && !defined(__ILP32__)
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"(39L /* __NR_getpid */)
			 : "rcx", "r11", "memory");
	return (pid_t)ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = 172;	/* __NR_getpid */
	register long x0 __asm__("x0");

	__asm__ volatile("svc 0" : "=r"(x0) : "r"(x8) : "memory");
	return (pid_t)x0;
#else
	return getpid();
#endif
}

bool __actrack_image_begin(void)
{
	uint32_t pid = (uint32_t)mark_pid();
	char **slot = image_slot();
	int prev = image_parse(slot ? *slot + strlen(ACTRACK_ENV_IMAGE) + 1 :
			       NULL, pid, 0);

	image_prev = prev;
	image_write(pid, 0);
	if (slot) {
		*slot = image_var;
		image_var_put = true;
	} else if (!putenv(image_var)) {
		image_var_put = true;
	}
	return prev != IMAGE_NONE;
}

/* Did an image of this very process, before an exec(), attach?  Asked
 * by the first attach only. */
static bool image_was_tracked(void)
{
	struct actrack_proc *p = &__actrack_proc;
	int prev = image_prev;

	image_prev = IMAGE_NONE;
	if (prev < 0)
		prev = image_parse(getenv(ACTRACK_ENV_IMAGE), p->pid,
				   p->start_ticks);
	return prev == IMAGE_TRACKED;
}

/*
 * Tell the next image that we attached.  In place if the environment
 * already holds our mark (any thread may attach); the first time only
 * for the caller that asked (ACTRACK_INIT_MARK_IMAGE: single-threaded).
 */
static void mark_image(bool asked)
{
	struct actrack_proc *p = &__actrack_proc;

	if (!image_var_put && !asked)
		return;
	image_write(p->pid, p->start_ticks);
	if (!image_var_put && !putenv(image_var))
		image_var_put = true;
}

/* Register with the kernel (module) or compute our identity (file). */
static int register_identity(void)
{
	struct actrack_proc *p = &__actrack_proc;
	int ret;

	if (p->map.backend == ACTRACK_BACKEND_MODULE) {
		struct actrack_attach at = { 0 };

		if (ioctl(p->map.fd, ACTRACK_IOC_ATTACH, &at) < 0)
			return -errno;
		p->pid = at.pid;
		p->pid_ns = at.pid_ns;
		p->start_ticks = at.start_ticks;
		return 0;
	}
	p->pid = (uint32_t)getpid();
	p->pid_ns = __actrack_pid_ns_of("self");
	ret = actrack_read_start_ticks((pid_t)p->pid, &p->start_ticks);
	return ret;
}

static int attach_locked(const struct actrack_opts *opts)
{
	struct actrack_proc *p = &__actrack_proc;
	uint32_t size = opts ? opts->file_size : 0;
	int ret;

	p->attach_attempts++;
	if (!p->mapped) {
		ret = __actrack_map_default(opts ? opts->arena_path : NULL,
					    true, opts &&
					    (opts->flags & ACTRACK_INIT_NO_MODULE),
					    size, &p->map);
		if (ret)
			return ret;
		p->mapped = true;
		p->slots = ACTRACK_DEFAULT_SLOTS;
		if (opts && opts->stack_slots)
			p->slots = opts->stack_slots;
		p->flags = opts ? opts->flags & ~ACTRACK_INIT_MARK_IMAGE : 0;
	}
	ret = register_identity();
	if (ret)
		return ret;
	/*
	 * exec() keeps the pid and its start time: records with our identity
	 * are the previous image's (a wrapper script that exec()ed us), which
	 * no module freed for a file arena.  Ours replace them.  That costs a
	 * walk of the arena, so only when the previous image said it was
	 * tracked (ACTRACK_INIT_MARK_IMAGE).
	 */
	if (p->map.backend == ACTRACK_BACKEND_FILE && image_was_tracked()) {
		struct actrack_owner_key self = {
			.pid = p->pid, .pid_ns = p->pid_ns,
			.start_ticks = p->start_ticks,
		};

		actrack_arena_free_owned_by(__actrack_arena(), &self, NULL,
					    NULL);
	}
	ret = create_process_record();
	if (ret)
		return ret;
	__atomic_store_n(&p->attached, true, __ATOMIC_RELEASE);
	mark_image(opts && (opts->flags & ACTRACK_INIT_MARK_IMAGE));
	return 0;
}

/*
 * End an attach begun with __actrack_nesting raised and the lock taken:
 * note how it ended, unlock, and record the modules of a process that has
 * just attached (outside the lock: dl_iterate_phdr() takes the loader's
 * lock, and a dlopen() constructor may push; still nested, so such a push
 * returns instead of attaching again).
 */
static void note_attach(int ret);

static int attach_end(int ret, bool tried)
{
	struct actrack_proc *p = &__actrack_proc;
	bool modules = tried && !ret && !(p->flags & ACTRACK_INIT_NO_MODULES);

	if (tried)
		note_attach(ret);
	pthread_mutex_unlock(&p->lock);
	if (modules)
		actrack_record_modules();
	__actrack_nesting--;
	return ret;
}

/* Remember how an attach ended (under the lock). */
static void note_attach(int ret)
{
	struct actrack_proc *p = &__actrack_proc;
	uint64_t backoff = 0, retry = 0;

	if (ret) {
		backoff = p->backoff_ns ? 2 * p->backoff_ns :
					  ACTRACK__RETRY_MIN_NS;
		if (backoff > ACTRACK__RETRY_MAX_NS)
			backoff = ACTRACK__RETRY_MAX_NS;
		retry = __actrack_coarse_ns() + backoff;
	}
	p->backoff_ns = backoff;
	if (!ret)	/* threads waiting out a failure may try at once */
		__atomic_fetch_add(&p->attach_gen, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&p->attach_err, ret, __ATOMIC_RELAXED);
	__atomic_store_n(&p->retry_ns, retry, __ATOMIC_RELAXED);
}

/* A remembered failure that still holds, or 0. */
static int remembered_failure(void)
{
	struct actrack_proc *p = &__actrack_proc;
	int err = __atomic_load_n(&p->attach_err, __ATOMIC_RELAXED);

	if (err && __actrack_coarse_ns() <
		   __atomic_load_n(&p->retry_ns, __ATOMIC_RELAXED))
		return err;
	return 0;
}

/*
 * May this thread be running a signal handler?  A process's first push
 * attaches it (opens and maps the arena, reads /proc, allocates, walks
 * the loaded objects under the loader's lock), none of it
 * async-signal-safe: from a handler that interrupted malloc() or dlopen()
 * that could deadlock the host, and `actrack run` makes the first push
 * of most processes lazy.  A handler runs with its signal blocked
 * (unless SA_NODEFER), so a blocked signal that has a handler says that
 * we may be in one.  A thread that merely keeps such signals blocked (a
 * worker that leaves them to the main thread) is taken for one too: it
 * does not attach the process, but a push of any other thread does.
 * Both calls are async-signal-safe; with nothing blocked (most threads)
 * this is one system call.
 */
bool __actrack_maybe_in_signal_handler(void)
{
	struct sigaction sa;
	sigset_t blocked;

	if (pthread_sigmask(SIG_BLOCK, NULL, &blocked))
		return true;
	for (int sig = 1; sig < NSIG; sig++) {
		if (sigismember(&blocked, sig) != 1 ||
		    sigaction(sig, NULL, &sa))
			continue;
		if ((sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL &&
						    sa.sa_handler != SIG_IGN))
			return true;
	}
	return false;
}

/*
 * An implicit attach: after a remembered failure, only now and then.
 * From a push (@nonblock), an image's first attach (nothing mapped yet)
 * never runs in what may be a signal handler: -EINTR, and this thread
 * tries again a second later (actrack__thread_slow()) unless another
 * thread attached meanwhile.  A child forked by an attached process keeps
 * the mapping and re-attaches wherever it pushes first, a handler
 * included, as it always did (run_preload's
 * fork_from_handler_inside_bookkeeping_is_tracked).
 */
static int attach_implicit(bool nonblock)
{
	struct actrack_proc *p = &__actrack_proc;
	int ret;

	if (__atomic_load_n(&p->attached, __ATOMIC_ACQUIRE))
		return 0;
	if (__actrack_nesting)
		return -EDEADLK;
	if (nonblock && !p->mapped && __actrack_maybe_in_signal_handler())
		return -EINTR;
	ret = remembered_failure();
	if (ret)
		return ret;
	__actrack_fork_arm();	/* before the state a child must reset */
	__actrack_nesting++;
	if (nonblock) {
		if (pthread_mutex_trylock(&p->lock)) {
			__actrack_nesting--;
			return -EAGAIN;
		}
	} else {
		pthread_mutex_lock(&p->lock);
	}
	if (p->attached)
		return attach_end(0, false);
	/* Someone may have failed while we waited for the lock. */
	ret = remembered_failure();
	if (ret)
		return attach_end(ret, false);
	return attach_end(attach_locked(NULL), true);
}

/*
 * Size-prefixed options (libbpf style): a caller built against an older,
 * smaller struct passes its own sz and gets zeros for the fields it does
 * not know; a newer, larger one is accepted if every byte we do not know
 * is zero.  The smallest struct ever was the one ending at arena_path.
 */
#define OPTS_MIN_SIZE	(offsetof(struct actrack_opts, arena_path) + \
			 sizeof(const char *))

static int copy_opts(struct actrack_opts *dst, const struct actrack_opts *src)
{
	const unsigned char *tail = (const unsigned char *)src + sizeof(*dst);

	if (src->sz < OPTS_MIN_SIZE)
		return -EINVAL;
	memset(dst, 0, sizeof(*dst));
	memcpy(dst, src, src->sz < sizeof(*dst) ? src->sz : sizeof(*dst));
	for (size_t i = sizeof(*dst); i < src->sz; i++)
		if (tail[i - sizeof(*dst)])
			return -E2BIG;
	dst->sz = sizeof(*dst);
	return 0;
}

/* @user (NULL: defaults) copied into @copy and checked: *@opts is @copy,
 * or NULL.  Return: 0, -EINVAL, -E2BIG. */
static int check_opts(const struct actrack_opts *user,
		      struct actrack_opts *copy,
		      const struct actrack_opts **opts)
{
	int ret;

	*opts = NULL;
	if (!user)
		return 0;
	ret = copy_opts(copy, user);
	if (ret)
		return ret;
	if (copy->stack_slots > ACTRACK_THREAD_MAX_SLOTS)
		return -EINVAL;
	if (copy->flags & ~(ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES |
			    ACTRACK_INIT_MARK_IMAGE))
		return -EINVAL;
	*opts = copy;
	return 0;
}

ACTRACK_API int actrack_init(const struct actrack_opts *user_opts)
{
	struct actrack_proc *p = &__actrack_proc;
	const struct actrack_opts *opts;
	struct actrack_opts copy;
	int ret;

	ret = check_opts(user_opts, &copy, &opts);
	if (ret)
		return ret;
	if (__actrack_nesting)
		return -EDEADLK;
	__actrack_fork_arm();
	__actrack_nesting++;
	pthread_mutex_lock(&p->lock);
	if (p->attached) {
		/* Explicit options that disagree with the current attach. */
		if (opts && ((opts->arena_path &&
			      (p->map.backend != ACTRACK_BACKEND_FILE ||
			       strcmp(opts->arena_path, p->map.path))) ||
			     (opts->stack_slots &&
			      opts->stack_slots != p->slots)))
			ret = -EEXIST;
		return attach_end(ret, false);
	}
	/* Explicit: tried now, whatever failed before. */
	return attach_end(attach_locked(opts), true);
}

ACTRACK_API int actrack_arena_path(const struct actrack_opts *user_opts,
				   char *buf, size_t len)
{
	char def[ACTRACK__DEFAULT_PATH_LEN];
	const struct actrack_opts *opts;
	struct actrack_opts copy;
	enum actrack_backend backend;
	const char *path;
	int ret;

	if (!buf)
		return -EINVAL;
	ret = check_opts(user_opts, &copy, &opts);
	if (ret)
		return ret;
	/* actrack_init() fails on an empty path: so does naming it. */
	if (opts && opts->arena_path && !*opts->arena_path)
		return -EINVAL;
	backend = __actrack_select_arena(opts ? opts->arena_path : NULL,
					 opts &&
					 (opts->flags & ACTRACK_INIT_NO_MODULE),
					 def, &path);
	if (strlen(path) >= len)
		return -ENAMETOOLONG;
	memcpy(buf, path, strlen(path) + 1);
	return (int)backend;
}

ACTRACK_API int actrack_reattach(void)
{
	struct actrack_proc *p = &__actrack_proc;
	struct actrack_opts o = { .sz = sizeof(o) };
	uint32_t others;
	int ret;

	if (__actrack_nesting)
		return -EDEADLK;
	__actrack_lock();
	/* Another thread's tracker would point into the unmapped arena. */
	others = __atomic_load_n(&p->trackers, __ATOMIC_RELAXED) -
		 (actrack__tls.tracker ? 1 : 0);
	if (others) {
		ret = -EBUSY;
		goto out;
	}
	if (p->attached) {
		__actrack_tracker_leave();
		/* Our records in the arena we leave: its owner cleans up. */
		actrack_arena_free_owner(__actrack_arena(), p->pid,
					 p->start_ticks, 0);
	}
	__atomic_store_n(&p->attached, false, __ATOMIC_RELEASE);
	if (p->mapped)
		__actrack_unmap(&p->map);
	p->mapped = false;
	p->process_ref = 0;
	__actrack_user_data_forget();
	/* Same shape of trackers; the arena is wherever it is now. */
	o.stack_slots = p->slots;
	o.flags = p->flags;
	return attach_end(attach_locked(&o), true);
out:
	return attach_end(ret, false);
}

int __actrack_ensure_attached(void)
{
	return attach_implicit(false);
}

int __actrack_attach_for_push(void)
{
	return attach_implicit(true);
}

ACTRACK_API enum actrack_backend actrack_backend(void)
{
	struct actrack_proc *p = &__actrack_proc;

	return p->mapped ? p->map.backend : ACTRACK_BACKEND_NONE;
}
