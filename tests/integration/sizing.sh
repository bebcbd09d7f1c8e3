#!/bin/bash
# Integration tests of host sizing (issue 7): two guests at once on a fresh and
# a fragmented host, one per-size mTHP host setting, and a fragmenter left by a
# SIGKILLed run ended by 'thpeval host restore'. Real TCG guests, small: a few
# minutes. Each check prints PASS/FAIL/SKIP; the last line is the tally.
set -u
cd "$(dirname "$0")/../.." || exit 1
IT_NAME=sizing IT_TMP=thpeval-sizing
. tests/integration/lib.sh
holders() { pgrep -x thpeval-frag || true; }
avail_mib() { awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo; }

if [ "$(id -u)" -ne 0 ] || [ ! -w "$THP/enabled" ]; then
	sk "sizing tests need root and a writable host THP sysfs"
	finish
fi
tools/services.sh || { ko "libvirtd could not be started"; finish; }
[ -z "$(holders)" ] || { sk "a memory fragmenter of another run is alive: $(holders)"; finish; }

RUNARGS="--reps=2 --warmup=0 --cold-reps=0 --memory=512M --size=64M --accesses=300000 --timeout=10m --state-dir=$STATE --db=none --format=text,json,html"

# ---- 1. two guests at once, fresh and fragmented host ---------------------------------
before=$(thp_snapshot)
avail0=$(avail_mib)
t0=$(date +%s)
# shellcheck disable=SC2086
timeout -k 10 1200 "$BIN" run --guests=2 --host-state=fresh,fragmented --host-thp=always --guest-thp=always \
	$RUNARGS --out="$WORK/g2" >"$WORK/g2.out" 2>"$WORK/g2.err"
rc=$?
t1=$(date +%s)
after=$(thp_snapshot)
J=$WORK/g2/results.json
if [ $rc -eq 0 ] && [ -s "$J" ]; then ok "--guests=2 --host-state=fresh,fragmented exits 0 ($((t1 - t0)) s)"; else
	ko "run exit $rc: $(tail -3 "$WORK/g2.err")"; fi
[ "$before" = "$after" ] && ok "host THP settings (per-size ones too) and the two vm sysctls identical before and after" ||
	ko "host THP changed: before [$before] after [$after]"
[ -z "$(leftover_domains)" ] && ok "no domain left" || ko "domains left: $(leftover_domains)"
[ -z "$(holders)" ] && ok "no fragmenter left running" || ko "fragmenter left: $(holders)"
[ ! -e "$STATE/host-fragmenter" ] && ok "no fragmenter record left" || ko "fragmenter record left"
avail1=$(avail_mib)
[ "$avail1" -ge $((avail0 * 8 / 10)) ] && ok "host memory back: MemAvailable $avail0 -> $avail1 MiB" ||
	ko "MemAvailable $avail0 -> $avail1 MiB"
