// SPDX-License-Identifier: MIT
/*
 * Where actrack_arena_save() writes, and what an image says about time.
 *
 * Renaming a complete image over OUTPUT is right for a new path or a
 * regular file, and wrong for anything else: as root, saving to /dev/full
 * replaced the device node with a 4 MiB regular file, and a symbolic link
 * or a fifo was replaced the same way.  A device, socket or directory is
 * refused and left as it was; a link is written through (its target is
 * replaced); a fifo is written through; actrack_arena_save_fd() streams to
 * a descriptor.  An image records when it was saved, and a snapshot of it
 * reports that moment as its time.
 */
#include <pthread.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

#define SRC_SIZE	ACTRACK_ARENA_MIN_SIZE

/* Reads a fifo or pipe to its end: how many bytes, and the first ones. */
struct drain {
	const char *fifo;	/* opened by the thread, or... */
	int fd;			/* ...this read end */
	size_t total;
	struct actrack_arena_header head;
};

static void *drain_thread(void *arg)
{
	struct drain *d = arg;
	char buf[65536];
	int fd = d->fifo ? open(d->fifo, O_RDONLY | O_CLOEXEC) : d->fd;
	ssize_t n;

	if (fd < 0)
		return NULL;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (d->total < sizeof(d->head)) {
			size_t k = sizeof(d->head) - d->total;

			memcpy((char *)&d->head + d->total, buf,
			       (size_t)n < k ? (size_t)n : k);
		}
		d->total += (size_t)n;
	}
	close(fd);
	return NULL;
}

FIXTURE(out) {
	char src[256], dst[256], other[256];
};

FIXTURE_SETUP(out)
{
	struct build b;

	test_path(self->src, sizeof(self->src), "save-out-src");
	test_path(self->dst, sizeof(self->dst), "save-out-dst");
	test_path(self->other, sizeof(self->other), "save-out-other");
	ASSERT_EQ(0, build_init(&b, SRC_SIZE));
	ASSERT_NE(0u, build_process(&b, 10, 1, 1, 1, 1, "x", 1));
	ASSERT_EQ(0, build_write(&b, self->src));
	build_free(&b);
}

FIXTURE_TEARDOWN(out)
{
	unlink(self->src);
	unlink(self->dst);
	rmdir(self->dst);
	unlink(self->other);
}

