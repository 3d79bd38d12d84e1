/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Interrupt time per CPU from the irq and softirq tracepoints, for
 * bench/irqnoise-cost.sh to weigh against /proc/stat (daemon/irqnoise.h):
 * each entry stamps the CPU's slot, each exit adds the time since. A
 * hardirq that interrupts a softirq counts in both (the softirq's span
 * holds it): enough to see what each source sees of a softirq load.
 */
#include "kernel-types.h"

#include <bpf/bpf_helpers.h>

#include "irqtime-abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Aligned so that no two CPUs' slots share a line. */
struct irqtime_cpu irqtime_cpus[IRQTIME_MAX_CPUS] __attribute__((aligned(64)));

static __always_inline int irqtime_enter(int kind)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (cpu >= IRQTIME_MAX_CPUS)
		return 0;
	irqtime_cpus[cpu].start[kind] = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int irqtime_exit(int kind)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 start;

	if (cpu >= IRQTIME_MAX_CPUS)
		return 0;
	start = irqtime_cpus[cpu].start[kind];
	if (!start)
		return 0;
	irqtime_cpus[cpu].ns[kind] += bpf_ktime_get_ns() - start;
	irqtime_cpus[cpu].events[kind]++;
	irqtime_cpus[cpu].start[kind] = 0;
	return 0;
}

SEC("raw_tp/irq_handler_entry")
int irqtime_irq_entry(void *ctx)
{
	return irqtime_enter(0);
}

SEC("raw_tp/irq_handler_exit")
int irqtime_irq_exit(void *ctx)
{
	return irqtime_exit(0);
}

SEC("raw_tp/softirq_entry")
int irqtime_softirq_entry(void *ctx)
{
	return irqtime_enter(1);
}

SEC("raw_tp/softirq_exit")
int irqtime_softirq_exit(void *ctx)
{
	return irqtime_exit(1);
}
