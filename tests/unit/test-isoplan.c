/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the isolation planner (daemon/isoplan.c). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "isoplan.h"

static struct rtplace_cpumask test_set(const char *list)
{
	struct rtplace_cpumask s;

	cpuset_zero(&s);
	if (*list)
		assert_int_equal(cpuset_parse(list, &s), 0);
	return s;
}

static void assert_set(const struct rtplace_cpumask *s, const char *list)
{
	char buf[CPUSET_LIST_MAX];

	assert_int_equal(cpuset_format(s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, list);
}

/* Two nodes of four CPUs: 0-3 and 4-7. */
static struct rtplace_cpumask test_nodes[2];

static struct isoplan_host test_host(const char *held, const char *other)
{
	test_nodes[0] = test_set("0-3");
	test_nodes[1] = test_set("4-7");
	return (struct isoplan_host){
		.nodes = test_nodes, .n_nodes = 2, .held = test_set(held), .other = test_set(other),
	};
}

static void test_admit(void **state)
{
	struct isoplan_host h = test_host("", "");
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask c;

	(void)state;
	c = test_set("1-3");
	assert_int_equal(isoplan_admit(&h, &c, &reason), 0);
	c = test_set("5");
	assert_int_equal(isoplan_admit(&h, &c, &reason), 0);

	cpuset_zero(&c);
	assert_int_equal(isoplan_admit(&h, &c, &reason), -EINVAL);
	assert_string_equal(reason.text, "no CPU to isolate");
	c = test_set("7-9");
	assert_int_equal(isoplan_admit(&h, &c, &reason), -EINVAL);
	assert_string_equal(reason.text, "CPUs 8-9 are not online");
}

/* The last housekeeping CPU of a node is refused, whether the claim takes
 * the node whole or what other claims and the host left of it. */
static void test_last_housekeeping_cpu(void **state)
{
	struct isoplan_host h = test_host("", "");
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask c;

	(void)state;
	c = test_set("2,4-7");
	assert_int_equal(isoplan_admit(&h, &c, &reason), -EBUSY);
	assert_string_equal(reason.text,
			    "isolating CPUs 4-7 would leave node 1 (CPUs 4-7) without a housekeeping CPU");

	h = test_host("1-2", "0");
	c = test_set("3");
	assert_int_equal(isoplan_admit(&h, &c, &reason), -EBUSY);
	assert_string_equal(reason.text, "isolating CPU 3 would leave node 0 (CPUs 0-3) without a housekeeping CPU");

	/* A node the host isolated whole has none to keep: its CPUs may be
	 * claimed for isolation, and the other node keeps its own. */
	h = test_host("", "4-7");
	c = test_set("4-6");
	assert_int_equal(isoplan_admit(&h, &c, &reason), 0);
	c = test_set("0-3");
	assert_int_equal(isoplan_admit(&h, &c, &reason), -EBUSY);
	assert_string_equal(reason.text,
			    "isolating CPUs 0-3 would leave node 0 (CPUs 0-3) without a housekeeping CPU");
}

static void test_held_twice(void **state)
{
	struct isoplan_host h = test_host("2-3", "");
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask c = test_set("1-2");

	(void)state;
	assert_int_equal(isoplan_admit(&h, &c, &reason), -EBUSY);
	assert_string_equal(reason.text, "CPU 2 is isolated for another claim already");
}

static struct isoplan_mask test_mask(const char *original, const char *current, bool managed)
{
	struct isoplan_mask m = { .original = test_set(original), .managed = managed };

	m.current = current ? test_set(current) : m.original;
	m.changed = current != NULL;
	return m;
}

static void test_mask_plans(void **state)
{
	struct isoplan_host h = test_host("2-3", "");
	struct isoplan_mask m;
	struct rtplace_cpumask out;

	(void)state;
	/* Not on an isolated CPU: untouched. */
	m = test_mask("0-1", NULL, false);
	assert_int_equal(isoplan_mask(&h, &m, &out), ISOPLAN_KEEP);
	assert_set(&out, "0-1");
	/* On some: the others. */
	m = test_mask("0-7", NULL, false);
	assert_int_equal(isoplan_mask(&h, &m, &out), ISOPLAN_SET);
	assert_set(&out, "0-1,4-7");
	/* Already so: nothing to write. */
	m = test_mask("0-7", "0-1,4-7", false);
	assert_int_equal(isoplan_mask(&h, &m, &out), ISOPLAN_KEEP);
	assert_set(&out, "0-1,4-7");
	/* Only on isolated CPUs: the housekeeping CPUs of its node. */
	m = test_mask("3", NULL, false);
	assert_int_equal(isoplan_mask(&h, &m, &out), ISOPLAN_SET);
	assert_set(&out, "0-1");
	/* A managed interrupt is reported with where it would have gone. */
	m = test_mask("2-5", NULL, true);
	assert_int_equal(isoplan_mask(&h, &m, &out), ISOPLAN_MANAGED);
	assert_set(&out, "4-5");
	m = test_mask("4-5", NULL, true);
	assert_int_equal(isoplan_mask(&h, &m, &out), ISOPLAN_KEEP);
}

/* Node 0's housekeeping CPUs are all isolated otherwise: an interrupt of
 * node 0 alone goes to the other node's. */
static void test_mask_fallback_across_nodes(void **state)
{
	struct isoplan_host h = test_host("2-3", "0-1");
	struct isoplan_mask m = test_mask("2", NULL, false);
	struct rtplace_cpumask out;

	(void)state;
	assert_int_equal(isoplan_mask(&h, &m, &out), ISOPLAN_SET);
	assert_set(&out, "4-7");
}

/* Planned from the original, two claims that begin and end in any order
 * leave a mask as if only the live ones had begun, and the original when
 * none is left. */
static void test_mask_claims_stack(void **state)
{
	struct isoplan_host h = test_host("", "");
	struct isoplan_mask m = test_mask("0-7", NULL, false);
	struct rtplace_cpumask out;

	(void)state;
	h.held = test_set("2");
	assert_int_equal(isoplan_mask(&h, &m, &out), ISOPLAN_SET);
	assert_set(&out, "0-1,3-7");
	m.current = out;
	m.changed = true;
	h.held = test_set("2,5");
	assert_int_equal(isoplan_mask(&h, &m, &out), ISOPLAN_SET);
	assert_set(&out, "0-1,3-4,6-7");
	m.current = out;
	/* The first ends: CPU 2 comes back, 5 stays out. */
	h.held = test_set("5");
	assert_int_equal(isoplan_mask(&h, &m, &out), ISOPLAN_SET);
	assert_set(&out, "0-4,6-7");
	m.current = out;
	cpuset_zero(&h.held);
	assert_int_equal(isoplan_mask(&h, &m, &out), ISOPLAN_RESTORE);
	assert_set(&out, "0-7");
}

static void test_housekeeping(void **state)
{
	struct isoplan_host h = test_host("1,5", "7");
	struct rtplace_cpumask hk;

	(void)state;
	isoplan_housekeeping(&h, &hk);
	assert_set(&hk, "0,2-4,6");
}

static void test_hex(void **state)
{
	struct rtplace_cpumask s;
	char buf[ISOPLAN_HEX_MAX], big[ISOPLAN_HEX_MAX + 16];

	(void)state;
	assert_int_equal(isoplan_hex_parse("3\n", &s), 0);
	assert_set(&s, "0-1");
	assert_int_equal(isoplan_hex_format(&s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "3");
	assert_int_equal(isoplan_hex_parse("ff,fffffffe", &s), 0);
	assert_set(&s, "1-39");
	assert_int_equal(isoplan_hex_format(&s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "ff,fffffffe");
	assert_int_equal(isoplan_hex_parse("1,00000000,00000001", &s), 0);
	assert_set(&s, "0,64");
	assert_int_equal(isoplan_hex_format(&s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1,00000000,00000001");
	/* Leading zero groups, as the kernel prints for more possible CPUs. */
	assert_int_equal(isoplan_hex_parse("00000000,0000000C", &s), 0);
	assert_set(&s, "2-3");
	cpuset_zero(&s);
	assert_int_equal(isoplan_hex_format(&s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0");
	cpuset_set(&s, RTPLACE_MAX_CPUS - 1);
	assert_int_equal(isoplan_hex_format(&s, buf, sizeof(buf)), 0);
	assert_int_equal(isoplan_hex_parse(buf, &s), 0);
	assert_true(cpuset_test(&s, RTPLACE_MAX_CPUS - 1));
	assert_int_equal(cpuset_count(&s), 1);
	assert_int_equal(isoplan_hex_format(&s, buf, 3), -ENOSPC);

	assert_int_equal(isoplan_hex_parse("", &s), -EINVAL);
	assert_int_equal(isoplan_hex_parse("3,", &s), -EINVAL);
	assert_int_equal(isoplan_hex_parse(",3", &s), -EINVAL);
	assert_int_equal(isoplan_hex_parse("123456789", &s), -EINVAL);
	assert_int_equal(isoplan_hex_parse("0x3", &s), -EINVAL);
	assert_int_equal(isoplan_hex_parse("3 ", &s), -EINVAL);
	/* One group more than RTPLACE_MAX_CPUS: its bit is out of range. */
	snprintf(big, sizeof(big), "1");
	for (unsigned i = 0; i < RTPLACE_MAX_CPUS / 32; i++)
		strcat(big, ",00000000");
	assert_int_equal(isoplan_hex_parse(big, &s), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admit),
		cmocka_unit_test(test_last_housekeeping_cpu),
		cmocka_unit_test(test_held_twice),
		cmocka_unit_test(test_mask_plans),
		cmocka_unit_test(test_mask_fallback_across_nodes),
		cmocka_unit_test(test_mask_claims_stack),
		cmocka_unit_test(test_housekeeping),
		cmocka_unit_test(test_hex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
