/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * librtplace's local reads (DESIGN §19): the daemon's cpupri map and
 * placement snapshot mapped PROT_READ, and a non-claiming query answered
 * from them by the daemon's own placement code (common/placement.c), with
 * no syscall and no write to anything another thread reads.
 *
 * Each thread that queries gets its own on its first local query: the
 * topology and placement context built from the snapshot, its copy of the
 * claims, and a placement state, where an answer writes all it writes
 * (placement.h); sharing a state would put every reader's writes on the
 * same lines. An answer only reads the context, but each thread follows
 * the snapshot's shape on its own and rebuilds its context when the shape
 * changes, so the context stays the thread's too. They are kept on the
 * handle and freed with it.
 */
#ifndef RTPLACE_LOCAL_READ_H
#define RTPLACE_LOCAL_READ_H

#include <stddef.h>

#include "rtplace-proto.h"

struct rtplace_local;

/* Maps the two descriptors of a LOCAL reply (taking them: they are closed
 * on every return) and checks what they hold. 0, -EPROTONOSUPPORT for a
 * snapshot layout this library does not know, -EINVAL for a bad map or
 * snapshot, -ENOMEM, or mmap()'s error. */
int local_open(const struct rtplace_local_reply *lr, int map_fd, int snap_fd, struct rtplace_local **ret);
void local_close(struct rtplace_local *l);

/* The answer to q (no CLAIM), as the daemon builds its reply, in *ret
 * (the calling thread's, valid until its next query on l): 0; -EAGAIN when the snapshot was being published at every try (or the
 * thread's state cannot be made), -EINVAL when placement refuses the
 * request: the caller asks the socket then. */
int local_query(struct rtplace_local *l, const struct rtplace_query *q, const struct rtplace_query_reply **ret);

/* local_query() with every managed CPU allowed, without building (and
 * clearing) a whole request. */
int local_query_any(struct rtplace_local *l, int prio, unsigned count, unsigned flags, int node, int near_cpu,
		    const struct rtplace_query_reply **ret);

#endif
