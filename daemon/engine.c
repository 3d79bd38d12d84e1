/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "claims-state.h"
#include "engine.h"
#include "isolation-systemd.h"
#include "isolation.h"
#include "log.h"
#include "loop.h"
#include "quota.h"
#include "record.h"

struct engine_listener {
	engine_claim_ended_fn *fn;
	void *ctx;
};

struct engine {
	struct event_base *base;
	struct levels_source *levels;
	const struct topo *topo;         /* the levels source's, kept current on hotplug */
	const char *proc_root;
	const char *host_root;
	const struct irqnoise *irqnoise; /* NULL when simulating */
	struct cpupri_view view;
	struct config cfg;
	struct engine_host host;         /* the host's RT configuration, as last read */
	struct kernel_env *kenv;         /* the kernel's RT environment, read with host */
	struct placement_config pcfg;
	struct auth_policy policy;       /* [moves]: what moves and claims may do */
	struct rtplace_cpumask housekeeping; /* housekeeping-cpus, or derived from isolation */
	struct placement_ctx *pctx;      /* derived from pcfg, topo and view; rebuilt on reload */
	struct placement_state *pstate;  /* what answering writes; made for pctx, rebuilt with it */
	uint32_t rotor;                  /* every answer's and every pick's */
	struct placement_result picked;  /* engine_pick()'s answer: no allocation per pick */
	struct claims *claims;
	char state_path[CONFIG_SOCKET_MAX + 16]; /* owner-bound claims across restarts */
	struct claims_state *state;      /* NULL until engine_open_journal() */
	char isolation_path[CONFIG_SOCKET_MAX + 16]; /* what isolation changed, to be undone */
	struct isolation *iso;           /* NULL until engine_open_journal(), or without a usable journal */
	struct isolation_systemd *iso_systemd; /* partitions as systemd's scopes; NULL: on cgroupfs */
	claims_life_fn *life;            /* the subscribers' watcher of claims made and ended */
	void *life_ctx;
	engine_isolation_fn *isolation;  /* the subscribers' watcher of CPUs isolated and given back */
	void *isolation_ctx;
	struct snapshot snap;            /* what LOCAL hands out; kept current after every change */
	struct event *snap_later;        /* publishes once a claim that is ending has gone */
	struct engine_listener listeners[ENGINE_LISTENERS_MAX];
	unsigned nlisteners;
	uint64_t start_ms;
	struct engine_counters counters;
};

/* pcfg's noisy CPUs from the last interrupt shares: none without them or
 * with the tie-breaker off. */
static void engine_noisy(struct engine *e)
{
	if (e->irqnoise && e->cfg.placement.irq_tiebreak)
		irqnoise_noisy(e->irqnoise, &e->pcfg.managed, &e->pcfg.noisy);
	else
		cpuset_zero(&e->pcfg.noisy);
}

void engine_publish(struct engine *e, bool force)
{
	snapshot_publish(&e->snap, e->topo, &e->pcfg, &e->housekeeping, claims_stamped(e->claims), force);
}

void engine_irqnoise_sampled(struct engine *e)
{
	engine_noisy(e);
	placement_ctx_set_noisy(e->pctx, &e->pcfg.noisy);
	/* Local readers answer with the same noise. */
	engine_publish(e, true);
}

/* The placement rules and their context from e->cfg, e->host and the
 * topology. Without memory for a new context, answers keep the rules they
 * had. */
static void engine_placement_rules(struct engine *e)
{
	struct placement_ctx *pctx = NULL;
	struct placement_state *pstate = NULL;

	config_placement(&e->cfg, e->topo, &e->host.iso.isolated, &e->pcfg);
	config_housekeeping(&e->cfg, e->topo, &e->host.iso.isolated, &e->housekeeping);
	engine_noisy(e);
	if (!e->pctx || placement_ctx_new(&e->pcfg, e->topo, &e->view, &pctx) < 0)
		return;
	if (placement_state_new(pctx, &pstate) < 0) {
		placement_ctx_free(pctx);
		return;
	}
	placement_state_free(e->pstate);
	placement_ctx_free(e->pctx);
	e->pctx = pctx;
	e->pstate = pstate;
}

