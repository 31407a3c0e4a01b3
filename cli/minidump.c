// SPDX-License-Identifier: MIT
/*
 * A death report as a minidump (see minidump.h and docs/minidump.md).
 *
 * The format is fixed-layout and little-endian: a header, a directory of
 * streams, and the streams' data, each found by its offset in the file
 * (an "RVA").  Every field is written here by offset, byte by byte, so
 * that no compiler packing or host byte order can change the layout; the
 * offsets are those of the public definitions (Microsoft's minidumpapiset.h
 * for the core streams, Breakpad's minidump_format.h for the Linux ones,
 * Crashpad's minidump_extensions.h for the annotations).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "minidump.h"

#define MD_SIGNATURE		0x504d444dU	/* "MDMP" */
#define MD_VERSION		0xa793U
#define MD_HEADER_SIZE		32
#define MD_DIRENT_SIZE		12

/* Stream types. */
#define MD_THREAD_LIST		3
#define MD_MODULE_LIST		4
#define MD_MEMORY_LIST		5
#define MD_EXCEPTION		6
#define MD_SYSTEM_INFO		7
#define MD_LINUX_PROC_STATUS	0x47670004U	/* Breakpad */
#define MD_LINUX_CMD_LINE	0x47670006U
#define MD_LINUX_MAPS		0x47670009U
#define MD_CRASHPAD_INFO	0x43500001U	/* Crashpad */
#define MD_NR_STREAMS		9

#define MD_THREAD_SIZE		48
#define MD_MODULE_SIZE		108
#define MD_MEMDESC_SIZE		16
#define MD_SYSINFO_SIZE		56
#define MD_EXCEPTION_SIZE	168
#define MD_CRASHPAD_INFO_SIZE	52

#define MD_ARCH_AMD64		9
#define MD_OS_LINUX		0x8201U
#define MD_CV_ELF		0x4270454cU	/* "BpEL": Breakpad's ELF code id */

/* The x86-64 thread context (CONTEXT_AMD64). */
#define MD_CTX_SIZE		1232
#define MD_CTX_FLAGS		0x30
#define MD_CTX_MXCSR		0x34
#define MD_CTX_AMD64		0x00100000U
#define MD_CTX_CONTROL		0x1U		/* rsp, rip, segments */
#define MD_CTX_INTEGER		0x2U		/* the other registers */

/* Where each register of the report (DWARF order: rax, rdx, rcx, rbx, rsi,
 * rdi, rbp, rsp, r8-r15, rip) goes in the context. */
static const uint16_t ctx_offset[ACTRACK_STACK_NR_REGS] = {
	0x78, 0x88, 0x80, 0x90, 0xa8, 0xb0, 0xa0, 0x98,
	0xb8, 0xc0, 0xc8, 0xd0, 0xd8, 0xe0, 0xe8, 0xf0, 0xf8,
};

/* The file under construction.  Offsets are 32-bit in the format: a file
 * that would pass 4 GiB fails with -EFBIG instead. */
struct mbuf {
	uint8_t *p;
	size_t len, cap;
	int err;
};

/* @n zeroed bytes at an offset aligned to @align; their offset, 0 after
 * an error (offset 0 is the header, never a stream's). */
static uint32_t mb_take(struct mbuf *b, size_t n, size_t align)
{
	size_t at = (b->len + align - 1) & ~(align - 1);
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *p;

	if (b->err)
		return 0;
	if (n > UINT32_MAX || at > UINT32_MAX - n) {
		b->err = -EFBIG;
		return 0;
	}
	while (cap < at + n)
		cap *= 2;
	if (cap != b->cap) {
		p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return 0;
		}
		b->p = p;
		b->cap = cap;
	}
	memset(b->p + b->len, 0, at + n - b->len);
	b->len = at + n;
	return (uint32_t)at;
}

static void put(struct mbuf *b, uint32_t at, uint64_t v, int bytes)
{
	if (b->err)
		return;
	for (int i = 0; i < bytes; i++)
		b->p[at + i] = (uint8_t)(v >> (8 * i));
}

#define put16(b, at, v)	put(b, at, v, 2)
#define put32(b, at, v)	put(b, at, v, 4)
#define put64(b, at, v)	put(b, at, v, 8)

/* A location descriptor: size, then offset. */
static void put_loc(struct mbuf *b, uint32_t at, uint32_t size, uint32_t rva)
{
	put32(b, at, size);
	put32(b, at + 4, rva);
}

