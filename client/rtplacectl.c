/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtplacectl: ask rtplaced from the command line (DESIGN §8). One command
 * per run; a human table in 80 columns by default (wider with the
 * terminal), one JSON document with --json. Errors go to stderr as
 * "rtplacectl: COMMAND: what failed: why", under --json also as a JSON
 * document on stdout, and the exit status follows sysexits.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/un.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "rtplace.h"

#include "cli.h"
#include "cpuset.h"
#include "ctl.h"
#include "holders.h"
#include "kenv.h"
#include "record.h"

/* The JSON document of an error under --json, on stdout where a script
 * reads the answer: the command, the message as stderr has it, the
 * errno's name ("" for a usage error) and the exit status. */
static void ctl_json_error(const struct ctl *c, int status, const char *errname, const char *message)
{
	printf("{\"error\": {\"command\": ");
	ctl_json_string(c->command);
	printf(", \"message\": ");
	ctl_json_string(message);
	printf(", \"errno\": ");
	ctl_json_string(errname);
	printf(", \"exit\": %d}}\n", status);
}

int ctl_report(const struct ctl *c, int status, const char *errname, const char *fmt, ...)
{
	char message[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	/* Before a command, the program's name alone leads the line. */
	if (strcmp(c->command, "rtplacectl") == 0)
		fprintf(stderr, "rtplacectl: %s\n", message);
	else
		fprintf(stderr, "rtplacectl: %s: %s\n", c->command, message);
	if (c->json)
		ctl_json_error(c, status, errname, message);
	return status;
}

const char *ctl_errno_name(int r)
{
	const char *name = strerrorname_np(-r);

	return name ? name : "";
}

/* The daemon's reason says why; strerror only where there is none. */
int ctl_fail(const struct ctl *c, const char *what, int r)
{
	char reason[RTPLACE_REASON_LEN];

	if (c->rp && rtplace_last_reason(c->rp, reason, sizeof(reason)) == 0)
		return ctl_report(c, cli_exit_status(r), ctl_errno_name(r), "%s: %s", what, reason);
	return ctl_report(c, cli_exit_status(r), ctl_errno_name(r), "%s: %s", what, strerror(-r));
}

/* Never the whole help: the problem would scroll away above it. */
int ctl_usage_error(const struct ctl *c, const char *fmt, ...)
{
	char problem[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(problem, sizeof(problem), fmt, ap);
	va_end(ap);
	return ctl_report(c, EX_USAGE, "", "%s; see 'rtplacectl %s --help'", problem, c->command);
}

int ctl_common_option(struct ctl *c, int o, int argc, char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

	switch (o) {
	case 'S':
		c->socket = optarg;
		return 0;
	case 'j':
		c->json = true;
		return 0;
	case 'h':
		ctl_command_help(stdout, &ctl_commands[c->id]);
		return -1;
	case ':':
		return ctl_usage_error(c, "%s needs a value", arg);
	default:
		if (optopt && optopt < 0x100) {
			char letter[3] = { '-', (char)optopt, '\0' };

			return ctl_usage_error(c, "unknown option %s%s", letter, cli_option_hint(letter));
		}
		return ctl_usage_error(c, "unknown option %s%s", arg, cli_option_hint(arg));
	}
}

static bool ctl_own_option(const struct ctl *c, int o)
{
	for (const struct ctl_option *t = ctl_commands[c->id].options; t->name; t++)
		if (t->key == o)
			return true;
	return false;
}

int ctl_getopt(struct ctl *c, struct ctl_getopt *g, int argc, char **argv, int nargs, int *ret_index,
	       int *status)
{
	int o;

	/* Every table fits (test-cli checks each command's): an overflow is
	 * a bug of this file, not the user's. */
	if (!g->shorts[0] && ctl_getopt_init(g, "", ctl_commands[c->id].options, ctl_common_options) < 0)
		abort();
	*status = 0;
	while ((o = getopt_long(argc, argv, g->shorts, g->longs, ret_index)) != -1) {
		if (ctl_own_option(c, o))
			return o;
		*status = ctl_common_option(c, o, argc, argv);
		if (*status)
			return -1;
	}
	if (argc - optind > nargs)
		*status = ctl_usage_error(c, "unexpected argument %s", argv[optind + nargs]);
	return -1;
}

int ctl_connect(struct ctl *c)
{
	int r = rtplace_connect(c->socket, &c->rp);

	if (r < 0) {
		const char *path = c->socket ? c->socket : getenv(RTPLACE_SOCKET_ENV);
		struct rtplace_reason hint;

		if (!path || !*path)
			path = RTPLACE_DEFAULT_SOCKET;
		/* The path is what the user gave (--socket or the
		 * environment), not a failure of the daemon's. */
		if (r == -ENAMETOOLONG)
			return ctl_usage_error(c, "socket path %s has %zu bytes; a UNIX socket path holds at most %zu",
					       path, strlen(path), sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1);
		cli_explain_connect(path, r, &hint);
		return ctl_report(c, r == -ENOENT ? EX_UNAVAILABLE : cli_exit_status(r), ctl_errno_name(r),
				  "cannot reach rtplaced at %s: %s%s", path, strerror(-r), hint.text);
	}
	return 0;
}

static const char *ctl_policy_name(int policy)
{
	return policy == SCHED_FIFO ? "fifo" : policy == SCHED_RR ? "rr" : "other";
}

void ctl_json_irq(const struct rtplace_cpu *ci)
{
	if (ci->flags & RTPLACE_CPU_F_IRQ)
		printf(", \"irq\": %.4f, \"softirq\": %.4f", (double)ci->irq_share / RTPLACE_SHARE_ONE,
		       (double)ci->softirq_share / RTPLACE_SHARE_ONE);
	else
		printf(", \"irq\": null, \"softirq\": null");
}

void ctl_json_cpu(const struct rtplace_cpu *ci, const double *shares)
{
	printf("{\"cpu\": %d, \"package\": %d, \"node\": %d, \"llc\": %d, \"core\": %d, \"kind\": %d, "
	       "\"level\": \"%s\", \"online\": %s, \"housekeeping\": %s, \"isolated\": %s, "
	       "\"nohz_full\": %s, \"pid\": %d, \"rt_queued\": %u, \"comm\": ",
	       ci->cpu, ci->package, ci->node, ci->llc, ci->core, ci->kind, rtplace_level_name(ci->level),
	       ci->flags & RTPLACE_CPU_F_ONLINE ? "true" : "false", ci->flags & RTPLACE_CPU_F_HOUSEKEEPING ? "true" : "false",
	       ci->flags & RTPLACE_CPU_F_ISOLATED ? "true" : "false", ci->flags & RTPLACE_CPU_F_NOHZ_FULL ? "true" : "false",
	       (int)ci->pid, ci->rt_queued);
	ctl_json_string(ci->comm);
	ctl_json_irq(ci);
	if (ci->claim_id)
		printf(", \"claim\": %" PRIu64 ", \"claim_level\": \"%s\"", ci->claim_id, rtplace_level_name(ci->claim_level));
	else
		printf(", \"claim\": null, \"claim_level\": null");
	for (int k = 0; k < RTPLACE_CLASS_COUNT; k++)
		if (shares)
			printf(", \"%s\": %.4f", rtplace_class_name((unsigned)k), shares[k]);
		else
			printf(", \"%s\": null", rtplace_class_name((unsigned)k));
	printf("}");
}

void ctl_json_string(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

/*
 * For commands that have only the common options and take nargs positional
 * arguments (at argv[optind] on return). Returns 0, -1 after printing the
 * help, or EX_USAGE.
 */
static int ctl_simple_options(struct ctl *c, int argc, char **argv, int nargs)
{
	struct ctl_getopt g = { 0 };
	int r;

	/* Only common options: none comes back. */
	while (ctl_getopt(c, &g, argc, argv, nargs, NULL, &r) != -1)
		;
	if (!r && argc - optind < nargs)
		r = ctl_usage_error(c, "missing %s", ctl_commands[c->id].args);
	return r;
}

/* ctl_simple_options() for a command of no positional argument, then
 * ctl_connect(): 0 connected, -1 after printing the help, or the exit
 * status. */
static int ctl_simple_connect(struct ctl *c, int argc, char **argv)
{
	int r = ctl_simple_options(c, argc, argv, 0);

	return r ? r : ctl_connect(c);
}

static const char *ctl_tracking_mode(unsigned mode)
{
	return mode == RTPLACE_TRACKING_LIVE ? "live" : mode == RTPLACE_TRACKING_SAMPLED ? "sampled" : "simulated";
}

/* Where the levels come from; from a daemon that cannot say (older than
 * TRACKING), what its status flags imply. 0 or -errno. */
static int ctl_tracking(struct ctl *c, const struct rtplace_status *st, struct rtplace_tracking *ret)
{
	int r = rtplace_tracking(c->rp, ret);

	if (r == -EOPNOTSUPP) {
		*ret = (struct rtplace_tracking){
			.mode = st->flags & RTPLACE_STATUS_F_TRACKING ? RTPLACE_TRACKING_LIVE : RTPLACE_TRACKING_SIMULATED,
		};
		r = 0;
	}
	return r;
}

/* The host's RT configuration (DESIGN §20): the isolated and nohz_full
 * sets as lists, "" for none, and RT throttling; from a daemon older than
 * HOST, throttling unknown and, as its CPUS flags say, no sets. */
struct ctl_host {
	char isolated[CPUSET_LIST_MAX];
	char nohz_full[CPUSET_LIST_MAX];
	struct rtplace_host rt;
};

static int ctl_host(struct ctl *c, struct ctl_host *ret)
{
	struct rtplace_cpumask iso, nohz;
	struct rtplace_cpu *cpus = NULL;
	size_t n = 0;
	int r;

	cpuset_zero(&iso);
	cpuset_zero(&nohz);
	r = rtplace_cpus(c->rp, &cpus, &n);
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (cpus[i].flags & RTPLACE_CPU_F_ISOLATED)
			cpuset_set(&iso, (unsigned)cpus[i].cpu);
		if (cpus[i].flags & RTPLACE_CPU_F_NOHZ_FULL)
			cpuset_set(&nohz, (unsigned)cpus[i].cpu);
	}
	rtplace_cpus_free(cpus);
	if (r == 0)
		r = cpuset_format(&iso, ret->isolated, sizeof(ret->isolated));
	if (r == 0)
		r = cpuset_format(&nohz, ret->nohz_full, sizeof(ret->nohz_full));
	if (r == 0)
		r = rtplace_host(c->rp, &ret->rt);
	if (r == -EOPNOTSUPP) {
		ret->rt = (struct rtplace_host){ 0 };
		r = 0;
	}
	return r;
}

static void ctl_status_host_json(const struct ctl_host *h)
{
	printf("\"isolated\": ");
	ctl_json_string(h->isolated);
	printf(", \"nohz_full\": ");
	ctl_json_string(h->nohz_full);
	if (h->rt.rt_known)
		printf(", \"rt_runtime_us\": %" PRId64 ", \"rt_period_us\": %" PRId64 ", ", h->rt.rt_runtime_us,
		       h->rt.rt_period_us);
	else
		printf(", \"rt_runtime_us\": null, \"rt_period_us\": null, ");
}

static void ctl_status_host(const struct ctl_host *h)
{
	printf("isolated         %s\n", h->isolated[0] ? h->isolated : "none");
	printf("nohz_full        %s\n", h->nohz_full[0] ? h->nohz_full : "none");
	if (!h->rt.rt_known)
		printf("rt throttling    unknown\n");
	else if (h->rt.rt_runtime_us < 0)
		printf("rt throttling    off (sched_rt_runtime_us -1)\n");
	else
		printf("rt throttling    %" PRId64 " us of every %" PRId64 " us\n", h->rt.rt_runtime_us,
		       h->rt.rt_period_us);
}

/* The kernel's RT environment (DESIGN §20); known false from a daemon
 * older than KERNEL. */
struct ctl_kernel {
	bool known;
	struct kenv env;
};

static int ctl_kernel(struct ctl *c, struct ctl_kernel *ret)
{
	struct rtplace_kernel_reply w;
	int r = rtplace_kernel(c->rp, &w);

	*ret = (struct ctl_kernel){ .known = r == 0 };
	if (r == 0)
		kenv_from_wire(&w, &ret->env);
	return r == -EOPNOTSUPP ? 0 : r;
}

static void ctl_json_int_or_null(const char *key, int64_t v, bool known)
{
	if (known)
		printf("\"%s\": %" PRId64, key, v);
	else
		printf("\"%s\": null", key);
}

static void ctl_status_dl_json(const char *name, const struct kenv_dlserver *s)
{
	static const char *const states[] = { [KENV_DL_READ] = "read", [KENV_DL_ABSENT] = "absent",
					      [KENV_DL_UNREADABLE] = "unreadable" };
	bool read = s->state == KENV_DL_READ;

	printf("\"%s\": {\"state\": \"%s\", ", name, states[s->state < 3 ? s->state : KENV_DL_UNREADABLE]);
	if (read)
		printf("\"cpus\": %u, \"runtime_min_ns\": %" PRId64 ", \"runtime_max_ns\": %" PRId64
		       ", \"period_min_ns\": %" PRId64 ", \"period_max_ns\": %" PRId64 ", \"share_max\": %.6f, "
		       "\"cpus_off\": %u, ",
		       s->ncpus, s->runtime_min_ns, s->runtime_max_ns, s->period_min_ns, s->period_max_ns,
		       s->share_max_ppm / 1e6, s->zero);
	printf("\"why\": ");
	ctl_json_string(s->why);
	printf("}");
}

static void ctl_status_kernel_json(const struct ctl_kernel *k)
{
	static const char *const modes[] = { [KENV_RTG_NONE] = "none", [KENV_RTG_V1] = "v1", [KENV_RTG_V2] = "v2" };
	const struct kenv *e = &k->env;

	if (!k->known) {
		printf("\"kernel\": null, ");
		return;
	}
	printf("\"kernel\": {\"rt_group_sched\": \"%s\", \"rt_needs_budget\": %s, ",
	       modes[e->rtg.mode < 3 ? e->rtg.mode : 0], kenv_rtgroup_needs_budget(&e->rtg) ? "true" : "false");
	ctl_json_int_or_null("rt_group_sched_boot", e->rtg.boot, e->rtg.boot >= 0);
	printf(", ");
	ctl_json_int_or_null("rt_root_runtime_us", e->rtg.root_runtime_us, e->rtg.mode != KENV_RTG_NONE);
	printf(", ");
	ctl_json_int_or_null("rt_root_period_us", e->rtg.root_period_us, e->rtg.mode != KENV_RTG_NONE);
	printf(", \"rt_cgroups\": %u, \"rt_cgroups_budgetless\": %u, \"rt_cgroup_first_budgetless\": ",
	       e->rtg.folders, e->rtg.budgetless);
	ctl_json_string(e->rtg.first);
	printf(", ");
	ctl_status_dl_json("fair_server", &e->fair);
	printf(", ");
	ctl_status_dl_json("ext_server", &e->ext);
	printf(", \"sched_ext\": {\"state\": \"%s\", \"ops\": ", kenv_scx_state_name(e->scx.state));
	ctl_json_string(e->scx.ops);
	printf(", \"switch_all\": %s, ", e->scx.switch_all < 0 ? "null" : e->scx.switch_all ? "true" : "false");
	ctl_json_int_or_null("enable_seq", e->scx.enable_seq, e->scx.enable_seq >= 0);
	printf("}}, ");
}

static void ctl_status_kernel(const struct ctl_kernel *k)
{
	char text[1024];

	if (!k->known) {
		printf("kernel env       unknown (the daemon is older than KERNEL)\n");
		return;
	}
	kenv_rtgroup_text(&k->env.rtg, text, sizeof(text));
	printf("rt group sched   %s\n", text);
	kenv_dl_text("fair_server", &k->env.fair, text, sizeof(text));
	printf("deadline server  %s\n", text);
	kenv_dl_text("ext_server", &k->env.ext, text, sizeof(text));
	printf("deadline server  %s\n", text);
	kenv_scx_text(&k->env.scx, text, sizeof(text));
	printf("sched_ext        %s\n", text);
}

static int ctl_status(struct ctl *c, int argc, char **argv)
{
	struct rtplace_tracking tr;
	struct rtplace_status st;
	struct ctl_host host;
	struct ctl_kernel kernel;
	int r;

	r = ctl_simple_connect(c, argc, argv);
	if (r)
		return r < 0 ? EX_OK : r;
	r = rtplace_status(c->rp, &st);
	if (r < 0)
		return ctl_fail(c, "cannot read the daemon's status", r);
	r = ctl_tracking(c, &st, &tr);
	if (r < 0)
		return ctl_fail(c, "cannot read where the daemon's levels come from", r);
	r = ctl_host(c, &host);
	if (r < 0)
		return ctl_fail(c, "cannot read the host's RT configuration", r);
	r = ctl_kernel(c, &kernel);
	if (r < 0)
		return ctl_fail(c, "cannot read the kernel's RT environment", r);
	if (c->json) {
		printf("{\"version\": ");
		ctl_json_string(st.version);
		printf(", \"uptime_ms\": %" PRIu64 ", \"ncpus\": %u, \"nonline\": %u, \"nnodes\": %u, "
		       "\"nllcs\": %u, \"ncores\": %u, \"tracking\": %s, \"levels\": \"%s\", ",
		       st.uptime_ms, st.ncpus, st.nonline, st.nnodes, st.nllcs, st.ncores,
		       st.flags & RTPLACE_STATUS_F_TRACKING ? "true" : "false", ctl_tracking_mode(tr.mode));
		if (tr.mode == RTPLACE_TRACKING_SAMPLED) {
			printf("\"sample_interval_ms\": %u, \"samples\": %" PRIu64 ", \"samples_failed\": %" PRIu64
			       ", \"sample_cpu_ns\": %" PRIu64 ", \"untracked_why\": ",
			       tr.interval_ms, tr.samples, tr.failures, tr.cpu_ns);
			ctl_json_string(tr.why);
			printf(", ");
		}
		ctl_status_host_json(&host);
		ctl_status_kernel_json(&kernel);
		printf("\"moves_served\": %s, \"queries\": %" PRIu64 ", \"errors\": %" PRIu64
		       ", \"claims_active\": %" PRIu64 ", \"claims_total\": %" PRIu64 ", \"clients\": %" PRIu64
		       ", \"clients_dropped\": %" PRIu64 ", \"moves\": %" PRIu64 "}\n",
		       st.flags & RTPLACE_STATUS_F_MOVES ? "true" : "false", st.queries, st.errors,
		       st.claims_active, st.claims_total, st.clients, st.clients_dropped, st.moves);
		return EX_OK;
	}
	printf("version          %s\n", st.version);
	printf("uptime           %" PRIu64 ".%03u s\n", st.uptime_ms / 1000, (unsigned)(st.uptime_ms % 1000));
	printf("cpus             %u ids, %u online and managed\n", st.ncpus, st.nonline);
	printf("topology         %u nodes, %u LLCs, %u cores\n", st.nnodes, st.nllcs, st.ncores);
	if (tr.mode == RTPLACE_TRACKING_SAMPLED) {
		printf("levels           sampled from /proc (every %u ms), not live: %s\n", tr.interval_ms, tr.why);
		printf("sampling cost    %.3f ms of CPU per sample, %" PRIu64 " samples, %" PRIu64 " failed\n",
		       tr.samples ? (double)tr.cpu_ns / (double)tr.samples / 1e6 : 0.0, tr.samples, tr.failures);
	} else {
		printf("levels           %s\n",
		       tr.mode == RTPLACE_TRACKING_LIVE ? "live (BPF tracker)" : "simulated (every CPU idle)");
	}
	ctl_status_host(&host);
	ctl_status_kernel(&kernel);
	printf("moves served     %s\n", st.flags & RTPLACE_STATUS_F_MOVES ? "yes" : "no");
	printf("queries          %" PRIu64 "\n", st.queries);
	printf("errors           %" PRIu64 "\n", st.errors);
	printf("claims           %" PRIu64 " active, %" PRIu64 " total\n", st.claims_active, st.claims_total);
	printf("clients          %" PRIu64 " connected, %" PRIu64 " dropped\n", st.clients, st.clients_dropped);
	printf("moves            %" PRIu64 "\n", st.moves);
	return EX_OK;
}

int ctl_class_shares(const struct rtplace_cpu_time *before, const struct rtplace_cpu_time *after,
		     double ret[RTPLACE_CLASS_COUNT])
{
	uint64_t d[RTPLACE_CLASS_COUNT], sum = 0;

	for (int k = 0; k < RTPLACE_CLASS_COUNT; k++) {
		uint64_t from = before ? before->ns[k] : 0;

		d[k] = after->ns[k] > from ? after->ns[k] - from : 0;
		sum += d[k];
	}
	if (sum == 0)
		return -ENODATA;
	for (int k = 0; k < RTPLACE_CLASS_COUNT; k++)
		ret[k] = (double)d[k] / (double)sum;
	return 0;
}

unsigned ctl_columns(void)
{
	struct winsize ws;
	long v;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		return ws.ws_col;
	if (getenv("COLUMNS") && cli_parse_long(getenv("COLUMNS"), 20, 100000, &v) == 0)
		return (unsigned)v;
	return 80;
}

void ctl_sleep(double seconds)
{
	struct timespec ts = { .tv_sec = (time_t)seconds,
			       .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The time by class now, and interval seconds before (interval 0: none).
 * *ret_times is NULL without an error when the daemon keeps none (no BPF
 * tracker) and no interval was asked for. 0 or an exit status. */
static int ctl_cpus_times(struct ctl *c, double interval, struct rtplace_cpu_time **ret_before,
			  struct rtplace_cpu_time **ret_times, size_t *ret_n)
{
	size_t n0 = 0;
	int r;

	*ret_before = NULL;
	*ret_times = NULL;
	if (interval > 0) {
		r = rtplace_cpu_times(c->rp, ret_before, &n0);
		if (r < 0)
			goto fail;
		ctl_sleep(interval);
	}
	r = rtplace_cpu_times(c->rp, ret_times, ret_n);
	if (r == 0 && *ret_before && n0 != *ret_n)
		r = -EPROTO;
	if (r == 0 || (r == -EOPNOTSUPP && interval == 0))
		return 0;
fail:
	if (r == -EOPNOTSUPP)
		return ctl_report(c, EX_UNAVAILABLE, ctl_errno_name(r),
				  "this rtplaced keeps no time by class (it needs the BPF tracker and a daemon of this "
				  "version)");
	return ctl_fail(c, "cannot read the time by class", r);
}

/* Columns of the whole table; narrower, cpus prints ctl_cpus_row_narrow()'s. */
#define CTL_CPUS_WIDE_COLS 120

/*
 * A row in 80 columns: the first nine columns as the wide table has them
 * (scripts read CPU and CLAIM-AT by position), COMM cut to 8, of the time
 * by class RT% alone, SIRQ% without IRQ%, and FLAGS naming only what is
 * not plain online: offline, hk (housekeeping), iso (isolated), nohz.
 */
static void ctl_cpus_row_narrow(const struct rtplace_cpu *ci, const double *shares)
{
	char flags[32] = "";

	printf("%4d %4d %3d %4d %-7s %7d %-8.8s ", ci->cpu, ci->node, ci->llc, ci->core, rtplace_level_name(ci->level),
	       (int)ci->pid, ci->comm[0] ? ci->comm : "-");
	if (ci->claim_id)
		printf("%6" PRIu64 " %-8s", ci->claim_id, rtplace_level_name(ci->claim_level));
	else
		printf("%6s %-8s", "-", "-");
	if (shares)
		printf(" %5.1f", shares[RTPLACE_CLASS_RT] * 100);
	else
		printf(" %5s", "-");
	if (ci->flags & RTPLACE_CPU_F_IRQ)
		printf(" %5.1f", (double)ci->softirq_share * 100 / RTPLACE_SHARE_ONE);
	else
		printf(" %5s", "-");
	if (!(ci->flags & RTPLACE_CPU_F_ONLINE))
		snprintf(flags, sizeof(flags), "offline");
	snprintf(flags + strlen(flags), sizeof(flags) - strlen(flags), "%s%s%s",
		 ci->flags & RTPLACE_CPU_F_HOUSEKEEPING ? ",hk" : "", ci->flags & RTPLACE_CPU_F_ISOLATED ? ",iso" : "",
		 ci->flags & RTPLACE_CPU_F_NOHZ_FULL ? ",nohz" : "");
	printf("%s%s\n", flags[0] ? " " : "", flags[0] == ',' ? flags + 1 : flags);
}

static void ctl_cpus_row(const struct ctl *c, const struct rtplace_cpu *ci, const double *shares, bool first,
			 bool wide)
{
	if (c->json) {
		printf("%s\n  ", first ? "" : ",");
		ctl_json_cpu(ci, shares);
		return;
	}
	if (!wide) {
		ctl_cpus_row_narrow(ci, shares);
		return;
	}
	printf("%4d %4d %4d %5d %-8s %7d %-16s ", ci->cpu, ci->node, ci->llc, ci->core, rtplace_level_name(ci->level),
	       (int)ci->pid, ci->comm[0] ? ci->comm : "-");
	if (ci->claim_id)
		printf("%6" PRIu64 " %-8s", ci->claim_id, rtplace_level_name(ci->claim_level));
	else
		printf("%6s %-8s", "-", "-");
	for (int k = 0; k < RTPLACE_CLASS_COUNT; k++)
		if (shares)
			printf(" %6.1f", shares[k] * 100);
		else
			printf(" %6s", "-");
	if (ci->flags & RTPLACE_CPU_F_IRQ)
		printf(" %6.2f %6.2f", (double)ci->irq_share * 100 / RTPLACE_SHARE_ONE,
		       (double)ci->softirq_share * 100 / RTPLACE_SHARE_ONE);
	else
		printf(" %6s %6s", "-", "-");
	printf(" %s%s%s%s\n", ci->flags & RTPLACE_CPU_F_ONLINE ? "online" : "offline",
	       ci->flags & RTPLACE_CPU_F_HOUSEKEEPING ? ",housekeeping" : "",
	       ci->flags & RTPLACE_CPU_F_ISOLATED ? ",isolated" : "", ci->flags & RTPLACE_CPU_F_NOHZ_FULL ? ",nohz_full" : "");
}

static int ctl_cpus(struct ctl *c, int argc, char **argv)
{
	struct ctl_getopt g = { 0 };
	struct rtplace_cpu_time *before = NULL, *times = NULL;
	struct rtplace_cpu *cpus = NULL;
	size_t n = 0, ntimes = 0;
	double interval = 0;
	bool svg = false;
	const bool wide = ctl_columns() >= CTL_CPUS_WIDE_COLS;
	int o, r;

	while ((o = ctl_getopt(c, &g, argc, argv, 0, NULL, &r)) != -1) {
		switch (o) {
		case 'i':
			if (cli_parse_seconds(optarg, 0.1, 3600, &interval) < 0)
				return ctl_usage_error(c, "--interval %s: not a number of seconds 0.1..3600", optarg);
			break;
		case 'g':
			svg = true;
			break;
		}
	}
	if (r)
		return r < 0 ? EX_OK : r;
	if (svg && (interval > 0 || c->json))
		return ctl_usage_error(c, "%s", "--svg draws the levels of now: not with --interval or --json");
	r = ctl_connect(c);
	if (r)
		return r;
	if (!svg) {
		r = ctl_cpus_times(c, interval, &before, &times, &ntimes);
		if (r)
			goto out;
	}
	r = rtplace_cpus(c->rp, &cpus, &n);
	if (r < 0) {
		r = ctl_fail(c, "cannot read the CPU snapshot", r);
		goto out;
	}
	if (svg) {
		r = ctl_svg_write(stdout, cpus, n);
		r = r < 0 ? ctl_fail(c, "cannot write the picture", r) : EX_OK;
		goto out;
	}
	/* interval_s null: the shares are since the daemon started. */
	if (c->json && interval > 0)
		printf("{\"interval_s\": %.3f, \"cpus\": [", interval);
	else if (c->json)
		printf("{\"interval_s\": null, \"cpus\": [");
	else if (wide)
		printf("%4s %4s %4s %5s %-8s %7s %-16s %6s %-8s %6s %6s %6s %6s %6s %6s %s\n", "CPU", "NODE", "LLC",
		       "CORE", "LEVEL", "PID", "COMM", "CLAIM", "CLAIM-AT", "IDLE%", "NORM%", "RT%", "DL%", "IRQ%",
		       "SIRQ%", "FLAGS");
	else
		printf("%4s %4s %3s %4s %-7s %7s %-8s %6s %-8s %5s %5s %s\n", "CPU", "NODE", "LLC", "CORE", "LEVEL",
		       "PID", "COMM", "CLAIM", "CLAIM-AT", "RT%", "SIRQ%", "FLAGS");
	for (size_t i = 0; i < n; i++) {
		double shares[RTPLACE_CLASS_COUNT];
		bool have = times && i < ntimes &&
			    ctl_class_shares(before ? &before[i] : NULL, &times[i], shares) == 0;

		ctl_cpus_row(c, &cpus[i], have ? shares : NULL, i == 0, wide);
	}
	if (c->json)
		printf("\n]}\n");
	r = EX_OK;
out:
	rtplace_cpus_free(cpus);
	rtplace_cpu_times_free(before);
	rtplace_cpu_times_free(times);
	return r;
}

/*
 * Fewer CPUs than asked: a warning (exit 0), or with --strict a failure
 * (exit 75, the claim given back), the same rule and words as
 * rtplace-run's: who holds the CPUs left out, and a count above what the
 * daemon manages at all says how many to ask for at most.
 */
static int ctl_partial(struct ctl *c, const struct rtplace_request *req, const struct rtplace_answer *ans, bool strict)
{
	char holders[HOLDERS_LEN] = "", most[96] = "";
	struct rtplace_cpu *cpus = NULL;
	struct rtplace_status st;
	cpu_set_t others;
	size_t n = 0;

	/* The CPUs the query could have had and did not get. */
	CPU_ZERO(&others);
	if (rtplace_cpus(c->rp, &cpus, &n) == 0)
		for (size_t i = 0; i < n && i < CPU_SETSIZE; i++)
			if ((!req->allowed || CPU_ISSET(i, req->allowed)) && (req->node < 0 || cpus[i].node == req->node) &&
			    !CPU_ISSET(i, &ans->set))
				CPU_SET(i, &others);
	rtplace_cpus_free(cpus);
	if (!holders_format(c->rp, req->prio, false, &others, holders, sizeof(holders)))
		snprintf(holders, sizeof(holders), "%s", ans->reason);
	if (rtplace_status(c->rp, &st) == 0 && req->count > st.nonline)
		snprintf(most, sizeof(most), "; rtplaced manages %u CPU%s: ask for at most %u", st.nonline,
			 st.nonline == 1 ? "" : "s", st.nonline);
	fprintf(stderr, "rtplacectl: query: %s: got %u of %u CPUs: %s%s\n", strict ? "error" : "warning", ans->count,
		req->count, holders, most);
	if (!strict)
		return EX_OK;
	if (ans->claim_id)
		rtplace_release(c->rp, ans->claim_id, NULL);
	return EX_TEMPFAIL;
}

/*
 * A range the daemon refused (-ERANGE): a count above the machine's CPUs
 * said as rtplace-run says a count above its affinity, with the most to
 * ask for; any other range (a node, a CPU) in the daemon's words. Returns
 * the exit status.
 */
static int ctl_range_refused(struct ctl *c, const struct rtplace_request *req)
{
	char reason[RTPLACE_REASON_LEN];
	struct rtplace_status st;

	/* Read before the status request replaces it. */
	if (rtplace_last_reason(c->rp, reason, sizeof(reason)) < 0)
		snprintf(reason, sizeof(reason), "%s", strerror(ERANGE));
	if (req->count > 1 && rtplace_status(c->rp, &st) == 0 && req->count > st.ncpus)
		return ctl_report(c, cli_exit_status(-ERANGE), "ERANGE",
				  "query refused: --count %u: rtplaced's machine has %u CPU%s (%u online and managed); "
				  "ask for at most %u",
				  req->count, st.ncpus, st.ncpus == 1 ? "" : "s", st.nonline, st.ncpus);
	return ctl_report(c, cli_exit_status(-ERANGE), "ERANGE", "query refused: %s", reason);
}

static const char *const ctl_owner_names[] = {
	[CTL_OWNER_SHELL] = "shell",
	[CTL_OWNER_PARENT] = "parent",
	[CTL_OWNER_PID] = "pid",
};

/*
 * With --verbose, who holds the claim just made and how it ends, on
 * stderr so that a `$(...)` that captures the answer still shows it: the
 * line a person reads to know that the claim outlives the command, and
 * until when. Without it success is quiet: the answer's claim line says
 * the same in short.
 */
static void ctl_claim_note(const struct ctl *c, const struct rtplace_answer *ans, pid_t pid, const char *comm,
			   enum ctl_owner owner)
{
	char lease[64] = "", who[160], parent[RTPLACE_COMM_LEN];

	if (ans->lease_ms != RTPLACE_LEASE_INFINITE)
		snprintf(lease, sizeof(lease), ", when its lease of %u ms runs out", ans->lease_ms);
	/* Passed over: a subshell (the shell's own comm) or a wrapper. */
	ctl_owner_comm(getppid(), parent, sizeof(parent));
	if (owner == CTL_OWNER_SHELL && pid != getppid() && !strcmp(parent, comm))
		snprintf(who, sizeof(who), "the calling shell, not the subshell %d that ran rtplacectl", (int)getppid());
	else if (owner == CTL_OWNER_SHELL && pid != getppid())
		snprintf(who, sizeof(who), "the calling shell, not %s %d that ran rtplacectl", parent, (int)getppid());
	else if (owner == CTL_OWNER_SHELL)
		snprintf(who, sizeof(who), "the calling shell");
	else if (owner == CTL_OWNER_PARENT)
		snprintf(who, sizeof(who), "rtplacectl's parent (--owner parent)");
	else
		snprintf(who, sizeof(who), "as --owner named");
	fprintf(stderr,
		"rtplacectl: %s: claim %" PRIu64 " is held by process %d (%s), %s; it ends when that process exits%s, "
		"or with 'rtplacectl release %" PRIu64 "'\n",
		c->command, ans->claim_id, (int)pid, comm, who, lease, ans->claim_id);
}

/* The name of user uid, or "uid N" where it has none. */
static void ctl_user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
}

/*
 * The daemon refused the claim's owner, a process of another user: which
 * process that was and the --owner choice that ties the claim to one of
 * the caller's instead, or how to get one when none is above rtplacectl
 * (a user switch such as runuser or setpriv right above it).
 */
static int ctl_owner_refused(struct ctl *c, pid_t pid, enum ctl_owner owner)
{
	char comm[RTPLACE_COMM_LEN], other[64], me[64], hint[512];
	pid_t shell = ctl_owner_calling_shell(getppid());
	uid_t uid;

	if (ctl_owner_uid(pid, &uid) < 0)
		return ctl_fail(c, "query refused", -EPERM);
	ctl_owner_comm(pid, comm, sizeof(comm));
	ctl_user_name(uid, other, sizeof(other));
	ctl_user_name(geteuid(), me, sizeof(me));
	if (owner != CTL_OWNER_SHELL && shell != pid && ctl_owner_may_own(shell))
		snprintf(hint, sizeof(hint), "--owner shell (the default) ties it to process %d, which runs as %s",
			 (int)shell, me);
	else if (owner != CTL_OWNER_PARENT && getppid() != pid && ctl_owner_may_own(getppid()))
		snprintf(hint, sizeof(hint), "--owner parent ties it to process %d, which runs as %s", (int)getppid(),
			 me);
	else
		snprintf(hint, sizeof(hint),
			 "no process above rtplacectl runs as %s (a user switch is right above it): run it from a "
			 "shell of %s's (runuser -u %s -- sh -c '...'), or give --owner PID of a process of %s's "
			 "that outlives the claim",
			 me, me, me, me);
	return ctl_report(c, EX_NOPERM, "EPERM",
			  "query refused: the claim would live with process %d (%s), which runs as %s, not as %s "
			  "who asks; %s",
			  (int)pid, comm, other, me, hint);
}

/*
 * The claim just made as `claims --json` shows it, read back from the
 * daemon so that a claim is one object in every command; from a daemon
 * older than the list of claims, the same fields from the answer. null
 * without a claim.
 */
static void ctl_query_claim_json(struct ctl *c, const struct rtplace_answer *ans, pid_t owner, const char *comm)
{
	struct rtplace_claim cl;

	if (!ans->claim_id) {
		printf("null");
		return;
	}
	if (rtplace_claim(c->rp, ans->claim_id, &cl) == 0) {
		ctl_json_claim(&cl);
		return;
	}
	cl = (struct rtplace_claim){
		.id = ans->claim_id,
		.level = ans->level,
		.flags = RTPLACE_CLAIM_F_UID | (owner ? RTPLACE_CLAIM_F_OWNER_EXIT | RTPLACE_CLAIM_F_PID
						     : RTPLACE_CLAIM_F_CONNECTION) |
			 (ans->lease_ms != RTPLACE_LEASE_INFINITE ? RTPLACE_CLAIM_F_LEASE : 0),
		.ncpus = ans->count,
		.owner_uid = geteuid(),
		.owner_pid = owner,
		.lease_left_ms = ans->lease_ms,
	};
	snprintf(cl.owner_comm, sizeof(cl.owner_comm), "%s", comm);
	cl.cpus = ans->set;
	ctl_json_claim(&cl);
}

/* Longer than the rest: one case per option, in --help's order, which split
 * into functions would only scatter (ctl.h says what it does). */
int ctl_query_parse(struct ctl *c, int argc, char **argv, struct rtplace_request *req,
			   struct ctl_query_opts *q)
{
	struct ctl_getopt g = { 0 };
	bool have_prio = false, have_owner = false;
	long v;
	int o, r, li = 0;

	while ((o = ctl_getopt(c, &g, argc, argv, 0, &li, &r)) != -1) {
		switch (o) {
		case 'p':
			if (cli_parse_long(optarg, RTPLACE_PRIO_MIN, RTPLACE_PRIO_MAX, &v) < 0)
				return ctl_usage_error(c, "--prio %s: not a priority 1..99", optarg);
			req->prio = (int)v;
			have_prio = true;
			break;
		case 'P':
			if (cli_parse_policy(optarg, &req->policy) < 0)
				return ctl_usage_error(c, "--policy %s: not fifo or rr", optarg);
			break;
		case 'n':
			if (cli_parse_long(optarg, 1, RTPLACE_ANSWER_MAX, &v) < 0)
				return ctl_usage_error(c, "--%s %s: not a count 1..256%s", g.longs[li].name, optarg,
						       strpbrk(optarg, "-,") ? " (a CPU list is --cpu-list)" : "");
			req->count = (unsigned)v;
			break;
		case 'c':
			if (cpuset_parse(optarg, &q->allowed) < 0 || cpuset_empty(&q->allowed))
				return ctl_usage_error(c, "--cpu-list %s: not a CPU list (e.g. 0-3,8)", optarg);
			req->allowed = (const cpu_set_t *)(const void *)&q->allowed;
			req->allowed_size = sizeof(q->allowed);
			break;
		case 'N':
			if (cli_parse_long(optarg, 0, RTPLACE_MAX_CPUS - 1, &v) < 0)
				return ctl_usage_error(c, "--node %s: not a node id", optarg);
			req->node = (int)v;
			break;
		case 'a':
			if (cli_parse_long(optarg, 0, RTPLACE_MAX_CPUS - 1, &v) < 0)
				return ctl_usage_error(c, "--near %s: not a CPU id", optarg);
			req->near_cpu = (int)v;
			break;
		case 'C':
			if (cli_parse_long(optarg, 0, UINT32_MAX - 1, &v) < 0)
				return ctl_usage_error(c, "--claim %s: not a lease in ms", optarg);
			req->flags |= RTPLACE_QUERY_F_CLAIM;
			req->lease_ms = (uint32_t)v;
			break;
		case 'o':
			if (!strcmp(optarg, "shell")) {
				q->owner = CTL_OWNER_SHELL;
			} else if (!strcmp(optarg, "parent")) {
				q->owner = CTL_OWNER_PARENT;
			} else if (cli_parse_long(optarg, 1, INT32_MAX, &v) == 0) {
				q->owner = CTL_OWNER_PID;
				req->owner_pid = (pid_t)v;
			} else {
				return ctl_usage_error(c, "--owner %s: not a process id, shell or parent", optarg);
			}
			have_owner = true;
			break;
		case 'x':
			req->flags |= RTPLACE_QUERY_F_EXCLUSIVE;
			break;
		case 'I':
			req->flags |= RTPLACE_QUERY_F_EXCLUSIVE | RTPLACE_QUERY_F_ISOLATE;
			break;
		case 'i':
			req->flags |= RTPLACE_QUERY_F_EXCLUSIVE | RTPLACE_QUERY_F_ISOLATE | RTPLACE_QUERY_F_ISOLATE_TRY;
			break;
		case 's':
			q->strict = true;
			break;
		case 'L':
			q->local = true;
			break;
		case 'v':
			q->verbose = true;
			break;
		}
	}
	if (r)
		return r < 0 ? EX_OK : r;
	if (!have_prio)
		return ctl_usage_error(c, "%s", "--prio is required");
	if ((have_owner || req->flags & RTPLACE_QUERY_F_EXCLUSIVE) && !(req->flags & RTPLACE_QUERY_F_CLAIM))
		return ctl_usage_error(c, "%s", "--owner, --exclusive and --isolate[-if-possible] need --claim");
	if (q->local && req->flags & RTPLACE_QUERY_F_CLAIM)
		return ctl_usage_error(c, "%s", "--local answers without claiming: drop --claim or --local");
	/* rtplacectl exits at once: a claim tied to its connection would end
	 * with it, so it lives with a process, by default the calling shell
	 * (ctl-owner.c: not the subshell of a $(...)). */
	if (q->owner == CTL_OWNER_PARENT)
		req->owner_pid = getppid();
	else if (q->owner == CTL_OWNER_SHELL && req->flags & RTPLACE_QUERY_F_CLAIM)
		req->owner_pid = ctl_owner_calling_shell(getppid());
	return CTL_GO_ON;
}

/* `query --json`'s answer: one object. */
static void ctl_query_print_json(struct ctl *c, const struct rtplace_answer *ans, const struct rtplace_request *req,
				 enum ctl_owner owner, const char *list, const char *comm)
{
	printf("{\"count\": %u, \"cpus\": [", ans->count);
	for (unsigned i = 0; i < ans->count; i++)
		printf("%s{\"cpu\": %d, \"level\": \"%s\"}", i ? ", " : "", ans->cpus[i],
		       rtplace_level_name(ans->levels[i]));
	printf("], \"cpu_list\": \"%s\", \"level\": ", list);
	if (ans->count)
		printf("\"%s\"", rtplace_level_name(ans->level));
	else
		printf("null");
	printf(", \"claim\": ");
	ctl_query_claim_json(c, ans, req->owner_pid, comm);
	printf(", \"owner\": ");
	if (ans->claim_id)
		printf("\"%s\"", ctl_owner_names[owner]);
	else
		printf("null");
	printf(", \"reason\": ");
	ctl_json_string(ans->reason);
	printf("}\n");
}

/* `query`'s answer as lines; a lease shorter than asked (lease_cut) is
 * said once, beside the daemon's reason. */
static void ctl_query_print_text(const struct rtplace_answer *ans, pid_t owner_pid, const char *list,
				 const char *comm, const char *lease_cut)
{
	if (ans->count == 0) {
		printf("no CPU: %s\n", ans->reason);
		return;
	}
	printf("cpus    %s\n", list);
	printf("order   ");
	for (unsigned i = 0; i < ans->count; i++)
		printf("%s%d(%s)", i ? " " : "", ans->cpus[i], rtplace_level_name(ans->levels[i]));
	printf("\nlevel   %s\n", rtplace_level_name(ans->level));
	if (ans->claim_id && ans->lease_ms == RTPLACE_LEASE_INFINITE)
		printf("claim   %" PRIu64 " (no lease; until process %d %s exits, or 'rtplacectl release %" PRIu64
		       "')\n",
		       ans->claim_id, (int)owner_pid, comm, ans->claim_id);
	else if (ans->claim_id)
		printf("claim   %" PRIu64 " (lease %u ms, or until process %d %s exits, or 'rtplacectl release %" PRIu64
		       "')\n",
		       ans->claim_id, ans->lease_ms, (int)owner_pid, comm, ans->claim_id);
	else
		printf("claim   none\n");
	if (ans->reason[0] || lease_cut[0])
		printf("reason  %s%s%s\n", ans->reason, ans->reason[0] && lease_cut[0] ? "; " : "", lease_cut);
}

static int ctl_query(struct ctl *c, int argc, char **argv)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	struct ctl_query_opts q = { .owner = CTL_OWNER_SHELL };
	struct rtplace_answer ans;
	struct rtplace_cpumask chosen;
	char list[CPUSET_LIST_MAX], comm[RTPLACE_COMM_LEN] = "", lease_cut[64] = "";
	int r;

	req.prio = 0;
	r = ctl_query_parse(c, argc, argv, &req, &q);
	if (r != CTL_GO_ON)
		return r;
	r = ctl_connect(c);
	if (r)
		return r;
	if (q.local) {
		r = rtplace_local_open(c->rp);
		if (r < 0)
			return ctl_fail(c, r == -EOPNOTSUPP ? "the daemon offers no map to read locally (drop --local)"
							    : "cannot read the daemon's map locally",
					r);
	}
	r = rtplace_query(c->rp, &req, &ans);
	if (r == -EPERM && req.owner_pid && !ctl_owner_may_own(req.owner_pid))
		return ctl_owner_refused(c, req.owner_pid, q.owner);
	if (r == -ERANGE)
		return ctl_range_refused(c, &req);
	if (r < 0)
		return ctl_fail(c, "query refused", r);
	/* The daemon's reason names the cut itself when no level note took
	 * its place. */
	if (ans.claim_id && req.lease_ms != RTPLACE_LEASE_DEFAULT && ans.lease_ms < req.lease_ms &&
	    !strstr(ans.reason, "lease cut"))
		snprintf(lease_cut, sizeof(lease_cut), "lease cut from %u to %u ms", req.lease_ms, ans.lease_ms);
	if (ans.claim_id) {
		ctl_owner_comm(req.owner_pid, comm, sizeof(comm));
		if (q.verbose)
			ctl_claim_note(c, &ans, req.owner_pid, comm, q.owner);
	}
	cpuset_zero(&chosen);
	for (unsigned i = 0; i < ans.count; i++)
		cpuset_set(&chosen, (unsigned)ans.cpus[i]);
	if (cpuset_format(&chosen, list, sizeof(list)) < 0)
		snprintf(list, sizeof(list), "?");
	if (c->json)
		ctl_query_print_json(c, &ans, &req, q.owner, list, comm);
	else
		ctl_query_print_text(&ans, req.owner_pid, list, comm, lease_cut);
	/* An empty answer is an answer, but a script acting on it needs to know. */
	if (ans.count == 0)
		return EX_TEMPFAIL;
	if (ans.count < req.count)
		return ctl_partial(c, &req, &ans, q.strict);
	return EX_OK;
}

static int ctl_release(struct ctl *c, int argc, char **argv)
{
	unsigned ncpus = 0;
	const char *arg;
	uint64_t id;
	char *end;
	int r;

	r = ctl_simple_options(c, argc, argv, 1);
	if (r)
		return r < 0 ? EX_OK : r;
	arg = argv[optind];
	errno = 0;
	id = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || id == 0 || arg[0] == '-')
		return ctl_usage_error(c, "%s: not a claim id", arg);
	r = ctl_connect(c);
	if (r)
		return r;
	r = rtplace_release(c->rp, id, &ncpus);
	if (r < 0)
		return ctl_fail(c, "cannot release the claim", r);
	if (c->json)
		printf("{\"id\": %" PRIu64 ", \"released\": true, \"ncpus\": %u}\n", id, ncpus);
	else
		printf("released claim %" PRIu64 " (%u CPU%s)\n", id, ncpus, ncpus == 1 ? "" : "s");
	return EX_OK;
}

/* Exits non-zero when the daemon keeps its running configuration, with
 * its reason: `systemctl reload` fails with it (the unit's ExecReload=). */
static int ctl_reload(struct ctl *c, int argc, char **argv)
{
	int r = ctl_simple_connect(c, argc, argv);

	if (r)
		return r < 0 ? EX_OK : r;
	r = rtplace_reload(c->rp);
	if (r < 0)
		return ctl_fail(c, "the daemon keeps its running configuration", r);
	if (c->json)
		printf("{\"reloaded\": true}\n");
	else
		printf("configuration reloaded\n");
	return EX_OK;
}

static int ctl_move(struct ctl *c, int argc, char **argv)
{
	struct ctl_getopt g = { 0 };
	struct rtplace_move_request mv = { .policy = SCHED_FIFO };
	struct rtplace_move_result res;
	char cpus[CPUSET_LIST_MAX], prev[CPUSET_LIST_MAX];
	bool all = false;
	long v;
	int o, r;

	while ((o = ctl_getopt(c, &g, argc, argv, 0, NULL, &r)) != -1) {
		switch (o) {
		case 't':
		case 'p':
			if (mv.tid)
				return ctl_usage_error(c, "%s", "give one of --tid and --pid, once");
			if (cli_parse_long(optarg, 1, INT32_MAX, &v) < 0)
				return ctl_usage_error(c, "%s %s: not a %s id", o == 't' ? "--tid" : "--pid", optarg,
						       o == 't' ? "thread" : "process");
			mv.tid = (pid_t)v;
			break;
		case 'a':
			all = true;
			mv.flags |= RTPLACE_MOVE_F_PROCESS;
			break;
		case 'r':
			if (cli_parse_long(optarg, RTPLACE_PRIO_MIN, RTPLACE_PRIO_MAX, &v) < 0)
				return ctl_usage_error(c, "--prio %s: not a priority 1..99", optarg);
			mv.prio = (int)v;
			mv.flags |= RTPLACE_MOVE_F_SET_SCHED;
			break;
		case 'P':
			if (cli_parse_policy(optarg, &mv.policy) < 0)
				return ctl_usage_error(c, "--policy %s: not fifo or rr", optarg);
			break;
		case 'c':
			if (cli_parse_cpus(optarg, &mv.cpus) < 0)
				return ctl_usage_error(c, "--cpu-list %s: not a CPU list (e.g. 0-3,8)", optarg);
			mv.flags |= RTPLACE_MOVE_F_SET_AFFINITY;
			break;
		case 'm':
			return ctl_usage_error(c, "%s", "--cpus is a count; the CPUs to move to are --cpu-list LIST");
		case 'f':
			mv.flags |= RTPLACE_MOVE_F_SYSTEM;
			break;
		}
	}
	if (r)
		return r < 0 ? EX_OK : r;
	if (mv.tid == 0)
		return ctl_usage_error(c, "%s", "--tid or --pid is required");
	if (!(mv.flags & (RTPLACE_MOVE_F_SET_SCHED | RTPLACE_MOVE_F_SET_AFFINITY)))
		return ctl_usage_error(c, "%s", "nothing to do: give --prio and/or --cpu-list");
	r = ctl_connect(c);
	if (r)
		return r;
	/* A daemon on a simulated topology says why it moves nothing. */
	r = rtplace_move(c->rp, &mv, &res);
	if (r < 0)
		return ctl_fail(c, "move refused", r);
	cli_format_cpus(&res.cpus, cpus, sizeof(cpus));
	cli_format_cpus(&res.prev_cpus, prev, sizeof(prev));
	if (c->json)
		printf("{\"tid\": %d, \"all\": %s, \"policy\": \"%s\", \"prio\": %d, \"cpu_list\": \"%s\", "
		       "\"prev_policy\": \"%s\", \"prev_prio\": %d, \"prev_cpu_list\": \"%s\"}\n",
		       (int)res.tid, all ? "true" : "false", ctl_policy_name(res.policy), res.prio, cpus,
		       ctl_policy_name(res.prev_policy), res.prev_prio, prev);
	else if (all)
		printf("every thread of process %d: %s %d on %s (thread %d was %s %d on %s)\n", (int)res.tid,
		       ctl_policy_name(res.policy), res.prio, cpus, (int)res.tid, ctl_policy_name(res.prev_policy),
		       res.prev_prio, prev);
	else
		printf("thread %d: %s %d on %s (was %s %d on %s)\n", (int)res.tid, ctl_policy_name(res.policy),
		       res.prio, cpus, ctl_policy_name(res.prev_policy), res.prev_prio, prev);
	return EX_OK;
}

/* Records taken from the ring per read. */
#define CTL_WATCH_BATCH 64
/* The table's width with the date in TIME; 80 columns hold it without. */
#define CTL_WATCH_WIDE_COLS 89

/*
 * A record's CLOCK_MONOTONIC time as wall-clock time: local time in the
 * table, the time of day ("21:51:56.123456") in 80 columns and with the
 * date ("2026-11-30T21:51:56.123456") on a wider terminal, ISO 8601 with
 * the UTC offset in JSON. offset_ns is CLOCK_REALTIME - CLOCK_MONOTONIC,
 * read per batch.
 */
static void ctl_watch_time(const struct rtplace_notification *n, int64_t offset_ns, bool zone, bool date,
			   char *buf, size_t len)
{
	int64_t wall = (int64_t)n->time_ns + offset_ns;
	time_t sec = (time_t)(wall / 1000000000);
	struct tm tm;
	size_t k;

	if (!localtime_r(&sec, &tm) || (k = strftime(buf, len, date ? "%Y-%m-%dT%H:%M:%S" : "%H:%M:%S", &tm)) == 0) {
		snprintf(buf, len, "?");
		return;
	}
	k += (size_t)snprintf(buf + k, len - k, ".%06u", (unsigned)(wall % 1000000000 / 1000));
	if (zone && k < len)
		snprintf(buf + k, len - k, "%c%02ld:%02ld", tm.tm_gmtoff < 0 ? '-' : '+',
			 labs(tm.tm_gmtoff) / 3600, labs(tm.tm_gmtoff) % 3600 / 60);
}

static int64_t ctl_clock_offset_ns(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000 + (rt.tv_nsec - mono.tv_nsec);
}

static bool ctl_watch_is_claim(unsigned type)
{
	return type == RTPLACE_NOTIFY_CLAIM_CREATED || type == RTPLACE_NOTIFY_CLAIM_RELEASED ||
	       type == RTPLACE_NOTIFY_CLAIM_EXPIRED || type == RTPLACE_NOTIFY_CLAIM_REVOKED ||
	       type == RTPLACE_NOTIFY_ISOLATED || type == RTPLACE_NOTIFY_ISOLATION_RELEASED;
}

/* Records whose CPU is where the claim went (TO), not where it left. */
static bool ctl_watch_is_arrival(unsigned type)
{
	return type == RTPLACE_NOTIFY_CLAIM_CREATED || type == RTPLACE_NOTIFY_ISOLATED;
}

static const struct {
	unsigned bit;
	const char *name;
} ctl_isolated_bits[] = {
	{ RTPLACE_NOTIFY_ISOLATED_PARTITION, "partition" },
	{ RTPLACE_NOTIFY_ISOLATED_IRQS, "irqs" },
	{ RTPLACE_NOTIFY_ISOLATED_WORKQUEUES, "workqueues" },
	{ RTPLACE_NOTIFY_ISOLATED_IRQBALANCE, "irqbalance" },
	{ RTPLACE_NOTIFY_ISOLATED_MANAGED_KEPT, "managed-irqs" },
	{ RTPLACE_NOTIFY_ISOLATED_NOT_WRITTEN, "not-written" },
	{ RTPLACE_NOTIFY_ISOLATED_IRQBALANCE_UNREACHED, "irqbalance-unreached" },
};
/* The bits below this one say what was taken away, the rest what was not. */
#define CTL_ISOLATED_SHORT RTPLACE_NOTIFY_ISOLATED_MANAGED_KEPT

static const char *ctl_isolation_end_name(unsigned why)
{
	static const char *const names[] = {
		[RTPLACE_NOTIFY_ISOLATION_END_RELEASED] = "release",
		[RTPLACE_NOTIFY_ISOLATION_END_EXPIRED] = "expiry",
		[RTPLACE_NOTIFY_ISOLATION_END_OWNER_EXITED] = "owner-exit",
		[RTPLACE_NOTIFY_ISOLATION_END_REVOKED] = "cpu-offline",
		[RTPLACE_NOTIFY_ISOLATION_END_STOP] = "stop",
	};

	return why < sizeof(names) / sizeof(names[0]) && names[why] ? names[why] : "?";
}

/*
 * An isolation record's detail in words: ISOLATED as "took=A,B" then
 * " kept=C" (what could not be), ISOLATION_RELEASED as "why=W"; JSON
 * members with json. Nothing for other records.
 */
static void ctl_watch_detail(const struct rtplace_notification *n, bool json)
{
	bool any[2] = { false, false };

	if (n->type == RTPLACE_NOTIFY_ISOLATION_RELEASED) {
		printf(json ? ", \"why\": \"%s\"" : " why=%s", ctl_isolation_end_name(n->detail));
		return;
	}
	if (n->type != RTPLACE_NOTIFY_ISOLATED)
		return;
	for (int part = 0; part < 2; part++) {
		for (size_t i = 0; i < sizeof(ctl_isolated_bits) / sizeof(ctl_isolated_bits[0]); i++) {
			unsigned bit = ctl_isolated_bits[i].bit;

			if (!(n->detail & bit) || (bit < CTL_ISOLATED_SHORT) != (part == 0))
				continue;
			if (!any[part])
				printf(json ? ", \"%s\": [\"%s\"" : " %s=%s", part ? (json ? "not_isolated" : "kept") :
						(json ? "isolated" : "took"), ctl_isolated_bits[i].name);
			else
				printf(json ? ", \"%s\"" : ",%s", ctl_isolated_bits[i].name);
			any[part] = true;
		}
		if (json)
			printf(any[part] ? "]" : ", \"%s\": []", part ? "not_isolated" : "isolated");
	}
}

/*
 * A record in the columns' own words. A claim record carries the claim's
 * owner process (0: its connection), its first CPU in from_cpu and the
 * priority it is held at, with no policy: the CPU is where the claim went
 * (TO) when it was made and where it left (FROM) when it ended, and the
 * scheduling column says the level it is held at ("rt50", as `claims`
 * says it; "-" for priority 0, which an exclusive claim's record has) where
 * a move's says policy and priority ("fifo/50"). -1 (not one CPU,
 * unknown) is "-" in the table and stays -1 in JSON, as librtplace has it.
 */
struct ctl_watch_fields {
	int tid;       /* 0: none */
	int from, to;  /* -1: none */
	char sched[16];
	bool claim;
};

static void ctl_watch_fields(const struct rtplace_notification *n, struct ctl_watch_fields *ret)
{
	ret->claim = ctl_watch_is_claim(n->type);
	ret->tid = (int)n->tid;
	ret->from = n->from_cpu;
	ret->to = n->to_cpu;
	if (!ret->claim) {
		if (n->policy == SCHED_FIFO || n->policy == SCHED_RR)
			snprintf(ret->sched, sizeof(ret->sched), "%s/%d", ctl_policy_name(n->policy), n->prio);
		else
			snprintf(ret->sched, sizeof(ret->sched), "other");
		return;
	}
	ret->from = ctl_watch_is_arrival(n->type) ? -1 : n->from_cpu;
	ret->to = ctl_watch_is_arrival(n->type) ? n->from_cpu : -1;
	if (n->prio >= RTPLACE_PRIO_MIN && n->prio <= RTPLACE_PRIO_MAX)
		snprintf(ret->sched, sizeof(ret->sched), "%s",
			 rtplace_level_name(RTPLACE_LEVEL_RT1 + (unsigned)n->prio - 1));
	else
		snprintf(ret->sched, sizeof(ret->sched), "-");
}

static void ctl_cell_int(char *buf, size_t len, int v, int none)
{
	if (v == none)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%d", v);
}

static void ctl_watch_print(const struct ctl *c, const struct rtplace_notification *n, int64_t offset_ns,
			    bool wide)
{
	char when[48], claim[24] = "-", tid[16], from[16], to[16];
	struct ctl_watch_fields f;

	ctl_watch_fields(n, &f);
	ctl_watch_time(n, offset_ns, c->json, wide || c->json, when, sizeof(when));
	if (c->json) {
		printf("{\"seq\": %" PRIu64 ", \"time\": \"%s\", \"time_ns\": %" PRIu64 ", \"type\": \"%s\", "
		       "\"type_id\": %u, \"tid\": ",
		       n->seq, when, n->time_ns, rtplace_notification_name(n->type), n->type);
		if (f.claim && f.tid == 0)
			printf("null");
		else
			printf("%d", f.tid);
		printf(", \"uid\": %u", (unsigned)n->uid);
		printf(", \"from_cpu\": %d, \"to_cpu\": %d", f.from, f.to);
		if (f.claim && n->prio > 0)
			printf(", \"policy\": null, \"prio\": %d, \"level\": \"%s\"", n->prio, f.sched);
		else if (f.claim)
			printf(", \"policy\": null, \"prio\": 0, \"level\": null");
		else
			printf(", \"policy\": \"%s\", \"prio\": %d, \"level\": null", ctl_policy_name(n->policy), n->prio);
		ctl_watch_detail(n, true);
		if (n->claim_id)
			printf(", \"claim\": %" PRIu64 "}\n", n->claim_id);
		else
			printf(", \"claim\": null}\n");
		return;
	}
	if (n->claim_id)
		snprintf(claim, sizeof(claim), "%" PRIu64, n->claim_id);
	ctl_cell_int(tid, sizeof(tid), f.tid, f.claim ? 0 : INT_MIN);
	ctl_cell_int(from, sizeof(from), f.from, -1);
	ctl_cell_int(to, sizeof(to), f.to, -1);
	printf("%6" PRIu64 " %-*s %-14s %7s %6u %4s %4s %-8s %6s", n->seq, wide ? 26 : 15, when,
	       rtplace_notification_name(n->type), tid, (unsigned)n->uid, from, to, f.sched, claim);
	ctl_watch_detail(n, false);
	printf("\n");
}

static void ctl_watch_lost(const struct ctl *c, uint64_t lost)
{
	if (c->json)
		printf("{\"lost\": %" PRIu64 "}\n", lost);
	else
		printf("# lost %" PRIu64 " records: the ring was full (read faster, or raise [notify] "
		       "ring-records)\n", lost);
}

/* A watch between its steps. */
struct ctl_watch {
	struct rtplace_sub *sub;
	int sfd;                /* a signalfd for SIGINT and SIGTERM */
	uint64_t count, seen;   /* records to print (0: no limit), and printed */
	bool wide;              /* the date fits beside the rest */
};

/* Blocks SIGINT and SIGTERM into w->sfd, connects and subscribes: 0, or
 * the exit status (what was opened is in w, for the caller to close). */
static int ctl_watch_open(struct ctl *c, struct ctl_watch *w)
{
	sigset_t sigs;
	int r;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0 || (w->sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0)
		return ctl_fail(c, "cannot watch for signals", -errno);
	r = ctl_connect(c);
	if (r)
		return r;
	r = rtplace_subscribe(c->rp, &w->sub);
	if (r == -EOPNOTSUPP)
		return ctl_report(c, EX_UNAVAILABLE, ctl_errno_name(r), "this rtplaced does not publish notification records");
	if (r < 0)
		return ctl_fail(c, "cannot subscribe to notification records", r);
	/* The header says "subscribed": nothing published after it is missed. */
	if (!c->json) {
		printf("%6s %-*s %-14s %7s %6s %4s %4s %-8s %6s\n", "SEQ", w->wide ? 26 : 15, "TIME", "TYPE", "TID",
		       "UID", "FROM", "TO", "SCHED", "CLAIM");
		fflush(stdout);
	}
	return 0;
}

/* Reads and prints the records waiting: the exit status, with *ret_done
 * set when the watch ends there (its count reached, the daemon gone, an
 * error). */
static int ctl_watch_batch(struct ctl *c, struct ctl_watch *w, bool *ret_done)
{
	struct rtplace_notification recs[CTL_WATCH_BATCH];
	/* With --count, take no record beyond it: the rest stay unread. */
	const size_t want = w->count && w->count - w->seen < CTL_WATCH_BATCH ? (size_t)(w->count - w->seen)
									       : CTL_WATCH_BATCH;
	size_t n = 0;
	uint64_t lost = 0;
	int64_t offset_ns;
	int r = rtplace_sub_read(w->sub, recs, want, &n, &lost);

	*ret_done = true;
	if (r == -ECONNRESET) {
		fflush(stdout);
		return ctl_report(c, EX_UNAVAILABLE, ctl_errno_name(r), "rtplaced closed the subscription (it stopped?)");
	}
	if (r < 0)
		return ctl_fail(c, "cannot read notification records", r);
	if (lost)
		ctl_watch_lost(c, lost);
	offset_ns = ctl_clock_offset_ns();
	for (size_t i = 0; i < n; i++)
		ctl_watch_print(c, &recs[i], offset_ns, w->wide);
	w->seen += n;
	/* Each batch reaches a pipe at once, not when stdio's buffer fills. */
	if (fflush(stdout) != 0)
		return EX_IOERR;
	*ret_done = w->count && w->seen >= w->count;
	return EX_OK;
}

/*
 * Prints records as they arrive until SIGINT or SIGTERM (status 0), until
 * count records (0: no limit), or until the daemon goes away. One loop
 * waits on both the subscription and a signalfd, so a signal never
 * interrupts a half-printed line.
 */
static int ctl_watch(struct ctl *c, int argc, char **argv)
{
	struct ctl_getopt g = { 0 };
	/* The date fits beside the rest from CTL_WATCH_WIDE_COLS columns. */
	struct ctl_watch w = { .sfd = -1, .wide = ctl_columns() >= CTL_WATCH_WIDE_COLS };
	struct pollfd pfd[2];
	bool done = false;
	long v;
	int o, r;

	while ((o = ctl_getopt(c, &g, argc, argv, 0, NULL, &r)) != -1) {
		switch (o) {
		case 'n':
			if (cli_parse_long(optarg, 1, LONG_MAX, &v) < 0)
				return ctl_usage_error(c, "--count %s: not a positive count", optarg);
			w.count = (uint64_t)v;
			break;
		}
	}
	if (r)
		return r < 0 ? EX_OK : r;
	r = ctl_watch_open(c, &w);
	if (r == 0) {
		pfd[0] = (struct pollfd){ .fd = rtplace_sub_fd(w.sub), .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = w.sfd, .events = POLLIN };
	}
	while (r == 0 && !done) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno != EINTR)
				r = ctl_fail(c, "cannot wait for records", -errno);
			continue;
		}
		if (pfd[1].revents)
			break;
		r = ctl_watch_batch(c, &w, &done);
	}
	rtplace_sub_free(w.sub);
	if (w.sfd >= 0)
		close(w.sfd);
	return r;
}

