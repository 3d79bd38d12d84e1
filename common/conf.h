/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtplaced's configuration (DESIGN §9, rtplaced.conf(5)): a plain value
 * struct with a built-in default for every key, and an INI parser (inih)
 * that fills it. Pure: no syscalls besides reading the file, no globals, no
 * logging; every problem goes to the caller's error callback.
 */
#ifndef RTPLACE_DAEMON_CONF_H
#define RTPLACE_DAEMON_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

#include "cpuset.h"
#include "placement.h"
#include "reason.h"
#include "topo.h"

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/rtplace/rtplaced.conf"

/* sizeof(struct sockaddr_un.sun_path): the socket path and its NUL. */
#define CONFIG_SOCKET_MAX 108
/* A group name and its NUL (the useradd/groupadd limit is 32 characters). */
#define CONFIG_GROUP_MAX 33
/* The topology file path and its NUL; large enough for a --topology override. */
#define CONFIG_PATH_MAX 4096
#define CONFIG_RT_GROUPS_MAX 16
/* Entries in each of the manage-comm, manage-uid and manage-cgroup lists. */
#define CONFIG_MANAGE_MAX 16
/* A command name and its NUL: the kernel's TASK_COMM_LEN, as /proc/PID/comm. */
#define CONFIG_COMM_MAX 16
/* A user name (same limit as a group name) or a decimal uid, and its NUL. */
#define CONFIG_USER_MAX CONFIG_GROUP_MAX
/* A cgroup v2 path prefix and its NUL; a config line holds less anyway. */
#define CONFIG_CGROUP_MAX 192
/* Longest line (leading whitespace excluded) the parser accepts. inih holds
 * a line in a 200-byte buffer; a longer line would be split silently. */
#define CONFIG_LINE_MAX 190
/* A numeric listening address and its NUL: an IPv6 address in text
 * (INET6_ADDRSTRLEN) without brackets. */
#define CONFIG_HOST_MAX 46
/* Entries of the tracker's watch map (TRACKER_MAX_WATCHED, which the
 * parser does not include) and the part of it no user but root may take. */
#define CONFIG_WATCHED_MAX 4096
#define CONFIG_WATCHED_USERS_MAX 3840 /* 256 always root's */
/* The most CPUs one claim holds (RTPLACE_ANSWER_MAX, which the parser
 * does not include). */
#define CONFIG_CONTAINER_CPUS_MAX 256
/* Files above this are refused with -EFBIG before parsing. */
#define CONFIG_FILE_MAX (1024 * 1024)

enum config_smt {
	CONFIG_SMT_NEVER,  /* siblings do not matter */
	CONFIG_SMT_RT,     /* avoid siblings of CPUs at a level >= rtP */
	CONFIG_SMT_ALWAYS, /* avoid siblings of any busy CPU (level above idle) */
};

enum config_tracker_mode {
	CONFIG_TRACKER_AUTO,    /* BPF; the /proc sampler when BPF cannot load (unless required) */
	CONFIG_TRACKER_SAMPLED, /* the /proc sampler only: BPF is never loaded */
};

enum config_moves_allow {
	CONFIG_MOVES_OWNER, /* root, CAP_SYS_NICE, or the thread's owner */
	CONFIG_MOVES_ROOT,  /* root or CAP_SYS_NICE only */
};

/*
 * The whole configuration as one value: no pointers, so a reload builds a
 * new one and replaces the old by assignment, and nothing needs freeing.
 * Strings are NUL-terminated and NUL-padded.
 */
