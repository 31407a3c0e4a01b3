// SPDX-License-Identifier: GPL-2.0
/*
 * Where the process lived: its cgroup (v2, the default hierarchy) as it
 * died, named to each reader as /proc/PID/cgroup's "0::" line names it
 * to that reader.
 *
 * The exit probe of the group's last thread takes a reference to that
 * thread's cgroup (task_dfl_cgroup(): stable until the task is freed,
 * cgroup_exit() does not move it); the report holds it until it is
 * freed, and renders its path per reader with cgroup_path_ns() in the
 * reader's cgroup namespace, the function /proc uses.  A reader whose
 * namespace root is not above the cgroup sees the same "/../x" path
 * /proc would show it, never a name /proc would not.  The reference pins
 * the struct cgroup only (its controllers' state goes at rmdir), for as
 * long as the report stays in its arena's ring.
 */
#include <linux/cgroup.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include "internal.h"

/*
 * @p's group has just died: remember the cgroup of its last thread
 * (current).  Context: the exit probe, atomic.
 */
void actrack_cgroup_capture(struct actrack_kproc *p)
{
	struct cgroup *cgrp;

	rcu_read_lock();
	cgrp = task_dfl_cgroup(current);
	cgroup_get(cgrp);
	rcu_read_unlock();
	/* Only the probe that ends @p writes it, once. */
	swap(p->cgroup, cgrp);
	if (cgrp)
		cgroup_put(cgrp);
}

/* The cleanup work: the cgroup goes from @p to its report @d. */
void actrack_cgroup_take(struct actrack_kproc *p, struct actrack_report *d)
{
	d->cgroup = p->cgroup;
	p->cgroup = NULL;
}

void actrack_cgroup_put(struct cgroup **cgrp)
{
	if (*cgrp)
		cgroup_put(*cgrp);
	*cgrp = NULL;
}

/*
 * @cgrp's path as the cgroup namespace @ns shows it, into @buf.
 * Return: its length, or -ENOENT (not known), -ENAMETOOLONG (longer
 * than @len - 1), -errno.  Context: process.
 */
int actrack_cgroup_path(struct cgroup *cgrp, struct cgroup_namespace *ns,
			char *buf, size_t len)
{
	int n;

	if (!cgrp || !ns)
		return -ENOENT;
	n = cgroup_path_ns(cgrp, buf, len, ns);
	if (n < 0)
		return n;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	return n;
}
