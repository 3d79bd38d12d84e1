/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * placement_choose() against the naive reference placement (refmodel.c) on
 * every shared topology, with hybrid and hot-unplugged variants, over random
 * map states, claims, configurations and requests; then one targeted case
 * per rule of DESIGN §5 on a small machine.
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
#include <cmocka.h>

#include "cpupri.h"
#include "placement-core.h"
#include "placement.h"
#include "refmodel.h"

#define DIFF_STATES 150
#define DIFF_QUERIES 12

struct diff_stats {
	uint64_t seed;
	unsigned topologies;
	unsigned long states, queries, ok, partial, enoent, enodev, einval, multi;
};

struct diff_case {
	struct refmodel_map map;
	struct placement_config cfg;
	uint8_t claimed[RTPLACE_MAX_CPUS];
	struct placement_result got, want;
	struct rtplace_reason got_why, want_why;
};

static void diff_random_config(uint64_t *rng, const struct topo *t, struct placement_config *cfg)
{
	struct rtplace_cpumask sib;

	cfg->managed = t->online;
	switch (refmodel_rand_below(rng, 4)) {
	case 0:
		break;
	case 1:
		/* The usual housekeeping choice: CPU 0 and its siblings. */
		topo_siblings(t, 0, &sib);
		cpuset_andnot(&cfg->managed, &cfg->managed, &sib);
		cpuset_clear(&cfg->managed, 0);
		break;
	default:
		for (uint32_t c = 0; c < t->ncpus; c++)
			if (refmodel_rand_below(rng, 20) == 0)
				cpuset_clear(&cfg->managed, c);
		break;
	}
	cfg->prefer_idle = refmodel_rand_below(rng, 4) != 0;
	cfg->avoid_smt = (enum placement_smt)refmodel_rand_below(rng, 3);
	cpuset_zero(&cfg->noisy);
	if (refmodel_rand_below(rng, 3) == 0)
		refmodel_random_set(rng, t, &cfg->noisy);
}

static void diff_random_request(uint64_t *rng, const struct topo *t, struct placement_request *req)
{
	static const int prios[] = { 1, 2, 50, 98, 99 };
	uint32_t dice = refmodel_rand_below(rng, 100);

	req->prio = dice < 2 ? (int)refmodel_rand_below(rng, 2) * 100
		  : dice < 40 ? prios[refmodel_rand_below(rng, 5)] : 1 + (int)refmodel_rand_below(rng, 99);
	dice = refmodel_rand_below(rng, 100);
	req->count = dice < 1 ? 0
		   : dice < 50 ? 1
		   : dice < 85 ? 2 + refmodel_rand_below(rng, 7)
		   : dice < 97 ? 9 + refmodel_rand_below(rng, 56) : t->ncpus + refmodel_rand_below(rng, 4);
	if (refmodel_rand_below(rng, 3) == 0)
		cpuset_zero(&req->allowed);
	else
		refmodel_random_set(rng, t, &req->allowed);
	dice = refmodel_rand_below(rng, 100);
	req->node = dice < 70 ? -1 : dice < 98 ? (int32_t)refmodel_rand_below(rng, t->nnodes) : (int32_t)t->nnodes;
	dice = refmodel_rand_below(rng, 100);
	req->near_cpu = dice < 50 ? -1 : dice < 98 ? (int32_t)refmodel_rand_below(rng, t->ncpus) : (int32_t)t->ncpus;
}

/* What must hold of any answer, model or not. */
static void diff_check_invariants(const struct diff_case *dc, const struct topo *t, const uint8_t *claimed,
				  const struct placement_request *req, const struct placement_result *res)
{
	uint32_t below = level_from_rt_priority(req->prio), eligible = 0;
	struct rtplace_cpumask cand, seen;

	cpuset_and(&cand, refmodel_allowed_empty(t, &req->allowed) ? &dc->cfg.managed : &req->allowed,
		   &dc->cfg.managed);
	cpuset_and(&cand, &cand, &t->online);
	if (req->node >= 0)
		cpuset_and(&cand, &cand, &t->node_cpus[req->node]);
	CPUSET_FOREACH(c, &cand) {
		uint32_t l = dc->map.levels[c] > claimed[c] ? dc->map.levels[c] : claimed[c];

		if (dc->map.levels[c] != LEVEL_OFFLINE && l < below)
			eligible++;
	}
	assert_int_equal(res->n, eligible < req->count ? eligible : req->count);
	cpuset_zero(&seen);
	for (uint32_t i = 0; i < res->n; i++) {
		uint32_t c = res->cpus[i];
		uint32_t l = dc->map.levels[c] > claimed[c] ? dc->map.levels[c] : claimed[c];

		assert_true(cpuset_test(&cand, c));
		assert_false(cpuset_test(&seen, c));
		cpuset_set(&seen, c);
		assert_int_equal(res->levels[i], l);
		assert_true(l < below);
		assert_true(dc->map.levels[c] != LEVEL_OFFLINE);
	}
}

/* Fails, naming where, unless the answer (r, dc->got, rotor) is the
 * model's (rr, dc->want, rotor_want); checks the invariants of a success. */
static void diff_expect_model(const struct diff_case *dc, const struct topo *t, const uint8_t *claimed,
			      const struct placement_request *req, const char *where, int r, int rr, uint32_t rotor,
			      uint32_t rotor_want)
{
	if (r != rr || strcmp(dc->got_why.text, dc->want_why.text) != 0 || dc->got.n != dc->want.n ||
	    rotor != rotor_want || (r == 0 && dc->got.level != dc->want.level))
		fail_msg("%s: %d/%d '%s'/'%s' n %u/%u rotor %u/%u", where, r, rr, dc->got_why.text, dc->want_why.text,
			 dc->got.n, dc->want.n, rotor, rotor_want);
	for (uint32_t i = 0; i < dc->got.n; i++)
		if (dc->got.cpus[i] != dc->want.cpus[i] || dc->got.levels[i] != dc->want.levels[i])
			fail_msg("%s: pick %u is cpu %u level %u, model cpu %u level %u", where, i, dc->got.cpus[i],
				 dc->got.levels[i], dc->want.cpus[i], dc->want.levels[i]);
	if (r == 0)
		diff_check_invariants(dc, t, claimed, req, &dc->got);
}

static void diff_run(const char *label, const char *variant, struct topo *t, enum topo_shard mode,
		     struct diff_stats *st)
{
	uint64_t rng = st->seed ^ ((uint64_t)t->ncpus << 8) ^ ((uint64_t)mode << 40) ^ (uint64_t)variant[0];
	struct diff_case *dc = calloc(1, sizeof(*dc));
	uint8_t next[RTPLACE_MAX_CPUS];
	uint32_t rotor = 0;
	char where[160];
	bool skew;

	assert_non_null(dc);
	assert_int_equal(refmodel_map_open(t, mode, &dc->map), 0);
	for (unsigned s = 0; s < DIFF_STATES; s++) {
		bool claims = refmodel_rand_below(&rng, 2);

		refmodel_random_levels(&rng, t->ncpus, next);
		for (uint32_t c = 0; c < t->ncpus; c++) {
			/* Offline CPUs are offline in the map too, except for a
			 * few stale entries that must still never be chosen. */
			if (!t->cpus[c].online && refmodel_rand_below(&rng, 20) != 0)
				next[c] = LEVEL_OFFLINE;
			refmodel_map_set(&dc->map, c, next[c]);
			dc->claimed[c] = 0;
			if (claims && refmodel_rand_below(&rng, 8) == 0)
				dc->claimed[c] = (uint8_t)(LEVEL_IDLE + refmodel_rand_below(&rng, LEVEL_COUNT - 1));
		}
		diff_random_config(&rng, t, &dc->cfg);
		st->states++;
		/* A third of the states with every shard's "has CPUs at this
		 * level" hint set, most wrongly: the answers must not change. */
		skew = refmodel_rand_below(&rng, 3) == 0;
		if (skew)
			refmodel_map_skew_hints(&dc->map, 1);

		for (unsigned q = 0; q < DIFF_QUERIES; q++) {
			struct placement_request req;
			uint32_t rotor_want;
			int r, rr;

			diff_random_request(&rng, t, &req);
			if (refmodel_rand_below(&rng, 4) == 0)
				rotor = refmodel_rand_below(&rng, 4 * t->ncpus);
			rotor_want = rotor;
			r = placement_choose(&dc->cfg, t, &dc->map.view, claims ? dc->claimed : NULL, &rotor, &req,
					     &dc->got_why, &dc->got);
			rr = refmodel_place(&dc->cfg, t, dc->map.levels, claims ? dc->claimed : NULL, &rotor_want, &req,
					    &dc->want_why, &dc->want);
			snprintf(where, sizeof(where), "%s %s shard %d state %u query %u%s", label, variant, mode, s, q,
				 skew ? " (hints skewed)" : "");
			diff_expect_model(dc, t, dc->claimed, &req, where, r, rr, rotor, rotor_want);
			st->queries++;
			st->ok += r == 0 && dc->got.n == req.count;
			st->partial += r == 0 && dc->got.n < req.count;
			st->multi += r == 0 && dc->got.n > 1;
			st->enoent += r == -ENOENT;
			st->enodev += r == -ENODEV;
			st->einval += r == -EINVAL;
		}
		if (skew)
			refmodel_map_skew_hints(&dc->map, -1);
	}
	refmodel_map_close(&dc->map);
	free(dc);
}

