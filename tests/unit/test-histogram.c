/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the latency histogram (daemon/histogram.c). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "histogram.h"

/* A value on a bound counts in that bucket (le: "less or equal"); past the
 * last bound, only +Inf; the buckets are cumulative and end at the count. */
static void test_buckets(void **state)
{
	struct histogram h = { .count = 0 };

	histogram_observe(&h, 0);
	histogram_observe(&h, histogram_bounds_ns[0]);
	histogram_observe(&h, histogram_bounds_ns[0] + 1);
	histogram_observe(&h, histogram_bounds_ns[HISTOGRAM_BUCKETS - 1] + 1);
	assert_int_equal(histogram_cumulative(&h, 0), 2);
	assert_int_equal(histogram_cumulative(&h, 1), 3);
	assert_int_equal(histogram_cumulative(&h, HISTOGRAM_BUCKETS - 1), 3);
	assert_int_equal(histogram_cumulative(&h, HISTOGRAM_BUCKETS), 4);
	assert_int_equal(h.count, 4);
	assert_int_equal(h.sum_ns, 2 * histogram_bounds_ns[0] + 1 + histogram_bounds_ns[HISTOGRAM_BUCKETS - 1] + 1);
	for (unsigned i = 1; i < HISTOGRAM_BUCKETS; i++)
		assert_true(histogram_bounds_ns[i] > histogram_bounds_ns[i - 1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
