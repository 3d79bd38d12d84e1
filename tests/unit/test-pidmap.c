/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests for the pids a client names (daemon/pidmap.c), on fixture
 * proc trees: a host, a container one namespace below it (its processes'
 * NSpid lines carry two numbers) and pidfds as their fdinfo shows them.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "pidmap.h"
#include "testlib.h"

/* Pidfds of the fixture: their fdinfo files under <root>/<getpid()>/fdinfo. */
enum {
	FD_CONTAINER_INIT = 7, /* process 200, pid 1 in the container */
	FD_EVENTFD = 8,
	FD_EXITED = 9,
	FD_ANCESTOR = 10,      /* a process the daemon's namespace cannot name */
	FD_NESTED = 11,        /* process 300, 8 in the container, 1 in a namespace below it */
	FD_HOST = 12,          /* host process 100 */
};

static char root[PATH_MAX];

static void write_file(const char *rel, const char *text)
{
	assert_int_equal(test_write_fixture(root, rel, text), 0);
}

/* Process pid: its status (NSpid nspid) and ns/pid leading to ns. */
static void process(int pid, const char *nspid, const char *ns)
{
	char rel[64], text[128], path[PATH_MAX + 64], target[PATH_MAX + 64];

	snprintf(rel, sizeof(rel), "%d/status", pid);
	snprintf(text, sizeof(text), "Name:\tp%d\nTgid:\t%d\nNSpid:\t%s\n", pid, pid, nspid);
	write_file(rel, text);
	snprintf(path, sizeof(path), "%s/%d/ns", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/ns/pid", root, pid);
	snprintf(target, sizeof(target), "%s/%s", root, ns);
	assert_int_equal(symlink(target, path), 0);
}

static void thread(int pid, int tid, const char *nspid)
{
	char rel[64], text[128];

	snprintf(rel, sizeof(rel), "%d/task/%d/status", pid, tid);
	snprintf(text, sizeof(text), "Name:\tt%d\nNSpid:\t%s\n", tid, nspid);
	write_file(rel, text);
}

static void fdinfo(int fd, const char *text)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/fdinfo/%d", (int)getpid(), fd);
	write_file(rel, text);
}

static int setup(void **state)
{
	char self[32];

	snprintf(root, sizeof(root), "/tmp/rtplace-test-pidmap.XXXXXX");
	assert_non_null(mkdtemp(root));
	assert_int_equal(chmod(root, 0755), 0);
	write_file("ns-host", "");
	write_file("ns-container", "");
	write_file("ns-nested", "");
	snprintf(self, sizeof(self), "%d", (int)getpid());
	process(getpid(), self, "ns-host");
	process(100, "100", "ns-host");
	process(200, "200\t1", "ns-container");
	thread(200, 200, "200\t1");
	thread(200, 201, "201\t2");
	process(210, "210\t5", "ns-container");
	process(300, "300\t8\t1", "ns-nested");
	thread(300, 300, "300\t8\t1");
	fdinfo(FD_CONTAINER_INIT, "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nPid:\t200\nNSpid:\t200\t1\n");
	fdinfo(FD_EVENTFD, "pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1058\neventfd-count:\t0\n");
	fdinfo(FD_EXITED, "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nPid:\t-1\nNSpid:\t-1\n");
	fdinfo(FD_ANCESTOR, "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nPid:\t0\nNSpid:\t0\n");
	fdinfo(FD_NESTED, "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nPid:\t300\nNSpid:\t300\t8\t1\n");
	fdinfo(FD_HOST, "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nPid:\t100\nNSpid:\t100\n");
	return 0;
}

static int teardown(void **state)
{
	return test_fixture_remove(root);
}

static const struct pidmap_peer host_peer = { .same_pidns = true };
static const struct pidmap_peer container_peer = { .same_pidns = false, .level = 1 };

