#!/bin/bash
# Calibration of the split and the gate on this machine (not a timed test):
#  - RUNS back-to-back default runs of `thpeval run --host-thp=always` (default 5);
#  - per memset effect: the median of the RUNS estimates, how many runs' 95% CIs
#    hold it (target: RUNS - 1 or more), the spread of the estimates (sd, range)
#    beside the mean CI half-width (target half-widths: host-side <= 15 points,
#    guest-side <= 5, in every run: the default run adds boots until they are met
#    or its budget (4m45s) is spent);
#  - per memset effect, the spread between the runs beyond what each run's own
#    interval allows (a random-effects view of the runs on the log scale,
#    DerSimonian-Laird): Cochran's Q on RUNS - 1 df, I2 (the share of the spread
#    that is between runs, not chance) and tau (the between-run SD, log x 100,
#    about percentage points); what no interval from one run can cover;
#  - A/A: `thpeval compare` of every pair of runs (10 for 5 runs; target: at most
#    1 fails the gate), and one run against a copy of itself with access_ns 20%
#    worse (target: the gate fails);
#  - the wall time of each run (target: <= 5 minutes).
# Figures to bench/results/calibration.json and stdout. Takes RUNS x the default
# run (about 4 minutes each under TCG here). Needs root.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=$PWD/bin/thpeval
OUT=bench/results
RUNS=${CALIBRATION_RUNS:-5}
mkdir -p "$OUT"

# the summary of the runs' results.json files (jq -s); CALIBRATION_JQ_ONLY=1 below runs it alone
CALIB_JQ='
	def median: sort | if length % 2 == 1 then .[(length - 1) / 2] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def sd: (add / length) as $m | (map((. - $m) * (. - $m)) | add / (length - 1)) | sqrt;
	length as $runs
	| map(.settings.rounds) as $rounds
	| map(.settings.rounds_stopped) as $stopped
	| [.[] | .effects[] | select(.workload == "memset" and .side != "total")
	   | .key = "\(.side) \(.component)\(if .at_guest then " (guest \(.at_guest))" else "" end) \(.metric), host \(.host_thp) guest \(.guest_thp)"]
	| group_by(.key)
	| map([.[] | select(.available)] as $a
		| ($a | map(.estimate_pct)) as $est
		| ($a | map(.log_estimate)) as $y
		| ($a | map(.log_se)) as $se
		| (if ($y | length) > 1 and ([$se[] | select(. != null and . > 0)] | length) == ($y | length) then
			($se | map(1 / (. * .))) as $w | ($w | add) as $sw
			| ([range(0; $y | length) | $w[.] * $y[.]] | add / $sw) as $ybar
			| ([range(0; $y | length) | $w[.] * ($y[.] - $ybar) * ($y[.] - $ybar)] | add) as $q
			| (($y | length) - 1) as $df
			| ([0, ($q - $df) / ($sw - (($w | map(. * .) | add) / $sw))] | max) as $tau2
			| { cochran_q: $q, df: $df,
			    i2_pct: (if $q > 0 then ([0, ($q - $df) / $q] | max) * 100 else 0 end),
			    tau_log: ($tau2 | sqrt), tau_x100: (($tau2 | sqrt) * 100) }
		  else null end) as $between
		| (if ($est | length) > 0 then ($est | median) else null end) as $med
		| { effect: .[0].key, side: .[0].side, runs: $runs, runs_available: ($a | length),
		    estimates_pct: $est, median_pct: $med,
		    half_widths_pct: ($a | map((.ci95_high_pct - .ci95_low_pct) / 2)),
		    runs_holding_median: (if $med == null then 0 else
			[$a[] | select(.ci95_low_pct <= $med and $med <= .ci95_high_pct)] | length end),
		    notes: ([.[] | select(.available | not) | .note] | unique),
		    between_runs: $between }
		| .mean_half_width_pct = (if (.half_widths_pct | length) > 0 then (.half_widths_pct | add / length) else null end)
		| .max_half_width_pct = (if (.half_widths_pct | length) > 0 then (.half_widths_pct | max) else null end)
		| .spread_sd_pct = (if (.estimates_pct | length) > 1 then (.estimates_pct | sd) else null end)
		| .spread_range_pct = (if (.estimates_pct | length) > 0 then ((.estimates_pct | max) - (.estimates_pct | min)) else null end)
		| .half_width_target_pct = (if .side == "guest" then 5 else 15 end)
		| .calibrated = (.runs_available == $runs and .runs_holding_median >= $runs - 1)
		| .half_width_target_pct as $t
		| .runs_within_target = ([.half_widths_pct[] | select(. <= $t)] | length)
		| .narrow_enough = (.max_half_width_pct != null and .max_half_width_pct <= .half_width_target_pct))
	| { benchmark: "calibration", runs: $runs, run_seconds: $secs, max_run_s: ($secs | max),
	    rounds: $rounds, rounds_stopped: $stopped,
	    run_target_s: 300, effects: .,
	    aa: { comparisons: $aa_n, flagged: $aa_flagged, target_max_flagged: 1 },
	    worse_access_20pct: { gate_failed: ($worse_rc == 1) } }
	| .all_calibrated = ([.effects[].calibrated] | all)
	| .all_narrow = ([.effects[].narrow_enough] | all)'
