/*
 * CPU hotplug as user space sees it: which CPUs the kernel has online (the
 * list in SYSFS/devices/system/cpu/online, the only reader of it), and,
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
 * SMT control, ACPI), a stable ABI. A uevent is taken as a hint only: the
 * online list is re-read, so a lost or merged message (ENOBUFS) costs
 * nothing but the read.
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
int hotplug_read_online(const char *sysfs, struct cpuset *ret);

/* Whether the uevent msg (len bytes: "ACTION@DEVPATH", then NUL-separated
 * KEY=VALUE) says a CPU went online or offline, or was added or removed. */
bool hotplug_uevent_is_cpu(const char *msg, size_t len);

/* Opens the uevent socket and reads the online list (sysfs is kept, not
 * copied). 0 or -errno; *ret written only on success. */
int hotplug_open(const char *sysfs, struct hotplug **ret);

/* Readable when uevents are pending (non-blocking). */
int hotplug_fd(const struct hotplug *h);

/*
 * Drains the pending uevents; if one was about a CPU, or some were lost,
 * re-reads the online list. Returns 1 when it differs from the last one
 * (*ret_was and *ret_now written), 0 when not, -errno when the list cannot
 * be read (the last one is kept).
 */
int hotplug_consume(struct hotplug *h, struct cpuset *ret_was, struct cpuset *ret_now);

/* Closes the socket; accepts NULL. */
void hotplug_close(struct hotplug *h);

#endif
