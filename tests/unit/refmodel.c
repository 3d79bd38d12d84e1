/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levels.h"
#include "refmodel.h"
#include "testlib.h"

int refmodel_find(const uint8_t *levels, uint32_t ncpus, uint32_t below, const struct rtplace_cpumask *allowed,
		  struct rtplace_cpumask *ret_cpus, uint32_t *ret_level)
{
	for (uint32_t level = LEVEL_IDLE; level < below && level < LEVEL_COUNT; level++) {
		struct rtplace_cpumask s;

		cpuset_zero(&s);
		for (uint32_t c = 0; c < ncpus; c++)
			if (levels[c] == level && cpuset_test(allowed, c))
				cpuset_set(&s, c);
		if (!cpuset_empty(&s)) {
			*ret_cpus = s;
			*ret_level = level;
			return 0;
		}
	}
	return -ENOENT;
}

/* Where cpu's bit lives in a mask: word and bit, from its slot. */
static void refmodel_bit_of(const struct cpupri_view *v, uint32_t cpu, uint32_t *ret_word, uint64_t *ret_bit)
{
	const struct cpupri_slot *slot = cpupri_slot_ptr((void *)v->map, &v->geom, cpu);

	*ret_word = slot->shard * v->geom.shard_words + slot->bit / 64;
	*ret_bit = UINT64_C(1) << (slot->bit % 64);
}

void refmodel_mask_from_cpuset(const struct cpupri_view *v, const struct rtplace_cpumask *set, struct cpupri_mask *m)
{
	memset(m->w, 0, m->nwords * sizeof(*m->w));
	m->lo = 0;
	m->hi = m->nwords;
	for (uint32_t c = 0; c < v->geom.ncpus && c < RTPLACE_MAX_CPUS; c++) {
		uint32_t w;
		uint64_t bit;

		refmodel_bit_of(v, c, &w, &bit);
		if (cpuset_test(set, c))
			m->w[w] |= bit;
	}
}

void refmodel_mask_cpus(const struct cpupri_view *v, const struct cpupri_mask *m, struct rtplace_cpumask *ret)
{
	cpuset_zero(ret);
	for (uint32_t c = 0; c < v->geom.ncpus && c < RTPLACE_MAX_CPUS; c++) {
		uint32_t w;
		uint64_t bit;

		refmodel_bit_of(v, c, &w, &bit);
		if (w >= m->lo && w < m->hi && (m->w[w] & bit))
			cpuset_set(ret, c);
	}
}

void refmodel_level_cpus(const struct cpupri_view *v, uint32_t level, const struct cpupri_mask *allowed,
			 struct rtplace_cpumask *ret)
{
	cpuset_zero(ret);
	for (uint32_t c = 0; level < LEVEL_COUNT && c < v->geom.ncpus && c < RTPLACE_MAX_CPUS; c++) {
		const struct cpupri_slot *slot = cpupri_slot_ptr((void *)v->map, &v->geom, c);
		const __u64 *word = cpupri_word_ptr((void *)v->map, &v->geom, level, slot->shard, slot->bit / 64);
		uint32_t w;
		uint64_t bit;

		refmodel_bit_of(v, c, &w, &bit);
		if (w >= allowed->lo && w < allowed->hi && (allowed->w[w] & bit) &&
		    (__atomic_load_n(word, __ATOMIC_RELAXED) & bit))
			cpuset_set(ret, c);
	}
}

struct refmodel_cpu {
	bool cand, eligible, in_k, in_g, chosen;
	uint32_t level, rank;
};

struct refmodel {
	const struct placement_config *cfg;
	const struct topo *t;
	const uint8_t *levels;
	const uint8_t *claimed;
	const struct placement_request *req;
	uint32_t below, start;
	struct refmodel_cpu cpu[RTPLACE_MAX_CPUS];
	/* SMT siblings as lists threaded by core id: core_head[core] is a CPU
	 * of that core, core_next[cpu] the next one, -1 ending the list. */
	int32_t core_head[RTPLACE_MAX_CPUS];
	int32_t core_next[RTPLACE_MAX_CPUS];
	uint32_t ranks[RTPLACE_MAX_CPUS], best_ranks[RTPLACE_MAX_CPUS];
};

static uint32_t refmodel_level(const struct refmodel *m, uint32_t c)
{
	uint32_t l = m->levels[c];

	if (m->claimed && m->claimed[c] > l)
		l = m->claimed[c];
	return l;
}

