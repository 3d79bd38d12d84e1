/* Unit tests for the claim table: lifetimes (release, client, pid, lease)
 * and the per-CPU claimed levels placement reads. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "claims.h"
#include "levels.h"

static struct cpuset cpus_of(const char *list)
{
	struct cpuset s;

	assert_int_equal(cpuset_parse(list, &s), 0);
	return s;
}

static void test_levels_are_max_of_claims(void **state)
{
	struct claims *c;
	struct cpuset a = cpus_of("1-2"), b = cpus_of("2-3");
	uint32_t id1, id2;

	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(claims_add(c, 1, 0, 1000, level_from_rt_priority(10), &a, 0, 0, &id1), 0);
	assert_int_equal(claims_add(c, 2, 0, 1000, level_from_rt_priority(50), &b, 0, 0, &id2), 0);
	assert_int_not_equal(id1, id2);
	assert_int_equal(claims_levels(c)[0], 0);
	assert_int_equal(claims_levels(c)[1], level_from_rt_priority(10));
	assert_int_equal(claims_levels(c)[2], level_from_rt_priority(50));
	assert_int_equal(claims_levels(c)[3], level_from_rt_priority(50));
	assert_int_equal(claims_on_cpu(c, 2)->id, id2);
	assert_int_equal(claims_release(c, id2, 2), 0);
	assert_int_equal(claims_levels(c)[2], level_from_rt_priority(10));
	assert_int_equal(claims_levels(c)[3], 0);
	assert_null(claims_on_cpu(c, 3));
	claims_free(c);
}

static void test_release_rules(void **state)
{
	struct claims *c;
	struct cpuset a = cpus_of("0");
	uint32_t id;

	assert_int_equal(claims_new(4, &c), 0);
	assert_int_equal(claims_add(c, 7, 0, 1000, LEVEL_RT99, &a, 0, 0, &id), 0);
	assert_int_equal(claims_release(c, id, 8), -EPERM);
	assert_int_equal(claims_release(c, id + 100, 7), -ENOENT);
	assert_int_equal(claims_release(c, id, 7), 0);
	assert_int_equal(claims_release(c, id, 7), -ENOENT);
	assert_int_equal(claims_count(c), 0);
	claims_free(c);
}

static void test_bad_claims_refused(void **state)
{
	struct claims *c;
	struct cpuset empty, a = cpus_of("1");
	uint32_t id = 12345;

	cpuset_zero(&empty);
	assert_int_equal(claims_new(4, &c), 0);
	assert_int_equal(claims_add(c, 1, 0, 1000, LEVEL_RT99, &empty, 0, 0, &id), -EINVAL);
	assert_int_equal(claims_add(c, 1, 0, 1000, LEVEL_NORMAL, &a, 0, 0, &id), -EINVAL);
	assert_int_equal(claims_add(c, 1, 0, 1000, LEVEL_COUNT, &a, 0, 0, &id), -EINVAL);
	assert_int_equal(id, 12345);
	assert_int_equal(claims_count(c), 0);
	claims_free(c);
}

static void test_drop_client_and_pid(void **state)
{
	struct claims *c;
	struct cpuset a = cpus_of("0"), b = cpus_of("1"), d = cpus_of("2");
	uint32_t id;

	assert_int_equal(claims_new(4, &c), 0);
	assert_int_equal(claims_add(c, 1, 100, 1000, LEVEL_RT99, &a, 0, 0, &id), 0);
	assert_int_equal(claims_add(c, 1, 0, 1000, LEVEL_RT99, &b, 0, 0, &id), 0);
	assert_int_equal(claims_add(c, 2, 100, 1000, LEVEL_RT99, &d, 0, 0, &id), 0);
	assert_int_equal(claims_count_client(c, 1), 2);
	assert_int_equal(claims_drop_pid(c, 100), 2);
	assert_int_equal(claims_drop_pid(c, 0), 0);
	assert_int_equal(claims_levels(c)[0], 0);
	assert_int_equal(claims_levels(c)[1], LEVEL_RT99);
	assert_int_equal(claims_drop_client(c, 1), 1);
	assert_int_equal(claims_count(c), 0);
	assert_int_equal(claims_levels(c)[1], 0);
	claims_free(c);
}

static unsigned expired_seen;

static void count_expired(const struct claim *cl, void *ctx)
{
	expired_seen++;
	assert_int_equal(cl->expires_ms, 1500);
}

static void test_lease_expiry(void **state)
{
	struct claims *c;
	struct cpuset a = cpus_of("0"), b = cpus_of("1");
	uint32_t id;

	assert_int_equal(claims_new(4, &c), 0);
	assert_int_equal(claims_add(c, 1, 0, 1000, LEVEL_RT99, &a, 1000, 500, &id), 0);
	assert_int_equal(claims_add(c, 1, 0, 1000, LEVEL_RT99, &b, 1000, 0, &id), 0);
	assert_int_equal(claims_expire(c, 1499, count_expired, NULL), 1500);
	assert_int_equal(expired_seen, 0);
	assert_int_equal(claims_expire(c, 1500, count_expired, NULL), 0);
	assert_int_equal(expired_seen, 1);
	assert_int_equal(claims_count(c), 1);
	assert_int_equal(claims_levels(c)[0], 0);
	assert_int_equal(claims_levels(c)[1], LEVEL_RT99);
	claims_free(c);
}

static void test_sixty_claims_distinct_ids(void **state)
{
	struct claims *c;
	uint32_t ids[60];

	assert_int_equal(claims_new(480, &c), 0);
	for (unsigned i = 0; i < 60; i++) {
		struct cpuset s;

		cpuset_zero(&s);
		for (unsigned k = 0; k < 4; k++)
			cpuset_set(&s, i * 4 + k);
		assert_int_equal(claims_add(c, i, 0, 1000, LEVEL_RT99, &s, 0, 0, &ids[i]), 0);
		for (unsigned j = 0; j < i; j++)
			assert_int_not_equal(ids[i], ids[j]);
	}
	for (unsigned cpu = 0; cpu < 240; cpu++)
		assert_int_equal(claims_levels(c)[cpu], LEVEL_RT99);
	assert_int_equal(claims_levels(c)[240], 0);
	claims_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels_are_max_of_claims),
		cmocka_unit_test(test_release_rules),
		cmocka_unit_test(test_bad_claims_refused),
		cmocka_unit_test(test_drop_client_and_pid),
		cmocka_unit_test(test_lease_expiry),
		cmocka_unit_test(test_sixty_claims_distinct_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
