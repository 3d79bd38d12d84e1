/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * librtplace subscriptions against the real daemon on the live machine
 * (root): a move of one of our threads arrives as a MOVED record; the
 * subscription outlives its handle; a subscriber that never reads loses
 * exactly what did not fit while queries are still answered; an
 * unprivileged subscriber sees only its own threads' records; and
 * rtplace-run --manage gets its RT ticker pushed off CPU 1 when a higher
 * spinner takes that CPU; claims made and ended arrive as CLAIM_CREATED and
 * CLAIM_RELEASED with their ids. The daemon runs with a 64-record ring. RT work
 * stays on CPU 1 (spinners) or sleeps, under the RT-test lock, bounded in
 * time, and every child is killed at exit.
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>
#include <cmocka.h>

/* rtplace.h first: protocol.h (through harness.h) repeats its constants. */
#include "rtplace.h"

#include "harness.h"
#include "testlib.h"

#define SUB_RING_RECORDS 64
#define SUB_NOBODY 65534

static struct harness_daemon daemon_under_test;

/* Affinity-only move to one CPU: a thread at the normal level is not
 * re-checked, so it lands exactly there. */
static int move_to(struct rtplace *rp, pid_t tid, int cpu)
{
	struct rtplace_move_request mv = { .tid = tid, .flags = RTPLACE_MOVE_F_SET_AFFINITY };

	CPU_ZERO(&mv.cpus);
	CPU_SET(cpu, &mv.cpus);
	return rtplace_move(rp, &mv, NULL);
}

/*
 * Waits (bounded: 50 polls of 100 ms) for a record of type about tid, or
 * about claim id when by_claim, reading everything that comes; every record
 * read must pass check when given (false otherwise).
 */
static bool wait_match(struct rtplace_sub *s, unsigned type, bool by_claim, uint64_t key,
		       bool (*check)(const struct rtplace_notification *), struct rtplace_notification *ret)
{
	struct rtplace_notification recs[16];

	for (int i = 0; i < 50; i++) {
		struct pollfd p = { .fd = rtplace_sub_fd(s), .events = POLLIN };
		size_t n = 0;

		if (poll(&p, 1, 100) != 1)
			continue;
		if (rtplace_sub_read(s, recs, 16, &n, NULL) < 0)
			return false;
		for (size_t j = 0; j < n; j++) {
			if (check && !check(&recs[j]))
				return false;
			if (recs[j].type == type && (by_claim ? recs[j].claim_id == key : recs[j].tid == (pid_t)key)) {
				*ret = recs[j];
				return true;
			}
		}
	}
	return false;
}

static bool wait_record(struct rtplace_sub *s, unsigned type, pid_t tid,
			bool (*check)(const struct rtplace_notification *), struct rtplace_notification *ret)
{
	return wait_match(s, type, false, (uint64_t)tid, check, ret);
}

