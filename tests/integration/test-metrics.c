/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metrics endpoint (DESIGN §16) of the real daemon, over real TCP on
 * 127.0.0.1: the counters follow what clients do, every family has HELP and
 * TYPE, cpu labels are decimal, other paths and methods get 404 and 405,
 * oversized requests are refused, and scrapers that stall (connect and say
 * nothing, send half a request, send requests and read nothing) neither
 * stall the socket clients nor outlive the idle timeout. On a simulated
 * machine as any user; as root also the live daemon with [metrics]
 * bpf-stats. (promtool and a real Prometheus: test-metrics-prometheus.sh.)
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include "testlib.h"

/* daemon/metrics.h: the idle timeout, in seconds, and how old a page a
 * scrape may get. */
#define METRICS_TIMEOUT_S 10
#define METRICS_PAGE_MAX_AGE_MS 100
#define PAGE_MAX (1024 * 1024)

static char topo[4096];
static uint32_t next_request = 1;

struct fixture {
	struct harness_daemon d;
	uint16_t port;
	int client; /* a socket client, -1 when none */
};

/* Starts the daemon with [metrics] listen on a free loopback port and
 * extra configuration lines; live (no --topology) when asked. */
static struct fixture *fixture_start(bool live, const char *extra)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *sim_args[] = { "--topology", topo, NULL };
	char text[512];

	assert_non_null(f);
	f->client = -1;
	assert_int_equal(harness_free_port(&f->port), 0);
	snprintf(text, sizeof(text), "[metrics]\nlisten = 127.0.0.1:%u\n%s", f->port, extra ? extra : "");
	assert_int_equal(harness_start_with_config(&f->d, text, live ? NULL : sim_args, NULL), 0);
	return f;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (!f)
		return 0;
	if (f->client >= 0)
		close(f->client);
	if (f->d.pid > 0)
		harness_stop(&f->d);
	free(f);
	*state = NULL;
	return 0;
}

static int http_connect(uint16_t port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		assert_true(n > 0);
		buf += n;
		len -= (size_t)n;
	}
}

/* Reads until the server closes the connection (each read waits up to the
 * socket's SO_RCVTIMEO); a NUL-terminated copy in a malloc'ed buffer. */
static char *read_to_eof(int fd)
{
	char *buf = malloc(PAGE_MAX + 1);
	size_t len = 0;
	ssize_t n;

	assert_non_null(buf);
	while ((n = recv(fd, buf + len, PAGE_MAX - len, 0)) > 0)
		len += (size_t)n;
	if (n < 0)
		fail_msg("no EOF from the metrics endpoint: %s", strerror(errno));
	buf[len] = '\0';
	return buf;
}

/* One HTTP/1.0 exchange (the server closes after its answer). */
static char *http(uint16_t port, const char *request)
{
	int fd = http_connect(port);
	char *resp;

	send_all(fd, request, strlen(request));
	resp = read_to_eof(fd);
	close(fd);
	return resp;
}

static int http_status(const char *resp)
{
	int code = 0;

	if (sscanf(resp, "HTTP/1.%*d %d", &code) != 1)
		fail_msg("not an HTTP answer: %.80s", resp);
	return code;
}

static char *scrape(uint16_t port)
{
	char *resp = http(port, "GET /metrics HTTP/1.0\r\n\r\n");

	assert_int_equal(http_status(resp), 200);
	assert_non_null(strstr(resp, "\r\nContent-Type: text/plain; version=0.0.4"));
	return resp;
}

/* The value of the sample named series (name and labels, exactly), or
 * fails the test when the page has no such line. */
static double sample(const char *page, const char *series)
{
	size_t len = strlen(series);

	for (const char *p = strstr(page, "\r\n\r\n"); p && *p; p = strchr(p, '\n')) {
		p += *p == '\n' ? 1 : 4;
		if (strncmp(p, series, len) == 0 && p[len] == ' ')
			return strtod(p + len + 1, NULL);
	}
	fail_msg("no sample %s", series);
	return -1;
}

