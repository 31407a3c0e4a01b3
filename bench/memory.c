// SPDX-License-Identifier: MIT
/*
 * Memory: what each record costs in the arena, measured as the arena's
 * used bytes before and after (actrack_snapshot_take()), on a file arena:
 *
 *   per process      a child's actrack_init(): process record, and its ELF
 *                    module records (one per loaded object; the count is
 *                    printed), against the process record alone
 *   per thread       actrack_thread_init() with 8 and with 64 slots,
 *                    against the tracker's raw header + slots
 *   per slot         the 8 -> 64 slot difference / 56 (goal <= 64)
 *   per entry        process data: its 4096 field bytes / the int fields
 *                    that fit (8-byte names), against name + value bytes
 *   fill at failure  the arena core allocating 8-slot trackers into a
 *                    zeroed arena of 64 KiB, 4 MiB and 64 MiB until it
 *                    fails: used bytes against the size
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "actrack.h"
#include "arena.h"
#include "bench.h"

static char path[128];

static uint32_t used_bytes(void)
{
	struct actrack_snapshot *s;
	uint32_t u;

	if (actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s))
		return 0;
	u = s->used_bytes;
	actrack_snapshot_free(s);
	return u;
}

struct child_steps {
	uint32_t flags, slots;
};

/*
 * A child attaches (@flags, @slots), then makes its tracker; the parent
 * reads the used bytes after each step.  Return the two deltas.
 */
static int child_deltas(const struct child_steps *cs, uint32_t *proc,
			uint32_t *thread, int *modules)
{
	int go[2], done[2], status;
	uint32_t u0, u1, u2;
	char c;
	pid_t pid;

	if (pipe(go) || pipe(done))
		return -1;
	u0 = used_bytes();
	pid = fork();
	if (pid == 0) {
		struct actrack_opts o = {
			.sz = sizeof(o), .arena_path = path,
			.stack_slots = cs->slots,
			.flags = ACTRACK_INIT_NO_MODULE | cs->flags,
		};
		int n = 0;

		if (actrack_init(&o))
			_exit(1);
		if (!(cs->flags & ACTRACK_INIT_NO_MODULES))
			n = actrack_record_modules();
		c = (char)(n < 0 ? 0 : n);
		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		if (actrack_thread_init("m"))
			_exit(1);
		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	if (read(done[0], &c, 1) != 1)
		return -1;
	*modules = (unsigned char)c;
	u1 = used_bytes();
	if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
		return -1;
	u2 = used_bytes();
	if (write(go[1], &c, 1) != 1)
		return -1;
	waitpid(pid, &status, 0);
	close(go[0]); close(go[1]); close(done[0]); close(done[1]);
	*proc = u1 - u0;
	*thread = u2 - u1;
	return 0;
}

static void fill(uint32_t size, const char *name)
{
	struct actrack_arena a = { .size = size, .writable = true };
	struct actrack_arena_header h = { .user_hz = 100 };
	uint32_t payload = sizeof(struct actrack_thread) +
			   ACTRACK_DEFAULT_SLOTS * sizeof(struct actrack_activity);

	a.base = calloc(1, size);
	if (!a.base || actrack_arena_format(&a, &h)) {
		printf("bench %s SKIP cannot make the arena\n", name);
		free(a.base);
		return;
	}
	/*
	 * Each allocation scans a bounded window for a free block, then
	 * bumps: linear in the blocks (the walk of the whole list before
	 * every bump made a 64 MiB fill take minutes: bench/alloc).
	 */
	while (actrack_arena_alloc(&a, ACTRACK_TYPE_THREAD, payload))
		;
	bench_line(name, actrack_arena_used(&a), "bytes", size);
	free(a.base);
}

int main(void)
{
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path,
		.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
	};
	const uint32_t rec = sizeof(struct actrack_block);
	struct child_steps def = { 0, 0 }, bare = { ACTRACK_INIT_NO_MODULES, 0 },
			   big = { ACTRACK_INIT_NO_MODULES,
				   ACTRACK_THREAD_MAX_SLOTS };
	uint32_t p_def, t_def, p_bare, t8, p_big, t64;
	int mods, dummy, n = 0;
	uint32_t before;
	struct actrack_user_data *pd;
	pid_t pid;
	int status;

	snprintf(path, sizeof(path), "/tmp/actrack-bench-mem-%d",
		 (int)getpid());
	/* A first process creates the arena and leaves. */
	pid = fork();
	if (pid == 0)
		_exit(actrack_init(&o) ? 1 : 0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status) {
		fprintf(stderr, "cannot create %s\n", path);
		return 1;
	}
	if (child_deltas(&def, &p_def, &t_def, &mods) ||
	    child_deltas(&bare, &p_bare, &t8, &dummy) ||
	    child_deltas(&big, &p_big, &t64, &dummy)) {
		fprintf(stderr, "children failed\n");
		unlink(path);
		return 1;
	}
	bench_line("memory_process_bare", p_bare, "bytes",
		   rec + sizeof(struct actrack_process));
	bench_line("memory_process_with_modules", p_def, "bytes", p_bare);
	bench_line("memory_process_modules_recorded", mods, "modules", mods);
	bench_line("memory_thread_8_slots", t8, "bytes",
		   sizeof(struct actrack_thread) +
		   8 * sizeof(struct actrack_activity));
	bench_line("memory_thread_64_slots", t64, "bytes",
		   sizeof(struct actrack_thread) +
		   64 * sizeof(struct actrack_activity));
	bench_line("memory_activity_slot", (double)(t64 - t8) / 56, "bytes",
		   sizeof(struct actrack_activity));

	/* Entries: int fields with 8-byte names until the block is full. */
	if (actrack_init(&o) == 0 && (before = used_bytes()) &&
	    (pd = actrack_process_data())) {
		char name[16];

		/* the block itself, created by actrack_process_data() */
		bench_line("memory_process_data_block", used_bytes() - before,
			   "bytes", 4096);

		while (n < 100000) {
			snprintf(name, sizeof(name), "f%07d", n);
			if (actrack_set_int(pd, name, n))
				break;
			n++;
		}
		bench_line("memory_user_data_entry", n ? 4096.0 / n : 0,
			   "bytes", 8 + 8);
	}
	unlink(path);

	fill(ACTRACK_ARENA_MIN_SIZE, "memory_fill_at_failure_64k");
	fill(4U << 20, "memory_fill_at_failure_4m");
	fill(64U << 20, "memory_fill_at_failure_64m");
	return 0;
}
