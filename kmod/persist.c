// SPDX-License-Identifier: GPL-2.0
/*
 * Arenas in reserved RAM, so that they outlive the machine: a kernel
 * panic, a hard hang and its watchdog reset, a hypervisor's reset.  The
 * region holds the arenas instead of ordinary pages; the next boot finds
 * what the last one left there and exposes it, read-only, to host root
 * (ACTRACK_SELECT_PREVIOUS_BOOT).  Without the parameter nothing here runs.
 * Two ways to name the region:
 *
 *  - persist=LABEL: what `reserve_mem=SIZE:ALIGN:LABEL` set aside at boot
 *    (Linux 6.12 on), found by its label.  It is System RAM that memblock
 *    kept from the page allocator: nobody else can claim it.
 *  - persist=SIZE@ADDR: a physical range the firmware or
 *    `memmap=SIZE$ADDR` marked reserved (any kernel): not System RAM, so
 *    it is claimed here (request_mem_region), which also closes it to
 *    /dev/mem while the module holds it.  System RAM, a range another
 *    driver holds, or a malformed one is refused.
 *
 * The region is cut in two halves, used in turn: the one of this boot and
 * the one of the boot before, so that a new boot never writes over the
 * image it must keep.  Each half starts with one page of header (below)
 * and holds arena_size slots after it.  The header names its boot (boot
 * id), a generation (one more at each load, the newer half wins) and, per
 * slot, whose arena it holds; slots are taken and given back with the
 * arena's memory (arenas.c), never on the push path.
 *
 * While the module is loaded, a heartbeat writes the time into this boot's
 * header once a second (outside the checksum; a plain store, never on the
 * push path).  When the machine dies the heartbeat stops: the next boot
 * reads there the last moment the machine was alive, to within a second,
 * and writes it into each of the previous boot's arenas as the time the
 * image ends (the arena header's saved_mono_ns and saved_real_ns), so that
 * every reader measures the image's ages from then.  Those two words are
 * all the kernel ever writes into the previous boot's half, and only at
 * load, before anyone can map it; what a process of that boot forged there
 * is overwritten.
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

#include <linux/crc32.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uuid.h>
#include <linux/workqueue.h>
#include "internal.h"
#include "compat.h"

static char *actrack_persist_label;
module_param_named(persist, actrack_persist_label, charp, 0444);
MODULE_PARM_DESC(persist, "region that holds the arenas, kept across a crash for the next boot to read: LABEL of a reserve_mem=SIZE:ALIGN:LABEL region (Linux 6.12+), or SIZE@ADDR (K/M/G suffixes, page-aligned) of a reserved, non-RAM range such as memmap=SIZE$ADDR makes (default: none, arenas in ordinary memory)");

static bool actrack_persist_uids_stable;
module_param_named(persist_uids_stable, actrack_persist_uids_stable, bool, 0444);
MODULE_PARM_DESC(persist_uids_stable, "uids name the same users in every boot of this machine, so each user may read its own arena of the previous boot (default: no, root only)");

#define ACTRACK_PERSIST_MAGIC	0x3154534942434b41ULL	/* "AKCBIST1" LE */
#define ACTRACK_PERSIST_VERSION	3U	/* 2: crc, 3: heartbeat */
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
	u32 crc;			/* of the header and its slots */
	/* The heartbeat, outside the checksum: 0 until its first beat. */
	u64 alive_mono_ns;		/* CLOCK_MONOTONIC (coarse) */
	u64 alive_real_ns;		/* CLOCK_REALTIME at the same moment */
	struct actrack_persist_slot slots[];
};

#define ACTRACK_PERSIST_BEAT	HZ	/* the heartbeat's period */

#define ACTRACK_PERSIST_MAX_SLOTS					\
	((PAGE_SIZE - sizeof(struct actrack_persist_header)) /		\
	 sizeof(struct actrack_persist_slot))

static DEFINE_MUTEX(actrack_persist_mutex);	/* the current slot table */
static phys_addr_t actrack_persist_phys;	/* of the whole region */
static struct resource *actrack_persist_res;	/* SIZE@ADDR: our claim */
static void *actrack_persist_mem;		/* memremap of it, or NULL */
static u64 actrack_persist_half;		/* bytes per half */
static struct actrack_persist_header *actrack_persist_cur;

/* The previous boot's image: a copy of what was checked, never reread. */
static struct actrack_persist_header *actrack_persist_prev;	/* or NULL */
static struct actrack_persist_header *actrack_persist_prev_copy; /* page */
static u32 actrack_persist_prev_nr, actrack_persist_prev_size;