static uint32_t refmodel_rotdist(const struct refmodel *m, uint32_t c)
{
	return c >= m->start ? c - m->start : c + m->t->ncpus - m->start;
}

static int refmodel_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int32_t refmodel_group(const struct refmodel *m, bool llc, uint32_t c)
{
	return llc ? m->t->cpus[c].llc : m->t->cpus[c].node;
}

/* Restricts in_g to the best group (LLC or node) holding count CPUs of in_k. */
static bool refmodel_best_group(struct refmodel *m, bool llc)
{
	uint32_t *ranks = m->ranks, *best_ranks = m->best_ranks;
	const uint32_t count = m->req->count;
	int32_t best = -1, maxid = -1, near_group = -1;
	uint32_t best_rot = 0;
	bool best_near = false;

	for (uint32_t c = 0; c < m->t->ncpus; c++)
		if (refmodel_group(m, llc, c) > maxid)
			maxid = refmodel_group(m, llc, c);
	if (m->req->near_cpu >= 0)
		near_group = refmodel_group(m, llc, (uint32_t)m->req->near_cpu);
	for (int32_t g = 0; g <= maxid; g++) {
		uint32_t n = 0, rot = UINT32_MAX;
		int cmp = 0;

		for (uint32_t c = 0; c < m->t->ncpus; c++)
			if (m->cpu[c].in_k && refmodel_group(m, llc, c) == g)
				ranks[n++] = m->cpu[c].rank;
		if (n < count)
			continue;
		qsort(ranks, n, sizeof(ranks[0]), refmodel_cmp_u32);
		for (uint32_t c = 0; c < m->t->ncpus; c++)
			if (m->cpu[c].in_k && refmodel_group(m, llc, c) == g && m->cpu[c].rank <= ranks[count - 1] &&
			    refmodel_rotdist(m, c) < rot)
				rot = refmodel_rotdist(m, c);
		if (best >= 0) {
			for (uint32_t i = count; i-- > 0 && cmp == 0;)
				cmp = refmodel_cmp_u32(&ranks[i], &best_ranks[i]);
			if (cmp == 0)
				cmp = (g == near_group) == best_near ? 0 : g == near_group ? -1 : 1;
			if (cmp == 0)
				cmp = rot < best_rot ? -1 : 1;
		}
		if (best < 0 || cmp < 0) {
			best = g;
			best_rot = rot;
			best_near = g == near_group;
			for (uint32_t i = 0; i < count; i++)
				best_ranks[i] = ranks[i];
		}
	}
	if (best < 0)
		return false;
	for (uint32_t c = 0; c < m->t->ncpus; c++)
		m->cpu[c].in_g = m->cpu[c].in_k && refmodel_group(m, llc, c) == best;
	return true;
}

static bool refmodel_penalty(const struct refmodel *m, uint32_t c)
{
	const struct topo *t = m->t;

	if (m->cfg->avoid_smt == PLACEMENT_SMT_NEVER)
		return false;
	for (int32_t d = m->core_head[t->cpus[c].core]; d >= 0; d = m->core_next[d]) {
		bool busy;

		if ((uint32_t)d == c)
			continue;
		if (m->cfg->avoid_smt == PLACEMENT_SMT_ALWAYS)
			busy = refmodel_level(m, d) > LEVEL_IDLE;
		else
			busy = refmodel_level(m, d) >= m->below;
		if (busy || m->cpu[d].chosen)
			return true;
	}
	return false;
}

static uint32_t refmodel_tier(const struct refmodel *m, int32_t anchor, uint32_t c)
{
	const struct topo_cpu *a, *x = &m->t->cpus[c];

	if (anchor < 0 || (uint32_t)anchor == c)
		return 0;
	a = &m->t->cpus[anchor];
	if (a->llc >= 0 && a->llc == x->llc)
		return 1;
	if (a->node >= 0 && a->node == x->node)
		return 2;
	return 3;
}

/* The words placement writes (placement.h), as placement would. */
static void refmodel_say(struct rtplace_reason *reason, const char *text)
{
	snprintf(reason->text, sizeof(reason->text), "%s", text);
}