struct config {
	struct config_daemon {
		char socket[CONFIG_SOCKET_MAX];      /* absolute path */
		char socket_group[CONFIG_GROUP_MAX]; /* "" = the daemon's own group */
		unsigned socket_mode;                /* permission bits, <= 0777 */
		int log_level;                       /* LOG_ERR .. LOG_DEBUG */
	} daemon;
	struct config_topology {
		enum topo_shard shard;
		char file[CONFIG_PATH_MAX]; /* hwloc XML; "" = the live machine */
	} topology;
	struct config_tracker {
		enum config_tracker_mode mode;
		bool required;               /* no BPF tracker: exit rather than sample */
		uint32_t sample_interval_ms; /* the sampler's period */
	} tracker;
	struct config_placement {
		struct rtplace_cpumask housekeeping_cpus; /* never offered to RT threads */
		bool prefer_idle;
		enum config_smt avoid_smt_siblings;
		enum placement_isolated isolated; /* what RT answers do with isolated CPUs */
		uint32_t claim_timeout_ms; /* default lease; 0 = no lease */
		bool irq_tiebreak;         /* within a level, CPUs with less interrupt time first */
		uint32_t irq_window_ms;    /* the interrupt shares' window (read at start) */
	} placement;
	struct config_moves {
		enum config_moves_allow allow;
		char rt_groups[CONFIG_RT_GROUPS_MAX][CONFIG_GROUP_MAX];
		uint32_t n_rt_groups;
		uint32_t max_prio; /* 1..99: ceiling granted to rt_groups */
		bool rebalance;
		uint32_t rebalance_interval_ms;
		/* Rules that make processes managed. User names stay names:
		 * resolving them is an NSS lookup, left to the daemon. */
		char manage_comm[CONFIG_MANAGE_MAX][CONFIG_COMM_MAX];
		uint32_t n_manage_comm;
		char manage_uid[CONFIG_MANAGE_MAX][CONFIG_USER_MAX]; /* names or decimal uids */
		uint32_t n_manage_uid;
		char manage_cgroup[CONFIG_MANAGE_MAX][CONFIG_CGROUP_MAX]; /* absolute v2 paths */
		uint32_t n_manage_cgroup;
	} moves;
	struct config_notify {
		uint32_t ring_records; /* power of two */
	} notify;
	struct config_limits {
		uint32_t max_clients;          /* of users other than root */
		uint32_t max_clients_per_user; /* per uid, root excepted */
		uint32_t max_claims_per_client;
		uint32_t max_claims_per_user; /* across connections; root is exempt */
		uint32_t max_claims;          /* of users other than root together */
		uint32_t max_subscribers;     /* of users other than root together */
		uint32_t max_subscribers_per_user;
		/* Threads the tracker watches for MANAGE claims of users other
		 * than root: what they leave of its map is root's. */
		uint32_t max_managed_threads;
		uint32_t max_managed_threads_per_user;
		uint32_t max_lease_ms;        /* longest lease without RT privilege */
	} limits;
	struct config_metrics {
		char host[CONFIG_HOST_MAX]; /* numeric IPv4 or IPv6 address, no brackets */
		uint16_t port;              /* 0: no metrics endpoint */
		bool bpf_stats;             /* BPF_ENABLE_STATS while the endpoint runs */
	} metrics;
	/* The node's ceiling on what rtplace-oci-hook grants a container,
	 * below what the container's own spec allows (rtplace-oci-hook(8)). */
	struct config_containers {
		uint32_t max_prio;    /* 1..99 */
		bool allow_exclusive; /* io.rtplace.exclusive=true may be granted */
		uint32_t max_cpus;    /* CPUs one container may claim, 1..CONFIG_CONTAINER_CPUS_MAX */
	} containers;
	/* org.freedesktop.RealtimeKit1 on the system bus (daemon/rtkit.c),
	 * with rtkit's rules and defaults. */
	struct config_rtkit {
		bool enable;
		uint32_t rttime_usec_max;       /* advertised and enforced; never 0 */
		uint32_t max_realtime_priority; /* 1..99 */
		int32_t scheduling_policy;      /* SCHED_RR or SCHED_FIFO, granted threads' */
		int32_t min_nice_level;         /* -20..19 */
		uint32_t actions_burst_sec;     /* the rate window */
		uint32_t actions_per_burst_max; /* requests per uid per window */
		uint32_t max_threads_per_user;  /* RT threads granted per uid at once */
		uint32_t max_processes_per_user;
		/* The starvation watchdog: every interval, a granted thread that
		 * ran busy_percent of it is demoted and grants stop for refuse_sec. */
		uint32_t watchdog_interval_ms;  /* 0: no watchdog */
		uint32_t watchdog_busy_percent; /* 1..100 */
		uint32_t watchdog_refuse_sec;
	} rtkit;
	/* What an exclusive claim that asks for isolation takes away from
	 * the rest of the machine while it lasts (daemon/isolation.h). Each
	 * is host configuration the daemon changes and must undo, so none
	 * is on unless the node's administrator says so. */
	struct config_isolation {
		bool partition;  /* a cgroup v2 isolated cpuset partition: tasks, load balancing */
		bool irqs;       /* movable interrupts' affinity */
		bool workqueues; /* the unbound workqueue cpumask */
		char cgroup_root[CONFIG_CGROUP_MAX]; /* the cgroup v2 mount, absolute */
	} isolation;
};

