/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtplaced: arguments, configuration, start-up order, the wiring of the
 * modules to each other, and shutdown. Start-up follows what READY=1
 * promises: configuration, topology, tracker attached (the map is live) or
 * its first sample taken, socket listening, then READY.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "cpupri.h"
#include "hotplug.h"
#include "irqnoise.h"
#include "log.h"
#include "loop.h"
#include "manage.h"
#include "metrics.h"
#include "moves.h"
#include "notify.h"
#include "procfs.h"
#include "push.h"
#include "quota.h"
#include "rtkit.h"
#include "sampler.h"
#include "sysfs.h"
#include "systemd.h"
#include "server.h"
#include "dispatch.h"
#include "snapshot.h"
#include "topo.h"
#include "tracker.h"

struct daemon_args {
	const char *config_path; /* NULL: the default path, optional */
	const char *socket_path;
	const char *topology_path;
	const char *host_root; /* NULL: the host's own /sys and /proc */
	bool check_config;
};

struct daemon {
	struct daemon_args args;
	struct config cfg;
	struct topo *topo;
	struct tracker *tracker;
	struct sampler *sampler; /* the /proc-sampled map when the tracker is not running */
	struct rtplace_reason untracked; /* why the tracker is not running; "" when it is */
	struct hotplug *hotplug; /* live machine only */
	struct event *ev_hotplug;
	void *sim_map; /* the map when simulating a --topology machine */
	struct snapshot_region sim_region; /* sim_map's sealed memfd */
	size_t sim_map_size;
	struct loop *loop;
	struct dispatch *dispatch;
	/* What the dispatch acts through (daemon_moves_new()). */
	struct notify *notify;
	struct moves *moves;
	struct push *push;
	struct manage *manage;
	struct server *server;
	struct metrics *metrics; /* NULL without [metrics] listen */
	struct rtkit *rtkit;     /* NULL without [rtkit] enable */
	struct metrics_reloads reloads;
	struct irqnoise *irqnoise; /* live machine only */
};

static void daemon_usage(FILE *out)
{
	fprintf(out,
		"Usage: rtplaced [OPTION]...\n"
		"Real-time task placement daemon: tracks each CPU's priority level with BPF\n"
		"(or, where BPF cannot load, samples it from /proc) and answers placement\n"
		"queries on a UNIX socket. Runs in the foreground.\n"
		"\n"
		"  -c, --config=FILE      read FILE instead of %s\n"
		"                         (the default file is optional; a given one is not)\n"
		"  -s, --socket=PATH      listen on PATH, absolute and at most %d bytes\n"
		"                         (overrides [daemon] socket)\n"
		"  -t, --topology=FILE    simulate the machine described by an hwloc XML FILE:\n"
		"                         no BPF is loaded, every CPU of FILE starts idle and\n"
		"                         only claims change levels (tests, capacity planning)\n"
		"      --host-root=DIR    read the host's RT configuration (isolated and\n"
		"                         nohz_full CPUs, RT throttling) from DIR/sys and\n"
		"                         DIR/proc instead of /sys and /proc (tests)\n"
		"  -n, --check-config     validate the configuration, print every error as\n"
		"                         file:line: message, and exit\n"
		"  -h, --help             show this help and exit\n"
		"  -V, --version          show the version and exit\n"
		"\n"
		"Signals: SIGTERM/SIGINT stop; SIGHUP reloads the configuration (a bad file\n"
		"keeps the running configuration and logs why).\n"
		"Exit status: 0 on success, 64 on bad usage, 78 on a configuration error,\n"
		"and, with [tracker] required = yes, 69 when the kernel lacks what the\n"
		"tracker needs, 77 without the privilege to load BPF (run as root); 1 on\n"
		"other failures.\n"
		"See rtplaced(8) and rtplaced.conf(5).\n",
		CONFIG_DEFAULT_PATH, CONFIG_SOCKET_MAX - 1);
}

enum {
	EXIT_USAGE = 64,
	EXIT_UNAVAILABLE = 69,
	EXIT_NOPERM = 77,
	EXIT_CONFIG = 78,
};

