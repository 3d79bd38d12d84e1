/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Managed processes (DESIGN §7): the processes whose threads the daemon
 * may push off a contended CPU. A process becomes managed through a claim
 * (QUERY with RTPLACE_QUERY_F_MANAGE, until the claim's owner exits) or
 * through a [moves] manage-* rule (while it matches). This file owns the
 * list of managed processes, the table of their threads the tracker
 * watches, the /proc scanner that applies the rules, and the rebalancing
 * tick that drains the tracker's events: collisions become records and go
 * to push.c, exits end a thread's entry.
 */
#ifndef RTPLACE_MANAGE_H
#define RTPLACE_MANAGE_H

#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "conf.h"
#include "cpupri.h"
#include "engine.h"
#include "cpuset.h"
#include "notify.h"
#include "placement.h"
#include "push.h"
#include "topo.h"
#include "tracker.h"

struct manage;

/* A watched thread of a managed process. */
struct manage_thread {
	pid_t tid;
	pid_t pid;
	uid_t uid;
	struct push_rate push; /* push.c's, per thread */
};

struct manage_opts {
	struct event_base *base;
	/* The live map and its managed CPUs; its levels source's tracker
	 * (none: nothing is managed); its claims' owners that exit are let
	 * go. */
	struct engine *engine;
	struct notify *notify;               /* collisions and exits become records */
	struct push *push;                   /* gets the collisions */
};

int manage_new(const struct manage_opts *opts, const struct config *cfg, struct manage **ret);
void manage_free(struct manage *mg);

/*
 * Takes the [moves] manage-* rules and rebalance-interval-ms; a user that
 * does not exist is logged and ignored. Applies the rules at once (a walk
 * of /proc); while any is set, new matches are looked for on the
 * rebalancing tick, at most once per second. 0 or -errno.
 */
int manage_apply_config(struct manage *mg, const struct config *cfg);

/*
 * Manages the threads of process pid (owned by uid) until
 * manage_release(): a push may move them to any CPU of allowed (the CPUs
 * the claim that made them managed was allowed to choose from). A process
 * a manage-* rule made managed stays so, under these terms, when its rule
 * goes away. Its threads count in uid's share of the tracker's map
 * ([limits] max-managed-threads-per-user, root's room kept): those that
 * do not fit, and those beyond one batch, are watched on later ticks as
 * room comes free; note (may be NULL) then says which limit was met.
 * 0, -ENOMEM, or -EOPNOTSUPP in simulation.
 */
int manage_process(struct manage *mg, pid_t pid, uid_t uid, const struct rtplace_cpumask *allowed, struct rtplace_reason *note);
void manage_release(struct manage *mg, pid_t pid);

/* Tracker collisions on managed threads since the daemon started. */
uint64_t manage_collisions(const struct manage *mg);

#endif
