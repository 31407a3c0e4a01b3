// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/actrack: ioctls and mmap.
 *
 * An fd refers to one arena: by default the one of the euid that opened
 * it (created on first need), or, after ACTRACK_IOC_SELECT, another uid's,
 * read-only.  An fd opened without FMODE_WRITE is read-only as well.
 * SELECT with ACTRACK_SELECT_PREVIOUS_BOOT points it at a uid's arena of
 * the previous boot instead (persist.c): host root only, read-only.
 *
 * mmap offsets: ACTRACK_MMAP_ARENA (0) + n pages maps the arena from page n
 * (MAP_SHARED only, within the arena); ACTRACK_MMAP_CLOCK maps the clock
 * page, exactly one page, never writable.  Read-only mappings also lose
 * VM_MAYWRITE, so mprotect() cannot make them writable later; no mapping
 * is ever executable (VM_EXEC refused, VM_MAYEXEC cleared).  Mappings
 * are inherited across fork (the child must be able to read, and the
 * library re-attaches it as itself).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/user_namespace.h>
#include <linux/vmalloc.h>
#include "internal.h"
#include "compat.h"
#include "test_fault.h"

struct actrack_file {
	struct mutex lock;		/* the fields below */
	const struct cred *cred;	/* the opener's (file->f_cred) */
	kuid_t uid;			/* whose arena */
	struct actrack_karena *arena;	/* reference, or NULL until needed */
	bool read_only;
	bool mapped;			/* the arena was mmapped: no SELECT */
	/* SELECT of the previous boot's arena (persist.c), instead of
	 * @arena: read-only, until module unload.
	 */
	void *prev_mem;
	u32 prev_size;
};

static int actrack_open(struct inode *inode, struct file *file)
{
	struct actrack_file *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	/* The opener's identity, like any file: an fd passed to another
	 * process keeps referring to the opener's arena.
	 */
	f->cred = file->f_cred;
	f->uid = file->f_cred->euid;
	f->read_only = !(file->f_mode & FMODE_WRITE);
	file->private_data = f;
	return 0;
}

static int actrack_release(struct inode *inode, struct file *file)
{
	struct actrack_file *f = file->private_data;

	if (f->arena)
		actrack_karena_put(f->arena);
	kfree(f);
	actrack_test_fault_freed(f);
	return 0;
}

/*
 * Lock held.  Return: the fd's arena (not a new reference) or ERR_PTR:
 * only a writable fd creates one; a reader of a uid that has none gets
 * -ENOENT (a reader must not cost anyone an arena).
 */
static struct actrack_karena *actrack_file_arena_locked(struct actrack_file *f)
{
	struct actrack_karena *ka;

	if (!f->arena) {
		if (f->read_only) {
			ka = actrack_karena_lookup(f->uid);
			if (!ka)
				return ERR_PTR(-ENOENT);
		} else {
			ka = actrack_karena_get_or_create(f->cred);
			if (IS_ERR(ka))
				return ka;
		}
		f->arena = ka;
	}
	return f->arena;
}

/*
 * Return: a new reference to the fd's arena (a writable fd's is created
 * if needed; see actrack_file_arena_locked()).
 */
static struct actrack_karena *actrack_file_arena(struct actrack_file *f,
						 bool *read_only)
{
	struct actrack_karena *ka;

	mutex_lock(&f->lock);
	ka = actrack_file_arena_locked(f);
	if (!IS_ERR(ka))
		actrack_karena_get(ka);
	if (read_only)
		*read_only = f->read_only;
	mutex_unlock(&f->lock);
	return ka;
}

static long actrack_ioc_version(void __user *argp)
{
	struct actrack_version v = {
		.major = ACTRACK_ABI_MAJOR,
		.minor = ACTRACK_ABI_MINOR,
	};

	return copy_to_user(argp, &v, sizeof(v)) ? -EFAULT : 0;
}

/* Fill @l's arena fields if the fd refers to the previous boot's image. */
static bool actrack_layout_previous(struct actrack_file *f,
				    struct actrack_layout *l)
{
	bool prev;

	mutex_lock(&f->lock);
	prev = f->prev_mem;
	if (prev) {
		l->arena_size = f->prev_size;
		l->flags = ACTRACK_LAYOUT_READONLY |
			   ACTRACK_LAYOUT_PREVIOUS_BOOT;
		l->uid = from_kuid_munged(current_user_ns(), f->uid);
	}
	mutex_unlock(&f->lock);
	return prev;
}

