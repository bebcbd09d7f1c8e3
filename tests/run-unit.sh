#!/bin/sh
# Run every unit-test binary given on the command line; summarise.
# Each binary is a cmocka suite; its own output shows per-case results.
set -u
pass=0
fail=0
failed=""
for t in "$@"; do
	echo "== $t"
	if "$t"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $t"
	fi
done
echo "unit suites: $pass passed, $fail failed"
if [ "$fail" -ne 0 ]; then
	echo "failed suites:$failed"
	exit 1
fi
