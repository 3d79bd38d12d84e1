/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/rate.c: a burst is admitted and what follows it refused until the
 * bucket refills at the rate, exactly per millisecond; keys do not share
 * buckets; a table full of refilled buckets makes room, and one full of
 * spent buckets admits rather than refuse for its own bound.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "rate.h"

static void test_burst_then_rate(void **state)
{
	struct rate *r;
	int admitted = 0;

	(void)state;
	assert_int_equal(rate_new(100, 10, 4, &r), 0);
	for (int i = 0; i < 50; i++)
		admitted += rate_admit(r, 1000, 5000);
	assert_int_equal(admitted, 10);
	/* 100 a second: one every 10 ms, none before. */
	assert_false(rate_admit(r, 1000, 5009));
	assert_true(rate_admit(r, 1000, 5010));
	assert_false(rate_admit(r, 1000, 5010));
	/* Another key has its own bucket. */
	assert_true(rate_admit(r, 1001, 5010));
	/* A long pause refills no more than the burst. */
	admitted = 0;
	for (int i = 0; i < 50; i++)
		admitted += rate_admit(r, 1000, 100000);
	assert_int_equal(admitted, 10);
	rate_free(r);
}

static void test_table_bound(void **state)
{
	struct rate *r;

	(void)state;
	assert_int_equal(rate_new(1, 2, 2, &r), 0);
	/* Two keys spend their buckets: a third finds no room, and is
	 * admitted rather than refused for the table's bound. */
	for (int i = 0; i < 3; i++) {
		rate_admit(r, 1, 0);
		rate_admit(r, 2, 0);
	}
	assert_false(rate_admit(r, 1, 0));
	assert_true(rate_admit(r, 3, 0));
	assert_true(rate_admit(r, 3, 0));
	/* Once theirs refilled, they make room: key 3 gets a bucket, spent
	 * after its burst. */
	assert_true(rate_admit(r, 4, 10000));
	assert_true(rate_admit(r, 4, 10000));
	assert_false(rate_admit(r, 4, 10000));
	rate_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_rate),
		cmocka_unit_test(test_table_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
