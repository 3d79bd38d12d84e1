/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's side of the systemd protocols: readiness/status/watchdog
 * notifications and socket activation. The only libsystemd user. Every
 * call is a no-op when the daemon was not started by systemd (no
 * NOTIFY_SOCKET / LISTEN_FDS), so rtplaced runs the same in a terminal.
 */
#ifndef RTPLACE_SYSTEMD_H
#define RTPLACE_SYSTEMD_H

#include <stdint.h>

void systemd_ready(void);
void systemd_reloading(void);
void systemd_stopping(void);
void systemd_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void systemd_watchdog(void);

/* The watchdog interval systemd asked for, in microseconds, 0 if none. */
uint64_t systemd_watchdog_usec(void);

/*
 * The listening socket passed by socket activation: returns its fd (>= 0),
 * -ENOENT when none was passed, -EINVAL when systemd passed something other
 * than exactly one AF_UNIX SOCK_SEQPACKET listening socket.
 */
int systemd_listen_fd(void);

#endif
