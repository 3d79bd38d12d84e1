/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The general path: every rule of placement.h, for the answers the fast
 * paths leave. The map is read level by level through cpupri_find() until
 * the answer is decided, eligible CPUs kept as one set per rank with
 * counts, then the group is chosen and the CPUs picked one at a time by
 * their keys; a pick whose slot has moved on is dropped and the choice
 * redone.
 *
 * Layer: calls the claim cache (placement-claim-cache.c), the SMT penalty of
 * placement-fast.c and the set arithmetic of placement-core.h.
 */
#include "config.h"

#include <string.h>

#include "placement-core.h"

/* The rank of a level: as ordered, idle folded into normal unless prefer_idle. */
static uint32_t placement_rank_of(const struct placement_ctx *x, uint32_t level)
{
	return level == LEVEL_IDLE && !x->cfg.prefer_idle ? LEVEL_NORMAL : level;
}

/* The level a CPU of rank r was met at (reported in the answer). */
static uint32_t placement_level_of(const struct placement_ctx *x, const struct placement_state *st, uint32_t cpu,
				   uint32_t r)
{
	return cpuset_test(&st->idle, cpu) ? LEVEL_IDLE : r;
}

/* Makes the CPUs of bits (word i of the sets) eligible at level. */
static void placement_add_word(const struct placement_ctx *x, struct placement_state *st, uint32_t i, uint64_t bits,
			       uint32_t level)
{
	uint32_t r = placement_rank_of(x, level);

	st->rank[r].bits[i] |= bits;
	st->eligible.bits[i] |= bits;
	if (level == LEVEL_IDLE)
		st->idle.bits[i] |= bits;
	st->cnt[r] += cpuset_word_count(bits);
	/* Kind-0 counts matter only when the candidates mix kinds. */
	if (st->mixed)
		st->cnt0[r] += cpuset_word_count(bits & x->kind0.bits[i]);
	st->used[r / 64] |= UINT64_C(1) << (r % 64);
}

/* Takes back a pick whose slot says it is no longer below rtP. */
static void placement_drop(const struct placement_ctx *x, struct placement_state *st, uint32_t cpu, uint32_t level)
{
	uint32_t r = placement_rank_of(x, level);

	cpuset_clear(&st->rank[r], cpu);
	cpuset_clear(&st->eligible, cpu);
	cpuset_clear(&st->idle, cpu);
	st->cnt[r]--;
	if (st->mixed && cpuset_test(&x->kind0, cpu))
		st->cnt0[r]--;
}

/* Ranks with CPUs, ascending: r = placement_rank_next(st, 0) ... until LEVEL_COUNT. */
static uint32_t placement_rank_next(const struct placement_state *st, uint32_t from)
{
	for (uint32_t w = from / 64; w < 2; w++) {
		uint64_t bits = st->used[w];

		if (w == from / 64)
			bits &= ~UINT64_C(0) << (from % 64);
		if (bits)
			return w * 64 + (uint32_t)__builtin_ctzll(bits);
	}
	return LEVEL_COUNT;
}

#define PLACEMENT_FOREACH_RANK(r, st) \
	for (uint32_t r = placement_rank_next((st), 0); r < LEVEL_COUNT; r = placement_rank_next((st), r + 1))


/* Whether some group of kset holds at least count CPUs. */
static bool placement_fits(const struct placement_ctx *x, const struct rtplace_cpumask *kset, enum placement_group which,
			   uint32_t count)
{
	uint32_t n;
	const struct rtplace_cpumask *groups = placement_groups(x, which, &n);

	for (uint32_t g = 0; g < n; g++)
		if (cpuset_count_and_n(kset, &groups[g], x->nwords) >= count)
			return true;
	return false;
}

/*
 * Reads the claims, 8 claim bytes at a time. For the candidates: a claim at
 * or above rtP bars the CPU whatever its map level (max(level, claim) >=
 * rtP); one below rtP ranks it at max(level, claim), CPU by CPU in the
 * scan. For every CPU: a claim that alone makes it busy (placement_busy())
 * gives its SMT siblings their penalty without reading its slot.
 */
