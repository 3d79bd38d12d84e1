/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtplace-run: start a program on CPUs that rtplaced chose and claimed for
 * it (DESIGN §8). Asks for the CPUs with a claim tied to its own pid, sets
 * its own affinity and scheduling policy, then execs the program: the
 * program (ffmpeg and every thread it starts) inherits both, and the claim
 * lives exactly as long as the process, because it is the same process. No
 * helper process stays behind; the daemon watches the pid.
 *
 * Without a daemon it warns and chooses locally: the same placement code as
 * the daemon (common/placement.c) over the live topology, under the
 * daemon's own configuration (its file read by the daemon's parser, so
 * housekeeping CPUs and SMT avoidance hold as they would with the daemon),
 * with every CPU taken as idle and the rotation started at the pid, so that
 * unrelated instances spread instead of piling onto one CPU. Nothing is
 * claimed then.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "rtplace.h"

#include "cpupri.h"
#include "cli.h"
#include "holders.h"
#include "conf.h"
#include "cpuset.h"
#include "placement.h"
#include "sysfs.h"
#include "reason.h"
#include "topo.h"

/* As env(1): the command could not be found, or found but not run. */
#define RUN_EXIT_NOT_FOUND 127
#define RUN_EXIT_CANNOT_RUN 126
/* Choices a CPU going offline before the pin may cost: each try drops the
 * CPUs that went, so more tries only follow more hotplug. */
#define RUN_PIN_TRIES 3

struct run_opts {
	int prio;            /* 0: keep the caller's policy */
	int policy;
	/* The RT priority the command will run at (prio, or the one inherited,
	 * as under chrt), 0 for none: what the CPUs are chosen and claimed for. */
	int run_prio;
	int run_policy;
	const char *config;  /* NULL: the default path, absent is fine */
	unsigned count;
	bool have_list;
	cpu_set_t list;
	int node;
	bool exclusive, isolate, isolate_try, manage, strict, verbose;
	bool manage_granted; /* the claim made the daemon manage this process */
	const char *socket;
};

static void run_usage(FILE *f)
{
	fprintf(f, "usage: rtplace-run [--prio P] [--policy fifo|rr] [--cpus N | --cpu-list LIST] [--node N]\n"
		   "                   [--exclusive] [--isolate[-if-possible]] [--manage] [--strict]\n"
		   "                   [--socket PATH] [--config FILE] [--verbose]\n"
		   "                   -- COMMAND [ARGS...]\n\n"
		   "Claims CPUs from rtplaced for as long as COMMAND runs, pins itself to them, sets\n"
		   "SCHED_FIFO/RR priority P (with --prio), then execs COMMAND.\n\n"
		   "  --prio P              RT priority 1..99 (default: keep the policy it was started\n"
		   "                        with, e.g. by chrt; the CPUs are chosen and claimed for it)\n"
		   "  --policy fifo|rr      RT policy for --prio (default fifo)\n"
		   "  --cpus N              how many CPUs (default 1)\n"
		   "  -c, --cpu-list LIST   run on the CPUs of LIST (e.g. 2-5), claimed\n"
		   "  --node N              stay on NUMA node N\n"
		   "  --exclusive           no other query gets these CPUs, whatever its priority\n"
		   "  --isolate             --exclusive, and the daemon isolates the CPUs while COMMAND\n"
		   "                        runs: other tasks, movable interrupts and unbound work\n"
		   "                        leave them, as its [isolation] says (CAP_SYS_NICE; never\n"
		   "                        without a daemon)\n"
		   "  --isolate-if-possible --isolate where the daemon can; where it cannot, the CPUs\n"
		   "                        are claimed without isolation (--verbose says why)\n"
		   "  --manage              let the daemon move COMMAND's threads when they collide:\n"
		   "                        those of COMMAND's own process only, not of processes it\n"
		   "                        starts (a wrapper that forks, such as timeout or a shell\n"
		   "                        running several commands, leaves its program unmanaged)\n"
		   "  --strict              fail (exit 69) instead of choosing locally when no daemon\n"
		   "                        answers, and (exit 75) when fewer CPUs than asked are free\n"
		   "                        (without it: a warning, and COMMAND runs on those found)\n"
		   "  --socket PATH         the daemon's socket (default $" RTPLACE_SOCKET_ENV ",\n"
		   "                        else " RTPLACE_DEFAULT_SOCKET ")\n"
		   "  --config FILE         the daemon's configuration, whose placement rules the\n"
		   "                        local choice follows without a daemon\n"
		   "                        (default " CONFIG_DEFAULT_PATH ")\n"
		   "  -v, --verbose         say which CPUs were chosen\n"
		   "  -h, --help            print this help and exit\n"
		   "  -V, --version         print the version and exit\n");
}

