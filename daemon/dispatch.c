/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "claims.h"
#include "claims-state.h"
#include "conf.h"
#include "cpupri.h"
#include "log.h"
#include "loop.h"
#include "manage.h"
#include "moves.h"
#include "notify.h"
#include "quota.h"
#include "pidmap.h"
#include "placement.h"
#include "procfs.h"
#include "protocol.h"
#include "push.h"
#include "snapshot.h"
#include "dispatch.h"
#include "irqnoise.h"

/* Replies a client may leave unread before it is dropped: a few CPUS pages. */
#define DISPATCH_MAX_PENDING_BYTES (8 * sizeof(struct proto_msg))

/* A CLAIM_ENDED event waiting for the request being served to be answered. */
struct dispatch_event {
	uint32_t client;
	struct rtplace_claim_ended e;
};

struct dispatch {
	struct event_base *base;
	const struct topo *topo;
	struct cpupri_view view;
	bool tracking;                 /* the BPF tracker writes the map */
	bool live;                     /* the map is the machine's (tracked or sampled) */
	const struct tracker *tracker; /* time by class; NULL when simulating or sampling */
	const struct sampler *sampler; /* NULL unless sampling */
	uint32_t sample_interval_ms;
	const struct rtplace_reason *untracked;
	struct notify *notify;
	struct moves *moves;
	struct push *push;
	struct manage *manage;
	const char *proc_root;
	struct config cfg;
	struct dispatch_host host;     /* the host's RT configuration, as last read */
	struct placement_config pcfg;
	struct auth_policy policy; /* [moves]: what moves and claims may do */
	struct rtplace_cpumask housekeeping;    /* housekeeping-cpus, or derived from isolation */
	struct placement_ctx *pctx; /* derived from pcfg, topo and view; rebuilt on reload */
	const struct irqnoise *irqnoise; /* NULL when simulating */
	struct proto_limits lim;
	struct claims *claims;
	struct server *server;
	char state_path[CONFIG_SOCKET_MAX + 16]; /* owner-bound claims across restarts */
	struct claims_state *state;
	uint32_t rotor;
	struct snapshot snap;          /* what LOCAL hands out; kept current after every change */
	struct event *snap_later;      /* publishes once a claim that is ending has gone */
	uint64_t start_ms;
	uint64_t queries, errors, claims_total, clients_dropped;
	uint64_t claims_ended[DISPATCH_END_COUNT];
	uint64_t claims_refused[DISPATCH_LIMIT_COUNT];
	struct histogram query_time;
	uint64_t queries_placed, queries_empty; /* QUERY replies with CPUs, without */
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
};

/* pcfg's noisy CPUs from the last interrupt shares: none without them or
 * with the tie-breaker off. */
static void dispatch_noisy(struct dispatch *s)
{
	if (s->irqnoise && s->cfg.placement.irq_tiebreak)
		irqnoise_noisy(s->irqnoise, &s->pcfg.managed, &s->pcfg.noisy);
	else
		cpuset_zero(&s->pcfg.noisy);
}

static void dispatch_placement_config(struct dispatch *s, const struct config *cfg)
{
	config_placement(cfg, s->topo, &s->host.iso.isolated, &s->pcfg);
	config_housekeeping(cfg, s->topo, &s->host.iso.isolated, &s->housekeeping);
	dispatch_noisy(s);
}

void dispatch_irqnoise_sampled(struct dispatch *s)
{
	dispatch_noisy(s);
	if (s->pctx)
		placement_ctx_set_noisy(s->pctx, &s->pcfg.noisy);
	/* Local readers answer with the same noise. */
	if (s->claims)
		snapshot_publish(&s->snap, s->topo, &s->pcfg, &s->housekeeping, claims_stamped(s->claims), true);
}

void dispatch_set_host(struct dispatch *s, const struct dispatch_host *h)
{
	s->host = *h;
	dispatch_apply_config(s, &s->cfg);
}

const struct dispatch_host *dispatch_get_host(const struct dispatch *s)
{
	return &s->host;
}

void dispatch_server_limits(const struct config *cfg, struct server_limits *ret)
{
	ret->max_clients = cfg->limits.max_clients;
	ret->max_clients_per_user = cfg->limits.max_clients_per_user;
	ret->max_pending_bytes = DISPATCH_MAX_PENDING_BYTES;
	ret->max_message = RTPLACE_MSG_MAX;
}

void dispatch_apply_config(struct dispatch *s, const struct config *cfg)
{
	struct placement_ctx *pctx;

	s->cfg = *cfg;
	/* The topology may have been reloaded (hotplug): so may its nodes. */
	s->lim.nnodes = s->topo->nnodes;
	dispatch_placement_config(s, cfg);
	/* Build the new context before dropping the old: without memory for
	 * it, answers keep the placement rules they had. */
	if (s->pctx && placement_ctx_new(&s->pcfg, s->topo, &s->view, &pctx) == 0) {
		placement_ctx_free(s->pctx);
		s->pctx = pctx;
	}
	auth_policy_from_config(cfg, &s->policy);
	if (s->claims)
		snapshot_publish(&s->snap, s->topo, &s->pcfg, &s->housekeeping, claims_stamped(s->claims), true);
}

static void dispatch_send(struct dispatch *s, uint32_t client, const struct proto_msg *m)
{
	server_send(s->server, client, m, m->hdr.length);
}

static void dispatch_send_error(struct dispatch *s, uint32_t client, uint32_t request_id, uint16_t type, int error,
			       const char *reason)
{
	s->errors++;
	if (proto_encode_error(&s->reply, request_id, type, error, reason) == 0 &&
	    proto_msg_finish(&s->reply, s->reply_version) == 0)
		dispatch_send(s, client, &s->reply);
}

/*
 * Every reply is built one way: proto_msg_init() in s->reply, the body
 * filled in place, then this. Packs it in the request's version (a list
 * reply's length follows its count from version 2), checked first in a
 * self-checking build (proto_self_check()). 0, or -errno once m is
 * answered with an ERROR instead.
 */
