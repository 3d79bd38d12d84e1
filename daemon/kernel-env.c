/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reader of the kernel's RT environment (kernel-env.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel-env.h"
#include "log.h"
#include "procfs.h"

/* How deep and how many cgroup folders one read walks: a bound on the
 * time a reload takes, far above what a systemd host has. */
#define KERNEL_ENV_WALK_DEPTH 32
#define KERNEL_ENV_WALK_FOLDERS 100000u

struct kernel_env {
	char *sysfs;
	char *proc;
	bool logged;                   /* the first read was logged whole */
	struct kenv cur;
	struct kenv_dl_cpu *cpus[2];   /* fair, ext: cap entries each */
	uint32_t cap;
};

int kernel_env_new(const char *sysfs_root, const char *proc_root, struct kernel_env **ret)
{
	struct kernel_env *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	k->sysfs = strdup(sysfs_root);
	k->proc = strdup(proc_root);
	if (!k->sysfs || !k->proc) {
		kernel_env_free(k);
		return -ENOMEM;
	}
	*ret = k;
	return 0;
}

void kernel_env_free(struct kernel_env *k)
{
	if (!k)
		return;
	free(k->sysfs);
	free(k->proc);
	free(k->cpus[0]);
	free(k->cpus[1]);
	free(k);
}

const struct kenv *kernel_env_get(const struct kernel_env *k)
{
	return &k->cur;
}

const struct kenv_dl_cpu *kernel_env_dl_cpus(const struct kernel_env *k, bool ext, uint32_t *ret_n)
{
	const struct kenv_dlserver *s = ext ? &k->cur.ext : &k->cur.fair;

	*ret_n = s->state == KENV_DL_READ ? s->ncpus : 0;
	return k->cpus[ext];
}

/* A small file of sysfs, debugfs or cgroupfs, whole, into buf. */
static int kernel_env_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	int r;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r == 0)
		buf[n] = '\0';
	return r;
}

static int kernel_env_read_int(const char *path, int64_t min, int64_t max, int64_t *ret)
{
	char buf[64];
	int r = kernel_env_read_file(path, buf, sizeof(buf));

	return r < 0 ? r : kenv_parse_int(buf, min, max, ret);
}

/* Whether rel ("/a/b") is a better first budgetless folder to name than
 * the one kept: shallower, then first by name, so that the answer does not
 * depend on the order readdir() gives. */
static bool kernel_env_first_better(const char *rel, const char *kept)
{
	size_t a = 0, b = 0;

	for (const char *p = rel; *p; p++)
		a += *p == '/';
	for (const char *p = kept; *p; p++)
		b += *p == '/';
	return !kept[0] || a < b || (a == b && strcmp(rel, kept) < 0);
}

/* Counts the folders below path (the hierarchy's root is at path[0 ..
 * root_len)) and those of them without an RT budget. path is a PATH_MAX
 * buffer the walk extends and cuts back. */
static void kernel_env_walk(char *path, size_t root_len, unsigned depth, struct kenv_rtgroup *g)
{
	static const char file[] = "/cpu.rt_runtime_us";
	size_t len = strlen(path);
	DIR *d = opendir(path);
	struct dirent *e;

	while (d && (e = readdir(d)) && g->folders < KERNEL_ENV_WALK_FOLDERS) {
		int64_t us;
		int n, r;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n = snprintf(path + len, PATH_MAX - len, "/%s", e->d_name);
		if (n < 0 || (size_t)n + sizeof(file) > PATH_MAX - len)
			continue;
		g->folders++;
		memcpy(path + len + n, file, sizeof(file));
		r = kernel_env_read_int(path, -1, INT64_MAX, &us);
		path[len + n] = '\0';
		if (r == 0 && us == 0) {
			g->budgetless++;
			if (strlen(path + root_len) < sizeof(g->first) && kernel_env_first_better(path + root_len, g->first))
				memcpy(g->first, path + root_len, strlen(path + root_len) + 1);
		}
		if (depth < KERNEL_ENV_WALK_DEPTH)
			kernel_env_walk(path, root_len, depth + 1, g);
		path[len] = '\0';
	}
	if (d)
		closedir(d);
}

/* RT group scheduling: the first hierarchy whose root has an RT budget
 * file, v1's cpu controller (mounted alone or with cpuacct) before the v2
 * root. */
