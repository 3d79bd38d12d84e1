/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPU hotplug followed live (DESIGN §14), root, real hotplug of one CPU
 * under the real daemon and BPF tracker. The CPU is the first of node 2, or
 * of the last node on a machine with fewer, other than CPU 0 (CPU 1 on a
 * one-node machine): on the VM bed's 4-node guests hotplug then crosses a
 * node that is not the first, whose shard and LLC must follow it. Every
 * expectation comes from the CPUs found online at start. "CPU 1" below is
 * that CPU.
 *
 *  - CPU 1 taken offline under a running daemon: within a second it is
 *    reported offline (CPUS, STATUS, rtplacectl cpus in both forms), the
 *    claim a client held on it ends with a CLAIM_ENDED (REVOKED) to that
 *    client and a claim-revoked record to subscribers, no query offers it,
 *    and a move to it is refused naming it;
 *    back online, it is managed again with its true level within a second;
 *  - a daemon started while CPU 1 is offline manages it once it comes
 *    online: topology ids, true level, placement, claims;
 *  - CPU 1 offline and back while the daemon is stopped: the claim still
 *    ends (the online list alone would not tell).
 *
 * CPU 1 is always put back online: at start (a previous run may have died),
 * at exit (atexit), on fatal signals, and at the end of each test. The test
 * holds the machine-wide RT test lock throughout, so other tests that use
 * CPU 1 wait; it pins itself (and so its daemons) to CPU 0, and its RT
 * spinner on CPU 1 is killed before CPU 1 goes offline (the kernel would
 * otherwise move it to CPU 0).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cpuset.h"
#include "harness.h"
#include "testlib.h"

/* The node whose CPU comes and goes, where the machine has one. */
#define HP_NODE 2
#define SPIN_PRIO 40
/* What DESIGN §14 promises: offline reported, claims ended, CPUs managed
 * again "within a second". */
#define HP_DEADLINE_MS 1000

/* Set by setup(): the CPU, as a CPU list, its online file and how many
 * CPUs were online at start. */
static unsigned hp_cpu;
static char hp_list[16];
static char hp_online[128];
static uint32_t hp_nonline;

static uint32_t next_request = 1;
static pid_t spinner;
/* Global, not on a test's stack: a failed assertion leaves the test
 * function, and the teardown (and the harness at exit) still stops it. */
static struct harness_daemon daemon_under_test;

/* ---- CPU 1 on and off, and always back on ---- */

/* Writes "0" or "1" to CPU 1's online file. Async-signal-safe. */
static int hp_write(bool online)
{
	int fd = open(hp_online, O_WRONLY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, online ? "1" : "0", 1) != 1)
		r = -errno;
	close(fd);
	return r;
}

static bool hp_is_online(void)
{
	char c = '1';
	int fd = open(hp_online, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '1';
		close(fd);
	}
	return c == '1';
}

/* Puts CPU 1 back online, retrying a busy hotplug for a few seconds.
 * Async-signal-safe. */
static void hp_restore(void)
{
	struct timespec pause = { .tv_nsec = 100 * 1000 * 1000 };

	for (int i = 0; i < 50 && !hp_is_online(); i++)
		if (hp_write(true) < 0)
			nanosleep(&pause, NULL);
}

/* The test process, not a child that inherited the handlers. */
static pid_t test_pid;

