/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the claim table: lifetimes (release, connection, owner,
 * lease, revoked CPU), the indexes behind them, the per-CPU claimed levels
 * placement reads, and the loop edge (real pidfds and a
 * real timer on children of the test: no root needed). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>

#include "claims.h"
#include "cpupri.h"
#include "levels.h"
#include "placement.h"
#include "rtplace-proto.h"
#include "topo.h"

static struct rtplace_cpumask cpus_of(const char *list)
{
	struct rtplace_cpumask s;

	assert_int_equal(cpuset_parse(list, &s), 0);
	return s;
}

/* A claim by connection client of uid, tied to pid (0: none). */
static int add(struct claims *c, uint32_t client, int32_t pid, uint32_t uid, uint32_t level, const char *cpus,
	       uint64_t now, uint64_t lease, uint32_t *id)
{
	struct claim t = {
		.client = client, .pid = pid, .uid = uid, .level = (uint8_t)level, .cpus = cpus_of(cpus),
	};

	return claims_add(c, &t, now, lease, id);
}

static void test_levels_are_max_of_claims(void **state)
{
	struct claims *c;
	uint32_t id1, id2;

	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(add(c, 1, 0, 1000, level_from_rt_priority(10), "1-2", 0, 0, &id1), 0);
	assert_int_equal(add(c, 2, 0, 1000, level_from_rt_priority(50), "2-3", 0, 0, &id2), 0);
	assert_int_not_equal(id1, id2);
	assert_int_equal(claims_levels(c)[0], 0);
	assert_int_equal(claims_levels(c)[1], level_from_rt_priority(10));
	assert_int_equal(claims_levels(c)[2], level_from_rt_priority(50));
	assert_int_equal(claims_levels(c)[3], level_from_rt_priority(50));
	assert_int_equal(claims_on_cpu(c, 2)->id, id2);
	assert_int_equal(claims_release(c, id2), 0);
	assert_int_equal(claims_levels(c)[2], level_from_rt_priority(10));
	assert_int_equal(claims_levels(c)[3], 0);
	assert_int_equal(claims_on_cpu(c, 2)->id, id1);
	assert_null(claims_on_cpu(c, 3));
	claims_free(c);
}

/* A release ends the claim, whichever connection asks (the rights are
 * auth_may_release()'s); one already released is gone. */
static void test_release_rules(void **state)
{
	struct claims *c;
	uint32_t id;

	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(add(c, 7, 0, 65534, LEVEL_RT99, "0", 0, 0, &id), 0);
	assert_int_equal(claims_release(c, id + 100), -ENOENT);
	assert_int_equal(claims_release(c, id), 0); /* not connection 7 */
	assert_int_equal(claims_release(c, id), -ENOENT);
	assert_int_equal(claims_count(c), 0);
	claims_free(c);
}

static void test_bad_claims_refused(void **state)
{
	struct claims *c;
	struct claim t = { .client = 1, .uid = 1000, .level = LEVEL_RT99 };
	uint32_t id;

	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(claims_add(c, &t, 0, 0, &id), -EINVAL); /* no CPU */
	assert_int_equal(add(c, 1, 0, 1000, LEVEL_IDLE, "0", 0, 0, &id), -EINVAL);
	assert_int_equal(add(c, 1, 0, 1000, LEVEL_COUNT, "0", 0, 0, &id), -EINVAL);
	assert_int_equal(claims_count(c), 0);
	/* Level normal: what a requester without RT rights gets (DESIGN §14). */
	assert_int_equal(add(c, 1, 0, 1000, LEVEL_NORMAL, "0", 0, 0, &id), 0);
	assert_int_equal(claims_levels(c)[0], LEVEL_NORMAL);
	claims_free(c);
}

