// SPDX-License-Identifier: MIT
/*
 * The kernel's trust boundary, attacked the way a hostile local user or a
 * container would: a request written into someone else's netlink socket,
 * pid namespaces that collide or peek at each other, readers that would
 * cost an arena, a user namespace that would fill the tables, executable
 * mappings, and one uid's thread churn that would stall another's cleanup.
 */
#include <sched.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include "vm_util.h"

/* ---------------------------------------------------------------------- */
/* Raw generic netlink, to write requests the library never would          */
/* ---------------------------------------------------------------------- */

struct nl {
	struct mnl_socket *sk;
	uint16_t family;
	uint32_t seq;
};

static int nl_family_cb(const struct nlattr *attr, void *data)
{
	if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID)
		*(uint16_t *)data = mnl_attr_get_u16(attr);
	return MNL_CB_OK;
}

static int nl_family_msg(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), nl_family_cb,
			      data);
}

/* Send @cmd (ALL_UIDS if @all) and return the ack's -errno (0: ok). */
static int nl_request(struct nl *n, uint16_t type, uint8_t cmd, bool all,
		      bool dump, mnl_cb_t cb, void *data)
{
	char buf[16384];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;
	unsigned int portid = mnl_socket_get_portid(n->sk);
	ssize_t len;
	int ret;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
	nlh->nlmsg_seq = ++n->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = type == GENL_ID_CTRL ? 1 : ACTRACK_GENL_VERSION;
	if (type == GENL_ID_CTRL)
		mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ACTRACK_GENL_NAME);
	if (all)
		mnl_attr_put(nlh, ACTRACK_A_ALL_UIDS, 0, NULL);
	if (mnl_socket_sendto(n->sk, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		len = mnl_socket_recvfrom(n->sk, buf, sizeof(buf));
		if (len < 0)
			return -errno;
		ret = mnl_cb_run(buf, len, n->seq, portid, cb, data);
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
}

static int nl_open(struct nl *n)
{
	memset(n, 0, sizeof(*n));
	n->sk = mnl_socket_open(NETLINK_GENERIC);
	if (!n->sk)
		return -errno;
	if (mnl_socket_bind(n->sk, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	return nl_request(n, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, false, false,
			  nl_family_msg, &n->family);
}

static int count_msgs(const struct nlmsghdr *nlh, void *data)
{
	(*(int *)data)++;
	return MNL_CB_OK;
}

/* Did a death report for @pid arrive within @ms?  (Raw socket.) */
static bool nl_got_death(struct nl *n, int ms)
{
	struct pollfd p = { .fd = mnl_socket_get_fd(n->sk), .events = POLLIN };
	char buf[65536];

	if (poll(&p, 1, ms) <= 0)
		return false;
	return mnl_socket_recvfrom(n->sk, buf, sizeof(buf)) > 0;
}

/* ---------------------------------------------------------------------- */

#define USER_A		1000	/* an unprivileged user */
#define NS_OWNER	1100	/* owner of the user namespace below */
#define NS_BASE		200000	/* its subordinate uids */
#define CHURN_A		3000
#define CHURN_B		3001

FIXTURE(trust) {
	struct actrack_monitor *m;
	struct vm_deaths *ds;
};

FIXTURE_SETUP(trust)
{
	self->m = NULL;
	self->ds = NULL;
	VM_REQUIRE_MODULE();
	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids and namespaces");
	self->ds = calloc(1, sizeof(*self->ds));
	ASSERT_NE(NULL, self->ds);
	ASSERT_EQ(0, actrack_monitor_open(ACTRACK_MONITOR_ALL_UIDS, &self->m));
}

FIXTURE_TEARDOWN(trust)
{
	if (self->m)
		actrack_monitor_close(self->m);
	if (self->ds) {
		vm_deaths_free(self->ds);
		free(self->ds);
	}
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * A uid-1000 socket into which root writes requests (the setuid program
 * writing to an inherited descriptor): each is refused, none acts as
 * root, and the socket's owner still gets exactly its own reports.
 */
TEST_F_TIMEOUT(trust, request_written_by_another_identity, 60)
{
	struct vm_victim_cfg root_cfg = { .threads = 0, .uid = -1 };
	struct vm_victim_cfg a_cfg = { .threads = 0, .uid = USER_A };
	int sync[2], ready[2];
	struct vm_victim v0, va;
	pid_t pid;
	char c;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, pipe(sync));
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct nl n;
		int msgs = 0;

		if (setresuid(0, USER_A, 0))
			_exit(10);
		if (nl_open(&n))
			_exit(11);
		/* Root writes into the uid-1000 socket. */
		if (seteuid(0))
			_exit(12);
		if (nl_request(&n, n.family, ACTRACK_CMD_SUBSCRIBE, true,
			       false, NULL, NULL) != -EPERM)
			_exit(13);
		if (nl_request(&n, n.family, ACTRACK_CMD_SUBSCRIBE, false,
			       false, NULL, NULL) != -EPERM)
			_exit(14);
		if (nl_request(&n, n.family, ACTRACK_CMD_GET_DEATHS, false,
			       true, count_msgs, &msgs) != -EPERM || msgs)
			_exit(15);
		if (nl_request(&n, n.family, ACTRACK_CMD_GET_STATS, false,
			       false, count_msgs, &msgs) != -EPERM || msgs)
			_exit(16);
		/* Its owner may subscribe, as itself. */
		if (seteuid(USER_A))
			_exit(17);
		if (nl_request(&n, n.family, ACTRACK_CMD_SUBSCRIBE, false,
			       false, NULL, NULL))
			_exit(18);
		if (write(ready[1], "r", 1) != 1)
			_exit(19);
		/* Root's death first: it must not arrive. */
		if (read(sync[0], &c, 1) != 1)
			_exit(20);
		if (nl_got_death(&n, 1000))
			_exit(21);
		if (write(ready[1], "s", 1) != 1)
			_exit(22);
		/* Then its own uid's: it must. */
		if (!nl_got_death(&n, 10000))
			_exit(23);
		_exit(0);
	}
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 20000));
	ASSERT_EQ(0, vm_victim_start(&root_cfg, &v0));
	vm_victim_kill(&v0, SIGKILL);
	ASSERT_NE(NULL, vm_wait_death(self->m, self->ds, v0.pid, 10000));
	ASSERT_EQ(1, write(sync[1], "k", 1));
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 20000));
	ASSERT_EQ(0, vm_victim_start(&a_cfg, &va));
	vm_victim_kill(&va, SIGKILL);
	EXPECT_EQ(0, wait_child(pid)) TH_LOG("child step failed");
}