static int daemon_parse_args(int argc, char **argv, struct daemon_args *ret)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },   { "socket", required_argument, NULL, 's' },
		{ "topology", required_argument, NULL, 't' }, { "check-config", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },           { "version", no_argument, NULL, 'V' },
		{ "host-root", required_argument, NULL, 'H' }, { NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:s:t:nhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			ret->config_path = optarg;
			break;
		case 's':
			/* Checked here, as [daemon] socket is: copied into the
			 * configuration, a longer path would be cut, and a
			 * relative one would follow the working directory. */
			if (optarg[0] != '/') {
				fprintf(stderr, "rtplaced: --socket %s: not an absolute path\n", optarg);
				return -EINVAL;
			}
			if (strlen(optarg) >= CONFIG_SOCKET_MAX) {
				fprintf(stderr,
					"rtplaced: --socket: the path has %zu bytes; a UNIX socket path holds at most "
					"%d\n",
					strlen(optarg), CONFIG_SOCKET_MAX - 1);
				return -ENAMETOOLONG;
			}
			ret->socket_path = optarg;
			break;
		case 't':
			ret->topology_path = optarg;
			break;
		case 'H':
			ret->host_root = optarg;
			break;
		case 'n':
			ret->check_config = true;
			break;
		case 'h':
			daemon_usage(stdout);
			exit(EXIT_SUCCESS);
		case 'V':
			printf("rtplaced %s\n", PACKAGE_VERSION);
			exit(EXIT_SUCCESS);
		default:
			fprintf(stderr, "Try 'rtplaced --help' for more information.\n");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rtplaced: unexpected argument '%s'\nTry 'rtplaced --help' for more information.\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void daemon_config_error_cb(void *userdata, const char *message)
{
	bool *to_stderr = userdata;

	if (*to_stderr)
		fprintf(stderr, "%s\n", message);
	else
		log_error("%s", message);
}

/*
 * Loads the configuration into ret (defaults when the default file is
 * absent: *ret_defaulted says so, may be NULL). Reports every error; ret
 * is untouched on failure.
 */
static int daemon_load_config(const struct daemon_args *args, bool to_stderr, struct config *ret,
			      bool *ret_defaulted)
{
	struct rtplace_reason reason;
	struct config cfg;
	bool defaulted;
	int r = config_load_default(args->config_path, &reason, &cfg, daemon_config_error_cb, &to_stderr, &defaulted);

	if (r < 0 && r != -EINVAL)
		daemon_config_error_cb(&to_stderr, reason.text);
	if (r < 0)
		return r;
	if (args->socket_path)
		snprintf(cfg.daemon.socket, sizeof(cfg.daemon.socket), "%s", args->socket_path);
	if (args->topology_path)
		snprintf(cfg.topology.file, sizeof(cfg.topology.file), "%s", args->topology_path);
	*ret = cfg;
	if (ret_defaulted)
		*ret_defaulted = defaulted;
	return 0;
}

/*
 * Reads the host's RT configuration (DESIGN §20) into placement: at start,
 * reload and hotplug (a partition's CPUs, like the online list, follow
 * hotplug). Garbage keeps what was read before, and says so; a file that
 * is missing is an empty set.
 */
static void daemon_read_host(struct daemon *d)
{
	char sysfs[4096], proc[4096], iso[256], nohz[256];
	struct dispatch_host h = *dispatch_get_host(d->dispatch);
	struct rtplace_reason reason;
	int r;

	snprintf(sysfs, sizeof(sysfs), "%s%s", d->args.host_root ? d->args.host_root : "", SYSFS_ROOT);
	snprintf(proc, sizeof(proc), "%s%s", d->args.host_root ? d->args.host_root : "", PROCFS_ROOT);
	r = sysfs_read_isolation(sysfs, &reason, &h.iso);
	if (r < 0)
		log_error("Failed to read the isolated CPUs: %s; keeping the last ones read", reason.text);
	r = procfs_read_rt_throttle(proc, &h.rt);
	h.rt_known = r == 0 || (h.rt_known && r != -ENOENT);
	if (r < 0 && r != -ENOENT)
		log_error("Failed to read kernel.sched_rt_runtime_us/sched_rt_period_us under %s/sys: %s%s", proc,
			  strerror(-r), h.rt_known ? "; keeping the last values read" : "");
	dispatch_set_host(d->dispatch, &h);
	cpuset_format(&h.iso.isolated, iso, sizeof(iso));
	cpuset_format(&h.iso.nohz_full, nohz, sizeof(nohz));
	log_info("Host: isolated CPUs %s, nohz_full CPUs %s, RT throttling %s", iso[0] ? iso : "none",
		 nohz[0] ? nohz : "none",
		 !h.rt_known ? "unknown" : h.rt.runtime_us < 0 ? "off" : "on");
	if (h.rt_known && h.rt.runtime_us >= 0)
		log_info("RT tasks may run %lld us of every %lld us per CPU (kernel.sched_rt_runtime_us)",
			 (long long)h.rt.runtime_us, (long long)h.rt.period_us);
}

/* Root's subscriptions are bounded by its connections (and the daemon's
 * descriptors: two each), not by a share. */
static void daemon_subscriber_limits(const struct config *cfg, struct quota_limits *ret)
{
	*ret = (struct quota_limits){
		.size = UINT32_MAX,
		.users = cfg->limits.max_subscribers,
		.per_user = cfg->limits.max_subscribers_per_user,
		.users_key = "max-subscribers",
		.per_user_key = "max-subscribers-per-user",
	};
}

/* The records, MOVE requests, pushes and managed processes: notify.c,
 * moves.c, push.c and manage.c, wired to each other by direct calls, over
 * what the dispatch shares, and handed to it. */
static int daemon_moves_new(struct daemon *d, const struct dispatch_opts *opts, const struct config *cfg)
{
	struct dispatch_shared sh;
	struct dispatch_moves dm;
	struct moves_opts mo;
	struct push_opts po;
	struct manage_opts mgo;
	struct quota_limits subscribers;
	int r;

	dispatch_get_shared(d->dispatch, &sh);
	mo = (struct moves_opts){
		.topo = d->topo,
		.view = sh.view,
		.pcfg = sh.pcfg,
		.placement = sh.placement,
		.live = opts->tracker || opts->sampler,
		.proc_root = opts->proc_root,
		.policy = sh.policy,
	};
	po = (struct push_opts){ .view = sh.view, .claims = sh.claims };
	mgo = (struct manage_opts){
		.base = opts->base,
		.topo = d->topo,
		.view = sh.view,
		.pcfg = sh.pcfg,
		.tracker = opts->tracker,
		.proc_root = opts->proc_root,
	};

	daemon_subscriber_limits(cfg, &subscribers);
	r = notify_new(cfg->notify.ring_records, &subscribers, &d->notify);
	if (r < 0)
		return r;
	/* Subscribers see every claim made and ended, with its id. */
	claims_watch_life(sh.claims, notify_claim_life, d->notify);
	mo.notify = po.notify = mgo.notify = d->notify;
	r = moves_new(&mo, &d->moves);
	if (r < 0)
		return r;
	po.moves = d->moves;
	r = push_new(&po, cfg, &d->push);
	if (r < 0)
		return r;
	mgo.push = d->push;
	r = manage_new(&mgo, cfg, &d->manage);
	if (r < 0)
		return r;
	dm = (struct dispatch_moves){ .notify = d->notify, .moves = d->moves, .push = d->push, .manage = d->manage };
	dispatch_attach_moves(d->dispatch, &dm);
	return 0;
}

/* Takes a reloaded configuration's limits and rules into the modules of
 * daemon_moves_new(). */
static void daemon_moves_apply_config(struct daemon *d, const struct config *cfg)
{
	struct quota_limits subscribers;

	daemon_subscriber_limits(cfg, &subscribers);
	notify_set_limits(d->notify, &subscribers);
	push_apply_config(d->push, cfg);
	manage_apply_config(d->manage, cfg);
}

/* The restored MANAGE claims' owners are managed again, on the terms
 * their claims were made with. */
static void daemon_restore_managed(struct daemon *d)
{
	struct dispatch_shared sh;
	const struct claim *cl;

	dispatch_get_shared(d->dispatch, &sh);
	for (unsigned i = 0; (cl = claims_at(sh.claims, i)); i++) {
		struct rtplace_reason note = { .text = "" };
		int r;

		if (!cl->pid || cpuset_empty(&cl->managed))
			continue;
		r = manage_process(d->manage, cl->pid, cl->uid, &cl->managed, &note);
		if (r < 0 && r != -EOPNOTSUPP)
			log_warning("restored claim %u: cannot manage pid %d again: %s", cl->id, (int)cl->pid,
				    strerror(-r));
		else if (note.text[0])
			log_info("restored claim %u: pid %d: %s", cl->id, (int)cl->pid, note.text);
	}
}

static void daemon_stop_cb(int signo, void *ctx)
{
	struct daemon *d = ctx;

	log_notice("Received %s, stopping", strsignal(signo));
	systemd_stopping();
	loop_stop(d->loop);
}

static void daemon_reload_cb(int signo, void *ctx)
{
	struct daemon *d = ctx;
	struct server_limits limits;
	struct config cfg;
	const char *key;

	systemd_reloading();
	if (daemon_load_config(&d->args, false, &cfg, NULL) < 0) {
		log_error("Reload failed; keeping the running configuration");
		d->reloads.refused++;
		d->reloads.last_ok = false;
		systemd_ready();
		return;
	}
	key = config_restart_key(&d->cfg, &cfg);
	if (key)
		log_warning("Reload: %s changed; it takes effect at the next restart", key);
	d->cfg = cfg;
	log_set_level(cfg.daemon.log_level);
	dispatch_apply_config(d->dispatch, &cfg);
	daemon_moves_apply_config(d, &cfg);
	rtkit_apply_config(d->rtkit, &cfg);
	daemon_read_host(d);
	dispatch_server_limits(&cfg, &limits);
	server_set_limits(d->server, &limits);
	log_info("Configuration reloaded");
	d->reloads.applied++;
	d->reloads.last_ok = true;
	systemd_ready();
}

static void daemon_watchdog_cb(void *ctx)
{
	systemd_watchdog();
}

/*
 * CPUs came online that the topology has never seen (offline when it was
 * loaded): load it again so that placement knows their node, LLC and core.
 * The new snapshot replaces the old one in place, every holder of the
 * pointer sees it, and what is derived from it (placement) is rebuilt
 * before the loop runs anything else. CPUs offline now drop out of the new
 * snapshot until they return; their map level says offline meanwhile.
 */
static void daemon_topology_refresh(struct daemon *d)
{
	struct rtplace_reason reason;
	struct topo *fresh, old;
	int r = topo_load(NULL, &reason, &fresh);

	if (r < 0) {
		log_error("Failed to reload the topology: %s; new CPUs stay unmanaged", reason.text);
		return;
	}
	if (fresh->ncpus != d->topo->ncpus) {
		log_warning("CPU ids now reach %u, the map holds %u; restart rtplaced to manage the rest",
			    fresh->ncpus, d->topo->ncpus);
		topo_free(fresh);
		return;
	}
	old = *d->topo;
	*d->topo = *fresh;
	*fresh = old;
	topo_free(fresh);
	dispatch_apply_config(d->dispatch, &d->cfg);
	log_info("Topology reloaded: %u CPUs known of %u, %u NUMA nodes, %u LLCs, %u cores",
		 cpuset_count(&d->topo->online), d->topo->ncpus, d->topo->nnodes, d->topo->nllcs, d->topo->ncores);
}

static void daemon_hotplug_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	struct rtplace_cpumask gone, came;
	char list[256];
	bool lost;
	int r = hotplug_consume(d->hotplug, &gone, &came, &lost);

	if (r < 0)
		log_warning("Failed to read the online CPUs: %s", strerror(-r));
	if (r <= 0)
		return;
	/* After an overflow, one line for it, not a false "went offline"
	 * and "came online" for every CPU it makes count as bounced. */
	if (lost) {
		cpuset_format(&gone, list, sizeof(list));
		log_warning("CPU uevents were lost (socket overflow): CPUs %s may have gone offline and back unseen, "
			    "ending their claims", list);
	}
	if (!lost && !cpuset_empty(&gone)) {
		cpuset_format(&gone, list, sizeof(list));
		log_notice("CPUs %s went offline", list);
	}
	if (!lost && !cpuset_empty(&came)) {
		cpuset_format(&came, list, sizeof(list));
		log_notice("CPUs %s came online", list);
	}
	CPUSET_FOREACH(cpu, &gone)
		dispatch_revoke_cpu(d->dispatch, (uint32_t)cpu);
	cpuset_andnot(&came, &came, &d->topo->online);
	if (!cpuset_empty(&came))
		daemon_topology_refresh(d);
	daemon_read_host(d);
}