static void actrack_persist_beat(struct work_struct *work);
static DECLARE_DELAYED_WORK(actrack_persist_heartbeat, actrack_persist_beat);

bool actrack_persist_enabled(void)
{
	return actrack_persist_mem;
}

/*
 * May the caller read @uid's arena of the previous boot?  Root may; its
 * own user only if the administrator said that a uid named the same user
 * then (persist_uids_stable=1): nothing else tells that it did.
 */
bool actrack_persist_prev_readable(kuid_t uid)
{
	if (capable(CAP_SYS_ADMIN))
		return true;
	return actrack_persist_uids_stable && uid_eq(uid, current_euid());
}

/*
 * The checksum of header @h and its @nr slots, its crc field taken as 0.
 * Written whenever the table changes (a load, an arena's slot taken or
 * given back: never on the push path), so that a header scribbled on
 * between boots, or torn by a reset while it changed, is not believed.
 */
static u32 actrack_persist_crc(const struct actrack_persist_header *h,
			       u32 nr)
{
	static const u32 zero;
	u32 crc;

	crc = crc32_le(~0U, (const u8 *)h, offsetof(typeof(*h), crc));
	crc = crc32_le(crc, (const u8 *)&zero, sizeof(zero));
	return ~crc32_le(crc, (const u8 *)h->slots, nr * sizeof(h->slots[0]));
}

/*
 * Could @h describe a half of this region (a header we may use)?
 * Return: NULL, or why not.  A caller that keeps what it checked checks
 * a copy: the region may still change under a reader without the claim.
 */
static const char *
actrack_persist_header_bad(const struct actrack_persist_header *h)
{
	u32 size = READ_ONCE(h->arena_size), nr = READ_ONCE(h->nr_slots);

	if (READ_ONCE(h->magic) != ACTRACK_PERSIST_MAGIC)
		return "no header";
	if (READ_ONCE(h->version) != ACTRACK_PERSIST_VERSION)
		return "another header version";
	if (READ_ONCE(h->half_size) != actrack_persist_half)
		return "another region size";
	if (size < ACTRACK_ARENA_MIN_SIZE || size > ACTRACK_ARENA_MAX_SIZE ||
	    !PAGE_ALIGNED(size) || nr > ACTRACK_PERSIST_MAX_SLOTS ||
	    (u64)nr * size > actrack_persist_half - PAGE_SIZE)
		return "impossible arena size or slot count";
	if (actrack_persist_crc(h, nr) != READ_ONCE(h->crc))
		return "header or slot table fails its checksum";
	return NULL;
}

static struct actrack_persist_header *actrack_persist_half_hdr(int i)
{
	return actrack_persist_mem + i * actrack_persist_half;
}

static void *actrack_persist_slot_mem(const struct actrack_persist_header *h,
				      u32 size, int slot)
{
	return (void *)h + PAGE_SIZE + (size_t)slot * size;
}

/*
 * Write the previous boot's last heartbeat (checked copy @h: 0 if it never
 * beat) into each of its arenas as the moment the image ends.  Only these
 * two words of the arena header, at fixed offsets inside a slot of checked
 * size: nothing of the image is read.
 */
static void actrack_persist_stamp_end(const struct actrack_persist_header *h)
{
	u32 i;

	for (i = 0; i < h->nr_slots; i++) {
		struct actrack_arena_header *a;

		if (!(h->slots[i].flags & ACTRACK_PERSIST_USED))
			continue;
		a = actrack_persist_slot_mem(actrack_persist_prev,
					     h->arena_size, i);
		WRITE_ONCE(a->saved_mono_ns, h->alive_mono_ns);
		WRITE_ONCE(a->saved_real_ns, h->alive_real_ns);
	}
}

/* Keep a checked copy of half @i's header, the previous boot's image. */
static void actrack_persist_keep_prev(int i)
{
	struct actrack_persist_header *h;
	const char *why;

	h = kmemdup(actrack_persist_half_hdr(i), PAGE_SIZE, GFP_KERNEL);
	if (!h)
		return;		/* the allocator said so */
	why = actrack_persist_header_bad(h);
	if (why) {
		pr_warn("persist: half %d changed while read (%s): no previous boot's image\n",
			i, why);
		kfree(h);
		return;
	}
	actrack_persist_prev_copy = h;
	actrack_persist_prev = actrack_persist_half_hdr(i);
	actrack_persist_prev_nr = h->nr_slots;
	actrack_persist_prev_size = h->arena_size;
	actrack_persist_stamp_end(h);
	pr_info("persist: previous boot %pUb (generation %llu): %u slots of %u bytes kept read-only, last alive at %llu ns\n",
		h->boot_id, h->generation, h->nr_slots, h->arena_size,
		h->alive_mono_ns);
}