static void test_move_record(void **state)
{
	struct rtplace *rp, *rp2;
	struct rtplace_sub *sub, *orphan;
	struct rtplace_notification rec, recs[4];
	struct pollfd p;
	pthread_t th;
	cpu_set_t set;
	uint64_t first_seq;
	size_t n = 1;
	pid_t tid;

	assert_int_equal(rtplace_connect(daemon_under_test.socket, &rp), 0);
	assert_int_equal(rtplace_subscribe(rp, &sub), 0);
	assert_int_equal(rtplace_sub_capacity(sub), SUB_RING_RECORDS);
	/* Nothing yet: a read finds nothing and does not block. */
	assert_int_equal(rtplace_sub_read(sub, &rec, 1, &n, NULL), 0);
	assert_int_equal(n, 0);
	/* A subscription whose handle is closed at once lives on. */
	assert_int_equal(rtplace_connect(daemon_under_test.socket, &rp2), 0);
	assert_int_equal(rtplace_subscribe(rp2, &orphan), 0);
	rtplace_close(rp2);

	tid = test_start_sleeper(&th);
	assert_true(tid > 0);
	assert_int_equal(move_to(rp, tid, 1), 0);
	assert_int_equal(sched_getaffinity(tid, sizeof(set), &set), 0);
	assert_int_equal(CPU_COUNT(&set), 1);
	assert_true(CPU_ISSET(1, &set));

	/* The doorbell rang: the descriptor is readable before any read. */
	p = (struct pollfd){ .fd = rtplace_sub_fd(sub), .events = POLLIN };
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_true(wait_record(sub, RTPLACE_NOTIFY_MOVED, tid, NULL, &rec));
	assert_int_equal(rec.from_cpu, 0);
	assert_int_equal(rec.to_cpu, 1);
	assert_int_equal(rec.uid, 0);
	assert_int_equal(rec.policy, SCHED_OTHER);
	assert_int_equal(rec.prio, 0);
	assert_true(rec.seq > 0);
	assert_true(rec.time_ns > 0);
	first_seq = rec.seq;
	/* Drained: the doorbell is clear. */
	p.revents = 0;
	assert_int_equal(poll(&p, 1, 0), 0);

	assert_int_equal(move_to(rp, tid, 0), 0);
	assert_true(wait_record(sub, RTPLACE_NOTIFY_MOVED, tid, NULL, &rec));
	assert_int_equal(rec.from_cpu, 1);
	assert_int_equal(rec.to_cpu, 0);
	assert_true(rec.seq > first_seq);
	/* Both records were published before the second move's reply. */
	assert_int_equal(rtplace_sub_read(orphan, recs, 4, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(recs[0].seq, first_seq);
	assert_int_equal(recs[1].seq, rec.seq);
	assert_int_equal(recs[1].to_cpu, 0);

	test_stop_sleeper(th);
	rtplace_sub_free(orphan);
	rtplace_sub_free(sub);
	rtplace_sub_free(NULL);
	rtplace_close(rp);
}

/*
 * 100 moves into a 64-record ring nobody reads: queries are answered all
 * along, then the subscriber reads the first 64 and learns that exactly 36
 * were lost; the ring takes records again afterwards.
 */
static void test_overflow_counted(void **state)
{
	const unsigned moves = SUB_RING_RECORDS + 36;
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_notification recs[2 * SUB_RING_RECORDS];
	struct rtplace_answer ans;
	struct rtplace *rp, *asker;
	struct rtplace_sub *sub;
	pthread_t th;
	uint64_t lost = 0;
	size_t n = 0;
	pid_t tid;

	assert_int_equal(rtplace_connect(daemon_under_test.socket, &rp), 0);
	assert_int_equal(rtplace_connect(daemon_under_test.socket, &asker), 0);
	assert_int_equal(rtplace_set_timeout(asker, 2000), 0);
	tid = test_start_sleeper(&th);
	assert_true(tid > 0);
	assert_int_equal(rtplace_subscribe(rp, &sub), 0);
	req.prio = 10;
	for (unsigned i = 0; i < moves; i++) {
		assert_int_equal(move_to(rp, tid, (int)(1 - i % 2)), 0);
		if (i % 10 == 9)
			assert_int_equal(rtplace_query(asker, &req, &ans), 0);
	}
	assert_int_equal(rtplace_query(asker, &req, &ans), 0);

	assert_int_equal(rtplace_sub_read(sub, recs, 2 * SUB_RING_RECORDS, &n, &lost), 0);
	assert_int_equal(n, SUB_RING_RECORDS);
	assert_int_equal(lost, moves - SUB_RING_RECORDS);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(recs[i].type, RTPLACE_NOTIFY_MOVED);
		assert_int_equal(recs[i].tid, tid);
		assert_int_equal(recs[i].to_cpu, (int)(1 - i % 2));
		if (i > 0)
			assert_int_equal(recs[i].seq, recs[i - 1].seq + 1);
	}
	/* Reported once. */
	assert_int_equal(rtplace_sub_read(sub, recs, 2 * SUB_RING_RECORDS, &n, &lost), 0);
	assert_int_equal(n, 0);
	assert_int_equal(lost, 0);
	assert_int_equal(move_to(rp, tid, (int)(1 - moves % 2)), 0);
	assert_int_equal(rtplace_sub_read(sub, recs, 2 * SUB_RING_RECORDS, &n, &lost), 0);
	assert_int_equal(n, 1);
	assert_int_equal(lost, 0);
	assert_int_equal(recs[0].seq, recs[SUB_RING_RECORDS - 1].seq + 37);

	/* A short read leaves the descriptor readable for the rest. */
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(move_to(rp, tid, (int)(i % 2)), 0);
	assert_int_equal(rtplace_sub_read(sub, recs, 2, &n, &lost), 0);
	assert_int_equal(n, 2);
	{
		struct pollfd p = { .fd = rtplace_sub_fd(sub), .events = POLLIN };

		assert_int_equal(poll(&p, 1, 0), 1);
	}
	assert_int_equal(rtplace_sub_read(sub, recs, 2, &n, &lost), 0);
	assert_int_equal(n, 1);

	test_stop_sleeper(th);
	rtplace_sub_free(sub);
	rtplace_close(asker);
	rtplace_close(rp);
}

static bool wait_claim_record(struct rtplace_sub *s, unsigned type, uint64_t id, struct rtplace_notification *ret)
{
	return wait_match(s, type, true, id, NULL, ret);
}

/*
 * A claim's life reaches a subscriber through librtplace: created and
 * released with the claim's id, owner, first CPU and priority; a claim
 * whose owner exits is released too; thread records carry no claim.
 */
static void test_claim_records(void **state)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_notification rec;
	struct rtplace_answer ans;
	struct rtplace_sub *sub;
	struct rtplace *rp;
	pthread_t th;
	pid_t child, tid;

	assert_int_equal(rtplace_connect(daemon_under_test.socket, &rp), 0);
	assert_int_equal(rtplace_subscribe(rp, &sub), 0);
	req.prio = 20;
	req.flags = RTPLACE_QUERY_F_CLAIM;
	assert_int_equal(rtplace_query(rp, &req, &ans), 0);
	assert_true(ans.claim_id > 0);
	assert_true(wait_claim_record(sub, RTPLACE_NOTIFY_CLAIM_CREATED, ans.claim_id, &rec));
	assert_string_equal(rtplace_notification_name(rec.type), "claim-created");
	assert_int_equal(rec.tid, 0); /* it lives with the connection */
	assert_int_equal(rec.uid, 0);
	assert_int_equal(rec.from_cpu, ans.cpus[0]);
	assert_int_equal(rec.to_cpu, -1);
	assert_int_equal(rec.prio, 20);
	assert_int_equal(rtplace_release(rp, ans.claim_id, NULL), 0);
	assert_true(wait_claim_record(sub, RTPLACE_NOTIFY_CLAIM_RELEASED, ans.claim_id, &rec));
	assert_string_equal(rtplace_notification_name(rec.type), "claim-released");
	assert_int_equal(rec.from_cpu, ans.cpus[0]);

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	test_track_child(child);
	req.owner_pid = child;
	assert_int_equal(rtplace_query(rp, &req, &ans), 0);
	assert_true(wait_claim_record(sub, RTPLACE_NOTIFY_CLAIM_CREATED, ans.claim_id, &rec));
	assert_int_equal(rec.tid, child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_true(wait_claim_record(sub, RTPLACE_NOTIFY_CLAIM_RELEASED, ans.claim_id, &rec));
	assert_int_equal(rec.tid, child);

	tid = test_start_sleeper(&th);
	assert_true(tid > 0);
	assert_int_equal(move_to(rp, tid, 1), 0);
	assert_true(wait_record(sub, RTPLACE_NOTIFY_MOVED, tid, NULL, &rec));
	assert_int_equal(rec.claim_id, 0);
	test_stop_sleeper(th);
	rtplace_sub_free(sub);
	rtplace_close(rp);
}

static bool is_nobody(const struct rtplace_notification *rec)
{
	return rec->uid == SUB_NOBODY;
}

/* The unprivileged side: subscribes, says so, waits for the go, moves its
 * own thread, and must see that record and no other user's. */
static int unprivileged_child(const char *socket, int ready_fd, int go_fd)
{
	struct rtplace_notification rec;
	struct rtplace_sub *sub;
	struct rtplace *rp;
	pthread_t th;
	char c = 0;
	pid_t tid;

	if (setgroups(0, NULL) < 0 || setgid(SUB_NOBODY) < 0 || setuid(SUB_NOBODY) < 0)
		return 10;
	if (rtplace_connect(socket, &rp) < 0)
		return 11;
	if (rtplace_subscribe(rp, &sub) < 0)
		return 12;
	tid = test_start_sleeper(&th);
	if (tid < 0 || write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 1)
		return 13;
	if (move_to(rp, tid, 1) < 0)
		return 14;
	if (!wait_record(sub, RTPLACE_NOTIFY_MOVED, tid, is_nobody, &rec))
		return 15;
	if (rec.to_cpu != 1)
		return 16;
	return 0;
}

static void test_unprivileged_sees_own(void **state)
{
	int ready[2], go[2], st;
	struct rtplace *rp;
	pthread_t th;
	pid_t pid, tid;
	char c = 0;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(unprivileged_child(daemon_under_test.socket, ready[1], go[0]));
	test_track_child(pid);
	assert_int_equal(read(ready[0], &c, 1), 1);
	/* Root's move comes first: a subscriber that saw it would meet it
	 * before its own. */
	assert_int_equal(rtplace_connect(daemon_under_test.socket, &rp), 0);
	tid = test_start_sleeper(&th);
	assert_true(tid > 0);
	assert_int_equal(move_to(rp, tid, 1), 0);
	assert_int_equal(write(go[1], &c, 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	test_forget_child(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	test_stop_sleeper(th);
	rtplace_close(rp);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

/* Forks rtplace-run --manage --prio 50 --cpus 1 -- test-client-spin 5,
 * free to choose among CPUs 0-1. */
static pid_t spawn_managed_ticker(void)
{
	char run[4096], spin[4096];
	pid_t pid;

	harness_build_path("client/rtplace-run", run, sizeof(run));
	harness_build_path("tests/integration/test-client-spin", spin, sizeof(spin));
	pid = fork();
	if (pid == 0) {
		cpu_set_t all;

		CPU_ZERO(&all);
		CPU_SET(0, &all);
		CPU_SET(1, &all);
		if (sched_setaffinity(0, sizeof(all), &all) < 0)
			_exit(70);
		execl(run, run, "--socket", daemon_under_test.socket, "--manage", "--prio", "50", "--cpus", "1",
		      "--strict", "--", spin, "5", (char *)NULL);
		_exit(71);
	}
	return pid;
}

/* Waits (bounded) until pid runs SCHED_FIFO pinned to CPU 1 alone. */
static bool wait_running_on_1(pid_t pid)
{
	for (int i = 0; i < 200; i++) {
		cpu_set_t set;

		if (sched_getscheduler(pid) == SCHED_FIFO && sched_getaffinity(pid, sizeof(set), &set) == 0 &&
		    CPU_COUNT(&set) == 1 && CPU_ISSET(1, &set))
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * CPU 0 is held by an exclusive claim while rtplace-run asks, so its
 * ticker gets CPU 1; then CPU 0 is freed and a FIFO 60 spinner takes
 * CPU 1: the daemon pushes the managed ticker to CPU 0 and says so.
 */
static void test_run_manage_pushed(void **state)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct rtplace_notification rec;
	struct rtplace_answer ans;
	struct rtplace_sub *sub;
	struct rtplace *rp;
	cpu_set_t set, zero;
	pid_t ticker;

	assert_int_equal(rtplace_connect(daemon_under_test.socket, &rp), 0);
	assert_int_equal(rtplace_subscribe(rp, &sub), 0);
	CPU_ZERO(&zero);
	CPU_SET(0, &zero);
	req.prio = 99;
	req.flags = RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_EXCLUSIVE;
	req.lease_ms = RTPLACE_LEASE_INFINITE;
	req.allowed = &zero;
	req.allowed_size = sizeof(zero);
	assert_int_equal(rtplace_query(rp, &req, &ans), 0);
	assert_int_equal(ans.count, 1);
	assert_int_equal(ans.cpus[0], 0);

	ticker = test_track_child(spawn_managed_ticker());
	assert_true(ticker > 0);
	assert_true(wait_running_on_1(ticker));
	assert_int_equal(rtplace_release(rp, ans.claim_id, NULL), 0);

	test_track_child(test_spawn_rt(1, 60, TEST_RT_BUSY, 5));
	assert_true(wait_record(sub, RTPLACE_NOTIFY_MOVED, ticker, NULL, &rec));
	assert_int_equal(rec.from_cpu, 1);
	assert_int_equal(rec.to_cpu, 0);
	assert_int_equal(rec.policy, SCHED_FIFO);
	assert_int_equal(rec.prio, 50);
	assert_int_equal(sched_getaffinity(ticker, sizeof(set), &set), 0);
	assert_true(CPU_ISSET(0, &set));
	assert_false(CPU_ISSET(1, &set));
	test_kill_children();
	rtplace_sub_free(sub);
	rtplace_close(rp);
}

static int start(void **state)
{
	/* Any user may connect (the unprivileged subscriber); a small ring
	 * makes overflow cheap. */
	static const char text[] = "[daemon]\nsocket-mode = 0666\n[notify]\nring-records = 64\n";

	return harness_live_start(&daemon_under_test, text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_move_record),
		cmocka_unit_test(test_overflow_counted),
		cmocka_unit_test(test_unprivileged_sees_own),
		cmocka_unit_test(test_claim_records),
		cmocka_unit_test(test_run_manage_pushed),
	};

	signal(SIGPIPE, SIG_IGN);
	atexit(test_kill_children);
	return cmocka_run_group_tests(tests, start, harness_live_stop);
}
