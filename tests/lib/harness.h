/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running the real rtplaced for integration tests: each test gets a private
 * folder with its own socket and its own NOTIFY_SOCKET, so it learns that
 * the daemon is ready the way systemd does (READY=1) and never races it.
 * The daemon is stopped (SIGTERM, then SIGKILL) and the folder removed at
 * exit, also when an assertion fails.
 */
#ifndef RTPLACE_HARNESS_H
#define RTPLACE_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "protocol.h"
#include "ring.h"

struct harness_daemon {
	pid_t pid;
	char dir[64];
	char socket[100];
	char notify[100];
	char config[100]; /* empty unless the test writes it: built-in defaults */
	int notify_fd;
	int exit_status;  /* after a start that failed with -ECHILD: as harness_stop() returns */
};

/* Path of a file in the build tree ($top_builddir/rel). */
const char *harness_build_path(const char *rel, char *buf, size_t len);

/*
 * Copies the build tree's program rel (with the libraries libtool runs it
 * with) where another user can run it, for tests that exec it after
 * dropping to that user: the build tree may lie under a 0700 folder (a
 * checkout in /root). Its path in ret_path; 0 or -errno. The folder is
 * removed at exit.
 */
int harness_stage_program(const char *rel, char *ret_path, size_t len);

/*
 * Every daemon gets --config d->config, a file in its private folder, before
 * the test's own arguments (a later --config wins), so that whatever is
 * installed at the default path never changes a test's result.
 *
 * Starts rtplaced with --socket in a private folder, the extra arguments
 * (NULL-terminated, may be NULL) and the extra environment ("K=V",
 * NULL-terminated, may be NULL); waits up to 20 s for READY=1. 0 or -errno
 * (-ETIMEDOUT, or -ECHILD when it exited first).
 */
int harness_start(struct harness_daemon *d, const char *const *args, const char *const *env);

/* harness_start() of a simulated machine: --topology the shared topology
 * name (test_topology_path()). 0 or -errno (-ENOENT without it). */
int harness_start_sim(struct harness_daemon *d, const char *topology);

/* harness_start() with config (NULL: none) as the text of d->config, the
 * daemon's own configuration file. */
int harness_start_with_config(struct harness_daemon *d, const char *config, const char *const *args,
			      const char *const *env);

/* harness_start_with_config() with the daemon's command line after wrapper
 * (NULL-terminated): a command that execs the rest of its arguments in its
 * own place, such as setpriv with a narrower capability bounding set. */
int harness_start_wrapped(struct harness_daemon *d, const char *const *wrapper, const char *config,
			  const char *const *args, const char *const *env);

/* Writes text as the whole content of path (created 0644). 0 or -errno. */
int harness_write_file(const char *path, const char *text);

/*
 * Starts rtplaced behind systemd-socket-activate listening on d->socket
 * (the daemon gets no --socket: it must take the inherited one), connects
 * (which makes it start), waits for READY=1 and returns the connection.
 */
int harness_start_activated(struct harness_daemon *d, const char *const *args, int *ret_fd);

/* Waits up to timeout_ms for a notification containing needle; copies it
 * into buf. 0 or -ETIMEDOUT. */
int harness_notify_wait(struct harness_daemon *d, const char *needle, int timeout_ms, char *buf, size_t len);

/* Writes text as d's whole configuration file and reloads it (SIGHUP);
 * returns once the daemon says READY=1 again. 0 or -errno. */
int harness_reload(struct harness_daemon *d, const char *text);

/* Stops it: SIGTERM, up to 5 s, then SIGKILL. Returns its exit status
 * (0..255), 128+signal when killed by one, or -errno. */
int harness_stop(struct harness_daemon *d);

/* Connects a SOCK_SEQPACKET client to path. fd or -errno. */
int harness_connect(const char *path);

/* harness_connect() without waiting for the daemon to accept: the socket
 * is non-blocking (a backlog that is full answers -EAGAIN). */
int harness_connect_nonblock(const char *path);

