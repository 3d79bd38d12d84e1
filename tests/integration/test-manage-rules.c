/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * [moves] manage-comm through the real daemon on the live machine (root):
 * an RT process started after the daemon, matched only by its command name
 * (no claim, no rtplace-run --manage), becomes managed, and when a higher
 * RT task occupies its CPU 1 the daemon pushes it to CPU 0 and publishes
 * the move. RT processes run on CPU 1 only, or sleep; the test holds the
 * RT-test lock and kills every child at exit.
 */
#include "config.h"

#include <errno.h>
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
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include "ring.h"
#include "testlib.h"

static struct harness_daemon daemon_under_test;
static uint32_t next_request = 1;

static void test_comm_rule_pushes(void **state)
{
	int fd = harness_connect(daemon_under_test.socket);
	struct rtplace_record rec;
	struct harness_sub sub;
	pid_t ruled;
	cpu_set_t set;

	assert_true(fd >= 0);
	assert_int_equal(harness_subscribe(fd, next_request++, &sub), 0);
	/* A forked child keeps this binary's command name: the rule's. */
	ruled = test_track_child(test_spawn_rt(1, 50, TEST_RT_TICK, 5));
	test_track_child(test_spawn_rt(1, 60, TEST_RT_BUSY, 5));
	assert_int_equal(harness_wait_record(&sub, RTPLACE_RECORD_MOVED, ruled, 5000, &rec), 0);
	assert_int_equal(rec.from_cpu, 1);
	assert_int_not_equal(rec.to_cpu, 1);
	assert_int_equal(sched_getaffinity(ruled, sizeof(set), &set), 0);
	assert_true(CPU_ISSET(rec.to_cpu, &set));
	assert_false(CPU_ISSET(1, &set));
	test_kill_children();
	harness_unsubscribe(&sub);
	close(fd);
}

static int start(void **state)
{
	char comm[32], text[128];
	FILE *f;

	/* The kernel's name for this process (what the rule compares),
	 * whatever wrapper or truncation made it. */
	f = fopen("/proc/self/comm", "re");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(text, sizeof(text), "[moves]\nmanage-comm = %s\n", comm);
	return harness_live_start(&daemon_under_test, text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_comm_rule_pushes),
	};

	signal(SIGPIPE, SIG_IGN);
	atexit(test_kill_children);
	return cmocka_run_group_tests(tests, start, harness_live_stop);
}
