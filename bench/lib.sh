# shellcheck shell=bash
# Sourced by the bench scripts that boot guests (run.sh, calibration.sh): root
# or a skip, libvirtd started where it is not running (tools/services.sh), a work
# directory removed on exit, and the guest image built first so that its build is
# not timed.
# bench_guest_setup WHO SKIP_STATUS TAG: exits SKIP_STATUS when not root; sets
# WORK (/tmp/thpeval-TAG.XXXXXX); needs BIN.
bench_guest_setup() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "$1: needs root (libvirtd qemu:///system); skipped" >&2
		exit "$2"
	fi
	tools/services.sh || { echo "$1: libvirtd could not be started" >&2; exit 1; }
	WORK=$(mktemp -d "/tmp/thpeval-$3.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
	"$BIN" image build >/dev/null 2>"$WORK/image.err" || { cat "$WORK/image.err" >&2; exit 1; }
}
