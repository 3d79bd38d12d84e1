/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "topo.h"

int topo_new(uint32_t ncpus, struct topo **ret)
{
	struct topo *t;

	if (ncpus == 0 || ncpus > RTPLACE_MAX_CPUS)
		return -E2BIG;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cpus = calloc(ncpus, sizeof(*t->cpus));
	if (!t->cpus) {
		free(t);
		return -ENOMEM;
	}
	t->ncpus = ncpus;
	for (uint32_t c = 0; c < ncpus; c++)
		t->cpus[c] = (struct topo_cpu){ .node = -1, .package = -1, .llc = -1, .core = -1, .kind = 0 };
	*ret = t;
	return 0;
}

static int topo_fill_sets(const struct topo *t, size_t field, uint32_t *ret_n, struct rtplace_cpumask **ret_sets)
{
	struct rtplace_cpumask *sets;
	uint32_t n = 0;

	for (uint32_t c = 0; c < t->ncpus; c++) {
		int32_t id = *(const int32_t *)((const char *)&t->cpus[c] + field);

		if (!t->cpus[c].online)
			continue;
		if (id < 0)
			return -EINVAL;
		if ((uint32_t)id + 1 > n)
			n = (uint32_t)id + 1;
	}
	sets = calloc(n ? n : 1, sizeof(*sets));
	if (!sets)
		return -ENOMEM;
	for (uint32_t c = 0; c < t->ncpus; c++)
		if (t->cpus[c].online)
			cpuset_set(&sets[*(const int32_t *)((const char *)&t->cpus[c] + field)], c);
	*ret_n = n;
	*ret_sets = sets;
	return 0;
}

int topo_finish(struct topo *t)
{
	uint32_t npk = 0, nkinds = 0;
	int r;

	cpuset_zero(&t->online);
	for (uint32_t c = 0; c < t->ncpus; c++) {
		if (!t->cpus[c].online)
			continue;
		cpuset_set(&t->online, c);
		if (t->cpus[c].package < 0 || t->cpus[c].kind < 0)
			return -EINVAL;
		if ((uint32_t)t->cpus[c].package + 1 > npk)
			npk = (uint32_t)t->cpus[c].package + 1;
		if ((uint32_t)t->cpus[c].kind + 1 > nkinds)
			nkinds = (uint32_t)t->cpus[c].kind + 1;
	}
	free(t->node_cpus);
	free(t->llc_cpus);
	free(t->core_cpus);
	t->node_cpus = t->llc_cpus = t->core_cpus = NULL;
	r = topo_fill_sets(t, offsetof(struct topo_cpu, node), &t->nnodes, &t->node_cpus);
	if (r == 0)
		r = topo_fill_sets(t, offsetof(struct topo_cpu, llc), &t->nllcs, &t->llc_cpus);
	if (r == 0)
		r = topo_fill_sets(t, offsetof(struct topo_cpu, core), &t->ncores, &t->core_cpus);
	t->npackages = npk;
	t->nkinds = nkinds ? nkinds : 1;
	return r;
}

void topo_free(struct topo *t)
{
	if (!t)
		return;
	free(t->cpus);
	free(t->node_cpus);
	free(t->llc_cpus);
	free(t->core_cpus);
	free(t);
}

void topo_siblings(const struct topo *t, uint32_t cpu, struct rtplace_cpumask *ret)
{
	cpuset_zero(ret);
	if (cpu >= t->ncpus || !t->cpus[cpu].online)
		return;
	*ret = t->core_cpus[t->cpus[cpu].core];
}

void topo_shards(const struct topo *t, enum topo_shard mode, uint16_t *ret, uint32_t *ret_nshards)
{
	uint32_t n = mode == TOPO_SHARD_LLC ? t->nllcs : t->nnodes;

	for (uint32_t c = 0; c < t->ncpus; c++) {
		int32_t id = mode == TOPO_SHARD_LLC ? t->cpus[c].llc : t->cpus[c].node;

		ret[c] = t->cpus[c].online && id >= 0 ? (uint16_t)id : 0;
	}
	*ret_nshards = n ? n : 1;
}

int topo_synthetic(uint32_t npackages, uint32_t nodes_per_package, uint32_t llcs_per_node,
		   uint32_t cores_per_llc, uint32_t threads_per_core, struct topo **ret)
{
	uint64_t ncores = (uint64_t)npackages * nodes_per_package * llcs_per_node * cores_per_llc;
	uint64_t ncpus = ncores * threads_per_core;
	struct topo *t;
	int r;

	if (ncpus == 0 || ncpus > RTPLACE_MAX_CPUS)
		return -E2BIG;
	r = topo_new((uint32_t)ncpus, &t);
	if (r < 0)
		return r;
	/* SMT siblings are numbered N and N + ncores, as Linux numbers them on
	 * most x86 machines. */
	for (uint32_t core = 0; core < ncores; core++) {
		uint32_t llc = core / cores_per_llc;
		uint32_t node = llc / llcs_per_node;

		for (uint32_t th = 0; th < threads_per_core; th++) {
			struct topo_cpu *c = &t->cpus[core + th * ncores];

			c->core = (int32_t)core;
			c->llc = (int32_t)llc;
			c->node = (int32_t)node;
			c->package = (int32_t)(node / nodes_per_package);
			c->kind = 0;
			c->online = true;
		}
	}
	r = topo_finish(t);
	if (r < 0) {
		topo_free(t);
		return r;
	}
	*ret = t;
	return 0;
}
