/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "actors.h"
#include "log.h"
#include "quota.h"

/* Root's subscriptions are bounded by its connections (and the daemon's
 * descriptors: two each), not by a share. */
static void actors_subscriber_limits(const struct config *cfg, struct quota_limits *ret)
{
	*ret = (struct quota_limits){
		.size = UINT32_MAX,
		.users = cfg->limits.max_subscribers,
		.per_user = cfg->limits.max_subscribers_per_user,
		.users_key = "max-subscribers",
		.per_user_key = "max-subscribers-per-user",
	};
}

/* The restored MANAGE claims' owners are managed again, on the terms
 * their claims were made with. */
static void actors_restore_managed(struct actors *a, const struct claims *claims)
{
	const struct claim *cl;

	for (unsigned i = 0; (cl = claims_at(claims, i)); i++) {
		struct rtplace_reason note = { .text = "" };
		int r;

		if (!cl->pid || cpuset_empty(&cl->managed))
			continue;
		r = manage_process(a->manage, cl->pid, cl->uid, &cl->managed, &note);
		if (r < 0 && r != -EOPNOTSUPP)
			log_warning("restored claim %u: cannot manage pid %d again: %s", cl->id, (int)cl->pid,
				    strerror(-r));
		else if (note.text[0])
			log_info("restored claim %u: pid %d: %s", cl->id, (int)cl->pid, note.text);
	}
}

static int actors_build(struct actors *a, struct engine *e, struct event_base *base, const struct config *cfg)
{
	struct quota_limits subscribers;
	int r;

	actors_subscriber_limits(cfg, &subscribers);
	r = notify_new(cfg->notify.ring_records, &subscribers, &a->notify);
	if (r < 0)
		return r;
	/* Subscribers see every claim made and ended, with its id. */
	engine_watch_life(e, notify_claim_life, a->notify);
	engine_watch_isolation(e, notify_isolation, a->notify);
	r = moves_new(&(struct moves_opts){ .engine = e, .notify = a->notify }, &a->moves);
	if (r < 0)
		return r;
	r = push_new(&(struct push_opts){ .engine = e, .notify = a->notify }, cfg, &a->push);
	if (r < 0)
		return r;
	return manage_new(&(struct manage_opts){ .base = base, .engine = e, .notify = a->notify, .push = a->push },
			  cfg, &a->manage);
}

int actors_new(struct engine *e, struct event_base *base, const struct config *cfg, struct actors *ret)
{
	struct actors a = { 0 };
	int r = actors_build(&a, e, base, cfg);

	if (r < 0) {
		actors_free(&a);
		return r;
	}
	actors_restore_managed(&a, engine_claims_view(e));
	*ret = a;
	return 0;
}

void actors_free(struct actors *a)
{
	manage_free(a->manage);
	push_free(a->push);
	moves_free(a->moves);
	notify_free(a->notify);
	*a = (struct actors){ 0 };
}

void actors_apply_config(struct actors *a, const struct config *cfg)
{
	struct quota_limits subscribers;

	actors_subscriber_limits(cfg, &subscribers);
	notify_set_limits(a->notify, &subscribers);
	push_apply_config(a->push, cfg);
	manage_apply_config(a->manage, cfg);
}

void actors_get_stats(const struct actors *a, struct actors_stats *ret)
{
	struct notify_stats ns;
	uint64_t moved, failed, pushed, push_failed;

	moves_get_counts(a->moves, &moved, &failed);
	push_get_counts(a->push, &pushed, &push_failed);
	notify_get_stats(a->notify, &ns);
	*ret = (struct actors_stats){
		.moved = moved + pushed,
		.failed = failed + push_failed,
		.collisions = manage_collisions(a->manage),
		.records_lost = ns.dropped,
	};
}
