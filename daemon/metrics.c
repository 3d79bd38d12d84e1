/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "clocks.h"
#include "cpupri.h"
#include "irqnoise.h"
#include "levels.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "procfs.h"
#include "quota.h"
#include "server.h"

/* Every program of bpf/tracker.bpf.c fits, with room for more. */
#define METRICS_MAX_PROGS 32

struct metrics {
	struct metrics_opts o;
	struct cpupri_view view;
	struct evhttp *http;
	struct evconnlistener *listener; /* evhttp's, paused when descriptors run short */
	struct event *ev_resume;
	struct evbuffer *page; /* the last page built, empty before the first */
	uint64_t page_ns;      /* when it was built (loop_now_ns()) */
	bool bpf_stats;        /* the tracker's statistics are on */
	uint64_t boot_ns;      /* when the machine booted: process_start_time_seconds counts from it */
};

/*
 * Scrapers must not take the descriptors socket clients need: evhttp in
 * libevent 2.1 has no cap on connections, so accepting pauses while the
 * lowest free descriptor lies in the top 2 * quota_fd_reserve() of
 * RLIMIT_NOFILE (the top quota_fd_reserve() stay for root, the next as many
 * for unprivileged socket clients). accept() hands out the lowest free
 * descriptor, so a duplicate of the listener shows where the next one lands.
 */
static bool metrics_fds_scarce(const struct metrics *m)
{
	struct rlimit rl;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return false;
	fd = fcntl(evconnlistener_get_fd(m->listener), F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return true;
	close(fd);
	return (rlim_t)fd >= rl.rlim_cur - 2 * (rlim_t)quota_fd_reserve((uint64_t)rl.rlim_cur);
}

static void metrics_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct metrics *m = arg;
	struct timeval pause = { .tv_usec = SERVER_ACCEPT_PAUSE_MS * 1000 };

	if (metrics_fds_scarce(m)) {
		evtimer_add(m->ev_resume, &pause);
		return;
	}
	evconnlistener_enable(m->listener);
	log_ratelimited(LOG_NOTICE, "Accepting metrics scrapers again");
}

/* evhttp calls this for every connection it accepts (the connection has
 * its descriptor already); NULL lets evhttp make its usual bufferevent. */
static struct bufferevent *metrics_accepted_cb(struct event_base *base, void *arg)
{
	struct metrics *m = arg;
	struct timeval pause = { .tv_usec = SERVER_ACCEPT_PAUSE_MS * 1000 };

	if (!evtimer_pending(m->ev_resume, NULL) && metrics_fds_scarce(m)) {
		evconnlistener_disable(m->listener);
		evtimer_add(m->ev_resume, &pause);
		log_ratelimited(LOG_WARNING,
				"Too many metrics scrapers for the descriptor limit; not accepting more for now");
	}
	return NULL;
}

/* The Prometheus value of a CPU's level: its highest queued RT priority,
 * 0 without one, 100 under a deadline task (above every RT priority). */
static unsigned metrics_rt_priority(uint32_t level)
{
	if (level == LEVEL_DL)
		return 100;
	return (unsigned)level_rt_priority(level);
}

