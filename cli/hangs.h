/* SPDX-License-Identifier: MIT */
/*
 * What of `actrack hangs` (cli/cmd_hangs.c) other commands reuse: its
 * judgement of an image's waits, the name it gives a process, the uids
 * --all-users looks at.  The boot entry of the monitor (cli/previous_boot.c)
 * says with them what `hangs --previous-boot` would.
 */
#ifndef ACTRACK_CLI_HANGS_H
#define ACTRACK_CLI_HANGS_H

#include <stdint.h>
#include "actrack.h"

/* One hung or deadlocked thread: its verdict ("hang", "deadlock") and why,
 * as hangs prints them after "verdict: ". */
typedef int (*hangs_image_fn)(const struct actrack_snap_process *p,
			      uint32_t tid, const char *verdict,
			      const char *why, void *arg);

/*
 * hangs_image() - judge the waits of @s, an image read once (the previous
 * boot's, a saved one: no second look, no progress check), with the
 * defaults of `hangs` (waits older than 1 s): @fn for each hung thread, in
 * hangs' order.  Return: 0, @fn's first non-zero return, or -errno.
 */
int hangs_image(const struct actrack_snapshot *s, hangs_image_fn fn,
		void *arg);

/* The process's name as the kernel's comm (hangs --comm): its main
 * thread's name, else its command's base name; "" when neither. */
void hangs_process_comm(const struct actrack_snap_process *p, char *buf,
			size_t size);

/* The uids hangs --all-users looks at: 0 and the owner of every process
 * in /proc, sorted, each once; *@out malloc()ed (NULL: no memory). */
uint32_t hangs_list_uids(uint32_t **out);

#endif /* ACTRACK_CLI_HANGS_H */
