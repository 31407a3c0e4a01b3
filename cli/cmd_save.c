// SPDX-License-Identifier: MIT
/* actrack save: keep an image of the arena for later analysis. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli.h"

static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	}
	return "not a regular file";
}

/* Say why OUTPUT was not written, naming what it is when it was refused. */
static void report_output_error(const char *out, int err)
{
	struct stat st;

	if ((err == -EINVAL || err == -EISDIR) && !stat(out, &st) &&
	    !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		cli_errorf("%s: is %s, not a file to save into: refused "
			   "(use '-' for standard output)", out,
			   file_kind(st.st_mode));
		return;
	}
	if (err == -ENOENT && !lstat(out, &st) && S_ISLNK(st.st_mode)) {
		cli_errorf("%s: dangling symbolic link: refused", out);
		return;
	}
	cli_error(out, err);
}

int cmd_save(int argc, char **argv)
{
	struct actrack_snapshot *s;
	uint32_t flags;
	const char *out;
	int ret;

	ret = cli_simple_args(argc, argv, "save", 1, 1, true);
	if (ret >= 0)
		return ret;
	flags = (cli.arena ? ACTRACK_SNAP_ARENA_FILE : 0) |
		(cli.previous_boot ? ACTRACK_SNAP_PREVIOUS_BOOT : 0);
	out = argv[optind];
	if (!*out)
		return cli_usage_error("save", "save: OUTPUT is an empty file "
				       "name (give a path, or '-' for "
				       "standard output)");
	if (!strcmp(out, "-") && isatty(STDOUT_FILENO)) {
		cli_errorf("-: standard output is a terminal: refusing to "
			   "write a binary image to it");
		return 1;
	}
	/* Read the arena first, so that its problems are reported against
	 * its name and the save's only against OUTPUT. */
	if (cli_snapshot(&s))
		return 1;
	actrack_snapshot_free(s);
	if (!strcmp(out, "-")) {
		ret = actrack_arena_save_fd(cli.arena, flags, STDOUT_FILENO);
		if (ret) {
			cli_error("standard output", ret);
			return 1;
		}
		return 0;
	}
	ret = actrack_arena_save(cli.arena, flags, out);
	if (ret) {
		report_output_error(out, ret);
		return 1;
	}
	return 0;
}
