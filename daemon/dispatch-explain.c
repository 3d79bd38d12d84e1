/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * EXPLAIN: a QUERY's dry run (rtplace-proto.h). The answer is the
 * engine's own placement on a copy of its rotor (engine_place_dry()), the
 * verdicts explain_classify()'s of that answer; what this file adds is
 * what the requester may be told of each CPU (the thread running there
 * and a claim's holder, as CPUS and CLAIM would show them) and the facts
 * about the thread that would run there. Who may query may explain; no
 * claim is made, so no claim limit applies.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch-handlers.h"
#include "explain.h"
#include "log.h"
#include "procfs.h"
#include "rtbudget.h"

/* The thread that would run there: the claim's owner process when the
 * query names one, else the requester. 0, or -errno once m is answered. */
static int dispatch_explain_thread(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m,
				   pid_t *ret)
{
	const struct rtplace_query *q = &m->explain.query;

	*ret = peer->pid;
	return q->owner_pid ? dispatch_claims_owner(d, peer, m, q->owner_pid, ret) : 0;
}

/* A limit as explain.h counts it: -1 for unlimited. */
static int64_t dispatch_explain_limit(uint64_t limit)
{
	return limit == AUTH_RLIM_INFINITY || limit > INT64_MAX ? -1 : (int64_t)limit;
}

/*
 * What stops thread pid from getting the query's policy, into the reply
 * (explain_thread()'s list; the RT budget's fix as its detail). The
 * requester's credentials are its connection's; an owner process's are
 * read from /proc. A fact that cannot be read is left out.
 */
static void dispatch_explain_obstacles(struct dispatch *d, struct server_peer *peer, const struct rtplace_query *q,
				       pid_t pid, struct rtplace_explain_reply *er)
{
	const char *proc = engine_proc_root(d->engine);
	const struct engine_host *host = engine_host(d->engine);
	struct explain_thread_facts f = {
		.prio = q->prio,
		.rtprio_soft = -1,
		.rtprio_hard = -1,
		.rt_known = host->rt_known,
		.rt_runtime_us = host->rt.runtime_us,
		.rt_period_us = host->rt.period_us,
	};
	struct auth_creds uid_only, owner;
	const struct auth_creds *creds = &owner;
	struct rtbudget_finding budget;
	struct rtplace_reason fix;
	uint64_t soft, hard;
	char cgroup[4096];
	uint32_t n;
	uid_t uid;

	if (pid == peer->pid)
		creds = dispatch_claims_creds(d, peer, &uid_only);
	else if (procfs_owner(proc, pid, &uid) < 0 || auth_creds_read(proc, pid, uid, 0, &owner) < 0)
		creds = NULL;
	if (creds) {
		f.cap_sys_nice = creds->capeff_sys_nice;
		f.cap_daemon_userns = creds->userns_daemon;
	}
	if (auth_read_rtprio_limits(proc, pid, &soft, &hard) == 0) {
		f.rtprio_soft = dispatch_explain_limit(soft);
		f.rtprio_hard = dispatch_explain_limit(hard);
	}
	if (procfs_read(proc, pid, "cgroup", cgroup, sizeof(cgroup)) >= 0 &&
	    rtbudget_find(cgroup, RTBUDGET_CGROUP_ROOT, &budget) == 0) {
		f.budget_missing = true;
		f.budget_us = budget.budget_us;
		rtbudget_explain(&budget, &fix);
		proto_set_string(er->detail, sizeof(er->detail), fix.text);
	}
	explain_kernel_facts(kernel_env_get(engine_kernel_env(d->engine)), &f);
	explain_thread(&f, er->obstacles, RTPLACE_EXPLAIN_OBSTACLES_MAX, &n);
	er->nobstacles = (uint8_t)n;
}

/* What er's CPUs are as peer may see them: the thread running there, the
 * claim's holder, the host's isolation besides placement's. */
static void dispatch_explain_show(struct dispatch *d, struct server_peer *peer, struct rtplace_explain_reply *er)
{
	const struct topo *t = engine_topo(d->engine);
	const struct engine_host *host = engine_host(d->engine);
	bool threads = levels_source_has_threads(engine_levels(d->engine));
	struct rtplace_cpumask isolated;
	struct pidmap_view view;

	engine_isolated_cpus(d->engine, &isolated);
	cpuset_or(&isolated, &isolated, &host->iso.isolated);
	dispatch_view(d, peer, &view);
	for (uint32_t i = 0; i < er->count; i++) {
		struct rtplace_explain_cpu *e = &er->cpus[i];
		const struct claim *cl = claims_on_cpu(engine_claims(d->engine), e->cpu);
		uint32_t queued;
		pid_t holder;

		if (cpuset_test(&isolated, e->cpu))
			e->flags |= RTPLACE_EXPLAIN_CPU_F_ISOLATED;
		if (cpuset_test(&host->iso.nohz_full, e->cpu))
			e->flags |= RTPLACE_EXPLAIN_CPU_F_NOHZ_FULL;
		if (threads && cpuset_test(&t->online, e->cpu) && e->map_level != LEVEL_OFFLINE)
			dispatch_views_running(d, &view, e->cpu, &e->pid, &queued, e->comm, sizeof(e->comm));
		e->claim_level = cl ? cl->level : 0;
		if (!cl)
			continue;
		e->claim_id = cl->id;
		holder = dispatch_claims_holder(d, peer, cl, e->claim_comm, sizeof(e->claim_comm));
		e->flags |= holder < 0 ? RTPLACE_EXPLAIN_CPU_F_CLAIM_OTHER_USER : RTPLACE_EXPLAIN_CPU_F_CLAIM_UID;
		e->claim_uid = holder < 0 ? 0 : cl->uid;
		if (holder > 0) {
			e->flags |= RTPLACE_EXPLAIN_CPU_F_CLAIM_PID;
			e->claim_pid = (int32_t)holder;
		}
	}
}

void dispatch_explain(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	const struct rtplace_query *q = &m->explain.query;
	struct rtplace_explain_reply *er = &d->reply.explain_reply;
	const struct topo *t = engine_topo(d->engine);
	struct placement_request req = dispatch_placement_request(q);
	struct placement_result *res = &d->placed;
	const uint8_t *claimed;
	struct rtplace_reason why, note;
	uint64_t lease;
	pid_t thread;
	int r;

	/* Like LOCAL: an older client never learns of verdicts it cannot read. */
	if (m->hdr.version < 3) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, -EOPNOTSUPP,
				    "explain needs protocol version 3");
		return;
	}
	if (dispatch_explain_thread(d, peer, m, &thread) < 0)
		return;
	r = engine_place_dry(d->engine, &req, &why, res, &claimed);
	if (r == -EINVAL || r == -ENOMEM) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r, why.text);
		return;
	}
	proto_msg_init(&d->reply, RTPLACE_MSG_EXPLAIN_REPLY, m->hdr.request_id);
	er->total = t->ncpus;
	er->first = m->explain.first;
	er->count = t->ncpus - er->first < RTPLACE_CPUS_PAGE ? t->ncpus - er->first : RTPLACE_CPUS_PAGE;
	er->result = r;
	er->nchosen = (uint16_t)res->n;
	er->level = (uint8_t)(res->n ? res->levels[0] : LEVEL_OFFLINE);
	for (uint32_t i = 1; i < res->n; i++)
		er->level = res->levels[i] > er->level ? res->levels[i] : er->level;
	if (q->flags & RTPLACE_QUERY_F_CLAIM)
		dispatch_claims_terms(d, peer, q, &er->claim_level, &lease, &note);
	explain_classify(engine_placement(d->engine), t, engine_view(d->engine), claimed, &req, res, er->first,
			 er->count, er->cpus);
	dispatch_explain_show(d, peer, er);
	dispatch_explain_obstacles(d, peer, q, thread, er);
	dispatch_send_reply(d, peer, m);
}
