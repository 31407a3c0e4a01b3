// SPDX-License-Identifier: MIT
/*
 * Saving an arena: a file that is itself a valid file arena, so that
 * `actrack --arena FILE dump` reads it later, on another machine, after
 * the processes (or the machine) are gone.
 *
 * The live arena keeps changing while we read it.  One memcpy gives an
 * image that is mostly a single moment, but a record being written at that
 * moment may be half old, half new.  User data and log entries carry their
 * own seqcounts, so a reader of the image sees an odd count and skips them;
 * a thread tracker does not (its version moves only on pops), so a stack
 * caught mid-push would look consistent in the image.  Each tracker of the
 * image is therefore replaced by a version-checked copy from the live arena
 * (and each user data block caught mid-write by a seq-checked one): every
 * record of the image is one that a snapshot could have returned.  The
 * image is then parsed by the snapshot reader before it is written, and
 * written under a temporary name and renamed, so FILE is either the old
 * file or a complete image.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <sys/stat.h>
#include "internal.h"

#define SAVE_COPY_TRIES	64

_Static_assert(offsetof(struct actrack_arena_header, saved_mono_ns) == 104 &&
	       offsetof(struct actrack_arena_header, saved_real_ns) == 112,
	       "saved times take the first reserved words of the header");

static void refresh_thread(struct actrack_arena *live,
			   struct actrack_arena *img, __u32 ref,
			   struct actrack_thread_copy *tc)
{
	struct actrack_thread *t;
	__u32 payload, room;

	int ret;

	t = actrack_arena_get(img, ref, ACTRACK_TYPE_THREAD, sizeof(*t));
	if (!t || !t->owner.data_id)
		return;
	/* A busy thread may tear many copies in a row: try harder than a
	 * snapshot does, then say so rather than keep the memcpy's mix. */
	for (int i = 0; i < SAVE_COPY_TRIES; i++) {
		ret = actrack_arena_copy_thread(live, ref, tc);
		if (ret != -EAGAIN)
			break;
		sched_yield();
	}
	if (ret == -EAGAIN) {
		t->flags |= ACTRACK_THREAD_IMAGE_TORN;
		return;
	}
	if (ret)
		return;		/* gone since: the image has it as it was */
	if (tc->hdr.owner.data_id != t->owner.data_id)
		return;		/* reused by another thread since */
	payload = actrack_arena_payload_size(img, ref);
	room = (payload - (__u32)sizeof(*t)) / sizeof(struct actrack_activity);
	if (tc->nr_slots > room || tc->nr_slots > ACTRACK_THREAD_MAX_SLOTS)
		return;
	memcpy(t, &tc->hdr, sizeof(*t));
	memcpy(ACTRACK_THREAD_SLOTS(t), tc->slots,
	       tc->nr_slots * sizeof(struct actrack_activity));
}

static void refresh_user_data(struct actrack_arena *live,
			      struct actrack_arena *img, __u32 ref)
{
	struct actrack_user_data *ud;
	__u32 payload;
	void *buf;
	int n;

	ud = actrack_arena_get(img, ref, ACTRACK_TYPE_USER_DATA, sizeof(*ud));
	if (!ud || !ud->owner.data_id || !(ud->seq & 1))
		return;
	payload = actrack_arena_payload_size(img, ref);
	buf = malloc(payload);
	if (!buf)
		return;
	n = actrack_arena_copy_owned(live, ref, ACTRACK_TYPE_USER_DATA, buf,
				     payload);
	if (n == (int)payload &&
	    ((struct actrack_user_data *)buf)->owner.data_id ==
	    ud->owner.data_id)
		memcpy(ud, buf, payload);
	free(buf);
}

/* Walk the image (not the live arena): its list is the one we write. */
static int refresh_image(struct actrack_arena *live, struct actrack_arena *img)
{
	struct actrack_thread_copy *tc;
	struct actrack_arena_iter it;
	__u32 ref, type;

	tc = malloc(sizeof(*tc));
	if (!tc)
		return -ENOMEM;
	actrack_arena_iter_init(&it, img);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type))) {
		if (type == ACTRACK_TYPE_THREAD)
			refresh_thread(live, img, ref, tc);
		else if (type == ACTRACK_TYPE_USER_DATA)
			refresh_user_data(live, img, ref);
	}
	free(tc);
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Most of an arena is zeros (everything past the free pointer, cleared
 * free blocks): leave holes for whole zero pages and set the length at the
 * end, so that a 256 MiB arena does not cost 256 MiB of disk.  The image
 * still reads back byte for byte identical.
 */
#define SAVE_CHUNK	4096

static bool all_zero(const unsigned char *p, size_t len)
{
	return !p[0] && !memcmp(p, p + 1, len - 1);
}

static int write_sparse(int fd, const unsigned char *buf, size_t len)
{
	size_t off = 0;
	int ret;

	while (off < len) {
		size_t n = len - off < SAVE_CHUNK ? len - off : SAVE_CHUNK;
		size_t run = 0;

		if (all_zero(buf + off, n)) {
			off += n;
			continue;
		}
		/* Extend a data run over the following non-zero chunks. */
		while (off + run < len) {
			size_t m = len - off - run < SAVE_CHUNK ?
				   len - off - run : SAVE_CHUNK;

			if (run && all_zero(buf + off + run, m))
				break;
			run += m;
		}
		if (lseek(fd, (off_t)off, SEEK_SET) < 0)
			return -errno;
		ret = write_all(fd, buf + off, run);
		if (ret)
			return ret;
		off += run;
	}
	if (ftruncate(fd, (off_t)len) < 0)
		return -errno;
	return 0;
}

