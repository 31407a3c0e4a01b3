/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz targets that read a whole arena file (snapshot_fuzz,
 * writers_fuzz): how a fuzz input becomes a file image, and what every
 * snapshot the library returns must satisfy, whatever the file said.
 *
 * An arena is at least ACTRACK_ARENA_MIN_SIZE (64 KiB) and everything past
 * its free pointer is zero, so a real arena is stored as its used prefix
 * (trailing zeros trimmed: seeds stay a few KiB and mutations land on the
 * bytes that matter) and the image is that prefix zero-padded to the size
 * its header claims, when the claim is larger than the input and at most
 * FUZZ_MAX_ARENA.  Any other input is the file exactly as given (short
 * files, sizes that disagree with the header, garbage).
 */
#ifndef ACTRACK_FUZZ_ARENA_INPUT_H
#define ACTRACK_FUZZ_ARENA_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "actrack.h"

#define FUZZ_MAX_ARENA	(256U * 1024)

/* The file image of @data (malloc'ed, exactly *@len bytes). */
static inline uint8_t *fuzz_arena_image(const uint8_t *data, size_t size,
					size_t *len)
{
	size_t off = offsetof(struct actrack_arena_header, size);
	uint32_t claimed = 0;
	uint8_t *img;

	*len = size;
	if (size >= off + sizeof(claimed))
		memcpy(&claimed, data + off, sizeof(claimed));
	if (claimed > size && claimed <= FUZZ_MAX_ARENA)
		*len = claimed;
	img = calloc(1, *len ? *len : 1);
	if (!img)
		abort();
	memcpy(img, data, size);
	return img;
}

static inline void fuzz_check_values(const struct actrack_value *v,
				     uint32_t nr)
{
	if (nr && !v)
		abort();
	for (uint32_t i = 0; i < nr; i++) {
		if (!memchr(v[i].name, 0, sizeof(v[i].name)))
			abort();
		if (v[i].type == 0 || v[i].type > ACTRACK_VALUE_MAX)
			abort();
		if ((v[i].type == ACTRACK_VALUE_RAW ||
		     v[i].type == ACTRACK_VALUE_STRING) &&
		    (!v[i].bytes || v[i].bytes[v[i].size]))
			abort();
	}
}

/*
 * The snapshot contract of include/actrack.h: counts match their arrays,
 * text is terminated, a torn thread carries no activities, the byte
 * counts are each within the arena.  Any violation is a library bug that a
 * consumer (the CLI, a user program) would turn into an overread.
 */
static inline void fuzz_check_snapshot(const struct actrack_snapshot *s,
				       size_t file_len)
{
	uint32_t torn = 0;

	if (s->header.size != file_len)
		abort();
	/* Free blocks count in both: each is bounded, not their sum. */
	if (s->used_bytes > s->header.size || s->free_bytes > s->header.size)
		abort();
	if (s->nr_processes && !s->processes)
		abort();
	fuzz_check_values(s->global_values, s->nr_global_values);
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		if (!memchr(p->cmdline, 0, sizeof(p->cmdline)))
			abort();
		if ((p->nr_threads && !p->threads) ||
		    (p->nr_logs && !p->logs) ||
		    (p->nr_modules && !p->modules))
			abort();
		fuzz_check_values(p->values, p->nr_values);
		for (uint32_t k = 0; k < p->nr_logs; k++)
			if (!memchr(p->logs[k].text, 0,
				    sizeof(p->logs[k].text)))
				abort();
		for (uint32_t k = 0; k < p->nr_modules; k++)
			if (!memchr(p->modules[k].path, 0,
				    sizeof(p->modules[k].path)) ||
			    p->modules[k].build_id_size > ACTRACK_BUILD_ID_MAX)
				abort();
		for (uint32_t k = 0; k < p->nr_threads; k++) {
			const struct actrack_snap_thread *t = &p->threads[k];

			if (t->pid != p->pid)
				abort();
			if (!memchr(t->name, 0, sizeof(t->name)))
				abort();
			if (t->nr_activities > ACTRACK_THREAD_MAX_SLOTS ||
			    t->nr_activities > t->depth ||
			    (t->nr_activities && !t->activities))
				abort();
			if (t->torn && t->nr_activities)
				abort();
			torn += t->torn;
			for (uint32_t n = 0; n < t->nr_activities; n++)
				fuzz_check_values(t->activities[n].values,
						  t->activities[n].nr_values);
		}
	}
	if (torn > s->nr_torn)
		abort();
}

#endif /* ACTRACK_FUZZ_ARENA_INPUT_H */
