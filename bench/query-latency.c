/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Query round trip against the physical floor (DESIGN §11): the same
 * QUERY message sent to rtplaced, to a bare single-threaded SEQPACKET
 * echo server on raw epoll, and to the same echo on a libevent loop built
 * as rtplaced builds its own (the floor of the loop the daemon is written
 * on), side by side in one run, interleaved in blocks so that host noise
 * hits all three alike. Reports p50/p99 at one
 * client, throughput at 1 and 32 clients (in alternating slices, for the
 * same reason), each server's CPU time per round trip (from
 * /proc/PID/schedstat: what a loaded host's waiting does not inflate),
 * the daemon's time from exec to READY=1 and its resident memory.
 *
 *   bench/query-latency [--rtplaced PATH] [--topology XML] [--against XML] [--rounds N]
 *                       [--seconds S] [--protocol 1|2|3] [--scrape-flood N]
 *
 * Without --topology the daemon runs on the live machine (root: BPF).
 * --protocol sends the QUERY in that protocol version (default the
 * newest): the daemon answers in it, so 1 measures the full-length
 * version-1 reply (1,256 bytes) against version 2's (236 bytes) and 3's
 * (76 bytes). --against runs a second simulated rtplaced on another
 * topology (8,192 CPUs against 480, say) as a fourth server in the same
 * interleaved blocks and slices, its ratios to the first and its memory
 * printed beside the first's.
 * --scrape-flood turns on [metrics] on a loopback port and runs N
 * processes that scrape it back to back while the rounds run (scrapes
 * share the query loop).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>

#include "benchlib.h"
#include "procfs.h"
#include "protocol.h"
#include "server.h"

#define BENCH_CLIENTS_MAX 32
/* Throughput runs in this many alternating slices per server. */
#define BENCH_SLICES 5
/* The servers compared, in the order of every table. */
enum { BENCH_ECHO, BENCH_LIBEVENT_ECHO, BENCH_RTPLACED, BENCH_RTPLACED_B, BENCH_SERVERS };

static char bench_dir[64];
static char echo_path[100], levecho_path[100];
static pid_t echo_pid, levecho_pid;
static struct bench_daemon daemon_under_test, daemon_against;
static pid_t scrapers[BENCH_CLIENTS_MAX];

/* The floor: epoll, recv, send the bytes back; nothing else. */
static void bench_echo_server(int lfd)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = lfd };
	unsigned char buf[RTPLACE_MSG_MAX];

	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, -1);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				struct epoll_event cev = { .events = EPOLLIN, .data.fd = c };

				if (c >= 0)
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
				continue;
			}
			ssize_t len = recv(fd, buf, sizeof(buf), 0);

			if (len <= 0) {
				close(fd);
				continue;
			}
			send(fd, buf, (size_t)len, MSG_NOSIGNAL);
		}
	}
}

/* The echo again, on what rtplaced's transport is made of: a default
 * libevent base, one persistent read event per client, and the receive
 * server.c's server_read_cb makes (room for the descriptors a request may
 * carry), so that rtplaced against it measures the daemon's own work. */
static void bench_levecho_read(evutil_socket_t fd, short what, void *arg)
{
	static unsigned char buf[RTPLACE_MSG_MAX];
	struct event *ev = *(struct event **)arg;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * SERVER_RECV_FDS_MAX)];
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	ssize_t len = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);

	(void)what;
	if (len < 0)
		return;
	if (len == 0) {
		event_free(ev);
		free(arg);
		close(fd);
		return;
	}
	send(fd, buf, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void bench_levecho_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct event_base *base = arg;
	int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct event **ev;

	(void)what;
	if (c < 0)
		return;
	ev = malloc(sizeof(*ev));
	if (!ev || !(*ev = event_new(base, c, EV_READ | EV_PERSIST, bench_levecho_read, ev)) ||
	    event_add(*ev, NULL) < 0)
		_exit(2); /* a child: the parent's atexit cleanup is not its own */
}

