/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-uid shares with room for root. The counts live in a table of uids
 * (idmap.h), and a uid whose count drops to 0 leaves it at once: the
 * table holds only uids that hold something, and users who come and go do
 * not grow it.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "idmap.h"
#include "quota.h"

struct quota {
	struct quota_limits l;
	struct quota_use use; /* .uid unused */
	struct idmap counts;  /* uid -> what it holds, never 0 */
};

uint64_t quota_fd_reserve(uint64_t nofile)
{
	return nofile / 8 < 16 ? 16 : nofile / 8 > 1024 ? 1024 : nofile / 8;
}

bool quota_fd_reserved(uid_t uid, uint64_t fd, uint64_t nofile)
{
	return uid != 0 && nofile != UINT64_MAX && fd + quota_fd_reserve(nofile) >= nofile;
}

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

/* What uid holds. */
static uint32_t quota_count(const struct quota *q, uid_t uid)
{
	const uint32_t *n = idmap_find(&q->counts, (uint32_t)uid);

	return n ? *n : 0;
}

int quota_new(const struct quota_limits *l, struct quota **ret)
{
	struct quota *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->l = *l;
	*ret = q;
	return 0;
}

void quota_free(struct quota *q)
{
	if (!q)
		return;
	idmap_free(&q->counts);
	free(q);
}

void quota_set_limits(struct quota *q, const struct quota_limits *l)
{
	q->l = *l;
}

void quota_get_use(const struct quota *q, uid_t uid, struct quota_use *ret)
{
	*ret = q->use;
	ret->uid = quota_count(q, uid);
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
	int r;

	quota_get_use(q, uid, &use);
	r = quota_check(&q->l, uid, &use, n, reason);
	if (r == 0 && n)
		r = idmap_put(&q->counts, (uint32_t)uid, use.uid + n);
	if (r == 0) {
		q->use.all += n;
		if (uid != 0)
			q->use.users += n;
	}
	return r;
}

void quota_put(struct quota *q, uid_t uid, uint32_t n)
{
	uint32_t held = quota_count(q, uid);

	n = quota_min(n, held);
	if (!n)
		return;
	if (held == n)
		idmap_remove(&q->counts, (uint32_t)uid);
	else
		idmap_put(&q->counts, (uint32_t)uid, held - n); /* present: no allocation */
	q->use.all -= n;
	if (uid != 0)
		q->use.users -= n;
}
