#!/bin/bash
# The results disk full or not writable: a clear one-line error, a non-zero
# exit, earlier result files intact, no temporary left behind. A small tmpfs
# plays the full disk (needs root to mount); a read-only bind mount plays the
# unwritable one.
source "$(dirname "$0")/lib.inc"
cli_init "$0"
cli_need_bin
[ "$(id -u)" -eq 0 ] || cli_skip "mounting a small tmpfs needs root"
command -v jq >/dev/null || cli_skip "jq is missing"
cli_workdir
FIX=tests/orchestrator/fixtures/results-tcg-2x2.json
MNT=$WORK/disk
mkdir -p "$MNT"
mount -t tmpfs -o size=256k tmpfs "$MNT" || cli_skip "cannot mount a tmpfs here"
trap 'umount "$MNT" 2>/dev/null; umount "$WORK/ro" 2>/dev/null; cli_cleanup' EXIT

# an earlier, complete set of reports
"$THPEVAL" report "$FIX" --format=json,csv --out="$MNT/run" >/dev/null 2>"$WORK/e0"
if [ $? -eq 0 ] && [ -s "$MNT/run/results.json" ]; then ok "earlier reports written"; else
	not_ok "earlier reports: $(cat "$WORK/e0")"; fi
sum0=$(cd "$MNT/run" && sha256sum results.json results.csv)

# fill the disk, then write again: every format
dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null
"$THPEVAL" report "$FIX" --format=json,csv,html,junit --out="$MNT/run" >"$WORK/o1" 2>"$WORK/e1"
rc=$?
[ $rc -ne 0 ] && ok "disk full: non-zero exit ($rc)" || not_ok "disk full: exit 0"
[ "$(wc -l <"$WORK/e1")" -eq 1 ] && grep -q '^thpeval: error: .*No space left on device' "$WORK/e1" &&
	ok "disk full: one-line error: $(cat "$WORK/e1")" || not_ok "disk full: stderr: $(cat "$WORK/e1")"
sum1=$(cd "$MNT/run" && sha256sum results.json results.csv)
[ "$sum0" = "$sum1" ] && ok "disk full: earlier result files intact" || not_ok "disk full: earlier files changed"
left=$(find "$MNT/run" -name '*.tmp*' | wc -l)
[ "$left" -eq 0 ] && ok "disk full: no temporary file left" || not_ok "disk full: $left temporary files left"
[ ! -e "$MNT/run/report.html" ] && ok "disk full: no partial report.html" || not_ok "disk full: a partial report.html exists"

# not writable: a read-only bind mount of the same directory
rm -f "$MNT/filler"
mkdir -p "$WORK/ro"
if mount --bind -o ro "$MNT/run" "$WORK/ro" 2>/dev/null || { mount --bind "$MNT/run" "$WORK/ro" && mount -o remount,bind,ro "$WORK/ro"; }; then
	"$THPEVAL" report "$FIX" --format=json --out="$WORK/ro" >/dev/null 2>"$WORK/e2"
	rc=$?
	[ $rc -ne 0 ] && [ "$(wc -l <"$WORK/e2")" -eq 1 ] && grep -q 'Read-only file system' "$WORK/e2" &&
		ok "read-only: one-line error ($(cat "$WORK/e2"))" || not_ok "read-only: exit $rc: $(cat "$WORK/e2")"
	sum2=$(cd "$MNT/run" && sha256sum results.json results.csv)
	[ "$sum0" = "$sum2" ] && ok "read-only: earlier result files intact" || not_ok "read-only: files changed"
else
	skipped "read-only bind mount not possible here"
fi
cli_summary
