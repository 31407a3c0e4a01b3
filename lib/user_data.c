// SPDX-License-Identifier: MIT
/*
 * User data: typed name/value fields in an arena block (Chromium's
 * ActivityUserData), per activity, per process and global.
 *
 * Writers: a field is appended by filling name and value and then
 * release-storing its type (Chromium's publication rule), so a reader that
 * sees the type sees the whole field.  Every change to a block - append,
 * rewrite in place, reset - happens inside the block's seqcount, which
 * writers take with a CAS (even -> odd); that makes process data safe from
 * any thread and global data safe from any process of the uid, without a
 * lock outside the arena.  Readers copy the fields between two equal even
 * seq values.
 *
 * Index: setting a field first has to find it.  Process and global blocks
 * are long-lived and hot, so names are indexed in a hash table private to
 * this library: fixed buckets, entries only ever prepended by CAS and never
 * removed, keyed by the block's data_id as well, so an entry never outlives
 * its block's identity.  Readers need no lock and no RCU: nothing they can
 * reach is ever freed.  (An earlier version used liburcu-bp's cds_lfht and
 * had to call urcu_bp_before_fork() from pthread_atfork: a host program of
 * the same flavour that follows liburcu's fork protocol then took the
 * grace-period lock twice and deadlocked in fork().  A library must not
 * share an RCU domain with its host; this index needs none.)
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define FIELD_HDR	((uint32_t)sizeof(struct actrack_field))
#define LOCK_SPINS	100000
#define READ_RETRIES	16
#define STRING_MIN_CAPACITY 32

static uint32_t align8(uint32_t v)
{
	return (v + ACTRACK_FIELD_ALIGN - 1) & ~(ACTRACK_FIELD_ALIGN - 1);
}

static uint8_t *fields_of(struct actrack_user_data *ud)
{
	return (uint8_t *)(ud + 1);
}

/* ---- the name index ------------------------------------------------- */

#define INDEX_BUCKETS	1024	/* chains stay short for a few hundred names */
#define INDEX_MAX	8192	/* then new names are found by scanning */

struct index_entry {
	struct index_entry *next;	/* immutable once published */
	uint32_t data_id;
	uint32_t ref;
	uint32_t offset;
	char name[ACTRACK_FIELD_NAME_MAX + 1];
};

static struct index_entry *index_buckets[INDEX_BUCKETS];
static uint32_t index_entries;

/* FNV-1a over the key. */
static uint32_t index_hash(uint32_t data_id, uint32_t ref, const char *name)
{
	uint64_t h = 1469598103934665603ULL;

	h = (h ^ data_id) * 1099511628211ULL;
	h = (h ^ ref) * 1099511628211ULL;
	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 1099511628211ULL;
	return (uint32_t)(h ^ (h >> 32)) % INDEX_BUCKETS;
}

/* Return the indexed offset or -1.  Lock-free; any thread. */
static long index_lookup(uint32_t data_id, uint32_t ref, const char *name)
{
	struct index_entry *e;

	/* Acquire pairs with the release of the CAS that published e. */
	e = __atomic_load_n(&index_buckets[index_hash(data_id, ref, name)],
			    __ATOMIC_ACQUIRE);
	for (; e; e = e->next) {
		if (e->data_id == data_id && e->ref == ref &&
		    !strcmp(e->name, name))
			return e->offset;
	}
	return -1;
}

/*
 * Callers hold the block's seqcount, so one key is never added twice at
 * once; different keys race only on the bucket head, by CAS.
 */
