/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "irqnoise.h"

/* kthreadd, whose children are the kernel threads. */
#define IRQNOISE_KTHREADD 2

/* An interrupt thread, and its CPU time when last read. */
struct irqnoise_thread {
	pid_t pid;
	uint64_t start_time;
	uint64_t ticks;
};

struct irqnoise {
	uint32_t ncpus;
	uint64_t ns_per_tick;
	const char *proc;
	uint64_t last_ns;            /* time of the last update, 0: none yet */
	struct procfs_cpu_irq *last; /* [ncpus] the counters then, thread ticks added */
	struct procfs_cpu_irq *raw;  /* [ncpus] /proc/stat's counters then */
	struct procfs_cpu_irq *cur;  /* [ncpus] a read's scratch */
	struct irqnoise_cpu *cpus;   /* [ncpus] */
	uint64_t *thread_ticks;      /* [ncpus] interrupt threads' ticks seen on each */
	struct irqnoise_thread *threads;
	size_t nthreads, threads_cap;
	uint32_t samples;            /* taken: threads are looked for every IRQNOISE_RESCAN */
	char *buf;                   /* the stat file, kept between reads */
	size_t cap;
	char *kbuf;                  /* kthreadd's children, kept between reads */
	size_t kcap;
};

int irqnoise_new(uint32_t ncpus, uint64_t ns_per_tick, const char *proc, struct irqnoise **ret)
{
	struct irqnoise *n = calloc(1, sizeof(*n));
	int r = -ENOMEM;

	if (!n)
		goto out;
	n->ncpus = ncpus;
	n->ns_per_tick = ns_per_tick;
	n->proc = proc;
	n->last = calloc(ncpus ? ncpus : 1, sizeof(*n->last));
	n->raw = calloc(ncpus ? ncpus : 1, sizeof(*n->raw));
	n->cur = calloc(ncpus ? ncpus : 1, sizeof(*n->cur));
	n->cpus = calloc(ncpus ? ncpus : 1, sizeof(*n->cpus));
	n->thread_ticks = calloc(ncpus ? ncpus : 1, sizeof(*n->thread_ticks));
	if (!n->last || !n->raw || !n->cur || !n->cpus || !n->thread_ticks)
		goto out;
	*ret = n;
	n = NULL;
	r = 0;
out:
	irqnoise_free(n);
	return r;
}

void irqnoise_free(struct irqnoise *n)
{
	if (!n)
		return;
	free(n->last);
	free(n->raw);
	free(n->cur);
	free(n->cpus);
	free(n->thread_ticks);
	free(n->threads);
	free(n->buf);
	free(n->kbuf);
	free(n);
}

static uint32_t irqnoise_share(uint64_t was, uint64_t now, uint64_t ns_per_tick, uint64_t window_ns)
{
	uint64_t ns = now > was ? (now - was) * ns_per_tick : 0;

	/* Tick sampling can count a tick more than the window holds. */
	return ns >= window_ns ? IRQNOISE_PPM : (uint32_t)(ns * 1000 / (window_ns / 1000 ? window_ns / 1000 : 1));
}

void irqnoise_update(struct irqnoise *n, const struct procfs_cpu_irq *cur, uint64_t now_ns)
{
	uint64_t window = n->last_ns && now_ns > n->last_ns ? now_ns - n->last_ns : 0;

	for (uint32_t c = 0; c < n->ncpus; c++) {
		struct irqnoise_cpu *x = &n->cpus[c];
		struct procfs_cpu_irq v = { .irq = cur[c].irq + n->thread_ticks[c], .softirq = cur[c].softirq };

		x->irq_ns = cur[c].irq * n->ns_per_tick;
		x->softirq_ns = cur[c].softirq * n->ns_per_tick;
		if (window) {
			x->irq_ppm = irqnoise_share(n->last[c].irq, v.irq, n->ns_per_tick, window);
			x->softirq_ppm = irqnoise_share(n->last[c].softirq, v.softirq, n->ns_per_tick, window);
		}
		n->last[c] = v;
		n->raw[c] = cur[c];
	}
	n->last_ns = now_ns;
}

