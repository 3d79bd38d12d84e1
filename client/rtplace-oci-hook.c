/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtplace-oci-hook: places a container's RT threads (DESIGN §15). An OCI
 * runtime (runc, crun; podman and CRI-O through hooks.d) runs it at the
 * createRuntime stage, after the container's init process exists in its
 * namespaces and cgroups but before it executes the container's program.
 * The hook reads the container's state (id, pid, bundle, annotations) from
 * stdin and the bundle's config.json, asks rtplaced for CPUs inside the
 * container's cpuset with a claim owned by the init process, and pins the
 * init process to them at the RT policy the annotations ask for, or the
 * runtime spec's own process.scheduler and process.execCPUAffinity (runtime
 * spec 1.2; oci_spec_merge() says how the two combine). The
 * program the init process then executes, and every thread it starts,
 * inherit both; the claim ends when the init process does, however it ends
 * (and, for a container without CAP_SYS_NICE, at its lease's end).
 *
 * Only the init process's main thread (the one with tid == pid) is changed:
 * that is the thread that executes the container's program (runc locks its
 * init goroutine to it; crun is single-threaded), and exec keeps a thread's
 * affinity and policy. Other threads of the runtime's init die at the exec.
 *
 * The hook runs as root in the runtime's namespaces, so pids in the state
 * are the daemon's (the runtime and rtplaced share the host PID namespace).
 * Being root, it would get from rtplaced whatever the annotations ask, and
 * the annotations are the container author's: so it grants no more than
 * the container's own spec would let its process do itself, narrowed by
 * the node's [containers] policy (client/oci-rights.c), and asks the
 * daemon only then.
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
#include <sysexits.h>
#include <unistd.h>

#include <json-c/json.h>

#include "rtplace.h"

#include "cli.h"
#include "conf.h"
#include "cpuset.h"
#include "file.h"
#include "oci-rights.h"
#include "oci-spec.h"

_Static_assert(CONFIG_CONTAINER_CPUS_MAX == RTPLACE_ANSWER_MAX, "[containers] max-cpus is bounded by a claim's size");

/* What the runtime told us, and what the annotations ask for. */
struct hook {
	const char *id;           /* the container's id, for messages; NULL until read */
	pid_t pid;                /* its init process, in our PID namespace */
	const char *bundle;       /* folder of config.json */
	struct oci_ask ask;
	uint32_t lease_ms;        /* what the rights allow (oci_rights_lease_ms()) */
	const char *socket;
	const char *config;       /* rtplaced.conf, for [containers] */
	bool config_given;        /* --config: the file must exist */
};

static void hook_usage(FILE *f)
{
	fprintf(f, "usage: rtplace-oci-hook [--socket PATH] [--config FILE] < STATE\n\n"
		   "An OCI runtime hook (createRuntime stage): reads the container's state from stdin,\n"
		   "claims CPUs from rtplaced for its init process and sets the RT policy that the\n"
		   "container's io.rtplace.* annotations or process.scheduler ask for. See\n"
		   "rtplace-oci-hook(8).\n\n"
		   "  --socket PATH    the daemon's socket (default $" RTPLACE_SOCKET_ENV ", else "
		   RTPLACE_DEFAULT_SOCKET ")\n"
		   "  --config FILE    the node's policy ([containers] of rtplaced.conf; default "
		   CONFIG_DEFAULT_PATH ")\n"
		   "  -h, --help       print this help and exit\n"
		   "  -V, --version    print the version and exit\n");
}

static void hook_vmsg(const struct hook *h, const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "rtplace-oci-hook: ");
	if (h->id)
		fprintf(stderr, "container %s: ", h->id);
	if (what)
		fprintf(stderr, "%s: ", what);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
}

