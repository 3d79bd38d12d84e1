/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtplaced: arguments, configuration, start-up order and shutdown. The
 * modules are built bottom-up, each over those below it and none attached
 * afterwards: levels source -> engine -> actors -> dispatch -> server,
 * with RealtimeKit and the metrics over the engine. Start-up follows what
 * READY=1 promises: configuration, topology, tracker attached (the map is
 * live) or its first sample taken, socket listening, then READY.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actors.h"
#include "conf.h"
#include "dispatch.h"
#include "engine.h"
#include "irqnoise.h"
#include "levels-source.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "procfs.h"
#include "rtkit.h"
#include "server.h"
#include "systemd.h"

struct daemon_args {
	const char *config_path; /* NULL: the default path, optional */
	const char *socket_path;
	const char *topology_path;
	const char *host_root; /* NULL: the host's own /sys and /proc */
	bool check_config;
	bool serves_rtkit;
};

/* The daemon's modules, in the order they are built (DESIGN §8): each
 * over the ones before it, freed in reverse. */
struct daemon {
	struct daemon_args args;
	struct config cfg;
	struct loop *loop;
	struct levels_source *levels;
	struct irqnoise *irqnoise; /* live machine only */
	struct engine *engine;
	struct actors actors;
	struct dispatch *dispatch;
	struct server *server;
	struct rtkit *rtkit;     /* NULL without [rtkit] enable */
	struct metrics *metrics; /* NULL without [metrics] listen */
	struct metrics_reloads reloads;
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
		"      --serves-rtkit     exit 0 if the configuration enables [rtkit], 1 if not\n"
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
		{ "host-root", required_argument, NULL, 'H' }, { "serves-rtkit", no_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
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
		case 'K':
			ret->serves_rtkit = true;
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

/* Where the configuration's errors go: stderr (--check-config) or the
 * log, and the first of them into first when set (a reload's reason). */
struct daemon_config_errors {
	bool to_stderr;
	struct rtplace_reason *first;
};

static void daemon_config_error_cb(void *userdata, const char *message)
{
	struct daemon_config_errors *errs = userdata;

	if (errs->to_stderr)
		fprintf(stderr, "%s\n", message);
	else
		log_error("%s", message);
	if (errs->first && !errs->first->text[0])
		reason_set(errs->first, "%s", message);
}

/*
 * Loads the configuration into ret (defaults when the default file is
 * absent: *ret_defaulted says so, may be NULL). Reports every error; ret
 * is untouched on failure.
 */
static int daemon_load_config(const struct daemon_args *args, struct daemon_config_errors *errs, struct config *ret,
			      bool *ret_defaulted)
{
	struct rtplace_reason reason;
	struct config cfg;
	bool defaulted;
	int r = config_load_default(args->config_path, &reason, &cfg, daemon_config_error_cb, errs, &defaulted);

	if (r < 0 && r != -EINVAL)
		daemon_config_error_cb(errs, reason.text);
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

static void daemon_stop_cb(int signo, void *ctx)
{
	struct daemon *d = ctx;

	log_notice("Received %s, stopping", strsignal(signo));
	systemd_stopping();
	loop_stop(d->loop);
}

/*
 * Reads the configuration file again and applies it whole, or keeps the
 * running one: when the file does not load, or when the engine refuses it
 * (engine_check_config(): what only the running daemon can tell). 0, or
 * -errno with why (the file's first error). RELOADING=1 and READY=1
 * bracket it either way: the daemon serves on, in one configuration.
 */
static int daemon_reload(void *ctx, struct rtplace_reason *reason)
{
	struct daemon *d = ctx;
	struct daemon_config_errors errs = { .first = reason };
	struct server_limits limits;
	struct config cfg;
	const char *key;
	int r;

	reason->text[0] = '\0';
	systemd_reloading();
	r = daemon_load_config(&d->args, &errs, &cfg, NULL);
	if (r == 0)
		r = engine_check_config(d->engine, &cfg, reason);
	if (r < 0) {
		log_error("Reload failed: %s; keeping the running configuration", reason->text);
		d->reloads.refused++;
		d->reloads.last_ok = false;
		systemd_ready();
		return r;
	}
	key = config_restart_key(&d->cfg, &cfg);
	if (key)
		log_warning("Reload: %s changed; it takes effect at the next restart", key);
	d->cfg = cfg;
	log_set_level(cfg.daemon.log_level);
	engine_configure(d->engine, &cfg);
	actors_apply_config(&d->actors, &cfg);
	rtkit_apply_config(d->rtkit, &cfg);
	engine_read_host(d->engine);
	dispatch_server_limits(&cfg, &limits);
	server_set_limits(d->server, &limits);
	log_info("Configuration reloaded");
	d->reloads.applied++;
	d->reloads.last_ok = true;
	systemd_ready();
	return 0;
}

/* SIGHUP: a reload whose verdict only the log and the metrics hear
 * (RELOAD, rtplacectl reload, tells its caller). */
static void daemon_reload_cb(int signo, void *ctx)
{
	struct rtplace_reason reason;

	daemon_reload(ctx, &reason);
}

static void daemon_watchdog_cb(void *ctx)
{
	systemd_watchdog();
}

static void daemon_kernel_env_cb(void *ctx)
{
	struct daemon *d = ctx;

	engine_refresh_kernel_env(d->engine);
}

static void daemon_irqnoise_cb(void *ctx)
{
	struct daemon *d = ctx;
	int r = irqnoise_sample(d->irqnoise, loop_now_ns());

	if (r < 0)
		log_warning_ratelimited("Failed to read the interrupt time from %s/stat: %s; keeping the last shares",
					PROCFS_ROOT, strerror(-r));
	else
		engine_irqnoise_sampled(d->engine);
}

/* The interrupt shares (irqnoise.h), sampled every [placement]
 * irq-window-ms from the first sample on, on the live machine. */
static int daemon_irqnoise_start(struct daemon *d)
{
	long tick = sysconf(_SC_CLK_TCK);
	int r;

	if (!levels_source_live(d->levels))
		return 0;
	if (tick <= 0)
		tick = 100;
	r = irqnoise_new(levels_source_topo(d->levels)->ncpus, 1000000000u / (uint64_t)tick, PROCFS_ROOT,
			 &d->irqnoise);
	if (r == 0)
		r = irqnoise_sample(d->irqnoise, loop_now_ns());
	if (r < 0) {
		log_error("Failed to read the interrupt time from %s/stat: %s", PROCFS_ROOT, strerror(-r));
		return r;
	}
	return loop_every(d->loop, (uint64_t)d->cfg.placement.irq_window_ms * 1000, daemon_irqnoise_cb, d);
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

/* The levels source, the engine over it, the actors and the request
 * handlers over both: everything that answers, before anything listens.
 * Returns an exit status. */
static int daemon_build(struct daemon *d)
{
	struct engine_opts eopts = {
		.base = loop_base(d->loop),
		.proc_root = PROCFS_ROOT,
		.host_root = d->args.host_root,
	};
	int status = EXIT_FAILURE;
	int r = levels_source_open(d->loop, &d->cfg, &d->levels, &status);

	if (r < 0)
		return status;
	if (daemon_irqnoise_start(d) < 0)
		return EXIT_FAILURE;
	eopts.levels = d->levels;
	eopts.irqnoise = d->irqnoise;
	r = engine_new(&eopts, &d->cfg, &d->engine);
	if (r == 0)
		r = actors_new(d->engine, loop_base(d->loop), &d->cfg, &d->actors);
	if (r == 0)
		r = dispatch_new(d->engine, &d->actors, daemon_reload, d, &d->dispatch);
	if (r < 0) {
		log_error("Failed to set up the request handlers: %s", strerror(-r));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

/* The socket: systemd's, or made at [daemon] socket. Then the claims
 * journal, which is written only once the socket is ours. Returns an exit
 * status. */
static int daemon_listen(struct daemon *d)
{
	struct server_socket_opts sock = { .path = d->cfg.daemon.socket, .mode = d->cfg.daemon.socket_mode };
	struct server_limits limits;
	int r;

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
	r = server_new(loop_base(d->loop), &sock, &limits, dispatch_request_cb, d->dispatch, &d->server);
	if (r < 0) {
		log_error("Failed to listen on %s: %s", sock.path, strerror(-r));
		return EXIT_FAILURE;
	}
	r = engine_open_journal(d->engine);
	if (r < 0) {
		log_error("Failed to open the claims state beside %s: %s", sock.path, strerror(-r));
		return EXIT_FAILURE;
	}
	log_notice("rtplaced %s listening on %s", PACKAGE_VERSION,
		   sock.inherited_fd >= 0 ? "the socket passed by systemd" : sock.path);
	return EXIT_SUCCESS;
}

/* The front ends beside the socket: RealtimeKit and the metrics, over the
 * engine. */
static int daemon_peers(struct daemon *d)
{
	if (d->cfg.rtkit.enable) {
		struct rtkit_opts ropts = {
			.base = loop_base(d->loop),
			.engine = d->engine,
			.notify = d->actors.notify,
			.proc_root = PROCFS_ROOT,
		};

		if (rtkit_new(&ropts, &d->cfg, &d->rtkit) < 0)
			return -ENOMEM;
	}
	if (d->cfg.metrics.port) {
		struct metrics_opts mopts = {
			.base = loop_base(d->loop),
			.engine = d->engine,
			.actors = &d->actors,
			.server = d->server,
			.rtkit = d->rtkit,
			.reloads = &d->reloads,
		};

		if (metrics_new(&mopts, &d->cfg.metrics, &d->metrics) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Start-up follows what READY=1 promises (DESIGN §8): the levels source
 * live, every module built, the socket listening. Returns an exit
 * status. */
static int daemon_start(struct daemon *d)
{
	int status;

	server_raise_fd_limit();
	if (loop_new(&d->loop) < 0)
		return EXIT_FAILURE;
	status = daemon_build(d);
	if (status == EXIT_SUCCESS)
		status = daemon_listen(d);
	if (status != EXIT_SUCCESS)
		return status;
	engine_read_host(d->engine);
	/* Nothing tells the daemon when a sched_ext scheduler comes or goes. */
	if (loop_every(d->loop, KERNEL_ENV_REFRESH_USEC, daemon_kernel_env_cb, d) < 0)
		return EXIT_FAILURE;
	if (daemon_peers(d) < 0)
		return EXIT_FAILURE;
	if (loop_on_signal(d->loop, SIGTERM, daemon_stop_cb, d) < 0 ||
	    loop_on_signal(d->loop, SIGINT, daemon_stop_cb, d) < 0 ||
	    loop_on_signal(d->loop, SIGHUP, daemon_reload_cb, d) < 0)
		return EXIT_FAILURE;
	if (systemd_watchdog_usec() && loop_every(d->loop, systemd_watchdog_usec() / 2, daemon_watchdog_cb, d) < 0)
		return EXIT_FAILURE;
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
	/* While subscribers are connected to hear it. */
	if (d->engine)
		engine_unisolate_all(d->engine);
	metrics_free(d->metrics);
	rtkit_free(d->rtkit);
	server_free(d->server);
	dispatch_free(d->dispatch);
	actors_free(&d->actors);
	engine_free(d->engine);
	irqnoise_free(d->irqnoise);
	levels_source_close(d->levels);
	loop_free(d->loop);
}

/*
 * What --check-config can tell beyond the file itself, as the daemon would
 * find it at start: the socket's folder (server_dir_verdict(); a missing
 * one is created at start only under a folder that exists) and the socket
 * group. Prints every problem; -EINVAL if there was any.
 */
static int daemon_check_environment(const struct config *cfg)
{
	char dir[CONFIG_SOCKET_MAX], parent[CONFIG_SOCKET_MAX];
	const char *sock = cfg->daemon.socket;
	struct rtplace_reason why;
	struct stat st;
	int r = 0;

	snprintf(dir, sizeof(dir), "%s", sock);
	*(strrchr(dir, '/') == dir ? dir + 1 : strrchr(dir, '/')) = '\0';
	snprintf(parent, sizeof(parent), "%s", dir);
	*(strrchr(parent, '/') == parent ? parent + 1 : strrchr(parent, '/')) = '\0';
	if (stat(dir, &st) == 0 && server_dir_verdict(dir, &st, geteuid(), &why) < 0) {
		fprintf(stderr, "[daemon] socket = %s: %s\n", sock, why.text);
		r = -EINVAL;
	} else if (access(dir, F_OK) < 0 && access(parent, F_OK) < 0) {
		fprintf(stderr, "[daemon] socket = %s: neither its folder %s nor %s exists (rtplaced creates only the "
			"socket's own folder)\n", sock, dir, parent);
		r = -EINVAL;
	}
	if (cfg->daemon.socket_group[0] && !getgrnam(cfg->daemon.socket_group)) {
		fprintf(stderr, "[daemon] socket-group = %s: no such group (create it, e.g. with systemd-sysusers)\n",
			cfg->daemon.socket_group);
		r = -EINVAL;
	}
	return r;
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

		if (daemon_load_config(&d.args, &(struct daemon_config_errors){ .to_stderr = true }, &d.cfg, &defaulted) < 0 ||
		    daemon_check_environment(&d.cfg) < 0)
			return EXIT_CONFIG;
		if (defaulted)
			printf("no configuration file at %s; the built-in defaults apply\n", path);
		else
			printf("%s: configuration is valid\n", path);
		return EXIT_SUCCESS;
	}
	/* rtkit-daemon's unit asks this before it starts (rtplaced(8)). */
	if (d.args.serves_rtkit)
		return daemon_load_config(&d.args, &(struct daemon_config_errors){ .to_stderr = true }, &d.cfg, NULL) < 0 ? EXIT_CONFIG : !d.cfg.rtkit.enable;
	if (daemon_load_config(&d.args, &(struct daemon_config_errors){ .to_stderr = false }, &d.cfg, &defaulted) < 0)
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
