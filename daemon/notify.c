/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Record rings and doorbells per subscriber, and the registry of which
 * connection holds which subscription (a connection has at most one; it
 * ends with the connection). Subscribers sit in a list in subscription
 * order; publishing walks it, so a record costs one ring push per
 * subscriber and one eventfd write per ring that was empty.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <unistd.h>

#include "claims.h"
#include "clocks.h"
#include "levels.h"
#include "notify.h"
#include "ring.h"

struct notify_sub {
	TAILQ_ENTRY(notify_sub) link;
	uid_t uid;
	bool see_all;
	int memfd;
	int doorbell;
	void *mem;
	size_t bytes;
	struct ring ring;
	uint64_t delivered;
	bool bell_owed; /* the ring went non-empty since the last flush */
	uint32_t client; /* the connection holding it (server ids start at 1); 0: none */
	struct pidmap_view view; /* how it sees pids */
};

struct notify {
	TAILQ_HEAD(, notify_sub) subs;
	uint32_t ring_records;
	struct quota *quota; /* subscriptions by uid */
	uint64_t seq;
	struct notify_stats stats;
};

int notify_new(uint32_t ring_records, const struct quota_limits *limits, struct notify **ret)
{
	struct notify *n;
	int r;

	if (ring_records < 2 || ring_records > RTPLACE_RING_MAX_RECORDS || (ring_records & (ring_records - 1)))
		return -EINVAL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	TAILQ_INIT(&n->subs);
	n->ring_records = ring_records;
	r = quota_new(limits, &n->quota);
	if (r < 0)
		free(n);
	else
		*ret = n;
	return r;
}

void notify_set_limits(struct notify *n, const struct quota_limits *limits)
{
	quota_set_limits(n->quota, limits);
}

void notify_free(struct notify *n)
{
	if (!n)
		return;
	while (!TAILQ_EMPTY(&n->subs))
		notify_unsubscribe(n, TAILQ_FIRST(&n->subs));
	quota_free(n->quota);
	free(n);
}

static void notify_sub_close(struct notify_sub *s)
{
	if (s->mem != MAP_FAILED)
		munmap(s->mem, s->bytes);
	if (s->memfd >= 0)
		close(s->memfd);
	if (s->doorbell >= 0)
		close(s->doorbell);
	free(s);
}

int notify_subscribe(struct notify *n, uid_t uid, bool see_all, struct rtplace_reason *reason,
		     struct notify_sub **ret)
{
	return notify_subscribe_version(n, uid, see_all, RTPLACE_RING_VERSION, reason, ret);
}

int notify_subscribe_version(struct notify *n, uid_t uid, bool see_all, uint16_t version,
			     struct rtplace_reason *reason, struct notify_sub **ret)
{
	struct notify_sub *s;
	int r = quota_take(n->quota, uid, 1, reason);

	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s) {
		quota_put(n->quota, uid, 1);
		return -ENOMEM;
	}
	s->uid = uid;
	s->see_all = see_all;
	s->view.same_pidns = true;
	s->doorbell = -1;
	s->mem = MAP_FAILED;
	s->bytes = ring_bytes(n->ring_records);

	s->memfd = memfd_create("rtplace-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->memfd < 0 || ftruncate(s->memfd, (off_t)s->bytes) < 0)
		goto fail_errno;
	/* The subscriber holds the same file: were it able to shrink it, the
	 * daemon's next store into the ring would die of SIGBUS. Writes stay
	 * allowed because the subscriber publishes its tail in the file. */
	if (fcntl(s->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail_errno;
	s->mem = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->memfd, 0);
	if (s->mem == MAP_FAILED)
		goto fail_errno;
	r = ring_init_version(s->mem, s->bytes, n->ring_records, version, &s->ring);
	if (r < 0)
		goto fail;
	s->doorbell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->doorbell < 0)
		goto fail_errno;

	TAILQ_INSERT_TAIL(&n->subs, s, link);
	n->stats.subscribers++;
	*ret = s;
	return 0;

fail_errno:
	r = -errno;
fail:
	notify_sub_close(s);
	quota_put(n->quota, uid, 1);
	return r;
}

void notify_unsubscribe(struct notify *n, struct notify_sub *s)
{
	TAILQ_REMOVE(&n->subs, s, link);
	n->stats.subscribers--;
	quota_put(n->quota, s->uid, 1);
	notify_sub_close(s);
}

void notify_sub_info(const struct notify_sub *s, struct notify_sub_info *ret)
{
	*ret = (struct notify_sub_info){
		.memfd = s->memfd,
		.doorbell = s->doorbell,
		.ring_records = (uint32_t)(s->ring.mask + 1),
		.record_size = sizeof(struct rtplace_record),
		.ring_bytes = s->bytes,
		.delivered = s->delivered,
		.lost = ring_lost_total(&s->ring),
	};
}

void notify_sub_set_view(struct notify_sub *s, const struct pidmap_view *view)
{
	s->view = *view;
}

/* *rec as subscriber s sees it, in *shown; false when the record's task
 * lies outside s's namespace (notify.h). */
static bool notify_show(const struct notify_sub *s, const struct rtplace_record *rec, struct rtplace_record *shown)
{
	pid_t tid;

	*shown = *rec;
	if (rec->tid <= 0)
		return true;
	if (pidmap_show(&s->view, rec->tid, &tid) == 0 && !tid)
		return false;
	shown->tid = (int32_t)tid;
	return true;
}

