/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * explain_classify() against placement itself, over random states on
 * every shared topology (plain, hybrid, some CPUs offline): random map
 * levels, claims, configurations (housekeeping, prefer-idle, SMT rules,
 * noisy and isolated CPUs in every isolation mode) and requests. The
 * chosen CPUs must be placement's answer, in its order; every other CPU
 * of the allowed set must have one verdict, and that verdict must be true
 * of the state (a CPU said busier is above every chosen one, a CPU said
 * claimed is held at or above the priority, ...); CHANGED, which only a
 * map moving under the answer may cause, never appears. Then
 * explain_thread() on its facts.
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
#include "explain.h"
#include "placement.h"
#include "refmodel.h"

#define EX_STATES 60
#define EX_QUERIES 10

struct ex_stats {
	uint64_t seed;
	unsigned long queries, answered, partial, empty;
	unsigned long verdicts[RTPLACE_EXPLAIN_COUNT];
};

struct ex_case {
	struct refmodel_map map;
	struct placement_config cfg;
	uint8_t claimed[RTPLACE_MAX_CPUS];
	struct placement_result res;
	struct rtplace_explain_cpu cpus[RTPLACE_MAX_CPUS];
	const struct topo *t;
	const struct placement_request *req;
	const char *where;
};

static void ex_random_config(uint64_t *rng, const struct topo *t, struct placement_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->managed = t->online;
	for (uint32_t c = 0; c < t->ncpus; c++)
		if (refmodel_rand_below(rng, 12) == 0)
			cpuset_clear(&cfg->managed, c);
	cfg->prefer_idle = refmodel_rand_below(rng, 4) != 0;
	cfg->avoid_smt = (enum placement_smt)refmodel_rand_below(rng, 3);
	if (refmodel_rand_below(rng, 3) == 0)
		refmodel_random_set(rng, t, &cfg->noisy);
	if (refmodel_rand_below(rng, 2) == 0) {
		refmodel_random_set(rng, t, &cfg->isolated);
		for (uint32_t c = t->ncpus; c < RTPLACE_MAX_CPUS; c++)
			cpuset_clear(&cfg->isolated, c);
		cfg->isolated_mode = (enum placement_isolated)refmodel_rand_below(rng, 4);
		cfg->isolated_housekeeping = refmodel_rand_below(rng, 2);
	}
}

static void ex_random_request(uint64_t *rng, const struct topo *t, struct placement_request *req)
{
	uint32_t dice = refmodel_rand_below(rng, 100);

	memset(req, 0, sizeof(*req));
	req->prio = 1 + (int)refmodel_rand_below(rng, 99);
	req->count = dice < 55 ? 1 : dice < 90 ? 2 + refmodel_rand_below(rng, 7) : 1 + refmodel_rand_below(rng, t->ncpus);
	if (refmodel_rand_below(rng, 3) != 0)
		refmodel_random_set(rng, t, &req->allowed);
	/* The codec refuses CPUs past the machine before placement sees a
	 * request (placement's isolation rules would read a set of only
	 * such CPUs as "every managed CPU" on one side). */
	for (uint32_t c = t->ncpus; c < RTPLACE_MAX_CPUS; c++)
		cpuset_clear(&req->allowed, c);
	req->node = refmodel_rand_below(rng, 4) == 0 ? (int32_t)refmodel_rand_below(rng, t->nnodes) : -1;
	req->near_cpu = refmodel_rand_below(rng, 3) == 0 ? (int32_t)refmodel_rand_below(rng, t->ncpus) : -1;
	req->normal = refmodel_rand_below(rng, 8) == 0;
}

static uint32_t ex_level(const struct ex_case *ec, uint32_t c)
{
	uint32_t l = ec->map.levels[c];

	return l != LEVEL_OFFLINE && ec->claimed[c] > l ? ec->claimed[c] : l;
}

static uint32_t ex_rank(const struct ex_case *ec, uint32_t level)
{
	return level == LEVEL_IDLE && !ec->cfg.prefer_idle ? LEVEL_NORMAL : level;
}

