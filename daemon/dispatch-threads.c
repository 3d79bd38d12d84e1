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

void dispatch_threads_move(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
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

void dispatch_threads_subscribe(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
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
