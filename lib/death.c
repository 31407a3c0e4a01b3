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

struct death_walk {
	struct actrack_death *d;
	uint32_t cap, mod_cap;		/* of the process's threads, modules */
};

/* Fields that do not parse give nothing and flag the report corrupt. */
static int death_values(struct death_walk *dw, int ret)
{
	if (ret == -EUCLEAN)
		dw->d->flags |= ACTRACK_DEATH_ARENA_CORRUPT;
	return ret == -ENOMEM ? ret : 0;
}

/* Phase and command line of the process record. */
static int death_process(struct actrack_walk *w, struct death_walk *dw,
			 const struct actrack_walk_rec *r)
{
	struct actrack_snap_process *p = &dw->d->process;
	const struct actrack_process *rec = r->process;

	/* The first live one counts: copy no other (forged) ones. */
	w->types &= ~ACTRACK_WALK_PROCESSES;
	p->phase = rec->phase;
	__actrack_join_cmdline(p->cmdline, rec->cmdline, rec->cmdline_size);
	return 0;
}

/* Room for one more of @nr elements of @size bytes in *@v (capacity
 * *@cap), at most @max; NULL when out of memory or past @max. */
static void *death_grow(void **v, uint32_t nr, uint32_t *cap, uint32_t max,
			size_t size, int *err)
{
	uint32_t ncap;
	void *n;

	*err = 0;
	if (nr >= max)
		return NULL;
	if (nr == *cap) {
		ncap = *cap ? *cap * 2 : 8;
		if (ncap > max)
			ncap = max;
		n = realloc(*v, ncap * size);
		if (!n) {
			*err = -ENOMEM;
			return NULL;
		}
		*v = n;
		*cap = ncap;
	}
	return (char *)*v + (size_t)nr * size;
}

/* A thread goes into the report before its activities' values follow. */
static int death_thread(struct death_walk *dw,
			const struct actrack_walk_rec *r)
{
	struct actrack_death *d = dw->d;
	struct actrack_snap_process *p = &d->process;
	struct actrack_snap_thread *t;
	int ret;

	t = death_grow((void **)&p->threads, p->nr_threads, &dw->cap,
		       ACTRACK_LIB_MAX_THREADS, sizeof(*t), &ret);
	if (!t) {
		if (ret)
			return ret;
		d->flags |= ACTRACK_DEATH_TRUNCATED;
		return ACTRACK_WALK_SKIP;
	}
	ret = __actrack_copy_thread(t, r);
	if (ret == -EUCLEAN) {
		d->flags |= ACTRACK_DEATH_ARENA_CORRUPT;
		return ACTRACK_WALK_SKIP;
	}
	if (ret)
		return ret;
	p->nr_threads++;
	return t->torn ? ACTRACK_WALK_SKIP : 0;
}

/* A module record of the dead process: where its pcs came from. */
static int death_module(struct death_walk *dw,
			const struct actrack_walk_rec *r)
{
	struct actrack_snap_process *p = &dw->d->process;
	struct actrack_snap_module *m;
	int ret;

	m = death_grow((void **)&p->modules, p->nr_modules, &dw->mod_cap,
		       ACTRACK_LIB_MAX_MODULES, sizeof(*m), &ret);
	if (!m) {
		if (!ret)
			dw->d->flags |= ACTRACK_DEATH_TRUNCATED;
		return ret;
	}
	__actrack_snap_module(m, r->module);
	p->nr_modules++;
	return 0;
}

static int death_record(struct actrack_walk *w,
			const struct actrack_walk_rec *r)
{
	struct death_walk *dw = w->ctx;
	struct actrack_snap_process *p = &dw->d->process;

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
		return death_values(dw, __actrack_copy_values(r, &p->values,
							      &p->nr_values));
	if (!p->nr_threads)
		return 0;
	return death_values(dw, __actrack_copy_act_values(
				&p->threads[p->nr_threads - 1], r));
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
		.pid = d->process.pid,
		.pid_ns = ACTRACK_PID_NS_ANY,
		.start_ticks = d->process.start_ticks,
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
	__actrack_free_process(&d->process);
	for (uint32_t i = 0; d->stacks && i < d->nr_stacks; i++)
		free(d->stacks[i].bytes);
	free(d->stacks);
	d->stacks = NULL;
	d->nr_stacks = 0;
	d->nr_tracked_threads = 0;
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
	d->process.pid = pid;
	d->process.start_ticks = start_ticks;
	d->process.has_record = true;
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
	d->nr_tracked_threads = d->process.nr_threads;
	return 0;
}
