/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What one sample of the /proc-sampled map costs (daemon/sampler.h): the
 * CPU time of sampler_sample() with the machine's own threads and with
 * extra sleeping threads (of a child process: the bench stays one
 * thread), on the live topology or a
 * simulated one (--topology: the map's size and the CPUs written; CPUs
 * the machine lacks read as offline, as hotplug would make them). A sample
 * lists every process and reads every thread's stat file, so the figure
 * to scale by is the cost per thread.
 *
 *   sampler-cost [--topology XML] [--samples N] [THREADS...]
 *
 * For each THREADS (default 0 1000 4000) prints the machine's thread
 * count, the median and p99 CPU time of a sample, the time per thread,
 * and the share of one CPU at a 100 ms interval. Needs no root.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchlib.h"
#include "procfs.h"
#include "sampler.h"
#include "topo.h"

static void *bench_sleeper(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

/* A child process with n sleeping threads, ready when this returns. */
static pid_t bench_spawn(size_t n)
{
	int fds[2];
	pid_t pid;
	char c = 0;

	if (pipe(fds) < 0 || (pid = fork()) < 0) {
		fprintf(stderr, "sampler-cost: fork: %s\n", strerror(errno));
		exit(2);
	}
	if (pid == 0) {
		for (size_t i = 0; i < n; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, bench_sleeper, NULL)) {
				fprintf(stderr, "sampler-cost: starting thread %zu failed\n", i);
				_exit(2);
			}
		}
		if (write(fds[1], &c, 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1) {
		fprintf(stderr, "sampler-cost: the child failed to start its threads\n");
		exit(2);
	}
	close(fds[0]);
	return pid;
}

/* Threads on the machine now, as a sample would list them. */
static size_t bench_count_threads(void)
{
	struct procfs_ids procs = { 0 }, tasks = { 0 };
	size_t n = 0;

	if (procfs_list(PROCFS_ROOT, 0, &procs) == 0)
		for (size_t i = 0; i < procs.n; i++)
			if (procfs_list(PROCFS_ROOT, procs.ids[i], &tasks) == 0)
				n += tasks.n;
	procfs_ids_free(&procs);
	procfs_ids_free(&tasks);
	return n;
}

static void bench_run(struct sampler *s, unsigned nsamples, size_t extra)
{
	uint64_t *ns = calloc(nsamples, sizeof(*ns));
	struct sampler_stats st;
	size_t threads = bench_count_threads();
	double med;

	if (!ns) {
		fprintf(stderr, "sampler-cost: out of memory\n");
		exit(2);
	}
	for (unsigned i = 0; i < nsamples; i++) {
		int r = sampler_sample(s);

		if (r < 0) {
			fprintf(stderr, "sampler-cost: sampling failed: %s\n", strerror(-r));
			exit(2);
		}
		sampler_get_stats(s, &st);
		ns[i] = st.last_ns;
	}
	qsort(ns, nsamples, sizeof(*ns), bench_cmp_u64);
	med = (double)bench_pct(ns, nsamples, 50);
	printf("%8zu %8zu %10.3f %10.3f %10.2f %8.1f%%\n", extra, threads, med / 1e6,
	       (double)bench_pct(ns, nsamples, 99) / 1e6, med / (double)threads / 1e3, med / 1e6);
	free(ns);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, 't' },
		{ "samples", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const dflt[] = { "0", "1000", "4000" };
	const char *const *counts = dflt;
	const char *xml = NULL;
	unsigned nsamples = 200;
	size_t ncounts = 3;
	struct sampler *s = NULL;
	struct topo *topo = NULL;
	struct rtplace_reason reason;
	int c, r;

	while ((c = getopt_long(argc, argv, "t:n:", opts, NULL)) != -1) {
		if (c == 't')
			xml = optarg;
		else if (c == 'n')
			nsamples = (unsigned)strtoul(optarg, NULL, 10);
		else
			return 2;
	}
	if (optind < argc) {
		counts = (const char *const *)&argv[optind];
		ncounts = (size_t)(argc - optind);
	}
	r = topo_load(xml, &reason, &topo);
	if (r < 0) {
		fprintf(stderr, "sampler-cost: %s\n", reason.text);
		return 2;
	}
	r = sampler_new(topo, TOPO_SHARD_NODE, PROCFS_ROOT, "/sys", &s);
	if (r < 0 || !nsamples) {
		fprintf(stderr, "sampler-cost: setting up failed: %s\n", strerror(-r));
		return 2;
	}
	printf("topology %s: %u CPU ids, %u nodes; %u samples each\n", xml ? xml : "(live)", topo->ncpus,
	       topo->nnodes, nsamples);
	printf("%8s %8s %10s %10s %10s %9s\n", "extra", "threads", "p50 ms", "p99 ms", "us/thread", "@100ms");
	for (size_t i = 0; i < ncounts; i++) {
		size_t want = strtoul(counts[i], NULL, 10);
		pid_t child = bench_spawn(want);

		bench_run(s, nsamples, want);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	sampler_free(s);
	topo_free(topo);
	return 0;
}
