// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the arena core: every walk over an arena whose
 * bytes the fuzzer controls must stay in bounds, terminate, and never write
 * to a read-only arena.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude/uapi -Iarena \
 *	fuzz/arena_fuzz.c arena/arena.c -o arena_fuzz
 *   ./arena_fuzz -max_total_time=60
 *
 * Input: the modes of fuzz_arena_modes.h; flags bit 0: writable.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_arena_modes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const __u32 types[] = {
	ACTRACK_TYPE_THREAD, ACTRACK_TYPE_USER_DATA, ACTRACK_TYPE_PROCESS,
	ACTRACK_TYPE_LOG, ACTRACK_TYPE_MODULE,
};

static __u32 publish(struct actrack_arena *a, __u32 type, __u32 size,
		     __u32 pid, __u32 tid)
{
	struct actrack_owner *o;
	__u32 ref = actrack_arena_alloc(a, type, size);

	o = actrack_arena_get(a, ref, type, sizeof(*o));
	if (!o)
		return 0;
	o->pid = pid;
	o->tid = tid;
	o->start_ticks = pid;
	if (type == ACTRACK_TYPE_THREAD)
		((struct actrack_thread *)o)->slot_count = 4;
	at_store_release(&o->data_id, actrack_arena_new_data_id(a));
	return ref;
}

static void populate(struct actrack_arena *a, int flags)
{
	struct actrack_thread *t;
	__u32 pid, t_ref, d_ref;

	for (pid = 1; pid <= 3; pid++) {
		publish(a, ACTRACK_TYPE_PROCESS, sizeof(struct actrack_process),
			pid, 0);
		t_ref = publish(a, ACTRACK_TYPE_THREAD,
				ACTRACK_THREAD_DATA_END(4), pid, pid);
		d_ref = publish(a, ACTRACK_TYPE_USER_DATA, 128, pid, pid);
		/* A tracker as the library makes it: held set, data list. */
		t = actrack_arena_get(a, t_ref, ACTRACK_TYPE_THREAD,
				      ACTRACK_THREAD_DATA_END(4));
		if (t) {
			t->flags = ACTRACK_THREAD_HELD | ACTRACK_THREAD_DATA;
			ACTRACK_THREAD_DATA_REFS(t)[pid % 4] = d_ref;
		}
		publish(a, ACTRACK_TYPE_LOG, sizeof(struct actrack_log) + 256,
			pid, 0);
		publish(a, ACTRACK_TYPE_MODULE, sizeof(struct actrack_module),
			pid, 0);
	}
}

static void exercise(struct actrack_arena *a, __u32 seed)
{
	static struct actrack_thread_copy copy;
	static unsigned char buf[1024];
	struct actrack_owner_key k;
	struct actrack_arena_iter it;
	__u32 ref, type, steps = 0, i, thread_ref = 0;

	(void)actrack_arena_check(a);
	actrack_arena_iter_init(&it, a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type))) {
		if (ref < ACTRACK_ARENA_HEADER_SIZE || ref % 64 || ref >= a->size)
			abort();
		if (++steps > actrack_arena_max_blocks(a))
			abort();	/* the walk must be bounded */
		(void)actrack_arena_get(a, ref, type, 0);
		if (type == ACTRACK_TYPE_THREAD && (seed >> 7) % 4 == steps % 4)
			thread_ref = ref;
		(void)actrack_arena_copy_thread(a, ref, &copy);
		for (i = 0; i < 5; i++)
			(void)actrack_arena_copy_owned(a, ref, types[i], buf,
						       sizeof(buf));
	}
	/* The kernel's free of one exited thread, at a ref from the input. */
	k.pid = 1 + seed % 3;
	k.pid_ns = seed & 16 ? ACTRACK_PID_NS_ANY : 0;
	k.start_ticks = k.pid;
	(void)actrack_arena_free_thread(a, &k, 1 + (seed >> 5) % 3,
					thread_ref ? thread_ref : seed & 0xffc0);
	(void)actrack_arena_find_process(a, 1 + seed % 3, 1 + seed % 3);
	(void)actrack_arena_free_owner(a, 1 + seed % 3, 1 + seed % 3,
				       seed & 4 ? 1 + seed % 3 : 0);
	ref = actrack_arena_alloc(a, types[seed % 5], (seed >> 8) % 4096);
	if (ref && (ref < ACTRACK_ARENA_HEADER_SIZE || ref >= a->size))
		abort();
	actrack_arena_make_iterable(a, seed & 0xffc0);
	(void)actrack_arena_free(a, seed & 0xffc0, types[(seed >> 3) % 5]);
	if (actrack_arena_used(a) > a->size ||
	    actrack_arena_free_bytes(a) > a->size)
		abort();
	(void)actrack_arena_is_corrupt(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char *mem, *ro_copy;
	struct actrack_arena a;
	__u32 seed = 0;
	size_t i;
	int flags;

	if (!mem) {
		mem = malloc(FUZZ_SIZE);
		ro_copy = malloc(FUZZ_SIZE);
		if (!mem || !ro_copy)
			abort();
	}
	flags = fuzz_arena_from_input(&a, mem, data, size, populate);
	if (flags < 0)
		return 0;
	for (i = 2; i < size && i < 6; i++)
		seed = seed << 8 | data[i];
	a.writable = flags & 1;
	if (!a.writable)
		memcpy(ro_copy, mem, FUZZ_SIZE);
	exercise(&a, seed);
	/* a read-only arena must come out bit for bit unchanged */
	if (!a.writable && memcmp(ro_copy, mem, FUZZ_SIZE))
		abort();
	return 0;
}