static uint32_t put_bytes(struct mbuf *b, const void *src, size_t n,
			  size_t align)
{
	uint32_t at = mb_take(b, n, align);

	if (!b->err && n)
		memcpy(b->p + at, src, n);
	return at;
}

/* The next code point of UTF-8 @s (advancing *@i); U+FFFD for a byte
 * that starts no valid sequence: a path is bytes, not text. */
static uint32_t utf8_next(const unsigned char *s, size_t n, size_t *i)
{
	unsigned char c = s[*i];
	int more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
	uint32_t cp = more ? c & (0x3f >> more) : c;

	(*i)++;
	if (c >= 0x80 && (!more || c >= 0xf8))
		return 0xfffd;
	for (; more; more--, (*i)++) {
		if (*i >= n || (s[*i] & 0xc0) != 0x80)
			return 0xfffd;
		cp = cp << 6 | (s[*i] & 0x3f);
	}
	return cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000) ? 0xfffd : cp;
}

/* MINIDUMP_STRING: byte length, UTF-16LE, a 16-bit NUL. */
static uint32_t put_utf16(struct mbuf *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), units = 0, i;
	uint32_t at, cp;

	for (i = 0; i < n;)
		units += utf8_next(u, n, &i) > 0xffff ? 2 : 1;
	at = mb_take(b, 4 + 2 * units + 2, 4);
	put32(b, at, 2 * units);
	for (i = 0, units = 0; i < n;) {
		cp = utf8_next(u, n, &i);
		if (cp > 0xffff) {
			cp -= 0x10000;
			put16(b, at + 4 + 2 * units++, 0xd800 | cp >> 10);
			cp = 0xdc00 | (cp & 0x3ff);
		}
		put16(b, at + 4 + 2 * units++, cp);
	}
	return at;
}

static const struct actrack_death_stack *
stack_of(const struct actrack_death *d, uint32_t tid)
{
	for (uint32_t i = 0; i < d->nr_stacks; i++)
		if (d->stacks[i].tid == tid)
			return &d->stacks[i];
	return NULL;
}

/* A thread's context: its registers at death if the report has them, else
 * only the architecture (readers then show the thread without a frame). */
static uint32_t put_context(struct mbuf *b, const struct actrack_death_stack *s)
{
	uint32_t at = mb_take(b, MD_CTX_SIZE, 16);

	put32(b, at + MD_CTX_MXCSR, 0x1f80);	/* the ABI's initial value */
	if (!s) {
		put32(b, at + MD_CTX_FLAGS, MD_CTX_AMD64);
		return at;
	}
	put32(b, at + MD_CTX_FLAGS,
	      MD_CTX_AMD64 | MD_CTX_CONTROL | MD_CTX_INTEGER);
	for (int r = 0; r < ACTRACK_STACK_NR_REGS; r++)
		put64(b, at + ctx_offset[r], s->regs[r]);
	return at;
}

struct md_thread {
	uint32_t tid;
	uint32_t ctx, stack;		/* offsets; stack 0: none */
	uint32_t stack_size;
	uint64_t sp;
};

/* The thread list, and each thread's context and stack bytes. */
static uint32_t put_threads(struct mbuf *b, const struct actrack_death *d,
			    struct md_thread *mt, uint32_t n)
{
	uint32_t at;

	for (uint32_t i = 0; i < n; i++) {
		const struct actrack_death_stack *s;

		mt[i].tid = d->process.threads[i].tid;
		s = stack_of(d, mt[i].tid);
		mt[i].ctx = put_context(b, s);
		if (s && s->size && s->bytes) {
			mt[i].stack = put_bytes(b, s->bytes, s->size, 16);
			mt[i].stack_size = s->size;
			mt[i].sp = s->sp;
		}
	}
	at = mb_take(b, 4 + (size_t)n * MD_THREAD_SIZE, 8);
	put32(b, at, n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t e = at + 4 + i * MD_THREAD_SIZE;

		put32(b, e, mt[i].tid);
		put64(b, e + 24, mt[i].sp);
		put_loc(b, e + 32, mt[i].stack_size, mt[i].stack);
		put_loc(b, e + 40, MD_CTX_SIZE, mt[i].ctx);
	}
	return at;
}

