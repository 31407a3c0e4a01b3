// SPDX-License-Identifier: MIT
/*
 * /dev/actrack: version, layout, attach, mmap of the arena and of the clock
 * page, and the exact errno of every bad argument.  Raw ioctls on purpose:
 * the library would never send most of these.
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
	EXPECT_GE(l->clock_size, sizeof(uint64_t));
	EXPECT_LE(l->clock_word + sizeof(uint64_t), l->clock_size);
	EXPECT_EQ(0, l->clock_word % sizeof(uint64_t));
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

TEST_F(dev, clock_page)
{
	struct actrack_attach at = { 0 };
	const volatile uint64_t *word;
	uint64_t c0, c1, now;
	void *p;

	VM_SETUP_SKIPPED();

	/* The clock runs while processes are attached. */
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

	word = (const volatile uint64_t *)((char *)p + self->lay.clock_word);
	usleep(20000);
	c0 = *word;
	now = vm_mono_ns();
	usleep(200000);
	c1 = *word;
	TH_LOG("clock word %llu ns, CLOCK_MONOTONIC %llu ns (clock behind by "
	       "%lld us); advanced %llu us in 200 ms",
	       (unsigned long long)c0, (unsigned long long)now,
	       (long long)(now - c0) / 1000,
	       (unsigned long long)(c1 - c0) / 1000);
	EXPECT_NE(0, c0);
	EXPECT_GT(c1, c0);
	/* Coarse but close: never ahead, at most a few ticks behind. */
	EXPECT_LE(c0, now);
	EXPECT_LT(now - c0, 500000000ULL);
	EXPECT_GE(c1 - c0, 100000000ULL);
	munmap(p, self->lay.clock_size);
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
