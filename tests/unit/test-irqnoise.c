/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/stat's per-CPU interrupt columns (procfs_parse_cpu_irq()) and the
 * window shares and noisy set built from them (irqnoise.h), with the CPU
 * time of interrupt threads counted as hardirq time: by the pure
 * bookkeeping, and read from a proc tree written here.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "irqnoise.h"
#include "testlib.h"

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

static struct rtplace_cpumask all_of(unsigned ncpus)
{
	struct rtplace_cpumask all;

	cpuset_zero(&all);
	for (unsigned i = 0; i < ncpus; i++)
		cpuset_set(&all, i);
	return all;
}

/*
 * A threaded handler's CPU time is its CPU's hardirq time: 30 ticks of
 * 10 ms in a one-second window are 30% of CPU 2, which is then noisy,
 * while /proc/stat's columns stay still. A pid taken by another thread
 * (a new start time) only sets the base, and so does a thread first seen.
 */
static void test_thread_time_is_irq_time(void **state)
{
	const struct procfs_cpu_irq still[3] = { { 0, 100 }, { 0, 100 }, { 0, 100 } };
	struct rtplace_cpumask all = all_of(3), noisy;
	const struct irqnoise_cpu *c;
	struct irqnoise *n = NULL;

	(void)state;
	assert_int_equal(irqnoise_new(3, 10000000, "/nonexistent", &n), 0);
	c = irqnoise_cpus(n);
	assert_int_equal(irqnoise_thread_seen(n, 40, 7, 2, 100), 0);
	irqnoise_update(n, still, 1000000000);
	assert_int_equal(irqnoise_thread_seen(n, 40, 7, 2, 130), 0);
	irqnoise_update(n, still, 2000000000);
	assert_int_equal(c[2].irq_ppm, 300000);
	assert_int_equal(c[2].softirq_ppm, 0);
	assert_int_equal(c[0].irq_ppm + c[1].irq_ppm, 0);
	/* The counter stays /proc/stat's (the metrics export it as such). */
	assert_int_equal(c[2].irq_ns, 0);
	irqnoise_noisy(n, &all, &noisy);
	assert_true(cpuset_test(&noisy, 2));
	assert_false(cpuset_test(&noisy, 0));
	/* Another thread on pid 40, with less time than the first had. */
	assert_int_equal(irqnoise_thread_seen(n, 40, 8, 2, 5), 0);
	assert_int_equal(irqnoise_thread_seen(n, 41, 9, 1, 500), 0);
	irqnoise_update(n, still, 3000000000);
	assert_int_equal(c[2].irq_ppm + c[1].irq_ppm, 0);
	/* The new one's time counts from its base, on the CPU it ran on last. */
	assert_int_equal(irqnoise_thread_seen(n, 40, 8, 0, 15), 0);
	irqnoise_update(n, still, 4000000000);
	assert_int_equal(c[0].irq_ppm, 100000);
	assert_int_equal(c[2].irq_ppm, 0);
	irqnoise_free(n);
}

static char root[64];

static void write_file(const char *rel, const char *text)
{
	assert_int_equal(test_write_fixture(root, rel, text), 0);
}

/* A kernel thread's stat line (52 fields): the given comm, user and
 * system ticks (14, 15), start time (22) and processor (39). */
static void write_kthread(int pid, const char *comm, unsigned utime, unsigned stime, unsigned start, int cpu)
{
	char rel[32], line[1024];

	snprintf(line, sizeof(line),
		 "%d (%s) S 2 0 0 0 -1 2129984 0 0 0 0 %u %u 0 0 -51 0 1 0 %u 0 0 "
		 "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 %d 50 1 0 0 0 0 0 0 0 0 0 0 0\n",
		 pid, comm, utime, stime, start, cpu);
	snprintf(rel, sizeof(rel), "%d/stat", pid);
	write_file(rel, line);
	snprintf(line, sizeof(line), "%s\n", comm);
	snprintf(rel, sizeof(rel), "%d/comm", pid);
	write_file(rel, line);
}

/*
 * irqnoise_sample() on a proc tree: kthreadd's children are an interrupt
 * thread on CPU 1, a timer thread and a child already gone; the interrupt
 * thread's 50 ticks in a second are half of CPU 1, the timer thread's
 * time is no interrupt's. Once the thread is gone it is forgotten, and
 * the sample still reads /proc/stat.
 */
static void test_sample_reads_irq_threads(void **state)
{
	static const char tree_stat[] = "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 1 0 1 10 0 0 4 0 0 0\n"
					"cpu1 1 0 1 10 0 0 4 0 0 0\nintr 1\n";
	struct rtplace_cpumask all = all_of(2), noisy;
	const struct irqnoise_cpu *c;
	struct irqnoise *n = NULL;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/rtplace-test-irqnoise.XXXXXX");
	assert_non_null(mkdtemp(root));
	write_file("stat", tree_stat);
	write_file("2/task/2/children", "40 41 42 ");
	write_kthread(40, "irq/24-virtio0", 0, 10, 900, 1);
	write_kthread(41, "ktimers/0", 0, 10, 901, 0);
	assert_int_equal(irqnoise_new(2, 10000000, root, &n), 0);
	c = irqnoise_cpus(n);
	assert_int_equal(irqnoise_sample(n, 1000000000), 0);
	write_kthread(40, "irq/24-virtio0", 0, 60, 900, 1);
	write_kthread(41, "ktimers/0", 0, 90, 901, 0);
	assert_int_equal(irqnoise_sample(n, 2000000000), 0);
	assert_int_equal(c[1].irq_ppm, 500000);
	assert_int_equal(c[0].irq_ppm, 0);
	irqnoise_noisy(n, &all, &noisy);
	assert_true(cpuset_test(&noisy, 1));
	assert_false(cpuset_test(&noisy, 0));
	assert_int_equal(test_fixture_remove(root), 0);
	assert_int_equal(mkdir(root, 0700), 0);
	write_file("stat", tree_stat);
	assert_int_equal(irqnoise_sample(n, 3000000000), 0);
	assert_int_equal(c[1].irq_ppm, 0);
	irqnoise_free(n);
	assert_int_equal(test_fixture_remove(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_shares_and_noisy),
		cmocka_unit_test(test_thread_time_is_irq_time),
		cmocka_unit_test(test_sample_reads_irq_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
