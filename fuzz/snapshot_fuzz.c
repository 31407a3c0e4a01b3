// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the analyzer's reader of `--arena FILE`: an
 * arbitrary file (a saved image or file arena anyone could have written)
 * read through the public snapshot API, actrack_snapshot_take(path,
 * ACTRACK_SNAP_ARENA_FILE), exactly as `actrack dump --arena FILE` does.
 *
 * The file is a memfd named by /proc/self/fd/N, so each run costs no disk
 * I/O.  The library maps it read-only (a write would fault) with page
 * granularity, so an overread of up to a page past its end would go
 * unseen there; the same image is therefore also given to the snapshot
 * core (__actrack_snapshot_arena) in a heap buffer of exactly its size,
 * where ASan reports any access outside it, and must come back unchanged.
 * Both must return the same verdict, and every snapshot must keep the
 * contract of include/actrack.h (fuzz_check_snapshot()).
 *
 * Input: the file; see fuzz_arena_input.h for how a short input stands
 * for a mostly-zero arena.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "fuzz_arena_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char path[64];

static void put_file(const uint8_t *img, size_t len)
{
	if (memfd < 0) {
		memfd = memfd_create("actrack-fuzz-arena", MFD_CLOEXEC);
		if (memfd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) || ftruncate(memfd, (off_t)len) ||
	    pwrite(memfd, img, len, 0) != (ssize_t)len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct actrack_snapshot *s1 = NULL, *s2 = NULL;
	struct actrack_arena a;
	uint8_t *img, *orig;
	size_t len;
	int r1, r2;

	img = fuzz_arena_image(data, size, &len);
	put_file(img, len);
	r1 = actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s1);
	if (r1 == 0)
		fuzz_check_snapshot(s1, len);
	else if (s1)
		abort();

	/* The same bytes in an exact heap buffer, read-only by contract. */
	orig = malloc(len ? len : 1);
	if (!orig)
		abort();
	memcpy(orig, img, len);
	if (len >= ACTRACK_ARENA_HEADER_SIZE && len <= ACTRACK_ARENA_MAX_SIZE) {
		a = (struct actrack_arena){ .base = img, .size = (__u32)len,
					    .writable = false };
		r2 = __actrack_snapshot_arena(&a, &s2);
		if (r2 == 0)
			fuzz_check_snapshot(s2, len);
		/* Same bytes, same verdict (the file path adds only the
		 * size checks done before the arena core sees it). */
		if (r1 != r2)
			abort();
		if (memcmp(orig, img, len))
			abort();	/* a reader wrote into the arena */
	}
	actrack_snapshot_free(s1);
	actrack_snapshot_free(s2);
	free(orig);
	free(img);
	return 0;
}
