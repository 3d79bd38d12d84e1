# SPDX-License-Identifier: GPL-2.0-or-later
# Unit tests (cmocka, no root), integration tests (real kernel, real daemon;
# root for the live ones) and fuzz-corpus replays. Each test is a program
# run by automake's parallel harness; 77 means skipped, 99 a hard error.
# Tests include headers the way the code under test does: UNIT_CPPFLAGS
# for the shared core, TEST_DAEMON_CPPFLAGS for daemon/ internals,
# TEST_CLIENT_CPPFLAGS for the public client API.

check_LTLIBRARIES += tests/lib/libtest.la tests/lib/libharness.la
# Topologies generated when ../shared is absent (tests/lib/testlib.c).
CLEANFILES += tests/topology-*.xml
tests_lib_libtest_la_SOURCES = tests/lib/testlib.h tests/lib/testlib.c
# Integration tests against the real daemon (the harness runs it).
tests_lib_libharness_la_SOURCES = tests/lib/harness.h tests/lib/harness.c
# A process's descriptors and memory, read as the daemon reads /proc.
tests_lib_libharness_la_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_lib_libharness_la_LIBADD = daemon/libdaemoncore.la
EXTRA_DIST += tests/lib/stage-programs.sh tests/lib/host-isolation.sh
# A private system bus (RealtimeKit tests and bench) and a softirq load
# (interrupt-noise test and bench).
EXTRA_DIST += tests/lib/system-bus.sh tests/lib/udp-flood.py

UNIT_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/lib
TEST_DAEMON_CPPFLAGS = $(DAEMON_CPPFLAGS) -I$(top_srcdir)/tests/lib
TEST_CLIENT_CPPFLAGS = $(CLIENT_CPPFLAGS) -I$(top_srcdir)/tests/lib
UNIT_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
UNIT_LDADD = tests/lib/libtest.la common/libcommon.la $(CMOCKA_LIBS)
MOVES_TEST_LDADD = daemon/libmoves.la daemon/libdaemoncore.la $(UNIT_LDADD) $(PTHREAD_LIBS)

# --- unit tests: the shared core
check_PROGRAMS += tests/unit/test-basics
tests_unit_test_basics_SOURCES = tests/unit/test-basics.c
tests_unit_test_basics_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_basics_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_basics_LDADD = $(UNIT_LDADD)
TESTS += tests/unit/test-basics

# The daemon's one hash table (common/idmap.c) against a plain array.
check_PROGRAMS += tests/unit/test-idmap
tests_unit_test_idmap_SOURCES = tests/unit/test-idmap.c
tests_unit_test_idmap_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_idmap_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_idmap_LDADD = $(UNIT_LDADD)
TESTS += tests/unit/test-idmap

check_PROGRAMS += tests/unit/test-topology
tests_unit_test_topology_SOURCES = tests/unit/test-topology.c
tests_unit_test_topology_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_topology_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_topology_LDADD = common/libtopohwloc.la $(UNIT_LDADD)
TESTS += tests/unit/test-topology

# The cpupri map and placement against the naive models in
# tests/unit/refmodel.c, on the shared topologies (loaded through the hwloc
# loader when ../shared is there, built in the same shapes otherwise).
check_PROGRAMS += tests/unit/test-cpupri tests/unit/test-placement
tests_unit_test_cpupri_SOURCES = tests/unit/test-cpupri.c tests/unit/refmodel.h tests/unit/refmodel.c
tests_unit_test_cpupri_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_cpupri_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_unit_test_cpupri_LDADD = common/libtopohwloc.la $(HWLOC_LIBS) $(UNIT_LDADD) $(PTHREAD_LIBS)
tests_unit_test_placement_SOURCES = tests/unit/test-placement.c tests/unit/refmodel.h tests/unit/refmodel.c
tests_unit_test_placement_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_placement_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_placement_LDADD = common/libtopohwloc.la $(HWLOC_LIBS) $(UNIT_LDADD)
TESTS += tests/unit/test-cpupri tests/unit/test-placement

# EXPLAIN's classification against placement's own answers, on the same
# topologies and random states.
check_PROGRAMS += tests/unit/test-explain
tests_unit_test_explain_SOURCES = tests/unit/test-explain.c tests/unit/refmodel.h tests/unit/refmodel.c
tests_unit_test_explain_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_explain_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_explain_LDADD = common/libtopohwloc.la $(HWLOC_LIBS) $(UNIT_LDADD)
TESTS += tests/unit/test-explain

check_PROGRAMS += tests/unit/test-protocol
tests_unit_test_protocol_SOURCES = tests/unit/test-protocol.c tests/fuzz/fuzz-protocol.c \
	tests/fuzz/proto-samples.h tests/fuzz/proto-samples.c