int engine_check_config(const struct engine *e, const struct config *cfg, struct rtplace_reason *reason)
{
	struct placement_config next;
	struct rtplace_cpumask lost, held;
	const struct claim *cl;
	char cpus[64];

	config_placement(cfg, e->topo, &e->host.iso.isolated, &next);
	cpuset_andnot(&lost, &e->pcfg.managed, &next.managed);
	for (unsigned i = 0; !cpuset_empty(&lost) && (cl = claims_at(e->claims, i)); i++) {
		cpuset_and(&held, &cl->cpus, &lost);
		if (cpuset_empty(&held))
			continue;
		cpuset_format(&held, cpus, sizeof(cpus));
		reason_set(reason,
			   "[placement] housekeeping-cpus would take CPU %s from placement while claim %u holds it "
			   "(owner pid %d): release the claim (rtplacectl release %u) or leave the CPU managed",
			   cpus, cl->id, (int)cl->pid, cl->id);
		return -EBUSY;
	}
	return 0;
}

void engine_configure(struct engine *e, const struct config *cfg)
{
	e->cfg = *cfg;
	engine_placement_rules(e);
	auth_policy_from_config(cfg, &e->policy);
	engine_publish(e, true);
}

/* [isolation] turns something on. */
static bool engine_isolation_on(const struct engine *e)
{
	return e->cfg.isolation.partition || e->cfg.isolation.irqs || e->cfg.isolation.workqueues;
}

bool engine_isolates(const struct engine *e)
{
	return e->iso && engine_isolation_on(e);
}

void engine_isolated_cpus(const struct engine *e, struct rtplace_cpumask *ret)
{
	cpuset_zero(ret);
	if (e->iso)
		isolation_cpus(e->iso, ret);
}

/* The ISOLATION_RELEASED record's code for a claim's end (claims.h). */
static uint8_t engine_isolation_end(uint32_t what)
{
	switch (what) {
	case RTPLACE_CLAIM_ENDED_EXPIRED:
		return RTPLACE_ISOLATION_END_EXPIRED;
	case RTPLACE_CLAIM_ENDED_OWNER_EXITED:
		return RTPLACE_ISOLATION_END_OWNER_EXITED;
	case RTPLACE_CLAIM_ENDED_REVOKED:
		return RTPLACE_ISOLATION_END_REVOKED;
	default:
		return RTPLACE_ISOLATION_END_RELEASED;
	}
}

/* Gives isolated claim cl's CPUs back to the machine, telling the
 * subscribers why (RTPLACE_ISOLATION_END_*) when they were isolated. */
static void engine_unisolate(struct engine *e, const struct claim *cl, uint8_t why)
{
	struct rtplace_reason reason = { "" };
	int r = isolation_release(e->iso, cl->id, &reason);

	if (r == -ENOENT)
		return;
	if (r < 0 && reason.text[0])
		log_warning_ratelimited("claim %u: its CPUs' isolation is not all undone: %s (retried at restart)",
					cl->id, reason.text);
	if (e->isolation)
		e->isolation(cl, RTPLACE_RECORD_ISOLATION_RELEASED, why, e->isolation_ctx);
}

/* Every claim's life passes here (claims_watch_life()): an isolated
 * claim's CPUs come back to the machine however it ended, then the
 * subscribers hear of it. */
static void engine_claim_life_cb(const struct claim *cl, uint32_t what, void *ctx)
{
	struct engine *e = ctx;

	if (what != CLAIMS_LIFE_CREATED && cl->isolated && e->iso)
		engine_unisolate(e, cl, engine_isolation_end(what));
	if (e->life)
		e->life(cl, what, e->life_ctx);
}

void engine_watch_life(struct engine *e, claims_life_fn *fn, void *ctx)
{
	e->life = fn;
	e->life_ctx = ctx;
}

void engine_watch_isolation(struct engine *e, engine_isolation_fn *fn, void *ctx)
{
	e->isolation = fn;
	e->isolation_ctx = ctx;
}

void engine_unisolate_all(struct engine *e)
{
	const struct claim *cl;

	if (!e->iso)
		return;
	for (unsigned i = 0; (cl = claims_at(e->claims, i)); i++)
		if (cl->isolated)
			engine_unisolate(e, cl, RTPLACE_ISOLATION_END_STOP);
}

/* The machine as isolation plans with it: the online CPUs of each node,
 * in a malloc'ed *ret_nodes of topo->nnodes, and those the host isolates
 * itself. 0 or -ENOMEM. */
static int engine_isolation_host(const struct engine *e, struct rtplace_cpumask **ret_nodes,
				 struct rtplace_cpumask *ret_other)
{
	const struct topo *t = e->topo;
	struct rtplace_cpumask *nodes = calloc(t->nnodes ? t->nnodes : 1, sizeof(*nodes));

