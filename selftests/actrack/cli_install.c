// SPDX-License-Identifier: MIT
/*
 * make install honours LIBDIR (multiarch and lib64 layouts: the library
 * and its .pc file go there, and the .pc file says so), and make uninstall
 * with the same variables removes every file install put down.  The CLI
 * builds against what was installed: its sources with only the installed
 * headers, linked with the installed libactrack.so, so it uses nothing
 * private to the library.  Runs the source tree's Makefile into a
 * temporary DESTDIR with the build directory this test comes from;
 * skipped where there is no source tree (the VM).
 */
#include <dirent.h>
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
		 "libactrack.so.2", dest);
	EXPECT_EQ(0, access(path, F_OK));
	snprintf(path, sizeof(path), "%s/usr/lib/libactrack.so.2", dest);
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

/* The compiler and sanitizers this test was built with: the installed
 * library was built the same way, and a sanitized library links only into
 * a program with the same runtime. */
#ifdef __clang__
#define INSTALLED_CC	"/usr/bin/clang"
#else
#define INSTALLED_CC	"/usr/bin/gcc"
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define INSTALLED_SAN	"-fsanitize=address,undefined"
#elif __has_feature(thread_sanitizer)
#define INSTALLED_SAN	"-fsanitize=thread"
#endif
#endif
#if !defined(INSTALLED_SAN) && defined(__SANITIZE_ADDRESS__)
#define INSTALLED_SAN	"-fsanitize=address,undefined"
#elif !defined(INSTALLED_SAN) && defined(__SANITIZE_THREAD__)
#define INSTALLED_SAN	"-fsanitize=thread"
#endif

TEST(cli_builds_against_the_installed_library)
{
	char src[PATH_MAX], build[PATH_MAX], dest[256], inc[300], so[400];
	char rpath[400], exe[300], cli_dir[PATH_MAX + 8], env[400], want[600];
	char *argv[64], *files[32];
	char *version_argv[] = { exe, "--version", NULL };
	char *ps_argv[] = { exe, "ps", NULL };
	int argc = 0, nr = 0;
	struct dirent *e;
	struct run r;
	DIR *d;

#ifdef __i386__
	/* The -m32 build's CLI is the 64-bit one (no libdw:i386 here): the
	 * 32-bit library installed there cannot link it. */
	SKIP(return, "the CLI is built 64-bit only (-m32 build)");
#endif
	if (find_tree(src, sizeof(src), build, sizeof(build)))
		SKIP(return, "no source tree next to this binary");
	if (access("/usr/bin/make", X_OK) || access(INSTALLED_CC, X_OK))
		SKIP(return, "no make or no " INSTALLED_CC);
	test_path(dest, sizeof(dest), "installed-cli");
	nftw(dest, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	ASSERT_EQ(0, make(src, build, dest, "install"));

	snprintf(inc, sizeof(inc), "-I%s/usr/include", dest);
	snprintf(so, sizeof(so), "%s/usr/lib/x86_64-linux-gnu/libactrack.so",
		 dest);
	snprintf(rpath, sizeof(rpath),
		 "-Wl,-rpath,%s/usr/lib/x86_64-linux-gnu", dest);
	snprintf(exe, sizeof(exe), "%s/actrack", dest);
	argv[argc++] = INSTALLED_CC;
	argv[argc++] = "-std=gnu11";
	argv[argc++] = "-D_GNU_SOURCE";
	argv[argc++] = "-Wall";
	argv[argc++] = "-Wextra";
	argv[argc++] = "-Werror";
	argv[argc++] = "-Wno-unused-parameter";
#ifdef INSTALLED_SAN
	argv[argc++] = INSTALLED_SAN;
#endif
	/* The installed headers and the system's: nothing from the tree
	 * (quoted includes also search cli/ itself, as they should). */
	argv[argc++] = inc;
	argv[argc++] = "-o";
	argv[argc++] = exe;
	snprintf(cli_dir, sizeof(cli_dir), "%s/cli", src);
	d = opendir(cli_dir);
	ASSERT_NE(NULL, d);
	while ((e = readdir(d)) && nr < 30) {
		size_t n = strlen(e->d_name);

		if (n < 3 || strcmp(e->d_name + n - 2, ".c"))
			continue;
		ASSERT_LE(0, asprintf(&files[nr], "%s/%s", cli_dir,
				      e->d_name));
		argv[argc++] = files[nr++];
	}
	closedir(d);
	ASSERT_LT(8, nr);
	/* The --help pages, which make install generated from the man
	 * pages; they include cli/cli.h. */
	ASSERT_LE(0, asprintf(&files[nr], "%s/cli/help.c", build));
	argv[argc++] = files[nr++];
	ASSERT_LE(0, asprintf(&files[nr], "-I%s", cli_dir));
	argv[argc++] = files[nr++];
	/* The shared library itself: a hidden symbol does not link. */
	argv[argc++] = so;
	argv[argc++] = rpath;
	argv[argc++] = "-ldw";
	argv[argc++] = "-lelf";
	argv[argc++] = "-lsystemd";	/* monitor --journal, deaths */
	argv[argc] = NULL;
	ASSERT_EQ(0, run_program(&r, INSTALLED_CC, NULL, argv));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	run_free(&r);
	for (int i = 0; i < nr; i++)
		free(files[i]);

	/* It runs, with the installed library, and names the arena the
	 * library reads (actrack_arena_path()). */
	ASSERT_EQ(0, run_program(&r, exe, NULL, version_argv));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_NE(NULL, strstr(r.out, actrack_version()));
	run_free(&r);
	snprintf(env, sizeof(env), "ACTRACK_ARENA=%s/no-arena", dest);
	ASSERT_EQ(0, run_program(&r, exe, env, ps_argv));
	EXPECT_EQ(1, r.status);
	snprintf(want, sizeof(want), "actrack: %s/no-arena: %s\n", dest,
		 strerror(ENOENT));
	EXPECT_STREQ(want, r.err);
	run_free(&r);

	ASSERT_EQ(0, make(src, build, dest, "uninstall"));
	nftw(dest, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TEST_HARNESS_MAIN