/* Receives one "file:line: message" (no newline) per error found. */
typedef void config_error_fn(void *userdata, const char *message);

/* Writes the built-in defaults (what an absent or empty file means). */
void config_defaults(struct config *ret);

/*
 * Parses the file at path over the built-in defaults. Returns 0; -ENOENT
 * when the file does not exist (a distinct result: the daemon runs on
 * defaults when the default path is absent, and fails when an explicit
 * --config is); -EBADFD when it is not a regular file (a FIFO, a device,
 * a folder: refused before any read, so nothing blocks); another -errno
 * when it cannot be read (-EFBIG above CONFIG_FILE_MAX). For these, reason
 * says what was wrong with which file (file_read_regular()) and on_error
 * is not called. -EINVAL when the text has errors, after calling on_error
 * (may be NULL) once for every error in the file, not just the first;
 * -ENOMEM. ret is written only on success, so a failed reload leaves the
 * running configuration untouched.
 */
int config_load(const char *path, struct rtplace_reason *reason, struct config *ret, config_error_fn *on_error,
		void *userdata);

/*
 * config_load() of path, or of CONFIG_DEFAULT_PATH when path is NULL, where
 * no file means the built-in defaults (*ret_defaulted, may be NULL, says
 * so on success): the daemon and rtplace-run's fallback read their
 * configuration by this one rule. A file named by path must exist.
 * Returns as config_load().
 */
int config_load_default(const char *path, struct rtplace_reason *reason, struct config *ret,
			config_error_fn *on_error, void *userdata, bool *ret_defaulted);

/* As config_load, for text in memory; name stands in for the file name in
 * messages. Returns 0, -EINVAL or -ENOMEM. */
int config_load_string(const char *name, const char *text, struct config *ret,
		       config_error_fn *on_error, void *userdata);

/* As config_load_string, for size bytes that need not be NUL-terminated
 * (a NUL byte inside a line is an error). */
int config_load_buffer(const char *name, const void *data, size_t size, struct config *ret,
		       config_error_fn *on_error, void *userdata);

/*
 * The placement settings of c over topology t and the host's isolated CPUs
 * (sysfs_read_isolation()), as the daemon and rtplace-run's fallback both
 * apply them: managed is the online CPUs minus housekeeping-cpus; with
 * housekeeping-cpus unset and CPUs isolated, the others are housekeeping.
 */
void config_placement(const struct config *c, const struct topo *t, const struct rtplace_cpumask *isolated,
		      struct placement_config *ret);

/* The housekeeping CPUs config_placement() gives: housekeeping-cpus, or
 * when unset and CPUs are isolated, the online CPUs not isolated. */
void config_housekeeping(const struct config *c, const struct topo *t, const struct rtplace_cpumask *isolated,
			 struct rtplace_cpumask *ret);

bool config_equal(const struct config *a, const struct config *b);

/*
 * Name ("section.key") of the first key that differs between old and new
 * and takes effect only at restart (the socket and the map layout are set
 * up once), or NULL: lets a reload say what it could not apply.
 */
const char *config_restart_key(const struct config *old, const struct config *new);

#endif
