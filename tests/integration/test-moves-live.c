/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Moves and notification records through the real daemon on the live
 * machine (root): a client moves its own thread, another user is refused,
 * a subscriber receives the records through the shared ring and its
 * doorbell, and a managed RT thread queued behind a higher one on CPU 1 is
 * pushed to CPU 0, also by a daemon restarted after kill -9 that restored
 * the claim; capabilities held over a user namespace of a client's
 * own grant nothing on the host. RT threads run on CPU 1 only, or sleep;
 * the test holds the RT-test lock and kills every child at exit.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/capability.h>

#include "harness.h"
#include "ring.h"
#include "testlib.h"

static struct harness_daemon daemon_under_test;
static uint32_t next_request = 1;

static struct rtplace_move move_req(pid_t tid, const char *cpus, int prio)
{
	struct rtplace_move mv = { .tid = tid };

	if (cpus) {
		mv.flags |= RTPLACE_MOVE_F_SET_AFFINITY;
		assert_int_equal(cpuset_parse(cpus, &mv.cpus), 0);
	}
	if (prio) {
		mv.flags |= RTPLACE_MOVE_F_SET_SCHED;
		mv.policy = RTPLACE_POLICY_FIFO;
		mv.prio = (uint8_t)prio;
	}
	return mv;
}

static int do_move(int fd, const struct rtplace_move *mv, struct proto_msg *rep)
{
	struct proto_msg req;

	assert_int_equal(proto_encode_move(&req, next_request++, mv), 0);
	assert_int_equal(harness_call(fd, &req, rep), 0);
	return rep->hdr.type == RTPLACE_MSG_ERROR ? rep->hdr.status : 0;
}

static void test_move_own_thread_with_record(void **state)
{
	int fd = harness_connect(daemon_under_test.socket), tid = 0;
	struct rtplace_move mv;
	struct rtplace_record rec;
	struct proto_msg rep;
	struct sched_param sp;
	struct harness_sub sub;
	pthread_t th;
	cpu_set_t set;

	assert_true(fd >= 0);
	assert_int_equal(harness_subscribe(fd, next_request++, &sub), 0);
	tid = test_start_sleeper(&th);
	assert_true(tid > 0);

	mv = move_req(tid, "1", 10);
	assert_int_equal(do_move(fd, &mv, &rep), 0);
	assert_int_equal(rep.move_reply.tid, tid);
	assert_int_equal(rep.move_reply.policy, RTPLACE_POLICY_FIFO);
	assert_int_equal(rep.move_reply.prio, 10);
	assert_int_equal(rep.move_reply.prev_policy, 0);
	assert_int_equal(sched_getaffinity(tid, sizeof(set), &set), 0);
	assert_int_equal(CPU_COUNT(&set), 1);
	assert_true(CPU_ISSET(1, &set));
	assert_int_equal(sched_getscheduler(tid), SCHED_FIFO);
	assert_int_equal(sched_getparam(tid, &sp), 0);
	assert_int_equal(sp.sched_priority, 10);

	assert_int_equal(harness_wait_record(&sub, RTPLACE_RECORD_MOVED, tid, 5000, &rec), 0);
	assert_int_equal(rec.to_cpu, 1);
	assert_int_equal(rec.prio, 10);
	assert_true(rec.seq > 0);

	/* A vanished thread. */
	mv = move_req(999999, "0", 0);
	assert_int_equal(do_move(fd, &mv, &rep), -ESRCH);
	test_stop_sleeper(th);
	harness_unsubscribe(&sub);
	close(fd);
}

/* A client running as nobody may not move root's threads, nor set RT on
 * its own beyond its RLIMIT_RTPRIO (0). */
static void test_other_user_refused(void **state)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct rtplace_move mv = move_req(getppid(), "0", 0);
		struct proto_msg req, rep;
		int fd;

		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(10);
		fd = harness_connect(daemon_under_test.socket);
		if (fd < 0)
			_exit(11);
		proto_encode_move(&req, 1, &mv);
		if (harness_call(fd, &req, &rep) < 0 || rep.hdr.type != RTPLACE_MSG_ERROR || rep.hdr.status != -EPERM)
			_exit(12);
		mv = move_req(getpid(), NULL, 50);
		proto_encode_move(&req, 2, &mv);
		if (harness_call(fd, &req, &rep) < 0 || rep.hdr.type != RTPLACE_MSG_ERROR || rep.hdr.status != -EPERM)
			_exit(13);
		if (!strstr(rep.error.reason, "RLIMIT_RTPRIO"))
			_exit(14);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* A move as a child process makes it; 0 or the ERROR's status. */
