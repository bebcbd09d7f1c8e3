#!/bin/bash
# Integration tests of the recovery arms: a collapse-khugepaged run with
# --khugepaged (the arm's figures in results.json, khugepaged's knobs the same
# before and after), the same with collapse-madvise, and a run SIGKILLed while
# its --khugepaged knobs are in place, put back by 'thpeval host restore'.
# Real TCG guests, small: a few minutes. Not in tests/cli: it boots guests and
# changes host settings (run it under flock /tmp/thpeval-guests.lock where
# guests are shared). Each check prints PASS/FAIL/SKIP; the last line is the tally.
set -u
cd "$(dirname "$0")/../.." || exit 1
IT_NAME=recovery IT_TMP=thpeval-recovery
. tests/integration/lib.sh
KHP=$THP/khugepaged

# khugepaged's settings (not its counters), as name=value lines
khp_snapshot() {
	local f
	for f in pages_to_scan scan_sleep_millisecs alloc_sleep_millisecs defrag max_ptes_none max_ptes_swap \
		max_ptes_shared; do
		[ -r "$KHP/$f" ] && printf '%s=%s\n' "$f" "$(cat "$KHP/$f")"
	done
	return 0
}

if [ "$(id -u)" -ne 0 ] || [ ! -w "$THP/enabled" ]; then
	sk "recovery tests need root and a writable host THP sysfs"
	finish
fi
if [ ! -d "$KHP" ]; then
	sk "this host has no $KHP: the khugepaged arm is refused here"
	finish
fi
tools/services.sh || { ko "libvirtd could not be started"; finish; }

RUNARGS="--host-thp=always --workloads=memset --boots=1 --target-ci=none --reps=2 --warmup=1 --cold-reps=0 --memory=1G --size=256M --accesses=300000 --timeout=10m --state-dir=$STATE --db=none --format=text,json,html"
LIMIT=3600 STALL=720
# values no host keeps by default, so a change is seen
PAGES=4093 SLEEP=97

# ---- 1. collapse-khugepaged: the figures, and the knobs the same after ----------------
before=$(khp_snapshot) thp_before=$(thp_snapshot)
# shellcheck disable=SC2086
it_run $LIMIT $STALL "$WORK/k.out" "$WORK/k.err" "$BIN" run $RUNARGS --host-state=collapse-khugepaged \
	--khugepaged=pages_to_scan=$PAGES,scan_sleep_millisecs=$SLEEP --recovery-timeout=150s --out="$WORK/k"
if it_over "collapse-khugepaged run"; then :; else
	R=$WORK/k/results.json
	[ "$it_rc" -eq 0 ] && ok "collapse-khugepaged: the run succeeded" || ko "collapse-khugepaged: exit $it_rc: $(tail -2 "$WORK/k.err")"
	[ "$(jq -r '[.recovery[] | select(.method == "khugepaged")] | length' "$R")" = 1 ] &&
		ok "collapse-khugepaged: one recovery entry (the always group; never does not recover)" ||
		ko "collapse-khugepaged: recovery entries: $(jq -c '[.recovery[] | .method]' "$R")"
	[ "$(jq -r '.recovery[0].khugepaged | "\(.pages_to_scan) \(.scan_sleep_millisecs) \(.knobs_set_by_run)"' "$R")" = "$PAGES $SLEEP true" ] &&
		ok "collapse-khugepaged: --khugepaged's knobs were in place and recorded" ||
		ko "collapse-khugepaged: recorded $(jq -c '.recovery[0].khugepaged' "$R")"
	[ "$(jq -r '.recovery[0].stopped_by != null and (.recovery[0].series | length) > 0' "$R")" = true ] &&
		ok "collapse-khugepaged: a coverage series and what stopped it ($(jq -r '.recovery[0].stopped_by' "$R"))" ||
		ko "collapse-khugepaged: no series or stop reason"
	[ "$(jq -r '.recovery[0].access.passes_before > 0 and .recovery[0].access.passes_after > 0' "$R")" = true ] &&
		ok "collapse-khugepaged: access passes before and after the interval" ||
		ko "collapse-khugepaged: passes $(jq -c '.recovery[0].access | {passes_before, passes_during, passes_after}' "$R")"
	grep -q '^recovery:' "$WORK/k/results.txt" && grep -q 'id="recovery"' "$WORK/k/report.html" &&
		ok "collapse-khugepaged: in the text and HTML reports" || ko "collapse-khugepaged: missing from a report"
