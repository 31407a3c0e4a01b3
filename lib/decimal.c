// SPDX-License-Identifier: MIT
/*
 * Decimal numbers read and written by hand, not with strtoull(), sscanf()
 * and snprintf(): every image a tracked shell starts reads and writes the
 * exec-chain mark, and every attach reads its start time from /proc and
 * names its arena; the C library's conversions are pages of code (and a
 * locale's tables) that most of those images never touch otherwise, and
 * in a guest without nested paging each page is a fault that costs more
 * than the rest of the start.
 */
#include "internal.h"

const char *__actrack_dec_parse(const char *p, unsigned long long *n)
{
	const char *start = p;

	*n = 0;
	for (; *p >= '0' && *p <= '9' && p - start < 19; p++)
		*n = *n * 10 + (unsigned long long)(*p - '0');
	return p > start ? p : NULL;
}

char *__actrack_dec_put(char *p, unsigned long long n)
{
	char d[20];
	int k = 0;

	do
		d[k++] = (char)('0' + n % 10);
	while ((n /= 10));
	while (k)
		*p++ = d[--k];
	*p = 0;
	return p;
}
