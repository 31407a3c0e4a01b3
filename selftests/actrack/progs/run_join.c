// SPDX-License-Identifier: MIT
/*
 * An unmodified program for run_preload: a thread created and joined at
 * once while it blocks on a mutex its joiner holds (a deadlock of a join
 * and a lock).  Prints "joining" before it creates the thread (so that the
 * output does not give the thread time to start), then hangs until killed.
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *run_join_locker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	pthread_t t;

	puts("joining");
	fflush(stdout);
	pthread_mutex_lock(&m);
	if (pthread_create(&t, NULL, run_join_locker, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
