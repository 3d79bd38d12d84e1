/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "rtplace.h"

#include "cli.h"
#include "oci-spec.h"

int oci_spec_parse_json(const char *name, const char *data, size_t size, json_object **ret,
			struct rtplace_reason *reason)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	json_object *obj;
	size_t end;
	int r = 0;

	reason->text[0] = '\0';
	if (size > OCI_SPEC_JSON_MAX) {
		reason_set(reason, "%s is longer than %u bytes", name, OCI_SPEC_JSON_MAX);
		return -EFBIG;
	}
	/* json-c would take a NUL byte for the end of its input. */
	if (memchr(data, '\0', size)) {
		reason_set(reason, "%s is not JSON: it holds a NUL byte", name);
		return -EINVAL;
	}
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	obj = json_tokener_parse_ex(tok, data, (int)size);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!obj) {
		reason_set(reason, "%s is not JSON: %s", name,
			   jerr == json_tokener_continue ? "it ends early" : json_tokener_error_desc(jerr));
		r = -EINVAL;
		goto out;
	}
	/* One document: what follows it is a writer's mistake, not ours to
	 * ignore. */
	while (end < size && (data[end] == ' ' || data[end] == '\t' || data[end] == '\r' || data[end] == '\n'))
		end++;
	if (end < size) {
		reason_set(reason, "%s is not JSON: more follows the document at byte %zu", name, end);
		json_object_put(obj);
		r = -EINVAL;
		goto out;
	}
	*ret = obj;
out:
	json_tokener_free(tok);
	return r;
}