/*
 * Follows CPU hotplug (hotplug.h) on the live machine. Opened before the
 * topology is loaded, so that a CPU coming online meanwhile is announced
 * once the loop runs. Without uevents the map still shows offline CPUs as
 * such, but claims on them stay and CPUs offline at start stay unmanaged:
 * worth a warning, not a failure.
 */
static void daemon_hotplug_open(struct daemon *d)
{
	int r = hotplug_open(SYSFS_ROOT, &d->hotplug);

	if (r < 0)
		log_warning("Not following CPU hotplug: %s", strerror(-r));
}

static int daemon_hotplug_start(struct daemon *d)
{
	if (!d->hotplug)
		return 0;
	d->ev_hotplug = event_new(loop_base(d->loop), hotplug_fd(d->hotplug), EV_READ | EV_PERSIST,
				  daemon_hotplug_cb, d);
	if (!d->ev_hotplug || event_add(d->ev_hotplug, NULL) < 0)
		return -ENOMEM;
	return 0;
}

static void daemon_sample_cb(void *ctx)
{
	struct daemon *d = ctx;
	int r = sampler_sample(d->sampler);

	if (r < 0)
		log_warning_ratelimited("Failed to sample the CPUs' levels from %s: %s; the map keeps the last sample",
					PROCFS_ROOT, strerror(-r));
}