static void test_drop_client_and_pid(void **state)
{
	struct claims *c;
	uint32_t id;

	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(add(c, 1, 100, 1000, LEVEL_RT99, "1", 0, 0, &id), 0);
	assert_int_equal(add(c, 1, 0, 1000, LEVEL_RT99, "2", 0, 0, &id), 0);
	assert_int_equal(add(c, 2, 100, 1000, LEVEL_RT99, "3", 0, 0, &id), 0);
	assert_int_equal(add(c, 1, 0, 1000, LEVEL_RT1, "4", 0, 0, &id), 0);
	assert_int_equal(claims_count_client(c, 1), 3);
	/* The connection's own claims go with it; the owner-bound one stays. */
	assert_int_equal(claims_drop_client(c, 1), 2);
	assert_int_equal(claims_count(c), 2);
	assert_int_equal(claims_levels(c)[2], 0);
	assert_int_equal(claims_levels(c)[4], 0);
	assert_int_equal(claims_drop_pid(c, 100, NULL, NULL), 2);
	assert_int_equal(claims_drop_pid(c, 0, NULL, NULL), 0);
	assert_int_equal(claims_count(c), 0);
	assert_int_equal(claims_levels(c)[1], 0);
	claims_free(c);
}

struct ended_log {
	unsigned n;
	uint32_t ids[16];
	uint32_t why[16];
};

static void log_ended(const struct claim *cl, uint32_t why, void *ctx)
{
	struct ended_log *l = ctx;

	if (l->n < 16) {
		l->ids[l->n] = cl->id;
		l->why[l->n] = why;
	}
	l->n++;
}

