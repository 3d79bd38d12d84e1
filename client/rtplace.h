/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * librtplace: the client library of rtplaced (DESIGN §8). Ask which CPUs an
 * RT thread of priority P should run on, hold them as a claim, read the
 * per-CPU snapshot and the daemon's status, ask the daemon to move a
 * thread, and subscribe to its notification records. See librtplace(3).
 *
 * Conventions. Every function that can fail returns 0 or a negative errno;
 * output parameters come last and are written only on success; destructors
 * accept NULL. The library never logs, never exits, never raises SIGPIPE,
 * and opens every descriptor close-on-exec.
 *
 * Threads. A struct rtplace may be shared by threads: calls on one handle are
 * serialised by a mutex inside it, one request and its reply at a time.
 * Threads that query often should each open their own handle. Claims made
 * without an owner process belong to the handle's connection and end when
 * the handle is closed (and any subscription made on it freed). A struct
 * rtplace_sub has one reader at a time.
 *
 * Daemon restarts. When the daemon has gone away (the socket reports
 * end-of-file or a reset), the next call reconnects once to the same path
 * and retries; if that fails, the call returns the error. Claims of the old
 * connection died with the old daemon: a program that holds claims re-queries.
 *
 * Numbers on the wire are those of DESIGN §2, defined once in the protocol
 * header rtplace-proto.h, which this header includes.
 */
#ifndef RTPLACE_H
#define RTPLACE_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* CPU sets are glibc's cpu_set_t, which sched.h declares only under
 * _GNU_SOURCE (as it does sched_setaffinity()); `pkg-config --cflags
 * rtplace` defines it. */
#ifndef CPU_SETSIZE
#error "rtplace.h uses cpu_set_t: compile with `pkg-config --cflags rtplace`, or define _GNU_SOURCE before including any system header"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define RTPLACE_DEFAULT_SOCKET "/run/rtplace/rtplaced.sock"
#define RTPLACE_SOCKET_ENV "RTPLACE_SOCKET"

/* The numbers (CPU limit, levels, priorities, leases, query flags) are the
 * wire contract's, defined once in rtplace-proto.h. */
#include "rtplace-proto.h"

/* Per-CPU flags of a snapshot. */
#define RTPLACE_CPU_F_ONLINE (1u << 0)       /* online and managed */
#define RTPLACE_CPU_F_HOUSEKEEPING (1u << 1) /* left out of the default allowed set */
#define RTPLACE_CPU_F_ISOLATED (1u << 2)     /* isolcpus= or an isolated cgroup partition */
#define RTPLACE_CPU_F_NOHZ_FULL (1u << 3)    /* nohz_full= */

/* Status flags. */
#define RTPLACE_STATUS_F_TRACKING (1u << 0) /* levels come from the live BPF tracker */
#define RTPLACE_STATUS_F_MOVES (1u << 1)    /* MOVE and SUBSCRIBE are served */

/* Move flags: at least one of SET_AFFINITY and SET_SCHED. */
#define RTPLACE_MOVE_F_SET_AFFINITY (1u << 0) /* set the affinity to cpus (non-empty) */
#define RTPLACE_MOVE_F_SET_SCHED (1u << 1)    /* set policy and prio */
#define RTPLACE_MOVE_F_PLACE (1u << 2)        /* with SET_AFFINITY: pin to the best CPU of cpus */
#define RTPLACE_MOVE_F_FORCE (1u << 3)        /* skip the re-check of the target's level */
#define RTPLACE_MOVE_F_SYSTEM (1u << 4)       /* the target may be PID 1's, a kernel thread, rtplaced's */
#define RTPLACE_MOVE_F_PROCESS (1u << 5)      /* every thread of tid's process, all or none */

/* Most CPUs one query may ask for. */
#define RTPLACE_ANSWER_MAX 256
#define RTPLACE_REASON_LEN RTPLACE_REASON_MAX /* 512 (64 before 0.2.0) */
#define RTPLACE_COMM_LEN 16
#define RTPLACE_VERSION_LEN 32
#define RTPLACE_WHY_LEN RTPLACE_REASON_LEN

/* A connection to rtplaced. */
struct rtplace;

