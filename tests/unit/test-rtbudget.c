/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the RT budget diagnosis (common/rtbudget.c): the cpu line
 * of /proc/TID/cgroup as the kernel writes it, and fixture cgroup trees
 * with and without budgets. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rtbudget.h"
#include "testlib.h"

static void write_file(const char *rel, const char *text)
{
	assert_int_equal(test_write_fixture(test_fixture_root, rel, text), 0);
}

static void test_parse_cgroup(void **state)
{
	char folder[PATH_MAX];

	/* Hybrid v1: cpu on its own, beside the v2 line. */
	assert_int_equal(rtbudget_parse_cgroup("2:cpuacct:/\n1:cpu:/rt/app\n0::/\n", "/r", folder, sizeof(folder)), 0);
	assert_string_equal(folder, "/r/cpu/rt/app");
	/* Co-mounted: the folder is named by the whole list. */
	assert_int_equal(rtbudget_parse_cgroup("3:cpu,cpuacct:/a\n", "/r", folder, sizeof(folder)), 0);
	assert_string_equal(folder, "/r/cpu,cpuacct/a");
	assert_int_equal(rtbudget_parse_cgroup("1:cpu:/\n", "/r", folder, sizeof(folder)), 0);
	assert_string_equal(folder, "/r/cpu");
	/* cpuset and cpuacct are not cpu; v2 alone has no budget files. */
	assert_int_equal(rtbudget_parse_cgroup("3:cpuset:/a\n2:cpuacct:/a\n0::/a\n", "/r", folder, sizeof(folder)),
			 -ENOENT);
	assert_int_equal(rtbudget_parse_cgroup("", "/r", folder, sizeof(folder)), -ENOENT);
	assert_int_equal(rtbudget_parse_cgroup("garbage\n1:cpu:/a\n", "/r", folder, sizeof(folder)), -EBADMSG);
	assert_int_equal(rtbudget_parse_cgroup("1:cpu:/a\n", "/r", folder, 8), -ENAMETOOLONG);
}

static void test_find_zero(void **state)
{
	struct rtbudget_finding f;
	struct rtplace_reason why;
	char want[PATH_MAX * 2];

	write_file("cpu/cpu.rt_runtime_us", "950000\n");
	write_file("cpu/rt/cpu.rt_runtime_us", "400000\n");
	write_file("cpu/rt/app/cpu.rt_runtime_us", "0\n");
	assert_int_equal(rtbudget_find("1:cpu:/rt/app\n0::/\n", test_fixture_root, &f), 0);
	snprintf(want, sizeof(want), "%s/cpu/rt/app", test_fixture_root);
	assert_string_equal(f.folder, want);
	assert_string_equal(f.first, "");
	assert_int_equal(f.budget_us, 400000);
	rtbudget_explain(&f, &why);
	assert_true(!strncmp(why.text, RTBUDGET_REASON_PREFIX, strlen(RTBUDGET_REASON_PREFIX)));
	snprintf(want, sizeof(want), "echo 400000 > %s/cpu/rt/app/cpu.rt_runtime_us", test_fixture_root);
	assert_non_null(strstr(why.text, want));
	assert_non_null(strstr(why.text, "--cpu-rt-runtime"));
}

/* A parent without a budget is named: it must be given one first. */
static void test_find_parent_zero(void **state)
{
	struct rtbudget_finding f;
	struct rtplace_reason why;
	char want[PATH_MAX * 2];

	write_file("cpu/cpu.rt_runtime_us", "950000\n");
	write_file("cpu/a/cpu.rt_runtime_us", "0\n");
	write_file("cpu/a/b/cpu.rt_runtime_us", "0\n");
	write_file("cpu/a/b/c/cpu.rt_runtime_us", "0\n");
	assert_int_equal(rtbudget_find("1:cpu:/a/b/c\n", test_fixture_root, &f), 0);
	snprintf(want, sizeof(want), "%s/cpu/a", test_fixture_root);
	assert_string_equal(f.first, want);
	assert_int_equal(f.budget_us, 950000);
	rtbudget_explain(&f, &why);
	snprintf(want, sizeof(want), "give %s/cpu/a and each folder below it a budget", test_fixture_root);
	assert_non_null(strstr(why.text, want));
}

static void test_find_not_the_cause(void **state)
{
	struct rtbudget_finding f = { .budget_us = 7 };

	write_file("cpu/cpu.rt_runtime_us", "950000\n");
	write_file("cpu/ok/cpu.rt_runtime_us", "10000\n");
	write_file("cpu/unlimited/cpu.rt_runtime_us", "-1\n");
	write_file("cpu/bad/cpu.rt_runtime_us", "lots\n");
	assert_int_equal(rtbudget_find("1:cpu:/ok\n", test_fixture_root, &f), -ENOENT);
	assert_int_equal(rtbudget_find("1:cpu:/unlimited\n", test_fixture_root, &f), -ENOENT);
	assert_int_equal(rtbudget_find("0::/ok\n", test_fixture_root, &f), -ENOENT);
	/* A kernel without RT group scheduling has no such file. */
	assert_int_equal(rtbudget_find("1:cpu:/missing\n", test_fixture_root, &f), -ENOENT);
	assert_int_equal(rtbudget_find("1:cpu:/bad\n", test_fixture_root, &f), -EBADMSG);
	assert_int_equal(f.budget_us, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_cgroup),
		cmocka_unit_test_setup_teardown(test_find_zero, test_fixture_setup, test_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_find_parent_zero, test_fixture_setup, test_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_find_not_the_cause, test_fixture_setup, test_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
