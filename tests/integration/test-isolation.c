/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integration tests for the isolation edge (daemon/isolation.c).
 *
 * On fixture trees, as any user: interrupt affinities and the workqueue
 * mask written and put back byte for byte, claims stacked and released in
 * any order, a journal replayed after a child was killed with SIGKILL
 * between its writes and its release, a journal ahead of the files (the
 * daemon died between a journal line and its write) and one with a torn or
 * unreadable line, a journal others may write refused, the last
 * housekeeping CPU refused, and the partition refused, saying what is
 * missing, by trees without cgroup v2 or without its cpuset controller.
 *
 * On this machine, as root: every movable interrupt's affinity and the
 * workqueue mask really leave CPU 1 and come back byte for byte, after a
 * release and after a SIGKILL and a restore; CPU 1 and CPU 0 together are
 * refused (the last housekeeping CPU); on cgroup v1 a partition is refused
 * naming what is missing. The machine's values are saved first and written
 * back at exit and on fatal signals, whatever the test did; the RT tests'
 * lock keeps CPU 1 online (test-hotplug-live) meanwhile.
 */
#include "config.h"

#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf.h"
#include "irqbalance.h"
#include "isolation.h"
#include "procfs.h"
#include "sysfs.h"
#include "testlib.h"

/* --- files ------------------------------------------------------------------- */

static void test_put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* The file's bytes, in a static buffer of each of two slots. */
static const char *test_read_file(const char *path)
{
	static char bufs[2][8192];
	static int slot;
	char *buf = bufs[slot++ % 2];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(bufs[0]) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

static void test_mkdirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0700);
			*p = '/';
		}
	mkdir(buf, 0700);
}

/* --- fixture trees --------------------------------------------------------------- */

struct test_tree {
	char root[64];
	char proc[PATH_MAX];
	char sys[PATH_MAX];
	char cgroup[PATH_MAX];
	char journal[PATH_MAX];
};

static const char *const test_irqs[] = { "24", "25", "26" };
static const char *const test_originals[] = { "0-3\n", "2\n", "0-1\n" };
#define TEST_WQ_ORIGINAL "f\n"

