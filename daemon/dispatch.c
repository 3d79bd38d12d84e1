/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "dispatch.h"
#include "log.h"
#include "loop.h"
#include "pidmap.h"
#include "procfs.h"
#include "protocol.h"

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
};

static void dispatch_send(struct dispatch *d, uint32_t client, const struct proto_msg *m)
{
	server_send(d->server, client, m, m->hdr.length);
}

static void dispatch_send_error(struct dispatch *d, uint32_t client, uint32_t request_id, uint16_t type, int error,
			       const char *reason)
{
	engine_counters(d->engine)->errors++;
	if (proto_encode_error(&d->reply, request_id, type, error, reason) == 0 &&
	    proto_msg_finish(&d->reply, d->reply_version) == 0)
		dispatch_send(d, client, &d->reply);
}

/*
 * Every reply is built one way: proto_msg_init() in d->reply, the body
 * filled in place, then this. Packs it in the request's version (a list
 * reply's length follows its count from version 2), checked first in a
 * self-checking build (proto_self_check()). 0, or -errno once m is
 * answered with an ERROR instead.
 */
static int dispatch_finish_reply(struct dispatch *d, const struct server_peer *peer, const struct proto_msg *m)
{
	int r = proto_msg_finish(&d->reply, d->reply_version);

	if (r == -ERANGE && d->reply_version < 3) {
		/* a thread's affinity past CPU 1023, which the client's version cannot carry */
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, -ERANGE,
				   "a cpu past 1023: ask in protocol version 3");
		return r;
	}
	if (r < 0 || proto_self_check(&d->reply) < 0) {
		log_error("BUG: built an invalid %s", proto_type_name(d->reply.hdr.type));
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, -EIO, "internal error");
		return -EIO;
	}
	return 0;
}

/* Sends the reply built in d->reply (dispatch_finish_reply()). */
static void dispatch_send_reply(struct dispatch *d, const struct server_peer *peer, const struct proto_msg *m)
{
	if (dispatch_finish_reply(d, peer, m) < 0)
		return;
	/* A client that got the reply to its claim or release reads the
	 * snapshot next: it must already hold the change. */
	engine_publish(d->engine, false);
	dispatch_send(d, peer->id, &d->reply);
}

/* Sends the events queued while a request was served, after its reply,
 * as version 1: the same in every version, and read by every client.
 * Built as replies are, in d->event. */
static void dispatch_flush_events(struct dispatch *d)
{
	for (size_t i = 0; i < d->nevents; i++) {
		proto_msg_init(&d->event, RTPLACE_MSG_CLAIM_ENDED, 0);
		d->event.claim_ended = d->events[i].e;
		if (proto_msg_finish(&d->event, RTPLACE_PROTO_VERSION_MIN) == 0 && proto_self_check(&d->event) == 0)
			server_send(d->server, d->events[i].client, &d->event, d->event.hdr.length);
	}
	d->nevents = 0;
}

/* The engine's report of a claim that ended on its own or was taken back:
 * an event to the connection that made it, after the reply to the request
 * being served, if any. */
static void dispatch_claim_ended_cb(const struct claim *cl, uint32_t why, void *ctx)
{
	struct dispatch *d = ctx;

	if (!cl->client)
		return; /* restored after a restart, or RealtimeKit's: no connection to tell */
	if (d->nevents == d->events_cap) {
		size_t cap = d->events_cap ? d->events_cap * 2 : 16;
		struct dispatch_event *v = realloc(d->events, cap * sizeof(*v));

		if (!v) {
			log_warning("out of memory: claim %u's holder is not told that it ended", cl->id);
			return;
		}
		d->events = v;
		d->events_cap = cap;
	}
	d->events[d->nevents++] = (struct dispatch_event){
		.client = cl->client,
		.e = { .claim_id = cl->id, .why = why },
	};
	if (!d->serving)
		dispatch_flush_events(d);
}

/* LOCAL: the descriptors for reads without a round trip (DESIGN §19),
 * from protocol version 3 on, so that a client of an older version
 * keeps asking the socket. */
