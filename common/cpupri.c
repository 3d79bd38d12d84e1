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
	g.masks_off = g.counts_off + LEVEL_COUNT * (__u32)sizeof(struct cpupri_count);
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
	}
	*cpupri_count_ptr(map, g, LEVEL_OFFLINE) = (__s32)g->ncpus;
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

int cpupri_view_open(const void *map, size_t size, struct cpupri_view *ret)
{
	const struct cpupri_header *h = map;
	struct cpupri_geom g;
	size_t nbits;
	__u16 *shard_cpu;

	if ((uintptr_t)map % CPUPRI_LINE || size < sizeof(*h) || h->magic != CPUPRI_MAGIC ||
	    h->version != CPUPRI_VERSION)
		return -EINVAL;
	g = h->geom;
	if (g.size > size || g.ncpus == 0 || g.ncpus > CPUPRI_MAX_CPUS || g.nshards == 0 ||
	    g.nshards > CPUPRI_MAX_SHARDS || g.shard_words == 0 || g.shard_words % CPUPRI_LINE_WORDS)
		return -EINVAL;
	nbits = (size_t)g.nshards * g.shard_words * 64;
	shard_cpu = malloc(nbits * sizeof(*shard_cpu));
	if (!shard_cpu)
		return -ENOMEM;
	for (size_t i = 0; i < nbits; i++)
		shard_cpu[i] = CPUPRI_NO_CPU;
	for (__u32 cpu = 0; cpu < g.ncpus; cpu++) {
		const struct cpupri_slot *slot = cpupri_slot_ptr((void *)map, &g, cpu);

		if (slot->shard >= g.nshards || slot->bit >= g.shard_words * 64) {
			free(shard_cpu);
			return -EINVAL;
		}
		shard_cpu[(size_t)slot->shard * g.shard_words * 64 + slot->bit] = (__u16)cpu;
	}
	ret->map = map;
	ret->geom = g;
	ret->shard_cpu = shard_cpu;
	return 0;
}

void cpupri_view_close(struct cpupri_view *v)
{
	free(v->shard_cpu);
	v->shard_cpu = NULL;
}

__u32 cpupri_level(const struct cpupri_view *v, __u32 cpu)
{
	__u32 level;

	if (cpu >= v->geom.ncpus)
		return LEVEL_OFFLINE;
	level = __atomic_load_n(&cpupri_slot_ptr((void *)v->map, &v->geom, cpu)->level, __ATOMIC_ACQUIRE);
	return level < LEVEL_COUNT ? level : LEVEL_OFFLINE;
}

__s32 cpupri_count(const struct cpupri_view *v, __u32 level)
{
	if (level >= LEVEL_COUNT)
		return 0;
	return __atomic_load_n(cpupri_count_ptr((void *)v->map, &v->geom, level), __ATOMIC_ACQUIRE);
}

int cpupri_mask_new(const struct cpupri_view *v, struct cpupri_mask *ret)
{
	__u32 nwords = v->geom.nshards * v->geom.shard_words;

	ret->w = calloc(nwords, sizeof(*ret->w));
	if (!ret->w)
		return -ENOMEM;
	ret->nwords = nwords;
	memset(ret->shard_nonempty, 0, sizeof(ret->shard_nonempty));
	return 0;
}

void cpupri_mask_free(struct cpupri_mask *m)
{
	free(m->w);
	m->w = NULL;
}

void cpupri_mask_from_cpuset(const struct cpupri_view *v, const struct cpuset *set, struct cpupri_mask *m)
{
	memset(m->w, 0, m->nwords * sizeof(*m->w));
	memset(m->shard_nonempty, 0, sizeof(m->shard_nonempty));
	CPUSET_FOREACH(cpu, set) {
		const struct cpupri_slot *slot;

		if ((__u32)cpu >= v->geom.ncpus)
			break;
		slot = cpupri_slot_ptr((void *)v->map, &v->geom, (__u32)cpu);
		m->w[slot->shard * v->geom.shard_words + slot->bit / 64] |= (__u64)1 << (slot->bit % 64);
		m->shard_nonempty[slot->shard / 64] |= (__u64)1 << (slot->shard % 64);
	}
}

/* ORs the CPUs of one shard's mask words at level, restricted to allowed, into ret. */
static bool cpupri_shard_cpus(const struct cpupri_view *v, __u32 level, __u32 shard,
			      const struct cpupri_mask *allowed, struct cpuset *ret)
{
	const __u32 words = v->geom.shard_words;
	bool any = false;

	for (__u32 i = 0; i < words; i++) {
		__u64 a = allowed->w[shard * words + i];
		__u64 bits;

		if (!a)
			continue;
		bits = __atomic_load_n(cpupri_word_ptr((void *)v->map, &v->geom, level, shard, i),
				       __ATOMIC_RELAXED) & a;
		while (bits) {
			__u32 bit = i * 64 + (__u32)__builtin_ctzll(bits);

			cpuset_set(ret, v->shard_cpu[shard * words * 64 + bit]);
			bits &= bits - 1;
			any = true;
		}
	}
	return any;
}

void cpupri_level_cpus(const struct cpupri_view *v, __u32 level, const struct cpupri_mask *allowed,
		       struct cpuset *ret)
{
	cpuset_zero(ret);
	if (level >= LEVEL_COUNT)
		return;
	for (__u32 s = 0; s < v->geom.nshards; s++)
		if ((allowed->shard_nonempty[s / 64] >> (s % 64)) & 1)
			cpupri_shard_cpus(v, level, s, allowed, ret);
}

