#!/bin/sh
# Privilege and file modes.
#  - As a user without root (nobody, through setpriv or runuser, when this
#    runs as root; else the invoking user): `host set`, `host restore` and
#    `run` on the real root say in one line that they need root and exit
#    non-zero, changing nothing, also when the root is spelled "//" or "/.";
#    `host show`, `help` and `version` work.
#  - Under umask 000, what thpeval creates is private: state directory and
#    lock directory 0700, journal and lock 0600; results.json 0644.
#  - A state directory that is not ours or is writable by others, and links
#    planted where the lock, the journal or its temporary file go, are
#    refused without following them.
# The journal and results.json come from `thpeval run`, which needs libvirt
# and a guest; tests/cli/helper.c makes them through the same library calls.
set -u
. "$(dirname "$0")/lib.inc"
cli_init "$0"
cli_need_bin
cli_workdir

URI='qemu+unix:///system?socket=/nonexistent/thpeval-test.sock'
real_before=$(real_snapshot)
others_before=$(other_runs)

# ---- as a user without root ------------------------------------------------------------------
AS=
asuser=
if [ "$(id -u)" -ne 0 ]; then
	asuser=$(id -un)
elif ! id nobody >/dev/null 2>&1; then
	skipped "no user 'nobody' to drop root to: non-root checks skipped"
elif command -v setpriv >/dev/null 2>&1; then
	AS="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"
	asuser=nobody
elif command -v runuser >/dev/null 2>&1; then
	AS="runuser -u nobody --"
	asuser=nobody
else
	skipped "neither setpriv nor runuser: non-root checks skipped"
fi
if [ -n "$asuser" ] && ! $AS "$THPEVAL" version >/dev/null 2>&1; then
	skipped "$asuser cannot run $THPEVAL (directory permissions?): non-root checks skipped"
	asuser=
fi

# nr ARGS...: bin/thpeval ARGS as the user without root, from a directory it
# cannot write; sets RC, OUT, ERR
nr() {
	(cd / && $AS "$THPEVAL" "$@") >"$WORK/out" 2>"$WORK/err"
	RC=$?
	OUT=$(cat "$WORK/out")
	ERR=$(cat "$WORK/err")
}

needs_root() {
	[ "$RC" -ne 0 ] && [ ! -s "$WORK/out" ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] &&
		case $ERR in "thpeval: error: "*"needs root"*) true ;; *) false ;; esac
}

if [ -n "$asuser" ]; then
	nr host set enabled=never
	check "$asuser: host set enabled=never needs root" needs_root
	nr host --sysfs-root=// set enabled=never
	check "$asuser: host --sysfs-root=// set needs root" needs_root
	nr host restore
	check "$asuser: host restore needs root" needs_root
	nr host --sysfs-root=/. --state-dir="$WORK/nr-state" restore
	check "$asuser: host --sysfs-root=/. restore needs root" needs_root
	nr run --connect="$URI" --out="$WORK/nr-out" --state-dir="$WORK/nr-state"
	check "$asuser: run needs root" needs_root
	nr run --sysfs-root=/sys/.. --connect="$URI" --out="$WORK/nr-out" --state-dir="$WORK/nr-state"
	check "$asuser: run --sysfs-root=/sys/.. needs root" needs_root
	check "$asuser: nothing created" test ! -e "$WORK/nr-out" -a ! -e "$WORK/nr-state"

	nr version
	check "$asuser: version works" test "$RC" -eq 0 -a -z "$ERR" -a -n "$OUT"
	nr help
	check "$asuser: help works" test "$RC" -eq 0 -a -z "$ERR"
	check "$asuser: help prints the usage" grep -q '^usage: thpeval ' "$WORK/out"
	nr help host
	check "$asuser: help host works" test "$RC" -eq 0 -a -z "$ERR"
	if [ -r "$THP_REAL/enabled" ]; then
		want=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$THP_REAL/enabled")
		nr host show
		check "$asuser: host show works" test "$RC" -eq 0 -a -z "$ERR"
		check "$asuser: host show gives the real 'enabled'" \
			grep -qE "^enabled +$want\$" "$WORK/out"
	else
		echo "note: no $THP_REAL on this host: 'host show' not checked"
	fi
fi

# ---- modes of what thpeval creates, under umask 000 -------------------------------------------
FAKE=$WORK/fake
fake_tree "$FAKE" || { echo "cannot build a fake THP tree"; exit 1; }
echo "always madvise [never]" >"$FAKE/$THP_REL/enabled"
fake_before=$(tree_snapshot "$FAKE/sys")

mode_is() {
	# mode_is WANT PATH
	[ -e "$2" ] && [ ! -L "$2" ] && [ "$(stat -c %a "$2")" = "$1" ]
}

# tp ARGS...: bin/thpeval ARGS under umask 000; sets RC, OUT, ERR
tp() {
	(umask 000 && exec "$THPEVAL" "$@") >"$WORK/out" 2>"$WORK/err"
	RC=$?
	OUT=$(cat "$WORK/out")
	ERR=$(cat "$WORK/err")
}

refused() {
	# refused WORD: failed with one error line that contains WORD
	[ "$RC" -ne 0 ] && [ ! -s "$WORK/out" ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] &&
		case $ERR in "thpeval: error: "*"$1"*) true ;; *) false ;; esac
}