/* How a claim ends besides release, as `claims` names it. */
static const char *ctl_claim_end(const struct rtplace_claim *cl)
{
	return cl->flags & RTPLACE_CLAIM_F_OWNER_EXIT ? "owner-exit" : "connection";
}

void ctl_json_claim(const struct rtplace_claim *cl)
{
	char list[CPUSET_LIST_MAX];
	const bool pid = cl->flags & RTPLACE_CLAIM_F_PID;

	cli_format_cpus(&cl->cpus, list, sizeof(list));
	printf("{\"id\": %" PRIu64 ", \"level\": ", cl->id);
	ctl_json_string(rtplace_level_name(cl->level));
	printf(", \"exclusive\": %s, \"isolated\": %s, \"ncpus\": %u, \"cpu_list\": ",
	       cl->flags & RTPLACE_CLAIM_F_EXCLUSIVE ? "true" : "false",
	       cl->flags & RTPLACE_CLAIM_F_ISOLATED ? "true" : "false", cl->ncpus);
	ctl_json_string(list);
	printf(", \"other_user\": %s, \"owner_uid\": ", cl->flags & RTPLACE_CLAIM_F_OTHER_USER ? "true" : "false");
	if (cl->flags & RTPLACE_CLAIM_F_UID)
		printf("%u", (unsigned)cl->owner_uid);
	else
		printf("null");
	printf(", \"owner_pid\": ");
	if (pid)
		printf("%d, \"owner_comm\": ", (int)cl->owner_pid);
	else
		printf("null, \"owner_comm\": null");
	if (pid)
		ctl_json_string(cl->owner_comm);
	printf(", \"ends\": [\"%s\"%s, \"release\"], \"lease_left_ms\": ", ctl_claim_end(cl),
	       cl->flags & RTPLACE_CLAIM_F_LEASE ? ", \"lease\"" : "");
	if (cl->flags & RTPLACE_CLAIM_F_LEASE)
		printf("%u}", cl->lease_left_ms);
	else
		printf("null}");
}

