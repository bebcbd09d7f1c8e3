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
cd "$(dirname "$0")/../.." || exit 1
THPEVAL=${THPEVAL:-${THPEVAL_BIN:-$PWD/bin/thpeval}}
FIXTURE=tests/orchestrator/fixtures/results-tcg-2x2.json
W=1200
H=3200

skip() { echo "SKIP: fleet-screenshot: $1"; echo "fleet-screenshot: 0 passed, 0 failed, 1 skipped"; exit 77; }
fail() { echo "FAIL: fleet-screenshot: $1"; echo "fleet-screenshot: 0 passed, 1 failed, 0 skipped"; exit 1; }

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "chromium is not installed (apt-get install chromium)"
command -v jq >/dev/null || skip "jq is not installed (apt-get install jq)"
command -v python3 >/dev/null || skip "python3 is not installed (the pixel check needs it)"
[ -x "$THPEVAL" ] || skip "$THPEVAL is not built (make)"
"$THPEVAL" report --help 2>/dev/null | grep -q -- --fleet || skip "$THPEVAL has no 'report --fleet'"

OUT=${1:-}
TMP=$(mktemp -d /tmp/thpeval-fleetshot.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ -n "$OUT" ] || OUT=$TMP/out
mkdir -p "$OUT"

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
rm -f "$PNG"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --force-color-profile=srgb \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$TMP/profile" --screenshot="$PNG" --window-size=$W,$H \
	"file://$(readlink -f "$OUT/fleet.html")" >"$TMP/chromium.log" 2>&1
[ -s "$PNG" ] || { tail -5 "$TMP/chromium.log"; fail "chromium wrote no screenshot"; }
[ "$(head -c 8 "$PNG" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "screenshot is not a PNG"
dims=$(od -An -j16 -N8 -tu1 "$PNG" | awk '{ print $1*16777216 + $2*65536 + $3*256 + $4 "x" $5*16777216 + $6*65536 + $7*256 + $8 }')
[ "$dims" = "${W}x${H}" ] || fail "screenshot is $dims, not ${W}x${H}"

# decode the PNG (zlib + scanline filters); count colours and the rows where the series colours show
python3 - "$PNG" <<'EOF' || fail "the screenshot does not show both hosts' trends"
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
series = {bytes.fromhex("1f77b4"): "series 1", bytes.fromhex("d62728"): "series 2"}
rows = {name: [] for name in series.values()}
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
    inrow = {}
    for x in range(0, stride, bpp):
        px = bytes(line[x:x + 3])
        counts[px] = counts.get(px, 0) + 1
        if px in series:
            inrow[series[px]] = inrow.get(series[px], 0) + 1
    for name, k in inrow.items():
        if k >= 3:
            rows[name].append(y)
    prev = line
top = max(counts.values()) / float(w * h)
if len(counts) < 16 or top > 0.97:
    sys.exit("screenshot is (nearly) one colour")
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
