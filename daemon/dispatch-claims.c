/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch-handlers.h"
#include "log.h"
#include "loop.h"
#include "procfs.h"

const struct auth_creds *dispatch_claims_creds(struct dispatch *d, struct server_peer *peer,
						      struct auth_creds *uid_only)
{
	struct auth_peer *ap = dispatch_auth_peer(peer);
	const struct auth_creds *creds = NULL;

	*uid_only = (struct auth_creds){ .pid = peer->pid, .uid = peer->uid, .gid = peer->gid };
	if (!ap || auth_peer_creds(ap, engine_proc_root(d->engine), peer->pidfd, peer->pid, peer->uid, peer->gid,
				   &creds) < 0)
		creds = uid_only;
	return creds;
}

void dispatch_claims_terms(struct dispatch *d, struct server_peer *peer, const struct rtplace_query *q,
				  uint8_t *ret_level, uint64_t *ret_lease, struct rtplace_reason *note)
{
	struct auth_creds uid_only;
	const struct auth_creds *creds = dispatch_claims_creds(d, peer, &uid_only);

	auth_claim_terms(creds, engine_policy(d->engine), engine_config(d->engine), q->prio,
			 q->flags & RTPLACE_QUERY_F_EXCLUSIVE, q->lease_ms, ret_level, ret_lease, note);
}

/*
 * What a QUERY must pass before placement: MANAGE needs a source that
 * sees threads; a claim, room under the limits, the right to isolate when
 * it asks for that, and an owner process the requester may name
 * (*ret_owner, the daemon's pid of it, 0 for none).
 * 0, or -errno once the request is answered with an ERROR.
 */
static int dispatch_claims_admit(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m,
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
	/* Isolating CPUs is host configuration: only for those who could
	 * change it themselves (DESIGN §14). Asked if possible, the claim is
	 * made without (dispatch_claims_hold()). */
	if (r == 0 && q->flags & RTPLACE_QUERY_F_ISOLATE && !(q->flags & RTPLACE_QUERY_F_ISOLATE_TRY)) {
		struct auth_creds uid_only;

		r = auth_may_isolate(dispatch_claims_creds(d, peer, &uid_only), &why);
	}
	if (r < 0) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r, why.text);
		return r;
	}
	if (!(q->flags & RTPLACE_QUERY_F_CLAIM) || !q->owner_pid)
		return 0;
	return dispatch_claims_owner(d, peer, m, q->owner_pid, ret_owner);
}

