/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "oci-rights.h"
#include "rtplace-proto.h"

#define OCI_RIGHTS_CAP "CAP_SYS_NICE"

/* How a container is given the capability, in every engine's words. */
#define OCI_RIGHTS_HOW_CAP "podman or docker --cap-add SYS_NICE; Kubernetes securityContext.capabilities.add: [\"SYS_NICE\"]"

/* The member key of obj when it is there and not null; *ret NULL otherwise. */
static void oci_rights_member(json_object *obj, const char *key, json_object **ret)
{
	*ret = NULL;
	if (obj && json_object_is_type(obj, json_type_object) && json_object_object_get_ex(obj, key, ret) &&
	    json_object_is_type(*ret, json_type_null))
		*ret = NULL;
}

/* Whether the capability array set (process.capabilities.NAME) names
 * CAP_SYS_NICE. */
static int oci_rights_cap_set(json_object *caps, const char *name, bool *ret, struct rtplace_reason *reason)
{
	json_object *set;
	size_t n;

	*ret = false;
	oci_rights_member(caps, name, &set);
	if (!set)
		return 0;
	if (!json_object_is_type(set, json_type_array)) {
		reason_set(reason, "process.capabilities.%s is not an array of capability names", name);
		return -EINVAL;
	}
	n = json_object_array_length(set);
	for (size_t i = 0; i < n; i++) {
		json_object *cap = json_object_array_get_idx(set, i);

		if (!json_object_is_type(cap, json_type_string)) {
			reason_set(reason, "process.capabilities.%s[%zu] is not a capability name", name, i);
			return -EINVAL;
		}
		if (strcmp(json_object_get_string(cap), OCI_RIGHTS_CAP) == 0)
			*ret = true;
	}
	return 0;
}

/* The soft limit of the RLIMIT_RTPRIO entry of process.rlimits, if any. */
static int oci_rights_rlimits(json_object *process, uint64_t *ret, struct rtplace_reason *reason)
{
	json_object *rlimits;
	bool seen = false;
	size_t n;

	*ret = 0;
	oci_rights_member(process, "rlimits", &rlimits);
	if (!rlimits)
		return 0;
	if (!json_object_is_type(rlimits, json_type_array)) {
		reason_set(reason, "process.rlimits is not an array");
		return -EINVAL;
	}
	n = json_object_array_length(rlimits);
	for (size_t i = 0; i < n; i++) {
		json_object *rl = json_object_array_get_idx(rlimits, i), *type, *soft;

		oci_rights_member(rl, "type", &type);
		if (!type || !json_object_is_type(type, json_type_string)) {
			reason_set(reason, "process.rlimits[%zu] has no \"type\" string", i);
			return -EINVAL;
		}
		if (strcmp(json_object_get_string(type), "RLIMIT_RTPRIO") != 0)
			continue;
		if (seen) {
			reason_set(reason, "process.rlimits lists RLIMIT_RTPRIO twice");
			return -EINVAL;
		}
		seen = true;
		oci_rights_member(rl, "soft", &soft);
		/* json-c keeps a number above INT64_MAX (RLIM_INFINITY) as
		 * unsigned, which get_int64 clamps to INT64_MAX: only a
		 * number written negative reads negative. */
		if (!soft || !json_object_is_type(soft, json_type_int) || json_object_get_int64(soft) < 0) {
			reason_set(reason, "process.rlimits[%zu] (RLIMIT_RTPRIO) has no \"soft\" limit 0 or above", i);
			return -EINVAL;
		}
		*ret = json_object_get_uint64(soft);
	}
	return 0;
}

/* Whether linux.namespaces gives the container its own user namespace
 * (*ret_user) and its own, new PID namespace (*ret_pid: one it does not
 * join by path). */
static int oci_rights_namespaces(json_object *config, bool *ret_user, bool *ret_pid, struct rtplace_reason *reason)
{
	json_object *linux_, *nss;
	size_t n;

	*ret_user = *ret_pid = false;
	oci_rights_member(config, "linux", &linux_);
	oci_rights_member(linux_, "namespaces", &nss);
	if (!nss)
		return 0;
	if (!json_object_is_type(nss, json_type_array)) {
		reason_set(reason, "linux.namespaces is not an array");
		return -EINVAL;
	}
	n = json_object_array_length(nss);
	for (size_t i = 0; i < n; i++) {
		json_object *type, *path;

		oci_rights_member(json_object_array_get_idx(nss, i), "type", &type);
		oci_rights_member(json_object_array_get_idx(nss, i), "path", &path);
		if (!type || !json_object_is_type(type, json_type_string)) {
			reason_set(reason, "linux.namespaces[%zu] has no \"type\" string", i);
			return -EINVAL;
		}
		if (strcmp(json_object_get_string(type), "user") == 0)
			*ret_user = true;
		if (strcmp(json_object_get_string(type), "pid") == 0 && !path)
			*ret_pid = true;
	}
	return 0;
}

