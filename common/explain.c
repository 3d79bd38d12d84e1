/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Why each CPU was chosen or passed over, and what stops a thread from
 * getting its policy (explain.h).
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "explain.h"
#include "levels.h"

/* What the classification derives once from the answer. */
struct explain_answer {
	struct rtplace_cpumask chosen;
	/* The picks before the last: their siblings had the penalty when
	 * the last pick was made. */
	struct rtplace_cpumask earlier;
	uint32_t worst;          /* highest rank chosen */
	bool all_kind0;          /* every chosen CPU is of the most performant kind */
	int32_t llc, node;       /* shared by every chosen CPU, else -1 */
	int32_t anchor;          /* the near CPU, else the first pick, else -1 */
	bool anchor_picked;      /* the anchor is the first pick: it beats no one on locality */
	bool side_isolated;      /* under prefer: the answer is of the isolated CPUs */
	enum placement_isolated mode;
	bool allowed_empty;
	uint32_t below;
};

/* Idle and normal rank as one without prefer-idle (placement.h step 2). */
static uint32_t explain_rank(const struct placement_config *cfg, uint32_t level)
{
	return level == LEVEL_IDLE && !cfg->prefer_idle ? LEVEL_NORMAL : level;
}

/* The level placement counts cpu at: the map's or its claim's. */
static uint32_t explain_level(const struct cpupri_view *v, const uint8_t *claimed, uint32_t cpu)
{
	uint32_t map = cpupri_level(v, cpu);

	if (map == LEVEL_OFFLINE || !claimed || claimed[cpu] <= map)
		return map;
	return claimed[cpu];
}

static void explain_answer_of(const struct placement_config *cfg, const struct topo *t,
			      const struct placement_request *req, const struct placement_result *res,
			      struct explain_answer *ret)
{
	*ret = (struct explain_answer){ .all_kind0 = true, .anchor = req->near_cpu, .below = LEVEL_OFFLINE };
	cpuset_zero(&ret->chosen);
	cpuset_zero(&ret->earlier);
	if (req->prio >= LEVEL_RT_PRIO_MIN && req->prio <= LEVEL_RT_PRIO_MAX)
		ret->below = level_from_rt_priority(req->prio);
	ret->mode = placement_isolated_mode(cfg, req);
	ret->allowed_empty = true;
	for (uint32_t c = 0; c < t->ncpus && ret->allowed_empty; c++)
		ret->allowed_empty = !cpuset_test(&req->allowed, c);
	for (uint32_t i = 0; i < res->n; i++) {
		const struct topo_cpu *tc = &t->cpus[res->cpus[i]];
		uint32_t rank = explain_rank(cfg, res->levels[i]);

		cpuset_set(&ret->chosen, res->cpus[i]);
		if (i + 1 < res->n)
			cpuset_set(&ret->earlier, res->cpus[i]);
		ret->worst = rank > ret->worst ? rank : ret->worst;
		ret->all_kind0 = ret->all_kind0 && tc->kind == 0;
		ret->llc = i == 0 ? tc->llc : ret->llc == tc->llc ? ret->llc : -1;
		ret->node = i == 0 ? tc->node : ret->node == tc->node ? ret->node : -1;
	}
	if (ret->anchor < 0 && res->n > 0) {
		ret->anchor = res->cpus[0];
		ret->anchor_picked = true;
	}
	ret->side_isolated = res->n > 0 && cpuset_test(&cfg->isolated, res->cpus[0]);
}

/* A hard filter placement applies before it reads a level, or -1. */
static int explain_filtered(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
			    const struct placement_request *req, const struct explain_answer *a, uint32_t cpu)
{
	bool isolated = cpuset_test(&cfg->isolated, cpu);

	if (!a->allowed_empty && !cpuset_test(&req->allowed, cpu))
		return RTPLACE_EXPLAIN_NOT_ALLOWED;
	if (cpuset_test(&a->chosen, cpu))
		return RTPLACE_EXPLAIN_CHOSEN;
	if (!t->cpus[cpu].online || cpupri_level(v, cpu) == LEVEL_OFFLINE)
		return RTPLACE_EXPLAIN_OFFLINE;
	if (!cpuset_test(&cfg->managed, cpu))
		return RTPLACE_EXPLAIN_HOUSEKEEPING;
	if (req->node >= 0 && t->cpus[cpu].node != req->node)
		return RTPLACE_EXPLAIN_OTHER_NODE;
	if (a->mode == PLACEMENT_ISOLATED_AVOID && isolated)
		return RTPLACE_EXPLAIN_ISOLATED;
	if (a->mode == PLACEMENT_ISOLATED_ONLY && !isolated)
		return RTPLACE_EXPLAIN_NOT_ISOLATED;
	return -1;
}

