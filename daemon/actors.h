/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What acts on threads over the engine (DESIGN §7): the records and their
 * subscribers (notify.c), MOVE requests (moves.c), pushes (push.c) and the
 * managed processes (manage.c), built in that order, each over the ones
 * before it and the engine, and freed in reverse. The request handlers,
 * RealtimeKit and the metrics use them; none of them calls up.
 */
#ifndef RTPLACE_ACTORS_H
#define RTPLACE_ACTORS_H

#include <stdint.h>

#include "conf.h"
#include "engine.h"
#include "manage.h"
#include "moves.h"
#include "notify.h"
#include "push.h"

struct actors {
	struct notify *notify;
	struct moves *moves;
	struct push *push;
	struct manage *manage;
};

/* Builds them over e on base, with cfg's limits and rules; the restored
 * MANAGE claims' owners are managed again. 0 or -errno; on failure what
 * was built is freed. */
int actors_new(struct engine *e, struct event_base *base, const struct config *cfg, struct actors *ret);
void actors_free(struct actors *a);

/* Takes a reloaded configuration's limits and rules. */
void actors_apply_config(struct actors *a, const struct config *cfg);

/* Moves and pushes together, as STATUS and the metrics count them. */
struct actors_stats {
	uint64_t moved;        /* threads moved by MOVE requests and pushes */
	uint64_t failed;       /* MOVE requests refused or failed, pushes that failed */
	uint64_t collisions;   /* tracker collisions on managed threads */
	uint64_t records_lost; /* records that found a subscriber's ring full */
};

void actors_get_stats(const struct actors *a, struct actors_stats *ret);

#endif
