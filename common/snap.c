/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The placement snapshot's writer and reader (snap.h): the sequence
 * count's ordering is described there. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"

static uint32_t snap_line_up(size_t n)
{
	return (uint32_t)((n + SNAP_LINE - 1) / SNAP_LINE * SNAP_LINE);
}

size_t snap_size(uint32_t ncpus)
{
	size_t cpus = snap_line_up(sizeof(struct snap_cpu) * (size_t)ncpus);

	return sizeof(struct snap) + cpus + snap_line_up(ncpus ? ncpus : 1);
}

void snap_init(void *snap, uint32_t ncpus)
{
	struct snap *s = snap;

	s->header.magic = SNAP_MAGIC;
	s->header.layout = SNAP_LAYOUT;
	s->header.size = (uint32_t)snap_size(ncpus);
	s->header.ncpus = ncpus;
	s->header.cpus_off = sizeof(struct snap);
	s->header.claims_off = sizeof(struct snap) + snap_line_up(sizeof(struct snap_cpu) * (size_t)ncpus);
}

static struct snap_cpu *snap_cpus(const void *snap)
{
	return (struct snap_cpu *)((char *)snap + ((const struct snap *)snap)->header.cpus_off);
}

static uint8_t *snap_claims(const void *snap)
{
	return (uint8_t *)snap + ((const struct snap *)snap)->header.claims_off;
}

void snap_publish(void *snap, const struct topo *t, const struct placement_config *cfg,
		  const struct rtplace_cpumask *housekeeping, const uint8_t *claimed)
{
	struct snap *s = snap;
	struct snap_config c = {
		.nnodes = t->nnodes,
		.npackages = t->npackages,
		.nllcs = t->nllcs,
		.ncores = t->ncores,
		.nkinds = t->nkinds,
		.prefer_idle = cfg->prefer_idle,
		.avoid_smt = (uint8_t)cfg->avoid_smt,
		.isolated_mode = (uint8_t)cfg->isolated_mode,
		.isolated_housekeeping = cfg->isolated_housekeeping,
		.managed = cfg->managed,
		.isolated = cfg->isolated,
		.housekeeping = *housekeeping,
		.noisy = cfg->noisy,
	};
	struct snap_cpu *cpus = snap_cpus(snap);
	uint32_t n = s->header.ncpus;
	uint64_t seq = __atomic_load_n(&s->seq.seq, __ATOMIC_RELAXED);
	bool same = true;

	c.shape = s->config.shape;
	for (uint32_t i = 0; i < n && same; i++) {
		const struct topo_cpu *tc = &t->cpus[i];

		same = cpus[i].node == tc->node && cpus[i].package == tc->package && cpus[i].llc == tc->llc &&
		       cpus[i].core == tc->core && cpus[i].kind == tc->kind && cpus[i].online == tc->online;
	}
	if (!same || memcmp(&c, &s->config, sizeof(c)) != 0)
		c.shape++;
	__atomic_store_n(&s->seq.seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->config = c;
	for (uint32_t i = 0; i < n && !same; i++) {
		const struct topo_cpu *tc = &t->cpus[i];

		cpus[i] = (struct snap_cpu){ tc->node, tc->package, tc->llc, tc->core, tc->kind, tc->online };
	}
	if (claimed)
		memcpy(snap_claims(snap), claimed, n);
	else
		memset(snap_claims(snap), 0, n);
	__atomic_store_n(&s->seq.seq, seq + 2, __ATOMIC_RELEASE);
}

void snap_set_rotor(void *snap, uint32_t rotor)
{
	__atomic_store_n(&((struct snap *)snap)->rotor.rotor, rotor, __ATOMIC_RELAXED);
}

int snap_check(const void *snap, size_t size)
{
	const struct snap *s = snap;

	if (size < sizeof(struct snap) || ((uintptr_t)snap % SNAP_LINE) || s->header.magic != SNAP_MAGIC)
		return -EINVAL;
	if (s->header.layout != SNAP_LAYOUT)
		return -EPROTONOSUPPORT;
	if (s->header.ncpus == 0 || s->header.ncpus > RTPLACE_MAX_CPUS || s->header.size != size ||
	    snap_size(s->header.ncpus) != size || s->header.cpus_off != sizeof(struct snap) ||
	    s->header.claims_off != s->header.cpus_off + snap_line_up(sizeof(struct snap_cpu) * s->header.ncpus))
		return -EINVAL;
	return 0;
}

static uint64_t snap_begin(const struct snap *s)
{
	return __atomic_load_n(&s->seq.seq, __ATOMIC_ACQUIRE);
}

static bool snap_end(const struct snap *s, uint64_t seq)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&s->seq.seq, __ATOMIC_RELAXED) == seq;
}

int snap_read(const void *snap, unsigned tries, uint8_t *claimed, uint32_t *rotor, uint64_t *shape,
	      uint64_t *seq)
{
	const struct snap *s = snap;

	for (unsigned i = 0; i < tries; i++) {
		uint64_t now = snap_begin(s);

		if (now & 1)
			continue;
		if (now == *seq) {
			*rotor = __atomic_load_n(&s->rotor.rotor, __ATOMIC_RELAXED);
			return 0;
		}
		*shape = s->config.shape;
		memcpy(claimed, snap_claims(snap), s->header.ncpus);
		*rotor = __atomic_load_n(&s->rotor.rotor, __ATOMIC_RELAXED);
		if (snap_end(s, now)) {
			*seq = now;
			return 0;
		}
	}
	return -EAGAIN;
}

int snap_read_shape(const void *snap, unsigned tries, struct snap_config *cfg, struct topo **ret)
{
	const struct snap *s = snap;
	uint32_t n = s->header.ncpus;
	struct topo *t = NULL;
	int r = topo_new(n, &t);

	if (r < 0)
		return r;
	r = -EAGAIN;
	for (unsigned i = 0; i < tries && r == -EAGAIN; i++) {
		uint64_t seq = snap_begin(s);
		const struct snap_cpu *cpus = snap_cpus(snap);

		if (seq & 1)
			continue;
		*cfg = s->config;
		for (uint32_t c = 0; c < n; c++)
			t->cpus[c] = (struct topo_cpu){ cpus[c].node, cpus[c].package, cpus[c].llc,
							cpus[c].core, cpus[c].kind, cpus[c].online != 0 };
		if (snap_end(s, seq))
			r = 0;
	}
	if (r == 0)
		r = topo_finish(t);
	if (r == 0 && (t->nnodes != cfg->nnodes || t->nllcs != cfg->nllcs || t->ncores != cfg->ncores))
		r = -EINVAL;
	if (r < 0) {
		topo_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

void snap_placement_config(const struct snap_config *c, struct placement_config *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->managed = c->managed;
	ret->prefer_idle = c->prefer_idle;
	ret->avoid_smt = (enum placement_smt)c->avoid_smt;
	ret->isolated = c->isolated;
	ret->isolated_mode = (enum placement_isolated)c->isolated_mode;
	ret->isolated_housekeeping = c->isolated_housekeeping;
	ret->noisy = c->noisy;
}
