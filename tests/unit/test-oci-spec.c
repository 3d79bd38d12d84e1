/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of what rtplace-oci-hook reads from a runtime
 * (client/oci-spec.c): one JSON document per input, the state's required
 * members, which annotations apply, the io.rtplace.* values with their
 * defaults, the config's cpuset, process.scheduler and
 * process.execCPUAffinity (runtime spec 1.2), and how annotations and
 * those fields make one request; every refusal names what was wrong.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
	assert_true(oci_spec_ann_asks(oci_spec_annotations(s, c)));
	/* Without a priority they ask for nothing (but process.scheduler
	 * may, and they then apply). */
	s = parse("{\"annotations\":{\"io.rtplace.policy\":\"rr\"}}");
	assert_non_null(oci_spec_annotations(s, c));
	assert_false(oci_spec_ann_asks(oci_spec_annotations(s, c)));
	assert_false(oci_spec_ann_asks(NULL));
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

/* process.scheduler of a config.json whose process is PROCESS. */
static int sched_of(const char *process, struct oci_sched *ret, struct rtplace_reason *reason)
{
	char text[1024];
	json_object *c;
	int r;

	snprintf(text, sizeof(text), "{\"process\":%s}", process);
	c = parse(text);
	r = oci_spec_scheduler(c, ret, reason);
	json_object_put(c);
	return r;
}

