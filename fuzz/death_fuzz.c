// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the death report parser (lib/report_parse.c):
 * __actrack_parse_death() and __actrack_parse_stats() fed arbitrary
 * attribute streams.  Whatever a (compromised or buggy) sender puts in a
 * message, the parser must stay inside it, never leak, and either refuse
 * it whole or return a report whose invariants hold for every consumer
 * (counts within their arrays, strings terminated, a wait status that
 * says how the process died and agrees with signal/exit code).
 *
 * Input: byte 0 selects the mode, the rest is data.
 *   mode 0: the data is the attribute stream of an ACTRACK_CMD_DEATH
 *           message (the netlink and genetlink headers are made here);
 *   mode 1: the same with ACTRACK_CMD_GET_DEATHS (a dump entry);
 *   mode 2: the same for __actrack_parse_stats (ACTRACK_CMD_GET_STATS);
 *   mode 3: the data is the whole message, headers included, and is given
 *           to both parsers with its own length (nlmsg_len is the
 *           fuzzer's: larger or smaller than the buffer).
 * Every message sits in a heap buffer of exactly its length, so ASan
 * reports any read past its end.
 *
 * A report the parser accepts is also written as a minidump
 * (cli/minidump.c), which must be a well-formed file: every stream inside
 * it, one thread entry per thread of the report.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "internal.h"
#include "minidump.h"
#include "minidump_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HDRS	(NLMSG_HDRLEN + GENL_HDRLEN)

static void check_values(const struct actrack_value *v, uint32_t nr)
{
	uint32_t i;

	if (nr && !v)
		abort();
	for (i = 0; i < nr; i++) {
		if (memchr(v[i].name, 0, sizeof(v[i].name)) == NULL)
			abort();
		if (v[i].type == 0 || v[i].type > ACTRACK_VALUE_MAX)
			abort();
		if ((v[i].type == ACTRACK_VALUE_RAW ||
		     v[i].type == ACTRACK_VALUE_STRING) &&
		    (!v[i].bytes || v[i].bytes[v[i].size] != 0))
			abort();	/* documented NUL-terminated */
	}
}

/* What every consumer of a parsed report (cli/cmd_monitor.c, the exit
 * callback) relies on. */
static void check_death(const struct actrack_death *d)
{
	const struct actrack_snap_process *p = &d->process;
	uint32_t i;

	if (strnlen(p->cmdline, sizeof(p->cmdline)) > ACTRACK_CMDLINE_MAX)
		abort();
	if (p->nr_threads > ACTRACK_LIB_MAX_THREADS + ACTRACK_LIB_MAX_STACKS ||
	    d->nr_tracked_threads > p->nr_threads ||
	    (p->nr_threads && !p->threads))
		abort();
	if (p->nr_modules > ACTRACK_LIB_MAX_MODULES ||
	    (p->nr_modules && !p->modules))
		abort();
	if (WIFEXITED(d->wait_status)) {
		if (d->signal || d->exit_code != WEXITSTATUS(d->wait_status))
			abort();
	} else if (WIFSIGNALED(d->wait_status)) {
		if (d->signal != WTERMSIG(d->wait_status) || d->exit_code)
			abort();
	} else {
		abort();	/* stopped/continued is no death */
	}
	check_values(p->values, p->nr_values);
	for (i = 0; i < p->nr_threads; i++) {
		const struct actrack_snap_thread *t = &p->threads[i];
		uint32_t k;

		if (memchr(t->name, 0, sizeof(t->name)) == NULL)
			abort();
		if (t->nr_activities > ACTRACK_THREAD_MAX_SLOTS ||
		    (t->nr_activities && !t->activities) ||
		    (t->torn && t->nr_activities))
			abort();
		for (k = 0; k < t->nr_activities; k++)
			check_values(t->activities[k].values,
				     t->activities[k].nr_values);
	}
	for (i = 0; i < p->nr_modules; i++) {
		if (memchr(p->modules[i].path, 0,
			   sizeof(p->modules[i].path)) == NULL)
			abort();
		if (p->modules[i].build_id_size > ACTRACK_BUILD_ID_MAX)
			abort();
	}
}

/* The minidump of an accepted report: a file whose directory and streams
 * lie inside it (the tests' reader, minidump_read.h), with the report's
 * thread count. */
static void check_minidump(const struct actrack_death *d)
{
	struct minidump_host h = { "6.1.0-fuzz", 2, 0, NULL };
	uint32_t rva, size;
	uint8_t *buf;
	size_t len;
	int ret = minidump_build(d, &h, "report", &buf, &len);

	if (ret == -EINVAL && !d->process.nr_threads)
		return;
	if (ret)
		abort();	/* -ENOMEM, -EFBIG: not from a parsed report */
	if (!md_check(buf, len) || !md_stream(buf, len, 3, &rva, &size) ||
	    size < 4 || md_u32(buf + rva) != d->process.nr_threads ||
	    size != 4 + 48 * d->process.nr_threads)
		abort();
	free(buf);
}

static void parse_death(const struct nlmsghdr *nlh, size_t len)
{
	struct actrack_death d;
	int ret = __actrack_parse_death(nlh, len, &d);

	if (ret == 0) {
		check_death(&d);
		check_minidump(&d);
		__actrack_free_death(&d);
	} else if (ret != -EBADMSG && ret != -ENOMEM) {
		abort();
	} else if (d.process.threads || d.process.modules ||
		   d.process.values || d.stacks) {
		abort();	/* a refused report leaves nothing behind */
	}
}

static void parse_stats(const struct nlmsghdr *nlh, size_t len)
{
	struct actrack_kstats st;
	int ret = __actrack_parse_stats(nlh, len, &st);

	if (ret && ret != -EBADMSG)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t cmds[] = {
		ACTRACK_CMD_DEATH, ACTRACK_CMD_GET_DEATHS, ACTRACK_CMD_GET_STATS,
	};
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	size_t len;
	int mode;

	if (size < 1 || size > (1U << 20))
		return 0;
	mode = data[0] % 4;
	data++;
	size--;
	if (mode == 3) {
		/* The fuzzer's own headers: copied, so the buffer is exactly
		 * the message and aligned as a socket buffer would be. */
		nlh = malloc(size ? size : 1);
		if (!nlh)
			abort();
		memcpy(nlh, data, size);
		if (size >= sizeof(*nlh)) {
			parse_death(nlh, size);
			parse_stats(nlh, size);
		}
		free(nlh);
		return 0;
	}
	len = HDRS + size;
	nlh = malloc(len);
	if (!nlh)
		abort();
	memset(nlh, 0, HDRS);
	nlh->nlmsg_len = (uint32_t)len;
	nlh->nlmsg_type = 0x20;		/* any dynamic family id */
	g = (struct genlmsghdr *)((char *)nlh + NLMSG_HDRLEN);
	g->cmd = cmds[mode];
	g->version = ACTRACK_GENL_VERSION;
	memcpy((char *)nlh + HDRS, data, size);
	if (mode == 2)
		parse_stats(nlh, len);
	else
		parse_death(nlh, len);
	free(nlh);
	return 0;
}
