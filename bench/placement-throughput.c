/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * placement-throughput: placement throughput and quality in simulation
 * (DESIGN §11), on a topology loaded from an hwloc XML file (by default the
 * 480-CPU one: 2 packages, 2 nodes, 2 LLCs, 240 cores x 2 threads).
 *
 * The cpupri map is the production one (cpupri_init(), node shards), its
 * levels set with cpupri_set() in two states: every CPU idle, and a busy mix
 * drawn once from a fixed seed (idle 40%, normal 35%, rt1..rt50 15%, rt99
 * 10%). The configuration is rtplaced's default (every online CPU managed,
 * prefer-idle, avoid-smt-siblings = rt) unless a line says otherwise.
 *
 * Quality: 60 instances ask in turn for 4 CPUs at rt99, each answer claimed
 * as rtplaced claims it (the chosen CPUs count as rt99 in the claimed-level
 * array placement reads), one rotation cursor for all, as in the daemon.
 * Printed: full answers, collisions (a CPU handed out twice: must be 0),
 * and how local the answers are: all 4 CPUs in one LLC, in one node, and
 * answers holding two SMT siblings. Every answer of placement_ctx_choose()
 * is checked against placement_choose() from the same state: they must be
 * equal.
 *
 * Throughput: decisions per second of placement_choose() (which builds its
 * context per call), placement_ctx_choose() (one context, as rtplaced
 * keeps it, the claims compared at every answer) and
 * placement_ctx_choose_stamped() (the same context, the claims under a
 * stamp as daemon/claims.c keeps them: compared only when the stamp is
 * new), for count 1 and count 4 at rt99 and rt50, the rotation cursor
 * advancing as in the daemon, on the idle map, the busy map, the idle map
 * with the 60 x 4 claims in place, and the idle map with every 16th CPU
 * noisy (interrupt noise, placement.h: the general path's tiers). Median of the repeats; each repeat runs
 * queries back to back for a fixed time. With --cpu-time the clock is the
 * thread's CPU time and the fastest repeat is shown: on a loaded host the
 * preemptions and the other work between them drop out.
 *
 * --topology may be given up to PT_MAX_TOPOLOGIES times (480, 1,024,
 * 4,096 and 8,192 CPUs, say): each runs in turn, and a last table sets
 * their decision costs side by side, with the map's size, as ratios to the
 * first topology's.
 *
 * Exit 1 on a collision or a disagreement, 2 on a usage or system error.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "cpupri.h"
#include "cpuset.h"
#include "levels.h"
#include "placement.h"
#include "topo.h"

#define PT_INSTANCES 60
#define PT_INSTANCE_CPUS 4
#define PT_REPEATS 5
#define PT_MAX_TOPOLOGIES 8
#define PT_STATES 4
#define PT_QUERIES 4

struct pt_map {
	void *mem;
	struct cpupri_geom geom;
	struct cpupri_view view;
};

struct pt_options {
	const char *topology[PT_MAX_TOPOLOGIES];
	unsigned ntopologies;
	unsigned repeat_ms;
	bool cpu_time;
};

/* What one topology's run measured, for the scale table. */
struct pt_scale {
	uint32_t ncpus, nnodes, map_bytes;
	double stamped_ns[PT_STATES][PT_QUERIES]; /* placement_ctx_choose_stamped(), as rtplaced decides */
};

static uint64_t pt_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static int pt_map_open(const struct topo *t, struct pt_map *ret)
{
	int r = cpupri_map_open(t, TOPO_SHARD_NODE, &ret->mem, &ret->view);

	if (r == 0)
		ret->geom = ret->view.geom;
	return r;
}

static void pt_map_close(struct pt_map *m)
{
	cpupri_view_close(&m->view);
	free(m->mem);
}

/* Every online CPU idle, or the busy mix drawn from a fixed seed. */
static void pt_map_fill(const struct topo *t, struct pt_map *m, bool busy)
{
	uint64_t rng = UINT64_C(0x9e3779b97f4a7c15);

	for (uint32_t c = 0; c < t->ncpus; c++) {
		uint32_t level = LEVEL_IDLE, dice = (uint32_t)(pt_rand(&rng) % 100);

		if (!t->cpus[c].online)
			level = LEVEL_OFFLINE;
		else if (busy && dice >= 90)
			level = LEVEL_RT99;
		else if (busy && dice >= 75)
			level = level_from_rt_priority(1 + (int)(pt_rand(&rng) % 50));
		else if (busy && dice >= 40)
			level = LEVEL_NORMAL;
		cpupri_set(m->mem, &m->geom, c, level);
	}
}

static bool pt_same_result(int r1, const struct placement_result *a, const struct rtplace_reason *why_a, int r2,
			   const struct placement_result *b, const struct rtplace_reason *why_b)
{
	if (r1 != r2 || a->n != b->n || strcmp(why_a->text, why_b->text) != 0 || a->level != b->level)
		return false;
	for (uint32_t i = 0; i < a->n; i++)
		if (a->cpus[i] != b->cpus[i] || a->levels[i] != b->levels[i])
			return false;
	return true;
}

struct pt_quality {
	unsigned full, collisions, same_llc, same_node, smt_pairs, mismatches;
	unsigned idle_cpus, normal_cpus, rt_cpus;
};

/* 60 instances x 4 CPUs at rt99, each answer claimed; see the top. */
static int pt_quality_run(const struct topo *t, const struct pt_map *m, const struct placement_config *cfg,
			  struct placement_ctx *ctx, struct placement_state *st, struct placement_result *res,
			  struct placement_result *check,
			  struct pt_quality *ret)
{
	uint8_t *claimed = calloc(t->ncpus, 1);
	struct placement_request req = { .prio = 99, .count = PT_INSTANCE_CPUS, .node = -1, .near_cpu = -1 };
	struct rtplace_cpumask given;
	struct rtplace_reason why, why_check;
	uint32_t rotor = 0;

	if (!claimed)
		return -ENOMEM;
	memset(ret, 0, sizeof(*ret));
	cpuset_zero(&given);
	cpuset_zero(&req.allowed);
	for (unsigned i = 0; i < PT_INSTANCES; i++) {
		uint32_t rotor_check = rotor;
		int r = placement_ctx_choose(ctx, st, claimed, &rotor, &req, &why, res);
		int rc = placement_choose(cfg, t, &m->view, claimed, &rotor_check, &req, &why_check, check);
		bool llc = true, node = true, smt = false;

		if (!pt_same_result(r, res, &why, rc, check, &why_check) || rotor != rotor_check)
			ret->mismatches++;
		if (r < 0)
			continue;
		ret->full += res->n == PT_INSTANCE_CPUS;
		for (uint32_t a = 0; a < res->n; a++) {
			const struct topo_cpu *ca = &t->cpus[res->cpus[a]];

			ret->idle_cpus += res->levels[a] == LEVEL_IDLE;
			ret->normal_cpus += res->levels[a] == LEVEL_NORMAL;
			ret->rt_cpus += res->levels[a] >= LEVEL_RT1;
			for (uint32_t b = a + 1; b < res->n; b++) {
				const struct topo_cpu *cb = &t->cpus[res->cpus[b]];

				llc = llc && ca->llc == cb->llc;
				node = node && ca->node == cb->node;
				smt = smt || ca->core == cb->core;
			}
			if (cpuset_test(&given, res->cpus[a]))
				ret->collisions++;
			cpuset_set(&given, res->cpus[a]);
			claimed[res->cpus[a]] = LEVEL_RT99;
		}
		ret->same_llc += llc;
		ret->same_node += node;
		ret->smt_pairs += smt;
	}
	free(claimed);
	return 0;
}

/* Decisions per second, median of the repeats (the fastest with cpu_time);
 * with ctx NULL, placement_choose(); with stamped, placement_ctx_choose_stamped()
 * (stamped->level is claimed). */
static double pt_rate(const struct topo *t, const struct pt_map *m, const struct placement_config *cfg,
		      struct placement_ctx *ctx, struct placement_state *st, const uint8_t *claimed,
		      const struct placement_claims *stamped,
		      const struct placement_request *req, struct placement_result *res, unsigned repeat_ms,
		      bool cpu_time)
{
	uint64_t (*now_ns)(void) = cpu_time ? bench_thread_ns : bench_now_ns;
	double rates[PT_REPEATS], best = 0;
	struct rtplace_reason why;
	uint32_t rotor = 0;

	for (int rep = 0; rep < PT_REPEATS; rep++) {
		uint64_t start = now_ns(), end = start + (uint64_t)repeat_ms * 1000000u, now;
		uint64_t n = 0;

		do {
			for (int i = 0; i < 256; i++)
				if (stamped)
					placement_ctx_choose_stamped(ctx, st, stamped, &rotor, req, &why, res);
				else if (ctx)
					placement_ctx_choose(ctx, st, claimed, &rotor, req, &why, res);
				else
					placement_choose(cfg, t, &m->view, claimed, &rotor, req, &why, res);
			n += 256;
			now = now_ns();
		} while (now < end);
		rates[rep] = (double)n * 1e9 / (double)(now - start);
		best = rates[rep] > best ? rates[rep] : best;
	}
	return cpu_time ? best : bench_median(rates, PT_REPEATS);
}

static void pt_usage(FILE *f)
{
	fprintf(f, "Usage: placement-throughput [--topology XMLFILE]... [--quick] [--cpu-time]\n"
		   "Placement throughput and quality on a simulated topology (DESIGN §11).\n"
		   "  --topology XMLFILE  hwloc XML (default %s); up to 8, each in turn, then a\n"
		   "                      table of their decision costs side by side\n"
		   "  --quick             short timing runs\n"
		   "  --cpu-time          time by the thread's CPU time, fastest repeat (loaded hosts)\n",
		BENCH_TOPOLOGY);
}

static int pt_parse(int argc, char **argv, struct pt_options *o)
{
	static const struct option longopts[] = {
		{ "topology", required_argument, NULL, 't' },
		{ "quick", no_argument, NULL, 'q' },
		{ "cpu-time", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->ntopologies = 0;
	o->repeat_ms = 200;
	o->cpu_time = false;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (o->ntopologies == PT_MAX_TOPOLOGIES) {
				fprintf(stderr, "placement-throughput: at most %d topologies\n", PT_MAX_TOPOLOGIES);
				return -EINVAL;
			}
			o->topology[o->ntopologies++] = optarg;
			break;
		case 'q':
			o->repeat_ms = 20;
			break;
		case 'c':
			o->cpu_time = true;
			break;
		case 'h':
			pt_usage(stdout);
			exit(0);
		default:
			pt_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		pt_usage(stderr);
		return -EINVAL;
	}
	if (o->ntopologies == 0)
		o->topology[o->ntopologies++] = BENCH_TOPOLOGY;
	return 0;
}

/* The quality table: default config on both maps, then SMT avoidance off. */
static int pt_quality(const struct topo *t, struct pt_map *m, struct placement_result *res,
		      struct placement_result *check, bool *ret_bad)
{
	static const struct {
		const char *name;
		bool busy;
		enum placement_smt smt;
	} cases[] = {
		{ "idle map, avoid-smt rt", false, PLACEMENT_SMT_RT },
		{ "busy map, avoid-smt rt", true, PLACEMENT_SMT_RT },
		{ "idle map, avoid-smt never", false, PLACEMENT_SMT_NEVER },
		{ "busy map, avoid-smt never", true, PLACEMENT_SMT_NEVER },
	};

	printf("\n== quality: %d instances x %d CPUs at rt99, each answer claimed ==\n", PT_INSTANCES,
	       PT_INSTANCE_CPUS);
	printf("%-27s %5s %10s %8s %9s %9s %12s %9s\n", "case", "full", "collisions", "one LLC", "one node",
	       "SMT pair", "idle/norm/rt", "mismatch");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct placement_config cfg = { .managed = t->online, .prefer_idle = true, .avoid_smt = cases[i].smt };
		struct placement_ctx *ctx;
		struct placement_state *st = NULL;
		struct pt_quality q;
		char mix[32];
		int r;

		pt_map_fill(t, m, cases[i].busy);
		r = placement_ctx_new(&cfg, t, &m->view, &ctx);
		if (r < 0)
			return r;
		r = placement_state_new(ctx, &st);
		if (r == 0)
			r = pt_quality_run(t, m, &cfg, ctx, st, res, check, &q);
		placement_state_free(st);
		placement_ctx_free(ctx);
		if (r < 0)
			return r;
		snprintf(mix, sizeof(mix), "%u/%u/%u", q.idle_cpus, q.normal_cpus, q.rt_cpus);
		printf("%-27s %2u/%2u %10u %5u/%2u %6u/%2u %6u/%2u %12s %9u\n", cases[i].name, q.full, PT_INSTANCES,
		       q.collisions, q.same_llc, PT_INSTANCES, q.same_node, PT_INSTANCES, q.smt_pairs, PT_INSTANCES, mix,
		       q.mismatches);
		*ret_bad = *ret_bad || q.collisions || q.mismatches || q.full != PT_INSTANCES;
	}
	return 0;
}

/* The throughput table; see the top. */
static int pt_throughput(const struct topo *t, struct pt_map *m, struct placement_result *res,
			 const struct pt_options *o, struct pt_scale *scale)
{
	static const struct {
		const char *name;
		bool busy, claims, noise;
	} states[PT_STATES] = {
		{ "idle", false, false, false },
		{ "busy mix", true, false, false },
		{ "idle + 60x4 claims", false, true, false },
		{ "idle + irq noise", false, false, true },
	};
	static const struct {
		int prio;
		uint32_t count;
	} queries[PT_QUERIES] = { { 99, 1 }, { 99, 4 }, { 50, 1 }, { 50, 4 } };
	struct placement_config cfg = { .managed = t->online, .prefer_idle = true, .avoid_smt = PLACEMENT_SMT_RT };
	struct rtplace_cpumask noisy;
	uint8_t *claimed = calloc(t->ncpus, 1);
	struct placement_ctx *ctx = NULL;
	struct placement_state *st = NULL;
	int r = -ENOMEM;

	if (!claimed)
		goto out;
	r = placement_ctx_new(&cfg, t, &m->view, &ctx);
	if (r == 0)
		r = placement_state_new(ctx, &st);
	if (r < 0)
		goto out;
	printf("\n== throughput: decisions/s, %s of %d x %u ms%s (ns per decision) ==\n", o->cpu_time ? "fastest" : "median",
	       PT_REPEATS, o->repeat_ms, o->cpu_time ? " of thread CPU time" : "");
	printf("%-20s %-12s %24s %24s %24s\n", "map", "query", "placement_choose", "placement_ctx_choose",
	       "ctx, stamped claims");
	for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
		/* The bench is the only keeper of claims here: a stamp per state. */
		const struct placement_claims stamped = { .level = claimed, .stamp = s + 1 };

		pt_map_fill(t, m, states[s].busy);
		memset(claimed, 0, t->ncpus);
		/* Interrupt noise as a NIC's queues give it: every 16th CPU. */
		cpuset_zero(&noisy);
		for (uint32_t c = 0; states[s].noise && c < t->ncpus; c += 16)
			cpuset_set(&noisy, c);
		cfg.noisy = noisy;
		placement_ctx_set_noisy(ctx, &noisy);
		if (states[s].claims) {
			/* The claims the quality run leaves: 60 answers of 4 at rt99. */
			struct placement_request req = { .prio = 99, .count = PT_INSTANCE_CPUS, .node = -1, .near_cpu = -1 };
			uint32_t rotor = 0;

			cpuset_zero(&req.allowed);
			for (int i = 0; i < PT_INSTANCES; i++) {
				if (placement_ctx_choose(ctx, st, claimed, &rotor, &req, NULL, res) < 0)
					continue;
				for (uint32_t k = 0; k < res->n; k++)
					claimed[res->cpus[k]] = LEVEL_RT99;
			}
		}
		for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
			struct placement_request req = { .prio = queries[q].prio, .count = queries[q].count, .node = -1,
							 .near_cpu = -1 };
			double per_call, with_ctx, with_stamp;
			char name[32];

			cpuset_zero(&req.allowed);
			per_call = pt_rate(t, m, &cfg, NULL, NULL, claimed, NULL, &req, res, o->repeat_ms, o->cpu_time);
			with_ctx = pt_rate(t, m, &cfg, ctx, st, claimed, NULL, &req, res, o->repeat_ms, o->cpu_time);
			with_stamp = pt_rate(t, m, &cfg, ctx, st, claimed, &stamped, &req, res, o->repeat_ms, o->cpu_time);
			scale->stamped_ns[s][q] = 1e9 / with_stamp;
			snprintf(name, sizeof(name), "rt%d count %u", queries[q].prio, queries[q].count);
			printf("%-20s %-12s %12.0f (%7.0f ns) %12.0f (%7.0f ns) %12.0f (%7.0f ns)\n", states[s].name, name,
			       per_call, 1e9 / per_call, with_ctx, 1e9 / with_ctx, with_stamp, 1e9 / with_stamp);
		}
	}