static bool has_family(const char *page, const char *name)
{
	char needle[128];

	snprintf(needle, sizeof(needle), "\n# TYPE %s ", name);
	return strstr(page, needle) != NULL;
}

/*
 * Every sample belongs to the family whose HELP and TYPE came last, and no
 * family appears twice; cpu labels are decimal numbers, never lists.
 */
static void check_format(const char *page)
{
	char family[128] = "", help[128] = "", type[32] = "", seen[128][128];
	unsigned nseen = 0;
	const char *body = strstr(page, "\r\n\r\n");

	assert_non_null(body);
	for (const char *p = body + 4; *p; p = strchr(p, '\n') + 1) {
		const char *end = strchr(p, '\n');
		char line[512];
		size_t n;

		assert_non_null(end);
		n = (size_t)(end - p) < sizeof(line) - 1 ? (size_t)(end - p) : sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		if (sscanf(line, "# HELP %127s", help) == 1)
			continue;
		if (sscanf(line, "# TYPE %127s %31s", family, type) == 2) {
			assert_string_equal(family, help);
			for (unsigned i = 0; i < nseen; i++)
				assert_string_not_equal(seen[i], family);
			assert_true(nseen < 128);
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", family);
			continue;
		}
		assert_true(family[0]);
		if (strncmp(line, family, strlen(family)) != 0)
			fail_msg("sample outside its family %s: %s", family, line);
		/* A histogram's samples are its _bucket, _sum and _count. */
		if (strcmp(type, "histogram") == 0) {
			const char *rest = line + strlen(family);

			if (strncmp(rest, "_bucket{le=\"", 12) != 0 && strncmp(rest, "_sum ", 5) != 0 &&
			    strncmp(rest, "_count ", 7) != 0)
				fail_msg("not a histogram sample of %s: %s", family, line);
		} else if (line[strlen(family)] != ' ' && line[strlen(family)] != '{') {
			fail_msg("sample outside its family %s: %s", family, line);
		}
		if (strstr(line, "cpu=\"")) {
			const char *v = strstr(line, "cpu=\"") + 5;

			assert_true(v[0] >= '0' && v[0] <= '9');
			v += strspn(v, "0123456789");
			assert_int_equal(*v, '"');
		}
	}
}

