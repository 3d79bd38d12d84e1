/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <time.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

const char *const test_topology_names[] = {
	"1s-8c-16t", "2s-240c-480t", "2s-snc2-192c-384t", "4n-64c-nosmt", "epyc-2s-16ccx-256t", NULL,
};

void test_skip(const char *reason)
{
	const char *req = getenv("RTPLACE_REQUIRE_ROOT_TESTS");

	if (req && strcmp(req, "1") == 0) {
		fprintf(stderr, "FATAL: required test cannot run: %s\n", reason);
		exit(TEST_EXIT_HARD_ERROR);
	}
	fprintf(stderr, "SKIP: %s\n", reason);
	exit(TEST_EXIT_SKIP);
}

void test_require_root(void)
{
	if (geteuid() != 0)
		test_skip("needs root (BPF, RT scheduling)");
}

/* The hwloc synthetic description each shared topology was generated from
 * (its SyntheticDescription info): without ../shared, the same XML is
 * generated from it, so the tests run on the same shapes anywhere. */
static const char *test_topology_synthetic(const char *name)
{
	static const struct {
		const char *name;
		const char *synthetic;
	} shapes[] = {
		{ "1s-8c-16t", "pack:1 [numa] l3:1 core:8 pu:2(indexes=core:pack)" },
		{ "2s-240c-480t", "pack:2 [numa] l3:1 core:120 pu:2(indexes=core:pack)" },
		{ "2s-snc2-192c-384t", "pack:2 group:2 [numa] l3:1 core:48 pu:2(indexes=core:group:pack)" },
		{ "4n-64c-nosmt", "pack:2 group:2 [numa] l3:2 core:8 pu:1" },
		{ "epyc-2s-16ccx-256t", "pack:2 [numa] l3:8 core:8 pu:2" },
		/* past 1,024 CPUs, up to RTPLACE_MAX_CPUS */
		{ "synth-2s-8n-1024t", "pack:2 numa:4 l3:4 core:16 pu:2" },
		{ "synth-8s-16n-4096t", "pack:8 numa:2 l3:4 core:32 pu:2" },
		{ "synth-16s-32n-8192t", "pack:16 numa:2 l3:4 core:32 pu:2" },
	};

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (strcmp(shapes[i].name, name) == 0)
			return shapes[i].synthetic;
	return NULL;
}

/* Writes the XML of a synthetic topology to path with lstopo (hwloc),
 * through a temporary file so that tests running in parallel never read a
 * half-written one. 0 or -1. */
static int test_topology_generate(const char *synthetic, const char *path)
{
	char tmp[4200];
	pid_t pid;
	int st;

	snprintf(tmp, sizeof(tmp), "%s.%d.xml", path, (int)getpid());
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execlp("lstopo-no-graphics", "lstopo-no-graphics", "-i", synthetic, "--of", "xml", "-f", tmp,
		       (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

const char *test_topology_path(const char *name, char *buf, size_t len)
{
	const char *top = getenv("top_srcdir");
	const char *build = getenv("top_builddir");
	const char *synthetic = test_topology_synthetic(name);

	snprintf(buf, len, "%s/../shared/topologies/%s.xml", top ? top : ".", name);
	if (access(buf, R_OK) == 0)
		return buf;
	if (!synthetic)
		return NULL;
	snprintf(buf, len, "%s/tests/topology-%s.xml", build ? build : ".", name);
	if (access(buf, R_OK) == 0 || test_topology_generate(synthetic, buf) == 0)
		return buf;
	return NULL;
}

int test_lock_rt_cpu(int timeout_s)
{
	const char *path = access("/run/lock", W_OK) == 0 ? "/run/lock/rtplace-rt-tests.lock"
							   : "/tmp/rtplace-rt-tests.lock";
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	for (int i = 0; i < timeout_s * 10; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		usleep(100 * 1000);
	}
	close(fd);
	return -ETIMEDOUT;
}

int test_rt_begin(void)
{
	cpu_set_t set;
	int fd;

	test_require_root();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		test_skip("needs 2 CPUs: one for RT threads, one kept free");
	fd = test_lock_rt_cpu(TEST_RT_LOCK_WAIT_S);
	if (fd < 0)
		return fd;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

pid_t test_spawn_rt(int cpu, int prio, enum test_rt_mode mode, unsigned bound_s)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct sched_param sp = { .sched_priority = prio };
		struct timespec ms = { .tv_nsec = 1000000 };
		cpu_set_t set;

		alarm(bound_s);
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0 || sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			_exit(1);
		for (;;) {
			if (mode == TEST_RT_TICK)
				nanosleep(&ms, NULL);
			__asm__ volatile("" ::: "memory");
		}
	}
	return pid;
}

static pid_t test_children[16];

pid_t test_track_child(pid_t pid)
{
	if (pid <= 0)
		return pid;
	for (size_t i = 0; i < sizeof(test_children) / sizeof(test_children[0]); i++) {
		if (test_children[i] == 0) {
			test_children[i] = pid;
			return pid;
		}
	}
	return -ENOSPC;
}

void test_kill_children(void)
{
	for (size_t i = 0; i < sizeof(test_children) / sizeof(test_children[0]); i++) {
		if (test_children[i] > 0) {
			kill(test_children[i], SIGKILL);
			waitpid(test_children[i], NULL, 0);
			test_children[i] = 0;
		}
	}
}

void test_forget_child(pid_t pid)
{
	for (size_t i = 0; i < sizeof(test_children) / sizeof(test_children[0]); i++)
		if (test_children[i] == pid)
			test_children[i] = 0;
}

int test_write_bytes(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len)
		r = -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int test_write_file(const char *path, const char *text)
{
	return test_write_bytes(path, text, strlen(text));
}

int test_fixture_remove(const char *root)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void *test_sleeper(void *arg)
{
	int *tid = arg;

	__atomic_store_n(tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

pid_t test_start_sleeper(pthread_t *th)
{
	int tid = 0, r = pthread_create(th, NULL, test_sleeper, &tid);

	if (r != 0)
		return -r;
	while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	return tid;
}

void test_stop_sleeper(pthread_t th)
{
	pthread_cancel(th);
	pthread_join(th, NULL);
}

ssize_t test_send_fds(int sock, const void *buf, size_t len, const int *fds, unsigned n)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * TEST_SEND_FDS_MAX)];
	} control = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			     .msg_controllen = CMSG_SPACE(sizeof(int) * n) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	ssize_t r = -EINVAL;

	if (n > 0 && n <= TEST_SEND_FDS_MAX) {
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
		r = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (r < 0)
			r = -errno;
	}
	return r;
}