/*
 * Two "pid 1"s of one uid, each in its own pid namespace: their records
 * are told apart (the kernel matches on the namespace too), and a host
 * monitor sees each death under its host pid.  Rounds until the two
 * start in one clock tick (identical pid and start_ticks: what used to
 * collide), at most 30.
 */
static pid_t spawn_pid1(int pid_fd, int ready_fd, uint64_t task)
{
	pid_t child = fork();

	if (child)
		return child;
	/* Middle process: a new pid namespace for its next child. */
	if (unshare(CLONE_NEWPID))
		_exit(30);
	pid_t inner = fork();

	if (inner < 0)
		_exit(31);
	if (inner == 0) {
		struct actrack_opts o = { .sz = sizeof(o) };

		if (getpid() != 1 || actrack_init(&o))
			_exit(32);
		actrack_push_task(task);
		if (write(ready_fd, "p", 1) != 1)
			_exit(33);
		for (;;)
			pause();
	}
	/* Tell the test the host pid of the pid 1, then reap it. */
	if (write(pid_fd, &inner, sizeof(inner)) != sizeof(inner))
		_exit(34);
	_exit(wait_child(inner) == 128 + SIGKILL ? 0 : 35);
}

TEST_F_TIMEOUT(trust, pid1s_in_two_namespaces, 240)
{
	int rounds, same_tick = 0;

	VM_SETUP_SKIPPED();
	for (rounds = 0; rounds < 30 && same_tick < 2; rounds++) {
		pid_t mid[2], host[2];
		uint64_t ticks[2];
		int ready[2], pids[2];
		struct vm_map map;
		struct actrack_death *d;

		ASSERT_EQ(0, pipe(ready));
		ASSERT_EQ(0, pipe(pids));
		mid[0] = spawn_pid1(pids[1], ready[1], 7001);
		mid[1] = spawn_pid1(pids[1], ready[1], 7002);
		ASSERT_LT(0, mid[0]);
		ASSERT_LT(0, mid[1]);
		ASSERT_EQ(0, vm_read_n(ready[0], 2, 20000));
		ASSERT_EQ(sizeof(host[0]), read(pids[0], &host[0],
						sizeof(host[0])));
		ASSERT_EQ(sizeof(host[1]), read(pids[0], &host[1],
						sizeof(host[1])));
		close(ready[0]);
		close(ready[1]);
		close(pids[0]);
		close(pids[1]);
		ASSERT_EQ(0, vm_start_ticks(host[0], &ticks[0]));
		ASSERT_EQ(0, vm_start_ticks(host[1], &ticks[1]));
		ASSERT_EQ(0, vm_map_open(&map, -1, false));
		/* Both pid 1s have one tracker each under (1, ticks). */
		EXPECT_EQ(ticks[0] == ticks[1] ? 2 : 1,
			  vm_count_owned(&map, 1, ticks[0], 0,
					 ACTRACK_TYPE_THREAD));

		kill(host[0], SIGKILL);
		d = vm_wait_death(self->m, self->ds, (uint32_t)host[0], 10000);
		ASSERT_NE(NULL, d) TH_LOG("no report under host pid %d",
					  host[0]);
		EXPECT_EQ(1, d->process.nr_threads);
		if (d->process.nr_threads >= 1)
			EXPECT_EQ(1, d->process.threads[0].nr_activities);
		/* Nothing under the namespace-local pid 1. */
		EXPECT_EQ(NULL, vm_find_death(self->ds, 1));
		/* The live pid 1 keeps its tracker. */
		EXPECT_EQ(1, vm_count_owned(&map, 1, ticks[1], 0,
					    ACTRACK_TYPE_THREAD));
		if (ticks[0] == ticks[1])
			same_tick++;
		kill(host[1], SIGKILL);
		ASSERT_NE(NULL, vm_wait_death(self->m, self->ds,
					      (uint32_t)host[1], 10000));
		EXPECT_EQ(0, wait_child(mid[0]));
		EXPECT_EQ(0, wait_child(mid[1]));
		vm_map_close(&map);
	}
	TH_LOG("%d rounds, %d with both pid 1s in one tick", rounds,
	       same_tick);
}

