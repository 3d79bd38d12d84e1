/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the kernel's RT environment: the parsers and words
 * (common/kenv.c) on the files' real contents (Debian's 6.1 and 6.12, a
 * loaded sched_ext scheduler, padded and broken values), and the reader
 * (daemon/kernel-env.c) on fixture trees shaped like those kernels'. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "kenv.h"
#include "kernel-env.h"
#include "protocol.h"
#include "testlib.h"

static void test_parse_int(void **state)
{
	int64_t v = 7;

	/* cpu.rt_runtime_us and sched_rt_runtime_us as the kernel prints them. */
	assert_int_equal(kenv_parse_int("950000\n", -1, INT64_MAX, &v), 0);
	assert_int_equal(v, 950000);
	assert_int_equal(kenv_parse_int("-1\n", -1, INT64_MAX, &v), 0);
	assert_int_equal(v, -1);
	/* fair_server/cpuN/period on 6.12. */
	assert_int_equal(kenv_parse_int("1000000000\n", 1, INT64_MAX, &v), 0);
	assert_int_equal(v, 1000000000);
	/* Padded: blanks around, no newline. */
	assert_int_equal(kenv_parse_int("  50000000 \t\n", 0, INT64_MAX, &v), 0);
	assert_int_equal(v, 50000000);
	assert_int_equal(kenv_parse_int("9223372036854775807", 0, INT64_MAX, &v), 0);
	assert_int_equal(v, INT64_MAX);
	v = 7;
	assert_int_equal(kenv_parse_int("", 0, INT64_MAX, &v), -EBADMSG);
	assert_int_equal(kenv_parse_int("\n", 0, INT64_MAX, &v), -EBADMSG);
	assert_int_equal(kenv_parse_int("-", -1, INT64_MAX, &v), -EBADMSG);
	assert_int_equal(kenv_parse_int("12x\n", 0, INT64_MAX, &v), -EBADMSG);
	assert_int_equal(kenv_parse_int("1 2\n", 0, INT64_MAX, &v), -EBADMSG);
	assert_int_equal(kenv_parse_int("0x10", 0, INT64_MAX, &v), -EBADMSG);
	assert_int_equal(kenv_parse_int("+5", 0, INT64_MAX, &v), -EBADMSG);
	assert_int_equal(kenv_parse_int("9223372036854775808", 0, INT64_MAX, &v), -EBADMSG);
	assert_int_equal(kenv_parse_int("99999999999999999999999", 0, INT64_MAX, &v), -EBADMSG);
	assert_int_equal(kenv_parse_int("-2\n", -1, INT64_MAX, &v), -EBADMSG);
	assert_int_equal(kenv_parse_int("0\n", 1, INT64_MAX, &v), -EBADMSG);
	assert_int_equal(v, 7);
}

static void test_parse_boot(void **state)
{
	/* Debian 12's own command line: no such option. */
	assert_int_equal(kenv_parse_boot_rt_group_sched("BOOT_IMAGE=/boot/vmlinuz-6.1.0-57-amd64 root=UUID=1 ro quiet\n"),
			 -1);
	assert_int_equal(kenv_parse_boot_rt_group_sched("ro rt_group_sched=0 quiet\n"), 0);
	assert_int_equal(kenv_parse_boot_rt_group_sched("rt_group_sched=1"), 1);
	/* The last one counts; other values are ignored, as the kernel does. */
	assert_int_equal(kenv_parse_boot_rt_group_sched("rt_group_sched=0 rt_group_sched=1\n"), 1);
	assert_int_equal(kenv_parse_boot_rt_group_sched("rt_group_sched=1 rt_group_sched=2\n"), 1);
	assert_int_equal(kenv_parse_boot_rt_group_sched("rt_group_sched=yes\n"), -1);
	assert_int_equal(kenv_parse_boot_rt_group_sched("xrt_group_sched=0 rt_group_sched_x=0\n"), -1);
	/* After " -- " the words are init's. */
	assert_int_equal(kenv_parse_boot_rt_group_sched("quiet -- rt_group_sched=0\n"), -1);
	assert_int_equal(kenv_parse_boot_rt_group_sched(""), -1);
}

