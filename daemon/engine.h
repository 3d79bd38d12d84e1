/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The engine: the one owner of rtplaced's state (DESIGN §8). It holds the
 * view of the cpupri map its levels source writes, the placement rules and
 * the context answers are computed with (one rotor for every answer), the
 * claims and their journal (claims-state.c), what local readers map
 * (snapshot.c), the host's RT settings and the statistics. Every front end
 * acts through it, one path per operation:
 *   pick       one CPU for a thread at a level (moves, pushes, RealtimeKit)
 *   place      a QUERY's answer
 *   claim      quota -> owner -> add -> journal -> publish, one function
 *   end        a claim released or its thread gone
 *   configure  a reloaded configuration, the host read again
 *   stats      what STATUS and the metrics export
 * Claim ends it finds itself (lease, owner exit, hotplug) are told to the
 * listeners its users register, after it counted, logged and journaled
 * them. It never calls up into a front end any other way: dispatch.c,
 * rtkit.c, metrics.c and the actors (actors.h) are peers above it.
 *
 * Single-threaded: everything runs on the daemon's loop.
 */
#ifndef RTPLACE_ENGINE_H
#define RTPLACE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "auth.h"
#include "claims.h"
#include "conf.h"
#include "cpupri.h"
#include "histogram.h"
#include "irqnoise.h"
#include "kernel-env.h"
#include "levels-source.h"
#include "placement.h"
#include "procfs.h"
#include "reason.h"
#include "snapshot.h"
#include "sysfs.h"

struct engine;

struct engine_opts {
	struct event_base *base;
	struct levels_source *levels;
	const char *proc_root;           /* "/proc", or a test's own */
	const char *host_root;           /* NULL: the host's own /sys and /proc */
	const struct irqnoise *irqnoise; /* NULL when simulating */
};

/* Builds the engine over its levels source, follows the source's hotplug
 * reports, and takes back the claims tied to processes that outlived the
 * last daemon (DESIGN §14) from the journal beside the socket: read, not
 * written. */
int engine_new(const struct engine_opts *opts, const struct config *cfg, struct engine **ret);
void engine_free(struct engine *e);

/* Opens the claims journal and writes it anew from the table. Called once
 * the socket is the daemon's: nothing is written before, and no claim is
 * acknowledged before (engine_claim() refuses without the journal). */
int engine_open_journal(struct engine *e);

/* The host's RT configuration (DESIGN §20): read at start, reload and
 * hotplug (the kernel's environment, kernel-env.h: at start, reload and
 * a hotplug that changed the topology). */
struct engine_host {
	struct sysfs_isolation iso;
	struct procfs_rt_throttle rt;
	bool rt_known; /* rt was read */
};

/* Reads the host's RT configuration again; placement follows it from the
 * next answer. Garbage keeps what was read before, and says so. */
void engine_read_host(struct engine *e);
const struct engine_host *engine_host(const struct engine *e);
/* The kernel's RT environment (kernel-env.h), read with the host. */
const struct kernel_env *engine_kernel_env(const struct engine *e);
/* Reads sched_ext again (kernel_env_refresh()). */
void engine_refresh_kernel_env(struct engine *e);

/*
 * Whether cfg may replace the running configuration, as only the running
 * daemon can tell: 0, or -EBUSY with why when a live claim holds a CPU
 * that placement has now and cfg would take from it ([placement]
 * housekeeping-cpus naming it). A reload refuses such a file whole
 * rather than leave a claim on a CPU its rules no longer give.
 */
int engine_check_config(const struct engine *e, const struct config *cfg, struct rtplace_reason *reason);

/* Applies a reloaded configuration: placement rules, leases, limits. */
void engine_configure(struct engine *e, const struct config *cfg);

/* The interrupt shares were sampled again: under [placement] irq-tiebreak
 * the next answer ranks the managed CPUs by them. */
void engine_irqnoise_sampled(struct engine *e);

/* What the peers read, valid until engine_free(); the configuration,
 * placement rules and policy follow engine_configure(). */