/* A thread not known yet, with its base. 0 or -ENOMEM. */
static int irqnoise_thread_add(struct irqnoise *n, pid_t pid, uint64_t start_time, uint64_t ticks)
{
	if (n->nthreads == n->threads_cap) {
		size_t cap = n->threads_cap ? n->threads_cap * 2 : 16;
		struct irqnoise_thread *grown = realloc(n->threads, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		n->threads = grown;
		n->threads_cap = cap;
	}
	n->threads[n->nthreads++] = (struct irqnoise_thread){ .pid = pid, .start_time = start_time, .ticks = ticks };
	return 0;
}

/* Thread t now at ticks on cpu: its growth is cpu's interrupt time. */
static void irqnoise_thread_ran(struct irqnoise *n, struct irqnoise_thread *t, uint32_t cpu, uint64_t ticks)
{
	if (ticks > t->ticks && cpu < n->ncpus)
		n->thread_ticks[cpu] += ticks - t->ticks;
	t->ticks = ticks;
}

int irqnoise_thread_seen(struct irqnoise *n, pid_t pid, uint64_t start_time, uint32_t cpu, uint64_t ticks)
{
	for (size_t i = 0; i < n->nthreads; i++) {
		struct irqnoise_thread *t = &n->threads[i];

		if (t->pid != pid)
			continue;
		if (t->start_time == start_time) {
			irqnoise_thread_ran(n, t, cpu, ticks);
		} else {
			t->start_time = start_time;
			t->ticks = ticks;
		}
		return 0;
	}
	return irqnoise_thread_add(n, pid, start_time, ticks);
}

/* Forgets thread i (gone, or unreadable). */
static void irqnoise_thread_drop(struct irqnoise *n, size_t i)
{
	n->threads[i] = n->threads[--n->nthreads];
}

/* Whether pid's comm names an interrupt thread ("irq/N-NAME"). */
static bool irqnoise_is_irq_thread(const char *proc, pid_t pid)
{
	char comm[32];

	return procfs_read(proc, pid, "comm", comm, sizeof(comm)) > 0 && strncmp(comm, "irq/", 4) == 0;
}

static int irqnoise_cmp_pid(const void *a, const void *b)
{
	const struct irqnoise_thread *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Adds the interrupt threads among kthreadd's children that are not known
 * yet. Without the file (no CONFIG_PROC_CHILDREN, a proc tree that is not
 * a kernel's) there are none to add. */
static void irqnoise_find_threads(struct irqnoise *n)
{
	size_t known = n->nthreads;
	ssize_t len;

	for (;;) {
		if (!n->kbuf) {
			n->kcap = n->kcap ? n->kcap : 4096;
			n->kbuf = malloc(n->kcap);
			if (!n->kbuf)
				return;
		}
		len = procfs_read(n->proc, IRQNOISE_KTHREADD, "task/2/children", n->kbuf, n->kcap);
		if (len != -EFBIG)
			break;
		free(n->kbuf);
		n->kbuf = NULL;
		n->kcap *= 2;
	}
	/* Those known, sorted, so that each child is looked up in log time
	 * (each child is listed once: those added below need no look-up). */
	if (known)
		qsort(n->threads, known, sizeof(*n->threads), irqnoise_cmp_pid);
	for (char *p = n->kbuf, *end; len > 0 && *p; p = end) {
		long pid = strtol(p, &end, 10);
		const struct irqnoise_thread key = { .pid = (pid_t)pid };
		struct procfs_stat st;

		if (end == p)
			break;
		if (pid <= 0 || pid > INT32_MAX || (known && bsearch(&key, n->threads, known, sizeof(key), irqnoise_cmp_pid)))
			continue;
		if (!irqnoise_is_irq_thread(n->proc, key.pid) || procfs_read_stat(n->proc, key.pid, 0, &st) < 0)
			continue;
		if (irqnoise_thread_add(n, key.pid, st.start_time, st.utime + st.stime) < 0)
			return;
	}
}

/* Reads each known interrupt thread's CPU time into thread_ticks. */
static void irqnoise_read_threads(struct irqnoise *n)
{
	for (size_t i = 0; i < n->nthreads;) {
		struct irqnoise_thread *t = &n->threads[i];
		struct procfs_stat st;

		if (procfs_read_stat(n->proc, t->pid, 0, &st) < 0 || st.start_time != t->start_time) {
			irqnoise_thread_drop(n, i);
			continue;
		}
		irqnoise_thread_ran(n, t, st.cpu, st.utime + st.stime);
		i++;
	}
}

int irqnoise_sample(struct irqnoise *n, uint64_t now_ns)
{
	int r;

	/* A CPU without a line (offline) reads as its last counters. */
	for (uint32_t c = 0; c < n->ncpus; c++)
		n->cur[c] = n->raw[c];
	r = procfs_read_cpu_irq(n->proc, &n->buf, &n->cap, n->ncpus, n->cur);
	if (r < 0)
		return r;
	irqnoise_read_threads(n);
	if (n->samples++ % IRQNOISE_RESCAN == 0)
		irqnoise_find_threads(n);
	irqnoise_update(n, n->cur, now_ns);
	return 0;
}

const struct irqnoise_cpu *irqnoise_cpus(const struct irqnoise *n)
{
	return n->cpus;
}

void irqnoise_noisy(const struct irqnoise *n, const struct rtplace_cpumask *among, struct rtplace_cpumask *ret)
{
	uint32_t quiet = UINT32_MAX;

	cpuset_zero(ret);
	for (int c = cpuset_next(among, 0); c >= 0 && (uint32_t)c < n->ncpus; c = cpuset_next(among, (unsigned)c + 1)) {
		uint32_t s = n->cpus[c].irq_ppm + n->cpus[c].softirq_ppm;

		quiet = s < quiet ? s : quiet;
	}
	for (int c = cpuset_next(among, 0); c >= 0 && (uint32_t)c < n->ncpus; c = cpuset_next(among, (unsigned)c + 1))
		if (n->cpus[c].irq_ppm + n->cpus[c].softirq_ppm > quiet + IRQNOISE_NOISY_PPM)
			cpuset_set(ret, (unsigned)c);
}
