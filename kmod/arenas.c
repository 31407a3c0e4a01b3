// SPDX-License-Identifier: GPL-2.0
/*
 * One arena per kuid.  A uid is one trust domain (as with ptrace): all its
 * processes share, and may scribble over, the same arena.  kuids are global
 * (init_user_ns) values, so the same number in two containers with
 * different user namespaces names two arenas.
 *
 * An arena is created on first need by a writer (never by a read-only
 * open).  Its memory lives while someone uses it: an attached process
 * (until its cleanup is done) or a mapping; then it is given back, and
 * the next writer gets a fresh one.  What outlives the memory is the
 * small bookkeeping with the death ring, so that GET_DEATHS still
 * replays a uid's last deaths after its last process died; that is kept
 * until module unload, or until the table needs the slot (below).  Memory
 * is charged to the memory cgroup of the process that needed it.
 *
 * Arenas and subscriptions are paid for by a budget (struct
 * actrack_budget): a host uid, which also pays for every user namespace
 * it created (a rootless container's subordinate uids count as their
 * owner's), or a user namespace that host root created (LXD, Docker with
 * userns-remap, systemd-nspawn -U, PrivateUsers=), with everything below
 * it: root's containers are not root.  The arena of kuid 0 is always host
 * root's.  A budget holds at most max_arenas_per_user arenas; all budgets
 * but host root's share max_arenas, so that nobody below host root can
 * lock it out.  To make room, an arena goes only while idle (no memory,
 * nobody holding it), the oldest first, and only one of the asking budget
 * itself, one that never recorded a death, or one whose budget's user
 * namespace is gone: nobody evicts another live budget's history.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/timekeeping.h>
#include <linux/user_namespace.h>
#include <linux/jiffies.h>
#include <linux/fs.h>
#include <linux/err.h>
#include <linux/uuid.h>
#include <linux/pid.h>
#include "internal.h"
#include "compat.h"

static LIST_HEAD(actrack_arenas);		/* in creation order */
static DEFINE_MUTEX(actrack_arenas_mutex);
static unsigned int actrack_nr_arenas;
static unsigned long actrack_karena_ids;		/* last id handed out */
static uuid_t actrack_boot_id;			/* zero if unknown */

void actrack_report_free(struct actrack_report *d)
{
	put_pid(d->tgid);
	actrack_killer_put(&d->killer);
	actrack_cgroup_put(&d->cgroup);
	actrack_oom_put(&d->oom);
	actrack_capture_stacks_free(d->stacks);
	kvfree(d);
}

/* Fill @b with who pays for what @cred makes; actrack_budget_put() it. */
void actrack_budget_get(const struct cred *cred, struct actrack_budget *b)
{
	struct user_namespace *ns = cred->user_ns;

	b->uid = cred->euid;
	b->ns = NULL;
	/* kuid 0 is host root wherever it runs. */
	if (ns == &init_user_ns || uid_eq(cred->euid, GLOBAL_ROOT_UID))
		return;
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	if (!uid_eq(ns->owner, GLOBAL_ROOT_UID)) {
		b->uid = ns->owner;
		return;
	}
	/* @cred holds its namespace, which holds its ancestors. */
	b->uid = INVALID_UID;
	b->ns = get_user_ns(ns);
}

void actrack_budget_put(struct actrack_budget *b)
{
	if (b->ns)
		put_user_ns(b->ns);
	b->ns = NULL;
}

bool actrack_budget_eq(const struct actrack_budget *a,
		       const struct actrack_budget *b)
{
	return a->ns == b->ns && uid_eq(a->uid, b->uid);
}

static bool actrack_budget_is_root(const struct actrack_budget *b)
{
	return !b->ns && uid_eq(b->uid, GLOBAL_ROOT_UID);
}

/*
 * Zeroed pages charged to the caller's memory cgroup (see compat.h:
 * not before 5.11), mapped into one
 * virtually contiguous range that remap_vmalloc_range() accepts
 * (VM_USERMAP).  vmalloc_user() cannot be charged, so it is done by hand.
 */