static void metrics_family(struct evbuffer *b, const char *name, const char *type, const char *help)
{
	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Where each CPU sits, so that any per-CPU series can be summed by node,
 * LLC or package with a join on this one. */
static void metrics_cpu_places(struct metrics *m, struct evbuffer *b)
{
	const struct topo *t = engine_topo(m->o.engine);

	metrics_family(b, "rtplace_cpu_info", "gauge",
		       "Where the CPU sits: its NUMA node, package, LLC and core (-1: unknown); always 1.");
	for (uint32_t cpu = 0; cpu < t->ncpus; cpu++)
		evbuffer_add_printf(b,
				    "rtplace_cpu_info{cpu=\"%u\",node=\"%d\",package=\"%d\",llc=\"%d\",core=\"%d\"} 1\n",
				    cpu, t->cpus[cpu].node, t->cpus[cpu].package, t->cpus[cpu].llc, t->cpus[cpu].core);
}

static void metrics_cpu_claims(struct metrics *m, struct evbuffer *b)
{
	const uint8_t *claimed = claims_levels(engine_claims_view(m->o.engine));
	uint32_t ncpus = engine_topo(m->o.engine)->ncpus;

	metrics_family(b, "rtplace_cpu_claimed", "gauge", "1 when a claim holds the CPU, else 0.");
	for (uint32_t cpu = 0; cpu < ncpus; cpu++)
		evbuffer_add_printf(b, "rtplace_cpu_claimed{cpu=\"%u\"} %d\n", cpu, claimed[cpu] != 0);
	metrics_family(b, "rtplace_cpu_claim_rt_priority", "gauge",
		       "RT priority the CPU's highest claim holds it at (0: a normal-level claim, or none; 100: deadline).");
	for (uint32_t cpu = 0; cpu < ncpus; cpu++)
		evbuffer_add_printf(b, "rtplace_cpu_claim_rt_priority{cpu=\"%u\"} %u\n", cpu,
				    claimed[cpu] ? metrics_rt_priority(claimed[cpu]) : 0);
}

/* RT contention anywhere, not only on managed threads: more than one RT
 * task queued on a CPU means all but one wait. */
static void metrics_cpu_rt_queued(struct metrics *m, struct evbuffer *b)
{
	metrics_family(b, "rtplace_cpu_rt_queued", "gauge",
		       "RT tasks queued on the CPU at its last scheduler event (above 1: RT tasks wait there).");
	for (uint32_t cpu = 0; cpu < engine_topo(m->o.engine)->ncpus && cpu < m->view.geom.ncpus; cpu++) {
		const struct cpupri_slot *slot = cpupri_slot_ptr((void *)m->view.map, &m->view.geom, cpu);

		/* Relaxed: a gauge read once, from the CPU's own writer. */
		evbuffer_add_printf(b, "rtplace_cpu_rt_queued{cpu=\"%u\"} %u\n", cpu,
				    __atomic_load_n(&slot->rt_queued, __ATOMIC_RELAXED));
	}
}

/* Interrupt time since boot as /proc/stat counts it (ticks on kernels
 * without CONFIG_IRQ_TIME_ACCOUNTING): counters, so any window's share is
 * a rate() away. */
static void metrics_irq(struct metrics *m, struct evbuffer *b)
{
	const struct irqnoise_cpu *n = irqnoise_cpus(engine_irqnoise(m->o.engine));
	uint32_t ncpus = engine_topo(m->o.engine)->ncpus;

	metrics_family(b, "rtplace_cpu_irq_seconds_total", "counter",
		       "Time the CPU spent in hardware interrupts since boot (/proc/stat irq).");
	for (uint32_t cpu = 0; cpu < ncpus; cpu++)
		evbuffer_add_printf(b, "rtplace_cpu_irq_seconds_total{cpu=\"%u\"} %.3f\n", cpu,
				    (double)n[cpu].irq_ns / 1e9);
	metrics_family(b, "rtplace_cpu_softirq_seconds_total", "counter",
		       "Time the CPU spent in softirqs since boot (/proc/stat softirq).");
	for (uint32_t cpu = 0; cpu < ncpus; cpu++)
		evbuffer_add_printf(b, "rtplace_cpu_softirq_seconds_total{cpu=\"%u\"} %.3f\n", cpu,
				    (double)n[cpu].softirq_ns / 1e9);
}

static void metrics_cpus(struct metrics *m, struct evbuffer *b)
{
	const struct engine_host *h = engine_host(m->o.engine);
	uint32_t ncpus = engine_topo(m->o.engine)->ncpus;
	struct rtplace_cpumask isolated;

	metrics_family(b, "rtplace_cpu_rt_priority", "gauge",
		       "Highest RT priority queued on the CPU (0: none, 100: a deadline task runs).");
	for (uint32_t cpu = 0; cpu < ncpus; cpu++)
		evbuffer_add_printf(b, "rtplace_cpu_rt_priority{cpu=\"%u\"} %u\n", cpu,
				    metrics_rt_priority(cpupri_level(&m->view, cpu)));
	metrics_family(b, "rtplace_cpu_online", "gauge", "1 when the CPU is online and managed by rtplace, else 0.");
	for (uint32_t cpu = 0; cpu < ncpus; cpu++)
		evbuffer_add_printf(b, "rtplace_cpu_online{cpu=\"%u\"} %d\n", cpu,
				    cpupri_level(&m->view, cpu) != LEVEL_OFFLINE);
	metrics_family(b, "rtplace_cpu_isolated", "gauge",
		       "1 when the CPU is isolated (isolcpus=, an isolated cgroup partition, or for a claim), else 0.");
	engine_isolated_cpus(m->o.engine, &isolated);
	cpuset_or(&isolated, &isolated, &h->iso.isolated);
	for (uint32_t cpu = 0; cpu < ncpus; cpu++)
		evbuffer_add_printf(b, "rtplace_cpu_isolated{cpu=\"%u\"} %d\n", cpu, cpuset_test(&isolated, cpu));
	metrics_family(b, "rtplace_cpu_isolated_for_claim", "gauge",
		       "1 when a claim's isolation ([isolation]) keeps other tasks, interrupts and unbound work off the CPU, "
		       "else 0.");
	engine_isolated_cpus(m->o.engine, &isolated);
	for (uint32_t cpu = 0; cpu < ncpus; cpu++)
		evbuffer_add_printf(b, "rtplace_cpu_isolated_for_claim{cpu=\"%u\"} %d\n", cpu, cpuset_test(&isolated, cpu));
	metrics_family(b, "rtplace_cpu_nohz_full", "gauge", "1 when the CPU is in nohz_full=, else 0.");
	for (uint32_t cpu = 0; cpu < ncpus; cpu++)
		evbuffer_add_printf(b, "rtplace_cpu_nohz_full{cpu=\"%u\"} %d\n", cpu, cpuset_test(&h->iso.nohz_full, cpu));
	metrics_cpu_places(m, b);
	metrics_cpu_claims(m, b);
	/* Only a tracker or the sampler counts the RT tasks queued. */
	if (levels_source_live(engine_levels(m->o.engine)))
		metrics_cpu_rt_queued(m, b);
	if (engine_irqnoise(m->o.engine))
		metrics_irq(m, b);
}

/* RT throttling, left out when the sysctls could not be read: a made-up
 * value would pass for the kernel's. */
static void metrics_rt_throttle(struct metrics *m, struct evbuffer *b)
{
	const struct engine_host *h = engine_host(m->o.engine);

	if (!h->rt_known)
		return;
	metrics_family(b, "rtplace_sched_rt_runtime_seconds", "gauge",
		       "kernel.sched_rt_runtime_us: RT time allowed in each period (-1: throttling off).");
	if (h->rt.runtime_us < 0)
		evbuffer_add_printf(b, "rtplace_sched_rt_runtime_seconds -1\n");
	else
		evbuffer_add_printf(b, "rtplace_sched_rt_runtime_seconds %.6f\n", (double)h->rt.runtime_us / 1e6);
	metrics_family(b, "rtplace_sched_rt_period_seconds", "gauge", "kernel.sched_rt_period_us.");
	evbuffer_add_printf(b, "rtplace_sched_rt_period_seconds %.6f\n", (double)h->rt.period_us / 1e6);
}

/* Nanoseconds as seconds with every digit: counters of ns stay exact. */
static void metrics_seconds_value(struct evbuffer *b, uint64_t ns)
{
	evbuffer_add_printf(b, "%llu.%09llu", (unsigned long long)(ns / 1000000000u),
			    (unsigned long long)(ns % 1000000000u));
}

static void metrics_seconds(struct evbuffer *b, uint64_t ns)
{
	metrics_seconds_value(b, ns);
	evbuffer_add_printf(b, "\n");
}

/* Time by class from the tracker, all CPUs at one instant read before
 * them; a CPU whose entry cannot be read is left out of this scrape. */
static void metrics_class_seconds(struct metrics *m, struct evbuffer *b)
{
	static const char *const names[RTPLACE_CLASS_COUNT] = {
		[RTPLACE_CLASS_IDLE] = "idle",
		[RTPLACE_CLASS_NORMAL] = "normal",
		[RTPLACE_CLASS_RT] = "rt",
		[RTPLACE_CLASS_DL] = "dl",
	};
	uint64_t now = loop_now_ns(), ns[RTPLACE_CLASS_COUNT];

	metrics_family(b, "rtplace_cpu_class_seconds_total", "counter",
		       "Time the CPU spent running idle, normal (fair), rt and dl (deadline) tasks, counted by the "
		       "BPF tracker since rtplaced started.");
	for (uint32_t cpu = 0; cpu < engine_topo(m->o.engine)->ncpus; cpu++) {
		int r = levels_source_cpu_times(engine_levels(m->o.engine), cpu, now, ns);

		if (r < 0) {
			log_ratelimited(LOG_WARNING, "Failed to read the time by class of CPU %u: %s", cpu,
					strerror(-r));
			continue;
		}
		for (int c = 0; c < RTPLACE_CLASS_COUNT; c++) {
			evbuffer_add_printf(b, "rtplace_cpu_class_seconds_total{cpu=\"%u\",class=\"%s\"} ", cpu,
					    names[c]);
			metrics_seconds(b, ns[c]);
		}
	}
}

/* A label value as the text format wants it: backslash, double quote and
 * newline escaped. */
static void metrics_label_value(struct evbuffer *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			evbuffer_add_printf(b, "\\%c", *v);
		else if (*v == '\n')
			evbuffer_add(b, "\\n", 2);
		else
			evbuffer_add(b, v, 1);
	}
}