S=$WORK/state-a
tp host --sysfs-root="$FAKE" --state-dir="$S" restore
check "restore, no state directory: nothing to restore" test "$RC" -eq 0
check "restore, no state directory: none created" test ! -e "$S"
mkdir -m 700 "$S"
tp host --sysfs-root="$FAKE" --state-dir="$S" restore
check "restore: exit 0" test "$RC" -eq 0
check "lock directory <root>/run 0700" mode_is 700 "$FAKE/run"
check "lock directory <root>/run/thpeval 0700" mode_is 700 "$FAKE/run/thpeval"
check "lock file 0600" mode_is 600 "$FAKE/run/thpeval/lock"

if cli_build_helper; then
	S=$WORK/state-b/thpeval
	(umask 000 && exec "$HELPER" hold "$FAKE" "$S" enabled=always) >"$WORK/h.out" 2>"$WORK/h.err" &
	hp=$!
	i=0
	while [ $i -lt 100 ] && ! grep -q '^ready' "$WORK/h.out"; do
		kill -0 "$hp" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	if grep -q '^ready' "$WORK/h.out"; then
		check "state directory created 0700" mode_is 700 "$S"
		check "its parent created 0700" mode_is 700 "$WORK/state-b"
		check "journal 0600" mode_is 600 "$S/host-journal"
		check "no journal temporary left" test ! -e "$S/host-journal.tmp"
		check "lock file 0600 while held" mode_is 600 "$FAKE/run/thpeval/lock"
		kill -TERM "$hp"
		wait "$hp"
		check "session ended: journal removed" test ! -e "$S/host-journal"
	else
		not_ok "helper session did not start: $(cat "$WORK/h.err")"
		kill -KILL "$hp" 2>/dev/null
		wait "$hp" 2>/dev/null
	fi

	mkdir -p "$WORK/res"
	(umask 000 && exec "$HELPER" results "$WORK/res/results.json") 2>"$WORK/h.err"
	check "results.json 0644 under umask 000" mode_is 644 "$WORK/res/results.json"
	(umask 022 && exec "$HELPER" results "$WORK/res/r2.json") 2>"$WORK/h.err"
	check "results.json 0644 under umask 022" mode_is 644 "$WORK/res/r2.json"
	check "no results temporary left" test -z "$(find "$WORK/res" -name '*.tmp*')"

	# a link planted where the journal's temporary file goes is not followed
	S=$WORK/state-c
	mkdir -m 700 "$S"
	echo precious >"$WORK/victim-tmp"
	ln -s "$WORK/victim-tmp" "$S/host-journal.tmp"
	"$HELPER" hold "$FAKE" "$S" enabled=always >"$WORK/h.out" 2>"$WORK/h.err"
	check "journal temporary is a link: session refuses" test $? -ne 0
	check "journal temporary is a link: target untouched" grep -qx precious "$WORK/victim-tmp"
	check "journal temporary is a link: nothing applied" grep -q '\[never\]' "$FAKE/$THP_REL/enabled"
else
	skipped "$HELPER_WHY: journal, state directory and results.json modes not checked"
fi

# ---- refusals -----------------------------------------------------------------------------
journal_for() {
	# journal_for DIR: a killed run's journal for the fake root
	printf 'thpeval-journal 1\npid 4242\nroot %s\nset enabled always\n' \
		"$(cd "$FAKE" && pwd -P)" >"$1/host-journal"
}

S=$WORK/state-open
mkdir "$S"
chmod 777 "$S"
journal_for "$S"
tp host --sysfs-root="$FAKE" --state-dir="$S" restore
check "state directory writable by others: refused" refused "writable by others"
check "state directory writable by others: journal not applied" grep -q '\[never\]' "$FAKE/$THP_REL/enabled"

if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	S=$WORK/state-theirs
	mkdir -m 700 "$S"
	journal_for "$S"
	chown -R nobody "$S"
	tp host --sysfs-root="$FAKE" --state-dir="$S" restore
	check "state directory of another user: refused" refused "belongs to uid"
	check "state directory of another user: journal not applied" grep -q '\[never\]' "$FAKE/$THP_REL/enabled"
fi

S=$WORK/state-link
mkdir -m 700 "$S"
journal_for "$WORK"
mv "$WORK/host-journal" "$WORK/victim-journal"
ln -s "$WORK/victim-journal" "$S/host-journal"
tp host --sysfs-root="$FAKE" --state-dir="$S" restore
check "journal is a link: refused" test "$RC" -ne 0 -a "$(wc -l <"$WORK/err")" -eq 1
check "journal is a link: not applied" grep -q '\[never\]' "$FAKE/$THP_REL/enabled"
check "journal is a link: target kept" test -s "$WORK/victim-journal"

S=$WORK/state-d
mkdir -m 700 "$S"
rm -f "$FAKE/run/thpeval/lock"
echo precious >"$WORK/victim-lock"
ln -s "$WORK/victim-lock" "$FAKE/run/thpeval/lock"
tp host --sysfs-root="$FAKE" --state-dir="$S" restore
check "lock file is a link: refused" test "$RC" -ne 0 -a "$(wc -l <"$WORK/err")" -eq 1
check "lock file is a link: target untouched" grep -qx precious "$WORK/victim-lock"
rm -f "$FAKE/run/thpeval/lock"

check "fake THP tree unchanged" test "$(tree_snapshot "$FAKE/sys")" = "$fake_before"

# ---- the real host ------------------------------------------------------------------------
real_after=$(real_snapshot)
if [ "$real_after" = "$real_before" ]; then
	ok "real THP settings unchanged"
elif [ -n "$others_before$(other_runs)" ]; then
	echo "note: the real THP settings changed while another 'thpeval run' was active; not counted"
else
	not_ok "real THP settings changed: before: $real_before; after: $real_after"
fi

cli_summary
