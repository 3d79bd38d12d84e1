/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RealtimeKit's admission of method calls while they wait for the bus to
 * name their caller, pure: one sender (a bus connection's unique name)
 * or one user must not fill the wait and make the interface refuse
 * everyone else.
 *
 * A call's uid is the bus's answer to GetConnectionCredentials, which
 * comes after the call was queued; but a unique name is never reused on a
 * bus, so once one call of a sender was answered its uid is known for
 * every later call of it. The wait has RTKIT_PENDING_MAX places in three
 * pools:
 *
 *   senders whose uid is not known yet  RTKIT_PENDING_UNKNOWN places,
 *                                       RTKIT_PENDING_NEW per sender;
 *   senders known to be users' (not     RTKIT_PENDING_USERS places,
 *   root's)                             RTKIT_PENDING_UID per uid and
 *                                       RTKIT_PENDING_SENDER per sender;
 *   senders known to be root's          every place left, at least the
 *                                       other two pools' remainder.
 *
 * A user's connections, once each was answered once, fill only its uid's
 * share; a sender whose uid is known and which may not ask now (its burst
 * is spent) is refused before it waits at all (rtkit-bus.c). A new
 * connection (dbus-send makes one per call, root's too) waits in the
 * first pool, which a user can fill only with new connections, each
 * leaving it within a round trip of the bus.
 *
 * Representation: one unordered array of senders, searched linearly (at
 * most RTKIT_SENDERS_MAX, each lookup a scan). A sender is kept while it
 * has calls waiting and afterwards as long as there is room, for its
 * uid; when full, the idle sender seen longest ago gives its place.
 * No syscalls, no globals, no clock: the caller passes the time.
 */
#ifndef RTPLACE_RTKIT_ADMIT_H
#define RTPLACE_RTKIT_ADMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RTKIT_PENDING_MAX 256
#define RTKIT_PENDING_UNKNOWN 96
#define RTKIT_PENDING_NEW 4
#define RTKIT_PENDING_USERS 128
#define RTKIT_PENDING_UID 32
#define RTKIT_PENDING_SENDER 16
#define RTKIT_SENDERS_MAX 1024

struct rtkit_sender {
	char *name;       /* the connection's unique bus name */
	uid_t uid;        /* when uid_known */
	bool uid_known;
	uint32_t pending; /* its calls waiting */
	uint64_t seen_ms; /* its last call */
};

struct rtkit_admit {
	struct rtkit_sender *v;
	size_t n;         /* at most RTKIT_SENDERS_MAX */
	uint32_t pending; /* calls waiting, all senders */
};

/*
 * Admits one more waiting call of sender at now_ms. 0; -EBUSY when a
 * share above is full (the call is refused, not counted); -ENOMEM.
 */
int rtkit_admit_take(struct rtkit_admit *a, const char *sender, uint64_t now_ms);

/* A call of sender stopped waiting (answered or dropped). */
void rtkit_admit_done(struct rtkit_admit *a, const char *sender);

/* The bus named sender's uid. */
void rtkit_admit_learn(struct rtkit_admit *a, const char *sender, uid_t uid);

/* Sender's uid, if the bus named it before: true and *ret_uid, or false. */
bool rtkit_admit_known(const struct rtkit_admit *a, const char *sender, uid_t *ret_uid);

void rtkit_admit_free(struct rtkit_admit *a);

#endif
