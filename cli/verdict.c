// SPDX-License-Identifier: MIT
/*
 * The verdict on one wait (see verdict.h).
 *
 * What can end an io-wait is read from /proc at the time of the look,
 * which needs nothing recorded beyond the descriptor: /proc/PID/fd/N
 * names a socket, a terminal, a pipe, an eventfd, a signalfd, a timerfd
 * or an epoll set, and /proc/PID/fdinfo/N of an epoll set lists its
 * members ("tfd: N").  The rule, pragmatic and documented in
 * actrack-hangs(1):
 *  - outside input (idle): a socket (any: a socketpair between tracked
 *    processes is not told apart from a network socket), a terminal,
 *    another character device, an inotify or fanotify descriptor, a
 *    pipe or fifo whose other end no live tracked process holds (the
 *    program's stdin from a shell, say), a timerfd (time);
 *  - internal (owner unknown): an eventfd, a signalfd, a pipe whose
 *    other end a live tracked process holds (the waiter's own self-pipe
 *    included), a regular file or block device (storage), a descriptor
 *    that is no longer open;
 *  - an epoll set is idle if one member is outside input (a server's
 *    listening socket), internal if all are, and an empty set is a
 *    sleep.
 * The preload library records poll's first and select's highest
 * descriptor; the others are read where the thread waits: its system
 * call and arguments (/proc/PID/task/TID/syscall) and the pollfd array or
 * fd_sets they point to (/proc/PID/mem, which needs ptrace access).  A
 * poll is idle if one of its descriptors is outside input.  When they
 * cannot be read, the recorded descriptor is judged alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include "cli.h"
#include "verdict.h"
#include "waitgraph.h"

/* Members of an epoll set looked at, and the nesting of sets followed. */
#define MAX_MEMBERS	256
#define MAX_NESTING	3

const char *verdict_name(enum verdict v)
{
	switch (v) {
	case VERDICT_IDLE:
		return "idle";
	case VERDICT_BLOCKED:
		return "blocked";
	case VERDICT_UNKNOWN:
		return "owner-unknown";
	case VERDICT_HANG:
		return "hang";
	case VERDICT_DEADLOCK:
		return "deadlock";
	case VERDICT_DEAD:
		return "dead";
	case VERDICT_STALE:
		return "stale-activity";
	case VERDICT_OWNED:
		return "owned";
	case VERDICT_NONE:
		break;
	}
	return "none";
}

void verdict_env_init(struct verdict_env *e, const struct actrack_snapshot *s,
		      bool live)
{
	memset(e, 0, sizeof(*e));
	e->s = s;
	e->live = live;
}

void verdict_env_free(struct verdict_env *e)
{
	free(e->pids);
	memset(e, 0, sizeof(*e));
}

/* ---- /proc ------------------------------------------------------------ */

static int read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	return 0;
}

/* The fields of /proc/PID/task/TID/stat after the command's ')': the
 * state is field 3, utime 14, stime 15. */
static const char *stat_fields(uint32_t pid, uint32_t tid, char *buf,
			       size_t len)
{
	char path[64];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	if (read_small(path, buf, len))
		return NULL;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p + 2 : NULL;
}

