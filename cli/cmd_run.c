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

/* ---- the program's ELF headers ---------------------------------------- */

/* What we read of an ELF file: its class and machine, and its program
 * headers, each class's made 64-bit. */
#define MAX_PHDRS	256

struct elf {
	int fd;
	unsigned char class;	/* ELFCLASS32 / ELFCLASS64 */
	uint16_t machine;
	unsigned int nr_phdrs;
	Elf64_Phdr phdrs[MAX_PHDRS];
};

/* Open @path as an ELF file.  Return: 0, or -1 if it is not one (or
 * cannot be read): then nothing is left open. */
static int elf_open(const char *path, struct elf *e)
{
	unsigned char ident[EI_NIDENT];

	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		return -1;
	e->nr_phdrs = 0;
	if (pread(e->fd, ident, sizeof(ident), 0) != sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG))
		goto fail;
	e->class = ident[EI_CLASS];
	if (e->class == ELFCLASS64) {
		Elf64_Ehdr eh;

		if (pread(e->fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
		    eh.e_phentsize != sizeof(Elf64_Phdr))
			goto fail;
		e->machine = eh.e_machine;
		for (unsigned int i = 0; i < eh.e_phnum && i < MAX_PHDRS; i++)
			if (pread(e->fd, &e->phdrs[e->nr_phdrs],
				  sizeof(Elf64_Phdr), (off_t)(eh.e_phoff +
				  (uint64_t)i * sizeof(Elf64_Phdr))) ==
			    sizeof(Elf64_Phdr))
				e->nr_phdrs++;
	} else if (e->class == ELFCLASS32) {
		Elf32_Ehdr eh;
		Elf32_Phdr ph;

		if (pread(e->fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
		    eh.e_phentsize != sizeof(ph))
			goto fail;
		e->machine = eh.e_machine;
		for (unsigned int i = 0; i < eh.e_phnum && i < MAX_PHDRS; i++) {
			Elf64_Phdr *o = &e->phdrs[e->nr_phdrs];

			if (pread(e->fd, &ph, sizeof(ph), (off_t)eh.e_phoff +
				  (off_t)i * (off_t)sizeof(ph)) != sizeof(ph))
				continue;
			o->p_type = ph.p_type;
			o->p_offset = ph.p_offset;
			o->p_vaddr = ph.p_vaddr;
			o->p_filesz = ph.p_filesz;
			o->p_memsz = ph.p_memsz;
			e->nr_phdrs++;
		}
	} else {
		goto fail;
	}
	return 0;
fail:
	close(e->fd);
	return -1;
}

static const Elf64_Phdr *elf_phdr(const struct elf *e, uint32_t type)
{
	for (unsigned int i = 0; i < e->nr_phdrs; i++)
		if (e->phdrs[i].p_type == type)
			return &e->phdrs[i];
	return NULL;
}

/* The file offset of address @vaddr (a PT_LOAD's), or -1. */
static off_t elf_offset(const struct elf *e, uint64_t vaddr)
{
	for (unsigned int i = 0; i < e->nr_phdrs; i++) {
		const Elf64_Phdr *ph = &e->phdrs[i];

		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr < ph->p_filesz)
			return (off_t)(ph->p_offset + (vaddr - ph->p_vaddr));
	}
	return -1;
}

/*
 * Would the dynamic linker preload into @path?  Only an ELF executable
 * with an interpreter; scripts and other formats are left to the kernel
 * (their interpreter is what gets the preload).
 * Return: 0, or a message for the refusal.
 */
static const char *untrackable(const char *path)
{
	struct stat st;
	struct elf *e;
	bool interp;

	if (stat(path, &st))
		return NULL;	/* execv() reports it */
	if (st.st_mode & (S_ISUID | S_ISGID))
		return "set-user-ID or set-group-ID program: the dynamic "
		       "linker ignores LD_PRELOAD for it";
	e = malloc(sizeof(*e));
	if (!e || elf_open(path, e)) {
		free(e);
		return NULL;
	}
	interp = elf_phdr(e, PT_INTERP) != NULL;
	close(e->fd);
	free(e);
	if (!interp)
		return "statically linked: there is no dynamic linker to "
		       "preload the tracking library";
	return NULL;
}

