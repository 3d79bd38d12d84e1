#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "claims.h"
#include "levels.h"

/* Bounds the table; the server's per-client limit is far lower. */
#define CLAIMS_MAX 65536

struct claims {
	uint32_t ncpus;
	uint32_t next_id;
	unsigned n, cap;
	struct claim *v; /* unordered; removal swaps the last entry in */
	uint8_t *levels; /* [ncpus] */
};

int claims_new(uint32_t ncpus, struct claims **ret)
{
	struct claims *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->levels = calloc(ncpus ? ncpus : 1, 1);
	if (!c->levels) {
		free(c);
		return -ENOMEM;
	}
	c->ncpus = ncpus;
	c->next_id = 1;
	*ret = c;
	return 0;
}

void claims_free(struct claims *c)
{
	if (!c)
		return;
	free(c->v);
	free(c->levels);
	free(c);
}

/* Recomputes the per-CPU levels; claims are few, so a full pass is simpler
 * than reference counting and cheap enough on every change. */
static void claims_rebuild(struct claims *c)
{
	memset(c->levels, 0, c->ncpus);
	for (unsigned i = 0; i < c->n; i++)
		CPUSET_FOREACH(cpu, &c->v[i].cpus) {
			if ((uint32_t)cpu >= c->ncpus)
				break;
			if (c->v[i].level > c->levels[cpu])
				c->levels[cpu] = c->v[i].level;
		}
}

int claims_add(struct claims *c, uint32_t client, int32_t pid, uint32_t uid, uint8_t level,
	       const struct cpuset *cpus, uint64_t now_ms, uint64_t lease_ms, uint32_t *ret_id)
{
	struct claim *cl;

	if (cpuset_empty(cpus) || level <= LEVEL_NORMAL || level >= LEVEL_COUNT)
		return -EINVAL;
	if (c->n == c->cap) {
		unsigned cap = c->cap ? c->cap * 2 : 16;
		struct claim *v;

		if (c->n >= CLAIMS_MAX)
			return -ENOSPC;
		v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	cl = &c->v[c->n++];
	*cl = (struct claim){
		.id = c->next_id++,
		.client = client,
		.pid = pid,
		.uid = uid,
		.level = level,
		.expires_ms = lease_ms ? now_ms + lease_ms : 0,
		.cpus = *cpus,
	};
	if (c->next_id == 0)
		c->next_id = 1; /* id 0 means "no claim" on the wire */
	claims_rebuild(c);
	*ret_id = cl->id;
	return 0;
}

static void claims_remove_at(struct claims *c, unsigned i)
{
	c->v[i] = c->v[--c->n];
}

int claims_release(struct claims *c, uint32_t id, uint32_t client)
{
	for (unsigned i = 0; i < c->n; i++) {
		if (c->v[i].id != id)
			continue;
		if (c->v[i].client != client)
			return -EPERM;
		claims_remove_at(c, i);
		claims_rebuild(c);
		return 0;
	}
	return -ENOENT;
}

static unsigned claims_drop_matching(struct claims *c, size_t field, uint32_t value)
{
	unsigned dropped = 0;

	for (unsigned i = 0; i < c->n;) {
		uint32_t v;

		memcpy(&v, (const char *)&c->v[i] + field, sizeof(v));
		if (v == value) {
			claims_remove_at(c, i);
			dropped++;
		} else {
			i++;
		}
	}
	if (dropped)
		claims_rebuild(c);
	return dropped;
}

unsigned claims_drop_client(struct claims *c, uint32_t client)
{
	return claims_drop_matching(c, offsetof(struct claim, client), client);
}

unsigned claims_drop_pid(struct claims *c, int32_t pid)
{
	if (pid <= 0)
		return 0;
	return claims_drop_matching(c, offsetof(struct claim, pid), (uint32_t)pid);
}

uint64_t claims_expire(struct claims *c, uint64_t now_ms, void (*expired)(const struct claim *, void *), void *ctx)
{
	uint64_t next = 0;
	bool changed = false;

	for (unsigned i = 0; i < c->n;) {
		uint64_t at = c->v[i].expires_ms;

		if (at && at <= now_ms) {
			if (expired)
				expired(&c->v[i], ctx);
			claims_remove_at(c, i);
			changed = true;
			continue;
		}
		if (at && (!next || at < next))
			next = at;
		i++;
	}
	if (changed)
		claims_rebuild(c);
	return next;
}

const uint8_t *claims_levels(const struct claims *c)
{
	return c->levels;
}

const struct claim *claims_on_cpu(const struct claims *c, uint32_t cpu)
{
	const struct claim *best = NULL;

	for (unsigned i = 0; i < c->n; i++)
		if (cpuset_test(&c->v[i].cpus, cpu) && (!best || c->v[i].level > best->level))
			best = &c->v[i];
	return best;
}

unsigned claims_count(const struct claims *c)
{
	return c->n;
}

unsigned claims_count_client(const struct claims *c, uint32_t client)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->n; i++)
		n += c->v[i].client == client;
	return n;
}

const struct claim *claims_at(const struct claims *c, unsigned i)
{
	return i < c->n ? &c->v[i] : NULL;
}