static int dispatch_finish_reply(struct dispatch *s, const struct server_peer *peer, const struct proto_msg *m)
{
	int r = proto_msg_finish(&s->reply, s->reply_version);

	if (r == -ERANGE && s->reply_version < 3) {
		/* a thread's affinity past CPU 1023, which the client's version cannot carry */
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, -ERANGE,
				   "a cpu past 1023: ask in protocol version 3");
		return r;
	}
	if (r < 0 || proto_self_check(&s->reply) < 0) {
		log_error("BUG: built an invalid %s", proto_type_name(s->reply.hdr.type));
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, -EIO, "internal error");
		return -EIO;
	}
	return 0;
}

/* Sends the reply built in s->reply (dispatch_finish_reply()). */
static void dispatch_send_reply(struct dispatch *s, const struct server_peer *peer, const struct proto_msg *m)
{
	if (dispatch_finish_reply(s, peer, m) < 0)
		return;
	/* A client that got the reply to its claim or release reads the
	 * snapshot next: it must already hold the change. */
	snapshot_publish(&s->snap, s->topo, &s->pcfg, &s->housekeeping, claims_stamped(s->claims), false);
	dispatch_send(s, peer->id, &s->reply);
}

/* Sends the events queued while a request was served, after its reply,
 * as version 1: the same in every version, and read by every client.
 * Built as replies are, in s->event. */
static void dispatch_flush_events(struct dispatch *s)
{
	for (size_t i = 0; i < s->nevents; i++) {
		proto_msg_init(&s->event, RTPLACE_MSG_CLAIM_ENDED, 0);
		s->event.claim_ended = s->events[i].e;
		if (proto_msg_finish(&s->event, RTPLACE_PROTO_VERSION_MIN) == 0 && proto_self_check(&s->event) == 0)
			server_send(s->server, s->events[i].client, &s->event, s->event.hdr.length);
	}
	s->nevents = 0;
}

/* Records the end of owner-bound claim cl (gone from the table, or going:
 * claims_ended_fn is called first). A failure
 * is the claim's to suffer alone: it may come back after a restart, to end
 * again when its owner is found gone or its lease over. */
static void dispatch_claim_gone(struct dispatch *s, const struct claim *cl)
{
	int r = claims_state_ended(s->state, s->claims, cl);

	if (r < 0)
		log_warning_ratelimited("Failed to record the end of claim %u in %s: %s", cl->id, s->state_path,
					strerror(-r));
}

static const char *dispatch_end_reason(uint32_t why)
{
	switch (why) {
	case RTPLACE_CLAIM_ENDED_EXPIRED:
		return "lease expired";
	case RTPLACE_CLAIM_ENDED_OWNER_EXITED:
		return "owner exited";
	default:
		return "revoked, a CPU went offline";
	}
}

/* The claim table's report of a claim that ended on its own or was taken
 * back: a record to subscribers, an event to its connection. */
static void dispatch_claim_ended_cb(const struct claim *cl, uint32_t why, void *ctx)
{
	struct dispatch *s = ctx;
	char cpus[64];

	s->claims_ended[why == RTPLACE_CLAIM_ENDED_EXPIRED	  ? DISPATCH_END_EXPIRED
			: why == RTPLACE_CLAIM_ENDED_OWNER_EXITED ? DISPATCH_END_OWNER_EXITED
								  : DISPATCH_END_REVOKED]++;
	cpuset_format(&cl->cpus, cpus, sizeof(cpus));
	if (why == RTPLACE_CLAIM_ENDED_OWNER_EXITED)
		manage_release(s->manage, cl->pid);
	log_ratelimited(LOG_INFO, "claim %u on CPUs %s ended: %s", cl->id, cpus, dispatch_end_reason(why));
	dispatch_claim_gone(s, cl);
	if (!cl->client)
		return; /* restored after a restart: no connection to tell */
	if (s->nevents == s->events_cap) {
		size_t cap = s->events_cap ? s->events_cap * 2 : 16;
		struct dispatch_event *v = realloc(s->events, cap * sizeof(*v));

		if (!v) {
			log_warning("out of memory: claim %u's holder is not told that it ended", cl->id);
			return;
		}
		s->events = v;
		s->events_cap = cap;
	}
	s->events[s->nevents++] = (struct dispatch_event){
		.client = cl->client,
		.e = { .claim_id = cl->id, .why = why },
	};
	if (!s->serving)
		dispatch_flush_events(s);
	/* The table drops the claim after this report: publish then. */
	if (s->snap_later)
		event_active(s->snap_later, EV_TIMEOUT, 0);
}

static void dispatch_snap_later_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dispatch *s = arg;

	(void)fd;
	(void)what;
	snapshot_publish(&s->snap, s->topo, &s->pcfg, &s->housekeeping, claims_stamped(s->claims), false);
}

/* LOCAL: the descriptors for reads without a round trip (DESIGN §19),
 * from protocol version 3 on, so that a client of an older version
 * keeps asking the socket. */
static void dispatch_local(struct dispatch *s, const struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_local_reply lr;
	int fds[2];
	int r = m->hdr.version < 3 ? -EOPNOTSUPP : snapshot_offer(&s->snap, &lr, fds);

	if (r < 0) {
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, r,
				   m->hdr.version < 3 ? "local reads need protocol version 3"
						      : "this daemon offers no map to read locally");
		return;
	}
	proto_msg_init(&s->reply, RTPLACE_MSG_LOCAL_REPLY, m->hdr.request_id);
	s->reply.local_reply = lr;
	if (dispatch_finish_reply(s, peer, m) < 0)
		return;
	r = server_send_fds(s->server, peer->id, &s->reply, s->reply.hdr.length, fds, 2);
	if (r < 0)
		log_debug("client %u: cannot send the local-read descriptors: %s", peer->id, strerror(-r));
}

void dispatch_revoke_cpu(struct dispatch *s, uint32_t cpu)
{
	claims_revoke_cpu(s->claims, cpu, dispatch_claim_ended_cb, s);
}

/* The connection's requester credentials, kept for its life
 * (auth_peer_creds()): made at its first claim or move, freed when it
 * ends. NULL without memory. */
static struct auth_peer *dispatch_auth_peer(struct server_peer *peer)
{
	if (!peer->data)
		peer->data = calloc(1, sizeof(struct auth_peer));
	return peer->data;
}

/*
 * What a claim by peer for q may hold (DESIGN §14): its level and lease,
 * and a note for the reply when it gets less than it asked for.
 */
