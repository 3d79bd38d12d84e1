/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "dispatch.h"
#include "dispatch-handlers.h"
#include "log.h"
#include "loop.h"
#include "pidmap.h"
#include "procfs.h"
#include "protocol.h"

static void dispatch_send(struct dispatch *d, uint32_t client, const struct proto_msg *m)
{
	server_send(d->server, client, m, m->hdr.length);
}

void dispatch_send_error(struct dispatch *d, uint32_t client, uint32_t request_id, uint16_t type, int error,
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
int dispatch_finish_reply(struct dispatch *d, const struct server_peer *peer, const struct proto_msg *m)
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
void dispatch_send_reply(struct dispatch *d, const struct server_peer *peer, const struct proto_msg *m)
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

/* The connection's requester credentials, kept for its life
 * (auth_peer_creds()): made at its first claim or move, freed when it
 * ends. NULL without memory. */
struct auth_peer *dispatch_auth_peer(struct server_peer *peer)
{
	if (!peer->data)
		peer->data = calloc(1, sizeof(struct auth_peer));
	return peer->data;
}

/* How peer sees the daemon's pids (pidmap.h). */
void dispatch_view(const struct dispatch *d, const struct server_peer *peer, struct pidmap_view *ret)
{
	const struct pidmap_peer pp = { .same_pidns = peer->same_pidns, .level = peer->pidns_level };

	pidmap_view_of(engine_proc_root(d->engine), &pp, peer->pid, peer->pidfd, ret);
}

/* A reason worded with the daemon's pids, for peer: by its own numbers
 * when it lives in another PID namespace (known: the daemon's number of
 * the thread it named as known_as). */
void dispatch_reason_show(const struct dispatch *d, const struct server_peer *peer, struct rtplace_reason *reason,
			  pid_t known, pid_t known_as)
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
int dispatch_resolve_pid(struct dispatch *d, const struct server_peer *peer, const struct proto_msg *m, pid_t named,
			 bool thread, pid_t *ret)
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

void dispatch_comm(const struct dispatch *d, int32_t pid, char *buf, size_t len)
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

/* RELOAD: the daemon's verdict on its configuration file, for root (the
 * unit's ExecReload=, so that `systemctl reload` fails when the daemon
 * keeps the running configuration). Only root: anyone else could have
 * the daemon read a file they may have just broken, at any rate. */
static void dispatch_reload(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_reason reason = { "" };
	int r = -EPERM;

	if (peer->uid != 0)
		reason_set(&reason, "only root may reload the configuration (uid %u asked)", (unsigned)peer->uid);
	else if (!d->reload)
		r = -EOPNOTSUPP;
	else
		r = d->reload(d->reload_ctx, &reason);
	if (r < 0) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r,
				    reason.text[0] ? reason.text : strerror(-r));
		return;
	}
	proto_msg_init(&d->reply, RTPLACE_MSG_RELOAD_REPLY, m->hdr.request_id);
	dispatch_send_reply(d, peer, m);
}

/* The handler of each request type, beside the codec's table of types
 * (protocol.c), indexed from RTPLACE_MSG_QUERY: the request types are
 * numbered in one block. */
static dispatch_handler_fn *const dispatch_handlers[] = {
	[RTPLACE_MSG_QUERY - RTPLACE_MSG_QUERY] = dispatch_claims_query,
	[RTPLACE_MSG_RELEASE - RTPLACE_MSG_QUERY] = dispatch_claims_release,
	[RTPLACE_MSG_CPUS - RTPLACE_MSG_QUERY] = dispatch_views_cpus,
	[RTPLACE_MSG_STATUS - RTPLACE_MSG_QUERY] = dispatch_views_status,
	[RTPLACE_MSG_MOVE - RTPLACE_MSG_QUERY] = dispatch_threads_move,
	[RTPLACE_MSG_SUBSCRIBE - RTPLACE_MSG_QUERY] = dispatch_threads_subscribe,
	[RTPLACE_MSG_CPU_TIMES - RTPLACE_MSG_QUERY] = dispatch_views_cpu_times,
	[RTPLACE_MSG_TRACKING - RTPLACE_MSG_QUERY] = dispatch_views_tracking,
	[RTPLACE_MSG_HOST - RTPLACE_MSG_QUERY] = dispatch_views_host,
	[RTPLACE_MSG_LOCAL - RTPLACE_MSG_QUERY] = dispatch_views_local,
	[RTPLACE_MSG_CLAIM - RTPLACE_MSG_QUERY] = dispatch_claims_info,
	[RTPLACE_MSG_EXPLAIN - RTPLACE_MSG_QUERY] = dispatch_explain,
	[RTPLACE_MSG_KERNEL - RTPLACE_MSG_QUERY] = dispatch_views_kernel,
	[RTPLACE_MSG_RELOAD - RTPLACE_MSG_QUERY] = dispatch_reload,
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
				  (m->hdr.type == RTPLACE_MSG_QUERY && m->query.owner_pid) ||
				  (m->hdr.type == RTPLACE_MSG_EXPLAIN && m->explain.query.owner_pid)))) {
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

	/* The topology may have been reloaded (hotplug): so may its nodes.
	 * A claim may ask for isolation only where the engine isolates. */
	d->lim.nnodes = engine_topo(d->engine)->nnodes;
	d->lim.isolate = engine_isolates(d->engine);
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

int dispatch_new(struct engine *e, struct actors *a, dispatch_reload_fn *reload, void *reload_ctx,
		 struct dispatch **ret)
{
	struct dispatch *d = calloc(1, sizeof(*d));
	const struct topo *t = engine_topo(e);
	int r;

	if (!d)
		return -ENOMEM;
	d->engine = e;
	d->actors = a;
	d->reload = reload;
	d->reload_ctx = reload_ctx;
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
