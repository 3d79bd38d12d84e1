/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What reading the kernel's RT environment costs the daemon's loop
 * (daemon/kernel-env.h): kernel_env_read() (everything: the cpu cgroups,
 * both deadline servers on every CPU, sched_ext), as at start, reload and
 * hotplug, and kernel_env_refresh() (sched_ext alone), as every 10 s, on
 * a written tree of N CPUs whose fair server has a folder per CPU (debugfs
 * itself is not writable, and on a host under lockdown not readable: the
 * files here are on $TMPDIR, default /tmp) and 100 cpu cgroups.
 *
 *   kernel-env-cost [--runs R] [CPUS...]
 *
 * For each CPUS (default 2 480 8192) prints the fastest and the median
 * wall time of R runs (default 20) of each. Needs no root.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchlib.h"
#include "kernel-env.h"
#include "log.h"

/* Writes text to root/rel, making the folders on the way. */
static void bench_write(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			perror(path);
			exit(2);
		}
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) < 0) {
		perror(path);
		exit(2);
	}
}

/* A sys tree of ncpus CPUs under root. */
static void bench_tree(const char *root, unsigned ncpus)
{
	char rel[128];

	bench_write(root, "sys/fs/cgroup/cpu/cpu.rt_runtime_us", "950000\n");
	bench_write(root, "sys/fs/cgroup/cpu/cpu.rt_period_us", "1000000\n");
	for (unsigned i = 0; i < 100; i++) {
		snprintf(rel, sizeof(rel), "sys/fs/cgroup/cpu/s%u/cpu.rt_runtime_us", i);
		bench_write(root, rel, "0\n");
	}
	bench_write(root, "sys/kernel/sched_ext/state", "enabled\n");
	bench_write(root, "sys/kernel/sched_ext/root/ops", "simple\n");
	bench_write(root, "proc/cmdline", "ro quiet\n");
	for (unsigned cpu = 0; cpu < ncpus; cpu++) {
		snprintf(rel, sizeof(rel), "sys/kernel/debug/sched/fair_server/cpu%u/runtime", cpu);
		bench_write(root, rel, "50000000\n");
		snprintf(rel, sizeof(rel), "sys/kernel/debug/sched/fair_server/cpu%u/period", cpu);
		bench_write(root, rel, "1000000000\n");
	}
}

static void bench_report(const char *what, double *ms, unsigned runs)
{
	double fastest = ms[0];

	for (unsigned i = 1; i < runs; i++)
		fastest = ms[i] < fastest ? ms[i] : fastest;
	printf("  %-8s fastest %8.3f ms, median %8.3f ms\n", what, fastest, bench_median(ms, runs));
}

static void bench_one(unsigned ncpus, unsigned runs)
{
	char root[PATH_MAX], sys[PATH_MAX + 8], proc[PATH_MAX + 8], cmd[PATH_MAX + 16];
	double *full = calloc(runs, sizeof(*full)), *scx = calloc(runs, sizeof(*scx));
	struct kernel_env *k;

	snprintf(root, sizeof(root), "%s/kernel-env-cost.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!full || !scx || !mkdtemp(root)) {
		perror("kernel-env-cost");
		exit(2);
	}
	bench_tree(root, ncpus);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	if (kernel_env_new(sys, proc, &k) < 0)
		exit(2);
	for (unsigned i = 0; i < runs; i++) {
		uint64_t t0 = bench_now_ns(), t1, t2;

		kernel_env_read(k, ncpus);
		t1 = bench_now_ns();
		kernel_env_refresh(k);
		t2 = bench_now_ns();
		full[i] = (double)(t1 - t0) / 1e6;
		scx[i] = (double)(t2 - t1) / 1e6;
	}
	if (kernel_env_get(k)->fair.ncpus != ncpus || kernel_env_get(k)->rtg.budgetless != 100) {
		fprintf(stderr, "kernel-env-cost: read %u CPUs and %u cgroups, wrote %u and 100\n",
			kernel_env_get(k)->fair.ncpus, kernel_env_get(k)->rtg.budgetless, ncpus);
		exit(2);
	}
	printf("%u CPUs, 100 cpu cgroups:\n", ncpus);
	bench_report("read", full, runs);
	bench_report("refresh", scx, runs);
	kernel_env_free(k);
	free(full);
	free(scx);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "kernel-env-cost: could not remove %s\n", root);
}

int main(int argc, char **argv)
{
	static const unsigned defaults[] = { 2, 480, 8192 };
	unsigned runs = 20;
	int c;

	while ((c = getopt(argc, argv, "r:")) != -1) {
		if (c != 'r' || (runs = (unsigned)atoi(optarg)) == 0) {
			fprintf(stderr, "usage: kernel-env-cost [-r RUNS] [CPUS...]\n");
			return 2;
		}
	}
	/* The first read logs every part; the bench measures, not logs. */
	log_set_level(LOG_ERR);
	if (optind == argc)
		for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
			bench_one(defaults[i], runs);
	for (int i = optind; i < argc; i++)
		bench_one((unsigned)atoi(argv[i]), runs);
	return 0;
}
