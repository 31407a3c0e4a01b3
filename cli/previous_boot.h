/* SPDX-License-Identifier: MIT */
/*
 * The previous boot's image as a whole (cli/previous_boot.c): every arena
 * the module's persist= region kept, of every uid root can name, read with
 * the snapshot walk of `ps --previous-boot`, and the one journal entry the
 * monitor writes about it at boot (actrack-deaths(1), "PREVIOUS BOOT").
 */
#ifndef ACTRACK_CLI_PREVIOUS_BOOT_H
#define ACTRACK_CLI_PREVIOUS_BOOT_H

#include <stdbool.h>
#include <stdint.h>
#include "actrack.h"

/* Where the monitor marks an image as logged: a directory under /run,
 * which every boot starts empty, holding one file per image, named
 * previous-boot.BOOTID (the image's boot id, 32 hex digits). */
#define PREVIOUS_BOOT_MARK_DIR	"/run/actrack"

struct boot_image {
	uint8_t boot_id[16];		/* of the first arena read */
	char boot_hex[33];		/* the same, as the journal writes ids */
	uint32_t nr_arenas;		/* read (of the uids looked at) */
	uint32_t nr_unreadable;		/* arenas whose header was refused */
	uint32_t nr_corrupt;		/* arenas with bad records skipped */
	uint32_t nr_torn;		/* threads with no consistent copy */
	uint32_t nr_lost;		/* records that were never written */
	uint32_t nr_processes;
	uint32_t *uids;			/* [nr_arenas] */
	struct actrack_snapshot **snaps;	/* [nr_arenas] */
};

/*
 * boot_image_read() - the arenas of the previous boot of uid 0, of every
 * user of the user database and of every uid that owns a process now:
 * the module cannot list the uids its image holds.  Needs CAP_SYS_ADMIN.
 * Return: 0 (at least one arena read), -ENODATA (no image, or none of
 * those uids in it), -EPERM, -ENOENT (no module), -ENOMEM, -errno.
 */
int boot_image_read(struct boot_image *img);
void boot_image_free(struct boot_image *img);

/*
 * previous_boot_log() - `monitor --journal`'s start: if the module keeps
 * a previous boot's image that no monitor of this boot has logged yet
 * (PREVIOUS_BOOT_MARK_DIR), write its one journal entry.  A failure is one
 * line on stderr, never more.  Return: true if an entry was written.
 */
bool previous_boot_log(void);

#endif /* ACTRACK_CLI_PREVIOUS_BOOT_H */
