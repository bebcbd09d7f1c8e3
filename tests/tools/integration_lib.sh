#!/bin/bash
# tests/integration/lib.sh without guests: a check whose command failed is a
# failure (a jq that cannot run its filter or read its file, in $(...) too, turns
# the next PASS or SKIP into a FAIL, and one left after the last check fails the
# tally), while jq -e's false and a jq whose reader stopped early are not
# failures; and JQ_TLB_POINTS gives guest/tlb.c's sweep (the cases of
# tests/guest/test_tlb.c). Each case runs lib.sh in a child bash and reads its
# output.
set -u
cd "$(dirname "$0")/../.." || exit 1
pass=0 fail=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
ko() { echo "FAIL: $*"; fail=$((fail + 1)); }
if ! command -v jq >/dev/null 2>&1; then
	echo "SKIP: jq is not installed"
	echo "integration-lib: 0 passed, 0 failed, 1 skipped"
	exit 77
fi
WORK=$(mktemp -d /tmp/thpeval-itlib.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
echo '{"cells": [{"valid": true}, {"valid": false}]}' >"$WORK/r.json"

# lib BODY: BODY after sourcing lib.sh (no thpeval, no guest), then finish; its output
lib() {
	IT_NAME=lib IT_TMP=thpeval-itlib-case THPEVAL_BIN=/bin/true J=$WORK/r.json \
		bash -c '. tests/integration/lib.sh; '"$1"'; finish' 2>/dev/null
}

# case NAME BODY TALLY WANT: BODY's output ends with the tally line TALLY and holds
# the line part WANT
case_() {
	local out
	out=$(lib "$2")
	if [ "$(tail -n 1 <<<"$out")" = "lib: $3" ] && grep -qF -- "$4" <<<"$out"; then
		ok "$1"
	else
		ko "$1: want [$3] and [$4], got [$(tr '\n' ' ' <<<"$out")]"
	fi
}
# shellcheck disable=SC2016	# the bodies run in the child
{
case_ "a jq that answers: PASS" \
	'n=$(jq "[.cells[] | select(.valid)] | length" "$J"); [ "$n" = 1 ] && ok one' \
	"1 passed, 0 failed, 0 skipped" "PASS: one"
case_ "a filter passed as a file name in \$(...): FAIL" \
	'x=$(jq -c "def f: 1;" --arg a b "[.cells[] | select(f)]" "$J"); [ "$x" != 1 ] && ok none' \
	"0 passed, 1 failed, 0 skipped" "FAIL: none, but a command it rests on failed: jq exited 2"
case_ "a filter that does not compile: FAIL" \
	'jq -e ".cells[" "$J" >/dev/null || ok "not there"' \
	"0 passed, 1 failed, 0 skipped" "jq exited 3"
case_ "a file jq cannot read: the SKIP is a FAIL" \
	'x=$(jq .status "$J.missing"); sk "no status [$x]"' \
	"0 passed, 1 failed, 0 skipped" "FAIL: no status [], but a command it rests on failed: jq exited 2"
case_ "a FAIL names the failed command" \
	'x=$(jq .a "$J.missing"); ko "status [$x]"' \
	"0 passed, 1 failed, 0 skipped" "FAIL: status [] (a command it rests on failed: jq exited 2"
case_ "jq -e false is a verdict, not a failure" \
	'jq -e ".cells[1].valid" "$J" >/dev/null || ok invalid' \
	"1 passed, 0 failed, 0 skipped" "PASS: invalid"
case_ "jq -ce false is a verdict too" \
	'jq -ce ".cells[1].valid" "$J" >/dev/null || ok invalid' \
	"1 passed, 0 failed, 0 skipped" "PASS: invalid"
case_ "jq -e with a run-time error: FAIL" \
	'jq -e ".cells | keys | .[0] + \"x\"" "$J" >/dev/null; ok "after an error"' \
	"0 passed, 1 failed, 0 skipped" "jq exited 5"
case_ "a reader that stops early is no failure" \
	'x=$(jq -n "[range(200000)]" | head -c 10); ok "first bytes $x"' \
	"1 passed, 0 failed, 0 skipped" "PASS: first bytes"
case_ "only the next check takes the failure" \
	'x=$(jq .a "$J.missing"); ok first; ok second' \
	"1 passed, 1 failed, 0 skipped" "PASS: second"
case_ "a failure after the last check fails the tally" \
	'ok first; jq .a "$J.missing"' \
	"1 passed, 1 failed, 0 skipped" "FAIL: a command failed after the last check: jq exited 2"
case_ "it_cmd: a failed command turns a PASS into a FAIL" \
	'it_cmd false; ok "after false"' \
	"0 passed, 1 failed, 0 skipped" "'false' exited 1"
case_ "it_cmd: a command that succeeds" \
	'it_cmd true && ok "after true"' \
	"1 passed, 0 failed, 0 skipped" "PASS: after true"
}

# JQ_TLB_POINTS on guest/tlb.c's cases: "pages_min pages_max l2_bytes | walk | points"
tlb() {
	IT_NAME=lib IT_TMP=thpeval-itlib-case THPEVAL_BIN=/bin/true bash -c '. tests/integration/lib.sh
		jq -rn --argjson lo "$1" --argjson hi "$2" --argjson l2 "$3" "$JQ_TLB_POINTS"'"'"'
			"\(walk($l2; $lo; $hi)) | \(points($lo; $hi) | map(tostring) | join(" "))"'"'"'' _ "$@" 2>&1
}
while IFS='|' read -r name args want; do
	# shellcheck disable=SC2086	# three numbers
	got=$(tlb $args)
	if [ "$got" = "$want" ]; then ok "tlb sweep: $name ($got)"; else ko "tlb sweep: $name: want [$want], got [$got]"; fi
done <<'EOF'
512K L2, defaults|16 16384 524288|8192 | 16 64 256 1024 4096 16384
1M L2|16 16384 1048576|16384 | 16 64 256 1024 4096 16384
2M L2: clamped to the largest set|16 16384 2097152|16384 | 16 64 256 1024 4096 16384
1.25M L2: the power of two below|16 65536 1310720|16384 | 16 64 256 1024 4096 16384 65536
256K L2, max 64|16 64 262144|64 | 16 64
512-byte L2: clamped to the smallest set|16 16384 512|16 | 16 64 256 1024 4096 16384
max not a 4x step|16 100 524288|100 | 16 64 100
min = max|64 64 524288|64 | 64
1 to 8|1 8 524288|8 | 1 4 8
capped at 16 points|1 1099511627776 524288|8192 | 1 4 16 64 256 1024 4096 16384 65536 262144 1048576 4194304 16777216 67108864 268435456 1099511627776
EOF

echo "integration-lib: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
