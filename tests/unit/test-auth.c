/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests for move authorisation: the proc readers on fake trees written
 * here (and once on the real /proc), and every rule of auth_move_allowed()
 * with the reason it gives. In the fake trees a user namespace is a file:
 * two ns/user links name the same namespace when they are hard links of
 * one file, as two links of /proc stat to one nsfs inode.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "auth.h"
#include "levels.h"
#include "testlib.h"

static char proc_root[PATH_MAX];

static void write_file(int id, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", proc_root, id);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/%s", proc_root, id, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char *status_text(char *buf, size_t len, unsigned ruid, unsigned euid, const char *groups,
			       const char *capeff)
{
	snprintf(buf, len,
		 "Name:\tworker\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t100\nPid:\t100\n"
		 "Uid:\t%u\t%u\t%u\t%u\nGid:\t100\t100\t100\t100\nFDSize:\t64\nGroups:\t%s\n"
		 "CapInh:\t0000000000000000\nCapPrm:\t%s\nCapEff:\t%s\nCapBnd:\t000001ffffffffff\n",
		 ruid, euid, euid, euid, groups, capeff, capeff);
	return buf;
}

static const char *limits_text(char *buf, size_t len, const char *soft)
{
	snprintf(buf, len,
		 "Limit                     Soft Limit           Hard Limit           Units     \n"
		 "Max cpu time              unlimited            unlimited            seconds   \n"
		 "Max nice priority         0                    0                    \n"
		 "Max realtime priority     %-20s unlimited            \n"
		 "Max realtime timeout      unlimited            unlimited            us        \n",
		 soft);
	return buf;
}

static void write_proc(int id, unsigned ruid, unsigned euid, const char *groups, const char *capeff,
		       const char *rtprio_soft, int policy, int prio)
{
	char buf[4096];

	write_file(id, "status", status_text(buf, sizeof(buf), ruid, euid, groups, capeff));
	write_file(id, "limits", limits_text(buf, sizeof(buf), rtprio_soft));
	/* comm with spaces and parentheses: parsing must resume after the
	 * last ')'. Fields 3..52; 40 is rt_priority, 41 policy. */
	snprintf(buf, sizeof(buf),
		 "%d (a (b) c) S 1 %d %d 0 -1 4194560 100 0 0 0 5 6 0 0 %d 0 1 0 1000 2000 300 "
		 "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 %d %d 0 0 0 0 0 0 0 0 0 0 0\n",
		 id, id, id, policy ? -1 - prio : 20, prio, policy);
	write_file(id, "stat", buf);
}

/* Puts process id in user namespace name: <root>/<id>/ns/user, a hard
 * link of <root>/userns-<name>. */
static void set_userns(int id, const char *name)
{
	char ns[PATH_MAX + 64], link_path[PATH_MAX + 64];
	FILE *f;

	snprintf(ns, sizeof(ns), "%s/userns-%s", proc_root, name);
	f = fopen(ns, "a");
	assert_non_null(f);
	fclose(f);
	snprintf(link_path, sizeof(link_path), "%s/%d", proc_root, id);
	mkdir(link_path, 0755);
	snprintf(link_path, sizeof(link_path), "%s/%d/ns", proc_root, id);
	mkdir(link_path, 0755);
	snprintf(link_path, sizeof(link_path), "%s/%d/ns/user", proc_root, id);
	unlink(link_path);
	assert_int_equal(link(ns, link_path), 0);
}

static int setup(void **state)
{
	snprintf(proc_root, sizeof(proc_root), "/tmp/rtplace-test-auth.XXXXXX");
	assert_non_null(mkdtemp(proc_root));
	/* The daemon's own, as the readers find it. */
	set_userns(getpid(), "host");
	return 0;
}

static int teardown(void **state)
{
	return test_fixture_remove(proc_root);
}

#define CAP_NONE "0000000000000000"
#define CAP_NICE "0000000000800000" /* bit 23 */

static void test_creds_read(void **state)
{
	struct auth_creds c;

	write_proc(100, 1000, 1000, "24 27 5000", CAP_NONE, "0", 0, 0);
	assert_int_equal(auth_creds_read(proc_root, 100, 1000, 100, &c), 0);
	assert_int_equal(c.pid, 100);
	assert_int_equal(c.uid, 1000);
	assert_int_equal(c.gid, 100);
	assert_false(c.capeff_sys_nice);
	assert_false(auth_cap_sys_nice(&c));
	assert_int_equal(c.rtprio_limit, 0);
	assert_int_equal(c.ngroups, 3);
	assert_int_equal(c.groups[2], 5000);

	write_proc(101, 1000, 1000, "", "000001fffeffffff", "unlimited", 0, 0);
	set_userns(101, "host");
	assert_int_equal(auth_creds_read(proc_root, 101, 1000, 100, &c), 0);
	assert_true(c.capeff_sys_nice);
	assert_true(c.userns_daemon);
	assert_true(auth_cap_sys_nice(&c));
	assert_int_equal(c.rtprio_limit, AUTH_RLIM_INFINITY);
	assert_int_equal(c.ngroups, 0);

	write_proc(102, 1000, 1000, "", CAP_NICE, "42", 0, 0);
	set_userns(102, "host");
	assert_int_equal(auth_creds_read(proc_root, 102, 1000, 100, &c), 0);
	assert_true(auth_cap_sys_nice(&c));
	assert_int_equal(c.rtprio_limit, 42);
}

/*
 * CapEff counts over the process's own user namespace: `unshare -Ur` gives
 * nobody every capability there. The readers say which namespace it is,
 * and a namespace they cannot read is not the daemon's.
 */
static void test_creds_read_userns(void **state)
{
	struct auth_creds c;

	write_proc(120, 65534, 65534, "65534", "000001ffffffffff", "0", 0, 0);
	set_userns(120, "child");
	assert_int_equal(auth_creds_read(proc_root, 120, 65534, 65534, &c), 0);
	assert_true(c.capeff_sys_nice);
	assert_false(c.userns_daemon);
	assert_false(auth_cap_sys_nice(&c));
	assert_false(auth_is_privileged(&c));

	write_proc(121, 1000, 1000, "", CAP_NICE, "0", 0, 0); /* no ns/user */
	assert_int_equal(auth_creds_read(proc_root, 121, 1000, 100, &c), 0);
	assert_true(c.capeff_sys_nice);
	assert_false(auth_cap_sys_nice(&c));
}

static void test_creds_read_errors(void **state)
{
	struct auth_creds c;

	/* Gone, or the pid now names a process of another effective uid. */
	assert_int_equal(auth_creds_read(proc_root, 999, 1000, 100, &c), -ESRCH);
	write_proc(110, 1000, 0, "", CAP_NONE, "0", 0, 0);
	assert_int_equal(auth_creds_read(proc_root, 110, 1000, 100, &c), -ESRCH);

	write_file(111, "status", "Name:\tx\nUid:\tabc\n");
	assert_int_equal(auth_creds_read(proc_root, 111, 1000, 100, &c), -EBADMSG);
	write_file(112, "status", "Name:\tx\nUid:\t1000\t1000\t1000\t1000\nGroups:\t1\n");
	assert_int_equal(auth_creds_read(proc_root, 112, 1000, 100, &c), -EBADMSG); /* no CapEff */
	write_file(113, "status", "Uid:\t1000\t1000\t1000\t1000\nGroups:\t1 x\nCapEff:\t0\n");
	assert_int_equal(auth_creds_read(proc_root, 113, 1000, 100, &c), -EBADMSG);
	write_file(114, "status", "Uid:\t1000\t1000\t1000\t1000\nGroups:\t\nCapEff:\t0\n");
	write_file(114, "limits", "Max realtime timeout      unlimited            unlimited\n");
	assert_int_equal(auth_creds_read(proc_root, 114, 1000, 100, &c), -EBADMSG);
	write_file(114, "limits", "Max realtime priority     many                 0\n");
	assert_int_equal(auth_creds_read(proc_root, 114, 1000, 100, &c), -EBADMSG);
	write_file(114, "limits", "Max realtime priority     7                    9\n");
	assert_int_equal(auth_creds_read(proc_root, 114, 1000, 100, &c), 0);
	assert_int_equal(c.rtprio_limit, 7);
	/* A soft limit above the hard one gives no more than the hard one. */
	write_file(114, "limits", "Max realtime priority     7                    0\n");
	assert_int_equal(auth_creds_read(proc_root, 114, 1000, 100, &c), 0);
	assert_int_equal(c.rtprio_limit, 0);
	write_file(114, "limits", "Max realtime priority     unlimited            5\n");
	assert_int_equal(auth_creds_read(proc_root, 114, 1000, 100, &c), 0);
	assert_int_equal(c.rtprio_limit, 5);
	write_file(114, "limits", "Max realtime priority     7                    x\n");
	assert_int_equal(auth_creds_read(proc_root, 114, 1000, 100, &c), -EBADMSG);
}

static void test_target_read(void **state)
{
	struct auth_target t;

	write_proc(200, 1000, 0, "", CAP_NONE, "5", SCHED_FIFO, 60);
	assert_int_equal(auth_target_read(proc_root, 200, &t), 0);
	assert_int_equal(t.tid, 200);
	assert_int_equal(t.uid, 1000);
	assert_int_equal(t.euid, 0);
	assert_int_equal(t.policy, SCHED_FIFO);
	assert_int_equal(t.prio, 60);
	assert_int_equal(t.rtprio_limit, 5);

	assert_int_equal(auth_target_read(proc_root, 998, &t), -ESRCH);
	write_file(201, "status", "Uid:\t1\t1\t1\t1\n");
	write_file(201, "stat", "201 (short) S 1 2 3\n");
	assert_int_equal(auth_target_read(proc_root, 201, &t), -EBADMSG);
}

/* The real /proc parses too, and says what the kernel says. */
static void test_real_proc(void **state)
{
	struct auth_creds c;
	struct auth_target t;

	assert_int_equal(auth_creds_read("/proc", getpid(), geteuid(), getegid(), &c), 0);
	assert_int_equal(auth_target_read("/proc", gettid(), &t), 0);
	assert_int_equal(t.uid, getuid());
	assert_int_equal(t.euid, geteuid());
	assert_int_equal(t.policy, sched_getscheduler(0) & ~SCHED_RESET_ON_FORK);
}

static struct auth_creds user(uid_t uid, uint64_t rtprio)
{
	return (struct auth_creds){ .pid = 4242, .uid = uid, .gid = uid, .rtprio_limit = rtprio };
}

static struct auth_target thread(uid_t uid, int policy, int prio, uint64_t rtprio)
{
	return (struct auth_target){ .tid = 777, .uid = uid, .euid = uid, .policy = policy, .prio = prio,
				     .rtprio_limit = rtprio };
}

static const struct auth_policy owner_policy = { .allow = AUTH_ALLOW_OWNER, .max_prio = 49 };

static void test_identity_rules(void **state)
{
	struct auth_creds root = user(0, 0), nice = user(1000, 0), alice = user(1000, 0);
	struct auth_target bobs = thread(2000, SCHED_OTHER, 0, 0), alices = thread(1000, SCHED_OTHER, 0, 0);
	struct auth_policy root_only = { .allow = AUTH_ALLOW_ROOT, .max_prio = 49 };
	struct rtplace_reason why;

	nice.capeff_sys_nice = nice.userns_daemon = true;
	assert_int_equal(auth_move_allowed(&root, &bobs, &owner_policy, AUTH_SCHED_KEEP, 0, &why), 0);
	assert_string_equal(why.text, "");
	assert_int_equal(auth_move_allowed(&nice, &bobs, &owner_policy, SCHED_FIFO, 99, &why), 0);
	assert_int_equal(auth_move_allowed(&alice, &alices, &owner_policy, AUTH_SCHED_KEEP, 0, &why), 0);

	assert_int_equal(auth_move_allowed(&alice, &bobs, &owner_policy, AUTH_SCHED_KEEP, 0, &why), -EPERM);
	assert_string_equal(why.text, "thread 777 belongs to uid 2000, not 1000");

	/* A set-uid thread: real uid alice, effective root. The kernel lets
	 * its real owner change it, and so do we. */
	bobs.euid = 0;
	bobs.uid = 1000;
	assert_int_equal(auth_move_allowed(&alice, &bobs, &owner_policy, AUTH_SCHED_KEEP, 0, &why), 0);

	assert_true(auth_is_privileged(&root));
	assert_true(auth_is_privileged(&nice));
	assert_false(auth_is_privileged(&alice));

	assert_int_equal(auth_move_allowed(&alice, &alices, &root_only, AUTH_SCHED_KEEP, 0, &why), -EPERM);
	assert_string_equal(why.text, "[moves] allow = root: needs root or CAP_SYS_NICE");
	assert_int_equal(auth_move_allowed(&root, &alices, &root_only, AUTH_SCHED_KEEP, 0, &why), 0);
	assert_int_equal(auth_move_allowed(&nice, &alices, &root_only, SCHED_RR, 10, &why), 0);
}

static void test_bad_requests(void **state)
{
	struct auth_creds root = user(0, 0);
	struct auth_target t = thread(0, SCHED_OTHER, 0, 0);
	struct rtplace_reason why;

	root.capeff_sys_nice = root.userns_daemon = true;
	assert_int_equal(auth_move_allowed(&root, &t, &owner_policy, SCHED_OTHER, 0, &why), -EINVAL);
	assert_string_equal(why.text, "policy must be fifo or rr");
	assert_int_equal(auth_move_allowed(&root, &t, &owner_policy, SCHED_FIFO, 0, &why), -EINVAL);
	assert_string_equal(why.text, "prio 0 out of range 1..99");
	assert_int_equal(auth_move_allowed(&root, &t, &owner_policy, SCHED_RR, 100, &why), -EINVAL);
}

static void test_rlimit_rules(void **state)
{
	struct auth_creds alice = user(1000, 0);
	struct auth_target t = thread(1000, SCHED_OTHER, 0, 99);
	struct rtplace_reason why;

	/* The requester's limit 0 forbids any RT policy. */
	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_FIFO, 10, &why), -EPERM);
	assert_string_equal(why.text, "RLIMIT_RTPRIO 0 for pid 4242: raise it or add CAP_SYS_NICE");

	/* The target's lower limit applies too, and is named. */
	alice.rtprio_limit = 50;
	t.rtprio_limit = 0;
	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_FIFO, 10, &why), -EPERM);
	assert_string_equal(why.text, "RLIMIT_RTPRIO 0 for pid 777: raise it or add CAP_SYS_NICE");

	t.rtprio_limit = 50;
	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_FIFO, 50, &why), 0);
	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_RR, 51, &why), -EPERM);
	assert_string_equal(why.text, "prio 51 > RLIMIT_RTPRIO 50 (pid 4242); needs CAP_SYS_NICE");
	t.rtprio_limit = 20;
	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_RR, 21, &why), -EPERM);
	assert_string_equal(why.text, "prio 21 > RLIMIT_RTPRIO 20 (pid 777); needs CAP_SYS_NICE");
	alice.rtprio_limit = AUTH_RLIM_INFINITY;
	t.rtprio_limit = AUTH_RLIM_INFINITY;
	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_FIFO, 99, &why), 0);

	/* uid 0 without CAP_SYS_NICE: identity yes, priority by rlimit. */
	struct auth_creds bare_root = user(0, 0);
	assert_int_equal(auth_move_allowed(&bare_root, &t, &owner_policy, AUTH_SCHED_KEEP, 0, &why), 0);
	assert_int_equal(auth_move_allowed(&bare_root, &t, &owner_policy, SCHED_FIFO, 1, &why), -EPERM);
	assert_string_equal(why.text, "RLIMIT_RTPRIO 0 for pid 4242: raise it or add CAP_SYS_NICE");
}

