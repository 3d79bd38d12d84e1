/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the small shared pieces: levels and CPU lists. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cpuset.h"
#include "levels.h"

/* The order of DESIGN §2 is a compile-time fact. */
_Static_assert(LEVEL_OFFLINE < LEVEL_IDLE && LEVEL_IDLE < LEVEL_NORMAL && LEVEL_NORMAL < LEVEL_RT1,
	       "offline < idle < normal < rt1");
_Static_assert(LEVEL_RT99 < LEVEL_DL && LEVEL_COUNT == 103, "rt99 < dl, 103 levels");

static void test_level_order(void **state)
{
	assert_int_equal(level_from_rt_priority(1), LEVEL_RT1);
	assert_int_equal(level_from_rt_priority(99), LEVEL_RT99);
}

static void test_level_from_kernel_prio(void **state)
{
	/* sched_priority 1 is kernel prio 98, 99 is prio 0 */
	assert_int_equal(level_from_kernel_prio(98), level_from_rt_priority(1));
	assert_int_equal(level_from_kernel_prio(0), LEVEL_RT99);
	assert_int_equal(level_from_kernel_prio(49), level_from_rt_priority(50));
	assert_int_equal(level_from_kernel_prio(99), LEVEL_NORMAL);
	assert_int_equal(level_from_kernel_prio(120), LEVEL_NORMAL);
	assert_int_equal(level_from_kernel_prio(-1), LEVEL_DL);
	assert_int_equal(level_rt_priority(level_from_rt_priority(42)), 42);
	assert_int_equal(level_rt_priority(LEVEL_NORMAL), 0);
}

static void test_level_names(void **state)
{
	char buf[LEVEL_NAME_MAX];
	__u32 l;

	for (__u32 level = 0; level < LEVEL_COUNT; level++) {
		assert_int_equal(level_parse(level_name(level, buf), &l), 0);
		assert_int_equal(l, level);
	}
	assert_string_equal(level_name(level_from_rt_priority(7), buf), "rt7");
	assert_string_equal(level_name(LEVEL_COUNT, buf), "?");
	assert_int_equal(level_parse("rt0", &l), -EINVAL);
	assert_int_equal(level_parse("rt100", &l), -EINVAL);
	assert_int_equal(level_parse("rt5x", &l), -EINVAL);
	assert_int_equal(level_parse("", &l), -EINVAL);
}

