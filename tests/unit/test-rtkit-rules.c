/* SPDX-License-Identifier: GPL-2.0-or-later */
/* daemon/rtkit-rules.c: RealtimeKit's rules on plain structs. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rtkit-rules.h"

static struct config_rtkit test_cfg(void)
{
	struct config c;

	config_defaults(&c);
	return c.rtkit;
}

/* uid 1000's own thread of its own process, with a hard limit of 200 ms. */
static const struct rtkit_target own = {
	.caller_uid = 1000, .pid = 42, .uid = 1000, .euid = 1000, .thread_tgid = 42, .rttime_hard = 200000,
};

static void test_realtime(enum rtkit_refusal want, const struct rtkit_target *t, uint32_t prio,
			  const struct rtkit_use *use)
{
	struct config_rtkit cfg = test_cfg();
	struct rtplace_reason reason = { { 0 } };
	enum rtkit_refusal why = RTKIT_REFUSE_COUNT;
	int r = rtkit_rules_realtime(&cfg, t, prio, use, &why, &reason);

	if (want == RTKIT_REFUSE_COUNT) {
		assert_int_equal(r, 0);
		return;
	}
	assert_int_equal(r, -EPERM);
	assert_int_equal(why, want);
	assert_true(reason.text[0] != '\0');
}

static void test_owner_and_thread(void **state)
{
	const struct rtkit_use none = { 0 };
	struct rtkit_target t = own;

	test_realtime(RTKIT_REFUSE_COUNT, &t, 20, &none);
	t.uid = 1001;
	test_realtime(RTKIT_REFUSE_COUNT, &t, 20, &none); /* the effective uid owns it */
	t.euid = 1001;
	test_realtime(RTKIT_REFUSE_NOT_OWNER, &t, 20, &none);
	{
		/* The thread is what another uid owns: the refusal names it. */
		struct config_rtkit cfg = test_cfg();
		struct rtplace_reason reason = { { 0 } };
		enum rtkit_refusal why;

		t.tid = 44;
		assert_int_equal(rtkit_rules_realtime(&cfg, &t, 20, &none, &why, &reason), -EPERM);
		assert_string_equal(reason.text, "thread 44 of process 42 belongs to uid 1001, not to the caller's uid 1000");
	}
	t.caller_uid = 0;
	test_realtime(RTKIT_REFUSE_COUNT, &t, 20, &none);
	t = own;
	t.thread_tgid = 43;
	test_realtime(RTKIT_REFUSE_FOREIGN_THREAD, &t, 1, &none);
	t.caller_uid = 0;
	test_realtime(RTKIT_REFUSE_FOREIGN_THREAD, &t, 1, &none);
}

static void test_priority_and_rttime(void **state)
{
	const struct rtkit_use none = { 0 };
	struct rtkit_target t = own;

	test_realtime(RTKIT_REFUSE_COUNT, &t, 1, &none);
	test_realtime(RTKIT_REFUSE_PRIORITY, &t, 0, &none);
	test_realtime(RTKIT_REFUSE_PRIORITY, &t, 21, &none);
	test_realtime(RTKIT_REFUSE_PRIORITY, &t, UINT32_MAX, &none);
	t.rttime_hard = RTKIT_RTTIME_UNLIMITED;
	test_realtime(RTKIT_REFUSE_RTTIME_UNSET, &t, 10, &none);
	t.rttime_hard = 200001;
	test_realtime(RTKIT_REFUSE_RTTIME_HIGH, &t, 10, &none);
	t.rttime_hard = 0;
	test_realtime(RTKIT_REFUSE_COUNT, &t, 10, &none);
}

static void test_counts(void **state)
{
	struct rtkit_use use = { .threads = 25, .processes = 3 };

	test_realtime(RTKIT_REFUSE_THREADS, &own, 5, &use);
	use.thread_held = true; /* a new priority for a thread it holds */
	test_realtime(RTKIT_REFUSE_COUNT, &own, 5, &use);
	use = (struct rtkit_use){ .threads = 3, .processes = 15 };
	test_realtime(RTKIT_REFUSE_PROCESSES, &own, 5, &use);
	use.process_held = true;
	test_realtime(RTKIT_REFUSE_COUNT, &own, 5, &use);
}

static void test_nice(void **state)
{
	struct config_rtkit cfg = test_cfg();
	struct rtplace_reason reason;
	enum rtkit_refusal why;
	struct rtkit_target t = own;

	assert_int_equal(rtkit_rules_nice(&cfg, &t, -15, &why, &reason), 0);
	assert_int_equal(rtkit_rules_nice(&cfg, &t, 19, &why, &reason), 0);
	assert_int_equal(rtkit_rules_nice(&cfg, &t, -16, &why, &reason), -EPERM);
	assert_int_equal(why, RTKIT_REFUSE_NICE);
	assert_int_equal(rtkit_rules_nice(&cfg, &t, 20, &why, &reason), -EPERM);
	t.euid = t.uid = 7;
	assert_int_equal(rtkit_rules_nice(&cfg, &t, 0, &why, &reason), -EPERM);
	assert_int_equal(why, RTKIT_REFUSE_NOT_OWNER);
}

