#!/bin/bash
# Integration test of the application workloads: redis and pgbench
# in real TCG guests whose image carries redis-server and PostgreSQL (copied
# from the host's packages), at small sizes (--workload-opts), with the guest
# shmem axis (--guest-shmem-thp=never,always): from `thpeval run` to
# results.json, every cell valid by its own evidence (the server's smaps;
# ShmemPmdMapped of the postgres processes), the axis in the variants, the
# host settings restored; then bad --guest-shmem-thp and --workload-opts
# values refused with one line, and a value the workload refuses in its own
# fail record. A few minutes under TCG. Prints PASS/FAIL/SKIP lines and a
# summary line.
set -u
cd "$(dirname "$0")/../.." || exit 1
IT_NAME="integration apps" IT_TMP=thpeval-it-apps
. tests/integration/lib.sh

if [ "$(id -u)" -ne 0 ]; then
	sk "application workloads need root (libvirtd qemu:///system, host THP writes)"
	finish
fi
missing=""
for p in redis-server redis-tools postgresql dash; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	# the guest image copies them from the host (supermin); thpeval refuses the run naming them
	sk "the guest image is built from host packages and these are not installed:$missing (apt-get install$missing)"
	finish
fi
if ! tools/services.sh; then
	ko "libvirtd could not be started"
	finish
fi

SMALL="redis:dataset=16M,redis:requests=4000,redis:clients=16,pgbench:scale=2,pgbench:shared-buffers=8M,pgbench:seconds=2"
COMMON="--workloads=redis,pgbench --boots=1 --reps=1 --warmup=0 --state-dir=$STATE --db=none"
LIMIT=2400 STALL=900

# ---- 1. both workloads, host never and always, guest never and always, shmem never and always ----
before=$(thp_snapshot)
f2m0=$(free_2m_mib)
t0=$SECONDS
# shellcheck disable=SC2086
it_run $LIMIT $STALL "$WORK/r1.out" "$WORK/r1.err" "$BIN" run --host-thp=always --guest-thp=always \
	--guest-shmem-thp=never,always --workload-opts="$SMALL" $COMMON --out="$WORK/r1"
rc=$it_rc
f2m1=$(free_2m_mib)
f2m=$((f2m0 < f2m1 ? f2m0 : f2m1))
J=$WORK/r1/results.json
if it_over "run --workloads=redis,pgbench"; then :; elif [ "$rc" -eq 0 ] && [ -s "$J" ]; then
	ok "run --workloads=redis,pgbench exits 0 ($((SECONDS - t0)) s)"; else
	ko "run exit $rc; stderr: $(tail -3 "$WORK/r1.err")"; fi
[ "$before" = "$(thp_snapshot)" ] && ok "host THP settings identical before and after" ||
	ko "host THP changed: before [$before] after [$(thp_snapshot)]"
