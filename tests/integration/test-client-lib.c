/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * librtplace against the real rtplaced, in simulation mode on the shared
 * 480-CPU topology (no root needed): every call of the public API, claims
 * and their three lifetimes (release, connection, owner process), errors
 * with the daemon's reasons, a subscription told of a claim's expiry, a
 * handle shared by threads, the reconnect after a daemon restart (which
 * ends a subscription), and rtplace_place_self() on this machine's own CPUs.
 * The harness stops the daemon at exit, also when an assertion fails.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rtplace.h"
#include "rtplace-proto.h"

#include "harness.h"
#include "testlib.h"

static char topo8192[4096];
static struct harness_daemon daemon_sim;

static int setup(void **state)
{
	struct rtplace *rp;

	assert_int_equal(harness_start_sim(&daemon_sim, "2s-240c-480t"), 0);
	assert_int_equal(rtplace_connect(daemon_sim.socket, &rp), 0);
	*state = rp;
	return 0;
}

static int teardown(void **state)
{
	rtplace_close(*state);
	assert_int_equal(harness_stop(&daemon_sim), 0);
	return 0;
}

/*
 * Waits (bounded) until the daemon counts `want` active claims: a
 * disconnect or a process exit reaches its event loop independently of the
 * next request, so the check is "eventually", with a generous bound.
 */
static void wait_claims(struct rtplace *rp, uint64_t want)
{
	struct rtplace_status st;

	for (int i = 0; i < 500; i++) {
		assert_int_equal(rtplace_status(rp, &st), 0);
		if (st.claims_active == want)
			return;
		usleep(10000);
	}
	fail_msg("claims_active stays %llu, want %llu", (unsigned long long)st.claims_active,
		 (unsigned long long)want);
}

static void test_connect_errors(void **state)
{
	struct rtplace *rp = NULL;
	char longpath[200];

	(void)state;
	assert_int_equal(rtplace_connect("/nonexistent/rtplaced.sock", &rp), -ENOENT);
	assert_null(rp);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(rtplace_connect(longpath, &rp), -ENAMETOOLONG);
	rtplace_close(NULL);
	rtplace_cpus_free(NULL);
	assert_int_equal(rtplace_connect(NULL, NULL), -EINVAL);
}

/*
 * A listening socket at a fresh path (in ret_path) whose backlog is full,
 * as a stopped daemon's is: listen(0) takes one connection, the next
 * waits. Its fd in ret_listener; the connection holding the backlog in
 * ret_held.
 */
static void full_backlog(char ret_path[108], int *ret_listener, int *ret_held)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/test-client-lib.XXXXXX";
	int l, c;

	assert_non_null(mkdtemp(dir));
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/full.sock", dir);
	l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(l, 0), 0);
	c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&addr, sizeof(addr)), 0);
	/* Full now: a non-blocking connect is refused at once. */
	{
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		assert_int_equal(connect(probe, (struct sockaddr *)&addr, sizeof(addr)), -1);
		assert_int_equal(errno, EAGAIN);
		close(probe);
	}
	memcpy(ret_path, addr.sun_path, sizeof(addr.sun_path));
	*ret_listener = l;
	*ret_held = c;
}

static void full_backlog_free(const char *path, int listener, int held)
{
	char dir[108];

	close(held);
	close(listener);
	unlink(path);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	rmdir(dir);
}

/* connect() waited for a full backlog for ever: now the library's
 * timeout (the default, 5 s) bounds it. The alarm fails a hang. */
static void test_connect_full_backlog(void **state)
{
	struct rtplace *rp = NULL;
	char path[108];
	int l, held;

	(void)state;
	full_backlog(path, &l, &held);
	alarm(30);
	assert_int_equal(rtplace_connect(path, &rp), -ETIMEDOUT);
	alarm(0);
	assert_null(rp);
	full_backlog_free(path, l, held);
}

/* A peer that accepts and then sends events of a later protocol revision
 * (which clients skip) every 10 ms, never a reply. */
struct chatty_peer {
	int listener;
	bool stop; /* __atomic: set by the test, read by the peer */
};