int oci_rights_parse(json_object *config, struct oci_rights *ret, struct rtplace_reason *reason)
{
	struct oci_rights r = { 0 };
	json_object *process, *caps;
	bool effective, bounding;
	int e;

	reason->text[0] = '\0';
	if (!json_object_is_type(config, json_type_object)) {
		reason_set(reason, "config.json is not a JSON object");
		return -EINVAL;
	}
	oci_rights_member(config, "process", &process);
	if (process && !json_object_is_type(process, json_type_object)) {
		reason_set(reason, "process is not an object");
		return -EINVAL;
	}
	oci_rights_member(process, "capabilities", &caps);
	if (caps && !json_object_is_type(caps, json_type_object)) {
		reason_set(reason, "process.capabilities is not an object");
		return -EINVAL;
	}
	e = oci_rights_cap_set(caps, "effective", &effective, reason);
	if (e == 0)
		e = oci_rights_cap_set(caps, "bounding", &bounding, reason);
	if (e == 0)
		e = oci_rights_rlimits(process, &r.rtprio, reason);
	if (e == 0)
		e = oci_rights_namespaces(config, &r.userns, &r.pidns, reason);
	if (e < 0)
		return e;
	r.cap_sys_nice = effective && bounding;
	*ret = r;
	return 0;
}

/* The capability counts only outside a user namespace of the container's. */
static bool oci_rights_host_cap(const struct oci_rights *r)
{
	return r->cap_sys_nice && !r->userns;
}

/* What the spec gives, for a refusal: "gives X". */
static void oci_rights_given(const struct oci_rights *r, struct rtplace_reason *reason)
{
	if (r->cap_sys_nice && r->userns)
		reason_append(reason, "CAP_SYS_NICE only inside its own user namespace (no RT right on the host)");
	else if (r->cap_sys_nice)
		reason_append(reason, "CAP_SYS_NICE");
	else
		reason_append(reason, "no CAP_SYS_NICE");
	reason_append(reason, " and RLIMIT_RTPRIO %" PRIu64, r->rtprio);
}

int oci_rights_check(const struct oci_rights *rights, const struct config_containers *policy,
		     const struct oci_request *req, struct rtplace_reason *reason)
{
	reason->text[0] = '\0';
	if (!oci_rights_host_cap(rights) && rights->rtprio < (uint64_t)req->prio) {
		reason_set(reason,
			   "priority %d needs CAP_SYS_NICE (effective and bounding sets) or RLIMIT_RTPRIO >= %d, and "
			   "the container's spec gives ",
			   req->prio, req->prio);
		oci_rights_given(rights, reason);
		reason_append(reason, ": grant one (" OCI_RIGHTS_HOW_CAP "; or podman or docker --ulimit rtprio=%d)",
			      req->prio);
		return -EPERM;
	}
	if (req->isolate && !oci_rights_host_cap(rights)) {
		reason_set(reason, "io.rtplace.isolate=true needs CAP_SYS_NICE in the host's user namespace (effective "
				   "and bounding sets, no user namespace of the container's own), and the container's "
				   "spec gives ");
		oci_rights_given(rights, reason);
		reason_append(reason, ": add it (" OCI_RIGHTS_HOW_CAP "), or ask io.rtplace.isolate=if-possible");
		return -EPERM;
	}
	if (req->exclusive && !oci_rights_host_cap(rights)) {
		reason_set(reason, "io.rtplace.exclusive=true needs CAP_SYS_NICE (effective and bounding sets; an "
				   "RLIMIT_RTPRIO does not do), and the container's spec gives ");
		oci_rights_given(rights, reason);
		reason_append(reason, ": add it (" OCI_RIGHTS_HOW_CAP ")");
		return -EPERM;
	}
	if ((uint32_t)req->prio > policy->max_prio) {
		reason_set(reason, "priority %d is above this node's [containers] max-prio = %u (rtplaced.conf)",
			   req->prio, (unsigned)policy->max_prio);
		return -EPERM;
	}
	if (req->exclusive && !policy->allow_exclusive) {
		reason_set(reason, "io.rtplace.exclusive=true: this node's [containers] allow-exclusive = no "
				   "(rtplaced.conf)");
		return -EPERM;
	}
	if (req->count > policy->max_cpus) {
		reason_set(reason, "%u CPUs asked, above this node's [containers] max-cpus = %u (rtplaced.conf)",
			   req->count, (unsigned)policy->max_cpus);
		return -EPERM;
	}
	return 0;
}

bool oci_rights_may_isolate(const struct oci_rights *rights)
{
	return oci_rights_host_cap(rights);
}

uint32_t oci_rights_lease_ms(const struct oci_rights *rights, uint32_t max_lease_ms)
{
	return oci_rights_host_cap(rights) ? RTPLACE_LEASE_INFINITE : max_lease_ms;
}