int dispatch_claims_owner(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m, pid_t owner_pid,
			  pid_t *ret)
{
	int r = dispatch_resolve_pid(d, peer, m, owner_pid, false, ret);

	if (r < 0)
		return r;
	r = auth_may_own(engine_proc_root(d->engine), peer->pid, peer->uid, *ret);
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
static int dispatch_claims_hold(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m,
				pid_t owner, const struct placement_request *req, const struct placement_result *res)
{
	const struct rtplace_query *q = &m->query;
	struct rtplace_query_reply *qr = &d->reply.query_reply;
	struct claim tmpl = {
		.client = peer->id,
		.pid = owner,
		.uid = peer->uid,
		.isolated = q->flags & RTPLACE_QUERY_F_ISOLATE,
	};
	struct rtplace_reason note, why, refused = { "" };
	uint32_t claim_id;
	uint64_t lease;
	int r;

	dispatch_claims_terms(d, peer, q, &tmpl.level, &lease, &note);
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
	/* Asked if possible, isolation the requester may not have is none. */
	if (tmpl.isolated && q->flags & RTPLACE_QUERY_F_ISOLATE_TRY) {
		struct auth_creds uid_only;

		if (auth_may_isolate(dispatch_claims_creds(d, peer, &uid_only), &refused) < 0)
			tmpl.isolated = false;
	}
	/* The process that moves into an isolated partition: the owner, else
	 * the requester. */
	if (q->flags & RTPLACE_QUERY_F_ISOLATE_TRY)
		r = engine_claim_isolated_if_possible(d->engine, &tmpl, lease, owner ? owner : peer->pid, &claim_id,
						      &why);
	else
		r = engine_claim(d->engine, &tmpl, lease, owner ? owner : peer->pid, &claim_id, &why);
	if (r == 0 && refused.text[0])
		reason_set(&why, "not isolated: %s", refused.text);
	if (r < 0) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r, why.text);
		return r;
	}
	if (note.text[0]) {
		log_ratelimited(LOG_INFO, "claim %u for uid %u: %s", claim_id, (unsigned)peer->uid, note.text);
		proto_set_string(qr->reason, sizeof(qr->reason), note.text);
	}
	/* What isolation could not do, over a level note, which the log
	 * keeps. */
	if (why.text[0]) {
		log_ratelimited(LOG_NOTICE, "claim %u isolated in part: %s", claim_id, why.text);
		proto_set_string(qr->reason, sizeof(qr->reason), why.text);
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

static void dispatch_claims_answer(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	const struct rtplace_query *q = &m->query;
	struct rtplace_query_reply *qr = &d->reply.query_reply;
	struct placement_request req = dispatch_placement_request(q);
	struct placement_result *res = &d->placed;
	struct engine_counters *counters = engine_counters(d->engine);
	struct rtplace_reason why;
	pid_t owner;
	int r;

	counters->queries++;
	if (dispatch_claims_admit(d, peer, m, &owner) < 0)
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
	if (q->flags & RTPLACE_QUERY_F_CLAIM && res->n > 0 && dispatch_claims_hold(d, peer, m, owner, &req, res) < 0)
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

void dispatch_claims_release(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
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

/*
 * The claim with the lowest id at or above the request's from_id, told as
 * the client may see it: who holds it only to root and to its own uid,
 * the owner process by the client's number of it, and only when it lives
 * in the client's PID namespace (claims_at_or_after(): a lookup per
 * request while ids are dense).
 */
void dispatch_claims_info(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_claim_reply *r = &d->reply.claim_reply;
	const struct claim *cl;
	pid_t shown;

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
		if (cl->isolated)
			r->flags |= RTPLACE_CLAIM_F_ISOLATED;
		if (cl->expires_ms) {
			uint64_t left = cl->expires_ms > now ? cl->expires_ms - now : 0;

			r->flags |= RTPLACE_CLAIM_F_LEASE;
			r->lease_left_ms = left < UINT32_MAX ? (uint32_t)left : UINT32_MAX - 1;
		}
		shown = dispatch_claims_holder(d, peer, cl, r->owner_comm, sizeof(r->owner_comm));
		if (shown < 0) {
			r->flags |= RTPLACE_CLAIM_F_OTHER_USER;
		} else {
			r->flags |= RTPLACE_CLAIM_F_UID;
			r->owner_uid = cl->uid;
		}
		if (shown > 0) {
			r->flags |= RTPLACE_CLAIM_F_PID;
			r->owner_pid = (int32_t)shown;
		}
	}
	dispatch_send_reply(d, peer, m);
}

pid_t dispatch_claims_holder(const struct dispatch *d, const struct server_peer *peer, const struct claim *cl,
			     char *comm, size_t len)
{
	struct pidmap_view view;
	pid_t shown = 0;

	if (!auth_may_see_owner(peer->uid, cl->uid))
		return -1;
	if (cl->pid) {
		dispatch_view(d, peer, &view);
		if (pidmap_show(&view, cl->pid, &shown) < 0)
			shown = 0;
	}
	if (shown > 0)
		dispatch_comm(d, cl->pid, comm, len);
	return shown;
}

/* A QUERY, timed from its decoding to its reply queued. */
void dispatch_claims_query(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	uint64_t start = loop_now_ns();

	dispatch_claims_answer(d, peer, m);
	histogram_observe(&engine_counters(d->engine)->query_time, loop_now_ns() - start);
}