static long actrack_ioc_layout(struct actrack_file *f, void __user *argp)
{
	struct actrack_layout l;
	struct actrack_karena *ka;
	bool ro;

	memset(&l, 0, sizeof(l));
	if (!actrack_layout_previous(f, &l)) {
		ka = actrack_file_arena(f, &ro);
		if (IS_ERR(ka))
			return PTR_ERR(ka);
		l.arena_size = ka->size;
		l.flags = ro ? ACTRACK_LAYOUT_READONLY : 0;
		if (actrack_karena_persistent(ka))
			l.flags |= ACTRACK_LAYOUT_PERSISTENT;
		l.uid = from_kuid_munged(current_user_ns(), ka->uid);
		actrack_karena_put(ka);
	}
	l.arena_offset = ACTRACK_MMAP_ARENA;
	l.clock_offset = ACTRACK_MMAP_CLOCK;
	l.clock_size = PAGE_SIZE;
	l.clock_word = ACTRACK_CLOCK_WORD_NONE;
	return copy_to_user(argp, &l, sizeof(l)) ? -EFAULT : 0;
}

static long actrack_ioc_attach(struct actrack_file *f, void __user *argp)
{
	struct actrack_attach at;
	struct actrack_karena *ka;
	int ret;

	if (copy_from_user(&at, argp, sizeof(at)))
		return -EFAULT;
	if (at.flags || at.reserved0 || at.reserved1)
		return -EINVAL;
	/* Read-only is checked first: such an fd never creates an arena here. */
	mutex_lock(&f->lock);
	if (f->read_only) {
		ka = ERR_PTR(-EPERM);
	} else {
		ka = actrack_file_arena_locked(f);
		if (!IS_ERR(ka))
			actrack_karena_get(ka);
	}
	mutex_unlock(&f->lock);
	if (IS_ERR(ka))
		return PTR_ERR(ka);
	ret = actrack_proc_attach(ka, &at);
	actrack_karena_put(ka);
	if (ret)
		return ret;
	return copy_to_user(argp, &at, sizeof(at)) ? -EFAULT : 0;
}

/*
 * The fd's own writable arena, referenced, for a request about the
 * attached caller: it must exist (such requests never create one).
 */
static struct actrack_karena *actrack_file_own_arena(struct actrack_file *f)
{
	struct actrack_karena *ka;

	mutex_lock(&f->lock);
	if (f->read_only)
		ka = ERR_PTR(-EPERM);
	else if (!f->arena)
		ka = ERR_PTR(-ENOENT);
	else
		ka = f->arena;
	if (!IS_ERR(ka))
		actrack_karena_get(ka);
	mutex_unlock(&f->lock);
	return ka;
}

static long actrack_ioc_thread(struct actrack_file *f, void __user *argp)
{
	struct actrack_thread_reg reg;
	struct actrack_karena *ka;
	long ret;

	if (copy_from_user(&reg, argp, sizeof(reg)))
		return -EFAULT;
	if (reg.flags || reg.reserved)
		return -EINVAL;
	ka = actrack_file_own_arena(f);
	if (IS_ERR(ka))
		return PTR_ERR(ka);
	ret = actrack_proc_register_thread(ka, reg.tracker);
	actrack_karena_put(ka);
	return ret;
}

static long actrack_ioc_stacks(struct actrack_file *f, void __user *argp)
{
	struct actrack_stacks st;
	struct actrack_karena *ka;
	long ret;

	if (copy_from_user(&st, argp, sizeof(st)))
		return -EFAULT;
	ka = actrack_file_own_arena(f);
	if (IS_ERR(ka))
		return PTR_ERR(ka);
	ret = actrack_capture_policy(ka, &st);
	actrack_karena_put(ka);
	return ret;
}

static bool actrack_privileged(void)
{
	struct user_namespace *ns = current_user_ns();

	return ns_capable(ns, CAP_SYS_PTRACE) || ns_capable(ns, CAP_SYS_ADMIN);
}

/*
 * The previous boot's arena of @uid: host root only, whoever the uid is
 * (nothing says that a uid named the same user in the boot before), or
 * with persist_uids_stable=1 also that user; checked before whether there
 * is one, so that nobody else learns it.
 */
