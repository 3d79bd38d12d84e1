/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtplaced on the live machine with the real BPF tracker (root): answers
 * follow real RT threads. The test pins itself (and so the daemon it starts)
 * to CPU 0 and runs the RT spinner on CPU 1 only; the spinner ends itself
 * after a few seconds (alarm) and the test SIGKILLs it from CPU 0 at normal
 * priority, so CPU 0 stays usable whatever happens.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>
#include <cmocka.h>

#include "cpupri.h"
#include "harness.h"
#include "testlib.h"

#define SPIN_CPU 1
#define SPIN_PRIO 60
#define NOBODY 65534
/* What the BPF writer stores in the map's spare bytes of CPU 0's slot. */
#define BPF_SCRIBBLE 0x5a5a5a5a

static struct harness_daemon daemon_under_test;
static pid_t spinner;
static uint32_t next_request = 1;

static struct rtplace_cpu_info cpu_info(int fd, unsigned cpu)
{
	struct rtplace_cpu_info ci;

	assert_int_equal(harness_cpu_info(fd, cpu, &ci), 0);
	return ci;
}

/* Polls (bounded: 2 s) until cpu's level satisfies want(level). */
static unsigned wait_level(int fd, unsigned cpu, bool (*want)(unsigned level))
{
	unsigned level = cpu_info(fd, cpu).level;

	for (int i = 0; i < 200 && !want(level); i++) {
		usleep(10000);
		level = cpu_info(fd, cpu).level;
	}
	return level;
}

static bool is_spin_level(unsigned level)
{
	return level == LEVEL_RT1 + SPIN_PRIO - 1;
}

static bool is_not_rt(unsigned level)
{
	return level == LEVEL_IDLE || level == LEVEL_NORMAL;
}

static struct proto_msg query(int fd, int prio, const char *allowed)
{
	struct proto_msg rep;

	assert_int_equal(harness_query(fd, next_request++, prio, 1, allowed, false, &rep), 0);
	return rep;
}