static int run_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line naming the problem and where the help is. */
static int run_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rtplace-run: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'rtplace-run --help'\n");
	return EX_USAGE;
}

/* Is name an executable file, directly or on $PATH? Checked before anything
 * is claimed, so that a typo costs no CPU and exits 127 like env(1). */
static bool run_command_exists(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	struct stat st;

	if (strchr(name, '/'))
		return stat(name, &st) == 0 && S_ISREG(st.st_mode);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (snprintf(buf, sizeof(buf), "%.*s%s%s", (int)n, path, n ? "/" : "", name) < (int)sizeof(buf) &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

static const char *run_policy_name(int policy)
{
	return policy == SCHED_RR ? "SCHED_RR" : "SCHED_FIFO";
}

static void run_config_error_cb(void *userdata, const char *message)
{
	fprintf(stderr, "rtplace-run: %s\n", message);
}

/*
 * Reads the daemon's configuration with the daemon's parser: o->config,
 * which must exist, or the default path, where no file means the built-in
 * defaults (as for the daemon) and an unreadable one a warning. Returns 0
 * or -errno after reporting.
 */
static int run_load_config(const struct run_opts *o, struct config *ret)
{
	const char *path = o->config ? o->config : CONFIG_DEFAULT_PATH;
	struct rtplace_reason reason;
	int r = config_load_default(o->config, &reason, ret, run_config_error_cb, NULL, NULL);

	if (r == 0)
		return 0;
	if (r == -EINVAL) {
		fprintf(stderr, "rtplace-run: %s: invalid configuration; fix the errors above\n", path);
		return r;
	}
	/* The daemon's file may be root's alone: its rules are then unknown
	 * here, which is no reason not to run. */
	if (!o->config && r == -EACCES) {
		fprintf(stderr, "rtplace-run: warning: %s; the local choice ignores its rules\n", reason.text);
		config_defaults(ret);
		return 0;
	}
	fprintf(stderr, "rtplace-run: cannot read the configuration: %s\n", reason.text);
	return r;
}

/* A normal-level claim (DESIGN §20): the command runs without an RT policy
 * on CPUs rtplace chose, so it keeps off isolated CPUs; CPUs the user named
 * are taken as named. */
static bool run_is_normal(const struct run_opts *o)
{
	return !o->run_prio && !o->have_list;
}

/*
 * The local choice when no daemon answers: placement_choose() under the
 * daemon's configuration over an all-idle map of this machine, within
 * allowed. Writes the CPUs into ret, the placement's reason into
 * reason; returns how many CPUs, or -errno (-ENOENT, -ENODEV: no CPU).
 */
static int run_choose_locally(const struct run_opts *o, const struct config *config, const cpu_set_t *allowed,
			      cpu_set_t *ret, struct rtplace_reason *reason)
{
	struct placement_config cfg;
	struct placement_request req = {
		.prio = o->run_prio ? o->run_prio : RTPLACE_PRIO_MIN,
		.count = o->count,
		.node = o->node,
		.near_cpu = -1,
		.normal = run_is_normal(o),
	};
	struct sysfs_isolation iso;
	struct placement_result *res = NULL;
	struct cpupri_view view = { 0 };
	struct topo *t = NULL;
	void *map = NULL;
	uint32_t rotor;
	int r;

	reason->text[0] = '\0';
	r = topo_load(NULL, reason, &t);
	if (r < 0)
		return r;
	/* The live topology with every online CPU idle. */
	r = cpupri_map_open(t, TOPO_SHARD_NODE, &map, &view);
	if (r < 0)
		goto out;
	cpupri_set_online_idle(map, &view.geom, t);
	res = malloc(sizeof(*res));
	if (!res) {
		r = -ENOMEM;
		goto out;
	}
	/* The daemon's rules, over the isolation it would read. */
	r = sysfs_read_isolation(SYSFS_ROOT, reason, &iso);
	if (r < 0)
		goto out;
	config_placement(config, t, &iso.isolated, &cfg);
	cpuset_zero(&req.allowed);
	for (unsigned cpu = 0; cpu < RTPLACE_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, allowed))
			cpuset_set(&req.allowed, cpu);
	rotor = (uint32_t)getpid() % t->ncpus;
	r = placement_choose(&cfg, t, &view, NULL, &rotor, &req, reason, res);
	if (r < 0)
		goto out;
	CPU_ZERO(ret);
	for (uint32_t i = 0; i < res->n; i++)
		CPU_SET(res->cpus[i], ret);
	r = (int)res->n;
out:
	free(res);
	cpupri_view_close(&view);
	free(map);
	topo_free(t);
	return r;
}

/* Does this error mean "no usable daemon" (fall back) rather than "the
 * daemon refused" (report)? */
static bool run_is_unreachable(int r)
{
	return r == -ENOENT || r == -ECONNREFUSED || r == -ECONNRESET || r == -EPIPE || r == -ENOTCONN ||
	       r == -ETIMEDOUT || r == -EACCES || r == -ENAMETOOLONG;
}

/* The caller may go on without the daemon after r: it cannot be reached,
 * or it refused the connection at a client limit, and --strict is off. */
static bool run_may_fall_back(const struct run_opts *o, int r)
{
	/* Only the daemon isolates: without it --isolate is a failure. */
	return !o->strict && !o->isolate && (r == -EUSERS || run_is_unreachable(r));
}

/* The one place an error of asking the daemon becomes an exit status. */
static int run_exit_status(int r)
{
	return run_is_unreachable(r) ? EX_UNAVAILABLE : cli_exit_status(r);
}

/* What found no CPU, in the user's words: the priority, or for a pin
 * alone the kind of what (the wire's rt1 is no priority the user gave). */
static void run_describe_ask(const struct run_opts *o, const char *what, char *buf, size_t len)
{
	if (o->run_prio)
		snprintf(buf, len, "no CPU for priority %d", o->run_prio);
	else
		snprintf(buf, len, "no free CPU for a pinned%s %s", run_is_normal(o) ? " (normal-level)" : "", what);
}

/*
 * Appends, when the daemon simulates another machine (--topology), that
 * its CPUs are not this one's: a claim among this process's CPUs asks for
 * ids of the simulated machine, and with --node for that machine's node,
 * which may hold none of them. Nothing from a live daemon.
 */
static void run_append_simulated(struct rtplace *rp, const struct run_opts *o, char *buf, size_t len)
{
	struct rtplace_cpu *cpus = NULL;
	struct rtplace_tracking tr;
	struct rtplace_status st;
	char list[CPUSET_LIST_MAX];
	cpu_set_t node;
	size_t n = 0, used = strlen(buf);

	if (rtplace_tracking(rp, &tr) < 0 || tr.mode != RTPLACE_TRACKING_SIMULATED || rtplace_status(rp, &st) < 0)
		return;
	snprintf(buf + used, len - used, "; rtplaced simulates another machine (--topology, %u CPUs on %u node%s)",
		 st.ncpus, st.nnodes, st.nnodes == 1 ? "" : "s");
	if (o->node < 0 || rtplace_cpus(rp, &cpus, &n) < 0)
		return;
	CPU_ZERO(&node);
	for (size_t i = 0; i < n && i < CPU_SETSIZE; i++)
		if (cpus[i].node == o->node)
			CPU_SET(i, &node);
	rtplace_cpus_free(cpus);
	cli_format_cpus(&node, list, sizeof(list));
	used = strlen(buf);
	/* A list too long for the line is cut: the words before it say it all. */
	if (snprintf(buf + used, len - used, ", whose node %d is CPUs %s there, not CPUs of this machine", o->node, list) >=
	    (int)(len - used))
		buf[len - 1] = '\0';
}

/* The refusal of a claim that got no CPU: what was asked, among which
 * CPUs, and who holds them; the daemon's own reason when the snapshot
 * names no holder, with what a simulating daemon means for it. */
static void run_say_refused(struct rtplace *rp, const struct run_opts *o, const cpu_set_t *allowed,
			    const char *reason)
{
	char ask[96], list[CPUSET_LIST_MAX], holders[HOLDERS_LEN];

	run_describe_ask(o, "claim", ask, sizeof(ask));
	cli_format_cpus(allowed, list, sizeof(list));
	if (!holders_format(rp, o->run_prio, run_is_normal(o), allowed, holders, sizeof(holders))) {
		snprintf(holders, sizeof(holders), "%s", reason);
		run_append_simulated(rp, o, holders, sizeof(holders));
	}
	fprintf(stderr, "rtplace-run: %s %s %s: %s\n", ask, CPU_COUNT(allowed) == 1 ? "on CPU" : "among CPUs",
		list, holders);
}

/* The claim rtplace-run asks for, over allowed. */
static void run_request(const struct run_opts *o, const cpu_set_t *allowed, struct rtplace_request *ret)
{
	*ret = (struct rtplace_request)RTPLACE_REQUEST_INIT;
	ret->prio = o->run_prio ? o->run_prio : RTPLACE_PRIO_MIN;
	ret->policy = o->run_policy ? o->run_policy : SCHED_FIFO;
	ret->count = o->count;
	ret->node = o->node;
	ret->flags = RTPLACE_QUERY_F_CLAIM | (o->exclusive ? RTPLACE_QUERY_F_EXCLUSIVE : 0) |
		     (o->isolate ? RTPLACE_QUERY_F_ISOLATE : 0) |
		     (o->isolate_try ? RTPLACE_QUERY_F_ISOLATE | RTPLACE_QUERY_F_ISOLATE_TRY : 0) |
		     (o->manage ? RTPLACE_QUERY_F_MANAGE : 0) | (run_is_normal(o) ? RTPLACE_QUERY_F_NORMAL : 0);
	ret->lease_ms = RTPLACE_LEASE_INFINITE;
	ret->owner_pid = getpid();
	ret->allowed = allowed;
	ret->allowed_size = sizeof(*allowed);
}

/* Connects and asks, again without what an older or simulating daemon
 * refuses: rtplace_query()'s return, with req as finally asked. */
static int run_query(const struct run_opts *o, const char *path, struct rtplace **rpp, struct rtplace_request *req,
		     struct rtplace_answer *ret)
{
	struct rtplace_reason reason;
	int r = rtplace_connect(o->socket, rpp);

	if (r < 0)
		return r;
	r = rtplace_query(*rpp, req, ret);
	/* Only a daemon that cannot watch threads (simulated topology)
	 * says -EOPNOTSUPP to MANAGE; any other refusal is reported. */
	if (r == -EOPNOTSUPP && o->manage && !o->strict) {
		if (rtplace_last_reason(*rpp, reason.text, sizeof(reason.text)) < 0)
			reason_set(&reason, "%s", strerror(-r));
		fprintf(stderr, "rtplace-run: warning: rtplaced at %s does not manage threads (%s); "
			"running without --manage\n", path, reason.text);
		req->flags &= ~RTPLACE_QUERY_F_MANAGE;
		r = rtplace_query(*rpp, req, ret);
	}
	/* A daemon older than NORMAL knows no isolation to keep off. */
	if (r == -EINVAL && req->flags & RTPLACE_QUERY_F_NORMAL) {
		req->flags &= ~RTPLACE_QUERY_F_NORMAL;
		r = rtplace_query(*rpp, req, ret);
	}
	return r;
}

/* Reports a query that failed with r: a warning where rtplace-run goes on
 * locally (a client limit, no daemon, unless --strict), else the error. */
static void run_say_failed(const struct run_opts *o, const char *path, struct rtplace *rp, int r)
{
	struct rtplace_reason reason;

	/* Refused at a client limit: the daemon named it. */
	if (r == -EUSERS) {
		if (rtplace_last_reason(rp, reason.text, sizeof(reason.text)) < 0)
			reason_set(&reason, "%s", strerror(-r));
		if (o->strict)
			fprintf(stderr, "rtplace-run: rtplaced at %s refused the connection: %s\n", path, reason.text);
		else
			fprintf(stderr, "rtplace-run: warning: rtplaced at %s refused the connection: %s; "
				"choosing CPUs locally, without a claim\n", path, reason.text);
	} else if (run_is_unreachable(r)) {
		cli_explain_connect(path, r, &reason);
		if (o->strict)
			fprintf(stderr, "rtplace-run: cannot reach rtplaced at %s: %s%s\n", path, strerror(-r), reason.text);
		else
			fprintf(stderr, "rtplace-run: warning: cannot reach rtplaced at %s: %s%s; "
				"choosing CPUs locally, without a claim\n", path, strerror(-r), reason.text);
	} else if (rtplace_last_reason(rp, reason.text, sizeof(reason.text)) == 0) {
		fprintf(stderr, "rtplace-run: rtplaced refused the query: %s\n", reason.text);
	} else {
		fprintf(stderr, "rtplace-run: query failed: %s\n", strerror(-r));
	}
}

/* An answer with fewer CPUs than asked: none is refused (-EBUSY), fewer
 * a warning, or under --strict an error with the claim released. */
static int run_check_count(const struct run_opts *o, struct rtplace *rp, const cpu_set_t *allowed, unsigned asked,
			   const struct rtplace_answer *ans)
{
	char holders[HOLDERS_LEN];
	cpu_set_t given, others;

	if (ans->count == 0) {
		run_say_refused(rp, o, allowed, ans->reason);
		return -EBUSY;
	}
	if (ans->count >= asked)
		return 0;
	CPU_AND(&given, allowed, &ans->set);
	CPU_XOR(&others, allowed, &given);
	if (!holders_format(rp, o->run_prio, run_is_normal(o), &others, holders, sizeof(holders)))
		snprintf(holders, sizeof(holders), "%s", ans->reason);
	fprintf(stderr, "rtplace-run: %s: got %u of %u CPUs: %s\n", o->strict ? "error" : "warning", ans->count,
		asked, holders);
	if (!o->strict)
		return 0;
	rtplace_release(rp, ans->claim_id, NULL);
	return -EBUSY;
}

/*
 * Asks the daemon. Returns 0 with the answer in *ret, or -errno after
 * reporting it: as a warning when run_may_fall_back(), else as the error
 * (-EBUSY: no CPU, or fewer than asked under --strict).
 */
static int run_ask_daemon(struct run_opts *o, const cpu_set_t *allowed, struct rtplace **rpp,
			  struct rtplace_answer *ret)
{
	struct rtplace_request req;
	const char *path = o->socket ? o->socket : getenv(RTPLACE_SOCKET_ENV);
	int r;

	o->manage_granted = false;
	if (!path || !*path)
		path = RTPLACE_DEFAULT_SOCKET;
	run_request(o, allowed, &req);
	r = run_query(o, path, rpp, &req, ret);
	if (r < 0) {
		run_say_failed(o, path, *rpp, r);
		return r;
	}
	r = run_check_count(o, *rpp, allowed, req.count, ret);
	if (r == 0)
		o->manage_granted = req.flags & RTPLACE_QUERY_F_MANAGE;
	return r;
}

/*
 * Chooses the CPUs to pin to among allowed: the daemon's claimed answer,
 * or without a daemon (and without --strict) a local choice. 0 with them
 * in *chosen and the claim id in claim ("" for none), or the exit status
 * after saying why.
 */
static int run_choose(struct run_opts *o, struct config *config, bool *have_config, const cpu_set_t *allowed,
		      struct rtplace **rpp, struct rtplace_answer *ans, cpu_set_t *chosen, char *claim,
		      size_t claim_len)
{
	struct rtplace_reason reason;
	int r = run_ask_daemon(o, allowed, rpp, ans);

	if (r < 0 && !run_may_fall_back(o, r))
		return run_exit_status(r);
	if (r == 0) {
		*chosen = ans->set;
		snprintf(claim, claim_len, "%" PRIu64, ans->claim_id);
		return 0;
	}
	claim[0] = '\0';
	if (!*have_config) {
		if (run_load_config(o, config) < 0)
			return EX_CONFIG;
		*have_config = true;
	}
	r = run_choose_locally(o, config, allowed, chosen, &reason);
	if (r == -ENOENT || r == -ENODEV) {
		char ask[96];

		run_describe_ask(o, "placement", ask, sizeof(ask));
		fprintf(stderr, "rtplace-run: %s here: %s", ask, reason.text);
		if (!cpuset_empty(&config->placement.housekeeping_cpus))
			fprintf(stderr, " (housekeeping-cpus of %s)", o->config ? o->config : CONFIG_DEFAULT_PATH);
		fprintf(stderr, "\n");
		return EX_TEMPFAIL;
	}
	if (r < 0) {
		fprintf(stderr, "rtplace-run: warning: no local choice either (%s); keeping the current "
			"affinity\n", reason.text[0] ? reason.text : strerror(-r));
		*chosen = *allowed;
	} else if ((unsigned)r < o->count) {
		fprintf(stderr, "rtplace-run: warning: got %d of %u CPUs: %s\n", r, o->count, reason.text);
	}
	return 0;
}

/*
 * Without --prio the command keeps the policy rtplace-run was started with
 * (chrt -f 10 rtplace-run ...): the CPUs are then chosen and claimed for
 * that RT priority, the level the command will really run at.
 */
static void run_effective_policy(struct run_opts *o)
{
	struct sched_param sp;
	int policy;

	if (o->prio) {
		o->run_prio = o->prio;
		o->run_policy = o->policy;
		return;
	}
	policy = sched_getscheduler(0);
	if (policy < 0)
		return;
	policy &= ~SCHED_RESET_ON_FORK;
	if ((policy == SCHED_FIFO || policy == SCHED_RR) && sched_getparam(0, &sp) == 0 && sp.sched_priority > 0) {
		o->run_prio = sp.sched_priority;
		o->run_policy = policy;
	}
}

/* Parsing went on: no exit status yet. */
#define RUN_GO_ON (-1)

/* The options into o (have_* saying what was given), every usage error a
 * line of ours, not getopt's. RUN_GO_ON, or the exit status. Longer than
 * the rest: one case per option, in --help's order, which split into
 * functions would only scatter. */
static int run_parse_args(int argc, char **argv, struct run_opts *o, bool *ret_have_policy, bool *ret_have_count)
{
	static const struct option opts[] = {
		{ "prio", required_argument, NULL, 'p' },
		{ "policy", required_argument, NULL, 'P' },
		{ "cpus", required_argument, NULL, 'n' },
		{ "cpu-list", required_argument, NULL, 'c' },
		{ "node", required_argument, NULL, 'N' },
		{ "exclusive", no_argument, NULL, 'x' },
		{ "isolate", no_argument, NULL, 'I' },
		{ "isolate-if-possible", no_argument, NULL, 'i' },
		{ "manage", no_argument, NULL, 'm' },
		{ "strict", no_argument, NULL, 's' },
		{ "socket", required_argument, NULL, 'S' },
		{ "config", required_argument, NULL, 'C' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	long v;
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:hVvc:", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (cli_parse_long(optarg, RTPLACE_PRIO_MIN, RTPLACE_PRIO_MAX, &v) < 0)
				return run_usage_error("--prio %s: not a priority 1..99", optarg);
			o->prio = (int)v;
			break;
		case 'P':
			if (cli_parse_policy(optarg, &o->policy) < 0)
				return run_usage_error("--policy %s: not fifo or rr", optarg);
			*ret_have_policy = true;
			break;
		case 'n':
			if (cli_parse_long(optarg, 1, RTPLACE_ANSWER_MAX, &v) < 0)
				return run_usage_error("--cpus %s: not a count 1..256%s", optarg,
						       strpbrk(optarg, "-,") ? " (a CPU list is --cpu-list)" : "");
			o->count = (unsigned)v;
			*ret_have_count = true;
			break;
		case 'c':
			if (cli_parse_cpus(optarg, &o->list) < 0)
				return run_usage_error("--cpu-list %s: not a CPU list (e.g. 2-5,8)", optarg);
			o->have_list = true;
			break;
		case 'N':
			if (cli_parse_long(optarg, 0, RTPLACE_MAX_CPUS - 1, &v) < 0)
				return run_usage_error("--node %s: not a node id", optarg);
			o->node = (int)v;
			break;
		case 'x':
			o->exclusive = true;
			break;
		case 'I':
			o->isolate = o->exclusive = true;
			break;
		case 'i':
			o->isolate_try = o->exclusive = true;
			break;
		case 'm':
			o->manage = true;
			break;
		case 's':
			o->strict = true;
			break;
		case 'S':
			o->socket = optarg;
			break;
		case 'C':
			o->config = optarg;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			run_usage(stdout);
			return EX_OK;
		case 'V':
			printf("rtplace-run %s\n", PACKAGE_VERSION);
			return EX_OK;
		case ':':
			return run_usage_error("%s needs a value", argv[optind - 1]);
		default:
			if (optopt && optopt < 0x100) {
				char letter[3] = { '-', (char)optopt, '\0' };

				return run_usage_error("unknown option %s%s", letter, cli_option_hint(letter));
			}
			return run_usage_error("unknown option %s%s", argv[optind - 1], cli_option_hint(argv[optind - 1]));
		}
	}
	return RUN_GO_ON;
}

/* The CPUs this process may run on (taskset, cgroups), narrowed to
 * --cpu-list, and the count checked against them. RUN_GO_ON, or the exit
 * status. */
static int run_allowed(struct run_opts *o, cpu_set_t *ret)
{
	if (sched_getaffinity(0, sizeof(*ret), ret) < 0) {
		fprintf(stderr, "rtplace-run: cannot read own CPU affinity: %s\n", strerror(errno));
		return EX_OSERR;
	}
	if (o->have_list) {
		CPU_AND(ret, ret, &o->list);
		if (CPU_COUNT(ret) == 0) {
			fprintf(stderr, "rtplace-run: --cpu-list: none of these CPUs is available to this process\n");
			return EX_USAGE;
		}
		o->count = (unsigned)CPU_COUNT(ret);
	} else if (o->count > (unsigned)CPU_COUNT(ret)) {
		fprintf(stderr, "rtplace-run: --cpus %u: this process may run on %d CPU%s (the machine has %ld online); "
			"ask for at most %d\n", o->count, CPU_COUNT(ret), CPU_COUNT(ret) == 1 ? "" : "s",
			sysconf(_SC_NPROCESSORS_ONLN), CPU_COUNT(ret));
		return EX_USAGE;
	}
	return RUN_GO_ON;
}

/*
 * Chooses CPUs (the daemon's claim, or locally) and pins this process to
 * them; chooses again among the others when the chosen went offline
 * before the pinning, a bounded number of times. 0 with *rpp, ans,
 * cpus and claim set, or the exit status (a claim made is released).
 */
static int run_choose_and_pin(struct run_opts *o, struct config *config, bool *have_config, cpu_set_t *allowed,
			      struct rtplace **rpp, struct rtplace_answer *ans, char *cpus, size_t cpus_len,
			      char *claim, size_t claim_len)
{
	cpu_set_t chosen;
	int r;

	for (unsigned tries = 1;; tries++) {
		r = run_choose(o, config, have_config, allowed, rpp, ans, &chosen, claim, claim_len);
		if (r)
			return r;
		cli_format_cpus(&chosen, cpus, cpus_len);
		if (sched_setaffinity(0, sizeof(chosen), &chosen) == 0)
			return 0;
		r = errno;
		/* EINVAL: every chosen CPU went offline (or left this
		 * process's cpuset) after the answer. Choose again among the
		 * others, a bounded number of times. */
		for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &chosen))
				CPU_CLR(cpu, allowed);
		if (r != EINVAL || tries == RUN_PIN_TRIES || CPU_COUNT(allowed) == 0 ||
		    (o->strict && o->count > (unsigned)CPU_COUNT(allowed))) {
			fprintf(stderr, "rtplace-run: cannot pin to CPUs %s: %s%s\n", cpus, strerror(r),
				r == EINVAL ? "; they went offline or left this process's cpuset, and no other "
					      "CPU is left to choose" : "");
			if (*rpp && claim[0])
				rtplace_release(*rpp, ans->claim_id, NULL);
			return r == EPERM ? EX_NOPERM : r == EINVAL ? EX_TEMPFAIL : EX_OSERR;
		}
		fprintf(stderr, "rtplace-run: warning: CPUs %s went offline before they could be pinned to; "
			"choosing again\n", cpus);
		if (*rpp && claim[0])
			rtplace_release(*rpp, ans->claim_id, NULL);
		rtplace_close(*rpp);
		*rpp = NULL;
		if (o->count > (unsigned)CPU_COUNT(allowed))
			o->count = (unsigned)CPU_COUNT(allowed);
	}
}

