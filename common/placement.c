/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/*
 * Cost. What depends only on the configuration, the topology and the map's
 * geometry lives in the context, built once: the candidate set of a request
 * with no allowed set (and of each node) with its map mask, the largest
 * group each kind can fill, SMT sibling lists, the bit <-> CPU translation.
 * An answer then works on sets, a word at a time, never CPU by CPU:
 *
 *  - eligible CPUs are kept as one set per rank with counts, so the scan's
 *    "is the answer decided" test adds counts and the group comparisons
 *    count bits per rank;
 *  - claims are read 8 bytes at a time and sorted into sets: CPUs a claim
 *    bars, CPUs ranked by their claim (one by one, the only per-CPU work of
 *    the scan), and the SMT siblings of CPUs a claim makes busy, found by
 *    shifting sets (see placement_ctx.shift);
 *  - a pick takes the lowest rank, splits it into the four locality tiers
 *    and walks each in rotation order (set bits from the cursor on, then
 *    from 0), skipping CPUs known to have an SMT penalty, computing it for
 *    the others it meets only, and stops at the first without one: key
 *    order (rank, penalty, tier, rotation) makes that CPU the smallest key.
 *
 * Fast paths. Under the default rules (prefer-idle, no near CPU, candidates
 * of one kind) the common answers need none of that: one CPU is the first
 * free CPU of the lowest level in rotation order (placement_fast_one()), and
 * count CPUs that one LLC holds at the lowest level are that LLC's first
 * free ones (placement_fast_many()); with interrupt noise among the
 * candidates, both take the quiet CPUs first, and placement_fast_many()
 * leaves an LLC without count quiet free CPUs to the general path. Both
 * walk the map a cpuset word at a
 * time from the rotation origin (placement_fast_level()), reading each word
 * straight from the map words it gathers from, skipping shards whose count
 * says they hold no CPU at the level, and stop where their picks are made;
 * only the picks become CPU ids. Anything else, and any pick whose slot
 * has moved on, goes to the general path, which reads whole levels through
 * cpupri_find() and gives the same answer on the same map
 * (tests/unit/test-placement.c checks both against the reference model).
 * A count-1 query on an idle map reads the idle level's count line, one
 * line of mask words, the claims (compared with the context's copy, see
 * placement_claims_sync(); not at all under a stamp already seen, see
 * placement_ctx_choose_stamped()), one sibling slot and the pick's slot,
 * however many nodes the machine has. Where claims leave no candidate of a
 * cpuset word free, the walk learns it from a word summary kept with the
 * claim sets (placement_claim_free_words()), not from the sets.
 *
 * Every set holds only CPUs below topo->ncpus, so the word loops stop at
 * nwords.
 */

enum placement_group {
	PLACEMENT_GROUP_LLC,
	PLACEMENT_GROUP_NODE,
};

/* The four locality tiers of a pick relative to its anchor (placement.h, step 5). */
#define PLACEMENT_TIERS 4
/* Claim thresholds whose sets the context keeps; an answer asks for at most 3. */
#define PLACEMENT_CLAIM_SETS 4
_Static_assert(PLACEMENT_CLAIM_SETS > 3, "a set an answer does not hold is always there to replace");
/* Most CPUs a count > 1 fast answer collects in its first walk for the
 * case where every candidate has an SMT penalty (placement_fast_many()). */
#define PLACEMENT_FAST_FIRST 16
/* Sibling offsets worth shifting sets by; 4-way SMT numbered 4k..4k+3 needs 6. */
#define PLACEMENT_MAX_SHIFTS 8

/* One answer's working set. */
struct placement_state {
	const struct placement_request *req;
	const uint8_t *claimed;
	__u32 below;                /* rtP: eligible levels are strictly lower */
	uint32_t start;             /* rotation origin */
	const struct rtplace_cpumask *cand;  /* allowed ∩ managed ∩ online ∩ in the map (∩ node) */
	const struct cpupri_mask *mask; /* cand in the map's bits */
	bool mixed;                 /* cand's kind-0 CPUs are neither none nor all */
	/* [use kind 0][group kind]: some group can hold count candidates */
	bool possible[2][2];
	__u32 next;                 /* next level the scan reads */
	struct rtplace_cpumask seen;         /* met in the level scan */
	struct rtplace_cpumask eligible;     /* met below rtP, not dropped: the union of rank[] */
	struct rtplace_cpumask claims;       /* candidates claimed below rtP: ranked one by one */
	struct rtplace_cpumask barred;       /* candidates claimed at rtP or above: never eligible */
	const struct rtplace_cpumask *pen_claims; /* CPUs with an SMT sibling that its claim alone makes busy */
	struct rtplace_cpumask idle;         /* eligible CPUs whose level is idle (folded into normal unless prefer_idle) */
	struct rtplace_cpumask pen, pen_known; /* SMT penalty, for the CPUs it was computed for */
	bool noisy;                 /* cand holds CPUs of cfg.noisy: picks split each tier by noise */
	uint64_t used[2];           /* ranks that rank[] may hold CPUs at */
	uint32_t cnt[LEVEL_COUNT];  /* eligible CPUs per rank */
	uint32_t cnt0[LEVEL_COUNT]; /* those of kind 0 */
	struct rtplace_cpumask rank[LEVEL_COUNT];
	uint8_t vec[2][PLACEMENT_MAX_COUNT]; /* best and current group's sorted ranks */
	struct rtplace_cpumask cand_buf;
	struct rtplace_cpumask low_buf;      /* placement_fast_many()'s CPUs of the level in the LLC */
	struct cpupri_mask mask_buf;
	struct cpupri_mask found;   /* the level cpupri_find() last answered, in the map's bits */
	uint32_t claim_sets_held;   /* the context's claim sets this answer holds, a bit each */
};

_Static_assert(LEVEL_COUNT <= 128, "ranks fit placement_state.used");
/* A set of cpuset words, a bit each: which words a walk must read. */
#define PLACEMENT_WORDSET_LEN ((CPUSET_WORDS + 63) / 64)
struct placement_wordset {
	uint64_t b[PLACEMENT_WORDSET_LEN];
};

static inline void placement_wordset_add(struct placement_wordset *ws, uint32_t i)
{
	ws->b[i / 64] |= UINT64_C(1) << (i % 64);
}

/* The first word of ws in from..below - 1, or below. */
static inline uint32_t placement_wordset_next(const struct placement_wordset *ws, uint32_t from, uint32_t below)
{
	for (uint32_t j = from / 64; j * 64 < below; j++) {
		uint64_t b = ws->b[j] & (j == from / 64 ? ~UINT64_C(0) << (from % 64) : ~UINT64_C(0));

		if (b) {
			uint32_t i = j * 64 + (uint32_t)__builtin_ctzll(b);

			return i < below ? i : below;
		}
	}
	return below;
}

