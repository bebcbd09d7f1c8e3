#!/bin/sh
# The host lock end to end, on a fake THP tree: while a process holds host
# settings (tests/cli/helper.c: host_session_begin + host_session_set, the
# way `thpeval run` does), `thpeval host restore` exits non-zero with one
# line naming the holder's pid and changes nothing, whatever --state-dir it
# is given; once the holder is killed with SIGKILL its stale lock is taken
# over and its journal restored; a holder that is stopped with SIGTERM
# restores by itself; parallel restores do the work exactly once.
# (`thpeval run` takes the lock only after libvirt and the guest image, so
# it is not driven here.)
set -u
. "$(dirname "$0")/lib.inc"
cli_init "$0"
cli_need_bin
cli_workdir
cli_build_helper || cli_skip "$HELPER_WHY"

FAKE=$WORK/fake
STATE=$WORK/state
ENABLED=$FAKE/$THP_REL/enabled
LOCKFILE=$FAKE/run/thpeval/lock
JOURNAL=$STATE/host-journal
fake_tree "$FAKE" || { echo "cannot build a fake THP tree"; exit 1; }
echo "always madvise [never]" >"$ENABLED"
cp "$FAKE/$THP_REL/defrag" "$WORK/defrag.orig"
HPID=

cleanup_holder() {
	if [ -n "$HPID" ] && kill -0 "$HPID" 2>/dev/null; then
		kill -KILL "$HPID" 2>/dev/null
		wait "$HPID" 2>/dev/null
	fi
	HPID=
}
trap 'cleanup_holder; cli_cleanup' EXIT

# start_holder KEY=VALUE...: helper hold in the background; 0 once it is ready
start_holder() {
	: >"$WORK/holder.out"
	"$HELPER" hold "$FAKE" "$STATE" "$@" >"$WORK/holder.out" 2>"$WORK/holder.err" &
	HPID=$!
	_i=0
	while [ $_i -lt 100 ]; do
		grep -q '^ready ' "$WORK/holder.out" && return 0
		kill -0 "$HPID" 2>/dev/null || break
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "holder did not start: $(cat "$WORK/holder.err")"
	return 1
}

# tp ARGS...: bin/thpeval ARGS; sets RC, OUT, ERR
tp() {
	"$THPEVAL" "$@" >"$WORK/out" 2>"$WORK/err"
	RC=$?
	OUT=$(cat "$WORK/out")
	ERR=$(cat "$WORK/err")
}

one_line() {
	[ "$(wc -l <"$WORK/err")" -eq 1 ] && [ ! -s "$WORK/out" ]
}

# busy_by PID: the last command failed with one line naming PID as the holder
busy_by() {
	[ "$RC" -ne 0 ] && one_line &&
		case $ERR in "thpeval: error: "*"locked by pid $1 "*) true ;; *) false ;; esac
}

enabled_is() {
	grep -q "\[$1\]" "$ENABLED"
}

# ---- a live holder ----------------------------------------------------------------------
if start_holder enabled=always; then
	ok "holder takes the lock and changes the fake tree"
	check "holder's change is in the fake tree" enabled_is always
	check "journal written before the change" test -f "$JOURNAL"
	check "lock record names the holder" grep -qx "pid $HPID" "$LOCKFILE"

	tp host restore --sysfs-root="$FAKE" --state-dir="$STATE"
	check "restore while held: non-zero, one line naming pid $HPID" busy_by "$HPID"
	[ -n "${VERBOSE:-}" ] && echo "     $ERR"
	check "restore while held: fake tree untouched" enabled_is always
	check "restore while held: journal kept" test -f "$JOURNAL"

	mkdir -m 700 "$WORK/other-state"
	tp host --sysfs-root="$FAKE" --state-dir="$WORK/other-state" restore
	check "restore with another --state-dir while held: still refused" busy_by "$HPID"

	# `host set` must not change a knob under a running thpeval either
	tp host --sysfs-root="$FAKE" --state-dir="$STATE" set enabled=madvise
	check "host set while held: non-zero, one line naming pid $HPID" busy_by "$HPID"
	check "host set while held: fake tree untouched" enabled_is always

	# ---- killed: stale lock, journal left behind ----------------------------------------
	DEAD=$HPID
	kill -KILL "$HPID"
	wait "$HPID" 2>/dev/null
	HPID=
	check "killed holder leaves its record in the lock file" grep -qx "pid $DEAD" "$LOCKFILE"
	check "killed holder leaves the journal" test -f "$JOURNAL"
	check "killed holder leaves its change" enabled_is always

	tp host --sysfs-root="$FAKE" --state-dir="$STATE" restore
	check "restore after SIGKILL: exit 0" test "$RC" -eq 0
	check "restore after SIGKILL: says it restored" test "$OUT" = "host THP settings restored from the journal"
	check "restore after SIGKILL: nothing on stderr" test -z "$ERR"
	check "restore after SIGKILL: fake tree back to never" enabled_is never
	check "restore after SIGKILL: journal removed" test ! -e "$JOURNAL"
	check "restore after SIGKILL: lock record emptied" test ! -s "$LOCKFILE"

	tp host --sysfs-root="$FAKE" --state-dir="$STATE" restore
	check "second restore: nothing to restore, exit 0" \
		test "$RC" -eq 0 -a "$OUT" = "nothing to restore: no journal of a killed run"
