// SPDX-License-Identifier: MIT
/*
 * Symbolization of activity origins and fault pcs (elfutils libdwfl).
 *
 * A process's MODULE records say which ELF files it had loaded, at which
 * load bias, with which GNU build-id.  For a pc we find the record whose
 * range holds it, open that file, and ask libdwfl for the function, the
 * inlined function if any, and the source line (when debug information is
 * installed, in the file or found by build-id under /usr/lib/debug).
 *
 * Trust: the records are arena data, i.e. chosen by any process of the uid
 * or by whoever made a saved image.  So a path is only opened if it is
 * absolute (a relative one would be resolved against *our* working
 * directory), without blocking (O_NONBLOCK: a FIFO must not hang us) and
 * only if it is a regular file.  The file itself may have been replaced
 * since (an upgrade, a rebuild): if its build-id differs from the recorded
 * one its symbols would be wrong, not just missing, so we then print only
 * module+offset and say why.  libdwfl parses the ELF and DWARF of files
 * that are on this machine's disk; it is the same parser eu-addr2line uses.
 *
 * Cost: processes forked from one parent usually have identical module
 * lists, so one session (the list, sorted for the range lookup) serves
 * every process with the same list; sessions are kept across snapshots
 * (actrack top), at most SYM_MAX_SESSIONS.  The files are not per session:
 * each (path, build-id) is opened once, lazily (the first time a pc falls
 * into it), in a libdwfl session of its own at load bias 0 and asked about
 * pc - bias, so processes that map one library at different addresses
 * (ASLR) share its parsed ELF and DWARF; at most SYM_MAX_FILES are kept
 * open, least recently used closed first.  And since the answer for a
 * file address depends only on the file, it is cached, keyed by (file,
 * address in the file): a thousand threads blocked at the same few pushes
 * cost a few DWARF walks, not a thousand.  The cache is a fixed
 * open-addressing table: arena data is untrusted and may name millions of
 * distinct addresses, so once it holds SYM_CACHE_MAX entries (or
 * SYM_CACHE_STR_MAX bytes of names) it stops taking new ones and the
 * lookups past that are simply not cached.  Everything is freed by
 * sym_free().
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "symbolize.h"

#define SYM_MAX_SESSIONS	64
/* Each open file holds an fd and its parsed ELF/DWARF; well below the
 * usual limit of 1024 fds. */
#define SYM_MAX_FILES		128
#define SYM_CACHE_SLOTS		4096	/* a power of two */
#define SYM_CACHE_STR_MAX	(4U << 20)

/*
 * One ELF file as a process's MODULE record names it, reported to a libdwfl
 * session of its own at load bias 0: whatever the bias of the process that
 * mapped it, it is asked about the address in the file (pc - bias).
 */
struct sym_file {
	uint64_t serial;		/* never reused: the cache's key */
	uint64_t last_used;
	uint8_t build_id_size;		/* recorded, 0: none */
	uint8_t build_id[ACTRACK_BUILD_ID_MAX];
	char path[ACTRACK_PATH_MAX];	/* recorded */
	Dwfl *dwfl;
	Dwfl_Module *mod;		/* NULL: module+offset only */
	const char *note;		/* why mod is NULL */
};

struct sym_module {
	const struct actrack_snap_module *rec;	/* in the session's copy */
	uint64_t start, end;		/* from the record: base+vaddr+size */
	/* Its sym_file, valid while sym->files[file] has this serial (files
	 * are closed behind the sessions' back). */
	uint32_t file;
	uint64_t file_serial;		/* 0: not looked up yet */
};

struct sym_session {
	uint32_t nr;				/* records */
	uint32_t nr_ranges;			/* usable ranges in mods */
	struct actrack_snap_module *recs;	/* copy: the cache key */
	struct sym_module *mods;		/* sorted by start */
	uint64_t last_used;
};

/*
 * What a file says about one of its addresses, all but module and
 * module_offset of struct sym_info (those come from the record).  The
 * strings live in @strs, one allocation; the notes are literals.
 */