static void dispatch_local(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_local_reply lr;
	int fds[2];
	int r = m->hdr.version < 3 ? -EOPNOTSUPP : snapshot_offer(engine_snapshot(d->engine), &lr, fds);

	if (r < 0) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r,
				   m->hdr.version < 3 ? "local reads need protocol version 3"
						      : "this daemon offers no map to read locally");
		return;
	}
	proto_msg_init(&d->reply, RTPLACE_MSG_LOCAL_REPLY, m->hdr.request_id);
	d->reply.local_reply = lr;
	if (dispatch_finish_reply(d, peer, m) < 0)
		return;
	r = server_send_fds(d->server, peer->id, &d->reply, d->reply.hdr.length, fds, 2);
	if (r < 0)
		log_debug("client %u: cannot send the local-read descriptors: %s", peer->id, strerror(-r));
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
static void dispatch_claim_terms(struct dispatch *d, struct server_peer *peer, const struct rtplace_query *q,
				uint8_t *ret_level, uint64_t *ret_lease, struct rtplace_reason *note)
{
	struct auth_peer *ap = dispatch_auth_peer(peer);
	const struct auth_creds *creds = NULL;
	struct auth_creds uid_only = { .pid = peer->pid, .uid = peer->uid, .gid = peer->gid };

	/* A requester whose process is gone or unreadable is judged by its
	 * uid alone: root keeps its rights, anyone else has none. */
	if (!ap || auth_peer_creds(ap, engine_proc_root(d->engine), peer->pidfd, peer->pid, peer->uid, peer->gid, &creds) < 0)
		creds = &uid_only;
	auth_claim_terms(creds, engine_policy(d->engine), engine_config(d->engine), q->prio, q->flags & RTPLACE_QUERY_F_EXCLUSIVE, q->lease_ms,
			 ret_level, ret_lease, note);
}

/* How peer sees the daemon's pids (pidmap.h). */
static void dispatch_view(const struct dispatch *d, const struct server_peer *peer, struct pidmap_view *ret)
{
	const struct pidmap_peer pp = { .same_pidns = peer->same_pidns, .level = peer->pidns_level };

	pidmap_view_of(engine_proc_root(d->engine), &pp, peer->pid, peer->pidfd, ret);
}

/* A reason worded with the daemon's pids, for peer: by its own numbers
 * when it lives in another PID namespace (known: the daemon's number of
 * the thread it named as known_as). */
static void dispatch_reason_show(const struct dispatch *d, const struct server_peer *peer,
				 struct rtplace_reason *reason, pid_t known, pid_t known_as)
{
	struct pidmap_view view;

	if (peer->same_pidns)
		return;
	dispatch_view(d, peer, &view);
	pidmap_reason_show(&view, reason, known, known_as);
}

/*
 * The pid a request names (a claim's owner, a move's thread), as the
 * daemon's (pidmap.h): with the pidfd the client sent with it, or bare
 * from a client in the daemon's PID namespace. -errno after answering the
 * request with an ERROR.
 */
static int dispatch_resolve_pid(struct dispatch *d, const struct server_peer *peer, const struct proto_msg *m,
				pid_t named, bool thread, pid_t *ret)
{
	const struct pidmap_peer pp = { .same_pidns = peer->same_pidns, .level = peer->pidns_level };
	int pidfd = peer->nfds ? peer->fds[0] : -1;
	struct rtplace_reason reason;
	int r = thread ? pidmap_thread(engine_proc_root(d->engine), &pp, named, pidfd, ret, &reason)
		       : pidmap_process(engine_proc_root(d->engine), &pp, named, pidfd, ret, &reason);

	if (r < 0)
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r, reason.text);
	return r;
}

/*
 * What a QUERY must pass before placement: MANAGE needs a source that
 * sees threads; a claim, room under the limits and an owner process the
 * requester may name (*ret_owner, the daemon's pid of it, 0 for none).
 * 0, or -errno once the request is answered with an ERROR.
 */
