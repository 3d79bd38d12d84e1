/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What rtplace-oci-hook reads from an OCI runtime: the container's state
 * (runtime spec 1.0.2: id, pid, bundle, annotations) and its bundle's
 * config.json (the cpuset), and what the io.rtplace.* annotations ask for.
 * Pure: parsed JSON in, values or a reason out, no syscalls; every input
 * comes from whoever wrote the container's spec, so each is checked and a
 * bad one named.
 */
#ifndef RTPLACE_CLIENT_OCI_SPEC_H
#define RTPLACE_CLIENT_OCI_SPEC_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
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

/* What the annotations ask for. */
struct oci_ask {
	int prio; /* 0: no io.rtplace.priority, nothing to do */
	int policy;
	unsigned count; /* with have_list, 0 until the list is checked */
	bool have_list;
	cpu_set_t list;
	int node; /* -1: any */
	bool exclusive, optional;
	enum oci_isolate isolate; /* isolated, the claim is exclusive too */
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
 * when neither asks for io.rtplace.priority (nothing to do: other
 * runtimes' hooks.d filters may run the hook for every container).
 */
json_object *oci_spec_annotations(json_object *state, json_object *config);

/*
 * The io.rtplace.* annotations of ann into ret (over the defaults: FIFO,
 * one CPU, any node). Every value is checked, and an unknown io.rtplace.*
 * key is an error (a typo must not start a container silently unplaced);
 * other annotations belong to others. 0, or -EINVAL with reason naming the
 * annotation and what it accepts.
 */
int oci_spec_ask(json_object *ann, struct oci_ask *ret, struct rtplace_reason *reason);

/* The container's cpuset (linux.resources.cpu.cpus of config); *ret_have
 * false when the config sets none. 0, or -EINVAL with reason. */
int oci_spec_cpuset(json_object *config, cpu_set_t *ret, bool *ret_have, struct rtplace_reason *reason);

#endif
