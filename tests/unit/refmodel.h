/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Naive reference models for the differential tests: the cpupri map as a
 * plain per-CPU level array scanned in full, and placement as the rules of
 * placement.h written the simplest way (every CPU examined, groups compared
 * by sorting, SMT siblings found by comparing core ids). Slow on purpose and
 * independent of the code under test: they share only the public types.
 */
#ifndef RTPLACE_REFMODEL_H
#define RTPLACE_REFMODEL_H

#include <stdint.h>

#include "cpupri.h"
#include "cpuset.h"
#include "placement.h"
#include "topo.h"

/*
 * What cpupri_find() answers for a map whose CPU c is at levels[c]
 * (ncpus entries): the lowest level in idle..below-1 that has a CPU in
 * allowed, and those CPUs. 0 or -ENOENT.
 */
int refmodel_find(const uint8_t *levels, uint32_t ncpus, uint32_t below, const struct rtplace_cpumask *allowed,
		  struct rtplace_cpumask *ret_cpus, uint32_t *ret_level);

/*
 * The per-CPU reference reader of a live map, for the production one
 * (cpupri_find() and the run tables of the view): every CPU's shard and bit
 * read from its slot, one bit at a time.
 *   refmodel_mask_from_cpuset: set in the map's bits (lo 0, hi all words);
 *   refmodel_mask_cpus: the CPUs whose bits are set in m's words lo..hi;
 *   refmodel_level_cpus: the CPUs of allowed whose bit is set at level.
 */
void refmodel_mask_from_cpuset(const struct cpupri_view *v, const struct rtplace_cpumask *set, struct cpupri_mask *m);
void refmodel_mask_cpus(const struct cpupri_view *v, const struct cpupri_mask *m, struct rtplace_cpumask *ret);
void refmodel_level_cpus(const struct cpupri_view *v, uint32_t level, const struct cpupri_mask *allowed,
			 struct rtplace_cpumask *ret);

/* What placement_choose() answers when the map's slots hold levels[]
 * (t->ncpus entries, the map holding exactly those CPUs), its reason
 * included. */
int refmodel_place(const struct placement_config *cfg, const struct topo *t, const uint8_t *levels,
		   const uint8_t *claimed_level, uint32_t *rotor, const struct placement_request *req,
		   struct rtplace_reason *reason, struct placement_result *ret);

/*
 * The shapes of the shared topologies (../shared/topologies/NAME.xml), so
 * the tests cover them even where the shared folder is absent.
 */
struct refmodel_shape {
	const char *name;
	uint32_t packages, nodes_per_package, llcs_per_node, cores_per_llc, threads_per_core;
	bool adjacent; /* SMT siblings numbered 2k, 2k+1 rather than k, k + ncores */
};

extern const struct refmodel_shape refmodel_shapes[]; /* ends with a NULL name */

int refmodel_shape_build(const struct refmodel_shape *s, struct topo **ret);

/* A live cpupri map over a topology's CPUs, with the level each slot holds
 * mirrored in levels[] for the reference models. */
struct refmodel_map {
	void *mem;
	struct cpupri_geom geom;
	struct cpupri_view view;
	uint8_t levels[RTPLACE_MAX_CPUS];
};

int refmodel_map_open(const struct topo *t, enum topo_shard mode, struct refmodel_map *ret);
void refmodel_map_close(struct refmodel_map *m);

/* cpupri_set() and the mirror; returns what cpupri_set() returned. */
uint32_t refmodel_map_set(struct refmodel_map *m, uint32_t cpu, uint32_t level);

/* Adds delta to the count of every shard at every level: with delta > 0
 * every "has CPUs here" hint reads set, most of them wrongly (a reader must
 * answer as before, only slower); the same call with -delta undoes it. */
void refmodel_map_skew_hints(struct refmodel_map *m, int32_t delta);

/* The count of level's CPUs in shard as the map holds it, and as the
 * mirror says it must be. */
int32_t refmodel_map_shard_count(const struct refmodel_map *m, uint32_t level, uint32_t shard);
int32_t refmodel_mirror_shard_count(const struct refmodel_map *m, uint32_t level, uint32_t shard);

/* Runs fn on every shared topology shape built synthetically, then on every
 * shared XML that topo_load() reads. Returns the number of topologies run. */
unsigned refmodel_each_topology(void (*fn)(const char *label, struct topo *t, void *arg), void *arg);

/* Deterministic pseudo-random numbers (xorshift64*), seeded by the test
 * (RTPLACE_TEST_SEED overrides the default so a failure can be replayed). */
uint64_t refmodel_seed(void);
uint64_t refmodel_rand(uint64_t *state);
uint32_t refmodel_rand_below(uint64_t *state, uint32_t n);

/* A random level for each of ncpus CPUs, drawn from one of a few profiles
 * (uniform, a small palette, mostly busy, mostly idle). */
void refmodel_random_levels(uint64_t *state, uint32_t ncpus, uint8_t *ret);

/* A random CPU set shaped like what callers ask for: empty, everything, a
 * node, an LLC, one CPU, a range, a random sprinkle (sometimes with ids
 * beyond the machine). */
void refmodel_random_set(uint64_t *state, const struct topo *t, struct rtplace_cpumask *ret);

/* Whether a request's allowed set holds no CPU of t (placement.h: its CPUs
 * past the topology are not read), so that it means every managed CPU. */
bool refmodel_allowed_empty(const struct topo *t, const struct rtplace_cpumask *allowed);

#endif
