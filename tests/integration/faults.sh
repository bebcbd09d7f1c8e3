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
ARGS="--boots=1 --guest-thp=always --memory=512M --size=32M --state-dir=$STATE --db=none"
# bounds (lib.sh it_run): every run here ends its guests itself within --timeout
# (5 minutes, 25 s in the hang test), so 7 minutes without a line on stderr is a hang
LIMIT=2400 STALL=420

# 0 when pid $1 has exited (gone, or a zombie its parent has not reaped yet)
pid_gone() { [ ! -d "/proc/$1" ] || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
# wait up to $2 s for pid $1 to exit
wait_gone() {
	local i
	for i in $(seq 1 $(($2 * 5))); do
		pid_gone "$1" && return 0
		[ "$i" -eq 1 ] || sleep 0.2
	done
	pid_gone "$1"
}
# wait up to $1 s for libvirtd to answer on qemu:///system
wait_libvirtd() {
	local i
	for i in $(seq 1 $(($1 * 5))); do
		virsh -c qemu:///system version >/dev/null 2>&1 && return 0
		[ "$i" -eq 1 ] || sleep 0.2
	done
	return 1
}
# tools/services.sh with no inherited descriptor above stderr: the libvirtd it
# starts must not hold this script's lock (flock's) or its callers' pipes
start_services() {
	(
		for fd in /proc/$BASHPID/fd/*; do
			n=${fd##*/}
			[ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"
		done
		exec tools/services.sh
	)
}

# ---- 1. a guest that never finishes: the per-guest timeout destroys it ----------------
# (no host-cold series: every cell waits on the hung access phase, so nothing is measured)
before=$(thp_snapshot)
# shellcheck disable=SC2086
it_run $LIMIT 300 /dev/null "$WORK/hang.err" "$BIN" run --host-thp=always $ARGS --reps=1 --warmup=0 \
	--accesses=1000000000 --cold-reps=0 --timeout=25s --out="$WORK/hang"
rc=$it_rc
J=$WORK/hang/results.json
if ! it_over "hung guest: thpeval's 25 s --timeout did not end the run"; then
	reason=$(jq -r '[.cells[].failures[]] | .[0] // ""' "$J" 2>/dev/null)
	[ -s "$J" ] && echo "$reason" | grep -q "did not finish within 25 s" &&
		ok "hung guest: cells failed with the reason ($reason)" || ko "hung guest: rc=$rc reason='$reason'"
	[ "$(jq '[.guests[] | select(.status == "timeout")] | length' "$J" 2>/dev/null)" = 2 ] &&
		ok "hung guest: both guests timed out, the second still ran" || ko "hung guest: guest statuses wrong"
	# nothing was measured: the run fails, with the first guest's error, its results kept
	[ "$rc" -eq 1 ] && [ "$(jq -r .status "$J" 2>/dev/null)" = failed ] &&
		grep -q "^thpeval: error: no repetition succeeded in any cell (guest thpeval-[0-9]*-0 did not finish within 25 s" "$WORK/hang.err" &&
		ok "hung guest: nothing measured, so the run failed (exit 1, status failed): $(grep '^thpeval: error: no repetition' "$WORK/hang.err" | cut -c1-160)" ||
		ko "hung guest: exit $rc, status $(jq -r .status "$J" 2>&1), $(grep '^thpeval: error:' "$WORK/hang.err")"
fi
[ "$(thp_snapshot)" = "$before" ] && ok "hung guest: host restored" || ko "hung guest: host not restored"
[ -z "$(ours "$it_pid")" ] && ok "hung guest: no domain left" || ko "hung guest: domains left: $(ours "$it_pid")"

# ---- 2. QEMU killed mid-workload: that guest's cells fail, the next group runs ----------
# QEMU's pid from libvirt's pidfile of the domain (thpeval names it thpeval-<its pid>-<index>)
before=$(thp_snapshot)
# shellcheck disable=SC2086
it_start $LIMIT $STALL /dev/null "$WORK/kill.err" "$BIN" run --host-thp=always $ARGS --reps=3 --warmup=0 \
	--accesses=3000000 --timeout=5m --out="$WORK/kill"
tpid=$it_pid
dom=thpeval-$tpid-0
killed=no
it_wait_for "rep 1 done"
case $? in
0)
	qpid=$(cat "/run/libvirt/qemu/$dom.pid" 2>/dev/null)
	if [ -n "$qpid" ] && tr '\0' ' ' <"/proc/$qpid/cmdline" 2>/dev/null | grep -q "guest=$dom,"; then
		kill -KILL "$qpid" && killed=yes
	else
		sk "QEMU killed: /run/libvirt/qemu/$dom.pid does not name $dom's QEMU (pid '$qpid'): libvirt keeps its pidfiles elsewhere here"
	fi
	;;