tests_unit_test_protocol_CPPFLAGS = $(UNIT_CPPFLAGS) -I$(top_srcdir)/tests/fuzz
tests_unit_test_protocol_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_protocol_LDADD = $(UNIT_LDADD)
TESTS += tests/unit/test-protocol

check_PROGRAMS += tests/unit/test-ring
tests_unit_test_ring_SOURCES = tests/unit/test-ring.c
tests_unit_test_ring_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_test_ring_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_unit_test_ring_LDADD = $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/unit/test-ring

# --- unit tests: the daemon's pure parts
check_PROGRAMS += tests/unit/test-config
tests_unit_test_config_SOURCES = tests/unit/test-config.c
tests_unit_test_config_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_config_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_config_LDADD = common/libconfig.la $(UNIT_LDADD)
TESTS += tests/unit/test-config

check_PROGRAMS += tests/unit/test-quota
tests_unit_test_quota_SOURCES = tests/unit/test-quota.c
tests_unit_test_quota_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_quota_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_quota_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD) $(LIBEVENT_LIBS)
TESTS += tests/unit/test-quota

# Per-uid admission at a rate (daemon/rate.c): the connection storms' limit.
check_PROGRAMS += tests/unit/test-rate
tests_unit_test_rate_SOURCES = tests/unit/test-rate.c
tests_unit_test_rate_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_rate_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_rate_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD) $(LIBEVENT_LIBS)
TESTS += tests/unit/test-rate

check_PROGRAMS += tests/unit/test-claims
tests_unit_test_claims_SOURCES = tests/unit/test-claims.c
tests_unit_test_claims_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_claims_CFLAGS = $(UNIT_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_claims_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD) $(LIBEVENT_LIBS)
TESTS += tests/unit/test-claims

check_PROGRAMS += tests/unit/test-histogram
tests_unit_test_histogram_SOURCES = tests/unit/test-histogram.c
tests_unit_test_histogram_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_histogram_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_histogram_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD) $(LIBEVENT_LIBS)
TESTS += tests/unit/test-histogram

check_PROGRAMS += tests/unit/test-claims-state
tests_unit_test_claims_state_SOURCES = tests/unit/test-claims-state.c
tests_unit_test_claims_state_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_claims_state_CFLAGS = $(UNIT_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_claims_state_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD) $(LIBEVENT_LIBS)
TESTS += tests/unit/test-claims-state

# The isolation planner (daemon/isoplan.c).
check_PROGRAMS += tests/unit/test-isoplan
tests_unit_test_isoplan_SOURCES = tests/unit/test-isoplan.c
tests_unit_test_isoplan_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_isoplan_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_isoplan_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD) $(LIBEVENT_LIBS)
TESTS += tests/unit/test-isoplan

check_PROGRAMS += tests/unit/test-procfs
tests_unit_test_procfs_SOURCES = tests/unit/test-procfs.c
tests_unit_test_procfs_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_procfs_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_procfs_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD)
TESTS += tests/unit/test-procfs

# The sysfs reader (common/sysfs.c) on fixture trees.
check_PROGRAMS += tests/unit/test-sysfs
tests_unit_test_sysfs_SOURCES = tests/unit/test-sysfs.c
tests_unit_test_sysfs_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_sysfs_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sysfs_LDADD = common/libfile.la $(UNIT_LDADD)
TESTS += tests/unit/test-sysfs

# The RT budget diagnosis (common/rtbudget.c) on fixture cgroup trees.
check_PROGRAMS += tests/unit/test-rtbudget
tests_unit_test_rtbudget_SOURCES = tests/unit/test-rtbudget.c
tests_unit_test_rtbudget_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_rtbudget_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_rtbudget_LDADD = common/libfile.la $(UNIT_LDADD)
TESTS += tests/unit/test-rtbudget

# The kernel's RT environment: parsers and words (common/kenv.c), the
# reader (daemon/kernel-env.c) on fixture trees.
check_PROGRAMS += tests/unit/test-kenv
tests_unit_test_kenv_SOURCES = tests/unit/test-kenv.c
tests_unit_test_kenv_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_kenv_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_kenv_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD)
TESTS += tests/unit/test-kenv

check_PROGRAMS += tests/unit/test-auth
tests_unit_test_auth_SOURCES = tests/unit/test-auth.c
tests_unit_test_auth_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_auth_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_auth_LDADD = common/libconfig.la $(MOVES_TEST_LDADD)
TESTS += tests/unit/test-auth