static void dispatch_claim_terms(struct dispatch *s, struct server_peer *peer, const struct rtplace_query *q,
				uint8_t *ret_level, uint64_t *ret_lease, struct rtplace_reason *note)
{
	struct auth_peer *ap = dispatch_auth_peer(peer);
	const struct auth_creds *creds = NULL;
	struct auth_creds uid_only = { .pid = peer->pid, .uid = peer->uid, .gid = peer->gid };

	/* A requester whose process is gone or unreadable is judged by its
	 * uid alone: root keeps its rights, anyone else has none. */
	if (!ap || auth_peer_creds(ap, s->proc_root, peer->pidfd, peer->pid, peer->uid, peer->gid, &creds) < 0)
		creds = &uid_only;
	auth_claim_terms(creds, &s->policy, &s->cfg, q->prio, q->flags & RTPLACE_QUERY_F_EXCLUSIVE, q->lease_ms,
			 ret_level, ret_lease, note);
}

/* How peer sees the daemon's pids (pidmap.h). */
static void dispatch_view(const struct dispatch *s, const struct server_peer *peer, struct pidmap_view *ret)
{
	const struct pidmap_peer pp = { .same_pidns = peer->same_pidns, .level = peer->pidns_level };

	pidmap_view_of(s->proc_root, &pp, peer->pid, peer->pidfd, ret);
}

/* A reason worded with the daemon's pids, for peer: by its own numbers
 * when it lives in another PID namespace (known: the daemon's number of
 * the thread it named as known_as). */
static void dispatch_reason_show(const struct dispatch *s, const struct server_peer *peer,
				 struct rtplace_reason *reason, pid_t known, pid_t known_as)
{
	struct pidmap_view view;

	if (peer->same_pidns)
		return;
	dispatch_view(s, peer, &view);
	pidmap_reason_show(&view, reason, known, known_as);
}

/*
 * The pid a request names (a claim's owner, a move's thread), as the
 * daemon's (pidmap.h): with the pidfd the client sent with it, or bare
 * from a client in the daemon's PID namespace. -errno after answering the
 * request with an ERROR.
 */
static int dispatch_resolve_pid(struct dispatch *s, const struct server_peer *peer, const struct proto_msg *m,
				pid_t named, bool thread, pid_t *ret)
{
	const struct pidmap_peer pp = { .same_pidns = peer->same_pidns, .level = peer->pidns_level };
	int pidfd = peer->nfds ? peer->fds[0] : -1;
	struct rtplace_reason reason;
	int r = thread ? pidmap_thread(s->proc_root, &pp, named, pidfd, ret, &reason)
		       : pidmap_process(s->proc_root, &pp, named, pidfd, ret, &reason);

	if (r < 0)
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, r, reason.text);
	return r;
}

/*
 * Whether uid may make one more claim: its share, the users' part, the
 * table's room, counted by the table itself (claims end on their own).
 * 0, or quota_check()'s -errno with why naming the key.
 */
static int dispatch_claims_quota(struct dispatch *s, uid_t uid, struct rtplace_reason *why)
{
	int r;
	const struct quota_limits limits = {
		.size = CLAIMS_MAX,
		.users = s->cfg.limits.max_claims,
		.per_user = s->cfg.limits.max_claims_per_user,
		.users_key = "max-claims",
		.per_user_key = "max-claims-per-user",
	};
	const struct quota_use use = {
		.uid = claims_count_uid(s->claims, uid),
		.users = claims_count(s->claims) - claims_count_uid(s->claims, 0),
		.all = claims_count(s->claims),
	};

	r = quota_check(&limits, uid, &use, 1, why);
	if (r < 0)
		s->claims_refused[r == -EDQUOT ? DISPATCH_LIMIT_PER_USER
				  : r == -EUSERS ? DISPATCH_LIMIT_USERS
						 : DISPATCH_LIMIT_TABLE]++;
	return r;
}