/* Into a fifo, a pipe, a terminal...: no holes, no rename, no fsync. */
static int write_stream(int fd, const void *buf, size_t len)
{
	return write_all(fd, buf, len);
}

/* Same directory as @file, so that the rename is atomic. */
static int write_atomic(const char *file, const void *buf, size_t len)
{
	size_t flen = strlen(file);
	char *tmp;
	int fd, ret;

	tmp = malloc(flen + sizeof(".XXXXXX"));
	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, file, flen);
	memcpy(tmp + flen, ".XXXXXX", sizeof(".XXXXXX"));
	/* mkostemp creates the file 0600: an arena names commands and
	 * holds annotations, it is as private as the uid's arena itself. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out_free;
	}
	ret = write_sparse(fd, buf, len);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, file) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
out_free:
	free(tmp);
	return ret;
}

/*
 * What @file names decides how it is written.  A new path or a regular
 * file: a complete image replaces it atomically (through a symbolic link,
 * the link's target is replaced, as cp would, never the link).  A fifo is
 * what a user names to stream the image somewhere: written through.
 * Anything else (a device, a socket, a directory) is refused: renaming
 * over /dev/full once turned the device node into a regular file.
 */
static int write_image(const char *file, const void *buf, size_t len)
{
	struct stat st;
	char *target;
	int fd, ret;

	if (lstat(file, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		return write_atomic(file, buf, len);
	}
	if (S_ISREG(st.st_mode))
		return write_atomic(file, buf, len);
	if (S_ISLNK(st.st_mode)) {
		if (stat(file, &st) < 0)
			return -errno;	/* dangling: ENOENT */
		if (S_ISREG(st.st_mode)) {
			target = realpath(file, NULL);
			if (!target)
				return -errno;
			ret = write_atomic(target, buf, len);
			free(target);
			return ret;
		}
	}
	if (S_ISFIFO(st.st_mode)) {
		fd = open(file, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		/* Still a fifo once opened (not swapped under us)? */
		if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
			close(fd);
			return -EINVAL;
		}
		ret = write_stream(fd, buf, len);
		if (close(fd) < 0 && !ret)
			ret = -errno;
		return ret;
	}
	return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
}

/*
 * Copy the arena that (@path, @flags) names into a malloc'ed image that
 * parses, with its save time in the header.  Return: 0 and *@out (@len
 * bytes), or -errno.
 */
static int build_image(const char *path, uint32_t flags, void **out,
		       size_t *len)
{
	struct actrack_arena_header *h;
	struct actrack_snapshot *snap;
	struct actrack_arena img;
	struct actrack_map m;
	void *buf;
	int ret;

	ret = __actrack_map_reader(path, flags, &m);
	if (ret)
		return ret;

	buf = malloc(m.arena.size);
	if (!buf) {
		ret = -ENOMEM;
		goto out_unmap;
	}
	memcpy(buf, m.arena.base, m.arena.size);
	img = (struct actrack_arena){ .base = buf, .size = m.arena.size };

	ret = actrack_arena_check(&img);
	if (!ret)
		ret = refresh_image(&m.arena, &img);
	if (ret)
		goto out_free;
	/*
	 * Taken after the last copy, so every timestamp in the image is
	 * older: a reader measures ages from here, not from its own clock,
	 * which keeps moving while the image does not.  Not for the previous
	 * boot's image: our clock says nothing about its timestamps; it keeps
	 * the end the module wrote there (its machine's last heartbeat), or
	 * without one its newest timestamp stands for its end.
	 */
	h = buf;
	if (!(flags & ACTRACK_SNAP_PREVIOUS_BOOT)) {
		h->saved_mono_ns = __actrack_mono_ns();
		h->saved_real_ns = __actrack_real_ns();
	}
	ret = __actrack_snapshot_arena(&img, &snap);
	if (ret)
		goto out_free;
	actrack_snapshot_free(snap);
	*out = buf;
	*len = m.arena.size;
	buf = NULL;

out_free:
	free(buf);
out_unmap:
	__actrack_unmap(&m);
	return ret;
}

ACTRACK_API int actrack_arena_save(const char *path, uint32_t flags,
				   const char *file)
{
	size_t len;
	void *buf;
	int ret;

	if (!file || !*file)
		return -EINVAL;
	ret = build_image(path, flags, &buf, &len);
	if (ret)
		return ret;
	ret = write_image(file, buf, len);
	free(buf);
	return ret;
}

ACTRACK_API int actrack_arena_save_fd(const char *path, uint32_t flags,
				      int fd)
{
	size_t len;
	void *buf;
	int ret;

	if (fd < 0)
		return -EBADF;
	ret = build_image(path, flags, &buf, &len);
	if (ret)
		return ret;
	ret = write_stream(fd, buf, len);
	free(buf);
	return ret;
}
