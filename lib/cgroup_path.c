// SPDX-License-Identifier: MIT
/*
 * What a cgroup v2 path says about systemd: the unit a process ran in.
 * systemd names a unit's cgroup after the unit, so the unit is the last
 * component of the path that ends in ".service" or ".scope" (a service's
 * delegated subtree lies below it; slices, ending in ".slice", are not
 * units a process runs in).  systemd escapes a component that would
 * start with "_" or clash with a cgroup file name by prefixing "_" (its
 * cg_escape()): the unit is the name without it.
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
	const char *s = path, *best = NULL;
	size_t best_n = 0;

	if (!len)
		return 0;
	unit[0] = '\0';
	while (*s) {
		size_t n = strcspn(s, "/");
		const char *name = s;
		size_t k = n;

		if (k && name[0] == '_') {	/* escaped */
			name++;
			k--;
		}
		if (cg_unit_component(name, k, ".service") ||
		    cg_unit_component(name, k, ".scope")) {
			best = name;
			best_n = k;
		}
		s += n;
		s += strspn(s, "/");
	}
	if (!best || best_n >= len)
		return 0;
	memcpy(unit, best, best_n);
	unit[best_n] = '\0';
	return (uint32_t)best_n;
}
