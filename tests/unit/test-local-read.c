/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Local reads against the daemon's decision (DESIGN §19), in one process:
 * the map and the snapshot are the daemon's own sealed regions
 * (daemon/snapshot.c), published as rtplaced publishes them, and every
 * request is answered twice, by librtplace's local path (client/local-read.c
 * over read-only mappings of the descriptors) and by what rtplaced's QUERY
 * handler runs (placement_ctx_choose_stamped() on the daemon's own context,
 * state and rotor), which must agree on every CPU, level and reason. The map's
 * levels change at random here, which the simulated daemon never does (its
 * levels change with claims only); test-local-reads runs the same against
 * the real daemon over the socket. Also: a writable mapping, mprotect() to
 * write and write(2) fail on both descriptors, and a snapshot layout the
 * library does not know is refused (the caller then asks the socket).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "cpupri.h"
#include "local-read.h"
#include "placement.h"
#include "snap.h"
#include "snapshot.h"
#include "testlib.h"
#include "topo.h"

/* Requests per topology: two topologies make over 100,000. */
#define DIFF_REQUESTS 60000

struct side {
	struct topo *t;
	struct snapshot_region map;
	struct cpupri_geom g;
	struct snapshot snap;
	struct cpupri_view view;
	struct placement_config cfg;
	struct rtplace_cpumask housekeeping;
	struct placement_ctx *ctx;
	struct placement_state *st;
	uint8_t claimed[RTPLACE_MAX_CPUS];
	struct placement_claims claims;
	struct rtplace_local *local;
	uint32_t rotor;
	struct placement_result res;
	struct rtplace_reason why; /* res's, as placement wrote it */
};

static void side_config(struct side *sd, uint64_t *rng)
{
	sd->cfg = (struct placement_config){ .managed = sd->t->online };
	sd->cfg.prefer_idle = test_rand_below(rng, 2);
	sd->cfg.avoid_smt = (enum placement_smt)test_rand_below(rng, 3);
	sd->cfg.isolated_mode = (enum placement_isolated)test_rand_below(rng, 4);
	cpuset_zero(&sd->housekeeping);
	cpuset_zero(&sd->cfg.isolated);
	if (test_rand_below(rng, 2))
		for (uint32_t c = 0; c < sd->t->ncpus; c++)
			if (cpuset_test(&sd->t->online, c) && test_rand_below(rng, 8) == 0)
				cpuset_set(&sd->cfg.isolated, c);
	if (test_rand_below(rng, 3) == 0) {
		cpuset_set(&sd->housekeeping, 0);
		cpuset_clear(&sd->cfg.managed, 0);
	}
	sd->cfg.isolated_housekeeping = test_rand_below(rng, 2);
	/* Interrupt noise: some CPUs last within their level. */
	if (test_rand_below(rng, 2))
		for (uint32_t c = 0; c < sd->t->ncpus; c++)
			if (cpuset_test(&sd->t->online, c) && test_rand_below(rng, 4) == 0)
				cpuset_set(&sd->cfg.noisy, c);
	placement_state_free(sd->st);
	placement_ctx_free(sd->ctx);
	sd->ctx = NULL;
	assert_int_equal(placement_ctx_new(&sd->cfg, sd->t, &sd->view, &sd->ctx), 0);
	assert_int_equal(placement_state_new(sd->ctx, &sd->st), 0);
}

/* A side over topology name, its configuration drawn from rng; side_free()
 * ends it. */
static struct side *side_new(const char *name, uint64_t *rng)
{
	struct side *sd = calloc(1, sizeof(*sd));
	char path[4096];
	struct rtplace_reason why;
	struct rtplace_local_reply lr;
	__u16 *shard_of;
	int fds[2];

