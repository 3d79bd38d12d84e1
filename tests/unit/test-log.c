/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the log's rate limit: the pure window logic with a clock
 * the test drives, and log_msg_ratelimited() end to end into a file. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"

static void test_burst_then_suppressed(void **state)
{
	struct log_ratelimit rl = { 0 };
	uint64_t suppressed;

	for (int i = 0; i < LOG_RATELIMIT_BURST; i++) {
		assert_true(log_ratelimit_pass(&rl, 1000 + (uint64_t)i, &suppressed));
		assert_int_equal(suppressed, 0);
	}
	for (int i = 0; i < 500; i++)
		assert_false(log_ratelimit_pass(&rl, 1000 + LOG_RATELIMIT_INTERVAL_MS - 1, &suppressed));
	/* The first line of the next window reports what the last one dropped. */
	assert_true(log_ratelimit_pass(&rl, 1000 + LOG_RATELIMIT_INTERVAL_MS, &suppressed));
	assert_int_equal(suppressed, 500);
	assert_true(log_ratelimit_pass(&rl, 1000 + LOG_RATELIMIT_INTERVAL_MS + 1, &suppressed));
	assert_int_equal(suppressed, 0);
}

static void test_quiet_windows_report_nothing(void **state)
{
	struct log_ratelimit rl = { 0 };
	uint64_t suppressed;

	/* Lines spaced wider than the window all pass, none reports a drop. */
	for (uint64_t t = 0; t < 20; t++) {
		assert_true(log_ratelimit_pass(&rl, t * LOG_RATELIMIT_INTERVAL_MS, &suppressed));
		assert_int_equal(suppressed, 0);
	}
}

static void test_clock_going_back_reopens(void **state)
{
	struct log_ratelimit rl = { 0 };
	uint64_t suppressed;

	for (int i = 0; i <= LOG_RATELIMIT_BURST; i++)
		log_ratelimit_pass(&rl, 50000, &suppressed);
	assert_true(log_ratelimit_pass(&rl, 10, &suppressed));
	assert_int_equal(suppressed, 1);
}

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

static unsigned count_lines(FILE *f, const char *needle)
{
	char line[1200];
	unsigned n = 0;

	rewind(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	return n;
}

/* 10,000 lines from one call site in one window, then one more in the
 * next: the burst, one summary with the count, and that line. */
static void test_call_site_limit_into_file(void **state)
{
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);

	assert_non_null(f);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
	log_set_level(LOG_INFO);
	log_set_clock(fake_clock);
	fake_now = 7;
	for (int i = 0; i < 10001; i++) {
		if (i == 10000)
			fake_now += LOG_RATELIMIT_INTERVAL_MS;
		log_notice_ratelimited("garbage from client %d", i);
	}
	/* A line above the log level neither prints nor counts. */
	for (int i = 0; i < 100; i++)
		log_ratelimited(LOG_DEBUG, "debug %d", i);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	log_set_clock(NULL);
	assert_int_equal(count_lines(f, "garbage from client"), LOG_RATELIMIT_BURST + 1);
	assert_int_equal(count_lines(f, "9990 messages like the next one were suppressed"), 1);
	assert_int_equal(count_lines(f, "garbage from client 10000"), 1);
	assert_int_equal(count_lines(f, "debug"), 0);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_suppressed),
		cmocka_unit_test(test_quiet_windows_report_nothing),
		cmocka_unit_test(test_clock_going_back_reopens),
		cmocka_unit_test(test_call_site_limit_into_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
