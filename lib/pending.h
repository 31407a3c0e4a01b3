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

/* What actrack_arena_collect() found. */
struct actrack_collect_stats {
	uint32_t alive;		/* processes still running: kept */
	uint32_t dead;		/* exited processes whose records were freed */
	uint32_t records_freed;
};

/*
 * actrack_arena_collect() - actrack_collect_garbage() for an arena this
 * process is not attached to (and does not attach to): frees the records
 * of every (pid, start_ticks) that no longer names a live process.  @path
 * with ACTRACK_SNAP_ARENA_FILE is a file arena; NULL and 0 mean the arena
 * a process would attach to.  Never creates a file.  @st (may be NULL)
 * gets the counts.  Context: any thread; needs write access to the file.
 * Return: 0, -EOPNOTSUPP (the module's arena: the kernel frees records at
 * each exit), -EROFS (a saved image, which is never rewritten), -EINVAL,
 * -ENOENT, -EBADMSG/-EUCLEAN (not an arena), -errno.
 */
ACTRACK_API int actrack_arena_collect(const char *path, uint32_t flags,
				      struct actrack_collect_stats *st);

#endif /* ACTRACK_PENDING_H */