/*
 * A subscriber in its own pid and network namespace hears the deaths it
 * can see, under its own pids, and not the host's.
 */
TEST_F_TIMEOUT(trust, subscriber_in_own_namespaces, 60)
{
	struct vm_victim_cfg cfg = { .threads = 0, .uid = -1 };
	int ready[2], sync[2];
	struct vm_victim v;
	pid_t mid;
	char c;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(sync));
	mid = fork();
	ASSERT_LE(0, mid);
	if (mid == 0) {
		pid_t inner;

		if (unshare(CLONE_NEWPID | CLONE_NEWNET))
			_exit(40);
		inner = fork();
		if (inner == 0) {
			struct actrack_monitor *m;
			struct vm_deaths *ds = calloc(1, sizeof(*ds));
			struct vm_victim_cfg in_cfg = { .uid = -1 };
			struct vm_victim iv;
			struct actrack_death *d;

			if (!ds || actrack_monitor_open(0, &m))
				_exit(41);
			if (write(ready[1], "r", 1) != 1)
				_exit(42);
			/* The host's victim dies now: not ours to see. */
			if (read(sync[0], &c, 1) != 1)
				_exit(43);
			actrack_monitor_dispatch(m, 1000, vm_keep_death, ds);
			if (ds->nr)
				_exit(44);
			/* Our own victim: pid 2 here. */
			if (vm_victim_start(&in_cfg, &iv) || iv.pid != 2)
				_exit(45);
			vm_victim_kill(&iv, SIGKILL);
			d = vm_wait_death(m, ds, 2, 10000);
			if (!d)
				_exit(46);
			if (ds->nr != 1)
				_exit(47);
			_exit(0);
		}
		_exit(inner < 0 ? 48 : wait_child(inner));
	}
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 20000));
	ASSERT_EQ(0, vm_victim_start(&cfg, &v));
	vm_victim_kill(&v, SIGKILL);
	ASSERT_NE(NULL, vm_wait_death(self->m, self->ds, v.pid, 10000));
	ASSERT_EQ(1, write(sync[1], "k", 1));
	EXPECT_EQ(0, wait_child(mid)) TH_LOG("namespaced subscriber failed");
	/* The host saw the namespaced victim too, under its host pid. */
	actrack_monitor_dispatch(self->m, 1000, vm_keep_death, self->ds);
	EXPECT_EQ(NULL, vm_find_death(self->ds, 2));
	EXPECT_EQ(2, self->ds->nr);
}