/* The stacks again, as memory ranges: readers look memory up there. */
static uint32_t put_memory(struct mbuf *b, const struct md_thread *mt,
			   uint32_t n, uint32_t *size)
{
	uint32_t nr = 0, at, e;

	for (uint32_t i = 0; i < n; i++)
		nr += mt[i].stack != 0;
	*size = 4 + nr * MD_MEMDESC_SIZE;
	at = mb_take(b, *size, 4);
	put32(b, at, nr);
	e = at + 4;
	for (uint32_t i = 0; i < n; i++) {
		if (!mt[i].stack)
			continue;
		put64(b, e, mt[i].sp);
		put_loc(b, e + 8, mt[i].stack_size, mt[i].stack);
		e += MD_MEMDESC_SIZE;
	}
	return at;
}

/* Each module: its load address, size, path, and GNU build id as a
 * Breakpad ELF code id (what symbol stores and lldb match on). */
static uint32_t put_modules(struct mbuf *b, const struct actrack_snap_process *p)
{
	uint32_t n = p->nr_modules, at, e, name, cv;

	at = mb_take(b, 4 + (size_t)n * MD_MODULE_SIZE, 8);
	put32(b, at, n);
	for (uint32_t i = 0; i < n; i++) {
		const struct actrack_snap_module *m = &p->modules[i];
		char path[sizeof(m->path) + 1];
		/* The first mapped page: the ELF header's address. */
		uint64_t base = (m->base + m->vaddr) & ~(uint64_t)4095;
		uint64_t size = m->base + m->vaddr + m->size - base;

		memcpy(path, m->path, sizeof(m->path));
		path[sizeof(m->path)] = '\0';
		name = put_utf16(b, path);
		cv = 0;
		if (m->build_id_size && m->build_id_size <= sizeof(m->build_id)) {
			cv = mb_take(b, 4 + m->build_id_size, 4);
			put32(b, cv, MD_CV_ELF);
			if (!b->err)
				memcpy(b->p + cv + 4, m->build_id,
				       m->build_id_size);
		}
		e = at + 4 + i * MD_MODULE_SIZE;
		put64(b, e, base);
		put32(b, e + 8, size > UINT32_MAX ? UINT32_MAX : size);
		put32(b, e + 20, name);
		if (cv)
			put_loc(b, e + 76, 4 + m->build_id_size, cv);
	}
	return at;
}

static uint32_t put_system(struct mbuf *b, const struct minidump_host *h)
{
	uint32_t at = mb_take(b, MD_SYSINFO_SIZE, 4);
	unsigned int major = 0, minor = 0, patch = 0;
	const char *rel = h->release ? h->release : "";

	sscanf(rel, "%u.%u.%u", &major, &minor, &patch);
	put16(b, at, MD_ARCH_AMD64);
	put(b, at + 6, h->nr_cpus > 255 ? 255 : h->nr_cpus, 1);
	put32(b, at + 8, major);
	put32(b, at + 12, minor);
	put32(b, at + 16, patch);
	put32(b, at + 20, MD_OS_LINUX);
	put32(b, at + 24, put_utf16(b, rel));
	return at;
}

/* The thread that took the fatal signal: the first with a fatal record,
 * else the main thread, else the first. */
static uint32_t fault_index(const struct actrack_death *d, uint32_t n)
{
	uint32_t main = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (d->process.threads[i].fatal_signo)
			return i;
		if (d->process.threads[i].tid == d->process.pid)
			main = i;
	}
	return main;
}

static uint32_t put_exception(struct mbuf *b, const struct actrack_death *d,
			      const struct md_thread *mt, uint32_t n)
{
	uint32_t i = fault_index(d, n), at = mb_take(b, MD_EXCEPTION_SIZE, 8);
	const struct actrack_snap_thread *t = &d->process.threads[i];

	put32(b, at, mt[i].tid);
	put32(b, at + 8, t->fatal_signo ? (uint32_t)t->fatal_signo :
					   (uint32_t)d->signal);
	put32(b, at + 12, t->fatal_signo ? (uint32_t)t->fatal_code : 0);
	put64(b, at + 24, t->fatal_addr);
	put_loc(b, at + 160, MD_CTX_SIZE, mt[i].ctx);
	return at;
}

/* /proc/PID/status as far as the report knows it: readers take the pid
 * from here. */