static void index_add(uint32_t data_id, uint32_t ref, const char *name,
		      uint32_t offset)
{
	struct index_entry *e, *head, **bucket;

	if (__atomic_fetch_add(&index_entries, 1, __ATOMIC_RELAXED) >=
	    INDEX_MAX)
		return;		/* the index is only a shortcut */
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->data_id = data_id;
	e->ref = ref;
	e->offset = offset;
	strcpy(e->name, name);
	bucket = &index_buckets[index_hash(data_id, ref, name)];
	head = __atomic_load_n(bucket, __ATOMIC_RELAXED);
	do {
		e->next = head;
	} while (!__atomic_compare_exchange_n(bucket, &head, e, true,
					      __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

/* ---- block handling -------------------------------------------------- */

static uint32_t ref_of(struct actrack_user_data *ud)
{
	return (uint32_t)((char *)ud - (char *)__actrack_arena()->base -
			  sizeof(struct actrack_block));
}

/* Take the block's seqcount for writing; bounded, -EBUSY if a writer
 * (perhaps a dead process) holds it. */
static int ud_lock(struct actrack_user_data *ud, uint32_t *seq)
{
	for (int i = 0; i < LOCK_SPINS; i++) {
		uint32_t s = at_load(&ud->seq);

		if (!(s & 1) && at_cas(&ud->seq, s, s + 1) == s) {
			*seq = s + 1;
			return 0;
		}
		if (i > 64)
			sched_yield();
	}
	return -EBUSY;
}

static void ud_unlock(struct actrack_user_data *ud, uint32_t seq)
{
	at_store_release(&ud->seq, seq + 1);
}

/* Bytes of fields in use, validated against the block. */
static uint32_t ud_capacity(struct actrack_user_data *ud)
{
	uint32_t cap = at_load(&ud->capacity);
	uint32_t room = actrack_arena_payload_size(__actrack_arena(),
						   ref_of(ud));

	if (room < sizeof(*ud))
		return 0;
	room -= sizeof(*ud);
	return cap < room ? cap : room;
}

uint32_t __actrack_user_data_new(uint32_t tid, uint32_t capacity,
				 struct actrack_user_data **udp, uint32_t *id)
{
	struct actrack_arena *a = __actrack_arena();
	struct actrack_user_data *ud;
	uint32_t ref;
	void *blk;

	*udp = NULL;
	ref = __actrack_alloc_owned(a, ACTRACK_TYPE_USER_DATA,
				    sizeof(*ud) + capacity, tid, &blk);
	if (!ref)
		return 0;
	ud = blk;
	ud->capacity = actrack_arena_payload_size(a, ref) - sizeof(*ud);
	*id = __actrack_publish_owner(&ud->owner, tid);
	*udp = ud;
	return ref;
}

void __actrack_user_data_reset(struct actrack_user_data *ud)
{
	uint32_t seq;

	if (ud_lock(ud, &seq))
		return;
	memset(fields_of(ud), 0, ud_capacity(ud));
	at_store(&ud->used, 0);
	ud_unlock(ud, seq);
}

/* Find @name by scanning; return its offset or -1. */
static long ud_scan(struct actrack_user_data *ud, const char *name,
		    size_t name_size)
{
	uint8_t *base = fields_of(ud);
	uint32_t used = at_load(&ud->used), cap = ud_capacity(ud);

	if (used > cap)
		used = cap;
	for (uint32_t off = 0; off + FIELD_HDR <= used;) {
		struct actrack_field *f = (struct actrack_field *)(base + off);
		uint32_t rs = f->record_size;

		if (!rs || rs % ACTRACK_FIELD_ALIGN || off + rs > used)
			return -1;
		if (f->name_size == name_size &&
		    FIELD_HDR + name_size <= rs &&
		    !memcmp(base + off + FIELD_HDR, name, name_size))
			return off;
		off += rs;
	}
	return -1;
}

static bool ud_indexed(struct actrack_user_data *ud)
{
	return ud->owner.tid == 0;	/* process and global data */
}

static int ud_set(struct actrack_user_data *ud, const char *name,
		  uint8_t type, const void *value, size_t size)
{
	size_t name_size;
	uint32_t seq, cap, used, voff, rs;
	uint8_t *base;
	struct actrack_field *f;
	long off = -1;
	int ret;

	if (!ud || !name || (!value && size))
		return -EINVAL;
	name_size = strlen(name);
	if (!name_size || name_size > ACTRACK_FIELD_NAME_MAX)
		return -EINVAL;
	if (size > UINT16_MAX)
		return -E2BIG;
	ret = ud_lock(ud, &seq);
	if (ret)
		return ret;
	base = fields_of(ud);
	cap = ud_capacity(ud);
	if (ud_indexed(ud))
		off = index_lookup(ud->owner.data_id, ref_of(ud), name);
	if (off < 0 || off + FIELD_HDR > cap)
		off = ud_scan(ud, name, name_size);
	if (off >= 0) {
		/* Rewrite in place: same type, and the value must fit. */
		f = (struct actrack_field *)(base + off);
		voff = align8(FIELD_HDR + (uint32_t)name_size);
		ret = -EEXIST;
		if (f->type != type)
			goto out;
		ret = -E2BIG;
		if (voff + size > f->record_size)
			goto out;
		if (size)
			memcpy(base + off + voff, value, size);
		at_store_release(&f->value_size, (uint16_t)size);
		ret = 0;
		goto out;
	}
	/* Append a new field. */
	voff = align8(FIELD_HDR + (uint32_t)name_size);
	rs = voff + align8((uint32_t)size);
	if (type == ACTRACK_VALUE_STRING && rs < voff + STRING_MIN_CAPACITY)
		rs = voff + STRING_MIN_CAPACITY;
	used = at_load(&ud->used);
	ret = -ENOSPC;
	if (used > cap || rs > cap - used || rs > UINT16_MAX)
		goto out;
	f = (struct actrack_field *)(base + used);
	memset(f, 0, rs);
	f->name_size = (uint8_t)name_size;
	f->record_size = (uint16_t)rs;
	f->value_size = (uint16_t)size;
	memcpy(base + used + FIELD_HDR, name, name_size);
	if (size)	/* an empty value may come without a buffer */
		memcpy(base + used + voff, value, size);
	at_store_release(&f->type, type);
	at_store_release(&ud->used, used + rs);
	if (ud_indexed(ud))
		index_add(ud->owner.data_id, ref_of(ud), name, used);
	ret = 0;
out:
	ud_unlock(ud, seq);
	return ret;
}

ACTRACK_API int actrack_set_raw(struct actrack_user_data *ud, const char *name,
				const void *data, size_t size)
{
	return ud_set(ud, name, ACTRACK_VALUE_RAW, data, size);
}

ACTRACK_API int actrack_set_string(struct actrack_user_data *ud,
				   const char *name, const char *value)
{
	if (!value)
		return -EINVAL;
	return ud_set(ud, name, ACTRACK_VALUE_STRING, value, strlen(value));
}

ACTRACK_API int actrack_set_bool(struct actrack_user_data *ud,
				 const char *name, bool value)
{
	uint8_t v = value ? 1 : 0;

	return ud_set(ud, name, ACTRACK_VALUE_BOOL, &v, sizeof(v));
}

ACTRACK_API int actrack_set_char(struct actrack_user_data *ud,
				 const char *name, char value)
{
	return ud_set(ud, name, ACTRACK_VALUE_CHAR, &value, sizeof(value));
}

ACTRACK_API int actrack_set_int(struct actrack_user_data *ud, const char *name,
				int64_t value)
{
	return ud_set(ud, name, ACTRACK_VALUE_SIGNED, &value, sizeof(value));
}

ACTRACK_API int actrack_set_uint(struct actrack_user_data *ud,
				 const char *name, uint64_t value)
{
	return ud_set(ud, name, ACTRACK_VALUE_UNSIGNED, &value, sizeof(value));
}

static int set_ref(struct actrack_user_data *ud, const char *name,
		   uint8_t type, const void *data, size_t size)
{
	struct actrack_value_ref r = {
		.address = (uint64_t)(uintptr_t)data, .size = size,
	};

	return ud_set(ud, name, type, &r, sizeof(r));
}

ACTRACK_API int actrack_set_raw_ref(struct actrack_user_data *ud,
				    const char *name, const void *data,
				    size_t size)
{
	/* As actrack_set_raw(): no bytes to point at, no size. */
	if (!data && size)
		return -EINVAL;
	return set_ref(ud, name, ACTRACK_VALUE_RAW_REF, data, size);
}

ACTRACK_API int actrack_set_string_ref(struct actrack_user_data *ud,
				       const char *name, const char *value)
{
	if (!value)
		return -EINVAL;
	return set_ref(ud, name, ACTRACK_VALUE_STRING_REF, value,
		       strlen(value));
}

/* ---- process and global sets ---------------------------------------- */

#define PROCESS_DATA_CAPACITY	4096
#define GLOBAL_DATA_CAPACITY	8192

static struct actrack_user_data *process_data;

__actrack_fork_path void __actrack_user_data_forget(void)
{
	process_data = NULL;	/* the parent's; the child makes its own */
}
ACTRACK_FORK_HOOK(user_data_fork, .child = __actrack_user_data_forget)

ACTRACK_API struct actrack_user_data *actrack_process_data(void)
{
	struct actrack_process *rec;
	struct actrack_user_data *ud;
	uint32_t ref, id;

	if (__actrack_ensure_attached())
		return NULL;
	ud = __atomic_load_n(&process_data, __ATOMIC_ACQUIRE);
	if (ud)
		return ud;
	__actrack_lock();
	ud = process_data;
	rec = __actrack_process_record();
	if (!ud && rec) {
		ref = __actrack_user_data_new(0, PROCESS_DATA_CAPACITY, &ud,
					      &id);
		if (ud) {
			at_store_release(&rec->user_data, ref);
			__atomic_store_n(&process_data, ud, __ATOMIC_RELEASE);
		}
	}
	__actrack_unlock();
	return ud;
}

ACTRACK_API struct actrack_user_data *actrack_global_data(void)
{
	struct actrack_arena *a = __actrack_arena();
	struct actrack_arena_header *h;
	struct actrack_user_data *ud;
	uint32_t ref, cur, id;
	void *blk;

	if (__actrack_ensure_attached())
		return NULL;
	h = a->base;
	for (int tries = 0; tries < 2; tries++) {
		cur = at_load_acquire(&h->global_data);
		if (cur) {
			ud = actrack_arena_get(a, cur, ACTRACK_TYPE_USER_DATA,
					       sizeof(*ud));
			if (ud && ud->owner.pid == 0 && ud->owner.tid == 0)
				return ud;
			return NULL;	/* corrupt reference */
		}
		/* Global data is owned by nobody: pid 0 is never cleaned. */
		ref = actrack_arena_alloc_payload(a, ACTRACK_TYPE_USER_DATA,
				sizeof(*ud) + GLOBAL_DATA_CAPACITY, &blk);
		if (!ref)
			return NULL;
		ud = blk;
		ud->capacity = actrack_arena_payload_size(a, ref) -
			       sizeof(*ud);
		id = actrack_arena_new_data_id(a);
		at_store_release(&ud->owner.data_id, id);
		if (at_cas(&h->global_data, 0, ref) == 0)
			return ud;
		/* Another process won the race: use theirs. */
		actrack_arena_free_owned(a, ref, ACTRACK_TYPE_USER_DATA, id);
	}
	return NULL;
}

/* ---- reading (snapshots) --------------------------------------------- */

int __actrack_parse_fields(const uint8_t *buf, uint32_t used,
			   struct actrack_value **out, uint32_t *nr)
{
	struct actrack_value *v = NULL;
	uint32_t n = 0;

	for (uint32_t off = 0; off + FIELD_HDR <= used;) {
		const struct actrack_field *f =
			(const struct actrack_field *)(buf + off);
		uint32_t rs = f->record_size, voff, vs = f->value_size;
		struct actrack_value *val, *nv;

		if (f->type == 0)
			break;		/* not yet published */
		if (!rs || rs % ACTRACK_FIELD_ALIGN || rs > used - off ||
		    !f->name_size || f->name_size > ACTRACK_FIELD_NAME_MAX ||
		    f->type > ACTRACK_VALUE_MAX)
			goto corrupt;
		voff = align8(FIELD_HDR + f->name_size);
		if (voff > rs || vs > rs - voff)
			goto corrupt;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			goto nomem;
		v = nv;
		val = &v[n];
		memset(val, 0, sizeof(*val));
		memcpy(val->name, buf + off + FIELD_HDR, f->name_size);
		val->type = f->type;
		val->size = vs;
		switch (f->type) {
		case ACTRACK_VALUE_RAW:
		case ACTRACK_VALUE_STRING:
			val->bytes = malloc(vs + 1);
			if (!val->bytes)
				goto nomem;
			memcpy(val->bytes, buf + off + voff, vs);
			val->bytes[vs] = 0;
			break;
		case ACTRACK_VALUE_BOOL:
			if (vs != 1)
				goto corrupt;
			val->b = buf[off + voff] != 0;
			break;
		case ACTRACK_VALUE_CHAR:
			if (vs != 1)
				goto corrupt;
			val->c = (char)buf[off + voff];
			break;
		case ACTRACK_VALUE_SIGNED:
		case ACTRACK_VALUE_UNSIGNED:
			if (vs != 8)
				goto corrupt;
			memcpy(&val->u, buf + off + voff, 8);
			break;
		default: /* references */
			if (vs != sizeof(val->ref))
				goto corrupt;
			memcpy(&val->ref, buf + off + voff, sizeof(val->ref));
			break;
		}
		n++;
		off += rs;
	}
	*out = v;
	*nr = n;
	return 0;
corrupt:
	__actrack_free_values(v, n);
	return -EUCLEAN;
nomem:
	__actrack_free_values(v, n);
	return -ENOMEM;
}

int __actrack_read_values(struct actrack_arena *a, uint32_t ref,
			  struct actrack_value **out, uint32_t *nr)
{
	struct actrack_user_data *ud, hdr;
	uint32_t room, used, s1, s2;
	uint8_t *buf;
	int ret = -EAGAIN;

	*out = NULL;
	*nr = 0;
	ud = actrack_arena_get(a, ref, ACTRACK_TYPE_USER_DATA, sizeof(*ud));
	if (!ud)
		return -ENOENT;
	room = actrack_arena_payload_size(a, ref) - sizeof(*ud);
	buf = malloc(room ? room : 1);
	if (!buf)
		return -ENOMEM;
	for (int i = 0; i < READ_RETRIES; i++) {
		s1 = at_load_acquire(&ud->seq);
		if (s1 & 1)
			continue;
		memcpy(&hdr, ud, sizeof(hdr));
		used = hdr.used < room ? hdr.used : room;
		memcpy(buf, ud + 1, used);
		at_fence_acquire();
		s2 = at_load(&ud->seq);
		if (s1 != s2)
			continue;
		if (!hdr.owner.data_id) {
			ret = -ENOENT;
			break;
		}
		ret = __actrack_parse_fields(buf, used, out, nr);
		if (ret == -EUCLEAN)
			actrack_arena_set_corrupt(a);
		break;
	}
	free(buf);
	return ret;
}

void __actrack_free_values(struct actrack_value *v, uint32_t nr)
{
	if (!v)
		return;
	for (uint32_t i = 0; i < nr; i++)
		free(v[i].bytes);
	free(v);
}
