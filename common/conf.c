/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <ctype.h>
#include <sched.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <ini.h>

#include "conf.h"
#include "file.h"
#include "sysfs.h"

#define CONFIG_DEFAULT_SOCKET "/run/rtplace/rtplaced.sock"

struct config_choice {
	const char *name;
	int value;
};

struct config_key {
	const char *section;
	const char *name;
	/* Returns 0, -EINVAL (malformed), -ERANGE (out of range) or
	 * -ENAMETOOLONG; writes c only on success. NULL for the plain keys:
	 * a number in min..max, or a boolean (max 0), at offset. */
	int (*parse)(struct config *c, const char *value);
	const char *expected; /* completes "expected ..." in messages */
	size_t offset;        /* of the uint32_t or bool field, parse NULL */
	uint32_t min, max;
};

/* The offset of field in struct config, which must be of type (a pointer
 * comparison of distinct types is an error under -Werror). */
#define CONFIG_FIELD(field, type) \
	(offsetof(struct config, field) + 0 * sizeof((type *)NULL == &((struct config *)NULL)->field))
#define CONFIG_FN(section, name, parse, expected) { section, name, parse, expected, 0, 0, 0 }
#define CONFIG_UINT(section, name, field, min, max, expected) \
	{ section, name, NULL, expected, CONFIG_FIELD(field, uint32_t), min, max }
#define CONFIG_BOOL(section, name, field) \
	{ section, name, NULL, CONFIG_BOOL_EXPECTED, CONFIG_FIELD(field, bool), 0, 0 }

static const char *const config_sections[] = {
	"daemon", "topology", "tracker", "placement", "moves", "notify", "limits", "metrics", "containers", "rtkit",
	"isolation",
};

static const struct config_choice config_log_levels[] = {
	{ "err", LOG_ERR }, { "warning", LOG_WARNING }, { "notice", LOG_NOTICE },
	{ "info", LOG_INFO }, { "debug", LOG_DEBUG }, { NULL, 0 },
};

static const struct config_choice config_shards[] = {
	{ "node", TOPO_SHARD_NODE }, { "llc", TOPO_SHARD_LLC }, { NULL, 0 },
};

static const struct config_choice config_rtkit_policies[] = {
	{ "rr", SCHED_RR }, { "fifo", SCHED_FIFO }, { NULL, 0 },
};

static const struct config_choice config_tracker_modes[] = {
	{ "auto", CONFIG_TRACKER_AUTO }, { "sampled", CONFIG_TRACKER_SAMPLED }, { NULL, 0 },
};

static const struct config_choice config_smts[] = {
	{ "never", CONFIG_SMT_NEVER }, { "rt", CONFIG_SMT_RT }, { "always", CONFIG_SMT_ALWAYS }, { NULL, 0 },
};

static const struct config_choice config_isolateds[] = {
	{ "prefer", PLACEMENT_ISOLATED_PREFER }, { "only", PLACEMENT_ISOLATED_ONLY },
	{ "avoid", PLACEMENT_ISOLATED_AVOID },   { "ignore", PLACEMENT_ISOLATED_IGNORE },
	{ NULL, 0 },
};

static const struct config_choice config_allows[] = {
	{ "owner", CONFIG_MOVES_OWNER }, { "root", CONFIG_MOVES_ROOT }, { NULL, 0 },
};

static const struct config_choice config_bools[] = {
	{ "yes", 1 }, { "no", 0 }, { "true", 1 }, { "false", 0 }, { "1", 1 }, { "0", 0 }, { NULL, 0 },
};

void config_defaults(struct config *ret)
{
	/* Zeroed first so strings are NUL-padded and padding is defined. */
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->daemon.socket, sizeof(ret->daemon.socket), "%s", CONFIG_DEFAULT_SOCKET);
	ret->daemon.socket_mode = 0660;
	ret->daemon.log_level = LOG_INFO;
	ret->topology.shard = TOPO_SHARD_NODE;
	ret->tracker.mode = CONFIG_TRACKER_AUTO;
	ret->tracker.required = false;
	/* A level older than this is what a wakeup on a loaded CPU waits
	 * anyway; the scan's cost (rtplaced(8), OVERHEAD) stays near 1%. */
	ret->tracker.sample_interval_ms = 100;
	cpuset_zero(&ret->placement.housekeeping_cpus);
	ret->placement.prefer_idle = true;
	ret->placement.avoid_smt_siblings = CONFIG_SMT_RT;
	ret->placement.isolated = PLACEMENT_ISOLATED_PREFER;
	ret->placement.claim_timeout_ms = 30000;
	ret->placement.irq_tiebreak = true;
	/* A hundred USER_HZ ticks: /proc/stat's interrupt columns are tick
	 * samples on most kernels, 1% a tick. */
	ret->placement.irq_window_ms = 1000;
	ret->moves.allow = CONFIG_MOVES_OWNER;
	ret->moves.n_rt_groups = 0;
	/* Below threaded interrupt handlers, which run at 50. */
	ret->moves.max_prio = 49;
	ret->moves.rebalance = true;
	ret->moves.rebalance_interval_ms = 100;
	ret->notify.ring_records = 1024;
	ret->limits.max_clients = 256;
	ret->limits.max_clients_per_user = 32;
	ret->limits.max_claims_per_client = 64;
	ret->limits.max_claims_per_user = 64;
	ret->limits.max_lease_ms = 60000;
	ret->limits.max_claims = 4096;
	ret->limits.max_subscribers = 128;
	ret->limits.max_subscribers_per_user = 8;
	ret->limits.max_managed_threads = 3072;
	ret->limits.max_managed_threads_per_user = 1024;
	/* Nothing narrower than the container's own rights until the node
	 * says so: the hook always checks those. */
	ret->containers.max_prio = 99;
	ret->containers.allow_exclusive = true;
	ret->containers.max_cpus = CONFIG_CONTAINER_CPUS_MAX;
	/* rtkit's own defaults, so that its clients see the same limits. */
	ret->rtkit.enable = false;
	ret->rtkit.rttime_usec_max = 200000;
	ret->rtkit.max_realtime_priority = 20;
	ret->rtkit.scheduling_policy = SCHED_RR;
	ret->rtkit.min_nice_level = -15;
	ret->rtkit.actions_burst_sec = 20;
	ret->rtkit.actions_per_burst_max = 25;
	ret->rtkit.max_threads_per_user = 25;
	ret->rtkit.max_processes_per_user = 15;
	/* A thread of an rtkit client (audio) runs a few percent of its CPU;
	 * one that holds 90% for a second starves that CPU's normal work. */
	ret->rtkit.watchdog_interval_ms = 1000;
	ret->rtkit.watchdog_busy_percent = 90;
	ret->rtkit.watchdog_refuse_sec = 300;
	/* Off: isolating CPUs is host configuration (rtplaced.conf(5)). */
	ret->isolation.partition = false;
	ret->isolation.irqs = false;
	ret->isolation.workqueues = false;
	snprintf(ret->isolation.cgroup_root, sizeof(ret->isolation.cgroup_root), "%s", SYSFS_ROOT "/fs/cgroup");
}

