/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Interrupt noise (DESIGN §20): each CPU's hardirq and softirq time over
 * the last window, from /proc/stat deltas read through procfs.h. The
 * shares rank CPUs of one level for placement (placement.h: noisy CPUs
 * last) and are shown by `rtplacectl cpus`/`top` and the metrics.
 *
 * /proc/stat, not BPF irq tracepoints: bench/README.md and rtplaced(8)
 * give the figures. On kernels without CONFIG_IRQ_TIME_ACCOUNTING the
 * columns are tick samples, so a window must span enough ticks (at least
 * a few hundred ms) for a share to mean anything.
 *
 * A threaded interrupt handler (every device's on PREEMPT_RT, some on any
 * kernel, all with threadirqs) runs in a kernel thread irq/N-NAME, whose
 * time /proc/stat counts as system time, not irq: the CPU time of those
 * threads (their stat's utime + stime, in the same ticks) counts as hardirq
 * time of the CPU each last ran on in the window shares, while the
 * counters since boot stay /proc/stat's. The threads are found among
 * kthreadd's children (<proc>/2/task/2/children) at the first sample and
 * every IRQNOISE_RESCAN samples after; each sample reads the stat of each
 * one.
 *
 * irqnoise_update(), irqnoise_thread_seen() and irqnoise_noisy() are
 * pure; irqnoise_sample() reads the files.
 */
#ifndef RTPLACE_IRQNOISE_H
#define RTPLACE_IRQNOISE_H

#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"
#include "procfs.h"

/* Parts per million of a window. */
#define IRQNOISE_PPM 1000000u

/* A CPU is noisy when its hardirq + softirq share of the window exceeds
 * the quietest candidate's by more than this (1%: one USER_HZ tick of a
 * one-second window, the finest step tick sampling gives). */
#define IRQNOISE_NOISY_PPM 10000u

/* Samples between two looks for interrupt threads that came or went. */
#define IRQNOISE_RESCAN 30u

struct irqnoise_cpu {
	uint64_t irq_ns;      /* since boot, as /proc/stat counts it (no interrupt thread's time) */
	uint64_t softirq_ns;
	uint32_t irq_ppm;     /* share of the last window, interrupt threads' time included */
	uint32_t softirq_ppm;
};

struct irqnoise;

/* ns_per_tick: 1e9 / USER_HZ (sysconf(_SC_CLK_TCK)). Takes no sample.
 * 0 or -ENOMEM. */
int irqnoise_new(uint32_t ncpus, uint64_t ns_per_tick, const char *proc, struct irqnoise **ret);
void irqnoise_free(struct irqnoise *n);

/* Takes /proc/stat's counters cur[ncpus] read at now_ns (CLOCK_MONOTONIC),
 * with the interrupt threads' ticks seen so far added to irq: the shares
 * become those of the time since the last update (none before the
 * second). A counter that went back (a CPU replaced by hotplug) counts
 * as no time. */
void irqnoise_update(struct irqnoise *n, const struct procfs_cpu_irq *cur, uint64_t now_ns);

/* Interrupt thread pid (started at start_time, /proc's field 22) has run
 * ticks in all and last ran on cpu: what it ran since it was last seen
 * counts as interrupt time of cpu from the next update. A pid first seen,
 * or one taken by another thread, only sets the base. 0 or -ENOMEM. */
int irqnoise_thread_seen(struct irqnoise *n, pid_t pid, uint64_t start_time, uint32_t cpu, uint64_t ticks);

/* Reads <proc>/stat and the interrupt threads' stat files, and updates.
 * 0 or -errno from <proc>/stat (the shares stay); a thread that cannot be
 * read is forgotten. */
int irqnoise_sample(struct irqnoise *n, uint64_t now_ns);

/* The per-CPU figures, [ncpus]. */
const struct irqnoise_cpu *irqnoise_cpus(const struct irqnoise *n);

/* The CPUs of among whose share exceeds the quietest of among's by more
 * than IRQNOISE_NOISY_PPM. */
void irqnoise_noisy(const struct irqnoise *n, const struct rtplace_cpumask *among, struct rtplace_cpumask *ret);

#endif
