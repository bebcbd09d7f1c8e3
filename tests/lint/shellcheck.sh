#!/bin/bash
# Every shell script in the tree through shellcheck (make lint): each file with a
# sh/bash #! line, and the sourced *.sh and *.inc files. Severity warning and
# up, and SC2086 (a variable unquoted: split into words and globbed), ranked
# info by the tool but the bug that a path with a space turns into; a line
# that splits on purpose says so with a disable directive. Sourced
# files are followed (-x). One result per script.
#
#   LINT_SH="a.sh b.inc"   the scripts (default: all of the tree's)
# Exit 77 without shellcheck (tools/deps.sh installs it).
set -u
cd "$(dirname "$0")/../.." || exit 1
if ! command -v shellcheck >/dev/null 2>&1; then
	echo "SKIP: shellcheck is not installed (tools/deps.sh installs it: apt-get install shellcheck)"
	echo "shellcheck: 0 passed, 0 failed, 1 skipped"
	exit 77
fi

# the tree's files: git's list where there is one, else every file but the build's
list_files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files --cached --others --exclude-standard
	else
		find . -path ./build -prune -o -path ./build-san -prune -o -path ./bin -prune -o -path ./.git -prune \
			-o -type f -print | sed 's|^\./||'
	fi
}
if [ -z "${LINT_SH:-}" ]; then
	LINT_SH=$(list_files | while IFS= read -r f; do
		[ -f "$f" ] || continue
		case "$f" in
		*.sh | *.inc) echo "$f" ;;
		*) head -n1 "$f" 2>/dev/null | grep -qE '^#!.*/(env +)?(ba|da)?sh( |$)' && echo "$f" ;;
		esac
	done)
fi
mapfile -t files < <(printf '%s\n' "$LINT_SH" | tr ' ' '\n' | grep .)
[ "${#files[@]}" -gt 0 ] || { echo "FAIL: no shell script found"; echo "shellcheck: 0 passed, 1 failed"; exit 1; }

out=$(mktemp /tmp/thpeval-shellcheck.XXXXXX) || exit 1
trap 'rm -f "$out" "$out".[12]' EXIT
# two halves at once (shellcheck uses one core); exit 1: findings (of any
# severity: filtered below); anything else but 0: shellcheck failed
half=$(((${#files[@]} + 1) / 2))
shellcheck -x -P SCRIPTDIR -S info -f gcc "${files[@]:0:half}" >"$out.1" 2>&1 &
p1=$!
rc2=0
if [ "${#files[@]}" -gt "$half" ]; then
	shellcheck -x -P SCRIPTDIR -S info -f gcc "${files[@]:half}" >"$out.2" 2>&1
	rc2=$?
fi
wait "$p1"
rc1=$?
cat "$out".[12] >"$out" 2>/dev/null
for rc in "$rc1" "$rc2"; do
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		cat "$out"
		echo "FAIL: shellcheck exited $rc"
		echo "shellcheck: 0 passed, 1 failed"
		exit 1
	fi
done
found=$(grep -E ': (error|warning): |\[SC2086\]$' "$out")
# each file with a finding fails (one sourced from outside the list too)
bad=$(printf '%s\n' "$found" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: .*/\1/p' | sort -u)
fail=0 listed_bad=0
for f in $bad; do
	fail=$((fail + 1))
	printf '%s\n' "${files[@]}" | grep -qxF "$f" && listed_bad=$((listed_bad + 1))
	echo "FAIL: $f"
	printf '%s\n' "$found" | awk -v f="$f:" 'index($0, f) == 1 { print "    " $0 }'
done
pass=$((${#files[@]} - listed_bad))
echo "shellcheck: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
