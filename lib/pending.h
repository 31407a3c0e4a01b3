/* SPDX-License-Identifier: MIT */
/*
 * Public libactrack functions added on the cli-fixes branch while
 * include/actrack.h belonged to another branch.  They are exported
 * (lib/libactrack.map) and documented here as they will be there: on
 * merge, move these declarations into include/actrack.h and delete this
 * file (cli/cli.h includes it).
 */
#ifndef ACTRACK_PENDING_H
#define ACTRACK_PENDING_H

#include "actrack.h"

/*
 * actrack_arena_save() writes @file according to what it names: a new
 * path or a regular file is replaced atomically by the complete image
 * (through a symbolic link, its target is replaced, never the link); a
 * fifo is written through; anything else is refused with -EISDIR (a
 * directory) or -EINVAL (a device, a socket), never replaced.
 *
 * actrack_arena_save_fd() - the same image, streamed to the open
 * descriptor @fd (standard output, a pipe); not atomic.  The image's
 * header records when it was taken (saved_mono_ns, saved_real_ns), and a
 * snapshot of an image reports that moment as its taken_mono_ns.
 * Context: any thread.  Return: 0/-errno (-EBADF for a negative @fd).
 */
ACTRACK_API int actrack_arena_save_fd(const char *path, uint32_t flags,
				      int fd);

#endif /* ACTRACK_PENDING_H */