else
	not_ok "holder takes the lock"
fi
cleanup_holder

# ---- a new holder takes over a killed one's lock and journal -------------------------------
if start_holder enabled=madvise; then
	kill -KILL "$HPID"
	wait "$HPID" 2>/dev/null
	HPID=
	if start_holder defrag=never; then
		check "new holder after SIGKILL: reports the stale journal" grep -q '^ready [0-9]* stale$' "$WORK/holder.out"
		check "new holder after SIGKILL: killed run's change undone" enabled_is never
		# ---- SIGTERM: the holder restores by itself --------------------------------------
		kill -TERM "$HPID"
		wait "$HPID"
		rc=$?
		HPID=
		check "holder stopped with SIGTERM: exit 0" test "$rc" -eq 0
		check "holder stopped with SIGTERM: defrag restored" \
			cmp -s "$FAKE/$THP_REL/defrag" "$WORK/defrag.orig"
		check "holder stopped with SIGTERM: journal removed" test ! -e "$JOURNAL"
		check "holder stopped with SIGTERM: lock released" test ! -s "$LOCKFILE"
	else
		not_ok "new holder after SIGKILL takes over the stale lock"
	fi
else
	not_ok "holder takes the lock (second round)"
fi
cleanup_holder

# ---- parallel restores of one killed run: exactly one restores ---------------------------
if start_holder enabled=always; then
	kill -KILL "$HPID"
	wait "$HPID" 2>/dev/null
	HPID=
	pids=
	for i in 1 2 3 4 5 6; do
		"$THPEVAL" host --sysfs-root="$FAKE" --state-dir="$STATE" restore \
			>"$WORK/par$i.out" 2>"$WORK/par$i.err" &
		pids="$pids $!"
	done
	restored=0
	bad=0
	i=0
	for p in $pids; do
		i=$((i + 1))
		wait "$p"
		rc=$?
		if [ "$rc" -eq 0 ] && grep -qx 'host THP settings restored from the journal' "$WORK/par$i.out"; then
			restored=$((restored + 1))
		elif [ "$rc" -eq 0 ] && grep -qx 'nothing to restore: no journal of a killed run' "$WORK/par$i.out"; then
			:
		elif [ "$rc" -ne 0 ] && [ "$(wc -l <"$WORK/par$i.err")" -eq 1 ] &&
			grep -qE '^thpeval: error: .*locked by (pid [0-9]|another process)' "$WORK/par$i.err"; then
			# "another process": the winner had the flock but no record yet (or no longer)
			:
		else
			bad=$((bad + 1))
			echo "     parallel restore $i: exit $rc: $(cat "$WORK/par$i.out" "$WORK/par$i.err")"
		fi
	done
	check "parallel restores: exactly one restores" test "$restored" -eq 1
	check "parallel restores: the others say nothing to do or name the holder" test "$bad" -eq 0
	check "parallel restores: fake tree back to never" enabled_is never
	check "parallel restores: journal removed" test ! -e "$JOURNAL"
else
	not_ok "holder takes the lock (parallel round)"
fi

cli_summary
