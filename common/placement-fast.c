/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fast paths. Under the default rules (prefer-idle, no near CPU,
 * candidates of one kind) the common answers need none of the general
 * path's machinery: one CPU is the first free CPU of the lowest level in
 * rotation order (placement_fast_one()), and count CPUs that one LLC holds
 * at the lowest level are that LLC's first free ones
 * (placement_fast_many()); with interrupt noise among the candidates, both
 * take the quiet CPUs first, and placement_fast_many() leaves an LLC
 * without count quiet free CPUs to the general path. Both walk the map a
 * cpuset word at a time from the rotation origin (placement_fast_level()), reading each word
 * straight from the map words it gathers from, skipping shards whose count
 * says they hold no CPU at the level, and stop where their picks are made;
 * only the picks become CPU ids. Anything else, and any pick whose slot
 * has moved on, goes to the general path, which reads whole levels through
 * cpupri_find() and gives the same answer on the same map
 * (tests/unit/test-placement.c checks both against the reference model).
 * A count-1 query on an idle map reads the idle level's count line, one
 * line of mask words, the claims (compared with the state's copy, see
 * placement_claim_cache_sync(); not at all under a stamp already seen, see
 * placement_ctx_choose_stamped()), one sibling slot and the pick's slot,
 * however many nodes the machine has. Where claims leave no candidate of a
 * cpuset word free, the walk learns it from a word summary kept with the
 * claim sets (placement_claim_cache_free_words()), not from the sets.
 *
 * Layer: calls the claim cache (placement-claim-cache.c) and the set arithmetic
 * of placement-core.h, never the general path.
 */
#include "config.h"

#include <string.h>

#include "placement-core.h"

/* The cpuset word at step k (0..nwords) of a walk in rotation order: the
 * origin's word, the ones after it, wrapping, and the origin's again. */
static uint32_t placement_fast_word(const struct placement_ctx *x, const struct placement_state *st, uint32_t k)
{
	const uint32_t nw = x->nwords, from = st->start / 64;

	return from + k < nw ? from + k : from + k - nw;
}

/*
 * The first step at or after k (0..nwords) of a walk in rotation order
 * whose cpuset word is in words, or nwords + 1. Steps
 * 0..nwords - from - 1 are words from..nwords - 1, the next ones words
 * 0..from - 1, and step nwords the origin's word again.
 */
static uint32_t placement_fast_next_listed(const struct placement_ctx *x, const struct placement_state *st,
					   const struct placement_wordset *words, uint32_t k)
{
	const uint32_t nw = x->nwords, from = st->start / 64;
	uint64_t any = 0;

	/* Claims that leave no candidate free, a common case: no word. */
	for (uint32_t j = 0; j < PLACEMENT_WORDSET_LEN; j++)
		any |= words->b[j];
	if (!any)
		return nw + 1;
	if (k < nw - from) {
		uint32_t i = placement_wordset_next(words, from + k, nw);

		if (i < nw)
			return i - from;
		k = nw - from;
	}
	if (k < nw) {
		uint32_t i = placement_wordset_next(words, k - (nw - from), from);

		if (i < from)
			return i + nw - from;
		k = nw;
	}
	if (k == nw && placement_wordset_next(words, from, from + 1) == from)
		return nw;
	return nw + 1;
}

/* placement_fast_next_listed(), inline for a walk without a word list. */
static inline uint32_t placement_fast_next_step(const struct placement_ctx *x, const struct placement_state *st,
						const struct placement_wordset *words, uint32_t k)
{
	if (!words)
		return k <= x->nwords ? k : x->nwords + 1;
	return placement_fast_next_listed(x, st, words, k);
}

/* The CPUs of a level (words, counts: the level's) among the candidates at
 * step k of a walk in rotation order, with *ret_i their cpuset word: the
 * origin's word is met twice, its bits from the origin on first, the ones
 * before the origin last. */
