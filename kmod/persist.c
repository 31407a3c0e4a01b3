// SPDX-License-Identifier: GPL-2.0
/*
 * Arenas in reserved RAM, so that they outlive the machine: a kernel
 * panic, a hard hang and its watchdog reset, a hypervisor's reset.  With
 * persist=LABEL the region that `reserve_mem=SIZE:ALIGN:LABEL` set aside
 * at boot (Linux 6.12 on) holds the arenas instead of ordinary pages; the
 * next boot finds what the last one left there and exposes it, read-only,
 * to host root (ACTRACK_SELECT_PREVIOUS_BOOT).  Without the parameter
 * nothing here runs.
 *
 * The region is cut in two halves, used in turn: the one of this boot and
 * the one of the boot before, so that a new boot never writes over the
 * image it must keep.  Each half starts with one page of header (below)
 * and holds arena_size slots after it.  The header names its boot (boot
 * id), a generation (one more at each load, the newer half wins) and, per
 * slot, whose arena it holds; slots are taken and given back with the
 * arena's memory (arenas.c), never on the push path.
 *
 * The previous boot's half is hostile input, like any arena: its header is
 * checked here only for what the kernel itself needs (where the slots are
 * and how large); the arenas in it are handed to userspace as they are and
 * read there with the library's validating walk.  The kernel never walks
 * them and never follows a reference in them.
 *
 * Nothing is cleared by a warm reset of most machines, nor by QEMU's; a
 * cold power cycle keeps nothing (DRAM loses its contents), nor does a
 * firmware that scrubs memory at boot.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uuid.h>
#include "internal.h"
#include "compat.h"

static char *actrack_persist_label;
module_param_named(persist, actrack_persist_label, charp, 0444);
MODULE_PARM_DESC(persist, "label of a reserve_mem=SIZE:ALIGN:LABEL region (Linux 6.12+) that holds the arenas, kept across a crash for the next boot to read (default: none, arenas in ordinary memory)");

#define ACTRACK_PERSIST_MAGIC	0x3154534942434b41ULL	/* "AKCBIST1" LE */
#define ACTRACK_PERSIST_VERSION	1U
#define ACTRACK_PERSIST_USED	(1U << 0)

struct actrack_persist_slot {
	u32 flags;			/* ACTRACK_PERSIST_USED */
	u32 uid;			/* kuid in init_user_ns */
};

/* At the start of each half; the slots follow at PAGE_SIZE. */
struct actrack_persist_header {
	u64 magic;
	u32 version;
	u32 arena_size;			/* bytes per slot */
	u64 generation;			/* one more at each load */
	u64 half_size;
	u8 boot_id[16];
	u32 nr_slots;
	u32 reserved;
	struct actrack_persist_slot slots[];
};

#define ACTRACK_PERSIST_MAX_SLOTS					\
	((PAGE_SIZE - sizeof(struct actrack_persist_header)) /		\
	 sizeof(struct actrack_persist_slot))

static DEFINE_MUTEX(actrack_persist_mutex);	/* the current slot table */
static phys_addr_t actrack_persist_phys;	/* of the whole region */
static void *actrack_persist_mem;		/* memremap of it, or NULL */
static u64 actrack_persist_half;		/* bytes per half */
static struct actrack_persist_header *actrack_persist_cur;

/* The previous boot's image: a copy of what was checked, never reread. */
static struct actrack_persist_header *actrack_persist_prev;	/* or NULL */
static struct actrack_persist_slot *actrack_persist_prev_slots;	/* copy */
static u32 actrack_persist_prev_nr, actrack_persist_prev_size;

bool actrack_persist_enabled(void)
{
	return actrack_persist_mem;
}

/* Could @h describe a half of this region (a header we may use)? */
static bool actrack_persist_header_ok(const struct actrack_persist_header *h)
{
	u32 size = READ_ONCE(h->arena_size), nr = READ_ONCE(h->nr_slots);

	if (READ_ONCE(h->magic) != ACTRACK_PERSIST_MAGIC ||
	    READ_ONCE(h->version) != ACTRACK_PERSIST_VERSION ||
	    READ_ONCE(h->half_size) != actrack_persist_half)
		return false;
	if (size < ACTRACK_ARENA_MIN_SIZE || size > ACTRACK_ARENA_MAX_SIZE ||
	    !PAGE_ALIGNED(size) || nr > ACTRACK_PERSIST_MAX_SLOTS)
		return false;
	return (u64)nr * size <= actrack_persist_half - PAGE_SIZE;
}