static void hp_fatal_signal(int sig)
{
	if (getpid() == test_pid) {
		if (spinner > 0)
			kill(spinner, SIGKILL);
		hp_restore();
		/* atexit() handlers do not run on this way out. */
		if (daemon_under_test.pid > 0)
			kill(daemon_under_test.pid, SIGTERM);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void kill_spinner(void)
{
	if (spinner > 0) {
		kill(spinner, SIGKILL);
		waitpid(spinner, NULL, 0);
		test_forget_child(spinner);
		spinner = 0;
	}
}

static void cleanup_at_exit(void)
{
	kill_spinner();
	hp_restore();
}

/* The first CPU but 0 of node HP_NODE, or of the last node before it that
 * has one, from sysfs; CPU 1 where sysfs shows no nodes. 0 or -ENOENT. */
static int hp_choose_cpu(void)
{
	bool nodes = false;

	for (int node = HP_NODE; node >= 0; node--) {
		char path[128], list[4096];
		struct rtplace_cpumask set;
		FILE *f;
		int cpu = -1;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
		f = fopen(path, "re");
		if (!f)
			continue;
		nodes = true;
		if (fgets(list, sizeof(list), f)) {
			list[strcspn(list, "\n")] = '\0';
			if (cpuset_parse(list, &set) == 0)
				cpu = cpuset_next(&set, 1);
		}
		fclose(f);
		if (cpu > 0) {
			hp_cpu = (unsigned)cpu;
			return 0;
		}
	}
	if (nodes || access("/sys/devices/system/cpu/cpu1", F_OK) < 0)
		return -ENOENT;
	hp_cpu = 1;
	return 0;
}

/* ---- talking to the daemon ---- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct rtplace_cpu_info cpu_info(int fd, unsigned cpu)
{
	struct rtplace_cpu_info ci;

	assert_int_equal(harness_cpu_info(fd, cpu, &ci), 0);
	return ci;
}

static struct rtplace_status_reply status_of(int fd)
{
	struct rtplace_status_reply st;

	assert_int_equal(harness_status(fd, &st), 0);
	return st;
}

static bool is_offline(const struct rtplace_cpu_info *ci)
{
	return ci->level == LEVEL_OFFLINE && !(ci->flags & RTPLACE_CPU_F_ONLINE);
}

static bool is_unclaimed(const struct rtplace_cpu_info *ci)
{
	return ci->claim_id == 0;
}

static bool is_quiet(const struct rtplace_cpu_info *ci)
{
	return (ci->level == LEVEL_IDLE || ci->level == LEVEL_NORMAL) && ci->flags & RTPLACE_CPU_F_ONLINE;
}

static bool is_spinning(const struct rtplace_cpu_info *ci)
{
	return ci->level == LEVEL_RT1 + SPIN_PRIO - 1 && ci->flags & RTPLACE_CPU_F_ONLINE;
}

/* Polls CPU 1 until want() holds, at most until deadline (ms, monotonic);
 * returns its last state. */
static struct rtplace_cpu_info wait_cpu(int fd, uint64_t deadline, bool (*want)(const struct rtplace_cpu_info *))
{
	struct rtplace_cpu_info ci = cpu_info(fd, hp_cpu);

	while (!want(&ci) && now_ms() < deadline) {
		usleep(5000);
		ci = cpu_info(fd, hp_cpu);
	}
	return ci;
}

static struct proto_msg query(int fd, int prio, unsigned count, const char *allowed, bool claim)
{
	struct proto_msg rep;

	assert_int_equal(harness_query(fd, next_request++, prio, count, allowed, claim, &rep), 0);
	return rep;
}

static bool answer_has(const struct proto_msg *rep, unsigned cpu)
{
	for (uint32_t i = 0; i < rep->query_reply.count; i++)
		if (rep->query_reply.list[i].cpu == cpu)
			return true;
	return false;
}

/* rt99 over every online CPU, asked again (for at most a second) until CPU 1
 * is in the answer: any other CPU may be at rt99 or above for a moment (a
 * stopper thread after a hotplug, seen in the 6.1 guest), CPU 1 is what
 * the callers look for. */
static struct proto_msg query_all_below_rt99(int fd)
{
	uint64_t deadline = now_ms() + HP_DEADLINE_MS;
	struct proto_msg rep = query(fd, 99, hp_nonline, NULL, false);

	while (!answer_has(&rep, hp_cpu) && now_ms() < deadline) {
		usleep(5000);
		rep = query(fd, 99, hp_nonline, NULL, false);
	}
	return rep;
}

/* The next event on fd within timeout_ms: 0, or -ETIMEDOUT. */
static int next_event(int fd, int timeout_ms, struct proto_msg *ret)
{
	struct proto_limits lim = { .ncpus = RTPLACE_MAX_CPUS, .nnodes = 1024, .accept = PROTO_ACCEPT_REPLIES };
	unsigned char buf[RTPLACE_MSG_MAX];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, timeout_ms) != 1)
		return -ETIMEDOUT;
	n = recv(fd, buf, sizeof(buf), 0);
	assert_true(n > 0);
	assert_int_equal(proto_decode(buf, (size_t)n, &lim, ret, NULL), 0);
	return 0;
}