struct placement_ctx {
	const struct topo *topo;
	const struct cpupri_view *view;
	uint32_t nwords;            /* cpuset words holding CPUs below topo->ncpus */
	uint64_t last_word;         /* the bits of word nwords - 1 below topo->ncpus */
	bool isolated_none;         /* cfg.isolated is empty: no isolation rule applies */
	bool noisy_none;            /* cfg.noisy is empty: no CPU is last for its noise */
	struct rtplace_cpumask kind0;        /* online CPUs of kind 0 */
	struct rtplace_cpumask base;         /* managed ∩ online ∩ in the map */
	struct cpupri_mask base_mask;
	struct cpupri_mask *node_mask; /* [nnodes]: base ∩ that node, in the map's bits */
	uint32_t nnodes;            /* node_mask's length: the topology may change before the free */
	struct placement_wordset *llc_words; /* [nllcs]: the cpuset words that hold CPUs of that LLC */
	uint32_t nllcs;             /* llc_words' length */
	bool base_mixed;
	uint32_t base_widest[2][2]; /* [kind 0 only][group kind]: most base CPUs in one group */
	uint32_t *sib_off;          /* [ncpus + 1]: cpu's SMT siblings are sib[sib_off[cpu] .. sib_off[cpu + 1]) */
	uint16_t *sib;              /* the siblings, the CPU itself left out */
	/* The sibling relation as shifts: CPU c in shift_from[k] has sibling
	 * c + shift[k]. Machines number siblings N and N + ncores, or 2k and
	 * 2k + 1: two shifts, so the siblings of a set are a few word shifts
	 * away. nshifts is 0 when more than PLACEMENT_MAX_SHIFTS would do. */
	uint32_t nshifts;
	int32_t shift[PLACEMENT_MAX_SHIFTS];
	struct rtplace_cpumask shift_from[PLACEMENT_MAX_SHIFTS];
	/* Sets derived from the claims, kept while the caller's claims stay
	 * byte for byte what claim_copy holds (compared once per answer, a
	 * few lines, where deriving a set reads and compares every claim):
	 * claim_set[k] holds the CPUs whose claim is at least claim_min[k]. */
	uint8_t *claim_copy;        /* [topo->ncpus] */
	bool claim_copy_valid;
	uint64_t claim_stamp;       /* the stamp claim_copy equals the claims of (placement_claims), 0: none */
	bool claims_none;           /* claim_copy is all zero */
	uint32_t nclaim_sets;
	uint8_t claim_min[PLACEMENT_CLAIM_SETS];
	struct rtplace_cpumask claim_set[PLACEMENT_CLAIM_SETS];
	/* claim_pen[k]: the CPUs with an SMT sibling in claim_set[k], valid
	 * where bit k of claim_pen_valid is set. */
	uint32_t claim_pen_valid;
	struct rtplace_cpumask claim_pen[PLACEMENT_CLAIM_SETS];
	/* claim_free[a][p]: the cpuset words (a bit each) where a CPU of base
	 * is neither in claim_set[a] nor in claim_pen[p] (p ==
	 * PLACEMENT_CLAIM_SETS: no penalty), valid where bit p of
	 * claim_free_valid[a] is set: the only words a fast walk over the
	 * claims must read (placement_claim_free_words()). */
	uint32_t claim_free_valid[PLACEMENT_CLAIM_SETS];
	struct placement_wordset claim_free[PLACEMENT_CLAIM_SETS][PLACEMENT_CLAIM_SETS + 1];
	struct placement_state st;
	/* Last: its sets are read by the rules that need them only. */
	struct placement_config cfg;
};

/* The hardware instruction where the build allows it; otherwise inline
 * arithmetic rather than libgcc's out-of-line table lookup. */
static inline uint32_t placement_popcount(uint64_t w)
{
#ifdef __POPCNT__
	return (uint32_t)__builtin_popcountll(w);
#else
	w -= (w >> 1) & UINT64_C(0x5555555555555555);
	w = (w & UINT64_C(0x3333333333333333)) + ((w >> 2) & UINT64_C(0x3333333333333333));
	w = (w + (w >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (uint32_t)((w * UINT64_C(0x0101010101010101)) >> 56);
#endif
}

static uint32_t placement_popcount_and(const struct placement_ctx *x, const struct rtplace_cpumask *a, const struct rtplace_cpumask *b)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < x->nwords; i++)
		n += placement_popcount(a->bits[i] & b->bits[i]);
	return n;
}

static bool placement_intersects(const struct placement_ctx *x, const struct rtplace_cpumask *a, const struct rtplace_cpumask *b)
{
	for (uint32_t i = 0; i < x->nwords; i++)
		if (a->bits[i] & b->bits[i])
			return true;
	return false;
}

/* Whether s holds at least n CPUs, counting no further than needed. */
static bool placement_at_least(const struct placement_ctx *x, const struct rtplace_cpumask *s, uint32_t n)
{
	uint32_t have = 0;

	for (uint32_t i = 0; i < x->nwords && have < n; i++)
		if (s->bits[i])
			have += placement_popcount(s->bits[i]);
	return have >= n;
}

/* ORs into out the CPUs of in moved by d (the callers' bits land inside the machine). */
static void placement_or_shifted(const struct placement_ctx *x, struct rtplace_cpumask *out, const struct rtplace_cpumask *in,
				 int32_t d)
{
	const uint32_t q = (uint32_t)(d < 0 ? -d : d) / 64, r = (uint32_t)(d < 0 ? -d : d) % 64;

	for (uint32_t i = 0; i < x->nwords; i++) {
		uint64_t w = 0;

		if (d > 0 && i >= q) {
			w = in->bits[i - q] << r;
			if (r && i >= q + 1)
				w |= in->bits[i - q - 1] >> (64 - r);
		} else if (d < 0 && i + q < x->nwords) {
			w = in->bits[i + q] >> r;
			if (r && i + q + 1 < x->nwords)
				w |= in->bits[i + q + 1] << (64 - r);
		}
		out->bits[i] |= w;
	}
}

static bool placement_empty(const struct placement_ctx *x, const struct rtplace_cpumask *s)
{
	for (uint32_t i = 0; i < x->nwords; i++)
		if (s->bits[i])
			return false;
	return true;
}

/* Whether a request's allowed set holds no CPU below the topology's count:
 * the CPUs past it are not read (placement.h). */
static bool placement_allowed_empty(const struct placement_ctx *x, const struct rtplace_cpumask *s)
{
	uint64_t any = 0;

	for (uint32_t i = 0; i + 1 < x->nwords; i++)
		any |= s->bits[i];
	return !(any | (s->bits[x->nwords - 1] & x->last_word));
}

static void placement_zero(const struct placement_ctx *x, struct rtplace_cpumask *s)
{
	for (uint32_t i = 0; i < x->nwords; i++)
		s->bits[i] = 0;
}

/* First CPU of s at or after from, or -1. */
static int placement_next(const struct placement_ctx *x, const struct rtplace_cpumask *s, uint32_t from)
{
	for (uint32_t i = from / 64; i < x->nwords; i++) {
		uint64_t w = s->bits[i];

		if (i == from / 64)
			w &= ~UINT64_C(0) << (from % 64);
		if (w)
			return (int)(i * 64 + (uint32_t)__builtin_ctzll(w));
	}
	return -1;
}

/* The CPU of s nearest the rotation origin (smallest (cpu - start) mod ncpus), or -1. */
static int placement_rot_first(const struct placement_ctx *x, const struct rtplace_cpumask *s)
{
	int c = placement_next(x, s, x->st.start);

	return c >= 0 ? c : placement_next(x, s, 0);
}

/* The CPU of s after c in rotation order, or -1 once the walk is back at the origin. */
static int placement_rot_next(const struct placement_ctx *x, const struct rtplace_cpumask *s, int c)
{
	const uint32_t start = x->st.start;
	int n = placement_next(x, s, (uint32_t)c + 1);

	if ((uint32_t)c >= start) {
		if (n >= 0)
			return n;
		n = placement_next(x, s, 0);
	}
	return n >= 0 && (uint32_t)n < start ? n : -1;
}

static uint32_t placement_rotdist(const struct placement_ctx *x, uint32_t cpu)
{
	return (cpu + x->topo->ncpus - x->st.start) % x->topo->ncpus;
}

static const struct rtplace_cpumask *placement_groups(const struct placement_ctx *x, enum placement_group which,
					     uint32_t *ret_n)
{
	*ret_n = which == PLACEMENT_GROUP_LLC ? x->topo->nllcs : x->topo->nnodes;
	return which == PLACEMENT_GROUP_LLC ? x->topo->llc_cpus : x->topo->node_cpus;
}

static int32_t placement_group_of(const struct placement_ctx *x, enum placement_group which, uint32_t cpu)
{
	return which == PLACEMENT_GROUP_LLC ? x->topo->cpus[cpu].llc : x->topo->cpus[cpu].node;
}