/* The LEVEL column of `claims`: isolated and exclusive claims by what
 * they keep from others, the rest by their level. */
static const char *ctl_claim_level(const struct rtplace_claim *cl)
{
	if (cl->flags & RTPLACE_CLAIM_F_ISOLATED)
		return "isolated";
	return cl->flags & RTPLACE_CLAIM_F_EXCLUSIVE ? "exclusive" : rtplace_level_name(cl->level);
}

/* Columns of the whole table; narrower, the lease left gets a column of
 * its own in seconds instead of a parenthesis in ENDS. */
#define CTL_CLAIMS_WIDE_COLS 100

static void ctl_claims_row(const struct rtplace_claim *cl, bool wide)
{
	char list[CPUSET_LIST_MAX], uid[24] = "other", pid[24] = "-", ends[64], lease[24] = "-";

	cli_format_cpus(&cl->cpus, list, sizeof(list));
	if (cl->flags & RTPLACE_CLAIM_F_UID)
		snprintf(uid, sizeof(uid), "%u", (unsigned)cl->owner_uid);
	if (cl->flags & RTPLACE_CLAIM_F_PID)
		snprintf(pid, sizeof(pid), "%d", (int)cl->owner_pid);
	snprintf(ends, sizeof(ends), "%s", ctl_claim_end(cl));
	if (!wide) {
		if (cl->flags & RTPLACE_CLAIM_F_LEASE)
			snprintf(lease, sizeof(lease), "%.1f", cl->lease_left_ms / 1000.0);
		printf("%6" PRIu64 " %-9s %-10s %7s %-12.12s %6s %-10s %s\n", cl->id,
		       ctl_claim_level(cl), list, pid,
		       cl->flags & RTPLACE_CLAIM_F_PID && cl->owner_comm[0] ? cl->owner_comm : "-", uid, ends, lease);
		return;
	}
	if (cl->flags & RTPLACE_CLAIM_F_LEASE)
		snprintf(ends + strlen(ends), sizeof(ends) - strlen(ends), ",lease(%u ms left)", cl->lease_left_ms);
	printf("%6" PRIu64 " %-9s %-12s %7s %-16s %6s %s\n", cl->id,
	       ctl_claim_level(cl), list, pid,
	       cl->flags & RTPLACE_CLAIM_F_PID && cl->owner_comm[0] ? cl->owner_comm : "-", uid, ends);
}

