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
 *
 * With --daemons (root, the live machine), the same cost as the daemon
 * pays it, side by side in one run: four rtplaced started alike but for
 * [placement] irq-window-ms: 60000 twice (no sample after the first
 * within the run: sampling off, and its twin, whose ratio to it is the
 * run's noise floor), 1000 (the default) and 100 (the finest). First each
 * one's CPU time per second while idle, all four over the same seconds
 * (from /proc/PID/schedstat: a sample's read, parse, noisy set and the
 * snapshot it republishes); then the QUERY round trip, one client per
 * daemon, in interleaved blocks of 500 whose order rotates so host noise
 * and position hit all four alike, as p50, p99 and p99.9, each daemon's
 * CPU time per round trip, and every figure's ratio to sampling off.
 *
 *   bench/irqnoise-cost [--daemons [--rtplaced PATH] [--seconds S] [--rounds N]]
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"
#include "irqnoise.h"
#include "protocol.h"

#define IC_REPEATS 15
#define IC_SAMPLES 200

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
		uint64_t start = bench_thread_ns();

		for (int i = 0; i < IC_SAMPLES && r == 0; i++)
			r = irqnoise_sample(n, t += 1000000000u);
		sample[rep] = (double)(bench_thread_ns() - start) / IC_SAMPLES;
		start = bench_thread_ns();
		for (int i = 0; i < IC_SAMPLES; i++)
			irqnoise_noisy(n, &all, &noisy);
		noisy_ns[rep] = (double)(bench_thread_ns() - start) / IC_SAMPLES;
	}
	if (r == 0) {
		double s = bench_median(sample, IC_REPEATS), q = bench_median(noisy_ns, IC_REPEATS);

		printf("%-28s %6u %12.0f %12.0f %10.4f%%\n", label, ncpus, s, q, (s + q) / 1e9 * 100);
	}
	irqnoise_free(n);
	return r;
}

/* The daemons of --daemons: sampling off and its twin, the default
 * window, the finest. */
#define IC_DAEMONS 4
#define IC_BLOCK 500

static const char *const ic_daemon_names[IC_DAEMONS] = { "off (60000 ms)", "off, twin", "default (1000 ms)",
							 "100 ms" };
static const char *const ic_daemon_configs[IC_DAEMONS] = {
	"[placement]\nirq-window-ms = 60000\n",
	"[placement]\nirq-window-ms = 60000\n",
	"[placement]\nirq-window-ms = 1000\n",
	"[placement]\nirq-window-ms = 100\n",
};
static struct bench_daemon ic_daemons[IC_DAEMONS];

static void ic_daemons_stop(void)
{
	for (int k = 0; k < IC_DAEMONS; k++)
		bench_daemon_stop(&ic_daemons[k]);
}

/* ns that pid's main thread, the daemon's one loop, has run (schedstat's
 * first field). */
static uint64_t ic_cpu_ns(pid_t pid)
{
	uint64_t ns;

	if (bench_schedstat_ns(pid, &ns) < 0) {
		fprintf(stderr, "irqnoise-cost: cannot read /proc/%d/schedstat\n", (int)pid);
		exit(2);
	}
	return ns;
}

/* One QUERY (rt50, one CPU) and its reply, which must be an answer: an
 * error is quicker and would flatter whichever daemon sent it. */
static void ic_round_trip(int fd, const struct proto_msg *m)
{
	static unsigned char buf[RTPLACE_MSG_MAX];
	struct proto_msg reply;
	ssize_t n;

	if (send(fd, m, m->hdr.length, 0) < 0 || (n = recv(fd, buf, sizeof(buf), 0)) <= 0 ||
	    proto_decode(buf, (size_t)n, NULL, &reply, NULL) < 0 || reply.hdr.type != RTPLACE_MSG_QUERY_REPLY) {
		fprintf(stderr, "irqnoise-cost: a QUERY was not answered\n");
		exit(2);
	}
}