static void placement_scan_claimed(const struct placement_ctx *x, struct placement_state *st)
{
	const struct rtplace_cpumask *claimed, *high;

	static const struct rtplace_cpumask none;

	cpuset_zero_n(&st->claims, x->nwords);
	cpuset_zero_n(&st->barred, x->nwords);
	st->pen_claims = &none;
	if (!st->claimed)
		return;
	claimed = placement_claim_cache_at_least(x, st, 1);
	high = placement_claim_cache_at_least(x, st, (uint8_t)st->below);
	for (uint32_t i = 0; i < x->nwords; i++) {
		st->claims.bits[i] = claimed->bits[i] & ~high->bits[i] & st->cand->bits[i];
		st->barred.bits[i] = high->bits[i] & st->cand->bits[i];
	}
	st->pen_claims = placement_claim_cache_pen(x, st);
}

/* Eligible CPUs settled at level (rank <= level), of kind 0 only if use0, into ret. */
static void placement_settled_set(const struct placement_ctx *x, const struct placement_state *st, bool use0,
				  uint32_t level, struct rtplace_cpumask *ret)
{

	cpuset_zero_n(ret, x->nwords);
	PLACEMENT_FOREACH_RANK(r, st) {
		if (r > level)
			break;
		cpuset_or_n(ret, ret, &st->rank[r], x->nwords);
	}
	if (use0)
		cpuset_and_n(ret, ret, &x->kind0, x->nwords);
}

/*
 * Whether the answer is already fixed after scanning the map up to level.
 * Every CPU whose rank is <= level has been met (a CPU's rank is never below
 * the map level it is found at), and every CPU not yet met ranks above
 * level. The selection rules only compare ranks, and always prefer lower
 * ones, so once the CPUs they would take are all settled, levels above
 * cannot change the outcome.
 */
static bool placement_decided(const struct placement_ctx *x, const struct placement_state *st, uint32_t level)
{
	const uint32_t count = st->req->count;
	uint32_t settled = 0, settled0 = 0;
	struct rtplace_cpumask s;
	int use0;

	PLACEMENT_FOREACH_RANK(r, st) {
		if (r > level)
			break;
		settled += st->cnt[r];
		settled0 += st->cnt0[r];
	}
	/* With mixed kinds, whether kind 0 alone suffices is open until
	 * count of them are settled. */
	if (st->mixed && settled0 < count)
		return false;
	use0 = st->mixed;
	if ((use0 ? settled0 : settled) < count)
		return false;
	if (count == 1)
		return true;
	placement_settled_set(x, st, use0, level, &s);
	if (placement_fits(x, &s, PLACEMENT_GROUP_LLC, count))
		return true;
	if (st->possible[use0][PLACEMENT_GROUP_LLC])
		return false;
	if (placement_fits(x, &s, PLACEMENT_GROUP_NODE, count))
		return true;
	return !st->possible[use0][PLACEMENT_GROUP_NODE];
}

/*
 * Reads the map from idle upward, as cpupri_find() does, recording the CPUs
 * below rtP, until the answer is decided. Resumable: after picks were
 * dropped it first asks whether what it has still decides the answer, then
 * reads on from the level where it stopped.
 */
