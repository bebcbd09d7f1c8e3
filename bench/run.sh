#!/bin/bash
# Benchmarks (not timed tests): figures go to bench/results/ and stdout.
#  orchestration: per-guest overhead, domain create -> first record, and teardown,
#                 over N minimal guests (target under TCG on a 2-core host: <= 5 s).
set -u
cd "$(dirname "$0")/.."
BIN=$PWD/bin/thpeval
OUT=bench/results
N=${BENCH_GUESTS:-3}
mkdir -p "$OUT"
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (libvirtd qemu:///system); skipped" >&2
	exit 0
fi
WORK=$(mktemp -d /tmp/thpeval-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# warm the image cache so the build is not counted
"$BIN" image build >/dev/null 2>"$WORK/image.err" || { cat "$WORK/image.err" >&2; exit 1; }

for i in $(seq 1 "$N"); do
	"$BIN" run --host-thp=never --guest-thp=never --reps=1 --warmup=0 --memory=512M --size=16M \
		--accesses=10000 --state-dir="$WORK/state" --out="$WORK/o$i" --quiet >/dev/null 2>"$WORK/e$i" ||
		{ echo "bench: run $i failed: $(tail -1 "$WORK/e$i")" >&2; exit 1; }
done
jq -s '[.[] | .guests[]] as $g |
	{ benchmark: "orchestration", accel: (.[0].accel), guests: ($g | length),
	  create_to_first_record_s: [$g[].create_to_first_record_s],
	  teardown_s: [$g[].teardown_s],
	  mean_create_to_first_record_s: ([$g[].create_to_first_record_s] | add / length),
	  mean_teardown_s: ([$g[].teardown_s] | add / length),
	  target_s: 5 }' "$WORK"/o*/results.json >"$OUT/orchestration.json"
jq -r '"orchestration (\(.accel), \(.guests) guests): create->first record mean \(.mean_create_to_first_record_s*100|round/100) s \(.create_to_first_record_s|map(.*100|round/100)), teardown mean \(.mean_teardown_s*100|round/100) s; per-guest overhead \((.mean_create_to_first_record_s+.mean_teardown_s)*100|round/100) s (target <= \(.target_s) s)"' "$OUT/orchestration.json"
