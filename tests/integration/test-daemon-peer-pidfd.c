/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How rtplaced judges the process at the other end of a connection (root,
 * simulated 480-CPU machine, so no BPF). The kernel hands the daemon a
 * pidfd of the peer at accept (SO_PEERPIDFD, Linux 6.5); without it the
 * daemon judges the peer by the pid it connected with, read from /proc at
 * each request, and says so once in its log. SO_PEERPIDFD is probed here
 * by the call itself, apart from the daemon: the rights test runs on
 * either path (a peer's rights follow it between requests, and a peer
 * that has exited lends its rights to nobody who inherited its socket),
 * and test_proc_fallback_without_peer_pidfd checks that the log names the
 * fallback exactly on a kernel that lacks the option.
 *
 * The peer is a child turned nobody that keeps CAP_SYS_NICE in its
 * permitted set and raises or drops it in its effective set between
 * requests, so its rights change while the connection stays.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include "testlib.h"

#define NOBODY 65534
#define TEST_SO_PEERPIDFD 77
#define TEST_CAP_SYS_NICE 23
#define FALLBACK_NOTICE "The kernel gives no SO_PEERPIDFD (Linux 6.5)"

static bool have_peer_pidfd;
static char topo480[4096];
static char tmpdir[64], sockpath[128], logpath[128];
static struct harness_daemon daemon_under_test;
static pid_t children[2];
static uint32_t next_request = 1;

/* SO_PEERPIDFD on a socket pair: a pidfd of this process, or ENOPROTOOPT
 * on a kernel without the option. */
static void probe_kernel(void)
{
	int sv[2], pidfd = -1;
	socklen_t len = sizeof(pidfd);

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	if (getsockopt(sv[0], SOL_SOCKET, TEST_SO_PEERPIDFD, &pidfd, &len) == 0) {
		have_peer_pidfd = true;
		assert_true(pidfd >= 0);
		close(pidfd);
	} else {
		assert_int_equal(errno, ENOPROTOOPT);
	}
	close(sv[0]);
	close(sv[1]);
	printf("# SO_PEERPIDFD: %s\n", have_peer_pidfd ? "yes" : "no (the daemon judges peers by pid)");
}

/* Kills what the test left (also after a failed assertion), reaping only
 * its own children: a reaped pid may name another process by now. */
static void cleanup(void)
{
	for (unsigned i = 0; i < sizeof(children) / sizeof(children[0]); i++) {
		if (children[i] > 0 && waitpid(children[i], NULL, WNOHANG) == 0) {
			kill(children[i], SIGKILL);
			waitpid(children[i], NULL, 0);
		}
		children[i] = 0;
	}
	if (daemon_under_test.pid > 0)
		harness_stop(&daemon_under_test);
}

/* The daemon, its log (standard error) in logpath, a socket nobody may use. */
static int setup(void **state)
{
	const char *args[] = { "--topology", topo480, "--socket", sockpath, NULL };
	int saved = dup(2), fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int r;

	assert_true(saved >= 0 && fd >= 0);
	assert_int_equal(dup2(fd, 2), 2);
	close(fd);
	r = harness_start_with_config(&daemon_under_test, "[daemon]\nsocket-mode = 0666\nlog-level = info\n", args,
				      NULL);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(r, 0);
	return 0;
}

static int teardown(void **state)
{
	cleanup();
	return 0;
}

static unsigned count_in_log(const char *needle)
{
	static char buf[65536];
	FILE *f = fopen(logpath, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	unsigned count = 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	for (const char *p = strstr(buf, needle); p; p = strstr(p + 1, needle))
		count++;
	return count;
}

/*
 * Children of the test must not use cmocka's asserts (a failure would run
 * the remaining tests in the child): they exit with a status that says
 * which step failed.
 */

/* CAP_SYS_NICE in the effective set (in the permitted set throughout). */
static void child_set_nice(bool effective, int fail_status)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

	data[0].permitted = 1u << TEST_CAP_SYS_NICE;
	data[0].effective = effective ? data[0].permitted : 0;
	if (syscall(SYS_capset, &hdr, data) < 0)
		_exit(fail_status);
}

/* Nobody, RLIMIT_RTPRIO 0, with CAP_SYS_NICE permitted and effective. */
static void child_become_nobody(void)
{
	struct rlimit rl = { 0, 0 };

	if (setrlimit(RLIMIT_RTPRIO, &rl) < 0 || prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setgroups(0, NULL) < 0 ||
	    setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0)
		_exit(80);
	child_set_nice(true, 81);
}

/* A claim of one CPU at rt80 for the connection on fd: the level the
 * daemon granted it (from the CPUS entry of its CPU) and the reply's
 * reason (why that CPU, and "at normal: ..." when demoted). */
