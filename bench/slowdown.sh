#!/bin/sh
# How much bench/slow-qemu.sh slows memset, measured inside one run: the real
# QEMU as arm A, the wrapper as arm B (thpeval run --emulator=A,B), their
# boots interleaved in the rounds. With MODE "aa" the real QEMU is both arms:
# the A/A check, where nothing should differ.
#
#   bench/slowdown.sh [nochain|tb-size=N|aa]      (root; default nochain)
#
# Writes bench/results/slowdown-MODE.json: the run's "ab" section (each memset
# metric kind, cell and split effect, B/A with its 95% interval and Holm
# verdict) and the load average around the run; the run itself (results.json,
# each guest's domain XML and console log) in bench/results/slowdown-MODE.run/. BENCH_BOOTS (3) rounds,
# BENCH_SIZE (64M) buffers in 512M guests; about 7 minutes under TCG.
set -eu
cd "$(dirname "$0")/.."
BIN=${THPEVAL_BIN:-bin/thpeval}
. bench/lib.sh
MODE=${1:-nochain}
QEMU=${SLOW_QEMU_REAL:-/usr/bin/qemu-system-x86_64}
bench_guest_setup slowdown 77 slowdown
if [ "$MODE" = aa ]; then
	B=$QEMU
else
	chmod 0711 "$WORK"	# libvirt's QEMU user runs the wrapper from here
	B=$(SLOW_QEMU_REAL=$QEMU bench/slow-qemu.sh --install "$WORK/qemu" "$MODE")
fi
load0=$(cut -d' ' -f1 /proc/loadavg)
"$BIN" run --emulator="$QEMU,$B" --workloads=memset --boots="${BENCH_BOOTS:-3}" --memory=512M \
	--size="${BENCH_SIZE:-64M}" --db=none --out="$WORK/run" >"$WORK/run.out" 2>"$WORK/run.err" ||
	{ tail -5 "$WORK/run.err" >&2; exit 1; }
load1=$(cut -d' ' -f1 /proc/loadavg)
mkdir -p bench/results
out=bench/results/slowdown-$(printf '%s' "$MODE" | tr '=' '-').json
jq --arg mode "$MODE" --argjson l0 "$load0" --argjson l1 "$load1" \
	'{mode: $mode, load_before: $l0, load_after: $l1, rounds: .settings.rounds, ab: .ab}' \
	"$WORK/run/results.json" >"$out.tmp"
mv "$out.tmp" "$out"
rm -rf "${out%.json}.run"
cp -r "$WORK/run" "${out%.json}.run"	# results.json, each guest's XML and console log
sed -n '/ B vs A, inside/,/ B vs A: /p' "$WORK/run.out"
echo "slowdown: $out"