struct sym_entry {
	uint64_t serial;		/* of the file; 0: empty slot */
	uint64_t offset;		/* address in the file */
	const char *function, *inlined_in, *file, *note;
	uint64_t function_offset;
	int line;
	char *strs;
};

struct symbolizer {
	uint32_t nr;
	struct sym_session *sessions[SYM_MAX_SESSIONS];
	uint32_t nr_files;
	struct sym_file *files[SYM_MAX_FILES];
	uint64_t tick, serial;
	char *inlined_name;		/* strdup of the last inline scope */
	struct sym_entry *cache;	/* SYM_CACHE_SLOTS, on first use */
	uint32_t cache_used;
	size_t cache_bytes;		/* of the entries' strings */
};

/* Linear probing needs an empty slot to end a miss: never fill it up. */
#define SYM_CACHE_MAX_USED	(SYM_CACHE_SLOTS / 4 * 3)
_Static_assert(SYM_CACHE_MAX == SYM_CACHE_MAX_USED,
	       "symbolize.h's SYM_CACHE_MAX is the table's limit");
_Static_assert(!(SYM_CACHE_SLOTS & (SYM_CACHE_SLOTS - 1)),
	       "SYM_CACHE_SLOTS must be a power of two");

static const Dwfl_Callbacks offline_callbacks = {
	/* Only used for modules we could not open ourselves; we never ask. */
	.find_elf = dwfl_build_id_find_elf,
	/* Separate debug files by build-id (/usr/lib/debug/.build-id) or
	 * .gnu_debuglink, as eu-addr2line finds them. */
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct symbolizer *sym_new(void)
{
	return calloc(1, sizeof(struct symbolizer));
}

static void session_free(struct sym_session *s)
{
	if (!s)
		return;
	free(s->mods);
	free(s->recs);
	free(s);
}

static void file_free(struct sym_file *f)
{
	if (!f)
		return;
	if (f->dwfl)
		dwfl_end(f->dwfl);
	free(f);
}

void sym_free(struct symbolizer *sym)
{
	if (!sym)
		return;
	for (uint32_t i = 0; i < sym->nr; i++)
		session_free(sym->sessions[i]);
	for (uint32_t i = 0; i < sym->nr_files; i++)
		file_free(sym->files[i]);
	for (uint32_t i = 0; sym->cache && i < SYM_CACHE_SLOTS; i++)
		free(sym->cache[i].strs);
	free(sym->cache);
	free(sym->inlined_name);
	free(sym);
}

static bool same_module(const struct actrack_snap_module *x,
			const struct actrack_snap_module *y)
{
	return x->base == y->base && x->size == y->size &&
	       x->vaddr == y->vaddr && x->build_id_size == y->build_id_size &&
	       x->build_id_size <= ACTRACK_BUILD_ID_MAX &&
	       !memcmp(x->build_id, y->build_id, x->build_id_size) &&
	       !strncmp(x->path, y->path, sizeof(x->path));
}

static bool same_list(const struct sym_session *s,
		      const struct actrack_snap_module *mods, uint32_t nr)
{
	if (s->nr != nr)
		return false;
	for (uint32_t i = 0; i < s->nr; i++)
		if (!same_module(&s->recs[i], &mods[i]))
			return false;
	return true;
}

static int mod_cmp(const void *x, const void *y)
{
	const struct sym_module *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return 0;
}

static struct sym_session *session_new(const struct actrack_snap_module *mods,
				       uint32_t nr)
{
	struct sym_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->recs = calloc(nr, sizeof(*s->recs));
	s->mods = calloc(nr, sizeof(*s->mods));
	if (!s->recs || !s->mods) {
		session_free(s);
		return NULL;
	}
	s->nr = nr;
	for (uint32_t i = 0; i < nr; i++) {
		struct actrack_snap_module *r = &s->recs[i];
		struct sym_module *m = &s->mods[s->nr_ranges];
		uint64_t start = mods[i].base + mods[i].vaddr;

		*r = mods[i];
		r->path[sizeof(r->path) - 1] = 0;
		if (r->build_id_size > ACTRACK_BUILD_ID_MAX)
			r->build_id_size = 0;
		/* A range that wraps is a forged record: never matches. */
		if (!r->size || start < r->base || start + r->size < start)
			continue;
		m->rec = r;
		m->start = start;
		m->end = start + r->size;
		s->nr_ranges++;
	}
	/* Sorted by start for the lookup; overlapping (forged) ranges are
	 * harmless: one of those that hold the pc wins. */
	qsort(s->mods, s->nr_ranges, sizeof(*s->mods), mod_cmp);
	return s;
}

static struct sym_session *find_session(struct symbolizer *sym,
					const struct actrack_snap_module *mods,
					uint32_t nr)
{
	struct sym_session *s;
	uint32_t victim = 0;

	for (uint32_t i = 0; i < sym->nr; i++) {
		if (same_list(sym->sessions[i], mods, nr)) {
			sym->sessions[i]->last_used = ++sym->tick;
			return sym->sessions[i];
		}
	}
	s = session_new(mods, nr);
	if (!s)
		return NULL;
	s->last_used = ++sym->tick;
	if (sym->nr < SYM_MAX_SESSIONS) {
		sym->sessions[sym->nr++] = s;
		return s;
	}
	for (uint32_t i = 1; i < sym->nr; i++)
		if (sym->sessions[i]->last_used <
		    sym->sessions[victim]->last_used)
			victim = i;
	session_free(sym->sessions[victim]);
	sym->sessions[victim] = s;
	return s;
}

static struct sym_module *find_module(struct sym_session *s, uint64_t pc)
{
	uint32_t lo = 0, hi = s->nr_ranges;

	/* Last range starting at or below pc. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->mods[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges may overlap only if forged; look back a little. */
	for (uint32_t i = lo, tries = 0; i-- > 0 && tries < 8; tries++)
		if (pc >= s->mods[i].start && pc < s->mods[i].end)
			return &s->mods[i];
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* Open the file @f names and hand it to libdwfl; set f->note if not. */
static void load_file(struct sym_file *f)
{
	char path[ACTRACK_PATH_MAX];
	const unsigned char *bits;
	GElf_Addr id_vaddr;
	struct stat st;
	size_t len;
	int fd, n;

	snprintf(path, sizeof(path), "%s", f->path);
	/* readlink(/proc/self/exe) of a binary replaced while it ran. */
	len = strlen(path);
	if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
		path[len - 10] = 0;
	if (path[0] != '/') {
		f->note = path[0] ? "not an absolute path" : NULL;
		return;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		f->note = "file not found";
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		f->note = "not a regular file";
		return;
	}
	f->dwfl = dwfl_begin(&offline_callbacks);
	if (!f->dwfl) {
		close(fd);
		f->note = "libdwfl failed";
		return;
	}
	dwfl_report_begin(f->dwfl);
	/*
	 * At load bias 0 and with add_p_vaddr, libdwfl places the file at its
	 * own p_vaddr, so the address to ask about is pc minus the record's
	 * base, the process's load bias (dl_iterate_phdr's dlpi_addr): right
	 * for prelinked libraries too.  On success libdwfl owns fd; on
	 * failure it is still ours.
	 */
	f->mod = dwfl_report_elf(f->dwfl, base_name(path), path, fd, 0, true);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		close(fd);
		f->note = "not an ELF file";
		return;
	}
	n = dwfl_module_build_id(f->mod, &bits, &id_vaddr);
	if (f->build_id_size &&
	    (n != f->build_id_size || memcmp(bits, f->build_id, (size_t)n))) {
		/* Another build of the file: its symbols would lie. */
		f->mod = NULL;
		f->note = "build-id mismatch";
	}
}

/*
 * The file of range @m: the one open for its (path, build-id), else newly
 * opened, in place of the least recently used when SYM_MAX_FILES are.
 * NULL on ENOMEM.
 */
static struct sym_file *module_file(struct symbolizer *sym,
				    struct sym_module *m)
{
	const struct actrack_snap_module *r = m->rec;
	struct sym_file *f;
	uint32_t slot = 0;

	if (m->file_serial && m->file < sym->nr_files &&
	    sym->files[m->file]->serial == m->file_serial) {
		f = sym->files[m->file];
		goto found;
	}
	for (slot = 0; slot < sym->nr_files; slot++) {
		f = sym->files[slot];
		if (f->build_id_size == r->build_id_size &&
		    !memcmp(f->build_id, r->build_id, r->build_id_size) &&
		    !strcmp(f->path, r->path))
			goto remember;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->serial = ++sym->serial;
	f->build_id_size = r->build_id_size;
	memcpy(f->build_id, r->build_id, r->build_id_size);
	memcpy(f->path, r->path, sizeof(f->path));
	load_file(f);
	if (sym->nr_files < SYM_MAX_FILES) {
		slot = sym->nr_files++;
	} else {
		/* Its cache entries stay, unreachable: no serial repeats. */
		slot = 0;
		for (uint32_t i = 1; i < sym->nr_files; i++)
			if (sym->files[i]->last_used <
			    sym->files[slot]->last_used)
				slot = i;
		file_free(sym->files[slot]);
	}
	sym->files[slot] = f;
remember:
	m->file = slot;
	m->file_serial = f->serial;
found:
	f->last_used = ++sym->tick;
	return f;
}

/* ---- the cache: (file, address in it) -> what libdw said ------------- */

static uint32_t cache_hash(uint64_t serial, uint64_t offset)
{
	uint64_t h = offset ^ (serial * 0x9e3779b97f4a7c15ULL);

	/* Pushes sit a few bytes apart: mix the low bits into the index. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (uint32_t)h & (SYM_CACHE_SLOTS - 1);
}

static const struct sym_entry *cache_find(const struct symbolizer *sym,
					  uint64_t serial, uint64_t offset)
{
	uint32_t i = cache_hash(serial, offset);

	if (!sym->cache)
		return NULL;
	/* Ends: the table always has an empty slot (SYM_CACHE_MAX). */
	for (; sym->cache[i].serial; i = (i + 1) & (SYM_CACHE_SLOTS - 1))
		if (sym->cache[i].serial == serial &&
		    sym->cache[i].offset == offset)
			return &sym->cache[i];
	return NULL;
}

/* Copy @s to *@pos and advance it; NULL stays NULL. */
static const char *cache_str(char **pos, const char *s)
{
	char *d = *pos;

	if (!s)
		return NULL;
	*pos = stpcpy(d, s) + 1;
	return d;
}

/* Keep @out's answer for (@serial, @offset), if there is room. */
static void cache_insert(struct symbolizer *sym, uint64_t serial,
			 uint64_t offset, const struct sym_info *out)
{
	const char *strs[] = { out->function, out->inlined_in, out->file };
	struct sym_entry *e;
	size_t len = 0;
	uint32_t i;
	char *pos;

	if (sym->cache_used >= SYM_CACHE_MAX)
		return;
	for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++)
		len += strs[k] ? strlen(strs[k]) + 1 : 0;
	if (len > SYM_CACHE_STR_MAX - sym->cache_bytes)
		return;
	if (!sym->cache) {
		sym->cache = calloc(SYM_CACHE_SLOTS, sizeof(*sym->cache));
		if (!sym->cache)
			return;
	}
	i = cache_hash(serial, offset);
	while (sym->cache[i].serial)
		i = (i + 1) & (SYM_CACHE_SLOTS - 1);
	e = &sym->cache[i];
	e->strs = malloc(len ? len : 1);
	if (!e->strs)
		return;
	pos = e->strs;
	e->function = cache_str(&pos, out->function);
	e->inlined_in = cache_str(&pos, out->inlined_in);
	e->file = cache_str(&pos, out->file);
	e->note = out->note;
	e->function_offset = out->function_offset;
	e->line = out->line;
	e->offset = offset;
	e->serial = serial;
	sym->cache_used++;
	sym->cache_bytes += len;
}

static void cache_fill(const struct sym_entry *e, struct sym_info *out)
{
	out->function = e->function;
	out->function_offset = e->function_offset;
	out->inlined_in = e->inlined_in;
	out->file = e->file;
	out->line = e->line;
	out->note = e->note;
}

#define MAX_CUS		100000

/*
 * The compile unit holding @pc.  libdw finds it through .debug_aranges,
 * which clang does not emit by default (and elfutils 0.188 has no other
 * index), so without it we walk the units and ask each for its ranges.
 */
static Dwarf_Die *find_cu(Dwfl_Module *mod, uint64_t pc, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, bias);

	for (uint32_t n = 0; !cu && n < MAX_CUS; n++) {
		Dwarf_Addr b;

		cu = dwfl_module_nextcu(mod, cu, &b);
		if (!cu)
			break;
		if (dwarf_haspc(cu, pc - b) > 0) {
			*bias = b;
			return cu;
		}
	}
	return cu;
}

