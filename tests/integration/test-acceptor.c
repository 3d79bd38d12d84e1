/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The acceptor thread (daemon/acceptor.c) on a real listening socket:
 * - it hands over each connection with the peer's credentials;
 * - acceptor_stop() returns while the thread waits for room in a full
 *   pipe, and closes every connection it admitted that nobody took: the
 *   process is left with exactly the descriptors it had;
 * - as root: a uid past its connection rate (a child turned nobody) is
 *   refused on the thread, with an ERROR that names the rate, and every
 *   connection is either handed over or refused.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "acceptor.h"
#include "testlib.h"

#define NOBODY 65534
/* More connections than the pipe holds (64 KiB of 16-byte records). */
#define FULL_PIPE_CONNECTIONS 4500
#define RATE_CONNECTIONS 1000

static char dir[64];
static struct sockaddr_un addr = { .sun_family = AF_UNIX };

static int listen_here(void)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	unlink(addr.sun_path);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(chmod(addr.sun_path, 0666), 0);
	assert_int_equal(listen(fd, SOMAXCONN), 0);
	return fd;
}

static int connect_here(void)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	return fd;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Takes one connection, waiting up to 5 s for it. */
static void take_one(struct acceptor *a, struct acceptor_conn *ret)
{
	struct pollfd p = { .fd = acceptor_fd(a), .events = POLLIN };

	while (acceptor_take(a, ret) < 0)
		assert_int_equal(poll(&p, 1, 5000), 1);
}

static void test_hands_over_with_credentials(void **state)
{
	int lfd = listen_here(), clients[3];
	struct acceptor *a = NULL;
	struct acceptor_conn c;

	assert_int_equal(acceptor_start(lfd, &a), 0);
	for (int i = 0; i < 3; i++)
		clients[i] = connect_here();
	for (int i = 0; i < 3; i++) {
		take_one(a, &c);
		assert_int_equal(c.cred.pid, getpid());
		assert_int_equal(c.cred.uid, getuid());
		assert_int_equal(c.cred.gid, getgid());
		/* Handed over as the server wants it: non-blocking. */
		assert_true(fcntl(c.fd, F_GETFL) & O_NONBLOCK);
		close(c.fd);
	}
	assert_int_equal(acceptor_take(a, &c), -EAGAIN);
	assert_int_equal(acceptor_refused(a), 0);
	acceptor_stop(a);
	for (int i = 0; i < 3; i++)
		close(clients[i]);
	close(lfd);
}

static void test_stop_with_full_pipe(void **state)
{
	static int clients[FULL_PIPE_CONNECTIONS];
	struct rlimit rl;
	struct acceptor *a = NULL;
	int lfd, before, queued = 0;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max < 3 * FULL_PIPE_CONNECTIONS)
		skip();
	rl.rlim_cur = rl.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	lfd = listen_here();
	before = open_fds();
	assert_int_equal(acceptor_start(lfd, &a), 0);
	for (int i = 0; i < FULL_PIPE_CONNECTIONS; i++)
		clients[i] = connect_here();
	/* Nobody takes: the thread fills the pipe, then waits for room. */
	for (int t = 0; t < 500 && queued < 4096 * (int)sizeof(struct acceptor_conn); t++) {
		usleep(10000);
		assert_int_equal(ioctl(acceptor_fd(a), FIONREAD, &queued), 0);
	}
	assert_true(queued >= 4096 * (int)sizeof(struct acceptor_conn));
	alarm(10); /* a stop that hangs fails the test */
	acceptor_stop(a);
	alarm(0);
	/* Every admitted connection closed: the clients and the listener,
	 * exactly, are what is left of the test's own. */
	assert_int_equal(open_fds(), before + FULL_PIPE_CONNECTIONS);
	for (int i = 0; i < FULL_PIPE_CONNECTIONS; i++)
		close(clients[i]);
	close(lfd);
}

/* The child: as nobody, connects RATE_CONNECTIONS times, closing each but
 * the last, which must bring the rate's ERROR. Exits 0 when it did. */
static void child_storm(void)
{
	char buf[512] = { 0 };
	int fd = -1;

	if (setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
		_exit(2);
	for (int i = 0; i < RATE_CONNECTIONS; i++) {
		if (fd >= 0)
			close(fd);
		fd = connect_here();
	}
	if (recv(fd, buf, sizeof(buf) - 1, 0) <= 0)
		_exit(3);
	for (size_t i = 0; i + 1 < sizeof(buf); i++)
		if (!buf[i])
			buf[i] = ' ';
	_exit(strstr(buf, "connects more than 256 times a second") ? 0 : 4);
}

static void test_refuses_over_rate(void **state)
{
	struct acceptor *a = NULL;
	struct acceptor_conn c;
	int lfd, status;
	uint64_t taken = 0;
	pid_t pid;

	if (geteuid() != 0)
		skip();
	lfd = listen_here();
	assert_int_equal(acceptor_start(lfd, &a), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child_storm();
	/* Each connection is either handed over or refused (within 10 s). */
	for (int waits = 0; taken + acceptor_refused(a) < RATE_CONNECTIONS;) {
		struct pollfd p = { .fd = acceptor_fd(a), .events = POLLIN };

		if (acceptor_take(a, &c) < 0) {
			assert_true(++waits < 1000);
			poll(&p, 1, 10);
			continue;
		}
		assert_int_equal(c.cred.uid, NOBODY);
		close(c.fd);
		taken++;
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(acceptor_refused(a) >= 1);
	assert_true(taken >= ACCEPTOR_CONNECT_BURST);
	print_message("%d connections as nobody: %" PRIu64 " handed over, %" PRIu64 " refused\n", RATE_CONNECTIONS,
		      taken, acceptor_refused(a));
	acceptor_stop(a);
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hands_over_with_credentials),
		cmocka_unit_test(test_stop_with_full_pipe),
		cmocka_unit_test(test_refuses_over_rate),
	};

	/* 0755: the child turned nobody connects in here. */
	if (test_tmpdir("rtplace-acceptor", 0755, dir, sizeof(dir)) < 0)
		return TEST_EXIT_HARD_ERROR;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/sock", dir);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
