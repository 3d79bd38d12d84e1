/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What an unprivileged claim/release loop costs root's queries: root's
 * QUERY round trip, p50 and p99, with nothing else running
 * and while a client running as nobody claims a CPU for itself
 * (owner-bound, as rtplace-run does) and releases it as fast as it can;
 * each owner-bound claim's begin and end goes to the claims state file.
 * Two daemons side by side in one run, interleaved in rounds so that host
 * noise hits both alike: --before (e.g. one built from an older commit)
 * and --after; ratios are after / before.
 *
 *   TMPDIR=/dev/shm bench/claims-journal --before OLD/rtplaced --after daemon/rtplaced
 *                   --topology XML [--seconds S] [--rounds N] [--rate R]
 *
 * The loop claims and releases R times a second (default 1000, about the
 * pace of a client that claims per job; 0: as fast as it can).
 *
 * TMPDIR holds the daemons' folders: tmpfs, as /run is where the daemon
 * is installed. Root only (the loop runs as nobody).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"
#include "protocol.h"

#define CJ_NOBODY 65534
#define CJ_SAMPLES_MAX (4u << 20)

enum { CJ_BEFORE, CJ_AFTER, CJ_DAEMONS };
enum { CJ_IDLE, CJ_LOOP, CJ_PHASES };

static const char *const cj_daemon_name[CJ_DAEMONS] = { "before", "after" };
static const char *const cj_phase_name[CJ_PHASES] = { "idle", "claim loop" };

struct cj_samples {
	uint64_t *ns;
	size_t n;
};

/* Sends req and reads packets until its reply (events are skipped). 0 or -1. */
static int cj_call(int fd, const struct proto_msg *req, struct proto_msg *rep)
{
	struct proto_limits lim = { .ncpus = RTPLACE_MAX_CPUS, .nnodes = 1024, .accept = PROTO_ACCEPT_REPLIES };
	static __thread unsigned char buf[RTPLACE_MSG_MAX];

	if (send(fd, req, req->hdr.length, MSG_NOSIGNAL) != (ssize_t)req->hdr.length)
		return -1;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n <= 0 || proto_decode(buf, (size_t)n, &lim, rep, NULL) < 0)
			return -1;
		if (rep->hdr.request_id == req->hdr.request_id)
			return 0;
	}
}

/* The loop, in a child as nobody: claim one CPU for itself, release it,
 * rate times a second (0: as fast as it can) until killed; counts cycles
 * in *cycles (shared memory). */