/* RT group scheduling (common/kenv.h): whether a cpu cgroup needs a
 * budget, the root's, and how many folders have none. */
static void metrics_kernel_rtgroup(const struct kenv *k, struct evbuffer *b)
{
	static const char *const modes[] = { [KENV_RTG_NONE] = "none", [KENV_RTG_V1] = "v1", [KENV_RTG_V2] = "v2" };

	metrics_family(b, "rtplace_kernel_rt_group_sched", "gauge",
		       "1 when RT group scheduling is on: an RT task in a cpu cgroup other than the root needs an RT "
		       "budget there (cpu.rt_runtime_us), else 0; hierarchy says whose files.");
	evbuffer_add_printf(b, "rtplace_kernel_rt_group_sched{hierarchy=\"%s\"} %d\n",
			    modes[k->rtg.mode < 3 ? k->rtg.mode : 0], kenv_rtgroup_needs_budget(&k->rtg));
	if (k->rtg.mode == KENV_RTG_NONE)
		return;
	metrics_family(b, "rtplace_kernel_rt_group_root_runtime_seconds", "gauge",
		       "The root cpu cgroup's RT budget in each period (cpu.rt_runtime_us; -1: unlimited).");
	evbuffer_add_printf(b, "rtplace_kernel_rt_group_root_runtime_seconds %.6f\n",
			    k->rtg.root_runtime_us < 0 ? -1.0 : (double)k->rtg.root_runtime_us / 1e6);
	metrics_family(b, "rtplace_kernel_rt_group_root_period_seconds", "gauge",
		       "The root cpu cgroup's RT period (cpu.rt_period_us).");
	evbuffer_add_printf(b, "rtplace_kernel_rt_group_root_period_seconds %.6f\n",
			    (double)k->rtg.root_period_us / 1e6);
	metrics_family(b, "rtplace_kernel_rt_group_cgroups", "gauge",
		       "cpu cgroup folders below the root, by whether they have an RT budget (budget=\"none\": RT "
		       "is refused there).");
	evbuffer_add_printf(b, "rtplace_kernel_rt_group_cgroups{budget=\"none\"} %u\n", k->rtg.budgetless);
	evbuffer_add_printf(b, "rtplace_kernel_rt_group_cgroups{budget=\"some\"} %u\n",
			    k->rtg.folders - k->rtg.budgetless);
}