/* cpu's distance from the anchor: itself, its LLC, its node, the rest. */
static uint32_t explain_tier(const struct topo *t, int32_t anchor, uint32_t cpu)
{
	const struct topo_cpu *a = &t->cpus[anchor], *c = &t->cpus[cpu];

	if ((uint32_t)anchor == cpu)
		return 0;
	if (a->llc >= 0 && a->llc == c->llc)
		return 1;
	return a->node >= 0 && a->node == c->node ? 2 : 3;
}

/* Whether a chosen CPU at the answer's worst rank beats cpu on tier
 * (tier) or noise (noise). */
static bool explain_beaten(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
			   const uint8_t *claimed, const struct placement_result *res, const struct explain_answer *a,
			   uint32_t cpu, bool noise)
{
	for (uint32_t i = 0; i < res->n; i++) {
		uint32_t x = res->cpus[i];

		if (explain_rank(cfg, explain_level(v, claimed, x)) != a->worst ||
		    (!noise && a->anchor_picked && (int32_t)x == a->anchor))
			continue;
		if (noise ? !cpuset_test(&cfg->noisy, x)
			  : a->anchor >= 0 && explain_tier(t, a->anchor, x) < explain_tier(t, a->anchor, cpu))
			return true;
	}
	return false;
}

/* A sibling of cpu that gives it placement's SMT penalty, or -1. */
static int explain_busy_sibling(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
				const uint8_t *claimed, const struct explain_answer *a, uint32_t cpu)
{
	struct rtplace_cpumask sib;

	if (cfg->avoid_smt == PLACEMENT_SMT_NEVER)
		return -1;
	topo_siblings(t, cpu, &sib);
	CPUSET_FOREACH(s, &sib) {
		uint32_t l = cpupri_level(v, s);

		if (claimed && claimed[s] > l)
			l = claimed[s];
		if ((uint32_t)s != cpu && (cpuset_test(&a->earlier, (unsigned)s) ||
				 (cfg->avoid_smt == PLACEMENT_SMT_ALWAYS ? l > LEVEL_IDLE : l >= a->below)))
			return (int)s;
	}
	return -1;
}

/* The verdict on an eligible CPU that was not chosen: which preference
 * of placement.h put the chosen ones first; *ret_other the CPU it names. */
static int explain_preferred(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
			     const uint8_t *claimed, const struct placement_request *req,
			     const struct placement_result *res, const struct explain_answer *a, uint32_t cpu,
			     int32_t *ret_other)
{
	uint32_t rank = explain_rank(cfg, explain_level(v, claimed, cpu));
	bool group;
	int sib;

	if (res->n == 0)
		return RTPLACE_EXPLAIN_CHANGED;
	if (a->mode == PLACEMENT_ISOLATED_PREFER && cpuset_test(&cfg->isolated, cpu) != a->side_isolated)
		return RTPLACE_EXPLAIN_ISOLATION_SIDE;
	if (t->cpus[cpu].kind != 0 && a->all_kind0)
		return RTPLACE_EXPLAIN_KIND;
	if (rank > a->worst)
		return RTPLACE_EXPLAIN_BUSIER;
	if (res->n < req->count)
		return RTPLACE_EXPLAIN_CHANGED;
	group = req->count > 1 && ((a->llc >= 0 && t->cpus[cpu].llc != a->llc) ||
				   (a->llc < 0 && a->node >= 0 && t->cpus[cpu].node != a->node));
	if (group)
		return RTPLACE_EXPLAIN_GROUP;
	if (rank < a->worst)
		return RTPLACE_EXPLAIN_CHANGED;
	sib = explain_busy_sibling(cfg, t, v, claimed, a, cpu);
	if (sib >= 0) {
		*ret_other = sib;
		return RTPLACE_EXPLAIN_SMT;
	}
	if (explain_beaten(cfg, t, v, claimed, res, a, cpu, false)) {
		*ret_other = a->anchor;
		return RTPLACE_EXPLAIN_FARTHER;
	}
	if (cpuset_test(&cfg->noisy, cpu) && explain_beaten(cfg, t, v, claimed, res, a, cpu, true))
		return RTPLACE_EXPLAIN_NOISY;
	return RTPLACE_EXPLAIN_ROTATION;
}

