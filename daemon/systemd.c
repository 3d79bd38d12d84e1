/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <systemd/sd-daemon.h>

#include "clocks.h"
#include "log.h"
#include "systemd.h"

void systemd_ready(void)
{
	sd_notify(0, "READY=1\nSTATUS=Serving placement queries");
}

void systemd_reloading(void)
{
	/* MONOTONIC_USEC lets systemd order this RELOADING=1 against the
	 * READY=1 that ends the reload (Type=notify-reload needs it). */
	sd_notifyf(0, "RELOADING=1\nSTATUS=Reloading configuration\nMONOTONIC_USEC=%llu",
		   (unsigned long long)(clocks_monotonic_ns() / 1000));
}

void systemd_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=Stopping");
}

void systemd_status(const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	sd_notifyf(0, "STATUS=%s", text);
}

void systemd_watchdog(void)
{
	sd_notify(0, "WATCHDOG=1");
}

uint64_t systemd_watchdog_usec(void)
{
	uint64_t usec = 0;

	return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
}

int systemd_listen_fd(void)
{
	int n = sd_listen_fds(1);

	if (n < 0) {
		log_error("Failed to read socket activation variables: %s", strerror(-n));
		return n;
	}
	if (n == 0)
		return -ENOENT;
	if (n != 1 || sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_SEQPACKET, 1, NULL, 0) <= 0) {
		log_error("Socket activation passed %d descriptor(s); expected one listening AF_UNIX SOCK_SEQPACKET socket", n);
		return -EINVAL;
	}
	return SD_LISTEN_FDS_START;
}
