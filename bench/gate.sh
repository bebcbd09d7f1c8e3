#!/bin/bash
# The history gate on real runs: a history of GATE_RUNS (12) runs of one
# command with nothing changed, each gated against the runs before it
# (--baseline=history), then GATE_SLOW (3) runs of the same command with a
# QEMU that really slows the guests (bench/slow-qemu.sh, nochain mode) put in
# at the same emulator path, as a QEMU update would be: the gate should say
# nothing worse than one 'suspect' over the last 6 quiet runs, and
# 'regression' by the third slow run.
#
#   bench/gate.sh            (root; BENCH_GATE=1 make bench runs it)
#
# Writes bench/results/gate.json: each run's exit status, its history-gate
# summary and each metric kind's verdict and change; the load average around
# each run. GATE_BOOTS (2) boots per host setting, memset in 512M guests with
# GATE_SIZE (64M) buffers: about a minute and a half a run under TCG here.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${THPEVAL_BIN:-$PWD/bin/thpeval}
. bench/lib.sh
QEMU=${SLOW_QEMU_REAL:-/usr/bin/qemu-system-x86_64}
RUNS=${GATE_RUNS:-12}
SLOW=${GATE_SLOW:-3}
bench_guest_setup gate 77 gate
chmod 0711 "$WORK"	# libvirt's QEMU user runs the wrapper from here
mkdir -m 0755 "$WORK/qemu"
SLOWQ=$(SLOW_QEMU_REAL=$QEMU bench/slow-qemu.sh --install "$WORK/qemu" nochain)
EMU=$WORK/qemu/qemu	# one path for every run: the gate's setup stays the same
printf '#!/bin/sh\nexec %s "$@"\n' "$QEMU" >"$WORK/qemu/plain"
chmod 0755 "$WORK/qemu/plain"
DB=$WORK/history.db
: >"$WORK/runs.jsonl"

one_run() {	# N KIND(plain|slow)
	local n=$1 kind=$2 rc=0 l0 l1 out=$WORK/run$1
	cp "$WORK/qemu/$([ "$kind" = slow ] && basename "$SLOWQ" || echo plain)" "$EMU.tmp"
	mv "$EMU.tmp" "$EMU"
	l0=$(cut -d' ' -f1 /proc/loadavg)
	# another thpeval run holds the host's THP settings: wait for it (BENCH_LOCK_WAIT, 600 s)
	local start=$SECONDS
	while :; do
		rc=0
		rm -rf "$out"
		"$BIN" run --host-thp=always --workloads=memset --boots="${GATE_BOOTS:-2}" --target-ci=none \
			--memory=512M --size="${GATE_SIZE:-64M}" --emulator="$EMU" --db="$DB" --baseline=history \
			--out="$out" --quiet >"$out.stdout" 2>"$out.stderr" || rc=$?
		grep -q "are locked by" "$out.stderr" && [ $((SECONDS - start)) -lt "${BENCH_LOCK_WAIT:-600}" ] || break
		sleep 5
	done
	l1=$(cut -d' ' -f1 /proc/loadavg)
	if [ "$rc" -gt 1 ] || [ ! -f "$out/results.json" ]; then
		echo "gate: run $n ($kind) failed (exit $rc): $(tail -n 2 "$out.stderr")" >&2
		exit 1
	fi
	# every gated run prints its verdict: one that did not cannot count as a quiet pass
	if ! grep -q '^history gate: ' "$out.stdout"; then
		echo "gate: run $n ($kind) printed no history-gate summary: $(tail -n 2 "$out.stdout")" >&2
		exit 1
	fi
	# the kind table's rows: "  KIND cells runs tau change p_suspect p_regression verdict..."
	jq -n --argjson n "$n" --arg kind "$kind" --argjson rc "$rc" --argjson l0 "$l0" --argjson l1 "$l1" \
		--arg summary "$(sed -n 's/^history gate: //p' "$out.stdout" | tail -n 1)" \
		--rawfile table "$out.stdout" \
		'{run: $n, setup: $kind, exit: $rc, load_before: $l0, load_after: $l1, summary: $summary,
		  kinds: ($table | split("\n") | . as $l | ($l | map(test("^history gate against")) | index(true)) as $h
			  | if $h == null then [] else $l[$h + 2:] | (index("") // length) as $e | .[:$e] end
			  | map(gsub("^ +"; "")))}' >>"$WORK/runs.jsonl"
	printf 'gate: run %2d (%s): exit %d, %s\n' "$n" "$kind" "$rc" \
		"$(sed -n 's/^history gate: //p' "$out.stdout" | tail -n 1)"
}

for i in $(seq 1 "$RUNS"); do one_run "$i" plain; done
for i in $(seq $((RUNS + 1)) $((RUNS + SLOW))); do one_run "$i" slow; done

mkdir -p bench/results
jq -s --argjson runs "$RUNS" '{
	benchmark: "gate", quiet_runs: $runs, slow_runs: (length - $runs), slowdown: "bench/slow-qemu.sh nochain",
	runs: .,
	quiet_last6: [.[] | select(.run > $runs - 6 and .run <= $runs)],
	regression_in_quiet: ([.[] | select(.run > $runs - 6 and .run <= $runs and (.summary | test("[1-9][0-9]* regression")))] | length),
	suspect_runs_in_quiet: ([.[] | select(.run > $runs - 6 and .run <= $runs and (.summary | test(" [1-9][0-9]* suspect")))] | length),
	first_suspect_slow: ([.[] | select(.run > $runs and (.summary | test(" [1-9][0-9]* suspect|[1-9][0-9]* regression")))] | first | .run),
	first_regression_slow: ([.[] | select(.run > $runs and (.summary | test("[1-9][0-9]* regression")))] | first | .run)
} | .met = (.regression_in_quiet == 0 and .suspect_runs_in_quiet <= 1 and .first_regression_slow != null)' \
	"$WORK/runs.jsonl" >"$WORK/gate.json"
mv "$WORK/gate.json" bench/results/gate.json
jq -r '"gate: quiet runs \(.quiet_runs - 5)-\(.quiet_runs): \(.regression_in_quiet) with a regression, \(.suspect_runs_in_quiet) with a suspect; slow runs: first suspect at run \(.first_suspect_slow // "none"), first regression at run \(.first_regression_slow // "none"); met: \(.met)"' \
	bench/results/gate.json