bool verdict_cpu_ticks(uint32_t pid, uint32_t tid, uint64_t *ticks)
{
	unsigned long long ut, st;
	char buf[1024];
	const char *f = stat_fields(pid, tid, buf, sizeof(buf));

	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime stime */
	if (!f || sscanf(f, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu", &ut, &st) != 2)
		return false;
	*ticks = ut + st;
	return true;
}

enum run_state { RS_GONE, RS_WAITING, RS_RUNNING };

/* One look: "running" in /proc/.../syscall (not in a system call), else
 * the state letter R when that file is refused (it needs ptrace
 * permission). */
static enum run_state look_once(uint32_t pid, uint32_t tid)
{
	char path[64], buf[256];
	const char *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	if (!read_small(path, buf, sizeof(buf)))
		return strncmp(buf, "running", 7) ? RS_WAITING : RS_RUNNING;
	f = stat_fields(pid, tid, buf, sizeof(buf));
	if (!f)
		return RS_GONE;
	return *f == 'R' ? RS_RUNNING : RS_WAITING;
}

bool verdict_thread_runs(uint32_t pid, uint32_t tid)
{
	return look_once(pid, tid) == RS_RUNNING;
}

/* A thread woken a moment ago runs on its way back into its wait: only
 * three looks in a row that find it running prove it is not in it. */
static enum run_state thread_state(uint32_t pid, uint32_t tid)
{
	enum run_state st = RS_RUNNING;

	for (int i = 0; i < 3 && st == RS_RUNNING; i++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		if (i)
			nanosleep(&ts, NULL);
		st = look_once(pid, tid);
	}
	return st;
}

/* ---- what can end a wait on a descriptor ------------------------------ */

enum source {
	SRC_OUTSIDE,		/* outside input */
	SRC_TIMER,		/* time */
	SRC_EMPTY,		/* an empty epoll set: nothing but a signal */
	SRC_INTERNAL,		/* another party inside */
};

struct fd_ref {
	uint32_t pid;
	int fd;
};

static void list_pids(struct verdict_env *e)
{
	const struct actrack_snapshot *s = e->s;

	e->pids_listed = true;
	e->pids = calloc(s->nr_processes + 1, sizeof(*e->pids));
	if (!e->pids)
		return;
	for (uint32_t k = 0; k < s->nr_processes; k++) {
		const struct actrack_snap_process *p = &s->processes[k];

		if (e->nr_pids && e->pids[e->nr_pids - 1] == p->pid)
			continue;
		if (cli_process_running(p))
			e->pids[e->nr_pids++] = p->pid;
	}
}

/* The access mode of descriptor @fd of @pid (O_RDONLY...), or -1. */
static int fd_accmode(uint32_t pid, int fd)
{
	char path[64], buf[512];
	const char *f;
	unsigned int flags;

	snprintf(path, sizeof(path), "/proc/%u/fdinfo/%d", pid, fd);
	if (read_small(path, buf, sizeof(buf)))
		return -1;
	f = strstr(buf, "flags:");
	if (!f || sscanf(f + 6, "%o", &flags) != 1)
		return -1;
	return (int)(flags & O_ACCMODE);
}

/* Does a live tracked process hold the other end of pipe @link (the
 * "pipe:[INO]" that @self reads if @mode is O_RDONLY, else writes)? */
static bool other_end_tracked(struct verdict_env *e, const char *link,
			      struct fd_ref self, int mode)
{
	if (!e->pids_listed)
		list_pids(e);
	for (uint32_t i = 0; i < e->nr_pids; i++) {
		char path[64], target[64];
		struct dirent *d;
		DIR *dir;
		bool found = false;

		snprintf(path, sizeof(path), "/proc/%u/fd", e->pids[i]);
		dir = opendir(path);
		if (!dir)
			continue;
		while (!found && (d = readdir(dir))) {
			int fd = atoi(d->d_name), m;
			ssize_t n;

			if (d->d_name[0] < '0' || d->d_name[0] > '9' ||
			    (e->pids[i] == self.pid && fd == self.fd))
				continue;
			snprintf(path, sizeof(path), "/proc/%u/fd/%d",
				 e->pids[i], fd);
			n = readlink(path, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = 0;
			if (strcmp(target, link))
				continue;
			m = fd_accmode(e->pids[i], fd);
			found = m == O_RDWR || m < 0 ||
				(mode == O_RDONLY ? m == O_WRONLY :
						    m == O_RDONLY);
		}
		closedir(dir);
		if (found)
			return true;
	}
	return false;
}

static bool is_terminal(dev_t rdev)
{
	unsigned int maj = major(rdev);

	/* tty, ttyS/console, pty slaves (Unix 98: 136-143) */
	return maj == 4 || maj == 5 || (maj >= 136 && maj <= 143);
}

static enum source classify_fd(struct verdict_env *e, struct fd_ref r,
			       int depth, char *why, size_t len);

/* An epoll set: idle if any member is outside input or time. */
static enum source classify_epoll(struct verdict_env *e, struct fd_ref r,
				  int depth, char *why, size_t len)
{
	char path[64], member[96], first_internal[96] = "";
	char *buf;
	const char *p;
	uint32_t n = 0;
	enum source out = SRC_EMPTY;

	snprintf(path, sizeof(path), "/proc/%u/fdinfo/%d", r.pid, r.fd);
	buf = malloc(64 * 1024);
	if (!buf || read_small(path, buf, 64 * 1024)) {
		free(buf);
		snprintf(why, len, "epoll fd %d, its members unreadable",
			 r.fd);
		return SRC_INTERNAL;
	}
	for (p = buf; (p = strstr(p, "tfd:")) && n < MAX_MEMBERS; p += 4) {
		struct fd_ref m = { r.pid, atoi(p + 4) };
		enum source s;

		n++;
		if (depth >= MAX_NESTING) {
			s = SRC_INTERNAL;
			snprintf(member, sizeof(member), "fd %d", m.fd);
		} else {
			s = classify_fd(e, m, depth + 1, member,
					sizeof(member));
		}
		if (s == SRC_OUTSIDE || s == SRC_TIMER) {
			snprintf(why, len, "epoll fd %d: %s", r.fd, member);
			out = s;
			break;
		}
		out = SRC_INTERNAL;
		if (!first_internal[0])
			snprintf(first_internal, sizeof(first_internal), "%s",
				 member);
	}
	free(buf);
	if (out == SRC_EMPTY)
		snprintf(why, len, "epoll fd %d has no members", r.fd);
	else if (out == SRC_INTERNAL)
		snprintf(why, len, "epoll fd %d: %u member%s, none from "
			 "outside (%s%s)", r.fd, n, n == 1 ? "" : "s",
			 first_internal, n > 1 ? ", ..." : "");
	return out;
}

static enum source classify_fd(struct verdict_env *e, struct fd_ref r,
			       int depth, char *why, size_t len)
{
	char path[64], link[256];
	struct stat st;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", r.pid, r.fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0) {
		snprintf(why, len, "fd %d is not open", r.fd);
		return SRC_INTERNAL;
	}
	link[n] = 0;
	if (!strncmp(link, "socket:", 7)) {
		snprintf(why, len, "a socket (fd %d)", r.fd);
		return SRC_OUTSIDE;
	}
	if (!strcmp(link, "anon_inode:[eventpoll]"))
		return classify_epoll(e, r, depth, why, len);
	if (!strcmp(link, "anon_inode:[timerfd]")) {
		snprintf(why, len, "a timerfd (fd %d)", r.fd);
		return SRC_TIMER;
	}
	if (!strcmp(link, "anon_inode:inotify") ||
	    !strcmp(link, "anon_inode:[fanotify]")) {
		snprintf(why, len, "file events (fd %d)", r.fd);
		return SRC_OUTSIDE;
	}
	if (!strncmp(link, "anon_inode:", 11)) {
		/* [eventfd], [signalfd], ...: someone inside signals it. */
		snprintf(why, len, "%.40s (fd %d)", link + 11, r.fd);
		return SRC_INTERNAL;
	}
	if (!strncmp(link, "pipe:", 5) || (!stat(path, &st) &&
					   S_ISFIFO(st.st_mode))) {
		int mode = fd_accmode(r.pid, r.fd);

		if (other_end_tracked(e, link, r,
				      mode == O_WRONLY ? O_WRONLY : O_RDONLY)) {
			snprintf(why, len, "a pipe between tracked processes "
				 "(fd %d)", r.fd);
			return SRC_INTERNAL;
		}
		snprintf(why, len, "a pipe from outside (fd %d)", r.fd);
		return SRC_OUTSIDE;
	}
	if (stat(path, &st)) {
		snprintf(why, len, "fd %d is not open", r.fd);
		return SRC_INTERNAL;
	}
	if (S_ISCHR(st.st_mode)) {
		snprintf(why, len, "%s (fd %d)", is_terminal(st.st_rdev) ?
			 "a terminal" : "a device", r.fd);
		return SRC_OUTSIDE;
	}
	if (S_ISSOCK(st.st_mode)) {
		snprintf(why, len, "a socket (fd %d)", r.fd);
		return SRC_OUTSIDE;
	}
	snprintf(why, len, "a file or disk (fd %d)", r.fd);
	return SRC_INTERNAL;
}

/* ---- every descriptor of a poll or select ----------------------------- */

#define MAX_WAIT_FDS	256

/* @len bytes at @addr of process @pid.  Return: 0 or -1. */
static int read_mem(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

static uint32_t poll_fds(uint32_t pid, uint64_t addr, uint64_t nfds,
			 int recorded, int *fds)
{
	struct pollfd pf[MAX_WAIT_FDS];
	uint32_t n = nfds < MAX_WAIT_FDS ? (uint32_t)nfds : MAX_WAIT_FDS, k = 0;

	if (!n || read_mem(pid, addr, pf, n * sizeof(pf[0])) ||
	    pf[0].fd != recorded)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (pf[i].fd >= 0)
			fds[k++] = pf[i].fd;
	return k;
}

static uint32_t select_fds(uint32_t pid, const uint64_t *arg, int recorded,
			   int *fds)
{
	bool in[MAX_WAIT_FDS] = { false };
	uint64_t nfds = arg[0];
	uint32_t k = 0;

	if (nfds != (uint64_t)recorded + 1 || nfds > MAX_WAIT_FDS)
		return 0;
	for (int set = 1; set <= 3; set++) {
		fd_set fs;

		if (!arg[set])
			continue;
		if (read_mem(pid, arg[set], &fs, (nfds + 7) / 8))
			return 0;
		for (int fd = 0; fd < (int)nfds; fd++)
			if (FD_ISSET(fd, &fs))
				in[fd] = true;
	}
	for (int fd = 0; fd < (int)nfds; fd++)
		if (in[fd])
			fds[k++] = fd;
	return k && fds[k - 1] == recorded ? k : 0;
}

/*
 * The descriptors of the poll, ppoll, select or pselect that thread @tid
 * of @pid is in, into @fds (at most MAX_WAIT_FDS): only if it is in one
 * whose recorded descriptor is @recorded (poll's first, select's
 * highest).  Return: how many, 0 when that cannot be told.
 */
static uint32_t wait_fds(uint32_t pid, uint32_t tid, int recorded, int *fds)
{
	char path[64], buf[512];
	uint64_t arg[6];
	long nr;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	if (read_small(path, buf, sizeof(buf)) ||
	    sscanf(buf, "%ld %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
		   " %" SCNx64 " %" SCNx64, &nr, &arg[0], &arg[1], &arg[2],
		   &arg[3], &arg[4], &arg[5]) != 7)
		return 0;
	switch (nr) {
#ifdef SYS_poll
	case SYS_poll:
#endif
	case SYS_ppoll:
		return poll_fds(pid, arg[0], arg[1], recorded, fds);
#ifdef SYS_select
	case SYS_select:
#endif
	case SYS_pselect6:
		return select_fds(pid, arg, recorded, fds);
	}
	return 0;
}

/* What can end a wait on descriptors @fds of @r.pid: outside input or
 * time if one can, else internal (@why: the first such). */
static enum source classify_set(struct verdict_env *e, uint32_t pid,
				const int *fds, uint32_t n, char *why,
				size_t len)
{
	char one[96], first[96] = "";

	for (uint32_t i = 0; i < n; i++) {
		enum source s = classify_fd(e, (struct fd_ref){ pid, fds[i] },
					    0, one, sizeof(one));

		if (s == SRC_OUTSIDE || s == SRC_TIMER || s == SRC_EMPTY) {
			snprintf(why, len, "%.96s, of %u descriptors", one,
				 n);
			return s;
		}
		if (!first[0])
			snprintf(first, sizeof(first), "%s", one);
	}
	snprintf(why, len, "%u descriptors, none from outside (%.96s, ...)",
		 n, first);
	return SRC_INTERNAL;
}

/* ---- untracked children ------------------------------------------------ */

#define MAX_CHILDREN	64

/* utime + stime and state of process @pid from /proc/PID/stat. */
static bool process_cpu(uint32_t pid, uint64_t *ticks, char *state)
{
	unsigned long long ut, st;
	char path[32], buf[1024];
	const char *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (read_small(path, buf, sizeof(buf)))
		return false;
	f = strrchr(buf, ')');
	if (!f || sscanf(f + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu", state, &ut, &st) != 3)
		return false;
	*ticks = ut + st;
	return true;
}

/* The children of every task of @pid (/proc/PID/task/TID/children). */
static uint32_t children_of(uint32_t pid, uint32_t *out, uint32_t max)
{
	char path[64], buf[4096];
	struct dirent *d;
	uint32_t n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (n < max && (d = readdir(dir))) {
		char *p, *end;

		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%.16s/children",
			 pid, d->d_name);
		if (read_small(path, buf, sizeof(buf)))
			continue;
		for (p = buf; n < max; p = end) {
			unsigned long c = strtoul(p, &end, 10);

			if (end == p || !c)
				break;
			out[n++] = (uint32_t)c;
		}
	}
	closedir(dir);
	return n;
}

bool verdict_untracked_runs(uint32_t waiter, uint64_t pid, char *why,
			    size_t len)
{
	uint32_t pids[MAX_CHILDREN], n;
	uint64_t first[MAX_CHILDREN];

	if (pid > UINT32_MAX)
		return false;
	if (pid) {
		pids[0] = (uint32_t)pid;
		n = 1;
	} else {
		n = children_of(waiter, pids, MAX_CHILDREN);
	}
	for (int look = 0; look < 3; look++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		if (look)
			nanosleep(&ts, NULL);
		for (uint32_t i = 0; i < n; i++) {
			uint64_t t;
			char st;

			if (!process_cpu(pids[i], &t, &st)) {
				first[i] = UINT64_MAX;
				continue;
			}
			if (!look)
				first[i] = t;
			if (st == 'R' || (look && first[i] != UINT64_MAX &&
					  t != first[i])) {
				snprintf(why, len, "%s %u (not tracked) is "
					 "using CPU", pid ? "process" :
					 "its child", pids[i]);
				return true;
			}
		}
	}
	return false;
}

/* What can end thread @t's io-wait on @fd: every descriptor of its poll
 * or select, else @fd alone. */
static enum source classify_io(struct verdict_env *e,
			       const struct actrack_snap_process *p,
			       const struct actrack_snap_thread *t, int fd,
			       char *why, size_t len)
{
	int fds[MAX_WAIT_FDS];
	uint32_t n = wait_fds(p->pid, t->tid, fd, fds);

	if (n > 1)
		return classify_set(e, p->pid, fds, n, why, len);
	return classify_fd(e, (struct fd_ref){ p->pid, fd }, 0, why, len);
}

/* ---- the verdict ------------------------------------------------------ */

bool verdict_is_wait(uint8_t type)
{
	return type == VERDICT_ACT_SLEEP || wg_is_wait(type);
}

/* Dead or stale, for what our /proc shows (@live), or VERDICT_NONE; @t
 * NULL: the process alone. */
static enum verdict stale(bool live, const struct actrack_snap_process *p,
			  const struct actrack_snap_thread *t, char *why,
			  size_t len)
{
	enum run_state st;

	if (!live)
		return VERDICT_NONE;
	if (!cli_process_running(p)) {
		snprintf(why, len, "stale: process %u no longer runs", p->pid);
		return VERDICT_DEAD;
	}
	if (!t)
		return VERDICT_NONE;
	st = thread_state(p->pid, t->tid);
	if (st == RS_GONE) {
		snprintf(why, len, "stale: thread %u no longer exists",
			 t->tid);
		return VERDICT_STALE;
	}
	if (st == RS_RUNNING) {
		snprintf(why, len, "stale: the thread is running, not in this "
			 "wait");
		return VERDICT_STALE;
	}
	return VERDICT_NONE;
}

enum verdict verdict_stale(struct verdict_env *e,
			   const struct actrack_snap_process *p,
			   const struct actrack_snap_thread *t,
			   char *why, size_t len)
{
	bool live = e->live && !cli_process_foreign(p);

	why[0] = 0;
	if (t && (t->torn || !t->nr_activities || !t->activities ||
		  t->depth > t->nr_activities ||
		  !verdict_is_wait(t->activities[t->nr_activities - 1].a.type)))
		return VERDICT_NONE;
	return stale(live, p, t, why, len);
}

enum verdict verdict_of_wait(struct verdict_env *e,
			     const struct actrack_snap_process *p,
			     const struct actrack_snap_thread *t,
			     const struct actrack_activity *a,
			     char *why, size_t len)
{
	bool live = e->live && !cli_process_foreign(p);
	char dur[32], src[160];
	enum verdict v;

	why[0] = 0;
	v = stale(live, p, t, why, len);
	if (v != VERDICT_NONE)
		return v;
	if (a->type == VERDICT_ACT_SLEEP) {
		snprintf(why, len, "a sleep");
		return VERDICT_IDLE;
	}
	if (a->timeout_ns) {
		snprintf(why, len, "a timer: the wait times out after %s",
			 cli_duration(dur, sizeof(dur), a->timeout_ns));
		return VERDICT_IDLE;
	}
	switch (a->type) {
	case ACTRACK_ACT_LOCK_ACQUIRE:
	case ACTRACK_ACT_THREAD_JOIN:
	case ACTRACK_ACT_PROCESS_WAIT:
		return VERDICT_OWNED;
	case ACTRACK_ACT_EVENT_WAIT:
		if (!live)
			break;
		snprintf(why, len, "an event (semaphore, condition variable):"
			 " no owner is recorded");
		return VERDICT_UNKNOWN;
	case ACTRACK_ACT_IO_WAIT:
		if (!live || a->object > INT32_MAX)
			break;
		switch (classify_io(e, p, t, (int)a->object, src,
				    sizeof(src))) {
		case SRC_OUTSIDE:
			snprintf(why, len, "outside input: %s can end it",
				 src);
			return VERDICT_IDLE;
		case SRC_TIMER:
			snprintf(why, len, "a timer: %s", src);
			return VERDICT_IDLE;
		case SRC_EMPTY:
			snprintf(why, len, "a sleep: %s", src);
			return VERDICT_IDLE;
		case SRC_INTERNAL:
			snprintf(why, len, "only internal sources can end it: "
				 "%s", src);
			return VERDICT_UNKNOWN;
		}
		break;
	default:
		return VERDICT_NONE;
	}
	/* Our /proc cannot show another pid namespace's process: not a
	 * certain hang.  An image or another boot: nothing can be checked,
	 * and a long wait is reported as one, as before verdicts. */
	if (e->live) {
		snprintf(why, len, "in another pid namespace: its /proc "
			 "cannot be read");
		return VERDICT_UNKNOWN;
	}
	snprintf(why, len, "not a live arena: nothing can be checked");
	return VERDICT_HANG;
}