static void *actrack_mem_alloc(struct actrack_karena *ka, u32 size)
{
	unsigned int i, n = size >> PAGE_SHIFT;
	struct page **pages;
	void *mem;

	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(ACTRACK_GFP_USER_PAGES | __GFP_ZERO |
				      __GFP_NOWARN);
		if (!pages[i])
			goto err;
	}
	mem = vmap(pages, n, VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (!mem)
		goto err;
	ka->pages = pages;
	return mem;
err:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}

static void actrack_mem_free(struct actrack_karena *ka)
{
	unsigned int i, n = ka->size >> PAGE_SHIFT;

	if (!ka->mem)
		return;
	if (ka->slot >= 0) {
		actrack_persist_slot_put(ka->slot);
		ka->slot = -1;
		ka->mem = NULL;
		return;
	}
	vunmap(ka->mem);
	for (i = 0; i < n; i++)
		__free_page(ka->pages[i]);
	kvfree(ka->pages);
	ka->mem = NULL;
	ka->pages = NULL;
}

static void actrack_karena_release(struct kref *kref)
{
	struct actrack_karena *ka = container_of(kref, struct actrack_karena,
						 kref);
	u32 i;

	for (i = 0; i < actrack_deaths_kept; i++)
		if (ka->ring[i])
			actrack_report_free(ka->ring[i]);
	kfree(ka->ring);
	actrack_capture_pool_free(ka);
	actrack_mem_free(ka);
	actrack_budget_put(&ka->budget);
	kfree(ka);
}

void actrack_karena_put(struct actrack_karena *ka)
{
	kref_put(&ka->kref, actrack_karena_release);
}

/* mem_lock held: allocate and format the memory of an idle arena. */
static int actrack_mem_setup(struct actrack_karena *ka)
{
	struct actrack_arena_header hdr;
	struct actrack_arena a;
	u64 real, boot;
	int ret;

	ka->slot = actrack_persist_slot_get(ka->uid, ka->size, &ka->mem);
	if (ka->slot < 0) {
		if (actrack_persist_enabled())
			pr_warn_ratelimited("persist: region full: uid %u's arena is in ordinary memory\n",
					    from_kuid(&init_user_ns, ka->uid));
		ka->mem = actrack_mem_alloc(ka, ka->size);
	}
	if (!ka->mem)
		return -ENOMEM;
	memset(&hdr, 0, sizeof(hdr));
	hdr.flags = ACTRACK_ARENA_KERNEL;
	hdr.uid = from_kuid(&init_user_ns, ka->uid);
	hdr.user_hz = USER_HZ;
	hdr.create_mono_ns = ktime_get_ns();
	real = ktime_get_real_ns();
	boot = ktime_get_boottime_ns();
	hdr.create_real_ns = real;
	/* start_ticks count from boot: this turns them into wall time. */
	hdr.boot_time_ns = real - boot;
	memcpy(hdr.boot_id, &actrack_boot_id, sizeof(hdr.boot_id));

	actrack_karena_view(ka, &a);
	ret = actrack_arena_format(&a, &hdr);
	if (ret) {
		pr_err("arena format failed: %d\n", ret);
		actrack_mem_free(ka);
	}
	return ret;
}

/*
 * The arena memory has users: attached processes and mappings.  The first
 * user of an idle arena makes fresh memory if @create, else gets -ENOENT;
 * the last one gives it back.
 * A queued cleanup holds its process, so memory outlives pending work.
 * Context: process.
 */
int actrack_karena_mem_get(struct actrack_karena *ka, bool create)
{
	int ret = 0;

	mutex_lock(&ka->mem_lock);
	if (!ka->mem)
		ret = create ? actrack_mem_setup(ka) : -ENOENT;
	if (!ret)
		ka->mem_users++;
	mutex_unlock(&ka->mem_lock);
	return ret;
}

void actrack_karena_mem_put(struct actrack_karena *ka)
{
	mutex_lock(&ka->mem_lock);
	if (!WARN_ON_ONCE(!ka->mem_users) && !--ka->mem_users)
		actrack_mem_free(ka);
	mutex_unlock(&ka->mem_lock);
}

/* Only the bookkeeping: memory comes with its first user. */
/* Takes over the reference of @budget. */
static struct actrack_karena *actrack_karena_create(kuid_t uid,
						  struct actrack_budget *budget)
{
	struct actrack_karena *ka;

