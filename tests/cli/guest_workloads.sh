#!/bin/sh
# `thpeval-guest workloads --format=json` read back with jq: one well-formed
# document, schema_version 1, the types it documents, and the same tables as
# the text listing: the text rebuilt from the JSON is byte-identical to
# `thpeval-guest workloads` (names, descriptions, every --name=default with its
# type and help, the label line, result fields, validity evidence). The text
# listing stays the default and --format=text; other arguments exit 2 with one
# line on stderr and nothing on stdout. Skips without jq or the guest program.
set -u
. "$(dirname "$0")/lib.inc"
cli_init "$0"
GUEST=$(dirname "$THPEVAL")/thpeval-guest
[ -x "$GUEST" ] || cli_skip "'$GUEST' is not built (run 'make')"
command -v jq >/dev/null 2>&1 || cli_skip "jq is not installed (apt-get install jq)"
cli_workdir

# jqe FILTER: true when FILTER holds of the JSON listing
jqe() {
	jq -e "$1" "$WORK/json" >/dev/null 2>&1
}
# status_is RC WANT OUT ERR: exit WANT; OUT empty (when WANT is 2); ERR one line (2) or empty (0)
status_is() {
	[ "$1" -eq "$2" ] || return 1
	if [ "$2" -eq 0 ]; then
		[ ! -s "$4" ]
	else
		[ ! -s "$3" ] && [ "$(wc -l <"$4")" -eq 1 ]
	fi
}

"$GUEST" workloads --format=json >"$WORK/json" 2>"$WORK/json.err"
check "--format=json exits 0 with nothing on stderr" status_is "$?" 0 "$WORK/json" "$WORK/json.err"
check "--format=json is one JSON document" \
	[ "$(jq -s length "$WORK/json" 2>/dev/null)" = 1 ]
check "schema_version 1" [ "$(jq '.schema_version' "$WORK/json")" = 1 ]
check "at least one workload, each named [a-z0-9_]" \
	jqe '(.workloads | length > 0) and all(.workloads[]; .name | test("^[a-z0-9_]{1,31}$"))'
check "parameter types are size, u64, bool, keep01 or word" \
	jqe 'all(.workloads[].params[]; .type | IN("size", "u64", "bool", "keep01", "word"))'
check "min and max exactly on size and u64, max_length on word" \
	jqe 'all(.workloads[].params[];
		(has("min") and has("max")) == (.type | IN("size", "u64")) and has("max_length") == (.type == "word"))'
check "memset takes size, accesses and madvise; kcompile src" \
	jqe '(.workloads[] | select(.name == "memset") | [.params[].name] | contains(["size", "accesses", "madvise"]))
		and (.workloads[] | select(.name == "kcompile") | [.params[].name] | index("src") != null)'

# the text listing, rebuilt from the JSON (guest/registry.c registry_list's layout)
jq -r '
	def pad($n): if length < $n then . + (" " * ($n - length)) else . end;
	def tname: {"size": "size", "u64": "integer", "bool": "0|1", "keep01": "keep|0|1", "word": "text"}[.];
	.workloads[] |
	.name, "    " + .description, "  parameters:",
	(.params[] | "    " + ("--" + .name + "=" + .default | pad(20)) + " " + (.type | tname | pad(8)) + " " + .help),
	"    " + ("--label=KEY=VALUE" | pad(20)) + " " + ("text" | pad(8)) + " " + .labels.help +
		" (up to \(.labels.max))",
	"  result fields:",
	(.metrics[] | "    " + (.key | pad(24)) + " " + .help),
	(if (.evidence | length) > 0 then "  validity evidence (first matching variant):" else empty end),
	(.evidence[] | "    " + (.variant | pad(24)) + " " + .rule),
	(if (.primary | length) > 0 then "  gated by default (thpeval compare): " + (.primary | join(", ")) else empty end)
' "$WORK/json" >"$WORK/rebuilt" 2>"$WORK/rebuilt.err"
"$GUEST" workloads >"$WORK/text"
if cmp -s "$WORK/rebuilt" "$WORK/text"; then
	ok "the text listing rebuilt from the JSON is byte-identical"
else
	not_ok "the text listing rebuilt from the JSON differs:"
	diff "$WORK/text" "$WORK/rebuilt" | head -20
fi
"$GUEST" workloads --format=text >"$WORK/text2"
check "--format=text is the default listing" cmp -s "$WORK/text" "$WORK/text2"

for a in --format=yaml json --format= "--format=json --format=text" "--format=json x"; do
	# shellcheck disable=SC2086 # split on purpose: some cases are two arguments
	"$GUEST" workloads $a >"$WORK/out" 2>"$WORK/err"
	check "workloads $a: exit 2, one line on stderr, nothing on stdout" \
		status_is "$?" 2 "$WORK/out" "$WORK/err"
done
cli_summary
