// SPDX-License-Identifier: MIT
/*
 * Seed corpora for the fuzz targets, made by the library from real arenas
 * and real death reports (run by `make fuzz`; nothing binary is kept in
 * the repository):
 *
 *   gen_corpus DIR
 *
 * Child processes attach to a fresh 64 KiB file arena and do what
 * programs do: push every kind of activity, annotate activities, the
 * process and the arena, log (enough to recycle the ring), set phases,
 * record their modules, die of SIGSEGV with the fatal-signal recorder on,
 * get launched and reaped by a parent that frees their records.  Each
 * arena is written (trailing zeros trimmed, see fuzz_arena_input.h) to
 * DIR/snapshot, DIR/writers and, with the mode bytes arena_fuzz expects,
 * DIR/arena; a saved image (actrack_arena_save) too.  For every process
 * in it, the death report the module would send is encoded attribute by
 * attribute as kmod/netlink.c puts it (the raw field areas copied from
 * the arena, as the module copies them), plus a truncated variant, a
 * GET_DEATHS dump entry and a GET_STATS answer, into DIR/death (each
 * with death_fuzz's mode byte in front).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/genetlink.h>
#include <libmnl/libmnl.h>

#include "internal.h"

static const char *outdir;
static char tmpdir[] = "/tmp/actrack-corpus.XXXXXX";
static unsigned int nr_files;

static void die(const char *what, int err)
{
	fprintf(stderr, "gen_corpus: %s: %s\n", what, strerror(err));
	exit(1);
}

static void put(const char *target, const char *name, uint8_t mode,
		bool with_mode, const void *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "w");
	if (!f)
		die(path, errno);
	if (with_mode)
		fputc(mode, f);
	if (fwrite(buf, 1, len, f) != len || fclose(f))
		die(path, EIO);
	nr_files++;
}

/* ---- workloads (each in its own child process) ------------------------ */

static int attach(const char *arena, bool modules)
{
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = arena,
		.file_size = ACTRACK_ARENA_MIN_SIZE, .stack_slots = 4,
		.flags = ACTRACK_INIT_NO_MODULE |
			 (modules ? 0 : ACTRACK_INIT_NO_MODULES),
	};

	return actrack_init(&o);
}

static void annotate(struct actrack_user_data *ud, int n)
{
	static const uint8_t raw[] = { 0, 1, 0xfe, 0xff, '"', '\\' };

	actrack_set_string(ud, "request", "GET /index.html \xc3\xa9\x01");
	actrack_set_uint(ud, "bytes", 512 + n);
	actrack_set_int(ud, "delta", -5 - n);
	actrack_set_bool(ud, "retry", n & 1);
	actrack_set_char(ud, "grade", 'A' + n);
	actrack_set_raw(ud, "raw", raw, sizeof(raw));
	actrack_set_string_ref(ud, "sref", "referenced");
	actrack_set_raw_ref(ud, "rref", raw, sizeof(raw));
}

static sem_t ready;

/* Pushes, then stays alive: the process dies with its threads' stacks
 * still there, as a crashed or killed one does. */
static void *worker(void *arg)
{
	int n = (int)(intptr_t)arg;
	uint32_t tok;

	actrack_set_thread_name(n ? "worker \x7f\xff" : "worker");
	actrack_push_task(4711 + n);
	tok = actrack_push_lock_acquire(&n);
	annotate(actrack_activity_data(tok), n);
	actrack_push_io_wait(3, 4096);
	actrack_push_generic(5, 77, 88);
	/* Deeper than the 4 slots: only the depth moves. */
	actrack_push_event_wait(&tok);
	actrack_push_thread_join(1234);
	sem_post(&ready);
	for (;;)
		pause();
	return NULL;
}

static void busy_process(bool modules, int threads)
{
	pthread_t th[8];
	uint32_t tok;

	if (attach(getenv(ACTRACK_ENV_ARENA), modules))
		_exit(90);
	actrack_set_phase(ACTRACK_PHASE_MAIN_LOOP_STARTED);
	annotate(actrack_process_data(), 1);
	annotate(actrack_global_data(), 2);
	for (int i = 0; i < 40; i++)	/* recycles the log ring */
		actrack_log("message %d: \"%s\"", i, i & 1 ? "odd\t" : "even");
	tok = actrack_push_process_wait(getppid());
	annotate(actrack_activity_data(tok), 0);
	sem_init(&ready, 0, 0);
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)(i + 1));
	for (int i = 0; i < threads; i++)
		sem_wait(&ready);
}