/* Runs rtplacectl with args; its stdout into buf. Returns its exit status. */
static int ctl(const struct harness_daemon *d, const char *args, char *buf, size_t len)
{
	char path[4096], cmd[8192];
	size_t n = 0;
	FILE *p;
	int st;

	harness_build_path("client/rtplacectl", path, sizeof(path));
	snprintf(cmd, sizeof(cmd), "%s --socket %s %s 2>&1", path, d->socket, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (n + 1 < len && fgets(buf + n, (int)(len - n), p))
		n += strlen(buf + n);
	buf[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The line of ctl()'s output that starts with prefix, or NULL. */
static const char *line_of(const char *out, const char *prefix, char *buf, size_t len)
{
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, prefix, strlen(prefix)) == 0) {
			snprintf(buf, len, "%.*s", (int)strcspn(l, "\n"), l);
			return buf;
		}
	}
	return NULL;
}

/* A process to move: sleeps, normal priority, any CPU. */
static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		alarm(30);
		for (;;)
			pause();
	}
	return test_track_child(pid);
}

/* CPU 1 is online and quiet: an RT spinner there makes it rt40 at once,
 * and placement follows (the true level, not a remembered one). */
static void check_managed(int fd)
{
	struct rtplace_cpu_info ci;
	struct proto_msg rep;

	rep = query_all_below_rt99(fd);
	assert_true(answer_has(&rep, hp_cpu));
	spinner = test_track_child(test_spawn_rt(hp_cpu, SPIN_PRIO, TEST_RT_BUSY, 10));
	assert_true(spinner > 0);
	ci = wait_cpu(fd, now_ms() + HP_DEADLINE_MS, is_spinning);
	assert_true(is_spinning(&ci));
	assert_int_equal(ci.pid, spinner);
	assert_int_equal(query(fd, 30, 1, hp_list, false).query_reply.count, 0);
	rep = query(fd, 50, 1, hp_list, false);
	assert_int_equal(rep.query_reply.count, 1);
	assert_int_equal(rep.query_reply.list[0].level, LEVEL_RT1 + SPIN_PRIO - 1);
	kill_spinner();
	ci = wait_cpu(fd, now_ms() + 2000, is_quiet);
	assert_true(is_quiet(&ci));
}

/* ---- the tests ---- */

