#!/bin/bash
# Fault injection against real guests: a guest that hangs (per-guest timeout),
# QEMU killed mid-workload, libvirtd restarted mid-run. Each must leave a
# consistent results.json, no domain behind, the host restored, and the rest
# of the run going on. Last line: "faults: N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.." || exit 1
IT_NAME=faults IT_TMP=thpeval-faults
. tests/integration/lib.sh
ours() { virsh -c qemu:///system list --all --name 2>/dev/null | grep "^thpeval-$1-" || true; }
if [ "$(id -u)" -ne 0 ] || [ ! -w "$THP/enabled" ]; then
	sk "fault tests need root and a writable host THP sysfs"
	finish
fi
tools/services.sh || { ko "libvirtd could not be started"; finish; }
ARGS="--guest-thp=always --memory=512M --size=32M --state-dir=$STATE --db=none"

wait_for() {	# file pattern pid seconds
	for _ in $(seq 1 $(($4 * 5))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# ---- 1. a guest that never finishes: the per-guest timeout destroys it ----------------
before=$(thp_snapshot)
timeout -k 10 300 "$BIN" run --host-thp=always $ARGS --reps=1 --warmup=0 --accesses=1000000000 --timeout=25s --out="$WORK/hang" \
	>/dev/null 2>"$WORK/hang.err"
rc=$?
J=$WORK/hang/results.json
reason=$(jq -r '[.cells[].failures[]] | .[0] // ""' "$J" 2>/dev/null)
[ -s "$J" ] && echo "$reason" | grep -q "did not finish within 25 s" &&
	ok "hung guest: cells failed with the reason ($reason)" || ko "hung guest: rc=$rc reason='$reason'"
[ "$(jq '[.guests[] | select(.status == "timeout")] | length' "$J" 2>/dev/null)" = 2 ] &&
	ok "hung guest: both guests timed out, the second still ran" || ko "hung guest: guest statuses wrong"
[ "$(thp_snapshot)" = "$before" ] && ok "hung guest: host restored" || ko "hung guest: host not restored"
[ -z "$(ours '[0-9]*')" ] && ok "hung guest: no domain left" || ko "hung guest: domains left"

# ---- 2. QEMU killed mid-workload: that guest's cells fail, the next group runs ----------
before=$(thp_snapshot)
timeout -k 10 600 "$BIN" run --host-thp=always $ARGS --reps=3 --warmup=0 --accesses=3000000 --out="$WORK/kill" >/dev/null 2>"$WORK/kill.err" &
pid=$!
tpid=
if wait_for "$WORK/kill.err" "rep 1 done" $pid 300; then
	tpid=$(pgrep -P $pid | head -1)	# thpeval under timeout(1): its pid names the guests
	qpid=$(pgrep -f "guest=thpeval-$tpid-0," | head -1)
	[ -n "$qpid" ] && kill -KILL "$qpid"
fi
wait $pid
rc=$?
J=$WORK/kill/results.json
if [ -s "$J" ]; then
	first=$(jq -r '.guests[0].host_thp' "$J")
	err=$(jq -r '.guests[0].error // ""' "$J")
	echo "$err" | grep -q "stopped before it finished" && ok "QEMU killed: guest failed with the reason ($err)" ||
		ko "QEMU killed: guest 0 error '$err'"
	n2=$(jq --arg h "$first" '[.cells[] | select(.host_thp != $h) | .reps_ok] | add // 0' "$J")
	[ "$n2" -ge 2 ] && ok "QEMU killed: the next host group still ran ($n2 repetitions)" || ko "QEMU killed: next group did not run"
	[ "$rc" -eq 0 ] && ok "QEMU killed: the run completed (exit 0), results consistent" || ko "QEMU killed: exit $rc"
else
	ko "QEMU killed: no results.json (exit $rc): $(tail -2 "$WORK/kill.err")"
fi
[ "$(thp_snapshot)" = "$before" ] && ok "QEMU killed: host restored" || ko "QEMU killed: host not restored"
[ -n "$tpid" ] && [ -z "$(ours $tpid)" ] && ok "QEMU killed: no domain left" || ko "QEMU killed: domains left (or pid unknown)"

# ---- 3. libvirtd restarted mid-run: reconnect, clean up the lost guest, continue --------
before=$(thp_snapshot)
timeout -k 10 600 "$BIN" run --host-thp=always $ARGS --reps=2 --warmup=0 --accesses=100000 --out="$WORK/lv" >/dev/null 2>"$WORK/lv.err" &
pid=$!
tpid=
if wait_for "$WORK/lv.err" "is up" $pid 300; then
	tpid=$(pgrep -P $pid | head -1)
	pkill -TERM -x libvirtd
	for _ in $(seq 1 50); do pgrep -x libvirtd >/dev/null || break; sleep 0.1; done
	sleep 2
	tools/services.sh
fi
wait $pid
rc=$?
J=$WORK/lv/results.json
if grep -q "reconnected to libvirtd" "$WORK/lv.err"; then
	ok "libvirtd restart: reconnected ($(grep -o 'reconnected to libvirtd after [0-9.]* s' "$WORK/lv.err"))"
	n2=$(jq '[.cells[].reps_ok] | add // 0' "$J" 2>/dev/null)
	[ "${n2:-0}" -ge 2 ] && ok "libvirtd restart: the run went on ($n2 repetitions)" || ko "libvirtd restart: nothing measured after"
elif [ "$rc" -ne 0 ] && [ "$(wc -l <"$WORK/lv.err")" -ge 1 ]; then
	ok "libvirtd restart: clean failure: $(tail -1 "$WORK/lv.err")"
else
	ko "libvirtd restart: exit $rc without reconnecting: $(tail -2 "$WORK/lv.err")"
fi
[ "$(thp_snapshot)" = "$before" ] && ok "libvirtd restart: host restored" || ko "libvirtd restart: host not restored"
sleep 1
[ -n "$tpid" ] && [ -z "$(ours $tpid)" ] && ok "libvirtd restart: no domain left" ||
	ko "libvirtd restart: domains left (or pid unknown): $(ours "$tpid")"
finish
