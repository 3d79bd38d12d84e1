/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Local reads end to end (DESIGN §19), on simulated daemons (--topology,
 * no root): on the 480-CPU and the 16-LLC topologies, a handle that reads
 * locally answers every non-claiming query as the daemon does over the
 * socket for the same state, while another connection claims and releases
 * at random (the simulated daemon's levels change with claims only:
 * test-local-read drives the map's levels too), and the daemon counts none
 * of the local queries. The descriptors LOCAL hands out refuse a writable
 * mapping, mprotect() to write and write(2); a request of protocol version
 * 2 gets no descriptors (the client then keeps asking the socket).
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include "protocol.h"
#include "rtplace.h"
#include "testlib.h"

/* Requests per topology, each answered both ways. */
#define SAME_REQUESTS 25000
#define SAME_MAX_CLAIMS 48

/* One daemon per test, stopped by the teardown also when an assertion
 * failed. */
static struct harness_daemon daemon_sim;

static int setup_480(void **state)
{
	(void)state;
	return harness_start_sim(&daemon_sim, "2s-240c-480t");
}

static int setup_16llc(void **state)
{
	(void)state;
	return harness_start_sim(&daemon_sim, "epyc-2s-16ccx-256t");
}

static int teardown(void **state)
{
	(void)state;
	return harness_stop(&daemon_sim) == 0 ? 0 : -1;
}

/* test_random_query() as a librtplace request, its allowed CPUs in
 * allowed. */
static void random_request(uint64_t *rng, unsigned ncpus, unsigned nnodes, cpu_set_t *allowed,
			   struct rtplace_request *req)
{
	struct rtplace_query q;

	test_random_query(rng, ncpus, nnodes, &q);
	*req = (struct rtplace_request)RTPLACE_REQUEST_INIT;
	req->prio = q.prio;
	req->count = q.count;
	req->node = q.node;
	req->near_cpu = q.near_cpu;
	req->flags = q.flags;
	CPU_ZERO(allowed);
	for (unsigned c = 0; c < ncpus; c++)
		if (rtplace_cpumask_test(&q.allowed, c))
			CPU_SET(c, allowed);
	if (CPU_COUNT(allowed)) {
		req->allowed = allowed;
		req->allowed_size = sizeof(*allowed);
	}
}

static void same_answers(const char *name, unsigned ncpus, unsigned nnodes, uint64_t seed)
{
	struct harness_daemon *d = &daemon_sim;
	struct rtplace *sock, *loc;
	struct rtplace_answer *a = malloc(2 * sizeof(*a));
	uint64_t claims[SAME_MAX_CLAIMS], rng = seed;
	struct rtplace_status before, after;
	unsigned nclaims = 0, nonempty = 0;
	cpu_set_t allowed;

	assert_non_null(a);
	assert_int_equal(rtplace_connect(d->socket, &sock), 0);
	assert_int_equal(rtplace_connect(d->socket, &loc), 0);
	assert_int_equal(rtplace_local_open(loc), 0);
	assert_int_equal(rtplace_local_open(loc), 0);
	for (unsigned i = 0; i < SAME_REQUESTS; i++) {
		struct rtplace_request req;

		if (test_rand_below(&rng, 4) == 0) {
			if (nclaims == SAME_MAX_CLAIMS || (nclaims && test_rand_below(&rng, 2))) {
				unsigned k = test_rand_below(&rng, nclaims);

				assert_int_equal(rtplace_release(sock, claims[k], NULL), 0);
				claims[k] = claims[--nclaims];
			} else {
				random_request(&rng, ncpus, nnodes, &allowed, &req);
				req.flags |= RTPLACE_QUERY_F_CLAIM;
				req.lease_ms = RTPLACE_LEASE_INFINITE;
				assert_int_equal(rtplace_query(sock, &req, &a[0]), 0);
				if (a[0].claim_id)
					claims[nclaims++] = a[0].claim_id;
			}
		}
		random_request(&rng, ncpus, nnodes, &allowed, &req);
		assert_int_equal(rtplace_query(loc, &req, &a[0]), 0);
		assert_int_equal(rtplace_query(sock, &req, &a[1]), 0);
		if (a[0].count != a[1].count || strcmp(a[0].reason, a[1].reason) != 0)
			fail_msg("%s request %u: local %u CPUs '%s', daemon %u '%s'", name, i, a[0].count, a[0].reason,
				 a[1].count, a[1].reason);
		for (unsigned k = 0; k < a[1].count; k++) {
			assert_int_equal(a[0].cpus[k], a[1].cpus[k]);
			assert_int_equal(a[0].levels[k], a[1].levels[k]);
		}
		assert_int_equal(a[0].level, a[1].level);
		nonempty += a[1].count > 0;
	}
	print_message("%s: %u requests, %u with CPUs\n", name, SAME_REQUESTS, nonempty);
	assert_true(nonempty > SAME_REQUESTS / 2);
	/* Answered in this process: the daemon counts none of them. */
	assert_int_equal(rtplace_status(loc, &before), 0);
	for (int i = 0; i < 100; i++) {
		struct rtplace_request req = RTPLACE_REQUEST_INIT;

		assert_int_equal(rtplace_query(loc, &req, &a[0]), 0);
	}
	assert_int_equal(rtplace_status(loc, &after), 0);
	assert_int_equal(after.queries, before.queries);
	rtplace_close(loc);
	rtplace_close(sock);
	free(a);
}

static void test_same_answers_480(void **state)
{
	(void)state;
	same_answers("2s-240c-480t", 480, 2, 0x2545f4914f6cdd1dull);
}

static void test_same_answers_16llc(void **state)
{
	(void)state;
	same_answers("epyc-2s-16ccx-256t", 256, 2, 0x94d049bb133111ebull);
}

static void test_descriptors(void **state)
{
	struct proto_msg rep;
	int fd, fds[2];

	(void)state;
	fd = harness_connect(daemon_sim.socket);
	assert_true(fd >= 0);
	/* An older client's version: an error, no descriptors. */
	assert_int_equal(harness_local(fd, 2, &rep, fds), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_ERROR);
	assert_int_equal(rep.hdr.status, -EOPNOTSUPP);
	assert_int_equal(harness_local(fd, RTPLACE_PROTO_VERSION, &rep, fds), 2);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_LOCAL_REPLY);
	assert_null(test_fd_writable_by(fds[0], (size_t)rep.local_reply.map_size));
	assert_null(test_fd_writable_by(fds[1], (size_t)rep.local_reply.snap_size));
	close(fds[0]);
	close(fds[1]);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_answers_480, setup_480, teardown),
		cmocka_unit_test_setup_teardown(test_same_answers_16llc, setup_16llc, teardown),
		cmocka_unit_test_setup_teardown(test_descriptors, setup_480, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
