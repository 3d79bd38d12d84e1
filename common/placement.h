/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement: which CPUs for an RT thread of priority P (DESIGN §5). Pure
 * code: it reads the cpupri map through a view, the topology snapshot and
 * the claims array it is given, and writes only its result, the caller's
 * rotation cursor and the caller's placement state. No syscalls, no globals, so the daemon, rtplace-run's
 * local fallback and the unit tests run the same decision.
 *
 * The decision, in order (every step is a rule of DESIGN §5):
 *
 *  1. Candidates C = allowed ∩ managed ∩ online. An empty allowed set means
 *     "all managed CPUs". A request node (>= 0) restricts C to that node:
 *     the caller asked for memory locality, and a CPU elsewhere would break
 *     it silently.
 *  2. The level of a CPU is max(its level in the map, its claimed level).
 *     Only CPUs whose level is strictly below rtP are eligible; a CPU the map
 *     shows offline is never eligible. With prefer_idle off, idle and normal
 *     compare as one level (the kernel folds them); the result still reports
 *     the level seen.
 *  3. CPU kinds: if at least `count` eligible CPUs are of kind 0 (the most
 *     performant), only those are considered; otherwise all kinds are (the
 *     kernel's fitness fallback).
 *  4. count > 1: the CPUs are taken from one LLC if some LLC holds `count`
 *     eligible CPUs, else from one node if some node does, else from the
 *     whole set. Among groups that can, the winner has the best worst level
 *     (its `count` lowest levels compared from the highest down), then
 *     holds the near CPU, then comes first in rotation order (its nearest
 *     CPU among those at or below its worst level).
 *  5. CPUs are then picked one at a time, each the smallest by
 *       (level, SMT penalty, locality, noise, rotation distance)
 *     where locality is 0 for the near CPU, 1 for its LLC, 2 for its node,
 *     3 for the rest (with no near CPU, the first pick becomes the anchor of
 *     the next ones, so a multi-CPU answer clusters); the SMT penalty marks
 *     a CPU whose SMT sibling is at a level >= rtP (PLACEMENT_SMT_RT) or at
 *     a level above idle (PLACEMENT_SMT_ALWAYS), or was picked earlier in
 *     this answer; noise is 1 for a CPU of cfg->noisy (recent hardirq and
 *     softirq time above the quietest CPU's), else 0, so that within one
 *     level, after every other preference, the quiet CPUs come first;
 *     rotation distance is (cpu - *rotor) mod ncpus, as
 *     cpumask_any_distribute() spreads concurrent answers.
 *  6. Each pick's slot level is re-read: the map can carry a stale bit (see
 *     cpupri_set()), and a CPU whose slot is offline or >= rtP is dropped and
 *     the choice redone without it, reading further levels if need be.
 *
 * The level scan reads the map as the kernel's cpupri_find() does: levels
 * from idle upward, skipping those whose count is zero, reading only the
 * shards the candidates touch, and stopping at the first level after which
 * the answer can no longer change.
 *
 * Fewer eligible CPUs than `count` is not an error: the answer holds what
 * exists (n < count) and says so in its reason.
 *
 * Reasons. Every decision takes a struct rtplace_reason (reason.h; NULL
 * when the caller does not want one): a refusal, an empty answer and a
 * partial one write one of the PLACEMENT_REASON_* texts into it, each
 * short enough for a reply (RTPLACE_REASON_MAX); a full answer empties
 * it (one byte: the success path copies no words), and a reply then says
 * PLACEMENT_REASON_OK (placement_reason_text()).
 */
#ifndef RTPLACE_PLACEMENT_H
#define RTPLACE_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "cpupri.h"
#include "cpuset.h"
#include "reason.h"
#include "topo.h"

/* Most CPUs one answer can hold. */
#define PLACEMENT_MAX_COUNT RTPLACE_MAX_CPUS

/* The words placement writes into a reason (see the top); a reply to a
 * full answer says PLACEMENT_REASON_OK, which placement leaves unwritten. */
#define PLACEMENT_REASON_OK "lowest level in the allowed set"
#define PLACEMENT_REASON_PARTIAL "fewer CPUs below the priority than asked"
#define PLACEMENT_REASON_NONE_BELOW "no CPU below the priority in the allowed set"
#define PLACEMENT_REASON_NO_CANDIDATE "no managed online CPU in the allowed set"
#define PLACEMENT_REASON_BAD_PRIO "priority out of range 1..99"
#define PLACEMENT_REASON_BAD_COUNT "count out of range"
#define PLACEMENT_REASON_BAD_NODE "no such NUMA node"
#define PLACEMENT_REASON_BAD_NEAR "no such near CPU"
#define PLACEMENT_REASON_NO_MEMORY "out of memory"
#define PLACEMENT_REASON_BAD_STATE "placement state of another context"

/* [placement] avoid-smt-siblings = never|rt|always */
enum placement_smt {
	PLACEMENT_SMT_NEVER,
	PLACEMENT_SMT_RT,     /* avoid siblings of CPUs at a level >= rtP */
	PLACEMENT_SMT_ALWAYS, /* avoid siblings of any CPU above idle */
};

/*
 * [placement] isolated = prefer|only|avoid|ignore (DESIGN §20): what RT
 * answers do with the isolated CPUs (isolcpus=, cgroup v2 isolated
 * partitions), which the kernel never balances onto. prefer: isolated
 * first at the same level (an answer elsewhere wins only by a lower worst
 * level, or by more CPUs); only: nothing else; avoid: never them; ignore:
 * no difference. Whatever the mode but ignore, a normal request (the
 * claimant runs without an RT policy) keeps off them: its client leaves
 * it unmarked when the user named the CPUs.
 *
 * When housekeeping-cpus is unset and CPUs are isolated, the others are
 * the housekeeping CPUs (isolated_housekeeping): RT answers under prefer
 * then keep to the isolated CPUs, as under only, while managed still
 * holds the others for normal requests.
 */
enum placement_isolated {
	PLACEMENT_ISOLATED_PREFER,
	PLACEMENT_ISOLATED_ONLY,
	PLACEMENT_ISOLATED_AVOID,
	PLACEMENT_ISOLATED_IGNORE,
};

struct placement_config {
	struct rtplace_cpumask managed; /* online CPUs minus housekeeping-cpus */
	bool prefer_idle;      /* idle ranks below normal; off: they tie */
	enum placement_smt avoid_smt;
	struct rtplace_cpumask isolated; /* the host's isolated CPUs (an input: sysfs.h reads them) */
	enum placement_isolated isolated_mode;
	bool isolated_housekeeping; /* housekeeping-cpus unset: the non-isolated CPUs are housekeeping */
	/* CPUs with recent interrupt noise (an input: the daemon measures
	 * it, see irqnoise.h): last within their locality tier */
	struct rtplace_cpumask noisy;
};

struct placement_request {
	int prio;               /* RT priority 1..99 */
	uint32_t count;         /* CPUs wanted, 1..PLACEMENT_MAX_COUNT */
	/* CPUs of the topology: those at or above t->ncpus are not read, so
	 * that a decision costs what the machine's size does, not
	 * RTPLACE_MAX_CPUS; none below t->ncpus: every managed CPU */
	struct rtplace_cpumask allowed;
	int32_t node;           /* NUMA node to stay on, -1 for none */
	int32_t near_cpu;       /* CPU to be close to (need not be allowed), -1 for none */
	bool normal;            /* for a thread without an RT policy: off isolated CPUs */
};

struct placement_result {
	uint32_t n;                          /* CPUs chosen, <= count */
	uint32_t level;                      /* level of cpus[0], the lowest chosen */
	uint16_t cpus[PLACEMENT_MAX_COUNT];  /* in the order they were picked */
	uint8_t levels[PLACEMENT_MAX_COUNT]; /* each CPU's level (map or claim) */
};

/*
 * Chooses up to req->count CPUs for an RT thread of priority req->prio (see
 * the top of this file for the rules).
 *
 * claimed_level has t->ncpus entries (0: unclaimed, else the level the claim
 * holds) or is NULL for no claims. rotor is the caller's rotation cursor
 * (NULL: start at CPU 0); on success it moves past the last CPU picked, so
 * the next answer starts elsewhere.
 *
 * Returns 0 with ret->n >= 1; -EINVAL for a bad request (priority, count,
 * node or near CPU out of range); -ENODEV when no managed online CPU is in
 * the allowed set at all (the map showing every candidate offline counts:
 * hotplug took them); -ENOENT when there are candidates but none below
 * the priority; -ENOMEM. reason (may be NULL) says why on failure and what
 * was cut on a partial answer (ret->n < req->count), and is emptied on a
 * full one; ret->n is 0 on failure, and *rotor is only written on success.
 */
int placement_choose(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
		     const uint8_t *claimed_level, uint32_t *rotor, const struct placement_request *req,
		     struct rtplace_reason *reason, struct placement_result *ret);

/* What a reply says of an answer whose reason placement wrote: the reason,
 * or PLACEMENT_REASON_OK for a full answer. */
static inline const char *placement_reason_text(const struct rtplace_reason *reason)
{
	return reason->text[0] ? reason->text : PLACEMENT_REASON_OK;
}

/* How the isolation rules apply to req under cfg: IGNORE when nothing is
 * isolated, AVOID for a normal request, ONLY for prefer with the
 * housekeeping set derived from isolation, else the configured mode. */
enum placement_isolated placement_isolated_mode(const struct placement_config *cfg,
						const struct placement_request *req);

/*
 * A placement context: what every answer derives from the configuration,
 * the topology and the map's geometry (candidate sets and their map masks,
 * SMT sibling lists, the bit <-> CPU translation), built once. A placement
 * state: what answering writes, the working set of one answer and the
 * caches its owner's answers share (the sets derived from the claims,
 * kept while they stay the same). placement_choose() builds both per
 * call; a caller that answers often (rtplaced) keeps them, and a query
 * then costs what its answer needs: a count-1 query on an idle 480-CPU
 * map reads a few map words and the slots of the CPUs it looks at, not
 * O(ncpus).
 *
 * Lifetime: the context copies *cfg and keeps t and v, which must outlive
 * it unchanged while it answers (the topology as topo_finish() left it, the
 * view's map mapped). Rebuild it whenever the configuration changes (a
 * reload) or the topology is refreshed (a refresh may replace *t in place:
 * the stale context may then still be freed, nothing else); map levels and
 * claims are read live at every answer and need no rebuild. A state is
 * made for one context (placement_state_new()) and is rebuilt with it: an
 * answer with the state of another context is refused (-EINVAL).
 *
 * Sharing: an answer only reads the context, and writes the state it is
 * given. One answer at a time per state (one state per thread); threads
 * may share a context, each with its own state, as long as nobody
 * changes the context meanwhile (placement_ctx_set_noisy()).
 *
 * placement_ctx_new() and placement_state_new() return 0 or -ENOMEM.
 */
struct placement_ctx;
struct placement_state;

int placement_ctx_new(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
		      struct placement_ctx **ret);
void placement_ctx_free(struct placement_ctx *ctx);
int placement_state_new(const struct placement_ctx *ctx, struct placement_state **ret);
void placement_state_free(struct placement_state *st);

/* Replaces the context's copy of cfg->noisy: the noise is measured more
 * often than the rest of the configuration changes, and needs no rebuild.
 * Copies one set (O(CPUSET_WORDS)); not while the context answers. */
void placement_ctx_set_noisy(struct placement_ctx *ctx, const struct rtplace_cpumask *noisy);

/* placement_choose() with the context's cfg, t and v, writing st: same
 * answers, same returns (never -ENOMEM: the context and the state hold
 * all they need). The claims are compared with the state's copy of them
 * at every answer (ncpus bytes): what the state derives from them (the
 * sets of claimed CPUs, the penalties they give, the words they leave
 * free) is kept while they stay the same. */
int placement_ctx_choose(const struct placement_ctx *ctx, struct placement_state *st, const uint8_t *claimed_level,
			 uint32_t *rotor, const struct placement_request *req, struct rtplace_reason *reason,
			 struct placement_result *ret);

/*
 * One CPU of allowed for one thread at level (a move, a push, a
 * RealtimeKit grant): placement_ctx_choose() for one CPU below level,
 * nearest near (-1 for none), the answer built in scratch. 0 with the CPU;
 * -EINVAL for a level that is not RT, else placement_ctx_choose()'s
 * -errno (placement_pick_reason() words it).
 */
int placement_ctx_pick(const struct placement_ctx *ctx, struct placement_state *st, const uint8_t *claimed_level,
		       uint32_t *rotor, const struct rtplace_cpumask *allowed, int near, uint32_t level,
		       struct placement_result *scratch, int *ret_cpu);

/* What a requester is told of a failed pick r: why, and the error it gets
 * (-EBUSY when no CPU fits, else r). */
int placement_pick_reason(int r, uint32_t level, struct rtplace_reason *reason);

/*
 * Claims as their keeper hands them out (daemon/claims.c,
 * claims_stamped()): the claimed level per CPU, as placement_ctx_choose()
 * takes it, and a stamp the keeper replaces whenever a level in it may
 * have changed. A stamp is never 0 and never handed out twice in a
 * process, by any keeper: equal stamps mean equal levels.
 */
struct placement_claims {
	const uint8_t *level; /* [t->ncpus] */
	uint64_t stamp;
};

/* placement_ctx_choose() with stamped claims (NULL: none): same answers,
 * but while the stamp is the one the state last took its copy under, the
 * claims are not compared again, so an answer reads none of them beyond
 * what it derived once. A new stamp costs one comparison. */
int placement_ctx_choose_stamped(const struct placement_ctx *ctx, struct placement_state *st,
				 const struct placement_claims *claims, uint32_t *rotor,
				 const struct placement_request *req, struct rtplace_reason *reason,
				 struct placement_result *ret);

#endif