static void dispatch_query(struct dispatch *s, struct server_peer *peer, const struct proto_msg *m)
{
	const struct rtplace_query *q = &m->query;
	struct rtplace_query_reply *qr = &s->reply.query_reply;
	struct placement_request req = {
		.prio = q->prio,
		.count = q->count,
		.node = q->node,
		.near_cpu = q->near_cpu,
		.normal = q->flags & RTPLACE_QUERY_F_NORMAL,
	};
	struct placement_result *res = &s->placed;
	bool claim = q->flags & RTPLACE_QUERY_F_CLAIM;
	pid_t owner = 0; /* q->owner_pid in the daemon's namespace */
	struct rtplace_reason why;
	uint32_t claim_id = 0;
	int r_choose, r;

	s->queries++;
	if (q->flags & RTPLACE_QUERY_F_MANAGE && !s->tracking) {
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, -EOPNOTSUPP,
				   s->live ? "managed threads need the BPF tracker (levels are sampled)"
					   : "managed threads need the live machine (not --topology)");
		return;
	}
	if (claim && claims_count_client(s->claims, peer->id) >= s->cfg.limits.max_claims_per_client) {
		reason_set(&why, "[limits] max-claims-per-client = %u reached", s->cfg.limits.max_claims_per_client);
		s->claims_refused[DISPATCH_LIMIT_PER_CLIENT]++;
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, -EDQUOT, why.text);
		return;
	}
	if (claim) {
		r = dispatch_claims_quota(s, peer->uid, &why);
		if (r < 0) {
			dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, r, why.text);
			return;
		}
	}
	if (claim && q->owner_pid) {
		if (dispatch_resolve_pid(s, peer, m, q->owner_pid, false, &owner) < 0)
			return;
		r = auth_may_own(s->proc_root, peer->pid, peer->uid, owner);
		if (r < 0) {
			dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, r,
					   r == -EPERM ? "the owner process belongs to another user" : "the owner process does not exist");
			return;
		}
	}
	req.allowed = q->allowed;
	/* A client of protocol versions 1 and 2 can be told of no CPU past
	 * 1023: on a larger machine it chooses among those it can name. */
	if (m->hdr.version < 3 && s->topo->ncpus > RTPLACE_CPUMASK_V2_CPUS && cpuset_empty(&req.allowed))
		for (uint32_t i = 0; i < RTPLACE_CPUMASK_V2_CPUS / 64; i++)
			req.allowed.bits[i] = ~UINT64_C(0);
	/* Leases that ran out free their CPUs for this answer; their events
	 * wait until it is sent. */
	claims_expire_due(s->claims, dispatch_claim_ended_cb, s);
	r_choose = placement_ctx_choose_stamped(s->pctx, claims_stamped(s->claims), &s->rotor, &req, &why, res);
	snapshot_rotor(&s->snap, s->rotor);
	if (r_choose == -EINVAL || r_choose == -ENOMEM) {
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, r_choose, why.text);
		return;
	}
	proto_msg_init(&s->reply, RTPLACE_MSG_QUERY_REPLY, m->hdr.request_id);
	for (uint32_t i = 0; i < res->n; i++)
		proto_query_reply_add(qr, res->cpus[i], res->levels[i]);
	proto_set_string(qr->reason, sizeof(qr->reason), placement_reason_text(&why));
	if (claim && res->n > 0) {
		struct claim tmpl = { .client = peer->id, .pid = owner, .uid = peer->uid };
		struct rtplace_reason note;
		uint64_t lease;

		dispatch_claim_terms(s, peer, q, &tmpl.level, &lease, &note);
		/* The CPUs placement chose, not the reply's encoding of them. */
		for (uint32_t i = 0; i < res->n; i++)
			cpuset_set(&tmpl.cpus, res->cpus[i]);
		/* Where its threads may be pushed, kept with the claim so that
		 * a restarted daemon manages them again. */
		if (q->flags & RTPLACE_QUERY_F_MANAGE) {
			tmpl.managed = s->pcfg.managed;
			if (!cpuset_empty(&req.allowed))
				cpuset_and(&tmpl.managed, &tmpl.managed, &req.allowed);
		}
		if (tmpl.pid) {
			struct procfs_stat st;

			r = procfs_read_stat(s->proc_root, tmpl.pid, 0, &st);
			tmpl.pid_start = st.start_time;
		} else {
			r = 0;
		}
		if (r == 0)
			r = claims_add(s->claims, &tmpl, loop_now_ms(), lease, &claim_id);
		if (r < 0) {
			dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, r,
					   r == -ESRCH ? "the owner process does not exist" : "cannot record the claim");
			return;
		}
		/* Durable before it is acknowledged: a claim the state file
		 * does not hold could be lost to a crash after the reply. */
		r = claims_state_added(s->state, s->claims, claims_find(s->claims, claim_id));
		if (r < 0) {
			log_warning_ratelimited("Failed to record claim %u in %s: %s", claim_id, s->state_path,
						strerror(-r));
			claims_withdraw(s->claims, claim_id);
			dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, r,
					   "cannot record the claim in the state file");
			return;
		}
		/* Subscribers hear of it only now: never of a claim withdrawn. */
		claims_made(s->claims, claim_id);
		s->claims_total++;
		if (note.text[0]) {
			log_ratelimited(LOG_INFO, "claim %u for uid %u: %s", claim_id, (unsigned)peer->uid, note.text);
			proto_set_string(qr->reason, sizeof(qr->reason), note.text);
		}
		if (q->flags & RTPLACE_QUERY_F_MANAGE) {
			note.text[0] = '\0';
			manage_process(s->manage, owner, peer->uid, &tmpl.managed, &note);
			/* Over a level note, which the log keeps: threads left
			 * unwatched are what a MANAGE claimer cannot see. */
			if (note.text[0])
				proto_set_string(qr->reason, sizeof(qr->reason), note.text);
		}
		qr->claim_id = claim_id;
		qr->lease_ms = lease ? (uint32_t)lease : RTPLACE_LEASE_INFINITE;
	}
	if (res->n > 0)
		s->queries_placed++;
	else
		s->queries_empty++;
	if (!peer->same_pidns) {
		struct rtplace_reason shown;

		memcpy(shown.text, qr->reason, sizeof(shown.text));
		dispatch_reason_show(s, peer, &shown, 0, 0);
		proto_set_string(qr->reason, sizeof(qr->reason), shown.text);
	}
	dispatch_send_reply(s, peer, m);
}

static void dispatch_release(struct dispatch *s, const struct server_peer *peer, const struct proto_msg *m)
{
	uint64_t id = m->release.claim_id;
	const struct claim *cl = id <= UINT32_MAX ? claims_find(s->claims, (uint32_t)id) : NULL;
	struct rtplace_release_reply rr = { .claim_id = id };
	struct claim gone;
	int r = -ENOENT;

	if (cl) {
		gone = *cl;
		rr.ncpus = cpuset_count(&cl->cpus);
		r = auth_may_release(peer->uid, cl->uid);
		if (r == 0)
			r = claims_release(s->claims, (uint32_t)id);
	}
	if (r < 0) {
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, r,
				   r == -EPERM ? "claim belongs to another user" : "no such claim");
		return;
	}
	s->claims_ended[DISPATCH_END_RELEASED]++;
	dispatch_claim_gone(s, &gone);
	proto_msg_init(&s->reply, RTPLACE_MSG_RELEASE_REPLY, m->hdr.request_id);
	s->reply.release_reply = rr;
	dispatch_send_reply(s, peer, m);
}

static void dispatch_comm(const struct dispatch *s, int32_t pid, char *buf, size_t len)
{
	char comm[64];

	buf[0] = '\0';
	if (pid <= 0 || procfs_read(s->proc_root, pid, "comm", comm, sizeof(comm)) <= 0)
		return;
	comm[strcspn(comm, "\n")] = '\0';
	/* A comm is at most TASK_COMM_LEN - 1 characters: it fits. */
	memcpy(buf, comm, strnlen(comm, len - 1));
	buf[strnlen(comm, len - 1)] = '\0';
}

/* The thread running on a CPU as the client sees it: 0 and no comm when
 * it is outside the client's namespace. */
static void dispatch_cpu_show(const struct pidmap_view *v, struct rtplace_cpu_info *ci)
{
	pid_t shown;

	pidmap_show(v, ci->pid, &shown);
	ci->pid = (int32_t)shown;
	if (!shown)
		memset(ci->comm, 0, sizeof(ci->comm));
}

