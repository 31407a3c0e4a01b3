// SPDX-License-Identifier: MIT
/*
 * An unmodified program for run_title: it sets its process title as
 * PostgreSQL and nginx do (setproctitle style: it overwrites the memory of
 * its argument strings, which /proc/PID/cmdline shows), to
 * "run_title: worker ready", after it started (the tracking library read
 * its command line at attach).  Prints "titled", then reads stdin until it
 * is closed.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TITLE	"run_title: worker ready"

int main(int argc, char **argv)
{
	char *start = argv[0], *end = argv[argc - 1] +
				      strlen(argv[argc - 1]) + 1;
	char c;

	/* The arguments are contiguous: room for the title if they hold
	 * as many bytes (the test passes a long enough argument). */
	if ((size_t)(end - start) < sizeof(TITLE))
		return 2;
	memset(start, 0, (size_t)(end - start));
	memcpy(start, TITLE, sizeof(TITLE));
	puts("titled");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
