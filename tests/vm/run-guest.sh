#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Boots one Debian kernel in a qemu guest and runs a command in it as root,
# against this machine's own files:
#
#   tests/vm/run-guest.sh [--cpus N] [--nodes N] [--sockets N] [--mem MiB]
#                         [--append "KERNEL ARGS"] [--timeout SECONDS]
#                         --kernel NAME --out DIR -- COMMAND...
#
# NAME is a kernel fetched by tests/vm/kernels.sh (6.1, 6.1-rt, 6.12,
# 6.12-rt). COMMAND runs under bash in the guest, in the folder this script
# was started from, with DIR (created, emptied) mounted at the same path and
# writable: what the command writes there is what comes back. The guest's
# console goes to DIR/console.log, the command's output to DIR/output.log and
# its exit status to DIR/rc. This script exits with the command's status, or
# 99 if the guest did not run it to the end (boot failure, panic, timeout).
#
# Why this shape: the guest boots a busybox initramfs with only the kernel's
# own 9p, virtio and overlay modules, mounts this machine's / read-only over
# 9p under a RAM overlay, and switches to it. Every binary, library and build
# tree of the host then runs in the guest unchanged, nothing is copied or
# installed (an image would need rebuilding for every build), and what the
# guest writes never reaches the host's files except through DIR.
#
# TCG runs one thread (thread=single): multi-threaded TCG crashed 6.12
# guests with "Oops: int3" while kernel text was patched for BPF
# tracepoints. The CPU model keeps to what these kernels boot clean on when
# NUMA nodes split a socket (max with la57 and the L3 cache leaf off).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cpus=8 nodes=4 sockets=2 mem=4096 append="" timeout=900 kernel="" out=""
usage() {
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
	exit 64
}
while [ $# -gt 0 ]; do
	case $1 in
	--cpus) cpus=$2; shift 2 ;;
	--nodes) nodes=$2; shift 2 ;;
	--sockets) sockets=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--) shift; break ;;
	-h | --help) usage ;;
	*) echo "run-guest: unknown argument '$1'" >&2; usage ;;
	esac
done
[ -n "$kernel" ] && [ -n "$out" ] && [ $# -gt 0 ] || usage
for n in cpus nodes sockets mem timeout; do
	case ${!n} in '' | *[!0-9]*) echo "run-guest: --$n takes a positive number, not '${!n}'" >&2; exit 64 ;; esac
done
if [ $((cpus % nodes)) -ne 0 ] || [ $((cpus % sockets)) -ne 0 ] || [ $((mem % nodes)) -ne 0 ]; then
	echo "run-guest: $cpus CPUs and $mem MiB must divide evenly into $nodes nodes and $sockets sockets" >&2
	exit 64
fi

kdir=$("$here/kernels.sh" path "$kernel") || exit 1
version=$(ls "$kdir/lib/modules")
mkdir -p "$out"
out=$(cd "$out" && pwd)
find "$out" -mindepth 1 -delete
work=$(mktemp -d /var/tmp/rtplace-vm.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The initramfs: busybox and the modules (with what they depend on, in
# load order) that reach the host's files.
root=$work/initramfs
mkdir -p "$root/bin" "$root/modules" "$root/proc" "$root/sys" "$root/dev" "$root/host" \
	"$root/upper" "$root/new"
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
moddir=$kdir/lib/modules/$version
loaded=" "
add_module() {
	local rel=$1 dep
	case $loaded in *" $rel "*) return ;; esac
	for dep in $(sed -n "s|^$rel: *||p" "$moddir/modules.dep"); do
		add_module "$dep"
	done
	loaded="$loaded$rel "
	local name
	name=$(basename "${rel%.xz}")
	case $rel in
	*.xz) xz -dc "$moddir/$rel" >"$root/modules/$name" ;;
	*) cp "$moddir/$rel" "$root/modules/$name" ;;
	esac
	echo "$name" >>"$root/modules/order"
}
: >"$root/modules/order"
for m in virtio_pci 9pnet_virtio 9p overlay; do
	rel=$(grep -oE "^kernel/[^:]*/$m\.ko(\.xz)?:" "$moddir/modules.dep" | tr -d :) || true
	# Built into this kernel: nothing to load.
	[ -z "$rel" ] || add_module "$rel"