/* The deadline servers: which could be read, and each CPU's reserve. */
static void metrics_kernel_dl(const struct kernel_env *ke, struct evbuffer *b)
{
	static const char *const states[] = { [KENV_DL_READ] = "read", [KENV_DL_ABSENT] = "absent",
					      [KENV_DL_UNREADABLE] = "unreadable" };
	const struct kenv *k = kernel_env_get(ke);
	const struct kenv_dlserver *s[2] = { &k->fair, &k->ext };
	const char *names[2] = { "fair", "ext" };
	const struct kenv_dl_cpu *cpus[2];
	uint32_t n[2];

	metrics_family(b, "rtplace_kernel_deadline_server_state", "gauge",
		       "1 for the state of each deadline server (fair_server, ext_server) in debugfs: read, absent "
		       "(not in this kernel) or unreadable (debugfs not mounted or hidden from rtplaced).");
	for (int i = 0; i < 2; i++) {
		cpus[i] = kernel_env_dl_cpus(ke, i == 1, &n[i]);
		for (uint32_t st = 0; st < 3; st++)
			evbuffer_add_printf(b, "rtplace_kernel_deadline_server_state{server=\"%s\",state=\"%s\"} %d\n",
					    names[i], states[st], s[i]->state == st);
	}
	metrics_family(b, "rtplace_kernel_deadline_server_runtime_seconds", "gauge",
		       "Time the deadline server keeps for normal (fair) or sched_ext (ext) tasks in each period on "
		       "the CPU, ahead of RT tasks (debugfs sched/SERVER_server/cpuN/runtime; 0: off).");
	for (int i = 0; i < 2; i++)
		for (uint32_t c = 0; c < n[i]; c++)
			evbuffer_add_printf(b, "rtplace_kernel_deadline_server_runtime_seconds{server=\"%s\",cpu=\"%u\"} "
					    "%.9f\n", names[i], c, (double)cpus[i][c].runtime_ns / 1e9);
	metrics_family(b, "rtplace_kernel_deadline_server_period_seconds", "gauge",
		       "The deadline server's period on the CPU (debugfs sched/SERVER_server/cpuN/period).");
	for (int i = 0; i < 2; i++)
		for (uint32_t c = 0; c < n[i]; c++)
			evbuffer_add_printf(b, "rtplace_kernel_deadline_server_period_seconds{server=\"%s\",cpu=\"%u\"} "
					    "%.9f\n", names[i], c, (double)cpus[i][c].period_ns / 1e9);
}

/* sched_ext, left out on a kernel without it. */
static void metrics_kernel_scx(const struct kenv *k, struct evbuffer *b)
{
	if (k->scx.state == KENV_SCX_ABSENT)
		return;
	metrics_family(b, "rtplace_kernel_sched_ext_enabled", "gauge",
		       "1 while a sched_ext BPF scheduler is loaded and enabled (ops: its name), else 0.");
	evbuffer_add_printf(b, "rtplace_kernel_sched_ext_enabled{ops=\"");
	metrics_label_value(b, k->scx.state == KENV_SCX_ENABLED ? k->scx.ops : "");
	evbuffer_add_printf(b, "\"} %d\n", k->scx.state == KENV_SCX_ENABLED);
	if (k->scx.enable_seq < 0)
		return;
	metrics_family(b, "rtplace_kernel_sched_ext_loads_total", "counter",
		       "sched_ext schedulers enabled since boot (/sys/kernel/sched_ext/enable_seq).");
	evbuffer_add_printf(b, "rtplace_kernel_sched_ext_loads_total %lld\n", (long long)k->scx.enable_seq);
}

/* The kernel's RT environment, as last read (kernel-env.h says when). */
static void metrics_kernel(struct metrics *m, struct evbuffer *b)
{
	const struct kernel_env *ke = engine_kernel_env(m->o.engine);

	metrics_kernel_rtgroup(kernel_env_get(ke), b);
	metrics_kernel_dl(ke, b);
	metrics_kernel_scx(kernel_env_get(ke), b);
}

/* Where the levels come from; with the sampler, why, how often and at what
 * cost. */
