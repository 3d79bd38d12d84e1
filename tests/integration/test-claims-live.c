/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Claims through the real rtplaced (simulated 480-CPU machine, so no BPF):
 * every request gets its own reply before any event, limits per user,
 * claims within the requester's rights, claims across a kill -9 of the
 * daemon, release by the claim's uid, every acknowledged claim kept across a SIGKILL, a state file
 * refused unless the daemon's own, ids kept past a corrupt one. Tests that need another uid run a child as nobody when the test
 * runs as root, and as the test's own user (RLIMIT_RTPRIO lowered to 0)
 * otherwise.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include "testlib.h"

#define NOBODY 65534

static char topo480[4096];
/* What a test started, stopped by teardown also when an assert failed. */
static struct harness_daemon daemon_under_test;
static pid_t children[16];
static unsigned nchildren;
static char tmpdir[64];
static uint32_t next_request = 1;

static pid_t track(pid_t pid)
{
	assert_true(pid >= 0);
	if (pid > 0 && nchildren < sizeof(children) / sizeof(children[0]))
		children[nchildren++] = pid;
	return pid;
}

static int teardown(void **state)
{
	/* Only children not reaped yet: a reaped pid may name another
	 * process by now. */
	for (unsigned i = 0; i < nchildren; i++) {
		if (waitpid(children[i], NULL, WNOHANG) != 0)
			continue;
		kill(children[i], SIGKILL);
		waitpid(children[i], NULL, 0);
	}
	nchildren = 0;
	if (daemon_under_test.pid > 0)
		harness_stop(&daemon_under_test);
	return 0;
}

/* Starts the daemon on socket (NULL: the harness's own) with config text. */
static void start(struct harness_daemon *d, const char *socket, const char *config)
{
	const char *args[] = { "--topology", topo480, socket ? "--socket" : NULL, socket, NULL };
	char text[1024];

	/* Clients as nobody connect too. */
	snprintf(text, sizeof(text), "[daemon]\nsocket-mode = 0666\nlog-level = info\n%s", config);
	assert_int_equal(harness_start_with_config(d, text, args, NULL), 0);
}

static int connect_to(const char *path)
{
	int fd = harness_connect(path);

	assert_true(fd >= 0);
	return fd;
}

static void send_msg(int fd, const struct proto_msg *m)
{
	assert_int_equal(send(fd, m, m->hdr.length, MSG_NOSIGNAL), (ssize_t)m->hdr.length);
}

/* The next packet on fd, whatever it is (up to 5 s). */
static void recv_msg(int fd, struct proto_msg *ret)
{
	struct proto_limits lim = { .ncpus = RTPLACE_MAX_CPUS, .nnodes = 1024, .accept = PROTO_ACCEPT_REPLIES };
	static unsigned char buf[RTPLACE_MSG_MAX];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	assert_int_equal(poll(&p, 1, 5000), 1);
	n = recv(fd, buf, sizeof(buf), 0);
	assert_true(n > 0);
	assert_int_equal(proto_decode(buf, (size_t)n, &lim, ret, NULL), 0);
}

static struct rtplace_query claim_query(int prio, int count, uint32_t lease_ms)
{
	struct rtplace_query q = harness_fifo_query(prio, (unsigned)count, RTPLACE_QUERY_F_CLAIM);

	q.lease_ms = lease_ms;
	return q;
}

static void query(int fd, const struct rtplace_query *q, struct proto_msg *rep)
{
	struct proto_msg req;

	assert_int_equal(proto_encode_query(&req, next_request++, q), 0);
	assert_int_equal(harness_call(fd, &req, rep), 0);
}

/*
 * Children of the test must not use cmocka's asserts (a failure would run
 * the remaining tests in the child): these exit with a status instead.
 */
static int child_connect(const char *path)
{
	int fd = harness_connect(path);

	if (fd < 0)
		_exit(90);
	return fd;
}

static void child_query(int fd, const struct rtplace_query *q, struct proto_msg *rep)
{
	struct proto_msg req;

	int r = proto_encode_query(&req, next_request++, q);

	if (r == 0)
		r = harness_call(fd, &req, rep);
	if (r < 0) {
		fprintf(stderr, "query: %s\n", strerror(-r));
		_exit(91);
	}
}

static uint8_t child_claim_level(int fd, uint32_t cpu)
{
	struct rtplace_cpus c = { .first = cpu };
	struct proto_msg req, rep;

	if (proto_encode_cpus(&req, next_request++, &c) < 0 || harness_call(fd, &req, &rep) < 0 ||
	    rep.hdr.type != RTPLACE_MSG_CPUS_REPLY)
		_exit(92);
	return rep.cpus_reply.cpus[0].claim_level;
}