static void dispatch_cpus(struct dispatch *s, const struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_cpus_reply *r = &s->reply.cpus_reply;
	const struct topo *t = s->topo;
	uint32_t first = m->cpus.first;
	struct pidmap_view view;

	dispatch_view(s, peer, &view);
	proto_msg_init(&s->reply, RTPLACE_MSG_CPUS_REPLY, m->hdr.request_id);
	r->total = t->ncpus;
	r->first = first;
	r->count = t->ncpus - first < RTPLACE_CPUS_PAGE ? t->ncpus - first : RTPLACE_CPUS_PAGE;
	for (uint32_t i = 0; i < r->count; i++) {
		uint32_t cpu = first + i;
		struct rtplace_cpu_info *ci = &r->cpus[i];
		const struct topo_cpu *tc = &t->cpus[cpu];
		const struct claim *cl = claims_on_cpu(s->claims, cpu);
		bool online = cpuset_test(&t->online, cpu);

		ci->cpu = (uint16_t)cpu;
		ci->node = online ? tc->node : -1;
		ci->llc = online ? tc->llc : -1;
		ci->core = online ? tc->core : -1;
		if (m->cpus.flags & RTPLACE_CPUS_F_PACKAGE)
			ci->package = online ? tc->package : -1;
		ci->kind = online ? (uint8_t)tc->kind : 0;
		ci->level = online ? (uint8_t)cpupri_level(&s->view, cpu) : LEVEL_OFFLINE;
		if (online)
			ci->flags |= RTPLACE_CPU_F_ONLINE;
		if (online && cpuset_test(&s->housekeeping, cpu))
			ci->flags |= RTPLACE_CPU_F_HOUSEKEEPING;
		if (m->cpus.flags & RTPLACE_CPUS_F_HOST && cpuset_test(&s->host.iso.isolated, cpu))
			ci->flags |= RTPLACE_CPU_F_ISOLATED;
		if (m->cpus.flags & RTPLACE_CPUS_F_HOST && cpuset_test(&s->host.iso.nohz_full, cpu))
			ci->flags |= RTPLACE_CPU_F_NOHZ_FULL;
		if (ci->level == LEVEL_OFFLINE)
			ci->flags &= (uint8_t)~RTPLACE_CPU_F_ONLINE;
		if (ci->flags & RTPLACE_CPU_F_ONLINE && s->tracking) {
			const struct cpupri_slot *slot = cpupri_slot_ptr((void *)s->view.map, &s->view.geom, cpu);

			ci->pid = (int32_t)__atomic_load_n(&slot->pid, __ATOMIC_RELAXED);
			ci->rt_queued = __atomic_load_n(&slot->rt_queued, __ATOMIC_RELAXED);
			dispatch_comm(s, ci->pid, ci->comm, sizeof(ci->comm));
			if (!view.same_pidns)
				dispatch_cpu_show(&view, ci);
		}
		if (online && cl) {
			ci->claim_id = cl->id;
			ci->claim_level = cl->level;
		}
		/* Clients before version 3 know neither the flag nor the shares. */
		if (online && s->irqnoise && m->hdr.version >= 3) {
			const struct irqnoise_cpu *n = &irqnoise_cpus(s->irqnoise)[cpu];

			ci->irq_share = (uint16_t)(n->irq_ppm / (IRQNOISE_PPM / RTPLACE_SHARE_ONE));
			ci->softirq_share = (uint16_t)(n->softirq_ppm / (IRQNOISE_PPM / RTPLACE_SHARE_ONE));
			ci->flags |= RTPLACE_CPU_F_IRQ;
		}
	}
	dispatch_send_reply(s, peer, m);
}

/*
 * The claim with the lowest id at or above the request's from_id, told as
 * the client may see it: who holds it only to root and to its own uid,
 * the owner process by the client's number of it, and only when it lives
 * in the client's PID namespace (claims_at_or_after(): a lookup per
 * request while ids are dense).
 */
static void dispatch_claim_info(struct dispatch *s, const struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_claim_reply *r = &s->reply.claim_reply;
	const struct claim *cl;
	struct pidmap_view view;
	pid_t shown = 0;

	cl = claims_at_or_after(s->claims, m->claim.from_id);
	proto_msg_init(&s->reply, RTPLACE_MSG_CLAIM_REPLY, m->hdr.request_id);
	if (cl) {
		uint64_t now = loop_now_ms();

		r->claim_id = cl->id;
		r->level = cl->level;
		r->cpus = cl->cpus;
		r->flags = cl->pid ? RTPLACE_CLAIM_F_OWNER_EXIT : RTPLACE_CLAIM_F_CONNECTION;
		if (cl->level == LEVEL_DL)
			r->flags |= RTPLACE_CLAIM_F_EXCLUSIVE;
		if (cl->expires_ms) {
			uint64_t left = cl->expires_ms > now ? cl->expires_ms - now : 0;

			r->flags |= RTPLACE_CLAIM_F_LEASE;
			r->lease_left_ms = left < UINT32_MAX ? (uint32_t)left : UINT32_MAX - 1;
		}
		if (!auth_may_see_owner(peer->uid, cl->uid)) {
			r->flags |= RTPLACE_CLAIM_F_OTHER_USER;
		} else {
			r->flags |= RTPLACE_CLAIM_F_UID;
			r->owner_uid = cl->uid;
			if (cl->pid) {
				dispatch_view(s, peer, &view);
				if (pidmap_show(&view, cl->pid, &shown) < 0)
					shown = 0;
			}
			if (shown > 0) {
				r->flags |= RTPLACE_CLAIM_F_PID;
				r->owner_pid = (int32_t)shown;
				dispatch_comm(s, cl->pid, r->owner_comm, sizeof(r->owner_comm));
			}
		}
	}
	dispatch_send_reply(s, peer, m);
}

/* A page of time by class, read from the tracker's per-CPU entries at one
 * instant (sampled_ns) taken before them. */
static void dispatch_cpu_times(struct dispatch *s, const struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_cpu_times_reply *r = &s->reply.cpu_times_reply;
	uint32_t first = m->cpus.first;
	int err = 0;

	if (!s->tracker) {
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, -EOPNOTSUPP,
				    "time by class needs the BPF tracker");
		return;
	}
	proto_msg_init(&s->reply, RTPLACE_MSG_CPU_TIMES_REPLY, m->hdr.request_id);
	r->total = s->topo->ncpus;
	r->first = first;
	r->count = r->total - first < RTPLACE_CPUS_PAGE ? r->total - first : RTPLACE_CPUS_PAGE;
	r->sampled_ns = loop_now_ns();
	for (uint32_t i = 0; i < r->count && err == 0; i++)
		err = tracker_cpu_times(s->tracker, first + i, r->sampled_ns, r->cpus[i].ns);
	if (err < 0) {
		log_ratelimited(LOG_WARNING, "Failed to read the time by class of CPUs %u-%u: %s", first,
				first + r->count - 1, strerror(-err));
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, err, "time by class unreadable");
		return;
	}
	dispatch_send_reply(s, peer, m);
}

