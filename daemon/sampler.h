/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cpupri map without BPF: the same map (cpupri.h) in the daemon's heap,
 * written by the daemon itself from /proc at every sample (seed.h, the one
 * reader the tracker's seeding uses) with the same cpupri_set() the BPF
 * programs call. For a kernel where the tracker cannot load, or an operator
 * who chose [tracker] mode = sampled.
 *
 * What it costs and what it misses. A sample lists every process and reads
 * the stat file of each of their threads, so its CPU time grows with the
 * threads on the machine, not with its CPUs (figures in rtplaced(8),
 * OVERHEAD); the daemon's loop calls sampler_sample() every
 * [tracker] sample-interval-ms. A level is as old as the last sample, and a
 * state that lasts less than an interval may never be seen: the map is
 * right about what runs for long (an RT spinner, a busy pipeline), not about
 * bursts. The per-CPU slots carry no pid, queued RT count or time by class,
 * and there are no tracker events (collisions, exits).
 *
 * One writer, the daemon's loop thread, which is also the map's only
 * reader: no ordering beyond cpupri_set()'s own is needed.
 */
#ifndef RTPLACE_SAMPLER_H
#define RTPLACE_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "topo.h"

struct sampler;

/*
 * A map sized and sharded for topo's CPUs as the tracker's would be,
 * filled by a first sample of the tree at proc ("/proc") and the online
 * list under sysfs ("/sys"); both strings must outlive the sampler. The
 * calling thread is left out of every sample (seed_scan()'s skip_tid):
 * sample from the thread that made it. 0, the first sample's error, or
 * -ENOMEM; *ret is written only on success.
 */
int sampler_new(const struct topo *topo, enum topo_shard shard, const char *proc, const char *sysfs,
		struct sampler **ret);

/*
 * Reads every CPU's level and publishes it: CPUs not online now (hotplug)
 * at the offline level. 0 or -errno (seed_scan(), hotplug_read_online());
 * on failure the map keeps the previous sample.
 */
int sampler_sample(struct sampler *s);

/* The map (cpupri_view_open()) and its size in bytes. */
const void *sampler_map(const struct sampler *s, size_t *ret_size);

struct sampler_stats {
	uint64_t samples;  /* sampler_sample() calls, sampler_new()'s included */
	uint64_t failures; /* of which failed */
	uint64_t cpu_ns;   /* the calling thread's CPU time spent in them */
	uint64_t last_ns;  /* the CPU time of the last one */
};

void sampler_get_stats(const struct sampler *s, struct sampler_stats *ret);

/* Accepts NULL. */
void sampler_free(struct sampler *s);

#endif
