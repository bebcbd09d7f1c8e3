#!/bin/bash
# bench/kvm_accept.sh --check on stored results, since no machine here runs KVM
# guests. Fixtures (tests/report/fixtures/):
#  kvm-accept-tcg.json  a real TCG run on this machine ('thpeval run --accel=tcg
#                       --host-thp=always --workloads=memset --reps=2 --size=64M
#                       --memory=512M --cold-reps=0 --warmup=0 --accesses=100000')
#  kvm-accept-kvm.json  that file made a KVM run: accel, the telemetry notes and
#                       the host_kvm_/host_guest_ fields as run.c writes them on
#                       a KVM host (values constructed: no KVM host here)
# The KVM file must pass and load with 'thpeval report'; the TCG file must fail
# as "not a KVM run"; broken copies of the KVM file (jq) must each fail with
# their own reason; the live mode must exit 77 with the reason without KVM.
set -u
cd "$(dirname "$0")/../.." || exit 1
ACC=bench/kvm_accept.sh
FIX=tests/report/fixtures
KVMF=$FIX/kvm-accept-kvm.json
TCGF=$FIX/kvm-accept-tcg.json
pass=0 fail=0 skip=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
if ! command -v jq >/dev/null; then
	echo "SKIP: jq is not installed (tools/deps.sh installs it)"
	echo "kvm_accept_check: 0 passed, 0 failed, 1 skipped"
	exit 77
fi
WORK=$(mktemp -d /tmp/thpeval-kvmacc.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# run the checker; $rc, and its output in $WORK/out
acc() {
	"$ACC" "$@" >"$WORK/out" 2>&1
	rc=$?
}
show() { sed 's/^/   | /' "$WORK/out"; }
has() { grep -qF -- "$1" "$WORK/out"; }

# verdict NAME WANT-RC LINE...: the last acc exited WANT-RC and printed every LINE
verdict() {
	local name=$1 want=$2 l missing=""
	shift 2
	for l in "$@"; do
		has "$l" || missing="$missing [$l]"
	done
	if [ "$rc" -eq "$want" ] && [ -z "$missing" ]; then
		ok "$name"
	else
		ko "$name: exit $rc (want $want), missing:${missing:- none}"
		show
	fi
}

# expect NAME FILE RC LINE...: the checker exits RC and prints every LINE
expect() {
	local name=$1 file=$2 want=$3
	shift 3
	acc --check "$file"
	verdict "$name" "$want" "$@"
}

# ---- the good KVM run -----------------------------------------------------------
expect "KVM run passes every check" "$KVMF" 0 "kvm_accept: 16 passed, 0 failed, 0 skipped" \
	"PASS: host_kvm_pages_2m: one sample per repetition in every guest cell" \
	"PASS: guest memory KVM maps per repetition: 227.4 to 241 MiB, guest RAM 512 MiB" \
	"PASS: host always/madvise: host_kvm_huge_pct at least 96.3% (>= 50%)" \
	"PASS: host never: host_kvm_huge_pct at most 0% (<= 5%)" \
	"PASS: guest-mode PMU fields (host_guest_dtlb_load_misses, host_guest_itlb_load_misses): one sample per repetition in every guest cell"
if has "FAIL"; then ko "KVM run printed a FAIL line"; show; else ok "KVM run: no FAIL line"; fi
# what the checker passes, thpeval itself can read back (a KVM memset cell has 45 metrics)
if "${THPEVAL_BIN:-bin/thpeval}" report "$KVMF" --format=json >"$WORK/re.json" 2>"$WORK/re.err"; then
	n=$(jq '[.cells[].metrics | keys[] | select(startswith("host_kvm_") or startswith("host_guest_"))] | length' "$WORK/re.json")
	if [ "$n" = 28 ]; then
		ok "'thpeval report' loads the KVM run with its 28 KVM/PMU metrics"
	else
		ko "report kept $n of 28 KVM/PMU metrics"
	fi
else
	ko "'thpeval report' cannot load the KVM run: $(cat "$WORK/re.err")"
fi

# ---- the TCG run -----------------------------------------------------------------
expect "TCG run is not a KVM run" "$TCGF" 1 "FAIL: not a KVM run: accel is tcg (tcg requested)" \
	"PASS: tcg run: no host_kvm_ or host_guest_ field in any cell" "SKIP: KVM field checks: not a KVM run" \
	"kvm_accept: 1 passed, 1 failed, 1 skipped"
# the bug host_snap_take had: stack garbage as KVM fields in every TCG cell
jq '.cells[].metrics += { host_kvm_pages_2m: { samples: [94559741590144], n: 1, mean: 94559741590144 },
			  host_kvm_huge_pct: { samples: [100], n: 1, mean: 100 } }' "$TCGF" >"$WORK/tcg-garbage.json"
