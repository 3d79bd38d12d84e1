/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A multi-threaded process for the `rtplacectl move --all` tests: the main
 * thread and NTHREADS - 1 more, all asleep. With "deadline", the last
 * thread started makes itself SCHED_DEADLINE (1 ms every 100 ms, never
 * used: it sleeps): the kernel then refuses to narrow that thread's
 * affinity below its root domain (EBUSY), a real limit that makes a
 * process-wide move fail at its last thread, after the others moved.
 * Prints "ready" once every thread runs as described, and exits by itself
 * after 60 s whatever happens to the test.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

/* The kernel's struct sched_attr (glibc 2.36 has no wrapper). */
struct threads_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t threads_cond = PTHREAD_COND_INITIALIZER;
static int threads_started;
static int threads_error;

static void *threads_sleeper(void *arg)
{
	int err = 0;

	if (arg) {
		struct threads_sched_attr a = {
			.size = sizeof(a),
			.sched_policy = SCHED_DEADLINE,
			.sched_runtime = 1000000,
			.sched_deadline = 100000000,
			.sched_period = 100000000,
		};

		if (syscall(SYS_sched_setattr, 0, &a, 0) < 0)
			err = errno;
	}
	pthread_mutex_lock(&threads_lock);
	threads_started++;
	if (err)
		threads_error = err;
	pthread_cond_signal(&threads_cond);
	pthread_mutex_unlock(&threads_lock);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc >= 2 ? atoi(argv[1]) : 0;
	int deadline = argc == 3 && strcmp(argv[2], "deadline") == 0;

	if (n < 2 || n > 64 || (argc == 3 && !deadline) || argc > 3) {
		fprintf(stderr, "usage: test-client-threads NTHREADS [deadline] (2 <= NTHREADS <= 64)\n");
		return 64;
	}
	alarm(60);
	for (int i = 1; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, threads_sleeper, deadline && i == n - 1 ? (void *)1 : NULL) != 0) {
			fprintf(stderr, "test-client-threads: cannot start a thread\n");
			return 71;
		}
		/* One at a time: /proc lists them in this order. */
		pthread_mutex_lock(&threads_lock);
		while (threads_started < i)
			pthread_cond_wait(&threads_cond, &threads_lock);
		pthread_mutex_unlock(&threads_lock);
	}
	if (threads_error) {
		fprintf(stderr, "test-client-threads: cannot make a thread SCHED_DEADLINE: %s\n", strerror(threads_error));
		return 77;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