static void placement_scan(const struct placement_ctx *x, struct placement_state *st)
{

	if (st->next > LEVEL_IDLE && !cpuset_empty_n(&st->eligible, x->nwords) && placement_decided(x, st, st->next - 1))
		return;
	while (st->next < st->below) {
		__u32 level;
		struct rtplace_cpumask cpus;
		uint64_t any = 0;

		if (cpupri_find(x->view, st->next, st->below, st->mask, &st->found, &level) < 0) {
			st->next = st->below;
			break;
		}
		st->next = level + 1;
		/* A CPU moving between levels can show in both; the lower
		 * sighting stands, the slot check in placement_ctx_choose()
		 * catches a stale one. */
		for (uint32_t i = 0; i < x->nwords; i++) {
			uint64_t bits = cpupri_mask_cpu_word(x->view, &st->found, i) & ~st->seen.bits[i];

			cpus.bits[i] = bits;
			st->seen.bits[i] |= bits;
			any |= bits;
			/* Unclaimed CPUs rank at the level met, all at once. */
			bits &= ~st->claims.bits[i] & ~st->barred.bits[i];
			if (bits)
				placement_add_word(x, st, i, bits, level);
		}
		if (!any)
			continue;
		for (uint32_t i = 0; i < x->nwords; i++) {
			for (uint64_t bits = cpus.bits[i] & st->claims.bits[i]; bits; bits &= bits - 1) {
				uint32_t c = i * 64 + (uint32_t)__builtin_ctzll(bits);
				uint32_t l = placement_claimed(st, c, level);

				if (l < st->below)
					placement_add_word(x, st, i, UINT64_C(1) << (c % 64), l);
			}
		}
		if (!cpuset_empty_n(&st->eligible, x->nwords) && placement_decided(x, st, level))
			return;
	}
}

/* The count lowest ranks of the CPUs in m, ascending, into vec. */
static void placement_sorted_ranks(const struct placement_ctx *x, const struct placement_state *st,
				   const struct rtplace_cpumask *m, uint8_t *vec)
{
	const uint32_t count = st->req->count;
	uint32_t i = 0;

	PLACEMENT_FOREACH_RANK(r, st) {
		uint32_t n = cpuset_count_and_n(&st->rank[r], m, x->nwords);

		for (; n > 0 && i < count; n--)
			vec[i++] = (uint8_t)r;
		if (i == count)
			break;
	}
}

/*
 * The best group of kind `which` holding count CPUs of k, into ret.
 * Returns false when no group can.
 */
static bool placement_best_group(const struct placement_ctx *x, struct placement_state *st,
				 const struct rtplace_cpumask *k, enum placement_group which,
				 struct rtplace_cpumask *ret)
{
	const uint32_t count = st->req->count;
	const int32_t near = st->req->near_cpu;
	int32_t near_group = near >= 0 ? placement_group_of(x, which, (uint32_t)near) : -1;
	uint32_t ngroups, best_rot = 0;
	const struct rtplace_cpumask *groups = placement_groups(x, which, &ngroups);
	bool best_near = false;
	int best = -1;

	for (uint32_t g = 0; g < ngroups; g++) {
		int cur = best < 0 ? 0 : 1;
		struct rtplace_cpumask m, low;
		uint32_t rot;
		int cmp = 0;
		bool is_near;

		cpuset_and_n(&m, k, &groups[g], x->nwords);
		if (!cpuset_at_least_n(&m, count, x->nwords))
			continue;
		placement_sorted_ranks(x, st, &m, st->vec[cur]);
		/* Rotation looks only at the CPUs the group would hand out
		 * (rank up to its worst pick): the scan may have stopped
		 * before it met the others. */
		cpuset_zero_n(&low, x->nwords);
		PLACEMENT_FOREACH_RANK(r, st) {
			if (r > st->vec[cur][count - 1])
				break;
			for (uint32_t i = 0; i < x->nwords; i++)
				low.bits[i] |= st->rank[r].bits[i] & m.bits[i];
		}
		rot = placement_rotdist(x, st, (uint32_t)placement_rot_first(x, st, &low));
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
			memcpy(st->vec[0], st->vec[1], count);
		}
		best = (int)g;
		best_near = is_near;
		best_rot = rot;
		cpuset_copy_n(ret, &m, x->nwords);
	}
	return best >= 0;
}

/* Whether cpu has an SMT sibling that is busy or was picked in this round. */
static bool placement_penalty(const struct placement_ctx *x, struct placement_state *st, uint32_t cpu)
{
	bool pen;

	if (x->cfg.avoid_smt == PLACEMENT_SMT_NEVER)
		return false;
	if (cpuset_test(&st->pen_known, cpu))
		return cpuset_test(&st->pen, cpu);
	pen = placement_penalty_of(x, st, cpu);
	cpuset_set(&st->pen_known, cpu);
	if (pen)
		cpuset_set(&st->pen, cpu);
	return pen;
}

