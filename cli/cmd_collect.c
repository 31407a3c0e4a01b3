// SPDX-License-Identifier: MIT
/* actrack collect: free the records of exited processes in a file arena. */
#include <errno.h>
#include <string.h>
#include "cli.h"

static const char collect_help[] =
"NAME\n"
"    actrack collect - free the records of exited processes (file arenas)\n"
"\n"
"SYNOPSIS\n"
"    actrack [--arena FILE] collect\n"
"\n"
"DESCRIPTION\n"
"    With the module, the kernel frees a process's records when it exits.\n"
"    A file arena keeps them until the launching parent reports the exit\n"
"    (actrack_record_process_exit()) or a garbage collector runs, so\n"
"    'actrack ps' lists them as dead.  collect is that collector: every\n"
"    process whose pid no longer exists, or now belongs to a process with\n"
"    another start time, is dead, and its records are freed for reuse.\n"
"    It writes to the arena (it needs write access to the file) but does\n"
"    not register itself in it.  Saved images are never changed.\n"
"\n"
"OUTPUT\n"
"    collected 3 exited processes (41 records); 2 running processes kept\n"
"\n"
"OPTIONS\n"
"    -h, --help\n"
"        Print this help.\n"
"\n"
"EXIT STATUS\n"
"    0 on success (also when there was nothing to collect, or the arena\n"
"    is the module's), 1 if the arena cannot be read or written or is a\n"
"    saved image, 2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"    actrack collect\n"
"    ACTRACK_ARENA=/tmp/test.arena actrack collect && actrack ps\n";

int cmd_collect(int argc, char **argv)
{
	struct actrack_collect_stats st;
	char reason[128];
	const char *name;
	int ret;

	ret = cli_simple_args(argc, argv, collect_help, 0, 0);
	if (ret >= 0)
		return ret;
	ret = actrack_arena_collect(cli.arena,
				    cli.arena ? ACTRACK_SNAP_ARENA_FILE : 0,
				    &st);
	if (ret == -EOPNOTSUPP) {
		puts("nothing to collect: actrack.ko frees the records of each "
		     "process when it exits");
		return 0;
	}
	if (ret) {
		name = cli_arena_name();
		if (ret == -EROFS)
			cli_errorf("%s: is a saved image: refusing to change it",
				   name);
		else
			cli_errorf("%s: %s", name,
				   cli_arena_strerror(name, ret, reason,
						      sizeof(reason)));
		return 1;
	}
	printf("collected %u exited process%s (%u record%s); %u running "
	       "process%s kept", st.dead, st.dead == 1 ? "" : "es",
	       st.records_freed, st.records_freed == 1 ? "" : "s", st.alive,
	       st.alive == 1 ? "" : "es");
	/* Their liveness cannot be read from this namespace's /proc. */
	if (st.foreign)
		printf("; %u process%s of another pid namespace kept",
		       st.foreign, st.foreign == 1 ? "" : "es");
	putchar('\n');
	return ferror(stdout) ? 1 : 0;
}
