/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A plain snapshot of the machine's topology, produced by topo_load()
 * (topo-hwloc.c, the only hwloc user) and consumed by the pure code
 * (placement, map geometry). CPUs are indexed by their OS (kernel) id;
 * ids absent from the machine are present in the array with online = false.
 *
 * Node, package, LLC and core ids are dense (0..n-1) in the order hwloc
 * lists those objects; cpu kind 0 is the most performant kind.
 */
#ifndef RTPLACE_TOPO_H
#define RTPLACE_TOPO_H

#include <stdbool.h>
#include <stdint.h>

#include "cpuset.h"
#include "reason.h"

struct topo_cpu {
	int32_t node;
	int32_t package;
	int32_t llc;
	int32_t core;
	int32_t kind;
	bool online;
};

struct topo {
	uint32_t ncpus; /* highest CPU id + 1 */
	uint32_t nnodes;
	uint32_t npackages;
	uint32_t nllcs;
	uint32_t ncores;
	uint32_t nkinds;
	struct topo_cpu *cpus;   /* [ncpus] */
	struct rtplace_cpumask online;    /* CPUs present and online when loaded: those
				  * whose place is known (the cpupri map says
				  * which are online now, see DESIGN §14) */
	struct rtplace_cpumask *node_cpus; /* [nnodes] */
	struct rtplace_cpumask *llc_cpus;  /* [nllcs] */
	struct rtplace_cpumask *core_cpus; /* [ncores]: a core's SMT siblings */
};

enum topo_shard {
	TOPO_SHARD_NODE,
	TOPO_SHARD_LLC,
};

/* Allocates a snapshot for ncpus CPU ids, all offline, no objects. 0 or -ENOMEM/-E2BIG. */
int topo_new(uint32_t ncpus, struct topo **ret);

/*
 * Fills the per-object CPU sets and counts from the cpus[] array (callers
 * fill cpus[] then call this). Returns 0, -EINVAL if an id is negative for an
 * online CPU, -ENOMEM.
 */
int topo_finish(struct topo *t);

void topo_free(struct topo *t);

/* The SMT siblings of cpu, cpu included (empty set for an unknown CPU). */
void topo_siblings(const struct topo *t, uint32_t cpu, struct rtplace_cpumask *ret);

/* Shard of every CPU id for the cpupri map (ret has t->ncpus entries;
 * offline CPUs go to shard 0) and the number of shards. */
void topo_shards(const struct topo *t, enum topo_shard mode, uint16_t *ret, uint32_t *ret_nshards);

/*
 * Loads the live machine (xml_path NULL) or an hwloc XML file, a regular
 * file read without blocking (file_read_regular()), into a snapshot. The
 * only hwloc user (topo-hwloc.c). Returns 0; the errors of
 * file_read_regular(); -EINVAL for a malformed file; -E2BIG for CPU ids
 * at or above RTPLACE_MAX_CPUS. On failure reason says why, naming the
 * file (or the machine) and, for -E2BIG, its size and the limit.
 */
int topo_load(const char *xml_path, struct rtplace_reason *reason, struct topo **ret);

/* topo_load() of hwloc XML text already read: size bytes at xml, which
 * are followed by a NUL (as file_read_regular() leaves them); what names
 * it in reasons. The live machine when xml is NULL. */
int topo_load_xml(const char *xml, size_t size, const char *what, struct rtplace_reason *reason,
		  struct topo **ret);

/* A synthetic machine, for tests and the built-in fallback. */
int topo_synthetic(uint32_t npackages, uint32_t nodes_per_package, uint32_t llcs_per_node,
		   uint32_t cores_per_llc, uint32_t threads_per_core, struct topo **ret);

#endif
