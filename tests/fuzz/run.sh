#!/bin/sh
# Run libFuzzer harnesses for a while each: tests/fuzz/run.sh SECONDS BIN...
# (`make fuzz` passes $(FUZZ_SECONDS) and build/fuzz/fuzz_*).
# BIN build/fuzz/fuzz_NAME starts from tests/fuzz/corpus/NAME/, copied to a
# temporary directory so that the repository is never written. A crash,
# leak, timeout or out-of-memory fails the harness; its reproducer is kept
# in build/fuzz/artifacts/NAME/ (or $FUZZ_ARTIFACTS/NAME/).
# A harness with a run count below (min_runs) runs until it has executed that
# many inputs, however long that takes within 10 minutes, and fails if it
# did not reach it: SECONDS is the floor for the others.
# Ends with "fuzz: N passed, N failed"; exit 1 when any failed.
set -u

# the inputs a harness must execute in one run: the results.json loader's
# acceptance is 100000 (about 50 s on two shared cores); 0 = SECONDS only
min_runs() {
	case "$1" in
	results) echo 100000 ;;
	*) echo 0 ;;
	esac
}

usage() {
	echo "usage: tests/fuzz/run.sh SECONDS BIN..." >&2
	exit 2
}

[ $# -ge 2 ] || usage
secs=$1
shift
case "$secs" in
'' | *[!0-9]*) usage ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
artifacts_top=${FUZZ_ARTIFACTS:-$root/build/fuzz/artifacts}
work=$(mktemp -d "${TMPDIR:-/tmp}/thpeval-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

pass=0
fail=0
failed=""
for bin in "$@"; do
	name=$(basename "$bin")
	name=${name#fuzz_}
	if [ ! -x "$bin" ]; then
		echo "fuzz $name: FAIL (no executable '$bin')"
		fail=$((fail + 1))
		failed="$failed $name"
		continue
	fi
	corpus="$work/corpus-$name"
	mkdir -p "$corpus"
	if [ -d "$here/corpus/$name" ]; then
		cp "$here/corpus/$name"/* "$corpus"/ 2>/dev/null
	fi
	art="$artifacts_top/$name"
	mkdir -p "$art"
	log="$work/$name.log"
	want=$(min_runs "$name")
	if [ "$want" -gt 0 ]; then
		limit="-runs=$want -max_total_time=600"
	else
		limit="-max_total_time=$secs"
	fi
	t0=$(date +%s)
	# shellcheck disable=SC2086 # $limit is two options
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
		"$bin" $limit -rss_limit_mb=512 -max_len=8192 -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$art/" "$corpus" >"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - t0))
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' "$log" | tail -n 1)
	units=$(ls "$corpus" | wc -l)
	if [ "$rc" -eq 0 ] && [ "${runs:-0}" -lt "$want" ]; then
		echo "fuzz $name: FAIL (${runs:-0} runs in ${took}s, fewer than the $want it must reach)"
		fail=$((fail + 1))
		failed="$failed $name"
	elif [ "$rc" -eq 0 ]; then
		echo "fuzz $name: ok (${runs:-?} runs in ${took}s, cov ${cov:-?}, corpus $units)"
		pass=$((pass + 1))
	else
		echo "fuzz $name: FAIL (exit $rc after ${runs:-?} runs; reproducer in $art/)"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz_[a-z]+: property failed|.*runtime error:)' "$log" |
			head -n 5 | sed 's/^/    /'
		fail=$((fail + 1))
		failed="$failed $name"
	fi
done
echo "fuzz: $pass passed, $fail failed"
if [ "$fail" -ne 0 ]; then
	echo "failed harnesses:$failed"
	exit 1
fi
exit 0
