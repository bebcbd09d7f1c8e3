#!/bin/bash
# Integration test of the workload suite: `thpeval run --target=both` with
# every workload but kcompile and exec (tests/integration/kcompile.sh and exec.sh have those) in
# real TCG guests and on the bare host, from the command line to results.json:
# one cell per workload x target x THP setting (per variant where a workload
# has them), each with its repetition and its workload's headline figures
# positive; the host THP knobs put back and no domain left.
# One repetition, no warm-up, no host-cold reps: this checks the records, not
# the default sizes (`make bench` times those: bench/results/workloads.json).
# Prints PASS/FAIL/SKIP lines and a summary line.
set -u
cd "$(dirname "$0")/../.." || exit 1
IT_NAME="integration workloads" IT_TMP=thpeval-it-wl
. tests/integration/lib.sh

if [ "$(id -u)" -ne 0 ]; then
	sk "workloads integration needs root (libvirtd qemu:///system, host THP writes)"
	finish
fi
if ! tools/services.sh; then
	ko "libvirtd could not be started"
	finish
fi

# kcompile, exec and the applications (redis, pgbench) have scripts of their own
# (kcompile.sh, exec.sh, apps.sh, sized for CI); the rest run here at their defaults
WL=$("$BIN" workloads | grep -v '^[[:space:]]' | grep -vx -e kcompile -e exec -e redis -e pgbench | paste -sd, -)
[ "$(tr ',' '\n' <<<"$WL" | wc -l)" -ge 6 ] && ok "thpeval workloads lists the microbenchmarks besides kcompile, exec, redis and pgbench: $WL" ||
	ko "thpeval workloads: [$WL]"

before=$(thp_snapshot)
f2m0=$(free_2m_mib)
t0=$(date +%s)
# bounds (lib.sh it_run): thpeval prints progress on stderr and ends a guest itself
# after its --timeout (15 minutes by default): 20 minutes without a line is a hang
it_run 3600 1200 "$WORK/r1.out" "$WORK/r1.err" "$BIN" run --target=both --workloads="$WL" --host-thp=always \
	--guest-thp=always --boots=1 --reps=1 --warmup=0 --cold-reps=0 --state-dir="$STATE" --db=none --out="$WORK/r1"
rc=$it_rc
t1=$(date +%s)
f2m1=$(free_2m_mib)
f2m=$((f2m0 < f2m1 ? f2m0 : f2m1))
J=$WORK/r1/results.json
if it_over "run --target=both --workloads=$WL"; then
	finish
elif [ "$rc" -eq 0 ] && [ -s "$J" ]; then ok "run --target=both --workloads=$WL exits 0 ($((t1 - t0)) s)"; else
	ko "run exit $rc; stderr: $(tail -3 "$WORK/r1.err")"
	finish
fi
[ "$before" = "$(thp_snapshot)" ] && ok "host THP settings identical before and after" ||
	ko "host THP changed: before [$before] after [$(thp_snapshot)]"
[ -z "$(leftover_domains)" ] && ok "no domain left" || ko "domains left: $(leftover_domains)"
[ "$(jq -r .status "$J")" = complete ] && ok "status complete" || ko "status $(jq -r .status "$J")"

