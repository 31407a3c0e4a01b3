// SPDX-License-Identifier: MIT
/* actrack collect: free the records of exited processes in a file arena. */
#include <errno.h>
#include <string.h>
#include "cli.h"

int cmd_collect(int argc, char **argv)
{
	struct actrack_collect_stats st;
	char reason[128];
	const char *name;
	int ret;

	ret = cli_simple_args(argc, argv, "collect", 0, 0, false);
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
