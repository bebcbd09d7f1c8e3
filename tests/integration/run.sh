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

# small but real: 2 measured reps + 1 warm-up per cell, 64 MiB buffer
RUNARGS="--reps=2 --warmup=1 --memory=512M --size=64M --accesses=300000 --timeout=10m --state-dir=$STATE --db=$WORK/history.db"

# ---- 1. the 2x2 from real guests, host untouched afterwards ---------------------
before=$(thp_snapshot)
t0=$(date +%s)
# shellcheck disable=SC2086
timeout -k 10 900 "$BIN" run --host-thp=always --guest-thp=always $RUNARGS --out="$WORK/r1" >"$WORK/r1.out" 2>"$WORK/r1.err"
rc=$?
t1=$(date +%s)
after=$(thp_snapshot)
J=$WORK/r1/results.json
if [ $rc -eq 0 ] && [ -s "$J" ]; then ok "run exits 0 and writes results.json ($((t1 - t0)) s)"; else
	ko "run exit $rc; stderr: $(tail -3 "$WORK/r1.err")"; fi
if [ "$before" = "$after" ]; then ok "host THP settings identical before and after"; else
	ko "host THP changed: before [$before] after [$after]"; fi
if [ -s "$J" ]; then
	ncells=$(jq '[.cells[] | select(.variant == null)] | length' "$J")
	[ "$ncells" = 4 ] && ok "4 cells (host never/always x guest never/always)" || ko "cells: $ncells"
	combos=$(jq -r '[.cells[] | select(.variant == null) | .host_thp + "/" + .guest_thp] | sort | join(" ")' "$J")
	[ "$combos" = "always/always always/never never/always never/never" ] && ok "cell grid complete" || ko "grid: $combos"
	bad=$(jq '[.cells[] | select(.variant == null) | select((.metrics.access_ns.samples | length) != 2 or (.metrics.fault_ns_per_4k.samples | length) != 2)] | length' "$J")
	[ "$bad" = 0 ] && ok "every cell has 2 access and fault samples" || ko "$bad cells lack samples"
	# the host-cold series (--cold-reps default 3): fresh guest memory, so the
	# QEMU process faults during it; with host never one fault per 4K page
	ncold=$(jq '[.cells[] | select(.variant == "cold" and (.metrics.fault_ns_per_4k.samples | length) == 3)] | length' "$J")
	[ "$ncold" = 4 ] && ok "4 host-cold cells with 3 fault samples each" || ko "host-cold cells: $ncold"
	coldf=$(jq '[.cells[] | select(.variant == "cold" and .host_thp == "never") | (.metrics.host_qemu_minflt.mean / (.metrics.rss_bytes.mean / 4096))] | min' "$J")
	jq -e "$coldf > 0.8" >/dev/null <<<'null' && ok "host-cold repetitions were host-cold (QEMU faults / pages >= $coldf)" ||
		ko "host-cold repetitions not host-cold: QEMU faults / pages $coldf"
	hpf=$(jq -r '[.effects[] | select(.side == "host" and .component == "prefault") | .available] | length > 0 and all' "$J")
	[ "$hpf" = true ] && ok "host prefault effect computed from the host-cold cells" || ko "no host prefault effect"
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
	# the evidence must match the setting: host never -> ~0% host huge, host always -> most
	hn=$(jq '[.cells[] | select(.host_thp == "never") | .coverage.host_huge_pct] | max' "$J")
	ha=$(jq '[.cells[] | select(.host_thp == "always") | .coverage.host_huge_pct] | min' "$J")
	gn=$(jq '[.cells[] | select(.guest_thp == "never") | .coverage.guest_huge_pct] | max' "$J")
	ga=$(jq '[.cells[] | select(.guest_thp == "always") | .coverage.guest_huge_pct] | min' "$J")
	echo "   coverage: host never max $hn%, host always min $ha%, guest never max $gn%, guest always min $ga%"
	jq -e "$hn < 1 and $ha > 50 and $gn < 1 and $ga > 50" >/dev/null <<<'null' && ok "coverage follows the THP settings" || ko "coverage contradicts settings"
	nx=$(ls "$WORK"/r1/guests/*.xml 2>/dev/null | wc -l)
	nl=$(ls "$WORK"/r1/guests/*.console.log 2>/dev/null | wc -l)
	[ "$nx" = 2 ] && [ "$nl" = 2 ] && ok "domain XML and console log kept for both guests" || ko "guest files: $nx xml, $nl logs"
	grep -q 'host_thp' "$WORK/r1.out" && ok "table printed" || ko "no table on stdout"
	tests/report/schema.sh "$J" >"$WORK/schema.out" 2>&1 && ok "results.json valid against doc/results.schema.json" ||
		ko "schema: $(grep -v PASS "$WORK/schema.out" | head -3)"
	sed 's/^/   /' "$WORK/r1.out"
fi
[ -z "$(leftover_domains)" ] && ok "no domain left behind" || ko "domains left: $(leftover_domains)"

# ---- 1b. a broken cell is caught: host 'always' with memfd-backed guest RAM ------
# memfd RAM is shmem, governed by shmem_enabled (not 'enabled'): the knob says
# always, the evidence says no huge pages, and the cell must be marked invalid
shm=$(grep -o '\[[a-z_+]*\]' "$THP/shmem_enabled" 2>/dev/null | tr -d '[]')
if [ "$shm" = always ] || [ "$shm" = force ]; then
	sk "broken cell: shmem_enabled is '$shm', memfd guest RAM would get huge pages"
else
	timeout -k 10 600 "$BIN" run --host-thp=always --guest-thp=never --host-backing=memfd --reps=2 --warmup=0 \
		--memory=512M --size=16M --accesses=20000 --state-dir="$STATE" --db="$WORK/history.db" --out="$WORK/rb" >"$WORK/rb.out" 2>"$WORK/rb.err"
	J=$WORK/rb/results.json
	if [ -s "$J" ]; then
		inv=$(jq -r '[.cells[] | select(.host_thp == "always") | .valid] | all(. == false)' "$J")
		why=$(jq -r '[.cells[] | select(.host_thp == "always") | .invalid_reason] | .[0]' "$J")
		okn=$(jq -r '[.cells[] | select(.host_thp == "never") | .valid] | all' "$J")
		fx=$(jq -r '[.effects[] | select(.side == "host") | .available] | any' "$J")
		[ "$inv" = true ] && echo "$why" | grep -q 'host THP is always but only' &&
			ok "broken cell (host always, memfd RAM) marked invalid: $why" || ko "broken cell not caught: $inv $why"
		[ "$okn" = true ] && ok "the host-never cells stay valid" || ko "host-never cells invalid"
		[ "$fx" = false ] && ok "no host effect computed from invalid cells" || ko "host effect computed from invalid cells"
	else
		ko "memfd run wrote no results: $(tail -2 "$WORK/rb.err")"
	fi
fi

# ---- 1c. the hugetlbfs reference arm: pool reserved for its guest, released after ----
POOL=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if ! grep -q ' hugetlbfs ' /proc/mounts || [ ! -w "$POOL" ]; then
	sk "hugetlbfs arm: no hugetlbfs mounted or no 2M pool here (tools/services.sh mounts one before libvirtd)"
else
	pool0=$(cat "$POOL")
	timeout -k 10 600 "$BIN" run --host-thp=always --guest-thp=always --host-backing=anonymous,hugetlbfs --reps=2 \
		--warmup=0 --cold-reps=0 --memory=512M --size=16M --accesses=20000 --state-dir="$STATE" --db=none \
		--out="$WORK/rh" >"$WORK/rh.out" 2>"$WORK/rh.err"
	J=$WORK/rh/results.json
	if [ -s "$J" ]; then
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

# ---- 2. bad input: one-line error, non-zero exit, host untouched ------------------
before=$(thp_snapshot)
while IFS='|' read -r name args want; do
	[ -z "$name" ] && continue
	# shellcheck disable=SC2086
	eval "set -- $args"
	timeout -k 10 120 "$BIN" run "$@" --state-dir="$STATE" --out="$WORK/bad" >"$WORK/bad.out" 2>"$WORK/bad.err"
	rc=$?
	lines=$(wc -l <"$WORK/bad.err")
	if [ $rc -ne 0 ] && [ "$lines" -le 2 ] && grep -q "$want" "$WORK/bad.err"; then
		ok "bad input '$name': exit $rc, '$(tail -1 "$WORK/bad.err")'"
	else
		ko "bad input '$name': exit $rc, stderr: $(cat "$WORK/bad.err")"
	fi
done <<'CASES'
host-thp bogus|--host-thp=bogus|'bogus' is not a host THP setting
memory abc|--memory=abc|'abc' is not a guest memory size
reps zero|--reps=0|'0' is not a repetition count
unreachable connect|--connect=qemu+unix:///system?socket=/nonexistent/sock|cannot connect
missing kernel|--kernel=/nonexistent/vmlinuz|guest kernel '/nonexistent/vmlinuz'
kernel path with spaces|'--kernel=/tmp/no such/vm linuz'|guest kernel
shell metacharacters|'--out=$(touch /tmp/pwned)' --memory='1G;reboot'|not a guest memory size
unknown option|--bogus|unknown option
CASES
after=$(thp_snapshot)
[ "$before" = "$after" ] && ok "host THP untouched by bad input" || ko "host THP changed by bad input"
[ ! -e /tmp/pwned ] && ok "no user string reached a shell" || ko "/tmp/pwned exists"

# ---- 3. SIGINT during a run: guests gone, host restored, partial results, exit != 0 ---
before=$(thp_snapshot)
# shellcheck disable=SC2086
"$BIN" run --host-thp=always $RUNARGS --out="$WORK/r2" >"$WORK/r2.out" 2>"$WORK/r2.err" &
pid=$!
for _ in $(seq 1 600); do
	grep -q 'rep 1 done' "$WORK/r2.err" 2>/dev/null && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.2
done
kill -INT $pid
# the run must stop on its own, promptly: guests destroyed, host restored
for _ in $(seq 1 300); do
	kill -0 $pid 2>/dev/null || break
	sleep 0.2
done
if kill -0 $pid 2>/dev/null; then
	ko "SIGINT: still running 60 s after SIGINT"
	kill -KILL $pid
fi
wait $pid
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

# ---- 4. SIGKILL: the journal lets 'thpeval host restore' put the host back -------------
before=$(thp_snapshot)
orig=$(grep -o '\[[a-z]*\]' "$THP/enabled" | tr -d '[]')
# shellcheck disable=SC2086
"$BIN" run --host-thp=always $RUNARGS --out="$WORK/r3" >/dev/null 2>"$WORK/r3.err" &
pid=$!
changed=no
for _ in $(seq 1 600); do
	cur=$(grep -o '\[[a-z]*\]' "$THP/enabled" | tr -d '[]')
	if [ "$cur" != "$orig" ]; then changed=yes; break; fi
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
if [ "$orig" = never ]; then
	sk "SIGKILL: host THP is already 'never', the baseline changes nothing to restore"
elif [ $changed = yes ]; then
	"$BIN" host restore --state-dir="$STATE" >"$WORK/restore.out" 2>&1
	after=$(thp_snapshot)
	[ "$before" = "$after" ] && ok "SIGKILL: 'thpeval host restore' restored the host ($(cat "$WORK/restore.out"))" ||
		ko "SIGKILL: host not restored: $after"
else
	ko "SIGKILL: the run never changed host THP"
fi
# the next run reaps the killed run's guest
# shellcheck disable=SC2086
timeout -k 10 600 "$BIN" run --host-thp=never --guest-thp=never --reps=1 --warmup=0 --memory=512M --size=16M --accesses=10000 --state-dir="$STATE" --db="$WORK/history.db" --out="$WORK/r4" >/dev/null 2>"$WORK/r4.err"
rc=$?
[ $rc -eq 0 ] && [ -z "$(leftover_domains)" ] && ok "next run reaps the killed run's guest and succeeds" ||
	ko "next run: exit $rc, left: $(leftover_domains); $(tail -2 "$WORK/r4.err")"

finish