	if (!nodes)
		return -ENOMEM;
	CPUSET_FOREACH(cpu, &t->online)
		if (t->cpus[cpu].node >= 0 && (uint32_t)t->cpus[cpu].node < t->nnodes)
			cpuset_set(&nodes[t->cpus[cpu].node], (unsigned)cpu);
	cpuset_or(ret_other, &e->host.iso.isolated, &e->host.iso.nohz_full);
	*ret_nodes = nodes;
	return 0;
}

/* Tells isolation the machine again (hotplug, host isolation). */
static void engine_isolation_set_host(struct engine *e)
{
	struct rtplace_cpumask *nodes, other;

	if (!e->iso || engine_isolation_host(e, &nodes, &other) < 0)
		return;
	if (isolation_set_host(e->iso, nodes, e->topo->nnodes, &other) < 0)
		log_warning("Failed to tell isolation the CPUs that came and went: out of memory");
	free(nodes);
}

/* Isolates the claims restored with their CPUs isolated again. */
static void engine_isolation_reapply(struct engine *e)
{
	struct rtplace_reason reason = { "" };
	const struct claim *cl;

	for (unsigned i = 0; (cl = claims_at(e->claims, i)); i++) {
		int r;

		if (!cl->isolated)
			continue;
		r = engine_isolates(e) ? isolation_claim(e->iso, cl->id, cl->pid, &cl->cpus, &reason, NULL)
				       : -EOPNOTSUPP;
		if (r < 0)
			log_warning("restored claim %u: its CPUs stay shared: %s", cl->id,
				    engine_isolates(e) ? reason.text : "[isolation] isolates nothing now");
	}
}

/* Under systemd, partitions are scopes it makes (daemon/isolation-systemd.h);
 * without it, or without its bus, rtplaced makes them on cgroupfs. */
static void engine_isolation_systemd(struct engine *e, struct isolation_opts *o)
{
	struct rtplace_reason reason = { "" };
	int r = isolation_systemd_new(&e->iso_systemd, &reason);

	if (r == 0) {
		o->scopes = isolation_systemd_scopes(e->iso_systemd);
		log_info("Isolated partitions are systemd's scopes in rtplace.slice");
	} else if (r != -ENOENT) {
		log_warning("systemd is PID 1 but %s: isolated partitions are made on %s directly", reason.text,
			    e->cfg.isolation.cgroup_root);
	} else {
		log_info("systemd is not PID 1: isolated partitions are made on %s directly",
			 e->cfg.isolation.cgroup_root);
	}
}

/*
 * Isolation's journal beside the claims state: what a killed daemon left
 * isolated is undone, then the claims restored with their CPUs isolated
 * are isolated again. Without a journal it can trust, no claim is
 * isolated (and a claim asking for it is refused, saying so).
 */
static void engine_isolation_open(struct engine *e)
{
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask *nodes = NULL;
	struct isolation_opts o = {
		.proc_root = e->proc_root,
		.sys_root = SYSFS_ROOT,
		.journal = e->isolation_path,
		.owner = geteuid(),
		.n_nodes = e->topo->nnodes,
	};
	int r = engine_isolation_host(e, &nodes, &o.other);

	o.nodes = nodes;
	if (r == 0 && e->cfg.isolation.partition)
		engine_isolation_systemd(e, &o);
	if (r == 0)
		r = isolation_new(&o, &e->cfg, &e->iso, &reason);
	free(nodes);
	if (r < 0) {
		log_error("Failed to open the isolation journal %s: %s; no claim is isolated", e->isolation_path,
			  reason.text[0] ? reason.text : strerror(-r));
		return;
	}
	if (reason.text[0])
		log_warning("The isolation journal %s: %s", e->isolation_path, reason.text);
	r = isolation_restore(e->iso, &reason);
	if (r > 0)
		log_notice("Undid the isolation a previous rtplaced left: %d values and partitions put back", r);
	else if (r < 0)
		log_error("Failed to undo all the isolation a previous rtplaced left: %s", reason.text);
	engine_isolation_reapply(e);
}

/* The host's settings alone (engine_read_host() without the kernel's
 * environment): what follows hotplug. */
