/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MakeThreadRealtimeWithPID round trips through rtplaced's RealtimeKit1
 * against the same call through Debian's rtkit-daemon, each on a private
 * system bus of its own (bench/rtkit-roundtrip.sh starts both), measured
 * side by side in one run: rounds alternate between the two buses, so a
 * slow moment of the machine lands on both. The caller is this program's
 * main thread, asking for itself (rtkit's clients do the same); the first
 * call makes it SCHED_RR, later ones grant it again.
 *
 *   rtkit-roundtrip RTPLACED_BUS RTKIT_BUS [CALLS [ROUNDS]]
 *   rtkit-roundtrip --polkit BUS   (answers CheckAuthorization with yes)
 *
 * The --polkit mode stands in for polkit on the private bus: rtkit asks
 * it about every request, and the real one is not on that bus.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "benchlib.h"

static int bench_bus_open(const char *address, sd_bus **ret)
{
	sd_bus *bus = NULL;
	int r = sd_bus_new(&bus);

	if (r >= 0)
		r = sd_bus_set_address(bus, address);
	if (r >= 0)
		r = sd_bus_set_bus_client(bus, 1);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		fprintf(stderr, "rtkit-roundtrip: cannot connect to %s: %s\n", address, strerror(-r));
		sd_bus_unref(bus);
		return r;
	}
	*ret = bus;
	return 0;
}

static int bench_polkit_check_cb(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	sd_bus_message *reply = NULL;
	int r = sd_bus_message_new_method_return(m, &reply);

	if (r >= 0)
		r = sd_bus_message_append(reply, "(bba{ss})", 1, 0, 0);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r;
}

static const sd_bus_vtable bench_polkit_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("CheckAuthorization", "(sa{sv})sa{ss}us", "(bba{ss})", bench_polkit_check_cb,
		      SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_VTABLE_END,
};

static int bench_polkit(const char *address)
{
	sd_bus *bus;
	int r = bench_bus_open(address, &bus);

	if (r < 0)
		return 1;
	r = sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/PolicyKit1/Authority",
				     "org.freedesktop.PolicyKit1.Authority", bench_polkit_vtable, NULL);
	if (r >= 0)
		r = sd_bus_request_name(bus, "org.freedesktop.PolicyKit1", 0);
	while (r >= 0) {
		r = sd_bus_process(bus, NULL);
		if (r == 0)
			r = sd_bus_wait(bus, UINT64_MAX);
	}
	fprintf(stderr, "rtkit-roundtrip --polkit: %s\n", strerror(-r));
	sd_bus_unref(bus);
	return 1;
}

/* One call; its round trip in ns, or 0 after printing why it failed. */
static uint64_t bench_call(sd_bus *bus, uint32_t prio)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	uint64_t t0 = bench_now_ns(), dt;
	int r = sd_bus_call_method(bus, "org.freedesktop.RealtimeKit1", "/org/freedesktop/RealtimeKit1",
				   "org.freedesktop.RealtimeKit1", "MakeThreadRealtimeWithPID", &err, &reply, "ttu",
				   (uint64_t)getpid(), (uint64_t)gettid(), prio);

	dt = bench_now_ns() - t0;
	if (r < 0) {
		fprintf(stderr, "rtkit-roundtrip: MakeThreadRealtimeWithPID: %s\n", err.message ? err.message : strerror(-r));
		dt = 0;
	}
	sd_bus_error_free(&err);
	sd_bus_message_unref(reply);
	return dt;
}

int main(int argc, char **argv)
{
	static const char *const names[2] = { "rtplaced", "rtkit-daemon" };
	const struct rlimit rttime = { 200000, 200000 };
	unsigned calls = argc > 3 ? (unsigned)atoi(argv[3]) : 200, rounds = argc > 4 ? (unsigned)atoi(argv[4]) : 5;
	double medians[2][64];
	uint64_t *ns;
	sd_bus *bus[2];

	if (argc == 3 && strcmp(argv[1], "--polkit") == 0)
		return bench_polkit(argv[2]);
	if (argc < 3 || calls < 1 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: rtkit-roundtrip RTPLACED_BUS RTKIT_BUS [CALLS [ROUNDS <= 64]]\n");
		return 64;
	}
	/* Both daemons refuse a process without a hard RT time limit. */
	if (setrlimit(RLIMIT_RTTIME, &rttime) < 0) {
		perror("rtkit-roundtrip: setrlimit(RLIMIT_RTTIME)");
		return 1;
	}
	ns = calloc(calls, sizeof(*ns));
	if (!ns || bench_bus_open(argv[1], &bus[0]) < 0 || bench_bus_open(argv[2], &bus[1]) < 0)
		return 1;
	for (unsigned round = 0; round < rounds; round++) {
		for (int d = 0; d < 2; d++) {
			for (unsigned i = 0; i < calls; i++) {
				ns[i] = bench_call(bus[d], 1 + i % 10);
				if (!ns[i])
					return 1;
			}
			qsort(ns, calls, sizeof(*ns), bench_cmp_u64);
			medians[d][round] = (double)bench_pct(ns, calls, 50) / 1000.0;
			printf("round %u %-13s p50 %8.1f us  p99 %8.1f us\n", round + 1, names[d], medians[d][round],
			       (double)bench_pct(ns, calls, 99) / 1000.0);
		}
	}
	printf("median of %u rounds x %u calls: rtplaced %.1f us, rtkit-daemon %.1f us, ratio rtplaced/rtkit %.2f\n",
	       rounds, calls, bench_median(medians[0], rounds), bench_median(medians[1], rounds),
	       bench_median(medians[0], rounds) / bench_median(medians[1], rounds));
	free(ns);
	sd_bus_unref(bus[0]);
	sd_bus_unref(bus[1]);
	return 0;
}