static void test_cpuset_parse_format(void **state)
{
	struct rtplace_cpumask s, t;
	char buf[CPUSET_LIST_MAX];

	assert_int_equal(cpuset_parse("0-3,8,10-11", &s), 0);
	assert_int_equal(cpuset_count(&s), 7);
	assert_true(cpuset_test(&s, 8));
	assert_false(cpuset_test(&s, 9));
	assert_int_equal(cpuset_format(&s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0-3,8,10-11");
	_Static_assert(RTPLACE_MAX_CPUS == 8192, "the lists below name the last CPU and the one past it");
	assert_int_equal(cpuset_parse("8191", &t), 0);
	assert_int_equal(cpuset_next(&t, 0), 8191);
	assert_int_equal(cpuset_parse("1023-1024,8191", &t), 0);
	assert_int_equal(cpuset_count(&t), 3);
	assert_int_equal(cpuset_parse("8192", &t), -ERANGE);
	assert_int_equal(cpuset_parse("3-1", &t), -EINVAL);
	assert_int_equal(cpuset_parse("1,,2", &t), -EINVAL);
	assert_int_equal(cpuset_parse("a", &t), -EINVAL);
	assert_int_equal(cpuset_parse("", &t), -EINVAL);
	assert_int_equal(cpuset_parse("-1", &t), -EINVAL);
	assert_int_equal(cpuset_format(&s, buf, 4), -ENOSPC);
}

/*
 * The bounded set arithmetic (cpuset_*_n()): each reads and writes the
 * first nwords words only, against a CPU-by-CPU reckoning, over sets that
 * cross word boundaries; a shifted or drops what leaves the words.
 */
static void test_cpuset_bounded(void **state)
{
	struct rtplace_cpumask a, b, out, want;
	const unsigned nw = 3; /* CPUs 0..191 */

	(void)state;
	assert_int_equal(cpuset_parse("0,5,63-65,127,128,190-191,200", &a), 0);
	assert_int_equal(cpuset_parse("5,64,128-130,191,200", &b), 0);
	assert_int_equal(cpuset_count_n(&a, nw), 9);
	assert_int_equal(cpuset_count_and_n(&a, &b, nw), 4);
	assert_true(cpuset_at_least_n(&a, 9, nw));
	assert_false(cpuset_at_least_n(&a, 10, nw));
	assert_true(cpuset_intersects_n(&a, &b, nw));
	/* Past the words: a and b share 64 and 200, neither in word 0. */
	cpuset_clear(&b, 5);
	assert_false(cpuset_intersects_n(&a, &b, 1));
	cpuset_set(&b, 5);
	cpuset_zero(&out);
	cpuset_set(&out, 200);
	assert_true(cpuset_empty_n(&out, nw));
	cpuset_set(&out, 191);
	assert_false(cpuset_empty_n(&out, nw));
	cpuset_zero(&out);
	cpuset_set(&out, 192);
	/* The last word through its mask: CPUs 0..129 exist. */
	assert_true(cpuset_empty_below(&out, nw, (UINT64_C(1) << 2) - 1));
	cpuset_set(&out, 129);
	assert_false(cpuset_empty_below(&out, nw, (UINT64_C(1) << 2) - 1));
	cpuset_clear(&out, 129);
	cpuset_set(&out, 130);
	assert_true(cpuset_empty_below(&out, nw, (UINT64_C(1) << 2) - 1));
	cpuset_set(&out, 1);
	assert_false(cpuset_empty_below(&out, nw, (UINT64_C(1) << 2) - 1));
	/* and, and-not, or, copy, zero: the words past nw stay as they were. */
	memset(&out, 0xff, sizeof(out));
	cpuset_and_n(&out, &a, &b, nw);
	assert_int_equal(cpuset_next_n(&out, 0, nw), 5);
	assert_int_equal(cpuset_next_n(&out, 6, nw), 64);
	assert_int_equal(cpuset_next_n(&out, 65, nw), 128);
	assert_int_equal(cpuset_next_n(&out, 129, nw), 191);
	assert_int_equal(cpuset_next_n(&out, 192, nw), -1);
	assert_true(out.bits[nw] == ~UINT64_C(0));
	cpuset_andnot_n(&out, &a, &b, nw);
	assert_int_equal(cpuset_count_n(&out, nw), 5);
	assert_true(cpuset_test(&out, 0) && cpuset_test(&out, 63) && cpuset_test(&out, 65) && cpuset_test(&out, 127) &&
		    cpuset_test(&out, 190));
	cpuset_or_n(&out, &a, &b, nw);
	assert_int_equal(cpuset_count_n(&out, nw), 11);
	cpuset_copy_n(&out, &b, nw);
	assert_int_equal(cpuset_count_n(&out, nw), 6);
	cpuset_zero_n(&out, nw);
	assert_true(cpuset_empty_n(&out, nw) && out.bits[nw] == ~UINT64_C(0));
	/* Shifted or, both ways and across words, against the CPUs one by one. */
	for (int d = -130; d <= 130; d += 13) {
		cpuset_zero(&out);
		cpuset_zero(&want);
		cpuset_set(&out, 7);
		cpuset_set(&want, 7);
		CPUSET_FOREACH(c, &a)
			if ((unsigned)c < nw * 64 && c + d >= 0 && (unsigned)(c + d) < nw * 64)
				cpuset_set(&want, (unsigned)(c + d));
		cpuset_or_shifted_n(&out, &a, d, nw);
		assert_true(cpuset_equal(&out, &want));
	}
	assert_int_equal(cpuset_word_count(~UINT64_C(0)), 64);
	assert_int_equal(cpuset_word_count(UINT64_C(0x8000000000000001)), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_order),
		cmocka_unit_test(test_level_from_kernel_prio),
		cmocka_unit_test(test_level_names),
		cmocka_unit_test(test_cpuset_parse_format),
		cmocka_unit_test(test_cpuset_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
