/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Claims at scale (DESIGN §14): what the daemon does for one
 * claiming query, and for every owner of an owner-bound claim exiting,
 * with 10 and with 10,000 live claims. In process, on the daemon's own
 * claims.c and placement over the production map of a 480-CPU machine
 * (every CPU idle): no socket, no pidfd (their cost per owner does not
 * depend on how many claims exist), so the figures show how the claim
 * table scales.
 *
 * One query is: the lease check (claims_expire), placement with the
 * claimed levels, recording the claim tied to a process, and (to keep the
 * count steady) its release. One owner exit is claims_drop_pid() with the
 * ended callback, as the daemon's pidfd event runs it.
 *
 * Usage: bench/claims-scale [--quick]
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "claims.h"
#include "cpupri.h"
#include "levels.h"
#include "placement.h"
#include "topo.h"

#define CS_BIG 10000
#define CS_SMALL 10
#define CS_PID0 100000

static void cs_ended(const struct claim *cl, uint32_t why, void *ctx)
{
	(*(unsigned *)ctx)++;
}

/* n owner-bound claims at level normal, one CPU each, 100 users, half of
 * them with a lease far away. They all sit on the first CS_SMALL CPUs, so
 * that placement sees the same claimed levels with 10 claims as with
 * 10,000 and the difference is the claim table's alone. */
static int cs_fill(struct claims *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct claim tmpl = {
			.client = i + 1,
			.pid = (int32_t)(CS_PID0 + i),
			.uid = 1000 + i % 100,
			.level = LEVEL_NORMAL,
		};
		uint32_t id;
		int r;

		cpuset_set(&tmpl.cpus, i % CS_SMALL);
		r = claims_add(c, &tmpl, 0, i % 2 ? 3600000 : 0, &id);
		if (r < 0)
			return r;
	}
	return 0;
}

struct cs_result {
	double query_us;    /* median */
	double exit_all_ms; /* every owner */
	double exit_one_us; /* per owner */
};

static int cs_run(const struct topo *t, struct placement_ctx *pctx, struct placement_state *pst, unsigned n,
		  unsigned rounds,
		  struct cs_result *ret)
{
	uint64_t *ns = calloc(rounds, sizeof(*ns));
	struct placement_result *res = malloc(sizeof(*res));
	struct claims *c = NULL;
	uint32_t rotor = 0;
	unsigned ended = 0;
	uint64_t t0;
	int r = -ENOMEM;

	if (!ns || !res)
		goto out;
	r = claims_new(t->ncpus, &c);
	if (r < 0)
		goto out;
	r = cs_fill(c, n);
	if (r < 0)
		goto out;
	for (unsigned i = 0; i < rounds; i++) {
		struct placement_request req = { .prio = 50, .count = 1, .node = -1, .near_cpu = -1 };
		struct claim tmpl = { .client = 1, .pid = 7, .uid = 65534 };
		uint32_t id;

		t0 = bench_now_ns();
		claims_expire(c, 1000, cs_ended, &ended);
		r = placement_ctx_choose(pctx, pst, claims_levels(c), &rotor, &req, NULL, res);
		if (r < 0 || res->n != 1) {
			r = r < 0 ? r : -EIO;
			goto out;
		}
		tmpl.level = (uint8_t)level_from_rt_priority(50);
		cpuset_set(&tmpl.cpus, res->cpus[0]);
		r = claims_add(c, &tmpl, 1000, 30000, &id);
		if (r == 0)
			r = claims_release(c, id);
		ns[i] = bench_now_ns() - t0;
		if (r < 0)
			goto out;
	}
	qsort(ns, rounds, sizeof(*ns), bench_cmp_u64);
	ret->query_us = (double)ns[rounds / 2] / 1e3;

