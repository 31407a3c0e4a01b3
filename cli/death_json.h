/* SPDX-License-Identifier: MIT */
/*
 * A death report read back from its JSON (the "actrack-death" document of
 * render_death_json(), which a journal entry keeps as ACTRACK_REPORT):
 * the members a minidump is made of.  The JSON carries no registers and
 * no stack bytes, so the death has no stacks (nr_stacks 0).
 */
#ifndef ACTRACK_CLI_DEATH_JSON_H
#define ACTRACK_CLI_DEATH_JSON_H

#include <stddef.h>
#include "actrack.h"

/*
 * death_from_json() - @d (zeroed first) from the @len bytes of @json:
 * seq, uid, signal, exit_code, core_dumped, flags, and the process's pid,
 * command line, modules (path, base, size, vaddr, build id) and threads
 * (tid, name, depth, fatal-signal record).  Members it does not know are
 * skipped; a member of the wrong type is malformed.  Free with
 * death_json_free(), also after an error.
 * Return: 0, -EBADMSG (not JSON, or no "process" object), -ENOMEM.
 */
int death_from_json(const char *json, size_t len, struct actrack_death *d);

void death_json_free(struct actrack_death *d);

#endif /* ACTRACK_CLI_DEATH_JSON_H */