# --- integration tests: the daemon's edges on the real kernel.
# test-tracker, test-thread-sched need root (BPF, RT policies, other uids) and skip
# (77) otherwise; test-notify runs as any user (memfd, eventfd, a consumer).
check_PROGRAMS += tests/integration/test-tracker
tests_integration_test_tracker_SOURCES = tests/integration/test-tracker.c
tests_integration_test_tracker_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_integration_test_tracker_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
tests_integration_test_tracker_LDADD = daemon/libtracker.la daemon/libdaemoncore.la common/libtopohwloc.la common/libcommon.la \
	tests/lib/libtest.la $(PTHREAD_LIBS)
TESTS += tests/integration/test-tracker

# The isolation edge (daemon/isolation.c): fixture trees as any user,
# interrupt affinities and the workqueue mask of this machine as root.
check_PROGRAMS += tests/integration/test-isolation
tests_integration_test_isolation_SOURCES = tests/integration/test-isolation.c
tests_integration_test_isolation_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_integration_test_isolation_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_isolation_LDADD = common/libconfig.la daemon/libdaemoncore.la $(UNIT_LDADD) $(LIBEVENT_LIBS)
TESTS += tests/integration/test-isolation

# Isolated claims through the real daemon and clients, root (interrupts
# and unbound workqueues; partitions are test-isolation's in the VM bed).
TESTS += tests/integration/test-isolation-claims.sh
EXTRA_DIST += tests/integration/test-isolation-claims.sh
# Isolation's records through `rtplacectl watch` (root).
TESTS += tests/integration/test-isolation-records.sh
EXTRA_DIST += tests/integration/test-isolation-records.sh
# Isolation and the real irqbalance (root).
TESTS += tests/integration/test-isolation-irqbalance.sh
EXTRA_DIST += tests/integration/test-isolation-irqbalance.sh

# A connection storm of one user against root's requests.
TESTS += tests/integration/test-daemon-storm.sh
EXTRA_DIST += tests/integration/test-daemon-storm.sh

check_PROGRAMS += tests/integration/test-thread-sched tests/integration/test-notify
tests_integration_test_thread_sched_SOURCES = tests/integration/test-thread-sched.c
tests_integration_test_thread_sched_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_integration_test_thread_sched_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_integration_test_thread_sched_LDADD = $(MOVES_TEST_LDADD)
tests_integration_test_notify_SOURCES = tests/integration/test-notify.c
tests_integration_test_notify_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_integration_test_notify_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_notify_LDADD = $(MOVES_TEST_LDADD)
TESTS += tests/integration/test-thread-sched tests/integration/test-notify

# --- integration tests: the real rtplaced on a private socket, in
# simulation (no root) or live (root and BPF).
check_PROGRAMS += tests/integration/test-daemon
tests_integration_test_daemon_SOURCES = tests/integration/test-daemon.c
tests_integration_test_daemon_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_integration_test_daemon_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_daemon_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-daemon

check_PROGRAMS += tests/integration/test-daemon-live
tests_integration_test_daemon_live_SOURCES = tests/integration/test-daemon-live.c
tests_integration_test_daemon_live_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_integration_test_daemon_live_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_daemon_live_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-daemon-live

# rtplaced without BPF: the map sampled from /proc, by choice and when the
# tracker cannot load (the daemon runs without CAP_BPF), and required = yes.
check_PROGRAMS += tests/integration/test-tracker-sampled
tests_integration_test_tracker_sampled_SOURCES = tests/integration/test-tracker-sampled.c
tests_integration_test_tracker_sampled_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_integration_test_tracker_sampled_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_tracker_sampled_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-tracker-sampled

check_PROGRAMS += tests/integration/test-moves-live
tests_integration_test_moves_live_SOURCES = tests/integration/test-moves-live.c
tests_integration_test_moves_live_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_integration_test_moves_live_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_integration_test_moves_live_LDADD = tests/lib/libharness.la $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/integration/test-moves-live

check_PROGRAMS += tests/integration/test-manage-rules
tests_integration_test_manage_rules_SOURCES = tests/integration/test-manage-rules.c
tests_integration_test_manage_rules_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_integration_test_manage_rules_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_manage_rules_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-manage-rules

# The layout rules (scripts/check-layout.sh) are part of the suite, and
# so is a check that they fail on a citation of a missing design section.
TESTS += scripts/check-layout.sh tests/integration/test-check-layout.sh
EXTRA_DIST += tests/integration/test-check-layout.sh
TESTS += tests/integration/test-units.sh tests/integration/test-rtplaced-cli.sh tests/integration/test-rtplaced-socket.sh
EXTRA_DIST += tests/integration/test-units.sh tests/integration/test-rtplaced-cli.sh tests/integration/test-rtplaced-socket.sh

