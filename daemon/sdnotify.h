/*
 * The daemon's side of the systemd protocols: readiness/status/watchdog
 * notifications and socket activation. The only libsystemd user. Every
 * call is a no-op when the daemon was not started by systemd (no
 * NOTIFY_SOCKET / LISTEN_FDS), so rtplaced runs the same in a terminal.
 */
#ifndef RTPLACE_SDNOTIFY_H
#define RTPLACE_SDNOTIFY_H

#include <stdint.h>

void sdnotify_ready(void);
void sdnotify_reloading(void);
void sdnotify_stopping(void);
void sdnotify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sdnotify_watchdog(void);

/* The watchdog interval systemd asked for, in microseconds, 0 if none. */
uint64_t sdnotify_watchdog_usec(void);

/*
 * The listening socket passed by socket activation: returns its fd (>= 0),
 * -ENOENT when none was passed, -EINVAL when systemd passed something other
 * than exactly one AF_UNIX SOCK_SEQPACKET listening socket.
 */
int sdnotify_listen_fd(void);

#endif
