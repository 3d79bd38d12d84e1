/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the benches share (benchlib.h). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchlib.h"
#include "clocks.h"

#define BENCH_READY_TIMEOUT_MS 20000
#define BENCH_ARGS_MAX 16

uint64_t bench_now_ns(void)
{
	return clocks_monotonic_ns();
}

uint64_t bench_thread_ns(void)
{
	return clocks_thread_cpu_ns();
}

int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

uint64_t bench_pct(const uint64_t *sorted, size_t n, unsigned pct)
{
	size_t rank = (n * pct + 99) / 100;

	return sorted[rank ? rank - 1 : 0];
}

double bench_median(const double *v, size_t n)
{
	double *sorted = malloc(n * sizeof(*sorted)), m;

	if (!sorted) {
		fprintf(stderr, "bench: out of memory\n");
		exit(2);
	}
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), bench_cmp_double);
	m = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	free(sorted);
	return m;
}

int bench_schedstat_ns(pid_t pid, uint64_t *ret)
{
	char path[64];
	unsigned long long ns;
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fscanf(f, "%llu", &ns) == 1)
		*ret = ns;
	else
		r = -EIO;
	fclose(f);
	return r;
}

int bench_connect(const char *prog, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "%s: cannot connect to %s: %m\n", prog, path);
		exit(2);
	}
	return fd;
}

uint64_t bench_daemon_start(struct bench_daemon *d, const char *prog, const char *bin, const char *config_text,
			    const char *const *extra_args)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *argv[BENCH_ARGS_MAX + 8];
	int nfd = -1, argc = 0;
	char msg[1024];
	uint64_t t0;
	FILE *f;

	memset(d, 0, sizeof(*d));
	/* $TMPDIR: a bench may want its runtime folder on tmpfs, as
	 * /run is where the daemon is installed. */
	if ((size_t)snprintf(d->dir, sizeof(d->dir), "%s/rtplace-bench.XXXXXX",
			     getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp") >= sizeof(d->dir) ||
	    !mkdtemp(d->dir))
		goto fail;
	snprintf(d->socket, sizeof(d->socket), "%s/rtplaced.sock", d->dir);
	snprintf(d->notify, sizeof(d->notify), "%s/notify.sock", d->dir);
	snprintf(d->config, sizeof(d->config), "%s/rtplaced.conf", d->dir);
	f = fopen(d->config, "we");
	if (!f || (config_text && fputs(config_text, f) < 0) || fclose(f) != 0)
		goto fail;
	nfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->notify);
	if (nfd < 0 || bind(nfd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;

	argv[argc++] = bin;
	argv[argc++] = "--config";
	argv[argc++] = d->config;
	argv[argc++] = "--socket";
	argv[argc++] = d->socket;
	for (int i = 0; extra_args && extra_args[i] && i < BENCH_ARGS_MAX; i++)
		argv[argc++] = extra_args[i];
	argv[argc] = NULL;

	t0 = bench_now_ns();
	d->pid = fork();
	if (d->pid < 0)
		goto fail;
	if (d->pid == 0) {
		setenv("NOTIFY_SOCKET", d->notify, 1);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	for (;;) {
		struct pollfd p = { .fd = nfd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, BENCH_READY_TIMEOUT_MS) <= 0) {
			fprintf(stderr, "%s: %s did not become ready\n", prog, bin);
			bench_daemon_stop(d);
			exit(2);
		}
		n = recv(nfd, msg, sizeof(msg) - 1, 0);
		if (n > 0) {
			msg[n] = '\0';
			if (strstr(msg, "READY=1"))
				break;
		}
	}
	close(nfd);
	return bench_now_ns() - t0;
fail:
	fprintf(stderr, "%s: cannot start %s in %s: %m\n", prog, bin, d->dir);
	if (nfd >= 0)
		close(nfd);
	bench_daemon_stop(d);
	exit(2);
}

void bench_daemon_stop(struct bench_daemon *d)
{
	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		waitpid(d->pid, NULL, 0);
		d->pid = 0;
	}
	if (d->dir[0]) {
		unlink(d->socket);
		unlink(d->notify);
		unlink(d->config);
		rmdir(d->dir);
		d->dir[0] = '\0';
	}
}
