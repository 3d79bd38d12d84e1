/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What rtplaced answers: the request handlers behind the socket. Decodes
 * each packet with the shared codec, answers QUERY with placement over the
 * live map and the claim table (claims.c owns their lifetime), answers
 * every request with exactly its own reply before any event it causes, and
 * serves the CPUS and STATUS snapshots. It acts through the record rings
 * and subscriptions (notify.c), MOVE requests (moves.c), the push policy
 * (push.c) and the managed processes (manage.c), which main.c builds over
 * what this file shares and wires to each other. server.c carries the
 * packets; this file gives them meaning.
 */
#ifndef RTPLACE_DISPATCH_H
#define RTPLACE_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>

#include <event2/event.h>

#include "auth.h"
#include "claims.h"
#include "conf.h"
#include "cpupri.h"
#include "histogram.h"
#include "manage.h"
#include "moves.h"
#include "notify.h"
#include "placement.h"
#include "procfs.h"
#include "push.h"
#include "reason.h"
#include "sysfs.h"
#include "sampler.h"
#include "server.h"
#include "topo.h"
#include "tracker.h"

struct dispatch;

struct dispatch_opts {
	struct event_base *base;
	const struct topo *topo;
	const void *map;      /* the cpupri map, read-only */
	size_t map_size;
	int map_fd;           /* the map for local readers, mappable read-only only; -1 for none (kept open) */
	struct tracker *tracker; /* the live BPF tracker; NULL when simulating or sampling */
	struct sampler *sampler; /* the map's writer without BPF; NULL with the tracker or simulating */
	uint32_t sample_interval_ms; /* the sampler's period */
	const struct rtplace_reason *untracked; /* with the sampler: why not the tracker; outlives the dispatch */
	const char *proc_root; /* "/proc", or a test's own */
	const struct irqnoise *irqnoise; /* the interrupt shares; NULL when simulating */
};

int dispatch_new(const struct dispatch_opts *opts, const struct config *cfg, struct dispatch **ret);
void dispatch_free(struct dispatch *s);

/* The server to reply through; set once the socket exists. */
void dispatch_attach_server(struct dispatch *s, struct server *server);

/* What the modules the handlers act through read of the dispatch: all of
 * it kept current by dispatch_apply_config() (the placement context is
 * rebuilt on reload: the pointer to it stays current), valid until
 * dispatch_free(). */
struct dispatch_shared {
	const struct cpupri_view *view;         /* the live map */
	const struct placement_config *pcfg;    /* its managed CPUs */
	struct placement_ctx *const *placement; /* the context answers use */
	const struct auth_policy *policy;       /* [moves]: what moves and claims may do */
	struct claims *claims;
};

void dispatch_get_shared(struct dispatch *s, struct dispatch_shared *ret);

/* The modules the handlers act through, built over dispatch_get_shared()
 * before the first request; their builder frees them, before
 * dispatch_free(). */
struct dispatch_moves {
	struct notify *notify;
	struct moves *moves;
	struct push *push;
	struct manage *manage;
};

void dispatch_attach_moves(struct dispatch *s, const struct dispatch_moves *m);

/* The server's dispatch callback (ctx is the struct dispatch). */
int dispatch_request_cb(struct server *server, struct server_peer *peer, const void *msg, size_t len,
			void *ctx);

/* Applies a reloaded configuration: placement rules, leases, limits. */
void dispatch_apply_config(struct dispatch *s, const struct config *cfg);

/* The host's RT configuration (DESIGN §20), read by main.c at start,
 * reload and hotplug. */
struct dispatch_host {
	struct sysfs_isolation iso;
	struct procfs_rt_throttle rt;
	bool rt_known; /* rt was read */
};

/* Takes the host's configuration: placement follows it from the next
 * answer. */
void dispatch_set_host(struct dispatch *s, const struct dispatch_host *h);

const struct dispatch_host *dispatch_get_host(const struct dispatch *s);

/* The interrupt shares were sampled again: under [placement] irq-tiebreak
 * the next answer ranks the managed CPUs by them (irqnoise_noisy()). */