/*
 * Which CPUs for an RT thread (DESIGN §5). Start from RTPLACE_REQUEST_INIT
 * so that the hints read "none"; fields added later take the place of
 * reserved, whose zero keeps today's meaning.
 */
struct rtplace_request {
	int prio;                 /* RT priority 1..99 */
	int policy;               /* SCHED_FIFO or SCHED_RR; 0 means SCHED_FIFO */
	unsigned count;           /* CPUs wanted, 1..RTPLACE_ANSWER_MAX; 0 means 1 */
	unsigned flags;           /* RTPLACE_QUERY_F_* */
	int node;                 /* NUMA node to stay on, -1 for none */
	int near_cpu;             /* CPU to be near (cache-hot), -1 for none */
	uint32_t lease_ms;        /* with CLAIM: RTPLACE_LEASE_DEFAULT, _INFINITE or ms */
	pid_t owner_pid;          /* with CLAIM: process the claim lives with, 0 for none */
	const cpu_set_t *allowed; /* CPUs to choose from, NULL for every managed CPU */
	size_t allowed_size;      /* bytes at allowed (sizeof(cpu_set_t), or CPU_ALLOC_SIZE() past 1,024 CPUs) */
	uint32_t reserved[8];     /* zero */
};

#define RTPLACE_REQUEST_INIT { .prio = 1, .node = -1, .near_cpu = -1 }

/*
 * The daemon's answer, best CPU first. count 0 is an answer: no allowed CPU
 * is below the priority, and reason says why.
 */
struct rtplace_answer {
	uint64_t claim_id;        /* non-zero when a claim was granted */
	uint32_t lease_ms;        /* the claim's lease, RTPLACE_LEASE_INFINITE for none */
	unsigned count;           /* CPUs in cpus[] */
	unsigned level;           /* highest level among them (RTPLACE_LEVEL_*) */
	int cpus[RTPLACE_ANSWER_MAX];
	uint8_t levels[RTPLACE_ANSWER_MAX]; /* level of each, when chosen */
	/* The same CPUs as a set, for sched_setaffinity(): those below
	 * CPU_SETSIZE (1,024), which is all of them on a machine of up to
	 * 1,024 CPUs; cpus[] names every one. */
	cpu_set_t set;
	char reason[RTPLACE_REASON_LEN];
};

/* One CPU of the daemon's snapshot. */
struct rtplace_cpu {
	int cpu;
	unsigned level;           /* RTPLACE_LEVEL_* */
	unsigned flags;           /* RTPLACE_CPU_F_* */
	int node, llc, core;      /* dense ids, -1 when unknown (offline) */
	int package;              /* dense id, -1 when unknown (offline, or a daemon too old to say) */
	int kind;                 /* CPU kind, 0 the most performant */
	pid_t pid;                /* thread running at the last update, 0 for none or idle */
	unsigned rt_queued;       /* RT tasks queued */
	uint64_t claim_id;        /* claim holding the CPU, 0 for none */
	unsigned claim_level;     /* level the claim holds it at */
	char comm[RTPLACE_COMM_LEN]; /* comm of pid, "" when unknown */
	/* The CPU's hardirq and softirq time in the daemon's last interrupt
	 * window, in hundredths of a percent (RTPLACE_SHARE_ONE: all of it),
	 * where flags has RTPLACE_CPU_F_IRQ (not from a simulating daemon or
	 * one before protocol version 3: then 0). */
	unsigned irq_share, softirq_share;
};

/* Time one CPU spent in each class (DESIGN §16): ns[RTPLACE_CLASS_IDLE],
 * _NORMAL, _RT and _DL (rtplace-levels.h). */
struct rtplace_cpu_time {
	int cpu;
	uint64_t sampled_ns;      /* CLOCK_MONOTONIC when the daemon read the counters */
	uint64_t ns[RTPLACE_CLASS_COUNT]; /* nanoseconds per class, each only growing */
};

struct rtplace_status {
	char version[RTPLACE_VERSION_LEN]; /* the daemon's version */
	uint64_t uptime_ms;
	unsigned ncpus;           /* CPU ids (highest id + 1) */
	unsigned nonline;         /* online managed CPUs */
	unsigned nnodes, nllcs, ncores;
	unsigned flags;           /* RTPLACE_STATUS_F_* */
	uint64_t queries, errors;
	uint64_t claims_active, claims_total;
	uint64_t clients, clients_dropped;
	uint64_t moves;
};

