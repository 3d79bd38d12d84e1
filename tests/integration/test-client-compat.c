/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * librtplace against older daemons: one that speaks only protocol version
 * 1 (rtplaced before version 2 made list replies end after their count),
 * and one that speaks versions 1 and 2 (rtplaced 0.1.0, before version 3
 * sized CPU sets to their CPUs). Neither is in this tree, so a thread here
 * answers as they do, with the codec's own messages: a request of a
 * version the daemon does not speak gets ERROR -EPROTONOSUPPORT
 * "unsupported protocol version" with its request id (what the old
 * codecs' proto_decode() reported and their dispatch sent); a request of
 * a version it speaks gets its reply in that version. The library must
 * ask again in version 1, keep asking in version 1 on that connection,
 * send there a version-1 QUERY (16-word allowed set, 176 bytes), and try
 * the newest version again on its next connection (the daemon may be
 * upgraded by then). The real daemon's side of every version is in
 * test-daemon. And a program built against librtplace 0.1.0, whose
 * struct rtplace_answer ends in a reason of 64 bytes, gets that layout
 * from the symbols it binds (LIBRTPLACE_1), however long the daemon's
 * reason.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "protocol.h"
#include "rtplace.h"

#define COMPAT_NCPUS 8
#define COMPAT_MAX_SEEN 16

/* Every QUERY_REPLY's reason: longer than 0.1.0's 64 bytes. */
#define COMPAT_REASON                                                                                       \
	"a reason of more than sixty-four characters, as a daemon of 0.2.0 may give, naming a cgroup folder " \
	"such as /sys/fs/cgroup/cpu/system.slice/example.service and the fix"

/* struct rtplace_answer of 0.1.0, and the functions of LIBRTPLACE_1 that fill it. */
struct answer_0_1 {
	char head[offsetof(struct rtplace_answer, reason)];
	char reason[64];
};
int query_0_1(struct rtplace *rp, const struct rtplace_request *req, struct answer_0_1 *ret);
int place_self_0_1(struct rtplace *rp, const struct rtplace_request *req, unsigned flags, struct answer_0_1 *ret);
__asm__(".symver query_0_1, rtplace_query@LIBRTPLACE_1");
__asm__(".symver place_self_0_1, rtplace_place_self@LIBRTPLACE_1");

struct old_daemon {
	char dir[64];
	struct sockaddr_un addr;
	int listen_fd;
	int client_fd; /* the connection being served, -1 between */
	pthread_t thread;
	uint16_t max_version; /* it speaks 1..max_version */
	/* the version of each request, in order, over all connections */
	uint16_t seen[COMPAT_MAX_SEEN];
	unsigned nseen;
	unsigned connections;
	/* the last QUERY it answered: its length and allowed set */
	size_t query_len;
	struct rtplace_cpumask query_allowed;
};

/* The reply to m (a request of a version the daemon speaks), in m's version, in rep. */
static void old_reply(const struct proto_msg *m, struct proto_msg *rep)
{
	struct rtplace_status_reply st = { .ncpus = COMPAT_NCPUS, .nonline = COMPAT_NCPUS, .nnodes = 1 };

	switch (m->hdr.type) {
	case RTPLACE_MSG_STATUS:
		assert_int_equal(proto_msg_init(rep, RTPLACE_MSG_STATUS_REPLY, m->hdr.request_id), 0);
		rep->status_reply = st;
		proto_set_string(rep->status_reply.version, sizeof(rep->status_reply.version), "0.1.0");
		break;
	case RTPLACE_MSG_QUERY:
		assert_int_equal(proto_msg_init(rep, RTPLACE_MSG_QUERY_REPLY, m->hdr.request_id), 0);
		for (unsigned i = 0; i < m->query.count; i++)
			assert_int_equal(proto_query_reply_add(&rep->query_reply, 2 + i, RTPLACE_LEVEL_IDLE), 0);
		proto_set_string(rep->query_reply.reason, sizeof(rep->query_reply.reason), COMPAT_REASON);
		break;
	default:
		assert_int_equal(proto_encode_error(rep, m->hdr.request_id, m->hdr.type, -EOPNOTSUPP,
						    "unknown request"), 0);
		break;
	}
	assert_int_equal(proto_msg_finish(rep, m->hdr.version), 0);
}

static void old_serve(struct old_daemon *od, int fd)
{
	static unsigned char buf[RTPLACE_MSG_MAX];
	struct proto_limits lim = { .ncpus = COMPAT_NCPUS, .nnodes = 1, .accept = PROTO_ACCEPT_REQUESTS };
	struct rtplace_msg_hdr h;
	struct proto_msg m, rep;
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), 0)) >= (ssize_t)sizeof(h)) {
		memcpy(&h, buf, sizeof(h));
		if (od->nseen < COMPAT_MAX_SEEN)
			od->seen[od->nseen++] = h.version;
		if (h.version < 1 || h.version > od->max_version) {
			assert_int_equal(proto_encode_error(&rep, h.request_id, h.type, -EPROTONOSUPPORT,
							    "unsupported protocol version"), 0);
			assert_int_equal(proto_msg_finish(&rep, 1), 0);
		} else {
			assert_int_equal(proto_decode(buf, (size_t)n, &lim, &m, NULL), 0);
			if (m.hdr.type == RTPLACE_MSG_QUERY) {
				od->query_len = (size_t)n;
				od->query_allowed = m.query.allowed;
			}
			old_reply(&m, &rep);
		}
		if (send(fd, &rep, rep.hdr.length, MSG_NOSIGNAL) != (ssize_t)rep.hdr.length)
			break;
	}
	close(fd);
}