static void bench_levecho_server(int lfd)
{
	struct event_base *base = event_base_new();
	struct event *ev = base ? event_new(base, lfd, EV_READ | EV_PERSIST, bench_levecho_accept, base) : NULL;

	if (!ev || event_add(ev, NULL) < 0)
		_exit(2);
	event_base_dispatch(base);
	_exit(2);
}

/* A server child on a new socket at path; its pid. */
static pid_t bench_start_server(const char *path, void (*serve)(int lfd))
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	pid_t pid;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 128) < 0) {
		fprintf(stderr, "query-latency: echo server on %s: %m\n", path);
		exit(2);
	}
	pid = fork();
	if (pid == 0)
		serve(lfd);
	close(lfd);
	return pid;
}

/* A loopback port nobody listens on now (the kernel's choice for port 0). */
static uint16_t bench_free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	uint16_t port = 0;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* A scraper: GET /metrics on a fresh connection, read it all, again, until
 * killed. */
static pid_t bench_start_scraper(uint16_t port)
{
	static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	for (;;) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		char buf[65536];

		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
		    write(fd, req, sizeof(req) - 1) == (ssize_t)(sizeof(req) - 1))
			while (read(fd, buf, sizeof(buf)) > 0)
				;
		if (fd >= 0)
			close(fd);
	}
}

static void bench_cleanup(void)
{
	for (int i = 0; i < BENCH_CLIENTS_MAX; i++) {
		if (scrapers[i] > 0) {
			kill(scrapers[i], SIGKILL);
			waitpid(scrapers[i], NULL, 0);
		}
	}
	bench_daemon_stop(&daemon_under_test);
	bench_daemon_stop(&daemon_against);
	for (int i = 0; i < 2; i++) {
		pid_t pid = i ? levecho_pid : echo_pid;

		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
	}
	unlink(echo_path);
	unlink(levecho_path);
	rmdir(bench_dir);
}

/* Resident kB of pid, as the daemon reads /proc; -1 if unknown. */
static long bench_rss_kb(pid_t pid)
{
	struct procfs_stat st;

	if (procfs_read_stat(PROCFS_ROOT, pid, 0, &st) < 0)
		return -1;
	return (long)(st.rss * (uint64_t)sysconf(_SC_PAGESIZE) / 1024);
}

/* ns that pid's main thread has run (schedstat's first field), 0 if unknown. */
static uint64_t bench_cpu_ns(pid_t pid)
{
	uint64_t ns;

	return bench_schedstat_ns(pid, &ns) == 0 ? ns : 0;
}

static uint16_t bench_protocol = RTPLACE_PROTO_VERSION;

static void bench_query_msg(struct proto_msg *m, uint32_t id)
{
	struct rtplace_query q = {
		.prio = 50, .policy = RTPLACE_POLICY_FIFO, .count = 1, .node = -1, .near_cpu = -1,
	};

	proto_encode_query(m, id, &q);
	proto_msg_finish(m, bench_protocol);
}

/* One round trip; 0 or exits on failure (a benchmark of errors is no benchmark). */
static void bench_round_trip(int fd, const struct proto_msg *m, unsigned char *buf)
{
	if (send(fd, m, m->hdr.length, 0) < 0 || recv(fd, buf, RTPLACE_MSG_MAX, 0) <= 0) {
		fprintf(stderr, "query-latency: round trip failed: %m\n");
		exit(2);
	}
}

struct bench_worker {
	const char *path;
	double seconds;
	uint64_t ops;
	pthread_barrier_t *start;
};

static void *bench_worker(void *arg)
{
	struct bench_worker *w = arg;
	static __thread unsigned char buf[RTPLACE_MSG_MAX];
	struct proto_msg m;
	int fd = bench_connect("query-latency", w->path);
	uint64_t end;

	bench_query_msg(&m, 1);
	pthread_barrier_wait(w->start);
	end = bench_now_ns() + (uint64_t)(w->seconds * 1e9);
	while (bench_now_ns() < end) {
		bench_round_trip(fd, &m, buf);
		w->ops++;
	}
	close(fd);
	return NULL;
}