TEST_F(out, a_device_node_is_refused_and_left_alone)
{
	struct stat st;

	/* A copy of /dev/full: c 1 7. */
	if (mknod(self->dst, S_IFCHR | 0666, makedev(1, 7)) < 0) {
		ASSERT_EQ(EPERM, errno);
		SKIP(return, "mknod needs CAP_MKNOD");
	}
	EXPECT_EQ(-EINVAL, actrack_arena_save(self->src,
					      ACTRACK_SNAP_ARENA_FILE,
					      self->dst));
	ASSERT_EQ(0, lstat(self->dst, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(makedev(1, 7), st.st_rdev);
}

TEST_F(out, a_socket_is_refused_and_left_alone)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	ASSERT_LT(strlen(self->dst), sizeof(sa.sun_path));
	strcpy(sa.sun_path, self->dst);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	EXPECT_EQ(-EINVAL, actrack_arena_save(self->src,
					      ACTRACK_SNAP_ARENA_FILE,
					      self->dst));
	ASSERT_EQ(0, lstat(self->dst, &st));
	EXPECT_TRUE(S_ISSOCK(st.st_mode));
	close(fd);
}

TEST_F(out, a_directory_is_refused)
{
	struct stat st;

	ASSERT_EQ(0, mkdir(self->dst, 0700));
	EXPECT_EQ(-EISDIR, actrack_arena_save(self->src,
					      ACTRACK_SNAP_ARENA_FILE,
					      self->dst));
	ASSERT_EQ(0, lstat(self->dst, &st));
	EXPECT_TRUE(S_ISDIR(st.st_mode));
}

TEST_F(out, a_symlink_is_written_through)
{
	struct stat st;

	ASSERT_EQ(0, write_file(self->other, "old", 3));
	ASSERT_EQ(0, symlink(self->other, self->dst));
	ASSERT_EQ(0, actrack_arena_save(self->src, ACTRACK_SNAP_ARENA_FILE,
					self->dst));
	/* The link stays a link; the file it names is the image. */
	ASSERT_EQ(0, lstat(self->dst, &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode));
	ASSERT_EQ(0, stat(self->other, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(SRC_SIZE, st.st_size);
}

TEST_F(out, a_dangling_symlink_is_refused)
{
	struct stat st;

	ASSERT_EQ(0, symlink(self->other, self->dst));
	EXPECT_EQ(-ENOENT, actrack_arena_save(self->src,
					      ACTRACK_SNAP_ARENA_FILE,
					      self->dst));
	ASSERT_EQ(0, lstat(self->dst, &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode));
	EXPECT_EQ(-1, access(self->other, F_OK));
}

TEST_F(out, a_fifo_is_written_through)
{
	struct drain d = { .fifo = self->dst };
	struct stat st;
	pthread_t th;

	ASSERT_EQ(0, mkfifo(self->dst, 0600));
	ASSERT_EQ(0, pthread_create(&th, NULL, drain_thread, &d));
	EXPECT_EQ(0, actrack_arena_save(self->src, ACTRACK_SNAP_ARENA_FILE,
					self->dst));
	pthread_join(th, NULL);
	EXPECT_EQ(SRC_SIZE, d.total);
	EXPECT_EQ(ACTRACK_ARENA_MAGIC, d.head.magic);
	EXPECT_NE(0u, d.head.saved_mono_ns);
	ASSERT_EQ(0, lstat(self->dst, &st));
	EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(out, save_fd_streams_the_image)
{
	struct drain d = { 0 };
	pthread_t th;
	int p[2];

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	d.fd = p[0];
	ASSERT_EQ(0, pthread_create(&th, NULL, drain_thread, &d));
	EXPECT_EQ(0, actrack_arena_save_fd(self->src, ACTRACK_SNAP_ARENA_FILE,
					   p[1]));
	close(p[1]);
	pthread_join(th, NULL);
	EXPECT_EQ(SRC_SIZE, d.total);
	EXPECT_EQ(ACTRACK_ARENA_MAGIC, d.head.magic);
	EXPECT_EQ(-EBADF, actrack_arena_save_fd(self->src,
						ACTRACK_SNAP_ARENA_FILE, -1));
}

TEST_F(out, an_image_is_read_at_the_moment_it_was_saved)
{
	struct actrack_snapshot *live, *img;
	uint64_t before, after;

	before = actrack_test_mono_ns();
	ASSERT_EQ(0, actrack_arena_save(self->src, ACTRACK_SNAP_ARENA_FILE,
					self->dst));
	after = actrack_test_mono_ns();
	ASSERT_EQ(0, actrack_snapshot_take(self->src, ACTRACK_SNAP_ARENA_FILE,
					   &live));
	ASSERT_EQ(0, actrack_snapshot_take(self->dst, ACTRACK_SNAP_ARENA_FILE,
					   &img));
	/* The live arena has no save time, and is read now. */
	EXPECT_EQ(0u, live->header.saved_mono_ns);
	EXPECT_EQ(0u, live->header.saved_real_ns);
	EXPECT_LE(after, live->taken_mono_ns);
	/* The image is read as of its save, whenever that was. */
	EXPECT_LE(before, img->header.saved_mono_ns);
	EXPECT_GE(after, img->header.saved_mono_ns);
	EXPECT_NE(0u, img->header.saved_real_ns);
	EXPECT_EQ(img->header.saved_mono_ns, img->taken_mono_ns);
	actrack_snapshot_free(live);
	actrack_snapshot_free(img);
}

TEST_HARNESS_MAIN