static void *chatty_peer_run(void *arg)
{
	struct chatty_peer *p = arg;
	const struct rtplace_msg_hdr ev = {
		.magic = RTPLACE_PROTO_MAGIC,
		.version = RTPLACE_PROTO_VERSION,
		.type = 0x03ff,
		.length = sizeof(ev),
	};
	int c = accept4(p->listener, NULL, NULL, SOCK_CLOEXEC);

	while (c >= 0 && !__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
		if (send(c, &ev, sizeof(ev), MSG_NOSIGNAL) < 0)
			break;
		usleep(10000);
	}
	if (c >= 0)
		close(c);
	return NULL;
}

/* Each receive was bounded, the wait for a reply was not: events kept
 * the library waiting for ever. Now the timeout bounds it whole. */
static void test_reply_deadline(void **state)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/test-client-lib.XXXXXX";
	struct chatty_peer peer = { 0 };
	struct rtplace_status st;
	struct timespec t0, t1;
	struct rtplace *rp;
	pthread_t th;
	double s;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/chatty.sock", dir);
	peer.listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(peer.listener, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(peer.listener, 1), 0);
	assert_int_equal(pthread_create(&th, NULL, chatty_peer_run, &peer), 0);
	assert_int_equal(rtplace_connect(addr.sun_path, &rp), 0);
	assert_int_equal(rtplace_set_timeout(rp, 300), 0);
	alarm(30);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(rtplace_status(rp, &st), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	alarm(0);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("status answered by events only: -ETIMEDOUT after %.3f s (timeout 0.3 s)\n", s);
	assert_true(s < 3.0);
	rtplace_close(rp);
	__atomic_store_n(&peer.stop, true, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	close(peer.listener);
	unlink(addr.sun_path);
	rmdir(dir);
}

static void test_env_socket(void **state)
{
	struct rtplace_status st;
	struct rtplace *rp;

	(void)state;
	setenv(RTPLACE_SOCKET_ENV, daemon_sim.socket, 1);
	assert_int_equal(rtplace_connect(NULL, &rp), 0);
	unsetenv(RTPLACE_SOCKET_ENV);
	assert_int_equal(rtplace_status(rp, &st), 0);
	rtplace_close(rp);
}

static void test_status(void **state)
{
	struct rtplace_status st;

	assert_int_equal(rtplace_status(*state, &st), 0);
	assert_true(st.version[0] != '\0');
	assert_int_equal(st.ncpus, 480);
	assert_int_equal(st.nonline, 480);
	assert_int_equal(st.nnodes, 2);
	assert_false(st.flags & RTPLACE_STATUS_F_TRACKING);
	assert_true(st.clients >= 1);
}

static void test_cpus_snapshot(void **state)
{
	struct rtplace_cpu *cpus = NULL;
	size_t n = 0;

	/* 480 CPUs are four pages of the CPUS request. */
	assert_int_equal(rtplace_cpus(*state, &cpus, &n), 0);
	assert_int_equal(n, 480);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(cpus[i].cpu, (int)i);
		assert_int_equal(cpus[i].level, RTPLACE_LEVEL_IDLE);
		assert_true(cpus[i].flags & RTPLACE_CPU_F_ONLINE);
		assert_in_range(cpus[i].node, 0, 1);
		/* one node per package in this topology */
		assert_int_equal(cpus[i].package, cpus[i].node);
		assert_int_equal(cpus[i].claim_id, 0);
	}
	assert_string_equal(rtplace_level_name(cpus[0].level), "idle");
	rtplace_cpus_free(cpus);
}

/* A simulated topology keeps no time by class, and says so. */
static void test_cpu_times_unsupported(void **state)
{
	struct rtplace_cpu_time *times = NULL;
	size_t n = 0;

	assert_int_equal(rtplace_cpu_times(*state, &times, &n), -EOPNOTSUPP);
	assert_null(times);
	assert_int_equal(rtplace_cpu_times(NULL, &times, &n), -EINVAL);
	assert_string_equal(rtplace_class_name(RTPLACE_CLASS_IDLE), "idle");
	assert_string_equal(rtplace_class_name(RTPLACE_CLASS_NORMAL), "normal");
	assert_string_equal(rtplace_class_name(RTPLACE_CLASS_RT), "rt");
	assert_string_equal(rtplace_class_name(RTPLACE_CLASS_DL), "dl");
	assert_string_equal(rtplace_class_name(RTPLACE_CLASS_COUNT), "?");
}