static void metrics_tracking(struct metrics *m, struct evbuffer *b)
{
	static const struct {
		uint32_t mode;
		const char *name;
	} modes[] = {
		{ RTPLACE_TRACKING_LIVE, "live" },
		{ RTPLACE_TRACKING_SAMPLED, "sampled" },
		{ RTPLACE_TRACKING_SIMULATED, "simulated" },
	};
	struct rtplace_tracking_reply st;

	metrics_family(b, "rtplace_tracking_mode", "gauge",
		       "Where CPU levels come from: the BPF tracker (live), /proc samples (sampled), or none "
		       "(simulated, --topology); 1 for the current one.");
	levels_source_describe(engine_levels(m->o.engine), &st);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		evbuffer_add_printf(b, "rtplace_tracking_mode{mode=\"%s\"} %d\n", modes[i].name, modes[i].mode == st.mode);
	if (st.mode != RTPLACE_TRACKING_SAMPLED)
		return;
	metrics_family(b, "rtplace_tracking_untracked_info", "gauge",
		       "Why the BPF tracker does not run (the feature missing, or the configuration); always 1.");
	evbuffer_add_printf(b, "rtplace_tracking_untracked_info{why=\"");
	metrics_label_value(b, st.why);
	evbuffer_add_printf(b, "\"} 1\n");
	metrics_family(b, "rtplace_sample_interval_seconds", "gauge", "Period of the /proc sampler.");
	evbuffer_add_printf(b, "rtplace_sample_interval_seconds %.3f\n", st.interval_ms / 1e3);
	metrics_family(b, "rtplace_samples_total", "counter",
		       "Samples of the CPUs' levels from /proc: taken (ok), and failed (the map kept the last).");
	evbuffer_add_printf(b, "rtplace_samples_total{result=\"ok\"} %llu\nrtplace_samples_total{result=\"failed\"} %llu\n",
			    (unsigned long long)(st.samples - st.failures), (unsigned long long)st.failures);
	metrics_family(b, "rtplace_sample_cpu_seconds_total", "counter", "CPU time the daemon spent sampling /proc.");
	evbuffer_add_printf(b, "rtplace_sample_cpu_seconds_total %.9f\n", st.cpu_ns / 1e9);
}

static void metrics_tracker(struct metrics *m, struct evbuffer *b)
{
	struct tracker_prog_stats st[METRICS_MAX_PROGS];
	size_t n;
	int r = tracker_prog_stats(levels_source_tracker(engine_levels(m->o.engine)), st, METRICS_MAX_PROGS, &n);

	if (r < 0) {
		log_ratelimited(LOG_WARNING, "Failed to read the tracker's BPF statistics: %s", strerror(-r));
		return;
	}
	metrics_family(b, "rtplace_tracker_runs_total", "counter",
		       "Runs of each tracker BPF program since [metrics] bpf-stats turned statistics on.");
	for (size_t i = 0; i < n; i++)
		evbuffer_add_printf(b, "rtplace_tracker_runs_total{program=\"%s\"} %llu\n", st[i].name,
				    (unsigned long long)st[i].runs);
	metrics_family(b, "rtplace_tracker_run_seconds_total", "counter",
		       "Time spent in each tracker BPF program since [metrics] bpf-stats turned statistics on.");
	for (size_t i = 0; i < n; i++) {
		evbuffer_add_printf(b, "rtplace_tracker_run_seconds_total{program=\"%s\"} ", st[i].name);
		metrics_seconds(b, st[i].run_ns);
	}
}

/* What org.freedesktop.RealtimeKit1 granted and refused (rtkit.h). */
static void metrics_rtkit(struct metrics *m, struct evbuffer *b)
{
	struct rtkit_stats st;

	rtkit_get_stats(m->o.rtkit, &st);
	metrics_family(b, "rtplace_rtkit_serving", "gauge", "1 while rtplaced owns org.freedesktop.RealtimeKit1.");
	evbuffer_add_printf(b, "rtplace_rtkit_serving %d\n", st.serving);
	metrics_family(b, "rtplace_rtkit_threads", "gauge", "Threads holding a RealtimeKit RT grant now.");
	evbuffer_add_printf(b, "rtplace_rtkit_threads %u\n", st.threads);
	metrics_family(b, "rtplace_rtkit_grants_total", "counter",
		       "RealtimeKit requests granted: realtime (SCHED_RR), high_priority (a nice level), and "
		       "unpinned (realtime without a CPU of its own).");
	evbuffer_add_printf(b,
			    "rtplace_rtkit_grants_total{kind=\"realtime\"} %llu\n"
			    "rtplace_rtkit_grants_total{kind=\"high_priority\"} %llu\n"
			    "rtplace_rtkit_grants_total{kind=\"unpinned\"} %llu\n",
			    (unsigned long long)st.granted_rt, (unsigned long long)st.granted_nice,
			    (unsigned long long)st.unpinned);
	metrics_family(b, "rtplace_rtkit_watchdog_demotions_total", "counter",
		       "Threads the RealtimeKit starvation watchdog sent back to SCHED_OTHER.");
	evbuffer_add_printf(b, "rtplace_rtkit_watchdog_demotions_total %llu\n", (unsigned long long)st.demoted);
	metrics_family(b, "rtplace_rtkit_refusals_total", "counter", "RealtimeKit requests refused, by reason.");
	for (int i = 0; i < RTKIT_REFUSE_COUNT; i++)
		evbuffer_add_printf(b, "rtplace_rtkit_refusals_total{reason=\"%s\"} %llu\n",
				    rtkit_refusal_name((enum rtkit_refusal)i), (unsigned long long)st.refused[i]);
}

