/*
 * What the tracker's BPF programs (tracker.bpf.c) and its loader
 * (daemon/tracker.c) share: limits baked into the programs and the ring
 * buffer record. Fixed-width fields only; BPF C includes this after
 * kernel-types.h, user space after <linux/types.h>.
 *
 * struct tracker_event, 32 bytes, 8-aligned, one per ring buffer record:
 *
 *   offset  field      meaning
 *   0       ts_ns      CLOCK_MONOTONIC time of the event (bpf_ktime_get_ns)
 *   8       type       enum tracker_event_type
 *   12      tid        the watched thread
 *   16      tgid       its process
 *   20      cpu        the CPU it ran or waited on
 *   24      level      the thread's own level (levels.h), from its effective prio
 *   28      cpu_level  COLLISION: the level of what it waits behind; EXIT: 0
 */
#ifndef RTPLACE_BPF_TRACKER_ABI_H
#define RTPLACE_BPF_TRACKER_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "rtplace-levels.h"

/* CPU ids the programs handle. */
#define TRACKER_MAX_CPUS RTPLACE_MAX_CPUS
/* Threads the daemon can watch at once. */
#define TRACKER_MAX_WATCHED 4096
/* Ring buffer bytes: about 6500 records of 40 bytes with their headers. */
#define TRACKER_RING_BYTES (256 * 1024)

enum tracker_event_type {
	/* A watched thread exits; submitted with a forced wakeup. */
	TRACKER_EVENT_EXIT = 1,
	/* A watched RT thread is queued behind an equal-or-higher task on its
	 * CPU (at wakeup, at preemption, or moved onto a busier CPU). Submitted
	 * without a wakeup: the consumer drains these on its own schedule. */
	TRACKER_EVENT_COLLISION = 2,
};

struct tracker_event {
	__u64 ts_ns;
	__u32 type;
	__u32 tid;
	__u32 tgid;
	__u32 cpu;
	__u32 level;
	__u32 cpu_level;
};

_Static_assert(sizeof(struct tracker_event) == 32, "tracker_event is 32 bytes");
_Static_assert(_Alignof(struct tracker_event) == 8, "tracker_event is 8-aligned");
_Static_assert(__builtin_offsetof(struct tracker_event, type) == 8, "type follows ts_ns");
_Static_assert(__builtin_offsetof(struct tracker_event, cpu_level) == 28, "cpu_level last");

#endif