const struct config *engine_config(const struct engine *e);
const struct topo *engine_topo(const struct engine *e);
const struct cpupri_view *engine_view(const struct engine *e);
const struct placement_config *engine_placement(const struct engine *e);
const struct rtplace_cpumask *engine_housekeeping(const struct engine *e);
const struct auth_policy *engine_policy(const struct engine *e);
const struct levels_source *engine_levels(const struct engine *e);
const char *engine_proc_root(const struct engine *e);
const struct irqnoise *engine_irqnoise(const struct engine *e);
struct claims *engine_claims(struct engine *e);
const struct claims *engine_claims_view(const struct engine *e);
/* LOCAL: the descriptors local readers map (snapshot_offer()), the
 * levels source told that someone reads its map. 0 or -errno. */
int engine_offer_local(struct engine *e, struct rtplace_local_reply *ret, int fds[2]);

/* Claims whose lease ran out end now (before an answer counts them). */
void engine_expire_due(struct engine *e);

/*
 * A QUERY's answer: req over the live map and the claims, with the
 * engine's rotor. 0 or placement's -errno, why saying what decided.
 */
int engine_place(struct engine *e, const struct placement_request *req, struct rtplace_reason *why,
		 struct placement_result *ret);

/*
 * EXPLAIN's dry run: engine_place() on a copy of the rotor, so that the
 * next QUERY gets this very answer (a dry run moves nothing), and the
 * claimed levels it counted (t->ncpus entries, 0 unclaimed), valid until
 * the claims change.
 */
int engine_place_dry(struct engine *e, const struct placement_request *req, struct rtplace_reason *why,
		     struct placement_result *ret, const uint8_t **ret_claimed);

/*
 * The best CPU of allowed below level for one thread, nearest near (-1 for
 * none), counting claims as claimed says (NULL: every claim), with the
 * rotor answers share. placement_ctx_pick()'s returns; placement_pick_reason()
 * words a failure.
 */
int engine_pick(struct engine *e, const struct rtplace_cpumask *allowed, int near, uint32_t level,
		const uint8_t *claimed, int *ret_cpu);

/* The limits a claim can be refused at, as the metrics count them. */
enum engine_claim_limit {
	ENGINE_LIMIT_PER_CLIENT, /* [limits] max-claims-per-client */
	ENGINE_LIMIT_PER_USER,   /* [limits] max-claims-per-user */
	ENGINE_LIMIT_USERS,      /* [limits] max-claims */
	ENGINE_LIMIT_TABLE,      /* the table's CLAIMS_MAX */
	ENGINE_LIMIT_COUNT,
};

/*
 * Whether uid may make one more claim through connection client (0 for
 * none): its connection's share, its uid's, the users' part, the table's
 * room. 0, or -EDQUOT/-EUSERS/-ENOSPC with why naming the key.
 */
int engine_claim_admit(struct engine *e, uint32_t client, uid_t uid, struct rtplace_reason *why);

/*
 * Makes claim tmpl (its CPUs, level, owner pid, uid and connection, and
 * whether its CPUs are isolated) for lease_ms (0 for none): the owner's
 * start time read, added to the table, journaled, its CPUs isolated with
 * process claimant moved into their partition, then published to
 * subscribers. Admit it first. 0 with its id, reason holding a note of
 * what isolation could not do ("" for none); -ESRCH when the owner is
 * gone, -ENOMEM, the journal's -errno (never acknowledged unless durable)
 * or isolation's refusal (isolation_claim(); -EOPNOTSUPP when the daemon
 * isolates nothing), the claim withdrawn, reason saying which.
 */
int engine_claim(struct engine *e, const struct claim *tmpl, uint64_t lease_ms, pid_t claimant, uint32_t *ret_id,
		 struct rtplace_reason *reason);

/* engine_claim(), but where isolation is refused the claim is made
 * without, reason saying "not isolated: " and why. */
int engine_claim_isolated_if_possible(struct engine *e, const struct claim *tmpl, uint64_t lease_ms,
				      pid_t claimant, uint32_t *ret_id, struct rtplace_reason *reason);

/* Whether claims may ask for isolation: [isolation] turns something on
 * and its journal is open. */
bool engine_isolates(const struct engine *e);

/* The CPUs isolated for claims now. */
void engine_isolated_cpus(const struct engine *e, struct rtplace_cpumask *ret);

/* The watcher of every claim made and ended (notify.c's records): the
 * engine's own undoing of isolation runs first. */
void engine_watch_life(struct engine *e, claims_life_fn *fn, void *ctx);

