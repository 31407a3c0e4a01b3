// SPDX-License-Identifier: MIT
/*
 * The hand-built arena of the cli_* golden tests (cli_golden.h).
 */
#include "cli_golden.h"

struct actrack_activity golden_act(uint8_t type, uint64_t object, uint64_t info,
				   uint64_t ms, uint64_t origin)
{
	struct actrack_activity a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.object = object;
	a.info = info;
	a.time_ns = GOLDEN_AT(ms);
	a.origin = origin;
	return a;
}

int golden_build(struct build *b)
{
	static const uint8_t raw[3] = { 0xde, 0xad, 0x01 };
	static const uint8_t id1[4] = { 0x12, 0x34, 0xab, 0xcd };
	struct actrack_value_ref ref;
	struct actrack_activity act[8];
	uint32_t proc, ud, log, t;
	int64_t neg = -42;
	uint64_t u = 18446744073709551615ULL;
	uint8_t yes = 1;
	char c = 'q';

	if (build_init(b, 256 * 1024))
		return -ENOMEM;

	/* pid 100, first generation: the busy server. */
	proc = build_process(b, 100, 5000, ACTRACK_PHASE_MAIN_LOOP_STARTED, 1,
			     GOLDEN_AT(1500), "server\0--port\0" "8080\0", 19);
	ud = build_user_data(b, 100, 5000, 0, 1024);
	if (!proc || !ud)
		return -ENOSPC;
	build_process_rec(b, proc)->user_data = ud;
	build_field(b, ud, ACTRACK_VALUE_STRING, "motto", "say \"hi\"\n", 9);
	build_field(b, ud, ACTRACK_VALUE_RAW, "key", raw, sizeof(raw));
	build_field(b, ud, ACTRACK_VALUE_BOOL, "ready", &yes, 1);
	build_field(b, ud, ACTRACK_VALUE_CHAR, "grade", &c, 1);
	build_field(b, ud, ACTRACK_VALUE_SIGNED, "delta", &neg, 8);
	build_field(b, ud, ACTRACK_VALUE_UNSIGNED, "max", &u, 8);
	ref.address = 0x7f0000001000ULL;
	ref.size = 4096;
	build_field(b, ud, ACTRACK_VALUE_RAW_REF, "buffer", &ref, sizeof(ref));
	ref.address = 0x7f0000002000ULL;
	ref.size = 12;
	build_field(b, ud, ACTRACK_VALUE_STRING_REF, "label", &ref,
		    sizeof(ref));

	build_module(b, 100, 5000, 0x7f1000000000ULL, 0x1e1000, NULL, 0,
		     "/lib/libc.so.6");
	build_module(b, 100, 5000, 0x555555554000ULL, 0x5000, id1, 4,
		     "/usr/bin/server");

	/* A ring of 4 that saw 6 messages: the last 4 remain. */
	log = build_log(b, 100, 5000, 4);
	if (!log)
		return -ENOSPC;
	build_log_msg(b, log, 100, GOLDEN_AT(2000), "starting");
	build_log_msg(b, log, 100, GOLDEN_AT(2100), "listening");
	build_log_msg(b, log, 101, GOLDEN_AT(30000), "accepted 10.0.0.1");
	build_log_msg(b, log, 101, GOLDEN_AT(45250), "request \"GET /\"");
	build_log_msg(b, log, 100, GOLDEN_AT(50000), "tab\there");
	build_log_msg(b, log, 101, GOLDEN_AT(59999), "stuck?");

	/* Main thread: 6 deep, 4 stored. */
	act[0] = golden_act(ACTRACK_ACT_TASK_RUN, 17, 0, 10000,
			    0x555555555100ULL);
	act[1] = golden_act(ACTRACK_ACT_LOCK_ACQUIRE, 0x5000, 0, 48000,
			    0x555555555200ULL);
	act[2] = golden_act(ACTRACK_ACT_EVENT_WAIT, 0x6000, 0, 59000,
			    0x555555555300ULL);
	act[3] = golden_act(ACTRACK_ACT_THREAD_JOIN, 101, 0, 59990,
			    0x555555555400ULL);
	ud = build_user_data(b, 100, 5000, 100, 256);
	if (!ud)
		return -ENOSPC;
	build_field(b, ud, ACTRACK_VALUE_STRING, "step", "parse", 5);
	build_field(b, ud, ACTRACK_VALUE_UNSIGNED, "attempt", &u, 8);
	act[0].user_data = ud;
	if (!build_thread(b, 100, 5000, 100, "main", 4, 6, act))
		return -ENOSPC;

	/* A worker that crashed with three activities. */
	act[0] = golden_act(ACTRACK_ACT_PROCESS_WAIT, 200, 0, 20000,
			    0x555555555500ULL);
	act[1] = golden_act(ACTRACK_ACT_IO_WAIT, 3, 4096, 59500,
			    0x555555555600ULL);
	act[2] = golden_act(ACTRACK_ACT_GENERIC_ACTION(5), 77, 88, 59999,
			    0x555555555700ULL);
	t = build_thread(b, 100, 5000, 101, "worker\x01", 4, 3, act);
	if (!t)
		return -ENOSPC;
	build_thread_rec(b, t)->fatal_signo = SIGSEGV;
	build_thread_rec(b, t)->fatal_code = 1;
	build_thread_rec(b, t)->fatal_addr = 0x10;
	build_thread_rec(b, t)->fatal_pc = 0x555555555710ULL;

	/* pid 100 again, a later generation: pid reuse. */
	if (!build_process(b, 100, 9000, ACTRACK_PHASE_LAUNCHED, 1,
			   GOLDEN_AT(59000), "server\0", 7))
		return -ENOSPC;

	/* pid 200: a thread, but no process record. */
	if (!build_thread(b, 200, 7000, 200, "orphan", 4, 0, act))
		return -ENOSPC;

	/* pid 300 exited with a code and a lock held */
	proc = build_process(b, 300, 8000, ACTRACK_PHASE_EXITED_WITH_CODE, 100,
			     GOLDEN_AT(0), "helper\0", 7);
	act[0] = golden_act(ACTRACK_ACT_LOCK_HELD, 0xabc0, 0, 1000, 0x1000);
	if (!proc || !build_thread(b, 300, 8000, 301, "", 2, 1, act))
		return -ENOSPC;

	ud = build_user_data(b, 0, 0, 0, 256);
	if (!ud)
		return -ENOSPC;
	build_field(b, ud, ACTRACK_VALUE_STRING, "build", "1.2.3", 5);
	u = 4;
	build_field(b, ud, ACTRACK_VALUE_UNSIGNED, "shards", &u, 8);
	((struct actrack_arena_header *)b->a.base)->global_data = ud;
	return 0;
}
