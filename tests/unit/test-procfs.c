/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the daemon's one reader of a proc tree (daemon/procfs.c),
 * on fixture trees and on the test's own /proc entry. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "procfs.h"
#include "testlib.h"

static void write_file(const char *rel, const char *text)
{
	assert_int_equal(test_write_fixture(test_fixture_root, rel, text), 0);
}

/* A stat line of 52 fields: comm with spaces and parentheses, the given
 * flags (9), prio field (18), start time (22), processor (39), rt_priority
 * (40) and policy (41). */
static void stat_line(char *buf, size_t len, int pid, const char *comm, char state, unsigned flags, int prio_field,
		      unsigned long long start, int cpu, int rtprio, int policy)
{
	snprintf(buf, len,
		 "%d (%s) %c 1 %d %d 0 -1 %u 100 0 0 0 5 6 0 0 %d 0 1 0 %llu 2000 300 "
		 "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 %d %d %d 0 0 0 0 0 0 0 0 0 0 0\n",
		 pid, comm, state, pid, pid, flags, prio_field, start, cpu, rtprio, policy);
}

static void test_parse_stat(void **state)
{
	struct procfs_stat st;
	char line[1024];

	/* comm "a) (b c" ends in neither ')' nor ' ': the last ')' counts. */
	stat_line(line, sizeof(line), 42, "a) (b c", 'R', 0x400040u, -51, 123456789012ull, 7, 50, 1);
	assert_int_equal(procfs_parse_stat(line, &st), 0);
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.flags, 0x400040u);
	assert_int_equal(st.prio, 49);
	assert_int_equal(st.start_time, 123456789012ull);
	assert_int_equal(st.cpu, 7);
	assert_int_equal(st.rt_priority, 50);
	assert_int_equal(st.policy, 1);
	/* The process's own figures the metrics export: utime (14), stime
	 * (15), vsize (23), rss (24). */
	assert_int_equal(st.utime, 5);
	assert_int_equal(st.stime, 6);
	assert_int_equal(st.vsize, 2000);
	assert_int_equal(st.rss, 300);

	stat_line(line, sizeof(line), 2, "kthreadd", 'S', PROCFS_PF_KTHREAD | 0x40u, 20, 1, 0, 0, 0);
	assert_int_equal(procfs_parse_stat(line, &st), 0);
	assert_true(st.flags & PROCFS_PF_KTHREAD);
	assert_int_equal(st.prio, 120);
}

static void test_parse_stat_rejects(void **state)
{
	struct procfs_stat st = { .state = 'x' };
	char line[1024];

	assert_int_equal(procfs_parse_stat("", &st), -EBADMSG);
	assert_int_equal(procfs_parse_stat("12 (no close paren R 1 2", &st), -EBADMSG);
	/* cut before the policy field */
	stat_line(line, sizeof(line), 42, "x", 'R', 0, 20, 1, 0, 0, 0);
	*strstr(line, " 17 ") = '\0';
	assert_int_equal(procfs_parse_stat(line, &st), -EBADMSG);
	/* a field that is not a number */
	stat_line(line, sizeof(line), 42, "x", 'R', 0, 20, 1, 0, 0, 0);
	line[strlen("42 (x) R 1 ")] = 'z';
	assert_int_equal(procfs_parse_stat(line, &st), -EBADMSG);
	/* rt_priority out of range */
	stat_line(line, sizeof(line), 42, "x", 'R', 0, 20, 1, 0, 100, 1);
	assert_int_equal(procfs_parse_stat(line, &st), -EBADMSG);
	/* *ret untouched on failure */
	assert_int_equal(st.state, 'x');
}

