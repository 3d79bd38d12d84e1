/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unsigned decimal numbers in the daemon's own text files (the claims
 * state, the isolation journal), read without locale, sign, spaces or
 * overflow: the one parser both use.
 */
#ifndef RTPLACE_DECIMAL_H
#define RTPLACE_DECIMAL_H

#include <stdbool.h>
#include <stdint.h>

/* The digits at *p as a number of at most max into *ret, *p moved past
 * them; false (nothing moved) when *p holds no digit or the number is
 * above max. */
bool decimal_parse(const char **p, uint64_t max, uint64_t *ret);

#endif
