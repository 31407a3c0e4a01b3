// SPDX-License-Identifier: MIT
/*
 * An ATTACH waits for the cleanup of its own process's previous image
 * (after an exec) and for nothing else: never for another uid's backlog.
 *
 * uid A makes every cleanup of its arena the longest walk there is (one
 * block linked to itself), then queues a backlog: processes that attached
 * and exec'd (their exec cleanups) and whose new images died at once,
 * then processes that attached and were killed (their death reports).
 * The exec'd ones are reaped, so their signal_structs go back to the slab,
 * and everything runs on one CPU, so that uid B's children, forked next,
 * are likely to get those very signal_structs: the key that the exec
 * entries were once found by.  Each B child ATTACHes and says how long
 * that took.  The assertion is on causality, not time: when every B child
 * has attached, A's backlog is still queued (the module's cleanup counter
 * has not reached its end).  The worst wait is printed.  The module is
 * reloaded with 64 MiB arenas for it (as in the report), and with its
 * defaults after.
 */
#include <sched.h>
#include "vm_util.h"

#define UID_A		52300
#define UID_B		52301
#define A_EXECS		32	/* exec cleanups queued first */
#define A_DEATHS	64	/* then death reports */
#define B_CHILDREN	64
/* The arenas of the report: the longest walks, about 1 Mi steps each. */
#define ARENA_PARAM	"arena_size=67108864"
#define DRAIN_NS	(250ULL * 1000000000ULL)

/* The exec'd image of an A process: it dies at once. */
#define EXIT_ARG	"--exit-at-once"

static void become(uid_t uid)
{
	if (setgid(uid) || setuid(uid))
		_exit(80);
}

static uint64_t cleanups(void)
{
	struct actrack_monitor *mon;
	struct actrack_kstats st = { 0 };

	if (actrack_monitor_open(0, &mon))
		return 0;
	actrack_monitor_stats(mon, &st);
	actrack_monitor_close(mon);
	return st.cleanups;
}

/* A child that waits for a byte (or EOF) on @go, then runs @fn. */
struct kid {
	pid_t pid;
	int go;			/* write end, ours */
};

static int kid_start(struct kid *k, int ready_w, void (*fn)(int, int, long),
		     long arg)
{
	int go[2];

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	k->pid = fork();
	if (k->pid < 0)
		return -errno;
	if (!k->pid) {
		close(go[1]);
		fn(ready_w, go[0], arg);
		_exit(0);
	}
	close(go[0]);
	k->go = go[1];
	return 0;
}

static int raw_attach(void)
{
	struct actrack_attach at = { 0 };
	int fd = open(ACTRACK_DEVICE_PATH, O_RDWR);

	if (fd < 0 || ioctl(fd, ACTRACK_IOC_ATTACH, &at))
		return -1;
	return fd;
}

static void wait_go(int go)
{
	char c;

	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
}

/*
 * uid A's arena keeper: holds it mapped, links its last block to itself
 * (every walk then takes the most steps the arena allows), and on the
 * go byte undoes that and waits to be killed.
 */
static void a_keeper(int ready, int go, long unused)
{
	struct actrack_arena_iter it;
	struct actrack_block *b;
	struct vm_map map;
	uint32_t ref, last = 0, next;

	become(UID_A);
	if (vm_map_open(&map, -1, true) ||
	    !actrack_arena_alloc(&map.a, ACTRACK_TYPE_LOG, 64))
		_exit(81);
	actrack_arena_iter_init(&it, &map.a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL)))
		last = ref;
	if (!last)
		_exit(82);
	b = (struct actrack_block *)((char *)map.a.base + last);
	next = at_load(&b->next);
	at_store(&b->next, last);
	if (write(ready, "k", 1) != 1)
		_exit(83);
	wait_go(go);
	at_store(&b->next, next);
	if (write(ready, "u", 1) != 1)
		_exit(84);
	for (;;)
		pause();
}

/* uid A: attached, then exec'd into an image that exits at once. */
static void a_exec(int ready, int go, long unused)
{
	become(UID_A);
	if (raw_attach() < 0)
		_exit(85);
	if (write(ready, "e", 1) != 1)
		_exit(86);
	wait_go(go);
	execl("/proc/self/exe", "vm_attach_wait", EXIT_ARG, (char *)NULL);
	_exit(87);
}

/* uid A: attached, then killed. */
static void a_death(int ready, int go, long unused)
{
	become(UID_A);
	if (raw_attach() < 0)
		_exit(88);
	if (write(ready, "d", 1) != 1)
		_exit(89);
	for (;;)
		pause();
}

/* uid B: holds B's arena mapped, so that no child of B allocates it. */
static void b_keeper(int ready, int go, long unused)
{
	struct vm_map map;

	become(UID_B);
	if (vm_map_open(&map, -1, true))
		_exit(90);
	if (write(ready, "b", 1) != 1)
		_exit(91);
	wait_go(go);
}

/* uid B, freshly forked: ATTACH, and say how long it took (us). */
static void b_attach(int ready, int go, long unused)
{
	uint64_t t0, us;

	become(UID_B);
	t0 = actrack_test_mono_ns();
	if (raw_attach() < 0)
		_exit(92);
	us = (actrack_test_mono_ns() - t0) / 1000;
	if (write(ready, &us, sizeof(us)) != sizeof(us))
		_exit(93);
	wait_go(go);
}