static int child_move(int fd, uint32_t request_id, pid_t tid, const char *cpus, int prio)
{
	struct rtplace_move mv = move_req(tid, cpus, prio);
	struct proto_msg req, rep;

	if (proto_encode_move(&req, request_id, &mv) < 0 || harness_call(fd, &req, &rep) < 0)
		return -EIO;
	return rep.hdr.type == RTPLACE_MSG_ERROR ? rep.hdr.status : 0;
}

/* Sets the calling thread's effective capabilities to CAP_SYS_NICE or
 * none, keeping what is permitted. 0 or -1. */
static int set_cap_sys_nice(bool on)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -1;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		data[i].effective = 0;
	if (on)
		data[CAP_SYS_NICE / 32].effective = 1u << (CAP_SYS_NICE % 32);
	return (int)syscall(SYS_capset, &hdr, data);
}

/*
 * The daemon keeps a connection's credentials between requests, so what
 * the requester changes about itself while connected must be re-read: a
 * nobody client with CAP_SYS_NICE moves a root thread, drops the
 * capability, and may then no longer move it.
 */
static void test_requester_caps_rechecked(void **state)
{
	pid_t parent = getpid(), pid = fork();
	int st;

	if (pid == 0) {
		int fd, r;

		if (prctl(PR_SET_KEEPCAPS, 1) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0 || set_cap_sys_nice(true) < 0)
			_exit(10);
		fd = harness_connect(daemon_under_test.socket);
		if (fd < 0)
			_exit(11);
		r = child_move(fd, 1, parent, "0", 0);
		if (r != 0)
			_exit(12);
		if (set_cap_sys_nice(false) < 0)
			_exit(13);
		r = child_move(fd, 2, parent, "0", 0);
		_exit(r == -EPERM ? 0 : 14);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/*
 * A root client that becomes nobody after connecting is no longer root to
 * the daemon: its next move of a root thread is refused, though its first,
 * as root, was allowed (and its credentials kept).
 */
static void test_requester_uid_change_seen(void **state)
{
	pid_t parent = getpid(), pid = fork();
	int st;

	if (pid == 0) {
		int fd = harness_connect(daemon_under_test.socket), r;

		if (fd < 0)
			_exit(10);
		r = child_move(fd, 1, parent, "0", 0);
		if (r != 0)
			_exit(11);
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(12);
		r = child_move(fd, 2, parent, "0", 0);
		_exit(r == -ESRCH || r == -EPERM ? 0 : 13);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* Sets the soft RLIMIT_RTPRIO of the calling process (up to its hard
 * limit, which only CAP_SYS_RESOURCE may raise). 0 or -1. */
static int set_rtprio_limit(rlim_t soft)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_RTPRIO, &rl) < 0)
		return -1;
	rl.rlim_cur = soft;
	return setrlimit(RLIMIT_RTPRIO, &rl);
}

/* A sleeping thread of the calling (child) process: its tid, or 0. */
static pid_t child_sleeper(void)
{
	pthread_t th;
	pid_t tid = test_start_sleeper(&th);

	return tid > 0 ? tid : 0;
}

/* Runs child() in a forked child and asserts that it exits 0. */
static void in_child(int (*child)(void))
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(child());
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* A child requester's start: RLIMIT_RTPRIO 0, of its effective
 * capabilities CAP_SYS_NICE alone or none, a sleeping thread of its own
 * and a connection to socket. 0 or -1. */
static int child_requester(const char *socket, bool cap_sys_nice, pid_t *ret_tid, int *ret_fd)
{
	if (set_rtprio_limit(0) < 0 || set_cap_sys_nice(cap_sys_nice) < 0)
		return -1;
	*ret_tid = child_sleeper();
	*ret_fd = harness_connect(socket);
	return *ret_tid && *ret_fd >= 0 ? 0 : -1;
}

static int root_caps_child(void)
{
	pid_t tid;
	int fd;

	if (child_requester(daemon_under_test.socket, true, &tid, &fd) < 0)
		return 11;
	if (child_move(fd, 1, tid, "1", 0) != 0)
		return 12;
	if (child_move(fd, 2, tid, "1", 10) != 0)
		return 13; /* by CAP_SYS_NICE, not read for the first move */
	if (set_cap_sys_nice(false) < 0)
		return 14;
	if (child_move(fd, 3, tid, "1", 20) != -EPERM)
		return 15; /* rt20 > RLIMIT_RTPRIO 0 */
	if (set_cap_sys_nice(true) < 0 || child_move(fd, 4, tid, "1", 40) != 0)
		return 16;
	return 0;
}

/*
 * The daemon reads of a requester only what a move's decision consults
 * (auth_peer_move_creds()): root moving without a policy is judged by uid
 * alone. What it skipped must not stand in for what a later move needs:
 * a root client whose first move read no capability is allowed FIFO by
 * CAP_SYS_NICE, refused once it dropped it, allowed again once it took it
 * back.
 */
static void test_root_requester_caps_rechecked(void **state)
{
	in_child(root_caps_child);
}

static int root_rtprio_child(void)
{
	pid_t tid;
	int fd;

	if (child_requester(daemon_under_test.socket, false, &tid, &fd) < 0)
		return 11;
	if (child_move(fd, 1, tid, "1", 0) != 0 || child_move(fd, 2, tid, "1", 10) != -EPERM)
		return 12;
	if (set_rtprio_limit(30) < 0 || child_move(fd, 3, tid, "1", 25) != 0)
		return 13;
	if (set_rtprio_limit(0) < 0 || child_move(fd, 4, tid, "1", 28) != -EPERM)
		return 14;
	return 0;
}

/*
 * As above, by RLIMIT_RTPRIO: root without CAP_SYS_NICE is judged by the
 * limit as it is at each request, raised and lowered while connected.
 * Raising the soft limit to 30 needs a hard limit that high.
 */
static void test_root_requester_rtprio_rechecked(void **state)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_RTPRIO, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 30) {
		print_message("hard RLIMIT_RTPRIO %lu < 30 and no CAP_SYS_RESOURCE to raise it: skipped\n",
			      (unsigned long)rl.rlim_max);
		skip();
	}
	in_child(root_rtprio_child);
}

