/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Local reads against the socket (DESIGN §19): the same non-claiming
 * query answered by librtplace from the daemon's map and snapshot
 * (rtplace_local_open()) and by a simulated rtplaced over its socket,
 * interleaved in blocks in one run so that host noise hits both alike.
 * Local queries are timed in batches of BATCH (a clock read costs about
 * as much as a local query: one per query would measure the clock), the
 * socket's one by one. Then threads query one handle locally at once
 * against one thread alone, queries per second summed (the read path
 * writes only each thread's own state, which test-local-noshare checks):
 * as many threads as CPUs are online, where the ideal is that many times
 * one thread on an idle machine, and THREADS (32), which on a machine of
 * fewer CPUs shows only that oversubscription costs no more than the
 * CPUs' share.
 *
 *   bench/local-query --topology XML [--rtplaced PATH] [--rounds N] [--count N] [--threads N]
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchlib.h"
#include "rtplace.h"

#define BATCH 16
#define BLOCKS 50

struct worker {
	struct rtplace *rp;
	const struct rtplace_request *req;
	uint64_t ns, cpu_ns;
	pthread_barrier_t *go;
	unsigned long queries;
	int failed;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct rtplace_answer ans;
	uint64_t t0, c0;

	/* The first query builds this thread's state: not counted. */
	w->failed = rtplace_query(w->rp, w->req, &ans) != 0;
	pthread_barrier_wait(w->go);
	t0 = bench_now_ns();
	c0 = bench_thread_ns();
	for (unsigned long i = 0; i < w->queries; i++)
		w->failed |= rtplace_query(w->rp, w->req, &ans) != 0;
	w->cpu_ns = bench_thread_ns() - c0;
	w->ns = bench_now_ns() - t0;
	return NULL;
}

/* Queries per second of n threads querying rp at once (wall clock, the
 * slowest thread's), and their CPU time per query into *ret_cpu_ns: what
 * shared writes would raise (lines moving between CPUs) even where a busy
 * host keeps the threads from running at once. */
static double threads_rate(struct rtplace *rp, const struct rtplace_request *req, unsigned n, unsigned long queries,
			   double *ret_cpu_ns)
{
	struct worker *w = calloc(n, sizeof(*w));
	pthread_t *t = calloc(n, sizeof(*t));
	pthread_barrier_t go;
	uint64_t worst = 0, cpu = 0;

	if (!w || !t) {
		fprintf(stderr, "local-query: out of memory\n");
		exit(1);
	}
	pthread_barrier_init(&go, NULL, n);
	for (unsigned i = 0; i < n; i++) {
		w[i] = (struct worker){ .rp = rp, .req = req, .go = &go, .queries = queries };
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		if (w[i].failed) {
			fprintf(stderr, "local-query: a threaded query failed\n");
			exit(1);
		}
		if (w[i].ns > worst)
			worst = w[i].ns;
		cpu += w[i].cpu_ns;
	}
	pthread_barrier_destroy(&go);
	*ret_cpu_ns = (double)cpu / ((double)n * (double)queries);
	free(w);
	free(t);
	return (double)n * (double)queries / ((double)worst / 1e9);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rtplaced", required_argument, NULL, 'r' }, { "topology", required_argument, NULL, 't' },
		{ "rounds", required_argument, NULL, 'n' },   { "count", required_argument, NULL, 'c' },
		{ "threads", required_argument, NULL, 'T' },  { 0 },
	};
	const char *bin = "daemon/rtplaced", *topology = NULL;
	unsigned rounds = 2000, threads = 32, count = 1;
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct bench_daemon d = { 0 };
	struct rtplace *sock, *loc;
	struct rtplace_answer ans;
	uint64_t *local_ns, *sock_ns, p50l, p99l, p50s, p99s;
	size_t nl = 0, ns = 0;
	double one, at_cpus, many, one_cpu, at_cpus_cpu, many_cpu;
	unsigned online = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'r':
			bin = optarg;
			break;
		case 't':
			topology = optarg;
			break;
		case 'n':
			rounds = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'c':
			count = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'T':
			threads = (unsigned)strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: %s --topology XML [--rtplaced PATH] [--rounds N] [--count N] "
					"[--threads N]\n",
				argv[0]);
			return 2;
		}
	}
	if (!topology || !rounds || !threads || !count) {
		fprintf(stderr, "local-query: --topology XML is required; --rounds, --count, --threads > 0\n");
		return 2;
	}
	{
		const char *extra[] = { "--topology", topology, NULL };

		bench_daemon_start(&d, "local-query", bin, NULL, extra);
	}
	if (rtplace_connect(d.socket, &sock) < 0 || rtplace_connect(d.socket, &loc) < 0 ||
	    rtplace_local_open(loc) < 0) {
		fprintf(stderr, "local-query: cannot connect to %s or read its map locally\n", d.socket);
		bench_daemon_stop(&d);
		return 1;
	}
	req.prio = 50;
	req.count = count;
	local_ns = calloc((size_t)BLOCKS * rounds, sizeof(*local_ns));
	sock_ns = calloc((size_t)BLOCKS * rounds, sizeof(*sock_ns));
	if (!local_ns || !sock_ns)
		return 1;
	/* Warm both paths (the thread's local state, the connection). */
	for (int i = 0; i < 1000; i++)
		if (rtplace_query(loc, &req, &ans) < 0 || rtplace_query(sock, &req, &ans) < 0)
			return 1;
	for (unsigned b = 0; b < BLOCKS; b++) {
		for (unsigned i = 0; i < rounds; i++) {
			uint64_t t0 = bench_now_ns();

			for (int k = 0; k < BATCH; k++)
				rtplace_query(loc, &req, &ans);
			local_ns[nl++] = (bench_now_ns() - t0) / BATCH;
		}
		for (unsigned i = 0; i < rounds / 10 + 1; i++) {
			uint64_t t0 = bench_now_ns();

			rtplace_query(sock, &req, &ans);
			sock_ns[ns++] = bench_now_ns() - t0;
		}
	}
	qsort(local_ns, nl, sizeof(*local_ns), bench_cmp_u64);
	qsort(sock_ns, ns, sizeof(*sock_ns), bench_cmp_u64);
	p50l = bench_pct(local_ns, nl, 50);
	p99l = bench_pct(local_ns, nl, 99);
	p50s = bench_pct(sock_ns, ns, 50);
	p99s = bench_pct(sock_ns, ns, 99);
	printf("topology %s, count %u, %u CPUs online here\n", topology, count, online);
	printf("local query   p50 %6llu ns  p99 %6llu ns  (%zu batches of %d)\n", (unsigned long long)p50l,
	       (unsigned long long)p99l, nl, BATCH);
	printf("socket query  p50 %6llu ns  p99 %6llu ns  (%zu queries)\n", (unsigned long long)p50s,
	       (unsigned long long)p99s, ns);
	printf("socket / local  p50 %.0fx  p99 %.0fx\n", (double)p50s / (double)(p50l ? p50l : 1),
	       (double)p99s / (double)(p99l ? p99l : 1));
	one = threads_rate(loc, &req, 1, 2000000, &one_cpu);
	at_cpus = threads_rate(loc, &req, online, 2000000, &at_cpus_cpu);
	many = threads_rate(loc, &req, threads, 2000000 / threads + 1, &many_cpu);
	printf("local, 1 thread   %.1f M queries/s  %.0f ns CPU per query\n", one / 1e6, one_cpu);
	printf("local, %u threads %.1f M queries/s  (%.2fx one thread; %u CPUs online: at most %ux)  %.0f ns CPU "
	       "per query (%.2fx)\n",
	       online, at_cpus / 1e6, at_cpus / one, online, online, at_cpus_cpu, at_cpus_cpu / one_cpu);
	printf("local, %u threads %.1f M queries/s  (%.2fx one thread)  %.0f ns CPU per query (%.2fx)\n", threads,
	       many / 1e6, many / one, many_cpu, many_cpu / one_cpu);
	rtplace_close(loc);
	rtplace_close(sock);
	bench_daemon_stop(&d);
	free(local_ns);
	free(sock_ns);
	return 0;
}