static char *test_path(const struct test_tree *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *test_path(const struct test_tree *t, const char *fmt, ...)
{
	static char bufs[4][PATH_MAX];
	static int slot;
	char *buf = bufs[slot++ % 4];
	char rel[PATH_MAX - 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(buf, PATH_MAX, "%s/%s", t->root, rel);
	return buf;
}

/* A proc tree with three interrupts, a sys tree with the workqueue mask,
 * an empty cgroup root and a runtime folder for the journal. */
static int test_tree_setup(void **state)
{
	struct test_tree *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	snprintf(t->root, sizeof(t->root), "/tmp/rtplace-isolation-XXXXXX");
	assert_non_null(mkdtemp(t->root));
	snprintf(t->proc, sizeof(t->proc), "%s/proc", t->root);
	snprintf(t->sys, sizeof(t->sys), "%s/sys", t->root);
	snprintf(t->cgroup, sizeof(t->cgroup), "%s/cgroup", t->root);
	snprintf(t->journal, sizeof(t->journal), "%s/run/rtplaced.sock.isolation", t->root);
	for (size_t i = 0; i < 3; i++) {
		test_mkdirs(test_path(t, "proc/irq/%s", test_irqs[i]));
		test_put_file(test_path(t, "proc/irq/%s/smp_affinity_list", test_irqs[i]), test_originals[i]);
	}
	test_put_file(test_path(t, "proc/irq/default_smp_affinity"), "f\n");
	test_mkdirs(test_path(t, "sys/devices/virtual/workqueue"));
	test_put_file(test_path(t, "sys/devices/virtual/workqueue/cpumask"), TEST_WQ_ORIGINAL);
	test_mkdirs(t->cgroup);
	test_mkdirs(test_path(t, "run"));
	*state = t;
	return 0;
}

static int test_tree_teardown(void **state)
{
	struct test_tree *t = *state;
	int r = test_fixture_remove(t->root);

	free(t);
	return r;
}

/* Two nodes: CPUs 0-1 and 2-3. */
static const struct rtplace_cpumask *test_nodes(void)
{
	static struct rtplace_cpumask nodes[2];

	assert_int_equal(cpuset_parse("0-1", &nodes[0]), 0);
	assert_int_equal(cpuset_parse("2-3", &nodes[1]), 0);
	return nodes;
}

static struct isolation *test_new(const struct test_tree *t, bool partition, bool irqs, bool workqueues)
{
	struct isolation_opts opts = {
		.proc_root = t->proc, .sys_root = t->sys, .cgroup_root = t->cgroup, .journal = t->journal,
		.owner = geteuid(), .nodes = test_nodes(), .n_nodes = 2,
	};
	struct rtplace_reason reason = { "" };
	struct isolation *iso = NULL;
	struct config cfg;

	config_defaults(&cfg);
	cfg.isolation.partition = partition;
	cfg.isolation.irqs = irqs;
	cfg.isolation.workqueues = workqueues;
	if (isolation_new(&opts, &cfg, &iso, &reason) < 0)
		fail_msg("isolation_new: %s", reason.text);
	assert_string_equal(reason.text, "");
	return iso;
}

static void test_claim(struct isolation *iso, uint32_t id, const char *cpus)
{
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask set;

	assert_int_equal(cpuset_parse(cpus, &set), 0);
	if (isolation_claim(iso, id, getpid(), &set, &reason, NULL) < 0)
		fail_msg("isolation_claim(%u, %s): %s", id, cpus, reason.text);
	assert_string_equal(reason.text, "");
}

static void test_release(struct isolation *iso, uint32_t id)
{
	struct rtplace_reason reason = { "" };

	if (isolation_release(iso, id, &reason) < 0)
		fail_msg("isolation_release(%u): %s", id, reason.text);
	assert_string_equal(reason.text, "");
}

static void assert_irq(const struct test_tree *t, size_t i, const char *text)
{
	assert_string_equal(test_read_file(test_path(t, "proc/irq/%s/smp_affinity_list", test_irqs[i])), text);
}

static void assert_wq(const struct test_tree *t, const char *text)
{
	assert_string_equal(test_read_file(test_path(t, "sys/devices/virtual/workqueue/cpumask")), text);
}

/* Every file holds what it held at setup, and no journal is left. */
static void assert_originals(const struct test_tree *t)
{
	for (size_t i = 0; i < 3; i++)
		assert_irq(t, i, test_originals[i]);
	assert_wq(t, TEST_WQ_ORIGINAL);
	assert_int_equal(access(t->journal, F_OK), -1);
}

/* --- on fixture trees --------------------------------------------------------------- */

static void test_fake_claim_release(void **state)
{
	struct test_tree *t = *state;
	struct isolation *iso = test_new(t, false, true, true);
	struct rtplace_cpumask held;
	const char *journal;

	test_claim(iso, 7, "2");
	assert_irq(t, 0, "0-1,3\n");
	/* Only on CPU 2: the housekeeping CPU left on its node. */
	assert_irq(t, 1, "3\n");
	assert_irq(t, 2, "0-1\n");
	assert_wq(t, "b\n");
	isolation_cpus(iso, &held);
	assert_int_equal(cpuset_count(&held), 1);
	assert_true(cpuset_test(&held, 2));
	/* Interrupts in the order the folder lists them. */
	journal = test_read_file(t->journal);
	assert_int_equal(strncmp(journal, "rtplace-isolation 1\n", 20), 0);
	assert_non_null(strstr(journal, "\nirq 24 0-3\n"));
	assert_non_null(strstr(journal, "\nirq 25 2\n"));
	assert_non_null(strstr(journal, "\nworkqueues f\n"));
	assert_int_equal(strlen(journal), strlen("rtplace-isolation 1\nirq 24 0-3\nirq 25 2\nworkqueues f\n"));
	test_release(iso, 7);
	assert_originals(t);
	isolation_cpus(iso, &held);
	assert_true(cpuset_empty(&held));
	isolation_free(iso);
}

/* Planned from the originals: claims released in the other order than
 * made leave the masks as if only the live ones had been made. */
static void test_fake_stacked_claims(void **state)
{
	struct test_tree *t = *state;
	struct isolation *iso = test_new(t, false, true, true);
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask cpus;

	test_claim(iso, 1, "1");
	test_claim(iso, 2, "3");
	assert_irq(t, 0, "0,2\n");
	assert_irq(t, 2, "0\n");
	assert_wq(t, "5\n");
	assert_int_equal(cpuset_parse("3", &cpus), 0);
	assert_int_equal(isolation_claim(iso, 3, getpid(), &cpus, &reason, NULL), -EBUSY);
	assert_string_equal(reason.text, "CPU 3 is isolated for another claim already");
	assert_int_equal(isolation_claim(iso, 2, getpid(), &cpus, &reason, NULL), -EEXIST);
	test_release(iso, 1);
	assert_irq(t, 0, "0-2\n");
	assert_irq(t, 2, "0-1\n");
	assert_wq(t, "7\n");
	assert_int_equal(isolation_release(iso, 1, &reason), -ENOENT);
	assert_string_equal(reason.text, "claim 1 is not isolated");
	test_release(iso, 2);
	assert_originals(t);
	isolation_free(iso);
}

static void test_fake_last_housekeeping_cpu(void **state)
{
	struct test_tree *t = *state;
	struct isolation *iso = test_new(t, false, true, true);
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask cpus;

	test_claim(iso, 1, "2");
	assert_int_equal(cpuset_parse("3", &cpus), 0);
	assert_int_equal(isolation_claim(iso, 2, getpid(), &cpus, &reason, NULL), -EBUSY);
	assert_string_equal(reason.text, "isolating CPU 3 would leave node 1 (CPUs 2-3) without a housekeeping CPU");
	assert_irq(t, 0, "0-1,3\n");
	test_release(iso, 1);
	assert_originals(t);
	isolation_free(iso);
}

/* After hotplug: node 1 is CPU 2 alone, which is its last housekeeping
 * CPU; CPU 3 no longer counts. */
static void test_fake_set_host(void **state)
{
	struct test_tree *t = *state;
	struct isolation *iso = test_new(t, false, true, true);
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask nodes[2], other, cpus;

	assert_int_equal(cpuset_parse("0-1", &nodes[0]), 0);
	assert_int_equal(cpuset_parse("2", &nodes[1]), 0);
	cpuset_zero(&other);
	assert_int_equal(isolation_set_host(iso, nodes, 2, &other), 0);
	assert_int_equal(cpuset_parse("2", &cpus), 0);
	assert_int_equal(isolation_claim(iso, 1, getpid(), &cpus, &reason, NULL), -EBUSY);
	assert_string_equal(reason.text, "isolating CPU 2 would leave node 1 (CPU 2) without a housekeeping CPU");
	assert_int_equal(cpuset_parse("3", &cpus), 0);
	assert_int_equal(isolation_claim(iso, 1, getpid(), &cpus, &reason, NULL), -EINVAL);
	assert_string_equal(reason.text, "CPU 3 is not online");
	/* CPU 0 isolated by the host: CPU 1 is node 0's last. */
	assert_int_equal(cpuset_parse("0", &other), 0);
	assert_int_equal(isolation_set_host(iso, nodes, 2, &other), 0);
	assert_int_equal(cpuset_parse("1", &cpus), 0);
	assert_int_equal(isolation_claim(iso, 1, getpid(), &cpus, &reason, NULL), -EBUSY);
	assert_string_equal(reason.text, "isolating CPU 1 would leave node 0 (CPUs 0-1) without a housekeeping CPU");
	assert_originals(t);
	isolation_free(iso);
}

static void test_fake_off(void **state)
{
	struct test_tree *t = *state;
	struct isolation *iso = test_new(t, false, false, false);
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask cpus;

	assert_int_equal(cpuset_parse("2", &cpus), 0);
	assert_int_equal(isolation_claim(iso, 1, getpid(), &cpus, &reason, NULL), -EOPNOTSUPP);
	assert_string_equal(reason.text,
			    "isolation is off ([isolation] in rtplaced.conf turns on partition, irqs or workqueues)");
	assert_originals(t);
	isolation_free(iso);
}

/* A child isolates and is killed; the next one restores from the journal. */
static void test_fake_restore_after_kill(void **state)
{
	struct test_tree *t = *state;
	struct rtplace_reason reason = { "" };
	struct isolation *iso;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		iso = test_new(t, false, true, true);
		test_claim(iso, 5, "0,3");
		raise(SIGKILL);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_irq(t, 0, "1-2\n");
	assert_wq(t, "6\n");

	iso = test_new(t, false, true, true);
	assert_int_equal(isolation_restore(iso, &reason), 3);
	assert_string_equal(reason.text, "");
	assert_originals(t);
	/* Nothing left to restore. */
	assert_int_equal(isolation_restore(iso, &reason), 0);
	isolation_free(iso);
}

/*
 * The daemon died after journaling a value and before writing it (the
 * file unchanged), after writing one (the file changed), and while
 * journaling a third (a line without its newline): a restore writes back
 * the two originals and leaves the third alone.
 */
static void test_fake_journal_ahead_of_files(void **state)
{
	struct test_tree *t = *state;
	struct rtplace_reason reason = { "" };
	struct isolation *iso;

	test_put_file(test_path(t, "proc/irq/24/smp_affinity_list"), "0-1\n");
	test_put_file(t->journal, "rtplace-isolation 1\nirq 24 0-3\nworkqueues f\nirq 26 2-");
	iso = test_new(t, false, true, true);
	assert_int_equal(isolation_restore(iso, &reason), 2);
	assert_string_equal(reason.text, "");
	assert_originals(t);
	isolation_free(iso);
}

/* A value [isolation] no longer turns on is still restored, and lines
 * that cannot be read are named and left alone. */
static void test_fake_journal_unreadable_lines(void **state)
{
	struct test_tree *t = *state;
	struct rtplace_reason reason = { "" };
	struct isolation_opts opts = {
		.proc_root = t->proc, .sys_root = t->sys, .cgroup_root = t->cgroup, .journal = t->journal,
		.owner = geteuid(), .nodes = test_nodes(), .n_nodes = 2,
	};
	struct isolation *iso = NULL;
	struct config cfg;

	char expected[PATH_MAX + 64];

	test_put_file(test_path(t, "proc/irq/25/smp_affinity_list"), "3\n");
	test_put_file(t->journal, "rtplace-isolation 1\nirq 25 2\nirq x 1\nirq 24\nirq 26 0-1\nirq 26 0\n"
				    "partition 0 1 /\n");
	config_defaults(&cfg);
	assert_int_equal(isolation_new(&opts, &cfg, &iso, &reason), 0);
	snprintf(expected, sizeof(expected), "%s: unreadable line 3, 4, 6, 7 left alone", t->journal);
	assert_string_equal(reason.text, expected);
	assert_int_equal(isolation_restore(iso, &reason), 2);
	assert_string_equal(reason.text, "");
	assert_originals(t);
	isolation_free(iso);
}

/* A journal written under systemd: scopes, rtplace.slice's files (an
 * original that was empty included) and the slice rtplaced started,
 * compacted to what is still held; a put-back without its change, or a
 * file the slice has not, is unreadable. */
static void test_journal_scopes(void **state)
{
	static const char journal[] = "rtplace-isolation 1\nslice-unit started\nslice cpuset.cpus =\n"
				      "scope 7 42 /user.slice/user-1000.slice/user@1000.service/app.slice/a.service\n"
				      "slice cpuset.cpus.partition =member\nslice cpuset.cpus.exclusive =\nscope 8 43 /\n"
				      "slice cpuset.cpus.partition\nscope 8\nslice cpuset.mems =0\nscope 9\n"
				      "slice cpuset.cpus.partition\nslice cpuset.cpus.partition\n";
	static const char held[] = "rtplace-isolation 1\nslice-unit started\nslice cpuset.cpus =\n"
				   "scope 7 0 /user.slice/user-1000.slice/user@1000.service/app.slice/a.service\n";
	struct rtplace_reason reason;
	size_t len;
	char *text;

	(void)state;
	assert_int_equal(isolation_journal_compacted(journal, strlen(journal), &text, &len, &reason), 0);
	assert_string_equal(reason.text, ": unreadable line 6, 10, 11, 12, 13 left alone");
	assert_int_equal(len, strlen(held));
	assert_memory_equal(text, held, len);
	free(text);
}

static void test_fake_journal_untrusted(void **state)
{
	struct test_tree *t = *state;
	struct rtplace_reason reason = { "" };
	struct isolation_opts opts = {
		.proc_root = t->proc, .sys_root = t->sys, .cgroup_root = t->cgroup, .journal = t->journal,
		.owner = geteuid(), .nodes = test_nodes(), .n_nodes = 2,
	};
	struct isolation *iso = NULL;
	struct config cfg;

	config_defaults(&cfg);
	test_put_file(t->journal, "rtplace-isolation 1\nirq 24 0\n");
	assert_int_equal(chmod(t->journal, 0666), 0);
	assert_int_equal(isolation_new(&opts, &cfg, &iso, &reason), -EPERM);
	assert_string_equal(reason.text, "the file is writable by others (mode 0666)");
	assert_null(iso);
	assert_irq(t, 0, "0-3\n");
	assert_int_equal(unlink(t->journal), 0);
}

/* No cgroup v2 at the root, then v2 without cpuset: refused, naming what
 * is missing, with nothing else changed. */
static void test_fake_partition_refused(void **state)
{
	struct test_tree *t = *state;
	struct isolation *iso = test_new(t, true, true, true);
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask cpus;
	char expected[2 * PATH_MAX];

	assert_int_equal(cpuset_parse("2", &cpus), 0);
	assert_int_equal(isolation_claim(iso, 1, getpid(), &cpus, &reason, NULL), -EOPNOTSUPP);
	snprintf(expected, sizeof(expected),
		 "%s is no cgroup v2 hierarchy (it has no cgroup.controllers: cgroup v1, or a hybrid mount): an "
		 "isolated partition needs cgroup v2 with the cpuset controller",
		 t->cgroup);
	assert_string_equal(reason.text, expected);
	assert_originals(t);

	test_put_file(test_path(t, "cgroup/cgroup.controllers"), "cpu io memory pids\n");
	assert_int_equal(isolation_claim(iso, 1, getpid(), &cpus, &reason, NULL), -EOPNOTSUPP);
	snprintf(expected, sizeof(expected),
		 "the cgroup v2 hierarchy at %s has no cpuset controller (cgroup.controllers: \"cpu io memory pids\"): "
		 "it is bound to a cgroup v1 hierarchy or not in the kernel",
		 t->cgroup);
	assert_string_equal(reason.text, expected);
	assert_originals(t);
	isolation_free(iso);
}

/* --- on this machine ------------------------------------------------------------- */

/* The machine's values as found, written back at exit and on fatal signals. */
#define TEST_HOST_MAX_IRQS 1024
static struct {
	char path[TEST_HOST_MAX_IRQS + 1][128];
	char text[TEST_HOST_MAX_IRQS + 1][256];
	size_t n;
	bool saved;
} test_saved;

static char test_host_cgroup_root[64];

/* Partitions a failed test left: their processes to the root, removed. */
static void test_host_remove_partitions(void)
{
	char path[128], procs[256];

	if (!test_host_cgroup_root[0])
		return;
	for (unsigned id = 1; id <= 2; id++) {
		const char *pids;

		snprintf(path, sizeof(path), "%s/rtplace-claim-%u", test_host_cgroup_root, id);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
		pids = test_read_file(procs);
		if (!pids)
			continue;
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", test_host_cgroup_root);
		for (const char *p = pids; *p; p += strcspn(p, "\n"), p += *p == '\n') {
			char one[16];
			size_t len = strcspn(p, "\n");
			int fd = open(procs, O_WRONLY);

			snprintf(one, sizeof(one), "%.*s", (int)(len < 15 ? len : 15), p);
			if (fd >= 0) {
				if (write(fd, one, strlen(one)) < 0) {
					/* It exited. */
				}
				close(fd);
			}
		}
		rmdir(path);
	}
}

static void test_host_put_back(void)
{
	test_host_remove_partitions();
	for (size_t i = 0; i < test_saved.n; i++) {
		int fd = open(test_saved.path[i], O_WRONLY);

		if (fd < 0)
			continue;
		if (write(fd, test_saved.text[i], strlen(test_saved.text[i])) < 0) {
			/* A managed interrupt refuses; it was never changed. */
		}
		close(fd);
	}
}

static void test_host_signal(int sig)
{
	test_host_put_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void test_host_save_one(const char *path)
{
	const char *text = test_read_file(path);

	if (!text || test_saved.n > TEST_HOST_MAX_IRQS)
		return;
	snprintf(test_saved.path[test_saved.n], sizeof(test_saved.path[0]), "%s", path);
	snprintf(test_saved.text[test_saved.n], sizeof(test_saved.text[0]), "%s", text);
	test_saved.n++;
}

static void test_host_save(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGSEGV, SIGABRT, SIGBUS };
	char path[128];
	struct dirent *de;
	DIR *d;

	if (test_saved.saved)
		return;
	d = opendir(PROCFS_ROOT "/irq");
	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9') {
			snprintf(path, sizeof(path), PROCFS_ROOT "/irq/%.16s/smp_affinity_list", de->d_name);
			test_host_save_one(path);
		}
	closedir(d);
	test_host_save_one(SYSFS_ROOT "/devices/virtual/workqueue/cpumask");
	test_saved.saved = true;
	atexit(test_host_put_back);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], test_host_signal);
}

