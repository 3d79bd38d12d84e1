/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Single-producer single-consumer record ring; layout and the pairing of
 * every barrier are described in record.h, next to the format they protect.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ring.h"

static bool ring_capacity_ok(uint64_t records)
{
	return records >= 2 && records <= RTPLACE_RING_MAX_RECORDS && (records & (records - 1)) == 0;
}

size_t ring_bytes(uint32_t records)
{
	return RTPLACE_RING_BYTES(records);
}

/* Record rec in version 1's layout, into slot. */
static void ring_store_v1(struct rtplace_record *slot, const struct rtplace_record *rec)
{
	bool claim = rtplace_record_is_claim(rec->type);
	struct rtplace_record_v1 v1 = {
		.seq = rec->seq,
		.time_ns = rec->time_ns,
		.tid = rec->tid,
		.uid = rec->uid,
		.from_cpu = rec->from_cpu,
		.to_cpu = claim ? -1 : rec->to_cpu,
		.type = rec->type,
		.policy = claim ? 0 : rec->policy,
		.prio = rec->prio,
	};

	memcpy(slot, &v1, sizeof(v1));
}

/* The version-1 record in slot, in version 2's form. */
static void ring_load_v1(const struct rtplace_record *slot, struct rtplace_record *ret)
{
	struct rtplace_record_v1 v1;

	memcpy(&v1, slot, sizeof(v1));
	*ret = (struct rtplace_record){
		.seq = v1.seq,
		.time_ns = v1.time_ns,
		.tid = v1.tid,
		.uid = v1.uid,
		.from_cpu = v1.from_cpu,
		.type = v1.type,
		.prio = v1.prio,
	};
	if (!rtplace_record_is_claim(v1.type)) {
		ret->to_cpu = v1.to_cpu;
		ret->policy = v1.policy;
	}
}

static void ring_load(const struct ring *r, uint64_t index, struct rtplace_record *ret)
{
	const struct rtplace_record *slot = &r->records[index & r->mask];

	if (r->version == RTPLACE_RING_VERSION_1)
		ring_load_v1(slot, ret);
	else
		*ret = *slot;
}

int ring_init(void *mem, size_t size, uint32_t records, struct ring *ret)
{
	return ring_init_version(mem, size, records, RTPLACE_RING_VERSION, ret);
}

int ring_init_version(void *mem, size_t size, uint32_t records, uint16_t version, struct ring *ret)
{
	struct rtplace_ring_header *hdr = mem;

	if (!mem || (uintptr_t)mem % RTPLACE_RING_LINE || !ring_capacity_ok(records) || size < ring_bytes(records) ||
	    (version != RTPLACE_RING_VERSION && version != RTPLACE_RING_VERSION_1))
		return -EINVAL;

	memset(mem, 0, ring_bytes(records));
	hdr->magic = RTPLACE_RING_MAGIC;
	hdr->version = version;
	hdr->record_size = sizeof(struct rtplace_record);
	hdr->capacity = records;
	hdr->records_offset = sizeof(*hdr);

	*ret = (struct ring){
		.hdr = hdr,
		.records = (struct rtplace_record *)(hdr + 1),
		.mask = records - 1,
		.version = version,
	};
	return 0;
}

int ring_attach(void *mem, size_t size, struct ring *ret)
{
	struct rtplace_ring_header *hdr = mem;

	if (!mem || (uintptr_t)mem % RTPLACE_RING_LINE)
		return -EINVAL;
	if (size < sizeof(*hdr) || hdr->magic != RTPLACE_RING_MAGIC ||
	    (hdr->version != RTPLACE_RING_VERSION && hdr->version != RTPLACE_RING_VERSION_1) ||
	    hdr->record_size != sizeof(struct rtplace_record) || hdr->records_offset != sizeof(*hdr) ||
	    !ring_capacity_ok(hdr->capacity) || size < ring_bytes(hdr->capacity))
		return -EPROTO;

	*ret = (struct ring){
		.hdr = hdr,
		.records = (struct rtplace_record *)(hdr + 1),
		.mask = hdr->capacity - 1,
		.version = hdr->version,
		/* Resume where a previous reader of this ring stopped; losses
		 * from before attaching are reported by the first drain. */
		.index = __atomic_load_n(&hdr->tail, __ATOMIC_RELAXED),
	};
	return 0;
}

