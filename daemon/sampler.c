/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "clocks.h"
#include "cpupri.h"
#include "hotplug.h"
#include "levels.h"
#include "sampler.h"
#include "seed.h"

struct sampler {
	void *map;
	size_t map_size;
	uint32_t ncpus;
	__u32 *levels; /* one sample's levels, kept to allocate once */
	const char *proc;
	const char *sysfs;
	pid_t self;    /* the sampling thread, left out of its own samples */
	struct sampler_stats stats;
};

int sampler_sample(struct sampler *s)
{
	const struct cpupri_geom *g = &((const struct cpupri_header *)s->map)->geom;
	uint64_t start = clocks_thread_cpu_ns();
	struct rtplace_cpumask online;
	int r = hotplug_read_online(s->sysfs, &online);

	if (r == 0)
		r = seed_scan(s->proc, s->ncpus, s->self, s->levels);
	if (r == 0)
		for (uint32_t cpu = 0; cpu < s->ncpus; cpu++)
			cpupri_set(s->map, g, cpu, cpuset_test(&online, cpu) ? s->levels[cpu] : LEVEL_OFFLINE);
	s->stats.samples++;
	s->stats.failures += r < 0;
	s->stats.last_ns = clocks_thread_cpu_ns() - start;
	s->stats.cpu_ns += s->stats.last_ns;
	return r;
}

int sampler_new(const struct topo *topo, enum topo_shard shard, const char *proc, const char *sysfs,
		struct sampler **ret)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int r = -ENOMEM;

	if (!s)
		goto out;
	s->ncpus = topo->ncpus;
	s->proc = proc;
	s->sysfs = sysfs;
	s->self = gettid();
	s->levels = calloc(topo->ncpus, sizeof(*s->levels));
	if (!s->levels)
		goto out;
	r = cpupri_map_new(topo, shard, &s->map, &s->map_size);
	if (r == 0)
		r = sampler_sample(s);
	if (r == 0) {
		*ret = s;
		s = NULL;
	}
out:
	sampler_free(s);
	return r;
}

const void *sampler_map(const struct sampler *s, size_t *ret_size)
{
	*ret_size = s->map_size;
	return s->map;
}

void sampler_get_stats(const struct sampler *s, struct sampler_stats *ret)
{
	*ret = s->stats;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	free(s->map);
	free(s->levels);
	free(s);
}
