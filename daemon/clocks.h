/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's one reader of the clocks: every timestamp it keeps or sends
 * (loop timers, records, the tracker's epoch, systemd's MONOTONIC_USEC) is
 * CLOCK_MONOTONIC, which the BPF programs' bpf_ktime_get_ns() also reads,
 * so times from the kernel and from the daemon compare; the sampler's own
 * cost is the thread's CPU time; the boot time dates processes for the
 * metrics.
 */
#ifndef RTPLACE_DAEMON_CLOCKS_H
#define RTPLACE_DAEMON_CLOCKS_H

#include <stdint.h>

/* CLOCK_MONOTONIC in ns. */
uint64_t clocks_monotonic_ns(void);

/* When the machine booted, in ns since the epoch (CLOCK_REALTIME less
 * CLOCK_BOOTTIME): what a process's start time in ticks counts from. */
uint64_t clocks_boot_time_ns(void);

/* CLOCK_BOOTTIME in ns: what a process's start time in ticks is read
 * against (RealtimeKit dates its callers by it). */
uint64_t clocks_boottime_ns(void);

/* The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID) in ns. */
uint64_t clocks_thread_cpu_ns(void);

#endif