static int dispatch_query_admit(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m,
				pid_t *ret_owner)
{
	const struct rtplace_query *q = &m->query;
	const struct levels_source *levels = engine_levels(d->engine);
	struct rtplace_reason why;
	int r = 0;

	*ret_owner = 0;
	if (q->flags & RTPLACE_QUERY_F_MANAGE && !levels_source_has_threads(levels)) {
		r = -EOPNOTSUPP;
		reason_set(&why, levels_source_live(levels) ? "managed threads need the BPF tracker (levels are sampled)"
							    : "managed threads need the live machine (not --topology)");
	}
	if (r == 0 && q->flags & RTPLACE_QUERY_F_CLAIM)
		r = engine_claim_admit(d->engine, peer->id, peer->uid, &why);
	if (r < 0) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r, why.text);
		return r;
	}
	if (!(q->flags & RTPLACE_QUERY_F_CLAIM) || !q->owner_pid)
		return 0;
	r = dispatch_resolve_pid(d, peer, m, q->owner_pid, false, ret_owner);
	if (r < 0)
		return r;
	r = auth_may_own(engine_proc_root(d->engine), peer->pid, peer->uid, *ret_owner);
	if (r < 0)
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r,
				    r == -EPERM ? "the owner process belongs to another user"
						: "the owner process does not exist");
	return r;
}

/*
 * Holds the CPUs of the answer res to q as a claim for peer, owned by
 * owner (0: its connection), and tells it in the reply being built (qr).
 * 0, or -errno once the request is answered with an ERROR.
 */
static int dispatch_query_claim(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m,
				pid_t owner, const struct placement_request *req, const struct placement_result *res)
{
	const struct rtplace_query *q = &m->query;
	struct rtplace_query_reply *qr = &d->reply.query_reply;
	struct claim tmpl = { .client = peer->id, .pid = owner, .uid = peer->uid };
	struct rtplace_reason note, why;
	uint32_t claim_id;
	uint64_t lease;
	int r;

	dispatch_claim_terms(d, peer, q, &tmpl.level, &lease, &note);
	/* The CPUs placement chose, not the reply's encoding of them. */
	for (uint32_t i = 0; i < res->n; i++)
		cpuset_set(&tmpl.cpus, res->cpus[i]);
	/* Where its threads may be pushed, kept with the claim so that a
	 * restarted daemon manages them again. */
	if (q->flags & RTPLACE_QUERY_F_MANAGE) {
		tmpl.managed = engine_placement(d->engine)->managed;
		if (!cpuset_empty(&req->allowed))
			cpuset_and(&tmpl.managed, &tmpl.managed, &req->allowed);
	}
	r = engine_claim(d->engine, &tmpl, lease, &claim_id, &why);
	if (r < 0) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r, why.text);
		return r;
	}
	if (note.text[0]) {
		log_ratelimited(LOG_INFO, "claim %u for uid %u: %s", claim_id, (unsigned)peer->uid, note.text);
		proto_set_string(qr->reason, sizeof(qr->reason), note.text);
	}
	if (q->flags & RTPLACE_QUERY_F_MANAGE) {
		note.text[0] = '\0';
		manage_process(d->actors->manage, owner, peer->uid, &tmpl.managed, &note);
		/* Over a level note, which the log keeps: threads left
		 * unwatched are what a MANAGE claimer cannot see. */
		if (note.text[0])
			proto_set_string(qr->reason, sizeof(qr->reason), note.text);
	}
	qr->claim_id = claim_id;
	qr->lease_ms = lease ? (uint32_t)lease : RTPLACE_LEASE_INFINITE;
	return 0;
}