static void test_parse_scx(void **state)
{
	char name[KENV_NAME_MAX];

	assert_int_equal(kenv_parse_scx_state("disabled\n"), KENV_SCX_DISABLED);
	assert_int_equal(kenv_parse_scx_state("enabled\n"), KENV_SCX_ENABLED);
	assert_int_equal(kenv_parse_scx_state("enabling\n"), KENV_SCX_ENABLING);
	/* 6.12's first state of a load. */
	assert_int_equal(kenv_parse_scx_state("prepping\n"), KENV_SCX_ENABLING);
	assert_int_equal(kenv_parse_scx_state("disabling"), KENV_SCX_DISABLING);
	assert_int_equal(kenv_parse_scx_state(" enabled \n"), KENV_SCX_ENABLED);
	assert_int_equal(kenv_parse_scx_state("bypassing\n"), KENV_SCX_UNKNOWN);
	assert_int_equal(kenv_parse_scx_state(""), KENV_SCX_UNKNOWN);
	kenv_parse_name("lavd_1.0.11_g1234_x86_64_unknown_linux_gnu\n", name, sizeof(name));
	assert_string_equal(name, "lavd_1.0.11_g1234_x86_64_unknown_linux_gnu");
	kenv_parse_name("  simple \nsecond\n", name, sizeof(name));
	assert_string_equal(name, "simple");
	kenv_parse_name("abcdefgh", name, 4);
	assert_string_equal(name, "abc");
	assert_string_equal(kenv_scx_state_name(KENV_SCX_ENABLED), "enabled");
	assert_string_equal(kenv_scx_state_name(99), "unknown");
}

static void test_dl_summary(void **state)
{
	/* Debian's 6.12: 50 ms of every second on each CPU. */
	const struct kenv_dl_cpu same[] = { { 50000000, 1000000000 }, { 50000000, 1000000000 } };
	/* One CPU's server turned off (NI's fix for 6.12), one raised. */
	const struct kenv_dl_cpu mixed[] = { { 50000000, 1000000000 }, { 0, 1000000000 }, { 200000000, 500000000 } };
	struct kenv_dlserver s;
	char text[512];

	kenv_dl_summarize(same, 2, &s);
	assert_int_equal(s.state, KENV_DL_READ);
	assert_int_equal(s.ncpus, 2);
	assert_int_equal(s.share_max_ppm, 50000);
	assert_int_equal(s.zero, 0);
	assert_int_equal(kenv_dl_text("fair_server", &s, text, sizeof(text)), 0);
	assert_string_equal(text, "fair_server 50000000 ns of every 1000000000 ns on 2 CPUs "
				  "(at most 5.0% of a CPU kept from RT tasks)");
	kenv_dl_summarize(mixed, 3, &s);
	assert_int_equal(s.runtime_min_ns, 0);
	assert_int_equal(s.runtime_max_ns, 200000000);
	assert_int_equal(s.period_min_ns, 500000000);
	assert_int_equal(s.share_max_ppm, 400000);
	assert_int_equal(s.zero, 1);
	assert_int_equal(kenv_dl_text("fair_server", &s, text, sizeof(text)), 0);
	assert_string_equal(text, "fair_server 0-200000000 ns of every 500000000-1000000000 ns on 3 CPUs "
				  "(at most 40.0% of a CPU kept from RT tasks), off on 1");
	assert_int_equal(kenv_dl_text("fair_server", &s, text, 16), -ENOBUFS);
	s = (struct kenv_dlserver){ .state = KENV_DL_ABSENT };
	assert_int_equal(kenv_dl_text("ext_server", &s, text, sizeof(text)), 0);
	assert_string_equal(text, "ext_server none in this kernel");
	s = (struct kenv_dlserver){ .state = KENV_DL_UNREADABLE, .why = "no /sys/kernel/debug/sched" };
	assert_int_equal(kenv_dl_text("fair_server", &s, text, sizeof(text)), 0);
	assert_string_equal(text, "fair_server unknown (no /sys/kernel/debug/sched)");
}

