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
	/* a thread's own entry, which /proc has but does not list */
	process(201, "201\t2", "ns-container");
	process(300, "300\t8\t1", "ns-nested");
	/* a sibling container: as deep as the first, another namespace */
	write_file("ns-sibling", "");
	process(400, "400\t1", "ns-sibling");
	process(410, "410\t2", "ns-sibling");
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

static void assert_ns_is(const struct pidmap_view *v, const char *name)
{
	char path[PATH_MAX + 32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	assert_int_equal(stat(path, &st), 0);
	assert_true(v->ns.dev == st.st_dev && v->ns.ino == st.st_ino);
}

/* A client's view is read from its own process, checked alive through
 * its pidfd afterwards; a client of the daemon's namespace costs no read. */
static void test_view_of(void **state)
{
	struct pidmap_view v;

	pidmap_view_of(root, &host_peer, 999, -1, &v);
	assert_true(v.same_pidns);
	pidmap_view_of(root, &container_peer, 200, FD_CONTAINER_INIT, &v);
	assert_false(v.same_pidns);
	assert_int_equal(v.level, 1);
	assert_ns_is(&v, "ns-container");
	pidmap_view_of(root, &container_peer, 210, -1, &v);
	assert_int_equal(v.level, 1);
	assert_ns_is(&v, "ns-container");
	/* exited since it connected: its number may be another's now */
	pidmap_view_of(root, &container_peer, 200, FD_EXITED, &v);
	assert_int_equal(v.level, PIDMAP_LEVEL_UNKNOWN);
	pidmap_view_of(root, &container_peer, 999, -1, &v);
	assert_int_equal(v.level, PIDMAP_LEVEL_UNKNOWN);
	pidmap_view_of(root, &(struct pidmap_peer){ .level = PIDMAP_LEVEL_UNKNOWN }, 200, -1, &v);
	assert_int_equal(v.level, PIDMAP_LEVEL_UNKNOWN);
}

static void test_nspid_at(void **state)
{
	const struct procfs_nspid host = { .n = 1, .pids = { 100 } };
	const struct procfs_nspid nested = { .n = 3, .pids = { 300, 8, 1 } };

	assert_int_equal(pidmap_nspid_at(&host, 0), 100);
	assert_int_equal(pidmap_nspid_at(&host, 1), 0);
	assert_int_equal(pidmap_nspid_at(&nested, 0), 300);
	assert_int_equal(pidmap_nspid_at(&nested, 1), 8);
	assert_int_equal(pidmap_nspid_at(&nested, 2), 1);
	assert_int_equal(pidmap_nspid_at(&nested, 3), 0);
	assert_int_equal(pidmap_nspid_at(&nested, PIDMAP_LEVEL_UNKNOWN), 0);
}

static pid_t shown(const struct pidmap_view *v, pid_t pid, int want_r)
{
	pid_t ret = -1;

	assert_int_equal(pidmap_show(v, pid, &ret), want_r);
	return ret;
}

static void test_show(void **state)
{
	struct pidmap_view host, container, nested, unknown;

	pidmap_view_of(root, &host_peer, 100, -1, &host);
	pidmap_view_of(root, &container_peer, 200, FD_CONTAINER_INIT, &container);
	pidmap_view_of(root, &(struct pidmap_peer){ .level = 2 }, 300, FD_NESTED, &nested);
	pidmap_view_of(root, &(struct pidmap_peer){ .level = PIDMAP_LEVEL_UNKNOWN }, 200, -1, &unknown);
	/* the daemon's namespace sees the daemon's pids, unread */
	assert_int_equal(shown(&host, 200, 0), 200);
	assert_int_equal(shown(&host, 999, 0), 999);
	/* the container sees its own tasks by its numbers, threads too */
	assert_int_equal(shown(&container, 200, 0), 1);
	assert_int_equal(shown(&container, 201, 0), 2);
	assert_int_equal(shown(&container, 210, 0), 5);
	/* a host task has no number there */
	assert_int_equal(shown(&container, 100, 0), 0);
	assert_int_equal(shown(&container, getpid(), 0), 0);
	/* a sibling's tasks have numbers at the container's depth, which
	 * name the container's own tasks: never shown */
	assert_int_equal(shown(&container, 400, 0), 0);
	assert_int_equal(shown(&container, 410, 0), 0);
	/* one namespace further down: a fixture's link has no parent to ask */
	assert_int_equal(shown(&container, 300, -ENOTTY), 0);
	assert_int_equal(shown(&container, 999, -ESRCH), 0);
	assert_int_equal(shown(&container, 0, 0), 0);
	/* the nested namespace sees only its own */
	assert_int_equal(shown(&nested, 300, 0), 1);
	assert_int_equal(shown(&nested, 200, 0), 0);
	assert_int_equal(shown(&nested, 100, 0), 0);
	/* a client whose namespace is unknown sees nothing */
	assert_int_equal(shown(&unknown, 200, 0), 0);
	assert_int_equal(shown(&unknown, 100, 0), 0);
}

/* A view that knows 200 as 1, 201 as 2 and 9 as 123456789, and nothing else. */
static pid_t fake_show(pid_t pid, void *ctx)
{
	(*(int *)ctx)++;
	return pid == 200 ? 1 : pid == 201 ? 2 : pid == 9 ? 123456789 : 0;
}

static void text_shown(const char *in, const char *want)
{
	struct rtplace_reason text;
	int calls = 0;

	reason_set(&text, "%s", in);
	pidmap_text_show(&text, fake_show, &calls);
	assert_string_equal(text.text, want);
}

static void test_text_show(void **state)
{
	char in[RTPLACE_REASON_MAX], want[RTPLACE_REASON_MAX];

	text_shown("thread 201 of pid 200: Operation not permitted; none moved",
		   "thread 2 of pid 1: Operation not permitted; none moved");
	text_shown("prio 50 > RLIMIT_RTPRIO 0 (pid 100); needs CAP_SYS_NICE",
		   "prio 50 > RLIMIT_RTPRIO 0 (pid 0); needs CAP_SYS_NICE");
	text_shown("pid 200", "pid 1");
	/* numbers after other words, or inside words, are no pids */
	text_shown("prio 200 > max-prio 201 on CPU 200, rt200, uid 201",
		   "prio 200 > max-prio 201 on CPU 200, rt200, uid 201");
	text_shown("tid 200, ppid 200, subthread 201", "tid 200, ppid 200, subthread 201");
	text_shown("thread x200 thread", "thread x200 thread");
	/* out of range numbers are shown as no pid */
	text_shown("pid 99999999999 left", "pid 0 left");
	/* a text that grows past a reason is cut to it, NUL included */
	snprintf(in, sizeof(in), "%*s pid 9 left", RTPLACE_REASON_MAX - 12, "");
	snprintf(want, sizeof(want), "%*s pid 123456", RTPLACE_REASON_MAX - 12, "");
	text_shown(in, want);
}

static void test_reason_show(void **state)
{
	struct pidmap_view host, container;
	struct rtplace_reason text;

	pidmap_view_of(root, &host_peer, 100, -1, &host);
	pidmap_view_of(root, &container_peer, 200, FD_CONTAINER_INIT, &container);
	reason_set(&text, "thread 201 of pid 200, host pid 100");
	pidmap_reason_show(&host, &text, 0, 0);
	assert_string_equal(text.text, "thread 201 of pid 200, host pid 100");
	pidmap_reason_show(&container, &text, 0, 0);
	assert_string_equal(text.text, "thread 2 of pid 1, host pid 0");
	/* the thread a request named is shown as named, even once gone */
	reason_set(&text, "thread 999 exited during the move; none moved");
	pidmap_reason_show(&container, &text, 999, 7);
	assert_string_equal(text.text, "thread 7 exited during the move; none moved");
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
		cmocka_unit_test_setup_teardown(test_view_of, setup, teardown),
		cmocka_unit_test(test_nspid_at),
		cmocka_unit_test_setup_teardown(test_show, setup, teardown),
		cmocka_unit_test(test_text_show),
		cmocka_unit_test_setup_teardown(test_reason_show, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