expect "TCG run with KVM fields fails" "$WORK/tcg-garbage.json" 1 "FAIL: not a KVM run" \
	"FAIL: tcg run carries fields only KVM can give: host_kvm_huge_pct host_kvm_pages_2m"

# ---- broken copies of the KVM run: each fails with its reason ------------------
# mutate NAME JQ-FILTER LINE...: the KVM file through the filter must fail with every LINE
mutate() {
	local name=$1 filter=$2
	shift 2
	if ! jq "$filter" "$KVMF" >"$WORK/m.json" 2>"$WORK/jq.err"; then
		ko "$name: jq filter failed: $(cat "$WORK/jq.err")"
		return
	fi
	expect "$name" "$WORK/m.json" 1 "$@"
}
AA='.cells[] | select(.host_thp == "always" and .guest_thp == "always")'
NN='.cells[] | select(.host_thp == "never" and .guest_thp == "never")'
mutate "a cell without host_kvm_pages_2m" "($AA).metrics |= del(.host_kvm_pages_2m)" \
	"FAIL: host_kvm_pages_2m missing or short in 1 of 4 guest cells: always/always memset"
mutate "a cell with one host_kvm_huge_pct sample of two" "($NN).metrics.host_kvm_huge_pct.samples |= .[0:1]" \
	"FAIL: host_kvm_huge_pct missing or short in 1 of 4 guest cells: never/never memset"
mutate "nx_lpage_splits in some cells only" "($NN).metrics |= del(.host_kvm_nx_lpage_splits)" \
	"FAIL: host_kvm_nx_lpage_splits in only 3 of 4 guest cells: missing in never/never memset"
mutate "a wrapped nx_lpage_splits delta" "($AA).metrics.host_kvm_nx_lpage_splits.samples[1] = 18446744073709551615" \
	"FAIL: bad KVM counts: host_kvm_nx_lpage_splits 18446744073709552000 in always/always memset"
mutate "a fractional page count" "($NN).metrics.host_kvm_pages_4k.samples[0] = 58214.5" \
	"FAIL: bad KVM counts: host_kvm_pages_4k 58214.5 in never/never memset"
mutate "more mapped than guest RAM" "($NN).metrics.host_kvm_pages_4k.samples[0] = 200000" \
	"FAIL: guest memory KVM maps out of (0, RAM + 128 MiB] (guest RAM 512 MiB): 781.3 MiB in never/never memset"
mutate "nothing mapped" "($NN).metrics.host_kvm_pages_4k.samples[1] = 0" \
	"FAIL: guest memory KVM maps out of (0, RAM + 128 MiB] (guest RAM 512 MiB): 0 MiB in never/never memset"
mutate "a huge share above 100" "($AA).metrics.host_kvm_huge_pct.samples[0] = 150" \
	"FAIL: host_kvm_huge_pct out of 0..100: 150 in always/always memset"
mutate "a huge share the page counts do not give" "($AA).metrics.host_kvm_huge_pct.samples[1] = 50" \
	"FAIL: host_kvm_huge_pct disagrees with the page counts: 50% where the pages give 96.3% in always/always memset"
mutate "host always mapped small" \
	"($AA).metrics |= (.host_kvm_pages_2m.samples = [1, 1] | .host_kvm_huge_pct.samples = [100 * 512 / (2301 + 512), 100 * 512 / (2298 + 512)] | .host_kvm_huge_pct.mean = 18.2)" \
	"FAIL: host always/madvise: host_kvm_huge_pct as low as 18.2% (want >= 50%; host coverage 100%): always/always memset"
