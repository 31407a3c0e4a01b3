// SPDX-License-Identifier: MIT
/*
 * Module records: every loaded ELF object with its load address, extent
 * and GNU build-id, so that activity origins can be symbolized after the
 * process is gone, as long as its binaries (or their debug files, found by
 * build-id) are still on disk.
 *
 * Recording is on every tracked process's start (attach), so it costs
 * O(loaded objects), never O(arena): the process remembers which module
 * records it wrote (a private list: reference, data id, and what the
 * record describes), and a re-record (after dlopen()) keeps the records
 * of objects still loaded, writes records for new ones and frees those of
 * objects gone, by reference, without walking the arena.
 *
 * Before, every recording first walked the whole arena for records of
 * (pid, start_ticks); at attach that walk also freed the module records
 * an earlier image of this pid left before execve() (same pid, same start
 * time).  Those now stay until the process's other records of that image
 * are cleaned up (the exec-chain cleanup belongs to attach, with the
 * stale process record and trackers of the same image).
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

/* One module record this process wrote, and the object it describes. */
struct own_module {
	uint32_t ref, id;
	uint64_t base, vaddr, size;
	uint64_t name_hash;		/* dlpi_name's; 0: main program */
};

/*
 * The records of one recording, owned by (@pid, @start_ticks): after
 * fork() the child inherits a copy of its parent's list, whose records it
 * must never free.
 */
struct own_modules {
	uint32_t pid;
	uint64_t start_ticks;
	uint32_t nr, cap;
	struct own_module m[];
};

/*
 * The current list.  A recording takes it (exchange with NULL), builds
 * its successor and installs that (exchange again); whatever it takes
 * out is its own to free, so that two recordings racing each other never
 * free a record twice and leave one complete set behind.
 */
static struct own_modules *own_list;

/*
 * The first list lives here, not on the heap: a process that allocates
 * nothing else (a shell's /bin/true) would pay the allocator's first use
 * (getrandom, brk, a page) on every start.  Whoever holds @static_busy
 * owns it; a list of more objects, or a second one while the first is in
 * use, comes from malloc().
 */
#define STATIC_MODULES	32	/* and the preload's .bss ends in the page
				 * its .data ends in: no anonymous mapping
				 * of its own in every image */
static union {
	struct own_modules l;
	char bytes[sizeof(struct own_modules) +
		   STATIC_MODULES * sizeof(struct own_module)];
} static_list;
static int static_busy;

static struct own_modules *list_alloc(uint32_t cap)
{
	struct own_modules *l;

	if (cap <= STATIC_MODULES &&
	    !__atomic_exchange_n(&static_busy, 1, __ATOMIC_ACQUIRE)) {
		l = &static_list.l;
		cap = STATIC_MODULES;
	} else {
		l = malloc(sizeof(*l) + cap * sizeof(l->m[0]));
		if (!l)
			return NULL;
	}
	l->nr = 0;
	l->cap = cap;
	return l;
}

static void list_release(struct own_modules *l)
{
	if (l == &static_list.l)
		__atomic_store_n(&static_busy, 0, __ATOMIC_RELEASE);
	else
		free(l);
}

/* @l with room for 16 more, moved to the heap; NULL if out of memory. */
static struct own_modules *list_grow(struct own_modules *l)
{
	struct own_modules *n = malloc(sizeof(*n) +
				       (l->cap + 16) * sizeof(n->m[0]));

	if (!n)
		return NULL;
	memcpy(n, l, sizeof(*l) + l->nr * sizeof(l->m[0]));
	n->cap = l->cap + 16;
	list_release(l);
	return n;
}

struct collect {
	struct own_modules *old;	/* taken: records to keep or free */
	struct own_modules *cur;	/* being built */
	int recorded;
	int error;
};

static void note_build_id(const struct dl_phdr_info *info,
			  const ElfW(Phdr) *ph, struct actrack_module *mod)
{
	const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
	size_t left = ph->p_memsz;

	/* Notes of our own loaded objects: trusted memory, still bounded. */
	while (left >= sizeof(ElfW(Nhdr))) {
		const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
		size_t name = (n->n_namesz + 3) & ~3UL;
		size_t desc = (n->n_descsz + 3) & ~3UL;
		size_t total = sizeof(*n) + name + desc;

		if (total > left)
			return;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    !memcmp(p + sizeof(*n), "GNU", 4) &&
		    n->n_descsz <= ACTRACK_BUILD_ID_MAX) {
			memcpy(mod->build_id, p + sizeof(*n) + name,
			       n->n_descsz);
			mod->build_id_size = (uint8_t)n->n_descsz;
			return;
		}
		p += total;
		left -= total;
	}
}

/* FNV-1a of an object's name: told apart from another at the same place. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (!s || !*s)
		return 0;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h ? h : 1;
}

static bool same_owner(const struct own_modules *l)
{
	struct actrack_proc *p = &__actrack_proc;

	return l->pid == p->pid && l->start_ticks == p->start_ticks;
}

/* Is @e's record still ours and live in the arena? */
static bool still_ours(const struct own_module *e)
{
	struct actrack_proc *p = &__actrack_proc;
	struct actrack_module *m;

	m = actrack_arena_get(__actrack_arena(), e->ref, ACTRACK_TYPE_MODULE,
			      sizeof(*m));
	return m && at_load_acquire(&m->owner.data_id) == e->id &&
	       m->owner.pid == p->pid && m->owner.start_ticks == p->start_ticks;
}