static void diff_topology_cb(const char *label, struct topo *t, void *arg)
{
	struct diff_stats *st = arg;

	diff_run(label, "plain", t, TOPO_SHARD_NODE, st);
	/* Hybrid: every third core is of a less performant kind. */
	for (uint32_t c = 0; c < t->ncpus; c++)
		t->cpus[c].kind = t->cpus[c].core % 3 == 2;
	assert_int_equal(topo_finish(t), 0);
	diff_run(label, "hybrid", t, TOPO_SHARD_LLC, st);
	/* And some CPUs hot-unplugged, siblings of online ones among them. */
	for (uint32_t c = 0; c < t->ncpus; c++)
		if (c % 7 == 3)
			t->cpus[c].online = false;
	assert_int_equal(topo_finish(t), 0);
	diff_run(label, "offline", t, TOPO_SHARD_NODE, st);
}

static void test_differential(void **state)
{
	struct diff_stats st = { .seed = refmodel_seed() };

	st.topologies = refmodel_each_topology(diff_topology_cb, &st);
	print_message("seed %#llx: %u topologies x 3 variants, %lu states, %lu queries: %lu full (%lu multi-CPU), "
		      "%lu partial, %lu ENOENT, %lu ENODEV, %lu EINVAL\n",
		      (unsigned long long)st.seed, st.topologies, st.states, st.queries, st.ok, st.multi, st.partial,
		      st.enoent, st.enodev, st.einval);
	assert_true(st.topologies >= 5);
	assert_true(st.queries > 10000);
	/* The mix must exercise every outcome, or the comparison proves little. */
	assert_true(st.ok > 1000 && st.multi > 1000 && st.partial > 100);
	assert_true(st.enoent > 100 && st.enodev > 10 && st.einval > 100);
}

/*
 * One long-lived context answering many queries while the map and the
 * claims change under it, as rtplaced's does: every answer must be the
 * model's, so nothing one answer leaves in the context's scratch space may
 * leak into the next. Also on the same machines with their CPU ids
 * shuffled, so that SMT siblings follow no shift pattern and the context
 * falls back to its per-CPU sibling lists.
 */
#define CTX_CONFIGS 4
#define CTX_QUERIES 250

static void ctx_run(const char *label, const char *variant, struct topo *t, struct diff_stats *st)
{
	uint64_t rng = st->seed ^ ((uint64_t)t->ncpus << 16) ^ (uint64_t)variant[0];
	struct diff_case *dc = calloc(1, sizeof(*dc));
	uint8_t next[RTPLACE_MAX_CPUS];
	uint32_t rotor = 0;
	char where[160];

	assert_non_null(dc);
	assert_int_equal(refmodel_map_open(t, refmodel_rand_below(&rng, 2) ? TOPO_SHARD_NODE : TOPO_SHARD_LLC, &dc->map),
			 0);
	for (unsigned k = 0; k < CTX_CONFIGS; k++) {
		bool claims = k % 2;
		struct placement_ctx *ctx;
		struct placement_state *ps = NULL;

		diff_random_config(&rng, t, &dc->cfg);
		assert_int_equal(placement_ctx_new(&dc->cfg, t, &dc->map.view, &ctx), 0);
		assert_int_equal(placement_state_new(ctx, &ps), 0);
		for (unsigned q = 0; q < CTX_QUERIES; q++) {
			struct placement_request req;
			uint32_t rotor_want;
			int r, rr;

			/* A few CPUs move and a claim comes or goes between
			 * answers; now and then the whole map changes. */
			refmodel_random_levels(&rng, t->ncpus, next);
			for (uint32_t c = 0; c < t->ncpus; c++) {
				if (q % 50 != 0 && refmodel_rand_below(&rng, t->ncpus) >= 4)
					continue;
				refmodel_map_set(&dc->map, c, t->cpus[c].online ? next[c] : LEVEL_OFFLINE);
				if (claims && refmodel_rand_below(&rng, 4) == 0)
					dc->claimed[c] = refmodel_rand_below(&rng, 2)
						? 0 : (uint8_t)(LEVEL_IDLE + refmodel_rand_below(&rng, LEVEL_COUNT - 1));
			}
			diff_random_request(&rng, t, &req);
			rotor_want = rotor;
			r = placement_ctx_choose(ctx, ps, claims ? dc->claimed : NULL, &rotor, &req, &dc->got_why, &dc->got);
			rr = refmodel_place(&dc->cfg, t, dc->map.levels, claims ? dc->claimed : NULL, &rotor_want, &req,
					    &dc->want_why, &dc->want);
			snprintf(where, sizeof(where), "%s %s ctx config %u query %u", label, variant, k, q);
			diff_expect_model(dc, t, dc->claimed, &req, where, r, rr, rotor, rotor_want);
			st->queries++;
			st->ok += r == 0 && dc->got.n == req.count;
			st->multi += r == 0 && dc->got.n > 1;
		}
		placement_state_free(ps);
		placement_ctx_free(ctx);
		memset(dc->claimed, 0, sizeof(dc->claimed));
	}
	refmodel_map_close(&dc->map);
	free(dc);
}

/* t with its CPU ids permuted at random, objects and kinds kept. */
static struct topo *ctx_shuffled(uint64_t *rng, const struct topo *t)
{
	uint32_t perm[RTPLACE_MAX_CPUS];
	struct topo *s;

	assert_int_equal(topo_new(t->ncpus, &s), 0);
	for (uint32_t c = 0; c < t->ncpus; c++)
		perm[c] = c;
	for (uint32_t c = t->ncpus; c-- > 1;) {
		uint32_t j = refmodel_rand_below(rng, c + 1), tmp = perm[c];

		perm[c] = perm[j];
		perm[j] = tmp;
	}
	for (uint32_t c = 0; c < t->ncpus; c++)
		s->cpus[perm[c]] = t->cpus[c];
	assert_int_equal(topo_finish(s), 0);
	return s;
}

static void ctx_topology_cb(const char *label, struct topo *t, void *arg)
{
	struct diff_stats *st = arg;
	uint64_t rng = st->seed ^ t->ncpus;
	struct topo *s;

	ctx_run(label, "plain", t, st);
	/* Hybrid, and some CPUs hot-unplugged, as in the differential run. */
	for (uint32_t c = 0; c < t->ncpus; c++) {
		t->cpus[c].kind = t->cpus[c].core % 3 == 2;
		if (c % 7 == 3)
			t->cpus[c].online = false;
	}
	assert_int_equal(topo_finish(t), 0);
	ctx_run(label, "hybrid-offline", t, st);
	s = ctx_shuffled(&rng, t);
	ctx_run(label, "shuffled", s, st);
	topo_free(s);
}

static void test_ctx_reuse(void **state)
{
	struct diff_stats st = { .seed = refmodel_seed() };

	st.topologies = refmodel_each_topology(ctx_topology_cb, &st);
	print_message("seed %#llx: %u topologies x 3 variants, %lu queries on long-lived contexts: %lu full "
		      "(%lu multi-CPU)\n",
		      (unsigned long long)st.seed, st.topologies, st.queries, st.ok, st.multi);
	assert_true(st.queries > 10000);
	assert_true(st.ok > 1000 && st.multi > 1000);
}

