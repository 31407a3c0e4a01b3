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

static void death_thread_free_values(struct actrack_death_thread *t)
{
	for (uint32_t k = 0; k < ACTRACK_THREAD_MAX_SLOTS; k++) {
		__actrack_free_values(t->values[k], t->nr_values[k]);
		t->values[k] = NULL;
		t->nr_values[k] = 0;
	}
}

struct death_walk {
	struct actrack_death *d;
	uint32_t cap, mod_cap;		/* of d->threads, d->modules */
};

/*
 * The fields of a user data block the walk copied and checked to be the
 * dead process's (and the thread's, for an activity's); fields that do
 * not parse are flagged corrupt and give nothing.
 */
static int death_values(struct death_walk *dw,
			const struct actrack_walk_rec *r,
			struct actrack_value **out, uint32_t *nr)
{
	const struct actrack_user_data *ud = r->user_data;
	uint32_t used = r->len - (uint32_t)sizeof(*ud);
	int ret;

	__actrack_free_values(*out, *nr);
	*out = NULL;
	*nr = 0;
	if (ud->used < used)
		used = ud->used;
	ret = __actrack_parse_fields((const uint8_t *)(ud + 1), used, out,
				     nr);
	if (ret == -EUCLEAN)
		dw->d->flags |= ACTRACK_DEATH_ARENA_CORRUPT;
	return ret == -ENOMEM ? ret : 0;
}

/* Phase, command line (and, next, annotations) of the process record. */
static int death_process(struct actrack_walk *w, struct death_walk *dw,
			 const struct actrack_walk_rec *r)
{
	struct actrack_death *d = dw->d;
	const struct actrack_process *p = r->process;

	/* The first live one counts: copy no other (forged) ones. */
	w->types &= ~ACTRACK_WALK_PROCESSES;
	d->phase = p->phase;
	d->cmdline_size = __actrack_join_cmdline(d->cmdline, p->cmdline,
						 p->cmdline_size);
	return 0;
}

/* A thread goes into the report before its activities' values follow. */
static int death_thread(struct death_walk *dw,
			const struct actrack_walk_rec *r)
{
	const struct actrack_thread_copy *tc = r->thread;
	struct actrack_death *d = dw->d;
	struct actrack_death_thread *t, *n;
	uint32_t ncap, nr;

	if (d->nr_threads >= ACTRACK_LIB_MAX_THREADS) {
		d->flags |= ACTRACK_DEATH_TRUNCATED;
		return ACTRACK_WALK_SKIP;
	}
	if (d->nr_threads == dw->cap) {
		ncap = dw->cap ? dw->cap * 2 : 8;
		if (ncap > ACTRACK_LIB_MAX_THREADS)
			ncap = ACTRACK_LIB_MAX_THREADS;
		n = realloc(d->threads, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->threads = n;
		dw->cap = ncap;
	}
	t = &d->threads[d->nr_threads++];
	memset(t, 0, sizeof(*t));
	t->tid = tc->hdr.owner.tid;
	memcpy(t->name, tc->hdr.name, sizeof(t->name) - 1);
	t->depth = tc->hdr.depth;
	if (r->torn) {
		/* Changed on every try: identity only, no stack. */
		t->torn = true;
		return ACTRACK_WALK_SKIP;
	}
	t->fatal_signo = tc->hdr.fatal_signo;
	t->fatal_code = tc->hdr.fatal_code;
	t->fatal_addr = tc->hdr.fatal_addr;
	t->fatal_pc = tc->hdr.fatal_pc;
	/* The core bounds it already; it sizes a copy. */
	nr = tc->nr_slots;
	if (nr > ACTRACK_THREAD_MAX_SLOTS)
		nr = ACTRACK_THREAD_MAX_SLOTS;
	memcpy(t->activities, tc->slots, nr * sizeof(t->activities[0]));
	t->nr_activities = nr;
	return 0;
}

/* A module record of the dead process: where its pcs came from. */
static int death_module(struct death_walk *dw,
			const struct actrack_walk_rec *r)
{
	struct actrack_death *d = dw->d;
	struct actrack_snap_module *n;
	uint32_t ncap;

	if (d->nr_modules >= ACTRACK_LIB_MAX_MODULES) {
		d->flags |= ACTRACK_DEATH_TRUNCATED;
		return 0;
	}
	if (d->nr_modules == dw->mod_cap) {
		ncap = dw->mod_cap ? dw->mod_cap * 2 : 8;
		if (ncap > ACTRACK_LIB_MAX_MODULES)
			ncap = ACTRACK_LIB_MAX_MODULES;
		n = realloc(d->modules, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->modules = n;
		dw->mod_cap = ncap;
	}
	__actrack_snap_module(&d->modules[d->nr_modules++], r->module);
	return 0;
}

static int death_record(struct actrack_walk *w,
			const struct actrack_walk_rec *r)
{
	struct death_walk *dw = w->ctx;
	struct actrack_death_thread *t;

	switch (r->type) {
	case ACTRACK_TYPE_PROCESS:
		return death_process(w, dw, r);
	case ACTRACK_TYPE_THREAD:
		return death_thread(dw, r);
	case ACTRACK_TYPE_MODULE:
		return death_module(dw, r);
	}
	/* User data, right after the record that refers to it. */
	if (r->act == ACTRACK_WALK_PROCESS_DATA)
		return death_values(dw, r, &dw->d->values, &dw->d->nr_values);
	t = &dw->d->threads[dw->d->nr_threads - 1];
	if (r->act >= t->nr_activities)
		return 0;
	return death_values(dw, r, &t->values[r->act], &t->nr_values[r->act]);
}

static void *death_ud_grow(struct actrack_walk *w, __u32 size)
{
	/* On failure the old buffer stays in w->ud_buf, freed with it. */
	return realloc(w->ud_buf, size);
}

/* One owner walk: the process record, threads and modules of the dead
 * (pid, start_ticks), with the user data they refer to. */
static int death_walk(struct actrack_arena *a, struct actrack_death *d)
{
	const struct actrack_owner_key k = {
		.pid = d->pid,
		.pid_ns = ACTRACK_PID_NS_ANY,
		.start_ticks = d->start_ticks,
	};
	struct death_walk dw = { .d = d };
	struct actrack_walk *w;
	int ret = -ENOMEM;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->seen = malloc(actrack_arena_seen_bytes(a));
	if (w->seen) {
		w->a = a;
		w->key = &k;
		w->types = ACTRACK_WALK_THREADS | ACTRACK_WALK_PROCESSES |
			   ACTRACK_WALK_MODULES | ACTRACK_WALK_USER_DATA;
		w->fn = death_record;
		w->ctx = &dw;
		w->ud_grow = death_ud_grow;
		ret = actrack_walk_records(w);
	}
	free(w->ud_buf);
	free(w->seen);
	free(w);
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