# ---- tlb's sweep follows each target's own L2 -------------------------------------
# tlb adds a walk point to its sweep from the L2 size it reads (guest/tlb.c
# tlb_walk_pages, tlb_points_with): QEMU's vCPU in a guest, the machine's CPU on the
# bare host, which may differ. Each target's summary says which L2 size it used
# (l2_bytes) and where its walk point fell (walk_ws_pages); its variants must be the
# points those give. The bare host's l2_bytes is the level 2 cache its sysfs
# describes (512K where none does, as tlb.c falls back). JQ_TLB_POINTS: lib.sh.
host_l2() {
	local d
	for d in /sys/devices/system/cpu/cpu0/cache/index*; do
		[ "$(cat "$d/level" 2>/dev/null)" = 2 ] && [ "$(cat "$d/type" 2>/dev/null)" = Unified ] || continue
		if [ -r "$d/size" ]; then
			echo $(($(sed 's/K$//' "$d/size") * 1024))
		else
			echo $(($(cat "$d/ways_of_associativity") * $(cat "$d/number_of_sets") * $(cat "$d/coherency_line_size")))
		fi
		return
	done
	echo $((512 << 10))
}
tlb_points_check() {
	local t got want have l2 walk want_walk hl2
	hl2=$(host_l2)
	for t in guest host; do
		# per summary: "<l2_bytes> <walk_ws_pages> <expected walk> | <expected variants> | <variants>"
		got=$(jq -r --arg t "$t" "$JQ_TLB_POINTS"'[.cells[] | select(.workload == "tlb" and .target == $t)] as $c
			| [$c[] | select(.variant == "summary")] | unique_by(m("l2_bytes")) | .[]
			| walk(m("l2_bytes"); m("pages_min"); m("pages_max")) as $w
			| "\(m("l2_bytes")) \(m("walk_ws_pages")) \($w) | "
			+ ((points(m("pages_min"); m("pages_max")) + [$w] | unique | map("ws\(.)_4k", "ws\(.)_2m"))
				+ ["base", "summary"] | sort | join(" ")) + " | "
			+ ([$c[] | .variant // "-"] | unique | join(" "))' "$J")
		if [ -z "$got" ] || [ "$(wc -l <<<"$got")" -ne 1 ]; then
			ko "tlb $t: one summary L2 size, got [$got]"
			continue
		fi
		read -r l2 walk want_walk <<<"${got%% | *}"
		want=$(cut -d'|' -f2 <<<"$got" | xargs)
		have=$(cut -d'|' -f3 <<<"$got" | xargs)
		if [ "$walk" != "$want_walk" ] || [ "$want" != "$have" ]; then
			ko "tlb $t: L2 $l2 bytes gives the walk point $want_walk and variants [$want]; got walk point $walk, variants [$have]"
		elif [ "$t" = host ] && [ "$l2" != "$hl2" ]; then
			ko "tlb host: l2_bytes $l2, but this host's sysfs describes an L2 of $hl2 bytes"
		else
			ok "tlb $t: the sweep its own L2 gives (l2_bytes $l2: walk point $walk, $(wc -w <<<"$have") variants)"
		fi
	done
}

# ---- one cell per workload x target x setting ------------------------------------
# guest: host never/always x guest never/always; host: the bare host at never/always
for w in ${WL//,/ }; do
	g=$(jq -r --arg w "$w" '[.cells[] | select(.workload == $w and .target == "guest")
		| "\(.host_thp)/\(.guest_thp)"] | unique | join(" ")' "$J")
	h=$(jq -r --arg w "$w" '[.cells[] | select(.workload == $w and .target == "host")
		| "\(.host_thp)/\(.guest_thp)"] | unique | join(" ")' "$J")
	[ "$g" = "always/always always/never never/always never/never" ] && [ "$h" = "always/none never/none" ] &&
		ok "$w: guest cells for all four settings, host cells for never and always" ||
		ko "$w: guest settings [$g], host settings [$h]"
	# every variant a guest reports, the host reports too (hzp: the guest's use_zero_page
	# 0 arm is a guest knob; the host keeps its own; tlb: each target's sweep follows its
	# own L2, tlb_points_check)
	gv=$(jq -r --arg w "$w" '[.cells[] | select(.workload == $w and .target == "guest") | .variant // "-"]
		| unique | join(" ")' "$J")
	hv=$(jq -r --arg w "$w" '[.cells[] | select(.workload == $w and .target == "host") | .variant // "-"]
		| unique | join(" ")' "$J")
	if [ "$w" = hzp ]; then
		hzv=zp$(cat "$THP/use_zero_page" 2>/dev/null || echo na)
		[ "$gv" = "zp0 zp1" ] && [ "$hv" = "$hzv" ] && ok "hzp: guest use_zero_page 1 and 0, host as it is ($hzv)" ||
			ko "hzp variants: guest [$gv] host [$hv], want host [$hzv]"
	elif [ "$w" = tlb ]; then
		tlb_points_check
	else
		[ -n "$gv" ] && [ "$gv" = "$hv" ] && ok "$w: the same $(wc -w <<<"$gv") variant(s) from guest and host" ||
			ko "$w variants: guest [$gv] host [$hv]"
	fi
done
bad=$(jq -c '[.cells[] | select(.reps_ok != 1 or .reps_failed != 0)
	| {workload, target, host_thp, guest_thp, variant, reps_ok, reps_failed, failures}]' "$J")
n=$(jq '.cells | length' "$J")
[ "$bad" = "[]" ] && ok "all $n cells: one repetition each, none failed" || ko "cells: $bad"
# validity follows each workload's evidence rule (lib/wltraits.c): the arms that ask for huge
# pages (color, tlb's 2M arm and summary, hzp's zero page) are invalid where the layer that holds
# their memory has THP never; dd's /dev/null runs always are (dd's buffer is not measurable).
# Whether a kernel maps the huge zero page is its own business: hzp's zero page arm under
# always is reported, either way with the reason
rules='def setting: if .target == "host" then .host_thp else .guest_thp end;
def zp1: .workload == "hzp" and .variant == "zp1";
def inv: (.workload == "dd" and (.variant // "" | startswith("null-")))
	or (setting == "never" and (.workload == "color" or zp1
		or (.workload == "tlb" and (.variant == "summary" or (.variant // "" | endswith("_2m"))))));
def zp_refused: zp1 and (.invalid_reason // "" | startswith("huge zero page not in effect"));'
ni=$(jq "$rules"'[.cells[] | select(inv)] | length' "$J")
wrong=$(jq -c "$rules"'[.cells[] | select(inv and .valid) | {workload, target, host_thp, guest_thp, variant}]' "$J")
[ "$wrong" = "[]" ] && ok "the $ni cells the evidence rules mark invalid are invalid" ||
	ko "cells the evidence rules mark invalid were valid: $wrong"
# every other cell is valid, or invalid only for what the host can give, which thpeval
# does not set (it sets the top-level 'enabled' alone): the per-size 2M knob, or free 2M
# blocks (buddyinfo) under 2 x the 1G guest
pa=$(pmd_anon_policy always)
pn=$(pmd_anon_policy never)
short=$([ "$f2m" -lt 2048 ] && echo true || echo false)
# shellcheck disable=SC2016
unexplained=$(jq -c --arg pa "$pa" --arg pn "$pn" --argjson short "$short" "$rules"'[.cells[]
	| select((inv | not) and (.valid | not) and (zp_refused | not))
	| select(((.host_thp == "always" and (.invalid_reason | startswith("host THP is always but only"))
			and ($pa != "always" or $short))
		or (.host_thp == "never" and (.invalid_reason | startswith("host THP is never but")) and $pn != "never")) | not)
	| {workload, target, host_thp, guest_thp, variant, invalid_reason}]' "$J")
ninv=$(jq "$rules"'[.cells[] | select((inv | not) and (.valid | not) and (zp_refused | not))] | length' "$J")
if [ "$ninv" = 0 ]; then
	ok "the other $((n - ni)) cells are valid (or hzp's zero page arm says why not)"
elif [ "$unexplained" = "[]" ]; then
	sk "$ninv of $n cells invalid for what this host gives QEMU (hugepages-2048kB under always: $pa, under never: $pn; $f2m MiB free in 2M blocks): $(jq -c '[.cells[] | select(.valid | not) | .invalid_reason] | unique' "$J")"
else
	ko "cells invalid (free in 2M blocks: $f2m MiB): $unexplained"
fi
echo "  hzp's zero page arm under always: $(jq -r "$rules"'[.cells[] | select(zp1 and setting != "never")
	| "\(.target): \(if .valid then "in effect" else .invalid_reason end)"] | join("; ")' "$J")"

# ---- each workload's headline figures, positive in every cell --------------------
#  workload; the cells (a jq condition); the metrics
while IFS=';' read -r w sel metrics; do
	bad=$(jq -c --arg w "$w" --arg m "$metrics" "[.cells[] | select(.workload == \$w) | select($sel)
		| . as \$c | (\$m | split(\",\"))[] as \$k
		| select((\$c.metrics[\$k].samples[0] // 0) <= 0)
		| \"\(\$c.target) \(\$c.host_thp)/\(\$c.guest_thp) \(\$c.variant // \"-\") \(\$k)\"]" "$J")
	cnt=$(jq --arg w "$w" "[.cells[] | select(.workload == \$w) | select($sel)] | length" "$J")
	[ "$bad" = "[]" ] && [ "$cnt" -gt 0 ] && ok "$w: $metrics > 0 in all $cnt cells" ||
		ko "$w: $metrics missing or not positive ($cnt cells): $bad"
done <<'EOF'
memset;.variant == null;fault_ns_per_4k,fault_mib_s,access_ns
dd;true;mib_s,bytes,elapsed_ns
tlb;.variant | tostring | test("^ws[0-9]+_(4k|2m)$");access_ns,ws_pages
tlb;.variant == "summary";base_access_ns,large_4k_access_ns,large_2m_access_ns
hzp;true;memcmp_ns,stride_ns,half_bytes
clearorder;true;mib_s,ns_per_4k
color;true;l1d_nways_ns,l1d_nways1_ns,l1d_ways
EOF
# the block-size sweep and the clear orders the issue names
dv=$(jq -r '[.cells[] | select(.workload == "dd" and .target == "host") | .variant] | unique | join(" ")' "$J")
miss=""
for v in null-4k null-64k null-1m null-2m tmpfs-4k tmpfs-2m; do
	grep -qw -- "$v" <<<"$dv" || miss="$miss $v"
done
[ -z "$miss" ] && ok "dd: /dev/null and tmpfs, block sizes 4K to 2M ($dv)" || ko "dd variants missing:$miss (have: $dv)"
cv=$(jq -r '[.cells[] | select(.workload == "clearorder") | .variant] | unique | join(" ")' "$J")
[ "$cv" = "rev-rev rev-seq seq-rev seq-seq" ] && ok "clearorder: all four page x in-page orders" ||
	ko "clearorder variants: [$cv]"
# the guest rows come from guests (QEMU's telemetry beside them), the host rows do not
gt=$(jq '[.cells[] | select(.target == "guest") | .metrics.host_qemu_minflt != null] | all' "$J")
ht=$(jq '[.cells[] | select(.target == "host") | .metrics.host_qemu_minflt == null] | all' "$J")
[ "$gt" = true ] && [ "$ht" = true ] && ok "guest cells carry QEMU's telemetry, bare-host cells do not" ||
	ko "telemetry: guest cells all have it: $gt, host cells none: $ht"
echo "  guests: $(jq -r '[.guests[] | "\(.host_thp) \(.total_s * 10 | round / 10) s"] | join(", ")' "$J")" \
	"(boot to power-off, one repetition of each workload per guest THP setting)"

finish
