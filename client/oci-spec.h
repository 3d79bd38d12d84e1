/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What rtplace-oci-hook reads from an OCI runtime: the container's state
 * (runtime spec 1.0.2: id, pid, bundle, annotations) and its bundle's
 * config.json (the cpuset; process.scheduler and process.execCPUAffinity
 * of runtime spec 1.2), what the io.rtplace.* annotations ask for, and the
 * request that both make together (oci_spec_merge()).
 * Pure: parsed JSON in, values or a reason out, no syscalls; every input
 * comes from whoever wrote the container's spec, so each is checked and a
 * bad one named.
 */
#ifndef RTPLACE_CLIENT_OCI_SPEC_H
#define RTPLACE_CLIENT_OCI_SPEC_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "reason.h"

#define OCI_ANN_PREFIX "io.rtplace."
#define OCI_ANN_PRIORITY OCI_ANN_PREFIX "priority"
#define OCI_ANN_POLICY OCI_ANN_PREFIX "policy"
#define OCI_ANN_CPUS OCI_ANN_PREFIX "cpus"
#define OCI_ANN_CPU_LIST OCI_ANN_PREFIX "cpu-list"
#define OCI_ANN_NODE OCI_ANN_PREFIX "node"
#define OCI_ANN_EXCLUSIVE OCI_ANN_PREFIX "exclusive"
#define OCI_ANN_OPTIONAL OCI_ANN_PREFIX "optional"
#define OCI_ANN_ISOLATE OCI_ANN_PREFIX "isolate"

/* io.rtplace.isolate: none (false), true, or if-possible. */
enum oci_isolate {
	OCI_ISOLATE_NO,
	OCI_ISOLATE_YES,
	OCI_ISOLATE_IF_POSSIBLE,
};

/* The state is a few hundred bytes, but Kubernetes copies pod annotations
 * into it (up to 256 KiB); more than this is not a state. config.json
 * holds the same annotations and is held to the same bound. */
#define OCI_SPEC_JSON_MAX (4u << 20)

/* The state's required members; the strings belong to the JSON object. */
struct oci_state {
	const char *id;     /* the container's id, for messages */
	pid_t pid;          /* its init process, in the runtime's PID namespace */
	const char *bundle; /* folder of config.json */
};

/* Where a part of the request came from, for messages. */
enum oci_from {
	OCI_FROM_DEFAULT,    /* neither source set it */
	OCI_FROM_ANNOTATION, /* an io.rtplace.* annotation */
	OCI_FROM_SPEC,       /* the runtime spec's own field */
};

/* What the annotations ask for; after oci_spec_merge(), the request. */
struct oci_ask {
	int prio; /* 0: no io.rtplace.priority, nothing to do */
	int policy;
	bool have_policy; /* io.rtplace.policy was given */
	unsigned count; /* with have_list, 0 until the list is checked */
	bool have_count; /* io.rtplace.cpus was given */
	bool have_list;
	cpu_set_t list;
	int node; /* -1: any */
	bool exclusive, optional;
	enum oci_isolate isolate; /* isolated, the claim is exclusive too */
	bool reset_on_fork; /* SCHED_FLAG_RESET_ON_FORK of process.scheduler */
	enum oci_from sched_from, list_from; /* of policy and prio, of list */
};

/*
 * process.scheduler (runtime spec 1.2), checked as sched_setattr(2) and
 * runc check it. have false when config.json sets none.
 */
struct oci_sched {
	bool have;
	int policy;         /* SCHED_OTHER, _FIFO, _RR, _BATCH, _IDLE, _DEADLINE */
	int nice;           /* -20..19 */
	int prio;           /* 1..99 with SCHED_FIFO and SCHED_RR, else 0 */
	unsigned flags;     /* SCHED_FLAG_* */
	uint64_t runtime_ns, deadline_ns, period_ns; /* SCHED_DEADLINE only */
};

/* The kernel's sched_attr flags (<linux/sched.h>, which glibc's
 * <sched.h> cannot be included with). */