static void test_level_names(void **state)
{
	(void)state;
	assert_string_equal(rtplace_level_name(RTPLACE_LEVEL_OFFLINE), "offline");
	assert_string_equal(rtplace_level_name(RTPLACE_LEVEL_NORMAL), "normal");
	assert_string_equal(rtplace_level_name(RTPLACE_LEVEL_RT1 + 49), "rt50");
	assert_string_equal(rtplace_level_name(RTPLACE_LEVEL_DL), "dl");
	assert_string_equal(rtplace_level_name(RTPLACE_LEVEL_COUNT), "?");
}

static void test_query_plain(void **state)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_answer a;
	cpu_set_t allowed;

	req.prio = 50;
	req.count = 4;
	assert_int_equal(rtplace_query(*state, &req, &a), 0);
	assert_int_equal(a.count, 4);
	assert_int_equal(a.claim_id, 0);
	assert_int_equal(CPU_COUNT(&a.set), 4);
	for (unsigned i = 0; i < a.count; i++) {
		assert_true(CPU_ISSET(a.cpus[i], &a.set));
		assert_int_equal(a.levels[i], RTPLACE_LEVEL_IDLE);
	}

	/* Within an allowed set, and fewer CPUs than asked is still an answer. */
	CPU_ZERO(&allowed);
	CPU_SET(5, &allowed);
	CPU_SET(7, &allowed);
	req.allowed = &allowed;
	req.allowed_size = sizeof(allowed);
	req.count = 3;
	assert_int_equal(rtplace_query(*state, &req, &a), 0);
	assert_int_equal(a.count, 2);
	assert_true(CPU_EQUAL(&a.set, &allowed));
	assert_true(a.reason[0] != '\0');
}

static void test_query_errors(void **state)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_answer a;
	char reason[RTPLACE_REASON_LEN];
	cpu_set_t *big;

	req.prio = 0;
	assert_int_equal(rtplace_query(*state, &req, &a), -ERANGE);
	req.prio = 100;
	assert_int_equal(rtplace_query(*state, &req, &a), -ERANGE);
	req.prio = 10;
	req.count = RTPLACE_ANSWER_MAX + 1;
	assert_int_equal(rtplace_query(*state, &req, &a), -ERANGE);
	req.count = 1;
	req.policy = SCHED_OTHER + 7;
	assert_int_equal(rtplace_query(*state, &req, &a), -EINVAL);
	req.policy = SCHED_RR;
	req.reserved[3] = 1;
	assert_int_equal(rtplace_query(*state, &req, &a), -EINVAL);
	req.reserved[3] = 0;

	/* A CPU beyond what the protocol can name. */
	big = CPU_ALLOC(2048);
	assert_non_null(big);
	CPU_ZERO_S(CPU_ALLOC_SIZE(2048), big);
	CPU_SET_S(1500, CPU_ALLOC_SIZE(2048), big);
	req.allowed = big;
	req.allowed_size = CPU_ALLOC_SIZE(2048);
	assert_int_equal(rtplace_query(*state, &req, &a), -ERANGE);
	CPU_FREE(big);
	req.allowed = NULL;
	req.allowed_size = 0;

	/* Judged by the daemon, which knows the topology: node 7 does not exist. */
	req.node = 7;
	assert_int_equal(rtplace_query(*state, &req, &a), -ERANGE);
	assert_int_equal(rtplace_last_reason(*state, reason, sizeof(reason)), 0);
	assert_true(reason[0] != '\0');
	req.node = -1;

	/* A success clears the reason. */
	assert_int_equal(rtplace_query(*state, &req, &a), 0);
	assert_int_equal(rtplace_last_reason(*state, reason, sizeof(reason)), -ENOENT);

	/* An owner the caller may not use: init belongs to root, so only a
	 * non-root caller is refused; any caller is refused a dead pid. */
	req.flags = RTPLACE_QUERY_F_CLAIM;
	req.owner_pid = INT32_MAX;
	assert_int_equal(rtplace_query(*state, &req, &a), -ESRCH);
}

static bool cpu_claimed_by(struct rtplace *rp, int cpu, uint64_t claim)
{
	struct rtplace_cpu *cpus;
	size_t n;
	bool r;

	assert_int_equal(rtplace_cpus(rp, &cpus, &n), 0);
	assert_in_range(cpu, 0, (int)n - 1);
	r = cpus[cpu].claim_id == claim;
	rtplace_cpus_free(cpus);
	return r;
}

