/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * irqnoise-cost: what one interrupt sample costs the daemon
 * (daemon/irqnoise.h: read /proc/stat, parse its cpuN lines, update the
 * shares; then the noisy set over every CPU), on this host's /proc/stat
 * and on stat files written in its format for 480 and 8,192 CPUs (the
 * kernel's cost of writing the file for that many CPUs is not in these:
 * it is measured on this host's CPUs only). Median of 15 repeats of 200
 * samples each, thread CPU time, printed as ns per sample and the share
 * of a CPU at the default window (one sample a second).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"
#include "irqnoise.h"

#define IC_REPEATS 15
#define IC_SAMPLES 200

static uint64_t ic_thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A stat file for ncpus CPUs under dir, with an intr line of 1,024
 * interrupt counters as a large machine's has. */
static int ic_write_stat(const char *dir, uint32_t ncpus)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/stat", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "cpu  925265 2659 560014 1622420 4420 0 2594 675 0 0\n");
	for (uint32_t c = 0; c < ncpus; c++)
		fprintf(f, "cpu%u %u 1541 288961 812450 2254 %u %u 337 0 0\n", c, 451286 + c, c % 7, 1633 + c);
	fprintf(f, "intr 16209101");
	for (int i = 0; i < 1024; i++)
		fprintf(f, " %d", i * 13);
	fprintf(f, "\nctxt 123456789\nbtime 1700000000\nprocesses 12345\nprocs_running 2\nprocs_blocked 0\n"
		   "softirq 1 2 3 4 5 6 7 8 9 10 11\n");
	return fclose(f) == 0 ? 0 : -errno;
}

static int ic_run(const char *label, const char *proc, uint32_t ncpus)
{
	struct rtplace_cpumask all, noisy;
	double sample[IC_REPEATS], noisy_ns[IC_REPEATS];
	struct irqnoise *n = NULL;
	uint64_t t = 1;
	int r = irqnoise_new(ncpus, 10000000, proc, &n);

	if (r < 0)
		return r;
	cpuset_zero(&all);
	for (uint32_t c = 0; c < ncpus; c++)
		cpuset_set(&all, c);
	for (int rep = 0; rep < IC_REPEATS && r == 0; rep++) {
		uint64_t start = ic_thread_ns();

		for (int i = 0; i < IC_SAMPLES && r == 0; i++)
			r = irqnoise_sample(n, t += 1000000000u);
		sample[rep] = (double)(ic_thread_ns() - start) / IC_SAMPLES;
		start = ic_thread_ns();
		for (int i = 0; i < IC_SAMPLES; i++)
			irqnoise_noisy(n, &all, &noisy);
		noisy_ns[rep] = (double)(ic_thread_ns() - start) / IC_SAMPLES;
	}
	if (r == 0) {
		double s = bench_median(sample, IC_REPEATS), q = bench_median(noisy_ns, IC_REPEATS);

		printf("%-28s %6u %12.0f %12.0f %10.4f%%\n", label, ncpus, s, q, (s + q) / 1e9 * 100);
	}
	irqnoise_free(n);
	return r;
}

int main(void)
{
	static const uint32_t sizes[] = { 480, 8192 };
	char dir[] = "/tmp/irqnoise-cost.XXXXXX", path[300];
	int r;

	if (!mkdtemp(dir)) {
		perror("irqnoise-cost: mkdtemp");
		return 2;
	}
	printf("%-28s %6s %12s %12s %11s\n", "stat file", "cpus", "sample ns", "noisy ns", "CPU at 1 s");
	r = ic_run("/proc/stat (this host)", "/proc", (uint32_t)sysconf(_SC_NPROCESSORS_CONF));
	for (size_t i = 0; r == 0 && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char label[64];

		r = ic_write_stat(dir, sizes[i]);
		snprintf(label, sizeof(label), "written, %u CPUs", sizes[i]);
		if (r == 0)
			r = ic_run(label, dir, sizes[i]);
	}
	snprintf(path, sizeof(path), "%s/stat", dir);
	unlink(path);
	rmdir(dir);
	if (r < 0)
		fprintf(stderr, "irqnoise-cost: %s\n", strerror(-r));
	return r < 0 ? 2 : 0;
}