/* `claims`: every claim the daemon holds, its owner where the caller may
 * see it. */
static int ctl_claims(struct ctl *c, int argc, char **argv)
{
	struct rtplace_claim *claims = NULL;
	const bool wide = ctl_columns() >= CTL_CLAIMS_WIDE_COLS;
	size_t n = 0;
	int r;

	r = ctl_simple_connect(c, argc, argv);
	if (r)
		return r < 0 ? EX_OK : r;
	r = rtplace_claims(c->rp, &claims, &n);
	if (r == -EOPNOTSUPP)
		return ctl_fail(c, "the daemon is older than the list of claims ('rtplacectl cpus' names each CPU's "
			       "claim by its id)", r);
	if (r < 0)
		return ctl_fail(c, "cannot read the claims", r);
	if (c->json)
		printf("{\"claims\": [");
	else if (wide)
		printf("%6s %-9s %-12s %7s %-16s %6s %s\n", "CLAIM", "LEVEL", "CPUS", "PID", "COMM", "UID", "ENDS");
	else
		printf("%6s %-9s %-10s %7s %-12s %6s %-10s %s\n", "CLAIM", "LEVEL", "CPUS", "PID", "COMM", "UID", "ENDS",
		       "LEASE-S");
	for (size_t i = 0; i < n; i++) {
		if (c->json) {
			printf("%s\n  ", i ? "," : "");
			ctl_json_claim(&claims[i]);
		} else
			ctl_claims_row(&claims[i], wide);
	}
	if (c->json)
		printf("%s]}\n", n ? "\n" : "");
	rtplace_claims_free(claims);
	return EX_OK;
}