static void dispatch_query(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	const struct rtplace_query *q = &m->query;
	struct rtplace_query_reply *qr = &d->reply.query_reply;
	struct placement_request req = {
		.prio = q->prio,
		.count = q->count,
		.node = q->node,
		.near_cpu = q->near_cpu,
		.normal = q->flags & RTPLACE_QUERY_F_NORMAL,
		.allowed = q->allowed,
	};
	struct placement_result *res = &d->placed;
	struct engine_counters *counters = engine_counters(d->engine);
	struct rtplace_reason why;
	pid_t owner;
	int r;

	counters->queries++;
	if (dispatch_query_admit(d, peer, m, &owner) < 0)
		return;
	/* A client of protocol versions 1 and 2 can be told of no CPU past
	 * 1023: on a larger machine it chooses among those it can name. */
	if (m->hdr.version < 3 && engine_topo(d->engine)->ncpus > RTPLACE_CPUMASK_V2_CPUS && cpuset_empty(&req.allowed))
		for (uint32_t i = 0; i < RTPLACE_CPUMASK_V2_CPUS / 64; i++)
			req.allowed.bits[i] = ~UINT64_C(0);
	/* Claims whose lease ran out end first; their events wait until the
	 * answer is sent. */
	r = engine_place(d->engine, &req, &why, res);
	if (r == -EINVAL || r == -ENOMEM) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r, why.text);
		return;
	}
	proto_msg_init(&d->reply, RTPLACE_MSG_QUERY_REPLY, m->hdr.request_id);
	for (uint32_t i = 0; i < res->n; i++)
		proto_query_reply_add(qr, res->cpus[i], res->levels[i]);
	proto_set_string(qr->reason, sizeof(qr->reason), placement_reason_text(&why));
	if (q->flags & RTPLACE_QUERY_F_CLAIM && res->n > 0 && dispatch_query_claim(d, peer, m, owner, &req, res) < 0)
		return;
	if (res->n > 0)
		counters->queries_placed++;
	else
		counters->queries_empty++;
	if (!peer->same_pidns) {
		struct rtplace_reason shown;

		memcpy(shown.text, qr->reason, sizeof(shown.text));
		dispatch_reason_show(d, peer, &shown, 0, 0);
		proto_set_string(qr->reason, sizeof(qr->reason), shown.text);
	}
	dispatch_send_reply(d, peer, m);
}

static void dispatch_release(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	uint64_t id = m->release.claim_id;
	const struct claim *cl = id <= UINT32_MAX ? claims_find(engine_claims(d->engine), (uint32_t)id) : NULL;
	struct rtplace_release_reply rr = { .claim_id = id };
	int r = -ENOENT;

	if (cl) {
		rr.ncpus = cpuset_count(&cl->cpus);
		r = auth_may_release(peer->uid, cl->uid);
		if (r == 0)
			r = engine_end_claim(d->engine, (uint32_t)id);
	}
	if (r < 0) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r,
				   r == -EPERM ? "claim belongs to another user" : "no such claim");
		return;
	}
	proto_msg_init(&d->reply, RTPLACE_MSG_RELEASE_REPLY, m->hdr.request_id);
	d->reply.release_reply = rr;
	dispatch_send_reply(d, peer, m);
}

