/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cpupri map against a naive model (a per-CPU level array scanned in
 * full): randomized differential runs on every shared topology in both
 * shardings, targeted cases, and a concurrency run in which writer threads
 * (each owning its CPUs, as a runqueue lock makes the kernel's writers do)
 * change levels while reader threads query.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpupri.h"
#include "placement.h"
#include "refmodel.h"

#define DIFF_STATES 300
#define DIFF_QUERIES 12

struct diff_stats {
	uint64_t seed;
	unsigned topologies;
	unsigned long states, queries, found;
};

/* The same through cpupri_level_live() and cpupri_level_cpu_word(), as
 * placement's fast path reads the map: level by level, a word at a time. */
static int walk_cpus(const struct cpupri_view *v, uint32_t below, const struct cpupri_mask *allowed,
		     struct rtplace_cpumask *ret, uint32_t *ret_level)
{
	for (uint32_t level = LEVEL_IDLE; level < below && level < LEVEL_COUNT; level++) {
		uint64_t any = 0;

		if (!cpupri_level_live(v, level, allowed))
			continue;
		for (uint32_t i = 0; i < CPUSET_WORDS; i++) {
			ret->bits[i] = cpupri_level_cpu_word(v, cpupri_level_words(v, level), cpupri_level_counts(v, level),
							  allowed, i);
			any |= ret->bits[i];
		}
		if (any) {
			*ret_level = level;
			return 0;
		}
	}
	return -ENOENT;
}

/* cpupri_find() from idle, its answer converted by the reference model. */
static int find_cpus(const struct cpupri_view *v, uint32_t below, const struct cpupri_mask *allowed,
		     struct rtplace_cpumask *ret, uint32_t *ret_level)
{
	struct cpupri_mask found;
	int r;

	assert_int_equal(cpupri_mask_new(v, &found), 0);
	r = cpupri_find(v, LEVEL_IDLE, below, allowed, &found, ret_level);
	if (r == 0)
		refmodel_mask_cpus(v, &found, ret);
	cpupri_mask_free(&found);
	return r;
}

/* The map's counts, slots and masks all say what the mirror says. */
static void check_exact(const struct refmodel_map *m, const struct cpupri_mask *all)
{
	uint32_t ncpus = m->geom.ncpus;

	for (uint32_t level = 0; level < LEVEL_COUNT; level++) {
		struct rtplace_cpumask got, want;
		int32_t n = 0;

		cpuset_zero(&want);
		for (uint32_t c = 0; c < ncpus; c++)
			if (m->levels[c] == level) {
				cpuset_set(&want, c);
				n++;
			}
		assert_int_equal(cpupri_count(&m->view, level), n);
		for (uint32_t shard = 0; shard < m->geom.nshards; shard++)
			assert_int_equal(refmodel_map_shard_count(m, level, shard),
					 refmodel_mirror_shard_count(m, level, shard));
		cpupri_level_cpus(&m->view, level, all, &got);
		assert_true(cpuset_equal(&got, &want));
	}
	for (uint32_t c = 0; c < ncpus; c++)
		assert_int_equal(cpupri_level(&m->view, c), m->levels[c]);
}

/* A query limit: mostly rtP for a random P, sometimes the edges. */
static uint32_t random_below(uint64_t *rng)
{
	switch (refmodel_rand_below(rng, 8)) {
	case 0:
		return refmodel_rand_below(rng, LEVEL_COUNT + 3);
	case 1:
		return LEVEL_RT99 + 1;
	default:
		return level_from_rt_priority(1 + (int)refmodel_rand_below(rng, 99));
	}
}

static void diff_one(const char *label, struct topo *t, enum topo_shard mode, struct diff_stats *st)
{
	uint64_t rng = st->seed ^ t->ncpus ^ ((uint64_t)mode << 32);
	struct cpupri_mask all, mask;
	struct refmodel_map *m;
	uint8_t next[RTPLACE_MAX_CPUS];
	struct rtplace_cpumask full;
	bool skew;

	m = malloc(sizeof(*m));
	assert_non_null(m);
	assert_int_equal(refmodel_map_open(t, mode, m), 0);
	assert_int_equal(cpupri_mask_new(&m->view, &all), 0);
	assert_int_equal(cpupri_mask_new(&m->view, &mask), 0);
	cpuset_zero(&full);
	for (uint32_t c = 0; c < t->ncpus; c++)
		cpuset_set(&full, c);
	cpupri_mask_from_cpuset(&m->view, &full, &all);
	check_exact(m, &all);

	for (unsigned s = 0; s < DIFF_STATES; s++) {
		/* Either a fresh state or a few CPUs moving: both go through
		 * cpupri_set() transitions from whatever the map held. */
		refmodel_random_levels(&rng, t->ncpus, next);
		if (refmodel_rand_below(&rng, 2)) {
			for (uint32_t c = 0; c < t->ncpus; c++) {
				uint32_t old = m->levels[c];

				assert_int_equal(refmodel_map_set(m, c, next[c]), old);
			}
		} else {
			for (uint32_t k = 1 + refmodel_rand_below(&rng, 8); k > 0; k--) {
				uint32_t c = refmodel_rand_below(&rng, t->ncpus);
				uint32_t old = m->levels[c];

				assert_int_equal(refmodel_map_set(m, c, next[c]), old);
			}
		}
		check_exact(m, &all);
		st->states++;
		/* A third of the states with every hint set, most wrongly:
		 * the answers must not change. */
		skew = refmodel_rand_below(&rng, 3) == 0;
		if (skew)
			refmodel_map_skew_hints(m, 1);

		for (unsigned q = 0; q < DIFF_QUERIES; q++) {
			struct rtplace_cpumask allowed, got, want, walked;
			uint32_t below = random_below(&rng), got_level = 0, want_level = 0;
			int r, rr;

			refmodel_random_set(&rng, t, &allowed);
			cpupri_mask_from_cpuset(&m->view, &allowed, &mask);
			r = find_cpus(&m->view, below, &mask, &got, &got_level);
			rr = refmodel_find(m->levels, t->ncpus, below, &allowed, &want, &want_level);
			if (r != rr || (r == 0 && (got_level != want_level || !cpuset_equal(&got, &want))))
				fail_msg("%s shard %d state %u query %u%s: find(below %u) = %d level %u, model %d level %u",
					 label, mode, s, q, skew ? " (hints skewed)" : "", below, r, got_level, rr,
					 want_level);
			st->queries++;
			if (r < 0)
				continue;
			/* The word-at-a-time reader gives the same CPUs, and the
			 * hints say the level is live where it has them. */
			assert_true(cpupri_level_live(&m->view, want_level, &mask));
			for (uint32_t i = 0; i < CPUSET_WORDS; i++)
				walked.bits[i] = cpupri_level_cpu_word(&m->view, cpupri_level_words(&m->view, want_level),
								    cpupri_level_counts(&m->view, want_level), &mask, i);
			if (!cpuset_equal(&walked, &want))
				fail_msg("%s shard %d state %u query %u%s: cpupri_level_cpu_word() differs at level %u",
					 label, mode, s, q, skew ? " (hints skewed)" : "", want_level);
			st->found++;
		}
		if (skew)
			refmodel_map_skew_hints(m, -1);
	}
	cpupri_mask_free(&mask);
	cpupri_mask_free(&all);
	refmodel_map_close(m);
	free(m);
}

static void diff_topology_cb(const char *label, struct topo *t, void *arg)
{
	diff_one(label, t, TOPO_SHARD_NODE, arg);
	diff_one(label, t, TOPO_SHARD_LLC, arg);
}

static void test_differential(void **state)
{
	struct diff_stats st = { .seed = refmodel_seed() };

	st.topologies = refmodel_each_topology(diff_topology_cb, &st);
	print_message("seed %#llx: %u topologies x 2 shardings, %lu states, %lu queries (%lu found)\n",
		      (unsigned long long)st.seed, st.topologies, st.states, st.queries, st.found);
	assert_true(st.topologies >= 5);
	assert_true(st.queries > 10000);
}

/*
 * The view's run-based conversions (cpupri_mask_from_cpuset,
 * cpupri_mask_to_cpuset, cpupri_level_cpus) and cpupri_find() resumed from
 * any level, against the per-CPU reference reader, on maps whose shards are
 * drawn at random (short runs), are contiguous blocks (one long run per
 * word) or are interleaved, some wider than a cpuset can hold, with random
 * levels, CPU sets and allowed masks.
 */
static void test_xlate(void **state)
{
	uint64_t rng = refmodel_seed() ^ 0x5851f42d4c957f2dULL;
	unsigned maps = 0, checks = 0;

	for (unsigned round = 0; round < 60; round++) {
		static const uint32_t sizes[] = { 1, 7, 64, 65, 130, 256, 480, 1024, 1100 };
		uint32_t ncpus = sizes[round % (sizeof(sizes) / sizeof(sizes[0]))];
		uint32_t nshards = 1 + refmodel_rand_below(&rng, ncpus < 8 ? ncpus : 8), style = round / 9 % 3;
		__u16 *shard_of = calloc(ncpus, sizeof(*shard_of));
		struct cpupri_mask want_mask, got_mask, allowed, found;
		struct cpupri_geom g;
		struct cpupri_view v;
		void *map;

		assert_non_null(shard_of);
		for (uint32_t c = 0; c < ncpus; c++)
			shard_of[c] = (__u16)(style == 0 ? refmodel_rand_below(&rng, nshards)
					      : style == 1 ? (uint64_t)c * nshards / ncpus : c % nshards);
		assert_int_equal(cpupri_geom_compute(ncpus, nshards, shard_of, &g), 0);
		map = aligned_alloc(CPUPRI_LINE, g.size);
		assert_non_null(map);
		memset(map, 0, g.size);
		cpupri_init(map, &g, shard_of);
		assert_int_equal(cpupri_view_open(map, g.size, &v), 0);
		assert_int_equal(cpupri_mask_new(&v, &want_mask), 0);
		assert_int_equal(cpupri_mask_new(&v, &got_mask), 0);
		assert_int_equal(cpupri_mask_new(&v, &allowed), 0);
		assert_int_equal(cpupri_mask_new(&v, &found), 0);
		for (uint32_t c = 0; c < ncpus; c++)
			cpupri_set(map, &g, c, refmodel_rand_below(&rng, 4) ? refmodel_rand_below(&rng, 6)
									    : refmodel_rand_below(&rng, LEVEL_COUNT));
		maps++;
		for (unsigned q = 0; q < 20; q++) {
			struct rtplace_cpumask set, want, got;

			cpuset_zero(&set);
			for (uint32_t c = 0; c < RTPLACE_MAX_CPUS; c++)
				if (refmodel_rand_below(&rng, 8) < q % 9)
					cpuset_set(&set, c);
			refmodel_mask_from_cpuset(&v, &set, &want_mask);
			memset(got_mask.w, 0xa5, got_mask.nwords * sizeof(*got_mask.w));
			cpupri_mask_from_cpuset(&v, &set, &got_mask);
			assert_memory_equal(got_mask.w, want_mask.w, want_mask.nwords * sizeof(*want_mask.w));
			for (uint32_t w = 0; w < got_mask.nwords; w++)
				assert_true(w >= got_mask.lo && w < got_mask.hi ? true : got_mask.w[w] == 0);
			cpupri_mask_to_cpuset(&v, &got_mask, &got);
			refmodel_mask_cpus(&v, &want_mask, &want);
			assert_true(cpuset_equal(&got, &want));
			/* Every bit allowed, CPUs past RTPLACE_MAX_CPUS included: both
			 * leave out what a cpuset cannot hold. */
			if (q == 0) {
				memset(allowed.w, 0xff, allowed.nwords * sizeof(*allowed.w));
				allowed.lo = 0;
				allowed.hi = allowed.nwords;
				allowed.s0 = 0;
				allowed.s1 = v.geom.nshards - 1;
			} else {
				cpupri_mask_from_cpuset(&v, &set, &allowed);
			}
			for (uint32_t level = 0; level <= LEVEL_COUNT; level++) {
				uint32_t found_level = 0;
				int r;

				refmodel_level_cpus(&v, level, &allowed, &want);
				cpupri_level_cpus(&v, level, &allowed, &got);
				if (!cpuset_equal(&got, &want))
					fail_msg("%u CPUs in %u shards (style %u), query %u, level %u: level CPUs differ",
						 ncpus, nshards, style, q, level);
				/* Resumed at level: the first level from there with an
				 * allowed CPU, by the reference. (Not with every bit
				 * allowed: a map CPU no cpuset can name counts for
				 * cpupri_find(), not for the reference.) */
				r = cpupri_find(&v, level, LEVEL_COUNT, &allowed, &found, &found_level);
				for (uint32_t l = level > LEVEL_IDLE ? level : LEVEL_IDLE; q && l < LEVEL_COUNT; l++) {
					refmodel_level_cpus(&v, l, &allowed, &want);
					if (!cpuset_empty(&want)) {
						assert_int_equal(r, 0);
						assert_int_equal(found_level, l);
						cpupri_mask_to_cpuset(&v, &found, &got);
						assert_true(cpuset_equal(&got, &want));
						break;
					}
					if (l == LEVEL_COUNT - 1)
						assert_int_equal(r, -ENOENT);
				}
				checks++;
			}
		}
		cpupri_mask_free(&found);
		cpupri_mask_free(&allowed);
		cpupri_mask_free(&got_mask);
		cpupri_mask_free(&want_mask);
		cpupri_view_close(&v);
		free(map);
		free(shard_of);
	}
	print_message("%u maps, %u level translations compared\n", maps, checks);
}

/* A small machine for the targeted cases: 2 nodes x 2 LLCs x 2 cores x 2
 * threads, siblings k and k + 8. */
static struct topo *small_topology(void)
{
	struct topo *t;

	assert_int_equal(topo_synthetic(1, 2, 2, 2, 2, &t), 0);
	return t;
}

static void test_find_rules(void **state)
{
	struct topo *t = small_topology();
	struct refmodel_map m;
	struct cpupri_mask mask;
	struct rtplace_cpumask allowed, got;
	uint32_t level;

	assert_int_equal(refmodel_map_open(t, TOPO_SHARD_NODE, &m), 0);
	assert_int_equal(cpupri_mask_new(&m.view, &mask), 0);
	cpuset_zero(&allowed);
	for (uint32_t c = 0; c < 16; c++) {
		cpuset_set(&allowed, c);
		refmodel_map_set(&m, c, LEVEL_NORMAL);
	}
	cpupri_mask_from_cpuset(&m.view, &allowed, &mask);

	/* Strictly below: a CPU at rt50 is no answer for 50, one for 51. */
	refmodel_map_set(&m, 3, LEVEL_RT1 + 49);
	for (uint32_t c = 0; c < 16; c++)
		if (c != 3)
			refmodel_map_set(&m, c, LEVEL_DL);
	assert_int_equal(find_cpus(&m.view, level_from_rt_priority(50), &mask, &got, &level), -ENOENT);
	assert_int_equal(find_cpus(&m.view, level_from_rt_priority(51), &mask, &got, &level), 0);
	assert_int_equal(level, level_from_rt_priority(50));
	assert_int_equal(cpuset_count(&got), 1);
	assert_true(cpuset_test(&got, 3));

	/* Lowest level wins, and all of its allowed CPUs come back. */
	refmodel_map_set(&m, 9, LEVEL_NORMAL);
	refmodel_map_set(&m, 12, LEVEL_NORMAL);
	refmodel_map_set(&m, 14, LEVEL_IDLE);
	assert_int_equal(find_cpus(&m.view, LEVEL_DL, &mask, &got, &level), 0);
	assert_int_equal(level, LEVEL_IDLE);
	assert_int_equal(cpuset_count(&got), 1);
	cpuset_clear(&allowed, 14);
	cpupri_mask_from_cpuset(&m.view, &allowed, &mask);
	assert_int_equal(find_cpus(&m.view, LEVEL_DL, &mask, &got, &level), 0);
	assert_int_equal(level, LEVEL_NORMAL);
	assert_int_equal(cpuset_count(&got), 2);
	assert_true(cpuset_test(&got, 9) && cpuset_test(&got, 12));

	/* Idle is never below idle; offline CPUs are never candidates. */
	assert_int_equal(find_cpus(&m.view, LEVEL_IDLE, &mask, &got, &level), -ENOENT);
	refmodel_map_set(&m, 9, LEVEL_OFFLINE);
	refmodel_map_set(&m, 12, LEVEL_OFFLINE);
	assert_int_equal(find_cpus(&m.view, LEVEL_DL, &mask, &got, &level), 0);
	assert_int_equal(level, level_from_rt_priority(50));

	/* An empty allowed set, and ids beyond the map, find nothing. */
	cpuset_zero(&allowed);
	cpuset_set(&allowed, 16);
	cpuset_set(&allowed, RTPLACE_MAX_CPUS - 1);
	cpupri_mask_from_cpuset(&m.view, &allowed, &mask);
	assert_int_equal(find_cpus(&m.view, LEVEL_COUNT, &mask, &got, &level), -ENOENT);

	cpupri_mask_free(&mask);
	refmodel_map_close(&m);
	topo_free(t);
}

/* A level whose counts all read zero is skipped even if a bit is set there,
 * as the kernel's find_cpus() skips it: the counts are read first. Where
 * another shard's count says go, cpupri_find() reads every shard's words,
 * as the kernel does; the word-at-a-time reader skips the shard whose count
 * reads zero. */
static void test_find_skips_zero_count(void **state)
{
	struct topo *t = small_topology();
	struct refmodel_map m;
	struct cpupri_mask mask;
	struct rtplace_cpumask all, got;
	const struct cpupri_slot *slot;
	uint32_t level;

	assert_int_equal(refmodel_map_open(t, TOPO_SHARD_LLC, &m), 0);
	assert_int_equal(cpupri_mask_new(&m.view, &mask), 0);
	cpuset_zero(&all);
	for (uint32_t c = 0; c < 16; c++) {
		cpuset_set(&all, c);
		refmodel_map_set(&m, c, LEVEL_NORMAL);
	}
	cpupri_mask_from_cpuset(&m.view, &all, &mask);
	slot = cpupri_slot_ptr(m.mem, &m.geom, 5);
	*cpupri_word_ptr(m.mem, &m.geom, LEVEL_IDLE, slot->shard, slot->bit / 64) |= (__u64)1 << (slot->bit % 64);
	assert_int_equal(cpupri_count(&m.view, LEVEL_IDLE), 0);
	assert_int_equal(find_cpus(&m.view, LEVEL_DL, &mask, &got, &level), 0);
	assert_int_equal(level, LEVEL_NORMAL);
	assert_int_equal(cpuset_count(&got), 16);
	assert_false(cpupri_level_live(&m.view, LEVEL_IDLE, &mask));

	/* CPU 0 idle in another LLC shard: the stray bit shows beside it in
	 * cpupri_find()'s answer (the slot check catches it), not in the
	 * word-at-a-time reader's. */
	assert_int_not_equal(cpupri_slot_ptr(m.mem, &m.geom, 0)->shard, slot->shard);
	refmodel_map_set(&m, 0, LEVEL_IDLE);
	assert_true(cpupri_level_live(&m.view, LEVEL_IDLE, &mask));
	assert_int_equal(find_cpus(&m.view, LEVEL_DL, &mask, &got, &level), 0);
	assert_int_equal(level, LEVEL_IDLE);
	assert_int_equal(cpuset_count(&got), 2);
	assert_int_equal(walk_cpus(&m.view, LEVEL_DL, &mask, &got, &level), 0);
	assert_int_equal(level, LEVEL_IDLE);
	assert_int_equal(cpuset_count(&got), 1);
	assert_true(cpuset_test(&got, 0));

	cpupri_mask_free(&mask);
	refmodel_map_close(&m);
	topo_free(t);
}

static void test_set_edges(void **state)
{
	struct topo *t = small_topology();
	struct refmodel_map m;
	const struct cpupri_slot *slot;

	assert_int_equal(refmodel_map_open(t, TOPO_SHARD_NODE, &m), 0);
	slot = cpupri_slot_ptr(m.mem, &m.geom, 2);
	assert_int_equal(cpupri_count(&m.view, LEVEL_OFFLINE), 16);
	assert_int_equal(cpupri_set(m.mem, &m.geom, 2, LEVEL_IDLE), LEVEL_OFFLINE);
	assert_int_equal(slot->updates, 1);
	/* Same level again: no transition, nothing counted twice. */
	assert_int_equal(cpupri_set(m.mem, &m.geom, 2, LEVEL_IDLE), LEVEL_IDLE);
	assert_int_equal(slot->updates, 1);
	assert_int_equal(cpupri_count(&m.view, LEVEL_IDLE), 1);
	assert_int_equal(cpupri_count(&m.view, LEVEL_OFFLINE), 15);
	/* Out of range: refused, nothing changed. */
	assert_int_equal(cpupri_set(m.mem, &m.geom, 16, LEVEL_IDLE), LEVEL_COUNT);
	assert_int_equal(cpupri_set(m.mem, &m.geom, 2, LEVEL_COUNT), LEVEL_COUNT);
	assert_int_equal(cpupri_level(&m.view, 2), LEVEL_IDLE);
	assert_int_equal(cpupri_level(&m.view, 16), LEVEL_OFFLINE);
	assert_int_equal(cpupri_count(&m.view, LEVEL_COUNT), 0);
	assert_int_equal(cpupri_count(&m.view, LEVEL_IDLE), 1);
	refmodel_map_close(&m);
	topo_free(t);
}

/* A map of a machine nothing is known to run on: its online CPUs idle,
 * the others left offline. */
static void test_set_online_idle(void **state)
{
	struct topo *t = small_topology();
	struct cpupri_view v;
	size_t size;
	void *map;

	cpuset_clear(&t->online, 5);
	assert_int_equal(cpupri_map_new(t, TOPO_SHARD_NODE, &map, &size), 0);
	cpupri_set_online_idle(map, &((const struct cpupri_header *)map)->geom, t);
	assert_int_equal(cpupri_view_open(map, size, &v), 0);
	assert_int_equal(cpupri_count(&v, LEVEL_IDLE), (__s32)t->ncpus - 1);
	assert_int_equal(cpupri_count(&v, LEVEL_OFFLINE), 1);
	assert_int_equal(cpupri_level(&v, 5), LEVEL_OFFLINE);
	assert_int_equal(cpupri_level(&v, 4), LEVEL_IDLE);
	cpupri_view_close(&v);
	free(map);
	topo_free(t);
}

/* A copy follows the map's levels and queue lengths, twice over (levels
 * that change between copies), and keeps no pid. */
static void test_mirror(void **state)
{
	struct topo *t = small_topology();
	struct cpupri_view v, w;
	void *src, *dst;
	uint64_t rng = 42;
	size_t size;

	assert_int_equal(cpupri_map_new(t, TOPO_SHARD_NODE, &src, &size), 0);
	assert_int_equal(cpupri_map_new(t, TOPO_SHARD_NODE, &dst, &size), 0);
	const struct cpupri_geom *g = &((const struct cpupri_header *)src)->geom;
	assert_int_equal(cpupri_view_open(src, size, &v), 0);
	assert_int_equal(cpupri_view_open(dst, size, &w), 0);
	for (int round = 0; round < 2; round++) {
		for (__u32 cpu = 0; cpu < t->ncpus; cpu++) {
			struct cpupri_slot *slot = cpupri_slot_ptr(src, g, cpu);

			cpupri_set(src, g, cpu, refmodel_rand_below(&rng, LEVEL_COUNT));
			slot->pid = 1000 + cpu;
			slot->rt_queued = refmodel_rand_below(&rng, 4);
		}
		cpupri_mirror(dst, src, g);
		for (__u32 cpu = 0; cpu < t->ncpus; cpu++) {
			assert_int_equal(cpupri_level(&w, cpu), cpupri_level(&v, cpu));
			assert_int_equal(cpupri_slot_ptr(dst, g, cpu)->rt_queued, cpupri_slot_ptr(src, g, cpu)->rt_queued);
			assert_int_equal(cpupri_slot_ptr(dst, g, cpu)->pid, 0);
		}
		for (__u32 level = 0; level < LEVEL_COUNT; level++)
			assert_int_equal(cpupri_count(&w, level), cpupri_count(&v, level));
	}
	cpupri_view_close(&v);
	cpupri_view_close(&w);
	free(src);
	free(dst);
	topo_free(t);
}

/* The one constructor gives line-aligned maps, and a view refuses a map
 * that does not start on a line: its padding would not keep writers apart. */
static void test_map_new_aligned(void **state)
{
	struct topo *t = small_topology();
	struct cpupri_view v;
	size_t size;
	char *copy;
	void *map;

	for (int mode = TOPO_SHARD_NODE; mode <= TOPO_SHARD_LLC; mode++) {
		assert_int_equal(cpupri_map_new(t, (enum topo_shard)mode, &map, &size), 0);
		assert_int_equal((uintptr_t)map % CPUPRI_LINE, 0);
		assert_int_equal(size % CPUPRI_LINE, 0);
		assert_int_equal(cpupri_view_open(map, size, &v), 0);
		assert_int_equal(cpupri_count(&v, LEVEL_OFFLINE), (__s32)t->ncpus);
		cpupri_view_close(&v);

		copy = aligned_alloc(CPUPRI_LINE, size + CPUPRI_LINE);
		assert_non_null(copy);
		memcpy(copy + 8, map, size);
		assert_int_equal(cpupri_view_open(copy + 8, size, &v), -EINVAL);
		free(copy);
		free(map);
	}
	topo_free(t);
}

/* The size DESIGN §4 asks to report, for the 480-CPU shape in node shards. */
static void test_layout_480(void **state)
{
	struct topo *t;
	struct refmodel_map m;

	assert_int_equal(refmodel_shape_build(&refmodel_shapes[1], &t), 0);
	assert_int_equal(t->ncpus, 480);
	assert_int_equal(refmodel_map_open(t, TOPO_SHARD_NODE, &m), 0);
	assert_int_equal(m.geom.nshards, 2);
	assert_int_equal(m.geom.shard_words, 8);
	assert_int_equal(m.geom.size, 50560);
	assert_int_equal(m.geom.counts_off % CPUPRI_LINE, 0);
	assert_int_equal(m.geom.masks_off % CPUPRI_LINE, 0);
	refmodel_map_close(&m);
	topo_free(t);
}

/*
 * Concurrency. Each CPU has a seqcount (odd while its writer is inside
 * cpupri_set()) and the history of levels its writer gave it, history[k]
 * being the level after transition k. A reader samples the seqcounts of its
 * allowed CPUs before a query and of the CPUs it got after it; the levels a
 * CPU held during the query are history[g0 / 2 .. (g1 + 1) / 2]. Every CPU a
 * query returns must have held the returned level (which must be below the
 * limit) at some point of that window: a CPU may show at two levels while it
 * moves, never at one it did not hold then. And no allowed CPU that held
 * one level below the limit for the whole query (g0 == g1) may be missed:
 * the answer is at a lower level, or at that level with the CPU in it. That
 * is what the per-shard counts promise (cpupri_set()): a count cannot read
 * zero under a CPU that sits at its level, whatever the other CPUs of the
 * shard do meanwhile; a hint a racing writer could clear would break it.
 */
#define CONC_WRITERS 2
#define CONC_READERS 2
#define CONC_TRANSITIONS 1500 /* per CPU */
#define CONC_QUERIES 2500     /* per reader, at least; readers go on until the writers are done */
#define CONC_PACE 2           /* queries (all readers) per writer round, so the two interleave */

struct conc {
	const struct topo *t;
	struct refmodel_map *m;
	uint64_t seed;
	uint64_t gen[RTPLACE_MAX_CPUS];
	uint8_t *history; /* [ncpus][CONC_TRANSITIONS + 1] */
	unsigned long failures, checked, placed, moving, queries, held;
	unsigned writers_done;
	char first_failure[256];
	pthread_mutex_t lock;
	pthread_barrier_t start;
};

struct conc_thread {
	struct conc *c;
	unsigned id;
};

static uint8_t *conc_history(struct conc *c, uint32_t cpu)
{
	return &c->history[(size_t)cpu * (CONC_TRANSITIONS + 1)];
}

static void conc_fail(struct conc *c, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&c->lock);
	if (c->failures++ == 0) {
		va_start(ap, fmt);
		vsnprintf(c->first_failure, sizeof(c->first_failure), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&c->lock);
}

static void *conc_writer(void *arg)
{
	struct conc_thread *th = arg;
	struct conc *c = th->c;
	uint64_t rng = c->seed + 1000 + th->id;

	pthread_barrier_wait(&c->start);
	for (uint32_t k = 1; k <= CONC_TRANSITIONS; k++) {
		/* Pacing, not timing: a writer may not run ahead of the readers,
		 * whatever the scheduler does with more threads than CPUs. */
		while (__atomic_load_n(&c->queries, __ATOMIC_RELAXED) < (k - 1) * (unsigned long)CONC_PACE)
			sched_yield();
		for (uint32_t cpu = th->id; cpu < c->t->ncpus; cpu += CONC_WRITERS) {
			uint32_t dice = refmodel_rand_below(&rng, 8);
			uint32_t level = dice < 3 ? LEVEL_IDLE : dice < 5 ? LEVEL_NORMAL
				       : dice < 6 ? LEVEL_OFFLINE : refmodel_rand_below(&rng, LEVEL_COUNT);

			/* The history entry is published before the seqcount
			 * goes odd (release), so a reader that sees the
			 * count also sees the level it stands for. */
			conc_history(c, cpu)[k] = (uint8_t)level;
			__atomic_store_n(&c->gen[cpu], 2 * (uint64_t)k - 1, __ATOMIC_SEQ_CST);
			cpupri_set(c->m->mem, &c->m->geom, cpu, level);
			__atomic_store_n(&c->gen[cpu], 2 * (uint64_t)k, __ATOMIC_SEQ_CST);
		}
	}
	__atomic_fetch_add(&c->writers_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Whether cpu held level at some point between seqcounts g0 and g1. */
static bool conc_held(struct conc *c, uint32_t cpu, uint64_t g0, uint64_t g1, uint32_t level)
{
	const uint8_t *h = conc_history(c, cpu);

	for (uint64_t k = g0 / 2; k <= (g1 + 1) / 2 && k <= CONC_TRANSITIONS; k++)
		if (h[k] == level)
			return true;
	return false;
}

static void conc_check_find(struct conc *c, uint64_t *rng, struct cpupri_mask *mask, uint64_t *g0, bool walk)
{
	const struct cpupri_view *v = &c->m->view;
	uint32_t below = random_below(rng), level = 0;
	struct rtplace_cpumask allowed, got;
	int r;

	refmodel_random_set(rng, c->t, &allowed);
	cpupri_mask_from_cpuset(v, &allowed, mask);
	CPUSET_FOREACH(cpu, &allowed)
		if ((uint32_t)cpu < c->t->ncpus)
			g0[cpu] = __atomic_load_n(&c->gen[cpu], __ATOMIC_ACQUIRE);
	r = walk ? walk_cpus(v, below, mask, &got, &level) : find_cpus(v, below, mask, &got, &level);
	/* Orders the relaxed mask loads before the seqcount loads below: a
	 * bit set by transition k implies the count of k is seen, and a count
	 * or bit that transition k + 1 changed implies its odd count is. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (r < 0)
		cpuset_zero(&got);
	else if (level >= below || level == LEVEL_OFFLINE)
		conc_fail(c, "find(below %u) returned level %u", below, level);
	CPUSET_FOREACH(cpu, &got) {
		uint64_t g1;

		if (!cpuset_test(&allowed, (unsigned)cpu) || (uint32_t)cpu >= c->t->ncpus) {
			conc_fail(c, "find returned cpu %d outside the allowed set", cpu);
			continue;
		}
		g1 = __atomic_load_n(&c->gen[cpu], __ATOMIC_ACQUIRE);
		if (!conc_held(c, (uint32_t)cpu, g0[cpu], g1, level))
			conc_fail(c, "cpu %d returned at level %u, never held it in window %llu..%llu", cpu,
				  level, (unsigned long long)g0[cpu], (unsigned long long)g1);
		__atomic_fetch_add(&c->checked, 1, __ATOMIC_RELAXED);
		if (g1 != g0[cpu])
			__atomic_fetch_add(&c->moving, 1, __ATOMIC_RELAXED);
	}
	/* Liveness: a CPU that held a level below the limit throughout. */
	CPUSET_FOREACH(cpu, &allowed) {
		uint32_t held;

		if ((uint32_t)cpu >= c->t->ncpus || g0[cpu] % 2 ||
		    __atomic_load_n(&c->gen[cpu], __ATOMIC_ACQUIRE) != g0[cpu])
			continue;
		held = conc_history(c, (uint32_t)cpu)[g0[cpu] / 2];
		if (held == LEVEL_OFFLINE || held >= below)
			continue;
		__atomic_fetch_add(&c->held, 1, __ATOMIC_RELAXED);
		if (r < 0 || level > held || (level == held && !cpuset_test(&got, (unsigned)cpu)))
			conc_fail(c, "cpu %d held level %u throughout, %s(below %u) = %d level %u without it", cpu,
				  held, walk ? "walk" : "find", below, r, level);
	}
}

/* Placement reads the same map; its picks obey the same window rule. */
static void conc_check_place(struct conc *c, uint64_t *rng, uint64_t *g0, struct placement_result *res,
			     uint32_t *rotor)
{
	struct placement_config cfg = { .prefer_idle = true, .avoid_smt = PLACEMENT_SMT_RT };
	struct placement_request req = { .node = -1, .near_cpu = -1 };
	struct rtplace_cpumask cand;
	uint32_t below;
	int r;

	req.prio = 1 + (int)refmodel_rand_below(rng, 99);
	req.count = 1 + refmodel_rand_below(rng, 6);
	below = level_from_rt_priority(req.prio);
	cfg.managed = c->t->online;
	refmodel_random_set(rng, c->t, &req.allowed);
	cpuset_and(&cand, refmodel_allowed_empty(c->t, &req.allowed) ? &cfg.managed : &req.allowed, &cfg.managed);
	CPUSET_FOREACH(cpu, &cand)
		g0[cpu] = __atomic_load_n(&c->gen[cpu], __ATOMIC_ACQUIRE);
	r = placement_choose(&cfg, c->t, &c->m->view, NULL, rotor, &req, NULL, res);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (r < 0) {
		if (r != -ENOENT && r != -ENODEV)
			conc_fail(c, "placement failed: %d", r);
		return;
	}
	for (uint32_t i = 0; i < res->n; i++) {
		uint32_t cpu = res->cpus[i];
		uint64_t g1;

		if (!cpuset_test(&cand, cpu) || res->levels[i] >= below) {
			conc_fail(c, "placement returned cpu %u level %u outside the request", cpu, res->levels[i]);
			continue;
		}
		for (uint32_t j = 0; j < i; j++)
			if (res->cpus[j] == cpu)
				conc_fail(c, "placement returned cpu %u twice", cpu);
		g1 = __atomic_load_n(&c->gen[cpu], __ATOMIC_ACQUIRE);
		if (!conc_held(c, cpu, g0[cpu], g1, res->levels[i]))
			conc_fail(c, "placement: cpu %u at level %u never held it in window", cpu, res->levels[i]);
		__atomic_fetch_add(&c->placed, 1, __ATOMIC_RELAXED);
	}
}

static void *conc_reader(void *arg)
{
	struct conc_thread *th = arg;
	struct conc *c = th->c;
	uint64_t rng = c->seed + 2000 + th->id;
	uint64_t *g0 = calloc(RTPLACE_MAX_CPUS, sizeof(*g0));
	struct placement_result *res = malloc(sizeof(*res));
	struct cpupri_mask mask;
	uint32_t rotor = 0;

	if (!g0 || !res || cpupri_mask_new(&c->m->view, &mask) < 0) {
		conc_fail(c, "reader out of memory");
		free(g0);
		free(res);
		pthread_barrier_wait(&c->start);
		return NULL;
	}
	pthread_barrier_wait(&c->start);
	/* Bounded by the writers' fixed work, not by time. */
	for (unsigned q = 0; q < CONC_QUERIES || __atomic_load_n(&c->writers_done, __ATOMIC_ACQUIRE) < CONC_WRITERS;
	     q++) {
		if (q % 4 == 3)
			conc_check_place(c, &rng, g0, res, &rotor);
		else
			conc_check_find(c, &rng, &mask, g0, q % 4 == 1);
		__atomic_fetch_add(&c->queries, 1, __ATOMIC_RELAXED);
	}
	cpupri_mask_free(&mask);
	free(res);
	free(g0);
	return NULL;
}

static void conc_run(const struct topo *t, enum topo_shard mode)
{
	struct conc_thread writers[CONC_WRITERS], readers[CONC_READERS];
	pthread_t wt[CONC_WRITERS], rt[CONC_READERS];
	struct cpupri_mask all;
	struct rtplace_cpumask full;
	struct conc *c;

	c = calloc(1, sizeof(*c));
	assert_non_null(c);
	c->m = malloc(sizeof(*c->m));
	assert_non_null(c->m);
	c->t = t;
	c->seed = refmodel_seed();
	pthread_mutex_init(&c->lock, NULL);
	pthread_barrier_init(&c->start, NULL, CONC_WRITERS + CONC_READERS);
	c->history = calloc((size_t)t->ncpus * (CONC_TRANSITIONS + 1), 1);
	assert_non_null(c->history);
	assert_int_equal(refmodel_map_open(t, mode, c->m), 0);
	/* history[0]: the level every CPU starts from. */
	for (uint32_t cpu = 0; cpu < t->ncpus; cpu++) {
		conc_history(c, cpu)[0] = LEVEL_IDLE;
		refmodel_map_set(c->m, cpu, LEVEL_IDLE);
	}

	for (unsigned i = 0; i < CONC_READERS; i++) {
		readers[i] = (struct conc_thread){ c, i };
		assert_int_equal(pthread_create(&rt[i], NULL, conc_reader, &readers[i]), 0);
	}
	for (unsigned i = 0; i < CONC_WRITERS; i++) {
		writers[i] = (struct conc_thread){ c, i };
		assert_int_equal(pthread_create(&wt[i], NULL, conc_writer, &writers[i]), 0);
	}
	for (unsigned i = 0; i < CONC_WRITERS; i++)
		pthread_join(wt[i], NULL);
	for (unsigned i = 0; i < CONC_READERS; i++)
		pthread_join(rt[i], NULL);

	/* "moving": returned CPUs whose writer was active during the query,
	 * how much the run actually overlapped (not asserted: it depends on
	 * how the host schedules the threads). */
	print_message("%u cpus, shard %d: %lu returned CPUs checked (%lu moving), %lu held throughout, %lu placed, "
		      "%lu failures%s%s\n",
		      t->ncpus, mode, c->checked, c->moving, c->held, c->placed, c->failures, c->failures ? ": " : "",
		      c->first_failure);
	assert_int_equal(c->failures, 0);
	assert_true(c->checked > 0);
	assert_true(c->held > 0);

	/* Quiescent again: counts and masks exactly match the final slots. */
	for (uint32_t cpu = 0; cpu < t->ncpus; cpu++) {
		c->m->levels[cpu] = conc_history(c, cpu)[CONC_TRANSITIONS];
		assert_int_equal(__atomic_load_n(&c->gen[cpu], __ATOMIC_ACQUIRE), 2 * CONC_TRANSITIONS);
	}
	assert_int_equal(cpupri_mask_new(&c->m->view, &all), 0);
	cpuset_zero(&full);
	for (uint32_t cpu = 0; cpu < t->ncpus; cpu++)
		cpuset_set(&full, cpu);
	cpupri_mask_from_cpuset(&c->m->view, &full, &all);
	check_exact(c->m, &all);
	cpupri_mask_free(&all);

	refmodel_map_close(c->m);
	pthread_mutex_destroy(&c->lock);
	pthread_barrier_destroy(&c->start);
	free(c->history);
	free(c->m);
	free(c);
}

static void test_concurrency(void **state)
{
	struct topo *t;

	/* The 480-CPU shape in node shards and the 64-CPU, 8-LLC shape in
	 * LLC shards: both shardings, both a wide and a narrow machine. */
	assert_int_equal(refmodel_shape_build(&refmodel_shapes[1], &t), 0);
	conc_run(t, TOPO_SHARD_NODE);
	topo_free(t);
	assert_int_equal(refmodel_shape_build(&refmodel_shapes[3], &t), 0);
	conc_run(t, TOPO_SHARD_LLC);
	topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_rules),
		cmocka_unit_test(test_find_skips_zero_count),
		cmocka_unit_test(test_set_edges),
		cmocka_unit_test(test_set_online_idle),
		cmocka_unit_test(test_mirror),
		cmocka_unit_test(test_map_new_aligned),
		cmocka_unit_test(test_layout_480),
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_xlate),
		cmocka_unit_test(test_concurrency),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
