#!/bin/bash
# The whole tree through tools/layers.sh: no dependency a folder's rule forbids
# (lib/ on libc only, host/ images/ guest/ on lib/, orchestrator/'s layers
# cmd -> run -> report -> history -> analysis -> model -> virt, host, images,
# lib, nothing outside orchestrator/ on it), no include or call circle other
# than those tools/layers.allow lists. The call circles come from the objects
# under $THPEVAL_OBJDIR (default build/; the unit stage builds them first and
# names its folder): without them this fails. The rules' own tests, on
# planted fixture trees, are tests/tools/test_layers.sh.
set -u
cd "$(dirname "$0")/../.." || exit 1
if ! command -v "${CC:-gcc}" >/dev/null 2>&1; then
	echo "SKIP: no C compiler to list the includes"
	echo "layers-tree: 0 passed, 0 failed, 1 skipped"
	exit 77
fi
# the objects of the build under test (make unit names it: build/, build-san/)
out=$(tools/layers.sh --objs="${THPEVAL_OBJDIR:-build}" 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'call circles not checked' <<<"$out"; then
	rc=1
	out="$out
layers: build the objects first (make), so the call circles are checked"
fi
if [ "$rc" -eq 0 ]; then
	echo "PASS: $(tail -n 1 <<<"$out")"
	echo "layers-tree: 1 passed, 0 failed, 0 skipped"
	exit 0
fi
echo "$out" | sed 's/^/FAIL: /'
echo "layers-tree: 0 passed, 1 failed, 0 skipped"
exit 1
