#!/bin/sh
# mkinitramfs.sh OUT [KVER]: build the smoke-test initramfs for test_virt.
# OUT gets a gzip'ed newc cpio with a static /init (smoke_init.c) and the
# virtio modules of kernel KVER (default: the newest /boot/vmlinuz-*).
# Prints the matching kernel image path on stdout. Run from the repo root.
# Exit 77: the machine lacks a part (a kernel and its modules, a static libc,
# cpio), the reason on stderr; test_virt skips. Any other failure, e.g. the
# init not compiling, is thpeval's and fails the test.
set -eu
lacks() {
	echo "mkinitramfs.sh: $*" >&2
	exit 77
}

out=${1:?usage: mkinitramfs.sh OUT [KVER]}
kver=${2:-}
if [ -z "$kver" ]; then
	kernel=$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1)
	[ -n "$kernel" ] || lacks "no /boot/vmlinuz-*: install linux-image-amd64"
	kver=${kernel#/boot/vmlinuz-}
fi
kernel=/boot/vmlinuz-$kver
[ -r "$kernel" ] || lacks "cannot read '$kernel'"
moddir=/lib/modules/$kver
[ -d "$moddir" ] || lacks "no '$moddir': install the modules of $kver"
command -v cpio >/dev/null 2>&1 || lacks "no cpio: apt-get install cpio"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root/dev" "$root/sys" "$root/proc" "$root/modules"

# a static libc is the machine's part; the init and what it links are ours
printf 'int main(void) { return 0; }\n' >"$tmp/probe.c"
${CC:-cc} -static -o "$tmp/probe" "$tmp/probe.c" 2>/dev/null || lacks "${CC:-cc} cannot link a static program: apt-get install libc6-dev"
${CC:-cc} -std=gnu11 -O2 -static -D_GNU_SOURCE -I. -o "$root/init" \
	tests/orchestrator/smoke_init.c lib/record.c lib/err.c -lm

# load order = dependency order; built-in (=y) ones have no .ko and are skipped
i=10
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_console; do
	f=$(find "$moddir/kernel" -name "$m.ko*" 2>/dev/null | head -n 1)
	if [ -n "$f" ]; then
		case $f in
		*.ko) cp "$f" "$root/modules/$i-$m.ko" ;;
		*.ko.xz) xz -dc "$f" >"$root/modules/$i-$m.ko" ;;
		*.ko.zst) zstd -qdc "$f" >"$root/modules/$i-$m.ko" ;;
		*.ko.gz) gzip -dc "$f" >"$root/modules/$i-$m.ko" ;;
		esac
	fi
	i=$((i + 1))
done

(cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$tmp/initrd"
mv "$tmp/initrd" "$out"
chmod 0644 "$out"
echo "$kernel"