/* Is @name one of libactrack's inline fast-path helpers? */
static bool is_tracker_helper(const char *name)
{
	return name && !strncmp(name, "actrack__", 9);
}

#define LABEL_NAME		"__actrack_here"
#define LABEL_MAX_DEPTH		64
#define LABEL_MAX_DIES		200000

/*
 * An activity's origin is the address of the label that ACTRACK_HERE()
 * puts at the push, and GCC describes that label (DW_TAG_label with its
 * address and declaration line).  The instruction after the label may
 * belong to any inlined code the compiler scheduled there (the evaluation
 * of an argument, say), so the label, when found, is the precise answer:
 * the line of the push and the function it is in.  Searched depth-first
 * in the subprogram holding @addr, iteratively and with a budget.
 * Return: true and @label, @func (its innermost enclosing subprogram or
 * inlined subroutine) set.
 */
static bool find_origin_label(Dwarf_Die *subprogram, Dwarf_Addr addr,
			      Dwarf_Die *label, Dwarf_Die *func)
{
	Dwarf_Die stack[LABEL_MAX_DEPTH], funcs[LABEL_MAX_DEPTH];
	int depth = 0;

	if (dwarf_child(subprogram, &stack[0]))
		return false;
	funcs[0] = *subprogram;
	for (uint32_t budget = LABEL_MAX_DIES; budget && depth >= 0;
	     budget--) {
		Dwarf_Die *d = &stack[depth], next;
		int tag = dwarf_tag(d);
		Dwarf_Addr low;
		Dwarf_Attribute attr;

		if (tag == DW_TAG_label && !dwarf_lowpc(d, &low) &&
		    low == addr) {
			const char *name = dwarf_formstring(
				dwarf_attr_integrate(d, DW_AT_name, &attr));

			if (name && !strcmp(name, LABEL_NAME)) {
				*label = *d;
				*func = funcs[depth];
				return true;
			}
		}
		if (dwarf_haschildren(d) && depth + 1 < LABEL_MAX_DEPTH &&
		    !dwarf_child(d, &stack[depth + 1])) {
			funcs[depth + 1] = (tag == DW_TAG_subprogram ||
					    tag == DW_TAG_inlined_subroutine) ?
					   *d : funcs[depth];
			depth++;
			continue;
		}
		/* Next sibling here, or of the nearest ancestor that has one. */
		while (depth >= 0) {
			if (!dwarf_siblingof(&stack[depth], &next)) {
				stack[depth] = next;
				break;
			}
			depth--;
		}
	}
	return false;
}

