// SPDX-License-Identifier: MIT
/*
 * Module records: every loaded ELF object with its load address, extent
 * and GNU build-id, so that activity origins can be symbolized after the
 * process is gone, as long as its binaries (or their debug files, found by
 * build-id) are still on disk.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

struct collect {
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

static int record_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct actrack_arena *a = __actrack_arena();
	struct collect *c = data;
	struct actrack_module *mod;
	uint64_t lo = UINT64_MAX, hi = 0;
	uint32_t ref;
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
	ref = __actrack_alloc_owned(a, ACTRACK_TYPE_MODULE, sizeof(*mod), 0,
				    &blk);
	if (!ref) {
		c->error = -ENOSPC;
		return 1;
	}
	mod = blk;
	mod->base = info->dlpi_addr;
	mod->vaddr = lo;
	mod->size = hi - lo;
	if (info->dlpi_name && info->dlpi_name[0]) {
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
	__actrack_publish_owner(&mod->owner, 0);
	c->recorded++;
	return 0;
}

/* Forget our earlier module records (a re-record after dlopen). */
static void free_own_modules(void)
{
	struct actrack_proc *p = &__actrack_proc;
	struct actrack_arena *a = __actrack_arena();
	struct actrack_arena_iter it;
	uint32_t ref;

	actrack_arena_iter_init(&it, a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_MODULE,
					      NULL))) {
		struct actrack_module *m = actrack_arena_get(a, ref,
			ACTRACK_TYPE_MODULE, sizeof(*m));

		if (m && m->owner.data_id && m->owner.pid == p->pid &&
		    m->owner.start_ticks == p->start_ticks)
			actrack_arena_free(a, ref, ACTRACK_TYPE_MODULE);
	}
}

ACTRACK_API int actrack_record_modules(void)
{
	struct collect c = { 0 };
	int ret = __actrack_ensure_attached();

	if (ret)
		return ret;
	free_own_modules();
	dl_iterate_phdr(record_one, &c);
	return c.error ? c.error : c.recorded;
}
