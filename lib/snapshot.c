// SPDX-License-Identifier: MIT
/*
 * Snapshots: a read-only, self-contained copy of everything an arena says
 * about its processes, for the analyzer (actrack dump/ps) and for tests.
 *
 * Trust: the arena may be changed by any process of the uid while we read
 * it, and a file arena may be anything at all.  We never store into it
 * (the map is PROT_READ and arena.writable is false), every record is
 * copied by the arena core's seq/version-checked copies or, for log entries,
 * by our own per-entry seqcount check, and every count is bounded by the
 * arena's size before anything is allocated from it.  Records that fail a
 * check are skipped and reported through the corrupt flag; threads that
 * keep changing under us are reported as torn, never as mixed data.
 *
 * Grouping: records are keyed by (pid, pid_ns, start_ticks), the owner
 * identity that survives PID reuse, so two generations of one pid show up
 * as two processes, and so do two processes of one uid that have the same
 * pid in two pid namespaces.  Everything is first copied into flat lists, then sorted and
 * grouped: O(n log n) however many records a big arena holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

struct snap_key {
	uint32_t pid;
	uint32_t pid_ns;
	uint64_t start_ticks;
};

/* The key of a copied owner (plain loads: the copy is ours). */
static struct snap_key owner_key(const struct actrack_owner *o)
{
	return (struct snap_key){ o->pid, o->pid_ns, o->start_ticks };
}

struct proc_item {
	struct snap_key key;
	struct actrack_process rec;
	uint32_t nr_values;		/* its annotations, until moved */
	struct actrack_value *values;
};

struct log_item {
	struct snap_key key;
	uint32_t nr;
	struct actrack_snap_log *entries;	/* oldest first */
};

struct module_item {
	struct snap_key key;
	struct actrack_snap_module mod;
};

/* A growable array whose length is bounded by the caller. */
struct vec {
	void *v;
	uint32_t nr, cap;
};

struct collect {
	struct actrack_arena *a;
	bool corrupt;
	bool global;			/* the user data is the global block */
	uint32_t nr_torn;
	struct actrack_walk *w;		/* the owner walk: ~4.3 KiB */
	struct vec procs;		/* struct proc_item */
	struct vec threads;		/* struct actrack_snap_thread */
	struct vec logs;		/* struct log_item */
	struct vec modules;		/* struct module_item */
	uint32_t nr_global_values;
	struct actrack_value *global_values;
};

/* Room for one more element of @size bytes; the walk is bounded, so a
 * vector never holds more elements than the arena has blocks. */
static void *vec_push(struct vec *vec, size_t size)
{
	if (vec->nr == vec->cap) {
		uint32_t cap = vec->cap ? vec->cap * 2 : 16;
		void *p;

		if (cap < vec->cap)
			return NULL;
		p = realloc(vec->v, (size_t)cap * size);
		if (!p)
			return NULL;
		vec->v = p;
		vec->cap = cap;
	}
	return (char *)vec->v + (size_t)vec->nr++ * size;
}

static int key_cmp(const struct snap_key *x, const struct snap_key *y)
{
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->pid_ns != y->pid_ns)
		return x->pid_ns < y->pid_ns ? -1 : 1;
	if (x->start_ticks != y->start_ticks)
		return x->start_ticks < y->start_ticks ? -1 : 1;
	return 0;
}

static int key_qcmp(const void *x, const void *y)
{
	return key_cmp(x, y);
}

static void collect_free(struct collect *c)
{
	struct actrack_snap_thread *threads = c->threads.v;
	struct proc_item *procs = c->procs.v;
	struct log_item *logs = c->logs.v;

	for (uint32_t i = 0; i < c->threads.nr; i++)
		__actrack_free_thread(&threads[i]);
	for (uint32_t i = 0; i < c->procs.nr; i++)
		__actrack_free_values(procs[i].values, procs[i].nr_values);
	for (uint32_t i = 0; i < c->logs.nr; i++)
		free(logs[i].entries);
	__actrack_free_values(c->global_values, c->nr_global_values);
	free(c->procs.v);
	free(c->threads.v);
	free(c->logs.v);
	free(c->modules.v);
	if (c->w) {
		free(c->w->seen);
		free(c->w->ud_buf);
		free(c->w);
	}
}

