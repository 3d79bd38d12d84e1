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
 * irqnoise_update() and irqnoise_noisy() are pure; irqnoise_sample()
 * reads the file.
 */
#ifndef RTPLACE_IRQNOISE_H
#define RTPLACE_IRQNOISE_H

#include <stdint.h>

#include "cpuset.h"
#include "procfs.h"

/* Parts per million of a window. */
#define IRQNOISE_PPM 1000000u

/* A CPU is noisy when its hardirq + softirq share of the window exceeds
 * the quietest candidate's by more than this (1%: one USER_HZ tick of a
 * one-second window, the finest step tick sampling gives). */
#define IRQNOISE_NOISY_PPM 10000u

struct irqnoise_cpu {
	uint64_t irq_ns;      /* since boot, as /proc/stat counts it */
	uint64_t softirq_ns;
	uint32_t irq_ppm;     /* share of the last window */
	uint32_t softirq_ppm;
};

struct irqnoise;

/* ns_per_tick: 1e9 / USER_HZ (sysconf(_SC_CLK_TCK)). Takes no sample.
 * 0 or -ENOMEM. */
int irqnoise_new(uint32_t ncpus, uint64_t ns_per_tick, const char *proc, struct irqnoise **ret);
void irqnoise_free(struct irqnoise *n);

/* Takes counters cur[ncpus] read at now_ns (CLOCK_MONOTONIC): the shares
 * become those of the time since the last update (none before the
 * second). A counter that went back (a CPU replaced by hotplug) counts
 * as no time. */
void irqnoise_update(struct irqnoise *n, const struct procfs_cpu_irq *cur, uint64_t now_ns);

/* Reads <proc>/stat and updates. 0 or -errno (the shares stay). */
int irqnoise_sample(struct irqnoise *n, uint64_t now_ns);

/* The per-CPU figures, [ncpus]. */
const struct irqnoise_cpu *irqnoise_cpus(const struct irqnoise *n);

/* The CPUs of among whose share exceeds the quietest of among's by more
 * than IRQNOISE_NOISY_PPM. */
void irqnoise_noisy(const struct irqnoise *n, const struct rtplace_cpumask *among, struct rtplace_cpumask *ret);

#endif
