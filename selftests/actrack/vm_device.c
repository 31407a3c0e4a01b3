// SPDX-License-Identifier: MIT
/*
 * /dev/actrack: version, layout, attach, mmap of the arena and of the
 * retired clock page, and the exact errno of every bad argument.  Raw
 * ioctls on purpose: the library would never send most of these.  And the
 * one clock question left with the library: a push's timestamp right
 * after an idle period.
 */
#include "vm_util.h"

FIXTURE(dev) {
	int fd;
	struct actrack_layout lay;
};

FIXTURE_SETUP(dev)
{
	self->fd = -1;
	VM_REQUIRE_MODULE();
	self->fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_GE(self->fd, 0) TH_LOG("open: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(self->fd, ACTRACK_IOC_LAYOUT, &self->lay));
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(dev, version_and_layout)
{
	struct actrack_version v;
	struct actrack_layout *l = &self->lay;
	int i;

	VM_SETUP_SKIPPED();

	memset(&v, 0xff, sizeof(v));
	ASSERT_EQ(0, ioctl(self->fd, ACTRACK_IOC_VERSION, &v));
	EXPECT_EQ(ACTRACK_ABI_MAJOR, v.major);
	EXPECT_EQ(ACTRACK_ABI_MINOR, v.minor);
	EXPECT_EQ(0, v.reserved);

	TH_LOG("layout: arena %u bytes at %#llx, clock %u bytes at %#llx "
	       "(word at %u), uid %u, flags %#x", l->arena_size,
	       (unsigned long long)l->arena_offset, l->clock_size,
	       (unsigned long long)l->clock_offset, l->clock_word, l->uid,
	       l->flags);
	EXPECT_GE(l->arena_size, ACTRACK_ARENA_MIN_SIZE);
	EXPECT_LE(l->arena_size, ACTRACK_ARENA_MAX_SIZE);
	EXPECT_EQ(0, l->arena_size % getpagesize());
	EXPECT_EQ(ACTRACK_MMAP_ARENA, l->arena_offset);
	EXPECT_EQ(ACTRACK_MMAP_CLOCK, l->clock_offset);
	/* ABI 1.8: the page is still there, the word is not. */
	EXPECT_EQ((uint32_t)getpagesize(), l->clock_size);
	EXPECT_EQ(ACTRACK_CLOCK_WORD_NONE, l->clock_word);
	EXPECT_EQ(geteuid(), l->uid);
	EXPECT_EQ(0, l->flags);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, l->reserved[i]);

	/* Pointers the kernel cannot write to. */
	EXPECT_EQ(-1, ioctl(self->fd, ACTRACK_IOC_VERSION, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, ACTRACK_IOC_LAYOUT, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(dev, attach)
{
	struct actrack_attach at = { 0 }, again = { 0 };
	uint64_t ticks;

	VM_SETUP_SKIPPED();

	ASSERT_EQ(0, ioctl(self->fd, ACTRACK_IOC_ATTACH, &at));
	EXPECT_EQ(getpid(), at.pid);
	ASSERT_EQ(0, vm_start_ticks(getpid(), &ticks));
	EXPECT_EQ(ticks, at.start_ticks);
	/* The pid namespace the pid is in, as stat() shows it. */
	{
		struct stat st;

		ASSERT_EQ(0, stat("/proc/self/ns/pid", &st));
		EXPECT_EQ((uint32_t)st.st_ino, at.pid_ns);
	}
	EXPECT_EQ(0, at.reserved0);
	EXPECT_EQ(0, at.reserved1);
	/* Idempotent for the same process. */
	ASSERT_EQ(0, ioctl(self->fd, ACTRACK_IOC_ATTACH, &again));
	EXPECT_EQ(at.pid, again.pid);
	EXPECT_EQ(at.start_ticks, again.start_ticks);
	EXPECT_EQ(at.pid_ns, again.pid_ns);
}

TEST_F(dev, bad_ioctls)
{
	struct actrack_attach at;
	struct actrack_select sel;
	uint64_t junk[8] = { 0 };

	VM_SETUP_SKIPPED();

	/* Unknown commands, ours or not. */
	EXPECT_EQ(-1, ioctl(self->fd, _IO(ACTRACK_IOC_MAGIC, 0x7f)));
	EXPECT_EQ(ENOTTY, errno);
	/* VERSION's number with another size */
	EXPECT_EQ(-1, ioctl(self->fd, _IOR(ACTRACK_IOC_MAGIC, 0, __u32), junk));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR('x', 2, struct actrack_attach),
			    junk));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, TCGETS, junk));
	EXPECT_EQ(ENOTTY, errno);

	/* Reserved and flag fields must be zero. */
	memset(&at, 0, sizeof(at));
	at.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACTRACK_IOC_ATTACH, &at));
	EXPECT_EQ(EINVAL, errno);
	memset(&at, 0, sizeof(at));
	at.reserved0 = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACTRACK_IOC_ATTACH, &at));
	EXPECT_EQ(EINVAL, errno);
	memset(&at, 0, sizeof(at));
	at.reserved1 = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACTRACK_IOC_ATTACH, &at));
	EXPECT_EQ(EINVAL, errno);
	memset(&sel, 0, sizeof(sel));
	sel.uid = geteuid();
	sel.flags = ~ACTRACK_SELECT_PREVIOUS_BOOT;	/* unknown flags */
	EXPECT_EQ(-1, ioctl(self->fd, ACTRACK_IOC_SELECT, &sel));
	EXPECT_EQ(EINVAL, errno);
	sel.flags = 0;
	sel.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, ACTRACK_IOC_SELECT, &sel));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, ACTRACK_IOC_ATTACH, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(dev, mmap_arena)
{
	size_t size = self->lay.arena_size;
	struct actrack_arena_header *h;
	struct actrack_arena a;
	void *p;

	VM_SETUP_SKIPPED();

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 (off_t)self->lay.arena_offset);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
	h = p;
	EXPECT_EQ(ACTRACK_ARENA_MAGIC, h->magic);
	EXPECT_EQ(ACTRACK_ABI_MAJOR, h->abi_major);
	EXPECT_EQ(ACTRACK_ARENA_HEADER_SIZE, h->header_size);
	EXPECT_EQ(size, h->size);
	EXPECT_EQ(geteuid(), h->uid);
	EXPECT_TRUE(h->flags & ACTRACK_ARENA_KERNEL);
	EXPECT_NE(0, h->user_hz);
	a = (struct actrack_arena){ .base = p, .size = (uint32_t)size };
	EXPECT_EQ(0, actrack_arena_check(&a));
	TH_LOG("arena: %u bytes used, %u free", actrack_arena_used(&a),
	       actrack_arena_free_bytes(&a));
	munmap(p, size);
}