/*
 * The values of a user data block the walk copied and checked to be the
 * referring record's.  Only -ENOMEM is fatal; fields that do not parse
 * are no values and mark the arena corrupt.
 */
static int collect_values(struct collect *c, int ret)
{
	if (ret == -EUCLEAN)
		actrack_arena_set_corrupt(c->a);
	return ret == -ENOMEM ? ret : 0;
}

/* User data follows the record that refers to it (actrack_walk_records()). */
static int collect_user_data(struct collect *c,
			     const struct actrack_walk_rec *r)
{
	struct actrack_snap_thread *t;
	struct proc_item *p;

	if (c->global)
		return collect_values(c, __actrack_copy_values(r,
				&c->global_values, &c->nr_global_values));
	if (r->act == ACTRACK_WALK_PROCESS_DATA) {
		if (!c->procs.nr)
			return 0;
		p = &((struct proc_item *)c->procs.v)[c->procs.nr - 1];
		return collect_values(c, __actrack_copy_values(r, &p->values,
							       &p->nr_values));
	}
	if (!c->threads.nr)
		return 0;
	t = &((struct actrack_snap_thread *)c->threads.v)[c->threads.nr - 1];
	return collect_values(c, __actrack_copy_act_values(t, r));
}

static int collect_process(struct collect *c, const struct actrack_walk_rec *r)
{
	struct proc_item *it;

	if (r->len < sizeof(it->rec)) {
		c->corrupt = true;
		return ACTRACK_WALK_SKIP;
	}
	it = vec_push(&c->procs, sizeof(*it));
	if (!it)
		return -ENOMEM;
	memset(it, 0, sizeof(*it));
	it->key = owner_key(r->owner);
	it->rec = *r->process;
	return 0;
}

static int collect_thread(struct collect *c, const struct actrack_walk_rec *r)
{
	struct actrack_snap_thread *t;
	int ret;

	t = vec_push(&c->threads, sizeof(*t));
	if (!t)
		return -ENOMEM;
	ret = __actrack_copy_thread(t, r);
	if (ret) {
		c->threads.nr--;
		if (ret != -EUCLEAN)
			return ret;
		c->corrupt = true;
		return ACTRACK_WALK_SKIP;
	}
	if (t->torn) {
		c->nr_torn++;
		return ACTRACK_WALK_SKIP;
	}
	/* The held-lock set (ABI 1.2), read next to the copy it goes with. */
	__actrack_read_held(c->a, r->ref, &r->thread->hdr, t);
	return 0;
}

struct log_sort {
	uint32_t age;		/* messages older than the newest, 0 = newest */
	struct actrack_snap_log e;
};

static int log_sort_cmp(const void *x, const void *y)
{
	const struct log_sort *p = x, *q = y;

	/* Oldest (largest age) first. */
	if (p->age != q->age)
		return p->age > q->age ? -1 : 1;
	return 0;
}

/* The entries of @l that were complete and unchanged across our copy,
 * into @tmp (room for @cap).  Return: how many. */
static uint32_t log_copy_entries(struct collect *c, struct actrack_log *l,
				 uint32_t cap, struct log_sort *tmp)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < cap; i++) {
		struct actrack_log_entry *e = &l->entries[i];
		struct log_sort *s = &tmp[n];
		uint32_t s1, s2, len;

		s1 = at_load_acquire(&e->seq);
		if (!s1 || (s1 & 1))
			continue;	/* never written, or being written */
		s->e.tid = at_load(&e->tid);
		s->e.time_ns = at_load(&e->time_ns);
		len = at_load(&e->len);
		for (uint32_t j = 0; j < sizeof(e->text); j++)
			s->e.text[j] = at_load(&e->text[j]);
		at_fence_acquire();
		s2 = at_load(&e->seq);
		if (s1 != s2)
			continue;	/* rewritten while we copied */
		if (len >= ACTRACK_LOG_TEXT_MAX) {
			c->corrupt = true;
			continue;
		}
		s->e.text[len] = 0;
		s->e.seq = s1 / 2 - 1;	/* message number n (mod 2^31) */
		n++;
	}
	return n;
}

