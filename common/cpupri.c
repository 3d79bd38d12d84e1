/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpupri.h"

static __u32 cpupri_round_up(__u32 v, __u32 to)
{
	return (v + to - 1) / to * to;
}

int cpupri_geom_compute(__u32 ncpus, __u32 nshards, const __u16 *shard_of, struct cpupri_geom *ret)
{
	__u32 per_shard[CPUPRI_MAX_SHARDS] = { 0 };
	__u32 widest = 0;
	uint64_t size, masks;
	struct cpupri_geom g;

	if (ncpus == 0 || nshards == 0)
		return -EINVAL;
	if (ncpus > CPUPRI_MAX_CPUS || nshards > CPUPRI_MAX_SHARDS)
		return -E2BIG;
	for (__u32 cpu = 0; cpu < ncpus; cpu++) {
		if (shard_of[cpu] >= nshards)
			return -EINVAL;
		per_shard[shard_of[cpu]]++;
	}
	for (__u32 s = 0; s < nshards; s++)
		if (per_shard[s] > widest)
			widest = per_shard[s];

	g.ncpus = ncpus;
	g.nshards = nshards;
	g.shard_words = cpupri_round_up((widest + 63) / 64, CPUPRI_LINE_WORDS);
	g.slots_off = sizeof(struct cpupri_header);
	g.counts_off = g.slots_off + ncpus * (__u32)sizeof(struct cpupri_slot);
	g.masks_off = g.counts_off + LEVEL_COUNT * cpupri_count_lines(&g) * (__u32)sizeof(struct cpupri_counts);
	masks = (uint64_t)LEVEL_COUNT * nshards * g.shard_words * 8;
	size = g.masks_off + masks;
	if (size > UINT32_MAX)
		return -E2BIG;
	g.size = (__u32)size;
	*ret = g;
	return 0;
}

void cpupri_init(void *map, const struct cpupri_geom *g, const __u16 *shard_of)
{
	struct cpupri_header *h = map;
	__u16 next_bit[CPUPRI_MAX_SHARDS] = { 0 };

	h->magic = CPUPRI_MAGIC;
	h->version = CPUPRI_VERSION;
	h->geom = *g;
	for (__u32 cpu = 0; cpu < g->ncpus; cpu++) {
		struct cpupri_slot *slot = cpupri_slot_ptr(map, g, cpu);
		__u16 shard = shard_of[cpu];

		slot->shard = shard;
		slot->bit = next_bit[shard]++;
		slot->level = LEVEL_OFFLINE;
		*cpupri_word_ptr(map, g, LEVEL_OFFLINE, shard, slot->bit / 64) |= (__u64)1 << (slot->bit % 64);
		(*cpupri_count_ptr(map, g, LEVEL_OFFLINE, shard))++;
	}
}

int cpupri_geom_for_topo(const struct topo *topo, enum topo_shard mode, __u16 *shard_of, struct cpupri_geom *ret)
{
	uint32_t nshards;

	topo_shards(topo, mode, shard_of, &nshards);
	return cpupri_geom_compute(topo->ncpus, nshards, shard_of, ret);
}

int cpupri_map_new(const struct topo *topo, enum topo_shard mode, void **ret_map, size_t *ret_size)
{
	__u16 *shard_of = calloc(topo->ncpus ? topo->ncpus : 1, sizeof(*shard_of));
	struct cpupri_geom g;
	void *map = NULL;
	size_t alloc;
	int r;

	if (!shard_of)
		return -ENOMEM;
	r = cpupri_geom_for_topo(topo, mode, shard_of, &g);
	if (r < 0)
		goto out;
	/* aligned_alloc() wants a multiple of the alignment. */
	alloc = (g.size + CPUPRI_LINE - 1) / CPUPRI_LINE * CPUPRI_LINE;
	map = aligned_alloc(CPUPRI_LINE, alloc);
	if (!map) {
		r = -ENOMEM;
		goto out;
	}
	memset(map, 0, alloc);
	cpupri_init(map, &g, shard_of);
	*ret_map = map;
	*ret_size = g.size;
out:
	free(shard_of);
	return r;
}

void cpupri_set_online_idle(void *map, const struct cpupri_geom *g, const struct topo *topo)
{
	CPUSET_FOREACH(cpu, &topo->online)
		cpupri_set(map, g, (__u32)cpu, LEVEL_IDLE);
}

