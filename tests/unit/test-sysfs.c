/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the reader of sysfs CPU list files (common/sysfs.c): the
 * isolation files on fixture trees, as the kernel writes them, missing, and
 * garbage. */
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

#include "sysfs.h"
#include "testlib.h"

static void write_file(const char *rel, const char *text)
{
	assert_int_equal(test_write_fixture(test_fixture_root, rel, text), 0);
}

static void assert_set(const struct rtplace_cpumask *s, const char *list)
{
	struct rtplace_cpumask want;

	if (list[0])
		assert_int_equal(cpuset_parse(list, &want), 0);
	else
		cpuset_zero(&want);
	assert_true(cpuset_equal(s, &want));
}

static void test_parse_cpulist(void **state)
{
	struct rtplace_cpumask s;

	assert_int_equal(sysfs_parse_cpulist("2-7\n", &s), 0);
	assert_set(&s, "2-7");
	assert_int_equal(sysfs_parse_cpulist("\n", &s), 0);
	assert_set(&s, "");
	assert_int_equal(sysfs_parse_cpulist("(null)\n", &s), 0);
	assert_set(&s, "");
	/* Padded to the CPU count's width, as an 8-CPU 6.12-rt guest prints it. */
	assert_int_equal(sysfs_parse_cpulist("  (null)\n", &s), 0);
	assert_set(&s, "");
	assert_int_equal(sysfs_parse_cpulist("  (nul)\n", &s), -EINVAL);
	assert_int_equal(sysfs_parse_cpulist("1,3-4", &s), 0);
	assert_set(&s, "1,3-4");
	assert_int_equal(sysfs_parse_cpulist("2-x\n", &s), -EINVAL);
	assert_int_equal(sysfs_parse_cpulist("2-7\n8\n", &s), -EINVAL);
	assert_int_equal(sysfs_parse_cpulist("0-99999\n", &s), -EINVAL);
	assert_set(&s, "1,3-4");
}

/* The guest of the VM test bed: isolcpus=domain,managed_irq,2-7 nohz_full=2-7. */
static void test_isolation_boot(void **state)
{
	struct sysfs_isolation iso;
	struct rtplace_reason reason;

	write_file("devices/system/cpu/isolated", "2-7\n");
	write_file("devices/system/cpu/nohz_full", "2-7\n");
	assert_int_equal(sysfs_read_isolation(test_fixture_root, &reason, &iso), 0);
	assert_set(&iso.isolated, "2-7");
	assert_set(&iso.nohz_full, "2-7");
	assert_set(&iso.partitions, "");
}

/* An isolated cgroup v2 partition adds its CPUs to the isolated set. */
static void test_isolation_partition(void **state)
{
	struct sysfs_isolation iso;
	struct rtplace_reason reason;

	write_file("devices/system/cpu/isolated", "\n");
	write_file("devices/system/cpu/nohz_full", "(null)\n");
	write_file("fs/cgroup/cpuset.cpus.isolated", "5-6\n");
	assert_int_equal(sysfs_read_isolation(test_fixture_root, &reason, &iso), 0);
	assert_set(&iso.isolated, "5-6");
	assert_set(&iso.partitions, "5-6");
	assert_set(&iso.nohz_full, "");
}

/* A kernel without the files (or a root without them) isolates nothing. */
static void test_isolation_missing(void **state)
{
	struct sysfs_isolation iso;
	struct rtplace_reason reason;

	assert_int_equal(sysfs_read_isolation(test_fixture_root, &reason, &iso), 0);
	assert_true(cpuset_empty(&iso.isolated));
	assert_true(cpuset_empty(&iso.nohz_full));
	assert_int_equal(sysfs_read_cpulist(test_fixture_root, "isolated", &iso.isolated), -ENOENT);
}

/* Garbage is refused, naming the file, and nothing is half-read. */
static void test_isolation_garbage(void **state)
{
	struct sysfs_isolation iso;
	struct rtplace_reason reason;

	cpuset_zero(&iso.isolated);
	cpuset_set(&iso.isolated, 1);
	write_file("devices/system/cpu/isolated", "2-7\n");
	write_file("devices/system/cpu/nohz_full", "two to seven\n");
	assert_int_equal(sysfs_read_isolation(test_fixture_root, &reason, &iso), -EINVAL);
	assert_non_null(strstr(reason.text, "devices/system/cpu/nohz_full is not a CPU list"));
	assert_set(&iso.isolated, "1");
	write_file("devices/system/cpu/nohz_full", "2-7\n");
	write_file("fs/cgroup/cpuset.cpus.isolated", "7-2\n");
	assert_int_equal(sysfs_read_isolation(test_fixture_root, &reason, &iso), -EINVAL);
	assert_non_null(strstr(reason.text, "cpuset.cpus.isolated"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_cpulist),
		cmocka_unit_test_setup_teardown(test_isolation_boot, test_fixture_setup, test_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_isolation_partition, test_fixture_setup, test_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_isolation_missing, test_fixture_setup, test_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_isolation_garbage, test_fixture_setup, test_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