/* --prio: this process at that RT priority. 0, or the exit status after
 * saying what would allow it. */
static int run_set_policy(const struct run_opts *o)
{
	struct sched_param param = { .sched_priority = o->prio };
	struct rtplace_reason reason;
	int r;

	if (!o->prio || sched_setscheduler(0, o->policy, &param) == 0)
		return 0;
	r = errno;
	if (r == EPERM && cli_explain_rtbudget(0, &reason) == 0)
		fprintf(stderr, "rtplace-run: cannot set %s priority %d: %s\n", run_policy_name(o->policy), o->prio,
			reason.text);
	else
		fprintf(stderr, "rtplace-run: cannot set %s priority %d: %s; run as root, give the program "
			"CAP_SYS_NICE, or raise RLIMIT_RTPRIO to %d (ulimit -r, limits.conf rtprio)\n",
			run_policy_name(o->policy), o->prio, strerror(r), o->prio);
	return r == EPERM ? EX_NOPERM : EX_OSERR;
}

/* --verbose: what command was given, and why a claim asked isolated if
 * possible is not. */
static void run_tell(const struct run_opts *o, const struct rtplace_answer *ans, const char *cpus, const char *claim,
		     const char *command)
{
	if (claim[0])
		fprintf(stderr, "rtplace-run: CPUs %s (claim %s), ", cpus, claim);
	else
		fprintf(stderr, "rtplace-run: CPUs %s (local choice, unclaimed), ", cpus);
	if (o->run_prio)
		fprintf(stderr, "%s %d%s\n", run_policy_name(o->run_policy), o->run_prio, o->prio ? "" : " (inherited)");
	else
		fprintf(stderr, "normal policy\n");
	/* The daemon watches one process, this one, which the exec keeps: a
	 * wrapper's child is another. */
	if (o->manage_granted)
		fprintf(stderr, "rtplace-run: managed: the threads of process %d (%s) only, not those of the "
			"processes it starts\n", (int)getpid(), command);
	if (o->isolate_try && claim[0] && strncmp(ans->reason, "not isolated: ", 14) == 0)
		fprintf(stderr, "rtplace-run: %s\n", ans->reason);
}

