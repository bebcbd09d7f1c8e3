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
cd "$(dirname "$0")/../.." || exit 1
THPEVAL=${THPEVAL:-${THPEVAL_BIN:-$PWD/bin/thpeval}}
FIXTURE=tests/orchestrator/fixtures/results-tcg-2x2.json
W=1200
H=1600

skip() { echo "SKIP: screenshot: $1"; echo "screenshot: 0 passed, 0 failed, 1 skipped"; exit 77; }
fail() { echo "FAIL: screenshot: $1"; echo "screenshot: 0 passed, 1 failed, 0 skipped"; exit 1; }

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "chromium is not installed (apt-get install chromium)"
command -v jq >/dev/null || skip "jq is not installed (apt-get install jq)"
[ -x "$THPEVAL" ] || skip "$THPEVAL is not built (make)"
"$THPEVAL" help report >/dev/null 2>&1 || skip "$THPEVAL has no 'report' command"

OUT=${1:-}
TMP=$(mktemp -d /tmp/thpeval-shot.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ -n "$OUT" ] || OUT=$TMP/out
mkdir -p "$OUT"

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
rm -f "$PNG"
# sRGB output: the pixel check below matches the charts' exact colours, which a
# display colour profile would shift
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --force-color-profile=srgb \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$TMP/profile" --screenshot="$PNG" --window-size=$W,$H \
	"file://$(readlink -f "$OUT/report.html")" >"$TMP/chromium.log" 2>&1
[ -s "$PNG" ] || { tail -5 "$TMP/chromium.log"; fail "chromium wrote no screenshot"; }

size=$(wc -c <"$PNG")
[ "$size" -gt 20000 ] || fail "screenshot is only $size bytes"
[ "$(head -c 8 "$PNG" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "screenshot is not a PNG"
dims=$(od -An -j16 -N8 -tu1 "$PNG" | awk '{ print $1*16777216 + $2*65536 + $3*256 + $4 "x" $5*16777216 + $6*65536 + $7*256 + $8 }')
[ "$dims" = "${W}x${H}" ] || fail "screenshot is $dims, not ${W}x${H}"

if ! command -v python3 >/dev/null; then
	echo "PASS: screenshot: $PNG ($size bytes, ${dims})"
	echo "SKIP: screenshot: pixel check: no python3"
	echo "screenshot: 1 passed, 0 failed, 1 skipped"
	exit 0
fi
# decode the PNG (zlib + scanline filters) and count colours and chart-bar pixels
python3 - "$PNG" <<'EOF' || fail "the screenshot does not show the charts"
import struct, sys, zlib

data = open(sys.argv[1], "rb").read()
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        if depth != 8 or ctype not in (2, 6):
            sys.exit("unexpected PNG format depth %d colour type %d" % (depth, ctype))
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
counts = {}
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        px = bytes(line[x:x + 3])
        counts[px] = counts.get(px, 0) + 1
    prev = line
bars = {"8da0cb": "never/never", "66c2a5": "guest on", "fc8d62": "host on", "e5a50a": "both on",
        "3d6fb6": "host huge %", "9cc3ef": "guest huge %"}
seen = {name: counts.get(bytes.fromhex(hexc), 0) for hexc, name in bars.items()}
print("colours: %d distinct; chart pixels: %s" % (len(counts), ", ".join("%s %d" % kv for kv in seen.items())))
top = max(counts.values()) / float(w * h)
if len(counts) < 16 or top > 0.97:
    sys.exit("screenshot is (nearly) one colour")
# every bar colour is in the legend; the charts must show them over real areas
# (one cell is invalid, so its bars are faded: three of the four treatments suffice)
treatments = [seen[k] for k in ("never/never", "guest on", "host on", "both on")]
if sum(n >= 1000 for n in treatments) < 3 or seen["host huge %"] < 1000 or seen["guest huge %"] < 1000:
    sys.exit("chart bars missing: " + ", ".join("%s %d" % kv for kv in seen.items()))
EOF
echo "PASS: screenshot: $PNG ($size bytes, $dims, charts visible)"
echo "screenshot: 1 passed, 0 failed, 0 skipped"