TEST_F(dev, mmap_bad)
{
	size_t size = self->lay.arena_size;
	long page = getpagesize();
	void *p;

	VM_SETUP_SKIPPED();

	/* Private: a copy-on-write arena would silently fork the data. */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);

	/* Bigger than the arena, or running past its end. */
	p = mmap(NULL, size + page, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)(size - page));
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, self->fd, (off_t)size);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* Between the arena and the clock, and beyond the clock. */
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)(ACTRACK_MMAP_CLOCK - page));
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)(ACTRACK_MMAP_CLOCK + page));
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* The clock is one page. */
	p = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)self->lay.clock_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
}

/*
 * The retired clock page (kmod/clock.c): it still maps, read-only and for
 * good, so that libraries that map it before they look at the word keep
 * attaching, and it holds nothing.
 */
TEST_F(dev, clock_page)
{
	struct actrack_attach at = { 0 };
	const unsigned char *b;
	size_t nonzero = 0;
	void *p;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, ioctl(self->fd, ACTRACK_IOC_ATTACH, &at));

	p = mmap(NULL, self->lay.clock_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED, self->fd, (off_t)self->lay.clock_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);

	p = mmap(NULL, self->lay.clock_size, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)self->lay.clock_offset);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap clock: %s", strerror(errno));
	/* Read-only for good: no upgrade. */
	EXPECT_EQ(-1, mprotect(p, self->lay.clock_size,
			       PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	/* Attached for 200 ms: a kept clock word would have moved. */
	usleep(200000);
	b = p;
	for (size_t i = 0; i < self->lay.clock_size; i++)
		nonzero += b[i] != 0;
	EXPECT_EQ(0, nonzero);
	munmap(p, self->lay.clock_size);
}

#define IDLE_SLEEP_NS	2000000000LL
#define FRESH_TASK	0x5eedULL

static int64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The time of this thread's innermost activity in its uid's arena. */
static int64_t own_top_time(void)
{
	const struct actrack_snap_process *sp = NULL;
	struct actrack_snapshot *s;
	int64_t t = -1;

	if (actrack_snapshot_take(NULL, ACTRACK_SNAP_NO_CMDLINES, &s))
		return -1;
	for (uint32_t i = 0; i < s->nr_processes; i++)
		if (s->processes[i].pid == (uint32_t)getpid())
			sp = &s->processes[i];
	for (uint32_t i = 0; sp && i < sp->nr_threads; i++) {
		const struct actrack_snap_thread *th = &sp->threads[i];

		if (th->tid == (uint32_t)gettid() && th->nr_activities &&
		    th->activities[th->nr_activities - 1].a.object ==
		    FRESH_TASK)
			t = (int64_t)th->activities[th->nr_activities - 1]
				.a.time_ns;
	}
	actrack_snapshot_free(s);
	return t;
}

/*
 * A child pinned to @cpu sleeps IDLE_SLEEP_NS on an otherwise idle
 * machine and pushes at once; it sends the coarse time before the sleep,
 * the push's timestamp as the arena holds it, and the coarse time after.
 */
static void stamp_after_idle(int cpu, int out)
{
	struct timespec sleep_ts = { IDLE_SLEEP_NS / 1000000000LL, 0 };
	int64_t v[3];
	cpu_set_t one;
	uint32_t tok;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		_exit(2);
	tok = actrack_push_task(0);	/* attach first: the sleep is idle */
	if (actrack_backend() != ACTRACK_BACKEND_MODULE)
		_exit(3);
	actrack_pop(tok);
	usleep(10000);
	v[0] = coarse_ns();
	if (nanosleep(&sleep_ts, NULL))
		_exit(4);
	tok = actrack_push_task(FRESH_TASK);
	v[2] = coarse_ns();
	v[1] = own_top_time();
	actrack_pop(tok);
	_exit(write(out, v, sizeof(v)) == sizeof(v) ? 0 : 5);
}

/*
 * The timestamps of pushes made right after a CPU leaves a long idle
 * period are as fresh as the coarse clock, on every CPU: nothing the
 * module keeps can be stale by the idle time (a hang would age by it).
 * Slack: ten ticks of the coarse clock, so a loaded VM cannot fail it;
 * a stale stamp is off by the whole 2 s sleep.
 */
TEST_F(dev, pushes_are_stamped_fresh_after_idle)
{
	struct timespec res;
	int64_t slack;
	cpu_set_t cpus;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, clock_getres(CLOCK_MONOTONIC_COARSE, &res));
	slack = 10 * (res.tv_sec * 1000000000LL + res.tv_nsec);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(cpus), &cpus));
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		int64_t v[3];
		int pipefd[2], status;
		pid_t pid;

		if (!CPU_ISSET(cpu, &cpus))
			continue;
		ASSERT_EQ(0, pipe(pipefd));
		pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			close(pipefd[0]);
			stamp_after_idle(cpu, pipefd[1]);
		}
		close(pipefd[1]);
		ASSERT_EQ(sizeof(v), read(pipefd[0], v, sizeof(v)));
		close(pipefd[0]);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, status);
		TH_LOG("cpu %d: push stamped %lld ns after the sleep's start "
		       "(sleep %lld ns), %lld ns before the coarse clock read "
		       "after it", cpu, (long long)(v[1] - v[0]),
		       IDLE_SLEEP_NS, (long long)(v[2] - v[1]));
		EXPECT_GE(v[1], v[0] + IDLE_SLEEP_NS - slack);
		EXPECT_LE(v[1], v[2]);
	}
}

