/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Why something failed, in words: the type in which the daemon and the
 * clients explain a failure. A function that explains its failures
 * returns 0 or -errno and, on failure, writes a reason into a
 * caller-supplied struct rtplace_reason; the caller logs it, prints it or
 * sends it in an ERROR reply. (A function that can succeed in part, such
 * as a claim granted at a lower level, notes what was cut the same way
 * and says so in its comment.) One size everywhere,
 * large enough for the longest (the BPF loader's, with libbpf's and the
 * verifier's first lines); the codec cuts a reason sent to a peer to the
 * wire's RTPLACE_REASON_MAX, so reasons meant for a reply are worded to
 * fit in it.
 */
#ifndef RTPLACE_REASON_H
#define RTPLACE_REASON_H

#define RTPLACE_REASON_TEXT_MAX 768

struct rtplace_reason {
	char text[RTPLACE_REASON_TEXT_MAX]; /* NUL-terminated; "" when none was given */
};

/* Writes the reason (printf format); a longer one is cut. */
void reason_set(struct rtplace_reason *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends to the reason already written, cut likewise. */
void reason_append(struct rtplace_reason *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
