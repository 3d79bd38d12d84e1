/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "irqnoise.h"

struct irqnoise {
	uint32_t ncpus;
	uint64_t ns_per_tick;
	const char *proc;
	uint64_t last_ns;            /* time of the last update, 0: none yet */
	struct procfs_cpu_irq *last; /* [ncpus] the counters then */
	struct procfs_cpu_irq *cur;  /* [ncpus] a read's scratch */
	struct irqnoise_cpu *cpus;   /* [ncpus] */
	char *buf;                   /* the stat file, kept between reads */
	size_t cap;
};

int irqnoise_new(uint32_t ncpus, uint64_t ns_per_tick, const char *proc, struct irqnoise **ret)
{
	struct irqnoise *n = calloc(1, sizeof(*n));
	int r = -ENOMEM;

	if (!n)
		goto out;
	n->ncpus = ncpus;
	n->ns_per_tick = ns_per_tick;
	n->proc = proc;
	n->last = calloc(ncpus ? ncpus : 1, sizeof(*n->last));
	n->cur = calloc(ncpus ? ncpus : 1, sizeof(*n->cur));
	n->cpus = calloc(ncpus ? ncpus : 1, sizeof(*n->cpus));
	if (!n->last || !n->cur || !n->cpus)
		goto out;
	*ret = n;
	n = NULL;
	r = 0;
out:
	irqnoise_free(n);
	return r;
}

void irqnoise_free(struct irqnoise *n)
{
	if (!n)
		return;
	free(n->last);
	free(n->cur);
	free(n->cpus);
	free(n->buf);
	free(n);
}

static uint32_t irqnoise_share(uint64_t was, uint64_t now, uint64_t ns_per_tick, uint64_t window_ns)
{
	uint64_t ns = now > was ? (now - was) * ns_per_tick : 0;

	/* Tick sampling can count a tick more than the window holds. */
	return ns >= window_ns ? IRQNOISE_PPM : (uint32_t)(ns * 1000 / (window_ns / 1000 ? window_ns / 1000 : 1));
}

void irqnoise_update(struct irqnoise *n, const struct procfs_cpu_irq *cur, uint64_t now_ns)
{
	uint64_t window = n->last_ns && now_ns > n->last_ns ? now_ns - n->last_ns : 0;

	for (uint32_t c = 0; c < n->ncpus; c++) {
		struct irqnoise_cpu *x = &n->cpus[c];

		x->irq_ns = cur[c].irq * n->ns_per_tick;
		x->softirq_ns = cur[c].softirq * n->ns_per_tick;
		if (window) {
			x->irq_ppm = irqnoise_share(n->last[c].irq, cur[c].irq, n->ns_per_tick, window);
			x->softirq_ppm = irqnoise_share(n->last[c].softirq, cur[c].softirq, n->ns_per_tick, window);
		}
		n->last[c] = cur[c];
	}
	n->last_ns = now_ns;
}

int irqnoise_sample(struct irqnoise *n, uint64_t now_ns)
{
	int r;

	/* A CPU without a line (offline) reads as its last counters. */
	for (uint32_t c = 0; c < n->ncpus; c++)
		n->cur[c] = n->last[c];
	r = procfs_read_cpu_irq(n->proc, &n->buf, &n->cap, n->ncpus, n->cur);
	if (r == 0)
		irqnoise_update(n, n->cur, now_ns);
	return r;
}

const struct irqnoise_cpu *irqnoise_cpus(const struct irqnoise *n)
{
	return n->cpus;
}

void irqnoise_noisy(const struct irqnoise *n, const struct rtplace_cpumask *among, struct rtplace_cpumask *ret)
{
	uint32_t quiet = UINT32_MAX;

	cpuset_zero(ret);
	for (int c = cpuset_next(among, 0); c >= 0 && (uint32_t)c < n->ncpus; c = cpuset_next(among, (unsigned)c + 1)) {
		uint32_t s = n->cpus[c].irq_ppm + n->cpus[c].softirq_ppm;

		quiet = s < quiet ? s : quiet;
	}
	for (int c = cpuset_next(among, 0); c >= 0 && (uint32_t)c < n->ncpus; c = cpuset_next(among, (unsigned)c + 1))
		if (n->cpus[c].irq_ppm + n->cpus[c].softirq_ppm > quiet + IRQNOISE_NOISY_PPM)
			cpuset_set(ret, (unsigned)c);
}
