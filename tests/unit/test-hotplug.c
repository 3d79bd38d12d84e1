/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure parts of CPU hotplug (daemon/hotplug.h), no root needed: which
 * uevents are about CPUs, and the online list read through a sysfs root of
 * the test's own. The live path (real uevents, real hotplug) is tested by
 * tests/integration/test-hotplug-live.c.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "hotplug.h"

/* What the kernel sent when CPU 1 was taken offline (captured, MODALIAS
 * shortened): "ACTION@DEVPATH" then NUL-terminated variables. */
static const char uevent_offline[] = "offline@/devices/system/cpu/cpu1\0ACTION=offline\0"
				     "DEVPATH=/devices/system/cpu/cpu1\0SUBSYSTEM=cpu\0"
				     "MODALIAS=cpu:type:x86,ven0002fam0019mod0001:feature:,0000\0SEQNUM=824";
static const char uevent_cpuid[] = "remove@/devices/virtual/cpuid/cpu1\0ACTION=remove\0"
				   "DEVPATH=/devices/virtual/cpuid/cpu1\0SUBSYSTEM=cpuid\0MAJOR=203\0"
				   "MINOR=1\0DEVNAME=cpu/1/cpuid\0SEQNUM=823";

/* hotplug_uevent_parse() of a message given as a C string literal (the
 * array's size includes its last NUL). */
#define PARSE(msg, cpu) hotplug_uevent_parse((msg), sizeof(msg), (cpu))

static void test_uevent_kinds(void **state)
{
	static const char online[] = "online@/devices/system/cpu/cpu3\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu3\0"
				     "SUBSYSTEM=cpu\0SEQNUM=9";
	static const char add[] = "add@/devices/system/cpu/cpu17\0ACTION=add\0DEVPATH=/devices/system/cpu/cpu17\0"
				  "SUBSYSTEM=cpu";
	static const char removed[] = "remove@/x\0ACTION=remove\0DEVPATH=/devices/system/cpu/cpu1023\0SUBSYSTEM=cpu";
	static const char change[] = "change@/devices/system/cpu/cpu1\0ACTION=change\0SUBSYSTEM=cpu";
	static const char block[] = "offline@/devices/virtual/block/loop0\0ACTION=offline\0SUBSYSTEM=block";
	unsigned cpu;

	assert_int_equal(PARSE(uevent_offline, &cpu), HOTPLUG_OFFLINE);
	assert_int_equal(cpu, 1);
	assert_int_equal(PARSE(online, &cpu), HOTPLUG_ONLINE);
	assert_int_equal(cpu, 3);
	assert_int_equal(PARSE(add, &cpu), HOTPLUG_ONLINE);
	assert_int_equal(cpu, 17);
	assert_int_equal(PARSE(removed, &cpu), HOTPLUG_OFFLINE);
	assert_int_equal(cpu, 1023);
	/* Other subsystems and other actions are not hotplug. */
	assert_int_equal(PARSE(uevent_cpuid, &cpu), HOTPLUG_NONE);
	assert_int_equal(PARSE(change, &cpu), HOTPLUG_NONE);
	assert_int_equal(PARSE(block, &cpu), HOTPLUG_NONE);
	assert_int_equal(cpu, RTPLACE_MAX_CPUS);
}

/* A CPU event whose DEVPATH names no CPU still counts (the list is read
 * again), with no id. */