/* Every saved value holds its bytes as found. */
static void assert_host_originals(void)
{
	for (size_t i = 0; i < test_saved.n; i++) {
		const char *now = test_read_file(test_saved.path[i]);

		if (!now)
			continue;
		if (strcmp(now, test_saved.text[i]) != 0)
			fail_msg("%s holds %s, was %s", test_saved.path[i], now, test_saved.text[i]);
	}
}

static char test_host_dir[64], test_host_journal[PATH_MAX];
static struct rtplace_cpumask test_host_node;

/* Root, CPUs 0 and 1 online, the RT tests' lock (CPU 1 stays online),
 * the machine's values saved. Skips (cmocka) otherwise. */
static int test_host_setup(void **state)
{
	static int lock = -1;
	char online[64];

	(void)state;
	if (geteuid() != 0) {
		const char *req = getenv("RTPLACE_REQUIRE_ROOT_TESTS");

		if (req && strcmp(req, "1") == 0)
			fail_msg("the machine tests need root");
		return 0;
	}
	if (lock < 0)
		lock = test_lock_rt_cpu(TEST_RT_LOCK_WAIT_S);
	assert_true(lock >= 0);
	snprintf(online, sizeof(online), "%s", test_read_file(SYSFS_ROOT "/devices/system/cpu/online"));
	online[strcspn(online, "\n")] = '\0';
	assert_int_equal(cpuset_parse(online, &test_host_node), 0);
	/* A folder of root's alone, as the runtime directory is. */
	snprintf(test_host_dir, sizeof(test_host_dir), "/tmp/rtplace-isolation-host-XXXXXX");
	assert_non_null(mkdtemp(test_host_dir));
	snprintf(test_host_journal, sizeof(test_host_journal), "%s/rtplaced.sock.isolation", test_host_dir);
	test_host_save();
	return 0;
}