/*
 * A log ring, entry by entry: the ring is written concurrently by every
 * thread of its process, so there is no ring-wide version; each entry has
 * its own seqcount (2n+1 while message n is written, 2n+2 when done) and
 * an entry is kept only if that count is even and unchanged across our
 * copy.  Capacity is read once and bounded by the block's payload.
 */
static int collect_log(struct collect *c, const struct actrack_walk_rec *r)
{
	struct actrack_log *l;
	struct log_sort *tmp = NULL;
	struct log_item *it;
	uint32_t id, cap, max, head, n = 0;
	struct snap_key key;

	/* The walk checked the owner on a copy of the header; the entries
	 * are read live, and kept only if the data id is still that copy's. */
	l = actrack_arena_get(c->a, r->ref, ACTRACK_TYPE_LOG, sizeof(*l));
	if (!l)
		return 0;
	if (r->payload < sizeof(*l)) {
		c->corrupt = true;
		return 0;
	}
	id = r->log->owner.data_id;
	key = owner_key(r->owner);
	cap = r->log->capacity;
	max = (r->payload - (uint32_t)sizeof(*l)) /
	      (uint32_t)sizeof(struct actrack_log_entry);
	if (cap > max) {
		c->corrupt = true;
		return 0;
	}
	if (cap) {
		tmp = calloc(cap, sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
	}
	n = log_copy_entries(c, l, cap, tmp);
	/*
	 * Order by distance from the head, read after the entries: every
	 * message we saw complete took its number before it was written, so
	 * it is below this head.  Distances modulo 2^31 survive the
	 * wrap-around of the 32-bit seqcount; an entry "ahead" of the head
	 * is inconsistent and dropped.
	 */
	head = at_load_acquire(&l->head);
	for (uint32_t i = 0; i < n;) {
		uint32_t age = (head - 1 - (uint32_t)tmp[i].e.seq) & 0x7fffffffU;

		if (age >= 0x40000000U) {
			c->corrupt = true;
			tmp[i] = tmp[--n];
			continue;
		}
		tmp[i].age = age;
		tmp[i].e.seq = (uint32_t)(head - 1 - age);
		i++;
	}
	at_fence_acquire();
	if (at_load(&l->owner.data_id) != id) {
		free(tmp);		/* freed or reused while we read it */
		return 0;
	}
	if (n > 1)
		qsort(tmp, n, sizeof(*tmp), log_sort_cmp);

	it = vec_push(&c->logs, sizeof(*it));
	if (!it) {
		free(tmp);
		return -ENOMEM;
	}
	it->key = key;
	it->nr = 0;
	it->entries = NULL;
	if (n) {
		it->entries = malloc((size_t)n * sizeof(*it->entries));
		if (!it->entries) {
			free(tmp);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < n; i++)
			it->entries[i] = tmp[i].e;
		it->nr = n;
	}
	free(tmp);
	return 0;
}

static int collect_module(struct collect *c, const struct actrack_walk_rec *r)
{
	struct module_item *it;

	it = vec_push(&c->modules, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->key = owner_key(r->owner);
	__actrack_snap_module(&it->mod, r->module);
	return 0;
}

static int collect_record(struct actrack_walk *w,
			  const struct actrack_walk_rec *r)
{
	struct collect *c = w->ctx;

	switch (r->type) {
	case ACTRACK_TYPE_PROCESS:
		return collect_process(c, r);
	case ACTRACK_TYPE_THREAD:
		return collect_thread(c, r);
	case ACTRACK_TYPE_LOG:
		return collect_log(c, r);
	case ACTRACK_TYPE_MODULE:
		return collect_module(c, r);
	default:
		return collect_user_data(c, r);
	}
}

static void *collect_ud_grow(struct actrack_walk *w, __u32 size)
{
	/* On failure the old buffer stays in w->ud_buf, freed with it. */
	return realloc(w->ud_buf, size);
}

/*
 * One owner walk over every owner: each record copied, checked and
 * reported once (a cycle ends the walk), the user data of processes and
 * activities with it; then the global user data, which is nobody's.
 */
static int collect_all(struct collect *c, uint32_t global_data)
{
	static const struct actrack_owner global_owner;	/* pid 0 */
	struct actrack_walk *w;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	c->w = w;
	w->seen = malloc(actrack_arena_seen_bytes(c->a));
	if (!w->seen)
		return -ENOMEM;
	w->a = c->a;
	w->types = ACTRACK_WALK_THREADS | ACTRACK_WALK_PROCESSES |
		   ACTRACK_WALK_MODULES | ACTRACK_WALK_LOGS |
		   ACTRACK_WALK_USER_DATA;
	w->fn = collect_record;
	w->ctx = c;
	w->ud_grow = collect_ud_grow;
	ret = actrack_walk_records(w);
	if (ret || !global_data)
		return ret;
	c->global = true;
	return actrack_walk_user_data(w, global_data, &global_owner, 0, 0);
}

static int thread_cmp(const void *x, const void *y)
{
	const struct actrack_snap_thread *p = x, *q = y;

	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	return 0;
}

static int module_cmp(const void *x, const void *y)
{
	const struct actrack_snap_module *p = x, *q = y;

	if (p->base != q->base)
		return p->base < q->base ? -1 : 1;
	return strcmp(p->path, q->path);
}

static struct actrack_snap_process *find_proc(struct actrack_snapshot *s,
					      const struct snap_key *key)
{
	uint32_t lo = 0, hi = s->nr_processes;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct snap_key k = { s->processes[mid].pid,
				      s->processes[mid].pid_ns,
				      s->processes[mid].start_ticks };
		int r = key_cmp(key, &k);

		if (!r)
			return &s->processes[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Build the sorted, de-duplicated list of processes from all records. */
static int make_processes(struct collect *c, struct actrack_snapshot *s)
{
	uint32_t total = c->procs.nr + c->threads.nr + c->logs.nr +
			 c->modules.nr, n = 0, u = 0;
	struct snap_key *keys;

	if (!total)
		return 0;
	keys = malloc((size_t)total * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->procs.nr; i++)
		keys[n++] = ((struct proc_item *)c->procs.v)[i].key;
	for (uint32_t i = 0; i < c->threads.nr; i++) {
		struct actrack_snap_thread *t =
			&((struct actrack_snap_thread *)c->threads.v)[i];

		keys[n++] = (struct snap_key){ t->pid, t->pid_ns,
					       t->start_ticks };
	}
	for (uint32_t i = 0; i < c->logs.nr; i++)
		keys[n++] = ((struct log_item *)c->logs.v)[i].key;
	for (uint32_t i = 0; i < c->modules.nr; i++)
		keys[n++] = ((struct module_item *)c->modules.v)[i].key;
	qsort(keys, n, sizeof(*keys), key_qcmp);
	for (uint32_t i = 0; i < n; i++)
		if (!u || key_cmp(&keys[u - 1], &keys[i]))
			keys[u++] = keys[i];

	s->processes = calloc(u, sizeof(*s->processes));
	if (!s->processes) {
		free(keys);
		return -ENOMEM;
	}
	s->nr_processes = u;
	for (uint32_t i = 0; i < u; i++) {
		s->processes[i].pid = keys[i].pid;
		s->processes[i].pid_ns = keys[i].pid_ns;
		s->processes[i].start_ticks = keys[i].start_ticks;
	}
	free(keys);
	return 0;
}

static int fill_records(struct collect *c, struct actrack_snapshot *s)
{
	struct proc_item *procs = c->procs.v;

	for (uint32_t i = 0; i < c->procs.nr; i++) {
		struct actrack_snap_process *p = find_proc(s, &procs[i].key);
		const struct actrack_process *rec = &procs[i].rec;

		/* A second record for one owner is a writer bug
		 * or a forgery; the first one wins. */
		if (!p || p->has_record)
			continue;
		p->has_record = true;
		p->phase = rec->phase;
		p->parent_pid = rec->parent_pid;
		p->launch_time_ns = rec->launch_time_ns;
		__actrack_join_cmdline(p->cmdline, rec->cmdline,
				       rec->cmdline_size);
		/* Its annotations, read by the walk right after it. */
		p->values = procs[i].values;
		p->nr_values = procs[i].nr_values;
		procs[i].values = NULL;
		procs[i].nr_values = 0;
	}
	return 0;
}

static int fill_threads(struct collect *c, struct actrack_snapshot *s)
{
	struct actrack_snap_thread *threads = c->threads.v;

	for (uint32_t i = 0; i < c->threads.nr; i++) {
		struct snap_key k = { threads[i].pid, threads[i].pid_ns,
				      threads[i].start_ticks };

		find_proc(s, &k)->nr_threads++;
	}
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		struct actrack_snap_process *p = &s->processes[i];

		if (!p->nr_threads)
			continue;
		p->threads = calloc(p->nr_threads, sizeof(*p->threads));
		if (!p->threads)
			return -ENOMEM;
		p->nr_threads = 0;
	}
	/* Ownership of each thread's activities moves to its process. */
	for (uint32_t i = 0; i < c->threads.nr; i++) {
		struct snap_key k = { threads[i].pid, threads[i].pid_ns,
				      threads[i].start_ticks };
		struct actrack_snap_process *p = find_proc(s, &k);

		p->threads[p->nr_threads++] = threads[i];
		threads[i].activities = NULL;
		threads[i].nr_activities = 0;
	}
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		struct actrack_snap_process *p = &s->processes[i];

		if (p->nr_threads > 1)
			qsort(p->threads, p->nr_threads, sizeof(*p->threads),
			      thread_cmp);
	}
	return 0;
}

static int fill_logs_modules(struct collect *c, struct actrack_snapshot *s)
{
	struct log_item *logs = c->logs.v;
	struct module_item *mods = c->modules.v;

	for (uint32_t i = 0; i < c->logs.nr; i++)
		find_proc(s, &logs[i].key)->nr_logs += logs[i].nr;
	for (uint32_t i = 0; i < c->modules.nr; i++)
		find_proc(s, &mods[i].key)->nr_modules++;
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		struct actrack_snap_process *p = &s->processes[i];

		if (p->nr_logs) {
			p->logs = calloc(p->nr_logs, sizeof(*p->logs));
			if (!p->logs)
				return -ENOMEM;
		}
		if (p->nr_modules) {
			p->modules = calloc(p->nr_modules, sizeof(*p->modules));
			if (!p->modules)
				return -ENOMEM;
		}
		p->nr_logs = 0;
		p->nr_modules = 0;
	}
	/* Normally one ring per process; if there are more, each stays in
	 * its own order, rings in arena order. */
	for (uint32_t i = 0; i < c->logs.nr; i++) {
		struct actrack_snap_process *p = find_proc(s, &logs[i].key);

		if (!logs[i].nr)
			continue;
		memcpy(&p->logs[p->nr_logs], logs[i].entries,
		       (size_t)logs[i].nr * sizeof(*p->logs));
		p->nr_logs += logs[i].nr;
	}
	for (uint32_t i = 0; i < c->modules.nr; i++) {
		struct actrack_snap_process *p = find_proc(s, &mods[i].key);

		p->modules[p->nr_modules++] = mods[i].mod;
	}
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		struct actrack_snap_process *p = &s->processes[i];

		if (p->nr_modules > 1)
			qsort(p->modules, p->nr_modules, sizeof(*p->modules),
			      module_cmp);
	}
	return 0;
}

