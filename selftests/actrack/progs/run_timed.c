// SPDX-License-Identifier: MIT
/*
 * An unmodified program for run_preload: it blocks in one timed wait, as
 * argv[1] names it, with a deadline 1000 s from now, on a lock another
 * thread holds, a semaphore at 0 or a condition nobody signals.  Prints
 * "deadline CLOCK SEC NSEC" (the clock's id and the absolute deadline)
 * before the wait, then waits until killed (or the deadline).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sem_t s;
static int writer;
static sem_t held;

/* Holds the mutex or the rwlock (as a reader, or a writer) for ever. */
static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	if (writer)
		pthread_rwlock_wrlock(&rw);
	else
		pthread_rwlock_rdlock(&rw);
	sem_post(&held);
	for (;;)
		pause();
	return NULL;
}

static struct timespec deadline(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	t.tv_sec += 1000;
	printf("deadline %d %lld %ld\n", (int)clk, (long long)t.tv_sec,
	       t.tv_nsec);
	fflush(stdout);
	return t;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	pthread_condattr_t ca;
	struct timespec t;
	pthread_t th;

	writer = !strcmp(how, "rwlock_timedrdlock");
	sem_init(&s, 0, 0);
	sem_init(&held, 0, 0);
	if (pthread_create(&th, NULL, holder, NULL))
		return 1;
	while (sem_wait(&held))
		;
	if (!strcmp(how, "mutex_timedlock")) {
		t = deadline(CLOCK_REALTIME);
		pthread_mutex_timedlock(&m, &t);
	} else if (!strcmp(how, "mutex_clocklock")) {
		t = deadline(CLOCK_MONOTONIC);
		pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &t);
	} else if (!strcmp(how, "rwlock_timedwrlock")) {
		t = deadline(CLOCK_REALTIME);
		pthread_rwlock_timedwrlock(&rw, &t);
	} else if (!strcmp(how, "rwlock_timedrdlock")) {
		t = deadline(CLOCK_REALTIME);
		pthread_rwlock_timedrdlock(&rw, &t);
	} else if (!strcmp(how, "cond_timedwait")) {
		pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;

		pthread_mutex_lock(&own);
		t = deadline(CLOCK_REALTIME);
		pthread_cond_timedwait(&c, &own, &t);
	} else if (!strcmp(how, "cond_timedwait_monotonic")) {
		pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&c, &ca);
		pthread_mutex_lock(&own);
		t = deadline(CLOCK_MONOTONIC);
		pthread_cond_timedwait(&c, &own, &t);
	} else if (!strcmp(how, "cond_clockwait")) {
		pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;

		pthread_mutex_lock(&own);
		t = deadline(CLOCK_MONOTONIC);
		pthread_cond_clockwait(&c, &own, CLOCK_MONOTONIC, &t);
	} else if (!strcmp(how, "sem_timedwait")) {
		t = deadline(CLOCK_REALTIME);
		sem_timedwait(&s, &t);
	} else if (!strcmp(how, "sem_clockwait")) {
		t = deadline(CLOCK_MONOTONIC);
		sem_clockwait(&s, CLOCK_MONOTONIC, &t);
	} else {
		return 2;
	}
	return 0;
}
