/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtplace-oci-hook: places a container's RT threads (DESIGN §15). An OCI
 * runtime (runc, crun; podman and CRI-O through hooks.d) runs it at the
 * createRuntime stage, after the container's init process exists in its
 * namespaces and cgroups but before it executes the container's program.
 * The hook reads the container's state (id, pid, bundle, annotations) from
 * stdin and the bundle's config.json, asks rtplaced for CPUs inside the
 * container's cpuset with a claim owned by the init process, and pins the
 * init process to them at the RT policy the annotations ask for. The
 * program the init process then executes, and every thread it starts,
 * inherit both; the claim ends when the init process does, however it ends.
 *
 * Only the init process's main thread (the one with tid == pid) is changed:
 * that is the thread that executes the container's program (runc locks its
 * init goroutine to it; crun is single-threaded), and exec keeps a thread's
 * affinity and policy. Other threads of the runtime's init die at the exec.
 *
 * The hook runs as root in the runtime's namespaces, so pids in the state
 * are the daemon's (the runtime and rtplaced share the host PID namespace).
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
#include "cpuset.h"
#include "file.h"

#define HOOK_ANN_PREFIX "io.rtplace."
#define HOOK_ANN_PRIORITY HOOK_ANN_PREFIX "priority"
#define HOOK_ANN_POLICY HOOK_ANN_PREFIX "policy"
#define HOOK_ANN_CPUS HOOK_ANN_PREFIX "cpus"
#define HOOK_ANN_CPU_LIST HOOK_ANN_PREFIX "cpu-list"
#define HOOK_ANN_NODE HOOK_ANN_PREFIX "node"
#define HOOK_ANN_EXCLUSIVE HOOK_ANN_PREFIX "exclusive"
#define HOOK_ANN_OPTIONAL HOOK_ANN_PREFIX "optional"

/* The state is a few hundred bytes, but Kubernetes copies pod annotations
 * into it (up to 256 KiB); more than this is not a state. config.json
 * holds the same annotations and is held to the same bound. */
#define HOOK_STATE_MAX (4u << 20)

/* What the runtime told us, and what the annotations ask for. */
struct hook {
	const char *id;           /* the container's id, for messages */
	pid_t pid;                /* its init process, in our PID namespace */
	const char *bundle;       /* folder of config.json */
	int prio;                 /* 0: no io.rtplace.priority, nothing to do */
	int policy;
	unsigned count;
	bool have_list;
	cpu_set_t list;
	int node;
	bool exclusive, optional;
	const char *socket;
};

static void hook_usage(FILE *f)
{
	fprintf(f, "usage: rtplace-oci-hook [--socket PATH] < STATE\n\n"
		   "An OCI runtime hook (createRuntime stage): reads the container's state from stdin,\n"
		   "claims CPUs from rtplaced for its init process and sets the RT policy that the\n"
		   "container's io.rtplace.* annotations ask for. See rtplace-oci-hook(8).\n\n"
		   "  --socket PATH    the daemon's socket (default $" RTPLACE_SOCKET_ENV ", else "
		   RTPLACE_DEFAULT_SOCKET ")\n"
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
	hook_vmsg(h, h->optional ? "warning" : NULL, fmt, ap);
	va_end(ap);
	if (!h->optional)
		return status;
	fprintf(stderr, "rtplace-oci-hook: container %s: starting unplaced (" HOOK_ANN_OPTIONAL "=true)\n", h->id);
	return 0;
}

/* Reads and parses the state from fd, streaming: no length is known. */
static int hook_read_state(const struct hook *h, int fd, json_object **ret)
{
	struct json_tokener *tok = json_tokener_new();
	enum json_tokener_error jerr = json_tokener_continue;
	json_object *obj = NULL;
	size_t total = 0;
	char buf[4096];
	ssize_t n;
	int status = 0;

	if (!tok)
		return hook_error(h, EX_OSERR, "%s", strerror(ENOMEM));
	while (!obj && jerr == json_tokener_continue) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			status = hook_error(h, EX_IOERR, "cannot read the state from stdin: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		if (total > HOOK_STATE_MAX) {
			status = hook_error(h, EX_DATAERR, "the state on stdin is longer than %u bytes",
					    HOOK_STATE_MAX);
			goto out;
		}
		obj = json_tokener_parse_ex(tok, buf, (int)n);
		jerr = json_tokener_get_error(tok);
	}
	if (!obj) {
		const char *why = json_tokener_error_desc(jerr);

		if (!total)
			why = "nothing was read (run by an OCI runtime?)";
		else if (jerr == json_tokener_continue)
			why = "it ends early";
		status = hook_error(h, EX_DATAERR, "the state on stdin is not JSON: %s", why);
		goto out;
	}
	*ret = obj;
out:
	json_tokener_free(tok);
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
	enum json_tokener_error jerr;
	struct rtplace_reason reason;
	json_object *obj;
	char *text;
	size_t size;
	int r;

	r = file_read_regular(path, HOOK_STATE_MAX, &reason, &text, &size);
	if (r < 0)
		return hook_error(h, EX_NOINPUT, "cannot read the bundle's config: %s", reason.text);
	obj = json_tokener_parse_verbose(text, &jerr);
	free(text);
	if (!obj)
		return hook_error(h, EX_NOINPUT, "cannot read the bundle's config: %s is not JSON: %s", path,
				  json_tokener_error_desc(jerr));
	*ret = obj;
	return 0;
}

