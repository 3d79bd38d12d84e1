/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A latency histogram as Prometheus exports one: fixed upper bounds in
 * nanoseconds, a count per bucket, the sum and the count. Observing costs
 * a scan of at most HISTOGRAM_BUCKETS bounds and no allocation; the loop
 * thread alone writes it and the metrics page (on the same loop) reads
 * it, so it needs no atomics. Pure: no syscalls.
 */
#ifndef RTPLACE_DAEMON_HISTOGRAM_H
#define RTPLACE_DAEMON_HISTOGRAM_H

#include <stdint.h>

/* The upper bounds of the query histogram's buckets, 1 us to 10 ms: the
 * daemon answers a query in tens of microseconds, and one in milliseconds
 * is what an operator alerts on. */
#define HISTOGRAM_BOUNDS_NS                                                                                \
	{ 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 10000000 }
#define HISTOGRAM_BUCKETS 12

struct histogram {
	uint64_t counts[HISTOGRAM_BUCKETS + 1]; /* per bucket, not cumulative; the last is +Inf */
	uint64_t sum_ns;
	uint64_t count;
};

extern const uint64_t histogram_bounds_ns[HISTOGRAM_BUCKETS];

/* Counts one observation of ns nanoseconds. */
void histogram_observe(struct histogram *h, uint64_t ns);

/* How many observations were at most histogram_bounds_ns[i] (i below
 * HISTOGRAM_BUCKETS), or all of them (i == HISTOGRAM_BUCKETS): Prometheus'
 * cumulative le buckets. */
uint64_t histogram_cumulative(const struct histogram *h, unsigned i);

#endif
