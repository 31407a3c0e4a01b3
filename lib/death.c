// SPDX-License-Identifier: MIT
/*
 * Death reports built in userspace, for file-backed arenas: what actrack.ko
 * sends over netlink when it sees a process exit, built here by the
 * launching parent after waitpid() (actrack_record_process_exit()).
 *
 * The dead process's records are read like any other reader reads them: it
 * is gone, but its PID may already be reused and any process of the uid can
 * write the arena, so every record is matched on (pid, start_ticks) from a
 * checked copy, never from the live bytes, and bad data is flagged in the
 * report instead of being believed.  Like the kernel's, the report carries
 * the process's module records, so that its pcs can be symbolized after
 * the records are freed, and the user data of the process and of its
 * stored activities (each block checked to be the dead process's, and
 * the thread's for an activity's).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "internal.h"

static void death_status(struct actrack_death *d, int ws)
{
	d->wait_status = ws;
	if (WIFSIGNALED(ws)) {
		d->signal = WTERMSIG(ws);
		d->core_dumped = WCOREDUMP(ws) != 0;
	} else if (WIFEXITED(ws)) {
		d->exit_code = WEXITSTATUS(ws);
	}
}

/*
 * The fields of user data block @ref if the dead process owns it (and
 * thread @tid, if @check_tid), from a seq-checked copy; nothing when it is
 * gone, torn, someone else's or does not parse (flagged corrupt).
 */
static void death_values(struct actrack_arena *a, uint32_t ref,
			 struct actrack_death *d, uint32_t tid, bool check_tid,
			 struct actrack_value **out, uint32_t *nr)
{
	struct actrack_user_data *ud;
	uint32_t size, used;
	int r;

	*out = NULL;
	*nr = 0;
	if (!ref || !actrack_arena_get(a, ref, ACTRACK_TYPE_USER_DATA,
				       sizeof(*ud)))
		return;
	size = actrack_arena_payload_size(a, ref);
	ud = malloc(size);
	if (!ud)
		return;
	r = actrack_arena_copy_owned(a, ref, ACTRACK_TYPE_USER_DATA, ud, size);
	if (r < (int)sizeof(*ud) || !ud->owner.data_id ||
	    ud->owner.pid != d->pid ||
	    ud->owner.start_ticks != d->start_ticks ||
	    (check_tid && ud->owner.tid != tid))
		goto out;
	used = (uint32_t)r - sizeof(*ud);
	if (ud->used < used)
		used = ud->used;
	if (__actrack_parse_fields((const uint8_t *)(ud + 1), used, out,
				   nr) == -EUCLEAN)
		d->flags |= ACTRACK_DEATH_ARENA_CORRUPT;
out:
	free(ud);
}

static void death_thread_free_values(struct actrack_death_thread *t)
{
	for (uint32_t k = 0; k < ACTRACK_THREAD_MAX_SLOTS; k++) {
		__actrack_free_values(t->values[k], t->nr_values[k]);
		t->values[k] = NULL;
		t->nr_values[k] = 0;
	}
}

/* Phase, command line and annotations from the process record, if it is
 * still there. */
static void death_process(struct actrack_arena *a, struct actrack_death *d)
{
	struct actrack_process p;
	uint32_t ref;
	int ret;

	ref = actrack_arena_find_process(a, d->pid, d->start_ticks);
	if (!ref)
		return;
	ret = actrack_arena_copy_owned(a, ref, ACTRACK_TYPE_PROCESS, &p,
				       sizeof(p));
	if (ret < (int)sizeof(p))
		return;		/* gone, torn or short: no phase to tell */
	/* The record may have been freed and reused between the lookup and
	 * the copy: trust only the copy's owner. */
	if (!p.owner.data_id || p.owner.pid != d->pid ||
	    p.owner.start_ticks != d->start_ticks || p.owner.tid != 0)
		return;
	d->phase = p.phase;
	d->cmdline_size = __actrack_join_cmdline(d->cmdline, p.cmdline,
						 p.cmdline_size);
	death_values(a, p.user_data, d, 0, false, &d->values, &d->nr_values);
}

/* A thread whose copy was torn on every try: identity only, no stack. */
static int death_torn(struct actrack_arena *a, uint32_t ref,
		      struct actrack_death *d, struct actrack_death_thread *t)
{
	struct actrack_thread *live;
	uint32_t id;
	size_t i;

