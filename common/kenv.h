/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's RT environment beyond throttling and isolation (DESIGN §20):
 * what decides whether an RT thread gets the time it asked for once it is
 * placed.
 *
 *   RT group scheduling  CONFIG_RT_GROUP_SCHED gives every cpu cgroup an RT
 *                        budget (cpu.rt_runtime_us), 0 in each folder made
 *                        after boot: RT is refused in a folder without one.
 *                        The files are the cgroup v1 cpu controller's; a
 *                        cgroup v2 root with them is read the same way.
 *                        Since 6.16 rt_group_sched=0 on the command line
 *                        turns it off (the files then go).
 *   deadline servers     fair_server (6.12) and ext_server (sched_ext,
 *                        2026) reserve runtime of every period per CPU for
 *                        normal (or sched_ext) tasks, ahead of RT tasks;
 *                        only debugfs shows them (sched/NAME/cpuN/runtime
 *                        and period, in ns).
 *   sched_ext            a BPF scheduler loaded (/sys/kernel/sched_ext/state,
 *                        root/ops its name, enable_seq how many were).
 *
 * The parsers and the words are pure; daemon/kernel-env.c reads the files.
 * rtplacectl turns the STATUS-time KERNEL reply back into these structs so
 * that the log and the status say the same thing in the same words.
 */
#ifndef RTPLACE_KENV_H
#define RTPLACE_KENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtplace-proto.h"

#define KENV_NAME_MAX 64  /* a sched_ext scheduler's name, NUL included */
#define KENV_PATH_MAX 256 /* a cgroup folder under its hierarchy, NUL included */
#define KENV_WHY_MAX 256  /* why a deadline server could not be read */

/* Where the RT budgets are (struct kenv_rtgroup's mode). */
enum {
	KENV_RTG_NONE = 0, /* no cpu.rt_runtime_us anywhere: no per-cgroup budget */
	KENV_RTG_V1 = 1,   /* the cgroup v1 cpu controller's */
	KENV_RTG_V2 = 2,   /* the cgroup v2 root's */
};

struct kenv_rtgroup {
	uint32_t mode;          /* KENV_RTG_* */
	int32_t boot;           /* rt_group_sched= on the command line: -1 absent, 0 or 1 */
	int64_t root_runtime_us; /* the hierarchy root's budget (-1: unlimited); 0 without mode */
	int64_t root_period_us;
	uint32_t folders;       /* folders below the root */
	uint32_t budgetless;    /* of which with cpu.rt_runtime_us 0 */
	char first[KENV_PATH_MAX]; /* the shallowest such folder ("/a/b"), "" when none */
};

/* A deadline server's state (struct kenv_dlserver's state). */
enum {
	KENV_DL_READ = 0,       /* every CPU's runtime and period were read */
	KENV_DL_ABSENT = 1,     /* debugfs is there, the kernel has no such server */
	KENV_DL_UNREADABLE = 2, /* debugfs not mounted or not readable here: why says */
};

/* One CPU's server: runtime ns of every period ns. */
struct kenv_dl_cpu {
	int64_t runtime_ns;
	int64_t period_ns;
};

struct kenv_dlserver {
	uint32_t state;         /* KENV_DL_* */
	uint32_t ncpus;         /* READ: the CPUs read */
	int64_t runtime_min_ns, runtime_max_ns;
	int64_t period_min_ns, period_max_ns;
	uint32_t share_max_ppm; /* the largest runtime / period, in millionths */
	uint32_t zero;          /* CPUs whose server has runtime 0 (turned off) */
	char why[KENV_WHY_MAX]; /* UNREADABLE: the path and the error */
};

/* sched_ext's state (struct kenv_scx's state): the kernel's words. */
enum {
	KENV_SCX_ABSENT = 0,   /* no /sys/kernel/sched_ext: the kernel has no sched_ext */
	KENV_SCX_DISABLED = 1,
	KENV_SCX_ENABLING = 2, /* also "prepping" (6.12) */
	KENV_SCX_ENABLED = 3,
	KENV_SCX_DISABLING = 4,
	KENV_SCX_UNKNOWN = 5,  /* a word this build does not know */
};

struct kenv_scx {
	uint32_t state;          /* KENV_SCX_* */
	int32_t switch_all;      /* every normal task is on it: 1, only SCHED_EXT ones: 0, unknown: -1 */
	int64_t enable_seq;      /* schedulers loaded since boot, -1 when the kernel does not say */
	char ops[KENV_NAME_MAX]; /* the scheduler's name while one is loaded, else "" */
};

struct kenv {
	struct kenv_rtgroup rtg;
	struct kenv_dlserver fair;
	struct kenv_dlserver ext;
	struct kenv_scx scx;
};

/*
 * Parses a number as sysfs, debugfs, cgroupfs and sysctl files print it:
 * optional blanks, an optional '-', digits, optional blanks and newlines,
 * nothing else, within [min, max]. 0 or -EBADMSG; *ret only on success.
 */
int kenv_parse_int(const char *text, int64_t min, int64_t max, int64_t *ret);

/* rt_group_sched= in the text of /proc/cmdline: -1 when absent, else the
 * last one's value (0 or 1; the kernel ignores any other, and so does this).
 * Words after " -- " are init's, not the kernel's. */
int kenv_parse_boot_rt_group_sched(const char *cmdline);

/* The KENV_SCX_* of the text of /sys/kernel/sched_ext/state. */
uint32_t kenv_parse_scx_state(const char *text);

/* The first line of text, blanks around it cut, into ret (cut to size). */
void kenv_parse_name(const char *text, char *ret, size_t size);

/* A server's summary from its CPUs' values (n > 0): state READ. */
void kenv_dl_summarize(const struct kenv_dl_cpu *cpus, uint32_t n, struct kenv_dlserver *ret);

/* Whether an RT thread in a cpu cgroup other than the root needs a budget
 * there. */
bool kenv_rtgroup_needs_budget(const struct kenv_rtgroup *g);

/* Each part in words, as the log and rtplacectl status say it; the
 * deadline server's text names it ("fair_server"). 0, or -ENOBUFS when
 * size was too small (ret then holds what fitted). */
int kenv_rtgroup_text(const struct kenv_rtgroup *g, char *ret, size_t size);
int kenv_dl_text(const char *name, const struct kenv_dlserver *s, char *ret, size_t size);
int kenv_scx_text(const struct kenv_scx *x, char *ret, size_t size);

/* The environment as KERNEL's reply carries it, and back (a reply the
 * codec accepted). */
void kenv_to_wire(const struct kenv *k, struct rtplace_kernel_reply *ret);
void kenv_from_wire(const struct rtplace_kernel_reply *w, struct kenv *ret);

/* The name of a KENV_SCX_* state, "absent" for ABSENT. */
const char *kenv_scx_state_name(uint32_t state);

#endif