/*
 * The out-of-line function of @cu that holds @addr.  Not from
 * dwarf_getscopes(): past an inlined subroutine, its list continues with
 * the inlined function's abstract definition, not with the function the
 * code was inlined into.
 */
static bool concrete_function(Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *out)
{
	Dwarf_Die d, next;

	if (dwarf_child(cu, &d))
		return false;
	for (uint32_t budget = LABEL_MAX_DIES; budget; budget--) {
		if (dwarf_tag(&d) == DW_TAG_subprogram &&
		    dwarf_haspc(&d, addr) > 0) {
			*out = d;
			return true;
		}
		if (dwarf_siblingof(&d, &next))
			return false;
		d = next;
	}
	return false;
}

/*
 * Refine @out with the DWARF scopes at @pc: the innermost inlined function
 * becomes the function (the symbol it was inlined into is kept), and
 * libactrack's own inline helpers (actrack__push...) are looked through:
 * an origin taken inside one of them is reported at its call site, the
 * push in the user's code, which is what the user wants to see.
 */
static void refine_scopes(struct symbolizer *sym, Dwfl_Module *mod,
			  uint64_t pc, struct sym_info *out)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu, *scopes = NULL, fn;
	Dwarf_Die *helper = NULL;
	Dwarf_Files *files;
	Dwarf_Attribute attr;
	Dwarf_Word idx, line;
	const char *name = NULL;
	size_t nr_files;
	int n;

	cu = find_cu(mod, pc, &bias);
	if (!cu)
		return;
	n = dwarf_getscopes(cu, pc - bias, &scopes);
	if (concrete_function(cu, pc - bias, &fn)) {
		Dwarf_Die label, func;
		int line_no = 0;

		if (!find_origin_label(&fn, pc - bias, &label, &func))
			goto scopes;
		if (dwarf_tag(&func) == DW_TAG_inlined_subroutine)
			name = dwarf_formstring(dwarf_attr_integrate(
				&func, DW_AT_name, &attr));
		out->file = dwarf_decl_file(&label);
		if (dwarf_decl_line(&label, &line_no) || line_no <= 0)
			out->file = NULL;
		out->line = out->file ? line_no : 0;
		goto set_name;
	}
