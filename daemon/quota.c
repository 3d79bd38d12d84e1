/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-uid shares with room for root. The counts live in an open-addressed
 * hash of uids (linear probing, at most half full, a slot emptied by
 * shifting its successors back), so nothing marks deleted slots and a
 * uid whose count drops to 0 leaves the table at once: the table holds
 * only uids that hold something, and users who come and go do not grow it.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "quota.h"

#define QUOTA_MIN_SLOTS 16

struct quota_slot {
	uint32_t uid;
	uint32_t count; /* 0: the slot is empty */
};

struct quota {
	struct quota_limits l;
	struct quota_use use; /* .uid unused */
	struct quota_slot *slots;
	uint32_t cap;   /* power of two */
	uint32_t nused; /* slots with a count */
};

static uint32_t quota_min(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t quota_left(uint32_t limit, uint32_t used)
{
	return used < limit ? limit - used : 0;
}

uint32_t quota_room(const struct quota_limits *l, uid_t uid, const struct quota_use *use)
{
	uint32_t room = quota_left(l->size, use->all);

	if (uid != 0)
		room = quota_min(room, quota_min(quota_left(l->users, use->users), quota_left(l->per_user, use->uid)));
	return room;
}

int quota_check(const struct quota_limits *l, uid_t uid, const struct quota_use *use, uint32_t n,
		struct rtplace_reason *reason)
{
	struct rtplace_reason ignored;
	int r = 0;

	if (!reason)
		reason = &ignored;
	/* The narrowest limit first: that is the one to raise. */
	if (uid != 0 && (uint64_t)use->uid + n > l->per_user) {
		reason_set(reason, "[limits] %s = %u reached", l->per_user_key, l->per_user);
		r = -EDQUOT;
	} else if (uid != 0 && (uint64_t)use->users + n > l->users) {
		reason_set(reason, "[limits] %s = %u reached", l->users_key, l->users);
		r = -EUSERS;
	} else if ((uint64_t)use->all + n > l->size) {
		if (l->size_key)
			reason_set(reason, "[limits] %s = %u reached", l->size_key, l->size);
		else
			reason_set(reason, "pool of %u full", l->size);
		r = -ENOSPC;
	}
	return r;
}

static uint32_t quota_hash(uint32_t uid)
{
	/* Fibonacci hashing: consecutive uids (60001, 60002, ...) spread. */
	return uid * 2654435769u;
}

/* The slot of uid, or the empty slot where it would go. */
static struct quota_slot *quota_slot(const struct quota *q, uint32_t uid)
{
	uint32_t mask = q->cap - 1;

	for (uint32_t i = quota_hash(uid) & mask;; i = (i + 1) & mask)
		if (!q->slots[i].count || q->slots[i].uid == uid)
			return &q->slots[i];
}

static int quota_grow(struct quota *q)
{
	struct quota_slot *old = q->slots;
	uint32_t old_cap = q->cap;
	struct quota_slot *slots = calloc((size_t)old_cap * 2, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	q->slots = slots;
	q->cap = old_cap * 2;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].count)
			*quota_slot(q, old[i].uid) = old[i];
	free(old);
	return 0;
}

/* Empties slot s, moving later entries of its probe run back so that
 * every entry stays reachable from its home slot without tombstones. */
static void quota_slot_clear(struct quota *q, struct quota_slot *s)
{
	uint32_t mask = q->cap - 1, hole = (uint32_t)(s - q->slots);

	s->count = 0;
	for (uint32_t i = (hole + 1) & mask; q->slots[i].count; i = (i + 1) & mask) {
		uint32_t home = quota_hash(q->slots[i].uid) & mask;

		/* Entry i may fill the hole unless its home lies cyclically
		 * in (hole, i]: then the hole is before its home. */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			q->slots[hole] = q->slots[i];
			q->slots[i].count = 0;
			hole = i;
		}
	}
	q->nused--;
}

int quota_new(const struct quota_limits *l, struct quota **ret)
{
	struct quota *q = calloc(1, sizeof(*q));
	int r = -ENOMEM;

	if (q) {
		q->slots = calloc(QUOTA_MIN_SLOTS, sizeof(*q->slots));
		q->cap = QUOTA_MIN_SLOTS;
		q->l = *l;
		if (q->slots) {
			*ret = q;
			r = 0;
		} else {
			free(q);
		}
	}
	return r;
}

void quota_free(struct quota *q)
{
	if (!q)
		return;
	free(q->slots);
	free(q);
}

void quota_set_limits(struct quota *q, const struct quota_limits *l)
{
	q->l = *l;
}

void quota_get_use(const struct quota *q, uid_t uid, struct quota_use *ret)
{
	*ret = q->use;
	ret->uid = quota_slot(q, (uint32_t)uid)->count;
}

uint32_t quota_room_of(const struct quota *q, uid_t uid)
{
	struct quota_use use;

	quota_get_use(q, uid, &use);
	return quota_room(&q->l, uid, &use);
}

int quota_check_of(const struct quota *q, uid_t uid, uint32_t n, struct rtplace_reason *reason)
{
	struct quota_use use;

	quota_get_use(q, uid, &use);
	return quota_check(&q->l, uid, &use, n, reason);
}

int quota_take(struct quota *q, uid_t uid, uint32_t n, struct rtplace_reason *reason)
{
	struct quota_use use;
	struct quota_slot *s;
	int r;

	quota_get_use(q, uid, &use);
	r = quota_check(&q->l, uid, &use, n, reason);
	s = quota_slot(q, (uint32_t)uid);
	if (r == 0 && n && !s->count && 2 * (q->nused + 1) > q->cap) {
		r = quota_grow(q);
		s = quota_slot(q, (uint32_t)uid);
	}
	if (r == 0 && n) {
		q->nused += !s->count;
		s->uid = (uint32_t)uid;
		s->count += n;
		q->use.all += n;
		if (uid != 0)
			q->use.users += n;
	}
	return r;
}

void quota_put(struct quota *q, uid_t uid, uint32_t n)
{
	struct quota_slot *s = quota_slot(q, (uint32_t)uid);

	n = quota_min(n, s->count);
	if (!n)
		return;
	s->count -= n;
	q->use.all -= n;
	if (uid != 0)
		q->use.users -= n;
	if (!s->count)
		quota_slot_clear(q, s);
}
