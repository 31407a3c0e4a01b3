// SPDX-License-Identifier: MIT
/*
 * A real server from Debian under `actrack run`: /usr/sbin/nginx (master
 * and two workers, not rebuilt, not changed) serves a small file on
 * loopback; one worker is SIGKILLed while it holds a client's request
 * half-read, and actrack.ko's death report must name that worker and say
 * what it was doing: an io-wait on its epoll descriptor (nginx's workers
 * never block anywhere else: every socket is non-blocking, and a worker
 * with a request in progress sleeps in epoll_wait() until more of it
 * arrives), at nginx's own code, with a backtrace unwound from the stack
 * the module copied as it died through the C library's epoll_wait and
 * the preload's wrapper into nginx's event loop, down to the master's
 * fork of the worker (nginx is stripped but unwinds by its .eh_frame;
 * the functions it exports to modules are named from its dynamic symbol
 * table, its static ones are nginx+offset).  The master survives, starts
 * a new worker, and the new worker is tracked too.  (The report's command
 * line is the master's title, "nginx: master process ...": the worker's
 * record is made at its first tracked call, before nginx retitles it; see
 * man actrack-run.  The pid and the thread name are the worker's.)
 *
 * In the VM only (scripts/vmtest packs /usr/sbin/nginx with its
 * libraries): death reports come from the module.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "vm_util.h"	/* VM_UNDER_SANITIZER, vm_in_io_wait */
#include "snapshot_helpers.h"
#include "progs_util.h"

#define NGINX		"/usr/sbin/nginx"
#define BODY		"hello from nginx under actrack\n"
#define MAX_WORKERS	8
/* Every wait below is a bounded retry (a hang guard), never an assertion
 * on how long something took: TCG on a loaded machine is slow. */
#define TRIES		600
#define TRY_US		(50 * 1000)

static const char *skip_reason(void)
{
#ifdef VM_UNDER_SANITIZER
	return "sanitizer build: its runtime cannot be preloaded into nginx";
#endif
	if (sizeof(void *) != 8)
		return "this build's preload is 32-bit, Debian's nginx is not";
	if (!getenv("ACTRACK_IN_VM") || access(ACTRACK_DEVICE_PATH, F_OK))
		return "death reports come from actrack.ko: runs in the VM "
		       "(scripts/vmtest)";
	if (access(NGINX, X_OK))
		return NGINX " absent (Debian's nginx: scripts/setup; "
		       "scripts/vmtest packs it when the host has it)";
	return NULL;
}

/* vm-init leaves the loopback interface down. */
static int loopback_up(void)
{
	struct ifreq ifr;
	int s, ret = 0;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		ret = -errno;
	else if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr))
			ret = -errno;
	}
	close(s);
	return ret;
}

struct server {
	char prefix[200];
	char conf[256];
	int port;
	pid_t master;	/* `actrack run`, which execs nginx: same pid */
};

/*
 * A private prefix: the configuration, the document root and every path
 * nginx would otherwise take from its build (Debian's /var/lib/nginx
 * temporaries, /run/nginx.pid), so that nothing outside it is touched.
 * /pid answers with the worker's pid: which worker holds a connection.
 */
static int server_prepare(struct server *s)
{
	char path[300], conf[4096];
	const char *tmp = getenv("TMPDIR");

	snprintf(s->prefix, sizeof(s->prefix), "%s/actrack-nginx-%d",
		 tmp && *tmp ? tmp : "/tmp", (int)getpid());
	snprintf(s->conf, sizeof(s->conf), "%s/nginx.conf", s->prefix);
	snprintf(path, sizeof(path), "%s/html", s->prefix);
	if ((mkdir(s->prefix, 0755) && errno != EEXIST) ||
	    (mkdir(path, 0755) && errno != EEXIST))
		return -1;
	s->port = free_port();
	if (s->port <= 0)
		return -1;
	snprintf(conf, sizeof(conf),
		 "user root root;\n"
		 "worker_processes 2;\n"
		 "daemon off;\n"
		 "master_process on;\n"
		 "pid %1$s/nginx.pid;\n"
		 "lock_file %1$s/nginx.lock;\n"
		 "error_log %1$s/error.log notice;\n"
		 "events { worker_connections 64; }\n"
		 "http {\n"
		 "  access_log off;\n"
		 "  default_type text/plain;\n"
		 "  client_body_temp_path %1$s/body;\n"
		 "  proxy_temp_path %1$s/proxy;\n"
		 "  fastcgi_temp_path %1$s/fastcgi;\n"
		 "  uwsgi_temp_path %1$s/uwsgi;\n"
		 "  scgi_temp_path %1$s/scgi;\n"
		 /* A request held half-sent must outlive a slow VM. */
		 "  client_header_timeout 10m;\n"
		 "  keepalive_timeout 10m;\n"
		 "  server {\n"
		 "    listen 127.0.0.1:%2$d;\n"
		 "    root %1$s/html;\n"
		 "    location = /pid { return 200 \"$pid\\n\"; }\n"
		 "  }\n"
		 "}\n", s->prefix, s->port);
	if (write_file(s->conf, conf, strlen(conf)))
		return -1;
	snprintf(path, sizeof(path), "%s/html/index.html", s->prefix);
	return write_file(path, BODY, strlen(BODY));
}