static void test_same_pidns(void **state)
{
	assert_true(pidmap_same_pidns(root, 100));
	assert_true(pidmap_same_pidns(root, getpid()));
	assert_false(pidmap_same_pidns(root, 200));
	assert_false(pidmap_same_pidns(root, 300));
	/* gone, or not visible to the daemon (SO_PEERCRED's 0) */
	assert_false(pidmap_same_pidns(root, 999));
	assert_false(pidmap_same_pidns(root, 0));
}

/*
 * Without ptrace access to the peer (a daemon with fewer capabilities), the
 * namespace links cannot be read: the NSpid lines decide. Run as nobody,
 * for whom the fixture's ns folders are closed.
 */
static void test_same_pidns_without_ptrace(void **state)
{
	pid_t child;
	int status;

	if (geteuid() != 0)
		skip();
	for (int pid = 100; pid <= 300; pid += 100) {
		char path[PATH_MAX + 32];

		snprintf(path, sizeof(path), "%s/%d/ns", root, pid);
		assert_int_equal(chmod(path, 0), 0);
	}
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char path[PATH_MAX + 32], self[32];
		struct stat st;

		/* the daemon is this process now */
		snprintf(self, sizeof(self), "%d", (int)getpid());
		process(getpid(), self, "ns-host");
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(2);
		snprintf(path, sizeof(path), "%s/100/ns/pid", root);
		/* the fixture closes what the kernel closes */
		if (stat(path, &st) == 0 || errno != EACCES)
			_exit(3);
		_exit(pidmap_same_pidns(root, 100) && !pidmap_same_pidns(root, 200) && !pidmap_same_pidns(root, 300)
			      ? 0
			      : 1);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_bare_pids(void **state)
{
	struct rtplace_reason reason;
	pid_t pid = 0;

	/* the daemon's namespace: a bare pid is what it says (older clients) */
	assert_int_equal(pidmap_process(root, &host_peer, 100, -1, &pid, &reason), 0);
	assert_int_equal(pid, 100);
	assert_int_equal(pidmap_thread(root, &host_peer, 201, -1, &pid, &reason), 0);
	assert_int_equal(pid, 201);
	/* another namespace: never read as the daemon's, whatever the number */
	pid = 0;
	assert_int_equal(pidmap_process(root, &container_peer, 100, -1, &pid, &reason), -EXDEV);
	assert_int_equal(pid, 0);
	assert_non_null(strstr(reason.text, "another PID namespace"));
	assert_non_null(strstr(reason.text, "librtplace >= " PACKAGE_VERSION));
	assert_int_equal(pidmap_process(root, &container_peer, 1, -1, &pid, &reason), -EXDEV);
	assert_int_equal(pidmap_thread(root, &container_peer, 2, -1, &pid, &reason), -EXDEV);
	assert_int_equal(pid, 0);
}

static void test_process_pidfds(void **state)
{
	struct rtplace_reason reason;
	pid_t pid = 0;

	/* the container's pid 1 is the daemon's 200 */
	assert_int_equal(pidmap_process(root, &container_peer, 1, FD_CONTAINER_INIT, &pid, &reason), 0);
	assert_int_equal(pid, 200);
	/* a process two namespaces down, named as the container sees it */
	assert_int_equal(pidmap_process(root, &container_peer, 8, FD_NESTED, &pid, &reason), 0);
	assert_int_equal(pid, 300);
	/* a host client's number is the daemon's: the pidfd it sends along (as
	 * librtplace does) is not read, whatever it is */
	assert_int_equal(pidmap_process(root, &host_peer, 200, FD_CONTAINER_INIT, &pid, &reason), 0);
	assert_int_equal(pid, 200);
	assert_int_equal(pidmap_process(root, &host_peer, 100, FD_EVENTFD, &pid, &reason), 0);
	assert_int_equal(pid, 100);
	/* the number must be the pidfd's, in the sender's namespace */
	pid = 0;
	assert_int_equal(pidmap_process(root, &container_peer, 200, FD_CONTAINER_INIT, &pid, &reason), -EINVAL);
	assert_string_equal(reason.text, "pid 200 is not the process of the pidfd sent");
	assert_int_equal(pidmap_process(root, &container_peer, 100, FD_HOST, &pid, &reason), -EINVAL);
	assert_int_equal(pid, 0);
	/* descriptors that name no process the daemon may use */
	assert_int_equal(pidmap_process(root, &container_peer, 1, FD_EVENTFD, &pid, &reason), -EBADF);
	assert_string_equal(reason.text, "the descriptor sent is not a pidfd");
	assert_int_equal(pidmap_process(root, &container_peer, 1, FD_EXITED, &pid, &reason), -ESRCH);
	assert_int_equal(pidmap_process(root, &container_peer, 1, FD_ANCESTOR, &pid, &reason), -EXDEV);
	assert_int_equal(pidmap_process(root, &container_peer, 1, 99, &pid, &reason), -ESRCH);
	/* a peer whose namespace could not be read when it connected */
	assert_int_equal(pidmap_process(root, &(struct pidmap_peer){ .level = PIDMAP_LEVEL_UNKNOWN }, 1,
					FD_CONTAINER_INIT, &pid, &reason),
			 -ESRCH);
	assert_string_equal(reason.text, "cannot read the requester's PID namespace");
	assert_int_equal(pid, 0);
}

/*
 * The depth of a peer's namespace, read once when it connects (a
 * pidmap_peer carries no pid to read again at a request): from its own
 * pidfd when the kernel gave one, so a number that another process took
 * cannot answer, else from its pid.
 */
static void test_level_read_at_connect(void **state)
{
	assert_int_equal(pidmap_level(root, 100, -1), 0);
	assert_int_equal(pidmap_level(root, 210, -1), 1);
	assert_int_equal(pidmap_level(root, 300, -1), 2);
	assert_int_equal(pidmap_level(root, 999, -1), PIDMAP_LEVEL_UNKNOWN);
	assert_int_equal(pidmap_level(root, 0, -1), PIDMAP_LEVEL_UNKNOWN);
	/* the peer's own pidfd decides, not the number (100 is a host process) */
	assert_int_equal(pidmap_level(root, 100, FD_CONTAINER_INIT), 1);
	assert_int_equal(pidmap_level(root, 100, FD_NESTED), 2);
	assert_int_equal(pidmap_level(root, 100, FD_HOST), 0);
	assert_int_equal(pidmap_level(root, 100, FD_EXITED), PIDMAP_LEVEL_UNKNOWN);
	assert_int_equal(pidmap_level(root, 100, FD_EVENTFD), PIDMAP_LEVEL_UNKNOWN);
}

static void test_thread_pidfds(void **state)
{
	struct rtplace_reason reason;
	pid_t tid = 0;

	/* the pidfd names the thread itself, or its process */
	assert_int_equal(pidmap_thread(root, &container_peer, 1, FD_CONTAINER_INIT, &tid, &reason), 0);
	assert_int_equal(tid, 200);
	assert_int_equal(pidmap_thread(root, &container_peer, 2, FD_CONTAINER_INIT, &tid, &reason), 0);
	assert_int_equal(tid, 201);
	assert_int_equal(pidmap_thread(root, &host_peer, 201, FD_CONTAINER_INIT, &tid, &reason), 0);
	assert_int_equal(tid, 201);
	/* a thread of no process of that pidfd */
	tid = 0;
	assert_int_equal(pidmap_thread(root, &container_peer, 5, FD_CONTAINER_INIT, &tid, &reason), -ESRCH);
	assert_string_equal(reason.text, "thread 5 is not a thread of the pidfd's process");
	assert_int_equal(pidmap_thread(root, &container_peer, 201, FD_CONTAINER_INIT, &tid, &reason), -ESRCH);
	/* a host process's pidfd has no number in the container's namespace */
	assert_int_equal(pidmap_thread(root, &container_peer, 100, FD_HOST, &tid, &reason), -EINVAL);
	assert_int_equal(pidmap_thread(root, &container_peer, 1, FD_EVENTFD, &tid, &reason), -EBADF);
	assert_int_equal(tid, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_pidns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_pidns_without_ptrace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_read_at_connect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bare_pids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process_pidfds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_pidfds, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
