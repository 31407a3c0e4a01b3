// SPDX-License-Identifier: MIT
/*
 * User data writers: every setter's contract (values, in-place rewrite,
 * exact errnos) and concurrent writers of the process and global sets from
 * many threads and processes, read back through the seq-checked reader.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "internal.h"
#include "test_harness.h"

static void attach_fresh(struct __test_metadata *_metadata, const char *tag)
{
	static char path[256];
	struct actrack_opts o = {
		.sz = sizeof(o), .arena_path = path,
		.flags = ACTRACK_INIT_NO_MODULE | ACTRACK_INIT_NO_MODULES,
	};

	snprintf(path, sizeof(path), "%s/actrack-test-%s-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag,
		 (int)getpid());
	unlink(path);
	/* In the VM (ACTRACK_IN_VM=1 and actrack.ko loaded) the same tests
	 * run against the kernel's arena. */
	if (getenv("ACTRACK_IN_VM") && !access(ACTRACK_DEVICE_PATH, F_OK)) {
		o.arena_path = NULL;
		o.flags &= ~ACTRACK_INIT_NO_MODULE;
		unsetenv(ACTRACK_ENV_ARENA);
		ASSERT_EQ(0, actrack_init(&o));
		ASSERT_EQ((int)ACTRACK_BACKEND_MODULE, (int)actrack_backend());
		return;
	}
	ASSERT_EQ(0, actrack_init(&o));
}

static uint32_t ref_of(struct actrack_user_data *ud)
{
	return (uint32_t)((char *)ud - (char *)__actrack_arena()->base -
			  sizeof(struct actrack_block));
}