/*
 * The smallest CPU of g by (rank, penalty, tier, noise, rotation
 * distance), or -1.
 * Among the lowest rank, the tiers in order, each walked in rotation order:
 * the first CPU without a penalty wins; if every one has a penalty, the
 * first of the first non-empty tier does. A walk that finds a free CPU
 * early reads only the sibling slots of the CPUs before it.
 */
static int placement_pick(const struct placement_ctx *x, struct placement_state *st, const struct rtplace_cpumask *g,
			  int32_t anchor, uint32_t *ret_rank)
{
	const struct topo *t = x->topo;
	struct rtplace_cpumask tier[2 * PLACEMENT_TIERS];
	uint32_t r = LEVEL_COUNT, ntiers = 1;

	PLACEMENT_FOREACH_RANK(rr, st) {
		if (cpuset_intersects_n(&st->rank[rr], g, x->nwords)) {
			r = rr;
			break;
		}
	}
	if (r == LEVEL_COUNT)
		return -1;
	*ret_rank = r;
	cpuset_and_n(&tier[0], &st->rank[r], g, x->nwords);
	if (anchor >= 0) {
		/* The anchor, its LLC, its node, the rest (placement.h step 5).
		 * The anchor need not be online: its LLC and node are those of
		 * the online CPUs sharing its ids, if any. */
		const struct topo_cpu *a = &t->cpus[anchor];
		const struct rtplace_cpumask *llc = a->llc >= 0 && (uint32_t)a->llc < t->nllcs ? &t->llc_cpus[a->llc] : NULL;
		const struct rtplace_cpumask *node = a->node >= 0 && (uint32_t)a->node < t->nnodes ? &t->node_cpus[a->node] : NULL;

		ntiers = PLACEMENT_TIERS;
		for (uint32_t i = 0; i < x->nwords; i++) {
			uint64_t all = tier[0].bits[i], self = (uint32_t)anchor / 64 == i ? UINT64_C(1) << (anchor % 64) : 0;
			uint64_t l = llc ? llc->bits[i] & ~self : 0, n = node ? node->bits[i] & ~self & ~l : 0;

			tier[0].bits[i] = all & self;
			tier[1].bits[i] = all & l;
			tier[2].bits[i] = all & n;
			tier[3].bits[i] = all & ~self & ~l & ~n;
		}
	}
	/* Interrupt noise orders CPUs within a tier only: each tier becomes
	 * its quiet CPUs, then its noisy ones. From the last tier down, so
	 * that no tier is overwritten before it is split. */
	if (st->noisy) {
		for (uint32_t k = ntiers; k-- > 0;) {
			for (uint32_t i = 0; i < x->nwords; i++) {
				uint64_t all = tier[k].bits[i];

				tier[2 * k + 1].bits[i] = all & x->cfg.noisy.bits[i];
				tier[2 * k].bits[i] = all & ~x->cfg.noisy.bits[i];
			}
		}
		ntiers *= 2;
	}
	/* CPUs already known to have a penalty are skipped a word at a time. */
	for (uint32_t k = 0; k < ntiers; k++) {
		struct rtplace_cpumask free;

		cpuset_andnot_n(&free, &tier[k], &st->pen, x->nwords);
		for (int c = placement_rot_first(x, st, &free); c >= 0; c = placement_rot_next(x, st, &free, c))
			if (!placement_penalty(x, st, (uint32_t)c))
				return c;
	}
	for (uint32_t k = 0; k < ntiers; k++) {
		int c = placement_rot_first(x, st, &tier[k]);

		if (c >= 0)
			return c;
	}
	return -1;
}

