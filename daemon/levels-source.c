/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpupri.h"
#include "hotplug.h"
#include "levels-source.h"
#include "log.h"
#include "procfs.h"
#include "sampler.h"
#include "snapshot.h"
#include "sysfs.h"
#include "systemd.h"

enum {
	LEVELS_SOURCE_EXIT_FAILURE = 1,
	LEVELS_SOURCE_EXIT_UNAVAILABLE = 69,
	LEVELS_SOURCE_EXIT_NOPERM = 77,
};

struct levels_source {
	const struct levels_source_ops *ops;
	struct loop *loop;
	struct topo *topo;         /* reloaded in place when unseen CPUs come online */
	const void *map;
	size_t map_size;
	int map_fd;                /* -1 for none */
	bool shared;               /* a local reader took map_fd: the tracker's copy is kept current */
	struct tracker *tracker;   /* the tracker kind's */
	struct sampler *sampler;   /* the sampler kind's */
	uint32_t sample_interval_ms;
	struct rtplace_reason untracked; /* why not the tracker, with the sampler */
	struct snapshot_region sim_region; /* the simulation's map, a sealed memfd */
	struct hotplug *hotplug;   /* live machine only */
	struct event *ev_hotplug;
	levels_source_changed_fn *changed;
	void *changed_ctx;
};

static int levels_source_tracker_times(const struct levels_source *src, uint32_t cpu, uint64_t now_ns,
				       uint64_t ret_ns[RTPLACE_CLASS_COUNT])
{
	return tracker_cpu_times(src->tracker, cpu, now_ns, ret_ns);
}

static void levels_source_sampler_describe(const struct levels_source *src, struct rtplace_tracking_reply *ret)
{
	struct sampler_stats st;

	sampler_get_stats(src->sampler, &st);
	ret->interval_ms = src->sample_interval_ms;
	ret->samples = st.samples;
	ret->failures = st.failures;
	ret->cpu_ns = st.cpu_ns;
	memset(ret->why, 0, sizeof(ret->why));
	memcpy(ret->why, src->untracked.text, strnlen(src->untracked.text, sizeof(ret->why) - 1));
}

static void levels_source_tracker_close(struct levels_source *src)
{
	tracker_close(src->tracker);
}

static void levels_source_sampler_close(struct levels_source *src)
{
	sampler_free(src->sampler);
}

static void levels_source_sim_close(struct levels_source *src)
{
	snapshot_region_free(&src->sim_region);
}

static const struct levels_source_ops levels_source_tracker_ops = {
	.mode = RTPLACE_TRACKING_LIVE,
	.cpu_times = levels_source_tracker_times,
	.close = levels_source_tracker_close,
};

static const struct levels_source_ops levels_source_sampler_ops = {
	.mode = RTPLACE_TRACKING_SAMPLED,
	.describe = levels_source_sampler_describe,
	.close = levels_source_sampler_close,
};

static const struct levels_source_ops levels_source_sim_ops = {
	.mode = RTPLACE_TRACKING_SIMULATED,
	.close = levels_source_sim_close,
};

/* A map for a machine we do not run on: every online CPU idle, for claims
 * and placement to act on (--topology). A sealed memfd, so that clients
 * read it locally as they read the BPF map. */
static int levels_source_open_sim(struct levels_source *src, enum topo_shard shard)
{
	__u16 *shard_of = calloc(src->topo->ncpus, sizeof(*shard_of));
	struct cpupri_geom g;
	int r = shard_of ? cpupri_geom_for_topo(src->topo, shard, shard_of, &g) : -ENOMEM;

	if (r == 0)
		r = snapshot_region_new("rtplace-map", g.size, &src->sim_region);
	if (r == 0) {
		cpupri_init(src->sim_region.map, &g, shard_of);
		cpupri_set_online_idle(src->sim_region.map, &g, src->topo);
		src->ops = &levels_source_sim_ops;
		src->map = src->sim_region.map;
		src->map_size = g.size;
		src->map_fd = src->sim_region.ro_fd;
	}
	free(shard_of);
	return r;
}