static int hook_error(const struct hook *h, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Reports an error; returns status, the hook's exit status. */
static int hook_error(const struct hook *h, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hook_vmsg(h, NULL, fmt, ap);
	va_end(ap);
	return status;
}

static int hook_unplaced(const struct hook *h, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * The daemon is absent or refused: with io.rtplace.optional=true a warning
 * and the container starts unplaced (0); otherwise an error that makes the
 * runtime refuse to start it (status).
 */
static int hook_unplaced(const struct hook *h, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hook_vmsg(h, h->ask.optional ? "warning" : NULL, fmt, ap);
	va_end(ap);
	if (!h->ask.optional)
		return status;
	fprintf(stderr, "rtplace-oci-hook: container %s: starting unplaced (" OCI_ANN_OPTIONAL "=true)\n", h->id);
	return 0;
}

/* Reads the state from fd (a pipe: no length is known) and parses it. */
static int hook_read_state(const struct hook *h, int fd, json_object **ret)
{
	struct rtplace_reason reason;
	size_t total = 0, room = 4096;
	char *buf = malloc(room), *bigger;
	ssize_t n;
	int status = 0, r;

	if (!buf)
		return hook_error(h, EX_OSERR, "%s", strerror(ENOMEM));
	for (;;) {
		if (total == room) {
			if (room > OCI_SPEC_JSON_MAX) {
				status = hook_error(h, EX_DATAERR, "the state on stdin is longer than %u bytes",
						    OCI_SPEC_JSON_MAX);
				goto out;
			}
			/* One byte past the bound is enough to know. */
			room = room * 2 > OCI_SPEC_JSON_MAX ? OCI_SPEC_JSON_MAX + 1 : room * 2;
			bigger = realloc(buf, room);
			if (!bigger) {
				status = hook_error(h, EX_OSERR, "%s", strerror(ENOMEM));
				goto out;
			}
			buf = bigger;
		}
		n = read(fd, buf + total, room - total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			status = hook_error(h, EX_IOERR, "cannot read the state from stdin: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		total += (size_t)n;
	}
	if (!total) {
		status = hook_error(h, EX_DATAERR, "the state on stdin is not JSON: nothing was read (run by an OCI runtime?)");
		goto out;
	}
	r = oci_spec_parse_json("the state on stdin", buf, total, ret, &reason);
	if (r < 0)
		status = hook_error(h, r == -ENOMEM ? EX_OSERR : EX_DATAERR, "%s",
				    r == -ENOMEM ? strerror(ENOMEM) : reason.text);
out:
	free(buf);
	return status;
}

/*
 * Reads and parses the bundle's config.json. It may be a symbolic link
 * (tools that build bundles link a shared config), but it must end at a
 * regular file: json-c would read a FIFO or a device (/dev/zero) until
 * the runtime kills the hook, and the container's start with it.
 */
static int hook_read_config(const struct hook *h, const char *path, json_object **ret)
{
	struct rtplace_reason reason;
	char *text;
	size_t size;
	int r;

	r = file_read_regular(path, OCI_SPEC_JSON_MAX, &reason, &text, &size);
	if (r < 0)
		return hook_error(h, EX_NOINPUT, "cannot read the bundle's config: %s", reason.text);
	r = oci_spec_parse_json(path, text, size, ret, &reason);
	free(text);
	if (r == -ENOMEM)
		return hook_error(h, EX_OSERR, "%s", strerror(ENOMEM));
	if (r < 0)
		return hook_error(h, EX_NOINPUT, "cannot read the bundle's config: %s", reason.text);
	return 0;
}

/*
 * The CPUs the container may run on: its cpuset intersected with the init
 * process's affinity (the runtime has put it in its cgroup by now). With
 * io.rtplace.cpu-list, exactly those CPUs, which must all be allowed.
 */
static int hook_allowed(struct hook *h, json_object *config, cpu_set_t *ret)
{
	char allowed_s[CPUSET_LIST_MAX], list_s[CPUSET_LIST_MAX];
	struct rtplace_reason reason;
	cpu_set_t cpuset, extra;
	bool have;

	if (oci_spec_cpuset(config, &cpuset, &have, &reason) < 0)
		return hook_error(h, EX_DATAERR, "%s/config.json: %s", h->bundle, reason.text);
	if (sched_getaffinity(h->pid, sizeof(*ret), ret) < 0)
		return hook_error(h, errno == ESRCH ? EX_DATAERR : EX_OSERR,
				  "cannot read the affinity of the init process %d: %s", (int)h->pid, strerror(errno));
	if (have)
		CPU_AND(ret, ret, &cpuset);
	cli_format_cpus(ret, allowed_s, sizeof(allowed_s));
	if (CPU_COUNT(ret) == 0)
		return hook_error(h, EX_CONFIG, "the cpuset of config.json and the init process's affinity share no CPU");
	if (!h->ask.have_list)
		return 0;
	CPU_XOR(&extra, &h->ask.list, ret);
	CPU_AND(&extra, &extra, &h->ask.list);
	if (CPU_COUNT(&extra)) {
		cli_format_cpus(&h->ask.list, list_s, sizeof(list_s));
		return hook_error(h, EX_CONFIG, "%s%s\"%s\": not within the container's CPUs %s",
				  oci_spec_from_list(h->ask.list_from),
				  h->ask.list_from == OCI_FROM_SPEC ? " " : "=", list_s, allowed_s);
	}
	*ret = h->ask.list;
	h->ask.count = (unsigned)CPU_COUNT(ret);
	return 0;
}

static void hook_config_error_cb(void *userdata, const char *message)
{
	const struct hook *h = userdata;

	fprintf(stderr, "rtplace-oci-hook: container %s: %s\n", h->id, message);
}

/*
 * Whether process pid is process 1 of a PID namespace below the hook's:
 * the last of the pids its status lists (NSpid), from the hook's
 * namespace inward, is 1, and there are two or more.
 */
static bool hook_is_container_init(pid_t pid)
{
	char path[64], line[256];
	bool init = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *last;

		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		last = strrchr(line, '\t');
		init = last && last != strchr(line, '\t') && strcmp(last + 1, "1") == 0;
		break;
	}
	fclose(f);
	return init;
}

/*
 * Grants the request only within the container's own rights (its
 * config.json) and the node's [containers] policy; a refusal names what
 * is missing and how to grant it, and is final whatever
 * io.rtplace.optional says: the container asked for more than it may.
 */
static int hook_check_rights(struct hook *h, json_object *config)
{
	const struct oci_request req = {
		.prio = h->ask.prio,
		.exclusive = h->ask.exclusive || h->ask.isolate == OCI_ISOLATE_YES,
		.isolate = h->ask.isolate == OCI_ISOLATE_YES,
		.count = h->ask.count,
	};
	struct rtplace_reason reason;
	struct oci_rights rights;
	struct config node;
	int r;

	r = config_load(h->config, &reason, &node, hook_config_error_cb, (void *)h);
	if (r == -ENOENT && !h->config_given)
		config_defaults(&node);
	else if (r == -EINVAL)
		return hook_error(h, EX_CONFIG, "the node's policy %s has errors (above): fix them", h->config);
	else if (r < 0)
		return hook_error(h, EX_CONFIG, "cannot read the node's policy: %s",
				  r == -ENOMEM ? strerror(ENOMEM) : reason.text);
	r = oci_rights_parse(config, &rights, &reason);
	if (r < 0)
		return hook_error(h, EX_DATAERR, "%s/config.json: %s", h->bundle, reason.text);
	if (rights.pidns && !hook_is_container_init(h->pid))
		return hook_error(h, EX_NOPERM,
				  "refused: process %d is not the init process of the container's own PID namespace "
				  "(process 1 there), which its config.json asks for: the state names another process",
				  (int)h->pid);
	r = oci_rights_check(&rights, &node.containers, &req, &reason);
	if (r < 0)
		return hook_error(h, EX_NOPERM, "refused: %s (asked: %s %d by %s)", reason.text,
				  oci_spec_policy_name(h->ask.policy), h->ask.prio, oci_spec_from_sched(h->ask.sched_from));
	/* Asked if possible, isolation the container may not have is none:
	 * the hook, being root, would otherwise get it from rtplaced. */
	if (h->ask.isolate == OCI_ISOLATE_IF_POSSIBLE && !oci_rights_may_isolate(&rights)) {
		h->ask.isolate = OCI_ISOLATE_NO;
		fprintf(stderr, "rtplace-oci-hook: container %s: note: not isolated: io.rtplace.isolate needs "
				"CAP_SYS_NICE in the host's user namespace, which its spec does not give\n",
			h->id);
	} else if (h->ask.isolate == OCI_ISOLATE_IF_POSSIBLE && !node.containers.allow_exclusive) {
		h->ask.isolate = OCI_ISOLATE_NO;
		fprintf(stderr, "rtplace-oci-hook: container %s: note: not isolated: an isolated claim is exclusive, "
				"and this node's [containers] allow-exclusive = no (rtplaced.conf)\n",
			h->id);
	}
	/* Only an exclusive claim's CPUs are isolated. */
	if (h->ask.isolate != OCI_ISOLATE_NO)
		h->ask.exclusive = true;
	h->lease_ms = oci_rights_lease_ms(&rights, node.limits.max_lease_ms);
	if (h->lease_ms != RTPLACE_LEASE_INFINITE)
		fprintf(stderr, "rtplace-oci-hook: container %s: note: without CAP_SYS_NICE the claim lasts at most "
				"[limits] max-lease-ms = %u ms, not the container's life\n",
			h->id, (unsigned)h->lease_ms);
	return 0;
}

/* Does this error mean "no daemon to ask" rather than "the daemon refused"? */
static bool hook_is_unreachable(int r)
{
	return r == -ENOENT || r == -ECONNREFUSED || r == -ECONNRESET || r == -EPIPE || r == -ENOTCONN ||
	       r == -ETIMEDOUT || r == -EACCES || r == -ENAMETOOLONG;
}

/*
 * Asks rtplaced for the CPUs, claimed for the init process for as long as
 * it lives, or the lease its rights allow. Returns 0 with the answer; otherwise what hook_unplaced() says,
 * with *ret_placed false.
 */
static int hook_claim(const struct hook *h, const cpu_set_t *allowed, struct rtplace **rpp,
		      struct rtplace_answer *ret, bool *ret_placed)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	const char *path = h->socket ? h->socket : getenv(RTPLACE_SOCKET_ENV);
	char reason[RTPLACE_REASON_LEN];
	int r;

	*ret_placed = false;
	if (!path || !*path)
		path = RTPLACE_DEFAULT_SOCKET;
	req.prio = h->ask.prio;
	req.policy = h->ask.policy;
	req.count = h->ask.count;
	req.node = h->ask.node;
	req.flags = RTPLACE_QUERY_F_CLAIM | (h->ask.exclusive ? RTPLACE_QUERY_F_EXCLUSIVE : 0) |
		    (h->ask.isolate != OCI_ISOLATE_NO ? RTPLACE_QUERY_F_ISOLATE : 0) |
		    (h->ask.isolate == OCI_ISOLATE_IF_POSSIBLE ? RTPLACE_QUERY_F_ISOLATE_TRY : 0);
	req.lease_ms = h->lease_ms;
	req.owner_pid = h->pid;
	req.allowed = allowed;
	req.allowed_size = sizeof(*allowed);

	r = rtplace_connect(path, rpp);
	if (r == 0)
		r = rtplace_query(*rpp, &req, ret);
	if (r < 0 && hook_is_unreachable(r))
		return hook_unplaced(h, EX_UNAVAILABLE, "cannot reach rtplaced at %s: %s", path, strerror(-r));
	if (r < 0) {
		if (!*rpp || rtplace_last_reason(*rpp, reason, sizeof(reason)) < 0)
			snprintf(reason, sizeof(reason), "%s", strerror(-r));
		return hook_unplaced(h, r == -EUSERS || r == -EDQUOT ? EX_TEMPFAIL : EX_UNAVAILABLE,
				     "rtplaced at %s refused: %s", path, reason);
	}
	if (ret->count == 0)
		return hook_unplaced(h, EX_TEMPFAIL, "no CPU for priority %d: %s", h->ask.prio, ret->reason);
	if (ret->count < req.count) {
		rtplace_release(*rpp, ret->claim_id, NULL);
		return hook_unplaced(h, EX_TEMPFAIL, "got %u of %u CPUs: %s", ret->count, req.count, ret->reason);
	}
	if (strncmp(ret->reason, "not isolated: ", 14) == 0)
		fprintf(stderr, "rtplace-oci-hook: container %s: note: %s\n", h->id, ret->reason);
	*ret_placed = true;
	return 0;
}

/*
 * Pins the init process and sets its policy; on failure puts back what it
 * changed, so the container starts either placed or as it was. Returns 0
 * when placed, else what hook_unplaced() says, or -1 for "unplaced, carry
 * on" (the claim is then the caller's to release).
 */
static int hook_apply(const struct hook *h, const cpu_set_t *cpus)
{
	struct sched_param param = { .sched_priority = h->ask.prio };
	struct rtplace_reason why;
	char list[CPUSET_LIST_MAX];
	cpu_set_t prev;
	int status = 0, e;

	cli_format_cpus(cpus, list, sizeof(list));
	if (sched_getaffinity(h->pid, sizeof(prev), &prev) < 0 || sched_setaffinity(h->pid, sizeof(*cpus), cpus) < 0) {
		status = hook_unplaced(h, EX_OSERR, "cannot pin the init process %d to CPUs %s: %s", (int)h->pid,
				       list, strerror(errno));
		return status ? status : -1;
	}
	/* SCHED_FLAG_RESET_ON_FORK as the runtime would set it: the
	 * program's children start at SCHED_OTHER. */
	if (sched_setscheduler(h->pid, h->ask.policy | (h->ask.reset_on_fork ? SCHED_RESET_ON_FORK : 0), &param) < 0) {
		e = errno;
		/* The hook runs as root: EPERM here is the kernel's RT group
		 * scheduling (CONFIG_RT_GROUP_SCHED, cgroup v1) refusing RT
		 * tasks in a cpu cgroup with no RT runtime, even when the
		 * folder cannot be read to name it. */
		if (e != EPERM || cli_explain_rtbudget(h->pid, &why) < 0)
			snprintf(why.text, sizeof(why.text), "%s%s", strerror(e),
				 e == EPERM ? " (its cpu cgroup has no RT runtime: set "
					      "linux.resources.cpu.realtimeRuntime, e.g. podman --cpu-rt-runtime)"
					    : "");
		status = hook_unplaced(h, e == EPERM ? EX_CONFIG : EX_OSERR,
				       "cannot set %s priority %d on the init process %d: %s",
				       oci_spec_policy_name(h->ask.policy), h->ask.prio, (int)h->pid,
				       why.text);
		sched_setaffinity(h->pid, sizeof(prev), &prev);
		return status ? status : -1;
	}
	return 0;
}

/*
 * Says what the container got and where each part of it came from: an
 * annotation or the runtime spec's own field. Runtimes may drop a
 * successful hook's stderr; the claim (rtplacectl claims) keeps the
 * priority and CPUs.
 */
static void hook_say_placed(const struct hook *h, const struct rtplace_answer *ans)
{
	char list[CPUSET_LIST_MAX];

	cli_format_cpus(&ans->set, list, sizeof(list));
	fprintf(stderr, "rtplace-oci-hook: container %s: placed: CPUs %s (%s), %s%s %d (%s), claim %" PRIu64 "\n", h->id,
		list, oci_spec_from_list(h->ask.list_from), oci_spec_policy_name(h->ask.policy),
		h->ask.reset_on_fork ? "|SCHED_RESET_ON_FORK" : "", h->ask.prio, oci_spec_from_sched(h->ask.sched_from),
		ans->claim_id);
}

/*
 * Reads the command line into h. Returns -1 to carry on, otherwise the
 * hook's exit status (--help, --version, a usage error).
 */
static int hook_parse_args(struct hook *h, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "config", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int opt;

	/* Every usage error is one line of ours, not getopt's. */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'S':
			h->socket = optarg;
			break;
		case 'C':
			h->config = optarg;
			h->config_given = true;
			break;
		case 'h':
			hook_usage(stdout);
			return EX_OK;
		case 'V':
			printf("rtplace-oci-hook %s\n", PACKAGE_VERSION);
			return EX_OK;
		case ':':
			fprintf(stderr, "rtplace-oci-hook: %s needs a value; see 'rtplace-oci-hook --help'\n",
				argv[optind - 1]);
			return EX_USAGE;
		default:
			if (optopt && optopt < 0x100)
				fprintf(stderr, "rtplace-oci-hook: unknown option -%c; see 'rtplace-oci-hook --help'\n",
					optopt);
			else
				fprintf(stderr, "rtplace-oci-hook: unknown option %s; see 'rtplace-oci-hook --help'\n",
					argv[optind - 1]);
			return EX_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rtplace-oci-hook: unexpected argument %s; see 'rtplace-oci-hook --help'\n",
			argv[optind]);
		return EX_USAGE;
	}
	return -1;
}

