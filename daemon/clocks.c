/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <time.h>

#include "clocks.h"

static uint64_t clocks_read_ns(clockid_t id)
{
	struct timespec ts;

	/* Only an invalid clock id fails, and every id here is the kernel's
	 * own since 2.6.39. */
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t clocks_monotonic_ns(void)
{
	return clocks_read_ns(CLOCK_MONOTONIC);
}

uint64_t clocks_boot_time_ns(void)
{
	return clocks_read_ns(CLOCK_REALTIME) - clocks_read_ns(CLOCK_BOOTTIME);
}

uint64_t clocks_boottime_ns(void)
{
	return clocks_read_ns(CLOCK_BOOTTIME);
}

uint64_t clocks_thread_cpu_ns(void)
{
	return clocks_read_ns(CLOCK_THREAD_CPUTIME_ID);
}