	t0 = bench_now_ns();
	for (unsigned i = 0; i < n; i++)
		claims_drop_pid(c, (int32_t)(CS_PID0 + i), cs_ended, &ended);
	ret->exit_all_ms = (double)(bench_now_ns() - t0) / 1e6;
	ret->exit_one_us = ret->exit_all_ms * 1e3 / n;
	r = ended == n && claims_count(c) == 0 ? 0 : -EIO;
out:
	claims_free(c);
	free(res);
	free(ns);
	return r;
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	unsigned rounds = quick ? 500 : 5000, repeats = quick ? 3 : 7;
	struct placement_config cfg = { .prefer_idle = true, .avoid_smt = PLACEMENT_SMT_RT };
	struct placement_ctx *pctx = NULL;
	struct placement_state *pst = NULL;
	struct cpupri_geom geom;
	struct cpupri_view view;
	uint16_t shard_of[RTPLACE_MAX_CPUS];
	uint32_t nshards;
	struct topo *t = NULL;
	struct cs_result small[8], big[8];
	double q_small[8], q_big[8], e_small[8], e_big[8];
	void *map = NULL;
	int r;

	if (argc > 1 && !quick) {
		fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
		return 2;
	}
	r = topo_synthetic(2, 1, 1, 120, 2, &t);
	if (r == 0) {
		topo_shards(t, TOPO_SHARD_NODE, shard_of, &nshards);
		r = cpupri_geom_compute(t->ncpus, nshards, shard_of, &geom);
	}
	if (r == 0) {
		map = aligned_alloc(CPUPRI_LINE, geom.size);
		r = map ? 0 : -ENOMEM;
	}
	if (r == 0) {
		memset(map, 0, geom.size);
		cpupri_init(map, &geom, shard_of);
		for (uint32_t cpu = 0; cpu < t->ncpus; cpu++)
			cpupri_set(map, &geom, cpu, LEVEL_IDLE);
		r = cpupri_view_open(map, geom.size, &view);
	}
	if (r == 0) {
		cfg.managed = t->online;
		r = placement_ctx_new(&cfg, t, &view, &pctx);
	}
	if (r == 0)
		r = placement_state_new(pctx, &pst);
	for (unsigned k = 0; r == 0 && k < repeats; k++) {
		r = cs_run(t, pctx, pst, CS_SMALL, rounds, &small[k]);
		if (r == 0)
			r = cs_run(t, pctx, pst, CS_BIG, rounds, &big[k]);
		q_small[k] = small[k].query_us;
		q_big[k] = big[k].query_us;
		e_small[k] = small[k].exit_one_us;
		e_big[k] = big[k].exit_all_ms;
	}
	if (r < 0) {
		fprintf(stderr, "claims-scale: %s\n", strerror(-r));
		return 1;
	}
	qsort(q_small, repeats, sizeof(double), bench_cmp_double);
	qsort(q_big, repeats, sizeof(double), bench_cmp_double);
	qsort(e_small, repeats, sizeof(double), bench_cmp_double);
	qsort(e_big, repeats, sizeof(double), bench_cmp_double);
	printf("claims-scale: 480 CPUs (all idle), %u queries per run, median of %u runs\n", rounds, repeats);
	printf("one claiming query (expire + placement + claim + release), us: %u claims %.2f, %u claims %.2f "
	       "(ratio %.2f)\n",
	       CS_SMALL, q_small[repeats / 2], CS_BIG, q_big[repeats / 2], q_big[repeats / 2] / q_small[repeats / 2]);
	printf("owner exit, us per owner: %u owners %.3f, %u owners %.3f (ratio %.2f); all %u owners: %.2f ms\n",
	       CS_SMALL, e_small[repeats / 2], CS_BIG, e_big[repeats / 2] * 1e3 / CS_BIG,
	       e_big[repeats / 2] * 1e3 / CS_BIG / e_small[repeats / 2], CS_BIG, e_big[repeats / 2]);
	placement_state_free(pst);
	placement_ctx_free(pctx);
	cpupri_view_close(&view);
	free(map);
	topo_free(t);
	return 0;
}