/*
 * Told when a claim's CPUs were isolated (type RTPLACE_RECORD_ISOLATED,
 * detail its RTPLACE_ISOLATED_* bits) and when they came back
 * (RTPLACE_RECORD_ISOLATION_RELEASED, detail RTPLACE_ISOLATION_END_*):
 * after the claim's CLAIM_CREATED, before its end's record.
 */
typedef void engine_isolation_fn(const struct claim *cl, uint8_t type, uint8_t detail, void *ctx);

/* The watcher of isolation (notify.c's records). */
void engine_watch_isolation(struct engine *e, engine_isolation_fn *fn, void *ctx);

/* Gives every isolated claim's CPUs back, telling the watcher (the
 * daemon stops; its claims stay journaled, to be isolated again by the
 * next start). Call while subscribers are still connected. */
void engine_unisolate_all(struct engine *e);

/*
 * A claim on one CPU of allowed for a thread granted RT outside the socket
 * (rtkit.c): engine_pick() below level, owner-bound to process pid of uid,
 * so it ends when the process does. uid's claim limits apply. 0 with the
 * CPU and claim id; -ENOENT when no CPU of allowed is below level, -ENODEV
 * when allowed holds no managed CPU, -EOPNOTSUPP in simulation, as
 * engine_claim_admit() and engine_claim() otherwise; reason says which.
 */
int engine_claim_cpu(struct engine *e, pid_t pid, uid_t uid, uint32_t level, const struct rtplace_cpumask *allowed,
		     int *ret_cpu, uint32_t *ret_id, struct rtplace_reason *reason);

/* Why claims ended, as the metrics count them. */
enum engine_claim_end {
	ENGINE_END_RELEASED,     /* RELEASE, or its RealtimeKit thread ended */
	ENGINE_END_DISCONNECTED, /* a connection-bound claim's connection closed */
	ENGINE_END_EXPIRED,
	ENGINE_END_OWNER_EXITED,
	ENGINE_END_REVOKED,      /* a CPU went offline */
	ENGINE_END_COUNT,
};

/* Ends claim id (RELEASE, a RealtimeKit thread gone or reset); one that
 * has ended already is no error. 0, or -ENOENT. */
int engine_end_claim(struct engine *e, uint32_t id);

/* Connection client closed: its connection-bound claims end. */
void engine_client_gone(struct engine *e, uint32_t client);

/* A claim that ended on its own or was taken back (lease, owner exit, a
 * CPU offline): why is RTPLACE_CLAIM_ENDED_*. Called after the engine
 * logged and journaled it, before the table drops it. */
typedef void engine_claim_ended_fn(const struct claim *cl, uint32_t why, void *ctx);

/* Registers a listener of such ends (at most ENGINE_LISTENERS_MAX). */
#define ENGINE_LISTENERS_MAX 4
int engine_on_claim_end(struct engine *e, engine_claim_ended_fn *fn, void *ctx);

/* Publishes the snapshot local readers map, when claims changed since the
 * last (force: whatever changed). */
void engine_publish(struct engine *e, bool force);

/* What the engine counts; the request counters are the front ends' to
 * increment, through engine_counters(). */
struct engine_counters {
	uint64_t queries;         /* QUERY requests decoded */
	uint64_t queries_placed;  /* answered with CPUs */
	uint64_t queries_empty;   /* answered without a CPU */
	uint64_t errors;          /* requests answered with an error */
	uint64_t clients_dropped; /* connections dropped for garbage */
	uint64_t claims_created;
	uint64_t claims_ended[ENGINE_END_COUNT];
	uint64_t claims_refused[ENGINE_LIMIT_COUNT];
	/* The time from a QUERY's decoding to its reply queued, of every
	 * QUERY decoded (refused ones too). */
	struct histogram query_time;
};

struct engine_counters *engine_counters(struct engine *e);
const struct engine_counters *engine_counters_view(const struct engine *e);

/* When the engine started (loop_now_ms()). */
uint64_t engine_start_ms(const struct engine *e);

/* Managed CPUs the map does not show offline (hotplug). */
uint32_t engine_online_count(const struct engine *e);

/* CPUs some claim holds. */
unsigned engine_claimed_cpus(const struct engine *e);

#endif
