// SPDX-License-Identifier: MIT
/*
 * A process's say over its stacks at death (ACTRACK_IOC_STACKS): who may
 * receive them where Yama restricts ptrace, and whether a clean exit
 * carries them too.  The policy itself is the module's (docs/trust.md).
 */
#include <errno.h>
#include <sys/ioctl.h>
#include "internal.h"

ACTRACK_API int actrack_stack_policy(uint32_t flags, pid_t reader)
{
	struct actrack_proc *p = &__actrack_proc;
	struct actrack_stacks st = { .flags = flags };
	int ret;

	if (reader < 0)
		return -EINVAL;
	st.reader = (uint32_t)reader;
	ret = __actrack_ensure_attached();
	if (ret)
		return ret;
	__actrack_lock();
	if (!p->mapped || p->map.backend != ACTRACK_BACKEND_MODULE)
		ret = -EOPNOTSUPP;
	else if (ioctl(p->map.fd, ACTRACK_IOC_STACKS, &st) < 0)
		ret = -errno;
	__actrack_unlock();
	return ret;
}