/*
 * Stamped claims (placement_ctx_choose_stamped()): a state keeps what it
 * derives from the claims (claimed sets per threshold, the penalties they
 * give, the cpuset words they leave free) while their stamp stays, and a
 * keeper changes the stamp with the claims. Claims here change in bursts
 * and stay put for several answers at many priorities, so the derived
 * sets are reused, replaced (more thresholds than the state keeps) and
 * dropped; the requests are mostly the fast paths' (no allowed set, node
 * or near CPU), and now and then the same state answers for other
 * claims without a stamp (as rtplaced's moves do with
 * claims_levels_except()), after which the stamp must no longer vouch for
 * its copy. Every answer must be the model's.
 */
#define STAMP_CONFIGS 3
#define STAMP_QUERIES 300

/* New claims for the keeper: a few CPUs claimed or released, none, a
 * random share of the machine at one level, or one CPU of each core at a
 * level drawn per cpuset word (every free CPU then sits beside a claim, as
 * in the bench, and which words a fast walk may pass depends on the
 * priority asked for). */
static void stamp_new_claims(uint64_t *rng, const struct topo *t, uint8_t *claimed)
{
	uint32_t dice = refmodel_rand_below(rng, 12), level = LEVEL_IDLE + refmodel_rand_below(rng, LEVEL_COUNT - 1);
	uint8_t word_level[CPUSET_WORDS];
	struct rtplace_cpumask cores_met;

	for (uint32_t i = 0; i < CPUSET_WORDS; i++)
		word_level[i] = (uint8_t)(LEVEL_NORMAL + refmodel_rand_below(rng, LEVEL_COUNT - LEVEL_NORMAL));
	cpuset_zero(&cores_met);
	for (uint32_t c = 0; c < t->ncpus; c++) {
		const uint32_t core = (uint32_t)t->cpus[c].core;
		const bool first_of_core = core < RTPLACE_MAX_CPUS && !cpuset_test(&cores_met, core);

		if (dice < 5 && refmodel_rand_below(rng, t->ncpus) < 3)
			claimed[c] = refmodel_rand_below(rng, 2) ? 0 : (uint8_t)level;
		else if (dice == 5)
			claimed[c] = 0;
		else if (dice < 9)
			claimed[c] = refmodel_rand_below(rng, 2) ? (uint8_t)level : 0;
		else
			claimed[c] = first_of_core ? word_level[c / 64] : 0;
		if (first_of_core)
			cpuset_set(&cores_met, core);
	}
}

static void stamp_run(const char *label, const char *variant, struct topo *t, struct diff_stats *st)
{
	uint64_t rng = st->seed ^ ((uint64_t)t->ncpus << 24) ^ (uint64_t)variant[0];
	struct diff_case *dc = calloc(1, sizeof(*dc));
	uint8_t next[RTPLACE_MAX_CPUS], other[RTPLACE_MAX_CPUS];
	uint64_t stamp = 1;
	uint32_t rotor = 0;
	char where[160];

	assert_non_null(dc);
	assert_int_equal(refmodel_map_open(t, refmodel_rand_below(&rng, 2) ? TOPO_SHARD_NODE : TOPO_SHARD_LLC, &dc->map),
			 0);
	refmodel_random_levels(&rng, t->ncpus, next);
	for (uint32_t c = 0; c < t->ncpus; c++)
		refmodel_map_set(&dc->map, c, t->cpus[c].online ? next[c] : LEVEL_OFFLINE);
	for (unsigned k = 0; k < STAMP_CONFIGS; k++) {
		struct placement_ctx *ctx;
		struct placement_state *ps = NULL;

		diff_random_config(&rng, t, &dc->cfg);
		dc->cfg.prefer_idle = k < STAMP_CONFIGS - 1;
		assert_int_equal(placement_ctx_new(&dc->cfg, t, &dc->map.view, &ctx), 0);
		assert_int_equal(placement_state_new(ctx, &ps), 0);
		for (unsigned q = 0; q < STAMP_QUERIES; q++) {
			bool plain = refmodel_rand_below(&rng, 10) == 0;
			const uint8_t *claims = plain ? other : dc->claimed;
			struct placement_request req = { .prio = 1 + (int)refmodel_rand_below(&rng, 99),
							 .count = refmodel_rand_below(&rng, 4) ? 1 : 2 + refmodel_rand_below(&rng, 7),
							 .node = -1, .near_cpu = -1 };
			uint32_t rotor_want;
			int r, rr;

			if (refmodel_rand_below(&rng, 8) == 0) {
				stamp_new_claims(&rng, t, dc->claimed);
				stamp++;
			}
			if (refmodel_rand_below(&rng, 20) == 0) {
				uint32_t c = refmodel_rand_below(&rng, t->ncpus);

				refmodel_map_set(&dc->map, c, t->cpus[c].online ? next[refmodel_rand_below(&rng, t->ncpus)]
										   : LEVEL_OFFLINE);
			}
			if (plain)
				stamp_new_claims(&rng, t, other);
			if (refmodel_rand_below(&rng, 5) == 0)
				refmodel_random_set(&rng, t, &req.allowed);
			if (refmodel_rand_below(&rng, 10) == 0)
				req.node = (int32_t)refmodel_rand_below(&rng, t->nnodes);
			if (refmodel_rand_below(&rng, 10) == 0)
				req.near_cpu = (int32_t)refmodel_rand_below(&rng, t->ncpus);
			rotor_want = rotor;
			r = plain ? placement_ctx_choose(ctx, ps, other, &rotor, &req, &dc->got_why, &dc->got)
				  : placement_ctx_choose_stamped(ctx, ps, &(struct placement_claims){ dc->claimed, stamp }, &rotor,
								 &req, &dc->got_why, &dc->got);
			rr = refmodel_place(&dc->cfg, t, dc->map.levels, claims, &rotor_want, &req, &dc->want_why,
					    &dc->want);
			snprintf(where, sizeof(where), "%s %s stamped config %u query %u%s", label, variant, k, q,
				 plain ? " (unstamped claims)" : "");
			diff_expect_model(dc, t, claims, &req, where, r, rr, rotor, rotor_want);
			st->queries++;
			st->ok += r == 0 && dc->got.n == req.count;
		}
		placement_state_free(ps);
		placement_ctx_free(ctx);
	}
	refmodel_map_close(&dc->map);
	free(dc);
}

static void stamp_topology_cb(const char *label, struct topo *t, void *arg)
{
	struct diff_stats *st = arg;

	stamp_run(label, "plain", t, st);
	for (uint32_t c = 0; c < t->ncpus; c++)
		if (c % 7 == 3)
			t->cpus[c].online = false;
	assert_int_equal(topo_finish(t), 0);
	stamp_run(label, "offline", t, st);
}

static void test_stamped_claims(void **state)
{
	struct diff_stats st = { .seed = refmodel_seed() };

	st.topologies = refmodel_each_topology(stamp_topology_cb, &st);
	print_message("seed %#llx: %u topologies x 2 variants, %lu queries with stamped claims: %lu full\n",
		      (unsigned long long)st.seed, st.topologies, st.queries, st.ok);
	assert_true(st.topologies >= 5);
	assert_true(st.ok > 1000);
}

/*
 * A topology refreshed in place after hotplug (rtplaced reloads it when a
 * CPU it never saw comes online) can have more nodes than the one a
 * context was built on: the stale context is still freed correctly (run
 * under the sanitizers, a free that followed the new node count reads past
 * its array).
 */
static void test_ctx_free_after_refresh(void **state)
{
	struct refmodel_map map;
	struct placement_config cfg = { .prefer_idle = true };
	struct placement_ctx *x;
	struct placement_state *ps = NULL;
	struct topo *t, *more, tmp;

	assert_int_equal(topo_synthetic(1, 2, 1, 4, 1, &t), 0);
	assert_int_equal(topo_synthetic(1, 4, 1, 2, 1, &more), 0);
	assert_int_equal(t->ncpus, more->ncpus);
	assert_int_equal(refmodel_map_open(t, TOPO_SHARD_NODE, &map), 0);
	for (uint32_t c = 0; c < t->ncpus; c++)
		refmodel_map_set(&map, c, LEVEL_IDLE);
	cfg.managed = t->online;
	assert_int_equal(placement_ctx_new(&cfg, t, &map.view, &x), 0);
	assert_int_equal(placement_state_new(x, &ps), 0);
	tmp = *t;
	*t = *more;
	*more = tmp;
	/* Should its rebuild fail, the stale context still answers safely:
	 * a node it does not know is refused, not read past its masks. */
	{
		struct placement_request req = { .prio = 50, .count = 1, .node = 3, .near_cpu = -1 };
		struct placement_result *res = malloc(sizeof(*res));
		struct rtplace_reason why;

		assert_non_null(res);
		assert_int_equal(placement_ctx_choose(x, ps, NULL, NULL, &req, &why, res), -EINVAL);
		assert_string_equal(why.text, PLACEMENT_REASON_BAD_NODE);
		req.node = 1;
		assert_int_equal(placement_ctx_choose(x, ps, NULL, NULL, &req, &why, res), 0);
		assert_string_equal(why.text, "");
		free(res);
	}
	placement_state_free(ps);
	placement_ctx_free(x);
	assert_int_equal(placement_ctx_new(&cfg, t, &map.view, &x), 0);
	assert_int_equal(placement_state_new(x, &ps), 0);
	placement_state_free(ps);
	placement_ctx_free(x);
	refmodel_map_close(&map);
	topo_free(more);
	topo_free(t);
}