static void test_tracking_ready(void **state)
{
	int fd = harness_connect(daemon_under_test.socket);
	struct proto_msg req, rep;

	assert_true(fd >= 0);
	/* READY=1 came first (harness_start), so the tracker is attached. */
	assert_int_equal(proto_encode_status(&req, next_request++), 0);
	assert_int_equal(harness_call(fd, &req, &rep), 0);
	assert_true(rep.status_reply.flags & RTPLACE_STATUS_F_TRACKING);
	assert_int_equal(rep.status_reply.nonline, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
	close(fd);
}

static void test_answers_follow_rt_thread(void **state)
{
	int fd = harness_connect(daemon_under_test.socket);
	struct rtplace_cpu_info ci;
	struct proto_msg rep;

	assert_true(fd >= 0);
	spinner = test_track_child(test_spawn_rt(SPIN_CPU, SPIN_PRIO, TEST_RT_BUSY, 5));
	assert_true(spinner > 0);
	assert_true(is_spin_level(wait_level(fd, SPIN_CPU, is_spin_level)));
	ci = cpu_info(fd, SPIN_CPU);
	assert_int_equal(ci.pid, spinner);

	/* rt50 may not go where rt60 runs: any other CPU is below it. */
	rep = query(fd, 50, NULL);
	assert_int_equal(rep.query_reply.count, 1);
	assert_int_not_equal(rep.query_reply.list[0].cpu, SPIN_CPU);
	/* Restricted to CPU 1, rt50 gets an empty answer that says why. */
	rep = query(fd, 50, "1");
	assert_int_equal(rep.query_reply.count, 0);
	assert_true(rep.query_reply.reason[0] != '\0');
	/* rt60 is not strictly below rt60 either. */
	assert_int_equal(query(fd, 60, "1").query_reply.count, 0);
	/* rt70 may preempt it. */
	rep = query(fd, 70, "1");
	assert_int_equal(rep.query_reply.count, 1);
	assert_int_equal(rep.query_reply.list[0].cpu, SPIN_CPU);
	assert_int_equal(rep.query_reply.list[0].level, LEVEL_RT1 + SPIN_PRIO - 1);

	test_kill_children();
	assert_true(is_not_rt(wait_level(fd, SPIN_CPU, is_not_rt)));
	rep = query(fd, 50, "1");
	assert_int_equal(rep.query_reply.count, 1);
	close(fd);
}

/* CPU cpu's time by class now (one CPU_TIMES page). */
static struct rtplace_class_times class_times(int fd, unsigned cpu)
{
	struct proto_msg req, rep;

	assert_int_equal(proto_encode_cpu_times(&req, next_request++, &(struct rtplace_cpus){ .first = 0 }), 0);
	assert_int_equal(harness_call(fd, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_CPU_TIMES_REPLY);
	assert_true(cpu < rep.cpu_times_reply.count);
	return rep.cpu_times_reply.cpus[cpu];
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A FIFO spinner on CPU 1 for 3 s adds at least 2 s of rt time
 * there, no counter ever goes back, and the CPU accumulates idle time
 * once the spinner is gone. */
static void test_class_times_follow_rt_thread(void **state)
{
	int fd = harness_connect(daemon_under_test.socket);
	struct rtplace_class_times before, spun, after;
	struct timespec t0;
	double wall;

	assert_true(fd >= 0);
	before = class_times(fd, SPIN_CPU);
	spinner = test_track_child(test_spawn_rt(SPIN_CPU, SPIN_PRIO, TEST_RT_BUSY, 6));
	assert_true(spinner > 0);
	assert_true(is_spin_level(wait_level(fd, SPIN_CPU, is_spin_level)));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sleep(3);
	test_kill_children();
	assert_true(is_not_rt(wait_level(fd, SPIN_CPU, is_not_rt)));
	wall = seconds_since(&t0);
	spun = class_times(fd, SPIN_CPU);
	for (int c = 0; c < RTPLACE_CLASS_COUNT; c++)
		assert_true(spun.ns[c] >= before.ns[c]);
	print_message("# CPU %d: rt %.3f s over %.3f s of spinning\n", SPIN_CPU,
		      (double)(spun.ns[RTPLACE_CLASS_RT] - before.ns[RTPLACE_CLASS_RT]) / 1e9, wall);
	assert_true(spun.ns[RTPLACE_CLASS_RT] - before.ns[RTPLACE_CLASS_RT] >= 2000000000ull);
	/* Counted time is time that passed: the spinner ran under 1 s
	 * before the clock started and after it stopped. */
	assert_true((double)(spun.ns[RTPLACE_CLASS_RT] - before.ns[RTPLACE_CLASS_RT]) / 1e9 < wall + 1);

	/* Bounded: CPU 1 may be busy with other tests' normal work, but not
	 * for 20 s without a moment of idle. */
	for (int i = 0; i < 200; i++) {
		usleep(100000);
		after = class_times(fd, SPIN_CPU);
		if (after.ns[RTPLACE_CLASS_IDLE] > spun.ns[RTPLACE_CLASS_IDLE])
			break;
	}
	assert_true(after.ns[RTPLACE_CLASS_IDLE] > spun.ns[RTPLACE_CLASS_IDLE]);
	assert_true(after.ns[RTPLACE_CLASS_RT] >= spun.ns[RTPLACE_CLASS_RT]);
	close(fd);
}

/* The most nodes the test looks at (the VM bed's guests have 4). */
#define TEST_NODES_MAX 64

static struct proto_msg node_query(int fd, uint32_t id, unsigned count, int node, bool claim, bool send_only)
{
	struct rtplace_query q = harness_fifo_query(80, count, claim ? RTPLACE_QUERY_F_CLAIM : 0);
	struct proto_msg req, rep = { 0 };

	q.node = node;
	assert_int_equal(proto_encode_query(&req, id, &q), 0);
	if (send_only)
		assert_int_equal(harness_send(fd, &req), 0);
	else
		assert_int_equal(harness_call(fd, &req, &rep), 0);
	return rep;
}

/* Rounds of claims test_node_local_answers() tries (see there). */
#define TEST_CLAIM_ROUNDS 3

/*
 * One round of test_node_local_answers()'s claims: one 2-CPU rt80 claim
 * per node that has 2 CPUs, sent all at once on as many connections.
 * Whatever the answers, no CPU is given twice and an answer of 2 CPUs
 * keeps to one node. Returns true when every claim got its 2 CPUs; a
 * short one is printed with its reason and the levels the daemon shows
 * then. The claims end with their connections, closed on return.
 */
static bool node_claims_round(int fd, const int *node_of, const unsigned *per_node, long ncpus)
{
	int fds[TEST_NODES_MAX];
	bool taken[1024] = { false }, full = true;
	unsigned nclaims = 0;

	for (int n = 0; n < TEST_NODES_MAX; n++) {
		if (per_node[n] < 2)
			continue;
		fds[nclaims] = harness_connect(daemon_under_test.socket);
		assert_true(fds[nclaims] >= 0);
		node_query(fds[nclaims], next_request + nclaims, 2, -1, true, true);
		nclaims++;
	}
	printf("# %u CPUs, %u concurrent 2-CPU claims\n", (unsigned)ncpus, nclaims);
	for (unsigned i = 0; i < nclaims; i++) {
		struct proto_msg rep;

		assert_int_equal(harness_reply(fds[i], next_request + i, &rep), 0);
		assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
		assert_true(rep.query_reply.count >= 1 && rep.query_reply.count <= 2);
		assert_true(rep.query_reply.claim_id != 0);
		for (unsigned k = 0; k < rep.query_reply.count; k++) {
			unsigned cpu = rep.query_reply.list[k].cpu;

			assert_true(cpu < (unsigned)ncpus);
			assert_false(taken[cpu]);
			taken[cpu] = true;
		}
		if (rep.query_reply.count == 2) {
			assert_int_equal(node_of[rep.query_reply.list[0].cpu], node_of[rep.query_reply.list[1].cpu]);
			continue;
		}
		full = false;
		printf("# claim %u got 1 CPU: %s\n", i, rep.query_reply.reason);
		for (long cpu = 0; cpu < ncpus; cpu++) {
			struct rtplace_cpu_info ci = cpu_info(fd, (unsigned)cpu);

			printf("#   CPU %ld level %u pid %d %s\n", cpu, (unsigned)ci.level, (int)ci.pid, ci.comm);
		}
	}
	next_request += nclaims;
	for (unsigned i = 0; i < nclaims; i++)
		close(fds[i]);
	return full;
}

/*
 * Node-local answers from the topology the daemon found in sysfs (the VM
 * bed's guests have 4 nodes of 2 CPUs): a query for node N is answered
 * from node N; and concurrent 2-CPU claims, one per node, never share a
 * CPU and each keeps to one node (node_claims_round()). Those claims
 * leave no CPU spare, so a kernel thread at rt80 or above (a PREEMPT_RT
 * guest's, a stopper) on one CPU at that moment rightly cuts one answer
 * to 1 CPU: the round is tried again, up to TEST_CLAIM_ROUNDS times, and
 * the test fails only when none gives every claim its 2 CPUs.
 */
static void test_node_local_answers(void **state)
{
	int fd = harness_connect(daemon_under_test.socket);
	unsigned per_node[TEST_NODES_MAX] = { 0 };
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int node_of[1024];
	bool full = false;

	(void)state;
	assert_true(fd >= 0);
	assert_true(ncpus > 0 && ncpus <= 1024);
	for (long cpu = 0; cpu < ncpus; cpu++) {
		node_of[cpu] = cpu_info(fd, (unsigned)cpu).node;
		assert_true(node_of[cpu] >= 0 && node_of[cpu] < TEST_NODES_MAX);
		per_node[node_of[cpu]]++;
	}
	for (int n = 0; n < TEST_NODES_MAX; n++) {
		struct proto_msg rep;

		if (!per_node[n])
			continue;
		rep = node_query(fd, next_request++, 1, n, false, false);
		assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
		assert_int_equal(rep.query_reply.count, 1);
		assert_int_equal(node_of[rep.query_reply.list[0].cpu], n);
	}
	for (int round = 0; round < TEST_CLAIM_ROUNDS && !full; round++) {
		full = node_claims_round(fd, node_of, per_node, ncpus);
		/* Connection-bound claims end as their connections close: the
		 * next round waits for the daemon to have seen them go. */
		for (int i = 0; i < 100 && !full; i++) {
			struct rtplace_status_reply st;

			assert_int_equal(harness_status(fd, &st), 0);
			if (st.claims_active == 0)
				break;
			usleep(20000);
		}
	}
	assert_true(full);
	close(fd);
}

/* The live daemon hands out its map read-only: it maps PROT_READ and
 * shows the CPUs online, a writable mapping, mprotect() to write and
 * write(2) fail. */
static void test_local_map_read_only(void **state)
{
	int fd = harness_connect(daemon_under_test.socket), fds[2];
	struct cpupri_view view;
	struct proto_msg rep;
	size_t size;
	char byte = 0;
	void *p;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(harness_local(fd, RTPLACE_PROTO_VERSION, &rep, fds), 2);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_LOCAL_REPLY);
	size = (size_t)rep.local_reply.map_size;
	assert_true(mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0) == MAP_FAILED);
	assert_int_equal(write(fds[0], &byte, 1), -1);
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fds[0], 0);
	if (p == MAP_FAILED)
		fail_msg("mapping the map's read-only descriptor (%zu bytes): %s", size, strerror(errno));
	assert_int_equal(mprotect(p, size, PROT_READ | PROT_WRITE), -1);
	assert_int_equal(cpupri_view_open(p, size, &view), 0);
	assert_int_not_equal(cpupri_level(&view, 0), LEVEL_OFFLINE);
	cpupri_view_close(&view);
	munmap(p, size);
	close(fds[0]);
	close(fds[1]);
	close(fd);
}

