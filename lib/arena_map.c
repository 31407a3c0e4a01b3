// SPDX-License-Identifier: MIT
/*
 * Mapping an arena: /dev/actrack (the kernel's arena of our uid, or another
 * uid's for privileged readers) or a file-backed arena for machines without
 * the module.  Whoever maps validates the header against the size it trusts
 * (the kernel's layout, the file's length), never against the header alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "internal.h"

static void map_reset(struct actrack_map *m)
{
	memset(m, 0, sizeof(*m));
	m->fd = -1;
}

void __actrack_unmap(struct actrack_map *m)
{
	if (m->arena.base && m->map_len)
		munmap(m->arena.base, m->map_len);
	if (m->clock_map)
		munmap(m->clock_map, m->clock_len);
	if (m->fd >= 0)
		close(m->fd);
	map_reset(m);
}

/*
 * The one order in which the library picks its arena, for attaching
 * (actrack_init()), reading (actrack_snapshot_take(NULL, 0)), collecting
 * and naming (actrack_arena_path()).  $ACTRACK_ARENA is read with
 * secure_getenv(): whoever runs a setuid or setgid program must not choose
 * the file it writes or reads.
 */
enum actrack_backend __actrack_select_arena(const char *forced, bool no_module,
					    char def[ACTRACK__DEFAULT_PATH_LEN],
					    const char **path)
{
	const char *env = secure_getenv(ACTRACK_ENV_ARENA);

	if (forced) {
		*path = forced;
		return ACTRACK_BACKEND_FILE;
	}
	if (env && *env) {
		*path = env;
		return ACTRACK_BACKEND_FILE;
	}
	if (!no_module && access(ACTRACK_DEVICE_PATH, F_OK) == 0) {
		*path = ACTRACK_DEVICE_PATH;
		return ACTRACK_BACKEND_MODULE;
	}
	memcpy(def, "/dev/shm/actrack-", 17);
	__actrack_dec_put(def + 17, getuid());
	*path = def;
	return ACTRACK_BACKEND_FILE;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int __actrack_parse_boot_id(const char *text, size_t n, uint8_t id[16])
{
	int hi = -1, k = 0;

	memset(id, 0, 16);
	/* Exactly what the kernel prints ("%pU"), then at most a newline:
	 * anything else is not a boot id, and a wrong one would make a
	 * stale arena look like this boot's. */
	if (n == 37 && text[36] == '\n')
		n = 36;
	if (n != 36)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		int v;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (text[i] != '-')
				goto bad;
			continue;
		}
		v = hex_digit(text[i]);
		if (v < 0)
			goto bad;
		if (hi < 0) {
			hi = v;
		} else {
			id[k++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	return 0;
bad:
	memset(id, 0, 16);
	return -EBADMSG;
}

ACTRACK_API int actrack_boot_id(uint8_t id[16])
{
	char text[64];
	ssize_t n;
	int fd, err;

	if (!id)
		return -EINVAL;
	memset(id, 0, 16);
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text));
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return __actrack_parse_boot_id(text, (size_t)n, id);
}

/* What a freshly created file arena records about its clocks and owner. */
static void file_header_template(struct actrack_arena_header *h)
{
	struct timespec boot;
	long hz = sysconf(_SC_CLK_TCK);

	memset(h, 0, sizeof(*h));
	h->uid = (__u32)getuid();
	h->user_hz = hz > 0 ? (__u32)hz : 100;
	h->create_mono_ns = __actrack_mono_ns();
	h->create_real_ns = __actrack_real_ns();
	clock_gettime(CLOCK_BOOTTIME, &boot);
	h->boot_time_ns = h->create_real_ns -
		((uint64_t)boot.tv_sec * 1000000000ULL + (uint64_t)boot.tv_nsec);
	/* Zeros when unknown: readers then take no arena for this boot's. */
	actrack_boot_id(h->boot_id);
}

/*
 * Reserve every block of [0, @size) of @fd now, so that a store into the
 * mapping can never fault for want of space: on a full tmpfs, a page first
 * touched through a shared mapping kills the writer with SIGBUS, and the
 * writer is the program we are a guest in.  ENOSPC and EDQUOT here are a
 * failed attach, which the program survives untracked.
 */
static int reserve_blocks(int fd, off_t size)
{
	int err;

	do
		err = posix_fallocate(fd, 0, size);
	while (err == EINTR);
	return -err;
}

