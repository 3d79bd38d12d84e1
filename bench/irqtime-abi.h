/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What bench/irqtime.bpf.c and bench/irqtime-hold.c share. */
#ifndef RTPLACE_IRQTIME_ABI_H
#define RTPLACE_IRQTIME_ABI_H

#define IRQTIME_MAX_CPUS 8192

/* One CPU's slot, a cache line (64 bytes): only that CPU writes it. */
struct irqtime_cpu {
	__u64 start[2]; /* [0] hardirq, [1] softirq: entry time, 0 outside */
	__u64 ns[2];
	__u64 events[2];
	__u64 pad[2];
};

_Static_assert(sizeof(struct irqtime_cpu) == 64, "one cache line per CPU");

#endif