static uint32_t placement_claimed(const struct placement_state *st, uint32_t cpu, uint32_t level)
{
	if (st->claimed && st->claimed[cpu] > level)
		return st->claimed[cpu];
	return level;
}

/* The rank of a level: as ordered, idle folded into normal unless prefer_idle. */
static uint32_t placement_rank_of(const struct placement_ctx *x, uint32_t level)
{
	return level == LEVEL_IDLE && !x->cfg.prefer_idle ? LEVEL_NORMAL : level;
}

/* The level a CPU of rank r was met at (reported in the answer). */
static uint32_t placement_level_of(const struct placement_ctx *x, uint32_t cpu, uint32_t r)
{
	return cpuset_test(&x->st.idle, cpu) ? LEVEL_IDLE : r;
}

/* Makes the CPUs of bits (word i of the sets) eligible at level. */
static void placement_add_word(struct placement_ctx *x, uint32_t i, uint64_t bits, uint32_t level)
{
	struct placement_state *st = &x->st;
	uint32_t r = placement_rank_of(x, level);

	st->rank[r].bits[i] |= bits;
	st->eligible.bits[i] |= bits;
	if (level == LEVEL_IDLE)
		st->idle.bits[i] |= bits;
	st->cnt[r] += placement_popcount(bits);
	/* Kind-0 counts matter only when the candidates mix kinds. */
	if (st->mixed)
		st->cnt0[r] += placement_popcount(bits & x->kind0.bits[i]);
	st->used[r / 64] |= UINT64_C(1) << (r % 64);
}

/* Takes back a pick whose slot says it is no longer below rtP. */
static void placement_drop(struct placement_ctx *x, uint32_t cpu, uint32_t level)
{
	struct placement_state *st = &x->st;
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
		if (placement_popcount_and(x, kset, &groups[g]) >= count)
			return true;
	return false;
}

static void placement_candidates(struct placement_ctx *x)
{
	struct placement_state *st = &x->st;
	const struct placement_request *req = st->req;
	struct rtplace_cpumask cand0;

	if (placement_allowed_empty(x, &req->allowed)) {
		st->cand = &x->base;
		st->mask = req->node >= 0 ? &x->node_mask[req->node] : &x->base_mask;
		if (req->node < 0) {
			st->mixed = x->base_mixed;
			for (int k = 0; k < 2; k++)
				for (int w = PLACEMENT_GROUP_LLC; w <= PLACEMENT_GROUP_NODE; w++)
					st->possible[k][w] = x->base_widest[k][w] >= req->count;
			return;
		}
		cpuset_and(&st->cand_buf, &x->base, &x->topo->node_cpus[req->node]);
	} else {
		cpuset_and(&st->cand_buf, &req->allowed, &x->base);
		if (req->node >= 0)
			cpuset_and(&st->cand_buf, &st->cand_buf, &x->topo->node_cpus[req->node]);
		cpupri_mask_from_cpuset(x->view, &st->cand_buf, &st->mask_buf);
		st->mask = &st->mask_buf;
	}
	st->cand = &st->cand_buf;
	cpuset_and(&cand0, st->cand, &x->kind0);
	st->mixed = !cpuset_empty(&cand0) && !cpuset_equal(&cand0, st->cand);
	/* Upper bounds for the scan's early stop: a group that cannot hold
	 * count candidates will never be the one chosen. */
	for (int k = 0; k < 2 && req->count > 1; k++)
		for (int w = PLACEMENT_GROUP_LLC; w <= PLACEMENT_GROUP_NODE; w++)
			st->possible[k][w] = placement_fits(x, k ? &cand0 : st->cand, (enum placement_group)w,
							    req->count);
}

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

/*
 * Compares the caller's claims with the copy the context's claim sets come
 * from, once per answer, and starts the sets over if they differ; claims
 * under the stamp the copy was last taken or confirmed under (stamp 0:
 * none) are not compared. Returns whether no CPU is claimed at all: the
 * answer then reads as one without claims and asks for no set.
 */
static bool placement_claims_sync(struct placement_ctx *x, uint64_t stamp)
{
	const uint32_t ncpus = x->topo->ncpus;

	if (stamp != 0 && stamp == x->claim_stamp)
		return x->claims_none;
	/* A copy that still equals the claims keeps its stamp: stamps only
	 * say what the copy equals. */
	if (!x->claim_copy_valid || memcmp(x->claim_copy, x->st.claimed, ncpus) != 0) {
		memcpy(x->claim_copy, x->st.claimed, ncpus);
		x->claim_copy_valid = true;
		x->claim_stamp = 0;
		x->nclaim_sets = 0;
		x->claim_pen_valid = 0;
		x->claims_none = true;
		for (uint32_t c = 0; c < ncpus && x->claims_none; c++)
			x->claims_none = x->claim_copy[c] == 0;
	}
	if (stamp != 0)
		x->claim_stamp = stamp;
	return x->claims_none;
}

/* Derives the set for threshold min into a slot the answer does not hold;
 * returns the slot. */
static uint32_t placement_claim_set_new(struct placement_ctx *x, uint8_t min)
{
	const uint32_t ncpus = x->topo->ncpus;
	uint32_t k;

	if (x->nclaim_sets < PLACEMENT_CLAIM_SETS)
		k = x->nclaim_sets++;
	else
		for (k = 0; x->st.claim_sets_held >> k & 1; k++)
			;
	x->claim_min[k] = min;
	x->claim_pen_valid &= ~(UINT32_C(1) << k);
	/* The word summaries that read set k or its penalty go with it. */
	x->claim_free_valid[k] = 0;
	for (uint32_t a = 0; a < PLACEMENT_CLAIM_SETS; a++)
		x->claim_free_valid[a] &= ~(UINT32_C(1) << k);
	for (uint32_t i = 0; i < x->nwords; i++)
		x->claim_set[k].bits[i] = placement_claim_bits(x->claim_copy, ncpus, i, min);
	return k;
}

/*
 * The CPUs whose claim is at least min (1..127), from the context's sets
 * (placement_claims_sync() has run for this answer). A set stays valid
 * for the rest of the answer: a new threshold replaces a set the answer
 * does not hold (it holds fewer than PLACEMENT_CLAIM_SETS).
 */
static inline const struct rtplace_cpumask *placement_claims_at_least(struct placement_ctx *x, uint8_t min)
{
	uint32_t k = 0;

	while (k < x->nclaim_sets && x->claim_min[k] != min)
		k++;
	if (k == x->nclaim_sets)
		k = placement_claim_set_new(x, min);
	x->st.claim_sets_held |= UINT32_C(1) << k;
	return &x->claim_set[k];
}

/* The CPUs with an SMT sibling in in, into out: the sibling relation as
 * set shifts, or sibling lists where it is irregular. */