	ka = kzalloc(sizeof(*ka), GFP_KERNEL_ACCOUNT);
	if (!ka)
		return ERR_PTR(-ENOMEM);
	ka->ring = kcalloc(actrack_deaths_kept, sizeof(*ka->ring),
			   GFP_KERNEL_ACCOUNT);
	if (!ka->ring) {
		kfree(ka);
		return ERR_PTR(-ENOMEM);
	}
	ka->size = actrack_arena_size;
	ka->slot = -1;
	ka->uid = uid;
	ka->id = ++actrack_karena_ids;
	ka->budget = *budget;
	budget->ns = NULL;
	kref_init(&ka->kref);
	mutex_init(&ka->ring_lock);
	mutex_init(&ka->mem_lock);
	INIT_LIST_HEAD(&ka->work_list);
	INIT_WORK(&ka->work, actrack_karena_work);
	return ka;
}

/* Lock held: the table is the only one that holds it, so nobody can
 * start using it; its memory is gone.
 */
static bool actrack_karena_idle_locked(struct actrack_karena *ka)
{
	return kref_read(&ka->kref) == 1 && !READ_ONCE(ka->mem);
}

/*
 * Lock held: is @b a user namespace that nothing holds but our arenas
 * (no process, no child namespace, no subscription, no open nsfs file)?
 * Then it can never make or use an arena again.
 */
static bool actrack_budget_gone_locked(const struct actrack_budget *b)
{
	struct actrack_karena *ka;
	unsigned int refs = 0;

	if (!b->ns)
		return false;
	list_for_each_entry(ka, &actrack_arenas, node)
		refs += ka->budget.ns == b->ns;
	return actrack_user_ns_refs(b->ns) <= refs;
}

/*
 * Lock held: may @ka go to make room for @b?  With @own_only, only if it
 * is @b's; else also if it holds no history (its death ring is empty: an
 * idle arena has no writer) or its budget is gone, but never host root's,
 * which max_arenas does not count.
 */
static bool actrack_karena_evictable_locked(struct actrack_karena *ka,
					   const struct actrack_budget *b,
					   bool own_only)
{
	if (!actrack_karena_idle_locked(ka))
		return false;
	if (actrack_budget_eq(&ka->budget, b))
		return true;
	if (own_only || actrack_budget_is_root(&ka->budget))
		return false;
	return !READ_ONCE(ka->ring_count) ||
	       actrack_budget_gone_locked(&ka->budget);
}

/* Lock held: drop the oldest arena that may go.  Return: true if one did. */
static bool actrack_karena_evict_locked(const struct actrack_budget *b,
				       bool own_only)
{
	struct actrack_karena *ka;

	list_for_each_entry(ka, &actrack_arenas, node) {
		if (!actrack_karena_evictable_locked(ka, b, own_only))
			continue;
		list_del(&ka->node);
		actrack_nr_arenas--;
		actrack_karena_put(ka);
		return true;
	}
	return false;
}

static struct actrack_karena *actrack_karena_find_locked(kuid_t uid)
{
	struct actrack_karena *ka;

	list_for_each_entry(ka, &actrack_arenas, node)
		if (uid_eq(ka->uid, uid))
			return ka;
	return NULL;
}

/*
 * Lock held: make room for one more arena of @b, within its
 * max_arenas_per_user and, unless it is host root's, within max_arenas.
 * Return: 0 or -ENOSPC.
 */
static int actrack_karena_room_locked(const struct actrack_budget *b)
{
	unsigned int same = 0, root = 0;
	struct actrack_karena *ka;

	list_for_each_entry(ka, &actrack_arenas, node) {
		same += actrack_budget_eq(&ka->budget, b);
		root += actrack_budget_is_root(&ka->budget);
	}
	if (same >= actrack_max_arenas_per_user)
		return actrack_karena_evict_locked(b, true) ? 0 : -ENOSPC;
	if (actrack_budget_is_root(b) ||
	    actrack_nr_arenas - root < actrack_max_arenas)
		return 0;
	return actrack_karena_evict_locked(b, false) ? 0 : -ENOSPC;
}

/*
 * Return: a new reference to @cred's euid's arena, ERR_PTR(-ENOSPC) when
 * its budget or the table is full and nothing may go, or ERR_PTR(-ENOMEM).
 */