# --- integration tests: the clients against a real rtplaced.
check_PROGRAMS += tests/integration/test-client-lib
tests_integration_test_client_lib_SOURCES = tests/integration/test-client-lib.c
tests_integration_test_client_lib_CPPFLAGS = $(TEST_CLIENT_CPPFLAGS)
tests_integration_test_client_lib_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_client_lib_LDADD = client/librtplace.la tests/lib/libharness.la $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/integration/test-client-lib

check_PROGRAMS += tests/integration/test-client-sub
tests_integration_test_client_sub_SOURCES = tests/integration/test-client-sub.c
tests_integration_test_client_sub_CPPFLAGS = $(TEST_CLIENT_CPPFLAGS)
tests_integration_test_client_sub_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_integration_test_client_sub_LDADD = client/librtplace.la tests/lib/libharness.la $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/integration/test-client-sub

check_PROGRAMS += tests/integration/test-client-spin
tests_integration_test_client_spin_SOURCES = tests/integration/test-client-spin.c

EXTRA_DIST += tests/integration/test-client-common.sh
TESTS += tests/integration/test-client-help.sh
EXTRA_DIST += tests/integration/test-client-help.sh
TESTS += tests/integration/test-client-cli.sh tests/integration/test-client-run.sh \
	tests/integration/test-client-ffmpeg.sh tests/integration/test-client-watch.sh \
	tests/integration/test-client-host.sh tests/integration/test-daemon-isolated.sh
EXTRA_DIST += tests/integration/test-client-cli.sh tests/integration/test-client-run.sh \
	tests/integration/test-client-ffmpeg.sh tests/integration/test-client-watch.sh \
	tests/integration/test-client-host.sh tests/integration/test-daemon-isolated.sh

# `rtplacectl reload`: the daemon's verdict, a claimed CPU refused.
TESTS += tests/integration/test-client-reload.sh
EXTRA_DIST += tests/integration/test-client-reload.sh

# rtplace-run when its CPU goes offline before the pin: the race injected
# by a preloaded sched_setaffinity() (built without the sanitizers, which
# would want to be loaded first).
check_LTLIBRARIES += tests/integration/libofflinepin.la
tests_integration_libofflinepin_la_SOURCES = tests/integration/test-client-offline-shim.c
tests_integration_libofflinepin_la_CFLAGS = $(WARN_CFLAGS)
tests_integration_libofflinepin_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
TESTS += tests/integration/test-client-run-offline.sh
# The Prometheus alerting rules (contrib/prometheus) under promtool.
TESTS += tests/integration/test-prometheus-rules.sh
EXTRA_DIST += tests/integration/test-prometheus-rules.sh contrib/prometheus/rtplace-alerts.yml \
	contrib/prometheus/rtplace-alerts.test.yml
EXTRA_DIST += tests/integration/test-client-run-offline.sh
# rtplace-run --manage on the live machine: the program's own threads are
# managed, a forked child's are not.
TESTS += tests/integration/test-client-run-manage.sh
EXTRA_DIST += tests/integration/test-client-run-manage.sh

include $(top_srcdir)/tests/fuzz/fuzz.mk

# --- CPU hotplug (DESIGN §14): the pure parts without root; the live test
# takes CPU 1 offline and back, as root, under the machine-wide RT test lock.
check_PROGRAMS += tests/unit/test-hotplug
tests_unit_test_hotplug_SOURCES = tests/unit/test-hotplug.c
tests_unit_test_hotplug_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_hotplug_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_hotplug_LDADD = daemon/libtracker.la daemon/libdaemoncore.la $(UNIT_LDADD)
TESTS += tests/unit/test-hotplug

check_PROGRAMS += tests/integration/test-hotplug-live
tests_integration_test_hotplug_live_SOURCES = tests/integration/test-hotplug-live.c
tests_integration_test_hotplug_live_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_integration_test_hotplug_live_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_hotplug_live_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-hotplug-live

# The log's rate limit (a pure window, the clock injected).
check_PROGRAMS += tests/unit/test-log
tests_unit_test_log_SOURCES = tests/unit/test-log.c
tests_unit_test_log_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_log_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_log_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD)
TESTS += tests/unit/test-log

# rtplaced under hostile load: client limits, EMFILE, log rate limits,
# the socket's folder and creation, non-regular configuration files.
check_PROGRAMS += tests/integration/test-daemon-limits
tests_integration_test_daemon_limits_SOURCES = tests/integration/test-daemon-limits.c
tests_integration_test_daemon_limits_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_integration_test_daemon_limits_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_daemon_limits_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-daemon-limits

# Claims through the daemon: replies before events, limits, rights,
# restarts, release by uid.
check_PROGRAMS += tests/integration/test-claims-live
tests_integration_test_claims_live_SOURCES = tests/integration/test-claims-live.c
tests_integration_test_claims_live_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_integration_test_claims_live_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_claims_live_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-claims-live

