/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/stat's per-CPU interrupt columns (procfs_parse_cpu_irq()) and the
 * window shares and noisy set built from them (irqnoise.h).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "irqnoise.h"

static const char stat_text[] =
	"cpu  925265 2659 560014 1622420 4420 0 2594 675 0 0\n"
	"cpu0 451286 1541 288961 812450 2254 3 1633 337 0 0\n"
	"cpu2 473979 1118 271053 809970 2166 7 960 337 0 0\n"
	"intr 16209101 0 0 0\n"
	"ctxt 1\n";

static void test_parse(void **state)
{
	struct procfs_cpu_irq v[3] = { [1] = { 11, 12 } };

	(void)state;
	assert_int_equal(procfs_parse_cpu_irq(stat_text, 3, v), 0);
	assert_int_equal(v[0].irq, 3);
	assert_int_equal(v[0].softirq, 1633);
	/* CPU 1 is offline: no line, left as it was. */
	assert_int_equal(v[1].irq, 11);
	assert_int_equal(v[1].softirq, 12);
	assert_int_equal(v[2].irq, 7);
	assert_int_equal(v[2].softirq, 960);
	/* A CPU past ncpus is skipped. */
	assert_int_equal(procfs_parse_cpu_irq(stat_text, 1, v), 0);
	assert_int_equal(procfs_parse_cpu_irq("cpu0 1 2 3\n", 1, v), 0);
	assert_int_equal(procfs_parse_cpu_irq("x\ncpu0 1 2 3\n", 1, v), -EBADMSG);
	assert_int_equal(procfs_parse_cpu_irq("x\ncpu0x 1 2 3 4 5 6 7\n", 1, v), -EBADMSG);
	assert_int_equal(procfs_parse_cpu_irq("", 1, v), 0);
}

static void test_shares_and_noisy(void **state)
{
	/* 10 ms ticks, a one-second window. */
	struct procfs_cpu_irq a[3] = { { 0, 100 }, { 0, 100 }, { 5, 100 } };
	struct procfs_cpu_irq b[3] = { { 0, 100 }, { 1, 130 }, { 5, 50 } };
	struct rtplace_cpumask all, noisy;
	const struct irqnoise_cpu *c;
	struct irqnoise *n = NULL;

	(void)state;
	assert_int_equal(irqnoise_new(3, 10000000, "/nonexistent", &n), 0);
	irqnoise_update(n, a, 1000000000);
	c = irqnoise_cpus(n);
	assert_int_equal(c[1].softirq_ppm, 0);
	assert_int_equal(c[1].softirq_ns, 1000000000);
	irqnoise_update(n, b, 2000000000);
	assert_int_equal(c[0].irq_ppm + c[0].softirq_ppm, 0);
	assert_int_equal(c[1].irq_ppm, 10000);
	assert_int_equal(c[1].softirq_ppm, 300000);
	/* A counter that went back counts as no time. */
	assert_int_equal(c[2].softirq_ppm, 0);
	cpuset_zero(&all);
	for (unsigned i = 0; i < 3; i++)
		cpuset_set(&all, i);
	irqnoise_noisy(n, &all, &noisy);
	assert_false(cpuset_test(&noisy, 0));
	assert_true(cpuset_test(&noisy, 1));
	assert_false(cpuset_test(&noisy, 2));
	/* Relative to the quietest of the set asked about. */
	cpuset_clear(&all, 0);
	cpuset_clear(&all, 2);
	irqnoise_noisy(n, &all, &noisy);
	assert_true(cpuset_empty(&noisy));
	assert_int_equal(irqnoise_sample(n, 3000000000), -ENOENT);
	irqnoise_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_shares_and_noisy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