static void test_parse_rttime(void **state)
{
	static const char head[] = "Limit                     Soft Limit           Hard Limit           Units     \n"
				   "Max realtime priority     0                    0                    \n";
	char text[512];
	uint64_t v = 1;

	snprintf(text, sizeof(text), "%sMax realtime timeout      unlimited            unlimited            us\n",
		 head);
	assert_int_equal(rtkit_rules_parse_rttime(text, &v), 0);
	assert_true(v == RTKIT_RTTIME_UNLIMITED);
	snprintf(text, sizeof(text), "%sMax realtime timeout      unlimited            200000               us\n",
		 head);
	assert_int_equal(rtkit_rules_parse_rttime(text, &v), 0);
	assert_int_equal(v, 200000);
	snprintf(text, sizeof(text), "%sMax realtime timeout      100                  250000               us", head);
	assert_int_equal(rtkit_rules_parse_rttime(text, &v), 0);
	assert_int_equal(v, 250000);
	assert_int_equal(rtkit_rules_parse_rttime(head, &v), -ENOENT);
	snprintf(text, sizeof(text), "%sMax realtime timeout      100                  2x0                  us\n", head);
	assert_int_equal(rtkit_rules_parse_rttime(text, &v), -EBADMSG);
	snprintf(text, sizeof(text), "%sMax realtime timeout      100\n", head);
	assert_int_equal(rtkit_rules_parse_rttime(text, &v), -EBADMSG);
	assert_int_equal(v, 250000);
}

static void test_bursts(void **state)
{
	struct config_rtkit cfg = test_cfg();
	struct rtkit_bursts b = { 0 };

	cfg.actions_per_burst_max = 3;
	cfg.actions_burst_sec = 10;
	assert_false(rtkit_bursts_spent(&b, &cfg, 1000, 5000));
	for (int i = 0; i < 3; i++) {
		assert_false(rtkit_bursts_spent(&b, &cfg, 1000, 5000 + (uint64_t)i));
		assert_int_equal(rtkit_bursts_take(&b, &cfg, 1000, 5000 + (uint64_t)i), 0);
	}
	assert_true(rtkit_bursts_spent(&b, &cfg, 1000, 14999));
	assert_int_equal(rtkit_bursts_take(&b, &cfg, 1000, 14999), -EPERM);
	/* Another user has a window of its own. */
	assert_false(rtkit_bursts_spent(&b, &cfg, 1001, 14999));
	assert_int_equal(rtkit_bursts_take(&b, &cfg, 1001, 14999), 0);
	assert_false(rtkit_bursts_spent(&b, &cfg, 1000, 15000));
	/* The window closes 10 s after it opened. */
	assert_int_equal(rtkit_bursts_take(&b, &cfg, 1000, 15000), 0);
	/* A closed window's entry is reused: the table stays small. */
	for (uid_t u = 2000; u < 2100; u++)
		assert_int_equal(rtkit_bursts_take(&b, &cfg, u, 100000 + (uint64_t)u * 20000), 0);
	assert_true(b.n <= 3);
	rtkit_bursts_free(&b);
}

static void test_watchdog(void **state)
{
	struct config_rtkit cfg = test_cfg();
	uint64_t v = 7;

	/* 90% of a second. */
	assert_true(rtkit_rules_starving(&cfg, 900000000, 1000000000));
	assert_true(rtkit_rules_starving(&cfg, 1000000000, 1000000000));
	assert_false(rtkit_rules_starving(&cfg, 899000000, 1000000000));
	assert_false(rtkit_rules_starving(&cfg, 20000000, 1000000000));
	assert_false(rtkit_rules_starving(&cfg, 0, 0));
	cfg.watchdog_busy_percent = 100;
	assert_false(rtkit_rules_starving(&cfg, 990000000, 1000000000));
	assert_true(rtkit_rules_starving(&cfg, 1000000000, 1000000000));

	assert_false(rtkit_rules_refusing(&cfg, 0, 5000));
	assert_true(rtkit_rules_refusing(&cfg, 5000, 5000));
	assert_true(rtkit_rules_refusing(&cfg, 5000, 304999));
	assert_false(rtkit_rules_refusing(&cfg, 5000, 305000));
	cfg.watchdog_refuse_sec = 0;
	assert_false(rtkit_rules_refusing(&cfg, 5000, 5000));

	assert_int_equal(rtkit_rules_parse_schedstat("123456 789 10\n", &v), 0);
	assert_int_equal(v, 123456);
	assert_int_equal(rtkit_rules_parse_schedstat("x 1 2\n", &v), -EBADMSG);
	assert_int_equal(rtkit_rules_parse_schedstat("12x 1 2\n", &v), -EBADMSG);
	assert_int_equal(v, 123456);
}

static void test_names(void **state)
{
	assert_string_equal(rtkit_refusal_name(RTKIT_REFUSE_NOT_OWNER), "not_owner");
	for (int i = 0; i < RTKIT_REFUSE_COUNT; i++)
		assert_non_null(rtkit_refusal_name((enum rtkit_refusal)i));
	assert_string_equal(rtkit_refusal_name(RTKIT_REFUSE_COUNT), "failed");
}

/* A caller's pid names the caller only if its process started before the
 * call arrived; the arrival's own tick counts as before. */
static void test_started_after(void **state)
{
	(void)state;
	/* Arrived 12.345 s after boot: tick 1234 at 100 ticks a second. */
	assert_false(rtkit_rules_started_after(1000, 100, 12345000000ull));
	assert_false(rtkit_rules_started_after(1234, 100, 12345000000ull));
	assert_true(rtkit_rules_started_after(1235, 100, 12345000000ull));
	assert_true(rtkit_rules_started_after(1235, 100, 12349999999ull));
	assert_false(rtkit_rules_started_after(1235, 100, 12350000000ull));
	/* Another USER_HZ. */
	assert_true(rtkit_rules_started_after(12346, 1000, 12345000000ull));
	assert_false(rtkit_rules_started_after(12345, 1000, 12345000000ull));
	assert_false(rtkit_rules_started_after(UINT64_MAX, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner_and_thread),
		cmocka_unit_test(test_priority_and_rttime),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_nice),
		cmocka_unit_test(test_parse_rttime),
		cmocka_unit_test(test_bursts),
		cmocka_unit_test(test_watchdog),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_started_after),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