static void levels_source_sample_cb(void *ctx)
{
	struct levels_source *src = ctx;
	int r = sampler_sample(src->sampler);

	if (r < 0)
		log_warning_ratelimited("Failed to sample the CPUs' levels from %s: %s; the map keeps the last sample",
					PROCFS_ROOT, strerror(-r));
}

static void levels_source_mirror_cb(void *ctx)
{
	tracker_mirror(((struct levels_source *)ctx)->tracker);
}

/* The /proc sampler on the loop's timer, where the tracker does not run. */
static int levels_source_open_sampler(struct levels_source *src, const struct config *cfg)
{
	const struct config_tracker *tc = &cfg->tracker;
	struct sampler_stats st;
	int r = sampler_new(src->topo, cfg->topology.shard, PROCFS_ROOT, SYSFS_ROOT, &src->sampler);

	if (r < 0) {
		log_error("Failed to sample the CPUs' levels from %s: %s", PROCFS_ROOT, strerror(-r));
		return r;
	}
	src->ops = &levels_source_sampler_ops;
	src->map = sampler_map(src->sampler, &src->map_size);
	src->sample_interval_ms = tc->sample_interval_ms;
	r = loop_every(src->loop, (uint64_t)tc->sample_interval_ms * 1000, levels_source_sample_cb, src);
	if (r < 0)
		return r;
	sampler_get_stats(src->sampler, &st);
	log_notice("Tracking: sampled from %s every %u ms, not live (%s); a sample took %.3f ms of CPU",
		   PROCFS_ROOT, tc->sample_interval_ms, src->untracked.text, (double)st.last_ns / 1e6);
	/* A sample reads every thread's stat file (~12 us each measured,
	 * rtplaced(8)): on a machine with many threads a short interval
	 * costs a large share of a CPU. */
	if (st.last_ns * 10 > (uint64_t)tc->sample_interval_ms * 1000000)
		log_warning("Sampling costs %.0f%% of a CPU every %u ms; raise [tracker] sample-interval-ms",
			    (double)st.last_ns / ((double)tc->sample_interval_ms * 1e4), tc->sample_interval_ms);
	if (cfg->moves.n_manage_comm || cfg->moves.n_manage_uid || cfg->moves.n_manage_cgroup)
		log_warning("[moves] manage-* rules need the BPF tracker; no process is managed");
	return 0;
}

/*
 * The live machine's source: the BPF tracker, or where it cannot load (and
 * [tracker] required = no) or is not wanted (mode = sampled), the sampler.
 */
static int levels_source_open_live(struct levels_source *src, const struct config *cfg, int *ret_exit)
{
	const struct config_tracker *tc = &cfg->tracker;
	struct rtplace_reason said; /* what libbpf said, logged beside the reason */
	int r;

	if (tc->mode == CONFIG_TRACKER_AUTO) {
		systemd_status("Loading BPF tracker");
		r = tracker_open(src->topo, cfg->topology.shard, &src->untracked, &said, &src->tracker);
		if (r == 0) {
			src->ops = &levels_source_tracker_ops;
			src->map = tracker_map(src->tracker, &src->map_size);
			src->map_fd = tracker_map_ro_fd(src->tracker);
			if (src->map_fd < 0)
				log_notice("No descriptor of the cpupri map to hand out: no local reads");
			return 0;
		}
		if (tc->required) {
			log_error("Failed to start the BPF tracker: %s%s%s%s", src->untracked.text,
				  said.text[0] ? " (" : "", said.text, said.text[0] ? ")" : "");
			*ret_exit = r == -EPERM || r == -EACCES ? LEVELS_SOURCE_EXIT_NOPERM
								: LEVELS_SOURCE_EXIT_UNAVAILABLE;
			return r;
		}
		log_warning("Failed to start the BPF tracker: %s%s%s%s", src->untracked.text, said.text[0] ? " (" : "",
			    said.text, said.text[0] ? ")" : "");
	} else {
		reason_set(&src->untracked, "[tracker] mode = sampled");
	}
	return levels_source_open_sampler(src, cfg);
}

