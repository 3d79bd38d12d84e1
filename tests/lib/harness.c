/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpuset.h"
#include "harness.h"
#include "procfs.h"
#include "testlib.h"

static struct harness_daemon *harness_running;

static void harness_cleanup_at_exit(void)
{
	if (harness_running)
		harness_stop(harness_running);
}

const char *harness_build_path(const char *rel, char *buf, size_t len)
{
	const char *top = getenv("top_builddir");

	snprintf(buf, len, "%s/%s", top ? top : ".", rel);
	return buf;
}

/* Programs staged for other users: one folder per test process, made on
 * first use; removed at exit by the process that made it, not by a forked
 * child that exits. */
static char harness_staged[64];
static pid_t harness_staged_by;

static int harness_unlink_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static void harness_unstage_at_exit(void)
{
	if (getpid() == harness_staged_by && nftw(harness_staged, harness_unlink_cb, 16, FTW_DEPTH | FTW_PHYS) < 0)
		fprintf(stderr, "harness: cannot remove %s: %m\n", harness_staged);
}

static int harness_staged_dir(void)
{
	int r = 0;

	if (harness_staged[0])
		return 0;
	snprintf(harness_staged, sizeof(harness_staged), "/tmp/rtplace-staged.XXXXXX");
	if (!mkdtemp(harness_staged)) {
		r = -errno;
		harness_staged[0] = '\0';
	} else {
		harness_staged_by = getpid();
		atexit(harness_unstage_at_exit);
	}
	return r;
}

int harness_stage_program(const char *rel, char *ret_path, size_t len)
{
	const char *src = getenv("top_srcdir");
	char script[4096], prog[4096];
	pid_t pid;
	int r, st;

	snprintf(script, sizeof(script), "%s/tests/lib/stage-programs.sh", src ? src : ".");
	harness_build_path(rel, prog, sizeof(prog));
	r = harness_staged_dir();
	if (r == 0) {
		pid = fork();
		if (pid == 0) {
			execlp("sh", "sh", script, harness_staged, prog, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0)
			r = -errno;
		else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			r = -EIO;
	}
	if (r == 0)
		snprintf(ret_path, len, "%s/%s", harness_staged, strrchr(prog, '/') + 1);
	return r;
}

static long harness_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int harness_notify_wait(struct harness_daemon *d, const char *needle, int timeout_ms, char *buf, size_t len)
{
	long deadline = harness_now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p = { .fd = d->notify_fd, .events = POLLIN };
		long left = deadline - harness_now_ms();
		char msg[4096];
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)left) <= 0) {
			int st;

			if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
				d->pid = 0;
				d->exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				return -ECHILD;
			}
			continue;
		}
		n = recv(d->notify_fd, msg, sizeof(msg) - 1, MSG_DONTWAIT);
		if (n <= 0)
			continue;
		msg[n] = '\0';
		if (strstr(msg, needle)) {
			if (buf)
				snprintf(buf, len, "%s", msg);
			return 0;
		}
	}
}

/* Makes the private folder with an empty configuration file and binds the
 * notify socket in it. */