static void daemon_irqnoise_cb(void *ctx)
{
	struct daemon *d = ctx;
	int r = irqnoise_sample(d->irqnoise, loop_now_ns());

	if (r < 0)
		log_warning_ratelimited("Failed to read the interrupt time from %s/stat: %s; keeping the last shares",
					PROCFS_ROOT, strerror(-r));
	else
		dispatch_irqnoise_sampled(d->dispatch);
}

/* The interrupt shares (irqnoise.h), sampled every [placement]
 * irq-window-ms from the first sample on. */
static int daemon_irqnoise_start(struct daemon *d, struct dispatch_opts *o)
{
	long tick = sysconf(_SC_CLK_TCK);
	int r;

	if (tick <= 0)
		tick = 100;
	r = irqnoise_new(d->topo->ncpus, 1000000000u / (uint64_t)tick, PROCFS_ROOT, &d->irqnoise);
	if (r == 0)
		r = irqnoise_sample(d->irqnoise, loop_now_ns());
	if (r < 0) {
		log_error("Failed to read the interrupt time from %s/stat: %s", PROCFS_ROOT, strerror(-r));
		return r;
	}
	if (loop_every(d->loop, (uint64_t)d->cfg.placement.irq_window_ms * 1000, daemon_irqnoise_cb, d) < 0)
		return -ENOMEM;
	o->irqnoise = d->irqnoise;
	return 0;
}