void dispatch_irqnoise_sampled(struct dispatch *s);

/* CPU cpu went offline: every claim covering it ends, with a CLAIM_ENDED
 * event (REVOKED) to its connection and a claim-revoked record to its
 * uid's subscribers. */
void dispatch_revoke_cpu(struct dispatch *s, uint32_t cpu);

/* Moves and pushes together (moves.c, push.c, manage.c, notify.c). */
struct dispatch_move_stats {
	uint64_t moved;        /* threads moved by MOVE requests and pushes */
	uint64_t failed;       /* MOVE requests refused or failed, pushes that failed */
	uint64_t collisions;   /* tracker collisions on managed threads */
	uint64_t records_lost; /* records that found a subscriber's ring full */
};

/* Why claims ended, as the metrics count them. */
enum dispatch_claim_end {
	DISPATCH_END_RELEASED,     /* RELEASE, or its RealtimeKit thread ended */
	DISPATCH_END_DISCONNECTED, /* a connection-bound claim's connection closed */
	DISPATCH_END_EXPIRED,
	DISPATCH_END_OWNER_EXITED,
	DISPATCH_END_REVOKED,      /* a CPU went offline */
	DISPATCH_END_COUNT,
};

/* The limits a claim can be refused at, as the metrics count them. */
enum dispatch_claim_limit {
	DISPATCH_LIMIT_PER_CLIENT, /* [limits] max-claims-per-client */
	DISPATCH_LIMIT_PER_USER,   /* [limits] max-claims-per-user */
	DISPATCH_LIMIT_USERS,      /* [limits] max-claims */
	DISPATCH_LIMIT_TABLE,      /* the table's CLAIMS_MAX */
	DISPATCH_LIMIT_COUNT,
};

struct dispatch_stats {
	uint64_t queries_placed;  /* answered with CPUs */
	uint64_t queries_empty;   /* answered without a CPU */
	uint64_t queries_refused; /* answered with an error */
	struct dispatch_move_stats moves;
	unsigned claims_active;
	unsigned claimed_cpus;    /* CPUs some claim holds */
	unsigned clients;         /* connected now */
	uint64_t claims_created;
	uint64_t claims_ended[DISPATCH_END_COUNT];
	uint64_t claims_refused[DISPATCH_LIMIT_COUNT];
	/* The time from a QUERY's decoding to its reply queued, of every QUERY
	 * decoded (refused ones too). */
	const struct histogram *query_time;
};

/* The counters and gauges the metrics endpoint exports. */
void dispatch_get_stats(const struct dispatch *s, struct dispatch_stats *ret);

/* Per CPU, the level its highest claim holds it at; 0 when unclaimed. */
const uint8_t *dispatch_claimed_levels(const struct dispatch *s);

/* Server limits that follow from a configuration. */
void dispatch_server_limits(const struct config *cfg, struct server_limits *ret);

/*
 * A claim on one CPU of allowed for a thread granted RT outside the socket
 * (rtkit.c): the best CPU below level (moves_pick()), owner-bound to
 * process pid of uid and kept in the state file like any owner-bound
 * claim, so it ends when the process does. uid's claim limits apply. 0
 * with the CPU and claim id; -ENOENT when no CPU of allowed is below
 * level, -ENODEV when allowed holds no managed CPU, -EOPNOTSUPP in
 * simulation, -EDQUOT/-EUSERS/-ENOSPC at a limit, -ESRCH for a gone
 * process, -ENOMEM or the state file's -errno; reason says which.
 */
int dispatch_claim_cpu(struct dispatch *s, pid_t pid, uid_t uid, uint32_t level, const struct rtplace_cpumask *allowed,
		       int *ret_cpu, uint32_t *ret_id, struct rtplace_reason *reason);

/* Ends claim id made by dispatch_claim_cpu() (its thread is gone or was
 * reset); one that has ended already is no error. */
void dispatch_end_claim(struct dispatch *s, uint32_t id);

#endif