static int test_host_teardown(void **state)
{
	(void)state;
	return test_host_dir[0] ? test_fixture_remove(test_host_dir) : 0;
}

static struct isolation *test_host_new(bool partition, const char *cgroup_root)
{
	struct isolation_opts opts = {
		.proc_root = PROCFS_ROOT, .sys_root = SYSFS_ROOT, .cgroup_root = cgroup_root,
		.journal = test_host_journal, .owner = 0, .nodes = &test_host_node, .n_nodes = 1,
	};
	struct rtplace_reason reason = { "" };
	struct isolation *iso = NULL;
	struct config cfg;

	if (geteuid() != 0)
		skip();
	if (!cpuset_test(&test_host_node, 0) || !cpuset_test(&test_host_node, 1)) {
		print_message("CPUs 0 and 1 are not both online: skipped\n");
		skip();
	}
	config_defaults(&cfg);
	cfg.isolation.partition = partition;
	cfg.isolation.irqs = !partition;
	cfg.isolation.workqueues = !partition;
	if (isolation_new(&opts, &cfg, &iso, &reason) < 0)
		fail_msg("isolation_new: %s", reason.text);
	return iso;
}

/* Each movable interrupt now excludes CPU 1 (managed ones are named in
 * the claim's reason), and so does the workqueue mask. */
