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

/* What each command does is said once, in its man page (cli_help_page()). */
struct command {
	const char *name;
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "dump", cmd_dump },
	{ "ps", cmd_ps },
	{ "monitor", cmd_monitor },
	{ "hangs", cmd_hangs },
	{ "top", cmd_top },
	{ "save", cmd_save },
	{ "stats", cmd_stats },
	{ "collect", cmd_collect },
	{ "deaths", cmd_deaths },
	{ "run", cmd_run },
	{ "help", NULL },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* actrack(1), made from man/actrack.1 at build time. */
static void print_help(FILE *f)
{
	fputs(cli_help_page(""), f);
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
