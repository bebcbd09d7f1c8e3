#!/bin/bash
# KVM acceptance for a lab host: the fields thpeval records only for KVM guests
# are there, in every guest cell, and sane. No development machine here runs
# KVM guests, so this is what a real KVM host runs once (and after kernel, QEMU
# or thpeval upgrades).
#
#   bench/kvm_accept.sh [--out DIR]        check /dev/kvm, run a short KVM run
#                                          (memset, host never/always, 2 reps,
#                                          64M buffer, 512M guests), check it
#   bench/kvm_accept.sh --check FILE       check an existing results.json only
#
# Checked in every guest cell: host_kvm_pages_4k, host_kvm_pages_2m and
# host_kvm_huge_pct, one sample per repetition; host_kvm_pages_1g and
# host_kvm_nx_lpage_splits the same where the kernel exposes them (absent in
# every cell: skipped); counts whole, >= 0 and not wrapped (< 2^53); the guest
# memory KVM maps (pages_4k*4K + pages_2m*2M + pages_1g*1G) above 0 and at most
# guest RAM + KVM_ACCEPT_SLACK_MIB (128: firmware, ROMs, the SMM address
# space); host_kvm_huge_pct within 0..100 and equal to the share the page
# counts give; at least KVM_ACCEPT_HIGH_PCT (50) in host always/madvise cells
# and at most KVM_ACCEPT_LOW_PCT (5) in host never cells; the guest-mode PMU
# fields (host_guest_dtlb_load_misses, host_guest_itlb_load_misses) in every
# guest cell, or in none with telemetry.hardware_counters saying why not. A
# run that is not a KVM run fails, and must hold no KVM or PMU field at all.
#
# Prints a PASS/FAIL/SKIP line per check and "kvm_accept: N passed, N failed,
# N skipped". Exit 0 all passed, 1 a check failed, 2 usage or missing tools,
# 77 no usable KVM on this host (the reason printed). The run needs root (the
# libvirt qemu:///system guests) and changes host THP settings the way any
# 'thpeval run' does (journaled, restored); THPEVAL_BIN picks the binary,
# KVM_ACCEPT_DEV the device node (/dev/kvm).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd) || exit 2
BIN=${THPEVAL_BIN:-$ROOT/bin/thpeval}
DEV=${KVM_ACCEPT_DEV:-/dev/kvm}
SLACK_MIB=${KVM_ACCEPT_SLACK_MIB:-128}
HIGH=${KVM_ACCEPT_HIGH_PCT:-50}
LOW=${KVM_ACCEPT_LOW_PCT:-5}

usage() {
	echo "usage: bench/kvm_accept.sh [--out DIR] | --check RESULTS.json" >&2
	exit 2
}

check=""
out=""
while [ $# -gt 0 ]; do
	case $1 in
	--check) [ $# -ge 2 ] || usage; check=$2; shift 2 ;;
	--check=*) check=${1#--check=}; shift ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
	--out=*) out=${1#--out=}; shift ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) usage ;;
	esac
done
[ -n "$check" ] && [ -n "$out" ] && usage
for n in KVM_ACCEPT_SLACK_MIB KVM_ACCEPT_HIGH_PCT KVM_ACCEPT_LOW_PCT; do
	case ${!n-0} in '' | *[!0-9]*) echo "kvm_accept: $n must be a whole number" >&2; exit 2 ;; esac
done
if ! command -v jq >/dev/null; then
	echo "kvm_accept: needs jq (apt-get install jq)" >&2
	exit 2
fi

nokvm() {
	echo "SKIP: no usable KVM on this host: $1"
	echo "kvm_accept: 0 passed, 0 failed, 1 skipped"
	exit 77
}

