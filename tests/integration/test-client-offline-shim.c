/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * LD_PRELOAD for test-client-run-offline.sh: the first sched_setaffinity()
 * to a set holding CPU $RTPLACE_TEST_OFFLINE_CPU takes that CPU offline
 * just before it, as a hotplug between rtplaced's answer and rtplace-run's
 * pin would. Only the process it is preloaded into: the command that
 * process runs does not inherit it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int offline_cpu = -1;

__attribute__((constructor)) static void shim_init(void)
{
	const char *cpu = getenv("RTPLACE_TEST_OFFLINE_CPU");

	if (cpu)
		offline_cpu = atoi(cpu);
	unsetenv("LD_PRELOAD");
	unsetenv("RTPLACE_TEST_OFFLINE_CPU");
}

int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	int (*real)(pid_t, size_t, const cpu_set_t *) =
		(int (*)(pid_t, size_t, const cpu_set_t *))dlsym(RTLD_NEXT, "sched_setaffinity");

	if (offline_cpu >= 0 && CPU_ISSET_S((size_t)offline_cpu, size, set)) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", offline_cpu);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1)
			perror(path);
		if (fd >= 0)
			close(fd);
		offline_cpu = -1;
	}
	return real(pid, size, set);
}
