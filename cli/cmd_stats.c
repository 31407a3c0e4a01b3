// SPDX-License-Identifier: MIT
/* actrack stats: how full the arena is, and the module's counters. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "cli.h"
#include "render.h"

static void print_flags(uint32_t flags)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ ACTRACK_ARENA_CORRUPT, "corrupt" },
		{ ACTRACK_ARENA_FULL, "full" },
		{ ACTRACK_ARENA_KERNEL, "kernel" },
	};
	const char *sep = "";

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (flags & names[i].bit) {
			printf("%s%s", sep, names[i].name);
			sep = ",";
			flags &= ~names[i].bit;
		}
	}
	if (flags)
		printf("%s0x%x", sep, flags);
	else if (!*sep)
		fputs("-", stdout);
	fputc('\n', stdout);
}

/* The module's counters; silently absent without the module. */
static void print_kernel_stats(void)
{
	struct actrack_monitor *m;
	struct actrack_kstats st;
	int ret;

	ret = actrack_monitor_open(0, &m);
	if (ret == -ENOENT)
		return;
	if (ret) {
		cli_error("module counters", ret);
		return;
	}
	ret = actrack_monitor_stats(m, &st);
	actrack_monitor_close(m);
	if (ret == -ENOENT)
		return;
	if (ret) {
		cli_error("module counters", ret);
		return;
	}
	printf("module:\n");
	printf("  arenas:           %llu\n", (unsigned long long)st.arenas);
	printf("  attached:         %llu\n", (unsigned long long)st.attached);
	printf("  cleanups:         %llu\n", (unsigned long long)st.cleanups);
	printf("  records freed:    %llu\n",
	       (unsigned long long)st.records_freed);
	printf("  corruption:       %llu\n",
	       (unsigned long long)st.corruption);
	printf("  reports sent:     %llu\n",
	       (unsigned long long)st.reports_sent);
	printf("  reports dropped:  %llu\n",
	       (unsigned long long)st.reports_dropped);
}

/*
 * Does the module keep our arena in its persist= region (ACTRACK_LAYOUT_
 * PERSISTENT)?  Only the module's layout says so: 1, 0, or -errno.
 */
static int module_arena_persistent(void)
{
	struct actrack_layout lay;
	int fd = open(ACTRACK_DEVICE_PATH, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = ioctl(fd, ACTRACK_IOC_LAYOUT, &lay) ? -errno :
	      !!(lay.flags & ACTRACK_LAYOUT_PERSISTENT);
	close(fd);
	return ret;
}

/* Does the arena outlive the machine?  A file's does not. */
static void print_persistent(const struct actrack_snapshot *s)
{
	int ret = 0;

	if (cli.arena || !(s->header.flags & ACTRACK_ARENA_KERNEL)) {
		printf("persist:   no (a file arena)\n");
		return;
	}
	ret = module_arena_persistent();
	if (ret == 1)
		printf("persist:   yes (in the module's persist= region: "
		       "kept across a crash or reset of the machine)\n");
	else if (!ret)
		printf("persist:   no (actrack.ko without persist=)\n");
}

/*
 * The image the previous boot left in the persist= region, when this
 * reader may read it (host root): one line that says it is there, and
 * when its machine was last alive (the module's heartbeat).  Nothing when
 * there is none or it is not ours to see.
 */
static void print_previous_boot(void)
{
	struct actrack_snapshot *p;
	const uint8_t *b;
	char when[64];
	int ret;

	ret = actrack_snapshot_take(NULL, ACTRACK_SNAP_PREVIOUS_BOOT, &p);
	if (ret == -ENOENT && !access(ACTRACK_DEVICE_PATH, F_OK)) {
		printf("previous boot: image kept, with no arena of uid %u\n",
		       (unsigned int)geteuid());
		return;
	}
	if (ret)
		return;
	b = p->header.boot_id;
	printf("previous boot: image of boot %02x%02x%02x%02x-%02x%02x-"
	       "%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x kept, read with "
	       "--previous-boot\n", b[0], b[1], b[2], b[3], b[4], b[5], b[6],
	       b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
	if (render_real_time(p->header.saved_real_ns, false, when,
			     sizeof(when)))
		printf("previous boot: its machine was last alive at %s\n",
		       when);
	actrack_snapshot_free(p);
}

int cmd_stats(int argc, char **argv)
{
	struct actrack_snapshot *s;
	uint32_t threads = 0, size;
	char path[PATH_MAX];
	int ret;

	ret = cli_simple_args(argc, argv, "stats", 0, 0, false);
	if (ret >= 0)
		return ret;
	/* No arena with the module: nothing tracked now, counters still. */
	if (!cli.arena &&
	    actrack_arena_path(NULL, path, sizeof(path)) ==
	    ACTRACK_BACKEND_MODULE &&
	    actrack_snapshot_take(NULL, 0, &s) == -ENOENT) {
		printf("arena:     %s (none: no tracked process is alive)\n",
		       ACTRACK_DEVICE_PATH);
		print_previous_boot();
		print_kernel_stats();
		return ferror(stdout) ? 1 : 0;
	}
	if (cli_snapshot(&s))
		return 1;
	for (uint32_t i = 0; i < s->nr_processes; i++)
		threads += s->processes[i].nr_threads;
	size = s->header.size;
	printf("arena:     %s\n", cli_arena_name());
	printf("size:      %u bytes\n", size);
	printf("used:      %u bytes (%u.%u%%)\n", s->used_bytes,
	       (unsigned)((uint64_t)s->used_bytes * 100 / size),
	       (unsigned)((uint64_t)s->used_bytes * 1000 / size % 10));
	printf("free:      %u bytes\n", s->free_bytes);
	printf("processes: %u\n", s->nr_processes);
	printf("threads:   %u (%u torn)\n", threads, s->nr_torn);
	printf("corrupt:   %s\n", s->corrupt ? "yes" : "no");
	printf("flags:     ");
	print_flags(s->header.flags);
	/* ABI 1.4: what a full arena cost (zeros in an older arena). */
	printf("lost:      %u records (the arena was full)\n",
	       s->header.lost_records);
	printf("reclaimed: %u records of dead processes\n",
	       s->header.reclaimed_records);
	printf("abi:       %u.%u\n", s->header.abi_major, s->header.abi_minor);
	print_persistent(s);
	/* Only the live module arena has module counters to go with it. */
	if (!cli.arena && (s->header.flags & ACTRACK_ARENA_KERNEL)) {
		print_previous_boot();
		print_kernel_stats();
	}
	actrack_snapshot_free(s);
	return ferror(stdout) ? 1 : 0;
}
