/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The placement snapshot (DESIGN §19): what rtplaced adds to the cpupri map
 * for placement to read (the topology, the claimed level of every CPU, the
 * managed, isolated and housekeeping sets and the [placement] settings), in
 * one region the daemon writes and local readers map read-only (a sealed
 * memfd). Pure code: the writer and the reader work on memory they are
 * given; daemon/snapshot.c makes the region, client/local-read.c maps it.
 *
 * Representation, every part line (64 B) aligned:
 *
 *   offset      what                                written
 *   0           struct snap_header (geometry)       once, before it is handed out
 *   64          struct snap_seq: the sequence count  by every publish
 *   128         struct snap_rotor: the rotation     after every daemon answer
 *   192         struct snap_config                  by a publish
 *   cpus_off    struct snap_cpu[ncpus]              by a publish
 *   claims_off  __u8 [ncpus]: claimed level per CPU by a publish
 *
 * The sequence count has a line of its own, so a reader that polls it does
 * not share a line with what the daemon writes after every answer (the
 * rotor) or with the data it copies.
 *
 * Ordering (a sequence count, as the kernel's seqcount_t): the single
 * writer makes seq odd (a relaxed store), then a release fence, then writes
 * the data with plain stores, then stores seq + 2 with release. A reader
 * loads seq with acquire and retries while it is odd, copies the data,
 * issues an acquire fence and loads seq again (relaxed): equal values mean
 * no publish overlapped the copy. The first fence keeps the writer's data
 * stores after the odd value (a reader that sees new data sees an odd or
 * newer seq on its second load); the release store keeps them before the
 * even one (a reader whose first load saw it sees all of them). The copy
 * itself may see torn bytes while the writer works: the reader throws it
 * away, which is why readers copy before they use anything.
 *
 * The rotor is not under the count: it is the daemon's rotation cursor,
 * stored relaxed after every answer, so a local answer starts where the
 * daemon's next one would. A stale rotor changes which of equally good
 * CPUs comes first, never whether an answer is right.
 */
#ifndef RTPLACE_SNAP_H
#define RTPLACE_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "placement.h"
#include "topo.h"

#define SNAP_LINE 64
#define SNAP_MAGIC 0x50534e52u /* "RNSP" little-endian */
/* Bumped on any change a reader of the previous layout would misread:
 * such a reader then falls back to the socket. */
#define SNAP_LAYOUT 2u

struct snap_header {
	uint32_t magic;
	uint32_t layout;
	uint32_t size;       /* bytes in the region */
	uint32_t ncpus;
	uint32_t cpus_off;
	uint32_t claims_off;
	uint8_t reserved[SNAP_LINE - 24];
} __attribute__((aligned(SNAP_LINE)));

struct snap_seq {
	/* odd while a publish is under way; 64 bits, so that equal values
	 * mean the same publish (a reader keeps what it copied while the
	 * count stays the same) */
	uint64_t seq;
	uint8_t reserved[SNAP_LINE - 8];
} __attribute__((aligned(SNAP_LINE)));

struct snap_rotor {
	uint32_t rotor;
	uint8_t reserved[SNAP_LINE - 4];
} __attribute__((aligned(SNAP_LINE)));

/* struct placement_config and the topology's counts; shape changes
 * whenever anything here or in cpus[] does, so that a reader rebuilds
 * what it derives from them only then. */
struct snap_config {
	uint64_t shape;
	uint32_t nnodes, npackages, nllcs, ncores, nkinds;
	uint8_t prefer_idle;
	uint8_t avoid_smt;        /* enum placement_smt */
	uint8_t isolated_mode;    /* enum placement_isolated */
	uint8_t isolated_housekeeping;
	uint8_t reserved[SNAP_LINE - 32];
	struct rtplace_cpumask managed;
	struct rtplace_cpumask isolated;
	struct rtplace_cpumask housekeeping;
	/* The CPUs interrupt noise puts last within a level: it changes at most
	 * once an interrupt window, and each change is a new shape. */
	struct rtplace_cpumask noisy;
} __attribute__((aligned(SNAP_LINE)));

struct snap_cpu {
	int32_t node, package, llc, core, kind;
	uint32_t online;
};

struct snap {
	struct snap_header header;
	struct snap_seq seq;
	struct snap_rotor rotor;
	struct snap_config config;
};

_Static_assert(sizeof(struct snap_header) == SNAP_LINE, "header is one line");
_Static_assert(sizeof(struct snap_seq) == SNAP_LINE, "the count has a line of its own");
_Static_assert(offsetof(struct snap_seq, seq) == 0 && sizeof(((struct snap_seq *)0)->seq) == 8,
	       "the count is 8-aligned: one load");
_Static_assert(sizeof(struct snap_rotor) == SNAP_LINE, "the rotor has a line of its own");
_Static_assert(offsetof(struct snap, seq) == SNAP_LINE, "count on line 1");
_Static_assert(offsetof(struct snap, rotor) == 2 * SNAP_LINE, "rotor on line 2");
_Static_assert(offsetof(struct snap, config) == 3 * SNAP_LINE, "configuration from line 3");
_Static_assert(offsetof(struct snap_config, managed) == SNAP_LINE, "sets start on a line");
_Static_assert(sizeof(struct snap_config) % SNAP_LINE == 0, "configuration fills lines");
_Static_assert(_Alignof(struct snap) == SNAP_LINE, "line aligned");
_Static_assert(sizeof(struct snap_cpu) == 24, "a CPU is six words");

/* Bytes of the region for ncpus CPUs. */
size_t snap_size(uint32_t ncpus);

/* Writes the header and an empty, even-count body into snap (snap_size()
 * bytes, zeroed, line aligned). */
void snap_init(void *snap, uint32_t ncpus);

/* Publishes the state (claimed: t->ncpus levels, NULL for none) under the
 * count. The single writer's; t->ncpus must be the region's. */
void snap_publish(void *snap, const struct topo *t, const struct placement_config *cfg,
		  const struct rtplace_cpumask *housekeeping, const uint8_t *claimed);

/* The daemon's rotor after an answer. */
void snap_set_rotor(void *snap, uint32_t rotor);

/* Checks a mapped region (size bytes) a reader got: 0, -EINVAL for a bad
 * header, -EPROTONOSUPPORT for a layout this code does not know. */
int snap_check(const void *snap, size_t size);

/*
 * A reader's consistent copy: the claimed levels into claimed (ncpus
 * bytes), the rotor into *rotor, the shape and the count it was copied
 * under into *seq. When *seq already holds the current count on entry,
 * claimed (copied under it before) and the shape are left as they are and
 * only the rotor is read. Up to tries attempts; 0, or -EAGAIN when every
 * one overlapped a publish.
 */
int snap_read(const void *snap, unsigned tries, uint8_t *claimed, uint32_t *rotor, uint64_t *shape,
	      uint64_t *seq);

/* The configuration and the topology, copied under the count (up to tries
 * attempts): the configuration into *cfg, the topology into a new *ret
 * (topo_free()). 0, -EAGAIN, -ENOMEM, -EINVAL (a topology topo_finish()
 * refuses). */
int snap_read_shape(const void *snap, unsigned tries, struct snap_config *cfg, struct topo **ret);

/* The placement configuration a copied snap_config holds. */
void snap_placement_config(const struct snap_config *c, struct placement_config *ret);

#endif
