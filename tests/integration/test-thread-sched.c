/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integration tests for thread_sched_apply() on the real kernel (root): moves of a
 * sleeping thread, read back with sched_getaffinity/sched_getscheduler; a
 * failing second step (priority out of range; SCHED_FIFO as an unprivileged
 * uid in a forked child) rolls the affinity back; a vanished thread is
 * -ESRCH. Every RT thread here sleeps on a pipe, so nothing can starve, and
 * an alarm in the (normal-priority) main thread bounds the whole run.
 *
 * The daemon's system-call readers need a pidfd of a thread (PIDFD_THREAD,
 * Linux 6.9) and PIDFD_GET_INFO (Linux 6.13); without either it reads /proc.
 * Both are probed here, by the call itself, apart from the code under test:
 * the test_proc_fallback_* tests check that the readers say -EOPNOTSUPP
 * where a feature is missing (what sends the daemon to /proc) and that
 * /proc then gives the same answers, and the live readers' tests check the
 * live path where the kernel has it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "auth.h"
#include "thread-sched.h"
#include "testlib.h"

/* PIDFD_GET_INFO with its first, 64-byte version of struct pidfd_info. */
struct test_pidfd_info {
	uint64_t mask;
	uint64_t rest[7];
};
#define TEST_PIDFD_GET_INFO _IOWR(0xFF, 11, struct test_pidfd_info)

static bool have_thread_pidfd, have_pidfd_info;

static void probe_kernel(void)
{
	struct test_pidfd_info info = { .mask = 1 };
	int fd = (int)syscall(SYS_pidfd_open, getpid(), O_EXCL);

	have_thread_pidfd = fd >= 0;
	if (fd >= 0)
		close(fd);
	fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	assert_true(fd >= 0);
	have_pidfd_info = ioctl(fd, TEST_PIDFD_GET_INFO, &info) == 0;
	close(fd);
	printf("# thread pidfds: %s, PIDFD_GET_INFO: %s\n", have_thread_pidfd ? "yes" : "no (reads /proc)",
	       have_pidfd_info ? "yes" : "no (reads /proc)");
}

struct sleeper {
	pthread_t thread;
	pthread_barrier_t started;
	int pipe[2];
	pid_t tid;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	char c;

	s->tid = gettid();
	pthread_barrier_wait(&s->started);
	/* Sleeps until the pipe closes, whatever policy it is given. */
	while (read(s->pipe[0], &c, 1) > 0)
		;
	return NULL;
}

static int sleeper_start(struct sleeper *s)
{
	if (pipe(s->pipe) < 0 || pthread_barrier_init(&s->started, NULL, 2) != 0 ||
	    pthread_create(&s->thread, NULL, sleeper_main, s) != 0)
		return -1;
	pthread_barrier_wait(&s->started);
	pthread_barrier_destroy(&s->started);
	return 0;
}

/*
 * pthread_join() returns when the kernel clears the thread's tid word,
 * which is before the thread leaves the pid table: until then its tid
 * still answers sched_getattr() and its pidfd. Tests that expect -ESRCH
 * wait (bounded: the alarm) until tgkill() no longer finds it.
 */
static void sleeper_stop(struct sleeper *s)
{
	close(s->pipe[1]);
	pthread_join(s->thread, NULL);
	close(s->pipe[0]);
	while (syscall(SYS_tgkill, getpid(), s->tid, 0) == 0)
		usleep(1000);
}

static struct rtplace_cpumask kernel_affinity(pid_t tid)
{
	struct rtplace_cpumask s;
	cpu_set_t set;