static int refmodel_run(struct refmodel *m, uint32_t *rotor, struct rtplace_reason *reason, struct placement_result *ret)
{
	const struct placement_request *req = m->req;
	const struct topo *t = m->t;
	uint32_t ncand = 0, nkind0 = 0, n = 0;
	bool allowed_empty;
	int32_t anchor = req->near_cpu;

	if (req->prio < 1 || req->prio > 99) {
		refmodel_say(reason, PLACEMENT_REASON_BAD_PRIO);
		return -EINVAL;
	}
	if (req->count < 1 || req->count > PLACEMENT_MAX_COUNT) {
		refmodel_say(reason, PLACEMENT_REASON_BAD_COUNT);
		return -EINVAL;
	}
	if (req->node < -1 || (req->node >= 0 && (uint32_t)req->node >= t->nnodes)) {
		refmodel_say(reason, PLACEMENT_REASON_BAD_NODE);
		return -EINVAL;
	}
	if (req->near_cpu < -1 || (req->near_cpu >= 0 && (uint32_t)req->near_cpu >= t->ncpus)) {
		refmodel_say(reason, PLACEMENT_REASON_BAD_NEAR);
		return -EINVAL;
	}
	m->below = LEVEL_RT1 + (uint32_t)req->prio - 1;
	m->start = rotor ? *rotor % t->ncpus : 0;
	allowed_empty = refmodel_allowed_empty(t, &req->allowed);
	for (uint32_t c = 0; c < t->ncpus; c++)
		m->core_head[c] = -1;
	for (uint32_t c = 0; c < t->ncpus; c++) {
		struct refmodel_cpu *x = &m->cpu[c];

		*x = (struct refmodel_cpu){ 0 };
		if (t->cpus[c].online) {
			m->core_next[c] = m->core_head[t->cpus[c].core];
			m->core_head[t->cpus[c].core] = (int32_t)c;
		}
		x->cand = t->cpus[c].online && cpuset_test(&m->cfg->managed, c) &&
			  (allowed_empty || cpuset_test(&req->allowed, c)) &&
			  (req->node < 0 || t->cpus[c].node == req->node);
		if (!x->cand)
			continue;
		/* A candidate the map shows offline is gone (hotplug). */
		ncand += m->levels[c] != LEVEL_OFFLINE;
		x->level = refmodel_level(m, c);
		x->rank = x->level == LEVEL_IDLE && !m->cfg->prefer_idle ? LEVEL_NORMAL : x->level;
		x->eligible = m->levels[c] != LEVEL_OFFLINE && x->level < m->below;
		if (x->eligible && t->cpus[c].kind == 0)
			nkind0++;
	}
	if (ncand == 0) {
		refmodel_say(reason, PLACEMENT_REASON_NO_CANDIDATE);
		return -ENODEV;
	}
	for (uint32_t c = 0; c < t->ncpus; c++) {
		struct refmodel_cpu *x = &m->cpu[c];

		x->in_k = x->eligible && (nkind0 < req->count || t->cpus[c].kind == 0);
		x->in_g = x->in_k;
	}
	if (req->count > 1 && !refmodel_best_group(m, true))
		refmodel_best_group(m, false);
	while (n < req->count) {
		int32_t best = -1;
		uint32_t bk[5] = { 0 };

		for (uint32_t c = 0; c < t->ncpus; c++) {
			uint32_t k[5];
			int cmp = 0;

			if (!m->cpu[c].in_g || m->cpu[c].chosen)
				continue;
			k[0] = m->cpu[c].rank;
			k[1] = refmodel_penalty(m, c);
			k[2] = refmodel_tier(m, anchor, c);
			k[3] = cpuset_test(&m->cfg->noisy, c);
			k[4] = refmodel_rotdist(m, c);
			for (int i = 0; i < 5 && cmp == 0; i++)
				cmp = refmodel_cmp_u32(&k[i], &bk[i]);
			if (best < 0 || cmp < 0) {
				best = (int32_t)c;
				for (int i = 0; i < 5; i++)
					bk[i] = k[i];
			}
		}
		if (best < 0)
			break;
		m->cpu[best].chosen = true;
		ret->cpus[n] = (uint16_t)best;
		ret->levels[n] = (uint8_t)m->cpu[best].level;
		n++;
		if (anchor < 0)
			anchor = best;
	}
	if (n == 0) {
		refmodel_say(reason, PLACEMENT_REASON_NONE_BELOW);
		return -ENOENT;
	}
	ret->n = n;
	ret->level = ret->levels[0];
	refmodel_say(reason, n < req->count ? PLACEMENT_REASON_PARTIAL : "");
	if (rotor)
		*rotor = (ret->cpus[n - 1] + 1u) % t->ncpus;
	return 0;
}

