/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where the cpupri map's levels come from (DESIGN §8): one of three
 * sources behind one struct of functions, chosen once at start.
 *   tracker     the BPF tracker (tracker.c) writes the map from the
 *               scheduler's tracepoints: live, per thread, time by class;
 *   sampler     where BPF cannot load or is not wanted, the map sampled
 *               from /proc on the loop's timer (sampler.c): live, coarse;
 *   simulation  a --topology machine we do not run on: every online CPU
 *               idle, only claims change what placement sees.
 * Everything above reads the map and asks the source what it can tell
 * (levels_source_live(), levels_source_has_threads()); nothing else tests
 * which source runs. The source also follows CPU hotplug on the live
 * machine and reloads the topology for CPUs it has never seen, telling its
 * one listener (the engine) which CPUs went and whether the topology
 * changed.
 */
#ifndef RTPLACE_LEVELS_SOURCE_H
#define RTPLACE_LEVELS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "cpuset.h"
#include "loop.h"
#include "reason.h"
#include "rtplace-proto.h"
#include "topo.h"
#include "tracker.h"

struct levels_source;

/* The functions a source kind provides; NULL where it has nothing to
 * say. */
struct levels_source_ops {
	uint8_t mode; /* RTPLACE_TRACKING_* */
	/* Time by class of cpu at now_ns (tracker only). */
	int (*cpu_times)(const struct levels_source *src, uint32_t cpu, uint64_t now_ns,
			 uint64_t ret_ns[RTPLACE_CLASS_COUNT]);
	/* Fills what TRACKING says beyond the mode. */
	void (*describe)(const struct levels_source *src, struct rtplace_tracking_reply *ret);
	void (*close)(struct levels_source *src);
};

/* What the source tells its listener after hotplug: CPUs that went
 * offline (their claims end), and whether the topology was reloaded (what
 * is derived from it must be rebuilt). */
typedef void levels_source_changed_fn(const struct rtplace_cpumask *gone, bool topology_changed, void *ctx);

/*
 * Loads the topology and opens the source cfg asks for on loop: the
 * simulation with [topology] file, else the tracker, else (it cannot load
 * and [tracker] required = no, or mode = sampled) the sampler. 0, or
 * -errno after logging why; *ret_exit is then the exit status the daemon
 * should end with.
 */
int levels_source_open(struct loop *loop, const struct config *cfg, struct levels_source **ret, int *ret_exit);
void levels_source_close(struct levels_source *src);

/* The machine's topology; the pointer stays valid and current when the
 * source reloads it after hotplug. */
const struct topo *levels_source_topo(const struct levels_source *src);

/* Hotplug on the live machine is told to changed from now on (one
 * listener). */
int levels_source_follow(struct levels_source *src, levels_source_changed_fn *changed, void *ctx);

/* The map: its bytes, and a descriptor local readers may map read-only
 * (-1 for none). */
const void *levels_source_map(const struct levels_source *src, size_t *ret_size);
int levels_source_map_fd(const struct levels_source *src);

/* A local reader takes map_fd: from now on the tracker's copy behind it
 * follows the live map (TRACKER_MIRROR_MS apart). 0 or -ENOMEM. */
int levels_source_share(struct levels_source *src);

/* The map is the machine's (tracked or sampled), not a simulation. */
bool levels_source_live(const struct levels_source *src);
/* The source sees threads: who runs where, time by class, events. */
bool levels_source_has_threads(const struct levels_source *src);

int levels_source_cpu_times(const struct levels_source *src, uint32_t cpu, uint64_t now_ns,
			    uint64_t ret_ns[RTPLACE_CLASS_COUNT]);
void levels_source_describe(const struct levels_source *src, struct rtplace_tracking_reply *ret);

/* The BPF tracker behind the source, for what reads its events and
 * statistics (managed threads, metrics); NULL for the other kinds. */
struct tracker *levels_source_tracker(const struct levels_source *src);

#endif