	cpuset_zero(&s);
	assert_int_equal(sched_getaffinity(tid, sizeof(set), &set), 0);
	for (unsigned cpu = 0; cpu < CPU_SETSIZE && cpu < RTPLACE_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpuset_set(&s, cpu);
	return s;
}

/* The highest CPU this process may use: a target unlike the default set
 * whenever there are two CPUs or more. */
static unsigned last_allowed_cpu(void)
{
	struct rtplace_cpumask s = kernel_affinity(0);
	unsigned last = 0;

	for (unsigned cpu = 0; cpu < RTPLACE_MAX_CPUS; cpu++)
		if (cpuset_test(&s, cpu))
			last = cpu;
	return last;
}

static void test_move_own_thread(void **state)
{
	struct sleeper s;
	struct thread_sched_result res;
	struct rtplace_cpumask orig, target;
	struct sched_param sp;
	unsigned cpu = last_allowed_cpu();

	assert_int_equal(sleeper_start(&s), 0);
	orig = kernel_affinity(s.tid);
	cpuset_zero(&target);
	cpuset_set(&target, cpu);

	assert_int_equal(thread_sched_apply(s.tid, &target, SCHED_FIFO, 10, &res), 0);
	assert_true(res.set_affinity);
	assert_true(res.set_sched);
	assert_true(cpuset_equal(&res.prev.cpus, &orig));
	assert_int_equal(res.prev.policy, SCHED_OTHER);
	assert_int_equal(res.prev.prio, 0);
	assert_true(cpuset_equal(&res.now.cpus, &target));
	assert_int_equal(res.now.policy, SCHED_FIFO);
	assert_int_equal(res.now.prio, 10);

	/* What the kernel says, not what thread_sched_apply says. */
	struct rtplace_cpumask now = kernel_affinity(s.tid);
	assert_true(cpuset_equal(&now, &target));
	assert_int_equal(sched_getscheduler(s.tid), SCHED_FIFO);
	assert_int_equal(sched_getparam(s.tid, &sp), 0);
	assert_int_equal(sp.sched_priority, 10);

	/* Affinity only, then policy only. */
	assert_int_equal(thread_sched_apply(s.tid, &orig, THREAD_SCHED_KEEP_POLICY, 0, &res), 0);
	assert_true(res.set_affinity);
	assert_false(res.set_sched);
	assert_int_equal(res.now.policy, SCHED_FIFO);
	now = kernel_affinity(s.tid);
	assert_true(cpuset_equal(&now, &orig));
	assert_int_equal(thread_sched_apply(s.tid, NULL, SCHED_RR, 5, &res), 0);
	assert_false(res.set_affinity);
	assert_int_equal(sched_getscheduler(s.tid), SCHED_RR);
	assert_int_equal(res.prev.policy, SCHED_FIFO);
	assert_int_equal(res.prev.prio, 10);

	sp.sched_priority = 0;
	assert_int_equal(sched_setscheduler(s.tid, SCHED_OTHER, &sp), 0);
	sleeper_stop(&s);
}

static void test_reset_on_fork_kept(void **state)
{
	struct sched_param sp = { 0 };
	struct thread_sched_result res;
	struct sleeper s;

	assert_int_equal(sleeper_start(&s), 0);
	assert_int_equal(sched_setscheduler(s.tid, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp), 0);
	assert_int_equal(thread_sched_apply(s.tid, NULL, SCHED_FIFO, 3, &res), 0);
	assert_int_equal(sched_getscheduler(s.tid), SCHED_FIFO | SCHED_RESET_ON_FORK);
	assert_int_equal(res.now.policy, SCHED_FIFO);
	assert_int_equal(sched_setscheduler(s.tid, SCHED_OTHER, &sp), 0);
	sleeper_stop(&s);
}

/*
 * The daemon's path: the policy auth_target_read_live() read to authorise
 * a move is what thread_sched_apply_known() takes as the state before it,
 * reset-on-fork flag included (not read again, so it must come from that
 * read), and the affinity before is still read from the kernel.
 */
static void test_apply_known_from_live_read(void **state)
{
	struct sched_param sp = { .sched_priority = 4 };
	struct thread_sched_result res;
	struct thread_sched_policy known;
	struct auth_target t;
	struct rtplace_cpumask orig, target;
	struct sleeper s;
	int pidfd;

	assert_int_equal(sleeper_start(&s), 0);
	orig = kernel_affinity(s.tid);
	cpuset_zero(&target);
	cpuset_set(&target, last_allowed_cpu());
	assert_int_equal(sched_setscheduler(s.tid, SCHED_RR | SCHED_RESET_ON_FORK, &sp), 0);
	if (have_thread_pidfd && have_pidfd_info) {
		pidfd = auth_target_pidfd(s.tid);
		assert_true(pidfd >= 0);
		assert_int_equal(auth_target_read_live(pidfd, s.tid, false, &t), 0);
		close(pidfd);
	} else {
		/* What the live read takes from the thread, by its tid alone. */
		assert_int_equal(thread_sched_getattr(s.tid, &t.policy, &t.prio, &t.reset_on_fork), 0);
	}
	assert_int_equal(t.reset_on_fork, SCHED_RESET_ON_FORK);
	known = (struct thread_sched_policy){ t.policy, t.prio, t.reset_on_fork };
	assert_int_equal(thread_sched_apply_known(s.tid, &known, &target, SCHED_FIFO, 6, &res), 0);
	assert_int_equal(sched_getscheduler(s.tid), SCHED_FIFO | SCHED_RESET_ON_FORK);
	assert_int_equal(res.prev.policy, SCHED_RR);
	assert_int_equal(res.prev.prio, 4);
	assert_true(cpuset_equal(&res.prev.cpus, &orig));
	assert_true(cpuset_equal(&res.now.cpus, &target));
	assert_int_equal(res.now.policy, SCHED_FIFO);
	assert_int_equal(res.now.prio, 6);
	/* Undone from what it reported: RR 4 on the CPUs it had. */
	assert_int_equal(thread_sched_undo(s.tid, &res), 0);
	assert_int_equal(sched_getscheduler(s.tid), SCHED_RR | SCHED_RESET_ON_FORK);
	target = kernel_affinity(s.tid);
	assert_true(cpuset_equal(&target, &orig));
	sp.sched_priority = 0;
	assert_int_equal(sched_setscheduler(s.tid, SCHED_OTHER, &sp), 0);
	sleeper_stop(&s);
}

/* The kernel refuses the second step (priority 100): affinity returns. */
static void test_rollback_bad_prio(void **state)
{
	struct sleeper s;
	struct thread_sched_result res;
	struct rtplace_cpumask orig, target, now;

	assert_int_equal(sleeper_start(&s), 0);
	orig = kernel_affinity(s.tid);
	cpuset_zero(&target);
	cpuset_set(&target, last_allowed_cpu());
	assert_int_equal(thread_sched_apply(s.tid, &target, SCHED_FIFO, 100, &res), -EINVAL);
	now = kernel_affinity(s.tid);
	assert_true(cpuset_equal(&now, &orig));
	assert_int_equal(sched_getscheduler(s.tid), SCHED_OTHER);
	sleeper_stop(&s);
}

/* In a child that dropped to uid/gid 65534 with RLIMIT_RTPRIO 0: moving its
 * own thread's affinity works, SCHED_FIFO is refused by the kernel after
 * the affinity was set, and the affinity is rolled back; a root thread of
 * the parent cannot be touched at all. Exit status: 0, or the failed check. */
static int unprivileged_child(pid_t root_tid)
{
	struct rlimit rl = { 0, 0 };
	struct thread_sched_result res;
	struct rtplace_cpumask orig, target, now;
	struct sleeper s;

	alarm(30);
	if (setrlimit(RLIMIT_RTPRIO, &rl) < 0 || setresgid(65534, 65534, 65534) < 0 ||
	    setresuid(65534, 65534, 65534) < 0)
		return 10;
	if (sleeper_start(&s) < 0)
		return 11;
	orig = kernel_affinity(s.tid);
	cpuset_zero(&target);
	cpuset_set(&target, last_allowed_cpu());

	if (thread_sched_apply(s.tid, &target, THREAD_SCHED_KEEP_POLICY, 0, &res) != 0)
		return 12;
	now = kernel_affinity(s.tid);
	if (!cpuset_equal(&now, &target))
		return 13;
	if (thread_sched_apply(s.tid, &orig, THREAD_SCHED_KEEP_POLICY, 0, &res) != 0)
		return 14;

	if (thread_sched_apply(s.tid, &target, SCHED_FIFO, 50, &res) != -EPERM)
		return 15;
	now = kernel_affinity(s.tid);
	if (!cpuset_equal(&now, &orig))
		return 16;
	if (sched_getscheduler(s.tid) != SCHED_OTHER)
		return 17;

	if (thread_sched_apply(root_tid, &target, THREAD_SCHED_KEEP_POLICY, 0, &res) != -EPERM)
		return 18;
	sleeper_stop(&s);
	return 0;
}

static void test_rollback_unprivileged(void **state)
{
	struct sleeper root_thread;
	struct rtplace_cpumask orig, now;
	int status;
	pid_t pid;

	assert_int_equal(sleeper_start(&root_thread), 0);
	orig = kernel_affinity(root_thread.tid);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(unprivileged_child(root_thread.tid));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	now = kernel_affinity(root_thread.tid);
	assert_true(cpuset_equal(&now, &orig));
	sleeper_stop(&root_thread);
}

static void test_vanished_and_invalid(void **state)
{
	struct sleeper s;
	struct thread_sched_result res;
	struct thread_sched_state st;
	struct rtplace_cpumask any, empty;

	assert_int_equal(sleeper_start(&s), 0);
	sleeper_stop(&s);
	any = kernel_affinity(0);
	cpuset_zero(&empty);
	assert_int_equal(thread_sched_apply(s.tid, &any, SCHED_FIFO, 1, &res), -ESRCH);
	assert_int_equal(thread_sched_read(s.tid, &st), -ESRCH);

	assert_int_equal(thread_sched_apply(gettid(), NULL, THREAD_SCHED_KEEP_POLICY, 0, &res), -EINVAL);
	assert_int_equal(thread_sched_apply(gettid(), &empty, THREAD_SCHED_KEEP_POLICY, 0, &res), -EINVAL);
	assert_int_equal(thread_sched_apply(gettid(), &any, SCHED_OTHER, 0, &res), -EINVAL);
	assert_int_equal(thread_sched_apply(0, &any, THREAD_SCHED_KEEP_POLICY, 0, &res), -EINVAL);
	assert_int_equal(thread_sched_read(gettid(), &st), 0);
	assert_int_equal(st.policy, SCHED_OTHER);
}

/*
 * The daemon's system-call readers (auth_target_read_live(), and
 * auth_peer_creds() after its first read) see what /proc shows: owner,
 * policy, priority, RT limit, CAP_SYS_NICE, for an RT thread and for this
 * process, on the first request of a connection and on a later one.
 */
static void test_live_readers_agree_with_proc(void **state)
{
	struct auth_target live, proc;
	struct auth_creds from_proc;
	const struct auth_creds *creds;
	struct auth_peer ap = { 0 };
	struct thread_sched_result res;
	struct rtplace_cpumask target;
	struct sleeper s;
	int pidfd;

	if (!have_thread_pidfd || !have_pidfd_info) {
		printf("# no live readers on this kernel: test_proc_fallback_* check its path\n");
		return;
	}
	assert_int_equal(sleeper_start(&s), 0);
	cpuset_zero(&target);
	cpuset_set(&target, last_allowed_cpu());
	assert_int_equal(thread_sched_apply(s.tid, &target, SCHED_FIFO, 7, &res), 0);
	pidfd = auth_target_pidfd(s.tid);
	assert_true(pidfd >= 0);
	assert_int_equal(auth_target_read_live(pidfd, s.tid, true, &live), 0);
	assert_int_equal(auth_target_read("/proc", s.tid, &proc), 0);
	assert_int_equal(live.tid, proc.tid);
	assert_int_equal(live.uid, proc.uid);
	assert_int_equal(live.euid, proc.euid);
	assert_int_equal(live.tgid, getpid());
	assert_int_equal(live.tgid, proc.tgid);
	assert_int_equal(live.policy, SCHED_FIFO);
	assert_int_equal(live.policy, proc.policy);
	assert_int_equal(live.prio, 7);
	assert_int_equal(live.prio, proc.prio);
	assert_true(live.rtprio_limit == proc.rtprio_limit);
	/* Not asked for: never consulted, so no limit. */
	assert_int_equal(auth_target_read_live(pidfd, s.tid, false, &live), 0);
	assert_true(live.rtprio_limit == AUTH_RLIM_INFINITY);
	sleeper_stop(&s);
	/* Its pidfd says so once it has exited, and no new one opens. */
	assert_int_equal(auth_target_read_live(pidfd, s.tid, true, &live), -ESRCH);
	close(pidfd);
	assert_int_equal(auth_target_pidfd(s.tid), -ESRCH);

	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	assert_true(pidfd >= 0);
	assert_int_equal(auth_creds_read("/proc", getpid(), geteuid(), getegid(), &from_proc), 0);
	for (int request = 0; request < 2; request++) {
		assert_int_equal(auth_peer_creds(&ap, "/proc", pidfd, getpid(), geteuid(), getegid(), &creds), 0);
		assert_int_equal(creds->uid, from_proc.uid);
		assert_int_equal(auth_cap_sys_nice(creds), auth_cap_sys_nice(&from_proc));
		assert_true(creds->rtprio_limit == from_proc.rtprio_limit);
		assert_int_equal(creds->ngroups, from_proc.ngroups);
	}
	assert_true(ap.cached);
	/* A uid it did not connect with: not the peer. */
	assert_int_equal(auth_peer_creds(&ap, "/proc", pidfd, getpid(), geteuid() + 1, getegid(), &creds), -ESRCH);
	close(pidfd);
}

/*
 * auth_peer_move_creds() reads what the move's decision consults, as
 * /proc shows it, and leaves the rest granting nothing: this process as
 * root (no rt-groups), on a new connection and a later request.
 */
static void test_move_creds_read_what_is_consulted(void **state)
{
	const struct auth_policy policy = { .allow = AUTH_ALLOW_OWNER, .max_prio = 99 };
	const struct auth_creds *creds;
	struct auth_creds from_proc;
	struct auth_peer ap = { 0 };
	int pidfd;

	if (!have_pidfd_info) {
		printf("# no PIDFD_GET_INFO: test_proc_fallback_without_pidfd_info checks this kernel's path\n");
		return;
	}
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	assert_true(pidfd >= 0);
	assert_int_equal(geteuid(), 0);
	assert_int_equal(auth_creds_read("/proc", getpid(), 0, getegid(), &from_proc), 0);
	for (int request = 0; request < 2; request++) {
		/* Root moving without a policy: privileged by uid alone. */
		assert_int_equal(auth_peer_move_creds(&ap, "/proc", pidfd, getpid(), 0, getegid(), &policy,
						      AUTH_SCHED_KEEP, &creds), 0);
		assert_int_equal(creds->uid, 0);
		assert_false(auth_cap_sys_nice(creds));
		assert_true(creds->rtprio_limit == 0);
		assert_int_equal(creds->ngroups, 0);
		assert_int_equal(auth_peer_move_creds(&ap, "/proc", pidfd, getpid(), 0, getegid(), &policy,
						      SCHED_FIFO, &creds), 0);
		assert_int_equal(auth_cap_sys_nice(creds), auth_cap_sys_nice(&from_proc));
		assert_true(creds->rtprio_limit == (auth_cap_sys_nice(&from_proc) ? 0 : from_proc.rtprio_limit));
	}
	assert_int_equal(auth_peer_move_creds(&ap, "/proc", pidfd, getpid(), 1, getegid(), &policy, AUTH_SCHED_KEEP,
					      &creds),
			 -ESRCH);
	close(pidfd);
}

/*
 * Without a pidfd of a thread (before Linux 6.9) auth_target_pidfd() says
 * -EOPNOTSUPP, and the daemon reads the thread from /proc: that read
 * gives the owner, policy and priority a move just set, and fails once the
 * thread is gone.
 */
static void test_proc_fallback_without_thread_pidfd(void **state)
{
	struct thread_sched_result res;
	struct auth_target proc;
	struct rtplace_cpumask target;
	struct sleeper s;
	int pidfd;

	assert_int_equal(sleeper_start(&s), 0);
	cpuset_zero(&target);
	cpuset_set(&target, last_allowed_cpu());
	assert_int_equal(thread_sched_apply(s.tid, &target, SCHED_FIFO, 7, &res), 0);
	pidfd = auth_target_pidfd(s.tid);
	if (have_thread_pidfd) {
		assert_true(pidfd >= 0);
		close(pidfd);
	} else {
		assert_int_equal(pidfd, -EOPNOTSUPP);
	}
	assert_int_equal(auth_target_read("/proc", s.tid, &proc), 0);
	assert_int_equal(proc.tid, s.tid);
	assert_int_equal(proc.tgid, getpid());
	assert_int_equal(proc.uid, getuid());
	assert_int_equal(proc.policy, SCHED_FIFO);
	assert_int_equal(proc.prio, 7);
	sleeper_stop(&s);
	assert_true(auth_target_read("/proc", s.tid, &proc) < 0);
}

/*
 * Without PIDFD_GET_INFO (before Linux 6.13) the live readers say
 * -EOPNOTSUPP, and a connection's credentials come from /proc on every
 * request (nothing cached, as nothing can confirm that the pid is still
 * the peer): the same answers as /proc, for a plain request and a move's.
 */
static void test_proc_fallback_without_pidfd_info(void **state)
{
	const struct auth_policy policy = { .allow = AUTH_ALLOW_OWNER, .max_prio = 99 };
	const struct auth_creds *creds;
	struct auth_creds from_proc;
	struct auth_target live;
	struct auth_peer ap = { 0 };
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);

