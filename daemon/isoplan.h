/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The isolation planner: what isolating a claim's CPUs may take and what it
 * writes, decided from plain masks (daemon/isolation.c reads and writes
 * the kernel's files). Pure: no syscalls, no globals.
 *
 * Isolation never leaves a node that has a housekeeping CPU without one:
 * the CPUs of a node that no claim isolates and the host does not isolate
 * otherwise (isolcpus=, nohz_full, partitions rtplace did not make) run
 * what the isolated CPUs no longer take.
 *
 * A mask rtplace changes (a movable interrupt's affinity, the unbound
 * workqueue mask) is always planned from its value before rtplace changed
 * it, never from what rtplace wrote last: the claims isolated together
 * decide what it is, in any order of their beginnings and ends, and when
 * none of its CPUs is isolated any more it gets that first value back.
 */
#ifndef RTPLACE_ISOPLAN_H
#define RTPLACE_ISOPLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"
#include "reason.h"

/* The machine as isolation sees it. */
struct isoplan_host {
	const struct rtplace_cpumask *nodes; /* online CPUs of each node, disjoint */
	size_t n_nodes;
	struct rtplace_cpumask held;  /* isolated for claims now */
	struct rtplace_cpumask other; /* isolated otherwise: not housekeeping, but free to claim */
};

/* One mask rtplace may change. */
struct isoplan_mask {
	struct rtplace_cpumask original; /* before rtplace changed it */
	struct rtplace_cpumask current;  /* what it is now (original while unchanged) */
	bool changed;                    /* rtplace wrote it and has not put original back */
	bool managed;                    /* the kernel refuses writes (a managed interrupt) */
};

enum isoplan_action {
	ISOPLAN_KEEP,    /* nothing to write */
	ISOPLAN_SET,     /* write the planned mask */
	ISOPLAN_RESTORE, /* write back the original, exactly as it was read */
	ISOPLAN_MANAGED, /* the planned mask is not current, and cannot be written */
};

/*
 * Whether claimed may be isolated on top of h: 0; -EINVAL when claimed is
 * empty or has CPUs no node has online; -EBUSY when some of its CPUs are
 * held for another claim, or when it would leave a node that has a
 * housekeeping CPU with none (the reason names the node and its CPUs).
 */
int isoplan_admit(const struct isoplan_host *h, const struct rtplace_cpumask *claimed,
		  struct rtplace_reason *reason);

/*
 * What to do with m while the CPUs of h->held are isolated: the original
 * without them; when that leaves none, the housekeeping CPUs of the nodes
 * the original spans (of every node if those have none). The mask to
 * write (ISOPLAN_SET) or that could not be (ISOPLAN_MANAGED) goes to
 * *ret_mask; for ISOPLAN_RESTORE and ISOPLAN_KEEP it is the original.
 */
enum isoplan_action isoplan_mask(const struct isoplan_host *h, const struct isoplan_mask *m,
				 struct rtplace_cpumask *ret_mask);

/*
 * The kernel's hexadecimal CPU mask ("ff,ffffffff": 32-bit groups, the
 * most significant first), as the workqueue cpumask file holds it; a
 * trailing newline is allowed. 0, -EINVAL for bad syntax, -ERANGE for a
 * CPU at or above RTPLACE_MAX_CPUS. ret is written only on success.
 */
int isoplan_hex_parse(const char *text, struct rtplace_cpumask *ret);

/* s in that format ("0" when empty). 0 or -ENOSPC. */
int isoplan_hex_format(const struct rtplace_cpumask *s, char *buf, size_t len);

/* Longest text isoplan_hex_format() writes, with its NUL. */
#define ISOPLAN_HEX_MAX (RTPLACE_MAX_CPUS / 32 * 9 + 1)

/* The housekeeping CPUs of h: online, neither held nor isolated otherwise. */
void isoplan_housekeeping(const struct isoplan_host *h, struct rtplace_cpumask *ret);

#endif