static uint32_t put_status(struct mbuf *b, const struct actrack_death *d,
			   uint32_t *size)
{
	const struct actrack_snap_process *p = &d->process;
	const char *name = p->nr_threads ? p->threads[0].name : "";
	char text[256];
	int n;

	for (uint32_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == p->pid)
			name = p->threads[i].name;
	n = snprintf(text, sizeof(text),
		     "Name:\t%.*s\nState:\tX (dead)\nTgid:\t%u\nPid:\t%u\n"
		     "PPid:\t%u\nUid:\t%u\t%u\t%u\t%u\nThreads:\t%u\n",
		     (int)strnlen(name, sizeof(p->threads[0].name)), name,
		     p->pid, p->pid, p->parent_pid, d->uid, d->uid, d->uid,
		     d->uid, p->nr_threads);
	*size = (uint32_t)n;
	return put_bytes(b, text, (size_t)n, 4);
}

/*
 * /proc/PID/maps as the module list gives it: one line per module, its
 * pages from the first to the last it maps, "r-xp" and offset 0 (the
 * report keeps neither the protections nor the file offsets), and its
 * path with a newline written "\012" as the kernel writes it.
 */
static uint32_t put_maps(struct mbuf *b, const struct actrack_snap_process *p,
			 uint32_t *size)
{
	uint32_t first = 0;

	*size = 0;
	for (uint32_t i = 0; i < p->nr_modules; i++) {
		const struct actrack_snap_module *m = &p->modules[i];
		uint64_t lo = (m->base + m->vaddr) & ~(uint64_t)4095;
		uint64_t hi = (m->base + m->vaddr + m->size + 4095) &
			      ~(uint64_t)4095;
		char line[64 + 4 * sizeof(m->path)];
		size_t n, plen = strnlen(m->path, sizeof(m->path));
		uint32_t at;

		n = (size_t)snprintf(line, sizeof(line), "%08" PRIx64 "-%08"
				     PRIx64 " r-xp 00000000 00:00 0 ", lo, hi);
		for (size_t k = 0; k < plen; k++)
			n += (size_t)(m->path[k] == '\n' ?
				      sprintf(line + n, "\\012") :
				      sprintf(line + n, "%c", m->path[k]));
		line[n++] = '\n';
		at = put_bytes(b, line, n, 1);
		if (!i)
			first = at;
		*size += (uint32_t)n;
	}
	return p->nr_modules ? first : put_bytes(b, "", 0, 1);
}

/* Why a thread of @d has no stack in the file. */
static const char *no_stack_why(const struct actrack_death *d,
				const struct minidump_host *h)
{
	if (h->no_stack)
		return h->no_stack;
	if (d->flags & ACTRACK_DEATH_STACKS_PRIVATE)
		return "private: the process was not dumpable";
	if (d->flags & ACTRACK_DEATH_STACKS_WITHHELD)
		return "withheld: Yama's ptrace_scope keeps the reader of "
		       "the report from the process's memory";
	if (d->flags & ACTRACK_DEATH_STACKS_UNSUPPORTED)
		return "not captured: a thread that ran 32-bit code, or over "
		       "the module's stack_threads or stack_slots";
	if (d->flags & ACTRACK_DEATH_STACKS_CUT)
		return "cut: over the module's stack_threads or stack_slots";
	return "not captured: the report holds no stack of this thread";
}

/* Crashpad's MinidumpUTF8String of the @n bytes at @s. */
static uint32_t put_utf8n(struct mbuf *b, const char *s, size_t n)
{
	uint32_t at = mb_take(b, 4 + n + 1, 4);

	put32(b, at, n);
	if (!b->err && n)
		memcpy(b->p + at + 4, s, n);
	return at;
}

static uint32_t put_utf8(struct mbuf *b, const char *s)
{
	return put_utf8n(b, s, strlen(s));
}

/* One key and value of the annotation dictionary at @dict. */
static void put_kv(struct mbuf *b, uint32_t dict, uint32_t i,
		   const char *key, const char *val)
{
	put32(b, dict + 4 + 8 * i, put_utf8(b, key));
	put32(b, dict + 8 + 8 * i, put_utf8(b, val));
}

/* A thread's activity or one of its values, from the text report. */
struct md_note {
	char key[128];
	const char *val;
	size_t len;
};

#define MD_MAX_NOTES	4096

static bool has_thread(const struct actrack_death *d, uint32_t tid)
{
	for (uint32_t i = 0; i < d->process.nr_threads; i++)
		if (d->process.threads[i].tid == tid)
			return true;
	return false;
}

/* Line @l (@n bytes) of thread @tid's block, after activity *@act: a
 * note into @nt if it is an activity ("    [N] ...") or a value of the
 * activity before it ("         NAME = VALUE").  Return: 1 if noted. */
