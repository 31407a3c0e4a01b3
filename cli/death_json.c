// SPDX-License-Identifier: MIT
/*
 * A death report read back from its JSON (see death_json.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "death_json.h"
#include "json_read.h"

/* Bounds on what a document from outside may make us allocate. */
#define DJ_MAX_THREADS	65536
#define DJ_MAX_MODULES	4096

struct dj {
	struct actrack_death *d;
	bool process;
	uint32_t cap_threads, cap_modules;
};

/* A JSON number as an integer of [@min, @max]. */
static int dj_int(enum jr_kind kind, const char *val, int64_t min,
		  uint64_t max, uint64_t *out)
{
	char *end;

	if (kind != JR_NUMBER)
		return -EBADMSG;
	errno = 0;
	if (val[0] == '-') {
		long long v = strtoll(val, &end, 10);

		if (errno || *end || v < min)
			return -EBADMSG;
		*out = (uint64_t)v;
		return 0;
	}
	*out = strtoull(val, &end, 10);
	return errno || *end || *out > max ? -EBADMSG : 0;
}

/* A string cut into @dst[@size], NUL-terminated. */
static int dj_str(enum jr_kind kind, const char *val, size_t len, char *dst,
		  size_t size)
{
	if (kind != JR_STRING)
		return -EBADMSG;
	if (len >= size)
		len = size - 1;
	memcpy(dst, val, len);
	dst[len] = '\0';
	return 0;
}

/* One more element of an array of @size-byte entries (zeroed). */
static int dj_grow(void **arr, uint32_t *nr, uint32_t *cap, size_t size,
		   uint32_t max)
{
	void *p;

	if (*nr >= max)
		return -EBADMSG;
	if (*nr == *cap) {
		uint32_t n = *cap ? 2 * *cap : 8;

		p = realloc(*arr, n * size);
		if (!p)
			return -ENOMEM;
		*arr = p;
		*cap = n;
	}
	memset((char *)*arr + *nr * size, 0, size);
	(*nr)++;
	return 0;
}

static int dj_build_id(struct actrack_snap_module *m, enum jr_kind kind,
		       const char *val, size_t len)
{
	if (kind != JR_STRING)
		return -EBADMSG;
	if (len % 2 || len / 2 > sizeof(m->build_id))
		return 0;		/* not one we wrote: left out */
	for (size_t i = 0; i < len / 2; i++) {
		unsigned int b;

		if (sscanf(val + 2 * i, "%2x", &b) != 1)
			return 0;
		m->build_id[i] = (uint8_t)b;
	}
	m->build_id_size = (uint8_t)(len / 2);
	return 0;
}

static int dj_module(struct actrack_snap_module *m, const char *key,
		     enum jr_kind kind, const char *val, size_t len)
{
	if (!strcmp(key, "path"))
		return dj_str(kind, val, len, m->path, sizeof(m->path));
	if (!strcmp(key, "base"))
		return dj_int(kind, val, 0, UINT64_MAX, &m->base);
	if (!strcmp(key, "size"))
		return dj_int(kind, val, 0, UINT64_MAX, &m->size);
	if (!strcmp(key, "vaddr"))
		return dj_int(kind, val, 0, UINT64_MAX, &m->vaddr);
	if (!strcmp(key, "build_id"))
		return dj_build_id(m, kind, val, len);
	return 0;
}

static int dj_thread(struct actrack_snap_thread *t, const char *key,
		     enum jr_kind kind, const char *val, size_t len)
{
	uint64_t v;
	int ret = 0;

	if (!strcmp(key, "name"))
		return dj_str(kind, val, len, t->name, sizeof(t->name));
	if (!strcmp(key, "tid"))
		ret = dj_int(kind, val, 0, UINT32_MAX, &v) ?: (t->tid = v, 0);
	else if (!strcmp(key, "depth"))
		ret = dj_int(kind, val, 0, UINT32_MAX, &v) ?:
		      (t->depth = v, 0);
	else if (!strcmp(key, "fatal.signo"))
		ret = dj_int(kind, val, INT32_MIN, INT32_MAX, &v) ?:
		      (t->fatal_signo = (int32_t)v, 0);
	else if (!strcmp(key, "fatal.code"))
		ret = dj_int(kind, val, INT32_MIN, INT32_MAX, &v) ?:
		      (t->fatal_code = (int32_t)v, 0);
	else if (!strcmp(key, "fatal.addr"))
		ret = dj_int(kind, val, 0, UINT64_MAX, &t->fatal_addr);
	else if (!strcmp(key, "fatal.pc"))
		ret = dj_int(kind, val, 0, UINT64_MAX, &t->fatal_pc);
	return ret;
}

