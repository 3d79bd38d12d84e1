/* SPDX-License-Identifier: GPL-2.0-or-later */
/* daemon/quota.c: per-uid shares with room for root, against a model. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "quota.h"

static const struct quota_limits limits = {
	.size = 100, .users = 60, .per_user = 8,
	.size_key = NULL, .users_key = "max-things", .per_user_key = "max-things-per-user",
};

static void test_check_names_the_narrowest_limit(void **state)
{
	struct rtplace_reason reason = { "" };
	struct quota_use use = { .uid = 8, .users = 10, .all = 10 };

	assert_int_equal(quota_check(&limits, 60001, &use, 1, &reason), -EDQUOT);
	assert_string_equal(reason.text, "[limits] max-things-per-user = 8 reached");
	assert_true(strlen(reason.text) < 64);
	use = (struct quota_use){ .uid = 0, .users = 60, .all = 60 };
	assert_int_equal(quota_check(&limits, 60001, &use, 1, &reason), -EUSERS);
	assert_string_equal(reason.text, "[limits] max-things = 60 reached");
	/* What the users cannot take is root's. */
	assert_int_equal(quota_check(&limits, 0, &use, 40, &reason), 0);
	assert_int_equal(quota_room(&limits, 0, &use), 40);
	assert_int_equal(quota_room(&limits, 60001, &use), 0);
	use.all = 100;
	assert_int_equal(quota_check(&limits, 0, &use, 1, &reason), -ENOSPC);
	assert_string_equal(reason.text, "pool of 100 full");
	/* All or none: 5 of 8 held, 4 more do not fit. */
	use = (struct quota_use){ .uid = 5, .users = 5, .all = 5 };
	assert_int_equal(quota_check(&limits, 60001, &use, 4, &reason), -EDQUOT);
	assert_int_equal(quota_room(&limits, 60001, &use), 3);
}

/* Eight users fill their shares; the ninth meets the users' part; root
 * still has its reserve. */
static void test_users_cannot_take_roots_room(void **state)
{
	struct rtplace_reason reason = { "" };
	struct quota *q;

	assert_int_equal(quota_new(&limits, &q), 0);
	for (uid_t uid = 60001; uid <= 60007; uid++)
		assert_int_equal(quota_take(q, uid, 8, &reason), 0);
	assert_int_equal(quota_take(q, 60001, 1, &reason), -EDQUOT);
	assert_int_equal(quota_take(q, 60008, 8, &reason), -EUSERS);
	assert_int_equal(quota_room_of(q, 60008), 4);
	assert_int_equal(quota_take(q, 60008, 4, &reason), 0);
	assert_int_equal(quota_take(q, 60009, 1, &reason), -EUSERS);
	assert_int_equal(quota_room_of(q, 0), 40);
	assert_int_equal(quota_take(q, 0, 40, &reason), 0);
	assert_int_equal(quota_take(q, 0, 1, &reason), -ENOSPC);
	/* What one user gives back is the users' again, not root's. */
	quota_put(q, 60003, 8);
	assert_int_equal(quota_room_of(q, 60009), 8);
	assert_int_equal(quota_room_of(q, 0), 8);
	quota_free(q);
}

static void test_lowered_limits_keep_what_is_held(void **state)
{
	struct quota_limits lower = limits;
	struct rtplace_reason reason = { "" };
	struct quota_use use;
	struct quota *q;

	assert_int_equal(quota_new(&limits, &q), 0);
	assert_int_equal(quota_take(q, 60001, 8, &reason), 0);
	lower.per_user = 4;
	quota_set_limits(q, &lower);
	assert_int_equal(quota_take(q, 60001, 1, &reason), -EDQUOT);
	assert_string_equal(reason.text, "[limits] max-things-per-user = 4 reached");
	quota_put(q, 60001, 5);
	assert_int_equal(quota_take(q, 60001, 1, &reason), 0);
	quota_put(q, 60001, 100); /* no more than it holds */
	quota_get_use(q, 60001, &use);
	assert_int_equal(use.uid, 0);
	assert_int_equal(use.users, 0);
	assert_int_equal(use.all, 0);
	quota_free(q);
}

/* Random takes and puts over many uids against plain arrays: the hash
 * (growth, backward-shift deletion) never loses or mixes up a count. */
/* The last descriptors of the soft limit are root's: an eighth, from 16 to
 * 1,024; none without a limit. */
static void test_fd_reserve(void **state)
{
	(void)state;
	assert_int_equal(quota_fd_reserve(64), 16);
	assert_int_equal(quota_fd_reserve(1024), 128);
	assert_int_equal(quota_fd_reserve(65536), 1024);
	assert_false(quota_fd_reserved(1000, 1024 - 129, 1024));
	assert_true(quota_fd_reserved(1000, 1024 - 128, 1024));
	assert_true(quota_fd_reserved(1000, 5000, 1024));
	assert_false(quota_fd_reserved(0, 1023, 1024));
	assert_false(quota_fd_reserved(1000, 1 << 30, UINT64_MAX));
}

static void test_matches_a_model(void **state)
{
	enum { NUIDS = 3000 };
	static uint32_t model[NUIDS];
	struct quota_limits big = { .size = 1u << 30, .users = 1u << 29, .per_user = 16,
				    .users_key = "u", .per_user_key = "p" };
	struct rtplace_reason reason;
	uint32_t users = 0, all = 0, seed = 1;
	struct quota *q;

	memset(model, 0, sizeof(model));
	assert_int_equal(quota_new(&big, &q), 0);
	for (int step = 0; step < 200000; step++) {
		struct quota_use use;
		uint32_t i, n;
		uid_t uid;

		seed = seed * 1103515245u + 12345u;
		i = (seed >> 8) % NUIDS;
		uid = i == 0 ? 0 : 60000 + i * 7;
		n = (seed >> 4) % 5;
		if (seed & 0x80000000u) {
			int want = model[i] + n > 16 && uid != 0 ? -EDQUOT : 0;

			assert_int_equal(quota_take(q, uid, n, &reason), want);
			if (want == 0) {
				model[i] += n;
				all += n;
				users += uid ? n : 0;
			}
		} else {
			n = n < model[i] ? n : model[i];
			quota_put(q, uid, n);
			model[i] -= n;
			all -= n;
			users -= uid ? n : 0;
		}
		quota_get_use(q, uid, &use);
		assert_int_equal(use.uid, model[i]);
		assert_int_equal(use.users, users);
		assert_int_equal(use.all, all);
	}
	for (uint32_t i = 0; i < NUIDS; i++) {
		struct quota_use use;

		quota_get_use(q, i == 0 ? 0 : 60000 + i * 7, &use);
		assert_int_equal(use.uid, model[i]);
	}
	quota_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_names_the_narrowest_limit),
		cmocka_unit_test(test_users_cannot_take_roots_room),
		cmocka_unit_test(test_lowered_limits_keep_what_is_held),
		cmocka_unit_test(test_fd_reserve),
		cmocka_unit_test(test_matches_a_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
