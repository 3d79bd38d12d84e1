/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtplaced under hostile load (DESIGN §14), on a simulated machine: client
 * limits per user and from RLIMIT_NOFILE with room for root, the refusal
 * ERROR and how the clients print it, no busy loop at EMFILE, rate-limited
 * logging, a socket created whole in a folder only root can write, and
 * configuration files that are not regular files. The real daemon, its
 * real log (stderr into a file) and real clients.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include "testlib.h"

#define NOBODY 65534
/* The daemon's log.h limits: LOG_RATELIMIT_BURST lines per 5 s a call site. */
#define RATELIMIT_INTERVAL_MS 5000

static char topo[4096];
static uint32_t next_request = 1;

/* A daemon with its own configuration, its stderr in a log file. */
struct fixture {
	struct harness_daemon d;
	char dir[64]; /* configuration and log; searchable by all */
	char conf[128];
	char log[128];
};

static struct fixture *fixture_running;

static void fixture_remove(struct fixture *f)
{
	char path[192];
	const char *names[] = { "rtplaced.conf", "rtplaced.log", "sockdir/rtplaced.sock", "sockdir", NULL };

	if (!f->dir[0])
		return;
	for (int i = 0; names[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", f->dir, names[i]);
		if (unlink(path) < 0)
			rmdir(path);
	}
	rmdir(f->dir);
	f->dir[0] = '\0';
}

static void fixture_dir(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/rtplace-limits.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(chmod(f->dir, 0755), 0);
	snprintf(f->conf, sizeof(f->conf), "%s/rtplaced.conf", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/rtplaced.log", f->dir);
}

/*
 * Starts rtplaced on topo with conf_text as its configuration and its
 * stderr into f->log; with nofile > 0, RLIMIT_NOFILE (soft and hard) lowered to it.
 */
static void fixture_start(struct fixture *f, const char *conf_text, rlim_t nofile)
{
	const char *args[] = { "--topology", topo, NULL };
	char limit[48];
	/* Soft and hard: the daemon raises its soft limit to the hard one. */
	const char *wrapper[] = { "prlimit", limit, "--", NULL };
	int logfd, saved, r;

	fixture_dir(f);
	logfd = open(f->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(logfd >= 0);
	saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	assert_true(saved >= 0);
	snprintf(limit, sizeof(limit), "--nofile=%llu:%llu", (unsigned long long)nofile, (unsigned long long)nofile);
	fflush(stderr);
	dup2(logfd, STDERR_FILENO);
	r = nofile ? harness_start_wrapped(&f->d, wrapper, conf_text, args, NULL)
		   : harness_start_with_config(&f->d, conf_text, args, NULL);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(logfd);
	fixture_running = f;
	assert_int_equal(r, 0);
}

static void fixture_stop(struct fixture *f)
{
	int st = harness_stop(&f->d);

	fixture_remove(f);
	fixture_running = NULL;
	assert_int_equal(st, 0);
}

/* Also after a failed assertion: no daemon or child outlives its test. */
static int teardown(void **state)
{
	test_kill_children();
	if (fixture_running) {
		harness_stop(&fixture_running->d);
		fixture_remove(fixture_running);
		fixture_running = NULL;
	}
	return 0;
}

static void cleanup_at_exit(void)
{
	teardown(NULL);
}

static void require_root(void)
{
	const char *req = getenv("RTPLACE_REQUIRE_ROOT_TESTS");

	if (geteuid() == 0)
		return;
	if (req && strcmp(req, "1") == 0)
		fail_msg("needs root (RTPLACE_REQUIRE_ROOT_TESTS=1)");
	skip();
}

/* Lines of the log file that contain needle (all lines for ""). */
static unsigned log_count(const struct fixture *f, const char *needle)
{
	FILE *fp = fopen(f->log, "re");
	char line[1200];
	unsigned n = 0;

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		n += strstr(line, needle) != NULL;
	fclose(fp);
	return n;
}

/* Waits up to timeout_ms for a log line with needle. */
static bool log_wait(const struct fixture *f, const char *needle, int timeout_ms)
{
	for (int t = 0; t < timeout_ms; t += 20) {
		if (log_count(f, needle))
			return true;
		usleep(20000);
	}
	return false;
}

/* CPU the daemon uses over one second: a busy loop takes ~all of it. */
static unsigned long cpu_ticks_over_one_second(pid_t pid)
{
	long t0 = harness_cpu_ticks(pid), t1;

	assert_true(t0 >= 0);
	usleep(1000000);
	t1 = harness_cpu_ticks(pid);
	assert_true(t1 >= t0);
	return (unsigned long)(t1 - t0);
}

static int status_call(int fd)
{
	struct proto_msg req, rep;
	int r;

	assert_int_equal(proto_encode_status(&req, next_request++), 0);
	r = harness_call(fd, &req, &rep);
	if (r < 0)
		return r;
	if (rep.hdr.type == RTPLACE_MSG_ERROR)
		return rep.hdr.status;
	return rep.hdr.type == RTPLACE_MSG_STATUS_REPLY ? 0 : -EPROTO;
}

/* Root connects and asks for the status: 0 when answered (within 5 s). */
static int root_status(const char *socket)
{
	int fd = harness_connect(socket);
	int r;

	if (fd < 0)
		return fd;
	r = status_call(fd);
	close(fd);
	return r;
}

static void become_nobody(void)
{
	if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0)
		_exit(120);
}

struct hold_connections {
	const char *socket;
	int n;
};

static void nobody_holds_connections_child(void *ctx, void *verdict)
{
	const struct hold_connections *h = ctx;

	(void)verdict;
	become_nobody();
	for (int i = 0; i < h->n; i++)
		harness_connect_nonblock(h->socket);
}

/*
 * A child running as nobody that opens up to n connections (without
 * waiting for them to be accepted) and holds them until killed. Returns
 * its pid once it has made them all.
 */
static pid_t nobody_holds_connections(const char *socket, int n)
{
	struct hold_connections h = { socket, n };
	char done;
	pid_t pid = test_fork_holding(nobody_holds_connections_child, &h, &done, sizeof(done));

	assert_true(pid > 0);
	return pid;
}

static void kill_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	test_forget_child(pid);
}

/*
 * With few descriptors, a flood of connections from nobody is
 * refused below the limit (root is still answered), and root's own flood
 * up to EMFILE pauses accepting instead of spinning.
 */
static void test_descriptor_exhaustion(void **state)
{
	static struct fixture f;
	const rlim_t nofile = 64;
	long hz = sysconf(_SC_CLK_TCK);
	int root_fds[200], nroot = 0;
	unsigned long ticks;
	pid_t holder;

	require_root();
	fixture_start(&f, "[daemon]\nsocket-mode = 0666\n[limits]\nmax-clients = 1000\nmax-clients-per-user = 1000\n",
		      nofile);

	/* nobody asks for more connections than the daemon has descriptors. */
	holder = nobody_holds_connections(f.d.socket, 150);
	usleep(300000);
	ticks = cpu_ticks_over_one_second(f.d.pid);
	print_message("daemon CPU over 1 s with nobody's flood: %lu of %ld ticks\n", ticks, hz);
	assert_true(ticks * 4 < (unsigned long)hz);
	assert_true(harness_fd_count(f.d.pid) < (int)nofile);
	assert_int_equal(root_status(f.d.socket), 0);
	assert_true(log_count(&f, "daemon near its descriptor limit") >= 1);

	/* Root takes the last descriptors and more: EMFILE, and a full backlog. */
	while (nroot < (int)(sizeof(root_fds) / sizeof(root_fds[0]))) {
		int fd = harness_connect_nonblock(f.d.socket);

		if (fd < 0)
			break;
		root_fds[nroot++] = fd;
	}
	usleep(300000);
	ticks = cpu_ticks_over_one_second(f.d.pid);
	print_message("daemon CPU over 1 s at EMFILE: %lu of %ld ticks\n", ticks, hz);
	assert_true(ticks * 4 < (unsigned long)hz);
	assert_true(log_count(&f, "Failed to accept a client") >= 1);
	print_message("accept failures logged: %u, resumed: %u\n", log_count(&f, "Failed to accept a client"), log_count(&f, "Accepting clients again"));
	/* One line per pause episode, not one per attempt. */
	assert_true(log_count(&f, "Failed to accept a client") <= 2);

	/* Descriptors freed: accepting resumes on its own. */
	while (nroot)
		close(root_fds[--nroot]);
	kill_child(holder);
	assert_int_equal(root_status(f.d.socket), 0);
	assert_true(log_wait(&f, "Accepting clients again", 3000));
	assert_true(log_count(&f, "") < 60);
	fixture_stop(&f);
}

/*
 * Runs argv as root or, for a uid, as nobody (a client staged for other
 * users), its stderr and, with both, its stdout into out; bounded:
 * SIGALRM after 10 s. Returns its exit status.
 */
static int run_captured(uid_t uid, const char *const *argv, bool both, char *out, size_t len)
{
	int p[2], st;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (both)
			dup2(p[1], STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		if (uid)
			become_nobody();
		alarm(10);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	test_track_child(pid);
	close(p[1]);
	while (got + 1 < len && (n = read(p[0], out + got, len - got - 1)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	test_forget_child(pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct fill_share {
	const char *socket;
	int max;
};

static void nobody_fills_its_share_child(void *ctx, void *verdict_out)
{
	const struct fill_share *fs = ctx;
	const char *socket = fs->socket;
	struct proto_msg req, rep;
	char *verdict = verdict_out;
	int fd;

	become_nobody();
	for (int i = 0; i < fs->max && !*verdict; i++) {
		fd = harness_connect(socket);
		if (fd < 0 || proto_encode_status(&req, 1) < 0 || harness_call(fd, &req, &rep) < 0 ||
		    rep.hdr.type != RTPLACE_MSG_STATUS_REPLY)
			*verdict = 1;
	}
	/* One more: refused, with an ERROR that answers no request
	 * (request id 0), then closed. */
	if (!*verdict) {
		unsigned char buf[RTPLACE_MSG_MAX];
		struct proto_limits lim = { .ncpus = RTPLACE_MAX_CPUS, .nnodes = 1024, .accept = PROTO_ACCEPT_REPLIES };
		int fd2 = harness_connect(socket);
		struct pollfd pfd = { .fd = fd2, .events = POLLIN };
		ssize_t n;

		if (fd2 < 0 || poll(&pfd, 1, 5000) != 1)
			*verdict = 4;
		else if ((n = recv(fd2, buf, sizeof(buf), 0)) <= 0 || proto_decode(buf, (size_t)n, &lim, &rep, NULL) < 0)
			*verdict = 5;
		else if (rep.hdr.type != RTPLACE_MSG_ERROR || rep.hdr.request_id != 0 || rep.hdr.status != -EUSERS ||
			 !strstr(rep.error.reason, "max-clients-per-user"))
			*verdict = 6;
		else if (recv(fd2, buf, sizeof(buf), 0) != 0)
			*verdict = 7;
	}
}

/*
 * A child as nobody: opens max connections, each answered, then one
 * more, which must be refused with an ERROR naming the limit. Its verdict
 * (0 or a step number) in *ret_verdict; it holds the connections.
 */
static pid_t nobody_fills_its_share(const char *socket, int max, int *ret_verdict)
{
	struct fill_share fs = { socket, max };
	char v;
	pid_t pid = test_fork_holding(nobody_fills_its_share_child, &fs, &v, sizeof(v));

	assert_true(pid > 0);
	*ret_verdict = v;
	return pid;
}

/*
 * Nobody gets max-clients-per-user connections and no more; the
 * one refused is told why, rtplacectl prints it, rtplace-run says it
 * runs unclaimed; root is still served.
 */
static void test_clients_per_user(void **state)
{
	static struct fixture f;
	char ctl[4096], run[4096], out[4096];
	int verdict, st, lock;
	pid_t holder;

	require_root();
	fixture_start(&f, "[daemon]\nsocket-mode = 0666\n[limits]\nmax-clients-per-user = 4\n", 0);
	holder = nobody_fills_its_share(f.d.socket, 4, &verdict);
	assert_int_equal(verdict, 0);

	assert_int_equal(harness_stage_program("client/rtplacectl", ctl, sizeof(ctl)), 0);
	st = run_captured(NOBODY, (const char *const[]){ ctl, "--socket", f.d.socket, "status", NULL }, true, out,
			  sizeof(out));
	print_message("%s", out);
	assert_int_equal(st, 75);
	assert_non_null(strstr(out, "[limits] max-clients-per-user = 4 reached"));

	assert_int_equal(harness_stage_program("client/rtplace-run", run, sizeof(run)), 0);
	/* rtplace-run pins to its local choice: CPU 1 must not go offline
	 * under it (test-hotplug-live). */
	lock = test_lock_rt_cpu(TEST_RT_LOCK_WAIT_S);
	assert_true(lock >= 0);
	/* The fallback reads the daemon's configuration: the test's own. */
	st = run_captured(NOBODY,
			  (const char *const[]){ run, "--config", f.d.config, "--socket", f.d.socket, "--", "/bin/true", NULL },
			  true, out, sizeof(out));
	print_message("%s", out);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "refused the connection: [limits] max-clients-per-user = 4 reached"));
	assert_non_null(strstr(out, "without a claim"));
	st = run_captured(NOBODY,
			  (const char *const[]){ run, "--strict", "--config", f.d.config, "--socket", f.d.socket, "--",
						 "/bin/true", NULL },
			  true, out, sizeof(out));
	assert_int_equal(st, 75);
	close(lock);

	/* Root is not counted, and served at once. */
	st = run_captured(0, (const char *const[]){ ctl, "--socket", f.d.socket, "status", NULL }, true, out, sizeof(out));
	assert_int_equal(st, 0);
	/* Another user's share is untouched once nobody's connections close. */
	kill_child(holder);
	holder = nobody_fills_its_share(f.d.socket, 4, &verdict);
	assert_int_equal(verdict, 0);
	kill_child(holder);
	fixture_stop(&f);
}

/* What a child of uid made of its SUBSCRIBE requests. */
struct sub_verdict {
	int ok;       /* subscriptions granted */
	int status;   /* of the first refusal; 0 when none, 1 when setup failed */
	char reason[RTPLACE_REASON_MAX];
};

/* SUBSCRIBE on a new connection (kept open in *ret_fd): 0, or the ERROR's
 * status with its reason. */
static int subscribe_once(const char *socket, int *ret_fd, char *reason)
{
	struct rtplace_subscribe body = { 0 };
	struct proto_msg req, rep;
	int fd = harness_connect(socket), r;

	if (fd < 0)
		return 1;
	*ret_fd = fd;
	if (proto_encode_subscribe(&req, 7, &body) < 0 || harness_call(fd, &req, &rep) < 0)
		return 1;
	r = rep.hdr.type == RTPLACE_MSG_SUBSCRIBE_REPLY ? 0 : rep.hdr.type == RTPLACE_MSG_ERROR ? rep.hdr.status : 1;
	if (rep.hdr.type == RTPLACE_MSG_ERROR)
		snprintf(reason, RTPLACE_REASON_MAX, "%s", rep.error.reason);
	return r;
}

struct subscribes {
	const char *socket;
	uid_t uid;
	int n;
};

static void uid_subscribes_child(void *ctx, void *verdict)
{
	const struct subscribes *sb = ctx;
	struct sub_verdict *v = verdict;
	int fd;

	if (setgroups(0, NULL) < 0 || setresgid(sb->uid, sb->uid, sb->uid) < 0 ||
	    setresuid(sb->uid, sb->uid, sb->uid) < 0)
		v->status = 1;
	for (int i = 0; i < sb->n && !v->status; i++) {
		v->status = subscribe_once(sb->socket, &fd, v->reason);
		v->ok += !v->status;
	}
}

/*
 * A child running as uid that subscribes on up to n connections of its
 * own until one is refused, and holds what it got until killed. Returns
 * its pid once it has tried them all.
 */
static pid_t uid_subscribes(const char *socket, uid_t uid, int n, struct sub_verdict *ret)
{
	struct subscribes sb = { socket, uid, n };
	pid_t pid = test_fork_holding(uid_subscribes_child, &sb, ret, sizeof(*ret));

	assert_true(pid > 0);
	return pid;
}

/* uid_subscribes() that must get ok subscriptions, then be refused with
 * status and reason (status 0: none refused). */
static pid_t uid_subscribes_as(const char *socket, uid_t uid, int n, int ok, int status, const char *reason)
{
	struct sub_verdict v;
	pid_t pid = uid_subscribes(socket, uid, n, &v);

	assert_int_equal(v.ok, ok);
	assert_int_equal(v.status, status);
	if (status)
		assert_string_equal(v.reason, reason);
	return pid;
}

/*
 * Subscriptions have a share per user and room for root. Eight
 * users subscribe on every connection they may open (16 in all, what
 * max-clients lets them hold: before, the same number capped all
 * subscriptions, root's too, and refused root's `rtplacectl watch`); the
 * next user meets max-subscribers, a user its share meets
 * max-subscribers-per-user, each told the key; root still subscribes. A
 * reloaded share holds for the next subscriber.
 */
static void test_subscribers_per_user(void **state)
{
	static struct fixture f;
	pid_t holders[9];
	char reason[RTPLACE_REASON_MAX] = "";
	int fd = -1, r;

	require_root();
	fixture_start(&f,
		      "[daemon]\nsocket-mode = 0666\n[limits]\nmax-clients = 17\nmax-clients-per-user = 2\n"
		      "max-subscribers = 16\nmax-subscribers-per-user = 2\n",
		      0);
	for (int i = 0; i < 8; i++)
		holders[i] = uid_subscribes_as(f.d.socket, 60001 + (uid_t)i, 2, 2, 0, NULL);
	/* Root, on connections of its own (each keeps its subscription). */
	for (int i = 0; i < 4; i++) {
		r = subscribe_once(f.d.socket, &fd, reason);
		assert_int_equal(r, 0);
	}
	/* The ninth user may connect (max-clients = 17) but not subscribe. */
	holders[8] = uid_subscribes_as(f.d.socket, 60009, 1, 0, -EUSERS, "[limits] max-subscribers = 16 reached");
	for (int i = 0; i < 9; i++)
		kill_child(holders[i]);
	fixture_stop(&f);

	/* A user's share bounds it below its connections. */

	fixture_start(&f, "[daemon]\nsocket-mode = 0666\n[limits]\nmax-subscribers-per-user = 1\n", 0);
	holders[0] = uid_subscribes_as(f.d.socket, 60001, 2, 1, -EDQUOT, "[limits] max-subscribers-per-user = 1 reached");
	holders[1] = uid_subscribes_as(f.d.socket, 60002, 1, 1, 0, NULL);
	/* A reload's share holds from the next subscription on. */
	assert_int_equal(harness_reload(&f.d, "[daemon]\nsocket-mode = 0666\n[limits]\nmax-subscribers-per-user = 2\n"),
			 0);
	holders[2] = uid_subscribes_as(f.d.socket, 60003, 3, 2, -EDQUOT, "[limits] max-subscribers-per-user = 2 reached");
	for (int i = 0; i < 3; i++)
		kill_child(holders[i]);
	fixture_stop(&f);
}

/* Sends len garbage bytes on a new connection and closes it. */
static void send_garbage(const char *socket)
{
	static const unsigned char junk[8] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4 };
	int fd = harness_connect(socket);

	assert_true(fd >= 0);
	send(fd, junk, sizeof(junk), MSG_NOSIGNAL);
	close(fd);
}

/* Sum of K in "K messages like the next one were suppressed" lines, after
 * whatever prefix the log line has ("rtplaced: LEVEL: ", or "<N>" on the
 * journal). */
static unsigned long log_suppressed(const struct fixture *f)
{
	FILE *fp = fopen(f->log, "re");
	char line[1200];
	unsigned long sum = 0, k;

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		const char *m = strstr(line, " messages like the next one were suppressed");
		const char *p = m;

		while (p && p > line && p[-1] >= '0' && p[-1] <= '9')
			p--;
		if (p && p < m && sscanf(p, "%lu", &k) == 1)
			sum += k;
	}
	fclose(fp);
	return sum;
}

/*
 * 10,000 garbage packets leave a few dozen lines at most, and
 * every one of them is accounted for: printed, or counted as suppressed.
 */
static void test_garbage_log_rate_limited(void **state)
{
	static struct fixture f;
	unsigned printed = 0;

	fixture_start(&f, "", 0);
	for (int i = 0; i < 10000; i++)
		send_garbage(f.d.socket);
	assert_int_equal(root_status(f.d.socket), 0);
	/* One more once the last window has closed: it reports what that
	 * window dropped. */
	usleep((RATELIMIT_INTERVAL_MS + 200) * 1000);
	send_garbage(f.d.socket);
	assert_true(log_wait(&f, "messages like the next one were suppressed", 5000));
	for (int i = 0; i < 250; i++) {
		printed = log_count(&f, "sent garbage");
		if (printed + log_suppressed(&f) == 10001)
			break;
		usleep(20000);
	}
	print_message("garbage lines printed %u, suppressed %lu, log lines %u\n", printed, log_suppressed(&f),
		      log_count(&f, ""));
	assert_int_equal(printed + log_suppressed(&f), 10001);
	assert_true(log_count(&f, "") < 50);
	fixture_stop(&f);
}

/* Runs rtplaced --socket path (no READY expected); its exit status and
 * stderr in out (run_captured(): bounded). */
static int run_daemon_expecting_exit(const char *socket, char *out, size_t len)
{
	char daemon_path[4096];
	const char *argv[] = { daemon_path, "--socket", socket, "--topology", topo, NULL };

	harness_build_path("daemon/rtplaced", daemon_path, sizeof(daemon_path));
	return run_captured(0, argv, false, out, len);
}

/*
 * A socket folder that another user could write to is refused with
 * the fix named, before any socket is made there.
 */
static void test_socket_dir_refused(void **state)
{
	static struct fixture f;
	char sockdir[128], sock[160], out[4096];
	const mode_t modes[] = { 0777, 01777, 0775 };

	fixture_dir(&f);
	fixture_running = &f;
	snprintf(sockdir, sizeof(sockdir), "%s/sockdir", f.dir);
	snprintf(sock, sizeof(sock), "%s/rtplaced.sock", sockdir);
	assert_int_equal(mkdir(sockdir, 0755), 0);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct stat st;

		assert_int_equal(chmod(sockdir, modes[i]), 0);
		assert_int_not_equal(run_daemon_expecting_exit(sock, out, sizeof(out)), 0);
		print_message("mode %04o: %s", (unsigned)modes[i], out);
		assert_non_null(strstr(out, sockdir));
		/* A shared (sticky) folder such as /tmp is never to be closed:
		 * the fix is a folder of the daemon's own. */
		if (modes[i] & S_ISVTX) {
			assert_null(strstr(out, "chmod"));
			assert_non_null(strstr(out, "a folder of its own"));
		} else {
			assert_non_null(strstr(out, "chmod go-w"));
		}
		assert_int_equal(lstat(sock, &st), -1);
	}
	if (geteuid() == 0) {
		/* Root's daemon: a folder of another user is refused too. */
		assert_int_equal(chmod(sockdir, 0755), 0);
		assert_int_equal(chown(sockdir, NOBODY, NOBODY), 0);
		assert_int_not_equal(run_daemon_expecting_exit(sock, out, sizeof(out)), 0);
		assert_non_null(strstr(out, "belongs to uid 65534"));
	}
	fixture_remove(&f);
	fixture_running = NULL;
}

/*
 * The socket appears at its path whole (renamed into place, never
 * created there), with the configured mode and group.
 */
static void test_socket_made_in_place(void **state)
{
	static struct fixture f;
	char daemon_path[4096], sockdir[128], sock[160], conf[256];
	struct group *gr = getgrgid(NOBODY);
	bool created = false, moved = false;
	struct stat st;
	pid_t pid;
	int in;

	if (!gr)
		skip();
	fixture_dir(&f);
	fixture_running = &f;
	snprintf(sockdir, sizeof(sockdir), "%s/sockdir", f.dir);
	snprintf(sock, sizeof(sock), "%s/rtplaced.sock", sockdir);
	assert_int_equal(mkdir(sockdir, 0755), 0);
	/* Only root may give the socket a group it is not in. */
	snprintf(conf, sizeof(conf), "[daemon]\nsocket-mode = 0640\n%s%s\n", geteuid() == 0 ? "socket-group = " : "",
		 geteuid() == 0 ? gr->gr_name : "");
	assert_int_equal(harness_write_file(f.conf, conf), 0);
	in = inotify_init1(IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, sockdir, IN_CREATE | IN_MOVED_TO) >= 0);
	harness_build_path("daemon/rtplaced", daemon_path, sizeof(daemon_path));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(30);
		execl(daemon_path, daemon_path, "--socket", sock, "--config", f.conf, "--topology", topo, (char *)NULL);
		_exit(127);
	}
	test_track_child(pid);
	while (!moved) {
		char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
		struct pollfd p = { .fd = in, .events = POLLIN };
		ssize_t n;

		assert_int_equal(poll(&p, 1, 20000), 1);
		n = read(in, buf, sizeof(buf));
		assert_true(n > 0);
		for (char *e = buf; e < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)e;

			if (ev->len && strcmp(ev->name, "rtplaced.sock") == 0) {
				created |= (ev->mask & IN_CREATE) != 0;
				moved |= (ev->mask & IN_MOVED_TO) != 0;
			}
			e += sizeof(*ev) + ev->len;
		}
	}
	assert_false(created);
	assert_int_equal(lstat(sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0640);
	if (geteuid() == 0)
		assert_int_equal(st.st_gid, gr->gr_gid);
	close(in);
	kill_child(pid);
	unlink(sock);
	fixture_remove(&f);
	fixture_running = NULL;
}