static void engine_read_host_settings(struct engine *e)
{
	char sysfs[4096], proc[4096], iso[256], nohz[256];
	struct engine_host *h = &e->host;
	struct rtplace_reason reason;
	int r;

	snprintf(sysfs, sizeof(sysfs), "%s%s", e->host_root ? e->host_root : "", SYSFS_ROOT);
	snprintf(proc, sizeof(proc), "%s%s", e->host_root ? e->host_root : "", PROCFS_ROOT);
	r = sysfs_read_isolation(sysfs, &reason, &h->iso);
	if (r < 0)
		log_error("Failed to read the isolated CPUs: %s; keeping the last ones read", reason.text);
	r = procfs_read_rt_throttle(proc, &h->rt);
	h->rt_known = r == 0 || (h->rt_known && r != -ENOENT);
	if (r < 0 && r != -ENOENT)
		log_error("Failed to read kernel.sched_rt_runtime_us/sched_rt_period_us under %s/sys: %s%s", proc,
			  strerror(-r), h->rt_known ? "; keeping the last values read" : "");
	engine_configure(e, &e->cfg);
	engine_isolation_set_host(e);
	cpuset_format(&h->iso.isolated, iso, sizeof(iso));
	cpuset_format(&h->iso.nohz_full, nohz, sizeof(nohz));
	log_info("Host: isolated CPUs %s, nohz_full CPUs %s, RT throttling %s", iso[0] ? iso : "none",
		 nohz[0] ? nohz : "none", !h->rt_known ? "unknown" : h->rt.runtime_us < 0 ? "off" : "on");
	if (h->rt_known && h->rt.runtime_us >= 0)
		log_info("RT tasks may run %lld us of every %lld us per CPU (kernel.sched_rt_runtime_us)",
			 (long long)h->rt.runtime_us, (long long)h->rt.period_us);
}

void engine_read_host(struct engine *e)
{
	engine_read_host_settings(e);
	kernel_env_read(e->kenv, e->topo->ncpus);
}

const struct engine_host *engine_host(const struct engine *e)
{
	return &e->host;
}

const struct kernel_env *engine_kernel_env(const struct engine *e)
{
	return e->kenv;
}

void engine_refresh_kernel_env(struct engine *e)
{
	kernel_env_refresh(e->kenv);
}

/* Records the end of owner-bound claim cl (gone from the table, or going).
 * A failure is the claim's to suffer alone: it may come back after a
 * restart, to end again when its owner is found gone or its lease over. */
static void engine_journal_end(struct engine *e, const struct claim *cl)
{
	/* Before the journal is open, the first write is of the table as it
	 * is then. */
	int r = e->state ? claims_state_ended(e->state, e->claims, cl) : 0;

	if (r < 0)
		log_warning_ratelimited("Failed to record the end of claim %u in %s: %s", cl->id, e->state_path,
					strerror(-r));
}

static const char *engine_end_reason(uint32_t why)
{
	switch (why) {
	case RTPLACE_CLAIM_ENDED_EXPIRED:
		return "lease expired";
	case RTPLACE_CLAIM_ENDED_OWNER_EXITED:
		return "owner exited";
	default:
		return "revoked, a CPU went offline";
	}
}

/* The claim table's report of a claim that ended on its own or was taken
 * back: counted, logged, journaled, told to the listeners. */
static void engine_claim_ended_cb(const struct claim *cl, uint32_t why, void *ctx)
{
	struct engine *e = ctx;
	char cpus[64];

	e->counters.claims_ended[why == RTPLACE_CLAIM_ENDED_EXPIRED	     ? ENGINE_END_EXPIRED
				 : why == RTPLACE_CLAIM_ENDED_OWNER_EXITED ? ENGINE_END_OWNER_EXITED
									   : ENGINE_END_REVOKED]++;
	cpuset_format(&cl->cpus, cpus, sizeof(cpus));
	log_ratelimited(LOG_INFO, "claim %u on CPUs %s ended: %s", cl->id, cpus, engine_end_reason(why));
	engine_journal_end(e, cl);
	for (unsigned i = 0; i < e->nlisteners; i++)
		e->listeners[i].fn(cl, why, e->listeners[i].ctx);
	/* The table drops the claim after this report: publish then. */
	event_active(e->snap_later, EV_TIMEOUT, 0);
}

static void engine_snap_later_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	engine_publish(arg, false);
}

int engine_on_claim_end(struct engine *e, engine_claim_ended_fn *fn, void *ctx)
{
	if (e->nlisteners == ENGINE_LISTENERS_MAX)
		return -ENOSPC;
	e->listeners[e->nlisteners++] = (struct engine_listener){ .fn = fn, .ctx = ctx };
	return 0;
}

