/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "claims.h"
#include "idmap.h"
#include "levels.h"
#include "quota.h"
#include "rtplace-proto.h"

#define CLAIMS_NIL UINT32_MAX

/* The three ways claims are grouped; each claim is on one list of each. */
enum { CLAIMS_BY_OWNER, CLAIMS_BY_CLIENT, CLAIMS_BY_UID, CLAIMS_NINDEX };

struct claims_slot {
	struct claim cl;
	bool used;
	uint32_t order_pos; /* in claims.order */
	uint32_t heap_pos;  /* in claims.heap, CLAIMS_NIL without a lease */
	uint32_t prev[CLAIMS_NINDEX], next[CLAIMS_NINDEX];
};

/* Claims sharing a key (an owner pid, a connection, a uid). An owner group
 * holds the pidfd that tells the loop when the process exits: the kernel
 * makes it readable at exit, so there is no polling and no pid-reuse race. */
struct claims_group {
	struct claims *c;
	uint32_t key;
	uint32_t head;
	uint32_t count;
	int pidfd;
	struct event *ev;
};

struct claims_index {
	struct idmap hash; /* key -> group index */
	struct claims_group *groups;
	uint32_t ngroups, cap, free_head; /* free groups chain through head */
};

struct claims {
	uint32_t ncpus;
	uint32_t next_id;
	struct claims_slot *slots;
	uint32_t nslots, cap, free_head; /* free slots chain through next[0] */
	uint32_t *order;                 /* [count] slot of each live claim */
	uint32_t count;
	uint32_t *heap;                  /* slots with a lease, a min-heap on expires_ms */
	uint32_t nheap;
	struct idmap by_id;              /* id -> slot */
	struct claims_index index[CLAIMS_NINDEX];
	uint32_t *level_count;           /* [ncpus][LEVEL_COUNT]: claims at each level */
	uint8_t *levels;                 /* [ncpus] highest claimed level */
	struct placement_claims stamped; /* levels and their stamp (claims_stamped()) */
	uint8_t *scratch;                /* [ncpus] for claims_levels_except() */
	/* The loop edge, once attached. */
	struct event_base *base;
	struct event *ev_expire;
	uint64_t (*now_ms)(void);
	claims_ended_fn *ended;
	void *ctx;
	claims_life_fn *life;
	void *life_ctx;
};

/*
 * A stamp no table of the process has had: placement contexts outlive
 * neither a table nor its levels, but a table freed and another allocated
 * at the same address must not inherit its stamps, so they come from one
 * counter for all tables. Atomic so that tables on different threads (the
 * tests') stay apart; 2^64 changes do not wrap in practice.
 */
