// SPDX-License-Identifier: MIT
/* actrack save: keep an image of the arena for later analysis. */
#include <unistd.h>
#include "cli.h"

static const char save_help[] =
"NAME\n"
"    actrack save - save an image of the arena to a file\n"
"\n"
"SYNOPSIS\n"
"    actrack [--arena FILE] save OUTPUT\n"
"\n"
"DESCRIPTION\n"
"    Copies the whole arena into OUTPUT without writing to the arena.  The\n"
"    image is itself a valid file arena: 'actrack --arena OUTPUT dump'\n"
"    reads it later, after the processes or the machine are gone (e.g.\n"
"    attach it to a bug report).  Thread stacks and user data that were\n"
"    changing during the copy are replaced by consistent copies, and the\n"
"    image is parsed before it is written.  OUTPUT is written under a\n"
"    temporary name and renamed, so it is either complete or untouched;\n"
"    it is created with mode 0600, since an arena holds command lines and\n"
"    annotations.  An existing OUTPUT is replaced.\n"
"\n"
"OPTIONS\n"
"    -h, --help\n"
"        Print this help.\n"
"\n"
"EXIT STATUS\n"
"    0 on success, 1 if the arena cannot be read or OUTPUT cannot be\n"
"    written, 2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"    actrack save /tmp/hang-$(date +%s).arena\n"
"    actrack --arena /dev/shm/actrack-1000 save /tmp/copy.arena\n";

int cmd_save(int argc, char **argv)
{
	struct actrack_snapshot *s;
	const char *out;
	int ret;

	ret = cli_simple_args(argc, argv, save_help, 1, 1);
	if (ret >= 0)
		return ret;
	out = argv[optind];
	/* Read the arena first, so that its problems are reported against
	 * its name and the save's only against OUTPUT. */
	if (cli_snapshot(&s))
		return 1;
	actrack_snapshot_free(s);
	ret = actrack_arena_save(cli.arena, cli.arena ? ACTRACK_SNAP_ARENA_FILE
				 : 0, out);
	if (ret) {
		cli_error(out, ret);
		return 1;
	}
	return 0;
}