static void test_claim_release(void **state)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_answer a, b;
	struct rtplace_claim one, *list = NULL;
	unsigned ncpus = 0;
	cpu_set_t both;
	size_t n = 0;

	req.prio = 90;
	req.count = 2;
	req.flags = RTPLACE_QUERY_F_CLAIM;
	req.lease_ms = RTPLACE_LEASE_INFINITE;
	assert_int_equal(rtplace_query(*state, &req, &a), 0);
	assert_int_equal(a.count, 2);
	assert_true(a.claim_id != 0);
	assert_int_equal(a.lease_ms, RTPLACE_LEASE_INFINITE);
	assert_true(cpu_claimed_by(*state, a.cpus[0], a.claim_id));
	assert_true(cpu_claimed_by(*state, a.cpus[1], a.claim_id));

	/* A second claim at the same priority gets other CPUs. */
	assert_int_equal(rtplace_query(*state, &req, &b), 0);
	assert_int_equal(b.count, 2);
	assert_true(b.claim_id != 0 && b.claim_id != a.claim_id);
	CPU_AND(&both, &a.set, &b.set);
	assert_int_equal(CPU_COUNT(&both), 0);

	/* One claim by id is the list's entry for it. */
	assert_int_equal(rtplace_claim(*state, a.claim_id, &one), 0);
	assert_int_equal(rtplace_claims(*state, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[0].id, a.claim_id);
	assert_memory_equal(&one, &list[0], sizeof(one));
	rtplace_claims_free(list);
	assert_int_equal(one.ncpus, 2);
	assert_true(CPU_EQUAL(&one.cpus, &a.set));

	assert_int_equal(rtplace_release(*state, a.claim_id, &ncpus), 0);
	assert_int_equal(ncpus, 2);
	assert_true(cpu_claimed_by(*state, a.cpus[0], 0));
	assert_int_equal(rtplace_release(*state, a.claim_id, NULL), -ENOENT);
	/* The daemon answers the next claim up (b's): not the one asked. */
	assert_int_equal(rtplace_claim(*state, a.claim_id, &one), -ENOENT);
	assert_int_equal(rtplace_claim(*state, 0, &one), -EINVAL);
	assert_int_equal(rtplace_claim(*state, b.claim_id, &one), 0);
	assert_int_equal(one.id, b.claim_id);
	assert_int_equal(rtplace_release(*state, 0, NULL), -EINVAL);
	assert_int_equal(rtplace_release(*state, b.claim_id, NULL), 0);
	wait_claims(*state, 0);
}

static void test_claim_ends_with_connection(void **state)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_answer a;
	struct rtplace *other;

	assert_int_equal(rtplace_connect(daemon_sim.socket, &other), 0);
	req.prio = 20;
	req.flags = RTPLACE_QUERY_F_CLAIM;
	assert_int_equal(rtplace_query(other, &req, &a), 0);
	assert_true(a.claim_id != 0);
	/* The daemon's default lease (claim-timeout-ms). */
	assert_true(a.lease_ms > 0 && a.lease_ms != RTPLACE_LEASE_INFINITE);
	wait_claims(*state, 1);
	rtplace_close(other);
	wait_claims(*state, 0);
}

static void test_claim_lives_with_owner(void **state)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_answer a;
	struct rtplace *other;
	int status;
	pid_t child;

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* Bounded: gone in 30 s even if the test dies without killing it. */
		alarm(30);
		pause();
		_exit(0);
	}
	assert_int_equal(rtplace_connect(daemon_sim.socket, &other), 0);
	req.prio = 30;
	req.flags = RTPLACE_QUERY_F_CLAIM;
	req.lease_ms = RTPLACE_LEASE_INFINITE;
	req.owner_pid = child;
	assert_int_equal(rtplace_query(other, &req, &a), 0);
	assert_true(a.claim_id != 0);
	/* The connection goes, the claim stays: it belongs to the process. */
	rtplace_close(other);
	wait_claims(*state, 1);
	assert_true(cpu_claimed_by(*state, a.cpus[0], a.claim_id));
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	wait_claims(*state, 0);
}

