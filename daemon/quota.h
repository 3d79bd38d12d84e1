/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-uid shares of a pool with room kept for root (DESIGN §14): every
 * pool that clients fill (connections, claims, subscriptions, managed
 * threads) is sized in three numbers:
 *
 *   size      what the pool holds at all; root alone may fill it
 *   users     what all uids but root may hold together (<= size): the
 *             difference is root's reserve, whatever the others hold
 *   per_user  what one uid other than root may hold
 *
 * so one user cannot take the whole users' part, and all users together
 * cannot take root's. A refusal names the limit met and its config key.
 *
 * Pure: no syscalls, no globals. quota_check() decides from counts the
 * caller keeps (the claims table counts its own); struct quota keeps the
 * counts for pools that have no index of their own, in a hash by uid, so
 * a take or a put costs the same with one user or ten thousand.
 */
#ifndef RTPLACE_DAEMON_QUOTA_H
#define RTPLACE_DAEMON_QUOTA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "reason.h"

struct quota_limits {
	uint32_t size;
	uint32_t users;
	uint32_t per_user;
	/* Config keys (without "[limits] ") named by refusals; static strings.
	 * size_key NULL: the pool's size is no key (a map's, a table's). */
	const char *size_key;
	const char *users_key;
	const char *per_user_key;
};

/* What is held now: by the uid asking, by all uids but root, by all. */
struct quota_use {
	uint32_t uid;
	uint32_t users;
	uint32_t all;
};

/* How many more entries uid may take now (0 when none). */
uint32_t quota_room(const struct quota_limits *l, uid_t uid, const struct quota_use *use);

/*
 * Whether uid may take n more entries, all of them. Returns 0; -EDQUOT at
 * the user's share, -EUSERS at the users' part, -ENOSPC at the pool's
 * size, each with reason (at most RTPLACE_REASON_MAX bytes, fit for the
 * wire) naming the key, e.g. "[limits] max-subscribers-per-user = 8 reached";
 * reason may be NULL.
 */
int quota_check(const struct quota_limits *l, uid_t uid, const struct quota_use *use, uint32_t n,
		struct rtplace_reason *reason);

/*
 * The daemon's descriptors are such a pool with no count of its own: the
 * kernel hands out the lowest free descriptor, so one that lands in the
 * top quota_fd_reserve(RLIMIT_NOFILE) of the soft limit nofile means
 * every lower one is taken, and a holder other than root (a connection,
 * its peer's pidfd, a claim owner's pidfd) must give it back: the rest
 * stays for root's connections and claims and the daemon's own needs.
 * The reserve is an eighth of nofile, at least 16, at most 1024.
 */
uint64_t quota_fd_reserve(uint64_t nofile);

/* Whether uid may not hold descriptor fd under the soft limit nofile
 * (UINT64_MAX: none). */
bool quota_fd_reserved(uid_t uid, uint64_t fd, uint64_t nofile);

struct quota;

/* An empty pool under l. 0 or -ENOMEM. */
int quota_new(const struct quota_limits *l, struct quota **ret);
void quota_free(struct quota *q);

/* New limits (a reload): what is held stays held; lowered limits refuse
 * new entries until enough have been put back. */
void quota_set_limits(struct quota *q, const struct quota_limits *l);

/* What uid, the users and all hold now. */
void quota_get_use(const struct quota *q, uid_t uid, struct quota_use *ret);

/* quota_room() and quota_check() on q's own counts. */
uint32_t quota_room_of(const struct quota *q, uid_t uid);
int quota_check_of(const struct quota *q, uid_t uid, uint32_t n, struct rtplace_reason *reason);

/* Takes n entries for uid when quota_check() allows all of them. Returns
 * as quota_check(), or -ENOMEM; nothing is taken on failure. */
int quota_take(struct quota *q, uid_t uid, uint32_t n, struct rtplace_reason *reason);

/* Gives back n entries of uid (no more than it holds). */
void quota_put(struct quota *q, uid_t uid, uint32_t n);

#endif