/* Asks the daemon to move thread tid (DESIGN §7). */
struct rtplace_move_request {
	pid_t tid;
	unsigned flags;           /* RTPLACE_MOVE_F_* */
	int policy;               /* with SET_SCHED: SCHED_FIFO or SCHED_RR */
	int prio;                 /* with SET_SCHED: 1..99 */
	cpu_set_t cpus;           /* with SET_AFFINITY (CPUs below CPU_SETSIZE) */
};

/* The thread's scheduling after the move, and before it (affinities: the
 * CPUs below CPU_SETSIZE). */
struct rtplace_move_result {
	pid_t tid;
	int policy, prio;         /* policy SCHED_OTHER (prio 0) for any non-RT policy */
	int prev_policy, prev_prio;
	cpu_set_t cpus, prev_cpus;
};

/*
 * Connects to rtplaced at socket_path; NULL means $RTPLACE_SOCKET (ignored
 * in set-user-ID programs), else RTPLACE_DEFAULT_SOCKET. Returns 0,
 * -ENOENT or -ECONNREFUSED when no daemon listens, -ETIMEDOUT when one
 * listens but takes no connection within the default timeout (a stopped
 * daemon, its backlog full), -EACCES, -ENAMETOOLONG, -ENOMEM. A daemon at one of its client limits accepts the connection
 * and refuses it with a reason: the first call on the handle then fails
 * with -EUSERS, and rtplace_last_reason() names the limit
 * ("[limits] max-clients-per-user = 32 reached").
 */
int rtplace_connect(const char *socket_path, struct rtplace **ret);

/* Closes the connection; claims tied to it (no owner_pid) end. Accepts NULL. */
void rtplace_close(struct rtplace *rp);

/*
 * How long each wait of a call lasts at most (default 5000 ms): for the
 * connection when the call reconnects, for the daemon to take the
 * request, for its reply (events arriving meanwhile do not extend it).
 * 0 or -EINVAL.
 */
int rtplace_set_timeout(struct rtplace *rp, unsigned timeout_ms);

/*
 * Pids given to rtplace_query() (owner_pid) and rtplace_move() (tid) are
 * the caller's own numbers, also inside a container with its own PID
 * namespace: the library sends a pidfd of the process with the request, so
 * the daemon knows which process is meant (DESIGN §15). A process the
 * caller cannot see is -ESRCH.
 *
 * Asks which CPUs (and, with RTPLACE_QUERY_F_CLAIM, claims them). Returns 0
 * with the answer (count may be 0); -EINVAL or -ERANGE for a bad request
 * (as judged by the daemon or locally); -EDQUOT at the claim limit; -EPERM
 * or -ESRCH for an owner_pid this caller may not use; -EOPNOTSUPP for a
 * flag the daemon does not serve; -ETIMEDOUT; a connection error.
 */
int rtplace_query(struct rtplace *rp, const struct rtplace_request *req, struct rtplace_answer *ret);

/*
 * Local reads (DESIGN §19): asks the daemon for read-only descriptors of
 * its cpupri map and placement snapshot and maps them PROT_READ. From then
 * on rtplace_query() without RTPLACE_QUERY_F_CLAIM (or _MANAGE) is answered
 * in the calling thread by the daemon's own placement code, with no
 * syscall and no lock; a claim still goes to the daemon, and so does a
 * query while the snapshot is being rewritten at every try, or one that
 * placement refuses (the daemon then gives the reason). Each thread's
 * first local query builds its own state (the topology, a placement
 * context), kept until rtplace_close(). Returns 0 (also when already
 * open); -EOPNOTSUPP from a daemon that offers no map (an older one, or
 * one sampling levels from /proc);
 * -EPROTONOSUPPORT when the snapshot's layout is one this library does
 * not know; -ENOMEM; a connection error. On failure queries keep asking
 * the socket.
 */
int rtplace_local_open(struct rtplace *rp);

/* Ends a claim. ret_ncpus (may be NULL) gets how many CPUs it held.
 * -ENOENT for no such claim, -EPERM for another client's claim. */
int rtplace_release(struct rtplace *rp, uint64_t claim_id, unsigned *ret_ncpus);