out:
	placement_state_free(st);
	placement_ctx_free(ctx);
	free(claimed);
	return r;
}

/* One topology's quality and throughput tables; what the scale table needs into *scale. */
static int pt_run(const char *path, const struct pt_options *o, struct placement_result *res,
		  struct placement_result *check, struct pt_scale *scale, bool *ret_bad)
{
	struct pt_map m = { 0 };
	struct rtplace_reason reason;
	struct topo *t = NULL;
	int r;

	r = topo_load(path, &reason, &t);
	if (r < 0) {
		fprintf(stderr, "placement-throughput: %s\n", reason.text);
		return r;
	}
	r = pt_map_open(t, &m);
	if (r < 0) {
		fprintf(stderr, "placement-throughput: cannot build the map: %s\n", strerror(-r));
		topo_free(t);
		return r;
	}
	printf("placement-throughput: %s: %u CPUs (%u online), %u nodes, %u LLCs, %u cores; map %u bytes, %u node "
	       "shards\n",
	       path, t->ncpus, cpuset_count(&t->online), t->nnodes, t->nllcs, t->ncores, m.geom.size, m.geom.nshards);
	*scale = (struct pt_scale){ .ncpus = t->ncpus, .nnodes = t->nnodes, .map_bytes = m.geom.size };
	r = pt_quality(t, &m, res, check, ret_bad);
	if (r == 0)
		r = pt_throughput(t, &m, res, o, scale);
	if (r < 0)
		fprintf(stderr, "placement-throughput: %s\n", strerror(-r));
	pt_map_close(&m);
	topo_free(t);
	return r;
}

