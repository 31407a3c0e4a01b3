/* SPDX-License-Identifier: MIT */
/*
 * A death's stacks at death (struct actrack_death_stack: each thread's
 * registers and stack bytes) as one binary value, the ACTRACK_STACKS
 * field of a journal entry (`actrack monitor --journal-stacks`), and read
 * back from it (`actrack deaths export`).  Little-endian, every field by
 * its offset; version 1:
 *
 *   header, 12 bytes:  u32 version (1), u32 nr_regs (17), u32 nr_threads
 *   per thread, 156 bytes then the stack:
 *                      u32 tid, u32 flags (ACTRACK_STACK_*), u64 sp,
 *                      u64 regs[nr_regs] (DWARF order: rax, rdx, rcx,
 *                      rbx, rsi, rdi, rbp, rsp, r8-r15, rip),
 *                      u32 size, then size bytes: memory [sp, sp + size)
 *
 * nothing after the last thread.  Documented in actrack-deaths(1).
 */
#ifndef ACTRACK_CLI_DEATH_STACKS_H
#define ACTRACK_CLI_DEATH_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include "actrack.h"

#define DEATH_STACKS_VERSION	1
#define DEATH_STACKS_HEADER	12
#define DEATH_STACKS_RECORD	(4 + 4 + 8 + 8 * ACTRACK_STACK_NR_REGS + 4)
/* Bounds on what a field from outside may make us allocate. */
#define DEATH_STACKS_MAX_THREADS	65536
#define DEATH_STACKS_MAX_BYTES		(1U << 20)	/* per thread */

/*
 * death_stacks_encode() - @d's stacks in a new buffer (*@out, *@len;
 * free it).  A stack without bytes is kept with size 0.
 * Return: 0, -ENOMEM, -EFBIG (over the bounds above).
 */
int death_stacks_encode(const struct actrack_death *d, uint8_t **out,
			size_t *len);

/*
 * death_stacks_decode() - the @len bytes of @buf (from outside: every
 * length is checked) as @d's stacks: d->stacks and d->nr_stacks, each
 * stack's bytes copied.  Nothing is kept of a value that is not whole
 * and exact (a wrong version or register count, a record or a stack
 * past the end, bytes after the last, over the bounds): -EBADMSG, and
 * d->stacks stays NULL.  Free with death_stacks_free().
 * Return: 0, -EBADMSG, -ENOMEM.
 */
int death_stacks_decode(const uint8_t *buf, size_t len,
			struct actrack_death *d);

void death_stacks_free(struct actrack_death *d);

#endif /* ACTRACK_CLI_DEATH_STACKS_H */
