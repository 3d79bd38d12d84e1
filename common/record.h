/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Notification records and the ring that carries them (DESIGN §7): the
 * contract between rtplaced (the producer) and each subscriber (the
 * consumer). Plain C11 with GCC/Clang __atomic builtins, depends on nothing
 * but <stdint.h> and <stddef.h>, so librtplace and its users can include it.
 *
 * Record. 32 bytes, aligned to its own size, like the kernel's
 * call_single_data_t: the records of a ring start on a cache-line boundary,
 * so with 32-byte alignment a record never straddles two 64-byte lines and
 * the consumer reads each with one line fill, while the producer, writing
 * record i+1, dirties at most the line holding record i (already read or not
 * yet wanted). 32 bytes hold every field an event needs; 64 would halve
 * the records per line for one 4-byte field. A record either concerns a
 * thread or a claim (its type says which), and the last four bytes are
 * the thread's CPU after and policy, or the claim's id: a claim record has
 * no CPU after and no policy, a thread record no claim.
 *
 * Ring version 2 (the daemon writes it for subscribers that speak protocol
 * version 3 or later):
 *
 *   offset  size  field
 *   0       8     seq       daemon-wide, +1 per published event, from 1; a
 *                           subscriber that sees only its own threads' records
 *                           sees gaps (loss is told by the header, not gaps)
 *   8       8     time_ns   CLOCK_MONOTONIC when the event happened
 *   16      4     tid       thread concerned; claim records: the claim's
 *                           owner pid, 0 for none (it lives with a connection)
 *   20      4     uid       effective uid owning tid, or the claim's: the
 *                           filter key
 *   24      2     from_cpu  CPU before (-1: unknown / not applicable); claim
 *                           records: the claim's first CPU; WATCHDOG: the
 *                           CPU the thread kept from normal work
 *   26      1     type      RTPLACE_RECORD_*
 *   27      1     prio      1..99, 0 with OTHER; claim records: the RT
 *                           priority of the claim's level, 0 for normal
 *   28      4     thread records:  to_cpu (2, CPU after, -1: unknown /
 *                                  several), policy (1, RTPLACE_POLICY_* after
 *                                  the event; WATCHDOG: the RT policy the
 *                                  thread was demoted from, SCHED_OTHER
 *                                  after, and prio its RT priority),
 *                                  reserved (1, zero)
 *                 claim records:   claim_id (the claim, non-zero)
 *
 * The isolation records (ISOLATED, ISOLATION_RELEASED) are claim records
 * whose prio byte says what instead of a priority (the claim's level is in
 * its CLAIM_CREATED record): ISOLATED the RTPLACE_ISOLATED_* bits of what
 * the claim's CPUs were taken away from and what could not be,
 * ISOLATION_RELEASED the RTPLACE_ISOLATION_END_* code of why they came
 * back. 32 bytes hold the first CPU only: the claim's id names the rest
 * (`rtplacectl claims`), and the counts of what could not be are in the
 * daemon's log and the claim's reply.
 *
 * Ring version 1 (protocol versions 1 and 2, rtplaced 0.1.0), kept for
 * their readers: seq, time_ns, tid and uid as above, then from_cpu (24),
 * to_cpu (26), type (28), policy (29), prio (30), reserved (31); claim
 * records carry no id and to_cpu -1, and the types added with version 2
 * (WATCHDOG, CLAIM_CREATED, CLAIM_RELEASED, and ISOLATED and
 * ISOLATION_RELEASED added after it) are not written to it. The
 * ring's version is in its header; ring.c writes and reads both.
 *
 * Ring. One memfd per subscriber: a 192-byte header (three 64-byte lines)
 * then `capacity` records (a power of two). Indexes are free-running 64-bit
 * counters; record i lives in slot i & (capacity - 1).
 *
 *   line 0  constants: magic, version, record size, capacity, offset of
 *           record 0. Written once before the memfd is handed out.
 *   line 1  producer: head (next index to write), lost (records dropped
 *           because the ring was full, cumulative). Written by the daemon only.
 *   line 2  consumer: tail (next index to read). Written by the consumer only.
 *
 * head and tail sit on separate lines so that neither side's stores
 * invalidate the line the other side writes (false sharing would put a
 * cache-line hand-off on every record).
 *
 * The consumer writes tail into the shared memory, so it maps the memfd
 * read-write. The daemon keeps private copies of head and lost and never
 * reads back anything but tail, and it treats tail as untrusted: any value
 * that does not leave room counts as "full", so a misbehaving consumer can
 * only lose its own records. The memfd is sealed against shrinking (a
 * truncated file would SIGBUS the daemon's stores) and growing.
 *
 * Memory ordering (single producer, single consumer, lock-free):
 *   producer  t = load-acquire(tail)          pairs with the consumer's
 *                                             store-release: the slots below
 *                                             t are read, safe to overwrite
 *             full (head - t >= capacity):    lost += 1 (store-release), drop
 *             write record[head]
 *             store-release(head, head + 1)   publishes the record
 *             empty before? (t == head), else fence(seq_cst) and re-load
 *             tail: equal to the old head means the consumer emptied the
 *             ring meanwhile. Then ring the doorbell.
 *   consumer  h = load-acquire(head)          pairs with the producer's
 *                                             release: records below h and
 *                                             every lost increment before
 *                                             them are visible
 *             lost = load(lost); read records tail..h-1
 *             store-release(tail, h)
 *             fence(seq_cst); re-load head: if it moved, drain again.
 * The two seq_cst fences make the empty check a store-buffering (Dekker)
 * pair: either the producer sees the consumer's final tail and rings, or
 * the consumer sees the new head and keeps draining, so no record is left
 * behind a sleeping consumer. Both may happen: then the doorbell finds an
 * empty ring, which costs one wake-up and nothing else. The doorbell is rung
 * only on an empty-to-non-empty transition, at most once per transition
 * (one transition per distinct tail the consumer publishes), and the
 * consumer drains everything it finds, as with IPIs and call_single_queue.
 *
 * Loss. The producer never blocks and never overwrites: a record that finds
 * the ring full is dropped and counted in lost. The consumer reports the
 * increase of lost since its previous drain; as the increment precedes (in
 * release order) every later record, a drain that returns a record also
 * reports every loss that happened before it. A loss after the last record
 * of a burst is reported with the next record.
 */
#ifndef RTPLACE_RECORD_H
#define RTPLACE_RECORD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define RTPLACE_RECORD_ASSERT(cond, msg) static_assert(cond, msg)
#define RTPLACE_RECORD_ALIGNOF(type) alignof(type)
#else
#define RTPLACE_RECORD_ASSERT(cond, msg) _Static_assert(cond, msg)
#define RTPLACE_RECORD_ALIGNOF(type) _Alignof(type)
#endif

#define RTPLACE_RECORD_SIZE 32u
#define RTPLACE_RING_LINE 64u
#define RTPLACE_RING_MAGIC 0x474e5252u /* "RRNG" in little-endian memory */
#define RTPLACE_RING_VERSION 2u
/* The version before claim ids (see above). */
#define RTPLACE_RING_VERSION_1 1u
/* Largest capacity a ring accepts; keeps the mapping well under 2 GiB. */
#define RTPLACE_RING_MAX_RECORDS (1u << 24)

/* Record types. Numbers are never reused. */
enum {
	RTPLACE_RECORD_MOVED = 1,         /* the daemon moved tid from_cpu -> to_cpu */
	RTPLACE_RECORD_CLAIM_EXPIRED = 2, /* a claim's lease ran out; from_cpu: its first CPU */
	RTPLACE_RECORD_COLLISION = 3,     /* tid waited behind an equal or higher RT task on from_cpu */
	RTPLACE_RECORD_THREAD_EXITED = 4, /* a managed thread exited */
	RTPLACE_RECORD_CLAIM_REVOKED = 5, /* a claim's CPU went offline; from_cpu: its first CPU */
	RTPLACE_RECORD_WATCHDOG = 6,      /* the RealtimeKit starvation watchdog demoted tid (from_cpu) */
	RTPLACE_RECORD_CLAIM_CREATED = 7, /* a claim was made; from_cpu: its first CPU */
	RTPLACE_RECORD_CLAIM_RELEASED = 8, /* a claim ended: released, its connection closed or its owner exited */
	RTPLACE_RECORD_ISOLATED = 9,      /* a claim's CPUs were isolated; from_cpu: its first CPU, prio: RTPLACE_ISOLATED_* */
	RTPLACE_RECORD_ISOLATION_RELEASED = 10, /* they came back; prio: RTPLACE_ISOLATION_END_* */
};

/* An ISOLATED record's prio: what the CPUs were taken away from, then what
 * could not be. */
enum {
	RTPLACE_ISOLATED_PARTITION = 0x01,   /* other tasks' cpusets: an isolated partition */
	RTPLACE_ISOLATED_IRQS = 0x02,        /* movable interrupts */
	RTPLACE_ISOLATED_WORKQUEUES = 0x04,  /* unbound workqueues */
	RTPLACE_ISOLATED_IRQBALANCE = 0x08,  /* a running irqbalance bans them */
	RTPLACE_ISOLATED_MANAGED_KEPT = 0x10, /* managed interrupts the kernel keeps there */
	RTPLACE_ISOLATED_NOT_WRITTEN = 0x20, /* an affinity or mask could not be read or written */
	RTPLACE_ISOLATED_IRQBALANCE_UNREACHED = 0x40, /* irqbalance runs, its socket did not answer */
};

/* An ISOLATION_RELEASED record's prio: why. */
enum {
	RTPLACE_ISOLATION_END_RELEASED = 1,     /* the claim was released, or its connection closed */
	RTPLACE_ISOLATION_END_EXPIRED = 2,      /* its lease ran out */
	RTPLACE_ISOLATION_END_OWNER_EXITED = 3, /* its owner process exited */
	RTPLACE_ISOLATION_END_REVOKED = 4,      /* a CPU of it went offline (hotplug) */
	RTPLACE_ISOLATION_END_STOP = 5,         /* the daemon stops (a restart isolates the claims it restores again) */
};

/* Whether a record of type concerns a claim (claim_id set), not a thread. */
static inline int rtplace_record_is_claim(unsigned type)
{
	return type == RTPLACE_RECORD_CLAIM_EXPIRED || type == RTPLACE_RECORD_CLAIM_REVOKED ||
	       type == RTPLACE_RECORD_CLAIM_CREATED || type == RTPLACE_RECORD_CLAIM_RELEASED ||
	       type == RTPLACE_RECORD_ISOLATED || type == RTPLACE_RECORD_ISOLATION_RELEASED;
}

/* The record in ring version 2's layout (the form the code uses; ring.c
 * converts for a version-1 ring). */
struct rtplace_record {
	uint64_t seq;
	uint64_t time_ns;
	int32_t tid;
	uint32_t uid;
	int16_t from_cpu;
	uint8_t type;
	uint8_t prio;
	union {
		struct { /* thread records */
			int16_t to_cpu;
			uint8_t policy;
			uint8_t reserved;
		};
		uint32_t claim_id; /* claim records */
	};
} __attribute__((aligned(RTPLACE_RECORD_SIZE)));

/* A record in ring version 1's layout. */
struct rtplace_record_v1 {
	uint64_t seq;
	uint64_t time_ns;
	int32_t tid;
	uint32_t uid;
	int16_t from_cpu;
	int16_t to_cpu;
	uint8_t type;
	uint8_t policy;
	uint8_t prio;
	uint8_t reserved;
} __attribute__((aligned(RTPLACE_RECORD_SIZE)));

/*
 * The ring header; head, lost and tail are accessed only with __atomic
 * builtins (plain uint64_t so that C++ and C share the header).
 */
struct rtplace_ring_header {
	/* line 0: constants */
	uint32_t magic;          /* RTPLACE_RING_MAGIC */
	uint16_t version;        /* RTPLACE_RING_VERSION */
	uint16_t record_size;    /* sizeof(struct rtplace_record) */
	uint32_t capacity;       /* records, a power of two */
	uint32_t records_offset; /* bytes from the header to record 0 */
	uint8_t pad0[RTPLACE_RING_LINE - 16];
	/* line 1: producer */
	uint64_t head;
	uint64_t lost;
	uint8_t pad1[RTPLACE_RING_LINE - 16];
	/* line 2: consumer */
	uint64_t tail;
	uint8_t pad2[RTPLACE_RING_LINE - 8];
} __attribute__((aligned(RTPLACE_RING_LINE)));

/* Bytes of a ring of `records` records (header included). */
#define RTPLACE_RING_BYTES(records) (sizeof(struct rtplace_ring_header) + (size_t)(records) * RTPLACE_RECORD_SIZE)

/* Layout pins: these numbers are shared memory format. */
RTPLACE_RECORD_ASSERT(sizeof(struct rtplace_record) == RTPLACE_RECORD_SIZE, "record is 32 bytes");
RTPLACE_RECORD_ASSERT(RTPLACE_RECORD_ALIGNOF(struct rtplace_record) == RTPLACE_RECORD_SIZE,
		      "record is aligned to its size: never straddles a cache line");
RTPLACE_RECORD_ASSERT((RTPLACE_RECORD_SIZE & (RTPLACE_RECORD_SIZE - 1)) == 0, "record size is a power of two");
RTPLACE_RECORD_ASSERT(RTPLACE_RING_LINE % RTPLACE_RECORD_SIZE == 0, "records tile cache lines");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record, time_ns) == 8, "record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record, tid) == 16, "record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record, uid) == 20, "record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record, from_cpu) == 24, "record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record, type) == 26, "record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record, prio) == 27, "record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record, to_cpu) == 28, "record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record, policy) == 30, "record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record, reserved) == 31, "record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record, claim_id) == 28, "record layout");
RTPLACE_RECORD_ASSERT(sizeof(struct rtplace_record_v1) == RTPLACE_RECORD_SIZE, "version-1 record is 32 bytes");
RTPLACE_RECORD_ASSERT(RTPLACE_RECORD_ALIGNOF(struct rtplace_record_v1) == RTPLACE_RECORD_SIZE,
		      "version-1 record is aligned to its size");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record_v1, uid) == 20, "version-1 record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record_v1, from_cpu) == 24, "version-1 record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record_v1, to_cpu) == 26, "version-1 record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record_v1, type) == 28, "version-1 record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record_v1, policy) == 29, "version-1 record layout");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_record_v1, prio) == 30, "version-1 record layout");

RTPLACE_RECORD_ASSERT(sizeof(struct rtplace_ring_header) == 3 * RTPLACE_RING_LINE, "header is three lines");
RTPLACE_RECORD_ASSERT(RTPLACE_RECORD_ALIGNOF(struct rtplace_ring_header) == RTPLACE_RING_LINE,
		      "header is line aligned");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_ring_header, head) == RTPLACE_RING_LINE, "head on line 1");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_ring_header, lost) == RTPLACE_RING_LINE + 8, "lost beside head");
RTPLACE_RECORD_ASSERT(offsetof(struct rtplace_ring_header, tail) == 2 * RTPLACE_RING_LINE, "tail on line 2");
RTPLACE_RECORD_ASSERT(sizeof(struct rtplace_ring_header) % RTPLACE_RECORD_SIZE == 0,
		      "record 0 keeps its alignment after the header");
RTPLACE_RECORD_ASSERT(__atomic_always_lock_free(sizeof(uint64_t), 0), "indexes are lock-free");

#undef RTPLACE_RECORD_ASSERT
#undef RTPLACE_RECORD_ALIGNOF

#endif
