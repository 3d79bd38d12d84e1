/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPU hotplug as user space sees it: which CPUs the kernel has online (the
 * list in SYSFS/devices/system/cpu/online, read through sysfs.h), and,
 * live, a descriptor that turns readable when that list may have changed.
 * Library code: no logging, no event loop of its own; the daemon adds
 * hotplug_fd() to its loop and calls hotplug_consume() when it is readable,
 * as it does with the tracker's ring buffer.
 *
 * Why kernel uevents and not a BPF program on the cpuhp tracepoints. The
 * cpupri map already follows hotplug exactly from BPF (a CPU whose runqueue
 * is offline publishes the offline level, tracker.bpf.c); what the daemon
 * must do besides (end claims, learn the topology of a CPU it never saw) is
 * user-space work that needs a prompt wakeup. A BPF record about a CPU going
 * down is best written on that CPU's own runqueue events, and its wakeup is
 * an irq_work queued on that CPU, which a CPU past its last flush never runs
 * (and a pending irq_work blocks every later wakeup of the ring); the cpuhp
 * tracepoints speak in hotplug state numbers that differ between kernels.
 * The kernel sends an "online" or "offline" uevent for the CPU device from
 * process context once the operation has completed (sysfs online writes,
 * SMT control, ACPI), a stable ABI. The online list is the truth and is
 * re-read at each CPU uevent or lost message (ENOBUFS); the uevents add
 * only which CPUs went offline, so that one back online before the list
 * was read still counts as gone. When messages were lost, a bounce among
 * them cannot be told from no change, so every CPU counts as gone and
 * back: claims end that may have lost their meaning, never one that kept
 * a CPU which went and came unseen.
 *
 * Uevents reach sockets in network namespaces owned by the initial user
 * namespace, PrivateNetwork= included; the unit allows AF_NETLINK for it.
 */
#ifndef RTPLACE_HOTPLUG_H
#define RTPLACE_HOTPLUG_H

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"

struct hotplug;

/* The CPUs SYSFS/devices/system/cpu/online lists ("/sys" normally). 0,
 * -errno when it cannot be read, -EINVAL when it is not a CPU list. */
int hotplug_read_online(const char *sysfs, struct rtplace_cpumask *ret);

enum hotplug_action {
	HOTPLUG_NONE,    /* not about a CPU coming or going */
	HOTPLUG_ONLINE,  /* a CPU went online, or was added */
	HOTPLUG_OFFLINE, /* a CPU went offline, or was removed */
};

/* What the uevent msg (len bytes: "ACTION@DEVPATH", then NUL-separated
 * KEY=VALUE) says about a CPU, and which CPU (*ret_cpu, from DEVPATH
 * /devices/system/cpu/cpuN; RTPLACE_MAX_CPUS when it names none). */
enum hotplug_action hotplug_uevent_parse(const char *msg, size_t len, unsigned *ret_cpu);

/*
 * What changed between two reads of the online list, was and now, given
 * the CPUs that uevents said went offline in between (offlined) and
 * whether uevents were lost (lost): gone is every CPU that was taken
 * offline, also one back online by now (its threads lost their affinity
 * and its claims their meaning on the way), and after a loss every CPU of
 * was, since any may have bounced unseen; came is every CPU online now
 * that was not, or that was gone meanwhile.
 */
void hotplug_changes(const struct rtplace_cpumask *was, const struct rtplace_cpumask *now, const struct rtplace_cpumask *offlined, bool lost,
		     struct rtplace_cpumask *ret_gone, struct rtplace_cpumask *ret_came);

/* Opens the uevent socket and reads the online list (sysfs is kept, not
 * copied). 0 or -errno; *ret written only on success. */
int hotplug_open(const char *sysfs, struct hotplug **ret);

/* Readable when uevents are pending (non-blocking). */
int hotplug_fd(const struct hotplug *h);

/*
 * Drains the pending uevents; if one was about a CPU, or some were lost,
 * re-reads the online list. Returns 1 when CPUs went or came
 * (hotplug_changes(); *ret_gone, *ret_came and *ret_lost, whether uevents
 * were lost, written), 0 when not, -errno when the list cannot be read
 * (the last one is kept, and the CPUs uevents named offline, and a loss,
 * are reported with the next read).
 */
int hotplug_consume(struct hotplug *h, struct rtplace_cpumask *ret_gone, struct rtplace_cpumask *ret_came, bool *ret_lost);

/* Closes the socket; accepts NULL. */
void hotplug_close(struct hotplug *h);

#endif