scopes:
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		/* The name is on the abstract origin: integrate follows it. */
		name = dwarf_formstring(dwarf_attr_integrate(&scopes[i],
							     DW_AT_name,
							     &attr));
		if (!is_tracker_helper(name))
			break;
		helper = &scopes[i];
		name = NULL;
	}
	if (helper &&
	    !dwarf_formudata(dwarf_attr(helper, DW_AT_call_file, &attr),
			     &idx) &&
	    !dwarf_formudata(dwarf_attr(helper, DW_AT_call_line, &attr),
			     &line) &&
	    !dwarf_getsrcfiles(cu, &files, &nr_files) && idx < nr_files) {
		const char *file = dwarf_filesrc(files, idx, NULL, NULL);

		if (file && line > 0 && line < INT32_MAX) {
			out->file = file;
			out->line = (int)line;
		}
	}
set_name:
	if (name) {
		free(sym->inlined_name);
		sym->inlined_name = strdup(name);
		if (sym->inlined_name) {
			out->inlined_in = out->function;
			out->function = sym->inlined_name;
		}
	}
	free(scopes);
}

/*
 * What the file @f says about its address @addr (a pc minus the load bias
 * of the process it was taken in): function, inline scope, source line,
 * or a note.  Depends on nothing but @f and @addr: the cache's premise.
 */