static void dispatch_comm(const struct dispatch *d, int32_t pid, char *buf, size_t len)
{
	char comm[64];

	buf[0] = '\0';
	if (pid <= 0 || procfs_read(engine_proc_root(d->engine), pid, "comm", comm, sizeof(comm)) <= 0)
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

static void dispatch_cpus(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_cpus_reply *r = &d->reply.cpus_reply;
	const struct topo *t = engine_topo(d->engine);
	const struct cpupri_view *map = engine_view(d->engine);
	uint32_t first = m->cpus.first;
	struct pidmap_view view;

	dispatch_view(d, peer, &view);
	proto_msg_init(&d->reply, RTPLACE_MSG_CPUS_REPLY, m->hdr.request_id);
	r->total = t->ncpus;
	r->first = first;
	r->count = t->ncpus - first < RTPLACE_CPUS_PAGE ? t->ncpus - first : RTPLACE_CPUS_PAGE;
	for (uint32_t i = 0; i < r->count; i++) {
		uint32_t cpu = first + i;
		struct rtplace_cpu_info *ci = &r->cpus[i];
		const struct topo_cpu *tc = &t->cpus[cpu];
		const struct claim *cl = claims_on_cpu(engine_claims(d->engine), cpu);
		bool online = cpuset_test(&t->online, cpu);

		ci->cpu = (uint16_t)cpu;
		ci->node = online ? tc->node : -1;
		ci->llc = online ? tc->llc : -1;
		ci->core = online ? tc->core : -1;
		if (m->cpus.flags & RTPLACE_CPUS_F_PACKAGE)
			ci->package = online ? tc->package : -1;
		ci->kind = online ? (uint8_t)tc->kind : 0;
		ci->level = online ? (uint8_t)cpupri_level(map, cpu) : LEVEL_OFFLINE;
		if (online)
			ci->flags |= RTPLACE_CPU_F_ONLINE;
		if (online && cpuset_test(engine_housekeeping(d->engine), cpu))
			ci->flags |= RTPLACE_CPU_F_HOUSEKEEPING;
		if (m->cpus.flags & RTPLACE_CPUS_F_HOST && cpuset_test(&engine_host(d->engine)->iso.isolated, cpu))
			ci->flags |= RTPLACE_CPU_F_ISOLATED;
		if (m->cpus.flags & RTPLACE_CPUS_F_HOST && cpuset_test(&engine_host(d->engine)->iso.nohz_full, cpu))
			ci->flags |= RTPLACE_CPU_F_NOHZ_FULL;
		if (ci->level == LEVEL_OFFLINE)
			ci->flags &= (uint8_t)~RTPLACE_CPU_F_ONLINE;
		if (ci->flags & RTPLACE_CPU_F_ONLINE && levels_source_has_threads(engine_levels(d->engine))) {
			const struct cpupri_slot *slot = cpupri_slot_ptr((void *)map->map, &map->geom, cpu);

			ci->pid = (int32_t)__atomic_load_n(&slot->pid, __ATOMIC_RELAXED);
			ci->rt_queued = __atomic_load_n(&slot->rt_queued, __ATOMIC_RELAXED);
			dispatch_comm(d, ci->pid, ci->comm, sizeof(ci->comm));
			if (!view.same_pidns)
				dispatch_cpu_show(&view, ci);
		}
		if (online && cl) {
			ci->claim_id = cl->id;
			ci->claim_level = cl->level;
			/* A simulated machine's levels change with claims only
			 * (rtplaced(8)): show the level QUERY counts. */
			if (!levels_source_live(engine_levels(d->engine)) && cl->level > ci->level)
				ci->level = cl->level;
		}
		/* Clients before version 3 know neither the flag nor the shares. */
		if (online && engine_irqnoise(d->engine) && m->hdr.version >= 3) {
			const struct irqnoise_cpu *n = &irqnoise_cpus(engine_irqnoise(d->engine))[cpu];

			ci->irq_share = (uint16_t)(n->irq_ppm / (IRQNOISE_PPM / RTPLACE_SHARE_ONE));
			ci->softirq_share = (uint16_t)(n->softirq_ppm / (IRQNOISE_PPM / RTPLACE_SHARE_ONE));
			ci->flags |= RTPLACE_CPU_F_IRQ;
		}
	}
	dispatch_send_reply(d, peer, m);
}

/*
 * The claim with the lowest id at or above the request's from_id, told as
 * the client may see it: who holds it only to root and to its own uid,
 * the owner process by the client's number of it, and only when it lives
 * in the client's PID namespace (claims_at_or_after(): a lookup per
 * request while ids are dense).
 */
static void dispatch_claim_info(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_claim_reply *r = &d->reply.claim_reply;
	const struct claim *cl;
	struct pidmap_view view;
	pid_t shown = 0;

	cl = claims_at_or_after(engine_claims(d->engine), m->claim.from_id);
	proto_msg_init(&d->reply, RTPLACE_MSG_CLAIM_REPLY, m->hdr.request_id);
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
				dispatch_view(d, peer, &view);
				if (pidmap_show(&view, cl->pid, &shown) < 0)
					shown = 0;
			}
			if (shown > 0) {
				r->flags |= RTPLACE_CLAIM_F_PID;
				r->owner_pid = (int32_t)shown;
				dispatch_comm(d, cl->pid, r->owner_comm, sizeof(r->owner_comm));
			}
		}
	}
	dispatch_send_reply(d, peer, m);
}

/* A page of time by class, read from the tracker's per-CPU entries at one
 * instant (sampled_ns) taken before them. */
