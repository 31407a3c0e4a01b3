// SPDX-License-Identifier: MIT
/*
 * The vm_*, monitor_* and run_* tests' helpers (vm_util.h): compiled once,
 * linked into the tests that call them.
 */
#include "vm_util.h"

int vm_locks[64];

static int vm_victim_ready_fd = -1;

const char *vm_module_path(void)
{
	const char *p = getenv("ACTRACK_KO");

	return p && *p ? p : "/lib/modules/actrack.ko";
}

int vm_module_load(const char *params)
{
	int fd = open(vm_module_path(), O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

int vm_start_ticks(pid_t pid, uint64_t *ticks)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return -EIO;
	/* ") S ppid ..." : field 3 is the state */
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -EIO;
	*ticks = strtoull(p + 1, NULL, 10);
	return 0;
}

int vm_notify_open(char *path, size_t n)
{
	static unsigned int serial;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *dir = getenv("TMPDIR");
	int fd, len, ret;

	len = snprintf(path, n, "%s/actrack-notify-%d-%u",
		       dir && *dir ? dir : "/tmp", (int)getpid(), serial++);
	if (len < 0 || (size_t)len >= n || (size_t)len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, (size_t)len + 1);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int vm_notify_wait_ready(int fd, int timeout_ms)
{
	uint64_t end = actrack_test_mono_ns() + (uint64_t)timeout_ms * 1000000ULL;
	char buf[256];

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = actrack_test_mono_ns();
		ssize_t len;
		int ret;

		if (now >= end)
			return -ETIMEDOUT;
		ret = poll(&pfd, 1, (int)((end - now + 999999) / 1000000));
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret <= 0)
			continue;
		len = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (len < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (len < 0)
			return -errno;
		buf[len] = '\0';
		return !strcmp(buf, "READY=1") && len == 7 ? 0 : -EBADMSG;
	}
}

void vm_own_cmdline(char *buf, size_t len)
{
	ssize_t n, i;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	buf[0] = '\0';
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	if (n > ACTRACK_CMDLINE_MAX)
		n = ACTRACK_CMDLINE_MAX;
	while (n && buf[n - 1] == '\0')
		n--;
	buf[n] = '\0';
	for (i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
}

bool vm_in_io_wait(pid_t pid, int fd, bool sole)
{
	struct actrack_snapshot *s;
	bool found = false;

	if (actrack_snapshot_take(NULL, 0, &s))
		return false;
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		if (p->pid != (uint32_t)pid || !p->nr_threads)
			continue;
		if (sole && (!p->has_record || p->nr_threads != 1))
			continue;
		for (uint32_t k = 0; k < p->threads[0].nr_activities; k++) {
			const struct actrack_snap_activity *a =
				&p->threads[0].activities[k];

			if (a->a.type == ACTRACK_ACT_IO_WAIT &&
			    a->a.object == (uint64_t)fd)
				found = true;
		}
	}
	actrack_snapshot_free(s);
	return found;
}

int vm_map_open(struct vm_map *v, long select_uid, bool writable)
{
	void *p;
	int ret;

	memset(v, 0, sizeof(*v));
	if (select_uid < 0 && !writable) {
		/* A reader never makes an arena: make ours (LAYOUT on a
		 * writable fd) so that there is one to read. */
		struct actrack_layout lay;
		int wfd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);

		if (wfd < 0 || ioctl(wfd, ACTRACK_IOC_LAYOUT, &lay) < 0) {
			ret = -errno;
			if (wfd >= 0)
				close(wfd);
			return ret;
		}
		close(wfd);
	}
	v->fd = open(ACTRACK_DEVICE_PATH,
		     (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (v->fd < 0)
		return -errno;
	if (select_uid >= 0) {
		struct actrack_select sel = { .uid = (uint32_t)select_uid };

		if (ioctl(v->fd, ACTRACK_IOC_SELECT, &sel) < 0)
			goto err;
	}
	if (ioctl(v->fd, ACTRACK_IOC_LAYOUT, &v->lay) < 0)
		goto err;
	p = mmap(NULL, v->lay.arena_size,
		 PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, v->fd,
		 (off_t)v->lay.arena_offset);
	if (p == MAP_FAILED)
		goto err;
	v->a.base = p;
	v->a.size = v->lay.arena_size;
	v->a.writable = writable;
	return 0;
err:
	ret = -errno;
	close(v->fd);
	v->fd = -1;
	return ret;
}

void vm_map_close(struct vm_map *v)
{
	if (v->a.base)
		munmap(v->a.base, v->a.size);
	if (v->fd >= 0)
		close(v->fd);
	memset(v, 0, sizeof(*v));
	v->fd = -1;
}

/* What vm_count_owned() counts. */
struct owned_by {
	uint32_t pid, tid, type;
	uint64_t start_ticks;
};

static bool is_owned_by(uint32_t type, uint32_t data_id,
			const struct actrack_owner *o, const void *arg)
{
	const struct owned_by *w = arg;

	if (w->type != ACTRACK_TYPE_ANY && type != w->type)
		return false;
	if (!data_id || at_load(&o->pid) != w->pid)
		return false;
	if (w->start_ticks != ~0ULL &&
	    at_load(&o->start_ticks) != w->start_ticks)
		return false;
	return !w->tid || at_load(&o->tid) == w->tid;
}

static bool is_live(uint32_t type, uint32_t data_id,
		    const struct actrack_owner *o, const void *arg)
{
	return data_id && data_id != 0xFFFFFFFFU && at_load(&o->pid);
}

/* The records of an owned type whose owner header @keep says yes to
 * (@data_id: its data_id, loaded with acquire). */
static int count_owners(struct vm_map *v,
			bool (*keep)(uint32_t type, uint32_t data_id,
				     const struct actrack_owner *o,
				     const void *arg),
			const void *arg)
{
	struct actrack_arena_iter it;
	uint32_t ref, t;
	int n = 0;

	actrack_arena_iter_init(&it, &v->a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, &t))) {
		struct actrack_owner *o;

		if (!actrack_arena_is_owned_type(t))
			continue;
		o = actrack_arena_get(&v->a, ref, t, sizeof(*o));
		if (o)
			n += keep(t, at_load_acquire(&o->data_id), o, arg);
	}
	return n;
}