/* Lowering or keeping an RT priority needs no limit, as in the kernel;
 * changing the policy needs a non-zero one. */
static void test_lowering(void **state)
{
	struct auth_creds alice = user(1000, 0);
	struct auth_target t = thread(1000, SCHED_FIFO, 60, 0);
	struct rtplace_reason why;

	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_FIFO, 30, &why), 0);
	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_FIFO, 60, &why), 0);
	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_FIFO, 61, &why), -EPERM);
	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_RR, 30, &why), -EPERM);
	assert_string_equal(why.text, "RLIMIT_RTPRIO 0 for pid 4242: raise it or add CAP_SYS_NICE");
	alice.rtprio_limit = 10;
	t.rtprio_limit = 10;
	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_RR, 30, &why), 0);
	assert_int_equal(auth_move_allowed(&alice, &t, &owner_policy, SCHED_RR, 61, &why), -EPERM);
	assert_string_equal(why.text, "prio 61 > RLIMIT_RTPRIO 10 (pid 4242); needs CAP_SYS_NICE");
}

static void test_rt_groups(void **state)
{
	struct auth_policy p = { .allow = AUTH_ALLOW_OWNER, .n_rt_gids = 2, .rt_gids = { 5000, 6000 }, .max_prio = 49 };
	struct auth_creds alice = user(1000, 0);
	struct auth_target t = thread(1000, SCHED_OTHER, 0, 0);
	struct rtplace_reason why;

	/* Not a member: the rlimit rule. */
	assert_int_equal(auth_move_allowed(&alice, &t, &p, SCHED_FIFO, 10, &why), -EPERM);
	/* Supplementary member: up to max-prio, whatever the rlimits. */
	alice.groups[0] = 27;
	alice.groups[1] = 6000;
	alice.ngroups = 2;
	assert_int_equal(auth_move_allowed(&alice, &t, &p, SCHED_FIFO, 49, &why), 0);
	assert_int_equal(auth_move_allowed(&alice, &t, &p, SCHED_FIFO, 50, &why), -EPERM);
	assert_string_equal(why.text, "prio 50 > [moves] max-prio 49 of rt-groups");
	/* Primary group counts as membership. */
	alice.ngroups = 0;
	alice.gid = 5000;
	assert_int_equal(auth_move_allowed(&alice, &t, &p, SCHED_RR, 1, &why), 0);
	/* Groups grant a ceiling, not other users' threads. */
	t.uid = t.euid = 2000;
	assert_int_equal(auth_move_allowed(&alice, &t, &p, SCHED_RR, 1, &why), -EPERM);
	assert_string_equal(why.text, "thread 777 belongs to uid 2000, not 1000");
	/* When the rlimit is the higher ceiling, it is the one named. */
	t.uid = t.euid = 1000;
	alice.rtprio_limit = 60;
	t.rtprio_limit = 60;
	assert_int_equal(auth_move_allowed(&alice, &t, &p, SCHED_RR, 60, &why), 0);
	assert_int_equal(auth_move_allowed(&alice, &t, &p, SCHED_RR, 70, &why), -EPERM);
	assert_string_equal(why.text, "prio 70 > RLIMIT_RTPRIO 60 (pid 4242); needs CAP_SYS_NICE");
}

