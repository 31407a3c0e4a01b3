// SPDX-License-Identifier: MIT
/* actrack save: keep an image of the arena for later analysis. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli.h"

static const char save_help[] =
"NAME\n"
"    actrack save - save an image of the arena to a file\n"
"\n"
"SYNOPSIS\n"
"    actrack [--arena FILE] save OUTPUT | -\n"
"\n"
"DESCRIPTION\n"
"    Copies the whole arena into OUTPUT without writing to the arena.  The\n"
"    image is itself a valid file arena: 'actrack --arena OUTPUT dump'\n"
"    reads it later, after the processes or the machine are gone (e.g.\n"
"    attach it to a bug report).  Thread stacks and user data that were\n"
"    changing during the copy are replaced by consistent copies, and the\n"
"    image is parsed before it is written, and records when it was taken:\n"
"    readers measure ages from that moment, not from their own clock.\n"
"\n"
"    A new OUTPUT, or an existing regular file, is written under a\n"
"    temporary name and renamed, so it is either complete or untouched;\n"
"    it is created with mode 0600, since an arena holds command lines and\n"
"    annotations.  Through a symbolic link, the file it points to is\n"
"    replaced.  A fifo is written through.  Anything else (a device, a\n"
"    socket, a directory) is refused and left alone.  '-' writes the image\n"
"    to standard output (not to a terminal).\n"
"\n"
"OPTIONS\n"
"    -h, --help\n"
"        Print this help.\n"
"\n"
"EXIT STATUS\n"
"    0 on success, 1 if the arena cannot be read or OUTPUT cannot be\n"
"    written or is refused, 2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"    actrack save /tmp/hang-$(date +%s).arena\n"
"    actrack --arena /dev/shm/actrack-1000 save /tmp/copy.arena\n"
"    actrack save - | gzip > hang.arena.gz\n";

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
	uint32_t flags = cli.arena ? ACTRACK_SNAP_ARENA_FILE : 0;
	const char *out;
	int ret;

	ret = cli_simple_args(argc, argv, save_help, 1, 1);
	if (ret >= 0)
		return ret;
	out = argv[optind];
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