static const struct actrack_value *find(const struct actrack_value *v,
					uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

TEST(all_eight_types_round_trip)
{
	static const char ref_text[] = "referenced";
	static const uint8_t blob[5] = { 1, 2, 3, 0, 255 };
	struct actrack_user_data *ud;
	const struct actrack_value *v;
	struct actrack_value *vals;
	uint32_t n;

	attach_fresh(_metadata, "types");
	ud = actrack_process_data();
	ASSERT_NE(NULL, ud);
	ASSERT_EQ(0, actrack_set_raw(ud, "raw", blob, sizeof(blob)));
	ASSERT_EQ(0, actrack_set_string(ud, "str", "hello"));
	ASSERT_EQ(0, actrack_set_bool(ud, "flag", true));
	ASSERT_EQ(0, actrack_set_char(ud, "ch", 'Z'));
	ASSERT_EQ(0, actrack_set_int(ud, "neg", -1234567890123LL));
	ASSERT_EQ(0, actrack_set_uint(ud, "big", UINT64_MAX));
	ASSERT_EQ(0, actrack_set_raw_ref(ud, "rref", blob, sizeof(blob)));
	ASSERT_EQ(0, actrack_set_string_ref(ud, "sref", ref_text));
	ASSERT_EQ(0, __actrack_read_values(__actrack_arena(), ref_of(ud),
					   &vals, &n));
	ASSERT_EQ(8u, n);
	v = find(vals, n, "raw");
	ASSERT_NE(NULL, v);
	EXPECT_EQ(ACTRACK_VALUE_RAW, v->type);
	EXPECT_EQ(5u, v->size);
	EXPECT_EQ(0, memcmp(blob, v->bytes, 5));
	v = find(vals, n, "str");
	ASSERT_NE(NULL, v);
	EXPECT_EQ(ACTRACK_VALUE_STRING, v->type);
	EXPECT_STREQ("hello", (char *)v->bytes);
	v = find(vals, n, "flag");
	ASSERT_NE(NULL, v);
	EXPECT_EQ(ACTRACK_VALUE_BOOL, v->type);
	EXPECT_TRUE(v->b);
	v = find(vals, n, "ch");
	ASSERT_NE(NULL, v);
	EXPECT_EQ('Z', v->c);
	v = find(vals, n, "neg");
	ASSERT_NE(NULL, v);
	EXPECT_EQ(ACTRACK_VALUE_SIGNED, v->type);
	EXPECT_EQ(-1234567890123LL, v->s);
	v = find(vals, n, "big");
	ASSERT_NE(NULL, v);
	EXPECT_EQ(UINT64_MAX, v->u);
	v = find(vals, n, "rref");
	ASSERT_NE(NULL, v);
	EXPECT_EQ(ACTRACK_VALUE_RAW_REF, v->type);
	EXPECT_EQ((uint64_t)(uintptr_t)blob, v->ref.address);
	EXPECT_EQ(5u, v->ref.size);
	v = find(vals, n, "sref");
	ASSERT_NE(NULL, v);
	EXPECT_EQ(ACTRACK_VALUE_STRING_REF, v->type);
	EXPECT_EQ((uint64_t)(uintptr_t)ref_text, v->ref.address);
	EXPECT_EQ(strlen(ref_text), v->ref.size);
	__actrack_free_values(vals, n);
}

TEST(raw_ref_refuses_null_like_raw)
{
	struct actrack_user_data *ud;
	static const char buf[4];

	attach_fresh(_metadata, "rawref");
	ud = actrack_process_data();
	ASSERT_NE(NULL, ud);
	EXPECT_EQ(-EINVAL, actrack_set_raw(ud, "raw", NULL, 4));
	EXPECT_EQ(-EINVAL, actrack_set_raw_ref(ud, "ref", NULL, 4));
	/* nothing to point at and no size: an empty value, as for raw */
	EXPECT_EQ(0, actrack_set_raw(ud, "raw0", NULL, 0));
	EXPECT_EQ(0, actrack_set_raw_ref(ud, "ref0", NULL, 0));
	EXPECT_EQ(0, actrack_set_raw_ref(ud, "ref", buf, sizeof(buf)));
}

TEST(rewrite_in_place_and_errnos)
{
	struct actrack_user_data *ud;
	struct actrack_value *vals;
	char big[600];
	uint32_t n;

	attach_fresh(_metadata, "rewrite");
	ud = actrack_process_data();
	ASSERT_NE(NULL, ud);
	ASSERT_EQ(0, actrack_set_int(ud, "count", 1));
	ASSERT_EQ(0, actrack_set_int(ud, "count", 2));
	/* Same name, other type. */
	EXPECT_EQ(-EEXIST, actrack_set_uint(ud, "count", 3));
	/* Strings get room to grow to 32 bytes, not beyond. */
	ASSERT_EQ(0, actrack_set_string(ud, "state", "idle"));
	ASSERT_EQ(0, actrack_set_string(ud, "state",
					"running-a-much-longer-step-now"));
	EXPECT_EQ(-E2BIG, actrack_set_string(ud, "state",
		"this value is far too long for the room the field has"));
	EXPECT_EQ(-EINVAL, actrack_set_int(ud, "", 1));
	EXPECT_EQ(-EINVAL, actrack_set_int(NULL, "x", 1));
	EXPECT_EQ(-EINVAL, actrack_set_string(ud, "x", NULL));
	EXPECT_EQ(-EINVAL, actrack_set_raw(ud, "x", NULL, 4));
	memset(big, 'n', 64);
	big[64] = 0;
	EXPECT_EQ(-EINVAL, actrack_set_int(ud, big, 1));	/* name > 63 */
	big[63] = 0;
	EXPECT_EQ(0, actrack_set_int(ud, big, 1));		/* name == 63 */
	ASSERT_EQ(0, __actrack_read_values(__actrack_arena(), ref_of(ud),
					   &vals, &n));
	ASSERT_EQ(3u, n);
	EXPECT_EQ(2, find(vals, n, "count")->s);
	EXPECT_STREQ("running-a-much-longer-step-now",
		     (char *)find(vals, n, "state")->bytes);
	__actrack_free_values(vals, n);
}

TEST(full_set_reports_enospc)
{
	struct actrack_user_data *ud;
	char name[32], blob[200] = { 0 };
	int i, ret = 0;

	attach_fresh(_metadata, "full");
	ud = actrack_process_data();
	ASSERT_NE(NULL, ud);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "k%d", i);
		ret = actrack_set_raw(ud, name, blob, sizeof(blob));
		if (ret)
			break;
	}
	EXPECT_EQ(-ENOSPC, ret);
	/* 4 KiB of room / (8 + 8 + 200) bytes per field */
	EXPECT_EQ(4096 / 216, i);
}

