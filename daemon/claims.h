/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Claims (DESIGN §6, §14): CPUs handed out by an answer count as being at
 * the claimer's level until the claim is released, its lease runs out, its
 * connection closes (connection-bound claims), or the process it was made
 * for exits (owner-bound claims). This file owns the claims' whole
 * lifetime, so nothing else keeps a list of them (claims-state.c keeps
 * the owner-bound ones across a crash):
 *
 * - the table (pure): claims indexed by id, by owner pid, by connection and
 *   counted by uid, leases in a min-heap, and per CPU a count of claims at
 *   each level, so that adding a claim, ending one and an owner's exit cost
 *   the same with 10 or 10,000 claims. The caller passes the time, so the
 *   table is tested without clocks or sockets;
 * - the loop edge (claims_attach()): a pidfd per owner process and one
 *   expiry timer on a libevent base; claims that end on their own (lease,
 *   owner exit) or are revoked are reported to one callback.
 *
 * The table keeps, per CPU, the highest level any live claim holds there
 * (claims_levels()): the array placement_choose() reads, and a stamp that
 * is new after every change of it (claims_stamped()), so a placement
 * context knows its copy of the levels is current without comparing them.
 */
#ifndef RTPLACE_CLAIMS_H
#define RTPLACE_CLAIMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "cpuset.h"
#include "placement.h"
#include "reason.h"

/* Bounds the table; the per-user and per-client limits are far lower. */
#define CLAIMS_MAX 65536

struct claim {
	uint32_t id;
	uint32_t client;     /* server's id of the connection that made it; 0 after a restart */
	int32_t pid;         /* process the claim lives with, 0 for none */
	uint64_t pid_start;  /* that process's start time (procfs_stat.start_time) */
	uint32_t uid;        /* of the client that made it: who may release it, see its records */
	uint8_t level;       /* level the CPUs count as: normal .. dl */
	uint64_t expires_ms; /* monotonic ms, 0 = no lease */
	struct rtplace_cpumask cpus;
	struct rtplace_cpumask managed; /* MANAGE claims: the CPUs its owner's threads may be pushed to; else empty */
	bool isolated;       /* its CPUs are isolated from the rest of the machine ([isolation]) */
};

struct claims;

/* A table for CPU ids below ncpus. 0 or -ENOMEM. */
int claims_new(uint32_t ncpus, struct claims **ret);
/* Frees the table, its pidfds and its timer. Accepts NULL. */
void claims_free(struct claims *c);

/*
 * Records a claim made like tmpl (client, pid, pid_start, uid, level,
 * cpus; id and expires_ms are ignored). lease_ms 0 means no lease. Returns
 * 0 and the new id; -EINVAL for an empty set or a level below normal;
 * -ENOSPC when the table is full; -ESRCH when attached and the owner pid is
 * gone already; -EMFILE when attached and the owner's pidfd, for a uid
 * other than root, would be one of the descriptors kept for root
 * (quota_fd_reserve()); -ENOMEM. The claim is pending: its holder records it
 * (the state file) and then confirms it with claims_made(), or takes it
 * back with claims_withdraw().
 */
int claims_add(struct claims *c, const struct claim *tmpl, uint64_t now_ms, uint64_t lease_ms, uint32_t *ret_id);

/* Claim id, just added, is made: the life watcher is told (CLAIMS_LIFE_CREATED). */
void claims_made(struct claims *c, uint32_t id);

/* Takes back claim id, added but never made (its holder could not record
 * it): no life was told, so neither is its end. 0 or -ENOENT. */
int claims_withdraw(struct claims *c, uint32_t id);

/* The claim with id, or NULL. */
const struct claim *claims_find(const struct claims *c, uint32_t id);

/* Releases claim id (who may is auth_may_release()'s to say). 0 or -ENOENT
 * (no such claim). */
int claims_release(struct claims *c, uint32_t id);

/* The connection is gone: drops its connection-bound claims (owner-bound
 * ones live with their process). Returns how many. */
unsigned claims_drop_client(struct claims *c, uint32_t client);

/* Why a claim ended on its own or was taken back (the wire's codes). */
typedef void claims_ended_fn(const struct claim *cl, uint32_t why, void *ctx);

/* What a claims_life_fn is told besides the wire's RTPLACE_CLAIM_ENDED_*
 * codes: a claim was made, or its holder ended it (codes never sent in a
 * CLAIM_ENDED event: its holder knows). */