static void status_ok(int fd)
{
	struct proto_msg req, rep;

	assert_int_equal(proto_msg_init(&req, RTPLACE_MSG_STATUS, next_request++), 0);
	assert_int_equal(harness_call(fd, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_STATUS_REPLY);
}

static struct rtplace_query make_query(uint32_t flags)
{
	return harness_fifo_query(50, 2, flags);
}

/* Placed, empty and refused queries, a refused move and a claim show up in
 * the counters; the page is well-formed. */
static void test_counters(void **state)
{
	struct fixture *f = fixture_start(false, "[placement]\nhousekeeping-cpus = 0\n");
	struct rtplace_query q = make_query(RTPLACE_QUERY_F_CLAIM);
	struct rtplace_cpumask cpu0;
	struct rtplace_move mv = { .tid = (int32_t)getpid(), .flags = RTPLACE_MOVE_F_SET_SCHED,
				   .policy = RTPLACE_POLICY_FIFO, .prio = 10 };
	struct proto_msg req, rep;
	char *page;

	*state = f;
	page = scrape(f->port);
	check_format(page);
	assert_true(sample(page, "rtplace_build_info{version=\"" PACKAGE_VERSION "\"}") == 1);
	assert_true(sample(page, "rtplace_queries_total{result=\"placed\"}") == 0);
	assert_true(sample(page, "rtplace_clients") == 0);
	assert_true(sample(page, "rtplace_cpu_online{cpu=\"0\"}") == 1);
	assert_true(sample(page, "rtplace_cpu_online{cpu=\"15\"}") == 1);
	assert_true(sample(page, "rtplace_cpu_rt_priority{cpu=\"15\"}") == 0);
	/* Simulated: no tracker, so neither its losses nor its statistics. */
	assert_false(has_family(page, "rtplace_tracker_runs_total"));
	free(page);

	f->client = harness_connect(f->d.socket);
	assert_true(f->client >= 0);
	/* Placed: two CPUs claimed at rt50. */
	assert_int_equal(proto_encode_query(&req, next_request++, &q), 0);
	assert_int_equal(harness_call(f->client, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	assert_int_equal(rep.query_reply.count, 2);
	/* Empty: only CPU 0 allowed, which is for housekeeping. */
	q = make_query(0);
	q.count = 1;
	cpuset_zero(&cpu0);
	cpuset_set(&cpu0, 0);
	q.allowed = cpu0;
	assert_int_equal(proto_encode_query(&req, next_request++, &q), 0);
	assert_int_equal(harness_call(f->client, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	assert_int_equal(rep.query_reply.count, 0);
	/* Refused: managed threads need the live machine. */
	q = make_query(RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_MANAGE);
	q.owner_pid = (int32_t)getpid();
	assert_int_equal(proto_encode_query(&req, next_request++, &q), 0);
	assert_int_equal(harness_call(f->client, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_ERROR);
	/* A move fails: moves need the live machine. */
	assert_int_equal(proto_encode_move(&req, next_request++, &mv), 0);
	assert_int_equal(harness_call(f->client, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_ERROR);

	/* Past the age of the page the first scrape built. */
	usleep((METRICS_PAGE_MAX_AGE_MS + 20) * 1000);
	page = scrape(f->port);
	check_format(page);
	assert_true(sample(page, "rtplace_queries_total{result=\"placed\"}") == 1);
	assert_true(sample(page, "rtplace_queries_total{result=\"empty\"}") == 1);
	assert_true(sample(page, "rtplace_queries_total{result=\"refused\"}") == 1);
	assert_true(sample(page, "rtplace_moves_total{result=\"moved\"}") == 0);
	assert_true(sample(page, "rtplace_moves_total{result=\"failed\"}") == 1);
	assert_true(sample(page, "rtplace_claims_active") == 1);
	assert_true(sample(page, "rtplace_claimed_cpus") == 2);
	assert_true(sample(page, "rtplace_clients") == 1);
	assert_true(sample(page, "rtplace_collisions_total") == 0);
	assert_true(sample(page, "rtplace_records_lost_total") == 0);
	free(page);
}

/*
 * What an operator alerts and aggregates on: claims made and ended by why,
 * the query time histogram (cumulative, counting every query), the claimed
 * level and the place of each CPU, reloads applied and refused, and the
 * process_* series.
 */
static void test_operator_series(void **state)
{
	struct fixture *f = fixture_start(false, "[limits]\nmax-claims-per-client = 1\n");
	struct rtplace_query q = make_query(RTPLACE_QUERY_F_CLAIM);
	struct proto_msg req, rep;
	uint64_t claim;
	char *page, series[128];
	FILE *conf;

	*state = f;
	f->client = harness_connect(f->d.socket);
	assert_true(f->client >= 0);
	q.count = 1;
	assert_int_equal(proto_encode_query(&req, next_request++, &q), 0);
	assert_int_equal(harness_call(f->client, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
	claim = rep.query_reply.claim_id;
	snprintf(series, sizeof(series), "rtplace_cpu_claim_rt_priority{cpu=\"%u\"}", rep.query_reply.list[0].cpu);
	/* A second claim on the connection meets max-claims-per-client. */
	assert_int_equal(proto_encode_query(&req, next_request++, &q), 0);
	assert_int_equal(harness_call(f->client, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_ERROR);
	q = make_query(0);
	assert_int_equal(proto_encode_query(&req, next_request++, &q), 0);
	assert_int_equal(harness_call(f->client, &req, &rep), 0);
	usleep((METRICS_PAGE_MAX_AGE_MS + 20) * 1000);
	page = scrape(f->port);
	check_format(page);
	assert_true(sample(page, "rtplace_claims_created_total") == 1);
	assert_true(sample(page, series) == 50);
	assert_true(sample(page, "rtplace_claims_refused_total{limit=\"max-claims-per-client\"}") == 1);
	assert_true(sample(page, "rtplace_claims_refused_total{limit=\"max-claims\"}") == 0);
	assert_true(sample(page, "rtplace_query_duration_seconds_count") == 3);
	assert_true(sample(page, "rtplace_query_duration_seconds_bucket{le=\"+Inf\"}") == 3);
	assert_true(sample(page, "rtplace_query_duration_seconds_bucket{le=\"0.000001000\"}") <=
		    sample(page, "rtplace_query_duration_seconds_bucket{le=\"0.010000000\"}"));
	assert_true(sample(page, "rtplace_query_duration_seconds_sum") > 0);
	/* The 16-CPU topology: one place per CPU, node 0, two per core. */
	assert_true(sample(page, "rtplace_cpu_info{cpu=\"15\",node=\"0\",package=\"0\",llc=\"0\",core=\"7\"}") == 1);
	assert_true(sample(page, "rtplace_config_last_reload_successful") == 1);
	assert_true(sample(page, "process_resident_memory_bytes") > 0);
	assert_true(sample(page, "process_open_fds") > 0);
	assert_true(sample(page, "process_start_time_seconds") > 1.7e9);
	free(page);

	assert_int_equal(proto_encode_release(&req, next_request++, &(struct rtplace_release){ .claim_id = claim }), 0);
	assert_int_equal(harness_call(f->client, &req, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_RELEASE_REPLY);
	/* A reload applied, then one refused for a bad file: the signal is
	 * taken on the loop's next turn, so the second waits for the first. */
	assert_int_equal(kill(f->d.pid, SIGHUP), 0);
	for (int i = 0; i < 100; i++) {
		usleep((METRICS_PAGE_MAX_AGE_MS + 20) * 1000);
		page = scrape(f->port);
		if (sample(page, "rtplace_config_reloads_total{result=\"applied\"}") == 1)
			break;
		free(page);
		page = NULL;
	}
	assert_non_null(page);
	free(page);
	conf = fopen(f->d.config, "a");
	assert_non_null(conf);
	fputs("[nowhere]\n", conf);
	fclose(conf);
	assert_int_equal(kill(f->d.pid, SIGHUP), 0);
	status_ok(f->client);
	close(f->client);
	f->client = -1;
	for (int i = 0; i < 100; i++) {
		usleep((METRICS_PAGE_MAX_AGE_MS + 20) * 1000);
		page = scrape(f->port);
		if (sample(page, "rtplace_config_reloads_total{result=\"refused\"}") == 1 &&
		    sample(page, "rtplace_claims_ended_total{reason=\"disconnected\"}") == 0 &&
		    sample(page, "rtplace_clients") == 0)
			break;
		free(page);
		page = NULL;
	}
	assert_non_null(page);
	assert_true(sample(page, "rtplace_claims_ended_total{reason=\"released\"}") == 1);
	assert_true(sample(page, "rtplace_config_reloads_total{result=\"applied\"}") == 1);
	assert_true(sample(page, "rtplace_config_last_reload_successful") == 0);
	assert_true(sample(page, series) == 0);
	free(page);
}

static void expect_refused(uint16_t port, const char *request, int code)
{
	char *resp = http(port, request);

	if (http_status(resp) != code)
		fail_msg("expected %d for %.40s..., got: %.200s", code, request, resp);
	free(resp);
}

static void test_refusals(void **state)
{
	struct fixture *f = fixture_start(false, NULL);
	size_t big = 16384, n;
	char *request = malloc(big + 64);
	char *resp;

	*state = f;
	assert_non_null(request);
	expect_refused(f->port, "GET / HTTP/1.0\r\n\r\n", 404);
	expect_refused(f->port, "GET /metrics/x HTTP/1.0\r\n\r\n", 404);
	expect_refused(f->port, "GET /metricsx HTTP/1.0\r\n\r\n", 404);
	resp = http(f->port, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
	assert_int_equal(http_status(resp), 405);
	assert_non_null(strstr(resp, "\r\nAllow: GET, HEAD\r\n"));
	free(resp);
	expect_refused(f->port, "DELETE /metrics HTTP/1.0\r\n\r\n", 405);
	expect_refused(f->port, "PATCH /metrics HTTP/1.0\r\n\r\n", 405);
	/* A body is more than a scrape sends. */
	expect_refused(f->port, "GET /metrics HTTP/1.0\r\nContent-Length: 10\r\n\r\n0123456789", 413);
	/* Headers beyond the bound (daemon/metrics.h: 8 KiB). */
	n = (size_t)snprintf(request, big + 64, "GET /metrics HTTP/1.0\r\nX-Filler: ");
	memset(request + n, 'a', big);
	snprintf(request + n + big, 64 - n, "\r\n\r\n");
	resp = http(f->port, request);
	assert_true(http_status(resp) >= 400 && http_status(resp) < 500);
	free(resp);
	free(request);
	/* HEAD answers like GET, without the page. */
	resp = http(f->port, "HEAD /metrics HTTP/1.0\r\n\r\n");
	assert_int_equal(http_status(resp), 200);
	assert_null(strstr(resp, "rtplace_build_info"));
	free(resp);
}

/*
 * Three stuck scrapers: one connects and says nothing, one sends half a
 * request, one sends many requests and reads no answer (a small receive
 * buffer, so the daemon's answers back up). While they hang on, every
 * socket query is answered and another scraper gets its page; the half
 * request is closed by the idle timeout.
 */
static void test_stuck_scrapers(void **state)
{
	struct fixture *f = fixture_start(false, NULL);
	int silent, half, unread, small = 4096;
	struct timeval tv = { .tv_sec = METRICS_TIMEOUT_S * 3 };
	char pipeline[64 * 26 + 1] = "";
	char *resp;

	*state = f;
	silent = http_connect(f->port);
	half = http_connect(f->port);
	send_all(half, "GET /metr", 9);
	unread = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(unread >= 0);
	assert_int_equal(setsockopt(unread, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	{
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(f->port),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

		assert_int_equal(connect(unread, (struct sockaddr *)&sa, sizeof(sa)), 0);
	}
	for (int i = 0; i < 64; i++)
		strcat(pipeline, "GET /metrics HTTP/1.1\r\n\r\n");
	send_all(unread, pipeline, strlen(pipeline));

	f->client = harness_connect(f->d.socket);
	assert_true(f->client >= 0);
	for (int i = 0; i < 200; i++)
		status_ok(f->client);
	/* Past the age of the page the pipelined scrapes were answered with. */
	usleep((METRICS_PAGE_MAX_AGE_MS + 20) * 1000);
	resp = scrape(f->port);
	assert_true(sample(resp, "rtplace_clients") == 1);
	free(resp);
	for (int i = 0; i < 200; i++)
		status_ok(f->client);

	/* The half request is dropped once idle for the timeout (408 or a
	 * plain close), well before three times that. */
	assert_int_equal(setsockopt(half, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	resp = read_to_eof(half);
	assert_true(!resp[0] || http_status(resp) == 408 || http_status(resp) == 400);
	free(resp);
	status_ok(f->client);
	close(silent);
	close(half);
	close(unread);
}

/* A scraper child: n scrapes back to back, each a full 200 page; exits 0,
 * or 1 at the first that is not. */
static pid_t start_scraper(uint16_t port, int n)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		/* No cmocka assert here: a failing one would return into the
		 * parent's test runner. */
		static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
		static char resp[PAGE_MAX];
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

		for (int i = 0; i < n; i++) {
			int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			size_t got = 0;
			ssize_t r = 0;

			if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
			    write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1))
				_exit(1);
			while (got + 1 < sizeof(resp) && (r = read(fd, resp + got, sizeof(resp) - 1 - got)) > 0)
				got += (size_t)r;
			resp[got] = '\0';
			close(fd);
			if (r < 0 || strncmp(resp, "HTTP/1.", 7) != 0 || strncmp(resp + 8, " 200 ", 5) != 0 ||
			    !strstr(resp, "rtplace_build_info{"))
				_exit(1);
		}
		_exit(0);
	}
	return test_track_child(pid);
}

/*
 * Scrapes share the loop with the socket clients. Under a
 * flood (scrapers connected and silent, four scraping back to back) every
 * query is answered, every scrape gets the whole page, and once the flood
 * is over the page counts what the clients did.
 */
static void test_scrape_flood(void **state)
{
	enum { HELD = 32, SCRAPERS = 4, SCRAPES = 200, QUERIES = 500 };
	struct fixture *f = fixture_start(false, NULL);
	struct rtplace_query q = make_query(0);
	pid_t scrapers[SCRAPERS];
	int held[HELD], st;
	char *page = NULL;

	*state = f;
	for (int i = 0; i < HELD; i++)
		held[i] = http_connect(f->port);
	for (int i = 0; i < SCRAPERS; i++)
		scrapers[i] = start_scraper(f->port, SCRAPES);
	f->client = harness_connect(f->d.socket);
	assert_true(f->client >= 0);
	for (int i = 0; i < QUERIES; i++) {
		struct proto_msg req, rep;

		assert_int_equal(proto_encode_query(&req, next_request++, &q), 0);
		assert_int_equal(harness_call(f->client, &req, &rep), 0);
		assert_int_equal(rep.hdr.type, RTPLACE_MSG_QUERY_REPLY);
		assert_int_equal(rep.query_reply.count, 2);
	}
	for (int i = 0; i < SCRAPERS; i++) {
		assert_int_equal(waitpid(scrapers[i], &st, 0), scrapers[i]);
		test_forget_child(scrapers[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	for (int i = 0; i < HELD; i++)
		close(held[i]);
	/* A page may be as old as METRICS_PAGE_MAX_AGE_MS: scrape until it
	 * shows every query (bounded). */
	for (int i = 0; i < 50; i++) {
		free(page);
		page = scrape(f->port);
		if (sample(page, "rtplace_queries_total{result=\"placed\"}") == QUERIES)
			break;
		usleep(20 * 1000);
	}
	check_format(page);
	assert_true(sample(page, "rtplace_queries_total{result=\"placed\"}") == QUERIES);
	assert_true(sample(page, "rtplace_clients") == 1);
	assert_true(sample(page, "rtplace_cpu_online{cpu=\"15\"}") == 1);
	free(page);
}

/*
 * Scrapers cannot take the descriptors socket clients need: with a soft
 * RLIMIT_NOFILE of 64 (16 reserved for root, daemon/server.h), the daemon
 * stops accepting scrapers once its lowest free descriptor reaches 64 - 32,
 * so with 80 scrapers connected socket clients still get descriptors and
 * answers, and accepting resumes when the scrapers go.
 */
static void test_descriptor_pressure(void **state)
{
	enum { NOFILE = 64, CONNECTIONS = 80 };
	struct rlimit old, low;
	struct fixture *f;
	int fds[CONNECTIONS], clients[10];
	char *page;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = (struct rlimit){ .rlim_cur = NOFILE, .rlim_max = old.rlim_max };
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	f = fixture_start(false, NULL);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	*state = f;

	for (int i = 0; i < CONNECTIONS; i++)
		fds[i] = http_connect(f->port);
	f->client = harness_connect(f->d.socket);
	assert_true(f->client >= 0);
	for (int i = 0; i < 50; i++)
		status_ok(f->client);
	/* Room for more socket clients than an unprivileged user may hold
	 * below the reserve (64 - 16): they would find none if scrapers had
	 * taken every descriptor. */
	for (int i = 0; i < 10; i++) {
		clients[i] = harness_connect(f->d.socket);
		assert_true(clients[i] >= 0);
		status_ok(clients[i]);
	}
	for (int i = 0; i < 10; i++)
		close(clients[i]);
	for (int i = 0; i < CONNECTIONS; i++)
		close(fds[i]);
	page = scrape(f->port);
	assert_true(sample(page, "rtplace_clients") == 1);
	free(page);
	status_ok(f->client);
}

static int bpf_stats_sysctl(void)
{
	FILE *fp = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int v = -1;

	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%d", &v), 1);
	fclose(fp);
	return v;
}

/* The live daemon with [metrics] bpf-stats: an RT spinner's priority shows
 * on its CPU and the tracker's own programs report runs; without
 * bpf-stats, no tracker statistics. */
static void test_live_bpf_stats(void **state)
{
	struct fixture *f;
	pid_t spinner;
	char *page;
	int lock, sysctl_before;

	if (geteuid() != 0) {
		if (getenv("RTPLACE_REQUIRE_ROOT_TESTS") && strcmp(getenv("RTPLACE_REQUIRE_ROOT_TESTS"), "1") == 0)
			fail_msg("the live daemon needs root (RTPLACE_REQUIRE_ROOT_TESTS=1)");
		skip();
	}
	sysctl_before = bpf_stats_sysctl();
	f = fixture_start(true, "bpf-stats = yes\n");
	*state = f;
	/* Statistics come from the daemon's own BPF_ENABLE_STATS descriptor;
	 * the administrator's sysctl stays as it was. */
	assert_int_equal(bpf_stats_sysctl(), sysctl_before);
	page = scrape(f->port);
	check_format(page);
	assert_true(sample(page, "rtplace_tracker_runs_total{program=\"tracker_switch\"}") >= 0);
	assert_true(sample(page, "rtplace_tracker_run_seconds_total{program=\"tracker_switch\"}") >= 0);
	assert_true(sample(page, "rtplace_tracker_events_lost_total") >= 0);
	assert_true(sample(page, "rtplace_cpu_online{cpu=\"0\"}") == 1);
	free(page);
	/* A FIFO spinner at 10 on CPU 1 shows as that CPU's priority; the
	 * tracker ran for it. */
	lock = test_lock_rt_cpu(TEST_RT_LOCK_WAIT_S);
	assert_true(lock >= 0);
	spinner = test_track_child(test_spawn_rt(1, 10, TEST_RT_BUSY, 10));
	assert_true(spinner > 0);
	for (int i = 0;; i++) {
		page = scrape(f->port);
		if (sample(page, "rtplace_cpu_rt_priority{cpu=\"1\"}") == 10)
			break;
		free(page);
		assert_true(i < 100);
		usleep(50 * 1000);
	}
	assert_true(sample(page, "rtplace_tracker_runs_total{program=\"tracker_switch\"}") > 0);
	free(page);
	test_kill_children();
	close(lock);
	teardown(state);

	f = fixture_start(true, NULL);
	*state = f;
	page = scrape(f->port);
	assert_false(has_family(page, "rtplace_tracker_runs_total"));
	assert_true(has_family(page, "rtplace_tracker_events_lost_total"));
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_counters, teardown),
		cmocka_unit_test_teardown(test_operator_series, teardown),
		cmocka_unit_test_teardown(test_refusals, teardown),
		cmocka_unit_test_teardown(test_stuck_scrapers, teardown),
		cmocka_unit_test_teardown(test_scrape_flood, teardown),
		cmocka_unit_test_teardown(test_descriptor_pressure, teardown),
		cmocka_unit_test_teardown(test_live_bpf_stats, teardown),
	};

	atexit(test_kill_children);
	if (!test_topology_path("1s-8c-16t", topo, sizeof(topo))) {
		fprintf(stderr, "no topology\n");
		return TEST_EXIT_SKIP;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