static void ex_fail(const struct ex_case *ec, uint32_t c, const char *what)
{
	fail_msg("%s: cpu %u said %s, but %s", ec->where, c, explain_verdict_name(ec->cpus[c].verdict), what);
}

/* Whether cpu's verdict, a preference among eligible CPUs, holds. */
static void ex_check_preference(const struct ex_case *ec, uint32_t c, uint32_t worst)
{
	const struct topo *t = ec->t;
	const struct rtplace_explain_cpu *e = &ec->cpus[c];
	bool ok = true;

	/* A partial answer takes every eligible CPU of its side. */
	if (ec->res.n < ec->req->count && e->verdict != RTPLACE_EXPLAIN_ISOLATION_SIDE)
		ex_fail(ec, c, "the answer is partial");
	for (uint32_t i = 0; i < ec->res.n; i++) {
		const struct topo_cpu *x = &t->cpus[ec->res.cpus[i]];

		switch (e->verdict) {
		case RTPLACE_EXPLAIN_ISOLATION_SIDE:
			ok = ok && cpuset_test(&ec->cfg.isolated, c) != cpuset_test(&ec->cfg.isolated, ec->res.cpus[i]);
			break;
		case RTPLACE_EXPLAIN_KIND:
			ok = ok && x->kind == 0 && t->cpus[c].kind != 0;
			break;
		case RTPLACE_EXPLAIN_BUSIER:
			ok = ok && ex_rank(ec, ex_level(ec, c)) > ex_rank(ec, ec->res.levels[i]);
			break;
		case RTPLACE_EXPLAIN_GROUP:
			ok = ok && ec->req->count > 1 && (x->llc != t->cpus[c].llc || x->node != t->cpus[c].node);
			break;
		default:
			break;
		}
	}
	if (e->verdict == RTPLACE_EXPLAIN_SMT) {
		/* As placement reads a sibling: its claim counts, offline or not. */
		uint32_t s = (uint32_t)e->other, l = ec->claimed[s] > ec->map.levels[s] ? ec->claimed[s] : ec->map.levels[s];
		bool chosen = false;

		/* A pick gives its siblings the penalty for the picks after it. */
		for (uint32_t i = 0; i + 1 < ec->res.n; i++)
			chosen = chosen || ec->res.cpus[i] == s;
		ok = e->other >= 0 && s != c && t->cpus[s].core == t->cpus[c].core && ec->cfg.avoid_smt &&
		     (chosen || (ec->cfg.avoid_smt == PLACEMENT_SMT_ALWAYS ? l > LEVEL_IDLE
									   : l >= level_from_rt_priority(ec->req->prio)));
	}
	if (e->verdict == RTPLACE_EXPLAIN_FARTHER || e->verdict == RTPLACE_EXPLAIN_NOISY ||
	    e->verdict == RTPLACE_EXPLAIN_ROTATION || e->verdict == RTPLACE_EXPLAIN_SMT)
		ok = ok && ex_rank(ec, ex_level(ec, c)) == worst;
	if (e->verdict == RTPLACE_EXPLAIN_FARTHER)
		ok = ok && e->other >= 0 && (ec->req->near_cpu >= 0 || ec->res.n > 0);
	if (e->verdict == RTPLACE_EXPLAIN_NOISY)
		ok = ok && cpuset_test(&ec->cfg.noisy, c);
	if (!ok)
		ex_fail(ec, c, "the state says otherwise");
}