/*
 * [placement] isolated on the shared topologies (DESIGN §20): the upper
 * half of the online CPUs isolated, the map idle unless said otherwise.
 */
struct iso_case {
	struct placement_config cfg;
	struct refmodel_map map;
	struct placement_result res;
	struct rtplace_reason why;
	const struct topo *t;
	uint32_t rotor;
};

static int iso_place(struct iso_case *ic, uint32_t count, bool normal)
{
	struct placement_request req = { .prio = 50, .count = count, .node = -1, .near_cpu = -1, .normal = normal };

	return placement_choose(&ic->cfg, ic->t, &ic->map.view, NULL, &ic->rotor, &req, &ic->why, &ic->res);
}

/* Every CPU of the last answer is (or, want false, is not) isolated. */
static void iso_assert_all(const struct iso_case *ic, bool want)
{
	assert_true(ic->res.n >= 1);
	for (uint32_t i = 0; i < ic->res.n; i++)
		assert_int_equal(cpuset_test(&ic->cfg.isolated, ic->res.cpus[i]), want);
}

static void iso_set(struct iso_case *ic, bool isolated, uint32_t level)
{
	CPUSET_FOREACH(c, &ic->t->online)
		if (cpuset_test(&ic->cfg.isolated, (unsigned)c) == isolated)
			refmodel_map_set(&ic->map, (uint32_t)c, level);
}

static void iso_topology_cb(const char *label, struct topo *t, void *arg)
{
	struct iso_case *ic = calloc(1, sizeof(*ic));
	uint32_t n = 0, half = cpuset_count(&t->online) / 2, count = half >= 4 ? 4 : 1;
	unsigned *topologies = arg;

	assert_non_null(ic);
	ic->t = t;
	assert_int_equal(refmodel_map_open(t, TOPO_SHARD_NODE, &ic->map), 0);
	ic->cfg.managed = t->online;
	ic->cfg.prefer_idle = true;
	CPUSET_FOREACH(c, &t->online)
		if (n++ >= half)
			cpuset_set(&ic->cfg.isolated, (unsigned)c);
	iso_set(ic, true, LEVEL_IDLE);
	iso_set(ic, false, LEVEL_IDLE);
	for (uint32_t k = 1; k <= count; k *= 4) {
		/* prefer: isolated first at the same level... */
		ic->cfg.isolated_mode = PLACEMENT_ISOLATED_PREFER;
		for (int i = 0; i < 8; i++) {
			assert_int_equal(iso_place(ic, k, false), 0);
			iso_assert_all(ic, true);
		}
		/* ...but a lower level elsewhere wins, */
		iso_set(ic, true, LEVEL_NORMAL);
		assert_int_equal(iso_place(ic, k, false), 0);
		iso_assert_all(ic, false);
		/* which only refuses; */
		ic->cfg.isolated_mode = PLACEMENT_ISOLATED_ONLY;
		assert_int_equal(iso_place(ic, k, false), 0);
		iso_assert_all(ic, true);
		iso_set(ic, true, level_from_rt_priority(60));
		assert_int_equal(iso_place(ic, k, false), -ENOENT);
		/* prefer with the housekeeping set derived from isolation is only. */
		ic->cfg.isolated_mode = PLACEMENT_ISOLATED_PREFER;
		ic->cfg.isolated_housekeeping = true;
		assert_int_equal(iso_place(ic, k, false), -ENOENT);
		iso_set(ic, true, LEVEL_NORMAL);
		assert_int_equal(iso_place(ic, k, false), 0);
		iso_assert_all(ic, true);
		ic->cfg.isolated_housekeeping = false;
		iso_set(ic, true, LEVEL_IDLE);
		/* avoid: never them; */
		ic->cfg.isolated_mode = PLACEMENT_ISOLATED_AVOID;
		for (int i = 0; i < 8; i++) {
			assert_int_equal(iso_place(ic, k, false), 0);
			iso_assert_all(ic, false);
		}
		/* ignore: a lower level there is taken, as without isolation; */
		ic->cfg.isolated_mode = PLACEMENT_ISOLATED_IGNORE;
		iso_set(ic, false, LEVEL_NORMAL);
		assert_int_equal(iso_place(ic, k, false), 0);
		iso_assert_all(ic, true);
		iso_set(ic, true, LEVEL_NORMAL);
		iso_set(ic, false, LEVEL_IDLE);
		assert_int_equal(iso_place(ic, k, false), 0);
		iso_assert_all(ic, false);
		iso_set(ic, true, LEVEL_IDLE);
		/* normal-level claims keep off them in every mode but ignore. */
		for (int m = PLACEMENT_ISOLATED_PREFER; m <= PLACEMENT_ISOLATED_AVOID; m++) {
			ic->cfg.isolated_mode = (enum placement_isolated)m;
			ic->cfg.isolated_housekeeping = m == PLACEMENT_ISOLATED_PREFER;
			for (int i = 0; i < 8; i++) {
				assert_int_equal(iso_place(ic, k, true), 0);
				iso_assert_all(ic, false);
			}
		}
		ic->cfg.isolated_housekeeping = false;
	}
	print_message("%s: isolated modes hold (count 1%s)\n", label, count > 1 ? " and 4" : "");
	(*topologies)++;
	refmodel_map_close(&ic->map);
	free(ic);
}

static void test_isolated_modes(void **state)
{
	unsigned topologies = 0;

	refmodel_each_topology(iso_topology_cb, &topologies);
	assert_true(topologies >= 5);
}

/*
 * Targeted cases on a small machine: 2 nodes x 2 LLCs x 2 cores x 2
 * threads. Core k holds CPUs k and k + 8; LLC l holds cores 2l and 2l + 1
 * (CPUs 2l, 2l+1, 2l+8, 2l+9); node n holds LLCs 2n and 2n + 1.
 */
struct fixture {
	struct topo *t;
	struct refmodel_map map;
	struct placement_config cfg;
	uint8_t claimed[16];
	uint32_t rotor;
	struct placement_request req;
	struct placement_result res;
	struct rtplace_reason why;
};

static int fixture_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || topo_synthetic(1, 2, 2, 2, 2, &f->t) < 0 || refmodel_map_open(f->t, TOPO_SHARD_NODE, &f->map) < 0)
		return -1;
	f->cfg.managed = f->t->online;
	f->cfg.prefer_idle = true;
	f->cfg.avoid_smt = PLACEMENT_SMT_NEVER;
	for (uint32_t c = 0; c < 16; c++)
		refmodel_map_set(&f->map, c, LEVEL_IDLE);
	f->req = (struct placement_request){ .prio = 50, .count = 1, .node = -1, .near_cpu = -1 };
	*state = f;
	return 0;
}

static int fixture_teardown(void **state)
{
	struct fixture *f = *state;

	refmodel_map_close(&f->map);
	topo_free(f->t);
	free(f);
	return 0;
}

static void set_all(struct fixture *f, uint32_t level)
{
	for (uint32_t c = 0; c < 16; c++)
		refmodel_map_set(&f->map, c, level);
}

