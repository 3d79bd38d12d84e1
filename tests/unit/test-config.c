/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for rtplaced's configuration parser (common/conf.c). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf.h"

#define TEST_MAX_ERRORS 32

struct test_errors {
	unsigned n;
	char msg[TEST_MAX_ERRORS][1024];
};

static void test_error_cb(void *userdata, const char *message)
{
	struct test_errors *e = userdata;

	assert_true(e->n < TEST_MAX_ERRORS);
	snprintf(e->msg[e->n++], sizeof(e->msg[0]), "%s", message);
}

/* Loads text and checks that exactly the expected messages (NULL-terminated
 * list) came out, in order; returns the result. */
static int test_load(const char *text, struct config *c, const char *const *expected)
{
	struct test_errors e = { 0 };
	unsigned n = 0;
	int r;

	r = config_load_string("t.conf", text, c, test_error_cb, &e);
	for (; expected && expected[n]; n++) {
		if (n >= e.n)
			fail_msg("missing error: %s", expected[n]);
		assert_string_equal(e.msg[n], expected[n]);
	}
	if (e.n > n)
		fail_msg("unexpected error: %s", e.msg[n]);
	return r;
}

/* Loads text expecting exactly one error, the message given. */
static void test_one_error(const char *text, const char *message)
{
	const char *expected[] = { message, NULL };
	struct config c;

	assert_int_equal(test_load(text, &c, expected), -EINVAL);
}

/* a and b differ, and key names the first setting between them that
 * needs a restart (NULL: a reload takes every difference). */
static void assert_differs(const struct config *a, const struct config *b, const char *key)
{
	assert_false(config_equal(a, b));
	if (key)
		assert_string_equal(config_restart_key(a, b), key);
	else
		assert_null(config_restart_key(a, b));
}

static void test_defaults(void **state)
{
	struct config c;

	config_defaults(&c);
	assert_string_equal(c.daemon.socket, "/run/rtplace/rtplaced.sock");
	assert_string_equal(c.daemon.socket_group, "");
	assert_int_equal(c.daemon.socket_mode, 0660);
	assert_int_equal(c.daemon.log_level, LOG_INFO);
	assert_int_equal(c.topology.shard, TOPO_SHARD_NODE);
	assert_string_equal(c.topology.file, "");
	assert_true(cpuset_empty(&c.placement.housekeeping_cpus));
	assert_true(c.placement.prefer_idle);
	assert_int_equal(c.placement.avoid_smt_siblings, CONFIG_SMT_RT);
	assert_int_equal(c.placement.claim_timeout_ms, 30000);
	assert_true(c.placement.irq_tiebreak);
	assert_int_equal(c.placement.irq_window_ms, 1000);
	assert_int_equal(c.moves.allow, CONFIG_MOVES_OWNER);
	assert_int_equal(c.moves.n_rt_groups, 0);
	assert_int_equal(c.moves.max_prio, 49);
	assert_true(c.moves.rebalance);
	assert_int_equal(c.moves.rebalance_interval_ms, 100);
	assert_int_equal(c.notify.ring_records, 1024);
	assert_int_equal(c.limits.max_clients, 256);
	assert_int_equal(c.limits.max_clients_per_user, 32);
	assert_int_equal(c.limits.max_claims_per_client, 64);
	assert_int_equal(c.limits.max_claims_per_user, 64);
	assert_int_equal(c.limits.max_claims, 4096);
	assert_int_equal(c.limits.max_subscribers, 128);
	assert_int_equal(c.limits.max_subscribers_per_user, 8);
	assert_int_equal(c.limits.max_managed_threads, 3072);
	assert_int_equal(c.limits.max_managed_threads_per_user, 1024);
	assert_int_equal(c.limits.max_lease_ms, 60000);
}

static void test_empty_file_is_defaults(void **state)
{
	struct config c, d;

	config_defaults(&d);
	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(test_load("", &c, NULL), 0);
	assert_true(config_equal(&c, &d));
	assert_int_equal(test_load("\n\n# nothing\n[daemon]\n", &c, NULL), 0);
	assert_true(config_equal(&c, &d));
}

static void test_every_key(void **state)
{
	static const char text[] =
		"[daemon]\n"
		"socket = /tmp/x/rtplaced.sock\n"
		"socket-group = rtplace\n"
		"socket-mode = 0600\n"
		"log-level = debug\n"
		"[topology]\n"
		"shard = llc\n"
		"file = /usr/share/rtplace/2s-240c-480t.xml\n"
		"[placement]\n"
		"housekeeping-cpus = 0-1,4\n"
		"prefer-idle = no\n"
		"avoid-smt-siblings = always\n"
		"claim-timeout-ms = 0\n"
		"[moves]\n"
		"allow = root\n"
		"rt-groups = audio, video realtime\n"
		"max-prio = 99\n"
		"rebalance = yes\n"
		"rebalance-interval-ms = 250\n"
		"[notify]\n"
		"ring-records = 65536\n"
		"[limits]\n"
		"max-clients = 1\n"
		"max-clients-per-user = 2\n"
		"max-claims-per-client = 1024\n"
		"max-claims-per-user = 65536\n"
		"max-lease-ms = 1\n"
		"max-claims = 61440\n"
		"max-subscribers = 3\n"
		"max-subscribers-per-user = 1\n"
		"max-managed-threads = 3840\n"
		"max-managed-threads-per-user = 7\n"
		"[containers]\n"
		"max-prio = 40\n"
		"allow-exclusive = no\n"
		"max-cpus = 2\n";
	struct config c, d;
	struct rtplace_cpumask hk;

	assert_int_equal(test_load(text, &c, NULL), 0);
	assert_string_equal(c.daemon.socket, "/tmp/x/rtplaced.sock");
	assert_string_equal(c.daemon.socket_group, "rtplace");
	assert_int_equal(c.daemon.socket_mode, 0600);
	assert_int_equal(c.daemon.log_level, LOG_DEBUG);
	assert_int_equal(c.topology.shard, TOPO_SHARD_LLC);
	assert_string_equal(c.topology.file, "/usr/share/rtplace/2s-240c-480t.xml");
	assert_int_equal(cpuset_parse("0-1,4", &hk), 0);
	assert_true(cpuset_equal(&c.placement.housekeeping_cpus, &hk));
	assert_false(c.placement.prefer_idle);
	assert_int_equal(c.placement.avoid_smt_siblings, CONFIG_SMT_ALWAYS);
	assert_int_equal(c.placement.claim_timeout_ms, 0);
	assert_int_equal(c.moves.allow, CONFIG_MOVES_ROOT);
	assert_int_equal(c.moves.n_rt_groups, 3);
	assert_string_equal(c.moves.rt_groups[0], "audio");
	assert_string_equal(c.moves.rt_groups[1], "video");
	assert_string_equal(c.moves.rt_groups[2], "realtime");
	assert_int_equal(c.moves.max_prio, 99);
	assert_true(c.moves.rebalance);
	assert_int_equal(c.moves.rebalance_interval_ms, 250);
	assert_int_equal(c.notify.ring_records, 65536);
	assert_int_equal(c.limits.max_clients, 1);
	assert_int_equal(c.limits.max_clients_per_user, 2);
	assert_int_equal(c.limits.max_claims_per_client, 1024);
	assert_int_equal(c.limits.max_claims_per_user, 65536);
	assert_int_equal(c.limits.max_lease_ms, 1);
	assert_int_equal(c.limits.max_claims, 61440);
	assert_int_equal(c.limits.max_subscribers, 3);
	assert_int_equal(c.limits.max_subscribers_per_user, 1);
	assert_int_equal(c.limits.max_managed_threads, 3840);
	assert_int_equal(c.limits.max_managed_threads_per_user, 7);
	assert_int_equal(c.containers.max_prio, 40);
	assert_false(c.containers.allow_exclusive);
	assert_int_equal(c.containers.max_cpus, 2);

	config_defaults(&d);
	assert_differs(&d, &c, "daemon.socket");
}

