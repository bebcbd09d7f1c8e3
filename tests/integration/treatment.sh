#!/bin/bash
# Integration test of the treatment evidence (lib/wltraits.c): one
# cell per workload whose treatment is made to fail must come out invalid with
# the workload's reason, from the command line to results.json.
#  - the bare host with host THP 'always' while the workload processes may not
#    use THP (prctl PR_SET_THP_DISABLE, inherited by thpeval's children): the
#    knob says always, the kernel gives none. memset, clearorder (coverage that
#    follows the setting), fork (its forked buffer), color and tlb's 2M arm (they
#    ask for huge pages),
#    hzp (the huge zero page) and dd's /dev/null runs (coverage not measurable)
#    are invalid with their reasons; tlb's 4K arm, which asked for base pages,
#    stays valid. The same run's host 'never' cells: the arms that ask for huge
#    pages (hzp's zero page, color) are invalid there too.
#  - one TCG guest with guest THP 'never': hzp's zero page arm and color are
#    invalid on the guest target alike.
# kcompile's cell is in tests/integration/kcompile.sh (it needs the kernel
# source and minutes of build); its rule is also in tests/lib/test_wltraits.c.
# Prints PASS/FAIL/SKIP lines and a summary line. Run it under the host lock.
set -u
cd "$(dirname "$0")/../.." || exit 1
IT_NAME="integration treatment" IT_TMP=thpeval-it-tr
. tests/integration/lib.sh

if [ "$(id -u)" -ne 0 ]; then
	sk "treatment integration needs root (host THP writes)"
	finish
fi

