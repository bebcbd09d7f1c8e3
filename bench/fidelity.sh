#!/bin/bash
# Fidelity of the memset fault throughput on the bare host, against stress-ng.
#
# The independent tool: stress-ng (Debian's 0.15.06) --vm 1 --vm-method write64
# --no-madvise. Its loop, per pass over --vm-bytes (read with strace): mmap,
# madvise(MADV_POPULATE_READ), one pass of 64-bit stores, munmap; one bogo op is
# 1 MiB of that buffer (VM_BOGO_SHIFT: 4096 blocks of 256 bytes), so its
# "bogo ops/s (real time)" is MiB/s of fresh memory faulted and written.
# memset --populate-read=1 runs the same loop (populate read, 64-bit stores,
# munmap timed too: cycle_mib_s); that is the apples-to-apples pair checked
# against 10%. The default memset fault phase (first-touch memset, no
# populate) is reported beside it with its own ratio, which differs for a
# known reason: with the populate, every 4K page is first mapped to the zero
# page and then copied-on-write, where the first touch faults once.
#
# Per host THP setting (never, always: set through 'thpeval host set', put
# back on exit; defrag left as it is) and per size: REPS repetitions (median)
# of each, interleaved, both pinned to one CPU, after one unrecorded round of
# each (the first run after a THP change or on memory the host has not backed
# yet was 2-8x slower on the development VM). A stress-ng repetition is one
# run of SECS seconds, many passes in one process; a memset repetition is one
# process running as many passes (--passes, sized from the warm-up's
# throughput) as fill about SECS seconds, its figure loop_mib_s: total MiB over
# the summed populate + stores + munmap times of every pass. One pass per
# process had compared a single 40 ms sample (256M with THP), cold in a fresh
# process, with stress-ng's steady-state average (always/256M: ratio 0.80).
# Writes bench/results/fidelity.json and prints one summary line.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=$PWD/bin/thpeval
GUEST=$PWD/bin/thpeval-guest
OUT=bench/results
SIZES=${BENCH_FIDELITY_SIZES:-256M 1G}
REPS=${BENCH_FIDELITY_REPS:-7}
SECS=${BENCH_FIDELITY_SECS:-3}
CPU=${BENCH_FIDELITY_CPU:-$(($(nproc) - 1))}
TOL=10
mkdir -p "$OUT"
if ! command -v stress-ng >/dev/null; then
	echo "bench: fidelity needs stress-ng (tools/deps.sh installs it); skipped" >&2
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: fidelity needs root (host THP settings); skipped" >&2
	exit 0
fi
KNOB=/sys/kernel/mm/transparent_hugepage/enabled
orig=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$KNOB")
WORK=$(mktemp -d /tmp/thpeval-fidelity.XXXXXX)
trap '"$BIN" host set enabled="$orig" >/dev/null; rm -rf "$WORK"' EXIT
VERSION=$(stress-ng --version | sed -n 's/.*version \([^ ]*\).*/\1/p')

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# one field of a memset result record
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
# the per-repetition series of one host THP setting and size, one file each under $WORK
SERIES="tool mirror fault cycle huge ft pop npass"

