// SPDX-License-Identifier: MIT
/*
 * The tests' reader of a minidump's directory (minidump_read.h).
 */
#include <string.h>
#include "minidump_read.h"

uint32_t md_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

bool md_stream(const uint8_t *buf, size_t len, uint32_t type, uint32_t *rva,
	       uint32_t *size)
{
	uint32_t nr, dir;

	if (len < 32 || memcmp(buf, "MDMP", 4))
		return false;
	nr = md_u32(buf + 8);
	dir = md_u32(buf + 12);
	if (dir > len || nr > (len - dir) / 12)
		return false;
	for (uint32_t i = 0; i < nr; i++) {
		const uint8_t *e = buf + dir + 12 * i;

		if (md_u32(e) != type)
			continue;
		*size = md_u32(e + 4);
		*rva = md_u32(e + 8);
		return *rva <= len && *size <= len - *rva;
	}
	return false;
}