/* Managed CPUs the map does not show offline (hotplug). */
static uint32_t dispatch_online_count(const struct dispatch *s)
{
	uint32_t n = 0;

	CPUSET_FOREACH(cpu, &s->pcfg.managed)
		n += cpupri_level(&s->view, (uint32_t)cpu) != LEVEL_OFFLINE;
	return n;
}

static void dispatch_move_stats(const struct dispatch *s, struct dispatch_move_stats *ret)
{
	struct notify_stats ns;
	uint64_t moved, failed, pushed, push_failed;

	moves_get_counts(s->moves, &moved, &failed);
	push_get_counts(s->push, &pushed, &push_failed);
	notify_get_stats(s->notify, &ns);
	*ret = (struct dispatch_move_stats){
		.moved = moved + pushed,
		.failed = failed + push_failed,
		.collisions = manage_collisions(s->manage),
		.records_lost = ns.dropped,
	};
}

static void dispatch_status(struct dispatch *s, const struct server_peer *peer, const struct proto_msg *m)
{
	struct dispatch_move_stats ms;
	struct rtplace_status_reply st;

	dispatch_move_stats(s, &ms);
	st = (struct rtplace_status_reply){
		.uptime_ms = loop_now_ms() - s->start_ms,
		.ncpus = s->topo->ncpus,
		.nonline = dispatch_online_count(s),
		.nnodes = s->topo->nnodes,
		.nllcs = s->topo->nllcs,
		.ncores = s->topo->ncores,
		.flags = (s->tracking ? RTPLACE_STATUS_F_TRACKING : 0) | (s->live ? RTPLACE_STATUS_F_MOVES : 0),
		.queries = s->queries,
		.errors = s->errors,
		.claims_active = claims_count(s->claims),
		.claims_total = s->claims_total,
		.clients = server_client_count(s->server),
		.clients_dropped = s->clients_dropped + server_refused_count(s->server),
		.moves = ms.moved,
	};

	proto_set_string(st.version, sizeof(st.version), PACKAGE_VERSION);
	proto_msg_init(&s->reply, RTPLACE_MSG_STATUS_REPLY, m->hdr.request_id);
	s->reply.status_reply = st;
	dispatch_send_reply(s, peer, m);
}

static void dispatch_tracking(struct dispatch *s, const struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_tracking_reply t = {
		.mode = s->tracking ? RTPLACE_TRACKING_LIVE : RTPLACE_TRACKING_SIMULATED,
	};

	if (s->sampler) {
		struct sampler_stats st;

		sampler_get_stats(s->sampler, &st);
		t.mode = RTPLACE_TRACKING_SAMPLED;
		t.interval_ms = s->sample_interval_ms;
		t.samples = st.samples;
		t.failures = st.failures;
		t.cpu_ns = st.cpu_ns;
		proto_set_string(t.why, sizeof(t.why), s->untracked->text);
	}
	proto_msg_init(&s->reply, RTPLACE_MSG_TRACKING_REPLY, m->hdr.request_id);
	s->reply.tracking_reply = t;
	dispatch_send_reply(s, peer, m);
}

static void dispatch_host_info(struct dispatch *s, struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_host_reply h = { 0 };

	if (s->host.rt_known) {
		h.rt_runtime_us = s->host.rt.runtime_us;
		h.rt_period_us = s->host.rt.period_us;
		h.flags = RTPLACE_HOST_F_RT_KNOWN;
	}
	proto_msg_init(&s->reply, RTPLACE_MSG_HOST_REPLY, m->hdr.request_id);
	s->reply.host_reply = h;
	dispatch_send_reply(s, peer, m);
}

static void dispatch_move(struct dispatch *s, struct server_peer *peer, const struct proto_msg *m)
{
	struct auth_peer *ap = dispatch_auth_peer(peer);
	struct rtplace_move mv = m->move;
	struct rtplace_move_reply mr;
	struct rtplace_reason reason;
	int r = -ENOMEM;

	if (dispatch_resolve_pid(s, peer, m, m->move.tid, true, &mv.tid) < 0)
		return;
	if (ap)
		r = moves_move(s->moves, peer, ap, &mv, claims_levels(s->claims), &mr, &reason);
	else
		reason_set(&reason, "out of memory");
	if (r < 0) {
		dispatch_reason_show(s, peer, &reason, mv.tid, m->move.tid);
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, r, reason.text);
		return;
	}
	/* The thread as the client named it: its namespace may differ. */
	mr.tid = m->move.tid;
	proto_msg_init(&s->reply, RTPLACE_MSG_MOVE_REPLY, m->hdr.request_id);
	s->reply.move_reply = mr;
	dispatch_send_reply(s, peer, m);
}

static void dispatch_subscribe(struct dispatch *s, struct server_peer *peer, const struct proto_msg *m)
{
	struct auth_peer *ap = dispatch_auth_peer(peer);
	struct pidmap_view view;
	struct notify_sub_info info;
	struct rtplace_subscribe_reply sr;
	struct rtplace_reason reason;
	const struct auth_creds *creds;
	int r = ap ? auth_peer_creds(ap, s->proc_root, peer->pidfd, peer->pid, peer->uid, peer->gid, &creds) : -ENOMEM;

	if (r < 0) {
		reason_set(&reason, "cannot read the credentials of pid %d", (int)peer->pid);
	} else {
		/* Unprivileged subscribers see only records about their own threads. */
		reason.text[0] = '\0';
		dispatch_view(s, peer, &view);
		r = notify_subscribe_client(s->notify, peer->id, peer->uid, auth_is_privileged(creds),
					    m->hdr.version >= 3 ? RTPLACE_RING_VERSION : RTPLACE_RING_VERSION_1, &view,
					    &reason, &info);
		if (r < 0 && !reason.text[0])
			reason_set(&reason, "cannot create the ring: %s", strerror(-r));
	}
	if (r == 0) {
		int fds[2] = { info.memfd, info.doorbell };

		sr = (struct rtplace_subscribe_reply){
			.ring_records = info.ring_records,
			.record_size = info.record_size,
			.ring_bytes = info.ring_bytes,
		};
		proto_msg_init(&s->reply, RTPLACE_MSG_SUBSCRIBE_REPLY, m->hdr.request_id);
		s->reply.subscribe_reply = sr;
		if (dispatch_finish_reply(s, peer, m) < 0)
			return;
		r = server_send_fds(s->server, peer->id, &s->reply, s->reply.hdr.length, fds, 2);
		if (r == 0)
			return;
		reason_set(&reason, "cannot pass the ring: %s", strerror(-r));
	}
	dispatch_reason_show(s, peer, &reason, 0, 0);
	dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, r, reason.text);
}

