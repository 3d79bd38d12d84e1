/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runaway of the RealtimeKit watchdog test: busy in 50 ms bursts
 * between 100 us sleeps, so that once made RT it holds its CPU (~99%) yet
 * never runs the 200 ms without sleeping that its hard RLIMIT_RTTIME
 * allows: the case the kernel's limit misses and the watchdog is for. It
 * bounds itself: it exits after SECONDS whatever happens to the test.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double spin_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const struct timespec nap = { .tv_nsec = 100000 };
	volatile unsigned long sink = 0;
	double end, burst;

	if (argc != 2 || atof(argv[1]) <= 0 || atof(argv[1]) > 60) {
		fprintf(stderr, "usage: test-rtkit-spin SECONDS (at most 60)\n");
		return 64;
	}
	end = spin_now() + atof(argv[1]);
	while (spin_now() < end) {
		burst = spin_now() + 0.05;
		while (spin_now() < burst)
			sink++;
		nanosleep(&nap, NULL);
	}
	return 0;
}