mutate "host never mapped huge" "($NN).metrics.host_kvm_huge_pct.mean = 60" \
	"FAIL: host never: host_kvm_huge_pct as high as 60% (want <= 5%): never/never memset"
mutate "KVM stats missing, the note says why" \
	'.telemetry.kvm_stats = "not available: /sys/kernel/debug/kvm is not readable (mount debugfs)" | .cells[].metrics |= with_entries(select(.key | startswith("host_kvm_") | not))' \
	"FAIL: KVM stats not collected: not available: /sys/kernel/debug/kvm is not readable (mount debugfs)" \
	"FAIL: host_kvm_pages_4k missing or short in 4 of 4 guest cells" "SKIP: host_kvm_pages_1g: in no cell" \
	"SKIP: mapped guest memory: no cell has the page counts" "SKIP: no host never cell with host_kvm_huge_pct"
mutate "PMU fields missing although the note says collected" \
	'.cells[].metrics |= with_entries(select(.key | startswith("host_guest_") | not))' \
	"FAIL: no guest-mode PMU fields, but the results do not say why (hardware_counters: collected per repetition"
mutate "PMU fields in some cells only" "($AA).metrics |= del(.host_guest_itlb_load_misses)" \
	"FAIL: guest-mode PMU fields in only 3 of 4 guest cells: missing in always/always memset"
mutate "PMU fields although the note says not available" \
	'.telemetry.hardware_counters = "not available: no hardware PMU here"' \
	"FAIL: guest-mode PMU fields recorded although hardware_counters says: not available: no hardware PMU here"
mutate "a negative PMU count" "($NN).metrics.host_guest_dtlb_load_misses.samples[0] = -3" \
	"FAIL: bad guest-mode PMU counts: host_guest_dtlb_load_misses -3 in never/never memset"
mutate "a failed repetition" "($NN).reps_failed = 1" \
	"FAIL: guest cells with failed repetitions: never/never memset"
mutate "a run that did not complete" '.status = "failed" | .error = "guest thpeval-1-0 timed out"' \
	"FAIL: run failed: guest thpeval-1-0 timed out"
mutate "KVM fields in a bare-host row" \
	'.cells += [(.cells[0] | .target = "host" | .guest = null)]' \
	"FAIL: bare-host cells carry KVM/PMU fields: host_guest_dtlb_load_misses in host-target never/always memset"

# ---- what a KVM host without PMU or with an older kernel may write: passes ---------
jq '.telemetry.hardware_counters = "not available: no hardware PMU here (perf_event_open of cpu-cycles: No such file or directory); dTLB/EPT walk counts need one"
    | .cells[].metrics |= with_entries(select(.key | startswith("host_guest_") | not))' "$KVMF" >"$WORK/nopmu.json"
expect "KVM run on a host without PMU passes, saying why" "$WORK/nopmu.json" 0 \
	"PASS: no guest-mode PMU fields, and the results say why: not available: no hardware PMU here" \
	"SKIP: guest-mode PMU counts: none recorded" "kvm_accept: 15 passed, 0 failed, 1 skipped"
jq '.cells[].metrics |= del(.host_kvm_pages_1g, .host_kvm_nx_lpage_splits)' "$KVMF" >"$WORK/old.json"
expect "KVM run on an older kernel (no pages_1g, no nx_lpage_splits) passes" "$WORK/old.json" 0 \
	"SKIP: host_kvm_pages_1g: in no cell (this kernel does not expose it)" \
	"SKIP: host_kvm_nx_lpage_splits: in no cell" "kvm_accept: 14 passed, 0 failed, 2 skipped"

