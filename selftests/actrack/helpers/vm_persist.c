// SPDX-License-Identifier: MIT
/*
 * vm_persist's machinery (vm_persist.h): the persist= region on the
 * kernel command line, the module reloaded with it, the previous boot's
 * image selected by ioctl, the note previous_boot leaves hard_hang, and
 * the watchdog.  No harness here: each says what happened, the test
 * asserts it.
 */
#include <sys/utsname.h>
#include "vm_persist.h"

const char *persist_param(void)
{
	char buf[4096];
	ssize_t n;
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	if (strstr(buf, "reserve_mem=") && strstr(buf, ":" LABEL) &&
	    kernel_has_reserve_mem())
		return "persist=" LABEL;
	if (strstr(buf, MEMMAP_ARG " ") || strstr(buf, MEMMAP_ARG "\n"))
		return REGION_ARG;
	return NULL;
}

bool kernel_has_reserve_mem(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 12);
}

int reload(const char *params)
{
	int ret = -EAGAIN;

	for (int i = 0; i < 200 * actrack_test_slowness() &&
	     (ret == -EAGAIN || ret == -EBUSY); i++) {
		ret = syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK) ?
		      -errno : 0;
		if (ret)
			usleep(10 * 1000);
	}
	if (ret && ret != -ENOENT)
		return ret;
	return vm_module_load(params);
}

/* /dev/kmsg from now on (non-blocking), or -1. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Did the kernel log @want since kmsg_open()?  Closes @fd. */
static bool kmsg_said(int fd, const char *want)
{
	char rec[8192];
	bool found = false;
	ssize_t n;

	if (fd < 0)
		return false;
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (strstr(rec, want))
			found = true;
	}
	close(fd);
	return found;
}

int reload_said(const char *params, const char *want, bool *said)
{
	int fd = kmsg_open(), ret = reload(params);

	*said = kmsg_said(fd, want);
	return ret;
}

/* ioctl @req with @arg on a fresh fd of the device: 0 or -errno. */
static int ioctl_fresh(unsigned long req, void *arg)
{
	int fd = open(ACTRACK_DEVICE_PATH, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = ioctl(fd, req, arg) ? -errno : 0;
	close(fd);
	return ret;
}

int select_previous(uint32_t uid)
{
	struct actrack_select sel = {
		.uid = uid, .flags = ACTRACK_SELECT_PREVIOUS_BOOT,
	};

	return ioctl_fresh(ACTRACK_IOC_SELECT, &sel);
}

int previous_uids(struct actrack_previous_uids *q)
{
	return ioctl_fresh(ACTRACK_IOC_PREVIOUS_UIDS, q);
}

int nobody_selects(uint32_t uid)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(ECHILD);
		_exit(-select_previous(uid));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return -WEXITSTATUS(status);
}

void checked_write(uint64_t value)
{
	FILE *f = fopen(CHECKED_FILE, "we");

	if (f) {
		fprintf(f, "%llu\n", (unsigned long long)value);
		fclose(f);
	}
}

uint64_t checked_read(void)
{
	unsigned long long v = 0;
	FILE *f = fopen(CHECKED_FILE, "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

int load_ko(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret == -EEXIST ? 0 : ret;
}

int watchdog_ready(void)
{
	int ret;

	/* Built into the kernel (the debug kernels), or its modules. */
	if (access("/dev/watchdog", W_OK)) {
		ret = load_ko(TEST_MODULES "watchdog.ko", "");
		if (!ret)
			ret = load_ko(TEST_MODULES "i6300esb.ko", "");
		if (ret)
			return ret;
	}
	/* Bound to the device (if qemu has one): devtmpfs shows it. */
	for (int i = 0; i < 600 * actrack_test_slowness(); i++) {
		if (!access("/dev/watchdog", W_OK))
			return 0;
		usleep(50 * 1000);
	}
	return -ENODEV;
}

bool iomem_has(const char *line)
{
	char buf[256];
	bool found = false;
	FILE *f = fopen("/proc/iomem", "re");

	if (!f)
		return false;
	while (!found && fgets(buf, sizeof(buf), f))
		found = strstr(buf, line) != NULL;
	fclose(f);
	return found;
}
