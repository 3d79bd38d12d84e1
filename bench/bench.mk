# Benchmarks (DESIGN §11): built with the rest, run by hand, never by
# `make check` (timings are not assertions); bench/README.md has the
# commands and the tables they printed.
noinst_PROGRAMS += bench/map-layouts
bench_map_layouts_SOURCES = bench/map-layouts.c
bench_map_layouts_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
bench_map_layouts_LDADD = common/libcommon.la $(PTHREAD_LIBS)

EXTRA_DIST += bench/README.md

# Query round trip against a bare SEQPACKET echo (DESIGN §11).
noinst_PROGRAMS += bench/query-latency
bench_query_latency_SOURCES = bench/query-latency.c
bench_query_latency_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
bench_query_latency_LDADD = common/libcommon.la $(PTHREAD_LIBS)

# Claims at scale: one claiming query and every owner's exit with 10 and
# with 10,000 claims (issue 14.3).
noinst_PROGRAMS += bench/claims-scale
bench_claims_scale_SOURCES = bench/claims-scale.c
bench_claims_scale_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/daemon
bench_claims_scale_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
bench_claims_scale_LDADD = daemon/libdaemoncore.la common/libcommon.la $(LIBEVENT_LIBS)