static void test_values(void **state)
{
	struct config c, d;

	/* Booleans, any case; choices too. */
	assert_int_equal(test_load("[placement]\nprefer-idle = false\n", &c, NULL), 0);
	assert_false(c.placement.prefer_idle);
	assert_int_equal(test_load("[placement]\nprefer-idle = 1\n", &c, NULL), 0);
	assert_true(c.placement.prefer_idle);
	assert_int_equal(test_load("[moves]\nrebalance = TRUE\n", &c, NULL), 0);
	assert_true(c.moves.rebalance);
	assert_int_equal(test_load("[moves]\nrebalance = 0\n", &c, NULL), 0);
	assert_false(c.moves.rebalance);
	assert_int_equal(test_load("[daemon]\nlog-level = Warning\n", &c, NULL), 0);
	assert_int_equal(c.daemon.log_level, LOG_WARNING);
	assert_int_equal(test_load("[daemon]\nlog-level = err\n", &c, NULL), 0);
	assert_int_equal(c.daemon.log_level, LOG_ERR);
	assert_int_equal(test_load("[daemon]\nlog-level = notice\n", &c, NULL), 0);
	assert_int_equal(c.daemon.log_level, LOG_NOTICE);
	assert_int_equal(test_load("[placement]\navoid-smt-siblings = never\n", &c, NULL), 0);
	assert_int_equal(c.placement.avoid_smt_siblings, CONFIG_SMT_NEVER);

	/* Range edges. */
	assert_int_equal(test_load("[daemon]\nsocket-mode = 0\n", &c, NULL), 0);
	assert_int_equal(c.daemon.socket_mode, 0);
	assert_int_equal(test_load("[daemon]\nsocket-mode = 777\n", &c, NULL), 0);
	assert_int_equal(c.daemon.socket_mode, 0777);
	assert_int_equal(test_load("[notify]\nring-records = 64\n", &c, NULL), 0);
	assert_int_equal(c.notify.ring_records, 64);
	assert_int_equal(test_load("[placement]\nclaim-timeout-ms = 86400000\n", &c, NULL), 0);
	assert_int_equal(c.placement.claim_timeout_ms, 86400000);
	assert_int_equal(test_load("[placement]\nirq-tiebreak = no\nirq-window-ms = 100\n", &c, NULL), 0);
	assert_false(c.placement.irq_tiebreak);
	assert_int_equal(c.placement.irq_window_ms, 100);
	/* The window's timer is set at start; the tie-breaker follows a reload. */
	config_defaults(&d);
	assert_differs(&d, &c, "placement.irq-window-ms");
	d.placement.irq_window_ms = c.placement.irq_window_ms;
	assert_differs(&d, &c, NULL);
	assert_int_equal(test_load("[moves]\nmax-prio = 1\nrebalance-interval-ms = 10\n", &c, NULL), 0);
	assert_int_equal(c.moves.max_prio, 1);
	assert_int_equal(c.moves.rebalance_interval_ms, 10);
	assert_int_equal(test_load("[limits]\nmax-clients = 65536\n", &c, NULL), 0);
	assert_int_equal(c.limits.max_clients, 65536);

	/* Empty values that mean "none" reset a non-empty one. */
	assert_int_equal(test_load("[placement]\nhousekeeping-cpus =\n[moves]\nrt-groups = ,\n", &c, NULL), 0);
	assert_true(cpuset_empty(&c.placement.housekeeping_cpus));
	assert_int_equal(c.moves.n_rt_groups, 0);

	/* Sixteen groups fit; the longest group name fits. */
	assert_int_equal(test_load("[moves]\nrt-groups = a b c d e f g h i j k l m n o p\n", &c, NULL), 0);
	assert_int_equal(c.moves.n_rt_groups, 16);
	assert_string_equal(c.moves.rt_groups[15], "p");
	assert_int_equal(test_load("[daemon]\nsocket-group = _abcdefghijklmnopqrstuvwxyz.-012\n", &c, NULL), 0);
	assert_string_equal(c.daemon.socket_group, "_abcdefghijklmnopqrstuvwxyz.-012");
}

static void test_comments_and_whitespace(void **state)
{
	static const char text[] =
		"\xef\xbb\xbf# a BOM, then a comment\r\n"
		"; another comment\r\n"
		"\r\n"
		"   [daemon]   ; comment after a section\r\n"
		"\tsocket-mode=0640\r\n"
		"  log-level   =   notice   ; inline comment\r\n"
		"\t\t\r\n"
		"[placement] # also a comment\n"
		"    housekeeping-cpus = 3\n"
		"  # indented comment\n"
		"    prefer-idle = no\n"
		"[daemon]\n"
		"socket-group = audio";
	struct config c;

	assert_int_equal(test_load(text, &c, NULL), 0);
	assert_int_equal(c.daemon.socket_mode, 0640);
	assert_int_equal(c.daemon.log_level, LOG_NOTICE);
	assert_true(cpuset_test(&c.placement.housekeeping_cpus, 3));
	assert_int_equal(cpuset_count(&c.placement.housekeeping_cpus), 1);
	assert_false(c.placement.prefer_idle);
	/* The last line has no newline; a section may reopen. */
	assert_string_equal(c.daemon.socket_group, "audio");
}

