/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rtkit-admit.h"

static struct rtkit_sender *rtkit_admit_find(const struct rtkit_admit *a, const char *sender)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].name, sender) == 0)
			return &a->v[i];
	return NULL;
}

/* A place for sender: a new one while there is room, else the idle
 * sender seen longest ago's. NULL when every sender has calls waiting or
 * out of memory. */
static struct rtkit_sender *rtkit_admit_add(struct rtkit_admit *a, const char *sender, uint64_t now_ms)
{
	struct rtkit_sender *e = NULL;
	char *name = strdup(sender);

	if (!name)
		return NULL;
	if (!a->v) {
		a->v = calloc(RTKIT_SENDERS_MAX, sizeof(*a->v));
		if (!a->v) {
			free(name);
			return NULL;
		}
	}
	if (a->n < RTKIT_SENDERS_MAX) {
		e = &a->v[a->n++];
	} else {
		for (size_t i = 0; i < a->n; i++)
			if (a->v[i].pending == 0 && (!e || a->v[i].seen_ms < e->seen_ms))
				e = &a->v[i];
		if (!e) {
			free(name);
			return NULL;
		}
		free(e->name);
	}
	*e = (struct rtkit_sender){ .name = name, .seen_ms = now_ms };
	return e;
}

/* Whether e may have one more call waiting, from its pool's count. */
static bool rtkit_admit_room(const struct rtkit_admit *a, const struct rtkit_sender *e)
{
	uint32_t unknown = 0, users = 0, uid = 0;

	for (size_t i = 0; i < a->n; i++) {
		const struct rtkit_sender *x = &a->v[i];

		if (!x->uid_known)
			unknown += x->pending;
		else if (x->uid != 0)
			users += x->pending;
		if (x->uid_known && e->uid_known && x->uid == e->uid)
			uid += x->pending;
	}
	if (!e->uid_known)
		return e->pending < RTKIT_PENDING_NEW && unknown < RTKIT_PENDING_UNKNOWN;
	if (e->pending >= RTKIT_PENDING_SENDER)
		return false;
	return e->uid == 0 || (users < RTKIT_PENDING_USERS && uid < RTKIT_PENDING_UID);
}

int rtkit_admit_take(struct rtkit_admit *a, const char *sender, uint64_t now_ms)
{
	struct rtkit_sender *e = rtkit_admit_find(a, sender);

	if (a->pending >= RTKIT_PENDING_MAX)
		return -EBUSY;
	if (!e) {
		e = rtkit_admit_add(a, sender, now_ms);
		if (!e)
			return a->n == RTKIT_SENDERS_MAX ? -EBUSY : -ENOMEM;
	}
	if (!rtkit_admit_room(a, e))
		return -EBUSY;
	e->pending++;
	e->seen_ms = now_ms;
	a->pending++;
	return 0;
}

void rtkit_admit_done(struct rtkit_admit *a, const char *sender)
{
	struct rtkit_sender *e = rtkit_admit_find(a, sender);

	if (e && e->pending) {
		e->pending--;
		a->pending--;
	}
}

void rtkit_admit_learn(struct rtkit_admit *a, const char *sender, uid_t uid)
{
	struct rtkit_sender *e = rtkit_admit_find(a, sender);

	if (e) {
		e->uid = uid;
		e->uid_known = true;
	}
}

bool rtkit_admit_known(const struct rtkit_admit *a, const char *sender, uid_t *ret_uid)
{
	const struct rtkit_sender *e = rtkit_admit_find(a, sender);

	if (!e || !e->uid_known)
		return false;
	*ret_uid = e->uid;
	return true;
}

void rtkit_admit_free(struct rtkit_admit *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i].name);
	free(a->v);
	*a = (struct rtkit_admit){ 0 };
}