int cpupri_find(const struct cpupri_view *v, __u32 below, const struct cpupri_mask *allowed,
		struct cpuset *ret_cpus, __u32 *ret_level)
{
	struct cpuset cpus;

	if (below > LEVEL_COUNT)
		below = LEVEL_COUNT;
	for (__u32 level = LEVEL_OFFLINE + 1; level < below; level++) {
		/* The acquire load of the count pairs with the writer's increment,
		 * which follows its bit set: a non-zero count makes the bits of
		 * the CPUs it counts visible to the mask loads that follow. */
		if (cpupri_count(v, level) <= 0)
			continue;
		cpupri_level_cpus(v, level, allowed, &cpus);
		if (!cpuset_empty(&cpus)) {
			*ret_cpus = cpus;
			*ret_level = level;
			return 0;
		}
	}
	return -ENOENT;
}

int cpupri_xlate_new(const struct cpupri_view *v, struct cpupri_xlate *ret)
{
	const __u32 nwords = v->geom.nshards * v->geom.shard_words;
	struct cpupri_run *runs;
	__u32 *word_runs, n = 0;

	/* A run per bit is the most there can be. */
	word_runs = malloc((nwords + 1) * sizeof(*word_runs));
	runs = malloc((size_t)nwords * 64 * sizeof(*runs));
	if (!word_runs || !runs) {
		free(word_runs);
		free(runs);
		return -ENOMEM;
	}
	for (__u32 w = 0; w < nwords; w++) {
		word_runs[w] = n;
		for (__u32 bit = 0; bit < 64; bit++) {
			__u16 cpu = v->shard_cpu[w * 64 + bit];

			if (cpu == CPUPRI_NO_CPU || cpu >= RTPLACE_MAX_CPUS)
				continue;
			if (n > word_runs[w] && runs[n - 1].bit + runs[n - 1].len == bit &&
			    runs[n - 1].cpu + runs[n - 1].len == cpu)
				runs[n - 1].len++;
			else
				runs[n++] = (struct cpupri_run){ .cpu = cpu, .bit = (__u8)bit, .len = 1 };
		}
	}
	word_runs[nwords] = n;
	ret->nwords = nwords;
	ret->shard_words = v->geom.shard_words;
	ret->word_runs = word_runs;
	ret->runs = runs;
	return 0;
}

void cpupri_xlate_free(struct cpupri_xlate *x)
{
	free(x->word_runs);
	free(x->runs);
	x->word_runs = NULL;
	x->runs = NULL;
}

static __u64 cpupri_low_bits(__u32 len)
{
	return len >= 64 ? ~(__u64)0 : ((__u64)1 << len) - 1;
}

void cpupri_xlate_mask(const struct cpupri_xlate *x, const struct cpuset *set, struct cpupri_mask *m)
{
	memset(m->shard_nonempty, 0, sizeof(m->shard_nonempty));
	for (__u32 w = 0; w < x->nwords; w++) {
		__u64 word = 0;

		for (__u32 i = x->word_runs[w]; i < x->word_runs[w + 1]; i++) {
			const struct cpupri_run *run = &x->runs[i];
			__u32 lo = run->cpu / 64, sh = run->cpu % 64;
			__u64 bits = set->w[lo] >> sh;

			/* A run of up to 64 CPUs may straddle two cpuset words. */
			if (sh && lo + 1 < CPUSET_WORDS)
				bits |= set->w[lo + 1] << (64 - sh);
			word |= (bits & cpupri_low_bits(run->len)) << run->bit;
		}
		m->w[w] = word;
		if (word)
			m->shard_nonempty[w / x->shard_words / 64] |= (__u64)1 << (w / x->shard_words % 64);
	}
}

void cpupri_xlate_level(const struct cpupri_view *v, const struct cpupri_xlate *x, __u32 level,
			const struct cpupri_mask *allowed, struct cpuset *ret)
{
	if (level >= LEVEL_COUNT)
		return;
	for (__u32 s = 0; s < v->geom.nshards; s++) {
		if (!((allowed->shard_nonempty[s / 64] >> (s % 64)) & 1))
			continue;
		for (__u32 i = 0; i < x->shard_words; i++) {
			__u32 w = s * x->shard_words + i;
			__u64 bits;

			if (!allowed->w[w])
				continue;
			/* Relaxed, as in cpupri_shard_cpus(): the caller's acquire
			 * load of the level's count orders these loads. */
			bits = __atomic_load_n(cpupri_word_ptr((void *)v->map, &v->geom, level, s, i), __ATOMIC_RELAXED) &
			       allowed->w[w];
			for (__u32 k = x->word_runs[w]; bits && k < x->word_runs[w + 1]; k++) {
				const struct cpupri_run *run = &x->runs[k];
				__u64 piece = (bits >> run->bit) & cpupri_low_bits(run->len);
				__u32 lo = run->cpu / 64, sh = run->cpu % 64;

				if (!piece)
					continue;
				ret->w[lo] |= piece << sh;
				if (sh && lo + 1 < CPUSET_WORDS)
					ret->w[lo + 1] |= piece >> (64 - sh);
			}
		}
	}
}