# Guarded moves and process-wide moves (root, the live machine), over a
# process of sleeping threads, one of them SCHED_DEADLINE for the rollback.
check_PROGRAMS += tests/integration/test-client-threads
tests_integration_test_client_threads_SOURCES = tests/integration/test-client-threads.c
tests_integration_test_client_threads_CFLAGS = $(AM_CFLAGS) $(PTHREAD_LIBS)
tests_integration_test_client_threads_LDADD = $(PTHREAD_LIBS)
TESTS += tests/integration/test-client-move.sh
EXTRA_DIST += tests/integration/test-client-move.sh

# A cpu cgroup with no RT budget named with its fix by moves and
# rtplace-run (root, cgroup v1 with RT group scheduling).
TESTS += tests/integration/test-client-rtbudget.sh
EXTRA_DIST += tests/integration/test-client-rtbudget.sh
# The kernel's RT environment (RT group scheduling, deadline servers,
# sched_ext) in status, metrics and the log, against the kernel's files.
TESTS += tests/integration/test-kernel-env.sh
EXTRA_DIST += tests/integration/test-kernel-env.sh

# Errors that name their fix: a socket closed to the user, rtplaced without
# BPF rights (root, to act as uid 65534).
TESTS += tests/integration/test-client-errors.sh
EXTRA_DIST += tests/integration/test-client-errors.sh

# rtplace-oci-hook by hand and under real runc (root) against a live rtplaced.
TESTS += tests/integration/test-oci-hook.sh
EXTRA_DIST += tests/integration/test-oci-hook.sh tests/integration/test-oci-common.sh
# What the hook grants: the container's own rights and the node's policy,
# under real runc (root).
TESTS += tests/integration/test-oci-rights.sh
EXTRA_DIST += tests/integration/test-oci-rights.sh

# rtplace-oci-hook honours process.scheduler and process.execCPUAffinity
# (runtime spec 1.2) under real runc (root).
TESTS += tests/integration/test-oci-scheduler.sh
EXTRA_DIST += tests/integration/test-oci-scheduler.sh
# The hook under a real podman (rootful, cgroupfs, runc) through the
# generated hooks.d file (root).
TESTS += tests/integration/test-oci-podman.sh
EXTRA_DIST += tests/integration/test-oci-podman.sh

# rtplaced itself under real runc as a DaemonSet runs it, and the DaemonSet
# file checked against that configuration.
TESTS += tests/integration/test-daemon-container.sh
EXTRA_DIST += tests/integration/test-daemon-container.sh contrib/kubernetes/rtplaced-daemonset.yaml

# --- packaging and paths: what a user's build shows and installs.
# Log lines carry the journal's "<N>" level prefixes only on the journal;
# rtplaced --help and the man pages name the configured configuration path;
# librtplace(3)'s example builds with the flags of rtplace.pc alone.
TESTS += tests/integration/test-rtplaced-log.sh tests/integration/test-paths.sh \
	tests/integration/test-client-example.sh
EXTRA_DIST += tests/integration/test-rtplaced-log.sh tests/integration/test-paths.sh \
	tests/integration/test-client-example.sh

# The metrics endpoint over real TCP: counters, format, refusals, stuck
# scrapers; as root the live daemon's BPF statistics.
check_PROGRAMS += tests/integration/test-metrics
tests_integration_test_metrics_SOURCES = tests/integration/test-metrics.c
tests_integration_test_metrics_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_integration_test_metrics_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_metrics_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-metrics

# promtool and a real Prometheus server against the metrics endpoint.
TESTS += tests/integration/test-metrics-prometheus.sh
EXTRA_DIST += tests/integration/test-metrics-prometheus.sh

# The choice of one CPU for a thread (common/placement.c, the engine's
# engine_pick()) over a synthetic map: each failure of the pick has its own
# error and reason.
check_PROGRAMS += tests/unit/test-pick
tests_unit_test_pick_SOURCES = tests/unit/test-pick.c tests/unit/refmodel.h tests/unit/refmodel.c
tests_unit_test_pick_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_pick_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_pick_LDADD = common/libconfig.la daemon/libdaemoncore.la common/libtopohwloc.la \
	$(HWLOC_LIBS) $(INIH_LIBS) $(UNIT_LDADD)
TESTS += tests/unit/test-pick

# The helpers both command-line tools share (client/cli.c).
check_PROGRAMS += tests/unit/test-cli
tests_unit_test_cli_SOURCES = tests/unit/test-cli.c client/cli.h client/cli.c client/ctl.h client/ctl-help.c
tests_unit_test_cli_CPPFLAGS = $(TEST_CLIENT_CPPFLAGS)
tests_unit_test_cli_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_cli_LDADD = common/libfile.la $(UNIT_LDADD)
TESTS += tests/unit/test-cli

