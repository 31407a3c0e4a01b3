// SPDX-License-Identifier: MIT
/*
 * Per-process state in the arena: the phase (Chromium's process phases)
 * and a recycled ring of log messages.  Both may be written from any thread
 * of the process.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "internal.h"

#define LOG_ENTRIES	32

ACTRACK_API int actrack_set_phase(uint32_t phase)
{
	struct actrack_process *rec;
	int ret;

	if (phase > ACTRACK_PHASE_MAX)
		return -EINVAL;
	ret = __actrack_ensure_attached();
	if (ret)
		return ret;
	rec = __actrack_process_record();
	if (!rec)
		return -ENOENT;
	at_store_release(&rec->phase, phase);
	return 0;
}

/* The process's log ring, created on first use; racing creators agree on
 * one by CAS on the process record's reference. */
static struct actrack_log *log_ring(void)
{
	struct actrack_arena *a = __actrack_arena();
	struct actrack_process *rec = __actrack_process_record();
	struct actrack_log *log;
	uint32_t ref, cur, size, id;
	void *blk;

	if (!rec)
		return NULL;
	size = sizeof(*log) + LOG_ENTRIES * sizeof(struct actrack_log_entry);
	cur = at_load_acquire(&rec->log);
	if (!cur) {
		ref = __actrack_alloc_owned(a, ACTRACK_TYPE_LOG, size, 0, &blk);
		if (!ref)
			return NULL;
		log = blk;
		log->capacity = LOG_ENTRIES;
		id = __actrack_publish_owner(&log->owner, 0);
		cur = at_cas(&rec->log, 0, ref);
		if (cur) /* lost the race */
			actrack_arena_free_owned(a, ref, ACTRACK_TYPE_LOG, id);
		else
			cur = ref;
	}
	log = actrack_arena_get(a, cur, ACTRACK_TYPE_LOG, size);
	if (!log || log->capacity != LOG_ENTRIES)
		return NULL;
	return log;
}

ACTRACK_API int actrack_log(const char *fmt, ...)
{
	struct actrack_log_entry *e;
	struct actrack_log *log;
	char text[ACTRACK_LOG_TEXT_MAX];
	uint32_t n;
	va_list ap;
	int len, ret;

	if (!fmt)
		return -EINVAL;
	ret = __actrack_ensure_attached();
	if (ret)
		return ret;
	log = log_ring();
	if (!log)
		return -ENOSPC;
	va_start(ap, fmt);
	len = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (len < 0)
		return -EINVAL;
	if (len >= (int)sizeof(text))
		len = sizeof(text) - 1;

	/* Entry n lives in slot n % capacity; its seq is odd while written. */
	n = at_fetch_add(&log->head, 1);
	e = &log->entries[n % LOG_ENTRIES];
	/*
	 * Claim the entry, one writer at a time.  When the ring has gone all
	 * the way round while the previous writer of this entry is still at
	 * it (odd seq: preempted mid-message), or a later lap has claimed it
	 * already, two writers would interleave their stores and the last
	 * one to finish would mark the mix complete: drop this message
	 * instead.  Seqs compare modulo 2^32, as the reader's do.
	 */
	for (;;) {
		uint32_t s = at_load(&e->seq);

		if ((s & 1) || (int32_t)(2 * n + 1 - s) <= 0)
			return -EBUSY;
		if (at_cas(&e->seq, s, 2 * n + 1) == s)
			break;
	}
	at_fence_release();
	/* Single atomic stores: the snapshot reads them inside the seq
	 * check (lib/snapshot.c), possibly while we write. */
	at_store(&e->tid, (uint32_t)syscall(SYS_gettid));
	at_store(&e->time_ns, __actrack_proc.map.clock ?
			      *__actrack_proc.map.clock : __actrack_coarse_ns());
	at_store(&e->len, (uint16_t)len);
	memset(text + len, 0, sizeof(text) - (size_t)len);
	for (size_t i = 0; i < sizeof(e->text); i++)
		at_store(&e->text[i], text[i]);
	at_store_release(&e->seq, 2 * n + 2);
	return 0;
}
