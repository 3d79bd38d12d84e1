/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "rtplace.h"

#include "cli.h"
#include "cpuset.h"
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
	return json_object_is_type(ann, json_type_object) ? ann : NULL;
}

bool oci_spec_ann_asks(json_object *ann)
{
	return ann && json_object_object_get_ex(ann, OCI_ANN_PRIORITY, NULL);
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
static int oci_spec_ask_one(const char *key, const char *s, struct oci_ask *a, struct rtplace_reason *reason)
{
	long v;

	if (strcmp(key, OCI_ANN_PRIORITY) == 0) {
		if (cli_parse_long(s, RTPLACE_PRIO_MIN, RTPLACE_PRIO_MAX, &v) < 0)
			return oci_spec_bad(reason, key, s, "not an RT priority 1..99");
		a->prio = (int)v;
	} else if (strcmp(key, OCI_ANN_POLICY) == 0) {
		if (cli_parse_policy(s, &a->policy) < 0)
			return oci_spec_bad(reason, key, s, "not fifo or rr");
		a->have_policy = true;
	} else if (strcmp(key, OCI_ANN_CPUS) == 0) {
		if (cli_parse_long(s, 1, RTPLACE_ANSWER_MAX, &v) < 0)
			return oci_spec_bad(reason, key, s, "not a count 1..256");
		a->count = (unsigned)v;
		a->have_count = true;
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
		if (oci_spec_ask_one(key, s, &a, reason) < 0)
			return -EINVAL;
	}
	if (a.prio)
		a.sched_from = OCI_FROM_ANNOTATION;
	if (a.have_list)
		a.list_from = OCI_FROM_ANNOTATION;
	if (a.have_count && a.have_list) {
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

static const struct {
	const char *name;
	int policy;
} oci_spec_policies[] = {
	{ "SCHED_OTHER", SCHED_OTHER }, { "SCHED_FIFO", SCHED_FIFO }, { "SCHED_RR", SCHED_RR },
	{ "SCHED_BATCH", SCHED_BATCH }, { "SCHED_IDLE", SCHED_IDLE }, { "SCHED_DEADLINE", SCHED_DEADLINE },
};

static const struct {
	const char *name;
	unsigned flag;
} oci_spec_flags[] = {
	{ "SCHED_FLAG_RESET_ON_FORK", OCI_SCHED_FLAG_RESET_ON_FORK },
	{ "SCHED_FLAG_RECLAIM", OCI_SCHED_FLAG_RECLAIM },
	{ "SCHED_FLAG_DL_OVERRUN", OCI_SCHED_FLAG_DL_OVERRUN },
	{ "SCHED_FLAG_KEEP_POLICY", OCI_SCHED_FLAG_KEEP_POLICY },
	{ "SCHED_FLAG_KEEP_PARAMS", OCI_SCHED_FLAG_KEEP_PARAMS },
	{ "SCHED_FLAG_UTIL_CLAMP_MIN", OCI_SCHED_FLAG_UTIL_CLAMP_MIN },
	{ "SCHED_FLAG_UTIL_CLAMP_MAX", OCI_SCHED_FLAG_UTIL_CLAMP_MAX },
};

#define OCI_SPEC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char *oci_spec_policy_name(int policy)
{
	for (size_t i = 0; i < OCI_SPEC_ARRAY_SIZE(oci_spec_policies); i++)
		if (oci_spec_policies[i].policy == policy)
			return oci_spec_policies[i].name;
	return "an unknown policy";
}

/* process.scheduler.KEY as an integer in min..max into *ret (0 when
 * absent or null, as the spec says). */
static int oci_spec_sched_int(json_object *sched, const char *key, int64_t min, int64_t max, int64_t *ret,
			      struct rtplace_reason *reason)
{
	json_object *v;

	*ret = 0;
	if (!json_object_object_get_ex(sched, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_int)) {
		reason_set(reason, "process.scheduler.%s is not an integer", key);
		return -EINVAL;
	}
	*ret = json_object_get_int64(v);
	if (*ret < min || *ret > max) {
		reason_set(reason, "process.scheduler.%s %" PRId64 ": not within %" PRId64 "..%" PRId64, key, *ret, min,
			   max);
		return -EINVAL;
	}
	return 0;
}

/* process.scheduler.KEY, nanoseconds (uint64), into *ret. */
static int oci_spec_sched_ns(json_object *sched, const char *key, uint64_t *ret, struct rtplace_reason *reason)
{
	json_object *v;

	*ret = 0;
	if (!json_object_object_get_ex(sched, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	/* json-c keeps a number above INT64_MAX as unsigned; only one
	 * written negative reads negative. */
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
		reason_set(reason, "process.scheduler.%s is not a number of nanoseconds (0 or above)", key);
		return -EINVAL;
	}
	*ret = json_object_get_uint64(v);
	return 0;
}

/* process.scheduler.policy into s->policy. */
static int oci_spec_sched_policy(json_object *sched, struct oci_sched *s, struct rtplace_reason *reason)
{
	const char *name;
	json_object *v;

	if (!json_object_object_get_ex(sched, "policy", &v) || !json_object_is_type(v, json_type_string)) {
		reason_set(reason, "process.scheduler has no \"policy\" string");
		return -EINVAL;
	}
	name = json_object_get_string(v);
	for (size_t i = 0; i < OCI_SPEC_ARRAY_SIZE(oci_spec_policies); i++) {
		if (strcmp(name, oci_spec_policies[i].name) == 0) {
			s->policy = oci_spec_policies[i].policy;
			return 0;
		}
	}
	reason_set(reason, "process.scheduler.policy \"%s\": not %s", name,
		   strcmp(name, "SCHED_ISO") == 0 ? "a policy Linux has (no kernel implements SCHED_ISO)"
						  : "SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_BATCH, SCHED_IDLE or "
						    "SCHED_DEADLINE");
	return -EINVAL;
}

/* process.scheduler.flags into s->flags. */
static int oci_spec_sched_flags(json_object *sched, struct oci_sched *s, struct rtplace_reason *reason)
{
	json_object *flags;
	size_t n;

	if (!json_object_object_get_ex(sched, "flags", &flags) || json_object_is_type(flags, json_type_null))
		return 0;
	if (!json_object_is_type(flags, json_type_array)) {
		reason_set(reason, "process.scheduler.flags is not an array of flag names");
		return -EINVAL;
	}
	n = json_object_array_length(flags);
	for (size_t i = 0; i < n; i++) {
		json_object *f = json_object_array_get_idx(flags, i);
		const char *name = json_object_is_type(f, json_type_string) ? json_object_get_string(f) : NULL;
		size_t k = 0;

		while (name && k < OCI_SPEC_ARRAY_SIZE(oci_spec_flags) && strcmp(name, oci_spec_flags[k].name) != 0)
			k++;
		if (!name || k == OCI_SPEC_ARRAY_SIZE(oci_spec_flags)) {
			reason_set(reason, "process.scheduler.flags[%zu]: not a flag name (SCHED_FLAG_RESET_ON_FORK, "
					   "_RECLAIM, _DL_OVERRUN, _KEEP_POLICY, _KEEP_PARAMS, _UTIL_CLAMP_MIN or "
					   "_UTIL_CLAMP_MAX)",
				   i);
			return -EINVAL;
		}
		s->flags |= oci_spec_flags[k].flag;
	}
	return 0;
}

/*
 * What the policy allows of the other members, as sched_setattr(2) and
 * runc's validation have it: a priority 1..99 with FIFO and RR and none
 * otherwise; runtime, deadline and period only with DEADLINE, where
 * 1024 <= runtime <= deadline <= period (0: the deadline).
 */
static int oci_spec_sched_check(const struct oci_sched *s, struct rtplace_reason *reason)
{
	const char *name = oci_spec_policy_name(s->policy);
	bool rt = s->policy == SCHED_FIFO || s->policy == SCHED_RR, dl = s->policy == SCHED_DEADLINE;
	uint64_t period = s->period_ns ? s->period_ns : s->deadline_ns;

	if (rt && (s->prio < 1 || s->prio > 99))
		reason_set(reason, "process.scheduler.priority %d: %s needs a priority 1..99", s->prio, name);
	else if (!rt && s->prio)
		reason_set(reason, "process.scheduler.priority %d: only SCHED_FIFO and SCHED_RR have one, not %s",
			   s->prio, name);
	else if (!dl && (s->runtime_ns || s->deadline_ns || s->period_ns))
		reason_set(reason, "process.scheduler runtime, deadline and period: only SCHED_DEADLINE has them, "
				   "not %s",
			   name);
	else if (dl && s->runtime_ns < 1024)
		reason_set(reason, "process.scheduler.runtime %" PRIu64 ": SCHED_DEADLINE needs 1024 ns or more",
			   s->runtime_ns);
	else if (dl && (s->deadline_ns < s->runtime_ns || period < s->deadline_ns))
		reason_set(reason,
			   "process.scheduler runtime %" PRIu64 ", deadline %" PRIu64 ", period %" PRIu64
			   ": SCHED_DEADLINE needs runtime <= deadline <= period",
			   s->runtime_ns, s->deadline_ns, s->period_ns);
	else
		return 0;
	return -EINVAL;
}

int oci_spec_scheduler(json_object *config, struct oci_sched *ret, struct rtplace_reason *reason)
{
	struct oci_sched s = { 0 };
	json_object *process, *sched;
	int64_t nice = 0, prio = 0;
	int r;

	reason->text[0] = '\0';
	if (!json_object_object_get_ex(config, "process", &process) ||
	    !json_object_is_type(process, json_type_object) ||
	    !json_object_object_get_ex(process, "scheduler", &sched) || json_object_is_type(sched, json_type_null)) {
		*ret = s;
		return 0;
	}
	if (!json_object_is_type(sched, json_type_object)) {
		reason_set(reason, "process.scheduler is not an object");
		return -EINVAL;
	}
	s.have = true;
	r = oci_spec_sched_policy(sched, &s, reason);
	if (r == 0)
		r = oci_spec_sched_int(sched, "nice", -20, 19, &nice, reason);
	if (r == 0)
		r = oci_spec_sched_int(sched, "priority", INT32_MIN, INT32_MAX, &prio, reason);
	if (r == 0)
		r = oci_spec_sched_flags(sched, &s, reason);
	if (r == 0)
		r = oci_spec_sched_ns(sched, "runtime", &s.runtime_ns, reason);
	if (r == 0)
		r = oci_spec_sched_ns(sched, "deadline", &s.deadline_ns, reason);
	if (r == 0)
		r = oci_spec_sched_ns(sched, "period", &s.period_ns, reason);
	s.nice = (int)nice;
	s.prio = (int)prio;
	if (r == 0)
		r = oci_spec_sched_check(&s, reason);
	if (r == 0)
		*ret = s;
	return r;
}

/* process.execCPUAffinity.KEY into *ret; *ret_have false when absent or
 * empty (the spec: the runtime then leaves the affinity alone). */
static int oci_spec_affinity_list(json_object *aff, const char *key, cpu_set_t *ret, bool *ret_have,
				  struct rtplace_reason *reason)
{
	json_object *v;
	const char *s;

	*ret_have = false;
	CPU_ZERO(ret);
	if (!json_object_object_get_ex(aff, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string)) {
		reason_set(reason, "process.execCPUAffinity.%s is not a string", key);
		return -EINVAL;
	}
	s = json_object_get_string(v);
	if (!*s)
		return 0;
	if (cli_parse_cpus(s, ret) < 0 || CPU_COUNT(ret) == 0) {
		reason_set(reason, "process.execCPUAffinity.%s \"%s\": not a CPU list (e.g. 2-5,8)", key, s);
		return -EINVAL;
	}
	*ret_have = true;
	return 0;
}

int oci_spec_exec_affinity(json_object *config, struct oci_affinity *ret, struct rtplace_reason *reason)
{
	json_object *process, *aff = NULL;
	struct oci_affinity a;
	int r;

	reason->text[0] = '\0';
	if (json_object_object_get_ex(config, "process", &process) && json_object_is_type(process, json_type_object))
		json_object_object_get_ex(process, "execCPUAffinity", &aff);
	if (aff && !json_object_is_type(aff, json_type_object) && !json_object_is_type(aff, json_type_null)) {
		reason_set(reason, "process.execCPUAffinity is not an object");
		return -EINVAL;
	}
	r = oci_spec_affinity_list(aff, "initial", &a.initial, &a.have_initial, reason);
	if (r == 0)
		r = oci_spec_affinity_list(aff, "final", &a.final, &a.have_final, reason);
	if (r == 0)
		*ret = a;
	return r;
}

const char *oci_spec_from_sched(enum oci_from from)
{
	return from == OCI_FROM_SPEC ? "process.scheduler" : from == OCI_FROM_ANNOTATION ? "annotations" : "defaults";
}

const char *oci_spec_from_list(enum oci_from from)
{
	return from == OCI_FROM_SPEC ? "process.execCPUAffinity.final"
	       : from == OCI_FROM_ANNOTATION ? "annotation " OCI_ANN_CPU_LIST
					     : "chosen by rtplaced";
}

/* Takes process.scheduler into a, refusing annotations that disagree. */
static int oci_spec_merge_sched(struct oci_ask *a, bool ann, const struct oci_sched *s, bool *asked,
				struct rtplace_reason *reason)
{
	const char *name = oci_spec_policy_name(s->policy);

	if (!s->have)
		return 0;
	a->reset_on_fork = s->flags & OCI_SCHED_FLAG_RESET_ON_FORK;
	if (s->policy != SCHED_FIFO && s->policy != SCHED_RR) {
		if (!ann)
			return 0;
		reason_set(reason,
			   "annotation " OCI_ANN_PRIORITY "=\"%d\" asks for an RT policy, and process.scheduler.policy "
			   "is %s, which runtimes set themselves (runc 1.2 and later, crun)%s: drop one",
			   a->prio, name,
			   s->policy == SCHED_DEADLINE ? " (and a SCHED_DEADLINE task may not be pinned: "
							 "sched_setattr(2) wants every CPU in its affinity)"
						       : "");
		return -EINVAL;
	}
	if ((ann && a->prio != s->prio) || (a->have_policy && a->policy != s->policy)) {
		reason_set(reason,
			   "annotations ask for %s %d and process.scheduler for %s %d, which runtimes set themselves "
			   "(runc 1.2 and later, crun): make them agree, or drop " OCI_ANN_PRIORITY " and " OCI_ANN_POLICY,
			   oci_spec_policy_name(a->policy), ann ? a->prio : s->prio, name, s->prio);
		return -EINVAL;
	}
	a->prio = s->prio;
	a->policy = s->policy;
	a->sched_from = OCI_FROM_SPEC;
	*asked = true;
	return 0;
}

int oci_spec_merge(const struct oci_ask *ann, const struct oci_sched *sched, const struct oci_affinity *aff,
		   struct oci_ask *ret, bool *ret_asked, struct rtplace_reason *reason)
{
	struct oci_ask a = { .policy = SCHED_FIFO, .count = 1, .node = -1 };
	bool asked = ann && ann->prio;
	char want[CPUSET_LIST_MAX], have[CPUSET_LIST_MAX];

	reason->text[0] = '\0';
	if (ann)
		a = *ann;
	if (oci_spec_merge_sched(&a, asked, sched, &asked, reason) < 0)
		return -EINVAL;
	if (asked && aff->have_final) {
		if (a.have_count) {
			reason_set(reason, "annotation " OCI_ANN_CPUS " and process.execCPUAffinity.final exclude each "
					   "other");
			return -EINVAL;
		}
		if (a.have_list && !CPU_EQUAL(&a.list, &aff->final)) {
			cli_format_cpus(&a.list, have, sizeof(have));
			cli_format_cpus(&aff->final, want, sizeof(want));
			reason_set(reason, "annotation " OCI_ANN_CPU_LIST "=\"%s\" and process.execCPUAffinity.final "
					   "\"%s\" disagree: make them agree, or drop one",
				   have, want);
			return -EINVAL;
		}
		a.list = aff->final;
		a.have_list = true;
		a.count = 0;
		a.list_from = OCI_FROM_SPEC;
	}
	*ret_asked = asked;
	if (asked)
		*ret = a;
	return 0;
}