static void test_offline_under_running_daemon(void **state)
{
	struct harness_daemon *d = &daemon_under_test;
	struct rtplace_cpu_info ci;
	struct rtplace_move mv = { .flags = RTPLACE_MOVE_F_SET_AFFINITY };
	struct proto_msg rep, ev, req;
	struct harness_sub sub;
	struct rtplace_record rec;
	char out[16384], line[512], prefix[64], want[64];
	uint32_t claim_id;
	uint64_t deadline;
	int fd, holder, watcher;
	pid_t sleeper;

	assert_int_equal(harness_start(d, NULL, NULL), 0);
	fd = harness_connect(d->socket);
	holder = harness_connect(d->socket);
	watcher = harness_connect(d->socket);
	assert_true(fd >= 0 && holder >= 0 && watcher >= 0);
	assert_int_equal(harness_subscribe(watcher, next_request++, &sub), 0);
	ci = wait_cpu(fd, now_ms() + 2000, is_quiet);
	assert_true(is_quiet(&ci));

	/* The holder claims CPU 1 for good. */
	rep = query(holder, 50, 1, hp_list, true);
	assert_int_equal(rep.query_reply.count, 1);
	assert_int_equal(rep.query_reply.list[0].cpu, hp_cpu);
	claim_id = rep.query_reply.claim_id;
	assert_true(claim_id != 0);
	assert_int_equal(cpu_info(fd, hp_cpu).claim_id, claim_id);

	/* The map says offline before the offline operation returns: the
	 * dying CPU's last switch (to its idle task) publishes it. */
	assert_int_equal(hp_write(false), 0);
	deadline = now_ms() + HP_DEADLINE_MS;
	ci = cpu_info(fd, hp_cpu);
	assert_true(is_offline(&ci));
	/* Where it sits is still known. */
	assert_true(ci.node >= 0 && ci.llc >= 0 && ci.core >= 0);
	ci = wait_cpu(fd, deadline, is_unclaimed);
	assert_int_equal(ci.claim_id, 0);
	/* The holder hears why its claim ended, within the second. */
	assert_int_equal(next_event(holder, (int)(deadline > now_ms() ? deadline - now_ms() : 0), &ev), 0);
	assert_int_equal(ev.hdr.type, RTPLACE_MSG_CLAIM_ENDED);
	assert_int_equal(ev.claim_ended.claim_id, claim_id);
	assert_int_equal(ev.claim_ended.why, RTPLACE_CLAIM_ENDED_REVOKED);
	assert_int_equal(status_of(fd).claims_active, 0);
	assert_int_equal(status_of(fd).nonline, hp_nonline - 1);
	/* And subscribers read it as a record (no owner process: tid 0). */
	assert_int_equal(harness_wait_record(&sub, RTPLACE_RECORD_CLAIM_REVOKED, 0, HP_DEADLINE_MS, &rec), 0);
	assert_int_equal(rec.claim_id, claim_id);
	assert_int_equal(rec.from_cpu, hp_cpu);
	assert_int_equal(rec.prio, 50);
	assert_int_equal(rec.uid, getuid());

	/* Never offered: not for the highest priority, not when asked for. */
	rep = query(fd, 99, hp_nonline, NULL, false);
	assert_true(rep.query_reply.count >= 1);
	assert_false(answer_has(&rep, hp_cpu));
	rep = query(fd, 99, 1, hp_list, true);
	assert_int_equal(rep.query_reply.count, 0);
	assert_int_equal(rep.query_reply.claim_id, 0);
	assert_string_equal(rep.query_reply.reason, "no managed online CPU in the allowed set");

	/* A move there is refused, naming the CPU. */
	sleeper = spawn_sleeper();
	assert_true(sleeper > 0);
	mv.tid = sleeper;
	assert_int_equal(cpuset_parse(hp_list, &mv.cpus), 0);
	assert_int_equal(proto_encode_move(&req, next_request++, &mv), 0);
	assert_int_equal(harness_call(fd, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_ERROR);
	snprintf(want, sizeof(want), "CPU %u is offline", hp_cpu);
	assert_string_equal(rep.error.reason, want);

	/* What a person sees. */
	assert_int_equal(ctl(d, "cpus", out, sizeof(out)), 0);
	snprintf(prefix, sizeof(prefix), "%4u ", hp_cpu);
	assert_non_null(line_of(out, prefix, line, sizeof(line)));
	assert_non_null(strstr(line, " offline "));
	assert_true(strlen(line) > 8 && strcmp(line + strlen(line) - 8, " offline") == 0);
	assert_int_equal(ctl(d, "--json cpus", out, sizeof(out)), 0);
	snprintf(prefix, sizeof(prefix), "  {\"cpu\": %u,", hp_cpu);
	assert_non_null(line_of(out, prefix, line, sizeof(line)));
	assert_non_null(strstr(line, "\"level\": \"offline\", \"online\": false"));
	assert_int_equal(ctl(d, "status", out, sizeof(out)), 0);
	snprintf(prefix, sizeof(prefix), "%u online and managed", hp_nonline - 1);
	assert_non_null(strstr(out, prefix));
	snprintf(line, sizeof(line), "move --tid %d --cpu-list %s", (int)sleeper, hp_list);
	assert_int_equal(ctl(d, line, out, sizeof(out)), 65);
	assert_non_null(strstr(out, want));

	/* Back online: managed again, at its true level, within the second. */
	assert_int_equal(hp_write(true), 0);
	ci = wait_cpu(fd, now_ms() + HP_DEADLINE_MS, is_quiet);
	assert_true(is_quiet(&ci));
	assert_int_equal(status_of(fd).nonline, hp_nonline);
	check_managed(fd);
	assert_int_equal(proto_encode_move(&req, next_request++, &mv), 0);
	assert_int_equal(harness_call(fd, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_MOVE_REPLY);

	harness_unsubscribe(&sub);
	close(watcher);
	close(holder);
	close(fd);
	assert_int_equal(harness_stop(d), 0);
}

static void test_offline_at_start(void **state)
{
	struct harness_daemon *d = &daemon_under_test;
	struct rtplace_cpu_info ci;
	struct proto_msg rep;
	int fd;

	assert_int_equal(hp_write(false), 0);
	assert_int_equal(harness_start(d, NULL, NULL), 0);
	fd = harness_connect(d->socket);
	assert_true(fd >= 0);
	ci = cpu_info(fd, hp_cpu);
	assert_true(is_offline(&ci));
	assert_int_equal(status_of(fd).nonline, hp_nonline - 1);
	rep = query(fd, 99, hp_nonline, NULL, false);
	assert_true(rep.query_reply.count >= 1);
	assert_false(answer_has(&rep, hp_cpu));

	assert_int_equal(hp_write(true), 0);
	ci = wait_cpu(fd, now_ms() + HP_DEADLINE_MS, is_quiet);
	assert_true(is_quiet(&ci));
	/* The topology learnt where it sits. */
	assert_true(ci.node >= 0 && ci.llc >= 0 && ci.core >= 0);
	assert_int_equal(status_of(fd).nonline, hp_nonline);
	check_managed(fd);
	rep = query(fd, 50, 1, hp_list, true);
	assert_int_equal(rep.query_reply.count, 1);
	assert_true(rep.query_reply.claim_id != 0);

	close(fd);
	assert_int_equal(harness_stop(d), 0);
}

/*
 * CPU 1 goes offline and comes back before the daemon looks (it is
 * stopped meanwhile): the online list reads the same before and after, but
 * the claim on CPU 1 must still end, as the uevents say it went.
 */
static void test_offline_and_back_unseen(void **state)
{
	struct harness_daemon *d = &daemon_under_test;
	struct rtplace_cpu_info ci;
	struct proto_msg rep, ev;
	uint32_t claim_id;
	int fd, holder;

	assert_int_equal(harness_start(d, NULL, NULL), 0);
	fd = harness_connect(d->socket);
	holder = harness_connect(d->socket);
	assert_true(fd >= 0 && holder >= 0);
	ci = wait_cpu(fd, now_ms() + 2000, is_quiet);
	assert_true(is_quiet(&ci));
	rep = query(holder, 50, 1, hp_list, true);
	assert_int_equal(rep.query_reply.count, 1);
	claim_id = rep.query_reply.claim_id;

	assert_int_equal(kill(d->pid, SIGSTOP), 0);
	assert_int_equal(hp_write(false), 0);
	assert_int_equal(hp_write(true), 0);
	assert_int_equal(kill(d->pid, SIGCONT), 0);
	assert_int_equal(next_event(holder, HP_DEADLINE_MS, &ev), 0);
	assert_int_equal(ev.hdr.type, RTPLACE_MSG_CLAIM_ENDED);
	assert_int_equal(ev.claim_ended.claim_id, claim_id);
	assert_int_equal(ev.claim_ended.why, RTPLACE_CLAIM_ENDED_REVOKED);
	ci = wait_cpu(fd, now_ms() + HP_DEADLINE_MS, is_quiet);
	assert_true(is_quiet(&ci));
	assert_int_equal(ci.claim_id, 0);
	check_managed(fd);

	close(holder);
	close(fd);
	assert_int_equal(harness_stop(d), 0);
}

static int setup(void **state)
{
	static const int fatal[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGABRT };
	cpu_set_t set;

	test_require_root();
	/* A run that died before it could restore its CPU left it offline. */
	for (unsigned cpu = 1; cpu < CPU_SETSIZE; cpu++) {
		snprintf(hp_online, sizeof(hp_online), "/sys/devices/system/cpu/cpu%u/online", cpu);
		if (access(hp_online, F_OK) < 0)
			break;
		hp_restore();
	}
	if (hp_choose_cpu() < 0)
		test_skip("no CPU but CPU 0 here");
	snprintf(hp_list, sizeof(hp_list), "%u", hp_cpu);
	snprintf(hp_online, sizeof(hp_online), "/sys/devices/system/cpu/cpu%u/online", hp_cpu);
	if (access(hp_online, W_OK) < 0)
		test_skip("the chosen CPU cannot be taken offline here (no writable online file)");
	test_pid = getpid();
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], hp_fatal_signal);
	atexit(cleanup_at_exit);
	/* Held until exit: tests that use CPU 1 wait while it comes and goes. */
	assert_true(test_lock_rt_cpu(TEST_RT_LOCK_WAIT_S) >= 0);
	assert_true(hp_is_online());
	hp_nonline = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
	return 0;
}

static int teardown_each(void **state)
{
	kill_spinner();
	if (daemon_under_test.pid > 0) {
		kill(daemon_under_test.pid, SIGCONT);
		harness_stop(&daemon_under_test);
	}
	test_kill_children();
	hp_restore();
	return hp_is_online() ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_offline_under_running_daemon, teardown_each),
		cmocka_unit_test_teardown(test_offline_at_start, teardown_each),
		cmocka_unit_test_teardown(test_offline_and_back_unseen, teardown_each),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, NULL);
}