/*
 * The per-CPU snapshot, CPU ids 0..*ret_n-1, in an array to free with
 * rtplace_cpus_free().
 */
int rtplace_cpus(struct rtplace *rp, struct rtplace_cpu **ret_cpus, size_t *ret_n);
void rtplace_cpus_free(struct rtplace_cpu *cpus);

/*
 * The time each CPU spent in each class, CPU ids 0..*ret_n-1, in an array
 * to free with rtplace_cpu_times_free(): counted by the daemon's BPF
 * tracker since the daemon started, offline time in no class. The share of an interval is the difference of
 * two calls. -EOPNOTSUPP from a daemon without the tracker (simulated
 * levels) or one older than this call.
 */
int rtplace_cpu_times(struct rtplace *rp, struct rtplace_cpu_time **ret_times, size_t *ret_n);
void rtplace_cpu_times_free(struct rtplace_cpu_time *times);

/* One claim the daemon holds (DESIGN §6), as this caller may see it: its
 * owner only where flags has RTPLACE_CLAIM_F_UID (the caller's own uid's
 * claims, or root's view), its process only with RTPLACE_CLAIM_F_PID (a
 * process of the caller's PID namespace, by the caller's number). */
struct rtplace_claim {
	uint64_t id;
	unsigned level;           /* RTPLACE_LEVEL_*: the level its CPUs count as */
	unsigned flags;           /* RTPLACE_CLAIM_F_* (rtplace-proto.h) */
	unsigned lease_left_ms;   /* with RTPLACE_CLAIM_F_LEASE: ms until its lease runs out */
	pid_t owner_pid;          /* with RTPLACE_CLAIM_F_PID, else 0 */
	uid_t owner_uid;          /* with RTPLACE_CLAIM_F_UID, else 0 */
	char owner_comm[RTPLACE_COMM_LEN]; /* with RTPLACE_CLAIM_F_PID: its comm, "" when unknown */
	unsigned ncpus;           /* CPUs it holds */
	cpu_set_t cpus;           /* those below CPU_SETSIZE (1,024) */
};

/*
 * Every claim the daemon holds, by id, in an array to free with
 * rtplace_claims_free(). -EOPNOTSUPP from a daemon older than this call:
 * rtplace_cpus() still names each CPU's claim by its id.
 */
int rtplace_claims(struct rtplace *rp, struct rtplace_claim **ret_claims, size_t *ret_n);
void rtplace_claims_free(struct rtplace_claim *claims);
/* Claim id alone, as rtplace_claims() would list it; -ENOENT when the
 * daemon holds no such claim, -EOPNOTSUPP as above. */
int rtplace_claim(struct rtplace *rp, uint64_t id, struct rtplace_claim *ret);

/*
 * Why rtplace_query() would answer what it would (DESIGN §5): a dry run of
 * req with nothing claimed and the daemon's rotation left alone, so that a
 * query that follows at once gets the same CPUs. For every CPU id, its
 * verdict (RTPLACE_EXPLAIN_*: chosen, or the rule that passed it over),
 * what runs there and a claim's holder as far as this caller may see them
 * (as rtplace_cpus() and rtplace_claims() would show); and what would
 * stop the thread (req's owner_pid with RTPLACE_QUERY_F_CLAIM, else the
 * caller) from getting the policy asked (RTPLACE_OBSTACLE_*). The struct
 * types of cpus and obstacles are the wire's (rtplace-proto.h).
 */
struct rtplace_explanation {
	int result;               /* rtplace_query()'s answer now: 0 with nchosen CPUs,
				     -ENOENT none below the priority, -ENODEV no managed
				     online CPU allowed */
	unsigned nchosen;
	unsigned level;           /* highest level chosen, RTPLACE_LEVEL_OFFLINE for none */
	unsigned claim_level;     /* with RTPLACE_QUERY_F_CLAIM: the level the claim would hold */
	int chosen[RTPLACE_ANSWER_MAX]; /* the CPUs, in the order they were picked */
	unsigned nobstacles;
	struct rtplace_explain_obstacle obstacles[RTPLACE_EXPLAIN_OBSTACLES_MAX];
	char detail[RTPLACE_REASON_LEN]; /* with RTPLACE_OBSTACLE_RT_BUDGET: the folder and the fix */
	size_t ncpus;             /* CPU ids 0..ncpus-1 */
	struct rtplace_explain_cpu *cpus; /* cpus[i] is CPU i */
};