/* Every verdict of the page against the state it was made from. */
static void ex_check(struct ex_case *ec, struct ex_stats *st)
{
	const struct topo *t = ec->t;
	const struct placement_request *req = ec->req;
	enum placement_isolated mode = placement_isolated_mode(&ec->cfg, req);
	uint32_t below = level_from_rt_priority(req->prio), worst = 0, ranked = 0;
	bool allowed_empty = refmodel_allowed_empty(t, &req->allowed);

	for (uint32_t i = 0; i < ec->res.n; i++) {
		const struct rtplace_explain_cpu *e = &ec->cpus[ec->res.cpus[i]];

		if (e->verdict != RTPLACE_EXPLAIN_CHOSEN || e->rank != i + 1)
			fail_msg("%s: pick %u (cpu %u) is %s rank %u", ec->where, i, ec->res.cpus[i],
				 explain_verdict_name(e->verdict), e->rank);
		worst = ex_rank(ec, ec->res.levels[i]) > worst ? ex_rank(ec, ec->res.levels[i]) : worst;
	}
	for (uint32_t c = 0; c < t->ncpus; c++) {
		const struct rtplace_explain_cpu *e = &ec->cpus[c];
		bool iso = cpuset_test(&ec->cfg.isolated, c), ok = true;

		assert_int_equal(e->cpu, c);
		st->verdicts[e->verdict < RTPLACE_EXPLAIN_COUNT ? e->verdict : 0]++;
		assert_int_equal(e->level, ex_level(ec, c));
		switch (e->verdict) {
		case RTPLACE_EXPLAIN_CHOSEN:
			ranked++;
			break;
		case RTPLACE_EXPLAIN_NOT_ALLOWED:
			ok = !allowed_empty && !cpuset_test(&req->allowed, c);
			break;
		case RTPLACE_EXPLAIN_OFFLINE:
			ok = !t->cpus[c].online || ec->map.levels[c] == LEVEL_OFFLINE;
			break;
		case RTPLACE_EXPLAIN_HOUSEKEEPING:
			ok = !cpuset_test(&ec->cfg.managed, c);
			break;
		case RTPLACE_EXPLAIN_OTHER_NODE:
			ok = req->node >= 0 && t->cpus[c].node != req->node;
			break;
		case RTPLACE_EXPLAIN_ISOLATED:
			ok = iso && mode == PLACEMENT_ISOLATED_AVOID;
			break;
		case RTPLACE_EXPLAIN_NOT_ISOLATED:
			ok = !iso && mode == PLACEMENT_ISOLATED_ONLY;
			break;
		case RTPLACE_EXPLAIN_BUSY:
			ok = ec->map.levels[c] >= below;
			break;
		case RTPLACE_EXPLAIN_CLAIMED:
			ok = ec->map.levels[c] < below && ec->claimed[c] >= below;
			break;
		case RTPLACE_EXPLAIN_CHANGED:
			ok = false;
			break;
		default:
			ok = ex_level(ec, c) < below;
			ex_check_preference(ec, c, worst);
			break;
		}
		if (!ok)
			ex_fail(ec, c, "the state says otherwise");
	}
	assert_int_equal(ranked, ec->res.n);
}

static void ex_run(const char *label, const char *variant, struct topo *t, struct ex_stats *st)
{
	uint64_t rng = st->seed ^ ((uint64_t)t->ncpus << 8) ^ (uint64_t)variant[0];
	struct ex_case *ec = calloc(1, sizeof(*ec));
	uint8_t next[RTPLACE_MAX_CPUS];
	char where[200];

	assert_non_null(ec);
	assert_int_equal(refmodel_map_open(t, TOPO_SHARD_NODE, &ec->map), 0);
	ec->t = t;
	ec->where = where;
	for (unsigned s = 0; s < EX_STATES; s++) {
		refmodel_random_levels(&rng, t->ncpus, next);
		for (uint32_t c = 0; c < t->ncpus; c++) {
			if (!t->cpus[c].online)
				next[c] = LEVEL_OFFLINE;
			refmodel_map_set(&ec->map, c, next[c]);
			ec->claimed[c] = refmodel_rand_below(&rng, 6) == 0
						 ? (uint8_t)(LEVEL_NORMAL + refmodel_rand_below(&rng, LEVEL_COUNT - 2))
						 : 0;
		}
		ex_random_config(&rng, t, &ec->cfg);
		for (unsigned q = 0; q < EX_QUERIES; q++) {
			struct placement_request req;
			uint32_t rotor = refmodel_rand_below(&rng, t->ncpus), dry = rotor;
			int r;

			ex_random_request(&rng, t, &req);
			ec->req = &req;
			/* The daemon's dry run: placement's answer on a copy of the
			 * rotor, then the classification of that very answer. */
			r = placement_choose(&ec->cfg, t, &ec->map.view, ec->claimed, &dry, &req, NULL, &ec->res);
			assert_true(r == 0 || r == -ENOENT || r == -ENODEV);
			explain_classify(&ec->cfg, t, &ec->map.view, ec->claimed, &req, &ec->res, 0, t->ncpus, ec->cpus);
			snprintf(where, sizeof(where), "%s %s state %u query %u (seed %#llx)", label, variant, s, q,
				 (unsigned long long)st->seed);
			ex_check(ec, st);
			st->queries++;
			st->answered += r == 0;
			st->partial += r == 0 && ec->res.n < req.count;
			st->empty += r != 0;
		}
	}
	refmodel_map_close(&ec->map);
	free(ec);
}

