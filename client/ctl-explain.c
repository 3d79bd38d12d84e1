/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `rtplacectl explain`: why `query` with the same options would answer
 * what it would (rtplace_explain()), one line per CPU of the allowed set
 * and one per obstacle of the thread, each in words that name the fix;
 * under --json one object (rtplacectl(1), JSON OUTPUT).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "cpuset.h"
#include "ctl.h"
#include "explain.h"
#include "levels.h"

/* Who holds e's claim, as the daemon let us see it: "claim 12 (uid 1000,
 * pid 4242 synth)" or "claim 12 of another user". */
static void ctl_explain_holder(const struct rtplace_explain_cpu *e, char *buf, size_t len)
{
	if (e->flags & RTPLACE_EXPLAIN_CPU_F_CLAIM_PID)
		snprintf(buf, len, "claim %" PRIu64 " (uid %u, pid %d %s)", e->claim_id, e->claim_uid, (int)e->claim_pid,
			 e->claim_comm);
	else if (e->flags & RTPLACE_EXPLAIN_CPU_F_CLAIM_UID)
		snprintf(buf, len, "claim %" PRIu64 " (uid %u)", e->claim_id, e->claim_uid);
	else
		snprintf(buf, len, "claim %" PRIu64 " of another user", e->claim_id);
}

/* What runs on e's CPU: "rt80 (pid 77 spin)", "idle". */
static void ctl_explain_running(const struct rtplace_explain_cpu *e, char *buf, size_t len)
{
	if (e->pid)
		snprintf(buf, len, "%s (pid %d %s)", rtplace_level_name(e->map_level), (int)e->pid, e->comm);
	else
		snprintf(buf, len, "%s", rtplace_level_name(e->map_level));
}

/* The passed-over verdicts of the filters, in words with their fix. */
static void ctl_explain_filtered(const struct rtplace_explain_cpu *e, const struct rtplace_request *req, char *buf,
				 size_t len)
{
	switch (e->verdict) {
	case RTPLACE_EXPLAIN_OFFLINE:
		snprintf(buf, len, "offline, or not in the daemon's map: bring it online "
			 "(echo 1 > /sys/devices/system/cpu/cpu%u/online)", e->cpu);
		break;
	case RTPLACE_EXPLAIN_HOUSEKEEPING:
		snprintf(buf, len, "a housekeeping CPU, kept for the system's own work: [placement] housekeeping-cpus "
			 "in rtplaced.conf");
		break;
	case RTPLACE_EXPLAIN_OTHER_NODE:
		snprintf(buf, len, "not on node %d: drop --node", req->node);
		break;
	case RTPLACE_EXPLAIN_ISOLATED:
		snprintf(buf, len, "isolated, and this request keeps off isolated CPUs ([placement] isolated = avoid, "
			 "or a thread without an RT policy)");
		break;
	case RTPLACE_EXPLAIN_NOT_ISOLATED:
		snprintf(buf, len, "not isolated, and answers keep to the isolated CPUs ([placement] isolated = only, "
			 "or housekeeping-cpus unset while CPUs are isolated: set housekeeping-cpus)");
		break;
	default:
		snprintf(buf, len, "%s", explain_verdict_name(e->verdict));
		break;
	}
}

/* The verdicts of levels and claims, in words with their fix. */
static void ctl_explain_level(const struct rtplace_explain_cpu *e, const struct rtplace_request *req, char *buf,
			      size_t len)
{
	char what[64], holder[96];

	ctl_explain_running(e, what, sizeof(what));
	ctl_explain_holder(e, holder, sizeof(holder));
	if (e->verdict == RTPLACE_EXPLAIN_BUSY)
		snprintf(buf, len, "now %s, at or above rt%d: ask at a higher priority or for other CPUs", what,
			 req->prio);
	else if (e->claim_level == LEVEL_DL)
		snprintf(buf, len, "claimed exclusively by %s: release it ('rtplacectl release %" PRIu64
			 "', its user or root) or have it asked without --exclusive", holder, e->claim_id);
	else
		snprintf(buf, len, "claimed at %s by %s: release it ('rtplacectl release %" PRIu64
			 "', its user or root) or ask above rt%d", rtplace_level_name(e->claim_level), holder,
			 e->claim_id, level_rt_priority(e->claim_level));
}