static void test_lease_expiry(void **state)
{
	struct claims *c;
	struct ended_log l = { 0 };
	uint32_t a, b, d;

	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(add(c, 1, 0, 1000, LEVEL_RT99, "1", 1000, 700, &a), 0);
	assert_int_equal(add(c, 1, 0, 1000, LEVEL_RT99, "2", 1000, 0, &b), 0);
	assert_int_equal(add(c, 1, 0, 1000, LEVEL_RT99, "3", 1000, 500, &d), 0);
	assert_int_equal(claims_expire(c, 1499, log_ended, &l), 1500);
	assert_int_equal(l.n, 0);
	assert_int_equal(claims_expire(c, 1500, log_ended, &l), 1700);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.ids[0], d);
	assert_int_equal(l.why[0], RTPLACE_CLAIM_ENDED_EXPIRED);
	assert_int_equal(claims_levels(c)[3], 0);
	/* A lease released early leaves the heap with it. */
	assert_int_equal(claims_release(c, a), 0);
	assert_int_equal(claims_expire(c, 5000, log_ended, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(claims_count(c), 1);
	assert_non_null(claims_find(c, b));
	claims_free(c);
}

static void test_sixty_claims_distinct_ids(void **state)
{
	struct claims *c;
	uint32_t ids[60];

	assert_int_equal(claims_new(64, &c), 0);
	for (uint32_t i = 0; i < 60; i++) {
		char cpu[8];

		snprintf(cpu, sizeof(cpu), "%u", i);
		assert_int_equal(add(c, i, 0, 1000, LEVEL_RT99, cpu, 0, 0, &ids[i]), 0);
		for (uint32_t j = 0; j < i; j++)
			assert_int_not_equal(ids[i], ids[j]);
	}
	assert_int_equal(claims_count(c), 60);
	claims_free(c);
}

/* claims_at_or_after() is the lowest live id at or above from, as a scan
 * of every claim finds it: across gaps shorter and longer than
 * CLAIMS_PROBE_IDS, before the first id, past the last and past 32 bits. */
static void test_at_or_after_matches_a_scan(void **state)
{
	enum { N = 240 };
	struct claims *c;
	uint32_t ids[N];

	(void)state;
	assert_int_equal(claims_new(N, &c), 0);
	for (uint32_t i = 0; i < N; i++) {
		char cpu[8];

		snprintf(cpu, sizeof(cpu), "%u", i);
		assert_int_equal(add(c, i, 0, 1000, LEVEL_RT99, cpu, 0, 0, &ids[i]), 0);
	}
	/* A gap of 100 ids, one of 3, and every seventh claim. */
	for (uint32_t i = 0; i < N; i++)
		if ((i >= 20 && i < 120) || (i >= 150 && i < 153) || i % 7 == 3)
			assert_int_equal(claims_release(c, ids[i]), 0);
	for (uint64_t from = 0; from <= ids[N - 1] + 2; from++) {
		const struct claim *want = NULL, *cl;

		for (unsigned i = 0; (cl = claims_at(c, i)); i++)
			if (cl->id >= from && (!want || cl->id < want->id))
				want = cl;
		assert_ptr_equal(claims_at_or_after(c, from), want);
	}
	assert_null(claims_at_or_after(c, (uint64_t)UINT32_MAX + 1));
	claims_free(c);
}

/* The per-user count spans connections and owners. */
static void test_count_per_uid(void **state)
{
	struct claims *c;
	uint32_t id;

	assert_int_equal(claims_new(8, &c), 0);
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(add(c, 10 + i, (int32_t)(200 + i), 65534, LEVEL_NORMAL, "1", 0, 0, &id), 0);
	assert_int_equal(add(c, 20, 0, 1000, LEVEL_RT1, "2", 0, 0, &id), 0);
	for (uint32_t i = 0; i < 5; i++)
		claims_drop_client(c, 10 + i); /* owner-bound: still there */
	assert_int_equal(claims_count_uid(c, 65534), 5);
	assert_int_equal(claims_count_uid(c, 1000), 1);
	assert_int_equal(claims_count_uid(c, 0), 0);
	assert_int_equal(claims_drop_pid(c, 202, NULL, NULL), 1);
	assert_int_equal(claims_count_uid(c, 65534), 4);
	claims_free(c);
}

static void test_levels_except_and_revoke(void **state)
{
	struct claims *c;
	struct ended_log l = { 0 };
	const uint8_t *lv;
	uint32_t a, b, d;

	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(add(c, 1, 300, 0, level_from_rt_priority(50), "1-2", 0, 0, &a), 0);
	assert_int_equal(add(c, 2, 0, 0, level_from_rt_priority(10), "2-3", 0, 0, &b), 0);
	assert_int_equal(add(c, 3, 300, 0, level_from_rt_priority(60), "5", 0, 0, &d), 0);
	lv = claims_levels_except(c, 300);
	assert_int_equal(lv[1], 0);
	assert_int_equal(lv[2], level_from_rt_priority(10));
	assert_int_equal(lv[3], level_from_rt_priority(10));
	assert_int_equal(lv[5], 0);
	/* The table itself is unchanged. */
	assert_int_equal(claims_levels(c)[2], level_from_rt_priority(50));
	assert_int_equal(claims_levels(c)[5], level_from_rt_priority(60));

	assert_int_equal(claims_revoke_cpu(c, 2, log_ended, &l), 2);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.why[0], RTPLACE_CLAIM_ENDED_REVOKED);
	assert_int_equal(l.why[1], RTPLACE_CLAIM_ENDED_REVOKED);
	assert_true((l.ids[0] == a && l.ids[1] == b) || (l.ids[0] == b && l.ids[1] == a));
	assert_int_equal(claims_count(c), 1);
	assert_int_equal(claims_levels(c)[1], 0);
	assert_int_equal(claims_revoke_cpu(c, 2, log_ended, &l), 0);
	claims_free(c);
}

/*
 * The life of every claim reaches the watcher (what subscribers' records
 * follow): each claim made, with its id and while it is in the table; and
 * each end by its cause, with the claim as it was, also the ends that no
 * claims_ended_fn hears of (a release, a connection's close). A claim
 * that is not made is not told; nor is one added but not yet made
 * (claims_made(), once its holder recorded it), nor one withdrawn before.
 */
