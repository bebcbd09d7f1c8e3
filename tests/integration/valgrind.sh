#!/bin/bash
# A short real run under valgrind's memcheck: TCG guests, memset, 1 repetition,
# 2 boots per host setting (so the boot-level analysis runs), the reports and
# results.json written. Memcheck sees what the sanitizers cannot: a read of
# uninitialised memory (host telemetry under TCG once carried stack garbage into
# every cell). Passes with 0 errors and no definitely lost block.
# Prints PASS/FAIL/SKIP lines and a summary line.
set -u
cd "$(dirname "$0")/../.." || exit 1
IT_NAME="integration valgrind" IT_TMP=thpeval-it-vg
. tests/integration/lib.sh

if [ "$(id -u)" -ne 0 ]; then
	sk "valgrind integration needs root (libvirtd qemu:///system, host THP writes)"
	finish
fi
if ! command -v valgrind >/dev/null 2>&1; then
	sk "valgrind is not installed (tools/deps.sh installs it)"
	finish
fi
if ! tools/services.sh; then
	ko "libvirtd could not be started"
	finish
fi

before=$(thp_snapshot)
t0=$(date +%s)
# --error-exitcode: any memcheck error, or a definitely lost block, makes the exit 99
timeout -k 10 1200 valgrind --quiet --error-exitcode=99 --leak-check=full \
	--errors-for-leak-kinds=definite --track-origins=yes --num-callers=30 \
	--log-file="$WORK/memcheck.log" \
	"$BIN" run --host-thp=always --workloads=memset --reps=1 --boots=2 --warmup=0 --cold-reps=1 \
	--size=32M --memory=512M --accesses=100000 --format=text,json,csv,html,junit \
	--state-dir="$STATE" --db="$WORK/history.db" --out="$WORK/r" >"$WORK/out" 2>"$WORK/err"
rc=$?
t1=$(date +%s)
J=$WORK/r/results.json
errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$WORK/memcheck.log" | tail -n 1)
if [ "$rc" -eq 0 ] && [ -s "$J" ]; then
	ok "run under memcheck exits 0 and writes results.json ($((t1 - t0)) s)"
else
	ko "run under memcheck: exit $rc; $(tail -n 2 "$WORK/err" | tr '\n' ' ')"
fi
# (--quiet: the log is empty when memcheck found nothing.) A program memcheck stopped,
# e.g. at an instruction of this CPU it cannot decode, was not checked to the end
if grep -q -E 'unhandled instruction|Process terminating with default action' "$WORK/memcheck.log"; then
	ko "memcheck stopped the run: $(grep -m 3 -E 'unhandled instruction|Process terminating|signal' "$WORK/memcheck.log" | tr '\n' ' ')"
elif [ "$rc" -ne 99 ] && ! grep -q 'definitely lost: [1-9]' "$WORK/memcheck.log"; then
	ok "memcheck: ${errors:-0} errors, no block definitely lost"
else
	ko "memcheck found errors: $(grep -E 'Invalid|uninitialised|definitely lost' "$WORK/memcheck.log" | head -n 5 | tr '\n' ' ')"
	sed -n '1,60p' "$WORK/memcheck.log"
fi
if [ -s "$J" ]; then
	nb=$(jq '[.cells[] | select(.variant == null) | .metrics.access_ns.boot | unique | length] | min' "$J")
	[ "$nb" = 2 ] && ok "every cell has samples from 2 boots" || ko "boots per cell: $nb"
	for f in results.txt results.csv report.html junit.xml; do
		[ -s "$WORK/r/$f" ] && ok "$f written" || ko "$f missing"
	done
fi
after=$(thp_snapshot)
[ "$before" = "$after" ] && ok "host THP settings identical before and after" ||
	ko "host THP changed: before [$before] after [$after]"
[ -z "$(leftover_domains)" ] && ok "no thpeval domain left" || ko "domains left: $(leftover_domains)"
finish