ACTRACK_API void actrack_snapshot_free(struct actrack_snapshot *snap)
{
	if (!snap)
		return;
	for (uint32_t i = 0; snap->processes && i < snap->nr_processes; i++)
		__actrack_free_process(&snap->processes[i]);
	free(snap->processes);
	__actrack_free_values(snap->global_values, snap->nr_global_values);
	free(snap);
}

int __actrack_snapshot_arena(struct actrack_arena *a,
			     struct actrack_snapshot **out)
{
	struct actrack_snapshot *s;
	struct collect c;
	int ret;

	*out = NULL;
	if (a->writable)
		return -EINVAL;
	ret = actrack_arena_check(a);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(&c, 0, sizeof(c));
	c.a = a;
	/* A copy of a header that may still change (flags, freeptr): only
	 * what was checked above is relied upon. */
	memcpy(&s->header, a->base, sizeof(s->header));

	ret = collect_all(&c, s->header.global_data);
	if (!ret)
		ret = make_processes(&c, s);
	if (!ret)
		ret = fill_records(&c, s);
	if (!ret)
		ret = fill_threads(&c, s);
	if (!ret)
		ret = fill_logs_modules(&c, s);
	if (ret)
		goto err;
	s->global_values = c.global_values;
	s->nr_global_values = c.nr_global_values;
	c.global_values = NULL;
	c.nr_global_values = 0;

