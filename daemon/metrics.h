/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metrics endpoint (DESIGN §16): `GET /metrics` over HTTP in the
 * Prometheus text format 0.0.4, served through libevent's evhttp on the
 * daemon's own event loop. The only evhttp user. It has no authentication:
 * rtplaced.conf(5) tells operators to bind it to loopback or a private
 * network.
 *
 * A scrape builds the whole page from counters the daemon keeps anyway
 * (engine_counters_view()), the cpupri map, where the levels come from (the
 * tracker, or the /proc sampler and its cost), the tracker's time by class and,
 * with [metrics] bpf-stats, the tracker programs' run statistics; it never
 * waits on anything. evhttp
 * reads and writes without blocking, so a slow or stuck scraper only holds
 * its own connection, which the idle timeout closes; and accepting pauses
 * before scrapers take the descriptors the socket clients need.
 *
 * Scrapes share the loop with the socket clients, so what a scrape costs
 * the loop is bounded: the page (a few lines per CPU) is built at most once
 * per METRICS_PAGE_MAX_AGE_MS and scrapes within that get a copy of it, so
 * a flood of scrapes costs one build per interval and a copy each.
 */
#ifndef RTPLACE_METRICS_H
#define RTPLACE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "conf.h"
#include "actors.h"
#include "engine.h"
#include "server.h"
#include "reason.h"
#include "rtkit.h"
#include "sampler.h"
#include "topo.h"
#include "tracker.h"

/* Bounds on what a scraper may send, and how long it may stay idle. */
#define METRICS_MAX_HEADERS_SIZE 8192
#define METRICS_MAX_BODY_SIZE 0
#define METRICS_TIMEOUT_S 10
/* How old a page a scrape may get; far below any scrape interval. */
#define METRICS_PAGE_MAX_AGE_MS 100

struct metrics;

/* Configuration reloads (SIGHUP), counted by main.c. */
struct metrics_reloads {
	uint64_t applied;
	uint64_t refused; /* the file had an error: the running configuration stayed */
	bool last_ok;     /* true at start, then whether the last reload applied */
};

struct metrics_opts {
	struct event_base *base;
	struct engine *engine;    /* the map, claims, host and counters */
	struct actors *actors;    /* moves, pushes and records */
	struct server *server;    /* the clients connected */
	struct rtkit *rtkit;      /* NULL without [rtkit] enable: no RealtimeKit series */
	const struct metrics_reloads *reloads;
};

/*
 * Listens on cfg->host:cfg->port (cfg->port must not be 0) and turns on
 * BPF statistics when cfg->bpf_stats and a tracker is given. Returns 0,
 * -EADDRINUSE or another -errno from binding (logged with the address), or
 * -ENOMEM. Failing to enable BPF statistics is logged and leaves the
 * endpoint running without the tracker series.
 */
int metrics_new(const struct metrics_opts *opts, const struct config_metrics *cfg, struct metrics **ret);

/* Closes the listener and every scraper's connection; accepts NULL. */
void metrics_free(struct metrics *m);

#endif
