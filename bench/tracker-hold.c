/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Holds the BPF tracker attached until SIGINT or SIGTERM, for
 * bench/tracker-overhead.sh to measure workloads with and without it.
 * Prints "attached" on stdout once the programs are live. With --watch it
 * watches its own thread, as the daemon does for the threads it manages,
 * which keeps the wakeup and exit programs attached (tracker_watch()).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "topo.h"
#include "tracker.h"

int main(int argc, char **argv)
{
	struct tracker *t = NULL;
	struct topo *topo = NULL;
	struct rtplace_reason reason = { "" };
	sigset_t set;
	int r, sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	r = topo_load(NULL, &reason, &topo);
	if (r < 0) {
		fprintf(stderr, "tracker-hold: %s\n", reason.text);
		return 1;
	}
	r = tracker_open(topo, TOPO_SHARD_NODE, &reason, NULL, &t);
	if (r < 0) {
		fprintf(stderr, "tracker-hold: %s\n", reason.text);
		topo_free(topo);
		return r == -EOPNOTSUPP || r == -ENOENT ? 69 : 1;
	}
	if (argc > 1 && strcmp(argv[1], "--watch") == 0)
		r = tracker_watch(t, (uint32_t)gettid(), true);
	if (r < 0) {
		fprintf(stderr, "tracker-hold: watching a thread failed: %s\n", strerror(-r));
		tracker_close(t);
		topo_free(topo);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	sigwait(&set, &sig);
	tracker_close(t);
	topo_free(topo);
	return 0;
}
