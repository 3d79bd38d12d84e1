#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "placement.h"

enum placement_group {
	PLACEMENT_GROUP_LLC,
	PLACEMENT_GROUP_NODE,
};

/* One decision's working set; on the heap, it is a few KiB. */
struct placement_state {
	const struct placement_config *cfg;
	const struct topo *topo;
	const struct cpupri_view *view;
	const uint8_t *claimed;
	const struct placement_request *req;
	__u32 below;              /* rtP: eligible levels are strictly lower */
	uint32_t start;           /* rotation origin */
	struct cpuset cand;       /* allowed ∩ managed ∩ online (∩ node) */
	struct cpuset cand0;      /* the candidates of kind 0 */
	bool mixed;               /* cand0 is neither empty nor all of cand */
	/* [use kind 0][group kind]: some group can hold count candidates */
	bool possible[2][2];
	__u32 next;               /* next level the scan reads */
	struct cpuset seen;       /* met in the level scan */
	struct cpuset eligible;   /* met below rtP, not dropped */
	uint8_t level[RTPLACE_MAX_CPUS];  /* max(map level, claim), reported */
	uint8_t rank[RTPLACE_MAX_CPUS];   /* level as ordered (idle folded unless prefer_idle) */
	uint8_t penalty[RTPLACE_MAX_CPUS];
	uint16_t group_count[RTPLACE_MAX_CPUS];
	uint8_t vec[2][PLACEMENT_MAX_COUNT]; /* best and current group's sorted ranks */
};

static const struct cpuset *placement_groups(const struct placement_state *st, enum placement_group which,
					     uint32_t *ret_n)
{
	*ret_n = which == PLACEMENT_GROUP_LLC ? st->topo->nllcs : st->topo->nnodes;
	return which == PLACEMENT_GROUP_LLC ? st->topo->llc_cpus : st->topo->node_cpus;
}

static int32_t placement_group_of(const struct placement_state *st, enum placement_group which, uint32_t cpu)
{
	return which == PLACEMENT_GROUP_LLC ? st->topo->cpus[cpu].llc : st->topo->cpus[cpu].node;
}

static uint32_t placement_rotdist(const struct placement_state *st, uint32_t cpu)
{
	return (cpu + st->topo->ncpus - st->start) % st->topo->ncpus;
}

static uint32_t placement_claimed(const struct placement_state *st, uint32_t cpu, uint32_t level)
{
	if (st->claimed && st->claimed[cpu] > level)
		return st->claimed[cpu];
	return level;
}

static void placement_candidates(struct placement_state *st)
{
	const struct placement_request *req = st->req;
	const struct cpuset *base = cpuset_empty(&req->allowed) ? &st->cfg->managed : &req->allowed;

	cpuset_and(&st->cand, base, &st->cfg->managed);
	cpuset_and(&st->cand, &st->cand, &st->topo->online);
	if (req->node >= 0)
		cpuset_and(&st->cand, &st->cand, &st->topo->node_cpus[req->node]);
	/* CPUs the map does not hold are offline as far as it can tell. */
	for (int c = cpuset_next(&st->cand, st->view->geom.ncpus); c >= 0; c = cpuset_next(&st->cand, (unsigned)c + 1))
		cpuset_clear(&st->cand, (unsigned)c);
	cpuset_zero(&st->cand0);
	CPUSET_FOREACH(c, &st->cand)
		if (st->topo->cpus[c].kind == 0)
			cpuset_set(&st->cand0, (unsigned)c);
	st->mixed = !cpuset_empty(&st->cand0) && !cpuset_equal(&st->cand0, &st->cand);

	/* Upper bounds for the scan's early stop: a group that cannot hold
	 * count candidates will never be the one chosen. */
	for (int k = 0; k < 2 && req->count > 1; k++) {
		const struct cpuset *kset = k ? &st->cand0 : &st->cand;

		for (int w = PLACEMENT_GROUP_LLC; w <= PLACEMENT_GROUP_NODE; w++) {
			uint32_t n;
			const struct cpuset *groups = placement_groups(st, (enum placement_group)w, &n);

			st->possible[k][w] = false;
			for (uint32_t g = 0; g < n && !st->possible[k][w]; g++) {
				struct cpuset m;

				cpuset_and(&m, kset, &groups[g]);
				st->possible[k][w] = cpuset_count(&m) >= req->count;
			}
		}
	}
}