/* Whether the calling thread has CAP_SYS_NICE in CapEff (over its own
 * user namespace). */
static bool has_cap_sys_nice(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	return syscall(SYS_capget, &hdr, data) == 0 && (data[CAP_SYS_NICE / 32].effective >> (CAP_SYS_NICE % 32)) & 1;
}

/* When a requester of test_userns_caps_count_for_nothing() enters a user
 * namespace of its own: never (host root), before it connects, after. */
enum userns_when {
	USERNS_NEVER,
	USERNS_BEFORE_CONNECT,
	USERNS_AFTER_CONNECT,
};

/*
 * A requester's attempt on root's process target: a move to FIFO 99 on
 * CPU 1 (past the guard of system threads), an exclusive claim at rt99
 * with no end, and the record of a move root makes of target (it writes a
 * byte to ready once subscribed and waits for one on go meanwhile). Host
 * root gets all three; nobody holding every capability over its own user
 * namespace gets none: refused, a claim at normal with a bounded lease, no
 * record. 0, or which step went wrong.
 */
static int userns_requester(pid_t target, enum userns_when when, int ready, int go)
{
	struct rtplace_query q = harness_fifo_query(99, 1, RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_EXCLUSIVE);
	struct rtplace_move mv = move_req(target, "1", 99);
	bool host = when == USERNS_NEVER;
	struct rtplace_cpu_info info;
	struct rtplace_record rec;
	struct rtplace_release rel;
	struct proto_msg req, rep;
	struct harness_sub sub;
	char byte = 0;
	int fd, r;

	if (!host && (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0))
		return 10;
	if (when == USERNS_BEFORE_CONNECT && unshare(CLONE_NEWUSER) < 0)
		return 11;
	fd = harness_connect(daemon_under_test.socket);
	if (fd < 0)
		return 12;
	if (when == USERNS_AFTER_CONNECT && unshare(CLONE_NEWUSER) < 0)
		return 11;
	if (!has_cap_sys_nice())
		return 13; /* the test's premise: CapEff has it */

	mv.flags |= RTPLACE_MOVE_F_SYSTEM;
	if (proto_encode_move(&req, 1, &mv) < 0 || harness_call(fd, &req, &rep) < 0)
		return 20;
	if (host ? rep.hdr.type != RTPLACE_MSG_MOVE_REPLY : rep.hdr.status != -EPERM)
		return 21;

	if (cpuset_parse("0-1", &q.allowed) < 0 || proto_encode_query(&req, 2, &q) < 0 ||
	    harness_call(fd, &req, &rep) < 0 || rep.hdr.type != RTPLACE_MSG_QUERY_REPLY ||
	    rep.query_reply.count != 1)
		return 30;
	if (host != (rep.query_reply.lease_ms == RTPLACE_LEASE_INFINITE))
		return 31;
	/* The level the claim holds its CPU at. */
	if (harness_cpu_info(fd, rep.query_reply.list[0].cpu, &info) < 0 || info.claim_id != rep.query_reply.claim_id)
		return 32;
	if (info.claim_level != (host ? RTPLACE_LEVEL_DL : RTPLACE_LEVEL_NORMAL))
		return 33;
	/* Released now: the next requester's claim must not wait for the
	 * daemon to see this connection close. */
	rel.claim_id = rep.query_reply.claim_id;
	if (proto_encode_release(&req, 3, &rel) < 0 || harness_call(fd, &req, &rep) < 0 ||
	    rep.hdr.type != RTPLACE_MSG_RELEASE_REPLY)
		return 34;

	if (harness_subscribe(fd, 4, &sub) < 0)
		return 40;
	if (write(ready, &byte, 1) != 1 || read(go, &byte, 1) != 1)
		return 41;
	/* The record was published before go: a short wait sees it. */
	r = harness_wait_record(&sub, RTPLACE_RECORD_MOVED, target, host ? 5000 : 500, &rec);
	if (r != (host ? 0 : -ETIMEDOUT))
		return 42;
	harness_unsubscribe(&sub);
	close(fd);
	return 0;
}

