#!/bin/bash
# results.json against the shipped schema (doc/results.schema.json): the stored
# fixture, what 'thpeval report --format=json' writes from it, and real runs'
# files when given; a broken copy must be rejected.
set -u
cd "$(dirname "$0")/../.." || exit 1
PY=/usr/bin/python3
pass=0 fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
if ! $PY -c 'import jsonschema' 2>/dev/null; then
	echo "SKIP: python3-jsonschema is not installed (tools/deps.sh installs it)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
fi
WORK=$(mktemp -d /tmp/thpeval-schema.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
validate() {
	$PY - "$1" <<'PYEOF'
import json, sys, jsonschema
schema = json.load(open("doc/results.schema.json"))
jsonschema.Draft7Validator.check_schema(schema)
doc = json.load(open(sys.argv[1]))
errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
for e in errors[:3]:
    print("   %s: %s" % ("/".join(map(str, e.path)), e.message))
sys.exit(1 if errors else 0)
PYEOF
}
FIX=tests/orchestrator/fixtures/results-tcg-2x2.json
validate "$FIX" && ok "stored fixture is valid" || ko "stored fixture is invalid"
# the model with every field set (host states and recovery arms included)
FULL=tests/orchestrator/fixtures/results-full.json
validate "$FULL" && ok "full model fixture is valid" || ko "full model fixture is invalid"
if "${THPEVAL_BIN:-bin/thpeval}" report "$FIX" --format=json >"$WORK/re.json" 2>"$WORK/re.err"; then
	validate "$WORK/re.json" && ok "'thpeval report --format=json' output is valid" || ko "report json invalid"
else
	ko "report failed: $(cat "$WORK/re.err")"
fi
for f in "$@"; do
	validate "$f" && ok "$f is valid" || ko "$f is invalid"
done
# (a copy jq could not write would be rejected too, and say nothing)
if ! jq '.cells[0].valid = "yes" | .schema_version = 2' "$FIX" >"$WORK/bad.json"; then
	ko "jq could not make the broken copy of $FIX"
elif validate "$WORK/bad.json" >/dev/null; then ko "a broken copy passed validation"; else ok "a broken copy is rejected"; fi
echo "schema: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
