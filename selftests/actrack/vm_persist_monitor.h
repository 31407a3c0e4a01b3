/* SPDX-License-Identifier: MIT */
/*
 * Part of vm_persist.c (vm_persist.h), included by it alone: the entry
 * `actrack monitor --journal` writes at boot about the previous boot's
 * image (cli/previous_boot.c), and its checks.
 */
#ifndef ACTRACK_VM_PERSIST_MONITOR_H
#define ACTRACK_VM_PERSIST_MONITOR_H

#include "vm_persist.h"
#include "journal_native.h"

#define BOOT_MESSAGE_ID	"394b5103d5bc4b64b69977612ca71fb5"
#define MARK_DIR	"/run/actrack"

struct boot_monitor {
	pid_t pid;
	int err;		/* its stderr */
};

/* `actrack monitor --journal`, with its NOTIFY_SOCKET: 0 once ready
 * (its boot entry, if any, is sent before), or -errno. */
static int boot_monitor_start(struct boot_monitor *m)
{
	char notify[108];
	int e[2], nfd, ret;

	nfd = vm_notify_open(notify, sizeof(notify));
	if (nfd < 0)
		return nfd;
	if (pipe2(e, O_CLOEXEC)) {
		close(nfd);
		return -errno;
	}
	m->pid = fork();
	if (m->pid < 0)
		return -errno;
	if (!m->pid) {
		char *argv[] = { "actrack", "monitor", "--journal",
				 "--timeout", "600", NULL };

		dup2(e[1], 2);
		if (setenv("NOTIFY_SOCKET", notify, 1))
			_exit(126);
		execv(cli_path(), argv);
		_exit(127);
	}
	close(e[1]);
	m->err = e[0];
	ret = vm_notify_wait_ready(nfd, 120000 * actrack_test_slowness());
	close(nfd);
	unlink(notify);
	return ret;
}

/* Stopped; its stderr, whole (free it). */
static char *boot_monitor_stop(struct boot_monitor *m)
{
	char *err;

	kill(m->pid, SIGTERM);
	waitpid(m->pid, NULL, 0);
	err = slurp_fd(m->err);
	return err;
}

/* The entries queued on @sock with our MESSAGE_ID: how many, the last in
 * @e.  Sent before the monitor was ready, so all there already. */
static int boot_entries(int sock, struct entry *e)
{
	static struct entry tmp;
	char id[64];
	int nr = 0;
	ssize_t n;

	while ((n = recv(sock, tmp.buf, sizeof(tmp.buf), MSG_DONTWAIT)) > 0) {
		tmp.len = (size_t)n;
		if (field(&tmp, "MESSAGE_ID", id, sizeof(id)) &&
		    !strcmp(id, BOOT_MESSAGE_ID)) {
			memcpy(e->buf, tmp.buf, tmp.len);
			e->len = tmp.len;
			nr++;
		}
	}
	return nr;
}

/* The fields of the entry about the image of @s (uid 0's arena, the only
 * one boot 1 filled) and its victim @p. */
static void check_boot_entry(struct __test_metadata *_metadata,
			     const struct entry *e,
			     const struct actrack_snapshot *s,
			     const struct actrack_snap_process *p,
			     const char *boot)
{
	static char v[256 * 1024];
	const struct actrack_snap_thread *t = &p->threads[0];
	char want[512], n[16];

	snprintf(n, sizeof(n), "%u", s->nr_processes);
	ASSERT_NE(NULL, field(e, "PRIORITY", v, sizeof(v)));
	EXPECT_STREQ("3", v);
	ASSERT_NE(NULL, field(e, "SYSLOG_IDENTIFIER", v, sizeof(v)));
	EXPECT_STREQ("actrack", v);
	ASSERT_NE(NULL, field(e, "ACTRACK_PREVIOUS_BOOT_ID", v, sizeof(v)));
	EXPECT_STREQ(boot, v);
	ASSERT_NE(NULL, field(e, "ACTRACK_PROCESSES", v, sizeof(v)));
	EXPECT_STREQ(n, v);
	ASSERT_NE(NULL, field(e, "ACTRACK_ARENAS", v, sizeof(v)));
	EXPECT_STREQ("1", v);
	ASSERT_NE(NULL, field(e, "ACTRACK_UNREADABLE_ARENAS", v, sizeof(v)));
	EXPECT_STREQ("0", v);
	ASSERT_NE(NULL, field(e, "ACTRACK_CORRUPT_ARENAS", v, sizeof(v)));
	EXPECT_STREQ("0", v);
	ASSERT_NE(NULL, field(e, "ACTRACK_TORN_THREADS", v, sizeof(v)));
	EXPECT_STREQ("0", v);

	ASSERT_NE(NULL, field(e, "MESSAGE", v, sizeof(v)));
	snprintf(want, sizeof(want), "previous boot %s ended while %u "
		 "process%s %s running: ", boot, s->nr_processes,
		 s->nr_processes == 1 ? "" : "es",
		 s->nr_processes == 1 ? "was" : "were");
	EXPECT_EQ(0, strncmp(v, want, strlen(want))) TH_LOG("%s", v);
	/* The victim: main in its lock wait, then its threads, each with
	 * the verdict hangs --previous-boot gives it. */
	snprintf(want, sizeof(want), "%u %.*s (%u '%.*s' %s lock 0x%llx, "
		 "hang: nothing can be checked; ",
		 p->pid, (int)sizeof(t->name), t->name, t->tid,
		 (int)sizeof(t->name), t->name,
		 actrack_activity_name(ACTRACK_ACT_LOCK_ACQUIRE),
		 (unsigned long long)t->activities[1].a.object);
	EXPECT_NE(NULL, strstr(v, want)) TH_LOG("no '%s' in '%s'", want, v);
	EXPECT_STREQ("vm_persist", t->name);
	for (uint32_t k = 1; k < p->nr_threads; k++) {
		const struct actrack_snap_thread *o = &p->threads[k];
		bool io = o->activities[0].a.type == ACTRACK_ACT_IO_WAIT;
		char *text, *end;

		snprintf(want, sizeof(want), "%u '%.*s' %s ", o->tid,
			 (int)sizeof(o->name), o->name,
			 actrack_activity_name(o->activities[0].a.type));
		text = strstr(v, want);
		ASSERT_NE(NULL, text) TH_LOG("no '%s' in '%s'", want, v);
		end = text + strcspn(text, ";)");
		snprintf(want, sizeof(want), ", %s: ",
			 io ? "hang" : "deadlock");
		text = strstr(text, want);
		EXPECT_TRUE(text && text < end)
			TH_LOG("thread %u: no '%s' in '%s'", o->tid, want, v);
	}

	ASSERT_NE(NULL, field(e, "ACTRACK_REPORT", v, sizeof(v)));
	snprintf(want, sizeof(want), "{\"schema\":\"actrack-previous-boot/1\","
		 "\"boot_id\":\"%s\",\"processes\":%u,\"unreadable_arenas\":0,"
		 "\"corrupt_arenas\":0,\"torn_threads\":0,", boot,
		 s->nr_processes);
	EXPECT_EQ(0, strncmp(v, want, strlen(want))) TH_LOG("%s", v);
	EXPECT_EQ(NULL, strchr(v, '\n'));
}

#endif /* ACTRACK_VM_PERSIST_MONITOR_H */
