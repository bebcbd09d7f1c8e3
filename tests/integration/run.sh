#!/bin/bash
# Integration tests: a real libvirtd booting real TCG/KVM guests from a real
# libguestfs-built image. Each test prints PASS/FAIL/SKIP with a reason; the
# last line is "integration: N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.." || exit 1
IT_NAME=integration IT_TMP=thpeval-it
. tests/integration/lib.sh

if [ "$(id -u)" -ne 0 ]; then
	sk "integration tests need root (libvirtd qemu:///system, host THP writes)"
	finish
fi
if [ ! -w "$THP/enabled" ]; then
	sk "host THP sysfs is not writable here"
	finish
fi
if ! tools/services.sh; then
	ko "libvirtd could not be started"
	finish
fi

# small but real: 2 boots per host setting (host-side effects replicate over boots), 1
# measured rep + 1 warm-up per cell in each, 2 host-cold reps, 64 MiB buffer
RUNARGS="--boots=2 --reps=1 --warmup=1 --cold-reps=2 --memory=512M --size=64M --accesses=300000 --timeout=10m --state-dir=$STATE --db=$WORK/history.db"
# bounds of a run (lib.sh it_run): thpeval prints progress on stderr and ends a
# guest itself after --timeout=10m, so 12 minutes without a line is a hang; a run
# still printing after 45 minutes is on a host too slow for these checks
LIMIT=2700 STALL=720

# ---- 1. the 2x2 from real guests, host untouched afterwards ---------------------
before=$(thp_snapshot)
f2m0=$(free_2m_mib)
t0=$(date +%s)
# shellcheck disable=SC2086
it_run $LIMIT $STALL "$WORK/r1.out" "$WORK/r1.err" "$BIN" run --host-thp=always --guest-thp=always $RUNARGS --out="$WORK/r1"
rc=$it_rc
t1=$(date +%s)
f2m1=$(free_2m_mib)
f2m=$((f2m0 < f2m1 ? f2m0 : f2m1))
after=$(thp_snapshot)
J=$WORK/r1/results.json
if it_over "2x2 run"; then :; elif [ "$rc" -eq 0 ] && [ -s "$J" ]; then ok "run exits 0 and writes results.json ($((t1 - t0)) s)"; else
	ko "run exit $rc; stderr: $(tail -3 "$WORK/r1.err")"; fi
if [ "$before" = "$after" ]; then ok "host THP settings identical before and after"; else
	ko "host THP changed: before [$before] after [$after]"; fi
