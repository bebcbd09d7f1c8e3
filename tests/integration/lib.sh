# shellcheck shell=bash
# Set-up shared by the integration scripts. Source it from the repository root
# with IT_NAME (the label of the tally line) and IT_TMP (the name of the
# work directory under /tmp) set. Gives BIN, THP, WORK, STATE, the PASS/FAIL/
# SKIP counters (ok, ko, sk, finish), thp_snapshot, leftover_domains, and an
# EXIT trap that removes thpeval domains, restores the host from the journal
# and deletes WORK.
BIN=${THPEVAL_BIN:-$PWD/bin/thpeval}
THP=/sys/kernel/mm/transparent_hugepage
WORK=$(mktemp -d "/tmp/$IT_TMP.XXXXXX")
STATE=$WORK/state
pass=0 fail=0 skip=0

ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
sk() { echo "SKIP: $1"; skip=$((skip + 1)); }

# the tally line; exit 1 on a failure, 77 when every check skipped (nothing on
# this machine for the script to test: tests/run-stage.sh counts it as skipped)
finish() {
	echo "$IT_NAME: $pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ] || exit 1
	[ "$pass" -eq 0 ] && [ "$skip" -gt 0 ] && exit 77
	exit 0
}

# every host THP knob thpeval may touch, per-size ones included, as name=value lines
thp_snapshot() {
	local f
	for f in "$THP"/enabled "$THP"/defrag "$THP"/use_zero_page "$THP"/shmem_enabled \
		"$THP"/khugepaged/defrag "$THP"/hugepages-*/enabled; do
		[ -r "$f" ] && printf '%s=%s\n' "${f#"$THP"/}" "$(cat "$f")"
	done
	# the fragmented-host arm turns proactive compaction off for a while, its undo
	# lowers the per-CPU free lists' high marks for a few seconds
	for f in /proc/sys/vm/compaction_proactiveness /proc/sys/vm/percpu_pagelist_high_fraction; do
		[ -r "$f" ] && printf "%s=%s\n" "${f##*/}" "$(cat "$f")"
	done
	return 0
}

leftover_domains() { virsh -c qemu:///system list --all --name 2>/dev/null | grep '^thpeval-' || true; }

it_cleanup() {
	for d in $(leftover_domains); do
		virsh -c qemu:///system destroy "$d" >/dev/null 2>&1
		virsh -c qemu:///system undefine "$d" >/dev/null 2>&1
	done
	"$BIN" host restore --state-dir="$STATE" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap it_cleanup EXIT