/* A reader never costs anyone an arena. */
TEST_F(trust, reader_creates_no_arena)
{
	struct actrack_kstats st0, st1;
	pid_t pid;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, actrack_monitor_stats(self->m, &st0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct actrack_layout lay;
		int fd;

		if (setgid(4242) || setuid(4242))
			_exit(50);
		fd = open(ACTRACK_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(51);
		if (ioctl(fd, ACTRACK_IOC_LAYOUT, &lay) != -1 ||
		    errno != ENOENT)
			_exit(52);
		if (mmap(NULL, 65536, PROT_READ, MAP_SHARED, fd, 0) !=
		    MAP_FAILED || errno != ENOENT)
			_exit(53);
		_exit(0);
	}
	EXPECT_EQ(0, wait_child(pid));
	ASSERT_EQ(0, actrack_monitor_stats(self->m, &st1));
	EXPECT_EQ(st0.arenas, st1.arenas);
}

/*
 * A user namespace owned by an unprivileged user, with 65536 subordinate
 * uids: its uids together get max_arenas_per_user (8) arenas and 64
 * subscriptions, and everyone else still gets theirs.
 */
static int in_userns(int (*fn)(void *), void *arg)
{
	int go[2], done[2];
	pid_t pid;
	char c;
	int ret;

	if (pipe(go) || pipe(done))
		return -1;
	pid = fork();
	if (pid == 0) {
		if (setgid(NS_OWNER) || setuid(NS_OWNER))
			_exit(60);
		if (unshare(CLONE_NEWUSER))
			_exit(61);
		if (write(done[1], "u", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(62);
		if (setgid(0) || setuid(0))
			_exit(63);
		_exit(fn(arg));
	}
	if (pid < 0 || read(done[0], &c, 1) != 1)
		return -1;
	{
		char path[64], map[64];
		int fd;

		snprintf(map, sizeof(map), "0 %d 65536\n", NS_BASE);
		snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
		fd = open(path, O_WRONLY);
		ret = fd < 0 || write(fd, map, strlen(map)) < 0;
		close(fd);
		snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
		fd = open(path, O_WRONLY);
		ret |= fd < 0 || write(fd, map, strlen(map)) < 0;
		close(fd);
	}
	if (ret || write(go[1], "g", 1) != 1) {
		kill(pid, SIGKILL);
		wait_child(pid);
		return -1;
	}
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	return wait_child(pid);
}

/*
 * Inside: inner uids 1..10 each try to make their arena and keep it in
 * use (mapped) until the test closes the release pipe.  results[0..9]:
 * errno per uid (shared mapping); fds [16]/[17] "ready" pipe, [18]/[19]
 * "release" pipe.
 */
static int make_arenas(void *arg)
{
	int *results = arg;
	int i;

	for (i = 0; i < 10; i++) {
		pid_t pid = fork();
		char c;

		if (pid == 0) {
			struct actrack_layout lay;
			int fd;

			close(results[19]);
			if (setgid(1 + i) || setuid(1 + i))
				_exit(70);
			fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				_exit(71);
			results[i] = ioctl(fd, ACTRACK_IOC_LAYOUT, &lay) ?
				     errno : 0;
			if (!results[i] &&
			    mmap(NULL, lay.arena_size, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0) == MAP_FAILED)
				results[i] = errno;
			if (write(results[17], "r", 1) != 1)
				_exit(72);
			if (read(results[18], &c, 1) < 0)
				_exit(73);
			_exit(0);
		}
		if (pid < 0 || read(results[16], &c, 1) != 1)
			return 74;
	}
	return 0;
}

TEST_F(trust, user_namespace_counts_as_its_owner_for_arenas)
{
	int *results, ok = 0, nospc = 0, i, rdy[2], rel[2];
	struct vm_map map;

	VM_SETUP_SKIPPED();
	results = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, results);
	memset(results, 0xff, 4096);
	ASSERT_EQ(0, pipe(rdy));
	ASSERT_EQ(0, pipe(rel));
	results[16] = rdy[0];
	results[17] = rdy[1];
	results[18] = rel[0];
	results[19] = rel[1];
	ASSERT_EQ(0, in_userns(make_arenas, results));
	for (i = 0; i < 10; i++) {
		if (results[i] == 0)
			ok++;
		else if (results[i] == ENOSPC)
			nospc++;
		else
			TH_LOG("inner uid %d: errno %d", 1 + i, results[i]);
	}
	EXPECT_EQ(8, ok);
	EXPECT_EQ(2, nospc);
	/* Another user is not locked out. */
	ASSERT_EQ(0, vm_map_open(&map, -1, true));
	vm_map_close(&map);
	close(rel[1]);
	close(rel[0]);
	close(rdy[0]);
	close(rdy[1]);
	munmap(results, 4096);
}

/*
 * Inside: 8 inner uids open 9 subscriptions each (72 > 64).  results[0]:
 * opened, [1]: refused with ENOSPC; fds: [2]/[3] "holding" pipe, [4]/[5]
 * "release" pipe (EOF when the test closes its end).
 */
static int make_subs(void *arg)
{
	int *results = arg;
	int i;

	results[0] = results[1] = 0;
	for (i = 0; i < 8; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			struct actrack_monitor *m;
			int j, r;

			if (setgid(1 + i) || setuid(1 + i))
				_exit(80);
			for (j = 0; j < 9; j++) {
				r = actrack_monitor_open(0, &m);
				if (!r)
					__atomic_fetch_add(&results[0], 1,
							   __ATOMIC_SEQ_CST);
				else if (r == -ENOSPC)
					__atomic_fetch_add(&results[1], 1,
							   __ATOMIC_SEQ_CST);
			}
			/* Hold them while the next uid tries. */
			close(results[5]);
			if (write(results[2], "h", 1) != 1)
				_exit(81);
			{
				char c;

				if (read(results[4], &c, 1) < 0)
					_exit(84);
			}
			_exit(0);
		}
		if (pid < 0)
			return 82;
		{
			char c;

			if (read(results[3], &c, 1) != 1)
				return 83;
		}
	}
	return 0;
}

TEST_F(trust, user_namespace_counts_as_its_owner_for_subscriptions)
{
	struct actrack_monitor *m;
	int *results, p[2], rel[2];

	VM_SETUP_SKIPPED();
	results = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, results);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(rel));
	results[2] = p[1];
	results[3] = p[0];
	results[4] = rel[0];
	results[5] = rel[1];
	ASSERT_EQ(0, in_userns(make_subs, results));
	EXPECT_EQ(64, results[0]);
	EXPECT_EQ(8, results[1]);
	/* Root is not locked out. */
	ASSERT_EQ(0, actrack_monitor_open(0, &m));
	actrack_monitor_close(m);
	/* EOF on the release pipe: the holders exit. */
	close(rel[1]);
	close(rel[0]);
	close(p[0]);
	close(p[1]);
	munmap(results, 4096);
}