	live = actrack_arena_get(a, ref, ACTRACK_TYPE_THREAD, sizeof(*live));
	if (!live)
		return -ENOENT;
	id = at_load_acquire(&live->owner.data_id);
	if (!id)
		return -ENOENT;
	t->tid = at_load(&live->owner.tid);
	for (i = 0; i < sizeof(t->name) - 1; i++)
		t->name[i] = at_load(&live->name[i]);
	t->name[sizeof(t->name) - 1] = '\0';
	t->depth = at_load(&live->depth);
	at_fence_acquire();
	if (at_load(&live->owner.data_id) != id ||
	    at_load(&live->owner.pid) != d->pid ||
	    at_load(&live->owner.start_ticks) != d->start_ticks)
		return -ENOENT;
	t->torn = true;
	t->nr_activities = 0;
	return 0;
}

/* Takes over @t's values (freed if @t is not added). */
static int death_add_thread(struct actrack_death *d, uint32_t *cap,
			    struct actrack_death_thread *t)
{
	struct actrack_death_thread *n;
	uint32_t ncap;

	if (d->nr_threads >= ACTRACK_DEATH_MAX_THREADS) {
		d->flags |= ACTRACK_DEATH_TRUNCATED;
		death_thread_free_values(t);
		return 0;
	}
	if (d->nr_threads == *cap) {
		ncap = *cap ? *cap * 2 : 8;
		if (ncap > ACTRACK_DEATH_MAX_THREADS)
			ncap = ACTRACK_DEATH_MAX_THREADS;
		n = realloc(d->threads, ncap * sizeof(*n));
		if (!n) {
			death_thread_free_values(t);
			return -ENOMEM;
		}
		d->threads = n;
		*cap = ncap;
	}
	d->threads[d->nr_threads++] = *t;
	return 0;
}

/* A module record of the dead process: where its pcs came from. */
static int death_add_module(struct actrack_arena *a, uint32_t ref,
			    struct actrack_death *d, uint32_t *cap)
{
	struct actrack_snap_module *n;
	struct actrack_module m;
	int r;