/* A map bit that holds no CPU, in the bit -> CPU table view_open builds. */
#define CPUPRI_NO_CPU UINT16_MAX

void cpupri_mirror(void *dst, const void *src, const struct cpupri_geom *g)
{
	for (__u32 cpu = 0; cpu < g->ncpus; cpu++) {
		const struct cpupri_slot *from = cpupri_slot_ptr((void *)src, g, cpu);
		struct cpupri_slot *to = cpupri_slot_ptr(dst, g, cpu);
		__u32 queued = __atomic_load_n(&from->rt_queued, __ATOMIC_RELAXED);

		if (to->rt_queued != queued)
			to->rt_queued = queued;
		cpupri_set(dst, g, cpu, __atomic_load_n(&from->level, __ATOMIC_RELAXED));
	}
}

static __u64 cpupri_low_bits(__u32 len)
{
	return len >= 64 ? ~(__u64)0 : ((__u64)1 << len) - 1;
}

/* The runs of each map word, from the bit -> CPU table (see struct cpupri_run). */
static int cpupri_view_runs(struct cpupri_view *v, const __u16 *shard_cpu)
{
	const __u32 nwords = v->nwords;
	__u32 n = 0;

	/* A run per bit is the most there can be. */
	v->word_runs = malloc((nwords + 1) * sizeof(*v->word_runs));
	v->runs = malloc((size_t)nwords * 64 * sizeof(*v->runs));
	if (!v->word_runs || !v->runs)
		return -ENOMEM;
	for (__u32 w = 0; w < nwords; w++) {
		v->word_runs[w] = n;
		for (__u32 bit = 0; bit < 64; bit++) {
			__u16 cpu = shard_cpu[w * 64 + bit];
			struct cpupri_run *last = n > v->word_runs[w] ? &v->runs[n - 1] : NULL;

			if (cpu >= RTPLACE_MAX_CPUS)
				continue;
			if (last && last->bit + last->len == bit && last->cpu + last->len == cpu)
				last->len++;
			else
				v->runs[n++] = (struct cpupri_run){ .cpu = cpu, .bit = (__u8)bit, .len = 1 };
		}
	}
	v->word_runs[nwords] = n;
	return 0;
}

/* Calls fn for each piece of the runs cut at cpuset word boundaries. */
static void cpupri_view_cut(struct cpupri_view *v, void (*fn)(struct cpupri_view *, __u32, const struct cpupri_piece *))
{
	for (__u32 w = 0; w < v->nwords; w++) {
		for (__u32 k = v->word_runs[w]; k < v->word_runs[w + 1]; k++) {
			__u32 cpu = v->runs[k].cpu, bit = v->runs[k].bit, len = v->runs[k].len;

			while (len) {
				__u32 at = cpu % 64, n = len < 64 - at ? len : 64 - at;
				struct cpupri_piece p = { .mask = cpupri_low_bits(n), .word = w, .bit = (__u8)bit,
							  .at = (__u8)at, .shard = (__u16)(w / v->geom.shard_words) };

				fn(v, cpu / 64, &p);
				cpu += n;
				bit += n;
				len -= n;
			}
		}
	}
}

static void cpupri_piece_count(struct cpupri_view *v, __u32 i, const struct cpupri_piece *p)
{
	(void)p;
	v->cpu_pieces[i + 1]++;
}

static void cpupri_piece_put(struct cpupri_view *v, __u32 i, const struct cpupri_piece *p)
{
	v->pieces[v->cpu_pieces[i]++] = *p;
}

/* The pieces of each cpuset word, by a counting sort of the cut runs. */
static int cpupri_view_pieces(struct cpupri_view *v)
{
	v->cpu_pieces = calloc(CPUSET_WORDS + 1, sizeof(*v->cpu_pieces));
	if (!v->cpu_pieces)
		return -ENOMEM;
	cpupri_view_cut(v, cpupri_piece_count);
	for (__u32 i = 0; i < CPUSET_WORDS; i++)
		v->cpu_pieces[i + 1] += v->cpu_pieces[i];
	v->pieces = malloc((v->cpu_pieces[CPUSET_WORDS] ? v->cpu_pieces[CPUSET_WORDS] : 1) * sizeof(*v->pieces));
	if (!v->pieces)
		return -ENOMEM;
	cpupri_view_cut(v, cpupri_piece_put);
	/* cpu_pieces[i] now ends word i's pieces: shift back to starts. */
	for (__u32 i = CPUSET_WORDS; i > 0; i--)
		v->cpu_pieces[i] = v->cpu_pieces[i - 1];
	v->cpu_pieces[0] = 0;
	return 0;
}

