/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MOVE requests, the daemon's side (DESIGN §7). A MOVE is authorised
 * (auth.c), re-checked against the live map, applied with rollback
 * (thread-sched.c) and published as a record to the subscribers
 * (notify.c). The [moves] authorisation policy (rt-groups, max-prio,
 * allow), which claims follow too, and every decision on it are auth.c's.
 * The CPU a thread goes to is the engine's choice (engine_pick()), as for
 * pushes and RealtimeKit grants. Managed processes are manage.c's, the
 * push policy push.c's.
 */
#ifndef RTPLACE_MOVES_H
#define RTPLACE_MOVES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "auth.h"
#include "conf.h"
#include "engine.h"
#include "notify.h"
#include "placement.h"
#include "reason.h"
#include "rtplace-proto.h"
#include "server.h"
#include "topo.h"

struct moves;

struct moves_opts {
	/* The map, placement (engine_pick()), the rights moves are judged
	 * by ([moves] allow, rt-groups, max-prio), kept current on reload. */
	struct engine *engine;
	struct notify *notify; /* each move is published as a record */
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

/* MOVE requests that moved threads (a thread each) and that failed or were
 * refused, since the daemon started. */
void moves_get_counts(const struct moves *m, uint64_t *ret_moved, uint64_t *ret_failed);

#endif
