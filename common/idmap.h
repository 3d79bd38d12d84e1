/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A table from 32-bit ids (claim ids, pids, tids, uids) to 32-bit values:
 * the daemon's one hand-written hash table (claims, quota and the managed
 * threads each keep their index in one).
 *
 * Representation: open addressing with linear probing over a power-of-two
 * array of keys, values and a used byte each, at most half full. A removal
 * shifts the later entries of its probe run back, so no slot is marked
 * deleted and lookups stay short however many ids come and go. Ids are
 * dense small numbers: Fibonacci hashing spreads 60001, 60002, ... apart.
 *
 * Cost: a lookup, insertion or removal reads one probe run (a few slots
 * at half load); growing rehashes every entry once per doubling. A table
 * made with a reserve never grows while it holds at most that many, so
 * idmap_put() cannot fail there. Not thread-safe: one owner.
 */
#ifndef RTPLACE_IDMAP_H
#define RTPLACE_IDMAP_H

#include <stdbool.h>
#include <stdint.h>

struct idmap {
	uint32_t *keys;
	uint32_t *vals;
	uint8_t *used;
	uint32_t cap; /* a power of two, at least twice n; 0 before the first put */
	uint32_t n;
};

/* An empty table with room for reserve entries (0: it grows as needed).
 * 0 or -ENOMEM. */
int idmap_init(struct idmap *m, uint32_t reserve);
void idmap_free(struct idmap *m);

/* The value of key, or NULL; valid until the next put or remove. */
uint32_t *idmap_find(const struct idmap *m, uint32_t key);

/* Sets key's value, adding key when absent. 0, or -ENOMEM (the table is
 * unchanged). */
int idmap_put(struct idmap *m, uint32_t key, uint32_t val);

/* Removes key; whether it was there. */
bool idmap_remove(struct idmap *m, uint32_t key);

#endif
