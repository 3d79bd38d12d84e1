/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * map-layouts: what the layout of the cpupri map costs its writer and its
 * reader (DESIGN §11), every layout measured side by side in one run.
 *
 * Five layouts of the same information, which CPUs are at which level:
 *   packed        the kernel's old struct cpupri_vec built with NR_CPUS=512:
 *                 a count and an inline 512-bit mask per level, 72 bytes, so a
 *                 level's count shares a line with its own mask and with the
 *                 tail of the level below; the writer keeps each CPU's level
 *                 in a plain int array (the kernel's cpu_to_pri);
 *   padded        each level's count and its one global mask in lines of
 *                 their own;
 *   node-sharded  the production map (common/cpupri.h), a shard per node;
 *   llc-sharded   the same map, a shard per LLC;
 *   byte-per-cpu  one byte per CPU holding its level, written with a plain
 *                 store; a reader scans the bytes of the CPUs it may use.
 *
 * Two machine shapes: the 480-CPU one that motivated the design (2 nodes,
 * one LLC each, 120 cores x 2 threads) and a 256-CPU EPYC-like one (2 nodes
 * of 8 LLCs), where node and LLC shards differ.
 *
 * A writer thread replays a fixed random sequence of level changes of the
 * simulated CPUs (cpupri_set's pattern); a reader thread on another CPU asks
 * cpupri_find's question: the lowest level below rt99 or rt50 that has a CPU
 * among all CPUs, or among node 0's CPUs. For node 0 the sharded readers
 * read only node 0's shards, which is what sharding is for; their answer is
 * the production one, left in the map's bits (cpupri_find()). Each side is
 * timed alone and both together, and two writers, one per CPU, replay the
 * changes of node 0's CPUs and of the others' at once (writers storing
 * different CPUs' levels into shared count and mask lines). Every layout
 * takes its turn inside each repeat so that drift hits them all, and the
 * median of the repeats is printed with its ratio to packed. A model of the
 * cache lines each layout writes per change and reads per query, for 480
 * CPUs in 2 nodes and 1,024 CPUs in 8 nodes, follows the timings, with what
 * the sharded map's per-shard counts (its "has CPUs here" hints) save a
 * reader when few shards hold CPUs at a level.
 *
 * Passing a line between the two CPUs sets most of the contended cost, and
 * on a VM it changes with host placement within seconds (DESIGN §12), so a
 * ping-pong hand-off latency is measured before, between repeats and after.
 *
 * Before timing and after it, every layout's counts and answers are checked
 * against a plain reference computed from the replayed sequence: a layout
 * that gets the wrong answer fast must not win. Exit 1 when they disagree,
 * 2 on a usage or system error.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchlib.h"
#include "cpupri.h"
#include "cpuset.h"
#include "levels.h"
#include "topo.h"

#define ML_LINE 64
/* The packed and padded masks are NR_CPUS=512 wide: both shapes fit. */
#define ML_MASK_WORDS 8
#define ML_MAX_CPUS (ML_MASK_WORDS * 64)
#define ML_SEQ_CHANGES 65536
/* Operations between two clock reads: the clock costs under 1% of a batch. */
#define ML_BATCH 256
#define ML_REPEATS_MAX 99
#define ML_NQUERIES 4
#define ML_NSHAPES 2
#define ML_SEED UINT64_C(0x9e3779b97f4a7c15)

enum ml_layout { ML_PACKED, ML_PADDED, ML_NODE, ML_LLC, ML_BYTE, ML_NLAYOUTS };

static const char *const ml_layout_names[ML_NLAYOUTS] = {
	[ML_PACKED] = "packed",
	[ML_PADDED] = "padded",
	[ML_NODE] = "node-sharded",
	[ML_LLC] = "llc-sharded",
	[ML_BYTE] = "byte-per-cpu",
};

/* What one measurement yields; a contended run yields two numbers. */
enum ml_metric {
	ML_WRITER_ALONE,
	ML_TWO_WRITERS,
	ML_READER_ALONE,                          /* + query */
	ML_READER_BOTH = ML_READER_ALONE + ML_NQUERIES, /* + query */
	ML_WRITER_BOTH = ML_READER_BOTH + ML_NQUERIES,  /* + query */
	ML_NMETRICS = ML_WRITER_BOTH + ML_NQUERIES,
};

/*
 * The kernel's struct cpupri_vec with an inline cpumask (CPUMASK_OFFSTACK=n,
 * NR_CPUS=512), in an array of one per level: 72 bytes, so count and mask of
 * a level share a line and consecutive levels share the lines between them.
 */
struct ml_packed_vec {
	__s32 count;
	__u64 mask[ML_MASK_WORDS];
};

struct ml_packed {
	struct ml_packed_vec vec[LEVEL_COUNT];
	/* Allocated apart in the kernel: its own lines here too. */
	__s32 cpu_to_pri[ML_MAX_CPUS] __attribute__((aligned(ML_LINE)));
};

_Static_assert(sizeof(struct ml_packed_vec) == 72, "the kernel's vec: count, pad, 8 words");
_Static_assert(offsetof(struct ml_packed_vec, mask) == 8, "mask follows count in the same line");
_Static_assert(offsetof(struct ml_packed, cpu_to_pri) % ML_LINE == 0, "cpu_to_pri on its own lines");

/* One global count per level, a line of its own. */
struct ml_padded_count {
	__s32 count;
} __attribute__((aligned(ML_LINE)));

/* One global mask per level, a line of its own. */
struct ml_padded_mask {
	__u64 w[ML_MASK_WORDS];
} __attribute__((aligned(ML_LINE)));

struct ml_padded {
	struct ml_padded_count count[LEVEL_COUNT];
	struct ml_padded_mask mask[LEVEL_COUNT];
	__s32 cpu_to_pri[ML_MAX_CPUS] __attribute__((aligned(ML_LINE)));
};

_Static_assert(sizeof(struct ml_padded_count) == ML_LINE, "a padded count is one line");
_Static_assert(sizeof(struct ml_padded_mask) == ML_LINE, "a padded mask is one line");
_Static_assert(offsetof(struct ml_padded, mask) % ML_LINE == 0, "masks start on a line");
_Static_assert(offsetof(struct ml_padded, cpu_to_pri) % ML_LINE == 0, "cpu_to_pri on its own lines");

/* One level change of the writer's sequence. */
struct ml_change {
	__u16 cpu;
	__u8 level;
	__u8 unused;
};

_Static_assert(sizeof(struct ml_change) == 4, "the sequence is 4 bytes a change");

struct ml_query {
	char name[24];
	__u32 below;
	struct rtplace_cpumask allowed;
};

/*
 * A reader's answer. The global-mask readers build the CPU set, as the
 * kernel's cpupri_find() hands back its mask; the sharded reader leaves it
 * in the map's bits (cpupri_find()), converted only when checked.
 */
#define ML_ANSWER_WORDS 256

struct ml_answer {
	struct rtplace_cpumask cpus;
	struct cpupri_mask words;
	__u64 buf[ML_ANSWER_WORDS];
};

/* One layout instantiated for one shape, with the allowed sets in the form
 * its reader takes, prepared before timing. */
struct ml_map {
	enum ml_layout layout;
	size_t size; /* bytes of the structure, per-CPU level storage included */
	void *mem;
	struct cpupri_geom geom;          /* sharded */
	struct cpupri_view view;          /* sharded */
	struct cpupri_mask mask[ML_NQUERIES]; /* sharded */
	__u16 *cpus[ML_NQUERIES];         /* byte-per-cpu: the allowed CPUs */
	__u32 ncpus[ML_NQUERIES];
	size_t pos; /* the writer's place in the sequence */
};

struct ml_shape {
	const char *name;
	struct topo *topo;
	__u32 ncpus;
	__u8 *initial;         /* [ncpus] level of each CPU before the sequence */
	struct ml_change *seq; /* returns every CPU to its initial level */
	size_t nseq;
	/* seq split by the simulated CPU's node (node 0, the rest), for two writers */
	struct ml_change *wseq[2];
	size_t nwseq[2];
	struct ml_query query[ML_NQUERIES];
	struct ml_map map[ML_NLAYOUTS];
	double result[ML_NLAYOUTS][ML_NMETRICS][ML_REPEATS_MAX];
};

struct ml_options {
	unsigned repeats;
	unsigned run_ms;
	unsigned pingpong_rounds;
	int reader_cpu;
	int writer_cpu;
	bool quick;
	bool model_only;
};

/* One timed run of a writer and/or a reader on one map. */
struct ml_job {
	struct ml_shape *shape;
	struct ml_map *map;
	unsigned query;
	__u64 run_ns;
	int nthreads;
	int reader_cpu;
	int writer_cpu;
	int ready __attribute__((aligned(ML_LINE))); /* spin barrier, its own line */
	double writer_ns __attribute__((aligned(ML_LINE)));
	double reader_ns;
	__u64 sink;
	int err;
};

static inline void ml_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static __u64 ml_rand(__u64 *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * UINT64_C(0x2545f4914f6cdd1d);
}

/*
 * A busy machine, as in the 60-ffmpeg case: most CPUs run RT work, a few
 * are idle, so readers usually stop at idle or normal but must scan the
 * empty levels in between when a node has none of those.
 */
static __u32 ml_draw_level(__u64 *rng)
{
	__u32 r = (__u32)(ml_rand(rng) % 100);

	if (r < 2)
		return LEVEL_IDLE;
	if (r < 10)
		return LEVEL_NORMAL;
	if (r < 20)
		return level_from_rt_priority(10);
	if (r < 50)
		return level_from_rt_priority(50);
	return level_from_rt_priority(99);
}

/* ---- packed ---- */

/* The common writer of the unsharded layouts, in the kernel's order (and
 * cpupri_set's): new bit, new count, old count, old bit; locked
 * read-modify-writes are full barriers. Inlined, so that each layout's
 * strides are constants as in a writer of its own. */
static __always_inline void ml_global_set(__s32 *cpu_to_pri, __s32 *count, size_t count_stride, __u64 *mask,
					 size_t mask_stride, __u32 cpu, __u32 level)
{
	__u32 old = (__u32)cpu_to_pri[cpu];
	__u64 bit = (__u64)1 << (cpu % 64);

	if (old == level)
		return;
	__atomic_fetch_or((__u64 *)((char *)mask + level * mask_stride) + cpu / 64, bit, __ATOMIC_SEQ_CST);
	__atomic_fetch_add((__s32 *)((char *)count + level * count_stride), 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub((__s32 *)((char *)count + old * count_stride), 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_and((__u64 *)((char *)mask + old * mask_stride) + cpu / 64, ~bit, __ATOMIC_SEQ_CST);
	cpu_to_pri[cpu] = (__s32)level;
}

static void ml_packed_set(struct ml_packed *p, __u32 cpu, __u32 level)
{
	ml_global_set(p->cpu_to_pri, &p->vec[0].count, sizeof(p->vec[0]), p->vec[0].mask, sizeof(p->vec[0]), cpu,
		      level);
}

/* The common reader of the unsharded layouts: count (acquire, pairs with
 * the writer's increment), then the mask words intersected with allowed. */
static int ml_global_find(const __s32 *count, size_t count_stride, const __u64 *mask, size_t mask_stride,
			  __u32 below, const struct rtplace_cpumask *allowed, struct rtplace_cpumask *ret, __u32 *ret_level)
{
	for (__u32 level = LEVEL_OFFLINE + 1; level < below; level++) {
		const __s32 *c = (const __s32 *)((const char *)count + level * count_stride);
		const __u64 *m = (const __u64 *)((const char *)mask + level * mask_stride);
		__u64 any = 0;

		if (__atomic_load_n(c, __ATOMIC_ACQUIRE) <= 0)
			continue;
		cpuset_zero(ret);
		for (int i = 0; i < ML_MASK_WORDS; i++) {
			ret->bits[i] = __atomic_load_n(&m[i], __ATOMIC_RELAXED) & allowed->bits[i];
			any |= ret->bits[i];
		}
		if (any) {
			*ret_level = level;
			return 0;
		}
	}
	return -ENOENT;
}

static int ml_packed_find(const struct ml_packed *p, __u32 below, const struct rtplace_cpumask *allowed, struct rtplace_cpumask *ret,
			  __u32 *ret_level)
{
	return ml_global_find(&p->vec[0].count, sizeof(p->vec[0]), p->vec[0].mask, sizeof(p->vec[0]), below,
			      allowed, ret, ret_level);
}

/* ---- padded ---- */

static void ml_padded_set(struct ml_padded *p, __u32 cpu, __u32 level)
{
	ml_global_set(p->cpu_to_pri, &p->count[0].count, sizeof(p->count[0]), p->mask[0].w, sizeof(p->mask[0]), cpu,
		      level);
}

static int ml_padded_find(const struct ml_padded *p, __u32 below, const struct rtplace_cpumask *allowed, struct rtplace_cpumask *ret,
			  __u32 *ret_level)
{
	return ml_global_find(&p->count[0].count, sizeof(p->count[0]), p->mask[0].w, sizeof(p->mask[0]), below,
			      allowed, ret, ret_level);
}

/* ---- byte per CPU ---- */

static void ml_byte_set(__u8 *levels, __u32 cpu, __u32 level)
{
	/* One writer per CPU and readers that take any recent value: a plain
	 * store, no read-modify-write, no count to keep. */
	__atomic_store_n(&levels[cpu], (__u8)level, __ATOMIC_RELAXED);
}

static int ml_byte_find(const __u8 *levels, __u32 below, const __u16 *cpus, __u32 ncpus, struct rtplace_cpumask *ret,
			__u32 *ret_level)
{
	__u32 best = below;

	cpuset_zero(ret);
	for (__u32 i = 0; i < ncpus; i++) {
		__u32 level = __atomic_load_n(&levels[cpus[i]], __ATOMIC_RELAXED);

		if (level == LEVEL_OFFLINE || level > best || level >= below)
			continue;
		if (level < best) {
			best = level;
			cpuset_zero(ret);
		}
		cpuset_set(ret, cpus[i]);
	}
	if (best == below)
		return -ENOENT;
	*ret_level = best;
	return 0;
}

/* ---- dispatch ---- */

static void ml_set(struct ml_map *m, __u32 cpu, __u32 level)
{
	switch (m->layout) {
	case ML_PACKED:
		ml_packed_set(m->mem, cpu, level);
		break;
	case ML_PADDED:
		ml_padded_set(m->mem, cpu, level);
		break;
	case ML_NODE:
	case ML_LLC:
		cpupri_set(m->mem, &m->geom, cpu, level);
		break;
	case ML_BYTE:
		ml_byte_set(m->mem, cpu, level);
		break;
	case ML_NLAYOUTS:
		break;
	}
}

static void ml_answer_init(struct ml_answer *a)
{
	a->words = (struct cpupri_mask){ .w = a->buf, .nwords = ML_ANSWER_WORDS };
}

static int ml_find(const struct ml_map *m, const struct ml_query *q, unsigned qi, struct ml_answer *ret,
		   __u32 *ret_level)
{
	switch (m->layout) {
	case ML_PACKED:
		return ml_packed_find(m->mem, q->below, &q->allowed, &ret->cpus, ret_level);
	case ML_PADDED:
		return ml_padded_find(m->mem, q->below, &q->allowed, &ret->cpus, ret_level);
	case ML_NODE:
	case ML_LLC:
		return cpupri_find(&m->view, LEVEL_IDLE, q->below, &m->mask[qi], &ret->words, ret_level);
	case ML_BYTE:
		return ml_byte_find(m->mem, q->below, m->cpus[qi], m->ncpus[qi], &ret->cpus, ret_level);
	case ML_NLAYOUTS:
		break;
	}
	return -EINVAL;
}

/* Number of CPUs at level as the layout records it (byte-per-cpu has no
 * counts: its count is what a scan finds). */
static __s32 ml_count(const struct ml_map *m, __u32 ncpus, __u32 level)
{
	const struct ml_packed *pk = m->mem;
	const struct ml_padded *pd = m->mem;
	const __u8 *b = m->mem;
	__s32 n = 0;

	switch (m->layout) {
	case ML_PACKED:
		return pk->vec[level].count;
	case ML_PADDED:
		return pd->count[level].count;
	case ML_NODE:
	case ML_LLC:
		return cpupri_count(&m->view, level);
	case ML_BYTE:
		for (__u32 c = 0; c < ncpus; c++)
			n += b[c] == level;
		return n;
	case ML_NLAYOUTS:
		break;
	}
	return -1;
}

/* ---- setup ---- */

static int ml_alloc(size_t size, void **ret)
{
	size_t rounded = (size + ML_LINE - 1) / ML_LINE * ML_LINE;
	void *p = aligned_alloc(ML_LINE, rounded);

	if (!p)
		return -ENOMEM;
	memset(p, 0, rounded);
	*ret = p;
	return 0;
}

static void ml_map_free(struct ml_map *m)
{
	for (unsigned q = 0; q < ML_NQUERIES; q++) {
		if (m->layout == ML_NODE || m->layout == ML_LLC)
			cpupri_mask_free(&m->mask[q]);
		free(m->cpus[q]);
	}
	if (m->layout == ML_NODE || m->layout == ML_LLC)
		cpupri_view_close(&m->view);
	free(m->mem);
	m->mem = NULL;
}

static int ml_sharded_init(struct ml_map *m, const struct ml_shape *s, enum topo_shard mode)
{
	int r;

	r = cpupri_map_open(s->topo, mode, &m->mem, &m->view);
	if (r == 0) {
		m->geom = m->view.geom;
		m->size = m->geom.size;
	}
	for (unsigned q = 0; r == 0 && q < ML_NQUERIES; q++) {
		r = cpupri_mask_new(&m->view, &m->mask[q]);
		if (r == 0)
			cpupri_mask_from_cpuset(&m->view, &s->query[q].allowed, &m->mask[q]);
	}
	return r;
}

/* An unsharded layout's LEVEL_OFFLINE count and mask with all ncpus in. */
static void ml_global_offline(__s32 *count, __u64 *mask, __u32 ncpus)
{
	*count = (__s32)ncpus;
	for (__u32 c = 0; c < ncpus; c++)
		mask[c / 64] |= (__u64)1 << (c % 64);
}

/* Creates the layout with every CPU offline, then puts each at its
 * initial level through the layout's own writer. */
static int ml_map_init(struct ml_map *m, struct ml_shape *s, enum ml_layout layout)
{
	struct ml_packed *pk;
	struct ml_padded *pd;
	int r = 0;

	m->layout = layout;
	switch (layout) {
	case ML_PACKED:
		r = ml_alloc(sizeof(*pk), &m->mem);
		if (r < 0)
			break;
		pk = m->mem;
		m->size = offsetof(struct ml_packed, cpu_to_pri) + s->ncpus * sizeof(pk->cpu_to_pri[0]);
		ml_global_offline(&pk->vec[LEVEL_OFFLINE].count, pk->vec[LEVEL_OFFLINE].mask, s->ncpus);
		break;
	case ML_PADDED:
		r = ml_alloc(sizeof(*pd), &m->mem);
		if (r < 0)
			break;
		pd = m->mem;
		m->size = offsetof(struct ml_padded, cpu_to_pri) + s->ncpus * sizeof(pd->cpu_to_pri[0]);
		ml_global_offline(&pd->count[LEVEL_OFFLINE].count, pd->mask[LEVEL_OFFLINE].w, s->ncpus);
		break;
	case ML_NODE:
	case ML_LLC:
		r = ml_sharded_init(m, s, layout == ML_NODE ? TOPO_SHARD_NODE : TOPO_SHARD_LLC);
		break;
	case ML_BYTE:
		m->size = s->ncpus;
		r = ml_alloc(m->size, &m->mem);
		for (unsigned q = 0; r == 0 && q < ML_NQUERIES; q++) {
			m->cpus[q] = calloc(s->ncpus, sizeof(*m->cpus[q]));
			if (!m->cpus[q]) {
				r = -ENOMEM;
				break;
			}
			CPUSET_FOREACH(cpu, &s->query[q].allowed) {
				if ((__u32)cpu >= s->ncpus)
					break;
				m->cpus[q][m->ncpus[q]++] = (__u16)cpu;
			}
		}
		break;
	case ML_NLAYOUTS:
		r = -EINVAL;
		break;
	}
	if (r < 0)
		return r;
	for (__u32 c = 0; c < s->ncpus; c++)
		ml_set(m, c, s->initial[c]);
	return 0;
}

/* Draws the initial levels and a sequence of real changes (never to the
 * level a CPU is at) that ends with every CPU back at its initial level,
 * so that replaying it in a loop keeps every change real. */
static int ml_sequence(struct ml_shape *s)
{
	__u64 rng = ML_SEED ^ s->ncpus;
	__u8 *now;
	size_t n = 0;

	s->initial = calloc(s->ncpus, 1);
	now = calloc(s->ncpus, 1);
	s->seq = calloc(ML_SEQ_CHANGES + s->ncpus, sizeof(*s->seq));
	if (!s->initial || !now || !s->seq) {
		free(now);
		return -ENOMEM;
	}
	for (__u32 c = 0; c < s->ncpus; c++)
		s->initial[c] = now[c] = (__u8)ml_draw_level(&rng);
	while (n < ML_SEQ_CHANGES) {
		__u32 cpu = (__u32)(ml_rand(&rng) % s->ncpus);
		__u32 level = ml_draw_level(&rng);

		if (level == now[cpu])
			continue;
		s->seq[n++] = (struct ml_change){ .cpu = (__u16)cpu, .level = (__u8)level };
		now[cpu] = (__u8)level;
	}
	for (__u32 c = 0; c < s->ncpus; c++)
		if (now[c] != s->initial[c])
			s->seq[n++] = (struct ml_change){ .cpu = (__u16)c, .level = s->initial[c] };
	s->nseq = n;
	free(now);
	/* Each CPU's changes keep their order, so each half also returns its
	 * CPUs to their initial levels. */
	for (int k = 0; k < 2; k++) {
		s->wseq[k] = calloc(n, sizeof(*s->wseq[k]));
		if (!s->wseq[k])
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int k = s->topo->cpus[s->seq[i].cpu].node != 0;

		s->wseq[k][s->nwseq[k]++] = s->seq[i];
	}
	return 0;
}

static void ml_query_init(struct ml_query *q, int prio, const char *set_name, const struct rtplace_cpumask *allowed)
{
	snprintf(q->name, sizeof(q->name), "P%d, %s", prio, set_name);
	q->below = level_from_rt_priority(prio);
	q->allowed = *allowed;
}

static int ml_shape_init(struct ml_shape *s, const char *name, __u32 packages, __u32 llcs_per_node,
			 __u32 cores_per_llc)
{
	int r;

	s->name = name;
	r = topo_synthetic(packages, 1, llcs_per_node, cores_per_llc, 2, &s->topo);
	if (r < 0)
		return r;
	s->ncpus = s->topo->ncpus;
	if (s->ncpus > ML_MAX_CPUS)
		return -E2BIG;
	ml_query_init(&s->query[0], 99, "all CPUs", &s->topo->online);
	ml_query_init(&s->query[1], 99, "node 0", &s->topo->node_cpus[0]);
	ml_query_init(&s->query[2], 50, "all CPUs", &s->topo->online);
	ml_query_init(&s->query[3], 50, "node 0", &s->topo->node_cpus[0]);
	r = ml_sequence(s);
	for (unsigned l = 0; r == 0 && l < ML_NLAYOUTS; l++)
		r = ml_map_init(&s->map[l], s, (enum ml_layout)l);
	return r;
}

static void ml_shape_free(struct ml_shape *s)
{
	for (unsigned l = 0; l < ML_NLAYOUTS; l++)
		ml_map_free(&s->map[l]);
	topo_free(s->topo);
	free(s->initial);
	free(s->seq);
	free(s->wseq[0]);
	free(s->wseq[1]);
}

/* The answer computed from a plain array of levels, by the definition. */
static int ml_reference_find(const __u8 *levels, __u32 ncpus, const struct ml_query *q, struct rtplace_cpumask *ret,
			     __u32 *ret_level)
{
	__u32 best = LEVEL_COUNT;

	CPUSET_FOREACH(cpu, &q->allowed)
		if ((__u32)cpu < ncpus && levels[cpu] != LEVEL_OFFLINE && levels[cpu] < q->below &&
		    levels[cpu] < best)
			best = levels[cpu];
	if (best == LEVEL_COUNT)
		return -ENOENT;
	cpuset_zero(ret);
	CPUSET_FOREACH(cpu, &q->allowed)
		if ((__u32)cpu < ncpus && levels[cpu] == best)
			cpuset_set(ret, (unsigned)cpu);
	*ret_level = best;
	return 0;
}

/* Checks every layout's counts and answers against the state its writer's
 * position in the sequence implies. Returns 0 or -EPROTO (and says where). */
static int ml_verify(struct ml_shape *s)
{
	__u8 *levels = malloc(s->ncpus);
	int r = 0;

	if (!levels)
		return -ENOMEM;
	for (unsigned l = 0; l < ML_NLAYOUTS; l++) {
		struct ml_map *m = &s->map[l];

		memcpy(levels, s->initial, s->ncpus);
		for (size_t i = 0; i < m->pos; i++)
			levels[s->seq[i].cpu] = s->seq[i].level;
		for (__u32 level = 0; level < LEVEL_COUNT; level++) {
			__s32 want = 0;

			for (__u32 c = 0; c < s->ncpus; c++)
				want += levels[c] == level;
			if (ml_count(m, s->ncpus, level) != want) {
				fprintf(stderr, "map-layouts: %s, %s: level %u counts %d CPUs, expected %d\n", s->name,
					ml_layout_names[l], level, ml_count(m, s->ncpus, level), want);
				r = -EPROTO;
			}
		}
		for (unsigned q = 0; q < ML_NQUERIES; q++) {
			struct rtplace_cpumask want;
			struct ml_answer got;
			__u32 want_level = 0, got_level = 0;
			int want_r = ml_reference_find(levels, s->ncpus, &s->query[q], &want, &want_level);
			int got_r;

			ml_answer_init(&got);
			got_r = ml_find(m, &s->query[q], q, &got, &got_level);
			if (got_r == 0 && (l == ML_NODE || l == ML_LLC))
				cpupri_mask_to_cpuset(&m->view, &got.words, &got.cpus);
			if (want_r != got_r ||
			    (want_r == 0 && (want_level != got_level || !cpuset_equal(&want, &got.cpus)))) {
				fprintf(stderr, "map-layouts: %s, %s, %s: wrong answer (%d, level %u; expected %d, level %u)\n",
					s->name, ml_layout_names[l], s->query[q].name, got_r, got_level, want_r,
					want_level);
				r = -EPROTO;
			}
		}
	}
	free(levels);
	return r;
}

/* ---- timed runs ---- */

static void ml_barrier(struct ml_job *j)
{
	__atomic_fetch_add(&j->ready, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&j->ready, __ATOMIC_ACQUIRE) < j->nthreads)
		ml_cpu_relax();
}

/* A thread that is not where it was pinned fails the run, after it took
 * its part (the other thread waits for it at the barrier). */
static void ml_check_cpu(struct ml_job *j, int cpu)
{
	if (sched_getcpu() != cpu)
		__atomic_store_n(&j->err, -EXDEV, __ATOMIC_RELAXED);
}

/* Replays seq from *pos on j's map for j->run_ns; returns ns per change. */
static double ml_replay(struct ml_job *j, const struct ml_change *seq, size_t nseq, size_t *pos)
{
	size_t p = *pos;
	__u64 t0, t, ops = 0;

	t0 = bench_now_ns();
	do {
		for (unsigned i = 0; i < ML_BATCH; i++) {
			ml_set(j->map, seq[p].cpu, seq[p].level);
			if (++p == nseq)
				p = 0;
		}
		ops += ML_BATCH;
		t = bench_now_ns();
	} while (t - t0 < j->run_ns);
	*pos = p;
	return (double)(t - t0) / (double)ops;
}

static void *ml_writer_main(void *arg)
{
	struct ml_job *j = arg;

	ml_check_cpu(j, j->writer_cpu);
	ml_barrier(j);
	j->writer_ns = ml_replay(j, j->shape->seq, j->shape->nseq, &j->map->pos);
	return NULL;
}

/* One of two writers, each replaying the changes of its half of the
 * simulated CPUs (struct ml_shape.wseq). */
struct ml_half {
	struct ml_job *j;
	int cpu;
	const struct ml_change *seq;
	size_t nseq;
	double ns;
};

static void *ml_half_main(void *arg)
{
	struct ml_half *h = arg;
	size_t pos = 0;

	ml_check_cpu(h->j, h->cpu);
	ml_barrier(h->j);
	h->ns = ml_replay(h->j, h->seq, h->nseq, &pos);
	/* Untimed: back to the initial levels, where the half started. */
	while (pos) {
		ml_set(h->j->map, h->seq[pos].cpu, h->seq[pos].level);
		pos = pos + 1 == h->nseq ? 0 : pos + 1;
	}
	return NULL;
}

static void *ml_reader_main(void *arg)
{
	struct ml_job *j = arg;
	const struct ml_map *m = j->map;
	const struct ml_query *q = &j->shape->query[j->query];
	struct ml_answer *a = malloc(sizeof(*a));
	__u64 t0, t, ops = 0, sink = 0;
	__u32 level = 0;

	if (!a) {
		__atomic_store_n(&j->err, -ENOMEM, __ATOMIC_RELAXED);
		ml_barrier(j);
		return NULL;
	}
	ml_answer_init(a);

	ml_check_cpu(j, j->reader_cpu);
	ml_barrier(j);
	t0 = bench_now_ns();
	do {
		for (unsigned i = 0; i < ML_BATCH; i++)
			if (ml_find(m, q, j->query, a, &level) == 0)
				sink += level + a->cpus.bits[0] + a->buf[0];
		ops += ML_BATCH;
		t = bench_now_ns();
	} while (t - t0 < j->run_ns);
	j->sink = sink;
	j->reader_ns = (double)(t - t0) / (double)ops;
	free(a);
	return NULL;
}

static int ml_spawn(pthread_t *ret, int cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int r;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	r = pthread_attr_init(&attr);
	if (r)
		return -r;
	r = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (r == 0)
		r = pthread_create(ret, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -r;
}

/* Runs the writer (write), the reader (read) or both on one map; writes
 * the ns/op of each side that ran. */
static int ml_run(struct ml_shape *s, struct ml_map *m, unsigned query, bool write, bool read,
		  const struct ml_options *o, double *ret_writer_ns, double *ret_reader_ns)
{
	struct ml_job j = {
		.shape = s, .map = m, .query = query, .run_ns = (__u64)o->run_ms * 1000000u,
		.nthreads = (int)write + (int)read, .reader_cpu = o->reader_cpu, .writer_cpu = o->writer_cpu,
	};
	pthread_t writer, reader;
	bool writing = false;
	int r = 0;

	if (write) {
		r = ml_spawn(&writer, o->writer_cpu, ml_writer_main, &j);
		writing = r == 0;
	}
	if (r == 0 && read) {
		r = ml_spawn(&reader, o->reader_cpu, ml_reader_main, &j);
		if (r == 0)
			pthread_join(reader, NULL);
		else if (writing)
			/* The writer waits at the barrier for a reader that will
			 * not come: let it run alone, and drop its result. */
			__atomic_fetch_add(&j.ready, 1, __ATOMIC_RELEASE);
	}
	if (writing)
		pthread_join(writer, NULL);
	if (r == 0)
		r = j.err;
	if (r == 0) {
		*ret_writer_ns = j.writer_ns;
		*ret_reader_ns = j.reader_ns;
	}
	return r;
}

/* Two writers, one on each CPU, storing the levels of different simulated
 * CPUs (node 0's, the others'); writes the mean ns per change of the two. */
static int ml_run_two(struct ml_shape *s, struct ml_map *m, const struct ml_options *o, double *ret_ns)
{
	struct ml_job j = { .shape = s, .map = m, .run_ns = (__u64)o->run_ms * 1000000u, .nthreads = 2 };
	struct ml_half h[2];
	pthread_t th[2];
	int r;

	/* Untimed: the map to the initial levels the halves start from. */
	while (m->pos) {
		ml_set(m, s->seq[m->pos].cpu, s->seq[m->pos].level);
		m->pos = m->pos + 1 == s->nseq ? 0 : m->pos + 1;
	}
	for (int k = 0; k < 2; k++)
		h[k] = (struct ml_half){ .j = &j, .cpu = k ? o->writer_cpu : o->reader_cpu, .seq = s->wseq[k],
					 .nseq = s->nwseq[k] };
	r = ml_spawn(&th[0], h[0].cpu, ml_half_main, &h[0]);
	if (r < 0)
		return r;
	r = ml_spawn(&th[1], h[1].cpu, ml_half_main, &h[1]);
	if (r < 0) {
		/* Let the first run alone so that it can be joined. */
		__atomic_fetch_add(&j.ready, 1, __ATOMIC_RELEASE);
	}
	pthread_join(th[0], NULL);
	if (r == 0)
		pthread_join(th[1], NULL);
	if (r == 0)
		r = j.err;
	if (r == 0)
		*ret_ns = (h[0].ns + h[1].ns) / 2;
	return r;
}

/* ---- cache-line hand-off bracket ---- */

struct ml_pingpong {
	__u64 turn __attribute__((aligned(ML_LINE)));
	__u64 rounds __attribute__((aligned(ML_LINE)));
	__u64 warmup;
	__u64 ns;
};

/* The ping side (reader CPU): odd values are its moves. */
static void *ml_ping_main(void *arg)
{
	struct ml_pingpong *p = arg;
	__u64 t0 = 0;

	for (__u64 i = 0; i < p->warmup + p->rounds; i++) {
		if (i == p->warmup)
			t0 = bench_now_ns();
		while (__atomic_load_n(&p->turn, __ATOMIC_ACQUIRE) != 2 * i)
			ml_cpu_relax();
		__atomic_store_n(&p->turn, 2 * i + 1, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&p->turn, __ATOMIC_ACQUIRE) != 2 * (p->warmup + p->rounds))
		ml_cpu_relax();
	p->ns = bench_now_ns() - t0;
	return NULL;
}

static void *ml_pong_main(void *arg)
{
	struct ml_pingpong *p = arg;

	for (__u64 i = 0; i < p->warmup + p->rounds; i++) {
		while (__atomic_load_n(&p->turn, __ATOMIC_ACQUIRE) != 2 * i + 1)
			ml_cpu_relax();
		__atomic_store_n(&p->turn, 2 * i + 2, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* One-way latency of passing a line between the two CPUs, in ns. */
static int ml_handoff(const struct ml_options *o, double *ret_ns)
{
	struct ml_pingpong *p;
	pthread_t ping, pong;
	int r;

	r = ml_alloc(sizeof(*p), (void **)&p);
	if (r < 0)
		return r;
	p->rounds = o->pingpong_rounds;
	p->warmup = o->pingpong_rounds / 10;
	r = ml_spawn(&pong, o->writer_cpu, ml_pong_main, p);
	if (r == 0) {
		r = ml_spawn(&ping, o->reader_cpu, ml_ping_main, p);
		if (r < 0) {
			/* Play the ping side from here so that the pong thread
			 * finishes its rounds and can be joined. */
			ml_ping_main(p);
			pthread_join(pong, NULL);
		} else {
			pthread_join(ping, NULL);
			pthread_join(pong, NULL);
			*ret_ns = (double)p->ns / (2.0 * (double)p->rounds);
		}
	}
	free(p);
	return r;
}

/* ---- the line model ---- */

/*
 * Cache lines each layout touches, from its offsets alone, for machines
 * this bench cannot run on: per level change, the distinct lines written
 * and how many simulated CPUs' changes write each of them (the writers a
 * line is shared by), averaged over every CPU and over the level changes
 * the timed sequence draws; per query, the lines read at a level with CPUs
 * (count and mask words) and at a level skipped on its count. The packed
 * and padded masks are as wide as the machine rounded up to 64 CPUs
 * (NR_CPUS = ncpus); the sharded map is the production geometry.
 */
struct ml_model {
	const char *name;
	struct topo *topo;
	__u32 ncpus, words;        /* global mask words */
	struct cpupri_geom geom;   /* node shards */
	__u16 *shard_of, *bit_of;  /* each CPU's shard and bit, as cpupri_init() numbers them */
	__u32 *sharers;            /* per line of the largest layout */
	__u32 *last;               /* the last CPU counted in sharers[line], + 1 */
	__u32 nlines;
};

static const __u32 ml_model_levels[5] = { LEVEL_IDLE, LEVEL_NORMAL, LEVEL_RT1 + 9, LEVEL_RT1 + 49, LEVEL_RT99 };
static const double ml_model_weights[5] = { 0.02, 0.08, 0.10, 0.30, 0.50 };

static __u32 ml_up(__u32 v, __u32 to)
{
	return (v + to - 1) / to * to;
}

/* Byte offsets of a level's count and of the mask word holding cpu. */
static void ml_model_offsets(const struct ml_model *m, enum ml_layout l, __u32 level, __u32 cpu, __u32 *ret_count,
			     __u32 *ret_word)
{
	const __u32 vsz = 8 + 8 * m->words, msz = ml_up(8 * m->words, ML_LINE);

	switch (l) {
	case ML_PACKED:
		*ret_count = level * vsz;
		*ret_word = level * vsz + 8 + 8 * (cpu / 64);
		break;
	case ML_PADDED:
		*ret_count = ML_LINE * level;
		*ret_word = ML_LINE * LEVEL_COUNT + level * msz + 8 * (cpu / 64);
		break;
	default:
		*ret_count = m->geom.counts_off + level * cpupri_count_lines(&m->geom) * ML_LINE +
			     m->shard_of[cpu] * (__u32)sizeof(__s32);
		*ret_word = m->geom.masks_off +
			    ((level * m->geom.nshards + m->shard_of[cpu]) * m->geom.shard_words + m->bit_of[cpu] / 64) * 8;
		break;
	}
}

/* The line each CPU's own writes go to: cpu_to_pri, its slot, its byte. */
static __u32 ml_model_own(const struct ml_model *m, enum ml_layout l, __u32 cpu)
{
	const __u32 vsz = 8 + 8 * m->words, msz = ml_up(8 * m->words, ML_LINE);

	switch (l) {
	case ML_PACKED:
		return (ml_up(LEVEL_COUNT * vsz, ML_LINE) + 4 * cpu) / ML_LINE;
	case ML_PADDED:
		return (ML_LINE * LEVEL_COUNT + LEVEL_COUNT * msz + 4 * cpu) / ML_LINE;
	case ML_BYTE:
		return cpu / ML_LINE;
	default:
		return (m->geom.slots_off + ML_LINE * cpu) / ML_LINE;
	}
}

/* The distinct lines one change of cpu from old to new writes, into lines; returns how many. */
static unsigned ml_model_change(const struct ml_model *m, enum ml_layout l, __u32 cpu, __u32 old, __u32 new,
				__u32 lines[5])
{
	__u32 all[5], oc, ow, nc, nw;
	unsigned n = 0, k = 0;

	all[k++] = ml_model_own(m, l, cpu);
	if (l != ML_BYTE) {
		ml_model_offsets(m, l, old, cpu, &oc, &ow);
		ml_model_offsets(m, l, new, cpu, &nc, &nw);
		all[k++] = oc / ML_LINE;
		all[k++] = ow / ML_LINE;
		all[k++] = nc / ML_LINE;
		all[k++] = nw / ML_LINE;
	}
	for (unsigned i = 0; i < k; i++) {
		unsigned j = 0;

		while (j < n && lines[j] != all[i])
			j++;
		if (j == n)
			lines[n++] = all[i];
	}
	return n;
}

/* Lines read for one level with CPUs, for allowed (all CPUs or node 0), averaged over the levels. */
static double ml_model_read(const struct ml_model *m, enum ml_layout l, const struct rtplace_cpumask *allowed)
{
	const __u32 vsz = 8 + 8 * m->words, msz = ml_up(8 * m->words, ML_LINE);
	__u32 lo = UINT32_MAX, hi = 0, sum = 0, n = 0;
	__u32 lastline = UINT32_MAX;

	switch (l) {
	case ML_PACKED:
		for (__u32 level = LEVEL_IDLE; level < LEVEL_COUNT; level++, n++)
			sum += (level * vsz + vsz - 1) / ML_LINE - level * vsz / ML_LINE + 1;
		return (double)sum / n;
	case ML_PADDED:
		return 1 + msz / ML_LINE;
	case ML_BYTE:
		/* No counts: every query reads the allowed CPUs' bytes. */
		CPUSET_FOREACH(cpu, allowed) {
			if ((__u32)cpu >= m->ncpus)
				break;
			n += (__u32)cpu / ML_LINE != lastline;
			lastline = (__u32)cpu / ML_LINE;
		}
		return n;
	default:
		/* cpupri_find() reads, in each shard that allowed spans, the
		 * words that hold CPUs (each shard starts on a line), when every
		 * shard's count says it has CPUs at the level. */
		for (__u32 c = 0; c < m->ncpus; c++)
			sum = m->bit_of[c] / 64 + 1u > sum ? m->bit_of[c] / 64 + 1u : sum;
		CPUSET_FOREACH(cpu, allowed) {
			if ((__u32)cpu >= m->ncpus)
				break;
			lo = m->shard_of[cpu] < lo ? m->shard_of[cpu] : lo;
			hi = m->shard_of[cpu] + 1u > hi ? m->shard_of[cpu] + 1u : hi;
		}
		return 1 + (hi - lo) * ((sum + CPUPRI_LINE_WORDS - 1) / CPUPRI_LINE_WORDS);
	}
}

static int ml_model_init(struct ml_model *m, const char *name, __u32 packages, __u32 cores)
{
	__u16 next[CPUPRI_MAX_SHARDS] = { 0 };
	int r;

	m->name = name;
	r = topo_synthetic(packages, 1, 1, cores, 2, &m->topo);
	if (r < 0)
		return r;
	m->ncpus = m->topo->ncpus;
	m->words = (m->ncpus + 63) / 64;
	m->shard_of = calloc(m->ncpus, sizeof(*m->shard_of));
	m->bit_of = calloc(m->ncpus, sizeof(*m->bit_of));
	if (!m->shard_of || !m->bit_of)
		return -ENOMEM;
	r = cpupri_geom_for_topo(m->topo, TOPO_SHARD_NODE, m->shard_of, &m->geom);
	if (r < 0)
		return r;
	for (__u32 c = 0; c < m->ncpus; c++)
		m->bit_of[c] = next[m->shard_of[c]]++;
	/* The sharded map is the largest of the layouts. */
	m->nlines = m->geom.size / ML_LINE + 2 * (LEVEL_COUNT + m->ncpus);
	m->sharers = calloc(m->nlines, sizeof(*m->sharers));
	m->last = calloc(m->nlines, sizeof(*m->last));
	return m->sharers && m->last ? 0 : -ENOMEM;
}

static void ml_model_free(struct ml_model *m)
{
	topo_free(m->topo);
	free(m->shard_of);
	free(m->bit_of);
	free(m->sharers);
	free(m->last);
}

static void ml_model_print(struct ml_model *m)
{
	printf("%s\n", m->name);
	for (unsigned l = 0; l < ML_NLAYOUTS; l++) {
		double written = 0, sharers = 0;
		__u32 lines[5];

		if (l == ML_LLC)
			continue;
		memset(m->sharers, 0, m->nlines * sizeof(*m->sharers));
		memset(m->last, 0, m->nlines * sizeof(*m->last));
		for (__u32 c = 0; c < m->ncpus; c++)
			for (unsigned a = 0; a < 5; a++)
				for (unsigned b = 0; b < 5; b++) {
					unsigned n = a == b ? 0 : ml_model_change(m, (enum ml_layout)l, c,
										 ml_model_levels[a], ml_model_levels[b], lines);

					for (unsigned i = 0; i < n; i++)
						if (m->last[lines[i]] != c + 1) {
							m->last[lines[i]] = c + 1;
							m->sharers[lines[i]]++;
						}
				}
		for (__u32 c = 0; c < m->ncpus; c++)
			for (unsigned a = 0; a < 5; a++)
				for (unsigned b = 0; b < 5; b++) {
					double p = a == b ? 0 : ml_model_weights[a] * ml_model_weights[b] / m->ncpus;
					unsigned n = a == b ? 0 : ml_model_change(m, (enum ml_layout)l, c,
										 ml_model_levels[a], ml_model_levels[b], lines);

					written += p * n;
					for (unsigned i = 0; i < n; i++)
						sharers += p * m->sharers[lines[i]];
				}
		/* The weights of the pairs a != b sum to 1 - sum of squares. */
		{
			double norm = 0;

			for (unsigned a = 0; a < 5; a++)
				norm += ml_model_weights[a] * ml_model_weights[a];
			written /= 1 - norm;
			sharers /= 1 - norm;
		}
		printf("  %-14s %9.2f %12.1f %10.2f %8.2f %9s\n", l == ML_NODE ? "sharded (node)" : ml_layout_names[l],
		       written, sharers / written, ml_model_read(m, (enum ml_layout)l, &m->topo->online),
		       ml_model_read(m, (enum ml_layout)l, &m->topo->node_cpus[0]), l == ML_BYTE ? "-" : "1");
	}
}

/*
 * What the per-shard counts save the sharded map's word-at-a-time reader
 * (cpupri_level_cpu_word(), placement's fast paths; cpupri_find() reads
 * every shard of a level whose counts say go): lines read at a level when
 * every shard has CPUs there, when one shard has, and for a one-CPU answer
 * found in the first shard it looks at (the level's count line and the
 * line of the word the walk starts in), against the packed layout, which
 * reads its whole vector in each case.
 */
static void ml_model_hints(const struct ml_model *m)
{
	__u32 used = 0;
	double packed = ml_model_read(m, ML_PACKED, &m->topo->online);

	for (__u32 c = 0; c < m->ncpus; c++)
		used = m->bit_of[c] / 64 + 1u > used ? m->bit_of[c] / 64 + 1u : used;
	used = (used + CPUPRI_LINE_WORDS - 1) / CPUPRI_LINE_WORDS;
	printf("  %-30.*s %12.2f %12.2f %12.2f\n", (int)strcspn(m->name, "("), m->name,
	       ml_model_read(m, ML_NODE, &m->topo->online),
	       (double)(cpupri_count_lines(&m->geom) + used), (double)(cpupri_count_lines(&m->geom) + 1));
	printf("  %-30s %12.2f %12.2f %12.2f\n", "  packed, the same machine", packed, packed, packed);
}

static int ml_model(void)
{
	struct ml_model m[2] = { 0 };
	int r;

	r = ml_model_init(&m[0], "480 CPUs, 2 nodes (topo_synthetic(2,1,1,120,2))", 2, 120);
	if (r == 0)
		r = ml_model_init(&m[1], "1024 CPUs, 8 nodes (topo_synthetic(8,1,1,64,2))", 8, 64);
	if (r == 0) {
		printf("\n== model: cache lines per operation, from each layout's offsets (not timed) ==\n");
		printf("%-16s %9s %12s %10s %8s %9s\n", "shape / layout", "written", "writers per", "read: all",
		       "node 0", "skipped");
		printf("%-16s %9s %12s %10s %8s %9s\n", "", "/change", "written line", "CPUs", "", "level");
		for (int i = 0; i < 2; i++)
			ml_model_print(&m[i]);
		printf("\nsharded (node), lines the word walk reads at a level with the hints (counts per shard):\n");
		printf("  %-30s %12s %12s %12s\n", "shape", "all shards", "one shard", "one CPU,");
		printf("  %-30s %12s %12s %12s\n", "", "hold CPUs", "holds CPUs", "first shard");
		for (int i = 0; i < 2; i++)
			ml_model_hints(&m[i]);
	}
	ml_model_free(&m[0]);
	ml_model_free(&m[1]);
	return r;
}

/* ---- the run and the report ---- */

static int ml_measure_repeat(struct ml_shape *s, unsigned rep, const struct ml_options *o)
{
	int r = 0;

	/* Interleave: each measurement kind runs every layout in turn, the
	 * first layout rotating with the repeat. */
	for (unsigned k = 0; r == 0 && k < 2 + 2 * ML_NQUERIES; k++) {
		for (unsigned i = 0; r == 0 && i < ML_NLAYOUTS; i++) {
			unsigned l = (i + rep) % ML_NLAYOUTS;
			double (*res)[ML_REPEATS_MAX] = s->result[l];
			double w = 0, rd = 0;

			if (k == 0) {
				r = ml_run(s, &s->map[l], 0, true, false, o, &w, &rd);
				res[ML_WRITER_ALONE][rep] = w;
			} else if (k <= ML_NQUERIES) {
				unsigned q = k - 1;

				r = ml_run(s, &s->map[l], q, false, true, o, &w, &rd);
				res[ML_READER_ALONE + q][rep] = rd;
			} else if (k == 1 + 2 * ML_NQUERIES) {
				r = ml_run_two(s, &s->map[l], o, &w);
				res[ML_TWO_WRITERS][rep] = w;
			} else {
				unsigned q = k - 1 - ML_NQUERIES;

				r = ml_run(s, &s->map[l], q, true, true, o, &w, &rd);
				res[ML_READER_BOTH + q][rep] = rd;
				res[ML_WRITER_BOTH + q][rep] = w;
			}
		}
	}
	return r;
}

static void ml_cell(const struct ml_shape *s, unsigned l, unsigned metric, unsigned n)
{
	double v = bench_median(s->result[l][metric], n);
	double base = bench_median(s->result[ML_PACKED][metric], n);

	printf("  %8.1f (%5.2f)", v, v / base);
}

static void ml_print_shape(const struct ml_shape *s, unsigned n)
{
	printf("\n== %s ==\n", s->name);
	printf("%-14s %10s  %16s  %16s\n", "layout", "map bytes", "writer alone", "two writers");
	for (unsigned l = 0; l < ML_NLAYOUTS; l++) {
		printf("%-14s %10zu", ml_layout_names[l], s->map[l].size);
		ml_cell(s, l, ML_WRITER_ALONE, n);
		ml_cell(s, l, ML_TWO_WRITERS, n);
		printf("\n");
	}
	printf("\n%-14s  %16s  %16s  %16s\n", "query / layout", "reader alone", "reader with wr.",
	       "writer with rd.");
	for (unsigned q = 0; q < ML_NQUERIES; q++) {
		printf("%s\n", s->query[q].name);
		for (unsigned l = 0; l < ML_NLAYOUTS; l++) {
			printf("  %-12s", ml_layout_names[l]);
			ml_cell(s, l, ML_READER_ALONE + q, n);
			ml_cell(s, l, ML_READER_BOTH + q, n);
			ml_cell(s, l, ML_WRITER_BOTH + q, n);
			printf("\n");
		}
	}
}

static void ml_usage(FILE *f)
{
	fprintf(f,
		"Usage: map-layouts [--quick] [--repeats N] [--ms N] [--reader-cpu N] [--writer-cpu N] [--model]\n"
		"Times cpupri map layouts: writer and reader alone and together, median ns/op\n"
		"and ratio to packed; about 50 s by default, a few seconds with --quick.\n"
		"  --quick          3 repeats of 8 ms per measurement\n"
		"  --repeats N      repeats (odd, 1..%d; default 7)\n"
		"  --ms N           milliseconds per measurement (default 70)\n"
		"  --reader-cpu N   CPU of the reader thread (default 0)\n"
		"  --writer-cpu N   CPU of the writer thread (default 1)\n"
		"  --model          print only the cache-line model (no timing)\n",
		ML_REPEATS_MAX);
}

static int ml_parse_uint(const char *arg, unsigned max, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v > max)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

/* Reads the options into o. Returns 0, 1 for --help, -EINVAL. */
static int ml_parse(int argc, char **argv, struct ml_options *o)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },       { "repeats", required_argument, NULL, 'r' },
		{ "ms", required_argument, NULL, 'm' },    { "reader-cpu", required_argument, NULL, 'R' },
		{ "writer-cpu", required_argument, NULL, 'W' }, { "help", no_argument, NULL, 'h' },
		{ "model", no_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	bool repeats_set = false, ms_set = false;
	unsigned v;
	int c;

	*o = (struct ml_options){ .repeats = 7, .run_ms = 70, .pingpong_rounds = 100000, .reader_cpu = 0,
				  .writer_cpu = 1 };
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			o->quick = true;
			break;
		case 'r':
			if (ml_parse_uint(optarg, ML_REPEATS_MAX, &v) < 0 || v == 0 || v % 2 == 0)
				return -EINVAL;
			o->repeats = v;
			repeats_set = true;
			break;
		case 'm':
			if (ml_parse_uint(optarg, 10000, &v) < 0 || v == 0)
				return -EINVAL;
			o->run_ms = v;
			ms_set = true;
			break;
		case 'R':
		case 'W':
			if (ml_parse_uint(optarg, CPU_SETSIZE - 1, &v) < 0)
				return -EINVAL;
			*(c == 'R' ? &o->reader_cpu : &o->writer_cpu) = (int)v;
			break;
		case 'M':
			o->model_only = true;
			break;
		case 'h':
			return 1;
		default:
			return -EINVAL;
		}
	}
	if (optind != argc || o->reader_cpu == o->writer_cpu)
		return -EINVAL;
	if (o->quick) {
		if (!repeats_set)
			o->repeats = 3;
		if (!ms_set)
			o->run_ms = 8;
		o->pingpong_rounds = 20000;
	}
	return 0;
}

/* Both CPUs exist and this process may run on them. 0 or -EINVAL. */
static int ml_check_cpus(const struct ml_options *o)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	return CPU_ISSET(o->reader_cpu, &set) && CPU_ISSET(o->writer_cpu, &set) ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	struct ml_shape *shapes;
	struct ml_options o;
	double before = 0, after = 0, during[ML_REPEATS_MAX];
	int r;

	r = ml_parse(argc, argv, &o);
	if (r != 0) {
		ml_usage(r > 0 ? stdout : stderr);
		return r > 0 ? 0 : 2;
	}
	if (o.model_only)
		return ml_model() < 0 ? 2 : 0;
	r = ml_check_cpus(&o);
	if (r < 0) {
		fprintf(stderr, "map-layouts: CPUs %d and %d must both be allowed to this process "
			"(see --reader-cpu, --writer-cpu)\n", o.reader_cpu, o.writer_cpu);
		return 2;
	}
	shapes = calloc(ML_NSHAPES, sizeof(*shapes));
	if (!shapes) {
		fprintf(stderr, "map-layouts: out of memory\n");
		return 2;
	}
	r = ml_shape_init(&shapes[0],
			  "480 CPUs: 2 nodes, 2 LLCs, 120 cores x 2 threads each (topo_synthetic(2,1,1,120,2))", 2,
			  1, 120);
	if (r == 0)
		r = ml_shape_init(&shapes[1],
				  "256 CPUs: 2 nodes, 16 LLCs, 8 cores x 2 threads each (topo_synthetic(2,1,8,8,2))",
				  2, 8, 8);
	if (r < 0) {
		fprintf(stderr, "map-layouts: setting up the maps failed: %s\n", strerror(-r));
		r = 2;
		goto out;
	}
	for (unsigned i = 0; i < ML_NSHAPES; i++)
		if (ml_verify(&shapes[i]) < 0) {
			r = 1;
			goto out;
		}

	r = ml_handoff(&o, &before);
	for (unsigned rep = 0; r == 0 && rep < o.repeats; rep++) {
		r = ml_handoff(&o, &during[rep]);
		for (unsigned i = 0; r == 0 && i < ML_NSHAPES; i++)
			r = ml_measure_repeat(&shapes[i], rep, &o);
	}
	if (r == 0)
		r = ml_handoff(&o, &after);
	if (r < 0) {
		fprintf(stderr, "map-layouts: running threads on CPUs %d and %d failed: %s\n", o.reader_cpu,
			o.writer_cpu, strerror(-r));
		r = 2;
		goto out;
	}
	for (unsigned i = 0; i < ML_NSHAPES; i++)
		if (ml_verify(&shapes[i]) < 0) {
			r = 1;
			goto out;
		}

	printf("map-layouts: reader on CPU %d, writer on CPU %d, %u repeats x %u ms per measurement\n",
	       o.reader_cpu, o.writer_cpu, o.repeats, o.run_ms);
	printf("median ns/op (ratio to packed); writer: one level change of one simulated CPU;\n"
	       "reader: one cpupri_find(); levels drawn idle 2%%, normal 8%%, rt10 10%%, rt50 30%%, rt99 50%%\n");
	printf("cache-line hand-off CPU %d <-> CPU %d, one way, ns: before %.1f, each repeat", o.reader_cpu,
	       o.writer_cpu, before);
	for (unsigned rep = 0; rep < o.repeats; rep++)
		printf(" %.1f", during[rep]);
	printf(", after %.1f\n", after);
	for (unsigned i = 0; i < ML_NSHAPES; i++)
		ml_print_shape(&shapes[i], o.repeats);
	printf("\nanswers checked against a reference before and after timing: all layouts agree\n");
	if (ml_model() < 0) {
		fprintf(stderr, "map-layouts: the line model: out of memory\n");
		r = 2;
		goto out;
	}
	r = 0;
out:
	for (unsigned i = 0; i < ML_NSHAPES; i++)
		ml_shape_free(&shapes[i]);
	free(shapes);
	return r;
}