static unsigned child_claim_rt80(int fd, char *note, size_t len, int fail_status)
{
	struct rtplace_query q = harness_fifo_query(80, 1, RTPLACE_QUERY_F_CLAIM);
	struct proto_msg req, rep;
	struct rtplace_cpus c = { 0 };

	if (proto_encode_query(&req, next_request++, &q) < 0 || harness_call(fd, &req, &rep) < 0 ||
	    rep.hdr.type != RTPLACE_MSG_QUERY_REPLY || rep.query_reply.count != 1 || !rep.query_reply.claim_id)
		_exit(fail_status);
	snprintf(note, len, "%s", rep.query_reply.reason);
	c.first = rep.query_reply.list[0].cpu;
	if (proto_encode_cpus(&req, next_request++, &c) < 0 || harness_call(fd, &req, &rep) < 0 ||
	    rep.hdr.type != RTPLACE_MSG_CPUS_REPLY)
		_exit(fail_status + 1);
	return rep.cpus_reply.cpus[0].claim_level;
}

/* The first peer: connects as nobody with CAP_SYS_NICE, claims with it,
 * without it and with it again on one connection, then leaves the
 * connection to a child of its own (its pid on out) and exits. */
static void run_peer(int out, int go)
{
	const unsigned rt80 = LEVEL_RT1 + 79;
	char note[RTPLACE_REASON_MAX];
	pid_t heir;
	int fd;

	child_become_nobody();
	fd = harness_connect(sockpath);
	if (fd < 0)
		_exit(82);
	if (child_claim_rt80(fd, note, sizeof(note), 10) != rt80 || strstr(note, "at normal"))
		_exit(12);
	child_set_nice(false, 83);
	if (child_claim_rt80(fd, note, sizeof(note), 20) != LEVEL_NORMAL || !strstr(note, "no CAP_SYS_NICE"))
		_exit(22);
	child_set_nice(true, 84);
	if (child_claim_rt80(fd, note, sizeof(note), 30) != rt80 || strstr(note, "at normal"))
		_exit(32);

	heir = fork();
	if (heir < 0)
		_exit(85);
	if (heir == 0) {
		char byte;

		/* Until the test has reaped the peer: its pid names nothing. */
		if (read(go, &byte, 1) != 1)
			_exit(86);
		if (child_claim_rt80(fd, note, sizeof(note), 40) != LEVEL_NORMAL || !strstr(note, "no CAP_SYS_NICE"))
			_exit(42);
		_exit(0);
	}
	if (write(out, &heir, sizeof(heir)) != sizeof(heir))
		_exit(87);
	_exit(0);
}

static void expect_exit_ok(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/*
 * Rights are the connecting process's, as they stand at each request: a
 * peer (nobody, RLIMIT_RTPRIO 0) gets rt80 while CAP_SYS_NICE is in its
 * effective set, normal with a note once it drops it, rt80 once it raises
 * it again, all on one connection. Once it has exited, its child, with
 * the same capability and the inherited socket, is judged by the uid
 * alone (normal): the rights were the peer's, not the socket's.
 */
static void test_peer_rights_at_each_request(void **state)
{
	int out[2], go[2];
	pid_t peer, heir;

	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	peer = fork();
	assert_true(peer >= 0);
	if (peer == 0) {
		close(out[0]);
		close(go[1]);
		run_peer(out[1], go[0]);
	}
	children[0] = peer;
	close(out[1]);
	close(go[0]);
	/* Nothing read: the peer failed, and its status says where. */
	if (read(out[0], &heir, sizeof(heir)) == sizeof(heir))
		children[1] = heir;
	close(out[0]);
	expect_exit_ok(peer);
	assert_true(children[1] > 0);
	children[0] = 0;
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	/* This process is the child subreaper: the orphan is its child. */
	expect_exit_ok(heir);
	children[1] = 0;
}

/*
 * The daemon logs the fallback once, at the first connection without a
 * peer pidfd, and only on a kernel without SO_PEERPIDFD: after two
 * connections, once or never. A status request on the second one is
 * answered either way.
 */
static void test_proc_fallback_without_peer_pidfd(void **state)
{
	struct rtplace_status_reply st;
	int a = harness_connect(sockpath), b = harness_connect(sockpath);

	assert_true(a >= 0 && b >= 0);
	assert_int_equal(harness_status(b, &st), 0);
	assert_int_equal(harness_status(a, &st), 0);
	close(a);
	close(b);
	if (have_peer_pidfd)
		printf("# SO_PEERPIDFD present: the fallback is checked on kernels before 6.5 (tests/vm)\n");
	assert_int_equal(count_in_log(FALLBACK_NOTICE), have_peer_pidfd ? 0 : 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_peer_rights_at_each_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_fallback_without_peer_pidfd, setup, teardown),
	};

	test_require_root();
	signal(SIGPIPE, SIG_IGN);
	if (!test_topology_path("2s-240c-480t", topo480, sizeof(topo480)))
		test_skip("no 480-CPU topology");
	probe_kernel();
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	assert_int_equal(test_tmpdir("test-peer-pidfd", 0755, tmpdir, sizeof(tmpdir)), 0);
	snprintf(sockpath, sizeof(sockpath), "%s/rtplaced.sock", tmpdir);
	snprintf(logpath, sizeof(logpath), "%s/rtplaced.log", tmpdir);
	if (getenv("RTPLACE_TEST_FILTER"))
		cmocka_set_test_filter(getenv("RTPLACE_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