/* Whether some group holds count settled CPUs of kset (settled: rank <= level). */
static bool placement_group_settled(struct placement_state *st, enum placement_group which,
				    const struct cpuset *kset, uint32_t level)
{
	uint32_t n;

	placement_groups(st, which, &n);
	for (uint32_t g = 0; g < n; g++)
		st->group_count[g] = 0;
	CPUSET_FOREACH(c, &st->eligible) {
		if (st->rank[c] > level || !cpuset_test(kset, (unsigned)c))
			continue;
		if (++st->group_count[placement_group_of(st, which, (uint32_t)c)] >= st->req->count)
			return true;
	}
	return false;
}

/*
 * Whether the answer is already fixed after scanning the map up to level.
 * Every CPU whose rank is <= level has been met (a CPU's rank is never below
 * the map level it is found at), and every CPU not yet met ranks above
 * level. The selection rules only compare ranks, and always prefer lower
 * ones, so once the CPUs they would take are all settled, levels above
 * cannot change the outcome.
 */
static bool placement_decided(struct placement_state *st, uint32_t level)
{
	const uint32_t count = st->req->count;
	uint32_t settled = 0, settled0 = 0, ksettled;
	const struct cpuset *kset;
	int use0;

	CPUSET_FOREACH(c, &st->eligible) {
		if (st->rank[c] > level)
			continue;
		settled++;
		if (cpuset_test(&st->cand0, (unsigned)c))
			settled0++;
	}
	/* With mixed kinds, whether kind 0 alone suffices is open until
	 * count of them are settled. */
	if (st->mixed && settled0 < count)
		return false;
	use0 = st->mixed;
	kset = use0 ? &st->cand0 : &st->cand;
	ksettled = use0 ? settled0 : settled;
	if (ksettled < count)
		return false;
	if (count == 1)
		return true;
	if (placement_group_settled(st, PLACEMENT_GROUP_LLC, kset, level))
		return true;
	if (st->possible[use0][PLACEMENT_GROUP_LLC])
		return false;
	if (placement_group_settled(st, PLACEMENT_GROUP_NODE, kset, level))
		return true;
	return !st->possible[use0][PLACEMENT_GROUP_NODE];
}

/*
 * Reads the map from idle upward, as cpupri_find() does, recording the CPUs
 * below rtP, until the answer is decided. Resumable: after picks were
 * dropped it first asks whether what it has still decides the answer, then
 * reads on from the level where it stopped.
 */
static void placement_scan(struct placement_state *st, const struct cpupri_mask *m)
{
	if (st->next > LEVEL_IDLE && !cpuset_empty(&st->eligible) && placement_decided(st, st->next - 1))
		return;
	while (st->next < st->below) {
		__u32 level = st->next++;
		struct cpuset cpus;

		/* Acquire load of the count, then the mask: see cpupri_find(). */
		if (cpupri_count(st->view, level) <= 0)
			continue;
		cpupri_level_cpus(st->view, level, m, &cpus);
		/* A CPU moving between levels can show in both; the lower
		 * sighting stands, the slot check in placement_choose() catches
		 * a stale one. */
		cpuset_andnot(&cpus, &cpus, &st->seen);
		if (cpuset_empty(&cpus))
			continue;
		cpuset_or(&st->seen, &st->seen, &cpus);
		CPUSET_FOREACH(c, &cpus) {
			uint32_t l = placement_claimed(st, (uint32_t)c, level);

			if (l >= st->below)
				continue;
			st->level[c] = (uint8_t)l;
			st->rank[c] = (uint8_t)(l == LEVEL_IDLE && !st->cfg->prefer_idle ? LEVEL_NORMAL : l);
			cpuset_set(&st->eligible, (unsigned)c);
		}
		if (!cpuset_empty(&st->eligible) && placement_decided(st, level))
			return;
	}
}

/* The count lowest ranks of the CPUs in m, ascending, into vec. */
static void placement_sorted_ranks(const struct placement_state *st, const struct cpuset *m, uint8_t *vec)
{
	uint16_t hist[LEVEL_COUNT] = { 0 };
	uint32_t i = 0;

	CPUSET_FOREACH(c, m)
		hist[st->rank[c]]++;
	for (uint32_t l = 0; l < LEVEL_COUNT && i < st->req->count; l++)
		for (uint16_t k = 0; k < hist[l] && i < st->req->count; k++)
			vec[i++] = (uint8_t)l;
}

