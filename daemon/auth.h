/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every rights decision of the daemon: who may move which thread and how
 * high (DESIGN §7), and what a claim may hold, who may own it and who may
 * release it (§6, §14). Two halves:
 *
 * - readers that turn a pid/tid into plain structs, reading only files
 *   under a proc root the caller passes ("/proc" in the daemon, a fake tree
 *   in the tests): <root>/PID/status (Uid, Gid, Groups, CapEff),
 *   <root>/PID/ns/user (beside the daemon's own, when CapEff has
 *   CAP_SYS_NICE), <root>/PID/limits ("Max realtime priority", soft limit)
 *   and <root>/TID/stat (policy, rt_priority); and, for the daemon's hot path,
 *   the same facts from system calls on the live kernel (auth_peer_creds()
 *   after a connection's first read, auth_peer_move_creds(),
 *   auth_target_read_live()), which format no text;
 * - the decisions on those structs: auth_move_allowed(), auth_claim_terms(),
 *   auth_may_own(), auth_may_release() and the policy from the
 *   configuration, auth_policy_from_config().
 *
 * The rules mirror the kernel's own checks for sched_setaffinity and
 * sched_setscheduler, so the daemon (which holds CAP_SYS_NICE) never lets a
 * client do what the kernel would refuse it, except where the configuration
 * grants a group a ceiling ([moves] rt-groups, max-prio).
 *
 * Identity: the requester may move the thread when it is root (uid 0), has
 * CAP_SYS_NICE, or owns the thread: its uid (SO_PEERCRED's, the effective
 * uid at connect time) equals the thread's real or effective uid, as the
 * kernel's check_same_owner() compares. [moves] allow = root drops the
 * owner rule.
 *
 * User namespaces: a capability counts only over the daemon's own user
 * namespace (the initial one on a host), as the kernel's capable() counts
 * it. Any user may unshare(CLONE_NEWUSER) and hold every capability in
 * CapEff over a namespace of its own, which grants nothing on the host:
 * auth_cap_sys_nice() is the one answer every rule asks. Every uid here
 * (the requester's from SO_PEERCRED, a thread's from /proc or its pidfd)
 * is as the daemon's namespace sees it, so root of `unshare -Ur` run by
 * nobody is nobody.
 *
 * Priority: with CAP_SYS_NICE, anything. Otherwise the kernel's rules for an
 * unprivileged sched_setscheduler, with the RLIMIT_RTPRIO of the requester
 * and of the target both applying (the lower wins): the kernel checks the
 * target's limit when the requester changes the thread itself, and the
 * daemon acts for the requester, whose limit must hold too; honouring both can never exceed either.
 * Changing the policy needs a non-zero limit; raising the priority above
 * the thread's current one needs a limit at least as high. Members of an
 * rt-group may instead go up to max-prio. uid 0 without CAP_SYS_NICE gets
 * the rlimit rule too: the kernel decides priority by capability, not uid.
 */
#ifndef RTPLACE_AUTH_H
#define RTPLACE_AUTH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf.h"
#include "reason.h"

/* Supplementary groups kept per requester; beyond these, membership is not
 * seen, which can only refuse a group ceiling, never grant one. */
#define AUTH_GROUPS_MAX 256
#define AUTH_RT_GROUPS_MAX 16
/* want_policy for a move that leaves policy and priority alone. */
#define AUTH_SCHED_KEEP (-1)
/* An RLIMIT_RTPRIO of "unlimited". */
#define AUTH_RLIM_INFINITY UINT64_MAX