void engine_expire_due(struct engine *e)
{
	claims_expire_due(e->claims, engine_claim_ended_cb, e);
}

/* The source's report of hotplug: claims on CPUs gone end, a reloaded
 * topology rebuilds what derives from it, and the host's partitions (which
 * follow hotplug) are read again. */
static void engine_levels_changed_cb(const struct rtplace_cpumask *gone, bool topology_changed, void *ctx)
{
	struct engine *e = ctx;

	CPUSET_FOREACH(cpu, gone)
		claims_revoke_cpu(e->claims, (uint32_t)cpu, engine_claim_ended_cb, e);
	if (topology_changed)
		engine_configure(e, &e->cfg);
	/* The kernel's environment does not follow hotplug (a deadline
	 * server has a folder for every possible CPU) and reading it costs
	 * 180 ms on 8,192 CPUs: a burst of CPUs coming online would stall the
	 * loop. Only a topology reloaded for CPUs it had not seen reads it
	 * again. */
	if (topology_changed)
		engine_read_host(e);
	else
		engine_read_host_settings(e);
}

int engine_place(struct engine *e, const struct placement_request *req, struct rtplace_reason *why,
		 struct placement_result *ret)
{
	int r;

	/* Leases that ran out free their CPUs for this answer. */
	engine_expire_due(e);
	r = placement_ctx_choose_stamped(e->pctx, e->pstate, claims_stamped(e->claims), &e->rotor, req, why, ret);
	snapshot_rotor(&e->snap, e->rotor);
	return r;
}

int engine_place_dry(struct engine *e, const struct placement_request *req, struct rtplace_reason *why,
		     struct placement_result *ret, const uint8_t **ret_claimed)
{
	uint32_t rotor = e->rotor;

	engine_expire_due(e);
	*ret_claimed = claims_levels(e->claims);
	return placement_ctx_choose_stamped(e->pctx, e->pstate, claims_stamped(e->claims), &rotor, req, why, ret);
}

int engine_pick(struct engine *e, const struct rtplace_cpumask *allowed, int near, uint32_t level,
		const uint8_t *claimed, int *ret_cpu)
{
	int r = placement_ctx_pick(e->pctx, e->pstate, claimed ? claimed : claims_levels(e->claims), &e->rotor,
				   allowed, near, level, &e->picked, ret_cpu);

	snapshot_rotor(&e->snap, e->rotor);
	return r;
}

int engine_claim_admit(struct engine *e, uint32_t client, uid_t uid, struct rtplace_reason *why)
{
	const struct quota_limits limits = {
		.size = CLAIMS_MAX,
		.users = e->cfg.limits.max_claims,
		.per_user = e->cfg.limits.max_claims_per_user,
		.users_key = "max-claims",
		.per_user_key = "max-claims-per-user",
	};
	const struct quota_use use = {
		.uid = claims_count_uid(e->claims, uid),
		.users = claims_count(e->claims) - claims_count_uid(e->claims, 0),
		.all = claims_count(e->claims),
	};
	int r;

	if (client && claims_count_client(e->claims, client) >= e->cfg.limits.max_claims_per_client) {
		reason_set(why, "[limits] max-claims-per-client = %u reached", e->cfg.limits.max_claims_per_client);
		e->counters.claims_refused[ENGINE_LIMIT_PER_CLIENT]++;
		return -EDQUOT;
	}
	r = quota_check(&limits, uid, &use, 1, why);
	if (r < 0)
		e->counters.claims_refused[r == -EDQUOT ? ENGINE_LIMIT_PER_USER
					   : r == -EUSERS ? ENGINE_LIMIT_USERS
							  : ENGINE_LIMIT_TABLE]++;
	return r;
}

/* What the ISOLATED record and the log say of report rep for claim cl. */
static void engine_isolated(struct engine *e, const struct claim *cl, const struct isolation_report *rep)
{
	char cpus[CPUSET_LIST_MAX];
	const uint8_t d = rep->done;

	cpuset_format(&cl->cpus, cpus, sizeof(cpus));
	log_info("claim %u: CPUs %s isolated from%s%s%s%s; %u managed IRQs kept by the kernel, %u values not written%s",
		 cl->id, cpus, d & RTPLACE_ISOLATED_PARTITION ? " other tasks" : "",
		 d & RTPLACE_ISOLATED_IRQS ? " movable IRQs" : "", d & RTPLACE_ISOLATED_WORKQUEUES ? " unbound work" : "",
		 d & RTPLACE_ISOLATED_IRQBALANCE ? " irqbalance" : "", rep->managed, rep->not_written,
		 d & RTPLACE_ISOLATED_IRQBALANCE_UNREACHED ? "; irqbalance runs and its socket did not answer" : "");
	if (e->isolation)
		e->isolation(cl, RTPLACE_RECORD_ISOLATED, d, e->isolation_ctx);
}

