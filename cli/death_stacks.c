// SPDX-License-Identifier: MIT
/*
 * A death's stacks as the ACTRACK_STACKS journal field (see
 * death_stacks.h), written and read by offset, little-endian.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "death_stacks.h"

static void le_put(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t le_get(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int death_stacks_encode(const struct actrack_death *d, uint8_t **out,
			size_t *len)
{
	size_t n = DEATH_STACKS_HEADER, at;
	uint8_t *p;

	if (d->nr_stacks > DEATH_STACKS_MAX_THREADS)
		return -EFBIG;
	for (uint32_t i = 0; i < d->nr_stacks; i++) {
		if (d->stacks[i].bytes &&
		    d->stacks[i].size > DEATH_STACKS_MAX_BYTES)
			return -EFBIG;
		n += DEATH_STACKS_RECORD +
		     (d->stacks[i].bytes ? d->stacks[i].size : 0);
	}
	p = malloc(n);
	if (!p)
		return -ENOMEM;
	le_put(p, DEATH_STACKS_VERSION, 4);
	le_put(p + 4, ACTRACK_STACK_NR_REGS, 4);
	le_put(p + 8, d->nr_stacks, 4);
	at = DEATH_STACKS_HEADER;
	for (uint32_t i = 0; i < d->nr_stacks; i++) {
		const struct actrack_death_stack *s = &d->stacks[i];
		uint32_t size = s->bytes ? s->size : 0;

		le_put(p + at, s->tid, 4);
		le_put(p + at + 4, s->flags, 4);
		le_put(p + at + 8, s->sp, 8);
		for (int r = 0; r < ACTRACK_STACK_NR_REGS; r++)
			le_put(p + at + 16 + 8 * r, s->regs[r], 8);
		le_put(p + at + DEATH_STACKS_RECORD - 4, size, 4);
		at += DEATH_STACKS_RECORD;
		if (size)
			memcpy(p + at, s->bytes, size);
		at += size;
	}
	*out = p;
	*len = n;
	return 0;
}

/* Check the whole value before allocating anything: its thread count. */
static int check(const uint8_t *buf, size_t len, uint32_t *nr)
{
	size_t at = DEATH_STACKS_HEADER;

	if (len < DEATH_STACKS_HEADER ||
	    le_get(buf, 4) != DEATH_STACKS_VERSION ||
	    le_get(buf + 4, 4) != ACTRACK_STACK_NR_REGS)
		return -EBADMSG;
	*nr = (uint32_t)le_get(buf + 8, 4);
	if (*nr > DEATH_STACKS_MAX_THREADS)
		return -EBADMSG;
	for (uint32_t i = 0; i < *nr; i++) {
		uint64_t size;

		if (len - at < DEATH_STACKS_RECORD)
			return -EBADMSG;
		size = le_get(buf + at + DEATH_STACKS_RECORD - 4, 4);
		at += DEATH_STACKS_RECORD;
		if (size > DEATH_STACKS_MAX_BYTES || size > len - at)
			return -EBADMSG;
		at += size;
	}
	return at == len ? 0 : -EBADMSG;
}

int death_stacks_decode(const uint8_t *buf, size_t len,
			struct actrack_death *d)
{
	size_t at = DEATH_STACKS_HEADER;
	uint32_t nr;
	int ret;

	d->stacks = NULL;
	d->nr_stacks = 0;
	ret = check(buf, len, &nr);
	if (ret || !nr)
		return ret;
	d->stacks = calloc(nr, sizeof(*d->stacks));
	if (!d->stacks)
		return -ENOMEM;
	d->nr_stacks = nr;
	for (uint32_t i = 0; i < nr; i++) {
		struct actrack_death_stack *s = &d->stacks[i];

		s->tid = (uint32_t)le_get(buf + at, 4);
		s->flags = (uint32_t)le_get(buf + at + 4, 4);
		s->sp = le_get(buf + at + 8, 8);
		for (int r = 0; r < ACTRACK_STACK_NR_REGS; r++)
			s->regs[r] = le_get(buf + at + 16 + 8 * r, 8);
		s->size = (uint32_t)le_get(buf + at + DEATH_STACKS_RECORD - 4,
					   4);
		at += DEATH_STACKS_RECORD;
		if (s->size) {
			s->bytes = malloc(s->size);
			if (!s->bytes) {
				death_stacks_free(d);
				return -ENOMEM;
			}
			memcpy(s->bytes, buf + at, s->size);
		}
		at += s->size;
	}
	return 0;
}

void death_stacks_free(struct actrack_death *d)
{
	for (uint32_t i = 0; i < d->nr_stacks; i++)
		free(d->stacks[i].bytes);
	free(d->stacks);
	d->stacks = NULL;
	d->nr_stacks = 0;
}
