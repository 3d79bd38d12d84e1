/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Isolation of claimed CPUs, the edge that writes the kernel's files
 * (daemon/isoplan.h decides what). While a claim isolated here lasts, its
 * CPUs leave, as [isolation] in rtplaced.conf(5) turns each on:
 *
 * - partition: every other task's cpuset. The claimant's process moves
 *   into <cgroup root>/rtplace-claim-ID, a cgroup v2 cpuset partition of
 *   type "isolated" holding the claimed CPUs (cpuset.cpus.exclusive too
 *   where the kernel has it, 6.7 and later), which also takes them out of
 *   load balancing. Made directly under the root, where Linux 6.1 allows
 *   a partition. cgroup v1, or no cpuset controller in v2: refused,
 *   saying what is missing.
 * - irqs: every movable interrupt's affinity (<proc>/irq/N/
 *   smp_affinity_list). A managed interrupt refuses the write (EIO, or
 *   EPERM on newer kernels): reported, never fought.
 * - workqueues: the unbound workqueues' mask (<sys>/devices/virtual/
 *   workqueue/cpumask).
 *
 * With irqs, a running irqbalance is told to ban the CPUs held too
 * (daemon/irqbalance.h), and what it banned before once none is; one
 * whose socket does not answer is not fought, and the claim's note says so.
 *
 * What is changed is undone when the claim is released, by
 * isolation_restore() when the daemon stops, and, after the daemon was
 * killed, by isolation_restore() when it starts again: every change is
 * journaled before it is made, in a file beside the claims state and
 * under its rule (the runtime directory, one write(2) per line, no fsync:
 * what must be survived is the daemon's death, not the machine's):
 *
 *   rtplace-isolation 1
 *   irq N ORIGINAL            IRQ N's affinity may change; it was ORIGINAL
 *   irq N                     it is ORIGINAL again
 *   workqueues ORIGINAL       likewise, the workqueue mask
 *   workqueues
 *   cpuset-control enabled    rtplace enables cpuset in the root's
 *   cpuset-control            cgroup.subtree_control / disabled it again
 *   partition ID PID CGROUP   rtplace-claim-ID may be made, and process PID
 *                             moved there from CGROUP (a v2 path)
 *   partition ID              it is gone, its processes back in CGROUP
 *   irqbalance PID ORIGINAL   irqbalance PID may be told to ban the CPUs
 *                             held; it banned ORIGINAL (a CPU list, or NULL:
 *                             its own choice)
 *   irqbalance                it bans ORIGINAL again (or is gone)
 *   scope ID PID CGROUP       the same through systemd: the transient unit
 *   scope ID                  rtplace-claim-ID.scope in rtplace.slice
 *   slice FILE =ORIGINAL      rtplace.slice's FILE may change; it was
 *   slice FILE                ORIGINAL / it is ORIGINAL again
 *   slice-unit started        rtplaced started rtplace.slice / stopped it
 *   slice-unit
 *
 * Values are kept as the kernel printed them, without the newline, and
 * written back as they were: read back after a restore, every file holds
 * the bytes it held before. A journal that holds nothing is removed. The
 * journal decides what the daemon writes as root into /proc and /sys, so
 * it is read only when its owner and its folder's pass
 * claims_state_trusted().
 *
 * Under systemd (opts->scopes; daemon/isolation-systemd.h) the partition
 * is a transient scope unit, rtplace-claim-ID.scope in rtplace.slice, that
 * systemd makes with the claimant's process in it and AllowedCPUs= the
 * claimed CPUs, so that systemd keeps knowing the process and enables the
 * cpuset controller on the way down itself. What systemd has no property
 * for (systemd 252 to 257) rtplaced writes: the scope's
 * cpuset.cpus.partition ("isolated") and, for the kernel to allow a
 * partition that deep, rtplace.slice's: the slice becomes a partition
 * root of the claimed CPUs (cpuset.cpus, cpuset.cpus.partition "root"),
 * as Linux allows a partition only below one (a remote partition, 6.7
 * and later, needs CAP_SYS_ADMIN, which the unit does not keep). On
 * release the partition is
 * dissolved, the processes go back to their cgroup, the emptied scope is
 * stopped (systemd removes it), the slice's files get their original
 * bytes back and a slice rtplaced started is stopped.
 *
 * One owner: the daemon's loop. Each call finishes its writes before it
 * returns (a few per interrupt, five for a partition); under systemd it
 * also waits for the scope's start or stop job (milliseconds; at most
 * ISOLATION_SYSTEMD_WAIT_MS).
 */
#ifndef RTPLACE_ISOLATION_H
#define RTPLACE_ISOLATION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf.h"
#include "cpuset.h"
#include "reason.h"

/* A service manager that holds the partition's process in a unit of its
 * own (daemon/isolation-systemd.h), as calls on ctx. */