	assert_true(pidfd >= 0);
	assert_int_equal(auth_target_read_live(pidfd, getpid(), false, &live), have_pidfd_info ? 0 : -EOPNOTSUPP);
	assert_int_equal(auth_creds_read("/proc", getpid(), geteuid(), getegid(), &from_proc), 0);
	for (int request = 0; request < 2; request++) {
		assert_int_equal(auth_peer_creds(&ap, "/proc", pidfd, getpid(), geteuid(), getegid(), &creds), 0);
		assert_int_equal(ap.cached, have_pidfd_info);
		assert_int_equal(creds->uid, from_proc.uid);
		assert_int_equal(auth_cap_sys_nice(creds), auth_cap_sys_nice(&from_proc));
		assert_true(creds->rtprio_limit == from_proc.rtprio_limit);
		assert_int_equal(creds->ngroups, from_proc.ngroups);
		assert_int_equal(auth_peer_move_creds(&ap, "/proc", pidfd, getpid(), geteuid(), getegid(), &policy,
						      SCHED_FIFO, &creds), 0);
		assert_int_equal(auth_cap_sys_nice(creds), auth_cap_sys_nice(&from_proc));
	}
	close(pidfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_move_own_thread),
		cmocka_unit_test(test_reset_on_fork_kept),
		cmocka_unit_test(test_apply_known_from_live_read),
		cmocka_unit_test(test_rollback_bad_prio),
		cmocka_unit_test(test_rollback_unprivileged),
		cmocka_unit_test(test_vanished_and_invalid),
		cmocka_unit_test(test_live_readers_agree_with_proc),
		cmocka_unit_test(test_move_creds_read_what_is_consulted),
		cmocka_unit_test(test_proc_fallback_without_thread_pidfd),
		cmocka_unit_test(test_proc_fallback_without_pidfd_info),
	};

	test_require_root();
	probe_kernel();
	/* The threads it moves go to the last CPU (1 here), which the hotplug
	 * test takes offline under this lock. */
	assert_true(test_lock_rt_cpu(TEST_RT_LOCK_WAIT_S) >= 0);
	/* Bounds the run from this normal-priority thread; default action
	 * kills the process, and with it every thread it made RT. */
	alarm(60);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
