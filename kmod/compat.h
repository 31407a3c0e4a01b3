/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place where actrack.ko deals with kernel-version differences.
 * Supported: 6.1 (Debian bookworm) and 6.12 (bookworm-backports).
 */
#ifndef ACTRACK_KMOD_COMPAT_H
#define ACTRACK_KMOD_COMPAT_H

#include <linux/version.h>
#include <linux/mm.h>
#include <linux/timer.h>

/* From 6.3 on vma->vm_flags is read-only and changes go through helpers
 * that also take care of the vma lock.
 */
static inline void actrack_vm_flags_clear(struct vm_area_struct *vma,
					  vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/* del_timer_sync() was renamed timer_delete_sync() in 6.2; the old name
 * is on its way out.
 */
static inline void actrack_timer_delete_sync(struct timer_list *timer)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	timer_delete_sync(timer);
#else
	del_timer_sync(timer);
#endif
}

#endif /* ACTRACK_KMOD_COMPAT_H */