/* Strict decimal: digits only, no sign, no spaces, no trailing junk. */
static int config_parse_uint(const char *v, uint32_t min, uint32_t max, uint32_t *ret)
{
	uint64_t n = 0;

	if (!*v)
		return -EINVAL;
	for (const char *s = v; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		/* Saturate: any value this large is out of range anyway. */
		if (n <= UINT32_MAX)
			n = n * 10 + (uint64_t)(*s - '0');
	}
	if (n < min || n > max)
		return -ERANGE;
	*ret = (uint32_t)n;
	return 0;
}

static int config_parse_choice(const char *v, const struct config_choice *choices, int *ret)
{
	for (const struct config_choice *c = choices; c->name; c++)
		if (strcasecmp(v, c->name) == 0) {
			*ret = c->value;
			return 0;
		}
	return -EINVAL;
}

static int config_parse_bool(const char *v, bool *ret)
{
	int b;
	int r = config_parse_choice(v, config_bools, &b);

	if (r == 0)
		*ret = b;
	return r;
}

static bool config_has_control(const char *v)
{
	for (const unsigned char *s = (const unsigned char *)v; *s; s++)
		if (*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static int config_parse_path(const char *v, bool allow_empty, char *buf, size_t size)
{
	size_t len = strlen(v);

	if (!*v && allow_empty) {
		memset(buf, 0, size);
		return 0;
	}
	if (v[0] != '/' || config_has_control(v))
		return -EINVAL;
	if (len >= size)
		return -ENAMETOOLONG;
	memset(buf, 0, size);
	memcpy(buf, v, len);
	return 0;
}

/* A portable group name: [A-Za-z_][A-Za-z0-9_.-]*, at most 32 characters. */
static int config_check_group(const char *v, size_t len)
{
	if (len == 0)
		return -EINVAL;
	if (len >= CONFIG_GROUP_MAX)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < len; i++) {
		char ch = v[i];
		bool alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
		bool other = (ch >= '0' && ch <= '9') || ch == '.' || ch == '-';

		if (!alpha && (i == 0 || !other))
			return -EINVAL;
	}
	return 0;
}

static int config_set_socket(struct config *c, const char *v)
{
	return config_parse_path(v, false, c->daemon.socket, sizeof(c->daemon.socket));
}

static int config_set_socket_group(struct config *c, const char *v)
{
	size_t len = strlen(v);
	int r;

	if (len) {
		r = config_check_group(v, len);
		if (r < 0)
			return r;
	}
	memset(c->daemon.socket_group, 0, sizeof(c->daemon.socket_group));
	memcpy(c->daemon.socket_group, v, len);
	return 0;
}

static int config_set_socket_mode(struct config *c, const char *v)
{
	unsigned mode = 0;

	if (!*v)
		return -EINVAL;
	for (const char *s = v; *s; s++) {
		if (*s < '0' || *s > '7')
			return -EINVAL;
		if (mode > 0777)
			return -ERANGE;
		mode = mode * 8 + (unsigned)(*s - '0');
	}
	if (mode > 0777)
		return -ERANGE;
	c->daemon.socket_mode = mode;
	return 0;
}

static int config_set_log_level(struct config *c, const char *v)
{
	return config_parse_choice(v, config_log_levels, &c->daemon.log_level);
}

static int config_set_shard(struct config *c, const char *v)
{
	int shard;
	int r = config_parse_choice(v, config_shards, &shard);

	if (r == 0)
		c->topology.shard = (enum topo_shard)shard;
	return r;
}

static int config_set_tracker_mode(struct config *c, const char *v)
{
	int mode;
	int r = config_parse_choice(v, config_tracker_modes, &mode);

	if (r == 0)
		c->tracker.mode = (enum config_tracker_mode)mode;
	return r;
}

static int config_set_topology_file(struct config *c, const char *v)
{
	return config_parse_path(v, true, c->topology.file, sizeof(c->topology.file));
}

static int config_set_housekeeping_cpus(struct config *c, const char *v)
{
	if (!*v) {
		cpuset_zero(&c->placement.housekeeping_cpus);
		return 0;
	}
	return cpuset_parse(v, &c->placement.housekeeping_cpus);
}

static int config_set_avoid_smt_siblings(struct config *c, const char *v)
{
	int smt;
	int r = config_parse_choice(v, config_smts, &smt);

	if (r == 0)
		c->placement.avoid_smt_siblings = (enum config_smt)smt;
	return r;
}

static int config_set_isolated(struct config *c, const char *v)
{
	int mode;
	int r = config_parse_choice(v, config_isolateds, &mode);

	if (r == 0)
		c->placement.isolated = (enum placement_isolated)mode;
	return r;
}

static int config_set_allow(struct config *c, const char *v)
{
	int allow;
	int r = config_parse_choice(v, config_allows, &allow);

	if (r == 0)
		c->moves.allow = (enum config_moves_allow)allow;
	return r;
}

/* Group names separated by commas and/or blanks; each listed once. */
static int config_set_rt_groups(struct config *c, const char *v)
{
	char groups[CONFIG_RT_GROUPS_MAX][CONFIG_GROUP_MAX];
	uint32_t n = 0;
	const char *s = v;
	int r;

	memset(groups, 0, sizeof(groups));
	for (;;) {
		size_t len;

		s += strspn(s, ", \t");
		if (!*s)
			break;
		len = strcspn(s, ", \t");
		r = config_check_group(s, len);
		if (r < 0)
			return r;
		if (n == CONFIG_RT_GROUPS_MAX)
			return -ERANGE;
		memcpy(groups[n], s, len);
		for (uint32_t i = 0; i < n; i++)
			if (strcmp(groups[i], groups[n]) == 0)
				return -EINVAL;
		n++;
		s += len;
	}
	memcpy(c->moves.rt_groups, groups, sizeof(groups));
	c->moves.n_rt_groups = n;
	return 0;
}

/*
 * A blank-separated list of at most CONFIG_MANAGE_MAX entries, each listed
 * once and accepted by check, into width-byte slots of out (NUL-padded).
 */
static int config_parse_list(const char *v, int (*check)(const char *s, size_t len), size_t width,
			     char *out, uint32_t *ret_n)
{
	char list[CONFIG_MANAGE_MAX * CONFIG_CGROUP_MAX];
	uint32_t n = 0;
	const char *s = v;
	int r;

	memset(list, 0, sizeof(list));
	for (;;) {
		size_t len;

		s += strspn(s, " \t");
		if (!*s)
			break;
		len = strcspn(s, " \t");
		r = check(s, len);
		if (r < 0)
			return r;
		if (len >= width)
			return -ENAMETOOLONG;
		if (n == CONFIG_MANAGE_MAX)
			return -ERANGE;
		memcpy(list + n * width, s, len);
		for (uint32_t i = 0; i < n; i++)
			if (strcmp(list + i * width, list + n * width) == 0)
				return -EINVAL;
		n++;
		s += len;
	}
	memcpy(out, list, CONFIG_MANAGE_MAX * width);
	*ret_n = n;
	return 0;
}

static bool config_has_control_n(const char *v, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return true;
	return false;
}

static int config_check_comm(const char *v, size_t len)
{
	return config_has_control_n(v, len) ? -EINVAL : 0;
}

/* A decimal uid below (uid_t)-1, which means "no uid" to the kernel, or a
 * user name with the syntax of a group name. */
static int config_check_user(const char *v, size_t len)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < len && v[i] >= '0' && v[i] <= '9'; i++)
		if (n < UINT32_MAX)
			n = n * 10 + (uint64_t)(v[i] - '0');
	if (i < len)
		return config_check_group(v, len);
	return n >= UINT32_MAX ? -ERANGE : 0;
}