/* e's line after "CPU N: ". */
static void ctl_explain_words(const struct rtplace_explain_cpu *e, const struct rtplace_request *req,
			      const struct rtplace_explanation *x, char *buf, size_t len)
{
	char what[64];

	ctl_explain_running(e, what, sizeof(what));
	switch (e->verdict) {
	case RTPLACE_EXPLAIN_CHOSEN:
		snprintf(buf, len, "chosen (pick %u), now %s", e->rank, what);
		break;
	case RTPLACE_EXPLAIN_BUSY:
	case RTPLACE_EXPLAIN_CLAIMED:
		ctl_explain_level(e, req, buf, len);
		break;
	case RTPLACE_EXPLAIN_ISOLATION_SIDE:
		snprintf(buf, len, e->flags & RTPLACE_EXPLAIN_CPU_F_ISOLATED
					   ? "isolated, but the CPUs that are not gave a lower level or more CPUs"
					   : "not isolated: [placement] isolated = prefer puts isolated CPUs first");
		break;
	case RTPLACE_EXPLAIN_KIND:
		snprintf(buf, len, "a less performant CPU kind, and enough of the most performant were free");
		break;
	case RTPLACE_EXPLAIN_BUSIER:
		snprintf(buf, len, "now %s, busier than the chosen CPUs (%s): ask again when it is quieter", what,
			 rtplace_level_name(x->level));
		break;
	case RTPLACE_EXPLAIN_GROUP:
		snprintf(buf, len, "outside the cache or node the %u CPUs were kept in together: ask for fewer, or "
			 "name it with --cpu-list", req->count);
		break;
	case RTPLACE_EXPLAIN_SMT:
		snprintf(buf, len, "its SMT sibling CPU %d is busy or an earlier pick ([placement] avoid-smt-siblings)", e->other);
		break;
	case RTPLACE_EXPLAIN_FARTHER:
		snprintf(buf, len, "as good, but farther from CPU %d (--near, else the first pick)", e->other);
		break;
	case RTPLACE_EXPLAIN_NOISY:
		snprintf(buf, len, "as good, but with interrupt noise; quieter CPUs come first ([placement] irq-tiebreak)");
		break;
	case RTPLACE_EXPLAIN_ROTATION:
		snprintf(buf, len, "as good as the chosen ones; answers rotate, so the next query may get it");
		break;
	case RTPLACE_EXPLAIN_CHANGED:
		snprintf(buf, len, "its level changed while the daemon answered: ask again");
		break;
	default:
		ctl_explain_filtered(e, req, buf, len);
		break;
	}
}

static const char *ctl_explain_obstacle_names[RTPLACE_OBSTACLE_COUNT] = {
	[RTPLACE_OBSTACLE_RTPRIO] = "rlimit-rtprio",
	[RTPLACE_OBSTACLE_CAP_USERNS] = "cap-sys-nice-userns",
	[RTPLACE_OBSTACLE_RT_BUDGET] = "rt-budget",
	[RTPLACE_OBSTACLE_THROTTLING] = "rt-throttling",
	[RTPLACE_OBSTACLE_DL_SERVER] = "deadline-server",
	[RTPLACE_OBSTACLE_SCHED_EXT] = "sched-ext",
};

static const char *ctl_explain_result(int r)
{
	return r == 0 ? "ok" : r == -ENOENT ? "none-below" : "no-candidate";
}

/* e as the explained_cpu object of rtplacectl(1)'s JSON OUTPUT. */
static void ctl_explain_json_cpu(const struct rtplace_explain_cpu *e, const char *why)
{
	printf("{\"cpu\": %u, \"verdict\": \"%s\", \"rank\": ", e->cpu, explain_verdict_name(e->verdict));
	if (e->rank)
		printf("%u", e->rank);
	else
		printf("null");
	printf(", \"level\": \"%s\", \"running_level\": \"%s\", \"pid\": %d, \"comm\": ",
	       rtplace_level_name(e->level), rtplace_level_name(e->map_level), (int)e->pid);
	ctl_json_string(e->comm);
	if (e->claim_id)
		printf(", \"claim\": %" PRIu64 ", \"claim_level\": \"%s\", \"other_user\": %s", e->claim_id,
		       rtplace_level_name(e->claim_level),
		       e->flags & RTPLACE_EXPLAIN_CPU_F_CLAIM_OTHER_USER ? "true" : "false");
	else
		printf(", \"claim\": null, \"claim_level\": null, \"other_user\": null");
	if (e->flags & RTPLACE_EXPLAIN_CPU_F_CLAIM_UID)
		printf(", \"owner_uid\": %u", e->claim_uid);
	else
		printf(", \"owner_uid\": null");
	if (e->flags & RTPLACE_EXPLAIN_CPU_F_CLAIM_PID) {
		printf(", \"owner_pid\": %d, \"owner_comm\": ", (int)e->claim_pid);
		ctl_json_string(e->claim_comm);
	} else {
		printf(", \"owner_pid\": null, \"owner_comm\": null");
	}
	printf(", \"isolated\": %s, \"nohz_full\": %s, \"irq_noise\": %s, \"other_cpu\": ",
	       e->flags & RTPLACE_EXPLAIN_CPU_F_ISOLATED ? "true" : "false",
	       e->flags & RTPLACE_EXPLAIN_CPU_F_NOHZ_FULL ? "true" : "false",
	       e->flags & RTPLACE_EXPLAIN_CPU_F_NOISY ? "true" : "false");
	if (e->other >= 0)
		printf("%d", (int)e->other);
	else
		printf("null");
	printf(", \"why\": ");
	ctl_json_string(why);
	printf("}");
}