/* Picks up to count CPUs of the eligible set by the rules in placement.h. */
static uint32_t placement_select(const struct placement_ctx *x, struct placement_state *st, uint16_t *ret_cpus,
				 uint8_t *ret_levels)
{
	const uint32_t count = st->req->count;
	const bool smt = x->cfg.avoid_smt != PLACEMENT_SMT_NEVER;
	int32_t anchor = st->req->near_cpu;
	struct rtplace_cpumask k, g;
	uint32_t n = 0;

	cpuset_and(&k, &st->eligible, &x->kind0);
	if (!cpuset_at_least_n(&k, count, x->nwords))
		k = st->eligible;
	g = k;
	if (count > 1 && !placement_best_group(x, st, &k, PLACEMENT_GROUP_LLC, &g) &&
	    !placement_best_group(x, st, &k, PLACEMENT_GROUP_NODE, &g))
		g = k;
	st->pen = *st->pen_claims;
	st->pen_known = *st->pen_claims;
	while (n < count) {
		uint32_t r;
		int best = placement_pick(x, st, &g, anchor, &r);

		if (best < 0)
			break;
		ret_cpus[n] = (uint16_t)best;
		ret_levels[n] = (uint8_t)placement_level_of(x, st, (uint32_t)best, r);
		n++;
		cpuset_clear(&g, (unsigned)best);
		if (anchor < 0)
			anchor = best;
		/* The pick will run at rtP: its siblings are now busy. */
		for (uint32_t i = x->sib_off[best]; smt && i < x->sib_off[best + 1]; i++) {
			cpuset_set(&st->pen, x->sib[i]);
			cpuset_set(&st->pen_known, x->sib[i]);
		}
	}
	return n;
}

/*
 * Upper bounds for the scan's early stop (placement_decided()): a group
 * that cannot hold count candidates will never be the one chosen. For the
 * candidates of a request with neither allowed set nor node, from what
 * the context knows; for a count of 1 the scan never asks.
 */
static void placement_possible(const struct placement_ctx *x, struct placement_state *st)
{
	const uint32_t count = st->req->count;
	struct rtplace_cpumask cand0;

	if (st->cand == &x->base) {
		for (int k = 0; k < 2; k++)
			for (int w = PLACEMENT_GROUP_LLC; w <= PLACEMENT_GROUP_NODE; w++)
				st->possible[k][w] = x->base_widest[k][w] >= count;
		return;
	}
	if (count == 1)
		return;
	cpuset_and(&cand0, st->cand, &x->kind0);
	for (int k = 0; k < 2; k++)
		for (int w = PLACEMENT_GROUP_LLC; w <= PLACEMENT_GROUP_NODE; w++)
			st->possible[k][w] = placement_fits(x, k ? &cand0 : st->cand, (enum placement_group)w, count);
}

/*
 * The answer by every rule of placement.h: the scan, the group, the
 * picks, redone without any pick whose slot has moved on. Writes the
 * picks and their levels; returns how many (0: none below rtP).
 */
uint32_t placement_general(const struct placement_ctx *x, struct placement_state *st, uint16_t *ret_cpus,
			   uint8_t *ret_levels)
{
	uint32_t n = 0;

	placement_possible(x, st);
	/* Only the ranks the last answer used hold anything. */
	PLACEMENT_FOREACH_RANK(rr, st) {
		cpuset_zero_n(&st->rank[rr], x->nwords);
		st->cnt[rr] = st->cnt0[rr] = 0;
	}
	st->used[0] = st->used[1] = 0;
	cpuset_zero_n(&st->seen, x->nwords);
	cpuset_zero_n(&st->eligible, x->nwords);
	cpuset_zero_n(&st->idle, x->nwords);
	placement_scan_claimed(x, st);
	/* The map may carry a stale bit (see cpupri_set()): a pick whose slot
	 * now says offline or >= rtP is dropped, the scan resumed if what is
	 * left no longer decides the answer, and the choice redone. Only the
	 * picks' slots are read, not those of every CPU met. */
	for (bool dropped = true; dropped;) {
		dropped = false;
		placement_scan(x, st);
		n = placement_select(x, st, ret_cpus, ret_levels);
		for (uint32_t i = 0; i < n; i++) {
			__u32 slot = placement_slot_level(x, ret_cpus[i]);

			if (slot == LEVEL_OFFLINE || slot >= st->below) {
				placement_drop(x, st, ret_cpus[i], ret_levels[i]);
				dropped = true;
			}
		}
	}
	return n;
}
