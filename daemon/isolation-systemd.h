/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Isolation's partitions through systemd (daemon/isolation.h,
 * struct isolation_scopes): the claimant's process goes into a transient
 * scope unit that systemd's manager starts over the system bus
 * (org.freedesktop.systemd1.Manager.StartTransientUnit, PIDs= moving the
 * running process, as `systemd-run --scope` and machined do), so that
 * systemd keeps knowing the process and the cgroup tree stays systemd's.
 *
 * Its own bus connection, used only from isolation's calls, which it
 * blocks until systemd's job ends (JobRemoved), at most
 * ISOLATION_SYSTEMD_WAIT_MS: a claim with --isolate waits for the scope it
 * needs, and the daemon's loop with it (a few milliseconds; the claim
 * and its isolation are one answer).
 */
#ifndef RTPLACE_ISOLATION_SYSTEMD_H
#define RTPLACE_ISOLATION_SYSTEMD_H

#include "isolation.h"
#include "reason.h"

/* How long a scope's start or stop job may take. */
#define ISOLATION_SYSTEMD_WAIT_MS 10000

struct isolation_systemd;

/*
 * The scopes of the system's manager: 0; -ENOENT when PID 1 is not
 * systemd (sd_booted()); another -errno with reason when its bus cannot
 * be reached.
 */
int isolation_systemd_new(struct isolation_systemd **ret, struct rtplace_reason *reason);
/* What isolation_opts.scopes takes, valid until isolation_systemd_free(). */
const struct isolation_scopes *isolation_systemd_scopes(const struct isolation_systemd *s);
/* Accepts NULL. */
void isolation_systemd_free(struct isolation_systemd *s);

#endif
