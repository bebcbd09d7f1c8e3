#!/bin/bash
# tools/layers.sh on fixture trees built here: a clean tree passes, and each
# planted fault fails with its own line: lib/ including host/, host/ including
# images/ or orchestrator/, guest/ including host/, an upward include in
# orchestrator/ (analysis .c including a cmd .h; history including report), an
# upward dependency only through a header, a dependency through lib/ and one
# outside the layers, a virt file above base, include circles (two and three
# modules, two headers, two guest modules), a call circle through one shared
# header (from the objects), a file directly in orchestrator/ or in a folder
# with no rules; includes of lib/ and host/ from every layer, system headers, a
# missing (generated) header and tests/ including anything are fine; the
# allow-list lets its circles pass and fails on a changed or gone one; usage
# errors, a malformed allow-list and a compiler that cannot run exit 2. Exit 77
# without gcc.
set -u
cd "$(dirname "$0")/../.." || exit 1
LAYERS=$PWD/tools/layers.sh
pass=0 fail=0 skip=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
if ! command -v gcc >/dev/null; then
	echo "SKIP: gcc is not installed (tools/deps.sh installs it)"
	echo "layers: 0 passed, 0 failed, 1 skipped"
	exit 77
fi
WORK=$(mktemp -d /tmp/thpeval-layers-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# put FILE LINE...: FILE under the tree $T with one line per argument
put() {
	local f=$T/$1
	shift
	mkdir -p "$(dirname "$f")"
	printf '%s\n' "$@" >"$f"
}
# guarded header FILE INCLUDE...: a header including each INCLUDE ("x.h" or <x.h>)
hdr() {
	local f=$1 g l
	shift
	g=$(echo "$f" | tr '/.a-z' '__A-Z')
	l=("#ifndef $g" "#define $g")
	for i in "$@"; do l+=("#include $i"); done
	put "$f" "${l[@]}" "int ${g,,}_x;" "#endif"
}
# source FILE INCLUDE...
src() {
	local f=$1 l=()
	shift
	for i in "$@"; do l+=("#include $i"); done
	put "$f" "${l[@]}" "int $(basename "${f%.c}")_y;"
}

# the clean tree: each layer uses its own headers, the layers below, lib/ and
# host/; system headers, a missing system header and a missing generated one;
# includes by own-directory and ../ names
T=$WORK/clean
hdr lib/err.h '<stddef.h>'
hdr host/thp.h '"lib/err.h"'
hdr images/image.h '"lib/err.h"'
hdr guest/wl.h '"lib/err.h"'
src guest/wl.c '"wl.h"' '<stdio.h>'
src lib/err.c '"err.h"' '<string.h>'
hdr orchestrator/virt/domain.h '"host/thp.h"' '"images/image.h"'
src orchestrator/virt/domain.c '"orchestrator/virt/domain.h"' '<stdio.h>'
hdr orchestrator/model/results.h '"lib/err.h"' '<stdint.h>'
src orchestrator/model/results.c '"orchestrator/model/results.h"' '"host/thp.h"' '<string.h>'
hdr orchestrator/model/stats.h '"results.h"'
src orchestrator/model/stats.c '"stats.h"' '<math.h>'
hdr orchestrator/analysis/effects.h '"orchestrator/model/results.h"'
src orchestrator/analysis/effects.c '"orchestrator/analysis/effects.h"' '"../model/stats.h"' '"lib/err.h"'
hdr orchestrator/history/hist.h '"orchestrator/analysis/effects.h"'
src orchestrator/history/hist.c '"orchestrator/history/hist.h"' '"lib/err.h"'
hdr orchestrator/report/report.h '"orchestrator/analysis/effects.h"'
src orchestrator/report/report.c '"orchestrator/report/report.h"' '"host/thp.h"' '<stdio.h>' \
	'"orchestrator/history/hist.h"'
hdr orchestrator/run/run.h '"orchestrator/report/report.h"' '"orchestrator/virt/domain.h"'
src orchestrator/run/run.c '"orchestrator/run/run.h"' '"orchestrator/run/gen_table.h"' \
	'<thpeval_no_such_dir/header.h>'
hdr orchestrator/cmd/cli.h '"lib/err.h"'
src orchestrator/cmd/cli.c '"orchestrator/cmd/cli.h"' '"orchestrator/model/stats.h"' '"host/thp.h"'
src orchestrator/cmd/main.c '"orchestrator/cmd/cli.h"' '"orchestrator/run/run.h"' '<stdlib.h>'
src tests/orchestrator/test_main.c '"orchestrator/cmd/cli.h"' '"guest/wl.h"' '"host/thp.h"'
NCLEAN=$(cd "$T" && find . -path ./tests -prune -o -name '*.[ch]' -print | wc -l)

# run the checker on the tree $T (and any options); $rc, and its output in $WORK/out
lay() {
	"$LAYERS" --root="$T" "$@" >"$WORK/out" 2>&1
	rc=$?
}
# build the objects of $T the way the Makefile lays them out: X.c as build/X.o,
# guest/X.c as build/g/guest/X.o (lib/ again under build/g/lib/)
objs() {
	local f o
	while IFS= read -r f; do
		o=$T/build/${f%.c}.o
		case $f in guest/*) o=$T/build/g/${f%.c}.o ;; esac
		mkdir -p "$(dirname "$o")"
		# the clean tree's run.c needs a generated header that is not there
		gcc -std=gnu11 -fno-common -I"$T" -c -o "$o" "$T/$f" 2>/dev/null || continue
		case $f in lib/*)
			mkdir -p "$T/build/g/lib"
			cp "$o" "$T/build/g/lib/"
			;;
		esac
	done < <(cd "$T" && find . -path ./tests -prune -o -name '*.c' -print | sed 's|^\./||')
}
show() { sed 's/^/   | /' "$WORK/out"; }
# fresh NAME: $T becomes a new copy of the clean tree
fresh() {
	T=$WORK/$1
	cp -r "$WORK/clean" "$T"
}

# expect NAME RC LINE...: the last run exited RC, printed each LINE exactly once
# and no other "layers: " line, the last LINE (the summary) last
expect() {
	local name=$1 want=$2 l bad="" n
	shift 2
	for l in "$@"; do
		n=$(grep -cxF -- "$l" "$WORK/out")
		[ "$n" -eq 1 ] || bad="$bad [$n times: $l]"
	done
	n=$(grep -c '^layers: ' "$WORK/out")
	[ "$n" -eq $# ] || bad="$bad [$n 'layers: ' lines, want $#]"
	[ "$(tail -n1 "$WORK/out")" = "${*: -1}" ] || bad="$bad [summary not last]"
	if [ "$rc" -eq "$want" ] && [ -z "$bad" ]; then
		ok "$name"
	else
		ko "$name: exit $rc (want $want):$bad"
		show
	fi
}

# ---- the clean tree -------------------------------------------------------------
T=$WORK/clean
lay
expect "clean tree passes (lib/, host/, system, missing and ../ headers)" 0 \
	"layers: $NCLEAN files checked, 0 violations"
(cd "$WORK" && "$LAYERS" --root=clean >"$WORK/out" 2>&1)
rc=$?
expect "a relative --root is the same tree" 0 "layers: $NCLEAN files checked, 0 violations"

# ---- upward dependencies -------------------------------------------------------------
fresh up
src orchestrator/analysis/effects.c '"orchestrator/analysis/effects.h"' '"orchestrator/cmd/cli.h"'
lay
expect "planted upward include (analysis .c includes a cmd .h) fails naming both" 1 \
	"layers: orchestrator/analysis/effects.c depends on orchestrator/cmd/cli.h (cmd is above analysis)" \
	"layers: $NCLEAN files checked, 1 violation"

fresh hup
hdr orchestrator/run/plan.h
hdr orchestrator/model/stats.h '"results.h"' '"orchestrator/run/plan.h"'
lay
expect "upward dependency only through a header fails with the chain" 1 \
	"layers: orchestrator/analysis/effects.c depends on orchestrator/run/plan.h (run is above analysis) through orchestrator/model/stats.h" \
	"layers: orchestrator/model/stats.c depends on orchestrator/run/plan.h (run is above model) through orchestrator/model/stats.h" \
	"layers: orchestrator/model/stats.h depends on orchestrator/run/plan.h (run is above model)" \
	"layers: $((NCLEAN + 1)) files checked, 3 violations"

fresh lib
hdr lib/bad.h '"lib/err.h"' '"orchestrator/cmd/cli.h"'
src orchestrator/model/stats.c '"stats.h"' '"lib/bad.h"'
lay
expect "upward dependency through a lib/ header fails with the chain" 1 \
	"layers: lib/bad.h depends on orchestrator/cmd/cli.h (nothing outside orchestrator/ includes it)" \
	"layers: orchestrator/model/stats.c depends on orchestrator/cmd/cli.h (cmd is above model) through lib/bad.h" \
	"layers: $((NCLEAN + 1)) files checked, 2 violations"

fresh hist
src orchestrator/history/hist.c '"orchestrator/history/hist.h"' '"orchestrator/report/report.h"'
lay
expect "history is below report: a history file including report fails" 1 \
	"layers: orchestrator/history/hist.c depends on orchestrator/report/report.h (report is above history)" \
	"layers: $NCLEAN files checked, 1 violation"

fresh histm
src orchestrator/model/stats.c '"stats.h"' '"orchestrator/history/hist.h"'
lay
expect "history is above model: a model file including history fails" 1 \
	"layers: orchestrator/model/stats.c depends on orchestrator/history/hist.h (history is above model)" \
	"layers: $NCLEAN files checked, 1 violation"

# ---- the folders outside orchestrator/ ----------------------------------------------------
fresh libhost
src lib/err.c '"err.h"' '"host/thp.h"'
lay
expect "lib/ including host/ fails (lib is libc and lib/ only)" 1 \
	"layers: lib/err.c depends on host/thp.h (lib uses libc and lib/ only)" \
	"layers: $NCLEAN files checked, 1 violation"

fresh hostorch
src host/thp.c '"host/thp.h"' '"orchestrator/cmd/cli.h"'
lay
expect "host/ including orchestrator/ fails" 1 \
	"layers: host/thp.c depends on orchestrator/cmd/cli.h (nothing outside orchestrator/ includes it)" \
	"layers: $((NCLEAN + 1)) files checked, 1 violation"

fresh hostimg
src host/thp.c '"host/thp.h"' '"images/image.h"'
lay
expect "host/ including images/ fails (host uses host/ and lib/)" 1 \
	"layers: host/thp.c depends on images/image.h (host uses host/ and lib/ only)" \
	"layers: $((NCLEAN + 1)) files checked, 1 violation"

fresh imgorch
hdr images/image.h '"lib/err.h"' '"orchestrator/model/results.h"'
lay
# and virt, which may use images/, now reaches model through it
expect "an images/ header including orchestrator/ fails" 1 \
	"layers: images/image.h depends on orchestrator/model/results.h (nothing outside orchestrator/ includes it)" \
	"layers: orchestrator/virt/domain.c depends on orchestrator/model/results.h (model is above virt) through orchestrator/virt/domain.h -> images/image.h" \
	"layers: orchestrator/virt/domain.h depends on orchestrator/model/results.h (model is above virt) through images/image.h" \
	"layers: $NCLEAN files checked, 3 violations"

fresh guesthost
src guest/wl.c '"wl.h"' '"host/thp.h"'
lay
expect "guest/ including host/ fails (guest uses guest/ and lib/)" 1 \
	"layers: guest/wl.c depends on host/thp.h (guest uses guest/ and lib/ only)" \
	"layers: $NCLEAN files checked, 1 violation"

fresh norule
src bench/probe.c '"lib/err.h"'
put main.c 'int main(void) { return 0; }'
lay
expect "a C file in a folder with no rules fails" 1 \
	"layers: bench/probe.c is in no folder with rules (lib, host, images, guest, orchestrator)" \
	"layers: main.c is in no folder with rules (lib, host, images, guest, orchestrator)" \
	"layers: $((NCLEAN + 2)) files checked, 2 violations"

fresh deep
src orchestrator/model/results.c '"orchestrator/model/results.h"' '"orchestrator/run/run.h"'
lay
# run.h pulls report.h and effects.h (above model too): no line of their own; nor
# the circles the include closes through run, report and analysis back to model
expect "an upward include reported once, not again for what it pulls in" 1 \
	"layers: orchestrator/model/results.c depends on orchestrator/run/run.h (run is above model)" \
	"layers: $NCLEAN files checked, 1 violation"

fresh virt
src orchestrator/virt/domain.c '"orchestrator/virt/domain.h"' '"orchestrator/model/results.h"'
lay
expect "virt is base: a virt file including model fails" 1 \
	"layers: orchestrator/virt/domain.c depends on orchestrator/model/results.h (model is above virt)" \
	"layers: $NCLEAN files checked, 1 violation"

fresh gen
src orchestrator/model/stats.c '"stats.h"' '"orchestrator/report/gen_names.h"'
lay
expect "a missing (generated) header above is still upward" 1 \
	"layers: orchestrator/model/stats.c depends on orchestrator/report/gen_names.h (report is above model)" \
	"layers: $NCLEAN files checked, 1 violation"

fresh outside
src orchestrator/model/results.c '"orchestrator/model/results.h"' '"guest/wl.h"'
lay
expect "a repository header outside the layers fails" 1 \
	"layers: orchestrator/model/results.c depends on guest/wl.h (guest is outside the layers)" \
	"layers: $NCLEAN files checked, 1 violation"

# ---- circles ---------------------------------------------------------------------------
fresh c2
hdr orchestrator/model/a.h '"lib/err.h"'
hdr orchestrator/model/b.h
src orchestrator/model/a.c '"orchestrator/model/a.h"' '"orchestrator/model/b.h"'
src orchestrator/model/b.c '"b.h"' '"a.h"'
lay
expect "a circle of two model modules fails, printed once" 1 \
	"layers: include circle: orchestrator/model/a orchestrator/model/b" \
	"layers: $((NCLEAN + 4)) files checked, 1 violation"

fresh c3
hdr orchestrator/model/a.h '"orchestrator/model/b.h"'
hdr orchestrator/model/b.h '"orchestrator/model/c.h"'
hdr orchestrator/model/c.h '"lib/err.h"'
src orchestrator/model/c.c '"orchestrator/model/c.h"' '"orchestrator/model/a.h"'
lay
expect "a circle of three model modules fails, printed once" 1 \
	"layers: include circle: orchestrator/model/a orchestrator/model/b orchestrator/model/c" \
	"layers: $((NCLEAN + 4)) files checked, 1 violation"

fresh hh
hdr orchestrator/report/table.h '"orchestrator/report/report.h"'
hdr orchestrator/report/report.h '"orchestrator/analysis/effects.h"' '"orchestrator/report/table.h"'
lay
expect "two headers including each other are a circle" 1 \
	"layers: include circle: orchestrator/report/report orchestrator/report/table" \
	"layers: $((NCLEAN + 1)) files checked, 1 violation"

# a circle through two layers is its upward include's line; one within a
# layer is listed beside it
fresh upc
hdr orchestrator/analysis/effects.h '"orchestrator/model/results.h"' '"orchestrator/analysis/plot.h"'
hdr orchestrator/analysis/plot.h '"orchestrator/analysis/effects.h"'
src orchestrator/analysis/effects.c '"orchestrator/analysis/effects.h"' '"orchestrator/run/run.h"'
lay
expect "an upward include closing a circle is one line; a circle in the layer another" 1 \
	"layers: orchestrator/analysis/effects.c depends on orchestrator/run/run.h (run is above analysis)" \
	"layers: include circle: orchestrator/analysis/effects orchestrator/analysis/plot" \
	"layers: $((NCLEAN + 1)) files checked, 2 violations"

fresh gc
hdr guest/emit.h '"lib/err.h"'
hdr guest/harness.h
src guest/emit.c '"emit.h"' '"harness.h"'
src guest/harness.c '"harness.h"' '"emit.h"'
lay
expect "an include circle of two guest modules fails" 1 \
	"layers: include circle: guest/emit guest/harness" \
	"layers: $((NCLEAN + 4)) files checked, 1 violation"

# ---- call circles, from the objects ----------------------------------------------------
# loop.c and arms.c include only the shared run/internal.h and call each other:
# no include circle, one call circle; a one-way call is none
callpair() {
	put orchestrator/run/internal.h '#ifndef RUN_INTERNAL_H' '#define RUN_INTERNAL_H' \
		'void loop_note(int n);' 'void arms_go(int n);' 'void bare_go(int n);' '#endif'
	put orchestrator/run/loop.c '#include "orchestrator/run/internal.h"' \
		'void loop_note(int n) { (void)n; }' 'void loop_run(void); void loop_run(void) { arms_go(1); }'
	put orchestrator/run/arms.c '#include "orchestrator/run/internal.h"' \
		"void arms_go(int n) { $1 }"
}
fresh oneway
callpair '(void)n;'
objs
lay
expect "objects: a one-way call through a shared header passes" 0 \
	"layers: $((NCLEAN + 3)) files checked, 0 violations"

fresh calls
callpair 'loop_note(n);'
objs
lay
expect "objects: a call circle through one shared header fails naming both" 1 \
	"layers: call circle: orchestrator/run/arms orchestrator/run/loop" \
	"layers: $((NCLEAN + 3)) files checked, 1 violation"
lay --objs="$WORK/none"
expect "without objects the call circles are not checked (said as a note)" 0 \
	"layers: $((NCLEAN + 3)) files checked, 0 violations"
# has NAME LINE: the last run printed LINE
has() {
	if grep -qxF -- "$2" "$WORK/out"; then
		ok "$1"
	else
		ko "$1: no line [$2]"
		show
	fi
}
has "the note names the folder" \
	"note: call circles not checked: no objects under '$WORK/none' (run make first, or pass --objs=DIR)"

fresh gcalls
put guest/a.c '#include "guest/wl.h"' 'void b_go(void); void a_go(void); void a_go(void) { b_go(); }'
put guest/b.c '#include "guest/wl.h"' 'void a_go(void); void b_go(void); void b_go(void) { a_go(); }'
objs
lay
expect "objects: a call circle in the static guest fails" 1 \
	"layers: call circle: guest/a guest/b" \
	"layers: $((NCLEAN + 2)) files checked, 1 violation"

# ---- the allow-list ---------------------------------------------------------------------
T=$WORK/calls
put tools/layers.allow '# known' '' \
	'call orchestrator/run/loop orchestrator/run/arms -- to be removed: loop_note moves below the loop'
lay
expect "an allowed circle passes, printed as allowed" 0 "layers: $((NCLEAN + 3)) files checked, 0 violations"
has "the allowed circle is printed with its reason" \
	"allowed: call circle: orchestrator/run/arms orchestrator/run/loop (to be removed: loop_note moves below the loop)"
put orchestrator/run/bare.c '#include "orchestrator/run/internal.h"' \
	'void bare_go(int n) { loop_note(n); }'
put orchestrator/run/arms.c '#include "orchestrator/run/internal.h"' 'void arms_go(int n) { bare_go(n); }'
rm -rf "$T/build"
objs
lay
expect "an allowed circle that gains a member fails (and its line is gone)" 1 \
	"layers: call circle: orchestrator/run/arms orchestrator/run/bare orchestrator/run/loop" \
	"layers: tools/layers.allow:3: no such circle any more (call orchestrator/run/arms orchestrator/run/loop): remove the line" \
	"layers: $((NCLEAN + 4)) files checked, 2 violations"
T=$WORK/clean
put tools/layers.allow 'include orchestrator/model/a orchestrator/model/b -- to be removed: a split'
lay
expect "an allow-list line whose circle is gone fails" 1 \
	"layers: tools/layers.allow:1: no such circle any more (include orchestrator/model/a orchestrator/model/b): remove the line" \
	"layers: $NCLEAN files checked, 1 violation"
rm -f "$T/tools/layers.allow"

# ---- files outside the layer folders ------------------------------------------------------
fresh root
src orchestrator/foo.c '"lib/err.h"'
hdr orchestrator/util/strs.h
lay
expect "files in orchestrator/ but not in a layer folder fail" 1 \
	"layers: orchestrator/foo.c is not in a layer folder (cmd, run, report, history, analysis, model, virt)" \
	"layers: orchestrator/util/strs.h is not in a layer folder (cmd, run, report, history, analysis, model, virt)" \
	"layers: $((NCLEAN + 2)) files checked, 2 violations"

# ---- usage and compiler errors: exit 2 with one line --------------------------------------
# usage NAME LINE ARG...: the checker exits 2 and prints LINE as its first line
usage() {
	local name=$1 line=$2
	shift 2
	"$LAYERS" "$@" >"$WORK/out" 2>&1
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(head -n1 "$WORK/out")" = "$line" ] && ! grep -q 'files checked' "$WORK/out"; then
		ok "$name"
	else
		ko "$name: exit $rc (want 2), want first line [$line]"
		show
	fi
}
T=$WORK/clean
usage "an unknown option exits 2" "layers: unknown argument '--bogus'" --root="$T" --bogus
usage "a root that does not exist exits 2" \
	"layers: cannot enter the root '$WORK/none': pass --root=DIR, a thpeval checkout" --root="$WORK/none"
mkdir -p "$WORK/empty"
usage "a root without orchestrator/ exits 2" \
	"layers: no orchestrator/ under '$WORK/empty': pass --root=DIR, a thpeval checkout" --root="$WORK/empty"
usage "a compiler that cannot run exits 2" \
	"layers: cannot run the compiler '$WORK/nocc': install gcc (tools/deps.sh) or pass --cc=CC" \
	--root="$T" --cc="$WORK/nocc"
usage "an allow-list that does not exist exits 2" \
	"layers: cannot read the allow-list '$WORK/none.allow': pass --allow=FILE, an existing file" \
	--root="$T" --allow="$WORK/none.allow"
printf 'call orchestrator/run/a orchestrator/run/b\n' >"$WORK/bad.allow"
usage "an allow-list line without its reason exits 2" \
	"layers: $WORK/bad.allow:1: want \"call|include MODULE... -- to be removed: REASON\"" \
	--root="$T" --allow="$WORK/bad.allow"
fresh broken
put orchestrator/model/stats.c '#include "stats.h"' '#error planted'
usage "a file the compiler fails on exits 2" \
	"layers: '$(printf 'gcc -MM')' failed on orchestrator/model/stats.c: orchestrator/model/stats.c:2:2: error: #error planted; fix the file or pass its include flags" \
	--root="$T"

echo "layers: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
