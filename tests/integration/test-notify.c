/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integration tests for notification rings (no root needed): a consumer
 * process receives the memfd and eventfd over SCM_RIGHTS, as a client does,
 * maps the ring and drains it on doorbells. Checked: order and no loss
 * below capacity, records aligned as declared in the consumer's mapping,
 * exactly one doorbell per empty-to-non-empty transition, the seals, a
 * subscriber that stops reading neither blocks publishing nor costs the
 * others records, overflow counted exactly and learned by the consumer, the
 * per-uid filter, the registry of subscriptions by connection, and a
 * subscriber in another PID namespace seeing its own pids (on a fixture
 * proc tree).
 *
 * The parent drives the consumer over a SEQPACKET socketpair: "drain until
 * you have seen seq S" or "drain once", and the consumer answers with what
 * it saw. Waiting is bounded (poll timeout, alarm, parent-death signal), so
 * a lost doorbell fails the test instead of hanging it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "claims.h"
#include "cpuset.h"
#include "levels.h"
#include "notify.h"
#include "rtplace-proto.h"
#include "ring.h"
#include "testlib.h"

#define WAIT_MS 20000 /* a bound against a lost doorbell, not a timing */
#define ANY_UID UINT32_MAX

enum { CMD_WAIT_SEQ = 1, CMD_DRAIN_ONCE = 2, CMD_CHECK_SEALS = 3 };

struct cmd {
	uint32_t op;
	uint32_t want_uid; /* every record must have it, or ANY_UID */
	uint64_t seq;
};

struct report {
	uint64_t received, lost, doorbell_sum, last_seq, errors, misaligned, bad_uid;
	int32_t shrink_errno, grow_errno;
	int32_t seals;
	int32_t reserved;
};

struct consumer {
	pid_t pid;
	int sock;
};

struct consumer_state {
	struct ring ring;
	struct report rep;
	uint32_t want_uid;
};

/* A pool of n subscriptions that root, too, may fill. */
static const struct quota_limits *pool(uint32_t n)
{
	static struct quota_limits l;

	l = (struct quota_limits){ .size = n, .users = n, .per_user = n, .users_key = "u", .per_user_key = "p" };
	return &l;
}

static int consumer_cb(const struct rtplace_record *rec, void *userdata)
{
	struct consumer_state *cs = userdata;

	if (rec->seq <= cs->rep.last_seq)
		cs->rep.errors++;
	if (cs->want_uid != ANY_UID && rec->uid != cs->want_uid)
		cs->rep.bad_uid++;
	if (rec->tid != (int32_t)rec->seq)
		cs->rep.errors++;
	cs->rep.last_seq = rec->seq;
	cs->rep.received++;
	return 0;
}

static int consumer_count_cb(const struct rtplace_record *rec, void *userdata)
{
	(*(uint64_t *)userdata)++;
	return 0;
}

static void consumer_drain(struct consumer_state *cs)
{
	uint64_t lost;
	int64_t n = ring_drain(&cs->ring, consumer_cb, cs, &lost);

	if (n < 0)
		cs->rep.errors++;
	else
		cs->rep.lost += lost;
}

/* The consumer process: receives the descriptors, then serves commands
 * until the socket closes. */
static int consumer_main(int sock)
{
	struct consumer_state cs = { 0 };
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	uint64_t bytes;
	struct iovec iov = { &bytes, sizeof(bytes) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fds[2];
	void *mem;
	struct cmd cmd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(120);
	if (recvmsg(sock, &msg, 0) != sizeof(bytes))
		return 20;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(fds)))
		return 21;
	memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	/* Read-write: the consumer publishes its tail in the ring. */
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (mem == MAP_FAILED || ring_attach(mem, bytes, &cs.ring) < 0)
		return 22;
	for (uint32_t i = 0; i <= cs.ring.mask; i++)
		if ((uintptr_t)&cs.ring.records[i] % sizeof(struct rtplace_record))
			cs.rep.misaligned++;

	while (recv(sock, &cmd, sizeof(cmd), 0) == sizeof(cmd)) {
		cs.want_uid = cmd.want_uid;
		if (cmd.op == CMD_DRAIN_ONCE) {
			consumer_drain(&cs);
		} else if (cmd.op == CMD_WAIT_SEQ) {
			for (;;) {
				struct pollfd pfd = { .fd = fds[1], .events = POLLIN };
				uint64_t v;

				/* Clear the doorbell, then drain: a ring after
				 * this read is for records the drain may miss. */
				if (read(fds[1], &v, sizeof(v)) == sizeof(v))
					cs.rep.doorbell_sum += v;
				consumer_drain(&cs);
				if (cs.rep.last_seq >= cmd.seq || cs.rep.errors)
					break;
				if (poll(&pfd, 1, WAIT_MS) != 1) {
					cs.rep.errors++;
					break;
				}
			}
		} else if (cmd.op == CMD_CHECK_SEALS) {
			cs.rep.shrink_errno = ftruncate(fds[0], 0) < 0 ? errno : 0;
			cs.rep.grow_errno = ftruncate(fds[0], (off_t)bytes * 2) < 0 ? errno : 0;
			cs.rep.seals = fcntl(fds[0], F_GET_SEALS);
		}
		if (send(sock, &cs.rep, sizeof(cs.rep), 0) != sizeof(cs.rep))
			return 23;
	}
	return 0;
}