static void dispatch_cpu_times(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_cpu_times_reply *r = &d->reply.cpu_times_reply;
	uint32_t first = m->cpus.first;
	int err = 0;

	if (!levels_source_has_threads(engine_levels(d->engine))) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, -EOPNOTSUPP,
				    "time by class needs the BPF tracker");
		return;
	}
	proto_msg_init(&d->reply, RTPLACE_MSG_CPU_TIMES_REPLY, m->hdr.request_id);
	r->total = engine_topo(d->engine)->ncpus;
	r->first = first;
	r->count = r->total - first < RTPLACE_CPUS_PAGE ? r->total - first : RTPLACE_CPUS_PAGE;
	r->sampled_ns = loop_now_ns();
	for (uint32_t i = 0; i < r->count && err == 0; i++)
		err = levels_source_cpu_times(engine_levels(d->engine), first + i, r->sampled_ns, r->cpus[i].ns);
	if (err < 0) {
		log_ratelimited(LOG_WARNING, "Failed to read the time by class of CPUs %u-%u: %s", first,
				first + r->count - 1, strerror(-err));
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, err, "time by class unreadable");
		return;
	}
	dispatch_send_reply(d, peer, m);
}

static void dispatch_status(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	const struct engine_counters *c = engine_counters_view(d->engine);
	const struct levels_source *levels = engine_levels(d->engine);
	const struct topo *t = engine_topo(d->engine);
	struct actors_stats as;
	struct rtplace_status_reply st;

	actors_get_stats(d->actors, &as);
	st = (struct rtplace_status_reply){
		.uptime_ms = loop_now_ms() - engine_start_ms(d->engine),
		.ncpus = t->ncpus,
		.nonline = engine_online_count(d->engine),
		.nnodes = t->nnodes,
		.nllcs = t->nllcs,
		.ncores = t->ncores,
		.flags = (levels_source_has_threads(levels) ? RTPLACE_STATUS_F_TRACKING : 0) |
			 (levels_source_live(levels) ? RTPLACE_STATUS_F_MOVES : 0),
		.queries = c->queries,
		.errors = c->errors,
		.claims_active = claims_count(engine_claims_view(d->engine)),
		.claims_total = c->claims_created,
		.clients = server_client_count(d->server),
		.clients_dropped = c->clients_dropped + server_refused_count(d->server),
		.moves = as.moved,
	};

	proto_set_string(st.version, sizeof(st.version), PACKAGE_VERSION);
	proto_msg_init(&d->reply, RTPLACE_MSG_STATUS_REPLY, m->hdr.request_id);
	d->reply.status_reply = st;
	dispatch_send_reply(d, peer, m);
}

static void dispatch_tracking(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	proto_msg_init(&d->reply, RTPLACE_MSG_TRACKING_REPLY, m->hdr.request_id);
	levels_source_describe(engine_levels(d->engine), &d->reply.tracking_reply);
	dispatch_send_reply(d, peer, m);
}

static void dispatch_host_info(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	const struct engine_host *host = engine_host(d->engine);
	struct rtplace_host_reply h = { 0 };

	if (host->rt_known) {
		h.rt_runtime_us = host->rt.runtime_us;
		h.rt_period_us = host->rt.period_us;
		h.flags = RTPLACE_HOST_F_RT_KNOWN;
	}
	proto_msg_init(&d->reply, RTPLACE_MSG_HOST_REPLY, m->hdr.request_id);
	d->reply.host_reply = h;
	dispatch_send_reply(d, peer, m);
}

static void dispatch_move(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	struct auth_peer *ap = dispatch_auth_peer(peer);
	struct rtplace_move mv = m->move;
	struct rtplace_move_reply mr;
	struct rtplace_reason reason;
	int r = -ENOMEM;

	if (dispatch_resolve_pid(d, peer, m, m->move.tid, true, &mv.tid) < 0)
		return;
	if (ap)
		r = moves_move(d->actors->moves, peer, ap, &mv, claims_levels(engine_claims(d->engine)), &mr, &reason);
	else
		reason_set(&reason, "out of memory");
	if (r < 0) {
		dispatch_reason_show(d, peer, &reason, mv.tid, m->move.tid);
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r, reason.text);
		return;
	}
	/* The thread as the client named it: its namespace may differ. */
	mr.tid = m->move.tid;
	proto_msg_init(&d->reply, RTPLACE_MSG_MOVE_REPLY, m->hdr.request_id);
	d->reply.move_reply = mr;
	dispatch_send_reply(d, peer, m);
}

