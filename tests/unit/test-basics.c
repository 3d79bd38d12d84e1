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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_order),
		cmocka_unit_test(test_level_from_kernel_prio),
		cmocka_unit_test(test_level_names),
		cmocka_unit_test(test_cpuset_parse_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