/* Round trips done by clients in seconds. */
static uint64_t bench_throughput(const char *path, int clients, double seconds)
{
	struct bench_worker w[BENCH_CLIENTS_MAX];
	pthread_t th[BENCH_CLIENTS_MAX];
	pthread_barrier_t start;
	uint64_t total = 0;

	pthread_barrier_init(&start, NULL, (unsigned)clients);
	for (int i = 0; i < clients; i++) {
		w[i] = (struct bench_worker){ .path = path, .seconds = seconds, .start = &start };
		pthread_create(&th[i], NULL, bench_worker, &w[i]);
	}
	for (int i = 0; i < clients; i++) {
		pthread_join(th[i], NULL);
		total += w[i].ops;
	}
	pthread_barrier_destroy(&start);
	return total;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rtplaced", required_argument, NULL, 'r' }, { "topology", required_argument, NULL, 't' },
		{ "rounds", required_argument, NULL, 'n' },   { "seconds", required_argument, NULL, 's' },
		{ "protocol", required_argument, NULL, 'p' }, { "scrape-flood", required_argument, NULL, 'f' },
		{ "against", required_argument, NULL, 'a' },  { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *bin = "daemon/rtplaced", *topology = NULL, *against = NULL;
	long rounds = 20000;
	double seconds = 2.0;
	static unsigned char buf[RTPLACE_MSG_MAX];
	uint64_t *lat[BENCH_SERVERS], ready_ns[5];
	struct proto_msg m, reply;
	ssize_t reply_len;
	const char *names[BENCH_SERVERS] = { "echo floor", "libevent", "rtplaced", "rtplaced B" };
	const char *paths[BENCH_SERVERS] = { echo_path, levecho_path, daemon_under_test.socket,
					     daemon_against.socket };
	const char *extra[3] = { NULL }, *extra_b[3] = { "--topology", NULL, NULL };
	long rss_start, rss_end, rss_b_start = 0, rss_b_end = 0;
	int fds[BENCH_SERVERS], c, nscrapers = 0, nservers = BENCH_RTPLACED + 1;
	char config[64] = "";
	uint16_t port = 0;

	while ((c = getopt_long(argc, argv, "r:t:a:n:s:p:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			bin = optarg;
			break;
		case 't':
			topology = optarg;
			break;
		case 'a':
			against = optarg;
			nservers = BENCH_SERVERS;
			break;
		case 'n':
			rounds = strtol(optarg, NULL, 10);
			break;
		case 's':
			seconds = strtod(optarg, NULL);
			break;
		case 'p':
			bench_protocol = (uint16_t)strtol(optarg, NULL, 10);
			if (bench_protocol < RTPLACE_PROTO_VERSION_MIN || bench_protocol > RTPLACE_PROTO_VERSION) {
				fprintf(stderr, "query-latency: --protocol must be %u..%u\n", RTPLACE_PROTO_VERSION_MIN,
					RTPLACE_PROTO_VERSION);
				return 64;
			}
			break;
		case 'f':
			nscrapers = (int)strtol(optarg, NULL, 10);
			if (nscrapers < 1 || nscrapers > BENCH_CLIENTS_MAX) {
				fprintf(stderr, "query-latency: --scrape-flood must be 1..%d\n", BENCH_CLIENTS_MAX);
				return 64;
			}
			break;
		default:
			printf("Usage: query-latency [--rtplaced PATH] [--topology XML] [--against XML] [--rounds N] "
			       "[--seconds S] [--protocol 1|2|3] [--scrape-flood N]\n");
			return c == 'h' ? 0 : 64;
		}
	}
	if (rounds < 1000 || seconds <= 0) {
		fprintf(stderr, "query-latency: --rounds must be >= 1000 and --seconds > 0\n");
		return 64;
	}
	snprintf(bench_dir, sizeof(bench_dir), "/tmp/rtplace-bench.XXXXXX");
	if (!mkdtemp(bench_dir))
		return 2;
	snprintf(echo_path, sizeof(echo_path), "%s/echo.sock", bench_dir);
	snprintf(levecho_path, sizeof(levecho_path), "%s/levecho.sock", bench_dir);
	atexit(bench_cleanup);
	signal(SIGPIPE, SIG_IGN);

	if (topology) {
		extra[0] = "--topology";
		extra[1] = topology;
	}
	if (nscrapers) {
		port = bench_free_port();
		snprintf(config, sizeof(config), "[metrics]\nlisten = 127.0.0.1:%u\n", port);
	}
	for (int i = 0; i < 5; i++) {
		ready_ns[i] = bench_daemon_start(&daemon_under_test, "query-latency", bin, config, extra);
		if (i < 4)
			bench_daemon_stop(&daemon_under_test);
	}
	qsort(ready_ns, 5, sizeof(ready_ns[0]), bench_cmp_u64);
	rss_start = bench_rss_kb(daemon_under_test.pid);
	if (against) {
		extra_b[1] = against;
		bench_daemon_start(&daemon_against, "query-latency", bin, config, extra_b);
		rss_b_start = bench_rss_kb(daemon_against.pid);
	}
	echo_pid = bench_start_server(echo_path, bench_echo_server);
	levecho_pid = bench_start_server(levecho_path, bench_levecho_server);

	for (int k = 0; k < nservers; k++) {
		fds[k] = bench_connect("query-latency", paths[k]);
		lat[k] = calloc((size_t)rounds, sizeof(uint64_t));
	}
	bench_query_msg(&m, 1);
	/* An ERROR is quicker than an answer: time nothing unless the
	 * daemon answers (a daemon too old for --protocol refuses it). */
	reply_len = send(fds[BENCH_RTPLACED], &m, m.hdr.length, 0) < 0
			    ? -1
			    : recv(fds[BENCH_RTPLACED], buf, RTPLACE_MSG_MAX, 0);
	if (reply_len <= 0 || proto_decode(buf, (size_t)reply_len, NULL, &reply, NULL) < 0 ||
	    reply.hdr.type != RTPLACE_MSG_QUERY_REPLY) {
		fprintf(stderr, "query-latency: rtplaced did not answer the QUERY (protocol version %u)\n",
			bench_protocol);
		return 2;
	}
	for (int i = 0; i < nscrapers; i++)
		scrapers[i] = bench_start_scraper(port);
	for (int i = 0; i < 1000; i++) /* warm every path */
		for (int k = 0; k < nservers; k++)
			bench_round_trip(fds[k], &m, buf);
	/* Alternate blocks of 500 so that drift in the host hits every side. */
	for (long done = 0; done < rounds; done += 500) {
		for (int k = 0; k < nservers; k++) {
			for (long i = done; i < done + 500 && i < rounds; i++) {
				uint64_t t0 = bench_now_ns();

				bench_round_trip(fds[k], &m, buf);
				lat[k][i] = bench_now_ns() - t0;
			}
		}
	}
	for (int k = 0; k < nservers; k++)
		close(fds[k]);

	printf("rtplaced %s, %s\n", PACKAGE_VERSION, topology ? topology : "live machine (BPF tracker)");
	if (against)
		printf("rtplaced B: the same, simulating %s\n", against);
	printf("protocol version %u: QUERY %u bytes, QUERY_REPLY %zd bytes (the echoes return the QUERY)\n",
	       bench_protocol, m.hdr.length, reply_len);
	if (nscrapers)
		printf("during a scrape flood: %d processes scraping /metrics back to back\n", nscrapers);
	printf("time from exec to READY=1: median %.1f ms (min %.1f, max %.1f, 5 starts)\n", ready_ns[2] / 1e6,
	       ready_ns[0] / 1e6, ready_ns[4] / 1e6);
	printf("\nQUERY round trip, 1 client, %ld round trips each, interleaved:\n", rounds);
	printf("%-12s %10s %10s\n", "", "p50 us", "p99 us");
	for (int k = 0; k < nservers; k++) {
		qsort(lat[k], (size_t)rounds, sizeof(uint64_t), bench_cmp_u64);
		printf("%-12s %10.2f %10.2f\n", names[k], lat[k][rounds / 2] / 1e3, lat[k][rounds * 99 / 100] / 1e3);
	}
	for (int base = BENCH_ECHO; base <= BENCH_LIBEVENT_ECHO; base++)
		printf("%-12s %10.2f %10.2f\n", base == BENCH_ECHO ? "ratio" : "to libevent",
		       (double)lat[BENCH_RTPLACED][rounds / 2] / (double)lat[base][rounds / 2],
		       (double)lat[BENCH_RTPLACED][rounds * 99 / 100] / (double)lat[base][rounds * 99 / 100]);
	if (against)
		printf("%-12s %10.2f %10.2f\n", "B to A",
		       (double)lat[BENCH_RTPLACED_B][rounds / 2] / (double)lat[BENCH_RTPLACED][rounds / 2],
		       (double)lat[BENCH_RTPLACED_B][rounds * 99 / 100] / (double)lat[BENCH_RTPLACED][rounds * 99 / 100]);

	printf("\nthroughput, round trips/s (%.1f s each):\n", seconds);
	printf("%-12s %12s %12s\n", "", "1 client", "32 clients");
	{
		const pid_t pids[BENCH_SERVERS] = { echo_pid, levecho_pid, daemon_under_test.pid, daemon_against.pid };
		uint64_t ops[BENCH_SERVERS][2] = { { 0 } }, cpu[BENCH_SERVERS][2] = { { 0 } };
		double tp[BENCH_SERVERS][2], us[BENCH_SERVERS][2];

		for (int slice = 0; slice < BENCH_SLICES; slice++) {
			for (int j = 0; j < 2; j++) {
				for (int k = 0; k < nservers; k++) {
					uint64_t c0 = bench_cpu_ns(pids[k]);

					ops[k][j] += bench_throughput(paths[k], j ? 32 : 1, seconds / BENCH_SLICES);
					cpu[k][j] += bench_cpu_ns(pids[k]) - c0;
				}
			}
		}
		for (int k = 0; k < nservers; k++) {
			for (int j = 0; j < 2; j++) {
				tp[k][j] = (double)ops[k][j] / seconds;
				us[k][j] = ops[k][j] ? (double)cpu[k][j] / 1e3 / (double)ops[k][j] : 0;
			}
			printf("%-12s %12.0f %12.0f\n", names[k], tp[k][0], tp[k][1]);
		}
		for (int base = BENCH_ECHO; base <= BENCH_LIBEVENT_ECHO; base++)
			printf("%-12s %12.2f %12.2f\n", base == BENCH_ECHO ? "ratio" : "to libevent",
			       tp[BENCH_RTPLACED][0] / tp[base][0], tp[BENCH_RTPLACED][1] / tp[base][1]);
		if (against)
			printf("%-12s %12.2f %12.2f\n", "B to A", tp[BENCH_RTPLACED_B][0] / tp[BENCH_RTPLACED][0],
			       tp[BENCH_RTPLACED_B][1] / tp[BENCH_RTPLACED][1]);
		printf("\nserver CPU time per round trip, us (schedstat):\n");
		printf("%-12s %12s %12s\n", "", "1 client", "32 clients");
		for (int k = 0; k < nservers; k++)
			printf("%-12s %12.2f %12.2f\n", names[k], us[k][0], us[k][1]);
		for (int base = BENCH_ECHO; base <= BENCH_LIBEVENT_ECHO; base++)
			printf("%-12s %12.2f %12.2f\n", base == BENCH_ECHO ? "ratio" : "to libevent",
			       us[BENCH_RTPLACED][0] / us[base][0], us[BENCH_RTPLACED][1] / us[base][1]);
		if (against)
			printf("%-12s %12.2f %12.2f\n", "B to A", us[BENCH_RTPLACED_B][0] / us[BENCH_RTPLACED][0],
			       us[BENCH_RTPLACED_B][1] / us[BENCH_RTPLACED][1]);
	}
	rss_end = bench_rss_kb(daemon_under_test.pid);
	printf("\nrtplaced VmRSS: %ld kB after start, %ld kB after the runs\n", rss_start, rss_end);
	if (against) {
		rss_b_end = bench_rss_kb(daemon_against.pid);
		printf("rtplaced B VmRSS: %ld kB after start, %ld kB after the runs (%.2fx A's)\n", rss_b_start,
		       rss_b_end, (double)rss_b_end / (double)rss_end);
	}
	for (int k = 0; k < nservers; k++)
		free(lat[k]);
	return 0;
}