static void test_bad_values(void **state)
{
	test_one_error("[daemon]\nlog-level = loud\n",
		       "t.conf:2: invalid value 'loud' for log-level: expected err, warning, notice, info or debug");
	test_one_error("[daemon]\nsocket = relative.sock\n",
		       "t.conf:2: invalid value 'relative.sock' for socket: expected an absolute path of at most "
		       "107 characters");
	test_one_error("[daemon]\nsocket =\n",
		       "t.conf:2: invalid value '' for socket: expected an absolute path of at most 107 characters");
	test_one_error("[daemon]\nsocket = /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
		       "t.conf:2: socket is too long: expected an absolute path of at most 107 characters");
	test_one_error("[daemon]\nsocket-mode = 0680\n",
		       "t.conf:2: invalid value '0680' for socket-mode: expected an octal mode from 0 to 0777");
	test_one_error("[daemon]\nsocket-mode = 01777\n",
		       "t.conf:2: socket-mode = 01777 is out of range: expected an octal mode from 0 to 0777");
	test_one_error("[daemon]\nsocket-group = 1000\n",
		       "t.conf:2: invalid value '1000' for socket-group: expected a group name (letters, digits, "
		       "'_', '.', '-', not starting with a digit, '.' or '-', at most 32 characters), or nothing");
	test_one_error("[daemon]\nsocket-group = abcdefghijklmnopqrstuvwxyzabcdefg\n",
		       "t.conf:2: socket-group is too long: expected a group name (letters, digits, "
		       "'_', '.', '-', not starting with a digit, '.' or '-', at most 32 characters), or nothing");
	test_one_error("[topology]\nshard = socket\n", "t.conf:2: invalid value 'socket' for shard: expected node or llc");
	test_one_error("[topology]\nfile = topo.xml\n",
		       "t.conf:2: invalid value 'topo.xml' for file: expected an absolute path to an hwloc XML "
		       "file, or nothing for the live machine");
	test_one_error("[placement]\nhousekeeping-cpus = 0-1, 4\n",
		       "t.conf:2: invalid value '0-1, 4' for housekeeping-cpus: expected a CPU list such as 0-1,4 "
		       "with CPU ids below 8192, or nothing");
	test_one_error("[placement]\nhousekeeping-cpus = 8192\n",
		       "t.conf:2: housekeeping-cpus = 8192 is out of range: expected a CPU list such as 0-1,4 "
		       "with CPU ids below 8192, or nothing");
	test_one_error("[placement]\nprefer-idle = maybe\n",
		       "t.conf:2: invalid value 'maybe' for prefer-idle: expected yes, no, true, false, 1 or 0");
	test_one_error("[placement]\navoid-smt-siblings = sometimes\n",
		       "t.conf:2: invalid value 'sometimes' for avoid-smt-siblings: expected never, rt or always");
	test_one_error("[placement]\nclaim-timeout-ms = 86400001\n",
		       "t.conf:2: claim-timeout-ms = 86400001 is out of range: expected 0 (no lease) or "
		       "milliseconds up to 86400000");
	test_one_error("[moves]\nallow = anyone\n", "t.conf:2: invalid value 'anyone' for allow: expected owner or root");
	test_one_error("[moves]\nrt-groups = audio audio\n",
		       "t.conf:2: invalid value 'audio audio' for rt-groups: expected group names separated by "
		       "commas or blanks, each once, at most 16");
	test_one_error("[moves]\nrt-groups = a b c d e f g h i j k l m n o p q\n",
		       "t.conf:2: rt-groups = a b c d e f g h i j k l m n o p q is out of range: expected group "
		       "names separated by commas or blanks, each once, at most 16");
	test_one_error("[moves]\nrt-groups = audio;video\n",
		       "t.conf:2: invalid value 'audio;video' for rt-groups: expected group names separated by "
		       "commas or blanks, each once, at most 16");
	test_one_error("[placement]\nirq-window-ms = 99\n",
		       "t.conf:2: irq-window-ms = 99 is out of range: expected an integer from 100 to 60000");
	test_one_error("[moves]\nmax-prio = 0\n", "t.conf:2: max-prio = 0 is out of range: expected an integer from 1 to 99");
	test_one_error("[moves]\nmax-prio = 100\n",
		       "t.conf:2: max-prio = 100 is out of range: expected an integer from 1 to 99");
	test_one_error("[moves]\nrebalance = on\n",
		       "t.conf:2: invalid value 'on' for rebalance: expected yes, no, true, false, 1 or 0");
	test_one_error("[moves]\nrebalance-interval-ms = 9\n",
		       "t.conf:2: rebalance-interval-ms = 9 is out of range: expected an integer from 10 to 60000");
	test_one_error("[notify]\nring-records = 1000\n",
		       "t.conf:2: ring-records = 1000 is out of range: expected a power of two from 64 to 65536");
	test_one_error("[notify]\nring-records = 32\n",
		       "t.conf:2: ring-records = 32 is out of range: expected a power of two from 64 to 65536");
	test_one_error("[notify]\nring-records = 131072\n",
		       "t.conf:2: ring-records = 131072 is out of range: expected a power of two from 64 to 65536");
	test_one_error("[limits]\nmax-clients = 0\n",
		       "t.conf:2: max-clients = 0 is out of range: expected an integer from 1 to 65536");
	test_one_error("[limits]\nmax-clients-per-user = 0\n",
		       "t.conf:2: max-clients-per-user = 0 is out of range: expected an integer from 1 to 65536");
	test_one_error("[limits]\nmax-claims-per-client = 8193\n",
		       "t.conf:2: max-claims-per-client = 8193 is out of range: expected an integer from 1 to 8192");
	/* The tracker's map keeps 256 threads for root whatever users hold. */
	test_one_error("[limits]\nmax-managed-threads = 3841\n",
		       "t.conf:2: max-managed-threads = 3841 is out of range: expected an integer from 1 to 3840");
	test_one_error("[limits]\nmax-claims-per-user = 0\n",
		       "t.conf:2: max-claims-per-user = 0 is out of range: expected an integer from 1 to 65536");
	test_one_error("[limits]\nmax-lease-ms = 86400001\n",
		       "t.conf:2: max-lease-ms = 86400001 is out of range: expected milliseconds from 1 to 86400000");
}

/* Integers are strict: digits only, nothing before or after, no wrap. */
static void test_strict_integers(void **state)
{
	static const char *const bad[] = { "+5", "-5", "5x", "5 5", "0x40", "5.0", "", "1e3", NULL };
	char text[128], msg[256];

	for (int i = 0; bad[i]; i++) {
		snprintf(text, sizeof(text), "[limits]\nmax-clients = %s\n", bad[i]);
		snprintf(msg, sizeof(msg),
			 "t.conf:2: invalid value '%s' for max-clients: expected an integer from 1 to 65536", bad[i]);
		test_one_error(text, msg);
	}
	test_one_error("[limits]\nmax-clients = 18446744073709551617\n",
		       "t.conf:2: max-clients = 18446744073709551617 is out of range: expected an integer from 1 "
		       "to 65536");
	test_one_error("[limits]\nmax-clients = 4294967297\n",
		       "t.conf:2: max-clients = 4294967297 is out of range: expected an integer from 1 to 65536");
}