/* Chooses, checks the answer against the model too, returns the result code. */
static int place(struct fixture *f)
{
	struct placement_result *want = malloc(sizeof(*want));
	struct rtplace_reason want_why;
	uint32_t rotor = f->rotor;
	int r, rr;

	assert_non_null(want);
	r = placement_choose(&f->cfg, f->t, &f->map.view, f->claimed, &f->rotor, &f->req, &f->why, &f->res);
	rr = refmodel_place(&f->cfg, f->t, f->map.levels, f->claimed, &rotor, &f->req, &want_why, want);
	assert_int_equal(r, rr);
	assert_string_equal(f->why.text, want_why.text);
	assert_int_equal(f->res.n, want->n);
	assert_int_equal(f->rotor, rotor);
	assert_memory_equal(f->res.cpus, want->cpus, f->res.n * sizeof(f->res.cpus[0]));
	free(want);
	return r;
}

/* place() for one CPU; returns it. */
static uint32_t place1(struct fixture *f)
{
	f->req.count = 1;
	assert_int_equal(place(f), 0);
	assert_int_equal(f->res.n, 1);
	return f->res.cpus[0];
}

static void test_lowest_level(void **state)
{
	struct fixture *f = *state;

	set_all(f, LEVEL_NORMAL);
	refmodel_map_set(&f->map, 5, LEVEL_IDLE);
	assert_int_equal(place1(f), 5);
	assert_int_equal(f->res.level, LEVEL_IDLE);
	assert_string_equal(f->why.text, "");
	assert_string_equal(placement_reason_text(&f->why), PLACEMENT_REASON_OK);
	/* Strictly below rtP: rt50 is no answer for 50, the answer for 51. */
	set_all(f, LEVEL_DL);
	refmodel_map_set(&f->map, 5, level_from_rt_priority(50));
	assert_int_equal(place(f), -ENOENT);
	f->req.prio = 51;
	assert_int_equal(place1(f), 5);
	assert_int_equal(f->res.level, level_from_rt_priority(50));
}

static void test_near_llc_node(void **state)
{
	struct fixture *f = *state;

	f->req.near_cpu = 6;
	assert_int_equal(place1(f), 6);
	/* 6 busy: its LLC (6, 7, 14, 15), nearest in rotation order first. */
	refmodel_map_set(&f->map, 6, LEVEL_NORMAL);
	f->rotor = 0;
	assert_int_equal(place1(f), 7);
	refmodel_map_set(&f->map, 7, LEVEL_NORMAL);
	f->rotor = 0;
	assert_int_equal(place1(f), 14);
	/* The LLC busy: its node's other LLC (4, 5, 12, 13). */
	refmodel_map_set(&f->map, 14, LEVEL_NORMAL);
	refmodel_map_set(&f->map, 15, LEVEL_NORMAL);
	f->rotor = 0;
	assert_int_equal(place1(f), 4);
	/* The node busy: the rest, in rotation order. */
	for (uint32_t c = 4; c < 8; c++) {
		refmodel_map_set(&f->map, c, LEVEL_NORMAL);
		refmodel_map_set(&f->map, c + 8, LEVEL_NORMAL);
	}
	f->rotor = 2;
	assert_int_equal(place1(f), 2);
	/* The near CPU need not be allowed to steer the choice. */
	set_all(f, LEVEL_IDLE);
	for (uint32_t c = 0; c < 16; c++)
		if (c != 6)
			cpuset_set(&f->req.allowed, c);
	f->rotor = 0;
	assert_int_equal(place1(f), 7);
}

static void test_node_restricts(void **state)
{
	struct fixture *f = *state;

	for (uint32_t c = 0; c < 16; c++)
		refmodel_map_set(&f->map, c, f->t->cpus[c].node == 1 ? LEVEL_NORMAL : LEVEL_IDLE);
	f->req.node = 1;
	for (int i = 0; i < 8; i++)
		assert_int_equal(f->t->cpus[place1(f)].node, 1);
	assert_int_equal(f->res.level, LEVEL_NORMAL);
	cpuset_set(&f->req.allowed, 0);
	assert_int_equal(place(f), -ENODEV);
	assert_string_equal(f->why.text, PLACEMENT_REASON_NO_CANDIDATE);
}

static void test_smt_rt(void **state)
{
	struct fixture *f = *state;

	set_all(f, LEVEL_NORMAL);
	refmodel_map_set(&f->map, 0, level_from_rt_priority(60));
	refmodel_map_set(&f->map, 8, LEVEL_IDLE);
	refmodel_map_set(&f->map, 1, LEVEL_IDLE);
	f->req.near_cpu = 8;
	assert_int_equal(place1(f), 8); /* never: the near CPU wins */
	f->cfg.avoid_smt = PLACEMENT_SMT_RT;
	f->rotor = 0;
	assert_int_equal(place1(f), 1); /* 8's sibling runs rt60 >= rt50 */
	/* A sibling of a busy CPU is still better than a higher level. */
	refmodel_map_set(&f->map, 1, LEVEL_NORMAL);
	assert_int_equal(place1(f), 8);
	/* A claim makes a sibling busy as much as the map does. */
	refmodel_map_set(&f->map, 0, LEVEL_NORMAL);
	refmodel_map_set(&f->map, 1, LEVEL_IDLE);
	f->claimed[0] = (uint8_t)level_from_rt_priority(70);
	f->rotor = 0;
	assert_int_equal(place1(f), 1);
	/* Siblings below rtP do not count in rt mode. */
	f->claimed[0] = 0;
	f->rotor = 0;
	assert_int_equal(place1(f), 8);
}

static void test_smt_always(void **state)
{
	struct fixture *f = *state;

	refmodel_map_set(&f->map, 0, LEVEL_NORMAL);
	f->req.near_cpu = 8;
	f->cfg.avoid_smt = PLACEMENT_SMT_RT;
	assert_int_equal(place1(f), 8);
	f->cfg.avoid_smt = PLACEMENT_SMT_ALWAYS;
	f->rotor = 0;
	assert_int_equal(place1(f), 1); /* 8's sibling is busy, 1's is idle */
	/* Two CPUs: a pick will run at rtP, so the next one avoids its
	 * sibling in both modes; with the check off, siblings it is. */
	f->req.count = 2;
	set_all(f, LEVEL_IDLE);
	for (int mode = PLACEMENT_SMT_NEVER; mode <= PLACEMENT_SMT_ALWAYS; mode++) {
		f->cfg.avoid_smt = (enum placement_smt)mode;
		f->rotor = 0;
		assert_int_equal(place(f), 0);
		assert_int_equal(f->res.n, 2);
		assert_int_equal(f->res.cpus[0], 8);
		assert_int_equal(f->res.cpus[1], mode == PLACEMENT_SMT_NEVER ? 0 : 1);
	}
}

static void test_rotation_spreads(void **state)
{
	struct fixture *f = *state;
	struct rtplace_cpumask seen;

	cpuset_zero(&seen);
	for (int i = 0; i < 16; i++) {
		uint32_t c = place1(f);

		assert_false(cpuset_test(&seen, c));
		cpuset_set(&seen, c);
		assert_int_equal(f->rotor, (c + 1) % 16);
	}
	/* The same cursor gives the same answer. */
	f->rotor = 9;
	assert_int_equal(place1(f), 9);
	f->rotor = 9;
	assert_int_equal(place1(f), 9);
	/* A failed query leaves the cursor alone. */
	set_all(f, LEVEL_DL);
	assert_int_equal(place(f), -ENOENT);
	assert_int_equal(f->rotor, 10);
}

static void test_count_groups(void **state)
{
	struct fixture *f = *state;

	/* Four fit in one LLC. */
	f->req.count = 4;
	assert_int_equal(place(f), 0);
	assert_int_equal(f->res.n, 4);
	for (uint32_t i = 1; i < 4; i++)
		assert_int_equal(f->t->cpus[f->res.cpus[i]].llc, f->t->cpus[f->res.cpus[0]].llc);
	/* One busy CPU in LLC 0: another LLC gives four idle ones. */
	refmodel_map_set(&f->map, 0, LEVEL_NORMAL);
	f->rotor = 0;
	assert_int_equal(place(f), 0);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(f->t->cpus[f->res.cpus[i]].llc, 1);
		assert_int_equal(f->res.levels[i], LEVEL_IDLE);
	}
	/* The near CPU's LLC wins a tie, and the near CPU comes first. */
	f->req.near_cpu = 13;
	assert_int_equal(place(f), 0);
	assert_int_equal(f->res.cpus[0], 13);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(f->t->cpus[f->res.cpus[i]].llc, 2);
	/* Six or eight do not fit an LLC (four CPUs) but fit a node. */
	f->req.near_cpu = -1;
	for (uint32_t count = 6; count <= 8; count += 2) {
		f->req.count = count;
		assert_int_equal(place(f), 0);
		assert_int_equal(f->res.n, count);
		for (uint32_t i = 1; i < count; i++)
			assert_int_equal(f->t->cpus[f->res.cpus[i]].node, f->t->cpus[f->res.cpus[0]].node);
	}
	/* Twelve fit no node: taken level by level, idle CPUs (all but
	 * CPU 0) before the normal one. */
	f->req.count = 12;
	assert_int_equal(place(f), 0);
	assert_int_equal(f->res.n, 12);
	for (uint32_t i = 0; i < 12; i++)
		assert_int_equal(f->res.levels[i], LEVEL_IDLE);
}

