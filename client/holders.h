/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who holds the CPUs an answer left out (holders.c), for the clients'
 * refusals and partial answers.
 */
#ifndef RTPLACE_HOLDERS_H
#define RTPLACE_HOLDERS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "rtplace.h"

/* A refusal names this many holders of the CPUs at the most, within a
 * line of this many bytes, and counts the rest. */
#define HOLDERS_MAX 8
#define HOLDERS_LEN 1024

/*
 * Why each CPU of allowed was not given, as the daemon's snapshot shows
 * it: the claim holding it (its id, its owner where the daemon shows it
 * to this caller, and who runs there), else an RT task, isolation,
 * housekeeping or hotplug, for an ask at RT priority prio (0: a pin
 * alone; normal: at the normal level, which isolated CPUs refuse). One
 * entry per claim, at most HOLDERS_MAX entries, the rest counted. Returns
 * how many entries were written (0: the snapshot said nothing, or could
 * not be read).
 */
unsigned holders_format(struct rtplace *rp, int prio, bool normal, const cpu_set_t *allowed, char *buf, size_t len);

#endif
