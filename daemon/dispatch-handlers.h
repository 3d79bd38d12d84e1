/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the request handlers (dispatch.h): the state a request needs
 * while it is served, the reply machinery every handler answers through
 * (dispatch.c), and the handlers, one file per family of requests, as
 * tmux keeps one file per command:
 *   dispatch-claims.c   QUERY, RELEASE, CLAIM: placement and claims
 *   dispatch-views.c    CPUS, CPU_TIMES, STATUS, TRACKING, HOST, LOCAL:
 *                       what the engine knows, as the client may see it
 *   dispatch-threads.c  MOVE, SUBSCRIBE: threads moved and their records
 *   dispatch-explain.c  EXPLAIN: a QUERY's dry run, and why
 * Only these files include it.
 */
#ifndef RTPLACE_DISPATCH_HANDLERS_H
#define RTPLACE_DISPATCH_HANDLERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "actors.h"
#include "auth.h"
#include "engine.h"
#include "pidmap.h"
#include "placement.h"
#include "protocol.h"
#include "server.h"

/* Replies a client may leave unread before it is dropped: a few CPUS pages. */
#define DISPATCH_MAX_PENDING_BYTES (8 * sizeof(struct proto_msg))

/* A CLAIM_ENDED event waiting for the request being served to be answered. */
struct dispatch_event {
	uint32_t client;
	struct rtplace_claim_ended e;
};

struct dispatch {
	struct engine *engine;
	struct actors *actors;
	struct server *server; /* the one serving the request: dispatch_request_cb()'s */
	struct proto_limits lim;
	/*
	 * Every request gets exactly its own reply, before any event it causes
	 * (DESIGN §14): replies are built in reply, events in event, and
	 * events that arise while a request is served (a lease found expired,
	 * an owner found gone) wait in events until its reply is sent.
	 */
	struct proto_msg request; /* one at a time: the loop is single-threaded */
	struct proto_msg reply;
	struct proto_msg event;
	/* The protocol version replies go out in: the request's, or version 1
	 * (which every client reads) to a request whose version is not known. */
	uint16_t reply_version;
	/* The answer of the query being served (~3 KB): kept here so that a
	 * query allocates nothing. */
	struct placement_result placed;
	bool serving;
	struct dispatch_event *events;
	size_t nevents, events_cap;
	int (*reload)(void *ctx, struct rtplace_reason *reason); /* dispatch_new()'s */
	void *reload_ctx;
};

/* One handler per request type: answers m from peer with exactly one
 * reply (or an ERROR). */
typedef void dispatch_handler_fn(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m);

/* Answers a request with an ERROR (counted as one). */
void dispatch_send_error(struct dispatch *d, uint32_t client, uint32_t request_id, uint16_t type, int error,
			 const char *reason);

/*
 * Every reply is built one way: proto_msg_init() in d->reply, the body
 * filled in place, then this. Packs it in the request's version (a list
 * reply's length follows its count from version 2), checked first in a
 * self-checking build (proto_self_check()). 0, or -errno once m is
 * answered with an ERROR instead.
 */
int dispatch_finish_reply(struct dispatch *d, const struct server_peer *peer, const struct proto_msg *m);

/* Sends the reply built in d->reply (dispatch_finish_reply()). */
void dispatch_send_reply(struct dispatch *d, const struct server_peer *peer, const struct proto_msg *m);

/* The connection's requester credentials, kept for its life
 * (auth_peer_creds()): made at its first claim or move, freed when it
 * ends. NULL without memory. */
struct auth_peer *dispatch_auth_peer(struct server_peer *peer);

/* How peer sees the daemon's pids (pidmap.h). */
void dispatch_view(const struct dispatch *d, const struct server_peer *peer, struct pidmap_view *ret);

/* A reason worded with the daemon's pids, for peer: by its own numbers
 * when it lives in another PID namespace (known: the daemon's number of
 * the thread it named as known_as). */
void dispatch_reason_show(const struct dispatch *d, const struct server_peer *peer, struct rtplace_reason *reason,
			  pid_t known, pid_t known_as);

/*
 * The pid a request names (a claim's owner, a move's thread), as the
 * daemon's (pidmap.h): with the pidfd the client sent with it, or bare
 * from a client in the daemon's PID namespace. -errno after answering the
 * request with an ERROR.
 */
int dispatch_resolve_pid(struct dispatch *d, const struct server_peer *peer, const struct proto_msg *m, pid_t named,
			 bool thread, pid_t *ret);

/* Process or thread pid's name (its comm) into buf, "" when unreadable. */
void dispatch_comm(const struct dispatch *d, int32_t pid, char *buf, size_t len);

/* The thread running on cpu as view sees it (the CPUS reply's pid, RT
 * queue and comm): pid 0 and no comm when it lives outside view's
 * namespace. */
void dispatch_views_running(const struct dispatch *d, const struct pidmap_view *view, uint32_t cpu, int32_t *ret_pid,
			    uint32_t *ret_queued, char *comm, size_t len);

/* The requester's credentials for a claim (auth_peer_creds()); one whose
 * process is gone or unreadable is judged by its uid alone (uid_only):
 * root keeps its rights, anyone else has none. */
const struct auth_creds *dispatch_claims_creds(struct dispatch *d, struct server_peer *peer,
					       struct auth_creds *uid_only);

/* What placement is asked for a QUERY (or EXPLAIN's query) q. */
static inline struct placement_request dispatch_placement_request(const struct rtplace_query *q)
{
	return (struct placement_request){
		.prio = q->prio,
		.count = q->count,
		.node = q->node,
		.near_cpu = q->near_cpu,
		.normal = q->flags & RTPLACE_QUERY_F_NORMAL,
		.allowed = q->allowed,
	};
}

/* The owner process a claim request names (its owner_pid), as the
 * daemon's pid, if peer may own it (auth_may_own()). -errno after
 * answering the request with an ERROR. */
int dispatch_claims_owner(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m, pid_t owner_pid,
			  pid_t *ret);

/* What a claim by peer for q may hold (DESIGN §14): its level and lease,
 * and a note for the reply when it gets less than it asked for. */
void dispatch_claims_terms(struct dispatch *d, struct server_peer *peer, const struct rtplace_query *q,
			   uint8_t *ret_level, uint64_t *ret_lease, struct rtplace_reason *note);

/* Who holds claim cl, as peer may see it (CLAIM_REPLY's rules): -1 when
 * peer may not see its user; else its owner process by peer's number
 * (comm filled), or 0 when it has none in peer's PID namespace. */
pid_t dispatch_claims_holder(const struct dispatch *d, const struct server_peer *peer, const struct claim *cl,
			     char *comm, size_t len);

dispatch_handler_fn dispatch_claims_query, dispatch_claims_release, dispatch_claims_info;
dispatch_handler_fn dispatch_explain;
dispatch_handler_fn dispatch_views_cpus, dispatch_views_cpu_times, dispatch_views_status, dispatch_views_tracking,
	dispatch_views_host, dispatch_views_local, dispatch_views_kernel;
dispatch_handler_fn dispatch_threads_move, dispatch_threads_subscribe;

#endif