static int config_check_cgroup(const char *v, size_t len)
{
	return v[0] != '/' || config_has_control_n(v, len) ? -EINVAL : 0;
}

static int config_set_manage_comm(struct config *c, const char *v)
{
	return config_parse_list(v, config_check_comm, CONFIG_COMM_MAX, &c->moves.manage_comm[0][0],
				 &c->moves.n_manage_comm);
}

static int config_set_manage_uid(struct config *c, const char *v)
{
	return config_parse_list(v, config_check_user, CONFIG_USER_MAX, &c->moves.manage_uid[0][0],
				 &c->moves.n_manage_uid);
}

static int config_set_manage_cgroup(struct config *c, const char *v)
{
	return config_parse_list(v, config_check_cgroup, CONFIG_CGROUP_MAX, &c->moves.manage_cgroup[0][0],
				 &c->moves.n_manage_cgroup);
}

static int config_set_ring_records(struct config *c, const char *v)
{
	uint32_t n;
	int r = config_parse_uint(v, 64, 65536, &n);

	if (r < 0)
		return r;
	if (n & (n - 1))
		return -ERANGE;
	c->notify.ring_records = n;
	return 0;
}

static int config_set_rtkit_policy(struct config *c, const char *v)
{
	int policy;
	int r = config_parse_choice(v, config_rtkit_policies, &policy);

	if (r == 0)
		c->rtkit.scheduling_policy = policy;
	return r;
}

/* A nice level from -20 to 19 ([rtkit] min-nice-level). */
static int config_set_rtkit_min_nice(struct config *c, const char *v)
{
	uint32_t n;
	bool neg = v[0] == '-';
	int r = config_parse_uint(neg ? v + 1 : v, 0, neg ? 20 : 19, &n);

	if (r < 0)
		return r;
	c->rtkit.min_nice_level = neg ? -(int32_t)n : (int32_t)n;
	return 0;
}

/* 0, or an interval from 100 ms ([rtkit] watchdog-interval-ms). */
static int config_set_rtkit_watchdog(struct config *c, const char *v)
{
	uint32_t n;
	int r = config_parse_uint(v, 0, 60000, &n);

	if (r < 0)
		return r;
	if (n && n < 100)
		return -ERANGE;
	c->rtkit.watchdog_interval_ms = n;
	return 0;
}

/*
 * HOST:PORT with a numeric host (an IPv4 address, or an IPv6 address in
 * brackets) and a port from 1 to 65535; nothing turns the endpoint off.
 * Names are refused: resolving one is an NSS lookup at every start.
 */
