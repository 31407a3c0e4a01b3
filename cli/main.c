// SPDX-License-Identifier: MIT
/*
 * actrack: read what tracked processes are doing (or were doing when they
 * died) from an actrack arena, live or saved.
 *
 *   actrack [--arena FILE] COMMAND [OPTIONS]
 *
 * Global options come before the command; each command parses its own.
 * Exit codes: 0 success, 1 failure, 2 bad usage, 3 hung threads found.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "journal.h"

struct cli_globals cli;

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "dump", cmd_dump,
	  "print every process: stacks, annotations, modules, log" },
	{ "ps", cmd_ps, "list tracked processes" },
	{ "monitor", cmd_monitor,
	  "print death reports as tracked processes exit" },
	{ "hangs", cmd_hangs, "find hung threads and deadlocks" },
	{ "top", cmd_top, "refreshing view of every thread's activity" },
	{ "save", cmd_save, "save an image of the arena to a file" },
	{ "stats", cmd_stats, "arena usage and the module's counters" },
	{ "collect", cmd_collect,
	  "free the records of exited processes (file arenas)" },
	{ "deaths", cmd_deaths,
	  "list the death reports kept in the systemd journal" },
	{ "help", NULL, "help for a command: actrack help COMMAND" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_help(FILE *f)
{
	fputs(
"NAME\n"
"    actrack - inspect actrack activity arenas: what tracked processes and\n"
"    their threads are doing, or were doing when they crashed or hung\n"
"\n"
"SYNOPSIS\n"
"    actrack [--arena FILE] COMMAND [OPTIONS]\n"
"    actrack help [COMMAND]\n"
"    actrack --help | --version\n"
"\n"
"DESCRIPTION\n"
"    Programs linked with libactrack keep, for every thread, a small stack\n"
"    of activities (running a task, waiting for a lock, an event, a thread,\n"
"    a child process or I/O) with typed annotations, in a shared arena\n"
"    that outlives them: /dev/actrack when the actrack.ko module is\n"
"    loaded, else a file.  actrack reads that arena without ever writing\n"
"    to it and prints what it finds.\n"
"\n"
"COMMANDS\n", f);
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "    %-9s %s\n", commands[i].name, commands[i].summary);
	fputs(
"\n"
"OPTIONS\n"
"    --arena FILE\n"
"        Read the file arena or saved image FILE instead of the arena this\n"
"        user's processes attach to.\n"
"    -h, --help\n"
"        Print this help.  'actrack COMMAND --help' describes a command.\n"
"    -V, --version\n"
"        Print the version of actrack (that of libactrack, as\n"
"        'pkg-config --modversion libactrack' prints it) and of the arena\n"
"        ABI it reads.\n"
"\n"
"ENVIRONMENT\n"
"    ACTRACK_ARENA\n"
"        Path of the file arena to use when --arena is not given (the same\n"
"        variable that makes tracked programs use that file).\n"
"\n"
"    Without --arena or ACTRACK_ARENA, actrack reads /dev/actrack if the\n"
"    module is loaded, else /dev/shm/actrack-UID.\n"
"\n"
"EXIT STATUS\n"
"    0 on success, 1 if the arena cannot be read or a command fails,\n"
"    2 on a usage error, 3 if 'actrack hangs' found hung threads or\n"
"    'actrack monitor' timed out before its count of reports.\n"
"\n"
"EXAMPLES\n"
"    actrack ps\n"
"    actrack dump --pid 1234\n"
"    actrack save /tmp/hang.arena && actrack --arena /tmp/hang.arena dump\n"
"    ACTRACK_ARENA=/tmp/test.arena actrack stats\n", f);
}

static int run_command(const struct command *c, int argc, char **argv)
{
	/* Full getopt re-initialisation (glibc): each command parses its own
	 * options from its own argv. */
	optind = 0;
	return c->run(argc, argv);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int cmd_help(int argc, char **argv)
{
	const struct command *c;
	char help[] = "--help";
	char *args[3];

	if (argc < 2) {
		print_help(stdout);
		return 0;
	}
	if (argc > 2)
		return cli_usage_error("help", "help: too many arguments");
	c = find_command(argv[1]);
	if (!c)
		return cli_usage_error(NULL, "unknown command '%s'", argv[1]);
	if (!c->run)
		return cmd_help(1, argv);
	args[0] = argv[1];
	args[1] = help;
	args[2] = NULL;
	return run_command(c, 2, args);
}

enum { OPT_ARENA = 0x100, OPT_NOW };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "arena", required_argument, NULL, OPT_ARENA },
		/* Hidden: fixes "now" so that tests can compare output. */
		{ "now", required_argument, NULL, OPT_NOW },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const struct command *c;
	const char *env;
	int opt;

	env = getenv("ACTRACK_NOW_NS");
	if (env && *env) {
		if (cli_parse_u64(env, &cli.now_ns))
			return cli_usage_error(NULL, "ACTRACK_NOW_NS: not a "
					       "number of nanoseconds: '%s'",
					       env);
		cli.have_now = true;
	}

	opterr = 0;
	/* '+': stop at the command; its options are its own. */
	while ((opt = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_ARENA:
			if (!*optarg)
				return cli_usage_error(NULL, "--arena: empty "
						       "path");
			cli.arena = optarg;
			break;
		case OPT_NOW:
			if (cli_parse_u64(optarg, &cli.now_ns))
				return cli_usage_error(NULL, "--now: not a "
						       "number of nanoseconds:"
						       " '%s'", optarg);
			cli.have_now = true;
			break;
		case 'h':
			print_help(stdout);
			return 0;
		case 'V':
			/* The library's version (pkg-config --modversion
			 * libactrack prints the same). */
			printf("actrack %s (arena ABI %u.%u)\n",
			       actrack_version(), ACTRACK_ABI_MAJOR,
			       ACTRACK_ABI_MINOR);
			return 0;
		default:
			if (optopt == OPT_ARENA || optopt == OPT_NOW)
				return cli_usage_error(NULL, "%s: missing "
						       "argument",
						       argv[optind - 1]);
			return cli_usage_error(NULL, "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error(NULL, "missing command");
	c = find_command(argv[optind]);
	if (!c)
		return cli_usage_error(NULL, "unknown command '%s'",
				       argv[optind]);
	if (!c->run)
		return cmd_help(argc - optind, argv + optind);
	return run_command(c, argc - optind, argv + optind);
}
