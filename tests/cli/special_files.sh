#!/bin/sh
# A FIFO, a character device or a directory given where thpeval reads a
# file: report FILE, report DIR (its results.json one of them), report
# --baseline, compare (either side), history --import, history and report
# --fleet with --db, and `host restore` with the journal (or the fragmenter
# record) one of them in the state directory.
#
# Every case must exit non-zero at once (each runs under `timeout 5`: 124
# is a hang; well under a second unloaded, 2.5 s allowed for a loaded machine's
# scheduling), print nothing on stdout and exactly one line on stderr,
# "thpeval: error: ...", naming the path and what it is.
# THPEVAL_BIN=path runs another build.
set -u
. "$(dirname "$0")/lib.inc"
cli_init "$0"
cli_need_bin
command -v timeout >/dev/null 2>&1 || cli_skip "timeout(1) is missing"
command -v mkfifo >/dev/null 2>&1 || cli_skip "mkfifo(1) is missing"
[ -c /dev/zero ] || cli_skip "no /dev/zero character device here"
cli_workdir

GOOD=$ROOT/tests/report/fixtures/kvm-accept-kvm.json
FAKE=$WORK/fake
mkdir -p "$FAKE" || exit 1
fake_tree "$FAKE" || { echo "cannot build a fake THP tree"; exit 1; }

# the three kinds, each at a .json name, and a run directory holding each
mkfifo "$WORK/fifo.json" || exit 1
ln -s /dev/zero "$WORK/dev.json" || exit 1
mkdir -p "$WORK/dir.json" || exit 1
for k in fifo dev dir; do mkdir -p "$WORK/run-$k" || exit 1; done
mkfifo "$WORK/run-fifo/results.json" || exit 1
ln -s /dev/zero "$WORK/run-dev/results.json" || exit 1
mkdir -p "$WORK/run-dir/results.json" || exit 1

# a state directory (ours, 0700) with $2 at name $1 in it
state_with() {
	_d=$WORK/state-$1-$2
	mkdir -p "$_d" && chmod 700 "$_d" || return 1
	case $2 in
	fifo) mkfifo "$_d/$1" ;;
	dev) ln -s /dev/zero "$_d/$1" ;;
	dir) mkdir -p "$_d/$1" ;;
	esac
	echo "$_d"
}

# case NAME WORD ARGS...: exit non-zero, no hang, at once, one line
# "thpeval: error: ..." on stderr containing WORD, nothing on stdout
case_() {
	_name=$1
	_word=$2
	shift 2
	_t0=$(date +%s%N)
	(cd "$WORK" && timeout 5 "$THPEVAL" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null)
	_rc=$?
	_ms=$((($(date +%s%N) - _t0) / 1000000))
	if [ "$_rc" -eq 124 ] || [ "$_rc" -eq 137 ]; then
		not_ok "$_name: hung (killed after 5 s)"
		return 0
	fi
	if [ "$_rc" -eq 0 ]; then
		not_ok "$_name: exit 0"
		return 0
	fi
	if [ "$_ms" -gt 2500 ]; then
		not_ok "$_name: took $_ms ms"
		return 0
	fi
	if [ -s "$WORK/out" ]; then
		not_ok "$_name: wrote to stdout"
		return 0
	fi
	if [ "$(wc -l <"$WORK/err")" -ne 1 ] || ! grep -q '^thpeval: error: ' "$WORK/err"; then
		not_ok "$_name: stderr is not one error line: $(head -c 300 "$WORK/err")"
		return 0
	fi
	if ! grep -qF -- "$_word" "$WORK/err"; then
		not_ok "$_name: the error does not say '$_word': $(cat "$WORK/err")"
		return 0
	fi
	ok "$_name"
}

# what the error says each kind is (the device is reached through a link)
word() {
	case $1 in
	fifo) echo "is a FIFO" ;;
	dev) echo "is a character device" ;;
	dir) echo "is a directory" ;;
	esac
}

# a directory given for a file is a run directory (its results.json is read):
# the one here holds a directory at results.json
for k in fifo dev dir; do
	w=$(word "$k")
	f=$WORK/$k.json
	[ "$k" = dir ] && f=$WORK/run-dir
	case_ "report $k" "$w" report "$f"
	case_ "report a run directory, results.json $k" "$w" report "$WORK/run-$k"
	case_ "report --baseline=$k" "$w" report "$GOOD" --baseline="$f"
	case_ "compare, baseline $k" "$w" compare "$f" "$GOOD"
	case_ "compare, current $k" "$w" compare "$GOOD" "$f"
	case_ "history --db=$k" "$w" history --db="$WORK/$k.json"
	case_ "report --fleet --db=$k" "$w" report --fleet --db="$WORK/$k.json"
	# --import searches a directory for regular results.json files
	[ "$k" = dir ] && w="no results.json under"
	case_ "history --import $k" "$w" history --db="$WORK/import-$k.db" --import "$f"
done

# the state directory's files are opened without following links: the
# device is refused as the link it is reached by
for k in fifo dev dir; do
	w=$(word "$k")
	[ "$k" = dev ] && w="is a symbolic link"
	s=$(state_with host-journal "$k") || exit 1
	case_ "host restore, journal $k" "$w" host --sysfs-root="$FAKE" --state-dir="$s" restore
	s=$(state_with host-fragmenter "$k") || exit 1
	case_ "host restore, fragmenter record $k" "$w" host --sysfs-root="$FAKE" --state-dir="$s" restore
done

cli_summary
