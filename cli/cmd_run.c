// SPDX-License-Identifier: MIT
/*
 * actrack run: run an unmodified program with libactrack-preload.so, so
 * that its blocking calls and held locks are tracked.
 *
 * The program replaces this process (execv): its pid, its signals and its
 * exit status are its own, as with env(1), whose exit codes we keep for
 * our own failures (126: found but cannot be run as asked, 127: not
 * found).  Programs the dynamic linker would not preload into are refused
 * before anything runs, rather than run untracked while we claim to track
 * them: static executables (no PT_INTERP) and set-user/group-ID ones
 * (secure-execution mode ignores a LD_PRELOAD with a slash).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli.h"

#define PRELOAD_NAME	"libactrack-preload.so"
#define ENV_NO_FOLLOW	"ACTRACK_RUN_NO_FOLLOW"	/* read by the preload */
#define ENV_NOTICE	"ACTRACK_RUN_NOTICE"	/* read by the preload */

#ifndef ACTRACK_LIBDIR
#define ACTRACK_LIBDIR	"/usr/local/lib"
#endif

#define EXIT_CANNOT_RUN	126
#define EXIT_NOT_FOUND	127


static bool is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* The preload library: $ACTRACK_PRELOAD, beside this executable (the build
 * tree), in ../lib from it (an installed prefix), or the configured LIBDIR. */
static int find_preload(char *out, size_t len)
{
	const char *env = getenv("ACTRACK_PRELOAD");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		if (env[0] != '/' && !realpath(env, exe))
			return -errno;
		if (snprintf(out, len, "%s", env[0] == '/' ? env : exe) >=
		    (int)len)
			return -ENAMETOOLONG;
		return is_file(out) ? 0 : -ENOENT;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if (snprintf(out, len, "%s/%s", exe, PRELOAD_NAME) <
			    (int)len && is_file(out))
				return 0;
			if (snprintf(out, len, "%s/../lib/%s", exe,
				     PRELOAD_NAME) < (int)len && is_file(out))
				return 0;
		}
	}
	if (snprintf(out, len, "%s/%s", ACTRACK_LIBDIR, PRELOAD_NAME) <
	    (int)len && is_file(out))
		return 0;
	return -ENOENT;
}

/* PROGRAM as execvp() would find it: as given if it has a slash, else the
 * first executable regular file of that name in $PATH. */
static int find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	int err = -ENOENT;

	if (!*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		if (snprintf(out, len, "%s", name) >= (int)len)
			return -ENAMETOOLONG;
		return access(out, F_OK) ? -errno : 0;
	}
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t dl = end ? (size_t)(end - path) : strlen(path);

		if (snprintf(out, len, "%.*s%s%s", (int)dl, path,
			     dl ? "/" : "", name) < (int)len) {
			if (is_file(out) && !access(out, X_OK))
				return 0;
			if (is_file(out))
				err = -EACCES;
		}
		if (!end)
			break;
		path = end + 1;
	}
	return err;
}

/*
 * Would the dynamic linker preload into @path?  Only an ELF executable
 * with an interpreter; scripts and other formats are left to the kernel
 * (their interpreter is what gets the preload).
 * Return: 0, or a message for the refusal.
 */
static const char *untrackable(const char *path)
{
	unsigned char ident[EI_NIDENT];
	struct stat st;
	bool interp = false;
	int fd;

	if (stat(path, &st))
		return NULL;	/* execv() reports it */
	if (st.st_mode & (S_ISUID | S_ISGID))
		return "set-user-ID or set-group-ID program: the dynamic "
		       "linker ignores LD_PRELOAD for it";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (pread(fd, ident, sizeof(ident), 0) != sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG)) {
		close(fd);
		return NULL;
	}
	if (ident[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;

		if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
		    eh.e_phentsize == sizeof(ph))
			for (unsigned int i = 0; i < eh.e_phnum && i < 256; i++)
				if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff +
					  (uint64_t)i * sizeof(ph))) ==
				    sizeof(ph) && ph.p_type == PT_INTERP)
					interp = true;
	} else {
		Elf32_Ehdr eh;
		Elf32_Phdr ph;

		if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
		    eh.e_phentsize == sizeof(ph))
			for (unsigned int i = 0; i < eh.e_phnum && i < 256; i++)
				if (pread(fd, &ph, sizeof(ph), (off_t)eh.e_phoff +
					  (off_t)i * (off_t)sizeof(ph)) ==
				    sizeof(ph) && ph.p_type == PT_INTERP)
					interp = true;
	}
	close(fd);
	if (!interp)
		return "statically linked: there is no dynamic linker to "
		       "preload the tracking library";
	return NULL;
}

/* LD_PRELOAD with @lib appended (the program's own preloads come first and
 * keep interposing as they did; ours sees the calls they pass on). */
static int set_ld_preload(const char *lib)
{
	const char *cur = getenv("LD_PRELOAD");
	char *v;
	int ret;

	if (!cur || !*cur)
		return setenv("LD_PRELOAD", lib, 1) ? -errno : 0;
	if (asprintf(&v, "%s:%s", cur, lib) < 0)
		return -ENOMEM;
	ret = setenv("LD_PRELOAD", v, 1) ? -errno : 0;
	free(v);
	return ret;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-follow", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char lib[PATH_MAX], prog[PATH_MAX];
	bool follow = true;
	const char *why;
	int opt, ret;

	opterr = 0;
	/* '+': PROGRAM's own options are not ours. */
	while ((opt = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			follow = false;
			break;
		case 'h':
			fputs(cli_help_page("run"), stdout);
			return 0;
		default:
			return cli_usage_error("run", "run: unknown option "
					       "'%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("run", "run: missing PROGRAM");

	ret = find_program(argv[optind], prog, sizeof(prog));
	if (ret) {
		cli_errorf("run: %s: %s", argv[optind], strerror(-ret));
		return ret == -ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
	}
	why = untrackable(prog);
	if (why) {
		cli_errorf("run: %s: not tracked: %s", prog, why);
		return EXIT_CANNOT_RUN;
	}
	ret = find_preload(lib, sizeof(lib));
	if (ret) {
		cli_errorf("run: cannot find %s (set ACTRACK_PRELOAD): %s",
			   PRELOAD_NAME, strerror(-ret));
		return EXIT_CANNOT_RUN;
	}
	ret = set_ld_preload(lib);
	if (!ret && cli.arena)
		ret = setenv(ACTRACK_ENV_ARENA, cli.arena, 1) ? -errno : 0;
	/* One line on stderr if the program cannot be tracked. */
	if (!ret)
		ret = setenv(ENV_NOTICE, "1", 1) ? -errno : 0;
	if (!ret)
		ret = follow ? (unsetenv(ENV_NO_FOLLOW) ? -errno : 0) :
			       (setenv(ENV_NO_FOLLOW, "1", 1) ? -errno : 0);
	if (ret) {
		cli_error("run: environment", ret);
		return EXIT_CANNOT_RUN;
	}
	fflush(NULL);
	execv(prog, argv + optind);
	ret = errno;
	cli_errorf("run: %s: %s", prog, strerror(ret));
	return ret == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
}