static void dispatch_subscribe(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	struct auth_peer *ap = dispatch_auth_peer(peer);
	struct pidmap_view view;
	struct notify_sub_info info;
	struct rtplace_subscribe_reply sr;
	struct rtplace_reason reason;
	const struct auth_creds *creds;
	int r = ap ? auth_peer_creds(ap, engine_proc_root(d->engine), peer->pidfd, peer->pid, peer->uid, peer->gid, &creds) : -ENOMEM;

	if (r < 0) {
		reason_set(&reason, "cannot read the credentials of pid %d", (int)peer->pid);
	} else {
		/* Unprivileged subscribers see only records about their own threads. */
		reason.text[0] = '\0';
		dispatch_view(d, peer, &view);
		r = notify_subscribe_client(d->actors->notify, peer->id, peer->uid, auth_is_privileged(creds),
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
		proto_msg_init(&d->reply, RTPLACE_MSG_SUBSCRIBE_REPLY, m->hdr.request_id);
		d->reply.subscribe_reply = sr;
		if (dispatch_finish_reply(d, peer, m) < 0)
			return;
		r = server_send_fds(d->server, peer->id, &d->reply, d->reply.hdr.length, fds, 2);
		if (r == 0)
			return;
		reason_set(&reason, "cannot pass the ring: %s", strerror(-r));
	}
	dispatch_reason_show(d, peer, &reason, 0, 0);
	dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r, reason.text);
}

/* The peer is gone: its claims end with it, except those tied to a process
 * (rtplace-run's connection closes at exec; its claim lives with the
 * process). */
/* The peer is gone: its claims end with it, except those tied to a process
 * (rtplace-run's connection closes at exec; its claim lives with the
 * process). */
static void dispatch_disconnect(struct dispatch *d, struct server_peer *peer)
{
	free(peer->data);
	peer->data = NULL;
	engine_client_gone(d->engine, peer->id);
	notify_client_gone(d->actors->notify, peer->id);
	log_debug("client %u (pid %d) disconnected", peer->id, (int)peer->pid);
}

/* A QUERY, timed from its decoding to its reply queued. */
static void dispatch_query_timed(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	uint64_t start = loop_now_ns();

	dispatch_query(d, peer, m);
	histogram_observe(&engine_counters(d->engine)->query_time, loop_now_ns() - start);
}

typedef void dispatch_handler_fn(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m);

/* The handler of each request type, beside the codec's table of types
 * (protocol.c), indexed from RTPLACE_MSG_QUERY: the request types are
 * numbered in one block. */
static dispatch_handler_fn *const dispatch_handlers[] = {
	[RTPLACE_MSG_QUERY - RTPLACE_MSG_QUERY] = dispatch_query_timed,
	[RTPLACE_MSG_RELEASE - RTPLACE_MSG_QUERY] = dispatch_release,
	[RTPLACE_MSG_CPUS - RTPLACE_MSG_QUERY] = dispatch_cpus,
	[RTPLACE_MSG_STATUS - RTPLACE_MSG_QUERY] = dispatch_status,
	[RTPLACE_MSG_MOVE - RTPLACE_MSG_QUERY] = dispatch_move,
	[RTPLACE_MSG_SUBSCRIBE - RTPLACE_MSG_QUERY] = dispatch_subscribe,
	[RTPLACE_MSG_CPU_TIMES - RTPLACE_MSG_QUERY] = dispatch_cpu_times,
	[RTPLACE_MSG_TRACKING - RTPLACE_MSG_QUERY] = dispatch_tracking,
	[RTPLACE_MSG_HOST - RTPLACE_MSG_QUERY] = dispatch_host_info,
	[RTPLACE_MSG_LOCAL - RTPLACE_MSG_QUERY] = dispatch_local,
	[RTPLACE_MSG_CLAIM - RTPLACE_MSG_QUERY] = dispatch_claim_info,
};

/*
 * Whether the descriptors that came with m may be acted on: none beyond
 * what fit, and one pidfd only with a MOVE or a claim's owner. 0, or
 * -EINVAL once m is answered with an ERROR.
 */