char test_fixture_root[PATH_MAX];

int test_fixture_setup(void **state)
{
	(void)state;
	snprintf(test_fixture_root, sizeof(test_fixture_root), "/tmp/rtplace-%s.XXXXXX", program_invocation_short_name);
	return mkdtemp(test_fixture_root) ? 0 : -1;
}

int test_fixture_teardown(void **state)
{
	(void)state;
	return test_fixture_remove(test_fixture_root);
}

static const char *test_tmpdir_path;

static void test_tmpdir_remove(void)
{
	if (test_fixture_remove(test_tmpdir_path) < 0)
		fprintf(stderr, "cannot remove %s\n", test_tmpdir_path);
}

int test_tmpdir(const char *name, mode_t mode, char *dir, size_t len)
{
	int made = 0, r = 0;

	if (test_tmpdir_path)
		r = -EBUSY;
	else if (snprintf(dir, len, "/tmp/%s.XXXXXX", name) >= (int)len)
		r = -ENAMETOOLONG;
	else if (!mkdtemp(dir))
		r = -errno;
	else if ((made = 1) && chmod(dir, mode) < 0)
		r = -errno;
	else if (atexit(test_tmpdir_remove) != 0)
		r = -ENOMEM;
	if (r == 0)
		test_tmpdir_path = dir;
	else if (made)
		test_fixture_remove(dir);
	return r;
}

int test_write_fixture(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX];
	int r = 0;

	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (char *slash = path + strlen(root) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			r = -errno;
		*slash = '/';
		if (r < 0)
			return r;
	}
	return test_write_file(path, text);
}

uint64_t test_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

uint32_t test_rand_below(uint64_t *state, uint32_t n)
{
	return (uint32_t)(test_rand(state) % n);
}

void test_random_query(uint64_t *rng, uint32_t ncpus, uint32_t nnodes, struct rtplace_query *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->prio = (uint8_t)(1 + test_rand_below(rng, 99));
	ret->count = (uint16_t)(test_rand_below(rng, 4) ? 1 : 1 + test_rand_below(rng, 16));
	ret->node = test_rand_below(rng, 4) == 0 ? (int32_t)test_rand_below(rng, nnodes) : -1;
	ret->near_cpu = test_rand_below(rng, 3) == 0 ? (int32_t)test_rand_below(rng, ncpus) : -1;
	ret->flags = test_rand_below(rng, 8) == 0 ? RTPLACE_QUERY_F_NORMAL : 0;
	if (test_rand_below(rng, 3) == 0) {
		uint32_t lo = test_rand_below(rng, ncpus), len = 1 + test_rand_below(rng, ncpus - lo);

		for (uint32_t c = lo; c < lo + len; c++)
			if (test_rand_below(rng, 4))
				rtplace_cpumask_set(&ret->allowed, c);
	}
}

const char *test_fd_writable_by(int fd, size_t size)
{
	char byte = 0;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int r;

	if (p != MAP_FAILED) {
		munmap(p, size);
		return "mmap PROT_WRITE";
	}
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return "mmap PROT_READ";
	r = mprotect(p, size, PROT_READ | PROT_WRITE);
	munmap(p, size);
	if (r == 0)
		return "mprotect";
	if (write(fd, &byte, 1) >= 0)
		return "write";
	if (pwrite(fd, &byte, 1, 0) >= 0)
		return "pwrite";
	return ftruncate(fd, 0) == 0 ? "ftruncate" : NULL;
}

pid_t test_fork_holding(void (*child)(void *ctx, void *verdict), void *ctx, void *verdict, size_t size)
{
	int p[2], r;
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		memset(verdict, 0, size);
		child(ctx, verdict);
		if (write(p[1], verdict, size) != (ssize_t)size)
			_exit(121);
		for (;;)
			pause();
	}
	test_track_child(pid);
	close(p[1]);
	n = read(p[0], verdict, size);
	close(p[0]);
	return n == (ssize_t)size ? pid : -EPIPE;
}