static void explain_one(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
			const uint8_t *claimed, const struct placement_request *req, const struct placement_result *res,
			const struct explain_answer *a, uint32_t cpu, struct rtplace_explain_cpu *ret)
{
	int verdict = explain_filtered(cfg, t, v, req, a, cpu);
	uint32_t map = cpupri_level(v, cpu);
	int32_t other = -1;

	memset(ret, 0, sizeof(*ret));
	ret->cpu = (uint16_t)cpu;
	ret->map_level = (uint8_t)map;
	ret->claim_level = claimed ? claimed[cpu] : 0;
	ret->level = (uint8_t)explain_level(v, claimed, cpu);
	if (cpuset_test(&cfg->isolated, cpu))
		ret->flags |= RTPLACE_EXPLAIN_CPU_F_ISOLATED;
	if (cpuset_test(&cfg->noisy, cpu))
		ret->flags |= RTPLACE_EXPLAIN_CPU_F_NOISY;
	if (verdict < 0 && map >= a->below)
		verdict = RTPLACE_EXPLAIN_BUSY;
	else if (verdict < 0 && ret->claim_level >= a->below)
		verdict = RTPLACE_EXPLAIN_CLAIMED;
	else if (verdict < 0)
		verdict = explain_preferred(cfg, t, v, claimed, req, res, a, cpu, &other);
	for (uint32_t i = 0; verdict == RTPLACE_EXPLAIN_CHOSEN && i < res->n; i++)
		if (res->cpus[i] == cpu)
			ret->rank = (uint16_t)(i + 1);
	ret->verdict = (uint8_t)verdict;
	ret->other = other;
}

void explain_classify(const struct placement_config *cfg, const struct topo *t, const struct cpupri_view *v,
		      const uint8_t *claimed, const struct placement_request *req, const struct placement_result *res,
		      uint32_t first, uint32_t n, struct rtplace_explain_cpu *ret)
{
	struct explain_answer a;

	explain_answer_of(cfg, t, req, res, &a);
	for (uint32_t i = 0; i < n; i++)
		explain_one(cfg, t, v, claimed, req, res, &a, first + i, &ret[i]);
}

void explain_kernel_facts(const struct kenv *k, struct explain_thread_facts *f)
{
	f->fair_share_ppm = k->fair.state == KENV_DL_READ ? k->fair.share_max_ppm : 0;
	f->ext_share_ppm = k->ext.state == KENV_DL_READ ? k->ext.share_max_ppm : 0;
	f->scx_loaded = k->scx.state == KENV_SCX_ENABLED;
	f->scx_switch_all = f->scx_loaded && k->scx.switch_all == 1;
}

/* Appends obstacle kind (value, limit) to ret if there is room. */
static void explain_add(struct rtplace_explain_obstacle *ret, uint32_t max, uint32_t *n, uint16_t kind, int64_t value,
			int64_t limit)
{
	if (*n < max)
		ret[(*n)++] = (struct rtplace_explain_obstacle){ .kind = kind, .value = value, .limit = limit };
}

void explain_thread(const struct explain_thread_facts *f, struct rtplace_explain_obstacle *ret, uint32_t max,
		    uint32_t *ret_n)
{
	bool nice = f->cap_sys_nice && f->cap_daemon_userns;
	uint32_t n = 0;

	if (!nice && f->rtprio_soft >= 0 && f->rtprio_soft < f->prio)
		explain_add(ret, max, &n, RTPLACE_OBSTACLE_RTPRIO, f->rtprio_soft, f->rtprio_hard);
	if (f->cap_sys_nice && !f->cap_daemon_userns)
		explain_add(ret, max, &n, RTPLACE_OBSTACLE_CAP_USERNS, 0, 0);
	if (f->budget_missing)
		explain_add(ret, max, &n, RTPLACE_OBSTACLE_RT_BUDGET, 0, f->budget_us);
	if (f->rt_known && f->rt_runtime_us >= 0 && f->rt_runtime_us < f->rt_period_us)
		explain_add(ret, max, &n, RTPLACE_OBSTACLE_THROTTLING, f->rt_runtime_us, f->rt_period_us);
	if (f->fair_share_ppm)
		explain_add(ret, max, &n, RTPLACE_OBSTACLE_DL_SERVER, f->fair_share_ppm, 0);
	if (f->ext_share_ppm)
		explain_add(ret, max, &n, RTPLACE_OBSTACLE_DL_SERVER, f->ext_share_ppm, 1);
	if (f->scx_loaded)
		explain_add(ret, max, &n, RTPLACE_OBSTACLE_SCHED_EXT, f->scx_switch_all, 0);
	*ret_n = n;
}