	s->nr_torn = c.nr_torn;
	s->used_bytes = actrack_arena_used(a);
	s->free_bytes = actrack_arena_free_bytes(a);
	s->corrupt = c.corrupt || actrack_arena_is_corrupt(a);
	/* Taken last: every timestamp we copied is older than this. */
	s->taken_mono_ns = __actrack_mono_ns();
	collect_free(&c);
	*out = s;
	return 0;

err:
	collect_free(&c);
	actrack_snapshot_free(s);
	return ret;
}

/*
 * A live arena's processes as they call themselves now: programs that
 * rewrite their argv (setproctitle(), as PostgreSQL and nginx do) do it
 * after the record was written at attach.  Only a process of our pid
 * namespace, on the boot the arena comes from, whose pid still has the
 * record's start time, is that process; the others keep their record's.
 */
static void refresh_cmdlines(struct actrack_snapshot *s)
{
	uint32_t self_ns = __actrack_pid_ns_of("self");
	uint8_t boot[16];
	char path[48], buf[ACTRACK_CMDLINE_MAX];

	if (actrack_boot_id(boot) || memcmp(boot, s->header.boot_id, 16))
		return;
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		struct actrack_snap_process *p = &s->processes[i];
		uint64_t ticks;
		ssize_t n;
		int fd;

		if (!p->has_record || (p->pid_ns && p->pid_ns != self_ns) ||
		    actrack_read_start_ticks((pid_t)p->pid, &ticks) ||
		    ticks != p->start_ticks)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/cmdline", p->pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		close(fd);
		/* Empty: a zombie, or a kernel thread; keep the record's. */
		if (n > 0)
			__actrack_join_cmdline(p->cmdline, buf, (uint32_t)n);
	}
}

