/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of what rtplace-oci-hook reads from a runtime
 * (client/oci-spec.c): one JSON document per input, the state's required
 * members, which annotations apply, the io.rtplace.* values with their
 * defaults, and the config's cpuset; every refusal names what was wrong.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "oci-spec.h"

static json_object *parse(const char *text)
{
	struct rtplace_reason reason;
	json_object *obj = NULL;

	assert_int_equal(oci_spec_parse_json("t.json", text, strlen(text), &obj, &reason), 0);
	return obj;
}

static void test_parse_json(void **state)
{
	static const struct {
		const char *text, *reason;
	} bad[] = {
		{ "{\"a\":1", "t.json is not JSON: it ends early" },
		{ "{} {}", "t.json is not JSON: more follows the document at byte 3" },
		{ "{}x", "t.json is not JSON: more follows the document at byte 2" },
		{ "{\"a\":tru}", "t.json is not JSON: " },
	};
	struct rtplace_reason reason;
	json_object *obj;

	(void)state;
	json_object_put(parse("{}\r\n\t "));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		obj = NULL;
		assert_int_equal(oci_spec_parse_json("t.json", bad[i].text, strlen(bad[i].text), &obj, &reason), -EINVAL);
		assert_null(obj);
		assert_memory_equal(reason.text, bad[i].reason, strlen(bad[i].reason));
	}
	assert_int_equal(oci_spec_parse_json("t.json", "{\"a\":\"\0\"}", 9, &obj, &reason), -EINVAL);
	assert_string_equal(reason.text, "t.json is not JSON: it holds a NUL byte");
	assert_int_equal(oci_spec_parse_json("t.json", "{}", OCI_SPEC_JSON_MAX + 1, &obj, &reason), -EFBIG);
	assert_string_equal(reason.text, "t.json is longer than 4194304 bytes");
}

static void test_state(void **state)
{
	static const struct {
		const char *text, *reason;
	} bad[] = {
		{ "[]", "the state on stdin is not a JSON object" },
		{ "{\"pid\":1,\"bundle\":\"/b\"}", "the state has no \"id\" string" },
		{ "{\"id\":\"\",\"pid\":1,\"bundle\":\"/b\"}", "the state has no \"id\" string" },
		{ "{\"id\":\"c\",\"pid\":\"1\",\"bundle\":\"/b\"}",
		  "the state has no \"pid\" number (is this the createRuntime stage?)" },
		{ "{\"id\":\"c\",\"pid\":0,\"bundle\":\"/b\"}", "the state's \"pid\" 0 is not a process id" },
		{ "{\"id\":\"c\",\"pid\":4294967297,\"bundle\":\"/b\"}", "the state's \"pid\" 4294967297 is not a process id" },
		{ "{\"id\":\"c\",\"pid\":1}", "the state has no \"bundle\" string" },
	};
	struct rtplace_reason reason;
	struct oci_state st;
	json_object *obj;

	(void)state;
	obj = parse("{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\",\"pid\":42,\"bundle\":\"/b\"}");
	assert_int_equal(oci_spec_state(obj, &st, &reason), 0);
	assert_string_equal(st.id, "c1");
	assert_int_equal(st.pid, 42);
	assert_string_equal(st.bundle, "/b");
	json_object_put(obj);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		obj = parse(bad[i].text);
		assert_int_equal(oci_spec_state(obj, &st, &reason), -EINVAL);
		assert_string_equal(reason.text, bad[i].reason);
		json_object_put(obj);
	}
}

static void test_annotations(void **state)
{
	json_object *s, *c;

	(void)state;
	/* The state's, else the config's; only with a priority. */
	s = parse("{\"annotations\":{\"io.rtplace.priority\":\"5\"}}");
	c = parse("{\"annotations\":{\"io.rtplace.priority\":\"6\"}}");
	assert_string_equal(json_object_get_string(json_object_object_get(oci_spec_annotations(s, c),
									  "io.rtplace.priority")),
			    "5");
	json_object_put(s);
	s = parse("{}");
	assert_string_equal(json_object_get_string(json_object_object_get(oci_spec_annotations(s, c),
									  "io.rtplace.priority")),
			    "6");
	json_object_put(s);
	s = parse("{\"annotations\":{\"io.rtplace.policy\":\"rr\"}}");
	assert_null(oci_spec_annotations(s, c));
	json_object_put(s);
	s = parse("{\"annotations\":[]}");
	assert_null(oci_spec_annotations(s, c));
	json_object_put(s);
	json_object_put(c);
}