void explain_obstacle_words(const struct rtplace_explain_obstacle *o, int prio, const char *detail,
			    struct rtplace_reason *ret)
{
	switch (o->kind) {
	case RTPLACE_OBSTACLE_RTPRIO:
		reason_set(ret, "RLIMIT_RTPRIO %" PRId64 " is below rt%d and the thread has no CAP_SYS_NICE: ", o->value,
			   prio);
		if (o->limit < 0 || o->limit >= prio)
			reason_append(ret, "raise the soft limit (ulimit -r %d, or LimitRTPRIO= in its unit)", prio);
		else
			reason_append(ret, "the hard limit is %" PRId64 ": raise it as root (prlimit --rtprio=%d, "
				      "/etc/security/limits.conf rtprio, LimitRTPRIO=) or grant CAP_SYS_NICE",
				      o->limit, prio);
		break;
	case RTPLACE_OBSTACLE_CAP_USERNS:
		reason_set(ret, "CAP_SYS_NICE only inside a user namespace, which the kernel does not count for RT "
				"policies: give the thread RLIMIT_RTPRIO %d, or run it outside that namespace", prio);
		break;
	case RTPLACE_OBSTACLE_RT_BUDGET:
		reason_set(ret, "%s", detail && detail[0] ? detail : "its cpu cgroup has no RT budget");
		break;
	case RTPLACE_OBSTACLE_THROTTLING:
		reason_set(ret, "RT throttling: RT threads may run %" PRId64 " us of every %" PRId64
			   " us on a CPU (kernel.sched_rt_runtime_us); a thread that needs more must sleep, or set "
			   "the sysctl to -1", o->value, o->limit);
		break;
	case RTPLACE_OBSTACLE_DL_SERVER:
		reason_set(ret, "the %s deadline server keeps up to %" PRId64 ".%01" PRId64 "%% of each CPU for the "
			   "tasks RT threads starve: a thread that runs without sleeping loses that time; where it "
			   "must not, write 0 to /sys/kernel/debug/sched/%s_server/cpuN/runtime for its CPU",
			   o->limit ? "ext" : "fair", o->value / 10000, o->value / 1000 % 10, o->limit ? "ext" : "fair");
		break;
	case RTPLACE_OBSTACLE_SCHED_EXT:
		reason_set(ret, "a sched_ext scheduler is loaded%s: an RT thread that runs without sleeping starves "
			   "the tasks it keeps on that CPU and the kernel then ejects the scheduler (scx#1202); let "
			   "the thread sleep, or keep it to CPUs the scheduler does not confine tasks to",
			   o->value ? " for every normal task" : "");
		break;
	default:
		reason_set(ret, "obstacle %u (unknown to this rtplacectl)", o->kind);
		break;
	}
}

const char *explain_verdict_name(unsigned verdict)
{
	static const char *const names[RTPLACE_EXPLAIN_COUNT] = {
		[RTPLACE_EXPLAIN_CHOSEN] = "chosen",
		[RTPLACE_EXPLAIN_NOT_ALLOWED] = "not-allowed",
		[RTPLACE_EXPLAIN_OFFLINE] = "offline",
		[RTPLACE_EXPLAIN_HOUSEKEEPING] = "housekeeping",
		[RTPLACE_EXPLAIN_OTHER_NODE] = "other-node",
		[RTPLACE_EXPLAIN_ISOLATED] = "isolated",
		[RTPLACE_EXPLAIN_NOT_ISOLATED] = "not-isolated",
		[RTPLACE_EXPLAIN_BUSY] = "busy",
		[RTPLACE_EXPLAIN_CLAIMED] = "claimed",
		[RTPLACE_EXPLAIN_ISOLATION_SIDE] = "isolation-side",
		[RTPLACE_EXPLAIN_KIND] = "kind",
		[RTPLACE_EXPLAIN_BUSIER] = "busier",
		[RTPLACE_EXPLAIN_GROUP] = "group",
		[RTPLACE_EXPLAIN_SMT] = "smt-sibling",
		[RTPLACE_EXPLAIN_FARTHER] = "farther",
		[RTPLACE_EXPLAIN_NOISY] = "irq-noise",
		[RTPLACE_EXPLAIN_ROTATION] = "rotation",
		[RTPLACE_EXPLAIN_CHANGED] = "changed",
	};

	return verdict < RTPLACE_EXPLAIN_COUNT ? names[verdict] : "?";
}