static void test_scheduler(void **state)
{
	static const struct {
		const char *process, *reason;
	} bad[] = {
		{ "{\"scheduler\":[]}", "process.scheduler is not an object" },
		{ "{\"scheduler\":{}}", "process.scheduler has no \"policy\" string" },
		{ "{\"scheduler\":{\"policy\":7}}", "process.scheduler has no \"policy\" string" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_FAST\"}}",
		  "process.scheduler.policy \"SCHED_FAST\": not SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_BATCH, "
		  "SCHED_IDLE or SCHED_DEADLINE" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_ISO\"}}",
		  "process.scheduler.policy \"SCHED_ISO\": not a policy Linux has (no kernel implements SCHED_ISO)" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_OTHER\",\"nice\":20}}", "process.scheduler.nice 20: not within -20..19" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_OTHER\",\"nice\":\"5\"}}", "process.scheduler.nice is not an integer" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_FIFO\",\"priority\":1.5}}",
		  "process.scheduler.priority is not an integer" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_FIFO\",\"priority\":4294967297}}",
		  "process.scheduler.priority 4294967297: not within -2147483648..2147483647" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_FIFO\"}}",
		  "process.scheduler.priority 0: SCHED_FIFO needs a priority 1..99" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_RR\",\"priority\":100}}",
		  "process.scheduler.priority 100: SCHED_RR needs a priority 1..99" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_BATCH\",\"priority\":5}}",
		  "process.scheduler.priority 5: only SCHED_FIFO and SCHED_RR have one, not SCHED_BATCH" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_FIFO\",\"priority\":5,\"flags\":\"SCHED_FLAG_RECLAIM\"}}",
		  "process.scheduler.flags is not an array of flag names" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_FIFO\",\"priority\":5,\"flags\":[\"SCHED_FLAG_RESET_ON_FORK\",\"X\"]}}",
		  "process.scheduler.flags[1]: not a flag name (SCHED_FLAG_RESET_ON_FORK, _RECLAIM, _DL_OVERRUN, "
		  "_KEEP_POLICY, _KEEP_PARAMS, _UTIL_CLAMP_MIN or _UTIL_CLAMP_MAX)" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_FIFO\",\"priority\":5,\"flags\":[3]}}",
		  "process.scheduler.flags[0]: not a flag name" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_FIFO\",\"priority\":5,\"runtime\":1000000}}",
		  "process.scheduler runtime, deadline and period: only SCHED_DEADLINE has them, not SCHED_FIFO" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_DEADLINE\",\"runtime\":-1}}",
		  "process.scheduler.runtime is not a number of nanoseconds (0 or above)" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_DEADLINE\",\"runtime\":1000,\"deadline\":2000}}",
		  "process.scheduler.runtime 1000: SCHED_DEADLINE needs 1024 ns or more" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_DEADLINE\",\"runtime\":5000,\"deadline\":2000}}",
		  "process.scheduler runtime 5000, deadline 2000, period 0: SCHED_DEADLINE needs runtime <= deadline <= "
		  "period" },
		{ "{\"scheduler\":{\"policy\":\"SCHED_DEADLINE\",\"runtime\":5000,\"deadline\":20000,\"period\":10000}}",
		  "process.scheduler runtime 5000, deadline 20000, period 10000: SCHED_DEADLINE needs runtime <= "
		  "deadline <= period" },
	};
	struct rtplace_reason reason;
	struct oci_sched s;

	(void)state;
	assert_int_equal(sched_of("{}", &s, &reason), 0);
	assert_false(s.have);
	assert_int_equal(sched_of("{\"scheduler\":null}", &s, &reason), 0);
	assert_false(s.have);
	assert_int_equal(sched_of("{\"scheduler\":{\"policy\":\"SCHED_RR\",\"priority\":40,\"nice\":-5,"
				  "\"flags\":[\"SCHED_FLAG_RESET_ON_FORK\",\"SCHED_FLAG_UTIL_CLAMP_MIN\"]}}",
				  &s, &reason),
			 0);
	assert_true(s.have);
	assert_int_equal(s.policy, SCHED_RR);
	assert_int_equal(s.prio, 40);
	assert_int_equal(s.nice, -5);
	assert_int_equal(s.flags, OCI_SCHED_FLAG_RESET_ON_FORK | OCI_SCHED_FLAG_UTIL_CLAMP_MIN);
	assert_int_equal(sched_of("{\"scheduler\":{\"policy\":\"SCHED_DEADLINE\",\"runtime\":42000,"
				  "\"deadline\":100000,\"period\":1000000}}",
				  &s, &reason),
			 0);
	assert_int_equal(s.policy, SCHED_DEADLINE);
	assert_int_equal(s.runtime_ns, 42000);
	assert_int_equal(s.deadline_ns, 100000);
	assert_int_equal(s.period_ns, 1000000);
	assert_int_equal(sched_of("{\"scheduler\":{\"policy\":\"SCHED_IDLE\",\"nice\":19}}", &s, &reason), 0);
	assert_int_equal(s.policy, SCHED_IDLE);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(sched_of(bad[i].process, &s, &reason), -EINVAL);
		assert_memory_equal(reason.text, bad[i].reason, strlen(bad[i].reason));
	}
}

static int affinity_of(const char *process, struct oci_affinity *ret, struct rtplace_reason *reason)
{
	char text[1024];
	json_object *c;
	int r;

	snprintf(text, sizeof(text), "{\"process\":%s}", process);
	c = parse(text);
	r = oci_spec_exec_affinity(c, ret, reason);
	json_object_put(c);
	return r;
}

static void test_exec_affinity(void **state)
{
	struct rtplace_reason reason;
	struct oci_affinity a;

	(void)state;
	assert_int_equal(affinity_of("{}", &a, &reason), 0);
	assert_false(a.have_initial || a.have_final);
	assert_int_equal(affinity_of("{\"execCPUAffinity\":{\"initial\":\"0\",\"final\":\"1-3,7\"}}", &a, &reason), 0);
	assert_true(a.have_initial && a.have_final);
	assert_int_equal(CPU_COUNT(&a.final), 4);
	assert_true(CPU_ISSET(7, &a.final));
	assert_int_equal(affinity_of("{\"execCPUAffinity\":{\"final\":\"\"}}", &a, &reason), 0);
	assert_false(a.have_final);
	assert_int_equal(affinity_of("{\"execCPUAffinity\":\"0\"}", &a, &reason), -EINVAL);
	assert_string_equal(reason.text, "process.execCPUAffinity is not an object");
	assert_int_equal(affinity_of("{\"execCPUAffinity\":{\"final\":3}}", &a, &reason), -EINVAL);
	assert_string_equal(reason.text, "process.execCPUAffinity.final is not a string");
	assert_int_equal(affinity_of("{\"execCPUAffinity\":{\"initial\":\"0-x\"}}", &a, &reason), -EINVAL);
	assert_string_equal(reason.text, "process.execCPUAffinity.initial \"0-x\": not a CPU list (e.g. 2-5,8)");
	assert_int_equal(affinity_of("{\"execCPUAffinity\":{\"final\":\"3-1\"}}", &a, &reason), -EINVAL);
	assert_string_equal(reason.text, "process.execCPUAffinity.final \"3-1\": not a CPU list (e.g. 2-5,8)");
}