/* Move the old record of this object into the new list, if there is one. */
static bool keep_old(struct collect *c, const struct own_module *want)
{
	struct own_modules *old = c->old;

	if (!old)
		return false;
	for (uint32_t i = 0; i < old->nr; i++) {
		struct own_module *e = &old->m[i];

		if (!e->ref || e->base != want->base ||
		    e->vaddr != want->vaddr || e->size != want->size ||
		    e->name_hash != want->name_hash)
			continue;
		if (!still_ours(e))
			return false;
		c->cur->m[c->cur->nr++] = *e;
		e->ref = 0;	/* not the old list's to free any more */
		return true;
	}
	return false;
}

static int record_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct actrack_arena *a = __actrack_arena();
	struct collect *c = data;
	struct actrack_module *mod;
	struct own_module e = { 0 };
	uint64_t lo = UINT64_MAX, hi = 0;
	bool named = info->dlpi_name && info->dlpi_name[0];
	void *blk;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_vaddr < lo)
			lo = ph->p_vaddr;
		if (ph->p_vaddr + ph->p_memsz > hi)
			hi = ph->p_vaddr + ph->p_memsz;
	}
	if (hi <= lo)
		return 0;
	e.base = info->dlpi_addr;
	e.vaddr = lo;
	e.size = hi - lo;
	e.name_hash = named ? name_hash(info->dlpi_name) : 0;
	if (c->cur->nr == c->cur->cap) {
		/* More objects than counted (a dlopen() in between). */
		struct own_modules *n = list_grow(c->cur);

		if (!n) {
			c->error = -ENOMEM;
			return 1;
		}
		c->cur = n;
	}
	if (keep_old(c, &e)) {
		c->recorded++;
		return 0;
	}
	e.ref = __actrack_alloc_owned(a, ACTRACK_TYPE_MODULE, sizeof(*mod), 0,
				      &blk);
	if (!e.ref) {
		c->error = -ENOSPC;
		return 1;
	}
	mod = blk;
	mod->base = e.base;
	mod->vaddr = e.vaddr;
	mod->size = e.size;
	if (named) {
		strncpy(mod->path, info->dlpi_name, sizeof(mod->path) - 1);
	} else {
		/* The main program has no name in the list. */
		ssize_t n = readlink("/proc/self/exe", mod->path,
				     sizeof(mod->path) - 1);
		if (n < 0)
			mod->path[0] = 0;
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_NOTE && !mod->build_id_size)
			note_build_id(info, &info->dlpi_phdr[i], mod);
	}
	e.id = __actrack_publish_owner(&mod->owner, 0);
	c->cur->m[c->cur->nr++] = e;
	c->recorded++;
	return 0;
}

static int count_one(struct dl_phdr_info *info, size_t size, void *data)
{
	(*(uint32_t *)data)++;
	return 0;
}

/*
 * Free the records of @l that are still ours, then @l itself.  Checked
 * one by one: after actrack_reattach() the list names blocks of the arena
 * we left, which in this one may be anybody's.
 */
static void free_list(struct own_modules *l)
{
	if (!l)
		return;
	for (uint32_t i = 0; i < l->nr; i++)
		if (l->m[i].ref && still_ours(&l->m[i]))
			actrack_arena_free_owned(__actrack_arena(),
						 l->m[i].ref,
						 ACTRACK_TYPE_MODULE,
						 l->m[i].id);
	list_release(l);
}

ACTRACK_API int actrack_record_modules(void)
{
	struct actrack_proc *p = &__actrack_proc;
	struct collect c = { 0 };
	struct own_modules *prev;
	uint32_t count = 0;
	int ret = __actrack_ensure_attached();

	if (ret)
		return ret;
	c.old = __atomic_exchange_n(&own_list, NULL, __ATOMIC_ACQ_REL);
	if (c.old && !same_owner(c.old)) {
		/* Inherited through fork(): the parent's records. */
		list_release(c.old);
		c.old = NULL;
	}
	dl_iterate_phdr(count_one, &count);
	c.cur = list_alloc(count + 8);
	if (!c.cur) {
		/* Nothing recorded, nothing freed: the old records stay. */
		prev = __atomic_exchange_n(&own_list, c.old, __ATOMIC_ACQ_REL);
		free_list(prev);
		return -ENOMEM;
	}
	c.cur->pid = p->pid;
	c.cur->start_ticks = p->start_ticks;
	dl_iterate_phdr(record_one, &c);
	/* Old records of objects no longer loaded (or not reached after an
	 * error); then whatever a racing recording installed meanwhile: it
	 * took no record of ours, since we held the list. */
	free_list(c.old);
	prev = __atomic_exchange_n(&own_list, c.cur, __ATOMIC_ACQ_REL);
	free_list(prev);
	return c.error ? c.error : c.recorded;
}
