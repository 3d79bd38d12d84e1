/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Building and freeing a placement context (placement.h): what every
 * answer derives from the configuration, the topology and the map's
 * geometry, computed once.
 *
 * Layer: calls only the set arithmetic of placement-core.h.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "placement-core.h"

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

/* The view's pieces restricted to base (placement_ctx.base_pieces). */
static int placement_ctx_base_pieces(struct placement_ctx *x)
{
	const struct cpupri_view *v = x->view;
	uint32_t n = 0;

	x->base_piece_off = calloc(x->nwords + 1, sizeof(*x->base_piece_off));
	x->base_pieces = malloc((v->cpu_pieces[x->nwords] - v->cpu_pieces[0] + 1) * sizeof(*x->base_pieces));
	if (!x->base_piece_off || !x->base_pieces)
		return -ENOMEM;
	for (uint32_t i = 0; i < x->nwords; i++) {
		x->base_piece_off[i] = n;
		for (uint32_t k = v->cpu_pieces[i]; k < v->cpu_pieces[i + 1]; k++) {
			struct cpupri_piece p = v->pieces[k];

			p.mask &= x->base.bits[i] >> p.at;
			if (p.mask)
				x->base_pieces[n++] = p;
		}
	}
	x->base_piece_off[x->nwords] = n;
	return 0;
}

/* What the view's geometry and the topology's size give the context: the
 * slots, the first level's words and counts and the strides between
 * levels, the cpuset words the machine spans. */
static void placement_ctx_geometry(struct placement_ctx *x)
{
	const struct cpupri_view *v = x->view;
	const uint32_t ncpus = x->topo->ncpus;

	x->slots = cpupri_slot_ptr((void *)v->map, &v->geom, 0);
	x->slots_n = v->geom.ncpus;
	x->nwords = (ncpus + 63) / 64;
	x->last_word = ncpus % 64 ? (UINT64_C(1) << (ncpus % 64)) - 1 : ~UINT64_C(0);
	x->words0 = cpupri_level_words(v, 0);
	x->counts0 = cpupri_level_counts(v, 0);
	x->words_stride = (uint32_t)(cpupri_level_words(v, 1) - x->words0);
	x->counts_stride = (uint32_t)(cpupri_level_counts(v, 1) - x->counts0);
}

/* The candidates of a request with no allowed set (base), of kind 0, and
 * of each node, with their map masks. */
static int placement_ctx_base(struct placement_ctx *x)
{
	const struct topo *t = x->topo;
	const struct cpupri_view *v = x->view;

	x->node_mask = calloc(t->nnodes ? t->nnodes : 1, sizeof(*x->node_mask));
	if (!x->node_mask || cpupri_mask_new(v, &x->base_mask) < 0)
		return -ENOMEM;
	x->nnodes = t->nnodes;
	cpuset_zero(&x->kind0);
	for (uint32_t c = 0; c < t->ncpus; c++)
		if (t->cpus[c].online && t->cpus[c].kind == 0)
			cpuset_set(&x->kind0, c);
	/* CPUs the map does not hold are offline as far as it can tell. */
	cpuset_and(&x->base, &x->cfg.managed, &t->online);
	for (int c = cpuset_next(&x->base, v->geom.ncpus); c >= 0; c = cpuset_next(&x->base, (unsigned)c + 1))
		cpuset_clear(&x->base, (unsigned)c);
	cpupri_mask_from_cpuset(v, &x->base, &x->base_mask);
	x->base_empty = cpuset_empty_n(&x->base, x->nwords);
	for (uint32_t node = 0; node < t->nnodes; node++) {
		struct rtplace_cpumask s;

		if (cpupri_mask_new(v, &x->node_mask[node]) < 0)
			return -ENOMEM;
		cpuset_and(&s, &x->base, &t->node_cpus[node]);
		cpupri_mask_from_cpuset(v, &s, &x->node_mask[node]);
	}
	return 0;
}

/* The groups: the cpuset words each LLC spans, and the most CPUs of base
 * (and of its kind-0 CPUs) one LLC or node holds. */
static int placement_ctx_groups(struct placement_ctx *x)
{
	const struct topo *t = x->topo;
	struct rtplace_cpumask base0;

	x->llc_words = calloc(t->nllcs ? t->nllcs : 1, sizeof(*x->llc_words));
	if (!x->llc_words)
		return -ENOMEM;
	x->nllcs = t->nllcs;
	for (uint32_t llc = 0; llc < t->nllcs; llc++)
		for (uint32_t i = 0; i < CPUSET_WORDS; i++)
			if (t->llc_cpus[llc].bits[i])
				placement_wordset_add(&x->llc_words[llc], i);
	cpuset_and(&base0, &x->base, &x->kind0);
	x->base_mixed = !cpuset_empty(&base0) && !cpuset_equal(&base0, &x->base);
	for (int k = 0; k < 2; k++) {
		for (int w = PLACEMENT_GROUP_LLC; w <= PLACEMENT_GROUP_NODE; w++) {
			uint32_t n;
			const struct rtplace_cpumask *groups = placement_groups(x, (enum placement_group)w, &n);

			for (uint32_t g = 0; g < n; g++) {
				uint32_t in = cpuset_count_and_n(k ? &base0 : &x->base, &groups[g], x->nwords);

				if (in > x->base_widest[k][w])
					x->base_widest[k][w] = in;
			}
		}
	}
	return 0;
}

int placement_ctx_new(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
		      struct placement_ctx **ret)
{
	struct placement_ctx *x = calloc(1, sizeof(*x));
	int r = -ENOMEM;

	if (!x)
		goto out;
	x->cfg = *cfg;
	x->topo = t;
	x->view = v;
	x->isolated_none = cpuset_empty(&cfg->isolated);
	x->noisy_none = cpuset_empty(&cfg->noisy);
	placement_ctx_geometry(x);
	r = placement_ctx_base(x);
	if (r == 0)
		r = placement_ctx_groups(x);
	if (r == 0)
		r = placement_ctx_base_pieces(x);
	if (r == 0)
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
	for (uint32_t node = 0; node < x->nnodes; node++)
		cpupri_mask_free(&x->node_mask[node]);
	free(x->node_mask);
	free(x->llc_words);
	free(x->base_piece_off);
	free(x->base_pieces);
	free(x->sib_off);
	free(x->sib);
	free(x);
}

int placement_state_new(const struct placement_ctx *x, struct placement_state **ret)
{
	const uint32_t ncpus = x->topo->ncpus ? x->topo->ncpus : 1;
	struct placement_state *st = calloc(1, sizeof(*st));
	int r = -ENOMEM;

	if (!st)
		goto out;
	st->ctx = x;
	st->cache.copy = malloc(ncpus);
	st->picked = calloc(ncpus, sizeof(*st->picked));
	if (st->cache.copy && st->picked && cpupri_mask_new(x->view, &st->mask_buf) == 0 &&
	    cpupri_mask_new(x->view, &st->found) == 0)
		r = 0;
out:
	if (r == 0)
		*ret = st;
	else
		placement_state_free(st);
	return r;
}

void placement_state_free(struct placement_state *st)
{
	if (!st)
		return;
	cpupri_mask_free(&st->mask_buf);
	cpupri_mask_free(&st->found);
	free(st->cache.copy);
	free(st->picked);
	free(st);
}