static void lookup_file(struct symbolizer *sym, struct sym_file *f,
			uint64_t addr, struct sym_info *out)
{
	const char *name;
	GElf_Off off;
	GElf_Sym esym;
	Dwfl_Line *line;

	/* libdwfl's own idea of the file's extent must agree with the
	 * record's. */
	if (dwfl_addrmodule(f->dwfl, addr) != f->mod) {
		out->note = "address outside the file's segments";
		return;
	}
	name = dwfl_module_addrinfo(f->mod, addr, &off, &esym, NULL, NULL,
				    NULL);
	if (name && *name) {
		out->function = name;
		out->function_offset = off;
	}
	line = dwfl_module_getsrc(f->mod, addr);
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL,
						 NULL, NULL);

		if (file && lineno > 0) {
			out->file = file;
			out->line = lineno;
		}
	} else {
		/* No .debug_aranges (clang): the unit's own line table. */
		Dwarf_Addr bias;
		Dwarf_Die *cu = find_cu(f->mod, addr, &bias);
		Dwarf_Line *dl = cu ? dwarf_getsrc_die(cu, addr - bias) : NULL;
		int lineno = 0;
		const char *file = dl ? dwarf_linesrc(dl, NULL, NULL) : NULL;

		if (file && !dwarf_lineno(dl, &lineno) && lineno > 0) {
			out->file = file;
			out->line = lineno;
		}
	}
	refine_scopes(sym, f->mod, addr, out);
}

