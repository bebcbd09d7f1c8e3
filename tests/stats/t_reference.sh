#!/bin/bash
# thpeval's Student-t quantiles and cdf (lib/stats.c) against an
# independent reference, scipy.stats.t: build/tests/stats/t_table prints
# thpeval's figures over a grid, t_reference.py compares them (1e-6 relative).
# THPEVAL_T_TABLE names the table program (make unit sets it; the sanitizer
# build has its own). Exit 77 when scipy is missing.
set -u
cd "$(dirname "$0")/../.." || exit 1
PY=/usr/bin/python3
TABLE=${THPEVAL_T_TABLE:-build/tests/stats/t_table}
if [ ! -x "$PY" ]; then
	echo "SKIP: $PY is not installed"
	echo "t_reference: 0 passed, 0 failed, 1 skipped"
	exit 77
fi
if [ ! -x "$TABLE" ]; then
	echo "FAIL: $TABLE is not built (make $TABLE)"
	echo "t_reference: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
out=$(mktemp /tmp/thpeval-t-table.XXXXXX)
trap 'rm -f "$out"' EXIT
if ! "$TABLE" >"$out"; then
	echo "FAIL: $TABLE exited with status $?"
	echo "t_reference: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
"$PY" tests/stats/t_reference.py "$out"