static struct consumer consumer_start(struct notify_sub *sub)
{
	struct notify_sub_info info;
	struct consumer c;
	int sv[2];
	uint64_t bytes;

	notify_sub_info(sub, &info);
	bytes = info.ring_bytes;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	c.pid = fork();
	assert_true(c.pid >= 0);
	if (c.pid == 0) {
		close(sv[0]);
		_exit(consumer_main(sv[1]));
	}
	close(sv[1]);
	c.sock = sv[0];
	assert_int_equal(test_send_fds(c.sock, &bytes, sizeof(bytes), (int[]){ info.memfd, info.doorbell }, 2),
			 sizeof(bytes));
	return c;
}

static struct report consumer_cmd(struct consumer *c, uint32_t op, uint32_t want_uid, uint64_t seq)
{
	struct cmd cmd = { .op = op, .want_uid = want_uid, .seq = seq };
	struct report rep;

	assert_int_equal(send(c->sock, &cmd, sizeof(cmd), 0), sizeof(cmd));
	assert_int_equal(recv(c->sock, &rep, sizeof(rep), 0), sizeof(rep));
	return rep;
}

static void consumer_stop(struct consumer *c)
{
	int status;

	close(c->sock);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static uint64_t publish(struct notify *n, uint32_t uid, int *doorbells)
{
	struct rtplace_record rec = { .type = RTPLACE_RECORD_MOVED, .uid = uid, .from_cpu = 0, .to_cpu = 1,
				      .policy = 1, .prio = 10, .time_ns = 1 };
	struct notify_stats st;
	int rung;

	/* tid carries the sequence number the publisher will stamp, so the
	 * consumer can check the record arrived whole. */
	notify_get_stats(n, &st);
	rec.tid = (int32_t)(st.published + 1);
	rung = notify_publish(n, &rec);
	assert_true(rung >= 0);
	assert_int_equal(rec.seq, st.published + 1);
	if (doorbells)
		*doorbells += rung;
	return rec.seq;
}

/* Lockstep bursts of exactly the capacity: nothing may be lost, each burst
 * is one empty-to-non-empty transition and rings exactly one doorbell.
 * Meanwhile a subscriber that never reads fills up and drops the rest. */
static void test_order_doorbells_and_stalled_subscriber(void **state)
{
	const uint32_t cap = 64, bursts = 200;
	struct notify_sub *reader, *stalled;
	struct notify_sub_info info;
	struct notify_stats st;
	struct consumer c;
	struct report rep;
	struct notify *n;
	uint64_t seq = 0;

	assert_int_equal(notify_new(cap, pool(4), &n), 0);
	assert_int_equal(notify_subscribe(n, 0, true, NULL, &stalled), 0);
	assert_int_equal(notify_subscribe(n, 0, true, NULL, &reader), 0);
	c = consumer_start(reader);

	for (uint32_t b = 0; b < bursts; b++) {
		int rung = 0;

		for (uint32_t i = 0; i < cap; i++)
			seq = publish(n, 1000 + i % 3, &rung);
		/* reader's ring was empty: one doorbell for it; the stalled
		 * one only on the very first record. */
		assert_int_equal(rung, 1 + (b == 0));
		rep = consumer_cmd(&c, CMD_WAIT_SEQ, ANY_UID, seq);
		assert_int_equal(rep.errors, 0);
		assert_int_equal(rep.received, (uint64_t)(b + 1) * cap);
		assert_int_equal(rep.lost, 0);
		assert_int_equal(rep.last_seq, seq);
	}
	assert_int_equal(rep.misaligned, 0);
	/* The consumer read exactly the doorbells rung for it: one per burst. */
	assert_int_equal(rep.doorbell_sum, bursts);

	notify_sub_info(reader, &info);
	assert_int_equal(info.delivered, (uint64_t)bursts * cap);
	assert_int_equal(info.lost, 0);
	notify_sub_info(stalled, &info);
	assert_int_equal(info.delivered, cap);
	assert_int_equal(info.lost, (uint64_t)bursts * cap - cap);
	notify_get_stats(n, &st);
	assert_int_equal(st.published, (uint64_t)bursts * cap);
	assert_int_equal(st.dropped, (uint64_t)bursts * cap - cap);
	assert_int_equal(st.doorbells, bursts + 1);
	assert_int_equal(st.subscribers, 2);

	rep = consumer_cmd(&c, CMD_CHECK_SEALS, ANY_UID, 0);
	assert_int_equal(rep.shrink_errno, EPERM);
	assert_int_equal(rep.grow_errno, EPERM);
	assert_int_equal(rep.seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
			 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	assert_int_equal(rep.seals & F_SEAL_WRITE, 0);
	consumer_stop(&c);
	notify_free(n);
}

/* A full ring drops and counts; the consumer learns the exact number with
 * the records that survived, and only once. */
static void test_overflow_learned(void **state)
{
	struct notify_sub *sub;
	struct notify_sub_info info;
	struct consumer c;
	struct report rep;
	struct notify *n;
	uint64_t seq = 0;

	assert_int_equal(notify_new(64, pool(1), &n), 0);
	assert_int_equal(notify_subscribe(n, 0, true, NULL, &sub), 0);
	c = consumer_start(sub);
	for (int i = 0; i < 100; i++)
		seq = publish(n, 1, NULL);
	rep = consumer_cmd(&c, CMD_DRAIN_ONCE, ANY_UID, 0);
	assert_int_equal(rep.errors, 0);
	assert_int_equal(rep.received, 64);
	assert_int_equal(rep.last_seq, 64);
	assert_int_equal(rep.lost, 36);
	seq = publish(n, 1, NULL);
	rep = consumer_cmd(&c, CMD_WAIT_SEQ, ANY_UID, seq);
	assert_int_equal(rep.errors, 0);
	assert_int_equal(rep.received, 65);
	assert_int_equal(rep.lost, 36);
	notify_sub_info(sub, &info);
	assert_int_equal(info.lost, 36);
	consumer_stop(&c);
	notify_free(n);
}

/* An unprivileged subscriber sees only its own uid's records. */
static void test_uid_filter(void **state)
{
	struct notify_sub *mine, *all;
	struct notify_sub_info info;
	struct notify_stats st;
	struct consumer c;
	struct report rep;
	struct notify *n;
	uint64_t seq = 0;

	assert_int_equal(notify_new(256, pool(2), &n), 0);
	assert_int_equal(notify_subscribe(n, 1000, false, NULL, &mine), 0);
	assert_int_equal(notify_subscribe(n, 1000, true, NULL, &all), 0);
	c = consumer_start(mine);
	for (int i = 0; i < 100; i++) {
		publish(n, 2000, NULL);
		seq = publish(n, 1000, NULL);
	}
	rep = consumer_cmd(&c, CMD_WAIT_SEQ, 1000, seq);
	assert_int_equal(rep.errors, 0);
	assert_int_equal(rep.bad_uid, 0);
	assert_int_equal(rep.received, 100);
	assert_int_equal(rep.lost, 0);
	notify_sub_info(all, &info);
	assert_int_equal(info.delivered, 200);
	notify_get_stats(n, &st);
	assert_int_equal(st.filtered, 100);
	consumer_stop(&c);
	notify_free(n);
}

/* Queued records owe one doorbell per ring that went non-empty, rung at
 * the flush, not before; the records are in the ring at once. */
static void test_queue_and_flush(void **state)
{
	struct notify_sub *a, *b;
	struct notify_sub_info ia;
	struct notify *n;
	struct ring ring;
	uint64_t v, lost;
	uint64_t got = 0;
	void *mem;

	assert_int_equal(notify_new(64, pool(2), &n), 0);
	assert_int_equal(notify_subscribe(n, 1000, false, NULL, &a), 0);
	assert_int_equal(notify_subscribe(n, 2000, false, NULL, &b), 0);
	notify_sub_info(a, &ia);
	mem = mmap(NULL, ia.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ia.memfd, 0);
	assert_true(mem != MAP_FAILED);
	assert_int_equal(ring_attach(mem, ia.ring_bytes, &ring), 0);

	for (int i = 0; i < 10; i++) {
		struct rtplace_record rec = { .type = RTPLACE_RECORD_COLLISION, .uid = 1000, .tid = 5 };

		assert_int_equal(notify_queue(n, &rec), 0);
	}
	assert_int_equal(read(ia.doorbell, &v, sizeof(v)), -1);
	assert_int_equal(errno, EAGAIN);
	/* Only a's ring went non-empty: b sees no uid 1000 records. */
	assert_int_equal(notify_flush(n), 1);
	assert_int_equal(notify_flush(n), 0);
	assert_int_equal(read(ia.doorbell, &v, sizeof(v)), sizeof(v));
	assert_int_equal(v, 1);
	assert_int_equal(ring_drain(&ring, consumer_count_cb, &got, &lost), 10);
	assert_int_equal(got, 10);
	assert_int_equal(lost, 0);
	munmap(mem, ia.ring_bytes);
	notify_free(n);
}

static void test_limits_and_unsubscribe(void **state)
{
	struct notify_sub *a, *b;
	struct notify_sub_info info;
	struct notify_stats st;
	struct notify *n;

	assert_int_equal(notify_new(48, pool(1), &n), -EINVAL);
	assert_int_equal(notify_new(1, pool(1), &n), -EINVAL);
	assert_int_equal(notify_new(RTPLACE_RING_MAX_RECORDS * 2u, pool(1), &n), -EINVAL);
	assert_int_equal(notify_new(64, pool(1), &n), 0);
	assert_int_equal(notify_subscribe(n, 0, true, NULL, &a), 0);
	assert_int_equal(notify_subscribe(n, 0, true, NULL, &b), -ENOSPC);
	notify_sub_info(a, &info);
	assert_int_equal(info.ring_records, 64);
	assert_int_equal(info.record_size, 32);
	assert_int_equal(info.ring_bytes, ring_bytes(64));
	assert_true(fcntl(info.memfd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(info.doorbell, F_GETFL) & O_NONBLOCK);
	notify_unsubscribe(n, a);
	/* Both descriptors are closed with the subscription. */
	assert_int_equal(fcntl(info.memfd, F_GETFD), -1);
	assert_int_equal(fcntl(info.doorbell, F_GETFD), -1);
	notify_get_stats(n, &st);
	assert_int_equal(st.subscribers, 0);
	assert_int_equal(notify_subscribe(n, 0, true, NULL, &b), 0);
	notify_free(n);
	notify_free(NULL);
}

/* Users fill their shares and the users' part; root still subscribes,
 * and each refusal names the key to raise. */
static void test_user_shares_keep_room_for_root(void **state)
{
	const struct quota_limits limits = {
		.size = UINT32_MAX, .users = 2, .per_user = 1,
		.users_key = "max-subscribers", .per_user_key = "max-subscribers-per-user",
	};
	struct notify_sub *a, *b, *c, *r1, *r2;
	struct rtplace_reason reason = { "" };
	struct notify *n;

	assert_int_equal(notify_new(64, &limits, &n), 0);
	assert_int_equal(notify_subscribe(n, 60001, false, &reason, &a), 0);
	assert_int_equal(notify_subscribe(n, 60001, false, &reason, &c), -EDQUOT);
	assert_string_equal(reason.text, "[limits] max-subscribers-per-user = 1 reached");
	assert_int_equal(notify_subscribe(n, 60002, false, &reason, &b), 0);
	assert_int_equal(notify_subscribe(n, 60003, false, &reason, &c), -EUSERS);
	assert_string_equal(reason.text, "[limits] max-subscribers = 2 reached");
	assert_int_equal(notify_subscribe(n, 0, true, &reason, &r1), 0);
	assert_int_equal(notify_subscribe(n, 0, true, &reason, &r2), 0);
	/* An ended subscription gives its user's room back. */
	notify_unsubscribe(n, a);
	assert_int_equal(notify_subscribe(n, 60003, false, &reason, &c), 0);
	notify_free(n);
}

/* The registry by connection: one subscription per connection, the same
 * one on a second SUBSCRIBE, ended by the disconnect and by nothing else. */
static void test_subscriptions_by_connection(void **state)
{
	struct notify_sub_info a, again, b;
	struct notify_stats st;
	struct notify *n;

	assert_int_equal(notify_new(64, pool(2), &n), 0);
	assert_int_equal(notify_subscribe_client(n, 1, 1000, false, RTPLACE_RING_VERSION, NULL, NULL, &a), 0);
	assert_int_equal(notify_subscribe_client(n, 1, 1000, false, RTPLACE_RING_VERSION, NULL, NULL, &again), 0);
	assert_int_equal(again.memfd, a.memfd);
	assert_int_equal(again.doorbell, a.doorbell);
	assert_int_equal(notify_subscribe_client(n, 2, 1001, false, RTPLACE_RING_VERSION_1, NULL, NULL, &b), 0);
	assert_int_not_equal(b.memfd, a.memfd);
	assert_int_equal(notify_subscribe_client(n, 3, 1002, false, RTPLACE_RING_VERSION, NULL, NULL, &b), -EUSERS);
	notify_client_gone(n, 3); /* never subscribed: nothing to end */
	notify_client_gone(n, 1);
	assert_int_equal(fcntl(a.memfd, F_GETFD), -1);
	notify_get_stats(n, &st);
	assert_int_equal(st.subscribers, 1);
	/* The record reaches the remaining subscriber, stamped. */
	assert_int_equal(notify_record(n, RTPLACE_RECORD_MOVED, 42, 1001, 0, 1, 1, 10), 1);
	notify_get_stats(n, &st);
	assert_int_equal(st.delivered, 1);
	notify_client_gone(n, 2);
	notify_get_stats(n, &st);
	assert_int_equal(st.subscribers, 0);
	notify_free(n);
}

/* A subscriber's ring, mapped from its memfd as a client maps it. */
struct mapped_ring {
	struct ring ring;
	void *mem;
	size_t bytes;
};

static void map_ring(const struct notify_sub *s, struct mapped_ring *ret)
{
	struct notify_sub_info info;

	notify_sub_info(s, &info);
	ret->bytes = info.ring_bytes;
	ret->mem = mmap(NULL, ret->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, info.memfd, 0);
	assert_true(ret->mem != MAP_FAILED);
	assert_int_equal(ring_attach(ret->mem, ret->bytes, &ret->ring), 0);
}

/* Pops every record of r into recs (at most max); returns how many. */
static size_t pop_all(struct mapped_ring *r, struct rtplace_record *recs, size_t max)
{
	size_t n = 0;

	while (n < max && ring_pop(&r->ring, &recs[n], NULL) == 1)
		n++;
	return n;
}

static void assert_claim_record(const struct rtplace_record *rec, uint8_t type, uint32_t claim_id)
{
	assert_int_equal(rec->type, type);
	assert_int_equal(rec->claim_id, claim_id);
	assert_int_equal(rec->tid, 4242);
	assert_int_equal(rec->uid, 1000);
	assert_int_equal(rec->from_cpu, 3);
	assert_int_equal(rec->prio, 50);
	assert_true(rec->seq > 0 && rec->time_ns > 0);
}

/*
 * A claim's life as records (notify_claim_life(), which the claims table
 * calls): created, then ended by each cause, each naming the claim's id,
 * owner, uid, first CPU and priority; filtered by the claim's uid as any
 * record; a version-1 ring (a subscriber of protocol 1 or 2) gets only
 * the expiry and revocation it knows, without an id.
 */
static void test_claim_records(void **state)
{
	struct notify_sub *mine, *all, *other, *old;
	struct mapped_ring rm, ra, ro, rv1;
	struct rtplace_record recs[16];
	struct claim cl = { .id = 7, .pid = 4242, .uid = 1000 };
	struct notify *n;
	size_t got;

	cl.level = (uint8_t)level_from_rt_priority(50);
	cpuset_set(&cl.cpus, 3);
	cpuset_set(&cl.cpus, 5);
	assert_int_equal(notify_new(64, pool(4), &n), 0);
	assert_int_equal(notify_subscribe(n, 1000, false, NULL, &mine), 0);
	assert_int_equal(notify_subscribe(n, 0, true, NULL, &all), 0);
	assert_int_equal(notify_subscribe(n, 2000, false, NULL, &other), 0);
	assert_int_equal(notify_subscribe_version(n, 0, true, RTPLACE_RING_VERSION_1, NULL, &old), 0);
	map_ring(mine, &rm);
	map_ring(all, &ra);
	map_ring(other, &ro);
	map_ring(old, &rv1);
	assert_int_equal(ra.ring.version, RTPLACE_RING_VERSION);
	assert_int_equal(rv1.ring.version, RTPLACE_RING_VERSION_1);

	notify_claim_life(&cl, CLAIMS_LIFE_CREATED, n);
	notify_claim_life(&cl, CLAIMS_LIFE_RELEASED, n);
	cl.id = 8;
	notify_claim_life(&cl, CLAIMS_LIFE_CREATED, n);
	notify_claim_life(&cl, RTPLACE_CLAIM_ENDED_EXPIRED, n);
	cl.id = 9;
	notify_claim_life(&cl, RTPLACE_CLAIM_ENDED_OWNER_EXITED, n);
	cl.id = 10;
	notify_claim_life(&cl, CLAIMS_LIFE_DISCONNECTED, n);
	cl.id = 11;
	notify_claim_life(&cl, RTPLACE_CLAIM_ENDED_REVOKED, n);
	cl.id = 12;
	notify_isolation(&cl, RTPLACE_RECORD_ISOLATED, RTPLACE_ISOLATED_IRQS | RTPLACE_ISOLATED_MANAGED_KEPT, n);
	notify_isolation(&cl, RTPLACE_RECORD_ISOLATION_RELEASED, RTPLACE_ISOLATION_END_OWNER_EXITED, n);

	for (int k = 0; k < 2; k++) {
		got = pop_all(k ? &ra : &rm, recs, 16);
		assert_int_equal(got, 9);
		assert_claim_record(&recs[0], RTPLACE_RECORD_CLAIM_CREATED, 7);
		assert_claim_record(&recs[1], RTPLACE_RECORD_CLAIM_RELEASED, 7);
		assert_claim_record(&recs[2], RTPLACE_RECORD_CLAIM_CREATED, 8);
		assert_claim_record(&recs[3], RTPLACE_RECORD_CLAIM_EXPIRED, 8);
		assert_claim_record(&recs[4], RTPLACE_RECORD_CLAIM_RELEASED, 9);
		assert_claim_record(&recs[5], RTPLACE_RECORD_CLAIM_RELEASED, 10);
		assert_claim_record(&recs[6], RTPLACE_RECORD_CLAIM_REVOKED, 11);
		assert_int_equal(recs[6].seq, recs[0].seq + 6);
		/* Isolation's: the detail where a claim record has its priority. */
		assert_int_equal(recs[7].type, RTPLACE_RECORD_ISOLATED);
		assert_int_equal(recs[7].claim_id, 12);
		assert_int_equal(recs[7].tid, 4242);
		assert_int_equal(recs[7].from_cpu, 3);
		assert_int_equal(recs[7].prio, RTPLACE_ISOLATED_IRQS | RTPLACE_ISOLATED_MANAGED_KEPT);
		assert_int_equal(recs[8].type, RTPLACE_RECORD_ISOLATION_RELEASED);
		assert_int_equal(recs[8].claim_id, 12);
		assert_int_equal(recs[8].prio, RTPLACE_ISOLATION_END_OWNER_EXITED);
	}
	assert_int_equal(pop_all(&ro, recs, 16), 0);
	got = pop_all(&rv1, recs, 16);
	assert_int_equal(got, 2);
	assert_int_equal(recs[0].type, RTPLACE_RECORD_CLAIM_EXPIRED);
	assert_int_equal(recs[1].type, RTPLACE_RECORD_CLAIM_REVOKED);
	for (size_t i = 0; i < got; i++) {
		assert_int_equal(recs[i].claim_id, 0);
		assert_int_equal(recs[i].tid, 4242);
		assert_int_equal(recs[i].from_cpu, 3);
		assert_int_equal(recs[i].prio, 50);
	}

	munmap(rm.mem, rm.bytes);
	munmap(ra.mem, ra.bytes);
	munmap(ro.mem, ro.bytes);
	munmap(rv1.mem, rv1.bytes);
	notify_free(n);
}

/* Task pid of a fixture proc tree at root: NSpid nspid, ns/pid leading to
 * root/ns. */
static void fixture_task(const char *root, int pid, const char *nspid, const char *ns)
{
	char rel[64], text[64], path[512], target[512];

	snprintf(rel, sizeof(rel), "%d/status", pid);
	snprintf(text, sizeof(text), "Name:\tp%d\nNSpid:\t%s\n", pid, nspid);
	assert_int_equal(test_write_fixture(root, rel, text), 0);
	snprintf(path, sizeof(path), "%s/%d/ns", root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/ns/pid", root, pid);
	snprintf(target, sizeof(target), "%s/%s", root, ns);
	assert_int_equal(symlink(target, path), 0);
}

/*
 * A subscriber in a container gets records by its own numbers, none about
 * a host task, and records without a task (or whose task is gone) with
 * tid 0; a subscriber of the daemon's namespace beside it gets every
 * record as published.
 */
static void test_container_view(void **state)
{
	static const int32_t tids[] = { 200, 100, 0, 999, 201 };
	static const int32_t want_tid[] = { 1, 0, 0, 2 }, want_cpu[] = { 0, 2, 3, 4 };
	char root[] = "/tmp/rtplace-test-notify.XXXXXX", path[512];
	struct pidmap_view view = { .level = 1 };
	struct notify_sub *container, *host;
	struct notify_sub_info ic, ih;
	struct notify_stats st;
	struct rtplace_record rec;
	struct notify *n;
	struct ring rc, rh;
	struct stat sb;
	void *mc, *mh;
	uint64_t lost;

	assert_non_null(mkdtemp(root));
	assert_int_equal(test_write_fixture(root, "ns-container", ""), 0);
	assert_int_equal(test_write_fixture(root, "ns-host", ""), 0);
	snprintf(path, sizeof(path), "%s/ns-container", root);
	assert_int_equal(stat(path, &sb), 0);
	view.root = root;
	view.ns = (struct procfs_ns){ .dev = sb.st_dev, .ino = sb.st_ino };
	fixture_task(root, 200, "200\t1", "ns-container");
	fixture_task(root, 201, "201\t2", "ns-container");
	fixture_task(root, 100, "100", "ns-host");

	assert_int_equal(notify_new(64, pool(2), &n), 0);
	assert_int_equal(notify_subscribe(n, 0, true, NULL, &container), 0);
	notify_sub_set_view(container, &view);
	assert_int_equal(notify_subscribe(n, 0, true, NULL, &host), 0);
	for (size_t i = 0; i < sizeof(tids) / sizeof(tids[0]); i++) {
		rec = (struct rtplace_record){ .type = RTPLACE_RECORD_MOVED, .tid = tids[i], .to_cpu = (int16_t)i };
		notify_publish(n, &rec);
	}
	notify_sub_info(container, &ic);
	notify_sub_info(host, &ih);
	mc = mmap(NULL, ic.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ic.memfd, 0);
	mh = mmap(NULL, ih.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ih.memfd, 0);
	assert_true(mc != MAP_FAILED && mh != MAP_FAILED);
	assert_int_equal(ring_attach(mc, ic.ring_bytes, &rc), 0);
	assert_int_equal(ring_attach(mh, ih.ring_bytes, &rh), 0);
	for (size_t i = 0; i < sizeof(want_tid) / sizeof(want_tid[0]); i++) {
		assert_int_equal(ring_pop(&rc, &rec, &lost), 1);
		assert_int_equal(rec.tid, want_tid[i]);
		assert_int_equal(rec.to_cpu, want_cpu[i]);
	}
	assert_int_equal(ring_pop(&rc, &rec, &lost), 0);
	for (size_t i = 0; i < sizeof(tids) / sizeof(tids[0]); i++) {
		assert_int_equal(ring_pop(&rh, &rec, &lost), 1);
		assert_int_equal(rec.tid, tids[i]);
	}
	notify_get_stats(n, &st);
	assert_int_equal(st.filtered, 1);
	munmap(mc, ic.ring_bytes);
	munmap(mh, ih.ring_bytes);
	notify_free(n);
	assert_int_equal(test_fixture_remove(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_doorbells_and_stalled_subscriber),
		cmocka_unit_test(test_overflow_learned),
		cmocka_unit_test(test_uid_filter),
		cmocka_unit_test(test_queue_and_flush),
		cmocka_unit_test(test_limits_and_unsubscribe),
		cmocka_unit_test(test_subscriptions_by_connection),
		cmocka_unit_test(test_user_shares_keep_room_for_root),
		cmocka_unit_test(test_container_view),
		cmocka_unit_test(test_claim_records),
	};

	alarm(300);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