static int child_busy(void)
{
	busy_process(false, 3);
	return 3;
}

static int child_modules(void)
{
	busy_process(true, 1);
	return 0;
}

static int child_crash(void)
{
	volatile int *null = NULL;

	busy_process(false, 1);
	actrack_record_fatal_signals();
	actrack_push_task(99);
	signal(SIGSEGV, SIG_DFL);
	return *null;
}

/* A launcher whose children are reaped and cleaned up: free blocks, and
 * blocks reused from them, in the arena. */
static int child_launcher(void)
{
	if (attach(getenv(ACTRACK_ENV_ARENA), false))
		return 90;
	for (int i = 0; i < 3; i++) {
		int st;
		pid_t pid = fork();

		if (pid == 0) {
			busy_process(false, 2);
			_exit(i);
		}
		actrack_record_process_launch(pid);
		waitpid(pid, &st, 0);
		actrack_record_process_exit(pid, st);
	}
	busy_process(false, 1);
	return 0;
}

static int run_child(const char *arena, int (*fn)(void), int *status)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		setenv(ACTRACK_ENV_ARENA, arena, 1);
		_exit(fn());
	}
	if (waitpid(pid, status, 0) != pid)
		return -errno;
	return pid;
}

/* ---- arenas ------------------------------------------------------------ */

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	FILE *f = fopen(path, "r");

	if (!f || fstat(fileno(f), &st))
		die(path, errno);
	buf = malloc(st.st_size);
	if (!buf || fread(buf, 1, st.st_size, f) != (size_t)st.st_size)
		die(path, EIO);
	fclose(f);
	*len = st.st_size;
	return buf;
}

static void put_arena(const char *name, const char *path)
{
	size_t len, used;
	uint8_t *img = slurp(path, &len), *seed;

	for (used = len; used && !img[used - 1]; used--)
		;
	put("snapshot", name, 0, false, img, used);
	put("writers", name, 0, false, img, used);
	/* arena_fuzz: mode 0 (the data is the arena), read-only and
	 * writable walks. */
	seed = malloc(used + 2);
	seed[0] = 0;
	seed[1] = 0;
	memcpy(seed + 2, img, used);
	put("arena", name, 0, false, seed, used + 2);
	seed[1] = 1;
	{
		char n2[128];

		snprintf(n2, sizeof(n2), "%s-writable", name);
		put("arena", n2, 0, false, seed, used + 2);
	}
	free(seed);
	free(img);
}

/* ---- death reports, as kmod/netlink.c encodes them --------------------- */

/* The field area of user data block @ref, as the module copies it. */
static const void *field_area(struct actrack_arena *a, uint32_t ref,
			      uint32_t *len)
{
	struct actrack_user_data *ud;
	uint32_t used;

	*len = 0;
	if (!ref)
		return NULL;
	ud = actrack_arena_get(a, ref, ACTRACK_TYPE_USER_DATA, sizeof(*ud));
	if (!ud)
		return NULL;
	used = ud->used < ud->capacity ? ud->used : ud->capacity;
	*len = used;
	return ud + 1;
}

static void put_thread(struct nlmsghdr *nlh, struct actrack_arena *a,
		       const struct actrack_snap_thread *t, bool with_data)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, ACTRACK_A_THREAD);
	char name[32];

	mnl_attr_put_u32(nlh, ACTRACK_T_TID, t->tid);
	if (t->torn) {
		mnl_attr_put(nlh, ACTRACK_T_TORN, 0, NULL);
		goto end;
	}
	memcpy(name, t->name, sizeof(name));
	name[sizeof(name) - 1] = 0;
	mnl_attr_put_strz(nlh, ACTRACK_T_NAME, name);
	mnl_attr_put_u32(nlh, ACTRACK_T_DEPTH, t->depth);
	mnl_attr_put_u32(nlh, ACTRACK_T_FATAL_SIGNO, (uint32_t)t->fatal_signo);
	mnl_attr_put_u32(nlh, ACTRACK_T_FATAL_CODE, (uint32_t)t->fatal_code);
	mnl_attr_put_u64(nlh, ACTRACK_T_FATAL_ADDR, t->fatal_addr);
	mnl_attr_put_u64(nlh, ACTRACK_T_FATAL_PC, t->fatal_pc);
	for (uint32_t i = 0; i < t->nr_activities; i++)
		mnl_attr_put(nlh, ACTRACK_T_ACTIVITY,
			     sizeof(struct actrack_activity),
			     &t->activities[i].a);
	for (uint32_t i = 0; with_data && i < t->nr_activities; i++) {
		uint8_t buf[4096];
		uint32_t len;
		const void *f = field_area(a, t->activities[i].a.user_data,
					   &len);

		if (!len || len + 4 > sizeof(buf))
			continue;
		memcpy(buf, &i, 4);
		memcpy(buf + 4, f, len);
		mnl_attr_put(nlh, ACTRACK_T_USER_DATA, len + 4, buf);
	}
