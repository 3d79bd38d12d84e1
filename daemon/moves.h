/*
 * Moves and notification records, the daemon's side (DESIGN §7). A MOVE is
 * authorised (auth.c), re-checked against the live map, applied with
 * rollback (thread-sched.c) and published as a record to the subscribers
 * (notify.c). Threads of managed processes are pushed off a CPU where they
 * wait behind an equal-or-higher RT task (the tracker's collision events)
 * to a lower-level CPU they are allowed on: a user-space RT push,
 * rate-limited per thread and per turn.
 */
#ifndef RTPLACE_MOVES_H
#define RTPLACE_MOVES_H

#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "auth.h"
#include "claims.h"
#include "conf.h"
#include "cpupri.h"
#include "notify.h"
#include "placement.h"
#include "rtplace-proto.h"
#include "server.h"
#include "topo.h"
#include "tracker.h"

struct moves;

struct moves_opts {
	struct event_base *base;
	const struct topo *topo;
	const struct cpupri_view *view;       /* the live map */
	const struct placement_config *pcfg;  /* dispatch.c's, kept current on reload */
	/* The placement context answers use (dispatch.c rebuilds it on
	 * reload and keeps this pointer current). */
	struct placement_ctx *const *placement;
	struct tracker *tracker;              /* NULL: simulation, moves are refused */
	const char *proc_root;
	struct claims *claims;                /* the claim table */
};

int moves_new(const struct moves_opts *opts, const struct config *cfg, struct moves **ret);
void moves_free(struct moves *m);

/* Takes [moves] and [notify] settings; a group or user that does not
 * exist is logged and ignored. Applies the manage-* rules at once (a walk
 * of /proc); while any is set, new matches are looked for on the
 * rebalancing tick, at most once per second. 0 or -errno. */
int moves_apply_config(struct moves *m, const struct config *cfg);

/*
 * Serves a MOVE from peer, whose credentials ap keeps for its connection
 * (auth_peer_creds()). Returns 0 and the reply, or -errno with a reason
 * for the ERROR reply (-EPERM names the rule or limit that refused it,
 * -ESRCH a vanished thread, -EOPNOTSUPP in simulation).
 */
int moves_move(struct moves *m, const struct server_peer *peer, struct auth_peer *ap, const struct rtplace_move *req,
	       const uint8_t *claimed_level, struct rtplace_move_reply *ret, char reason[RTPLACE_REASON_MAX]);

/* Opens (or returns) peer's subscription; info holds the fds to pass. */
int moves_subscribe(struct moves *m, const struct server_peer *peer, struct notify_sub_info *ret,
		    char reason[RTPLACE_REASON_MAX]);

/* The connection is gone: its subscription ends. */
void moves_client_gone(struct moves *m, uint32_t client);

/*
 * Manages the threads of process pid (owned by uid) until moves_unmanage():
 * a push may move them to any CPU of allowed (the CPUs the claim that made
 * them managed was allowed to choose from). A process a manage-* rule made
 * managed stays so, under these terms, when its rule goes away.
 */
int moves_manage(struct moves *m, pid_t pid, uid_t uid, const struct cpuset *allowed);
void moves_unmanage(struct moves *m, pid_t pid);

/* Publishes a record (time and sequence filled in). */
void moves_publish(struct moves *m, uint8_t type, int32_t tid, uint32_t uid, int from_cpu, int to_cpu,
		   uint8_t policy, uint8_t prio);

/* The tracker's event callback (ctx is the moves). */
int moves_tracker_event_cb(const struct tracker_event *ev, void *ctx);

uint64_t moves_count(const struct moves *m);

struct moves_stats {
	uint64_t moved;        /* threads moved by MOVE requests and pushes */
	uint64_t failed;       /* MOVE requests refused or failed, pushes that failed */
	uint64_t collisions;   /* tracker collisions on managed threads */
	uint64_t records_lost; /* records that found a subscriber's ring full */
};

/* The counters since the daemon started (the metrics endpoint's). */
void moves_get_stats(const struct moves *m, struct moves_stats *ret);

/* Who may do what under [moves] (rt-groups, max-prio, allow): the same
 * rules decide what a claim may hold. */
const struct auth_policy *moves_auth_policy(const struct moves *m);

#endif