/* The whole page, in the text format 0.0.4: HELP and TYPE before each
 * family's samples, each family once. */
static void metrics_claims(const struct engine_counters *st, struct evbuffer *b)
{
	static const char *const why[ENGINE_END_COUNT] = {
		[ENGINE_END_RELEASED] = "released",
		[ENGINE_END_DISCONNECTED] = "disconnected",
		[ENGINE_END_EXPIRED] = "expired",
		[ENGINE_END_OWNER_EXITED] = "owner_exited",
		[ENGINE_END_REVOKED] = "revoked",
	};

	metrics_family(b, "rtplace_claims_created_total", "counter",
		       "Claims made since the daemon started, the ones restored at start included.");
	evbuffer_add_printf(b, "rtplace_claims_created_total %llu\n", (unsigned long long)st->claims_created);
	metrics_family(b, "rtplace_claims_ended_total", "counter",
		       "Claims ended, by why: released, disconnected (a connection-bound claim's connection closed), "
		       "expired, owner_exited, revoked (a CPU went offline).");
	static const char *const limit[ENGINE_LIMIT_COUNT] = {
		[ENGINE_LIMIT_PER_CLIENT] = "max-claims-per-client",
		[ENGINE_LIMIT_PER_USER] = "max-claims-per-user",
		[ENGINE_LIMIT_USERS] = "max-claims",
		[ENGINE_LIMIT_TABLE] = "table",
	};

	for (int i = 0; i < ENGINE_END_COUNT; i++)
		evbuffer_add_printf(b, "rtplace_claims_ended_total{reason=\"%s\"} %llu\n", why[i],
				    (unsigned long long)st->claims_ended[i]);
	metrics_family(b, "rtplace_claims_refused_total", "counter",
		       "Claims refused at a limit, by the [limits] key met (table: the daemon's whole table).");
	for (int i = 0; i < ENGINE_LIMIT_COUNT; i++)
		evbuffer_add_printf(b, "rtplace_claims_refused_total{limit=\"%s\"} %llu\n", limit[i],
				    (unsigned long long)st->claims_refused[i]);
}

/* Seconds with the ns digits: bucket bounds and sums stay exact. */
static void metrics_query_time(const struct histogram *h, struct evbuffer *b)
{
	metrics_family(b, "rtplace_query_duration_seconds", "histogram",
		       "Time the daemon took to answer a QUERY, from its decoding to its reply queued.");
	for (unsigned i = 0; i <= HISTOGRAM_BUCKETS; i++) {
		evbuffer_add_printf(b, "rtplace_query_duration_seconds_bucket{le=\"");
		if (i < HISTOGRAM_BUCKETS)
			metrics_seconds_value(b, histogram_bounds_ns[i]);
		else
			evbuffer_add_printf(b, "+Inf");
		evbuffer_add_printf(b, "\"} %llu\n", (unsigned long long)histogram_cumulative(h, i));
	}
	evbuffer_add_printf(b, "rtplace_query_duration_seconds_sum ");
	metrics_seconds(b, h->sum_ns);
	evbuffer_add_printf(b, "rtplace_query_duration_seconds_count %llu\n", (unsigned long long)h->count);
}

static void metrics_reloads(const struct metrics_reloads *r, struct evbuffer *b)
{
	metrics_family(b, "rtplace_config_reloads_total", "counter",
		       "Configuration reloads (SIGHUP): applied, or refused for an error in the file.");
	evbuffer_add_printf(b, "rtplace_config_reloads_total{result=\"applied\"} %llu\n"
			    "rtplace_config_reloads_total{result=\"refused\"} %llu\n",
			    (unsigned long long)r->applied, (unsigned long long)r->refused);
	metrics_family(b, "rtplace_config_last_reload_successful", "gauge",
		       "1 when the last reload applied (or none was asked for), 0 when it was refused.");
	evbuffer_add_printf(b, "rtplace_config_last_reload_successful %d\n", r->last_ok);
}

/* The process_* series of Prometheus' client libraries, from the daemon's
 * own /proc entries; a figure that cannot be read is left out. */
