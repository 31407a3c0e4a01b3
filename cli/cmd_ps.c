// SPDX-License-Identifier: MIT
/* actrack ps: one line per tracked process. */
#include "cli.h"

int cmd_ps(int argc, char **argv)
{
	struct actrack_snapshot *s;
	char age[32];
	bool same_boot;
	uint64_t now;
	int ret;

	ret = cli_simple_args(argc, argv, "ps", 0, 0, true);
	if (ret >= 0)
		return ret;
	if (cli_snapshot(&s))
		return 1;
	now = cli_now(s, NULL);
	same_boot = cli_same_boot(s);
	printf("%7s  %-7s  %-17s  %9s  %7s  %s\n", "PID", "STATE", "PHASE",
	       "AGE", "THREADS", "COMMAND");
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		if (p->has_record)
			cli_duration(age, sizeof(age),
				     now > p->launch_time_ns ?
				     now - p->launch_time_ns : 0);
		printf("%7u  %-7s  %-17s  %9s  %7u  ", p->pid,
		       !same_boot || cli_process_foreign(p) ? "-" :
		       cli_process_running(p) ? "running" : "exited",
		       p->has_record ? actrack_phase_name(p->phase) : "-",
		       p->has_record ? age : "-", p->nr_threads);
		if (p->has_record)
			cli_print_escaped(stdout, p->cmdline,
					  sizeof(p->cmdline));
		else
			fputs("-", stdout);
		fputc('\n', stdout);
	}
	/* On stderr: the table stays a table for scripts. */
	cli_print_corrupt_note(stderr, s);
	if (s->header.lost_records)
		fprintf(stderr, "actrack: warning: %u records were not "
			"written, the arena was full: some processes or "
			"threads are missing here (actrack stats; "
			"actrack collect frees dead processes' records)\n",
			s->header.lost_records);
	actrack_snapshot_free(s);
	return ferror(stdout) ? 1 : 0;
}
