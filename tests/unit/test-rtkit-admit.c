/* SPDX-License-Identifier: GPL-2.0-or-later */
/* daemon/rtkit-admit.c: RealtimeKit's shares of the wait for credentials. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "rtkit-admit.h"

/* Takes calls of sender until one is refused; how many were admitted. */
static unsigned take_all(struct rtkit_admit *a, const char *sender)
{
	unsigned n = 0;

	while (rtkit_admit_take(a, sender, 1) == 0)
		n++;
	assert_int_equal(rtkit_admit_take(a, sender, 1), -EBUSY);
	return n;
}

static void test_sender_shares(void **state)
{
	struct rtkit_admit a = { 0 };
	uid_t uid = 0;

	/* A new sender waits with a few calls until the bus names it. */
	assert_int_equal(take_all(&a, ":1.1"), RTKIT_PENDING_NEW);
	assert_false(rtkit_admit_known(&a, ":1.1", &uid));
	rtkit_admit_learn(&a, ":1.1", 1000);
	assert_true(rtkit_admit_known(&a, ":1.1", &uid));
	assert_int_equal(uid, 1000);
	assert_int_equal(take_all(&a, ":1.1"), RTKIT_PENDING_SENDER - RTKIT_PENDING_NEW);
	/* A call that stops waiting gives its place back. */
	rtkit_admit_done(&a, ":1.1");
	assert_int_equal(rtkit_admit_take(&a, ":1.1", 2), 0);
	assert_int_equal(a.pending, RTKIT_PENDING_SENDER);
	for (unsigned i = 0; i < RTKIT_PENDING_SENDER; i++)
		rtkit_admit_done(&a, ":1.1");
	assert_int_equal(a.pending, 0);
	rtkit_admit_done(&a, ":1.1"); /* none waiting: no underflow */
	rtkit_admit_done(&a, ":1.99");
	assert_int_equal(a.pending, 0);
	rtkit_admit_free(&a);
}

/* One uid's many connections fill its share, not the wait: another uid
 * and root are still admitted. */
static void test_uid_share(void **state)
{
	struct rtkit_admit a = { 0 };
	char name[32];
	unsigned flood = 0;

	for (unsigned i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), ":1.%u", 100 + i);
		assert_int_equal(rtkit_admit_take(&a, name, 1), 0);
		rtkit_admit_learn(&a, name, 65534);
		rtkit_admit_done(&a, name);
	}
	for (unsigned i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), ":1.%u", 100 + i);
		while (rtkit_admit_take(&a, name, 2) == 0)
			flood++;
	}
	assert_int_equal(flood, RTKIT_PENDING_UID);
	assert_int_equal(rtkit_admit_take(&a, ":1.7", 3), 0);
	rtkit_admit_learn(&a, ":1.7", 1000);
	assert_int_equal(rtkit_admit_take(&a, ":1.7", 3), 0);
	assert_int_equal(rtkit_admit_take(&a, ":1.8", 3), 0);
	rtkit_admit_free(&a);
}

/* A sender the bus named as uid, with as many calls waiting as it may. */
static unsigned fill_known(struct rtkit_admit *a, const char *sender, uid_t uid)
{
	unsigned n;

	assert_int_equal(rtkit_admit_take(a, sender, 1), 0);
	rtkit_admit_learn(a, sender, uid);
	n = take_all(a, sender);
	return n + 1;
}

/* Three pools: users known to the table cannot fill the new senders'
 * places (where root's dbus-send waits), nor root's. */
static void test_pools(void **state)
{
	struct rtkit_admit a = { 0 };
	char name[32];
	unsigned users = 0, unknown = 0, root = 0;

	for (unsigned u = 0; users < RTKIT_PENDING_USERS; u++) {
		snprintf(name, sizeof(name), ":1.%u", u);
		users += fill_known(&a, name, 1000 + u / 2);
	}
	assert_int_equal(users, RTKIT_PENDING_USERS);
	assert_int_equal(rtkit_admit_take(&a, ":1.0", 1), -EBUSY);
	/* Another user, already known: its pool is full too. */
	assert_int_equal(rtkit_admit_take(&a, ":1.999", 1), 0);
	rtkit_admit_learn(&a, ":1.999", 3000);
	assert_int_equal(rtkit_admit_take(&a, ":1.999", 1), -EBUSY);
	rtkit_admit_done(&a, ":1.999");
	/* New senders still have their places, RTKIT_PENDING_NEW each. */
	for (unsigned i = 0; unknown < RTKIT_PENDING_UNKNOWN; i++) {
		snprintf(name, sizeof(name), ":2.%u", i);
		unknown += take_all(&a, name);
	}
	assert_int_equal(unknown, RTKIT_PENDING_UNKNOWN);
	assert_int_equal(rtkit_admit_take(&a, ":2.new", 1), -EBUSY);
	/* Root, known, takes what is left: the whole wait at most. */
	assert_int_equal(a.pending, RTKIT_PENDING_USERS + RTKIT_PENDING_UNKNOWN);
	rtkit_admit_done(&a, ":2.0");
	for (unsigned i = 0; a.pending < RTKIT_PENDING_MAX; i++) {
		snprintf(name, sizeof(name), ":3.%u", i);
		root += fill_known(&a, name, 0);
	}
	assert_int_equal(root, RTKIT_PENDING_MAX - RTKIT_PENDING_USERS - RTKIT_PENDING_UNKNOWN + 1);
	assert_int_equal(rtkit_admit_take(&a, ":3.0", 1), -EBUSY);
	rtkit_admit_free(&a);
}

/* The table keeps senders for their uid while there is room, then gives
 * the place of the idle one seen longest ago. */
static void test_table(void **state)
{
	struct rtkit_admit a = { 0 };
	char name[32];
	uid_t uid;

	for (unsigned i = 0; i < RTKIT_SENDERS_MAX; i++) {
		snprintf(name, sizeof(name), ":1.%u", i);
		assert_int_equal(rtkit_admit_take(&a, name, 10 + i), 0);
		rtkit_admit_learn(&a, name, i);
		rtkit_admit_done(&a, name);
	}
	assert_true(rtkit_admit_known(&a, ":1.0", &uid));
	assert_int_equal(rtkit_admit_take(&a, ":9.9", 5000), 0);
	assert_int_equal(a.n, RTKIT_SENDERS_MAX);
	assert_false(rtkit_admit_known(&a, ":1.0", &uid));
	assert_true(rtkit_admit_known(&a, ":1.1", &uid));
	assert_int_equal(uid, 1);
	rtkit_admit_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sender_shares),
		cmocka_unit_test(test_uid_share),
		cmocka_unit_test(test_pools),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