TEST_F(dev, read_only_fd)
{
	struct actrack_layout lay;
	struct actrack_attach at = { 0 };
	size_t size = self->lay.arena_size;
	int fd = open(ACTRACK_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
	void *p;

	VM_SETUP_SKIPPED();

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ioctl(fd, ACTRACK_IOC_LAYOUT, &lay));
	EXPECT_TRUE(lay.flags & ACTRACK_LAYOUT_READONLY);
	/* The VFS refuses a shared writable map of a read-only fd. */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, size, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(p, size);
	/* A reader cannot register a process. */
	EXPECT_EQ(-1, ioctl(fd, ACTRACK_IOC_ATTACH, &at));
	EXPECT_EQ(EPERM, errno);
	close(fd);
}

TEST_F(dev, select)
{
	struct actrack_select sel = { 0 };
	int fd, status;
	pid_t pid;
	void *p;

	VM_SETUP_SKIPPED();

	/* A uid that never had an arena. */
	sel.uid = 54321;
	EXPECT_EQ(-1, ioctl(self->fd, ACTRACK_IOC_SELECT, &sel));
	EXPECT_EQ(ENOENT, errno);
	/* An invalid uid. */
	sel.uid = (uint32_t)-1;
	EXPECT_EQ(-1, ioctl(self->fd, ACTRACK_IOC_SELECT, &sel));
	EXPECT_EQ(EINVAL, errno);

	/* After mmap the fd's arena is fixed. */
	fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	p = mmap(NULL, self->lay.arena_size, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	sel.uid = geteuid();
	EXPECT_EQ(-1, ioctl(fd, ACTRACK_IOC_SELECT, &sel));
	EXPECT_EQ(EBUSY, errno);
	munmap(p, self->lay.arena_size);
	close(fd);

	/* Without CAP_SYS_PTRACE/CAP_SYS_ADMIN: another uid's arena is off
	 * limits, its existence included (checked before the lookup). */
	if (geteuid() != 0)
		SKIP(return, "needs root to drop to another uid");
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct actrack_select s = { .uid = 0 };
		int f;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		f = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (f < 0)
			_exit(11);
		if (ioctl(f, ACTRACK_IOC_SELECT, &s) != -1 || errno != EPERM)
			_exit(12);
		s.uid = 54321;
		if (ioctl(f, ACTRACK_IOC_SELECT, &s) != -1 || errno != EPERM)
			_exit(13);
		/* Its own uid needs no privilege. */
		s.uid = 65534;
		if (ioctl(f, ACTRACK_IOC_SELECT, &s) == -1 && errno != ENOENT)
			_exit(14);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