static void ctl_explain_json(const struct rtplace_explanation *x, const struct rtplace_request *req, const char *list)
{
	char words[512];

	printf("{\"result\": \"%s\", \"chosen\": [", ctl_explain_result(x->result));
	for (unsigned i = 0; i < x->nchosen; i++)
		printf("%s%d", i ? ", " : "", x->chosen[i]);
	printf("], \"cpu_list\": \"%s\", \"level\": ", list);
	if (x->nchosen)
		printf("\"%s\"", rtplace_level_name(x->level));
	else
		printf("null");
	printf(", \"claim_level\": ");
	if (req->flags & RTPLACE_QUERY_F_CLAIM)
		printf("\"%s\"", rtplace_level_name(x->claim_level));
	else
		printf("null");
	printf(", \"cpus\": [");
	for (size_t c = 0, n = 0; c < x->ncpus; c++) {
		if (x->cpus[c].verdict == RTPLACE_EXPLAIN_NOT_ALLOWED)
			continue;
		ctl_explain_words(&x->cpus[c], req, x, words, sizeof(words));
		printf("%s", n++ ? ", " : "");
		ctl_explain_json_cpu(&x->cpus[c], words);
	}
	printf("], \"obstacles\": [");
	for (unsigned i = 0; i < x->nobstacles; i++) {
		const struct rtplace_explain_obstacle *o = &x->obstacles[i];
		struct rtplace_reason why;

		explain_obstacle_words(o, req->prio, x->detail, &why);
		printf("%s{\"kind\": \"%s\", \"value\": %" PRId64 ", \"limit\": %" PRId64 ", \"why\": ", i ? ", " : "",
		       o->kind < RTPLACE_OBSTACLE_COUNT ? ctl_explain_obstacle_names[o->kind] : "?", o->value, o->limit);
		ctl_json_string(why.text);
		printf("}");
	}
	printf("]}\n");
}

static void ctl_explain_text(const struct rtplace_explanation *x, const struct rtplace_request *req, const char *list)
{
	char words[512];

	if (x->nchosen)
		printf("answer  %s (%s)\n", list, rtplace_level_name(x->level));
	else
		printf("answer  none: %s\n", x->result == -ENOENT ? "no CPU below the priority in the allowed set"
								  : "no managed online CPU in the allowed set");
	for (size_t c = 0; c < x->ncpus; c++) {
		const struct rtplace_explain_cpu *e = &x->cpus[c];

		if (e->verdict == RTPLACE_EXPLAIN_NOT_ALLOWED)
			continue;
		ctl_explain_words(e, req, x, words, sizeof(words));
		printf("CPU %u: %s\n", e->cpu, words);
	}
	for (unsigned i = 0; i < x->nobstacles; i++) {
		struct rtplace_reason why;

		explain_obstacle_words(&x->obstacles[i], req->prio, x->detail, &why);
		printf("thread  %s\n", why.text);
	}
	if (!x->nobstacles)
		printf("thread  nothing stops it from running at rt%d\n", req->prio);
}

int ctl_explain(struct ctl *c, int argc, char **argv)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct ctl_query_opts q = { .owner = CTL_OWNER_SHELL };
	struct rtplace_explanation *x = NULL;
	struct rtplace_cpumask chosen;
	char list[CPUSET_LIST_MAX];
	int r;

	req.prio = 0;
	r = ctl_query_parse(c, argc, argv, &req, &q);
	if (r != CTL_GO_ON)
		return r;
	r = ctl_connect(c);
	if (r)
		return r;
	r = rtplace_explain(c->rp, &req, &x);
	if (r < 0)
		return ctl_fail(c, r == -EOPNOTSUPP ? "this rtplaced does not explain (older than explain)"
						    : "explain refused",
				r);
	cpuset_zero(&chosen);
	for (unsigned i = 0; i < x->nchosen; i++)
		cpuset_set(&chosen, (unsigned)x->chosen[i]);
	if (cpuset_format(&chosen, list, sizeof(list)) < 0)
		snprintf(list, sizeof(list), "?");
	if (c->json)
		ctl_explain_json(x, &req, list);
	else
		ctl_explain_text(x, &req, list);
	rtplace_explanation_free(x);
	return EX_OK;
}