if [ -z "$check" ]; then
	# ---- the host: KVM before anything is changed ------------------------------
	[ -e "$DEV" ] || nokvm "no $DEV (load kvm_intel or kvm_amd; nested guests need nested virtualization)"
	[ -c "$DEV" ] || nokvm "$DEV is not a character device"
	if [ ! -r "$DEV" ] || [ ! -w "$DEV" ]; then
		nokvm "$DEV is not readable and writable by $(id -un) (run as root)"
	fi
	[ -x "$BIN" ] || { echo "kvm_accept: no thpeval binary at '$BIN' (make, or set THPEVAL_BIN)" >&2; exit 2; }
	if [ -z "$out" ]; then
		out=$(mktemp -d /tmp/thpeval-kvm-accept.XXXXXX) || exit 2
	fi
	mkdir -p "$out" || exit 2
	echo "kvm_accept: running thpeval (a few minutes); results in $out"
	"$BIN" run --accel=kvm --host-thp=always --workloads=memset --reps=2 --boots=2 --size=64M --memory=512M \
		--db=none --out="$out" --quiet >"$out/run.log" 2>&1
	rc=$?
	# thpeval's own test: vmx/svm in /proc/cpuinfo and libvirt's 'kvm' domain type
	if [ "$rc" -ne 0 ] && grep -q "kvm requested but unusable" "$out/run.log"; then
		nokvm "$(grep -m1 -o "kvm requested but unusable.*" "$out/run.log")"
	fi
	if [ ! -s "$out/results.json" ]; then
		echo "FAIL: thpeval run exited $rc without results.json: $(tail -1 "$out/run.log")"
		echo "kvm_accept: 0 passed, 1 failed, 0 skipped"
		exit 1
	fi
	[ "$rc" -eq 0 ] || echo "note: thpeval run exited $rc ($(tail -1 "$out/run.log")); checking what it wrote"
	[ -r /sys/kernel/debug/kvm ] ||
		echo "note: /sys/kernel/debug/kvm is not readable, so the host_kvm_ checks fail: mount -t debugfs none /sys/kernel/debug"
	check=$out/results.json
fi

# ---- the results --------------------------------------------------------------
if ! jq -e 'type == "object" and has("accel") and (.cells | type) == "array"' "$check" >/dev/null 2>&1; then
	echo "FAIL: '$check' is not a thpeval results file"
	echo "kvm_accept: 0 passed, 1 failed, 0 skipped"
	exit 1
fi