/*
 * Isolates the CPUs of claim id, journaled already, for process claimant:
 * 0 with reason a note ("" when all was done) and *rep what was done, or
 * -errno after the claim was withdrawn and its end journaled, reason
 * saying why.
 */
static int engine_isolate(struct engine *e, uint32_t id, pid_t claimant, struct isolation_report *rep,
			  struct rtplace_reason *reason)
{
	const struct claim *cl = claims_find(e->claims, id);
	struct claim gone = *cl;
	int r = engine_isolates(e) ? isolation_claim(e->iso, id, claimant, &cl->cpus, reason, rep) : -EOPNOTSUPP;

	if (r == -EOPNOTSUPP && !engine_isolates(e))
		reason_set(reason, "this daemon isolates nothing ([isolation] in rtplaced.conf turns it on)");
	if (r < 0) {
		claims_withdraw(e->claims, id);
		engine_journal_end(e, &gone);
	}
	return r;
}

int engine_claim(struct engine *e, const struct claim *tmpl, uint64_t lease_ms, pid_t claimant, uint32_t *ret_id,
		 struct rtplace_reason *reason)
{
	struct claim cl = *tmpl;
	struct isolation_report rep;
	struct procfs_stat st;
	uint32_t id;
	int r = 0;

	if (cl.pid) {
		r = procfs_read_stat(e->proc_root, cl.pid, 0, &st);
		cl.pid_start = st.start_time;
	}
	if (r == 0)
		r = claims_add(e->claims, &cl, loop_now_ms(), lease_ms, &id);
	if (r < 0) {
		reason_set(reason, r == -ESRCH    ? "the owner process does not exist"
				   : r == -EMFILE ? "daemon near its descriptor limit"
						  : "cannot record the claim");
		return r;
	}
	reason->text[0] = '\0';
	/* Durable before it is acknowledged: a claim the journal does not
	 * hold could be lost to a crash after the reply. */
	r = e->state ? claims_state_added(e->state, e->claims, claims_find(e->claims, id)) : -EBADF;
	if (r < 0) {
		log_warning_ratelimited("Failed to record claim %u in %s: %s", id, e->state_path, strerror(-r));
		claims_withdraw(e->claims, id);
		reason_set(reason, "cannot record the claim in the state file");
		return r;
	}
	if (cl.isolated) {
		r = engine_isolate(e, id, claimant, &rep, reason);
		if (r < 0)
			return r;
	}
	/* Subscribers hear of it only now: never of a claim withdrawn. */
	claims_made(e->claims, id);
	if (cl.isolated)
		engine_isolated(e, claims_find(e->claims, id), &rep);
	e->counters.claims_created++;
	*ret_id = id;
	return 0;
}

int engine_claim_isolated_if_possible(struct engine *e, const struct claim *tmpl, uint64_t lease_ms,
				      pid_t claimant, uint32_t *ret_id, struct rtplace_reason *reason)
{
	struct rtplace_reason refused;
	struct claim shared = *tmpl;
	int r = engine_claim(e, tmpl, lease_ms, claimant, ret_id, reason);

	/* Isolation refused withdrew the claim (its id is never reused):
	 * made again without, unless what failed was the claim itself. */
	if (r == 0 || !tmpl->isolated || r == -ESRCH || r == -ENOMEM || !e->state)
		return r;
	refused = *reason;
	shared.isolated = false;
	r = engine_claim(e, &shared, lease_ms, claimant, ret_id, reason);
	if (r == 0)
		reason_set(reason, "not isolated: %s", refused.text);
	return r;
}