static void placement_siblings_of(const struct placement_ctx *x, const struct rtplace_cpumask *in, struct rtplace_cpumask *out)
{
	placement_zero(x, out);
	for (uint32_t k = 0; k < x->nshifts; k++) {
		struct rtplace_cpumask from;

		for (uint32_t i = 0; i < x->nwords; i++)
			from.bits[i] = in->bits[i] & x->shift_from[k].bits[i];
		placement_or_shifted(x, out, &from, x->shift[k]);
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
static inline const struct rtplace_cpumask *placement_claim_pen(struct placement_ctx *x)
{
	static const struct rtplace_cpumask none;
	const struct rtplace_cpumask *set;
	uint32_t k;

	if (x->cfg.avoid_smt == PLACEMENT_SMT_NEVER)
		return &none;
	set = placement_claims_at_least(x, x->cfg.avoid_smt == PLACEMENT_SMT_ALWAYS ? LEVEL_IDLE + 1
										    : (uint8_t)x->st.below);
	k = (uint32_t)(set - x->claim_set);
	if (!(x->claim_pen_valid >> k & 1)) {
		placement_siblings_of(x, set, &x->claim_pen[k]);
		x->claim_pen_valid |= UINT32_C(1) << k;
	}
	return &x->claim_pen[k];
}

/*
 * The cpuset words (a bit each) where some candidate is neither in above
 * (a claim set) nor in pen (the claims' penalty, placement_claim_pen()):
 * a fast walk passes the others without reading the map. For the
 * candidates of a request with neither allowed set nor node, kept with the
 * two sets, so the walk over a map whose free CPUs all sit beside claims
 * reads no set at all; for other candidates, worked out per answer.
 */
static struct placement_wordset placement_claim_free_words(struct placement_ctx *x, const struct rtplace_cpumask *above,
							   const struct rtplace_cpumask *pen)
{
	const struct rtplace_cpumask *cand = x->st.cand;
	const uint32_t a = (uint32_t)(above - x->claim_set);
	/* Under avoid-smt-siblings = never, pen is no set of the context. */
	const uint32_t p = x->cfg.avoid_smt == PLACEMENT_SMT_NEVER ? PLACEMENT_CLAIM_SETS
								     : (uint32_t)(pen - x->claim_pen);
	struct placement_wordset words = { { 0 } };

	if (cand == &x->base && (x->claim_free_valid[a] >> p & 1))
		return x->claim_free[a][p];
	for (uint32_t i = 0; i < x->nwords; i++)
		if (cand->bits[i] & ~above->bits[i] & ~pen->bits[i])
			placement_wordset_add(&words, i);
	if (cand == &x->base) {
		x->claim_free[a][p] = words;
		x->claim_free_valid[a] |= UINT32_C(1) << p;
	}
	return words;
}

/*
 * Reads the claims, 8 claim bytes at a time. For the candidates: a claim at
 * or above rtP bars the CPU whatever its map level (max(level, claim) >=
 * rtP); one below rtP ranks it at max(level, claim), CPU by CPU in the
 * scan. For every CPU: a claim that alone makes it busy (placement_busy())
 * gives its SMT siblings their penalty without reading its slot.
 */
static void placement_claims(struct placement_ctx *x)
{
	struct placement_state *st = &x->st;
	const struct rtplace_cpumask *claimed, *high;

	static const struct rtplace_cpumask none;

	placement_zero(x, &st->claims);
	placement_zero(x, &st->barred);
	st->pen_claims = &none;
	if (!st->claimed)
		return;
	claimed = placement_claims_at_least(x, 1);
	high = placement_claims_at_least(x, (uint8_t)st->below);
	for (uint32_t i = 0; i < x->nwords; i++) {
		st->claims.bits[i] = claimed->bits[i] & ~high->bits[i] & st->cand->bits[i];
		st->barred.bits[i] = high->bits[i] & st->cand->bits[i];
	}
	st->pen_claims = placement_claim_pen(x);
}

/* Eligible CPUs settled at level (rank <= level), of kind 0 only if use0, into ret. */
static void placement_settled_set(const struct placement_ctx *x, bool use0, uint32_t level, struct rtplace_cpumask *ret)
{
	const struct placement_state *st = &x->st;

	placement_zero(x, ret);
	PLACEMENT_FOREACH_RANK(r, st) {
		if (r > level)
			break;
		for (uint32_t i = 0; i < x->nwords; i++)
			ret->bits[i] |= st->rank[r].bits[i];
	}
	if (use0)
		for (uint32_t i = 0; i < x->nwords; i++)
			ret->bits[i] &= x->kind0.bits[i];
}

/*
 * Whether the answer is already fixed after scanning the map up to level.
 * Every CPU whose rank is <= level has been met (a CPU's rank is never below
 * the map level it is found at), and every CPU not yet met ranks above
 * level. The selection rules only compare ranks, and always prefer lower
 * ones, so once the CPUs they would take are all settled, levels above
 * cannot change the outcome.
 */
static bool placement_decided(struct placement_ctx *x, uint32_t level)
{
	const struct placement_state *st = &x->st;
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
	placement_settled_set(x, use0, level, &s);
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
static void placement_scan(struct placement_ctx *x)
{
	struct placement_state *st = &x->st;

	if (st->next > LEVEL_IDLE && !placement_empty(x, &st->eligible) && placement_decided(x, st->next - 1))
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
				placement_add_word(x, i, bits, level);
		}
		if (!any)
			continue;
		for (uint32_t i = 0; i < x->nwords; i++) {
			for (uint64_t bits = cpus.bits[i] & st->claims.bits[i]; bits; bits &= bits - 1) {
				uint32_t c = i * 64 + (uint32_t)__builtin_ctzll(bits);
				uint32_t l = placement_claimed(st, c, level);

				if (l < st->below)
					placement_add_word(x, i, UINT64_C(1) << (c % 64), l);
			}
		}
		if (!placement_empty(x, &st->eligible) && placement_decided(x, level))
			return;
	}
}

/* The count lowest ranks of the CPUs in m, ascending, into vec. */
static void placement_sorted_ranks(const struct placement_ctx *x, const struct rtplace_cpumask *m, uint8_t *vec)
{
	const uint32_t count = x->st.req->count;
	uint32_t i = 0;

	PLACEMENT_FOREACH_RANK(r, &x->st) {
		uint32_t n = placement_popcount_and(x, &x->st.rank[r], m);

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
static bool placement_best_group(struct placement_ctx *x, const struct rtplace_cpumask *k, enum placement_group which,
				 struct rtplace_cpumask *ret)
{
	struct placement_state *st = &x->st;
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

		for (uint32_t i = 0; i < x->nwords; i++)
			m.bits[i] = k->bits[i] & groups[g].bits[i];
		if (!placement_at_least(x, &m, count))
			continue;
		placement_sorted_ranks(x, &m, st->vec[cur]);
		/* Rotation looks only at the CPUs the group would hand out
		 * (rank up to its worst pick): the scan may have stopped
		 * before it met the others. */
		placement_zero(x, &low);
		PLACEMENT_FOREACH_RANK(r, st) {
			if (r > st->vec[cur][count - 1])
				break;
			for (uint32_t i = 0; i < x->nwords; i++)
				low.bits[i] |= st->rank[r].bits[i] & m.bits[i];
		}
		rot = placement_rotdist(x, (uint32_t)placement_rot_first(x, &low));
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
		for (uint32_t i = 0; i < x->nwords; i++)
			ret->bits[i] = m.bits[i];
	}
	return best >= 0;
}

static bool placement_busy(const struct placement_ctx *x, uint32_t cpu)
{
	uint32_t l = placement_claimed(&x->st, cpu, cpupri_level(x->view, cpu));

	if (x->cfg.avoid_smt == PLACEMENT_SMT_ALWAYS)
		return l > LEVEL_IDLE;
	return l >= x->st.below;
}

/* Whether cpu has an SMT sibling that is busy, from the slots and claims. */
static bool placement_penalty_of(const struct placement_ctx *x, uint32_t cpu)
{
	bool pen = false;

	if (x->cfg.avoid_smt == PLACEMENT_SMT_NEVER)
		return false;
	for (uint32_t i = x->sib_off[cpu]; i < x->sib_off[cpu + 1] && !pen; i++)
		pen = placement_busy(x, x->sib[i]);
	return pen;
}

/* Whether cpu has an SMT sibling that is busy or was picked in this round. */
static bool placement_penalty(struct placement_ctx *x, uint32_t cpu)
{
	struct placement_state *st = &x->st;
	bool pen;

	if (x->cfg.avoid_smt == PLACEMENT_SMT_NEVER)
		return false;
	if (cpuset_test(&st->pen_known, cpu))
		return cpuset_test(&st->pen, cpu);
	pen = placement_penalty_of(x, cpu);
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
static int placement_pick(struct placement_ctx *x, const struct rtplace_cpumask *g, int32_t anchor, uint32_t *ret_rank)
{
	const struct topo *t = x->topo;
	struct rtplace_cpumask tier[2 * PLACEMENT_TIERS];
	uint32_t r = LEVEL_COUNT, ntiers = 1;

	PLACEMENT_FOREACH_RANK(rr, &x->st) {
		if (placement_intersects(x, &x->st.rank[rr], g)) {
			r = rr;
			break;
		}
	}
	if (r == LEVEL_COUNT)
		return -1;
	*ret_rank = r;
	for (uint32_t i = 0; i < x->nwords; i++)
		tier[0].bits[i] = x->st.rank[r].bits[i] & g->bits[i];
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
	if (x->st.noisy) {
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

		for (uint32_t i = 0; i < x->nwords; i++)
			free.bits[i] = tier[k].bits[i] & ~x->st.pen.bits[i];
		for (int c = placement_rot_first(x, &free); c >= 0; c = placement_rot_next(x, &free, c))
			if (!placement_penalty(x, (uint32_t)c))
				return c;
	}
	for (uint32_t k = 0; k < ntiers; k++) {
		int c = placement_rot_first(x, &tier[k]);

		if (c >= 0)
			return c;
	}
	return -1;
}

/* Picks up to count CPUs of the eligible set by the rules in placement.h. */
static uint32_t placement_select(struct placement_ctx *x, uint16_t *ret_cpus, uint8_t *ret_levels)
{
	struct placement_state *st = &x->st;
	const uint32_t count = st->req->count;
	const bool smt = x->cfg.avoid_smt != PLACEMENT_SMT_NEVER;
	int32_t anchor = st->req->near_cpu;
	struct rtplace_cpumask k, g;
	uint32_t n = 0;

	cpuset_and(&k, &st->eligible, &x->kind0);
	if (!placement_at_least(x, &k, count))
		k = st->eligible;
	g = k;
	if (count > 1 && !placement_best_group(x, &k, PLACEMENT_GROUP_LLC, &g) &&
	    !placement_best_group(x, &k, PLACEMENT_GROUP_NODE, &g))
		g = k;
	st->pen = *st->pen_claims;
	st->pen_known = *st->pen_claims;
	while (n < count) {
		uint32_t r;
		int best = placement_pick(x, &g, anchor, &r);

		if (best < 0)
			break;
		ret_cpus[n] = (uint16_t)best;
		ret_levels[n] = (uint8_t)placement_level_of(x, (uint32_t)best, r);
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

/* The cpuset word at step k (0..nwords) of a walk in rotation order: the
 * origin's word, the ones after it, wrapping, and the origin's again. */
static uint32_t placement_fast_word(const struct placement_ctx *x, uint32_t k)
{
	const uint32_t nw = x->nwords, from = x->st.start / 64;

	return from + k < nw ? from + k : from + k - nw;
}

/*
 * The first step at or after k (0..nwords) of a walk in rotation order
 * whose cpuset word is in words (NULL: every word), or nwords + 1. Steps
 * 0..nwords - from - 1 are words from..nwords - 1, the next ones words
 * 0..from - 1, and step nwords the origin's word again.
 */
static inline uint32_t placement_fast_next_step(const struct placement_ctx *x, const struct placement_wordset *words,
						uint32_t k)
{
	const uint32_t nw = x->nwords, from = x->st.start / 64;

	if (!words)
		return k <= nw ? k : nw + 1;
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

/* The CPUs of a level (words, counts: the level's) among the candidates at
 * step k of a walk in rotation order, with *ret_i their cpuset word: the
 * origin's word is met twice, its bits from the origin on first, the ones
 * before the origin last. */
static inline uint64_t placement_fast_step(const struct placement_ctx *x, const __u64 *words, const __s32 *counts, uint32_t k,
				    uint32_t *ret_i)
{
	const uint32_t nw = x->nwords, sh = x->st.start % 64;
	const uint32_t i = placement_fast_word(x, k);
	uint64_t bits = cpupri_level_cpu_word(x->view, words, counts, x->st.mask, i);

	if (k == 0)
		bits &= ~UINT64_C(0) << sh;
	else if (k == nw)
		bits &= ~(~UINT64_C(0) << sh);
	*ret_i = i;
	return bits;
}

/*
 * The lowest level below rtP with a candidate: levels from idle up, each
 * only if its count line says a candidate shard has CPUs there
 * (cpupri_level_live()), walked one cpuset word at a time from the rotation
 * origin (placement_fast_step()) until a candidate is met; a level is
 * passed only after a whole walk met none. Returns the level with *ret_at
 * the step of its first candidate's word, or LEVEL_COUNT when there is none.
 */
static uint32_t placement_fast_level(const struct placement_ctx *x, uint32_t *ret_at)
{
	const struct cpupri_view *v = x->view;
	uint32_t i;

	for (uint32_t level = LEVEL_IDLE; level < x->st.below; level++) {
		const __u64 *words = cpupri_level_words(v, level);
		const __s32 *counts = cpupri_level_counts(v, level);

		if (!cpupri_level_live(v, level, x->st.mask))
			continue;
		for (uint32_t k = 0; k <= x->nwords; k++) {
			if (placement_fast_step(x, words, counts, k, &i)) {
				*ret_at = k;
				return level;
			}
		}
	}
	return LEVEL_COUNT;
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
static int placement_fast_one(struct placement_ctx *x, uint32_t *ret_level)
{
	struct placement_state *st = &x->st;
	const struct cpupri_view *v = x->view;
	const uint32_t nw = x->nwords;
	const struct rtplace_cpumask *above = NULL, *pen = NULL;
	const __u64 *words;
	const __s32 *counts;
	uint32_t level, at, i;
	struct placement_wordset free_words;
	const struct placement_wordset *steps = NULL;
	int pick = -1;
	__u32 slot;

	level = placement_fast_level(x, &at);
	if (level == LEVEL_COUNT)
		return -1;
	words = cpupri_level_words(v, level);
	counts = cpupri_level_counts(v, level);
	if (st->claimed) {
		above = placement_claims_at_least(x, (uint8_t)(level + 1));
		pen = placement_claim_pen(x);
		free_words = placement_claim_free_words(x, above, pen);
		steps = &free_words;
	}
	/* Words with no candidate free of the claims are passed unread. With
	 * noise among the candidates, the quiet CPUs are walked first, then
	 * the noisy ones: key order (penalty, noise, rotation). */
	for (int pass = 0; pass < (st->noisy ? 2 : 1) && pick < 0; pass++) {
		for (uint32_t k = placement_fast_next_step(x, steps, at); k <= nw && pick < 0;
		     k = placement_fast_next_step(x, steps, k + 1)) {
			uint64_t bits = placement_fast_step(x, words, counts, k, &i);

			if (above)
				bits &= ~above->bits[i] & ~pen->bits[i];
			if (st->noisy)
				bits &= pass ? x->cfg.noisy.bits[i] : ~x->cfg.noisy.bits[i];
			for (; bits && pick < 0; bits &= bits - 1) {
				uint32_t c = i * 64 + (uint32_t)__builtin_ctzll(bits);

				if (!placement_penalty_of(x, c))
					pick = (int)c;
			}
		}
	}
	for (int pass = 0; pass < (st->noisy ? 2 : 1) && pick < 0; pass++) {
		for (uint32_t k = at; k <= nw && pick < 0; k++) {
			uint64_t bits = placement_fast_step(x, words, counts, k, &i) &
					(above ? ~above->bits[i] : ~UINT64_C(0));

			if (st->noisy)
				bits &= pass ? x->cfg.noisy.bits[i] : ~x->cfg.noisy.bits[i];
			if (bits)
				pick = (int)(i * 64 + (uint32_t)__builtin_ctzll(bits));
		}
	}
	if (pick < 0)
		return -1;
	slot = cpupri_level(v, (uint32_t)pick);
	if (slot == LEVEL_OFFLINE || slot >= st->below)
		return -1;
	*ret_level = level;
	return pick;
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
 * far as it goes when count CPUs without a penalty are found, and once
 * when none is (every pick is then the next CPU in rotation order).
 * Writes the picks into ret_cpus and returns count with *ret_level = L, or
 * returns 0 when the general path must decide (c's LLC is too small, or a
 * pick's slot has moved on).
 */
static uint32_t placement_fast_many(struct placement_ctx *x, uint16_t *ret_cpus, uint32_t *ret_level)
{
	struct placement_state *st = &x->st;
	const struct topo *t = x->topo;
	const uint32_t count = st->req->count;
	const bool smt = x->cfg.avoid_smt != PLACEMENT_SMT_NEVER;
	const struct cpupri_view *v = x->view;
	const struct rtplace_cpumask *above = NULL, *pen = NULL;
	const __u64 *words;
	const __s32 *counts;
	struct rtplace_cpumask *low = &st->low_buf, free, taken;
	uint16_t first[PLACEMENT_FAST_FIRST];
	uint32_t level, at, wi, n = 0, nfirst = 0;
	int32_t llc;
	int c = -1, last = -1, low_last = -1;

	level = placement_fast_level(x, &at);
	if (level == LEVEL_COUNT)
		return 0;
	words = cpupri_level_words(v, level);
	counts = cpupri_level_counts(v, level);
	if (st->claimed) {
		above = placement_claims_at_least(x, (uint8_t)(level + 1));
		pen = placement_claim_pen(x);
	}
	for (uint32_t k = at; k <= x->nwords && c < 0; k++) {
		uint64_t bits = placement_fast_step(x, words, counts, k, &wi) & (above ? ~above->bits[wi] : ~UINT64_C(0));

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
	 * LLC's words, reading each as it gets there, and stops at the
	 * count-th (then the LLC holds count CPUs at L). Only a walk that
	 * runs out reads all the LLC's words for the rules below. */
	placement_zero(x, &taken);
	for (uint32_t k = at; k <= x->nwords && n < count; k++) {
		uint64_t bits, want;

		wi = placement_fast_word(x, k);
		want = t->llc_cpus[llc].bits[wi] & (above ? ~above->bits[wi] : ~UINT64_C(0));
		/* With noise, this walk takes quiet CPUs only: count of them
		 * without a penalty are what the picks, quiet first, are. */
		if (st->noisy)
			want &= ~x->cfg.noisy.bits[wi];
		if (!want || (nfirst == count && above && !(want & ~pen->bits[wi])))
			continue;
		bits = placement_fast_step(x, words, counts, k, &wi) & want;
		for (uint64_t b = bits; b && nfirst < count && count <= PLACEMENT_FAST_FIRST; b &= b - 1)
			first[nfirst++] = (uint16_t)(wi * 64 + (uint32_t)__builtin_ctzll(b));
		for (bits &= above ? ~pen->bits[wi] : ~UINT64_C(0); bits && n < count; bits &= bits - 1) {
			c = (int)(wi * 64 + (uint32_t)__builtin_ctzll(bits));
			if (cpuset_test(&taken, (unsigned)c) || (smt && placement_penalty_of(x, (uint32_t)c)))
				continue;
			ret_cpus[n++] = (uint16_t)c;
			/* The pick will run at rtP: its siblings are now busy. */
			for (uint32_t i = x->sib_off[c]; smt && i < x->sib_off[c + 1]; i++)
				cpuset_set(&taken, x->sib[i]);
		}
	}
	if (n == count)
		goto check;
	/* Fewer quiet CPUs without a penalty: the general path orders the
	 * rest. */
	if (st->noisy)
		return 0;
	/* Every CPU there has a penalty: the picks are the first count in
	 * rotation order, as the rules below would take them one by one. */
	if (n == 0 && nfirst == count) {
		memcpy(ret_cpus, first, count * sizeof(*first));
		goto check;
	}
	/* The level's CPUs in that LLC: only the words it spans are read. */
	placement_zero(x, low);
	for (wi = placement_wordset_next(&x->llc_words[llc], 0, x->nwords); wi < x->nwords;
	     wi = placement_wordset_next(&x->llc_words[llc], wi + 1, x->nwords))
		low->bits[wi] = cpupri_level_cpu_word(v, words, counts, st->mask, wi) & t->llc_cpus[llc].bits[wi] &
			    (above ? ~above->bits[wi] : ~UINT64_C(0));
	if (!placement_at_least(x, low, count))
		return 0;
	for (uint32_t i = 0; i < x->nwords; i++)
		free.bits[i] = low->bits[i] & (pen ? ~pen->bits[i] : ~UINT64_C(0));
	for (n = 0; n < count; n++) {
		int pick = -1;

		/* Penalties only grow within an answer, so the CPUs before the
		 * last pick in rotation order, picked or found penalised, stay
		 * out: each pick's walk goes on where the last one stopped. */
		c = last < 0 ? placement_rot_first(x, &free) : placement_rot_next(x, &free, last);
		while (c >= 0 && pick < 0) {
			if (!smt || !placement_penalty_of(x, (uint32_t)c)) {
				pick = c;
				break;
			}
			cpuset_clear(&free, (unsigned)c);
			c = placement_rot_next(x, &free, c);
		}
		/* Else the first left in rotation order: the CPUs of low
		 * before the last such pick were all picked already. */
		if (pick >= 0)
			last = pick;
		else
			pick = low_last = low_last < 0 ? placement_rot_first(x, low)
							: placement_rot_next(x, low, low_last);
		ret_cpus[n] = (uint16_t)pick;
		cpuset_clear(low, (unsigned)pick);
		cpuset_clear(&free, (unsigned)pick);
		/* The pick will run at rtP: its siblings are now busy. */
		for (uint32_t i = x->sib_off[pick]; smt && i < x->sib_off[pick + 1]; i++)
			cpuset_clear(&free, x->sib[i]);
	}
check:
	for (n = 0; n < count; n++) {
		__u32 slot = cpupri_level(x->view, ret_cpus[n]);

		if (slot == LEVEL_OFFLINE || slot >= st->below)
			return 0;
	}
	*ret_level = level;
	return count;
}

/*
 * Whether the map shows every candidate offline (hotplug): then no CPU is
 * online in the allowed set, which an empty answer must say rather than
 * "none below the priority". Read on empty answers only, as one more level
 * of the scan: the offline level's words of the candidates' shards.
 */
static bool placement_all_offline(const struct placement_ctx *x)
{
	const struct placement_state *st = &x->st;
	struct rtplace_cpumask off;

	cpupri_level_cpus(x->view, LEVEL_OFFLINE, st->mask, &off);
	for (uint32_t i = 0; i < x->nwords; i++)
		if (st->cand->bits[i] & ~off.bits[i])
			return false;
	return true;
}

/* placement_ctx_choose() and placement_ctx_choose_stamped(): stamp 0 for
 * claims without one. */
static int placement_ctx_answer(struct placement_ctx *x, const uint8_t *claimed_level, uint64_t stamp,
				uint32_t *rotor, const struct placement_request *req, struct placement_result *ret)
{
	struct placement_state *st = &x->st;
	const struct topo *t = x->topo;
	uint32_t n = 0;
	int r;

	ret->n = 0;
	ret->level = LEVEL_OFFLINE;
	r = placement_check(t, req, &ret->reason);
	/* A context left over a topology refreshed in place (its rebuild
	 * failed) knows fewer nodes than the topology may: never index past. */
	if (r == 0 && req->node >= 0 && (uint32_t)req->node >= x->nnodes) {
		r = -EINVAL;
		ret->reason = PLACEMENT_REASON_BAD_NODE;
	}
	if (r < 0)
		goto out;
	st->req = req;
	st->claimed = claimed_level;
	st->below = level_from_rt_priority(req->prio);
	/* The cursor is ours and below ncpus; a division only for one that is not. */
	st->start = !rotor ? 0 : *rotor < t->ncpus ? *rotor : *rotor % t->ncpus;
	st->next = LEVEL_IDLE;
	st->claim_sets_held = 0;
	if (st->claimed && placement_claims_sync(x, stamp))
		st->claimed = NULL;
	placement_candidates(x);
	if (placement_empty(x, st->cand)) {
		r = -ENODEV;
		ret->reason = PLACEMENT_REASON_NO_CANDIDATE;
		goto out;
	}
	/* Noise among the candidates: the fast paths walk the quiet CPUs
	 * first, or leave the answer to the general path's tiers. */
	st->noisy = !x->noisy_none && placement_intersects(x, st->cand, &x->cfg.noisy);
	if (req->near_cpu < 0 && x->cfg.prefer_idle && !st->mixed) {
		uint32_t level;

		if (req->count == 1) {
			int c = placement_fast_one(x, &level);

			n = c >= 0 ? 1 : 0;
			if (c >= 0)
				ret->cpus[0] = (uint16_t)c;
		} else {
			n = placement_fast_many(x, ret->cpus, &level);
		}
		if (n > 0) {
			memset(ret->levels, (int)level, n);
			goto found;
		}
	}
	/* Only the ranks the last answer used hold anything. */
	PLACEMENT_FOREACH_RANK(rr, st) {
		placement_zero(x, &st->rank[rr]);
		st->cnt[rr] = st->cnt0[rr] = 0;
	}
	st->used[0] = st->used[1] = 0;
	placement_zero(x, &st->seen);
	placement_zero(x, &st->eligible);
	placement_zero(x, &st->idle);
	placement_claims(x);
	/* The map may carry a stale bit (see cpupri_set()): a pick whose slot
	 * now says offline or >= rtP is dropped, the scan resumed if what is
	 * left no longer decides the answer, and the choice redone. Only the
	 * picks' slots are read, not those of every CPU met. */
	for (bool dropped = true; dropped;) {
		dropped = false;
		placement_scan(x);
		n = placement_select(x, ret->cpus, ret->levels);
		for (uint32_t i = 0; i < n; i++) {
			__u32 slot = cpupri_level(x->view, ret->cpus[i]);

			if (slot == LEVEL_OFFLINE || slot >= st->below) {
				placement_drop(x, ret->cpus[i], ret->levels[i]);
				dropped = true;
			}
		}
	}
	if (n == 0) {
		bool offline = placement_all_offline(x);

		r = offline ? -ENODEV : -ENOENT;
		ret->reason = offline ? PLACEMENT_REASON_NO_CANDIDATE : PLACEMENT_REASON_NONE_BELOW;
		goto out;
	}
found:
	ret->n = n;
	ret->level = ret->levels[0];
	ret->reason = n < req->count ? PLACEMENT_REASON_PARTIAL : PLACEMENT_REASON_OK;
	if (rotor)
		*rotor = ret->cpus[n - 1] + 1u < t->ncpus ? ret->cpus[n - 1] + 1u : 0;
out:
	return r;
}

/* The highest level of an answer: the one a multi-CPU answer is judged by. */
static uint32_t placement_worst(const struct placement_result *r)
{
	uint32_t worst = 0;

	for (uint32_t i = 0; i < r->n; i++)
		worst = r->levels[i] > worst ? r->levels[i] : worst;
	return worst;
}

/*
 * The isolation rules (DESIGN §20, placement.h) around one answer: the
 * request's candidates restricted to, or kept off, the isolated CPUs, or
 * for `prefer` answered both ways and the isolated answer taken unless the
 * rest is at a lower level (or gives more CPUs). Each try works on its own
 * copy of the cursor; only the answer given moves it.
 */
static int placement_ctx_isolation(struct placement_ctx *x, const uint8_t *claimed_level, uint64_t stamp,
				   uint32_t *rotor, const struct placement_request *req,
				   struct placement_result *ret)
{
	const struct placement_config *c = &x->cfg;
	/* No isolated CPU (the context knows): no rule, and no set copied. */
	enum placement_isolated mode = x->isolated_none ? PLACEMENT_ISOLATED_IGNORE : placement_isolated_mode(c, req);
	struct placement_request iso, rest;
	struct placement_result *other = NULL;
	uint32_t rot_iso = rotor ? *rotor : 0, rot_rest = rot_iso;
	int r, r_rest;

	if (mode == PLACEMENT_ISOLATED_IGNORE || placement_check(x->topo, req, &ret->reason) < 0)
		return placement_ctx_answer(x, claimed_level, stamp, rotor, req, ret);
	iso = *req;
	rest = *req;
	if (placement_allowed_empty(x, &iso.allowed))
		iso.allowed = c->managed;
	rest.allowed = iso.allowed;
	cpuset_and(&iso.allowed, &iso.allowed, &c->isolated);
	cpuset_andnot(&rest.allowed, &rest.allowed, &c->isolated);
	if (mode == PLACEMENT_ISOLATED_PREFER && cpuset_empty(&rest.allowed))
		mode = PLACEMENT_ISOLATED_ONLY;
	if (mode == PLACEMENT_ISOLATED_PREFER && cpuset_empty(&iso.allowed))
		mode = PLACEMENT_ISOLATED_AVOID;
	if ((mode == PLACEMENT_ISOLATED_ONLY && cpuset_empty(&iso.allowed)) ||
	    (mode == PLACEMENT_ISOLATED_AVOID && cpuset_empty(&rest.allowed))) {
		/* An empty allowed set would read "every managed CPU". */
		ret->n = 0;
		ret->level = LEVEL_OFFLINE;
		ret->reason = PLACEMENT_REASON_NO_CANDIDATE;
		return -ENODEV;
	}
	if (mode != PLACEMENT_ISOLATED_PREFER)
		return placement_ctx_answer(x, claimed_level, stamp, rotor,
					    mode == PLACEMENT_ISOLATED_ONLY ? &iso : &rest, ret);
	other = malloc(sizeof(*other));
	if (!other) {
		ret->n = 0;
		ret->reason = PLACEMENT_REASON_NO_MEMORY;
		return -ENOMEM;
	}
	r = placement_ctx_answer(x, claimed_level, stamp, &rot_iso, &iso, ret);
	r_rest = placement_ctx_answer(x, claimed_level, stamp, &rot_rest, &rest, other);
	if (r_rest == 0 && (r < 0 || other->n > ret->n ||
			    (other->n == ret->n && placement_worst(other) < placement_worst(ret)))) {
		*ret = *other;
		r = 0;
		rot_iso = rot_rest;
	} else if (r < 0 && r_rest != -ENODEV) {
		/* Candidates exist (the isolated ones): none below is the answer. */
		r = r_rest;
		*ret = *other;
	}
	if (r == 0 && rotor)
		*rotor = rot_iso;
	free(other);
	return r;
}

enum placement_isolated placement_isolated_mode(const struct placement_config *cfg,
						const struct placement_request *req)
{
	enum placement_isolated mode = cfg->isolated_mode;

	if (cpuset_empty(&cfg->isolated) || mode == PLACEMENT_ISOLATED_IGNORE)
		return PLACEMENT_ISOLATED_IGNORE;
	/* Normal work is what isolation keeps away; RT work may have to stay
	 * where the housekeeping CPUs are not. */
	if (req->normal)
		return PLACEMENT_ISOLATED_AVOID;
	if (cfg->isolated_housekeeping && mode == PLACEMENT_ISOLATED_PREFER)
		return PLACEMENT_ISOLATED_ONLY;
	return mode;
}

int placement_ctx_choose(struct placement_ctx *x, const uint8_t *claimed_level, uint32_t *rotor,
			 const struct placement_request *req, struct placement_result *ret)
{
	return placement_ctx_isolation(x, claimed_level, 0, rotor, req, ret);
}

int placement_ctx_choose_stamped(struct placement_ctx *x, const struct placement_claims *claims, uint32_t *rotor,
				 const struct placement_request *req, struct placement_result *ret)
{
	return placement_ctx_isolation(x, claims ? claims->level : NULL, claims ? claims->stamp : 0, rotor, req,
				       ret);
}

/*
 * The SMT sibling lists, each CPU's own left out, and the shifts that
 * express them. Cores are gathered by a counting sort on core ids, so this
 * is O(ncpus), not a scan of a core's CPU set per CPU.
 */
static int placement_ctx_siblings(struct placement_ctx *x)
{
	const struct topo *t = x->topo;
	uint32_t *core_off = calloc(t->ncores + 1, sizeof(*core_off));
	uint16_t *core_cpu = malloc(t->ncpus * sizeof(*core_cpu));
	bool irregular = false;
	uint32_t n = 0;
	int r = -ENOMEM;

	x->sib_off = malloc((t->ncpus + 1) * sizeof(*x->sib_off));
	if (!core_off || !core_cpu || !x->sib_off)
		goto out;
	/* Online CPUs have a core id below ncores (topo_finish()). */
	for (uint32_t c = 0; c < t->ncpus; c++)
		if (t->cpus[c].online)
			core_off[t->cpus[c].core + 1]++;
	for (uint32_t k = 0; k < t->ncores; k++)
		core_off[k + 1] += core_off[k];
	for (uint32_t c = 0; c < t->ncpus; c++) {
		x->sib_off[c] = n;
		if (t->cpus[c].online)
			n += core_off[t->cpus[c].core + 1] - core_off[t->cpus[c].core] - 1;
	}
	x->sib_off[t->ncpus] = n;
	x->sib = malloc((n ? n : 1) * sizeof(*x->sib));
	if (!x->sib)
		goto out;
	/* core_off[k] now counts up to the end of core k's CPUs as they go in. */
	for (uint32_t c = 0; c < t->ncpus; c++)
		if (t->cpus[c].online)
			core_cpu[core_off[t->cpus[c].core]++] = (uint16_t)c;
	for (uint32_t c = 0; c < t->ncpus; c++) {
		uint32_t core = (uint32_t)t->cpus[c].core, i = x->sib_off[c];

		if (!t->cpus[c].online)
			continue;
		for (uint32_t j = core ? core_off[core - 1] : 0; j < core_off[core]; j++) {
			int32_t d = (int32_t)core_cpu[j] - (int32_t)c;
			uint32_t k = 0;

			if (d == 0)
				continue;
			x->sib[i++] = core_cpu[j];
			while (k < x->nshifts && x->shift[k] != d)
				k++;
			if (k == PLACEMENT_MAX_SHIFTS) {
				irregular = true;
				continue;
			}
			if (k == x->nshifts)
				x->shift[x->nshifts++] = d;
			cpuset_set(&x->shift_from[k], c);
		}
	}
	if (irregular)
		x->nshifts = 0;
	r = 0;
out:
	free(core_off);
	free(core_cpu);
	return r;
}

int placement_ctx_new(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
		      struct placement_ctx **ret)
{
	struct placement_ctx *x = calloc(1, sizeof(*x));
	struct rtplace_cpumask base0;
	int r = -ENOMEM;

	if (!x)
		goto out;
	x->cfg = *cfg;
	x->topo = t;
	x->view = v;
	x->nwords = (t->ncpus + 63) / 64;
	x->claim_copy = malloc(t->ncpus ? t->ncpus : 1);
	if (!x->claim_copy)
		goto out;
	if (cpupri_mask_new(v, &x->base_mask) < 0 || cpupri_mask_new(v, &x->st.mask_buf) < 0 ||
	    cpupri_mask_new(v, &x->st.found) < 0)
		goto out;
	x->node_mask = calloc(t->nnodes ? t->nnodes : 1, sizeof(*x->node_mask));
	if (!x->node_mask)
		goto out;
	x->nnodes = t->nnodes;
	x->llc_words = calloc(t->nllcs ? t->nllcs : 1, sizeof(*x->llc_words));
	if (!x->llc_words)
		goto out;
	x->nllcs = t->nllcs;
	for (uint32_t llc = 0; llc < t->nllcs; llc++)
		for (uint32_t i = 0; i < CPUSET_WORDS; i++)
			if (t->llc_cpus[llc].bits[i])
				placement_wordset_add(&x->llc_words[llc], i);
	x->isolated_none = cpuset_empty(&cfg->isolated);
	x->noisy_none = cpuset_empty(&cfg->noisy);
	x->last_word = t->ncpus % 64 ? (UINT64_C(1) << (t->ncpus % 64)) - 1 : ~UINT64_C(0);
	cpuset_zero(&x->kind0);
	for (uint32_t c = 0; c < t->ncpus; c++)
		if (t->cpus[c].online && t->cpus[c].kind == 0)
			cpuset_set(&x->kind0, c);
	/* CPUs the map does not hold are offline as far as it can tell. */
	cpuset_and(&x->base, &cfg->managed, &t->online);
	for (int c = cpuset_next(&x->base, v->geom.ncpus); c >= 0; c = cpuset_next(&x->base, (unsigned)c + 1))
		cpuset_clear(&x->base, (unsigned)c);
	cpupri_mask_from_cpuset(v, &x->base, &x->base_mask);
	for (uint32_t node = 0; node < t->nnodes; node++) {
		struct rtplace_cpumask s;

		if (cpupri_mask_new(v, &x->node_mask[node]) < 0)
			goto out;
		cpuset_and(&s, &x->base, &t->node_cpus[node]);
		cpupri_mask_from_cpuset(v, &s, &x->node_mask[node]);
	}
	cpuset_and(&base0, &x->base, &x->kind0);
	x->base_mixed = !cpuset_empty(&base0) && !cpuset_equal(&base0, &x->base);
	for (int k = 0; k < 2; k++) {
		for (int w = PLACEMENT_GROUP_LLC; w <= PLACEMENT_GROUP_NODE; w++) {
			uint32_t n;
			const struct rtplace_cpumask *groups = placement_groups(x, (enum placement_group)w, &n);

			for (uint32_t g = 0; g < n; g++) {
				uint32_t in = placement_popcount_and(x, k ? &base0 : &x->base, &groups[g]);

				if (in > x->base_widest[k][w])
					x->base_widest[k][w] = in;
			}
		}
	}
	r = placement_ctx_siblings(x);
out:
	if (r == 0)
		*ret = x;
	else
		placement_ctx_free(x);
	return r;
}

void placement_ctx_set_noisy(struct placement_ctx *x, const struct rtplace_cpumask *noisy)
{
	x->cfg.noisy = *noisy;
	x->noisy_none = cpuset_empty(noisy);
}

void placement_ctx_free(struct placement_ctx *x)
{
	if (!x)
		return;
	cpupri_mask_free(&x->base_mask);
	cpupri_mask_free(&x->st.mask_buf);
	cpupri_mask_free(&x->st.found);
	for (uint32_t node = 0; node < x->nnodes; node++)
		cpupri_mask_free(&x->node_mask[node]);
	free(x->node_mask);
	free(x->llc_words);
	free(x->claim_copy);
	free(x->sib_off);
	free(x->sib);
	free(x);
}

int placement_choose(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
		     const uint8_t *claimed_level, uint32_t *rotor, const struct placement_request *req,
		     struct placement_result *ret)
{
	struct placement_ctx *x = NULL;
	int r;

	ret->n = 0;
	ret->level = LEVEL_OFFLINE;
	r = placement_check(t, req, &ret->reason);
	if (r < 0)
		goto out;
	r = placement_ctx_new(cfg, t, v, &x);
	if (r < 0) {
		ret->reason = PLACEMENT_REASON_NO_MEMORY;
		goto out;
	}
	r = placement_ctx_choose(x, claimed_level, rotor, req, ret);
out:
	placement_ctx_free(x);
	return r;
}