/*
 * The map's source on the live machine: the BPF tracker, or where it cannot
 * load (and [tracker] required = no) or is not wanted (mode = sampled), the
 * /proc sampler on the loop's timer. Returns an exit status.
 */
static int daemon_track(struct daemon *d, struct dispatch_opts *o)
{
	const struct config_tracker *tc = &d->cfg.tracker;
	struct rtplace_reason said; /* what libbpf said, logged beside the reason */
	struct sampler_stats st;
	int r;

	if (tc->mode == CONFIG_TRACKER_AUTO) {
		systemd_status("Loading BPF tracker");
		r = tracker_open(d->topo, d->cfg.topology.shard, &d->untracked, &said, &d->tracker);
		if (r == 0) {
			o->map = tracker_map(d->tracker, &o->map_size);
			o->map_fd = tracker_map_ro_fd(d->tracker);
			if (o->map_fd < 0)
				log_notice("No descriptor of the cpupri map to hand out: no local reads");
			o->tracker = d->tracker;
			return EXIT_SUCCESS;
		}
		if (tc->required) {
			log_error("Failed to start the BPF tracker: %s%s%s%s", d->untracked.text, said.text[0] ? " (" : "",
				  said.text, said.text[0] ? ")" : "");
			return r == -EPERM || r == -EACCES ? EXIT_NOPERM : EXIT_UNAVAILABLE;
		}
		log_warning("Failed to start the BPF tracker: %s%s%s%s", d->untracked.text, said.text[0] ? " (" : "",
			    said.text, said.text[0] ? ")" : "");
	} else {
		reason_set(&d->untracked, "[tracker] mode = sampled");
	}
	r = sampler_new(d->topo, d->cfg.topology.shard, PROCFS_ROOT, SYSFS_ROOT, &d->sampler);
	if (r < 0) {
		log_error("Failed to sample the CPUs' levels from %s: %s", PROCFS_ROOT, strerror(-r));
		return EXIT_FAILURE;
	}
	if (loop_every(d->loop, (uint64_t)tc->sample_interval_ms * 1000, daemon_sample_cb, d) < 0)
		return EXIT_FAILURE;
	sampler_get_stats(d->sampler, &st);
	log_notice("Tracking: sampled from %s every %u ms, not live (%s); a sample took %.3f ms of CPU",
		   PROCFS_ROOT, tc->sample_interval_ms, d->untracked.text, (double)st.last_ns / 1e6);
	/* A sample reads every thread's stat file (~12 us each measured,
	 * rtplaced(8)): on a machine with many threads a short interval
	 * costs a large share of a CPU. */
	if (st.last_ns * 10 > (uint64_t)tc->sample_interval_ms * 1000000)
		log_warning("Sampling costs %.0f%% of a CPU every %u ms; raise [tracker] sample-interval-ms",
			    (double)st.last_ns / ((double)tc->sample_interval_ms * 1e4), tc->sample_interval_ms);
	if (d->cfg.moves.n_manage_comm || d->cfg.moves.n_manage_uid || d->cfg.moves.n_manage_cgroup)
		log_warning("[moves] manage-* rules need the BPF tracker; no process is managed");
	o->map = sampler_map(d->sampler, &o->map_size);
	o->sampler = d->sampler;
	o->sample_interval_ms = tc->sample_interval_ms;
	o->untracked = &d->untracked;
	return EXIT_SUCCESS;
}

