/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What per-CPU kernel threads at RT priority do to the map and to RT
 * answers (DESIGN §17): on PREEMPT_RT, timers (ktimers/N), RCU callbacks
 * (rcuc/N) and threaded interrupts (irq/N-NAME) run as SCHED_FIFO kernel
 * threads. For --seconds it samples, every --interval-ms, each CPU's level
 * and thread (rtplace_cpus()) and asks for every online CPU at rt40
 * (rtplace_query(), a local read where the daemon offers one): a CPU
 * missing from that answer is one an RT thread at rt40 would wait behind.
 * It also asks the daemon (over the socket, where answers rotate among
 * equals) for one CPU at rt40: where a one-CPU answer goes. It prints,
 * per CPU, the share of samples at an RT level by the kind of thread the
 * map showed, the longest run of such samples, the RT share of the CPU's
 * time (the tracker's class times), the interrupt noise the daemon gave
 * it, the share of one-CPU answers it got, and then the RT kernel threads'
 * run time from /proc/PID/schedstat (share of the machine, runs per
 * second, mean run): how long a burst lasts, which sampling cannot see.
 *
 * --load timers adds, on every online CPU, a normal-priority process that
 * sleeps 100 us at a time (on PREEMPT_RT its timers expire in ktimers/N);
 * interrupt load comes from outside (bench/rt-kthreads.sh reads files).
 *
 * Needs root and a live rtplaced (not --topology):
 *   bench/rt-kthreads [--socket PATH] [--seconds N] [--interval-ms N] [--load none|timers]
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"
#include "rtplace.h"

#define KT_MAX_CPUS 256
#define KT_PF_KTHREAD 0x00200000u
#define KT_PRIO 40

/* The kinds of thread an RT level comes from. */
enum kt_kind {
	KT_KTIMERS,
	KT_RCUC,
	KT_IRQ,
	KT_OTHER, /* any other thread: a user's, or another kernel thread */
	KT_KINDS,
};

static enum kt_kind kt_kind_of(const char *comm)
{
	if (strncmp(comm, "ktimers/", 8) == 0)
		return KT_KTIMERS;
	if (strncmp(comm, "rcuc/", 5) == 0)
		return KT_RCUC;
	if (strncmp(comm, "irq/", 4) == 0)
		return KT_IRQ;
	return KT_OTHER;
}

struct kt_cpu {
	int node;
	uint64_t samples, rt[KT_KINDS];
	uint64_t run, longest; /* consecutive samples at an RT level */
	uint64_t missing[KT_KINDS + 1]; /* left out of an rt40 answer, by what held it; [KT_KINDS]: nothing seen */
	uint64_t rt_ns0, all_ns0, rt_ns, all_ns;
	uint64_t irq_share; /* sum over samples of hardirq + softirq, RTPLACE_SHARE_ONE each */
	uint64_t first;     /* the answer to one CPU at rt40 */
};

#define KT_OTHERS 8
#define KT_NAME_LEN 16

/* The threads behind "other" RT samples, by name up to the '/'. */
struct kt_others {
	unsigned n;
	struct {
		char name[KT_NAME_LEN];
		uint64_t samples;
	} seen[KT_OTHERS];
};

/*
 * Which of the n names (stride bytes apart from names) is comm's stem, its
 * name up to the '/' cut to fit a name; n when none. *ret_len: the stem's
 * length.
 */
static unsigned kt_name_find(const char *names, size_t stride, unsigned n, const char *comm, size_t *ret_len)
{
	size_t len = strcspn(comm, "/");
	unsigned i;

	if (len >= KT_NAME_LEN)
		len = KT_NAME_LEN - 1;
	for (i = 0; i < n; i++) {
		const char *name = names + i * stride;

		if (strlen(name) == len && strncmp(name, comm, len) == 0)
			break;
	}
	*ret_len = len;
	return i;
}

static void kt_others_add(struct kt_others *o, const char *comm)
{
	size_t len;
	unsigned i = kt_name_find(o->seen[0].name, sizeof(o->seen[0]), o->n, comm, &len);

	if (i == o->n) {
		if (o->n == KT_OTHERS)
			i = KT_OTHERS - 1; /* the last one takes the rest */
		else
			o->n++;
		memcpy(o->seen[i].name, comm, len);
		o->seen[i].name[len] = '\0';
	}
	o->seen[i].samples++;
}

#define KT_STEMS 32

/* Run time and runs of the RT kernel threads by the stem of their name
 * (up to the '/': "ktimers", "irq", "migration"), from schedstat. */
struct kt_sched {
	unsigned nstems;
	struct {
		char name[KT_NAME_LEN];
		unsigned threads, rtprio;
		uint64_t run_ns, runs;
	} stem[KT_STEMS];
};

static unsigned kt_stem(struct kt_sched *s, const char *comm)
{
	size_t len;
	unsigned i = kt_name_find(s->stem[0].name, sizeof(s->stem[0]), s->nstems, comm, &len);

	if (i < s->nstems)
		return i;
	if (i == KT_STEMS)
		return KT_STEMS - 1; /* the last one takes the rest */
	memcpy(s->stem[i].name, comm, len);
	s->stem[i].name[len] = '\0';
	s->nstems++;
	return i;
}

/* Adds the RT kernel threads' schedstat to s, each with sign (+1 at the
 * end, -1 at the start: a thread seen once counts its whole life then,
 * which cannot happen for the per-CPU ones that live from boot). */
static void kt_sched_read(struct kt_sched *s, int sign)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[300], buf[1024], comm[64];
		unsigned long long run, wait, runs;
		unsigned flags, rtprio;
		const char *p, *q;
		FILE *f;
		size_t n;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		p = strchr(buf, '(');
		q = strrchr(buf, ')');
		if (!p || !q || (size_t)(q - p - 1) >= sizeof(comm))
			continue;
		memcpy(comm, p + 1, (size_t)(q - p - 1));
		comm[q - p - 1] = '\0';
		/* After the comm: state is field 3, flags 9, rt_priority 40. */
		p = q + 2;
		for (int field = 3; field < 9 && p; field++)
			p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
		if (!p || sscanf(p, "%u", &flags) != 1 || !(flags & KT_PF_KTHREAD))
			continue;
		for (int field = 9; field < 40 && p; field++)
			p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
		if (!p || sscanf(p, "%u", &rtprio) != 1 || rtprio == 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/schedstat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu %llu %llu", &run, &wait, &runs) == 3) {
			unsigned k = kt_stem(s, comm);

			if (sign > 0)
				s->stem[k].threads++;
			s->stem[k].rtprio = rtprio;
			s->stem[k].run_ns += (uint64_t)sign * run;
			s->stem[k].runs += (uint64_t)sign * runs;
		}
		fclose(f);
	}
	closedir(d);
}