/*
 * The best group of kind `which` holding count CPUs of k, into ret.
 * Returns false when no group can.
 */
static bool placement_best_group(struct placement_state *st, const struct cpuset *k, enum placement_group which,
				 struct cpuset *ret)
{
	const uint32_t count = st->req->count;
	const int32_t near = st->req->near_cpu;
	int32_t near_group = near >= 0 ? placement_group_of(st, which, (uint32_t)near) : -1;
	uint32_t ngroups, best_rot = 0;
	const struct cpuset *groups = placement_groups(st, which, &ngroups);
	bool best_near = false;
	int best = -1;

	for (uint32_t g = 0; g < ngroups; g++) {
		int cur = best < 0 ? 0 : 1;
		struct cpuset m;
		uint32_t rot;
		int cmp = 0;
		bool is_near;

		cpuset_and(&m, k, &groups[g]);
		if (cpuset_count(&m) < count)
			continue;
		placement_sorted_ranks(st, &m, st->vec[cur]);
		/* Rotation looks only at the CPUs the group would hand out
		 * (rank up to its worst pick): the scan may have stopped
		 * before it met the others. */
		rot = UINT32_MAX;
		CPUSET_FOREACH(c, &m)
			if (st->rank[c] <= st->vec[cur][count - 1] && placement_rotdist(st, (uint32_t)c) < rot)
				rot = placement_rotdist(st, (uint32_t)c);
		is_near = near_group >= 0 && (uint32_t)near_group == g;
		if (best >= 0) {
			/* Worst level first: a group is as good as the slowest
			 * CPU it would hand out. */
			for (uint32_t i = count; i-- > 0 && cmp == 0;)
				if (st->vec[1][i] != st->vec[0][i])
					cmp = st->vec[1][i] < st->vec[0][i] ? -1 : 1;
			if (cmp == 0 && is_near != best_near)
				cmp = is_near ? -1 : 1;
			if (cmp == 0)
				cmp = rot < best_rot ? -1 : 1;
			if (cmp > 0)
				continue;
			for (uint32_t i = 0; i < count; i++)
				st->vec[0][i] = st->vec[1][i];
		}
		best = (int)g;
		best_near = is_near;
		best_rot = rot;
		*ret = m;
	}
	return best >= 0;
}

static bool placement_busy(const struct placement_state *st, uint32_t cpu)
{
	uint32_t l = placement_claimed(st, cpu, cpupri_level(st->view, cpu));

	if (st->cfg->avoid_smt == PLACEMENT_SMT_ALWAYS)
		return l > LEVEL_IDLE;
	return l >= st->below;
}

static uint32_t placement_tier(const struct placement_state *st, int32_t anchor, uint32_t cpu)
{
	const struct topo_cpu *a, *c = &st->topo->cpus[cpu];

	if (anchor < 0 || (uint32_t)anchor == cpu)
		return 0;
	a = &st->topo->cpus[anchor];
	if (a->llc >= 0 && a->llc == c->llc)
		return 1;
	if (a->node >= 0 && a->node == c->node)
		return 2;
	return 3;
}

/* Picks up to count CPUs of the eligible set by the rules in placement.h. */
static uint32_t placement_select(struct placement_state *st, uint16_t *ret_cpus)
{
	const uint32_t count = st->req->count;
	const bool smt = st->cfg->avoid_smt != PLACEMENT_SMT_NEVER;
	int32_t anchor = st->req->near_cpu;
	struct cpuset k, g;
	uint32_t n = 0;

	cpuset_and(&k, &st->eligible, &st->cand0);
	if (cpuset_count(&k) < count)
		k = st->eligible;
	g = k;
	if (count > 1 && !placement_best_group(st, &k, PLACEMENT_GROUP_LLC, &g) &&
	    !placement_best_group(st, &k, PLACEMENT_GROUP_NODE, &g))
		g = k;

	CPUSET_FOREACH(c, &g) {
		struct cpuset sib;

		st->penalty[c] = 0;
		if (!smt)
			continue;
		topo_siblings(st->topo, (uint32_t)c, &sib);
		CPUSET_FOREACH(s, &sib)
			if (s != c && placement_busy(st, (uint32_t)s))
				st->penalty[c] = 1;
	}
	while (n < count) {
		uint32_t best_key = UINT32_MAX;
		int best = -1;

		CPUSET_FOREACH(c, &g) {
			uint32_t key = (uint32_t)st->rank[c] << 19 | (uint32_t)st->penalty[c] << 18 |
				       placement_tier(st, anchor, (uint32_t)c) << 16 |
				       placement_rotdist(st, (uint32_t)c);

			if (key < best_key) {
				best_key = key;
				best = c;
			}
		}
		if (best < 0)
			break;
		ret_cpus[n++] = (uint16_t)best;
		cpuset_clear(&g, (unsigned)best);
		if (anchor < 0)
			anchor = best;
		if (smt) {
			/* The pick will run at rtP: its siblings are now busy. */
			struct cpuset sib;

			topo_siblings(st->topo, (uint32_t)best, &sib);
			CPUSET_FOREACH(s, &sib)
				st->penalty[s] = 1;
		}
	}
	return n;
}

