/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "idmap.h"

#define IDMAP_MIN_CAP 16

static uint32_t idmap_home(const struct idmap *m, uint32_t key)
{
	return (key * 2654435769u) & (m->cap - 1);
}

/* The slot of key, or the empty slot where it would go (cap > 0). */
static uint32_t idmap_slot(const struct idmap *m, uint32_t key)
{
	uint32_t i = idmap_home(m, key);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* Rehashes into cap slots. 0 or -ENOMEM (m unchanged). */
static int idmap_resize(struct idmap *m, uint32_t cap)
{
	struct idmap grown = {
		.keys = calloc(cap, sizeof(uint32_t)),
		.vals = calloc(cap, sizeof(uint32_t)),
		.used = calloc(cap, 1),
		.cap = cap,
		.n = m->n,
	};

	if (!grown.keys || !grown.vals || !grown.used) {
		idmap_free(&grown);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < m->cap; i++) {
		uint32_t j;

		if (!m->used[i])
			continue;
		j = idmap_slot(&grown, m->keys[i]);
		grown.used[j] = 1;
		grown.keys[j] = m->keys[i];
		grown.vals[j] = m->vals[i];
	}
	idmap_free(m);
	*m = grown;
	return 0;
}

int idmap_init(struct idmap *m, uint32_t reserve)
{
	uint32_t cap = IDMAP_MIN_CAP;

	*m = (struct idmap){ 0 };
	while (cap < 2 * (uint64_t)reserve)
		cap *= 2;
	return reserve ? idmap_resize(m, cap) : 0;
}

void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	*m = (struct idmap){ 0 };
}

uint32_t *idmap_find(const struct idmap *m, uint32_t key)
{
	uint32_t i;

	if (!m->cap)
		return NULL;
	i = idmap_slot(m, key);
	return m->used[i] ? &m->vals[i] : NULL;
}

int idmap_put(struct idmap *m, uint32_t key, uint32_t val)
{
	uint32_t *have = idmap_find(m, key);
	uint32_t i;
	int r;

	if (have) {
		*have = val;
		return 0;
	}
	if (2 * (uint64_t)(m->n + 1) > m->cap) {
		r = idmap_resize(m, m->cap ? m->cap * 2 : IDMAP_MIN_CAP);
		if (r < 0)
			return r;
	}
	i = idmap_slot(m, key);
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

bool idmap_remove(struct idmap *m, uint32_t key)
{
	uint32_t mask = m->cap - 1, hole;

	if (!m->cap || !m->used[hole = idmap_slot(m, key)])
		return false;
	m->used[hole] = 0;
	m->n--;
	for (uint32_t i = (hole + 1) & mask; m->used[i]; i = (i + 1) & mask) {
		uint32_t home = idmap_home(m, m->keys[i]);

		/* Entry i may fill the hole unless its home lies cyclically
		 * in (hole, i]: the hole would then come before its home. */
		if (((i - home) & mask) < ((i - hole) & mask))
			continue;
		m->keys[hole] = m->keys[i];
		m->vals[hole] = m->vals[i];
		m->used[hole] = 1;
		m->used[i] = 0;
		hole = i;
	}
	return true;
}