/* A map for a machine we do not run on: every online CPU idle, for claims
 * and placement to act on (--topology). A sealed memfd, so that clients
 * read it locally as they read the BPF map. */
static int daemon_sim_map(struct daemon *d)
{
	__u16 *shard_of = calloc(d->topo->ncpus, sizeof(*shard_of));
	struct cpupri_geom g;
	int r = shard_of ? cpupri_geom_for_topo(d->topo, d->cfg.topology.shard, shard_of, &g) : -ENOMEM;

	if (r == 0)
		r = snapshot_region_new("rtplace-map", g.size, &d->sim_region);
	if (r == 0) {
		d->sim_map = d->sim_region.map;
		d->sim_map_size = g.size;
		cpupri_init(d->sim_map, &g, shard_of);
		cpupri_set_online_idle(d->sim_map, &g, d->topo);
	}
	free(shard_of);
	return r;
}

static int daemon_socket_gid(const struct config *cfg, gid_t *ret)
{
	struct group *gr;

	*ret = (gid_t)-1;
	if (!cfg->daemon.socket_group[0])
		return 0;
	gr = getgrnam(cfg->daemon.socket_group);
	if (!gr) {
		log_error("[daemon] socket-group: no group named '%s' (create it, e.g. with systemd-sysusers)",
			  cfg->daemon.socket_group);
		return -ENOENT;
	}
	*ret = gr->gr_gid;
	return 0;
}