int engine_claim_cpu(struct engine *e, pid_t pid, uid_t uid, uint32_t level, const struct rtplace_cpumask *allowed,
		     int *ret_cpu, uint32_t *ret_id, struct rtplace_reason *reason)
{
	struct claim tmpl = { .pid = pid, .uid = uid, .level = (uint8_t)level };
	int cpu, r;

	if (!levels_source_live(e->levels)) {
		reason_set(reason, "placement runs on a simulated machine (--topology)");
		return -EOPNOTSUPP;
	}
	r = engine_claim_admit(e, 0, uid, reason);
	if (r < 0)
		return r;
	engine_expire_due(e);
	r = engine_pick(e, allowed, -1, level, NULL, &cpu);
	if (r < 0) {
		return placement_pick_reason(r, level, reason);
	}
	cpuset_set(&tmpl.cpus, (unsigned)cpu);
	r = engine_claim(e, &tmpl, 0, pid, ret_id, reason);
	if (r == 0)
		*ret_cpu = cpu;
	return r;
}

int engine_end_claim(struct engine *e, uint32_t id)
{
	const struct claim *cl = claims_find(e->claims, id);
	struct claim gone;
	int r = -ENOENT;

	if (cl) {
		gone = *cl;
		r = claims_release(e->claims, id);
	}
	if (r == 0) {
		e->counters.claims_ended[ENGINE_END_RELEASED]++;
		engine_journal_end(e, &gone);
	}
	return r;
}

void engine_client_gone(struct engine *e, uint32_t client)
{
	e->counters.claims_ended[ENGINE_END_DISCONNECTED] += claims_drop_client(e->claims, client);
	engine_publish(e, false);
}

/* Claims tied to processes that outlived the last daemon (DESIGN §14),
 * read from the journal beside the socket; nothing is written yet. */
static void engine_load_claims(struct engine *e)
{
	struct rtplace_reason reason;
	int r = claims_state_load(e->claims, e->state_path, geteuid(), e->proc_root, &reason);

	if (r == -EPERM)
		log_error("claims state %s refused (%s): not trusted, no claim restored", e->state_path, reason.text);
	else if (r == -EBADMSG)
		log_error("claims state %s is corrupt (%s): ignored, no claim restored; ids continue from %u",
			  e->state_path, reason.text, claims_next_id(e->claims));
	else if (r < 0 && r != -ENOENT)
		log_error("cannot read the claims state %s: %s; no claim restored", e->state_path, strerror(-r));
	else if (r >= 0)
		log_info("restored %d claim%s from %s", r, r == 1 ? "" : "s", e->state_path);
	if (r > 0)
		e->counters.claims_created += (uint64_t)r;
}

int engine_open_journal(struct engine *e)
{
	int r = claims_state_new(e->state_path, &e->state);

	if (r < 0)
		return r;
	/* Rewritten at once, as the daemon's own file: what was dropped or
	 * refused stays so. Without it every claim is refused until a write
	 * succeeds. */
	r = claims_state_compact(e->state, e->claims);
	if (r < 0)
		log_warning("Failed to write the claims state %s: %s (claims are refused until it can be)",
			    e->state_path, strerror(-r));
	engine_isolation_open(e);
	return 0;
}

static int engine_build(struct engine *e, const struct engine_opts *opts)
{
	size_t map_size;
	const void *map = levels_source_map(opts->levels, &map_size);
	int r = claims_new(e->topo->ncpus, &e->claims);

	if (r == 0)
		r = claims_attach(e->claims, e->base, loop_now_ms, engine_claim_ended_cb, e);
	if (r == 0)
		claims_watch_life(e->claims, engine_claim_life_cb, e);
	if (r == 0)
		r = cpupri_view_open(map, map_size, &e->view);
	if (r == 0)
		r = placement_ctx_new(&e->pcfg, e->topo, &e->view, &e->pctx);
	if (r == 0)
		r = placement_state_new(e->pctx, &e->pstate);
	if (r == 0)
		r = snapshot_new(e->topo, levels_source_map_fd(opts->levels), map_size, &e->snap);
	if (r == 0) {
		e->snap_later = event_new(e->base, -1, 0, engine_snap_later_cb, e);
		r = e->snap_later ? 0 : -ENOMEM;
	}
	if (r == 0)
		r = levels_source_follow(opts->levels, engine_levels_changed_cb, e);
	if (r == 0) {
		engine_load_claims(e);
		engine_publish(e, true);
	}
	return r;
}

/* The kernel's environment under the same roots as the host's settings. */
static int engine_new_kernel_env(struct engine *e)
{
	char sysfs[4096], proc[4096];

	snprintf(sysfs, sizeof(sysfs), "%s%s", e->host_root ? e->host_root : "", SYSFS_ROOT);
	snprintf(proc, sizeof(proc), "%s%s", e->host_root ? e->host_root : "", PROCFS_ROOT);
	return kernel_env_new(sysfs, proc, &e->kenv);
}