end:
	mnl_attr_nest_end(nlh, nest);
}

static void put_death(const char *name, struct actrack_arena *a,
		      const struct actrack_snap_process *p, int status,
		      uint8_t cmd, bool truncate)
{
	static char buf[256 * 1024];
	struct actrack_process *rec;
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	uint32_t flags = 0, len, sig = status & 0x7f;
	uint32_t ref;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = 0x20;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = ACTRACK_GENL_VERSION;
	mnl_attr_put_u32(nlh, ACTRACK_A_PID, p->pid);
	mnl_attr_put_u64(nlh, ACTRACK_A_START_TICKS, p->start_ticks);
	mnl_attr_put_u32(nlh, ACTRACK_A_UID, getuid());
	mnl_attr_put_u32(nlh, ACTRACK_A_WAIT_STATUS, (uint32_t)status);
	mnl_attr_put_u64(nlh, ACTRACK_A_EXIT_TIME_NS, p->launch_time_ns + 1);
	mnl_attr_put_u64(nlh, ACTRACK_A_SEQ, p->pid);
	if (sig == 0) {
		mnl_attr_put_u32(nlh, ACTRACK_A_EXIT_CODE, (status >> 8) & 0xff);
	} else if (sig != 0x7f) {
		mnl_attr_put_u32(nlh, ACTRACK_A_SIGNAL, sig);
		if (status & 0x80)
			mnl_attr_put(nlh, ACTRACK_A_CORE_DUMPED, 0, NULL);
	}
	rec = NULL;
	ref = actrack_arena_find_process(a, p->pid, p->start_ticks);
	if (ref)
		rec = actrack_arena_get(a, ref, ACTRACK_TYPE_PROCESS,
					sizeof(*rec));
	if (p->has_record)
		mnl_attr_put_u32(nlh, ACTRACK_A_PHASE, p->phase);
	if (rec && rec->cmdline_size && rec->cmdline_size <= ACTRACK_CMDLINE_MAX)
		mnl_attr_put(nlh, ACTRACK_A_CMDLINE, rec->cmdline_size,
			     rec->cmdline);
	if (truncate)
		flags |= ACTRACK_DEATH_TRUNCATED;
	mnl_attr_put_u32(nlh, ACTRACK_A_FLAGS, flags);
	if (rec) {
		const void *f = field_area(a, rec->user_data, &len);

		if (len)
			mnl_attr_put(nlh, ACTRACK_A_PROCESS_DATA, len, f);
	}
	for (uint32_t i = 0; i < p->nr_threads; i++) {
		put_thread(nlh, a, &p->threads[i], !truncate);
		if (truncate)
			break;
	}
	for (uint32_t i = 0; !truncate && i < p->nr_modules; i++) {
		struct actrack_module m;

		memset(&m, 0, sizeof(m));
		m.base = p->modules[i].base;
		m.size = p->modules[i].size;
		m.vaddr = p->modules[i].vaddr;
		m.build_id_size = p->modules[i].build_id_size;
		memcpy(m.build_id, p->modules[i].build_id, sizeof(m.build_id));
		memcpy(m.path, p->modules[i].path, sizeof(m.path));
		mnl_attr_put(nlh, ACTRACK_A_MODULE, sizeof(m), &m);
	}
	/* Each seed must be one the parser accepts. */
	{
		struct actrack_death d;

		if (__actrack_parse_death(nlh, nlh->nlmsg_len, &d))
			die(name, EBADMSG);
		__actrack_free_death(&d);
	}
	put("death", name, cmd == ACTRACK_CMD_DEATH ? 0 : 1, true,
	    (char *)nlh + NLMSG_HDRLEN + GENL_HDRLEN,
	    nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN);
	if (cmd == ACTRACK_CMD_DEATH && !truncate) {
		char n2[128];

		snprintf(n2, sizeof(n2), "%s-whole", name);
		put("death", n2, 3, true, nlh, nlh->nlmsg_len);
	}
}