fi
[ "$(khp_snapshot)" = "$before" ] && [ "$(thp_snapshot)" = "$thp_before" ] &&
	ok "collapse-khugepaged: khugepaged's and THP's knobs as before" ||
	ko "collapse-khugepaged: knobs changed: $(khp_snapshot | tr '\n' ' ')"

# ---- 2. collapse-madvise: the access passes there too ---------------------------------
# shellcheck disable=SC2086
it_run $LIMIT $STALL "$WORK/m.out" "$WORK/m.err" "$BIN" run $RUNARGS --host-state=collapse-madvise --out="$WORK/m"
if it_over "collapse-madvise run"; then :;
elif [ "$it_rc" -ne 0 ] && grep -q -- '--host-state=collapse-madvise:' "$WORK/m.err"; then
	sk "collapse-madvise: refused on this host: $(grep -- '--host-state=collapse-madvise:' "$WORK/m.err" | head -1)"
else
	R=$WORK/m/results.json
	[ "$it_rc" -eq 0 ] && ok "collapse-madvise: the run succeeded" || ko "collapse-madvise: exit $it_rc: $(tail -2 "$WORK/m.err")"
	[ "$(jq -r '[.recovery[] | select(.host_thp == "always") | .access.passes_after > 0] | all' "$R")" = true ] &&
		ok "collapse-madvise: access passes after the collapse" || ko "collapse-madvise: no passes after it"
fi

# ---- 3. SIGKILL with --khugepaged's knobs in place: 'thpeval host restore' ------------
before=$(khp_snapshot) thp_before=$(thp_snapshot)
# shellcheck disable=SC2086
it_start $LIMIT $STALL /dev/null "$WORK/s.err" "$BIN" run $RUNARGS --host-state=collapse-khugepaged \
	--khugepaged=pages_to_scan=$PAGES,scan_sleep_millisecs=$SLEEP --out="$WORK/s"
changed=no
while kill -0 "$it_pid" 2>/dev/null; do
	if [ "$(cat "$KHP/scan_sleep_millisecs")" = $SLEEP ]; then changed=yes; break; fi
	it_watch || break
	sleep 0.1
done
kill -KILL "$it_pid" 2>/dev/null
wait "$it_pid" 2>/dev/null
if it_over "SIGKILL: waiting for the run to set khugepaged"; then
	"$BIN" host restore --state-dir="$STATE" >/dev/null 2>&1
elif [ $changed = yes ]; then
	[ "$(cat "$KHP/pages_to_scan")" = $PAGES ] && ok "SIGKILL: the knobs stay changed after the kill (the journal has them)" ||
		ko "SIGKILL: pages_to_scan is $(cat "$KHP/pages_to_scan") after the kill"
	"$BIN" host restore --state-dir="$STATE" >"$WORK/restore.out" 2>&1
	[ "$(khp_snapshot)" = "$before" ] && [ "$(thp_snapshot)" = "$thp_before" ] &&
		ok "SIGKILL: 'thpeval host restore' put khugepaged's and THP's knobs back ($(cat "$WORK/restore.out"))" ||
		ko "SIGKILL: not restored: $(khp_snapshot | tr '\n' ' ')"
else
	ko "SIGKILL: the run never set khugepaged's knobs: $(tail -2 "$WORK/s.err")"
fi

finish