/*
 * A FIFO swapped in for the configuration before SIGHUP: the
 * reload fails at once with the reason, the daemon keeps answering.
 */
static void test_reload_fifo_config(void **state)
{
	static struct fixture f;
	char fifo[160];

	fixture_start(&f, "[limits]\nmax-clients = 100\n", 0);
	snprintf(fifo, sizeof(fifo), "%s.new", f.d.config);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(rename(fifo, f.d.config), 0);
	kill(f.d.pid, SIGHUP);
	assert_int_equal(harness_notify_wait(&f.d, "RELOADING=1", 5000, NULL, 0), 0);
	assert_int_equal(harness_notify_wait(&f.d, "READY=1", 5000, NULL, 0), 0);
	assert_int_equal(root_status(f.d.socket), 0);
	assert_true(log_wait(&f, "rtplaced.conf is not a regular file (a FIFO)", 3000));
	assert_true(log_wait(&f, "keeping the running configuration", 3000));
	fixture_stop(&f);
}

/* Descriptors the daemon takes with one packet (SERVER_RECV_FDS_MAX). */
#define DAEMON_RECV_FDS 4

/* Sends len bytes of buf (0: an empty packet) with nfds copies of fd
 * (SCM_RIGHTS); test_send_fds()'s result. */
static ssize_t send_with_fds(int sock, const void *buf, size_t len, int fd, unsigned nfds)
{
	int fds[TEST_SEND_FDS_MAX];

	assert_true(nfds > 0 && nfds <= TEST_SEND_FDS_MAX);
	for (unsigned i = 0; i < nfds; i++)
		fds[i] = fd;
	return test_send_fds(sock, buf, len, fds, nfds);
}