/* nginx under `actrack run` (@tracked) or on its own, in its own process
 * group, its output in the prefix. */
static int server_start(struct server *s, bool tracked)
{
	char elog[300], out[300];
	char *argv[] = { "actrack", "run", "--", NGINX, "-p", s->prefix,
			 "-c", s->conf, "-e", elog, NULL };
	int fd;

	snprintf(elog, sizeof(elog), "%s/error.log", s->prefix);
	snprintf(out, sizeof(out), "%s/nginx.out", s->prefix);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	s->master = fork();
	if (s->master < 0)
		return -1;
	if (!s->master) {
		dup2(fd, 1);
		dup2(fd, 2);
		setpgid(0, 0);
		if (tracked)
			execv(cli_path(), argv);
		else
			execv(NGINX, argv + 3);
		_exit(127);
	}
	close(fd);
	return 0;
}

/* A fast stop (SIGTERM: the master stops its workers and exits 0); the
 * process group is killed if that does not happen. */
static int server_stop(struct server *s)
{
	int st = -1, i;

	if (s->master <= 0)
		return -1;
	kill(s->master, SIGTERM);
	for (i = 0; i < TRIES; i++) {
		if (waitpid(s->master, &st, WNOHANG) == s->master)
			break;
		usleep(TRY_US);
	}
	if (i == TRIES) {
		kill(-s->master, SIGKILL);
		waitpid(s->master, &st, 0);
		st = -1;
	}
	kill(-s->master, SIGKILL);	/* a worker left behind, if any */
	s->master = 0;
	return st;
}

static void server_log(struct __test_metadata *_metadata, struct server *s)
{
	char path[300];
	char *text;

	snprintf(path, sizeof(path), "%s/error.log", s->prefix);
	text = read_file(path, NULL);
	TH_LOG("nginx's error.log:\n%s", text ? text : "");
	free(text);
}

static int connect_to(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *p)
{
	size_t n = strlen(p);

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * GET @path on connection @fd (kept alive) and read the whole response:
 * its body into @body.  Return: the HTTP status, or -1.  poll() bounds
 * each read (a server that stopped answering fails, it does not hang).
 */
static int http_get(int fd, const char *path, char *body, size_t len)
{
	char req[256], buf[4096], *end, *cl;
	size_t n = 0, want;
	int status;

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: actrack\r\n\r\n",
		 path);
	if (send_all(fd, req))
		return -1;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		buf[n] = 0;
		end = strstr(buf, "\r\n\r\n");
		if (end) {
			cl = strstr(buf, "Content-Length: ");
			if (!cl || cl > end)
				return -1;
			want = (size_t)(end + 4 - buf) + strtoul(cl + 16, NULL,
								 10);
			if (want >= sizeof(buf))
				return -1;
			if (n >= want)
				break;
		}
		if (n + 1 >= sizeof(buf) || poll(&p, 1, 30000) != 1)
			return -1;
		r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
		if (r <= 0)
			return -1;
		n += (size_t)r;
	}
	if (sscanf(buf, "HTTP/1.1 %d ", &status) != 1)
		return -1;
	snprintf(body, len, "%.*s", (int)(n - (size_t)(end + 4 - buf)),
		 end + 4);
	return status;
}