static void test_claims(void **state)
{
	struct fixture *f = *state;

	for (uint32_t c = 0; c < 8; c++)
		f->claimed[c] = (uint8_t)level_from_rt_priority(50);
	f->req.count = 8;
	assert_int_equal(place(f), 0);
	for (uint32_t i = 0; i < 8; i++)
		assert_true(f->res.cpus[i] >= 8);
	/* For a higher priority the claimed CPUs qualify, at the claimed
	 * level, after every unclaimed idle CPU. */
	f->req.prio = 60;
	f->req.count = 10;
	assert_int_equal(place(f), 0);
	assert_int_equal(f->res.n, 10);
	assert_int_equal(f->res.levels[8], level_from_rt_priority(50));
	/* Everything claimed at rt50: nothing for 50, something for 51. */
	for (uint32_t c = 8; c < 16; c++)
		f->claimed[c] = (uint8_t)level_from_rt_priority(50);
	f->req.prio = 50;
	assert_int_equal(place(f), -ENOENT);
	f->req.prio = 51;
	place1(f);
	assert_int_equal(f->res.level, level_from_rt_priority(50));
	/* A claim never lowers a CPU: rt70 claimed at rt10 is still rt70. */
	memset(f->claimed, 0, sizeof(f->claimed));
	set_all(f, level_from_rt_priority(70));
	f->claimed[3] = (uint8_t)level_from_rt_priority(10);
	assert_int_equal(place(f), -ENOENT);
}

static void test_kinds(void **state)
{
	struct fixture *f = *state;

	/* Cores 4..7 (CPUs 4-7, 12-15) are the less performant kind. */
	for (uint32_t c = 0; c < 16; c++)
		f->t->cpus[c].kind = f->t->cpus[c].core >= 4;
	assert_int_equal(topo_finish(f->t), 0);
	assert_int_equal(f->t->nkinds, 2);
	for (uint32_t c = 0; c < 16; c++)
		refmodel_map_set(&f->map, c, f->t->cpus[c].kind ? LEVEL_IDLE : LEVEL_NORMAL);
	/* Kind 0 first, even busier, as the kernel's fitness check does. */
	assert_int_equal(f->t->cpus[place1(f)].kind, 0);
	assert_int_equal(f->res.level, LEVEL_NORMAL);
	/* Kind 0 all at or above rtP: any kind. */
	for (uint32_t c = 0; c < 16; c++)
		if (f->t->cpus[c].kind == 0)
			refmodel_map_set(&f->map, c, level_from_rt_priority(60));
	assert_int_equal(f->t->cpus[place1(f)].kind, 1);
	/* Ten CPUs when only eight of kind 0 qualify: any kind, by level. */
	set_all(f, LEVEL_IDLE);
	f->req.count = 10;
	assert_int_equal(place(f), 0);
	assert_int_equal(f->res.n, 10);
	f->req.count = 8;
	assert_int_equal(place(f), 0);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(f->t->cpus[f->res.cpus[i]].kind, 0);
}

static void test_empty_answer(void **state)
{
	struct fixture *f = *state;

	set_all(f, LEVEL_RT99);
	f->req.prio = 99;
	f->rotor = 5;
	assert_int_equal(place(f), -ENOENT);
	assert_int_equal(f->res.n, 0);
	assert_string_equal(f->why.text, PLACEMENT_REASON_NONE_BELOW);
	assert_int_equal(f->rotor, 5);
	f->cfg.managed = f->t->node_cpus[0];
	f->req.allowed = f->t->node_cpus[1];
	assert_int_equal(place(f), -ENODEV);
	assert_string_equal(f->why.text, PLACEMENT_REASON_NO_CANDIDATE);
}

static void test_partial(void **state)
{
	struct fixture *f = *state;

	refmodel_map_set(&f->map, 3, LEVEL_DL);
	f->req.count = 20;
	assert_int_equal(place(f), 0);
	assert_int_equal(f->res.n, 15);
	assert_string_equal(f->why.text, PLACEMENT_REASON_PARTIAL);
}

static void test_housekeeping(void **state)
{
	struct fixture *f = *state;

	set_all(f, LEVEL_NORMAL);
	refmodel_map_set(&f->map, 0, LEVEL_IDLE);
	refmodel_map_set(&f->map, 8, LEVEL_IDLE);
	cpuset_clear(&f->cfg.managed, 0);
	cpuset_clear(&f->cfg.managed, 8);
	for (int i = 0; i < 32; i++) {
		uint32_t c = place1(f);

		assert_true(c != 0 && c != 8);
	}
	f->req.count = 16;
	assert_int_equal(place(f), 0);
	assert_int_equal(f->res.n, 14);
	cpuset_set(&f->req.allowed, 0);
	cpuset_set(&f->req.allowed, 8);
	assert_int_equal(place(f), -ENODEV);
}

static void test_offline(void **state)
{
	struct fixture *f = *state;

	/* Offline in the topology, idle in a stale map: never chosen. */
	f->t->cpus[3].online = false;
	assert_int_equal(topo_finish(f->t), 0);
	set_all(f, LEVEL_NORMAL);
	refmodel_map_set(&f->map, 3, LEVEL_IDLE);
	for (int i = 0; i < 32; i++)
		assert_int_not_equal(place1(f), 3);
	cpuset_set(&f->req.allowed, 3);
	assert_int_equal(place(f), -ENODEV);
	/* Online but offline in the map (unmanaged as far as it knows). */
	cpuset_zero(&f->req.allowed);
	refmodel_map_set(&f->map, 5, LEVEL_OFFLINE);
	f->req.count = 16;
	assert_int_equal(place(f), 0);
	assert_int_equal(f->res.n, 14);
	for (uint32_t i = 0; i < 14; i++)
		assert_true(f->res.cpus[i] != 3 && f->res.cpus[i] != 5);
	/* Nothing online in the set: said so, not "none below". */
	cpuset_set(&f->req.allowed, 5);
	assert_int_equal(place(f), -ENODEV);
	assert_string_equal(f->why.text, PLACEMENT_REASON_NO_CANDIDATE);
}

/*
 * A CPU that hotplug took away while the daemon runs: known to the
 * topology, managed, offline in the map. Whatever else points at it (a
 * claim below the priority, the near hint, the rotation cursor, the allowed
 * set) it is never offered, and an answer restricted to it says that no CPU
 * is online there.
 */
static void test_hot_unplugged(void **state)
{
	struct fixture *f = *state;

	set_all(f, LEVEL_NORMAL);
	refmodel_map_set(&f->map, 5, LEVEL_OFFLINE);
	f->claimed[5] = (uint8_t)LEVEL_IDLE;
	f->claimed[6] = (uint8_t)level_from_rt_priority(10);
	f->req.near_cpu = 5;
	f->rotor = 5;
	for (uint32_t count = 1; count <= 16; count++) {
		f->req.count = count;
		assert_int_equal(place(f), 0);
		assert_int_equal(f->res.n, count < 15 ? count : 15);
		for (uint32_t i = 0; i < f->res.n; i++)
			assert_int_not_equal(f->res.cpus[i], 5);
	}
	f->req.count = 1;
	cpuset_set(&f->req.allowed, 5);
	assert_int_equal(place(f), -ENODEV);
	assert_string_equal(f->why.text, PLACEMENT_REASON_NO_CANDIDATE);
	assert_int_equal(f->res.n, 0);
	/* With an online CPU beside it that is too busy, the answer is "none
	 * below": that one is there, only busy. */
	refmodel_map_set(&f->map, 6, LEVEL_RT99);
	cpuset_set(&f->req.allowed, 6);
	assert_int_equal(place(f), -ENOENT);
	assert_string_equal(f->why.text, PLACEMENT_REASON_NONE_BELOW);
	/* Back online (idle): offered again, first as the near CPU. */
	refmodel_map_set(&f->map, 5, LEVEL_IDLE);
	assert_int_equal(place1(f), 5);
}

