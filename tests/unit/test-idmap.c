/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's one hash table (common/idmap.c) against a plain array:
 * 200,000 random puts, replacements and removals of keys drawn from a
 * small range (long probe runs, removals in the middle of them) and from
 * the whole 32-bit range, every key looked up after each step of a
 * window; a table made with a reserve never grows while it holds that
 * many; removal shifts later entries back, so lookups find every key.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "idmap.h"

#define KEYS 512

/* The reference: which of the keys are in, with what value. */
struct model {
	uint32_t key[KEYS];
	uint32_t val[KEYS];
	bool in[KEYS];
	uint32_t n;
};

static void check_all(const struct idmap *m, const struct model *ref)
{
	assert_int_equal(m->n, ref->n);
	for (int i = 0; i < KEYS; i++) {
		const uint32_t *v = idmap_find(m, ref->key[i]);

		if (ref->in[i]) {
			assert_non_null(v);
			assert_int_equal(*v, ref->val[i]);
		} else {
			assert_null(v);
		}
	}
}

static void test_random_against_model(void **state)
{
	struct idmap m;
	struct model ref = { 0 };
	uint32_t seed = 12345;

	(void)state;
	assert_int_equal(idmap_init(&m, 0), 0);
	assert_null(idmap_find(&m, 7));
	assert_false(idmap_remove(&m, 7));
	/* Half the keys are small and dense (pids, uids), half anywhere;
	 * distinct by construction. */
	for (int i = 0; i < KEYS; i++)
		ref.key[i] = i < KEYS / 2 ? (uint32_t)i * 3 : 0x80000000u + (uint32_t)i * 2654435761u % 0x7fffffffu;
	for (int step = 0; step < 200000; step++) {
		int i;

		seed = seed * 1103515245u + 12345u;
		i = (int)((seed >> 8) % KEYS);
		if ((seed >> 28) & 1) {
			assert_int_equal(idmap_put(&m, ref.key[i], seed), 0);
			ref.n += !ref.in[i];
			ref.in[i] = true;
			ref.val[i] = seed;
		} else {
			assert_int_equal(idmap_remove(&m, ref.key[i]), ref.in[i]);
			ref.n -= ref.in[i];
			ref.in[i] = false;
		}
		if (step % 997 == 0)
			check_all(&m, &ref);
		assert_true(2 * m.n <= m.cap);
	}
	check_all(&m, &ref);
	idmap_free(&m);
	assert_null(idmap_find(&m, 0));
}

static void test_reserve_never_grows(void **state)
{
	struct idmap m;
	uint32_t *keys;

	(void)state;
	assert_int_equal(idmap_init(&m, 1000), 0);
	keys = m.keys;
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(idmap_put(&m, 60000 + i, i), 0);
	assert_ptr_equal(m.keys, keys);
	for (uint32_t i = 0; i < 1000; i += 2)
		assert_true(idmap_remove(&m, 60000 + i));
	for (uint32_t i = 0; i < 1000; i++) {
		const uint32_t *v = idmap_find(&m, 60000 + i);

		if (i % 2) {
			assert_non_null(v);
			assert_int_equal(*v, i);
		} else {
			assert_null(v);
		}
	}
	idmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_against_model),
		cmocka_unit_test(test_reserve_never_grows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