/*
 * Explains req (as rtplace_query() takes it) into an explanation to free
 * with rtplace_explanation_free(). The daemon answers a page of 128 CPUs
 * at a time, each a dry run of its own: pages that disagree (the machine
 * changed between them) are asked again, and -EAGAIN returned when they
 * keep disagreeing. -EOPNOTSUPP from a daemon older than this call; the
 * errors of rtplace_query() otherwise.
 */
int rtplace_explain(struct rtplace *rp, const struct rtplace_request *req, struct rtplace_explanation **ret);
void rtplace_explanation_free(struct rtplace_explanation *e);
/* "idle", "normal", "rt", "dl"; "?" when out of range. */
const char *rtplace_class_name(unsigned cls);

int rtplace_status(struct rtplace *rp, struct rtplace_status *ret);

/* Where the daemon's levels come from (rtplaced.conf(5), [tracker]). */
struct rtplace_tracking {
	unsigned mode;        /* RTPLACE_TRACKING_LIVE, _SAMPLED or _SIMULATED */
	unsigned interval_ms; /* SAMPLED: a level may be this old; else 0 */
	uint64_t samples;     /* SAMPLED: samples taken, and how many failed */
	uint64_t failures;
	uint64_t cpu_ns;      /* SAMPLED: the daemon's CPU time spent sampling */
	char why[RTPLACE_WHY_LEN]; /* SAMPLED: why not LIVE (the missing feature); else "" */
};

/* -EOPNOTSUPP from a daemon older than the question: it tracks live
 * (RTPLACE_STATUS_F_TRACKING) or simulates. */
int rtplace_tracking(struct rtplace *rp, struct rtplace_tracking *ret);

/* The host's RT throttling (DESIGN §20); the isolated and nohz_full CPUs
 * are RTPLACE_CPU_F_ISOLATED and RTPLACE_CPU_F_NOHZ_FULL in rtplace_cpus(). */
struct rtplace_host {
	int rt_known;           /* non-zero: the daemon could read the sysctls */
	int64_t rt_runtime_us;  /* kernel.sched_rt_runtime_us: -1 unlimited */
	int64_t rt_period_us;   /* kernel.sched_rt_period_us */
};

/* -EOPNOTSUPP from a daemon older than the question. */
int rtplace_host(struct rtplace *rp, struct rtplace_host *ret);

/* The kernel's RT environment as the daemon last read it (DESIGN §20):
 * RT group scheduling, the fair and ext deadline servers, sched_ext; the
 * reply's fields are rtplace-proto.h's. -EOPNOTSUPP from a daemon older
 * than the question. */
int rtplace_kernel(struct rtplace *rp, struct rtplace_kernel_reply *ret);
/*
 * Asks the daemon to read its configuration file again, as root (what
 * `systemctl reload rtplaced` runs): 0 once it applies the file whole; an
 * error, with the daemon's reason in rtplace_last_reason(), when it keeps
 * the running configuration: -EINVAL the file does not load, -EBUSY a
 * claim holds a CPU the file would take from placement, -EPERM the caller
 * is not root; -EOPNOTSUPP from a daemon older than the request.
 */
int rtplace_reload(struct rtplace *rp);

/* Asks the daemon to move a thread. ret may be NULL. -EOPNOTSUPP from a
 * daemon that does not serve moves. */
int rtplace_move(struct rtplace *rp, const struct rtplace_move_request *req, struct rtplace_move_result *ret);

/*
 * Notification records (DESIGN §7): the daemon publishes one for every move
 * it makes, claim made, claim that ends (released, expired, revoked), RT
 * collision seen on a managed thread and managed thread that exits. A subscriber reads them from a ring in
 * memory shared with the daemon, woken by a doorbell that rings only when
 * the ring goes from empty to non-empty; the daemon never waits for a slow
 * subscriber: what does not fit is dropped and counted, and the subscriber
 * is told how many it lost.
 *
 * struct rtplace_notification is the library's copy of one record, in the
 * types of this header (Linux policies, int CPUs); the shared-memory format
 * itself (record.h of the sources, 32-byte records) is not part of the API,
 * so it may change without changing this struct's ABI.
 */
