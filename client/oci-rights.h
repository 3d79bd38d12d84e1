/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a container may be granted (DESIGN §14, §15): rtplace-oci-hook runs
 * as root, so the daemon would grant it anything; the hook grants a
 * container at most what the container's own spec (the bundle's
 * config.json) would let its process do itself, narrowed by the node's
 * [containers] policy. Pure: reads parsed JSON and values, no syscalls.
 */
#ifndef RTPLACE_CLIENT_OCI_RIGHTS_H
#define RTPLACE_CLIENT_OCI_RIGHTS_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "conf.h"
#include "reason.h"

/* The RT rights config.json gives the container's process. */
struct oci_rights {
	/* CAP_SYS_NICE in both the effective and the bounding set. */
	bool cap_sys_nice;
	/* The container has its own user namespace: its capabilities are
	 * that namespace's, and the kernel grants RT policies only for
	 * CAP_SYS_NICE in the host's. */
	bool userns;
	/* The container has its own, new PID namespace: its init process is
	 * process 1 there, which the hook checks of the pid the state names. */
	bool pidns;
	/* The soft RLIMIT_RTPRIO (the one the kernel checks); 0 when the
	 * spec sets none, since what the runtime would inherit is unknown. */
	uint64_t rtprio;
};

/* What the annotations ask for. */
struct oci_request {
	int prio;       /* 1..99 */
	bool exclusive;
	bool isolate;   /* io.rtplace.isolate=true: the claim's CPUs isolated */
	unsigned count; /* CPUs */
};

/*
 * The rights of config (process.capabilities, process.rlimits,
 * linux.namespaces). A member absent grants nothing. Returns 0, or -EINVAL
 * with reason naming the member that has the wrong type.
 */
int oci_rights_parse(json_object *config, struct oci_rights *ret, struct rtplace_reason *reason);

/*
 * Whether rights and the node's policy allow req. Returns 0, or -EPERM
 * with reason naming the missing right and how to grant it (podman or
 * docker options, the Kubernetes securityContext), or the [containers]
 * key that refuses it.
 */
int oci_rights_check(const struct oci_rights *rights, const struct config_containers *policy,
		     const struct oci_request *req, struct rtplace_reason *reason);

/* Whether the container may have its CPUs isolated (CAP_SYS_NICE in the
 * host's user namespace: isolation is host configuration). */
bool oci_rights_may_isolate(const struct oci_rights *rights);

/*
 * The lease the hook asks for a granted claim: none (a claim for the
 * container's life) with CAP_SYS_NICE, otherwise max_lease_ms, the
 * daemon's [limits] max-lease-ms, which bounds every claim of a requester
 * without CAP_SYS_NICE however it is made; the hook's being root does not
 * lift that.
 */
uint32_t oci_rights_lease_ms(const struct oci_rights *rights, uint32_t max_lease_ms);

#endif