/* The arena and the clock page are data: never executable. */
TEST_F(trust, mappings_are_never_executable)
{
	struct actrack_layout lay;
	void *p;
	int fd;

	VM_SETUP_SKIPPED();
	fd = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, ACTRACK_IOC_LAYOUT, &lay));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, lay.arena_size,
				   PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_SHARED, fd, 0));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, lay.clock_size,
				   PROT_READ | PROT_EXEC, MAP_SHARED, fd,
				   (off_t)lay.clock_offset));
	EXPECT_EQ(EPERM, errno);
	p = mmap(NULL, lay.arena_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, lay.arena_size, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	munmap(p, lay.arena_size);
	close(fd);
}

/*
 * An arena nobody attaches to or maps gives its memory back; its deaths
 * are still replayed, and the next process of the uid gets a fresh one.
 */
#define IDLE_UID	4343

static int idle_child(void)
{
	struct actrack_monitor *m = NULL;
	struct actrack_kstats st;
	struct vm_deaths *ds = calloc(1, sizeof(*ds));
	int fd, ret = 0;

	if (!ds || setgid(IDLE_UID) || setuid(IDLE_UID))
		return 100;
	if (actrack_monitor_open(0, &m) || actrack_monitor_stats(m, &st))
		return 101;
	/* Idle: nothing attached, no memory in use. */
	if (st.attached != 0 || st.bytes_used != 0 || st.arenas != 1)
		ret = 102;
	/* A reader's mapping is a fresh, empty arena: nothing was kept. */
	fd = open(ACTRACK_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		struct actrack_arena_header *h;

		h = mmap(NULL, 65536, PROT_READ, MAP_SHARED, fd, 0);
		if (h == MAP_FAILED ||
		    h->freeptr != ACTRACK_ARENA_HEADER_SIZE)
			ret = ret ? ret : 103;
		if (h != MAP_FAILED)
			munmap(h, 65536);
		close(fd);
	} else {
		ret = ret ? ret : 103;
	}
	/* The death is still there to replay. */
	if (actrack_monitor_recent(m, vm_keep_death, ds) != 1 || ds->nr != 1)
		ret = ret ? ret : 104;
	actrack_monitor_close(m);
	return ret;
}

