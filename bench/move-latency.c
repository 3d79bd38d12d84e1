/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Move latency through rtplaced against the bare system calls (DESIGN §11):
 * the time from a client's request until the thread's new affinity reads
 * back from the kernel, for rtplace_move() (a round trip on the socket,
 * authorisation from /proc, the level re-check for RT targets, the
 * syscalls, a record to every subscriber, the reply) and for a bare
 * sched_setaffinity() (+ sched_setscheduler()) by the thread's own process.
 * The target is a thread of this process that sleeps, moved between two
 * CPUs on every step so that every move changes something; the kinds run
 * interleaved, so drift of the machine affects them alike. A STATUS round
 * trip, timed the same way, shows how much of a move is the socket alone.
 *
 * --kind runs one kind alone (and the bare affinity call that starts the
 * loop), so that the daemon's system calls and CPU time can be counted per
 * request from outside (perf stat -p, /proc/PID/schedstat; bench/README.md).
 *
 * Needs root and a live rtplaced (not --topology):
 *   bench/move-latency [--socket PATH] [--moves N] [--kind affinity|rt|status]
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"
#include "rtplace.h"

enum bench_kind {
	BENCH_DAEMON_AFFINITY,
	BENCH_BARE_AFFINITY,
	BENCH_DAEMON_RT,
	BENCH_BARE_RT,
	BENCH_DAEMON_STATUS, /* the socket round trip alone: what a move adds to it */
	BENCH_KINDS,
};

static const char *const bench_names[BENCH_KINDS] = {
	[BENCH_DAEMON_AFFINITY] = "rtplace_move: affinity",
	[BENCH_BARE_AFFINITY] = "bare sched_setaffinity",
	[BENCH_DAEMON_RT] = "rtplace_move: affinity + FIFO 1",
	[BENCH_BARE_RT] = "bare setaffinity + setscheduler",
	[BENCH_DAEMON_STATUS] = "rtplace_status (no move)",
};

/* --kind's names for the daemon's kinds. */
static const char *const bench_kind_args[BENCH_KINDS] = {
	[BENCH_DAEMON_AFFINITY] = "affinity",
	[BENCH_DAEMON_RT] = "rt",
	[BENCH_DAEMON_STATUS] = "status",
};