/* oci_spec_merge() of annotations ANN (NULL: none), a config.json whose
 * process is PROCESS. */
static int merge(const char *ann, const char *process, struct oci_ask *ret, bool *asked,
		 struct rtplace_reason *reason)
{
	struct oci_affinity aff;
	struct oci_sched sched;
	struct oci_ask from_ann;
	json_object *a = NULL;
	int r;

	assert_int_equal(sched_of(process, &sched, reason), 0);
	assert_int_equal(affinity_of(process, &aff, reason), 0);
	if (ann) {
		a = parse(ann);
		assert_int_equal(oci_spec_ask(a, &from_ann, reason), 0);
	}
	r = oci_spec_merge(ann ? &from_ann : NULL, &sched, &aff, ret, asked, reason);
	json_object_put(a);
	return r;
}

static void test_merge(void **state)
{
	static const char fifo50[] = "{\"scheduler\":{\"policy\":\"SCHED_FIFO\",\"priority\":50}}";
	struct rtplace_reason reason;
	struct oci_ask a;
	bool asked;

	(void)state;
	/* Annotations alone, as before. */
	assert_int_equal(merge("{\"io.rtplace.priority\":\"30\"}", "{}", &a, &asked, &reason), 0);
	assert_true(asked);
	assert_int_equal(a.prio, 30);
	assert_int_equal(a.sched_from, OCI_FROM_ANNOTATION);
	assert_int_equal(a.list_from, OCI_FROM_DEFAULT);
	/* process.scheduler alone asks, FIFO or RR. */
	assert_int_equal(merge(NULL, fifo50, &a, &asked, &reason), 0);
	assert_true(asked);
	assert_int_equal(a.prio, 50);
	assert_int_equal(a.policy, SCHED_FIFO);
	assert_int_equal(a.count, 1);
	assert_int_equal(a.sched_from, OCI_FROM_SPEC);
	assert_string_equal(oci_spec_from_sched(a.sched_from), "process.scheduler");
	/* Other policies and an affinity alone ask for nothing. */
	assert_int_equal(merge(NULL, "{\"scheduler\":{\"policy\":\"SCHED_BATCH\",\"nice\":5},"
				     "\"execCPUAffinity\":{\"final\":\"1\"}}",
			       &a, &asked, &reason),
			 0);
	assert_false(asked);
	/* Annotations that agree; the other annotations apply with the
	 * spec's priority, also without io.rtplace.priority. */
	assert_int_equal(merge("{\"io.rtplace.priority\":\"50\",\"io.rtplace.cpus\":\"2\"}", fifo50, &a, &asked,
			       &reason),
			 0);
	assert_int_equal(a.count, 2);
	assert_int_equal(a.sched_from, OCI_FROM_SPEC);
	assert_int_equal(merge("{\"io.rtplace.exclusive\":\"true\"}",
			       "{\"scheduler\":{\"policy\":\"SCHED_RR\",\"priority\":20,"
			       "\"flags\":[\"SCHED_FLAG_RESET_ON_FORK\"]}}",
			       &a, &asked, &reason),
			 0);
	assert_true(asked);
	assert_true(a.exclusive);
	assert_true(a.reset_on_fork);
	assert_int_equal(a.policy, SCHED_RR);
	/* Annotations that disagree are refused, naming both. */
	assert_int_equal(merge("{\"io.rtplace.priority\":\"80\"}", fifo50, &a, &asked, &reason), -EINVAL);
	assert_string_equal(reason.text, "annotations ask for SCHED_FIFO 80 and process.scheduler for SCHED_FIFO 50, "
					 "which runtimes set themselves (runc 1.2 and later, crun): make them agree, or "
					 "drop io.rtplace.priority and io.rtplace.policy");
	assert_int_equal(merge("{\"io.rtplace.policy\":\"rr\"}", fifo50, &a, &asked, &reason), -EINVAL);
	assert_string_equal(reason.text, "annotations ask for SCHED_RR 50 and process.scheduler for SCHED_FIFO 50, "
					 "which runtimes set themselves (runc 1.2 and later, crun): make them agree, or "
					 "drop io.rtplace.priority and io.rtplace.policy");
	assert_int_equal(merge("{\"io.rtplace.priority\":\"50\"}", "{\"scheduler\":{\"policy\":\"SCHED_OTHER\"}}", &a,
			       &asked, &reason),
			 -EINVAL);
	assert_string_equal(reason.text, "annotation io.rtplace.priority=\"50\" asks for an RT policy, and "
					 "process.scheduler.policy is SCHED_OTHER, which runtimes set themselves (runc "
					 "1.2 and later, crun): drop one");
	assert_int_equal(merge("{\"io.rtplace.priority\":\"50\"}",
			       "{\"scheduler\":{\"policy\":\"SCHED_DEADLINE\",\"runtime\":2000,\"deadline\":9000}}", &a,
			       &asked, &reason),
			 -EINVAL);
	assert_non_null(strstr(reason.text, "SCHED_DEADLINE task may not be pinned"));
	/* execCPUAffinity.final is the CPU list when the container asks. */
	assert_int_equal(merge(NULL, "{\"scheduler\":{\"policy\":\"SCHED_FIFO\",\"priority\":5},"
				     "\"execCPUAffinity\":{\"initial\":\"0\",\"final\":\"1,3\"}}",
			       &a, &asked, &reason),
			 0);
	assert_true(a.have_list);
	assert_int_equal(a.count, 0);
	assert_int_equal(CPU_COUNT(&a.list), 2);
	assert_true(CPU_ISSET(3, &a.list));
	assert_int_equal(a.list_from, OCI_FROM_SPEC);
	assert_int_equal(merge("{\"io.rtplace.priority\":\"5\",\"io.rtplace.cpu-list\":\"1,3\"}",
			       "{\"execCPUAffinity\":{\"final\":\"1,3\"}}", &a, &asked, &reason),
			 0);
	assert_int_equal(merge("{\"io.rtplace.priority\":\"5\",\"io.rtplace.cpu-list\":\"1\"}",
			       "{\"execCPUAffinity\":{\"final\":\"1,3\"}}", &a, &asked, &reason),
			 -EINVAL);
	assert_string_equal(reason.text, "annotation io.rtplace.cpu-list=\"1\" and process.execCPUAffinity.final "
					 "\"1,3\" disagree: make them agree, or drop one");
	assert_int_equal(merge("{\"io.rtplace.priority\":\"5\",\"io.rtplace.cpus\":\"2\"}",
			       "{\"execCPUAffinity\":{\"final\":\"1,3\"}}", &a, &asked, &reason),
			 -EINVAL);
	assert_string_equal(reason.text,
			    "annotation io.rtplace.cpus and process.execCPUAffinity.final exclude each other");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_json), cmocka_unit_test(test_state), cmocka_unit_test(test_annotations),
		cmocka_unit_test(test_ask),        cmocka_unit_test(test_cpuset),
		cmocka_unit_test(test_scheduler),  cmocka_unit_test(test_exec_affinity),
		cmocka_unit_test(test_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
