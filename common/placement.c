/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The placement decisions of placement.h: a request's checks and
 * candidates, the isolation rules around an answer, then the fast paths
 * (placement-fast.c) where the default rules allow, else the general
 * path (placement-scan.c).
 *
 * Layer: the top one; calls every other placement file (see
 * placement-core.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "placement-core.h"

/* placement_candidates() for a request with an allowed set or a node. */
static void placement_candidates_of(const struct placement_ctx *x, struct placement_state *st)
{
	const struct placement_request *req = st->req;
	struct rtplace_cpumask cand0;

	if (cpuset_empty_below(&req->allowed, x->nwords, x->last_word)) {
		st->mask = &x->node_mask[req->node];
		cpuset_and(&st->cand_buf, &x->base, &x->topo->node_cpus[req->node]);
	} else {
		cpuset_and(&st->cand_buf, &req->allowed, &x->base);
		if (req->node >= 0)
			cpuset_and(&st->cand_buf, &st->cand_buf, &x->topo->node_cpus[req->node]);
		cpupri_mask_from_cpuset(x->view, &st->cand_buf, &st->mask_buf);
		st->mask = &st->mask_buf;
	}
	st->cand = &st->cand_buf;
	cpuset_and(&cand0, st->cand, &x->kind0);
	st->mixed = !cpuset_empty(&cand0) && !cpuset_equal(&cand0, st->cand);
}

/* The answer's candidates (st.cand, st.mask, st.mixed): the context's
 * base for the usual request, with neither allowed set nor node. */
static inline void placement_candidates(const struct placement_ctx *x, struct placement_state *st)
{

	if (st->req->node >= 0 || !cpuset_empty_below(&st->req->allowed, x->nwords, x->last_word)) {
		placement_candidates_of(x, st);
		return;
	}
	st->cand = &x->base;
	st->mask = &x->base_mask;
	st->mixed = x->base_mixed;
}

/*
 * Writes text (one of the PLACEMENT_REASON_* texts, or a reason placement
 * wrote) into reason (NULL: nobody asked). A copy, not reason_set(): nothing here is formatted, and
 * librtplace, which links placement, carries no formatter for reasons.
 */
static void placement_say(struct rtplace_reason *reason, const char *text)
{
	size_t n = strlen(text);

	if (!reason)
		return;
	if (n >= sizeof(reason->text))
		n = sizeof(reason->text) - 1;
	memcpy(reason->text, text, n);
	reason->text[n] = '\0';
}

/* placement_check() for a request out of range: which range. */
static int placement_refuse(const struct topo *t, const struct placement_request *req, struct rtplace_reason *reason)
{
	const char *why;

	if (req->prio < LEVEL_RT_PRIO_MIN || req->prio > LEVEL_RT_PRIO_MAX)
		why = PLACEMENT_REASON_BAD_PRIO;
	else if (req->count < 1 || req->count > PLACEMENT_MAX_COUNT)
		why = PLACEMENT_REASON_BAD_COUNT;
	else if (req->node < -1 || (req->node >= 0 && (uint32_t)req->node >= t->nnodes))
		why = PLACEMENT_REASON_BAD_NODE;
	else
		why = PLACEMENT_REASON_BAD_NEAR;
	placement_say(reason, why);
	return -EINVAL;
}

/* 0, or -EINVAL with the reason for a request out of range: most requests
 * are good, and one test of the four ranges together says so. */
static inline int placement_check(const struct topo *t, const struct placement_request *req,
				  struct rtplace_reason *reason)
{
	if (((uint32_t)req->prio - (uint32_t)LEVEL_RT_PRIO_MIN <= (uint32_t)(LEVEL_RT_PRIO_MAX - LEVEL_RT_PRIO_MIN)) &
	    (req->count - 1u < PLACEMENT_MAX_COUNT) & ((uint32_t)req->node + 1u <= t->nnodes) &
	    ((uint32_t)req->near_cpu + 1u <= t->ncpus))
		return 0;
	return placement_refuse(t, req, reason);
}

/*
 * Whether the map shows every candidate offline (hotplug): then no CPU is
 * online in the allowed set, which an empty answer must say rather than
 * "none below the priority". Read on empty answers only, as one more level
 * of the scan: the offline level's words of the candidates' shards.
 */
static bool placement_all_offline(const struct placement_ctx *x, const struct placement_state *st)
{
	struct rtplace_cpumask off;

	cpupri_level_cpus(x->view, LEVEL_OFFLINE, st->mask, &off);
	for (uint32_t i = 0; i < x->nwords; i++)
		if (st->cand->bits[i] & ~off.bits[i])
			return false;
	return true;
}

/* Starts st on an answer to req: the request's fields, the rotation
 * origin, the claims (none when none is claimed) and the candidates. */
static inline void placement_state_start(const struct placement_ctx *x, struct placement_state *st,
					 const struct placement_request *req, const struct placement_claims *claims,
					 const uint32_t *rotor)
{
	const uint32_t ncpus = x->topo->ncpus;

	st->req = req;
	st->claimed = claims ? claims->level : NULL;
	st->below = level_from_rt_priority(req->prio);
	/* The cursor is ours and below ncpus; a division only for one that is not. */
	st->start = !rotor ? 0 : *rotor < ncpus ? *rotor : *rotor % ncpus;
	st->next = LEVEL_IDLE;
	st->claim_sets_held = 0;
	if (st->claimed && placement_claim_cache_sync(x, st, claims->stamp))
		st->claimed = NULL;
	placement_candidates(x, st);
}

/* placement_ctx_choose() and placement_ctx_choose_stamped(): claims NULL
 * for none, stamp 0 for claims without a stamp. */
static int placement_ctx_answer(const struct placement_ctx *x, struct placement_state *st,
				const struct placement_claims *claims, uint32_t *rotor, const struct placement_request *req,
				struct rtplace_reason *reason, struct placement_result *ret)
{
	const struct topo *t = x->topo;
	uint32_t n = 0;
	int r;

	ret->n = 0;
	ret->level = LEVEL_OFFLINE;
	r = placement_check(t, req, reason);
	/* A context left over a topology refreshed in place (its rebuild
	 * failed) knows fewer nodes than the topology may: never index past. */
	if (r == 0 && req->node >= 0 && (uint32_t)req->node >= x->nnodes) {
		r = -EINVAL;
		placement_say(reason, PLACEMENT_REASON_BAD_NODE);
	}
	if (r < 0)
		goto out;
	placement_state_start(x, st, req, claims, rotor);
	if (st->cand == &x->base ? x->base_empty : cpuset_empty_n(st->cand, x->nwords)) {
		r = -ENODEV;
		placement_say(reason, PLACEMENT_REASON_NO_CANDIDATE);
		goto out;
	}
	/* Noise among the candidates: the fast paths walk the quiet CPUs
	 * first, or leave the answer to the general path's tiers. */
	st->noisy = !x->noisy_none && cpuset_intersects_n(st->cand, &x->cfg.noisy, x->nwords);
	if (req->near_cpu < 0 && x->cfg.prefer_idle && !st->mixed) {
		uint32_t level;

		if (req->count == 1) {
			int c = placement_fast_one(x, st, &level);

			n = c >= 0 ? 1 : 0;
			if (c >= 0)
				ret->cpus[0] = (uint16_t)c;
		} else {
			n = placement_fast_many(x, st, ret->cpus, &level);
		}
		if (n > 0) {
			/* Eight at once for the common counts: one store, no call
			 * (levels has room for them). */
			const uint64_t eight = UINT64_C(0x0101010101010101) * level;

			_Static_assert(PLACEMENT_MAX_COUNT >= 8, "levels holds eight");
			memcpy(ret->levels, &eight, sizeof(eight));
			if (n > 8)
				memset(ret->levels + 8, (int)level, n - 8);
			goto found;
		}
	}
	n = placement_general(x, st, ret->cpus, ret->levels);
	if (n == 0) {
		bool offline = placement_all_offline(x, st);

		r = offline ? -ENODEV : -ENOENT;
		placement_say(reason, offline ? PLACEMENT_REASON_NO_CANDIDATE : PLACEMENT_REASON_NONE_BELOW);
		goto out;
	}
found:
	ret->n = n;
	ret->level = ret->levels[0];
	/* A full answer needs no words: one byte, never a copy. */
	if (n < req->count)
		placement_say(reason, PLACEMENT_REASON_PARTIAL);
	else if (reason)
		reason->text[0] = '\0';
	if (rotor)
		*rotor = ret->cpus[n - 1] + 1u < t->ncpus ? ret->cpus[n - 1] + 1u : 0;
out:
	return r;
}

/* The highest level of an answer: the one a multi-CPU answer is judged by. */
static uint32_t placement_worst(const struct placement_result *r)
{
	uint32_t worst = 0;

	for (uint32_t i = 0; i < r->n; i++)
		worst = r->levels[i] > worst ? r->levels[i] : worst;
	return worst;
}

/*
 * The isolation rules (DESIGN §20, placement.h) around one answer: the
 * request's candidates restricted to, or kept off, the isolated CPUs, or
 * for `prefer` answered both ways and the isolated answer taken unless the
 * rest is at a lower level (or gives more CPUs). Each try works on its own
 * copy of the cursor; only the answer given moves it.
 */
static int placement_ctx_isolation(const struct placement_ctx *x, struct placement_state *st,
				   const struct placement_claims *claims, uint32_t *rotor,
				   const struct placement_request *req, struct rtplace_reason *reason,
				   struct placement_result *ret)
{
	const struct placement_config *c = &x->cfg;
	/* No isolated CPU (the context knows): no rule, and no set copied. */
	enum placement_isolated mode = x->isolated_none ? PLACEMENT_ISOLATED_IGNORE : placement_isolated_mode(c, req);
	struct placement_request iso, rest;
	/* The other answer of `prefer`, with its own reason. */
	struct {
		struct placement_result res;
		struct rtplace_reason reason;
	} *other = NULL;
	uint32_t rot_iso = rotor ? *rotor : 0, rot_rest = rot_iso;
	bool take_rest = false;
	int r, r_rest;

	if (mode == PLACEMENT_ISOLATED_IGNORE || placement_check(x->topo, req, NULL) < 0)
		return placement_ctx_answer(x, st, claims, rotor, req, reason, ret);
	iso = *req;
	rest = *req;
	if (cpuset_empty_below(&iso.allowed, x->nwords, x->last_word))
		iso.allowed = c->managed;
	rest.allowed = iso.allowed;
	cpuset_and(&iso.allowed, &iso.allowed, &c->isolated);
	cpuset_andnot(&rest.allowed, &rest.allowed, &c->isolated);
	if (mode == PLACEMENT_ISOLATED_PREFER && cpuset_empty(&rest.allowed))
		mode = PLACEMENT_ISOLATED_ONLY;
	if (mode == PLACEMENT_ISOLATED_PREFER && cpuset_empty(&iso.allowed))
		mode = PLACEMENT_ISOLATED_AVOID;
	if ((mode == PLACEMENT_ISOLATED_ONLY && cpuset_empty(&iso.allowed)) ||
	    (mode == PLACEMENT_ISOLATED_AVOID && cpuset_empty(&rest.allowed))) {
		/* An empty allowed set would read "every managed CPU". */
		ret->n = 0;
		ret->level = LEVEL_OFFLINE;
		placement_say(reason, PLACEMENT_REASON_NO_CANDIDATE);
		return -ENODEV;
	}
	if (mode != PLACEMENT_ISOLATED_PREFER)
		return placement_ctx_answer(x, st, claims, rotor, mode == PLACEMENT_ISOLATED_ONLY ? &iso : &rest, reason,
					    ret);
	other = malloc(sizeof(*other));
	if (!other) {
		ret->n = 0;
		placement_say(reason, PLACEMENT_REASON_NO_MEMORY);
		return -ENOMEM;
	}
	r = placement_ctx_answer(x, st, claims, &rot_iso, &iso, reason, ret);
	r_rest = placement_ctx_answer(x, st, claims, &rot_rest, &rest, &other->reason, &other->res);
	if (r_rest == 0 && (r < 0 || other->res.n > ret->n ||
			    (other->res.n == ret->n && placement_worst(&other->res) < placement_worst(ret)))) {
		r = 0;
		rot_iso = rot_rest;
		take_rest = true;
	} else if (r < 0 && r_rest != -ENODEV) {
		/* Candidates exist (the isolated ones): none below is the answer. */
		r = r_rest;
		take_rest = true;
	}
	if (take_rest) {
		*ret = other->res;
		placement_say(reason, other->reason.text);
	}
	if (r == 0 && rotor)
		*rotor = rot_iso;
	free(other);
	return r;
}

enum placement_isolated placement_isolated_mode(const struct placement_config *cfg,
						const struct placement_request *req)
{
	enum placement_isolated mode = cfg->isolated_mode;

	if (cpuset_empty(&cfg->isolated) || mode == PLACEMENT_ISOLATED_IGNORE)
		return PLACEMENT_ISOLATED_IGNORE;
	/* Normal work is what isolation keeps away; RT work may have to stay
	 * where the housekeeping CPUs are not. */
	if (req->normal)
		return PLACEMENT_ISOLATED_AVOID;
	if (cfg->isolated_housekeeping && mode == PLACEMENT_ISOLATED_PREFER)
		return PLACEMENT_ISOLATED_ONLY;
	return mode;
}

/* An answer asked with the state of another context: its sets and sizes
 * are not this context's. Out of line: no caller of the daemon's or of
 * local reads ever takes this path. */
static __attribute__((noinline, cold)) int placement_state_refuse(struct placement_result *ret,
								  struct rtplace_reason *reason)
{
	ret->n = 0;
	ret->level = LEVEL_OFFLINE;
	placement_say(reason, PLACEMENT_REASON_BAD_STATE);
	return -EINVAL;
}

int placement_ctx_choose(const struct placement_ctx *x, struct placement_state *st, const uint8_t *claimed_level,
			 uint32_t *rotor, const struct placement_request *req, struct rtplace_reason *reason,
			 struct placement_result *ret)
{
	/* Claims without a stamp: compared at every answer. */
	const struct placement_claims claims = { .level = claimed_level, .stamp = 0 };

	if (st->ctx != x)
		return placement_state_refuse(ret, reason);
	/* No isolated CPU (the context knows): no rule, no frame for one. */
	if (x->isolated_none)
		return placement_ctx_answer(x, st, &claims, rotor, req, reason, ret);
	return placement_ctx_isolation(x, st, &claims, rotor, req, reason, ret);
}

int placement_ctx_choose_stamped(const struct placement_ctx *x, struct placement_state *st,
				 const struct placement_claims *claims, uint32_t *rotor,
				 const struct placement_request *req, struct rtplace_reason *reason,
				 struct placement_result *ret)
{
	if (st->ctx != x)
		return placement_state_refuse(ret, reason);
	if (x->isolated_none)
		return placement_ctx_answer(x, st, claims, rotor, req, reason, ret);
	return placement_ctx_isolation(x, st, claims, rotor, req, reason, ret);
}

int placement_choose(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
		     const uint8_t *claimed_level, uint32_t *rotor, const struct placement_request *req,
		     struct rtplace_reason *reason, struct placement_result *ret)
{
	struct placement_ctx *x = NULL;
	struct placement_state *st = NULL;
	int r;

	ret->n = 0;
	ret->level = LEVEL_OFFLINE;
	r = placement_check(t, req, reason);
	if (r < 0)
		goto out;
	r = placement_ctx_new(cfg, t, v, &x);
	if (r == 0)
		r = placement_state_new(x, &st);
	if (r < 0) {
		placement_say(reason, PLACEMENT_REASON_NO_MEMORY);
		goto out;
	}
	r = placement_ctx_choose(x, st, claimed_level, rotor, req, reason, ret);
out:
	placement_state_free(st);
	placement_ctx_free(x);
	return r;
}

int placement_ctx_pick(const struct placement_ctx *ctx, struct placement_state *st, const uint8_t *claimed_level,
		       uint32_t *rotor, const struct rtplace_cpumask *allowed, int near, uint32_t level,
		       struct placement_result *scratch, int *ret_cpu)
{
	struct placement_request req = { .prio = level_rt_priority(level), .count = 1, .node = -1, .near_cpu = near };
	int r;

	if (req.prio <= 0)
		return -EINVAL;
	req.allowed = *allowed;
	r = placement_ctx_choose(ctx, st, claimed_level, rotor, &req, NULL, scratch);
	if (r == 0)
		*ret_cpu = scratch->cpus[0];
	return r;
}

int placement_pick_reason(int r, uint32_t level, struct rtplace_reason *reason)
{
	switch (r) {
	case -ENOMEM:
		reason_set(reason, "out of memory");
		return -ENOMEM;
	case -ENODEV:
		reason_set(reason, "no managed online CPU in the requested set");
		return -EBUSY;
	case -ENOENT:
		reason_set(reason, "no CPU below rt%d in the requested set", level_rt_priority(level));
		return -EBUSY;
	default:
		reason_set(reason, "cannot pick a CPU: %s", strerror(-r));
		return r;
	}
}