int ring_push(struct ring *r, const struct rtplace_record *rec, bool *ret_was_empty)
{
	uint64_t head = r->index;
	uint64_t tail, used;
	bool was_empty;

	/* Acquire pairs with the consumer's release of tail: its reads of the
	 * slots below tail are done before this store may reuse one. */
	tail = __atomic_load_n(&r->hdr->tail, __ATOMIC_ACQUIRE);
	used = head - tail;
	/* A tail ahead of head wraps to a huge used: the consumer's index is
	 * untrusted and anything that does not leave room counts as full. */
	if (used > r->mask) {
		r->lost++;
		__atomic_store_n(&r->hdr->lost, r->lost, __ATOMIC_RELEASE);
		return -ENOBUFS;
	}

	if (r->version == RTPLACE_RING_VERSION_1)
		ring_store_v1(&r->records[head & r->mask], rec);
	else
		r->records[head & r->mask] = *rec;
	r->index = head + 1;
	/* Release: the record's bytes (and every lost increment before it)
	 * are visible to a consumer that acquires this head. */
	__atomic_store_n(&r->hdr->head, r->index, __ATOMIC_RELEASE);

	if (used == 0) {
		/* The consumer cannot move tail past head: it was empty. */
		was_empty = true;
	} else {
		/* Dekker with ring_consumer_settle(): order the head store
		 * before this re-load of tail. If the consumer emptied the
		 * ring in the meantime, one of us sees the other's store. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		was_empty = __atomic_load_n(&r->hdr->tail, __ATOMIC_RELAXED) == head;
	}
	*ret_was_empty = was_empty;
	return 0;
}

uint64_t ring_lost_total(const struct ring *r)
{
	return r->lost;
}

/* Consumer: reads head and lost; -EPROTO for a head the producer cannot
 * have written. The new losses are added to *lost_acc. */
static int ring_consumer_head(struct ring *r, uint64_t *ret_head, uint64_t *lost_acc)
{
	/* Acquire pairs with the producer's release of head: the records
	 * below it and the lost count written before them are visible. */
	uint64_t head = __atomic_load_n(&r->hdr->head, __ATOMIC_ACQUIRE);
	uint64_t lost = __atomic_load_n(&r->hdr->lost, __ATOMIC_RELAXED);

	if (head - r->index > r->mask + 1 || lost < r->lost)
		return -EPROTO;
	*lost_acc += lost - r->lost;
	r->lost = lost;
	*ret_head = head;
	return 0;
}

/*
 * Consumer: publishes the tail, then tells whether the ring is still empty.
 * Release: the reads of the slots below tail are done before the producer
 * may reuse them. The fence pairs with the one in ring_push: either the
 * producer sees this tail (and rings) or this load sees its new head.
 */
static bool ring_consumer_settle(struct ring *r)
{
	__atomic_store_n(&r->hdr->tail, r->index, __ATOMIC_RELEASE);
	r->emptied++;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&r->hdr->head, __ATOMIC_RELAXED) == r->index;
}

int ring_pop(struct ring *r, struct rtplace_record *ret, uint64_t *ret_lost)
{
	uint64_t head, lost = 0;
	int res;

	res = ring_consumer_head(r, &head, &lost);
	if (res == 0 && head == r->index && !ring_consumer_settle(r))
		res = ring_consumer_head(r, &head, &lost);
	if (res < 0)
		return res;
	if (ret_lost)
		*ret_lost = lost;
	if (head == r->index)
		return 0;

	ring_load(r, r->index, ret);
	r->index++;
	__atomic_store_n(&r->hdr->tail, r->index, __ATOMIC_RELEASE);
	return 1;
}

int64_t ring_drain(struct ring *r, ring_record_fn *cb, void *userdata, uint64_t *ret_lost)
{
	uint64_t head, lost = 0;
	int64_t n = 0;
	int res;

	for (;;) {
		res = ring_consumer_head(r, &head, &lost);
		if (res < 0)
			return res;
		while (r->index != head) {
			/* A copy: cb may keep it after the slot is reused. */
			struct rtplace_record rec;

			ring_load(r, r->index, &rec);

			r->index++;
			n++;
			if (cb(&rec, userdata) != 0) {
				__atomic_store_n(&r->hdr->tail, r->index, __ATOMIC_RELEASE);
				goto out;
			}
		}
		if (ring_consumer_settle(r))
			break;
	}
out:
	if (ret_lost)
		*ret_lost = lost;
	return n;
}
