/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "idmap.h"
#include "rate.h"

/* Tokens are counted in thousandths, so that a refill of rate a second
 * is exact per millisecond. */
#define RATE_MILLI 1000

struct rate_bucket {
	uint32_t key;
	uint64_t tokens; /* thousandths */
	uint64_t at_ms;  /* when tokens was last refilled */
};

struct rate {
	uint32_t rate, burst, max_keys, n;
	struct rate_bucket *buckets; /* [max_keys], n in use */
	struct idmap index;          /* key -> bucket */
};

int rate_new(uint32_t rate, uint32_t burst, uint32_t max_keys, struct rate **ret)
{
	struct rate *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	*r = (struct rate){ .rate = rate, .burst = burst, .max_keys = max_keys };
	r->buckets = calloc(max_keys ? max_keys : 1, sizeof(*r->buckets));
	if (!r->buckets || idmap_init(&r->index, max_keys) < 0) {
		rate_free(r);
		return -ENOMEM;
	}
	*ret = r;
	return 0;
}

void rate_free(struct rate *r)
{
	if (!r)
		return;
	idmap_free(&r->index);
	free(r->buckets);
	free(r);
}

static void rate_refill(const struct rate *r, struct rate_bucket *b, uint64_t now_ms)
{
	uint64_t full = (uint64_t)r->burst * RATE_MILLI;

	if (now_ms > b->at_ms)
		b->tokens += (now_ms - b->at_ms) * r->rate;
	if (b->tokens > full)
		b->tokens = full;
	b->at_ms = now_ms;
}

/* Drops the buckets that have filled up again (as good as none). */
static void rate_sweep(struct rate *r, uint64_t now_ms)
{
	for (uint32_t i = 0; i < r->n;) {
		struct rate_bucket *b = &r->buckets[i];

		rate_refill(r, b, now_ms);
		if (b->tokens < (uint64_t)r->burst * RATE_MILLI) {
			i++;
			continue;
		}
		idmap_remove(&r->index, b->key);
		*b = r->buckets[--r->n];
		if (i < r->n)
			idmap_put(&r->index, b->key, i);
	}
}

bool rate_admit(struct rate *r, uint32_t key, uint64_t now_ms)
{
	uint32_t *at = idmap_find(&r->index, key);
	struct rate_bucket *b;

	if (!at && r->n == r->max_keys)
		rate_sweep(r, now_ms);
	if (!at && r->n == r->max_keys)
		return true;
	if (!at) {
		r->buckets[r->n] = (struct rate_bucket){ .key = key, .tokens = (uint64_t)r->burst * RATE_MILLI,
							 .at_ms = now_ms };
		idmap_put(&r->index, key, r->n); /* the reserve holds max_keys: no allocation */
		b = &r->buckets[r->n++];
	} else {
		b = &r->buckets[*at];
		rate_refill(r, b, now_ms);
	}
	if (b->tokens < RATE_MILLI)
		return false;
	b->tokens -= RATE_MILLI;
	return true;
}