/* An unnamed file in @path's directory (O_TMPFILE), or -errno. */
static int open_unnamed(const char *path)
{
	char dir[300];
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path),
			  path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

/*
 * Create a file arena atomically: build it completely (every block
 * reserved, the header formatted) in a file with no name, then link() it
 * into place.  link() fails with EEXIST if another process won the race,
 * and then we use theirs; nobody ever maps a half-formatted arena, and a
 * creator killed half way leaves nothing behind.  Where the filesystem has
 * no O_TMPFILE, a unique temporary name stands in; it is unlinked on every
 * path we return by.
 */
static int create_file_arena(const char *path, uint32_t size)
{
	struct actrack_arena_header tmpl;
	struct actrack_arena a;
	char tmp[300], proc[64];
	void *p;
	int fd, ret;

	if (size < ACTRACK_ARENA_MIN_SIZE || size > ACTRACK_ARENA_MAX_SIZE ||
	    size % ACTRACK_BLOCK_ALIGN)
		return -EINVAL;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open_unnamed(path);
	if (fd >= 0) {
		tmp[0] = 0;
	} else if (fd == -EOPNOTSUPP || fd == -EISDIR || fd == -EINVAL) {
		/* A unique name: a stale one from a crashed creator with
		 * our pid must not stop us. */
		fd = mkostemp(tmp, O_CLOEXEC);
		if (fd < 0)
			return -errno;
	} else {
		return fd;
	}
	ret = reserve_blocks(fd, size);
	if (ret)
		goto out;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	a = (struct actrack_arena){ .base = p, .size = size, .writable = true };
	file_header_template(&tmpl);
	ret = actrack_arena_format(&a, &tmpl);
	munmap(p, size);
	if (ret)
		goto out;
	if (tmp[0]) {
		ret = link(tmp, path) < 0 && errno != EEXIST ? -errno : 0;
	} else {
		/* linkat(AT_EMPTY_PATH) would need CAP_DAC_READ_SEARCH;
		 * the /proc link of the descriptor needs nothing. */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		ret = linkat(AT_FDCWD, proc, AT_FDCWD, path,
			     AT_SYMLINK_FOLLOW) < 0 && errno != EEXIST ?
		      -errno : 0;
	}
out:
	if (tmp[0])
		unlink(tmp);
	close(fd);
	return ret;
}

int __actrack_map_file(const char *path, bool writable, bool create,
		       uint32_t create_size, struct actrack_map *m)
{
	struct stat st;
	void *p;
	int fd, ret;
	size_t n;

	map_reset(m);
	if (!path || !*path || strlen(path) >= sizeof(m->path))
		return -EINVAL;
	for (int tries = 0;; tries++) {
		/*
		 * The path may come from the environment: a FIFO must not
		 * block us (O_NONBLOCK; it is then refused as not a regular
		 * file) and a terminal must not become ours (O_NOCTTY).
		 */
		fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC |
			  O_NONBLOCK | O_NOCTTY);
		if (fd >= 0 || errno != ENOENT || !create || tries)
			break;
		ret = create_file_arena(path, create_size ?
					create_size : ACTRACK_FILE_DEFAULT_SIZE);
		if (ret)
			return ret;
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto err_close;
	}
	/* Too small to hold a header, or larger than any arena: not one. */
	if (st.st_size < ACTRACK_ARENA_HEADER_SIZE) {
		ret = -EBADMSG;
		goto err_close;
	}
	if (st.st_size > ACTRACK_ARENA_MAX_SIZE) {
		ret = -EFBIG;
		goto err_close;
	}
	/*
	 * A writer needs every block behind its stores (see reserve_blocks()):
	 * an arena made sparse (by an older actrack, or by hand) gets them
	 * now, or is refused.  Only a file with fewer blocks than bytes asks.
	 */
	if (writable && (uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size) {
		ret = reserve_blocks(fd, st.st_size);
		if (ret)
			goto err_close;
	}
	p = mmap(NULL, (size_t)st.st_size,
		 PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto err_close;
	}
	m->fd = fd;
	m->map_len = (size_t)st.st_size;
	m->backend = ACTRACK_BACKEND_FILE;
	m->arena = (struct actrack_arena){
		.base = p, .size = (__u32)st.st_size, .writable = writable,
	};
	n = strnlen(path, sizeof(m->path) - 1);
	memcpy(m->path, path, n);
	m->path[n] = 0;
	ret = actrack_arena_check(&m->arena);
	if (ret) {
		__actrack_unmap(m);
		return ret;
	}
	m->uid = ((struct actrack_arena_header *)p)->uid;
	return 0;

err_close:
	close(fd);
	return ret;
}