int cpupri_view_open(const void *map, size_t size, struct cpupri_view *ret)
{
	const struct cpupri_header *h = map;
	struct cpupri_view v = { .map = map };
	size_t nbits;
	__u16 *shard_cpu = NULL;
	int r = -EINVAL;

	if ((uintptr_t)map % CPUPRI_LINE || size < sizeof(*h) || h->magic != CPUPRI_MAGIC ||
	    h->version != CPUPRI_VERSION)
		goto out;
	v.geom = h->geom;
	if (v.geom.size > size || v.geom.ncpus == 0 || v.geom.ncpus > CPUPRI_MAX_CPUS || v.geom.nshards == 0 ||
	    v.geom.nshards > CPUPRI_MAX_SHARDS || v.geom.shard_words == 0 ||
	    v.geom.shard_words % CPUPRI_LINE_WORDS)
		goto out;
	v.nwords = v.geom.nshards * v.geom.shard_words;
	nbits = (size_t)v.nwords * 64;
	r = -ENOMEM;
	shard_cpu = malloc(nbits * sizeof(*shard_cpu));
	if (!shard_cpu)
		goto out;
	for (size_t i = 0; i < nbits; i++)
		shard_cpu[i] = CPUPRI_NO_CPU;
	r = -EINVAL;
	for (__u32 cpu = 0; cpu < v.geom.ncpus; cpu++) {
		const struct cpupri_slot *slot = cpupri_slot_ptr((void *)map, &v.geom, cpu);

		if (slot->shard >= v.geom.nshards || slot->bit >= v.geom.shard_words * 64)
			goto out;
		shard_cpu[(size_t)slot->shard * v.geom.shard_words * 64 + slot->bit] = (__u16)cpu;
		if (slot->bit / 64 + 1u > v.used_words)
			v.used_words = slot->bit / 64 + 1u;
	}
	r = cpupri_view_runs(&v, shard_cpu);
	if (r == 0)
		r = cpupri_view_pieces(&v);
	v.count_stride = cpupri_count_lines(&v.geom) * CPUPRI_LINE_COUNTS;
out:
	free(shard_cpu);
	if (r == 0)
		*ret = v;
	else
		cpupri_view_close(&v);
	return r;
}

int cpupri_map_open(const struct topo *topo, enum topo_shard mode, void **ret_map, struct cpupri_view *ret_view)
{
	void *map;
	size_t size;
	int r;

	r = cpupri_map_new(topo, mode, &map, &size);
	if (r < 0)
		return r;
	r = cpupri_view_open(map, size, ret_view);
	if (r < 0)
		free(map);
	else
		*ret_map = map;
	return r;
}

void cpupri_view_close(struct cpupri_view *v)
{
	free(v->word_runs);
	free(v->runs);
	free(v->cpu_pieces);
	free(v->pieces);
	v->word_runs = NULL;
	v->runs = NULL;
	v->cpu_pieces = NULL;
	v->pieces = NULL;
}

__s32 cpupri_count(const struct cpupri_view *v, __u32 level)
{
	const __s32 *counts;
	__s32 n = 0;

	if (level >= LEVEL_COUNT)
		return 0;
	counts = cpupri_level_counts(v, level);
	for (__u32 s = 0; s < v->geom.nshards; s++)
		n += cpupri_shard_count(counts, s);
	return n;
}

int cpupri_mask_new(const struct cpupri_view *v, struct cpupri_mask *ret)
{
	ret->w = calloc(v->nwords, sizeof(*ret->w));
	if (!ret->w)
		return -ENOMEM;
	ret->nwords = v->nwords;
	ret->lo = ret->hi = 0;
	ret->s0 = ret->s1 = 0;
	return 0;
}

void cpupri_mask_free(struct cpupri_mask *m)
{
	free(m->w);
	m->w = NULL;
}