/* DESIGN §14: a claim never gives more than its requester could do. */
/* A claim's lease: the default and "none" become what the requester may
 * hold, cut to max-lease-ms for a requester without the rights. */
static void test_claim_terms(void **state)
{
	/* RLIMIT_RTPRIO grants the levels but no unbounded lease. */
	struct auth_creds root = user(0, 0), limited = user(65534, 99), plain = user(1000, 0);
	struct auth_policy p = { .allow = AUTH_ALLOW_OWNER, .max_prio = 49 };
	struct rtplace_reason why;
	struct config cfg;
	uint64_t lease;
	uint8_t level;

	config_defaults(&cfg);
	cfg.placement.claim_timeout_ms = 3000;
	cfg.limits.max_lease_ms = 60000;
	why.text[0] = '\0';
	auth_claim_terms(&root, &p, &cfg, 50, false, RTPLACE_LEASE_INFINITE, &level, &lease, &why);
	assert_int_equal(lease, 0);
	assert_int_equal(level, level_from_rt_priority(50));
	assert_string_equal(why.text, "");
	auth_claim_terms(&root, &p, &cfg, 50, false, RTPLACE_LEASE_DEFAULT, &level, &lease, &why);
	assert_int_equal(lease, 3000);
	auth_claim_terms(&limited, &p, &cfg, 10, false, RTPLACE_LEASE_INFINITE, &level, &lease, &why);
	assert_int_equal(lease, 60000);
	assert_int_equal(level, level_from_rt_priority(10));
	assert_string_equal(why.text, "lease cut to max-lease-ms 60000");
	why.text[0] = '\0';
	auth_claim_terms(&limited, &p, &cfg, 10, false, 90000, &level, &lease, &why);
	assert_int_equal(lease, 60000);
	why.text[0] = '\0';
	auth_claim_terms(&limited, &p, &cfg, 10, false, 500, &level, &lease, &why);
	assert_int_equal(lease, 500);
	assert_string_equal(why.text, "");
	/* A level it may not hold says so, over the lease's note. */
	auth_claim_terms(&plain, &p, &cfg, 50, false, RTPLACE_LEASE_INFINITE, &level, &lease, &why);
	assert_int_equal(level, LEVEL_NORMAL);
	assert_int_equal(lease, 60000);
	assert_non_null(strstr(why.text, "RLIMIT_RTPRIO"));
}

