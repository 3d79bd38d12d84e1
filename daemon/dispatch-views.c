/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch-handlers.h"
#include "log.h"
#include "loop.h"
#include "procfs.h"

/* LOCAL: the descriptors for reads without a round trip (DESIGN §19),
 * from protocol version 3 on, so that a client of an older version
 * keeps asking the socket. */
void dispatch_views_local(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_local_reply lr;
	int fds[2];
	int r = m->hdr.version < 3 ? -EOPNOTSUPP : engine_offer_local(d->engine, &lr, fds);

	if (r < 0) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, r,
				   m->hdr.version < 3 ? "local reads need protocol version 3"
						      : "this daemon offers no map to read locally");
		return;
	}
	proto_msg_init(&d->reply, RTPLACE_MSG_LOCAL_REPLY, m->hdr.request_id);
	d->reply.local_reply = lr;
	if (dispatch_finish_reply(d, peer, m) < 0)
		return;
	r = server_send_fds(d->server, peer->id, &d->reply, d->reply.hdr.length, fds, 2);
	if (r < 0)
		log_debug("client %u: cannot send the local-read descriptors: %s", peer->id, strerror(-r));
}

void dispatch_views_running(const struct dispatch *d, const struct pidmap_view *view, uint32_t cpu, int32_t *ret_pid,
			    uint32_t *ret_queued, char *comm, size_t len)
{
	const struct cpupri_view *map = engine_view(d->engine);
	const struct cpupri_slot *slot = cpupri_slot_ptr((void *)map->map, &map->geom, cpu);
	pid_t pid = (pid_t)__atomic_load_n(&slot->pid, __ATOMIC_RELAXED), shown = pid;

	*ret_queued = __atomic_load_n(&slot->rt_queued, __ATOMIC_RELAXED);
	dispatch_comm(d, pid, comm, len);
	/* Outside the client's namespace: 0 and no comm. */
	if (!view->same_pidns)
		pidmap_show(view, pid, &shown);
	*ret_pid = (int32_t)shown;
	if (!shown)
		memset(comm, 0, len);
}

void dispatch_views_cpus(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_cpus_reply *r = &d->reply.cpus_reply;
	const struct topo *t = engine_topo(d->engine);
	const struct cpupri_view *map = engine_view(d->engine);
	uint32_t first = m->cpus.first;
	struct rtplace_cpumask isolated;
	struct pidmap_view view;

	/* Isolated by the host (isolcpus=, a partition of its own) or for a
	 * claim. */
	engine_isolated_cpus(d->engine, &isolated);
	cpuset_or(&isolated, &isolated, &engine_host(d->engine)->iso.isolated);
	dispatch_view(d, peer, &view);
	proto_msg_init(&d->reply, RTPLACE_MSG_CPUS_REPLY, m->hdr.request_id);
	r->total = t->ncpus;
	r->first = first;
	r->count = t->ncpus - first < RTPLACE_CPUS_PAGE ? t->ncpus - first : RTPLACE_CPUS_PAGE;
	for (uint32_t i = 0; i < r->count; i++) {
		uint32_t cpu = first + i;
		struct rtplace_cpu_info *ci = &r->cpus[i];
		const struct topo_cpu *tc = &t->cpus[cpu];
		const struct claim *cl = claims_on_cpu(engine_claims(d->engine), cpu);
		bool online = cpuset_test(&t->online, cpu);

		ci->cpu = (uint16_t)cpu;
		ci->node = online ? tc->node : -1;
		ci->llc = online ? tc->llc : -1;
		ci->core = online ? tc->core : -1;
		if (m->cpus.flags & RTPLACE_CPUS_F_PACKAGE)
			ci->package = online ? tc->package : -1;
		ci->kind = online ? (uint8_t)tc->kind : 0;
		ci->level = online ? (uint8_t)cpupri_level(map, cpu) : LEVEL_OFFLINE;
		if (online)
			ci->flags |= RTPLACE_CPU_F_ONLINE;
		if (online && cpuset_test(engine_housekeeping(d->engine), cpu))
			ci->flags |= RTPLACE_CPU_F_HOUSEKEEPING;
		if (m->cpus.flags & RTPLACE_CPUS_F_HOST && cpuset_test(&isolated, cpu))
			ci->flags |= RTPLACE_CPU_F_ISOLATED;
		if (m->cpus.flags & RTPLACE_CPUS_F_HOST && cpuset_test(&engine_host(d->engine)->iso.nohz_full, cpu))
			ci->flags |= RTPLACE_CPU_F_NOHZ_FULL;
		if (ci->level == LEVEL_OFFLINE)
			ci->flags &= (uint8_t)~RTPLACE_CPU_F_ONLINE;
		if (ci->flags & RTPLACE_CPU_F_ONLINE && levels_source_has_threads(engine_levels(d->engine)))
			dispatch_views_running(d, &view, cpu, &ci->pid, &ci->rt_queued, ci->comm, sizeof(ci->comm));
		if (online && cl) {
			ci->claim_id = cl->id;
			ci->claim_level = cl->level;
			/* A simulated machine's levels change with claims only
			 * (rtplaced(8)): show the level QUERY counts. */
			if (!levels_source_live(engine_levels(d->engine)) && cl->level > ci->level)
				ci->level = cl->level;
		}
		/* Clients before version 3 know neither the flag nor the shares. */
		if (online && engine_irqnoise(d->engine) && m->hdr.version >= 3) {
			const struct irqnoise_cpu *n = &irqnoise_cpus(engine_irqnoise(d->engine))[cpu];

			ci->irq_share = (uint16_t)(n->irq_ppm / (IRQNOISE_PPM / RTPLACE_SHARE_ONE));
			ci->softirq_share = (uint16_t)(n->softirq_ppm / (IRQNOISE_PPM / RTPLACE_SHARE_ONE));
			ci->flags |= RTPLACE_CPU_F_IRQ;
		}
	}
	dispatch_send_reply(d, peer, m);
}