static int note_line(const char *l, size_t n, uint32_t tid, uint32_t *act,
		     struct md_note *nt)
{
	const char *eq;
	unsigned int lvl;
	int off = 0;

	if (n > 5 && !memcmp(l, "    [", 5) &&
	    sscanf(l + 5, "%u] %n", &lvl, &off) == 1 && off && lvl &&
	    (size_t)(5 + off) <= n) {
		*act = lvl;
		snprintf(nt->key, sizeof(nt->key),
			 "actrack.thread.%u.activity.%u", tid, lvl);
		nt->val = l + 5 + off;
		nt->len = n - 5 - (size_t)off;
		return 1;
	}
	if (n > 9 && !memcmp(l, "         ", 9) && *act && l[9] != ' ' &&
	    (eq = memmem(l + 9, n - 9, " = ", 3))) {
		snprintf(nt->key, sizeof(nt->key),
			 "actrack.thread.%u.activity.%u.%.*s", tid, *act,
			 (int)(eq - l - 9), l + 9);
		nt->val = eq + 3;
		nt->len = n - (size_t)(eq + 3 - l);
		return 1;
	}
	if (n < 9 || memcmp(l, "         ", 9))
		*act = 0;		/* a signal or backtrace line */
	return 0;
}

/*
 * Each thread's activities (innermost first, as the report prints them)
 * and their values, read back from @text, the text report (render.c's
 * render_thread_text() lines): its thread blocks of threads @d has.
 * Return the notes (free them; NULL when none) and their number.
 */
static struct md_note *thread_notes(const struct actrack_death *d,
				    const char *text, uint32_t *nr)
{
	struct md_note *notes = NULL, *p;
	uint32_t tid = 0, act = 0, cap = 0;
	const char *l = text, *end;

	*nr = 0;
	for (; l && *l && *nr < MD_MAX_NOTES; l = end ? end + 1 : NULL) {
		size_t n;
		unsigned int t;

		end = strchr(l, '\n');
		n = end ? (size_t)(end - l) : strlen(l);
		if (n > 9 && !memcmp(l, "  thread ", 9)) {
			tid = sscanf(l + 9, "%u", &t) == 1 && has_thread(d, t) ?
			      t : 0;
			act = 0;
			continue;
		}
		if (n < 4 || memcmp(l, "    ", 4))
			tid = 0;	/* a line of the process, not a thread */
		if (!tid)
			continue;
		if (*nr == cap) {
			cap = cap ? 2 * cap : 16;
			p = realloc(notes, cap * sizeof(*notes));
			if (!p)
				break;
			notes = p;
		}
		*nr += (uint32_t)note_line(l, n, tid, &act, &notes[*nr]);
	}
	return notes;
}

/*
 * Crashpad's MinidumpCrashpadInfo (version 1) holding only the simple
 * annotations: what the process was doing, as crash servers show it
 * (the whole report, and each thread's activities and their values),
 * and, for each thread listed without a stack, why.
 */
static uint32_t put_annotations(struct mbuf *b, const struct actrack_death *d,
				const struct minidump_host *h,
				const struct md_thread *mt, const char *text)
{
	uint32_t n = 3, nr = d->process.nr_threads, dict, at, nr_notes, k;
	struct md_note *notes = text ? thread_notes(d, text, &nr_notes) : NULL;
	char pid[16], key[48];

	if (!text)
		nr_notes = 0;
	for (uint32_t i = 0; i < nr; i++)
		n += !mt[i].stack;
	n += nr_notes;
	snprintf(pid, sizeof(pid), "%u", d->process.pid);
	dict = mb_take(b, 4 + 8 * (size_t)n, 4);
	put32(b, dict, n);
	put_kv(b, dict, 0, "actrack.pid", pid);
	put_kv(b, dict, 1, "actrack.cmdline", d->process.cmdline);
	put_kv(b, dict, 2, "actrack.report", text ? text : "");
	k = 3;
	for (uint32_t i = 0; i < nr; i++) {
		if (mt[i].stack)
			continue;
		snprintf(key, sizeof(key), "actrack.thread.%u.no_stack",
			 mt[i].tid);
		put_kv(b, dict, k++, key, no_stack_why(d, h));
	}
	for (uint32_t i = 0; i < nr_notes; i++, k++) {
		put32(b, dict + 4 + 8 * k, put_utf8(b, notes[i].key));
		put32(b, dict + 8 + 8 * k,
		      put_utf8n(b, notes[i].val, notes[i].len));
	}
	free(notes);
	at = mb_take(b, MD_CRASHPAD_INFO_SIZE, 4);
	put32(b, at, 1);
	put_loc(b, at + 36, 4 + 8 * n, dict);
	return at;
}