/* Class times into each CPU's rt_ns / all_ns (or the start's). */
static int kt_class_times(struct rtplace *rp, struct kt_cpu *cpus, size_t ncpus, bool start)
{
	struct rtplace_cpu_time *t;
	size_t n;
	int r = rtplace_cpu_times(rp, &t, &n);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n && i < ncpus; i++) {
		uint64_t all = 0;

		for (unsigned c = 0; c < RTPLACE_CLASS_COUNT; c++)
			all += t[i].ns[c];
		if (start) {
			cpus[i].rt_ns0 = t[i].ns[RTPLACE_CLASS_RT];
			cpus[i].all_ns0 = all;
		} else {
			cpus[i].rt_ns = t[i].ns[RTPLACE_CLASS_RT] - cpus[i].rt_ns0;
			cpus[i].all_ns = all - cpus[i].all_ns0;
		}
	}
	rtplace_cpu_times_free(t);
	return 0;
}

/* One sleeper of --load timers on cpu, for seconds. */
static pid_t kt_spawn_sleeper(int cpu, unsigned seconds)
{
	pid_t pid = fork();

	if (pid == 0) {
		const struct timespec ts = { .tv_nsec = 100000 };
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		alarm(seconds + 5);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			_exit(1);
		for (;;)
			nanosleep(&ts, NULL);
	}
	return pid;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "load", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct kt_cpu cpus[KT_MAX_CPUS];
	struct kt_others others = { 0 };
	const char *socket_path = NULL;
	struct rtplace_request req = RTPLACE_REQUEST_INIT, one = RTPLACE_REQUEST_INIT;
	struct rtplace_answer ans, ans_one;
	struct kt_sched sched = { 0 };
	struct rtplace *rp = NULL, *rp_sock = NULL;
	struct rtplace_cpu *snap = NULL;
	pid_t sleepers[KT_MAX_CPUS];
	long seconds = 60, interval_ms = 10;
	uint64_t queries = 0, shorts = 0, t0, t_end, elapsed_ns;
	size_t ncpus = 0;
	unsigned nonline = 0, nsleepers = 0;
	bool timers = false, local;
	int o, r, ret = 1;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			socket_path = optarg;
			break;
		case 't':
			seconds = strtol(optarg, NULL, 10);
			break;
		case 'i':
			interval_ms = strtol(optarg, NULL, 10);
			break;
		case 'l':
			if (strcmp(optarg, "timers") == 0)
				timers = true;
			else if (strcmp(optarg, "none") != 0) {
				fprintf(stderr, "rt-kthreads: --load: none or timers, not '%s'\n", optarg);
				return 64;
			}
			break;
		default:
			fprintf(stderr, "usage: rt-kthreads [--socket PATH] [--seconds N] [--interval-ms N] "
					"[--load none|timers]\n");
			return o == 'h' ? 0 : 64;
		}
	}
	if (seconds < 1 || seconds > 3600 || interval_ms < 1 || interval_ms > 10000) {
		fprintf(stderr, "rt-kthreads: --seconds: 1..3600, --interval-ms: 1..10000\n");
		return 64;
	}
	r = rtplace_connect(socket_path, &rp);
	if (r == 0)
		r = rtplace_connect(socket_path, &rp_sock);
	if (r == 0)
		r = rtplace_cpus(rp, &snap, &ncpus);
	if (r < 0) {
		fprintf(stderr, "rt-kthreads: cannot read the daemon's CPUs: %s\n", strerror(-r));
		goto out;
	}
	if (ncpus > KT_MAX_CPUS)
		ncpus = KT_MAX_CPUS;
	for (size_t c = 0; c < ncpus; c++) {
		cpus[c].node = snap[c].node;
		if (snap[c].flags & RTPLACE_CPU_F_ONLINE)
			nonline++;
	}
	rtplace_cpus_free(snap);
	snap = NULL;
	local = rtplace_local_open(rp) == 0;
	r = kt_class_times(rp, cpus, ncpus, true);
	if (r < 0) {
		fprintf(stderr, "rt-kthreads: no class times (a live daemon, not --topology): %s\n", strerror(-r));
		goto out;
	}
	for (size_t c = 0; timers && c < ncpus; c++) {
		pid_t pid = kt_spawn_sleeper((int)c, (unsigned)seconds);

		if (pid > 0)
			sleepers[nsleepers++] = pid;
	}
	kt_sched_read(&sched, -1);
	req.prio = KT_PRIO;
	req.count = nonline;
	one.prio = KT_PRIO;

	t0 = bench_now_ns();
	t_end = t0 + (uint64_t)seconds * 1000000000u;
	while (bench_now_ns() < t_end) {
		const struct timespec ts = { .tv_sec = interval_ms / 1000, .tv_nsec = interval_ms % 1000 * 1000000 };
		bool in_answer[KT_MAX_CPUS] = { false };
		size_t n;

		if (rtplace_cpus(rp, &snap, &n) < 0 || rtplace_query(rp, &req, &ans) < 0 ||
		    rtplace_query(rp_sock, &one, &ans_one) < 0) {
			fprintf(stderr, "rt-kthreads: the daemon stopped answering\n");
			goto out;
		}
		queries++;
		for (unsigned i = 0; i < ans.count; i++)
			if (ans.cpus[i] >= 0 && (size_t)ans.cpus[i] < ncpus)
				in_answer[ans.cpus[i]] = true;
		if (ans.count < nonline)
			shorts++;
		if (ans_one.count == 1 && ans_one.cpus[0] >= 0 && (size_t)ans_one.cpus[0] < ncpus)
			cpus[ans_one.cpus[0]].first++;
		for (size_t c = 0; c < n && c < ncpus; c++) {
			struct kt_cpu *k = &cpus[c];
			bool rt = snap[c].level >= RTPLACE_LEVEL_RT1 && snap[c].level <= RTPLACE_LEVEL_RT99;

			if (!(snap[c].flags & RTPLACE_CPU_F_ONLINE))
				continue;
			k->samples++;
			k->irq_share += snap[c].irq_share + snap[c].softirq_share;
			if (rt) {
				enum kt_kind kind = kt_kind_of(snap[c].comm);

				k->rt[kind]++;
				if (kind == KT_OTHER)
					kt_others_add(&others, snap[c].comm[0] ? snap[c].comm : "?");
				if (++k->run > k->longest)
					k->longest = k->run;
			} else {
				k->run = 0;
			}
			/* Held by what the map showed just before the answer, or
			 * by nothing seen there (a burst between the two reads). */
			if (!in_answer[c])
				k->missing[snap[c].level >= RTPLACE_LEVEL_RT1 + KT_PRIO - 1 ? kt_kind_of(snap[c].comm)
											 : KT_KINDS]++;
		}
		rtplace_cpus_free(snap);
		snap = NULL;
		nanosleep(&ts, NULL);
	}
	elapsed_ns = bench_now_ns() - t0;
	kt_sched_read(&sched, +1);
	r = kt_class_times(rp, cpus, ncpus, false);
	if (r < 0) {
		fprintf(stderr, "rt-kthreads: no class times at the end: %s\n", strerror(-r));
		goto out;
	}

	printf("%.1f s, a sample every %ld ms, load %s, rt%d answers for all CPUs %s, for one from the socket\n",
	       (double)elapsed_ns / 1e9, interval_ms, timers ? "timers" : "none", KT_PRIO,
	       local ? "read locally" : "from the socket");
	printf("cpu node samples   rt%%  ktimers%%   rcuc%%    irq%%  other%%  longest  rt-time%%  irq-noise%%"
	       "  first%%  left-out(irq/other/unseen)\n");
	for (size_t c = 0; c < ncpus; c++) {
		const struct kt_cpu *k = &cpus[c];
		uint64_t rt = 0;

		if (!k->samples)
			continue;
		for (int i = 0; i < KT_KINDS; i++)
			rt += k->rt[i];
		printf("%3zu %4d %7" PRIu64 " %5.2f %8.2f %7.2f %7.2f %7.2f %8" PRIu64 " %9.3f %11.3f %7.2f  %" PRIu64
		       "/%" PRIu64 "/%" PRIu64 "\n",
		       c, k->node, k->samples, pct(rt, k->samples), pct(k->rt[KT_KTIMERS], k->samples),
		       pct(k->rt[KT_RCUC], k->samples), pct(k->rt[KT_IRQ], k->samples), pct(k->rt[KT_OTHER], k->samples),
		       k->longest, pct(k->rt_ns, k->all_ns), pct(k->irq_share, k->samples * RTPLACE_SHARE_ONE),
		       pct(k->first, k->samples), k->missing[KT_IRQ],
		       k->missing[KT_OTHER] + k->missing[KT_KTIMERS] + k->missing[KT_RCUC], k->missing[KT_KINDS]);
	}
	printf("rt%d queries for all %u online CPUs: %" PRIu64 ", one or more CPUs short: %" PRIu64 " (%.2f%%)\n", KT_PRIO,
	       nonline, queries, shorts, pct(shorts, queries));
	printf("other RT samples by thread:");
	for (unsigned i = 0; i < others.n; i++)
		printf(" %s %" PRIu64, others.seen[i].name, others.seen[i].samples);
	printf("%s\n", others.n ? "" : " none");
	printf("RT kernel threads (schedstat): name threads prio machine%% runs/s mean-run-us\n");
	for (unsigned i = 0; i < sched.nstems; i++) {
		double secs = (double)elapsed_ns / 1e9;

		if (!sched.stem[i].threads)
			continue;
		printf("  %-12s %7u %4u %8.3f %7.0f %11.1f\n", sched.stem[i].name, sched.stem[i].threads,
		       sched.stem[i].rtprio, 100.0 * (double)sched.stem[i].run_ns / ((double)elapsed_ns * nonline),
		       (double)sched.stem[i].runs / secs,
		       sched.stem[i].runs ? (double)sched.stem[i].run_ns / (double)sched.stem[i].runs / 1e3 : 0.0);
	}
	ret = 0;
out:
	for (unsigned i = 0; i < nsleepers; i++) {
		kill(sleepers[i], SIGKILL);
		waitpid(sleepers[i], NULL, 0);
	}
	rtplace_cpus_free(snap);
	rtplace_close(rp_sock);
	rtplace_close(rp);
	return ret;
}
