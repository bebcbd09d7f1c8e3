#!/bin/bash
# Benchmarks (not timed tests): figures go to bench/results/ and stdout.
#  orchestration: per-guest overhead, domain create -> first record, and teardown,
#                 over N minimal guests (target under TCG on a 2-core host: <= 5 s).
#  mde:           minimum detectable effect of memset access time (target <= 3%).
#  fidelity:      memset fault throughput on the bare host against stress-ng at the
#                 same size and host THP setting (target: within 10%; bench/fidelity.sh).
#  tlb_cv:        the TLB miss cost over 5 bare-host runs (target: CV <= 5%; bench/tlb_cv.sh).
#  workloads:     every workload but kcompile at its defaults in one guest, boot to
#                 power-off (target under TCG here: <= 3 minutes).
#  calibration:   BENCH_CALIBRATION=1: 5 default runs, the split's intervals against the
#                 spread of its estimates, A/A comparisons (bench/calibration.sh; ~20 min).
#  gate:          BENCH_GATE=1: the history gate over 12 quiet runs and 3 with a slowed
#                 QEMU (bench/gate.sh; ~25 min).
# The runs share the host THP settings (and their lock) with any other thpeval
# run: a run that finds them locked waits for it (up to BENCH_LOCK_WAIT seconds).
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=$PWD/bin/thpeval
OUT=bench/results
N=${BENCH_GUESTS:-3}
LOCK_WAIT=${BENCH_LOCK_WAIT:-600}
mkdir -p "$OUT"
# root, $WORK, and the image cache warmed so the build is not counted
. bench/lib.sh
bench_guest_setup bench 0 bench

for i in $(seq 1 "$N"); do
	start=$SECONDS
	until "$BIN" run --host-thp=never --guest-thp=never --boots=1 --reps=1 --warmup=0 --memory=512M --size=16M \
		--accesses=10000 --db=none --out="$WORK/o$i" --quiet >/dev/null 2>"$WORK/e$i"; do
		if grep -q "are locked by" "$WORK/e$i" && [ $((SECONDS - start)) -lt "$LOCK_WAIT" ]; then
			sleep 2
			continue
		fi
		echo "bench: run $i failed: $(tail -1 "$WORK/e$i")" >&2
		exit 1
	done
done
jq -s '[.[] | .guests[]] as $g |
	([$g[].create_to_first_record_s] | sort) as $c |
	{ benchmark: "orchestration", accel: (.[0].accel), image_id: (.[0].image_id), guests: ($g | length),
	  create_to_first_record_s: [$g[].create_to_first_record_s],
	  teardown_s: [$g[].teardown_s],
	  mean_create_to_first_record_s: ($c | add / length),
	  median_create_to_first_record_s: (if ($c | length) % 2 == 1 then $c[($c | length - 1) / 2]
					    else ($c[($c | length) / 2 - 1] + $c[($c | length) / 2]) / 2 end),
	  mean_teardown_s: ([$g[].teardown_s] | add / length),
	  target_s: 5 }' "$WORK"/o*/results.json >"$OUT/orchestration.json" ||
	{ echo "bench: jq could not write $OUT/orchestration.json" >&2; exit 1; }
jq -r '"orchestration (\(.accel), \(.guests) guests, image \(.image_id)): create->first record mean \(.mean_create_to_first_record_s*100|round/100) s, median \(.median_create_to_first_record_s*100|round/100) s \(.create_to_first_record_s|map(.*100|round/100)), teardown mean \(.mean_teardown_s*100|round/100) s; per-guest overhead \((.mean_create_to_first_record_s+.mean_teardown_s)*100|round/100) s (target: create->first record <= \(.target_s) s)"' "$OUT/orchestration.json"

# ---- minimum detectable effect of memset access time at the default repetitions --------
#  One default run (host never/always x guest never/always, default reps); per cell the
#  coefficient of variation of access_ns gives the smallest effect a two-cell comparison
#  detects at 95% confidence and 80% power: MDE = (t_.975(2n-2) + t_.80) * sqrt(2/n) * CV.
#  Target on this machine: 3% or better.
"$BIN" run --host-thp=always --guest-thp=always --db=none --out="$WORK/mde" --quiet \
	>/dev/null 2>"$WORK/mde.err" || { echo "bench: mde run failed: $(tail -1 "$WORK/mde.err")" >&2; exit 1; }