static void test_uevent_devpath(void **state)
{
	static const char none[] = "offline@/x\0ACTION=offline\0SUBSYSTEM=cpu";
	static const char other[] = "offline@/x\0ACTION=offline\0DEVPATH=/devices/system/cpu/cpufreq\0SUBSYSTEM=cpu";
	static const char junk[] = "offline@/x\0ACTION=offline\0DEVPATH=/devices/system/cpu/cpu1x\0SUBSYSTEM=cpu";
	static const char big[] = "offline@/x\0ACTION=offline\0DEVPATH=/devices/system/cpu/cpu8192\0SUBSYSTEM=cpu";
	static const char huge[] = "offline@/x\0ACTION=offline\0DEVPATH=/devices/system/cpu/cpu99999999999999999999\0"
				   "SUBSYSTEM=cpu";
	unsigned cpu = 0;

	assert_int_equal(PARSE(none, &cpu), HOTPLUG_OFFLINE);
	assert_int_equal(cpu, RTPLACE_MAX_CPUS);
	assert_int_equal(PARSE(other, &cpu), HOTPLUG_OFFLINE);
	assert_int_equal(cpu, RTPLACE_MAX_CPUS);
	assert_int_equal(PARSE(junk, &cpu), HOTPLUG_OFFLINE);
	assert_int_equal(cpu, RTPLACE_MAX_CPUS);
	assert_int_equal(PARSE(big, &cpu), HOTPLUG_OFFLINE);
	assert_int_equal(cpu, RTPLACE_MAX_CPUS);
	assert_int_equal(PARSE(huge, &cpu), HOTPLUG_OFFLINE);
	assert_int_equal(cpu, RTPLACE_MAX_CPUS);
}

static void set_of(const char *list, struct rtplace_cpumask *ret)
{
	cpuset_zero(ret);
	if (*list)
		assert_int_equal(cpuset_parse(list, ret), 0);
}

static void check_changes(const char *was, const char *now, const char *offlined, bool lost, const char *gone,
			  const char *came)
{
	struct rtplace_cpumask w, n, o, g, c, want;

	set_of(was, &w);
	set_of(now, &n);
	set_of(offlined, &o);
	hotplug_changes(&w, &n, &o, lost, &g, &c);
	set_of(gone, &want);
	assert_true(cpuset_equal(&g, &want));
	set_of(came, &want);
	assert_true(cpuset_equal(&c, &want));
}

static void test_changes(void **state)
{
	check_changes("0-3", "0-3", "", false, "", "");
	check_changes("0-3", "0,2-3", "1", false, "1", "");
	/* The list alone (uevents lost) still tells. */
	check_changes("0-3", "0,2-3", "", false, "1", "");
	check_changes("0,2-3", "0-3", "", false, "", "1");
	/* Offline and back before the list was read: it went, and came. */
	check_changes("0-3", "0-3", "1", false, "1", "1");
	/* Offline, back, and offline again. */
	check_changes("0-3", "0,2-3", "1", false, "1", "");
	/* A uevent for a CPU the list never had. */
	check_changes("0-1", "0-1", "7", false, "7", "");
	/* Uevents lost: any CPU may have bounced unseen, so every one that
	 * was online went, and every one online now came. */
	check_changes("0-3", "0-3", "", true, "0-3", "0-3");
	check_changes("0-3", "0,2-3", "", true, "0-3", "0,2-3");
	check_changes("0,2-3", "0-3", "", true, "0,2-3", "0-3");
	check_changes("0-3", "0-3", "7", true, "0-3,7", "0-3");
}

static void test_uevent_malformed(void **state)
{
	static const char prefix[] = "online@/x\0ACTION=online\0SUBSYSTEMS=cpu\0SUBSYSTEM_X=cpu";
	static const char header_only[] = "online@/devices/system/cpu/cpu1";
	static const char no_action[] = "online@/devices/system/cpu/cpu1\0SUBSYSTEM=cpu";
	static const char last[] = "online@/x\0ACTION=online\0SUBSYSTEM=cpu";

	unsigned cpu;

	/* A key is matched whole, never as a prefix of another. */
	assert_int_equal(PARSE(prefix, &cpu), HOTPLUG_NONE);
	assert_int_equal(PARSE(header_only, &cpu), HOTPLUG_NONE);
	assert_int_equal(PARSE(no_action, &cpu), HOTPLUG_NONE);
	assert_int_equal(hotplug_uevent_parse("", 0, &cpu), HOTPLUG_NONE);
	/* The header alone says "offline" but is not trusted for it. */
	assert_int_equal(hotplug_uevent_parse(uevent_offline, strlen(uevent_offline) + 1, &cpu), HOTPLUG_NONE);
	/* A value whose NUL lies past len is not read. */
	assert_int_equal(PARSE(last, &cpu), HOTPLUG_ONLINE);
	assert_int_equal(hotplug_uevent_parse(last, sizeof(last) - 1, &cpu), HOTPLUG_NONE);
	/* Every shorter prefix of a real message is handled without reading
	 * past it (the sanitizers check the reads). */
	for (size_t n = 0; n < sizeof(uevent_offline); n++)
		hotplug_uevent_parse(uevent_offline, n, &cpu);
}

