/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bpf-stats: what given BPF programs cost while a command runs, for
 * bench/tracker-overhead.sh. Run-time statistics are switched on through a
 * bpf(BPF_ENABLE_STATS) file descriptor held for the run, so the sysctl
 * kernel.bpf_stats_enabled is left as it is and a crash cannot leave the
 * statistics on: the kernel counts them for as long as any such descriptor
 * is open.
 *
 *   bpf-stats --ids ID[,ID...] -- COMMAND [ARG...]
 *
 * Runs COMMAND (its standard output to /dev/null), then prints, from the
 * programs' run_cnt and run_time_ns before and after, the machine's busy
 * CPU time (/proc/stat: all but idle and iowait, every CPU) and COMMAND's
 * own CPU time (user + system, its waited-for descendants included),
 *
 *   prog NAME events N ns/event X
 *   total events N run_ns T busy_ns B share P% command_ns C command_share Q%
 *
 * share is the programs' run time over the machine's busy time: what the
 * tracker costs the machine, but diluted by anything else that ran;
 * command_share is over the command's CPU time, which on a shared machine
 * is the steadier figure (the programs' run time then includes other
 * tasks' events too, an upper bound). Both include the statistics' own
 * cost (two clock reads per event). Exit 0, 1 if COMMAND failed, 2 on a
 * usage or system error.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#define BS_MAX_PROGS 32

struct bs_prog {
	__u32 id;
	int fd;
	char name[BPF_OBJ_NAME_LEN];
	__u64 cnt[2], ns[2]; /* before and after the command */
};

/* Run count and run time of one program, now. */
static int bs_read(struct bs_prog *p, __u64 *ret_cnt, __u64 *ret_ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(p->fd, &info, &len) < 0)
		return -errno;
	memcpy(p->name, info.name, sizeof(p->name));
	*ret_cnt = info.run_cnt;
	*ret_ns = info.run_time_ns;
	return 0;
}

/* Busy CPU time of the whole machine so far, in ns. */
static int bs_busy_ns(__u64 *ret)
{
	unsigned long long v[10] = { 0 }, total = 0;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
		   &v[5], &v[6], &v[7], &v[8], &v[9]);
	fclose(f);
	if (n < 5 || hz <= 0)
		return -EIO;
	/* guest and guest_nice (8, 9) are already inside user and nice. */
	for (int i = 0; i < 8; i++)
		total += v[i];
	*ret = (__u64)(total - v[3] - v[4]) * (1000000000ULL / (__u64)hz);
	return 0;
}

/* Every program's counters and the busy time, as snapshot `when` (0 before
 * the command, 1 after). Says what failed. 0 or -errno. */
static int bs_snapshot(struct bs_prog *progs, unsigned n, int when, __u64 *ret_busy)
{
	int r = 0;

	for (unsigned i = 0; i < n && r == 0; i++)
		r = bs_read(&progs[i], &progs[i].cnt[when], &progs[i].ns[when]);
	if (r == 0)
		r = bs_busy_ns(ret_busy);
	if (r < 0)
		fprintf(stderr, "bpf-stats: reading the statistics: %s\n", strerror(-r));
	return r;
}

static int bs_parse_ids(char *arg, struct bs_prog *progs, unsigned *ret_n)
{
	unsigned n = 0;

	for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(tok, &end, 10);
		if (errno || end == tok || *end || v == 0 || v > UINT32_MAX || n == BS_MAX_PROGS)
			return -EINVAL;
		progs[n++] = (struct bs_prog){ .id = (__u32)v, .fd = -1 };
	}
	*ret_n = n;
	return n ? 0 : -EINVAL;
}

/* Runs argv with standard output to /dev/null; 0 if it exited 0. Its CPU
 * time (user + system) in *ret_ns. */
static int bs_run(char **argv, __u64 *ret_ns)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "bpf-stats: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return -errno;
	*ret_ns = ((__u64)ru.ru_utime.tv_sec + (__u64)ru.ru_stime.tv_sec) * 1000000000ULL +
		  ((__u64)ru.ru_utime.tv_usec + (__u64)ru.ru_stime.tv_usec) * 1000ULL;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

static void bs_usage(FILE *f)
{
	fprintf(f, "Usage: bpf-stats --ids ID[,ID...] -- COMMAND [ARG...]\n"
		   "Per-program events and ns per event of the given BPF programs while COMMAND runs,\n"
		   "and their share of the machine's busy CPU time (statistics enabled through a\n"
		   "BPF_ENABLE_STATS descriptor; kernel.bpf_stats_enabled is not touched).\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "ids", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bs_prog progs[BS_MAX_PROGS];
	__u64 busy0 = 0, busy1 = 0, events = 0, run_ns = 0, cmd_ns = 0;
	unsigned n = 0;
	int c, stats_fd = -1, ret = 2;

	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (bs_parse_ids(optarg, progs, &n) < 0) {
				fprintf(stderr, "bpf-stats: --ids wants program ids (1..%u of them) separated by commas\n",
					BS_MAX_PROGS);
				return 2;
			}
			break;
		case 'h':
			bs_usage(stdout);
			return 0;
		default:
			bs_usage(stderr);
			return 2;
		}
	}
	if (n == 0 || optind >= argc) {
		bs_usage(stderr);
		return 2;
	}
	for (unsigned i = 0; i < n; i++) {
		progs[i].fd = bpf_prog_get_fd_by_id(progs[i].id);
		if (progs[i].fd < 0) {
			fprintf(stderr, "bpf-stats: program %u: %s\n", progs[i].id, strerror(errno));
			goto out;
		}
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "bpf-stats: BPF_ENABLE_STATS: %s\n", strerror(errno));
		goto out;
	}
	if (bs_snapshot(progs, n, 0, &busy0) < 0)
		goto out;
	ret = bs_run(argv + optind, &cmd_ns) < 0 ? 1 : 0;
	if (bs_snapshot(progs, n, 1, &busy1) < 0) {
		ret = 2;
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		__u64 cnt = progs[i].cnt[1] - progs[i].cnt[0], ns = progs[i].ns[1] - progs[i].ns[0];

		events += cnt;
		run_ns += ns;
		printf("prog %s events %llu ns/event %.1f\n", progs[i].name, (unsigned long long)cnt,
		       cnt ? (double)ns / (double)cnt : 0.0);
	}
	printf("total events %llu run_ns %llu busy_ns %llu share %.3f%% command_ns %llu command_share %.3f%%\n",
	       (unsigned long long)events, (unsigned long long)run_ns, (unsigned long long)(busy1 - busy0),
	       busy1 > busy0 ? 100.0 * (double)run_ns / (double)(busy1 - busy0) : 0.0, (unsigned long long)cmd_ns,
	       cmd_ns ? 100.0 * (double)run_ns / (double)cmd_ns : 0.0);
out:
	if (stats_fd >= 0)
		close(stats_fd);
	for (unsigned i = 0; i < n; i++)
		if (progs[i].fd >= 0)
			close(progs[i].fd);
	return ret;
}
