// SPDX-License-Identifier: MIT
/*
 * An unmodified program for run_preload: a process that never has a
 * second thread locks a normal mutex it already holds (a self-deadlock).
 * Before it, it locks and unlocks another mutex and takes the first one,
 * both free: the locks a single-threaded process takes without looking
 * twice.  Prints "relocking" before the second lock, then hangs until
 * killed.
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t other = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

/* Blocks in a call of its own: its origin names it. */
static int __attribute__((noinline)) run_selflock_again(void)
{
	return pthread_mutex_lock(&m) + 1;
}

int main(void)
{
	pthread_mutex_lock(&other);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&other);
	puts("relocking");
	fflush(stdout);
	return run_selflock_again();
}