static inline __attribute__((always_inline)) uint64_t placement_fast_step(const struct placement_ctx *x,
									   const struct placement_state *st,
									   const __u64 *words, const __s32 *counts,
									   uint32_t k, uint32_t *ret_i)
{
	const uint32_t nw = x->nwords, sh = st->start % 64;
	const uint32_t i = placement_fast_word(x, st, k);
	uint64_t bits = placement_level_word(x, st, words, counts, i);

	if (k == 0)
		bits &= ~UINT64_C(0) << sh;
	else if (k == nw)
		bits &= ~(~UINT64_C(0) << sh);
	*ret_i = i;
	return bits;
}

/* Where placement_fast_level() stopped: the step of the level's first
 * candidate word, and that word as placement_fast_step() read it. */
struct placement_fast_at {
	uint32_t k;
	uint64_t bits;
};

/*
 * The lowest level below rtP with a candidate: levels from idle up, each
 * only if its count line says a candidate shard has CPUs there
 * (cpupri_level_live()), walked one cpuset word at a time from the rotation
 * origin (placement_fast_step()) until a candidate is met; a level is
 * passed only after a whole walk met none. Returns the level with *ret_at
 * its first candidate's word, or LEVEL_COUNT when there is none.
 */
static uint32_t placement_fast_level(const struct placement_ctx *x, const struct placement_state *st,
				     struct placement_fast_at *ret_at)
{
	const struct cpupri_mask *mask = st->mask;
	uint32_t i;

	for (uint32_t level = LEVEL_IDLE; level < st->below; level++) {
		const __u64 *words = placement_level_words(x, level);
		const __s32 *counts = placement_level_counts(x, level);

		if (mask->lo >= mask->hi || !cpupri_counts_live(counts, mask->s0, mask->s1))
			continue;
		for (uint32_t k = 0; k <= x->nwords; k++) {
			uint64_t bits = placement_fast_step(x, st, words, counts, k, &i);

			if (bits) {
				*ret_at = (struct placement_fast_at){ .k = k, .bits = bits };
				return level;
			}
		}
	}
	return LEVEL_COUNT;
}

/* placement_fast_step() at step k of the level placement_fast_level()
 * chose, the word it stopped at not read twice: a walk starts there. */
static inline uint64_t placement_fast_read(const struct placement_ctx *x, const struct placement_state *st,
					   const __u64 *words, const __s32 *counts,
					   const struct placement_fast_at *at, uint32_t k, uint32_t *ret_i)
{
	if (k == at->k) {
		*ret_i = placement_fast_word(x, st, k);
		return at->bits;
	}
	return placement_fast_step(x, st, words, counts, k, ret_i);
}

/*
 * The answer for one CPU under the default rules (prefer-idle, no near CPU,
 * candidates of one kind), without the general machinery: the lowest level
 * with a candidate holds the lowest rank, and the pick is the first of its
 * CPUs in rotation order without an SMT penalty, else the first.
 *
 * The level: placement_fast_level(), each word of the walk read straight
 * from the map words it gathers from in shards whose count is positive
 * (cpupri_level_cpu_word()). The pick: from that word on, the
 * walk goes on where some candidate is neither claimed above the level
 * (at or above rtP: barred; else ranked elsewhere) nor has a sibling that
 * a claim makes busy (both sets derived once per change of the claims, so
 * words the claims rule out are not read), and reads the sibling slots of
 * the CPUs it meets; if every CPU has a penalty, the first unclaimed one
 * is the pick. On an idle map this reads the idle level's count line, one
 * line of mask words, one sibling slot, a claim line or two and the pick's
 * slot, however many nodes the machine has.
 *
 * Returns the CPU with *ret_level, or -1 when the general path must
 * decide: no level below rtP holds a candidate, none of the first level's
 * CPUs ranks there, or the pick's slot has moved on (a stale bit, see
 * cpupri_set()).
 */