/* The string member key of obj, or NULL when absent or not a string. */
static const char *hook_get_string(json_object *obj, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* id, pid and bundle of the state: required by the runtime spec (1.0.2). */
static int hook_parse_state(struct hook *h, json_object *state)
{
	json_object *v;
	int64_t pid;

	if (!json_object_is_type(state, json_type_object))
		return hook_error(h, EX_DATAERR, "the state on stdin is not a JSON object");
	h->id = hook_get_string(state, "id");
	if (!h->id || !*h->id)
		return hook_error(h, EX_DATAERR, "the state has no \"id\" string");
	if (!json_object_object_get_ex(state, "pid", &v) || !json_object_is_type(v, json_type_int))
		return hook_error(h, EX_DATAERR, "the state has no \"pid\" number (is this the createRuntime stage?)");
	pid = json_object_get_int64(v);
	if (pid <= 0 || pid > INT_MAX)
		return hook_error(h, EX_DATAERR, "the state's \"pid\" %" PRId64 " is not a process id", pid);
	h->pid = (pid_t)pid;
	h->bundle = hook_get_string(state, "bundle");
	if (!h->bundle || !*h->bundle)
		return hook_error(h, EX_DATAERR, "the state has no \"bundle\" string");
	return 0;
}

static int hook_bad_annotation(const struct hook *h, const char *key, const char *value, const char *accepted)
{
	return hook_error(h, EX_DATAERR, "annotation %s=\"%s\": %s", key, value, accepted);
}

static int hook_parse_bool(const char *s, bool *ret)
{
	if (strcmp(s, "true") == 0)
		*ret = true;
	else if (strcmp(s, "false") == 0)
		*ret = false;
	else
		return -EINVAL;
	return 0;
}

/*
 * The io.rtplace.* annotations into h. Every value is checked, and an
 * unknown io.rtplace.* key is an error (a typo must not start a container
 * silently unplaced). Other annotations belong to others.
 */
static int hook_parse_annotations(struct hook *h, json_object *ann)
{
	bool have_count = false;
	long v;

	json_object_object_foreach(ann, key, val) {
		const char *s;

		if (strncmp(key, HOOK_ANN_PREFIX, strlen(HOOK_ANN_PREFIX)) != 0)
			continue;
		if (!json_object_is_type(val, json_type_string))
			return hook_error(h, EX_DATAERR, "annotation %s: not a string", key);
		s = json_object_get_string(val);
		if (strcmp(key, HOOK_ANN_PRIORITY) == 0) {
			if (cli_parse_long(s, RTPLACE_PRIO_MIN, RTPLACE_PRIO_MAX, &v) < 0)
				return hook_bad_annotation(h, key, s, "not an RT priority 1..99");
			h->prio = (int)v;
		} else if (strcmp(key, HOOK_ANN_POLICY) == 0) {
			if (cli_parse_policy(s, &h->policy) < 0)
				return hook_bad_annotation(h, key, s, "not fifo or rr");
		} else if (strcmp(key, HOOK_ANN_CPUS) == 0) {
			if (cli_parse_long(s, 1, RTPLACE_ANSWER_MAX, &v) < 0)
				return hook_bad_annotation(h, key, s, "not a count 1..256");
			h->count = (unsigned)v;
			have_count = true;
		} else if (strcmp(key, HOOK_ANN_CPU_LIST) == 0) {
			if (cli_parse_cpus(s, &h->list) < 0)
				return hook_bad_annotation(h, key, s, "not a CPU list (e.g. 2-5,8)");
			h->have_list = true;
		} else if (strcmp(key, HOOK_ANN_NODE) == 0) {
			if (cli_parse_long(s, 0, RTPLACE_MAX_CPUS - 1, &v) < 0)
				return hook_bad_annotation(h, key, s, "not a NUMA node id");
			h->node = (int)v;
		} else if (strcmp(key, HOOK_ANN_EXCLUSIVE) == 0) {
			if (hook_parse_bool(s, &h->exclusive) < 0)
				return hook_bad_annotation(h, key, s, "not true or false");
		} else if (strcmp(key, HOOK_ANN_OPTIONAL) == 0) {
			if (hook_parse_bool(s, &h->optional) < 0)
				return hook_bad_annotation(h, key, s, "not true or false");
		} else {
			return hook_error(h, EX_DATAERR,
					  "unknown annotation %s (known: " HOOK_ANN_PRIORITY ", " HOOK_ANN_POLICY
					  ", " HOOK_ANN_CPUS ", " HOOK_ANN_CPU_LIST ", " HOOK_ANN_NODE
					  ", " HOOK_ANN_EXCLUSIVE ", " HOOK_ANN_OPTIONAL ")", key);
		}
	}
	if (have_count && h->have_list)
		return hook_error(h, EX_DATAERR, "annotations " HOOK_ANN_CPUS " and " HOOK_ANN_CPU_LIST
				  " exclude each other");
	return 0;
}

/* The container's cpuset from config.json (linux.resources.cpu.cpus);
 * *ret_have false when the config sets none. */
static int hook_read_cpuset(const struct hook *h, json_object *config, cpu_set_t *ret, bool *ret_have)
{
	json_object *linux_, *res, *cpu, *cpus;
	const char *s;

	*ret_have = false;
	if (!json_object_object_get_ex(config, "linux", &linux_) ||
	    !json_object_object_get_ex(linux_, "resources", &res) ||
	    !json_object_object_get_ex(res, "cpu", &cpu) || !json_object_object_get_ex(cpu, "cpus", &cpus) ||
	    json_object_is_type(cpus, json_type_null))
		return 0;
	s = json_object_is_type(cpus, json_type_string) ? json_object_get_string(cpus) : NULL;
	if (!s)
		return hook_error(h, EX_DATAERR, "%s/config.json: linux.resources.cpu.cpus is not a string",
				  h->bundle);
	if (!*s)
		return 0;
	if (cli_parse_cpus(s, ret) < 0)
		return hook_error(h, EX_DATAERR, "%s/config.json: linux.resources.cpu.cpus \"%s\" is not a CPU list",
				  h->bundle, s);
	*ret_have = true;
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
	cpu_set_t cpuset, extra;
	bool have;
	int status;

	if (sched_getaffinity(h->pid, sizeof(*ret), ret) < 0)
		return hook_error(h, errno == ESRCH ? EX_DATAERR : EX_OSERR,
				  "cannot read the affinity of the init process %d: %s", (int)h->pid, strerror(errno));
	status = hook_read_cpuset(h, config, &cpuset, &have);
	if (status)
		return status;
	if (have)
		CPU_AND(ret, ret, &cpuset);
	cli_format_cpus(ret, allowed_s, sizeof(allowed_s));
	if (CPU_COUNT(ret) == 0)
		return hook_error(h, EX_CONFIG, "the cpuset of config.json and the init process's affinity share no CPU");
	if (!h->have_list)
		return 0;
	CPU_XOR(&extra, &h->list, ret);
	CPU_AND(&extra, &extra, &h->list);
	if (CPU_COUNT(&extra)) {
		cli_format_cpus(&h->list, list_s, sizeof(list_s));
		return hook_error(h, EX_CONFIG, "annotation " HOOK_ANN_CPU_LIST "=\"%s\": not within the container's "
				  "CPUs %s", list_s, allowed_s);
	}
	*ret = h->list;
	h->count = (unsigned)CPU_COUNT(ret);
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
 * it lives. Returns 0 with the answer; otherwise what hook_unplaced() says,
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
	req.prio = h->prio;
	req.policy = h->policy;
	req.count = h->count;
	req.node = h->node;
	req.flags = RTPLACE_QUERY_F_CLAIM | (h->exclusive ? RTPLACE_QUERY_F_EXCLUSIVE : 0);
	req.lease_ms = RTPLACE_LEASE_INFINITE;
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
		return hook_unplaced(h, EX_TEMPFAIL, "no CPU for priority %d: %s", h->prio, ret->reason);
	if (ret->count < req.count) {
		rtplace_release(*rpp, ret->claim_id, NULL);
		return hook_unplaced(h, EX_TEMPFAIL, "got %u of %u CPUs: %s", ret->count, req.count, ret->reason);
	}
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
	struct sched_param param = { .sched_priority = h->prio };
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
	if (sched_setscheduler(h->pid, h->policy, &param) < 0) {
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
				       h->policy == SCHED_RR ? "SCHED_RR" : "SCHED_FIFO", h->prio, (int)h->pid,
				       why.text);
		sched_setaffinity(h->pid, sizeof(prev), &prev);
		return status ? status : -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct hook h = { .policy = SCHED_FIFO, .count = 1, .node = -1 };
	json_object *state = NULL, *config = NULL, *ann;
	struct rtplace_answer *ans = NULL;
	struct rtplace *rp = NULL;
	char path[PATH_MAX];
	cpu_set_t allowed;
	bool placed = false;
	int opt, status;

	/* Every usage error is one line of ours, not getopt's. */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'S':
			h.socket = optarg;
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

	status = hook_read_state(&h, STDIN_FILENO, &state);
	if (status)
		goto out;
	status = hook_parse_state(&h, state);
	if (status)
		goto out;
	if (snprintf(path, sizeof(path), "%s/config.json", h.bundle) >= (int)sizeof(path)) {
		status = hook_error(&h, EX_DATAERR, "the bundle path is too long");
		goto out;
	}
	status = hook_read_config(&h, path, &config);
	if (status)
		goto out;
	/* The state carries the config's annotations (runtime spec 1.0.2);
	 * the config's own are the fallback for runtimes that leave them out. */
	if (!json_object_object_get_ex(state, "annotations", &ann) &&
	    !json_object_object_get_ex(config, "annotations", &ann))
		goto out;
	/* Without a priority there is nothing to do: other runtimes' hooks.d
	 * filters may run the hook for every container. */
	if (!json_object_is_type(ann, json_type_object) || !json_object_object_get_ex(ann, HOOK_ANN_PRIORITY, NULL))
		goto out;
	status = hook_parse_annotations(&h, ann);
	if (status)
		goto out;
	status = hook_allowed(&h, config, &allowed);
	if (status)
		goto out;
	ans = malloc(sizeof(*ans));
	if (!ans) {
		status = hook_error(&h, EX_OSERR, "%s", strerror(ENOMEM));
		goto out;
	}
	status = hook_claim(&h, &allowed, &rp, ans, &placed);
	if (!placed)
		goto out;
	status = hook_apply(&h, &ans->set);
	if (status) {
		rtplace_release(rp, ans->claim_id, NULL);
		status = status < 0 ? 0 : status;
	}
out:
	/* The claim is the init process's, not the connection's. */
	rtplace_close(rp);
	free(ans);
	json_object_put(config);
	json_object_put(state);
	return status;
}