1) ko "QEMU killed: the run ended before its first 'rep 1 done': $(tail -2 "$WORK/kill.err")" ;;
*) ;;	# over a bound: it_finish stops it, it_over says so
esac
it_finish
rc=$it_rc
J=$WORK/kill/results.json
if it_over "QEMU killed"; then :; elif [ $killed = no ]; then :; elif [ -s "$J" ]; then
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
[ -z "$(ours "$tpid")" ] && ok "QEMU killed: no domain left" || ko "QEMU killed: domains left: $(ours "$tpid")"

# ---- 3. libvirtd restarted mid-run: reconnect, clean up the lost guest, continue --------
# libvirtd is stopped by the pid it wrote (/run/libvirtd.pid). Under tools/services.sh
# it runs under 'tini -s', which exits once it has reaped libvirtd: the stop is
# complete when both are gone. Then tools/services.sh starts it again, and the
# restart counts once qemu:///system answers.
lvpid=$(cat /run/libvirtd.pid 2>/dev/null)
if [ -z "$lvpid" ] || [ "$(cat "/proc/$lvpid/comm" 2>/dev/null)" != libvirtd ]; then
	sk "libvirtd restart: /run/libvirtd.pid does not name a running libvirtd ('$lvpid'): not started by tools/services.sh or libvirtd -d"
	finish
fi
sup=$(awk '{ print $4 }' "/proc/$lvpid/stat")
[ "$(cat "/proc/$sup/comm" 2>/dev/null)" = tini ] || sup=""
before=$(thp_snapshot)
# shellcheck disable=SC2086
it_start $LIMIT $STALL /dev/null "$WORK/lv.err" "$BIN" run --host-thp=always $ARGS --reps=2 --warmup=0 \
	--accesses=100000 --timeout=5m --out="$WORK/lv"
tpid=$it_pid
restarted=no
it_wait_for "is up"
case $? in
0)
	kill -TERM "$lvpid"
	if ! wait_gone "$lvpid" 60 || { [ -n "$sup" ] && ! wait_gone "$sup" 30; }; then
		ko "libvirtd restart: libvirtd ($lvpid${sup:+, under tini $sup}) still there 60 s after SIGTERM"
	elif ! start_services; then
		ko "libvirtd restart: tools/services.sh failed to start libvirtd again"
	elif ! wait_libvirtd 60; then
		ko "libvirtd restart: the new libvirtd does not answer on qemu:///system after 60 s"
	else
		restarted=yes
		ok "libvirtd restart: libvirtd $lvpid stopped, a new one ($(cat /run/libvirtd.pid 2>/dev/null)) answers"
	fi
	;;
1) ko "libvirtd restart: the run ended before its guest was up: $(tail -2 "$WORK/lv.err")" ;;
*) ;;
esac
it_finish
rc=$it_rc
J=$WORK/lv/results.json
# whatever happened above, later scripts and the EXIT trap need a libvirtd
wait_libvirtd 1 || { start_services && wait_libvirtd 60; } || ko "libvirtd is not running after the test"
if it_over "libvirtd restart"; then :; elif [ $restarted = no ]; then :; else
	if grep -q "reconnected to libvirtd" "$WORK/lv.err"; then
		ok "libvirtd restart: reconnected ($(grep -o 'reconnected to libvirtd after [0-9.]* s' "$WORK/lv.err"))"
	else
		ko "libvirtd restart: no reconnection: $(tail -2 "$WORK/lv.err")"
	fi
	n2=$(jq '[.cells[].reps_ok] | add // 0' "$J" 2>/dev/null)
	[ "${n2:-0}" -ge 2 ] && ok "libvirtd restart: the run went on ($n2 repetitions)" || ko "libvirtd restart: nothing measured after"
	[ "$rc" -eq 0 ] && ok "libvirtd restart: the run completed (exit 0)" || ko "libvirtd restart: exit $rc: $(tail -2 "$WORK/lv.err")"
fi
[ "$(thp_snapshot)" = "$before" ] && ok "libvirtd restart: host restored" || ko "libvirtd restart: host not restored"
# thpeval has exited: its domains are gone, or the new libvirtd is still tearing one down
for _ in $(seq 1 150); do [ -z "$(ours "$tpid")" ] && break; sleep 0.2; done
[ -z "$(ours "$tpid")" ] && ok "libvirtd restart: no domain left" ||
	ko "libvirtd restart: domains left 30 s after the run: $(ours "$tpid")"
finish
