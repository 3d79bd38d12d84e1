/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the placement files share (placement.h is the interface they
 * implement): the context, the state an answer writes, the accessors over
 * them, and each file's functions for the others, sectioned per file.
 * The files, each one layer, and what each may call:
 *
 *  - placement.c: the public decisions (placement_choose(),
 *    placement_ctx_choose*()): the request's checks and candidates, the
 *    isolation rules, then the fast paths, else the general path. Calls
 *    every layer below.
 *  - placement-fast.c: the answers under the default rules, read straight
 *    from the map (placement_fast_one(), placement_fast_many()). Calls the
 *    claim cache.
 *  - placement-scan.c: the general path, every rule of placement.h
 *    (placement_general()). Calls the claim cache and the SMT penalty of
 *    placement-fast.c.
 *  - placement-claim-cache.c: the sets derived from the claims, kept while the
 *    claims stay the same. Calls nothing above it.
 *  - placement-ctx.c: building and freeing the context and the state.
 *    Calls nothing above it.
 *
 * The context and the state. An answer reads the context (what the
 * configuration, topology and map geometry give, below) and writes only
 * the state its caller passes: the answer's working set, and what the
 * state keeps across its owner's answers (the claim cache, the pick
 * marks of placement_fast_many()). So one context can serve threads that
 * each hold a state, and local reads write nothing another thread reads.
 *
 * The accessors are inline, and the set arithmetic is cpuset.h's bounded
 * forms (cpuset_*_n() over nwords): they run inside every
 * loop of the layers above. Only calls made once or twice an answer cross
 * files.
 *
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
 * Every set holds only CPUs below topo->ncpus, so the word loops stop at
 * nwords.
 */

#ifndef RTPLACE_PLACEMENT_CORE_H
#define RTPLACE_PLACEMENT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "placement.h"

enum placement_group {
	PLACEMENT_GROUP_LLC,
	PLACEMENT_GROUP_NODE,
};

/* The four locality tiers of a pick relative to its anchor (placement.h, step 5). */
#define PLACEMENT_TIERS 4
/* Claim thresholds whose sets the claim cache keeps; an answer asks for at most 3. */
#define PLACEMENT_CLAIM_SETS 4
_Static_assert(PLACEMENT_CLAIM_SETS > 3, "a set an answer does not hold is always there to replace");
/* Sibling offsets worth shifting sets by; 4-way SMT numbered 4k..4k+3 needs 6. */
#define PLACEMENT_MAX_SHIFTS 8

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

/*
 * The claim cache (placement-claim-cache.c): sets derived from the
 * claims, kept while the caller's claims stay byte for byte what copy
 * holds (compared once per answer, a few lines, where deriving a set reads
 * and compares every claim): set[k] holds the CPUs whose claim is at least
 * min[k].
 *
 * It lives in the state, not in the context: answers write it, and a
 * context is read-only while it answers. It outlives one answer because
 * the state does: a state is its owner's (one thread's) for every answer,
 * and answers under one stamp derive each set once, not once an answer.
 */
struct placement_claim_cache {
	/* What a sync and every set lookup read, first. */
	uint8_t *copy;              /* [topo->ncpus] */
	uint64_t stamp;             /* the stamp copy equals the levels of (struct placement_claims), 0: none */
	bool copy_valid;
	bool none;                  /* copy is all zero */
	uint8_t min[PLACEMENT_CLAIM_SETS];
	uint32_t nsets;
	/* pen[k]: the CPUs with an SMT sibling in set[k], valid where bit k
	 * of pen_valid is set. */
	uint32_t pen_valid;
	/* free[a][p]: the cpuset words (a bit each) where a CPU of the
	 * context's base is neither in set[a] nor in pen[p] (p ==
	 * PLACEMENT_CLAIM_SETS: no penalty), valid where bit p of
	 * free_valid[a] is set: the only words a fast walk over the claims
	 * must read (placement_claim_cache_free_words()). */
	uint32_t free_valid[PLACEMENT_CLAIM_SETS];
	struct rtplace_cpumask set[PLACEMENT_CLAIM_SETS];
	struct rtplace_cpumask pen[PLACEMENT_CLAIM_SETS];
	struct placement_wordset free[PLACEMENT_CLAIM_SETS][PLACEMENT_CLAIM_SETS + 1];
};

