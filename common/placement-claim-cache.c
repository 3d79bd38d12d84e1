/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The claim cache: the sets derived from the claims (the CPUs claimed at
 * or above a level, the SMT siblings those claims make busy, the cpuset
 * words they leave free), kept in the answerer's state (struct
 * placement_claim_cache, placement-core.h says why there) while the
 * caller's claims stay byte for byte its copy, so that an answer derives a set
 * once per change of the claims, not once per answer.
 *
 * Layer: calls only the set arithmetic of placement-core.h.
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "placement-core.h"

/*
 * The claims of cpuset word i (CPUs 64 i .. 64 i + 63; those at or past
 * ncpus read as unclaimed) as a word: bit j set iff the claim of CPU
 * 64 i + j is at least min. Sixteen claims per compare with SSE2, eight per
 * word of arithmetic otherwise; runs of unclaimed CPUs cost a load.
 */
static uint64_t placement_claim_bits(const uint8_t *claimed, uint32_t ncpus, uint32_t i, uint8_t min)
{
	const uint32_t have = ncpus - i * 64;
	const uint8_t *p = claimed + (size_t)i * 64;
	uint8_t tail[64];
	uint64_t out = 0;

	if (have < 64) {
		memset(tail, 0, sizeof(tail));
		memcpy(tail, p, have);
		p = tail;
	}
#ifdef __SSE2__
	for (unsigned q = 0; q < 4; q++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * q));
		/* Unsigned v >= min: max(v, min) == v. */
		__m128i ge = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8((char)min)), v);

		out |= (uint64_t)(uint32_t)_mm_movemask_epi8(ge) << (16 * q);
	}
#else
	for (unsigned q = 0; q < 8; q++) {
		uint64_t v, lo, tops;

		memcpy(&v, p + 8 * q, sizeof(v));
		v = le64toh(v);
		/* Bytes >= min without borrows between bytes: the low 7 bits
		 * with the top bit set cannot borrow; a set top bit in v is
		 * >= any min below 128. */
		lo = v & UINT64_C(0x7f7f7f7f7f7f7f7f);
		tops = ((lo | UINT64_C(0x8080808080808080)) - UINT64_C(0x0101010101010101) * min) | v;
		out |= (((tops >> 7 & UINT64_C(0x0101010101010101)) * UINT64_C(0x0102040810204080)) >> 56) << (8 * q);
	}
#endif
	return out;
}

/* placement_claim_cache_sync() under a stamp the copy was not taken under. */
bool placement_claim_cache_compare(const struct placement_ctx *x, struct placement_state *st, uint64_t stamp)
{
	const uint32_t ncpus = x->topo->ncpus;

	/* A copy that still equals the claims keeps its stamp: stamps only
	 * say what the copy equals. */
	if (!st->cache.copy_valid || memcmp(st->cache.copy, st->claimed, ncpus) != 0) {
		memcpy(st->cache.copy, st->claimed, ncpus);
		st->cache.copy_valid = true;
		st->cache.stamp = 0;
		st->cache.nsets = 0;
		st->cache.pen_valid = 0;
		st->cache.none = true;
		for (uint32_t c = 0; c < ncpus && st->cache.none; c++)
			st->cache.none = st->cache.copy[c] == 0;
	}
	if (stamp != 0)
		st->cache.stamp = stamp;
	return st->cache.none;
}

/* Derives the set for threshold min into a slot the answer does not hold;
 * returns the slot. */
uint32_t placement_claim_cache_set_new(const struct placement_ctx *x, struct placement_state *st, uint8_t min)
{
	const uint32_t ncpus = x->topo->ncpus;
	uint32_t k;

	if (st->cache.nsets < PLACEMENT_CLAIM_SETS)
		k = st->cache.nsets++;
	else
		for (k = 0; st->claim_sets_held >> k & 1; k++)
			;
	st->cache.min[k] = min;
	st->cache.pen_valid &= ~(UINT32_C(1) << k);
	/* The word summaries that read set k or its penalty go with it. */
	st->cache.free_valid[k] = 0;
	for (uint32_t a = 0; a < PLACEMENT_CLAIM_SETS; a++)
		st->cache.free_valid[a] &= ~(UINT32_C(1) << k);
	for (uint32_t i = 0; i < x->nwords; i++)
		st->cache.set[k].bits[i] = placement_claim_bits(st->cache.copy, ncpus, i, min);
	return k;
}

