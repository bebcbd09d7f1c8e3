#!/bin/bash
# Run one stage of the suite (unit, integration, ...): every program given on
# the command line, each a cmocka binary or a script, and add up their tests.
#
#   tests/run-stage.sh NAME PROGRAM...
#
# A program's tests are read from what it prints: cmocka's "[  PASSED  ] N
# test(s)." / "[  SKIPPED ] N test(s)" / "[  FAILED  ] N test(s)" lines, or a
# script's tally line "[words: ]N passed, N failed[, N skipped]". Its exit
# status says how the program ended: 0 ran, 77 skipped whole (the automake
# convention: nothing on this machine for it to test, the reason printed), any
# other failed. A program that exits 0 and prints no tally failed: a suite that
# ran no test must not pass as one that did.
#
# THPEVAL_STRICT_SKIP=1 (CI) makes a whole-suite skip fail the stage: CI's
# machine has everything the suite needs, so a skipped suite there hides a
# missing install step or a broken check.
#
# Then "NAME took N s; slowest: ..." (the five slowest programs), and last
# the lines "NAME suites: N passed, N failed, N skipped" and the tests'
# "NAME: N passed, N failed, N skipped". Exit 1 when anything failed.
set -u
name=$1
shift
log=$(mktemp "/tmp/thpeval-stage.XXXXXX")
trap 'rm -f "$log"' EXIT

s_pass=0 s_fail=0 s_skip=0 t_pass=0 t_fail=0 t_skip=0
failed="" skipped=""

# sum the cmocka summary lines, or take a script's last tally line: "P F S"
tally() {
	awk '
	/^\[  PASSED  \] [0-9]+ test\(s\)\./ { cm = 1; p += $4 }
	/^\[  SKIPPED \] [0-9]+ test\(s\)/ { cm = 1; s += $4 }
	/^\[  FAILED  \] [0-9]+ test\(s\)/ { cm = 1; f += $4 }
	/^([A-Za-z][A-Za-z0-9 _-]*: )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$/ {
		line = $0; sub(/^[A-Za-z][A-Za-z0-9 _-]*: /, "", line); n = split(line, w, /[ ,]+/)
		sp = w[1]; sf = w[3]; ss = (n >= 5 ? w[5] : 0); st = 1
	}
	END {
		if (cm) print p + 0, f + 0, s + 0
		else if (st) print sp, sf, ss
		else print "none"
	}' "$1"
}

times="" stage_t0=$SECONDS
for t in "$@"; do
	echo "== $t"
	t0=$SECONDS
	"$t" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	times="$times$((SECONDS - t0)) $t
"
	read -r p f s <<<"$(tally "$log")"
	if [ "$p" = none ]; then
		p=0 f=0 s=0
		if [ "$rc" -eq 0 ]; then
			echo "$t: exit 0 without a tally line: counted as failed (it ran no test it reported)"
			rc=1
		fi
	fi
	if [ "$rc" -eq 77 ]; then
		s_skip=$((s_skip + 1))
		skipped="$skipped $t"
		[ "$s" -eq 0 ] && s=1
	elif [ "$rc" -ne 0 ]; then
		s_fail=$((s_fail + 1))
		failed="$failed $t"
		[ "$f" -eq 0 ] && f=1
	else
		s_pass=$((s_pass + 1))
	fi
	t_pass=$((t_pass + p)) t_fail=$((t_fail + f)) t_skip=$((t_skip + s))
done

# where the stage's time went (CI's budget): the five slowest programs
echo "$name took $((SECONDS - stage_t0)) s; slowest: $(printf '%s' "$times" | sort -rn | head -5 |
	awk '{ printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1 }')"
[ -n "$skipped" ] && echo "skipped suites:$skipped"
[ -n "$failed" ] && echo "failed suites:$failed"
if [ -n "$skipped" ] && [ "${THPEVAL_STRICT_SKIP:-0}" = 1 ]; then
	echo "THPEVAL_STRICT_SKIP=1: a suite skipped whole on a machine that should run it"
	s_fail=$((s_fail + 1))
fi
echo "$name suites: $s_pass passed, $s_fail failed, $s_skip skipped"
echo "$name: $t_pass passed, $t_fail failed, $t_skip skipped"
[ "$s_fail" -eq 0 ]
