// SPDX-License-Identifier: MIT
/*
 * Snapshots of module records: the test binary itself with its path and
 * its exact build id (read here from our own ELF notes), libc, order by
 * load address; none when the process opted out.
 */
#include <elf.h>
#include <gnu/libc-version.h>
#include <link.h>
#include "snapshot_helpers.h"
#include "test_harness.h"

struct own_id {
	uint8_t id[ACTRACK_BUILD_ID_MAX];
	size_t size;
};

/* NT_GNU_BUILD_ID of the main program (the first object listed). */
static int find_own_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct own_id *o = arg;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*n);
			const char *desc = name + ((n->n_namesz + 3) & ~3U);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) &&
			    n->n_descsz <= ACTRACK_BUILD_ID_MAX) {
				memcpy(o->id, desc, n->n_descsz);
				o->size = n->n_descsz;
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3U);
		}
	}
	return 1;	/* only the first object: the program */
}

static void nothing(void *arg)
{
}

TEST(test_binary_and_libc_with_build_ids)
{
	const struct actrack_snap_process *p;
	const struct actrack_snap_module *self = NULL, *libc = NULL;
	struct actrack_snapshot *s;
	struct own_id own = { .size = 0 };
	struct writer w;
	char path[256], exe[PATH_MAX];
	ssize_t n;

	dl_iterate_phdr(find_own_id, &own);
	ASSERT_LT(0u, own.size);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = 0;

	test_path(path, sizeof(path), "modules");
	ASSERT_EQ(0, writer_start(&w, path, 8, 0, nothing, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	p = snap_find(s, (uint32_t)w.pid);
	ASSERT_NE(NULL, p);
	ASSERT_LT(1u, p->nr_modules);
	for (uint32_t i = 0; i < p->nr_modules; i++) {
		const struct actrack_snap_module *m = &p->modules[i];

		if (i)
			EXPECT_LE(p->modules[i - 1].base, m->base);
		EXPECT_NE(0u, m->size);
		if (!strcmp(m->path, exe))
			self = m;
		if (strstr(m->path, "/libc.so"))
			libc = m;
	}
	ASSERT_NE(NULL, self);
	EXPECT_EQ(own.size, self->build_id_size);
	EXPECT_EQ(0, memcmp(own.id, self->build_id, own.size));
	/* This very function lies inside the recorded span. */
	EXPECT_LE(self->base + self->vaddr,
		  (uint64_t)(uintptr_t)find_own_id);
	EXPECT_GT(self->base + self->vaddr + self->size,
		  (uint64_t)(uintptr_t)find_own_id);
	ASSERT_NE(NULL, libc);
	EXPECT_LT(0u, libc->build_id_size);
	/* (A function no sanitizer intercepts: really libc's.) */
	EXPECT_LE(libc->base + libc->vaddr,
		  (uint64_t)(uintptr_t)gnu_get_libc_version);
	EXPECT_GT(libc->base + libc->vaddr + libc->size,
		  (uint64_t)(uintptr_t)gnu_get_libc_version);
	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
}

TEST(no_modules_when_opted_out)
{
	struct actrack_snapshot *s;
	struct writer w;
	char path[256];

	test_path(path, sizeof(path), "nomodules");
	ASSERT_EQ(0, writer_start(&w, path, 8, ACTRACK_INIT_NO_MODULES,
				  nothing, NULL));
	ASSERT_EQ(0, actrack_snapshot_take(path, ACTRACK_SNAP_ARENA_FILE, &s));
	ASSERT_EQ(1u, s->nr_processes);
	EXPECT_EQ(0u, s->processes[0].nr_modules);
	EXPECT_EQ(NULL, s->processes[0].modules);
	actrack_snapshot_free(s);
	writer_stop(&w);
	unlink(path);
}

TEST_HARNESS_MAIN