static void test_words(void **state)
{
	struct kenv_rtgroup g = { .mode = KENV_RTG_V1, .boot = -1, .root_runtime_us = 950000,
				  .root_period_us = 1000000, .folders = 3, .budgetless = 2, .first = "/rtplace-test" };
	struct kenv_scx x = { .state = KENV_SCX_ENABLED, .switch_all = 1, .enable_seq = 2, .ops = "simple" };
	char text[512];

	assert_true(kenv_rtgroup_needs_budget(&g));
	assert_int_equal(kenv_rtgroup_text(&g, text, sizeof(text)), 0);
	assert_string_equal(text, "on (cgroup v1 cpu.rt_runtime_us): an RT task in a cpu cgroup other than the root "
				  "needs a budget there; root 950000 us of every 1000000 us; 2 of 3 folders below it "
				  "without one (first /rtplace-test)");
	g = (struct kenv_rtgroup){ .mode = KENV_RTG_NONE, .boot = 0 };
	assert_false(kenv_rtgroup_needs_budget(&g));
	assert_int_equal(kenv_rtgroup_text(&g, text, sizeof(text)), 0);
	assert_string_equal(text, "off (rt_group_sched=0): RT tasks need no cgroup budget");
	assert_int_equal(kenv_scx_text(&x, text, sizeof(text)), 0);
	assert_string_equal(text, "scheduler simple enabled, every normal task on it (2 loaded since boot)");
	x = (struct kenv_scx){ .state = KENV_SCX_DISABLED, .switch_all = -1, .enable_seq = -1 };
	assert_int_equal(kenv_scx_text(&x, text, sizeof(text)), 0);
	assert_string_equal(text, "no scheduler loaded");
	x.state = KENV_SCX_ABSENT;
	assert_int_equal(kenv_scx_text(&x, text, sizeof(text)), 0);
	assert_string_equal(text, "not in this kernel");
}

/* What the daemon sends is what the client reads back, and the codec
 * accepts it: every state of every part, and a first folder too long to
 * keep. */
static void test_wire(void **state)
{
	static const struct kenv cases[] = {
		{ .rtg = { .mode = KENV_RTG_V1, .boot = -1, .root_runtime_us = 950000, .root_period_us = 1000000,
			   .folders = 40, .budgetless = 39, .first = "/system.slice" },
		  .fair = { .state = KENV_DL_ABSENT },
		  .ext = { .state = KENV_DL_UNREADABLE, .why = "no /sys/kernel/debug/sched" },
		  .scx = { .state = KENV_SCX_ABSENT, .switch_all = -1, .enable_seq = -1 } },
		{ .rtg = { .mode = KENV_RTG_V2, .boot = 1, .root_runtime_us = -1, .root_period_us = 1000000,
			   .folders = 3, .budgetless = 2, .first = "" },
		  .fair = { .state = KENV_DL_READ, .ncpus = 8, .runtime_min_ns = 0, .runtime_max_ns = 50000000,
			    .period_min_ns = 1000000000, .period_max_ns = 1000000000, .share_max_ppm = 50000, .zero = 1 },
		  .ext = { .state = KENV_DL_ABSENT },
		  .scx = { .state = KENV_SCX_ENABLED, .switch_all = 0, .enable_seq = 4, .ops = "lavd" } },
		{ .rtg = { .mode = KENV_RTG_NONE, .boot = 0 },
		  .fair = { .state = KENV_DL_UNREADABLE },
		  .ext = { .state = KENV_DL_UNREADABLE, .why = "x" },
		  .scx = { .state = KENV_SCX_DISABLED, .switch_all = 0, .enable_seq = 0 } },
	};
	static struct proto_msg m;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kenv back;
		char a[1024], b[1024];

		assert_int_equal(proto_msg_init(&m, RTPLACE_MSG_KERNEL_REPLY, 1), 0);
		kenv_to_wire(&cases[i], &m.kernel_reply);
		assert_int_equal(proto_validate(&m, NULL, NULL), 0);
		kenv_from_wire(&m.kernel_reply, &back);
		kenv_rtgroup_text(&cases[i].rtg, a, sizeof(a));
		kenv_rtgroup_text(&back.rtg, b, sizeof(b));
		assert_string_equal(a, b);
		kenv_dl_text("fair_server", &cases[i].fair, a, sizeof(a));
		kenv_dl_text("fair_server", &back.fair, b, sizeof(b));
		/* An unreadable server without a why says so on the wire. */
		if (cases[i].fair.state != KENV_DL_UNREADABLE || cases[i].fair.why[0])
			assert_string_equal(a, b);
		else
			assert_string_equal(b, "fair_server unknown (unreadable)");
		kenv_scx_text(&cases[i].scx, a, sizeof(a));
		kenv_scx_text(&back.scx, b, sizeof(b));
		assert_string_equal(a, b);
	}
}