int placement_fast_one(const struct placement_ctx *x, struct placement_state *st, uint32_t *ret_level)
{
	const uint32_t nw = x->nwords;
	const struct rtplace_cpumask *above = NULL, *pen = NULL;
	const __u64 *words;
	const __s32 *counts;
	struct placement_fast_at at;
	uint32_t level, i;
	struct placement_wordset free_words;
	const struct placement_wordset *steps = NULL;
	int pick = -1;
	__u32 slot;

	level = placement_fast_level(x, st, &at);
	if (level == LEVEL_COUNT)
		return -1;
	words = placement_level_words(x, level);
	counts = placement_level_counts(x, level);
	if (st->claimed) {
		above = placement_claim_cache_at_least(x, st, (uint8_t)(level + 1));
		pen = placement_claim_cache_pen(x, st);
		free_words = placement_claim_cache_free_words(x, st, above, pen);
		steps = &free_words;
	}
	/* Words with no candidate free of the claims are passed unread. With
	 * noise among the candidates, the quiet CPUs are walked first, then
	 * the noisy ones: key order (penalty, noise, rotation). */
	for (int pass = 0; pass < (st->noisy ? 2 : 1) && pick < 0; pass++) {
		for (uint32_t k = placement_fast_next_step(x, st, steps, at.k); k <= nw && pick < 0;
		     k = placement_fast_next_step(x, st, steps, k + 1)) {
			uint64_t bits = placement_fast_read(x, st, words, counts, &at, k, &i);

			if (above)
				bits &= ~above->bits[i] & ~pen->bits[i];
			if (st->noisy)
				bits &= pass ? x->cfg.noisy.bits[i] : ~x->cfg.noisy.bits[i];
			for (; bits && pick < 0; bits &= bits - 1) {
				uint32_t c = i * 64 + (uint32_t)__builtin_ctzll(bits);

				if (!placement_penalty_of(x, st, c))
					pick = (int)c;
			}
		}
	}
	for (int pass = 0; pass < (st->noisy ? 2 : 1) && pick < 0; pass++) {
		for (uint32_t k = at.k; k <= nw && pick < 0; k++) {
			uint64_t bits = placement_fast_read(x, st, words, counts, &at, k, &i) &
					(above ? ~above->bits[i] : ~UINT64_C(0));

			if (st->noisy)
				bits &= pass ? x->cfg.noisy.bits[i] : ~x->cfg.noisy.bits[i];
			if (bits)
				pick = (int)(i * 64 + (uint32_t)__builtin_ctzll(bits));
		}
	}
	if (pick < 0)
		return -1;
	slot = placement_slot_level(x, (uint32_t)pick);
	if (slot == LEVEL_OFFLINE || slot >= st->below)
		return -1;
	*ret_level = level;
	return pick;
}

/* A new mark for this answer's picks in st->picked: the marks of earlier
 * answers are other numbers, so nothing is cleared per answer (only when
 * the count wraps). */
static inline uint32_t placement_fast_mark(const struct placement_ctx *x, struct placement_state *st)
{
	if (++st->picked_mark == 0) {
		memset(st->picked, 0, x->topo->ncpus * sizeof(*st->picked));
		st->picked_mark = 1;
	}
	return st->picked_mark;
}

/*
 * The answer for count > 1 CPUs under the same default rules as
 * placement_fast_one(), when the answer lies in one LLC at the lowest
 * level: let L be the lowest level with a candidate (placement_fast_level())
 * and c the first CPU in rotation order ranked at L; if c's LLC holds count
 * CPUs ranked at L (only the cpuset words the LLC spans are read),
 * that LLC is the group the general rules choose (no group has a better
 * worst level, and its rotation distance is the smallest), and the picks
 * are its rank-L CPUs, each the first in rotation order without an SMT
 * penalty (siblings of earlier picks included), else the first: after the
 * first pick, the anchor's LLC is the whole group, one locality tier.
 * Penalties are known a word at a time where claims decide them (as in
 * placement_fast_one()) and computed once per CPU otherwise, and the picks
 * share one walk in rotation order, which reads the LLC's words only as
 * far as it goes when count CPUs without a penalty are found (and, where
 * claims leave a word no CPU free of them, not that word: the word
 * summary of placement_fast_one()), and a second one when none is (every
 * pick is then the next CPU in rotation order).
 * Writes the picks into ret_cpus and returns count with *ret_level = L, or
 * returns 0 when the general path must decide (c's LLC is too small, or a
 * pick's slot has moved on).
 * One function of some 160 lines on purpose: the walk's state (its
 * position, the LLC's words, the penalty and claim sets, the picks so far)
 * lives in locals across both passes of the hot path; split, a dozen of
 * them would travel by pointer on every answer.
 */
