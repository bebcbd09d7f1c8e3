#!/bin/bash
# lib/enumstr.h's ENUM_IMPL fails the build unless it has exactly one string
# per value of its enum: a unit with one string too few and one with one too
# many must not compile, and say why; the same unit with the right count
# compiles (so a failure is the count's, not a broken test unit).
set -u
cd "$(dirname "$0")/../.." || exit 1
CC=${CC:-gcc}
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "SKIP: no C compiler"
	echo "enumstr-count: 0 passed, 0 failed, 1 skipped"
	exit 77
fi
work=$(mktemp -d /tmp/thpeval-enumstr.XXXXXX)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0

# unit STRINGS: a translation unit of a three-value enum with these strings
unit() {
	cat <<-C
	#include "lib/enumstr.h"
	enum abc { ABC_A, ABC_B, ABC_C, ABC__COUNT };
	ENUM_DECL(abc);
	ENUM_IMPL(abc, ABC__COUNT, $1);
	C
}

# check NAME STRINGS WANT(ok|refused)
check() {
	unit "$2" >"$work/u.c"
	if "$CC" -std=gnu11 -D_GNU_SOURCE -I. -Wall -Werror -c -o "$work/u.o" "$work/u.c" 2>"$work/err"; then
		got=ok
	elif grep -q "enum abc: not one string per value" "$work/err"; then
		got=refused
	else
		got="refused for another reason: $(head -n 3 "$work/err" | tr '\n' ' ')"
	fi
	if [ "$got" = "$3" ]; then
		echo "PASS: $1: $got"
		pass=$((pass + 1))
	else
		echo "FAIL: $1: $got, want $3"
		fail=$((fail + 1))
	fi
}

check "one string per value" '"a", "b", "c"' ok
check "one string too few" '"a", "b"' refused
check "one string too many" '"a", "b", "c", "d"' refused
echo "enumstr-count: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