struct actrack_karena *actrack_karena_get_or_create(const struct cred *cred)
{
	kuid_t uid = cred->euid;
	struct actrack_budget b;
	struct actrack_karena *ka;
	int ret;

	actrack_budget_get(cred, &b);
	mutex_lock(&actrack_arenas_mutex);
	ka = actrack_karena_find_locked(uid);
	if (ka) {
		actrack_karena_get(ka);
		goto out;
	}
	ret = actrack_karena_room_locked(&b);
	if (ret) {
		ka = ERR_PTR(ret);
		goto out;
	}
	ka = actrack_karena_create(uid, &b);
	if (IS_ERR(ka))
		goto out;
	list_add_tail(&ka->node, &actrack_arenas);	/* the list's ref */
	actrack_nr_arenas++;
	actrack_karena_get(ka);
out:
	mutex_unlock(&actrack_arenas_mutex);
	actrack_budget_put(&b);
	return ka;
}

/* Return: a new reference to @uid's arena or NULL; never creates. */
struct actrack_karena *actrack_karena_lookup(kuid_t uid)
{
	struct actrack_karena *ka;

	mutex_lock(&actrack_arenas_mutex);
	ka = actrack_karena_find_locked(uid);
	if (ka)
		actrack_karena_get(ka);
	mutex_unlock(&actrack_arenas_mutex);
	return ka;
}

/*
 * The list is in creation order and ids only grow, so an id is a stable
 * cursor for a netlink dump that is resumed later, even across evictions.
 * Return: a new reference to the first arena whose id is at least @id, or
 * NULL.
 */
struct actrack_karena *actrack_karena_next(unsigned long id)
{
	struct actrack_karena *ka;

	mutex_lock(&actrack_arenas_mutex);
	list_for_each_entry(ka, &actrack_arenas, node) {
		if (ka->id >= id) {
			actrack_karena_get(ka);
			mutex_unlock(&actrack_arenas_mutex);
			return ka;
		}
	}
	mutex_unlock(&actrack_arenas_mutex);
	return NULL;
}

/*
 * Map @ka's memory, from page vm_pgoff of it, into @vma.  The caller is
 * one of its memory users (actrack_karena_mem_get()).
 */
int actrack_karena_remap(struct actrack_karena *ka, struct vm_area_struct *vma)
{
	if (ka->slot >= 0)
		return actrack_persist_remap(vma, ka->mem);
	return remap_vmalloc_range(vma, ka->mem, vma->vm_pgoff);
}

/* Is @ka's memory in the persist region now? */
bool actrack_karena_persistent(struct actrack_karena *ka)
{
	bool ret;

	mutex_lock(&ka->mem_lock);
	ret = ka->mem && ka->slot >= 0;
	mutex_unlock(&ka->mem_lock);
	return ret;
}

unsigned int actrack_arenas_count(void)
{
	unsigned int n;

	mutex_lock(&actrack_arenas_mutex);
	n = actrack_nr_arenas;
	mutex_unlock(&actrack_arenas_mutex);
	return n;
}

/*
 * Bytes used and free (free blocks plus never allocated).  Free bytes
 * take a walk of the whole arena: computed at most once a second, so
 * that GET_STATS at any rate costs no more than that.
 */
void actrack_karena_usage(struct actrack_karena *ka, u64 *used, u64 *free)
{
	struct actrack_arena a;

	mutex_lock(&ka->mem_lock);
	if (!ka->mem) {
		/* Idle: its memory was given back. */
		*used = 0;
		*free = ka->size;
		goto out;
	}
	actrack_karena_view(ka, &a);
	*used = actrack_arena_used(&a);
	if (!ka->free_at || time_after(jiffies, ka->free_at + HZ)) {
		ka->free_bytes = actrack_arena_free_bytes(&a);
		ka->free_at = jiffies ? jiffies : 1;
	}
	*free = ka->free_bytes;
out:
	mutex_unlock(&ka->mem_lock);
}

/* Add @ka's counters to @c. */
void actrack_karena_add_counters(struct actrack_karena *ka,
				 struct actrack_counter_values *c)
{
	c->cleanups += atomic64_read(&ka->stats.cleanups);
	c->records_freed += atomic64_read(&ka->stats.records_freed);
	c->corruption += atomic64_read(&ka->stats.corruption);
	c->reports_sent += atomic64_read(&ka->stats.reports_sent);
	c->reports_dropped += atomic64_read(&ka->stats.reports_dropped);
}

