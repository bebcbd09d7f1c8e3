#!/bin/bash
# Stability of the TLB miss cost on the bare host: RUNS runs of the tlb workload
# (its defaults and BENCH_TLB_ARGS, by default --walk-loads=200000: about 15 s
# of walk-point trials per run instead of 1.6 s), each a fresh process; per run the summary's
# walk-point figures and over the runs their mean, standard deviation and
# coefficient of variation (target: CV <= 5%).
# The figure held to the target is tlb_walk_shared_extra_ns: at the walk point
# (the chain's lines fit in L2) one shared buffer chased through its 4K and its
# 2M view, the same frames and cache lines behind both, so the difference is the
# page walk alone. Beside it: tlb_walk_extra_ns (the same point on two fresh
# regions, whose lines evict each other's between trials) and tlb_miss_extra_*
# (the largest working set, where the data misses the caches too). On a host
# whose last-level cache and memory are shared with other tenants all of them
# move with their load, which no estimator inside one run can take out.
# Needs host THP 'madvise' or 'always' (the 2M arm is MADV_HUGEPAGE) and shmem
# THP 'advise' or 'always' (the shared buffer); 'never' is set to 'madvise' /
# 'advise' for the runs (thpeval host set: journaled) and put back. Writes
# bench/results/tlb_cv.json (or BENCH_TLB_OUT) and prints one summary line.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=$PWD/bin/thpeval
GUEST=$PWD/bin/thpeval-guest
OUT=${BENCH_TLB_OUT:-bench/results/tlb_cv.json}
RUNS=${BENCH_TLB_RUNS:-5}
# shellcheck disable=SC2206
ARGS=(${BENCH_TLB_ARGS---walk-loads=200000})
TARGET=5
mkdir -p "$(dirname "$OUT")"
THP=/sys/kernel/mm/transparent_hugepage
WORK=$(mktemp -d /tmp/thpeval-tlbcv.XXXXXX)
restore=()
# knob, the value to use when it is 'never'
for kv in enabled=madvise shmem_enabled=advise; do
	k=${kv%%=*}
	cur=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$THP/$k" 2>/dev/null)
	[ "$cur" = never ] || continue
	if [ "$(id -u)" -ne 0 ]; then
		echo "bench: tlb_cv needs host THP $k ${kv#*=} or always (or root to set it); skipped" >&2
		exit 0
	fi
	"$BIN" host set "$kv" >/dev/null || { echo "bench: cannot set host THP $k" >&2; exit 1; }
	restore+=("$k=$cur")
done
trap 'for kv in "${restore[@]}"; do "$BIN" host set "$kv" >/dev/null; done; rm -rf "$WORK"' EXIT

start=$SECONDS
for i in $(seq 1 "$RUNS"); do
	"$GUEST" workload tlb --rep="$i" "${ARGS[@]}" >"$WORK/r" 2>&1 ||
		{ echo "bench: tlb failed: $(tail -1 "$WORK/r")" >&2; exit 1; }
	grep ' result ' "$WORK/r" | grep 'variant=summary' | tr ' ' '\n' |
		awk -F= -v ldavg="$(cut -d' ' -f1 /proc/loadavg)" '
		$1 ~ /^(walk_shared_block_min_ns|walk_shared_block_max_ns|tlb_walk_shared_extra_ns|tlb_walk_shared_extra_cycles|tlb_walk_shared_extra_pct|walk_shared_4k_access_ns|walk_shared_2m_access_ns|walk_shared_trials|walk_shared_loads|tlb_miss_extra_ns|tlb_miss_extra_cycles|tlb_miss_extra_pct|tlb_walk_extra_ns|tlb_walk_extra_cycles|tlb_walk_extra_pct|walk_ws_pages|l2_bytes|large_4k_access_ns|large_2m_access_ns|huge_pct|huge_valid|split|cpu|points|pages_max|trials|loads)$/ { v[$1] = $2 }
		END { printf "{"; for (k in v) printf "\"%s\": %s, ", k, v[k]; printf "\"load_avg_1m\": %s}\n", ldavg }' >>"$WORK/runs"