# The pids a client names, as the daemon's (daemon/pidmap.c), on fixture
# proc trees.
check_PROGRAMS += tests/unit/test-pidmap
tests_unit_test_pidmap_SOURCES = tests/unit/test-pidmap.c
tests_unit_test_pidmap_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_pidmap_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_pidmap_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD)
TESTS += tests/unit/test-pidmap

# Clients in a container's own PID namespace under real runc (root):
# identities by pidfd, bare pids from there refused (DESIGN §15).
TESTS += tests/integration/test-client-pidns.sh
EXTRA_DIST += tests/integration/test-client-pidns.sh

# What a client in a container's own PID namespace sees under real runc
# (root): its own pids in CPUS replies and records, 0 for host threads,
# and no record about a host thread (DESIGN §15).
TESTS += tests/integration/test-client-pidns-views.sh
EXTRA_DIST += tests/integration/test-client-pidns-views.sh

# Clients under unshare -Ur (as nobody) and in a runc container with a user
# namespace (root): capabilities there are no host privilege (DESIGN §14).
TESTS += tests/integration/test-client-userns.sh
EXTRA_DIST += tests/integration/test-client-userns.sh

# Time by class: level classes and the reader of the tracker's per-CPU
# entries, racing a writer thread.
check_PROGRAMS += tests/unit/test-class-times
tests_unit_test_class_times_SOURCES = tests/unit/test-class-times.c
tests_unit_test_class_times_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_class_times_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_unit_test_class_times_LDADD = $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/unit/test-class-times

# rtplacectl top and cpus --svg on the simulated 480-CPU machine, and the
# time by class of a live daemon in both views.
TESTS += tests/integration/test-client-top.sh
EXTRA_DIST += tests/integration/test-client-top.sh
# top on a terminal (tmux): pages, q, the terminal's mode put back.
TESTS += tests/integration/test-client-top-keys.sh
EXTRA_DIST += tests/integration/test-client-top-keys.sh

# librtplace against a daemon of protocol version 1.
check_PROGRAMS += tests/integration/test-client-compat
tests_integration_test_client_compat_SOURCES = tests/integration/test-client-compat.c
tests_integration_test_client_compat_CPPFLAGS = $(TEST_CLIENT_CPPFLAGS)
tests_integration_test_client_compat_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_client_compat_LDADD = client/librtplace.la $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/integration/test-client-compat