static void ex_topology_cb(const char *label, struct topo *t, void *arg)
{
	struct ex_stats *st = arg;

	ex_run(label, "plain", t, st);
	for (uint32_t c = 0; c < t->ncpus; c++)
		t->cpus[c].kind = t->cpus[c].core % 3 == 2;
	assert_int_equal(topo_finish(t), 0);
	ex_run(label, "hybrid", t, st);
	for (uint32_t c = 0; c < t->ncpus; c++)
		if (c % 7 == 3)
			t->cpus[c].online = false;
	assert_int_equal(topo_finish(t), 0);
	ex_run(label, "offline", t, st);
}

static void test_explain_is_placement(void **state)
{
	struct ex_stats st = { .seed = refmodel_seed() };
	unsigned topologies = refmodel_each_topology(ex_topology_cb, &st);

	(void)state;
	print_message("seed %#llx: %u topologies, %lu queries: %lu answered (%lu partial), %lu empty\n",
		      (unsigned long long)st.seed, topologies, st.queries, st.answered, st.partial, st.empty);
	for (unsigned v = 0; v < RTPLACE_EXPLAIN_COUNT; v++)
		print_message("  %-15s %lu\n", explain_verdict_name(v), st.verdicts[v]);
	assert_true(st.queries > 5000 && st.partial > 50 && st.empty > 50);
	/* Every verdict but CHANGED must have been met, or the states
	 * prove little. */
	for (unsigned v = 0; v < RTPLACE_EXPLAIN_CHANGED; v++)
		if (st.verdicts[v] == 0)
			fail_msg("no CPU was ever %s", explain_verdict_name(v));
}