/* `help [COMMAND]`: what `rtplacectl --help` or `COMMAND --help` prints. */
static int ctl_help_command(struct ctl *c, int argc, char **argv)
{
	const struct ctl_command *cmd;
	struct ctl_getopt g = { 0 };
	int r;

	/* Only common options: none comes back. */
	while (ctl_getopt(c, &g, argc, argv, 1, NULL, &r) != -1)
		;
	if (r)
		return r < 0 ? EX_OK : r;
	if (optind == argc) {
		ctl_help(stdout);
		return EX_OK;
	}
	cmd = ctl_command_find(argv[optind]);
	if (!cmd)
		return ctl_usage_error(c, "unknown command %s", argv[optind]);
	ctl_command_help(stdout, cmd);
	return EX_OK;
}

/* Indexed by enum ctl_command_id, as ctl_commands[] is. */
static int (*const ctl_runners[])(struct ctl *c, int argc, char **argv) = {
	[CTL_CMD_STATUS] = ctl_status,   [CTL_CMD_CPUS] = ctl_cpus,   [CTL_CMD_TOP] = ctl_top,
	[CTL_CMD_QUERY] = ctl_query,     [CTL_CMD_RELEASE] = ctl_release, [CTL_CMD_MOVE] = ctl_move,
	[CTL_CMD_WATCH] = ctl_watch,     [CTL_CMD_HELP] = ctl_help_command, [CTL_CMD_CLAIMS] = ctl_claims,
	[CTL_CMD_EXPLAIN] = ctl_explain,
	[CTL_CMD_RELOAD] = ctl_reload,
};
_Static_assert(sizeof(ctl_runners) / sizeof(ctl_runners[0]) == CTL_CMD_COUNT, "a runner for every command");