static void test_structure_errors(void **state)
{
	test_one_error("socket = /x\n", "t.conf:1: key 'socket' outside of any section");
	test_one_error("[deamon]\nsocket = /x\nbogus = 1\n",
		       "t.conf:1: unknown section [deamon]: expected daemon, topology, tracker, placement, moves, notify, "
		       "limits, metrics, containers, rtkit or isolation");
	test_one_error("[daemon\nsocket = /x\n", "t.conf:1: malformed section header '[daemon': expected '[name]'");
	test_one_error("[daemon] junk\n", "t.conf:1: malformed section header '[daemon] junk': expected '[name]'");
	test_one_error("[]\n", "t.conf:1: unknown section []: expected daemon, topology, tracker, placement, moves, notify, "
			       "limits, metrics, containers, rtkit or isolation");
	test_one_error("[daemon]\nsockets = /x\n",
		       "t.conf:2: unknown key 'sockets' in [daemon]: expected socket, socket-group, socket-mode, "
		       "log-level");
	test_one_error("[daemon]\nSocket = /x\n",
		       "t.conf:2: unknown key 'Socket' in [daemon]: expected socket, socket-group, socket-mode, "
		       "log-level");
	test_one_error("[limits]\nmax-clients = 5\n\nmax-clients = 6\n",
		       "t.conf:4: duplicate key 'max-clients' in [limits] (first set on line 2)");
	test_one_error("[daemon]\nlog-level\n",
		       "t.conf:2: expected 'key = value', '[section]' or a comment, got 'log-level'");
	test_one_error("[daemon]\nsocket: /x\n",
		       "t.conf:2: expected 'key = value', '[section]' or a comment, got 'socket: /x'");
	test_one_error("[daemon]\n= /x\n", "t.conf:2: missing key name before '='");
	/* An inline comment before the '=' swallows it. */
	test_one_error("[daemon]\nsocket ;= /x\n",
		       "t.conf:2: expected 'key = value', '[section]' or a comment, got 'socket ;= /x'");
}

static void test_line_limits(void **state)
{
	char text[512];
	struct config c;

	/* 190 characters is the longest line accepted... */
	snprintf(text, sizeof(text), "[topology]\nfile = /%0182d\n", 0);
	assert_int_equal(strlen(strchr(text, 'f')), 191);
	assert_int_equal(test_load(text, &c, NULL), 0);
	assert_int_equal(strlen(c.topology.file), 183);
	/* ...indentation aside... */
	snprintf(text, sizeof(text), "[topology]\n        file = /%0182d\n", 0);
	assert_int_equal(test_load(text, &c, NULL), 0);
	/* ...and one more is an error, not a silently split line. */
	snprintf(text, sizeof(text), "[topology]\nfile = /%0183d\nshard = bad\n", 0);
	{
		const char *expected[] = {
			"t.conf:2: line too long: at most 190 characters",
			"t.conf:3: invalid value 'bad' for shard: expected node or llc",
			NULL,
		};

		assert_int_equal(test_load(text, &c, expected), -EINVAL);
	}
}

static void test_nul_and_control_bytes(void **state)
{
	static const char text[] = "[daemon]\nsocket = /a\0b\nlog-level = \x1b[31m\n";
	struct test_errors e = { 0 };
	struct config c;

	assert_int_equal(config_load_buffer("n.conf", text, sizeof(text) - 1, &c, test_error_cb, &e), -EINVAL);
	assert_int_equal(e.n, 2);
	assert_string_equal(e.msg[0], "n.conf:2: NUL byte in line");
	/* Control characters are not echoed to the log. */
	assert_string_equal(e.msg[1], "n.conf:3: invalid value '?[31m' for log-level: expected err, warning, notice, "
				      "info or debug");
	test_one_error("[daemon]\nsocket = /a\x01"
		       "b\n",
		       "t.conf:2: invalid value '/a?b' for socket: expected an absolute path of at most 107 characters");
}

/* One file, many errors: every one reported, in order, each on its line. */
static void test_all_errors_reported(void **state)
{
	static const char text[] =
		"[daemon]\n"                      /* 1 */
		"socket = /ok.sock\n"             /* 2 */
		"log-level = chatty\n"            /* 3 */
		"colour = blue\n"                 /* 4 */
		"[placement]\n"                   /* 5 */
		"prefer-idle = perhaps\n"         /* 6 */
		"this is not ini\n"               /* 7 */
		"claim-timeout-ms = -1\n"         /* 8 */
		"[nowhere]\n"                     /* 9 */
		"anything = at all\n"             /* 10 */
		"[limits]\n"                      /* 11 */
		"max-clients = 10\n"              /* 12 */
		"max-clients = 20\n"              /* 13 */
		"[notify]\n"                      /* 14 */
		"ring-records = 100\n";           /* 15 */
	static const char *const expected[] = {
		"t.conf:3: invalid value 'chatty' for log-level: expected err, warning, notice, info or debug",
		"t.conf:4: unknown key 'colour' in [daemon]: expected socket, socket-group, socket-mode, log-level",
		"t.conf:6: invalid value 'perhaps' for prefer-idle: expected yes, no, true, false, 1 or 0",
		"t.conf:7: expected 'key = value', '[section]' or a comment, got 'this is not ini'",
		"t.conf:8: invalid value '-1' for claim-timeout-ms: expected 0 (no lease) or milliseconds up to 86400000",
		"t.conf:9: unknown section [nowhere]: expected daemon, topology, tracker, placement, moves, notify, limits, metrics, containers, rtkit or isolation",
		"t.conf:13: duplicate key 'max-clients' in [limits] (first set on line 12)",
		"t.conf:15: ring-records = 100 is out of range: expected a power of two from 64 to 65536",
		NULL,
	};
	struct config c;

	assert_int_equal(test_load(text, &c, expected), -EINVAL);
}

/* On failure ret is not written at all: a bad reload keeps the old config. */
static void test_ret_untouched_on_failure(void **state)
{
	struct config c, before;

	memset(&c, 0x5a, sizeof(c));
	memcpy(&before, &c, sizeof(c));
	assert_int_equal(config_load_string("t.conf", "[daemon]\nsocket = /new.sock\nlog-level = x\n", &c, NULL,
					    NULL),
			 -EINVAL);
	assert_memory_equal(&c, &before, sizeof(c));

	config_defaults(&c);
	memcpy(&before, &c, sizeof(c));
	assert_int_equal(config_load_string("t.conf", "[moves]\nrt-groups = a\nmax-prio = 0\n", &c, NULL, NULL),
			 -EINVAL);
	assert_memory_equal(&c, &before, sizeof(c));
}

