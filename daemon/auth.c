/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Credentials from a proc tree, and the move decision (rules in auth.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "auth.h"
#include "levels.h"
#include "log.h"
#include "rtplace-proto.h"
#include "thread-sched.h"
#include "procfs.h"

#define AUTH_CAP_SYS_NICE 23

/* PIDFD_GET_INFO (Linux 6.13), which this system's headers may predate:
 * the version 0 layout, 64 bytes; the kernel takes the size from the
 * request number, so a newer kernel answers it unchanged. */
struct auth_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
_Static_assert(sizeof(struct auth_pidfd_info) == 64, "PIDFD_INFO_SIZE_VER0");
#define AUTH_PIDFD_GET_INFO _IOWR(0xFF, 11, struct auth_pidfd_info)
#define AUTH_PIDFD_INFO_CREDS 2u
/* pidfd_open() of a thread that leads no thread group (Linux 6.9). */
#define AUTH_PIDFD_THREAD O_EXCL
/* A descriptor of the pidfd's process's user namespace (Linux 6.11). */
#define AUTH_PIDFD_GET_USER_NAMESPACE _IO(0xFF, 9)

/*
 * Whether process pid, behind pidfd (or -1 for none), lives in the daemon's
 * user namespace. Its namespace comes from the pidfd where the kernel
 * answers, so it is the peer's even if pid was reused, else from
 * <proc_root>/PID/ns/user. False also when either namespace cannot be read
 * (another process's link needs ptrace read access): a capability that
 * cannot be placed grants nothing.
 */
static bool auth_userns_daemons(const char *proc_root, pid_t pid, int pidfd)
{
	struct procfs_ns mine, theirs;
	int r = -EOPNOTSUPP;

	if (pidfd >= 0) {
		int nsfd = ioctl(pidfd, AUTH_PIDFD_GET_USER_NAMESPACE, 0);
		struct stat st;

		if (nsfd >= 0) {
			r = fstat(nsfd, &st) < 0 ? -errno : 0;
			if (r == 0)
				theirs = (struct procfs_ns){ .dev = st.st_dev, .ino = st.st_ino };
			close(nsfd);
		} else if (errno != ENOTTY && errno != EINVAL) {
			/* Not those: a kernel before Linux 6.11, read /proc. */
			r = -errno;
		}
	}
	if (r == -EOPNOTSUPP)
		r = procfs_userns(proc_root, pid, &theirs);
	if (r == 0)
		r = procfs_userns(proc_root, getpid(), &mine);
	return r == 0 && mine.dev == theirs.dev && mine.ino == theirs.ino;
}

/* Parses the first `n` unsigned decimal ids of a status line. */
static int auth_parse_ids(const char *s, unsigned long *ret, int n)
{
	for (int i = 0; i < n; i++) {
		char *end;

		while (*s == ' ' || *s == '\t')
			s++;
		if (*s < '0' || *s > '9')
			return -EBADMSG;
		errno = 0;
		ret[i] = strtoul(s, &end, 10);
		if (errno || ret[i] > UINT32_MAX)
			return -EBADMSG;
		s = end;
	}
	return 0;
}

/* One limit of a limits file's line at *p ("unlimited" or a number),
 * *p moved past it and the spaces after it. 0 or -EBADMSG. */
static int auth_parse_limit(const char **p, uint64_t *ret)
{
	char *end;

	if (strncmp(*p, "unlimited", 9) == 0) {
		*ret = AUTH_RLIM_INFINITY;
		end = (char *)*p + 9;
	} else if (**p >= '0' && **p <= '9') {
		errno = 0;
		*ret = strtoull(*p, &end, 10);
		if (errno)
			return -EBADMSG;
	} else {
		return -EBADMSG;
	}
	if (*end != ' ' && *end != '\n' && *end != '\0')
		return -EBADMSG;
	while (*end == ' ')
		end++;
	*p = end;
	return 0;
}

/*
 * The RT priority a process may set itself, from the "Max realtime
 * priority" line of its limits file: the soft limit, and never above the
 * hard one (a soft limit above it is no right the kernel would honour).
 */
static int auth_parse_rtprio(const char *limits, uint64_t *ret, uint64_t *ret_hard)
{
	static const char key[] = "Max realtime priority";
	const char *p = limits;
	uint64_t soft, hard;
	int r;

	while (p && strncmp(p, key, sizeof(key) - 1) != 0) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return -EBADMSG;
	p += sizeof(key) - 1;
	while (*p == ' ')
		p++;
	r = auth_parse_limit(&p, &soft);
	if (r == 0)
		r = auth_parse_limit(&p, &hard);
	if (r == 0) {
		*ret = soft < hard ? soft : hard;
		*ret_hard = hard;
	}
	return r;
}

int auth_read_rtprio_limits(const char *proc_root, pid_t pid, uint64_t *ret_soft, uint64_t *ret_hard)
{
	char buf[4096];

	ssize_t n;

	n = procfs_read(proc_root, pid, "limits", buf, sizeof(buf));
	return n < 0 ? (int)n : auth_parse_rtprio(buf, ret_soft, ret_hard);
}

static int auth_read_rtprio(const char *proc_root, pid_t id, uint64_t *ret)
{
	uint64_t hard;

	return auth_read_rtprio_limits(proc_root, id, ret, &hard);
}

int auth_creds_read(const char *proc_root, pid_t pid, uid_t uid, gid_t gid, struct auth_creds *ret)
{
	struct auth_creds c = { .pid = pid, .uid = uid, .gid = gid };
	unsigned long ids[2];
	const char *p;
	char buf[16384];
	uint64_t caps;
	ssize_t n;
	int r;

	n = procfs_read(proc_root, pid, "status", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	p = procfs_status_field(buf, "Uid");
	if (!p || auth_parse_ids(p, ids, 2) < 0)
		return -EBADMSG;
	if (ids[1] != uid)
		return -ESRCH;

	if (procfs_status_u64(buf, "CapEff", 16, &caps) < 0)
		return -EBADMSG;
	c.capeff_sys_nice = (caps >> AUTH_CAP_SYS_NICE) & 1;
	/* After CapEff: see auth_creds.userns_daemon. */
	c.userns_daemon = c.capeff_sys_nice && auth_userns_daemons(proc_root, pid, -1);

	p = procfs_status_field(buf, "Groups");
	if (!p)
		return -EBADMSG;
	for (;;) {
		unsigned long g;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\0')
			break;
		if (auth_parse_ids(p, &g, 1) < 0)
			return -EBADMSG;
		if (c.ngroups < AUTH_GROUPS_MAX)
			c.groups[c.ngroups++] = (gid_t)g;
		while (*p >= '0' && *p <= '9')
			p++;
	}

	r = auth_read_rtprio(proc_root, pid, &c.rtprio_limit);
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}

int auth_target_read(const char *proc_root, pid_t tid, struct auth_target *ret)
{
	struct auth_target t = { .tid = tid };
	struct procfs_stat st;
	unsigned long ids[2];
	uint64_t tgid;
	const char *p;
	char buf[16384];
	ssize_t n;
	int r;

	n = procfs_read(proc_root, tid, "status", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	p = procfs_status_field(buf, "Uid");
	if (!p || auth_parse_ids(p, ids, 2) < 0)
		return -EBADMSG;
	t.uid = (uid_t)ids[0];
	t.euid = (uid_t)ids[1];
	if (procfs_status_u64(buf, "Tgid", 10, &tgid) < 0 || tgid == 0 || tgid > INT32_MAX)
		return -EBADMSG;
	t.tgid = (pid_t)tgid;

	r = procfs_read_stat(proc_root, tid, 0, &st);
	if (r < 0)
		return r;
	t.prio = st.rt_priority;
	t.policy = st.policy;

	r = auth_read_rtprio(proc_root, tid, &t.rtprio_limit);
	if (r < 0)
		return r;
	*ret = t;
	return 0;
}

/* The owner (and process id) of the process or thread behind pidfd. 0,
 * -ESRCH once it has exited, -EOPNOTSUPP before PIDFD_GET_INFO, another
 * -errno. The process and parent ids go to ret_ids unless NULL. */
static int auth_pidfd_owner(int pidfd, uid_t *ret_uid, uid_t *ret_euid, struct auth_target *ret_ids)
{
	struct auth_pidfd_info info = { .mask = AUTH_PIDFD_INFO_CREDS };

	if (ioctl(pidfd, AUTH_PIDFD_GET_INFO, &info) < 0)
		return errno == ENOTTY || errno == EINVAL ? -EOPNOTSUPP : -errno;
	if (!(info.mask & AUTH_PIDFD_INFO_CREDS))
		return -EOPNOTSUPP;
	*ret_uid = (uid_t)info.ruid;
	*ret_euid = (uid_t)info.euid;
	if (ret_ids) {
		ret_ids->tgid = (pid_t)info.tgid;
		ret_ids->ppid = (pid_t)info.ppid;
	}
	return 0;
}

/* The peer behind pidfd still lives with effective uid uid: 0, -ESRCH when
 * it has exited or its uid changed (as auth_creds_read() says it). */
static int auth_peer_same(int pidfd, uid_t uid)
{
	/* (uid_t)-1 is no process's uid: never taken for the peer's. */
	uid_t ruid, euid = (uid_t)-1;
	int r = auth_pidfd_owner(pidfd, &ruid, &euid, NULL);

	if (r == 0 && euid != uid)
		r = -ESRCH;
	return r;
}

/* CAP_SYS_NICE in process pid's CapEff, by capget, and then its user
 * namespace (pidfd, or -1), into c. 0, -ESRCH, or -EOPNOTSUPP (read /proc
 * instead). */
static int auth_read_cap_sys_nice(const char *proc_root, pid_t pid, int pidfd, struct auth_creds *c)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = pid };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return errno == ESRCH ? -ESRCH : -EOPNOTSUPP;
	c->capeff_sys_nice = (data[AUTH_CAP_SYS_NICE / 32].effective >> (AUTH_CAP_SYS_NICE % 32)) & 1;
	/* After capget: see auth_creds.userns_daemon. */
	c->userns_daemon = c->capeff_sys_nice && auth_userns_daemons(proc_root, pid, pidfd);
	return 0;
}

/* The RLIMIT_RTPRIO of process (or thread) id, by prlimit. 0, -ESRCH,
 * or -EOPNOTSUPP (another user's process without CAP_SYS_RESOURCE). */
static int auth_read_rtprio_live(pid_t id, uint64_t *ret)
{
	struct rlimit rl;

	if (prlimit(id, RLIMIT_RTPRIO, NULL, &rl) < 0)
		return errno == ESRCH ? -ESRCH : -EOPNOTSUPP;
	/* Never above the hard limit (auth_parse_rtprio()). */
	if (rl.rlim_max < rl.rlim_cur)
		rl.rlim_cur = rl.rlim_max;
	*ret = rl.rlim_cur == RLIM_INFINITY ? AUTH_RLIM_INFINITY : (uint64_t)rl.rlim_cur;
	return 0;
}

/* What may change of a connected requester, from system calls: CapEff
 * (with its user namespace) and the soft RLIMIT_RTPRIO. */
static int auth_peer_recheck(const char *proc_root, int pidfd, pid_t pid, struct auth_creds *c)
{
	int r = auth_read_cap_sys_nice(proc_root, pid, pidfd, c);

	return r < 0 ? r : auth_read_rtprio_live(pid, &c->rtprio_limit);
}

int auth_peer_creds(struct auth_peer *ap, const char *proc_root, int pidfd, pid_t pid, uid_t uid, gid_t gid,
		    const struct auth_creds **ret)
{
	int r = -EOPNOTSUPP;

	if (pidfd >= 0 && ap->cached) {
		/* Read by pid first, then confirm that pid was still the peer. */
		r = auth_peer_recheck(proc_root, pidfd, pid, &ap->creds);
		if (r == 0)
			r = auth_peer_same(pidfd, uid);
	}
	if (r == -EOPNOTSUPP) {
		ap->cached = false;
		r = auth_creds_read(proc_root, pid, uid, gid, &ap->creds);
		if (r == 0 && pidfd >= 0) {
			r = auth_peer_same(pidfd, uid);
			ap->cached = r == 0;
			if (r == -EOPNOTSUPP)
				r = 0; /* what /proc said stands, read again next time */
		}
	}
	*ret = &ap->creds;
	return r;
}

int auth_peer_move_creds(struct auth_peer *ap, const char *proc_root, int pidfd, pid_t pid, uid_t uid, gid_t gid,
			 const struct auth_policy *policy, int want_policy, const struct auth_creds **ret)
{
	struct auth_creds *c = &ap->creds;
	bool sets_policy = want_policy != AUTH_SCHED_KEEP;
	int r = 0;

	if (pidfd < 0)
		return auth_peer_creds(ap, proc_root, pidfd, pid, uid, gid, ret);
	c->pid = pid;
	c->uid = uid;
	c->gid = gid;
	if (!ap->cached)
		c->ngroups = 0;
	c->capeff_sys_nice = false;
	c->userns_daemon = false;
	c->rtprio_limit = 0;
	/* Read by pid first, then confirm that pid was still the peer. */
	if (uid != 0 || sets_policy)
		r = auth_read_cap_sys_nice(proc_root, pid, pidfd, c);
	if (r == 0 && sets_policy && !auth_cap_sys_nice(c)) {
		r = auth_read_rtprio_live(pid, &c->rtprio_limit);
		if (r == 0 && policy->n_rt_gids > 0 && !ap->cached)
			r = -EOPNOTSUPP; /* the groups are in /proc only */
	}
	if (r == 0)
		r = auth_peer_same(pidfd, uid);
	if (r == -EOPNOTSUPP)
		return auth_peer_creds(ap, proc_root, pidfd, pid, uid, gid, ret);
	*ret = c;
	return r;
}

int auth_target_pidfd(pid_t tid)
{
	int fd;

	if (tid <= 0)
		return -ESRCH;
	fd = (int)syscall(SYS_pidfd_open, tid, AUTH_PIDFD_THREAD);
	if (fd < 0)
		return errno == ESRCH ? -ESRCH : -EOPNOTSUPP;
	return fd;
}

int auth_target_read_live(int pidfd, pid_t tid, bool need_limit, struct auth_target *ret)
{
	struct auth_target t = { .tid = tid, .rtprio_limit = AUTH_RLIM_INFINITY, .sched_live = true };
	int r = thread_sched_getattr(tid, &t.policy, &t.prio, &t.reset_on_fork);

	if (r == 0 && need_limit)
		r = auth_read_rtprio_live(tid, &t.rtprio_limit);
	/* Last: the thread still lives, so what was read by tid above was
	 * read from it and not from a recycled tid, and its owner comes
	 * with the same call. (-ESRCH above: no thread has tid, so the
	 * pidfd's has exited too.) */
	if (r == 0)
		r = auth_pidfd_owner(pidfd, &t.uid, &t.euid, &t);
	if (r == 0)
		*ret = t;
	return r;
}

bool auth_cap_sys_nice(const struct auth_creds *c)
{
	return c->capeff_sys_nice && c->userns_daemon;
}

bool auth_is_privileged(const struct auth_creds *c)
{
	return c->uid == 0 || auth_cap_sys_nice(c);
}

int auth_policy_add_group(struct auth_policy *p, const char *name)
{
	struct group gr, *res = NULL;
	char buf[16384];
	int r;

	if (p->n_rt_gids >= AUTH_RT_GROUPS_MAX)
		return -ENOSPC;
	r = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
	if (r != 0)
		return -r;
	if (!res)
		return -ENOENT;
	p->rt_gids[p->n_rt_gids++] = gr.gr_gid;
	return 0;
}

static bool auth_in_rt_groups(const struct auth_creds *c, const struct auth_policy *p)
{
	for (uint32_t i = 0; i < p->n_rt_gids; i++) {
		if (c->gid == p->rt_gids[i])
			return true;
		for (uint32_t j = 0; j < c->ngroups; j++)
			if (c->groups[j] == p->rt_gids[i])
				return true;
	}
	return false;
}

static bool auth_rt_policy(int policy)
{
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

int auth_move_allowed(const struct auth_creds *requester, const struct auth_target *target,
		      const struct auth_policy *policy, int want_policy, int want_prio,
		      struct rtplace_reason *reason)
{
	const bool privileged = auth_is_privileged(requester);
	uint64_t limit;
	pid_t limit_pid;
	bool kernel_ok, group_ok, in_group;

	reason->text[0] = '\0';
	if (want_policy != AUTH_SCHED_KEEP && !auth_rt_policy(want_policy)) {
		reason_set(reason, "policy must be fifo or rr");
		return -EINVAL;
	}
	if (want_policy != AUTH_SCHED_KEEP && (want_prio < 1 || want_prio > 99)) {
		reason_set(reason, "prio %d out of range 1..99", want_prio);
		return -EINVAL;
	}

	if (!privileged && policy->allow == AUTH_ALLOW_ROOT) {
		reason_set(reason, "[moves] allow = root: needs root or CAP_SYS_NICE");
		return -EPERM;
	}
	if (!privileged && requester->uid != target->uid && requester->uid != target->euid) {
		reason_set(reason, "thread %d belongs to uid %u, not %u", (int)target->tid,
			   (unsigned)target->euid, (unsigned)requester->uid);
		return -EPERM;
	}
	if (want_policy == AUTH_SCHED_KEEP || auth_cap_sys_nice(requester))
		return 0;

	/* The lower of the two limits applies; name its process. */
	limit = requester->rtprio_limit;
	limit_pid = requester->pid;
	if (target->rtprio_limit < limit) {
		limit = target->rtprio_limit;
		limit_pid = target->tid;
	}
	/* As __sched_setscheduler() for a caller without CAP_SYS_NICE. */
	kernel_ok = !(want_policy != target->policy && limit == 0) &&
		    !(want_prio > target->prio && (uint64_t)want_prio > limit);
	in_group = auth_in_rt_groups(requester, policy);
	group_ok = in_group && (uint32_t)want_prio <= policy->max_prio;
	if (kernel_ok || group_ok)
		return 0;

	/* Name the more generous ceiling: it is the one that fell short. */
	if (in_group && policy->max_prio >= limit)
		reason_set(reason, "prio %d > [moves] max-prio %u of rt-groups", want_prio,
			   (unsigned)policy->max_prio);
	else if (limit == 0)
		reason_set(reason, "RLIMIT_RTPRIO 0 for pid %d: raise it or add CAP_SYS_NICE",
			   (int)limit_pid);
	else
		reason_set(reason, "prio %d > RLIMIT_RTPRIO %" PRIu64 " (pid %d); needs CAP_SYS_NICE",
			   want_prio, limit, (int)limit_pid);
	return -EPERM;
}

uint32_t auth_claim_level(const struct auth_creds *requester, const struct auth_policy *policy, int prio,
			  bool exclusive, struct rtplace_reason *reason)
{
	const bool privileged = auth_is_privileged(requester);
	const bool in_group = auth_in_rt_groups(requester, policy);
	bool rt_ok;

	reason->text[0] = '\0';
	if (prio < LEVEL_RT_PRIO_MIN || prio > LEVEL_RT_PRIO_MAX) {
		reason_set(reason, "prio %d out of range 1..99", prio);
		return LEVEL_NORMAL;
	}
	rt_ok = privileged || requester->rtprio_limit >= (uint64_t)prio ||
		(in_group && (uint32_t)prio <= policy->max_prio);
	if (exclusive && (privileged || in_group) && rt_ok)
		return LEVEL_DL;
	if (rt_ok) {
		if (exclusive)
			reason_set(reason, "not exclusive: needs CAP_SYS_NICE or [moves] rt-groups");
		return level_from_rt_priority(prio);
	}
	if (in_group && requester->rtprio_limit <= policy->max_prio)
		reason_set(reason, "at normal: rt%u > [moves] max-prio %u", (unsigned)(uint8_t)prio,
			   (unsigned)(uint8_t)policy->max_prio);
	else
		/* Below prio, so below 100. */
		reason_set(reason, "at normal: rt%u > RLIMIT_RTPRIO %u, no CAP_SYS_NICE",
			   (unsigned)(uint8_t)prio, (unsigned)(uint8_t)requester->rtprio_limit);
	return LEVEL_NORMAL;
}

bool auth_claim_lease_unbounded(const struct auth_creds *requester, const struct auth_policy *policy)
{
	return auth_is_privileged(requester) || auth_in_rt_groups(requester, policy);
}

int auth_may_isolate(const struct auth_creds *requester, struct rtplace_reason *reason)
{
	if (auth_cap_sys_nice(requester))
		return 0;
	reason_set(reason, "isolating CPUs needs CAP_SYS_NICE in the daemon's user namespace");
	return -EPERM;
}

void auth_policy_from_config(const struct config *cfg, struct auth_policy *ret)
{
	*ret = (struct auth_policy){
		.allow = cfg->moves.allow == CONFIG_MOVES_ROOT ? AUTH_ALLOW_ROOT : AUTH_ALLOW_OWNER,
		.max_prio = cfg->moves.max_prio,
	};
	for (uint32_t i = 0; i < cfg->moves.n_rt_groups; i++)
		if (auth_policy_add_group(ret, cfg->moves.rt_groups[i]) < 0)
			log_warning("[moves] rt-groups: no group named '%s'; ignored", cfg->moves.rt_groups[i]);
}

void auth_claim_terms(const struct auth_creds *requester, const struct auth_policy *policy, const struct config *cfg,
		      int prio, bool exclusive, uint32_t lease_ms, uint8_t *ret_level, uint64_t *ret_lease,
		      struct rtplace_reason *note)
{
	uint64_t lease = 0;

	*ret_level = (uint8_t)auth_claim_level(requester, policy, prio, exclusive, note);
	if (lease_ms == RTPLACE_LEASE_DEFAULT)
		lease = cfg->placement.claim_timeout_ms;
	else if (lease_ms != RTPLACE_LEASE_INFINITE)
		lease = lease_ms;
	if (!auth_claim_lease_unbounded(requester, policy) && (!lease || lease > cfg->limits.max_lease_ms)) {
		lease = cfg->limits.max_lease_ms;
		/* The level's note, when there is one, says more. */
		if (!note->text[0])
			reason_set(note, "lease cut to max-lease-ms %u", (unsigned)cfg->limits.max_lease_ms);
	}
	*ret_lease = lease;
}

int auth_may_own(const char *proc_root, pid_t peer_pid, uid_t peer_uid, pid_t pid)
{
	uid_t owner;
	int r;

	if (pid == peer_pid || peer_uid == 0)
		return 0;
	r = procfs_owner(proc_root, pid, &owner);
	if (r < 0)
		return -ESRCH;
	return owner == peer_uid ? 0 : -EPERM;
}

int auth_may_release(uid_t requester, uid_t owner)
{
	return requester == 0 || requester == owner ? 0 : -EPERM;
}

bool auth_may_see_owner(uid_t requester, uid_t owner)
{
	return requester == 0 || requester == owner;
}
