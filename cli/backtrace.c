// SPDX-License-Identifier: MIT
/* Rendering a backtrace (backtrace.h): text and JSON. */
#include <inttypes.h>
#include <stddef.h>
#include "backtrace.h"
#include "cli.h"
#include "json.h"
#include "render.h"
#include "symbolize.h"

uint64_t bt_lookup_pc(const struct bt_frame *f)
{
	return f->activation || !f->pc ? f->pc : f->pc - 1;
}

void bt_print(const struct backtrace *bt, struct symbolizer *sym, FILE *f,
	      const char *indent, const struct actrack_snap_module *mods,
	      uint32_t nr_mods)
{
	char buf[512];

	if (!bt->nr_frames) {
		fprintf(f, "%sbacktrace: none (", indent);
		cli_print_escaped(f, bt->error ? bt->error : "no frames",
				  SIZE_MAX);
		fputs(")\n", f);
		return;
	}
	fprintf(f, "%sbacktrace:\n", indent);
	for (uint32_t i = 0; i < bt->nr_frames; i++) {
		const struct bt_frame *fr = &bt->frames[i];

		/* eu-stack's notation: "- 1" marks a return address, looked
		 * up at the call. */
		fprintf(f, "%s  #%-2u 0x%016" PRIx64 "%s %s\n", indent, i,
			fr->pc, fr->activation ? "    " : " - 1",
			sym_format(sym, mods, nr_mods, bt_lookup_pc(fr), buf,
				   sizeof(buf)));
	}
	if (bt->truncated)
		fprintf(f, "%s  (cut at %u frames)\n", indent, BT_MAX_FRAMES);
	if (bt->error) {
		fprintf(f, "%s  (", indent);
		cli_print_escaped(f, bt->error, SIZE_MAX);
		fputs(")\n", f);
	}
}

void bt_json(const struct backtrace *bt, struct symbolizer *sym,
	     struct json *j, const struct actrack_snap_module *mods,
	     uint32_t nr_mods)
{
	json_object_begin(j);
	json_key(j, "frames");
	json_array_begin(j);
	for (uint32_t i = 0; i < bt->nr_frames; i++) {
		const struct bt_frame *fr = &bt->frames[i];

		json_object_begin(j);
		json_kv_u64(j, "pc", fr->pc);
		json_kv_bool(j, "activation", fr->activation);
		json_key(j, "symbol");
		json_symbol(j, sym, mods, nr_mods, bt_lookup_pc(fr));
		json_object_end(j);
	}
	json_array_end(j);
	json_kv_bool(j, "truncated", bt->truncated);
	json_kv_string(j, "error", bt->error, 1024);
	json_object_end(j);
}