static int config_set_metrics_listen(struct config *c, const char *v)
{
	char host[CONFIG_HOST_MAX];
	unsigned char addr[sizeof(struct in6_addr)];
	const char *colon = strrchr(v, ':');
	const char *h = v;
	size_t hlen;
	uint32_t port;
	int family = AF_INET;
	int r;

	if (!*v) {
		memset(&c->metrics.host, 0, sizeof(c->metrics.host));
		c->metrics.port = 0;
		return 0;
	}
	if (!colon)
		return -EINVAL;
	hlen = (size_t)(colon - v);
	if (*v == '[') {
		if (hlen < 2 || v[hlen - 1] != ']')
			return -EINVAL;
		h = v + 1;
		hlen -= 2;
		family = AF_INET6;
	}
	if (hlen == 0 || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (inet_pton(family, host, addr) != 1)
		return -EINVAL;
	r = config_parse_uint(colon + 1, 1, 65535, &port);
	if (r < 0)
		return r;
	memset(&c->metrics.host, 0, sizeof(c->metrics.host));
	memcpy(c->metrics.host, host, hlen + 1);
	c->metrics.port = (uint16_t)port;
	return 0;
}

static int config_set_cgroup_root(struct config *c, const char *v)
{
	return config_parse_path(v, false, c->isolation.cgroup_root, sizeof(c->isolation.cgroup_root));
}

#define CONFIG_BOOL_EXPECTED "yes, no, true, false, 1 or 0"
#define CONFIG_STR(x) CONFIG_STR_(x)
#define CONFIG_STR_(x) #x

static const struct config_key config_keys[] = {
	CONFIG_FN("daemon", "socket", config_set_socket, "an absolute path of at most 107 characters"),
	CONFIG_FN("daemon", "socket-group", config_set_socket_group,
		  "a group name (letters, digits, '_', '.', '-', not starting with a digit, '.' or '-', "
		  "at most 32 characters), or nothing"),
	CONFIG_FN("daemon", "socket-mode", config_set_socket_mode, "an octal mode from 0 to 0777"),
	CONFIG_FN("daemon", "log-level", config_set_log_level, "err, warning, notice, info or debug"),
	CONFIG_FN("topology", "shard", config_set_shard, "node or llc"),
	CONFIG_FN("topology", "file", config_set_topology_file,
		  "an absolute path to an hwloc XML file, or nothing for the live machine"),
	CONFIG_FN("tracker", "mode", config_set_tracker_mode, "auto or sampled"),
	CONFIG_BOOL("tracker", "required", tracker.required),
	CONFIG_UINT("tracker", "sample-interval-ms", tracker.sample_interval_ms, 10, 10000,
		    "an integer from 10 to 10000"),
	CONFIG_FN("placement", "housekeeping-cpus", config_set_housekeeping_cpus,
		  "a CPU list such as 0-1,4 with CPU ids below " CONFIG_STR(RTPLACE_MAX_CPUS) ", or nothing"),
	CONFIG_BOOL("placement", "prefer-idle", placement.prefer_idle),
	CONFIG_FN("placement", "avoid-smt-siblings", config_set_avoid_smt_siblings, "never, rt or always"),
	CONFIG_FN("placement", "isolated", config_set_isolated, "prefer, only, avoid or ignore"),
	CONFIG_UINT("placement", "claim-timeout-ms", placement.claim_timeout_ms, 0, 86400000,
		    "0 (no lease) or milliseconds up to 86400000"),
	CONFIG_BOOL("placement", "irq-tiebreak", placement.irq_tiebreak),
	CONFIG_UINT("placement", "irq-window-ms", placement.irq_window_ms, 100, 60000,
		    "an integer from 100 to 60000"),
	CONFIG_FN("moves", "allow", config_set_allow, "owner or root"),
	CONFIG_FN("moves", "rt-groups", config_set_rt_groups,
		  "group names separated by commas or blanks, each once, at most "
		  CONFIG_STR(CONFIG_RT_GROUPS_MAX)),
	CONFIG_UINT("moves", "max-prio", moves.max_prio, 1, 99, "an integer from 1 to 99"),
	CONFIG_BOOL("moves", "rebalance", moves.rebalance),
	CONFIG_UINT("moves", "rebalance-interval-ms", moves.rebalance_interval_ms, 10, 60000,
		    "an integer from 10 to 60000"),
	CONFIG_FN("moves", "manage-comm", config_set_manage_comm,
		  "command names of at most 15 characters separated by blanks, each once, at most "
		  CONFIG_STR(CONFIG_MANAGE_MAX)),
	CONFIG_FN("moves", "manage-uid", config_set_manage_uid,
		  "user names or numeric uids separated by blanks, each once, at most " CONFIG_STR(CONFIG_MANAGE_MAX)),
	CONFIG_FN("moves", "manage-cgroup", config_set_manage_cgroup,
		  "absolute cgroup paths separated by blanks, each once, at most " CONFIG_STR(CONFIG_MANAGE_MAX)),
	CONFIG_FN("notify", "ring-records", config_set_ring_records, "a power of two from 64 to 65536"),
	CONFIG_UINT("limits", "max-clients", limits.max_clients, 1, 65536, "an integer from 1 to 65536"),
	CONFIG_UINT("limits", "max-clients-per-user", limits.max_clients_per_user, 1, 65536,
		    "an integer from 1 to 65536"),
	/* A claim holds at least one CPU: more claims than CPUs buy nothing. */
	CONFIG_UINT("limits", "max-claims-per-client", limits.max_claims_per_client, 1, RTPLACE_MAX_CPUS,
		    "an integer from 1 to " CONFIG_STR(RTPLACE_MAX_CPUS)),
	/* Each owner-bound claim holds a descriptor: the table's own bound. */
	CONFIG_UINT("limits", "max-claims-per-user", limits.max_claims_per_user, 1, 65536,
		    "an integer from 1 to 65536"),
	/* What users leave of the claims table (CLAIMS_MAX) is root's. */
	CONFIG_UINT("limits", "max-claims", limits.max_claims, 1, 61440, "an integer from 1 to 61440"),
	/* A connection holds at most one subscription. */
	CONFIG_UINT("limits", "max-subscribers", limits.max_subscribers, 1, 65536, "an integer from 1 to 65536"),
	CONFIG_UINT("limits", "max-subscribers-per-user", limits.max_subscribers_per_user, 1, 65536,
		    "an integer from 1 to 65536"),
	CONFIG_UINT("limits", "max-managed-threads", limits.max_managed_threads, 1,
		    CONFIG_WATCHED_USERS_MAX, "an integer from 1 to " CONFIG_STR(CONFIG_WATCHED_USERS_MAX)),
	CONFIG_UINT("limits", "max-managed-threads-per-user", limits.max_managed_threads_per_user, 1,
		    CONFIG_WATCHED_USERS_MAX, "an integer from 1 to " CONFIG_STR(CONFIG_WATCHED_USERS_MAX)),
	CONFIG_UINT("limits", "max-lease-ms", limits.max_lease_ms, 1, 86400000, "milliseconds from 1 to 86400000"),
	CONFIG_FN("metrics", "listen", config_set_metrics_listen,
		  "HOST:PORT with a numeric IPv4 address or an IPv6 address in brackets (127.0.0.1:9808, "
		  "[::1]:9808) and a port from 1 to 65535, or nothing"),
	CONFIG_BOOL("metrics", "bpf-stats", metrics.bpf_stats),
	CONFIG_UINT("containers", "max-prio", containers.max_prio, 1, 99, "an integer from 1 to 99"),
	CONFIG_BOOL("containers", "allow-exclusive", containers.allow_exclusive),
	CONFIG_UINT("containers", "max-cpus", containers.max_cpus, 1, CONFIG_CONTAINER_CPUS_MAX,
		    "an integer from 1 to " CONFIG_STR(CONFIG_CONTAINER_CPUS_MAX)),
	CONFIG_BOOL("rtkit", "enable", rtkit.enable),
	/* Never 0: a client sets its RLIMIT_RTTIME to what is advertised, and
	 * a limit of 0 kills it at its first RT instant. */
	CONFIG_UINT("rtkit", "rttime-usec-max", rtkit.rttime_usec_max, 1, 60000000,
		    "microseconds from 1 to 60000000"),
	CONFIG_UINT("rtkit", "max-realtime-priority", rtkit.max_realtime_priority, 1, 99,
		    "an integer from 1 to 99"),
	CONFIG_FN("rtkit", "scheduling-policy", config_set_rtkit_policy, "rr or fifo"),
	CONFIG_FN("rtkit", "min-nice-level", config_set_rtkit_min_nice, "an integer from -20 to 19"),
	CONFIG_UINT("rtkit", "actions-burst-sec", rtkit.actions_burst_sec, 1, 86400, "seconds from 1 to 86400"),
	CONFIG_UINT("rtkit", "actions-per-burst-max", rtkit.actions_per_burst_max, 1, 1000000,
		    "an integer from 1 to 1000000"),
	CONFIG_UINT("rtkit", "max-threads-per-user", rtkit.max_threads_per_user, 1, 4096,
		    "an integer from 1 to 4096"),
	CONFIG_UINT("rtkit", "max-processes-per-user", rtkit.max_processes_per_user, 1, 4096,
		    "an integer from 1 to 4096"),
	CONFIG_FN("rtkit", "watchdog-interval-ms", config_set_rtkit_watchdog,
		  "0 (no watchdog) or milliseconds from 100 to 60000"),
	CONFIG_UINT("rtkit", "watchdog-busy-percent", rtkit.watchdog_busy_percent, 1, 100, "an integer from 1 to 100"),
	CONFIG_UINT("rtkit", "watchdog-refuse-sec", rtkit.watchdog_refuse_sec, 0, 86400, "seconds from 0 to 86400"),
	CONFIG_BOOL("isolation", "partition", isolation.partition),
	CONFIG_BOOL("isolation", "irqs", isolation.irqs),
	CONFIG_BOOL("isolation", "workqueues", isolation.workqueues),
	CONFIG_FN("isolation", "cgroup-root", config_set_cgroup_root,
		  "an absolute path of at most 191 characters"),
};

#define CONFIG_NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))

static int config_key_parse(const struct config_key *k, struct config *c, const char *v)
{
	void *field = (char *)c + k->offset;

	if (k->parse)
		return k->parse(c, v);
	if (k->max == 0)
		return config_parse_bool(v, field);
	return config_parse_uint(v, k->min, k->max, field);
}

/*
 * inih reports only the first syntax error, and only its line, and it
 * treats an indented line after a key as a continuation of that key's value.
 * So inih reads through config_reader_cb, which hands it one physical line
 * at a time, indentation removed, after checking the line's syntax itself:
 * a bad line is reported here, with its number, and replaced by an empty
 * one, so inih never sees a line it would reject and every error is
 * reported. inih keeps doing what it does well: sections, "key = value"
 * splitting, inline comments.
 */
struct config_parser {
	const char *name;
	const char *data;
	size_t size;
	size_t pos;
	unsigned lineno; /* the line the reader handed out last */
	unsigned nerrors;
	config_error_fn *on_error;
	void *userdata;
	struct config cfg;
	unsigned seen[CONFIG_NKEYS]; /* per key: line it was set on, 0 if not yet */
};

/* Text from the file made safe to print: control characters become '?'. */
static const char *config_printable(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++)
		buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

static void config_error(struct config_parser *p, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void config_error(struct config_parser *p, unsigned line, const char *fmt, ...)
{
	char msg[1024];
	char name[256];
	int n;
	va_list ap;

	p->nerrors++;
	if (!p->on_error)
		return;
	n = snprintf(msg, sizeof(msg), "%s:%u: ", config_printable(p->name, name, sizeof(name)), line);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	p->on_error(p->userdata, msg);
}

static bool config_section_known(const char *name)
{
	for (size_t i = 0; i < sizeof(config_sections) / sizeof(config_sections[0]); i++)
		if (strcmp(name, config_sections[i]) == 0)
			return true;
	return false;
}

/* What inih would take as the end of a key: '=' or ':', or an inline
 * comment (';' after a blank). Mirrors inih's find_chars_or_comment(). */
static const char *config_find_separator(const char *s)
{
	bool was_space = false;

	for (; *s; s++) {
		if (*s == '=' || *s == ':' || (was_space && *s == ';'))
			break;
		was_space = isspace((unsigned char)*s);
	}
	return s;
}

/*
 * Checks one line (indentation already removed) and rewrites it in place
 * into what inih should see: unchanged, "" for a bad line, or "[?]" for a
 * bad section header, so the keys under it land in a section that is
 * skipped silently instead of being charged to the section before it.
 */
static void config_check_line(struct config_parser *p, char *line)
{
	char shown[CONFIG_LINE_MAX + 1];
	const char *sep;

	if (!*line || *line == ';' || *line == '#')
		return;
	if (*line == '[') {
		char *close = strchr(line, ']');
		const char *rest = close ? close + strspn(close + 1, " \t") + 1 : NULL;

		if (!close || (*rest && *rest != ';' && *rest != '#')) {
			config_error(p, p->lineno, "malformed section header '%s': expected '[name]'",
				     config_printable(line, shown, sizeof(shown)));
			strcpy(line, "[?]");
			return;
		}
		*close = '\0';
		if (!config_section_known(line + 1)) {
			config_error(p, p->lineno,
				     "unknown section [%s]: expected daemon, topology, tracker, placement, moves, notify, limits, "
				     "metrics, containers, rtkit or isolation",
				     config_printable(line + 1, shown, sizeof(shown)));
			strcpy(line, "[?]");
			return;
		}
		*close = ']';
		close[1] = '\0';
		return;
	}
	sep = config_find_separator(line);
	if (*sep != '=') {
		config_error(p, p->lineno, "expected 'key = value', '[section]' or a comment, got '%s'",
			     config_printable(line, shown, sizeof(shown)));
		*line = '\0';
		return;
	}
	if (sep == line) {
		config_error(p, p->lineno, "missing key name before '='");
		*line = '\0';
	}
}

/* inih's fgets-like reader: one physical line per call (see config_parser). */
static char *config_reader_cb(char *str, int num, void *stream)
{
	struct config_parser *p = stream;
	const char *line, *end, *nl;
	size_t len;

	if (p->pos >= p->size)
		return NULL;
	line = p->data + p->pos;
	nl = memchr(line, '\n', p->size - p->pos);
	end = nl ? nl : p->data + p->size;
	p->pos = (size_t)(end - p->data) + (nl ? 1 : 0);
	p->lineno++;
	if (p->lineno == 1 && end - line >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0)
		line += 3;
	if (end > line && end[-1] == '\r')
		end--;
	/* All of inih's blanks, or it would take the line for a continuation. */
	while (line < end && isspace((unsigned char)*line))
		line++;
	len = (size_t)(end - line);
	str[0] = '\0';
	if (memchr(line, '\0', len))
		config_error(p, p->lineno, "NUL byte in line");
	else if (len > CONFIG_LINE_MAX || len >= (size_t)num)
		config_error(p, p->lineno, "line too long: at most %d characters",
			     CONFIG_LINE_MAX < num - 1 ? CONFIG_LINE_MAX : num - 1);
	else {
		memcpy(str, line, len);
		str[len] = '\0';
		config_check_line(p, str);
	}
	return str;
}

static int config_handler_cb(void *user, const char *section, const char *name, const char *value)
{
	struct config_parser *p = user;
	char shown_name[CONFIG_LINE_MAX + 1], shown_value[CONFIG_LINE_MAX + 1];
	const struct config_key *k = NULL;
	size_t i;
	int r;

	config_printable(name, shown_name, sizeof(shown_name));
	if (!*section) {
		config_error(p, p->lineno, "key '%s' outside of any section", shown_name);
		return 1;
	}
	/* An unknown section was reported at its header (config_check_line). */
	if (!config_section_known(section))
		return 1;
	for (i = 0; i < CONFIG_NKEYS; i++)
		if (strcmp(section, config_keys[i].section) == 0 && strcmp(name, config_keys[i].name) == 0) {
			k = &config_keys[i];
			break;
		}
	if (!k) {
		char known[256] = "";
		size_t used = 0;

		for (size_t j = 0; j < CONFIG_NKEYS; j++)
			if (strcmp(section, config_keys[j].section) == 0)
				used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s",
							 used ? ", " : "", config_keys[j].name);
		config_error(p, p->lineno, "unknown key '%s' in [%s]: expected %s", shown_name, section, known);
		return 1;
	}
	if (p->seen[i]) {
		config_error(p, p->lineno, "duplicate key '%s' in [%s] (first set on line %u)", k->name,
			     section, p->seen[i]);
		return 1;
	}
	p->seen[i] = p->lineno;
	r = config_key_parse(k, &p->cfg, value);
	config_printable(value, shown_value, sizeof(shown_value));
	if (r == -ERANGE)
		config_error(p, p->lineno, "%s = %s is out of range: expected %s", k->name, shown_value,
			     k->expected);
	else if (r == -ENAMETOOLONG)
		config_error(p, p->lineno, "%s is too long: expected %s", k->name, k->expected);
	else if (r < 0)
		config_error(p, p->lineno, "invalid value '%s' for %s: expected %s", shown_value, k->name,
			     k->expected);
	/* Always go on: errors are counted and reported here, all of them. */
	return 1;
}

/* The one pair of keys that can contradict each other: both set, so the
 * error names the later line. */
static void config_check_tracker(struct config_parser *p)
{
	unsigned mode_line = 0, required_line = 0;

	for (size_t i = 0; i < CONFIG_NKEYS; i++)
		if (strcmp(config_keys[i].section, "tracker") == 0 && strcmp(config_keys[i].name, "mode") == 0)
			mode_line = p->seen[i];
		else if (strcmp(config_keys[i].section, "tracker") == 0 && strcmp(config_keys[i].name, "required") == 0)
			required_line = p->seen[i];
	if (p->cfg.tracker.required && p->cfg.tracker.mode == CONFIG_TRACKER_SAMPLED)
		config_error(p, mode_line > required_line ? mode_line : required_line,
			     "required = yes asks for the BPF tracker, which mode = sampled never loads");
}

int config_load_buffer(const char *name, const void *data, size_t size, struct config *ret,
		       config_error_fn *on_error, void *userdata)
{
	struct config_parser *p;
	int r;

	/* Heap, not stack: the config is large and inih adds its line buffer. */
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->name = name;
	p->data = data;
	p->size = size;
	p->on_error = on_error;
	p->userdata = userdata;
	config_defaults(&p->cfg);

	r = ini_parse_stream(config_reader_cb, p, config_handler_cb, p);
	if (r == -2) {
		r = -ENOMEM;
		goto out;
	}
	/* config_reader_cb lets through only lines inih accepts; should a
	 * different inih still reject one, say where rather than pass it. */
	if (r > 0)
		config_error(p, (unsigned)r, "syntax error");
	config_check_tracker(p);
	r = p->nerrors ? -EINVAL : 0;
	if (r == 0)
		*ret = p->cfg;
out:
	free(p);
	return r;
}

int config_load_string(const char *name, const char *text, struct config *ret,
		       config_error_fn *on_error, void *userdata)
{
	return config_load_buffer(name, text, strlen(text), ret, on_error, userdata);
}

int config_load(const char *path, struct rtplace_reason *reason, struct config *ret, config_error_fn *on_error,
		void *userdata)
{
	char *buf = NULL;
	size_t size = 0;
	int r;

	r = file_read_regular(path, CONFIG_FILE_MAX, reason, &buf, &size);
	if (r < 0)
		return r;
	r = config_load_buffer(path, buf, size, ret, on_error, userdata);
	free(buf);
	return r;
}

int config_load_default(const char *path, struct rtplace_reason *reason, struct config *ret,
			config_error_fn *on_error, void *userdata, bool *ret_defaulted)
{
	bool defaulted = false;
	int r = config_load(path ? path : CONFIG_DEFAULT_PATH, reason, ret, on_error, userdata);

	if (r == -ENOENT && !path) {
		config_defaults(ret);
		defaulted = true;
		r = 0;
	}
	if (r == 0 && ret_defaulted)
		*ret_defaulted = defaulted;
	return r;
}

void config_housekeeping(const struct config *c, const struct topo *t, const struct rtplace_cpumask *isolated,
			 struct rtplace_cpumask *ret)
{
	*ret = c->placement.housekeeping_cpus;
	if (cpuset_empty(ret) && c->placement.isolated != PLACEMENT_ISOLATED_IGNORE)
		cpuset_andnot(ret, &t->online, isolated);
	/* Nothing isolated online: no housekeeping set to derive. */
	if (cpuset_equal(ret, &t->online) && cpuset_empty(&c->placement.housekeeping_cpus))
		cpuset_zero(ret);
}

void config_placement(const struct config *c, const struct topo *t, const struct rtplace_cpumask *isolated,
		      struct placement_config *ret)
{
	static const enum placement_smt smt[] = {
		[CONFIG_SMT_NEVER] = PLACEMENT_SMT_NEVER,
		[CONFIG_SMT_RT] = PLACEMENT_SMT_RT,
		[CONFIG_SMT_ALWAYS] = PLACEMENT_SMT_ALWAYS,
	};

	cpuset_andnot(&ret->managed, &t->online, &c->placement.housekeeping_cpus);
	ret->prefer_idle = c->placement.prefer_idle;
	ret->avoid_smt = smt[c->placement.avoid_smt_siblings];
	cpuset_and(&ret->isolated, isolated, &t->online);
	ret->isolated_mode = c->placement.isolated;
	ret->isolated_housekeeping = cpuset_empty(&c->placement.housekeeping_cpus) && !cpuset_empty(&ret->isolated);
	/* Measured by the daemon, which sets it (placement_ctx_set_noisy()). */
	cpuset_zero(&ret->noisy);
}

static bool config_rtkit_equal(const struct config_rtkit *a, const struct config_rtkit *b)
{
	return a->enable == b->enable && a->rttime_usec_max == b->rttime_usec_max &&
	       a->max_realtime_priority == b->max_realtime_priority && a->scheduling_policy == b->scheduling_policy &&
	       a->min_nice_level == b->min_nice_level &&
	       a->actions_burst_sec == b->actions_burst_sec && a->actions_per_burst_max == b->actions_per_burst_max &&
	       a->max_threads_per_user == b->max_threads_per_user &&
	       a->max_processes_per_user == b->max_processes_per_user &&
	       a->watchdog_interval_ms == b->watchdog_interval_ms &&
	       a->watchdog_busy_percent == b->watchdog_busy_percent && a->watchdog_refuse_sec == b->watchdog_refuse_sec;
}

bool config_equal(const struct config *a, const struct config *b)
{
	if (strcmp(a->daemon.socket, b->daemon.socket) != 0 ||
	    strcmp(a->daemon.socket_group, b->daemon.socket_group) != 0 ||
	    a->daemon.socket_mode != b->daemon.socket_mode || a->daemon.log_level != b->daemon.log_level)
		return false;
	if (a->topology.shard != b->topology.shard || strcmp(a->topology.file, b->topology.file) != 0)
		return false;
	if (a->tracker.mode != b->tracker.mode || a->tracker.required != b->tracker.required ||
	    a->tracker.sample_interval_ms != b->tracker.sample_interval_ms)
		return false;
	if (!cpuset_equal(&a->placement.housekeeping_cpus, &b->placement.housekeeping_cpus) ||
	    a->placement.prefer_idle != b->placement.prefer_idle ||
	    a->placement.avoid_smt_siblings != b->placement.avoid_smt_siblings ||
	    a->placement.isolated != b->placement.isolated ||
	    a->placement.claim_timeout_ms != b->placement.claim_timeout_ms ||
	    a->placement.irq_tiebreak != b->placement.irq_tiebreak ||
	    a->placement.irq_window_ms != b->placement.irq_window_ms)
		return false;
	if (a->moves.allow != b->moves.allow || a->moves.n_rt_groups != b->moves.n_rt_groups ||
	    a->moves.max_prio != b->moves.max_prio || a->moves.rebalance != b->moves.rebalance ||
	    a->moves.rebalance_interval_ms != b->moves.rebalance_interval_ms)
		return false;
	for (uint32_t i = 0; i < a->moves.n_rt_groups && i < CONFIG_RT_GROUPS_MAX; i++)
		if (strcmp(a->moves.rt_groups[i], b->moves.rt_groups[i]) != 0)
			return false;
	if (a->moves.n_manage_comm != b->moves.n_manage_comm || a->moves.n_manage_uid != b->moves.n_manage_uid ||
	    a->moves.n_manage_cgroup != b->moves.n_manage_cgroup)
		return false;
	for (uint32_t i = 0; i < a->moves.n_manage_comm && i < CONFIG_MANAGE_MAX; i++)
		if (strcmp(a->moves.manage_comm[i], b->moves.manage_comm[i]) != 0)
			return false;
	for (uint32_t i = 0; i < a->moves.n_manage_uid && i < CONFIG_MANAGE_MAX; i++)
		if (strcmp(a->moves.manage_uid[i], b->moves.manage_uid[i]) != 0)
			return false;
	for (uint32_t i = 0; i < a->moves.n_manage_cgroup && i < CONFIG_MANAGE_MAX; i++)
		if (strcmp(a->moves.manage_cgroup[i], b->moves.manage_cgroup[i]) != 0)
			return false;
	return a->notify.ring_records == b->notify.ring_records &&
	       a->limits.max_clients == b->limits.max_clients &&
	       a->limits.max_clients_per_user == b->limits.max_clients_per_user &&
	       a->limits.max_claims_per_client == b->limits.max_claims_per_client &&
	       a->limits.max_claims_per_user == b->limits.max_claims_per_user &&
	       a->limits.max_lease_ms == b->limits.max_lease_ms &&
	       a->limits.max_claims == b->limits.max_claims &&
	       a->limits.max_subscribers == b->limits.max_subscribers &&
	       a->limits.max_subscribers_per_user == b->limits.max_subscribers_per_user &&
	       a->limits.max_managed_threads == b->limits.max_managed_threads &&
	       a->limits.max_managed_threads_per_user == b->limits.max_managed_threads_per_user &&
	       strcmp(a->metrics.host, b->metrics.host) == 0 && a->metrics.port == b->metrics.port &&
	       a->metrics.bpf_stats == b->metrics.bpf_stats &&
	       a->containers.max_prio == b->containers.max_prio &&
	       a->containers.allow_exclusive == b->containers.allow_exclusive &&
	       a->containers.max_cpus == b->containers.max_cpus && config_rtkit_equal(&a->rtkit, &b->rtkit) &&
	       a->isolation.partition == b->isolation.partition && a->isolation.irqs == b->isolation.irqs &&
	       a->isolation.workqueues == b->isolation.workqueues &&
	       strcmp(a->isolation.cgroup_root, b->isolation.cgroup_root) == 0;
}

const char *config_restart_key(const struct config *old, const struct config *new)
{
	if (strcmp(old->daemon.socket, new->daemon.socket) != 0)
		return "daemon.socket";
	if (strcmp(old->daemon.socket_group, new->daemon.socket_group) != 0)
		return "daemon.socket-group";
	if (old->daemon.socket_mode != new->daemon.socket_mode)
		return "daemon.socket-mode";
	if (old->topology.shard != new->topology.shard)
		return "topology.shard";
	if (strcmp(old->topology.file, new->topology.file) != 0)
		return "topology.file";
	if (old->tracker.mode != new->tracker.mode)
		return "tracker.mode";
	if (old->tracker.required != new->tracker.required)
		return "tracker.required";
	if (old->tracker.sample_interval_ms != new->tracker.sample_interval_ms)
		return "tracker.sample-interval-ms";
	if (old->placement.irq_window_ms != new->placement.irq_window_ms)
		return "placement.irq-window-ms";
	if (strcmp(old->metrics.host, new->metrics.host) != 0 || old->metrics.port != new->metrics.port)
		return "metrics.listen";
	if (old->metrics.bpf_stats != new->metrics.bpf_stats)
		return "metrics.bpf-stats";
	if (old->rtkit.enable != new->rtkit.enable)
		return "rtkit.enable";
	/* What is isolated is undone by what the daemon started with. */
	if (old->isolation.partition != new->isolation.partition)
		return "isolation.partition";
	if (old->isolation.irqs != new->isolation.irqs)
		return "isolation.irqs";
	if (old->isolation.workqueues != new->isolation.workqueues)
		return "isolation.workqueues";
	if (strcmp(old->isolation.cgroup_root, new->isolation.cgroup_root) != 0)
		return "isolation.cgroup-root";
	return NULL;
}
