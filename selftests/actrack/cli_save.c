// SPDX-License-Identifier: MIT
/*
 * actrack save at its edges, and what readers do with an image's time.
 *
 * OUTPUT that is not a new path, a regular file, a link to one or a fifo
 * is refused with exit 1 and one line that says what it is (it used to be
 * replaced by a regular file); '-' streams the image to standard output,
 * but never to a terminal.  An image records when it was saved: a wait
 * 100 ms old at the save stays 100 ms old however long the image waits
 * to be read, and hangs says that a static image cannot show progress.
 */
#include <pty.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

#define RUN(r, env, ...)						\
	do {								\
		char *__argv[] = { "actrack", __VA_ARGS__, NULL };	\
		run_free(r);						\
		ASSERT_EQ(0, run_cli(r, env, __argv));			\
	} while (0)

#define LOG_RUN(r)							\
	TH_LOG("exit %d\nstdout:\n%s\nstderr:\n%s", (r)->status,	\
	       (r)->out, (r)->err)

FIXTURE(save) {
	struct run r;
	char src[256], dst[256];
};

FIXTURE_SETUP(save)
{
	struct build b;

	memset(&self->r, 0, sizeof(self->r));
	test_path(self->src, sizeof(self->src), "cli-save-src");
	test_path(self->dst, sizeof(self->dst), "cli-save-dst");
	ASSERT_EQ(0, build_init(&b, ACTRACK_ARENA_MIN_SIZE));
	ASSERT_NE(0u, build_process(&b, 10, 1, 1, 1, 1, "x", 1));
	ASSERT_EQ(0, build_write(&b, self->src));
	build_free(&b);
}

FIXTURE_TEARDOWN(save)
{
	run_free(&self->r);
	unlink(self->src);
	unlink(self->dst);
}