/*
 * The topologies side by side: rtplaced's decision (ctx, stamped claims)
 * in ns for each state and query, the worst of them, and the worst and
 * the map's size as ratios to the first topology's.
 */
static void pt_scale_table(const struct pt_scale *sc, unsigned n)
{
	static const char *const qnames[PT_QUERIES] = { "rt99x1", "rt99x4", "rt50x1", "rt50x4" };
	static const char *const snames[PT_STATES] = { "idle", "busy", "claims", "noise" };
	double worst0 = 0;

	printf("\n== scale: ns per decision, ctx with stamped claims (rtplaced's), by CPU count ==\n");
	printf("%6s %6s %10s", "cpus", "nodes", "map bytes");
	for (int s = 0; s < PT_STATES; s++)
		for (int q = 0; q < PT_QUERIES; q++) {
			char h[32];

			snprintf(h, sizeof(h), "%s %s", snames[s], qnames[q]);
			printf(" %13s", h);
		}
	printf(" %8s %8s %8s\n", "worst", "x worst", "x map");
	for (unsigned i = 0; i < n; i++) {
		double worst = 0;

		printf("%6u %6u %10u", sc[i].ncpus, sc[i].nnodes, sc[i].map_bytes);
		for (int s = 0; s < PT_STATES; s++)
			for (int q = 0; q < PT_QUERIES; q++) {
				printf(" %13.1f", sc[i].stamped_ns[s][q]);
				worst = sc[i].stamped_ns[s][q] > worst ? sc[i].stamped_ns[s][q] : worst;
			}
		if (i == 0)
			worst0 = worst;
		printf(" %8.1f %8.2f %8.2f\n", worst, worst / worst0, (double)sc[i].map_bytes / sc[0].map_bytes);
	}
}

int main(int argc, char **argv)
{
	struct placement_result *res = NULL, *check = NULL;
	struct pt_scale scale[PT_MAX_TOPOLOGIES];
	struct pt_options o;
	bool bad = false;
	int r = 0;

	if (pt_parse(argc, argv, &o) < 0)
		return 2;
	res = malloc(sizeof(*res));
	check = malloc(sizeof(*check));
	if (!res || !check)
		r = -ENOMEM;
	for (unsigned i = 0; r == 0 && i < o.ntopologies; i++) {
		if (i)
			printf("\n");
		r = pt_run(o.topology[i], &o, res, check, &scale[i], &bad);
	}
	if (r == 0 && o.ntopologies > 1)
		pt_scale_table(scale, o.ntopologies);
	free(check);
	free(res);
	return r < 0 ? 2 : bad ? 1 : 0;
}