/* The peer is gone: its claims end with it, except those tied to a process
 * (rtplace-run's connection closes at exec; its claim lives with the
 * process). */
static void dispatch_disconnect(struct dispatch *s, struct server_peer *peer)
{
	free(peer->data);
	peer->data = NULL;
	s->claims_ended[DISPATCH_END_DISCONNECTED] += claims_drop_client(s->claims, peer->id);
	notify_client_gone(s->notify, peer->id);
	log_debug("client %u (pid %d) disconnected", peer->id, (int)peer->pid);
}

int dispatch_request_cb(struct server *server, struct server_peer *peer, const void *msg, size_t len,
			void *ctx)
{
	struct dispatch *s = ctx;
	struct proto_msg *m = &s->request;
	struct proto_error err;
	int r;

	if (!msg) {
		dispatch_disconnect(s, peer);
		snapshot_publish(&s->snap, s->topo, &s->pcfg, &s->housekeeping, claims_stamped(s->claims), false);
		return 0;
	}
	s->serving = true;
	r = proto_decode(msg, len, &s->lim, m, &err);
	s->reply_version = r == 0 ? m->hdr.version : err.version;
	if (r < 0) {
		log_debug("client %u (pid %d): %s", peer->id, (int)peer->pid, err.reason.text);
		dispatch_send_error(s, peer->id, err.request_id, err.type, r, err.reason.text);
		if (proto_error_is_garbage(r)) {
			log_notice_ratelimited("client %u (pid %d uid %u) sent garbage (%s); dropping it", peer->id,
					       (int)peer->pid, (unsigned)peer->uid, err.reason.text);
			s->clients_dropped++;
			goto out;
		}
		r = 0;
		goto out;
	}
	/* Acting on the descriptors that arrived would act on part of what
	 * the client meant. */
	if (peer->fds_truncated) {
		char reason[64];

		snprintf(reason, sizeof(reason), "more than %d descriptors with one message", SERVER_RECV_FDS_MAX);
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, -EINVAL, reason);
		goto done;
	}
	if (peer->nfds > 1 ||
	    (peer->nfds == 1 && !(m->hdr.type == RTPLACE_MSG_MOVE ||
				  (m->hdr.type == RTPLACE_MSG_QUERY && m->query.owner_pid)))) {
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, -EINVAL,
				   "one pidfd, only with a MOVE or a claim's owner process");
		goto done;
	}
	switch (m->hdr.type) {
	case RTPLACE_MSG_QUERY: {
		uint64_t start = loop_now_ns();

		dispatch_query(s, peer, m);
		histogram_observe(&s->query_time, loop_now_ns() - start);
		break;
	}
	case RTPLACE_MSG_RELEASE:
		dispatch_release(s, peer, m);
		break;
	case RTPLACE_MSG_CPUS:
		dispatch_cpus(s, peer, m);
		break;
	case RTPLACE_MSG_CPU_TIMES:
		dispatch_cpu_times(s, peer, m);
		break;
	case RTPLACE_MSG_STATUS:
		dispatch_status(s, peer, m);
		break;
	case RTPLACE_MSG_TRACKING:
		dispatch_tracking(s, peer, m);
		break;
	case RTPLACE_MSG_HOST:
		dispatch_host_info(s, peer, m);
		break;
	case RTPLACE_MSG_MOVE:
		dispatch_move(s, peer, m);
		break;
	case RTPLACE_MSG_SUBSCRIBE:
		dispatch_subscribe(s, peer, m);
		break;
	case RTPLACE_MSG_LOCAL:
		dispatch_local(s, peer, m);
		break;
	case RTPLACE_MSG_CLAIM:
		dispatch_claim_info(s, peer, m);
		break;
	default:
		/* proto_decode() accepts only the request types above. */
		dispatch_send_error(s, peer->id, m->hdr.request_id, m->hdr.type, -EOPNOTSUPP, "unknown request");
		break;
	}
done:
	r = 0;
out:
	s->serving = false;
	dispatch_flush_events(s);
	snapshot_publish(&s->snap, s->topo, &s->pcfg, &s->housekeeping, claims_stamped(s->claims), false);
	return r;
}

/* Claims tied to processes that outlived the last daemon (DESIGN §14),
 * and the journal that keeps them from now on. */
static int dispatch_restore_claims(struct dispatch *s)
{
	struct rtplace_reason reason;
	int r = claims_state_load(s->claims, s->state_path, geteuid(), s->proc_root, &reason);

	if (r == -EPERM)
		log_error("claims state %s refused (%s): not trusted, no claim restored", s->state_path, reason.text);
	else if (r == -EBADMSG)
		log_error("claims state %s is corrupt (%s): ignored, no claim restored; ids continue from %u",
			  s->state_path, reason.text, claims_next_id(s->claims));
	else if (r < 0 && r != -ENOENT)
		log_error("cannot read the claims state %s: %s; no claim restored", s->state_path, strerror(-r));
	else if (r >= 0)
		log_info("restored %d claim%s from %s", r, r == 1 ? "" : "s", s->state_path);
	if (r > 0)
		s->claims_total += (uint64_t)r;
	r = claims_state_new(s->state_path, &s->state);
	if (r < 0)
		return r;
	/* Rewritten at once, as the daemon's own file: what was dropped or
	 * refused stays so. Without it every claim is refused until a write
	 * succeeds. */
	r = claims_state_compact(s->state, s->claims);
	if (r < 0)
		log_warning("Failed to write the claims state %s: %s (claims are refused until it can be)",
			    s->state_path, strerror(-r));
	return 0;
}