bool sym_lookup(struct symbolizer *sym, const struct actrack_snap_module *mods,
		uint32_t nr_mods, uint64_t pc, struct sym_info *out)
{
	const struct sym_entry *e;
	struct sym_session *s;
	struct sym_module *m;
	struct sym_file *f;
	uint64_t addr;

	memset(out, 0, sizeof(*out));
	if (!sym || !mods || !pc || !nr_mods)
		return false;
	s = find_session(sym, mods, nr_mods);
	if (!s)
		return false;
	m = find_module(s, pc);
	if (!m)
		return false;
	addr = pc - m->rec->base;
	out->module = m->rec->path;
	out->module_offset = addr;
	f = module_file(sym, m);
	if (!f) {
		out->note = "out of memory";
		return true;
	}
	out->note = f->note;
	if (!f->mod)
		return true;
	e = cache_find(sym, f->serial, addr);
	if (e) {
		cache_fill(e, out);
		return true;
	}
	lookup_file(sym, f, addr, out);
	cache_insert(sym, f->serial, addr, out);
	/* The copies outlive the file (and the next inline scope). */
	e = cache_find(sym, f->serial, addr);
	if (e)
		cache_fill(e, out);
	return true;
}

/* Append @s to @buf (at *@pos) with C escapes for unprintable bytes. */
static void append(char *buf, size_t len, size_t *pos, const char *s)
{
	for (; s && *s && *pos + 1 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f) {
			buf[(*pos)++] = (char)c;
		} else if (*pos + 5 < len) {
			snprintf(buf + *pos, 5, "\\x%02x", c);
			*pos += 4;
		} else {
			break;
		}
	}
	buf[*pos] = 0;
}

/* @pre, then @v in hex ("0x1f") or decimal, then @post. */
static void append_num(char *buf, size_t len, size_t *pos, const char *pre,
		       uint64_t v, bool hex, const char *post)
{
	char tmp[32];

	if (hex)
		snprintf(tmp, sizeof(tmp), "0x%llx", (unsigned long long)v);
	else
		snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	append(buf, len, pos, pre);
	append(buf, len, pos, tmp);
	append(buf, len, pos, post);
}

char *sym_format_info(const struct sym_info *info, uint64_t pc, char *buf,
		      size_t len)
{
	size_t pos = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	if (!info || !info->module) {
		append_num(buf, len, &pos, "", pc, true, "");
		return buf;
	}
	if (info->function) {
		append(buf, len, &pos, info->function);
		if (info->inlined_in) {
			append(buf, len, &pos, " [inlined into ");
			append(buf, len, &pos, info->inlined_in);
			append_num(buf, len, &pos, "+", info->function_offset,
				   true, "]");
		} else {
			append_num(buf, len, &pos, "+", info->function_offset,
				   true, "");
		}
		if (info->file) {
			append(buf, len, &pos, " (");
			append(buf, len, &pos, base_name(info->file));
			append_num(buf, len, &pos, ":", (uint64_t)info->line,
				   false, ")");
		}
	} else {
		append(buf, len, &pos, base_name(info->module));
		append_num(buf, len, &pos, "+", info->module_offset, true, "");
	}
	if (info->note) {
		append(buf, len, &pos, " (");
		append(buf, len, &pos, info->note);
		append(buf, len, &pos, ")");
	}
	return buf;
}

char *sym_format(struct symbolizer *sym, const struct actrack_snap_module *mods,
		 uint32_t nr_mods, uint64_t pc, char *buf, size_t len)
{
	struct sym_info info;

	if (!sym_lookup(sym, mods, nr_mods, pc, &info))
		return sym_format_info(NULL, pc, buf, len);
	return sym_format_info(&info, pc, buf, len);
}
