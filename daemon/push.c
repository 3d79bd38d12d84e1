/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The push policy: when to push a managed thread off a contended CPU and
 * where to. Owns the switch, the per-thread interval, the per-turn budget
 * and the counts of pushes; the thread table is manage.c's, the choice of
 * CPU the engine's (engine_pick()), applying it thread-sched.c's.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "levels.h"
#include "log.h"
#include "loop.h"
#include "push.h"
#include "rtplace-proto.h"
#include "thread-sched.h"

/* Pushes per turn, all threads together: a storm of collisions must not
 * turn the daemon into a migration engine. */
#define PUSH_BUDGET 64

struct push {
	struct push_opts o;
	bool enabled;         /* [moves] rebalance */
	uint32_t interval_ms; /* at most one push per thread per interval */
	unsigned budget;      /* pushes left in this turn */
	uint64_t moved, failed;
};

int push_new(const struct push_opts *opts, const struct config *cfg, struct push **ret)
{
	struct push *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->o = *opts;
	p->budget = PUSH_BUDGET;
	push_apply_config(p, cfg);
	*ret = p;
	return 0;
}

void push_free(struct push *p)
{
	free(p);
}

void push_apply_config(struct push *p, const struct config *cfg)
{
	p->enabled = cfg->moves.rebalance;
	p->interval_ms = cfg->moves.rebalance_interval_ms;
}

void push_new_turn(struct push *p)
{
	p->budget = PUSH_BUDGET;
}

void push_thread(struct push *p, pid_t tid, pid_t pid, uid_t uid, struct push_rate *rate,
		 const struct rtplace_cpumask *allowed, const struct tracker_event *ev)
{
	uint64_t now = loop_now_ms();
	struct thread_sched_result res;
	struct rtplace_cpumask to;
	int cpu, r;

	if (!p->enabled || p->budget == 0 || (rate->last_try_ms && now - rate->last_try_ms < p->interval_ms))
		return;
	r = engine_pick(p->o.engine, allowed, (int)ev->cpu, ev->level,
			claims_levels_except(engine_claims(p->o.engine), pid), &cpu);
	if (r == -ENOMEM)
		log_warning_ratelimited("Failed to pick a CPU to push thread %d to: out of memory", (int)tid);
	if (r < 0 || (uint32_t)cpu == ev->cpu || cpupri_level(engine_view(p->o.engine), (uint32_t)cpu) >= ev->level)
		return;
	cpuset_zero(&to);
	cpuset_set(&to, (unsigned)cpu);
	p->budget--;
	rate->last_try_ms = now;
	if (thread_sched_apply(tid, &to, THREAD_SCHED_KEEP_POLICY, 0, &res) < 0) {
		p->failed++;
		return;
	}
	p->moved++;
	log_debug("pushed thread %d of pid %d from CPU %u (%u) to CPU %d", (int)tid, (int)pid, ev->cpu,
		  ev->cpu_level, cpu);
	notify_record(p->o.notify, RTPLACE_RECORD_MOVED, tid, uid, (int)ev->cpu, cpu, (uint8_t)res.now.policy,
		      (uint8_t)res.now.prio);
}

void push_get_counts(const struct push *p, uint64_t *ret_moved, uint64_t *ret_failed)
{
	*ret_moved = p->moved;
	*ret_failed = p->failed;
}