struct auth_creds {
	pid_t pid;
	uid_t uid;               /* SO_PEERCRED: effective uid at connect */
	gid_t gid;               /* SO_PEERCRED: effective gid at connect */
	/* CAP_SYS_NICE in CapEff: over the requester's own user namespace,
	 * whatever that is. Worth only what auth_cap_sys_nice() says. */
	bool capeff_sys_nice;
	/* That namespace is the daemon's. Read after CapEff: a process only
	 * ever moves to a namespace below its own, never back, so it was the
	 * daemon's when CapEff was read too. False when not read (no
	 * CAP_SYS_NICE in CapEff) or unreadable. */
	bool userns_daemon;
	uint64_t rtprio_limit;   /* soft RLIMIT_RTPRIO */
	uint32_t ngroups;
	gid_t groups[AUTH_GROUPS_MAX]; /* supplementary groups */
};

struct auth_target {
	pid_t tid;
	pid_t tgid;              /* its process */
	pid_t ppid;              /* its process's parent; 0 when not read */
	uid_t uid;               /* real uid */
	uid_t euid;              /* effective uid: the notification filter key */
	int policy;              /* SCHED_* (reset-on-fork flag not included) */
	int prio;                /* rt_priority: 1..99 for RT policies, else 0 */
	int reset_on_fork;       /* SCHED_RESET_ON_FORK or 0; read live only (/proc does not show it) */
	bool sched_live;         /* policy, prio, reset_on_fork from sched_getattr (auth_target_read_live()) */
	uint64_t rtprio_limit;   /* soft RLIMIT_RTPRIO of the thread's process */
};

enum auth_allow {
	AUTH_ALLOW_OWNER,        /* root, CAP_SYS_NICE, or the thread's owner */
	AUTH_ALLOW_ROOT,         /* root or CAP_SYS_NICE */
};

struct auth_policy {
	enum auth_allow allow;
	uint32_t n_rt_gids;
	gid_t rt_gids[AUTH_RT_GROUPS_MAX];
	uint32_t max_prio;       /* ceiling for rt_gids members, 1..99 */
};

/*
 * Reads the credentials of the process pid that connected with uid and gid
 * (from SO_PEERCRED). Returns 0; -ESRCH when the process is gone or its
 * effective uid is no longer uid (it changed, or the pid now names another
 * process: nothing read from it may be trusted); -EBADMSG for a file that
 * does not parse; another -errno when a file cannot be read.
 */
int auth_creds_read(const char *proc_root, pid_t pid, uid_t uid, gid_t gid, struct auth_creds *ret);

/* The RLIMIT_RTPRIO of process pid from its limits file: the soft limit
 * as auth_creds.rtprio_limit has it (never above the hard one) and the
 * hard one, AUTH_RLIM_INFINITY for unlimited. 0 or -errno as
 * auth_creds_read(). */
int auth_read_rtprio_limits(const char *proc_root, pid_t pid, uint64_t *ret_soft, uint64_t *ret_hard);

/* Reads the owner, policy and RT limit of thread tid. 0, -ESRCH, -EBADMSG
 * or another -errno as auth_creds_read. */
int auth_target_read(const char *proc_root, pid_t tid, struct auth_target *ret);

/*
 * A connection's requester, read once and then re-checked cheaply. The
 * first auth_peer_creds() of a connection reads /proc as auth_creds_read();
 * every later one re-reads only what a process can change about itself
 * while connected, CAP_SYS_NICE (capget, then its user namespace through
 * the pidfd, PIDFD_GET_USER_NAMESPACE) and RLIMIT_RTPRIO (prlimit), by
 * system calls instead of formatted /proc files. The namespace is read
 * with the capability and not once at connect: a peer may connect, then
 * unshare(CLONE_NEWUSER) and hold every capability. Each read is followed by
 * a look through pidfd, the peer process as the socket saw it at connect
 * time (SO_PEERPIDFD): it must still live with the effective uid it
 * connected with. A pid is not reused while its process lives, so what was
 * read by pid was the peer's and never a recycled pid's. Supplementary
 * groups are kept from the first read for the connection's life: changing
 * them needs CAP_SETGID, with which a process may take any group back, so
 * the groups first read grant it nothing it could not take itself.
 *
 * Without a pidfd (a kernel before 6.5), or when the kernel refuses a
 * cheap read (prlimit without CAP_SYS_RESOURCE, no PIDFD_GET_INFO before
 * Linux 6.13), it reads /proc as auth_creds_read() every time.
 */
