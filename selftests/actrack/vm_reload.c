// SPDX-License-Identifier: MIT
/*
 * Load/unload cycles of actrack.ko with mappings opened and closed: the
 * module cannot go while anything holds /dev/actrack or a mapping of it
 * (exact errno from delete_module), goes cleanly once the last is gone, and
 * comes back with a fresh, empty arena.  Runs in the test VM only, where
 * the module file is /lib/modules/actrack.ko ($ACTRACK_KO overrides); it
 * leaves the module loaded, as it found it, for the tests after it.
 */
#include "vm_util.h"

#define MODULE_NAME	"actrack"
/*
 * Load/unload cycles per case; on a slow kernel (ACTRACK_SLOW_KERNEL,
 * test_harness.h) divided, at least 2: on debug-rt a module load alone
 * takes seconds and 8 cycles of attached_processes_then_unload outlasted
 * the case's 120 s limit.
 */
#define CYCLES		8
#define MIN_CYCLES	2

static int unload(void)
{
	return syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK) ? -errno : 0;
}

/*
 * Unload, waiting out references that are going away (exiting children,
 * openers told to stop).  2 s of tries, multiplied on a slow kernel
 * (ACTRACK_SLOW_KERNEL, test_harness.h) like the other tries here: on the
 * debug kernel under load the openers' close and munmap and the killed
 * victim's exit outlasted 2 s (-EAGAIN in kills_during_unload_and_reload).
 */
static int unload_settled(void)
{
	int ret = -EAGAIN, tries = 200 * actrack_test_slowness();

	for (int i = 0; i < tries && (ret == -EAGAIN || ret == -EBUSY); i++) {
		ret = unload();
		if (ret)
			usleep(10 * 1000);
	}
	return ret;
}

struct mapping {
	int fd;
	void *arena, *clock;
	size_t arena_len, clock_len;
};

static int map_arena(struct mapping *m)
{
	struct actrack_layout lay;

	memset(m, 0, sizeof(*m));
	m->fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (m->fd < 0)
		return -errno;
	if (ioctl(m->fd, ACTRACK_IOC_LAYOUT, &lay))
		return -errno;
	m->arena_len = lay.arena_size;
	m->arena = mmap(NULL, lay.arena_size, PROT_READ | PROT_WRITE,
			MAP_SHARED, m->fd, (off_t)lay.arena_offset);
	if (m->arena == MAP_FAILED)
		return -errno;
	m->clock_len = lay.clock_size;
	m->clock = mmap(NULL, lay.clock_size, PROT_READ, MAP_SHARED, m->fd,
			(off_t)lay.clock_offset);
	if (m->clock == MAP_FAILED)
		return -errno;
	return 0;
}

FIXTURE(reload) {
	bool was_loaded;
};

FIXTURE_SETUP(reload)
{
	self->was_loaded = !access(ACTRACK_DEVICE_PATH, F_OK);
	if (!getenv("ACTRACK_IN_VM") || access(vm_module_path(), R_OK))
		SKIP(return, "needs the test VM (ACTRACK_IN_VM, %s)",
		     vm_module_path());
	unsetenv(ACTRACK_ENV_ARENA);
	if (self->was_loaded)
		ASSERT_EQ(0, unload_settled());
}

FIXTURE_TEARDOWN(reload)
{
	/* Leave it loaded for the tests that follow. */
	if (self->was_loaded && access(ACTRACK_DEVICE_PATH, F_OK))
		vm_module_load("");
}

TEST_F(reload, mappings_pin_the_module_across_cycles)
{
	int cycles = actrack_test_scaled(CYCLES, MIN_CYCLES);

	VM_SETUP_SKIPPED();
	for (int cycle = 0; cycle < cycles; cycle++) {
		struct actrack_arena_header *h;
		struct mapping m;

		ASSERT_EQ(0, vm_module_load("arena_size=262144")) TH_LOG("cycle %d", cycle);
		ASSERT_EQ(-EEXIST, vm_module_load(""));
		ASSERT_EQ(0, map_arena(&m));
		h = m.arena;
		/* A fresh arena every time: formatted, nothing allocated. */
		ASSERT_EQ(ACTRACK_ARENA_MAGIC, h->magic);
		ASSERT_EQ(262144u, h->size);
		ASSERT_EQ((__u32)ACTRACK_ARENA_HEADER_SIZE, h->freeptr);
		/* Open fd and mappings: in use. */
		ASSERT_EQ(-EAGAIN, unload());
		close(m.fd);
		/* The fd is gone, the mappings still pin the module. */
		ASSERT_EQ(-EAGAIN, unload());
		/* ...and still work. */
		h->reserved[0] = 0;
		ASSERT_EQ(ACTRACK_ARENA_MAGIC, h->magic);
		ASSERT_EQ(0, munmap(m.clock, m.clock_len));
		ASSERT_EQ(-EAGAIN, unload());
		ASSERT_EQ(0, munmap(m.arena, m.arena_len));
		ASSERT_EQ(0, unload());
		ASSERT_NE(0, access(ACTRACK_DEVICE_PATH, F_OK));
	}
}