struct sysfs {
	char root[64];
	char dir[128];
	char file[160];
};

static void sysfs_make(struct sysfs *s)
{
	char path[128];

	snprintf(s->root, sizeof(s->root), "/tmp/rtplace-hotplug-XXXXXX");
	assert_non_null(mkdtemp(s->root));
	snprintf(path, sizeof(path), "%s/devices", s->root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/devices/system", s->root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(s->dir, sizeof(s->dir), "%s/devices/system/cpu", s->root);
	assert_int_equal(mkdir(s->dir, 0755), 0);
	snprintf(s->file, sizeof(s->file), "%s/online", s->dir);
}

static void sysfs_write(const struct sysfs *s, const char *text)
{
	FILE *f = fopen(s->file, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void sysfs_remove(const struct sysfs *s)
{
	char path[128];

	unlink(s->file);
	rmdir(s->dir);
	snprintf(path, sizeof(path), "%s/devices/system", s->root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/devices", s->root);
	rmdir(path);
	rmdir(s->root);
}

static void test_read_online(void **state)
{
	struct sysfs s;
	struct rtplace_cpumask set, want;

	sysfs_make(&s);
	assert_int_equal(hotplug_read_online(s.root, &set), -ENOENT);
	sysfs_write(&s, "0-1,4\n");
	assert_int_equal(hotplug_read_online(s.root, &set), 0);
	assert_int_equal(cpuset_parse("0,1,4", &want), 0);
	assert_true(cpuset_equal(&set, &want));
	/* CPU 1 offline, as the kernel writes it. */
	sysfs_write(&s, "0,2-3\n");
	assert_int_equal(hotplug_read_online(s.root, &set), 0);
	assert_int_equal(cpuset_parse("0,2-3", &want), 0);
	assert_true(cpuset_equal(&set, &want));
	sysfs_write(&s, "");
	assert_int_equal(hotplug_read_online(s.root, &set), -EINVAL);
	sysfs_write(&s, "0-x\n");
	assert_int_equal(hotplug_read_online(s.root, &set), -EINVAL);
	sysfs_write(&s, "0-99999\n");
	assert_int_equal(hotplug_read_online(s.root, &set), -EINVAL);
	sysfs_remove(&s);
}

/* The uevent socket opens without privileges; with nothing pending the
 * list is not even read again. */
static void test_open_consume_idle(void **state)
{
	struct sysfs s;
	struct hotplug *h;
	struct rtplace_cpumask gone, came;
	bool lost;
	int r;

	sysfs_make(&s);
	assert_int_equal(hotplug_open(s.root, &h), -ENOENT);
	sysfs_write(&s, "0-3\n");
	r = hotplug_open(s.root, &h);
	if (r == -EAFNOSUPPORT || r == -EPERM || r == -EACCES) {
		sysfs_remove(&s);
		skip();
	}
	assert_int_equal(r, 0);
	assert_true(hotplug_fd(h) >= 0);
	sysfs_write(&s, "0\n");
	assert_int_equal(hotplug_consume(h, &gone, &came, &lost), 0);
	hotplug_close(h);
	hotplug_close(NULL);
	sysfs_remove(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uevent_kinds),
		cmocka_unit_test(test_uevent_malformed),
		cmocka_unit_test(test_uevent_devpath),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_read_online),
		cmocka_unit_test(test_open_consume_idle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