if [ -z "$it_stop" ] && [ -s "$J" ]; then
	ncells=$(jq '[.cells[] | select(.variant == null)] | length' "$J")
	[ "$ncells" = 4 ] && ok "4 cells (host never/always x guest never/always)" || ko "cells: $ncells"
	combos=$(jq -r '[.cells[] | select(.variant == null) | .host_thp + "/" + .guest_thp] | sort | join(" ")' "$J")
	[ "$combos" = "always/always always/never never/always never/never" ] && ok "cell grid complete" || ko "grid: $combos"
	bad=$(jq '[.cells[] | select(.variant == null) | select((.metrics.access_ns.samples | length) != 2 or (.metrics.fault_ns_per_4k.samples | length) != 2)] | length' "$J")
	[ "$bad" = 0 ] && ok "every cell has 2 access and fault samples" || ko "$bad cells lack samples"
	nb=$(jq -c '[.cells[] | .metrics.fault_ns_per_4k.boot | unique | length] | unique' "$J")
	[ "$nb" = "[2]" ] && ok "every cell's samples come from its 2 boots" || ko "boots per cell: $nb"
	order=$(jq -r .settings.group_order "$J")
	echo "$order" | grep -Eq '^0:([a-z]+)/ondemand 0:([a-z]+)/ondemand 1:\2/ondemand 1:\1/ondemand$' &&
		ok "host groups in ABBA order ($order)" || ko "host group order not ABBA: $order"
	hm=$(jq -r '[.effects[] | select(.side == "host" and .available) | .method] | unique | join(",")' "$J")
	[ "$hm" = boots ] && ok "host-side effects are computed over boots" || ko "host-side effect methods: '$hm'"
	# the host-cold series (--cold-reps default 3): fresh guest memory, so the
	# QEMU process faults during it; with host never one fault per 4K page, unless
	# a per-size mTHP knob of this host gives large folios while 'enabled' is never
	# (a plain --host-thp value sets only the top-level knob)
	ncold=$(jq '[.cells[] | select(.variant == "cold" and (.metrics.fault_ns_per_4k.samples | length) == 4)] | length' "$J")
	[ "$ncold" = 4 ] && ok "4 host-cold cells with 2 boots x 2 fault samples each" || ko "host-cold cells: $ncold"
	coldf=$(jq --argjson ps "$(getconf PAGESIZE)" '[.cells[] | select(.variant == "cold" and .host_thp == "never") | (.metrics.host_qemu_minflt.mean / (.metrics.rss_bytes.mean / $ps))] | min' "$J")
	mon=$(mthp_on_under_never)
	if [ -n "$mon" ]; then
		sk "host-cold faults per page ($coldf): $mon gives QEMU large folios while 'enabled' is never, so not one fault per 4K page"
	else
		jq -e "$coldf > 0.8" >/dev/null <<<'null' && ok "host-cold repetitions were host-cold (QEMU faults / pages >= $coldf)" ||
			ko "host-cold repetitions not host-cold: QEMU faults / pages $coldf"
	fi
	# what QEMU's RAM can get from the host (thpeval sets only the top-level 'enabled'):
	# the effective 2M policy under always and never, and the free 2M blocks
	pa=$(pmd_anon_policy always)
	pn=$(pmd_anon_policy never)
	hostshort=""
	[ "$pa" = always ] || hostshort="hugepages-2048kB/enabled is '$pa' here"
	[ "$f2m" -ge 1024 ] || hostshort="${hostshort:+$hostshort, }only $f2m MiB free in 2M blocks"
	hpf=$(jq -r '[.effects[] | select(.side == "host" and .component == "prefault") | .available] | length > 0 and all' "$J")
	hinv=$(jq '[.cells[] | select(.host_thp == "always" and (.valid | not))] | length' "$J")
	if [ "$hinv" -gt 0 ] && [ -n "$hostshort" ]; then
		sk "host prefault effect: $hinv host-always cells invalid ($hostshort), no effect from them"
	else
		[ "$hpf" = true ] && ok "host prefault effect computed from the host-cold cells" || ko "no host prefault effect"
	fi
	pos=$(jq '[.cells[] | select(.variant == null) | .metrics.access_ns.samples[], .metrics.fault_ns_per_4k.samples[] | select(. > 0 and . < 1e7)] | length' "$J")
	[ "$pos" = 16 ] && ok "all 16 samples are positive and plausible" || ko "plausible samples: $pos of 16"
	# a field that was not measured does not exist: no KVM or PMU counter from a TCG guest
	if [ "$(jq -r .accel "$J")" = tcg ]; then
		kv=$(jq -r '[.cells[].metrics | keys[] | select(startswith("host_kvm_") or startswith("host_guest_"))] | unique | join(" ")' "$J")
		[ -z "$kv" ] && ok "TCG run: no KVM or PMU counter in any cell" || ko "TCG run carries KVM/PMU fields: $kv"
	else
		sk "KVM guests: the TCG no-KVM-field check does not apply (bench/kvm_accept.sh checks KVM fields)"
	fi
	keys=$(jq -r '[has("schema_version","thpeval_version","accel","host","cells")] | all' "$J")
	[ "$keys" = true ] && ok "results.json has the top-level keys" || ko "top-level keys missing"
	hk=$(jq -r '.host | [has("kernel","cpu_model","thp_before")] | all' "$J")
	[ "$hk" = true ] && ok "host section has kernel, CPU model and THP before" || ko "host section incomplete"
	cov=$(jq -r '[.cells[] | (.coverage.host_huge_pct != null) and (.coverage.guest_huge_pct != null) and has("valid")] | all' "$J")
	[ "$cov" = true ] && ok "every cell has host and guest coverage evidence and a validity" || ko "coverage evidence missing"
	# thpeval's own rule: a cell is valid exactly when its coverage evidence fits its settings
	mm=$(validity_mismatches "$J")
	[ "$mm" = "[]" ] && ok "every cell's validity follows its coverage evidence (min $(jq .settings.min_coverage_pct "$J")%)" ||
		ko "validity contradicts the coverage evidence: $mm"
	# the evidence must match the setting: never -> ~0% huge, always -> most. In the
	# guest thpeval sets the knobs; on the host it sets only the top-level 'enabled',
	# so the per-size 2M knob and the free 2M blocks decide what QEMU can get
	hn=$(jq '[.cells[] | select(.host_thp == "never") | .coverage.host_huge_pct] | max' "$J")
	ha=$(jq '[.cells[] | select(.host_thp == "always") | .coverage.host_huge_pct] | min' "$J")
	gn=$(jq '[.cells[] | select(.guest_thp == "never") | .coverage.guest_huge_pct] | max' "$J")
	ga=$(jq '[.cells[] | select(.guest_thp == "always") | .coverage.guest_huge_pct] | min' "$J")
	echo "   coverage: host never max $hn%, host always min $ha%, guest never max $gn%, guest always min $ga%;" \
		"free in 2M blocks $f2m0 MiB before, $f2m1 MiB after"
	jq -e "$gn < 1 and $ga > 50" >/dev/null <<<'null' && ok "guest coverage follows the guest THP setting" ||
		ko "guest coverage contradicts the guest THP setting"
	if [ "$pa" != always ]; then
		sk "host 'always' coverage ($ha%): hugepages-2048kB/enabled is '$pa' here, so 'enabled=always' does not promise QEMU 2M pages"
	elif jq -e "$ha > 50" >/dev/null <<<'null'; then
		ok "host 'always' put most guest RAM on 2M pages ($ha%)"
	elif [ "$f2m" -lt 1024 ]; then
		sk "host 'always' coverage $ha%: only $f2m MiB of host memory was free in 2M blocks (buddyinfo), under 2 x the 512 MiB guest"
	else
		ko "host 'always' coverage $ha% with $f2m MiB free in 2M blocks"
	fi
	if [ "$pn" != never ]; then
		sk "host 'never' coverage ($hn%): hugepages-2048kB/enabled is '$pn' here, which 'enabled=never' does not turn off"
	else
		jq -e "$hn < 1" >/dev/null <<<'null' && ok "host 'never' kept guest RAM off 2M pages ($hn%)" ||
			ko "host 'never' coverage $hn%"
	fi
	nx=$(ls "$WORK"/r1/guests/*.xml 2>/dev/null | wc -l)
	nl=$(ls "$WORK"/r1/guests/*.console.log 2>/dev/null | wc -l)
	[ "$nx" = 4 ] && [ "$nl" = 4 ] && ok "domain XML and console log kept for all 4 guests" || ko "guest files: $nx xml, $nl logs"
	grep -q 'host_thp' "$WORK/r1.out" && ok "table printed" || ko "no table on stdout"
	tests/report/schema.sh "$J" >"$WORK/schema.out" 2>&1 && ok "results.json valid against doc/results.schema.json" ||
		ko "schema: $(grep -v PASS "$WORK/schema.out" | head -3)"
	sed 's/^/   /' "$WORK/r1.out"
fi
[ -z "$(leftover_domains)" ] && ok "no domain left behind" || ko "domains left: $(leftover_domains)"

# ---- 1b. a broken cell is caught: host 'always' with memfd-backed guest RAM ------
# memfd RAM is shmem, governed by the shmem knobs (not 'enabled'): where none of
# them allows 2M pages the setting says always, the evidence says no huge pages,
# and the cell must be marked invalid. Where one does (memfd_huge_knobs), the
# cell may well be valid: only thpeval's validity rule is checked then.
# The same run is an A/A of --emulator (one QEMU as both arms, 4 short boots more):
# every host group of every round boots once with each arm, each boot names its
# QEMU in results.json and the domain XML, and the comparison is in both reports
mk=$(memfd_huge_knobs)
QEMU=$(command -v qemu-system-x86_64 || echo /usr/bin/qemu-system-x86_64)
it_run 1800 720 "$WORK/rb.out" "$WORK/rb.err" "$BIN" run --host-thp=always --guest-thp=never --host-backing=memfd \
	--boots=2 --reps=1 --warmup=0 --memory=512M --size=16M --accesses=20000 --timeout=10m --state-dir="$STATE" \
	--emulator="$QEMU,$QEMU" --db="$WORK/history.db" --out="$WORK/rb"
J=$WORK/rb/results.json
if it_over "memfd run"; then :; elif [ -s "$J" ]; then
	arms=$(jq -r '[.guests | group_by([.round, .host_thp])[] | map(.ab_arm) | sort | join("")] | unique | join(" ")' "$J")
	[ "$arms" = AB ] && ok "emulator A/A: each host setting of each round booted once with each arm" ||
		ko "emulator A/A: arms per round and host setting: '$arms'"
	nx=$(jq -r --arg q "$QEMU" '[.guests[] | select(.emulator == $q)] | length' "$J")
	xml=$(jq -r '.guests[0].domain_xml' "$J")
	[ "$nx" = "$(jq '.guests | length' "$J")" ] && grep -q "<emulator>$QEMU</emulator>" "$xml" &&
		ok "emulator A/A: every boot names its QEMU (results.json, domain XML)" || ko "emulator A/A: $nx boots name $QEMU"
	nt=$(jq -r '.ab.metrics_tested' "$J")
	[ "$nt" -gt 0 ] 2>/dev/null && grep -q '^emulator B vs A' "$WORK/rb.out" &&
		ok "emulator A/A: $nt gated metric(s) compared, $(jq -r .ab.metrics_differ "$J") differ (Holm, 5%)" ||
		ko "emulator A/A: no comparison in results.json ('$nt') or on stdout"
	mm=$(validity_mismatches "$J")
	[ "$mm" = "[]" ] && ok "memfd run: every cell's validity follows its coverage evidence" ||
		ko "memfd run: validity contradicts the coverage evidence: $mm"
	inv=$(jq -r '[.cells[] | select(.host_thp == "always") | .valid] | all(. == false)' "$J")
	why=$(jq -r '[.cells[] | select(.host_thp == "always") | .invalid_reason] | .[0]' "$J")
	okn=$(jq -r '[.cells[] | select(.host_thp == "never") | .valid] | all' "$J")
	fx=$(jq -r '[.effects[] | select(.side == "host") | .available] | any' "$J")
	if [ -n "$mk" ]; then
		sk "broken cell: $mk lets memfd guest RAM have 2M pages here, so host 'always' need not be broken (cells valid: $(jq -c '[.cells[] | select(.host_thp == "always") | .valid]' "$J"))"
	else
		[ "$inv" = true ] && echo "$why" | grep -q 'host THP is always but only' &&
			ok "broken cell (host always, memfd RAM, shmem THP off) marked invalid: $why" || ko "broken cell not caught: $inv $why"
		[ "$okn" = true ] && ok "the host-never cells stay valid" || ko "host-never cells invalid"
		[ "$fx" = false ] && ok "no host effect computed from invalid cells" || ko "host effect computed from invalid cells"
	fi
else
	ko "memfd run wrote no results: $(tail -2 "$WORK/rb.err")"
fi

# ---- 1c. the hugetlbfs reference arm: pool reserved for its guest, released after ----
# pool_short ERR: the run failed because the kernel could not fill the pool, and said
# so (free memory in blocks of the page size is the host's, not thpeval's)
pool_short() {
	[ "$it_rc" -ne 0 ] && grep -q 'the host could reserve only' "$1"
}
POOL=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if ! grep -q ' hugetlbfs ' /proc/mounts || [ ! -w "$POOL" ]; then
	sk "hugetlbfs arm: no hugetlbfs mounted or no 2M pool here (tools/services.sh mounts one before libvirtd)"
else
	pool0=$(cat "$POOL")
	it_run 1800 720 "$WORK/rh.out" "$WORK/rh.err" "$BIN" run --host-thp=always --guest-thp=always \
		--host-backing=anonymous,hugetlbfs --boots=2 --reps=1 --warmup=0 --cold-reps=0 --memory=512M --size=16M \
		--accesses=20000 --timeout=10m --state-dir="$STATE" --db=none --out="$WORK/rh"
	J=$WORK/rh/results.json
	if it_over "hugetlbfs run"; then :; elif pool_short "$WORK/rh.err"; then
		sk "hugetlbfs arm: this host lacks free 2M blocks for the pool: $(grep -m1 'could reserve only' "$WORK/rh.err")"
	elif [ -s "$J" ]; then
		hv=$(jq -r '[.cells[] | select(.host_thp == "hugetlbfs")] | length > 0 and all(.valid and .coverage.host_huge_pct >= 90)' "$J")
		hc=$(jq -r '[.cells[] | select(.host_thp == "hugetlbfs") | .coverage.host_huge_pct] | min' "$J")
		[ "$hv" = true ] && ok "hugetlbfs arm: its cells are valid, guest RAM ${hc}% on hugetlb pages" ||
			ko "hugetlbfs arm cells: $(jq -c '[.cells[] | select(.host_thp == "hugetlbfs") | {valid, invalid_reason, c: .coverage.host_huge_pct}]' "$J")"
		hf=$(jq -r '[.effects[] | select(.host_thp == "hugetlbfs" and .side == "host" and .component == "tlb")] | length' "$J")
		[ "$hf" -ge 1 ] && ok "hugetlbfs arm: host effects reported against host never" || ko "no hugetlbfs effects"
	else
		ko "hugetlbfs run wrote no results: $(tail -2 "$WORK/rh.err")"
	fi
	[ "$(cat "$POOL")" = "$pool0" ] && ok "2M hugetlb pool back at $pool0 pages after the run" ||
		ko "hugetlb pool not restored: $pool0 -> $(cat "$POOL")"
fi

# ---- 1c'. the 1G hugetlbfs arm, where the host offers 1G pages; refused where not ------
POOL1G=/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
if [ ! -e "$POOL1G" ]; then
	# no 1G pool: the arm must be refused up front with the reason, nothing changed
	it_run 120 60 "$WORK/rg.out" "$WORK/rg.err" "$BIN" run --host-thp=always --host-backing=anonymous,hugetlbfs-1g \
		--boots=1 --memory=1G --state-dir="$STATE" --db=none --out="$WORK/rg"
	[ "$it_rc" -eq 1 ] && [ "$(wc -l <"$WORK/rg.err")" -eq 1 ] && grep -q 'offers no 1G hugetlb pages' "$WORK/rg.err" &&
		ok "1G arm refused on a host without 1G pages: $(cat "$WORK/rg.err")" ||
		ko "1G arm on a host without 1G pages: rc $it_rc, $(tail -2 "$WORK/rg.err")"
elif ! grep -q ' hugetlbfs .*pagesize=1024M' /proc/mounts || [ ! -w "$POOL1G" ]; then
	sk "1G hugetlbfs arm: no 1G hugetlbfs mounted or the 1G pool not writable (tools/services.sh mounts one before libvirtd)"
else
	pool1g0=$(cat "$POOL1G")
	it_run 1800 720 "$WORK/rg.out" "$WORK/rg.err" "$BIN" run --host-thp=always --guest-thp=always \
		--host-backing=anonymous,hugetlbfs-1g --boots=1 --reps=1 --warmup=0 --cold-reps=0 --memory=1G --size=16M \
		--accesses=20000 --timeout=10m --state-dir="$STATE" --db=none --out="$WORK/rg"
	J=$WORK/rg/results.json
	if it_over "1G hugetlbfs run"; then :; elif pool_short "$WORK/rg.err"; then
		sk "1G hugetlbfs arm: this host lacks free 1G blocks for the pool: $(grep -m1 'could reserve only' "$WORK/rg.err")"
	elif [ -s "$J" ]; then
		gv=$(jq -r '[.cells[] | select(.host_thp == "hugetlbfs-1g")] | length > 0 and all(.valid and .coverage.host_huge_pct >= 90)' "$J")
		gp=$(jq -r '[.cells[] | select(.host_thp == "hugetlbfs-1g") | .metrics.host_hugetlb_page_kb.samples[]] | unique | join(",")' "$J")
		[ "$gv" = true ] && [ "$gp" = 1048576 ] &&
			ok "1G hugetlbfs arm: its cells are valid, guest RAM on pages of ${gp} KiB" ||
			ko "1G hugetlbfs arm cells (page KiB $gp): $(jq -c '[.cells[] | select(.host_thp == "hugetlbfs-1g") | {valid, invalid_reason, c: .coverage.host_huge_pct}]' "$J")"
	else
		ko "1G hugetlbfs run wrote no results: $(tail -2 "$WORK/rg.err")"
	fi
	[ "$(cat "$POOL1G")" = "$pool1g0" ] && ok "1G hugetlb pool back at $pool1g0 pages after the run" ||
		ko "1G hugetlb pool not restored: $pool1g0 -> $(cat "$POOL1G")"
fi

# ---- 1d. both allocation modes ------------------------------------------------------
# 2 rounds of the 4 groups (never/always x ondemand/immediate), exactly --boots with no CI
# target (a target runs at least 6 rounds: the stopping rule's own tests are test_stopping,
# and a --max-reps below that minimum is refused up front, in the bad-input cases below);
# QEMU preallocates 'immediate' guests, so their host-cold reps take no host faults, and
# host prefault is the ondemand-minus-immediate contrast
it_run 1800 720 "$WORK/rp.out" "$WORK/rp.err" "$BIN" run --host-thp=always --guest-thp=always \
	--host-prefault=ondemand,immediate --boots=2 --reps=1 --warmup=0 --cold-reps=1 --target-ci=none \
	--memory=512M --size=16M --accesses=20000 --timeout=10m --state-dir="$STATE" --db=none \
	--out="$WORK/rp"
J=$WORK/rp/results.json
if it_over "allocation run"; then :; elif [ "$it_rc" -eq 0 ] && [ -s "$J" ]; then
	rounds=$(jq .settings.rounds "$J")
	[ "$rounds" = 2 ] && ok "--boots=2 --target-ci=none: exactly $rounds rounds" ||
		ko "--boots=2 --target-ci=none: $rounds rounds"
	pfs=$(jq -r '[.cells[] | .host_prefault] | unique | join(",")' "$J")
	[ "$pfs" = "immediate,ondemand" ] && ok "--host-prefault=ondemand,immediate: cells of both modes" ||
		ko "allocation modes in the cells: $pfs"
	fi_od=$(jq --argjson ps "$(getconf PAGESIZE)" '[.cells[] | select(.variant == "cold" and .host_thp == "never" and .host_prefault == "ondemand") | .metrics.host_qemu_minflt.mean / (.metrics.rss_bytes.mean / $ps)] | min' "$J")
	fi_im=$(jq --argjson ps "$(getconf PAGESIZE)" '[.cells[] | select(.variant == "cold" and .host_thp == "never" and .host_prefault == "immediate") | .metrics.host_qemu_minflt.mean / (.metrics.rss_bytes.mean / $ps)] | max' "$J")
	jq -e "$fi_im < 0.5 * $fi_od" >/dev/null <<<'null' &&
		ok "immediate guests were preallocated: QEMU faults per host-cold page at most $fi_im, under half of ondemand's least ($fi_od)" ||
		ko "immediate allocation: QEMU faults per host-cold page $fi_im against ondemand $fi_od"
	note=$(jq -r '[.effects[] | select(.side == "host" and .component == "prefault" and .available) | .note] | first // ""' "$J")
	echo "$note" | grep -q "ondemand minus immediate" && ok "host prefault from the ondemand-minus-immediate contrast" ||
		ko "host prefault contrast: '$note' ($(jq -c '[.effects[] | select(.side == "host" and .component == "prefault") | .note]' "$J"))"
else
	ko "allocation run: exit $it_rc; $(tail -2 "$WORK/rp.err")"
fi

# ---- 2. bad input: one-line error, non-zero exit, host untouched ------------------
before=$(thp_snapshot)
while IFS='|' read -r name args want; do
	[ -z "$name" ] && continue
	# shellcheck disable=SC2086
	eval "set -- $args"
	it_run 600 300 "$WORK/bad.out" "$WORK/bad.err" "$BIN" run "$@" --state-dir="$STATE" --out="$WORK/bad"
	rc=$it_rc
	lines=$(wc -l <"$WORK/bad.err")
	if it_over "bad input '$name'"; then :; elif [ "$rc" -ne 0 ] && [ "$lines" -le 2 ] && grep -q "$want" "$WORK/bad.err"; then
		ok "bad input '$name': exit $rc, '$(tail -1 "$WORK/bad.err")'"
	else
		ko "bad input '$name': exit $rc, stderr: $(cat "$WORK/bad.err")"
	fi
done <<'CASES'
host-thp bogus|--host-thp=bogus|not a host THP setting: .*: 'bogus'
memory abc|--memory=abc|not a guest memory size .*: 'abc'
reps zero|--reps=0|not a repetition count from 1 to 100: '0'
max-reps below a target's minimum|--target-ci=15 --boots=1 --reps=1 --max-reps=2|a CI target runs at least 6
unreachable connect|--connect=qemu+unix:///system?socket=/nonexistent/sock|cannot connect
missing kernel|--kernel=/nonexistent/vmlinuz|kernel: cannot use '/nonexistent/vmlinuz'
kernel path with spaces|'--kernel=/tmp/no such/vm linuz'|kernel: cannot use '/tmp/no such/vm linuz'
shell metacharacters|'--out=$(touch /tmp/pwned)' --memory='1G;reboot'|not a guest memory size
unknown option|--bogus|unknown option
CASES
after=$(thp_snapshot)
[ "$before" = "$after" ] && ok "host THP untouched by bad input" || ko "host THP changed by bad input"
[ ! -e /tmp/pwned ] && ok "no user string reached a shell" || ko "/tmp/pwned exists"

# ---- 3. SIGINT during a run: guests gone, host restored, partial results, exit != 0 ---
# SIGINT once the first measured repetition is in (its progress line), so that
# there are partial results to keep
before=$(thp_snapshot)
# shellcheck disable=SC2086
it_start $LIMIT $STALL "$WORK/r2.out" "$WORK/r2.err" "$BIN" run --host-thp=always $RUNARGS --out="$WORK/r2"
it_wait_for 'rep 1 done'
case $? in
0)
	kill -INT "$it_pid"
	# the run must stop on its own, promptly: guests destroyed, host restored
	for _ in $(seq 1 600); do
		kill -0 "$it_pid" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$it_pid" 2>/dev/null; then
		ko "SIGINT: thpeval hung: still running 120 s after SIGINT (last line: $(tail -1 "$WORK/r2.err"))"
		kill -KILL "$it_pid"
	fi
	wait "$it_pid"
	rc=$?
	after=$(thp_snapshot)
	[ $rc -ne 0 ] && ok "SIGINT: non-zero exit ($rc)" || ko "SIGINT: exit 0"
	grep -q 'interrupted' "$WORK/r2.err" && ok "SIGINT: says it was interrupted" || ko "SIGINT: no message"
	[ "$before" = "$after" ] && ok "SIGINT: host THP restored" || ko "SIGINT: host THP not restored"
	[ -z "$(leftover_domains)" ] && ok "SIGINT: no domain left" || ko "SIGINT: domains left: $(leftover_domains)"
	if [ -s "$WORK/r2/results.json" ] && [ "$(jq -r .status "$WORK/r2/results.json")" = interrupted ] &&
		[ "$(jq '[.cells[].metrics.fault_ns_per_4k.samples[]?] | length' "$WORK/r2/results.json")" -ge 1 ]; then
		ok "SIGINT: partial results kept (status interrupted, samples present)"
	else
		ko "SIGINT: partial results missing"
	fi
	;;
1)
	it_finish
	ko "SIGINT: the run ended (exit $it_rc) before its first 'rep 1 done': $(tail -2 "$WORK/r2.err")"
	;;
*)
	it_over "SIGINT: no 'rep 1 done' to interrupt after (the SIGINT checks did not run)"
	it_finish
	;;
esac

# ---- 4. SIGKILL: the journal lets 'thpeval host restore' put the host back -------------
before=$(thp_snapshot)
orig=$(grep -o '\[[a-z]*\]' "$THP/enabled" | tr -d '[]')
# shellcheck disable=SC2086
it_start $LIMIT $STALL /dev/null "$WORK/r3.err" "$BIN" run --host-thp=always $RUNARGS --out="$WORK/r3"
changed=no
while [ "$orig" != never ]; do
	cur=$(grep -o '\[[a-z]*\]' "$THP/enabled" | tr -d '[]')
	if [ "$cur" != "$orig" ]; then changed=yes; break; fi
	kill -0 "$it_pid" 2>/dev/null || break
	it_watch || break
	sleep 0.1
done
kill -KILL "$it_pid" 2>/dev/null
wait "$it_pid" 2>/dev/null
if [ "$orig" = never ]; then
	sk "SIGKILL: host THP is already 'never', the baseline changes nothing to restore"
elif it_over "SIGKILL: waiting for the run to set host THP"; then
	"$BIN" host restore --state-dir="$STATE" >/dev/null 2>&1
elif [ $changed = yes ]; then
	"$BIN" host restore --state-dir="$STATE" >"$WORK/restore.out" 2>&1
	after=$(thp_snapshot)
	[ "$before" = "$after" ] && ok "SIGKILL: 'thpeval host restore' restored the host ($(cat "$WORK/restore.out"))" ||
		ko "SIGKILL: host not restored: $after"
else
	ko "SIGKILL: the run never changed host THP"
fi
# the next run (one boot: the reaping is under test) reaps the killed run's guest
it_run 1800 720 /dev/null "$WORK/r4.err" "$BIN" run --host-thp=never --guest-thp=never --boots=1 --reps=1 --warmup=0 --memory=512M \
	--size=16M --accesses=10000 --timeout=10m --state-dir="$STATE" --db="$WORK/history.db" --out="$WORK/r4"
rc=$it_rc
if it_over "next run after SIGKILL"; then :; else
	[ "$rc" -eq 0 ] && [ -z "$(leftover_domains)" ] && ok "next run reaps the killed run's guest and succeeds" ||
		ko "next run: exit $rc, left: $(leftover_domains); $(tail -2 "$WORK/r4.err")"
fi

finish