done

cat >"$root/init" <<'EOF'
#!/bin/sh
# Mounts the host's / (read-only, 9p) under a RAM overlay and runs the
# command from the shared folder there; powers off whatever happens.
export PATH=/bin
busybox mount -t proc proc /proc
busybox mount -t sysfs sys /sys
busybox mount -t devtmpfs dev /dev
for m in $(busybox cat /modules/order); do
	busybox insmod /modules/$m || echo "init: insmod $m failed"
done
fail() { echo "init: $*"; busybox poweroff -f; }
busybox mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=524288 hostroot /host ||
	fail "cannot mount the host's files"
busybox mount -t tmpfs -o mode=0755 upper /upper
busybox mkdir -p /upper/rw /upper/work
busybox mount -t overlay -o lowerdir=/host,upperdir=/upper/rw,workdir=/upper/work overlay /new ||
	fail "cannot mount the overlay"
out=$(busybox cat /proc/cmdline | busybox sed -n 's/.*rtplace.out=\([^ ]*\).*/\1/p')
busybox mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 results /new$out ||
	fail "cannot mount the results folder"
busybox umount /proc /sys /dev
exec busybox switch_root /new /bin/bash "$out/.guest-init"
EOF
chmod 0755 "$root/init"

# Runs inside the switched root: the usual mounts, then the command.
cat >"$out/.guest-init" <<EOF
#!/bin/bash
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t tmpfs -o mode=0755 run /run
mount -t bpf bpf /sys/fs/bpf
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs -o mode=0755 cgroup /sys/fs/cgroup
mkdir -p /sys/fs/cgroup/unified && mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified
hostname rtplace-vm
ip link set lo up 2>/dev/null
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
export RTPLACE_VM_KERNEL=$kernel
cd $(printf %q "$PWD")
bash $(printf %q "$out/.guest-cmd") >$(printf %q "$out/output.log") 2>&1
echo \$? >$(printf %q "$out/rc")
sync
# The power-off runs from a work queue: wait for it rather than exit.
echo o >/proc/sysrq-trigger
sleep 60
EOF
{
	printf '%q ' "$@"
	echo
} >"$out/.guest-cmd"

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initramfs.gz"

numa=()
per_node=$((cpus / nodes))
for ((n = 0; n < nodes; n++)); do
	numa+=(-object "memory-backend-ram,id=m$n,size=$((mem / nodes))M"
		-numa "node,nodeid=$n,cpus=$((n * per_node))-$(((n + 1) * per_node - 1)),memdev=m$n")
done

start=$(date +%s.%N)
rc=0
timeout -s KILL "$timeout" qemu-system-x86_64 \
	-accel tcg,thread=single -cpu max,la57=off,vendor=GenuineIntel,l3-cache=off \
	-m "$mem" -smp "$cpus,sockets=$sockets,cores=$((cpus / sockets)),threads=1" "${numa[@]}" \
	-kernel "$kdir/boot/vmlinuz-$version" -initrd "$work/initramfs.gz" \
	-append "console=ttyS0 panic=-1 loglevel=4 sysrq_always_enabled rtplace.out=$out $append" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$out,mount_tag=results,security_model=none,multidevs=remap" \
	-display none -serial "file:$out/console.log" -monitor none -no-reboot -nodefaults \
	|| rc=$?
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f\n", e - s }' >"$out/seconds"
if [ ! -s "$out/rc" ]; then
	echo "run-guest: $kernel: the guest did not finish the command (qemu exit $rc); its console:" >&2
	tail -30 "$out/console.log" >&2
	exit 99
fi
exit "$(cat "$out/rc")"