#define CLAIMS_LIFE_CREATED 0u
#define CLAIMS_LIFE_RELEASED 0x100u     /* claims_release(): by its uid or root */
#define CLAIMS_LIFE_DISCONNECTED 0x101u /* claims_drop_client(): its connection closed */

/*
 * Every claim made (told by claims_made(), once its holder recorded it)
 * and every end of a claim, whatever its cause (told before it leaves),
 * with cl as it is: what subscribers' records follow. Restored claims were
 * made before and are not told, nor are withdrawn ones. May be NULL.
 */
typedef void claims_life_fn(const struct claim *cl, uint32_t what, void *ctx);

/* Reports the table's claims' lives to fn from now on. */
void claims_watch_life(struct claims *c, claims_life_fn *fn, void *ctx);

/* Drops every claim tied to pid (its owner exited), calling ended() for
 * each first (may be NULL). Returns how many. */
unsigned claims_drop_pid(struct claims *c, int32_t pid, claims_ended_fn *ended, void *ctx);

/*
 * Drops the claims whose lease ended at or before now_ms, calling ended()
 * (may be NULL) for each first. Returns the earliest remaining expiry, or 0
 * when no claim has a lease.
 */
uint64_t claims_expire(struct claims *c, uint64_t now_ms, claims_ended_fn *ended, void *ctx);

/* claims_expire() at the now_ms() of claims_attach(), read only when a
 * claim has a lease: the check every answer makes. */
uint64_t claims_expire_due(struct claims *c, claims_ended_fn *ended, void *ctx);

/* Ends every claim covering cpu (it went offline) with the reason REVOKED,
 * calling ended() (may be NULL) for each first. Returns how many. */
unsigned claims_revoke_cpu(struct claims *c, uint32_t cpu, claims_ended_fn *ended, void *ctx);

/* Claimed level per CPU id ([ncpus], 0 = unclaimed). */
const uint8_t *claims_levels(const struct claims *c);

/* The same levels with their stamp, for placement_ctx_choose_stamped():
 * the stamp is replaced whenever a claim is added or ends, and no other
 * table in the process ever has it. Valid as long as the table. */
const struct placement_claims *claims_stamped(const struct claims *c);

/* Claimed level per CPU leaving out the claims tied to pid: where a managed
 * process's own threads may be pushed. Valid until the next call. */
const uint8_t *claims_levels_except(struct claims *c, int32_t pid);

/* Claim holding cpu with the highest level, or NULL. */
const struct claim *claims_on_cpu(const struct claims *c, uint32_t cpu);

unsigned claims_count(const struct claims *c);
unsigned claims_count_client(const struct claims *c, uint32_t client);
unsigned claims_count_uid(const struct claims *c, uint32_t uid);

/* Every live claim, for status reports and tests: i from 0 until NULL. */
const struct claim *claims_at(const struct claims *c, unsigned i);

/* The live claim with the lowest id at or above from, or NULL: a walk of
 * every claim by id, one call a step, costs about one lookup a step where
 * ids are dense (they are handed out in order), a scan only past a gap of
 * CLAIMS_PROBE_IDS ids. */
#define CLAIMS_PROBE_IDS 64
const struct claim *claims_at_or_after(const struct claims *c, uint64_t from);

/* Puts a claim from the state file back under its old id and lease; ids
 * below next_id are never handed out again. 0, -EEXIST, -EINVAL, -ENOMEM,
 * or -ESRCH as claims_add. */
int claims_restore(struct claims *c, const struct claim *cl, uint32_t next_id);

/* The id the next claims_add() hands out (or one above it, when that one is
 * taken by a restored claim). */
uint32_t claims_next_id(const struct claims *c);

/* Ids below next_id are never handed out: what a state file that cannot be
 * restored still tells of the ids it saw. */
void claims_skip_ids(struct claims *c, uint32_t next_id);

/*
 * The loop edge: from now on every owner pid is watched through a pidfd
 * and leases end on a timer on base, each ending reported to ended(). The
 * caller passes the loop's clock in now_ms so that the timer and the table
 * agree. Called on an empty table (-EBUSY otherwise), before any claim is
 * restored or added. 0 or -ENOMEM.
 */
int claims_attach(struct claims *c, struct event_base *base, uint64_t (*now_ms)(void), claims_ended_fn *ended,
		  void *ctx);

#endif