/* Runs userns_requester() in a child, making root's move of target once
 * it has subscribed. Its exit status. */
static int userns_attempt(pid_t target, enum userns_when when)
{
	int ready[2], go[2], fd = harness_connect(daemon_under_test.socket), st = -1;
	struct rtplace_move mv = move_req(target, "0", 0);
	struct proto_msg rep;
	char byte = 0;
	pid_t pid;

	assert_true(fd >= 0);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	if (pid == 0)
		_exit(userns_requester(target, when, ready[1], go[0]));
	assert_true(pid > 0);
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &byte, 1) == 1) {
		mv.flags |= RTPLACE_MOVE_F_SYSTEM;
		assert_int_equal(do_move(fd, &mv, &rep), 0);
		assert_int_equal(write(go[1], &byte, 1), 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(ready[0]);
	close(go[1]);
	close(fd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * The attack: nobody runs a client under unshare -U, where CapEff
 * shows every capability, over a namespace of its own. The daemon must
 * count none of them, whether the client entered its namespace before it
 * connected or after (the namespace is read with each capability, not once
 * at connect), and judge it as the nobody it is on the host. Host root,
 * the same requester, gets everything. The target sleeps: nothing spins,
 * whatever policy it is given.
 */
static void test_userns_caps_count_for_nothing(void **state)
{
	pid_t target = fork();

	if (target == 0)
		for (;;)
			pause();
	assert_true(target > 0);
	test_track_child(target);
	assert_int_equal(userns_attempt(target, USERNS_BEFORE_CONNECT), 0);
	assert_int_equal(sched_getscheduler(target), SCHED_OTHER);
	assert_int_equal(userns_attempt(target, USERNS_AFTER_CONNECT), 0);
	assert_int_equal(sched_getscheduler(target), SCHED_OTHER);
	assert_int_equal(userns_attempt(target, USERNS_NEVER), 0);
	assert_int_equal(sched_getscheduler(target), SCHED_FIFO);
	test_kill_children();
}

/* The daemon of test_group_ceiling_after_plain_move(). */
static struct harness_daemon group_daemon;

/* Moves its own thread, then sets FIFO on it beyond its own rights, up to
 * the rt-group's ceiling and beyond; in group 1 only as a supplementary
 * group, RLIMIT_RTPRIO 0, no CAP_SYS_NICE. */
static int group_child_moves(void)
{
	pid_t tid;
	int fd;

	if (child_requester(group_daemon.socket, false, &tid, &fd) < 0)
		return 21;
	if (child_move(fd, 1, tid, "1", 0) != 0)
		return 22;
	if (child_move(fd, 2, tid, "1", 10) != 0)
		return 23; /* the rt-group's ceiling */
	return child_move(fd, 3, tid, "1", 30) == -EPERM ? 0 : 24;
}

static int group_child_root(void)
{
	gid_t groups[] = { 1 };

	return setgroups(1, groups) < 0 ? 10 : group_child_moves();
}

static int group_child_nobody(void)
{
	gid_t groups[] = { 1 };

	if (setgroups(1, groups) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
		return 10;
	return group_child_moves();
}

/*
 * A requester's supplementary groups are read when a move first needs
 * them ([moves] rt-groups and a policy beyond its own rights), even when
 * its connection's first move needed none. Root (its uid and gid match
 * the daemon's, so its RLIMIT_RTPRIO is read by prlimit and its groups
 * apart) and nobody (whose limit a daemon without CAP_SYS_RESOURCE reads
 * from /proc, with the groups) both get the ceiling of group 1, which
 * they hold only as a supplementary group.
 */
static void test_group_ceiling_after_plain_move(void **state)
{
	static const char text[] = "[daemon]\nsocket-mode = 0666\n[moves]\nrt-groups = %s\nmax-prio = 20\n";
	struct group *gr = getgrgid(1);
	char config[256];

	assert_non_null(gr);
	snprintf(config, sizeof(config), text, gr->gr_name);
	assert_int_equal(harness_start_with_config(&group_daemon, config, NULL, NULL), 0);
	in_child(group_child_root);
	in_child(group_child_nobody);
	assert_int_equal(harness_stop(&group_daemon), 0);
}

static void stop_process(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A process that sleeps as uid (0: root) with pid want, made by setting
 * the kernel's last pid just below it: the pid, or -1 when other forks on
 * the machine kept taking it. */
static pid_t spawn_with_pid(pid_t want, uid_t uid)
{
	pid_t pid = -1;
	int ready[2];
	char c;

	if (pipe(ready) < 0)
		return -1;
	for (int tries = 0; tries < 200 && pid != want; tries++) {
		char last[16];

		snprintf(last, sizeof(last), "%d", (int)want - 1);
		if (harness_write_file("/proc/sys/kernel/ns_last_pid", last) < 0)
			break;
		pid = fork();
		if (pid == 0) {
			if (getpid() != want || (uid && setresuid(uid, uid, uid) < 0))
				_exit(0);
			/* Only now is it uid's to the daemon. */
			if (write(ready[1], "r", 1) != 1)
				_exit(0);
			for (;;)
				pause();
		}
		if (pid > 0 && pid != want)
			waitpid(pid, NULL, 0);
	}
	/* Closed here first: a child that exits before writing ends the read. */
	close(ready[1]);
	if (pid == want && read(ready[0], &c, 1) != 1) {
		stop_process(pid);
		pid = -1;
	}
	close(ready[0]);
	return pid == want ? test_track_child(pid) : -1;
}

/* The client of test_recycled_tid_judged_anew(), as nobody: a move of tid
 * for every byte it reads from cmd, the result written to res. */
static int recycled_tid_client(pid_t tid, int cmd, int res)
{
	int fd;
	char c;

	if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
		return 10;
	fd = harness_connect(daemon_under_test.socket);
	if (fd < 0)
		return 11;
	for (uint32_t id = 1; read(cmd, &c, 1) == 1; id++) {
		int r = child_move(fd, id, tid, "1", 0);

		if (write(res, &r, sizeof(r)) != sizeof(r))
			return 12;
	}
	return 0;
}

/* Waits (bounded, 5 s) until process pid runs as uid: a forked child
 * changes its uid some time after fork() returns in the parent. */
static bool wait_uid(pid_t pid, uid_t uid)
{
	char path[64], line[256];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "re");
		unsigned long real = ~0ul;

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "Uid: %lu", &real) == 1)
				break;
		if (f)
			fclose(f);
		if (real == uid)
			return true;
		usleep(10000);
	}
	return false;
}

/* One move by the client of test_recycled_tid_judged_anew(): its result. */
static int recycled_tid_move(int cmd, int res)
{
	int r = -EIO;

	assert_int_equal(write(cmd, "m", 1), 1);
	assert_int_equal(read(res, &r, sizeof(r)), sizeof(r));
	return r;
}

/*
 * The daemon keeps the pidfds of threads it moved (moves.c): a tid whose
 * thread exited and that now names another thread is judged by that
 * thread. nobody moves its own process; that exits, root's process gets
 * its pid: refused; that exits, nobody's gets it: moved.
 */
static void test_recycled_tid_judged_anew(void **state)
{
	int cmd[2], res[2], st;
	pid_t tid = fork(), client, other;

	if (tid == 0) {
		if (setresuid(65534, 65534, 65534) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	assert_true(tid > 0);
	test_track_child(tid);
	/* nobody's own process only once it is nobody's (seen in a slow
	 * guest: moved while still root's, refused). */
	assert_true(wait_uid(tid, 65534));
	assert_int_equal(pipe(cmd), 0);
	assert_int_equal(pipe(res), 0);
	client = fork();
	if (client == 0) {
		close(cmd[1]);
		close(res[0]);
		_exit(recycled_tid_client(tid, cmd[0], res[1]));
	}
	assert_true(client > 0);
	test_track_child(client);
	close(cmd[0]);
	close(res[1]);
	assert_int_equal(recycled_tid_move(cmd[1], res[0]), 0);
	stop_process(tid);
	other = spawn_with_pid(tid, 0);
	if (other > 0) {
		assert_int_equal(recycled_tid_move(cmd[1], res[0]), -EPERM);
		stop_process(other);
		other = spawn_with_pid(tid, 65534);
	}
	if (other > 0) {
		assert_int_equal(recycled_tid_move(cmd[1], res[0]), 0);
		stop_process(other);
	}
	close(cmd[1]);
	assert_int_equal(waitpid(client, &st, 0), client);
	close(res[0]);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	if (other < 0) {
		print_message("pid %d was taken by other processes before the test could reuse it: skipped\n", (int)tid);
		skip();
	}
}

/*
 * The pidfds the daemon keeps are a few, whatever it moves: 30 threads,
 * each moved once and gone, leave it at most 8 descriptors more (the
 * pidfds of the last ones) than it had.
 */
static void test_kept_pidfds_bounded(void **state)
{
	int fd = harness_connect(daemon_under_test.socket), before;
	struct proto_msg rep;

	assert_true(fd >= 0);
	before = harness_fd_count(daemon_under_test.pid);
	for (int i = 0; i < 30; i++) {
		struct rtplace_move mv;
		pthread_t th;
		pid_t tid = test_start_sleeper(&th);

		assert_true(tid > 0);
		mv = move_req(tid, "1", 0);
		assert_int_equal(do_move(fd, &mv, &rep), 0);
		test_stop_sleeper(th);
	}
	assert_true(harness_fd_count(daemon_under_test.pid) <= before + 8);
	close(fd);
}

/* A rt50 thread waking every millisecond on CPU 1 (ending itself after
 * bound_s), made managed by a MANAGE claim on CPUs 0-1 sent on fd: its
 * pid. */
static pid_t managed_ticker(int fd, unsigned bound_s)
{
	struct rtplace_query q = harness_fifo_query(50, 1, RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_MANAGE);
	struct proto_msg req, rep;
	pid_t managed = test_track_child(test_spawn_rt(1, 50, TEST_RT_TICK, bound_s));

	q.owner_pid = managed;
	assert_int_equal(cpuset_parse("0-1", &q.allowed), 0);
	assert_int_equal(proto_encode_query(&req, next_request++, &q), 0);
	assert_int_equal(harness_call(fd, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	assert_int_not_equal(rep.query_reply.claim_id, 0);
	return managed;
}

/* A busy rt60 on CPU 1 queues managed behind it: the daemon pushes it to
 * CPU 0, and sub gets the record of it. */
static void assert_pushed_to_cpu0(struct harness_sub *sub, pid_t managed)
{
	struct rtplace_record rec;
	cpu_set_t set;

	test_track_child(test_spawn_rt(1, 60, TEST_RT_BUSY, 15));
	assert_int_equal(harness_wait_record(sub, RTPLACE_RECORD_MOVED, managed, 12000, &rec), 0);
	assert_int_equal(rec.from_cpu, 1);
	assert_int_equal(rec.to_cpu, 0);
	assert_int_equal(sched_getaffinity(managed, sizeof(set), &set), 0);
	assert_true(CPU_ISSET(0, &set));
	assert_false(CPU_ISSET(1, &set));
	test_kill_children();
}

static void test_managed_thread_pushed(void **state)
{
	int fd = harness_connect(daemon_under_test.socket);
	struct harness_sub sub;
	pid_t managed;

	assert_true(fd >= 0);
	assert_int_equal(harness_subscribe(fd, next_request++, &sub), 0);
	/* Bounds for a slow machine (a TCG guest after the 4,200-thread test
	 * missed 5 s): the spinners end themselves, the wait ends sooner. */
	managed = managed_ticker(fd, 15);
	assert_pushed_to_cpu0(&sub, managed);
	harness_unsubscribe(&sub);
	close(fd);
}

/*
 * A MANAGE claim restored after kill -9 of the daemon manages its owner's
 * threads again: the managed thread queued behind a busy rt60 on CPU 1 is
 * pushed to CPU 0 by the restarted daemon, which never saw the claim made.
 */
static void test_managed_thread_pushed_after_restart(void **state)
{
	static const char text[] = "[daemon]\nsocket-mode = 0666\n";
	char dir[] = "/tmp/test-moves-live.XXXXXX", socket[64];
	const char *args[] = { "--socket", socket, NULL };
	struct harness_daemon d = { .pid = 0 };
	struct harness_sub sub;
	pid_t managed;
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(socket, sizeof(socket), "%s/rtplaced.sock", dir);
	assert_int_equal(harness_start_with_config(&d, text, args, NULL), 0);
	fd = harness_connect(socket);
	assert_true(fd >= 0);
	managed = managed_ticker(fd, 20);
	close(fd);

	assert_int_equal(kill(d.pid, SIGKILL), 0);
	assert_int_equal(harness_stop(&d), 128 + SIGKILL);
	assert_int_equal(harness_start_with_config(&d, text, args, NULL), 0);
	fd = harness_connect(socket);
	assert_true(fd >= 0);
	assert_int_equal(harness_subscribe(fd, next_request++, &sub), 0);
	assert_pushed_to_cpu0(&sub, managed);
	harness_unsubscribe(&sub);
	close(fd);
	assert_int_equal(harness_stop(&d), 0);
	unlink(socket);
	snprintf(socket, sizeof(socket), "%s/rtplaced.sock.claims", dir);
	unlink(socket);
	assert_int_equal(rmdir(dir), 0);
}

/* What a user's MANAGE claim on its many-threaded process got. */
struct manage_verdict {
	int status;     /* 0, or why the child failed (its step) */
	uint32_t claim_id;
	int64_t reply_us; /* how long the daemon took to answer */
	char reason[RTPLACE_REASON_MAX];
};

static void *parked(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

struct manages_threads {
	uid_t uid;
	int nthreads;
};

static void uid_manages_threads_child(void *ctx, void *verdict)
{
	const struct manages_threads *mt = ctx;
	struct rlimit rl = { .rlim_cur = 50, .rlim_max = 50 };
	struct manage_verdict *v = verdict;
	struct rtplace_query q = harness_fifo_query(50, 1, RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_MANAGE);
	struct proto_msg req, rep;
	pthread_attr_t attr;
	struct timespec t0, t1;
	uid_t uid = mt->uid;
	int fd;

	/* Without CAP_SYS_RESOURCE (this machine kind's root lacks it) the
	 * limit stays 0 and the claim is at normal: the share of managed
	 * threads is the same either way. */
	if ((setrlimit(RLIMIT_RTPRIO, &rl) < 0 && errno != EPERM) || setgroups(0, NULL) < 0 ||
	    setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
		v->status = 1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < mt->nthreads && !v->status; i++) {
		pthread_t th;

		if (pthread_create(&th, &attr, parked, NULL) != 0)
			v->status = 2;
	}
	q.owner_pid = getpid();
	fd = v->status ? -1 : harness_connect(daemon_under_test.socket);
	if (!v->status && (fd < 0 || proto_encode_query(&req, 1, &q) < 0))
		v->status = 3;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!v->status && (harness_call(fd, &req, &rep) < 0 || rep.hdr.type != RTPLACE_MSG_QUERY_REPLY))
		v->status = 4;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	v->reply_us = (t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000;
	if (!v->status) {
		v->claim_id = rep.query_reply.claim_id;
		snprintf(v->reason, sizeof(v->reason), "%s", rep.query_reply.reason);
	}
}

/*
 * A child as uid with nthreads threads that claims a CPU for itself with
 * RTPLACE_QUERY_F_MANAGE (at rt50: RLIMIT_RTPRIO allows it) and holds
 * the claim until killed. Returns its pid once it has the reply.
 */
static pid_t uid_manages_threads(uid_t uid, int nthreads, struct manage_verdict *ret)
{
	struct manages_threads mt = { uid, nthreads };
	pid_t pid = test_fork_holding(uid_manages_threads_child, &mt, ret, sizeof(*ret));

	assert_true(pid > 0);
	return pid;
}

/*
 * One user's MANAGE claim on a process of 4,200 threads (more than
 * the tracker's 4,096-entry map) is granted with the user's share of
 * threads watched and says which key it met; root's managed thread is
 * still watched and pushed (it watched nothing: the map was full). The
 * reply's time is printed, not judged (tests assert behaviour): 5-12 ms
 * here, where it took 50-60 ms before the watch was batched.
 */
static void test_managed_threads_per_user(void **state)
{
	struct manage_verdict v;
	pid_t hog;

	hog = uid_manages_threads(60001, 4200, &v);
	print_message("uid 60001: MANAGE of 4200 threads answered in %" PRId64 " us: %s\n", v.reply_us, v.reason);
	assert_int_equal(v.status, 0);
	assert_int_not_equal(v.claim_id, 0);
	assert_string_equal(v.reason, "[limits] max-managed-threads-per-user = 1024 reached");
	/* Let the ticks take what else the user has room for (none). */
	usleep(500 * 1000);
	test_managed_thread_pushed(state);
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
	test_forget_child(hog);
}

static int start(void **state)
{
	/* Any user may connect: the refusals below come from the daemon's
	 * rules, not from the socket's mode. */
	static const char text[] = "[daemon]\nsocket-mode = 0666\n";

	return harness_live_start(&daemon_under_test, text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_move_own_thread_with_record),
		cmocka_unit_test(test_other_user_refused),
		cmocka_unit_test(test_requester_caps_rechecked),
		cmocka_unit_test(test_requester_uid_change_seen),
		cmocka_unit_test(test_root_requester_caps_rechecked),
		cmocka_unit_test(test_root_requester_rtprio_rechecked),
		cmocka_unit_test(test_group_ceiling_after_plain_move),
		cmocka_unit_test(test_recycled_tid_judged_anew),
		cmocka_unit_test(test_kept_pidfds_bounded),
		cmocka_unit_test(test_managed_thread_pushed),
		cmocka_unit_test(test_managed_thread_pushed_after_restart),
		cmocka_unit_test(test_managed_threads_per_user),
		cmocka_unit_test(test_userns_caps_count_for_nothing),
	};

	signal(SIGPIPE, SIG_IGN);
	atexit(test_kill_children);
	/* One test by name (a glob), to rerun what failed. */
	if (getenv("RTPLACE_TEST_FILTER"))
		cmocka_set_test_filter(getenv("RTPLACE_TEST_FILTER"));
	return cmocka_run_group_tests(tests, start, harness_live_stop);
}