/* Sends req and waits (up to 5 s) for its reply, skipping events. 0 or -errno. */
int harness_call(int fd, const struct proto_msg *req, struct proto_msg *ret);

/* A FIFO query at prio for count CPUs anywhere, with flags; a claim holds
 * them for good (lease RTPLACE_LEASE_INFINITE). */
struct rtplace_query harness_fifo_query(int prio, unsigned count, uint32_t flags);

/* A FIFO QUERY at prio for count CPUs within allowed (a CPU list, NULL
 * for any), claiming them for good with claim, and its reply. 0, -errno,
 * or -EPROTO when the reply is not a QUERY_REPLY. */
int harness_query(int fd, uint32_t request_id, int prio, unsigned count, const char *allowed, bool claim,
		  struct proto_msg *ret);

/* harness_call() in two halves, for tests that send many requests before
 * reading any reply. harness_reply() skips events and other replies. */
int harness_send(int fd, const struct proto_msg *req);
int harness_reply(int fd, uint32_t request_id, struct proto_msg *ret);

/* The daemon's STATUS reply. 0, -EBADMSG for another reply, or -errno. */
int harness_status(int fd, struct rtplace_status_reply *ret);

/* The CPUS entry of cpu (a page that starts at it). 0, -EBADMSG for
 * another reply or a page without it, or -errno. */
int harness_cpu_info(int fd, uint32_t cpu, struct rtplace_cpu_info *ret);

/* A raw-protocol subscription: the ring mapped read-write, its doorbell. */
struct harness_sub {
	int doorbell;
	struct ring ring;
	void *mem;
	size_t len;
};

/* SUBSCRIBE on connection fd: receives the memfd and eventfd (SCM_RIGHTS)
 * and attaches to the ring. 0 or -errno (-EPROTO for a bad reply). */
int harness_subscribe(int fd, uint32_t request_id, struct harness_sub *ret);

/* harness_subscribe() in protocol version (the ring's version follows it). */
int harness_subscribe_version(int fd, uint32_t request_id, uint16_t version, struct harness_sub *ret);

/* Sends LOCAL in protocol version and reads its reply into ret: 2 with the
 * two descriptors it carried in fds (the map's, the snapshot's), 0 for a
 * reply without them (an ERROR), or -errno. */
int harness_local(int fd, uint16_t version, struct proto_msg *ret, int fds[2]);

/* Waits up to timeout_ms for a record of type about tid, draining all it
 * finds. 0 with the record, or -ETIMEDOUT. */
int harness_wait_record(struct harness_sub *s, uint8_t type, int32_t tid, int timeout_ms,
			struct rtplace_record *ret);

void harness_unsubscribe(struct harness_sub *s);

/* Descriptors and resident kB of a process, from /proc (daemon/procfs.c's
 * readers). */
int harness_fd_count(pid_t pid);
/* Waits up to timeout_ms until pid has want descriptors; returns the last
 * count. A reply can come before the daemon's work of the same loop turn
 * ends (a descriptor closed at the end of the turn), so a count read right
 * after a reply may be one high. */
int harness_wait_fd_count(pid_t pid, int want, int timeout_ms);
long harness_rss_kb(pid_t pid);
/* Its user and system CPU time together, in clock ticks; -errno. */
long harness_cpu_ticks(pid_t pid);

/*
 * The group fixture of a test against a live daemon (cmocka's setup and
 * teardown call these): harness_live_start() takes the RT-test lock and
 * keeps this process on CPU 0, away from the spinners (test_rt_begin()),
 * then starts d with config (NULL: none); harness_live_stop(), a
 * teardown as it stands, kills every tracked child (test_kill_children())
 * before it stops that daemon. 0 or -errno.
 */
int harness_live_start(struct harness_daemon *d, const char *config);
int harness_live_stop(void **state);

/* A loopback TCP port nobody listens on now (the kernel's choice for port
 * 0), into *ret. 0 or -errno. */
int harness_free_port(uint16_t *ret);

#endif
