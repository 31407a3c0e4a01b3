// SPDX-License-Identifier: MIT
/*
 * The snapshot_*, cli_*, hangs_* and run_* tests' helpers
 * (snapshot_helpers.h): writer children, hand-built arenas, running the CLI.
 */
#include "snapshot_helpers.h"

void test_path(char *buf, size_t len, const char *tag)
{
	const char *dir = getenv("TMPDIR");

	snprintf(buf, len, "%s/actrack-%s-%d", dir && *dir ? dir : "/tmp",
		 tag, (int)getpid());
	unlink(buf);
}

int writer_start(struct writer *w, const char *path, uint32_t slots,
		 uint32_t flags, writer_fn fn, void *arg)
{
	int ready[2];
	char c;

	if (pipe(ready))
		return -1;
	w->pid = fork();
	if (w->pid < 0)
		return -1;
	if (!w->pid) {
		struct actrack_opts o = {
			.sz = sizeof(o), .arena_path = path,
			.stack_slots = slots,
			.flags = flags | ACTRACK_INIT_NO_MODULE,
		};

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[0]);
		if (actrack_init(&o))
			_exit(10);
		if (fn)
			fn(arg);
		if (write(ready[1], "r", 1) != 1)
			_exit(11);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		waitpid(w->pid, NULL, 0);
		w->pid = 0;
		return -1;
	}
	close(ready[0]);
	if (actrack_read_start_ticks(w->pid, &w->start_ticks))
		return -1;
	return 0;
}

void writer_stop(struct writer *w)
{
	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
	}
	w->pid = 0;
}

const struct actrack_snap_process *
snap_find(const struct actrack_snapshot *s, uint32_t pid)
{
	for (uint32_t i = 0; i < s->nr_processes; i++)
		if (s->processes[i].pid == pid)
			return &s->processes[i];
	return NULL;
}

const struct actrack_snap_thread *
snap_thread_named(const struct actrack_snap_process *p, const char *name)
{
	for (uint32_t i = 0; i < p->nr_threads; i++)
		if (!strncmp(p->threads[i].name, name,
			     sizeof(p->threads[i].name)))
			return &p->threads[i];
	return NULL;
}