	assert_non_null(sd);
	if (!test_topology_path(name, path, sizeof(path)))
		skip();
	assert_int_equal(topo_load(path, &why, &sd->t), 0);
	shard_of = calloc(sd->t->ncpus, sizeof(*shard_of));
	assert_non_null(shard_of);
	assert_int_equal(cpupri_geom_for_topo(sd->t, TOPO_SHARD_NODE, shard_of, &sd->g), 0);
	assert_int_equal(snapshot_region_new("test-map", sd->g.size, &sd->map), 0);
	cpupri_init(sd->map.map, &sd->g, shard_of);
	free(shard_of);
	CPUSET_FOREACH(cpu, &sd->t->online)
		cpupri_set(sd->map.map, &sd->g, (uint32_t)cpu, LEVEL_IDLE);
	assert_int_equal(cpupri_view_open(sd->map.map, sd->g.size, &sd->view), 0);
	assert_int_equal(snapshot_new(sd->t, sd->map.ro_fd, sd->g.size, &sd->snap), 0);
	side_config(sd, rng);
	sd->claims = (struct placement_claims){ .level = sd->claimed, .stamp = 1 };
	snapshot_publish(&sd->snap, sd->t, &sd->cfg, &sd->housekeeping, &sd->claims, true);
	assert_int_equal(snapshot_offer(&sd->snap, &lr, fds), 0);
	assert_int_equal(local_open(&lr, dup(fds[0]), dup(fds[1]), &sd->local), 0);
	return sd;
}

static void side_free(struct side *sd)
{
	local_close(sd->local);
	placement_state_free(sd->st);
	placement_ctx_free(sd->ctx);
	cpupri_view_close(&sd->view);
	snapshot_free(&sd->snap);
	snapshot_region_free(&sd->map);
	topo_free(sd->t);
	free(sd);
}

/* What rtplaced's changes do between two answers: levels of the map (the
 * tracker's writes), claims (a new stamp) and, rarely, the configuration. */
static void random_change(struct side *sd, uint64_t *rng, uint64_t *stamp)
{
	uint32_t n = test_rand_below(rng, 4);

	for (uint32_t i = 0; i < n; i++) {
		uint32_t cpu = test_rand_below(rng, sd->t->ncpus);
		uint32_t level = test_rand_below(rng, 8) == 0 ? LEVEL_OFFLINE : test_rand_below(rng, LEVEL_COUNT - 1);

		if (level == LEVEL_OFFLINE && test_rand_below(rng, 4))
			level = LEVEL_IDLE;
		cpupri_set(sd->map.map, &sd->g, cpu, level);
	}
	if (test_rand_below(rng, 3) == 0) {
		uint32_t cpu = test_rand_below(rng, sd->t->ncpus);

		sd->claimed[cpu] =
			test_rand_below(rng, 2) ? 0 : (uint8_t)level_from_rt_priority(1 + (int)test_rand_below(rng, 99));
		sd->claims.stamp = ++*stamp;
	}
	if (test_rand_below(rng, 5000) == 0) {
		side_config(sd, rng);
		snapshot_publish(&sd->snap, sd->t, &sd->cfg, &sd->housekeeping, &sd->claims, true);
	} else {
		snapshot_publish(&sd->snap, sd->t, &sd->cfg, &sd->housekeeping, &sd->claims, false);
	}
}

static void differential(const char *name, uint64_t seed)
{
	struct side *sd;
	uint64_t rng = seed, stamp = 1 << 20;
	unsigned long nonempty = 0;

	sd = side_new(name, &rng);
	sd->claims.stamp = ++stamp;
	for (unsigned i = 0; i < DIFF_REQUESTS; i++) {
		const struct rtplace_query_reply *lr = NULL;
		struct rtplace_query q;
		struct placement_request req;
		int rl, rd;

		random_change(sd, &rng, &stamp);
		test_random_query(&rng, sd->t->ncpus, sd->t->nnodes, &q);
		req = (struct placement_request){ .prio = q.prio, .count = q.count, .allowed = q.allowed,
						  .node = q.node, .near_cpu = q.near_cpu,
						  .normal = q.flags & RTPLACE_QUERY_F_NORMAL };
		rl = local_query(sd->local, &q, &lr);
		rd = placement_ctx_choose_stamped(sd->ctx, sd->st, &sd->claims, &sd->rotor, &req, &sd->why, &sd->res);
		snapshot_rotor(&sd->snap, sd->rotor);
		if (rd == -EINVAL) {
			assert_int_equal(rl, -EINVAL);
			continue;
		}
		if (rl != 0 || lr->count != sd->res.n || strcmp(lr->reason, placement_reason_text(&sd->why)) != 0)
			fail_msg("%s seed %llu request %u: local %d n %u '%s', daemon %d n %u '%s'", name,
				 (unsigned long long)seed, i, rl, rl ? 0 : lr->count, rl ? "" : lr->reason, rd,
				 sd->res.n, placement_reason_text(&sd->why));
		for (uint32_t k = 0; k < sd->res.n; k++) {
			assert_int_equal(lr->list[k].cpu, sd->res.cpus[k]);
			assert_int_equal(lr->list[k].level, sd->res.levels[k]);
		}
		nonempty += sd->res.n > 0;
	}
	print_message("%s: %u requests, %lu with CPUs, seed %llu\n", name, DIFF_REQUESTS, nonempty,
		      (unsigned long long)seed);
	assert_true(nonempty > DIFF_REQUESTS / 2);
	side_free(sd);
}

