#!/bin/sh
# Fleet page screenshot test: import the TCG fixture as two hosts (three runs
# of 'web<1>&co' and two of 'db-2', a day apart, their fault times scaled so
# the trend moves) into a temporary SQLite history, render fleet.html with
# 'thpeval report --fleet', take a headless Chromium screenshot and check that
# it is a real picture of both hosts' trends: a PNG of the requested size, not
# one colour, the trend series colours covering pixels in two separate bands
# (one chart per host).
#
#   tests/report/fleet_screenshot.sh [OUTDIR]     (default: a temporary directory)
#
# Prints PASS/FAIL/SKIP with a reason and a tally line; exits 1 on FAIL, 77 when
# skipped whole. Needs bin/thpeval (THPEVAL=path overrides), jq, chromium and
# python3 (the pixel check).
set -u
. "$(dirname "$0")/screenshot.inc"
shot_init "$0" fleet-screenshot
W=1200
H=3200

shot_need_tools
command -v python3 >/dev/null || skip "python3 is not installed (the pixel check needs it)"
[ -x "$THPEVAL" ] || skip "$THPEVAL is not built (make)"
"$THPEVAL" report --help 2>/dev/null | grep -q -- --fleet || skip "$THPEVAL has no 'report --fleet'"

shot_dirs "${1:-}" thpeval-fleetshot

for i in 0 1 2; do
	jq --argjson i $i '.started_unix += $i * 86400
	    | (.cells[] | select(.host_thp == "never" and .guest_thp == "never") | .metrics.fault_ns_per_4k.samples) |= map(. * (1 + 0.2 * $i))' \
		"$FIXTURE" >"$TMP/run$i.json" || fail "jq could not edit the fixture"
done
"$THPEVAL" history --import --db="$TMP/h.db" --host='web<1>&co' "$TMP/run0.json" "$TMP/run1.json" "$TMP/run2.json" \
	>"$TMP/import.log" 2>&1 || { cat "$TMP/import.log"; fail "history --import exited $?"; }
"$THPEVAL" history --import --db="$TMP/h.db" --host=db-2 "$TMP/run0.json" "$TMP/run2.json" \
	>>"$TMP/import.log" 2>&1 || { cat "$TMP/import.log"; fail "history --import exited $?"; }
"$THPEVAL" report --fleet --db="$TMP/h.db" --out="$OUT" 2>"$TMP/report.log" ||
	{ cat "$TMP/report.log"; fail "thpeval report --fleet exited $?"; }
[ -s "$OUT/fleet.html" ] || fail "no fleet.html"
if grep -Eq '(src|href)="(https?:)?//|url\(|@import|<script' "$OUT/fleet.html"; then
	fail "fleet.html refers to something outside itself or has a script"
fi
grep -q '<h2>host web&lt;1&gt;&amp;co</h2>' "$OUT/fleet.html" || fail "fleet.html lacks the escaped host web<1>&co"
grep -q '<h2>host db-2</h2>' "$OUT/fleet.html" || fail "fleet.html lacks host db-2"

PNG=$OUT/fleet.png
shot_take "$OUT/fleet.html" "$PNG" $W $H

# count colours and the rows where the series colours show (tests/report/shotpng.py decodes the PNG)
python3 -B - "$PNG" <<'EOF' || fail "the screenshot does not show both hosts' trends"
import sys

sys.path.insert(0, "tests/report")
from shotpng import png_rows, not_one_colour

w, h, bpp, lines = png_rows(sys.argv[1])
counts = {}
series = {bytes.fromhex("1f77b4"): "series 1", bytes.fromhex("d62728"): "series 2"}
rows = {name: [] for name in series.values()}
for y, line in enumerate(lines):
    inrow = {}
    for x in range(0, w * bpp, bpp):
        px = bytes(line[x:x + 3])
        counts[px] = counts.get(px, 0) + 1
        if px in series:
            inrow[series[px]] = inrow.get(series[px], 0) + 1
    for name, k in inrow.items():
        if k >= 3:
            rows[name].append(y)
not_one_colour(counts, w, h)
# bands: runs of rows with a series colour, split where 300 or more rows show none (between two hosts' charts)
for name, ys in rows.items():
    bands = []
    for y in ys:
        if bands and y - bands[-1][1] < 300:
            bands[-1][1] = y
        else:
            bands.append([y, y])
    print("%s: %d rows in %d band(s) %s" % (name, len(ys), len(bands), bands))
    if len(bands) < 2:
        sys.exit("%s shows in %d chart(s), not one per host" % (name, len(bands)))
EOF
echo "PASS: fleet-screenshot: $PNG ($dims, both hosts' trends visible)"
echo "fleet-screenshot: 1 passed, 0 failed, 0 skipped"