/* Until the server answers GET / with the file on a new connection. */
static bool serving(int port)
{
	char body[256];

	for (int i = 0; i < TRIES; i++) {
		int fd = connect_to(port);
		int st = fd < 0 ? -1 : http_get(fd, "/index.html", body,
						 sizeof(body));

		if (fd >= 0)
			close(fd);
		if (st == 200 && !strcmp(body, BODY))
			return true;
		usleep(TRY_US);
	}
	return false;
}

/* The children of @parent (from /proc: field 4 of each stat). */
static int children_of(pid_t parent, pid_t *out, int max)
{
	struct dirent *e;
	int n = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], buf[512], *rp;
		int ppid, fd;
		ssize_t r;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = 0;
		rp = strrchr(buf, ')');
		if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 &&
		    ppid == parent && n < max)
			out[n++] = atoi(e->d_name);
	}
	closedir(d);
	return n;
}

/* @pid's epoll descriptor: the one fd that is an eventpoll, or -1. */
static int epoll_fd_of(pid_t pid)
{
	char dir[64], path[330], link[64];
	struct dirent *e;
	int found = -1, n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t r;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		r = readlink(path, link, sizeof(link) - 1);
		if (r <= 0)
			continue;
		link[r] = 0;
		if (!strcmp(link, "anon_inode:[eventpoll]")) {
			found = atoi(e->d_name);
			n++;
		}
	}
	closedir(d);
	return n == 1 ? found : -1;
}

/* Until @pid is tracked and waits in epoll_wait; its epoll fd, or -1. */
static int wait_in_epoll(pid_t pid)
{
	for (int i = 0; i < TRIES; i++) {
		int ep = epoll_fd_of(pid);

		if (ep >= 0 && vm_in_io_wait(pid, ep, true))
			return ep;
		usleep(TRY_US);
	}
	return -1;
}

/* Until the master has @n children; how many it has. */
static int wait_children(pid_t master, pid_t *kids, int n)
{
	int got = 0;

	for (int i = 0; i < TRIES; i++) {
		got = children_of(master, kids, MAX_WORKERS);
		if (got == n)
			break;
		usleep(TRY_US);
	}
	return got;
}

/* `actrack monitor --recent` until it has @pid's report: that report's
 * text alone (up to the next report), or NULL.  Caller frees. */
static char *death_report(pid_t pid)
{
	char *argv[] = { "actrack", "monitor", "--recent", "--count", "0",
			 NULL };
	char want[32], *rep = NULL, *end;
	struct run r;

	snprintf(want, sizeof(want), "pid %d (", (int)pid);
	for (int i = 0; i < TRIES && !rep; i++) {
		if (run_cli(&r, NULL, argv))
			return NULL;
		if ((rep = strstr(r.out, want))) {
			end = strstr(rep + 1, "\npid ");
			if (end)
				end[1] = 0;
			rep = strdup(rep);
		}
		run_free(&r);
		if (!rep)
			usleep(TRY_US);
	}
	return rep;
}

/* Does @s hold each of @n strings, in this order? */
static const char *in_order(const char *s, const char *const *parts, int n)
{
	for (int i = 0; i < n && s; i++) {
		s = strstr(s, parts[i]);
		if (!s)
			return parts[i];
		s += strlen(parts[i]);
	}
	return NULL;
}

FIXTURE(nginx) {
	struct server s;
};

FIXTURE_SETUP(nginx)
{
	const char *why = skip_reason();

	memset(&self->s, 0, sizeof(self->s));
	if (why)
		SKIP(return, "%s", why);
	unsetenv(ACTRACK_ENV_ARENA);	/* the module's arena */
	ASSERT_EQ(0, loopback_up());
	ASSERT_EQ(0, server_prepare(&self->s));
}

/* nginx stopped whatever failed, its log shown if something did. */
FIXTURE_TEARDOWN(nginx)
{
	if (ACTRACK_TEST_FAILED(_metadata) && self->s.prefix[0])
		server_log(_metadata, &self->s);
	if (self->s.master > 0)
		server_stop(&self->s);
}