static void test_status_fields(void **state)
{
	static const char status[] = "Name:\tworker\nTgid:\t100\nPid:\t101\nPPid:\t7\nTracerPid:\t0\n"
				     "Uid:\t1000\t1001\t1001\t1001\nCapEff:\t0000000000800000\nGroups:\t4 27\n";
	uint64_t v;

	/* Keys match whole names at the start of a line only. */
	assert_int_equal(procfs_status_u64(status, "Pid", 10, &v), 0);
	assert_int_equal(v, 101);
	assert_int_equal(procfs_status_u64(status, "PPid", 10, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(procfs_status_u64(status, "Uid", 10, &v), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(procfs_status_u64(status, "CapEff", 16, &v), 0);
	assert_int_equal(v, 0x800000);
	assert_int_equal(procfs_status_u64(status, "Gid", 10, &v), -ENOENT);
	assert_int_equal(procfs_status_u64(status, "Name", 10, &v), -EBADMSG);
	assert_string_equal(procfs_status_field(status, "Groups"), "\t4 27\n");
	assert_null(procfs_status_field(status, "Id"));
}

static void test_read_fixture(void **state)
{
	struct procfs_stat st;
	char line[1024], buf[64];

	stat_line(line, sizeof(line), 300, "main", 'S', 0, 20, 5, 0, 0, 0);
	write_file("300/stat", line);
	stat_line(line, sizeof(line), 301, "worker (rt)", 'R', 0, -81, 5, 1, 80, 1);
	write_file("300/task/301/stat", line);
	write_file("300/comm", "main\n");

	assert_int_equal(procfs_read_stat(test_fixture_root, 300, 0, &st), 0);
	assert_int_equal(st.state, 'S');
	assert_int_equal(procfs_read_stat(test_fixture_root, 300, 301, &st), 0);
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.cpu, 1);
	assert_int_equal(st.rt_priority, 80);
	assert_int_equal(st.prio, 19);

	assert_int_equal(procfs_read(test_fixture_root, 300, "comm", buf, sizeof(buf)), 5);
	assert_string_equal(buf, "main\n");
	/* exactly full is fine; one byte more is -EFBIG, never a silent cut */
	assert_int_equal(procfs_read(test_fixture_root, 300, "comm", buf, 6), 5);
	assert_int_equal(procfs_read(test_fixture_root, 300, "comm", buf, 5), -EFBIG);
	/* a process or thread that is not there is gone: -ESRCH */
	assert_int_equal(procfs_read(test_fixture_root, 999, "comm", buf, sizeof(buf)), -ESRCH);
	assert_int_equal(procfs_read_stat(test_fixture_root, 300, 302, &st), -ESRCH);
}

static void test_parse_nspid(void **state)
{
	struct procfs_nspid ns;
	char text[1024];
	int len;

	assert_int_equal(procfs_parse_nspid("Pid:\t9\nNSpid:\t4242\t17\t1\nNSpgid:\t4242\t17\t1\n", &ns), 0);
	assert_int_equal(ns.n, 3);
	assert_int_equal(ns.pids[0], 4242);
	assert_int_equal(ns.pids[1], 17);
	assert_int_equal(ns.pids[2], 1);
	assert_int_equal(procfs_parse_nspid("NSpid:\t5\n", &ns), 0);
	assert_int_equal(ns.n, 1);
	assert_int_equal(ns.pids[0], 5);
	assert_int_equal(procfs_parse_nspid("Pid:\t5\n", &ns), -ENOENT);
	assert_int_equal(procfs_parse_nspid("NSpid:\n", &ns), -EBADMSG);
	assert_int_equal(procfs_parse_nspid("NSpid:\t5\tx\n", &ns), -EBADMSG);
	assert_int_equal(procfs_parse_nspid("NSpid:\t5\t0\n", &ns), -EBADMSG);
	/* 33 levels fit (the initial namespace and 32 below it); 34 do not */
	len = snprintf(text, sizeof(text), "NSpid:");
	for (int i = 0; i < PROCFS_NSPID_MAX; i++)
		len += snprintf(text + len, sizeof(text) - (size_t)len, "\t%d", 100 + i);
	assert_int_equal(procfs_parse_nspid(text, &ns), 0);
	assert_int_equal(ns.n, PROCFS_NSPID_MAX);
	assert_int_equal(ns.pids[PROCFS_NSPID_MAX - 1], 100 + PROCFS_NSPID_MAX - 1);
	snprintf(text + len, sizeof(text) - (size_t)len, "\t1\n");
	assert_int_equal(procfs_parse_nspid(text, &ns), -EBADMSG);
}

/* fdinfo texts as Linux 6.1's pidfd_show_fdinfo() and others write them. */
static void test_parse_pidfd_fdinfo(void **state)
{
	struct procfs_nspid ns;

	/* a process two namespaces below the reader's */
	assert_int_equal(procfs_parse_pidfd_fdinfo("pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n"
						   "Pid:\t4242\nNSpid:\t4242\t17\t1\n",
						   &ns),
			 0);
	assert_int_equal(ns.n, 3);
	assert_int_equal(ns.pids[0], 4242);
	assert_int_equal(ns.pids[2], 1);
	/* kernels 5.3..5.9 print no NSpid: the reader's pid alone */
	assert_int_equal(procfs_parse_pidfd_fdinfo("pos:\t0\nPid:\t77\n", &ns), 0);
	assert_int_equal(ns.n, 1);
	assert_int_equal(ns.pids[0], 77);
	/* exited, or living in an ancestor namespace the reader cannot name */
	assert_int_equal(procfs_parse_pidfd_fdinfo("pos:\t0\nPid:\t-1\nNSpid:\t-1\n", &ns), -ESRCH);
	assert_int_equal(procfs_parse_pidfd_fdinfo("pos:\t0\nPid:\t0\nNSpid:\t0\n", &ns), -EXDEV);
	/* not a pidfd: an eventfd, a file */
	assert_int_equal(procfs_parse_pidfd_fdinfo("pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t9\n"
						   "eventfd-count:\t0\neventfd-id: 3\n",
						   &ns),
			 -EBADF);
	assert_int_equal(procfs_parse_pidfd_fdinfo("pos:\t12\nflags:\t0100000\nmnt_id:\t29\nino:\t131\n", &ns),
			 -EBADF);
	/* "TracerPid:" or "SqThread:" are no "Pid:" */
	assert_int_equal(procfs_parse_pidfd_fdinfo("TracerPid:\t5\nSqThread:\t6\n", &ns), -EBADF);
	/* malformed: never a pid */
	assert_int_equal(procfs_parse_pidfd_fdinfo("Pid:\tx\n", &ns), -EBADMSG);
	assert_int_equal(procfs_parse_pidfd_fdinfo("Pid:\t5x\n", &ns), -EBADMSG);
	assert_int_equal(procfs_parse_pidfd_fdinfo("Pid:\t-2\n", &ns), -EBADMSG);
	assert_int_equal(procfs_parse_pidfd_fdinfo("Pid:\t5\nNSpid:\t6\t1\n", &ns), -EBADMSG);
}

static void test_read_ids_fixture(void **state)
{
	struct procfs_nspid ns;
	struct procfs_ns a, b, c;
	char rel[64];
	pid_t tid;

	/* fdinfo of the reader's own descriptors: <root>/<getpid()>/fdinfo/FD */
	snprintf(rel, sizeof(rel), "%d/fdinfo/7", (int)getpid());
	write_file(rel, "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nPid:\t500\nNSpid:\t500\t1\n");
	snprintf(rel, sizeof(rel), "%d/fdinfo/8", (int)getpid());
	write_file(rel, "pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1058\neventfd-count:\t0\n");
	assert_int_equal(procfs_read_pidfd(test_fixture_root, 7, &ns), 0);
	assert_int_equal(ns.n, 2);
	assert_int_equal(ns.pids[0], 500);
	assert_int_equal(ns.pids[1], 1);
	assert_int_equal(procfs_read_pidfd(test_fixture_root, 8, &ns), -EBADF);
	assert_int_equal(procfs_read_pidfd(test_fixture_root, 9, &ns), -ESRCH);

	/* a containerised process 500 (pid 1 inside) with threads 2 and 3 */
	write_file("500/status", "Name:\tinit\nNSpid:\t500\t1\n");
	write_file("500/task/500/status", "Name:\tinit\nNSpid:\t500\t1\n");
	write_file("500/task/501/status", "Name:\tworker\nNSpid:\t501\t2\n");
	write_file("500/task/502/status", "Name:\tworker\nNSpid:\t502\t3\n");
	assert_int_equal(procfs_read_nspid(test_fixture_root, 500, 0, &ns), 0);
	assert_int_equal(ns.n, 2);
	assert_int_equal(procfs_read_nspid(test_fixture_root, 500, 502, &ns), 0);
	assert_int_equal(ns.pids[1], 3);
	assert_int_equal(procfs_read_nspid(test_fixture_root, 500, 503, &ns), -ESRCH);
	assert_int_equal(procfs_find_thread_nspid(test_fixture_root, 500, 1, 3, &tid), 0);
	assert_int_equal(tid, 502);
	assert_int_equal(procfs_find_thread_nspid(test_fixture_root, 500, 0, 501, &tid), 0);
	assert_int_equal(tid, 501);
	/* the daemon's 502 is nobody's 502 inside */
	assert_int_equal(procfs_find_thread_nspid(test_fixture_root, 500, 1, 502, &tid), -ESRCH);
	assert_int_equal(procfs_find_thread_nspid(test_fixture_root, 500, 2, 1, &tid), -ESRCH);
	assert_int_equal(procfs_find_thread_nspid(test_fixture_root, 599, 0, 599, &tid), -ESRCH);

	/* namespaces by the identity of what ns/pid leads to */
	write_file("ns-a", "");
	write_file("ns-b", "");
	write_file("600/stat", "");
	write_file("601/stat", "");
	write_file("602/stat", "");
	for (int pid = 600; pid <= 602; pid++) {
		char path[PATH_MAX + 32], target[PATH_MAX + 32];

		snprintf(path, sizeof(path), "%s/%d/ns", test_fixture_root, pid);
		assert_int_equal(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/%d/ns/pid", test_fixture_root, pid);
		snprintf(target, sizeof(target), "%s/%s", test_fixture_root, pid == 602 ? "ns-b" : "ns-a");
		assert_int_equal(symlink(target, path), 0);
	}
	assert_int_equal(procfs_pidns(test_fixture_root, 600, &a), 0);
	assert_int_equal(procfs_pidns(test_fixture_root, 601, &b), 0);
	assert_int_equal(procfs_pidns(test_fixture_root, 602, &c), 0);
	assert_true(a.dev == b.dev && a.ino == b.ino);
	assert_false(a.dev == c.dev && a.ino == c.ino);
	assert_int_equal(procfs_pidns(test_fixture_root, 603, &a), -ESRCH);
}

static void test_read_ids_live(void **state)
{
	struct procfs_nspid ns, self;
	struct procfs_ns a, b;
	int pipefd[2], fd = (int)syscall(SYS_pidfd_open, getpid(), 0);

	if (fd < 0)
		skip();
	assert_int_equal(procfs_read_nspid(PROCFS_ROOT, getpid(), 0, &self), 0);
	assert_int_equal(self.pids[0], getpid());
	assert_int_equal(procfs_read_pidfd(PROCFS_ROOT, fd, &ns), 0);
	assert_int_equal(ns.n, self.n);
	assert_int_equal(ns.pids[0], getpid());
	close(fd);
	/* descriptors that are no pidfd */
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(procfs_read_pidfd(PROCFS_ROOT, pipefd[0], &ns), -EBADF);
	close(pipefd[0]);
	close(pipefd[1]);
	assert_int_equal(procfs_pidns(PROCFS_ROOT, getpid(), &a), 0);
	assert_int_equal(procfs_pidns(PROCFS_ROOT, getpid(), &b), 0);
	assert_true(a.dev == b.dev && a.ino == b.ino);
}

static bool has_id(const struct procfs_ids *l, pid_t id)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->ids[i] == id)
			return true;
	return false;
}

/* Processes and threads are the numeric entries; anything else is not. */
static void test_list_fixture(void **state)
{
	struct procfs_ids l = { 0 };

	write_file("300/comm", "main\n");
	write_file("300/task/300/comm", "main\n");
	write_file("300/task/301/comm", "worker\n");
	write_file("301x/comm", "not a pid\n");
	write_file("self/comm", "not a pid\n");
	write_file("7/comm", "init\n");
	assert_int_equal(procfs_list(test_fixture_root, 0, &l), 0);
	assert_int_equal(l.n, 2);
	assert_true(has_id(&l, 300) && has_id(&l, 7));
	assert_int_equal(procfs_list(test_fixture_root, 300, &l), 0);
	assert_int_equal(l.n, 2);
	assert_true(has_id(&l, 300) && has_id(&l, 301));
	/* a process that is not there is gone: -ESRCH */
	assert_int_equal(procfs_list(test_fixture_root, 999, &l), -ESRCH);
	procfs_ids_free(&l);
	assert_null(l.ids);
}

/* The lowest pid with a comm, whole (newline cut, no prefix match). */
static void test_find_comm_fixture(void **state)
{
	pid_t pid = 0;

	(void)state;
	write_file("300/comm", "irqbalance\n");
	write_file("12/comm", "irqbalance-ui\n");
	write_file("40/comm", "irqbalance\n");
	write_file("7/comm", "init\n");
	assert_int_equal(procfs_find_comm(test_fixture_root, "irqbalance", &pid), 0);
	assert_int_equal(pid, 40);
	assert_int_equal(procfs_find_comm(test_fixture_root, "irqbal", &pid), -ESRCH);
	assert_int_equal(pid, 40);
}

/* RT throttling as the kernel prints it; missing and garbage refused. */
static void test_read_rt_throttle(void **state)
{
	struct procfs_rt_throttle t = { 7, 7 };
	int64_t v;

	assert_int_equal(procfs_read_rt_throttle(test_fixture_root, &t), -ENOENT);
	write_file("sys/kernel/sched_rt_runtime_us", "950000\n");
	assert_int_equal(procfs_read_rt_throttle(test_fixture_root, &t), -ENOENT);
	write_file("sys/kernel/sched_rt_period_us", "1000000\n");
	assert_int_equal(procfs_read_rt_throttle(test_fixture_root, &t), 0);
	assert_int_equal(t.runtime_us, 950000);
	assert_int_equal(t.period_us, 1000000);
	/* Throttling off, as tuned's realtime profile sets it. */
	write_file("sys/kernel/sched_rt_runtime_us", "-1\n");
	assert_int_equal(procfs_read_rt_throttle(test_fixture_root, &t), 0);
	assert_int_equal(t.runtime_us, -1);
	write_file("sys/kernel/sched_rt_runtime_us", "lots\n");
	assert_int_equal(procfs_read_rt_throttle(test_fixture_root, &t), -EBADMSG);
	write_file("sys/kernel/sched_rt_runtime_us", "2000000\n");
	assert_int_equal(procfs_read_rt_throttle(test_fixture_root, &t), -EBADMSG);
	write_file("sys/kernel/sched_rt_runtime_us", "5\n6\n");
	assert_int_equal(procfs_read_rt_throttle(test_fixture_root, &t), -EBADMSG);
	assert_int_equal(t.runtime_us, -1);
	assert_int_equal(procfs_parse_sysctl("", &v), -EBADMSG);
	assert_int_equal(procfs_parse_sysctl("99999999999999999999", &v), -EBADMSG);
}

static void test_read_live(void **state)
{
	struct procfs_stat st;
	char buf[8192];
	uint64_t pid;

	assert_int_equal(procfs_read_stat(PROCFS_ROOT, getpid(), 0, &st), 0);
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.ppid, getppid());
	assert_int_equal(st.cpu, (uint32_t)sched_getcpu());
	assert_int_equal(st.policy, sched_getscheduler(0));
	assert_true(st.start_time > 0);
	assert_false(st.flags & PROCFS_PF_KTHREAD);
	assert_true(procfs_read(PROCFS_ROOT, getpid(), "status", buf, sizeof(buf)) > 0);
	assert_int_equal(procfs_status_u64(buf, "Pid", 10, &pid), 0);
	assert_int_equal(pid, (uint64_t)getpid());
	/* kthreadd, when this /proc shows it (not in a PID namespace) */
	if (procfs_read_stat(PROCFS_ROOT, 2, 0, &st) == 0 && st.ppid == 0)
		assert_true(st.flags & PROCFS_PF_KTHREAD);
}