struct isolation_scopes {
	/* Starts transient scope unit in slice holding process pid, its
	 * AllowedCPUs= cpus; returns once the process is in it. 0 or
	 * -errno with reason. */
	int (*start)(void *ctx, const char *unit, const char *slice, pid_t pid, const struct rtplace_cpumask *cpus,
		     struct rtplace_reason *reason);
	/* Stops unit and returns once it is gone; 0 also when there is no
	 * such unit. -errno with reason. */
	int (*stop)(void *ctx, const char *unit, struct rtplace_reason *reason);
	/* Moves process pid into cgroup (a v2 path): the cgroup of a unit,
	 * or a group below a unit delegated to another manager (a user's
	 * service under user@UID.service), whose files only that user may
	 * write. 0 or -errno with reason. */
	int (*attach)(void *ctx, const char *cgroup, pid_t pid, struct rtplace_reason *reason);
	void *ctx;
};

struct isolation_opts {
	const char *proc_root;   /* PROCFS_ROOT, or a fixture tree */
	const char *sys_root;    /* SYSFS_ROOT, or a fixture tree */
	const char *cgroup_root; /* NULL: [isolation] cgroup-root */
	const char *journal;     /* its path, in a folder only the daemon's user (or root) may write */
	const char *irqbalance_dir; /* NULL: IRQBALANCE_RUN_DIR, where irqbalance's socket is */
	uid_t owner;             /* the daemon's user: the journal must be its */
	/* The machine: online CPUs of each node, and the CPUs the host
	 * isolates otherwise (not housekeeping). Copied. */
	const struct rtplace_cpumask *nodes;
	size_t n_nodes;
	struct rtplace_cpumask other;
	/* NULL: partitions on cgroupfs directly. Kept, not copied. */
	const struct isolation_scopes *scopes;
};

struct isolation;

/* What isolation_claim() did for a claim. */
struct isolation_report {
	uint8_t done;         /* RTPLACE_ISOLATED_* (record.h): taken away, and what could not be */
	unsigned managed;     /* managed interrupts the kernel keeps where they were */
	unsigned not_written; /* affinities or masks that could not be read or written */
};

/*
 * Isolation as cfg's [isolation] says, taking over what a journal left at
 * opts->journal (to be undone by isolation_restore(), which a starting
 * daemon calls before it isolates anything). Lines of the journal it
 * cannot read are left out, and reason says which (else it is ""): it
 * changes nothing on their word. Returns 0; -EPERM when the journal or its
 * folder is not the owner's alone, with reason saying why; -ENAMETOOLONG,
 * -ENOMEM, or the -errno of reading the journal.
 */
int isolation_new(const struct isolation_opts *opts, const struct config *cfg, struct isolation **ret,
		  struct rtplace_reason *reason);
/* Frees iso, leaving what is isolated as it is (isolation_restore() undoes
 * it). Accepts NULL. */
void isolation_free(struct isolation *iso);

/* New online CPUs per node and otherwise isolated CPUs (CPU hotplug):
 * what later calls plan with. 0 or -ENOMEM. */
int isolation_set_host(struct isolation *iso, const struct rtplace_cpumask *nodes, size_t n_nodes,
		       const struct rtplace_cpumask *other);

/*
 * Isolates cpus for claim claim_id of process owner_pid. Returns 0 when
 * what [isolation] turns on is done, with reason saying what could not be
 * ("" when everything was): interrupts that are managed or refused a write,
 * a workqueue mask that could not be written. Refused, with nothing
 * changed and reason saying why: -EOPNOTSUPP when [isolation] turns
 * nothing on, or a partition is asked and the hierarchy cannot make one
 * (cgroup v1, no cpuset controller, no partitions in the kernel, the
 * kernel refusing it); -EINVAL or -EBUSY as isoplan_admit() (the last
 * housekeeping CPU of a node); -EEXIST when claim_id is isolated already;
 * -ESRCH when owner_pid is gone; another -errno when the journal or a
 * cgroup file could not be written. On success, *ret_report (NULL: not
 * wanted) says what was done and what could not be.
 */
int isolation_claim(struct isolation *iso, uint32_t claim_id, pid_t owner_pid, const struct rtplace_cpumask *cpus,
		    struct rtplace_reason *reason, struct isolation_report *ret_report);

/*
 * Undoes claim claim_id's isolation: its CPUs go back to every mask that
 * had them and no other claim holds, its process to the cgroup it came
 * from. 0; -ENOENT when it is not isolated; another -errno when something
 * could not be undone, with reason saying what: it stays journaled and
 * isolation_restore() tries again.
 */
int isolation_release(struct isolation *iso, uint32_t claim_id, struct rtplace_reason *reason);

/*
 * Undoes every isolation, this daemon's and a killed one's journaled
 * before it: the number of values put back and partitions removed (0 when
 * there were none); -errno when some could not be, with reason saying
 * which, which stay journaled.
 */
int isolation_restore(struct isolation *iso, struct rtplace_reason *reason);

/*
 * A journal's len bytes as isolation_new() takes them over, written back
 * as the compacted journal of what they hold for isolation_restore(), in
 * a malloc()ed *ret of *ret_len bytes; reason as isolation_new(). Pure:
 * the fuzz harness's round trip. 0 or -ENOMEM.
 */
int isolation_journal_compacted(const char *text, size_t len, char **ret, size_t *ret_len,
				struct rtplace_reason *reason);

/* The CPUs isolated for claims now. */
void isolation_cpus(const struct isolation *iso, struct rtplace_cpumask *ret);

#endif