/* The machine's topology, from [topology] file or the live machine. */
static int levels_source_load_topology(struct levels_source *src, const char *file)
{
	struct rtplace_reason reason;
	int r = topo_load(file, &reason, &src->topo);

	if (r < 0) {
		log_error("Failed to load the topology: %s", reason.text);
		return r;
	}
	/* hwloc's parse peaks far above what the daemon keeps (36 MB for an
	 * 8,192-CPU machine's 5 MB of XML, all freed by now): give the heap
	 * back rather than carry it for the daemon's life. */
	malloc_trim(0);
	log_info("Topology%s%s: %u CPUs online of %u, %u NUMA nodes, %u LLCs, %u cores", file ? " from " : "",
		 file ? file : "", cpuset_count(&src->topo->online), src->topo->ncpus, src->topo->nnodes,
		 src->topo->nllcs, src->topo->ncores);
	return 0;
}

/*
 * Follows CPU hotplug (hotplug.h) on the live machine. Opened before the
 * topology is loaded, so that a CPU coming online meanwhile is announced
 * once the loop runs. Without uevents the map still shows offline CPUs as
 * such, but claims on them stay and CPUs offline at start stay unmanaged:
 * worth a warning, not a failure.
 */
static void levels_source_hotplug_open(struct levels_source *src)
{
	int r = hotplug_open(SYSFS_ROOT, &src->hotplug);

	if (r < 0)
		log_warning("Not following CPU hotplug: %s", strerror(-r));
}

int levels_source_open(struct loop *loop, const struct config *cfg, struct levels_source **ret, int *ret_exit)
{
	struct levels_source *src = calloc(1, sizeof(*src));
	const char *file = cfg->topology.file[0] ? cfg->topology.file : NULL;
	int r;

	*ret_exit = LEVELS_SOURCE_EXIT_FAILURE;
	if (!src)
		return -ENOMEM;
	src->loop = loop;
	src->map_fd = -1;
	src->sim_region.ro_fd = -1;
	if (!file)
		levels_source_hotplug_open(src);
	r = levels_source_load_topology(src, file);
	if (r == 0 && file) {
		r = levels_source_open_sim(src, cfg->topology.shard);
		if (r < 0)
			log_error("Failed to build the simulated map: %s", strerror(-r));
		else
			log_notice("Simulating %s: BPF tracking is off, every CPU starts idle", file);
	} else if (r == 0) {
		r = levels_source_open_live(src, cfg, ret_exit);
	}
	if (r < 0) {
		levels_source_close(src);
		return r;
	}
	*ret = src;
	return 0;
}

void levels_source_close(struct levels_source *src)
{
	if (!src)
		return;
	if (src->ev_hotplug)
		event_free(src->ev_hotplug);
	hotplug_close(src->hotplug);
	if (src->ops)
		src->ops->close(src);
	topo_free(src->topo);
	free(src);
}

/*
 * CPUs came online that the topology has never seen (offline when it was
 * loaded): load it again so that placement knows their node, LLC and core.
 * The new topology replaces the old one in place, every holder of the
 * pointer sees it, and the listener rebuilds what is derived from it
 * before the loop runs anything else. CPUs offline now drop out of the new
 * topology until they return; their map level says offline meanwhile.
 * Whether it was reloaded.
 */
static bool levels_source_topology_refresh(struct levels_source *src)
{
	struct rtplace_reason reason;
	struct topo *fresh, old;
	int r = topo_load(NULL, &reason, &fresh);

	if (r < 0) {
		log_error("Failed to reload the topology: %s; new CPUs stay unmanaged", reason.text);
		return false;
	}
	if (fresh->ncpus != src->topo->ncpus) {
		log_warning("CPU ids now reach %u, the map holds %u; restart rtplaced to manage the rest",
			    fresh->ncpus, src->topo->ncpus);
		topo_free(fresh);
		return false;
	}
	old = *src->topo;
	*src->topo = *fresh;
	*fresh = old;
	topo_free(fresh);
	log_info("Topology reloaded: %u CPUs known of %u, %u NUMA nodes, %u LLCs, %u cores",
		 cpuset_count(&src->topo->online), src->topo->ncpus, src->topo->nnodes, src->topo->nllcs,
		 src->topo->ncores);
	return true;
}