/* Rewrite the checksum of this boot's table; under the mutex. */
static void actrack_persist_seal(struct actrack_persist_header *h)
{
	WRITE_ONCE(h->crc, actrack_persist_crc(h, h->nr_slots));
}

/* The time, into this boot's header; again in a second. */
static void actrack_persist_beat(struct work_struct *work)
{
	struct actrack_persist_header *h = actrack_persist_cur;

	WRITE_ONCE(h->alive_mono_ns, ktime_get_coarse_ns());
	WRITE_ONCE(h->alive_real_ns, ktime_get_coarse_real_ns());
	schedule_delayed_work(&actrack_persist_heartbeat, ACTRACK_PERSIST_BEAT);
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
		const char *why;

		h = actrack_persist_half_hdr(i);
		why = actrack_persist_header_bad(h);
		if (why) {
			/* A region never used before is no news. */
			if (READ_ONCE(h->magic) == ACTRACK_PERSIST_MAGIC)
				pr_warn("persist: half %d: %s: its image is not kept\n",
					i, why);
			continue;
		}
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
	h->magic = ACTRACK_PERSIST_MAGIC;
	/* The checksum last: a header torn by a crash here is not valid. */
	wmb();
	actrack_persist_seal(h);
	actrack_persist_cur = h;
	pr_info("persist: region %s, %llu bytes, half %d: %u arenas of %u bytes, generation %llu\n",
		actrack_persist_label, 2 * actrack_persist_half, cur,
		h->nr_slots, actrack_arena_size, h->generation);
}

/*
 * persist=SIZE@ADDR: parse it.  Return: 1 and the range, 0 when @arg is a
 * label (it has no '@'), or -EINVAL (said in dmesg).
 */
static int actrack_persist_parse(const char *arg, phys_addr_t *start,
				 phys_addr_t *size)
{
	char *at = strchr(arg, '@'), *end;
	unsigned long long s, a;
	phys_addr_t last;

	if (!at)
		return 0;
	s = memparse(arg, &end);
	if (end == arg || end != at)
		goto bad;
	a = memparse(at + 1, &end);
	if (end == at + 1 || *end)
		goto bad;
	if (!s || !PAGE_ALIGNED(s) || !PAGE_ALIGNED(a)) {
		pr_err("persist=%s: the size must be non-zero and both page-aligned (%lu)\n",
		       arg, PAGE_SIZE);
		return -EINVAL;
	}
	if (a != (phys_addr_t)a || s != (phys_addr_t)s ||
	    check_add_overflow((phys_addr_t)a, (phys_addr_t)(s - 1), &last)) {
		pr_err("persist=%s: the range overflows the physical address space\n",
		       arg);
		return -EINVAL;
	}
	*start = a;
	*size = s;
	return 1;
bad:
	pr_err("persist=%s: neither a label (no '@') nor SIZE@ADDR (numbers, K/M/G suffixes)\n",
	       arg);
	return -EINVAL;
}

/*
 * Claim reserved range @start+@size for ourselves: not System RAM (the
 * kernel's), not held by another driver.
 */
static int actrack_persist_claim(phys_addr_t start, phys_addr_t size)
{
	const char *arg = actrack_persist_label;

	if (region_intersects(start, size, IORESOURCE_SYSTEM_RAM,
			      IORES_DESC_NONE) != REGION_DISJOINT) {
		pr_err("persist=%s: the range is (partly) System RAM: reserve it first, e.g. with memmap=%#llx$%#llx on the kernel command line\n",
		       arg, (unsigned long long)size,
		       (unsigned long long)start);
		return -EADDRNOTAVAIL;
	}
	actrack_persist_res = request_mem_region(start, size, "actrack persist");
	if (!actrack_persist_res) {
		pr_err("persist=%s: the range is (partly) held by another driver (see /proc/iomem)\n",
		       arg);
		return -EBUSY;
	}
	return 0;
}