# What rtplace-oci-hook grants a container (client/oci-rights.c), over
# config.json fragments.
check_PROGRAMS += tests/unit/test-oci-rights
tests_unit_test_oci_rights_SOURCES = tests/unit/test-oci-rights.c client/oci-rights.h client/oci-rights.c
tests_unit_test_oci_rights_CPPFLAGS = $(TEST_CLIENT_CPPFLAGS)
tests_unit_test_oci_rights_CFLAGS = $(UNIT_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_oci_rights_LDADD = common/libconfig.la $(UNIT_LDADD) $(JSONC_LIBS)
TESTS += tests/unit/test-oci-rights

# What rtplace-oci-hook reads from a runtime (client/oci-spec.c).
check_PROGRAMS += tests/unit/test-oci-spec
tests_unit_test_oci_spec_SOURCES = tests/unit/test-oci-spec.c client/oci-spec.h client/oci-spec.c client/cli.h \
	client/cli.c
tests_unit_test_oci_spec_CPPFLAGS = $(TEST_CLIENT_CPPFLAGS)
tests_unit_test_oci_spec_CFLAGS = $(UNIT_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_oci_spec_LDADD = common/libfile.la $(UNIT_LDADD) $(JSONC_LIBS)
TESTS += tests/unit/test-oci-spec

# RealtimeKit (DESIGN §18): the rules without root; the interface on a
# private system bus with the live daemon (root, RT, under the RT lock),
# then a real PipeWire as nobody.
check_PROGRAMS += tests/unit/test-rtkit-rules
tests_unit_test_rtkit_rules_SOURCES = tests/unit/test-rtkit-rules.c
tests_unit_test_rtkit_rules_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_rtkit_rules_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_rtkit_rules_LDADD = daemon/libmoves.la common/libconfig.la daemon/libdaemoncore.la $(UNIT_LDADD)
TESTS += tests/unit/test-rtkit-rules
check_PROGRAMS += tests/unit/test-rtkit-admit
tests_unit_test_rtkit_admit_SOURCES = tests/unit/test-rtkit-admit.c
tests_unit_test_rtkit_admit_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_rtkit_admit_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_rtkit_admit_LDADD = daemon/libmoves.la common/libconfig.la daemon/libdaemoncore.la $(UNIT_LDADD)
TESTS += tests/unit/test-rtkit-admit
TESTS += tests/integration/test-rtkit.sh tests/integration/test-rtkit-pipewire.sh
EXTRA_DIST += tests/integration/test-rtkit-common.sh tests/integration/test-rtkit.sh \
	tests/integration/test-rtkit-pipewire.sh

check_PROGRAMS += tests/integration/test-rtkit-spin
tests_integration_test_rtkit_spin_SOURCES = tests/integration/test-rtkit-spin.c
TESTS += tests/integration/test-rtkit-watchdog.sh
EXTRA_DIST += tests/integration/test-rtkit-watchdog.sh

# Fairness: a nobody flood over its burst while another user and root are
# served; the flood is a program of its own on sd-bus.
check_PROGRAMS += tests/integration/test-rtkit-flood
tests_integration_test_rtkit_flood_SOURCES = tests/integration/test-rtkit-flood.c
tests_integration_test_rtkit_flood_CFLAGS = $(AM_CFLAGS) $(LIBSYSTEMD_CFLAGS)
tests_integration_test_rtkit_flood_LDADD = $(LIBSYSTEMD_LIBS)
TESTS += tests/integration/test-rtkit-fair.sh
EXTRA_DIST += tests/integration/test-rtkit-fair.sh

# The real xdg-desktop-portal between a client in a bubblewrap sandbox of
# its own (user and PID namespaces, as Flatpak's) and rtplaced.
TESTS += tests/integration/test-rtkit-portal.sh
EXTRA_DIST += tests/integration/test-rtkit-portal.sh

# A thread's identity under a grant, raced deterministically through the
# test hold of a --enable-self-checks build: run there only (the
# sanitizers step of scripts/test-all.sh is one).
if SELF_CHECKS
TESTS += tests/integration/test-rtkit-identity.sh tests/integration/test-rtkit-caller.sh \
	tests/integration/test-rtkit-watchdog-identity.sh
endif
EXTRA_DIST += tests/integration/test-rtkit-identity.sh tests/integration/test-rtkit-caller.sh \
	tests/integration/test-rtkit-watchdog-identity.sh

# The VM bed (scripts/test-all.sh vm), shipped so a tarball has the whole
# suite; it runs from the source tree, never from make check.
EXTRA_DIST += tests/vm/kernels.sh tests/vm/run-guest.sh tests/vm/run-tests.sh
# Whole Debian systems booting systemd (scripts/test-all.sh system).
EXTRA_DIST += tests/system/images.sh tests/system/run.sh tests/system/guest.sh tests/system/build-host.sh \
	tests/system/wakeup.py

# Interrupt noise from /proc/stat deltas: the parser and the shares.
check_PROGRAMS += tests/unit/test-irqnoise
tests_unit_test_irqnoise_SOURCES = tests/unit/test-irqnoise.c
tests_unit_test_irqnoise_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_unit_test_irqnoise_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_irqnoise_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD)
TESTS += tests/unit/test-irqnoise

# Interrupt noise as a tie-breaker on the live machine (root).
TESTS += tests/integration/test-daemon-irqnoise.sh
EXTRA_DIST += tests/integration/test-daemon-irqnoise.sh

# Local reads (DESIGN §19): librtplace's local answers against the
# daemon's decision over random map states, claims and requests on the
# 480-CPU and 16-LLC topologies, and the descriptors' seals.
check_PROGRAMS += tests/unit/test-local-read
tests_unit_test_local_read_SOURCES = tests/unit/test-local-read.c client/local-read.h client/local-read.c \
	daemon/snapshot.h daemon/snapshot.c
tests_unit_test_local_read_CPPFLAGS = $(DAEMON_CPPFLAGS) -I$(top_srcdir)/client -I$(top_srcdir)/tests/lib
tests_unit_test_local_read_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_LIBS)
tests_unit_test_local_read_LDADD = daemon/libdaemoncore.la common/libtopohwloc.la $(HWLOC_LIBS) $(UNIT_LDADD) \
	$(LIBEVENT_LIBS) $(PTHREAD_LIBS)
TESTS += tests/unit/test-local-read

# Local reads against the simulated daemon over the socket, and the
# descriptors LOCAL hands out.
check_PROGRAMS += tests/integration/test-local-reads
tests_integration_test_local_reads_SOURCES = tests/integration/test-local-reads.c
tests_integration_test_local_reads_CPPFLAGS = $(TEST_CLIENT_CPPFLAGS)
tests_integration_test_local_reads_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_local_reads_LDADD = client/librtplace.la tests/lib/libharness.la $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/integration/test-local-reads