/*
 * What answering writes (placement.h): the working set of the answer
 * being made, and what the state keeps across its owner's answers. A
 * context is only read while it answers, so that one per thread is a
 * choice of its owner, not a need: the state is the one per thread.
 *
 * Layout: what every answer reads (the request's fields, the pick marks,
 * the claim cache's scalars) comes first, in a few lines of one page; the
 * sets the general path works on follow (some 140 KiB at RTPLACE_MAX_CPUS).
 */
struct placement_state {
	/* The context the state was made for (placement_state_new()): its
	 * sets and sizes are that context's. */
	const struct placement_ctx *ctx;
	/* One answer's: set at its start (placement_state_start()). */
	const struct placement_request *req;
	const uint8_t *claimed;
	__u32 below;                /* rtP: eligible levels are strictly lower */
	uint32_t start;             /* rotation origin */
	const struct rtplace_cpumask *cand;  /* allowed ∩ managed ∩ online ∩ in the map (∩ node) */
	const struct cpupri_mask *mask; /* cand in the map's bits */
	bool mixed;                 /* cand's kind-0 CPUs are neither none nor all */
	bool noisy;                 /* cand holds CPUs of cfg.noisy: picks split each tier by noise */
	/* [use kind 0][group kind]: some group can hold count candidates */
	bool possible[2][2];
	__u32 next;                 /* next level the scan reads */
	uint32_t claim_sets_held;   /* the cache's claim sets this answer holds, a bit each */
	/* Across answers. [ncpus]: picked[cpu] == picked_mark while cpu is a
	 * pick of the answer placement_fast_many() is making: its siblings'
	 * penalty at the cost of one load each, with no set to clear per
	 * answer. */
	uint32_t *picked;
	uint32_t picked_mark;
	struct placement_claim_cache cache;
	/* One answer's sets. */
	struct rtplace_cpumask seen;         /* met in the level scan */
	struct rtplace_cpumask eligible;     /* met below rtP, not dropped: the union of rank[] */
	struct rtplace_cpumask claims;       /* candidates claimed below rtP: ranked one by one */
	struct rtplace_cpumask barred;       /* candidates claimed at rtP or above: never eligible */
	const struct rtplace_cpumask *pen_claims; /* CPUs with an SMT sibling that its claim alone makes busy */
	struct rtplace_cpumask idle;         /* eligible CPUs whose level is idle (folded into normal unless prefer_idle) */
	struct rtplace_cpumask pen, pen_known; /* SMT penalty, for the CPUs it was computed for */
	uint64_t used[2];           /* ranks that rank[] may hold CPUs at */
	uint32_t cnt[LEVEL_COUNT];  /* eligible CPUs per rank */
	uint32_t cnt0[LEVEL_COUNT]; /* those of kind 0 */
	struct rtplace_cpumask rank[LEVEL_COUNT];
	uint8_t vec[2][PLACEMENT_MAX_COUNT]; /* best and current group's sorted ranks */
	struct rtplace_cpumask cand_buf;
	struct rtplace_cpumask low_buf;      /* placement_fast_many()'s CPUs of the level in the LLC */
	struct cpupri_mask mask_buf;
	struct cpupri_mask found;   /* the level cpupri_find() last answered, in the map's bits */
};

