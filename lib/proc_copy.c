// SPDX-License-Identifier: MIT
/*
 * One set of copies from arena records into the public process shape
 * (struct actrack_snap_process and its threads), shared by the snapshot of
 * a live arena (lib/snapshot.c), the death report built from a file arena
 * (lib/death.c) and the death report read from actrack.ko
 * (lib/report_parse.c), so that all three say the same of the same bytes.
 *
 * Each reads only its arguments (copies the owner walk checked), never the
 * arena; what does not pass a check is refused with -EUCLEAN, and the
 * caller marks its source corrupt.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

uint32_t __actrack_join_cmdline(char *dst, const char *src, uint32_t n)
{
	if (n > ACTRACK_CMDLINE_MAX)
		n = ACTRACK_CMDLINE_MAX;
	while (n && !src[n - 1])
		n--;
	for (uint32_t i = 0; i < n; i++)
		dst[i] = src[i] ? src[i] : ' ';
	dst[n] = 0;
	return n;
}

void __actrack_snap_module(struct actrack_snap_module *out,
			   const struct actrack_module *m)
{
	uint8_t n = m->build_id_size;

	/* Callers reject a bad size as corrupt; this only keeps the copy in
	 * bounds whatever they do. */
	if (n > ACTRACK_BUILD_ID_MAX)
		n = ACTRACK_BUILD_ID_MAX;
	memset(out, 0, sizeof(*out));
	out->base = m->base;
	out->size = m->size;
	out->vaddr = m->vaddr;
	out->build_id_size = n;
	memcpy(out->build_id, m->build_id, n);
	/* The record's path need not be terminated: the last byte stays 0. */
	memcpy(out->path, m->path, sizeof(out->path) - 1);
}

int __actrack_copy_thread(struct actrack_snap_thread *t,
			  const struct actrack_walk_rec *r)
{
	const struct actrack_thread_copy *tc = r->thread;
	uint32_t nr = tc->nr_slots;

	/* The core bounds nr_slots already; re-check, it sizes a copy. */
	if (nr > ACTRACK_THREAD_MAX_SLOTS || nr > tc->hdr.depth)
		return -EUCLEAN;
	memset(t, 0, sizeof(*t));
	t->pid = tc->hdr.owner.pid;
	t->tid = tc->hdr.owner.tid;
	t->pid_ns = tc->hdr.owner.pid_ns;
	t->start_ticks = tc->hdr.owner.start_ticks;
	memcpy(t->name, tc->hdr.name, sizeof(t->name) - 1);
	t->start_time_ns = tc->hdr.start_time_ns;
	t->depth = tc->hdr.depth;
	t->version = tc->hdr.version;
	if (r->torn) {
		/* Changed on every try: identity only, no stack. */
		t->torn = true;
		return 0;
	}
	t->fatal_signo = tc->hdr.fatal_signo;
	t->fatal_code = tc->hdr.fatal_code;
	t->fatal_addr = tc->hdr.fatal_addr;
	t->fatal_pc = tc->hdr.fatal_pc;
	if (nr) {
		t->activities = calloc(nr, sizeof(*t->activities));
		if (!t->activities)
			return -ENOMEM;
		t->nr_activities = nr;
	}
	for (uint32_t i = 0; i < nr; i++)
		t->activities[i].a = tc->slots[i];
	return 0;
}

int __actrack_copy_values(const struct actrack_walk_rec *r,
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
	if (ret < 0) {
		*out = NULL;
		*nr = 0;
	}
	return ret == -ENOMEM ? ret : ret < 0 ? -EUCLEAN : 0;
}

int __actrack_copy_act_values(struct actrack_snap_thread *t,
			      const struct actrack_walk_rec *r)
{
	struct actrack_snap_activity *act;

	if (r->act >= t->nr_activities)
		return 0;
	/*
	 * The values are read after the stack copy, so if the thread has
	 * since popped this slot and pushed again, they belong to the newer
	 * activity in the same slot; the walk's owner check still guarantees
	 * they are this thread's.
	 */
	act = &t->activities[r->act];
	return __actrack_copy_values(r, &act->values, &act->nr_values);
}

void __actrack_free_thread(struct actrack_snap_thread *t)
{
	for (uint32_t i = 0; t->activities && i < t->nr_activities; i++)
		__actrack_free_values(t->activities[i].values,
				      t->activities[i].nr_values);
	free(t->activities);
	t->activities = NULL;
	t->nr_activities = 0;
}

void __actrack_free_process(struct actrack_snap_process *p)
{
	__actrack_free_values(p->values, p->nr_values);
	for (uint32_t j = 0; p->threads && j < p->nr_threads; j++)
		__actrack_free_thread(&p->threads[j]);
	free(p->threads);
	free(p->logs);
	free(p->modules);
	p->values = NULL;
	p->threads = NULL;
	p->logs = NULL;
	p->modules = NULL;
	p->nr_values = p->nr_threads = p->nr_logs = p->nr_modules = 0;
}