/* A page of time by class, read from the tracker's per-CPU entries at one
 * instant (sampled_ns) taken before them. */
void dispatch_views_cpu_times(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	struct rtplace_cpu_times_reply *r = &d->reply.cpu_times_reply;
	uint32_t first = m->cpus.first;
	int err = 0;

	if (!levels_source_has_threads(engine_levels(d->engine))) {
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, -EOPNOTSUPP,
				    "time by class needs the BPF tracker");
		return;
	}
	proto_msg_init(&d->reply, RTPLACE_MSG_CPU_TIMES_REPLY, m->hdr.request_id);
	r->total = engine_topo(d->engine)->ncpus;
	r->first = first;
	r->count = r->total - first < RTPLACE_CPUS_PAGE ? r->total - first : RTPLACE_CPUS_PAGE;
	r->sampled_ns = loop_now_ns();
	for (uint32_t i = 0; i < r->count && err == 0; i++)
		err = levels_source_cpu_times(engine_levels(d->engine), first + i, r->sampled_ns, r->cpus[i].ns);
	if (err < 0) {
		log_ratelimited(LOG_WARNING, "Failed to read the time by class of CPUs %u-%u: %s", first,
				first + r->count - 1, strerror(-err));
		dispatch_send_error(d, peer->id, m->hdr.request_id, m->hdr.type, err, "time by class unreadable");
		return;
	}
	dispatch_send_reply(d, peer, m);
}

void dispatch_views_status(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	const struct engine_counters *c = engine_counters_view(d->engine);
	const struct levels_source *levels = engine_levels(d->engine);
	const struct topo *t = engine_topo(d->engine);
	struct actors_stats as;
	struct rtplace_status_reply st;

	actors_get_stats(d->actors, &as);
	st = (struct rtplace_status_reply){
		.uptime_ms = loop_now_ms() - engine_start_ms(d->engine),
		.ncpus = t->ncpus,
		.nonline = engine_online_count(d->engine),
		.nnodes = t->nnodes,
		.nllcs = t->nllcs,
		.ncores = t->ncores,
		.flags = (levels_source_has_threads(levels) ? RTPLACE_STATUS_F_TRACKING : 0) |
			 (levels_source_live(levels) ? RTPLACE_STATUS_F_MOVES : 0),
		.queries = c->queries,
		.errors = c->errors,
		.claims_active = claims_count(engine_claims_view(d->engine)),
		.claims_total = c->claims_created,
		.clients = server_client_count(d->server),
		.clients_dropped = c->clients_dropped + server_refused_count(d->server),
		.moves = as.moved,
	};

	proto_set_string(st.version, sizeof(st.version), PACKAGE_VERSION);
	proto_msg_init(&d->reply, RTPLACE_MSG_STATUS_REPLY, m->hdr.request_id);
	d->reply.status_reply = st;
	dispatch_send_reply(d, peer, m);
}

void dispatch_views_tracking(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	proto_msg_init(&d->reply, RTPLACE_MSG_TRACKING_REPLY, m->hdr.request_id);
	levels_source_describe(engine_levels(d->engine), &d->reply.tracking_reply);
	dispatch_send_reply(d, peer, m);
}

void dispatch_views_host(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	const struct engine_host *host = engine_host(d->engine);
	struct rtplace_host_reply h = { 0 };

	if (host->rt_known) {
		h.rt_runtime_us = host->rt.runtime_us;
		h.rt_period_us = host->rt.period_us;
		h.flags = RTPLACE_HOST_F_RT_KNOWN;
	}
	proto_msg_init(&d->reply, RTPLACE_MSG_HOST_REPLY, m->hdr.request_id);
	d->reply.host_reply = h;
	dispatch_send_reply(d, peer, m);
}

void dispatch_views_kernel(struct dispatch *d, struct server_peer *peer, const struct proto_msg *m)
{
	proto_msg_init(&d->reply, RTPLACE_MSG_KERNEL_REPLY, m->hdr.request_id);
	kenv_to_wire(kernel_env_get(engine_kernel_env(d->engine)), &d->reply.kernel_reply);
	dispatch_send_reply(d, peer, m);
}
