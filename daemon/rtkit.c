/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RealtimeKit front end as the daemon sees it (rtkit.h): built from
 * its options, reconfigured on a reload, freed, its statistics read. Its
 * parts are rtkit-internal.h's files.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "rtkit-internal.h"

int rtkit_new(const struct rtkit_opts *opts, const struct config *cfg, struct rtkit **ret)
{
	struct rtkit *k = calloc(1, sizeof(*k));
	int r;

	if (!k)
		return -ENOMEM;
	k->o = *opts;
	k->cfg = cfg->rtkit;
	r = rtkit_threads_init(k);
	if (r == 0)
		r = rtkit_watchdog_arm(k);
	if (r == 0)
		r = rtkit_bus_connect(k);
	if (r < 0) {
		rtkit_free(k);
		return r;
	}
	*ret = k;
	return 0;
}

void rtkit_free(struct rtkit *k)
{
	if (!k)
		return;
	rtkit_bus_close(k);
	rtkit_threads_free(k);
	rtkit_watchdog_free(k);
	rtkit_bursts_free(&k->bursts);
	free(k);
}

void rtkit_apply_config(struct rtkit *k, const struct config *cfg)
{
	bool rearm;

	if (!k)
		return;
	rearm = k->cfg.watchdog_interval_ms != cfg->rtkit.watchdog_interval_ms;
	k->cfg = cfg->rtkit;
	if (rearm && rtkit_watchdog_arm(k) < 0)
		log_warning("RealtimeKit: out of memory; the watchdog keeps its old interval");
	if (k->exited && !k->bus && cfg->rtkit.enable) {
		k->exited = false;
		k->closing = false;
		if (rtkit_bus_connect(k) < 0)
			log_warning("RealtimeKit: out of memory; %s stays unserved", RTKIT_BUS_NAME);
	}
}

void rtkit_get_stats(const struct rtkit *k, struct rtkit_stats *ret)
{
	*ret = (struct rtkit_stats){ 0 };
	if (!k)
		return;
	*ret = k->stats;
	ret->serving = k->serving;
	ret->threads = k->nthreads;
}

void rtkit_test_hold(const char *var, const char *what, pid_t id)
{
#ifdef RTPLACE_SELF_CHECKS
	const char *fifo = getenv(var);
	char c;
	int fd;

	if (!fifo)
		return;
	log_notice("RealtimeKit: test hold before %s %d", what, (int)id);
	fd = open(fifo, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && read(fd, &c, 1) > 0)
		;
	if (fd >= 0)
		close(fd);
#endif
}