static uint64_t claims_new_stamp(void)
{
	static uint64_t last;

	return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

int claims_new(uint32_t ncpus, struct claims **ret)
{
	struct claims *c = calloc(1, sizeof(*c));
	size_t n = ncpus ? ncpus : 1;

	if (!c)
		return -ENOMEM;
	c->ncpus = ncpus;
	c->next_id = 1;
	c->free_head = CLAIMS_NIL;
	for (int k = 0; k < CLAIMS_NINDEX; k++)
		c->index[k].free_head = CLAIMS_NIL;
	c->levels = calloc(n, 1);
	c->scratch = calloc(n, 1);
	c->level_count = calloc(n * LEVEL_COUNT, sizeof(*c->level_count));
	if (!c->levels || !c->scratch || !c->level_count) {
		claims_free(c);
		return -ENOMEM;
	}
	c->stamped = (struct placement_claims){ .level = c->levels, .stamp = claims_new_stamp() };
	*ret = c;
	return 0;
}

static void claims_group_unwatch(struct claims_group *g)
{
	if (g->ev)
		event_free(g->ev);
	if (g->pidfd >= 0)
		close(g->pidfd);
	g->ev = NULL;
	g->pidfd = -1;
}

void claims_free(struct claims *c)
{
	if (!c)
		return;
	for (int k = 0; k < CLAIMS_NINDEX; k++) {
		struct claims_index *ix = &c->index[k];

		for (uint32_t g = 0; g < ix->ngroups; g++)
			if (ix->groups[g].count)
				claims_group_unwatch(&ix->groups[g]);
		free(ix->groups);
		idmap_free(&ix->hash);
	}
	if (c->ev_expire)
		event_free(c->ev_expire);
	idmap_free(&c->by_id);
	free(c->slots);
	free(c->order);
	free(c->heap);
	free(c->level_count);
	free(c->levels);
	free(c->scratch);
	free(c);
}

/* --- the lease heap ---------------------------------------------------- */

static uint64_t claims_heap_at(const struct claims *c, uint32_t pos)
{
	return c->slots[c->heap[pos]].cl.expires_ms;
}

static void claims_heap_set(struct claims *c, uint32_t pos, uint32_t slot)
{
	c->heap[pos] = slot;
	c->slots[slot].heap_pos = pos;
}

static void claims_heap_fix(struct claims *c, uint32_t pos)
{
	uint32_t slot = c->heap[pos];
	uint64_t at = c->slots[slot].cl.expires_ms;

	while (pos > 0 && claims_heap_at(c, (pos - 1) / 2) > at) {
		claims_heap_set(c, pos, c->heap[(pos - 1) / 2]);
		pos = (pos - 1) / 2;
	}
	for (;;) {
		uint32_t child = 2 * pos + 1;

		if (child >= c->nheap)
			break;
		if (child + 1 < c->nheap && claims_heap_at(c, child + 1) < claims_heap_at(c, child))
			child++;
		if (claims_heap_at(c, child) >= at)
			break;
		claims_heap_set(c, pos, c->heap[child]);
		pos = child;
	}
	claims_heap_set(c, pos, slot);
}

static void claims_heap_remove(struct claims *c, uint32_t slot)
{
	uint32_t pos = c->slots[slot].heap_pos;

	if (pos == CLAIMS_NIL)
		return;
	c->slots[slot].heap_pos = CLAIMS_NIL;
	if (pos == --c->nheap)
		return;
	claims_heap_set(c, pos, c->heap[c->nheap]);
	claims_heap_fix(c, pos);
}

/* --- per-CPU levels ---------------------------------------------------- */

static uint8_t claims_top_level(const struct claims *c, uint32_t cpu)
{
	const uint32_t *n = &c->level_count[(size_t)cpu * LEVEL_COUNT];

	for (uint32_t l = LEVEL_COUNT - 1; l >= LEVEL_NORMAL; l--)
		if (n[l])
			return (uint8_t)l;
	return 0;
}

static void claims_count_levels(struct claims *c, const struct claim *cl, int delta)
{
	CPUSET_FOREACH(cpu, &cl->cpus) {
		if ((uint32_t)cpu >= c->ncpus)
			break;
		c->level_count[(size_t)cpu * LEVEL_COUNT + cl->level] += (uint32_t)delta;
	}
}

/* The one place the levels change: every change takes a new stamp. */
static void claims_update_levels(struct claims *c, const struct claim *cl)
{
	CPUSET_FOREACH(cpu, &cl->cpus) {
		if ((uint32_t)cpu >= c->ncpus)
			break;
		c->levels[cpu] = claims_top_level(c, (uint32_t)cpu);
	}
	c->stamped.stamp = claims_new_stamp();
}

/* --- groups -------------------------------------------------------------- */

static uint32_t claims_key(const struct claim *cl, int k)
{
	return k == CLAIMS_BY_OWNER ? (uint32_t)cl->pid : k == CLAIMS_BY_CLIENT ? cl->client : cl->uid;
}

static struct claims_group *claims_group_find(const struct claims *c, int k, uint32_t key)
{
	const struct claims_index *ix = &c->index[k];
	const uint32_t *gi = idmap_find(&ix->hash, key);

	return gi ? &ix->groups[*gi] : NULL;
}

static void claims_owner_exit_cb(evutil_socket_t fd, short what, void *arg);

/* Watches the owner group g's process, for a claim of uid. 0, -ESRCH when
 * it is gone, -EMFILE when its pidfd would be one of the descriptors kept
 * for root (quota_fd_reserve()), -errno. */
static int claims_group_watch(struct claims *c, struct claims_group *g, uid_t uid)
{
	struct rlimit rl;

	g->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)g->key, 0);
	if (g->pidfd < 0)
		return -errno;
	/* Read each time, as the server does: prlimit may change it. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    quota_fd_reserved(uid, (uint64_t)g->pidfd, (uint64_t)rl.rlim_cur)) {
		close(g->pidfd);
		g->pidfd = -1;
		return -EMFILE;
	}
	g->ev = event_new(c->base, g->pidfd, EV_READ, claims_owner_exit_cb, g);
	if (!g->ev || event_add(g->ev, NULL) < 0) {
		claims_group_unwatch(g);
		return -ENOMEM;
	}
	return 0;
}

/* The group of key in index k, created (and, for an attached owner, watched
 * for a claim of uid) when new. NULL with *err set. */