static void test_load_file(void **state)
{
	char dir[] = "/tmp/test-config.XXXXXX";
	char path[256];
	struct test_errors e = { 0 };
	struct rtplace_reason reason;
	struct config c, before;
	char want[512];
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/absent.conf", dir);
	memset(&c, 0x5a, sizeof(c));
	memcpy(&before, &c, sizeof(c));
	assert_int_equal(config_load(path, &reason, &c, test_error_cb, &e), -ENOENT);
	/* Not regular files: refused before any read, so a FIFO without a
	 * writer cannot block (alarm: a hang fails the test). */
	assert_int_equal(config_load(dir, &reason, &c, test_error_cb, &e), -EBADFD);
	snprintf(want, sizeof(want), "%s is not a regular file (a directory)", dir);
	assert_string_equal(reason.text, want);
	snprintf(path, sizeof(path), "%s/fifo.conf", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(10);
	assert_int_equal(config_load(path, &reason, &c, test_error_cb, &e), -EBADFD);
	alarm(0);
	snprintf(want, sizeof(want), "%s is not a regular file (a FIFO)", path);
	assert_string_equal(reason.text, want);
	/* A device that never ends (read until killed before). */
	alarm(10);
	assert_int_equal(config_load("/dev/zero", &reason, &c, test_error_cb, &e), -EBADFD);
	alarm(0);
	assert_string_equal(reason.text, "/dev/zero is not a regular file (a character device)");
	unlink(path);
	assert_int_equal(e.n, 0);
	assert_memory_equal(&c, &before, sizeof(c));

	snprintf(path, sizeof(path), "%s/rtplaced.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[moves]\nrebalance = yes\nmax-prio = 120\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(config_load(path, &reason, &c, test_error_cb, &e), -EINVAL);
	assert_int_equal(e.n, 1);
	snprintf(want, sizeof(want), "%s:3: max-prio = 120 is out of range: expected an integer from 1 to 99", path);
	assert_string_equal(e.msg[0], want);

	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[moves]\nrebalance = yes\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(config_load(path, &reason, &c, NULL, NULL), 0);
	assert_true(c.moves.rebalance);

	/* Anything above CONFIG_FILE_MAX is refused before parsing. */
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < CONFIG_FILE_MAX / 16 + 1; i++)
		fputs("# padding......\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(config_load(path, &reason, &c, NULL, NULL), -EFBIG);
	snprintf(want, sizeof(want), "%s is longer than %d bytes", path, CONFIG_FILE_MAX);
	assert_string_equal(reason.text, want);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* The default path's rule: no file there is the defaults; a file named
 * must exist. The default path itself is read only where no file lies at
 * it (it belongs to the machine, not to the test). */
static void test_load_default(void **state)
{
	char dir[] = "/tmp/test-config.XXXXXX";
	char path[256];
	struct rtplace_reason reason;
	struct config c, defaults, before;
	bool defaulted = true;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	config_defaults(&defaults);
	snprintf(path, sizeof(path), "%s/absent.conf", dir);
	memset(&c, 0x5a, sizeof(c));
	memcpy(&before, &c, sizeof(c));
	assert_int_equal(config_load_default(path, &reason, &c, NULL, NULL, &defaulted), -ENOENT);
	assert_memory_equal(&c, &before, sizeof(c));
	assert_true(defaulted);

	snprintf(path, sizeof(path), "%s/rtplaced.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[moves]\nrebalance = yes\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(config_load_default(path, &reason, &c, NULL, NULL, &defaulted), 0);
	assert_false(defaulted);
	assert_true(c.moves.rebalance);
	assert_int_equal(config_load_default(path, &reason, &c, NULL, NULL, NULL), 0);

	if (access(CONFIG_DEFAULT_PATH, F_OK) < 0 && errno == ENOENT) {
		memcpy(&c, &before, sizeof(c));
		assert_int_equal(config_load_default(NULL, &reason, &c, NULL, NULL, &defaulted), 0);
		assert_true(defaulted);
		assert_memory_equal(&c, &defaults, sizeof(c));
	}
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* A file of the source tree, NUL-terminated; its size in *ret_size. */
static char *test_read_source(const char *rel, size_t *ret_size)
{
	const char *top = getenv("top_srcdir");
	char path[1024];
	char *text;
	long size;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top ? top : ".", rel);
	f = fopen(path, "r");
	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size >= 0);
	rewind(f);
	text = calloc(1, (size_t)size + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	*ret_size = (size_t)size;
	return text;
}

/*
 * The shipped example documents every key at its default. As shipped
 * (all commented out) it must parse to the defaults, and with every
 * "#key = value" line uncommented it must still equal the defaults, and
 * name every key: what the example says is what the daemon does.
 */
static void test_example_is_the_defaults(void **state)
{
	size_t size;
	char *text = test_read_source("conf/rtplaced.conf", &size);
	struct config c, d;
	unsigned keys = 0;

	config_defaults(&d);
	assert_int_equal(test_load(text, &c, NULL), 0);
	assert_true(config_equal(&c, &d));

	for (char *line = text; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line))
		if (line[0] == '#' && line[1] >= 'a' && line[1] <= 'z') {
			line[0] = ' ';
			keys++;
		}
	assert_int_equal(keys, 56);
	assert_int_equal(test_load(text, &c, NULL), 0);
	assert_true(config_equal(&c, &d));
	assert_memory_equal(&c, &d, sizeof(c));
	free(text);
}

/* The fuzz corpus is named by what it must do: valid-* load, invalid-* fail. */
static void test_corpus_expectations(void **state)
{
	const char *top = getenv("top_srcdir");
	char dir[1024], rel[1024];
	unsigned valid = 0, invalid = 0;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/config", top ? top : ".");
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		bool is_valid = strncmp(de->d_name, "valid-", 6) == 0;
		struct config c;
		size_t size;
		char *text;
		int r;

		if (!is_valid && strncmp(de->d_name, "invalid-", 8) != 0)
			continue;
		snprintf(rel, sizeof(rel), "tests/fuzz/corpus/config/%s", de->d_name);
		text = test_read_source(rel, &size);
		r = config_load_buffer(de->d_name, text, size, &c, NULL, NULL);
		if (r != (is_valid ? 0 : -EINVAL))
			fail_msg("%s: got %d", de->d_name, r);
		free(text);
		if (is_valid)
			valid++;
		else
			invalid++;
	}
	closedir(d);
	assert_true(valid >= 3);
	assert_true(invalid >= 5);
}

static void test_manage_rules(void **state)
{
	struct config c, d;

	config_defaults(&d);
	assert_int_equal(d.moves.n_manage_comm, 0);
	assert_int_equal(d.moves.n_manage_uid, 0);
	assert_int_equal(d.moves.n_manage_cgroup, 0);

	assert_int_equal(test_load("[moves]\n"
				   "manage-comm = ffmpeg\tx264-worker-123 gst-launch-1.0\n"
				   "manage-uid = media 1001 0\n"
				   "manage-cgroup = /system.slice/ffmpeg.service /\n",
				   &c, NULL), 0);
	assert_int_equal(c.moves.n_manage_comm, 3);
	assert_string_equal(c.moves.manage_comm[0], "ffmpeg");
	assert_string_equal(c.moves.manage_comm[1], "x264-worker-123");
	assert_string_equal(c.moves.manage_comm[2], "gst-launch-1.0");
	assert_int_equal(c.moves.n_manage_uid, 3);
	assert_string_equal(c.moves.manage_uid[0], "media");
	assert_string_equal(c.moves.manage_uid[1], "1001");
	assert_string_equal(c.moves.manage_uid[2], "0");
	assert_int_equal(c.moves.n_manage_cgroup, 2);
	assert_string_equal(c.moves.manage_cgroup[0], "/system.slice/ffmpeg.service");
	assert_string_equal(c.moves.manage_cgroup[1], "/");
	assert_differs(&d, &c, NULL);

	/* Empty lists are the defaults; 16 entries is the limit. */
	assert_int_equal(test_load("[moves]\nmanage-comm =\nmanage-uid =  \nmanage-cgroup =\n", &c, NULL), 0);
	assert_memory_equal(&c, &d, sizeof(c));
	assert_int_equal(test_load("[moves]\nmanage-uid = 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n", &c, NULL), 0);
	assert_int_equal(c.moves.n_manage_uid, 16);
	assert_string_equal(c.moves.manage_uid[15], "15");
	assert_int_equal(test_load("[moves]\nmanage-uid = 4294967294\n", &c, NULL), 0);

	test_one_error("[moves]\nmanage-uid = 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",
		       "t.conf:2: manage-uid = 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 is out of range: expected "
		       "user names or numeric uids separated by blanks, each once, at most 16");
	test_one_error("[moves]\nmanage-uid = 4294967295\n",
		       "t.conf:2: manage-uid = 4294967295 is out of range: expected user names or numeric uids "
		       "separated by blanks, each once, at most 16");
	test_one_error("[moves]\nmanage-uid = 1media\n",
		       "t.conf:2: invalid value '1media' for manage-uid: expected user names or numeric uids "
		       "separated by blanks, each once, at most 16");
	test_one_error("[moves]\nmanage-uid = media,video\n",
		       "t.conf:2: invalid value 'media,video' for manage-uid: expected user names or numeric uids "
		       "separated by blanks, each once, at most 16");
	test_one_error("[moves]\nmanage-comm = ffmpeg ffmpeg\n",
		       "t.conf:2: invalid value 'ffmpeg ffmpeg' for manage-comm: expected command names of at most "
		       "15 characters separated by blanks, each once, at most 16");
	test_one_error("[moves]\nmanage-comm = x264-worker-1234\n",
		       "t.conf:2: manage-comm is too long: expected command names of at most 15 characters "
		       "separated by blanks, each once, at most 16");
	test_one_error("[moves]\nmanage-cgroup = system.slice\n",
		       "t.conf:2: invalid value 'system.slice' for manage-cgroup: expected absolute cgroup paths "
		       "separated by blanks, each once, at most 16");

	/* Every error, each with its line; a bad rule leaves no config. */
	{
		const char *expected[] = {
			"t.conf:3: invalid value 'a?b' for manage-comm: expected command names of at most 15 "
			"characters separated by blanks, each once, at most 16",
			"t.conf:4: invalid value 'relative' for manage-cgroup: expected absolute cgroup paths "
			"separated by blanks, each once, at most 16",
			"t.conf:5: duplicate key 'manage-uid' in [moves] (first set on line 2)",
			NULL,
		};

		assert_int_equal(test_load("[moves]\nmanage-uid = root\nmanage-comm = a\x01" "b\n"
					   "manage-cgroup = relative\nmanage-uid = 0\n", &c, expected), -EINVAL);
	}
}

#define TEST_LISTEN_EXPECTED                                                                           \
	"expected HOST:PORT with a numeric IPv4 address or an IPv6 address in brackets (127.0.0.1:9808, " \
	"[::1]:9808) and a port from 1 to 65535, or nothing"

/* [metrics]: off by default; numeric HOST:PORT only, IPv6 in brackets;
 * each bad value names the key. */
static void test_metrics(void **state)
{
	static const char *const bad[] = {
		"localhost:9808", "127.0.0.1", "127.0.0.1:", ":9808", "::1:9808", "[::1]", "[::1:9808",
		"[127.0.0.1]:9808", "127.0.0.256:9808", "[]:9808", "[::1]x:9808", "127.0.0.1:+80", "127.0.0.1:http",
	};
	struct config c;
	char text[256], msg[512];

	config_defaults(&c);
	assert_int_equal(c.metrics.port, 0);
	assert_string_equal(c.metrics.host, "");
	assert_false(c.metrics.bpf_stats);

	assert_int_equal(test_load("[metrics]\nlisten = 127.0.0.1:9808\nbpf-stats = yes\n", &c, NULL), 0);
	assert_string_equal(c.metrics.host, "127.0.0.1");
	assert_int_equal(c.metrics.port, 9808);
	assert_true(c.metrics.bpf_stats);
	assert_int_equal(test_load("[metrics]\nlisten = [::1]:65535\n", &c, NULL), 0);
	assert_string_equal(c.metrics.host, "::1");
	assert_int_equal(c.metrics.port, 65535);
	assert_int_equal(test_load("[metrics]\nlisten = [fd00::a:1]:1\n", &c, NULL), 0);
	assert_string_equal(c.metrics.host, "fd00::a:1");
	assert_int_equal(c.metrics.port, 1);
	assert_int_equal(test_load("[metrics]\nlisten =\n", &c, NULL), 0);
	assert_int_equal(c.metrics.port, 0);
	assert_string_equal(c.metrics.host, "");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[metrics]\nlisten = %s\n", bad[i]);
		snprintf(msg, sizeof(msg), "t.conf:2: invalid value '%s' for listen: " TEST_LISTEN_EXPECTED, bad[i]);
		test_one_error(text, msg);
	}
	test_one_error("[metrics]\nlisten = 127.0.0.1:0\n",
		       "t.conf:2: listen = 127.0.0.1:0 is out of range: " TEST_LISTEN_EXPECTED);
	test_one_error("[metrics]\nlisten = [::1]:65536\n",
		       "t.conf:2: listen = [::1]:65536 is out of range: " TEST_LISTEN_EXPECTED);
	test_one_error("[metrics]\nbpf-stats = sometimes\n",
		       "t.conf:2: invalid value 'sometimes' for bpf-stats: expected yes, no, true, false, 1 or 0");
}

static void test_rtkit(void **state)
{
	struct config c, d;

	config_defaults(&c);
	assert_false(c.rtkit.enable);
	assert_int_equal(c.rtkit.rttime_usec_max, 200000);
	assert_int_equal(c.rtkit.max_realtime_priority, 20);
	assert_int_equal(c.rtkit.scheduling_policy, SCHED_RR);
	assert_int_equal(c.rtkit.min_nice_level, -15);
	assert_int_equal(c.rtkit.actions_burst_sec, 20);
	assert_int_equal(c.rtkit.actions_per_burst_max, 25);
	assert_int_equal(c.rtkit.max_threads_per_user, 25);
	assert_int_equal(c.rtkit.max_processes_per_user, 15);
	assert_int_equal(c.rtkit.watchdog_interval_ms, 1000);
	assert_int_equal(c.rtkit.watchdog_busy_percent, 90);
	assert_int_equal(c.rtkit.watchdog_refuse_sec, 300);
	assert_int_equal(test_load("[rtkit]\nwatchdog-interval-ms = 0\nwatchdog-busy-percent = 100\n"
				   "watchdog-refuse-sec = 0\n", &c, NULL),
			 0);
	assert_int_equal(c.rtkit.watchdog_interval_ms, 0);
	assert_int_equal(c.rtkit.watchdog_busy_percent, 100);
	assert_int_equal(c.rtkit.watchdog_refuse_sec, 0);
	test_one_error("[rtkit]\nwatchdog-interval-ms = 99\n",
		       "t.conf:2: watchdog-interval-ms = 99 is out of range: expected 0 (no watchdog) or milliseconds "
		       "from 100 to 60000");
	test_one_error("[rtkit]\nwatchdog-busy-percent = 0\n",
		       "t.conf:2: watchdog-busy-percent = 0 is out of range: expected an integer from 1 to 100");
	assert_int_equal(test_load("[rtkit]\nenable = yes\nrttime-usec-max = 1\nmax-realtime-priority = 99\n"
				   "min-nice-level = -20\nactions-burst-sec = 1\nactions-per-burst-max = 3\n"
				   "max-threads-per-user = 2\nmax-processes-per-user = 1\n",
				   &c, NULL),
			 0);
	assert_true(c.rtkit.enable);
	assert_int_equal(c.rtkit.rttime_usec_max, 1);
	assert_int_equal(c.rtkit.max_realtime_priority, 99);
	assert_int_equal(c.rtkit.min_nice_level, -20);
	assert_int_equal(c.rtkit.actions_per_burst_max, 3);
	assert_int_equal(c.rtkit.max_threads_per_user, 2);
	assert_int_equal(c.rtkit.max_processes_per_user, 1);
	assert_int_equal(test_load("[rtkit]\nmin-nice-level = 19\n", &c, NULL), 0);
	assert_int_equal(c.rtkit.min_nice_level, 19);
	assert_int_equal(test_load("[rtkit]\nmin-nice-level = 0\n", &c, NULL), 0);
	assert_int_equal(c.rtkit.min_nice_level, 0);
	/* 0 would tell clients to set RLIMIT_RTTIME 0, which kills them. */
	test_one_error("[rtkit]\nrttime-usec-max = 0\n",
		       "t.conf:2: rttime-usec-max = 0 is out of range: expected microseconds from 1 to 60000000");
	test_one_error("[rtkit]\nmax-realtime-priority = 100\n",
		       "t.conf:2: max-realtime-priority = 100 is out of range: expected an integer from 1 to 99");
	/* rtkit's --scheduling-policy: SCHED_RR or SCHED_FIFO, nothing else. */
	assert_int_equal(test_load("[rtkit]\nscheduling-policy = fifo\n", &c, NULL), 0);
	assert_int_equal(c.rtkit.scheduling_policy, SCHED_FIFO);
	assert_int_equal(test_load("[rtkit]\nscheduling-policy = rr\n", &c, NULL), 0);
	assert_int_equal(c.rtkit.scheduling_policy, SCHED_RR);
	test_one_error("[rtkit]\nscheduling-policy = other\n",
		       "t.conf:2: invalid value 'other' for scheduling-policy: expected rr or fifo");
	test_one_error("[rtkit]\nscheduling-policy = deadline\n",
		       "t.conf:2: invalid value 'deadline' for scheduling-policy: expected rr or fifo");
	test_one_error("[rtkit]\nmin-nice-level = -21\n",
		       "t.conf:2: min-nice-level = -21 is out of range: expected an integer from -20 to 19");
	test_one_error("[rtkit]\nmin-nice-level = 20\n",
		       "t.conf:2: min-nice-level = 20 is out of range: expected an integer from -20 to 19");
	test_one_error("[rtkit]\nmin-nice-level = --1\n",
		       "t.conf:2: invalid value '--1' for min-nice-level: expected an integer from -20 to 19");
	test_one_error("[rtkit]\nenable = maybe\n",
		       "t.conf:2: invalid value 'maybe' for enable: expected yes, no, true, false, 1 or 0");
	/* The bus name is taken at start; the rules follow a reload. */
	config_defaults(&c);
	d = c;
	d.rtkit.enable = true;
	assert_differs(&c, &d, "rtkit.enable");
	d = c;
	d.rtkit.max_realtime_priority = 30;
	assert_differs(&c, &d, NULL);
	d = c;
	d.rtkit.scheduling_policy = SCHED_FIFO;
	assert_differs(&c, &d, NULL);
}

static void test_tracker(void **state)
{
	static const char *const contradiction[] = {
		"t.conf:3: required = yes asks for the BPF tracker, which mode = sampled never loads",
		NULL,
	};
	struct config c, d;

	config_defaults(&c);
	assert_int_equal(c.tracker.mode, CONFIG_TRACKER_AUTO);
	assert_false(c.tracker.required);
	assert_int_equal(c.tracker.sample_interval_ms, 100);

	assert_int_equal(test_load("[tracker]\nmode = sampled\nsample-interval-ms = 10\n", &c, NULL), 0);
	assert_int_equal(c.tracker.mode, CONFIG_TRACKER_SAMPLED);
	assert_int_equal(c.tracker.sample_interval_ms, 10);
	assert_int_equal(test_load("[tracker]\nmode = auto\nrequired = yes\nsample-interval-ms = 10000\n", &c, NULL),
			 0);
	assert_int_equal(c.tracker.mode, CONFIG_TRACKER_AUTO);
	assert_true(c.tracker.required);
	assert_int_equal(c.tracker.sample_interval_ms, 10000);

	test_one_error("[tracker]\nmode = bpf\n", "t.conf:2: invalid value 'bpf' for mode: expected auto or sampled");
	test_one_error("[tracker]\nrequired = maybe\n",
		       "t.conf:2: invalid value 'maybe' for required: expected yes, no, true, false, 1 or 0");
	test_one_error("[tracker]\nsample-interval-ms = 9\n",
		       "t.conf:2: sample-interval-ms = 9 is out of range: expected an integer from 10 to 10000");
	test_one_error("[tracker]\nsample-interval-ms = 10001\n",
		       "t.conf:2: sample-interval-ms = 10001 is out of range: expected an integer from 10 to 10000");
	test_one_error("[tracker]\nsample-rate = 10\n",
		       "t.conf:2: unknown key 'sample-rate' in [tracker]: expected mode, required, sample-interval-ms");
	/* The contradiction is reported once, at the later of its two lines,
	 * whichever key comes first; either key alone is fine. */
	assert_int_equal(test_load("[tracker]\nmode = sampled\nrequired = yes\n", &c, contradiction), -EINVAL);
	assert_int_equal(test_load("[tracker]\nrequired = yes\nmode = sampled\n", &c, contradiction), -EINVAL);
	assert_int_equal(test_load("[tracker]\nrequired = no\nmode = sampled\n", &c, NULL), 0);

	config_defaults(&c);
	d = c;
	d.tracker.mode = CONFIG_TRACKER_SAMPLED;
	assert_differs(&c, &d, "tracker.mode");
	d = c;
	d.tracker.required = true;
	assert_differs(&c, &d, "tracker.required");
	d = c;
	d.tracker.sample_interval_ms = 50;
	assert_differs(&c, &d, "tracker.sample-interval-ms");
}

static void test_equal_and_restart_key(void **state)
{
	struct config a, b;

	config_defaults(&a);
	config_defaults(&b);
	assert_true(config_equal(&a, &b));
	assert_null(config_restart_key(&a, &b));

	b.limits.max_clients = 5;
	assert_differs(&a, &b, NULL);

	config_defaults(&b);
	snprintf(b.moves.rt_groups[0], CONFIG_GROUP_MAX, "audio");
	b.moves.n_rt_groups = 1;
	assert_false(config_equal(&a, &b));
	a = b;
	snprintf(b.moves.rt_groups[0], CONFIG_GROUP_MAX, "video");
	assert_false(config_equal(&a, &b));

	config_defaults(&b);
	b.topology.shard = TOPO_SHARD_LLC;
	assert_string_equal(config_restart_key(&a, &b), "topology.shard");
	config_defaults(&b);
	config_defaults(&a);
	b.daemon.socket_mode = 0600;
	assert_string_equal(config_restart_key(&a, &b), "daemon.socket-mode");
	b.daemon.socket_mode = a.daemon.socket_mode;
	snprintf(b.daemon.socket_group, sizeof(b.daemon.socket_group), "rtplace");
	assert_string_equal(config_restart_key(&a, &b), "daemon.socket-group");
	config_defaults(&b);
	snprintf(b.topology.file, sizeof(b.topology.file), "/x.xml");
	assert_string_equal(config_restart_key(&a, &b), "topology.file");
	config_defaults(&b);
	b.metrics.port = 9808;
	assert_differs(&a, &b, "metrics.listen");
	config_defaults(&b);
	snprintf(b.metrics.host, sizeof(b.metrics.host), "::1");
	assert_string_equal(config_restart_key(&a, &b), "metrics.listen");
	config_defaults(&b);
	b.metrics.bpf_stats = true;
	assert_differs(&a, &b, "metrics.bpf-stats");
	/* The hook reads [containers] at every container start. */
	config_defaults(&b);
	b.containers.max_prio = 10;
	assert_differs(&a, &b, NULL);
	config_defaults(&b);
	b.containers.allow_exclusive = false;
	assert_false(config_equal(&a, &b));
	config_defaults(&b);
	b.containers.max_cpus = 1;
	assert_false(config_equal(&a, &b));
}

/* [containers]: defaults grant what the spec allows; each key's range. */
static void test_containers(void **state)
{
	struct config c;

	(void)state;
	assert_int_equal(test_load("", &c, NULL), 0);
	assert_int_equal(c.containers.max_prio, 99);
	assert_true(c.containers.allow_exclusive);
	assert_int_equal(c.containers.max_cpus, CONFIG_CONTAINER_CPUS_MAX);
	test_one_error("[containers]\nmax-prio = 0\n",
		       "t.conf:2: max-prio = 0 is out of range: expected an integer from 1 to 99");
	test_one_error("[containers]\nmax-cpus = 257\n",
		       "t.conf:2: max-cpus = 257 is out of range: expected an integer from 1 to 256");
	test_one_error("[containers]\nallow-exclusive = maybe\n",
		       "t.conf:2: invalid value 'maybe' for allow-exclusive: expected yes, no, true, false, 1 or 0");
	test_one_error("[containers]\nmax-priority = 5\n",
		       "t.conf:2: unknown key 'max-priority' in [containers]: expected max-prio, allow-exclusive, max-cpus");
}

static void test_isolation(void **state)
{
	struct config c, d;

	(void)state;
	assert_int_equal(test_load("", &c, NULL), 0);
	assert_false(c.isolation.partition);
	assert_false(c.isolation.irqs);
	assert_false(c.isolation.workqueues);
	assert_string_equal(c.isolation.cgroup_root, "/sys/fs/cgroup");
	assert_int_equal(test_load("[isolation]\npartition = yes\nirqs = true\nworkqueues = 1\n"
				   "cgroup-root = /tmp/cg\n", &c, NULL), 0);
	assert_true(c.isolation.partition);
	assert_true(c.isolation.irqs);
	assert_true(c.isolation.workqueues);
	assert_string_equal(c.isolation.cgroup_root, "/tmp/cg");
	config_defaults(&d);
	assert_differs(&d, &c, "isolation.partition");
	d = c;
	d.isolation.workqueues = false;
	assert_differs(&c, &d, "isolation.workqueues");
	d = c;
	snprintf(d.isolation.cgroup_root, sizeof(d.isolation.cgroup_root), "/sys/fs/cgroup");
	assert_differs(&c, &d, "isolation.cgroup-root");
	test_one_error("[isolation]\nirqs = maybe\n",
		       "t.conf:2: invalid value 'maybe' for irqs: expected yes, no, true, false, 1 or 0");
	test_one_error("[isolation]\ncgroup-root = sys/fs/cgroup\n",
		       "t.conf:2: invalid value 'sys/fs/cgroup' for cgroup-root: expected an absolute path of at "
		       "most 191 characters");
	test_one_error("[isolation]\ncpus = 1\n",
		       "t.conf:2: unknown key 'cpus' in [isolation]: expected partition, irqs, workqueues, cgroup-root");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_empty_file_is_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_comments_and_whitespace),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_strict_integers),
		cmocka_unit_test(test_structure_errors),
		cmocka_unit_test(test_line_limits),
		cmocka_unit_test(test_nul_and_control_bytes),
		cmocka_unit_test(test_all_errors_reported),
		cmocka_unit_test(test_ret_untouched_on_failure),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_load_default),
		cmocka_unit_test(test_example_is_the_defaults),
		cmocka_unit_test(test_corpus_expectations),
		cmocka_unit_test(test_equal_and_restart_key),
		cmocka_unit_test(test_manage_rules),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_tracker),
		cmocka_unit_test(test_containers),
		cmocka_unit_test(test_rtkit),
		cmocka_unit_test(test_isolation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
