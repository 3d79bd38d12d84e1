/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Notification records and moves, measured side by side in one run:
 *
 *  1. records per second delivered through notify_publish() to 1 and 16
 *     subscribers (consumer threads that map the memfd and sleep on the
 *     eventfd, as clients do), flat out and in bursts; drops and doorbells
 *     per delivered record for each;
 *  2. move latency: thread_sched_apply() (read, set affinity, read back) against
 *     a bare sched_setaffinity() on the same sleeping thread, interleaved
 *     so that drift hits both alike; and with a policy change.
 *
 * Usage: bench/records [RECORDS]   (default 2000000 per run)
 * Timings are printed, never asserted.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"
#include "thread-sched.h"
#include "notify.h"
#include "ring.h"

#define BENCH_RING 1024 /* [notify] ring-records default */
#define BENCH_MAX_SUBS 16
#define BENCH_MOVES 20000

struct bench_consumer {
	pthread_t thread;
	struct notify_sub_info info;
	const bool *done;
	uint64_t received, lost, wakeups;
	int err;
};

static int bench_count_cb(const struct rtplace_record *rec, void *userdata)
{
	(*(uint64_t *)userdata)++;
	return 0;
}

static void *bench_consumer_main(void *arg)
{
	struct bench_consumer *c = arg;
	struct ring ring;
	void *mem;

	mem = mmap(NULL, c->info.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->info.memfd, 0);
	if (mem == MAP_FAILED || ring_attach(mem, c->info.ring_bytes, &ring) < 0) {
		c->err = -EPROTO;
		return NULL;
	}
	for (;;) {
		struct pollfd pfd = { .fd = c->info.doorbell, .events = POLLIN };
		bool done = __atomic_load_n(c->done, __ATOMIC_ACQUIRE);
		uint64_t v, lost;

		if (read(c->info.doorbell, &v, sizeof(v)) == sizeof(v))
			c->wakeups++;
		if (ring_drain(&ring, bench_count_cb, &c->received, &lost) < 0) {
			c->err = -EPROTO;
			break;
		}
		c->lost += lost;
		if (done)
			break;
		poll(&pfd, 1, 100);
	}
	munmap(mem, c->info.ring_bytes);
	return NULL;
}

/* Publishes `records` records to nsubs subscribers in bursts of `burst`
 * (0: flat out), sleeping pause_us between bursts; batched: queue the
 * burst and ring the doorbells once at its end (notify_queue/flush). */
static void bench_records(unsigned nsubs, uint64_t records, unsigned burst, unsigned pause_us, bool batched)
{
	struct bench_consumer cons[BENCH_MAX_SUBS] = { 0 };
	struct notify_sub *subs[BENCH_MAX_SUBS];
	struct rtplace_record rec = { .type = RTPLACE_RECORD_MOVED, .tid = 1, .to_cpu = 1, .policy = 1, .prio = 50 };
	uint64_t t0, t1, received = 0, lost = 0;
	struct notify_stats st;
	struct notify *n;
	bool done = false;

	struct quota_limits limits = { .size = nsubs, .users = nsubs, .per_user = nsubs };

	if (notify_new(BENCH_RING, &limits, &n) < 0)
		exit(1);
	for (unsigned i = 0; i < nsubs; i++) {
		if (notify_subscribe(n, 0, true, NULL, &subs[i]) < 0)
			exit(1);
		notify_sub_info(subs[i], &cons[i].info);
		cons[i].done = &done;
		pthread_create(&cons[i].thread, NULL, bench_consumer_main, &cons[i]);
	}
	usleep(10000);

	t0 = bench_now_ns();
	for (uint64_t i = 0; i < records; i++) {
		rec.time_ns = i;
		if (batched)
			notify_queue(n, &rec);
		else
			notify_publish(n, &rec);
		if (burst && (i + 1) % burst == 0) {
			struct timespec ts = { 0, (long)pause_us * 1000 };

			if (batched)
				notify_flush(n);
			nanosleep(&ts, NULL);
		}
	}
	__atomic_store_n(&done, true, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < nsubs; i++) {
		static const uint64_t one = 1;

		if (write(cons[i].info.doorbell, &one, sizeof(one)) < 0)
			exit(1);
	}
	for (unsigned i = 0; i < nsubs; i++) {
		pthread_join(cons[i].thread, NULL);
		if (cons[i].err)
			exit(1);
		received += cons[i].received;
		lost += cons[i].lost;
	}
	t1 = bench_now_ns();
	notify_get_stats(n, &st);

	printf("%4u  %7s  %5u  %9.0f  %12.0f  %7.3f%%  %9.4f  %8.4f\n", nsubs,
	       burst ? (batched ? "batched" : "burst") : "flat", burst,
	       (double)records * 1e9 / (double)(t1 - t0), (double)received * 1e9 / (double)(t1 - t0),
	       100.0 * (double)lost / (double)(received + lost), (double)st.doorbells / (double)received,
	       (double)st.doorbells / (double)(st.published * nsubs) * (burst ? burst : 1));
	if (received + lost != records * nsubs || lost != st.dropped)
		printf("      accounting mismatch: received %llu lost %llu published %llu\n",
		       (unsigned long long)received, (unsigned long long)lost, (unsigned long long)(records * nsubs));
	notify_free(n);
}