/* Creates the socket's folder when it is the default one under /run (the
 * service unit's RuntimeDirectory does it under systemd). */
static int daemon_socket_dir(const char *path)
{
	char dir[CONFIG_SOCKET_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		log_error("Failed to create %s: %m", dir);
		return -errno;
	}
	return 0;
}

static int daemon_start(struct daemon *d)
{
	struct dispatch_opts sopts = { .proc_root = PROCFS_ROOT, .map_fd = -1 };
	struct server_socket_opts sock = { .path = d->cfg.daemon.socket, .mode = d->cfg.daemon.socket_mode };
	struct server_limits limits;
	const char *file = d->cfg.topology.file[0] ? d->cfg.topology.file : NULL;
	struct rtplace_reason reason;
	int r;

	if (!file)
		daemon_hotplug_open(d);
	r = topo_load(file, &reason, &d->topo);
	if (r < 0) {
		log_error("Failed to load the topology: %s", reason.text);
		return EXIT_FAILURE;
	}
	/* hwloc's parse peaks far above what the daemon keeps (36 MB for an
	 * 8,192-CPU machine's 5 MB of XML, all freed by now): give the heap
	 * back rather than carry it for the daemon's life. */
	malloc_trim(0);
	log_info("Topology%s%s: %u CPUs online of %u, %u NUMA nodes, %u LLCs, %u cores", file ? " from " : "",
		 file ? file : "", cpuset_count(&d->topo->online), d->topo->ncpus, d->topo->nnodes, d->topo->nllcs,
		 d->topo->ncores);
	r = loop_new(&d->loop);
	if (r < 0)
		return EXIT_FAILURE;
	sopts.base = loop_base(d->loop);
	sopts.topo = d->topo;
	if (file) {
		r = daemon_sim_map(d);
		if (r < 0) {
			log_error("Failed to build the simulated map: %s", strerror(-r));
			return EXIT_FAILURE;
		}
		log_notice("Simulating %s: BPF tracking is off, every CPU starts idle", file);
		sopts.map = d->sim_map;
		sopts.map_size = d->sim_map_size;
		sopts.map_fd = d->sim_region.ro_fd;
	} else {
		r = daemon_track(d, &sopts);
		if (r != EXIT_SUCCESS)
			return r;
		if (daemon_irqnoise_start(d, &sopts) < 0)
			return EXIT_FAILURE;
	}
	r = dispatch_new(&sopts, &d->cfg, &d->dispatch);
	if (r == 0)
		r = daemon_moves_new(d, &sopts, &d->cfg);
	if (r < 0) {
		log_error("Failed to set up the request handlers: %s", strerror(-r));
		return EXIT_FAILURE;
	}
	daemon_restore_managed(d);
	sock.inherited_fd = systemd_listen_fd();
	if (sock.inherited_fd == -EINVAL)
		return EXIT_FAILURE;
	if (sock.inherited_fd < 0) {
		if (daemon_socket_gid(&d->cfg, &sock.gid) < 0 || daemon_socket_dir(sock.path) < 0)
			return EXIT_CONFIG;
	} else {
		log_info("Using the listening socket passed by systemd");
	}
	dispatch_server_limits(&d->cfg, &limits);
	r = server_new(sopts.base, &sock, &limits, dispatch_request_cb, d->dispatch, &d->server);
	if (r < 0) {
		log_error("Failed to listen on %s: %s", sock.path, strerror(-r));
		return EXIT_FAILURE;
	}
	dispatch_attach_server(d->dispatch, d->server);
	daemon_read_host(d);
	if (daemon_hotplug_start(d) < 0)
		return EXIT_FAILURE;
	if (d->cfg.rtkit.enable) {
		struct rtkit_opts ropts = {
			.base = sopts.base, .dispatch = d->dispatch, .notify = d->notify, .proc_root = PROCFS_ROOT,
		};

		if (rtkit_new(&ropts, &d->cfg, &d->rtkit) < 0)
			return EXIT_FAILURE;
	}
	if (d->cfg.metrics.port) {
		struct metrics_opts mopts = {
			.base = sopts.base,
			.topo = d->topo,
			.map = sopts.map,
			.map_size = sopts.map_size,
			.dispatch = d->dispatch,
			.tracker = d->tracker,
			.sampler = d->sampler,
			.sample_interval_ms = sopts.sample_interval_ms,
			.untracked = sopts.untracked,
			.rtkit = d->rtkit,
			.reloads = &d->reloads,
			.irqnoise = d->irqnoise,
		};

		if (metrics_new(&mopts, &d->cfg.metrics, &d->metrics) < 0)
			return EXIT_FAILURE;
	}
	if (loop_on_signal(d->loop, SIGTERM, daemon_stop_cb, d) < 0 ||
	    loop_on_signal(d->loop, SIGINT, daemon_stop_cb, d) < 0 ||
	    loop_on_signal(d->loop, SIGHUP, daemon_reload_cb, d) < 0)
		return EXIT_FAILURE;
	if (systemd_watchdog_usec() && loop_every(d->loop, systemd_watchdog_usec() / 2, daemon_watchdog_cb, d) < 0)
		return EXIT_FAILURE;
	log_notice("rtplaced %s listening on %s", PACKAGE_VERSION,
		   sock.inherited_fd >= 0 ? "the socket passed by systemd" : sock.path);
	systemd_ready();
	return EXIT_SUCCESS;
}