TEST_F(reload, attached_processes_then_unload)
{
	int cycles = actrack_test_scaled(CYCLES, MIN_CYCLES);

	VM_SETUP_SKIPPED();
	for (int cycle = 0; cycle < cycles; cycle++) {
		pid_t pids[4];
		int status;

		ASSERT_EQ(0, vm_module_load(""));
		for (int i = 0; i < 4; i++) {
			pids[i] = fork();
			ASSERT_LE(0, pids[i]);
			if (!pids[i]) {
				int r = actrack_init(NULL);

				if (r)
					_exit(20 + (-r & 0x3f));
				if (actrack_backend() != ACTRACK_BACKEND_MODULE)
					_exit(10);
				actrack_push_task((uint64_t)i);
				actrack_log("cycle %d child %d", cycle, i);
				_exit(i == 3 ? 0 : 7);
			}
		}
		for (int i = 0; i < 4; i++) {
			ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
			ASSERT_TRUE(WIFEXITED(status));
			ASSERT_EQ(i == 3 ? 0 : 7, WEXITSTATUS(status));
		}
		/* Their cleanups ran or are queued; unload waits for them. */
		ASSERT_EQ(0, unload_settled());
	}
}

TEST_F(reload, bad_parameters_refuse_to_load)
{
	VM_SETUP_SKIPPED();
	ASSERT_EQ(-EINVAL, vm_module_load("arena_size=1"));
	ASSERT_EQ(-EINVAL, vm_module_load("max_arenas=0"));
	ASSERT_NE(0, access(ACTRACK_DEVICE_PATH, F_OK));
	ASSERT_EQ(0, vm_module_load(""));
	ASSERT_EQ(0, unload_settled());
}

/*
 * Open, map, close while the module comes and goes; while *@hold is set,
 * hold nothing (the test needs the module free).  @pause_us between two
 * opens leaves the module free for a share of the time.
 */
static void opener(volatile int *hold, unsigned int pause_us)
{
	for (;;) {
		struct actrack_layout lay;
		int fd;
		void *p;

		if (*hold) {
			usleep(500);
			continue;
		}
		fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			usleep(500);
			continue;
		}
		if (!ioctl(fd, ACTRACK_IOC_LAYOUT, &lay)) {
			p = mmap(NULL, lay.arena_size, PROT_READ, MAP_SHARED,
				 fd, 0);
			if (p != MAP_FAILED)
				munmap(p, lay.arena_size);
		}
		close(fd);
		usleep(pause_us);
	}
}

#define RELOADS	100
#define UNLOAD_TRIES	50

/*
 * A fault storm: a busy tracked process SIGKILLed and the module unloaded
 * at once (its cleanup races the unload), 100 times, while two processes
 * open, map and close the device all along.  When they hold it for 50
 * tries, they are held off for the unload.  Nothing may splat (the runner
 * checks dmesg), and every cycle unloads and loads again.
 *
 * On a debug kernel (ACTRACK_SLOW_KERNEL=d, test_harness.h) the cycles are
 * divided by d (at least 5: 10 on debug, 5 on debug-rt, where 10 cycles
 * outlasted the case's 280 s limit).  The tries and the openers' pause are times,
 * not counts: an exit and an open/map/close there take 10-35 times longer,
 * so both are multiplied by d.  Even so, on the debug kernel under TCG the
 * two openers hold the module nearly all the time (unloads right after a
 * kill in 10 cycles: 0 with neither multiplied, 1 with d, 0 with 3 * d),
 * so there "at least one unload right after a kill" is logged, not
 * asserted; every other check stands.
 */
TEST_F_TIMEOUT(reload, kills_during_unload_and_reload, 280)
{
	int cycle, unloaded = 0, busy = 0, fails = 0, stopped = 0;
	int reloads = actrack_test_scaled(RELOADS, 5);
	int slow = actrack_test_slowness();
	volatile int *hold;
	pid_t openers[2];

	VM_SETUP_SKIPPED();
	hold = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hold);
	*hold = 0;
	for (int i = 0; i < 2; i++) {
		openers[i] = fork();
		ASSERT_LE(0, openers[i]);
		if (!openers[i])
			opener(hold, 200 * slow);
	}
	for (cycle = 0; cycle < reloads; cycle++) {
		struct vm_victim_cfg cfg = { .threads = 2, .uid = -1,
					     .busy = true };
		struct vm_victim v;
		int ret;

		if (access(ACTRACK_DEVICE_PATH, F_OK))
			ASSERT_EQ(0, vm_module_load("")) TH_LOG("cycle %d", cycle);
		if (vm_victim_start(&cfg, &v)) {
			fails++;
			continue;
		}
		kill(v.pid, SIGKILL);
		for (int tries = 0; tries < UNLOAD_TRIES * slow; tries++) {
			ret = unload();
			if (!ret) {
				unloaded++;
				break;
			}
			if (ret != -EAGAIN && ret != -EBUSY)
				break;
			busy++;
			usleep(2000);
		}
		waitpid(v.pid, NULL, 0);
		close(v.go_fd);
		if (!access(ACTRACK_DEVICE_PATH, F_OK)) {
			stopped++;
			*hold = 1;
			ASSERT_EQ(0, unload_settled());
			*hold = 0;
		}
	}
	for (int i = 0; i < 2; i++) {
		kill(openers[i], SIGKILL);
		waitpid(openers[i], NULL, 0);
	}
	munmap((void *)hold, 4096);
	TH_LOG("%d unload/load cycles: %d unloads right after a kill (%d "
	       "tries refused while in use), %d with the openers stopped, %d "
	       "victims that could not start", reloads, unloaded, busy,
	       stopped, fails);
	EXPECT_EQ(reloads, unloaded + stopped);
	if (slow == 1) {
		EXPECT_GT(unloaded, 0);
	} else if (!unloaded) {
		TH_LOG("slow kernel: no unload came right after a kill");
	}
	EXPECT_EQ(0, fails);
}

TEST_HARNESS_MAIN