_Static_assert(offsetof(struct placement_state, cache.set) < 256, "what every answer reads sits in the first lines");
_Static_assert(LEVEL_COUNT <= 128, "ranks fit placement_state.used");
struct placement_ctx {
	const struct topo *topo;
	const struct cpupri_view *view;
	/* The view's slots and how many, so that a slot read costs one load
	 * past the CPU id (placement_slot_level()), not the view's too. */
	const struct cpupri_slot *slots;
	uint32_t slots_n;
	/* The view's level 0 words and counts and the distance from one
	 * level's to the next's: a level's pointers cost an add, not the
	 * geometry's products. */
	const __u64 *words0;
	const __s32 *counts0;
	uint32_t words_stride, counts_stride;
	/* The pieces of the view (cpupri_piece) that gather base's CPUs, with
	 * base folded into their masks and those left empty dropped: cpuset
	 * word i of a level's CPUs in base is base_pieces[base_piece_off[i]
	 * .. base_piece_off[i + 1]) read from the level's words, with no
	 * allowed mask, span or empty piece to test (placement_level_word()). */
	uint32_t *base_piece_off;   /* [nwords + 1] */
	struct cpupri_piece *base_pieces;
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
	bool base_empty;            /* base holds no CPU */
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
	/* Last: its sets are read by the rules that need them only. */
	struct placement_config cfg;
};

/* The CPU of s nearest the rotation origin (smallest (cpu - start) mod ncpus), or -1. */
static inline int placement_rot_first(const struct placement_ctx *x, const struct placement_state *st,
				      const struct rtplace_cpumask *s)
{
	int c = cpuset_next_n(s, st->start, x->nwords);

	return c >= 0 ? c : cpuset_next_n(s, 0, x->nwords);
}

/* The CPU of s after c in rotation order, or -1 once the walk is back at the origin. */
static inline int placement_rot_next(const struct placement_ctx *x, const struct placement_state *st,
				     const struct rtplace_cpumask *s, int c)
{
	const uint32_t start = st->start;
	int n = cpuset_next_n(s, (uint32_t)c + 1, x->nwords);

	if ((uint32_t)c >= start) {
		if (n >= 0)
			return n;
		n = cpuset_next_n(s, 0, x->nwords);
	}
	return n >= 0 && (uint32_t)n < start ? n : -1;
}

static inline uint32_t placement_rotdist(const struct placement_ctx *x, const struct placement_state *st, uint32_t cpu)
{
	return (cpu + x->topo->ncpus - st->start) % x->topo->ncpus;
}

static inline const struct rtplace_cpumask *placement_groups(const struct placement_ctx *x, enum placement_group which,
					     uint32_t *ret_n)
{
	*ret_n = which == PLACEMENT_GROUP_LLC ? x->topo->nllcs : x->topo->nnodes;
	return which == PLACEMENT_GROUP_LLC ? x->topo->llc_cpus : x->topo->node_cpus;
}

static inline int32_t placement_group_of(const struct placement_ctx *x, enum placement_group which, uint32_t cpu)
{
	return which == PLACEMENT_GROUP_LLC ? x->topo->cpus[cpu].llc : x->topo->cpus[cpu].node;
}

static inline uint32_t placement_claimed(const struct placement_state *st, uint32_t cpu, uint32_t level)
{
	if (st->claimed && st->claimed[cpu] > level)
		return st->claimed[cpu];
	return level;
}

/* cpupri_level() through the context's copy of where the slots are. */
static inline uint32_t placement_slot_level(const struct placement_ctx *x, uint32_t cpu)
{
	uint32_t level;

	if (cpu >= x->slots_n)
		return LEVEL_OFFLINE;
	level = __atomic_load_n(&x->slots[cpu].level, __ATOMIC_ACQUIRE);
	return level < LEVEL_COUNT ? level : LEVEL_OFFLINE;
}

/* Whether cpu, at rtP, makes its SMT sibling's answer worse: its slot's
 * level or its claim is >= rtP (any level above idle under
 * avoid-smt-siblings = always). */
static inline bool placement_busy(const struct placement_ctx *x, const struct placement_state *st, uint32_t cpu)
{
	uint32_t l = placement_claimed(st, cpu, placement_slot_level(x, cpu));

	if (x->cfg.avoid_smt == PLACEMENT_SMT_ALWAYS)
		return l > LEVEL_IDLE;
	return l >= st->below;
}

/* Whether cpu has an SMT sibling that is busy, from the slots and claims:
 * its SMT penalty before this answer's picks. */
