/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Root's query latency for bench/soak.sh, sampled while the mixes run:
 *
 *   bench/soak-latency SOCKET WINDOW_S SECONDS
 *
 * keeps one connection and asks a plain QUERY (priority 50, one CPU, no
 * claim) every 5 ms, paced rather than back to back so that the sampler
 * is not itself a flood, and prints one line per window of WINDOW_S
 * seconds,
 *
 *   window END_S n N p50 US p99 US max US errors N
 *
 * (END_S: seconds since it started), until SECONDS have passed. A query
 * the daemon does not answer counts as an error, and the connection is
 * made again (a restart of the daemon). Exits 0, or 1 when it never
 * connected.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchlib.h"
#include "rtplace.h"

#define SOAK_PACE_NS 5000000u
#define SOAK_WINDOW_MAX 3600

/* One window's samples: at most one per SOAK_PACE_NS. */
struct soak_window {
	uint64_t *ns;
	size_t n, cap;
	unsigned errors;
};

static void soak_print(struct soak_window *w, uint64_t since_ns)
{
	qsort(w->ns, w->n, sizeof(w->ns[0]), bench_cmp_u64);
	printf("window %.0f n %zu p50 %.1f p99 %.1f max %.1f errors %u\n", (double)since_ns / 1e9, w->n,
	       w->n ? (double)bench_pct(w->ns, w->n, 50) / 1e3 : 0.0, w->n ? (double)bench_pct(w->ns, w->n, 99) / 1e3 : 0.0,
	       w->n ? (double)w->ns[w->n - 1] / 1e3 : 0.0, w->errors);
	fflush(stdout);
	w->n = 0;
	w->errors = 0;
}

/* One query on *rpp, (re)connecting first when needed; its time into w. */
static void soak_sample(const char *path, struct rtplace **rpp, struct soak_window *w, bool *connected)
{
	struct rtplace_request req = RTPLACE_REQUEST_INIT;
	static struct rtplace_answer ans;
	uint64_t t0;
	int r;

	req.prio = 50;
	if (!*rpp && rtplace_connect(path, rpp) < 0) {
		*rpp = NULL;
		w->errors++;
		return;
	}
	*connected = true;
	t0 = bench_now_ns();
	r = rtplace_query(*rpp, &req, &ans);
	if (r < 0) {
		w->errors++;
		rtplace_close(*rpp);
		*rpp = NULL;
		return;
	}
	if (w->n < w->cap)
		w->ns[w->n++] = bench_now_ns() - t0;
}

int main(int argc, char **argv)
{
	struct soak_window w = { 0 };
	struct rtplace *rp = NULL;
	uint64_t start, window_end, end, window_ns;
	bool connected = false;
	long window_s, seconds;

	if (argc != 4 || (window_s = strtol(argv[2], NULL, 10)) < 1 || window_s > SOAK_WINDOW_MAX ||
	    (seconds = strtol(argv[3], NULL, 10)) < window_s) {
		fprintf(stderr, "usage: soak-latency SOCKET WINDOW_S SECONDS (1 <= WINDOW_S <= %d, <= SECONDS)\n",
			SOAK_WINDOW_MAX);
		return 64;
	}
	window_ns = (uint64_t)window_s * 1000000000u;
	w.cap = (size_t)(window_ns / SOAK_PACE_NS) + 1;
	w.ns = calloc(w.cap, sizeof(w.ns[0]));
	if (!w.ns) {
		fprintf(stderr, "soak-latency: %s\n", strerror(ENOMEM));
		return 1;
	}
	start = bench_now_ns();
	end = start + (uint64_t)seconds * 1000000000u;
	window_end = start + window_ns;
	for (uint64_t next = start; next < end; next += SOAK_PACE_NS) {
		uint64_t now = bench_now_ns();

		if (now < next) {
			struct timespec ts = { 0, (long)(next - now) };

			nanosleep(&ts, NULL);
		}
		soak_sample(argv[1], &rp, &w, &connected);
		if (bench_now_ns() >= window_end) {
			soak_print(&w, bench_now_ns() - start);
			window_end += window_ns;
		}
	}
	/* The last window, when the pacing ended it a sample or a few
	 * early; a stub of one is not a window. */
	if (w.n >= w.cap / 2)
		soak_print(&w, bench_now_ns() - start);
	rtplace_close(rp);
	free(w.ns);
	return connected ? 0 : 1;
}