static int dispatch_check_fds(struct dispatch *d, const struct server_peer *peer, const struct proto_msg *m)
{
	char reason[64];

	/* Acting on the descriptors that arrived would act on part of what
	 * the client meant. */
	if (peer->fds_truncated) {
		snprintf(reason, sizeof(reason), "more than %d descriptors with one message", SERVER_RECV_FDS_MAX);
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, -EINVAL, reason);
		return -EINVAL;
	}
	if (peer->nfds > 1 ||
	    (peer->nfds == 1 && !(m->hdr.type == RTPLACE_MSG_MOVE ||
				  (m->hdr.type == RTPLACE_MSG_QUERY && m->query.owner_pid)))) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, -EINVAL,
				    "one pidfd, only with a MOVE or a claim's owner process");
		return -EINVAL;
	}
	return 0;
}

/*
 * Decodes one packet and hands it to its handler. A packet that does not
 * decode is answered with an ERROR; one that is garbage also drops its
 * client (-EBADMSG).
 */
static int dispatch_one(struct dispatch *d, struct server_peer *peer, const void *msg, size_t len)
{
	struct proto_msg *m = &d->request;
	struct proto_error err;
	size_t i;
	int r;

	/* The topology may have been reloaded (hotplug): so may its nodes. */
	d->lim.nnodes = engine_topo(d->engine)->nnodes;
	r = proto_decode(msg, len, &d->lim, m, &err);

	d->reply_version = r == 0 ? m->hdr.version : err.version;
	if (r < 0) {
		log_debug("client %u (pid %d): %s", peer->id, (int)peer->pid, err.reason.text);
		dispatch_send_error(d, peer->id, err.request_id, err.type, r, err.reason.text);
		if (!proto_error_is_garbage(r))
			return 0;
		log_notice_ratelimited("client %u (pid %d uid %u) sent garbage (%s); dropping it", peer->id,
				       (int)peer->pid, (unsigned)peer->uid, err.reason.text);
		engine_counters(d->engine)->clients_dropped++;
		return r;
	}
	if (dispatch_check_fds(d, peer, m) < 0)
		return 0;
	/* proto_decode() accepts only the request types of the table. */
	i = (size_t)(m->hdr.type - RTPLACE_MSG_QUERY);
	if (m->hdr.type >= RTPLACE_MSG_QUERY && i < sizeof(dispatch_handlers) / sizeof(dispatch_handlers[0]) &&
	    dispatch_handlers[i])
		dispatch_handlers[i](d, peer, m);
	else
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, -EOPNOTSUPP, "unknown request");
	return 0;
}

int dispatch_request_cb(struct server *server, struct server_peer *peer, const void *msg, size_t len, void *ctx)
{
	struct dispatch *d = ctx;
	int r = 0;

	/* Events for a connection arise only after its first request: by
	 * then the server is known. */
	d->server = server;
	if (msg) {
		d->serving = true;
		r = dispatch_one(d, peer, msg, len);
		d->serving = false;
		dispatch_flush_events(d);
	} else {
		dispatch_disconnect(d, peer);
	}
	engine_publish(d->engine, false);
	return r;
}

void dispatch_server_limits(const struct config *cfg, struct server_limits *ret)
{
	ret->max_clients = cfg->limits.max_clients;
	ret->max_clients_per_user = cfg->limits.max_clients_per_user;
	ret->max_pending_bytes = DISPATCH_MAX_PENDING_BYTES;
	ret->max_message = RTPLACE_MSG_MAX;
}

int dispatch_new(struct engine *e, struct actors *a, struct dispatch **ret)
{
	struct dispatch *d = calloc(1, sizeof(*d));
	const struct topo *t = engine_topo(e);
	int r;

	if (!d)
		return -ENOMEM;
	d->engine = e;
	d->actors = a;
	d->lim = (struct proto_limits){
		.ncpus = t->ncpus,
		.nnodes = t->nnodes,
		.accept = PROTO_ACCEPT_REQUESTS,
	};
	r = engine_on_claim_end(e, dispatch_claim_ended_cb, d);
	if (r < 0) {
		free(d);
		return r;
	}
	*ret = d;
	return 0;
}

void dispatch_free(struct dispatch *d)
{
	if (!d)
		return;
	free(d->events);
	free(d);
}
