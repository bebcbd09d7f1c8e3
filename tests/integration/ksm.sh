#!/bin/bash
# The KSM arm on a real host (--ksm=on --guests=2): KSM merges the guests' RAM
# (pages_sharing above 0 in results.json), the on arm's domains have no
# <nosharepages/>, and KSM's knobs (run, pages_to_scan, sleep_millisecs) are
# identical before and after the run, and after a SIGKILL once 'thpeval host
# restore' has run; the next run reaps the killed run's guests. Boots guests:
# run it alone (flock /tmp/thpeval-guests.lock). The last line is "ksm: N
# passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.." || exit 1
IT_NAME=ksm IT_TMP=thpeval-ksm
. tests/integration/lib.sh

KSM=/sys/kernel/mm/ksm
if [ "$(id -u)" -ne 0 ]; then
	sk "the KSM arm needs root (libvirtd qemu:///system, KSM and THP writes)"
	finish
fi
if [ ! -w "$KSM/run" ]; then
	sk "this host has no writable $KSM (CONFIG_KSM off): thpeval refuses --ksm here"
	finish
fi
if ! tools/services.sh; then
	ko "libvirtd could not be started"
	finish
fi

ksm_snapshot() {
	local f
	for f in run pages_to_scan sleep_millisecs; do
		printf '%s=%s\n' "$f" "$(cat "$KSM/$f")"
	done
	thp_snapshot
}

RUNARGS="--host-thp=always --ksm=on --guests=2 --workloads=memset --boots=1 --target-ci=none --reps=3 --warmup=1
	--cold-reps=0 --memory=512M --size=64M --accesses=300000 --timeout=10m --state-dir=$STATE --db=none"
LIMIT=2700 STALL=720

# ---- 1. a run: KSM merges, knobs put back ---------------------------------------------
before=$(ksm_snapshot)
# shellcheck disable=SC2086
it_run $LIMIT $STALL "$WORK/r1.out" "$WORK/r1.err" "$BIN" run $RUNARGS --out="$WORK/r1"
rc=$it_rc
after=$(ksm_snapshot)
J=$WORK/r1/results.json
if it_over "KSM run"; then :; elif [ "$rc" -eq 0 ] && [ -s "$J" ]; then ok "--ksm=on --guests=2 exits 0"; else
	ko "run exit $rc; stderr: $(tail -3 "$WORK/r1.err")"; fi
[ "$before" = "$after" ] && ok "KSM and THP knobs identical before and after" ||
	ko "knobs changed: before [$before] after [$after]"
if [ -z "$it_stop" ] && [ -s "$J" ]; then
	n=$(jq '[.ksm[] | select(.ksm == "on")] | length' "$J")
	[ "$n" = 2 ] && ok "a KSM series per host group (never, always)" || ko "KSM series: $n"
	sharing=$(jq '[.ksm[].pages_sharing_max] | max' "$J")
	[ "${sharing:-0}" -gt 0 ] && ok "KSM merged the guests' RAM (pages_sharing up to $sharing)" ||
		ko "pages_sharing stayed 0"
	ns=$(jq '[.ksm[] | .series | length] | min' "$J")
	[ "${ns:-0}" -ge 2 ] && ok "counters sampled over time ($ns samples or more per group)" || ko "series: $ns"
	nc=$(jq '[.ksm[] | [.coverage[].guest] | unique | length] | min' "$J")
	[ "$nc" = 2 ] && ok "both guests' host coverage sampled" || ko "guests with coverage: $nc"
	cs=$(jq -r '[.cells[] | .host_state] | unique | join(",")' "$J")
	[ "$cs" = ksm ] && ok "cells of host state ksm" || ko "cell host states: $cs"
	if grep -l nosharepages "$WORK"/r1/guests/*.xml >/dev/null 2>&1; then
		ko "an on-arm domain has <nosharepages/>"
	else
		ok "the on arm's domains have no <nosharepages/>"
	fi
fi

# ---- 2. SIGKILL with KSM changed: 'thpeval host restore' puts it back -----------------
before=$(ksm_snapshot)
# shellcheck disable=SC2086
it_start $LIMIT $STALL /dev/null "$WORK/r2.err" "$BIN" run $RUNARGS --out="$WORK/r2"
it_wait_for "KSM started"
w=$?
kill -KILL "$it_pid" 2>/dev/null
wait "$it_pid" 2>/dev/null
mid=$(ksm_snapshot)
if it_over "SIGKILL: waiting for KSM to start"; then
	"$BIN" host restore --state-dir="$STATE" >/dev/null 2>&1
elif [ "$w" -ne 0 ]; then
	ko "SIGKILL: the run ended before it started KSM: $(tail -2 "$WORK/r2.err")"
else
	[ "$mid" != "$before" ] && ok "SIGKILL: the killed run left KSM changed" || ko "SIGKILL: nothing changed"
	"$BIN" host restore --state-dir="$STATE" >"$WORK/restore.out" 2>&1
	after=$(ksm_snapshot)
	[ "$before" = "$after" ] && ok "SIGKILL: 'thpeval host restore' restored KSM ($(cat "$WORK/restore.out"))" ||
		ko "SIGKILL: knobs not restored: $after"
fi
# the next run (one guest, no KSM) reaps the killed run's guests
it_run 1800 720 /dev/null "$WORK/r3.err" "$BIN" run --host-thp=never --guest-thp=never --boots=1 --reps=1 --warmup=0 \
	--cold-reps=0 --memory=512M --size=16M --accesses=10000 --timeout=10m --target-ci=none --state-dir="$STATE" \
	--db=none --out="$WORK/r3"
rc=$it_rc
if it_over "next run after SIGKILL"; then :; else
	[ "$rc" -eq 0 ] && [ -z "$(leftover_domains)" ] && ok "next run reaps the killed run's guests and succeeds" ||
		ko "next run: exit $rc, left: $(leftover_domains); $(tail -2 "$WORK/r3.err")"
fi

finish