TEST_F_TIMEOUT(trust, idle_arena_gives_memory_back, 60)
{
	struct vm_victim_cfg cfg = { .threads = 2, .uid = IDLE_UID };
	struct vm_victim v;
	pid_t pid;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, vm_victim_start(&cfg, &v));
	vm_victim_kill(&v, SIGKILL);
	ASSERT_NE(NULL, vm_wait_death(self->m, self->ds, v.pid, 10000));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(idle_child());
	EXPECT_EQ(0, wait_child(pid));
	/* A new process of the uid: a fresh, working arena. */
	ASSERT_EQ(0, vm_victim_start(&cfg, &v));
	vm_victim_kill(&v, SIGKILL);
	ASSERT_NE(NULL, vm_wait_death(self->m, self->ds, v.pid, 10000));
	EXPECT_EQ(3, vm_find_death(self->ds, v.pid)->process.nr_threads);
}

/* ---------------------------------------------------------------------- */
/* One uid's thread churn on a worst-case arena, another uid's latency    */
/* ---------------------------------------------------------------------- */

#define CHURN_SECONDS	10
#define BOUND_MS	5000

static void *churn_thread(void *arg)
{
	return arg;
}

/*
 * uid A: a self-linked block makes every walk of its arena the longest
 * one, then threads come and go until killed.  It attaches with the bare
 * ioctl and never registers a tracker (ACTRACK_IOC_THREAD), as a hostile
 * client would not: each batch of its thread exits then costs the
 * module a walk of the arena, the worst it can make of thread exits.
 */
static void churner(int ready)
{
	struct actrack_attach at = { 0 };
	struct actrack_arena_iter it;
	struct vm_map map;
	uint32_t ref, last = 0;

	if (setgid(CHURN_A) || setuid(CHURN_A))
		_exit(90);
	if (vm_map_open(&map, -1, true) ||
	    ioctl(map.fd, ACTRACK_IOC_ATTACH, &at))
		_exit(91);
	/* One block of its own at least, then the last one linked to itself. */
	if (!actrack_arena_alloc(&map.a, ACTRACK_TYPE_LOG, 64))
		_exit(92);
	actrack_arena_iter_init(&it, &map.a);
	while ((ref = actrack_arena_iter_next(&it, ACTRACK_TYPE_ANY, NULL)))
		last = ref;
	if (!last)
		_exit(92);
	((struct actrack_block *)((char *)map.a.base + last))->next = last;
	if (write(ready, "c", 1) != 1)
		_exit(93);
	for (;;) {
		pthread_t t;

		if (pthread_create(&t, NULL, churn_thread, NULL) == 0)
			pthread_join(t, NULL);
	}
}