# ---- not a results file; usage; no KVM for the live mode -------------------------
echo '{"hello": 1}' >"$WORK/notres.json"
expect "a JSON file that is not results" "$WORK/notres.json" 1 "FAIL: '$WORK/notres.json' is not a thpeval results file"
expect "a missing file" "$WORK/none.json" 1 "is not a thpeval results file"
acc --check
verdict "--check without a file: usage, exit 2" 2 "usage:"
acc --check "$KVMF" --out "$WORK/x"
verdict "--check with --out: usage, exit 2" 2 "usage:"
KVM_ACCEPT_HIGH_PCT=lots acc --check "$KVMF"
verdict "a bad threshold: exit 2" 2 "KVM_ACCEPT_HIGH_PCT must be a whole number"
KVM_ACCEPT_DEV=$WORK/no-kvm acc --out "$WORK/live"
verdict "live mode without KVM: exit 77 with the reason" 77 "SKIP: no usable KVM on this host: no $WORK/no-kvm" \
	"kvm_accept: 0 passed, 0 failed, 1 skipped"
if [ -e "$WORK/live" ]; then ko "live mode without KVM wrote '$WORK/live'"; else ok "live mode without KVM ran nothing"; fi
KVM_ACCEPT_DEV=$WORK acc --out "$WORK/live"
verdict "live mode, the device not a device: exit 77" 77 "SKIP: no usable KVM on this host: $WORK is not a character device"

# a path relative to where the checker is run from, not to the repository
mkdir -p "$WORK/cwd" && cp "$KVMF" "$WORK/cwd/results.json"
(cd "$WORK/cwd" && "$OLDPWD/$ACC" --check results.json) >"$WORK/out" 2>&1
rc=$?
verdict "--check resolves a relative path from the caller's directory" 0 "kvm_accept: 16 passed, 0 failed"

# ---- the live mode, with /dev/null for /dev/kvm and a stand-in for thpeval ----------
# fake_bin BODY: an executable that logs its arguments to $WORK/args, then runs BODY
fake_bin() {
	{
		cat <<'FAKE'
#!/bin/bash
out=
for a in "$@"; do case $a in --out=*) out=${a#--out=} ;; esac; done
FAKE
		echo "echo \"\$*\" >'$WORK/args'"
		echo "$1"
	} >"$WORK/thpeval"
	chmod +x "$WORK/thpeval"
}
live() {
	rm -rf "$WORK/live" "$WORK/args"
	KVM_ACCEPT_DEV=/dev/null THPEVAL_BIN=$WORK/thpeval acc --out "$WORK/live"
}
if [ -r /dev/null ] && [ -w /dev/null ] && [ -c /dev/null ]; then
	fake_bin "cp '$PWD/$KVMF' \"\$out/results.json\""
	live
	verdict "live mode: a KVM run that passes" 0 "kvm_accept: 16 passed, 0 failed, 0 skipped"
	if [ "$(cat "$WORK/args" 2>/dev/null)" = "run --accel=kvm --host-thp=always --workloads=memset --reps=2 --boots=2 --size=64M --memory=512M --db=none --out=$WORK/live --quiet" ]; then
		ok "live mode runs 'thpeval run --accel=kvm --host-thp=always --workloads=memset --reps=2 --boots=2 --size=64M --memory=512M'"
	else
		ko "live mode ran: thpeval $(cat "$WORK/args" 2>/dev/null)"
	fi
	fake_bin "echo \"thpeval: error: kvm requested but unusable: no vmx/svm in /proc/cpuinfo: request 'tcg' or 'auto' instead\" >&2; exit 1"
	live
	verdict "live mode: thpeval finds KVM unusable, exit 77 with its reason" 77 \
		"SKIP: no usable KVM on this host: kvm requested but unusable: no vmx/svm in /proc/cpuinfo"
	fake_bin "echo 'thpeval: error: cannot connect to qemu:///system' >&2; exit 1"
	live
	verdict "live mode: a run that writes no results fails" 1 \
		"FAIL: thpeval run exited 1 without results.json: thpeval: error: cannot connect to qemu:///system"
	fake_bin "cp '$PWD/$TCGF' \"\$out/results.json\"; exit 1"
	live
	verdict "live mode: a failed run's results are checked" 1 "note: thpeval run exited 1" "FAIL: not a KVM run"
else
	echo "SKIP: live mode: /dev/null is not a read-write character device here"
	skip=$((skip + 1))
fi

echo "kvm_accept_check: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