static void metrics_process(struct metrics *m, struct evbuffer *b)
{
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct procfs_stat st;
	struct rlimit rl;
	uint32_t fds;

	if (tck > 0 && page > 0 && procfs_read_stat(PROCFS_ROOT, getpid(), 0, &st) == 0) {
		metrics_family(b, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
		evbuffer_add_printf(b, "process_cpu_seconds_total %.2f\n", (double)(st.utime + st.stime) / (double)tck);
		metrics_family(b, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
		evbuffer_add_printf(b, "process_virtual_memory_bytes %llu\n", (unsigned long long)st.vsize);
		metrics_family(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
		evbuffer_add_printf(b, "process_resident_memory_bytes %llu\n",
				    (unsigned long long)st.rss * (unsigned long long)page);
		metrics_family(b, "process_start_time_seconds", "gauge",
			       "Start time of the process since unix epoch in seconds.");
		evbuffer_add_printf(b, "process_start_time_seconds %.2f\n",
				    (double)m->boot_ns / 1e9 + (double)st.start_time / (double)tck);
	}
	if (procfs_count_fds(PROCFS_ROOT, getpid(), &fds) == 0) {
		metrics_family(b, "process_open_fds", "gauge", "Number of open file descriptors.");
		evbuffer_add_printf(b, "process_open_fds %u\n", fds);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		metrics_family(b, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
		evbuffer_add_printf(b, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
	}
}

static void metrics_page(struct metrics *m, struct evbuffer *b)
{
	const struct engine_counters *st = engine_counters_view(m->o.engine);
	struct tracker *tracker = levels_source_tracker(engine_levels(m->o.engine));
	struct actors_stats as;

	actors_get_stats(m->o.actors, &as);
	metrics_family(b, "rtplace_build_info", "gauge", "The running rtplaced's version; always 1.");
	evbuffer_add_printf(b, "rtplace_build_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
	metrics_cpus(m, b);
	metrics_rt_throttle(m, b);
	metrics_kernel(m, b);
	metrics_family(b, "rtplace_claims_active", "gauge", "Claims held now.");
	evbuffer_add_printf(b, "rtplace_claims_active %u\n", claims_count(engine_claims_view(m->o.engine)));
	metrics_family(b, "rtplace_claimed_cpus", "gauge", "CPUs some claim holds now.");
	evbuffer_add_printf(b, "rtplace_claimed_cpus %u\n", engine_claimed_cpus(m->o.engine));
	metrics_claims(st, b);
	metrics_family(b, "rtplace_clients", "gauge", "Socket clients connected now.");
	evbuffer_add_printf(b, "rtplace_clients %u\n", server_client_count(m->o.server));
	metrics_family(b, "rtplace_queries_total", "counter",
		       "Placement queries answered: placed (with CPUs), empty (no CPU fits), refused (an error).");
	evbuffer_add_printf(b,
			    "rtplace_queries_total{result=\"placed\"} %llu\n"
			    "rtplace_queries_total{result=\"empty\"} %llu\n"
			    "rtplace_queries_total{result=\"refused\"} %llu\n",
			    (unsigned long long)st->queries_placed, (unsigned long long)st->queries_empty,
			    (unsigned long long)(st->queries - st->queries_placed - st->queries_empty));
	metrics_query_time(&st->query_time, b);
	metrics_family(b, "rtplace_moves_total", "counter",
		       "Threads moved (by MOVE requests and rebalancing pushes), and MOVE requests and pushes that failed.");
	evbuffer_add_printf(b, "rtplace_moves_total{result=\"moved\"} %llu\nrtplace_moves_total{result=\"failed\"} %llu\n",
			    (unsigned long long)as.moved, (unsigned long long)as.failed);
	metrics_family(b, "rtplace_collisions_total", "counter",
		       "Managed threads found queued behind an equal or higher RT task.");
	evbuffer_add_printf(b, "rtplace_collisions_total %llu\n", (unsigned long long)as.collisions);
	metrics_family(b, "rtplace_records_lost_total", "counter",
		       "Notification records dropped because a subscriber's ring was full.");
	evbuffer_add_printf(b, "rtplace_records_lost_total %llu\n", (unsigned long long)as.records_lost);
	metrics_tracking(m, b);
	if (tracker) {
		metrics_class_seconds(m, b);
		metrics_family(b, "rtplace_tracker_events_lost_total", "counter",
			       "Tracker events dropped because the BPF ring buffer was full.");
		evbuffer_add_printf(b, "rtplace_tracker_events_lost_total %llu\n", (unsigned long long)tracker_lost(tracker));
	}
	if (m->bpf_stats)
		metrics_tracker(m, b);
	if (m->o.rtkit)
		metrics_rtkit(m, b);
	if (m->o.reloads)
		metrics_reloads(m->o.reloads, b);
	metrics_process(m, b);
}

/* The page into body: the last one built when it is recent enough, so that
 * a flood of scrapes builds one per METRICS_PAGE_MAX_AGE_MS. */
static int metrics_page_copy(struct metrics *m, struct evbuffer *body)
{
	uint64_t now = loop_now_ns();
	size_t len = evbuffer_get_length(m->page);

	if (!len || now - m->page_ns >= METRICS_PAGE_MAX_AGE_MS * 1000000ull) {
		evbuffer_drain(m->page, len);
		metrics_page(m, m->page);
		m->page_ns = now;
		len = evbuffer_get_length(m->page);
	}
	return evbuffer_add(body, evbuffer_pullup(m->page, -1), len) < 0 ? -ENOMEM : 0;
}

/* Answers code with a one-line text page (consumes body). */
static void metrics_refuse(struct evhttp_request *req, struct evbuffer *body, int code, const char *reason)
{
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "text/plain; charset=utf-8");
	evbuffer_add_printf(body, "%d %s: only GET /metrics is served here\n", code, reason);
	evhttp_send_reply(req, code, reason, body);
	evbuffer_free(body);
}

static void metrics_request_cb(struct evhttp_request *req, void *arg)
{
	struct metrics *m = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	struct evkeyvalq *headers = evhttp_request_get_output_headers(req);
	struct evbuffer *body;

	body = evbuffer_new();
	if (!body) {
		evhttp_send_error(req, HTTP_SERVUNAVAIL, NULL);
		return;
	}
	if (!path || strcmp(path, "/metrics") != 0) {
		metrics_refuse(req, body, HTTP_NOTFOUND, "Not Found");
		return;
	}
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		/* evhttp_send_error() would drop this header. */
		evhttp_add_header(headers, "Allow", "GET, HEAD");
		metrics_refuse(req, body, HTTP_BADMETHOD, "Method Not Allowed");
		return;
	}
	if (metrics_page_copy(m, body) < 0) {
		evbuffer_free(body);
		evhttp_send_error(req, HTTP_SERVUNAVAIL, NULL);
		return;
	}
	evhttp_add_header(headers, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	if (cmd == EVHTTP_REQ_HEAD) {
		/* evhttp would send the page after the headers: HEAD gets
		 * the page's length only. */
		char len[24];

		snprintf(len, sizeof(len), "%zu", evbuffer_get_length(body));
		evhttp_add_header(headers, "Content-Length", len);
		evhttp_send_reply(req, HTTP_OK, "OK", NULL);
	} else {
		evhttp_send_reply(req, HTTP_OK, "OK", body);
	}
	evbuffer_free(body);
}

int metrics_new(const struct metrics_opts *opts, const struct config_metrics *cfg, struct metrics **ret)
{
	struct metrics *m = calloc(1, sizeof(*m));
	struct evhttp_bound_socket *bound;
	const void *map;
	size_t map_size;
	int r;

	if (!m)
		return -ENOMEM;
	m->o = *opts;
	m->boot_ns = clocks_boot_time_ns();
	m->page = evbuffer_new();
	if (!m->page) {
		r = -ENOMEM;
		goto fail;
	}
	map = levels_source_map(engine_levels(opts->engine), &map_size);
	r = cpupri_view_open(map, map_size, &m->view);
	if (r < 0)
		goto fail;
	m->http = evhttp_new(opts->base);
	if (!m->http) {
		r = -ENOMEM;
		goto fail;
	}
	/* Every method reaches metrics_request_cb, which answers 405 itself;
	 * evhttp would answer 501 to the ones outside its default set. */
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
						    EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
						    EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_max_headers_size(m->http, METRICS_MAX_HEADERS_SIZE);
	evhttp_set_max_body_size(m->http, METRICS_MAX_BODY_SIZE);
	evhttp_set_timeout(m->http, METRICS_TIMEOUT_S);
	evhttp_set_gencb(m->http, metrics_request_cb, m);
	errno = 0;
	bound = evhttp_bind_socket_with_handle(m->http, cfg->host, cfg->port);
	if (!bound) {
		r = errno ? -errno : -EADDRNOTAVAIL;
		log_error("[metrics] listen: cannot listen on %s%s%s:%u: %s", strchr(cfg->host, ':') ? "[" : "",
			  cfg->host, strchr(cfg->host, ':') ? "]" : "", cfg->port, strerror(-r));
		goto fail;
	}
	m->listener = evhttp_bound_socket_get_listener(bound);
	m->ev_resume = evtimer_new(opts->base, metrics_resume_cb, m);
	if (!m->ev_resume) {
		r = -ENOMEM;
		goto fail;
	}
	evhttp_set_bevcb(m->http, metrics_accepted_cb, m);
	if (cfg->bpf_stats && levels_source_tracker(engine_levels(opts->engine))) {
		r = tracker_enable_stats(levels_source_tracker(engine_levels(opts->engine)));
		if (r < 0)
			log_warning("[metrics] bpf-stats: cannot enable BPF statistics: %s; the tracker series are left out",
				    strerror(-r));
		m->bpf_stats = r == 0;
	} else if (cfg->bpf_stats) {
		log_notice("[metrics] bpf-stats: no BPF tracker (simulating or sampling); the tracker series are left out");
	}
	log_info("Serving metrics on http://%s%s%s:%u/metrics", strchr(cfg->host, ':') ? "[" : "", cfg->host,
		 strchr(cfg->host, ':') ? "]" : "", cfg->port);
	*ret = m;
	return 0;
fail:
	metrics_free(m);
	return r;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	if (m->ev_resume)
		event_free(m->ev_resume);
	if (m->http)
		evhttp_free(m->http);
	cpupri_view_close(&m->view);
	if (m->page)
		evbuffer_free(m->page);
	free(m);
}