struct auth_peer {
	bool cached;             /* creds.groups are the connection's: later reads are system calls */
	struct auth_creds creds;
};

/* The requester's credentials for this request, in *ret (pointing into
 * ap). Returns as auth_creds_read(). */
int auth_peer_creds(struct auth_peer *ap, const char *proc_root, int pidfd, pid_t pid, uid_t uid, gid_t gid,
		    const struct auth_creds **ret);

/*
 * As auth_peer_creds(), for auth_move_allowed() of a move that sets
 * want_policy (AUTH_SCHED_KEEP: none) under policy: reads only the facts
 * that decision consults for this requester. Root moving without a policy
 * is privileged by uid alone, so CAP_SYS_NICE is read for every other
 * move; RLIMIT_RTPRIO only for a policy change without CAP_SYS_NICE; the
 * supplementary groups (from /proc, once per connection) only when that
 * change also has rt-groups to consult. A fact not consulted reads as
 * granting nothing (no CAP_SYS_NICE, RLIMIT_RTPRIO 0, no supplementary
 * groups unless read before), so a caller that consulted it anyway could
 * only refuse more, never allow more. The peer is confirmed by pidfd
 * after every read, as for auth_peer_creds(); without a pidfd or a cheap
 * read it is auth_peer_creds().
 */
int auth_peer_move_creds(struct auth_peer *ap, const char *proc_root, int pidfd, pid_t pid, uid_t uid, gid_t gid,
			 const struct auth_policy *policy, int want_policy, const struct auth_creds **ret);

/* A pidfd of thread tid (pidfd_open(), PIDFD_THREAD) for
 * auth_target_read_live(): the descriptor, -ESRCH for a thread that does
 * not exist, or -EOPNOTSUPP (a kernel before Linux 6.9). */
int auth_target_pidfd(pid_t tid);

/*
 * auth_target_read() from system calls on the live kernel (no /proc
 * formatting), with pidfd, a pidfd of thread tid (auth_target_pidfd(),
 * opened now or kept from an earlier move): the owner through the pidfd
 * (PIDFD_GET_INFO), policy and priority from sched_getattr(), and the RT
 * limit from prlimit() only when need_limit (otherwise rtprio_limit is
 * AUTH_RLIM_INFINITY: a move that sets no policy, or a requester with
 * CAP_SYS_NICE, never consults it). The pidfd is asked last: while its
 * thread lives, tid names that thread and no other, so what was read by
 * tid was its. 0; -ESRCH when the pidfd's thread has exited (tid may name
 * another thread by now: open a new pidfd for it); -EOPNOTSUPP when the
 * kernel lacks a call (read /proc with auth_target_read() instead); or
 * another -errno.
 */
int auth_target_read_live(int pidfd, pid_t tid, bool need_limit, struct auth_target *ret);

/* CAP_SYS_NICE in the daemon's user namespace: in CapEff, and held over
 * that namespace rather than one of the requester's own. */
bool auth_cap_sys_nice(const struct auth_creds *c);

/* Root or auth_cap_sys_nice(): may move and watch any thread. */
bool auth_is_privileged(const struct auth_creds *c);

/* Looks group name up (getgrnam_r) and adds it to p->rt_gids. 0, -ENOENT
 * for an unknown group, -ENOSPC when rt_gids is full. */
int auth_policy_add_group(struct auth_policy *p, const char *name);