/* A STATUS request with nfds copies of fd. */
static void send_status_with_fds(int sock, int fd, unsigned nfds)
{
	struct proto_msg req;

	assert_int_equal(proto_encode_status(&req, next_request++), 0);
	assert_int_equal(send_with_fds(sock, &req, req.hdr.length, fd, nfds), (ssize_t)req.hdr.length);
}

/* Waits (up to 5 s a packet) until the daemon closes sock, reading what it
 * sends first, and closes it. */
static void await_close(int sock)
{
	unsigned char buf[RTPLACE_MSG_MAX];
	struct pollfd p = { .fd = sock, .events = POLLIN };

	for (;;) {
		assert_int_equal(poll(&p, 1, 5000), 1);
		if (recv(sock, buf, sizeof(buf), 0) <= 0)
			break;
	}
	close(sock);
}

/* Waits (up to 5 s) for the daemon's answer on sock, a packet or its
 * close, and closes it. */
static void await_answer(int sock)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };

	assert_int_equal(poll(&p, 1, 5000), 1);
	close(sock);
}

/* The ERROR that answers request id on sock: its status, its reason into
 * reason. */
static int error_reply(int sock, uint32_t id, char *reason)
{
	struct proto_msg rep;

	assert_int_equal(harness_reply(sock, id, &rep), 0);
	assert_int_equal(rep.hdr.type, RTPLACE_MSG_ERROR);
	strcpy(reason, rep.error.reason);
	return rep.hdr.status;
}

