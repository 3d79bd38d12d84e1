/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the CPU choice behind MOVE requests and pushes
 * (daemon/moves.c: moves_pick(), moves_pick_reason()) over a synthetic
 * 4-CPU machine and a map the test sets: a found CPU, every candidate at
 * or above the level, no managed CPU in the set and a level that is not RT
 * are told apart, and each failure becomes its own reply (no root, no
 * daemon).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "moves.h"
#include "refmodel.h"

struct fixture {
	struct topo *t;
	struct refmodel_map map;
	struct placement_config cfg;
	struct placement_ctx *ctx;
	struct auth_policy policy;
	struct moves *m;
};

/* CPUs 0 and 1 are managed, 2 and 3 housekeeping; all idle. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct config cfg;
	struct moves_opts o;

	if (!f || topo_synthetic(1, 1, 1, 4, 1, &f->t) < 0 || refmodel_map_open(f->t, TOPO_SHARD_NODE, &f->map) < 0)
		return -1;
	for (uint32_t c = 0; c < 4; c++)
		refmodel_map_set(&f->map, c, LEVEL_IDLE);
	cpuset_set(&f->cfg.managed, 0);
	cpuset_set(&f->cfg.managed, 1);
	if (placement_ctx_new(&f->cfg, f->t, &f->map.view, &f->ctx) < 0)
		return -1;
	config_defaults(&cfg);
	auth_policy_from_config(&cfg, &f->policy);
	o = (struct moves_opts){
		.topo = f->t,
		.view = &f->map.view,
		.pcfg = &f->cfg,
		.placement = &f->ctx,
		.proc_root = "/nonexistent",
		.policy = &f->policy,
	};
	if (moves_new(&o, &f->m) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	moves_free(f->m);
	placement_ctx_free(f->ctx);
	refmodel_map_close(&f->map);
	topo_free(f->t);
	free(f);
	return 0;
}

static void test_pick_found(void **state)
{
	struct fixture *f = *state;
	int cpu = -1;

	refmodel_map_set(&f->map, 0, LEVEL_RT1 + 59);
	assert_int_equal(moves_pick(f->m, &f->t->online, -1, LEVEL_RT1 + 49, NULL, &cpu), 0);
	assert_int_equal(cpu, 1);
}

/* Every managed CPU at or above the level: "no CPU below", not an
 * out-of-memory and not a missing CPU. */
static void test_pick_none_below(void **state)
{
	struct fixture *f = *state;
	struct rtplace_reason reason;
	int cpu = -1, r;

	refmodel_map_set(&f->map, 0, LEVEL_RT1 + 59);
	refmodel_map_set(&f->map, 1, LEVEL_RT1 + 49);
	r = moves_pick(f->m, &f->t->online, -1, LEVEL_RT1 + 49, NULL, &cpu);
	assert_int_equal(r, -ENOENT);
	assert_int_equal(cpu, -1);
	assert_int_equal(moves_pick_reason(r, LEVEL_RT1 + 49, &reason), -EBUSY);
	assert_string_equal(reason.text, "no CPU below rt50 in the requested set");
}

static void test_pick_no_managed_cpu(void **state)
{
	struct fixture *f = *state;
	struct rtplace_reason reason;
	struct rtplace_cpumask housekeeping = { 0 };
	int cpu = -1, r;

	cpuset_set(&housekeeping, 3);
	r = moves_pick(f->m, &housekeeping, -1, LEVEL_RT1 + 49, NULL, &cpu);
	assert_int_equal(r, -ENODEV);
	assert_int_equal(cpu, -1);
	assert_int_equal(moves_pick_reason(r, LEVEL_RT1 + 49, &reason), -EBUSY);
	assert_string_equal(reason.text, "no managed online CPU in the requested set");
}

static void test_pick_not_rt(void **state)
{
	struct fixture *f = *state;
	int cpu = -1;

	assert_int_equal(moves_pick(f->m, &f->t->online, -1, LEVEL_NORMAL, NULL, &cpu), -EINVAL);
	assert_int_equal(cpu, -1);
}

static void test_pick_reason_out_of_memory(void **state)
{
	struct rtplace_reason reason;

	(void)state;
	assert_int_equal(moves_pick_reason(-ENOMEM, LEVEL_RT1, &reason), -ENOMEM);
	assert_string_equal(reason.text, "out of memory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pick_found, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pick_none_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pick_no_managed_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pick_not_rt, setup, teardown),
		cmocka_unit_test(test_pick_reason_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
