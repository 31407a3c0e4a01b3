/* SPDX-License-Identifier: MIT */
/*
 * The tests' reader of a minidump's directory (cli/minidump.c writes it):
 * the header, then one (type, size, offset) entry per stream, and the
 * Crashpad annotations.  Checks
 * every bound, so that a test of a broken file fails instead of reading
 * past it.  Compiled once, in helpers/minidump_read.c, which the death
 * fuzzer (fuzz/death_fuzz.c) links too: one reader.
 */
#ifndef ACTRACK_TEST_MINIDUMP_READ_H
#define ACTRACK_TEST_MINIDUMP_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The little-endian 32-bit word at @p. */
uint32_t md_u32(const uint8_t *p);

/* A minidump header whose directory, and every stream it lists, lie
 * inside the @len-byte file @buf. */
bool md_check(const uint8_t *buf, size_t len);

/* Stream @type of the @len-byte file @buf: its offset and size, which
 * lie inside the file.  False if the file is no minidump, or has no such
 * stream. */
bool md_stream(const uint8_t *buf, size_t len, uint32_t type, uint32_t *rva,
	       uint32_t *size);

/*
 * The value of Crashpad simple annotation @key (CrashpadInfo stream,
 * 0x43500001) in @val, cut to @len.  False if the file has no such
 * annotation or a bound is broken.
 */
bool md_annotation(const uint8_t *buf, size_t len, const char *key,
		   char *val, size_t val_len);

#endif /* ACTRACK_TEST_MINIDUMP_READ_H */
