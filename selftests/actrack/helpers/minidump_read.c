// SPDX-License-Identifier: MIT
/*
 * The tests' reader of a minidump's directory (minidump_read.h).
 */
#include <stdio.h>
#include <string.h>
#include "minidump_read.h"

uint32_t md_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The header's stream count and directory offset, inside the file. */
static bool md_dir(const uint8_t *buf, size_t len, uint32_t *nr,
		   uint32_t *dir)
{
	if (len < 32 || memcmp(buf, "MDMP", 4))
		return false;
	*nr = md_u32(buf + 8);
	*dir = md_u32(buf + 12);
	return *dir <= len && *nr <= (len - *dir) / 12;
}

bool md_check(const uint8_t *buf, size_t len)
{
	uint32_t nr, dir;

	if (!md_dir(buf, len, &nr, &dir))
		return false;
	for (uint32_t i = 0; i < nr; i++) {
		const uint8_t *e = buf + dir + 12 * i;
		uint32_t size = md_u32(e + 4), rva = md_u32(e + 8);

		if (rva > len || size > len - rva)
			return false;
	}
	return true;
}

bool md_stream(const uint8_t *buf, size_t len, uint32_t type, uint32_t *rva,
	       uint32_t *size)
{
	uint32_t nr, dir;

	if (!md_dir(buf, len, &nr, &dir))
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

/* The MinidumpUTF8String at @rva: its bytes and length, inside the file. */
static const char *md_utf8(const uint8_t *buf, size_t len, uint32_t rva,
			   uint32_t *n)
{
	if (rva > len || len - rva < 4)
		return NULL;
	*n = md_u32(buf + rva);
	if (*n > len - rva - 4)
		return NULL;
	return (const char *)buf + rva + 4;
}

bool md_annotation(const uint8_t *buf, size_t len, const char *key,
		   char *val, size_t val_len)
{
	uint32_t rva, size, dict, nr, kn = 0, vn = 0;
	const char *k, *v;

	if (!md_stream(buf, len, 0x43500001U, &rva, &size) || size < 44)
		return false;
	dict = md_u32(buf + rva + 40);
	if (dict > len || len - dict < 4)
		return false;
	nr = md_u32(buf + dict);
	if (nr > (len - dict - 4) / 8)
		return false;
	for (uint32_t i = 0; i < nr; i++) {
		k = md_utf8(buf, len, md_u32(buf + dict + 4 + 8 * i), &kn);
		v = md_utf8(buf, len, md_u32(buf + dict + 8 + 8 * i), &vn);
		if (!k || !v)
			return false;
		if (kn != strlen(key) || memcmp(k, key, kn))
			continue;
		snprintf(val, val_len, "%.*s", (int)vn, v);
		return true;
	}
	return false;
}