static long slab_kb(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %ld kB", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/* Exec'd by the test as uid B: ATTACH after exec, timed. */
static int exec_attach_main(int fd)
{
	struct actrack_attach at = { 0 };
	uint64_t t0, us;
	int dev = open(ACTRACK_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (dev < 0)
		return 1;
	t0 = actrack_test_mono_ns();
	if (ioctl(dev, ACTRACK_IOC_ATTACH, &at))
		return 2;
	us = (actrack_test_mono_ns() - t0) / 1000;
	return write(fd, &us, sizeof(us)) == sizeof(us) ? 0 : 3;
}

TEST_F_TIMEOUT(trust, other_uids_thread_churn_does_not_delay_us, 120)
{
	struct vm_victim_cfg b_cfg = { .threads = 2, .uid = CHURN_B };
	uint64_t t0, report_ms = 0, attach_us = 0, end;
	long slab0, slab_max, s;
	int ready[2], p[2], rounds = 0;
	pid_t churn;

	VM_SETUP_SKIPPED();
	ASSERT_EQ(0, pipe(ready));
	slab0 = slab_kb();
	churn = fork();
	ASSERT_LE(0, churn);
	if (churn == 0)
		churner(ready[1]);
	ASSERT_EQ(0, vm_read_n(ready[0], 1, 20000));
	slab_max = slab0;
	end = actrack_test_mono_ns() + CHURN_SECONDS * 1000000000ULL;
	while (actrack_test_mono_ns() < end) {
		struct vm_victim v;
		struct actrack_death *d;
		uint64_t us = 0;
		pid_t e;

		/* B's death report. */
		ASSERT_EQ(0, vm_victim_start(&b_cfg, &v));
		t0 = actrack_test_mono_ns();
		kill(v.pid, SIGKILL);
		d = vm_wait_death(self->m, self->ds, (uint32_t)v.pid, 30000);
		ASSERT_NE(NULL, d);
		s = (long)((actrack_test_mono_ns() - t0) / 1000000);
		if ((uint64_t)s > report_ms)
			report_ms = (uint64_t)s;
		waitpid(v.pid, NULL, 0);
		close(v.go_fd);

		/* B attaches, execs, and attaches again. */
		ASSERT_EQ(0, pipe(p));
		e = fork();
		ASSERT_LE(0, e);
		if (e == 0) {
			struct actrack_opts o = { .sz = sizeof(o) };
			char fdarg[16];

			if (setgid(CHURN_B) || setuid(CHURN_B) ||
			    actrack_init(&o))
				_exit(95);
			actrack_push_task(2);
			snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
			execl("/proc/self/exe", "vm_trust", "--exec-attach",
			      fdarg, (char *)NULL);
			_exit(96);
		}
		close(p[1]);
		ASSERT_EQ(sizeof(us), read(p[0], &us, sizeof(us)));
		close(p[0]);
		ASSERT_EQ(0, wait_child(e));
		if (us > attach_us)
			attach_us = us;
		s = slab_kb();
		if (s > slab_max)
			slab_max = s;
		rounds++;
	}
	kill(churn, SIGKILL);
	waitpid(churn, NULL, 0);
	TH_LOG("%d rounds in %d s of churn: worst death report %llu ms, "
	       "worst attach after exec %llu us; slab %ld kB before, "
	       "%ld kB at most (+%ld kB)", rounds, CHURN_SECONDS,
	       (unsigned long long)report_ms, (unsigned long long)attach_us,
	       slab0, slab_max, slab_max - slab0);
	EXPECT_LT(report_ms, BOUND_MS);
	EXPECT_LT(attach_us, BOUND_MS * 1000ULL);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--exec-attach"))
		return exec_attach_main(atoi(argv[2]));
	return test_harness_run(argc, argv);
}