static long actrack_ioc_select_previous(struct actrack_file *f, kuid_t uid)
{
	void *mem;
	u32 size;
	long ret;

	if (!actrack_persist_prev_readable(uid))
		return -EPERM;
	ret = actrack_persist_prev_find(uid, &mem, &size);
	if (ret)
		return ret;
	mutex_lock(&f->lock);
	if (f->mapped) {
		ret = -EBUSY;
	} else {
		if (f->arena)
			actrack_karena_put(f->arena);
		f->arena = NULL;
		f->prev_mem = mem;
		f->prev_size = size;
		f->uid = uid;
		f->read_only = true;
	}
	mutex_unlock(&f->lock);
	return ret;
}

static long actrack_ioc_select(struct actrack_file *f, void __user *argp)
{
	struct actrack_select sel;
	struct actrack_karena *ka;
	kuid_t uid;
	long ret = 0;

	if (copy_from_user(&sel, argp, sizeof(sel)))
		return -EFAULT;
	if ((sel.flags & ~ACTRACK_SELECT_PREVIOUS_BOOT) || sel.reserved)
		return -EINVAL;
	uid = make_kuid(current_user_ns(), sel.uid);
	if (!uid_valid(uid))
		return -EINVAL;
	if (sel.flags & ACTRACK_SELECT_PREVIOUS_BOOT)
		return actrack_ioc_select_previous(f, uid);
	/*
	 * Another uid's arena, like ptrace: privilege in our user namespace
	 * over the uids mapped into it.  Our own needs none (read-only).
	 */
	if (!uid_eq(uid, current_euid()) && !actrack_privileged())
		return -EPERM;

	mutex_lock(&f->lock);
	if (f->mapped) {
		ret = -EBUSY;
		goto out;
	}
	ka = actrack_karena_lookup(uid);
	if (!ka) {
		ret = -ENOENT;
		goto out;
	}
	if (f->arena)
		actrack_karena_put(f->arena);
	f->arena = ka;
	f->prev_mem = NULL;
	f->uid = uid;
	f->read_only = true;
out:
	mutex_unlock(&f->lock);
	return ret;
}

/*
 * The uids of the previous boot's image: host root only.  At most a page
 * of slot entries exists (ACTRACK_PERSIST_MAX_SLOTS), so one bounded
 * kernel buffer holds them all.
 */
static long actrack_ioc_previous_uids(void __user *argp)
{
	struct actrack_previous_uids q;
	u32 *uids, room;
	long ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&q, argp, sizeof(q)))
		return -EFAULT;
	if (q.flags || q.reserved)
		return -EINVAL;
	room = min_t(u32, q.nr, PAGE_SIZE / sizeof(u32));
	uids = kcalloc(max_t(u32, room, 1), sizeof(u32), GFP_KERNEL);
	if (!uids)
		return -ENOMEM;
	ret = actrack_persist_prev_uids(uids, room);
	if (ret < 0)
		goto out;
	if (copy_to_user(u64_to_user_ptr(q.uids), uids,
			 min_t(u32, room, ret) * sizeof(u32))) {
		ret = -EFAULT;
		goto out;
	}
	q.nr = ret;
	ret = copy_to_user(argp, &q, sizeof(q)) ? -EFAULT : 0;
out:
	kfree(uids);
	return ret;
}

static long actrack_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct actrack_file *f = file->private_data;
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case ACTRACK_IOC_VERSION:
		return actrack_ioc_version(argp);
	case ACTRACK_IOC_LAYOUT:
		return actrack_ioc_layout(f, argp);
	case ACTRACK_IOC_ATTACH:
		return actrack_ioc_attach(f, argp);
	case ACTRACK_IOC_SELECT:
		return actrack_ioc_select(f, argp);
	case ACTRACK_IOC_THREAD:
		return actrack_ioc_thread(f, argp);
	case ACTRACK_IOC_STACKS:
		return actrack_ioc_stacks(f, argp);
	case ACTRACK_IOC_PREVIOUS_UIDS:
		return actrack_ioc_previous_uids(argp);
	default:
		return -ENOTTY;
	}
}

/* Each vma holds a reference: the arena outlives fds and the module's
 * list as long as it is mapped (fork, split and mremap call open).
 */
static void actrack_vm_open(struct vm_area_struct *vma)
{
	struct actrack_karena *ka = vma->vm_private_data;

	actrack_karena_get(ka);
	/* The vma it is copied from holds the memory: cannot fail. */
	WARN_ON_ONCE(actrack_karena_mem_get(ka, false));
}