static inline bool placement_penalty_of(const struct placement_ctx *x, const struct placement_state *st, uint32_t cpu)
{
	bool pen = false;

	if (x->cfg.avoid_smt == PLACEMENT_SMT_NEVER)
		return false;
	for (uint32_t i = x->sib_off[cpu]; i < x->sib_off[cpu + 1] && !pen; i++)
		pen = placement_busy(x, st, x->sib[i]);
	return pen;
}

/* The level's words and counts (level < LEVEL_COUNT). */
static inline const __u64 *placement_level_words(const struct placement_ctx *x, uint32_t level)
{
	return x->words0 + (size_t)level * x->words_stride;
}

static inline const __s32 *placement_level_counts(const struct placement_ctx *x, uint32_t level)
{
	return x->counts0 + (size_t)level * x->counts_stride;
}

/* cpupri_level_cpu_word() for the answer's candidates (st.mask), through
 * the context's base pieces when the candidates are base. */
static inline uint64_t placement_level_word(const struct placement_ctx *x, const struct placement_state *st,
					    const __u64 *words, const __s32 *counts, uint32_t i)
{
	uint64_t out = 0;

	if (st->mask != &x->base_mask)
		return cpupri_level_cpu_word(x->view, words, counts, st->mask, i);
	for (uint32_t k = x->base_piece_off[i]; k < x->base_piece_off[i + 1]; k++) {
		const struct cpupri_piece *p = &x->base_pieces[k];

		if (cpupri_shard_count(counts, p->shard) > 0)
			out |= ((__atomic_load_n(&words[p->word], __ATOMIC_RELAXED) >> p->bit) & p->mask) << p->at;
	}
	return out;
}

/* placement-claim-cache.c: the claim cache. */

bool placement_claim_cache_compare(const struct placement_ctx *x, struct placement_state *st, uint64_t stamp);

/*
 * Compares the caller's claims with the copy the state's claim sets come
 * from, once per answer, and starts the sets over if they differ; claims
 * under the stamp the copy was last taken or confirmed under (stamp 0:
 * none) are not compared, and cost no call. Returns whether no CPU is
 * claimed at all: the answer then reads as one without claims and asks
 * for no set.
 */
static inline bool placement_claim_cache_sync(const struct placement_ctx *x, struct placement_state *st, uint64_t stamp)
{
	if (stamp != 0 && stamp == st->cache.stamp)
		return st->cache.none;
	return placement_claim_cache_compare(x, st, stamp);
}
uint32_t placement_claim_cache_set_new(const struct placement_ctx *x, struct placement_state *st, uint8_t min);

/*
 * The CPUs whose claim is at least min (1..127), from the state's sets
 * (placement_claim_cache_sync() has run for this answer); a set it does not
 * hold yet costs a call (placement_claim_cache_set_new()). A set stays valid
 * for the rest of the answer: a new threshold replaces a set the answer
 * does not hold (it holds fewer than PLACEMENT_CLAIM_SETS).
 */
static inline const struct rtplace_cpumask *placement_claim_cache_at_least(const struct placement_ctx *x,
									   struct placement_state *st, uint8_t min)
{
	uint32_t k = 0;

	while (k < st->cache.nsets && st->cache.min[k] != min)
		k++;
	if (k == st->cache.nsets)
		k = placement_claim_cache_set_new(x, st, min);
	st->claim_sets_held |= UINT32_C(1) << k;
	return &st->cache.set[k];
}
const struct rtplace_cpumask *placement_claim_cache_pen(const struct placement_ctx *x, struct placement_state *st);
struct placement_wordset placement_claim_cache_free_words(const struct placement_ctx *x, struct placement_state *st,
							  const struct rtplace_cpumask *above,
							  const struct rtplace_cpumask *pen);

/* placement-fast.c: the fast paths. */

int placement_fast_one(const struct placement_ctx *x, struct placement_state *st, uint32_t *ret_level);
uint32_t placement_fast_many(const struct placement_ctx *x, struct placement_state *st, uint16_t *ret_cpus,
			     uint32_t *ret_level);

/* placement-scan.c: the general path. */

uint32_t placement_general(const struct placement_ctx *x, struct placement_state *st, uint16_t *ret_cpus,
			   uint8_t *ret_levels);

#endif
