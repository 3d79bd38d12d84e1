/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cpupri map: for every priority level (levels.h), which CPUs are at that
 * level, shaped after kernel/sched/cpupri.c and the fixes that made it scale
 * on 480-CPU machines (DESIGN §1, §4).
 *
 * Writers: the BPF tracker, one writer per CPU at a time (it holds that
 * CPU's runqueue lock), through cpupri_set() below; in tests and benchmarks
 * plain threads calling the same function. Readers: rtplaced (the map is
 * mmap'ed read-only, no syscall per query), through the view API at the end.
 *
 * Representation. One flat region, every part line (64 B) aligned:
 *
 *   offset       what                                      written by
 *   0            struct cpupri_header (geometry)           loader, once, before attach
 *   slots_off    struct cpupri_slot[ncpus], 1 line each    that CPU's writer only
 *   counts_off   struct cpupri_counts[LEVEL_COUNT][count   any writer (atomic)
 *                lines]: a count per level and shard
 *   masks_off    __u64 [LEVEL_COUNT][nshards][shard_words] writers of that shard
 *
 * A level's counts and its mask never share a line: a writer that bumps a
 * count does not invalidate the line a reader scans for bits (the kernel's
 * 26 -> 203 line fix). The mask of a level is split into shards (NUMA node by
 * default, LLC on request); each shard's words start on a line of their own,
 * so a CPU's writes touch only its shard's line and a reader that wants one
 * node reads only that node's lines. shard_words is a multiple of 8 words.
 *
 * A level counts its CPUs per shard, sixteen shards' counts to a line
 * (cpupri_count_lines() lines per level: one up to 16 shards): the count of
 * a shard is the "has CPUs at this level" hint. Every reader skips a level
 * whose counts say no shard it wants has CPUs there; a reader that walks a
 * level word by word and stops at its first find (cpupri_level_cpu_word(),
 * placement's fast paths) also skips the words of shards whose count is
 * zero, so a one-CPU answer that finds an idle CPU in the first shard it
 * looks at reads two lines of the level, however many nodes the machine
 * has. The writer's work is what one global count cost: one increment and
 * one decrement per change, on the same line for every shard of the level.
 *
 * The production layout is this one, sharded per node: bench/README.md
 * measures it against a packed count+mask, a padded global mask, LLC shards
 * and a byte per CPU on the 480-CPU topology, and explains the choice.
 *
 * Size: 64 + 64 * ncpus + 64 * LEVEL_COUNT * count_lines + 8 * LEVEL_COUNT *
 * nshards * shard_words bytes; for 480 CPUs in 2 node shards (240 CPUs, 4
 * words, padded to 8; one count line) that is 64 + 30720 + 6592 + 13184 =
 * 50560 bytes; for 8,192 CPUs (CPUPRI_MAX_CPUS) in 32 node shards (256
 * CPUs, 4 words, padded to 8; two count lines) 64 + 524288 + 13184 +
 * 210944 = 748480 bytes, the slots nearly all of it.
 *
 * This header is compiled by BPF C as well: no libc, __u32-style types,
 * and every map access goes through CPUPRI_PTR(map, off, len), which the
 * BPF side may redefine to bound each access, by its length, for the
 * verifier.
 */
#ifndef RTPLACE_CPUPRI_H
#define RTPLACE_CPUPRI_H

#include "levels.h"

#define CPUPRI_LINE 64
#define CPUPRI_LINE_WORDS (CPUPRI_LINE / 8)
#define CPUPRI_MAGIC 0x43505452u /* "RTPC" little-endian */
#define CPUPRI_VERSION 2u /* 2: counts per shard */
/* A shard's CPUs are numbered by a __u16 bit index; CPU ids fit a __u16.
 * As many as rtplace names (RTPLACE_MAX_CPUS): the size formula below
 * keeps every offset far inside the __u32 geometry. */
#define CPUPRI_MAX_CPUS 8192u
#define CPUPRI_MAX_SHARDS 256u

#ifndef CPUPRI_PTR
#define CPUPRI_PTR(map, off, len) ((void *)((char *)(map) + (off)))
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Where each part of the map lives; plain values, copied into the header and
 * into the BPF program's read-only data. */
struct cpupri_geom {
	__u32 ncpus;       /* CPU ids 0..ncpus-1 */
	__u32 nshards;
	__u32 shard_words; /* 64-bit mask words per shard, a multiple of 8 */
	__u32 slots_off;
	__u32 counts_off;
	__u32 masks_off;
	__u32 size;        /* bytes in the whole map */
};

/* Line 0. Written once by the loader before any writer runs. */
struct cpupri_header {
	__u32 magic;
	__u32 version;
	struct cpupri_geom geom;
	__u8 reserved[CPUPRI_LINE - 8 - sizeof(struct cpupri_geom)];
} __attribute__((aligned(CPUPRI_LINE)));

/*
 * One per CPU, one line each. level, pid and rt_queued are written only by
 * the writer of this CPU; shard and bit are set by the loader before attach.
 * Keeping them on the writer's own line means the bookkeeping that the
 * daemon needs costs no extra shared line on the scheduler path.
 */
struct cpupri_slot {
	__u32 level;     /* the CPU's published level; exchanged atomically */
	__u16 shard;     /* which mask shard holds this CPU */
	__u16 bit;       /* bit index inside its shard */
	__u32 pid;       /* thread running at the last update, 0 for idle */
	__u32 rt_queued; /* RT tasks queued there at the last update */
	__u64 updates;   /* level changes published, for diagnostics */
	__u8 reserved[CPUPRI_LINE - 24];
} __attribute__((aligned(CPUPRI_LINE)));

/* Shards whose counts share one line. */
#define CPUPRI_LINE_COUNTS (CPUPRI_LINE / 4)

/* A level's counts, one per shard (shard % CPUPRI_LINE_COUNTS of line
 * shard / CPUPRI_LINE_COUNTS); counts of different levels do not share a
 * line either. */
struct cpupri_counts {
	__s32 shard[CPUPRI_LINE_COUNTS];
} __attribute__((aligned(CPUPRI_LINE)));

_Static_assert(sizeof(struct cpupri_geom) == 28, "geometry is 7 words");
_Static_assert(sizeof(struct cpupri_header) == CPUPRI_LINE, "header is one line");
_Static_assert(sizeof(struct cpupri_slot) == CPUPRI_LINE, "slot is one line");
_Static_assert(_Alignof(struct cpupri_slot) == CPUPRI_LINE, "slot is line aligned");
_Static_assert(__builtin_offsetof(struct cpupri_slot, level) == 0, "level first");
_Static_assert(__builtin_offsetof(struct cpupri_slot, updates) == 16, "updates is 8-aligned");
_Static_assert(sizeof(struct cpupri_counts) == CPUPRI_LINE, "a level's counts fill lines");
_Static_assert(_Alignof(struct cpupri_counts) == CPUPRI_LINE, "counts are line aligned");
_Static_assert(sizeof(__s32) * CPUPRI_LINE_COUNTS == CPUPRI_LINE, "sixteen counts a line");

static __always_inline struct cpupri_slot *cpupri_slot_ptr(void *map, const struct cpupri_geom *g, __u32 cpu)
{
	return (struct cpupri_slot *)CPUPRI_PTR(map, g->slots_off + cpu * (__u32)sizeof(struct cpupri_slot),
						(__u32)sizeof(struct cpupri_slot));
}

/* Lines of counts per level. */
static __always_inline __u32 cpupri_count_lines(const struct cpupri_geom *g)
{
	return (g->nshards + CPUPRI_LINE_COUNTS - 1) / CPUPRI_LINE_COUNTS;
}

/* The count of level's CPUs in shard. */
static __always_inline __s32 *cpupri_count_ptr(void *map, const struct cpupri_geom *g, __u32 level, __u32 shard)
{
	return (__s32 *)CPUPRI_PTR(map, g->counts_off + level * cpupri_count_lines(g) * CPUPRI_LINE +
						shard * (__u32)sizeof(__s32),
				   (__u32)sizeof(__s32));
}

static __always_inline __u64 *cpupri_word_ptr(void *map, const struct cpupri_geom *g, __u32 level,
					      __u32 shard, __u32 word)
{
	return (__u64 *)CPUPRI_PTR(map, g->masks_off + ((level * g->nshards + shard) * g->shard_words + word) * 8,
				   (__u32)sizeof(__u64));
}

/*
 * Publishes that cpu is now at level. Returns the previous level, or
 * LEVEL_COUNT if the arguments are out of range (nothing changed).
 *
 * The write order is the kernel's cpupri_set(): set the bit in the new level,
 * then increment its shard's count there; decrement the old level's count
 * of the shard, then clear the old bit. All four are atomic
 * read-modify-writes, which are full barriers both on x86 (lock prefix) and
 * in BPF (atomic instructions are fully ordered), so they are ordered
 * without extra fences. A reader loads the counts (acquire), then the mask
 * words (cpupri_find(), cpupri_level_cpu_word()): if it sees the new count
 * it also sees the new bit; while the CPU moves it may appear at both levels, never at
 * neither, and a reader that picks it at the old level makes the same
 * harmless choice the kernel makes (the daemon re-checks the slot before it
 * acts).
 *
 * The count is the reader's hint that the shard has CPUs at the level, and
 * the order makes a wrong hint cost time only. Each CPU adds one to its
 * shard's count of a level after its bit there is set and takes the one
 * back before the bit is cleared, and one CPU's increments and decrements
 * of a count alternate (the BPF writers of a CPU hold its runqueue lock),
 * so at every point of the count's modification order it is the number of
 * CPUs between those two steps: it cannot read zero while a CPU that
 * entered the level before the read began is still there. There is no flag
 * a racing writer could clear under another CPU's bit. A count that is
 * positive when read but whose CPUs leave before the reader gets to the
 * words (or one set wrongly, as the tests do) sends the reader to words it
 * finds empty: time, never a miss. Only writers racing on one CPU (the
 * seeding below) can leave a count one low until the slower one's step
 * lands, as they could the single count of version 1.
 *
 * The level itself is exchanged atomically so that each old -> new
 * transition is owned by exactly one caller even if two writers race on one
 * CPU. The BPF writers all hold the CPU's runqueue lock, so they do not;
 * the exchange keeps the counts exact should a lockless writer ever be
 * added (and for the seeding, see cpupri_set_from()). At worst a bit is left
 * set for a level the CPU has left, which readers filter by checking the
 * slot of the CPU they choose.
 */
static __always_inline __u32 cpupri_set(void *map, const struct cpupri_geom *g, __u32 cpu, __u32 level)
{
	struct cpupri_slot *slot;
	__u32 old, shard, bit;
	__u64 mask;

	if (cpu >= g->ncpus || level >= LEVEL_COUNT)
		return LEVEL_COUNT;
	slot = cpupri_slot_ptr(map, g, cpu);
	shard = slot->shard;
	bit = slot->bit;
	if (shard >= g->nshards || bit >= g->shard_words * 64)
		return LEVEL_COUNT;
	if (slot->level == level)
		return level;
	old = __atomic_exchange_n(&slot->level, level, __ATOMIC_SEQ_CST);
	if (old == level)
		return level;
	mask = (__u64)1 << (bit % 64);
	__atomic_fetch_or(cpupri_word_ptr(map, g, level, shard, bit / 64), mask, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(cpupri_count_ptr(map, g, level, shard), 1, __ATOMIC_SEQ_CST);
	if (old < LEVEL_COUNT) {
		__atomic_fetch_sub(cpupri_count_ptr(map, g, old, shard), 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_and(cpupri_word_ptr(map, g, old, shard, bit / 64), ~mask, __ATOMIC_SEQ_CST);
	}
	slot->updates++;
	return old;
}

/*
 * Publishes level for cpu only if the CPU is still at `from`; returns 1 if
 * it published, 0 if the CPU had moved on (or the arguments are out of
 * range). For a writer that must never overwrite a fresher value, such as
 * the loader seeding levels from /proc while the BPF writers already run:
 * the compare-and-exchange on the level makes the seed lose to any update
 * published since the map was initialised. Bits and counts then follow in
 * cpupri_set()'s order, with the same reasoning.
 */
static __always_inline int cpupri_set_from(void *map, const struct cpupri_geom *g, __u32 cpu, __u32 from,
					   __u32 level)
{
	struct cpupri_slot *slot;
	__u32 shard, bit, expect = from;
	__u64 mask;

	if (cpu >= g->ncpus || level >= LEVEL_COUNT || from >= LEVEL_COUNT || from == level)
		return 0;
	slot = cpupri_slot_ptr(map, g, cpu);
	shard = slot->shard;
	bit = slot->bit;
	if (shard >= g->nshards || bit >= g->shard_words * 64)
		return 0;
	if (!__atomic_compare_exchange_n(&slot->level, &expect, level, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return 0;
	mask = (__u64)1 << (bit % 64);
	__atomic_fetch_or(cpupri_word_ptr(map, g, level, shard, bit / 64), mask, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(cpupri_count_ptr(map, g, level, shard), 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(cpupri_count_ptr(map, g, from, shard), 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_and(cpupri_word_ptr(map, g, from, shard, bit / 64), ~mask, __ATOMIC_SEQ_CST);
	slot->updates++;
	return 1;
}

#ifndef __bpf__
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "topo.h"

/*
 * Computes the geometry for ncpus CPUs split into nshards shards
 * (shard_of[cpu] < nshards for every cpu). Returns 0, or -EINVAL/-E2BIG.
 */
int cpupri_geom_compute(__u32 ncpus, __u32 nshards, const __u16 *shard_of, struct cpupri_geom *ret);

/*
 * Writes the header and the slots into map (g->size bytes, zeroed by the
 * caller) and puts every CPU at LEVEL_OFFLINE. Bits are given in increasing
 * CPU order inside each shard. Called before any writer runs.
 */
void cpupri_init(void *map, const struct cpupri_geom *g, const __u16 *shard_of);

/*
 * The geometry of a map for topo's CPUs, sharded per node or LLC (mode),
 * and each CPU's shard in shard_of (topo->ncpus entries). For maps whose
 * memory is not the caller's to allocate (the BPF map); everything else
 * uses cpupri_map_new(). Returns 0 or cpupri_geom_compute()'s error.
 */
int cpupri_geom_for_topo(const struct topo *topo, enum topo_shard mode, __u16 *shard_of, struct cpupri_geom *ret);

/*
 * The one constructor of a map in the heap: CPUPRI_LINE-aligned (the
 * padded layout puts each count and each mask word group on a line of its
 * own only if the map starts on a line; calloc() does not promise that),
 * zeroed and initialised by cpupri_init() (every CPU at LEVEL_OFFLINE) for
 * topo's CPUs sharded by mode. *ret_size is the map's size for
 * cpupri_view_open(). Free with free(). Returns 0, -EINVAL, -E2BIG or
 * -ENOMEM; writes the outputs only on success.
 */
int cpupri_map_new(const struct topo *topo, enum topo_shard mode, void **ret_map, size_t *ret_size);

/*
 * Puts every CPU online in topo at LEVEL_IDLE in map (made for topo): the
 * levels of a machine nothing is known to run on, the daemon's simulated
 * topology and rtplace-run's choice without a daemon alike.
 */
void cpupri_set_online_idle(void *map, const struct cpupri_geom *g, const struct topo *topo);

/*
 * Brings dst, a map of src's geometry initialised by cpupri_init() whose
 * only writer is the caller, to src's levels and RT queue lengths, CPU by
 * CPU through cpupri_set(), so that dst's readers see what the map's
 * protocol promises them while it changes. The pids are not copied: dst's
 * stay 0. src may change meanwhile; each CPU gets the level read once.
 */
void cpupri_mirror(void *dst, const void *src, const struct cpupri_geom *g);

/*
 * A reader's translation between CPU ids and the map's shard-local bits,
 * derived once when the view is opened (the slots' shard and bit never
 * change after cpupri_init()). cpupri_init() numbers a shard's bits in
 * increasing CPU order, so a mask word holds runs of consecutive CPU ids (a
 * node shard on a machine that numbers SMT siblings N and N + ncores: one or
 * two runs per word), and a cpuset word gathers from one or a few map words:
 * the conversions move a run at a time with shifts and read no slot. CPUs at
 * or above RTPLACE_MAX_CPUS, which no cpuset holds, are in no run.
 */
struct cpupri_run {
	__u16 cpu; /* CPU of the run's first bit */
	__u8 bit;  /* the run's first bit in its map word */
	__u8 len;  /* bits, 1..64 */
};

/* Bits (w >> bit) & mask of map word `word` (of shard `shard`) are CPUs at + 0.. of a cpuset word. */
struct cpupri_piece {
	__u64 mask;
	__u32 word;
	__u8 bit;
	__u8 at;
	__u16 shard;
};

/* A reader's handle: the mapped region plus the translation tables. */
struct cpupri_view {
	const void *map;
	struct cpupri_geom geom;
	__u32 nwords;            /* nshards * shard_words: one level's mask words, contiguous in the map */
	__u32 used_words;        /* the words at the start of each shard that hold CPUs; the rest is padding */
	__u32 *word_runs;        /* [nwords + 1]: map word w's runs are runs[word_runs[w] .. word_runs[w + 1]) */
	struct cpupri_run *runs;
	__u32 *cpu_pieces;       /* [CPUSET_WORDS + 1]: cpuset word i's pieces, like word_runs */
	struct cpupri_piece *pieces;
	__u32 count_stride;      /* counts from one level's to the next's */
};

/*
 * A CPU set in the map's own shard-local form (word w is word w of every
 * level's mask), to intersect without converting. As an allowed set, the
 * words outside [lo, hi) are zero; as a cpupri_find() answer, only the
 * words in [lo, hi) that hold CPUs are written, so a reader touches no
 * more than the allowed set spans (and cpupri_mask_cpu_word() reads no
 * other word).
 */
struct cpupri_mask {
	__u64 *w; /* [nwords] */
	__u32 nwords;
	__u32 lo, hi;
	__u32 s0, s1; /* the shards of words lo and hi - 1 (0, 0 when lo == hi) */
};

/* Validates the header of map (size bytes) and builds the view. 0, -EINVAL
 * (a bad header, or a map that does not start on a CPUPRI_LINE boundary,
 * where the layout's padding would not keep writers apart), -ENOMEM. */
int cpupri_view_open(const void *map, size_t size, struct cpupri_view *ret);

/*
 * cpupri_map_new() and cpupri_view_open() over it, for a process that
 * keeps a map of its own to read (rtplace-run without a daemon, the
 * benchmarks, the tests' reference model). Close with cpupri_view_close()
 * then free(*ret_map). Returns 0 or either's error; writes the outputs
 * only on success.
 */
int cpupri_map_open(const struct topo *topo, enum topo_shard mode, void **ret_map, struct cpupri_view *ret_view);
void cpupri_view_close(struct cpupri_view *v);

/* Published level of cpu (LEVEL_OFFLINE for CPUs outside the map). */
static inline __u32 cpupri_level(const struct cpupri_view *v, __u32 cpu)
{
	__u32 level;

	if (cpu >= v->geom.ncpus)
		return LEVEL_OFFLINE;
	level = __atomic_load_n(&cpupri_slot_ptr((void *)v->map, &v->geom, cpu)->level, __ATOMIC_ACQUIRE);
	return level < LEVEL_COUNT ? level : LEVEL_OFFLINE;
}

/* Number of CPUs at level: the sum of its shards' counts. */
__s32 cpupri_count(const struct cpupri_view *v, __u32 level);

/* Level's count line(s): counts[shard] is the shard's hint (cpupri_set()). */
static inline const __s32 *cpupri_level_counts(const struct cpupri_view *v, __u32 level)
{
	return cpupri_count_ptr((void *)v->map, &v->geom, level, 0);
}

/* The count of level's CPUs in shard; the acquire load pairs with the
 * writer's increment, which follows its bit set: a positive count makes the
 * bits of the CPUs it counts visible to the relaxed mask loads after it. */
static inline __s32 cpupri_shard_count(const __s32 *counts, __u32 shard)
{
	return __atomic_load_n(&counts[shard], __ATOMIC_ACQUIRE);
}

int cpupri_mask_new(const struct cpupri_view *v, struct cpupri_mask *ret);
void cpupri_mask_free(struct cpupri_mask *m);

/* Fills m with the CPUs of set (CPUs outside the map are ignored), a run at a time. */
void cpupri_mask_from_cpuset(const struct cpupri_view *v, const struct rtplace_cpumask *set, struct cpupri_mask *m);

/* Word i (< CPUSET_WORDS) of m as a cpuset word: the CPUs 64 * i .. 64 * i + 63 that m holds. */
static inline __u64 cpupri_mask_cpu_word(const struct cpupri_view *v, const struct cpupri_mask *m, __u32 i)
{
	__u64 out = 0;

	for (__u32 k = v->cpu_pieces[i]; k < v->cpu_pieces[i + 1]; k++) {
		const struct cpupri_piece *p = &v->pieces[k];

		if (p->word >= m->lo && p->word < m->hi)
			out |= ((m->w[p->word] >> p->bit) & p->mask) << p->at;
	}
	return out;
}

/*
 * Whether some count of shards s0..s1 (of one level's counts) is positive.
 * No early exit: mostly one or two shards, and most levels hold none, so
 * a scan of the levels pays this per level.
 */
static inline bool cpupri_counts_live(const __s32 *counts, __u32 s0, __u32 s1)
{
	bool live = false;

	for (__u32 s = s0; s <= s1; s++)
		live |= cpupri_shard_count(counts, s) > 0;
	return live;
}

/*
 * Whether some shard that allowed spans has CPUs at level, by the hints
 * alone (the level's count line; no mask word is read). False means no
 * allowed CPU was at level when its count was read; true may be a hint
 * whose bits are gone (cpupri_set()).
 */
static inline bool cpupri_level_live(const struct cpupri_view *v, __u32 level, const struct cpupri_mask *allowed)
{
	if (level >= LEVEL_COUNT || allowed->lo >= allowed->hi)
		return false;
	return cpupri_counts_live(cpupri_level_counts(v, level), allowed->s0, allowed->s1);
}

/*
 * Cpuset word i (< CPUSET_WORDS) of the CPUs of allowed at level, read
 * straight from the map: only the map words word i gathers from, and of
 * those only the ones in shards whose count (counts = the level's
 * cpupri_level_counts()) is positive. For a reader that stops at its first
 * find (one CPU in rotation order) and so reads no more of the level than
 * the words it walks; cpupri_find() reads and ANDs the whole span at once.
 */
static inline __u64 cpupri_level_cpu_word(const struct cpupri_view *v, const __u64 *level_words,
					  const __s32 *counts, const struct cpupri_mask *allowed, __u32 i)
{
	__u64 out = 0;

	for (__u32 k = v->cpu_pieces[i]; k < v->cpu_pieces[i + 1]; k++) {
		const struct cpupri_piece *p = &v->pieces[k];
		__u64 bits;

		if (p->word < allowed->lo || p->word >= allowed->hi || cpupri_shard_count(counts, p->shard) <= 0)
			continue;
		bits = __atomic_load_n(&level_words[p->word], __ATOMIC_RELAXED) & allowed->w[p->word];
		out |= ((bits >> p->bit) & p->mask) << p->at;
	}
	return out;
}

/* The mask words of level, contiguous: word w of the mask is word w of a cpupri_mask. */
static inline const __u64 *cpupri_level_words(const struct cpupri_view *v, __u32 level)
{
	return cpupri_word_ptr((void *)v->map, &v->geom, level, 0, 0);
}

/* The CPUs m holds, into ret. */
void cpupri_mask_to_cpuset(const struct cpupri_view *v, const struct cpupri_mask *m, struct rtplace_cpumask *ret);

/*
 * The map's general scan, the kernel's cpupri_find(): from level `from`
 * (at least idle) upward to below - 1, the first level with a CPU in
 * allowed. Each level costs its count line, skipped when no shard of the
 * span has a positive count (the hints, cpupri_set()), and, as in the
 * kernel's packed layout, an AND of the words allowed spans: the answer
 * stays in the map's bits (ret's words lo..hi that hold CPUs, lo and hi
 * those of allowed; a shard's padding words are neither read nor
 * written), and callers convert only what they use
 * (cpupri_mask_cpu_word()).
 * Returns 0 with *ret_level set, or -ENOENT when no allowed CPU is in
 * from..below - 1. ret is written even on -ENOENT.
 */
int cpupri_find(const struct cpupri_view *v, __u32 from, __u32 below, const struct cpupri_mask *allowed,
		struct cpupri_mask *ret, __u32 *ret_level);

/* The CPUs of allowed whose bit is set at level, into ret (cpupri_find()'s
 * word AND for one level, converted). */
void cpupri_level_cpus(const struct cpupri_view *v, __u32 level, const struct cpupri_mask *allowed,
		       struct rtplace_cpumask *ret);
#endif

#endif
