// SPDX-License-Identifier: MIT
/*
 * What a cgroup v2 path says about systemd: the unit a process ran in,
 * as systemd itself reads it (cg_path_get_unit()): the path is slices
 * (components ending in ".slice") down to the unit, and the unit is the
 * first component below them, if it ends in ".service" or ".scope".  What
 * lies below a unit (a service's delegated subtree, a container's own
 * slices and units, a user manager's units below user@UID.service) is
 * not the unit: the host's `journalctl -u` knows the process by the unit
 * the host started.  Components ".." (a path seen from a cgroup namespace
 * beside the process's) are skipped.  systemd escapes a component that
 * would start with "_" or clash with a cgroup file name by prefixing "_"
 * (its cg_escape()): the unit is the name without it.
 */
#include <string.h>

#include "internal.h"

/* Does the component [@s, @s + @n) end in @suffix after a name? */
static bool cg_unit_component(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && !memcmp(s + n - k, suffix, k);
}

uint32_t __actrack_cgroup_unit(const char *path, char *unit, size_t len)
{
	const char *s = path;

	if (!len)
		return 0;
	unit[0] = '\0';
	for (s += strspn(s, "/"); *s; s += strspn(s, "/")) {
		size_t n = strcspn(s, "/");
		const char *name = s;
		size_t k = n;

		s += n;
		if (n == 2 && !memcmp(name, "..", 2))
			continue;
		if (name[0] == '_') {	/* escaped */
			name++;
			k--;
		}
		if (cg_unit_component(name, k, ".slice"))
			continue;
		if ((!cg_unit_component(name, k, ".service") &&
		     !cg_unit_component(name, k, ".scope")) || k >= len)
			return 0;
		memcpy(unit, name, k);
		unit[k] = '\0';
		return (uint32_t)k;
	}
	return 0;
}