int __actrack_map_module(bool writable, long select_uid, uint32_t select_flags,
			 struct actrack_map *m)
{
	struct actrack_version ver;
	struct actrack_layout lay;
	void *p;
	int fd, ret;

	map_reset(m);
	fd = open(ACTRACK_DEVICE_PATH, (writable ? O_RDWR : O_RDONLY) |
		  O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, ACTRACK_IOC_VERSION, &ver) < 0) {
		ret = -errno;
		goto err_close;
	}
	if (ver.major != ACTRACK_ABI_MAJOR) {
		ret = -EPROTONOSUPPORT;
		goto err_close;
	}
	if (select_uid >= 0) {
		struct actrack_select sel = {
			.uid = (__u32)select_uid, .flags = select_flags,
		};

		if (ioctl(fd, ACTRACK_IOC_SELECT, &sel) < 0) {
			ret = -errno;
			goto err_close;
		}
	}
	if (ioctl(fd, ACTRACK_IOC_LAYOUT, &lay) < 0) {
		ret = -errno;
		goto err_close;
	}
	if ((lay.flags & ACTRACK_LAYOUT_READONLY) && writable) {
		ret = -EPERM;
		goto err_close;
	}
	p = mmap(NULL, lay.arena_size, PROT_READ | (writable ? PROT_WRITE : 0),
		 MAP_SHARED, fd, (off_t)lay.arena_offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto err_close;
	}
	m->fd = fd;
	m->map_len = lay.arena_size;
	m->backend = ACTRACK_BACKEND_MODULE;
	m->uid = lay.uid;
	m->arena = (struct actrack_arena){
		.base = p, .size = lay.arena_size, .writable = writable,
	};
	p = mmap(NULL, lay.clock_size, PROT_READ, MAP_SHARED, fd,
		 (off_t)lay.clock_offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		__actrack_unmap(m);
		return ret;
	}
	m->clock_map = p;
	m->clock_len = lay.clock_size;
	/* A word inside the page, aligned; else do without (the vDSO). */
	if (lay.clock_size >= sizeof(uint64_t) &&
	    lay.clock_word <= lay.clock_size - sizeof(uint64_t) &&
	    !(lay.clock_word % sizeof(uint64_t)))
		m->clock = (const volatile uint64_t *)((char *)p +
						       lay.clock_word);
	ret = actrack_arena_check(&m->arena);
	if (ret) {
		__actrack_unmap(m);
		return ret;
	}
	return 0;

err_close:
	close(fd);
	return ret;
}

int __actrack_map_reader(const char *path, uint32_t flags,
			 struct actrack_map *m)
{
	if (flags & ~(ACTRACK_SNAP_ARENA_FILE | ACTRACK_SNAP_PREVIOUS_BOOT))
		return -EINVAL;
	/* Another boot's image: only the module keeps one (persist=). */
	if (flags & ACTRACK_SNAP_PREVIOUS_BOOT) {
		if (path || (flags & ACTRACK_SNAP_ARENA_FILE))
			return -EINVAL;
		return __actrack_map_module(false, (long)geteuid(),
					    ACTRACK_SELECT_PREVIOUS_BOOT, m);
	}
	if (flags & ACTRACK_SNAP_ARENA_FILE) {
		if (!path)
			return -EINVAL;
		return __actrack_map_file(path, false, false, 0, m);
	}
	if (path)
		return -EINVAL;
	return __actrack_map_default(NULL, false, false, 0, m);
}

int __actrack_map_default(const char *forced, bool writable, bool no_module,
			  uint32_t create_size, struct actrack_map *m)
{
	char def[ACTRACK__DEFAULT_PATH_LEN];
	const char *path;

	if (__actrack_select_arena(forced, no_module, def, &path) ==
	    ACTRACK_BACKEND_MODULE)
		return __actrack_map_module(writable, -1, 0, m);
	return __actrack_map_file(path, writable, writable, create_size, m);
}