/* The string member key of obj, or NULL when absent or not a string. */
static const char *oci_spec_string(json_object *obj, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int oci_spec_state(json_object *state, struct oci_state *ret, struct rtplace_reason *reason)
{
	struct oci_state s;
	json_object *v;
	int64_t pid;

	reason->text[0] = '\0';
	if (!json_object_is_type(state, json_type_object)) {
		reason_set(reason, "the state on stdin is not a JSON object");
		return -EINVAL;
	}
	s.id = oci_spec_string(state, "id");
	if (!s.id || !*s.id) {
		reason_set(reason, "the state has no \"id\" string");
		return -EINVAL;
	}
	if (!json_object_object_get_ex(state, "pid", &v) || !json_object_is_type(v, json_type_int)) {
		reason_set(reason, "the state has no \"pid\" number (is this the createRuntime stage?)");
		return -EINVAL;
	}
	pid = json_object_get_int64(v);
	if (pid <= 0 || pid > INT_MAX) {
		reason_set(reason, "the state's \"pid\" %" PRId64 " is not a process id", pid);
		return -EINVAL;
	}
	s.pid = (pid_t)pid;
	s.bundle = oci_spec_string(state, "bundle");
	if (!s.bundle || !*s.bundle) {
		reason_set(reason, "the state has no \"bundle\" string");
		return -EINVAL;
	}
	*ret = s;
	return 0;
}

json_object *oci_spec_annotations(json_object *state, json_object *config)
{
	json_object *ann;

	if (!json_object_object_get_ex(state, "annotations", &ann) &&
	    !json_object_object_get_ex(config, "annotations", &ann))
		return NULL;
	if (!json_object_is_type(ann, json_type_object) || !json_object_object_get_ex(ann, OCI_ANN_PRIORITY, NULL))
		return NULL;
	return ann;
}

static int oci_spec_bool(const char *s, bool *ret)
{
	if (strcmp(s, "true") == 0)
		*ret = true;
	else if (strcmp(s, "false") == 0)
		*ret = false;
	else
		return -EINVAL;
	return 0;
}

/* Refuses the value s of annotation key: what it is not. */
static int oci_spec_bad(struct rtplace_reason *reason, const char *key, const char *s, const char *what)
{
	reason_set(reason, "annotation %s=\"%s\": %s", key, s, what);
	return -EINVAL;
}

/* One io.rtplace.* annotation into a; 0, or -EINVAL with reason naming the
 * bad value or the unknown key. */
static int oci_spec_ask_one(const char *key, const char *s, struct oci_ask *a, bool *have_count,
			    struct rtplace_reason *reason)
{
	long v;

	if (strcmp(key, OCI_ANN_PRIORITY) == 0) {
		if (cli_parse_long(s, RTPLACE_PRIO_MIN, RTPLACE_PRIO_MAX, &v) < 0)
			return oci_spec_bad(reason, key, s, "not an RT priority 1..99");
		a->prio = (int)v;
	} else if (strcmp(key, OCI_ANN_POLICY) == 0) {
		if (cli_parse_policy(s, &a->policy) < 0)
			return oci_spec_bad(reason, key, s, "not fifo or rr");
	} else if (strcmp(key, OCI_ANN_CPUS) == 0) {
		if (cli_parse_long(s, 1, RTPLACE_ANSWER_MAX, &v) < 0)
			return oci_spec_bad(reason, key, s, "not a count 1..256");
		a->count = (unsigned)v;
		*have_count = true;
	} else if (strcmp(key, OCI_ANN_CPU_LIST) == 0) {
		if (cli_parse_cpus(s, &a->list) < 0)
			return oci_spec_bad(reason, key, s, "not a CPU list (e.g. 2-5,8)");
		a->have_list = true;
	} else if (strcmp(key, OCI_ANN_NODE) == 0) {
		if (cli_parse_long(s, 0, RTPLACE_MAX_CPUS - 1, &v) < 0)
			return oci_spec_bad(reason, key, s, "not a NUMA node id");
		a->node = (int)v;
	} else if (strcmp(key, OCI_ANN_EXCLUSIVE) == 0) {
		if (oci_spec_bool(s, &a->exclusive) < 0)
			return oci_spec_bad(reason, key, s, "not true or false");
	} else if (strcmp(key, OCI_ANN_OPTIONAL) == 0) {
		if (oci_spec_bool(s, &a->optional) < 0)
			return oci_spec_bad(reason, key, s, "not true or false");
	} else if (strcmp(key, OCI_ANN_ISOLATE) == 0) {
		bool yes;

		if (strcmp(s, "if-possible") == 0)
			a->isolate = OCI_ISOLATE_IF_POSSIBLE;
		else if (oci_spec_bool(s, &yes) == 0)
			a->isolate = yes ? OCI_ISOLATE_YES : OCI_ISOLATE_NO;
		else
			return oci_spec_bad(reason, key, s, "not true, false or if-possible");
	} else {
		reason_set(reason,
			   "unknown annotation %s (known: " OCI_ANN_PRIORITY ", " OCI_ANN_POLICY ", " OCI_ANN_CPUS
			   ", " OCI_ANN_CPU_LIST ", " OCI_ANN_NODE ", " OCI_ANN_EXCLUSIVE ", " OCI_ANN_OPTIONAL
			   ", " OCI_ANN_ISOLATE ")",
			   key);
		return -EINVAL;
	}
	return 0;
}

int oci_spec_ask(json_object *ann, struct oci_ask *ret, struct rtplace_reason *reason)
{
	struct oci_ask a = { .policy = SCHED_FIFO, .count = 1, .node = -1 };
	bool have_count = false;

	reason->text[0] = '\0';
	CPU_ZERO(&a.list);
	json_object_object_foreach(ann, key, val) {
		const char *s;

		if (strncmp(key, OCI_ANN_PREFIX, strlen(OCI_ANN_PREFIX)) != 0)
			continue;
		if (!json_object_is_type(val, json_type_string)) {
			reason_set(reason, "annotation %s: not a string", key);
			return -EINVAL;
		}
		s = json_object_get_string(val);
		if (oci_spec_ask_one(key, s, &a, &have_count, reason) < 0)
			return -EINVAL;
	}
	if (have_count && a.have_list) {
		reason_set(reason, "annotations " OCI_ANN_CPUS " and " OCI_ANN_CPU_LIST " exclude each other");
		return -EINVAL;
	}
	if (a.have_list)
		a.count = 0;
	*ret = a;
	return 0;
}

int oci_spec_cpuset(json_object *config, cpu_set_t *ret, bool *ret_have, struct rtplace_reason *reason)
{
	json_object *linux_, *res, *cpu, *cpus;
	const char *s;

	reason->text[0] = '\0';
	*ret_have = false;
	if (!json_object_object_get_ex(config, "linux", &linux_) ||
	    !json_object_object_get_ex(linux_, "resources", &res) ||
	    !json_object_object_get_ex(res, "cpu", &cpu) || !json_object_object_get_ex(cpu, "cpus", &cpus) ||
	    json_object_is_type(cpus, json_type_null))
		return 0;
	if (!json_object_is_type(cpus, json_type_string)) {
		reason_set(reason, "linux.resources.cpu.cpus is not a string");
		return -EINVAL;
	}
	s = json_object_get_string(cpus);
	if (!*s)
		return 0;
	if (cli_parse_cpus(s, ret) < 0) {
		reason_set(reason, "linux.resources.cpu.cpus \"%s\" is not a CPU list", s);
		return -EINVAL;
	}
	*ret_have = true;
	return 0;
}