/*
 * Reads the state from stdin and the bundle's config.json, both into
 * objects the caller puts; sets h's id, pid and bundle.
 */
static int hook_read_inputs(struct hook *h, json_object **ret_state, json_object **ret_config)
{
	struct rtplace_reason reason;
	struct oci_state st;
	char path[PATH_MAX];
	int status;

	status = hook_read_state(h, STDIN_FILENO, ret_state);
	if (status)
		return status;
	if (oci_spec_state(*ret_state, &st, &reason) < 0)
		return hook_error(h, EX_DATAERR, "%s", reason.text);
	h->id = st.id;
	h->pid = st.pid;
	h->bundle = st.bundle;
	if (snprintf(path, sizeof(path), "%s/config.json", h->bundle) >= (int)sizeof(path))
		return hook_error(h, EX_DATAERR, "the bundle path is too long");
	return hook_read_config(h, path, ret_config);
}

/*
 * What the container asks for, into h->ask: its io.rtplace.* annotations
 * and the runtime spec's own process.scheduler and
 * process.execCPUAffinity (oci_spec_merge() says how the two combine).
 * *ret_asked false when it asks for no RT priority: nothing to do.
 */
static int hook_read_ask(struct hook *h, json_object *state, json_object *config, bool *ret_asked)
{
	json_object *ann = oci_spec_annotations(state, config);
	struct rtplace_reason reason;
	struct oci_affinity aff;
	struct oci_sched sched;
	struct oci_ask from_ann;
	bool rt;

	*ret_asked = false;
	if (oci_spec_scheduler(config, &sched, &reason) < 0 || oci_spec_exec_affinity(config, &aff, &reason) < 0)
		return hook_error(h, EX_DATAERR, "%s/config.json: %s", h->bundle, reason.text);
	rt = sched.have && (sched.policy == SCHED_FIFO || sched.policy == SCHED_RR);
	/* Other annotations are read only when something asks: without a
	 * priority they mean nothing, and other runtimes' hooks.d filters
	 * may run the hook for every container. */
	if (!rt && !oci_spec_ann_asks(ann))
		return 0;
	if (ann && oci_spec_ask(ann, &from_ann, &reason) < 0)
		return hook_error(h, EX_DATAERR, "%s", reason.text);
	if (oci_spec_merge(ann ? &from_ann : NULL, &sched, &aff, &h->ask, ret_asked, &reason) < 0)
		return hook_error(h, EX_DATAERR, "%s/config.json: %s", h->bundle, reason.text);
	return 0;
}

