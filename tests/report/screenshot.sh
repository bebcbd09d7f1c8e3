#!/bin/sh
# HTML report screenshot test: render report.html from the fixture (made worse
# and with an invalid cell, compared with the original so every section shows),
# take a headless Chromium screenshot and check that it is a real picture of
# the charts: a PNG of the requested size, not one colour, with the chart
# colours of the bars covering a fair number of pixels.
#
#   tests/report/screenshot.sh [OUTDIR]     (default: a temporary directory)
#
# Prints PASS/FAIL/SKIP with a reason and a tally line; exits 1 on FAIL, 77 when
# skipped whole. Needs bin/thpeval
# with the report command (THPEVAL=path overrides), jq and chromium
# (apt-get install chromium); python3 for the pixel check, else a weaker one.
set -u
. "$(dirname "$0")/screenshot.inc"
shot_init "$0" screenshot
W=1200
H=1600

shot_need_tools
[ -x "$THPEVAL" ] || skip "$THPEVAL is not built (make)"
"$THPEVAL" help report >/dev/null 2>&1 || skip "$THPEVAL has no 'report' command"

shot_dirs "${1:-}" thpeval-shot

# current run: memset access_ns 20% worse, one cell invalid; the fixture is the baseline
jq '(.cells[] | select(.workload == "memset") | .metrics.access_ns.samples) |= map(. * 1.2)
    | .cells[1].valid = false
    | .cells[1].invalid_reason = "guest THP is always but only 41.0% of the buffer is on guest huge pages (need 90%)"' \
	"$FIXTURE" >"$TMP/current.json" || fail "jq could not edit the fixture"
"$THPEVAL" report "$TMP/current.json" --baseline="$FIXTURE" --format=html --out="$OUT" ||
	fail "thpeval report exited $?"
[ -s "$OUT/report.html" ] || fail "no report.html"
if grep -Eq '(src|href)="(https?:)?//|url\(|@import' "$OUT/report.html"; then
	fail "report.html refers to something outside itself"
fi

PNG=$OUT/report.png
shot_take "$OUT/report.html" "$PNG" $W $H 20000

if ! command -v python3 >/dev/null; then
	echo "PASS: screenshot: $PNG ($size bytes, ${dims})"
	echo "SKIP: screenshot: pixel check: no python3"
	echo "screenshot: 1 passed, 0 failed, 1 skipped"
	exit 0
fi
# count colours and chart-bar pixels (tests/report/shotpng.py decodes the PNG)
python3 -B - "$PNG" <<'EOF' || fail "the screenshot does not show the charts"
import sys

sys.path.insert(0, "tests/report")
from shotpng import png_rows, not_one_colour

w, h, bpp, lines = png_rows(sys.argv[1])
counts = {}
for line in lines:
    for x in range(0, w * bpp, bpp):
        px = bytes(line[x:x + 3])
        counts[px] = counts.get(px, 0) + 1
bars = {"8da0cb": "never/never", "66c2a5": "guest on", "fc8d62": "host on", "e5a50a": "both on",
        "3d6fb6": "host huge %", "9cc3ef": "guest huge %"}
seen = {name: counts.get(bytes.fromhex(hexc), 0) for hexc, name in bars.items()}
print("colours: %d distinct; chart pixels: %s" % (len(counts), ", ".join("%s %d" % kv for kv in seen.items())))
not_one_colour(counts, w, h)
# every bar colour is in the legend; the charts must show them over real areas
# (one cell is invalid, so its bars are faded: three of the four treatments suffice)
treatments = [seen[k] for k in ("never/never", "guest on", "host on", "both on")]
if sum(n >= 1000 for n in treatments) < 3 or seen["host huge %"] < 1000 or seen["guest huge %"] < 1000:
    sys.exit("chart bars missing: " + ", ".join("%s %d" % kv for kv in seen.items()))
EOF
echo "PASS: screenshot: $PNG ($size bytes, $dims, charts visible)"
echo "screenshot: 1 passed, 0 failed, 0 skipped"