static int harness_prepare(struct harness_daemon *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	memset(d, 0, sizeof(*d));
	snprintf(d->dir, sizeof(d->dir), "/tmp/rtplace-test.XXXXXX");
	/* Searchable by all: some tests connect as an unprivileged user. */
	if (!mkdtemp(d->dir) || chmod(d->dir, 0755) < 0)
		return -errno;
	snprintf(d->socket, sizeof(d->socket), "%s/rtplaced.sock", d->dir);
	snprintf(d->notify, sizeof(d->notify), "%s/notify.sock", d->dir);
	snprintf(d->config, sizeof(d->config), "%s/rtplaced.conf", d->dir);
	fd = open(d->config, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	d->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (d->notify_fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->notify);
	if (bind(d->notify_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}

/* Forks and execs argv with the notify socket (and env) in its environment. */
static int harness_exec(struct harness_daemon *d, const char *const *argv, const char *const *env)
{
	d->pid = fork();
	if (d->pid < 0)
		return -errno;
	if (d->pid == 0) {
		char wd_pid[32];

		setenv("NOTIFY_SOCKET", d->notify, 1);
		/* sd_watchdog_enabled() only trusts WATCHDOG_USEC for this pid
		 * (a wrapper that execs the daemon in place keeps it). */
		snprintf(wd_pid, sizeof(wd_pid), "%d", (int)getpid());
		setenv("WATCHDOG_PID", wd_pid, 1);
		for (int i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "harness: cannot run %s: %m\n", argv[0]);
		_exit(127);
	}
	harness_running = d;
	atexit(harness_cleanup_at_exit);
	return 0;
}

/* Appends src (NULL-terminated, may be NULL) to argv at *argc, bounded. */
static void harness_append(const char **argv, int *argc, const char *const *src)
{
	for (int i = 0; src && src[i] && *argc < 62; i++)
		argv[(*argc)++] = src[i];
	argv[*argc] = NULL;
}

int harness_write_file(const char *path, const char *text)
{
	return test_write_file(path, text);
}

int harness_start_sim(struct harness_daemon *d, const char *topology)
{
	char path[4096];
	const char *args[] = { "--topology", path, NULL };

	if (!test_topology_path(topology, path, sizeof(path))) {
		fprintf(stderr, "harness: no topology %s\n", topology);
		return -ENOENT;
	}
	return harness_start(d, args, NULL);
}

int harness_reload(struct harness_daemon *d, const char *text)
{
	int r = harness_write_file(d->config, text);

	if (r == 0 && kill(d->pid, SIGHUP) < 0)
		r = -errno;
	if (r == 0)
		r = harness_notify_wait(d, "RELOADING=1", 3000, NULL, 0);
	if (r == 0)
		r = harness_notify_wait(d, "READY=1", 3000, NULL, 0);
	return r;
}

int harness_start_wrapped(struct harness_daemon *d, const char *const *wrapper, const char *config,
			  const char *const *args, const char *const *env)
{
	char daemon_path[4096];
	const char *argv[64];
	int argc = 0, r;

	r = harness_prepare(d);
	if (r == 0 && config)
		r = harness_write_file(d->config, config);
	if (r < 0)
		return r;
	harness_build_path("daemon/rtplaced", daemon_path, sizeof(daemon_path));
	harness_append(argv, &argc, wrapper);
	harness_append(argv, &argc,
		       (const char *const[]){ daemon_path, "--socket", d->socket, "--config", d->config, NULL });
	harness_append(argv, &argc, args);
	r = harness_exec(d, argv, env);
	return r < 0 ? r : harness_notify_wait(d, "READY=1", 20000, NULL, 0);
}

int harness_start_with_config(struct harness_daemon *d, const char *config, const char *const *args,
			      const char *const *env)
{
	return harness_start_wrapped(d, NULL, config, args, env);
}

int harness_start(struct harness_daemon *d, const char *const *args, const char *const *env)
{
	return harness_start_with_config(d, NULL, args, env);
}

int harness_start_activated(struct harness_daemon *d, const char *const *args, int *ret_fd)
{
	char daemon_path[4096], listen_arg[128];
	const char *argv[64];
	int argc = 0, fd = -1, r;

	r = harness_prepare(d);
	if (r < 0)
		return r;
	harness_build_path("daemon/rtplaced", daemon_path, sizeof(daemon_path));
	snprintf(listen_arg, sizeof(listen_arg), "--listen=%s", d->socket);
	/* systemd-socket-activate passes only the variables named with -E. */
	harness_append(argv, &argc,
		       (const char *const[]){ "systemd-socket-activate", "--seqpacket", listen_arg, "-E",
					      "NOTIFY_SOCKET", daemon_path, "--config", d->config, NULL });
	harness_append(argv, &argc, args);
	r = harness_exec(d, argv, NULL);
	if (r < 0)
		return r;
	/* It starts the daemon at the first connection. */
	for (int i = 0; i < 500 && fd < 0; i++) {
		fd = harness_connect(d->socket);
		if (fd < 0)
			usleep(10000);
	}
	if (fd < 0)
		return fd;
	r = harness_notify_wait(d, "READY=1", 20000, NULL, 0);
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

static void harness_remove_dir(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char path[512];

	if (!dp)
		return;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(dp);
	rmdir(dir);
}

int harness_stop(struct harness_daemon *d)
{
	int st = 0, r = 0;

	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		for (int i = 0; i < 500; i++) {
			pid_t w = waitpid(d->pid, &st, WNOHANG);

			if (w == d->pid)
				break;
			if (i == 499) {
				kill(d->pid, SIGKILL);
				waitpid(d->pid, &st, 0);
			}
			usleep(10000);
		}
		r = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		d->pid = 0;
	}
	if (d->notify_fd > 0)
		close(d->notify_fd);
	d->notify_fd = -1;
	if (d->dir[0])
		harness_remove_dir(d->dir);
	d->dir[0] = '\0';
	if (harness_running == d)
		harness_running = NULL;
	return r;
}

static int harness_connect_flags(const char *path, int flags)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | flags, 0);

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

int harness_connect(const char *path)
{
	return harness_connect_flags(path, 0);
}

int harness_connect_nonblock(const char *path)
{
	return harness_connect_flags(path, SOCK_NONBLOCK);
}

int harness_send(int fd, const struct proto_msg *req)
{
	return send(fd, req, req->hdr.length, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

int harness_reply(int fd, uint32_t request_id, struct proto_msg *ret)
{
	static unsigned char buf[RTPLACE_MSG_MAX];
	struct proto_limits lim = { .ncpus = RTPLACE_MAX_CPUS, .nnodes = 1024, .accept = PROTO_ACCEPT_REPLIES };

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int r;

		if (poll(&p, 1, 5000) <= 0)
			return -ETIMEDOUT;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		r = proto_decode(buf, (size_t)n, &lim, ret, NULL);
		if (r < 0)
			return r;
		if (ret->hdr.request_id == request_id)
			return 0;
	}
}

int harness_call(int fd, const struct proto_msg *req, struct proto_msg *ret)
{
	int r = harness_send(fd, req);

	return r < 0 ? r : harness_reply(fd, req->hdr.request_id, ret);
}

struct rtplace_query harness_fifo_query(int prio, unsigned count, uint32_t flags)
{
	return (struct rtplace_query){
		.prio = (uint8_t)prio,
		.policy = RTPLACE_POLICY_FIFO,
		.count = (uint16_t)count,
		.node = -1,
		.near_cpu = -1,
		.flags = flags,
		.lease_ms = (flags & RTPLACE_QUERY_F_CLAIM) ? RTPLACE_LEASE_INFINITE : 0,
	};
}

int harness_query(int fd, uint32_t request_id, int prio, unsigned count, const char *allowed, bool claim,
		  struct proto_msg *ret)
{
	struct rtplace_query q = harness_fifo_query(prio, count, claim ? RTPLACE_QUERY_F_CLAIM : 0);
	struct proto_msg req;
	int r = allowed ? cpuset_parse(allowed, &q.allowed) : 0;

	if (r == 0)
		r = proto_encode_query(&req, request_id, &q);
	if (r == 0)
		r = harness_call(fd, &req, ret);
	if (r == 0 && ret->hdr.type != RTPLACE_MSG_QUERY_REPLY)
		r = -EPROTO;
	return r;
}

/* Request ids of the harness's own requests: above those tests count from 1. */
static uint32_t harness_next_request = 0x40000000u;

int harness_status(int fd, struct rtplace_status_reply *ret)
{
	struct proto_msg req, rep;
	int r;

	r = proto_encode_status(&req, harness_next_request++);
	if (r == 0)
		r = harness_call(fd, &req, &rep);
	if (r == 0 && rep.hdr.type != RTPLACE_MSG_STATUS_REPLY)
		r = -EBADMSG;
	if (r == 0)
		*ret = rep.status_reply;
	return r;
}

int harness_cpu_info(int fd, uint32_t cpu, struct rtplace_cpu_info *ret)
{
	struct rtplace_cpus c = { .first = cpu };
	struct proto_msg req, rep;
	int r;

	r = proto_encode_cpus(&req, harness_next_request++, &c);
	if (r == 0)
		r = harness_call(fd, &req, &rep);
	if (r == 0 && (rep.hdr.type != RTPLACE_MSG_CPUS_REPLY || rep.cpus_reply.count == 0 ||
		       rep.cpus_reply.cpus[0].cpu != cpu))
		r = -EBADMSG;
	if (r == 0)
		*ret = rep.cpus_reply.cpus[0];
	return r;
}

int harness_fd_count(pid_t pid)
{
	uint32_t n;
	int r = procfs_count_fds(PROCFS_ROOT, pid, &n);

	return r < 0 ? r : (int)n;
}

int harness_wait_fd_count(pid_t pid, int want, int timeout_ms)
{
	int n = harness_fd_count(pid);

	for (int waited = 0; n != want && waited < timeout_ms; waited += 10) {
		usleep(10 * 1000);
		n = harness_fd_count(pid);
	}
	return n;
}

long harness_rss_kb(pid_t pid)
{
	struct procfs_stat st;
	int r = procfs_read_stat(PROCFS_ROOT, pid, 0, &st);

	return r < 0 ? r : (long)(st.rss * (uint64_t)sysconf(_SC_PAGESIZE) / 1024);
}

long harness_cpu_ticks(pid_t pid)
{
	struct procfs_stat st;
	int r = procfs_read_stat(PROCFS_ROOT, pid, 0, &st);

	return r < 0 ? r : (long)(st.utime + st.stime);
}

/* Reads one reply from fd into rep with the two descriptors it may carry
 * (SCM_RIGHTS) in fds: 2 with them, 0 without, or -errno (-EPROTO for a
 * reply that does not decode or other descriptors). */
static int harness_recv_fds(int fd, struct proto_msg *rep, int fds[2])
{
	struct proto_limits lim = { .ncpus = RTPLACE_MAX_CPUS, .nnodes = 1024, .accept = PROTO_ACCEPT_REPLIES };
	static unsigned char buf[RTPLACE_MSG_MAX];
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);

	if (n <= 0)
		return n < 0 ? -errno : -ECONNRESET;
	if (proto_decode(buf, (size_t)n, &lim, rep, NULL) < 0)
		return -EPROTO;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm)
		return 0;
	if (cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(2 * sizeof(int)))
		return -EPROTO;
	memcpy(fds, CMSG_DATA(cm), 2 * sizeof(int));
	return 2;
}

int harness_subscribe(int fd, uint32_t request_id, struct harness_sub *ret)
{
	return harness_subscribe_version(fd, request_id, RTPLACE_PROTO_VERSION, ret);
}

int harness_subscribe_version(int fd, uint32_t request_id, uint16_t version, struct harness_sub *ret)
{
	struct rtplace_subscribe body = { 0 };
	struct proto_msg req, rep;
	int fds[2], r;

	if (proto_encode_subscribe(&req, request_id, &body) < 0 || proto_msg_finish(&req, version) < 0 ||
	    send(fd, &req, req.hdr.length, 0) < 0)
		return -EIO;
	r = harness_recv_fds(fd, &rep, fds);
	if (r == 2 && rep.hdr.type != RTPLACE_MSG_SUBSCRIBE_REPLY) {
		close(fds[0]);
		close(fds[1]);
		r = -EPROTO;
	}
	if (r >= 0 && r != 2)
		r = -EPROTO;
	if (r < 0)
		return r;
	ret->len = rep.subscribe_reply.ring_bytes;
	ret->mem = mmap(NULL, ret->len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	close(fds[0]);
	ret->doorbell = fds[1];
	if (ret->mem == MAP_FAILED) {
		close(fds[1]);
		return -errno;
	}
	r = ring_attach(ret->mem, ret->len, &ret->ring);
	if (r < 0)
		harness_unsubscribe(ret);
	return r;
}

int harness_wait_record(struct harness_sub *s, uint8_t type, int32_t tid, int timeout_ms,
			struct rtplace_record *ret)
{
	long deadline = harness_now_ms() + timeout_ms;

	do {
		struct pollfd p = { .fd = s->doorbell, .events = POLLIN };
		struct rtplace_record rec;
		uint64_t lost, rings;

		if (poll(&p, 1, 100) == 1 && read(s->doorbell, &rings, sizeof(rings)) < 0)
			return -errno;
		while (ring_pop(&s->ring, &rec, &lost) == 1) {
			if (rec.type == type && rec.tid == tid) {
				*ret = rec;
				return 0;
			}
		}
	} while (harness_now_ms() < deadline);
	return -ETIMEDOUT;
}

void harness_unsubscribe(struct harness_sub *s)
{
	if (s->mem && s->mem != MAP_FAILED)
		munmap(s->mem, s->len);
	if (s->doorbell >= 0)
		close(s->doorbell);
	s->mem = NULL;
	s->doorbell = -1;
}

static struct harness_daemon *harness_live;

int harness_live_start(struct harness_daemon *d, const char *config)
{
	int r = test_rt_begin();

	if (r < 0) {
		fprintf(stderr, "harness: cannot take the RT-test lock: %s\n", strerror(-r));
		return r;
	}
	r = harness_start_with_config(d, config, NULL, NULL);
	if (r < 0)
		fprintf(stderr, "harness: rtplaced did not start: %s\n", strerror(-r));
	else
		harness_live = d;
	return r;
}

int harness_live_stop(void **state)
{
	(void)state;
	test_kill_children();
	return harness_live ? harness_stop(harness_live) : 0;
}

int harness_free_port(uint16_t *ret)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		r = -errno;
	else
		*ret = ntohs(sa.sin_port);
	close(fd);
	return r;
}

int harness_local(int fd, uint16_t version, struct proto_msg *rep, int fds[2])
{
	struct proto_msg req;

	if (proto_encode_local(&req, 7) < 0 || proto_msg_finish(&req, version) < 0 || harness_send(fd, &req) < 0)
		return -EIO;
	return harness_recv_fds(fd, rep, fds);
}
