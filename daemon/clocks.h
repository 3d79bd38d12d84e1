/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's one reader of the clocks: every timestamp it keeps or sends
 * (loop timers, records, the tracker's epoch, systemd's MONOTONIC_USEC) is
 * CLOCK_MONOTONIC, which the BPF programs' bpf_ktime_get_ns() also reads,
 * so times from the kernel and from the daemon compare; the sampler's own
 * cost is the thread's CPU time.
 */
#ifndef RTPLACE_DAEMON_CLOCKS_H
#define RTPLACE_DAEMON_CLOCKS_H

#include <stdint.h>

/* CLOCK_MONOTONIC in ns. */
uint64_t clocks_monotonic_ns(void);

/* The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID) in ns. */
uint64_t clocks_thread_cpu_ns(void);

#endif