int refmodel_place(const struct placement_config *cfg, const struct topo *t, const uint8_t *levels,
		   const uint8_t *claimed_level, uint32_t *rotor, const struct placement_request *req,
		   struct rtplace_reason *reason, struct placement_result *ret)
{
	struct refmodel *m = malloc(sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	*m = (struct refmodel){ .cfg = cfg, .t = t, .levels = levels, .claimed = claimed_level, .req = req };
	ret->n = 0;
	ret->level = LEVEL_OFFLINE;
	r = refmodel_run(m, rotor, reason, ret);
	free(m);
	return r;
}

const struct refmodel_shape refmodel_shapes[] = {
	{ "1s-8c-16t", 1, 1, 1, 8, 2, false },
	{ "2s-240c-480t", 2, 1, 1, 120, 2, false },
	{ "2s-snc2-192c-384t", 2, 2, 1, 48, 2, false },
	{ "4n-64c-nosmt", 2, 2, 2, 8, 1, false },
	{ "epyc-2s-16ccx-256t", 2, 1, 8, 8, 2, true },
	{ NULL, 0, 0, 0, 0, 0, false },
};

int refmodel_shape_build(const struct refmodel_shape *s, struct topo **ret)
{
	uint32_t ncores = s->packages * s->nodes_per_package * s->llcs_per_node * s->cores_per_llc;
	struct topo *t;
	int r;

	r = topo_new(ncores * s->threads_per_core, &t);
	if (r < 0)
		return r;
	for (uint32_t core = 0; core < ncores; core++) {
		uint32_t llc = core / s->cores_per_llc, node = llc / s->llcs_per_node;

		for (uint32_t th = 0; th < s->threads_per_core; th++) {
			uint32_t cpu = s->adjacent ? core * s->threads_per_core + th : core + th * ncores;

			t->cpus[cpu] = (struct topo_cpu){
				.node = (int32_t)node,
				.package = (int32_t)(node / s->nodes_per_package),
				.llc = (int32_t)llc,
				.core = (int32_t)core,
				.kind = 0,
				.online = true,
			};
		}
	}
	r = topo_finish(t);
	if (r < 0) {
		topo_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

int refmodel_map_open(const struct topo *t, enum topo_shard mode, struct refmodel_map *ret)
{
	int r;

	r = cpupri_map_open(t, mode, &ret->mem, &ret->view);
	if (r < 0)
		return r;
	ret->geom = ret->view.geom;
	memset(ret->levels, LEVEL_OFFLINE, sizeof(ret->levels));
	return 0;
}

void refmodel_map_close(struct refmodel_map *m)
{
	cpupri_view_close(&m->view);
	free(m->mem);
	m->mem = NULL;
}

uint32_t refmodel_map_set(struct refmodel_map *m, uint32_t cpu, uint32_t level)
{
	uint32_t old = cpupri_set(m->mem, &m->geom, cpu, level);

	if (old < LEVEL_COUNT)
		m->levels[cpu] = (uint8_t)level;
	return old;
}

void refmodel_map_skew_hints(struct refmodel_map *m, int32_t delta)
{
	for (uint32_t level = 0; level < LEVEL_COUNT; level++)
		for (uint32_t shard = 0; shard < m->geom.nshards; shard++)
			*cpupri_count_ptr(m->mem, &m->geom, level, shard) += delta;
}

int32_t refmodel_map_shard_count(const struct refmodel_map *m, uint32_t level, uint32_t shard)
{
	return *cpupri_count_ptr(m->mem, &m->geom, level, shard);
}

int32_t refmodel_mirror_shard_count(const struct refmodel_map *m, uint32_t level, uint32_t shard)
{
	int32_t n = 0;

	for (uint32_t c = 0; c < m->geom.ncpus; c++)
		n += m->levels[c] == level && cpupri_slot_ptr(m->mem, &m->geom, c)->shard == shard;
	return n;
}

unsigned refmodel_each_topology(void (*fn)(const char *label, struct topo *t, void *arg), void *arg)
{
	unsigned n = 0;

	for (const struct refmodel_shape *s = refmodel_shapes; s->name; s++) {
		char label[64];
		struct topo *t;

		if (refmodel_shape_build(s, &t) < 0)
			continue;
		snprintf(label, sizeof(label), "%s (synthetic)", s->name);
		fn(label, t, arg);
		topo_free(t);
		n++;
	}
	for (const char *const *name = test_topology_names; *name; name++) {
		char path[4096], label[64];
		struct rtplace_reason reason;
		struct topo *t;

		if (!test_topology_path(*name, path, sizeof(path)) || topo_load(path, &reason, &t) < 0)
			continue;
		snprintf(label, sizeof(label), "%s (xml)", *name);
		fn(label, t, arg);
		topo_free(t);
		n++;
	}
	return n;
}

uint64_t refmodel_seed(void)
{
	const char *env = getenv("RTPLACE_TEST_SEED");

	return env && *env ? strtoull(env, NULL, 0) | 1 : UINT64_C(0x9e3779b97f4a7c15);
}

uint64_t refmodel_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

uint32_t refmodel_rand_below(uint64_t *state, uint32_t n)
{
	return n ? (uint32_t)((refmodel_rand(state) >> 11) % n) : 0;
}

void refmodel_random_levels(uint64_t *state, uint32_t ncpus, uint8_t *ret)
{
	uint32_t profile = refmodel_rand_below(state, 4);
	uint8_t palette[4];
	uint32_t npalette = 1 + refmodel_rand_below(state, 4);

	for (uint32_t i = 0; i < npalette; i++) {
		static const uint8_t fixed[] = { LEVEL_IDLE, LEVEL_NORMAL, LEVEL_DL, LEVEL_RT99 };
		uint32_t pick = refmodel_rand_below(state, 6);

		palette[i] = pick < 4 ? fixed[pick] : (uint8_t)(LEVEL_RT1 + refmodel_rand_below(state, 99));
	}
	for (uint32_t c = 0; c < ncpus; c++) {
		uint32_t dice = refmodel_rand_below(state, 100);
		uint32_t any = refmodel_rand_below(state, LEVEL_COUNT);

		switch (profile) {
		case 0:
			ret[c] = (uint8_t)any;
			break;
		case 1:
			ret[c] = dice < 5 ? (uint8_t)any : palette[refmodel_rand_below(state, npalette)];
			break;
		case 2:
			ret[c] = dice < 10 ? (uint8_t)any : dice < 50 ? LEVEL_RT99 : dice < 60 ? LEVEL_DL : palette[0];
			break;
		default:
			ret[c] = dice < 70 ? LEVEL_IDLE : dice < 90 ? LEVEL_NORMAL : (uint8_t)any;
			break;
		}
	}
}

bool refmodel_allowed_empty(const struct topo *t, const struct rtplace_cpumask *allowed)
{
	for (uint32_t c = 0; c < t->ncpus; c++)
		if (cpuset_test(allowed, c))
			return false;
	return true;
}

void refmodel_random_set(uint64_t *state, const struct topo *t, struct rtplace_cpumask *ret)
{
	static const uint32_t per64[] = { 1, 8, 32, 56 };
	uint32_t a, b;

	cpuset_zero(ret);
	switch (refmodel_rand_below(state, 9)) {
	case 0:
		break;
	case 1:
		for (uint32_t c = 0; c < t->ncpus; c++)
			cpuset_set(ret, c);
		break;
	case 2:
		if (t->nnodes)
			*ret = t->node_cpus[refmodel_rand_below(state, t->nnodes)];
		break;
	case 3:
		if (t->nllcs)
			*ret = t->llc_cpus[refmodel_rand_below(state, t->nllcs)];
		break;
	case 4:
		if (t->nllcs > 1) {
			a = refmodel_rand_below(state, t->nllcs);
			b = refmodel_rand_below(state, t->nllcs);
			cpuset_or(ret, &t->llc_cpus[a], &t->llc_cpus[b]);
		}
		break;
	case 5:
		cpuset_set(ret, refmodel_rand_below(state, t->ncpus));
		break;
	case 6:
		a = refmodel_rand_below(state, t->ncpus);
		b = a + 1 + refmodel_rand_below(state, t->ncpus - a);
		for (uint32_t c = a; c < b; c++)
			cpuset_set(ret, c);
		break;
	default: {
		uint32_t p = per64[refmodel_rand_below(state, 4)];

		for (uint32_t c = 0; c < t->ncpus; c++)
			if (refmodel_rand_below(state, 64) < p)
				cpuset_set(ret, c);
		if (refmodel_rand_below(state, 2))
			for (uint32_t c = t->ncpus; c < RTPLACE_MAX_CPUS; c += 1 + refmodel_rand_below(state, 97))
				cpuset_set(ret, c);
		break;
	}
	}
}