int dispatch_new(const struct dispatch_opts *opts, const struct config *cfg, struct dispatch **ret)
{
	struct dispatch *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->base = opts->base;
	s->topo = opts->topo;
	s->snap = (struct snapshot){ .map_fd = -1 };
	s->tracking = opts->tracker != NULL;
	s->live = opts->tracker || opts->sampler;
	s->tracker = opts->tracker;
	s->sampler = opts->sampler;
	s->sample_interval_ms = opts->sample_interval_ms;
	s->untracked = opts->untracked;
	s->proc_root = opts->proc_root;
	s->irqnoise = opts->irqnoise;
	s->start_ms = loop_now_ms();
	s->lim = (struct proto_limits){
		.ncpus = opts->topo->ncpus,
		.nnodes = opts->topo->nnodes,
		.accept = PROTO_ACCEPT_REQUESTS,
	};
	snprintf(s->state_path, sizeof(s->state_path), "%s.claims", cfg->daemon.socket);
	dispatch_apply_config(s, cfg);
	r = claims_new(opts->topo->ncpus, &s->claims);
	if (r < 0)
		goto fail;
	r = claims_attach(s->claims, s->base, loop_now_ms, dispatch_claim_ended_cb, s);
	if (r < 0)
		goto fail;
	r = cpupri_view_open(opts->map, opts->map_size, &s->view);
	if (r < 0)
		goto fail;
	r = placement_ctx_new(&s->pcfg, s->topo, &s->view, &s->pctx);
	if (r < 0)
		goto fail;
	r = dispatch_restore_claims(s);
	if (r < 0)
		goto fail;
	r = snapshot_new(s->topo, opts->map_fd, opts->map_size, &s->snap);
	if (r < 0)
		goto fail;
	s->snap_later = event_new(s->base, -1, 0, dispatch_snap_later_cb, s);
	if (!s->snap_later) {
		r = -ENOMEM;
		goto fail;
	}
	snapshot_publish(&s->snap, s->topo, &s->pcfg, &s->housekeeping, claims_stamped(s->claims), true);
	*ret = s;
	return 0;
fail:
	dispatch_free(s);
	return r;
}

void dispatch_attach_server(struct dispatch *s, struct server *server)
{
	s->server = server;
}

void dispatch_get_shared(struct dispatch *s, struct dispatch_shared *ret)
{
	*ret = (struct dispatch_shared){
		.view = &s->view,
		.pcfg = &s->pcfg,
		.placement = &s->pctx,
		.policy = &s->policy,
		.claims = s->claims,
	};
}

void dispatch_attach_moves(struct dispatch *s, const struct dispatch_moves *m)
{
	s->notify = m->notify;
	s->moves = m->moves;
	s->push = m->push;
	s->manage = m->manage;
}

void dispatch_free(struct dispatch *s)
{
	if (!s)
		return;
	claims_state_free(s->state);
	claims_free(s->claims);
	placement_ctx_free(s->pctx);
	cpupri_view_close(&s->view);
	if (s->snap_later)
		event_free(s->snap_later);
	snapshot_free(&s->snap);
	free(s->events);
	free(s);
}

const uint8_t *dispatch_claimed_levels(const struct dispatch *s)
{
	return claims_levels(s->claims);
}

void dispatch_get_stats(const struct dispatch *s, struct dispatch_stats *ret)
{
	struct dispatch_move_stats ms;
	unsigned claimed = 0;

	for (uint32_t cpu = 0; cpu < s->topo->ncpus; cpu++)
		claimed += claims_on_cpu(s->claims, cpu) != NULL;
	dispatch_move_stats(s, &ms);
	*ret = (struct dispatch_stats){
		.queries_placed = s->queries_placed,
		.queries_empty = s->queries_empty,
		.queries_refused = s->queries - s->queries_placed - s->queries_empty,
		.moves = ms,
		.claims_active = claims_count(s->claims),
		.claimed_cpus = claimed,
		.clients = s->server ? server_client_count(s->server) : 0,
		.claims_created = s->claims_total,
		.query_time = &s->query_time,
	};
	memcpy(ret->claims_ended, s->claims_ended, sizeof(ret->claims_ended));
	memcpy(ret->claims_refused, s->claims_refused, sizeof(ret->claims_refused));
}

int dispatch_claim_cpu(struct dispatch *s, pid_t pid, uid_t uid, uint32_t level, const struct rtplace_cpumask *allowed,
		       int *ret_cpu, uint32_t *ret_id, struct rtplace_reason *reason)
{
	struct claim tmpl = { .pid = pid, .uid = uid, .level = (uint8_t)level };
	struct procfs_stat st;
	uint32_t id;
	int cpu, r;

	if (!s->live) {
		reason_set(reason, "placement runs on a simulated machine (--topology)");
		return -EOPNOTSUPP;
	}
	r = dispatch_claims_quota(s, uid, reason);
	if (r < 0)
		return r;
	claims_expire_due(s->claims, dispatch_claim_ended_cb, s);
	r = moves_pick(s->moves, allowed, -1, level, claims_levels(s->claims), &cpu);
	if (r < 0) {
		moves_pick_reason(r, level, reason);
		return r;
	}
	r = procfs_read_stat(s->proc_root, pid, 0, &st);
	if (r == 0) {
		tmpl.pid_start = st.start_time;
		cpuset_set(&tmpl.cpus, (unsigned)cpu);
		r = claims_add(s->claims, &tmpl, loop_now_ms(), 0, &id);
	}
	if (r < 0) {
		reason_set(reason, r == -ESRCH ? "process %d is gone" : "cannot record a claim for process %d", (int)pid);
		return r;
	}
	r = claims_state_added(s->state, s->claims, claims_find(s->claims, id));
	if (r < 0) {
		claims_withdraw(s->claims, id);
		reason_set(reason, "cannot record the claim in %s: %s", s->state_path, strerror(-r));
		return r;
	}
	claims_made(s->claims, id);
	s->claims_total++;
	*ret_cpu = cpu;
	*ret_id = id;
	return 0;
}

void dispatch_end_claim(struct dispatch *s, uint32_t id)
{
	const struct claim *cl = claims_find(s->claims, id);
	struct claim gone;

	if (!cl)
		return;
	gone = *cl;
	if (claims_release(s->claims, id) == 0) {
		s->claims_ended[DISPATCH_END_RELEASED]++;
		dispatch_claim_gone(s, &gone);
	}
}