static struct claims_group *claims_group_get(struct claims *c, int k, uint32_t key, uid_t uid, int *err)
{
	struct claims_index *ix = &c->index[k];
	struct claims_group *g = claims_group_find(c, k, key);
	uint32_t gi;

	if (g)
		return g;
	if (ix->free_head == CLAIMS_NIL) {
		uint32_t cap = ix->cap ? ix->cap * 2 : 16;
		struct claims_group *v;

		/* Only the pidfd events of owner groups point into groups:
		 * after the move they are re-pointed (an event must not be
		 * pending while it is reassigned). */
		v = realloc(ix->groups, cap * sizeof(*v));
		if (!v) {
			*err = -ENOMEM;
			return NULL;
		}
		ix->groups = v;
		for (uint32_t i = 0; i < ix->ngroups; i++) {
			if (!v[i].count || !v[i].ev)
				continue;
			event_del(v[i].ev);
			event_assign(v[i].ev, c->base, v[i].pidfd, EV_READ, claims_owner_exit_cb, &v[i]);
			event_add(v[i].ev, NULL);
		}
		for (uint32_t i = cap; i-- > ix->cap;) {
			v[i] = (struct claims_group){ .head = ix->free_head, .pidfd = -1 };
			ix->free_head = i;
		}
		ix->cap = cap;
	}
	gi = ix->free_head;
	g = &ix->groups[gi];
	if (idmap_put(&ix->hash, key, gi) < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	ix->free_head = g->head;
	if (gi >= ix->ngroups)
		ix->ngroups = gi + 1;
	*g = (struct claims_group){ .c = c, .key = key, .head = CLAIMS_NIL, .pidfd = -1 };
	if (k == CLAIMS_BY_OWNER && c->base) {
		*err = claims_group_watch(c, g, uid);
		if (*err < 0) {
			idmap_remove(&ix->hash, key);
			g->head = ix->free_head;
			ix->free_head = gi;
			return NULL;
		}
	}
	return g;
}

static void claims_group_put(struct claims *c, int k, struct claims_group *g)
{
	struct claims_index *ix = &c->index[k];
	uint32_t gi = (uint32_t)(g - ix->groups);

	if (g->count)
		return;
	claims_group_unwatch(g);
	idmap_remove(&ix->hash, g->key);
	g->head = ix->free_head;
	ix->free_head = gi;
}

static void claims_link(struct claims *c, int k, struct claims_group *g, uint32_t slot)
{
	struct claims_slot *s = &c->slots[slot];

	s->prev[k] = CLAIMS_NIL;
	s->next[k] = g->head;
	if (g->head != CLAIMS_NIL)
		c->slots[g->head].prev[k] = slot;
	g->head = slot;
	g->count++;
}

static void claims_unlink(struct claims *c, int k, uint32_t slot)
{
	struct claims_slot *s = &c->slots[slot];
	struct claims_group *g = claims_group_find(c, k, claims_key(&s->cl, k));

	if (s->prev[k] != CLAIMS_NIL)
		c->slots[s->prev[k]].next[k] = s->next[k];
	else
		g->head = s->next[k];
	if (s->next[k] != CLAIMS_NIL)
		c->slots[s->next[k]].prev[k] = s->prev[k];
	g->count--;
	claims_group_put(c, k, g);
}

/* --- the table ----------------------------------------------------------- */

static void claims_rearm(struct claims *c)
{
	struct timeval tv;
	uint64_t now, at;

	if (!c->ev_expire)
		return;
	event_del(c->ev_expire);
	if (!c->nheap)
		return;
	now = c->now_ms();
	at = claims_heap_at(c, 0);
	at = at > now ? at - now : 0;
	tv = (struct timeval){ .tv_sec = (time_t)(at / 1000), .tv_usec = (suseconds_t)(at % 1000) * 1000 };
	event_add(c->ev_expire, &tv);
}

static int claims_grow(struct claims *c)
{
	uint32_t cap = c->cap ? c->cap * 2 : 16;
	struct claims_slot *slots;
	uint32_t *order, *heap;

	if (c->cap >= CLAIMS_MAX)
		return -ENOSPC;
	slots = realloc(c->slots, cap * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	c->slots = slots;
	order = realloc(c->order, cap * sizeof(*order));
	if (!order)
		return -ENOMEM;
	c->order = order;
	heap = realloc(c->heap, cap * sizeof(*heap));
	if (!heap)
		return -ENOMEM;
	c->heap = heap;
	c->cap = cap;
	return 0;
}

/* Inserts cl as is (its id unused). 0 or -errno; nothing changed on error. */
static int claims_insert(struct claims *c, const struct claim *cl)
{
	struct claims_group *g[CLAIMS_NINDEX] = { NULL };
	struct claims_slot *s;
	uint32_t slot;
	int r = 0;

	if (cpuset_empty(&cl->cpus) || cl->level < LEVEL_NORMAL || cl->level >= LEVEL_COUNT || cl->pid < 0)
		return -EINVAL;
	if (c->count >= CLAIMS_MAX)
		return -ENOSPC;
	if (c->free_head == CLAIMS_NIL && c->nslots == c->cap) {
		r = claims_grow(c);
		if (r < 0)
			return r;
	}
	/* Groups first: the owner's pidfd is the step that can fail for a
	 * reason other than memory (the owner is gone already). */
	for (int k = 0; k < CLAIMS_NINDEX; k++) {
		if (k == CLAIMS_BY_OWNER && cl->pid == 0)
			continue;
		g[k] = claims_group_get(c, k, claims_key(cl, k), cl->uid, &r);
		if (!g[k])
			goto undo;
	}
	r = idmap_put(&c->by_id, cl->id, c->free_head != CLAIMS_NIL ? c->free_head : c->nslots);
	if (r < 0)
		goto undo;
	if (c->free_head != CLAIMS_NIL) {
		slot = c->free_head;
		c->free_head = c->slots[slot].next[0];
	} else {
		slot = c->nslots++;
	}
	s = &c->slots[slot];
	*s = (struct claims_slot){ .cl = *cl, .used = true, .heap_pos = CLAIMS_NIL };
	for (int k = 0; k < CLAIMS_NINDEX; k++)
		if (g[k])
			claims_link(c, k, g[k], slot);
	s->order_pos = c->count;
	c->order[c->count++] = slot;
	if (cl->expires_ms) {
		c->heap[c->nheap++] = slot;
		claims_heap_fix(c, c->nheap - 1);
	}
	claims_count_levels(c, cl, 1);
	claims_update_levels(c, cl);
	claims_rearm(c);
	return 0;
undo:
	for (int k = 0; k < CLAIMS_NINDEX; k++)
		if (g[k])
			claims_group_put(c, k, g[k]);
	return r;
}

/* The end of a claim whose life was never told (claims_withdraw()). */
#define CLAIMS_UNTOLD UINT32_MAX

/* Removes the claim in slot, which ended as why (claims_life_fn). */
static void claims_remove(struct claims *c, uint32_t slot, uint32_t why)
{
	struct claims_slot *s = &c->slots[slot];
	uint32_t last;

	if (c->life && why != CLAIMS_UNTOLD)
		c->life(&s->cl, why, c->life_ctx);
	claims_count_levels(c, &s->cl, -1);
	claims_update_levels(c, &s->cl);
	claims_heap_remove(c, slot);
	idmap_remove(&c->by_id, s->cl.id);
	for (int k = 0; k < CLAIMS_NINDEX; k++)
		if (k != CLAIMS_BY_OWNER || s->cl.pid)
			claims_unlink(c, k, slot);
	last = c->order[--c->count];
	c->order[s->order_pos] = last;
	c->slots[last].order_pos = s->order_pos;
	s->used = false;
	s->next[0] = c->free_head;
	c->free_head = slot;
}

int claims_add(struct claims *c, const struct claim *tmpl, uint64_t now_ms, uint64_t lease_ms, uint32_t *ret_id)
{
	struct claim cl = *tmpl;
	int r;

	cl.id = c->next_id;
	cl.expires_ms = lease_ms ? now_ms + lease_ms : 0;
	r = claims_insert(c, &cl);
	if (r < 0)
		return r;
	/* id 0 means "no claim" on the wire; restored ids stay taken. */
	do
		c->next_id = c->next_id == UINT32_MAX ? 1 : c->next_id + 1;
	while (claims_find(c, c->next_id));
	*ret_id = cl.id;
	return 0;
}

void claims_made(struct claims *c, uint32_t id)
{
	const struct claim *cl = claims_find(c, id);

	if (cl && c->life)
		c->life(cl, CLAIMS_LIFE_CREATED, c->life_ctx);
}

void claims_watch_life(struct claims *c, claims_life_fn *fn, void *ctx)
{
	c->life = fn;
	c->life_ctx = ctx;
}

int claims_restore(struct claims *c, const struct claim *cl, uint32_t next_id)
{
	int r;

	if (!cl->id)
		return -EINVAL;
	if (claims_find(c, cl->id))
		return -EEXIST;
	r = claims_insert(c, cl);
	if (r < 0)
		return r;
	if (next_id > c->next_id)
		c->next_id = next_id;
	if (cl->id >= c->next_id)
		c->next_id = cl->id == UINT32_MAX ? 1 : cl->id + 1;
	return 0;
}

uint32_t claims_next_id(const struct claims *c)
{
	return c->next_id;
}

void claims_skip_ids(struct claims *c, uint32_t next_id)
{
	if (next_id > c->next_id)
		c->next_id = next_id;
}

static uint32_t claims_slot_of(const struct claims *c, uint32_t id)
{
	const uint32_t *slot = idmap_find(&c->by_id, id);

	return slot ? *slot : CLAIMS_NIL;
}

const struct claim *claims_find(const struct claims *c, uint32_t id)
{
	uint32_t slot = claims_slot_of(c, id);

	return slot == CLAIMS_NIL ? NULL : &c->slots[slot].cl;
}

/* Ends claim id as why (claims_remove()). 0 or -ENOENT. */
static int claims_end(struct claims *c, uint32_t id, uint32_t why)
{
	uint32_t slot = claims_slot_of(c, id);

	if (slot == CLAIMS_NIL)
		return -ENOENT;
	claims_remove(c, slot, why);
	claims_rearm(c);
	return 0;
}

int claims_release(struct claims *c, uint32_t id)
{
	return claims_end(c, id, CLAIMS_LIFE_RELEASED);
}

int claims_withdraw(struct claims *c, uint32_t id)
{
	return claims_end(c, id, CLAIMS_UNTOLD);
}

unsigned claims_drop_client(struct claims *c, uint32_t client)
{
	struct claims_group *g = claims_group_find(c, CLAIMS_BY_CLIENT, client);
	unsigned dropped = 0;

	for (uint32_t slot = g ? g->head : CLAIMS_NIL; slot != CLAIMS_NIL;) {
		/* Read before the removal, which frees the group with its last
		 * claim. */
		uint32_t next = c->slots[slot].next[CLAIMS_BY_CLIENT];

		if (c->slots[slot].cl.pid == 0) {
			claims_remove(c, slot, CLAIMS_LIFE_DISCONNECTED);
			dropped++;
		}
		slot = next;
	}
	if (dropped)
		claims_rearm(c);
	return dropped;
}

unsigned claims_drop_pid(struct claims *c, int32_t pid, claims_ended_fn *ended, void *ctx)
{
	struct claims_group *g;
	unsigned dropped = 0;

	if (pid <= 0)
		return 0;
	/* Removing the group's last claim frees the group: look it up again
	 * each turn instead of holding a pointer into it. */
	while ((g = claims_group_find(c, CLAIMS_BY_OWNER, (uint32_t)pid))) {
		uint32_t slot = g->head;

		if (ended)
			ended(&c->slots[slot].cl, RTPLACE_CLAIM_ENDED_OWNER_EXITED, ctx);
		claims_remove(c, slot, RTPLACE_CLAIM_ENDED_OWNER_EXITED);
		dropped++;
	}
	if (dropped)
		claims_rearm(c);
	return dropped;
}

uint64_t claims_expire(struct claims *c, uint64_t now_ms, claims_ended_fn *ended, void *ctx)
{
	bool expired = false;

	while (c->nheap && claims_heap_at(c, 0) <= now_ms) {
		uint32_t slot = c->heap[0];

		if (ended)
			ended(&c->slots[slot].cl, RTPLACE_CLAIM_ENDED_EXPIRED, ctx);
		claims_remove(c, slot, RTPLACE_CLAIM_ENDED_EXPIRED);
		expired = true;
	}
	/* Every change of the heap rearms the timer, so a check that found
	 * nothing due (every query makes one) leaves it as it is. The timer's
	 * own call has used it up: it rearms even when nothing was due yet,
	 * as when the loop's clock ran ahead of now_ms(). */
	if (expired || (c->ev_expire && c->nheap && !evtimer_pending(c->ev_expire, NULL)))
		claims_rearm(c);
	return c->nheap ? claims_heap_at(c, 0) : 0;
}

uint64_t claims_expire_due(struct claims *c, claims_ended_fn *ended, void *ctx)
{
	/* No lease, no deadline: the clock is not read. */
	return c->nheap ? claims_expire(c, c->now_ms(), ended, ctx) : 0;
}

unsigned claims_revoke_cpu(struct claims *c, uint32_t cpu, claims_ended_fn *ended, void *ctx)
{
	unsigned dropped = 0;

	if (cpu >= c->ncpus || !c->levels[cpu])
		return 0;
	for (uint32_t i = 0; i < c->count;) {
		uint32_t slot = c->order[i];

		if (!cpuset_test(&c->slots[slot].cl.cpus, cpu)) {
			i++;
			continue;
		}
		if (ended)
			ended(&c->slots[slot].cl, RTPLACE_CLAIM_ENDED_REVOKED, ctx);
		claims_remove(c, slot, RTPLACE_CLAIM_ENDED_REVOKED); /* moves the last claim to i */
		dropped++;
	}
	if (dropped)
		claims_rearm(c);
	return dropped;
}

const uint8_t *claims_levels(const struct claims *c)
{
	return c->levels;
}

const struct placement_claims *claims_stamped(const struct claims *c)
{
	return &c->stamped;
}

const uint8_t *claims_levels_except(struct claims *c, int32_t pid)
{
	struct claims_group *g = pid > 0 ? claims_group_find(c, CLAIMS_BY_OWNER, (uint32_t)pid) : NULL;
	uint32_t slot;

	memcpy(c->scratch, c->levels, c->ncpus);
	if (!g)
		return c->scratch;
	/* Take pid's claims out of the counts, read the levels they leave,
	 * and put them back: the cost is that of pid's claims alone. */
	for (slot = g->head; slot != CLAIMS_NIL; slot = c->slots[slot].next[CLAIMS_BY_OWNER])
		claims_count_levels(c, &c->slots[slot].cl, -1);
	for (slot = g->head; slot != CLAIMS_NIL; slot = c->slots[slot].next[CLAIMS_BY_OWNER])
		CPUSET_FOREACH(cpu, &c->slots[slot].cl.cpus) {
			if ((uint32_t)cpu >= c->ncpus)
				break;
			c->scratch[cpu] = claims_top_level(c, (uint32_t)cpu);
		}
	for (slot = g->head; slot != CLAIMS_NIL; slot = c->slots[slot].next[CLAIMS_BY_OWNER])
		claims_count_levels(c, &c->slots[slot].cl, 1);
	return c->scratch;
}

const struct claim *claims_on_cpu(const struct claims *c, uint32_t cpu)
{
	const struct claim *best = NULL;

	if (cpu >= c->ncpus || !c->levels[cpu])
		return NULL;
	for (uint32_t i = 0; i < c->count; i++) {
		const struct claim *cl = &c->slots[c->order[i]].cl;

		if (cpuset_test(&cl->cpus, cpu) && (!best || cl->level > best->level))
			best = cl;
	}
	return best;
}

unsigned claims_count(const struct claims *c)
{
	return c->count;
}

unsigned claims_count_client(const struct claims *c, uint32_t client)
{
	const struct claims_group *g = claims_group_find(c, CLAIMS_BY_CLIENT, client);

	return g ? g->count : 0;
}

unsigned claims_count_uid(const struct claims *c, uint32_t uid)
{
	const struct claims_group *g = claims_group_find(c, CLAIMS_BY_UID, uid);

	return g ? g->count : 0;
}

const struct claim *claims_at(const struct claims *c, unsigned i)
{
	return i < c->count ? &c->slots[c->order[i]].cl : NULL;
}

const struct claim *claims_at_or_after(const struct claims *c, uint64_t from)
{
	const struct claim *best = NULL;

	if (from > UINT32_MAX)
		return NULL;
	if (from == 0)
		from = 1;
	for (uint64_t id = from; id < from + CLAIMS_PROBE_IDS && id <= UINT32_MAX; id++) {
		best = claims_find(c, (uint32_t)id);
		if (best)
			return best;
	}
	for (uint32_t i = 0; i < c->count; i++) {
		const struct claim *cl = &c->slots[c->order[i]].cl;

		if (cl->id >= from && (!best || cl->id < best->id))
			best = cl;
	}
	return best;
}

/* --- the loop edge ------------------------------------------------------- */

static void claims_owner_exit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct claims_group *g = arg;
	struct claims *c = g->c;

	claims_drop_pid(c, (int32_t)g->key, c->ended, c->ctx);
}

static void claims_expire_cb(evutil_socket_t fd, short what, void *arg)
{
	struct claims *c = arg;

	claims_expire_due(c, c->ended, c->ctx);
}

int claims_attach(struct claims *c, struct event_base *base, uint64_t (*now_ms)(void), claims_ended_fn *ended,
		  void *ctx)
{
	if (c->count)
		return -EBUSY;
	c->ev_expire = evtimer_new(base, claims_expire_cb, c);
	if (!c->ev_expire)
		return -ENOMEM;
	c->base = base;
	c->now_ms = now_ms;
	c->ended = ended;
	c->ctx = ctx;
	return 0;
}