if [ -z "$it_stop" ] && [ -s "$J" ]; then
	n=$(jq '[.cells[] | select(.workload == "redis")] | length' "$J")
	[ "$n" = 4 ] && ok "4 redis cells (host x guest THP)" || ko "$n redis cells"
	n=$(jq '[.cells[] | select(.workload == "pgbench" and (.variant == "shmem-never" or .variant == "shmem-always"))] | length' "$J")
	[ "$n" = 8 ] && ok "8 pgbench cells: each host x guest cell once per guest shmem_enabled" ||
		ko "$n pgbench cells with a shmem variant: $(jq -c '[.cells[] | select(.workload == "pgbench") | .variant]' "$J")"
	bad=$(jq -c '[.cells[] | select(.workload == "redis" or .workload == "pgbench") | select(.valid != true)
		| {workload, host_thp, guest_thp, variant, invalid_reason}]' "$J")
	# invalid only for what the host gives QEMU under host 'always', which thpeval does not
	# set: the per-size 2M knob, or free 2M blocks (buddyinfo) under 2 x the 1G guest
	pa=$(pmd_anon_policy always)
	hostonly=$(jq '[.cells[] | select((.workload == "redis" or .workload == "pgbench") and .valid != true)
		| select(.host_thp == "always" and (.invalid_reason // "" | startswith("host THP is always but only")))]
		| length' "$J")
	if [ "$bad" = "[]" ]; then
		ok "every redis and pgbench cell is valid by its own evidence"
	elif [ "$hostonly" = "$(jq length <<<"$bad")" ] && { [ "$pa" != always ] || [ "$f2m" -lt 2048 ]; }; then
		sk "$hostonly cells invalid for what this host gives QEMU (hugepages-2048kB under always: $pa; $f2m MiB free in 2M blocks): $(jq -c '[.[].invalid_reason] | unique' <<<"$bad")"
	else
		ko "invalid cells (free in 2M blocks: $f2m MiB): $bad"
	fi
	# the evidence itself, beside thpeval's verdict
	v=$(jq -c '[.cells[] | select(.workload == "redis") | {g: .guest_thp, c: .metrics.huge_pct.samples[0]}]' "$J")
	jq -e '[.cells[] | select(.workload == "redis") | .metrics.huge_pct.samples[0] as $c
		| if .guest_thp == "never" then $c <= 1 else $c >= 50 end] | all' "$J" >/dev/null &&
		ok "redis server coverage: none under guest never, most under always ($v)" || ko "redis coverage: $v"
	v=$(jq -c '[.cells[] | select(.workload == "pgbench") | {v: .variant, c: .metrics.shmem_pmd_pct.samples[0]}]' "$J")
	jq -e '[.cells[] | select(.workload == "pgbench") | .metrics.shmem_pmd_pct.samples[0] as $c
		| if .variant == "shmem-always" then $c >= 90 else $c <= 1 end] | all' "$J" >/dev/null &&
		ok "pgbench shared buffers: PMD-mapped under shmem always, not under never ($v)" ||
		ko "pgbench coverage: $v"
	jq -e '[.cells[] | select(.workload == "redis") | .metrics | (.get_req_per_s.samples[0] > 0 and
		.set_req_per_s.samples[0] > 0 and .get_p99_ms.samples[0] >= .get_p50_ms.samples[0] and
		.bgsave_fork_us.samples[0] > 0)] | all' "$J" >/dev/null &&
		ok "redis: GET and SET rates, p50 <= p99, a BGSAVE fork time in every cell" ||
		ko "redis metrics: $(jq -c '[.cells[] | select(.workload == "redis") | .metrics | map_values(.samples)]' "$J" | head -c 400)"
	jq -e '[.cells[] | select(.workload == "pgbench") | .metrics | (.select_tx_per_s.samples[0] > 0 and
		.tpcb_tx_per_s.samples[0] > 0 and .select_lat_ms.samples[0] > 0 and
		.db_bytes.samples[0] > .shared_buffers_bytes.samples[0])] | all' "$J" >/dev/null &&
		ok "pgbench: select-only and TPC-B rates and latency, a database larger than shared_buffers" ||
		ko "pgbench metrics: $(jq -c '[.cells[] | select(.workload == "pgbench") | .metrics | map_values(.samples)]' "$J" | head -c 400)"
	jq -e '[.cells[] | select(.workload == "redis") | .metrics.keys.samples[0] == 16384] | all' "$J" >/dev/null &&
		ok "--workload-opts reached the guest: 16384 keys of 1K (redis:dataset=16M)" ||
		ko "redis keys: $(jq -c '[.cells[] | select(.workload == "redis") | .metrics.keys.samples]' "$J")"
	jq -e '[.effects[]? | select(.workload == "redis" and .component == "tlb")] | length > 0' "$J" >/dev/null &&
		ok "the split lists redis (access phase get_avg_ms)" || ko "no redis split in results.json"
	for g in $(jq -r '.guests[] | "\(.name):\(.total_s)"' "$J"); do echo "  guest ${g%%:*}: ${g#*:} s"; done
fi

# ---- 2. refusals: one line, exit 2, nothing booted ---------------------------------------
refuse() {
	local label=$1 want=$2
	shift 2
	rm -rf "$WORK/bad"
	# the case's own --workloads replaces COMMON's (thpeval refuses an option given twice)
	local common=$COMMON
	case " $* " in
	*" --workloads="*) common=${COMMON/--workloads=redis,pgbench/} ;;
	esac
	# shellcheck disable=SC2086
	it_run 300 120 /dev/null "$WORK/bad.err" "$BIN" run $common --out="$WORK/bad" "$@"
	if it_over "$label"; then return; fi
	if [ "$it_rc" = 2 ] && grep -q -- "$want" "$WORK/bad.err" && [ ! -e "$WORK/bad" ]; then
		ok "$label: usage error naming it (exit 2)"
	else
		ko "$label: exit $it_rc, $(head -c 300 "$WORK/bad.err")"
	fi
}
refuse "--guest-shmem-thp=madvise" "not a shmem_enabled value: .*: 'madvise'" --guest-shmem-thp=madvise
refuse "--guest-shmem-thp without pgbench" "add one to --workloads" --guest-shmem-thp=always --workloads=redis
refuse "--workload-opts with a run option" "--size is set by thpeval itself" --workload-opts=redis:size=1G
refuse "--workload-opts with a metacharacter" "a value must be" --workload-opts='redis:dataset=4G;reboot'
refuse "--workload-opts for an unknown parameter" "workload redis has no parameter 'scale'" --workload-opts=redis:scale=4

# ---- 3. a value the workload refuses: its fail record, in every cell of the run ----------
# shellcheck disable=SC2086
it_run 900 300 /dev/null "$WORK/r3.err" "$BIN" run --host-thp=never --guest-thp=never \
	--workload-opts=redis:dataset=64G,pgbench:scale=1,pgbench:shared-buffers=64M $COMMON --out="$WORK/r3"
J=$WORK/r3/results.json
if it_over "values the workloads refuse"; then :; elif [ -s "$J" ] &&
	jq -e '[.cells[] | select(.workload == "redis") | .failures[] | test("dataset needs about")] | any' "$J" >/dev/null &&
	jq -e '[.cells[] | select(.workload == "pgbench") | .failures[] | test("not more than --shared-buffers")] | any' "$J" >/dev/null; then
	ok "redis:dataset=64G and pgbench at scale 1 with 64M buffers: failed cells with the workloads' reasons"
else
	ko "refused values: $(jq -c '[.cells[] | {workload, failures}]' "$J" 2>/dev/null) $(tail -2 "$WORK/r3.err")"
fi
finish