#define RTPLACE_NOTIFY_MOVED 1         /* the daemon moved tid from_cpu -> to_cpu */
#define RTPLACE_NOTIFY_CLAIM_EXPIRED 2 /* a claim's lease ran out: tid is its owner (0: none), from_cpu its first CPU */
#define RTPLACE_NOTIFY_COLLISION 3     /* managed tid waited behind an equal or higher RT task on from_cpu */
#define RTPLACE_NOTIFY_THREAD_EXITED 4 /* a managed thread exited */
#define RTPLACE_NOTIFY_CLAIM_REVOKED 5 /* a claim's CPU went offline (hotplug): tid is its owner (0: none), from_cpu its first CPU */
#define RTPLACE_NOTIFY_WATCHDOG 6      /* the RealtimeKit starvation watchdog demoted tid: from_cpu the CPU it kept from normal work, policy and prio what it had */
#define RTPLACE_NOTIFY_CLAIM_CREATED 7 /* a claim was made: claim_id, tid its owner (0: none), from_cpu its first CPU */
#define RTPLACE_NOTIFY_CLAIM_RELEASED 8 /* a claim ended by release, its connection's close or its owner's exit: as CLAIM_CREATED */
#define RTPLACE_NOTIFY_ISOLATED 9      /* a claim's CPUs were isolated: as CLAIM_CREATED, detail RTPLACE_NOTIFY_ISOLATED_* */
#define RTPLACE_NOTIFY_ISOLATION_RELEASED 10 /* they came back: as CLAIM_CREATED, detail RTPLACE_NOTIFY_ISOLATION_END_* */

/* An ISOLATED record's detail: what the CPUs were taken away from, then
 * what could not be (the counts are in the daemon's log). */
#define RTPLACE_NOTIFY_ISOLATED_PARTITION 0x01   /* other tasks (an isolated cpuset partition) */
#define RTPLACE_NOTIFY_ISOLATED_IRQS 0x02        /* movable interrupts */
#define RTPLACE_NOTIFY_ISOLATED_WORKQUEUES 0x04  /* unbound workqueues */
#define RTPLACE_NOTIFY_ISOLATED_IRQBALANCE 0x08  /* a running irqbalance was told to ban them */
#define RTPLACE_NOTIFY_ISOLATED_MANAGED_KEPT 0x10 /* managed interrupts stay: the kernel keeps them */
#define RTPLACE_NOTIFY_ISOLATED_NOT_WRITTEN 0x20 /* an affinity or mask could not be written */
#define RTPLACE_NOTIFY_ISOLATED_IRQBALANCE_UNREACHED 0x40 /* irqbalance runs and did not answer on its socket */
/* An ISOLATION_RELEASED record's detail: why. */
#define RTPLACE_NOTIFY_ISOLATION_END_RELEASED 1     /* released, or its connection closed */
#define RTPLACE_NOTIFY_ISOLATION_END_EXPIRED 2      /* its lease ran out */
#define RTPLACE_NOTIFY_ISOLATION_END_OWNER_EXITED 3 /* its owner exited */
#define RTPLACE_NOTIFY_ISOLATION_END_REVOKED 4      /* a CPU of it went offline */
#define RTPLACE_NOTIFY_ISOLATION_END_STOP 5         /* the daemon stopped */

struct rtplace_notification {
	uint64_t seq;             /* daemon-wide, +1 per record, from 1: gaps are others' records */
	uint64_t time_ns;         /* CLOCK_MONOTONIC when it happened */
	unsigned type;            /* RTPLACE_NOTIFY_*; skip types you do not know */
	pid_t tid;                /* thread concerned (see the types) */
	uid_t uid;                /* effective uid owning tid */
	int from_cpu, to_cpu;     /* -1: unknown or not one CPU */
	int policy;               /* after the event: SCHED_FIFO, SCHED_RR, SCHED_OTHER (any non-RT) */
	int prio;                 /* the RT priority concerned, 0 for none (see librtplace(3)) */
	union {
		uint32_t reserved; /* zero in records other than ISOLATED and ISOLATION_RELEASED */
		uint32_t detail;   /* ISOLATED: RTPLACE_NOTIFY_ISOLATED_*; ISOLATION_RELEASED: RTPLACE_NOTIFY_ISOLATION_END_* */
	};
	uint64_t claim_id;        /* the claim of a CLAIM_* or ISOLAT* record; 0 in others, and from a daemon before 0.2.0 */
};

