/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of what rtplace-oci-hook grants a container
 * (client/oci-rights.c), over config.json fragments as runc, podman and
 * CRI-O write them: an RT priority only with CAP_SYS_NICE in the effective
 * and bounding sets (outside a user namespace of the container's) or a soft
 * RLIMIT_RTPRIO at least that priority; exclusive only with the
 * capability; the node's [containers] policy narrowing both; a member of
 * the wrong type refused by name.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "oci-rights.h"
#include "rtplace-proto.h"

#define CAPS_WITH \
	"\"capabilities\":{\"bounding\":[\"CAP_KILL\",\"CAP_SYS_NICE\"],\"effective\":[\"CAP_SYS_NICE\",\"CAP_KILL\"]}"
#define CAPS_WITHOUT "\"capabilities\":{\"bounding\":[\"CAP_KILL\"],\"effective\":[\"CAP_KILL\"]}"

/* The rights of the config text; fails the test if it does not parse. */
static struct oci_rights rights_of(const char *text)
{
	struct rtplace_reason reason;
	struct oci_rights r;
	json_object *obj = json_tokener_parse(text);

	assert_non_null(obj);
	assert_int_equal(oci_rights_parse(obj, &r, &reason), 0);
	json_object_put(obj);
	return r;
}

/* oci_rights_check of text's rights with the default policy. */
static int check(const char *text, int prio, bool exclusive, struct rtplace_reason *reason)
{
	const struct oci_request req = { .prio = prio, .exclusive = exclusive, .count = 1 };
	struct oci_rights r = rights_of(text);
	struct config c;

	config_defaults(&c);
	return oci_rights_check(&r, &c.containers, &req, reason);
}

static void test_parse(void **state)
{
	struct oci_rights r;

	(void)state;
	r = rights_of("{}");
	assert_false(r.cap_sys_nice);
	assert_false(r.userns);
	assert_int_equal(r.rtprio, 0);
	r = rights_of("{\"process\":{" CAPS_WITH "}}");
	assert_true(r.cap_sys_nice);
	r = rights_of("{\"process\":{" CAPS_WITHOUT "}}");
	assert_false(r.cap_sys_nice);
	/* One set is not enough: the bounding set caps what effective holds
	 * after the runtime's exec, the effective set is what the process has. */
	r = rights_of("{\"process\":{\"capabilities\":{\"effective\":[\"CAP_SYS_NICE\"]}}}");
	assert_false(r.cap_sys_nice);
	r = rights_of("{\"process\":{\"capabilities\":{\"bounding\":[\"CAP_SYS_NICE\"],\"permitted\":[\"CAP_SYS_NICE\"]}}}");
	assert_false(r.cap_sys_nice);
	r = rights_of("{\"process\":{\"capabilities\":{\"bounding\":[\"cap_sys_nice\"],\"effective\":[\"SYS_NICE\"]}}}");
	assert_false(r.cap_sys_nice);
	r = rights_of("{\"process\":{\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,\"soft\":1024},"
		      "{\"type\":\"RLIMIT_RTPRIO\",\"hard\":90,\"soft\":60}]}}");
	assert_int_equal(r.rtprio, 60);
	r = rights_of("{\"process\":{\"rlimits\":[{\"type\":\"RLIMIT_RTPRIO\",\"hard\":18446744073709551615,"
		      "\"soft\":18446744073709551615}]}}");
	assert_int_equal(r.rtprio, UINT64_MAX);
	r = rights_of("{\"process\":{" CAPS_WITH "},\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"user\"}]}}");
	assert_true(r.cap_sys_nice);
	assert_true(r.userns);
	r = rights_of("{\"process\":null,\"linux\":{\"namespaces\":null}}");
	assert_false(r.cap_sys_nice);
}

static void test_parse_errors(void **state)
{
	static const struct {
		const char *text, *reason;
	} cases[] = {
		{ "[]", "config.json is not a JSON object" },
		{ "{\"process\":[]}", "process is not an object" },
		{ "{\"process\":{\"capabilities\":[\"CAP_SYS_NICE\"]}}", "process.capabilities is not an object" },
		{ "{\"process\":{\"capabilities\":{\"effective\":\"CAP_SYS_NICE\"}}}",
		  "process.capabilities.effective is not an array of capability names" },
		{ "{\"process\":{\"capabilities\":{\"effective\":[],\"bounding\":[7]}}}",
		  "process.capabilities.bounding[0] is not a capability name" },
		{ "{\"process\":{\"rlimits\":{}}}", "process.rlimits is not an array" },
		{ "{\"process\":{\"rlimits\":[{\"soft\":1}]}}", "process.rlimits[0] has no \"type\" string" },
		{ "{\"process\":{\"rlimits\":[{\"type\":\"RLIMIT_RTPRIO\",\"soft\":\"99\"}]}}",
		  "process.rlimits[0] (RLIMIT_RTPRIO) has no \"soft\" limit 0 or above" },
		{ "{\"process\":{\"rlimits\":[{\"type\":\"RLIMIT_RTPRIO\",\"soft\":-1}]}}",
		  "process.rlimits[0] (RLIMIT_RTPRIO) has no \"soft\" limit 0 or above" },
		{ "{\"process\":{\"rlimits\":[{\"type\":\"RLIMIT_RTPRIO\",\"soft\":1},{\"type\":\"RLIMIT_RTPRIO\",\"soft\":99}]}}",
		  "process.rlimits lists RLIMIT_RTPRIO twice" },
		{ "{\"linux\":{\"namespaces\":{\"user\":1}}}", "linux.namespaces is not an array" },
		{ "{\"linux\":{\"namespaces\":[{\"path\":\"/x\"}]}}", "linux.namespaces[0] has no \"type\" string" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rtplace_reason reason;
		struct oci_rights r = { .cap_sys_nice = true, .rtprio = 7 };
		json_object *obj = json_tokener_parse(cases[i].text);

		assert_non_null(obj);
		assert_int_equal(oci_rights_parse(obj, &r, &reason), -EINVAL);
		assert_string_equal(reason.text, cases[i].reason);
		/* ret is left as it was. */
		assert_true(r.cap_sys_nice);
		assert_int_equal(r.rtprio, 7);
		json_object_put(obj);
	}
}

static void test_priority(void **state)
{
	struct rtplace_reason reason;

	(void)state;
	assert_int_equal(check("{\"process\":{" CAPS_WITH "}}", 99, false, &reason), 0);
	assert_int_equal(check("{\"process\":{" CAPS_WITHOUT "}}", 50, false, &reason), -EPERM);
	assert_string_equal(reason.text,
			    "priority 50 needs CAP_SYS_NICE (effective and bounding sets) or RLIMIT_RTPRIO >= 50, and "
			    "the container's spec gives no CAP_SYS_NICE and RLIMIT_RTPRIO 0: grant one (podman or "
			    "docker --cap-add SYS_NICE; Kubernetes securityContext.capabilities.add: [\"SYS_NICE\"]; "
			    "or podman or docker --ulimit rtprio=50)");
	/* The rlimit: at the priority is enough, below is not. */
	assert_int_equal(check("{\"process\":{\"rlimits\":[{\"type\":\"RLIMIT_RTPRIO\",\"hard\":50,\"soft\":50}]}}", 50,
			       false, &reason),
			 0);
	assert_int_equal(check("{\"process\":{\"rlimits\":[{\"type\":\"RLIMIT_RTPRIO\",\"hard\":49,\"soft\":49}]}}", 50,
			       false, &reason),
			 -EPERM);
	assert_non_null(strstr(reason.text, "gives no CAP_SYS_NICE and RLIMIT_RTPRIO 49: grant one"));
	/* The soft limit is the one the kernel checks. */
	assert_int_equal(check("{\"process\":{\"rlimits\":[{\"type\":\"RLIMIT_RTPRIO\",\"hard\":99,\"soft\":10}]}}", 50,
			       false, &reason),
			 -EPERM);
	/* CAP_SYS_NICE of the container's own user namespace. */
	assert_int_equal(check("{\"process\":{" CAPS_WITH "},\"linux\":{\"namespaces\":[{\"type\":\"user\"}]}}", 10,
			       false, &reason),
			 -EPERM);
	assert_non_null(strstr(reason.text, "gives CAP_SYS_NICE only inside its own user namespace (no RT right on "
					    "the host) and RLIMIT_RTPRIO 0"));
	assert_int_equal(check("{\"process\":{" CAPS_WITH ",\"rlimits\":[{\"type\":\"RLIMIT_RTPRIO\",\"soft\":10}]},"
			       "\"linux\":{\"namespaces\":[{\"type\":\"user\"}]}}",
			       10, false, &reason),
			 0);
	/* No process at all grants nothing. */
	assert_int_equal(check("{}", 1, false, &reason), -EPERM);
}

static void test_exclusive(void **state)
{
	struct rtplace_reason reason;

	(void)state;
	assert_int_equal(check("{\"process\":{" CAPS_WITH "}}", 50, true, &reason), 0);
	assert_int_equal(check("{\"process\":{" CAPS_WITHOUT ",\"rlimits\":[{\"type\":\"RLIMIT_RTPRIO\",\"soft\":99}]}}",
			       50, true, &reason),
			 -EPERM);
	assert_string_equal(reason.text,
			    "io.rtplace.exclusive=true needs CAP_SYS_NICE (effective and bounding sets; an "
			    "RLIMIT_RTPRIO does not do), and the container's spec gives no CAP_SYS_NICE and "
			    "RLIMIT_RTPRIO 99: add it (podman or docker --cap-add SYS_NICE; Kubernetes "
			    "securityContext.capabilities.add: [\"SYS_NICE\"])");
}

static void test_node_policy(void **state)
{
	struct oci_rights r = rights_of("{\"process\":{" CAPS_WITH "}}");
	struct oci_request req = { .prio = 50, .count = 2 };
	struct rtplace_reason reason;
	struct config c;

	(void)state;
	config_defaults(&c);
	c.containers.max_prio = 50;
	assert_int_equal(oci_rights_check(&r, &c.containers, &req, &reason), 0);
	c.containers.max_prio = 49;
	assert_int_equal(oci_rights_check(&r, &c.containers, &req, &reason), -EPERM);
	assert_string_equal(reason.text, "priority 50 is above this node's [containers] max-prio = 49 (rtplaced.conf)");

	config_defaults(&c);
	req.exclusive = true;
	c.containers.allow_exclusive = false;
	assert_int_equal(oci_rights_check(&r, &c.containers, &req, &reason), -EPERM);
	assert_string_equal(reason.text, "io.rtplace.exclusive=true: this node's [containers] allow-exclusive = no "
					 "(rtplaced.conf)");
	req.exclusive = false;
	assert_int_equal(oci_rights_check(&r, &c.containers, &req, &reason), 0);

	c.containers.max_cpus = 2;
	assert_int_equal(oci_rights_check(&r, &c.containers, &req, &reason), 0);
	c.containers.max_cpus = 1;
	assert_int_equal(oci_rights_check(&r, &c.containers, &req, &reason), -EPERM);
	assert_string_equal(reason.text, "2 CPUs asked, above this node's [containers] max-cpus = 1 (rtplaced.conf)");

	/* The policy never widens: max-prio 99 grants nothing without rights. */
	config_defaults(&c);
	r = rights_of("{}");
	assert_int_equal(oci_rights_check(&r, &c.containers, &req, &reason), -EPERM);
}

static void test_lease(void **state)
{
	struct oci_rights r = rights_of("{\"process\":{" CAPS_WITH "}}");

	(void)state;
	assert_int_equal(oci_rights_lease_ms(&r, 60000), RTPLACE_LEASE_INFINITE);
	r = rights_of("{\"process\":{\"rlimits\":[{\"type\":\"RLIMIT_RTPRIO\",\"soft\":99}]}}");
	assert_int_equal(oci_rights_lease_ms(&r, 60000), 60000);
	r = rights_of("{\"process\":{" CAPS_WITH "},\"linux\":{\"namespaces\":[{\"type\":\"user\"}]}}");
	assert_int_equal(oci_rights_lease_ms(&r, 1000), 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_priority),
		cmocka_unit_test(test_exclusive),
		cmocka_unit_test(test_node_policy),
		cmocka_unit_test(test_lease),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
