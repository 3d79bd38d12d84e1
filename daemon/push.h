/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The push policy (DESIGN §7): a thread of a managed process that the
 * tracker saw queued behind an equal-or-higher RT task is moved to a CPU
 * at a lower level that it is allowed on, a user-space RT push. This file
 * owns the policy and its counters: whether to push at all ([moves]
 * rebalance), the rate limit per thread (rebalance-interval-ms) and the
 * budget per rebalancing turn. manage.c decides which threads it applies
 * to and calls it on their collisions; moves.c picks the CPU, as it does
 * for a MOVE, so that both read the map and the claims the same way.
 */
#ifndef RTPLACE_PUSH_H
#define RTPLACE_PUSH_H

#include <stdint.h>
#include <sys/types.h>

#include "claims.h"
#include "conf.h"
#include "cpupri.h"
#include "cpuset.h"
#include "engine.h"
#include "notify.h"
#include "tracker.h"

struct push;

/* What the policy keeps per thread it may push, stored by whoever keeps
 * the thread (manage.c's table, which owns the threads' lifetimes). */
struct push_rate {
	uint64_t last_try_ms; /* when a push of the thread was last tried, 0 never */
};

struct push_opts {
	/* The live map, the choice of a CPU (engine_pick()) and the claims:
	 * a thread may go where its own process holds a claim. */
	struct engine *engine;
	struct notify *notify; /* each push is published as a moved record */
};

int push_new(const struct push_opts *opts, const struct config *cfg, struct push **ret);
void push_free(struct push *p);

/* Takes [moves] rebalance and rebalance-interval-ms. */
void push_apply_config(struct push *p, const struct config *cfg);

/* A rebalancing turn begins: the budget of pushes is full again. */
void push_new_turn(struct push *p);

/*
 * The collision ev happened to thread tid of process pid (owned by uid),
 * allowed on the CPUs of allowed: moves it to a CPU of allowed below
 * ev->level, unless pushing is off, the turn's budget is spent, a push of
 * it was tried less than an interval ago (rate) or no such CPU exists.
 * Updates rate when it tries.
 */
void push_thread(struct push *p, pid_t tid, pid_t pid, uid_t uid, struct push_rate *rate,
		 const struct rtplace_cpumask *allowed, const struct tracker_event *ev);

/* Pushes done and pushes that failed since the daemon started. */
void push_get_counts(const struct push *p, uint64_t *ret_moved, uint64_t *ret_failed);

#endif