TEST(activity_data_is_emptied_for_the_next_activity)
{
	struct actrack_user_data *ud, *ud2;
	struct actrack_value *vals;
	uint32_t tok, n;

	attach_fresh(_metadata, "activity");
	tok = actrack_push_task(1);
	ud = actrack_activity_data(tok);
	ASSERT_NE(NULL, ud);
	EXPECT_EQ(ud, actrack_activity_data(tok));
	EXPECT_EQ(0, actrack_set_uint(ud, "bytes", 42));
	EXPECT_EQ(ref_of(ud), ACTRACK_THREAD_SLOTS(actrack__tls.tracker)[0]
				      .user_data);
	actrack_pop(tok);
	EXPECT_EQ(NULL, actrack_activity_data(tok));	/* not on the stack */
	tok = actrack_push_task(2);
	ud2 = actrack_activity_data(tok);
	EXPECT_EQ(ud, ud2);				/* block reused... */
	ASSERT_EQ(0, __actrack_read_values(__actrack_arena(), ref_of(ud2),
					   &vals, &n));
	EXPECT_EQ(0u, n);				/* ...emptied */
	__actrack_free_values(vals, n);
	actrack_pop(tok);
	EXPECT_EQ(NULL, actrack_activity_data(0));
}

struct writer_arg {
	struct actrack_user_data *ud;
	int id;
};

static void *writer(void *p)
{
	struct writer_arg *w = p;
	char name[32];

	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "t%d", w->id);
		if (actrack_set_int(w->ud, name, i))
			return (void *)1;
		if (actrack_set_int(w->ud, "shared", w->id))
			return (void *)1;
	}
	return NULL;
}

TEST(process_data_from_many_threads)
{
	struct writer_arg args[8];
	pthread_t th[8];
	struct actrack_value *vals;
	uint32_t n;
	void *res;

	attach_fresh(_metadata, "threads");
	for (int i = 0; i < 8; i++) {
		args[i] = (struct writer_arg){ actrack_process_data(), i };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, writer, &args[i]));
	}
	for (int i = 0; i < 8; i++) {
		ASSERT_EQ(0, pthread_join(th[i], &res));
		EXPECT_EQ(NULL, res);
	}
	ASSERT_EQ(0, __actrack_read_values(__actrack_arena(),
					   ref_of(actrack_process_data()),
					   &vals, &n));
	/* Nine names, each exactly once; every thread's last value. */
	ASSERT_EQ(9u, n);
	for (int i = 0; i < 8; i++) {
		char name[32];

		snprintf(name, sizeof(name), "t%d", i);
		ASSERT_NE(NULL, find(vals, n, name));
		EXPECT_EQ(1999, find(vals, n, name)->s);
	}
	__actrack_free_values(vals, n);
}

TEST(global_data_shared_across_processes)
{
	struct actrack_value *vals;
	pid_t pids[4];
	uint32_t n;
	int status;

	attach_fresh(_metadata, "global");
	ASSERT_NE(NULL, actrack_global_data());
	for (int i = 0; i < 4; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			struct writer_arg w = { actrack_global_data(), 10 + i };

			_exit(writer(&w) ? 1 : 0);
		}
	}
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_EQ(0, status);
	}
	ASSERT_EQ(0, __actrack_read_values(__actrack_arena(),
					   ref_of(actrack_global_data()),
					   &vals, &n));
	EXPECT_EQ(5u, n);
	for (int i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "t%d", 10 + i);
		ASSERT_NE(NULL, find(vals, n, name));
		EXPECT_EQ(1999, find(vals, n, name)->s);
	}
	/* Global data has no owner process: the collector never frees it. */
	EXPECT_EQ(0u, actrack_global_data()->owner.pid);
	__actrack_free_values(vals, n);
}

TEST_HARNESS_MAIN