TEST_F_TIMEOUT(nginx, worker_killed_while_serving, 300)
{
	pid_t kids[MAX_WORKERS], after[MAX_WORKERS], victim, other, fresh = 0;
	char body[64], want[128], *rep, *bt;
	struct server *s = &self->s;
	const char *missing;
	int conn, ep, n, st;
	ssize_t r;
	char c;

	if (ACTRACK_TEST_SKIPPED(_metadata))
		return;
	ASSERT_EQ(0, server_start(s, true));
	ASSERT_TRUE(serving(s->port))
		TH_LOG("nginx never served on port %d", s->port);
	ASSERT_EQ(2, wait_children(s->master, kids, 2));

	/*
	 * A client: one request answered on a kept-alive connection (its
	 * answer names the worker that owns the connection), then the next
	 * one sent in part, so that this worker holds a request in
	 * progress, waiting for the rest of it.
	 */
	conn = connect_to(s->port);
	ASSERT_LE(0, conn);
	ASSERT_EQ(200, http_get(conn, "/pid", body, sizeof(body)));
	victim = atoi(body);
	ASSERT_TRUE(victim == kids[0] || victim == kids[1])
		TH_LOG("/pid says %s, the workers are %d and %d", body,
		       kids[0], kids[1]);
	other = victim == kids[0] ? kids[1] : kids[0];
	ASSERT_EQ(0, send_all(conn, "GET /index.html HTTP/1.1\r\n"
			      "Host: actrack\r\n"));
	ep = wait_in_epoll(victim);
	ASSERT_LE(0, ep) TH_LOG("worker %d never tracked in epoll_wait",
				victim);

	ASSERT_EQ(0, kill(victim, SIGKILL));
	/* The client sees its connection end with the worker (poll: a
	 * connection left open fails here, it does not hang). */
	r = poll(&(struct pollfd){ .fd = conn, .events = POLLIN }, 1, 30000);
	EXPECT_EQ(1, r);
	if (r == 1) {
		r = recv(conn, &c, 1, 0);
		EXPECT_TRUE(r == 0 || (r < 0 && errno == ECONNRESET));
	}
	close(conn);

	rep = death_report(victim);
	ASSERT_NE(NULL, rep) TH_LOG("no death report for worker %d", victim);
	TH_LOG("the worker's death report:\n%s", rep);
	EXPECT_NE(NULL, strstr(rep, "killed by SIGKILL"));
	snprintf(want, sizeof(want), "thread %d 'nginx' depth 1\n",
		 (int)victim);
	EXPECT_NE(NULL, strstr(rep, want));
	/* epoll_wait's activity: the epoll fd, no byte count (0). */
	snprintf(want, sizeof(want), "[1] io-wait fd %d, 0 bytes, for ", ep);
	EXPECT_NE(NULL, strstr(rep, want));
	EXPECT_NE(NULL, strstr(rep, ", origin 0x"));
	EXPECT_NE(NULL, strstr(rep, " in nginx+0x"));
	/*
	 * The stack at death, innermost first: the kernel entry in the C
	 * library's epoll_wait, the preload's wrapper (built with -g: its
	 * line), nginx's epoll module (static: nginx+offset) called from
	 * its event loop, the worker's cycle called from the master's
	 * fork of it, and the master's own start.
	 */
	bt = strstr(rep, "backtrace:\n");
	ASSERT_NE(NULL, bt);
	{
		static const char *const frames[] = {
			"#0 ", " epoll_wait+0x", "\n", "#1 ", " epoll_wait+0x",
			"(preload.c:", "\n", "#2 ", " nginx+0x", "\n",
			"#3 ", " ngx_process_events_and_timers+0x",
			" ngx_spawn_process+0x", " ngx_master_process_cycle+0x",
			" main+0x",
		};

		missing = in_order(bt, frames, sizeof(frames) /
						sizeof(*frames));
		EXPECT_EQ(NULL, missing) TH_LOG("no \"%s\" in order", missing);
	}
	free(rep);

	/* The master lives on and replaces the worker; the new one is
	 * tracked (it inherited the preload from the master's fork) and
	 * serves. */
	EXPECT_EQ(0, kill(s->master, 0));
	for (int i = 0; i < TRIES && !fresh; i++) {
		n = children_of(s->master, after, MAX_WORKERS);
		for (int k = 0; k < n; k++)
			if (after[k] != victim && after[k] != other)
				fresh = after[k];
		if (!fresh)
			usleep(TRY_US);
	}
	ASSERT_NE(0, fresh) TH_LOG("the master started no new worker");
	EXPECT_LE(0, wait_in_epoll(fresh))
		TH_LOG("new worker %d never tracked in epoll_wait", fresh);
	EXPECT_TRUE(serving(s->port));

	st = server_stop(s);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("nginx's master ended with status %#x", st);
}

TEST_HARNESS_MAIN
