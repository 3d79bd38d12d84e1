/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the benches share: the clock, sorting and percentiles of samples,
 * and starting an rtplaced of their own (a private socket and
 * configuration, READY=1 read from a private NOTIFY_SOCKET). Bench code:
 * a failure to set up prints why and exits 2.
 */
#ifndef RTPLACE_BENCHLIB_H
#define RTPLACE_BENCHLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The daemon's clocks (daemon/clocks.h, their one reader), so that a
 * bench's times are read as the daemon reads its own. */

/* CLOCK_MONOTONIC in ns. */
uint64_t bench_now_ns(void);

/* CLOCK_THREAD_CPUTIME_ID in ns: the calling thread's CPU time. */
uint64_t bench_thread_ns(void);

/* qsort() comparators. */
int bench_cmp_u64(const void *a, const void *b);
int bench_cmp_double(const void *a, const void *b);

/* Nearest-rank percentile of sorted v[0..n-1] (n > 0). */
uint64_t bench_pct(const uint64_t *sorted, size_t n, unsigned pct);

/* Median of v[0..n-1] (n > 0), v left as it was. */
double bench_median(const double *v, size_t n);

/* ns that pid's main thread has run (/proc/PID/schedstat's first field)
 * into *ret: 0, -errno of the open, or -EIO for a file it cannot read. */
int bench_schedstat_ns(pid_t pid, uint64_t *ret);

/* A SOCK_SEQPACKET connection to the socket at path; prog says why not
 * and exits 2 when there is none. */
int bench_connect(const char *prog, const char *path);

/* An rtplaced started by a bench, with its own folder, socket and config. */
struct bench_daemon {
	pid_t pid;
	char dir[64];
	char socket[108];
	char notify[108];
	char config[108];
};

/*
 * The daemon's folder is made under $TMPDIR (default /tmp).
 *
 * Writes config_text (NULL: an empty file, the built-in defaults) to the
 * daemon's own configuration file and starts bin with --config, --socket
 * and the NULL-terminated extra arguments. Returns ns from fork to READY=1.
 */
uint64_t bench_daemon_start(struct bench_daemon *d, const char *prog, const char *bin, const char *config_text,
			    const char *const *extra_args);

/* Stops the daemon (SIGTERM, wait) and removes its folder; accepts a
 * daemon never started. */
void bench_daemon_stop(struct bench_daemon *d);

#endif