static void kernel_env_rtgroup(struct kernel_env *k, struct kenv_rtgroup *ret)
{
	static const struct {
		const char *dir;
		uint32_t mode;
	} roots[] = {
		{ "fs/cgroup/cpu", KENV_RTG_V1 },
		{ "fs/cgroup/cpu,cpuacct", KENV_RTG_V1 },
		{ "fs/cgroup", KENV_RTG_V2 },
	};
	struct kenv_rtgroup g = { .mode = KENV_RTG_NONE };
	char path[PATH_MAX], cmdline[4096];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && g.mode == KENV_RTG_NONE; i++) {
		snprintf(path, sizeof(path), "%s/%s/cpu.rt_runtime_us", k->sysfs, roots[i].dir);
		if (kernel_env_read_int(path, -1, INT64_MAX, &g.root_runtime_us) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/cpu.rt_period_us", k->sysfs, roots[i].dir);
		if (kernel_env_read_int(path, 1, INT64_MAX, &g.root_period_us) < 0) {
			g.root_runtime_us = 0;
			continue;
		}
		g.mode = roots[i].mode;
		snprintf(path, sizeof(path), "%s/%s", k->sysfs, roots[i].dir);
		kernel_env_walk(path, strlen(path), 1, &g);
	}
	g.boot = procfs_read_cmdline(k->proc, cmdline, sizeof(cmdline)) == 0 ? kenv_parse_boot_rt_group_sched(cmdline)
									       : -1;
	*ret = g;
}

/* Says why a server cannot be read (cut to fit). */
static void __attribute__((format(printf, 2, 3))) kernel_env_why(struct kenv_dlserver *s, const char *fmt, ...)
{
	va_list ap;

	s->state = KENV_DL_UNREADABLE;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
}

/* Why a server's folder cannot be read: debugfs missing, hidden or shut. */
static void kernel_env_dl_why(const char *sched, const char *dir, int err, struct kenv_dlserver *ret)
{
	struct stat st;

	if (err != -ENOENT)
		kernel_env_why(ret, "%s: %s", dir, strerror(-err));
	else if (stat(sched, &st) == 0)
		ret->state = KENV_DL_ABSENT;
	else if (errno == ENOENT)
		kernel_env_why(ret, "no %s: debugfs is not mounted there, or hidden from rtplaced", sched);
	else
		kernel_env_why(ret, "%s: %s", sched, strerror(errno));
}

/* One deadline server (name "fair_server" or "ext_server") on CPUs 0 ..
 * ncpus - 1 into cpus. A CPU without a folder (not possible) is skipped. */
static void kernel_env_dl(struct kernel_env *k, const char *name, uint32_t ncpus, struct kenv_dl_cpu *cpus,
			  struct kenv_dlserver *ret)
{
	char sched[PATH_MAX], dir[PATH_MAX + 16], path[PATH_MAX + 64];
	struct kenv_dlserver s = { .state = KENV_DL_UNREADABLE };
	uint32_t n = 0;
	int r = 0;

	snprintf(sched, sizeof(sched), "%s/kernel/debug/sched", k->sysfs);
	snprintf(dir, sizeof(dir), "%s/%s", sched, name);
	if (access(dir, X_OK) < 0) {
		kernel_env_dl_why(sched, dir, -errno, &s);
		goto out;
	}
	for (uint32_t cpu = 0; r == 0 && cpu < ncpus; cpu++) {
		snprintf(path, sizeof(path), "%s/cpu%u/runtime", dir, cpu);
		r = kernel_env_read_int(path, 0, INT64_MAX, &cpus[n].runtime_ns);
		if (r == 0) {
			snprintf(path, sizeof(path), "%s/cpu%u/period", dir, cpu);
			r = kernel_env_read_int(path, 1, INT64_MAX, &cpus[n].period_ns);
		}
		n += r == 0;
		if (r == -ENOENT)
			r = 0;
	}
	if (r == -EBADMSG)
		kernel_env_why(&s, "%s is not a number of nanoseconds", path);
	else if (r == -EPERM)
		kernel_env_why(&s, "%s: %s (kernel lockdown refuses debugfs files that are not read-only)", path,
			       strerror(-r));
	else if (r < 0)
		kernel_env_why(&s, "%s: %s", path, strerror(-r));
	else if (n == 0)
		s.state = KENV_DL_ABSENT;
	else
		kenv_dl_summarize(cpus, n, &s);
out:
	*ret = s;
}