/* ---- sanitizer runtimes ---------------------------------------------- */

/*
 * A program built with -fsanitize=address (thread, undefined, ...) and a
 * shared runtime refuses to start unless that runtime is the first object
 * loaded after it ("ASan runtime does not come first"), and LD_PRELOAD
 * comes before the program's own libraries.  So the runtime goes first in
 * LD_PRELOAD, found where the dynamic linker would find it.
 */
static const char *const sanitizer_runtimes[] = {
	"libasan.so", "libtsan.so", "libubsan.so", "liblsan.so",
	"libhwasan.so", "libclang_rt.asan", "libclang_rt.tsan",
	"libclang_rt.ubsan", "libclang_rt.hwasan",
};

static bool is_sanitizer_runtime(const char *name)
{
	for (size_t i = 0; i < sizeof(sanitizer_runtimes) /
	     sizeof(*sanitizer_runtimes); i++)
		if (!strncmp(name, sanitizer_runtimes[i],
			     strlen(sanitizer_runtimes[i])))
			return true;
	return false;
}

/* A library of the program's class and machine at @path? */
static bool elf_matches(const char *path, const struct elf *prog)
{
	struct elf *e = malloc(sizeof(*e));
	bool ok = false;

	if (e && !elf_open(path, e)) {
		ok = e->class == prog->class && e->machine == prog->machine;
		close(e->fd);
	}
	free(e);
	return ok;
}

/* @name in the ':'-separated @dirs ($ORIGIN: @origin), into @out. */
static bool find_in_dirs(const char *name, const char *dirs,
			 const char *origin, const struct elf *prog,
			 char *out, size_t len)
{
	while (dirs && *dirs) {
		const char *end = strchr(dirs, ':');
		size_t dl = end ? (size_t)(end - dirs) : strlen(dirs);
		int n;

		if (dl >= 7 && !strncmp(dirs, "$ORIGIN", 7))
			n = snprintf(out, len, "%s%.*s/%s", origin,
				     (int)(dl - 7), dirs + 7, name);
		else if (dl >= 9 && !strncmp(dirs, "${ORIGIN}", 9))
			n = snprintf(out, len, "%s%.*s/%s", origin,
				     (int)(dl - 9), dirs + 9, name);
		else
			n = snprintf(out, len, "%.*s/%s", (int)dl, dirs, name);
		if (dl && n > 0 && (size_t)n < len && elf_matches(out, prog))
			return true;
		if (!end)
			break;
		dirs = end + 1;
	}
	return false;
}

/*
 * @name in /etc/ld.so.cache (glibc's format since 2.32, "glibc-ld.so.
 * cache1.1": a header, entries of flags, key, value, osversion, hwcap,
 * and strings at offsets from the file's start), best entry first.
 */
#define LD_CACHE	"/etc/ld.so.cache"
#define LD_CACHE_MAGIC	"glibc-ld.so.cache1.1"
#define LD_CACHE_HDR	48
#define LD_CACHE_ENTRY	24