int vm_count_owned(struct vm_map *v, uint32_t pid, uint64_t start_ticks,
		   uint32_t tid, uint32_t type)
{
	const struct owned_by w = { pid, tid, type, start_ticks };

	return count_owners(v, is_owned_by, &w);
}

int vm_count_live(struct vm_map *v)
{
	return count_owners(v, is_live, NULL);
}

void vm_keep_death(const struct actrack_death *d, void *arg)
{
	struct vm_deaths *ds = arg;
	struct actrack_death *c;

	if (ds->nr >= VM_MAX_DEATHS)
		return;
	c = &ds->d[ds->nr++];
	*c = *d;
	c->process.threads = NULL;
	c->process.modules = NULL;
	/* User data is not kept (freed after the callback): no dangling
	 * pointers in the copy. */
	c->process.values = NULL;
	c->process.nr_values = 0;
	if (d->process.nr_threads) {
		c->process.threads = calloc(d->process.nr_threads,
					    sizeof(*d->process.threads));
		if (!c->process.threads)
			c->process.nr_threads = 0;
	}
	for (uint32_t i = 0; i < c->process.nr_threads; i++) {
		struct actrack_snap_thread *t = &c->process.threads[i];
		uint32_t n = d->process.threads[i].nr_activities;

		*t = d->process.threads[i];
		t->activities = n ? calloc(n, sizeof(*t->activities)) : NULL;
		t->nr_activities = t->activities ? n : 0;
		for (uint32_t k = 0; k < t->nr_activities; k++)
			t->activities[k].a =
				d->process.threads[i].activities[k].a;
	}
	/* Stacks at death: which and how big, not their bytes. */
	c->stacks = NULL;
	if (d->nr_stacks) {
		c->stacks = malloc(d->nr_stacks * sizeof(*d->stacks));
		if (c->stacks) {
			memcpy(c->stacks, d->stacks,
			       d->nr_stacks * sizeof(*d->stacks));
			for (uint32_t i = 0; i < d->nr_stacks; i++)
				c->stacks[i].bytes = NULL;
		} else {
			c->nr_stacks = 0;
		}
	}
	if (d->process.nr_modules) {
		size_t sz = d->process.nr_modules * sizeof(*d->process.modules);

		c->process.modules = malloc(sz);
		if (c->process.modules)
			memcpy(c->process.modules, d->process.modules, sz);
		else
			c->process.nr_modules = 0;
	}
}

void vm_deaths_free(struct vm_deaths *ds)
{
	for (unsigned int i = 0; i < ds->nr; i++) {
		for (uint32_t k = 0; k < ds->d[i].process.nr_threads; k++)
			free(ds->d[i].process.threads[k].activities);
		free(ds->d[i].process.threads);
		free(ds->d[i].process.modules);
		free(ds->d[i].stacks);
	}
	ds->nr = 0;
}