static void *bench_sleeper(void *arg)
{
	int *tid = arg;

	__atomic_store_n(tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

/* One move of tid to cpu by kind; 0 once the affinity reads back as {cpu}. */
static int bench_move(struct rtplace *rp, enum bench_kind kind, pid_t tid, int cpu)
{
	struct sched_param sp = { .sched_priority = 1 };
	cpu_set_t set;
	int r = 0;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (kind == BENCH_DAEMON_AFFINITY || kind == BENCH_DAEMON_RT) {
		struct rtplace_move_request mv = { .tid = tid, .flags = RTPLACE_MOVE_F_SET_AFFINITY, .cpus = set };

		if (kind == BENCH_DAEMON_RT) {
			mv.flags |= RTPLACE_MOVE_F_SET_SCHED;
			mv.policy = SCHED_FIFO;
			mv.prio = 1;
		}
		r = rtplace_move(rp, &mv, NULL);
	} else if (sched_setaffinity(tid, sizeof(set), &set) < 0 ||
		   (kind == BENCH_BARE_RT && sched_setscheduler(tid, SCHED_FIFO, &sp) < 0)) {
		r = -errno;
	}
	if (r < 0)
		return r;
	if (sched_getaffinity(tid, sizeof(set), &set) < 0)
		return -errno;
	return CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set) ? 0 : -EAGAIN;
}

/* Back to SCHED_OTHER, so that the affinity-only kinds move a normal thread. */
static int bench_normal(pid_t tid)
{
	struct sched_param sp = { 0 };

	return sched_setscheduler(tid, SCHED_OTHER, &sp) < 0 ? -errno : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "moves", required_argument, NULL, 'n' },
		{ "kind", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *socket_path = NULL;
	uint64_t *lat[BENCH_KINDS] = { NULL };
	struct rtplace *rp = NULL;
	pthread_t th;
	long moves = 2000;
	int o, r, tid = 0, cpus[2], on = 0, ret = 1, only = -1;
	cpu_set_t mine;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			socket_path = optarg;
			break;
		case 'n':
			moves = strtol(optarg, NULL, 10);
			break;
		case 'k':
			for (int k = 0; k < BENCH_KINDS; k++)
				if (bench_kind_args[k] && strcmp(optarg, bench_kind_args[k]) == 0)
					only = k;
			if (only < 0) {
				fprintf(stderr, "move-latency: --kind: affinity, rt or status, not '%s'\n", optarg);
				return 64;
			}
			break;
		default:
			fprintf(stderr, "usage: move-latency [--socket PATH] [--moves N] [--kind affinity|rt|status]\n");
			return o == 'h' ? 0 : 64;
		}
	}
	if (moves < 10 || moves > 10000000) {
		fprintf(stderr, "move-latency: --moves: 10..10000000\n");
		return 64;
	}
	/* The first two CPUs this process may use. */
	if (sched_getaffinity(0, sizeof(mine), &mine) < 0 || CPU_COUNT(&mine) < 2) {
		fprintf(stderr, "move-latency: needs two CPUs\n");
		return 77;
	}
	for (int cpu = 0, k = 0; k < 2; cpu++)
		if (CPU_ISSET(cpu, &mine))
			cpus[k++] = cpu;
	r = rtplace_connect(socket_path, &rp);
	if (r < 0) {
		fprintf(stderr, "move-latency: cannot reach rtplaced: %s\n", strerror(-r));
		return 69;
	}
	if (pthread_create(&th, NULL, bench_sleeper, &tid) != 0) {
		fprintf(stderr, "move-latency: cannot start the target thread\n");
		goto out;
	}
	while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	for (int k = 0; k < BENCH_KINDS; k++) {
		lat[k] = calloc((size_t)moves, sizeof(uint64_t));
		if (!lat[k]) {
			fprintf(stderr, "move-latency: out of memory\n");
			goto out;
		}
	}
	r = bench_move(rp, BENCH_BARE_AFFINITY, tid, cpus[on]);
	for (long i = 0; r == 0 && i < moves; i++) {
		for (int k = 0; k < BENCH_KINDS; k++) {
			uint64_t t0;

			if (only >= 0 && k != only)
				continue;
			/* The affinity-only kinds move a normal thread. */
			if (k == BENCH_DAEMON_AFFINITY) {
				r = bench_normal(tid);
				if (r < 0)
					break;
			}
			if (k == BENCH_DAEMON_STATUS) {
				struct rtplace_status st;

				t0 = bench_now_ns();
				r = rtplace_status(rp, &st);
				lat[k][i] = bench_now_ns() - t0;
				if (r < 0)
					break;
				continue;
			}
			/* Every move goes to the other CPU: it always changes
			 * something (the daemon refuses a move that does not). */
			on = 1 - on;
			t0 = bench_now_ns();
			r = bench_move(rp, (enum bench_kind)k, tid, cpus[on]);
			lat[k][i] = bench_now_ns() - t0;
			if (r < 0)
				break;
		}
	}
	if (r < 0) {
		fprintf(stderr, "move-latency: a move failed: %s\n", strerror(-r));
		goto out;
	}
	printf("%ld moves of a sleeping thread between CPUs %d and %d, request to affinity read back (us)\n",
	       moves, cpus[0], cpus[1]);
	printf("%-34s %8s %8s %8s %8s\n", "", "p50", "p99", "mean", "max");
	for (int k = 0; k < BENCH_KINDS; k++) {
		uint64_t sum = 0;

		if (only >= 0 && k != only)
			continue;
		qsort(lat[k], (size_t)moves, sizeof(uint64_t), bench_cmp_u64);
		for (long i = 0; i < moves; i++)
			sum += lat[k][i];
		printf("%-34s %8.1f %8.1f %8.1f %8.1f\n", bench_names[k], bench_pct(lat[k], (size_t)moves, 50) / 1e3,
		       bench_pct(lat[k], (size_t)moves, 99) / 1e3, (double)sum / (double)moves / 1e3,
		       lat[k][moves - 1] / 1e3);
	}
	ret = 0;
out:
	for (int k = 0; k < BENCH_KINDS; k++)
		free(lat[k]);
	rtplace_close(rp);
	return ret;
}