struct bench_sleeper {
	int pipe[2];
	pid_t tid;
	pthread_barrier_t started;
};

static void *bench_sleeper_main(void *arg)
{
	struct bench_sleeper *s = arg;
	char c;

	s->tid = gettid();
	pthread_barrier_wait(&s->started);
	while (read(s->pipe[0], &c, 1) > 0)
		;
	return NULL;
}

static void bench_print_lat(const char *name, uint64_t *ns, unsigned n)
{
	double sum = 0;

	for (unsigned i = 0; i < n; i++)
		sum += (double)ns[i];
	qsort(ns, n, sizeof(*ns), bench_cmp_u64);
	printf("%-34s  %8.2f  %8.2f  %8.2f\n", name, ns[n / 2] / 1e3, ns[n * 99 / 100] / 1e3, sum / n / 1e3);
}

static void bench_moves(void)
{
	static uint64_t bare[BENCH_MOVES], affinity_ns[BENCH_MOVES], with_policy_ns[BENCH_MOVES];
	struct bench_sleeper s;
	struct thread_sched_result res;
	struct rtplace_cpumask sets[2];
	cpu_set_t ksets[2];
	pthread_t th;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	bool can_sched;

	if (pipe(s.pipe) < 0 || pthread_barrier_init(&s.started, NULL, 2) != 0 ||
	    pthread_create(&th, NULL, bench_sleeper_main, &s) != 0)
		exit(1);
	pthread_barrier_wait(&s.started);

	for (int i = 0; i < 2; i++) {
		unsigned cpu = ncpu > 1 ? (unsigned)i : 0;

		cpuset_zero(&sets[i]);
		cpuset_set(&sets[i], cpu);
		CPU_ZERO(&ksets[i]);
		CPU_SET(cpu, &ksets[i]);
	}
	can_sched = thread_sched_apply(s.tid, NULL, SCHED_FIFO, 1, &res) == 0;

	for (unsigned i = 0; i < BENCH_MOVES; i++) {
		uint64_t t0, t1, t2, t3;

		/* Interleaved, each from the other CPU set, so every call
		 * really migrates the (sleeping) thread's affinity. */
		t0 = bench_now_ns();
		if (sched_setaffinity(s.tid, sizeof(cpu_set_t), &ksets[0]) < 0)
			exit(1);
		t1 = bench_now_ns();
		if (thread_sched_apply(s.tid, &sets[1], THREAD_SCHED_KEEP_POLICY, 0, &res) < 0)
			exit(1);
		t2 = bench_now_ns();
		bare[i] = t1 - t0;
		affinity_ns[i] = t2 - t1;
		if (can_sched) {
			t2 = bench_now_ns();
			if (thread_sched_apply(s.tid, &sets[0], SCHED_FIFO, 1 + i % 2, &res) < 0)
				exit(1);
			t3 = bench_now_ns();
			with_policy_ns[i] = t3 - t2;
		}
	}

	printf("\nmove latency, %u calls each, sleeping target thread, %ld CPUs online\n", BENCH_MOVES, ncpu);
	printf("%-34s  %8s  %8s  %8s\n", "call", "p50 us", "p99 us", "mean us");
	bench_print_lat("sched_setaffinity (bare)", bare, BENCH_MOVES);
	bench_print_lat("thread_sched_apply affinity", affinity_ns, BENCH_MOVES);
	if (can_sched)
		bench_print_lat("thread_sched_apply affinity + SCHED_FIFO", with_policy_ns, BENCH_MOVES);
	else
		printf("thread_sched_apply affinity + SCHED_FIFO: skipped (needs CAP_SYS_NICE or RLIMIT_RTPRIO)\n");

	close(s.pipe[1]);
	pthread_join(th, NULL);
	close(s.pipe[0]);
}

int main(int argc, char **argv)
{
	uint64_t records = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;

	printf("records: ring %u records of %zu bytes, %llu records per run, %ld CPUs online\n", BENCH_RING,
	       sizeof(struct rtplace_record), (unsigned long long)records, sysconf(_SC_NPROCESSORS_ONLN));
	printf("bell/rec: doorbells per delivered record; bell/bst: doorbells per burst per subscriber\n");
	printf("%4s  %7s  %5s  %9s  %12s  %8s  %9s  %8s\n", "subs", "load", "burst", "pub/s", "delivered/s",
	       "lost", "bell/rec", "bell/bst");
	bench_records(1, records, 0, 0, false);
	bench_records(16, records / 4, 0, 0, false);
	bench_records(1, records / 10, 64, 200, false);
	bench_records(1, records / 10, 64, 200, true);
	bench_records(16, records / 40, 64, 200, false);
	bench_records(16, records / 40, 64, 200, true);
	bench_records(1, records / 100, 1, 200, false);
	bench_records(16, records / 400, 1, 200, false);
	bench_moves();
	return 0;
}
