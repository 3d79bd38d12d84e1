/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Why something failed, in words: the one type in which the daemon, the
 * codec and the clients explain a failure, of the one size the wire
 * carries (RTPLACE_REASON_MAX), so a reason reaches the log, the ERROR
 * reply and the client whole. A function that explains its failures
 * returns 0 or -errno and, on failure, writes a reason into a
 * caller-supplied struct rtplace_reason; the caller logs it, prints it or
 * sends it. (A function that can succeed in part, such as a claim granted
 * at a lower level, notes what was cut the same way and says so in its
 * comment.) A text longer than a reason, such as a BPF verifier's log, is
 * logged where it arises; the reason names the failure. Only peers of
 * protocol versions 1 and 2 get a reason cut (to RTPLACE_REASON_V2_MAX).
 * LGPL: librtplace is built from it.
 */
#ifndef RTPLACE_REASON_H
#define RTPLACE_REASON_H

#include "rtplace-proto.h"

struct rtplace_reason {
	char text[RTPLACE_REASON_MAX]; /* NUL-terminated; "" when none was given */
};

/* Writes the reason (printf format); a longer one is cut. */
void reason_set(struct rtplace_reason *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends to the reason already written, cut likewise. */
void reason_append(struct rtplace_reason *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