void vm_watch_close(struct vm_watch *w)
{
	if (w->m)
		actrack_monitor_close(w->m);
	if (w->ds) {
		vm_deaths_free(w->ds);
		free(w->ds);
	}
	w->m = NULL;
	w->ds = NULL;
}

int vm_watch_open_flags(struct vm_watch *w, uint32_t flags)
{
	int ret;

	w->m = NULL;
	w->ds = calloc(1, sizeof(*w->ds));
	if (!w->ds)
		return -ENOMEM;
	ret = actrack_monitor_open(flags, &w->m);
	if (ret) {
		w->m = NULL;
		vm_watch_close(w);
	}
	return ret;
}

int vm_watch_open(struct vm_watch *w)
{
	return vm_watch_open_flags(w, ACTRACK_MONITOR_ALL_UIDS);
}

int vm_watch_mine(struct vm_watch *w)
{
	return vm_watch_open_flags(w, 0);
}

struct actrack_death *vm_find_death(struct vm_deaths *ds, uint32_t pid)
{
	for (unsigned int i = 0; i < ds->nr; i++)
		if (ds->d[i].process.pid == pid)
			return &ds->d[i];
	return NULL;
}

struct actrack_death *vm_wait_death(struct actrack_monitor *m,
				    struct vm_deaths *ds, uint32_t pid,
				    int timeout_ms)
{
	uint64_t end = actrack_test_mono_ns() + (uint64_t)timeout_ms * 1000000ULL;
	struct actrack_death *d;

	while (!(d = vm_find_death(ds, pid))) {
		uint64_t now = actrack_test_mono_ns();
		int ret;

		if (now >= end)
			return NULL;
		ret = actrack_monitor_dispatch(m,
					       (int)((end - now) / 1000000) + 1,
					       vm_keep_death, ds);
		if (ret < 0 && ret != -EINTR && ret != -ENOBUFS)
			return NULL;
	}
	return d;
}

const struct actrack_snap_thread *vm_death_thread(const struct actrack_death *d,
						  const char *name)
{
	for (uint32_t i = 0; i < d->process.nr_threads; i++)
		if (!strcmp(d->process.threads[i].name, name))
			return &d->process.threads[i];
	return NULL;
}

/*
 * Worker i: task 1000+i, then lock_acquire &vm_locks[i]; busy workers then
 * push and pop a generic activity (id = a counter) forever, so that a kill
 * lands in the middle of pushes.
 */
static void *vm_victim_worker(void *arg)
{
	long i = (long)arg & 0xffff;
	bool busy = (long)arg >> 16;
	char name[32];
	uint64_t n = 0;

	snprintf(name, sizeof(name), "worker-%ld", i);
	if (actrack_thread_init(name))
		_exit(110);
	actrack_push_task(1000 + i);
	actrack_push_lock_acquire(&vm_locks[i]);
	if (write(vm_victim_ready_fd, "w", 1) != 1)
		_exit(111);
	if (!busy)
		for (;;)
			pause();
	for (;;) {
		uint32_t t = actrack_push_generic(1, n, (uint64_t)i);

		n++;
		actrack_pop(t);
	}
	return NULL;
}

/*
 * The victim's main thread: attach, phase, workers, "process wait" on its
 * parent, tell the parent, then obey one command byte:
 *   'x' + code: exit(code)    'a': abort()    anything else / EOF: pause
 */
static void vm_victim_main(const struct vm_victim_cfg *cfg, int ready, int go)
{
	struct actrack_opts o = { .sz = sizeof(o) };
	unsigned char cmd[2];
	pthread_t t;
	long i;

	unsetenv(ACTRACK_ENV_ARENA);
	if (cfg->core) {
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

		setrlimit(RLIMIT_CORE, &rl);
	}
	if (cfg->uid >= 0 &&
	    (setgid((gid_t)cfg->uid) || setuid((uid_t)cfg->uid)))
		_exit(112);
	vm_victim_ready_fd = ready;
	if (actrack_init(&o))
		_exit(113);
	if (actrack_backend() != ACTRACK_BACKEND_MODULE)
		_exit(114);
	if (cfg->phase && actrack_set_phase(cfg->phase))
		_exit(115);
	for (i = 0; i < cfg->threads; i++)
		if (pthread_create(&t, NULL, vm_victim_worker,
				   (void *)(i | ((long)cfg->busy << 16))))
			_exit(116);
	actrack_push_process_wait(getppid());
	if (write(ready, "m", 1) != 1)
		_exit(117);
	if (read(go, cmd, 1) == 1) {
		if (cmd[0] == 'x' && read(go, &cmd[1], 1) == 1)
			exit(cmd[1]);
		if (cmd[0] == 'a')
			abort();
	}
	for (;;)
		pause();
}