static void write_file(const char *rel, const char *text)
{
	assert_int_equal(test_write_fixture(test_fixture_root, rel, text), 0);
}

static struct kernel_env *read_fixture(uint32_t ncpus)
{
	char sys[PATH_MAX + 8], proc[PATH_MAX + 8];
	struct kernel_env *k;

	snprintf(sys, sizeof(sys), "%s/sys", test_fixture_root);
	snprintf(proc, sizeof(proc), "%s/proc", test_fixture_root);
	assert_int_equal(kernel_env_new(sys, proc, &k), 0);
	kernel_env_read(k, ncpus);
	return k;
}

/* Debian 12's 6.1 with systemd's cgroup v1 layout: RT group scheduling,
 * no deadline server, no sched_ext; debugfs mounted. */
static void test_read_61(void **state)
{
	struct kernel_env *k;
	const struct kenv *e;
	uint32_t n;

	write_file("proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz-6.1.0-57-amd64 ro quiet\n");
	write_file("sys/fs/cgroup/cpu,cpuacct/cpu.rt_runtime_us", "950000\n");
	write_file("sys/fs/cgroup/cpu,cpuacct/cpu.rt_period_us", "1000000\n");
	write_file("sys/fs/cgroup/cpu,cpuacct/system.slice/cpu.rt_runtime_us", "0\n");
	write_file("sys/fs/cgroup/cpu,cpuacct/system.slice/rtkit-daemon.service/cpu.rt_runtime_us", "0\n");
	write_file("sys/fs/cgroup/cpu,cpuacct/rt/cpu.rt_runtime_us", "100000\n");
	write_file("sys/fs/cgroup/cpu,cpuacct/a/cpu.rt_runtime_us", "0\n");
	write_file("sys/kernel/debug/sched/features", "GENTLE_FAIR_SLEEPERS\n");
	k = read_fixture(4);
	e = kernel_env_get(k);
	assert_int_equal(e->rtg.mode, KENV_RTG_V1);
	assert_int_equal(e->rtg.boot, -1);
	assert_int_equal(e->rtg.root_runtime_us, 950000);
	assert_int_equal(e->rtg.root_period_us, 1000000);
	assert_int_equal(e->rtg.folders, 4);
	assert_int_equal(e->rtg.budgetless, 3);
	/* The shallowest, then first by name. */
	assert_string_equal(e->rtg.first, "/a");
	assert_int_equal(e->fair.state, KENV_DL_ABSENT);
	assert_int_equal(e->ext.state, KENV_DL_ABSENT);
	assert_int_equal(e->scx.state, KENV_SCX_ABSENT);
	kernel_env_dl_cpus(k, false, &n);
	assert_int_equal(n, 0);
	kernel_env_free(k);
}

/* Debian's 6.12: cgroup v2 alone, the fair server on each CPU, sched_ext
 * loaded with a scheduler; debugfs not mounted, then mounted. */