/* Who may own a claim: its own process, its uid's, anything for root. */
static void test_may_own(void **state)
{
	char buf[512], dir[PATH_MAX + 16];

	write_file(300, "status", status_text(buf, sizeof(buf), 1000, 1000, "", "0"));
	snprintf(dir, sizeof(dir), "%s/300", proc_root);
	assert_int_equal(chown(dir, 1000, 1000), 0);
	assert_int_equal(auth_may_own(proc_root, 77, 1000, 300), 0);
	assert_int_equal(auth_may_own(proc_root, 77, 1001, 300), -EPERM);
	assert_int_equal(auth_may_own(proc_root, 77, 0, 300), 0);
	assert_int_equal(auth_may_own(proc_root, 300, 1001, 300), 0);
	assert_int_equal(auth_may_own(proc_root, 77, 1001, 999), -ESRCH);
}

/* DESIGN §6: any connection of the claim's uid, or root, may release it;
 * another user may not. */
static void test_may_release(void **state)
{
	assert_int_equal(auth_may_release(65534, 65534), 0);
	assert_int_equal(auth_may_release(0, 65534), 0);
	assert_int_equal(auth_may_release(1000, 65534), -EPERM);
	assert_int_equal(auth_may_release(65534, 0), -EPERM);
}

static void test_claim_levels(void **state)
{
	struct auth_policy p = { .allow = AUTH_ALLOW_OWNER, .n_rt_gids = 1, .rt_gids = { 5000 }, .max_prio = 40 };
	struct auth_creds root = user(0, 0), nobody = user(65534, 0), limited = user(1000, 30), nice = user(1000, 0),
			  member = user(1001, 0);
	struct rtplace_reason why;

	nice.capeff_sys_nice = nice.userns_daemon = true;
	member.gid = 5000;
	assert_int_equal(auth_claim_level(&root, &p, 99, true, &why), LEVEL_DL);
	assert_string_equal(why.text, "");
	assert_int_equal(auth_claim_level(&nice, &p, 99, false, &why), level_from_rt_priority(99));
	assert_int_equal(auth_claim_level(&nice, &p, 99, true, &why), LEVEL_DL);

	/* No RT rights: level normal, the reason names what is missing. */
	assert_int_equal(auth_claim_level(&nobody, &p, 1, false, &why), LEVEL_NORMAL);
	assert_string_equal(why.text, "at normal: rt1 > RLIMIT_RTPRIO 0, no CAP_SYS_NICE");
	assert_int_equal(auth_claim_level(&nobody, &p, 99, true, &why), LEVEL_NORMAL);

	/* RLIMIT_RTPRIO is a ceiling; it never makes a claim exclusive. */
	assert_int_equal(auth_claim_level(&limited, &p, 30, false, &why), level_from_rt_priority(30));
	assert_int_equal(auth_claim_level(&limited, &p, 31, false, &why), LEVEL_NORMAL);
	assert_int_equal(auth_claim_level(&limited, &p, 30, true, &why), level_from_rt_priority(30));
	assert_string_equal(why.text, "not exclusive: needs CAP_SYS_NICE or [moves] rt-groups");

	/* An rt-group: up to max-prio, and exclusive within it. */
	assert_int_equal(auth_claim_level(&member, &p, 40, true, &why), LEVEL_DL);
	assert_int_equal(auth_claim_level(&member, &p, 41, false, &why), LEVEL_NORMAL);
	assert_string_equal(why.text, "at normal: rt41 > [moves] max-prio 40");
	assert_int_equal(auth_claim_level(&member, &p, 41, true, &why), LEVEL_NORMAL);

	/* Isolation: CAP_SYS_NICE alone; root's uid without it, an rt-group
	 * or an rlimit are not enough. */
	assert_int_equal(auth_may_isolate(&nice, &why), 0);
	assert_int_equal(auth_may_isolate(&root, &why), -EPERM);
	assert_string_equal(why.text, "isolating CPUs needs CAP_SYS_NICE in the daemon's user namespace");
	assert_int_equal(auth_may_isolate(&member, &why), -EPERM);
	assert_int_equal(auth_may_isolate(&limited, &why), -EPERM);
	assert_int_equal(auth_may_isolate(&nobody, &why), -EPERM);
	root.capeff_sys_nice = root.userns_daemon = true;
	assert_int_equal(auth_may_isolate(&root, &why), 0);
	root.capeff_sys_nice = root.userns_daemon = false;

	/* Unbounded leases: root, CAP_SYS_NICE, rt-groups; not an rlimit. */
	assert_true(auth_claim_lease_unbounded(&root, &p));
	assert_true(auth_claim_lease_unbounded(&nice, &p));
	assert_true(auth_claim_lease_unbounded(&member, &p));
	assert_false(auth_claim_lease_unbounded(&limited, &p));
	assert_false(auth_claim_lease_unbounded(&nobody, &p));
}