static int release(int fd, uint64_t id)
{
	struct rtplace_release rel = { .claim_id = id };
	struct proto_msg req, rep;

	assert_int_equal(proto_encode_release(&req, next_request++, &rel), 0);
	assert_int_equal(harness_call(fd, &req, &rep), 0);
	return rep.hdr.type == RTPLACE_MSG_RELEASE_REPLY ? 0 : rep.hdr.status;
}

/* The CPUS entry of cpu. */
static struct rtplace_cpu_info cpu_info(int fd, uint32_t cpu)
{
	struct rtplace_cpu_info ci;

	assert_int_equal(harness_cpu_info(fd, cpu, &ci), 0);
	return ci;
}

static unsigned claims_active(int fd)
{
	struct proto_msg req, rep;

	assert_int_equal(proto_encode_status(&req, next_request++), 0);
	assert_int_equal(harness_call(fd, &req, &rep), 0);
	return rep.status_reply.claims_active;
}

/* In a child: become nobody when root (RLIMIT_RTPRIO rtprio first), else
 * stay, with RLIMIT_RTPRIO lowered to rtprio. Exits 99 on failure. */
static void drop_rights(rlim_t rtprio)
{
	struct rlimit rl = { .rlim_cur = rtprio, .rlim_max = rtprio };

	if (setrlimit(RLIMIT_RTPRIO, &rl) < 0)
		_exit(99);
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0))
		_exit(99);
}