static void test_read_612(void **state)
{
	struct kernel_env *k;
	const struct kenv *e;
	const struct kenv_dl_cpu *cpus;
	char dir[PATH_MAX + 32];
	uint32_t n;

	write_file("proc/cmdline", "ro rt_group_sched=0\n");
	write_file("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	write_file("sys/kernel/sched_ext/state", "enabled\n");
	write_file("sys/kernel/sched_ext/switch_all", "1\n");
	write_file("sys/kernel/sched_ext/enable_seq", "3\n");
	write_file("sys/kernel/sched_ext/root/ops", "simple\n");
	snprintf(dir, sizeof(dir), "%s/sys/kernel/debug", test_fixture_root);
	assert_int_equal(mkdir(dir, 0700), 0);
	k = read_fixture(2);
	e = kernel_env_get(k);
	assert_int_equal(e->rtg.mode, KENV_RTG_NONE);
	assert_int_equal(e->rtg.boot, 0);
	assert_int_equal(e->fair.state, KENV_DL_UNREADABLE);
	assert_non_null(strstr(e->fair.why, "debugfs is not mounted"));
	assert_int_equal(e->scx.state, KENV_SCX_ENABLED);
	assert_string_equal(e->scx.ops, "simple");
	assert_int_equal(e->scx.switch_all, 1);
	assert_int_equal(e->scx.enable_seq, 3);
	/* Mounted now: the next read finds it. */
	write_file("sys/kernel/debug/sched/fair_server/cpu0/runtime", "50000000\n");
	write_file("sys/kernel/debug/sched/fair_server/cpu0/period", "1000000000\n");
	write_file("sys/kernel/debug/sched/fair_server/cpu1/runtime", "0\n");
	write_file("sys/kernel/debug/sched/fair_server/cpu1/period", "1000000000\n");
	kernel_env_read(k, 2);
	assert_int_equal(e->fair.state, KENV_DL_READ);
	assert_int_equal(e->fair.ncpus, 2);
	assert_int_equal(e->fair.zero, 1);
	assert_int_equal(e->ext.state, KENV_DL_ABSENT);
	cpus = kernel_env_dl_cpus(k, false, &n);
	assert_int_equal(n, 2);
	assert_int_equal(cpus[0].runtime_ns, 50000000);
	assert_int_equal(cpus[1].runtime_ns, 0);
	/* Garbage in one file: unreadable, and why names it. */
	write_file("sys/kernel/debug/sched/fair_server/cpu1/period", "soon\n");
	kernel_env_read(k, 2);
	assert_int_equal(e->fair.state, KENV_DL_UNREADABLE);
	assert_non_null(strstr(e->fair.why, "cpu1/period is not a number"));
	/* The scheduler ejected: the refresh sees it; the cgroups and the
	 * servers wait for the next read. */
	write_file("sys/kernel/sched_ext/state", "disabled\n");
	write_file("sys/fs/cgroup/cpu/cpu.rt_runtime_us", "950000\n");
	write_file("sys/fs/cgroup/cpu/cpu.rt_period_us", "1000000\n");
	write_file("sys/kernel/debug/sched/fair_server/cpu1/period", "1000000000\n");
	kernel_env_refresh(k);
	assert_int_equal(e->scx.state, KENV_SCX_DISABLED);
	assert_string_equal(e->scx.ops, "");
	assert_int_equal(e->rtg.mode, KENV_RTG_NONE);
	assert_int_equal(e->fair.state, KENV_DL_UNREADABLE);
	kernel_env_read(k, 2);
	assert_int_equal(e->rtg.mode, KENV_RTG_V1);
	assert_int_equal(e->fair.state, KENV_DL_READ);
	kernel_env_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_int),
		cmocka_unit_test(test_parse_boot),
		cmocka_unit_test(test_parse_scx),
		cmocka_unit_test(test_dl_summary),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_wire),
		cmocka_unit_test_setup_teardown(test_read_61, test_fixture_setup, test_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_read_612, test_fixture_setup, test_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