/* The CPUs with an SMT sibling in in, into out: the sibling relation as
 * set shifts, or sibling lists where it is irregular. */
static void placement_siblings_of(const struct placement_ctx *x, const struct rtplace_cpumask *in,
				  struct rtplace_cpumask *out)
{
	cpuset_zero_n(out, x->nwords);
	for (uint32_t k = 0; k < x->nshifts; k++) {
		struct rtplace_cpumask from;

		cpuset_and_n(&from, in, &x->shift_from[k], x->nwords);
		cpuset_or_shifted_n(out, &from, x->shift[k], x->nwords);
	}
	for (uint32_t i = 0; i < x->nwords && !x->nshifts; i++) {
		for (uint64_t bits = in->bits[i]; bits; bits &= bits - 1) {
			uint32_t c = i * 64 + (uint32_t)__builtin_ctzll(bits);

			for (uint32_t k = x->sib_off[c]; k < x->sib_off[c + 1]; k++)
				cpuset_set(out, x->sib[k]);
		}
	}
}

/*
 * The CPUs whose SMT sibling a claim alone makes busy (placement_busy()):
 * the penalty the claims give, derived with the claim set it comes from
 * and kept as long. None under avoid-smt-siblings = never.
 */
const struct rtplace_cpumask *placement_claim_cache_pen(const struct placement_ctx *x, struct placement_state *st)
{
	static const struct rtplace_cpumask none;
	const struct rtplace_cpumask *set;
	uint32_t k;

	if (x->cfg.avoid_smt == PLACEMENT_SMT_NEVER)
		return &none;
	set = placement_claim_cache_at_least(x, st, x->cfg.avoid_smt == PLACEMENT_SMT_ALWAYS ? LEVEL_IDLE + 1
										    : (uint8_t)st->below);
	k = (uint32_t)(set - st->cache.set);
	if (!(st->cache.pen_valid >> k & 1)) {
		placement_siblings_of(x, set, &st->cache.pen[k]);
		st->cache.pen_valid |= UINT32_C(1) << k;
	}
	return &st->cache.pen[k];
}

/*
 * The cpuset words (a bit each) where some candidate is neither in above
 * (a claim set) nor in pen (the claims' penalty, placement_claim_cache_pen()):
 * a fast walk passes the others without reading the map. For the
 * candidates of a request with neither allowed set nor node, kept with the
 * two sets, so the walk over a map whose free CPUs all sit beside claims
 * reads no set at all; for other candidates, worked out per answer.
 */
struct placement_wordset placement_claim_cache_free_words(const struct placement_ctx *x, struct placement_state *st,
							  const struct rtplace_cpumask *above,
							  const struct rtplace_cpumask *pen)
{
	const struct rtplace_cpumask *cand = st->cand;
	const uint32_t a = (uint32_t)(above - st->cache.set);
	/* Under avoid-smt-siblings = never, pen is no set of the cache. */
	const uint32_t p = x->cfg.avoid_smt == PLACEMENT_SMT_NEVER ? PLACEMENT_CLAIM_SETS
								     : (uint32_t)(pen - st->cache.pen);
	struct placement_wordset words = { { 0 } };

	if (cand == &x->base && (st->cache.free_valid[a] >> p & 1))
		return st->cache.free[a][p];
	for (uint32_t i = 0; i < x->nwords; i++)
		if (cand->bits[i] & ~above->bits[i] & ~pen->bits[i])
			placement_wordset_add(&words, i);
	if (cand == &x->base) {
		st->cache.free[a][p] = words;
		st->cache.free_valid[a] |= UINT32_C(1) << p;
	}
	return words;
}