done
elapsed=$((SECONDS - start))
jq -s --arg args "${ARGS[*]}" --argjson target "$TARGET" --argjson elapsed "$elapsed" '
	def stats(k): [.[] | .[k] | select(. != null)] as $v
		| ($v | length) as $n
		| (if $n > 0 then ($v | add / $n) else null end) as $m
		| (if $n > 1 then (([$v[] | (. - $m) * (. - $m)] | add) / ($n - 1) | sqrt) else null end) as $sd
		| { n: $n, values: $v, mean: $m, sd: $sd,
		    cv_pct: (if $sd != null and $m != 0 then ($sd / $m * 100 | fabs) else null end) };
	{ benchmark: "tlb_cv", target: "host", workload_args: $args, runs: length,
	  elapsed_s: $elapsed, target_cv_pct: $target,
	  walk_ws_pages: ([.[].walk_ws_pages] | unique), l2_bytes: ([.[].l2_bytes] | unique),
	  tlb_walk_shared_extra_ns: stats("tlb_walk_shared_extra_ns"),
	  tlb_walk_shared_extra_cycles: stats("tlb_walk_shared_extra_cycles"),
	  tlb_walk_shared_extra_pct: stats("tlb_walk_shared_extra_pct"),
	  walk_shared_2m_access_ns: stats("walk_shared_2m_access_ns"),
	  walk_shared_within_run_ns: { low: ([.[].walk_shared_block_min_ns | select(. != null)] | min),
				       high: ([.[].walk_shared_block_max_ns | select(. != null)] | max) },
	  tlb_walk_extra_ns: stats("tlb_walk_extra_ns"),
	  tlb_walk_extra_cycles: stats("tlb_walk_extra_cycles"),
	  tlb_walk_extra_pct: stats("tlb_walk_extra_pct"),
	  tlb_miss_extra_ns: stats("tlb_miss_extra_ns"),
	  tlb_miss_extra_cycles: stats("tlb_miss_extra_cycles"),
	  tlb_miss_extra_pct: stats("tlb_miss_extra_pct"),
	  load_avg_1m: [.[].load_avg_1m], per_run: . }
	| .pass = (.tlb_walk_shared_extra_ns.n == .runs and .tlb_walk_shared_extra_ns.cv_pct != null
		 and .tlb_walk_shared_extra_ns.cv_pct <= $target)' \
	"$WORK/runs" >"$OUT" || { echo "bench: jq could not write $OUT" >&2; exit 1; }
jq -r '"tlb_cv (host, \(.runs) runs\(if .workload_args != "" then ", " + .workload_args else "" end), load \(.load_avg_1m|map(tostring)|join("/"))): page walk at \(.walk_ws_pages|map(tostring)|join(",")) pages (L2 \(.l2_bytes[0] / 1024)K), same frames: \(if .tlb_walk_shared_extra_ns.n == .runs then "\(.tlb_walk_shared_extra_ns.mean*100|round/100) ns per load (CV \(.tlb_walk_shared_extra_ns.cv_pct*10|round/10)%), \(.tlb_walk_shared_extra_cycles.mean // 0|round) cycles; within single runs its blocks of trials ranged \(.walk_shared_within_run_ns.low*10|round/10)-\(.walk_shared_within_run_ns.high*10|round/10) ns" else "ran in \(.tlb_walk_shared_extra_ns.n) of \(.runs) runs" end); \(if .pass then "ok" else "ABOVE" end) target CV <= \(.target_cv_pct)%. Two fresh regions: \(.tlb_walk_extra_ns.mean*100|round/100) ns (CV \(.tlb_walk_extra_ns.cv_pct*10|round/10)%). Largest set (data misses the caches too): \(.tlb_miss_extra_ns.mean*100|round/100) ns (CV \(.tlb_miss_extra_ns.cv_pct*10|round/10)%)"' "$OUT"
