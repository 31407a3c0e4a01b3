// SPDX-License-Identifier: MIT
/*
 * A program for run_preload that links libactrack.so itself: it pushes a
 * task activity (42) of its own, prints "pushed", and waits for its stdin
 * to close.  Under `actrack run` it must be one process in the arena, with
 * one tracker for its one thread: the preload's copy of the library stays
 * out of the way of the program's.
 */
#include <stdio.h>
#include <unistd.h>
#include <actrack.h>

int main(void)
{
	uint32_t tok = actrack_push_task(42);
	char c;

	puts(tok ? "pushed" : "untracked");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	actrack_pop(tok);
	return 0;
}
