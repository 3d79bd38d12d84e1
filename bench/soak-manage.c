/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A process with many threads for bench/soak.sh's manage floods:
 *
 *   bench/soak-manage NTHREADS SECONDS [SOCKET]
 *
 * starts NTHREADS - 1 threads that sleep (small stacks: a flood of a few
 * thousand stays a few dozen MiB), then, given SOCKET, asks rtplaced for a
 * MANAGE claim owned by itself, all its threads already running (the dear
 * case for the daemon: every thread is there to list and watch), and
 * prints one line,
 *
 *   claim ID us MICROSECONDS reason TEXT     granted ("-" for no reason)
 *   refused ERRNO us MICROSECONDS reason TEXT
 *
 * the time from the request to the reply. Without SOCKET it prints
 * "ready" (for `rtplace-run --manage -- soak-manage N S`, where the claim
 * is rtplace-run's). Either way it then sleeps SECONDS and exits, the
 * claim ending with it; an alarm of SECONDS + 10 ends it whatever the
 * soak does.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchlib.h"
#include "rtplace.h"

#define SOAK_THREADS_MAX 8192
#define SOAK_SECONDS_MAX 3600
/* The kernel's own stack and guard page come on top; sleepers need little. */
#define SOAK_STACK (32 * 1024)

static pthread_mutex_t soak_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t soak_cond = PTHREAD_COND_INITIALIZER;
static int soak_started;

static void *soak_sleeper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&soak_lock);
	soak_started++;
	pthread_cond_signal(&soak_cond);
	pthread_mutex_unlock(&soak_lock);
	for (;;)
		pause();
	return NULL;
}

static int soak_parse(const char *s, long lo, long hi, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*ret = v;
	return 0;
}

static void soak_print_reason(const char *text)
{
	printf(" reason %s\n", text[0] ? text : "-");
}

static int soak_claim(const char *path)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_answer *ans = malloc(sizeof(*ans));
	struct rtplace *rp = NULL;
	char reason[RTPLACE_REASON_LEN] = "";
	uint64_t t0 = 0, t1 = 0;
	int r = -ENOMEM;

	if (!ans)
		goto out;
	req.flags = RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_MANAGE | RTPLACE_QUERY_F_NORMAL;
	req.lease_ms = RTPLACE_LEASE_INFINITE;
	req.owner_pid = getpid();
	r = rtplace_connect(path, &rp);
	if (r == 0) {
		t0 = bench_now_ns();
		r = rtplace_query(rp, &req, ans);
		t1 = bench_now_ns();
	}
	if (r == 0) {
		printf("claim %llu us %llu", (unsigned long long)ans->claim_id, (unsigned long long)((t1 - t0) / 1000));
		soak_print_reason(ans->reason);
	} else {
		if (rp && rtplace_last_reason(rp, reason, sizeof(reason)) < 0)
			reason[0] = '\0';
		printf("refused %d us %llu", -r, (unsigned long long)((t1 - t0) / 1000));
		soak_print_reason(reason[0] ? reason : strerror(-r));
	}
	/* The claim is the process's: the connection may go. */
	rtplace_close(rp);
out:
	free(ans);
	return r;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	long n, seconds;

	if (argc < 3 || argc > 4 || soak_parse(argv[1], 1, SOAK_THREADS_MAX, &n) < 0 ||
	    soak_parse(argv[2], 1, SOAK_SECONDS_MAX, &seconds) < 0) {
		fprintf(stderr, "usage: soak-manage NTHREADS SECONDS [SOCKET] (1 <= NTHREADS <= %d, "
				"1 <= SECONDS <= %d)\n", SOAK_THREADS_MAX, SOAK_SECONDS_MAX);
		return 64;
	}
	alarm((unsigned)seconds + 10);
	if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, SOAK_STACK) != 0) {
		fprintf(stderr, "soak-manage: cannot set a thread stack size\n");
		return 71;
	}
	for (long i = 1; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, &attr, soak_sleeper, NULL) != 0) {
			fprintf(stderr, "soak-manage: cannot start thread %ld of %ld\n", i + 1, n);
			return 71;
		}
	}
	pthread_mutex_lock(&soak_lock);
	while (soak_started < n - 1)
		pthread_cond_wait(&soak_cond, &soak_lock);
	pthread_mutex_unlock(&soak_lock);
	if (argc == 4)
		soak_claim(argv[3]);
	else
		printf("ready\n");
	fflush(stdout);
	sleep((unsigned)seconds);
	return 0;
}