static void test_ask(void **state)
{
	struct rtplace_reason reason;
	struct oci_ask a;
	json_object *ann;

	(void)state;
	ann = parse("{\"io.rtplace.priority\":\"50\",\"other\":7}");
	assert_int_equal(oci_spec_ask(ann, &a, &reason), 0);
	assert_int_equal(a.prio, 50);
	assert_int_equal(a.policy, SCHED_FIFO);
	assert_int_equal(a.count, 1);
	assert_int_equal(a.node, -1);
	assert_false(a.have_list);
	assert_false(a.exclusive);
	assert_false(a.optional);
	json_object_put(ann);

	ann = parse("{\"io.rtplace.priority\":\"99\",\"io.rtplace.policy\":\"rr\",\"io.rtplace.cpu-list\":\"1,3\","
		    "\"io.rtplace.node\":\"1\",\"io.rtplace.exclusive\":\"true\",\"io.rtplace.optional\":\"true\"}");
	assert_int_equal(oci_spec_ask(ann, &a, &reason), 0);
	assert_int_equal(a.policy, SCHED_RR);
	assert_true(a.have_list);
	assert_int_equal(a.count, 0);
	assert_int_equal(CPU_COUNT(&a.list), 2);
	assert_true(CPU_ISSET(3, &a.list));
	assert_int_equal(a.node, 1);
	assert_true(a.exclusive);
	assert_true(a.optional);
	json_object_put(ann);

	ann = parse("{\"io.rtplace.priority\":\"50\",\"io.rtplace.cpus\":\"300\"}");
	assert_int_equal(oci_spec_ask(ann, &a, &reason), -EINVAL);
	assert_string_equal(reason.text, "annotation io.rtplace.cpus=\"300\": not a count 1..256");
	json_object_put(ann);
	ann = parse("{\"io.rtplace.priority\":50}");
	assert_int_equal(oci_spec_ask(ann, &a, &reason), -EINVAL);
	assert_string_equal(reason.text, "annotation io.rtplace.priority: not a string");
	json_object_put(ann);
	ann = parse("{\"io.rtplace.priority\":\"50\",\"io.rtplace.cpus\":\"2\",\"io.rtplace.cpu-list\":\"0\"}");
	assert_int_equal(oci_spec_ask(ann, &a, &reason), -EINVAL);
	assert_string_equal(reason.text, "annotations io.rtplace.cpus and io.rtplace.cpu-list exclude each other");
	json_object_put(ann);
}

static void test_cpuset(void **state)
{
	struct rtplace_reason reason;
	json_object *c;
	cpu_set_t set;
	bool have;

	(void)state;
	c = parse("{\"linux\":{\"resources\":{\"cpu\":{\"cpus\":\"0-2\"}}}}");
	assert_int_equal(oci_spec_cpuset(c, &set, &have, &reason), 0);
	assert_true(have);
	assert_int_equal(CPU_COUNT(&set), 3);
	json_object_put(c);
	c = parse("{\"linux\":{\"resources\":{\"cpu\":{\"cpus\":\"\"}}}}");
	assert_int_equal(oci_spec_cpuset(c, &set, &have, &reason), 0);
	assert_false(have);
	json_object_put(c);
	c = parse("{\"linux\":[]}");
	assert_int_equal(oci_spec_cpuset(c, &set, &have, &reason), 0);
	assert_false(have);
	json_object_put(c);
	c = parse("{\"linux\":{\"resources\":{\"cpu\":{\"cpus\":3}}}}");
	assert_int_equal(oci_spec_cpuset(c, &set, &have, &reason), -EINVAL);
	assert_string_equal(reason.text, "linux.resources.cpu.cpus is not a string");
	json_object_put(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_json), cmocka_unit_test(test_state), cmocka_unit_test(test_annotations),
		cmocka_unit_test(test_ask),        cmocka_unit_test(test_cpuset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
