/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A running irqbalance(1), told which CPUs to keep interrupts off through
 * its own control socket, as its irqbalance-ui does: a stream socket at
 * <run>/irqbalance<PID>.sock (run is /run/irqbalance), root's credentials
 * sent with each message (SCM_CREDENTIALS; it answers no one else), one
 * command per connection:
 *
 *   setup               answered "SLEEP N [IRQ ...] BANNED <hex mask>":
 *                       the CPUs it keeps interrupts off now
 *   settings cpus LIST  replaces the banned CPUs by LIST (a CPU list;
 *                       "NULL": back to its own choice, the isolated
 *                       and nohz_full CPUs or IRQBALANCE_BANNED_CPULIST),
 *                       applied at its next rescan (every --interval s)
 *
 * An irqbalance started where <run> was missing listens on an abstract
 * socket with a kernel-chosen name: it runs and cannot be reached.
 *
 * Every call connects, sends and (setup) reads within IRQBALANCE_TIMEOUT_MS:
 * a stuck irqbalance costs the daemon's loop that long, never more.
 */
#ifndef RTPLACE_IRQBALANCE_H
#define RTPLACE_IRQBALANCE_H

#include <sys/types.h>

#include "cpuset.h"

#define IRQBALANCE_RUN_DIR "/run/irqbalance"
#define IRQBALANCE_TIMEOUT_MS 500

/* The pid of a running irqbalance under proc_root: 0, -ESRCH when none
 * runs, or -errno. */
int irqbalance_find(const char *proc_root, pid_t *ret);

/* The CPUs irqbalance pid (its socket under run_dir) keeps interrupts off
 * now, from its setup reply. 0; -ECONNREFUSED, -ENOENT, -EAGAIN or
 * -ETIMEDOUT when its socket cannot be reached; -EBADMSG for a reply
 * without a mask. */
int irqbalance_banned(const char *run_dir, pid_t pid, struct rtplace_cpumask *ret);

/* Bans cpus in irqbalance pid ("settings cpus LIST"; NULL: "NULL", back
 * to its own choice). 0 or -errno as irqbalance_banned(). */
int irqbalance_ban(const char *run_dir, pid_t pid, const struct rtplace_cpumask *cpus);

/* The BANNED mask of a setup reply (pure). 0 or -EBADMSG. */
int irqbalance_parse_setup(const char *reply, struct rtplace_cpumask *ret);

#endif
