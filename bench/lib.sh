# Sourced by the bench scripts that boot guests (run.sh, calibration.sh): root
# or a skip, a work directory removed on exit, and the guest image built first
# so that its build is not timed.
# bench_guest_setup WHO SKIP_STATUS TAG: exits SKIP_STATUS when not root; sets
# WORK (/tmp/thpeval-TAG.XXXXXX); needs BIN.
bench_guest_setup() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "$1: needs root (libvirtd qemu:///system); skipped" >&2
		exit "$2"
	fi
	WORK=$(mktemp -d "/tmp/thpeval-$3.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
	"$BIN" image build >/dev/null 2>"$WORK/image.err" || { cat "$WORK/image.err" >&2; exit 1; }
}