int notify_queue(struct notify *n, struct rtplace_record *rec)
{
	struct rtplace_record shown;
	struct notify_sub *s;
	bool was_empty;

	rec->seq = ++n->seq;
	n->stats.published++;
	TAILQ_FOREACH(s, &n->subs, link) {
		const struct rtplace_record *out = rec;

		if (!s->see_all && rec->uid != (uint32_t)s->uid) {
			n->stats.filtered++;
			continue;
		}
		/* Its readers could not name these (and they carry no id
		 * there): they were added with version 2. */
		if (s->ring.version == RTPLACE_RING_VERSION_1 &&
		    (rec->type == RTPLACE_RECORD_WATCHDOG || rec->type == RTPLACE_RECORD_CLAIM_CREATED ||
		     rec->type == RTPLACE_RECORD_CLAIM_RELEASED || rec->type == RTPLACE_RECORD_ISOLATED ||
		     rec->type == RTPLACE_RECORD_ISOLATION_RELEASED)) {
			n->stats.filtered++;
			continue;
		}
		if (!s->view.same_pidns) {
			if (!notify_show(s, rec, &shown)) {
				n->stats.filtered++;
				continue;
			}
			out = &shown;
		}
		if (ring_push(&s->ring, out, &was_empty) < 0) {
			n->stats.dropped++;
			continue;
		}
		s->delivered++;
		n->stats.delivered++;
		s->bell_owed |= was_empty;
	}
	return 0;
}

int notify_flush(struct notify *n)
{
	static const uint64_t one = 1;
	struct notify_sub *s;
	int rung = 0;

	TAILQ_FOREACH(s, &n->subs, link) {
		if (!s->bell_owed)
			continue;
		s->bell_owed = false;
		/* Non-blocking; it can only fail when the counter is near
		 * 2^64, and then the subscriber has a wake-up pending anyway. */
		if (write(s->doorbell, &one, sizeof(one)) == (ssize_t)sizeof(one)) {
			n->stats.doorbells++;
			rung++;
		}
	}
	return rung;
}

int notify_publish(struct notify *n, struct rtplace_record *rec)
{
	notify_queue(n, rec);
	return notify_flush(n);
}

int notify_record(struct notify *n, uint8_t type, int32_t tid, uint32_t uid, int from_cpu, int to_cpu,
		  uint8_t policy, uint8_t prio)
{
	struct rtplace_record rec = {
		.tid = tid,
		.uid = uid,
		.from_cpu = (int16_t)from_cpu,
		.to_cpu = (int16_t)to_cpu,
		.type = type,
		.policy = policy,
		.prio = prio,
	};

	rec.time_ns = clocks_monotonic_ns();
	return notify_publish(n, &rec);
}

void notify_claim_life(const struct claim *cl, uint32_t what, void *ctx)
{
	struct notify *n = ctx;
	int first = cpuset_next(&cl->cpus, 0);
	struct rtplace_record rec = {
		.tid = cl->pid,
		.uid = cl->uid,
		.from_cpu = (int16_t)first,
		.prio = (uint8_t)level_rt_priority(cl->level),
		.claim_id = cl->id,
	};

	switch (what) {
	case CLAIMS_LIFE_CREATED:
		rec.type = RTPLACE_RECORD_CLAIM_CREATED;
		break;
	case RTPLACE_CLAIM_ENDED_EXPIRED:
		rec.type = RTPLACE_RECORD_CLAIM_EXPIRED;
		break;
	case RTPLACE_CLAIM_ENDED_REVOKED:
		rec.type = RTPLACE_RECORD_CLAIM_REVOKED;
		break;
	default:
		rec.type = RTPLACE_RECORD_CLAIM_RELEASED;
	}
	rec.time_ns = clocks_monotonic_ns();
	notify_publish(n, &rec);
}

void notify_isolation(const struct claim *cl, uint8_t type, uint8_t detail, void *ctx)
{
	struct rtplace_record rec = {
		.tid = cl->pid,
		.uid = cl->uid,
		.from_cpu = (int16_t)cpuset_next(&cl->cpus, 0),
		.type = type,
		.prio = detail,
		.claim_id = cl->id,
	};

	rec.time_ns = clocks_monotonic_ns();
	notify_publish(ctx, &rec);
}

static struct notify_sub *notify_find_client(const struct notify *n, uint32_t client)
{
	struct notify_sub *s;

	TAILQ_FOREACH(s, &n->subs, link)
		if (s->client == client)
			return s;
	return NULL;
}

int notify_subscribe_client(struct notify *n, uint32_t client, uid_t uid, bool see_all, uint16_t version,
			    const struct pidmap_view *view, struct rtplace_reason *reason, struct notify_sub_info *ret)
{
	struct notify_sub *s = notify_find_client(n, client);
	int r;

	if (!s) {
		r = notify_subscribe_version(n, uid, see_all, version, reason, &s);
		if (r < 0)
			return r;
		s->client = client;
		if (view)
			notify_sub_set_view(s, view);
	}
	notify_sub_info(s, ret);
	return 0;
}

void notify_client_gone(struct notify *n, uint32_t client)
{
	struct notify_sub *s = notify_find_client(n, client);

	if (s)
		notify_unsubscribe(n, s);
}

void notify_get_stats(const struct notify *n, struct notify_stats *ret)
{
	*ret = n->stats;
}