static void daemon_stop(struct daemon *d)
{
	sigset_t stop;

	/* Freeing the loop gives SIGTERM and SIGINT back their default
	 * action: a second one while the daemon tears down (systemd's, a
	 * script's) would kill it there; held, it dies with the process. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	metrics_free(d->metrics);
	rtkit_free(d->rtkit);
	server_free(d->server);
	if (d->ev_hotplug)
		event_free(d->ev_hotplug);
	hotplug_close(d->hotplug);
	manage_free(d->manage);
	push_free(d->push);
	moves_free(d->moves);
	notify_free(d->notify);
	dispatch_free(d->dispatch);
	tracker_close(d->tracker);
	sampler_free(d->sampler);
	irqnoise_free(d->irqnoise);
	snapshot_region_free(&d->sim_region);
	loop_free(d->loop);
	topo_free(d->topo);
}

int main(int argc, char **argv)
{
	struct daemon d = { .reloads.last_ok = true };
	bool defaulted;
	int status;

	if (daemon_parse_args(argc, argv, &d.args) < 0)
		return EXIT_USAGE;
	if (d.args.check_config) {
		const char *path = d.args.config_path ? d.args.config_path : CONFIG_DEFAULT_PATH;

		if (daemon_load_config(&d.args, true, &d.cfg, &defaulted) < 0)
			return EXIT_CONFIG;
		if (defaulted)
			printf("no configuration file at %s; the built-in defaults apply\n", path);
		else
			printf("%s: configuration is valid\n", path);
		return EXIT_SUCCESS;
	}
	if (daemon_load_config(&d.args, false, &d.cfg, &defaulted) < 0)
		return EXIT_CONFIG;
	log_set_level(d.cfg.daemon.log_level);
	log_set_clock(loop_now_ms);
	if (defaulted)
		log_info("No configuration file at %s; the built-in defaults apply", CONFIG_DEFAULT_PATH);
	/* A client that vanishes mid-reply must not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);
	status = daemon_start(&d);
	if (status == EXIT_SUCCESS && loop_run(d.loop) < 0)
		status = EXIT_FAILURE;
	daemon_stop(&d);
	return status;
}