	r = actrack_arena_copy_owned(a, ref, ACTRACK_TYPE_MODULE, &m,
				     sizeof(m));
	if (r == -ENOENT || r == -EAGAIN)
		return 0;
	if (r < (int)sizeof(m) || m.build_id_size > ACTRACK_BUILD_ID_MAX) {
		d->flags |= ACTRACK_DEATH_ARENA_CORRUPT;
		return 0;
	}
	if (!m.owner.data_id || m.owner.pid != d->pid ||
	    m.owner.start_ticks != d->start_ticks)
		return 0;
	if (d->nr_modules >= ACTRACK_DEATH_MAX_MODULES) {
		d->flags |= ACTRACK_DEATH_TRUNCATED;
		return 0;
	}
	if (d->nr_modules == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 8;

		if (ncap > ACTRACK_DEATH_MAX_MODULES)
			ncap = ACTRACK_DEATH_MAX_MODULES;
		n = realloc(d->modules, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->modules = n;
		*cap = ncap;
	}
	__actrack_snap_module(&d->modules[d->nr_modules++], &m);
	return 0;
}

/* One bounded walk: the threads and modules of (pid, start_ticks). */
static int death_walk(struct actrack_arena *a, struct actrack_death *d)
{
	struct actrack_thread_copy *tc;
	struct actrack_death_thread t;
	struct actrack_arena_iter it;
	uint32_t ref, type, cap = 0, mod_cap = 0, nr;
	uint8_t *seen;
	int ret = 0;

	/* One bit per possible block: a block met twice is a cycle in a
	 * corrupt list, which would otherwise report a thread many times. */
	seen = calloc(actrack_arena_max_blocks(a) / 8 + 1, 1);
	tc = malloc(sizeof(*tc));
	if (!tc || !seen) {
		free(tc);
		free(seen);
		return -ENOMEM;
	}
	actrack_arena_iter_init(&it, a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &type))) {
		uint32_t bit = ref / ACTRACK_BLOCK_ALIGN;
		struct actrack_thread *live;
		int r;

		if (seen[bit / 8] & (1U << (bit % 8))) {
			d->flags |= ACTRACK_DEATH_ARENA_CORRUPT;
			break;
		}
		seen[bit / 8] |= (uint8_t)(1U << (bit % 8));

		if (type == ACTRACK_TYPE_MODULE) {
			ret = death_add_module(a, ref, d, &mod_cap);
			if (ret)
				break;
			continue;
		}
		if (type != ACTRACK_TYPE_THREAD)
			continue;
		/* Cheap filter on the live owner before the full copy; the
		 * copy's owner is what decides. */
		live = actrack_arena_get(a, ref, ACTRACK_TYPE_THREAD,
					 sizeof(*live));
		if (!live || at_load(&live->owner.pid) != d->pid ||
		    at_load(&live->owner.start_ticks) != d->start_ticks)
			continue;

		memset(&t, 0, sizeof(t));
		r = actrack_arena_copy_thread(a, ref, tc);
		if (r == -EAGAIN) {
			if (death_torn(a, ref, d, &t))
				continue;
		} else if (r == -ENOENT) {
			continue;
		} else if (r < 0) {
			d->flags |= ACTRACK_DEATH_ARENA_CORRUPT;
			continue;
		} else {
			if (!tc->hdr.owner.data_id ||
			    tc->hdr.owner.pid != d->pid ||
			    tc->hdr.owner.start_ticks != d->start_ticks)
				continue;
			t.tid = tc->hdr.owner.tid;
			memcpy(t.name, tc->hdr.name, sizeof(t.name) - 1);
			t.name[sizeof(t.name) - 1] = '\0';
			t.depth = tc->hdr.depth;
			t.fatal_signo = tc->hdr.fatal_signo;
			t.fatal_code = tc->hdr.fatal_code;
			t.fatal_addr = tc->hdr.fatal_addr;
			t.fatal_pc = tc->hdr.fatal_pc;
			/* The core bounds it already; it sizes a copy. */
			nr = tc->nr_slots;
			if (nr > ACTRACK_THREAD_MAX_SLOTS)
				nr = ACTRACK_THREAD_MAX_SLOTS;
			memcpy(t.activities, tc->slots,
			       nr * sizeof(t.activities[0]));
			t.nr_activities = nr;
			for (uint32_t k = 0; k < nr; k++)
				death_values(a, t.activities[k].user_data, d,
					     t.tid, true, &t.values[k],
					     &t.nr_values[k]);
		}
		ret = death_add_thread(d, &cap, &t);
		if (ret)
			break;
	}
	free(tc);
	free(seen);
	return ret;
}

void __actrack_free_death(struct actrack_death *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; d->threads && i < d->nr_threads; i++)
		death_thread_free_values(&d->threads[i]);
	__actrack_free_values(d->values, d->nr_values);
	d->values = NULL;
	d->nr_values = 0;
	for (uint32_t i = 0; d->stacks && i < d->nr_stacks; i++)
		free(d->stacks[i].bytes);
	free(d->stacks);
	d->stacks = NULL;
	d->nr_stacks = 0;
	free(d->threads);
	free(d->modules);
	d->threads = NULL;
	d->nr_threads = 0;
	d->modules = NULL;
	d->nr_modules = 0;
}

int __actrack_build_death(struct actrack_arena *a, uint32_t pid,
			  uint64_t start_ticks, int wait_status,
			  struct actrack_death *d)
{
	const struct actrack_arena_header *h;
	bool was_corrupt;
	int ret;

	if (!d)
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	if (!a || !a->base || a->size < ACTRACK_ARENA_HEADER_SIZE || !pid)
		return -EINVAL;
	d->pid = pid;
	d->start_ticks = start_ticks;
	d->exit_time_ns = __actrack_mono_ns();
	death_status(d, wait_status);
	h = a->base;
	d->uid = at_load(&h->uid);

	/* Report only what this walk met, not an old sticky flag; keep the
	 * reader's flag as it was plus what we found. */
	was_corrupt = a->corrupt;
	a->corrupt = false;
	death_process(a, d);
	ret = death_walk(a, d);
	if (a->corrupt)
		d->flags |= ACTRACK_DEATH_ARENA_CORRUPT;
	a->corrupt = a->corrupt || was_corrupt;
	if (ret) {
		__actrack_free_death(d);
		return ret;
	}
	return 0;
}
