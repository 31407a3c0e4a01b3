/* SPDX-License-Identifier: MIT */
/*
 * Backtraces of dead threads: unwinding the registers and stack bytes
 * that actrack.ko copied as a thread died (struct actrack_death_stack)
 * with elfutils' libdwfl, over the ELF objects the death report names.
 * DWARF CFI (.eh_frame), so code built without frame pointers unwinds.
 */
#ifndef ACTRACK_CLI_UNWIND_H
#define ACTRACK_CLI_UNWIND_H

#include "actrack.h"
#include "backtrace.h"

/*
 * unwind_death_stack() - the frames of @st (of report @d) into @frames
 * (BT_MAX_FRAMES of them) and @bt.  Never fails: what stopped the unwind
 * early is in @bt->error (@why holds its text, @len bytes).  Reads only
 * the copied bytes, bounded; a hostile stack gives wrong frames at worst.
 */
void unwind_death_stack(const struct actrack_death *d,
			const struct actrack_death_stack *st,
			struct bt_frame *frames, struct backtrace *bt,
			char *why, size_t len);

/* The captured stack of thread @tid in @d, or NULL. */
const struct actrack_death_stack *
unwind_find_stack(const struct actrack_death *d, uint32_t tid);

#endif /* ACTRACK_CLI_UNWIND_H */