static void expect_child_ok(pid_t pid)
{
	int st;

	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/*
 * Client A claims with 1 ms leases in a loop; client B claims
 * just after each. A's leases run out while B's request is served; B must
 * still get its own reply (its request id) as the first packet, never A's
 * CLAIM_ENDED in its place. The unfixed daemon failed 80 of 200 rounds.
 */
static void test_reply_before_events(void **state)
{
	int a, b;

	start(&daemon_under_test, NULL, "");
	a = connect_to(daemon_under_test.socket);
	b = connect_to(daemon_under_test.socket);
	for (int round = 0; round < 200; round++) {
		struct rtplace_query qa = claim_query(10, 1, 1), qb = claim_query(20, 1, RTPLACE_LEASE_INFINITE);
		struct proto_msg req, rep;
		struct timespec gap = { .tv_nsec = 1200000 };
		uint32_t id;

		query(a, &qa, &rep);
		assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
		nanosleep(&gap, NULL);
		id = next_request++;
		assert_int_equal(proto_encode_query(&req, id, &qb), 0);
		send_msg(b, &req);
		recv_msg(b, &rep);
		assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
		assert_int_equal(rep.hdr.request_id, id);
		assert_int_not_equal(rep.query_reply.claim_id, 0);
		/* The release's reply, too, is the next packet. */
		id = next_request++;
		assert_int_equal(proto_encode_release(&req, id, &(struct rtplace_release){ rep.query_reply.claim_id }),
				 0);
		send_msg(b, &req);
		recv_msg(b, &rep);
		assert_int_equal(rep.hdr.type, RTPLACE_MSG_RELEASE_REPLY);
		assert_int_equal(rep.hdr.request_id, id);
	}
	close(a);
	close(b);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

/* The per-user limit spans connections and outlives them
 * (owner-bound claims); root is exempt. */
static void test_claims_per_user(void **state)
{
	pid_t child;

	start(&daemon_under_test, NULL, "[limits]\nmax-claims-per-user = 3\nmax-claims-per-client = 64\n");
	child = track(fork());
	if (child == 0) {
		struct rtplace_query q = claim_query(10, 1, RTPLACE_LEASE_INFINITE);
		struct proto_msg rep;
		int fd;

		drop_rights(0);
		/* Three claims tied to this process, each from a connection
		 * closed after it. */
		q.owner_pid = getpid();
		for (int i = 0; i < 3; i++) {
			fd = child_connect(daemon_under_test.socket);
			child_query(fd, &q, &rep);
			if (rep.hdr.type != RTPLACE_MSG_QUERY_REPLY || !rep.query_reply.claim_id)
				_exit(10 + i);
			close(fd);
		}
		fd = child_connect(daemon_under_test.socket);
		q.owner_pid = 0;
		child_query(fd, &q, &rep);
		if (rep.hdr.type != RTPLACE_MSG_ERROR || rep.hdr.status != -EDQUOT ||
		    !strstr(rep.error.reason, "max-claims-per-user"))
			_exit(20);
		/* Queries without a claim stay open. */
		q.flags = 0;
		q.lease_ms = 0;
		child_query(fd, &q, &rep);
		if (rep.hdr.type != RTPLACE_MSG_QUERY_REPLY || rep.query_reply.count != 1)
			_exit(21);
		_exit(0);
	}
	expect_child_ok(child);
	if (geteuid() == 0) {
		struct rtplace_query q = claim_query(10, 1, RTPLACE_LEASE_INFINITE);
		int fd = connect_to(daemon_under_test.socket);
		struct proto_msg rep;

		for (int i = 0; i < 5; i++) {
			query(fd, &q, &rep);
			assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
		}
		close(fd);
	}
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

/* In a child as uid: one claim on a connection of its own; exits 0 when
 * it is refused with -EUSERS naming max-claims = 2. */
static void claim_refused_as(uid_t uid)
{
	struct rtplace_query q = claim_query(10, 1, RTPLACE_LEASE_INFINITE);
	struct proto_msg rep;
	int fd;

	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
		_exit(99);
	fd = child_connect(daemon_under_test.socket);
	child_query(fd, &q, &rep);
	if (rep.hdr.type != RTPLACE_MSG_ERROR || rep.hdr.status != -EUSERS ||
	    strcmp(rep.error.reason, "[limits] max-claims = 2 reached") != 0)
		_exit(3);
	_exit(0);
}

/*
 * The users other than root together hold at most
 * max-claims; what the table holds beyond is root's. One user fills the
 * users' part (2, below its own share of 64): its next claim and another
 * user's are refused naming the key, while root claims on.
 */
static void test_claims_users_part(void **state)
{
	struct rtplace_query rq = claim_query(10, 1, RTPLACE_LEASE_INFINITE);
	struct proto_msg rep;
	int pipefd[2], fd;
	pid_t child;
	char verdict;

	if (geteuid() != 0)
		skip();
	start(&daemon_under_test, NULL, "[limits]\nmax-claims = 2\nmax-claims-per-user = 64\n");
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	child = track(fork());
	if (child == 0) {
		struct rtplace_query q = claim_query(10, 1, RTPLACE_LEASE_INFINITE);
		int a;

		/* Connection-bound claims: they live while this child does. */
		drop_rights(0);
		a = child_connect(daemon_under_test.socket);
		verdict = 0;
		for (int i = 0; i < 2 && !verdict; i++) {
			child_query(a, &q, &rep);
			verdict = rep.hdr.type == RTPLACE_MSG_QUERY_REPLY && rep.query_reply.claim_id ? 0 : 1 + i;
		}
		child_query(a, &q, &rep);
		if (!verdict && (rep.hdr.type != RTPLACE_MSG_ERROR || rep.hdr.status != -EUSERS ||
				 strcmp(rep.error.reason, "[limits] max-claims = 2 reached") != 0))
			verdict = 3;
		if (write(pipefd[1], &verdict, 1) != 1)
			_exit(5);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &verdict, 1), 1);
	close(pipefd[0]);
	assert_int_equal(verdict, 0);
	child = track(fork());
	if (child == 0)
		claim_refused_as(60002);
	expect_child_ok(child);
	/* Root is not counted against the users' part. */
	fd = connect_to(daemon_under_test.socket);
	for (int i = 0; i < 5; i++) {
		query(fd, &rq, &rep);
		assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
		assert_int_not_equal(rep.query_reply.claim_id, 0);
	}
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

/* A requester with RLIMIT_RTPRIO 0 and no CAP_SYS_NICE gets
 * claims at level normal, never exclusive, with a bounded lease; they never
 * stand in an RT query's way. With RLIMIT_RTPRIO 30 it may claim rt30. */
static void test_claims_within_rights(void **state)
{
	int pipefd[2], fd;
	uint32_t cpu;
	pid_t child;
	struct rtplace_query q = claim_query(1, 1, 0);
	struct proto_msg rep;

	start(&daemon_under_test, NULL, "[limits]\nmax-lease-ms = 5000\n");
	assert_int_equal(pipe(pipefd), 0);
	child = track(fork());
	if (child == 0) {
		struct rtplace_query cq = claim_query(90, 1, RTPLACE_LEASE_INFINITE);

		close(pipefd[0]);
		drop_rights(0);
		fd = child_connect(daemon_under_test.socket);
		cq.flags |= RTPLACE_QUERY_F_EXCLUSIVE;
		child_query(fd, &cq, &rep);
		if (rep.hdr.type != RTPLACE_MSG_QUERY_REPLY || !rep.query_reply.claim_id)
			_exit(10);
		if (rep.query_reply.lease_ms != 5000 || !strstr(rep.query_reply.reason, "RLIMIT_RTPRIO"))
			_exit(11);
		cpu = rep.query_reply.list[0].cpu;
		if (child_claim_level(fd, cpu) != LEVEL_NORMAL)
			_exit(12);
		/* A lease asked for below the bound is kept. */
		cq = claim_query(90, 1, 300);
		child_query(fd, &cq, &rep);
		if (rep.hdr.type != RTPLACE_MSG_QUERY_REPLY || rep.query_reply.lease_ms != 300)
			_exit(13);
		if (write(pipefd[1], &cpu, sizeof(cpu)) != sizeof(cpu))
			_exit(14);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &cpu, sizeof(cpu)), sizeof(cpu));
	close(pipefd[0]);
	/* The CPU nobody claimed at normal is still offered to an RT query. */
	fd = connect_to(daemon_under_test.socket);
	q.flags = 0;
	cpuset_zero(&q.allowed);
	cpuset_set(&q.allowed, cpu);
	query(fd, &q, &rep);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	assert_int_equal(rep.query_reply.count, 1);
	assert_int_equal(rep.query_reply.list[0].cpu, cpu);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	child = track(fork());
	if (child == 0) {
		struct rtplace_query cq = claim_query(30, 1, RTPLACE_LEASE_INFINITE);
		struct rlimit rl;

		/* Raising the hard limit to 30 needs CAP_SYS_RESOURCE, which a
		 * container's root may lack: then this part cannot run. */
		rl = (struct rlimit){ .rlim_cur = 30, .rlim_max = 30 };
		if (setrlimit(RLIMIT_RTPRIO, &rl) < 0) {
			fprintf(stderr, "cannot set RLIMIT_RTPRIO 30 (%m): rt30 claims not tested\n");
			_exit(0);
		}
		drop_rights(30);
		fd = child_connect(daemon_under_test.socket);
		child_query(fd, &cq, &rep);
		if (rep.hdr.type != RTPLACE_MSG_QUERY_REPLY ||
		    child_claim_level(fd, rep.query_reply.list[0].cpu) != level_from_rt_priority(30))
			_exit(20);
		cq.prio = 31;
		child_query(fd, &cq, &rep);
		if (rep.hdr.type != RTPLACE_MSG_QUERY_REPLY ||
		    child_claim_level(fd, rep.query_reply.list[0].cpu) != LEVEL_NORMAL)
			_exit(21);
		_exit(0);
	}
	expect_child_ok(child);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

/* Runs rtplacectl release id on socket as the unprivileged user; its exit
 * status. */
static int ctl_release_as(uid_t uid, const char *socket, uint64_t id)
{
	char ctl[4096], idbuf[32];
	pid_t pid;
	int st;

	assert_int_equal(harness_stage_program("client/rtplacectl", ctl, sizeof(ctl)), 0);
	snprintf(idbuf, sizeof(idbuf), "%" PRIu64, id);
	pid = track(fork());
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (geteuid() == 0 && uid != 0 &&
		    (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0))
			_exit(99);
		dup2(null, STDOUT_FILENO);
		execl(ctl, ctl, "--socket", socket, "release", idbuf, (char *)NULL);
		_exit(98);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Any connection of the claim's uid may release it (here
 * rtplacectl, another process); another uid may not. */
static void test_release_by_uid(void **state)
{
	int pipefd[2], fd;
	pid_t child;
	uint64_t ids[2];
	uid_t me = geteuid() == 0 ? NOBODY : geteuid();

	start(&daemon_under_test, NULL, "");
	assert_int_equal(pipe(pipefd), 0);
	child = track(fork());
	if (child == 0) {
		struct rtplace_query q = claim_query(10, 1, RTPLACE_LEASE_INFINITE);
		struct proto_msg rep;

		close(pipefd[0]);
		drop_rights(0);
		fd = child_connect(daemon_under_test.socket);
		for (int i = 0; i < 2; i++) {
			child_query(fd, &q, &rep);
			if (rep.hdr.type != RTPLACE_MSG_QUERY_REPLY)
				_exit(10);
			ids[i] = rep.query_reply.claim_id;
		}
		if (write(pipefd[1], ids, sizeof(ids)) != sizeof(ids))
			_exit(11);
		pause(); /* the connection stays open */
		_exit(0);
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], ids, sizeof(ids)), sizeof(ids));
	close(pipefd[0]);
	assert_int_equal(ctl_release_as(me, daemon_under_test.socket, ids[0]), 0);
	fd = connect_to(daemon_under_test.socket);
	assert_int_equal(claims_active(fd), 1);
	if (geteuid() == 0) {
		/* Another unprivileged uid may not; root may. */
		assert_int_equal(ctl_release_as(NOBODY - 1, daemon_under_test.socket, ids[1]), 77);
		assert_int_equal(claims_active(fd), 1);
		assert_int_equal(release(fd, ids[1]), 0);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

static pid_t sleeper(void)
{
	pid_t pid = track(fork());

	if (pid == 0) {
		pause();
		_exit(0);
	}
	assert_true(pid > 0);
	return pid;
}

/* The descriptor test: FD_USERS uids (from FD_UID0), each with
 * FD_CLAIMS owner-bound claims, one owner process each, under a soft and
 * hard RLIMIT_NOFILE of FD_LIMIT (16 of them kept for root). */
#define FD_LIMIT 96
#define FD_USERS 8
#define FD_UID0 61000
#define FD_CLAIMS 12
#define FD_ROOT_QUERIES 2000
#define FD_REFUSED_ELSE 255

/*
 * In a child as uid: FD_CLAIMS claims, each owned by a process of its own
 * (killed with the child). Writes how many were made to out, or
 * FD_REFUSED_ELSE when one was refused for anything but the daemon's
 * descriptor reserve, then holds them until hold reads end of file, and
 * ends its owners (reaped here: they would outlive the test as zombies).
 */
static void fd_user(uid_t uid, int out, int hold)
{
	struct rtplace_query q = claim_query(10, 1, RTPLACE_LEASE_INFINITE);
	pid_t owners[FD_CLAIMS];
	struct proto_msg rep;
	uint8_t made = 0;
	char byte;
	int fd, n = 0;

	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
		_exit(99);
	fd = child_connect(daemon_under_test.socket);
	for (int i = 0; i < FD_CLAIMS; i++) {
		pid_t owner = fork();

		if (owner < 0)
			_exit(98);
		if (owner == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pause();
			_exit(0);
		}
		owners[n++] = owner;
		q.owner_pid = owner;
		child_query(fd, &q, &rep);
		if (rep.hdr.type == RTPLACE_MSG_QUERY_REPLY && rep.query_reply.claim_id)
			made++;
		else if (rep.hdr.type != RTPLACE_MSG_ERROR || rep.hdr.status != -EMFILE ||
			 !strstr(rep.error.reason, "descriptor limit")) {
			fprintf(stderr, "uid %u: claim %d refused: %s\n", (unsigned)uid, i,
				rep.hdr.type == RTPLACE_MSG_ERROR ? rep.error.reason : "not a reply");
			made = FD_REFUSED_ELSE;
			break;
		}
	}
	if (write(out, &made, 1) != 1)
		_exit(11);
	while (read(hold, &byte, 1) > 0)
		;
	for (int i = 0; i < n; i++) {
		kill(owners[i], SIGKILL);
		waitpid(owners[i], NULL, 0);
	}
	_exit(0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* FD_ROOT_QUERIES queries on fd, their latencies sorted into ns. */
static void root_latencies(int fd, uint64_t ns[FD_ROOT_QUERIES])
{
	struct rtplace_query q = harness_fifo_query(10, 1, 0);
	struct proto_msg rep;

	for (int i = 0; i < FD_ROOT_QUERIES; i++) {
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		query(fd, &q, &rep);
		clock_gettime(CLOCK_MONOTONIC, &b);
		assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
		ns[i] = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
	}
	qsort(ns, FD_ROOT_QUERIES, sizeof(ns[0]), cmp_u64);
}

/*
 * Owner-bound claims hold a pidfd each; those of users other than root
 * stay out of the last descriptors, which are root's: with every user at
 * its claim limit and the daemon at its descriptor limit, root still
 * connects, claims for an owner process and is answered. Prints root's
 * query latency then, and before the users came. The unfixed daemon gave the users' pidfds every
 * descriptor: root's connection was never accepted.
 */
static void test_claims_fd_reserve(void **state)
{
	char nofile[32], config[256];
	const char *wrapper[] = { "prlimit", nofile, "--", NULL };
	const char *args[] = { "--topology", topo480, NULL };
	struct rtplace_query q = claim_query(10, 1, RTPLACE_LEASE_INFINITE);
	static uint64_t ns[FD_ROOT_QUERIES], idle[FD_ROOT_QUERIES];
	unsigned made = 0, refused_users = 0;
	struct proto_msg rep;
	int pipefd[2], hold[2], fd;
	pid_t users[FD_USERS], root_owner;

	snprintf(nofile, sizeof(nofile), "--nofile=%d:%d", FD_LIMIT, FD_LIMIT);
	snprintf(config, sizeof(config), "[daemon]\nsocket-mode = 0666\nlog-level = info\n[limits]\nmax-claims-per-user = %d\n",
		 FD_CLAIMS);
	assert_int_equal(harness_start_wrapped(&daemon_under_test, wrapper, config, args, NULL), 0);
	fd = connect_to(daemon_under_test.socket);
	root_latencies(fd, idle);
	close(fd);
	/* Before the pipes: it must not hold hold[1] open. */
	root_owner = sleeper();
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(pipe(hold), 0);
	for (int u = 0; u < FD_USERS; u++) {
		users[u] = track(fork());
		if (users[u] == 0) {
			close(pipefd[0]);
			close(hold[1]);
			fd_user(FD_UID0 + (uid_t)u, pipefd[1], hold[0]);
		}
	}
	close(pipefd[1]);
	close(hold[0]);
	for (int u = 0; u < FD_USERS; u++) {
		uint8_t n;

		assert_int_equal(read(pipefd[0], &n, 1), 1);
		assert_int_not_equal(n, FD_REFUSED_ELSE);
		made += n;
		refused_users += n < FD_CLAIMS;
	}
	close(pipefd[0]);
	/* The limit was met: some users' claims were refused for it. */
	assert_true(refused_users > 0);

	fd = connect_to(daemon_under_test.socket);
	q.owner_pid = root_owner;
	query(fd, &q, &rep);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	assert_int_not_equal(rep.query_reply.claim_id, 0);
	root_latencies(fd, ns);
	printf("# %u users' claims held (%u users refused for descriptors, limit %d): root's query p50 %.1f us, "
	       "p99 %.1f us (idle before: %.1f, %.1f us)\n",
	       made, refused_users, FD_LIMIT, (double)ns[FD_ROOT_QUERIES / 2] / 1e3,
	       (double)ns[FD_ROOT_QUERIES * 99 / 100] / 1e3, (double)idle[FD_ROOT_QUERIES / 2] / 1e3,
	       (double)idle[FD_ROOT_QUERIES * 99 / 100] / 1e3);
	close(fd);
	close(hold[1]);
	for (int u = 0; u < FD_USERS; u++)
		expect_child_ok(users[u]);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

/* Waits (bounded) until the state file names claim id. */
static void wait_state_holds(const char *path, uint64_t id)
{
	char needle[32], buf[4096];

	snprintf(needle, sizeof(needle), "claim %" PRIu64 " ", id);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = '\0';
		if (strstr(buf, needle))
			return;
		usleep(10000);
	}
	fail_msg("claim %" PRIu64 " never reached %s", id, path);
}

static void kill_daemon(struct harness_daemon *d)
{
	assert_int_equal(kill(d->pid, SIGKILL), 0);
	assert_int_equal(harness_stop(d), 128 + SIGKILL);
}

/*
 * Owner-bound claims survive kill -9 of the daemon when their
 * owner is still the same process; a claim whose owner died meanwhile is
 * dropped; ids are not reused; a corrupt state file is reported and
 * ignored. The test's own group is an rt-group, so its claims hold rt50
 * without root.
 */
static void test_claims_survive_restart(void **state)
{
	char socket[128], statefile[160], config[256];
	struct rtplace_query q = claim_query(50, 1, RTPLACE_LEASE_INFINITE), probe = claim_query(10, 1, 0);
	struct proto_msg rep;
	struct group *gr = getgrgid(getegid());
	pid_t keep = sleeper(), dies = sleeper();
	uint64_t kept_id, dead_id;
	uint32_t kept_cpu;
	struct rtplace_cpu_info ci;
	FILE *f;
	int fd;

	assert_non_null(gr);
	snprintf(config, sizeof(config), "[moves]\nrt-groups = %s\nmax-prio = 99\n", gr->gr_name);
	snprintf(socket, sizeof(socket), "%s/rtplaced.sock", tmpdir);
	snprintf(statefile, sizeof(statefile), "%s.claims", socket);
	start(&daemon_under_test, socket, config);
	fd = connect_to(socket);
	q.owner_pid = keep;
	query(fd, &q, &rep);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	kept_id = rep.query_reply.claim_id;
	kept_cpu = rep.query_reply.list[0].cpu;
	q.owner_pid = dies;
	query(fd, &q, &rep);
	dead_id = rep.query_reply.claim_id;
	assert_int_not_equal(dead_id, 0);
	close(fd);
	/* The state is written just after the reply: wait for it. */
	wait_state_holds(statefile, dead_id);

	kill_daemon(&daemon_under_test);
	kill(dies, SIGKILL);
	waitpid(dies, NULL, 0);
	start(&daemon_under_test, socket, config);
	fd = connect_to(socket);
	assert_int_equal(claims_active(fd), 1);
	ci = cpu_info(fd, kept_cpu);
	assert_int_equal(ci.claim_id, kept_id);
	assert_int_equal(ci.claim_level, level_from_rt_priority(50));
	/* A new query does not get the restored claim's CPU. */
	cpuset_zero(&probe.allowed);
	cpuset_set(&probe.allowed, kept_cpu);
	probe.flags = 0;
	query(fd, &probe, &rep);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	assert_int_equal(rep.query_reply.count, 0);
	/* Ids are not handed out twice. */
	q.owner_pid = 0;
	query(fd, &q, &rep);
	assert_true(rep.query_reply.claim_id > dead_id);
	close(fd);

	/* The restored claim still ends with its owner. */
	kill(keep, SIGKILL);
	waitpid(keep, NULL, 0);
	fd = connect_to(socket);
	for (int i = 0; i < 500 && claims_active(fd) > 0; i++)
		usleep(10000);
	assert_int_equal(claims_active(fd), 0);
	close(fd);

	/* A corrupt file: reported, ignored, the daemon serves. */
	kill_daemon(&daemon_under_test);
	f = fopen(statefile, "w");
	assert_non_null(f);
	fputs("rtplace-claims 1\nnext-id 9\nclaim 3 x\n", f);
	assert_int_equal(fclose(f), 0);
	start(&daemon_under_test, socket, config);
	fd = connect_to(socket);
	assert_int_equal(claims_active(fd), 0);
	query(fd, &q, &rep);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

/* The start time of pid (field 22 of /proc/PID/stat), as the daemon
 * compares it. */
static unsigned long long start_time_of(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long start = 0;
	const char *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	assert_non_null(p);
	/* After the comm: state is field 3, start time 22. */
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	assert_non_null(p);
	assert_int_equal(sscanf(p + 1, "%llu", &start), 1);
	return start;
}

/* start() with the daemon's log (its standard error) in log_path. */
static void start_logged(struct harness_daemon *d, const char *socket, const char *config, const char *log_path)
{
	const char *args[] = { "--topology", topo480, "--socket", socket, NULL };
	int saved = dup(2), fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char text[1024];
	int r;

	assert_true(saved >= 0 && fd >= 0);
	snprintf(text, sizeof(text), "[daemon]\nsocket-mode = 0666\nlog-level = info\n%s", config);
	assert_int_equal(dup2(fd, 2), 2);
	close(fd);
	r = harness_start_with_config(d, text, args, NULL);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(r, 0);
}

static bool file_holds(const char *path, const char *needle)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

#define DURABLE_CLAIMS 200

/*
 * A claim is durable once acknowledged: 200 owner-bound claims sent at
 * once, the daemon killed (SIGKILL) as soon as the last reply is read,
 * and every one of them is back after the restart, on its CPU. When the
 * state was saved after the replies, all 200 were lost.
 */
static void test_acknowledged_claims_survive_sigkill(void **state)
{
	char socket[128], config[256];
	struct rtplace_query q = claim_query(50, 1, RTPLACE_LEASE_INFINITE);
	static uint32_t ids[DURABLE_CLAIMS], cpus[DURABLE_CLAIMS];
	struct group *gr = getgrgid(getegid());
	struct proto_msg req, rep;
	int fd;

	assert_non_null(gr);
	snprintf(config, sizeof(config), "[moves]\nrt-groups = %s\nmax-prio = 99\n[limits]\nmax-claims-per-client = %d\n",
		 gr->gr_name, DURABLE_CLAIMS);
	snprintf(socket, sizeof(socket), "%s/rtplaced.sock", tmpdir);
	q.owner_pid = sleeper();
	start(&daemon_under_test, socket, config);
	fd = connect_to(socket);
	for (int i = 0; i < DURABLE_CLAIMS; i++) {
		assert_int_equal(proto_encode_query(&req, 1000 + (uint32_t)i, &q), 0);
		assert_int_equal(harness_send(fd, &req), 0);
	}
	for (int i = 0; i < DURABLE_CLAIMS; i++) {
		assert_int_equal(harness_reply(fd, 1000 + (uint32_t)i, &rep), 0);
		assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
		assert_int_not_equal(rep.query_reply.claim_id, 0);
		ids[i] = (uint32_t)rep.query_reply.claim_id;
		cpus[i] = rep.query_reply.list[0].cpu;
	}
	kill_daemon(&daemon_under_test);
	close(fd);

	start(&daemon_under_test, socket, config);
	fd = connect_to(socket);
	assert_int_equal(claims_active(fd), DURABLE_CLAIMS);
	for (int i = 0; i < DURABLE_CLAIMS; i++)
		assert_int_equal(cpu_info(fd, cpus[i]).claim_id, ids[i]);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

/*
 * A state file another user wrote, or may write, is refused with a line
 * saying why, and nothing of it is restored: here an exclusive claim at
 * dl on every CPU, for a live owner, in the daemon's own format.
 */
static void test_foreign_state_refused(void **state)
{
	char socket[128], statefile[160], logfile[160], text[256];
	pid_t owner = sleeper();
	int fd;

	snprintf(socket, sizeof(socket), "%s/rtplaced.sock", tmpdir);
	snprintf(statefile, sizeof(statefile), "%s.claims", socket);
	snprintf(logfile, sizeof(logfile), "%s/rtplaced.log", tmpdir);
	snprintf(text, sizeof(text), "rtplace-claims 1\nnext-id 5\nclaim 1 %d %llu 65534 %d 0 0-479\n", (int)owner,
		 start_time_of(owner), LEVEL_DL);

	/* Writable by others. */
	assert_int_equal(harness_write_file(statefile, text), 0);
	assert_int_equal(chmod(statefile, 0666), 0);
	start_logged(&daemon_under_test, socket, "", logfile);
	fd = connect_to(socket);
	assert_int_equal(claims_active(fd), 0);
	assert_int_equal(cpu_info(fd, 7).claim_id, 0);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
	assert_true(file_holds(logfile, "refused (the file is writable by others (mode 0666))"));

	/* Owned by nobody: only root can make such a file. */
	if (geteuid() != 0)
		return;
	assert_int_equal(harness_write_file(statefile, text), 0);
	assert_int_equal(chmod(statefile, 0600), 0);
	assert_int_equal(chown(statefile, NOBODY, NOBODY), 0);
	start_logged(&daemon_under_test, socket, "", logfile);
	fd = connect_to(socket);
	assert_int_equal(claims_active(fd), 0);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
	assert_true(file_holds(logfile, "refused (the file is owned by uid 65534, not 0)"));

	/* The daemon's own file, the same text: restored (what was refused
	 * above was the file's owner, not its content). */
	assert_int_equal(harness_write_file(statefile, text), 0);
	assert_int_equal(chown(statefile, 0, 0), 0);
	assert_int_equal(chmod(statefile, 0600), 0);
	start(&daemon_under_test, socket, "");
	fd = connect_to(socket);
	assert_int_equal(claims_active(fd), 1);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

/*
 * A corrupt state file restores nothing, but the ids it names were handed
 * out and may still be held: the next claim's id is past them, not 1.
 */
static void test_corrupt_state_keeps_ids(void **state)
{
	char socket[128], statefile[160];
	struct rtplace_query q = claim_query(10, 1, RTPLACE_LEASE_INFINITE);
	struct proto_msg rep;
	uint64_t last = 0;
	FILE *f;
	int fd;

	snprintf(socket, sizeof(socket), "%s/rtplaced.sock", tmpdir);
	snprintf(statefile, sizeof(statefile), "%s.claims", socket);
	start(&daemon_under_test, socket, "");
	fd = connect_to(socket);
	for (int i = 0; i < 5; i++) {
		query(fd, &q, &rep);
		assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
		last = rep.query_reply.claim_id;
	}
	assert_int_equal(claims_active(fd), 5);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);

	/* A line of garbage after what the daemon wrote. */
	f = fopen(statefile, "a");
	assert_non_null(f);
	fputs("claim 3 x\n", f);
	assert_int_equal(fclose(f), 0);
	start(&daemon_under_test, socket, "");
	fd = connect_to(socket);
	assert_int_equal(claims_active(fd), 0);
	query(fd, &q, &rep);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	assert_true(rep.query_reply.claim_id > last);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

/*
 * A state file refused for its mode restores nothing either, but it may be
 * the daemon's own made writable since: the next claim's id is past the
 * ids it names, not 1 (1 before). A forged file cannot push them round:
 * from one that names the last id, ids go no further than half of them.
 */
static void test_refused_state_keeps_ids(void **state)
{
	char socket[128], statefile[160];
	struct rtplace_query q = claim_query(10, 1, RTPLACE_LEASE_INFINITE);
	struct proto_msg rep;
	uint64_t last = 0;
	int fd;

	snprintf(socket, sizeof(socket), "%s/rtplaced.sock", tmpdir);
	snprintf(statefile, sizeof(statefile), "%s.claims", socket);
	start(&daemon_under_test, socket, "");
	fd = connect_to(socket);
	for (int i = 0; i < 5; i++) {
		query(fd, &q, &rep);
		assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
		last = rep.query_reply.claim_id;
	}
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);

	assert_int_equal(chmod(statefile, 0666), 0);
	start(&daemon_under_test, socket, "");
	fd = connect_to(socket);
	query(fd, &q, &rep);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	assert_true(rep.query_reply.claim_id > last);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);

	assert_int_equal(harness_write_file(statefile, "rtplace-claims 3\nnext-id 4294967295\n"), 0);
	assert_int_equal(chmod(statefile, 0666), 0);
	start(&daemon_under_test, socket, "");
	fd = connect_to(socket);
	query(fd, &q, &rep);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	assert_true(rep.query_reply.claim_id > last);
	assert_true(rep.query_reply.claim_id <= UINT32_MAX / 2 + 1);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_reply_before_events, teardown),
		cmocka_unit_test_teardown(test_claims_per_user, teardown),
		cmocka_unit_test_teardown(test_claims_fd_reserve, teardown),
		cmocka_unit_test_teardown(test_claims_users_part, teardown),
		cmocka_unit_test_teardown(test_claims_within_rights, teardown),
		cmocka_unit_test_teardown(test_release_by_uid, teardown),
		cmocka_unit_test_teardown(test_claims_survive_restart, teardown),
		cmocka_unit_test_teardown(test_acknowledged_claims_survive_sigkill, teardown),
		cmocka_unit_test_teardown(test_foreign_state_refused, teardown),
		cmocka_unit_test_teardown(test_corrupt_state_keeps_ids, teardown),
		cmocka_unit_test_teardown(test_refused_state_keeps_ids, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	if (!test_topology_path("2s-240c-480t", topo480, sizeof(topo480))) {
		fprintf(stderr, "SKIP: no 480-CPU topology\n");
		return 77;
	}
	/* A private folder (searchable by nobody) for configs and state. */
	assert_int_equal(test_tmpdir("test-claims-live", 0755, tmpdir, sizeof(tmpdir)), 0);
	/* One test by name (a glob), to rerun what failed. */
	if (getenv("RTPLACE_TEST_FILTER"))
		cmocka_set_test_filter(getenv("RTPLACE_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