/*
 * Loads a socket filter that stores BPF_SCRIBBLE at byte off of the value
 * of the map map_fd would be, and runs it once. 0 when it ran, -errno when
 * the kernel refused (a descriptor that is no map: EBADF or EINVAL).
 */
static int bpf_scribble(int map_fd, uint32_t off)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_VALUE, .imm = map_fd },
		{ .imm = (int32_t)off },
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 1, .imm = BPF_SCRIBBLE },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	unsigned char packet[64] = { 0 };
	union bpf_attr a = { 0 };
	int prog, r = 0;

	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	a.license = (uintptr_t)"GPL";
	prog = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (prog < 0)
		return -errno;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	a.test.data_in = (uintptr_t)packet;
	a.test.data_size_in = sizeof(packet);
	if (syscall(SYS_bpf, BPF_PROG_TEST_RUN, &a, sizeof(a)) < 0)
		r = -errno;
	close(prog);
	return r;
}

/* In a child: nobody with CAP_BPF only, as an ambient capability would
 * leave it after exec. */
static int become_nobody_with_bpf(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (prctl(PR_SET_KEEPCAPS, 1) < 0 || setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) < 0)
		return -errno;
	data[CAP_BPF / 32].effective = data[CAP_BPF / 32].permitted = 1u << (CAP_BPF % 32);
	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