/*
 * Claims CPUs within allowed and places the init process on them. A claim
 * that could not be applied is released; the claim that was is the init
 * process's, not the connection's, and outlives the hook.
 */
static int hook_place(struct hook *h, const cpu_set_t *allowed)
{
	struct rtplace_answer *ans;
	struct rtplace *rp = NULL;
	bool placed = false;
	int status;

	ans = malloc(sizeof(*ans));
	if (!ans)
		return hook_error(h, EX_OSERR, "%s", strerror(ENOMEM));
	status = hook_claim(h, allowed, &rp, ans, &placed);
	if (placed) {
		status = hook_apply(h, &ans->set);
		if (status) {
			rtplace_release(rp, ans->claim_id, NULL);
			status = status < 0 ? 0 : status;
		} else {
			hook_say_placed(h, ans);
		}
	}
	rtplace_close(rp);
	free(ans);
	return status;
}

int main(int argc, char **argv)
{
	struct hook h = { .config = CONFIG_DEFAULT_PATH };
	json_object *state = NULL, *config = NULL;
	cpu_set_t allowed;
	bool asked;
	int status;

	status = hook_parse_args(&h, argc, argv);
	if (status >= 0)
		return status;
	status = hook_read_inputs(&h, &state, &config);
	if (status == 0)
		status = hook_read_ask(&h, state, config, &asked);
	if (status == 0 && asked)
		status = hook_allowed(&h, config, &allowed);
	if (status == 0 && asked)
		status = hook_check_rights(&h, config);
	if (status == 0 && asked)
		status = hook_place(&h, &allowed);
	json_object_put(config);
	json_object_put(state);
	return status;
}