# rtplaced(8): options and examples before the internals, no groff warning.
TESTS += tests/integration/test-man-rtplaced.sh
EXTRA_DIST += tests/integration/test-man-rtplaced.sh

# Who holds a claim of rtplacectl query --claim made inside $(...).
TESTS += tests/integration/test-client-claim-owner.sh
EXTRA_DIST += tests/integration/test-client-claim-owner.sh

# A claim made through a user switch: the owner walk stops at it, the
# refusal names the process and what works, a cut lease is said once.
TESTS += tests/integration/test-client-owner-user.sh
EXTRA_DIST += tests/integration/test-client-owner-user.sh

# rtplacectl top: its first frame at once, and a daemon that stops said
# on a line of its own (exit 69).
TESTS += tests/integration/test-client-top-stop.sh
EXTRA_DIST += tests/integration/test-client-top-stop.sh

# Errors said alike by rtplacectl and rtplace-run: no strerror tail after
# a reason, the most CPUs to ask for, the holders of a partial answer,
# chrt's -p pointed to --prio.
TESTS += tests/integration/test-client-wording.sh
EXTRA_DIST += tests/integration/test-client-wording.sh

# rtplacectl's tables in 80 columns by default, wider with the terminal.
TESTS += tests/integration/test-client-columns.sh
EXTRA_DIST += tests/integration/test-client-columns.sh

# Every command's --json output against the shapes rtplacectl(1) documents.
TESTS += tests/integration/test-client-json.sh
EXTRA_DIST += tests/integration/test-client-json.sh tests/lib/json-shapes.py

# README's and rtplacectl(1)'s examples against what the clients print.
TESTS += tests/integration/test-client-docs.sh
EXTRA_DIST += tests/integration/test-client-docs.sh

# rtplacectl claims and rtplace-run's refusal: claims' owners as root, the
# owner's uid, another uid and another PID namespace may see them.
TESTS += tests/integration/test-client-claims.sh
EXTRA_DIST += tests/integration/test-client-claims.sh

# rtplacectl explain against the daemon (simulated): its answer is the next
# query's, a claim's holder shown as the caller may see it, the thread's
# RLIMIT_RTPRIO with its fix.
TESTS += tests/integration/test-client-explain.sh
EXTRA_DIST += tests/integration/test-client-explain.sh

# The peer a connection judges, with SO_PEERPIDFD (Linux 6.5) and, on an
# older kernel, by its pid (the fallback the log names): rights re-read at
# each request, and never lent by an exited peer to its socket's heir.
# The acceptor thread on a real socket: hand-over, stop with a full pipe,
# refusals past the rate (as root).
check_PROGRAMS += tests/integration/test-acceptor
tests_integration_test_acceptor_SOURCES = tests/integration/test-acceptor.c
tests_integration_test_acceptor_CPPFLAGS = $(TEST_DAEMON_CPPFLAGS)
tests_integration_test_acceptor_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_acceptor_LDADD = daemon/libdaemoncore.la $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/integration/test-acceptor

check_PROGRAMS += tests/integration/test-daemon-peer-pidfd
tests_integration_test_daemon_peer_pidfd_SOURCES = tests/integration/test-daemon-peer-pidfd.c
tests_integration_test_daemon_peer_pidfd_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_integration_test_daemon_peer_pidfd_CFLAGS = $(UNIT_CFLAGS)
tests_integration_test_daemon_peer_pidfd_LDADD = tests/lib/libharness.la $(UNIT_LDADD)
TESTS += tests/integration/test-daemon-peer-pidfd

# librtplace exports rtplace.h's functions only, each at its release's version node.
TESTS += tests/integration/test-client-exports.sh
EXTRA_DIST += tests/integration/test-client-exports.sh

# A claim the state file cannot hold: refused, and never published.
TESTS += tests/integration/test-client-claim-persist.sh
EXTRA_DIST += tests/integration/test-client-claim-persist.sh

# What a client gets before the daemon drops it: an ERROR, never a reset.
TESTS += tests/integration/test-daemon-drops.sh
EXTRA_DIST += tests/integration/test-daemon-drops.sh

# Local reads write no memory threads share: after warm-up every mapping
# the process had is read-only while threads query locally.
check_PROGRAMS += tests/integration/test-local-noshare
tests_integration_test_local_noshare_SOURCES = tests/integration/test-local-noshare.c
tests_integration_test_local_noshare_CPPFLAGS = $(TEST_CLIENT_CPPFLAGS)
tests_integration_test_local_noshare_CFLAGS = $(UNIT_CFLAGS) $(PTHREAD_CFLAGS)
tests_integration_test_local_noshare_LDADD = client/librtplace.la tests/lib/libharness.la $(UNIT_LDADD) $(PTHREAD_LIBS)
TESTS += tests/integration/test-local-noshare
