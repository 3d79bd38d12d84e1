/*
 * Claims (DESIGN §6): CPUs handed out by an answer count as being at the
 * claimer's level until the claim is released, its lease runs out, its
 * client disconnects, or the process it was made for exits. Pure: the
 * caller passes the time and learns of expiries through the return values,
 * so the table is tested without clocks or sockets.
 *
 * The table keeps, per CPU, the highest level any live claim holds there
 * (claims_levels()): the array placement_choose() reads.
 */
#ifndef RTPLACE_CLAIMS_H
#define RTPLACE_CLAIMS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"

struct claim {
	uint32_t id;
	uint32_t client;     /* server's id of the connection that made it */
	int32_t pid;         /* process the claim lives with, 0 for none */
	uint32_t uid;        /* of the client that made it: who may see its records */
	uint8_t level;       /* level the CPUs count as */
	uint64_t expires_ms; /* monotonic ms, 0 = no lease */
	struct cpuset cpus;
};

struct claims;

/* A table for CPU ids below ncpus. 0 or -ENOMEM. */
int claims_new(uint32_t ncpus, struct claims **ret);
void claims_free(struct claims *c);

/*
 * Records a claim on cpus at level for client (uid). lease_ms 0 means no lease. Returns 0 and
 * the new id, -EINVAL for an empty set or bad level, -ENOSPC when the table
 * is full.
 */
int claims_add(struct claims *c, uint32_t client, int32_t pid, uint32_t uid, uint8_t level,
	       const struct cpuset *cpus, uint64_t now_ms, uint64_t lease_ms, uint32_t *ret_id);

/* Releases claim id for client. 0, -ENOENT (no such claim), -EPERM (another client's). */
int claims_release(struct claims *c, uint32_t id, uint32_t client);

/* Drops every claim of client; returns how many. */
unsigned claims_drop_client(struct claims *c, uint32_t client);

/* Drops every claim tied to pid; returns how many. */
unsigned claims_drop_pid(struct claims *c, int32_t pid);

/*
 * Drops the claims whose lease ended at or before now_ms, calling expired()
 * for each first (may be NULL). Returns the earliest remaining expiry, or 0
 * when no claim has a lease.
 */
uint64_t claims_expire(struct claims *c, uint64_t now_ms, void (*expired)(const struct claim *, void *), void *ctx);

/* Claimed level per CPU id ([ncpus], 0 = unclaimed). */
const uint8_t *claims_levels(const struct claims *c);

/* Claim holding cpu with the highest level, or NULL. */
const struct claim *claims_on_cpu(const struct claims *c, uint32_t cpu);

unsigned claims_count(const struct claims *c);
unsigned claims_count_client(const struct claims *c, uint32_t client);

/* Every live claim, for status reports and tests. */
const struct claim *claims_at(const struct claims *c, unsigned i);

#endif