static void assert_host_isolated(const char *note)
{
	size_t moved = 0;

	for (size_t i = 0; i < test_saved.n; i++) {
		struct rtplace_cpumask s;
		const char *text = test_read_file(test_saved.path[i]);
		char now[256];

		assert_non_null(text);
		snprintf(now, sizeof(now), "%s", text);
		now[strcspn(now, "\n")] = '\0';
		if (strstr(test_saved.path[i], "workqueue")) {
			/* CPU 1 is the mask's bit 1, in its last group. */
			assert_int_equal(strtoul(strrchr(now, ',') ? strrchr(now, ',') + 1 : now, NULL, 16) & 2, 0);
			continue;
		}
		assert_int_equal(cpuset_parse(now, &s), 0);
		if (!cpuset_test(&s, 1)) {
			moved++;
			continue;
		}
		/* Still on CPU 1: only a managed interrupt the claim named. */
		if (!strstr(note, "managed IRQ"))
			fail_msg("%s still holds CPU 1 (%s), and no managed IRQ was reported", test_saved.path[i], now);
	}
	print_message("%zu interrupts moved off CPU 1; %s\n", moved, *note ? note : "none managed");
}

static void test_host_irqs_and_workqueues(void **state)
{
	struct isolation *iso = test_host_new(false, NULL);
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask cpus;

	(void)state;
	assert_int_equal(cpuset_parse("1", &cpus), 0);
	if (isolation_claim(iso, 1, getpid(), &cpus, &reason, NULL) < 0)
		fail_msg("isolation_claim: %s", reason.text);
	assert_host_isolated(reason.text);
	assert_int_equal(access(test_host_journal, F_OK), 0);
	if (isolation_release(iso, 1, &reason) < 0)
		fail_msg("isolation_release: %s", reason.text);
	assert_host_originals();
	assert_int_equal(access(test_host_journal, F_OK), -1);
	isolation_free(iso);
}