/* Reload the module with @params, once nothing holds it any more. */
static int reload(const char *params)
{
	uint64_t t0 = actrack_test_mono_ns();
	int ret;

	while (syscall(SYS_delete_module, "actrack", O_NONBLOCK) &&
	       errno == EAGAIN && actrack_test_mono_ns() - t0 < 60000000000ULL)
		usleep(10000);
	ret = vm_module_load(params);
	return ret == -EEXIST ? -EBUSY : ret;
}

static void kid_end(struct kid *k)
{
	kill(k->pid, SIGKILL);
	waitpid(k->pid, NULL, 0);
	close(k->go);
}

/* The module with 64 MiB arenas for the test, with its defaults after. */
FIXTURE(wait) {
	int loaded;
};

FIXTURE_SETUP(wait)
{
	self->loaded = 0;
	VM_REQUIRE_MODULE();
	ASSERT_EQ(0, reload(ARENA_PARAM));
	self->loaded = 1;
}

FIXTURE_TEARDOWN(wait)
{
	if (self->loaded)
		EXPECT_EQ(0, reload(""));
}

TEST_F_TIMEOUT(wait, other_uid_attach_never_waits_for_a_backlog, 290)
{
	static struct kid execs[A_EXECS], deaths[A_DEATHS], bs[B_CHILDREN];
	struct kid akeep = { 0 }, bkeep = { 0 };
	/* Fewer on a slow (debug) kernel, where each walk is slower too. */
	int n_execs = actrack_test_scaled(A_EXECS, 4);
	int n_deaths = actrack_test_scaled(A_DEATHS, 8);
	int n_bs = actrack_test_scaled(B_CHILDREN, 8);
	uint64_t c0, c1, t0, us, max_us = 0, total = n_execs + n_deaths;
	int ready[2], i, status;
	cpu_set_t one;
	char c;

	VM_SETUP_SKIPPED();
	/* One CPU: the slab hands a freed signal_struct to the next fork. */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	ASSERT_EQ(0, pipe(ready));

	ASSERT_EQ(0, kid_start(&bkeep, ready[1], b_keeper, 0));
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 60000));
	ASSERT_EQ(0, kid_start(&akeep, ready[1], a_keeper, 0));
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 60000));
	for (i = 0; i < n_execs; i++)
		ASSERT_EQ(0, kid_start(&execs[i], ready[1], a_exec, 0));
	for (i = 0; i < n_deaths; i++)
		ASSERT_EQ(0, kid_start(&deaths[i], ready[1], a_death, 0));
	ASSERT_EQ(0, vm_read_n(ready[0], n_execs + n_deaths, 120000));

	c0 = cleanups();
	t0 = actrack_test_mono_ns();
	/* The exec cleanups first; their images die and are reaped ... */
	for (i = 0; i < n_execs; i++)
		ASSERT_EQ(1, write(execs[i].go, "g", 1));
	for (i = 0; i < n_execs; i++) {
		ASSERT_EQ(execs[i].pid, waitpid(execs[i].pid, &status, 0));
		ASSERT_EQ(0, status);
		close(execs[i].go);
	}
	/* ... then the deaths, left unreaped (their signal_structs stay). */
	for (i = 0; i < n_deaths; i++)
		ASSERT_EQ(0, kill(deaths[i].pid, SIGKILL));
	/* The reaped ones' signal_structs are freed after a grace period. */
	syscall(SYS_membarrier, 1 /* MEMBARRIER_CMD_GLOBAL */, 0);
	usleep(100000);

	for (i = 0; i < n_bs; i++) {
		ASSERT_EQ(0, kid_start(&bs[i], ready[1], b_attach, 0));
		ASSERT_EQ(sizeof(us), read(ready[0], &us, sizeof(us)));
		if (us > max_us)
			max_us = us;
	}
	c1 = cleanups();
	TH_LOG("%d B attaches done with %llu of uid A's %llu cleanups done "
	       "(%llu ms after they were queued); worst B attach %llu us",
	       n_bs, (unsigned long long)(c1 - c0),
	       (unsigned long long)total,
	       (unsigned long long)((actrack_test_mono_ns() - t0) / 1000000),
	       (unsigned long long)max_us);
	/* B never waited for A: A's backlog is still there. */
	EXPECT_LT(c1 - c0, total);

	for (i = 0; i < n_bs; i++)
		kid_end(&bs[i]);
	kid_end(&bkeep);
	/* Undo the loop and let A's backlog drain before the next test. */
	ASSERT_EQ(1, write(akeep.go, "g", 1));
	ASSERT_EQ(1, read(ready[0], &c, 1));
	while (cleanups() - c0 < total + n_bs &&
	       actrack_test_mono_ns() - t0 < DRAIN_NS)
		usleep(10000);
	TH_LOG("uid A's backlog drained in %llu ms",
	       (unsigned long long)((actrack_test_mono_ns() - t0) / 1000000));
	EXPECT_LE(total + n_bs, cleanups() - c0);
	for (i = 0; i < n_deaths; i++) {
		waitpid(deaths[i].pid, NULL, 0);
		close(deaths[i].go);
	}
	kid_end(&akeep);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], EXIT_ARG))
		return 0;
	return test_harness_run(argc, argv);
}