# CALIBRATION_JQ_ONLY=1 FILE...: print the summary of existing results.json files (a check of this script)
# (AA_N, AA_FLAGGED, WORSE_RC and SECS, a JSON array, fill in what the runs' files do not hold)
if [ "${CALIBRATION_JQ_ONLY:-0}" = 1 ]; then
	exec jq -s --argjson aa_n "${AA_N:-0}" --argjson aa_flagged "${AA_FLAGGED:-0}" --argjson worse_rc "${WORSE_RC:-0}" \
		--argjson secs "${SECS:-[0]}" "$CALIB_JQ" "$@"
fi

# root, libvirtd, $WORK and the guest image (after the summary-only mode, which needs none)
. bench/lib.sh
bench_guest_setup calibration 77 calib

for i in $(seq 1 "$RUNS"); do
	t0=$(date +%s)
	if ! "$BIN" run --host-thp=always --db=none --out="$WORK/r$i" --quiet >"$WORK/r$i.out" 2>"$WORK/r$i.err"; then
		echo "calibration: run $i failed: $(tail -n 1 "$WORK/r$i.err")" >&2
		exit 1
	fi
	echo "$(($(date +%s) - t0))" >"$WORK/r$i.secs"
	echo "calibration: run $i of $RUNS in $(cat "$WORK/r$i.secs") s" >&2
done

# A/A: every pair; exit 1 = the gate failed
aa_n=0 aa_flagged=0
for i in $(seq 1 "$RUNS"); do
	for j in $(seq $((i + 1)) "$RUNS"); do
		"$BIN" compare "$WORK/r$i" "$WORK/r$j" >"$WORK/aa-$i-$j.txt" 2>&1
		rc=$?
		[ "$rc" -eq 2 ] && { echo "calibration: compare $i $j: $(tail -n 1 "$WORK/aa-$i-$j.txt")" >&2; exit 1; }
		aa_n=$((aa_n + 1))
		[ "$rc" -eq 1 ] && aa_flagged=$((aa_flagged + 1))
	done
done
# one run against a copy of itself with every access_ns sample 20% worse (the loader
# recomputes every statistic from the samples): the gate's power against its own
# intervals. (A copy of run 1 against run 2 mixed that with the machine's drift between
# the runs, which the A/A pairs above measure: once run 2 was itself 20% slower.)
jq '(.cells[] | select(.workload == "memset" and .metrics.access_ns != null) | .metrics.access_ns.samples) |= map(. * 1.2)' \
	"$WORK/r1/results.json" >"$WORK/worse.json" || { echo "calibration: cannot make the worse copy" >&2; exit 1; }
"$BIN" compare "$WORK/r1/results.json" "$WORK/worse.json" >"$WORK/worse.txt" 2>&1
worse_rc=$?
[ "$worse_rc" -eq 2 ] && { echo "calibration: compare with the worse copy: $(tail -n 1 "$WORK/worse.txt")" >&2; exit 1; }

jq -s --argjson aa_n "$aa_n" --argjson aa_flagged "$aa_flagged" --argjson worse_rc "$worse_rc" \
	--argjson secs "$(cat "$WORK"/r*.secs | jq -s .)" "$CALIB_JQ" "$WORK"/r*/results.json >"$OUT/calibration.json" ||
	{ echo "calibration: jq could not write $OUT/calibration.json" >&2; exit 1; }
cp "$WORK/worse.txt" "$OUT/calibration-worse-compare.txt"
rm -rf "$OUT/calibration-runs" && mkdir -p "$OUT/calibration-runs" &&
	for i in $(seq 1 "$RUNS"); do cp "$WORK/r$i/results.json" "$OUT/calibration-runs/r$i.json"; done
cp "$WORK/aa-1-2.txt" "$OUT/calibration-aa-compare.txt"
jq -r '"calibration: \(.runs) default runs of --host-thp=always, \(.run_seconds | map(tostring + " s") | join(", ")) (target <= \(.run_target_s) s each); boots per host setting \(.rounds | map(tostring) | join(", ")) (\(.rounds_stopped | map(. // "fixed") | unique | join("; ")))",
	(.effects[] | "  \(.effect): estimates \(.estimates_pct | map(.*10|round/10) | join(", ")) (sd \(.spread_sd_pct // 0 | .*10|round/10), range \(.spread_range_pct // 0 | .*10|round/10)); CI half-width mean \(.mean_half_width_pct // 0 | .*10|round/10), max \(.max_half_width_pct // 0 | .*10|round/10) (target <= \(.half_width_target_pct), met in \(.runs_within_target) of \(.runs)); \(.runs_holding_median) of \(.runs) CIs hold the median\(if .between_runs then "; between runs: I2 \(.between_runs.i2_pct | round)%, tau \(.between_runs.tau_x100 | .*10|round/10) (log x 100)" else "" end)\(if .runs_available < .runs then "; not available in \(.runs - .runs_available): \(.notes | join("; "))" else "" end)"),
	"  A/A: \(.aa.flagged) of \(.aa.comparisons) comparisons failed the gate (target <= \(.aa.target_max_flagged)); access_ns 20% worse: gate \(if .worse_access_20pct.gate_failed then "failed (caught)" else "passed (NOT caught)" end)",
	"  every effect calibrated: \(.all_calibrated); every half-width within target: \(.all_narrow)"' "$OUT/calibration.json"