static struct actrack_persist_header *actrack_persist_half_hdr(int i)
{
	return actrack_persist_mem + i * actrack_persist_half;
}

/* Keep a checked copy of half @i, the previous boot's image. */
static void actrack_persist_keep_prev(int i)
{
	struct actrack_persist_header *h = actrack_persist_half_hdr(i);
	u32 nr = READ_ONCE(h->nr_slots);

	actrack_persist_prev_slots = kmemdup(h->slots, nr * sizeof(h->slots[0]),
					     GFP_KERNEL);
	if (!actrack_persist_prev_slots && nr) {
		pr_warn("persist: no memory for the previous boot's table\n");
		return;
	}
	actrack_persist_prev = h;
	actrack_persist_prev_nr = nr;
	actrack_persist_prev_size = READ_ONCE(h->arena_size);
	pr_info("persist: previous boot %pUb (generation %llu): %u slots of %u bytes kept read-only\n",
		h->boot_id, READ_ONCE(h->generation), nr,
		actrack_persist_prev_size);
}

/*
 * Pick the halves: the one of this boot if a reload finds it, else the
 * one that is not the previous boot's; write its fresh header.
 */
static void actrack_persist_choose(const uuid_t *boot_id)
{
	int i, cur = -1, prev = -1;
	u64 gen = 0, prev_gen = 0;
	struct actrack_persist_header *h;

	for (i = 0; i < 2; i++) {
		h = actrack_persist_half_hdr(i);
		if (!actrack_persist_header_ok(h))
			continue;
		gen = max(gen, READ_ONCE(h->generation));
		if (!memcmp(h->boot_id, boot_id, sizeof(h->boot_id)))
			cur = i;
		else if (prev < 0 || READ_ONCE(h->generation) > prev_gen) {
			prev = i;
			prev_gen = READ_ONCE(h->generation);
		}
	}
	if (cur < 0)
		cur = prev == 0 ? 1 : 0;
	if (prev >= 0)
		actrack_persist_keep_prev(prev);

	h = actrack_persist_half_hdr(cur);
	memset(h, 0, PAGE_SIZE);
	h->version = ACTRACK_PERSIST_VERSION;
	h->arena_size = actrack_arena_size;
	h->generation = gen + 1;
	h->half_size = actrack_persist_half;
	memcpy(h->boot_id, boot_id, sizeof(h->boot_id));
	h->nr_slots = min_t(u64, (actrack_persist_half - PAGE_SIZE) /
			    actrack_arena_size, ACTRACK_PERSIST_MAX_SLOTS);
	/* The magic last: a header torn by a crash here is not valid. */
	wmb();
	h->magic = ACTRACK_PERSIST_MAGIC;
	actrack_persist_cur = h;
	pr_info("persist: region %s, %llu bytes, half %d: %u arenas of %u bytes, generation %llu\n",
		actrack_persist_label, 2 * actrack_persist_half, cur,
		h->nr_slots, actrack_arena_size, h->generation);
}

int actrack_persist_init(const uuid_t *boot_id)
{
	phys_addr_t start, size;
	int ret;

	if (!actrack_persist_label || !*actrack_persist_label)
		return 0;
	ret = actrack_reserve_mem_find(actrack_persist_label, &start, &size);
	if (ret == -EOPNOTSUPP) {
		pr_err("persist=%s: this kernel has no reserve_mem= (Linux 6.12+)\n",
		       actrack_persist_label);
		return -EINVAL;
	}
	if (ret) {
		pr_err("persist=%s: no such region: boot with reserve_mem=SIZE:4096:%s\n",
		       actrack_persist_label, actrack_persist_label);
		return -ENOENT;
	}
	if (uuid_is_null(boot_id)) {
		pr_err("persist=%s: the boot id is unknown (no /proc?): a new boot could not be told from a reload\n",
		       actrack_persist_label);
		return -EINVAL;
	}
	actrack_persist_half = rounddown(size / 2, PAGE_SIZE);
	if (!PAGE_ALIGNED(start) ||
	    actrack_persist_half < PAGE_SIZE + actrack_arena_size) {
		pr_err("persist=%s: region %pa+%pa is unaligned or under 2 x (page + arena_size %u)\n",
		       actrack_persist_label, &start, &size,
		       actrack_arena_size);
		return -EINVAL;
	}
	actrack_persist_mem = memremap(start, 2 * actrack_persist_half,
				       MEMREMAP_WB);
	if (!actrack_persist_mem) {
		pr_err("persist=%s: cannot map %pa+%pa\n",
		       actrack_persist_label, &start, &size);
		return -ENOMEM;
	}
	actrack_persist_phys = start;
	actrack_persist_choose(boot_id);
	return 0;
}