/*
 * Every rule that counts CAP_SYS_NICE counts it only over the daemon's user
 * namespace: held over the requester's own, it moves no other user's
 * thread, sets no RT policy beyond RLIMIT_RTPRIO, gets no exclusive or RT
 * claim and no unbounded lease. The same capability over the daemon's
 * namespace gets all of them.
 */
static void test_userns_caps(void **state)
{
	struct auth_policy p = { .allow = AUTH_ALLOW_OWNER, .max_prio = 40 };
	struct auth_creds ns_root = user(65534, 0), host_nice = user(65534, 0);
	struct auth_target roots = thread(0, SCHED_OTHER, 0, 0), own = thread(65534, SCHED_OTHER, 0, 0);
	struct rtplace_reason why;

	ns_root.capeff_sys_nice = true;
	host_nice.capeff_sys_nice = host_nice.userns_daemon = true;
	assert_false(auth_cap_sys_nice(&ns_root));
	assert_false(auth_is_privileged(&ns_root));
	assert_int_equal(auth_move_allowed(&ns_root, &roots, &p, SCHED_FIFO, 99, &why), -EPERM);
	assert_string_equal(why.text, "thread 777 belongs to uid 0, not 65534");
	assert_int_equal(auth_move_allowed(&ns_root, &roots, &p, AUTH_SCHED_KEEP, 0, &why), -EPERM);
	assert_int_equal(auth_move_allowed(&ns_root, &own, &p, SCHED_FIFO, 99, &why), -EPERM);
	assert_string_equal(why.text, "RLIMIT_RTPRIO 0 for pid 4242: raise it or add CAP_SYS_NICE");
	assert_int_equal(auth_claim_level(&ns_root, &p, 99, true, &why), LEVEL_NORMAL);
	assert_string_equal(why.text, "at normal: rt99 > RLIMIT_RTPRIO 0, no CAP_SYS_NICE");
	assert_false(auth_claim_lease_unbounded(&ns_root, &p));
	assert_int_equal(auth_may_isolate(&ns_root, &why), -EPERM);
	assert_string_equal(why.text, "isolating CPUs needs CAP_SYS_NICE in the daemon's user namespace");

	assert_true(auth_cap_sys_nice(&host_nice));
	assert_int_equal(auth_may_isolate(&host_nice, &why), 0);
	assert_int_equal(auth_move_allowed(&host_nice, &roots, &p, SCHED_FIFO, 99, &why), 0);
	assert_int_equal(auth_claim_level(&host_nice, &p, 99, true, &why), LEVEL_DL);
	assert_true(auth_claim_lease_unbounded(&host_nice, &p));
}