/* A bit left at a level the CPU has left (two writers raced on one CPU,
 * see cpupri_set()) is caught by the slot check. The model cannot see a
 * stale bit, so this case checks the answer directly. */
static void test_stale_bit(void **state)
{
	struct fixture *f = *state;
	const struct cpupri_slot *slot;

	set_all(f, LEVEL_NORMAL);
	refmodel_map_set(&f->map, 5, LEVEL_RT99);
	slot = cpupri_slot_ptr(f->map.mem, &f->map.geom, 5);
	*cpupri_word_ptr(f->map.mem, &f->map.geom, LEVEL_IDLE, slot->shard, slot->bit / 64) |= (__u64)1 << (slot->bit % 64);
	(*cpupri_count_ptr(f->map.mem, &f->map.geom, LEVEL_IDLE, slot->shard))++;
	f->req.near_cpu = 5;
	assert_int_equal(placement_choose(&f->cfg, f->t, &f->map.view, NULL, &f->rotor, &f->req, &f->why, &f->res), 0);
	assert_int_equal(f->res.n, 1);
	assert_int_not_equal(f->res.cpus[0], 5);
	assert_int_equal(f->res.level, LEVEL_NORMAL);
	/* Only the stale CPU in the set: nothing. */
	cpuset_set(&f->req.allowed, 5);
	assert_int_equal(placement_choose(&f->cfg, f->t, &f->map.view, NULL, &f->rotor, &f->req, &f->why, &f->res), -ENOENT);
}

/* The same for the fast paths (default rules, no near CPU): the stale CPU
 * comes first in rotation order, so each fast path meets it first; its slot
 * sends the answer to the general path, which drops it. */
static void test_stale_bit_fast(void **state)
{
	struct fixture *f = *state;
	const struct cpupri_slot *slot;

	set_all(f, LEVEL_NORMAL);
	refmodel_map_set(&f->map, 5, LEVEL_RT99);
	refmodel_map_set(&f->map, 6, LEVEL_IDLE);
	refmodel_map_set(&f->map, 12, LEVEL_IDLE);
	slot = cpupri_slot_ptr(f->map.mem, &f->map.geom, 5);
	*cpupri_word_ptr(f->map.mem, &f->map.geom, LEVEL_IDLE, slot->shard, slot->bit / 64) |= (__u64)1 << (slot->bit % 64);
	(*cpupri_count_ptr(f->map.mem, &f->map.geom, LEVEL_IDLE, slot->shard))++;
	f->rotor = 5;
	assert_int_equal(placement_choose(&f->cfg, f->t, &f->map.view, NULL, &f->rotor, &f->req, &f->why, &f->res), 0);
	assert_int_equal(f->res.n, 1);
	assert_int_equal(f->res.cpus[0], 6);
	assert_int_equal(f->res.level, LEVEL_IDLE);
	/* Two CPUs: 5's LLC (4, 5, 12, 13) holds two at idle by the map alone,
	 * 5 and 12; without 5 the LLC of 6 (first in rotation order) wins. */
	f->rotor = 5;
	f->req.count = 2;
	assert_int_equal(placement_choose(&f->cfg, f->t, &f->map.view, NULL, &f->rotor, &f->req, &f->why, &f->res), 0);
	assert_int_equal(f->res.n, 2);
	assert_int_equal(f->res.cpus[0], 6);
	assert_int_equal(f->res.cpus[1], 7);
	assert_int_equal(f->res.levels[1], LEVEL_NORMAL);
}

static void test_prefer_idle(void **state)
{
	struct fixture *f = *state;

	set_all(f, LEVEL_NORMAL);
	refmodel_map_set(&f->map, 10, LEVEL_IDLE);
	f->req.near_cpu = 3;
	assert_int_equal(place1(f), 10);
	/* Off: idle and normal tie, so the near CPU wins, reported as normal. */
	f->cfg.prefer_idle = false;
	assert_int_equal(place1(f), 3);
	assert_int_equal(f->res.level, LEVEL_NORMAL);
	f->req.near_cpu = 10;
	assert_int_equal(place1(f), 10);
	assert_int_equal(f->res.level, LEVEL_IDLE);
}

static void test_bad_requests(void **state)
{
	static const struct {
		int prio;
		uint32_t count;
		int32_t node, near;
		const char *reason;
	} cases[] = {
		{ 0, 1, -1, -1, PLACEMENT_REASON_BAD_PRIO },
		{ 100, 1, -1, -1, PLACEMENT_REASON_BAD_PRIO },
		{ 50, 0, -1, -1, PLACEMENT_REASON_BAD_COUNT },
		{ 50, PLACEMENT_MAX_COUNT + 1, -1, -1, PLACEMENT_REASON_BAD_COUNT },
		{ 50, 1, 2, -1, PLACEMENT_REASON_BAD_NODE },
		{ 50, 1, -2, -1, PLACEMENT_REASON_BAD_NODE },
		{ 50, 1, -1, 16, PLACEMENT_REASON_BAD_NEAR },
		{ 50, 1, -1, -7, PLACEMENT_REASON_BAD_NEAR },
		/* The ranges are tested together, unsigned: their far ends. */
		{ INT32_MIN, 1, -1, -1, PLACEMENT_REASON_BAD_PRIO },
		{ INT32_MAX, 1, -1, -1, PLACEMENT_REASON_BAD_PRIO },
		{ 50, UINT32_MAX, -1, -1, PLACEMENT_REASON_BAD_COUNT },
		{ 50, 1, INT32_MIN, -1, PLACEMENT_REASON_BAD_NODE },
		{ 50, 1, INT32_MAX, -1, PLACEMENT_REASON_BAD_NODE },
		{ 50, 1, -1, INT32_MIN, PLACEMENT_REASON_BAD_NEAR },
		{ 50, 1, -1, INT32_MAX, PLACEMENT_REASON_BAD_NEAR },
	};
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f->req.prio = cases[i].prio;
		f->req.count = cases[i].count;
		f->req.node = cases[i].node;
		f->req.near_cpu = cases[i].near;
		f->rotor = 3;
		assert_int_equal(place(f), -EINVAL);
		assert_string_equal(f->why.text, cases[i].reason);
		assert_int_equal(f->res.n, 0);
		assert_int_equal(f->rotor, 3);
	}
}

/* Interrupt noise breaks ties within a level, after locality. */
static void test_irq_tiebreak(void **state)
{
	struct fixture *f = *state;
	struct placement_ctx *x = NULL;
	struct placement_state *ps = NULL;
	uint32_t rotor = 0;

	cpuset_set(&f->cfg.noisy, 0);
	assert_int_equal(place1(f), 1);
	/* A lower level still beats a quieter CPU. */
	set_all(f, LEVEL_NORMAL);
	refmodel_map_set(&f->map, 0, LEVEL_IDLE);
	f->rotor = 0;
	assert_int_equal(place1(f), 0);
	/* Two CPUs of one level, the noisy one first in rotation order. */
	set_all(f, LEVEL_IDLE);
	cpuset_zero(&f->cfg.noisy);
	cpuset_set(&f->cfg.noisy, 1);
	cpuset_set(&f->req.allowed, 0);
	cpuset_set(&f->req.allowed, 1);
	f->rotor = 1;
	assert_int_equal(place1(f), 0);
	/* Every candidate noisy: rotation order decides again. */
	cpuset_set(&f->cfg.noisy, 0);
	f->rotor = 1;
	assert_int_equal(place1(f), 1);
	/* The near CPU and its LLC come before quiet CPUs elsewhere; within
	 * the LLC, quiet first. */
	cpuset_zero(&f->req.allowed);
	cpuset_zero(&f->cfg.noisy);
	cpuset_set(&f->cfg.noisy, 6);
	cpuset_set(&f->cfg.noisy, 7);
	f->req.near_cpu = 6;
	f->rotor = 0;
	assert_int_equal(place1(f), 6);
	refmodel_map_set(&f->map, 6, LEVEL_NORMAL);
	f->rotor = 0;
	assert_int_equal(place1(f), 14);
	/* count > 1: the group's quiet CPUs first. */
	f->req.near_cpu = -1;
	set_all(f, LEVEL_IDLE);
	cpuset_zero(&f->cfg.noisy);
	cpuset_set(&f->cfg.noisy, 0);
	cpuset_set(&f->cfg.noisy, 1);
	f->req.count = 2;
	f->rotor = 0;
	assert_int_equal(place(f), 0);
	for (uint32_t i = 0; i < f->res.n; i++)
		assert_false(cpuset_test(&f->cfg.noisy, f->res.cpus[i]));
	/* A context takes new noise without a rebuild. */
	cpuset_zero(&f->cfg.noisy);
	f->req.count = 1;
	assert_int_equal(placement_ctx_new(&f->cfg, f->t, &f->map.view, &x), 0);
	assert_int_equal(placement_state_new(x, &ps), 0);
	assert_int_equal(placement_ctx_choose(x, ps, NULL, &rotor, &f->req, &f->why, &f->res), 0);
	assert_int_equal(f->res.cpus[0], 0);
	cpuset_set(&f->cfg.noisy, 0);
	placement_ctx_set_noisy(x, &f->cfg.noisy);
	rotor = 0;
	assert_int_equal(placement_ctx_choose(x, ps, NULL, &rotor, &f->req, &f->why, &f->res), 0);
	assert_int_equal(f->res.cpus[0], 1);
	cpuset_zero(&f->cfg.noisy);
	placement_ctx_set_noisy(x, &f->cfg.noisy);
	rotor = 0;
	assert_int_equal(placement_ctx_choose(x, ps, NULL, &rotor, &f->req, &f->why, &f->res), 0);
	assert_int_equal(f->res.cpus[0], 0);
	placement_state_free(ps);
	placement_ctx_free(x);
}