static void levels_source_log_hotplug(const struct rtplace_cpumask *gone, const struct rtplace_cpumask *came,
				      bool lost)
{
	char list[256];

	/* After an overflow, one line for it, not a false "went offline"
	 * and "came online" for every CPU it makes count as bounced. */
	if (lost) {
		cpuset_format(gone, list, sizeof(list));
		log_warning("CPU uevents were lost (socket overflow): CPUs %s may have gone offline and back unseen, "
			    "ending their claims", list);
		return;
	}
	if (!cpuset_empty(gone)) {
		cpuset_format(gone, list, sizeof(list));
		log_notice("CPUs %s went offline", list);
	}
	if (!cpuset_empty(came)) {
		cpuset_format(came, list, sizeof(list));
		log_notice("CPUs %s came online", list);
	}
}

static void levels_source_hotplug_cb(evutil_socket_t fd, short what, void *arg)
{
	struct levels_source *src = arg;
	struct rtplace_cpumask gone, came;
	bool lost, reloaded = false;
	int r = hotplug_consume(src->hotplug, &gone, &came, &lost);

	(void)fd;
	(void)what;
	if (r < 0)
		log_warning("Failed to read the online CPUs: %s", strerror(-r));
	if (r <= 0)
		return;
	levels_source_log_hotplug(&gone, &came, lost);
	cpuset_andnot(&came, &came, &src->topo->online);
	if (!cpuset_empty(&came))
		reloaded = levels_source_topology_refresh(src);
	src->changed(&gone, reloaded, src->changed_ctx);
}

int levels_source_follow(struct levels_source *src, levels_source_changed_fn *changed, void *ctx)
{
	src->changed = changed;
	src->changed_ctx = ctx;
	if (!src->hotplug)
		return 0;
	src->ev_hotplug = event_new(loop_base(src->loop), hotplug_fd(src->hotplug), EV_READ | EV_PERSIST,
				    levels_source_hotplug_cb, src);
	if (!src->ev_hotplug || event_add(src->ev_hotplug, NULL) < 0)
		return -ENOMEM;
	return 0;
}

const struct topo *levels_source_topo(const struct levels_source *src)
{
	return src->topo;
}

int levels_source_share(struct levels_source *src)
{
	int r = 0;

	/* The tracker's copy for local readers costs a copy every
	 * TRACKER_MIRROR_MS: paid from the first reader on, not by an idle
	 * daemon. */
	if (src->tracker && src->map_fd >= 0 && !src->shared) {
		tracker_mirror(src->tracker);
		r = loop_every(src->loop, TRACKER_MIRROR_MS * 1000, levels_source_mirror_cb, src);
		src->shared = r == 0;
	}
	return r;
}

const void *levels_source_map(const struct levels_source *src, size_t *ret_size)
{
	*ret_size = src->map_size;
	return src->map;
}

int levels_source_map_fd(const struct levels_source *src)
{
	return src->map_fd;
}

bool levels_source_live(const struct levels_source *src)
{
	return src->ops->mode != RTPLACE_TRACKING_SIMULATED;
}

bool levels_source_has_threads(const struct levels_source *src)
{
	return src->ops->cpu_times != NULL;
}

int levels_source_cpu_times(const struct levels_source *src, uint32_t cpu, uint64_t now_ns,
			    uint64_t ret_ns[RTPLACE_CLASS_COUNT])
{
	return src->ops->cpu_times ? src->ops->cpu_times(src, cpu, now_ns, ret_ns) : -EOPNOTSUPP;
}

void levels_source_describe(const struct levels_source *src, struct rtplace_tracking_reply *ret)
{
	*ret = (struct rtplace_tracking_reply){ .mode = src->ops->mode };
	if (src->ops->describe)
		src->ops->describe(src, ret);
}

struct tracker *levels_source_tracker(const struct levels_source *src)
{
	return src->tracker;
}