TEST_F(save, a_device_node_is_refused)
{
	char want[512];
	struct stat st;

	if (mknod(self->dst, S_IFCHR | 0666, makedev(1, 7)) < 0) {
		ASSERT_EQ(EPERM, errno);
		SKIP(return, "mknod needs CAP_MKNOD");
	}
	RUN(&self->r, NULL, "--arena", self->src, "save", self->dst);
	snprintf(want, sizeof(want), "actrack: %s: is a character device, "
		 "not a file to save into: refused (use '-' for standard "
		 "output)\n", self->dst);
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ("", self->r.out);
	EXPECT_STREQ(want, self->r.err);
	ASSERT_EQ(0, lstat(self->dst, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(save, a_socket_is_refused)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char want[512];
	struct stat st;
	int fd;

	strcpy(sa.sun_path, self->dst);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	RUN(&self->r, NULL, "--arena", self->src, "save", self->dst);
	snprintf(want, sizeof(want), "actrack: %s: is a socket, not a file to "
		 "save into: refused (use '-' for standard output)\n",
		 self->dst);
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ(want, self->r.err);
	ASSERT_EQ(0, lstat(self->dst, &st));
	EXPECT_TRUE(S_ISSOCK(st.st_mode));
	close(fd);
}

TEST_F(save, a_dangling_link_is_refused)
{
	char want[512];
	struct stat st;

	ASSERT_EQ(0, symlink("/nonexistent-actrack-target", self->dst));
	RUN(&self->r, NULL, "--arena", self->src, "save", self->dst);
	snprintf(want, sizeof(want), "actrack: %s: dangling symbolic link: "
		 "refused\n", self->dst);
	EXPECT_EQ(1, self->r.status);
	EXPECT_STREQ(want, self->r.err);
	ASSERT_EQ(0, lstat(self->dst, &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST_F(save, dash_is_standard_output)
{
	const struct actrack_arena_header *h;

	RUN(&self->r, NULL, "--arena", self->src, "save", "-");
	EXPECT_EQ(0, self->r.status);
	EXPECT_STREQ("", self->r.err);
	/* run_cli's stdout is a file, so the NULs of the image are kept:
	 * the header is all we look at. */
	h = (const void *)self->r.out;
	ASSERT_EQ(ACTRACK_ARENA_MAGIC, h->magic);
	EXPECT_EQ(ACTRACK_ARENA_MIN_SIZE, h->size);
	EXPECT_NE(0u, h->saved_mono_ns);
	EXPECT_EQ(-1, access("-", F_OK));
}

TEST_F(save, dash_refuses_a_terminal)
{
	char *argv[] = { "actrack", "--arena", self->src, "save", "-", NULL };
	int master, slave, err[2], status;
	char *msg;
	pid_t pid;

	if (openpty(&master, &slave, NULL, NULL, NULL) < 0)
		SKIP(return, "no pseudo-terminal: %s", strerror(errno));
	ASSERT_EQ(0, pipe(err));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(slave, 1);
		dup2(err[1], 2);
		execv(cli_path(), argv);
		_exit(127);
	}
	close(err[1]);
	close(slave);
	msg = slurp_fd(err[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_STREQ("actrack: -: standard output is a terminal: refusing to "
		     "write a binary image to it\n", msg);
	free(msg);
	close(err[0]);
	close(master);
}

static int the_lock;

static void wait_for_lock(void *arg)
{
	/* Left on the stack: the child then sleeps until killed. */
	actrack_push_lock_acquire(&the_lock);
}

/* The value of "@key": "DIGITS" in a JSON text, or -1. */
static long long json_str_num(const char *doc, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	p = strstr(doc, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

TEST_F(save, an_image_keeps_the_ages_it_had_when_saved)
{
	struct actrack_snapshot *img;
	const char *act;
	struct writer w;
	char live[256], min_age[32];
	uint64_t push_ns, saved_ns, upper_ns;
	struct timespec nap = { 0, 100000000 };

	test_path(live, sizeof(live), "cli-save-live");
	ASSERT_EQ(0, writer_start(&w, live, 8, ACTRACK_INIT_NO_MODULES,
				  wait_for_lock, NULL));
	/* A wait 100 ms old (at least) when saved. */
	nanosleep(&nap, NULL);
	RUN(&self->r, NULL, "--arena", live, "save", self->dst);
	upper_ns = actrack_test_mono_ns();
	writer_stop(&w);
	unlink(live);
	ASSERT_EQ(0, self->r.status) LOG_RUN(&self->r);

	ASSERT_EQ(0, actrack_snapshot_take(self->dst, ACTRACK_SNAP_ARENA_FILE,
					   &img));
	ASSERT_EQ(1u, img->nr_processes);
	ASSERT_EQ(1u, img->processes[0].nr_threads);
	ASSERT_EQ(1u, img->processes[0].threads[0].nr_activities);
	push_ns = img->processes[0].threads[0].activities[0].a.time_ns;
	saved_ns = img->header.saved_mono_ns;
	actrack_snapshot_free(img);
	ASSERT_LE(push_ns + 100000000ULL, saved_ns);
	ASSERT_GE(upper_ns, saved_ns);

	/*
	 * Two seconds later the reader's clock says the wait is 2 s older
	 * than it was at the save; a threshold one second above its age at
	 * the save (an upper bound, whatever the machine's speed) must not
	 * call it hung.
	 */
	sleep(2);
	snprintf(min_age, sizeof(min_age), "%llums",
		 (unsigned long long)((upper_ns - push_ns) / 1000000 + 1000));
	RUN(&self->r, NULL, "--arena", self->dst, "hangs", "--for", min_age);
	EXPECT_EQ(0, self->r.status) LOG_RUN(&self->r);
	EXPECT_NE(NULL, strstr(self->r.out, "note: saved image: ages are "
			       "relative to when it was saved ("));
	EXPECT_NE(NULL, strstr(self->r.out, "no hung threads (1 thread in 1 "
			       "process; waits older than "));
	EXPECT_NE(NULL, strstr(self->r.out, ", when saved; a saved image "
			       "cannot show progress, so a long wait there "
			       "may still have been moving)\n"));
	EXPECT_EQ(NULL, strstr(self->r.out, "unchanged over"));

	/* A lower threshold finds it, aged as of the save. */
	RUN(&self->r, NULL, "--arena", self->dst, "hangs", "--for", "50ms",
	    "--json");
	EXPECT_EQ(3, self->r.status) LOG_RUN(&self->r);
	EXPECT_EQ((long long)(saved_ns - push_ns),
		  json_str_num(self->r.out, "age_ns"));
	EXPECT_NE(NULL, strstr(self->r.out, "\"saved_image\": true"));
	EXPECT_NE(NULL, strstr(self->r.out, "\"interval_ms\": null"));

	RUN(&self->r, NULL, "--arena", self->dst, "dump", "--json");
	EXPECT_EQ(0, self->r.status);
	act = strstr(self->r.out, "\"activities\"");
	ASSERT_NE(NULL, act);
	EXPECT_EQ((long long)(saved_ns - push_ns), json_str_num(act, "age_ns"));
	EXPECT_EQ((long long)saved_ns, json_str_num(self->r.out, "now_ns"));
}

TEST_HARNESS_MAIN