/*
 * Answers only read the context (placement.h): two states answer alike
 * from one context, each in turn, and a state is refused by a context it
 * was not made for (its sets are the other's), with nothing written.
 */
static void test_state_per_answerer(void **state)
{
	struct fixture *f = *state;
	struct placement_ctx *x, *other;
	struct placement_state *a = NULL, *b = NULL;
	struct placement_result *res_b = malloc(sizeof(*res_b));
	uint32_t rotor_b = 0;

	assert_non_null(res_b);
	f->req.count = 2;
	assert_int_equal(placement_ctx_new(&f->cfg, f->t, &f->map.view, &x), 0);
	assert_int_equal(placement_ctx_new(&f->cfg, f->t, &f->map.view, &other), 0);
	assert_int_equal(placement_state_new(x, &a), 0);
	assert_int_equal(placement_state_new(x, &b), 0);
	f->rotor = 0;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(placement_ctx_choose(x, a, NULL, &f->rotor, &f->req, &f->why, &f->res), 0);
		assert_int_equal(placement_ctx_choose(x, b, NULL, &rotor_b, &f->req, NULL, res_b), 0);
		assert_int_equal(f->res.n, res_b->n);
		assert_memory_equal(f->res.cpus, res_b->cpus, f->res.n * sizeof(f->res.cpus[0]));
		assert_int_equal(f->rotor, rotor_b);
	}
	f->rotor = 5;
	assert_int_equal(placement_ctx_choose(other, a, NULL, &f->rotor, &f->req, &f->why, &f->res), -EINVAL);
	assert_string_equal(f->why.text, PLACEMENT_REASON_BAD_STATE);
	assert_int_equal(f->res.n, 0);
	assert_int_equal(f->rotor, 5);
	placement_state_free(b);
	placement_state_free(a);
	placement_ctx_free(other);
	placement_ctx_free(x);
	free(res_b);
}

/*
 * placement_fast_many() knows its picks by a mark per CPU that changes
 * with every answer, and clears the marks only when the count wraps:
 * there, a CPU marked long ago with the number the wrap starts from
 * again must not count as picked (its sibling would then have a
 * penalty). On the fixture, 0 and 8 are siblings and CPUs 0, 1, 8, 9
 * share an LLC.
 */
static void test_fast_mark_wrap(void **state)
{
	struct fixture *f = *state;
	struct placement_ctx *x;
	struct placement_state *ps = NULL;

	f->cfg.avoid_smt = PLACEMENT_SMT_RT;
	f->req.count = 2;
	assert_int_equal(placement_ctx_new(&f->cfg, f->t, &f->map.view, &x), 0);
	assert_int_equal(placement_state_new(x, &ps), 0);
	for (int i = 0; i < 3; i++) {
		ps->picked[8] = 1;
		ps->picked_mark = UINT32_MAX - 1 + (uint32_t)i;
		f->rotor = 0;
		assert_int_equal(placement_ctx_choose(x, ps, NULL, &f->rotor, &f->req, &f->why, &f->res), 0);
		assert_int_equal(f->res.n, 2);
		assert_int_equal(f->res.cpus[0], 0);
		assert_int_equal(f->res.cpus[1], 1);
	}
	placement_state_free(ps);
	placement_ctx_free(x);
}

/*
 * Whether an allowed set is empty is read two words a step, with a tail
 * word where the count of words before the last is odd: on machines of
 * three and four cpuset words (160 and 256 CPUs), an allowed set of one
 * CPU in any word is that CPU's answer, and the empty set any CPU's.
 */
static void allowed_words_on(uint32_t cores)
{
	struct refmodel_map map;
	struct placement_config cfg = { .prefer_idle = true, .avoid_smt = PLACEMENT_SMT_RT };
	struct placement_request req = { .prio = 50, .count = 1, .node = -1, .near_cpu = -1 };
	struct placement_result *res = malloc(sizeof(*res));
	struct rtplace_reason why;
	struct placement_ctx *x;
	struct placement_state *ps = NULL;
	struct topo *t;
	uint32_t rotor = 0;

	assert_non_null(res);
	assert_int_equal(topo_synthetic(1, 1, 1, cores, 2, &t), 0);
	assert_int_equal(refmodel_map_open(t, TOPO_SHARD_NODE, &map), 0);
	for (uint32_t c = 0; c < t->ncpus; c++)
		refmodel_map_set(&map, c, LEVEL_IDLE);
	cfg.managed = t->online;
	assert_int_equal(placement_ctx_new(&cfg, t, &map.view, &x), 0);
	assert_int_equal(placement_state_new(x, &ps), 0);
	for (uint32_t c = 0; c < t->ncpus; c += 13) {
		cpuset_zero(&req.allowed);
		cpuset_set(&req.allowed, c);
		rotor = c + 1 < t->ncpus ? c + 1 : 0;
		assert_int_equal(placement_ctx_choose(x, ps, NULL, &rotor, &req, &why, res), 0);
		assert_int_equal(res->n, 1);
		assert_int_equal(res->cpus[0], c);
	}
	cpuset_zero(&req.allowed);
	rotor = t->ncpus - 10;
	assert_int_equal(placement_ctx_choose(x, ps, NULL, &rotor, &req, &why, res), 0);
	assert_int_equal(res->cpus[0], t->ncpus - 10);
	placement_state_free(ps);
	placement_ctx_free(x);
	refmodel_map_close(&map);
	topo_free(t);
	free(res);
}

static void test_allowed_words(void **state)
{
	allowed_words_on(80);
	allowed_words_on(128);
}

#define FIXTURE_TEST(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_TEST(test_lowest_level),
		FIXTURE_TEST(test_near_llc_node),
		FIXTURE_TEST(test_node_restricts),
		FIXTURE_TEST(test_smt_rt),
		FIXTURE_TEST(test_smt_always),
		FIXTURE_TEST(test_rotation_spreads),
		FIXTURE_TEST(test_count_groups),
		FIXTURE_TEST(test_claims),
		FIXTURE_TEST(test_kinds),
		FIXTURE_TEST(test_empty_answer),
		FIXTURE_TEST(test_partial),
		FIXTURE_TEST(test_housekeeping),
		FIXTURE_TEST(test_offline),
		FIXTURE_TEST(test_hot_unplugged),
		FIXTURE_TEST(test_stale_bit),
		FIXTURE_TEST(test_stale_bit_fast),
		FIXTURE_TEST(test_prefer_idle),
		FIXTURE_TEST(test_bad_requests),
		FIXTURE_TEST(test_irq_tiebreak),
		FIXTURE_TEST(test_fast_mark_wrap),
		FIXTURE_TEST(test_state_per_answerer),
		cmocka_unit_test(test_allowed_words),
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_isolated_modes),
		cmocka_unit_test(test_ctx_reuse),
		cmocka_unit_test(test_stamped_claims),
		cmocka_unit_test(test_ctx_free_after_refresh),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