# one line per check: "PASS|FAIL|SKIP<tab>message"
lines=$(jq -r --argjson slack "$SLACK_MIB" --argjson high "$HIGH" --argjson low "$LOW" '
def kvm_fields: ["host_kvm_pages_4k", "host_kvm_pages_2m", "host_kvm_pages_1g", "host_kvm_nx_lpage_splits",
		 "host_kvm_huge_pct"];
def pmu_fields: ["host_guest_dtlb_load_misses", "host_guest_itlb_load_misses"];
def r1: . * 10 | round / 10;
def cname: "\(.host_thp)/\(.guest_thp) \(.workload)\(if .variant then "/" + .variant else "" end)";
def some_of: (.[0:3] | join(", ")) + (if length > 3 then " and \(length - 3) more" else "" end);
def line(s; m): "\(s)\t\(m | gsub("[\t\n]"; " "))";
def ok(c; p; f): if c then line("PASS"; p) else line("FAIL"; f) end;
def samples(f): [.metrics[f].samples[]?];
# a count: a whole number >= 0 that is not a wrapped unsigned difference (2^64 - small)
def count_ok: type == "number" and . >= 0 and . < 9007199254740992 and . == floor;
def one_per_rep(f): .metrics[f] != null and (samples(f) | length) == .reps_ok;

(.telemetry // {}) as $t
| ([.cells[] | select(.target == "guest")]) as $g
| ([.cells[] | select(.target == "guest" and .reps_ok > 0)]) as $gr
| ([.cells[] | .metrics | keys[] | select(startswith("host_kvm_") or startswith("host_guest_"))] | unique) as $present
| if .accel != "kvm" then
	line("FAIL"; "not a KVM run: accel is \(.accel) (\(.accel_reason // "no reason recorded"))"),
	ok($present == []; "\(.accel) run: no host_kvm_ or host_guest_ field in any cell (nothing that was not measured)";
	   "\(.accel) run carries fields only KVM can give: \($present | join(" "))"),
	line("SKIP"; "KVM field checks: not a KVM run")
  else
	ok(.status == "complete"; "run complete"; "run \(.status): \(.error // "no error recorded")"),
	ok($g != [] and ([$g[] | select(.reps_ok == 0 or .reps_failed > 0)] == []);
	   "\($g | length) guest cells, every repetition ok";
	   if $g == [] then "no guest cells" else "guest cells with failed repetitions: \([$g[] | select(.reps_ok == 0 or .reps_failed > 0) | cname] | some_of)" end),
	ok(($t.kvm_stats // "") | startswith("collected"); "KVM stats collected: \($t.kvm_stats)";
	   "KVM stats not collected: \($t.kvm_stats // "no telemetry note")"),
	# fields every KVM kernel with debugfs gives
	(("host_kvm_pages_4k", "host_kvm_pages_2m", "host_kvm_huge_pct") as $f
	 | [$gr[] | select(one_per_rep($f) | not) | cname] as $bad
	 | ok($gr != [] and $bad == []; "\($f): one sample per repetition in every guest cell";
	     "\($f) missing or short in \($bad | length) of \($gr | length) guest cells: \($bad | some_of)")),
	# fields older kernels lack: all cells or none
	(("host_kvm_pages_1g", "host_kvm_nx_lpage_splits") as $f
	 | [$gr[] | select(one_per_rep($f))] as $have
	 | if $have == [] and ([$gr[] | select(.metrics[$f] != null)] == []) then
		line("SKIP"; "\($f): in no cell (this kernel does not expose it)")
	   else ok(($have | length) == ($gr | length); "\($f): one sample per repetition in every guest cell";
		   "\($f) in only \($have | length) of \($gr | length) guest cells: missing in \([$gr[] | select(one_per_rep($f) | not) | cname] | some_of)")
	   end),
	# counts: whole, >= 0, not wrapped
	([$gr[] | . as $c | ("host_kvm_pages_4k", "host_kvm_pages_2m", "host_kvm_pages_1g", "host_kvm_nx_lpage_splits")
	  | . as $f | $c | samples($f)[] | select(count_ok | not) | "\($f) \(.) in \($c | cname)"] as $bad
	 | ok($bad == []; "KVM page counts and nx_lpage_splits are whole, >= 0 and not wrapped";
	      "bad KVM counts: \($bad | some_of)")),
	# the guest memory KVM maps, per repetition, against guest RAM
	(.settings.memory_bytes as $ram
	 | [$gr[] | select(one_per_rep("host_kvm_pages_4k") and one_per_rep("host_kvm_pages_2m")) | . as $c
	    | range(0; .reps_ok) as $i
	    | { c: ($c | cname),
		b: ((samples("host_kvm_pages_4k")[$i] // 0) * 4096 + (samples("host_kvm_pages_2m")[$i] // 0) * 2097152
		    + (samples("host_kvm_pages_1g")[$i] // 0) * 1073741824) }] as $m
	 | if $m == [] then line("SKIP"; "mapped guest memory: no cell has the page counts")
	   else [$m[] | select(.b <= 0 or .b > $ram + $slack * 1048576)] as $bad
	   | ok($bad == [];
		"guest memory KVM maps per repetition: \([$m[].b] | min / 1048576 | r1) to \([$m[].b] | max / 1048576 | r1) MiB, guest RAM \($ram / 1048576) MiB";
		"guest memory KVM maps out of (0, RAM + \($slack) MiB] (guest RAM \($ram / 1048576) MiB): \([$bad[] | "\(.b / 1048576 | r1) MiB in \(.c)"] | some_of)")
	   end),
	# the share: a percentage, and the one the page counts give
	([$gr[] | . as $c | samples("host_kvm_huge_pct")[] | select(type != "number" or . < 0 or . > 100)
	  | "\(.) in \($c | cname)"] as $bad
	 | ok($bad == []; "host_kvm_huge_pct within 0..100"; "host_kvm_huge_pct out of 0..100: \($bad | some_of)")),
	([$gr[] | select(one_per_rep("host_kvm_huge_pct") and one_per_rep("host_kvm_pages_4k") and one_per_rep("host_kvm_pages_2m"))
	  | . as $c | range(0; .reps_ok) as $i
	  | (samples("host_kvm_pages_2m")[$i] * 512 + (samples("host_kvm_pages_1g")[$i] // 0) * 262144) as $h
	  | ($h + samples("host_kvm_pages_4k")[$i]) as $all
	  | select($all > 0 and ((100 * $h / $all) - samples("host_kvm_huge_pct")[$i] | fabs) > 0.01)
	  | "\(samples("host_kvm_huge_pct")[$i] | r1)% where the pages give \(100 * $h / $all | r1)% in \($c | cname)"] as $bad
	 | ok($bad == []; "host_kvm_huge_pct is the huge share of the page counts"; "host_kvm_huge_pct disagrees with the page counts: \($bad | some_of)")),
	# the share follows the host setting
	([$gr[] | select(.host_thp == "always" or .host_thp == "madvise") | select(.metrics.host_kvm_huge_pct != null)] as $on
	 | if $on == [] then line("SKIP"; "no host always/madvise cell with host_kvm_huge_pct")
	   else ([$on[].metrics.host_kvm_huge_pct.mean] | min) as $v
	   | ok($v >= $high; "host always/madvise: host_kvm_huge_pct at least \($v | r1)% (>= \($high)%)";
		"host always/madvise: host_kvm_huge_pct as low as \($v | r1)% (want >= \($high)%; host coverage \([$on[].coverage.host_huge_pct // empty] | min // "unknown")%): \([$on[] | select(.metrics.host_kvm_huge_pct.mean < $high) | cname] | some_of)")
	   end),
	([$gr[] | select(.host_thp == "never") | select(.metrics.host_kvm_huge_pct != null)] as $off
	 | if $off == [] then line("SKIP"; "no host never cell with host_kvm_huge_pct")
	   else ([$off[].metrics.host_kvm_huge_pct.mean] | max) as $v
	   | ok($v <= $low; "host never: host_kvm_huge_pct at most \($v | r1)% (<= \($low)%)";
		"host never: host_kvm_huge_pct as high as \($v | r1)% (want <= \($low)%): \([$off[] | select(.metrics.host_kvm_huge_pct.mean > $low) | cname] | some_of)")
	   end),
	# guest-mode PMU: in every cell, or in none and the results say why
	(($t.hardware_counters // "") as $note
	 | [$gr[] | select(all(pmu_fields[] as $f | one_per_rep($f); .))] as $have
	 | [$gr[] | select(any(pmu_fields[] as $f | .metrics[$f] != null; .))] as $any
	 | if $any == [] then
		ok($note | startswith("not available:"); "no guest-mode PMU fields, and the results say why: \($note)";
		   "no guest-mode PMU fields, but the results do not say why (hardware_counters: \($note))"),
		line("SKIP"; "guest-mode PMU counts: none recorded")
	   else
		ok(($have | length) == ($gr | length) and ($note | startswith("collected"));
		   "guest-mode PMU fields (\(pmu_fields | join(", "))): one sample per repetition in every guest cell";
		   if ($note | startswith("collected")) | not then "guest-mode PMU fields recorded although hardware_counters says: \($note)"
		   else "guest-mode PMU fields in only \($have | length) of \($gr | length) guest cells: missing in \([$gr[] | select(all(pmu_fields[] as $f | one_per_rep($f); .) | not) | cname] | some_of)" end),
		([$gr[] | . as $c | pmu_fields[] | . as $f | $c | samples($f)[] | select(count_ok | not) | "\($f) \(.) in \($c | cname)"] as $bad
		 | ok($bad == []; "guest-mode PMU counts are whole, >= 0 and not wrapped"; "bad guest-mode PMU counts: \($bad | some_of)"))
	   end),
	# the bare-host rows have no VM
	([.cells[] | select(.target == "host") | . as $c | .metrics | keys[] | select(startswith("host_kvm_") or startswith("host_guest_"))
	  | "\(.) in host-target \($c | cname)"] as $bad
	 | if [.cells[] | select(.target == "host")] == [] then empty
	   else ok($bad == []; "bare-host cells: no KVM or PMU field"; "bare-host cells carry KVM/PMU fields: \($bad | some_of)") end)
  end
' "$check") || { echo "FAIL: jq could not check '$check'"; echo "kvm_accept: 0 passed, 1 failed, 0 skipped"; exit 1; }

pass=0 fail=0 skip=0
while IFS=$'\t' read -r st msg; do
	[ -n "$st" ] || continue
	echo "$st: $msg"
	case $st in
	PASS) pass=$((pass + 1)) ;;
	FAIL) fail=$((fail + 1)) ;;
	*) skip=$((skip + 1)) ;;
	esac
done <<<"$lines"
echo "kvm_accept: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
