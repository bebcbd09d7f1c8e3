#!/bin/bash
# bench/calibration.sh's summary (CALIBRATION_JQ_ONLY=1) on planted runs with
# known answers: the runs holding the median, and the between-run spread
# (DerSimonian-Laird on the log scale): none where the runs agree within their
# own intervals, Q 160, I2 97.5% and tau 0.3122 where five runs 0.2 apart each
# carry a standard error of 0.05.
set -u
cd "$(dirname "$0")/../.." || exit 1
pass=0 fail=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
ko() { echo "FAIL: $*"; fail=$((fail + 1)); }
if ! command -v jq >/dev/null 2>&1; then
	echo "SKIP: jq is not installed"
	echo "calibration-jq: 0 passed, 0 failed, 1 skipped"
	exit 77
fi
WORK=$(mktemp -d /tmp/thpeval-caljq.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# run FILE SIDE LOG_ESTIMATE LOG_SE: one run's results.json with one memset effect
run() {
	jq -n --arg side "$2" --argjson y "$3" --argjson se "$4" '
		def pct(d): (1 - (-d | exp)) * 100;
		{ settings: { rounds: 4, rounds_stopped: "target met" },
		  effects: [ { workload: "memset", side: $side, component: "prefault", metric: "fault_ns_per_4k",
			       host_thp: "always", guest_thp: "always", available: true,
			       estimate_pct: pct($y), ci95_low_pct: pct($y - 1.96 * $se),
			       ci95_high_pct: pct($y + 1.96 * $se), log_estimate: $y, log_se: $se } ] }' >"$1"
}
summary() { CALIBRATION_JQ_ONLY=1 bash bench/calibration.sh "$@"; }

# five runs that agree: Q 0, no between-run spread, all five hold the median
for i in 1 2 3 4 5; do run "$WORK/a$i.json" guest 0.1 0.05; done
s=$(summary "$WORK"/a*.json)
if jq -e '.effects[0] | .runs_holding_median == 5 and .calibrated and .between_runs.cochran_q < 1e-9 and
	.between_runs.i2_pct == 0 and .between_runs.tau_log == 0' <<<"$s" >/dev/null; then
	ok "runs that agree: 5 of 5 hold the median, Q 0, I2 0, tau 0"
else
	ko "runs that agree: $(jq -c '.effects[0] | {runs_holding_median, calibrated, between_runs}' <<<"$s")"
fi

# five runs 0.2 apart, each with a standard error of 0.05: w 400 each, mean 0.4,
# Q = 400 x (0.16 + 0.04 + 0 + 0.04 + 0.16) = 160 on 4 df, C = 2000 - 5 x 400^2 / 2000
# = 1600, tau^2 = (160 - 4) / 1600 = 0.0975, I2 = 156 / 160
i=0
for y in 0 0.2 0.4 0.6 0.8; do i=$((i + 1)); run "$WORK/b$i.json" host "$y" 0.05; done
s=$(summary "$WORK"/b*.json)
if jq -e '.effects[0] | .runs_holding_median == 1 and (.calibrated | not) and .side == "host" and
	(.between_runs.cochran_q - 160 | fabs) < 1e-6 and .between_runs.df == 4 and
	(.between_runs.i2_pct - 97.5 | fabs) < 1e-6 and (.between_runs.tau_log - (0.0975 | sqrt) | fabs) < 1e-9 and
	(.between_runs.tau_x100 - 100 * (0.0975 | sqrt) | fabs) < 1e-6' <<<"$s" >/dev/null; then
	ok "runs 0.2 apart: 1 of 5 holds the median, Q 160 on 4 df, I2 97.5%, tau 0.3122"
else
	ko "runs 0.2 apart: $(jq -c '.effects[0] | {runs_holding_median, calibrated, side, between_runs}' <<<"$s")"
fi

# one run alone has no between-run spread to give
run "$WORK/c1.json" guest 0.1 0.05
s=$(summary "$WORK/c1.json")
if jq -e '.effects[0] | .between_runs == null and .runs == 1' <<<"$s" >/dev/null; then
	ok "one run: no between-run figures"
else
	ko "one run: $(jq -c '.effects[0] | {runs, between_runs}' <<<"$s")"
fi

echo "calibration-jq: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