void cpupri_mask_from_cpuset(const struct cpupri_view *v, const struct rtplace_cpumask *set, struct cpupri_mask *m)
{
	m->lo = v->nwords;
	m->hi = 0;
	for (__u32 w = 0; w < v->nwords; w++) {
		__u64 word = 0;

		for (__u32 i = v->word_runs[w]; i < v->word_runs[w + 1]; i++) {
			const struct cpupri_run *run = &v->runs[i];
			__u32 lo = run->cpu / 64, sh = run->cpu % 64;
			__u64 bits = set->bits[lo] >> sh;

			/* A run of up to 64 CPUs may straddle two cpuset words. */
			if (sh && lo + 1 < CPUSET_WORDS)
				bits |= set->bits[lo + 1] << (64 - sh);
			word |= (bits & cpupri_low_bits(run->len)) << run->bit;
		}
		m->w[w] = word;
		if (word && w < m->lo)
			m->lo = w;
		if (word)
			m->hi = w + 1;
	}
	if (m->hi == 0)
		m->lo = 0;
	m->s0 = m->hi ? m->lo / v->geom.shard_words : 0;
	m->s1 = m->hi ? (m->hi - 1) / v->geom.shard_words : 0;
}

void cpupri_mask_to_cpuset(const struct cpupri_view *v, const struct cpupri_mask *m, struct rtplace_cpumask *ret)
{
	for (__u32 i = 0; i < CPUSET_WORDS; i++)
		ret->bits[i] = cpupri_mask_cpu_word(v, m, i);
}

int cpupri_find(const struct cpupri_view *v, __u32 from, __u32 below, const struct cpupri_mask *allowed,
		struct cpupri_mask *ret, __u32 *ret_level)
{
	const __u32 lo = allowed->lo, hi = allowed->hi, sw = v->geom.shard_words, used = v->used_words;
	const __u32 s0 = allowed->s0, s1 = allowed->s1, stride = v->count_stride, level_words = v->nwords;
	/* Locals, not loads through v: the acquire loads below would make
	 * the compiler read v's fields again at every level. */
	const __s32 *counts = cpupri_level_counts(v, 0);
	const __u64 *words = cpupri_level_words(v, 0);

	ret->lo = lo;
	ret->hi = hi;
	ret->s0 = s0;
	ret->s1 = s1;
	if (lo >= hi)
		return -ENOENT;
	if (below > LEVEL_COUNT)
		below = LEVEL_COUNT;
	for (__u32 level = from > LEVEL_OFFLINE ? from : LEVEL_OFFLINE + 1; level < below; level++) {
		const __u64 *m = words + (size_t)level * level_words;
		const __s32 *c = counts + level * stride;
		__u64 any = 0;

		/* Most levels hold no CPU anywhere: the count line says so. */
		if (!cpupri_counts_live(c, s0, s1))
			continue;
		/* Shard by shard, the words that hold CPUs only (with LLC
		 * shards most of a level's words are padding). Every shard of
		 * the span, as the kernel's reader does once the level's count
		 * says go: a branch per shard on its own count costs more than
		 * the word or two a shard holds here (bench/README.md); the
		 * readers that stop early skip shards (cpupri_level_cpu_word()). */
		for (__u32 base = s0 * sw; base < hi; base += sw) {
			const __u32 end = base + used < hi ? base + used : hi;

			for (__u32 w = base > lo ? base : lo; w < end; w++) {
				__u64 bits = __atomic_load_n(&m[w], __ATOMIC_RELAXED) & allowed->w[w];

				ret->w[w] = bits;
				any |= bits;
			}
		}
		if (any) {
			*ret_level = level;
			return 0;
		}
	}
	return -ENOENT;
}

void cpupri_level_cpus(const struct cpupri_view *v, __u32 level, const struct cpupri_mask *allowed,
		       struct rtplace_cpumask *ret)
{
	const __u64 *m = cpupri_level_words(v, level);

	cpuset_zero(ret);
	if (level >= LEVEL_COUNT)
		return;
	for (__u32 i = 0; i < CPUSET_WORDS; i++) {
		for (__u32 k = v->cpu_pieces[i]; k < v->cpu_pieces[i + 1]; k++) {
			const struct cpupri_piece *p = &v->pieces[k];
			__u64 bits;

			if (p->word < allowed->lo || p->word >= allowed->hi)
				continue;
			/* Every shard's words, whatever its hint, and relaxed:
			 * callers that need the bits of the CPUs a count counts
			 * load the count first. */
			bits = __atomic_load_n(&m[p->word], __ATOMIC_RELAXED) & allowed->w[p->word];
			ret->bits[i] |= ((bits >> p->bit) & p->mask) << p->at;
		}
	}
}