/*
 * May requester move target, and set want_policy (SCHED_FIFO or SCHED_RR,
 * or AUTH_SCHED_KEEP) at want_prio (1..99; ignored with KEEP)? Returns 0
 * (reason->text set to ""); -EINVAL for a bad policy or priority, -EPERM
 * when a rule refuses; reason then says which rule or limit applied, e.g.
 * "RLIMIT_RTPRIO 0 for pid 42: raise it or add CAP_SYS_NICE".
 */
int auth_move_allowed(const struct auth_creds *requester, const struct auth_target *target,
		      const struct auth_policy *policy, int want_policy, int want_prio,
		      struct rtplace_reason *reason);

/*
 * Claims (DESIGN §14): a claim never gives more than its requester could do
 * itself. Returns the level a claim made for a query at prio (1..99) may
 * hold: rtP when the requester may run at rtP (CAP_SYS_NICE, root,
 * RLIMIT_RTPRIO >= P, or an rt-groups member up to max-prio), LEVEL_DL for
 * an exclusive claim when it also has CAP_SYS_NICE, root or an rt-group,
 * and otherwise LEVEL_NORMAL: pinned without an RT policy, never in an RT
 * query's way. reason->text is "" when the claim gets all it asked for, and
 * otherwise says what was missing, e.g. "at normal: rt50 > RLIMIT_RTPRIO 0,
 * no CAP_SYS_NICE".
 */
uint32_t auth_claim_level(const struct auth_creds *requester, const struct auth_policy *policy, int prio,
			  bool exclusive, struct rtplace_reason *reason);

/* May requester's claims have leases beyond [limits] max-lease-ms (or
 * none)? Root, CAP_SYS_NICE, or an rt-groups member. */
bool auth_claim_lease_unbounded(const struct auth_creds *requester, const struct auth_policy *policy);

/*
 * May requester have its claim's CPUs isolated (QUERY_F_ISOLATE)? That is
 * host configuration (other tasks' cpusets, interrupts, unbound work), so
 * only with CAP_SYS_NICE over the daemon's user namespace: not uid 0
 * without it, not an rt-group, not an RLIMIT_RTPRIO. 0, or -EPERM with why.
 */
int auth_may_isolate(const struct auth_creds *requester, struct rtplace_reason *reason);

/* The [moves] rules (allow, rt-groups, max-prio) that moves and claims are
 * judged by; a group that does not exist is logged and left out. */
void auth_policy_from_config(const struct config *cfg, struct auth_policy *ret);

/*
 * What a claim may hold (DESIGN §14): the level from auth_claim_level() for
 * prio and exclusive, and the lease for lease_ms as the wire gives it
 * (RTPLACE_LEASE_DEFAULT: [placement] claim-timeout-ms;
 * RTPLACE_LEASE_INFINITE: none), cut to [limits] max-lease-ms unless
 * auth_claim_lease_unbounded(). 0 in *ret_lease means no lease. note says
 * what the claim got less of, "" when nothing.
 */
void auth_claim_terms(const struct auth_creds *requester, const struct auth_policy *policy, const struct config *cfg,
		      int prio, bool exclusive, uint32_t lease_ms, uint8_t *ret_level, uint64_t *ret_lease,
		      struct rtplace_reason *note);

/* May the client with pid peer_pid and uid peer_uid tie a claim to process
 * pid? Its own process, any of its uid's, or any with root. 0, -EPERM, or
 * -ESRCH when pid does not exist. */
int auth_may_own(const char *proc_root, pid_t peer_pid, uid_t peer_uid, pid_t pid);

/* May a client of uid requester release a claim of uid owner? Any
 * connection of the claim's uid, or root (the way out of a stuck claim).
 * 0 or -EPERM. */
int auth_may_release(uid_t requester, uid_t owner);

/* May a client of uid requester see who holds a claim of uid owner (its
 * uid, process and comm)? Root sees every claim's, any other user its
 * own uid's; of another user's claim it learns only that another user
 * holds it (DESIGN §15: no client learns another user's processes). */
bool auth_may_see_owner(uid_t requester, uid_t owner);

#endif
