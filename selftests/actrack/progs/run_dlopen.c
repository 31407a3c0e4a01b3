// SPDX-License-Identifier: MIT
/*
 * An unmodified program for run_preload: loads the library LIB with
 * dlopen() after it started and calls its function `run_plugin` (which the
 * test builds: it prints "loaded" and reads stdin until it is closed).
 *
 *   run_dlopen LIB
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void (*fn)(void);
	void *h;

	if (argc < 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&fn = dlsym(h, "run_plugin");
	if (!fn)
		return 1;
	fn();
	dlclose(h);
	return 0;
}