static void test_differential_480(void **state)
{
	(void)state;
	differential("2s-240c-480t", 0x9e3779b97f4a7c15ull);
}

static void test_differential_16llc(void **state)
{
	(void)state;
	differential("epyc-2s-16ccx-256t", 0xd1b54a32d192ed03ull);
}

static void test_read_only(void **state)
{
	struct side *sd;
	struct rtplace_local_reply lr;
	uint64_t rng = 7;
	int fds[2];

	(void)state;
	sd = side_new("2s-240c-480t", &rng);
	assert_int_equal(snapshot_offer(&sd->snap, &lr, fds), 0);
	assert_null(test_fd_writable_by(fds[0], (size_t)lr.map_size));
	assert_null(test_fd_writable_by(fds[1], (size_t)lr.snap_size));
	/* A memfd may be opened again read-write through /proc: the seals,
	 * not the descriptor's mode, are what refuses writes. */
	for (int i = 0; i < 2; i++) {
		char path[64];
		int rw;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
		rw = open(path, O_RDWR | O_CLOEXEC);
		if (rw < 0)
			continue;
		assert_null(test_fd_writable_by(rw, i ? (size_t)lr.snap_size : (size_t)lr.map_size));
		close(rw);
	}
	side_free(sd);
}

static void test_unknown_layout(void **state)
{
	struct side *sd;
	struct rtplace_local_reply lr;
	struct rtplace_local *l = NULL;
	struct snapshot_region other;
	uint64_t rng = 11;
	int fds[2];

	(void)state;
	sd = side_new("2s-240c-480t", &rng);
	assert_int_equal(snapshot_offer(&sd->snap, &lr, fds), 0);
	/* A daemon of a newer layout says so in its reply... */
	lr.snap_layout = SNAP_LAYOUT + 1;
	assert_int_equal(local_open(&lr, dup(fds[0]), dup(fds[1]), &l), -EPROTONOSUPPORT);
	/* ...and in the region's header. */
	assert_int_equal(snapshot_region_new("test-snap", (size_t)lr.snap_size, &other), 0);
	memcpy(other.map, sd->snap.region.map, (size_t)lr.snap_size);
	((struct snap *)other.map)->header.layout = SNAP_LAYOUT + 1;
	lr.snap_layout = SNAP_LAYOUT;
	assert_int_equal(local_open(&lr, dup(fds[0]), dup(other.ro_fd), &l), -EPROTONOSUPPORT);
	((struct snap *)other.map)->header.layout = SNAP_LAYOUT;
	assert_int_equal(local_open(&lr, dup(fds[0]), dup(other.ro_fd), &l), 0);
	local_close(l);
	snapshot_region_free(&other);
	side_free(sd);
}

/* A copy that overlaps a publish at every try is not an answer. */
static void test_torn_read(void **state)
{
	struct side *sd;
	const struct rtplace_query_reply *lr;
	struct rtplace_query q = { .prio = 50, .count = 1, .node = -1, .near_cpu = -1 };
	struct snap *s;
	uint64_t rng = 13;

	(void)state;
	sd = side_new("2s-240c-480t", &rng);
	s = sd->snap.region.map;
	assert_int_equal(local_query(sd->local, &q, &lr), 0);
	s->seq.seq++;
	assert_int_equal(local_query(sd->local, &q, &lr), -EAGAIN);
	s->seq.seq++;
	assert_int_equal(local_query(sd->local, &q, &lr), 0);
	side_free(sd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differential_480),
		cmocka_unit_test(test_differential_16llc),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_unknown_layout),
		cmocka_unit_test(test_torn_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