static void test_move_unsupported(void **state)
{
	struct rtplace_move_request mv = { .tid = getpid(), .flags = RTPLACE_MOVE_F_SET_SCHED,
					   .policy = SCHED_FIFO, .prio = 10 };
	struct rtplace_move_result res;

	assert_int_equal(rtplace_move(*state, &mv, &res), -EOPNOTSUPP);
	mv.tid = 0;
	assert_int_equal(rtplace_move(*state, &mv, &res), -EINVAL);
	mv.tid = getpid();
	mv.prio = 0;
	assert_int_equal(rtplace_move(*state, &mv, &res), -ERANGE);
}

/*
 * A simulated daemon moves nothing but publishes records: a claim is made
 * and its lease runs out, and the subscriber is told both, with the
 * claim's id and its owner as tid.
 */
static void test_subscribe_claim_expired(void **state)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_notification rec;
	struct rtplace_answer a;
	struct rtplace_sub *sub;
	struct pollfd p = { .events = POLLIN };
	size_t n = 0;
	uint64_t lost = 1;

	assert_int_equal(rtplace_subscribe(NULL, &sub), -EINVAL);
	assert_int_equal(rtplace_sub_fd(NULL), -EINVAL);
	assert_int_equal(rtplace_sub_capacity(NULL), 0);
	rtplace_sub_free(NULL);
	assert_string_equal(rtplace_notification_name(RTPLACE_NOTIFY_CLAIM_EXPIRED), "claim-expired");
	assert_string_equal(rtplace_notification_name(RTPLACE_NOTIFY_CLAIM_REVOKED), "claim-revoked");
	assert_string_equal(rtplace_notification_name(RTPLACE_NOTIFY_CLAIM_CREATED), "claim-created");
	assert_string_equal(rtplace_notification_name(RTPLACE_NOTIFY_CLAIM_RELEASED), "claim-released");
	assert_string_equal(rtplace_notification_name(RTPLACE_NOTIFY_ISOLATED), "isolated");
	assert_string_equal(rtplace_notification_name(RTPLACE_NOTIFY_ISOLATION_RELEASED), "released");
	assert_string_equal(rtplace_notification_name(99), "?");

	assert_int_equal(rtplace_subscribe(*state, &sub), 0);
	assert_true(rtplace_sub_capacity(sub) >= 64);
	assert_int_equal(rtplace_sub_read(sub, NULL, 1, &n, NULL), -EINVAL);
	req.prio = 20;
	req.flags = RTPLACE_QUERY_F_CLAIM;
	req.lease_ms = 50;
	req.owner_pid = getpid();
	assert_int_equal(rtplace_query(*state, &req, &a), 0);
	assert_int_equal(a.count, 1);
	p.fd = rtplace_sub_fd(sub);
	/* Made, then expired: two records naming the claim. */
	for (unsigned type = RTPLACE_NOTIFY_CLAIM_CREATED;; type = RTPLACE_NOTIFY_CLAIM_EXPIRED) {
		assert_int_equal(poll(&p, 1, 5000), 1);
		assert_int_equal(rtplace_sub_read(sub, &rec, 1, &n, &lost), 0);
		assert_int_equal(n, 1);
		assert_int_equal(lost, 0);
		assert_int_equal(rec.type, type);
		assert_int_equal(rec.claim_id, a.claim_id);
		assert_int_equal(rec.tid, getpid());
		assert_int_equal(rec.uid, getuid());
		assert_int_equal(rec.from_cpu, a.cpus[0]);
		assert_int_equal(rec.to_cpu, -1);
		assert_int_equal(rec.policy, SCHED_OTHER);
		assert_int_equal(rec.prio, 20);
		assert_true(rec.seq > 0);
		if (type == RTPLACE_NOTIFY_CLAIM_EXPIRED)
			break;
	}
	rtplace_sub_free(sub);
	wait_claims(*state, 0);
}

struct thread_arg {
	struct rtplace *rp;
	int failures;
};

static void *query_thread(void *p)
{
	struct thread_arg *t = p;
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_answer a;

	for (int i = 0; i < 200; i++) {
		req.prio = 1 + i % 99;
		req.count = 1 + (unsigned)i % 8;
		if (rtplace_query(t->rp, &req, &a) < 0 || a.count != req.count)
			t->failures++;
	}
	return NULL;
}