rows=()
for thp in never always; do
	"$BIN" host set enabled="$thp" >/dev/null || { echo "bench: cannot set host THP $thp" >&2; exit 1; }
	for size in $SIZES; do
		for f in $SERIES; do : >"$WORK/$f"; done
		# the unrecorded warm-up round; its loop throughput sizes the passes that fill SECS
		taskset -c "$CPU" "$GUEST" workload memset --size="$size" --accesses=1000 \
			--populate-read=1 --passes=2 >"$WORK/m" 2>&1
		passes=$(grep ' result ' "$WORK/m" | field loop_mib_s | awk -v s="$SECS" -v z="$size" '
			BEGIN { m = z + 0; if (z ~ /G$/) m *= 1024 }
			{ n = int(s * $1 / m + 0.5); print (n < 1 ? 1 : n) }')
		[ -n "$passes" ] || { echo "bench: memset warm-up failed: $(tail -1 "$WORK/m")" >&2; exit 1; }
		taskset -c "$CPU" "$GUEST" workload memset --size="$size" --accesses=1000 >/dev/null 2>&1
		taskset -c "$CPU" stress-ng --no-madvise --vm 1 --vm-bytes "$size" \
			--vm-method write64 -t 1 >/dev/null 2>&1
		for i in $(seq 1 "$REPS"); do
			taskset -c "$CPU" "$GUEST" workload memset --size="$size" --accesses=1000 \
				--populate-read=1 --passes="$passes" --rep="$i" >"$WORK/m" 2>&1 ||
				{ echo "bench: memset failed: $(tail -1 "$WORK/m")" >&2; exit 1; }
			grep ' result ' "$WORK/m" | field loop_mib_s >>"$WORK/mirror"
			echo "$passes" >>"$WORK/npass"
			# a cold warm-up undersizes the loop: the next repetitions fill SECS again
			passes=$(grep ' result ' "$WORK/m" | field loop_mib_s | awk -v s="$SECS" -v z="$size" -v p="$passes" '
				BEGIN { m = z + 0; if (z ~ /G$/) m *= 1024 }
				{ n = int(s * $1 / m + 0.5); if (p * m / $1 < 0.7 * s && n > p) p = n; print p }')
			grep ' result ' "$WORK/m" | field guest_huge_pct >>"$WORK/huge"
			grep ' result ' "$WORK/m" | field populate_ns >>"$WORK/pop"
			taskset -c "$CPU" "$GUEST" workload memset --size="$size" --accesses=1000 \
				--rep="$i" >"$WORK/m" 2>&1 ||
				{ echo "bench: memset failed: $(tail -1 "$WORK/m")" >&2; exit 1; }
			grep ' result ' "$WORK/m" | field fault_mib_s >>"$WORK/fault"
			grep ' result ' "$WORK/m" | field cycle_mib_s >>"$WORK/cycle"
			grep ' result ' "$WORK/m" | field first_touch_huge_pct >>"$WORK/ft"
			taskset -c "$CPU" stress-ng --no-madvise --vm 1 --vm-bytes "$size" \
				--vm-method write64 -t "$SECS" --metrics-brief >"$WORK/s" 2>&1 ||
				{ echo "bench: stress-ng failed: $(tail -1 "$WORK/s")" >&2; exit 1; }
			# "vm  ops  real  usr  sys  ops/s(real)  ops/s(usr+sys)"
			awk '$4 == "vm" { print $9 }' "$WORK/s" >>"$WORK/tool"
		done
		[ "$(wc -l <"$WORK/tool")" -eq "$REPS" ] || { echo "bench: cannot read stress-ng's metrics" >&2; cat "$WORK/s" >&2; exit 1; }
		# each series as $NAME (every run) and the timed ones' medians as $NAME_m
		series=()
		for f in $SERIES; do
			series+=(--argjson "$f" "[$(paste -sd, "$WORK/$f")]")
		done
		for f in tool mirror fault cycle; do
			series+=(--argjson "${f}_m" "$(median <"$WORK/$f")")
		done
		# a row jq could not build must stop the bench: an empty one would drop out of the
		# summary, whose pass is all() of the rows left
		row=$(jq -n --arg thp "$thp" --arg size "$size" "${series[@]}" \
			--argjson load "$(cut -d' ' -f1 /proc/loadavg)" \
			'{ host_thp: $thp, size: $size,
			   tool_mib_s: $tool_m, tool_runs_mib_s: $tool,
			   memset_mirror_mib_s: $mirror_m, memset_mirror_runs_mib_s: $mirror,
			   memset_mirror_passes: $npass,
			   ratio: ($mirror_m / $tool_m),
			   memset_fault_mib_s: $fault_m, memset_fault_runs_mib_s: $fault,
			   memset_cycle_mib_s: $cycle_m, memset_cycle_runs_mib_s: $cycle,
			   default_ratio: ($cycle_m / $tool_m),
			   mirror_populate_ns: $pop, mirror_guest_huge_pct: $huge,
			   first_touch_huge_pct: $ft,
			   load_avg_1m: $load }') || { echo "bench: jq could not build the $thp/$size row" >&2; exit 1; }
		rows+=("$row")
	done
done
printf '%s\n' "${rows[@]}" | jq -s --arg version "$VERSION" --argjson tol "$TOL" \
	--argjson reps "$REPS" --argjson secs "$SECS" --argjson cpu "$CPU" '
	{ benchmark: "fidelity", target: "host", unit: "MiB/s",
	  tool: "stress-ng", tool_version: $version,
	  tool_command: "stress-ng --no-madvise --vm 1 --vm-bytes SIZE --vm-method write64 -t \($secs) --metrics-brief (bogo ops/s, real time; 1 bogo op = 1 MiB)",
	  memset_command: "thpeval-guest workload memset --size=SIZE --accesses=1000 --populate-read=1, --passes=P (P from the warm-up: about \($secs) s; loop_mib_s: total MiB over the summed populate read + 64-bit stores + munmap of every pass)",
	  compared: "memset_mirror_mib_s / tool_mib_s (medians); default_ratio: the default first-touch memset cycle_mib_s / tool_mib_s, for information",
	  reps: $reps, cpu: $cpu, tolerance_pct: $tol,
	  settings: [ .[] | .pass = ((.ratio - 1) | fabs * 100 <= $tol) ] }
	| .pass = all(.settings[]; .pass)' >"$OUT/fidelity.json" ||
	{ echo "bench: jq could not write $OUT/fidelity.json" >&2; exit 1; }
jq -r '"fidelity (host, \(.tool) \(.tool_version)): " + ([.settings[] | "\(.host_thp)/\(.size): memset \(.memset_mirror_mib_s|round) vs \(.tool_mib_s|round) MiB/s ratio \(.ratio*1000|round/1000) \(if .pass then "ok" else "FAIL" end) (first-touch memset \(.memset_fault_mib_s|round), with munmap \(.memset_cycle_mib_s|round))"] | join(", ")) + "; \(if .pass then "pass" else "FAIL" end) (within \(.tolerance_pct)%)"' "$OUT/fidelity.json"
