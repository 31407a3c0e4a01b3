// SPDX-License-Identifier: MIT
/*
 * An unmodified program for run_preload, built as distributions build
 * (-O2 -D_FORTIFY_SOURCE=2): its read() of stdin, into a buffer whose
 * size the compiler knows and with a count it does not, is a call of
 * __read_chk.  Prints "reading", then reads stdin until it is closed.
 */
#undef _FORTIFY_SOURCE
#define _FORTIFY_SOURCE 2
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[64];
	/* Not a constant: the fortified read() calls __read_chk. */
	size_t n = (size_t)argc * 16;

	(void)argv;
	puts("reading");
	fflush(stdout);
	while (read(0, buf, n) > 0)
		;
	return 0;
}
