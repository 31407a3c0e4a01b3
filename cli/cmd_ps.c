// SPDX-License-Identifier: MIT
/* actrack ps: one line per tracked process. */
#include "cli.h"

static const char ps_help[] =
"NAME\n"
"    actrack ps - list the processes recorded in the arena\n"
"\n"
"SYNOPSIS\n"
"    actrack [--arena FILE] ps\n"
"\n"
"DESCRIPTION\n"
"    Prints one line per process found in the arena, ordered by pid:\n"
"\n"
"    PID      the process id (two lines with one pid are two generations\n"
"             of it, told apart by their start time)\n"
"    STATE    running if that pid still names the process that started at\n"
"             that time, exited if not; '-' for an arena of another (or\n"
"             an unknown) boot, or a process of another pid namespace\n"
"             (a container's), where it cannot be told\n"
"    PHASE    its phase: launched, main-loop-started, shutdown-started,\n"
"             exited-cleanly, ...; '-' if only its threads are recorded\n"
"    AGE      time since the process attached, on the arena's clock\n"
"    THREADS  number of threads with a tracker\n"
"    COMMAND  its command line (non-printable bytes escaped)\n"
"\n"
"    With the module, records of exited processes are freed by the\n"
"    kernel; with a file arena they stay until the launching parent or\n"
"    a garbage collector frees them ('actrack collect'), and ps lists\n"
"    them as exited.\n"
"\n"
"OPTIONS\n"
"    -h, --help\n"
"        Print this help.\n"
"\n"
"EXIT STATUS\n"
"    0 on success, 1 if the arena cannot be read, 2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"    actrack ps\n"
"    actrack --arena /tmp/crash.arena ps\n";

int cmd_ps(int argc, char **argv)
{
	struct actrack_snapshot *s;
	char age[32];
	bool same_boot;
	uint64_t now;
	int ret;

	ret = cli_simple_args(argc, argv, ps_help, 0, 0);
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
	actrack_snapshot_free(s);
	return ferror(stdout) ? 1 : 0;
}
