/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-key admission at a rate: a token bucket per key (a uid), refilled
 * at rate a second up to burst, one token an admission. Pure: the caller
 * gives the time. Keys live in the daemon's one hash table (idmap.h); a
 * bucket that has filled up again is as good as none, and such buckets go
 * when the table is full, so keys that come and go do not grow it past
 * max_keys.
 */
#ifndef RTPLACE_RATE_H
#define RTPLACE_RATE_H

#include <stdbool.h>
#include <stdint.h>

struct rate;

/* rate admissions a second, burst at once, for at most max_keys keys at
 * a time. 0 or -ENOMEM. */
int rate_new(uint32_t rate, uint32_t burst, uint32_t max_keys, struct rate **ret);
void rate_free(struct rate *r);

/* Whether key may be admitted at now_ms (taking a token when so). A key
 * that finds the table full of partly spent buckets is admitted: the
 * table's bound is no reason to refuse. */
bool rate_admit(struct rate *r, uint32_t key, uint64_t now_ms);

#endif