void actrack_persist_exit(void)
{
	if (!actrack_persist_mem)
		return;
	kfree(actrack_persist_prev_slots);
	actrack_persist_prev_slots = NULL;
	actrack_persist_prev = NULL;
	memunmap(actrack_persist_mem);
	actrack_persist_mem = NULL;
	actrack_persist_cur = NULL;
}

static void *actrack_persist_slot_mem(const struct actrack_persist_header *h,
				      u32 size, int slot)
{
	return (void *)h + PAGE_SIZE + (size_t)slot * size;
}

static unsigned long actrack_persist_pfn(const void *mem)
{
	return PHYS_PFN(actrack_persist_phys + (mem - actrack_persist_mem));
}

/*
 * A zeroed slot of this boot's half for @uid's arena of @size bytes.
 * Return: its slot number and *@mem, or -ENOSPC (all taken: the caller
 * uses ordinary memory).
 */
int actrack_persist_slot_get(kuid_t uid, u32 size, void **mem)
{
	struct actrack_persist_header *h = actrack_persist_cur;
	int i, ret = -ENOSPC;

	if (!h || size != h->arena_size)
		return -ENOSPC;
	mutex_lock(&actrack_persist_mutex);
	for (i = 0; i < h->nr_slots; i++) {
		if (h->slots[i].flags & ACTRACK_PERSIST_USED)
			continue;
		*mem = actrack_persist_slot_mem(h, size, i);
		memset(*mem, 0, size);
		h->slots[i].uid = from_kuid(&init_user_ns, uid);
		/* The uid before the flag that makes it count. */
		wmb();
		WRITE_ONCE(h->slots[i].flags, ACTRACK_PERSIST_USED);
		ret = i;
		break;
	}
	mutex_unlock(&actrack_persist_mutex);
	return ret;
}

void actrack_persist_slot_put(int slot)
{
	mutex_lock(&actrack_persist_mutex);
	if (!WARN_ON_ONCE(!actrack_persist_cur))
		WRITE_ONCE(actrack_persist_cur->slots[slot].flags, 0);
	mutex_unlock(&actrack_persist_mutex);
}

/* Map slot memory @mem, from page vm_pgoff of it, into @vma. */
int actrack_persist_remap(struct vm_area_struct *vma, void *mem)
{
	return remap_pfn_range(vma, vma->vm_start,
			       actrack_persist_pfn(mem) + vma->vm_pgoff,
			       vma->vm_end - vma->vm_start, vma->vm_page_prot);
}

/*
 * The previous boot's arena of @uid.  Return: 0 and *@mem, *@size;
 * -ENODATA when there is no previous boot's image at all; -ENOENT when
 * it holds no arena of @uid.
 */
int actrack_persist_prev_find(kuid_t uid, void **mem, u32 *size)
{
	u32 i, want = from_kuid(&init_user_ns, uid);

	if (!actrack_persist_prev)
		return -ENODATA;
	for (i = 0; i < actrack_persist_prev_nr; i++) {
		const struct actrack_persist_slot *s =
			&actrack_persist_prev_slots[i];

		if (!(s->flags & ACTRACK_PERSIST_USED) || s->uid != want)
			continue;
		*size = actrack_persist_prev_size;
		*mem = actrack_persist_slot_mem(actrack_persist_prev, *size, i);
		return 0;
	}
	return -ENOENT;
}