load=$(cut -d' ' -f1-3 /proc/loadavg)
jq --arg load "$load" '
	def t95(df): [12.706,4.303,3.182,2.776,2.571,2.447,2.365,2.306,2.262,2.228] as $t
		| if df < 1 then null elif df <= 10 then $t[df-1] elif df <= 30 then 2.042 else 1.96 end;
	def mde(n; cv): (t95(2*n-2) + (if n > 30 then 0.842 else 0.9 end)) * ((2/n)|sqrt) * cv;
	{ benchmark: "mde", metric: "access_ns", accel, target_pct: 3, loadavg: $load,
	  cells: [ .cells[] | select(.target == "guest" and .workload == "memset" and .variant == null)
		| .metrics.access_ns as $m
		| { host_thp, guest_thp, n: $m.n, cv_pct: $m.cv_pct,
		    mde_pct: (if $m.n >= 2 and $m.cv_pct != null then mde($m.n; $m.cv_pct) else null end),
		    reps_for_target: (if $m.cv_pct != null and $m.cv_pct > 0
				      then ([range(2; 5001) | select(mde(.; $m.cv_pct) <= 3)] | first // null)
				      else null end) } ] }
	| .worst_mde_pct = ([.cells[].mde_pct | select(. != null)] | max)
	| .reps_for_target = ([.cells[].reps_for_target | select(. != null)] | max)
' "$WORK/mde/results.json" >"$OUT/mde.json" ||
	{ echo "bench: jq could not write $OUT/mde.json" >&2; exit 1; }
jq -r '"mde (\(.accel)): memset access_ns, default reps: " + ([.cells[] | "\(.host_thp)/\(.guest_thp) n=\(.n) cv=\(.cv_pct*10|round/10)% mde=\(.mde_pct*10|round/10)%"] | join(", ")) + "; worst \(.worst_mde_pct*10|round/10)% (target <= \(.target_pct)%); at this noise \(.reps_for_target) repetitions per cell would reach it; load \(.loadavg)"' "$OUT/mde.json"

# ---- every workload but kcompile at its defaults in one guest ----------------------
#  One guest (host never; guest THP never and always in it, as in every run), the default
#  repetitions, warm-up and host-cold repetitions; the guest's total_s runs from domain
#  create to power-off. Target under TCG here: 180 s.
wl=$("$BIN" workloads | grep -v '^[[:space:]]' | grep -vx kcompile | paste -sd, -)
"$BIN" run --workloads="$wl" --host-thp=never --boots=1 --db=none --out="$WORK/wl" --quiet \
	>/dev/null 2>"$WORK/wl.err" || { echo "bench: workloads run failed: $(tail -1 "$WORK/wl.err")" >&2; exit 1; }
jq --arg wl "$wl" '{ benchmark: "workloads", accel, target_s: 180, workloads: ($wl | split(",")),
	  guests: [.guests[] | { name, total_s, create_to_first_record_s }],
	  cells: [.cells[] | select(.target == "guest") | { workload, variant, reps_ok, reps_failed, warmups, valid }] }
	| .total_s = ([.guests[].total_s] | max)
	| .all_ok = ([.cells[] | .reps_ok > 0 and .reps_failed == 0] | all)
	| .met = (.total_s != null and .total_s <= .target_s and .all_ok)' "$WORK/wl/results.json" >"$OUT/workloads.json" ||
	{ echo "bench: jq could not write $OUT/workloads.json" >&2; exit 1; }
jq -r '"workloads (\(.accel), one guest, guest THP never and always, defaults): \(.workloads | join(",")) in \(.total_s*10|round/10) s boot to power-off, \(.cells | length) cells\(if .all_ok then "" else " (some repetitions failed)" end) (target <= \(.target_s) s: \(if .met then "met" else "NOT met" end))"' "$OUT/workloads.json"

# ---- measurement fidelity on the bare host ------------------------------------------
#  Both run the static guest program directly on the host (no guest): the memset fault
#  throughput against an independent tool, and the spread of the TLB miss cost.
bench/fidelity.sh || exit 1
bench/tlb_cv.sh || exit 1

# ---- calibration of the split and the gate (slow: opt in with BENCH_CALIBRATION=1) ------
if [ "${BENCH_CALIBRATION:-0}" = 1 ]; then
	bench/calibration.sh || exit 1
fi

# ---- the history gate over a series of real runs (slow: opt in with BENCH_GATE=1) ------
if [ "${BENCH_GATE:-0}" = 1 ]; then
	bench/gate.sh || exit 1
fi

# ---- kcompile under TCG (slow: opt in with BENCH_KCOMPILE=1) -------------------------
#  tinyconfig mm/ in one guest; target: at most 10 minutes of build (wall_s) under TCG here.
if [ "${BENCH_KCOMPILE:-0}" = 1 ]; then
	"$BIN" run --workloads=kcompile --host-thp=never --guest-thp=never --boots=1 --reps=1 --warmup=0 --vcpus=2 \
		--db=none --out="$WORK/kc" --quiet >/dev/null 2>"$WORK/kc.err" ||
		{ echo "bench: kcompile run failed: $(tail -1 "$WORK/kc.err")" >&2; exit 1; }
	jq '{ benchmark: "kcompile", accel, target_s: 600,
	      wall_s: ([.cells[] | select(.workload == "kcompile" and .target == "guest") | .metrics.wall_s.mean] | first),
	      user_s: ([.cells[] | select(.workload == "kcompile" and .target == "guest") | .metrics.user_s.mean] | first),
	      sys_s: ([.cells[] | select(.workload == "kcompile" and .target == "guest") | .metrics.sys_s.mean] | first) }
	    | .met = (.wall_s != null and .wall_s <= .target_s)' "$WORK/kc/results.json" >"$OUT/kcompile.json" ||
	{ echo "bench: jq could not write $OUT/kcompile.json" >&2; exit 1; }
	jq -r '"kcompile (\(.accel)): tinyconfig mm/ wall \(.wall_s) s, user \(.user_s) s, sys \(.sys_s) s (target <= \(.target_s) s: \(if .met then "met" else "NOT met" end))"' "$OUT/kcompile.json"
fi