static int placement_check(const struct topo *t, const struct placement_request *req, const char **ret_reason)
{
	if (req->prio < LEVEL_RT_PRIO_MIN || req->prio > LEVEL_RT_PRIO_MAX)
		*ret_reason = PLACEMENT_REASON_BAD_PRIO;
	else if (req->count < 1 || req->count > PLACEMENT_MAX_COUNT)
		*ret_reason = PLACEMENT_REASON_BAD_COUNT;
	else if (req->node < -1 || (req->node >= 0 && (uint32_t)req->node >= t->nnodes))
		*ret_reason = PLACEMENT_REASON_BAD_NODE;
	else if (req->near_cpu < -1 || (req->near_cpu >= 0 && (uint32_t)req->near_cpu >= t->ncpus))
		*ret_reason = PLACEMENT_REASON_BAD_NEAR;
	else
		return 0;
	return -EINVAL;
}

int placement_choose(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
		     const uint8_t *claimed_level, uint32_t *rotor, const struct placement_request *req,
		     struct placement_result *ret)
{
	struct cpupri_mask m = { 0 };
	struct placement_state *st = NULL;
	uint32_t n = 0;
	int r;

	ret->n = 0;
	ret->level = LEVEL_OFFLINE;
	r = placement_check(t, req, &ret->reason);
	if (r < 0)
		goto out;
	st = malloc(sizeof(*st));
	if (st)
		r = cpupri_mask_new(v, &m);
	if (!st || r < 0) {
		r = -ENOMEM;
		ret->reason = PLACEMENT_REASON_NO_MEMORY;
		goto out;
	}
	st->cfg = cfg;
	st->topo = t;
	st->view = v;
	st->claimed = claimed_level;
	st->req = req;
	st->below = level_from_rt_priority(req->prio);
	st->start = rotor ? *rotor % t->ncpus : 0;
	st->next = LEVEL_IDLE;
	cpuset_zero(&st->seen);
	cpuset_zero(&st->eligible);
	placement_candidates(st);
	if (cpuset_empty(&st->cand)) {
		r = -ENODEV;
		ret->reason = PLACEMENT_REASON_NO_CANDIDATE;
		goto out;
	}
	cpupri_mask_from_cpuset(v, &st->cand, &m);
	/* The map may carry a stale bit (see cpupri_set()): a pick whose slot
	 * now says offline or >= rtP is dropped, the scan resumed if what is
	 * left no longer decides the answer, and the choice redone. Only the
	 * picks' slots are read, not those of every CPU met. */
	for (bool dropped = true; dropped;) {
		dropped = false;
		placement_scan(st, &m);
		n = placement_select(st, ret->cpus);
		for (uint32_t i = 0; i < n; i++) {
			__u32 slot = cpupri_level(v, ret->cpus[i]);

			if (slot == LEVEL_OFFLINE || slot >= st->below) {
				cpuset_clear(&st->eligible, ret->cpus[i]);
				dropped = true;
			}
		}
	}
	if (n == 0) {
		r = -ENOENT;
		ret->reason = PLACEMENT_REASON_NONE_BELOW;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		ret->levels[i] = st->level[ret->cpus[i]];
	ret->n = n;
	ret->level = ret->levels[0];
	ret->reason = n < req->count ? PLACEMENT_REASON_PARTIAL : PLACEMENT_REASON_OK;
	if (rotor)
		*rotor = (ret->cpus[n - 1] + 1u) % t->ncpus;
out:
	if (m.w)
		cpupri_mask_free(&m);
	free(st);
	return r;
}
