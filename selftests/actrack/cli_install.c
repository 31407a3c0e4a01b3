// SPDX-License-Identifier: MIT
/*
 * make install honours LIBDIR (multiarch and lib64 layouts: the library
 * and its .pc file go there, and the .pc file says so), and make uninstall
 * with the same variables removes every file install put down.  Runs the
 * source tree's Makefile into a temporary DESTDIR with the build directory
 * this test comes from; skipped where there is no source tree (the VM).
 */
#include <ftw.h>
#include <libgen.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

/* The source tree and build directory of this binary, from its path:
 * SRC/BUILD/selftests/cli_install with SRC holding the Makefile. */
static int find_tree(char *src, size_t slen, char *build, size_t blen)
{
	char exe[PATH_MAX], probe[PATH_MAX + 32], up[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = 0;
	snprintf(build, blen, "%s", dirname(dirname(exe)));
	snprintf(src, slen, "%s", build);
	while (strcmp(src, "/")) {
		snprintf(probe, sizeof(probe), "%s/lib/libactrack.pc.in", src);
		if (!access(probe, F_OK))
			return 0;
		snprintf(up, sizeof(up), "%s", src);
		snprintf(src, slen, "%s", dirname(up));
	}
	return -1;
}

static int nr_files;

static int count_file(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	nr_files += flag == FTW_F || flag == FTW_SL;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	remove(path);
	return 0;
}

static int make(const char *src, const char *build, const char *dest,
		const char *target)
{
	char o[PATH_MAX + 8], d[PATH_MAX + 16];
	char *argv[] = { "make", "-s", "-C", (char *)src, o, d,
			 "PREFIX=/usr", "LIBDIR=/usr/lib/x86_64-linux-gnu",
			 (char *)target, NULL };
	struct run r;
	int status;

	/* Run by make check-host: the parent's jobserver descriptors are
	 * not ours, and a make that waits on them never finishes. */
	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	snprintf(o, sizeof(o), "O=%s", build);
	snprintf(d, sizeof(d), "DESTDIR=%s", dest);
	if (run_program(&r, "/usr/bin/make", NULL, argv))
		return -1;
	status = r.status;
	if (status)
		fprintf(stderr, "make %s: %s%s", target, r.out, r.err);
	run_free(&r);
	return status;
}

TEST(install_into_libdir_then_uninstall_everything)
{
	char src[PATH_MAX], build[PATH_MAX], dest[256], path[PATH_MAX + 300];
	char *pc;

	if (find_tree(src, sizeof(src), build, sizeof(build)))
		SKIP(return, "no source tree next to this binary");
	if (access("/usr/bin/make", X_OK))
		SKIP(return, "no make");
	test_path(dest, sizeof(dest), "install");
	nftw(dest, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

	ASSERT_EQ(0, make(src, build, dest, "install"));
	snprintf(path, sizeof(path), "%s/usr/lib/x86_64-linux-gnu/"
		 "libactrack.so.1", dest);
	EXPECT_EQ(0, access(path, F_OK));
	snprintf(path, sizeof(path), "%s/usr/lib/libactrack.so.1", dest);
	EXPECT_EQ(-1, access(path, F_OK));
	snprintf(path, sizeof(path), "%s/usr/lib/x86_64-linux-gnu/pkgconfig/"
		 "libactrack.pc", dest);
	pc = read_file(path, NULL);
	ASSERT_NE(NULL, pc);
	EXPECT_NE(NULL, strstr(pc, "\nlibdir=/usr/lib/x86_64-linux-gnu\n"));
	EXPECT_NE(NULL, strstr(pc, "\nincludedir=/usr/include\n"));
	free(pc);
	snprintf(path, sizeof(path), "%s/usr/bin/actrack", dest);
	EXPECT_EQ(0, access(path, X_OK));
	snprintf(path, sizeof(path), "%s/usr/share/man/man1/actrack.1", dest);
	EXPECT_EQ(0, access(path, F_OK));
	nr_files = 0;
	nftw(dest, count_file, 16, FTW_PHYS);
	EXPECT_LT(8, nr_files);

	ASSERT_EQ(0, make(src, build, dest, "uninstall"));
	nr_files = 0;
	nftw(dest, count_file, 16, FTW_PHYS);
	EXPECT_EQ(0, nr_files);
	nftw(dest, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TEST_HARNESS_MAIN
