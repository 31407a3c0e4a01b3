/* SPDX-License-Identifier: MIT */
/*
 * Symbolization of activity origins and fault pcs with elfutils' libdwfl,
 * from the MODULE records a process left in the arena (path, load bias,
 * build-id).  Only the files are needed, so it works after the process is
 * gone, and on a saved image as long as the binaries are still on disk.
 */
#ifndef ACTRACK_CLI_SYMBOLIZE_H
#define ACTRACK_CLI_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "actrack.h"

struct symbolizer;

/* What is known about one address; strings point into the symbolizer (or
 * the snapshot) and stay valid until the next call on the symbolizer (its
 * cache keeps most of them until sym_free(), but not all). */
struct sym_info {
	const char *module;		/* path of the containing module */
	uint64_t module_offset;		/* pc - load bias (addr2line's) */
	const char *function;		/* NULL if unknown */
	uint64_t function_offset;
	const char *inlined_in;		/* @function was inlined into this */
	const char *file;		/* source file, NULL if unknown */
	int line;			/* 0 if unknown */
	const char *note;		/* why less is known, or NULL */
};

/*
 * Distinct (file, address in the file) answers a symbolizer keeps: past
 * these, lookups are still right, only not cached (symbolize.c).
 */
#define SYM_CACHE_MAX		3072

/* A symbolizer; caches the module lists it met, the files they name and
 * the answers per address, so it can be kept across snapshots (actrack
 * top).  NULL on ENOMEM. */
struct symbolizer *sym_new(void);
void sym_free(struct symbolizer *sym);

/*
 * sym_lookup() - what @pc is in a process whose loaded objects are
 * @mods[0..@nr_mods): the MODULE records of a snapshot process or of a
 * death report, or records made from a live process (stacks.c).  Only the
 * module list matters, so every source passes its own.  Return: true if
 * @pc is in one of them (@out filled; @out->function may still be NULL),
 * false if not (only the raw address is known).
 */
bool sym_lookup(struct symbolizer *sym, const struct actrack_snap_module *mods,
		uint32_t nr_mods, uint64_t pc, struct sym_info *out);

/*
 * sym_format() - one printable token for @pc:
 *   "lock_both+0x3c (demo.c:38)", "lock_both+0x3c [inlined into
 *   transfer_thread] (demo.c:38)", "libfoo.so+0x1234", "demo+0x1234
 *   (build-id mismatch)", or "0x7f12345678" when nothing resolves.
 * Escapes anything unprintable.  Return: @buf.
 */
char *sym_format(struct symbolizer *sym, const struct actrack_snap_module *mods,
		 uint32_t nr_mods, uint64_t pc, char *buf, size_t len);

/* sym_format() of a filled @info, e.g. from sym_lookup(). */
char *sym_format_info(const struct sym_info *info, uint64_t pc, char *buf,
		      size_t len);

#endif /* ACTRACK_CLI_SYMBOLIZE_H */
