/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MOVE requests, the daemon's side (DESIGN §7). A MOVE is authorised
 * (auth.c), re-checked against the live map, applied with rollback
 * (thread-sched.c) and published as a record to the subscribers
 * (notify.c). The [moves] authorisation policy (rt-groups, max-prio,
 * allow), which claims follow too, and every decision on it are auth.c's.
 * This file owns the choice of a CPU for a thread at a level, which
 * pushes (push.c) use as well. Managed processes are manage.c's, the push
 * policy push.c's.
 */
#ifndef RTPLACE_MOVES_H
#define RTPLACE_MOVES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "auth.h"
#include "conf.h"
#include "cpupri.h"
#include "notify.h"
#include "placement.h"
#include "reason.h"
#include "rtplace-proto.h"
#include "server.h"
#include "topo.h"

struct moves;

struct moves_opts {
	const struct topo *topo;
	const struct cpupri_view *view;       /* the live map */
	const struct placement_config *pcfg;  /* dispatch.c's, kept current on reload */
	/* The placement context answers use (dispatch.c rebuilds it on
	 * reload and keeps this pointer current). */
	struct placement_ctx *const *placement;
	bool live;                            /* false: simulation (--topology), moves are refused */
	const char *proc_root;
	struct notify *notify;                /* each move is published as a record */
	/* Who may move what ([moves] allow, rt-groups, max-prio): dispatch.c's,
	 * kept current on reload, by which claims are judged too. */
	const struct auth_policy *policy;
};

int moves_new(const struct moves_opts *opts, struct moves **ret);
void moves_free(struct moves *m);

/*
 * Serves a MOVE from peer, whose credentials ap keeps for its connection
 * (auth_peer_creds()). Returns 0 and the reply, or -errno with a reason
 * for the ERROR reply (-EPERM names the rule or limit that refused it,
 * -ESRCH a vanished thread, -EBUSY no CPU below the thread's level,
 * -EOPNOTSUPP in simulation).
 */
int moves_move(struct moves *m, const struct server_peer *peer, struct auth_peer *ap, const struct rtplace_move *req,
	       const uint8_t *claimed_level, struct rtplace_move_reply *ret, struct rtplace_reason *reason);

/*
 * The best CPU of allowed for a thread at level (LEVEL_RT1..LEVEL_RT99),
 * near CPU near (-1: anywhere), over the live map and claimed (claimed
 * levels per CPU, claims.h). 0 and the CPU in *ret_cpu; -ENOENT when every
 * candidate is at or above level, -ENODEV when allowed holds no managed
 * online CPU, -EINVAL for a level that is not RT, -ENOMEM.
 */
int moves_pick(struct moves *m, const struct rtplace_cpumask *allowed, int near, uint32_t level, const uint8_t *claimed,
	       int *ret_cpu);

/* The reason for the ERROR reply when moves_pick() returned r (< 0) for
 * a thread at level; returns the error to reply with (-EBUSY for "no CPU
 * below", -ENOMEM for out of memory). */
int moves_pick_reason(int r, uint32_t level, struct rtplace_reason *reason);

/* MOVE requests that moved threads (a thread each) and that failed or were
 * refused, since the daemon started. */
void moves_get_counts(const struct moves *m, uint64_t *ret_moved, uint64_t *ret_failed);

#endif
