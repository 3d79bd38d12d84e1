# SPDX-License-Identifier: GPL-2.0-or-later
# A private system bus, sourced by the RealtimeKit tests
# (tests/integration/test-rtkit-common.sh) and bench
# (bench/rtkit-roundtrip.sh): neither touches the machine's own bus.

# bus_start SOCKET [XML]: a dbus-daemon listening on SOCKET with Debian's
# system bus defaults (anyone may connect and talk to the bus itself,
# nothing else), then XML, the policy of who may own and call what; its
# configuration is SOCKET.conf. Adds its pid to PIDS and returns once it
# listens; 1 when it did not within 10 s.
bus_start() {
	cat >"$1.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$1</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus"/>
  </policy>
  ${2:-}
</busconfig>
CONF
	rm -f "$1.addr"
	# Not holding the caller's RT-test lock (descriptor 9) for its life.
	dbus-daemon --config-file="$1.conf" --nofork --print-address=3 3>"$1.addr" 9>&- &
	PIDS="$PIDS $!"
	bus_i=0
	until [ -s "$1.addr" ]; do
		bus_i=$((bus_i + 1))
		[ $bus_i -lt 200 ] || return 1
		sleep 0.05
	done
}
