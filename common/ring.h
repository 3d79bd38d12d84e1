/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The notification ring's logic (single producer, single consumer) on a
 * memory region the caller provides: the daemon passes its memfd mapping,
 * a subscriber its own mapping of the same memfd, the tests plain memory.
 * Layout and memory ordering are described in record.h. Pure: no syscalls,
 * no allocation; ringing the doorbell is the caller's job, told by push.
 *
 * A struct ring is one side's private view: the producer's copy of head
 * and lost, or the consumer's copy of tail and of the lost count it has
 * already reported. Each side trusts only its own copy, never what the
 * other side may have scribbled in the shared header.
 */
#ifndef RTPLACE_RING_H
#define RTPLACE_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

struct ring {
	struct rtplace_ring_header *hdr;
	struct rtplace_record *records;
	uint64_t mask;  /* capacity - 1 */
	uint16_t version; /* RTPLACE_RING_VERSION or _VERSION_1: the records' layout */
	uint64_t index; /* producer: head; consumer: tail */
	uint64_t lost;  /* producer: dropped so far; consumer: reported so far */
	/* Consumer: tails published after which the ring looked empty. The
	 * producer rings at most once per distinct such tail, so doorbells
	 * never exceed this plus one (the initial empty ring). */
	uint64_t emptied;
};

/* Bytes a ring of `records` records needs (RTPLACE_RING_BYTES). */
size_t ring_bytes(uint32_t records);

/*
 * Producer side: formats size bytes at mem (64-byte aligned) as an empty
 * ring of `records` records (a power of two, 2..RTPLACE_RING_MAX_RECORDS).
 * Returns 0, or -EINVAL (bad alignment, capacity, or size below
 * ring_bytes(records)).
 */
int ring_init(void *mem, size_t size, uint32_t records, struct ring *ret);

/* ring_init() of a ring in version (RTPLACE_RING_VERSION, or
 * RTPLACE_RING_VERSION_1 for readers of protocol versions 1 and 2);
 * -EINVAL for another version. */
int ring_init_version(void *mem, size_t size, uint32_t records, uint16_t version, struct ring *ret);

/*
 * Consumer side: checks the header of the ring at mem (size bytes mapped)
 * and starts reading at its current tail. Returns 0, -EPROTO for a header
 * that is not a ring of a version this code reads (RTPLACE_RING_VERSION or
 * _VERSION_1) or does not fit in size, -EINVAL for a misaligned mem.
 */
int ring_attach(void *mem, size_t size, struct ring *ret);

/*
 * Producer: appends *rec, in the ring's layout: in a version-1 ring a
 * claim record loses its id (record.h). Returns 0, and *ret_was_empty true when the ring
 * went from empty to non-empty with this record (ring the doorbell then, and
 * only then); or -ENOBUFS when the ring is full: the record is dropped and
 * counted in the header's lost. Never blocks.
 */
int ring_push(struct ring *r, const struct rtplace_record *rec, bool *ret_was_empty);

/* Producer: records dropped since ring_init. */
uint64_t ring_lost_total(const struct ring *r);

/*
 * Consumer: takes the oldest record into *ret, in version 2's form whatever
 * the ring's version (claim_id 0 from a version-1 ring). Returns 1 with a record, 0
 * when the ring is empty, -EPROTO when the header's head is impossible.
 * *ret_lost (may be NULL) gets the records dropped since the last report
 * (reported once). A 0 has re-checked head after publishing the tail, so
 * the caller may then sleep on the doorbell.
 */
int ring_pop(struct ring *r, struct rtplace_record *ret, uint64_t *ret_lost);

/* Called for each record in order; a non-zero return stops the drain early. */
typedef int ring_record_fn(const struct rtplace_record *rec, void *userdata);

/*
 * Consumer: hands every record present to cb, oldest first, until the ring
 * is seen empty after publishing the tail (so the caller may then sleep on
 * the doorbell). Returns the number of records handed out (>= 0), or
 * -EPROTO when the header's head is impossible. *ret_lost (may be NULL) gets
 * the records dropped since the previous report, all of them dropped before
 * the records handed out in this call, and possibly some after. When cb
 * stops the drain, the record it stopped at counts as consumed, and the
 * caller must drain again before it sleeps on the doorbell.
 */
int64_t ring_drain(struct ring *r, ring_record_fn *cb, void *userdata, uint64_t *ret_lost);

#endif