static void test_shared_handle(void **state)
{
	struct thread_arg args[4];
	pthread_t th[4];

	for (int i = 0; i < 4; i++) {
		args[i] = (struct thread_arg){ .rp = *state };
		assert_int_equal(pthread_create(&th[i], NULL, query_thread, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(args[i].failures, 0);
	}
}

/* The handle survives a daemon restart: the path (a symlink we repoint)
 * names a new daemon, and the next call reconnects. Runs last: it replaces
 * the group's daemon. */
static void test_reconnect(void **state)
{
	struct harness_daemon second;
	struct rtplace_status st;
	char dir[] = "/tmp/rtplace-client.XXXXXX", link[64], tmp[80];
	struct rtplace_notification rec;
	struct rtplace_sub *sub;
	struct rtplace *rp;
	struct pollfd p = { .events = POLLIN };
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(link, sizeof(link), "%s/sock", dir);
	snprintf(tmp, sizeof(tmp), "%s/sock.new", dir);
	assert_int_equal(symlink(daemon_sim.socket, link), 0);
	assert_int_equal(rtplace_connect(link, &rp), 0);
	assert_int_equal(rtplace_status(rp, &st), 0);
	assert_int_equal(rtplace_subscribe(rp, &sub), 0);
	p.fd = rtplace_sub_fd(sub);

	assert_int_equal(harness_start_sim(&second, "2s-240c-480t"), 0);
	assert_int_equal(symlink(second.socket, tmp), 0);
	assert_int_equal(rename(tmp, link), 0);
	/* The first daemon stops: the handle's connection is dead now. */
	assert_int_equal(harness_stop(&daemon_sim), 0);
	/* The subscription learns it too, and does not follow the handle to
	 * the new daemon. */
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(rtplace_sub_read(sub, &rec, 1, &n, NULL), -ECONNRESET);
	rtplace_sub_free(sub);
	assert_int_equal(rtplace_status(rp, &st), 0);
	assert_int_equal(st.queries, 0);

	/* With no daemon at all, the one reconnect fails and says why. */
	assert_int_equal(harness_stop(&second), 0);
	assert_int_equal(rtplace_status(rp, &st), -ENOENT);
	rtplace_close(rp);
	unlink(link);
	rmdir(dir);
	/* The group teardown stops daemon_sim: give it a daemon again. */
	assert_int_equal(harness_start_sim(&daemon_sim, "2s-240c-480t"), 0);
}

struct place_arg {
	struct rtplace *rp;
	int r;
	struct rtplace_answer a;
	cpu_set_t after;
	int policy;
	struct sched_param param;
};

/* In a thread of its own: place_self changes only the calling thread. */
static void *place_thread(void *p)
{
	struct place_arg *pa = p;
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	unsigned flags = geteuid() == 0 ? RTPLACE_PLACE_F_SCHED : 0;

	req.prio = 10;
	pa->r = rtplace_place_self(pa->rp, &req, flags, &pa->a);
	sched_getaffinity(0, sizeof(pa->after), &pa->after);
	pa->policy = sched_getscheduler(0);
	sched_getparam(0, &pa->param);
	return NULL;
}

static void test_place_self(void **state)
{
	struct place_arg pa = { .rp = *state };
	cpu_set_t mine, before;
	pthread_t th;
	/* The answer may be CPU 1, at rt10 as root: held while the hotplug
	 * test cannot take CPU 1 away, and no other RT test runs there. */
	int lock = test_lock_rt_cpu(TEST_RT_LOCK_WAIT_S);

	assert_true(lock >= 0);
	assert_int_equal(sched_getaffinity(0, sizeof(before), &before), 0);
	assert_int_equal(pthread_create(&th, NULL, place_thread, &pa), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(pa.r, 0);
	assert_int_equal(pa.a.count, 1);
	assert_true(pa.a.claim_id != 0);
	/* The thread runs on the answer, which this machine can honour. */
	assert_true(CPU_EQUAL(&pa.after, &pa.a.set));
	assert_true(CPU_ISSET(pa.a.cpus[0], &before));
	if (geteuid() == 0) {
		assert_int_equal(pa.policy, SCHED_FIFO);
		assert_int_equal(pa.param.sched_priority, 10);
	} else {
		assert_int_equal(pa.policy, SCHED_OTHER);
	}
	/* The main thread is untouched. */
	assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
	assert_true(CPU_EQUAL(&mine, &before));
	assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
	assert_int_equal(rtplace_release(*state, pa.a.claim_id, NULL), 0);
	close(lock);
}

/*
 * librtplace on a simulated machine of 8,192 CPUs: an allowed set of
 * CPU_ALLOC_SIZE() bytes names CPUs past 1023, and the answer's cpus[]
 * holds them (its cpu_set_t only the CPUs below CPU_SETSIZE); a set that
 * names a CPU past what rtplace names is -ERANGE.
 */
static void test_past_1024_cpus(void **state)
{
	struct harness_daemon d;
	const char *args[] = { "--topology", topo8192, NULL };
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	size_t size = CPU_ALLOC_SIZE(RTPLACE_MAX_CPUS), wide = CPU_ALLOC_SIZE(RTPLACE_MAX_CPUS + 64);
	cpu_set_t *set = CPU_ALLOC(RTPLACE_MAX_CPUS + 64);
	struct rtplace_answer ans;
	struct rtplace_status st;
	struct rtplace *rp;
	unsigned ncpus;

	(void)state;
	assert_non_null(set);
	if (!topo8192[0]) {
		CPU_FREE(set);
		skip();
	}
	assert_int_equal(harness_start(&d, args, NULL), 0);
	assert_int_equal(rtplace_connect(d.socket, &rp), 0);
	assert_int_equal(rtplace_status(rp, &st), 0);
	assert_int_equal(st.ncpus, RTPLACE_MAX_CPUS);

	CPU_ZERO_S(size, set);
	CPU_SET_S(5000, size, set);
	CPU_SET_S(RTPLACE_MAX_CPUS - 1, size, set);
	req.prio = 50;
	req.count = 2;
	req.flags = RTPLACE_QUERY_F_CLAIM;
	req.allowed = set;
	req.allowed_size = size;
	assert_int_equal(rtplace_query(rp, &req, &ans), 0);
	assert_int_equal(ans.count, 2);
	assert_true((ans.cpus[0] == 5000 && ans.cpus[1] == RTPLACE_MAX_CPUS - 1) ||
		    (ans.cpus[1] == 5000 && ans.cpus[0] == RTPLACE_MAX_CPUS - 1));
	assert_int_equal(CPU_COUNT(&ans.set), 0);
	assert_int_not_equal(ans.claim_id, 0);
	assert_int_equal(rtplace_release(rp, ans.claim_id, &ncpus), 0);
	assert_int_equal(ncpus, 2);

	/* a set wider than rtplace's: fine while its extra CPUs are unset */
	CPU_ZERO_S(wide, set);
	CPU_SET_S(8000, wide, set);
	req.flags = 0;
	req.count = 1;
	req.allowed_size = wide;
	assert_int_equal(rtplace_query(rp, &req, &ans), 0);
	assert_int_equal(ans.cpus[0], 8000);
	CPU_SET_S(RTPLACE_MAX_CPUS, wide, set);
	assert_int_equal(rtplace_query(rp, &req, &ans), -ERANGE);

	rtplace_close(rp);
	CPU_FREE(set);
	assert_int_equal(harness_stop(&d), 0);
}

int main(void)
{
	char path[4096];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_errors),
		cmocka_unit_test(test_connect_full_backlog),
		cmocka_unit_test(test_reply_deadline),
		cmocka_unit_test(test_env_socket),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_cpus_snapshot),
		cmocka_unit_test(test_cpu_times_unsupported),
		cmocka_unit_test(test_level_names),
		cmocka_unit_test(test_query_plain),
		cmocka_unit_test(test_query_errors),
		cmocka_unit_test(test_claim_release),
		cmocka_unit_test(test_claim_ends_with_connection),
		cmocka_unit_test(test_claim_lives_with_owner),
		cmocka_unit_test(test_move_unsupported),
		cmocka_unit_test(test_subscribe_claim_expired),
		cmocka_unit_test(test_shared_handle),
		cmocka_unit_test(test_place_self),
		cmocka_unit_test(test_reconnect),
		cmocka_unit_test(test_past_1024_cpus),
	};

	if (!test_topology_path("2s-240c-480t", path, sizeof(path)))
		test_skip("../shared/topologies/2s-240c-480t.xml not found");
	if (!test_topology_path("synth-16s-32n-8192t", topo8192, sizeof(topo8192)))
		topo8192[0] = '\0';
	return cmocka_run_group_tests(tests, setup, teardown);
}