static void test_thread_obstacles(void **state)
{
	struct explain_thread_facts f = { .prio = 50, .rtprio_soft = 0, .rtprio_hard = 0, .rt_known = true,
					  .rt_runtime_us = 950000, .rt_period_us = 1000000 };
	struct rtplace_explain_obstacle o[RTPLACE_EXPLAIN_OBSTACLES_MAX];
	struct rtplace_reason words;
	uint32_t n;

	(void)state;
	explain_thread(&f, o, RTPLACE_EXPLAIN_OBSTACLES_MAX, &n);
	assert_int_equal(n, 2);
	assert_int_equal(o[0].kind, RTPLACE_OBSTACLE_RTPRIO);
	assert_int_equal(o[1].kind, RTPLACE_OBSTACLE_THROTTLING);
	explain_obstacle_words(&o[0], 50, "", &words);
	assert_non_null(strstr(words.text, "RLIMIT_RTPRIO 0 is below rt50"));
	assert_non_null(strstr(words.text, "prlimit --rtprio=50"));
	/* A soft limit under an unlimited hard one: the user raises it. */
	f.rtprio_hard = -1;
	explain_thread(&f, o, RTPLACE_EXPLAIN_OBSTACLES_MAX, &n);
	explain_obstacle_words(&o[0], 50, "", &words);
	assert_non_null(strstr(words.text, "ulimit -r 50"));
	/* CAP_SYS_NICE over the daemon's namespace lifts the limit; one in
	 * a namespace of its own does not, and says so. */
	f.cap_sys_nice = true;
	f.cap_daemon_userns = true;
	f.rt_runtime_us = -1;
	explain_thread(&f, o, RTPLACE_EXPLAIN_OBSTACLES_MAX, &n);
	assert_int_equal(n, 0);
	f.cap_daemon_userns = false;
	f.budget_missing = true;
	f.budget_us = 950000;
	explain_thread(&f, o, RTPLACE_EXPLAIN_OBSTACLES_MAX, &n);
	assert_int_equal(n, 3);
	assert_int_equal(o[0].kind, RTPLACE_OBSTACLE_RTPRIO);
	assert_int_equal(o[1].kind, RTPLACE_OBSTACLE_CAP_USERNS);
	assert_int_equal(o[2].kind, RTPLACE_OBSTACLE_RT_BUDGET);
	explain_obstacle_words(&o[2], 50, "no RT budget: cpu cgroup /x", &words);
	assert_string_equal(words.text, "no RT budget: cpu cgroup /x");
	/* Room for one: the first only. */
	explain_thread(&f, o, 1, &n);
	assert_int_equal(n, 1);
}

/* The kernel's environment as obstacles: a deadline server's reserve only
 * where it was read, a sched_ext scheduler only while enabled. */
static void test_kernel_obstacles(void **state)
{
	struct kenv k = { .fair = { .state = KENV_DL_READ, .share_max_ppm = 50000 },
			  .ext = { .state = KENV_DL_UNREADABLE, .share_max_ppm = 70000 },
			  .scx = { .state = KENV_SCX_ENABLED, .switch_all = 1 } };
	struct explain_thread_facts f = { .prio = 50, .rtprio_soft = -1, .rtprio_hard = -1 };
	struct rtplace_explain_obstacle o[RTPLACE_EXPLAIN_OBSTACLES_MAX];
	struct rtplace_reason words;
	uint32_t n;

	(void)state;
	explain_kernel_facts(&k, &f);
	explain_thread(&f, o, RTPLACE_EXPLAIN_OBSTACLES_MAX, &n);
	assert_int_equal(n, 2);
	assert_int_equal(o[0].kind, RTPLACE_OBSTACLE_DL_SERVER);
	assert_int_equal(o[0].value, 50000);
	assert_int_equal(o[0].limit, 0);
	explain_obstacle_words(&o[0], 50, "", &words);
	assert_non_null(strstr(words.text, "fair deadline server keeps up to 5.0% of each CPU"));
	assert_non_null(strstr(words.text, "/sys/kernel/debug/sched/fair_server/cpuN/runtime"));
	assert_int_equal(o[1].kind, RTPLACE_OBSTACLE_SCHED_EXT);
	explain_obstacle_words(&o[1], 50, "", &words);
	assert_non_null(strstr(words.text, "sched_ext scheduler is loaded for every normal task"));
	/* Servers turned off (share 0), the ext server read, the scheduler
	 * gone. */
	k.fair.share_max_ppm = 0;
	k.ext.state = KENV_DL_READ;
	k.scx.state = KENV_SCX_DISABLED;
	explain_kernel_facts(&k, &f);
	explain_thread(&f, o, RTPLACE_EXPLAIN_OBSTACLES_MAX, &n);
	assert_int_equal(n, 1);
	assert_int_equal(o[0].kind, RTPLACE_OBSTACLE_DL_SERVER);
	assert_int_equal(o[0].limit, 1);
	explain_obstacle_words(&o[0], 50, "", &words);
	assert_non_null(strstr(words.text, "ext deadline server keeps up to 7.0%"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explain_is_placement),
		cmocka_unit_test(test_thread_obstacles),
		cmocka_unit_test(test_kernel_obstacles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
