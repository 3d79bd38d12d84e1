/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtplaced without the BPF tracker (root): the map sampled from /proc
 * ([tracker] mode = sampled, and a tracker that really cannot load because
 * the daemon runs without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN in its
 * bounding set). Status, metrics and logs say so, with the interval and
 * the missing feature; a real RT spinner shows in the map within a few
 * intervals; with [tracker] required = yes the daemon exits 77 naming the
 * feature. The test pins itself (and so its daemons) to CPU 0 and spins on
 * CPU 1 only, bounded, as test-daemon-live does.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include "testlib.h"

#define SPIN_CPU 1
#define SPIN_PRIO 80
#define INTERVAL_MS 50

/* The real cause: the capabilities bpf(2) wants, out of the bounding set,
 * so that the daemon, started by root, never holds them. */
static const char *const no_bpf_caps[] = { "setpriv", "--bounding-set=-bpf,-perfmon,-sys_admin", NULL };
#define NO_CAPS_WHY "lacks CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)"

static struct harness_daemon daemon_under_test;
static pid_t spinner;
static uint32_t next_request = 1;

/* GET /metrics, the whole response (free it). */
static char *scrape(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ssize_t n;

	assert_non_null(buf);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(send(fd, req, sizeof(req) - 1, 0), (ssize_t)sizeof(req) - 1);
	while ((n = recv(fd, buf + len, cap - len - 1, 0)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
	return buf;
}

static struct rtplace_tracking_reply tracking(int fd)
{
	struct proto_msg req, rep;

	assert_int_equal(proto_encode_tracking(&req, next_request++), 0);
	assert_int_equal(harness_call(fd, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_TRACKING_REPLY);
	return rep.tracking_reply;
}

static unsigned level_of(int fd, unsigned cpu)
{
	struct rtplace_cpu_info ci;

	assert_int_equal(harness_cpu_info(fd, cpu, &ci), 0);
	return ci.level;
}

/* Polls (bounded: 40 intervals) until cpu's level is or is not rtN. */
static unsigned wait_level(int fd, unsigned cpu, unsigned level, bool is)
{
	unsigned now = level_of(fd, cpu);

	for (int i = 0; i < 400 && (now == level) != is; i++) {
		usleep(INTERVAL_MS * 100);
		now = level_of(fd, cpu);
	}
	return now;
}

/* The daemon's config: sampled by choice or by fallback, metrics on port. */
static void start(const char *const *wrapper, bool sampled, uint16_t port)
{
	char config[256];

	snprintf(config, sizeof(config), "[tracker]\n%ssample-interval-ms = %d\n[metrics]\nlisten = 127.0.0.1:%u\n",
		 sampled ? "mode = sampled\n" : "", INTERVAL_MS, port);
	assert_int_equal(harness_start_wrapped(&daemon_under_test, wrapper, config, NULL, NULL), 0);
}

/* Status, metrics and the map of a daemon serving from samples because
 * why; the spinner on CPU 1 shows at rt80 and goes again. */
static void check_sampled(uint16_t port, const char *why)
{
	int fd = harness_connect(daemon_under_test.socket);
	struct rtplace_tracking_reply t;
	struct proto_msg req, rep;
	char *page, series[128];

	assert_true(fd >= 0);
	t = tracking(fd);
	assert_int_equal(t.mode, RTPLACE_TRACKING_SAMPLED);
	assert_int_equal(t.interval_ms, INTERVAL_MS);
	assert_true(t.samples >= 1);
	assert_true(t.cpu_ns > 0);
	assert_non_null(strstr(t.why, why));
	assert_int_equal(proto_encode_status(&req, next_request++), 0);
	assert_int_equal(harness_call(fd, &req, &rep), 0);
	assert_false(rep.status_reply.flags & RTPLACE_STATUS_F_TRACKING);
	assert_true(rep.status_reply.flags & RTPLACE_STATUS_F_MOVES);
	assert_int_equal(rep.status_reply.nonline, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));

	spinner = test_track_child(test_spawn_rt(SPIN_CPU, SPIN_PRIO, TEST_RT_BUSY, 3));
	assert_true(spinner > 0);
	assert_int_equal(wait_level(fd, SPIN_CPU, LEVEL_RT1 + SPIN_PRIO - 1, true), LEVEL_RT1 + SPIN_PRIO - 1);
	assert_int_equal(harness_query(fd, next_request++, 50, 1, NULL, false, &rep), 0);
	assert_int_equal(rep.query_reply.count, 1);
	assert_int_equal(rep.query_reply.list[0].cpu, 0);
	test_kill_children();
	assert_int_not_equal(wait_level(fd, SPIN_CPU, LEVEL_RT1 + SPIN_PRIO - 1, false), LEVEL_RT1 + SPIN_PRIO - 1);

	page = scrape(port);
	assert_non_null(strstr(page, "\nrtplace_tracking_mode{mode=\"sampled\"} 1\n"));
	assert_non_null(strstr(page, "\nrtplace_tracking_mode{mode=\"live\"} 0\n"));
	snprintf(series, sizeof(series), "\nrtplace_sample_interval_seconds %.3f\n", INTERVAL_MS / 1e3);
	assert_non_null(strstr(page, series));
	assert_non_null(strstr(page, "\nrtplace_sample_cpu_seconds_total "));
	assert_non_null(strstr(page, "rtplace_tracking_untracked_info{why=\""));
	assert_non_null(strstr(strstr(page, "rtplace_tracking_untracked_info{why=\""), why));
	free(page);
	close(fd);
	assert_int_equal(harness_stop(&daemon_under_test), 0);
}

static void test_sampled_by_choice(void **state)
{
	uint16_t port;

	assert_int_equal(harness_free_port(&port), 0);
	start(NULL, true, port);
	check_sampled(port, "[tracker] mode = sampled");
}

/* The fallback: the tracker fails to load for a real reason, the daemon
 * names it and serves from samples. */
static void test_sampled_when_bpf_is_refused(void **state)
{
	uint16_t port;

	assert_int_equal(harness_free_port(&port), 0);
	start(no_bpf_caps, false, port);
	check_sampled(port, NO_CAPS_WHY);
}

/* With required = yes the same daemon exits 77, naming what it lacks on
 * stderr (the log), before it listens. */
static void test_required_exits(void **state)
{
	char log[] = "/tmp/rtplace-test-log.XXXXXX", text[4096] = "";
	int saved = dup(STDERR_FILENO), fd = mkstemp(log);
	ssize_t n;
	int r;

	assert_true(saved >= 0 && fd >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	r = harness_start_wrapped(&daemon_under_test, no_bpf_caps, "[tracker]\nrequired = yes\n", NULL, NULL);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	unlink(log);
	assert_true(n > 0);
	text[n] = '\0';
	fprintf(stderr, "%s", text);
	assert_int_equal(r, -ECHILD);
	assert_int_equal(daemon_under_test.exit_status, 77);
	assert_non_null(strstr(text, "Failed to start the BPF tracker: "));
	assert_non_null(strstr(text, NO_CAPS_WHY));
	assert_null(strstr(text, "sampled"));
	harness_stop(&daemon_under_test);
}

static int setup(void **state)
{
	assert_int_equal(test_rt_begin(), 0);
	return 0;
}

static int teardown(void **state)
{
	test_kill_children();
	harness_stop(&daemon_under_test);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sampled_by_choice, teardown),
		cmocka_unit_test_teardown(test_sampled_when_bpf_is_refused, teardown),
		cmocka_unit_test_teardown(test_required_exits, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	atexit(test_kill_children);
	return cmocka_run_group_tests(tests, setup, NULL);
}