static bool find_in_cache(const char *name, const struct elf *prog,
			  char *out, size_t len)
{
	bool found = false;
	struct stat st;
	uint32_t nlibs;
	char *buf;
	int fd;

	fd = open(LD_CACHE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) || st.st_size < LD_CACHE_HDR ||
	    st.st_size > 64 << 20 || !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return false;
	}
	if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size ||
	    memcmp(buf, LD_CACHE_MAGIC, strlen(LD_CACHE_MAGIC)))
		goto out;
	buf[st.st_size] = 0;
	memcpy(&nlibs, buf + 20, sizeof(nlibs));
	for (uint64_t i = 0; i < nlibs && LD_CACHE_HDR + (i + 1) *
	     LD_CACHE_ENTRY <= (uint64_t)st.st_size && !found; i++) {
		const char *ent = buf + LD_CACHE_HDR + i * LD_CACHE_ENTRY;
		uint32_t key, value;

		memcpy(&key, ent + 4, sizeof(key));
		memcpy(&value, ent + 8, sizeof(value));
		if (key >= st.st_size || value >= st.st_size ||
		    strcmp(buf + key, name))
			continue;
		if (snprintf(out, len, "%s", buf + value) < (int)len &&
		    elf_matches(out, prog))
			found = true;
	}
out:
	free(buf);
	close(fd);
	return found;
}

/* The dynamic linker's own last resort, by class. */
static const char *default_dirs(const struct elf *prog)
{
	return prog->class == ELFCLASS64 ? "/lib64:/usr/lib64:/lib:/usr/lib" :
					   "/lib32:/usr/lib32:/lib:/usr/lib";
}

/*
 * The sanitizer runtime @path needs (DT_NEEDED), resolved as the dynamic
 * linker would: DT_RPATH (without DT_RUNPATH), LD_LIBRARY_PATH,
 * DT_RUNPATH, ld.so.cache, the default directories.
 * Return: 1 with its path in @out, 0 if it needs none, -1 if it needs one
 * that is not found (its name in @out).
 */
static int sanitizer_runtime(const char *path, char *out, size_t len)
{
	const char *needed = NULL, *rpath = NULL, *runpath = NULL;
	char origin[PATH_MAX], *strtab = NULL, *slash;
	uint64_t strtab_addr = 0, strsz = 0;
	const Elf64_Phdr *dyn;
	struct elf *e;
	int ret = 0;

	e = malloc(sizeof(*e));
	if (!e || elf_open(path, e)) {
		free(e);
		return 0;
	}
	dyn = elf_phdr(e, PT_DYNAMIC);
	if (!dyn)
		goto out;
	/* Two passes over the dynamic section: the string table first. */
	for (int pass = 0; pass < 2; pass++) {
		size_t esz = e->class == ELFCLASS64 ? sizeof(Elf64_Dyn) :
						      sizeof(Elf32_Dyn);

		for (uint64_t off = 0; off + esz <= dyn->p_filesz &&
		     off < (1 << 20); off += esz) {
			uint64_t tag, val;

			if (e->class == ELFCLASS64) {
				Elf64_Dyn d;

				if (pread(e->fd, &d, sizeof(d),
					  (off_t)(dyn->p_offset + off)) !=
				    sizeof(d))
					break;
				tag = (uint64_t)d.d_tag;
				val = d.d_un.d_val;
			} else {
				Elf32_Dyn d;

				if (pread(e->fd, &d, sizeof(d),
					  (off_t)(dyn->p_offset + off)) !=
				    sizeof(d))
					break;
				tag = (uint64_t)(uint32_t)d.d_tag;
				val = d.d_un.d_val;
			}
			if (tag == DT_NULL)
				break;
			if (pass == 0 && tag == DT_STRTAB)
				strtab_addr = val;
			else if (pass == 0 && tag == DT_STRSZ)
				strsz = val;
			else if (pass == 1 && val < strsz) {
				if (tag == DT_NEEDED && !needed &&
				    is_sanitizer_runtime(strtab + val))
					needed = strtab + val;
				else if (tag == DT_RPATH)
					rpath = strtab + val;
				else if (tag == DT_RUNPATH)
					runpath = strtab + val;
			}
		}
		if (pass == 0) {
			off_t o = elf_offset(e, strtab_addr);

			if (o < 0 || !strsz || strsz > (16 << 20))
				goto out;
			strtab = malloc(strsz + 1);
			if (!strtab ||
			    pread(e->fd, strtab, strsz, o) != (ssize_t)strsz)
				goto out;
			strtab[strsz] = 0;
		}
	}
	if (!needed)
		goto out;
	if (!realpath(path, origin))
		snprintf(origin, sizeof(origin), "%s", path);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = 0;
	if (strchr(needed, '/'))
		ret = snprintf(out, len, "%s", needed) < (int)len &&
		      elf_matches(out, e) ? 1 : -1;
	else if ((!runpath && find_in_dirs(needed, rpath, origin, e, out,
					   len)) ||
		 find_in_dirs(needed, getenv("LD_LIBRARY_PATH"), origin, e,
			      out, len) ||
		 find_in_dirs(needed, runpath, origin, e, out, len) ||
		 find_in_cache(needed, e, out, len) ||
		 find_in_dirs(needed, default_dirs(e), origin, e, out, len))
		ret = 1;
	else
		ret = -1;
	if (ret < 0)
		snprintf(out, len, "%s", needed);
out:
	free(strtab);
	close(e->fd);
	free(e);
	return ret;
}