/* The region persist= names: *@start, *@size, or -errno (said). */
static int actrack_persist_find(phys_addr_t *start, phys_addr_t *size)
{
	const char *arg = actrack_persist_label;
	int ret = actrack_persist_parse(arg, start, size);

	if (ret)
		return ret < 0 ? ret : actrack_persist_claim(*start, *size);
	ret = actrack_reserve_mem_find(arg, start, size);
	if (ret == -EOPNOTSUPP) {
		pr_err("persist=%s: this kernel has no reserve_mem= (Linux 6.12+): give a memmap= region as persist=SIZE@ADDR\n",
		       arg);
		return -EINVAL;
	}
	if (ret) {
		pr_err("persist=%s: no such region: boot with reserve_mem=SIZE:4096:%s\n",
		       arg, arg);
		return -ENOENT;
	}
	return 0;
}

static void actrack_persist_unclaim(void)
{
	if (actrack_persist_res)
		release_mem_region(actrack_persist_res->start,
				   resource_size(actrack_persist_res));
	actrack_persist_res = NULL;
}

int actrack_persist_init(const uuid_t *boot_id)
{
	const char *arg = actrack_persist_label;
	phys_addr_t start, size;
	int ret;

	if (!arg || !*arg)
		return 0;
	if (uuid_is_null(boot_id)) {
		pr_err("persist=%s: the boot id is unknown (no /proc?): a new boot could not be told from a reload\n",
		       arg);
		return -EINVAL;
	}
	ret = actrack_persist_find(&start, &size);
	if (ret)
		return ret;
	actrack_persist_half = rounddown(size / 2, PAGE_SIZE);
	if (!PAGE_ALIGNED(start) ||
	    actrack_persist_half < PAGE_SIZE + actrack_arena_size) {
		pr_err("persist=%s: region %pa+%pa is unaligned or under 2 x (page + arena_size %u)\n",
		       arg, &start, &size, actrack_arena_size);
		ret = -EINVAL;
		goto err;
	}
	actrack_persist_mem = memremap(start, 2 * actrack_persist_half,
				       MEMREMAP_WB);
	if (!actrack_persist_mem) {
		pr_err("persist=%s: cannot map %pa+%pa\n", arg, &start, &size);
		ret = -ENOMEM;
		goto err;
	}
	actrack_persist_phys = start;
	actrack_persist_choose(boot_id);
	actrack_persist_beat(NULL);
	return 0;
err:
	actrack_persist_unclaim();
	return ret;
}

void actrack_persist_exit(void)
{
	if (!actrack_persist_mem)
		return;
	cancel_delayed_work_sync(&actrack_persist_heartbeat);
	kfree(actrack_persist_prev_copy);
	actrack_persist_prev_copy = NULL;
	actrack_persist_prev = NULL;
	memunmap(actrack_persist_mem);
	actrack_persist_mem = NULL;
	actrack_persist_cur = NULL;
	actrack_persist_unclaim();
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
		actrack_persist_seal(h);
		ret = i;
		break;
	}
	mutex_unlock(&actrack_persist_mutex);
	return ret;
}

void actrack_persist_slot_put(int slot)
{
	mutex_lock(&actrack_persist_mutex);
	if (!WARN_ON_ONCE(!actrack_persist_cur)) {
		WRITE_ONCE(actrack_persist_cur->slots[slot].flags, 0);
		actrack_persist_seal(actrack_persist_cur);
	}
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
 * The uids of the previous boot's arenas, into @out (room for @room of
 * them) as the caller's user namespace sees them.  Return: how many the
 * image holds, or -ENODATA when there is none.
 */
int actrack_persist_prev_uids(u32 *out, u32 room)
{
	struct user_namespace *ns = current_user_ns();
	u32 i, n = 0;

	if (!actrack_persist_prev)
		return -ENODATA;
	for (i = 0; i < actrack_persist_prev_nr; i++) {
		const struct actrack_persist_slot *s =
			&actrack_persist_prev_copy->slots[i];

		if (!(s->flags & ACTRACK_PERSIST_USED))
			continue;
		if (n < room)
			out[n] = from_kuid_munged(ns, make_kuid(&init_user_ns,
								 s->uid));
		n++;
	}
	return n;
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
			&actrack_persist_prev_copy->slots[i];

		if (!(s->flags & ACTRACK_PERSIST_USED) || s->uid != want)
			continue;
		*size = actrack_persist_prev_size;
		*mem = actrack_persist_slot_mem(actrack_persist_prev, *size, i);
		return 0;
	}
	return -ENOENT;
}
