/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the CPU choice behind MOVE requests, pushes and
 * RealtimeKit grants (common/placement.c: placement_ctx_pick(),
 * placement_pick_reason(), which the engine's engine_pick() calls with
 * its rotor) over a synthetic
 * 4-CPU machine and a map the test sets: a found CPU, every candidate at
 * or above the level, no managed CPU in the set and a level that is not RT
 * are told apart, and each failure becomes its own reply (no root, no
 * daemon). With CPUs isolated in a fixture sysfs tree and housekeeping-cpus
 * unset, the non-isolated CPUs are the housekeeping set for every pick
 * (MOVE with PLACE, its re-pick, pushes of managed threads, RealtimeKit
 * claims): the same answers as with housekeeping-cpus naming them.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "auth.h"
#include "conf.h"
#include "placement.h"
#include "refmodel.h"
#include "sysfs.h"

struct fixture {
	struct topo *t;
	struct refmodel_map map;
	struct placement_config cfg;
	struct placement_ctx *ctx;
	struct placement_state *st;
	uint32_t rotor;
	struct placement_result scratch;
};

/* CPUs 0 and 1 are managed, 2 and 3 housekeeping; all idle. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || topo_synthetic(1, 1, 1, 4, 1, &f->t) < 0 || refmodel_map_open(f->t, TOPO_SHARD_NODE, &f->map) < 0)
		return -1;
	for (uint32_t c = 0; c < 4; c++)
		refmodel_map_set(&f->map, c, LEVEL_IDLE);
	cpuset_set(&f->cfg.managed, 0);
	cpuset_set(&f->cfg.managed, 1);
	if (placement_ctx_new(&f->cfg, f->t, &f->map.view, &f->ctx) < 0 || placement_state_new(f->ctx, &f->st) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	placement_state_free(f->st);
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
	assert_int_equal(placement_ctx_pick(f->ctx, f->st, NULL, &f->rotor, &f->t->online, -1, LEVEL_RT1 + 49,
			 &f->scratch, &cpu), 0);
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
	r = placement_ctx_pick(f->ctx, f->st, NULL, &f->rotor, &f->t->online, -1, LEVEL_RT1 + 49, &f->scratch, &cpu);
	assert_int_equal(r, -ENOENT);
	assert_int_equal(cpu, -1);
	assert_int_equal(placement_pick_reason(r, LEVEL_RT1 + 49, &reason), -EBUSY);
	assert_string_equal(reason.text, "no CPU below rt50 in the requested set");
}

static void test_pick_no_managed_cpu(void **state)
{
	struct fixture *f = *state;
	struct rtplace_reason reason;
	struct rtplace_cpumask housekeeping = { 0 };
	int cpu = -1, r;

	cpuset_set(&housekeeping, 3);
	r = placement_ctx_pick(f->ctx, f->st, NULL, &f->rotor, &housekeeping, -1, LEVEL_RT1 + 49, &f->scratch, &cpu);
	assert_int_equal(r, -ENODEV);
	assert_int_equal(cpu, -1);
	assert_int_equal(placement_pick_reason(r, LEVEL_RT1 + 49, &reason), -EBUSY);
	assert_string_equal(reason.text, "no managed online CPU in the requested set");
}

static void test_pick_not_rt(void **state)
{
	struct fixture *f = *state;
	int cpu = -1;

	assert_int_equal(placement_ctx_pick(f->ctx, f->st, NULL, &f->rotor, &f->t->online, -1, LEVEL_NORMAL,
			 &f->scratch, &cpu), -EINVAL);
	assert_int_equal(cpu, -1);
}

static void test_pick_reason_out_of_memory(void **state)
{
	struct rtplace_reason reason;

	(void)state;
	assert_int_equal(placement_pick_reason(-ENOMEM, LEVEL_RT1, &reason), -ENOMEM);
	assert_string_equal(reason.text, "out of memory");
}

/*
 * A 4-CPU machine whose fixture sysfs isolates CPUs 2-3, all idle, its
 * placement configured from config_text as the daemon configures it
 * (config_placement()); the picks a MOVE, a push and a RealtimeKit claim
 * make over the managed CPUs.
 */
