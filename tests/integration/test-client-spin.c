/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The "RT busy loop" of the rtplace-run tests: works in short bursts (200
 * µs) between 1 ms sleeps, so at SCHED_FIFO it is a real RT task that shows
 * up on its CPU, yet leaves that CPU ~80% free and can never starve the
 * machine. It bounds itself: it exits after SECONDS whatever happens to the
 * test that started it. Placed on CPU 0 (which the tests keep free of RT
 * spinners) it only sleeps: still an RT task there, never a load.
 */
#include "config.h"

#include <sched.h>
#include <stdbool.h>
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
	const struct timespec nap = { .tv_nsec = 1000000 };
	double end, burst;
	volatile unsigned long sink = 0;
	bool may_spin;
	cpu_set_t cpus;

	if (argc != 2 || atof(argv[1]) <= 0 || atof(argv[1]) > 60) {
		fprintf(stderr, "usage: test-client-spin SECONDS (0 < SECONDS <= 60)\n");
		return 64;
	}
	may_spin = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && !CPU_ISSET(0, &cpus);
	end = spin_now() + atof(argv[1]);
	while (spin_now() < end) {
		burst = spin_now() + 0.0002;
		while (may_spin && spin_now() < burst)
			sink++;
		nanosleep(&nap, NULL);
	}
	return 0;
}