/* @c: the counters of every arena, summed. */
void actrack_karena_sum_counters(struct actrack_counter_values *c)
{
	struct actrack_karena *ka;

	memset(c, 0, sizeof(*c));
	mutex_lock(&actrack_arenas_mutex);
	list_for_each_entry(ka, &actrack_arenas, node)
		actrack_karena_add_counters(ka, c);
	mutex_unlock(&actrack_arenas_mutex);
}

/*
 * Call @fn on each death @ka keeps, oldest first, under the ring's lock:
 * a report is @fn's to read during its call only (the next death stored
 * may evict it).  Return: the first non-zero @fn returned, or 0.
 * Context: process.
 */
int actrack_karena_walk_deaths(struct actrack_karena *ka,
			       int (*fn)(const struct actrack_report *d,
					 void *arg),
			       void *arg)
{
	u32 kept = actrack_deaths_kept;
	u32 i, oldest;
	int ret = 0;

	mutex_lock(&ka->ring_lock);
	oldest = (ka->ring_head + kept - ka->ring_count) % kept;
	for (i = 0; i < ka->ring_count && !ret; i++)
		ret = fn(ka->ring[(oldest + i) % kept], arg);
	mutex_unlock(&ka->ring_lock);
	return ret;
}

/*
 * Keep @d (ownership passes to the ring) for GET_DEATHS.  The ring is
 * bounded twice: deaths_kept entries and ACTRACK_RING_MAX_BYTES, oldest
 * evicted first, so a uid that dies a lot cannot pin unbounded memory.
 */
void actrack_karena_store_death(struct actrack_karena *ka,
			       struct actrack_report *d)
{
	u32 kept = actrack_deaths_kept;

	mutex_lock(&ka->ring_lock);
	while (ka->ring_count &&
	       (ka->ring_count == kept ||
		ka->ring_bytes + d->bytes > ACTRACK_RING_MAX_BYTES)) {
		u32 old = (ka->ring_head + kept - ka->ring_count) % kept;

		ka->ring_bytes -= ka->ring[old]->bytes;
		actrack_report_free(ka->ring[old]);
		ka->ring[old] = NULL;
		ka->ring_count--;
	}
	ka->ring[ka->ring_head] = d;
	ka->ring_head = (ka->ring_head + 1) % kept;
	ka->ring_count++;
	ka->ring_bytes += d->bytes;
	mutex_unlock(&ka->ring_lock);
}

/*
 * The boot id lives privately in the random driver; its only interface is
 * the sysctl file.  Read it once, at load (insmod runs in the host's own
 * namespaces, so no user can substitute the file), in the text byte order
 * that userspace also uses.  Without /proc it stays zero: analyzers then
 * fall back on boot_time_ns.
 */
static void actrack_read_boot_id(void)
{
	char text[UUID_STRING_LEN + 1];
	struct file *filp;
	loff_t pos = 0;
	ssize_t n;

	filp = filp_open("/proc/sys/kernel/random/boot_id", O_RDONLY, 0);
	if (IS_ERR(filp))
		return;
	n = kernel_read(filp, text, UUID_STRING_LEN, &pos);
	filp_close(filp, NULL);
	if (n != UUID_STRING_LEN)
		return;
	text[UUID_STRING_LEN] = '\0';
	if (uuid_parse(text, &actrack_boot_id))
		uuid_copy(&actrack_boot_id, &uuid_null);
}

int actrack_arenas_init(void)
{
	actrack_read_boot_id();
	return actrack_persist_init(&actrack_boot_id);
}

/* Drop the list's references; memory goes with the last user. */
void actrack_arenas_exit(void)
{
	struct actrack_karena *ka, *tmp;

	mutex_lock(&actrack_arenas_mutex);
	list_for_each_entry_safe(ka, tmp, &actrack_arenas, node) {
		list_del(&ka->node);
		actrack_nr_arenas--;
		actrack_karena_put(ka);
	}
	mutex_unlock(&actrack_arenas_mutex);
	actrack_persist_exit();
}
