/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness for what rtplace-oci-hook parses from a container's
 * author: any bytes, as the state on stdin and as the bundle's config.json
 * at once (client/oci-spec.c, client/oci-rights.c), the annotations and
 * the runtime spec's process.scheduler and execCPUAffinity together. Beyond "no crash, no
 * leak" (the sanitizers' job) it checks the contract and aborts when it
 * breaks: every failure comes with a reason, every success holds only
 * values in range, and a grant never exceeds the rights the spec gives.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

#include "oci-rights.h"
#include "oci-spec.h"
#include "rtplace-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_oci_failed(int r, const struct rtplace_reason *reason)
{
	if (r >= 0 || !reason->text[0])
		abort();
}

static void fuzz_oci_state(json_object *obj)
{
	struct rtplace_reason reason;
	struct oci_state st;
	int r = oci_spec_state(obj, &st, &reason);

	if (r < 0) {
		fuzz_oci_failed(r, &reason);
		return;
	}
	if (st.pid <= 0 || !st.id || !st.id[0] || !st.bundle || !st.bundle[0])
		abort();
}

/* The request as the hook makes it: annotations, process.scheduler and
 * process.execCPUAffinity together (oci_spec_merge()). */
static void fuzz_oci_ask(json_object *obj)
{
	struct rtplace_reason reason;
	json_object *ann = oci_spec_annotations(obj, obj);
	struct oci_ask from_ann, a;
	struct oci_affinity aff;
	struct oci_sched sched;
	bool asked;
	int r;

	r = oci_spec_scheduler(obj, &sched, &reason);
	if (r == 0)
		r = oci_spec_exec_affinity(obj, &aff, &reason);
	if (r == 0 && ann)
		r = oci_spec_ask(ann, &from_ann, &reason);
	if (r < 0) {
		fuzz_oci_failed(r, &reason);
		return;
	}
	if (sched.have && (sched.nice < -20 || sched.nice > 19 ||
			   ((sched.policy == SCHED_FIFO || sched.policy == SCHED_RR) != (sched.prio >= 1 && sched.prio <= 99))))
		abort();
	r = oci_spec_merge(ann ? &from_ann : NULL, &sched, &aff, &a, &asked, &reason);
	if (r < 0) {
		fuzz_oci_failed(r, &reason);
		return;
	}
	if (!asked)
		return;
	if (a.prio < 1 || a.prio > 99 || (a.policy != SCHED_FIFO && a.policy != SCHED_RR) || a.node < -1 ||
	    a.node >= RTPLACE_MAX_CPUS)
		abort();
	if (a.have_list ? a.count != 0 : (a.count < 1 || a.count > CONFIG_CONTAINER_CPUS_MAX))
		abort();
	/* The spec's own field, when it asks, is the request. */
	if (sched.have && (a.prio != sched.prio || a.policy != sched.policy || a.sched_from != OCI_FROM_SPEC))
		abort();
}

static void fuzz_oci_cpuset(json_object *obj)
{
	struct rtplace_reason reason;
	cpu_set_t set;
	bool have;
	int r = oci_spec_cpuset(obj, &set, &have, &reason);

	if (r < 0)
		fuzz_oci_failed(r, &reason);
}

/* What the rights grant, for a few requests, against the rule itself. */
static void fuzz_oci_rights(json_object *obj)
{
	static const struct oci_request reqs[] = {
		{ .prio = 1, .count = 1 },  { .prio = 50, .count = 1 },  { .prio = 99, .count = 256 },
		{ .prio = 50, .exclusive = true, .count = 2 },
	};
	const struct config_containers open = { .max_prio = 99, .allow_exclusive = true, .max_cpus = 256 };
	const struct config_containers narrow = { .max_prio = 49, .allow_exclusive = false, .max_cpus = 1 };
	struct rtplace_reason reason;
	struct oci_rights rights;
	int r = oci_rights_parse(obj, &rights, &reason);

	if (r < 0) {
		fuzz_oci_failed(r, &reason);
		return;
	}
	/* Only the capability lifts the daemon's lease bound. */
	if ((oci_rights_lease_ms(&rights, 1000) == RTPLACE_LEASE_INFINITE) != (rights.cap_sys_nice && !rights.userns))
		abort();
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		const struct oci_request *q = &reqs[i];
		const bool cap = rights.cap_sys_nice && !rights.userns;
		const bool may = (cap || rights.rtprio >= (uint64_t)q->prio) && (!q->exclusive || cap);

		r = oci_rights_check(&rights, &open, q, &reason);
		if ((r == 0) != may)
			abort();
		if (r < 0)
			fuzz_oci_failed(r, &reason);
		/* The node's policy only ever narrows. */
		r = oci_rights_check(&rights, &narrow, q, &reason);
		if (r == 0 && (!may || q->prio > 49 || q->exclusive || q->count > 1))
			abort();
		if (r < 0)
			fuzz_oci_failed(r, &reason);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rtplace_reason reason;
	json_object *obj = NULL;
	int r;

	r = oci_spec_parse_json("fuzz.json", (const char *)data, size, &obj, &reason);
	if (r == -ENOMEM)
		return 0;
	if (r < 0) {
		if (obj)
			abort();
		fuzz_oci_failed(r, &reason);
		return 0;
	}
	fuzz_oci_state(obj);
	fuzz_oci_ask(obj);
	fuzz_oci_cpuset(obj);
	fuzz_oci_rights(obj);
	json_object_put(obj);
	return 0;
}