if [ -s "$J" ]; then
	n=$(jq '[.guests[] | select(.concurrency == 2)] | length' "$J")
	[ "$n" = 8 ] && ok "8 guests, 2 at a time (2 host states x host never/always)" || ko "guests with concurrency 2: $n"
	idx=$(jq -r '[.guests[].index] | sort | unique | join(",")' "$J")
	[ "$idx" = "0,1" ] && ok "guest indices 0 and 1" || ko "indices: $idx"
	pg=$(jq '[.guests[] | select(.status == "ok") | .cells[] | select(.host_huge_pct != null and .reps == 2)] | length' "$J")
	[ "$pg" = 16 ] && ok "per-guest coverage for every guest and cell (16)" || ko "per-guest coverage entries: $pg"
	ns=$(jq '[.cells[] | select(.host_state == "fragmented")] | length' "$J")
	[ "$ns" = 4 ] && ok "4 cells on the fragmented host" || ko "fragmented cells: $ns"
	reps=$(jq '[.cells[] | select(.reps_ok != 4)] | length' "$J")
	[ "$reps" = 0 ] && ok "every cell has 4 samples (2 guests x 2 reps)" || ko "$reps cells without 4 samples"
	nf=$(jq '.fragmentation | length' "$J")
	[ "$nf" = 2 ] && ok "fragmentation recorded for both fragmented groups" || ko "fragmentation records: $nf"
	bi=$(jq '[.fragmentation[] | select((.buddyinfo_before | length) > 9 and (.buddyinfo_after | length) > 9 and (.buddyinfo_undone | length) > 9)] | length' "$J")
	[ "$bi" = "$nf" ] && ok "buddyinfo before, after and undone recorded" || ko "buddyinfo records: $bi of $nf"
	# what fragmenting must do: leave most of the free memory in blocks under 2M (the kernel's
	# unusable free space index for order 9 rises). Free memory in 2M blocks need not fall: on a
	# host that starts fragmented (page cache in the holes of an earlier arm), the fragmenter's
	# direct compaction can free more 2M blocks than it then takes; that figure is reported
	rose=$(jq '[.fragmentation[] | select(.unusable_2m_pct_after >= .unusable_2m_pct_before and .unusable_2m_pct_after >= 50)] | length' "$J")
	[ "$rose" = "$nf" ] && ok "fragmenting left most free memory in blocks under 2M (unusable index $(jq -r '[.fragmentation[] | "\(.unusable_2m_pct_before | floor)% -> \(.unusable_2m_pct_after | floor)%"] | join(", ")' "$J"); free in 2M blocks $(jq -r '[.fragmentation[] | "\(.free_2m_kb_before / 1024 | floor) -> \(.free_2m_kb_after / 1024 | floor) MiB"] | join(", ")' "$J"))" ||
		ko "fragmenting did not raise the unusable free space index for 2M to 50%: $(jq -c '[.fragmentation[] | [.unusable_2m_pct_before, .unusable_2m_pct_after]]' "$J")"
	# proactive compaction (kcompactd) compacts the fragmentation away as it is made: thpeval
	# turns it off for the arm (the snapshot above checks it came back)
	if [ -r /proc/sys/vm/compaction_proactiveness ]; then
		pa=$(jq '[.fragmentation[] | select(.compaction_proactiveness_before != null)] | length' "$J")
		[ "$pa" = "$nf" ] && ok "proactive compaction off while fragmenting (was $(jq -r '[.fragmentation[].compaction_proactiveness_before] | unique | join(",")' "$J"); compaction scanned $(jq -r '[.fragmentation[].compact_migrate_scanned_fragmenting] | join(", ")' "$J") pages while fragmenting)" ||
			ko "compaction_proactiveness_before missing in $((nf - pa)) fragmentation records"
	fi
	# thpeval guarantees the holder is gone and the memory is back (checked above), and that
	# undoing compacts when under 90% of the 2M blocks of before came back (the kernel's
	# compact_migrate_scanned is the evidence that it ran). Whether blocks come back is the
	# host's to say: pages that landed in the holes while the guests ran (page cache, kernel
	# objects) keep them split, and other activity takes blocks meanwhile; CI once measured
	# 6334 MiB after fragmenting and 6202 MiB once undone (compacted). Reported, not required
	back=$(jq '[.fragmentation[] | select(.free_2m_kb_undone != null and (.restored or (.compact_memory_needed and .compact_migrate_scanned_undo > 0)))] | length' "$J")
	[ "$back" = "$nf" ] && ok "undoing gave the 2M blocks back or compacted ($(jq -r '[.fragmentation[] | "\(.free_2m_kb_after / 1024 | floor) -> \(.free_2m_kb_undone / 1024 | floor) MiB, \(if .restored then "" else "not " end)to 90% of before\(if .compact_memory_needed then ", compacted (\(.compact_migrate_scanned_undo) pages scanned)" else "" end)"] | join("; ")' "$J"))" ||
		ko "undoing: $(jq -c '[.fragmentation[] | {after: .free_2m_kb_after, undone: .free_2m_kb_undone, restored, compact_memory_needed, compact_migrate_scanned_undo}]' "$J")"
	cf=$(jq -r '[.cells[] | select(.host_thp == "always" and .guest_thp == "always") | "\(.host_state) \(.coverage.host_huge_pct | floor)%"] | join(", ")' "$J")
	ok "host coverage of always/always: $cf"
	grep -q '^sizing: memset, 2 guests at once' "$WORK/g2/results.txt" && ok "text report has the sizing summary" ||
		ko "no sizing summary in results.txt"
	grep -q 'id="sizing"' "$WORK/g2/report.html" && ok "HTML report has the sizing section" || ko "no sizing section in report.html"
	tests/report/schema.sh "$J" >"$WORK/schema.out" 2>&1 && ok "results.json valid against the schema" ||
		ko "schema: $(tail -3 "$WORK/schema.out")"
