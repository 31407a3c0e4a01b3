/* SPDX-License-Identifier: MIT */
/*
 * Part of vm_persist.c (vm_persist.h), included by it alone: the ioctls
 * on the previous boot's image, who may list its uids and select its
 * arenas.
 */
#ifndef ACTRACK_VM_PERSIST_UIDS_H
#define ACTRACK_VM_PERSIST_UIDS_H

#include "vm_persist.h"

/*
 * The uids of the image, as the module lists them to root: uid 0 only
 * (every arena of the boot before was root's), counted without room,
 * written into room to spare and nothing beyond; hostile arguments and
 * nobody refused.
 */
static void check_image_uids(struct __test_metadata *_metadata)
{
	uint32_t uids[4] = { 7, 7, 7, 7 };
	struct actrack_previous_uids q = { 0 };
	pid_t pid;
	int status;

	ASSERT_EQ(0, previous_uids(&q));
	EXPECT_EQ(1, q.nr);
	q = (struct actrack_previous_uids){ .nr = 4, .uids = (uintptr_t)uids };
	ASSERT_EQ(0, previous_uids(&q));
	EXPECT_EQ(1, q.nr);
	EXPECT_EQ(0, uids[0]);
	EXPECT_EQ(7, uids[1]);

	q = (struct actrack_previous_uids){ .flags = 1 };
	EXPECT_EQ(-EINVAL, previous_uids(&q));
	q = (struct actrack_previous_uids){ .reserved = 1 };
	EXPECT_EQ(-EINVAL, previous_uids(&q));
	q = (struct actrack_previous_uids){ .nr = 1, .uids = 8 };
	EXPECT_EQ(-EFAULT, previous_uids(&q));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		q = (struct actrack_previous_uids){ 0 };
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(ECHILD);
		_exit(-previous_uids(&q));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(EPERM, WEXITSTATUS(status));
}

/*
 * Who may SELECT an arena of the image: not nobody, whoever's it is;
 * once the administrator says uids are stable (persist_uids_stable=1),
 * each user their own, still no other's.
 */
static void check_nobody_selects(struct __test_metadata *_metadata)
{
	char params[128];

	/* The ioctl itself, as nobody: EPERM for any uid, its own too,
	 * before telling anything. */
	EXPECT_EQ(-EPERM, nobody_selects(0));
	EXPECT_EQ(-EPERM, nobody_selects(NOBODY));

	/* An administrator who says uids are stable lets each user read
	 * their own (nobody has none there: ENOENT), still no other's. */
	snprintf(params, sizeof(params), "%s persist_uids_stable=1",
		 persist_param());
	ASSERT_EQ(0, reload(params));
	EXPECT_EQ(-EPERM, nobody_selects(0));
	EXPECT_EQ(-ENOENT, nobody_selects(NOBODY));
	ASSERT_EQ(0, reload(persist_param()));
}

#endif /* ACTRACK_VM_PERSIST_UIDS_H */