/* Worst-case numbers still fit the wire's 64-byte reason untruncated. */
static void test_reason_lengths(void **state)
{
	struct auth_policy p = { .allow = AUTH_ALLOW_OWNER, .n_rt_gids = 1, .rt_gids = { 5000 }, .max_prio = 98 };
	struct auth_creds c = { .pid = 4194304, .uid = 4294967294u, .gid = 1, .rtprio_limit = 98 };
	struct auth_target t = { .tid = 4194304, .uid = 4294967295u, .euid = 4294967295u, .rtprio_limit = 98 };
	struct rtplace_reason why;

	assert_int_equal(auth_move_allowed(&c, &t, &p, SCHED_FIFO, 99, &why), -EPERM);
	assert_string_equal(why.text, "thread 4194304 belongs to uid 4294967295, not 4294967294");
	t.uid = t.euid = c.uid;
	assert_int_equal(auth_move_allowed(&c, &t, &p, SCHED_FIFO, 99, &why), -EPERM);
	assert_string_equal(why.text, "prio 99 > RLIMIT_RTPRIO 98 (pid 4194304); needs CAP_SYS_NICE");
	c.rtprio_limit = t.rtprio_limit = 0;
	assert_int_equal(auth_move_allowed(&c, &t, &p, SCHED_FIFO, 99, &why), -EPERM);
	assert_string_equal(why.text, "RLIMIT_RTPRIO 0 for pid 4194304: raise it or add CAP_SYS_NICE");
	c.groups[0] = 5000;
	c.ngroups = 1;
	assert_int_equal(auth_move_allowed(&c, &t, &p, SCHED_FIFO, 99, &why), -EPERM);
	assert_string_equal(why.text, "prio 99 > [moves] max-prio 98 of rt-groups");
	t.prio = 0;
	assert_int_equal(auth_move_allowed(&c, &t, &p, SCHED_OTHER, 1, &why), -EINVAL);
}

static void test_policy_add_group(void **state)
{
	struct auth_policy p = { 0 };

	assert_int_equal(auth_policy_add_group(&p, "root"), 0);
	assert_int_equal(p.n_rt_gids, 1);
	assert_int_equal(p.rt_gids[0], 0);
	assert_int_equal(auth_policy_add_group(&p, "no-such-group-rtplace"), -ENOENT);
	p.n_rt_gids = AUTH_RT_GROUPS_MAX;
	assert_int_equal(auth_policy_add_group(&p, "root"), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_creds_read),
		cmocka_unit_test(test_creds_read_errors),
		cmocka_unit_test(test_creds_read_userns),
		cmocka_unit_test(test_target_read),
		cmocka_unit_test(test_real_proc),
		cmocka_unit_test(test_identity_rules),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_rlimit_rules),
		cmocka_unit_test(test_lowering),
		cmocka_unit_test(test_rt_groups),
		cmocka_unit_test(test_claim_levels),
		cmocka_unit_test(test_userns_caps),
		cmocka_unit_test(test_reason_lengths),
		cmocka_unit_test(test_policy_add_group),
		cmocka_unit_test(test_claim_terms),
		cmocka_unit_test(test_may_own),
		cmocka_unit_test(test_may_release),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