static int ic_daemons_run(const char *bin, double seconds, long rounds)
{
	struct rtplace_query q = { .prio = 50, .policy = RTPLACE_POLICY_FIFO, .count = 1, .node = -1, .near_cpu = -1 };
	uint64_t idle0[IC_DAEMONS], idle1[IC_DAEMONS], busy[IC_DAEMONS] = { 0 }, *lat[IC_DAEMONS];
	double idle_per_s[IC_DAEMONS], wall, p[IC_DAEMONS][3];
	struct timespec nap = { .tv_sec = (time_t)seconds,
				.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9) };
	struct proto_msg m;
	int fds[IC_DAEMONS];
	uint64_t t0;

	atexit(ic_daemons_stop);
	signal(SIGPIPE, SIG_IGN);
	fflush(stdout);
	for (int k = 0; k < IC_DAEMONS; k++) {
		bench_daemon_start(&ic_daemons[k], "irqnoise-cost", bin, ic_daemon_configs[k], NULL);
		fds[k] = bench_connect("irqnoise-cost", ic_daemons[k].socket);
		lat[k] = calloc((size_t)rounds, sizeof(uint64_t));
		if (!lat[k])
			return -ENOMEM;
	}
	proto_encode_query(&m, 1, &q);
	proto_msg_finish(&m, RTPLACE_PROTO_VERSION);
	/* Settled: past start-up, each daemon's first sample taken. */
	sleep(1);

	t0 = bench_now_ns();
	for (int k = 0; k < IC_DAEMONS; k++)
		idle0[k] = ic_cpu_ns(ic_daemons[k].pid);
	nanosleep(&nap, NULL);
	for (int k = 0; k < IC_DAEMONS; k++)
		idle1[k] = ic_cpu_ns(ic_daemons[k].pid);
	wall = (double)(bench_now_ns() - t0) / 1e9;
	for (int k = 0; k < IC_DAEMONS; k++)
		idle_per_s[k] = (double)(idle1[k] - idle0[k]) / wall;

	for (int i = 0; i < 1000; i++)
		for (int k = 0; k < IC_DAEMONS; k++)
			ic_round_trip(fds[k], &m);
	for (long done = 0; done < rounds; done += IC_BLOCK) {
		for (int j = 0; j < IC_DAEMONS; j++) {
			int k = (int)((done / IC_BLOCK + j) % IC_DAEMONS);
			uint64_t c0 = ic_cpu_ns(ic_daemons[k].pid);

			for (long i = done; i < done + IC_BLOCK && i < rounds; i++) {
				uint64_t t = bench_now_ns();

				ic_round_trip(fds[k], &m);
				lat[k][i] = bench_now_ns() - t;
			}
			busy[k] += ic_cpu_ns(ic_daemons[k].pid) - c0;
		}
	}
	for (int k = 0; k < IC_DAEMONS; k++) {
		close(fds[k]);
		qsort(lat[k], (size_t)rounds, sizeof(uint64_t), bench_cmp_u64);
		p[k][0] = (double)bench_pct(lat[k], (size_t)rounds, 50);
		p[k][1] = (double)bench_pct(lat[k], (size_t)rounds, 99);
		p[k][2] = (double)lat[k][(size_t)((double)rounds * 0.999)];
		free(lat[k]);
	}

	printf("\nfour rtplaced on the live machine, [placement] irq-window-ms as named\n");
	printf("idle, the same %.2f s for all four: daemon CPU time per second\n", wall);
	printf("%-18s %12s %12s %12s\n", "sampling", "us per s", "to off", "above off");
	for (int k = 0; k < IC_DAEMONS; k++)
		printf("%-18s %12.1f %12.2f %12.1f\n", ic_daemon_names[k], idle_per_s[k] / 1e3,
		       idle_per_s[k] / idle_per_s[0], (idle_per_s[k] - idle_per_s[0]) / 1e3);
	printf("\nQUERY round trip, 1 client each, %ld round trips, interleaved in blocks of %d\n", rounds, IC_BLOCK);
	printf("%-18s %9s %9s %9s %11s   %s\n", "sampling", "p50 us", "p99 us", "p99.9 us", "daemon us",
	       "to off: p50 p99 p99.9 daemon");
	for (int k = 0; k < IC_DAEMONS; k++)
		printf("%-18s %9.2f %9.2f %9.2f %11.2f   %.3f %.3f %.3f %.3f\n", ic_daemon_names[k], p[k][0] / 1e3,
		       p[k][1] / 1e3, p[k][2] / 1e3, (double)busy[k] / (double)rounds / 1e3, p[k][0] / p[0][0],
		       p[k][1] / p[0][1], p[k][2] / p[0][2], (double)busy[k] / (double)busy[0]);
	return 0;
}

static int ic_usage(int status)
{
	printf("Usage: irqnoise-cost [--daemons [--rtplaced PATH] [--seconds S] [--rounds N]]\n");
	return status;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "daemons", no_argument, NULL, 'd' },	     { "rtplaced", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 's' }, { "rounds", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },	     { NULL, 0, NULL, 0 },
	};
	static const uint32_t sizes[] = { 480, 8192 };
	char dir[] = "/tmp/irqnoise-cost.XXXXXX", path[300];
	const char *bin = "daemon/rtplaced";
	bool daemons = false;
	double seconds = 10;
	long rounds = 30000;
	int c, r;

	while ((c = getopt_long(argc, argv, "dr:s:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			daemons = true;
			break;
		case 'r':
			bin = optarg;
			break;
		case 's':
			seconds = strtod(optarg, NULL);
			break;
		case 'n':
			rounds = strtol(optarg, NULL, 10);
			break;
		default:
			return ic_usage(c == 'h' ? 0 : 64);
		}
	}
	if (optind < argc || seconds < 1 || seconds > 3600 || rounds < 1000 || rounds > 10000000) {
		fprintf(stderr, "irqnoise-cost: --seconds must be 1..3600 and --rounds 1000..10000000\n");
		return ic_usage(64);
	}

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
	if (r == 0 && daemons)
		r = ic_daemons_run(bin, seconds, rounds);
	if (r < 0)
		fprintf(stderr, "irqnoise-cost: %s\n", strerror(-r));
	return r < 0 ? 2 : 0;
}
