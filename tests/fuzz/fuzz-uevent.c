/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness for the uevent parser (daemon/hotplug.h): any bytes,
 * as one netlink message. The kernel is the only sender the daemon
 * believes, but any local process can multicast to the group, and the
 * parser reads every message before its sender is known to matter. Beyond
 * "no read past len" (the sanitizers' job: the parser gets exactly the
 * input, with no NUL after it) it checks the contract: a CPU id only with
 * an action, never one past RTPLACE_MAX_CPUS, and the same answer twice.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "hotplug.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *msg = (const char *)data;
	unsigned cpu, again;
	enum hotplug_action a = hotplug_uevent_parse(msg, size, &cpu);

	if (a != HOTPLUG_NONE && a != HOTPLUG_ONLINE && a != HOTPLUG_OFFLINE)
		abort();
	if (cpu > RTPLACE_MAX_CPUS || (a == HOTPLUG_NONE && cpu != RTPLACE_MAX_CPUS))
		abort();
	if (hotplug_uevent_parse(msg, size, &again) != a || again != cpu)
		abort();
	return 0;
}