/*
 * Every descriptor a client sends is closed, whatever the packet:
 * empty, oversized, with more descriptors than the daemon takes (cut by
 * the kernel, MSG_CTRUNC), a request that takes none, or a connection
 * closed before the daemon read it. Done hundreds of times over, the
 * daemon holds as many descriptors as before (an empty packet with
 * descriptors once was taken for a hang-up and its descriptors kept, until
 * the daemon had none left).
 */
static void test_received_descriptors_closed(void **state)
{
	static struct fixture f;
	static unsigned char big[RTPLACE_MSG_MAX + 1];
	const int rounds = 500;
	char reason[RTPLACE_REASON_MAX];
	int pipefd[2], keep, before, after, sock;

	fixture_start(&f, "[limits]\nmax-clients = 4096\nmax-clients-per-user = 4096\n", 0);
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	keep = harness_connect(f.d.socket);
	assert_int_equal(status_call(keep), 0);
	before = harness_fd_count(f.d.pid);
	for (int i = 0; i < rounds; i++) {
		/* Empty, then oversized: garbage, which drops the client. */
		sock = harness_connect(f.d.socket);
		assert_int_equal(send_with_fds(sock, NULL, 0, pipefd[0], 3), 0);
		await_close(sock);
		sock = harness_connect(f.d.socket);
		assert_int_equal(send_with_fds(sock, big, sizeof(big), pipefd[0], 3), (ssize_t)sizeof(big));
		await_close(sock);
		/* More than the daemon takes, and a request that takes none
		 * (test_truncated_descriptors_refused has the replies). */
		sock = harness_connect(f.d.socket);
		send_status_with_fds(sock, pipefd[0], DAEMON_RECV_FDS + 4);
		await_answer(sock);
		send_status_with_fds(keep, pipefd[0], 1);
		assert_int_equal(error_reply(keep, next_request - 1, reason), -EINVAL);
		/* Closed before the daemon reads: a request, an empty packet. */
		sock = harness_connect(f.d.socket);
		send_status_with_fds(sock, pipefd[0], 2);
		close(sock);
		sock = harness_connect(f.d.socket);
		assert_int_equal(send_with_fds(sock, NULL, 0, pipefd[0], 2), 0);
		close(sock);
	}
	assert_int_equal(status_call(keep), 0);
	/* The connections closed last may still be on their way out. */
	after = harness_wait_fd_count(f.d.pid, before, 5000);
	print_message("daemon descriptors: %d before, %d after %d rounds (%d sent)\n", before, after, rounds,
		      rounds * (3 + 3 + DAEMON_RECV_FDS + 1 + 2 + 2));
	assert_true(after <= before + 1);
	close(keep);
	close(pipefd[0]);
	close(pipefd[1]);
	fixture_stop(&f);
}

