/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Local reads (DESIGN §19): the sealed memfds the daemon hands clients.
 * A region is a memfd the daemon maps read-write once, then seals
 * (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_FUTURE_WRITE, F_SEAL_SEAL): the
 * daemon's own mapping, made before the seal, keeps writing; every later
 * writable mapping, mprotect() to write or write(2) fails, whoever holds
 * the descriptor. What clients get is a read-only reopening of it.
 *
 * The placement snapshot (common/snap.h) is such a region; so is the
 * simulated daemon's cpupri map (--topology), so that local reads work,
 * and are tested, without BPF, and the tracker's copy of its BPF map
 * (tracker.h), which no BPF program can be given.
 */
#ifndef RTPLACE_DAEMON_SNAPSHOT_H
#define RTPLACE_DAEMON_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "placement.h"
#include "rtplace-proto.h"
#include "topo.h"

struct snapshot_region {
	void *map;  /* the daemon's writable mapping, size bytes, zeroed at first */
	size_t size;
	int ro_fd;  /* read-only, sealed: what SCM_RIGHTS hands out */
};

/* Creates a sealed region of size bytes named name. 0 or -errno (logged). */
int snapshot_region_new(const char *name, size_t size, struct snapshot_region *ret);
void snapshot_region_free(struct snapshot_region *r);

/*
 * What the daemon offers local readers: the map descriptor it was given,
 * one that maps read-only only (a sealed memfd; -1: none, no local
 * reads) and the placement snapshot, kept
 * current by snapshot_publish() after every change of the claims, the
 * configuration, the isolation or the topology.
 */
struct snapshot {
	struct snapshot_region region;
	int map_fd;
	size_t map_size;
	uint64_t stamp; /* claims stamp last published, 0 for none yet */
};

/* 0 or -errno; with map_fd < 0 it makes nothing and offers nothing. */
int snapshot_new(const struct topo *t, int map_fd, size_t map_size, struct snapshot *ret);
void snapshot_free(struct snapshot *sn);

/* Publishes when claims carry a new stamp or force is set (the other
 * inputs changed). */
void snapshot_publish(struct snapshot *sn, const struct topo *t, const struct placement_config *cfg,
		      const struct rtplace_cpumask *housekeeping, const struct placement_claims *claims, bool force);

/* The daemon's rotation cursor after an answer. */
void snapshot_rotor(struct snapshot *sn, uint32_t rotor);

/* The reply to a LOCAL request and its two descriptors: 0, or -EOPNOTSUPP
 * when nothing is offered. */
int snapshot_offer(const struct snapshot *sn, struct rtplace_local_reply *ret, int fds[2]);

#endif
