#!/bin/bash
# gcc -fanalyzer on every non-test C file (make lint): one result per file,
# kept under $O/lint/ (a FILE.ok when clean) and redone when the file or a
# header it includes changes. Any analyzer warning fails the file. The files
# are analysed by make (lint-analyze, in parallel: -j2 unless make was given
# -j), then counted here, the findings of each failed file printed.
#
#   LINT_C="a.c b.c"   the files (default: the Makefile's list)
#   O=dir              make's build directory (default: build)
# Exit 77 without gcc (tools/deps.sh installs it).
set -u
cd "$(dirname "$0")/../.." || exit 1
MAKE=${MAKE:-make}
O=${O:-build}
if ! command -v "${LINT_CC:-gcc}" >/dev/null 2>&1; then
	echo "SKIP: ${LINT_CC:-gcc} is not installed (tools/deps.sh installs gcc)"
	echo "analyzer: 0 passed, 0 failed, 1 skipped"
	exit 77
fi
if [ -z "${LINT_C:-}" ]; then
	LINT_C=$($MAKE --no-print-directory -s print-lint-c) || { echo "FAIL: cannot list the C files"; exit 1; }
fi
# -j2 unless this runs under a make given -j (its flags come before " -- ")
jobs=-j2
flags=" ${MAKEFLAGS:-} "
case "${flags%% -- *} " in *" -j"* | *jobserver*) jobs= ;; esac
# the make itself failing (a rule, not a finding) fails every file not analysed
# shellcheck disable=SC2086 # $jobs: empty or one flag
$MAKE --no-print-directory $jobs O="$O" LINT_C="$LINT_C" lint-analyze || echo "FAIL: make lint-analyze exited $?"

mapfile -t files < <(printf '%s\n' "$LINT_C" | tr ' ' '\n' | grep .)
pass=0 fail=0
for f in "${files[@]}"; do
	stem=$O/lint/${f%.c}
	if [ -f "$stem.ok" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: $f"
		if [ -s "$stem.log" ]; then sed 's/^/    /' "$stem.log"; else echo "    (no analyzer output: see the make output above)"; fi
	fi
done
echo "analyzer: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