/* Becomes the command: the claim is tied to this pid, which the exec
 * keeps, so the connection may close first. The exit status only when the
 * exec failed. */
static int run_exec(struct rtplace *rp, struct rtplace_answer *ans, char **command)
{
	int r;

	rtplace_close(rp);
	free(ans);
	execvp(command[0], command);
	r = errno;
	fprintf(stderr, "rtplace-run: cannot run %s: %s\n", command[0], strerror(r));
	return r == ENOENT ? RUN_EXIT_NOT_FOUND : RUN_EXIT_CANNOT_RUN;
}

int main(int argc, char **argv)
{
	struct run_opts o = { .policy = SCHED_FIFO, .count = 1, .node = -1 };
	struct rtplace_answer *ans = NULL;
	struct rtplace *rp = NULL;
	struct config config;
	cpu_set_t allowed;
	bool have_policy = false, have_count = false, have_config = false;
	char cpus[CPUSET_LIST_MAX], claim[32];
	int r = run_parse_args(argc, argv, &o, &have_policy, &have_count);

	if (r != RUN_GO_ON)
		return r;
	if (optind >= argc)
		return run_usage_error("%s", "no command given");
	if (have_count && o.have_list)
		return run_usage_error("%s", "--cpus and --cpu-list exclude each other");
	if (have_policy && !o.prio)
		return run_usage_error("%s", "--policy needs --prio");
	/* A file named on the command line is checked now, daemon or not: a
	 * mistake in it should not wait for the day the daemon is down. */
	if (o.config) {
		if (run_load_config(&o, &config) < 0)
			return EX_CONFIG;
		have_config = true;
	}
	if (!run_command_exists(argv[optind])) {
		fprintf(stderr, "rtplace-run: %s: command not found\n", argv[optind]);
		return RUN_EXIT_NOT_FOUND;
	}
	run_effective_policy(&o);
	r = run_allowed(&o, &allowed);
	if (r != RUN_GO_ON)
		return r;
	ans = malloc(sizeof(*ans));
	if (!ans) {
		fprintf(stderr, "rtplace-run: %s\n", strerror(ENOMEM));
		return EX_OSERR;
	}
	r = run_choose_and_pin(&o, &config, &have_config, &allowed, &rp, ans, cpus, sizeof(cpus), claim,
			       sizeof(claim));
	if (r == 0) {
		r = run_set_policy(&o);
		if (r == 0 && o.verbose)
			run_tell(&o, ans, cpus, claim, argv[optind]);
		/* For scripts and rtplacectl release: what this process was given. */
		if (r == 0 &&
		    (setenv("RTPLACE_CPUS", cpus, 1) < 0 || (claim[0] && setenv("RTPLACE_CLAIM_ID", claim, 1) < 0))) {
			fprintf(stderr, "rtplace-run: %s\n", strerror(errno));
			r = EX_OSERR;
		}
		if (r == 0)
			return run_exec(rp, ans, argv + optind);
		/* A claim made for a command that does not run is released. */
		if (rp && claim[0])
			rtplace_release(rp, ans->claim_id, NULL);
	}
	rtplace_close(rp);
	free(ans);
	return r;
}