/* The snapshot of mapped arena @m, which it unmaps. */
static int snapshot_map(struct actrack_map *m, uint32_t flags,
			struct actrack_snapshot **out)
{
	int ret = __actrack_snapshot_arena(&m->arena, out);

	/*
	 * A saved image is a moment, not a live arena: its "now" is when it
	 * was saved, or every age would grow with the reader's clock.  Files
	 * carry one, and the previous boot's image, where the module wrote
	 * its machine's last heartbeat over whatever was there (0 if none;
	 * kmod/persist.c).  A live kernel arena never does, and a value
	 * forged into it must not move the ages a privileged reader sees.
	 */
	if (!ret && (m->backend == ACTRACK_BACKEND_FILE ||
		     (flags & ACTRACK_SNAP_PREVIOUS_BOOT)) &&
	    (*out)->header.saved_mono_ns)
		(*out)->taken_mono_ns = (*out)->header.saved_mono_ns;
	else if (!ret && !(flags & ACTRACK_SNAP_NO_CMDLINES))
		refresh_cmdlines(*out);
	__actrack_unmap(m);
	return ret;
}

ACTRACK_API int actrack_snapshot_take(const char *path, uint32_t flags,
				      struct actrack_snapshot **out)
{
	struct actrack_map m;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	ret = __actrack_map_reader(path, flags & ~ACTRACK_SNAP_NO_CMDLINES,
				   &m);
	return ret ? ret : snapshot_map(&m, flags, out);
}

ACTRACK_API int actrack_snapshot_take_uid(uint32_t uid, uint32_t flags,
					  struct actrack_snapshot **out)
{
	struct actrack_map m;
	int ret;

	if (!out ||
	    (flags & ~(ACTRACK_SNAP_NO_CMDLINES | ACTRACK_SNAP_PREVIOUS_BOOT)))
		return -EINVAL;
	*out = NULL;
	ret = __actrack_map_module(false, (long)uid,
				   flags & ACTRACK_SNAP_PREVIOUS_BOOT ?
				   ACTRACK_SELECT_PREVIOUS_BOOT : 0, &m);
	return ret ? ret : snapshot_map(&m, flags, out);
}