/*
 * A request whose descriptors the kernel cut (MSG_CTRUNC: more than the
 * daemon takes) is refused with an ERROR naming the limit, and its client
 * stays; an empty packet with descriptors is garbage (an ERROR, then the
 * close), not a hang-up.
 */
static void test_truncated_descriptors_refused(void **state)
{
	static struct fixture f;
	char reason[RTPLACE_REASON_MAX];
	int pipefd[2], sock;

	fixture_start(&f, "", 0);
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	sock = harness_connect(f.d.socket);
	send_status_with_fds(sock, pipefd[0], DAEMON_RECV_FDS + 1);
	assert_int_equal(error_reply(sock, next_request - 1, reason), -EINVAL);
	print_message("%s\n", reason);
	assert_non_null(strstr(reason, "more than 4 descriptors"));
	assert_int_equal(status_call(sock), 0);

	assert_int_equal(send_with_fds(sock, NULL, 0, pipefd[0], 1), 0);
	/* no header: the ERROR answers no request (id 0) */
	assert_int_equal(error_reply(sock, 0, reason), -EPROTO);
	assert_string_equal(reason, "short message");
	await_close(sock);
	close(pipefd[0]);
	close(pipefd[1]);
	fixture_stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_socket_dir_refused, teardown),
		cmocka_unit_test_teardown(test_socket_made_in_place, teardown),
		cmocka_unit_test_teardown(test_reload_fifo_config, teardown),
		cmocka_unit_test_teardown(test_clients_per_user, teardown),
		cmocka_unit_test_teardown(test_subscribers_per_user, teardown),
		cmocka_unit_test_teardown(test_descriptor_exhaustion, teardown),
		cmocka_unit_test_teardown(test_garbage_log_rate_limited, teardown),
		cmocka_unit_test_teardown(test_received_descriptors_closed, teardown),
		cmocka_unit_test_teardown(test_truncated_descriptors_refused, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	atexit(cleanup_at_exit);
	/* One test by name (a glob), to rerun what failed. */
	if (getenv("RTPLACE_TEST_FILTER"))
		cmocka_set_test_filter(getenv("RTPLACE_TEST_FILTER"));
	if (!test_topology_path("1s-8c-16t", topo, sizeof(topo))) {
		fprintf(stderr, "no topology\n");
		return TEST_EXIT_SKIP;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