static void test_host_restore_after_kill(void **state)
{
	struct rtplace_reason reason = { "" };
	struct isolation *iso;
	int status, r;
	pid_t pid;

	(void)state;
	iso = test_host_new(false, NULL);
	isolation_free(iso);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rtplace_cpumask cpus;

		iso = test_host_new(false, NULL);
		cpuset_zero(&cpus);
		cpuset_set(&cpus, 1);
		if (isolation_claim(iso, 1, getpid(), &cpus, &reason, NULL) < 0)
			_exit(1);
		raise(SIGKILL);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_host_isolated("managed IRQ (not checked here)");
	iso = test_host_new(false, NULL);
	r = isolation_restore(iso, &reason);
	if (r < 0)
		fail_msg("isolation_restore: %s", reason.text);
	assert_true(r >= 1);
	assert_host_originals();
	assert_int_equal(access(test_host_journal, F_OK), -1);
	isolation_free(iso);
}

static void test_host_last_housekeeping_cpu(void **state)
{
	struct isolation *iso = test_host_new(false, NULL);
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask cpus = test_host_node;
	char list[CPUSET_LIST_MAX], expected[2 * CPUSET_LIST_MAX + 128];

	(void)state;
	cpuset_format(&test_host_node, list, sizeof(list));
	assert_int_equal(isolation_claim(iso, 1, getpid(), &cpus, &reason, NULL), -EBUSY);
	snprintf(expected, sizeof(expected), "isolating CPUs %s would leave node 0 (CPUs %s) without a housekeeping CPU",
		 list, list);
	assert_string_equal(reason.text, expected);
	assert_host_originals();
	isolation_free(iso);
}

/* On cgroup v1 (or a hybrid mount) the partition is refused, naming what
 * is missing; a machine with cgroup v2 belongs to the VM tests. */