fi

# ---- 2. one multi-size THP size: coverage from the per-size stats ----------------------
if [ -r "$THP/hugepages-64kB/enabled" ] && [ -r "$THP/hugepages-64kB/stats/anon_fault_alloc" ]; then
	before=$(thp_snapshot)
	# shellcheck disable=SC2086
	timeout -k 10 900 "$BIN" run --host-thp=64K:always --guest-thp=never $RUNARGS --out="$WORK/m" \
		>"$WORK/m.out" 2>"$WORK/m.err"
	rc=$?
	after=$(thp_snapshot)
	J=$WORK/m/results.json
	[ $rc -eq 0 ] && ok "--host-thp=64K:always exits 0" || ko "64K run exit $rc: $(tail -3 "$WORK/m.err")"
	[ "$before" = "$after" ] && ok "per-size knobs restored after the 64K run" || ko "knobs changed: [$before] -> [$after]"
	src=$(jq -r '[.cells[] | select(.host_thp == "64K:always") | .coverage.host_source] | unique | join(",")' "$J" 2>/dev/null)
	[ "$src" = mthp_stats ] && ok "64K cells take coverage from hugepages-64kB/stats" || ko "coverage source: $src"
	cov=$(jq -r '[.cells[] | select(.host_thp == "64K:always") | .coverage.host_huge_pct] | map(floor) | join(",")' "$J" 2>/dev/null)
	ok "64K host coverage (host-wide stats estimate): $cov%"
	grep -q '^mTHP sweep' "$WORK/m/results.txt" && ok "text report has the per-size table" || ko "no per-size table"
else
	sk "this host kernel has no hugepages-64kB (Linux 6.9+ stats): no per-size run"
fi

# ---- 3. SIGKILL while fragmented: 'thpeval host restore' ends the holder ---------------
before=$(thp_snapshot)
# shellcheck disable=SC2086
"$BIN" run --host-state=fragmented --host-thp=always --guest-thp=always $RUNARGS --out="$WORK/k" \
	>"$WORK/k.out" 2>"$WORK/k.err" &
pid=$!
for _ in $(seq 1 600); do
	[ -n "$(holders)" ] && [ -e "$STATE/host-fragmenter" ] && break
	sleep 0.2
done
if [ -z "$(holders)" ]; then
	ko "SIGKILL: no fragmenter appeared ($(tail -2 "$WORK/k.err"))"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
else
	h=$(holders)
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	# PR_SET_PDEATHSIG: the holder dies with thpeval
	for _ in $(seq 1 50); do [ -z "$(holders)" ] && break; sleep 0.1; done
	[ -z "$(holders)" ] && ok "SIGKILL: the fragmenter ($h) died with thpeval" || ko "SIGKILL: fragmenter $h still alive"
	for d in $(leftover_domains); do virsh -c qemu:///system destroy "$d" >/dev/null 2>&1; done
	"$BIN" host restore --state-dir="$STATE" >"$WORK/restore.out" 2>&1
	after=$(thp_snapshot)
	[ "$before" = "$after" ] && ok "SIGKILL: 'thpeval host restore' put the THP knobs and sysctls back" || ko "after restore: $after"
	[ ! -e "$STATE/host-fragmenter" ] && ok "SIGKILL: fragmenter record removed by 'host restore'" ||
		ko "fragmenter record still there"
fi
finish
