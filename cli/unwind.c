// SPDX-License-Identifier: MIT
/*
 * Unwinding a stack captured at death (unwind.h).  libdwfl gets the dead
 * process as a Dwfl of its ELF objects at their load addresses (from the
 * report's module records), one thread whose initial registers are the
 * captured ones, and a memory reader that answers only from the captured
 * bytes: nothing of the (gone) process is read, and no file but the ELF
 * objects the report names.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "unwind.h"

struct unwind_ctx {
	const struct actrack_death_stack *st;
	struct bt_frame *frames;
	struct backtrace *bt;
	bool thread_given;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwind_ctx *c = arg;

	if (c->thread_given)
		return 0;
	c->thread_given = true;
	*thread_argp = c;
	return (pid_t)c->st->tid;
}

/* Only the copied bytes: [sp, sp + size). */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	const struct actrack_death_stack *st =
		((struct unwind_ctx *)arg)->st;

	if (addr < st->sp || addr - st->sp > st->size ||
	    st->size - (addr - st->sp) < sizeof(uint64_t))
		return false;
	memcpy(result, st->bytes + (addr - st->sp), sizeof(uint64_t));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct actrack_death_stack *st =
		((struct unwind_ctx *)arg)->st;
	Dwarf_Word regs[ACTRACK_STACK_NR_REGS];

	for (unsigned int i = 0; i < ACTRACK_STACK_NR_REGS; i++)
		regs[i] = st->regs[i];
	/* x86-64: DWARF 16 is the return address column, the pc. */
	dwfl_thread_state_register_pc(thread, regs[16]);
	return dwfl_thread_state_registers(thread, 0, 16, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct unwind_ctx *c = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	if (c->bt->nr_frames == BT_MAX_FRAMES) {
		c->bt->truncated = true;
		return DWARF_CB_ABORT;
	}
	c->frames[c->bt->nr_frames++] = (struct bt_frame){ pc, activation };
	return DWARF_CB_OK;
}

/* The report's ELF objects at their load bias; Return: how many. */
static unsigned int report_modules(Dwfl *dwfl, const struct actrack_death *d)
{
	unsigned int n = 0;

	dwfl_report_begin(dwfl);
	for (uint32_t i = 0; i < d->process.nr_modules; i++) {
		const struct actrack_snap_module *m = &d->process.modules[i];

		if (m->path[0] != '/' ||
		    memchr(m->path, 0, sizeof(m->path)) == NULL)
			continue;
		if (dwfl_report_elf(dwfl, m->path, m->path, -1, m->base,
				    false))
			n++;
	}
	dwfl_report_end(dwfl, NULL, NULL);
	return n;
}

void unwind_death_stack(const struct actrack_death *d,
			const struct actrack_death_stack *st,
			struct bt_frame *frames, struct backtrace *bt,
			char *why, size_t len)
{
	struct unwind_ctx c = { .st = st, .frames = frames, .bt = bt };
	Dwfl *dwfl;

	memset(bt, 0, sizeof(*bt));
	bt->frames = frames;
	why[0] = '\0';
	if (st->flags & ACTRACK_STACK_UNREADABLE) {
		snprintf(why, len, "the stack pointer 0x%llx was not readable",
			 (unsigned long long)st->sp);
		bt->error = why;
		return;
	}
	dwfl = dwfl_begin(&offline_callbacks);
	if (!dwfl) {
		snprintf(why, len, "libdwfl: %s", dwfl_errmsg(-1));
		bt->error = why;
		return;
	}
	if (!report_modules(dwfl, d)) {
		snprintf(why, len, "none of the report's ELF objects opened");
	} else if (!dwfl_attach_state(dwfl, NULL, (pid_t)d->process.pid,
				      &thread_callbacks, &c)) {
		snprintf(why, len, "libdwfl: %s", dwfl_errmsg(-1));
	} else if (dwfl_getthread_frames(dwfl, (pid_t)st->tid, frame_cb,
					 &c) != 0 && !bt->truncated) {
		/* The usual end of a stack copy: a frame above it. */
		if (st->flags & ACTRACK_STACK_CAPPED)
			snprintf(why, len, "stack copy ends at %u bytes; "
				 "unwinding stopped: %s", st->size,
				 dwfl_errmsg(-1));
		else if (bt->nr_frames < 2)
			snprintf(why, len, "unwinding stopped: %s",
				 dwfl_errmsg(-1));
	}
	if (why[0])
		bt->error = why;
	dwfl_end(dwfl);
}

const struct actrack_death_stack *
unwind_find_stack(const struct actrack_death *d, uint32_t tid)
{
	for (uint32_t i = 0; i < d->nr_stacks; i++)
		if (d->stacks[i].tid == tid)
			return &d->stacks[i];
	return NULL;
}