int main(int argc, char **argv)
{
	struct ctl_getopt g;
	struct ctl c = { .command = "rtplacectl" };
	const struct ctl_command *cmd;
	int o, r;

	if (ctl_getopt_init(&g, "+", ctl_global_options, ctl_common_options) < 0)
		abort();
	/* Every usage error is one line of ours, not getopt's. */
	opterr = 0;
	while ((o = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
		switch (o) {
		case 'h':
			ctl_help(stdout);
			return EX_OK;
		case 'V':
			printf("rtplacectl %s\n", PACKAGE_VERSION);
			return EX_OK;
		case 'S':
		case 'j':
			ctl_common_option(&c, o, argc, argv);
			break;
		case ':':
			return ctl_report(&c, EX_USAGE, "", "%s needs a value; see 'rtplacectl --help'", argv[optind - 1]);
		default:
			if (optopt && optopt < 0x100)
				return ctl_report(&c, EX_USAGE, "", "unknown option -%c; see 'rtplacectl --help'", optopt);
			return ctl_report(&c, EX_USAGE, "", "unknown option %s; see 'rtplacectl --help'", argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		return ctl_report(&c, EX_USAGE, "", "no command given; see 'rtplacectl --help'");
	}
	cmd = ctl_command_find(argv[optind]);
	if (!cmd) {
		return ctl_report(&c, EX_USAGE, "", "unknown command %s; see 'rtplacectl --help'", argv[optind]);
	}
	c.command = cmd->name;
	c.id = (enum ctl_command_id)(cmd - ctl_commands);
	argv += optind;
	argc -= optind;
	/* Restart getopt for the command's own options (glibc: 0 resets). */
	optind = 0;
	r = ctl_runners[c.id](&c, argc, argv);
	rtplace_close(c.rp);
	if (fflush(stdout) != 0 && r == EX_OK)
		r = EX_IOERR;
	return r;
}
