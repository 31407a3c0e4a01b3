/* SPDX-License-Identifier: MIT */
/*
 * The snapshot reader's entry point for an arena that is already mapped
 * (lib/snapshot.c), shared with lib/save.c, which verifies that a saved
 * image parses before writing it.  Private: never installed.
 */
#ifndef ACTRACK_LIB_SNAPSHOT_H
#define ACTRACK_LIB_SNAPSHOT_H

#include "internal.h"

/*
 * __actrack_snapshot_arena() - snapshot of @a, which must be read-only
 * (a->writable false: nothing is ever stored into it).  The header is
 * checked first.  Return: 0 and *@out, or the errnos of
 * actrack_snapshot_take().
 */
__actrack_hidden int __actrack_snapshot_arena(struct actrack_arena *a,
					      struct actrack_snapshot **out);

#endif /* ACTRACK_LIB_SNAPSHOT_H */