const struct actrack_value *
value_find(const struct actrack_value *v, uint32_t nr, const char *name)
{
	for (uint32_t i = 0; i < nr; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

int build_init(struct build *b, uint32_t size)
{
	struct actrack_arena_header tmpl;
	void *mem;

	if (posix_memalign(&mem, ACTRACK_BLOCK_ALIGN, size))
		return -ENOMEM;
	memset(mem, 0, size);
	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.uid = 1000;
	tmpl.user_hz = 100;
	tmpl.create_mono_ns = BUILD_CREATE_MONO;
	tmpl.create_real_ns = 1700000000000000000ULL;
	b->a = (struct actrack_arena){ .base = mem, .size = size,
				       .writable = true };
	return actrack_arena_format(&b->a, &tmpl);
}

void build_free(struct build *b)
{
	free(b->a.base);
	b->a.base = NULL;
}

void *build_alloc(struct build *b, uint32_t type, uint32_t size,
		  uint32_t *ref)
{
	*ref = actrack_arena_alloc(&b->a, type, size);
	if (!*ref)
		return NULL;
	return actrack_arena_get(&b->a, *ref, type, size);
}

void build_owner(struct build *b, struct actrack_owner *o, uint32_t pid,
		 uint64_t start_ticks, uint32_t tid)
{
	o->pid = pid;
	o->tid = tid;
	o->start_ticks = start_ticks;
	o->data_id = actrack_arena_new_data_id(&b->a);
}

uint32_t build_process(struct build *b, uint32_t pid, uint64_t start_ticks,
		       uint32_t phase, uint32_t parent, uint64_t launch_ns,
		       const char *argv, uint32_t argv_len)
{
	struct actrack_process *p;
	uint32_t ref;

	p = build_alloc(b, ACTRACK_TYPE_PROCESS, sizeof(*p), &ref);
	if (!p)
		return 0;
	p->phase = phase;
	p->parent_pid = parent;
	p->launch_time_ns = launch_ns;
	p->cmdline_size = argv_len;
	memcpy(p->cmdline, argv, argv_len);
	build_owner(b, &p->owner, pid, start_ticks, 0);
	return ref;
}

struct actrack_process *build_process_rec(struct build *b, uint32_t ref)
{
	return actrack_arena_get(&b->a, ref, ACTRACK_TYPE_PROCESS,
				 sizeof(struct actrack_process));
}

uint32_t build_thread(struct build *b, uint32_t pid, uint64_t start_ticks,
		      uint32_t tid, const char *name, uint32_t slots,
		      uint32_t depth, const struct actrack_activity *acts)
{
	struct actrack_thread *t;
	uint32_t ref, n = depth < slots ? depth : slots;

	t = build_alloc(b, ACTRACK_TYPE_THREAD, sizeof(*t) +
			slots * sizeof(struct actrack_activity), &ref);
	if (!t)
		return 0;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->start_time_ns = BUILD_CREATE_MONO;
	t->slot_count = slots;
	t->depth = depth;
	if (n)	/* acts may be NULL for an empty stack */
		memcpy(ACTRACK_THREAD_SLOTS(t), acts, n * sizeof(*acts));
	build_owner(b, &t->owner, pid, start_ticks, tid);
	return ref;
}

struct actrack_thread *build_thread_rec(struct build *b, uint32_t ref)
{
	return actrack_arena_get(&b->a, ref, ACTRACK_TYPE_THREAD,
				 sizeof(struct actrack_thread));
}

uint32_t build_user_data(struct build *b, uint32_t pid, uint64_t start_ticks,
			 uint32_t tid, uint32_t capacity)
{
	struct actrack_user_data *ud;
	uint32_t ref;

	ud = build_alloc(b, ACTRACK_TYPE_USER_DATA, sizeof(*ud) + capacity,
			 &ref);
	if (!ud)
		return 0;
	ud->capacity = capacity;
	build_owner(b, &ud->owner, pid, start_ticks, tid);
	return ref;
}

int build_field(struct build *b, uint32_t ref, uint8_t type,
		const char *name, const void *value, uint16_t size)
{
	struct actrack_user_data *ud;
	struct actrack_field *f;
	uint32_t nlen = (uint32_t)strlen(name), voff, rs;

	ud = actrack_arena_get(&b->a, ref, ACTRACK_TYPE_USER_DATA,
			       sizeof(*ud));
	if (!ud)
		return -ENOENT;
	voff = (sizeof(*f) + nlen + 7) & ~7U;
	rs = (voff + size + 7) & ~7U;
	if (ud->used + rs > ud->capacity)
		return -ENOSPC;
	f = (struct actrack_field *)((char *)(ud + 1) + ud->used);
	f->name_size = (uint8_t)nlen;
	f->value_size = size;
	f->record_size = (uint16_t)rs;
	memcpy(f + 1, name, nlen);
	memcpy((char *)f + voff, value, size);
	f->type = type;
	ud->used += rs;
	return 0;
}

uint32_t build_log(struct build *b, uint32_t pid, uint64_t start_ticks,
		   uint32_t capacity)
{
	struct actrack_log *l;
	uint32_t ref;

	l = build_alloc(b, ACTRACK_TYPE_LOG, sizeof(*l) +
			capacity * sizeof(struct actrack_log_entry), &ref);
	if (!l)
		return 0;
	l->capacity = capacity;
	build_owner(b, &l->owner, pid, start_ticks, 0);
	return ref;
}

void build_log_msg(struct build *b, uint32_t ref, uint32_t tid,
		   uint64_t time_ns, const char *text)
{
	struct actrack_log *l = actrack_arena_get(&b->a, ref, ACTRACK_TYPE_LOG,
						  sizeof(*l));
	struct actrack_log_entry *e;
	uint32_t n = l->head++;
	size_t len = strlen(text);

	if (len > ACTRACK_LOG_TEXT_MAX - 1)
		len = ACTRACK_LOG_TEXT_MAX - 1;
	e = &l->entries[n % l->capacity];
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	e->time_ns = time_ns;
	e->len = (uint16_t)len;
	memcpy(e->text, text, len);
	e->seq = 2 * n + 2;
}

uint32_t build_module(struct build *b, uint32_t pid, uint64_t start_ticks,
		      uint64_t base, uint64_t size, const uint8_t *build_id,
		      uint8_t build_id_size, const char *path)
{
	struct actrack_module *m;
	uint32_t ref;

	m = build_alloc(b, ACTRACK_TYPE_MODULE, sizeof(*m), &ref);
	if (!m)
		return 0;
	m->base = base;
	m->size = size;
	m->build_id_size = build_id_size;
	if (build_id_size)
		memcpy(m->build_id, build_id, build_id_size);
	snprintf(m->path, sizeof(m->path), "%s", path);
	build_owner(b, &m->owner, pid, start_ticks, 0);
	return ref;
}

int write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const char *p = buf;

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	close(fd);
	return 0;
}

int build_write(struct build *b, const char *path)
{
	return write_file(path, b->a.base, b->a.size);
}

char *read_file(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return NULL;
	}
	n = pread(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	if (n != st.st_size) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	if (len)
		*len = (size_t)n;
	return buf;
}

const char *cli_path(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("ACTRACK_CLI");
	struct stat st;
	char *slash;
	ssize_t n;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", path, sizeof(path) - 16);
	if (n <= 0)
		return "actrack";
	path[n] = 0;
	slash = strrchr(path, '/');
	if (!slash)
		return "actrack";
	strcpy(slash, "/../actrack");
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		strcpy(slash, "/actrack");
	return path;
}

char *slurp_fd(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	while (buf) {
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (buf)
		buf[len] = 0;
	return buf;
}

int run_program_as(struct run *r, const char *path, const char *env,
		   uid_t uid, char *const argv[])
{
	char out[256], err[256];
	int fo, fe, status;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	test_path(out, sizeof(out), "run-cli-stdout");
	test_path(err, sizeof(err), "run-cli-stderr");
	fo = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	fe = open(err, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	unlink(out);
	unlink(err);
	if (fo < 0 || fe < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(fo, 1);
		dup2(fe, 2);
		if (env)
			putenv((char *)env);
		if (uid != (uid_t)-1 &&
		    (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
		     setresuid(uid, uid, uid)))
			_exit(126);
		execv(path, argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) :
		    128 + WTERMSIG(status);
	lseek(fo, 0, SEEK_SET);
	lseek(fe, 0, SEEK_SET);
	r->out = slurp_fd(fo);
	r->err = slurp_fd(fe);
	close(fo);
	close(fe);
	return r->out && r->err ? 0 : -1;
}

int run_program(struct run *r, const char *path, const char *env,
		char *const argv[])
{
	return run_program_as(r, path, env, (uid_t)-1, argv);
}

int run_cli(struct run *r, const char *env, char *const argv[])
{
	return run_program(r, cli_path(), env, argv);
}

void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}