static void cj_claim_loop(const char *socket, double rate, volatile uint64_t *cycles)
{
	uint64_t period = rate > 0 ? (uint64_t)(1e9 / rate) : 0, next = bench_now_ns();
	struct rtplace_query q = {
		.prio = 10,
		.policy = RTPLACE_POLICY_FIFO,
		.count = 1,
		.flags = RTPLACE_QUERY_F_CLAIM,
		.node = -1,
		.near_cpu = -1,
		.lease_ms = RTPLACE_LEASE_DEFAULT,
		.owner_pid = getpid(),
	};
	struct proto_msg req, rep;
	uint32_t id = 1;
	int fd;

	if (setgroups(0, NULL) < 0 || setresgid(CJ_NOBODY, CJ_NOBODY, CJ_NOBODY) < 0 ||
	    setresuid(CJ_NOBODY, CJ_NOBODY, CJ_NOBODY) < 0)
		_exit(99);
	fd = bench_connect("claims-journal", socket);
	for (;;) {
		struct rtplace_release rel;

		if (proto_encode_query(&req, id++, &q) < 0 || cj_call(fd, &req, &rep) < 0 ||
		    rep.hdr.type != RTPLACE_MSG_QUERY_REPLY || !rep.query_reply.claim_id)
			_exit(98);
		rel = (struct rtplace_release){ .claim_id = rep.query_reply.claim_id };
		if (proto_encode_release(&req, id++, &rel) < 0 || cj_call(fd, &req, &rep) < 0 ||
		    rep.hdr.type != RTPLACE_MSG_RELEASE_REPLY)
			_exit(97);
		(*cycles)++;
		if (period) {
			struct timespec ts;

			next += period;
			ts = (struct timespec){ .tv_sec = (time_t)(next / 1000000000u),
						.tv_nsec = (long)(next % 1000000000u) };
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
}

/* Root's plain queries, back to back, for ns; round trips into s. */
static void cj_root_queries(const char *socket, uint64_t ns, struct cj_samples *s)
{
	struct rtplace_query q = { .prio = 50, .policy = RTPLACE_POLICY_FIFO, .count = 1, .node = -1, .near_cpu = -1 };
	struct proto_msg req, rep;
	uint64_t end = bench_now_ns() + ns;
	uint32_t id = 1;
	int fd = bench_connect("claims-journal", socket);

	while (bench_now_ns() < end && s->n < CJ_SAMPLES_MAX) {
		uint64_t t0 = bench_now_ns();

		if (proto_encode_query(&req, id++, &q) < 0 || cj_call(fd, &req, &rep) < 0) {
			fprintf(stderr, "claims-journal: query failed\n");
			exit(2);
		}
		s->ns[s->n++] = bench_now_ns() - t0;
	}
	close(fd);
}

static void cj_usage(void)
{
	fprintf(stderr, "usage: claims-journal --before PATH --after PATH --topology XML [--seconds S] [--rounds N] [--rate R]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "before", required_argument, NULL, 'b' }, { "after", required_argument, NULL, 'a' },
		{ "topology", required_argument, NULL, 't' }, { "seconds", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' }, { "rate", required_argument, NULL, 'R' }, { 0 },
	};
	const char *bin[CJ_DAEMONS] = { NULL, NULL }, *topology = NULL;
	struct cj_samples samples[CJ_DAEMONS][CJ_PHASES];
	struct bench_daemon daemons[CJ_DAEMONS];
	uint64_t loop_cycles[CJ_DAEMONS] = { 0 }, p99[CJ_DAEMONS][CJ_PHASES], p50[CJ_DAEMONS][CJ_PHASES];
	volatile uint64_t *cycles;
	double seconds = 5, rate = 1000;
	int rounds = 5, c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'b')
			bin[CJ_BEFORE] = optarg;
		else if (c == 'a')
			bin[CJ_AFTER] = optarg;
		else if (c == 't')
			topology = optarg;
		else if (c == 's')
			seconds = atof(optarg);
		else if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 'R')
			rate = atof(optarg);
		else
			cj_usage();
	}
	if (!bin[CJ_BEFORE] || !bin[CJ_AFTER] || !topology || seconds <= 0 || rounds <= 0)
		cj_usage();
	if (geteuid() != 0) {
		fprintf(stderr, "claims-journal: needs root (the claim loop runs as nobody)\n");
		return 77;
	}
	signal(SIGPIPE, SIG_IGN);
	cycles = mmap(NULL, sizeof(*cycles), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cycles == MAP_FAILED)
		return 2;
	for (int d = 0; d < CJ_DAEMONS; d++) {
		const char *extra[] = { "--topology", topology, NULL };

		/* nobody connects; a folder nobody may enter hides the socket. */
		bench_daemon_start(&daemons[d], "claims-journal", bin[d], "[daemon]\nsocket-mode = 0666\n", extra);
		if (chmod(daemons[d].dir, 0755) < 0)
			return 2;
		for (int p = 0; p < CJ_PHASES; p++) {
			samples[d][p].ns = malloc(CJ_SAMPLES_MAX * sizeof(uint64_t));
			samples[d][p].n = 0;
			if (!samples[d][p].ns)
				return 2;
		}
	}
	for (int r = 0; r < rounds; r++)
		for (int d = 0; d < CJ_DAEMONS; d++) {
			uint64_t slice = (uint64_t)(seconds * 1e9 / rounds);
			pid_t loop;

			cj_root_queries(daemons[d].socket, slice, &samples[d][CJ_IDLE]);
			*cycles = 0;
			loop = fork();
			if (loop == 0)
				cj_claim_loop(daemons[d].socket, rate, cycles);
			/* Let the loop reach its pace before measuring. */
			usleep(100000);
			*cycles = 0;
			cj_root_queries(daemons[d].socket, slice, &samples[d][CJ_LOOP]);
			kill(loop, SIGKILL);
			waitpid(loop, NULL, 0);
			loop_cycles[d] += *cycles;
		}
	for (int d = 0; d < CJ_DAEMONS; d++)
		for (int p = 0; p < CJ_PHASES; p++) {
			struct cj_samples *s = &samples[d][p];

			qsort(s->ns, s->n, sizeof(*s->ns), bench_cmp_u64);
			p50[d][p] = bench_pct(s->ns, s->n, 50);
			p99[d][p] = bench_pct(s->ns, s->n, 99);
		}
	printf("root's QUERY round trip, %d rounds of %.1f s per phase and daemon, loop at %.0f/s (0: flat out)\n",
	       rounds, seconds / rounds, rate);
	printf("%-8s %-11s %10s %10s %10s %16s\n", "daemon", "phase", "queries", "p50 us", "p99 us",
	       "claim+release/s");
	for (int d = 0; d < CJ_DAEMONS; d++)
		for (int p = 0; p < CJ_PHASES; p++)
			printf("%-8s %-11s %10zu %10.1f %10.1f %16.0f\n", cj_daemon_name[d], cj_phase_name[p],
			       samples[d][p].n, p50[d][p] / 1e3, p99[d][p] / 1e3,
			       p == CJ_LOOP ? loop_cycles[d] / seconds : 0.0);
	printf("after/before: idle p99 %.2f, loop p99 %.2f, loop claim+release/s %.2f\n",
	       (double)p99[CJ_AFTER][CJ_IDLE] / (double)p99[CJ_BEFORE][CJ_IDLE],
	       (double)p99[CJ_AFTER][CJ_LOOP] / (double)p99[CJ_BEFORE][CJ_LOOP],
	       (double)loop_cycles[CJ_AFTER] / (double)(loop_cycles[CJ_BEFORE] ? loop_cycles[CJ_BEFORE] : 1));
	printf("loop p99 / idle p99: before %.2f, after %.2f\n",
	       (double)p99[CJ_BEFORE][CJ_LOOP] / (double)p99[CJ_BEFORE][CJ_IDLE],
	       (double)p99[CJ_AFTER][CJ_LOOP] / (double)p99[CJ_AFTER][CJ_IDLE]);
	for (int d = 0; d < CJ_DAEMONS; d++)
		bench_daemon_stop(&daemons[d]);
	return 0;
}
