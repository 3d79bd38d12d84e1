/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * irqtime-hold: attaches bench/irqtime.bpf.c (interrupt time per CPU from
 * the irq and softirq tracepoints), prints its program ids on one line
 * ("ids ID,ID,ID,ID") for bench/bpf-stats, then holds them until SIGINT or
 * SIGTERM and prints, per CPU, the hardirq and softirq time and events
 * counted while attached:
 *
 *   cpu N irq_ns X irq_events Y softirq_ns Z softirq_events W
 *
 * For bench/irqnoise-cost.sh. Exit 0, 1 on a load or attach failure.
 */
#include "config.h"

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "irqtime-abi.h"
#include "irqtime.skel.h"

int main(void)
{
	struct irqtime_bpf *skel = NULL;
	struct bpf_program *progs[4];
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	sigset_t set;
	int sig, r = 1;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	skel = irqtime_bpf__open_and_load();
	if (!skel || irqtime_bpf__attach(skel) < 0) {
		fprintf(stderr, "irqtime-hold: cannot load or attach the programs\n");
		goto out;
	}
	progs[0] = skel->progs.irqtime_irq_entry;
	progs[1] = skel->progs.irqtime_irq_exit;
	progs[2] = skel->progs.irqtime_softirq_entry;
	progs[3] = skel->progs.irqtime_softirq_exit;
	printf("ids");
	for (int i = 0; i < 4; i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len) < 0)
			goto out;
		printf("%c%u", i ? ',' : ' ', info.id);
	}
	printf("\n");
	fflush(stdout);
	sigwait(&set, &sig);
	for (long c = 0; c < ncpus && c < IRQTIME_MAX_CPUS; c++) {
		const struct irqtime_cpu *x = &skel->bss->irqtime_cpus[c];

		printf("cpu %ld irq_ns %llu irq_events %llu softirq_ns %llu softirq_events %llu\n", c,
		       (unsigned long long)x->ns[0], (unsigned long long)x->events[0], (unsigned long long)x->ns[1],
		       (unsigned long long)x->events[1]);
	}
	r = 0;
out:
	irqtime_bpf__destroy(skel);
	return r;
}