# the cell of workload/variant ("-": none) at host/guest THP; "valid|reason|note"
cell() {
	jq -r --arg t "$1" --arg h "$2" --arg g "$3" --arg w "$4" --arg v "$5" '[.cells[]
		| select(.target == $t and .host_thp == $h and .guest_thp == $g and .workload == $w
			and (.variant // "-") == $v)
		| "\(.valid)|\(.invalid_reason // "")|\(.treatment_note // "")"] | .[0] // "missing"' "$J"
}

# expect_invalid TARGET HOST GUEST WORKLOAD VARIANT REASON-PART
expect_invalid() {
	local c v=${5#-}
	c=$(cell "$1" "$2" "$3" "$4" "$5")
	if [ "${c%%|*}" = false ] && grep -qF -- "$6" <<<"$c"; then
		ok "$1 $2/$3 $4${v:+/$v}: invalid: $(cut -d'|' -f2 <<<"$c")"
	else
		ko "$1 $2/$3 $4 $5: [$c], want invalid with '$6'"
	fi
}

expect_valid() {
	local c v=${5#-}
	c=$(cell "$1" "$2" "$3" "$4" "$5")
	[ "${c%%|*}" = true ] && ok "$1 $2/$3 $4${v:+/$v}: valid (it asked for what it got)" ||
		ko "$1 $2/$3 $4 $5: [$c], want valid"
}

# ---- the bare host: the knob says always, the kernel gives none ----------------------
if [ "$(uname -m)" != x86_64 ] || ! command -v perl >/dev/null; then
	sk "bare host arm: PR_SET_THP_DISABLE is set through perl's syscall() with x86_64's number"
elif ! nothp true 2>"$WORK/prctl.err"; then
	sk "bare host arm: this kernel refuses PR_SET_THP_DISABLE: $(cat "$WORK/prctl.err")"
else
	WL=memset,tlb,hzp,clearorder,color,dd,fork
	before=$(thp_snapshot)
	t0=$(date +%s)
	nothp timeout -k 10 600 "$BIN" run --target=host --workloads=$WL --host-thp=always --boots=1 --reps=1 \
		--warmup=0 --cold-reps=0 --size=64M --state-dir="$STATE" --db=none --out="$WORK/h" \
		>"$WORK/h.out" 2>"$WORK/h.err"
	rc=$?
	J=$WORK/h/results.json
	if [ $rc -eq 0 ] && [ -s "$J" ]; then
		ok "bare host run, THP disabled for the workloads, exits 0 ($(($(date +%s) - t0)) s)"
		[ "$before" = "$(thp_snapshot)" ] && ok "host THP settings identical before and after" ||
			ko "host THP changed: before [$before] after [$(thp_snapshot)]"
		tests/report/schema.sh "$J" >"$WORK/schema.out" 2>&1 &&
			ok "results.json valid against doc/results.schema.json" ||
			ko "schema: $(grep -v PASS "$WORK/schema.out" | head -5)"
		expect_invalid host always none memset - "host THP is always but only 0.0% of the buffer is on host huge pages"
		expect_invalid host always none clearorder seq-seq \
			"host THP is always but only 0.0% of the tasks' buffers is on host huge pages"
		expect_invalid host always none color - \
			"the arm asks for huge pages (MADV_HUGEPAGE, host THP always) but only 0.0% of the region"
		expect_invalid host always none tlb summary \
			"the arm asks for huge pages (MADV_HUGEPAGE, host THP always) but only 0.0% of the 2M-backed region"
		expect_invalid host always none tlb ws16384_2m "the arm asks for huge pages"
		expect_valid host always none tlb ws16384_4k
		expect_invalid host always none dd null-4k "coverage of dd's buffer not measured: dd's own buffer"
		expect_invalid host always none fork - \
			"host THP is always but only 0.0% of the forked buffer is on host huge pages"
		expect_valid host never none fork -
		# the host's own use_zero_page decides the bare host's hzp arm; how the kernel
		# serves the reads instead (the 4K zero page, or memory it allocates) is the
		# kernel's, said after this reason
		zpv=$(jq -r '[.cells[] | select(.workload == "hzp") | .variant] | .[0]' "$J")
		if [ "$zpv" = zp1 ]; then
			expect_invalid host always none hzp zp1 \
				"huge zero page not in effect (zero_page_in_effect=0): reads "
			expect_invalid host never none hzp zp1 "THP never"
			note=$(jq -r '[.cells[] | select(.workload == "hzp" and .host_thp == "always")
				| .treatment_note] | .[0]' "$J")
			[ -n "$note" ] && [ "$note" != null ] && ok "hzp: results.json keeps the workload's word: $note" ||
				ko "hzp: no treatment_note"
		else
			expect_invalid host always none hzp "$zpv" "host THP is always but only 0.0% of the buffer"
			sk "hzp zero page arm: the host's use_zero_page is not 1 here (variant $zpv)"
		fi
		expect_invalid host never none color - "the arm asks for huge pages (MADV_HUGEPAGE, host THP never)"
		expect_valid host never none memset -
	else
		ko "bare host run exit $rc; stderr: $(tail -3 "$WORK/h.err")"
	fi
fi

# ---- one TCG guest: guest THP never while the arms ask for huge pages ----------------
if ! tools/services.sh; then
	sk "guest arm: libvirtd could not be started"
else
	t0=$(date +%s)
	timeout -k 10 900 "$BIN" run --target=guest --workloads=hzp,color --host-thp=never \
		--guest-thp=always --boots=1 --reps=1 --warmup=0 --cold-reps=0 --state-dir="$STATE" --db=none \
		--out="$WORK/g" >"$WORK/g.out" 2>"$WORK/g.err"
	rc=$?
	J=$WORK/g/results.json
	if [ $rc -eq 0 ] && [ -s "$J" ]; then
		ok "guest run exits 0 ($(($(date +%s) - t0)) s)"
		expect_invalid guest never never hzp zp1 \
			"huge zero page not in effect (zero_page_in_effect=0): reads mapped the 4K zero page"
		expect_invalid guest never never color - \
			"the arm asks for huge pages (MADV_HUGEPAGE, guest THP never) but only 0.0% of the region"
		expect_valid guest never never hzp zp0
		# what this guest kernel does with use_zero_page=1 under always: a finding, not a test
		echo "  guest $(jq -r '.guests[0].guest_kernel' "$J"), guest THP always, hzp zp1:" \
			"$(cell guest never always hzp zp1)"
	else
		ko "guest run exit $rc; stderr: $(tail -3 "$WORK/g.err")"
	fi
	[ -z "$(leftover_domains)" ] && ok "no domain left" || ko "domains left: $(leftover_domains)"
fi

finish
