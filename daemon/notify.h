/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Notification rings and doorbells, the daemon's side (DESIGN §7): one ring
 * (a sealed memfd, layout in record.h) and one eventfd doorbell per
 * subscriber, and the registry of subscriptions by connection (SUBSCRIBE
 * opens one per connection, its disconnect ends it). notify_publish() appends a record to every subscriber allowed
 * to see it and rings a doorbell only when that ring goes from empty to
 * non-empty (notify_queue() and notify_flush() defer that ring to the end
 * of a burst); a full ring drops the record and counts it, so a subscriber
 * that stops reading never slows the daemon down.
 *
 * A subscriber in another PID namespace (a container's) receives records
 * naming threads and owners by its own numbers (pidmap.h), and no record
 * about a task outside its namespace: it could neither watch nor name
 * such a task, the record would carry no thread it can act on, and a busy
 * host would fill its ring with them until records about its own threads
 * were lost. A record whose task is gone before it is published (a
 * thread's exit) cannot be placed: such a subscriber gets it with tid 0.
 *
 * The subscriber maps the memfd read-write (it publishes its tail there, see
 * record.h); the daemon trusts nothing it reads back but that tail, and only
 * to decide "full" or "empty".
 */
#ifndef RTPLACE_NOTIFY_H
#define RTPLACE_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pidmap.h"
#include "quota.h"
#include "reason.h"
#include "record.h"

struct notify;
struct notify_sub;

/* What the SUBSCRIBE reply carries, and the subscriber's counters. */
struct notify_sub_info {
	int memfd;             /* owned by the subscription; send a copy with SCM_RIGHTS */
	int doorbell;          /* eventfd, owned likewise */
	uint32_t ring_records; /* power of two */
	uint32_t record_size;  /* sizeof(struct rtplace_record) */
	uint64_t ring_bytes;   /* bytes to map */
	uint64_t delivered;    /* records pushed onto this ring */
	uint64_t lost;         /* records dropped because this ring was full */
};

struct notify_stats {
	uint64_t published;    /* notify_publish() calls */
	uint64_t delivered;    /* records pushed, all rings together */
	uint64_t filtered;     /* records a subscriber was not allowed to see */
	uint64_t dropped;      /* records that found a ring full */
	uint64_t doorbells;    /* doorbells rung */
	uint32_t subscribers;  /* now */
};

/*
 * A publisher whose rings hold ring_records records (a power of two, 2 ..
 * RTPLACE_RING_MAX_RECORDS), serving subscribers within limits (per uid,
 * root's room kept: quota.h). Returns 0, -EINVAL or -ENOMEM.
 */
int notify_new(uint32_t ring_records, const struct quota_limits *limits, struct notify **ret);

/* New limits (a reload): existing subscriptions stay. */
void notify_set_limits(struct notify *n, const struct quota_limits *limits);

/* Ends every subscription and frees n; NULL is a no-op. */
void notify_free(struct notify *n);

/*
 * Creates a ring and doorbell for a subscriber with uid. A subscriber with
 * see_all (root or CAP_SYS_NICE: it could watch any thread anyway) receives
 * every record; any other receives only records whose uid is its own.
 * Returns 0, quota_take()'s -EDQUOT, -EUSERS or -ENOSPC with reason (may be
 * NULL) naming the limit, or the -errno of memfd_create, ftruncate, mmap,
 * fcntl or eventfd.
 */
int notify_subscribe(struct notify *n, uid_t uid, bool see_all, struct rtplace_reason *reason,
		     struct notify_sub **ret);

/* notify_subscribe() with a ring in version (record.h): RTPLACE_RING_VERSION,
 * or RTPLACE_RING_VERSION_1 for a subscriber that speaks protocol version
 * 1 or 2, which is then given no record of a type version 1 lacks. */
int notify_subscribe_version(struct notify *n, uid_t uid, bool see_all, uint16_t version,
			     struct rtplace_reason *reason, struct notify_sub **ret);

/* Ends a subscription: unmaps, closes both descriptors, frees s. */
void notify_unsubscribe(struct notify *n, struct notify_sub *s);

void notify_sub_info(const struct notify_sub *s, struct notify_sub_info *ret);

/*
 * Stamps rec->seq with the next sequence number (daemon-wide, from 1) and
 * appends *rec to every ring whose subscriber may see it. The caller fills
 * every other field (time_ns from CLOCK_MONOTONIC). Never blocks. Rings
 * the doorbells owed at once: the same as notify_queue() then
 * notify_flush(). Returns the number of doorbells rung (>= 0).
 */
int notify_publish(struct notify *n, struct rtplace_record *rec);

/*
 * As notify_publish, but a ring that went from empty to non-empty only
 * owes its doorbell until notify_flush(). For a burst of records in one
 * event-loop turn: every eventfd write wakes a consumer that may preempt
 * the daemon, drain one record and sleep again, so ringing per record
 * turns one burst into many wake-ups (bench/records measures both).
 * Returns 0.
 */
int notify_queue(struct notify *n, struct rtplace_record *rec);

/* Rings every doorbell owed by notify_queue(); returns how many (>= 0). */
int notify_flush(struct notify *n);

/* Publishes a record of type stamped now (CLOCK_MONOTONIC); the other
 * fields as named. Returns what notify_publish() returns. */
int notify_record(struct notify *n, uint8_t type, int32_t tid, uint32_t uid, int from_cpu, int to_cpu,
		  uint8_t policy, uint8_t prio);

/*
 * A claims_life_fn (claims.h) for ctx, a struct notify: publishes
 * CLAIM_CREATED when a claim is made, CLAIM_EXPIRED or CLAIM_REVOKED when
 * its lease ran out or its CPU went offline, CLAIM_RELEASED when it ended
 * any other way (released, its connection closed, its owner exited), each
 * naming the claim's id, owner pid, uid, first CPU and the priority of its
 * level.
 */
struct claim;
void notify_claim_life(const struct claim *cl, uint32_t what, void *ctx);

/*
 * An engine_isolation_fn (engine.h) for ctx, a struct notify: publishes
 * an isolation record of type (ISOLATED or ISOLATION_RELEASED) for claim
 * cl, with detail in its prio byte (record.h), its owner, uid and first
 * CPU as notify_claim_life() has them.
 */
void notify_isolation(const struct claim *cl, uint8_t type, uint8_t detail, void *ctx);

/* How subscriber s sees the daemon's pids (copied; view->root must
 * outlive s). A new subscription sees them as the daemon does. */
void notify_sub_set_view(struct notify_sub *s, const struct pidmap_view *view);

/*
 * The subscription of connection client (a server id, >= 1): opened with
 * notify_subscribe() and view (notify_sub_set_view(); NULL: the daemon's
 * namespace) on its first call, its ring in version (as
 * notify_subscribe_version()), the same one on later calls. Returns 0 and
 * what the SUBSCRIBE reply carries, or notify_subscribe()'s -errno.
 */
int notify_subscribe_client(struct notify *n, uint32_t client, uid_t uid, bool see_all, uint16_t version,
			    const struct pidmap_view *view, struct rtplace_reason *reason, struct notify_sub_info *ret);

/* Connection client is gone: its subscription, if any, ends. */
void notify_client_gone(struct notify *n, uint32_t client);

void notify_get_stats(const struct notify *n, struct notify_stats *ret);

#endif