int engine_new(const struct engine_opts *opts, const struct config *cfg, struct engine **ret)
{
	struct engine *e = calloc(1, sizeof(*e));
	int r;

	if (!e)
		return -ENOMEM;
	e->base = opts->base;
	e->levels = opts->levels;
	e->topo = levels_source_topo(opts->levels);
	e->proc_root = opts->proc_root;
	e->host_root = opts->host_root;
	e->irqnoise = opts->irqnoise;
	e->snap = (struct snapshot){ .map_fd = -1 };
	e->start_ms = loop_now_ms();
	e->cfg = *cfg;
	r = engine_new_kernel_env(e);
	if (r < 0) {
		engine_free(e);
		return r;
	}
	snprintf(e->state_path, sizeof(e->state_path), "%s.claims", cfg->daemon.socket);
	snprintf(e->isolation_path, sizeof(e->isolation_path), "%s.isolation", cfg->daemon.socket);
	config_placement(cfg, e->topo, &e->host.iso.isolated, &e->pcfg);
	config_housekeeping(cfg, e->topo, &e->host.iso.isolated, &e->housekeeping);
	engine_noisy(e);
	auth_policy_from_config(cfg, &e->policy);
	r = engine_build(e, opts);
	if (r < 0) {
		engine_free(e);
		return r;
	}
	*ret = e;
	return 0;
}

void engine_free(struct engine *e)
{
	struct rtplace_reason reason;

	if (!e)
		return;
	/* What is isolated comes back with the daemon's stop; a restart
	 * isolates its restored claims again. */
	if (e->iso && isolation_restore(e->iso, &reason) < 0)
		log_error("Failed to undo all isolation at stop: %s (undone at the next start)", reason.text);
	isolation_free(e->iso);
	isolation_systemd_free(e->iso_systemd);
	claims_state_free(e->state);
	claims_free(e->claims);
	placement_state_free(e->pstate);
	placement_ctx_free(e->pctx);
	cpupri_view_close(&e->view);
	if (e->snap_later)
		event_free(e->snap_later);
	snapshot_free(&e->snap);
	kernel_env_free(e->kenv);
	free(e);
}

const struct config *engine_config(const struct engine *e)
{
	return &e->cfg;
}

const struct topo *engine_topo(const struct engine *e)
{
	return e->topo;
}

const struct cpupri_view *engine_view(const struct engine *e)
{
	return &e->view;
}

const struct placement_config *engine_placement(const struct engine *e)
{
	return &e->pcfg;
}

const struct rtplace_cpumask *engine_housekeeping(const struct engine *e)
{
	return &e->housekeeping;
}

const struct auth_policy *engine_policy(const struct engine *e)
{
	return &e->policy;
}

const struct levels_source *engine_levels(const struct engine *e)
{
	return e->levels;
}

const char *engine_proc_root(const struct engine *e)
{
	return e->proc_root;
}

const struct irqnoise *engine_irqnoise(const struct engine *e)
{
	return e->irqnoise;
}

struct claims *engine_claims(struct engine *e)
{
	return e->claims;
}

const struct claims *engine_claims_view(const struct engine *e)
{
	return e->claims;
}

int engine_offer_local(struct engine *e, struct rtplace_local_reply *ret, int fds[2])
{
	int r = levels_source_share(e->levels);

	return r < 0 ? r : snapshot_offer(&e->snap, ret, fds);
}

struct engine_counters *engine_counters(struct engine *e)
{
	return &e->counters;
}

const struct engine_counters *engine_counters_view(const struct engine *e)
{
	return &e->counters;
}

uint64_t engine_start_ms(const struct engine *e)
{
	return e->start_ms;
}

uint32_t engine_online_count(const struct engine *e)
{
	uint32_t n = 0;

	CPUSET_FOREACH(cpu, &e->pcfg.managed)
		n += cpupri_level(&e->view, (uint32_t)cpu) != LEVEL_OFFLINE;
	return n;
}

unsigned engine_claimed_cpus(const struct engine *e)
{
	unsigned n = 0;

	for (uint32_t cpu = 0; cpu < e->topo->ncpus; cpu++)
		n += claims_on_cpu(e->claims, cpu) != NULL;
	return n;
}