uint32_t placement_fast_many(const struct placement_ctx *x, struct placement_state *st, uint16_t *ret_cpus,
			     uint32_t *ret_level)
{
	const struct topo *t = x->topo;
	const uint32_t count = st->req->count;
	const bool smt = x->cfg.avoid_smt != PLACEMENT_SMT_NEVER;
	const struct rtplace_cpumask *above = NULL, *pen = NULL;
	const __u64 *words;
	const __s32 *counts;
	struct rtplace_cpumask *low = &st->low_buf, free;
	struct placement_wordset free_words;
	const struct placement_wordset *steps = NULL;
	struct placement_fast_at at;
	uint32_t level, wi, n = 0;
	int32_t llc;
	int c = -1, last = -1, low_last = -1;
	const uint32_t *const sib_off = x->sib_off;
	const uint16_t *const sib = x->sib;
	uint32_t *const picked = st->picked;
	/* picked[cpu] == mark: cpu is a pick of this answer. */
	const uint32_t mark = placement_fast_mark(x, st);
	/* What placement_busy() compares a sibling's level with. */
	const uint32_t busy_from = x->cfg.avoid_smt == PLACEMENT_SMT_ALWAYS ? LEVEL_IDLE + 1 : st->below;

	level = placement_fast_level(x, st, &at);
	if (level == LEVEL_COUNT)
		return 0;
	words = placement_level_words(x, level);
	counts = placement_level_counts(x, level);
	if (st->claimed) {
		above = placement_claim_cache_at_least(x, st, (uint8_t)(level + 1));
		pen = placement_claim_cache_pen(x, st);
	}
	for (uint32_t k = at.k; k <= x->nwords && c < 0; k++) {
		uint64_t bits = placement_fast_read(x, st, words, counts, &at, k, &wi) &
				(above ? ~above->bits[wi] : ~UINT64_C(0));

		if (bits)
			c = (int)(wi * 64 + (uint32_t)__builtin_ctzll(bits));
	}
	if (c < 0)
		return 0;
	llc = t->cpus[c].llc;
	if (llc < 0 || (uint32_t)llc >= x->nllcs)
		return 0;
	/* Most answers are the LLC's first count CPUs in rotation order
	 * without a penalty: the walk goes on from c's word through the
	 * LLC's words, reading each as it gets there (words where the claims
	 * leave every CPU a penalty unread), and stops at the count-th (then
	 * the LLC holds count CPUs at L). Only a walk that runs out reads
	 * the LLC's words again for the rules below. The claims' word
	 * summary is cut to the LLC's words: the rest hold none of the
	 * picks. */
	if (above) {
		free_words = placement_claim_cache_free_words(x, st, above, pen);
		for (uint32_t j = 0; j < PLACEMENT_WORDSET_LEN; j++)
			free_words.b[j] &= x->llc_words[llc].b[j];
		steps = &free_words;
	}
	for (uint32_t k = placement_fast_next_step(x, st, steps, at.k); k <= x->nwords && n < count;
	     k = placement_fast_next_step(x, st, steps, k + 1)) {
		uint64_t bits, want;

		wi = placement_fast_word(x, st, k);
		want = t->llc_cpus[llc].bits[wi] & (above ? ~above->bits[wi] & ~pen->bits[wi] : ~UINT64_C(0));
		/* With noise, this walk takes quiet CPUs only: count of them
		 * without a penalty are what the picks, quiet first, are. */
		if (st->noisy)
			want &= ~x->cfg.noisy.bits[wi];
		if (!want)
			continue;
		bits = placement_fast_read(x, st, words, counts, &at, k, &wi) & want;
		for (; bits && n < count; bits &= bits - 1) {
			const uint32_t cpu = wi * 64 + (uint32_t)__builtin_ctzll(bits);
			const uint32_t s0 = sib_off[cpu], s1 = sib_off[cpu + 1];
			bool busy = false;
			uint32_t slot;

			c = (int)cpu;
			/* Its penalty: a sibling busy by its slot, or picked
			 * earlier in this answer (it will run at rtP). The
			 * claims' share of the penalty is out of want already
			 * (pen). */
			for (uint32_t i = s0; smt && i < s1 && !busy; i++)
				busy = picked[sib[i]] == mark || placement_slot_level(x, sib[i]) >= busy_from;
			if (busy)
				continue;
			/* A pick whose slot has moved on: the general path decides. */
			slot = placement_slot_level(x, (uint32_t)c);
			if (slot == LEVEL_OFFLINE || slot >= st->below)
				return 0;
			ret_cpus[n++] = (uint16_t)c;
			picked[cpu] = mark;
		}
	}
	if (n == count)
		goto found;
	/* Fewer quiet CPUs without a penalty: the general path orders the
	 * rest. */
	if (st->noisy)
		return 0;
	/* Every CPU there has a penalty: the picks are the first count in
	 * rotation order, as the rules below would take them one by one. A
	 * second walk, on this rarer path only, finds them (the rules below
	 * write ret_cpus over if it runs out first). */
	if (n == 0) {
		for (uint32_t k = at.k; k <= x->nwords && n < count; k++) {
			uint64_t bits;

			wi = placement_fast_word(x, st, k);
			bits = t->llc_cpus[llc].bits[wi] & (above ? ~above->bits[wi] : ~UINT64_C(0));
			if (bits)
				bits &= placement_fast_read(x, st, words, counts, &at, k, &wi);
			for (; bits && n < count; bits &= bits - 1)
				ret_cpus[n++] = (uint16_t)(wi * 64 + (uint32_t)__builtin_ctzll(bits));
		}
		if (n == count)
			goto check;
	}
	/* The level's CPUs in that LLC: only the words it spans are read. */
	cpuset_zero_n(low, x->nwords);
	for (wi = placement_wordset_next(&x->llc_words[llc], 0, x->nwords); wi < x->nwords;
	     wi = placement_wordset_next(&x->llc_words[llc], wi + 1, x->nwords))
		low->bits[wi] = placement_level_word(x, st, words, counts, wi) & t->llc_cpus[llc].bits[wi] &
			    (above ? ~above->bits[wi] : ~UINT64_C(0));
	if (!cpuset_at_least_n(low, count, x->nwords))
		return 0;
	for (uint32_t i = 0; i < x->nwords; i++)
		free.bits[i] = low->bits[i] & (pen ? ~pen->bits[i] : ~UINT64_C(0));
	for (n = 0; n < count; n++) {
		int pick = -1;

		/* Penalties only grow within an answer, so the CPUs before the
		 * last pick in rotation order, picked or found penalised, stay
		 * out: each pick's walk goes on where the last one stopped. */
		c = last < 0 ? placement_rot_first(x, st, &free) : placement_rot_next(x, st, &free, last);
		while (c >= 0 && pick < 0) {
			if (!smt || !placement_penalty_of(x, st, (uint32_t)c)) {
				pick = c;
				break;
			}
			cpuset_clear(&free, (unsigned)c);
			c = placement_rot_next(x, st, &free, c);
		}
		/* Else the first left in rotation order: the CPUs of low
		 * before the last such pick were all picked already. */
		if (pick >= 0)
			last = pick;
		else
			pick = low_last = low_last < 0 ? placement_rot_first(x, st, low)
							: placement_rot_next(x, st, low, low_last);
		ret_cpus[n] = (uint16_t)pick;
		cpuset_clear(low, (unsigned)pick);
		cpuset_clear(&free, (unsigned)pick);
		/* The pick will run at rtP: its siblings are now busy. */
		for (uint32_t i = x->sib_off[pick]; smt && i < x->sib_off[pick + 1]; i++)
			cpuset_clear(&free, x->sib[i]);
	}
check:
	for (n = 0; n < count; n++) {
		__u32 slot = placement_slot_level(x, ret_cpus[n]);

		if (slot == LEVEL_OFFLINE || slot >= st->below)
			return 0;
	}
found:
	*ret_level = level;
	return count;
}