static void kernel_env_scx(struct kernel_env *k, struct kenv_scx *ret)
{
	struct kenv_scx x = { .state = KENV_SCX_ABSENT, .switch_all = -1, .enable_seq = -1 };
	char path[PATH_MAX], buf[128];
	int64_t v;
	int r;

	snprintf(path, sizeof(path), "%s/kernel/sched_ext/state", k->sysfs);
	r = kernel_env_read_file(path, buf, sizeof(buf));
	if (r == 0)
		x.state = kenv_parse_scx_state(buf);
	else if (r != -ENOENT)
		x.state = KENV_SCX_UNKNOWN;
	snprintf(path, sizeof(path), "%s/kernel/sched_ext/root/ops", k->sysfs);
	if (x.state != KENV_SCX_ABSENT && x.state != KENV_SCX_DISABLED &&
	    kernel_env_read_file(path, buf, sizeof(buf)) == 0)
		kenv_parse_name(buf, x.ops, sizeof(x.ops));
	snprintf(path, sizeof(path), "%s/kernel/sched_ext/switch_all", k->sysfs);
	if (x.state != KENV_SCX_ABSENT && kernel_env_read_int(path, 0, 1, &v) == 0)
		x.switch_all = (int32_t)v;
	snprintf(path, sizeof(path), "%s/kernel/sched_ext/enable_seq", k->sysfs);
	if (x.state != KENV_SCX_ABSENT && kernel_env_read_int(path, 0, INT64_MAX, &v) == 0)
		x.enable_seq = v;
	*ret = x;
}

/* Logs each part whose words changed (every part at the first read). */
static void kernel_env_log(struct kernel_env *k, const struct kenv *old)
{
	char was[1024], now[1024];
	bool first = !k->logged;

	kenv_rtgroup_text(&old->rtg, was, sizeof(was));
	kenv_rtgroup_text(&k->cur.rtg, now, sizeof(now));
	if (first || strcmp(was, now))
		log_msg(first ? LOG_INFO : LOG_NOTICE, "Kernel: RT group scheduling %s", now);
	kenv_dl_text("fair_server", &old->fair, was, sizeof(was));
	kenv_dl_text("fair_server", &k->cur.fair, now, sizeof(now));
	if (first || strcmp(was, now))
		log_msg(first ? LOG_INFO : LOG_NOTICE, "Kernel: deadline server %s", now);
	kenv_dl_text("ext_server", &old->ext, was, sizeof(was));
	kenv_dl_text("ext_server", &k->cur.ext, now, sizeof(now));
	if (first || strcmp(was, now))
		log_msg(first ? LOG_INFO : LOG_NOTICE, "Kernel: deadline server %s", now);
	kenv_scx_text(&old->scx, was, sizeof(was));
	kenv_scx_text(&k->cur.scx, now, sizeof(now));
	if (first || strcmp(was, now))
		log_msg(first ? LOG_INFO : LOG_NOTICE, "Kernel: sched_ext %s", now);
	k->logged = true;
}

/* The deadline servers and sched_ext into k->cur: 0 or -ENOMEM. */
static int kernel_env_read_servers(struct kernel_env *k, uint32_t ncpus)
{
	if (ncpus > k->cap) {
		for (int i = 0; i < 2; i++) {
			struct kenv_dl_cpu *p = realloc(k->cpus[i], ncpus * sizeof(*p));

			if (!p)
				return -ENOMEM;
			k->cpus[i] = p;
		}
		k->cap = ncpus;
	}
	kernel_env_dl(k, "fair_server", ncpus, k->cpus[0], &k->cur.fair);
	kernel_env_dl(k, "ext_server", ncpus, k->cpus[1], &k->cur.ext);
	kernel_env_scx(k, &k->cur.scx);
	return 0;
}

void kernel_env_read(struct kernel_env *k, uint32_t ncpus)
{
	struct kenv old = k->cur;

	kernel_env_rtgroup(k, &k->cur.rtg);
	if (kernel_env_read_servers(k, ncpus) < 0)
		log_error("Failed to read the kernel's deadline servers: %s", strerror(ENOMEM));
	kernel_env_log(k, &old);
}

void kernel_env_refresh(struct kernel_env *k)
{
	struct kenv old = k->cur;

	kernel_env_scx(k, &k->cur.scx);
	kernel_env_log(k, &old);
}