static void put_stats(const char *name, struct actrack_arena *a)
{
	char buf[1024];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;
	struct nlattr *n;
	struct actrack_kstats st;

	nlh->nlmsg_type = 0x20;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = ACTRACK_CMD_GET_STATS;
	g->version = ACTRACK_GENL_VERSION;
	n = mnl_attr_nest_start(nlh, ACTRACK_A_STATS);
	mnl_attr_put_u64(nlh, ACTRACK_S_ARENAS, 1);
	mnl_attr_put_u64(nlh, ACTRACK_S_BYTES_USED, actrack_arena_used(a));
	mnl_attr_put_u64(nlh, ACTRACK_S_ARENA_SIZE, a->size);
	mnl_attr_put_u64(nlh, ACTRACK_S_ATTACHED, 2);
	mnl_attr_put_u64(nlh, ACTRACK_S_CLEANUPS, 3);
	mnl_attr_put_u64(nlh, ACTRACK_S_RECORDS_FREED, 38);
	mnl_attr_put_u64(nlh, ACTRACK_S_CORRUPTION, 0);
	mnl_attr_put_u64(nlh, ACTRACK_S_REPORTS_SENT, 4);
	mnl_attr_put_u64(nlh, ACTRACK_S_REPORTS_DROPPED, 0);
	mnl_attr_put_u64(nlh, ACTRACK_S_BYTES_FREE, actrack_arena_free_bytes(a));
	mnl_attr_nest_end(nlh, n);
	if (__actrack_parse_stats(nlh, nlh->nlmsg_len, &st))
		die(name, EBADMSG);
	put("death", name, 2, true, (char *)nlh + NLMSG_HDRLEN + GENL_HDRLEN,
	    nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN);
}

static void put_deaths(const char *name, const char *path, int status)
{
	struct actrack_snapshot *s;
	struct actrack_map m;
	char n2[160];
	int ret;

	ret = __actrack_map_file(path, false, false, 0, &m);
	if (ret)
		die(path, -ret);
	ret = __actrack_snapshot_arena(&m.arena, &s);
	if (ret)
		die(path, -ret);
	for (uint32_t i = 0; i < s->nr_processes; i++) {
		const struct actrack_snap_process *p = &s->processes[i];

		snprintf(n2, sizeof(n2), "%s-%u", name, i);
		put_death(n2, &m.arena, p, status, ACTRACK_CMD_DEATH, false);
		snprintf(n2, sizeof(n2), "%s-%u-truncated", name, i);
		put_death(n2, &m.arena, p, status, ACTRACK_CMD_DEATH, true);
		snprintf(n2, sizeof(n2), "%s-%u-dump", name, i);
		put_death(n2, &m.arena, p, status, ACTRACK_CMD_GET_DEATHS,
			  false);
	}
	snprintf(n2, sizeof(n2), "%s-stats", name);
	put_stats(n2, &m.arena);
	actrack_snapshot_free(s);
	__actrack_unmap(&m);
}

static void scenario(const char *name, int (*fn)(void))
{
	char arena[256], saved[256], n2[160];
	int status, ret;

	snprintf(arena, sizeof(arena), "%s/%s", tmpdir, name);
	ret = run_child(arena, fn, &status);
	if (ret < 0)
		die(name, -ret);
	put_arena(name, arena);
	put_deaths(name, arena, status);
	snprintf(saved, sizeof(saved), "%s/%s.saved", tmpdir, name);
	ret = actrack_arena_save(arena, ACTRACK_SNAP_ARENA_FILE, saved);
	if (ret)
		die("actrack_arena_save", -ret);
	snprintf(n2, sizeof(n2), "%s-saved", name);
	put_arena(n2, saved);
	unlink(arena);
	unlink(saved);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	outdir = argv[1];
	mkdir(outdir, 0755);
	if (!mkdtemp(tmpdir))
		die("mkdtemp", errno);
	scenario("busy", child_busy);
	scenario("modules", child_modules);
	scenario("crash", child_crash);
	scenario("launcher", child_launcher);
	rmdir(tmpdir);
	printf("gen_corpus: %u seed files in %s\n", nr_files, outdir);
	return 0;
}