int vm_read_n(int fd, int n, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	while (n > 0) {
		int r = poll(&p, 1, ms);

		if (r <= 0)
			return r ? -errno : -ETIMEDOUT;
		if (read(fd, &c, 1) != 1)
			return -EPIPE;
		n--;
	}
	return 0;
}

int vm_victim_start_pid(const struct vm_victim_cfg *cfg,
			struct vm_victim *v, pid_t want_pid)
{
	int ready[2], go[2], ret;

	if (pipe2(ready, O_CLOEXEC))
		return -errno;
	if (pipe2(go, O_CLOEXEC)) {
		ret = -errno;
		close(ready[0]);
		close(ready[1]);
		return ret;
	}
	v->pid = fork();
	if (v->pid == 0) {
		if (want_pid && getpid() != want_pid)
			_exit(0);
		close(ready[0]);
		close(go[1]);
		vm_victim_main(cfg, ready[1], go[0]);
		_exit(119);
	}
	ret = v->pid < 0 ? -errno : 0;
	close(ready[1]);
	close(go[0]);
	if (!ret && want_pid && v->pid != want_pid) {
		waitpid(v->pid, NULL, 0);
		ret = -EAGAIN;
	}
	if (ret) {
		close(ready[0]);
		close(go[1]);
		return ret;
	}
	v->go_fd = go[1];
	ret = vm_read_n(ready[0], cfg->threads + 1, 20000);
	close(ready[0]);
	if (!ret)
		ret = vm_start_ticks(v->pid, &v->start_ticks);
	if (ret) {
		kill(v->pid, SIGKILL);
		waitpid(v->pid, NULL, 0);
		close(v->go_fd);
	}
	return ret;
}

int vm_victim_start(const struct vm_victim_cfg *cfg, struct vm_victim *v)
{
	return vm_victim_start_pid(cfg, v, 0);
}

int vm_victim_cmd(struct vm_victim *v, char cmd, int code)
{
	unsigned char buf[2] = { (unsigned char)cmd, (unsigned char)code };
	int status;

	if (write(v->go_fd, buf, 2) != 2)
		return -errno;
	close(v->go_fd);
	if (waitpid(v->pid, &status, 0) != v->pid)
		return -errno;
	return status;
}

int vm_victim_kill(struct vm_victim *v, int sig)
{
	int status;

	if (kill(v->pid, sig))
		return -errno;
	if (waitpid(v->pid, &status, 0) != v->pid)
		return -errno;
	close(v->go_fd);
	return status;
}

/* cgroup2 at VM_CG_ROOT, mounted if it is not.  Return: 0 or -errno. */
int vm_cg_mount(void)
{
	struct stat st;

	if (!stat(VM_CG_ROOT "/cgroup.controllers", &st))
		return 0;
	return mount("none", VM_CG_ROOT, "cgroup2", 0, NULL) ? -errno : 0;
}

/*
 * Write @val to the cgroup file @dir/@file.  Return: 0, -errno when it
 * does not open, -EIO when the write fails or falls short.
 */
int vm_cg_write(const char *dir, const char *file, const char *val)
{
	size_t n = strlen(val);
	char path[PATH_MAX];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = write(fd, val, n) == (ssize_t)n ? 0 : -EIO;
	close(fd);
	return ret;
}

/* Move @pid into the cgroup @dir.  Return: 0 or -errno. */
int vm_cg_move(const char *dir, pid_t pid)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return vm_cg_write(dir, "cgroup.procs", buf);
}

/*
 * The "0::" line of /proc/@pid/cgroup (the cgroup v2 path as the
 * caller's cgroup namespace shows it) into @buf.  Return: 0 or -errno.
 */
int vm_cg_of(pid_t pid, char *buf, size_t len)
{
	char path[64], line[PATH_MAX + 8];
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			ret = strlen(line + 3) < len ? 0 : -ENAMETOOLONG;
			if (!ret)
				strcpy(buf, line + 3);
		}
	fclose(f);
	return ret;
}
