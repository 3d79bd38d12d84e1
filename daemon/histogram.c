/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "histogram.h"

const uint64_t histogram_bounds_ns[HISTOGRAM_BUCKETS] = HISTOGRAM_BOUNDS_NS;
_Static_assert(sizeof((uint64_t[])HISTOGRAM_BOUNDS_NS) == sizeof(histogram_bounds_ns),
	       "HISTOGRAM_BUCKETS counts the bounds");

void histogram_observe(struct histogram *h, uint64_t ns)
{
	unsigned i = 0;

	while (i < HISTOGRAM_BUCKETS && ns > histogram_bounds_ns[i])
		i++;
	h->counts[i]++;
	h->sum_ns += ns;
	h->count++;
}

uint64_t histogram_cumulative(const struct histogram *h, unsigned i)
{
	uint64_t n = 0;

	for (unsigned j = 0; j <= i && j <= HISTOGRAM_BUCKETS; j++)
		n += h->counts[j];
	return n;
}