/* The report's own members (not of its process). */
static int dj_head(struct actrack_death *d, const char *path,
		   enum jr_kind kind, const char *val)
{
	uint64_t v;

	if (!strcmp(path, "seq"))
		return dj_int(kind, val, 0, UINT64_MAX, &d->seq);
	if (!strcmp(path, "uid"))
		return dj_int(kind, val, 0, UINT32_MAX, &v) ?: (d->uid = v, 0);
	if (!strcmp(path, "flags"))
		return dj_int(kind, val, 0, UINT32_MAX, &v) ?:
		       (d->flags = v, 0);
	if (!strcmp(path, "core_dumped"))
		d->core_dumped = kind == JR_TRUE;
	if (kind == JR_NULL)
		return 0;
	if (!strcmp(path, "signal"))
		return dj_int(kind, val, 0, 64, &v) ?: (d->signal = v, 0);
	if (!strcmp(path, "exit_code"))
		return dj_int(kind, val, INT32_MIN, INT32_MAX, &v) ?:
		       (d->exit_code = (int)v, 0);
	return 0;
}

static int dj_value(void *arg, const char *path, enum jr_kind kind,
		    const char *val, size_t len)
{
	static const char mods[] = "process.modules[]";
	static const char thrs[] = "process.threads[]";
	struct dj *c = arg;
	struct actrack_snap_process *p = &c->d->process;
	uint64_t v;

	if (!*path)
		return kind == JR_OBJECT ? 0 : -EBADMSG;
	if (strncmp(path, "process", 7))
		return dj_head(c->d, path, kind, val);
	if (!strcmp(path, "process"))
		return kind == JR_OBJECT ? (c->process = true, 0) : -EBADMSG;
	if (!strcmp(path, "process.pid"))
		return dj_int(kind, val, 0, UINT32_MAX, &v) ?: (p->pid = v, 0);
	if (!strcmp(path, "process.cmdline"))
		return kind == JR_NULL ? 0 : dj_str(kind, val, len, p->cmdline,
						     sizeof(p->cmdline));
	if (!strcmp(path, mods))
		return kind != JR_OBJECT ? -EBADMSG :
		       dj_grow((void **)&p->modules, &p->nr_modules,
			       &c->cap_modules, sizeof(*p->modules),
			       DJ_MAX_MODULES);
	if (!strcmp(path, thrs))
		return kind != JR_OBJECT ? -EBADMSG :
		       dj_grow((void **)&p->threads, &p->nr_threads,
			       &c->cap_threads, sizeof(*p->threads),
			       DJ_MAX_THREADS);
	/*
	 * A member of the last element.  A key may itself hold "." or "[]"
	 * (json_read() joins keys with "."), so a path can name an element
	 * before any exists: refuse it.
	 */
	if (!strncmp(path, mods, sizeof(mods) - 1) &&
	    path[sizeof(mods) - 1] == '.')
		return !p->nr_modules ? -EBADMSG :
		       dj_module(&p->modules[p->nr_modules - 1],
				 path + sizeof(mods), kind, val, len);
	if (!strncmp(path, thrs, sizeof(thrs) - 1) &&
	    path[sizeof(thrs) - 1] == '.')
		return !p->nr_threads ? -EBADMSG :
		       dj_thread(&p->threads[p->nr_threads - 1],
				 path + sizeof(thrs), kind, val, len);
	return 0;
}

int death_from_json(const char *json, size_t len, struct actrack_death *d)
{
	struct dj c = { .d = d };
	int ret;

	memset(d, 0, sizeof(*d));
	ret = json_read(json, len, dj_value, &c);
	if (!ret && !c.process)
		ret = -EBADMSG;
	for (uint32_t i = 0; i < d->process.nr_threads; i++)
		d->process.threads[i].pid = d->process.pid;
	d->nr_tracked_threads = d->process.nr_threads;
	return ret;
}

void death_json_free(struct actrack_death *d)
{
	free(d->process.threads);
	free(d->process.modules);
	d->process.threads = NULL;
	d->process.modules = NULL;
	d->process.nr_threads = d->process.nr_modules = 0;
}