/* Is @lib already in the ':'/' '-separated @list? */
static bool listed(const char *list, const char *lib)
{
	size_t n = strlen(lib);

	for (const char *p = list; p && (p = strstr(p, lib)); p += n)
		if ((p == list || p[-1] == ':' || p[-1] == ' ') &&
		    (!p[n] || p[n] == ':' || p[n] == ' '))
			return true;
	return false;
}

/*
 * LD_PRELOAD with @lib appended (the program's own preloads come first and
 * keep interposing as they did; ours sees the calls they pass on), and
 * @first (a sanitizer runtime), if any, before everything.
 */
static int set_ld_preload(const char *first, const char *lib)
{
	const char *cur = getenv("LD_PRELOAD");
	char *v;
	int ret;

	if (!cur)
		cur = "";
	if (first && listed(cur, first))
		first = NULL;
	if (asprintf(&v, "%s%s%s%s%s", first ? first : "", first ? ":" : "",
		     cur, *cur ? ":" : "", lib) < 0)
		return -ENOMEM;
	ret = setenv("LD_PRELOAD", v, 1) ? -errno : 0;
	free(v);
	return ret;
}

/* ACTRACK_ENV_IMAGE="PID": the image we exec() is PID's first tracked one. */
static int mark_first_image(void)
{
	char pid[24];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return setenv(ACTRACK_ENV_IMAGE, pid, 1) ? -errno : 0;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-follow", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char lib[PATH_MAX], prog[PATH_MAX], runtime[PATH_MAX];
	bool follow = true;
	const char *why;
	int opt, ret, rt;

	opterr = 0;
	/* '+': PROGRAM's own options are not ours. */
	while ((opt = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			follow = false;
			break;
		case 'h':
			fputs(cli_help_page("run"), stdout);
			return 0;
		default:
			return cli_getopt_error("run", opt, argv);
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
	rt = sanitizer_runtime(prog, runtime, sizeof(runtime));
	if (rt < 0)
		cli_errorf("run: %s needs the sanitizer runtime %s, which "
			   "was not found: run it as LD_PRELOAD=/path/to/%s "
			   "actrack run -- %s", prog, runtime, runtime,
			   argv[optind]);
	ret = set_ld_preload(rt > 0 ? runtime : NULL, lib);
	if (!ret && cli.arena)
		ret = setenv(ACTRACK_ENV_ARENA, cli.arena, 1) ? -errno : 0;
	/* One line on stderr if the program cannot be tracked. */
	if (!ret)
		ret = setenv(ENV_NOTICE, "1", 1) ? -errno : 0;
	if (!ret)
		ret = follow ? (unsetenv(ENV_NO_FOLLOW) ? -errno : 0) :
			       (setenv(ENV_NO_FOLLOW, "1", 1) ? -errno : 0);
	/* The program attaches before it runs, whether it ever blocks or
	 * not (its children wait for their first push): lib/attach.c. */
	if (!ret)
		ret = mark_first_image();
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