struct md_dir {
	uint32_t at, nr;		/* the directory's offset, entries */
};

static void add_stream(struct mbuf *b, struct md_dir *dir, uint32_t type,
		       uint32_t size, uint32_t rva)
{
	uint32_t e = dir->at + dir->nr++ * MD_DIRENT_SIZE;

	put32(b, e, type);
	put_loc(b, e + 4, size, rva);
}

int minidump_build(const struct actrack_death *d,
		   const struct minidump_host *h, const char *text,
		   uint8_t **out, size_t *len)
{
	uint32_t n = d->process.nr_threads, rva, size;
	struct mbuf b = { 0 };
	struct md_thread *mt;
	struct md_dir dir;
	size_t cmd;

	if (!n || !d->process.threads)
		return -EINVAL;
	mt = calloc(n, sizeof(*mt));
	if (!mt)
		return -ENOMEM;
	mb_take(&b, MD_HEADER_SIZE, 1);
	dir = (struct md_dir){ mb_take(&b, MD_NR_STREAMS * MD_DIRENT_SIZE, 4),
			       0 };
	add_stream(&b, &dir, MD_SYSTEM_INFO, MD_SYSINFO_SIZE,
		   put_system(&b, h));
	rva = put_threads(&b, d, mt, n);
	add_stream(&b, &dir, MD_THREAD_LIST, 4 + n * MD_THREAD_SIZE, rva);
	rva = put_memory(&b, mt, n, &size);
	add_stream(&b, &dir, MD_MEMORY_LIST, size, rva);
	rva = put_modules(&b, &d->process);
	add_stream(&b, &dir, MD_MODULE_LIST,
		   4 + d->process.nr_modules * MD_MODULE_SIZE, rva);
	if (d->signal)
		add_stream(&b, &dir, MD_EXCEPTION, MD_EXCEPTION_SIZE,
			   put_exception(&b, d, mt, n));
	rva = put_status(&b, d, &size);
	add_stream(&b, &dir, MD_LINUX_PROC_STATUS, size, rva);
	cmd = strnlen(d->process.cmdline, sizeof(d->process.cmdline));
	rva = put_bytes(&b, d->process.cmdline, cmd, 1);
	add_stream(&b, &dir, MD_LINUX_CMD_LINE, (uint32_t)cmd, rva);
	rva = put_maps(&b, &d->process, &size);
	add_stream(&b, &dir, MD_LINUX_MAPS, size, rva);
	add_stream(&b, &dir, MD_CRASHPAD_INFO, MD_CRASHPAD_INFO_SIZE,
		   put_annotations(&b, d, h, mt, text));
	free(mt);
	put32(&b, 0, MD_SIGNATURE);
	put32(&b, 4, MD_VERSION);
	put32(&b, 8, dir.nr);
	put32(&b, 12, dir.at);
	put32(&b, 20, h->time);
	if (b.err) {
		free(b.p);
		return b.err;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

void minidump_host_now(struct minidump_host *h)
{
	static struct utsname u;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	h->release = uname(&u) ? NULL : u.release;
	h->nr_cpus = cpus > 0 ? (unsigned int)cpus : 0;
	h->time = (uint32_t)time(NULL);
	h->no_stack = NULL;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int minidump_save(const char *dir, const struct actrack_death *d,
		  const char *text, char *path, size_t path_len)
{
	struct minidump_host h;

	minidump_host_now(&h);
	return minidump_write(dir, d, &h, text, path, path_len);
}

int minidump_write(const char *dir, const struct actrack_death *d,
		   const struct minidump_host *h, const char *text,
		   char *path, size_t path_len)
{
	char tmp[4096];
	uint8_t *buf;
	size_t len;
	int fd, ret;

	if ((size_t)snprintf(path, path_len, "%s/actrack-%u-%" PRIu64
			     "-%u.dmp", dir, d->uid, d->seq,
			     d->process.pid) >= path_len ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.actrack-dmp-XXXXXX",
			     dir) >= sizeof(tmp))
		return -ENAMETOOLONG;
	ret = minidump_build(d, h, text, &buf, &len);
	if (ret)
		return ret;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		free(buf);
		return ret;
	}
	ret = write_all(fd, buf, len);
	free(buf);
	if (!ret && fchmod(fd, 0640))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}