static void test_host_partition_refused_on_v1(void **state)
{
	struct isolation *iso;
	struct rtplace_reason reason = { "" };
	struct rtplace_cpumask cpus;

	(void)state;
	if (access(SYSFS_ROOT "/fs/cgroup/cgroup.controllers", F_OK) == 0) {
		print_message("cgroup v2 at the root: no v1 refusal to check\n");
		skip();
	}
	iso = test_host_new(true, NULL);
	cpuset_zero(&cpus);
	cpuset_set(&cpus, 1);
	assert_int_equal(isolation_claim(iso, 1, getpid(), &cpus, &reason, NULL), -EOPNOTSUPP);
	assert_string_equal(reason.text,
			    "/sys/fs/cgroup is no cgroup v2 hierarchy (it has no cgroup.controllers: cgroup v1, or a "
			    "hybrid mount): an isolated partition needs cgroup v2 with the cpuset controller");
	isolation_free(iso);
	/* A hybrid machine's v2 hierarchy without the controller v1 has. */
	if (access(SYSFS_ROOT "/fs/cgroup/unified/cgroup.controllers", F_OK) == 0) {
		const char *controllers = test_read_file(SYSFS_ROOT "/fs/cgroup/unified/cgroup.controllers");

		if (controllers && !strstr(controllers, "cpuset")) {
			iso = test_host_new(true, SYSFS_ROOT "/fs/cgroup/unified");
			assert_int_equal(isolation_claim(iso, 1, getpid(), &cpus, &reason, NULL), -EOPNOTSUPP);
			assert_non_null(strstr(reason.text, "has no cpuset controller"));
			isolation_free(iso);
		}
	}
	assert_host_originals();
	assert_int_equal(access(test_host_journal, F_OK), -1);
}

/* A cgroup v2 hierarchy with the cpuset controller: the root, or a hybrid
 * machine's (the VM tests' guests mount one at unified/). NULL if none. */
static const char *test_host_v2_cpuset(void)
{
	static const char *const roots[] = { SYSFS_ROOT "/fs/cgroup", SYSFS_ROOT "/fs/cgroup/unified" };
	char path[128];

	for (size_t i = 0; i < 2; i++) {
		const char *text;

		snprintf(path, sizeof(path), "%s/cgroup.controllers", roots[i]);
		text = test_read_file(path);
		if (text && strstr(text, "cpuset"))
			return roots[i];
	}
	return NULL;
}

/* A process that sleeps until killed: the claimant. */
static pid_t test_host_sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	assert_int_equal(test_track_child(pid), pid);
	return pid;
}

static const char *test_host_cgroup_of(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), PROCFS_ROOT "/%d/cgroup", (int)pid);
	return test_read_file(path);
}

/* The partition is there, isolated, with the claimant in it alone on CPU 1. */
static void assert_host_partitioned(const char *cg, uint32_t id, pid_t pid)
{
	char path[PATH_MAX], line[64];
	cpu_set_t set;

	snprintf(path, sizeof(path), "%s/rtplace-claim-%u/cpuset.cpus.partition", cg, id);
	assert_string_equal(test_read_file(path), "isolated\n");
	snprintf(line, sizeof(line), "0::/rtplace-claim-%u\n", id);
	assert_non_null(strstr(test_host_cgroup_of(pid), line));
	assert_int_equal(sched_getaffinity(pid, sizeof(set), &set), 0);
	assert_int_equal(CPU_COUNT(&set), 1);
	assert_true(CPU_ISSET(1, &set));
}

/* The partition is gone, the claimant back where it was with the CPUs it
 * had, and the root's controllers as they were. */
static void assert_host_unpartitioned(const char *cg, uint32_t id, pid_t pid, const char *cgroup,
				      const char *subtree)
{
	char path[PATH_MAX];
	cpu_set_t set;

	snprintf(path, sizeof(path), "%s/rtplace-claim-%u", cg, id);
	assert_int_equal(access(path, F_OK), -1);
	assert_string_equal(test_host_cgroup_of(pid), cgroup);
	assert_int_equal(sched_getaffinity(pid, sizeof(set), &set), 0);
	assert_true(CPU_ISSET(0, &set) && CPU_ISSET(1, &set));
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", cg);
	assert_string_equal(test_read_file(path), subtree);
	assert_int_equal(access(test_host_journal, F_OK), -1);
}

static void test_host_partition(void **state)
{
	const char *cg = test_host_v2_cpuset();
	struct rtplace_reason reason = { "" };
	char cgroup[4096], subtree[512], path[PATH_MAX];
	struct rtplace_cpumask cpus;
	struct isolation *iso;
	pid_t pid;

	(void)state;
	if (!cg) {
		print_message("no cgroup v2 hierarchy with cpuset here: the VM tests make the partition\n");
		skip();
	}
	snprintf(test_host_cgroup_root, sizeof(test_host_cgroup_root), "%s", cg);
	iso = test_host_new(true, cg);
	pid = test_host_sleeper();
	snprintf(cgroup, sizeof(cgroup), "%s", test_host_cgroup_of(pid));
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", cg);
	snprintf(subtree, sizeof(subtree), "%s", test_read_file(path));
	cpuset_zero(&cpus);
	cpuset_set(&cpus, 1);
	if (isolation_claim(iso, 1, pid, &cpus, &reason, NULL) < 0)
		fail_msg("isolation_claim: %s", reason.text);
	assert_string_equal(reason.text, "");
	assert_host_partitioned(cg, 1, pid);
	if (isolation_release(iso, 1, &reason) < 0)
		fail_msg("isolation_release: %s", reason.text);
	assert_host_unpartitioned(cg, 1, pid, cgroup, subtree);
	isolation_free(iso);

	/* Made by a process killed before it released it: restored. */
	pid_t maker = fork();
	int status;

	assert_true(maker >= 0);
	if (maker == 0) {
		iso = test_host_new(true, cg);
		if (isolation_claim(iso, 2, pid, &cpus, &reason, NULL) < 0)
			_exit(1);
		raise(SIGKILL);
	}
	assert_int_equal(waitpid(maker, &status, 0), maker);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_host_partitioned(cg, 2, pid);
	iso = test_host_new(true, cg);
	if (isolation_restore(iso, &reason) < 1)
		fail_msg("isolation_restore: %s", reason.text);
	assert_host_unpartitioned(cg, 2, pid, cgroup, subtree);
	isolation_free(iso);
	test_kill_children();
}