/*
 * The namespace above a task's, on the live tree: a process in a PID
 * namespace made below the test's finds the test's one level up, and
 * the test's own namespace has no parent it may name. Needs root (a new
 * PID namespace).
 */
static void test_pidns_up_live(void **state)
{
	struct procfs_ns mine, up, own, below;
	int to_child[2], from_child[2];
	pid_t child, inner = 0;
	int status;

	if (geteuid() != 0)
		skip();
	assert_int_equal(procfs_pidns(PROCFS_ROOT, getpid(), &mine), 0);
	assert_int_equal(procfs_pidns_up(PROCFS_ROOT, getpid(), 0, &own), 0);
	assert_true(own.dev == mine.dev && own.ino == mine.ino);
	assert_int_equal(procfs_pidns_up(PROCFS_ROOT, getpid(), 1, &up), -EPERM);
	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(from_child), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t p;
		char c;

		close(from_child[0]);
		close(to_child[1]);
		if (unshare(CLONE_NEWPID) < 0)
			_exit(2);
		p = fork();
		if (p == 0) {
			/* pid 1 of the new namespace: waits for the test */
			(void)!read(to_child[0], &c, 1);
			_exit(0);
		}
		(void)!write(from_child[1], &p, sizeof(p));
		waitpid(p, NULL, 0);
		_exit(p > 0 ? 0 : 3);
	}
	close(from_child[1]);
	close(to_child[0]);
	assert_int_equal(read(from_child[0], &inner, sizeof(inner)), sizeof(inner));
	assert_true(inner > 0);
	assert_int_equal(procfs_pidns_up(PROCFS_ROOT, inner, 0, &below), 0);
	assert_false(below.dev == mine.dev && below.ino == mine.ino);
	assert_int_equal(procfs_pidns_up(PROCFS_ROOT, inner, 1, &up), 0);
	assert_true(up.dev == mine.dev && up.ino == mine.ino);
	assert_int_equal(procfs_pidns_up(PROCFS_ROOT, inner, 2, &up), -EPERM);
	close(to_child[1]);
	close(from_child[0]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test(test_parse_stat_rejects),
		cmocka_unit_test(test_status_fields),
		cmocka_unit_test_setup_teardown(test_read_fixture, test_fixture_setup, test_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_list_fixture, test_fixture_setup, test_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_find_comm_fixture, test_fixture_setup, test_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_read_rt_throttle, test_fixture_setup, test_fixture_teardown),
		cmocka_unit_test(test_read_live),
		cmocka_unit_test(test_parse_nspid),
		cmocka_unit_test(test_parse_pidfd_fdinfo),
		cmocka_unit_test_setup_teardown(test_read_ids_fixture, test_fixture_setup, test_fixture_teardown),
		cmocka_unit_test(test_read_ids_live),
		cmocka_unit_test(test_pidns_up_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
