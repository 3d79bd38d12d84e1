#include "config.h"

#include <errno.h>
#include <sched.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

const char *test_topology_path(const char *name, char *buf, size_t len)
{
	const char *top = getenv("top_srcdir");

	snprintf(buf, len, "%s/../shared/topologies/%s.xml", top ? top : ".", name);
	return access(buf, R_OK) == 0 ? buf : NULL;
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