static void *old_daemon_main(void *arg)
{
	struct old_daemon *od = arg;
	int fd;

	while ((fd = accept4(od->listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		od->connections++;
		__atomic_store_n(&od->client_fd, fd, __ATOMIC_SEQ_CST);
		old_serve(od, fd);
		__atomic_store_n(&od->client_fd, -1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static int setup_version(void **state, uint16_t max_version)
{
	static struct old_daemon od;

	memset(&od, 0, sizeof(od));
	od.max_version = max_version;
	od.client_fd = -1;
	snprintf(od.dir, sizeof(od.dir), "/tmp/rtplace-compat-XXXXXX");
	assert_non_null(mkdtemp(od.dir));
	od.addr.sun_family = AF_UNIX;
	snprintf(od.addr.sun_path, sizeof(od.addr.sun_path), "%s/old.sock", od.dir);
	od.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(od.listen_fd >= 0);
	assert_int_equal(bind(od.listen_fd, (const struct sockaddr *)&od.addr, sizeof(od.addr)), 0);
	assert_int_equal(listen(od.listen_fd, 4), 0);
	assert_int_equal(pthread_create(&od.thread, NULL, old_daemon_main, &od), 0);
	*state = &od;
	return 0;
}

static int setup(void **state)
{
	return setup_version(state, 1);
}

static int setup_v2(void **state)
{
	return setup_version(state, 2);
}

static int teardown(void **state)
{
	struct old_daemon *od = *state;

	int fd = __atomic_load_n(&od->client_fd, __ATOMIC_SEQ_CST);

	/* Ends the thread's recv() and accept(), also after a failed test
	 * left a connection open. */
	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
	shutdown(od->listen_fd, SHUT_RDWR);
	pthread_join(od->thread, NULL);
	close(od->listen_fd);
	unlink(od->addr.sun_path);
	rmdir(od->dir);
	return 0;
}

static void test_falls_back_to_version_1(void **state)
{
	struct old_daemon *od = *state;
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_answer ans;
	struct rtplace_status st;
	struct rtplace *rp;
	char reason[RTPLACE_REASON_LEN];

	assert_int_equal(rtplace_connect(od->addr.sun_path, &rp), 0);
	assert_int_equal(rtplace_status(rp, &st), 0);
	assert_string_equal(st.version, "0.1.0");
	assert_int_equal(st.ncpus, COMPAT_NCPUS);
	/* the refusal was the library's to handle, not the caller's */
	assert_int_equal(rtplace_last_reason(rp, reason, sizeof(reason)), -ENOENT);
	req.prio = 50;
	req.count = 3;
	assert_int_equal(rtplace_query(rp, &req, &ans), 0);
	assert_int_equal(ans.count, 3);
	assert_int_equal(ans.cpus[0], 2);
	assert_int_equal(ans.cpus[2], 4);
	assert_true(CPU_ISSET(3, &ans.set));
	rtplace_close(rp);

	/* a try in the newest version, then version 1 for the rest of the connection */
	assert_int_equal(od->connections, 1);
	assert_int_equal(od->nseen, 3);
	assert_int_equal(od->seen[0], RTPLACE_PROTO_VERSION);
	assert_int_equal(od->seen[1], 1);
	assert_int_equal(od->seen[2], 1);

	/* a new connection tries the newest version again */
	assert_int_equal(rtplace_connect(od->addr.sun_path, &rp), 0);
	assert_int_equal(rtplace_status(rp, &st), 0);
	rtplace_close(rp);
	assert_int_equal(od->nseen, 5);
	assert_int_equal(od->seen[3], RTPLACE_PROTO_VERSION);
	assert_int_equal(od->seen[4], 1);
}

/* rtplaced 0.1.0 (versions 1 and 2): the newest version refused, then
 * version 1, whose QUERY carries the allowed set in 16 words. */
static void test_version_2_daemon(void **state)
{
	struct old_daemon *od = *state;
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	size_t size = CPU_ALLOC_SIZE(RTPLACE_MAX_CPUS);
	cpu_set_t *allowed = CPU_ALLOC(RTPLACE_MAX_CPUS);
	struct rtplace_answer ans;
	struct rtplace *rp;

	assert_non_null(allowed);
	CPU_ZERO_S(size, allowed);
	for (int cpu = 2; cpu <= 4; cpu++)
		CPU_SET_S(cpu, size, allowed);
	assert_int_equal(rtplace_connect(od->addr.sun_path, &rp), 0);
	req.prio = 50;
	req.count = 3;
	req.allowed = allowed;
	req.allowed_size = size;
	assert_int_equal(rtplace_query(rp, &req, &ans), 0);
	assert_int_equal(ans.count, 3);
	assert_int_equal(ans.cpus[0], 2);
	assert_true(CPU_ISSET(4, &ans.set));
	assert_int_equal(od->nseen, 2);
	assert_int_equal(od->seen[0], RTPLACE_PROTO_VERSION);
	assert_int_equal(od->seen[1], 1);
	assert_int_equal(od->query_len, 176);
	assert_int_equal(cpuset_count(&od->query_allowed), 3);
	assert_true(cpuset_test(&od->query_allowed, 4));
	/* a CPU the old versions cannot carry is refused here, not sent */
	CPU_SET_S(1024, size, allowed);
	assert_int_equal(rtplace_query(rp, &req, &ans), -ERANGE);
	rtplace_close(rp);
	CPU_FREE(allowed);
}

/* A daemon without local reads: rtplace_local_open() fails and every
 * query keeps going to the daemon. */
static void test_local_reads_unoffered(void **state)
{
	struct old_daemon *od = *state;
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_answer ans;
	struct rtplace *rp;

	assert_int_equal(rtplace_connect(od->addr.sun_path, &rp), 0);
	assert_int_equal(rtplace_local_open(rp), -EOPNOTSUPP);
	req.prio = 50;
	req.count = 2;
	assert_int_equal(rtplace_query(rp, &req, &ans), 0);
	assert_int_equal(ans.count, 2);
	assert_int_equal(ans.cpus[0], 2);
	assert_int_equal(od->query_len > 0, 1);
	rtplace_close(rp);
}

/* A daemon without the list of claims answers its request as an unknown
 * one: rtplace_claims() and rtplace_claim() say -EOPNOTSUPP (rtplace-run
 * then names claims by id alone) and the connection serves on. */
static void test_claims_unknown_to_old_daemon(void **state)
{
	struct old_daemon *od = *state;
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_claim *claims = NULL, one;
	struct rtplace_answer ans;
	struct rtplace *rp;
	size_t n = 0;

	assert_int_equal(rtplace_connect(od->addr.sun_path, &rp), 0);
	assert_int_equal(rtplace_claims(rp, &claims, &n), -EOPNOTSUPP);
	assert_null(claims);
	assert_int_equal(rtplace_claim(rp, 1, &one), -EOPNOTSUPP);
	/* Nor the kernel's environment; the connection goes on. */
	assert_int_equal(rtplace_kernel(rp, &(struct rtplace_kernel_reply){ 0 }), -EOPNOTSUPP);
	req.prio = 50;
	assert_int_equal(rtplace_query(rp, &req, &ans), 0);
	assert_int_equal(ans.count, 1);
	rtplace_close(rp);
}

/* Nor does an older daemon know EXPLAIN: rtplace_explain() says
 * -EOPNOTSUPP, writes nothing, and the connection serves on. */
static void test_explain_unknown_to_old_daemon(void **state)
{
	struct old_daemon *od = *state;
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_explanation *x = NULL;
	struct rtplace_answer ans;
	struct rtplace *rp;

	req.prio = 50;
	assert_int_equal(rtplace_connect(od->addr.sun_path, &rp), 0);
	assert_int_equal(rtplace_explain(rp, &req, &x), -EOPNOTSUPP);
	assert_null(x);
	assert_int_equal(rtplace_query(rp, &req, &ans), 0);
	assert_int_equal(ans.count, 1);
	rtplace_close(rp);
}

static int setup_v3(void **state)
{
	return setup_version(state, RTPLACE_PROTO_VERSION);
}

/* The reason whole for a program of today, cut to 63 characters in the
 * 64 bytes a program of 0.1.0 gave, and not a byte past them. */
static void test_abi_0_1(void **state)
{
	struct old_daemon *od = *state;
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_answer ans;
	struct {
		struct answer_0_1 a;
		unsigned char after[RTPLACE_REASON_LEN];
	} old;
	struct rtplace *rp;

	_Static_assert(sizeof(COMPAT_REASON) > 64, "the reason is longer than 0.1.0's");
	assert_int_equal(rtplace_connect(od->addr.sun_path, &rp), 0);
	req.prio = 50;
	req.count = 2;
	assert_int_equal(rtplace_query(rp, &req, &ans), 0);
	assert_string_equal(ans.reason, COMPAT_REASON);
	memset(&old, 0x5a, sizeof(old));
	assert_int_equal(query_0_1(rp, &req, &old.a), 0);
	/* the same answer up to the reason (cpus[] past count is not written) */
	assert_memory_equal(old.a.head, &ans, offsetof(struct rtplace_answer, cpus) + 2 * sizeof(ans.cpus[0]));
	assert_memory_equal(old.a.head + offsetof(struct rtplace_answer, set), &ans.set, sizeof(ans.set));
	assert_int_equal(strnlen(old.a.reason, sizeof(old.a.reason)), 63);
	assert_memory_equal(old.a.reason, COMPAT_REASON, 63);
	for (size_t i = 0; i < sizeof(old.after); i++)
		assert_int_equal(old.after[i], 0x5a);
	/* a failure leaves the answer as it was */
	req.prio = 0;
	assert_int_equal(query_0_1(rp, &req, &old.a), -ERANGE);
	assert_int_equal(place_self_0_1(rp, &req, 0, &old.a), -ERANGE);
	for (size_t i = 0; i < sizeof(old.after); i++)
		assert_int_equal(old.after[i], 0x5a);
	rtplace_close(rp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_falls_back_to_version_1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_2_daemon, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_local_reads_unoffered, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_claims_unknown_to_old_daemon, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_explain_unknown_to_old_daemon, setup_v2, teardown),
		cmocka_unit_test_setup_teardown(test_abi_0_1, setup_v3, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
