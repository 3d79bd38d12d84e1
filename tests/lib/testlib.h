/*
 * Helpers shared by the tests: where the shared topologies live, and the
 * root/BPF gate. A test that needs root or BPF and cannot have it exits 77
 * (automake's SKIP); with RTPLACE_REQUIRE_ROOT_TESTS=1 in the environment
 * (CI) the same condition is a hard error (99), so a CI run that silently
 * skipped the real-kernel tests cannot pass.
 */
#ifndef RTPLACE_TESTLIB_H
#define RTPLACE_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TEST_EXIT_SKIP 77
#define TEST_EXIT_HARD_ERROR 99

/* Exits 77 (or 99 when root tests are required) with reason on stderr. */
void test_skip(const char *reason) __attribute__((noreturn));

/* Skips (see test_skip) unless running as root. */
void test_require_root(void);

/*
 * Every integration test of this project that runs RT threads runs them on
 * CPU 1, and make check runs tests in parallel: one test's FIFO spinner
 * would starve or outrank another's. Such a test holds this machine-wide
 * lock (flock on /run/lock/rtplace-rt-tests.lock) while it has RT threads;
 * the lock is released when the returned descriptor is closed or the
 * process exits. Waits up to timeout_s; returns the fd or -errno.
 */
int test_lock_rt_cpu(int timeout_s);

/*
 * Forks a SCHED_FIFO process at prio pinned to cpu: busy spinning, or
 * waking every millisecond (light, but queued behind anything higher on its
 * CPU at each wake-up). It ends itself after bound_s seconds (SIGALRM is
 * delivered on its own CPU even while it spins); callers still SIGKILL it
 * from a normal-priority process when done. Returns the pid or -errno.
 */
enum test_rt_mode {
	TEST_RT_BUSY,
	TEST_RT_TICK,
};
pid_t test_spawn_rt(int cpu, int prio, enum test_rt_mode mode, unsigned bound_s);

/* Path of a topology XML from ../shared/topologies into buf, or NULL when
 * the shared folder is absent. */
const char *test_topology_path(const char *name, char *buf, size_t len);

/* The names of the shared topologies, NULL-terminated. */
extern const char *const test_topology_names[];

#endif
