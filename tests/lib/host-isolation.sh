# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the tests that isolate CPUs of this machine (root): saves
# every interrupt's affinity and the unbound workqueue mask into $SAVED
# (a folder under $TMP), and host_restore writes them back, for the test's
# EXIT trap. Needs $wq, the workqueue mask's path.

host_save() {
	SAVED=$TMP/saved
	mkdir "$SAVED" || fail "mkdir $SAVED"
	for f in /proc/irq/*/smp_affinity_list; do
		n=${f#/proc/irq/}
		cat "$f" > "$SAVED/irq.${n%%/*}" 2>/dev/null
	done
	cat "$wq" > "$SAVED/wq" || fail "cannot read $wq"
}

host_restore() {
	for f in "$SAVED"/irq.*; do
		[ -f "$f" ] && cat "$f" > "/proc/irq/${f##*.}/smp_affinity_list" 2>/dev/null
	done
	[ -f "$SAVED/wq" ] && cat "$SAVED/wq" > "$wq"
}