/* irqbalance's lines in the journal: the last one held is kept; one
 * given back, or a give-back with none held, is not; and the BANNED mask
 * of irqbalance's setup reply. */
static void test_irqbalance_journal_and_setup(void **state)
{
	static const char journal[] = "rtplace-isolation 1\nirqbalance 812 NULL\nirqbalance\nirqbalance 812 2,5\n";
	static const char bad[] = "rtplace-isolation 1\nirqbalance\nirqbalance 0 1\nirqbalance 9 x\n";
	struct rtplace_reason reason;
	struct rtplace_cpumask m;
	char *text;
	size_t len;

	(void)state;
	assert_int_equal(isolation_journal_compacted(journal, strlen(journal), &text, &len, &reason), 0);
	assert_string_equal(reason.text, "");
	assert_int_equal(len, strlen("rtplace-isolation 1\nirqbalance 812 2,5\n"));
	assert_memory_equal(text, "rtplace-isolation 1\nirqbalance 812 2,5\n", len);
	free(text);
	assert_int_equal(isolation_journal_compacted(bad, strlen(bad), &text, &len, &reason), 0);
	assert_non_null(strstr(reason.text, "unreadable line 2, 3, 4"));
	assert_int_equal(len, strlen("rtplace-isolation 1\n"));
	free(text);

	assert_int_equal(irqbalance_parse_setup("SLEEP 10 BANNED 00000000,00000022", &m), 0);
	assert_int_equal(cpuset_count(&m), 2);
	assert_true(cpuset_test(&m, 1) && cpuset_test(&m, 5));
	assert_int_equal(irqbalance_parse_setup("SLEEP 10 IRQ 5 LOAD 0 DIFF 0 CLASS 0 BANNED 0", &m), 0);
	assert_true(cpuset_empty(&m));
	assert_int_equal(irqbalance_parse_setup("SLEEP 10 ", &m), -EBADMSG);
	assert_int_equal(irqbalance_parse_setup("BANNED zz", &m), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest fake[] = {
		cmocka_unit_test(test_irqbalance_journal_and_setup),
		cmocka_unit_test_setup_teardown(test_fake_claim_release, test_tree_setup, test_tree_teardown),
		cmocka_unit_test_setup_teardown(test_fake_stacked_claims, test_tree_setup, test_tree_teardown),
		cmocka_unit_test_setup_teardown(test_fake_last_housekeeping_cpu, test_tree_setup, test_tree_teardown),
		cmocka_unit_test_setup_teardown(test_fake_off, test_tree_setup, test_tree_teardown),
		cmocka_unit_test_setup_teardown(test_fake_set_host, test_tree_setup, test_tree_teardown),
		cmocka_unit_test_setup_teardown(test_fake_restore_after_kill, test_tree_setup, test_tree_teardown),
		cmocka_unit_test_setup_teardown(test_fake_journal_ahead_of_files, test_tree_setup, test_tree_teardown),
		cmocka_unit_test_setup_teardown(test_fake_journal_unreadable_lines, test_tree_setup, test_tree_teardown),
		cmocka_unit_test_setup_teardown(test_fake_journal_untrusted, test_tree_setup, test_tree_teardown),
		cmocka_unit_test(test_journal_scopes),
		cmocka_unit_test_setup_teardown(test_fake_partition_refused, test_tree_setup, test_tree_teardown),
	};
	const struct CMUnitTest host[] = {
		cmocka_unit_test(test_host_irqs_and_workqueues),
		cmocka_unit_test(test_host_restore_after_kill),
		cmocka_unit_test(test_host_last_housekeeping_cpu),
		cmocka_unit_test(test_host_partition_refused_on_v1),
		cmocka_unit_test(test_host_partition),
	};
	int failed = cmocka_run_group_tests_name("fixture trees", fake, NULL, NULL);

	failed += cmocka_run_group_tests_name("this machine", host, test_host_setup, test_host_teardown);
	return failed ? 1 : 0;
}