static void test_life_watched(void **state)
{
	struct claims *c;
	struct ended_log l = { 0 };
	uint32_t a, b, d, e, f, x;

	assert_int_equal(claims_new(8, &c), 0);
	claims_watch_life(c, log_ended, &l);
	assert_int_equal(add(c, 1, 0, 1000, LEVEL_NORMAL, "1", 0, 0, &a), 0);
	assert_int_equal(add(c, 1, 0, 1000, LEVEL_NORMAL, "2", 0, 0, &b), 0);
	assert_int_equal(add(c, 2, 300, 1000, LEVEL_NORMAL, "3", 0, 0, &d), 0);
	assert_int_equal(add(c, 2, 0, 1000, LEVEL_NORMAL, "4", 0, 10, &e), 0);
	assert_int_equal(add(c, 2, 0, 1000, LEVEL_NORMAL, "5", 0, 0, &f), 0);
	{
		struct claim none = { .client = 2, .uid = 1000, .level = LEVEL_NORMAL };

		assert_int_equal(claims_add(c, &none, 0, 0, &x), -EINVAL); /* no CPU */
	}
	assert_int_equal(l.n, 0);
	/* one the holder could not record: neither made nor ended */
	assert_int_equal(add(c, 2, 0, 1000, LEVEL_NORMAL, "6", 0, 0, &x), 0);
	assert_int_equal(claims_withdraw(c, x), 0);
	assert_null(claims_find(c, x));
	assert_int_equal(claims_levels(c)[6], 0);
	assert_int_equal(claims_withdraw(c, x), -ENOENT);
	assert_int_equal(l.n, 0);
	claims_made(c, a);
	claims_made(c, b);
	claims_made(c, d);
	claims_made(c, e);
	claims_made(c, f);
	assert_int_equal(l.n, 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(l.why[i], CLAIMS_LIFE_CREATED);
	assert_int_equal(l.ids[0], a);
	assert_int_equal(l.ids[4], f);

	l.n = 0;
	assert_int_equal(claims_release(c, a), 0);
	assert_int_equal(claims_drop_client(c, 1), 1);
	assert_int_equal(claims_drop_pid(c, 300, NULL, NULL), 1);
	claims_expire(c, 10, NULL, NULL);
	assert_int_equal(claims_revoke_cpu(c, 5, NULL, NULL), 1);
	assert_int_equal(l.n, 5);
	assert_int_equal(l.ids[0], a);
	assert_int_equal(l.why[0], CLAIMS_LIFE_RELEASED);
	assert_int_equal(l.ids[1], b);
	assert_int_equal(l.why[1], CLAIMS_LIFE_DISCONNECTED);
	assert_int_equal(l.ids[2], d);
	assert_int_equal(l.why[2], RTPLACE_CLAIM_ENDED_OWNER_EXITED);
	assert_int_equal(l.ids[3], e);
	assert_int_equal(l.why[3], RTPLACE_CLAIM_ENDED_EXPIRED);
	assert_int_equal(l.ids[4], f);
	assert_int_equal(l.why[4], RTPLACE_CLAIM_ENDED_REVOKED);
	assert_int_equal(claims_count(c), 0);
	claims_free(c);
}

/* The indexes against a model: random adds, releases, owner exits,
 * connection drops and expiries; after each step the levels, counts and
 * lookups equal what a plain scan of the model says. */
struct model_claim {
	bool live;
	uint32_t id, client, uid;
	int32_t pid;
	uint8_t level;
	uint64_t expires;
	struct rtplace_cpumask cpus;
};

static void model_check(struct claims *c, const struct model_claim *m, unsigned n, uint32_t ncpus)
{
	unsigned live = 0;

	for (uint32_t cpu = 0; cpu < ncpus; cpu++) {
		uint8_t want = 0;

		for (unsigned i = 0; i < n; i++)
			if (m[i].live && cpuset_test(&m[i].cpus, cpu) && m[i].level > want)
				want = m[i].level;
		assert_int_equal(claims_levels(c)[cpu], want);
	}
	for (unsigned i = 0; i < n; i++) {
		const struct claim *cl = claims_find(c, m[i].id);

		if (!m[i].live) {
			assert_null(cl);
			continue;
		}
		live++;
		assert_non_null(cl);
		assert_int_equal(cl->pid, m[i].pid);
		assert_int_equal(cl->uid, m[i].uid);
	}
	assert_int_equal(claims_count(c), live);
	for (uint32_t uid = 0; uid < 4; uid++) {
		unsigned want = 0;

		for (unsigned i = 0; i < n; i++)
			want += m[i].live && m[i].uid == uid;
		assert_int_equal(claims_count_uid(c, uid), want);
	}
}

static void test_indexes_match_a_model(void **state)
{
	enum { N = 3000, NCPUS = 16 };
	struct model_claim *m = calloc(N, sizeof(*m));
	struct claims *c;
	unsigned n = 0;
	uint64_t now = 1;

	assert_non_null(m);
	srand(14);
	assert_int_equal(claims_new(NCPUS, &c), 0);
	for (unsigned step = 0; step < 6000; step++) {
		int op = rand() % 10;

		now += (uint64_t)(rand() % 3);
		if (op < 5 && n < N) {
			struct model_claim *x = &m[n];
			struct claim t = { 0 };
			uint64_t lease = rand() % 3 ? 0 : (uint64_t)(rand() % 50 + 1);

			x->client = (uint32_t)(rand() % 40 + 1);
			x->pid = rand() % 2 ? 0 : rand() % 60 + 1;
			x->uid = (uint32_t)(rand() % 4);
			x->level = (uint8_t)(LEVEL_NORMAL + rand() % (LEVEL_COUNT - LEVEL_NORMAL));
			cpuset_set(&x->cpus, (unsigned)(rand() % NCPUS));
			cpuset_set(&x->cpus, (unsigned)(rand() % NCPUS));
			x->expires = lease ? now + lease : 0;
			t = (struct claim){ .client = x->client, .pid = x->pid, .uid = x->uid, .level = x->level,
					    .cpus = x->cpus };
			assert_int_equal(claims_add(c, &t, now, lease, &x->id), 0);
			x->live = true;
			n++;
		} else if (op < 6 && n) {
			unsigned i = (unsigned)rand() % n;

			assert_int_equal(claims_release(c, m[i].id), m[i].live ? 0 : -ENOENT);
			m[i].live = false;
		} else if (op < 7) {
			int32_t pid = rand() % 60 + 1;
			unsigned want = 0;

			for (unsigned i = 0; i < n; i++)
				if (m[i].live && m[i].pid == pid) {
					m[i].live = false;
					want++;
				}
			assert_int_equal(claims_drop_pid(c, pid, NULL, NULL), want);
		} else if (op < 8) {
			uint32_t client = (uint32_t)(rand() % 40 + 1);
			unsigned want = 0;

			for (unsigned i = 0; i < n; i++)
				if (m[i].live && m[i].client == client && !m[i].pid) {
					m[i].live = false;
					want++;
				}
			assert_int_equal(claims_drop_client(c, client), want);
		} else {
			uint64_t next = 0;

			for (unsigned i = 0; i < n; i++) {
				if (m[i].live && m[i].expires && m[i].expires <= now)
					m[i].live = false;
				else if (m[i].live && m[i].expires && (!next || m[i].expires < next))
					next = m[i].expires;
			}
			assert_int_equal(claims_expire(c, now, NULL, NULL), next);
		}
		if (step % 50 == 0)
			model_check(c, m, n, NCPUS);
	}
	model_check(c, m, n, NCPUS);
	claims_free(c);
	free(m);
}

/*
 * The stamp a placement context trusts (claims_stamped()) against the
 * levels it stands for: random claims, releases, connection drops, owner
 * exits, lease expiries, revoked CPUs (a CPU went offline) and claims put
 * back under their old ids (a reload); after each, levels that changed
 * must come with a stamp no table had before, and a context answering
 * with the stamped claims must answer as placement_choose() does from the
 * levels themselves (a fresh context, nothing kept). A second table's
 * stamps never meet the first's.
 */
static void test_stamp_follows_levels(void **state)
{
	enum { STEPS = 4000, NLIVE = 64 };
	struct topo *t;
	void *map;
	size_t size;
	struct cpupri_geom geom;
	struct cpupri_view view;
	struct placement_config cfg;
	struct placement_ctx *ctx;
	struct placement_state *st;
	struct placement_result *got = malloc(sizeof(*got)), *want = malloc(sizeof(*want));
	struct claims *c, *other;
	uint32_t ids[NLIVE] = { 0 }, rotor = 0, changes = 0;
	uint8_t before[16];
	uint64_t now = 1, stamp, highest;

	assert_non_null(got);
	assert_non_null(want);
	assert_int_equal(topo_synthetic(1, 1, 2, 4, 2, &t), 0);
	assert_int_equal(t->ncpus, 16);
	assert_int_equal(cpupri_map_new(t, TOPO_SHARD_NODE, &map, &size), 0);
	geom = ((const struct cpupri_header *)map)->geom;
	assert_int_equal(cpupri_view_open(map, geom.size, &view), 0);
	cfg = (struct placement_config){ .managed = t->online, .prefer_idle = true, .avoid_smt = PLACEMENT_SMT_RT };
	assert_int_equal(placement_ctx_new(&cfg, t, &view, &ctx), 0);
	assert_int_equal(placement_state_new(ctx, &st), 0);
	assert_int_equal(claims_new(16, &c), 0);
	assert_int_equal(claims_new(16, &other), 0);
	assert_true(claims_stamped(c)->stamp != 0);
	assert_true(claims_stamped(c)->level == claims_levels(c));
	highest = claims_stamped(c)->stamp > claims_stamped(other)->stamp ? claims_stamped(c)->stamp
									  : claims_stamped(other)->stamp;
	assert_int_not_equal(claims_stamped(c)->stamp, claims_stamped(other)->stamp);
	srand(11);
	for (unsigned step = 0; step < STEPS; step++) {
		unsigned slot = (unsigned)rand() % NLIVE;
		int op = rand() % 8;
		uint32_t id;

		memcpy(before, claims_levels(c), sizeof(before));
		stamp = claims_stamped(c)->stamp;
		now += (uint64_t)(rand() % 3);
		if (op < 3 && !ids[slot]) {
			struct claim tmpl = { .client = (uint32_t)(rand() % 4 + 1), .pid = rand() % 2 ? 0 : rand() % 8 + 100,
					      .uid = 1000,
					      .level = (uint8_t)(LEVEL_NORMAL + rand() % (LEVEL_COUNT - LEVEL_NORMAL)) };

			for (int k = rand() % 3; k >= 0; k--)
				cpuset_set(&tmpl.cpus, (unsigned)(rand() % 16));
			assert_int_equal(claims_add(c, &tmpl, now, rand() % 2 ? 0 : (uint64_t)(rand() % 20 + 1), &id), 0);
			ids[slot] = id;
		} else if (op < 4 && ids[slot]) {
			/* Released, then back under its old id: a reload. */
			struct claim cl = *claims_find(c, ids[slot]);

			assert_int_equal(claims_release(c, ids[slot]), 0);
			if (rand() % 2) {
				cl.expires_ms = 0;
				assert_int_equal(claims_restore(c, &cl, 0), 0);
			} else {
				ids[slot] = 0;
			}
		} else if (op < 5) {
			claims_drop_client(c, (uint32_t)(rand() % 4 + 1));
		} else if (op < 6) {
			claims_drop_pid(c, rand() % 8 + 100, NULL, NULL);
		} else if (op < 7) {
			claims_expire(c, now, NULL, NULL);
		} else {
			claims_revoke_cpu(c, (uint32_t)(rand() % 16), NULL, NULL);
		}
		for (unsigned i = 0; i < NLIVE; i++)
			if (ids[i] && !claims_find(c, ids[i]))
				ids[i] = 0;
		if (rand() % 4 == 0)
			cpupri_set(map, &geom, (uint32_t)(rand() % 16),
				   rand() % 2 ? LEVEL_IDLE : level_from_rt_priority(rand() % 99 + 1));
		/* claims_levels_except() reads other levels through scratch
		 * space: it must leave the levels and their stamp alone. */
		if (rand() % 4 == 0)
			claims_levels_except(c, rand() % 8 + 100);
		if (memcmp(before, claims_levels(c), sizeof(before)) != 0) {
			assert_int_not_equal(claims_stamped(c)->stamp, stamp);
			changes++;
		}
		if (claims_stamped(c)->stamp != stamp) {
			assert_true(claims_stamped(c)->stamp > highest);
			highest = claims_stamped(c)->stamp;
		}
		for (int q = 0; q < 2; q++) {
			struct placement_request req = { .prio = rand() % 99 + 1, .count = q ? 1 + (uint32_t)rand() % 4 : 1,
							 .node = -1, .near_cpu = -1 };
			uint32_t rotor_want = rotor;
			int r, rr;

			cpuset_zero(&req.allowed);
			r = placement_ctx_choose_stamped(ctx, st, claims_stamped(c), &rotor, &req, NULL, got);
			rr = placement_choose(&cfg, t, &view, claims_levels(c), &rotor_want, &req, NULL, want);
			if (r != rr || got->n != want->n || rotor != rotor_want ||
			    memcmp(got->cpus, want->cpus, got->n * sizeof(got->cpus[0])) != 0)
				fail_msg("step %u op %d query %d: %d/%d n %u/%u first cpu %d/%d", step, op, q, r, rr,
					 got->n, want->n, got->n ? got->cpus[0] : -1, want->n ? want->cpus[0] : -1);
		}
	}
	assert_int_not_equal(claims_stamped(other)->stamp, claims_stamped(c)->stamp);
	assert_true(changes > STEPS / 4);
	claims_free(other);
	claims_free(c);
	placement_state_free(st);
	placement_ctx_free(ctx);
	cpupri_view_close(&view);
	free(map);
	topo_free(t);
	free(want);
	free(got);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The loop edge: a real owner's exit (pidfd) and a real lease (timer) end
 * their claims on their own, reported once each. */
static void test_attached_owner_exit_and_lease(void **state)
{
	struct event_base *base = event_base_new();
	struct claims *c;
	struct ended_log l = { 0 };
	int pipefd[2];
	pid_t child;
	uint32_t owned, leased, other;
	struct timeval limit = { .tv_sec = 5 };

	assert_non_null(base);
	assert_int_equal(pipe(pipefd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char ch;

		close(pipefd[1]);
		(void)!read(pipefd[0], &ch, 1);
		_exit(0);
	}
	close(pipefd[0]);
	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(claims_attach(c, base, now_ms, log_ended, &l), 0);
	assert_int_equal(add(c, 1, child, 0, LEVEL_RT1, "1", now_ms(), 0, &owned), 0);
	assert_int_equal(add(c, 1, 0, 0, LEVEL_RT1, "2", now_ms(), 0, &other), 0);
	assert_int_equal(add(c, 1, 0, 0, LEVEL_RT1, "3", now_ms(), 20, &leased), 0);
	/* An owner that does not exist is refused, nothing recorded. */
	assert_int_equal(add(c, 1, 0x3fffffff, 0, LEVEL_RT1, "4", now_ms(), 0, &other), -ESRCH);
	assert_int_equal(claims_count(c), 3);

	close(pipefd[1]); /* the child exits */
	for (int turn = 0; l.n < 2; turn++) {
		assert_true(turn < 100);
		assert_int_equal(event_base_loopexit(base, &limit), 0);
		assert_int_equal(event_base_loop(base, EVLOOP_ONCE), 0);
	}
	assert_int_equal(l.n, 2);
	waitpid(child, NULL, 0);
	assert_true((l.ids[0] == owned && l.ids[1] == leased) || (l.ids[0] == leased && l.ids[1] == owned));
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(l.why[i], l.ids[i] == owned ? RTPLACE_CLAIM_ENDED_OWNER_EXITED
							     : RTPLACE_CLAIM_ENDED_EXPIRED);
	assert_int_equal(claims_count(c), 1);
	assert_non_null(claims_find(c, other));
	claims_free(c);
	event_base_free(base);
}

/* A clock at half the loop's speed, counting its reads. */
static uint64_t slow_clock_start_ms;
static unsigned slow_clock_reads;

static uint64_t slow_clock_ms(void)
{
	slow_clock_reads++;
	return slow_clock_start_ms + (now_ms() - slow_clock_start_ms) / 2;
}

/*
 * The check every answer makes (claims_expire_due()) reads no clock while
 * no claim has a lease, and leaves the lease's timer armed when nothing is
 * due. A timer that fires before the table's clock says the lease is over
 * (here the clock runs at half speed, so every firing is early) arms
 * itself again until it is: the lease ends once, at its time.
 */
static void test_lease_timer_with_a_slow_clock(void **state)
{
	struct event_base *base = event_base_new();
	struct claims *c;
	struct ended_log l = { 0 };
	struct timeval turn_limit = { .tv_usec = 100 * 1000 };
	uint32_t kept, leased;
	uint64_t added_at;

	assert_non_null(base);
	slow_clock_start_ms = now_ms();
	slow_clock_reads = 0;
	assert_int_equal(claims_new(8, &c), 0);
	assert_int_equal(claims_attach(c, base, slow_clock_ms, log_ended, &l), 0);
	assert_int_equal(add(c, 1, 0, 0, LEVEL_RT1, "1", slow_clock_ms(), 0, &kept), 0);
	slow_clock_reads = 0;
	for (int i = 0; i < 1000; i++)
		assert_int_equal(claims_expire_due(c, log_ended, &l), 0);
	assert_int_equal(slow_clock_reads, 0);

	added_at = slow_clock_ms();
	assert_int_equal(add(c, 1, 0, 0, LEVEL_RT1, "2", added_at, 20, &leased), 0);
	for (int i = 0; i < 1000; i++)
		claims_expire_due(c, log_ended, &l);
	assert_int_equal(l.n, 0);
	/* The lease ends 40 ms from now; a timer left unarmed fails in 5 s. */
	for (int turn = 0; l.n < 1; turn++) {
		assert_true(turn < 50);
		assert_int_equal(event_base_loopexit(base, &turn_limit), 0);
		assert_int_equal(event_base_loop(base, EVLOOP_ONCE), 0);
	}
	assert_true(slow_clock_ms() >= added_at + 20);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.ids[0], leased);
	assert_int_equal(l.why[0], RTPLACE_CLAIM_ENDED_EXPIRED);
	assert_int_equal(claims_count(c), 1);
	assert_non_null(claims_find(c, kept));
	claims_free(c);
	event_base_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels_are_max_of_claims),
		cmocka_unit_test(test_release_rules),
		cmocka_unit_test(test_bad_claims_refused),
		cmocka_unit_test(test_drop_client_and_pid),
		cmocka_unit_test(test_lease_expiry),
		cmocka_unit_test(test_sixty_claims_distinct_ids),
		cmocka_unit_test(test_at_or_after_matches_a_scan),
		cmocka_unit_test(test_count_per_uid),
		cmocka_unit_test(test_levels_except_and_revoke),
		cmocka_unit_test(test_life_watched),
		cmocka_unit_test(test_indexes_match_a_model),
		cmocka_unit_test(test_stamp_follows_levels),
		cmocka_unit_test(test_attached_owner_exit_and_lease),
		cmocka_unit_test(test_lease_timer_with_a_slow_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
