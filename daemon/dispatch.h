/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What rtplaced answers: one request -> one handler -> one reply. Decodes
 * each packet with the shared codec, finds the request's handler in a
 * table beside the protocol's own table of types, and sends exactly its
 * reply before any event it causes (a CLAIM_ENDED queued while it is
 * served). The handlers (dispatch-handlers.h: one file per family of
 * requests) act through the engine (engine.h), which owns every piece of
 * state, and the actors (actors.h); the dispatch keeps only what a
 * request needs while it is served. server.c carries the packets; these
 * files give them meaning.
 */
#ifndef RTPLACE_DISPATCH_H
#define RTPLACE_DISPATCH_H

#include <stddef.h>

#include "actors.h"
#include "conf.h"
#include "engine.h"
#include "server.h"

struct dispatch;

/*
 * What a RELOAD request runs (main.c's reload, SIGHUP's too): reads the
 * configuration file again and applies it whole, or keeps the running one
 * and returns -errno with why.
 */
typedef int dispatch_reload_fn(void *ctx, struct rtplace_reason *reason);

/* Handlers over e and a, both outliving the dispatch; RELOAD runs
 * reload(reload_ctx), and is refused when reload is NULL. */
int dispatch_new(struct engine *e, struct actors *a, dispatch_reload_fn *reload, void *reload_ctx,
		 struct dispatch **ret);
void dispatch_free(struct dispatch *d);

/* The server's dispatch callback (ctx is the struct dispatch). */
int dispatch_request_cb(struct server *server, struct server_peer *peer, const void *msg, size_t len, void *ctx);

/* Server limits that follow from a configuration. */
void dispatch_server_limits(const struct config *cfg, struct server_limits *ret);

#endif