/*
 * No BPF program can write the map through what LOCAL hands out: as nobody
 * with CAP_BPF (who cannot open the tracker's map by id), and as root, a
 * socket filter that stores through the descriptor is refused, or its store
 * is not seen in the map read through that descriptor.
 */
static void test_local_map_bpf_read_only(void **state)
{
	int fd = harness_connect(daemon_under_test.socket), fds[2], status;
	const struct cpupri_header *h;
	const volatile uint32_t *spare;
	struct proto_msg rep;
	size_t size;
	uint32_t off;
	pid_t pid;
	void *p;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(harness_local(fd, RTPLACE_PROTO_VERSION, &rep, fds), 2);
	size = (size_t)rep.local_reply.map_size;
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fds[0], 0);
	assert_true(p != MAP_FAILED);
	h = p;
	off = h->geom.slots_off + (uint32_t)offsetof(struct cpupri_slot, reserved);
	spare = (const volatile uint32_t *)((const char *)p + off);
	assert_int_not_equal(*spare, BPF_SCRIBBLE);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int r = become_nobody_with_bpf();

		if (r < 0) {
			fprintf(stderr, "cannot become nobody with CAP_BPF: %s\n", strerror(-r));
			_exit(2);
		}
		_exit(bpf_scribble(fds[0], off) == 0 ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 1)
		fail_msg("nobody with CAP_BPF loaded and ran a program that stores through LOCAL's map descriptor "
			 "(the map now reads %#x at byte %u)", *spare, off);
	assert_int_equal(WEXITSTATUS(status), 0);
	if (bpf_scribble(fds[0], off) == 0)
		fail_msg("root loaded and ran a program that stores through LOCAL's map descriptor (the map now reads "
			 "%#x at byte %u)", *spare, off);
	assert_int_not_equal(*spare, BPF_SCRIBBLE);
	munmap(p, size);
	close(fds[0]);
	close(fds[1]);
	close(fd);
}

/* The map LOCAL hands out shows no pid: the tracker's are the initial PID
 * namespace's, which a reader in another one must not learn (replies
 * translate them). This process runs on CPU 0 as it reads. */
static void test_local_map_no_pids(void **state)
{
	int fd = harness_connect(daemon_under_test.socket), fds[2];
	const struct cpupri_geom *g;
	struct proto_msg rep;
	size_t size;
	void *p;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(harness_local(fd, RTPLACE_PROTO_VERSION, &rep, fds), 2);
	size = (size_t)rep.local_reply.map_size;
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fds[0], 0);
	assert_true(p != MAP_FAILED);
	g = &((const struct cpupri_header *)p)->geom;
	for (uint32_t cpu = 0; cpu < g->ncpus; cpu++) {
		uint32_t pid = cpupri_slot_ptr(p, g, cpu)->pid;

		if (pid)
			fail_msg("LOCAL's map shows pid %u on CPU %u", pid, cpu);
	}
	munmap(p, size);
	close(fds[0]);
	close(fds[1]);
	close(fd);
}

static int start(void **state)
{
	return harness_live_start(&daemon_under_test, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracking_ready),
		cmocka_unit_test(test_answers_follow_rt_thread),
		cmocka_unit_test(test_class_times_follow_rt_thread),
		cmocka_unit_test(test_node_local_answers),
		cmocka_unit_test(test_local_map_read_only),
		cmocka_unit_test(test_local_map_bpf_read_only),
		cmocka_unit_test(test_local_map_no_pids),
	};

	signal(SIGPIPE, SIG_IGN);
	atexit(test_kill_children);
	return cmocka_run_group_tests(tests, start, harness_live_stop);
}
