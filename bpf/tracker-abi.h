/* SPDX-License-Identifier: GPL-2.0-or-later */
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
 *
 * struct tracker_cpu_time, one line (64 bytes) per CPU id, element cpu of
 * the tracker_times array map (mmap'ed read-only by the daemon): the
 * nanoseconds that CPU spent in each class (RTPLACE_CLASS_*), see below.
 */
#ifndef RTPLACE_BPF_TRACKER_ABI_H
#define RTPLACE_BPF_TRACKER_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "rtplace-levels.h"
#include "levels.h"

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

/*
 * Time by class of one CPU (DESIGN §16), written at each change of the
 * CPU's class (level_class() of its level), not at switches that keep it.
 *
 *   offset  field     meaning
 *   0       seq       even when the fields are stable, odd while written
 *   4       cls       the class since since_ns; LEVEL_CLASS_NONE: offline
 *   8       since_ns  CLOCK_MONOTONIC start of the open interval; 0 before
 *                     the CPU's first level change since load: the open
 *                     interval then runs from the load (tracker_start_ns)
 *                     in the class of the level published for the CPU
 *                     (seeded from /proc), and the first change closes it
 *   16      ns[4]     closed intervals' nanoseconds per class
 *   48      reserved
 *
 * Writer: the tracker's publish path, under the CPU's runqueue lock, so one
 * writer at a time per entry (it may run on another CPU: a remote wakeup);
 * never a lock of its own. Readers: the daemon, through
 * tracker_cpu_time_read(), without writing: a sequence count (the kernel's
 * seqcount_t pattern). The writer exchanges seq to odd, updates, exchanges
 * it to even; BPF_XCHG is fully ordered on every JIT (x86 xchg, arm64
 * swpal), so the odd value is visible before the updates and the updates
 * before the even value: plain stores would be reordered on arm64, and a
 * non-fetching atomic add is not ordered there. The reader loads seq
 * (acquire), the fields, then seq again after an acquire fence, and retries
 * while it was odd or changed. The line is the writer's: readers only pull
 * copies, and the writer touches it only when the class changes.
 */
struct tracker_cpu_time {
	__u32 seq;
	__u32 cls;
	__u64 since_ns;
	__u64 ns[RTPLACE_CLASS_COUNT];
	__u8 reserved[16];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct tracker_cpu_time) == 64, "tracker_cpu_time is one line");
_Static_assert(_Alignof(struct tracker_cpu_time) == 64, "tracker_cpu_time is line aligned");
_Static_assert(__builtin_offsetof(struct tracker_cpu_time, since_ns) == 8, "since_ns is 8-aligned");
_Static_assert(__builtin_offsetof(struct tracker_cpu_time, ns) == 16, "ns follows since_ns");

#ifndef __bpf__
#include <errno.h>

/* Retries of tracker_cpu_time_read(): a writer keeps seq odd for a few
 * stores with interrupts off, so two tries are rare and this many mean the
 * entry is not being written the way the protocol says. */
#define TRACKER_CPU_TIME_TRIES 1000

/*
 * The nanoseconds cpu's entry e holds per class at now_ns (CLOCK_MONOTONIC),
 * the open interval included, into ret; level is the CPU's published level
 * in the cpupri map and start_ns the load time (tracker_start_ns), for an
 * entry no level change has written yet. now_ns is read before the entry:
 * an interval that opened after it counts from its start only, so later
 * reads never return less for any class. The BPF writer accounts a change
 * before it publishes the new level, so a level read inside the sequence
 * window of an unwritten entry is the one the first change will close.
 * 0, or -EBUSY when no stable copy was seen in TRACKER_CPU_TIME_TRIES tries.
 */
static inline int tracker_cpu_time_read(const struct tracker_cpu_time *e, const __u32 *level, __u64 start_ns,
					__u64 now_ns, __u64 ret[RTPLACE_CLASS_COUNT])
{
	for (int tries = 0; tries < TRACKER_CPU_TIME_TRIES; tries++) {
		__u32 seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		__u32 cls = __atomic_load_n(&e->cls, __ATOMIC_RELAXED);
		__u64 since = __atomic_load_n(&e->since_ns, __ATOMIC_RELAXED);
		__u64 ns[RTPLACE_CLASS_COUNT];

		for (int c = 0; c < RTPLACE_CLASS_COUNT; c++)
			ns[c] = __atomic_load_n(&e->ns[c], __ATOMIC_RELAXED);
		if (!since) {
			cls = level_class(__atomic_load_n(level, __ATOMIC_RELAXED));
			since = start_ns;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((seq & 1) || __atomic_load_n(&e->seq, __ATOMIC_RELAXED) != seq)
			continue;
		if (since && cls < RTPLACE_CLASS_COUNT && now_ns > since)
			ns[cls] += now_ns - since;
		for (int c = 0; c < RTPLACE_CLASS_COUNT; c++)
			ret[c] = ns[c];
		return 0;
	}
	return -EBUSY;
}
#endif

#endif