static void isolated_picks(const char *config_text, int *ret_free, int *ret_busy, int *ret_rest_only)
{
	char root[] = "/tmp/test-pick.XXXXXX", path[128];
	struct sysfs_isolation iso;
	struct rtplace_reason reason;
	struct placement_config pcfg;
	struct placement_ctx *ctx;
	struct placement_state *st;
	struct refmodel_map map;
	struct placement_result scratch;
	struct config cfg;
	uint32_t rotor = 0;
	struct rtplace_cpumask rest = { 0 };
	struct topo *t;
	FILE *f;
	int cpu;

	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/devices", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/devices/system", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/devices/system/cpu", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/devices/system/cpu/isolated", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("2-3\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(sysfs_read_isolation(root, &reason, &iso), 0);
	unlink(path);
	for (int depth = 0; depth < 3; depth++) {
		*strrchr(path, '/') = '\0';
		rmdir(path);
	}
	rmdir(root);

	assert_int_equal(topo_synthetic(1, 1, 1, 4, 1, &t), 0);
	assert_int_equal(refmodel_map_open(t, TOPO_SHARD_NODE, &map), 0);
	for (uint32_t c = 0; c < 4; c++)
		refmodel_map_set(&map, c, LEVEL_IDLE);
	config_defaults(&cfg);
	if (config_text)
		assert_int_equal(config_load_string("t.conf", config_text, &cfg, NULL, NULL), 0);
	config_placement(&cfg, t, &iso.isolated, &pcfg);
	assert_int_equal(placement_ctx_new(&pcfg, t, &map.view, &ctx), 0);
	assert_int_equal(placement_state_new(ctx, &st), 0);

	/* Near CPU 0, a housekeeping CPU: the pick still goes to an isolated one. */
	*ret_free = -1;
	assert_int_equal(placement_ctx_pick(ctx, st, NULL, &rotor, &pcfg.managed, 0, LEVEL_RT1 + 49, &scratch, ret_free), 0);
	/* The isolated CPUs busy above: no pick, not a housekeeping CPU. */
	refmodel_map_set(&map, 2, LEVEL_RT1 + 59);
	refmodel_map_set(&map, 3, LEVEL_RT1 + 59);
	cpu = -1;
	*ret_busy = placement_ctx_pick(ctx, st, NULL, &rotor, &pcfg.managed, 0, LEVEL_RT1 + 49, &scratch, &cpu);
	assert_int_equal(cpu, -1);
	/* Only housekeeping CPUs asked for. */
	cpuset_set(&rest, 0);
	cpuset_set(&rest, 1);
	*ret_rest_only = placement_ctx_pick(ctx, st, NULL, &rotor, &rest, -1, LEVEL_RT1 + 49, &scratch, &cpu);
	assert_int_equal(cpu, -1);

	placement_state_free(st);
	placement_ctx_free(ctx);
	refmodel_map_close(&map);
	topo_free(t);
}

static void test_pick_isolated_housekeeping(void **state)
{
	int derived_free, derived_busy, derived_rest, named_free, named_busy, named_rest;

	(void)state;
	isolated_picks(NULL, &derived_free, &derived_busy, &derived_rest);
	assert_true(derived_free == 2 || derived_free == 3);
	assert_int_equal(derived_busy, -ENOENT);
	assert_int_equal(derived_rest, -ENODEV);
	isolated_picks("[placement]\nhousekeeping-cpus = 0-1\n", &named_free, &named_busy, &named_rest);
	assert_true(named_free == 2 || named_free == 3);
	assert_int_equal(named_busy, derived_busy);
	assert_int_equal(named_rest, derived_rest);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pick_found, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pick_none_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pick_no_managed_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pick_not_rt, setup, teardown),
		cmocka_unit_test(test_pick_reason_out_of_memory),
		cmocka_unit_test(test_pick_isolated_housekeeping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