/* A subscription: the ring mapped, its doorbell, the connection it lives on. */
struct rtplace_sub;

/*
 * Subscribes to the daemon's records. Root and CAP_SYS_NICE see every
 * record; other users only those about their own threads. The daemon ties
 * the subscription to the connection, and the subscription holds that
 * connection (a duplicate of the handle's socket): it lasts until
 * rtplace_sub_free(), or until the daemon goes away, whatever is done with
 * rp afterwards. So claims made on rp without an owner also last until both
 * rp is closed and the subscription freed. Subscribing twice on one
 * connection shares one ring: read it through one struct rtplace_sub only.
 * Returns 0; -EOPNOTSUPP from a daemon without records; -EUSERS at the
 * daemon's subscriber limit; -EPROTO for a ring it cannot read; the errors
 * of a call.
 */
int rtplace_subscribe(struct rtplace *rp, struct rtplace_sub **ret);

/*
 * A descriptor for the caller's poll loop: readable (POLLIN) when the
 * doorbell rang or the daemon closed the connection; rtplace_sub_read()
 * then says which. Owned by the subscription.
 */
int rtplace_sub_fd(const struct rtplace_sub *s);

/*
 * Takes up to max (> 0) records, oldest first, and clears the doorbell; never
 * blocks. *ret_n gets how many (0 when none is waiting), *ret_lost (may be
 * NULL) how many were dropped since the previous call because the ring was
 * full: all of them before the records returned. When records remain
 * (*ret_n == max), the descriptor is left readable, so a poll loop comes
 * back for them. Returns 0; -ECONNRESET once the ring is empty and the
 * daemon has ended the subscription (it stopped); -EPROTO when the ring is
 * corrupt. One thread at a time per subscription.
 */
int rtplace_sub_read(struct rtplace_sub *s, struct rtplace_notification *recs, size_t max, size_t *ret_n,
		     uint64_t *ret_lost);

/* Records the ring holds; more published before a read are lost. */
unsigned rtplace_sub_capacity(const struct rtplace_sub *s);

/* Ends the subscription: unmaps the ring, closes its descriptors. Accepts NULL. */
void rtplace_sub_free(struct rtplace_sub *s);

/* "moved", "claim-expired", "collision", "thread-exited", "claim-revoked",
 * "claim-created", "claim-released"; "?" for others. */
const char *rtplace_notification_name(unsigned type);

/* Place-self flags. */
#define RTPLACE_PLACE_F_SCHED (1u << 0) /* also set req->policy and req->prio */

/*
 * Places the calling thread: queries with RTPLACE_QUERY_F_CLAIM added,
 * pins the calling thread to the answer's CPUs and, with
 * RTPLACE_PLACE_F_SCHED, sets its policy and priority from req. A NULL
 * req->allowed means the thread's current affinity (so cgroup and taskset
 * limits are respected). The claim lives as long as the connection (or
 * req->owner_pid). ret (may be NULL) gets the answer.
 *
 * Returns 0; -EBUSY when no allowed CPU is below the priority; -EPERM when
 * the policy may not be set (needs CAP_SYS_NICE or RLIMIT_RTPRIO); the
 * errors of rtplace_query(). On failure the thread's affinity and policy are
 * as before and the claim is released.
 */
int rtplace_place_self(struct rtplace *rp, const struct rtplace_request *req, unsigned flags,
		       struct rtplace_answer *ret);

/*
 * The daemon's reason for the last ERROR reply on this handle ("owner_pid
 * belongs to another user"), copied into buf (cut to len - 1 characters:
 * RTPLACE_REASON_LEN bytes hold any whole). Meaningful right after a call
 * failed, from the thread that made it. 0, or -ENOENT when the last call got
 * no ERROR reply (the failure was local or of the connection).
 */
int rtplace_last_reason(struct rtplace *rp, char *buf, size_t len);

/* "offline", "idle", "normal", "rt1".."rt99", "dl"; "?" when out of range. */
const char *rtplace_level_name(unsigned level);

#ifdef __cplusplus
}
#endif

#endif