static void actrack_vm_close(struct vm_area_struct *vma)
{
	struct actrack_karena *ka = vma->vm_private_data;

	actrack_karena_mem_put(ka);
	actrack_karena_put(ka);
}

static const struct vm_operations_struct actrack_karena_vm_ops = {
	.open = actrack_vm_open,
	.close = actrack_vm_close,
};

static int actrack_mmap_clock(struct vm_area_struct *vma)
{
	if (vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	actrack_vm_flags_clear(vma, VM_MAYWRITE);
	return actrack_clock_mmap(vma);
}

/*
 * f->lock held: the previous boot's image, read-only.  It stays until
 * module unload, which the mapping's file prevents: no vm_ops needed.
 */
static int actrack_mmap_previous(struct actrack_file *f,
				 struct vm_area_struct *vma)
{
	unsigned long pages = vma_pages(vma), img = f->prev_size >> PAGE_SHIFT;
	int ret;

	if (vma->vm_pgoff >= img || pages > img - vma->vm_pgoff)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	actrack_vm_flags_clear(vma, VM_MAYWRITE);
	ret = actrack_persist_remap(vma, f->prev_mem);
	if (!ret)
		f->mapped = true;
	return ret;
}

static int actrack_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct actrack_file *f = file->private_data;
	unsigned long pages = vma_pages(vma);
	unsigned long arena_pages;
	struct actrack_karena *ka;
	int ret;

	/* VM_MAYSHARE, not VM_SHARED: the VFS drops VM_SHARED from a shared
	 * mapping of an fd opened read-only, which must still work.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	/*
	 * Data, never code: a page every process of the uid can write must
	 * not become executable, now or by a later mprotect().
	 */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	actrack_vm_flags_clear(vma, VM_MAYEXEC);
	if (vma->vm_pgoff == ACTRACK_MMAP_CLOCK >> PAGE_SHIFT)
		return actrack_mmap_clock(vma);
	if (vma->vm_pgoff >= ACTRACK_MMAP_CLOCK >> PAGE_SHIFT)
		return -EINVAL;

	/* Under mmap_lock: f->lock nests inside it (ioctls never take
	 * mmap_lock while holding f->lock).
	 */
	mutex_lock(&f->lock);
	if (f->prev_mem) {
		ret = actrack_mmap_previous(f, vma);
		goto out;
	}
	ka = actrack_file_arena_locked(f);
	if (IS_ERR(ka)) {
		ret = PTR_ERR(ka);
		goto out;
	}
	arena_pages = ka->size >> PAGE_SHIFT;
	if (vma->vm_pgoff >= arena_pages || pages > arena_pages - vma->vm_pgoff) {
		ret = -EINVAL;
		goto out;
	}
	if (f->read_only) {
		if (vma->vm_flags & VM_WRITE) {
			ret = -EPERM;
			goto out;
		}
		actrack_vm_flags_clear(vma, VM_MAYWRITE);
	}
	/*
	 * An idle arena gave its memory back: whoever maps it gets a fresh,
	 * empty one for as long as the mapping lives.  The arena itself is
	 * there (a reader never makes one), so this stays within max_arenas.
	 */
	ret = actrack_karena_mem_get(ka, true);
	if (ret)
		goto out;
	ret = actrack_karena_remap(ka, vma);
	if (ret) {
		actrack_karena_mem_put(ka);
		goto out;
	}
	actrack_karena_get(ka);
	vma->vm_private_data = ka;
	vma->vm_ops = &actrack_karena_vm_ops;
	f->mapped = true;
out:
	mutex_unlock(&f->lock);
	return ret;
}

static const struct file_operations actrack_fops = {
	.owner = THIS_MODULE,
	.open = actrack_open,
	.release = actrack_release,
	.unlocked_ioctl = actrack_ioctl,
	/* Every argument is a pointer to a struct laid out alike on 32 and
	 * 64 bit.
	 */
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = actrack_mmap,
};

static struct miscdevice actrack_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = ACTRACK_DEVICE_NAME,
	.fops = &actrack_fops,
	/* Everyone may open: what an fd can reach is decided per uid. */
	.mode = 0666,
};

int actrack_device_init(void)
{
	int ret;

	ret = misc_register(&actrack_misc);
	if (ret)
		pr_err("cannot register /dev/%s: %d\n", ACTRACK_DEVICE_NAME, ret);
	return ret;
}

void actrack_device_exit(void)
{
	misc_deregister(&actrack_misc);
}