#define OCI_SCHED_FLAG_RESET_ON_FORK 0x01u
#define OCI_SCHED_FLAG_RECLAIM 0x02u
#define OCI_SCHED_FLAG_DL_OVERRUN 0x04u
#define OCI_SCHED_FLAG_KEEP_POLICY 0x08u
#define OCI_SCHED_FLAG_KEEP_PARAMS 0x10u
#define OCI_SCHED_FLAG_UTIL_CLAMP_MIN 0x20u
#define OCI_SCHED_FLAG_UTIL_CLAMP_MAX 0x40u

/* process.execCPUAffinity (runtime spec 1.2); an empty list is none. */
struct oci_affinity {
	bool have_initial, have_final;
	cpu_set_t initial, final;
};

/* Parses size bytes (not NUL-terminated) as one JSON document; name says
 * what it is in the reason ("the state on stdin"). 0, or -EINVAL, -EFBIG
 * or -ENOMEM with reason. */
int oci_spec_parse_json(const char *name, const char *data, size_t size, json_object **ret,
			struct rtplace_reason *reason);

/* id, pid and bundle of state. 0, or -EINVAL with reason. */
int oci_spec_state(json_object *state, struct oci_state *ret, struct rtplace_reason *reason);

/*
 * The annotations object that applies: the state's (runtime spec 1.0.2),
 * else the config's for runtimes that leave them out of the state; NULL
 * when there is none, or it is not an object.
 */
json_object *oci_spec_annotations(json_object *state, json_object *config);

/* Whether ann (may be NULL) asks for a priority: io.rtplace.priority. */
bool oci_spec_ann_asks(json_object *ann);

/*
 * The io.rtplace.* annotations of ann into ret (over the defaults: FIFO,
 * one CPU, any node). Every value is checked, and an unknown io.rtplace.*
 * key is an error (a typo must not start a container silently unplaced);
 * other annotations belong to others. 0, or -EINVAL with reason naming the
 * annotation and what it accepts.
 */
int oci_spec_ask(json_object *ann, struct oci_ask *ret, struct rtplace_reason *reason);

/* process.scheduler of config into ret. 0, or -EINVAL with reason naming
 * the member and what it accepts. */
int oci_spec_scheduler(json_object *config, struct oci_sched *ret, struct rtplace_reason *reason);

/* process.execCPUAffinity of config into ret. 0, or -EINVAL with reason
 * naming the member. */
int oci_spec_exec_affinity(json_object *config, struct oci_affinity *ret, struct rtplace_reason *reason);

/*
 * The request the container makes, into ret: the annotations' ann (NULL
 * when they ask for no priority) with the runtime spec's own fields. A
 * process.scheduler at SCHED_FIFO or SCHED_RR asks by itself; its policy
 * and priority are the request's, since the runtimes that know the field
 * set it on the init process themselves (runc 1.2 and later after this
 * hook, crun before it): an annotation that says otherwise is refused, so
 * that neither order leaves the process unlike its claim; as
 * is an RT priority annotated for a container whose process.scheduler
 * sets another policy. process.execCPUAffinity.final, when the container
 * asks, is the CPU list (as io.rtplace.cpu-list, which must then agree).
 * *ret_asked false: nothing to do. 0, or -EINVAL with reason naming both.
 */
int oci_spec_merge(const struct oci_ask *ann, const struct oci_sched *sched, const struct oci_affinity *aff,
		   struct oci_ask *ret, bool *ret_asked, struct rtplace_reason *reason);

/* "process.scheduler", "annotation io.rtplace.priority"..., for messages. */
const char *oci_spec_from_sched(enum oci_from from);
const char *oci_spec_from_list(enum oci_from from);

/* SCHED_FIFO and so on, the spec's name of policy. */
const char *oci_spec_policy_name(int policy);

/* The container's cpuset (linux.resources.cpu.cpus of config); *ret_have
 * false when the config sets none. 0, or -EINVAL with reason. */
int oci_spec_cpuset(json_object *config, cpu_set_t *ret, bool *ret_have, struct rtplace_reason *reason);

#endif
